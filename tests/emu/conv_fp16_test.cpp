// The fp16 convolution pipeline: CMAC's non-IEEE multiply-add (alignment to the largest
// exponent in steps of 4, Booth products truncated by the alignment), CACC's fp48 accumulator
// and fp32 delivery. Hand-worked cases bit for bit, special values, and random layers within
// the CC error threshold of precision/compare.hpp against a double-precision reference.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "conv_test_rig.hpp"
#include "emu/conv_layer.hpp"
#include "isa_levels.hpp"
#include "nvdla/precision/compare.hpp"
#include "nvdla/precision/fp16.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::emu::conv_test {
namespace {

// A 1x1 convolution of one pixel: sum over channels of data[c] * weight[c], as fp32 bits.
uint32_t dot(const std::vector<uint16_t>& data, const std::vector<uint16_t>& weights,
             DeviceStats* stats_out = nullptr) {
    Rig rig("nv_full");
    IntCase c;
    c.spec.precision = Precision::Fp16;
    c.spec.width = c.spec.height = 1, c.spec.kernel_w = c.spec.kernel_h = 1, c.spec.kernels = 1;
    c.spec.channels = static_cast<uint32_t>(data.size());
    c.input.assign(data.begin(), data.end());
    c.weights.assign(weights.begin(), weights.end());
    c.load(rig);
    const AccumulatorCube out = rig.execute();
    if (stats_out) *stats_out = rig.stats();
    EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    return out.values.size() == 1 ? static_cast<uint32_t>(out.values[0]) : 0xdeadbeefu;
}

TEST(ConvFp16, HandWorkedProducts) {
    // 1.0 x 1.0: exponent fields 15 -> blocks 3 + 3, mantissas 0x400 << 3; product 2^26 at
    // exponent 24, i.e. 2^26 * 2^(24 - 50) = 1.
    EXPECT_EQ(dot({0x3c00}, {0x3c00}), 0x3f800000u);
    EXPECT_EQ(dot({0x3e00}, {0xc000}), 0xc0400000u);  // 1.5 x -2 = -3
    EXPECT_EQ(dot({0x0001}, {0x3c00}), 0x33800000u);  // the smallest denormal, 2^-24, exact
    EXPECT_EQ(dot({0x7bff}, {0x7bff}), 0x4f7fc004u);  // 65504^2 = 4290774016
    // Infinity is read as exponent 31 with mantissa 1.0: 2^16.
    EXPECT_EQ(dot({0x7c00}, {0x3c00}), 0x47800000u);
    EXPECT_EQ(dot({0x3c00, 0x4000}, {0x4200, 0xc400}), 0xc0a00000u);  // 3 - 8 = -5
}

TEST(ConvFp16, ZerosAndNegativeZerosAreMaskedOff) {
    // -0 x infinity would be 0 x 2^16 = 0 anyway, but a masked lane also leaves the exponent
    // alignment: 1 + (-0 x 65504) keeps full precision.
    EXPECT_EQ(dot({0x3c00, 0x8000}, {0x3c01, 0x7c00}), 0x3f802000u);  // 1 + 2^-10
    EXPECT_EQ(dot({0x0000}, {0x3c00}), 0x00000000u);
}

TEST(ConvFp16, FarProductsAreTruncatedByTheAlignment) {
    // 1 x 1 sets exponent 24; 2^-14 x (1 + 2^-10) = 4100 units of 2^-26 is exact after the
    // 12-bit alignment shift. 1 + 4100 * 2^-26 has a guard bit below fp32's mantissa and
    // CACC's fp48 -> fp32 rounds the half up: 1 + 513 * 2^-23.
    EXPECT_EQ(dot({0x3c00, 0x0401}, {0x3c00, 0x3c00}), 0x3f800201u);
    // Two products the C model's Booth array truncates away from floor(); the values come from
    // running cmod/cmac/NV_NVDLA_cmac.h calculation_fp16 on these operands (docs/emu/
    // convolution.md): -1393.93 units becomes -1395, -34.17 becomes -34.
    EXPECT_EQ(dot({0x3c00, 0x99cb}, {0x3c00, 0x1f85}), 0x3f7ffea3u);
    EXPECT_EQ(dot({0x3c00, 0x8ad7}, {0x3c00, 0x18ff}), 0x3f7ffff8u);
}

TEST(ConvFp16, BoothProductOfAlignedMantissas) {
    // cal_fp16_booth without a shift is the exact signed product; shifts truncate.
    EXPECT_EQ(conv::cmac_fp16_booth(false, 0x2000, 0x2000, 0), 0x4000000);
    EXPECT_EQ(conv::cmac_fp16_booth(true, 0x2000, 0x2000, 0), -0x4000000);
    EXPECT_EQ(conv::cmac_fp16_booth(false, 0x7ff, 0x3fff, 0), 0x7ff * 0x3fff);
    EXPECT_EQ(conv::cmac_fp16_booth(true, 0x7ff, 0x3fff, 0), -0x7ff * 0x3fff);
    EXPECT_EQ(conv::cmac_fp16_booth(false, 0x2000, 0x2000, 32), 0);
    // Each of the two carry-save vectors is shifted on its own, so truncating even an exact
    // 2^26 by 16 loses a carry: 1023, not 1024 (the C model gives the same for 2^-8 x 2^-8
    // next to a 1 x 1 product).
    EXPECT_EQ(conv::cmac_fp16_booth(false, 0x2000, 0x2000, 16), 1023);
    EXPECT_EQ(dot({0x3c00, 0x1c00}, {0x3c00, 0x1c00}), 0x3f800080u);  // 1 + 1023 * 2^-26, rounded
}

// The Booth array on random mantissas as CMAC forms them (11 bits shifted by 0..3): the
// exact signed product without a shift; with one, the product scaled down, off by at most one
// carry lost or gained in each of the two truncated carry-save vectors.
TEST(ConvFp16, BoothArrayIsTheProductOnRandomOperands) {
    std::mt19937_64 rng = nvdla::test::rng_for_test();
    std::uniform_int_distribution<uint32_t> mantissa(0, 0x7ff), align(0, 3);
    for (int i = 0; i < 100000; ++i) {
        const uint32_t w = mantissa(rng) << align(rng), d = mantissa(rng) << align(rng);
        const bool negative = (i & 1) != 0;
        const int64_t product = (negative ? -1 : 1) * int64_t(w) * d;
        ASSERT_EQ(conv::cmac_fp16_booth(negative, w, d, 0), product) << w << " x " << d;
        const uint32_t shift = 4 * (1 + static_cast<uint32_t>(i) % 7);
        const double scaled = static_cast<double>(product) / double(int64_t(1) << shift);
        EXPECT_LT(std::fabs(conv::cmac_fp16_booth(negative, w, d, shift) - scaled), 2.0)
            << w << " x " << d << " >> " << shift;
    }
}

TEST(ConvFp16, NanPropagatesFirstWeightThenData) {
    // The NaN's sign and fraction land in fp32's sign and low ten bits.
    EXPECT_EQ(dot({0x3c00, 0x7c01}, {0x3c00, 0x3c00}), 0x7f800001u);
    EXPECT_EQ(dot({0x7c02, 0x3c00}, {0x3c00, 0xfe05}), 0xff800205u);  // the weight NaN wins
    EXPECT_EQ(dot({0x0000}, {0x7e00}), 0x7f800200u);  // a NaN weight beats a zero datum
}

TEST(ConvFp16, NanFlushAndCounters) {
    Rig rig("nv_full");
    IntCase c;
    c.spec.precision = Precision::Fp16;
    c.spec.width = 4, c.spec.height = 1, c.spec.channels = 1, c.spec.kernels = 1;
    c.spec.kernel_w = c.spec.kernel_h = 1;
    c.input = {0x7e00, 0x3c00, 0xfc00, 0x7c10};  // NaN, 1, -inf, NaN
    c.weights = {0x4000};
    c.load(rig);
    rig.set("CDMA", "D_NAN_FLUSH_TO_ZERO", 1);
    const AccumulatorCube out = rig.execute();
    ASSERT_EQ(out.values.size(), 4u);
    EXPECT_EQ(static_cast<uint32_t>(out.values[0]), 0u);           // flushed to +0
    EXPECT_EQ(static_cast<uint32_t>(out.values[1]), 0x40000000u);  // 2
    EXPECT_EQ(static_cast<uint32_t>(out.values[2]), 0xc8000000u);  // -2^16 x 2
    EXPECT_EQ(static_cast<uint32_t>(out.values[3]), 0u);
    EXPECT_EQ(rig.group_value(NVDLA_UNIT_CDMA, NVDLA_CDMA_D_NAN_INPUT_DATA_NUM), 2u);
    EXPECT_EQ(rig.group_value(NVDLA_UNIT_CDMA, NVDLA_CDMA_D_INF_INPUT_DATA_NUM), 1u);
}

// An fp16 layer of 17 3x3 kernels over 6x5x90, padded by 1 on every side.
ConvSpec padded_fp16_layer() {
    ConvSpec s;
    s.precision = Precision::Fp16;
    s.width = 6, s.height = 5, s.channels = 90, s.kernels = 17;
    s.pad_left = s.pad_right = s.pad_top = s.pad_bottom = 1;
    return s;
}

TEST(ConvFp16, RandomLayerWithinTheDirectConvolutionThreshold) {
    auto rng = test::rng_for_test();
    ConvSpec s = padded_fp16_layer();
    s.pad_value = fp16::from_float(0.25f);
    IntCase c{s, {}, {}};
    const auto data =
        test::random_vector<float>(rng, size_t(s.height) * s.width * s.channels, -4, 4);
    const auto wts = test::random_vector<float>(rng, size_t(s.kernels) * s.channels * 9, -1, 1);
    for (float f : data) c.input.push_back(fp16::from_float(f));
    for (float f : wts) c.weights.push_back(fp16::from_float(f));
    Rig rig("nv_full");
    c.load(rig);
    const AccumulatorCube out = rig.execute();
    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    ASSERT_EQ(out.values.size(), size_t(s.kernels) * s.output_height() * s.output_width());

    std::vector<uint16_t> actual, expected;
    std::vector<int> max_exp;
    for (uint32_t k = 0; k < s.kernels; ++k)
        for (uint32_t y = 0; y < s.output_height(); ++y)
            for (uint32_t x = 0; x < s.output_width(); ++x) {
                double sum = 0;
                std::vector<uint16_t> window, kernel;
                for (uint32_t r = 0; r < 3; ++r)
                    for (uint32_t q = 0; q < 3; ++q) {
                        const int iy = int(y + r) - 1, ix = int(x + q) - 1;
                        const bool inside =
                            iy >= 0 && ix >= 0 && iy < int(s.height) && ix < int(s.width);
                        for (uint32_t ch = 0; ch < s.channels; ++ch) {
                            const auto d =
                                static_cast<uint16_t>(inside ? c.in(0, iy, ix, ch) : s.pad_value);
                            const auto w = static_cast<uint16_t>(c.wt(k, ch, r, q));
                            sum += double(fp16::to_float(d)) * fp16::to_float(w);
                            window.push_back(d);
                            kernel.push_back(w);
                        }
                    }
                expected.push_back(fp16::from_float(static_cast<float>(sum)));
                actual.push_back(precision::fp32_to_fp16(
                    static_cast<uint32_t>(out.values[out.index(0, k, y, x)])));
                max_exp.push_back(*precision::max_product_exponent(window, kernel));
            }
    const auto r = precision::compare_direct_conv(actual, expected, max_exp, {3, 3, s.channels});
    EXPECT_TRUE(r) << r;
}

// The fp16 layer's decoded kernels are kept in the weight cache's entry between runs: a layer
// run again at the same weight address with other weights of the same shape, and then with a
// kernel of another shape (fewer bytes, the same address), gives on every vector level what a
// fresh device's scalar level (convolve_fp16_reference, nothing kept) gives.
TEST(ConvFp16, KeptKernelsFollowChangedWeightsAndShapes) {
    auto rng = test::rng_for_test();
    const ConvSpec three = padded_fp16_layer();
    ConvSpec one = three;
    one.kernel_h = one.kernel_w = 1;
    const auto random_case = [&](const ConvSpec& s) {
        IntCase c{s, {}, {}};
        for (float f : test::random_vector<float>(
                 rng, size_t(s.batches) * s.height * s.width * s.channels, -4, 4))
            c.input.push_back(fp16::from_float(f));
        for (float f : test::random_vector<float>(
                 rng, size_t(s.kernels) * s.channels * s.kernel_h * s.kernel_w, -1, 1))
            c.weights.push_back(fp16::from_float(f));
        return c;
    };
    const IntCase cases[] = {random_case(three), random_case(three), random_case(one),
                             random_case(one), random_case(three)};
    std::vector<std::vector<int32_t>> expected;
    for (const IntCase& c : cases) {
        const IsaLimit scalar(IsaLevel::Scalar);
        Rig rig("nv_full");
        c.load(rig);
        expected.push_back(rig.execute().values);
        ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    }
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        Rig rig("nv_full");
        // Each case twice: decoded, then kept.
        for (size_t i = 0; i < std::size(cases); ++i)
            for (int run = 0; run < 2; ++run) {
                cases[i].load(rig);
                EXPECT_EQ(rig.execute().values, expected[i])
                    << isa_name(level) << ", case " << i << ", run " << run;
                ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
            }
    }
}

}  // namespace
}  // namespace nvdla::emu::conv_test
