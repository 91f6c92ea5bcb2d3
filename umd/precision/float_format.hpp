// Internal: bit-level views of the C model's floating-point formats (cmod/hls/include/
// nvdla_float.h) shared by the arithmetic and the LUT code of the precision library.
#pragma once

#include <bit>
#include <cstdint>

namespace nvdla::precision::detail {

template <unsigned E, unsigned M>
struct Format {
    static constexpr uint32_t kExpoMax = (1u << E) - 1;
    static constexpr uint32_t kBias = (1u << (E - 1)) - 1;
    static constexpr uint32_t kMantMask = (1u << M) - 1;
    uint32_t sign, expo, mant;

    static Format of(uint32_t bits) {
        return {(bits >> (E + M)) & 1u, (bits >> M) & kExpoMax, bits & kMantMask};
    }
    uint32_t bits() const { return (sign << (E + M)) | (expo << M) | mant; }
    bool zero() const { return expo == 0 && mant == 0; }
    bool nan() const { return expo == kExpoMax && mant != 0; }
    bool inf() const { return expo == kExpoMax && mant == 0; }
    uint64_t with_leading_one() const { return (zero() ? 0 : uint64_t(1) << M) | mant; }
    // SetToInf: the largest finite value, sign kept.
    void saturate() {
        expo = kExpoMax - 1;
        mant = kMantMask;
    }
};

constexpr uint64_t low_bits(unsigned n) {
    return n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
}

// Leading zeros of v as a `width`-bit value (width if v is 0).
inline unsigned leading_zeros(uint64_t v, unsigned width) {
    return v == 0 ? width : width - unsigned(std::bit_width(v));
}

// FpMantRNE: the top `out` of `in` bits, rounded to nearest even; *overflow when the kept
// bits were all ones and rounded up (the result wraps to 0).
inline uint64_t round_top_bits(uint64_t v, unsigned in, unsigned out, bool* overflow) {
    v &= low_bits(in);
    const unsigned cut = in - out;
    const uint64_t kept = v >> cut;
    const bool guard = (v >> (cut - 1)) & 1u;
    const bool sticky = (v & low_bits(cut - 1)) != 0;
    const bool carry = guard && (sticky || (kept & 1u));
    *overflow = carry && kept == low_bits(out);
    return (kept + (carry ? 1 : 0)) & low_bits(out);
}

}  // namespace nvdla::precision::detail
