// The fp16 band kernel for block-diagonal weights (cmac_grouped_fp16.cpp) skips the lanes whose
// weight is +-0. First what that relies on, checked on the reference cell and CACC for every
// data value: a zero-weight lane changes an operation's result only when its data is a NaN,
// and a CMAC result whose mantissa is 0 leaves CACC's sum as it is. Then whole layers of the
// shapes the builder makes of depthwise and grouped convolutions (and bands of up to 8 lanes),
// with zeros of both signs, denormals, infinities and NaNs inside and outside the band, ReLU
// data and padding, against convolve_fp16_reference on every instruction-set level this CPU
// runs and for several thread counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <vector>

#include "conv_fp16_rig.hpp"
#include "emu/cmac_grouped.hpp"
#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"
#include "isa_levels.hpp"

namespace nvdla::emu::conv {
namespace {

bool is_nan(uint16_t h) {
    return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}

// Operations of a few lanes (exponents near and far apart, denormals, infinities, zeros of
// both signs, negative lanes), into which the zero-weight lane is put.
std::vector<std::array<uint16_t, 4>> context_lanes(std::mt19937_64& rng, int count) {
    const std::array<uint16_t, 12> special = {0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x3c00,
                                              0xbc00, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x1234};
    std::vector<std::array<uint16_t, 4>> lanes(size_t(count) * 2);
    for (auto& op : lanes)
        for (uint16_t& v : op)
            v = rng() % 3 ? static_cast<uint16_t>(rng() % 0x7c00 | (rng() & 1) << 15)
                          : special[rng() % special.size()];
    return lanes;
}

// Every data value (NaNs, infinities, denormals, both zeros) with a +0 or -0 weight, put at
// every lane of 5 around 4 others: the result is that of the 4 alone; with a NaN (and no NaN
// weight) it is a NaN whatever the other lanes.
TEST(ConvFp16Band, ZeroWeightLaneChangesNothingButForNaNData) {
    std::mt19937_64 rng(2031);
    const auto contexts = context_lanes(rng, 3);
    uint64_t differ = 0, nan_missed = 0;
    for (uint32_t d = 0; d < 0x10000; ++d)
        for (uint16_t zero : {uint16_t(0x0000), uint16_t(0x8000)})
            for (size_t c = 0; c < contexts.size(); c += 2) {
                const auto& data = contexts[c];
                const auto& weights = contexts[c + 1];
                const uint64_t alone = cmac_fp16_dot_scalar(data.data(), weights.data(), 4);
                for (unsigned at = 0; at <= 4; ++at) {
                    uint16_t dd[5], ww[5];
                    for (unsigned i = 0, j = 0; i < 5; ++i) {
                        dd[i] = i == at ? static_cast<uint16_t>(d) : data[j];
                        ww[i] = i == at ? zero : weights[j];
                        if (i != at) ++j;
                    }
                    const uint64_t with = cmac_fp16_dot_scalar(dd, ww, 5);
                    if (is_nan(static_cast<uint16_t>(d)))
                        nan_missed += (with >> 38) != 0x3f;
                    else
                        differ += with != alone;
                }
            }
    EXPECT_EQ(differ, 0u);
    EXPECT_EQ(nan_missed, 0u);
}

// A CMAC result whose 38-bit mantissa is 0 leaves any accumulator (NaNs, zeros of either
// sign's encoding, every exponent) unchanged, whatever its exponent.
TEST(ConvFp16Band, ZeroMantissaResultLeavesTheSumAsItIs) {
    std::mt19937_64 rng(48);
    uint64_t differ = 0;
    for (int i = 0; i < 20000; ++i) {
        const uint64_t r = rng();
        uint64_t acc = r & ((uint64_t(1) << 48) - 1);
        if (i % 7 == 0) acc &= ~((uint64_t(1) << 40) - 1);  // mantissa 0
        for (uint64_t exponent = 0; exponent < 64; ++exponent)
            differ += cacc_fp48_add(acc, exponent << 38) != acc;
    }
    EXPECT_EQ(differ, 0u);
}

// The band kernel's one-lane operations multiply the aligned mantissas: the Booth array
// without truncation (shift 0) must be the exact signed product, for every pair of aligned
// mantissas (of every non-NaN fp16 magnitude: 4 x 1024 normal ones, (0x400 | f) << (e & 3),
// and the 511 denormal f << 1 below 1024) and both product signs: a quarter of the pairs here,
// every value in both roles (all of them: docs/emu/performance.md, "fp16 band kernel").
TEST(ConvFp16Band, UntruncatedBoothIsTheProduct) {
    std::vector<uint32_t> mantissas;
    for (uint32_t h = 1; h <= 0x7c00; ++h) {
        const uint32_t e = (h >> 10) & 31u;
        mantissas.push_back(((h & 0x3ffu) | (e ? 0x400u : 0)) << (e ? (e & 3u) : 1u));
    }
    std::sort(mantissas.begin(), mantissas.end());
    mantissas.erase(std::unique(mantissas.begin(), mantissas.end()), mantissas.end());
    ASSERT_EQ(mantissas.size(), 4096u + 511u);
    uint64_t differ = 0;
    for (size_t i = 0; i < mantissas.size(); ++i)
        for (size_t j = i % 4; j < mantissas.size(); j += 4) {
            const uint32_t w = mantissas[i], d = mantissas[j];
            const int32_t product = static_cast<int32_t>(w * d);
            differ += cmac_fp16_booth(false, w, d, 0) != product;
            differ += cmac_fp16_booth(true, w, d, 0) != -product;
        }
    EXPECT_EQ(differ, 0u);
}

uint16_t random_fp16(std::mt19937_64& rng) {
    const uint64_t r = rng();
    const uint16_t sign = static_cast<uint16_t>((r & 1) << 15);
    const uint16_t fraction = static_cast<uint16_t>((r >> 1) & 0x3ff);
    switch ((r >> 16) % 40) {
        case 0: return sign;                                      // +-0
        case 1: return sign | fraction;                           // denormal (or 0)
        case 2: return sign | 0x7c00;                             // infinity
        case 3: return sign | ((r >> 24) % 31) << 10 | fraction;  // any exponent
        default: return static_cast<uint16_t>(sign | (((r >> 24) % 12 + 8) << 10) | fraction);
    }
}

using Layer = Fp16Layer;

// A layer whose kernel k has nonzero weights only in channels [offset + k, offset + k +
// width): the builder's depthwise chunks (width 1, offset 0, 16 kernels of 16 channels) and
// grouped ones. `nans`: a few NaN data elements, inside or outside the band.
Layer random_band_layer(std::mt19937_64& rng, uint32_t width, bool nans) {
    Layer t;
    ConvLayer& l = t.l;
    l.kind = InputKind::Feature;
    l.precision = l.in_precision = Precision::Fp16;
    const uint32_t kernels = 1 + rng() % 40;
    const uint32_t offset = rng() % 3 == 0 ? uint32_t(rng() % 4) : 0;
    const uint32_t channels = std::max(offset + kernels + width - 1, 4 * width) + rng() % 3;
    // Chunks of at least the channels keep every band within one; narrower ones make some
    // bands straddle a boundary (the dense kernel then).
    l.atomic_c = rng() % 4 ? 64 : std::array<uint32_t, 3>{8, 16, 32}[rng() % 3];
    l.batches = 1 + rng() % 2;
    const uint32_t in_width = 3 + rng() % 12, in_height = 3 + rng() % 6;
    l.kernel_width = 1 + rng() % 3;
    l.kernel_height = 1 + rng() % 3;
    l.kernel_channels = channels;
    l.kernels = l.out_channels = kernels;
    random_strides_and_padding(rng, l, in_width, in_height);
    l.pad_value = random_fp16(rng);
    ConvData& d = t.d;
    shape_fp16_feature_data(d, l, in_width, in_height, channels);
    const bool relu = rng() % 2;
    for (int16_t& v : d.values) {
        const uint16_t h = random_fp16(rng);
        v = relu ? without_negatives(h) : static_cast<int16_t>(h);
    }
    if (relu) l.pad_value = rng() % 2 ? 0 : 0x8000;
    if (nans && rng() % 4 == 0) l.pad_value = 0x7e00;
    if (nans)
        for (int i = 0; i < 3; ++i)
            d.values[rng() % d.values.size()] = static_cast<int16_t>(0x7c01 + rng() % 0x3fe);
    ConvWeights& w = t.w;
    w.precision = Precision::Fp16;
    w.kernels = kernels;
    w.height = l.kernel_height;
    w.width = l.kernel_width;
    w.channels = channels;
    w.values.assign(size_t(kernels) * w.height * w.width * channels, 0);
    const uint64_t taps = uint64_t(w.height) * w.width;
    for (uint32_t k = 0; k < kernels; ++k)
        for (uint64_t tap = 0; tap < taps; ++tap)
            for (uint32_t c = 0; c < channels; ++c) {
                int16_t& v = w.values[(k * taps + tap) * channels + c];
                const bool in_band = c >= offset + k && c < offset + k + width;
                // Outside the band zeros of both signs.
                v = static_cast<int16_t>(in_band ? random_fp16(rng) : (rng() % 2 ? 0x8000 : 0));
            }
    return t;
}

// The band kernel itself (when `band`: it must take the layer) and convolve_fp16 against the
// reference, on every level and thread count; the band kernel twice (its packing cached).
void expect_equals_reference(const Layer& t, bool band, const std::string& what) {
    std::vector<int32_t> reference;
    convolve_fp16_reference(t.l, t.d, t.w, reference);
    ASSERT_FALSE(reference.empty());
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        for (unsigned threads : {1u, 2u}) {
            ConvLayer l = t.l;
            l.threads = threads;
            for (int run = 0; run < 2; ++run) {
                ConvScratch scratch;
                const MacProblem m = mac_problem(l, t.d, t.w, scratch);
                std::vector<int32_t> out(reference.size(), 0);
                const bool taken = convolve_fp16_banded(l, m, out);
                if (level == IsaLevel::Scalar) {
                    EXPECT_FALSE(taken) << what;
                } else {
                    ASSERT_EQ(taken, band) << what << ", " << isa_name(level);
                    if (taken) {
                        ASSERT_EQ(out, reference) << what << ", " << isa_name(level) << ", "
                                                  << threads << " threads, run " << run;
                    }
                }
            }
            std::vector<int32_t> fast;
            convolve_fp16(l, t.d, t.w, fast);
            ASSERT_EQ(fast, reference)
                << what << ", convolve_fp16, " << isa_name(level) << ", " << threads << " threads";
        }
    }
}

// Whether every kernel's band [offset + k, offset + k + width) lies in one chunk of atomic_c
// channels (else the dense kernel keeps the layer).
bool bands_within_chunks(const Layer& t, uint32_t offset, uint32_t width) {
    for (uint32_t k = 0; k < t.l.kernels; ++k) {
        const uint32_t first = offset + k;
        if (first >= t.l.kernel_channels) break;
        const uint32_t last = std::min(first + width - 1, t.l.kernel_channels - 1);
        if (first / t.l.atomic_c != last / t.l.atomic_c) return false;
    }
    return true;
}

// The band as the weights have it (nonzero channels less the kernel index).
bool band_of(const Layer& t, uint32_t& offset, uint32_t& width) {
    int64_t low = INT64_MAX, high = INT64_MIN;
    const uint64_t taps = uint64_t(t.w.height) * t.w.width;
    for (uint32_t k = 0; k < t.w.kernels; ++k)
        for (uint64_t tap = 0; tap < taps; ++tap)
            for (uint32_t c = 0; c < t.w.channels; ++c)
                if ((t.w.values[(k * taps + tap) * t.w.channels + c] & 0x7fff) != 0) {
                    low = std::min<int64_t>(low, int64_t(c) - k);
                    high = std::max<int64_t>(high, int64_t(c) - k);
                }
    if (low == INT64_MAX) low = high = 0;
    if (low < 0) return false;
    offset = uint32_t(low);
    width = uint32_t(high - low + 1);
    return true;
}

TEST(ConvFp16Band, BandLayersEqualTheReference) {
    std::mt19937_64 rng(1607);
    int banded = 0;
    for (int i = 0; i < 40; ++i) {
        const uint32_t width = i % 3 == 0 ? 1 + uint32_t(rng() % 8) : 1;
        const Layer t = random_band_layer(rng, width, i % 4 == 1);
        uint32_t offset = 0, w = 0;
        const bool band = band_of(t, offset, w) && w <= std::min(8u, t.l.kernel_channels / 4) &&
                          bands_within_chunks(t, offset, w);
        banded += band;
        expect_equals_reference(t, band, "band layer " + std::to_string(i));
    }
    EXPECT_GE(banded, 25);  // the random layers mostly take the band kernel
}

// The builder's depthwise chunk on nv_full (16 kernels of 16 channels, kernel k reading
// channel k, 3x3, padding 1), ReLU data with NaNs and infinities here and there.
TEST(ConvFp16Band, DepthwiseChunkEqualsTheReference) {
    std::mt19937_64 rng(960);
    for (int i = 0; i < 6; ++i) {
        Layer t = random_band_layer(rng, 1, false);
        while (t.l.kernels != 16 || t.l.kernel_channels < 16) t = random_band_layer(rng, 1, false);
        expect_equals_reference(t, t.l.kernel_channels / 4 >= 1 && bands_within_chunks(t, 0, 1),
                                "depthwise chunk " + std::to_string(i));
    }
}

// Depthwise bands (one lane) whose taps' products lie at any exponent: the products summed as
// floats times floats (depthwise_block), far-apart ones through CACC's chain, infinities read
// as 2^16, denormals, both zeros; 1x1 up to 5x5 taps (the most kept) and 6x6 (added as they
// come).
TEST(ConvFp16Band, DepthwiseProductsAtEveryExponentEqualTheReference) {
    std::mt19937_64 rng(2311);
    const auto any_exponent = [&rng] {
        const uint64_t r = rng();
        const uint16_t sign = static_cast<uint16_t>((r & 1) << 15);
        switch ((r >> 8) % 8) {
            case 0: return static_cast<uint16_t>(sign | (rng() % 2 ? 0x7c00 : 0));
            case 1: return static_cast<uint16_t>(sign | ((r >> 16) & 0x3ff));  // denormal
            default: return static_cast<uint16_t>(sign | (r >> 16) % 0x7c00);  // any finite
        }
    };
    for (int i = 0; i < 12; ++i) {
        Layer t = random_band_layer(rng, 1, false);
        const uint32_t side = std::array<uint32_t, 6>{1, 2, 3, 3, 5, 6}[i % 6];
        t.l.kernel_width = t.l.kernel_height = t.w.width = t.w.height = side;
        const uint32_t in_width = side + 2 + uint32_t(rng() % 6),
                       in_height = side + uint32_t(rng() % 4);
        random_strides_and_padding(rng, t.l, in_width, in_height);
        shape_fp16_feature_data(t.d, t.l, in_width, in_height, t.l.kernel_channels);
        for (int16_t& v : t.d.values) v = static_cast<int16_t>(any_exponent());
        const uint64_t taps = uint64_t(side) * side;
        t.w.values.assign(size_t(t.w.kernels) * taps * t.w.channels, 0);
        for (uint32_t k = 0; k < t.w.kernels && k < t.w.channels; ++k)
            for (uint64_t tap = 0; tap < taps; ++tap)
                t.w.values[(k * taps + tap) * t.w.channels + k] =
                    static_cast<int16_t>(any_exponent());
        uint32_t offset = 0, width = 0;
        const bool band = band_of(t, offset, width) &&
                          width <= std::min(8u, t.l.kernel_channels / 4) &&
                          bands_within_chunks(t, offset, width);
        expect_equals_reference(t, band, "depthwise layer " + std::to_string(i));
    }
}

// NaN weights (in the band) keep the dense kernel; so do dense weights.
TEST(ConvFp16Band, NaNWeightsAndDenseWeightsKeepTheDenseKernel) {
    std::mt19937_64 rng(7);
    Layer t = random_band_layer(rng, 1, false);
    t.w.values[0] = 0x7e00;
    expect_equals_reference(t, false, "NaN weight");
    for (int16_t& v : t.w.values) v = static_cast<int16_t>(random_fp16(rng) & 0x7fff) | 0x0400;
    // What was kept of the weights goes with them, as CDMA drops it (ConvWeights::packed).
    t.w.packed.reset();
    expect_equals_reference(t, false, "dense weights");
}

}  // namespace
}  // namespace nvdla::emu::conv
