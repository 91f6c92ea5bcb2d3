// IEEE 754 binary16 ("fp16") conversions, bit patterns in uint16_t.
//
// These are the exact IEEE conversions (round to nearest even, denormals kept, overflow to
// infinity, NaN stays NaN and is quietened). The NVDLA datapath's own variants (saturation to
// +-65504, the NaN mantissa quirk, fp17) are in nvdla/precision/nvdla_float.hpp.
#pragma once

#include <bit>
#include <cstdint>
#include <span>

#include "nvdla/api.hpp"

namespace nvdla::fp16 {

inline constexpr uint16_t kMaxFinite = 0x7bff;  // 65504
inline constexpr uint16_t kPosInf = 0x7c00;
inline constexpr uint16_t kNegInf = 0xfc00;
inline constexpr uint16_t kQuietNaN = 0x7e00;

constexpr bool is_nan(uint16_t h) {
    return (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0;
}
constexpr bool is_inf(uint16_t h) {
    return (h & 0x7fff) == 0x7c00;
}
constexpr bool is_denormal(uint16_t h) {
    return (h & 0x7c00) == 0 && (h & 0x03ff) != 0;
}

// float -> fp16, round to nearest even.
constexpr uint16_t from_float(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) {  // infinity or NaN
        if (a == 0x7f800000u) return sign | kPosInf;
        return static_cast<uint16_t>(sign | kQuietNaN | ((a >> 13) & 0x3ffu));
    }
    if (a >= 0x477ff000u) return sign | kPosInf;  // >= 65520 rounds to infinity
    if (a < 0x38800000u) {                        // below 2^-14: denormal or zero
        if (a <= 0x33000000u) return sign;        // <= 2^-25 rounds (to even) to zero
        const uint32_t exponent = a >> 23;
        const uint32_t mantissa = (a & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126 - exponent;  // value / 2^-24 = mantissa >> shift
        uint32_t q = mantissa >> shift;
        const uint32_t rest = mantissa & ((1u << shift) - 1);
        const uint32_t half = 1u << (shift - 1);
        if (rest > half || (rest == half && (q & 1))) ++q;
        return static_cast<uint16_t>(sign | q);
    }
    const uint32_t rounded = a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u;  // rebias 127 -> 15
    return static_cast<uint16_t>(sign | (rounded >> 13));
}

// fp16 -> float, exact (NaN is returned quiet, payload kept).
constexpr float to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f) {
        const uint32_t quiet = mantissa ? 0x400000u : 0;
        return std::bit_cast<float>(sign | 0x7f800000u | quiet | (mantissa << 13));
    }
    if (exponent == 0) {
        if (mantissa == 0) return std::bit_cast<float>(sign);
        exponent = 113;  // 127 - 15 + 1, normalised below
        while (!(mantissa & 0x400u)) {
            mantissa <<= 1;
            --exponent;
        }
        mantissa &= 0x3ffu;
        return std::bit_cast<float>(sign | (exponent << 23) | (mantissa << 13));
    }
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// Bulk conversions; use the CPU's F16C instructions when it has them, bit-identical to the
// scalar functions above. in and out must have the same size.
NVDLA_API void from_float(std::span<const float> in, std::span<uint16_t> out);
NVDLA_API void to_float(std::span<const uint16_t> in, std::span<float> out);

}  // namespace nvdla::fp16
