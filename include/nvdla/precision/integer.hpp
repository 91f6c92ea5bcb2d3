// Integer rounding and saturation as NVDLA's datapath does them: every shift right rounds half
// away from zero and every narrowing saturates to the output width (the C model's
// IntShiftRight / IntShiftRightSat / IntShiftLeft / IntSaturation, built on ac_fixed with
// AC_RND_INF and AC_SAT).
#pragma once

#include <cstdint>

namespace nvdla::precision {

constexpr int64_t max_of_width(unsigned bits) {
    return (int64_t(1) << (bits - 1)) - 1;
}
constexpr int64_t min_of_width(unsigned bits) {
    return -(int64_t(1) << (bits - 1));
}

// Clamps x to a signed `bits`-wide integer (1..63); sets *saturated when it had to.
constexpr int64_t saturate(int64_t x, unsigned bits, bool* saturated = nullptr) {
    const int64_t hi = max_of_width(bits), lo = min_of_width(bits);
    const bool clamp = x > hi || x < lo;
    if (saturated) *saturated = clamp;
    return x > hi ? hi : (x < lo ? lo : x);
}

// x / 2^shift rounded half away from zero, without narrowing.
constexpr int64_t shift_right_round(int64_t x, unsigned shift) {
    if (shift == 0) return x;
    if (shift > 64) return 0;
    using u128 = unsigned __int128;
    const u128 magnitude = x < 0 ? u128(-(x + 1)) + 1 : u128(x);
    const u128 rounded = (magnitude + (u128(1) << (shift - 1))) >> shift;
    return x < 0 ? -int64_t(rounded) : int64_t(rounded);  // shift >= 1 halves it: fits
}

// IntShiftRightSat: shift right with rounding, then saturate to `bits`.
constexpr int64_t shift_right_round_saturate(int64_t x, unsigned shift, unsigned bits,
                                             bool* saturated = nullptr) {
    return saturate(shift_right_round(x, shift), bits, saturated);
}

// IntShiftLeft: x * 2^shift saturated to `bits` (no overflow for any shift).
constexpr int64_t shift_left_saturate(int64_t x, unsigned shift, unsigned bits,
                                      bool* saturated = nullptr) {
    if (x == 0) {
        if (saturated) *saturated = false;
        return 0;
    }
    const int64_t hi = max_of_width(bits), lo = min_of_width(bits);
    // shift >= bits overflows for any x != 0 (lo >> shift alone would let -1 through).
    if (shift >= 63 || shift >= bits || (x > 0 && x > (hi >> shift)) ||
        (x < 0 && x < (lo >> shift))) {
        if (saturated) *saturated = true;
        return x > 0 ? hi : lo;
    }
    if (saturated) *saturated = false;
    return x * (int64_t(1) << shift);  // in range: |x << shift| fits `bits`
}

// IntSignedShiftRight: a negative shift shifts left (saturating), a positive one right.
constexpr int64_t signed_shift_right_saturate(int64_t x, int shift, unsigned bits,
                                              bool* saturated = nullptr) {
    return shift >= 0 ? shift_right_round_saturate(x, unsigned(shift), bits, saturated)
                      : shift_left_saturate(x, unsigned(-shift), bits, saturated);
}

}  // namespace nvdla::precision
