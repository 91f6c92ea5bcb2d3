// The LUT evaluators against values worked by hand from the C model's rules
// (cmod/hls/sdp/sdp_y_idx.cpp, sdp_y_inp.cpp, hls_wrapper/sdp_hls_wrapper.cpp,
// cmod/cdp/NV_NVDLA_cdp.cpp).
#include "nvdla/precision/lut.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <ostream>
#include <random>

#include "test_support.hpp"

namespace nvdla::precision {

// Readable failure messages.
static const char* name_of(LutHit h) {
    return h == LutHit::Hit ? "hit" : h == LutHit::Underflow ? "underflow" : "overflow";
}
static void PrintTo(const LutIndex& i, std::ostream* os) {
    *os << "{" << name_of(i.hit) << ", entry " << i.entry << ", fraction " << i.fraction << "}";
}
static void PrintTo(const LutOutcome& o, std::ostream* os) {
    *os << "{LE " << name_of(o.le) << ", LO " << name_of(o.lo) << ", "
        << (o.selected == LutTable::Le ? "LE" : "LO") << " selected}";
}
static void PrintTo(const LutStatistics& s, std::ostream* os) {
    *os << "{le_hit " << s.le_hit << ", lo_hit " << s.lo_hit << ", underflow " << s.underflow
        << ", overflow " << s.overflow << ", hybrid " << s.hybrid << "}";
}

namespace {

constexpr uint64_t kHalf35 = uint64_t(1) << 34;  // 0.5 as a 35-bit fraction
constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kInt32Min = std::numeric_limits<int32_t>::min();

LutIndex hit(uint32_t entry, uint64_t fraction) {
    return {LutHit::Hit, entry, fraction};
}
LutIndex underflow() {
    return {LutHit::Underflow, 0, 0};
}
LutIndex overflow(uint32_t last) {
    return {LutHit::Overflow, last, 0};
}

LutProgram exponent_le(int64_t start, int8_t offset) {
    LutProgram p;
    p.le_mode = LutLeMode::Exponent;
    p.le_start = start;
    p.le_index_offset = offset;
    return p;
}

// ---- SDP index, exponent mode ----

TEST(LutSdpIndex, ExponentUnderflowsAtAndBelowStart) {
    const LutProgram p = exponent_le(100, 2);
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 100), underflow());  // x == start
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 99), underflow());
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, kInt32Min), underflow());
}

TEST(LutSdpIndex, ExponentUnderflowsBelowTwoToTheOffset) {
    const LutProgram p = exponent_le(100, 2);
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 101), underflow());  // d = 1: log2 0 < 2
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 103), underflow());  // d = 3: log2 1 < 2
}

TEST(LutSdpIndex, ExponentIndexAndFractionBelowTheLeadingOne) {
    const LutProgram p = exponent_le(100, 2);
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 104), hit(0, 0));                  // d = 4 = 2^2
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 106), hit(0, kHalf35));            // d = 6 = 4 + 2
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 107), hit(0, uint64_t(3) << 33));  // d = 7: 3/4
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 108), hit(1, 0));                  // d = 8 = 2^3
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 100 + 1024 + 256), hit(8, uint64_t(1) << 33));
}

TEST(LutSdpIndex, ExponentOverflowsAtIndex64) {
    // Offset -40: d = 2^24 gives index 24 + 40 = 64.
    const LutProgram p = exponent_le(0, -40);
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 1 << 24), overflow(64));
    // d = 2^24 - 1: index 63, the 23 bits below the leading one moved up to 35 bits.
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, (1 << 24) - 1),
              hit(63, ((uint64_t(1) << 23) - 1) << 12));
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, kInt32Max), overflow(64));
    // A negative offset: d = 1 sits at index 3.
    EXPECT_EQ(sdp_lut_index_int(exponent_le(0, -3), LutTable::Le, 1), hit(3, 0));
}

TEST(LutSdpIndex, ExponentUsesTheFull32BitDistance) {
    // start = INT32_MIN, x = INT32_MAX: d = 2^32 - 1, log2 31.
    const LutProgram p = exponent_le(kInt32Min, 0);
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, kInt32Max),
              hit(31, ((uint64_t(1) << 31) - 1) << 4));
}

// ---- SDP index, linear mode ----

TEST(LutSdpIndex, LinearIndexTruncatesAndKeepsTheShiftedOutBits) {
    LutProgram p;
    p.lo_start = -50;
    p.lo_index_select = 4;                                            // 16 input units per entry
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Lo, -50), underflow());  // x == start
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Lo, -49), hit(0, uint64_t(1) << 31));  // 1/16
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Lo, -34), hit(1, 0));                  // d = 16
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Lo, -50 + 4095), hit(255, uint64_t(15) << 31));
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Lo, -50 + 4096), overflow(256));  // d = 256 * 16
}

TEST(LutSdpIndex, LinearLeOverflowsAt64) {
    LutProgram p;
    p.le_mode = LutLeMode::Linear;
    p.le_start = 0;
    p.le_index_select = 0;
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 63), hit(63, 0));
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 64), overflow(64));
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 1), hit(1, 0));
}

TEST(LutSdpIndex, NegativeSelectShiftsLeftWithoutFraction) {
    LutProgram p;
    p.le_mode = LutLeMode::Linear;
    p.le_start = 0;
    p.le_index_select = -2;  // four entries per input unit
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 15), hit(60, 0));
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, 16), overflow(64));
    p.lo_index_select = -8;  // d << 8 = 256: overflow
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Lo, 1), overflow(256));
    p.lo_index_select = -7;
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Lo, 1), hit(128, 0));
}

TEST(LutSdpIndex, SelectAbove35KeepsTheTopFractionBits) {
    // start INT32_MIN, x INT32_MAX: d = 2^32 - 1; select 36 gives index 0 and fraction
    // d / 2^36 in 35 bits = d >> 1. The LE path holds the masked bits in a signed 32-bit
    // variable, so its fraction sign-extends: (2^35 - 1) >> 1.
    LutProgram p;
    p.le_mode = LutLeMode::Linear;
    p.le_start = p.lo_start = kInt32Min;
    p.le_index_select = p.lo_index_select = 36;
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Lo, kInt32Max), hit(0, (uint64_t(1) << 31) - 1));
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Le, kInt32Max), hit(0, (uint64_t(1) << 34) - 1));
}

TEST(LutSdpIndex, StartUsesTheLow32BitsOfTheRegister) {
    LutProgram p;
    p.lo_index_select = 0;
    p.lo_start = (int64_t(1) << 32) + 10;  // reads as 10
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Lo, 10), underflow());
    EXPECT_EQ(sdp_lut_index_int(p, LutTable::Lo, 11), hit(1, 0));
}

// ---- SDP interpolation and extrapolation ----

TEST(LutSdpInterpolate, WeightsTheTwoEntries) {
    EXPECT_EQ(sdp_lut_interpolate_int(100, 200, kHalf35), 150);
    EXPECT_EQ(sdp_lut_interpolate_int(100, 200, 0), 100);
    EXPECT_EQ(sdp_lut_interpolate_int(-32768, 32767, 0), -32768);
    EXPECT_EQ(sdp_lut_interpolate_int(0, 4, uint64_t(1) << 33), 1);  // a quarter of the way
}

TEST(LutSdpInterpolate, RoundsHalfAwayFromZero) {
    EXPECT_EQ(sdp_lut_interpolate_int(0, 3, kHalf35), 2);                  // 1.5
    EXPECT_EQ(sdp_lut_interpolate_int(0, -3, kHalf35), -2);                // -1.5
    EXPECT_EQ(sdp_lut_interpolate_int(-1, 0, uint64_t(1) << 33), -1);      // -0.75
    EXPECT_EQ(sdp_lut_interpolate_int(0, 1, (uint64_t(1) << 34) - 1), 0);  // just under 0.5
    EXPECT_EQ(sdp_lut_interpolate_int(1, 2, (uint64_t(1) << 35) - 1), 2);  // 1.99999...
}

TEST(LutSdpExtrapolate, ScalesShiftsAndRounds) {
    EXPECT_EQ(sdp_lut_extrapolate_int(10, 0, 0, 5, {3, 1}), 5 + 15);    // 10 * 3 / 2
    EXPECT_EQ(sdp_lut_extrapolate_int(1, 0, 0, 5, {1, 1}), 5 + 1);      // 0.5 -> 1
    EXPECT_EQ(sdp_lut_extrapolate_int(-1, 0, 0, 5, {1, 1}), 5 - 1);     // -0.5 -> -1
    EXPECT_EQ(sdp_lut_extrapolate_int(-3, 0, 0, 0, {1, 2}), -1);        // -0.75 -> -1
    EXPECT_EQ(sdp_lut_extrapolate_int(10, 0, 0, 5, {3, -2}), 5 + 120);  // negative shift: left
    EXPECT_EQ(sdp_lut_extrapolate_int(300, 288, 0, 100, {-7, 0}), 100 - 84);
}

TEST(LutSdpExtrapolate, ShiftIsASigned5BitField) {
    // 30 = 0b11110 reads as -2.
    EXPECT_EQ(sdp_lut_extrapolate_int(10, 0, 0, 5, {3, 30}), 5 + 120);
    EXPECT_EQ(sdp_lut_extrapolate_int(10, 0, 0, 5, {3, 15}), 5 + 0);  // 30 / 32768 -> 0
    EXPECT_EQ(sdp_lut_extrapolate_int(10, 0, 0, 5, {3, -16}), 5 + 30 * 65536);
}

TEST(LutSdpExtrapolate, SubtractsTheBiasAndSaturates) {
    EXPECT_EQ(sdp_lut_extrapolate_int(100, 0, 8, 7, {1, 0}), 7 + 92);
    EXPECT_EQ(sdp_lut_extrapolate_int(kInt32Max, kInt32Min, 0, 32767, {32767, -16}), kInt32Max);
    EXPECT_EQ(sdp_lut_extrapolate_int(kInt32Min, kInt32Max, 0, -32768, {32767, -16}), kInt32Min);
    // The step saturates to int32 first, then the sum saturates again.
    EXPECT_EQ(sdp_lut_extrapolate_int(kInt32Max, kInt32Min, 0, -1, {32767, -16}), kInt32Max - 1);
}

TEST(LutSdpExtrapolate, UnderflowBiasIsTwoToThePositiveOffset) {
    EXPECT_EQ(sdp_lut_underflow_bias(exponent_le(0, 3)), 8u);
    EXPECT_EQ(sdp_lut_underflow_bias(exponent_le(0, 0)), 0u);  // SDP: offset 0 adds nothing
    EXPECT_EQ(sdp_lut_underflow_bias(exponent_le(0, -4)), 0u);
    LutProgram linear = exponent_le(0, 3);
    linear.le_mode = LutLeMode::Linear;
    EXPECT_EQ(sdp_lut_underflow_bias(linear), 0u);
}

// ---- SDP lookups: selection between the tables ----

// LE linear over x in 1..63 (le[i] = 1000 + i), LO linear over 33..287 (lo[i] = 2000 + i).
LutProgram overlapping_tables() {
    LutProgram p;
    p.le_mode = LutLeMode::Linear;
    p.le_start = 0;
    p.le_end = 64;
    p.le_index_select = 0;
    p.lo_start = 32;
    p.lo_end = 288;
    p.lo_index_select = 0;
    for (uint32_t i = 0; i < kLutLeEntries; ++i) p.le[i] = static_cast<int16_t>(1000 + i);
    for (uint32_t i = 0; i < kLutLoEntries; ++i) p.lo[i] = static_cast<int16_t>(2000 + i);
    p.le_overflow = {2, 0};
    p.lo_underflow = {1, 0};
    p.lo_overflow = {1, 0};
    return p;
}

TEST(LutSdpLookup, OnlyHitTableWins) {
    const LutProgram p = overlapping_tables();
    const LutIntLookup a = sdp_lut_lookup_int(p, 10);  // LE hit, LO underflow
    EXPECT_EQ(a.value, 1010);
    EXPECT_EQ(a.outcome, (LutOutcome{LutHit::Hit, LutHit::Underflow, LutTable::Le}));
    const LutIntLookup b = sdp_lut_lookup_int(p, 100);  // LE overflow, LO hit at 68
    EXPECT_EQ(b.value, 2068);
    EXPECT_EQ(b.outcome, (LutOutcome{LutHit::Overflow, LutHit::Hit, LutTable::Lo}));
}

TEST(LutSdpLookup, BothHitFollowsHybridPriority) {
    LutProgram p = overlapping_tables();
    EXPECT_EQ(sdp_lut_lookup_int(p, 40).value, 1040);
    p.hybrid_priority = LutTable::Lo;
    EXPECT_EQ(sdp_lut_lookup_int(p, 40).value, 2008);
}

TEST(LutSdpLookup, BothUnderflowFollowsUnderflowPriority) {
    LutProgram p = overlapping_tables();
    EXPECT_EQ(sdp_lut_lookup_int(p, 0).value, 1000);  // le[0] + (0 - 0) * 0
    p.underflow_priority = LutTable::Lo;
    EXPECT_EQ(sdp_lut_lookup_int(p, 0).value, 2000 - 32);  // lo[0] + (0 - 32) * 1
    EXPECT_EQ(sdp_lut_lookup_int(p, 0).outcome.selected, LutTable::Lo);
}

TEST(LutSdpLookup, BothOverflowFollowsOverflowPriority) {
    LutProgram p = overlapping_tables();
    EXPECT_EQ(sdp_lut_lookup_int(p, 300).value, 1064 + (300 - 64) * 2);
    p.overflow_priority = LutTable::Lo;
    EXPECT_EQ(sdp_lut_lookup_int(p, 300).value, 2256 + (300 - 288));
}

TEST(LutSdpLookup, UnderflowOnOneSideOverflowOnTheOtherFollowsHybridPriority) {
    LutProgram p = overlapping_tables();
    p.le_start = 1000;  // LE now covers 1001..1063, LO still 33..287
    p.le_underflow = {-1, 0};
    const LutIntLookup le = sdp_lut_lookup_int(p, 500);
    EXPECT_EQ(le.outcome, (LutOutcome{LutHit::Underflow, LutHit::Overflow, LutTable::Le}));
    EXPECT_EQ(le.value, 1000 + (500 - 1000) * -1);
    p.hybrid_priority = LutTable::Lo;
    EXPECT_EQ(sdp_lut_lookup_int(p, 500).value, 2256 + (500 - 288));
}

TEST(LutSdpLookup, ExponentUnderflowMeasuresFromStartPlusTwoToTheOffset) {
    LutProgram p = exponent_le(0, 3);
    p.le[0] = 50;
    p.le_underflow = {4, 0};
    p.lo_start = 1000;  // LO underflows too; underflow priority LE
    EXPECT_EQ(sdp_lut_lookup_int(p, 5).value, 50 + (5 - 8) * 4);
    p.le_index_offset = 0;  // bias 0 on the SDP
    EXPECT_EQ(sdp_lut_lookup_int(p, 0).value, 50);
    EXPECT_EQ(sdp_lut_lookup_int(p, -2).value, 50 - 8);
}

TEST(LutSdpLookup, InterpolatesInsideATable) {
    LutProgram p;
    p.lo_start = 0;
    p.lo_index_select = 2;
    p.lo[3] = 10;
    p.lo[4] = 21;
    p.underflow_priority = p.hybrid_priority = LutTable::Lo;
    p.le_start = kInt32Max;  // LE always underflows
    // x = 14: index 3, fraction 2/4: 10 + 11/2 = 15.5 -> 16.
    EXPECT_EQ(sdp_lut_lookup_int(p, 14).value, 16);
    EXPECT_EQ(sdp_lut_lookup_int(p, 13).value, 13);  // 10 + 11/4 = 12.75 -> 13
}

// ---- Statistics ----

TEST(LutStatistics, SdpAndCdpCountTheSameOutcomesDifferently) {
    const LutOutcome outcomes[] = {
        {LutHit::Hit, LutHit::Underflow, LutTable::Le},
        {LutHit::Hit, LutHit::Hit, LutTable::Le},
        {LutHit::Underflow, LutHit::Underflow, LutTable::Lo},
        {LutHit::Overflow, LutHit::Overflow, LutTable::Le},
        {LutHit::Overflow, LutHit::Hit, LutTable::Lo},
        {LutHit::Underflow, LutHit::Overflow, LutTable::Lo},
    };
    LutStatistics sdp, cdp;
    for (const LutOutcome& o : outcomes) {
        sdp.count_sdp(o);
        cdp.count_cdp(o);
    }
    // SDP: every LE hit (1, 2), every LO hit (2, 5), selected hit (1, 2, 5), selected
    // underflow (3), selected overflow (4, 6).
    EXPECT_EQ(sdp, (LutStatistics{2, 2, 1, 2, 3}));
    // CDP: LE only (1), LO only (5), both underflow (3), both overflow (4), the rest (2, 6).
    EXPECT_EQ(cdp, (LutStatistics{1, 1, 1, 1, 2}));
}

TEST(LutStatistics, CountersStopAtTheirMaximum) {
    LutStatistics s;
    s.hybrid = 0xfffffffeu;
    const LutOutcome both_hit{LutHit::Hit, LutHit::Hit, LutTable::Lo};
    s.count_cdp(both_hit);
    EXPECT_EQ(s.hybrid, 0xffffffffu);
    s.count_cdp(both_hit);
    EXPECT_EQ(s.hybrid, 0xffffffffu);
    s.count_sdp(both_hit);
    EXPECT_EQ(s.hybrid, 0xffffffffu);
    EXPECT_EQ(s.le_hit, 1u);
}

TEST(LutStatistics, SelectionRules) {
    LutProgram p;
    p.underflow_priority = LutTable::Lo;
    p.overflow_priority = LutTable::Le;
    p.hybrid_priority = LutTable::Lo;
    EXPECT_EQ(lut_select(p, LutHit::Underflow, LutHit::Underflow).selected, LutTable::Lo);
    EXPECT_EQ(lut_select(p, LutHit::Overflow, LutHit::Overflow).selected, LutTable::Le);
    EXPECT_EQ(lut_select(p, LutHit::Hit, LutHit::Hit).selected, LutTable::Lo);
    EXPECT_EQ(lut_select(p, LutHit::Overflow, LutHit::Underflow).selected, LutTable::Lo);
    EXPECT_EQ(lut_select(p, LutHit::Hit, LutHit::Overflow).selected, LutTable::Le);
    EXPECT_EQ(lut_select(p, LutHit::Underflow, LutHit::Hit).selected, LutTable::Lo);
}

// ---- CDP ----

TEST(LutCdpIndex, ExponentKeeps16FractionBits) {
    const LutProgram p = exponent_le(0, 0);
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, 0, Precision::Int8), underflow());
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, -5, Precision::Int8), underflow());
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, 1, Precision::Int8), hit(0, 0));
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, 3, Precision::Int8), hit(1, 32768));  // 1/2 << 16
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, (1 << 20) + (1 << 19), Precision::Int8),
              hit(20, 32768));
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, (1 << 20) + 15, Precision::Int8),
              hit(20, 0));  // 15 >> 4
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, (1 << 20) + 16, Precision::Int8), hit(20, 1));
}

TEST(LutCdpIndex, ExponentOffsetBoundaries) {
    EXPECT_EQ(cdp_lut_index_int(exponent_le(0, 2), LutTable::Le, 3, Precision::Int16), underflow());
    EXPECT_EQ(cdp_lut_index_int(exponent_le(0, 2), LutTable::Le, 4, Precision::Int16), hit(0, 0));
    const LutProgram p = exponent_le(0, -30);  // 2^34 reaches index 64
    const int64_t two34 = int64_t(1) << 34;
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, two34, Precision::Int16), overflow(64));
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, two34 - 1, Precision::Int16), hit(63, 65535));
}

TEST(LutCdpIndex, StartIsA38BitSignedRegister) {
    LutProgram p = exponent_le((int64_t(1) << 38) - 8, 0);  // the 38-bit pattern of -8
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, -8, Precision::Int16), underflow());
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, 0, Precision::Int16), hit(3, 0));  // d = 8
}

TEST(LutCdpIndex, LinearWithPositiveSelect) {
    LutProgram p;
    p.lo_start = 0;
    p.lo_index_select = 4;
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Lo, 0, Precision::Int8), underflow());
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Lo, 17, Precision::Int8), hit(1, 1 << 12));
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Lo, 4095, Precision::Int8), hit(255, 15 << 12));
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Lo, 4096, Precision::Int8), overflow(256));
    p.lo_index_select = 20;  // more than 16 fraction bits: the lowest ones are dropped
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Lo, 3 * (1 << 20) + (1 << 19) + 15, Precision::Int16),
              hit(3, 32768));
}

TEST(LutCdpIndex, NegativeSelectShiftsLeft) {
    LutProgram p;
    p.le_mode = LutLeMode::Linear;
    p.le_start = p.lo_start = 10;
    p.le_index_select = p.lo_index_select = -2;
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, 11, Precision::Int8), hit(4, 0));
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, 25, Precision::Int8), hit(60, 0));
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Le, 26, Precision::Int8), overflow(64));
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Lo, 10 + 63, Precision::Int8), hit(252, 0));
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Lo, 10 + 64, Precision::Int8), overflow(256));
}

TEST(LutCdpIndex, SelectFieldDecodingDependsOnThePipeline) {
    EXPECT_EQ(cdp_index_select(-3, Precision::Int8), -3);
    EXPECT_EQ(cdp_index_select(31, Precision::Int8), 31);
    EXPECT_EQ(cdp_index_select(32, Precision::Int8), -32);  // bit 5 is the sign on int8
    EXPECT_EQ(cdp_index_select(32, Precision::Int16), 32);
    EXPECT_EQ(cdp_index_select(static_cast<int8_t>(0xc0), Precision::Int8), 192);  // bit 5 clear
    EXPECT_EQ(cdp_index_select(static_cast<int8_t>(0xc0), Precision::Int16), -64);
    EXPECT_EQ(cdp_index_select(62, Precision::Int8), -2);
    EXPECT_EQ(cdp_index_select(62, Precision::Int16), 62);

    LutProgram p;
    p.lo_start = 0;
    p.lo_index_select = 62;
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Lo, 1, Precision::Int8), hit(4, 0));   // select -2
    EXPECT_EQ(cdp_lut_index_int(p, LutTable::Lo, 1, Precision::Int16), hit(0, 0));  // select 62
}

TEST(LutCdpInterpolate, RoundsHalfAwayAndSaturates) {
    EXPECT_EQ(cdp_lut_interpolate_int(100, 200, 32768), 150);
    EXPECT_EQ(cdp_lut_interpolate_int(0, 3, 32768), 2);    // 1.5
    EXPECT_EQ(cdp_lut_interpolate_int(0, -3, 32768), -2);  // -1.5
    EXPECT_EQ(cdp_lut_interpolate_int(-1, 0, 16384), -1);  // -1 + 0.25 = -0.75 -> -1 + 0
    EXPECT_EQ(cdp_lut_interpolate_int(0, 1, 32767), 0);    // just under 0.5
    EXPECT_EQ(cdp_lut_interpolate_int(32767, 32767, 65535), 32767);
    EXPECT_EQ(cdp_lut_interpolate_int(-32768, 32767, 65535), 32766);  // -32768 + 65534.0000...
}

TEST(LutCdpLookup, ExtrapolationRoundsAndSaturatesToInt16) {
    LutProgram p;
    p.le_mode = LutLeMode::Linear;
    p.le_start = 0;
    p.le_end = 64;
    p.le_index_select = 0;
    p.lo_start = 1000;
    p.lo_end = 1256;
    p.lo_index_select = 0;
    p.le[0] = 7;
    p.le[64] = 32000;
    p.le_underflow = {3, 1};
    p.le_overflow = {100, 0};
    // x = -10: both underflow, LE: 7 + (-30 / 2).
    EXPECT_EQ(cdp_lut_lookup_int(p, -10, Precision::Int8).value, 7 - 15);
    EXPECT_EQ(cdp_lut_lookup_int(p, -1, Precision::Int8).value, 7 - 2);  // -1.5 -> -2
    // x = 2000: both overflow, LE: 32000 + (2000 - 64) * 100 saturates.
    EXPECT_EQ(cdp_lut_lookup_int(p, 2000, Precision::Int8).value, 32767);
    // x = 100: LE overflows, LO underflows: hybrid priority (LE): 32000 + 36 * 100 -> 32767.
    EXPECT_EQ(cdp_lut_lookup_int(p, 100, Precision::Int8).outcome,
              (LutOutcome{LutHit::Overflow, LutHit::Underflow, LutTable::Le}));
}

TEST(LutCdpLookup, ExponentUnderflowBiasIncludesOffsetZero) {
    // The same program gives le[0] - 5 on the CDP (bias 2^0 = 1) and le[0] on the SDP.
    LutProgram p = exponent_le(0, 0);
    p.le[0] = 40;
    p.le_underflow = {5, 0};
    p.lo_start = 1000;
    EXPECT_EQ(cdp_lut_lookup_int(p, 0, Precision::Int16).value, 35);
    EXPECT_EQ(sdp_lut_lookup_int(p, 0).value, 40);
    p.le_index_offset = 2;  // bias 4 on both
    EXPECT_EQ(cdp_lut_lookup_int(p, 1, Precision::Int16).value, 40 + (1 - 4) * 5);
    EXPECT_EQ(sdp_lut_lookup_int(p, 1).value, 40 + (1 - 4) * 5);
    p.le_index_offset = -1;  // no bias for negative offsets
    EXPECT_EQ(cdp_lut_lookup_int(p, 0, Precision::Int16).value, 40);
}

TEST(LutCdpLookup, InterpolatesTheSelectedTable) {
    LutProgram p = exponent_le(0, 0);
    p.le[2] = 1000;
    p.le[3] = 600;
    p.lo_start = 1 << 20;  // LO underflows for small sums
    // x = 6: log2 2, fraction (6 - 4) / 4 = 0.5: 1000 - 200.
    const LutIntLookup r = cdp_lut_lookup_int(p, 6, Precision::Int8);
    EXPECT_EQ(r.value, 800);
    EXPECT_EQ(r.outcome, (LutOutcome{LutHit::Hit, LutHit::Underflow, LutTable::Le}));
    // x = 7: fraction 0.75: 1000 - 300.
    EXPECT_EQ(cdp_lut_lookup_int(p, 7, Precision::Int8).value, 700);
}

// ---- fp16 pipelines ----

LutProgram fp_linear_lo(float start, int8_t select) {
    LutProgram p;
    p.lo_start = lut_register_from_float(start);
    p.lo_index_select = select;
    p.le_start = lut_register_from_float(1e30f);  // LE always underflows
    p.underflow_priority = p.hybrid_priority = LutTable::Lo;
    return p;
}

TEST(LutFp, SdpLinearIndexAndInterpolation) {
    LutProgram p = fp_linear_lo(-2.0f, -3);  // 8 entries per unit from -2
    p.lo[9] = 0x3c00;                        // 1.0 at x = -2 + 9/8
    p.lo[10] = 0x4000;                       // 2.0
    p.lo_end = lut_register_from_float(30.0f);
    EXPECT_FLOAT_EQ(sdp_lut_lookup_fp(p, -2.0f + 9.0f / 8).value, 1.0f);
    EXPECT_FLOAT_EQ(sdp_lut_lookup_fp(p, -2.0f + 9.5f / 8).value, 1.5f);
    EXPECT_FLOAT_EQ(sdp_lut_lookup_fp(p, -2.0f + 9.25f / 8).value, 1.25f);
    EXPECT_EQ(sdp_lut_lookup_fp(p, -2.0f).outcome.lo, LutHit::Underflow);  // difference 0
    EXPECT_EQ(sdp_lut_lookup_fp(p, 30.0f).outcome.lo, LutHit::Overflow);   // 32 * 8 = 256
    EXPECT_EQ(sdp_lut_lookup_fp(p, std::nextafter(30.0f, 0.0f)).outcome.lo, LutHit::Hit);
}

TEST(LutFp, SdpExtrapolatesWithAnFp16Slope) {
    LutProgram p = fp_linear_lo(0.0f, 0);
    p.lo[0] = 0x3c00;              // 1.0
    p.lo_underflow = {0x3800, 0};  // slope 0.5
    p.lo[256] = 0x4000;            // 2.0
    p.lo_end = lut_register_from_float(256.0f);
    p.lo_overflow = {static_cast<int16_t>(0xb400), 0};  // -0.25
    p.le_start = lut_register_from_float(1e30f);
    // At 260 LE underflows and LO overflows: hybrid priority, LO.
    EXPECT_FLOAT_EQ(sdp_lut_lookup_fp(p, -4.0f).value, 1.0f - 2.0f);
    EXPECT_FLOAT_EQ(sdp_lut_lookup_fp(p, 260.0f).value, 2.0f - 1.0f);
}

TEST(LutFp, SdpExponentIndexFromTheFp32Exponent) {
    LutProgram p;
    p.le_mode = LutLeMode::Exponent;
    p.le_start = lut_register_from_float(0.0f);
    p.le_index_offset = -10;  // entry 0 at 2^-10
    p.lo_start = lut_register_from_float(1e30f);
    EXPECT_EQ(sdp_lut_lookup_fp(p, 1.0f).outcome.le, LutHit::Hit);
    p.le[10] = 0x3c00;  // 1.0 at 2^0
    p.le[11] = 0x4000;  // 2.0 at 2^1
    EXPECT_FLOAT_EQ(sdp_lut_lookup_fp(p, 1.5f).value, 1.5f);
    EXPECT_EQ(sdp_lut_lookup_fp(p, std::ldexp(1.0f, -11)).outcome.le, LutHit::Underflow);
    EXPECT_EQ(sdp_lut_lookup_fp(p, std::ldexp(1.0f, 54)).outcome.le, LutHit::Overflow);
    EXPECT_EQ(sdp_lut_lookup_fp(p, std::ldexp(1.9f, 53)).outcome.le, LutHit::Hit);
}

TEST(LutFp, SdpWeightsAreRoundedToFp17) {
    // x = 1.3333334f (mantissa 0x2aaaab): index 1, fraction 0x2aaaab << 12. As fp17 the
    // weights keep 11 significant bits, nearest even: f -> 1.0101010101b * 2^-2 = 0.333251953125
    // and 1 - f -> 1.0101010101b * 2^-1 = 0.66650390625; 1 * 0.6665... + 2 * 0.3332... is
    // 1.3330078125, not 4/3.
    LutProgram p = fp_linear_lo(0.0f, 0);
    p.lo[1] = 0x3c00;  // 1.0
    p.lo[2] = 0x4000;  // 2.0
    EXPECT_EQ(sdp_lut_lookup_fp(p, 4.0f / 3.0f).value, 1.3330078125f);
}

TEST(LutFp, CdpOffsetIsRoundedToFp17) {
    // x = 2 - 2^-16: index 1, 16-bit offset 0xffff, which rounds to 1.0 as an fp17: the
    // result is entry 2 exactly.
    LutProgram p = fp_linear_lo(0.0f, 0);
    p.lo[1] = 0x3c00;  // 1.0
    p.lo[2] = 0x4000;  // 2.0
    EXPECT_EQ(cdp_lut_lookup_fp(p, 2.0f - std::ldexp(1.0f, -16)).value, 2.0f);
}

TEST(LutFp, CdpLinearFractionHas16Bits) {
    LutProgram p = fp_linear_lo(0.0f, 0);
    p.lo[1] = 0x3c00;  // 1.0
    p.lo[2] = 0x4000;  // 2.0
    EXPECT_FLOAT_EQ(cdp_lut_lookup_fp(p, 1.5f).value, 1.5f);
    // 1 + 2^-20 keeps no fraction bit: the result is entry 1 exactly.
    EXPECT_FLOAT_EQ(cdp_lut_lookup_fp(p, 1.0f + std::ldexp(1.0f, -20)).value, 1.0f);
}

// ---- any register values ----

// Every field at random over its whole range: the evaluators must stay defined (the
// sanitizer build checks that), select by the priority rules, and a hit must land between
// the two entries it interpolates.
TEST(LutEvaluators, ArbitraryRegistersGiveBoundedHits) {
    auto rng = test::rng_for_test();
    auto any = [&](int64_t lo, int64_t hi) {
        return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    for (int program = 0; program < 300; ++program) {
        LutProgram p;
        for (auto& e : p.le) e = static_cast<int16_t>(any(-32768, 32767));
        for (auto& e : p.lo) e = static_cast<int16_t>(any(-32768, 32767));
        p.le_mode = any(0, 1) ? LutLeMode::Linear : LutLeMode::Exponent;
        p.le_index_offset = static_cast<int8_t>(any(-128, 127));
        p.le_index_select = static_cast<int8_t>(any(-128, 127));
        p.lo_index_select = static_cast<int8_t>(any(-128, 127));
        for (int64_t* r : {&p.le_start, &p.le_end, &p.lo_start, &p.lo_end})
            *r = any(0, 3) ? any(-100000, 100000) : static_cast<int64_t>(rng());
        for (LutSlope* s : {&p.le_underflow, &p.le_overflow, &p.lo_underflow, &p.lo_overflow})
            *s = {static_cast<int16_t>(any(-32768, 32767)), static_cast<int8_t>(any(-128, 127))};
        p.underflow_priority = any(0, 1) ? LutTable::Lo : LutTable::Le;
        p.overflow_priority = any(0, 1) ? LutTable::Lo : LutTable::Le;
        p.hybrid_priority = any(0, 1) ? LutTable::Lo : LutTable::Le;

        for (int i = 0; i < 20; ++i) {
            const int64_t near = (any(0, 1) ? p.le_start : p.lo_start) + any(-70000, 70000);
            const int64_t x = any(0, 1) ? static_cast<int64_t>(rng()) : near;
            const auto x32 = static_cast<int32_t>(x);
            const Precision precision = any(0, 1) ? Precision::Int8 : Precision::Int16;

            const LutIntLookup sdp = sdp_lut_lookup_int(p, x32);
            const LutIntLookup cdp = cdp_lut_lookup_int(p, x, precision);
            EXPECT_EQ(sdp.outcome, lut_select(p, sdp.outcome.le, sdp.outcome.lo));
            EXPECT_EQ(cdp.outcome, lut_select(p, cdp.outcome.le, cdp.outcome.lo));
            EXPECT_GE(cdp.value, -32768);
            EXPECT_LE(cdp.value, 32767);
            const auto bounded = [&](const LutIntLookup& r, const LutIndex& index) {
                if (r.outcome.selected_hit() != LutHit::Hit) return;
                const int16_t* t = r.outcome.selected == LutTable::Le ? p.le.data() : p.lo.data();
                EXPECT_GE(r.value, std::min(t[index.entry], t[index.entry + 1]));
                EXPECT_LE(r.value, std::max(t[index.entry], t[index.entry + 1]));
            };
            bounded(sdp, sdp_lut_index_int(p, sdp.outcome.selected, x32));
            bounded(cdp, cdp_lut_index_int(p, cdp.outcome.selected, x, precision));

            const float xf = std::bit_cast<float>(static_cast<uint32_t>(rng()));
            const LutFpLookup fs = sdp_lut_lookup_fp(p, xf);
            const LutFpLookup fc = cdp_lut_lookup_fp(p, xf);
            EXPECT_EQ(fs.outcome, lut_select(p, fs.outcome.le, fs.outcome.lo));
            EXPECT_EQ(fc.outcome, lut_select(p, fc.outcome.le, fc.outcome.lo));
        }
    }
}

}  // namespace
}  // namespace nvdla::precision
