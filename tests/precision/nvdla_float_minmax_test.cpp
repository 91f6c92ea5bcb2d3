// fp32_max, fp32_min and fp32_relu: the C model's FpMax/FpMin/FpRelu, checked against values
// worked out by hand.
#include <gtest/gtest.h>

#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::precision {
namespace {

constexpr uint32_t kOne = 0x3f800000;       // 1.0
constexpr uint32_t kTwo = 0x40000000;       // 2.0
constexpr uint32_t kMinusOne = 0xbf800000;  // -1.0
constexpr uint32_t kMinusTwo = 0xc0000000;  // -2.0
constexpr uint32_t kPlusZero = 0x00000000;
constexpr uint32_t kMinusZero = 0x80000000;
constexpr uint32_t kInf = 0x7f800000;
constexpr uint32_t kMinusInf = 0xff800000;
constexpr uint32_t kQuietNaN = 0x7fc00000;
constexpr uint32_t kNegativeNaN = 0xff800001;
constexpr uint32_t kDenormal = 0x00000001;  // 2^-149

TEST(Fp32MinMax, OrdersBySignThenMagnitude) {
    EXPECT_EQ(fp32_max(kOne, kTwo), kTwo);
    EXPECT_EQ(fp32_max(kTwo, kOne), kTwo);
    EXPECT_EQ(fp32_min(kOne, kTwo), kOne);
    EXPECT_EQ(fp32_max(kMinusOne, kMinusTwo), kMinusOne);
    EXPECT_EQ(fp32_min(kMinusOne, kMinusTwo), kMinusTwo);
    EXPECT_EQ(fp32_max(kMinusTwo, kOne), kOne);
    EXPECT_EQ(fp32_min(kMinusTwo, kOne), kMinusTwo);
    EXPECT_EQ(fp32_max(kDenormal, kPlusZero), kDenormal);
    EXPECT_EQ(fp32_max(kInf, kTwo), kInf);
    EXPECT_EQ(fp32_min(kMinusInf, kMinusTwo), kMinusInf);
}

TEST(Fp32MinMax, PlusZeroIsAboveMinusZero) {
    EXPECT_EQ(fp32_max(kPlusZero, kMinusZero), kPlusZero);
    EXPECT_EQ(fp32_max(kMinusZero, kPlusZero), kPlusZero);
    EXPECT_EQ(fp32_min(kPlusZero, kMinusZero), kMinusZero);
    EXPECT_EQ(fp32_min(kMinusZero, kPlusZero), kMinusZero);
}

TEST(Fp32MinMax, NaNOperandWinsFirstOneFirst) {
    EXPECT_EQ(fp32_max(kQuietNaN, kTwo), kQuietNaN);
    EXPECT_EQ(fp32_max(kTwo, kQuietNaN), kQuietNaN);
    EXPECT_EQ(fp32_min(kMinusTwo, kNegativeNaN), kNegativeNaN);
    EXPECT_EQ(fp32_max(kNegativeNaN, kQuietNaN), kNegativeNaN);
    EXPECT_EQ(fp32_min(kQuietNaN, kNegativeNaN), kQuietNaN);
    // Infinity is not a NaN: it compares as the largest magnitude.
    EXPECT_EQ(fp32_min(kInf, kTwo), kTwo);
}

TEST(Fp32Relu, NegativesBecomePlusZeroNaNPasses) {
    EXPECT_EQ(fp32_relu(kTwo), kTwo);
    EXPECT_EQ(fp32_relu(kPlusZero), kPlusZero);
    EXPECT_EQ(fp32_relu(kMinusZero), kPlusZero);
    EXPECT_EQ(fp32_relu(kMinusTwo), kPlusZero);
    EXPECT_EQ(fp32_relu(kMinusInf), kPlusZero);
    EXPECT_EQ(fp32_relu(kInf), kInf);
    EXPECT_EQ(fp32_relu(kNegativeNaN), kNegativeNaN);
    EXPECT_EQ(fp32_relu(0x80000001u), kPlusZero);  // negative denormal
}

}  // namespace
}  // namespace nvdla::precision
