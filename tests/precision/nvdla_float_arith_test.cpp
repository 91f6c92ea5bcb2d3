#include <gtest/gtest.h>

#include <bit>

#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::precision {
namespace {

uint32_t f32(float f) {
    return std::bit_cast<uint32_t>(f);
}

// fp17: 1 sign, 6 exponent bits (bias 31), 10 mantissa bits.
constexpr uint32_t kFp17One = 31u << 10;  // 1.0
constexpr uint32_t kFp17Two = 32u << 10;  // 2.0
constexpr uint32_t kFp17OnePointFive = kFp17One | 0x200;

TEST(NvdlaFloatArith, Fp17AddAndMultiplyWorkedByHand) {
    EXPECT_EQ(fp17_add(kFp17One, kFp17One), kFp17Two);
    EXPECT_EQ(fp17_mul(kFp17OnePointFive, kFp17OnePointFive), (32u << 10) | 0x080);  // 2.25
    EXPECT_EQ(fp17_add(kFp17One, kFp17One | 0x10000), 0u);                           // 1 - 1 = +0
    // 1.5 * -2 = -3 = -1.5 * 2^1.
    EXPECT_EQ(fp17_mul(kFp17OnePointFive, kFp17Two | 0x10000), 0x10000u | (32u << 10) | 0x200);
}

TEST(NvdlaFloatArith, Fp32BasicsMatchIeeeWhereNoQuirkApplies) {
    EXPECT_EQ(fp32_add(f32(1.5f), f32(2.25f)), f32(3.75f));
    EXPECT_EQ(fp32_sub(f32(1.5f), f32(2.25f)), f32(-0.75f));
    EXPECT_EQ(fp32_mul(f32(-3.0f), f32(0.5f)), f32(-1.5f));
    EXPECT_EQ(fp32_mul(f32(1.0f / 3.0f), f32(3.0f)), f32(1.0f));  // 0x3eaaaaab * 3 rounds to 1
}

TEST(NvdlaFloatArith, OverflowSaturatesToTheLargestFiniteValue) {
    EXPECT_EQ(fp32_mul(f32(3e38f), f32(2.0f)), 0x7f7fffffu);
    EXPECT_EQ(fp32_add(0xff7fffffu, 0xff7fffffu), 0xff7fffffu);
    EXPECT_EQ(fp17_mul(62u << 10, 62u << 10), (62u << 10) | 0x3ff);  // 2^31 * 2^31
}

TEST(NvdlaFloatArith, DenormalInputsReadWithAnImpliedOne) {
    // IEEE: 2^-149 * 2^127 = 2^-22. The C model reads the denormal as (1 + 2^-23) * 2^-127.
    EXPECT_EQ(fp32_mul(0x00000001u, f32(0x1p127f)), 0x3f800001u);
    // A product below the smallest normal is zero.
    EXPECT_EQ(fp32_mul(f32(0x1p-100f), f32(0x1p-100f)), 0u);
}

TEST(NvdlaFloatArith, NanOperandsPassThrough) {
    EXPECT_EQ(fp32_add(0x7fc00001u, f32(1.0f)), 0x7fc00001u);
    EXPECT_EQ(fp32_mul(f32(2.0f), 0xffc00002u), 0xffc00002u);
}

TEST(NvdlaFloatArith, FractionToFp17) {
    EXPECT_EQ(fraction_to_fp17(uint64_t(1) << 34, 35), 30u << 10);            // 0.5
    EXPECT_EQ(fraction_to_fp17(uint64_t(3) << 33, 35), (30u << 10) | 0x200);  // 0.75
    EXPECT_EQ(fraction_to_fp17(0, 35), 0u);
}

}  // namespace
}  // namespace nvdla::precision
