#include "nvdla/precision/nvdla_float.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "nvdla/precision/fp16.hpp"
#include "test_support.hpp"

namespace nvdla::precision {
namespace {

uint32_t bits_of(float f) {
    return std::bit_cast<uint32_t>(f);
}

// The value of a (non-NaN, non-infinite) fp17 pattern by its definition: 1.m * 2^(e-31), and
// zero for e = 0, m = 0. Exponent 0 with m != 0 reads as 1.m * 2^-31 (no fp17 denormals).
double fp17_value(uint32_t f) {
    const uint32_t e = (f >> 10) & 0x3f, m = f & 0x3ff;
    const double magnitude = (e == 0 && m == 0) ? 0.0 : std::ldexp(1.0 + m / 1024.0, int(e) - 31);
    return (f & 0x10000) ? -magnitude : magnitude;
}

// The IEEE result with infinity replaced by the largest finite value, as the datapath does.
uint16_t ieee_fp16_saturated(float f) {
    const uint16_t h = fp16::from_float(f);
    return fp16::is_inf(h) ? static_cast<uint16_t>((h & 0x8000) | 0x7bff) : h;
}

// --- fp32 -> fp16 ---------------------------------------------------------------------------

static_assert(fp32_to_fp16(0x7f800000) == 0x7bff);  // +Inf saturates
static_assert(fp32_to_fp16(0x7fc00000) == 0x7c00);  // the NaN quirk
static_assert(fp16_to_fp32(0x7c00) == 0x7f7fffff);

TEST(NvdlaFloat, Fp32ToFp16SaturatesInsteadOfOverflowing) {
    EXPECT_EQ(fp32_to_fp16(0x7f800000), 0x7bff);         // +Inf
    EXPECT_EQ(fp32_to_fp16(0xff800000), 0xfbff);         // -Inf
    EXPECT_EQ(fp32_to_fp16(bits_of(65520.0f)), 0x7bff);  // IEEE: +Inf (ties to even 65536)
    EXPECT_EQ(fp32_to_fp16(bits_of(-65520.0f)), 0xfbff);
    EXPECT_EQ(fp32_to_fp16(bits_of(65504.0f)), 0x7bff);    // the largest finite, exact
    EXPECT_EQ(fp32_to_fp16(bits_of(65519.996f)), 0x7bff);  // below the halfway point
    EXPECT_EQ(fp32_to_fp16(bits_of(1.0e10f)), 0x7bff);
    EXPECT_EQ(fp32_to_fp16(0x7f7fffff), 0x7bff);         // max float
    EXPECT_EQ(fp32_to_fp16(bits_of(65488.0f)), 0x7bfe);  // halfway 65472|65504: even 0x7bfe
    EXPECT_EQ(fp32_to_fp16(bits_of(65489.0f)), 0x7bff);
}

TEST(NvdlaFloat, Fp32ToFp16NanKeepsOnlyTheLowMantissaBits) {
    EXPECT_EQ(fp32_to_fp16(0x7fc00000), 0x7c00);  // quiet NaN: low 10 bits 0 -> the Inf pattern
    EXPECT_EQ(fp32_to_fp16(0xffc00000), 0xfc00);
    EXPECT_EQ(fp32_to_fp16(0x7f800001), 0x7c01);
    EXPECT_EQ(fp32_to_fp16(0x7fc003ff), 0x7fff);
    EXPECT_EQ(fp32_to_fp16(0x7fc00400), 0x7c00);  // bit 10 is dropped
    EXPECT_EQ(fp32_to_fp16(0xff8002a5), 0xfea5);
}

TEST(NvdlaFloat, Fp32ToFp16RoundsToNearestEvenAndMakesDenormals) {
    EXPECT_EQ(fp32_to_fp16(bits_of(1.0f)), 0x3c00);
    EXPECT_EQ(fp32_to_fp16(bits_of(-2.0f)), 0xc000);
    EXPECT_EQ(fp32_to_fp16(0x00000000), 0x0000);
    EXPECT_EQ(fp32_to_fp16(0x80000000), 0x8000);
    // 1 + 2^-11 ties to 1.0 (even); 1 + 3*2^-11 ties to 1 + 2^-9 (0x3c02, even).
    EXPECT_EQ(fp32_to_fp16(0x3f801000), 0x3c00);
    EXPECT_EQ(fp32_to_fp16(0x3f801001), 0x3c01);
    EXPECT_EQ(fp32_to_fp16(0x3f803000), 0x3c02);
    // A carry out of the mantissa moves to the next binade: 2 - 2^-11 ties to 2.0 (even).
    EXPECT_EQ(fp32_to_fp16(0x3ffff000), 0x4000);
    // Denormals, in units of 2^-24: 2^-24 -> 1; 2^-25 ties to 0; just above -> 1;
    // 1.5 units -> 2 (even); 2.5 units -> 2 (even); 2^-14 is the smallest normal.
    EXPECT_EQ(fp32_to_fp16(0x33800000), 0x0001);
    EXPECT_EQ(fp32_to_fp16(0x33000000), 0x0000);
    EXPECT_EQ(fp32_to_fp16(0x33000001), 0x0001);
    EXPECT_EQ(fp32_to_fp16(0x33c00000), 0x0002);
    EXPECT_EQ(fp32_to_fp16(0x34200000), 0x0002);
    EXPECT_EQ(fp32_to_fp16(0xb3800000), 0x8001);
    EXPECT_EQ(fp32_to_fp16(0x38800000), 0x0400);
    // (2 - 2^-10) * 2^-15 is 1023.5 units: ties up to 1024 units (even), the smallest normal;
    // 1023.75 units rounds up too; (2 - 2^-9) * 2^-15 is exactly 1023 units.
    EXPECT_EQ(fp32_to_fp16(0x387fe000), 0x0400);
    EXPECT_EQ(fp32_to_fp16(0x387ff000), 0x0400);
    EXPECT_EQ(fp32_to_fp16(0x387fc000), 0x03ff);
    // Below 2^-25 and fp32 denormals give zero of the same sign.
    EXPECT_EQ(fp32_to_fp16(0x32ffffff), 0x0000);
    EXPECT_EQ(fp32_to_fp16(0x00000001), 0x0000);
    EXPECT_EQ(fp32_to_fp16(0x807fffff), 0x8000);
}

TEST(NvdlaFloat, Fp32ToFp16IsIeeeForFiniteValuesBelow65520) {
    // Every binade, with the mantissas around the rounding points, and random patterns.
    auto rng = test::rng_for_test();
    std::uniform_int_distribution<uint32_t> any;
    std::vector<uint32_t> inputs;
    for (uint32_t e = 0; e < 255; ++e)
        for (uint32_t m : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x2fffu, 0x3000u, 0x7fffffu})
            for (uint32_t s : {0u, 0x80000000u}) inputs.push_back(s | e << 23 | m);
    for (int i = 0; i < 200000; ++i) inputs.push_back(any(rng));
    for (uint32_t x : inputs) {
        const float f = std::bit_cast<float>(x);
        if (std::isnan(f)) continue;
        EXPECT_EQ(fp32_to_fp16(x), ieee_fp16_saturated(f)) << std::hex << x;
    }
}

// --- fp16 -> fp32 ---------------------------------------------------------------------------

TEST(NvdlaFloat, Fp16ToFp32KnownValues) {
    EXPECT_EQ(fp16_to_fp32(0x3c00), 0x3f800000u);  // 1.0
    EXPECT_EQ(fp16_to_fp32(0xc000), 0xc0000000u);  // -2.0
    EXPECT_EQ(fp16_to_fp32(0x7bff), bits_of(65504.0f));
    EXPECT_EQ(fp16_to_fp32(0x0001), 0x33800000u);  // 2^-24
    EXPECT_EQ(fp16_to_fp32(0x03ff), 0x387fc000u);  // 1023 * 2^-24 = 1.111111111b * 2^-15
    EXPECT_EQ(fp16_to_fp32(0x8200), 0xb8000000u);  // -2^-15
    EXPECT_EQ(fp16_to_fp32(0x8000), 0x80000000u);
    EXPECT_EQ(fp16_to_fp32(0x7c00), 0x7f7fffffu);  // +Inf -> max float
    EXPECT_EQ(fp16_to_fp32(0xfc00), 0xff7fffffu);
    EXPECT_EQ(fp16_to_fp32(0x7e00), 0x7f800200u);  // NaN: mantissa lands unshifted
    EXPECT_EQ(fp16_to_fp32(0xfc01), 0xff800001u);
}

TEST(NvdlaFloat, Fp16ToFp32EveryPattern) {
    for (uint32_t h = 0; h <= 0xffff; ++h) {
        const auto bits = static_cast<uint16_t>(h);
        const uint32_t sign = (h & 0x8000) << 16;
        if (fp16::is_nan(bits)) {
            EXPECT_EQ(fp16_to_fp32(bits), sign | 0x7f800000u | (h & 0x3ff)) << std::hex << h;
        } else if (fp16::is_inf(bits)) {
            EXPECT_EQ(fp16_to_fp32(bits), sign | 0x7f7fffffu) << std::hex << h;
        } else {  // exact, denormals included
            EXPECT_EQ(fp16_to_fp32(bits), bits_of(fp16::to_float(bits))) << std::hex << h;
            EXPECT_EQ(fp32_to_fp16(fp16_to_fp32(bits)), bits) << std::hex << h;
        }
    }
}

// --- fp16 <-> fp17 --------------------------------------------------------------------------

TEST(NvdlaFloat, Fp16ToFp17KnownValues) {
    EXPECT_EQ(fp16_to_fp17(0x3c00), 0x7c00u);   // 1.0: exponent 31 = the bias
    EXPECT_EQ(fp16_to_fp17(0xbc00), 0x17c00u);  // -1.0: sign in bit 16
    EXPECT_EQ(fp16_to_fp17(0x7bff), 0xbbffu);   // 65504 = 1.1111111111b * 2^15: exponent 46
    EXPECT_EQ(fp16_to_fp17(0x0001), 0x1c00u);   // 2^-24: exponent 7, a normal in fp17
    EXPECT_EQ(fp16_to_fp17(0x0300), 0x4200u);   // 768 * 2^-24 = 1.1b * 2^-15: exponent 16
    EXPECT_EQ(fp16_to_fp17(0x0000), 0x0000u);
    EXPECT_EQ(fp16_to_fp17(0x8000), 0x10000u);
    EXPECT_EQ(fp16_to_fp17(0x7c00), fp17::kMaxFinite);  // Inf -> max finite
    EXPECT_EQ(fp16_to_fp17(0xfc00), 0x1fbffu);
    EXPECT_EQ(fp16_to_fp17(0x7e00), 0xfe00u);  // NaN keeps its mantissa
}

TEST(NvdlaFloat, Fp16ToFp17EveryPatternIsExact) {
    for (uint32_t h = 0; h <= 0xffff; ++h) {
        const auto bits = static_cast<uint16_t>(h);
        const uint32_t f = fp16_to_fp17(bits);
        ASSERT_LT(f, 0x20000u);
        if (fp16::is_nan(bits)) {
            EXPECT_TRUE(fp17::is_nan(f)) << std::hex << h;
            EXPECT_EQ(fp17_to_fp16(f), bits) << std::hex << h;
        } else if (fp16::is_inf(bits)) {
            EXPECT_EQ(f, ((h & 0x8000) << 1) | fp17::kMaxFinite) << std::hex << h;
            EXPECT_EQ(fp17_to_fp16(f), (h & 0x8000) | 0x7bff) << std::hex << h;
        } else {
            EXPECT_EQ(fp17_value(f), double(fp16::to_float(bits))) << std::hex << h;
            EXPECT_EQ(fp17_to_fp16(f), bits) << std::hex << h;  // round trip
        }
    }
}

TEST(NvdlaFloat, Fp17ToFp16EveryPattern) {
    // IEEE rounding of the fp17 value into fp16, saturated; NaN keeps sign and mantissa.
    for (uint32_t f = 0; f < 0x20000; ++f) {
        const uint16_t sign = static_cast<uint16_t>((f >> 1) & 0x8000);
        if (fp17::is_nan(f)) {
            EXPECT_EQ(fp17_to_fp16(f), sign | 0x7c00 | (f & 0x3ff)) << std::hex << f;
        } else if (fp17::is_inf(f)) {
            EXPECT_EQ(fp17_to_fp16(f), sign | 0x7bff) << std::hex << f;
        } else {
            const float value = static_cast<float>(fp17_value(f));  // exact in float
            EXPECT_EQ(fp17_to_fp16(f), ieee_fp16_saturated(value)) << std::hex << f;
        }
    }
}

TEST(NvdlaFloat, Fp17ToFp16Boundaries) {
    EXPECT_EQ(fp17_to_fp16(0xbbff), 0x7bff);  // 65504 exactly
    EXPECT_EQ(fp17_to_fp16(0xbc00), 0x7bff);  // 65536 saturates
    EXPECT_EQ(fp17_to_fp16(0x1bc00), 0xfbff);
    EXPECT_EQ(fp17_to_fp16(0x1800), 0x0000);  // 2^-25 ties to 0
    EXPECT_EQ(fp17_to_fp16(0x1801), 0x0001);  // just above rounds to 2^-24
    EXPECT_EQ(fp17_to_fp16(0x17ff), 0x0000);  // exponent 5: below 2^-25
    EXPECT_EQ(fp17_to_fp16(0x1e00), 0x0002);  // 1.5 * 2^-24 -> 2 units (even)
    EXPECT_EQ(fp17_to_fp16(0x43ff), 0x0400);  // 1023.5 units ties up to the smallest normal
}

TEST(NvdlaFloat, Fp17ToFp32EveryPattern) {
    for (uint32_t f = 0; f < 0x20000; ++f) {
        const uint32_t sign = (f & 0x10000) << 15;
        if (fp17::is_nan(f)) {
            EXPECT_EQ(fp17_to_fp32(f), sign | 0x7f800000u | (f & 0x3ff)) << std::hex << f;
        } else if (fp17::is_inf(f)) {
            EXPECT_EQ(fp17_to_fp32(f), sign | 0x7f7fffffu) << std::hex << f;
        } else {
            EXPECT_EQ(fp17_to_fp32(f), bits_of(static_cast<float>(fp17_value(f)))) << std::hex << f;
        }
    }
    EXPECT_EQ(fp17_to_fp32(0x7c00), 0x3f800000u);  // 1.0
    EXPECT_EQ(fp17_to_fp32(0x0001), 0x30002000u);  // exponent 0: 1.0000000001b * 2^-31
}

TEST(NvdlaFloat, Fp32ToFp17KnownValues) {
    EXPECT_EQ(fp32_to_fp17(bits_of(1.0f)), 0x7c00u);
    EXPECT_EQ(fp32_to_fp17(bits_of(-1.0f)), 0x17c00u);
    EXPECT_EQ(fp32_to_fp17(bits_of(65536.0f)), 0xbc00u);    // exponent 16 + 31 = 47
    EXPECT_EQ(fp32_to_fp17(0x4f7fe000), fp17::kMaxFinite);  // (2 - 2^-10) * 2^31 exactly
    EXPECT_EQ(fp32_to_fp17(0x4f7ff000), fp17::kMaxFinite);  // rounds to 2^32: saturates
    EXPECT_EQ(fp32_to_fp17(bits_of(1.0e20f)), fp17::kMaxFinite);
    EXPECT_EQ(fp32_to_fp17(0x7f800000), fp17::kMaxFinite);  // +Inf
    EXPECT_EQ(fp32_to_fp17(0xff800000), 0x1fbffu);
    EXPECT_EQ(fp32_to_fp17(0x7fc00000), 0xfc00u);  // NaN quirk as for fp16
    EXPECT_EQ(fp32_to_fp17(0x7f800155), 0xfd55u);
    // No denormals: 2^-30 is the smallest value; below it gives zero unless it rounds up.
    EXPECT_EQ(fp32_to_fp17(0x30800000), 0x0400u);  // 2^-30
    // In units of 2^-40 (2^-30 = 1024 units): (2 - 2^-23) * 2^-31 and 1023.75 units round up,
    // 1023.5 units ties up (1024 is even), 1023 units is flushed.
    EXPECT_EQ(fp32_to_fp17(0x307fffff), 0x0400u);
    EXPECT_EQ(fp32_to_fp17(0x307ff000), 0x0400u);
    EXPECT_EQ(fp32_to_fp17(0x307fe000), 0x0400u);
    EXPECT_EQ(fp32_to_fp17(0x307fc000), 0x0000u);
    EXPECT_EQ(fp32_to_fp17(0x30000000), 0x0000u);   // 2^-31
    EXPECT_EQ(fp32_to_fp17(0xb0400000), 0x10000u);  // -1.5 * 2^-31 -> -0
    // Rounding to nearest even on the 10-bit mantissa.
    EXPECT_EQ(fp32_to_fp17(0x3f801000), 0x7c00u);  // 1 + 2^-11 ties to 1.0
    EXPECT_EQ(fp32_to_fp17(0x3f803000), 0x7c02u);  // 1 + 3*2^-11 ties to 1 + 2^-9
}

TEST(NvdlaFloat, Fp32ToFp17RoundTripsAndRoundsToNearest) {
    // Every normal fp17 value survives fp17 -> fp32 -> fp17.
    for (uint32_t f = 0; f < 0x20000; ++f) {
        const uint32_t e = (f >> 10) & 0x3f;
        if (e == 0 || e == 0x3f) continue;
        EXPECT_EQ(fp32_to_fp17(fp17_to_fp32(f)), f) << std::hex << f;
    }
    // A random fp32 in fp17's normal range lands on a neighbour no more than half a step away.
    auto rng = test::rng_for_test();
    std::uniform_real_distribution<double> exponent(-29.9, 31.9);
    std::uniform_int_distribution<int> sign(0, 1);
    for (int i = 0; i < 100000; ++i) {
        const float x = static_cast<float>((sign(rng) ? -1 : 1) * std::exp2(exponent(rng)));
        const uint32_t f = fp32_to_fp17(bits_of(x));
        const double step = std::ldexp(1.0, std::ilogb(x) - 10);
        EXPECT_LE(std::fabs(fp17_value(f) - double(x)), step / 2) << x;
    }
}

// --- fp16 -> int16, int -> fp16 ---------------------------------------------------------------

TEST(NvdlaFloat, Fp16ToInt16KnownValues) {
    EXPECT_EQ(fp16_to_int16(0x4100), 3);      // 2.5 rounds half away
    EXPECT_EQ(fp16_to_int16(0xc100), -3);     // -2.5
    EXPECT_EQ(fp16_to_int16(0x3800), 1);      // 0.5
    EXPECT_EQ(fp16_to_int16(0xb800), -1);     // -0.5
    EXPECT_EQ(fp16_to_int16(0x37ff), 0);      // 0.49951171875
    EXPECT_EQ(fp16_to_int16(0x3e00), 2);      // 1.5
    EXPECT_EQ(fp16_to_int16(0x0001), 0);      // denormal
    EXPECT_EQ(fp16_to_int16(0x8000), 0);      // -0
    EXPECT_EQ(fp16_to_int16(0x77ff), 32752);  // largest fp16 below 2^15
    EXPECT_EQ(fp16_to_int16(0x7800), 32767);  // 32768 saturates
    EXPECT_EQ(fp16_to_int16(0xf800), -32768);
    EXPECT_EQ(fp16_to_int16(0xf801), -32768);  // -32800 saturates
    EXPECT_EQ(fp16_to_int16(0x7bff), 32767);
    EXPECT_EQ(fp16_to_int16(0x7c00), 32767);   // +Inf
    EXPECT_EQ(fp16_to_int16(0xfc00), -32768);  // -Inf
    EXPECT_EQ(fp16_to_int16(0x7e00), -32768);  // NaN
    EXPECT_EQ(fp16_to_int16(0xfe00), -32768);
}

TEST(NvdlaFloat, Fp16ToInt16EveryPattern) {
    for (uint32_t h = 0; h <= 0xffff; ++h) {
        const auto bits = static_cast<uint16_t>(h);
        if (fp16::is_nan(bits)) {
            EXPECT_EQ(fp16_to_int16(bits), -32768) << std::hex << h;
            continue;
        }
        const double v = fp16::is_inf(bits) ? ((h & 0x8000) ? -1e9 : 1e9) : fp16::to_float(bits);
        const double rounded = std::round(v);  // std::round: half away from zero
        const double clamped = rounded > 32767 ? 32767 : (rounded < -32768 ? -32768 : rounded);
        EXPECT_EQ(fp16_to_int16(bits), static_cast<int16_t>(clamped)) << std::hex << h;
    }
}

TEST(NvdlaFloat, IntToFp16KnownValues) {
    EXPECT_EQ(int_to_fp16(0), 0x0000);
    EXPECT_EQ(int_to_fp16(1), 0x3c00);
    EXPECT_EQ(int_to_fp16(-1), 0xbc00);
    EXPECT_EQ(int_to_fp16(1024), 0x6400);
    EXPECT_EQ(int_to_fp16(2047), 0x67ff);  // 11 bits: exact
    EXPECT_EQ(int_to_fp16(2049), 0x6800);  // halfway 2048|2050: even 2048
    EXPECT_EQ(int_to_fp16(2051), 0x6802);  // halfway 2050|2052: even 2052
    EXPECT_EQ(int_to_fp16(-2051), 0xe802);
    EXPECT_EQ(int_to_fp16(65504), 0x7bff);
    EXPECT_EQ(int_to_fp16(65519), 0x7bff);  // below the halfway point
    EXPECT_EQ(int_to_fp16(65520), 0x7bff);  // IEEE: +Inf; the datapath saturates
    EXPECT_EQ(int_to_fp16(65535), 0x7bff);
    EXPECT_EQ(int_to_fp16(-65536), 0xfbff);  // int17 minimum
    EXPECT_EQ(int_to_fp16(INT32_MIN), 0xfbff);
    EXPECT_EQ(int_to_fp16(INT32_MAX), 0x7bff);
}

TEST(NvdlaFloat, IntToFp16EveryInt17) {
    for (int32_t x = -65536; x <= 65535; ++x)
        EXPECT_EQ(int_to_fp16(x), ieee_fp16_saturated(static_cast<float>(x))) << x;
}

// --- NaN flush and buffers --------------------------------------------------------------------

TEST(NvdlaFloat, NanFlushGivesPositiveZero) {
    EXPECT_EQ(fp16_flush_nan(0x7e00), 0x0000);
    EXPECT_EQ(fp16_flush_nan(0xfc01), 0x0000);
    EXPECT_EQ(fp16_flush_nan(0x7c00), 0x7c00);  // infinity is not a NaN
    EXPECT_EQ(fp16_flush_nan(0x3c00), 0x3c00);
    EXPECT_EQ(fp16_flush_nan(0x8000), 0x8000);
    EXPECT_EQ(fp32_flush_nan(0x7fc00000), 0x00000000u);
    EXPECT_EQ(fp32_flush_nan(0xff800001), 0x00000000u);
    EXPECT_EQ(fp32_flush_nan(0xff800000), 0xff800000u);
    EXPECT_EQ(fp32_flush_nan(0x3f800000), 0x3f800000u);
    int nans = 0;
    for (uint32_t h = 0; h <= 0xffff; ++h) {
        const uint16_t out = fp16_flush_nan(static_cast<uint16_t>(h));
        if (out != h) {
            ++nans;
            EXPECT_EQ(out, 0);
        }
    }
    EXPECT_EQ(nans, 2 * 1023);  // both signs, every non-zero mantissa
}

TEST(NvdlaFloat, BufferConversionsMatchTheScalarOnes) {
    const std::vector<float> in = {1.0f, -65520.0f, std::numeric_limits<float>::infinity(),
                                   std::bit_cast<float>(0x7fc00000u), 5.9604645e-08f};
    std::vector<uint16_t> half(in.size());
    ASSERT_TRUE(fp32_to_fp16(in, half));
    EXPECT_EQ(half, (std::vector<uint16_t>{0x3c00, 0xfbff, 0x7bff, 0x7c00, 0x0001}));
    std::vector<float> back(half.size());
    ASSERT_TRUE(fp16_to_fp32(half, back));
    EXPECT_EQ(bits_of(back[0]), 0x3f800000u);
    EXPECT_EQ(bits_of(back[3]), 0x7f7fffffu);  // 0x7c00 read back as the largest float

    std::vector<uint16_t> short_out(2);
    const Status s = fp32_to_fp16(in, short_out);
    EXPECT_FALSE(s);
    EXPECT_EQ(s.message(), "fp32 -> fp16: 5 inputs but room for 2 outputs");
    EXPECT_FALSE(fp16_to_fp32(half, std::span<float>(back.data(), 4)));
}

}  // namespace
}  // namespace nvdla::precision
