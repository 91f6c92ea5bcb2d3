#include "nvdla/precision/fp16.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "test_support.hpp"

namespace nvdla::fp16 {
namespace {

TEST(Fp16, KnownValues) {
    EXPECT_EQ(from_float(0.0f), 0x0000);
    EXPECT_EQ(from_float(-0.0f), 0x8000);
    EXPECT_EQ(from_float(1.0f), 0x3c00);
    EXPECT_EQ(from_float(-2.0f), 0xc000);
    EXPECT_EQ(from_float(65504.0f), 0x7bff);
    EXPECT_EQ(from_float(0.333251953125f), 0x3555);
    EXPECT_EQ(from_float(std::ldexp(1.0f, -24)), 0x0001);  // smallest denormal
    EXPECT_EQ(from_float(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
    EXPECT_EQ(from_float(std::numeric_limits<float>::infinity()), kPosInf);
    EXPECT_EQ(from_float(-std::numeric_limits<float>::infinity()), kNegInf);
    EXPECT_TRUE(is_nan(from_float(std::numeric_limits<float>::quiet_NaN())));
    EXPECT_EQ(to_float(0x3c00), 1.0f);
    EXPECT_EQ(to_float(0x0001), std::ldexp(1.0f, -24));
    EXPECT_EQ(to_float(0x7bff), 65504.0f);
    EXPECT_TRUE(std::isinf(to_float(0x7c00)));
}

TEST(Fp16, RoundsToNearestEven) {
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even mantissa (1.0).
    EXPECT_EQ(from_float(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
    // 1 + 3*2^-11 is halfway between 0x3c01 and 0x3c02: ties to 0x3c02.
    EXPECT_EQ(from_float(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
    // Just above the halfway point rounds up.
    EXPECT_EQ(from_float(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3c01);
    // 65519.99 rounds to 65504, 65520 to infinity.
    EXPECT_EQ(from_float(65519.99f), 0x7bff);
    EXPECT_EQ(from_float(65520.0f), kPosInf);
    // Half of the smallest denormal ties to zero, a little more rounds up to it.
    EXPECT_EQ(from_float(std::ldexp(1.0f, -25)), 0x0000);
    EXPECT_EQ(from_float(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
    // 1.5 denormal steps ties to 2 steps (even).
    EXPECT_EQ(from_float(1.5f * std::ldexp(1.0f, -24)), 0x0002);
    EXPECT_EQ(from_float(2.5f * std::ldexp(1.0f, -24)), 0x0002);
}

TEST(Fp16, EveryPatternRoundTrips) {
    for (uint32_t h = 0; h <= 0xffff; ++h) {
        const auto bits = static_cast<uint16_t>(h);
        const float f = to_float(bits);
        if (is_nan(bits)) {
            EXPECT_TRUE(std::isnan(f));
            EXPECT_EQ(from_float(f), bits | 0x0200) << std::hex << h;  // quietened
        } else {
            EXPECT_EQ(from_float(f), bits) << std::hex << h;
        }
    }
}

TEST(Fp16, BulkMatchesScalarForEveryPattern) {
    std::vector<uint16_t> all(65536);
    for (uint32_t h = 0; h <= 0xffff; ++h) all[h] = static_cast<uint16_t>(h);
    std::vector<float> floats(all.size());
    to_float(all, floats);
    for (uint32_t h = 0; h <= 0xffff; ++h) {
        const float f = to_float(all[h]);
        EXPECT_EQ(std::bit_cast<uint32_t>(floats[h]), std::bit_cast<uint32_t>(f)) << std::hex << h;
    }
}

TEST(Fp16, BulkMatchesScalarForRandomFloats) {
    auto rng = test::rng_for_test();
    std::vector<float> in(100003);
    std::uniform_int_distribution<uint32_t> bits;
    for (auto& f : in) f = std::bit_cast<float>(bits(rng));  // every class: NaN, inf, denormal
    std::vector<uint16_t> out(in.size());
    from_float(in, out);
    for (size_t i = 0; i < in.size(); ++i)
        ASSERT_EQ(out[i], from_float(in[i])) << std::hex << std::bit_cast<uint32_t>(in[i]);
}

}  // namespace
}  // namespace nvdla::fp16
