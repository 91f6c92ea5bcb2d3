// The C model's floating-point arithmetic (cmod/hls/include/nvdla_float.h FpAdd, FpMul,
// FpFractionToFloat) on bit patterns. It is not IEEE: additions align the smaller operand by
// truncating (no sticky bit), denormal inputs are read with an implied 1, results below the
// smallest normal become zero, overflow gives the largest finite value, NaN operands pass
// through.
#include "nvdla/precision/nvdla_float.hpp"
#include "precision/float_format.hpp"

namespace nvdla::precision {
namespace {

using detail::Format;
using detail::leading_zeros;
using detail::low_bits;
using detail::round_top_bits;

// FpAdd<E, M>.
template <unsigned E, unsigned M>
uint32_t add(uint32_t a_bits, uint32_t b_bits) {
    using F = Format<E, M>;
    constexpr unsigned kMore = M + 2;           // alignment room below the larger operand
    constexpr unsigned kWidth = kMore + M + 1;  // internal mantissa width
    const F a = F::of(a_bits), b = F::of(b_bits);
    const bool a_greater = a.expo > b.expo || (a.expo == b.expo && a.mant >= b.mant);
    const F& large = a_greater ? a : b;
    const F& small = a_greater ? b : a;

    // The smaller operand is shifted left by kMore minus the exponent difference; beyond
    // that it is shifted right and the bits fall off.
    const int small_shift = int(kMore) - int(large.expo - small.expo);
    const uint64_t large_aligned = (large.with_leading_one() << kMore) & low_bits(kWidth);
    uint64_t small_aligned;
    if (small_shift >= 0) {
        small_aligned = (small.with_leading_one() << small_shift) & low_bits(kWidth);
    } else {
        small_aligned = -small_shift >= 64 ? 0 : small.with_leading_one() >> -small_shift;
    }
    const uint64_t sum =
        (a.sign == b.sign ? large_aligned + small_aligned : large_aligned - small_aligned) &
        low_bits(kWidth + 1);

    F o{large.sign, large.expo, 0};
    bool infinite = false;
    uint64_t mantissa = 0;
    if (sum >> kWidth) {
        if (o.expo < F::kExpoMax - 1) {
            ++o.expo;
            mantissa = sum >> 1;
        } else {
            infinite = true;
        }
    } else {
        mantissa = sum;
        const unsigned zeros = leading_zeros(mantissa, kWidth);
        if (o.expo <= zeros || mantissa == 0) {
            o.expo = 0;
            mantissa = 0;
        } else {
            o.expo -= zeros;
            mantissa = (mantissa << zeros) & low_bits(kWidth);
        }
    }
    bool overflow;
    const uint64_t rounded = round_top_bits(mantissa, kWidth, M + 1, &overflow);
    if (overflow) {
        if (o.expo < F::kExpoMax - 1) {
            ++o.expo;
        } else {
            infinite = true;
        }
    }
    o.mant = uint32_t(rounded) & F::kMantMask;
    if (infinite) o.saturate();
    if (a.nan()) return a.bits();
    if (b.nan()) return b.bits();
    return o.bits();
}

template <unsigned E, unsigned M>
uint32_t subtract(uint32_t a_bits, uint32_t b_bits) {
    return add<E, M>(a_bits, b_bits ^ (1u << (E + M)));
}

// FpMul<E, M>.
template <unsigned E, unsigned M>
uint32_t multiply(uint32_t a_bits, uint32_t b_bits) {
    using F = Format<E, M>;
    constexpr unsigned kProductMant = 2 * M + 1;
    const F a = F::of(a_bits), b = F::of(b_bits);
    const uint64_t product = a.with_leading_one() * b.with_leading_one();  // 2M + 2 bits
    const uint32_t exponent_sum = a.expo + b.expo;

    F o{a.sign ^ b.sign, 0, 0};
    const bool zero = a.zero() || b.zero() || exponent_sum < F::kBias;
    bool infinite = !zero && exponent_sum >= F::kExpoMax + F::kBias;
    if (!zero && !infinite) {
        uint32_t expo = exponent_sum - F::kBias;
        uint64_t mant;  // 2M + 1 bits below the leading one
        if (product >> kProductMant) {
            if (expo < F::kExpoMax - 1) {
                ++expo;
                mant = product & low_bits(kProductMant);
            } else {
                infinite = true;
                mant = 0;
            }
        } else {
            mant = (product << 1) & low_bits(kProductMant);
        }
        if (!infinite) {  // FpMantWidthDec to M bits, without denormals
            bool overflow;
            const uint64_t rounded = round_top_bits(mant | (uint64_t(1) << kProductMant),
                                                    kProductMant + 1, M + 1, &overflow);
            o.mant = uint32_t(rounded) & F::kMantMask;
            o.expo = expo;
            if (overflow && ++o.expo == F::kExpoMax) infinite = true;
        }
    }
    if (infinite) o.saturate();
    if (zero || o.expo == 0) o.expo = o.mant = 0;
    if (a.nan()) return a.bits();
    if (b.nan()) return b.bits();
    return o.bits();
}

}  // namespace

uint32_t fp17_add(uint32_t a, uint32_t b) {
    return add<6, 10>(a, b);
}
uint32_t fp17_mul(uint32_t a, uint32_t b) {
    return multiply<6, 10>(a, b);
}
uint32_t fp32_add(uint32_t a, uint32_t b) {
    return add<8, 23>(a, b);
}
uint32_t fp32_sub(uint32_t a, uint32_t b) {
    return subtract<8, 23>(a, b);
}
uint32_t fp32_mul(uint32_t a, uint32_t b) {
    return multiply<8, 23>(a, b);
}

// FpFractionToFloat<width, 6, 10>: fraction / 2^width as an fp17, nearest even.
uint32_t fraction_to_fp17(uint64_t fraction, unsigned width) {
    using Out = Format<6, 10>;
    fraction &= low_bits(width);
    if (fraction == 0) return 0;
    const unsigned zeros = leading_zeros(fraction, width);
    const uint64_t normalised = (fraction << (zeros + 1)) & low_bits(width + 1);
    bool overflow;
    const uint64_t rounded = round_top_bits(normalised, width + 1, 11, &overflow);
    Out o{0, Out::kBias, 0};
    if (overflow) {
        o.expo -= zeros;
        o.mant = uint32_t(rounded >> 1) & Out::kMantMask;
    } else {
        if (o.expo <= zeros + 1) return 0;
        o.mant = uint32_t(rounded) & Out::kMantMask;
        o.expo -= zeros + 1;
    }
    return o.bits();
}

}  // namespace nvdla::precision
