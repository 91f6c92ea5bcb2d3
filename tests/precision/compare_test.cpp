#include "nvdla/precision/compare.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <vector>

#include "nvdla/precision/fp16.hpp"
#include "test_support.hpp"

namespace nvdla::precision {
namespace {

using Halves = std::vector<uint16_t>;

// fp16 patterns used below, worked by hand:
//   0x3c00 = 1.0, 0x3c0k = 1 + k * 2^-10
//   0x6400 = 1024, 0x6401 = 1025, 0x6402 = 1026, 0x63fe = 1023
//   0x2a00 = 1.5 * 2^-5 = 0.046875, 0x2a0k = 0.046875 + k * 2^-15 (2^-15 = 3.0517578125e-5)

TEST(Compare, ExponentOfTheSeed) {
    EXPECT_EQ(fp16_exponent(0x3c00), 0);
    EXPECT_EQ(fp16_exponent(0xbc00), 0);  // the sign does not matter
    EXPECT_EQ(fp16_exponent(0x4000), 1);
    EXPECT_EQ(fp16_exponent(0x0000), -15);
    EXPECT_EQ(fp16_exponent(0x03ff), -15);  // denormal
    EXPECT_EQ(fp16_exponent(0x0400), -14);
    EXPECT_EQ(fp16_exponent(0x7bff), 15);
    EXPECT_EQ(fp16_exponent(0x7c00), 16);
}

TEST(Compare, ProductExponentsAreRoundedDownToMultiplesOfFour) {
    EXPECT_EQ(aligned_product_exponent(0x3c00, 0x3c00), 0);    // 1 * 1
    EXPECT_EQ(aligned_product_exponent(0x4000, 0x4800), 0);    // 2 (1 -> 0) * 8 (3 -> 0)
    EXPECT_EQ(aligned_product_exponent(0x4c00, 0x3800), 0);    // 16 (4) * 0.5 (-1 -> -4)
    EXPECT_EQ(aligned_product_exponent(0x0000, 0x3c00), -16);  // 0 (-15 -> -16) * 1
    EXPECT_EQ(aligned_product_exponent(0x3400, 0x7bff), 8);    // 0.25 (-2 -> -4) * 65504 (15 -> 12)
    EXPECT_EQ(aligned_product_exponent(0xcc00, 0x4c00), 8);    // -16 * 16
}

TEST(Compare, MaxExpOverAKernelWindow) {
    // {1, 16, 0} . {1, 4, 1}: products 0 + 0, 4 + 0, -16 + 0.
    const Result<int> e =
        max_product_exponent(Halves{0x3c00, 0x4c00, 0x0000}, Halves{0x3c00, 0x4400, 0x3c00});
    ASSERT_TRUE(e) << e.message();
    EXPECT_EQ(*e, 4);
    EXPECT_EQ(max_product_exponent(Halves{0x3c00}, Halves{0x3c00, 0x3c00}).message(),
              "max_exp: 1 data elements but 2 weights in the kernel window");
    EXPECT_EQ(max_product_exponent(Halves{}, Halves{}).message(),
              "max_exp: the kernel window is empty");
}

TEST(Compare, AllowedErrorsWorkedByHand) {
    // 3x3x8 kernel, max_exp 0, a = 1.0: 2^-20 * 72 * 2 + 2^-10 = 9/65536 + 1/1024.
    EXPECT_EQ(direct_conv_allowed_error(0x3c00, 0, {3, 3, 8}), 0.0011138916015625);
    // Winograd over 4 channels: 18 * 4 = 72 products, the same bound.
    EXPECT_EQ(winograd_conv_allowed_error(0x3c00, 0, 4), 0.0011138916015625);
    // scale halves the first term: 72/2^20 + 2^-10.
    EXPECT_EQ(direct_conv_allowed_error(0x3c00, 0, {3, 3, 8}, 0.5), 0.00104522705078125);
    // max_exp 10, one product: 2^-10 * 2 + 2^-10.
    EXPECT_EQ(direct_conv_allowed_error(0x3c00, 10, {1, 1, 1}), 0.0029296875);
    // a = 1024 (exp 10): the second term is 1; max_exp -40 makes the first 2^-59.
    EXPECT_EQ(direct_conv_allowed_error(0x6400, -40, {1, 1, 1}), 1.0 + 0x1p-59);
    // CDP/PDP: the smaller of 0.0001 and 0.001 * |max_value|.
    EXPECT_DOUBLE_EQ(window_allowed_error(1.0), 0.0001);
    EXPECT_DOUBLE_EQ(window_allowed_error(-1.0), 0.0001);
    EXPECT_DOUBLE_EQ(window_allowed_error(0.05), 0.00005);
    EXPECT_EQ(window_allowed_error(0.0), 0.0);
}

TEST(Compare, DirectConvOnBothSidesOfTheThreshold) {
    const std::vector<int> max_exp = {0, 10, -40};
    // 1 vs 1; 3 * 2^-10 apart with 3 * 2^-10 allowed; 1 apart with 1 + 2^-59 allowed.
    auto r = compare_direct_conv(Halves{0x3c00, 0x3c03, 0x6401}, Halves{0x3c00, 0x3c00, 0x6400},
                                 max_exp, {1, 1, 1});
    EXPECT_TRUE(r) << r;
    EXPECT_EQ(r.elements, 3u);
    EXPECT_EQ(r.describe(), "CC direct conv: all 3 elements within the threshold");
    // One step further on both: 4 * 2^-10 and 2 are outside.
    r = compare_direct_conv(Halves{0x3c00, 0x3c04, 0x6402}, Halves{0x3c00, 0x3c00, 0x6400}, max_exp,
                            {1, 1, 1});
    EXPECT_FALSE(r);
    EXPECT_EQ(r.mismatches, 2u);
    EXPECT_EQ(r.first_mismatch, 1u);
    EXPECT_EQ(r.actual, 0x3c04);
    EXPECT_EQ(r.expected, 0x3c00);
    EXPECT_EQ(r.actual_error, 0.00390625);
    EXPECT_EQ(r.allowed_error, 0.0029296875);
    EXPECT_EQ(r.describe(),
              "CC direct conv: 2 of 3 elements outside the threshold; first at 1: actual 0x3c04 "
              "(1.00391) expected 0x3c00 (1), error 0.00390625 > allowed 0.00292969");
}

TEST(Compare, TheExponentTermComesFromTheNvdlaOutput) {
    // 1024 vs 1023: allowed 2^(10-10) = 1 when a = 1024, but 2^(9-10) when a = 1023.
    const std::vector<int> max_exp = {-40};
    EXPECT_TRUE(compare_direct_conv(Halves{0x6400}, Halves{0x63fe}, max_exp, {1, 1, 1}));
    EXPECT_FALSE(compare_direct_conv(Halves{0x63fe}, Halves{0x6400}, max_exp, {1, 1, 1}));
}

TEST(Compare, WinogradOnBothSidesOfTheThreshold) {
    // 4 channels, max_exp 0: allowed 0.0011138916015625 around 1.0.
    const std::vector<int> max_exp = {0};
    EXPECT_TRUE(compare_winograd_conv(Halves{0x3c01}, Halves{0x3c00}, max_exp, 4));
    const auto r = compare_winograd_conv(Halves{0x3c02}, Halves{0x3c00}, max_exp, 4);
    EXPECT_FALSE(r);
    EXPECT_EQ(r.unit, "CC Winograd conv");
    EXPECT_EQ(r.actual_error, 0.001953125);
    EXPECT_EQ(r.allowed_error, 0.0011138916015625);
    // 100 channels: 2^-20 * 3600 + 2^-10 = 0.00441... lets 4 steps through.
    EXPECT_TRUE(compare_winograd_conv(Halves{0x3c04}, Halves{0x3c00}, max_exp, 100));
}

TEST(Compare, OneStepOfAnyNormalFp16PassesTheConvThresholds) {
    // 2^(exp(a)-10) is one step of a, so a one-step difference passes whatever the kernel,
    // and two steps inside one binade do not (with a negligible kernel term).
    auto rng = test::rng_for_test();
    for (int i = 0; i < 2000; ++i) {
        const auto exponent_field = test::random_between(rng, 1, 29);
        const auto mantissa = test::random_between(rng, 0, 0x3fd);
        const auto b = static_cast<uint16_t>(exponent_field << 10 | mantissa);
        const auto a = static_cast<uint16_t>(b + 1);
        const std::vector<int> max_exp = {-30};
        EXPECT_TRUE(compare_direct_conv(Halves{a}, Halves{b}, max_exp, {1, 1, 1})) << a;
        EXPECT_FALSE(compare_direct_conv(Halves{static_cast<uint16_t>(a + 1)}, Halves{b}, max_exp,
                                         {1, 1, 1}))
            << a;
    }
}

TEST(Compare, PoolingAndLrnOnBothSidesOfTheThreshold) {
    // max 0.05: allowed 5e-5. One step (3.05e-5) passes, two (6.10e-5) do not.
    const std::vector<float> small_window = {0.05f, 0.05f};
    auto r = compare_pdp(Halves{0x2a01, 0x2a02}, Halves{0x2a00, 0x2a00}, small_window);
    EXPECT_FALSE(r);
    EXPECT_EQ(r.mismatches, 1u);
    EXPECT_EQ(r.first_mismatch, 1u);
    EXPECT_EQ(r.actual_error, 6.103515625e-05);
    EXPECT_EQ(r.describe(),
              "PDP: 1 of 2 elements outside the threshold; first at 1: actual 0x2a02 (0.046936) "
              "expected 0x2a00 (0.046875), error 6.10352e-05 > allowed 5e-05");
    // max 1.0: allowed 1e-4. Three steps (9.16e-5) pass, four (1.22e-4) do not.
    const std::vector<float> large_window = {1.0f, 1.0f};
    EXPECT_TRUE(compare_pdp(Halves{0x2a02, 0x2a03}, Halves{0x2a00, 0x2a00}, large_window));
    r = compare_cdp(Halves{0x2a03, 0x2a04}, Halves{0x2a00, 0x2a00}, large_window);
    EXPECT_FALSE(r);
    EXPECT_EQ(r.unit, "CDP");
    EXPECT_EQ(r.first_mismatch, 1u);
    // The absolute bound holds at any magnitude: 1024 vs 1025 fails though 1/1024 < 0.001.
    EXPECT_FALSE(compare_cdp(Halves{0x6401}, Halves{0x6400}, std::vector<float>{1025.0f}));
    EXPECT_TRUE(compare_cdp(Halves{0x6400}, Halves{0x6400}, std::vector<float>{1024.0f}));
    // A window whose largest value is 0 allows nothing, but equal values still pass; so do
    // +0 and -0.
    const std::vector<float> zero = {0.0f};
    EXPECT_TRUE(compare_pdp(Halves{0x8000}, Halves{0x0000}, zero));
    EXPECT_FALSE(compare_pdp(Halves{0x0001}, Halves{0x0000}, zero));
}

TEST(Compare, NansMatchOnlyNans) {
    const std::vector<float> window = {1.0f};
    EXPECT_TRUE(compare_pdp(Halves{0x7e00}, Halves{0xfe01}, window));
    const auto r = compare_pdp(Halves{0x7e00}, Halves{0x3c00}, window);
    EXPECT_FALSE(r);
    EXPECT_EQ(r.actual_error, std::numeric_limits<double>::infinity());
    EXPECT_FALSE(compare_direct_conv(Halves{0x3c00}, Halves{0x7c01}, std::vector<int>{0}, {}));
    EXPECT_FALSE(compare_bit_exact(Halves{0x7e00}, Halves{0x7e01}));  // bit-exact: payload too
}

TEST(Compare, SdpIsBitExact) {
    EXPECT_TRUE(compare_bit_exact(Halves{1, 2, 3}, Halves{1, 2, 3}));
    auto r = compare_bit_exact(Halves{1, 2, 3}, Halves{1, 2, 4}, false);
    EXPECT_FALSE(r);
    EXPECT_EQ(r.first_mismatch, 2u);
    EXPECT_EQ(r.describe(),
              "SDP bit-exact: 1 of 3 elements differ; first at 2: actual 0x3 expected 0x4");
    r = compare_bit_exact(Halves{0x3c00, 0x8000}, Halves{0x3c01, 0x0000});
    EXPECT_EQ(r.mismatches, 2u);  // -0 is not +0 bit by bit
    EXPECT_EQ(r.describe(),
              "SDP bit-exact: 2 of 2 elements differ; first at 0: actual 0x3c00 (1) expected "
              "0x3c01 (1.00098)");
    const std::vector<uint8_t> int8_actual = {0x80, 0x7f}, int8_expected = {0x80, 0x7e};
    r = compare_bit_exact(int8_actual, int8_expected);
    EXPECT_EQ(r.describe(),
              "SDP bit-exact: 1 of 2 elements differ; first at 1: actual 0x7f expected 0x7e");
    EXPECT_EQ(compare_bit_exact(int8_actual, int8_actual).describe(),
              "SDP bit-exact: all 2 elements identical");
}

TEST(Compare, InputsThatCannotBeComparedFailWithAReason) {
    auto r = compare_pdp(Halves{1}, Halves{1, 2}, std::vector<float>{1, 1});
    EXPECT_FALSE(r);
    EXPECT_EQ(r.describe(), "PDP: actual has 1 elements but expected has 2");
    r = compare_pdp(Halves{1, 2}, Halves{1, 2}, std::vector<float>{1});
    EXPECT_EQ(r.describe(), "PDP: max_value has 1 entries for 2 elements");
    r = compare_direct_conv(Halves{1, 2}, Halves{1, 2}, std::vector<int>{0}, {});
    EXPECT_EQ(r.describe(), "CC direct conv: max_exp has 1 entries for 2 elements");
    EXPECT_FALSE(compare_bit_exact(Halves{1}, Halves{}));
    // Streaming gives the same sentence, for EXPECT_TRUE(r) << r.
    std::ostringstream out;
    out << r;
    EXPECT_EQ(out.str(), r.describe());
}

}  // namespace
}  // namespace nvdla::precision
