// The SDP Y-stage LUT, int pipeline, as the nv_full C model computes it:
// index (cmod/hls/sdp/sdp_y_idx.cpp), selection and edge operands
// (hls_wrapper/sdp_hls_wrapper.cpp:336-388), interpolation (cmod/hls/sdp/sdp_y_inp.cpp).
#include <algorithm>
#include <bit>

#include "nvdla/precision/integer.hpp"
#include "nvdla/precision/lut.hpp"

namespace nvdla::precision {

namespace {

constexpr unsigned kFractionBits = 35;
constexpr uint64_t kFractionMask = (uint64_t(1) << kFractionBits) - 1;
constexpr uint64_t kIndexMax = 511;  // the linear index is a saturating 9-bit value

// The registers are 32 bits wide on the SDP: only the low 32 bits of start/end count.
int32_t low32(int64_t reg) {
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(reg)));
}

// A slope shift is a signed 5-bit field.
int slope_shift(int8_t field) {
    const auto bits = static_cast<uint32_t>(static_cast<uint8_t>(field)) & 0x1fu;
    return bits & 0x10u ? static_cast<int>(bits) - 32 : static_cast<int>(bits);
}

LutIndex exponent_index(uint32_t offset_from_start, int index_offset) {
    const int log2 = std::bit_width(offset_from_start) - 1;  // 0..31
    if (log2 < index_offset) return {LutHit::Underflow, 0, 0};
    const int index = log2 - index_offset;
    if (index >= int(kLutLeEntries) - 1) return {LutHit::Overflow, kLutLeEntries - 1, 0};
    const uint64_t below_leading_one = offset_from_start - (uint32_t(1) << log2);
    return {LutHit::Hit, uint32_t(index), below_leading_one << (kFractionBits - unsigned(log2))};
}

LutIndex linear_index(uint32_t offset_from_start, int select, uint32_t last, bool le_table) {
    uint64_t index;
    if (select >= 0) {
        index = select >= 32 ? 0 : offset_from_start >> select;
    } else {
        const int left = -select;  // offset_from_start >= 1, so 9 or more bits saturate
        index = left >= 9 ? kIndexMax
                          : std::min<uint64_t>(uint64_t(offset_from_start) << left, kIndexMax);
    }
    if (index >= last) return {LutHit::Overflow, last, 0};

    // The bits shifted out, moved up to 35 bits. The C model masks with 2^select - 1 computed
    // in 64 bits (all ones for a negative or >= 64 select) and the LE path holds the masked
    // value in a signed 32-bit variable before widening it to 35 bits.
    uint64_t shifted_out = offset_from_start;
    if (select >= 0 && select < 64) shifted_out &= (uint64_t(1) << select) - 1;
    if (le_table) {
        const auto as_int32 = static_cast<int32_t>(static_cast<uint32_t>(shifted_out));
        shifted_out = static_cast<uint64_t>(static_cast<int64_t>(as_int32)) & kFractionMask;
    }
    const int right = select - int(kFractionBits);
    uint64_t fraction;
    if (right >= 0) {
        fraction = right >= 64 ? 0 : shifted_out >> right;
    } else {
        fraction = -right >= int(kFractionBits) ? 0 : (shifted_out << -right) & kFractionMask;
    }
    return {LutHit::Hit, uint32_t(index), fraction};
}

}  // namespace

LutIndex sdp_lut_index_int(const LutProgram& lut, LutTable table, int32_t x) {
    const bool le = table == LutTable::Le;
    const int32_t start = low32(le ? lut.le_start : lut.lo_start);
    if (x <= start) return {LutHit::Underflow, 0, 0};
    const auto offset_from_start = static_cast<uint32_t>(int64_t(x) - start);  // 1 .. 2^32 - 1
    if (le && lut.le_mode == LutLeMode::Exponent)
        return exponent_index(offset_from_start, lut.le_index_offset);
    const int select = le ? lut.le_index_select : lut.lo_index_select;
    return linear_index(offset_from_start, select, le ? kLutLeEntries - 1 : kLutLoEntries - 1, le);
}

int32_t sdp_lut_interpolate_int(int16_t y0, int16_t y1, uint64_t fraction35) {
    const auto f = static_cast<int64_t>(fraction35 & kFractionMask);
    const int64_t weighted = int64_t(y0) * ((int64_t(1) << kFractionBits) - f) + int64_t(y1) * f;
    return static_cast<int32_t>(shift_right_round_saturate(weighted, kFractionBits, 32));
}

int32_t sdp_lut_extrapolate_int(int32_t x, int32_t edge, uint32_t bias, int16_t y_edge,
                                LutSlope slope) {
    const int64_t distance = int64_t(x) - (int64_t(bias) + edge);  // 34 bits
    const int64_t product = distance * slope.scale;                // 50 bits
    const int64_t step = signed_shift_right_saturate(product, slope_shift(slope.shift), 32);
    return static_cast<int32_t>(saturate(int64_t(y_edge) + step, 32));
}

uint32_t sdp_lut_underflow_bias(const LutProgram& lut) {
    // The C model shifts a uint32_t by the offset when it is positive; x86-64 takes the count
    // modulo 32, so offsets of 32 and more wrap (every input underflows there anyway).
    if (lut.le_mode != LutLeMode::Exponent || lut.le_index_offset <= 0) return 0;
    return uint32_t(1) << (unsigned(lut.le_index_offset) & 31u);
}

LutIntLookup sdp_lut_lookup_int(const LutProgram& lut, int32_t x) {
    const LutIndex le = sdp_lut_index_int(lut, LutTable::Le, x);
    const LutIndex lo = sdp_lut_index_int(lut, LutTable::Lo, x);
    const LutOutcome outcome = lut_select(lut, le.hit, lo.hit);
    const bool use_le = outcome.selected == LutTable::Le;
    const LutIndex& index = use_le ? le : lo;
    const int16_t* entries = use_le ? lut.le.data() : lut.lo.data();

    int32_t value;
    if (index.hit == LutHit::Hit) {
        value =
            sdp_lut_interpolate_int(entries[index.entry], entries[index.entry + 1], index.fraction);
    } else {
        const bool under = index.hit == LutHit::Underflow;
        const int64_t edge_reg =
            use_le ? (under ? lut.le_start : lut.le_end) : (under ? lut.lo_start : lut.lo_end);
        const LutSlope& slope = use_le ? (under ? lut.le_underflow : lut.le_overflow)
                                       : (under ? lut.lo_underflow : lut.lo_overflow);
        const uint32_t bias = use_le && under ? sdp_lut_underflow_bias(lut) : 0;
        value = sdp_lut_extrapolate_int(x, low32(edge_reg), bias, entries[index.entry], slope);
    }
    return {value, outcome};
}

}  // namespace nvdla::precision
