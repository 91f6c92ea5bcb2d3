// CMAC's grouped kernel (cmac_grouped.cpp) on the block-diagonal weights the builder makes of
// grouped and depthwise convolutions: random layers (int8, int16; 8 to 96 channels, 3x3 and 5x5,
// strides, dilation, batches, groups of nv_full's and nv_small's atoms) through the kernel
// chosen on every instruction-set level this CPU runs, against a plain sum computed here and
// against the scalar kernel (which never takes the grouped form); only bands down the diagonal
// (depthwise) take it, dense weights and other groups never;
// and whole layers (CDMA, CSC's padded plane, CMAC, CACC) programmed by registers on nv_full
// and nv_small against the rig's textbook result.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "conv_test_rig.hpp"
#include "emu/cmac_grouped.hpp"
#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"
#include "isa_levels.hpp"

namespace nvdla::emu::conv {
namespace {

// A channels-last plane (already padded) and kernels [k][r][s][c], as CSC hands them to CMAC.
struct Layer {
    Precision precision = Precision::Int8;
    uint32_t batches = 1, rows = 0, cols = 0, depth = 0, kernels = 0;
    uint32_t taps = 3, stride = 1, dilation = 1;
    uint32_t groups = 1;  // of depth / groups channels; kernel k reads group k / kernels_per_group
    uint32_t kernels_per_group = 1;
    uint32_t clip = 0;
    std::vector<int16_t> plane, weights;

    uint32_t out_height() const { return (rows - dilation * (taps - 1) - 1) / stride + 1; }
    uint32_t out_width() const { return (cols - dilation * (taps - 1) - 1) / stride + 1; }
};

Layer random_layer(std::mt19937& rng, Precision precision, uint32_t atom) {
    Layer l;
    l.precision = precision;
    auto pick = [&](uint32_t lo, uint32_t hi) {
        return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
    };
    l.batches = pick(1, 2);
    l.depth = atom == 8 ? 8 * pick(1, 4) : 32 * pick(1, 3);  // a chunk of 8 to 96 channels
    // Depthwise (half the layers), a channel multiplier of 2, or groups of 2 or 4 channels (2
    // or 4 kernels each).
    const uint32_t form = std::max(pick(0, 5), 2u) - 2;
    const uint32_t channels_per_group = form <= 1 ? 1 : 2 * (form - 1);
    l.kernels_per_group = form == 0 ? 1 : channels_per_group == 1 ? 2 : channels_per_group;
    l.groups = l.depth / channels_per_group;
    // Sometimes kernels for the first groups only.
    const uint32_t groups_with_kernels = pick(0, 3) == 0 ? (l.groups + 1) / 2 : l.groups;
    l.kernels = groups_with_kernels * l.kernels_per_group;
    l.taps = pick(0, 1) ? 3 : 5;
    l.stride = pick(1, 2);
    l.dilation = pick(0, 3) == 0 ? 2 : 1;
    l.rows = l.dilation * (l.taps - 1) + 1 + pick(0, 5);
    l.cols = l.dilation * (l.taps - 1) + 1 + pick(0, 7);
    const int32_t limit = precision == Precision::Int8 ? 127 : 32767;
    std::uniform_int_distribution<int32_t> value(-limit - 1, limit);
    l.plane.resize(uint64_t(l.batches) * l.rows * l.cols * l.depth);
    for (int16_t& v : l.plane) v = static_cast<int16_t>(value(rng));
    // The block-diagonal kernels: zeros outside each kernel's group, some zeros inside.
    l.weights.assign(uint64_t(l.kernels) * l.taps * l.taps * l.depth, 0);
    for (uint32_t k = 0; k < l.kernels; ++k) {
        const uint32_t g = k / l.kernels_per_group;
        for (uint32_t t = 0; t < l.taps * l.taps; ++t)
            for (uint32_t c = g * channels_per_group; c < (g + 1) * channels_per_group; ++c)
                if (pick(0, 7) != 0)
                    l.weights[(uint64_t(k) * l.taps * l.taps + t) * l.depth + c] =
                        static_cast<int16_t>(value(rng));
    }
    l.clip = precision == Precision::Int8 ? pick(0, 9) : pick(0, 20);
    return l;
}

// The layer as a MacProblem; the plane stored as the chosen kernel wants it (+ the read slack).
MacProblem problem_of(const Layer& l, std::vector<uint8_t>& bytes, std::vector<int16_t>& words,
                      ConvWeights* cache) {
    MacProblem m;
    m.batches = l.batches;
    m.out_height = l.out_height();
    m.out_width = l.out_width();
    m.kernels = l.kernels;
    m.plane_rows = l.rows;
    m.row_elements = uint64_t(l.cols) * l.depth;
    m.row_step = l.stride;
    m.row_dilation = l.dilation;
    m.x_step = uint64_t(l.stride) * l.depth;
    m.s_step = uint64_t(l.dilation) * l.depth;
    m.taps_r = m.taps_s = l.taps;
    m.depth = l.depth;
    m.weights = l.weights.data();
    if (cache) {
        cache->values = l.weights;
        cache->packed.reset();
        m.weights = cache->values.data();
        m.cache = cache;
    }
    if (mac_wants_biased_bytes(l.precision)) {
        bytes.assign(l.plane.size() + kMacReadSlack, 0x5a);
        for (size_t i = 0; i < l.plane.size(); ++i)
            bytes[i] = static_cast<uint8_t>(l.plane[i] + 128);
        m.bytes = bytes.data();
    } else {
        words.assign(l.plane.size() + kMacReadSlack, 0x1234);
        std::copy(l.plane.begin(), l.plane.end(), words.begin());
        m.words = words.data();
    }
    return m;
}

// The plain convolution: int64 sums, CACC's delivery (round half away by 2^clip, saturate to
// int32), channels last.
std::vector<int32_t> plain(const Layer& l, uint32_t& saturations) {
    const uint32_t oh = l.out_height(), ow = l.out_width();
    std::vector<int32_t> out(uint64_t(l.batches) * oh * ow * l.kernels);
    saturations = 0;
    for (uint32_t n = 0; n < l.batches; ++n)
        for (uint32_t y = 0; y < oh; ++y)
            for (uint32_t x = 0; x < ow; ++x)
                for (uint32_t k = 0; k < l.kernels; ++k) {
                    int64_t sum = 0;
                    for (uint32_t r = 0; r < l.taps; ++r)
                        for (uint32_t s = 0; s < l.taps; ++s)
                            for (uint32_t c = 0; c < l.depth; ++c) {
                                const uint32_t row = y * l.stride + r * l.dilation;
                                const uint32_t col = x * l.stride + s * l.dilation;
                                sum +=
                                    int64_t(l.plane[((uint64_t(n) * l.rows + row) * l.cols + col) *
                                                        l.depth +
                                                    c]) *
                                    l.weights[((uint64_t(k) * l.taps + r) * l.taps + s) * l.depth +
                                              c];
                            }
                    const int64_t half = l.clip ? int64_t(1) << (l.clip - 1) : 0;
                    const int64_t magnitude = sum < 0 ? -sum : sum;
                    int64_t rounded = (magnitude + half) >> l.clip;
                    if (sum < 0) rounded = -rounded;
                    const int64_t clamped = std::clamp<int64_t>(rounded, INT32_MIN, INT32_MAX);
                    saturations += clamped != rounded;
                    out[((uint64_t(n) * oh + y) * ow + x) * l.kernels + k] =
                        static_cast<int32_t>(clamped);
                }
    return out;
}

std::vector<int32_t> through_kernels(const Layer& l, MacKernel kernel, unsigned threads,
                                     uint32_t& saturations, bool* took_grouped = nullptr) {
    force_mac_kernel(kernel);
    std::vector<uint8_t> bytes;
    std::vector<int16_t> words;
    ConvWeights cache;
    MacProblem m = problem_of(l, bytes, words, &cache);
    m.threads = threads;
    if (took_grouped)
        *took_grouped =
            bool(grouped_mac_rows(m, l.precision, l.clip, active_mac_kernel(l.precision)));
    std::vector<int32_t> out(uint64_t(l.batches) * m.out_height * m.out_width * l.kernels, -7);
    saturations = mac_convolve_int(m, l.precision, l.clip, out.data());
    // Run again from the packing kept with the weights.
    std::vector<int32_t> again(out.size(), -9);
    uint32_t saturations_again = mac_convolve_int(m, l.precision, l.clip, again.data());
    force_mac_kernel(MacKernel::Auto);
    EXPECT_EQ(out, again);
    EXPECT_EQ(saturations, saturations_again);
    return out;
}

class GroupedKernel : public ::testing::TestWithParam<Precision> {};

TEST_P(GroupedKernel, RandomBlockDiagonalLayersMatchThePlainSumOnEveryLevel) {
    const Precision precision = GetParam();
    std::mt19937 rng(precision == Precision::Int8 ? 1301 : 1316);
    uint32_t grouped_runs = 0;
    for (int trial = 0; trial < 32; ++trial) {
        const uint32_t atom = trial % 2 ? 32 : 8;  // nv_full's int8 atom, nv_small's
        const Layer l = random_layer(rng, precision, atom);
        SCOPED_TRACE(testing::Message()
                     << "trial " << trial << ": " << l.batches << "x" << l.rows << "x" << l.cols
                     << "x" << l.depth << ", " << l.kernels << " kernels in " << l.groups
                     << " groups, " << l.taps << "x" << l.taps << " stride " << l.stride
                     << " dilation " << l.dilation << " clip " << l.clip);
        uint32_t expected_saturations = 0;
        const std::vector<int32_t> expected = plain(l, expected_saturations);
        uint32_t scalar_saturations = 0;
        EXPECT_EQ(through_kernels(l, MacKernel::Scalar, 1, scalar_saturations), expected);
        EXPECT_EQ(scalar_saturations, expected_saturations);
        for (IsaLevel level : levels_of_this_cpu()) {
            const IsaLimit limit(level);
            SCOPED_TRACE(isa_name(level));
            bool took = false;
            uint32_t saturations = 0;
            EXPECT_EQ(through_kernels(l, MacKernel::Auto, 1 + trial % 2, saturations, &took),
                      expected);
            EXPECT_EQ(saturations, expected_saturations);
            // Depthwise bands run down the diagonal; the other groups would need gathers.
            const bool diagonal = l.groups == l.depth && l.kernels_per_group == 1;
            EXPECT_EQ(took, level != IsaLevel::Scalar && diagonal);
            grouped_runs += took;
            // At the AVX-512 level with VNNI (vpdpwssd) int8 takes the VNNI form: the other
            // one too, as a CPU without VNNI runs it.
            if (level == IsaLevel::Avx512 && precision == Precision::Int8) {
                SCOPED_TRACE("without VNNI");
                EXPECT_EQ(through_kernels(l, MacKernel::Avx512, 1, saturations, &took), expected);
                EXPECT_EQ(saturations, expected_saturations);
                EXPECT_EQ(took, diagonal);
            }
        }
    }
    if (isa_level() != IsaLevel::Scalar) {
        EXPECT_GT(grouped_runs, 12u);
    }
}

INSTANTIATE_TEST_SUITE_P(Precisions, GroupedKernel,
                         ::testing::Values(Precision::Int8, Precision::Int16),
                         [](const auto& param) {
                             return param.param == Precision::Int8 ? std::string("Int8")
                                                                   : std::string("Int16");
                         });

// Depthwise chunks of 32 channels (MobileNetV2's on nv_full), which the VNNI level with VBMI
// computes a row of 3 or 4 taps per vpdpbusd: 3x3 and 4x4, strides 1 to 3, fewer kernels than
// channels, dilation now and then (not that form), weights and data at their extremes (every
// product -128 x 127 or 127 x 127 in some layers), against the plain sum on every level, and at
// the AVX-512 level without VBMI too.
TEST(GroupedKernel, DepthwiseChunksOf32ChannelsMatchThePlainSum) {
    std::mt19937 rng(3232);
    const auto pick = [&](uint32_t lo, uint32_t hi) {
        return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
    };
    for (int trial = 0; trial < 24; ++trial) {
        Layer l;
        l.depth = 32;
        const uint32_t kernel_counts[] = {32, 32, 31, 17, 16, 9};
        l.kernels = kernel_counts[pick(0, 5)];
        l.groups = l.depth;
        l.taps = pick(0, 3) == 0 ? 4 : 3;
        l.stride = pick(1, 3);
        l.dilation = pick(0, 5) == 0 ? 2 : 1;
        l.rows = l.dilation * (l.taps - 1) + 1 + pick(0, 6);
        l.cols = l.dilation * (l.taps - 1) + 1 + pick(0, 9);
        l.clip = pick(0, 9);
        // Extremes: every data element -128 (biased 0) or 127, every weight -128 or 127.
        const uint32_t extreme = pick(0, 3);
        std::uniform_int_distribution<int32_t> value(-128, 127);
        const auto data = [&] {
            return static_cast<int16_t>(extreme == 1 ? -128 : extreme == 2 ? 127 : value(rng));
        };
        const auto weight = [&] {
            return static_cast<int16_t>(extreme == 1 ? 127 : extreme == 2 ? -128 : value(rng));
        };
        l.plane.resize(uint64_t(l.rows) * l.cols * l.depth);
        for (int16_t& v : l.plane) v = data();
        const uint32_t taps = l.taps * l.taps;
        l.weights.assign(uint64_t(l.kernels) * taps * l.depth, 0);
        for (uint32_t k = 0; k < l.kernels; ++k)
            for (uint32_t t = 0; t < taps; ++t)
                if (extreme || pick(0, 7) != 0)
                    l.weights[(uint64_t(k) * taps + t) * l.depth + k] = weight();
        SCOPED_TRACE(testing::Message()
                     << "trial " << trial << ": " << l.rows << "x" << l.cols << ", " << l.kernels
                     << " kernels, " << l.taps << "x" << l.taps << " stride " << l.stride
                     << " dilation " << l.dilation << " clip " << l.clip);
        uint32_t expected_saturations = 0;
        const std::vector<int32_t> expected = plain(l, expected_saturations);
        const auto check = [&](const char* what) {
            SCOPED_TRACE(what);
            bool took = false;
            uint32_t saturations = 0;
            EXPECT_EQ(through_kernels(l, MacKernel::Auto, 1 + trial % 2, saturations, &took),
                      expected);
            EXPECT_EQ(saturations, expected_saturations);
            EXPECT_EQ(took, isa_level() != IsaLevel::Scalar);
        };
        for (IsaLevel level : levels_of_this_cpu()) {
            const IsaLimit limit(level);
            check(isa_name(level));
            if (level == IsaLevel::Avx512) {
                const VbmiOff off;
                check("avx512 without VBMI");
            }
        }
    }
}

// An int16 depthwise layer whose every sum is beyond int32 (CACC's delivery saturates each
// output), 7 outputs wide: one call of 4 positions and 3 left over, which the int8 forms take
// as an overlapping call of 4 and the int16 forms must not (they would count 1 output twice).
// Every level counts each output once, as the plain sum does.
TEST(GroupedKernel, SaturatedInt16OutputsAreCountedOnceEach) {
    Layer l;
    l.precision = Precision::Int16;
    l.depth = l.kernels = l.groups = 32;
    l.rows = 4;
    l.cols = 9;  // 7 outputs per row
    l.plane.assign(uint64_t(l.rows) * l.cols * l.depth, 32767);
    const uint32_t taps = l.taps * l.taps;
    l.weights.assign(uint64_t(l.kernels) * taps * l.depth, 0);
    for (uint32_t k = 0; k < l.kernels; ++k)  // 9 products of about +-2^30 per output
        for (uint32_t t = 0; t < taps; ++t)
            l.weights[(uint64_t(k) * taps + t) * l.depth + k] = k % 2 ? 32767 : -32768;
    uint32_t expected_saturations = 0;
    const std::vector<int32_t> expected = plain(l, expected_saturations);
    ASSERT_EQ(expected_saturations, expected.size());
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        SCOPED_TRACE(isa_name(level));
        bool took = false;
        uint32_t saturations = 0;
        EXPECT_EQ(through_kernels(l, MacKernel::Auto, 1, saturations, &took), expected);
        EXPECT_EQ(saturations, expected_saturations);
        EXPECT_EQ(took, level != IsaLevel::Scalar);
    }
}

TEST(GroupedKernel, DenseAndWideBandWeightsNeverTakeIt) {
    std::mt19937 rng(77);
    std::uniform_int_distribution<int32_t> value(-128, 127);
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        for (uint32_t depth : {8u, 32u, 64u}) {
            Layer l;
            l.depth = depth;
            l.kernels = depth;
            l.rows = l.cols = 6;
            l.plane.resize(uint64_t(l.rows) * l.cols * depth);
            for (int16_t& v : l.plane) v = static_cast<int16_t>(value(rng));
            l.weights.resize(uint64_t(l.kernels) * 9 * depth);
            for (int16_t& v : l.weights) v = static_cast<int16_t>(value(rng));
            // Dense, and dense but for its last channel.
            for (int variant = 0; variant < 3; ++variant) {
                if (variant == 1)
                    for (uint64_t i = depth - 1; i < l.weights.size(); i += depth) l.weights[i] = 0;
                if (variant == 2) {
                    // Two groups: a band of half the channels, above a quarter.
                    for (uint32_t k = 0; k < l.kernels; ++k)
                        for (uint32_t t = 0; t < 9; ++t)
                            for (uint32_t c = 0; c < depth; ++c)
                                if ((c < depth / 2) != (k < l.kernels / 2))
                                    l.weights[(uint64_t(k) * 9 + t) * depth + c] = 0;
                }
                EXPECT_FALSE(banded_weights(l.weights.data(), l.kernels, 9, depth));
                bool took = true;
                uint32_t saturations = 0, expected_saturations = 0;
                EXPECT_EQ(through_kernels(l, MacKernel::Auto, 1, saturations, &took),
                          plain(l, expected_saturations));
                EXPECT_FALSE(took)
                    << isa_name(level) << " depth " << depth << " variant " << variant;
            }
        }
    }
}

TEST(GroupedKernel, WiderDiagonalBandsAndAllZeroKernelsAreExact) {
    // Kernel k reads channels k + 1 .. k + 3 (a band of 3 off the diagonal by 1), every third
    // kernel all zero; then one weight per kernel at scattered channels (a selection), which
    // would need a gather and keeps the dense kernels.
    std::mt19937 rng(5);
    Layer l;
    l.depth = 40;
    l.kernels = 24;
    l.rows = 7;
    l.cols = 9;
    l.clip = 2;
    l.plane.resize(uint64_t(l.rows) * l.cols * l.depth);
    std::uniform_int_distribution<int32_t> value(-128, 127);
    for (int16_t& v : l.plane) v = static_cast<int16_t>(value(rng));
    for (int selection = 0; selection < 2; ++selection) {
        l.weights.assign(uint64_t(l.kernels) * 9 * l.depth, 0);
        for (uint32_t k = 0; k < l.kernels; ++k)
            for (uint32_t t = 0; t < 9; ++t) {
                if (selection) {
                    if (t == 4)
                        l.weights[(uint64_t(k) * 9 + t) * l.depth + (k * 7) % l.depth] =
                            static_cast<int16_t>(value(rng) | 1);
                    continue;
                }
                if (k % 3 == 2) continue;
                for (uint32_t c = k + 1; c <= k + 3; ++c)
                    l.weights[(uint64_t(k) * 9 + t) * l.depth + c] =
                        static_cast<int16_t>(value(rng));
            }
        EXPECT_EQ(banded_weights(l.weights.data(), l.kernels, 9, l.depth), !selection);
        uint32_t expected_saturations = 0;
        const std::vector<int32_t> expected = plain(l, expected_saturations);
        for (IsaLevel level : levels_of_this_cpu()) {
            const IsaLimit limit(level);
            bool took = false;
            uint32_t saturations = 0;
            EXPECT_EQ(through_kernels(l, MacKernel::Auto, 1, saturations, &took), expected)
                << isa_name(level);
            EXPECT_EQ(took, level != IsaLevel::Scalar && !selection) << isa_name(level);
        }
    }
}

TEST(GroupedKernel, PaddedDepthwiseAndGroupedLayersThroughThePipelineOnEveryLevel) {
    auto rng = test::rng_for_test();
    struct Form {
        const char* config;
        Precision precision;
        uint32_t channels, channels_per_group, kernels_per_group;
    };
    const Form forms[] = {
        {"nv_full", Precision::Int8, 32, 1, 1},  {"nv_full", Precision::Int8, 64, 2, 2},
        {"nv_full", Precision::Int16, 16, 1, 1}, {"nv_full", Precision::Int16, 48, 4, 4},
        {"nv_small", Precision::Int8, 8, 1, 1},  {"nv_small", Precision::Int8, 16, 1, 2}};
    for (const Form& f : forms)
        for (IsaLevel level : levels_of_this_cpu()) {
            const IsaLimit limit(level);
            conv_test::ConvSpec spec;
            spec.precision = f.precision;
            spec.batches = 1;
            spec.width = 11;
            spec.height = 9;
            spec.channels = f.channels;
            spec.kernels = f.channels / f.channels_per_group * f.kernels_per_group;
            spec.pad_left = spec.pad_top = 1;
            spec.pad_right = spec.pad_bottom = 2;
            spec.pad_value = f.precision == Precision::Int8 ? 0xfd : 0x8123;  // not 0
            spec.stride_x = 2;
            spec.clip = 3;
            conv_test::IntCase c{spec, {}, {}};
            c.fill_random(rng);
            for (uint32_t k = 0; k < spec.kernels; ++k)
                for (uint32_t ch = 0; ch < spec.channels; ++ch)
                    if (ch / f.channels_per_group != k / f.kernels_per_group)
                        for (uint32_t t = 0; t < 9; ++t)
                            c.weights[(uint64_t(k) * spec.channels + ch) * 9 + t] = 0;
            conv_test::Rig rig(f.config);
            EXPECT_EQ(conv_test::check_int_case(rig, c), 0u)
                << f.config << " " << spec.channels << " channels, " << isa_name(level);
        }
}

}  // namespace
}  // namespace nvdla::emu::conv
