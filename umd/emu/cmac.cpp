// CMAC_A/B: the multiply-accumulate cells.
//
// Integers are exact (int8: 22-bit cell sums, int16: 44-bit, neither can overflow), so the
// integer convolution is computed by the fastest exact kernel the CPU has: AVX-512 VNNI on
// int8 (unsigned-by-signed byte dot products over the data stored as element + 128, the bias
// taken back out per kernel), AVX2 otherwise (int16 pair products through vpmaddwd for int8,
// double-precision FMA for int16), a scalar loop as the fallback; NVDLA_EMU_ISA lowers the
// choice (emu/isa.hpp).
//
// fp16 is not IEEE: each cell aligns its 64 products to the largest exponent in steps of 4
// (cal_fp16_exp), multiplies mantissas in a radix-4 Booth array whose two carry-save outputs
// are each truncated by the alignment shift (cal_fp16_booth), and sums them in 38 bits
// (calculation_fp16); all of cmod/cmac/NV_NVDLA_cmac.h, followed bit for bit.
#include <immintrin.h>

#include <algorithm>
#include <any>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>

#include "emu/cmac_grouped.hpp"
#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"
#include "emu/parallel.hpp"

namespace nvdla::emu::conv {
namespace {

constexpr uint64_t kMask38 = (uint64_t(1) << 38) - 1;

int64_t sign_extend(uint64_t v, unsigned bits) {
    const uint64_t m = uint64_t(1) << (bits - 1);
    v &= (m << 1) - 1;
    return static_cast<int64_t>((v ^ m) - m);
}

bool fp16_zero(uint16_t h) {
    return (h & 0x7fffu) == 0;
}
bool fp16_nan(uint16_t h) {
    return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}

// cal_fp16_nan: the first NaN weight, else the first NaN data element, becomes the result.
bool find_nan(const uint16_t* data, const uint16_t* weights, unsigned lanes, uint64_t* result) {
    const uint16_t* hit = nullptr;
    for (unsigned i = 0; i < lanes && !hit; ++i)
        if (fp16_nan(weights[i])) hit = weights + i;
    for (unsigned i = 0; i < lanes && !hit; ++i)
        if (fp16_nan(data[i])) hit = data + i;
    if (!hit) return false;
    *result =
        (uint64_t(0x3f) << 38) | (uint64_t(*hit >> 15) << 37) | (uint64_t(*hit & 0x3ffu) << 27);
    return true;
}

// cal_fp16_exp + cal_fp16_mul: the aligned products of the first `lanes` lanes (the others
// are 0 and not written) and the common exponent (in units of 1, a multiple of 4).
uint32_t aligned_products(const uint16_t* data, const uint16_t* weights, unsigned lanes,
                          int32_t* products) {
    uint32_t sum_exp[64];
    uint32_t max_exp = 0;
    for (unsigned i = 0; i < lanes; ++i) {
        if (fp16_zero(data[i]) || fp16_zero(weights[i])) {
            sum_exp[i] = 0;
            continue;
        }
        sum_exp[i] = ((data[i] >> 12) & 7u) + ((weights[i] >> 12) & 7u);  // exponent >> 2
        max_exp = std::max(max_exp, sum_exp[i]);
    }
    for (unsigned i = 0; i < lanes; ++i) {
        const uint16_t d = data[i], w = weights[i];
        if (fp16_zero(d) || fp16_zero(w)) {
            products[i] = 0;
            continue;
        }
        const uint32_t de = (d >> 10) & 31u, we = (w >> 10) & 31u;
        const uint32_t d_mts = ((d & 0x3ffu) | (de ? 0x400u : 0)) << (de ? (de & 3u) : 1u);
        const uint32_t w_mts = ((w & 0x3ffu) | (we ? 0x400u : 0)) << (we ? (we & 3u) : 1u);
        products[i] =
            cmac_fp16_booth(((d ^ w) >> 15) != 0, w_mts, d_mts, (max_exp - sum_exp[i]) << 2);
    }
    return max_exp << 2;
}

uint64_t pack_fp44(uint32_t exponent, int64_t mantissa) {
    return (uint64_t(exponent & 0x3fu) << 38) | (static_cast<uint64_t>(mantissa) & kMask38);
}

}  // namespace

int32_t cmac_fp16_booth(bool negative, uint32_t weight_mantissa, uint32_t data_mantissa,
                        uint32_t shift) {
    if (shift >= 32) return 0;
    // Radix-4 Booth digits, selected without branches (random digits defeat prediction):
    // per 3-bit code (inverted for a negative product) the row is +-data, +-2*data or 0, a
    // negative row stored inverted with its +1 ("inv") in the next row.
    static constexpr uint32_t kOnce[8] = {0, ~0u, ~0u, 0, 0, ~0u, ~0u, 0};
    static constexpr uint32_t kTwice[8] = {0, 0, 0, ~0u, ~0u, 0, 0, 0};
    static constexpr uint32_t kNegative[8] = {0, 0, 0, 0, ~0u, ~0u, ~0u, 0};
    const uint32_t code_reverse = negative ? 7u : 0u;
    const uint32_t once = data_mantissa, twice = data_mantissa << 1;
    uint32_t pp[8], inv[8];
    uint32_t w = weight_mantissa << 1;
    for (int i = 0; i < 8; ++i, w >>= 2) {
        const uint32_t code = (w & 7u) ^ code_reverse;
        const uint32_t magnitude = (once & kOnce[code]) | (twice & kTwice[code]);
        pp[i] = ((~magnitude & 0xffffu) & kNegative[code]) |
                ((magnitude | 0x10000u) & ~kNegative[code]);
        inv[i] = kNegative[code] & 1u;
    }
    // Two trees of 3:2 compressors over five rows each, then one over the four results; the
    // order of the compressors is the C model's.
    auto compress = [](uint32_t& a, uint32_t& b, uint32_t c) {
        const uint32_t sum = a ^ b ^ c, carry = ((a & b) | (b & c) | (a & c)) << 1;
        a = sum;
        b = carry;
    };
    uint32_t a0 = pp[0], a1 = (pp[1] << 2) | inv[0];
    compress(a0, a1, (pp[2] << 4) | (inv[1] << 2));
    compress(a0, a1, (pp[3] << 6) | (inv[2] << 4));
    compress(a0, a1, inv[3] << 6);
    uint32_t b0 = pp[4] << 8, b1 = (pp[5] << 10) | (inv[4] << 8);
    compress(b0, b1, (pp[6] << 12) | (inv[5] << 10));
    compress(b0, b1, (pp[7] << 14) | (inv[6] << 12));
    compress(b0, b1, inv[7] << 14);
    compress(a0, a1, b0);
    compress(a0, a1, b1);
    static constexpr uint32_t kSignCompensation[8] = {0xaaab0000u, 0xfaaab000u, 0xffaaab00u,
                                                      0xfffaaab0u, 0xffffaaabu, 0xfffffaabu,
                                                      0xffffffabu, 0xfffffffbu};
    const uint32_t sum = (a0 >> shift) + (a1 >> shift) + kSignCompensation[shift / 4];
    return static_cast<int32_t>(sum);
}

uint64_t cmac_fp16_dot_scalar(const uint16_t* data, const uint16_t* weights, unsigned lanes) {
    uint64_t nan;
    if (find_nan(data, weights, lanes, &nan)) return nan;
    int32_t products[64];
    const uint32_t exponent = aligned_products(data, weights, lanes, products);
    int64_t total = 0;  // 38-bit adder tree; 64 products of at most 2^28 cannot overflow it
    for (unsigned i = 0; i < lanes; ++i) total += products[i];
    return pack_fp44(exponent, sign_extend(static_cast<uint64_t>(total), 38));
}

void cmac_fp16_winograd(const uint16_t* data, const uint16_t* weights, uint64_t out[4]) {
    int32_t products[64];
    uint32_t exponent;
    if (!cmac_fp16_products(data, weights, products, exponent)) {  // scalar level, or a NaN
        uint64_t nan;
        if (find_nan(data, weights, 64, &nan)) {
            out[0] = out[1] = out[2] = out[3] = nan;
            return;
        }
        exponent = aligned_products(data, weights, 64, products);
    }
    int64_t p1[16], p2[8];
    for (int i = 0; i < 16; ++i)
        p1[i] = int64_t(products[4 * i]) + products[4 * i + 1] + products[4 * i + 2] +
                products[4 * i + 3];
    for (int i = 0; i < 4; ++i) {
        p2[i] = p1[i] + p1[i + 4] + p1[i + 8];
        p2[i + 4] = p1[i + 4] - p1[i + 8] - p1[i + 12];
    }
    const int64_t p3[4] = {p2[0] + p2[1] + p2[2], p2[1] - p2[2] - p2[3], p2[4] + p2[5] + p2[6],
                           p2[5] - p2[6] - p2[7]};
    for (int j = 0; j < 4; ++j) out[j] = pack_fp44(exponent, sign_extend(uint64_t(p3[j]), 38));
}

int64_t dot_int(const int16_t* a, const int16_t* b, uint32_t n) {
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; ++i) sum += int32_t(a[i]) * b[i];
    return sum;
}

// ---- Integer convolution kernels ------------------------------------------------------------

namespace {

std::atomic<MacKernel> g_forced{MacKernel::Auto};

bool cpu_has_vnni() {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
}

// Sums and outputs are channels last: (n, y, x, k), k fastest.
size_t sum_index(const MacProblem& m, uint32_t n, uint32_t k, uint32_t y, uint32_t x) {
    return ((size_t(n) * m.out_height + y) * m.out_width + x) * m.kernels + k;
}

// Rows [y0, y1) of batch n: sums[((y - y0) * out_width + x) * kernels + k].
void scalar_rows(const MacProblem& m, uint32_t n, uint32_t y0, uint32_t y1,
                 std::vector<int64_t>& sums) {
    const uint64_t taps = uint64_t(m.taps_r) * m.taps_s;
    std::vector<int16_t> vector(m.depth);
    sums.assign(size_t(y1 - y0) * m.out_width * m.kernels, 0);
    const uint64_t plane = uint64_t(n) * m.plane_rows * m.row_elements;
    for (uint32_t y = y0; y < y1; ++y)
        for (uint32_t x = 0; x < m.out_width; ++x)
            for (uint32_t r = 0; r < m.taps_r; ++r)
                for (uint32_t s = 0; s < m.taps_s; ++s) {
                    const uint64_t at =
                        plane + uint64_t(y * m.row_step + r * m.row_dilation) * m.row_elements +
                        x * m.x_step + s * m.s_step;
                    const int16_t* data;
                    if (m.words) {
                        data = m.words + at;
                    } else {
                        for (uint32_t c = 0; c < m.depth; ++c)
                            vector[c] = static_cast<int16_t>(m.bytes[at + c] - 128);
                        data = vector.data();
                    }
                    const uint64_t tap = uint64_t(r) * m.taps_s + s;
                    int64_t* out = sums.data() + (size_t(y - y0) * m.out_width + x) * m.kernels;
                    for (uint32_t k = 0; k < m.kernels; ++k)
                        out[k] += dot_int(data, m.weights + (k * taps + tap) * m.depth, m.depth);
                }
}

// What a packing depends on besides the weights: the kernel's layout and the problem's shape.
struct PackKey {
    uint32_t format = 0, kernels = 0, taps_r = 0, taps_s = 0, depth = 0;
    bool operator==(const PackKey&) const = default;
};

// The packings' formats (PackKey::format).
constexpr uint32_t kVnniPacking = 1, kMaddPacking = 2, kDoublePacking = 16;  // double: + lanes

template <class Packed>
struct CachedPacking {
    PackKey key;
    Packed packed;
};

// The weights as pack(m) lays them out for kernel `format`: kept with the decoded weights
// (ConvWeights::packed) so that the layer run again packs nothing, else packed into `local`.
template <class Packed, class Pack>
const Packed& packed_weights(const MacProblem& m, uint32_t format, Pack&& pack, Packed& local) {
    const PackKey key{format, m.kernels, m.taps_r, m.taps_s, m.depth};
    if (!m.cache || m.cache->values.data() != m.weights) {
        local = pack(m);
        return local;
    }
    if (const auto* c = std::any_cast<CachedPacking<Packed>>(&m.cache->packed); c && c->key == key)
        return c->packed;
    m.cache->packed = CachedPacking<Packed>{key, pack(m)};
    const Packed& packed = std::any_cast<const CachedPacking<Packed>&>(m.cache->packed).packed;
    m.cache->packed_bytes = packed.bytes();
    return packed;
}

// AVX-512 VNNI, int8. Weights are packed per block of 16 kernels as [block][tap][c/4][16][4]
// so one 64-byte load feeds vpdpbusd for 16 kernels x 4 channels.
#define NVDLA_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

struct VnniWeights {
    std::vector<int8_t> packed;
    uint32_t blocks = 0, taps = 0, quads = 0;
    // The true sums fit int32 while a run of taps has at most 2^17 - 1 products of 2^14; the
    // biased partial sums wrap, but modulo 2^32 the unbiased result is exact.
    uint32_t taps_per_run = 0, runs = 0;
    std::vector<int32_t> bias;  // 128 * (sum of the run's weights) per kernel, per run

    uint64_t bytes() const { return packed.size() + bias.size() * sizeof(int32_t); }
};

VnniWeights pack_vnni(const MacProblem& m) {
    VnniWeights p;
    p.blocks = (m.kernels + 15) / 16;
    p.taps = m.taps_r * m.taps_s;
    p.quads = (m.depth + 3) / 4;
    p.packed.assign(uint64_t(p.blocks) * p.taps * p.quads * 64, 0);
    for (uint32_t k = 0; k < m.kernels; ++k)
        for (uint32_t t = 0; t < p.taps; ++t)
            for (uint32_t c = 0; c < m.depth; ++c)
                p.packed[((uint64_t(k / 16) * p.taps + t) * p.quads + c / 4) * 64 + (k % 16) * 4 +
                         c % 4] =
                    static_cast<int8_t>(m.weights[(uint64_t(k) * p.taps + t) * m.depth + c]);
    const uint64_t products_per_tap = uint64_t(p.quads) * 4;
    p.taps_per_run =
        static_cast<uint32_t>(std::max<uint64_t>(1, ((1u << 17) - 1) / products_per_tap));
    p.runs = (p.taps + p.taps_per_run - 1) / p.taps_per_run;
    const uint32_t stride = p.blocks * 16;
    p.bias.assign(uint64_t(p.runs) * stride, 0);
    for (uint32_t run = 0; run < p.runs; ++run)
        for (uint32_t k = 0; k < m.kernels; ++k)
            for (uint32_t t = run * p.taps_per_run;
                 t < std::min(p.taps, (run + 1) * p.taps_per_run); ++t)
                for (uint32_t c = 0; c < m.depth; ++c)
                    p.bias[uint64_t(run) * stride + k] +=
                        128 * m.weights[(uint64_t(k) * p.taps + t) * m.depth + c];
    return p;
}

// One output row piece: XB outputs from x0, KB blocks of 16 kernels from block b0, taps
// [t0, t1). out[i * stride + j * 16 + lane] receives the biased sums, the last block's lanes
// only where `last_lanes` has them (the kernels past the layer's are not stored).
// When `clip` >= 0 the sums (then below 2^31 in magnitude) leave through CACC's delivery:
// rounded half away by 2^clip, which cannot saturate them.
template <int XB, int KB>
NVDLA_VNNI void vnni_block(const MacProblem& m, const VnniWeights& p, const uint8_t* plane,
                           uint32_t y, uint32_t x0, uint32_t b0, uint32_t t0, uint32_t t1,
                           const int32_t* bias, int clip, int32_t* out, uint32_t stride,
                           __mmask16 last_lanes) {
    // The sums start at -bias (the biased data's correction): modulo 2^32, as vpdpbusd adds,
    // the same as subtracting it at the end, one instruction per sum fewer.
    __m512i acc[XB][KB];
#pragma GCC unroll 4
    for (int j = 0; j < KB; ++j) {
        const __m512i start =
            _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_loadu_si512(bias + j * 16));
#pragma GCC unroll 8
        for (int i = 0; i < XB; ++i) acc[i][j] = start;
    }
    const uint64_t block_stride = uint64_t(p.taps) * p.quads * 64;
    for (uint32_t t = t0; t < t1; ++t) {
        const uint32_t r = t / m.taps_s, s = t % m.taps_s;
        const uint8_t* base = plane +
                              uint64_t(y * m.row_step + r * m.row_dilation) * m.row_elements +
                              uint64_t(x0) * m.x_step + uint64_t(s) * m.s_step;
        const int8_t* wt = p.packed.data() + (uint64_t(b0) * p.taps + t) * p.quads * 64;
        const uint64_t x_step = m.x_step;
        for (uint32_t q = 0; q < p.quads; ++q, base += 4, wt += 64) {
            __m512i w[KB];
#pragma GCC unroll 4
            for (int j = 0; j < KB; ++j) {
                w[j] = _mm512_loadu_si512(wt + j * block_stride);
                // Kept in a register: for XB <= 3 GCC folds the load into every vpdpbusd,
                // XB loads of each 64 bytes (the 7-wide rows ran at 2/3 of the speed).
                __asm__("" : "+v"(w[j]));
            }
#pragma GCC unroll 8
            for (int i = 0; i < XB; ++i) {
                int32_t four;
                std::memcpy(&four, base + i * x_step, 4);
                const __m512i b = _mm512_set1_epi32(four);
#pragma GCC unroll 4
                for (int j = 0; j < KB; ++j) acc[i][j] = _mm512_dpbusd_epi32(acc[i][j], b, w[j]);
            }
        }
    }
    const __m512i half = _mm512_set1_epi32(clip > 0 ? 1 << (clip - 1) : 0);
    const __m128i shift = _mm_cvtsi32_si128(clip > 0 ? clip : 0);
#pragma GCC unroll 8
    for (int i = 0; i < XB; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < KB; ++j) {
            __m512i v = acc[i][j];
            if (clip > 0) {  // (clip 0 delivers the sum as it is)
                // The maskz forms: GCC 12's unmasked ones warn about their undefined pass-through.
                const __mmask16 all = 0xffff;
                const __m512i sign = _mm512_maskz_srai_epi32(all, v, 31);
                const __m512i magnitude = _mm512_maskz_abs_epi32(all, v);
                const __m512i q =
                    _mm512_maskz_srl_epi32(all, _mm512_add_epi32(magnitude, half), shift);
                v = _mm512_sub_epi32(_mm512_xor_si512(q, sign), sign);
            }
            // (A masked store only where it is needed: it is the slower one.)
            if (j == KB - 1 && last_lanes != 0xffff)
                _mm512_mask_storeu_epi32(out + i * stride + j * 16, last_lanes, v);
            else
                _mm512_storeu_si512(out + i * stride + j * 16, v);
        }
}

using VnniBlockFn = void (*)(const MacProblem&, const VnniWeights&, const uint8_t*, uint32_t,
                             uint32_t, uint32_t, uint32_t, uint32_t, const int32_t*, int, int32_t*,
                             uint32_t, __mmask16);

// Up to 6 outputs x 4 blocks, or up to 8 outputs x 3 blocks (the sums, the weights and the
// broadcast data in 32 registers).
constexpr int kVnniMaxX = 6, kVnniWideMaxX = 8, kVnniMaxBlocks = 4, kVnniWideMaxBlocks = 3;
template <int XB>
constexpr std::array<VnniBlockFn, 4> vnni_row() {
    if constexpr (XB <= kVnniMaxX)
        return {vnni_block<XB, 1>, vnni_block<XB, 2>, vnni_block<XB, 3>, vnni_block<XB, 4>};
    else
        return {vnni_block<XB, 1>, vnni_block<XB, 2>, vnni_block<XB, 3>, nullptr};
}
constexpr std::array<std::array<VnniBlockFn, 4>, kVnniWideMaxX> kVnniBlocks = {
    vnni_row<1>(), vnni_row<2>(), vnni_row<3>(), vnni_row<4>(),
    vnni_row<5>(), vnni_row<6>(), vnni_row<7>(), vnni_row<8>()};

uint64_t macs(const MacProblem& m) {
    return uint64_t(m.batches) * m.out_height * m.out_width * m.kernels * m.taps_r * m.taps_s *
           m.depth;
}

// Rows [y0, y1) of batch n delivered through CACC into out (row y at (y - y0) * out_width *
// kernels); returns the saturation count. One run of taps (the usual case) goes straight
// through CACC's delivery into the output itself, the last block's store masked to the
// kernels there are (24 kernels: a copy of each position's 96 bytes saved); several runs add
// up in int64 sums first.
uint32_t vnni_rows(const MacProblem& m, const VnniWeights& p, uint32_t clip, uint32_t n,
                   uint32_t y0, uint32_t y1, int32_t* delivered) {
    const uint32_t stride = p.blocks * 16;
    const uint32_t taps_per_run = p.taps_per_run, runs = p.runs;
    // One run is delivered in place; several add up through `row` into `sums`.
    const bool single_run = runs == 1;
    const size_t row_values = size_t(m.out_width) * m.kernels;
    thread_local std::vector<int32_t> row;
    thread_local std::vector<int64_t> sums;
    if (!single_run) {
        row.resize(uint64_t(m.out_width) * stride);
        sums.resize(row_values);
    }
    const uint8_t* plane = m.bytes + uint64_t(n) * m.plane_rows * m.row_elements;
    // Rows of 7 or 8 outputs (MobileNetV2's last layers) as one call per 3 blocks, each weight
    // loaded once for the row, instead of two calls (3 + 4 outputs) per 4 blocks.
    const bool wide = m.out_width > kVnniMaxX && m.out_width <= kVnniWideMaxX;
    const uint32_t most_x = wide ? kVnniWideMaxX : kVnniMaxX;
    const uint32_t most_blocks = wide ? kVnniWideMaxBlocks : kVnniMaxBlocks;
    uint32_t saturations = 0;
    for (uint32_t y = y0; y < y1; ++y) {
        int32_t* out = delivered + size_t(y - y0) * row_values;
        for (uint32_t run = 0; run < runs; ++run) {
            const uint32_t t0 = run * taps_per_run, t1 = std::min(p.taps, t0 + taps_per_run);
            int32_t* target = single_run ? out : row.data();
            const uint32_t target_stride = single_run ? m.kernels : stride;
            split_evenly(p.blocks, most_blocks, [&](uint32_t b0, uint32_t kb) {
                const bool last = b0 + kb == p.blocks && single_run;
                const __mmask16 last_lanes = static_cast<__mmask16>(
                    last ? (1u << (m.kernels - (p.blocks - 1) * 16)) - 1 : 0xffffu);
                split_evenly(m.out_width, most_x, [&](uint32_t x0, uint32_t xb) {
                    kVnniBlocks[xb - 1][kb - 1](m, p, plane, y, x0, b0, t0, t1,
                                                p.bias.data() + uint64_t(run) * stride + b0 * 16,
                                                single_run ? static_cast<int>(clip) : -1,
                                                target + uint64_t(x0) * target_stride + b0 * 16,
                                                target_stride, last_lanes);
                });
            });
            if (single_run) continue;
            for (uint32_t x = 0; x < m.out_width; ++x) {
                const int32_t* in = row.data() + uint64_t(x) * stride;
                int64_t* acc = sums.data() + size_t(x) * m.kernels;
                for (uint32_t k = 0; k < m.kernels; ++k) acc[k] = (run == 0 ? 0 : acc[k]) + in[k];
            }
        }
        if (!single_run) saturations += cacc_deliver_int(sums.data(), row_values, clip, out);
    }
    return saturations;
}

// Double-precision FMA, exact for integer sums below 2^53 (the fast path only runs when the
// 48-bit accumulator cannot saturate): int16 layers, and int8 on CPUs without VNNI. Weights
// packed per block of `lanes` kernels as [block][tap][c][lanes] doubles.
struct DoubleWeights {
    std::vector<double> packed;
    uint32_t blocks = 0, taps = 0, lanes = 0;

    uint64_t bytes() const { return packed.size() * sizeof(double); }
};

DoubleWeights pack_double(const MacProblem& m, uint32_t lanes) {
    DoubleWeights p;
    p.lanes = lanes;
    p.blocks = (m.kernels + lanes - 1) / lanes;
    p.taps = m.taps_r * m.taps_s;
    p.packed.assign(uint64_t(p.blocks) * p.taps * m.depth * lanes, 0.0);
    for (uint32_t k = 0; k < m.kernels; ++k)
        for (uint32_t t = 0; t < p.taps; ++t)
            for (uint32_t c = 0; c < m.depth; ++c)
                p.packed[((uint64_t(k / lanes) * p.taps + t) * m.depth + c) * lanes + k % lanes] =
                    m.weights[(uint64_t(k) * p.taps + t) * m.depth + c];
    return p;
}

// XB outputs from x0 x KB blocks of kernels from b0, every tap; out[i * stride + j * L + lane].
#define NVDLA_DOUBLE_BLOCK(NAME, TARGET, REG, L, ZERO, LOAD, SET1, FMADD, STORE)                   \
    template <int XB, int KB>                                                                      \
    __attribute__((target(TARGET))) void NAME(const MacProblem& m, const DoubleWeights& p,         \
                                              const int16_t* plane, uint32_t y, uint32_t x0,       \
                                              uint32_t b0, double* out, uint32_t stride) {         \
        REG acc[XB][KB];                                                                           \
        _Pragma("GCC unroll 8") for (int i = 0; i < XB; ++i)                                       \
            _Pragma("GCC unroll 4") for (int j = 0; j < KB; ++j) acc[i][j] = ZERO();               \
        const uint64_t block_stride = uint64_t(p.taps) * m.depth * L;                              \
        const uint64_t x_step = m.x_step;                                                          \
        for (uint32_t t = 0; t < p.taps; ++t) {                                                    \
            const uint32_t r = t / m.taps_s, s = t % m.taps_s;                                     \
            const int16_t* base = plane +                                                          \
                                  uint64_t(y * m.row_step + r * m.row_dilation) * m.row_elements + \
                                  uint64_t(x0) * x_step + uint64_t(s) * m.s_step;                  \
            const double* wt = p.packed.data() + (uint64_t(b0) * p.taps + t) * m.depth * L;        \
            for (uint32_t c = 0; c < m.depth; ++c, ++base, wt += L) {                              \
                REG w[KB];                                                                         \
                _Pragma("GCC unroll 4") for (int j = 0; j < KB; ++j) w[j] =                        \
                    LOAD(wt + j * block_stride);                                                   \
                _Pragma("GCC unroll 8") for (int i = 0; i < XB; ++i) {                             \
                    const REG b = SET1(double(base[i * x_step]));                                  \
                    _Pragma("GCC unroll 4") for (int j = 0; j < KB; ++j) acc[i][j] =               \
                        FMADD(b, w[j], acc[i][j]);                                                 \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        _Pragma("GCC unroll 8") for (int i = 0; i < XB; ++i)                                       \
            _Pragma("GCC unroll 4") for (int j = 0; j < KB; ++j)                                   \
                STORE(out + i * stride + j * L, acc[i][j]);                                        \
    }

NVDLA_DOUBLE_BLOCK(avx512_block, "avx512f", __m512d, 8, _mm512_setzero_pd, _mm512_loadu_pd,
                   _mm512_set1_pd, _mm512_fmadd_pd, _mm512_storeu_pd)
NVDLA_DOUBLE_BLOCK(avx2_block, "avx2,fma", __m256d, 4, _mm256_setzero_pd, _mm256_loadu_pd,
                   _mm256_set1_pd, _mm256_fmadd_pd, _mm256_storeu_pd)

using DoubleBlockFn = void (*)(const MacProblem&, const DoubleWeights&, const int16_t*, uint32_t,
                               uint32_t, uint32_t, double*, uint32_t);

template <int XB>
constexpr std::array<DoubleBlockFn, 4> avx512_row() {
    return {avx512_block<XB, 1>, avx512_block<XB, 2>, avx512_block<XB, 3>, avx512_block<XB, 4>};
}
template <int XB>
constexpr std::array<DoubleBlockFn, 3> avx2_row() {
    return {avx2_block<XB, 1>, avx2_block<XB, 2>, avx2_block<XB, 3>};
}
constexpr int kDoubleMaxX = 6, kAvx2MaxX = 4;
constexpr std::array<std::array<DoubleBlockFn, 4>, kDoubleMaxX> kAvx512Blocks = {
    avx512_row<1>(), avx512_row<2>(), avx512_row<3>(),
    avx512_row<4>(), avx512_row<5>(), avx512_row<6>()};
constexpr std::array<std::array<DoubleBlockFn, 3>, kAvx2MaxX> kAvx2Blocks = {
    avx2_row<1>(), avx2_row<2>(), avx2_row<3>(), avx2_row<4>()};

// The AVX-512F (8 lanes, 4 blocks x 6 outputs) or AVX2 (4 lanes, 3 blocks x 4 outputs) form.
// Rows [y0, y1) of batch n (as vnni_rows).
uint32_t double_rows(const MacProblem& m, const DoubleWeights& p, bool avx512, uint32_t clip,
                     uint32_t n, uint32_t y0, uint32_t y1, int32_t* delivered) {
    const uint32_t lanes = p.lanes, max_blocks = avx512 ? 4 : 3;
    const uint32_t max_x = avx512 ? kDoubleMaxX : kAvx2MaxX;
    const uint32_t stride = p.blocks * lanes;
    thread_local std::vector<double> row;
    row.resize(uint64_t(m.out_width) * stride);
    uint32_t clamped = 0;
    const int16_t* plane = m.words + uint64_t(n) * m.plane_rows * m.row_elements;
    for (uint32_t y = y0; y < y1; ++y) {
        split_evenly(p.blocks, max_blocks, [&](uint32_t b0, uint32_t kb) {
            split_evenly(m.out_width, max_x, [&](uint32_t x0, uint32_t xb) {
                double* out = row.data() + uint64_t(x0) * stride + b0 * lanes;
                if (avx512)
                    kAvx512Blocks[xb - 1][kb - 1](m, p, plane, y, x0, b0, out, stride);
                else
                    kAvx2Blocks[xb - 1][kb - 1](m, p, plane, y, x0, b0, out, stride);
            });
        });
        int32_t* out = delivered + size_t(y - y0) * m.out_width * m.kernels;
        for (uint32_t x = 0; x < m.out_width; ++x, out += m.kernels) {
            const double* in = row.data() + uint64_t(x) * stride;
            for (uint32_t k = 0; k < m.kernels; ++k)
                out[k] = cacc_deliver_one(static_cast<int64_t>(in[k]), clip, clamped);
        }
    }
    return clamped;
}

// AVX2, int8: vpmaddwd multiplies int16 pairs into int32 sums exactly (unlike vpmaddubsw,
// which saturates pairs of byte products). Weights packed per block of 8 kernels as
// [block][tap][c/2][8][2] int16, so one 32-byte load feeds 8 kernels x 2 channels; the data is
// the int16 plane, read two elements at a time (an odd depth reads one element past a kernel
// position, multiplied by a zero weight).
struct MaddWeights {
    std::vector<int16_t> packed;
    uint32_t blocks = 0, taps = 0, pairs = 0;

    uint64_t bytes() const { return packed.size() * sizeof(int16_t); }
};

MaddWeights pack_madd(const MacProblem& m) {
    MaddWeights p;
    p.blocks = (m.kernels + 7) / 8;
    p.taps = m.taps_r * m.taps_s;
    p.pairs = (m.depth + 1) / 2;
    p.packed.assign(uint64_t(p.blocks) * p.taps * p.pairs * 16, 0);
    for (uint32_t k = 0; k < m.kernels; ++k)
        for (uint32_t t = 0; t < p.taps; ++t)
            for (uint32_t c = 0; c < m.depth; ++c)
                p.packed[((uint64_t(k / 8) * p.taps + t) * p.pairs + c / 2) * 16 + (k % 8) * 2 +
                         c % 2] = m.weights[(uint64_t(k) * p.taps + t) * m.depth + c];
    return p;
}

// Whether the int32 sums of the pair kernel are exact: at most 2^17 - 1 products of 2^14.
bool madd_fits(const MacProblem& m) {
    return uint64_t(m.taps_r) * m.taps_s * ((m.depth + 1) / 2 * 2) < (uint64_t(1) << 17);
}

// XB outputs from x0 x KB blocks of 8 kernels from b0, every tap, delivered through CACC
// (round half away by 2^clip: the sums are below 2^31 in magnitude, nothing saturates) into
// out[i * stride + j * 8 + lane].
template <int XB, int KB>
__attribute__((target("avx2"))) void madd_block(const MacProblem& m, const MaddWeights& p,
                                                const int16_t* plane, uint32_t y, uint32_t x0,
                                                uint32_t b0, uint32_t clip, int32_t* out,
                                                uint32_t stride) {
    __m256i acc[XB][KB];
#pragma GCC unroll 8
    for (int i = 0; i < XB; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < KB; ++j) acc[i][j] = _mm256_setzero_si256();
    const uint64_t block_stride = uint64_t(p.taps) * p.pairs * 16;
    const uint64_t x_step = m.x_step;
    for (uint32_t t = 0; t < p.taps; ++t) {
        const uint32_t r = t / m.taps_s, s = t % m.taps_s;
        const int16_t* base = plane +
                              uint64_t(y * m.row_step + r * m.row_dilation) * m.row_elements +
                              uint64_t(x0) * x_step + uint64_t(s) * m.s_step;
        const int16_t* wt = p.packed.data() + (uint64_t(b0) * p.taps + t) * p.pairs * 16;
        for (uint32_t q = 0; q < p.pairs; ++q, base += 2, wt += 16) {
            __m256i w[KB];
#pragma GCC unroll 4
            for (int j = 0; j < KB; ++j)
                w[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wt + j * block_stride));
#pragma GCC unroll 8
            for (int i = 0; i < XB; ++i) {
                int32_t two;
                std::memcpy(&two, base + i * x_step, 4);
                const __m256i b = _mm256_set1_epi32(two);
#pragma GCC unroll 4
                for (int j = 0; j < KB; ++j)
                    acc[i][j] = _mm256_add_epi32(acc[i][j], _mm256_madd_epi16(b, w[j]));
            }
        }
    }
    const __m256i half = _mm256_set1_epi32(clip > 0 ? int32_t(1u << (clip - 1)) : 0);
    const __m128i shift = _mm_cvtsi32_si128(static_cast<int>(clip));
#pragma GCC unroll 8
    for (int i = 0; i < XB; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < KB; ++j) {
            __m256i v = acc[i][j];
            if (clip > 0) {
                const __m256i sign = _mm256_srai_epi32(v, 31);
                const __m256i q =
                    _mm256_srl_epi32(_mm256_add_epi32(_mm256_abs_epi32(v), half), shift);
                v = _mm256_sub_epi32(_mm256_xor_si256(q, sign), sign);
            }
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i * stride + j * 8), v);
        }
}

using MaddBlockFn = void (*)(const MacProblem&, const MaddWeights&, const int16_t*, uint32_t,
                             uint32_t, uint32_t, uint32_t, int32_t*, uint32_t);
template <int XB>
constexpr std::array<MaddBlockFn, 3> madd_row() {
    return {madd_block<XB, 1>, madd_block<XB, 2>, madd_block<XB, 3>};
}
constexpr int kMaddMaxX = 4, kMaddMaxBlocks = 3;
constexpr std::array<std::array<MaddBlockFn, 3>, kMaddMaxX> kMaddBlocks = {
    madd_row<1>(), madd_row<2>(), madd_row<3>(), madd_row<4>()};

// Rows [y0, y1) of batch n (as vnni_rows; the sums are below 2^31, nothing saturates).
void madd_rows(const MacProblem& m, const MaddWeights& p, uint32_t clip, uint32_t n, uint32_t y0,
               uint32_t y1, int32_t* delivered) {
    const uint32_t stride = p.blocks * 8;
    const bool in_place = m.kernels == stride;
    thread_local std::vector<int32_t> row;
    if (!in_place) row.resize(uint64_t(m.out_width) * stride);
    const int16_t* plane = m.words + uint64_t(n) * m.plane_rows * m.row_elements;
    for (uint32_t y = y0; y < y1; ++y) {
        int32_t* out = delivered + size_t(y - y0) * m.out_width * m.kernels;
        int32_t* target = in_place ? out : row.data();
        for (uint32_t b0 = 0; b0 < p.blocks; b0 += kMaddMaxBlocks) {
            const uint32_t kb = std::min<uint32_t>(kMaddMaxBlocks, p.blocks - b0);
            for (uint32_t x0 = 0; x0 < m.out_width; x0 += kMaddMaxX) {
                const uint32_t xb = std::min<uint32_t>(kMaddMaxX, m.out_width - x0);
                kMaddBlocks[xb - 1][kb - 1](m, p, plane, y, x0, b0, clip,
                                            target + uint64_t(x0) * stride + b0 * 8, stride);
            }
        }
        if (in_place) continue;
        for (uint32_t x = 0; x < m.out_width; ++x)
            std::memcpy(out + size_t(x) * m.kernels, row.data() + uint64_t(x) * stride,
                        size_t(m.kernels) * sizeof(int32_t));
    }
}

bool cpu_has_avx512f() {
    return __builtin_cpu_supports("avx512f");
}
bool cpu_has_avx2() {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

}  // namespace

void force_mac_kernel(MacKernel kernel) {
    g_forced = kernel;
}

MacKernel forced_mac_kernel() {
    return g_forced;
}

MacKernel active_mac_kernel(Precision precision) {
    const MacKernel forced = g_forced;
    const IsaLevel isa = isa_level();
    if (forced == MacKernel::Scalar || isa == IsaLevel::Scalar) return MacKernel::Scalar;
    const bool any = forced == MacKernel::Auto || forced == MacKernel::OneDnn;
    const bool avx512 = isa == IsaLevel::Avx512;
    if (precision == Precision::Int8 && (any || forced == MacKernel::Avx512Vnni) && avx512 &&
        cpu_has_vnni())
        return MacKernel::Avx512Vnni;
    if ((any || forced == MacKernel::Avx512) && avx512 && cpu_has_avx512f())
        return MacKernel::Avx512;
    if ((any || forced == MacKernel::Avx2 || forced == MacKernel::Avx512) && cpu_has_avx2())
        return MacKernel::Avx2;
    return MacKernel::Scalar;
}

bool mac_wants_biased_bytes(Precision precision) {
    return active_mac_kernel(precision) == MacKernel::Avx512Vnni;
}

namespace {

// The weights as `pack` lays them out, shared with the rows function: the cache's copy (kept
// with the decoded weights; the pointer then owns nothing, no allocation) or one of its own.
template <class Packed, class Pack>
std::shared_ptr<const Packed> shared_packing(const MacProblem& m, uint32_t format, Pack&& pack) {
    Packed local;
    const Packed& p = packed_weights(m, format, pack, local);
    if (&p == &local) return std::make_shared<const Packed>(std::move(local));
    return std::shared_ptr<const Packed>(std::shared_ptr<void>(), &p);  // the cache's
}

}  // namespace

void prefetch_packing(const ConvWeights& weights, bool values) {
    prefetch_grouped_packing(weights, values);
    const auto* vnni = std::any_cast<CachedPacking<VnniWeights>>(&weights.packed);
    const auto* madd = std::any_cast<CachedPacking<MaddWeights>>(&weights.packed);
    if (!values) {
        if (vnni) prefetch_lines(vnni, sizeof *vnni);
        if (madd) prefetch_lines(madd, sizeof *madd);
        return;
    }
    if (vnni) {
        prefetch_lines(vnni->packed.packed.data(), vnni->packed.packed.size());
        prefetch_lines(vnni->packed.bias.data(), vnni->packed.bias.size() * sizeof(int32_t));
    }
    if (madd)
        prefetch_lines(madd->packed.packed.data(), madd->packed.packed.size() * sizeof(int16_t));
}

MacRows::MacRows(const MacProblem& m, Precision precision, uint32_t clip)
    : problem_(m), clip_(clip) {
    const MacKernel kernel = active_mac_kernel(precision);
    // Block-diagonal weights (grouped, depthwise): only the channels each kernel reads.
    grouped_ = grouped_mac_rows(problem_, precision, clip, kernel);
    if (grouped_) return;
    switch (kernel) {
        case MacKernel::Avx512Vnni: {
            auto p = shared_packing<VnniWeights>(problem_, kVnniPacking, pack_vnni);
            rows_ = [this, p = p.get()](uint32_t n, uint32_t y0, uint32_t y1, int32_t* out) {
                return vnni_rows(problem_, *p, clip_, n, y0, y1, out);
            };
            packing_ = std::move(p);
            return;
        }
        case MacKernel::Avx512:
        case MacKernel::Avx2: {
            const bool avx512 = kernel == MacKernel::Avx512;
            if (!avx512 && precision == Precision::Int8 && madd_fits(problem_)) {
                auto p = shared_packing<MaddWeights>(problem_, kMaddPacking, pack_madd);
                rows_ = [this, p = p.get()](uint32_t n, uint32_t y0, uint32_t y1, int32_t* out) {
                    madd_rows(problem_, *p, clip_, n, y0, y1, out);
                    return 0u;
                };
                packing_ = std::move(p);
                return;
            }
            const uint32_t lanes = avx512 ? 8 : 4;
            auto p = shared_packing<DoubleWeights>(
                problem_, kDoublePacking + lanes,
                [lanes](const MacProblem& pr) { return pack_double(pr, lanes); });
            // (avx512 is the packing's lanes: 8.)
            rows_ = [this, p = p.get()](uint32_t n, uint32_t y0, uint32_t y1, int32_t* out) {
                return double_rows(problem_, *p, p->lanes == 8, clip_, n, y0, y1, out);
            };
            packing_ = std::move(p);
            return;
        }
        default:
            rows_ = [this](uint32_t n, uint32_t y0, uint32_t y1, int32_t* out) {
                thread_local std::vector<int64_t> sums;
                scalar_rows(problem_, n, y0, y1, sums);
                return cacc_deliver_int(sums.data(), sums.size(), clip_, out);
            };
    }
}

uint32_t mac_convolve_int(const MacProblem& m, Precision precision, uint32_t clip, int32_t* out) {
    const MacRows rows(m, precision, clip);
    std::atomic<uint32_t> saturations{0};
    parallel_for(m.threads, m.out_height, macs(m), [&](uint64_t y0, uint64_t y1) {
        uint32_t clamped = 0;
        for (uint32_t n = 0; n < m.batches; ++n)
            clamped +=
                rows.rows(n, uint32_t(y0), uint32_t(y1), out + sum_index(m, n, 0, uint32_t(y0), 0));
        saturations += clamped;
    });
    return saturations;
}

}  // namespace nvdla::emu::conv
