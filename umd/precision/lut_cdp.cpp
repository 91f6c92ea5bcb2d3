// The CDP LUT, int pipelines, as the nv_full C model computes it (cmod/cdp/NV_NVDLA_cdp.cpp,
// lookup_lut_int8 :1191-1543 and lookup_lut :1548-1933, which agree except for how they read
// the index select fields). Shift counts the C model leaves undefined in C++ (64 and more on
// int64_t, 32 and more on int) are taken modulo the operand width, as x86-64 does.
#include <bit>
#include <cmath>
#include <limits>

#include "nvdla/precision/integer.hpp"
#include "nvdla/precision/lut.hpp"

namespace nvdla::precision {

namespace {

constexpr int kFractionBits = 16;
constexpr unsigned kIntermediateBits = 56;  // INTERP_INTERMIDIATE_BITS(_INT8)

// S_LUT_*_START/END are 38 bits wide (LOW 32 + HIGH 6), signed.
int64_t sign_extend_38(int64_t reg) {
    constexpr uint64_t kMask = (uint64_t(1) << 38) - 1;
    uint64_t v = static_cast<uint64_t>(reg) & kMask;
    if (v & (uint64_t(1) << 37)) v |= ~kMask;
    return static_cast<int64_t>(v);
}

int64_t wrapping_sub(int64_t a, int64_t b) {
    return static_cast<int64_t>(uint64_t(a) - uint64_t(b));
}
int64_t wrapping_mul(int64_t a, int64_t b) {
    return static_cast<int64_t>(uint64_t(a) * uint64_t(b));
}
int64_t shift_left_x86(int64_t v, unsigned count) {
    return static_cast<int64_t>(uint64_t(v) << (count & 63u));
}
int64_t shift_right_x86(int64_t v, unsigned count) {
    return v >> (count & 63u);
}

int slope_shift(int8_t field) {
    const auto bits = static_cast<uint32_t>(static_cast<uint8_t>(field)) & 0x1fu;
    return bits & 0x10u ? static_cast<int>(bits) - 32 : static_cast<int>(bits);
}

// convert(value, shift, bits, true): value / 2^shift in a double, rounded half away from zero
// by adding +-0.5 and truncating, saturated to a signed `bits`-wide integer.
int64_t convert_rounded(int64_t value, int shift, unsigned bits) {
    double v = static_cast<double>(value);
    const bool positive = v > 0;
    v = std::ldexp(v, -shift);  // the C model divides by pow(2, shift): the same exact scaling
    const int exponent = static_cast<int>((std::bit_cast<uint64_t>(v) >> 52) & 0x7ffu) - 1023;
    int64_t out;
    if (exponent > 62) {
        out = positive ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    } else {
        out = static_cast<int64_t>(positive ? v + 0.5 : v - 0.5);
    }
    return saturate(out, bits);
}

LutIndex exponent_index(int64_t offset_from_start, int index_offset) {
    const int log2 = offset_from_start <= 0
                         ? 0
                         : static_cast<int16_t>(std::log2(static_cast<double>(offset_from_start)));
    const int index = log2 - index_offset;
    if (index < 0 || offset_from_start <= 0) return {LutHit::Underflow, 0, 0};
    if (index >= int(kLutLeEntries) - 1) return {LutHit::Overflow, kLutLeEntries - 1, 0};
    // The part above 2^log2, kept to 16 bits like the RTL.
    int64_t fraction = wrapping_sub(offset_from_start, shift_left_x86(1, unsigned(log2)));
    fraction = log2 > kFractionBits ? shift_right_x86(fraction, unsigned(log2 - kFractionBits))
                                    : shift_left_x86(fraction, unsigned(kFractionBits - log2));
    return {LutHit::Hit, uint32_t(index), static_cast<uint64_t>(fraction)};
}

LutIndex linear_index(int64_t offset_from_start, int select, uint32_t last) {
    const int64_t index = select < 0 ? shift_left_x86(offset_from_start, unsigned(-select))
                                     : shift_right_x86(offset_from_start, unsigned(select));
    if (index < 0 || offset_from_start <= 0) return {LutHit::Underflow, 0, 0};
    if (index >= int64_t(last)) return {LutHit::Overflow, last, 0};
    int64_t fraction = 0;
    if (select >= 0) {
        // offset % (1 << select) with an int 1: the count wraps at 32 and 1 << 31 is INT_MIN.
        const auto modulus =
            static_cast<int64_t>(static_cast<int32_t>(uint32_t(1) << (unsigned(select) & 31u)));
        fraction = offset_from_start % modulus;
        fraction = select > kFractionBits
                       ? shift_right_x86(fraction, unsigned(select - kFractionBits))
                       : shift_left_x86(fraction, unsigned(kFractionBits - select));
    }
    return {LutHit::Hit, uint32_t(index), static_cast<uint64_t>(fraction)};
}

// y_edge + convert((x - edge - bias) * scale, shift), saturated to int16.
int16_t extrapolate(int64_t x, int64_t edge, int64_t bias, int16_t y_edge, LutSlope slope) {
    const int64_t distance = wrapping_sub(wrapping_sub(x, edge), bias);
    const int64_t step = convert_rounded(wrapping_mul(distance, slope.scale),
                                         slope_shift(slope.shift), kIntermediateBits);
    return static_cast<int16_t>(convert_rounded(int64_t(y_edge) + step, 0, 16));
}

}  // namespace

LutIndex cdp_lut_index_int(const LutProgram& lut, LutTable table, int64_t x,
                           Precision data_precision) {
    const bool le = table == LutTable::Le;
    const int64_t offset_from_start =
        wrapping_sub(x, sign_extend_38(le ? lut.le_start : lut.lo_start));
    if (le && lut.le_mode == LutLeMode::Exponent)
        return exponent_index(offset_from_start, lut.le_index_offset);
    const int select =
        cdp_index_select(le ? lut.le_index_select : lut.lo_index_select, data_precision);
    return linear_index(offset_from_start, select, le ? kLutLeEntries - 1 : kLutLoEntries - 1);
}

int16_t cdp_lut_interpolate_int(int16_t y0, int16_t y1, uint32_t fraction16) {
    const int64_t step =
        convert_rounded((int64_t(y1) - y0) * int64_t(fraction16), kFractionBits, kIntermediateBits);
    return static_cast<int16_t>(convert_rounded(int64_t(y0) + step, 0, 16));
}

LutIntLookup cdp_lut_lookup_int(const LutProgram& lut, int64_t x, Precision data_precision) {
    const LutIndex le = cdp_lut_index_int(lut, LutTable::Le, x, data_precision);
    const LutIndex lo = cdp_lut_index_int(lut, LutTable::Lo, x, data_precision);
    const LutOutcome outcome = lut_select(lut, le.hit, lo.hit);
    const bool use_le = outcome.selected == LutTable::Le;
    const LutIndex& index = use_le ? le : lo;
    const int16_t* entries = use_le ? lut.le.data() : lut.lo.data();

    int16_t value;
    if (index.hit == LutHit::Hit) {
        value = cdp_lut_interpolate_int(entries[index.entry], entries[index.entry + 1],
                                        uint32_t(index.fraction));
    } else if (index.hit == LutHit::Underflow) {
        // Exponent-mode underflow measures from start + 2^offset, where entry 0 sits.
        int64_t bias = 0;
        if (use_le && lut.le_mode == LutLeMode::Exponent && lut.le_index_offset >= 0)
            bias = shift_left_x86(1, unsigned(lut.le_index_offset));
        const int64_t start = sign_extend_38(use_le ? lut.le_start : lut.lo_start);
        value =
            extrapolate(x, start, bias, entries[0], use_le ? lut.le_underflow : lut.lo_underflow);
    } else {
        const int64_t end = sign_extend_38(use_le ? lut.le_end : lut.lo_end);
        value = extrapolate(x, end, 0, entries[index.entry],
                            use_le ? lut.le_overflow : lut.lo_overflow);
    }
    return {value, outcome};
}

}  // namespace nvdla::precision
