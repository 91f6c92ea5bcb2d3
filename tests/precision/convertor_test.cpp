#include "nvdla/precision/convertor.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "test_support.hpp"

namespace nvdla::precision {
namespace {

constexpr int64_t k2Pow31 = int64_t(1) << 31;

TEST(Convertor, SignExtendCutsToThePortWidth) {
    EXPECT_EQ(sign_extend(0xff, 8), -1);
    EXPECT_EQ(sign_extend(0x7f, 8), 127);
    EXPECT_EQ(sign_extend(0x180, 8), -128);
    EXPECT_EQ(sign_extend(0x1ff, 8), -1);
    EXPECT_EQ(sign_extend(0x1ffff, 17), -1);
    EXPECT_EQ(sign_extend(0x0ffff, 17), 65535);
    EXPECT_EQ(sign_extend(-5, 64), -5);
    EXPECT_EQ(sign_extend(-5, 32), -5);
}

// The seed: "the rounding method used after the shift is round half away from zero".
TEST(Convertor, TruncateRoundsHalfAwayFromZero) {
    struct Case {
        int64_t x;
        unsigned lsb;
        int64_t y;
    };
    const Case cases[] = {
        {-5, 1, -3}, {-3, 1, -2}, {-1, 1, -1}, {1, 1, 1},   {3, 1, 2},   {5, 1, 3},
        {6, 2, 2},   {-6, 2, -2}, {7, 2, 2},   {-7, 2, -2}, {5, 2, 1},   {-5, 2, -1},
        {9, 0, 9},   {-9, 0, -9}, {1, 2, 0},   {2, 2, 1},   {-2, 2, -1}, {-1, 63, 0},
    };
    for (const Case& c : cases) {
        const Clamped r = truncate(c.x, c.lsb, 32);
        EXPECT_EQ(r.value, c.y) << c.x << " >> " << c.lsb;
        EXPECT_FALSE(r.saturated) << c.x << " >> " << c.lsb;
    }
}

TEST(Convertor, TruncateSaturatesToTheOutputWidth) {
    // int8: 253/2 = 126.5 -> 127 fits; 255/2 = 127.5 -> 128 does not.
    EXPECT_EQ(truncate(253, 1, 8), (Clamped{127, false}));
    EXPECT_EQ(truncate(255, 1, 8), (Clamped{127, true}));
    EXPECT_EQ(truncate(-256, 1, 8), (Clamped{-128, false}));
    EXPECT_EQ(truncate(-257, 1, 8), (Clamped{-128, true}));  // -128.5 -> -129
    // int16.
    EXPECT_EQ(truncate(65534, 1, 16), (Clamped{32767, false}));
    EXPECT_EQ(truncate(65535, 1, 16), (Clamped{32767, true}));
    EXPECT_EQ(truncate(-65536, 1, 16), (Clamped{-32768, false}));
    EXPECT_EQ(truncate(-65537, 1, 16), (Clamped{-32768, true}));
    // CACC: a 48-bit sum truncated by CLIP_TRUNCATE = 16 to int32.
    const int64_t top48 = (int64_t(1) << 47) - 1;
    EXPECT_EQ(truncate(top48, 16, 32), (Clamped{k2Pow31 - 1, true}));  // 2^31 - 2^-16 -> 2^31
    EXPECT_EQ(truncate(-(int64_t(1) << 47), 16, 32), (Clamped{-k2Pow31, false}));
    EXPECT_EQ(truncate((k2Pow31 - 1) << 16, 16, 32), (Clamped{k2Pow31 - 1, false}));
    EXPECT_EQ(truncate(((k2Pow31 - 1) << 16) + 0x8000, 16, 32), (Clamped{k2Pow31 - 1, true}));
}

TEST(Convertor, TruncateMatchesRoundingByHandOverASmallDomain) {
    for (int64_t x = -4096; x <= 4096; ++x) {
        for (unsigned lsb = 0; lsb <= 13; ++lsb) {
            const double exact = std::round(double(x) / std::ldexp(1.0, int(lsb)));  // half away
            const double clamped = exact > 127 ? 127 : (exact < -128 ? -128 : exact);
            const Clamped r = truncate(x, lsb, 8);
            ASSERT_EQ(r.value, int64_t(clamped)) << x << " >> " << lsb;
            ASSERT_EQ(r.saturated, exact != clamped) << x << " >> " << lsb;
        }
    }
}

TEST(Convertor, ShifterSaturates) {
    EXPECT_EQ(shifter(3, 4, 32), (Clamped{48, false}));
    EXPECT_EQ(shifter(-3, 4, 32), (Clamped{-48, false}));
    EXPECT_EQ(shifter(0x7fff, 16, 32), (Clamped{0x7fff0000, false}));
    EXPECT_EQ(shifter(-32768, 16, 32), (Clamped{-k2Pow31, false}));
    EXPECT_EQ(shifter(-32768, 17, 32), (Clamped{-k2Pow31, true}));
    EXPECT_EQ(shifter(-1, 31, 32), (Clamped{-k2Pow31, false}));
    EXPECT_EQ(shifter(1, 31, 32), (Clamped{k2Pow31 - 1, true}));
    EXPECT_EQ(shifter(0x8000, 16, 32), (Clamped{k2Pow31 - 1, true}));  // the bias shifter
    EXPECT_EQ(shifter(1, 63, 32), (Clamped{k2Pow31 - 1, true}));
    // Shifts of the output width and beyond overflow for every nonzero value, -1 included.
    for (unsigned shift = 32; shift <= 63; ++shift) {
        EXPECT_EQ(shifter(-1, shift, 32), (Clamped{-k2Pow31, true})) << shift;
        EXPECT_EQ(shifter(1, shift, 32), (Clamped{k2Pow31 - 1, true})) << shift;
    }
    EXPECT_EQ(shifter(-1, 7, 8), (Clamped{-128, false}));
    EXPECT_EQ(shifter(-1, 8, 8), (Clamped{-128, true}));
    EXPECT_EQ(shifter(0, 63, 8), (Clamped{0, false}));
    EXPECT_EQ(shifter(-1, 0, 8), (Clamped{-1, false}));
    EXPECT_EQ(shifter(127, 0, 8), (Clamped{127, false}));
    EXPECT_EQ(shifter(64, 1, 8), (Clamped{127, true}));
}

TEST(Convertor, ConvertSubtractsScalesAndShifts) {
    const ConvertorShape wide{32, 32, 5, 32};
    // (100 - 20) * 3 = 240, / 4 = 60.
    EXPECT_EQ(convert(100, {20, 3, 2}, wide), (Clamped{60, false}));
    // (101 - 20) * 3 = 243, / 4 = 60.75 -> 61.
    EXPECT_EQ(convert(101, {20, 3, 2}, wide), (Clamped{61, false}));
    // (10 - 20) * 3 = -30, / 4 = -7.5 -> -8 (half away from zero).
    EXPECT_EQ(convert(10, {20, 3, 2}, wide), (Clamped{-8, false}));
    // (-7 - 0) * 1 / 2 = -3.5 -> -4; (7 - 0) / 2 = 3.5 -> 4.
    EXPECT_EQ(convert(-7, {0, 1, 1}, wide), (Clamped{-4, false}));
    EXPECT_EQ(convert(7, {0, 1, 1}, wide), (Clamped{4, false}));
    // A negative scale: (5 - (-3)) * -2 = -16, / 8 = -2.
    EXPECT_EQ(convert(5, {-3, -2, 3}, wide), (Clamped{-2, false}));
    // shift 0: no rounding, only saturation.
    EXPECT_EQ(convert(1000, {0, 1000, 0}, wide), (Clamped{1000000, false}));
}

TEST(Convertor, ConvertUsesTheInstanceWidths) {
    // The SDP output convertor: int32 x and offset give a 33-bit difference, times an int16
    // scale a 49-bit product: (2^31 - 1) - (-2^31) = 2^32 - 1, times -32768 = -(2^47 - 2^15),
    // far below the 17-bit range.
    const ConvertorParams extreme{INT32_MIN, INT16_MIN, 0};
    EXPECT_EQ(convert(INT32_MAX, extreme, kSdpOutputConvertor), (Clamped{-65536, true}));
    // ... and shifted by 31: -(2^16 - 2^-16) rounds to -65536, which fits.
    EXPECT_EQ(convert(INT32_MAX, {INT32_MIN, INT16_MIN, 31}, kSdpOutputConvertor),
              (Clamped{-65536, false}));
    // CDP int8 lanes take the low 8 bits of DATIN_OFFSET: 0x1ff reads as -1, so 5 - (-1) = 6.
    EXPECT_EQ(convert(5, {0x1ff, 1, 0}, kCdpInputConvertorInt8), (Clamped{6, false}));
    // and saturate to 9 bits: (127 - (-128)) * 2 = 510 -> 255.
    EXPECT_EQ(convert(127, {-128, 2, 0}, kCdpInputConvertorInt8), (Clamped{255, true}));
    // The CDMA offset is 16 bits: 0x18000 reads as -32768.
    EXPECT_EQ(convert(0, {0x18000, 1, 0}, kCdmaInputConvertor), (Clamped{32768, false}));
    // The CDP input shifter is 5 bits: 33 reads as 1. The SDP one is 6 bits: 33 stays 33.
    EXPECT_EQ(convert(4, {0, 1, 33}, kCdpInputConvertorInt16), (Clamped{2, false}));
    EXPECT_EQ(convert(int64_t(3) << 32, {0, 1, 33}, ConvertorShape{40, 32, 6, 17}),
              (Clamped{2, false}));  // 1.5 -> 2
    // The CDP int16 output convertor reads a 33-bit input: (2^32 - 1) / 2^17 = 32767.99...
    // rounds to 32768 and saturates; / 2^18 it rounds to 16384. 2^32 itself is bit 32, the
    // sign of the 33-bit port: it reads as -2^32.
    const int64_t top33 = (int64_t(1) << 32) - 1;
    EXPECT_EQ(convert(top33, {0, 1, 17}, kCdpOutputConvertorInt16), (Clamped{32767, true}));
    EXPECT_EQ(convert(top33, {0, 1, 18}, kCdpOutputConvertorInt16), (Clamped{16384, false}));
    EXPECT_EQ(convert(top33 + 1, {0, 1, 17}, kCdpOutputConvertorInt16), (Clamped{-32768, false}));
}

TEST(Convertor, SaturationFlagOfTheCModelMissesOneStepPastTheLimit) {
    // 17-bit output, shift 1. floor is x >> 1; the C model flags |floor - result| > 1.
    struct Case {
        int64_t x;
        int64_t y;
        bool exact;  // Clamped::saturated: the rounded value did not fit
        bool model;  // IntShiftRightSat's flag
    };
    const Case cases[] = {
        {131069, 65535, false, false},    // 65534.5 -> 65535 fits
        {131070, 65535, false, false},    // 65535
        {131071, 65535, true, false},     // 65535.5 -> 65536: floor 65535 = result
        {131072, 65535, true, false},     // 65536: floor 65536 = result + 1
        {131073, 65535, true, false},     // 65536.5: floor 65536
        {131074, 65535, true, true},      // 65537: floor 65537 = result + 2
        {-131072, -65536, false, false},  // -65536 fits
        {-131073, -65536, true, false},   // -65536.5 -> -65537: floor -65537
        {-131074, -65536, true, false},   // -65537: floor -65537
        {-131075, -65536, true, true},    // -65537.5: floor -65538
    };
    for (const Case& c : cases) {
        EXPECT_EQ(convert(c.x, {0, 1, 1}, kSdpOutputConvertor), (Clamped{c.y, c.exact})) << c.x;
        EXPECT_EQ(cmodel_convertor_saturation_flag(c.x, {0, 1, 1}, kSdpOutputConvertor), c.model)
            << c.x;
        EXPECT_EQ(cmodel_shift_right_saturation_flag(c.x, 1, 17), c.model) << c.x;
    }
    EXPECT_FALSE(cmodel_shift_right_saturation_flag(-1, 63, 17));
    EXPECT_TRUE(cmodel_shift_right_saturation_flag(1000, 0, 8));
}

TEST(Convertor, ConvertToInt8AndInt16Saturates) {
    // SDP output convertor, shift 2: 1000 / 4 = 250 fits 17 bits but not int8.
    ConvertedElement e = convert_to(Precision::Int8, 1000, {0, 1, 2}, kSdpOutputConvertor);
    EXPECT_EQ(e, (ConvertedElement{0x007f, true, false}));
    e = convert_to(Precision::Int8, -1000, {0, 1, 2}, kSdpOutputConvertor);
    EXPECT_EQ(e, (ConvertedElement{0xff80, true, false}));  // -128, sign-extended
    e = convert_to(Precision::Int8, -510, {0, 1, 2}, kSdpOutputConvertor);
    EXPECT_EQ(e, (ConvertedElement{0xff80, false, false}));  // -127.5 -> -128 fits
    e = convert_to(Precision::Int8, 506, {0, 1, 2}, kSdpOutputConvertor);
    EXPECT_EQ(e, (ConvertedElement{0x007f, false, false}));  // 126.5 -> 127 fits
    e = convert_to(Precision::Int8, 510, {0, 1, 2}, kSdpOutputConvertor);
    EXPECT_EQ(e, (ConvertedElement{0x007f, true, false}));  // 127.5 -> 128 does not
    e = convert_to(Precision::Int16, 100000, {0, 1, 0}, kSdpOutputConvertor);
    EXPECT_EQ(e, (ConvertedElement{0x7fff, true, true}));  // 100000 > 65535: both stages
    e = convert_to(Precision::Int16, 40000, {0, 1, 0}, kSdpOutputConvertor);
    EXPECT_EQ(e, (ConvertedElement{0x7fff, true, false}));  // fits 17 bits, not int16
    e = convert_to(Precision::Int16, -32768, {0, 1, 0}, kSdpOutputConvertor);
    EXPECT_EQ(e, (ConvertedElement{0x8000, false, false}));
}

TEST(Convertor, ConvertToFp16RoundsToNearestEvenAndSaturates) {
    // 2049 halfway between 2048 and 2050 -> 2048 (even mantissa).
    EXPECT_EQ(convert_to(Precision::Fp16, 2049, {0, 1, 0}, kSdpOutputConvertor),
              (ConvertedElement{0x6800, false, false}));
    // CDMA: (-3 - 5) * 2 / 2 = -8 = 0xc800.
    EXPECT_EQ(convert_to(Precision::Fp16, -3, {5, 2, 1}, kCdmaInputConvertor),
              (ConvertedElement{0xc800, false, false}));
    // 65472 = 0x7bfe is below the FP16 overflow; 65504 = 0x7bff counts (|x| >= 65504).
    EXPECT_EQ(convert_to(Precision::Fp16, 65472, {0, 1, 0}, kSdpOutputConvertor),
              (ConvertedElement{0x7bfe, false, false}));
    EXPECT_EQ(convert_to(Precision::Fp16, 65504, {0, 1, 0}, kSdpOutputConvertor),
              (ConvertedElement{0x7bff, true, false}));
    // 131070 / 2 = 65535 fits 17 bits and becomes 65504.
    EXPECT_EQ(convert_to(Precision::Fp16, 131070, {0, 1, 1}, kSdpOutputConvertor),
              (ConvertedElement{0x7bff, true, false}));
    // -200000 does not fit 17 bits: -65536 -> -65504.
    EXPECT_EQ(convert_to(Precision::Fp16, -200000, {0, 1, 0}, kSdpOutputConvertor),
              (ConvertedElement{0xfbff, true, true}));
}

TEST(Convertor, OverflowDefinitionsOfTheSeed) {
    EXPECT_FALSE(overflows_int(INT32_MAX, 32));
    EXPECT_TRUE(overflows_int(int64_t(INT32_MAX) + 1, 32));
    EXPECT_FALSE(overflows_int(INT32_MIN, 32));
    EXPECT_TRUE(overflows_int(int64_t(INT32_MIN) - 1, 32));
    EXPECT_FALSE(overflows_int(32767, 16));
    EXPECT_TRUE(overflows_int(32768, 16));
    EXPECT_FALSE(overflows_int(-32768, 16));
    EXPECT_TRUE(overflows_int(-32769, 16));
    EXPECT_FALSE(overflows_int(127, 8));
    EXPECT_TRUE(overflows_int(128, 8));
    EXPECT_FALSE(overflows_int(-128, 8));
    EXPECT_TRUE(overflows_int(-129, 8));
    EXPECT_TRUE(overflows_fp16(0x7bff));   // 65504
    EXPECT_TRUE(overflows_fp16(0xfbff));   // -65504
    EXPECT_TRUE(overflows_fp16(0x7c00));   // +Inf
    EXPECT_FALSE(overflows_fp16(0x7bfe));  // 65472
    EXPECT_FALSE(overflows_fp16(0x7c01));  // NaN
    EXPECT_FALSE(overflows_fp16(0x0000));
    int count = 0;
    for (uint32_t h = 0; h <= 0xffff; ++h) count += overflows_fp16(static_cast<uint16_t>(h));
    EXPECT_EQ(count, 4);  // +-65504 and +-Inf
}

TEST(Convertor, CountersCountSaturationsAndNans) {
    PrecisionCounters c;
    c.count_int(127, 8);
    EXPECT_EQ(c, (PrecisionCounters{0, 0}));
    c.count_int(128, 8);
    c.count_int(-129, 8);
    c.count_int(int64_t(INT32_MAX) + 1, 32);
    EXPECT_EQ(c.saturations, 3u);
    c.count_fp16(0x7bfe);
    c.count_fp16(0x7bff);
    c.count_fp16(0xfbff);
    c.count_fp16(0x7c00);
    EXPECT_EQ(c.saturations, 6u);
    EXPECT_EQ(c.nans, 0u);
    c.count_fp16(0x7e00);
    c.count_fp16(0xfc01);
    EXPECT_EQ(c, (PrecisionCounters{6, 2}));
    c.count_saturation(true);
    c.count_saturation(false);
    EXPECT_EQ(c.saturations, 7u);
    c.reset();
    EXPECT_EQ(c, (PrecisionCounters{0, 0}));
    // 32-bit registers wrap.
    c.saturations = 0xffffffffu;
    c.count_saturation(true);
    EXPECT_EQ(c.saturations, 0u);
}

TEST(Convertor, BufferConversionCounts) {
    const std::vector<int32_t> in = {100, 1000, -1000, 3, 510};
    std::vector<uint16_t> out(in.size());
    PrecisionCounters counters;
    ASSERT_TRUE(convert_to(Precision::Int8, in, {0, 1, 2}, kSdpOutputConvertor, out, &counters));
    // 25; 250 -> 127; -250 -> -128; 0.75 -> 1; 127.5 -> 128 -> 127.
    EXPECT_EQ(out, (std::vector<uint16_t>{25, 0x7f, 0xff80, 1, 0x7f}));
    EXPECT_EQ(counters, (PrecisionCounters{3, 0}));
    // Counting adds up over calls until reset.
    ASSERT_TRUE(convert_to(Precision::Int8, in, {0, 1, 2}, kSdpOutputConvertor, out, &counters));
    EXPECT_EQ(counters.saturations, 6u);
    ASSERT_TRUE(convert_to(Precision::Fp16, in, {0, 1, 0}, kSdpOutputConvertor, out));
    EXPECT_EQ(out[0], 0x5640);  // 100 = 1.5625 * 2^6

    std::vector<uint16_t> small(2);
    const Status s = convert_to(Precision::Int8, in, {0, 1, 2}, kSdpOutputConvertor, small);
    EXPECT_EQ(s.message(), "convertor: 5 input elements but room for 2 outputs");
    const Status bad = convert_to(Precision::Int8, in, {}, ConvertorShape{32, 32, 7, 17}, out);
    EXPECT_EQ(bad.message(), "convertor: shifter width 7 is outside 1..6 bits (shifts up to 63)");
}

TEST(Convertor, ShapesValidate) {
    for (const ConvertorShape& s :
         {kCdmaInputConvertor, kCdpInputConvertorInt8, kCdpInputConvertorInt16,
          kCdpOutputConvertorInt8, kCdpOutputConvertorInt16, kSdpOutputConvertor,
          kSdpEwOperandConvertor})
        EXPECT_TRUE(validate(s)) << validate(s).message();
    EXPECT_TRUE(validate(ConvertorShape{46, 32, 6, 17}));
    EXPECT_EQ(validate(ConvertorShape{47, 32, 6, 17}).message(),
              "convertor: (x - offset) * scale needs 64 bits; input and offset must be at most "
              "46 bits wide");
    EXPECT_EQ(validate(ConvertorShape{32, 32, 6, 0}).message(),
              "convertor: output width 0 is outside 1..63 bits");
    EXPECT_FALSE(validate(ConvertorShape{32, 32, 0, 17}));
}

}  // namespace
}  // namespace nvdla::precision
