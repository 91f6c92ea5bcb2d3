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

// Exact ties round to the even neighbour: up when the kept bits are odd, down when even.
TEST(NvdlaFloatArith, ExactTiesRoundToEven) {
    // fp32: (1 + 2^-23) + 2^-24 lies halfway between 1 + 2^-23 (odd) and 1 + 2^-22 (even).
    EXPECT_EQ(fp32_add(0x3f800001u, f32(0x1p-24f)), 0x3f800002u);
    // 1 + 2^-24 lies halfway between 1 (even) and 1 + 2^-23 (odd).
    EXPECT_EQ(fp32_add(f32(1.0f), f32(0x1p-24f)), f32(1.0f));
    // (1 + 3 * 2^-23) - 2^-24 = 1 + 2.5 * 2^-23: between 1 + 2^-22 (even) and 1 + 3 * 2^-23.
    EXPECT_EQ(fp32_sub(0x3f800003u, f32(0x1p-24f)), 0x3f800002u);
    // fp17: (1 + 2^-10) + 2^-11 rounds up to 1 + 2^-9; 1 + 2^-11 stays 1.
    const uint32_t fp17_two_pow_minus_11 = (31u - 11u) << 10;
    EXPECT_EQ(fp17_add(kFp17One | 1u, fp17_two_pow_minus_11), kFp17One | 2u);
    EXPECT_EQ(fp17_add(kFp17One, fp17_two_pow_minus_11), kFp17One);
    // fp17 product: 1.5 * (1 + 2^-10) = 1 + 2^-1 + 2^-10 + 2^-11, a tie above the odd
    // mantissa 0x201, so 0x202; 1.5 * (1 + 2^-9) = 1 + 2^-1 + 2^-9 + 2^-10 is exact.
    EXPECT_EQ(fp17_mul(kFp17OnePointFive, kFp17One | 1u), kFp17One | 0x202u);
    EXPECT_EQ(fp17_mul(kFp17OnePointFive, kFp17One | 2u), kFp17One | 0x203u);
    // fp32 product: (1 + 2^-23) * (1 + 2^-1) = 1 + 2^-1 + 2^-23 + 2^-24: kept 0x400001 (odd),
    // a tie, rounds up to 0x400002.
    EXPECT_EQ(fp32_mul(0x3f800001u, f32(1.5f)), 0x3fc00002u);
    // (1 + 2^-22) * 1.5 = 1 + 2^-1 + 2^-22 + 2^-23 is exact.
    EXPECT_EQ(fp32_mul(0x3f800002u, f32(1.5f)), 0x3fc00003u);
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
    // Exponent fields summing to exactly the bias: 1.5 * 2^-63 * 1.5 * 2^-64 = 1.125 * 2^-126,
    // the carry of the mantissa product lifts it to the smallest exponent.
    EXPECT_EQ(fp32_mul(f32(0x1.8p-63f), f32(0x1.8p-64f)), 0x00900000u);
    // A sum that normalises below the smallest normal is zero: 1.75 * 2^-126 - 2^-126.
    EXPECT_EQ(fp32_add(0x00e00000u, 0x80800000u), 0u);
}

TEST(NvdlaFloatArith, NanOperandsPassThrough) {
    EXPECT_EQ(fp32_add(0x7fc00001u, f32(1.0f)), 0x7fc00001u);
    EXPECT_EQ(fp32_mul(f32(2.0f), 0xffc00002u), 0xffc00002u);
}

TEST(NvdlaFloatArith, FractionToFp17) {
    EXPECT_EQ(fraction_to_fp17(uint64_t(1) << 34, 35), 30u << 10);            // 0.5
    EXPECT_EQ(fraction_to_fp17(uint64_t(3) << 33, 35), (30u << 10) | 0x200);  // 0.75
    EXPECT_EQ(fraction_to_fp17(0, 35), 0u);
    // 1.5 * 2^-30 is fp17's smallest exponent; 1.5 * 2^-31 is below it, so zero.
    EXPECT_EQ(fraction_to_fp17(3u << 4, 35), (1u << 10) | 0x200u);
    EXPECT_EQ(fraction_to_fp17(3u << 3, 35), 0u);
    // 0x803 / 2^12 = 2^-1 * (1 + 2^-10 + 2^-11): a tie above the odd mantissa 1, so 2 (even).
    EXPECT_EQ(fraction_to_fp17(0x803, 12), (30u << 10) | 2u);
    // 0x805 / 2^12 = 2^-1 * (1 + 2^-9 + 2^-11): a tie above the even mantissa 2, kept.
    EXPECT_EQ(fraction_to_fp17(0x805, 12), (30u << 10) | 2u);
}

}  // namespace
}  // namespace nvdla::precision
