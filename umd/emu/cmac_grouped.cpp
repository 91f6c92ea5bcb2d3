// CMAC's integer kernels for block-diagonal weights whose blocks run down the diagonal: the
// depthwise layers the builder makes of a depthwise convolution's chunks.
//
// Kernel k reads channels [offset + k, offset + k + width) only: the diagonal band that holds
// every nonzero weight of every kernel, found once when the weights are packed (and kept with
// them in the weight cache). Kernels are computed `lanes` at a time, one vector lane each: per
// tap and band channel j the lanes' data elements plane[position + offset + k + j] are one load
// (consecutive kernels read consecutive channels), times the lanes' weights. The products
// skipped are those of zero weights, which add exactly 0 to an integer sum, so the sums are the
// dense kernels' bit for bit. Bands that do not run down the diagonal (grouped layers with
// several channels or kernels per group, channel multipliers) would need a gather per lane
// vector, measured 5-50x slower than the dense kernels on the same layers: those keep them.
//
// int8: int32 lanes, each product through vpmaddwd (vpdpwssd with VNNI: the same products and
// wrapping sum) with the weight in the low 16 bits (the high ones 0, so the data's upper half
// never counts); the sums are exact while a kernel has fewer
// than 2^17 products of at most 2^14, which width <= kMaxBand and 32x32 taps keep. Data stored
// biased (element + 128, the VNNI level's plane) is corrected per kernel as the VNNI kernel
// does. int16: double-precision FMA, exact for sums below 2^53.
//
// int8 bands of width 1 (depthwise) at the AVX2 level (int8_pairs256): two taps per vpmaddwd,
// 16 kernels at a time: the int16 data of 16 channels at tap t and at tap t + 1 (two loads)
// interleaved by vpunpcklwd and vpunpckhwd (per 128-bit half: channels 0-3 and 8-11, then 4-7
// and 12-15), times the two taps' weights in the same order, so that each lane adds its
// channel's two products (an odd tap count pairs its last tap with zeros); the halves are put
// back in order when delivered.
//
// int8 depthwise chunks of 32 channels at the VNNI level with VBMI (int8_rows4): a row's 3 or 4
// taps of a kernel in one vpdpbusd. Kernel k reads channel k only (band width 1, offset 0) and
// the plane's columns are 32 bytes apart (no dilation), so a position's taps s of row r lie in
// the 128 bytes from its first column, channel c of column s at byte 32 s + c: one byte permute
// per 16 kernels puts channel c's 4 columns into lane c, and vpdpbusd multiplies them (unsigned:
// the biased bytes) by the row's 4 weights (signed; 0 past the last tap) and adds the four
// products to the lane's sum exactly, wrapping as the adds do (9 sums of at most 2^15 each).
#include "emu/cmac_grouped.hpp"

#include <immintrin.h>

#include <algorithm>
#include <any>
#include <array>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "emu/isa.hpp"

namespace nvdla::emu::conv {
namespace {

// The diagonal band: kernel k's nonzero weights lie in channels [offset + k, offset + k + width).
struct Band {
    uint32_t offset = 0, width = 1;
};

bool find_band(const int16_t* weights, uint32_t kernels, uint64_t taps, uint32_t depth,
               Band* band) {
    const uint32_t limit = std::min(depth / 4, kMaxBand);
    if (limit == 0 || kernels == 0) return false;
    // Over the nonzero weights: the least and greatest channel - kernel.
    int64_t low = INT64_MAX, high = INT64_MIN;
    for (uint32_t k = 0; k < kernels; ++k)
        for (uint64_t t = 0; t < taps; ++t) {
            const int16_t* row = weights + (uint64_t(k) * taps + t) * depth;
            uint32_t first = 0;
            while (first < depth && row[first] == 0) ++first;
            if (first == depth) continue;
            uint32_t last = depth - 1;
            while (row[last] == 0) --last;
            low = std::min<int64_t>(low, int64_t(first) - k);
            high = std::max<int64_t>(high, int64_t(last) - k);
            // A read before channel 0 of the first position would leave the plane; a dense
            // kernel fails here on its first row.
            if (low < 0 || high - low + 1 > limit) return false;
        }
    if (low == INT64_MAX) low = high = 0;  // all zero
    const uint32_t offset = static_cast<uint32_t>(low),
                   width = static_cast<uint32_t>(high - low + 1);
    // The last block's lanes read up to 16 + width channels past the last kernel's band:
    // within the plane's read slack beyond the last position.
    if (uint64_t(offset) + kernels + 16 + width > uint64_t(depth) + kMacReadSlack / 2) return false;
    if (band) *band = {offset, width};
    return true;
}

}  // namespace

// The packed form: per block of `lanes` kernels, [tap][j < width][lane].
struct GroupedWeights {
    uint32_t lanes = 0, blocks = 0, taps = 0, offset = 0, width = 0;
    std::vector<int32_t> int8;  // int8 weights, zero-extended from 16 bits
    std::vector<double> int16;  // int16 weights
    std::vector<int32_t> bias;  // int8: 128 * (sum of the kernel's weights), [block][lane]
    // int8 bands of width 1 and rows of at most 4 taps: [block][r][lane], the row's weights as
    // 4 bytes (tap s in byte s, 0 past the last tap), for int8_rows4.
    std::vector<uint32_t> rows4;
    // int8 bands of width 1, 16 kernels per block: [block][pair of taps][16], the two taps'
    // weights as the low and high 16 bits, in int8_pairs256's lane order.
    std::vector<int32_t> pairs16;

    uint64_t bytes() const {
        return int8.size() * 4 + int16.size() * 8 + bias.size() * 4 + rows4.size() * 4 +
               pairs16.size() * 4;
    }
};

namespace {

GroupedWeights pack_grouped(const MacProblem& m, const Band& band, uint32_t lanes, bool wide) {
    GroupedWeights p;
    p.lanes = lanes;
    p.blocks = (m.kernels + lanes - 1) / lanes;
    p.taps = m.taps_r * m.taps_s;
    p.offset = band.offset;
    p.width = band.width;
    const uint64_t per_block = uint64_t(p.taps) * p.width * lanes;
    p.bias.assign(uint64_t(p.blocks) * lanes, 0);
    if (wide)
        p.int16.assign(p.blocks * per_block, 0.0);
    else
        p.int8.assign(p.blocks * per_block, 0);
    for (uint32_t k = 0; k < m.kernels; ++k) {
        const uint32_t b = k / lanes, lane = k % lanes;
        for (uint32_t t = 0; t < p.taps; ++t)
            for (uint32_t j = 0; j < p.width; ++j) {
                const uint32_t c = p.offset + k + j;
                if (c >= m.depth) continue;  // past the channels: a zero weight
                const int16_t w = m.weights[(uint64_t(k) * p.taps + t) * m.depth + c];
                const uint64_t at = b * per_block + (uint64_t(t) * p.width + j) * lanes + lane;
                if (wide) {
                    p.int16[at] = w;
                } else {
                    p.int8[at] = static_cast<uint16_t>(w);
                    p.bias[k] += 128 * w;
                }
            }
    }
    if (!wide && lanes == 8 && p.width == 1) {
        const uint32_t pairs = (p.taps + 1) / 2;
        p.pairs16.assign(uint64_t(m.kernels + 15) / 16 * pairs * 16, 0);
        for (uint32_t k = 0; k < m.kernels; ++k) {
            const uint32_t c = p.offset + k;
            if (c >= m.depth) continue;
            // Lane of kernel k % 16: vpunpcklwd takes channels 0-3 and 8-11, vpunpckhwd 4-7 and
            // 12-15 (8 lanes each).
            const uint32_t lane = k % 16, half = lane % 8 / 4, slot = lane / 8 * 4 + lane % 4;
            for (uint32_t q = 0; q < pairs; ++q) {
                const auto weight = [&](uint32_t tap) {
                    return tap < p.taps ? static_cast<uint16_t>(
                                              m.weights[(uint64_t(k) * p.taps + tap) * m.depth + c])
                                        : uint16_t(0);
                };
                p.pairs16[(uint64_t(k / 16) * pairs + q) * 16 + half * 8 + slot] =
                    static_cast<int32_t>(uint32_t(weight(2 * q)) | uint32_t(weight(2 * q + 1))
                                                                       << 16);
            }
        }
    }
    if (!wide && lanes == 16 && p.width == 1 && m.taps_s <= 4) {
        p.rows4.assign(uint64_t(p.blocks) * m.taps_r * lanes, 0);
        for (uint32_t k = 0; k < m.kernels; ++k) {
            const uint32_t c = p.offset + k;
            if (c >= m.depth) continue;
            for (uint32_t r = 0; r < m.taps_r; ++r) {
                uint32_t packed = 0;
                for (uint32_t s = 0; s < m.taps_s; ++s) {
                    const int16_t w =
                        m.weights[(uint64_t(k) * p.taps + r * m.taps_s + s) * m.depth + c];
                    packed |= uint32_t(static_cast<uint8_t>(w)) << (8 * s);
                }
                p.rows4[(uint64_t(k / lanes) * m.taps_r + r) * lanes + k % lanes] = packed;
            }
        }
    }
    return p;
}

// ---- int8: int32 lanes --------------------------------------------------------------------

// The maskz and masked forms of AVX-512 intrinsics throughout: GCC 12's unmasked ones warn about
// their undefined pass-through.
#define NVDLA_AVX512 __attribute__((target("avx512f,avx512bw")))
#define NVDLA_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))
#define NVDLA_AVX2 __attribute__((target("avx2,fma")))

// The data elements of a block's lanes at `at` (one position + tap + band channel + the
// block's first kernel).
template <bool Biased>
NVDLA_AVX512 inline __m512i load16(const void* plane, uint64_t at) {
    if constexpr (Biased)
        return _mm512_maskz_cvtepu8_epi32(0xffff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(
                                                      static_cast<const uint8_t*>(plane) + at)));
    else
        return _mm512_maskz_cvtepi16_epi32(
            0xffff, _mm256_loadu_si256(
                        reinterpret_cast<const __m256i*>(static_cast<const int16_t*>(plane) + at)));
}

template <bool Biased>
NVDLA_AVX2 inline __m256i load8(const void* plane, uint64_t at) {
    if constexpr (Biased)
        return _mm256_cvtepu8_epi32(_mm_loadl_epi64(
            reinterpret_cast<const __m128i*>(static_cast<const uint8_t*>(plane) + at)));
    else
        return _mm256_cvtepi16_epi32(_mm_loadu_si128(
            reinterpret_cast<const __m128i*>(static_cast<const int16_t*>(plane) + at)));
}

// Where block b's sums start: 0, or for biased data -bias (the data's correction), which
// modulo 2^32, as the sums add, is subtracting it after them.
template <bool Biased>
NVDLA_AVX512 inline __m512i start512(const GroupedWeights& p, uint32_t b) {
    if constexpr (Biased)
        return _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_loadu_si512(p.bias.data() + b * 16));
    else
        return _mm512_setzero_si512();
}

// The XB positions' sums of block b (started at start512) delivered through CACC (round half
// away by 2^clip; the sums are below 2^31 in magnitude, nothing saturates) into
// out[i * kernels + lane].
template <int XB>
NVDLA_AVX512 __attribute__((always_inline)) inline void deliver512(const MacProblem& m, uint32_t b,
                                                                   uint32_t clip,
                                                                   const __m512i* acc,
                                                                   int32_t* out) {
    const __m512i half = _mm512_set1_epi32(clip > 0 ? int32_t(1u << (clip - 1)) : 0);
    const __m128i shift = _mm_cvtsi32_si128(static_cast<int>(clip));
    const uint32_t count = std::min(16u, m.kernels - b * 16);
    const __mmask16 lanes = static_cast<__mmask16>((1u << count) - 1), all = 0xffff;
    // A local: the stores through `out` could alias m.kernels, which was read again after each.
    const uint64_t stride = m.kernels;
#pragma GCC unroll 8
    for (int i = 0; i < XB; ++i) {
        __m512i v = acc[i];
        if (clip > 0) {
            const __m512i sign = _mm512_maskz_srai_epi32(all, v, 31);
            const __m512i q = _mm512_maskz_srl_epi32(
                all, _mm512_add_epi32(_mm512_maskz_abs_epi32(all, v), half), shift);
            v = _mm512_sub_epi32(_mm512_xor_si512(q, sign), sign);
        }
        // (A masked store only for a block of fewer than 16 kernels: it is the slower one.)
        if (lanes == all)
            _mm512_storeu_si512(out + i * stride, v);
        else
            _mm512_mask_storeu_epi32(out + i * stride, lanes, v);
    }
}

// XB positions from x0 of row y, block b, into out[i * kernels + lane] (deliver512).
template <bool Biased, int XB>
NVDLA_AVX512 uint32_t int8_block512(const MacProblem& m, const GroupedWeights& p, const void* plane,
                                    uint32_t y, uint32_t x0, uint32_t b, uint32_t clip,
                                    int32_t* out) {
    __m512i acc[XB];
#pragma GCC unroll 8
    for (int i = 0; i < XB; ++i) acc[i] = start512<Biased>(p, b);
    const int32_t* wt = p.int8.data() + uint64_t(b) * p.taps * p.width * 16;
    const uint64_t first = p.offset + uint64_t(b) * 16;
    for (uint32_t t = 0; t < p.taps; ++t) {
        const uint32_t r = t / m.taps_s, s = t % m.taps_s;
        const uint64_t row = uint64_t(y * m.row_step + r * m.row_dilation) * m.row_elements +
                             uint64_t(x0) * m.x_step + uint64_t(s) * m.s_step;
        for (uint32_t j = 0; j < p.width; ++j, wt += 16) {
            const __m512i w = _mm512_loadu_si512(wt);
#pragma GCC unroll 8
            for (int i = 0; i < XB; ++i)
                acc[i] = _mm512_add_epi32(
                    acc[i],
                    _mm512_madd_epi16(load16<Biased>(plane, row + i * m.x_step + j + first), w));
        }
    }
    deliver512<XB>(m, b, clip, acc, out);
    return 0;
}

// The same with VNNI: vpdpwssd adds the same two products (one of them 0) to the sum, wrapping
// as the add does, in one instruction.
template <bool Biased, int XB>
NVDLA_AVX512_VNNI uint32_t int8_block512_vnni(const MacProblem& m, const GroupedWeights& p,
                                              const void* plane, uint32_t y, uint32_t x0,
                                              uint32_t b, uint32_t clip, int32_t* out) {
    __m512i acc[XB];
#pragma GCC unroll 8
    for (int i = 0; i < XB; ++i) acc[i] = start512<Biased>(p, b);
    const int32_t* wt = p.int8.data() + uint64_t(b) * p.taps * p.width * 16;
    const uint64_t first = p.offset + uint64_t(b) * 16;
    for (uint32_t t = 0; t < p.taps; ++t) {
        const uint32_t r = t / m.taps_s, s = t % m.taps_s;
        const uint64_t row = uint64_t(y * m.row_step + r * m.row_dilation) * m.row_elements +
                             uint64_t(x0) * m.x_step + uint64_t(s) * m.s_step;
        for (uint32_t j = 0; j < p.width; ++j, wt += 16) {
            const __m512i w = _mm512_loadu_si512(wt);
#pragma GCC unroll 8
            for (int i = 0; i < XB; ++i)
                acc[i] = _mm512_dpwssd_epi32(
                    acc[i], load16<Biased>(plane, row + i * m.x_step + j + first), w);
        }
    }
    deliver512<XB>(m, b, clip, acc, out);
    return 0;
}

#define NVDLA_AVX512_VNNI_VBMI __attribute__((target("avx512f,avx512bw,avx512vnni,avx512vbmi")))

// The byte permutes of int8_rows4, per block of 16 kernels: byte 4 c + s of the result is
// channel 16 b + c of column s, byte 32 s + 16 b + c of the 128 bytes from the first column.
constexpr std::array<std::array<uint8_t, 64>, 2> kRowsOrder = [] {
    std::array<std::array<uint8_t, 64>, 2> order{};
    for (uint32_t b = 0; b < 2; ++b)
        for (uint32_t c = 0; c < 16; ++c)
            for (uint32_t s = 0; s < 4; ++s) order[b][4 * c + s] = uint8_t(32 * s + 16 * b + c);
    return order;
}();

// XB positions from x0 of row y, blocks b to b + Blocks - 1 (kernels 16 b to 16 (b + Blocks) - 1)
// of a depthwise chunk of 32 channels (takes_rows4), into out[i * kernels + lane] (deliver512).
// With two blocks (a chunk of more than 16 kernels) each position's bytes are loaded once for
// both blocks' permutes.
template <int XB, int Blocks>
NVDLA_AVX512_VNNI_VBMI uint32_t int8_rows4(const MacProblem& m, const GroupedWeights& p,
                                           const void* plane, uint32_t y, uint32_t x0, uint32_t b,
                                           uint32_t clip, int32_t* out) {
    __m512i acc[Blocks][XB], order[Blocks];
    const uint32_t* wt[Blocks];
#pragma GCC unroll 2
    for (int k = 0; k < Blocks; ++k) {
#pragma GCC unroll 8
        for (int i = 0; i < XB; ++i) acc[k][i] = start512<true>(p, b + k);
        order[k] = _mm512_loadu_si512(kRowsOrder[b + k].data());
        wt[k] = p.rows4.data() + uint64_t(b + k) * m.taps_r * 16;
    }
    // The columns past the second: only the third's 32 bytes for 3 taps.
    const __mmask64 rest = m.taps_s == 4 ? ~__mmask64(0) : __mmask64(0xffffffff);
    const uint8_t* bytes = static_cast<const uint8_t*>(plane);
    for (uint32_t r = 0; r < m.taps_r; ++r) {
        const uint8_t* row = bytes +
                             uint64_t(y * m.row_step + r * m.row_dilation) * m.row_elements +
                             uint64_t(x0) * m.x_step;
        __m512i w[Blocks];
#pragma GCC unroll 2
        for (int k = 0; k < Blocks; ++k) w[k] = _mm512_loadu_si512(wt[k] + r * 16);
#pragma GCC unroll 8
        for (int i = 0; i < XB; ++i) {
            const uint8_t* at = row + i * m.x_step;
            const __m512i first = _mm512_loadu_si512(at);
            const __m512i second = _mm512_maskz_loadu_epi8(rest, at + 64);
#pragma GCC unroll 2
            for (int k = 0; k < Blocks; ++k)
                acc[k][i] = _mm512_dpbusd_epi32(
                    acc[k][i],
                    _mm512_maskz_permutex2var_epi8(~__mmask64(0), first, order[k], second), w[k]);
        }
    }
#pragma GCC unroll 2
    for (int k = 0; k < Blocks; ++k) deliver512<XB>(m, b + k, clip, acc[k], out + 16 * k);
    return 0;
}

template <bool Biased, int XB>
NVDLA_AVX2 uint32_t int8_block256(const MacProblem& m, const GroupedWeights& p, const void* plane,
                                  uint32_t y, uint32_t x0, uint32_t b, uint32_t clip,
                                  int32_t* out) {
    __m256i acc[XB];
#pragma GCC unroll 8
    for (int i = 0; i < XB; ++i) acc[i] = _mm256_setzero_si256();
    const int32_t* wt = p.int8.data() + uint64_t(b) * p.taps * p.width * 8;
    const uint64_t first = p.offset + uint64_t(b) * 8;
    for (uint32_t t = 0; t < p.taps; ++t) {
        const uint32_t r = t / m.taps_s, s = t % m.taps_s;
        const uint64_t row = uint64_t(y * m.row_step + r * m.row_dilation) * m.row_elements +
                             uint64_t(x0) * m.x_step + uint64_t(s) * m.s_step;
        for (uint32_t j = 0; j < p.width; ++j, wt += 8) {
            const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wt));
#pragma GCC unroll 8
            for (int i = 0; i < XB; ++i)
                acc[i] = _mm256_add_epi32(
                    acc[i],
                    _mm256_madd_epi16(load8<Biased>(plane, row + i * m.x_step + j + first), w));
        }
    }
    const __m256i bias =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.bias.data() + b * 8));
    const __m256i half = _mm256_set1_epi32(clip > 0 ? int32_t(1u << (clip - 1)) : 0);
    const __m128i shift = _mm_cvtsi32_si128(static_cast<int>(clip));
    const int32_t count = static_cast<int32_t>(std::min(8u, m.kernels - b * 8));
    const __m256i lanes =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
#pragma GCC unroll 8
    for (int i = 0; i < XB; ++i) {
        __m256i v = Biased ? _mm256_sub_epi32(acc[i], bias) : acc[i];
        if (clip > 0) {
            const __m256i sign = _mm256_srai_epi32(v, 31);
            const __m256i q = _mm256_srl_epi32(_mm256_add_epi32(_mm256_abs_epi32(v), half), shift);
            v = _mm256_sub_epi32(_mm256_xor_si256(q, sign), sign);
        }
        _mm256_maskstore_epi32(out + uint64_t(i) * m.kernels, lanes, v);
    }
    return 0;
}

// The element offset of tap t for output row y (x = 0).
inline uint64_t tap_offset(const MacProblem& m, uint32_t y, uint32_t t) {
    const uint32_t r = t / m.taps_s, s = t % m.taps_s;
    return uint64_t(y * m.row_step + r * m.row_dilation) * m.row_elements + uint64_t(s) * m.s_step;
}

// XB positions from x0 of row y, kernels 16 b to 16 b + 15 of a band of width 1 (the int16
// plane), two taps per vpmaddwd (pairs16), into out[i * kernels + lane].
template <int XB>
NVDLA_AVX2 uint32_t int8_pairs256(const MacProblem& m, const GroupedWeights& p, const void* plane,
                                  uint32_t y, uint32_t x0, uint32_t b, uint32_t clip,
                                  int32_t* out) {
    __m256i low[XB], high[XB];  // channels 0-3 and 8-11; 4-7 and 12-15
#pragma GCC unroll 8
    for (int i = 0; i < XB; ++i) low[i] = high[i] = _mm256_setzero_si256();
    const int16_t* words =
        static_cast<const int16_t*>(plane) + p.offset + uint64_t(b) * 16 + uint64_t(x0) * m.x_step;
    const uint32_t pairs = (p.taps + 1) / 2;
    const int32_t* wt = p.pairs16.data() + uint64_t(b) * pairs * 16;
    const auto add = [&](const int16_t* first, const int16_t* second) NVDLA_AVX2
        __attribute__((always_inline)) {
        const __m256i w_low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wt));
        const __m256i w_high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wt + 8));
#pragma GCC unroll 8
        for (int i = 0; i < XB; ++i) {
            const __m256i a =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(first + i * m.x_step));
            const __m256i c =
                second ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(second + i * m.x_step))
                       : _mm256_setzero_si256();
            low[i] =
                _mm256_add_epi32(low[i], _mm256_madd_epi16(_mm256_unpacklo_epi16(a, c), w_low));
            high[i] =
                _mm256_add_epi32(high[i], _mm256_madd_epi16(_mm256_unpackhi_epi16(a, c), w_high));
        }
        wt += 16;
    };
    for (uint32_t t = 0; t + 1 < p.taps; t += 2)
        add(words + tap_offset(m, y, t), words + tap_offset(m, y, t + 1));
    if (p.taps % 2) add(words + tap_offset(m, y, p.taps - 1), nullptr);
    const __m256i half = _mm256_set1_epi32(clip > 0 ? int32_t(1u << (clip - 1)) : 0);
    const __m128i shift = _mm_cvtsi32_si128(static_cast<int>(clip));
    const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int32_t count = static_cast<int32_t>(std::min(16u, m.kernels - b * 16));
    const __m256i lanes0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(count), index);
    const __m256i lanes1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(count - 8), index);
    const auto deliver = [&](__m256i v, int32_t * to, __m256i lanes) NVDLA_AVX2
        __attribute__((always_inline)) {
        if (clip > 0) {
            const __m256i sign = _mm256_srai_epi32(v, 31);
            const __m256i q = _mm256_srl_epi32(_mm256_add_epi32(_mm256_abs_epi32(v), half), shift);
            v = _mm256_sub_epi32(_mm256_xor_si256(q, sign), sign);
        }
        _mm256_maskstore_epi32(to, lanes, v);
    };
#pragma GCC unroll 8
    for (int i = 0; i < XB; ++i) {
        int32_t* to = out + uint64_t(i) * m.kernels;
        deliver(_mm256_permute2x128_si256(low[i], high[i], 0x20), to, lanes0);
        deliver(_mm256_permute2x128_si256(low[i], high[i], 0x31), to + 8, lanes1);
    }
    return 0;
}

// ---- int16: double lanes ------------------------------------------------------------------

template <int XB>
NVDLA_AVX512 uint32_t int16_block512(const MacProblem& m, const GroupedWeights& p,
                                     const void* plane, uint32_t y, uint32_t x0, uint32_t b,
                                     uint32_t clip, int32_t* out) {
    __m512d acc[XB];
#pragma GCC unroll 8
    for (int i = 0; i < XB; ++i) acc[i] = _mm512_setzero_pd();
    const double* wt = p.int16.data() + uint64_t(b) * p.taps * p.width * 8;
    const int16_t* words = static_cast<const int16_t*>(plane);
    const uint64_t first = p.offset + uint64_t(b) * 8;
    for (uint32_t t = 0; t < p.taps; ++t) {
        const uint32_t r = t / m.taps_s, s = t % m.taps_s;
        const uint64_t row = uint64_t(y * m.row_step + r * m.row_dilation) * m.row_elements +
                             uint64_t(x0) * m.x_step + uint64_t(s) * m.s_step;
        for (uint32_t j = 0; j < p.width; ++j, wt += 8) {
            const __m512d w = _mm512_loadu_pd(wt);
#pragma GCC unroll 8
            for (int i = 0; i < XB; ++i) {
                const int16_t* at = words + row + i * m.x_step + j + first;
                const __m256i d =
                    _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
                acc[i] = _mm512_fmadd_pd(_mm512_maskz_cvtepi32_pd(0xff, d), w, acc[i]);
            }
        }
    }
    const uint32_t count = std::min(8u, m.kernels - b * 8);
    uint32_t saturations = 0;
    for (int i = 0; i < XB; ++i) {
        alignas(64) double sums[8];
        _mm512_store_pd(sums, acc[i]);
        for (uint32_t lane = 0; lane < count; ++lane)
            out[uint64_t(i) * m.kernels + lane] =
                cacc_deliver_one(static_cast<int64_t>(sums[lane]), clip, saturations);
    }
    return saturations;
}

template <int XB>
NVDLA_AVX2 uint32_t int16_block256(const MacProblem& m, const GroupedWeights& p, const void* plane,
                                   uint32_t y, uint32_t x0, uint32_t b, uint32_t clip,
                                   int32_t* out) {
    __m256d acc[XB];
#pragma GCC unroll 8
    for (int i = 0; i < XB; ++i) acc[i] = _mm256_setzero_pd();
    const double* wt = p.int16.data() + uint64_t(b) * p.taps * p.width * 4;
    const int16_t* words = static_cast<const int16_t*>(plane);
    const uint64_t first = p.offset + uint64_t(b) * 4;
    for (uint32_t t = 0; t < p.taps; ++t) {
        const uint32_t r = t / m.taps_s, s = t % m.taps_s;
        const uint64_t row = uint64_t(y * m.row_step + r * m.row_dilation) * m.row_elements +
                             uint64_t(x0) * m.x_step + uint64_t(s) * m.s_step;
        for (uint32_t j = 0; j < p.width; ++j, wt += 4) {
            const __m256d w = _mm256_loadu_pd(wt);
#pragma GCC unroll 8
            for (int i = 0; i < XB; ++i) {
                const int16_t* at = words + row + i * m.x_step + j + first;
                const __m128i d =
                    _mm_cvtepi16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(at)));
                acc[i] = _mm256_fmadd_pd(_mm256_cvtepi32_pd(d), w, acc[i]);
            }
        }
    }
    const uint32_t count = std::min(4u, m.kernels - b * 4);
    uint32_t saturations = 0;
    for (int i = 0; i < XB; ++i) {
        alignas(32) double sums[4];
        _mm256_store_pd(sums, acc[i]);
        for (uint32_t lane = 0; lane < count; ++lane)
            out[uint64_t(i) * m.kernels + lane] =
                cacc_deliver_one(static_cast<int64_t>(sums[lane]), clip, saturations);
    }
    return saturations;
}

// ---- Choice and rows ----------------------------------------------------------------------

using BlockFn = GroupedBlockFn;
constexpr int kPositions = 4;  // positions per block call (weights loaded once for them)

// A form's block functions: one position and kPositions.
using BlockTable = BlockFn[2];

template <bool Biased>
constexpr BlockTable kInt8Avx512 = {int8_block512<Biased, 1>, int8_block512<Biased, kPositions>};
template <bool Biased>
constexpr BlockTable kInt8Avx512Vnni = {int8_block512_vnni<Biased, 1>,
                                        int8_block512_vnni<Biased, kPositions>};
template <bool Biased>
constexpr BlockTable kInt8Avx2 = {int8_block256<Biased, 1>, int8_block256<Biased, kPositions>};
constexpr BlockTable kInt8Pairs256 = {int8_pairs256<1>, int8_pairs256<kPositions>};
constexpr BlockTable kInt16Avx512 = {int16_block512<1>, int16_block512<kPositions>};
constexpr BlockTable kInt16Avx2 = {int16_block256<1>, int16_block256<kPositions>};

// int8_rows4 by its positions (1 to kRows4Positions), a row cut into near-equal pieces
// (split_evenly): its call's fixed work (the weights, the permute's order, the delivery's
// constants) and the latency of each position's chain of vpdpbusd (one per row) spread over
// up to 8 positions, and MobileNetV2's 7- and 14-wide rows in calls of 7 (not 4 + 4 over 8
// positions and 8 + 4 + 4 over 16).
constexpr uint32_t kRows4Positions = 8;
using Rows4Table = std::array<BlockFn, kRows4Positions>;
template <int Blocks>
constexpr Rows4Table kInt8Rows4 = {
    int8_rows4<1, Blocks>, int8_rows4<2, Blocks>, int8_rows4<3, Blocks>, int8_rows4<4, Blocks>,
    int8_rows4<5, Blocks>, int8_rows4<6, Blocks>, int8_rows4<7, Blocks>, int8_rows4<8, Blocks>};

// `lanes`: the kernels per block of the form (16 for int8_pairs256, else the packing's).
// `overlap_tail`: a row's last positions (fewer than kPositions) as one kPositions call that
// ends at the row's end, over positions already delivered (the same values written again), not
// one call per position; only for forms that count no saturation (int8: the sums stay below
// 2^31), which would count those positions twice.
// `pieces`: int8_rows4's table (then `fns` is not used), or nullptr.
uint32_t grouped_rows(const MacProblem& m, const GroupedWeights& p, const BlockFn* fns,
                      const BlockFn* pieces, uint32_t lanes, bool overlap_tail, uint32_t clip,
                      uint32_t n, uint32_t y0, uint32_t y1, int32_t* delivered) {
    const uint64_t plane_offset = uint64_t(n) * m.plane_rows * m.row_elements;
    const void* plane = m.bytes ? static_cast<const void*>(m.bytes + plane_offset)
                                : static_cast<const void*>(m.words + plane_offset);
    uint32_t saturations = 0;
    for (uint32_t y = y0; y < y1; ++y) {
        int32_t* row = delivered + size_t(y - y0) * m.out_width * m.kernels;
        for (uint32_t b = 0; b * lanes < m.kernels; ++b) {
            int32_t* out = row + b * lanes;
            if (pieces) {
                split_evenly(m.out_width, kRows4Positions, [&](uint32_t x, uint32_t count) {
                    saturations += pieces[count - 1](m, p, plane, y, x, b, clip,
                                                     out + uint64_t(x) * m.kernels);
                });
                continue;
            }
            uint32_t x = 0;
            for (; x + kPositions <= m.out_width; x += kPositions)
                saturations += fns[1](m, p, plane, y, x, b, clip, out + uint64_t(x) * m.kernels);
            if (overlap_tail && x < m.out_width && m.out_width >= kPositions) {
                x = m.out_width - kPositions;
                saturations += fns[1](m, p, plane, y, x, b, clip, out + uint64_t(x) * m.kernels);
                continue;
            }
            for (; x < m.out_width; ++x)
                saturations += fns[0](m, p, plane, y, x, b, clip, out + uint64_t(x) * m.kernels);
        }
    }
    return saturations;
}

// The packing kept with the decoded weights (ConvWeights::packed), for this form and shape.
struct GroupedKey {
    uint32_t lanes = 0, wide = 0, kernels = 0, taps_r = 0, taps_s = 0, depth = 0;
    bool operator==(const GroupedKey&) const = default;
};
struct CachedGrouped {
    GroupedKey key;
    std::shared_ptr<const GroupedWeights> packed;
    // The values this ISA level's kernel reads first (the rows of int8_rows4, the pairs of
    // int8_pairs256 or the general forms' weights) and the bias, beside the key, so that
    // prefetch_grouped_packing reaches them without waiting for the packing's own lines first.
    std::pair<const void*, size_t> weights, bias;
};

CachedGrouped cached_grouped(const GroupedKey& key, std::shared_ptr<const GroupedWeights> packed) {
    const GroupedWeights& p = *packed;
    const auto range = [](const auto& v) {
        return std::pair<const void*, size_t>{v.data(), v.size() * sizeof(v[0])};
    };
    const IsaLevel level = isa_level();
    const auto weights = level == IsaLevel::Avx512 && isa_vbmi() && !p.rows4.empty()
                             ? range(p.rows4)
                         : level == IsaLevel::Avx2 && !p.pairs16.empty() ? range(p.pairs16)
                         : p.int8.empty()                                ? range(p.int16)
                                                                         : range(p.int8);
    return {key, std::move(packed), weights, range(p.bias)};
}

}  // namespace

bool banded_weights(const int16_t* weights, uint32_t kernels, uint64_t taps, uint32_t depth) {
    return find_band(weights, kernels, taps, depth, nullptr);
}

void prefetch_grouped_packing(const ConvWeights& weights, bool values) {
    const auto* c = std::any_cast<CachedGrouped>(&weights.packed);
    if (!c) return;
    if (!values) {
        __builtin_prefetch(c);
        return;
    }
    // The packing's lines (make_shared: its control block's 16 bytes just before it) and the
    // first lines of the values its kernel reads.
    prefetch_lines(reinterpret_cast<const char*>(c->packed.get()) - 16,
                   16 + sizeof(GroupedWeights));
    prefetch_lines(c->weights.first, c->weights.second);
    prefetch_lines(c->bias.first, c->bias.second);
}

uint32_t GroupedRows::operator()(const MacProblem& m, uint32_t n, uint32_t y0, uint32_t y1,
                                 int32_t* out) const {
    return grouped_rows(m, *packed, blocks, pieces, lanes, overlap_tail, clip, n, y0, y1, out);
}

GroupedRows grouped_mac_rows(const MacProblem& m, Precision precision, uint32_t clip,
                             MacKernel kernel) {
    const bool avx512 = kernel == MacKernel::Avx512 || kernel == MacKernel::Avx512Vnni;
    if (!avx512 && kernel != MacKernel::Avx2) return {};
    const bool wide = precision != Precision::Int8;
    if (wide && m.bytes) return {};
    // 8 kernels or fewer (int8 chunks on nv_small) take the 8-lane form at either level: half
    // of a 16-lane vector would multiply nothing.
    const bool zmm = avx512 && (wide || m.kernels > 8);
    const uint32_t lanes = wide ? (zmm ? 8 : 4) : (zmm ? 16 : 8);
    const GroupedKey key{lanes, wide, m.kernels, m.taps_r, m.taps_s, m.depth};
    const bool cached = m.cache && m.cache->values.data() == m.weights;
    std::shared_ptr<const GroupedWeights> packed;
    if (const auto* c = cached ? std::any_cast<CachedGrouped>(&m.cache->packed) : nullptr;
        c && c->key == key) {
        packed = c->packed;
    } else {
        Band band;
        if (!find_band(m.weights, m.kernels, uint64_t(m.taps_r) * m.taps_s, m.depth, &band))
            return {};
        packed = std::make_shared<const GroupedWeights>(pack_grouped(m, band, lanes, wide));
        if (cached) {
            m.cache->packed = cached_grouped(key, packed);
            m.cache->packed_bytes = packed->bytes();
        }
    }
    const bool biased = m.bytes != nullptr;
    const bool vnni = kernel == MacKernel::Avx512Vnni;
    // int8_rows4: a depthwise chunk of 32 channels (kernel k reads channel k), columns 32
    // bytes apart, rows of 3 or 4 taps.
    const bool rows4 = vnni && biased && isa_vbmi() && !packed->rows4.empty() &&
                       packed->offset == 0 && m.depth == 32 && m.kernels <= 32 && m.s_step == 32 &&
                       (m.taps_s == 3 || m.taps_s == 4);
    // int8_pairs256: AVX2's int8 bands of width 1, more than 8 kernels.
    const bool pairs = !zmm && !wide && !biased && !packed->pairs16.empty() && m.kernels > 8;
    // Chunks of more than 16 kernels take both blocks in one int8_rows4 call.
    const bool rows4_pair = rows4 && m.kernels > 16;
    const Rows4Table* pieces = rows4 ? (rows4_pair ? &kInt8Rows4<2> : &kInt8Rows4<1>) : nullptr;
    const BlockTable& table =
        pairs  ? kInt8Pairs256
        : wide ? (zmm ? kInt16Avx512 : kInt16Avx2)
        : zmm  ? (vnni ? (biased ? kInt8Avx512Vnni<true> : kInt8Avx512Vnni<false>)
                       : (biased ? kInt8Avx512<true> : kInt8Avx512<false>))
               : (biased ? kInt8Avx2<true> : kInt8Avx2<false>);
    const uint32_t block_lanes = pairs ? 16 : rows4_pair ? 32 : packed->lanes;
    return {std::move(packed), table, pieces ? pieces->data() : nullptr, block_lanes, !wide, clip};
}

}  // namespace nvdla::emu::conv
