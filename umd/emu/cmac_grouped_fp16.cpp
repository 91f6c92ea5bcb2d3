// CMAC's fp16 kernel for block-diagonal weights down the diagonal: the depthwise layers the
// builder makes of a depthwise convolution's chunks (16 kernels of 16 channels on nv_full,
// kernel k zero but for channel k), which the dense cell computes 16 lanes wide for one
// nonzero product.
//
// Why skipping the zero weights is exact (cmac.cpp's cmac_fp16_dot_scalar, which follows
// cal_fp16_nan/exp/mul and the adder tree; cacc.cpp's cacc_fp48_add):
// - A lane whose weight is +0 or -0 is masked off: its product is 0 and its exponent sum does
//   not enter the common exponent (the largest over the other lanes, 0 when there are none),
//   whatever the data, infinities and denormals included. So an operation's result is that of
//   its other lanes alone, the same exponent and 38-bit sum.
// - But a NaN in any data lane makes the operation's result a NaN (the first NaN weight's
//   payload, else the first NaN data element's), whatever its weight. Outputs whose data holds
//   a NaN at any tap and channel are therefore computed operation by operation through the
//   scalar cell, as the reference does.
// - An operation whose lanes are all masked off gives 0 (exponent 0, sum 0), and CACC leaves
//   its sum unchanged by a result whose mantissa is 0 (whatever its exponent): operations of a
//   kernel's channel chunks that hold none of its band are no-ops and are skipped, and the
//   sign of a zero sum cannot come from them.
// - CACC's additions are not associative, so each kernel's band must lie within one of CSC's
//   channel chunks (atomic_c channels): its operations then come in the hardware's order, tap
//   by tap, as the dense walk has them (chunk outer, r, s inner). Bands that straddle a chunk
//   boundary keep the dense kernel.
// tests/emu/conv_fp16_band_test.cpp checks these cases for every operand class and compares
// whole layers with convolve_fp16_reference.
//
// Kernels are computed W at a time (16 AVX-512, 8 AVX2), one per vector lane: per tap and band
// lane j the lanes' data elements plane[position + offset + k + j] are one load (consecutive
// kernels read consecutive channels), decoded, multiplied by the kernels' weights in the Booth
// array (cmac_fp16_lanes.inc's) and truncated to the lane's own common exponent (a one-lane
// band, depthwise: truncation 0, so the exact product of the aligned mantissas), then added
// into CACC's fp48 sums, W / 2 at a time.
#include <immintrin.h>

#include <algorithm>
#include <any>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <vector>

#include "emu/cmac_grouped.hpp"
#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"
#include "emu/parallel.hpp"

namespace nvdla::emu::conv {
namespace {

// The widest band taken: the int32 sum of a lane's products stays exact up to 8 of them.
constexpr uint32_t kMaxFp16Band = 8;

bool fp16_zero(int16_t h) {
    return (h & 0x7fff) == 0;
}
bool fp16_nan(int16_t h) {
    return (h & 0x7fff) > 0x7c00;
}

struct Band {
    uint32_t offset = 0, width = 1;
};

// Kernel k's nonzero weights (anything but +-0) in channels [offset + k, offset + k + width),
// the band within one operation's chunk of `atomic_c` channels for every kernel, no NaN
// weight, and the block's reads past the last kernel within the plane's slack.
bool find_fp16_band(const int16_t* weights, uint32_t kernels, uint64_t taps, uint32_t depth,
                    uint32_t atomic_c, uint32_t lanes, Band* band) {
    const uint32_t limit = std::min(depth / 4, kMaxFp16Band);
    if (limit == 0 || kernels == 0 || atomic_c == 0) return false;
    int64_t low = INT64_MAX, high = INT64_MIN;
    for (uint32_t k = 0; k < kernels; ++k)
        for (uint64_t t = 0; t < taps; ++t) {
            const int16_t* row = weights + (uint64_t(k) * taps + t) * depth;
            uint32_t first = 0;
            while (first < depth && fp16_zero(row[first])) ++first;
            if (first == depth) continue;
            uint32_t last = depth - 1;
            while (fp16_zero(row[last])) --last;
            low = std::min<int64_t>(low, int64_t(first) - k);
            high = std::max<int64_t>(high, int64_t(last) - k);
            if (low < 0 || high - low + 1 > limit) return false;
            for (uint32_t c = first; c <= last; ++c)
                if (fp16_nan(row[c])) return false;
        }
    if (low == INT64_MAX) low = high = 0;  // all zero
    const uint32_t offset = static_cast<uint32_t>(low),
                   width = static_cast<uint32_t>(high - low + 1);
    for (uint32_t k = 0; k < kernels; ++k) {
        const uint64_t first = uint64_t(offset) + k;
        if (first >= depth) break;
        const uint64_t last = std::min<uint64_t>(first + width - 1, depth - 1);
        if (first / atomic_c != last / atomic_c) return false;
    }
    if (uint64_t(offset) + kernels + lanes + width > uint64_t(depth) + kMacReadSlack / 2)
        return false;
    *band = {offset, width};
    return true;
}

// The band's weights decoded as Fp16Operands::set does, [block][tap][j < width][lane].
struct Fp16BandWeights {
    uint32_t lanes = 0, blocks = 0, offset = 0, width = 0;
    std::vector<uint32_t> mantissa;
    std::vector<int32_t> exponent;

    uint64_t bytes() const { return mantissa.size() * 4 + exponent.size() * 4; }
};

Fp16BandWeights pack_fp16_band(const MacProblem& m, const Band& band, uint32_t lanes) {
    Fp16BandWeights p;
    p.lanes = lanes;
    p.blocks = (m.kernels + lanes - 1) / lanes;
    p.offset = band.offset;
    p.width = band.width;
    const uint64_t taps = uint64_t(m.taps_r) * m.taps_s;
    const uint64_t count = p.blocks * taps * p.width * lanes;
    p.mantissa.assign(count, 0);
    p.exponent.assign(count, -64);
    for (uint32_t k = 0; k < m.kernels; ++k)
        for (uint64_t t = 0; t < taps; ++t)
            for (uint32_t j = 0; j < p.width; ++j) {
                const uint32_t c = p.offset + k + j;
                if (c >= m.depth) continue;  // past the channels: a zero weight
                const uint16_t h =
                    static_cast<uint16_t>(m.weights[(uint64_t(k) * taps + t) * m.depth + c]);
                if ((h & 0x7fffu) == 0) continue;
                const uint32_t e = (h >> 10) & 31u;
                const uint64_t at =
                    ((uint64_t(k / lanes) * taps + t) * p.width + j) * lanes + k % lanes;
                p.mantissa[at] = (((h & 0x3ffu) | (e ? 0x400u : 0)) << (e ? (e & 3u) : 1u)) |
                                 uint32_t(h & 0x8000u) << 16;
                p.exponent[at] = (h >> 12) & 7;
            }
    return p;
}

struct Fp16BandKey {
    uint32_t lanes = 0, kernels = 0, taps_r = 0, taps_s = 0, depth = 0, atomic_c = 0;
    bool operator==(const Fp16BandKey&) const = default;
};
struct CachedFp16Band {
    Fp16BandKey key;
    std::shared_ptr<const Fp16BandWeights> packed;
};

size_t output_index(const ConvLayer& l, uint32_t n, uint32_t k, uint32_t y, uint32_t x) {
    return ((size_t(n) * l.out_channels + k) * l.out_height + y) * l.out_width + x;
}

// Output (n, y, x) of kernels [k0, k1) operation by operation through the scalar cell, in the
// hardware's order (csc.cpp's for_each_atomic for feature data): data holding a NaN.
void dense_outputs(const ConvLayer& l, const MacProblem& m, uint32_t n, uint32_t y, uint32_t x,
                   uint32_t k0, uint32_t k1, std::vector<int32_t>& out) {
    const uint64_t taps = uint64_t(m.taps_r) * m.taps_s;
    const int16_t* plane = m.words + uint64_t(n) * m.plane_rows * m.row_elements;
    for (uint32_t k = k0; k < k1; ++k) {
        const int16_t* kernel = m.weights + k * taps * m.depth;
        uint64_t acc = 0;
        for (uint32_t c0 = 0; c0 < m.depth; c0 += l.atomic_c) {
            const uint32_t lanes = std::min(l.atomic_c, m.depth - c0);
            for (uint32_t r = 0; r < m.taps_r; ++r)
                for (uint32_t s = 0; s < m.taps_s; ++s) {
                    const int16_t* data =
                        plane + uint64_t(y * m.row_step + r * m.row_dilation) * m.row_elements +
                        uint64_t(x) * m.x_step + uint64_t(s) * m.s_step + c0;
                    const int16_t* weights = kernel + (uint64_t(r) * m.taps_s + s) * m.depth + c0;
                    acc = cacc_fp48_add(
                        acc,
                        cmac_fp16_dot_scalar(reinterpret_cast<const uint16_t*>(data),
                                             reinterpret_cast<const uint16_t*>(weights), lanes));
                }
        }
        out[output_index(l, n, k, y, x)] = static_cast<int32_t>(cacc_fp48_to_fp32(acc));
    }
}

#define NVDLA_FP16_MORE_LANES "emu/cmac_grouped_fp16_lanes.inc"
#include "emu/cmac_fp16_per_isa.inc"
#undef NVDLA_FP16_MORE_LANES

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void band_rows_avx512(
    const ConvLayer& l, const MacProblem& m, const Fp16BandWeights& p, uint64_t row0, uint64_t row1,
    std::vector<int32_t>& out) {
    avx512::band_rows(l, m, p, row0, row1, out);
}

__attribute__((target("avx2,f16c"))) void band_rows_avx2(const ConvLayer& l, const MacProblem& m,
                                                         const Fp16BandWeights& p, uint64_t row0,
                                                         uint64_t row1, std::vector<int32_t>& out) {
    avx2::band_rows(l, m, p, row0, row1, out);
}

}  // namespace

bool convolve_fp16_banded(const ConvLayer& l, const MacProblem& m, std::vector<int32_t>& out) {
    const IsaLevel level = isa_level();
    if (l.kind != InputKind::Feature || level == IsaLevel::Scalar || !m.words) return false;
    const bool avx512 = level == IsaLevel::Avx512;
    const uint32_t lanes = avx512 ? 16 : 8;
    const Fp16BandKey key{lanes, m.kernels, m.taps_r, m.taps_s, m.depth, l.atomic_c};
    const bool cached = m.cache && m.cache->values.data() == m.weights;
    std::shared_ptr<const Fp16BandWeights> packed;
    if (const auto* c = cached ? std::any_cast<CachedFp16Band>(&m.cache->packed) : nullptr;
        c && c->key == key) {
        packed = c->packed;
    } else {
        Band band;
        if (!find_fp16_band(m.weights, m.kernels, uint64_t(m.taps_r) * m.taps_s, m.depth,
                            l.atomic_c, lanes, &band))
            return false;
        packed = std::make_shared<const Fp16BandWeights>(pack_fp16_band(m, band, lanes));
        if (cached) {
            m.cache->packed = CachedFp16Band{key, packed};
            m.cache->packed_bytes = packed->bytes();
        }
    }
    const uint64_t rows = uint64_t(m.batches) * m.out_height;
    const uint64_t work = rows * m.out_width * m.kernels * m.taps_r * m.taps_s * packed->width;
    parallel_for(l.threads, rows, work, [&](uint64_t row0, uint64_t row1) {
        if (avx512)
            band_rows_avx512(l, m, *packed, row0, row1, out);
        else
            band_rows_avx2(l, m, *packed, row0, row1, out);
    });
    return true;
}

}  // namespace nvdla::emu::conv
