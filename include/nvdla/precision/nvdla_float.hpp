// The floating-point conversions of NVDLA's datapath, on bit patterns, as the nv_full C model
// does them (cmod/hls/include/nvdla_float.h). They are not IEEE:
//  - there is no infinity on the way out: overflow and infinity become the largest finite value
//    of the output format with the input's sign (fp16 0x7bff, fp17 0xfbff, fp32 0x7f7fffff);
//  - a NaN keeps its sign and the *low* mantissa bits that fit the output, so the fp32 quiet
//    NaN 0x7fc00000 becomes 0x7c00 (the fp16 infinity pattern) and fp16 0x7e00 becomes fp32
//    0x7f800200;
//  - rounding is to nearest even; fp16 denormals are produced and kept; fp17 has none.
// fp17 is the internal format of the CDP/PDP/SDP LUT and CSC Winograd paths: 1 sign bit,
// 6 exponent bits (bias 31) and 10 mantissa bits, held in the low 17 bits of a uint32_t.
//
// The exact IEEE conversions are nvdla::fp16::from_float / to_float (fp16.hpp).
#pragma once

#include <bit>
#include <cstdint>
#include <span>

#include "nvdla/api.hpp"
#include "nvdla/status.hpp"

namespace nvdla::fp17 {

inline constexpr uint32_t kSignBit = 0x10000;
inline constexpr uint32_t kExponentMask = 0xfc00;  // bits 15..10
inline constexpr uint32_t kMantissaMask = 0x03ff;
inline constexpr int kBias = 31;
inline constexpr uint32_t kMaxFinite = 0xfbff;  // (2 - 2^-10) * 2^31
inline constexpr uint32_t kPosInf = 0xfc00;     // accepted on input, never produced

constexpr bool is_nan(uint32_t f) {
    return (f & kExponentMask) == kExponentMask && (f & kMantissaMask) != 0;
}
constexpr bool is_inf(uint32_t f) {
    return (f & 0xffff) == kPosInf;
}

}  // namespace nvdla::fp17

namespace nvdla::precision {

inline constexpr uint32_t kFp32MaxFinite = 0x7f7fffff;
inline constexpr uint16_t kFp16MaxFinite = 0x7bff;  // 65504

constexpr bool fp32_is_nan(uint32_t f) {
    return (f & 0x7f800000u) == 0x7f800000u && (f & 0x7fffffu) != 0;
}
constexpr bool fp16_is_nan(uint16_t h) {
    return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}

namespace detail {

// v / 2^shift rounded to nearest, ties to even (shift >= 1).
constexpr uint64_t shift_right_nearest_even(uint64_t v, unsigned shift) {
    if (shift >= 64) return 0;
    const uint64_t q = v >> shift;
    const uint64_t rest = v & ((uint64_t(1) << shift) - 1);
    const uint64_t half = uint64_t(1) << (shift - 1);
    return q + ((rest > half || (rest == half && (q & 1))) ? 1 : 0);
}

}  // namespace detail

// Fp32ToFp16: round to nearest even, fp16 denormals produced, |x| >= 65520 and infinity give
// +-65504, fp32 denormals give +-0, NaN -> sign | 0x7c00 | (mantissa & 0x3ff).
constexpr uint16_t fp32_to_fp16(uint32_t f) {
    const auto sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
    const uint32_t exponent = (f >> 23) & 0xffu;
    const uint32_t mantissa = f & 0x7fffffu;
    if (exponent == 0xff && mantissa != 0)
        return static_cast<uint16_t>(sign | 0x7c00u | (mantissa & 0x3ffu));
    if (exponent >= 143) return sign | kFp16MaxFinite;  // 2^16 and up, infinity
    if (exponent < 102) return sign;                    // below 2^-25: rounds to zero
    const uint64_t significand = mantissa | 0x800000u;
    if (exponent <= 112) {  // below 2^-14: an fp16 denormal in units of 2^-24 (1024 = 2^-14)
        const uint64_t units = detail::shift_right_nearest_even(significand, 126 - exponent);
        return static_cast<uint16_t>(sign | units);
    }
    // A carry out of the rounded mantissa steps into the exponent field by itself.
    const uint64_t rounded = detail::shift_right_nearest_even(significand, 13);  // 1024..2048
    const uint64_t magnitude = (uint64_t(exponent - 112) << 10) + rounded - 1024;
    return static_cast<uint16_t>(sign | (magnitude >= 0x7c00 ? kFp16MaxFinite : magnitude));
}

// Fp16ToFp32: exact, denormals kept; infinity -> +-0x7f7fffff; NaN -> sign | 0x7f800000 |
// (mantissa unshifted, in the low bits).
constexpr uint32_t fp16_to_fp32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    const uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f) return sign | (mantissa ? 0x7f800000u | mantissa : kFp32MaxFinite);
    if (exponent == 0) {
        if (mantissa == 0) return sign;
        const auto top = static_cast<uint32_t>(std::bit_width(mantissa)) - 1;  // value 2^(top-24)
        return sign | ((top + 103) << 23) | ((mantissa << (23 - top)) & 0x7fffffu);
    }
    return sign | ((exponent + 112) << 23) | (mantissa << 13);
}

// Fp16ToFp17: exact (fp16 denormals become fp17 normals); infinity -> +-0xfbff; NaN keeps its
// mantissa.
constexpr uint32_t fp16_to_fp17(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 1;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    const uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f) return sign | (mantissa ? fp17::kPosInf | mantissa : fp17::kMaxFinite);
    if (exponent == 0) {
        if (mantissa == 0) return sign;
        const auto top = static_cast<uint32_t>(std::bit_width(mantissa)) - 1;
        return sign | ((top + 7) << 10) | ((mantissa << (10 - top)) & 0x3ffu);
    }
    return sign | ((exponent + 16) << 10) | mantissa;
}

// Fp17ToFp16: below 2^-14 rounds to nearest even into fp16 denormals, below 2^-25 gives +-0;
// 2^16 and up (and infinity) -> +-65504; NaN keeps its mantissa.
constexpr uint16_t fp17_to_fp16(uint32_t f) {
    const auto sign = static_cast<uint16_t>((f >> 1) & 0x8000u);
    const uint32_t exponent = (f >> 10) & 0x3fu;
    const uint32_t mantissa = f & 0x3ffu;
    if (exponent == 0x3f && mantissa != 0) return static_cast<uint16_t>(sign | 0x7c00u | mantissa);
    if (exponent >= 47) return sign | kFp16MaxFinite;
    if (exponent < 6) return sign;
    if (exponent <= 16) {
        const uint64_t units = detail::shift_right_nearest_even(mantissa | 0x400u, 17 - exponent);
        return static_cast<uint16_t>(sign | units);
    }
    return static_cast<uint16_t>(sign | ((exponent - 16) << 10) | mantissa);
}

// Fp17ToFp32: exact; infinity -> +-0x7f7fffff; NaN keeps its mantissa in the low bits. fp17 has
// no denormals: exponent field 0 with a non-zero mantissa reads as 1.m * 2^-31.
constexpr uint32_t fp17_to_fp32(uint32_t f) {
    const uint32_t sign = (f & fp17::kSignBit) << 15;
    const uint32_t exponent = (f >> 10) & 0x3fu;
    const uint32_t mantissa = f & 0x3ffu;
    if (exponent == 0x3f) return sign | (mantissa ? 0x7f800000u | mantissa : kFp32MaxFinite);
    if (exponent == 0 && mantissa == 0) return sign;
    return sign | ((exponent + 96) << 23) | (mantissa << 13);
}

// Fp32ToFp17: round to nearest even; no denormals, so below 2^-30 gives +-0 unless it rounds up
// to 2^-30; overflow and infinity -> +-0xfbff; NaN -> sign | 0xfc00 | (mantissa & 0x3ff).
constexpr uint32_t fp32_to_fp17(uint32_t f) {
    const uint32_t sign = (f >> 15) & fp17::kSignBit;
    const uint32_t exponent = (f >> 23) & 0xffu;
    const uint32_t mantissa = f & 0x7fffffu;
    if (exponent == 0xff && mantissa != 0) return sign | fp17::kPosInf | (mantissa & 0x3ffu);
    if (exponent >= 159) return sign | fp17::kMaxFinite;  // 2^32 and up, infinity
    if (exponent < 86) return sign;
    const uint64_t significand = mantissa | 0x800000u;
    if (exponent <= 96) {  // below 2^-30, in units of 2^-40 (1024 = 2^-30)
        const uint64_t units = detail::shift_right_nearest_even(significand, 110 - exponent);
        return sign | (units == 1024 ? 0x400u : 0u);
    }
    const uint64_t rounded = detail::shift_right_nearest_even(significand, 13);
    const uint64_t magnitude = (uint64_t(exponent - 96) << 10) + rounded - 1024;
    return sign | static_cast<uint32_t>(magnitude >= fp17::kPosInf ? fp17::kMaxFinite : magnitude);
}

// Fp16ToInt16: round half away from zero (2.5 -> 3, -2.5 -> -3), saturate to int16 (infinity
// too), NaN -> -32768.
constexpr int16_t fp16_to_int16(uint16_t h) {
    if (fp16_is_nan(h)) return INT16_MIN;
    const bool negative = (h & 0x8000u) != 0;
    const int exponent = (h >> 10) & 0x1f;
    // The model always sets the implied one; for exponent 0 the value stays below 0.5 anyway.
    const uint64_t significand = (h & 0x3ffu) | 0x400u;
    uint64_t magnitude;  // round(significand * 2^(exponent - 25))
    if (exponent >= 25) {
        magnitude = significand << (exponent - 25);
    } else {
        const unsigned shift = unsigned(25 - exponent);
        magnitude = (significand + (uint64_t(1) << (shift - 1))) >> shift;
    }
    if (magnitude > 32767) return negative ? INT16_MIN : INT16_MAX;
    return static_cast<int16_t>(negative ? -int32_t(magnitude) : int32_t(magnitude));
}

// Int16ToFp16 / Int17ToFp16 (the CDMA and SDP convertors' int -> fp16): round to nearest even,
// |x| >= 65520 -> +-65504. Defined for every int32; the hardware feeds it 16 or 17 bits.
constexpr uint16_t int_to_fp16(int32_t x) {
    if (x == 0) return 0;
    const uint16_t sign = x < 0 ? 0x8000 : 0;
    const uint64_t magnitude = x < 0 ? uint64_t(-int64_t(x)) : uint64_t(x);
    const auto top = static_cast<unsigned>(std::bit_width(magnitude)) - 1;  // value 2^top * 1.m
    if (top <= 10) {                                                        // exact
        const uint64_t mantissa = (magnitude << (10 - top)) & 0x3ffu;
        return static_cast<uint16_t>(sign | ((top + 15) << 10) | mantissa);
    }
    const uint64_t rounded = detail::shift_right_nearest_even(magnitude, top - 10);  // 1024..2048
    const uint64_t bits = (uint64_t(top + 15) << 10) + rounded - 1024;
    return static_cast<uint16_t>(sign | (bits >= 0x7c00 ? kFp16MaxFinite : bits));
}

// The NAN_TO_ZERO flush (SDP D_FEATURE_MODE_CFG, CDMA/PDP/CDP D_NAN_FLUSH_TO_ZERO): NaN -> +0.
constexpr uint16_t fp16_flush_nan(uint16_t h) {
    return fp16_is_nan(h) ? 0 : h;
}
constexpr uint32_t fp32_flush_nan(uint32_t f) {
    return fp32_is_nan(f) ? 0 : f;
}

// FpMax / FpMin (FpCmp, nvdla_float.h:1183-1276) on fp32 patterns: sign first, then the
// magnitude fields as unsigned integers (infinity is the largest, +0 is above -0); a NaN
// operand is the result, the first one when both are.
constexpr uint32_t fp32_max(uint32_t a, uint32_t b) {
    if (fp32_is_nan(a)) return a;
    if (fp32_is_nan(b)) return b;
    const bool a_negative = (a >> 31) != 0, b_negative = (b >> 31) != 0;
    const uint32_t a_magnitude = a & 0x7fffffffu, b_magnitude = b & 0x7fffffffu;
    bool a_greater;
    if (a_negative != b_negative) {
        a_greater = !a_negative;
    } else {
        a_greater = a_negative ? a_magnitude <= b_magnitude : a_magnitude > b_magnitude;
    }
    return a_greater ? a : b;
}
constexpr uint32_t fp32_min(uint32_t a, uint32_t b) {
    if (fp32_is_nan(a)) return a;
    if (fp32_is_nan(b)) return b;
    return fp32_max(a, b) == a ? b : a;
}

// The same FpMax / FpMin on fp16 patterns (the PDP's fp16 max and min pooling): the order is
// the fp32 one, fp16 -> fp32 being exact and monotonic (infinity above 65504, +0 above -0),
// and a NaN operand is the result, the first one when both are.
constexpr uint16_t fp16_max(uint16_t a, uint16_t b) {
    if (fp16_is_nan(a)) return a;
    if (fp16_is_nan(b)) return b;
    return fp32_max(fp16_to_fp32(a), fp16_to_fp32(b)) == fp16_to_fp32(a) ? a : b;
}
constexpr uint16_t fp16_min(uint16_t a, uint16_t b) {
    if (fp16_is_nan(a)) return a;
    if (fp16_is_nan(b)) return b;
    return fp16_max(a, b) == a ? b : a;
}

// FpRelu (nvdla_float.h:1413): a NaN or a value with a clear sign bit passes, anything else
// (-0 included) becomes +0.
constexpr uint32_t fp32_relu(uint32_t f) {
    return fp32_is_nan(f) || (f >> 31) == 0 ? f : 0;
}

// Element-wise fp32 -> fp16 and fp16 -> fp32 of whole buffers, as the datapath converts them.
// Fails, writing nothing, when the sizes differ.
NVDLA_API Status fp32_to_fp16(std::span<const float> in, std::span<uint16_t> out);
NVDLA_API Status fp16_to_fp32(std::span<const uint16_t> in, std::span<float> out);

// The datapath's arithmetic (FpAdd, FpMul of the C model) on fp17 (low 17 bits) and fp32 bit
// patterns: the smaller addend is aligned by truncation, denormal inputs read with an implied
// one, results below the smallest normal flush to zero, overflow saturates to the largest
// finite value, a NaN operand is returned as it is.
NVDLA_API uint32_t fp17_add(uint32_t a, uint32_t b);
NVDLA_API uint32_t fp17_mul(uint32_t a, uint32_t b);
NVDLA_API uint32_t fp32_add(uint32_t a, uint32_t b);
NVDLA_API uint32_t fp32_sub(uint32_t a, uint32_t b);
NVDLA_API uint32_t fp32_mul(uint32_t a, uint32_t b);
// FpFractionToFloat: fraction / 2^width (the low `width` bits of fraction) as fp17, nearest even.
NVDLA_API uint32_t fraction_to_fp17(uint64_t fraction, unsigned width);

}  // namespace nvdla::precision
