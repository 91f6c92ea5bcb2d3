// fp16_max and fp16_min: the C model's FpMax/FpMin on fp16 patterns (the PDP's fp16 max and
// min pooling), checked against values worked out by hand and against the definition (sign,
// then magnitude) over many pairs.
#include <gtest/gtest.h>

#include "nvdla/precision/nvdla_float.hpp"
#include "test_support.hpp"

namespace nvdla::precision {
namespace {

constexpr uint16_t kOne = 0x3c00, kTwo = 0x4000, kMinusOne = 0xbc00, kMinusTwo = 0xc000;
constexpr uint16_t kPlusZero = 0x0000, kMinusZero = 0x8000;
constexpr uint16_t kInf = 0x7c00, kMinusInf = 0xfc00, kMax = 0x7bff, kMinusMax = 0xfbff;
constexpr uint16_t kNaN = 0x7e00, kNegativeNaN = 0xfc01;
constexpr uint16_t kDenormal = 0x0001, kMinusDenormal = 0x8001;

TEST(Fp16MinMax, OrdersBySignThenMagnitude) {
    EXPECT_EQ(fp16_max(kOne, kTwo), kTwo);
    EXPECT_EQ(fp16_max(kTwo, kOne), kTwo);
    EXPECT_EQ(fp16_min(kOne, kTwo), kOne);
    EXPECT_EQ(fp16_max(kMinusOne, kMinusTwo), kMinusOne);
    EXPECT_EQ(fp16_min(kMinusOne, kMinusTwo), kMinusTwo);
    EXPECT_EQ(fp16_max(kMinusTwo, kOne), kOne);
    EXPECT_EQ(fp16_max(kDenormal, kPlusZero), kDenormal);
    EXPECT_EQ(fp16_min(kMinusDenormal, kMinusZero), kMinusDenormal);
    EXPECT_EQ(fp16_max(kInf, kMax), kInf);  // infinity above the largest finite value
    EXPECT_EQ(fp16_min(kMinusInf, kMinusMax), kMinusInf);
}

TEST(Fp16MinMax, PlusZeroIsAboveMinusZero) {
    EXPECT_EQ(fp16_max(kPlusZero, kMinusZero), kPlusZero);
    EXPECT_EQ(fp16_max(kMinusZero, kPlusZero), kPlusZero);
    EXPECT_EQ(fp16_min(kPlusZero, kMinusZero), kMinusZero);
    EXPECT_EQ(fp16_min(kMinusZero, kPlusZero), kMinusZero);
}

TEST(Fp16MinMax, NaNOperandWinsFirstOneFirst) {
    EXPECT_EQ(fp16_max(kNaN, kTwo), kNaN);
    EXPECT_EQ(fp16_max(kTwo, kNaN), kNaN);
    EXPECT_EQ(fp16_min(kMinusTwo, kNegativeNaN), kNegativeNaN);
    EXPECT_EQ(fp16_max(kNegativeNaN, kNaN), kNegativeNaN);
    EXPECT_EQ(fp16_min(kNaN, kNegativeNaN), kNaN);
    EXPECT_EQ(fp16_min(kInf, kTwo), kTwo);  // infinity is not a NaN
}

TEST(Fp16MinMax, AgreesWithSignMagnitudeOrderOnManyPairs) {
    auto rng = test::rng_for_test();
    const auto a = test::random_vector<uint16_t>(rng, 20000, 0, 0xffff);
    const auto b = test::random_vector<uint16_t>(rng, 20000, 0, 0xffff);
    // The value of a non-NaN pattern as a key that orders like the numbers (-0 below +0).
    const auto key = [](uint16_t h) {
        return (h & 0x8000) ? -int32_t(h & 0x7fff) - 1 : int32_t(h);
    };
    for (size_t i = 0; i < a.size(); ++i) {
        if (fp16_is_nan(a[i]) || fp16_is_nan(b[i])) continue;
        const uint16_t hi = key(a[i]) > key(b[i]) ? a[i] : b[i];
        const uint16_t lo = key(a[i]) > key(b[i]) ? b[i] : a[i];
        ASSERT_EQ(fp16_max(a[i], b[i]), hi) << std::hex << a[i] << " " << b[i];
        ASSERT_EQ(fp16_min(a[i], b[i]), lo) << std::hex << a[i] << " " << b[i];
    }
}

}  // namespace
}  // namespace nvdla::precision
