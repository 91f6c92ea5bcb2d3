// The LUT builders: parameters derived by hand from the documented choices
// (docs/precision-lut.md), accuracy of the programmed tables through the hardware-faithful
// evaluators, and rejection of bad ranges.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>

#include "nvdla/precision/fp16.hpp"
#include "nvdla/precision/lut.hpp"
#include "test_support.hpp"

namespace nvdla::precision {
namespace {

double sigmoid(double x) {
    return 1 / (1 + std::exp(-x));
}

// AlexNet's LRN: k = 2, alpha = 1e-4, beta = 0.75 over 5 channels.
const LrnParameters kAlexNet{2.0, 1e-4, 0.75, 5};
double alexnet_lrn(double s) {
    return std::pow(2.0 + 1e-4 / 5 * s, -0.75);
}

bool mentions(const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos;
}

// ---- rejected requests ----

TEST(LutBuild, RejectsEmptyAndReversedRanges) {
    for (const auto& r :
         {build_sigmoid_lut(1, 1, Precision::Int16), build_tanh_lut(2, -2, Precision::Fp16),
          build_lrn_lut(kAlexNet, 5, 5, Precision::Int8)}) {
        ASSERT_FALSE(r.ok());
        EXPECT_TRUE(mentions(r.message(), "lo must be less than hi")) << r.message();
    }
}

TEST(LutBuild, RejectsNonFiniteBounds) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    for (const auto& r :
         {build_sigmoid_lut(nan, 8, Precision::Int16), build_tanh_lut(-8, nan, Precision::Int16),
          build_sigmoid_lut(-inf, 8, Precision::Fp16),
          build_lrn_lut(kAlexNet, 0, inf, Precision::Int16)}) {
        ASSERT_FALSE(r.ok());
        EXPECT_TRUE(mentions(r.message(), "must be finite")) << r.message();
    }
}

TEST(LutBuild, RejectsRangesTheDatapathCannotCarry) {
    const auto fp = build_sigmoid_lut(-70000, 0, Precision::Fp16);
    ASSERT_FALSE(fp.ok());
    EXPECT_TRUE(mentions(fp.message(), "65504")) << fp.message();
    EXPECT_TRUE(build_sigmoid_lut(-65504, 0, Precision::Fp16).ok());
    // The LRN input is an fp32 square sum: beyond fp16 is fine, beyond fp32 is not.
    EXPECT_TRUE(build_lrn_lut(kAlexNet, 0, 1e6, Precision::Fp16).ok());
    EXPECT_FALSE(build_lrn_lut(kAlexNet, 0, 1e39, Precision::Fp16).ok());
    const auto narrow = build_tanh_lut(0, 1e-320, Precision::Int16);  // 2^20 / 1e-320 is not finite
    ASSERT_FALSE(narrow.ok());
    EXPECT_TRUE(mentions(narrow.message(), "too narrow")) << narrow.message();
    // fp16: the dense select (raw step / 2^6) must fit the signed byte: a span of 2^-120 needs
    // 2^-128 steps of 256 raw entries, then 2^-134 dense ones.
    EXPECT_TRUE(mentions(build_tanh_lut(0, std::ldexp(1.0, -120), Precision::Fp16).message(),
                         "too narrow"));
    EXPECT_TRUE(build_tanh_lut(0, std::ldexp(1.0, -114), Precision::Fp16).ok());
}

TEST(LutBuild, RejectsBadLrnParameters) {
    const auto negative = build_lrn_lut(kAlexNet, -1, 10, Precision::Int16);
    ASSERT_FALSE(negative.ok());
    EXPECT_TRUE(mentions(negative.message(), "cannot be negative")) << negative.message();

    LrnParameters p = kAlexNet;
    p.k = 0;
    EXPECT_TRUE(
        mentions(build_lrn_lut(p, 0, 10, Precision::Int16).message(), "k must be positive"));
    p = kAlexNet;
    p.alpha = -1e-4;
    EXPECT_TRUE(mentions(build_lrn_lut(p, 0, 10, Precision::Int16).message(), "alpha"));
    p = kAlexNet;
    p.beta = std::numeric_limits<double>::quiet_NaN();
    EXPECT_TRUE(mentions(build_lrn_lut(p, 0, 10, Precision::Int16).message(), "beta"));
    p = kAlexNet;
    p.local_size = 4;
    EXPECT_TRUE(mentions(build_lrn_lut(p, 0, 10, Precision::Int16).message(), "local size"));
}

TEST(LutBuild, RejectsBadOutputScale) {
    LutBuildOptions o;
    o.output_scale = -1;
    EXPECT_TRUE(mentions(build_sigmoid_lut(-8, 8, Precision::Int16, o).message(), "output scale"));
    o.output_scale = std::numeric_limits<double>::quiet_NaN();
    EXPECT_FALSE(build_sigmoid_lut(-8, 8, Precision::Int16, o).ok());
}

// ---- chosen parameters ----

const LutSlope kFlat{};

TEST(LutBuild, SigmoidInt16Layout) {
    const auto built = build_sigmoid_lut(-8, 8, Precision::Int16);
    ASSERT_TRUE(built.ok()) << built.message();
    const BuiltLut& b = *built;
    const LutProgram& p = b.program;
    // x' = (x + 8) * 2^20 / 16: the raw table spans 0 .. 2^20.
    EXPECT_EQ(b.input_offset, -8.0);
    EXPECT_EQ(b.input_scale, 65536.0);
    EXPECT_DOUBLE_EQ(b.output_scale, 32767 / sigmoid(8));
    EXPECT_EQ(p.le_mode, LutLeMode::Linear);
    const bool raw_lo = b.raw_table == LutTable::Lo;
    const LutTable dense = raw_lo ? LutTable::Le : LutTable::Lo;
    EXPECT_EQ(raw_lo ? p.lo_start : p.le_start, 0);
    EXPECT_EQ(raw_lo ? p.lo_end : p.le_end, int64_t(1) << 20);
    EXPECT_EQ(raw_lo ? p.lo_index_select : p.le_index_select,
              raw_lo ? 12 : 14);  // 2^20 / 256 or / 64
    EXPECT_EQ(p.hybrid_priority, dense);
    EXPECT_EQ(p.underflow_priority, b.raw_table);
    EXPECT_EQ(p.overflow_priority, b.raw_table);
    // The dense table is finer and starts inside the range on its own grid.
    const int dense_select = raw_lo ? p.le_index_select : p.lo_index_select;
    const int64_t dense_start = raw_lo ? p.le_start : p.lo_start;
    EXPECT_LT(dense_select, raw_lo ? 12 : 14);
    EXPECT_GE(dense_start, 0);
    EXPECT_LT(dense_start, int64_t(1) << 20);
    EXPECT_EQ(dense_start % (int64_t(1) << dense_select), 0);
    // Raw entries: sigmoid at -8, 0 and 8 times the output scale.
    const auto& raw = raw_lo ? std::span<const int16_t>(p.lo) : std::span<const int16_t>(p.le);
    EXPECT_EQ(raw.front(), std::lround(sigmoid(-8) * b.output_scale));
    EXPECT_EQ(raw[raw.size() / 2], std::lround(0.5 * b.output_scale));
    EXPECT_EQ(raw.back(), 32767);
    // Hold is the default outside the range for sigmoid.
    EXPECT_EQ(p.le_underflow, kFlat);
    EXPECT_EQ(p.lo_overflow, kFlat);
    EXPECT_GT(b.interpolation_error, 0);
    EXPECT_LE(b.interpolation_error, 4.8e-5);  // (1/16)^2 / 8 * max|sigmoid''| (0.0962)
}

TEST(LutBuild, TanhFp16Layout) {
    const auto built = build_tanh_lut(-8, 8, Precision::Fp16);
    ASSERT_TRUE(built.ok()) << built.message();
    const BuiltLut& b = *built;
    const LutProgram& p = b.program;
    EXPECT_EQ(b.input_offset, 0.0);
    EXPECT_EQ(b.input_scale, 1.0);
    EXPECT_EQ(p.le_mode, LutLeMode::Linear);
    const bool raw_lo = b.raw_table == LutTable::Lo;
    // The raw table starts at -8 with a power-of-two step covering 16: 1/16 for 256
    // intervals, 1/4 for 64.
    EXPECT_EQ(raw_lo ? p.lo_start : p.le_start, 0xc1000000);  // -8.0f
    EXPECT_EQ(raw_lo ? p.lo_index_select : p.le_index_select, raw_lo ? -4 : -2);
    EXPECT_EQ(raw_lo ? p.lo_end : p.le_end, 0x41000000);  // 8.0f
    const auto& raw = raw_lo ? std::span<const int16_t>(p.lo) : std::span<const int16_t>(p.le);
    EXPECT_EQ(static_cast<uint16_t>(raw.front()),
              fp16::from_float(static_cast<float>(std::tanh(-8.0))));
    EXPECT_EQ(static_cast<uint16_t>(raw[raw.size() / 2]), 0x0000);  // tanh(0)
    EXPECT_EQ(static_cast<uint16_t>(raw.back()),
              fp16::from_float(static_cast<float>(std::tanh(8.0))));
}

TEST(LutBuild, TangentExtrapolationEncodesTheEdgeDerivative) {
    LutBuildOptions o;
    o.extrapolation = LutExtrapolation::Tangent;
    const auto built = build_tanh_lut(-2, 2, Precision::Int16, o);
    ASSERT_TRUE(built.ok()) << built.message();
    const BuiltLut& b = *built;
    const LutSlope& under =
        b.raw_table == LutTable::Lo ? b.program.lo_underflow : b.program.le_underflow;
    // tanh'(-2) = 1 - tanh(2)^2 in output units per LUT input unit, with the largest shift
    // (15) that keeps the scale in int16.
    const double per_unit = (1 - std::tanh(2.0) * std::tanh(2.0)) * b.output_scale / b.input_scale;
    EXPECT_EQ(under.shift, 15);
    EXPECT_EQ(under.scale, std::lround(std::ldexp(per_unit, 15)));
    EXPECT_GT(under.scale, 0);
}

TEST(LutBuild, LrnInt8Layout) {
    const auto built = build_lrn_lut(kAlexNet, 0, 2e5, Precision::Int8);
    ASSERT_TRUE(built.ok()) << built.message();
    const BuiltLut& b = *built;
    const LutProgram& p = b.program;
    // sqrt(2e5) = 447.2: 447.2 * 2^M <= 255 gives M = -1, so square sums are scaled by 1/4.
    EXPECT_EQ(b.lrn_data_shift, -1);
    EXPECT_EQ(b.input_scale, 0.25);
    EXPECT_EQ(b.raw_table, LutTable::Le);
    EXPECT_EQ(p.le_mode, LutLeMode::Exponent);
    EXPECT_EQ(p.le_start, 0);
    EXPECT_EQ(p.le_index_offset, 0);
    // LO: 0 .. 5e4 input units in 256 steps of 2^8 (195.3 rounded up to a power of two).
    EXPECT_EQ(p.lo_start, 0);
    EXPECT_EQ(p.lo_index_select, 8);
    EXPECT_EQ(p.lo_end, 65536);
    EXPECT_EQ(p.hybrid_priority, LutTable::Lo);
    EXPECT_EQ(p.underflow_priority, LutTable::Lo);  // LO starts at 0: its entry 0 is f(0)
    EXPECT_EQ(p.overflow_priority, LutTable::Le);
    const double scale = 32767 / alexnet_lrn(0);
    EXPECT_DOUBLE_EQ(b.output_scale, scale);
    EXPECT_EQ(p.lo[0], 32767);
    EXPECT_EQ(p.lo[1], std::lround(alexnet_lrn(256 * 4) * scale));
    EXPECT_EQ(p.le[0], std::lround(alexnet_lrn(1 * 4) * scale));      // input 2^0
    EXPECT_EQ(p.le[10], std::lround(alexnet_lrn(1024 * 4) * scale));  // input 2^10
}

TEST(LutBuild, LrnInt16ScalesTheSquareSumUp) {
    const auto built = build_lrn_lut(kAlexNet, 0, 2e5, Precision::Int16);
    ASSERT_TRUE(built.ok()) << built.message();
    // 447.2 * 2^7 = 57243 <= 65535 < 447.2 * 2^8: M = 7, square sums times 2^14.
    EXPECT_EQ(built->lrn_data_shift, 7);
    EXPECT_EQ(built->input_scale, 16384.0);
    // 2e5 * 2^14 / 256 = 1.28e7 -> 2^24 per LO step.
    EXPECT_EQ(built->program.lo_index_select, 24);
}

TEST(LutBuild, LrnAboveZeroUnderflowsToTheExponentTable) {
    const auto built = build_lrn_lut(kAlexNet, 1000, 2e5, Precision::Int16);
    ASSERT_TRUE(built.ok()) << built.message();
    EXPECT_EQ(built->program.lo_start, 1000 * 16384);
    EXPECT_EQ(built->program.underflow_priority, LutTable::Le);
}

// ---- accuracy through the evaluators ----

// x values: a uniform grid over [lo, hi] with both ends, and random points.
std::vector<double> sample_points(double lo, double hi, int grid, int random) {
    std::vector<double> xs;
    for (int i = 0; i <= grid; ++i) xs.push_back(lo + (hi - lo) * i / grid);
    auto rng = test::rng_for_test();
    std::uniform_real_distribution<double> d(lo, hi);
    for (int i = 0; i < random; ++i) xs.push_back(d(rng));
    return xs;
}

// Largest |LUT(x) - f(x)| over xs on the SDP int pipeline, x quantised to the LUT input.
template <class F>
double sdp_int_error(const BuiltLut& b, const std::vector<double>& xs, F f) {
    double worst = 0;
    for (const double x : xs) {
        const double input = std::nearbyint(b.lut_input(x));
        const double x_used = input / b.input_scale + b.input_offset;
        const double y = b.function_value(
            double(sdp_lut_lookup_int(b.program, static_cast<int32_t>(input)).value));
        worst = std::max(worst, std::abs(y - f(x_used)));
    }
    return worst;
}

template <class F>
double sdp_fp_error(const BuiltLut& b, const std::vector<double>& xs, F f) {
    double worst = 0;
    for (const double x : xs) {
        const auto x32 = static_cast<float>(x);
        worst = std::max(
            worst, std::abs(double(sdp_lut_lookup_fp(b.program, x32).value) - f(double(x32))));
    }
    return worst;
}

// Bounds: the interpolation error h^2/8 * max|f''| of the finest step that covers the
// worst region, plus two LSBs of the int16 output scale (entry rounding and the
// interpolator's rounding).
TEST(LutAccuracy, SigmoidInt16WithinOneTenThousandth) {
    const auto b = build_sigmoid_lut(-8, 8, Precision::Int16);
    ASSERT_TRUE(b.ok());
    // (1/16)^2 / 8 * 0.0962 = 4.7e-5, plus 2 / 32778 = 6.1e-5.
    EXPECT_LT(sdp_int_error(*b, sample_points(-8, 8, 4000, 2000), sigmoid), 1.1e-4);
}

TEST(LutAccuracy, TanhInt16WithinTwoTenThousandths) {
    const auto b = build_tanh_lut(-8, 8, Precision::Int16);
    ASSERT_TRUE(b.ok());
    // Step 1/32 over the curved middle: (1/32)^2 / 8 * 0.77 = 9.4e-5, plus 6.1e-5.
    EXPECT_LT(
        sdp_int_error(*b, sample_points(-8, 8, 4000, 2000), [](double x) { return std::tanh(x); }),
        1.6e-4);
}

TEST(LutAccuracy, HoldKeepsTheEdgeValueOutsideTheRange) {
    const auto b = build_sigmoid_lut(-8, 8, Precision::Int16);
    ASSERT_TRUE(b.ok());
    // Beyond the edges the output stays at sigmoid(+-8): off by at most 1 - sigmoid(8) = 3.4e-4.
    const double bound = 1 - sigmoid(8) + 1.1e-4;
    EXPECT_LT(sdp_int_error(*b, sample_points(8, 40, 500, 200), sigmoid), bound);
    EXPECT_LT(sdp_int_error(*b, sample_points(-40, -8, 500, 200), sigmoid), bound);
}

TEST(LutAccuracy, SigmoidAndTanhFp16WithinFp16Rounding) {
    // fp16 entries and fp17 arithmetic: five half-ULPs of fp16 near 1 (5 * 2^-12 = 1.2e-3)
    // plus the interpolation error.
    const auto s = build_sigmoid_lut(-8, 8, Precision::Fp16);
    const auto t = build_tanh_lut(-8, 8, Precision::Fp16);
    ASSERT_TRUE(s.ok() && t.ok());
    const std::vector<double> xs = sample_points(-8, 8, 4000, 2000);
    EXPECT_LT(sdp_fp_error(*s, xs, sigmoid), 1.3e-3);
    EXPECT_LT(sdp_fp_error(*t, xs, [](double x) { return std::tanh(x); }), 1.3e-3);
}

// Largest error of the CDP int LUT over integer square sums in [first, last] (every
// `stride`-th), compared with f at the sum the input stands for.
double cdp_int_error(const BuiltLut& b, int64_t first, int64_t last, int64_t stride) {
    double worst = 0;
    for (int64_t u = first; u <= last; u += stride) {
        const double y =
            b.function_value(double(cdp_lut_lookup_int(b.program, u, b.precision).value));
        worst = std::max(worst, std::abs(y - alexnet_lrn(double(u) / b.input_scale)));
    }
    return worst;
}

TEST(LutAccuracy, LrnInt8OverEveryReachableSquareSum) {
    const auto b = build_lrn_lut(kAlexNet, 0, 2e5, Precision::Int8);
    ASSERT_TRUE(b.ok());
    // In range: step 1024 in the sum, f''(0) = 0.75 * 1.75 * (2e-5)^2 * 2^-2.75 = 7.8e-11:
    // 1024^2 / 8 * 7.8e-11 = 1.0e-5, plus 2 / 55107 = 3.6e-5.
    EXPECT_LT(cdp_int_error(*b, 0, 50000, 1), 5e-5);
    // Beyond 2e5 (up to 255^2 input units) the exponent table interpolates whole octaves.
    EXPECT_LT(cdp_int_error(*b, 50001, 255 * 255, 1), 1.5e-2);
}

TEST(LutAccuracy, LrnInt16) {
    const auto b = build_lrn_lut(kAlexNet, 0, 2e5, Precision::Int16);
    ASSERT_TRUE(b.ok());
    const auto scaled = static_cast<int64_t>(2e5 * 16384);
    EXPECT_LT(cdp_int_error(*b, 0, scaled, 40009), 5e-5);
    EXPECT_LT(cdp_int_error(*b, scaled, int64_t(65535) * 65535 * 9, 1000003), 1.5e-2);
}

TEST(LutAccuracy, LrnFp16) {
    const auto b = build_lrn_lut(kAlexNet, 0, 2e5, Precision::Fp16);
    ASSERT_TRUE(b.ok());
    double in_range = 0, beyond = 0;
    for (const double s : sample_points(0, 4e5, 4000, 1000)) {
        const auto s32 = static_cast<float>(s);
        const double e =
            std::abs(double(cdp_lut_lookup_fp(b->program, s32).value) - alexnet_lrn(s32));
        (s32 <= 2e5f ? in_range : beyond) = std::max(s32 <= 2e5f ? in_range : beyond, e);
    }
    EXPECT_LT(in_range, 1.3e-3);  // fp16 rounding as for sigmoid
    EXPECT_LT(beyond, 1.5e-2);
}

}  // namespace
}  // namespace nvdla::precision
