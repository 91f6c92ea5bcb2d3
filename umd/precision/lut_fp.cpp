// The fp16 pipelines' LUTs with the C model's own floating-point arithmetic
// (cmod/hls/include/nvdla_float.h): SDP index and interpolation (sdp_y_idx.cpp, sdp_y_inp.cpp,
// edge operands in hls_wrapper/sdp_hls_wrapper.cpp:347-370) and the CDP's HLS_CDP_lookup_lut
// (hls_wrapper/cdp_hls_wrapper.cpp:170-370).
//
// That arithmetic is not IEEE: additions align the smaller operand by truncating (no sticky
// bit), denormal inputs are read with an implied 1, results below the smallest normal become
// zero, overflow gives the largest finite value, NaN operands pass through. fp17 is 1 sign,
// 6 exponent (bias 31) and 10 mantissa bits. Everything here works on bit patterns.
#include <algorithm>
#include <bit>
#include <cmath>

#include "nvdla/precision/lut.hpp"
#include "nvdla/precision/nvdla_float.hpp"
#include "precision/float_format.hpp"

namespace nvdla::precision {

namespace {

using detail::Format;

constexpr unsigned kSdpFractionBits = 35;
constexpr uint64_t kSdpFractionMask = (uint64_t(1) << kSdpFractionBits) - 1;
constexpr uint32_t kFp17One = 0x7c00;  // 1.0: exponent 31

uint32_t bits_of(float f) {
    return std::bit_cast<uint32_t>(f);
}
float float_of(uint32_t bits) {
    return std::bit_cast<float>(bits);
}
uint32_t register_bits(int64_t reg) {
    return static_cast<uint32_t>(static_cast<uint64_t>(reg));
}
uint16_t entry_bits(int16_t e) {
    return static_cast<uint16_t>(e);
}

// The fp32 pattern of pow(2, offset) rounded to float, as the wrappers compute the bias.
uint32_t power_of_two_bits(int offset) {
    return bits_of(static_cast<float>(std::ldexp(1.0, offset)));
}

LutIndex sdp_fp_index(const LutProgram& lut, LutTable table, uint32_t x) {
    const bool le = table == LutTable::Le;
    const uint32_t difference = fp32_sub(x, register_bits(le ? lut.le_start : lut.lo_start));
    const auto d = Format<8, 23>::of(difference);
    if (d.sign || d.zero() || d.nan()) return {LutHit::Underflow, 0, 0};

    if (le && lut.le_mode == LutLeMode::Exponent) {
        const int exponent = int(d.expo) - 127;  // denormals read as 2^-127 * 1.mantissa
        if (exponent < lut.le_index_offset) return {LutHit::Underflow, 0, 0};
        const int index = exponent - lut.le_index_offset;
        if (index >= int(kLutLeEntries) - 1) return {LutHit::Overflow, kLutLeEntries - 1, 0};
        return {LutHit::Hit, uint32_t(index), uint64_t(d.mant) << (kSdpFractionBits - 23)};
    }

    // FpFloatToIntFrac: 1.mantissa * 2^(exponent - select) split into a saturating 9-bit
    // integer and a 35-bit fraction. The unbiased exponent is an 8-bit signed value there, so
    // infinity (exponent 128) wraps to -128.
    const uint32_t last = le ? kLutLeEntries - 1 : kLutLoEntries - 1;
    const int select = le ? lut.le_index_select : lut.lo_index_select;
    const int unbiased = static_cast<int8_t>(static_cast<uint8_t>(d.expo - 127));
    const int left = unbiased - select - 23;
    const uint64_t significand = d.mant | (uint32_t(1) << 23);
    uint64_t integer = 511;  // left >= 0: significand >= 2^23 saturates
    uint64_t fraction = 0;
    if (left < 0) {
        integer = -left >= 64 ? 0 : std::min<uint64_t>(significand >> -left, 511);
        const int up = int(kSdpFractionBits) + left;
        if (up >= 0) {
            fraction = (significand << up) & kSdpFractionMask;
        } else {
            fraction = -up >= 64 ? 0 : significand >> -up;
        }
    }
    if (integer >= last) return {LutHit::Overflow, last, 0};
    return {LutHit::Hit, uint32_t(integer), fraction};
}

// HLS_CDP_lookup_lut's index: also returns the 16-bit offset it converts to fp17.
LutIndex cdp_fp_index(const LutProgram& lut, LutTable table, uint32_t x, uint32_t* difference) {
    const bool le = table == LutTable::Le;
    const uint32_t last = le ? kLutLeEntries - 1 : kLutLoEntries - 1;
    *difference = fp32_sub(x, register_bits(le ? lut.le_start : lut.lo_start));
    const float d = float_of(*difference);
    if (!(d > 0)) return {LutHit::Underflow, 0, 0};  // <= 0 or NaN

    if (le && lut.le_mode == LutLeMode::Exponent) {
        const int index = int((*difference >> 23) & 0xffu) - 127 - lut.le_index_offset;
        if (index < 0) return {LutHit::Underflow, 0, 0};
        if (index >= int(last)) return {LutHit::Overflow, last, 0};
        return {LutHit::Hit, uint32_t(index),
                (*difference >> 7) & 0xffffu};  // top 16 mantissa bits
    }
    const int select = le ? lut.le_index_select : lut.lo_index_select;
    const auto shifted = static_cast<float>(static_cast<double>(d) * std::ldexp(1.0, -select));
    if (shifted >= static_cast<float>(last)) return {LutHit::Overflow, last, 0};
    const auto index = static_cast<int32_t>(shifted);
    const auto offset = static_cast<uint16_t>((shifted - static_cast<float>(index)) * 65536.0f);
    return {LutHit::Hit, uint32_t(index), offset};
}

}  // namespace

LutFpLookup sdp_lut_lookup_fp(const LutProgram& lut, float x_value) {
    const uint32_t x = bits_of(x_value);
    const LutIndex le = sdp_fp_index(lut, LutTable::Le, x);
    const LutIndex lo = sdp_fp_index(lut, LutTable::Lo, x);
    const LutOutcome outcome = lut_select(lut, le.hit, lo.hit);
    const bool use_le = outcome.selected == LutTable::Le;
    const LutIndex& index = use_le ? le : lo;
    const int16_t* entries = use_le ? lut.le.data() : lut.lo.data();

    uint32_t result;
    if (index.hit == LutHit::Hit) {
        // y0 * (1 - f) + y1 * f with both weights converted to fp17.
        const uint64_t f = index.fraction & kSdpFractionMask;
        const uint32_t w0 =
            f == 0 ? kFp17One
                   : fraction_to_fp17((uint64_t(1) << kSdpFractionBits) - f, kSdpFractionBits);
        const uint32_t w1 = fraction_to_fp17(f, kSdpFractionBits);
        const uint32_t y0 = fp16_to_fp17(entry_bits(entries[index.entry]));
        const uint32_t y1 = fp16_to_fp17(entry_bits(entries[index.entry + 1]));
        result = fp17_add(fp17_mul(w0, y0), fp17_mul(w1, y1));
    } else {
        // y_edge + (x - (edge + bias)) * slope; bias 2^offset for an exponent LE underflow.
        const bool under = index.hit == LutHit::Underflow;
        const int64_t edge =
            use_le ? (under ? lut.le_start : lut.le_end) : (under ? lut.lo_start : lut.lo_end);
        const LutSlope& slope = use_le ? (under ? lut.le_underflow : lut.le_overflow)
                                       : (under ? lut.lo_underflow : lut.lo_overflow);
        const bool biased = use_le && under && lut.le_mode == LutLeMode::Exponent;
        const uint32_t origin =
            fp32_add(register_bits(edge), biased ? power_of_two_bits(lut.le_index_offset) : 0);
        const uint32_t distance = fp32_to_fp17(fp32_sub(x, origin));
        const uint32_t step = fp17_mul(distance, fp16_to_fp17(entry_bits(slope.scale)));
        result = fp17_add(fp16_to_fp17(entry_bits(entries[index.entry])), step);
    }
    return {float_of(fp17_to_fp32(result)), outcome};
}

LutFpLookup cdp_lut_lookup_fp(const LutProgram& lut, float x_value) {
    const uint32_t x = bits_of(x_value);
    uint32_t le_difference, lo_difference;
    const LutIndex le = cdp_fp_index(lut, LutTable::Le, x, &le_difference);
    const LutIndex lo = cdp_fp_index(lut, LutTable::Lo, x, &lo_difference);
    const LutOutcome outcome = lut_select(lut, le.hit, lo.hit);
    const bool use_le = outcome.selected == LutTable::Le;
    const LutIndex& index = use_le ? le : lo;
    const int16_t* entries = use_le ? lut.le.data() : lut.lo.data();

    uint32_t result;
    if (index.hit == LutHit::Hit) {
        // y0 + (y1 - y0) * offset, the difference taken in fp32.
        const uint32_t y0 = entry_bits(entries[index.entry]);
        const uint32_t y1 = entry_bits(entries[index.entry + 1]);
        const uint32_t difference =
            fp32_to_fp17(fp32_sub(fp16_to_fp32(uint16_t(y1)), fp16_to_fp32(uint16_t(y0))));
        const uint32_t step = fp17_mul(difference, fraction_to_fp17(index.fraction, 16));
        result = fp17_add(step, fp16_to_fp17(uint16_t(y0)));
    } else {
        const bool under = index.hit == LutHit::Underflow;
        const LutSlope& slope = use_le ? (under ? lut.le_underflow : lut.le_overflow)
                                       : (under ? lut.lo_underflow : lut.lo_overflow);
        uint32_t distance;
        if (!under) {
            distance = fp32_sub(x, register_bits(use_le ? lut.le_end : lut.lo_end));
        } else if (use_le && lut.le_mode == LutLeMode::Exponent) {
            const uint32_t bias =
                lut.le_index_offset <= -127 ? 0 : power_of_two_bits(lut.le_index_offset);
            distance = fp32_sub(x, fp32_add(register_bits(lut.le_start), bias));
        } else {
            distance = use_le ? le_difference : lo_difference;
        }
        const uint32_t step =
            fp17_mul(fp32_to_fp17(distance), fp16_to_fp17(entry_bits(slope.scale)));
        result = fp17_add(step, fp16_to_fp17(entry_bits(entries[index.entry])));
    }
    return {float_of(fp17_to_fp32(result)), outcome};
}

}  // namespace nvdla::precision
