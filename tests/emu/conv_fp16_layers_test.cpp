// The fp16 convolution's fast form (operands decoded once, positions in blocks over threads,
// the vector cell) against its plain form kept as the reference (convolve_fp16_reference: one
// MAC operation at a time through the scalar cell and CACC), bit for bit, on random layers of
// every shape CSC walks (feature data with padding, strides, dilation and channel counts that
// leave partial operations; image data with post-extension) and operands of every class
// (zeros of both signs, denormals, infinities, NaNs, exponents far apart), on every
// instruction-set level this CPU runs and for several thread counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <random>
#include <vector>

#include "conv_fp16_rig.hpp"
#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"
#include "isa_levels.hpp"

namespace nvdla::emu::conv {
namespace {

// An fp16 bit pattern: mostly normal numbers over a span of exponents that makes the cell
// truncate, now and then a zero, a denormal, an infinity or (when `nans`) a NaN.
uint16_t random_fp16(std::mt19937_64& rng, bool nans) {
    const uint64_t r = rng();
    const uint16_t sign = static_cast<uint16_t>((r & 1) << 15);
    const uint16_t fraction = static_cast<uint16_t>((r >> 1) & 0x3ff);
    switch ((r >> 16) % 64) {
        case 0: return sign;                                      // +-0
        case 1: return sign | fraction;                           // denormal (or 0)
        case 2: return sign | 0x7c00;                             // infinity
        case 3: return nans ? sign | 0x7e00 : sign;               // NaN
        case 4: return sign | ((r >> 24) % 31) << 10 | fraction;  // any exponent
        default: return static_cast<uint16_t>(sign | (((r >> 24) % 12 + 8) << 10) | fraction);
    }
}

using Layer = Fp16Layer;

Layer random_feature_layer(std::mt19937_64& rng, bool nans) {
    Layer t;
    ConvLayer& l = t.l;
    l.kind = InputKind::Feature;
    l.precision = l.in_precision = Precision::Fp16;
    l.atomic_c = std::array<uint32_t, 3>{8, 32, 64}[rng() % 3];
    l.batches = 1 + rng() % 2;
    const uint32_t width = 3 + rng() % 8, height = 3 + rng() % 6;
    // Often few channels: operations of 1, 2, 3 lanes share a vector.
    const uint32_t channels = 1 + rng() % (rng() % 3 ? 140 : 4);
    l.kernel_width = 1 + rng() % 3;
    l.kernel_height = 1 + rng() % 3;
    l.kernel_channels = channels;
    l.kernels = l.out_channels = 1 + rng() % 20;
    random_strides_and_padding(rng, l, width, height);
    l.pad_value = random_fp16(rng, false);
    ConvData& d = t.d;
    shape_fp16_feature_data(d, l, width, height, channels);
    const bool relu = rng() % 2;
    for (int16_t& v : d.values)
        v = relu ? without_negatives(random_fp16(rng, nans))
                 : static_cast<int16_t>(random_fp16(rng, nans));
    // A network's padding: operations of zeros.
    if (relu) l.pad_value = rng() % 2 ? 0 : 0x8000;
    ConvWeights& w = t.w;
    w.precision = Precision::Fp16;
    w.kernels = l.kernels;
    w.height = l.kernel_height;
    w.width = l.kernel_width;
    w.channels = channels;
    w.values.resize(size_t(w.kernels) * w.height * w.width * w.channels);
    for (int16_t& v : w.values) v = static_cast<int16_t>(random_fp16(rng, nans));
    return t;
}

// Image data: lines of `components` elements per pixel, kernels pre-extended to one column of
// S x components channels, post-extension taking 1, 2 or 4 kernel rows per operation.
Layer random_image_layer(std::mt19937_64& rng, bool nans) {
    Layer t;
    ConvLayer& l = t.l;
    l.kind = InputKind::Image;
    l.precision = l.in_precision = Precision::Fp16;
    l.atomic_c = 64;
    const uint32_t components = std::array<uint32_t, 3>{1, 3, 4}[rng() % 3];
    const uint32_t width = 6 + rng() % 10, height = 4 + rng() % 6;
    l.post_extension = std::array<uint32_t, 3>{1, 2, 4}[rng() % 3];
    const uint32_t taps = 1 + rng() % (l.post_extension == 4 ? 3 : 5);
    l.kernel_width = 1;
    l.kernel_height = 1 + rng() % std::min(5u, height);  // at least one output row
    l.kernel_channels = taps * components;
    l.csc_channels = components;
    l.kernels = l.out_channels = 1 + rng() % 12;
    l.stride_x = 1 + rng() % 2;
    l.stride_y = 1 + rng() % 2;
    l.pad_top = rng() % 2;
    l.pad_value = random_fp16(rng, false);
    l.out_width = (width - taps) / l.stride_x + 1;
    l.out_height = (height + l.pad_top - l.kernel_height) / l.stride_y + 1;
    ConvData& d = t.d;
    d.kind = InputKind::Image;
    d.precision = Precision::Fp16;
    d.height = height;
    d.width = width;
    d.channels = components;
    d.row_elements = uint64_t(width) * components;
    d.values.resize(height * d.row_elements);
    const bool relu = rng() % 2;
    for (int16_t& v : d.values)
        v = relu ? without_negatives(random_fp16(rng, nans))
                 : static_cast<int16_t>(random_fp16(rng, nans));
    // A network's padding: operations of zeros.
    if (relu) l.pad_value = rng() % 2 ? 0 : 0x8000;
    ConvWeights& w = t.w;
    w.precision = Precision::Fp16;
    w.kernels = l.kernels;
    w.height = l.kernel_height;
    w.width = 1;
    w.channels = l.kernel_channels;
    w.values.resize(size_t(w.kernels) * w.height * w.channels);
    for (int16_t& v : w.values) v = static_cast<int16_t>(random_fp16(rng, nans));
    return t;
}

void expect_fast_equals_reference(const Layer& t, const std::string& what) {
    std::vector<int32_t> reference;
    convolve_fp16_reference(t.l, t.d, t.w, reference);
    ASSERT_FALSE(reference.empty());
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        for (unsigned threads : {1u, 2u, 3u}) {
            ConvLayer l = t.l;
            l.threads = threads;
            std::vector<int32_t> fast;
            convolve_fp16(l, t.d, t.w, fast);
            ASSERT_EQ(fast, reference)
                << what << ", " << isa_name(level) << ", " << threads << " threads";
        }
    }
}

TEST(ConvFp16Layers, FeatureLayersEqualTheReference) {
    std::mt19937_64 rng(1613);
    for (int i = 0; i < 24; ++i) {
        const Layer t = random_feature_layer(rng, i % 4 == 3);
        expect_fast_equals_reference(t, "feature layer " + std::to_string(i));
    }
}

TEST(ConvFp16Layers, ImageLayersEqualTheReference) {
    std::mt19937_64 rng(4242);
    for (int i = 0; i < 16; ++i) {
        const Layer t = random_image_layer(rng, i % 4 == 3);
        expect_fast_equals_reference(t, "image layer " + std::to_string(i));
    }
}

TEST(ConvFp16Layers, LayerLargeEnoughForThreadsEqualsTheReference) {
    // Big enough that the position blocks are split among threads.
    std::mt19937_64 rng(77);
    Layer t = random_feature_layer(rng, false);
    while (uint64_t(t.l.out_width) * t.l.out_height * t.l.kernels * t.l.kernel_channels < 20000)
        t = random_feature_layer(rng, false);
    expect_fast_equals_reference(t, "large layer");
}

// convolve_fp16 keeps a layer's decoded kernels with its weights (ConvWeights::packed) for the
// next run; one ConvWeights run again under layers that walk its values otherwise (other MAC
// atomic C, so other operations; the same values as more kernels of fewer channels) gives the
// reference's result each time on every level.
TEST(ConvFp16Layers, KeptKernelsFollowTheLayersShape) {
    std::mt19937_64 rng(2911);
    for (int i = 0; i < 6; ++i) {
        Layer t = random_feature_layer(rng, false);
        for (uint32_t atomic_c : {64u, 8u, 32u, 64u}) {
            t.l.atomic_c = atomic_c;
            expect_fast_equals_reference(t, "atomic_c " + std::to_string(atomic_c));
        }
        // The same values as twice the kernels of half the channels, input halved alike.
        if (t.l.kernel_channels % 2 || t.l.batches > 1) continue;
        t.l.kernel_channels /= 2;
        t.l.kernels = t.l.out_channels = t.l.kernels * 2;
        t.w.channels /= 2;
        t.w.kernels *= 2;
        t.d.channels /= 2;
        t.d.width *= 2;
        random_strides_and_padding(rng, t.l, t.d.width, t.d.height);
        expect_fast_equals_reference(t, "kernels of half the channels");
    }
}

// cmac_fp16_accumulate of `positions` outputs, each `operations` operations of `width` lanes
// (data position-major, weights per operation; stored as convolve_fp16 stores them, up to a
// multiple of 16 / width with operations of zeros), against the scalar cell and CACC's chain:
// the number of outputs that differ.
uint64_t accumulations_unlike_scalar(const std::vector<int16_t>& data,
                                     const std::vector<int16_t>& weights, unsigned positions,
                                     uint32_t operations, unsigned width) {
    const uint32_t group = std::max(1u, 16 / width);
    const uint32_t stored = (operations + group - 1) / group * group;
    Fp16Operands d, w;
    d.resize(size_t(positions) * stored, width);
    w.resize(stored, width);
    for (size_t p = 0; p < positions; ++p)
        for (uint32_t op = 0; op < stored; ++op)
            d.set(p * stored + op,
                  op < operations ? data.data() + (p * operations + op) * width : nullptr,
                  op < operations ? width : 0);
    for (uint32_t op = 0; op < stored; ++op)
        w.set(op, op < operations ? weights.data() + op * width : nullptr,
              op < operations ? width : 0);
    std::vector<uint64_t> out(positions);
    cmac_fp16_accumulate(d, 0, stored, positions, w, 0, operations, out.data());
    uint64_t differ = 0;
    for (unsigned p = 0; p < positions; ++p) {
        uint64_t acc = 0;
        for (uint32_t op = 0; op < operations; ++op)
            acc = cacc_fp48_add(
                acc, cmac_fp16_dot_scalar(
                         reinterpret_cast<const uint16_t*>(data.data()) +
                             (size_t(p) * operations + op) * width,
                         reinterpret_cast<const uint16_t*>(weights.data()) + op * width, width));
        differ += out[p] != acc;
    }
    return differ;
}

// cmac_fp16_accumulate against the scalar cell and CACC, operation by operation: operands
// whose exponents span a few steps of 4 (truncations of 0 .. 16, which AVX2 computes in 16-bit
// lanes) or many (20 .. 28 too, which it takes through the 32-bit array, and 32 and more),
// ReLU-like zeros, data with and without negative lanes, every operation width, operations
// filling the last vector of narrow ones or not, and 1 .. 72 positions (pairs of positions and
// a position left over, blocks of 64 positions partly filled, full, and followed by another).
TEST(ConvFp16Layers, AccumulationOnEveryTruncationEqualsTheScalarCell) {
    std::mt19937_64 rng(16);
    const auto operand = [&](uint32_t spread) {
        const uint64_t r = rng();
        if (r % 10 < 3) return uint16_t(0);
        const uint32_t exponent = 14 - spread / 2 + uint32_t(r >> 8) % (spread + 1);
        return static_cast<uint16_t>((r & 1) << 15 | exponent << 10 | (r >> 20 & 0x3ff));
    };
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        uint64_t differ = 0, compared = 0;
        for (int round = 0; round < 200; ++round) {
            const unsigned width = 1u << (rng() % 7);
            const uint32_t spread = std::array<uint32_t, 4>{3, 7, 14, 28}[rng() % 4];
            const unsigned positions = 1 + rng() % 72;
            // Whole vectors of narrow operations and a partial last one.
            const uint32_t operations = 1 + uint32_t(rng() % (4 * std::max(1u, 16 / width)));
            std::vector<int16_t> data(size_t(positions) * operations * width),
                weights(size_t(operations) * width);
            const bool relu = rng() % 2;
            for (auto& v : data)
                v = relu ? without_negatives(operand(spread))
                         : static_cast<int16_t>(operand(spread));
            for (auto& v : weights) v = static_cast<int16_t>(operand(spread));
            differ += accumulations_unlike_scalar(data, weights, positions, operations, width);
            compared += positions;
        }
        EXPECT_EQ(differ, 0u) << isa_name(level) << ": of " << compared << " outputs";
    }
}

// cmac_fp16_accumulate against the scalar cell and CACC where a block's positions mix results
// the vector cell sums (AVX2 gathers four positions' lane sums at once) with results it leaves
// to another path: a NaN lane, all-zero data (padding), a medium truncation (one lane 20 .. 28
// exponent steps above the rest), and fewer positions than the block holds.
TEST(ConvFp16Layers, PositionsMixingVectorAndOtherResultsEqualTheScalarCell) {
    std::mt19937_64 rng(2611);
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        uint64_t differ = 0, compared = 0;
        for (int round = 0; round < 150; ++round) {
            const unsigned width = std::array<unsigned, 3>{16, 32, 64}[rng() % 3];
            const unsigned positions = 1 + rng() % 17;
            const uint32_t operations = 1 + uint32_t(rng() % 4);
            const bool relu = rng() % 2;
            // Data exponents 4 .. 11, weights 12 .. 15: exponent groups 1-2 and 3.
            const auto value = [&](uint32_t low, uint32_t span) {
                const uint64_t r = rng();
                const uint16_t sign = relu ? 0 : static_cast<uint16_t>((r & 1) << 15);
                return static_cast<int16_t>(sign | (low + uint32_t(r >> 8) % span) << 10 |
                                            (r >> 20 & 0x3ff));
            };
            std::vector<int16_t> data(size_t(positions) * operations * width),
                weights(size_t(operations) * width);
            for (auto& v : weights) v = value(12, 4);
            for (size_t op = 0; op < size_t(positions) * operations; ++op) {
                int16_t* lanes = data.data() + op * width;
                for (unsigned i = 0; i < width; ++i) lanes[i] = value(4, 8);
                const unsigned lane = unsigned(rng() % width);
                switch (rng() % 6) {
                    case 0: lanes[lane] = static_cast<int16_t>(0x7e00 | (rng() & 0x1ff)); break;
                    case 1:
                        for (unsigned i = 0; i < width; ++i)
                            lanes[i] = static_cast<int16_t>(relu ? 0 : (rng() & 1) << 15);
                        break;
                    case 2: lanes[lane] = value(28, 3); break;  // group 7: 20 .. 28 above
                    default: break;
                }
            }
            differ += accumulations_unlike_scalar(data, weights, positions, operations, width);
            compared += positions;
        }
        EXPECT_EQ(differ, 0u) << isa_name(level) << ": of " << compared << " outputs";
    }
}

// cmac_fp16_accumulate against the scalar cell and CACC where weight operations hold groups of
// 16 lanes that are all +-0 (the padding of a last, partial operation; or anywhere, every group
// at once included), which the vector cell skips: the data in those lanes is of every class
// (huge exponents that would set the common exponent if a zero weight counted, infinities,
// denormals, negative lanes), the other groups' weights ordinary.
TEST(ConvFp16Layers, ZeroWeightGroupsEqualTheScalarCell) {
    std::mt19937_64 rng(1613);
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        uint64_t differ = 0, compared = 0, skipped_groups = 0;
        for (int round = 0; round < 200; ++round) {
            const unsigned width = std::array<unsigned, 2>{32, 64}[rng() % 2];
            const unsigned positions = 1 + rng() % 17;
            const uint32_t operations = 1 + uint32_t(rng() % 4);
            const bool relu = rng() % 2;
            std::vector<int16_t> data(size_t(positions) * operations * width),
                weights(size_t(operations) * width);
            for (auto& v : data) {
                const uint16_t x = random_fp16(rng, rng() % 8 == 0);
                v = relu ? without_negatives(x) : static_cast<int16_t>(x);
            }
            for (uint32_t op = 0; op < operations; ++op) {
                // Bit g: group g of 16 lanes all +-0; often the last groups (padding).
                const uint32_t groups = width / 16;
                uint32_t zero = uint32_t(rng()) & ((1u << groups) - 1);
                if (rng() % 2) zero = ((1u << groups) - 1) & ~((1u << (1 + rng() % groups)) - 1);
                for (unsigned i = 0; i < width; ++i) {
                    int16_t& v = weights[size_t(op) * width + i];
                    v = zero >> (i / 16) & 1 ? static_cast<int16_t>((rng() & 1) << 15)
                                             : static_cast<int16_t>(0x3000 | (rng() & 0x83ff));
                }
                skipped_groups += std::popcount(zero);
            }
            differ += accumulations_unlike_scalar(data, weights, positions, operations, width);
            compared += positions;
        }
        EXPECT_GT(skipped_groups, 100u);
        EXPECT_EQ(differ, 0u) << isa_name(level) << ": of " << compared << " outputs";
    }
}

// CACC's fp48 addition in the vector form the fast path uses against cacc_fp48_add: random
// accumulators and CMAC results of every exponent and length, zeros, NaNs, and exact ties: an
// accumulator whose aligned-away bits are exactly one half (the rounding that differs between
// positive and negative sums).
TEST(ConvFp16Layers, VectorFp48AdditionEqualsTheScalarForm) {
    constexpr uint64_t kMask40 = (uint64_t(1) << 40) - 1, kMask38 = (uint64_t(1) << 38) - 1;
    std::mt19937_64 rng(48);
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        uint64_t differ = 0;
        for (int i = 0; i < 60000; ++i) {
            uint64_t acc[8], mac[8], out[8];
            for (int j = 0; j < 8; ++j) {
                const uint64_t r = rng();
                uint64_t a = ((r & 0xff) << 40) | (rng() & kMask40) >> (r >> 8) % 41;
                uint64_t m = (((r >> 16) & 0x3f) << 38) | (rng() & kMask38) >> (r >> 24) % 39;
                if ((r >> 32) % 17 == 0) a = 0;
                if ((r >> 36) % 13 == 0) a &= ~kMask40;
                if ((r >> 40) % 29 == 0) m &= ~kMask38;
                if ((r >> 48) % 7 == 0) m |= kMask38 & ~((uint64_t(1) << (r >> 52) % 38) - 1);
                if ((r >> 44) % 3 == 0) {
                    // A normalised CMAC result k exponents above the accumulator, whose k low
                    // bits are 100..0.
                    const uint64_t mac_exp = 1 + (r >> 56) % 60, k = 1 + (r >> 50) % 39;
                    const uint64_t lead = (r >> 60) & 1 ? uint64_t(1) << 36 : uint64_t(1) << 37;
                    m = (mac_exp << 38) | lead | (rng() & ((uint64_t(1) << 36) - 1));
                    const uint64_t mantissa = ((rng() & kMask40) >> k << k) | uint64_t(1)
                                                                                  << (k - 1);
                    a = ((mac_exp + 49 - k) & 0xff) << 40 | mantissa;
                }
                acc[j] = a;
                mac[j] = m;
            }
            cacc_fp48_add_lanes(acc, mac, out);
            for (int j = 0; j < 8; ++j) differ += out[j] != cacc_fp48_add(acc[j], mac[j]);
        }
        EXPECT_EQ(differ, 0u) << isa_name(level);
    }
}

}  // namespace
}  // namespace nvdla::emu::conv
