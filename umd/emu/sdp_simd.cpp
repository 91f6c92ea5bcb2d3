// SDP's integer datapath in AVX-512 (the AVX2 form: sdp_simd_avx2.cpp): CACC's values as SDP takes
// them in flying mode, X1/X2 (ALU, MUL/PReLU, truncate, ReLU) and the output convertor, over a line
// of elements, and all of it, with Y without the LUT, fused for the common flying layer. Each
// function computes exactly what the scalar stages do (sdp.cpp, sdp_x.cpp, sdp_y.cpp, sdp_c.cpp),
// which stay the reference and handle everything these do not (fp16, the LUT, EQL, fp16 output,
// ALU shifts that could leave 32 bits);
// tests/emu/sdp_simd_test.cpp compares them on random programs.
//
// Widths: the ALU result has 33 bits and the products 49, so X works in 64-bit lanes, 8
// elements at a time. The convertor works in 32-bit lanes on the 16 elements at hand when
// their products (x - offset) * scale provably stay within 2^30, else in 64-bit lanes.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <optional>
#include <type_traits>
#include <vector>

#include "emu/isa.hpp"
#include "emu/sdp_internal.hpp"

#define NVDLA_SDP_SIMD __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
// The per-vector steps of the line loops: inlined, so that their vectors stay in registers.
#define NVDLA_SDP_SIMD_STEP NVDLA_SDP_SIMD __attribute__((always_inline))

namespace nvdla::emu::sdp {
namespace {

std::atomic<bool> g_scalar{false};

// The AVX-512 forms at the AVX-512 level (isa_level() checks the CPU), else the AVX2 ones.
bool use_avx512() {
    return isa_level() == IsaLevel::Avx512;
}

// GCC's unmasked forms of many AVX-512 intrinsics pass an undefined vector through, which
// -Wmaybe-uninitialized reports in some builds; the maskz forms with every lane set do not.
constexpr __mmask8 kAll8 = 0xff;
constexpr __mmask16 kAll16 = 0xffff;

NVDLA_SDP_SIMD inline __mmask8 lanes8(size_t n) {
    return n >= 8 ? kAll8 : static_cast<__mmask8>((1u << n) - 1);
}
NVDLA_SDP_SIMD inline __mmask16 lanes16(size_t n) {
    return n >= 16 ? kAll16 : static_cast<__mmask16>((1u << n) - 1);
}

NVDLA_SDP_SIMD inline __m256i low_half(__m512i v) {
    return _mm512_maskz_extracti64x4_epi64(0xf, v, 0);
}
NVDLA_SDP_SIMD inline __m256i high_half(__m512i v) {
    return _mm512_maskz_extracti64x4_epi64(0xf, v, 1);
}
NVDLA_SDP_SIMD inline __m512i join(__m256i low, __m256i high) {
    return _mm512_maskz_inserti64x4(kAll8, _mm512_castsi256_si512(low), high, 1);
}

// a * factor as q * 2^16 + low with 0 <= low < 2^16, in 32-bit lanes: (a >> 16) * factor *
// 2^16 + (a & 0xffff) * factor (the callers' bounds keep both products within 31 bits).
NVDLA_SDP_SIMD_STEP inline void split_product16(__m512i a, __m512i factor, __m512i& q,
                                                __m512i& low) {
    const __m512i low16 = _mm512_set1_epi32(0xffff);
    const __m512i high_product =
        _mm512_maskz_mullo_epi32(kAll16, _mm512_maskz_srai_epi32(kAll16, a, 16), factor);
    const __m512i low_product =
        _mm512_maskz_mullo_epi32(kAll16, _mm512_and_si512(a, low16), factor);
    q = _mm512_add_epi32(high_product, _mm512_maskz_srai_epi32(kAll16, low_product, 16));
    low = _mm512_and_si512(low_product, low16);
}

// x / 2^shift rounded half away from zero, 8 int64 lanes whose magnitude is below 2^62.
NVDLA_SDP_SIMD inline __m512i round_shift64(__m512i x, uint32_t shift, __m128i count,
                                            __m512i half) {
    if (shift == 0) return x;
    const __m512i sign = _mm512_maskz_srai_epi64(kAll8, x, 63);
    const __m512i magnitude = _mm512_maskz_abs_epi64(kAll8, x);
    const __m512i q = _mm512_maskz_srl_epi64(kAll8, _mm512_add_epi64(magnitude, half), count);
    return _mm512_sub_epi64(_mm512_xor_si512(q, sign), sign);
}

// The same for 16 int32 lanes whose magnitude plus 2^(shift - 1) stays below 2^31:
// floor((x + 2^(shift - 1) - [x < 0]) / 2^shift), which is that rounding for shift >= 1.
NVDLA_SDP_SIMD inline __m512i round_shift32(__m512i x, uint32_t shift, __m128i count,
                                            __m512i half) {
    if (shift == 0) return x;
    const __m512i sign = _mm512_maskz_srai_epi32(kAll16, x, 31);
    return _mm512_maskz_sra_epi32(kAll16, _mm512_add_epi32(_mm512_add_epi32(x, half), sign), count);
}

NVDLA_SDP_SIMD inline __m512i clamp64(__m512i x, __m512i lo, __m512i hi) {
    return _mm512_maskz_min_epi64(kAll8, _mm512_maskz_max_epi64(kAll8, x, lo), hi);
}
NVDLA_SDP_SIMD inline __m512i clamp32(__m512i x, __m512i lo, __m512i hi) {
    return _mm512_maskz_min_epi32(kAll16, _mm512_maskz_max_epi32(kAll16, x, lo), hi);
}

// The C model's saturation flag (cmodel_shift_right_saturation_flag): the 17-bit result more
// than one away from the floor of the quotient, i.e. floor - result + 1 > 2 unsigned.
NVDLA_SDP_SIMD inline __mmask8 flag64(__m512i floor_value, __m512i result) {
    const __m512i d = _mm512_add_epi64(_mm512_sub_epi64(floor_value, result), _mm512_set1_epi64(1));
    return _mm512_cmpgt_epu64_mask(d, _mm512_set1_epi64(2));
}
NVDLA_SDP_SIMD inline __mmask16 flag32(__m512i floor_value, __m512i result) {
    const __m512i d = _mm512_add_epi32(_mm512_sub_epi32(floor_value, result), _mm512_set1_epi32(1));
    return _mm512_cmpgt_epu32_mask(d, _mm512_set1_epi32(2));
}

// Whether all 16 lanes are below 2^30 in magnitude.
NVDLA_SDP_SIMD inline bool below_2_30(__m512i v) {
    const __mmask16 beyond = _mm512_cmpgt_epu32_mask(_mm512_maskz_abs_epi32(kAll16, v),
                                                     _mm512_set1_epi32((1 << 30) - 1));
    return _kortestz_mask16_u8(beyond, beyond);
}

// ---- CACC's values ----

// A channels-last cube is read a channel group at a time, its elements `step` values apart,
// mostly from beyond the caches (a layer's cube exceeds them): fetch the group's 128 bytes a
// few elements ahead. (A prefetch past the cube's end touches nothing.)
inline void prefetch_ahead(const int32_t* src, size_t step) {
    constexpr size_t kAhead = 8;
    const auto at = reinterpret_cast<uintptr_t>(src) + kAhead * step * sizeof(int32_t);
    __builtin_prefetch(reinterpret_cast<const void*>(at));
    __builtin_prefetch(reinterpret_cast<const void*>(at + 64));
}

// CACC's delivery of 16 channels-last sums: rounded half away by 2^clip (no saturation). The
// sums lie below 2^30 (AccumulatorCube), so floor((x + 2^(clip-1) - [x < 0]) / 2^clip), the
// same value, cannot overflow.
struct Delivery {
    uint32_t clip;
    __m128i count;
    __m512i half;

    NVDLA_SDP_SIMD explicit Delivery(uint32_t c)
        : clip(c),
          count(_mm_cvtsi32_si128(static_cast<int>(c))),
          half(_mm512_set1_epi32(c ? int32_t(1) << (c - 1) : 0)) {}
    NVDLA_SDP_SIMD_STEP __m512i load(const int32_t* src, __mmask16 m) const {
        const __m512i x = _mm512_maskz_loadu_epi32(m, src);
        if (clip == 0) return x;
        const __m512i sign = _mm512_maskz_srai_epi32(kAll16, x, 31);
        return _mm512_maskz_sra_epi32(kAll16, _mm512_add_epi32(_mm512_add_epi32(x, half), sign),
                                      count);
    }
};

// ---- X ----

// One X stage's operands for 8 channels in 64-bit lanes: the ALU operand after its shift, the
// multiplier and, for a SUM, their product (the second term of (in + operand) * factor).
struct XLanes {
    __m512i operand, factor, operand_factor;
};
struct XLanes16 {
    XLanes low, high;
    __m512i operand32, factor32;  // the same 16 in 32-bit lanes (XParams::narrow)
};

// One X stage's constants.
struct XParams {
    // Values, not a reference to the stage: the fused pass keeps a copy of its constants, which
    // its stores through std::byte pointers then cannot be taken to change.
    uint32_t algo, shift;
    bool relu;
    bool alu, sum, mul, prelu;
    __m256i alu_constant;
    __m128i alu_count;
    __m512i mul_constant;
    __m128i count;
    __m512i half;
    // apply16_narrow takes this programming: a multiplier and a shift of 16 to 45, or neither
    // multiplier nor shift; an ALU operand within 2^30 (memory operands are: 16 bits shifted by
    // at most 15).
    bool narrow;
    __m128i narrow_count;  // shift - 16
    __m512i narrow_half;   // 2^(shift - 17)
    // sum16_low_shift takes a multiplier with a shift below 16 after a SUM (no PReLU), the
    // operand as above.
    bool narrow_low;
    __m128i low_count, high_count;  // shift, 16 - shift
    __m512i low_round, q_limit;     // 2^(shift - 1) (0 for shift 0), 2^(15 + shift) - 2
    int32_t rectified_limit;        // q_limit * 2^(16 - shift) (narrow_low), else INT32_MAX
    __m512i relu_floor;             // 0 with the ReLU, else INT32_MIN (sum16_memory)

    NVDLA_SDP_SIMD explicit XParams(const XStage& stage)
        : algo(stage.alu_algo),
          shift(stage.mul_shift),
          relu(!stage.relu_bypass),
          alu(!stage.alu_bypass),
          sum(alu && stage.alu_algo >= 2),
          mul(!stage.mul_bypass),
          prelu(mul && stage.prelu),
          alu_count(_mm_cvtsi32_si128(static_cast<int>(stage.alu_shift))),
          mul_constant(_mm512_set1_epi64(stage.mul_operand)),
          count(_mm_cvtsi32_si128(static_cast<int>(stage.mul_shift))),
          half(_mm512_set1_epi64(stage.mul_shift ? int64_t(1) << (stage.mul_shift - 1) : 0)) {
        // The register operand after its shift.
        const int32_t operand =
            alu && !stage.alu_from_memory ? x_alu_operand(stage.alu_operand, stage.alu_shift) : 0;
        alu_constant = _mm256_set1_epi32(operand);
        narrow = (mul ? shift >= 16 && shift <= 45 : shift == 0) && operand >= -(1 << 30) &&
                 operand <= (1 << 30);
        narrow_count = _mm_cvtsi32_si128(static_cast<int>(narrow ? shift - 16 : 0));
        narrow_half = _mm512_set1_epi32(narrow && shift > 16 ? int32_t(1) << (shift - 17) : 0);
        narrow_low =
            mul && sum && !prelu && shift < 16 && operand >= -(1 << 30) && operand <= (1 << 30);
        const uint32_t low_shift = narrow_low ? shift : 0;
        low_count = _mm_cvtsi32_si128(static_cast<int>(low_shift));
        high_count = _mm_cvtsi32_si128(static_cast<int>(16 - low_shift));
        low_round = _mm512_set1_epi32(low_shift ? int32_t(1) << (low_shift - 1) : 0);
        q_limit = _mm512_set1_epi32((int32_t(1) << (15 + low_shift)) - 2);
        rectified_limit =
            narrow_low ? ((int32_t(1) << (15 + low_shift)) - 2) << (16 - low_shift) : INT32_MAX;
        relu_floor = _mm512_set1_epi32(relu ? 0 : INT32_MIN);
    }

    // The operands of 8 elements: from memory (or nullptr: the registers').
    NVDLA_SDP_SIMD_STEP XLanes lanes(const int16_t* alu_mem, const int16_t* mul_mem,
                                     __mmask8 m) const {
        XLanes k{_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
        if (alu) {
            // Memory operands: int16 shifted left by at most 15, so no saturation.
            const __m256i op32 =
                alu_mem ? _mm256_maskz_sll_epi32(
                              kAll8,
                              _mm256_maskz_cvtepi16_epi32(kAll8, _mm_maskz_loadu_epi16(m, alu_mem)),
                              alu_count)
                        : alu_constant;
            k.operand = _mm512_maskz_cvtepi32_epi64(kAll8, op32);
        }
        if (mul) {
            k.factor = mul_mem
                           ? _mm512_maskz_cvtepi16_epi64(kAll8, _mm_maskz_loadu_epi16(m, mul_mem))
                           : mul_constant;
            if (sum) k.operand_factor = _mm512_maskz_mul_epi32(kAll8, k.operand, k.factor);
        }
        return k;
    }
    NVDLA_SDP_SIMD_STEP XLanes16 lanes16(const int16_t* alu_mem, const int16_t* mul_mem) const {
        XLanes16 k{lanes(alu_mem, mul_mem, kAll8),
                   lanes(alu_mem ? alu_mem + 8 : nullptr, mul_mem ? mul_mem + 8 : nullptr, kAll8),
                   _mm512_setzero_si512(), _mm512_setzero_si512()};
        k.operand32 = join(_mm512_maskz_cvtepi64_epi32(kAll8, k.low.operand),
                           _mm512_maskz_cvtepi64_epi32(kAll8, k.high.operand));
        k.factor32 = join(_mm512_maskz_cvtepi64_epi32(kAll8, k.low.factor),
                          _mm512_maskz_cvtepi64_epi32(kAll8, k.high.factor));
        return k;
    }

    // Whether 16 inputs may take apply16_narrow: every |in| < 2^30.
    NVDLA_SDP_SIMD_STEP bool fits_narrow(__m512i in) const { return below_2_30(in); }

    // 16 elements in 32-bit lanes (`narrow` programming, |in| < 2^30): the ALU result a fits
    // 32 bits, and a * factor = (a >> 16) * factor * 2^16 + (a & 0xffff) * factor, both
    // products within 31 bits; with q = the first + (the second >> 16) and low = the second's
    // low 16 bits, a * factor = q * 2^16 + low, 0 <= low < 2^16, negative exactly when q is.
    // Rounded half away by 2^shift, shift = 16 + t: q plus the carry of low + 2^15 - [q < 0]
    // for t = 0; else (q + 2^(t-1) - [low == 0 and q < 0]) >> t.
    // `SumOnly`: the ALU sums and there is no PReLU (the common programming, known at compile
    // time).
    template <bool SumOnly = false>
    NVDLA_SDP_SIMD_STEP __m512i apply16_narrow(__m512i in, const XLanes16& k) const {
        __m512i a = in;
        if (SumOnly) {
            a = _mm512_add_epi32(in, k.operand32);
        } else if (alu) {
            if (algo == 0)
                a = _mm512_maskz_max_epi32(kAll16, in, k.operand32);
            else if (algo == 1)
                a = _mm512_maskz_min_epi32(kAll16, in, k.operand32);
            else
                a = _mm512_add_epi32(in, k.operand32);
        }
        if (!SumOnly && !mul) {
            // No multiplier, no shift: the ALU result (within 32 bits), then ReLU.
            return relu ? _mm512_maskz_max_epi32(kAll16, a, _mm512_setzero_si512()) : a;
        }
        __m512i q, low;
        split_product16(a, k.factor32, q, low);
        const __m512i negative = _mm512_maskz_srai_epi32(kAll16, q, 31);  // -1 or 0
        __m512i out;
        if (shift == 16) {
            const __mmask16 carry =
                _mm512_cmpgt_epi32_mask(_mm512_add_epi32(low, negative), _mm512_set1_epi32(0x7fff));
            out = _mm512_mask_add_epi32(q, carry, q, _mm512_set1_epi32(1));
        } else {
            const __m512i biased = _mm512_add_epi32(q, narrow_half);
            out = _mm512_maskz_sra_epi32(
                kAll16,
                _mm512_mask_add_epi32(biased, _mm512_testn_epi32_mask(low, low), biased, negative),
                narrow_count);
        }
        if (!SumOnly && prelu)
            out = _mm512_mask_mov_epi32(out, _mm512_cmpge_epi32_mask(a, _mm512_setzero_si512()), a);
        if (relu) out = _mm512_maskz_max_epi32(kAll16, out, _mm512_setzero_si512());
        return out;
    }

    // 16 elements in 32-bit lanes (`narrow_low` programming, |in| < 2^30): a = in + operand
    // and a * factor = q * 2^16 + low as in apply16_narrow; rounded half away by 2^shift,
    // shift < 16: q * 2^(16 - shift) + ((low + 2^(shift - 1) - [q < 0]) >> shift) (low alone
    // for shift 0), within 32 bits, so unsaturated, while |q| <= 2^(15 + shift) - 2. False
    // (and `out` unset) when some |q| is beyond.
    NVDLA_SDP_SIMD_STEP bool sum16_low_shift(__m512i in, const XLanes16& k, __m512i& out) const {
        const __m512i a = _mm512_add_epi32(in, k.operand32);
        __m512i q, low;
        split_product16(a, k.factor32, q, low);
        const __mmask16 beyond =
            _mm512_cmpgt_epu32_mask(_mm512_maskz_abs_epi32(kAll16, q), q_limit);
        if (!_kortestz_mask16_u8(beyond, beyond)) return false;
        if (shift)
            low = _mm512_add_epi32(_mm512_add_epi32(low, low_round),
                                   _mm512_maskz_srai_epi32(kAll16, q, 31));
        out = _mm512_add_epi32(_mm512_maskz_sll_epi32(kAll16, q, high_count),
                               _mm512_maskz_srl_epi32(kAll16, low, low_count));
        if (relu) out = _mm512_maskz_max_epi32(kAll16, out, _mm512_setzero_si512());
        return true;
    }

    // A requantisation with its ReLU (SUM and MUL without PReLU, `narrow` or `narrow_low`) on
    // 16 elements whose multipliers are all >= 0 and |in + operand| < 2^31: the ReLU commutes
    // with such a multiplier and the rounding (both keep a <= 0 at or below 0), so
    // a = max(in + operand, 0) and a * factor = q * 2^16 + low as in apply16_narrow, all
    // non-negative; rounded half up by 2^(16 + t): (q + 2^(t - 1)) >> t for t >= 1 (low adds
    // less than one to q + 2^(t - 1)), q + [low >= 2^15] for t = 0; by 2^shift below 16 as in
    // sum16_low_shift with q at most q_limit: a larger q gives at least `rectified_limit`
    // either way (exact where what follows takes every value from there on to the same output).
    NVDLA_SDP_SIMD_STEP __m512i rectified16(__m512i in, const XLanes16& k) const {
        const __m512i a = _mm512_maskz_max_epi32(kAll16, _mm512_add_epi32(in, k.operand32),
                                                 _mm512_setzero_si512());
        const __m512i low16 = _mm512_set1_epi32(0xffff);
        const __m512i low_product =
            _mm512_maskz_mullo_epi32(kAll16, _mm512_and_si512(a, low16), k.factor32);
        const __m512i q = _mm512_add_epi32(
            _mm512_maskz_mullo_epi32(kAll16, _mm512_maskz_srli_epi32(kAll16, a, 16), k.factor32),
            _mm512_maskz_srli_epi32(kAll16, low_product, 16));
        if (narrow_low)
            return _mm512_add_epi32(
                _mm512_maskz_sll_epi32(kAll16, _mm512_maskz_min_epi32(kAll16, q, q_limit),
                                       high_count),
                _mm512_maskz_srl_epi32(
                    kAll16, _mm512_add_epi32(_mm512_and_si512(low_product, low16), low_round),
                    low_count));
        if (shift == 16)
            return _mm512_add_epi32(
                q, _mm512_and_si512(_mm512_maskz_srli_epi32(kAll16, low_product, 15),
                                    _mm512_set1_epi32(1)));
        return _mm512_maskz_srl_epi32(kAll16, _mm512_add_epi32(q, narrow_half), narrow_count);
    }

    // 16 elements through a stage without multiplier or shift whose ALU is off, MAX or MIN
    // (exact in 32-bit lanes for any input), then ReLU.
    NVDLA_SDP_SIMD_STEP __m512i bound16(__m512i in, const XLanes16& k) const {
        __m512i a = in;
        if (alu)
            a = algo == 0 ? _mm512_maskz_max_epi32(kAll16, in, k.operand32)
                          : _mm512_maskz_min_epi32(kAll16, in, k.operand32);
        return relu ? _mm512_maskz_max_epi32(kAll16, a, _mm512_setzero_si512()) : a;
    }

    // 16 elements through a stage summing memory operands (`operand`: their int16 values)
    // without multiplier or shift, then its ReLU: in + (operand << alu_shift) (|operand| < 2^30
    // after a shift of at most 15) is the 33-bit sum, beyond 32 bits exactly when the 32-bit
    // sum overflows (in and operand of one sign, the sum of the other), and then saturated to
    // in's side as the truncation does; the ReLU as a maximum with relu_floor.
    NVDLA_SDP_SIMD_STEP __m512i sum16_memory(__m512i in, __m512i operand) const {
        const __m512i shifted = _mm512_maskz_sll_epi32(kAll16, operand, alu_count);
        const __m512i total = _mm512_add_epi32(in, shifted);
        // (in ^ total) & (shifted ^ total): sign bit set on overflow.
        const __mmask16 over =
            _mm512_movepi32_mask(_mm512_ternarylogic_epi32(in, shifted, total, 0x42));
        const __m512i bound =
            _mm512_xor_si512(_mm512_maskz_srai_epi32(kAll16, in, 31), _mm512_set1_epi32(INT32_MAX));
        return _mm512_maskz_max_epi32(kAll16, _mm512_mask_mov_epi32(total, over, bound),
                                      relu_floor);
    }

    // A requantisation's 16 elements (SUM and MUL without PReLU: narrow or narrow_low) in
    // 32-bit lanes where they fit, else in 64-bit lanes.
    NVDLA_SDP_SIMD_STEP __m512i requantise16(__m512i in, const XLanes16& k) const {
        if (fits_narrow(in)) {
            if (!narrow_low) return apply16_narrow<true>(in, k);
            __m512i out;
            if (sum16_low_shift(in, k, out)) return out;
        }
        return apply16(in, k);
    }

    // 8 elements with their operands.
    NVDLA_SDP_SIMD_STEP __m256i apply(__m256i in32, const XLanes& k) const {
        const __m512i in = _mm512_maskz_cvtepi32_epi64(kAll8, in32);
        __m512i a = in;
        if (alu) {
            if (algo == 0)
                a = _mm512_maskz_max_epi64(kAll8, in, k.operand);
            else if (algo == 1)
                a = _mm512_maskz_min_epi64(kAll8, in, k.operand);
            else
                a = _mm512_add_epi64(in, k.operand);  // 33 bits
        }
        __m512i product = a;
        if (mul) {
            // 33 x 16 bits: a SUM is multiplied term by term (each term fits 32 bits).
            product = sum ? _mm512_add_epi64(_mm512_maskz_mul_epi32(kAll8, in, k.factor),
                                             k.operand_factor)
                          : _mm512_maskz_mul_epi32(kAll8, a, k.factor);
        }
        // Rounded half away from zero: floor((p + half - [p < 0]) / 2^shift) (|p| < 2^50).
        if (shift)
            product = _mm512_maskz_sra_epi64(
                kAll8,
                _mm512_add_epi64(_mm512_add_epi64(product, half),
                                 _mm512_maskz_srai_epi64(kAll8, product, 63)),
                count);
        __m256i out = _mm512_maskz_cvtsepi64_epi32(kAll8, product);
        if (prelu) {
            // A non-negative ALU result passes with its low 32 bits, untruncated.
            const __mmask8 keep = _mm512_cmpge_epi64_mask(a, _mm512_setzero_si512());
            out = _mm256_mask_mov_epi32(out, keep, _mm512_maskz_cvtepi64_epi32(kAll8, a));
        }
        if (relu) out = _mm256_maskz_max_epi32(kAll8, out, _mm256_setzero_si256());
        return out;
    }

    // 8 elements; the memory operands (or nullptr) at the same place of their lines.
    NVDLA_SDP_SIMD_STEP __m256i apply(__m256i in32, const int16_t* alu_mem, const int16_t* mul_mem,
                                      __mmask8 m) const {
        return apply(in32, lanes(alu_mem, mul_mem, m));
    }

    // 16 elements with their operands.
    NVDLA_SDP_SIMD_STEP __m512i apply16(__m512i in, const XLanes16& k) const {
        return join(apply(low_half(in), k.low), apply(high_half(in), k.high));
    }
    NVDLA_SDP_SIMD_STEP __m512i apply16(__m512i in, const int16_t* alu_mem, const int16_t* mul_mem,
                                        __mmask16 m) const {
        const __m256i low = apply(low_half(in), alu_mem, mul_mem, static_cast<__mmask8>(m));
        const __m256i high = apply(high_half(in), alu_mem ? alu_mem + 8 : nullptr,
                                   mul_mem ? mul_mem + 8 : nullptr, static_cast<__mmask8>(m >> 8));
        return join(low, high);
    }
};

// ---- Y ----

// A Y memory operand's convertor on 8 int16 values, in 64-bit lanes (sdp_simd_avx2.cpp's
// YConvertor): sign-extended when bypassed, else x * scale - offset * scale (exact: below
// 2^47), rounded by the shift and saturated to 32 bits.
struct YConvertor {
    bool bypass;
    uint32_t shift;
    __m128i count;
    __m512i scale, offset_product, half, int32_min, int32_max;

    NVDLA_SDP_SIMD explicit YConvertor(const OperandConvertor& c)
        : bypass(c.bypass),
          shift(c.params.shift & 63u),
          count(_mm_cvtsi32_si128(static_cast<int>(shift))),
          scale(_mm512_set1_epi64(c.params.scale)),
          offset_product(_mm512_set1_epi64(int64_t(c.params.offset) * c.params.scale)),
          half(_mm512_set1_epi64(shift ? int64_t(1) << (shift - 1) : 0)),
          int32_min(_mm512_set1_epi64(INT32_MIN)),
          int32_max(_mm512_set1_epi64(INT32_MAX)) {}
    NVDLA_SDP_SIMD_STEP __m512i apply(const int16_t* src) const {
        const __m512i x = _mm512_maskz_cvtepi16_epi64(
            kAll8, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
        if (bypass) return x;
        const __m512i p = _mm512_sub_epi64(_mm512_maskz_mul_epi32(kAll8, x, scale), offset_product);
        return clamp64(round_shift64(p, shift, count, half), int32_min, int32_max);
    }
};

// Y's MUL (PReLU) and ALU on the int pipelines, without the LUT (sdp_y.cpp's y_int).
struct YParams {
    uint32_t algo, truncate;  // values (XParams)
    bool prelu;
    bool mul, alu;
    YConvertor mul_cvt, alu_cvt;
    __m512i mul_constant, alu_constant;
    __m128i count;
    __m512i half, int32_min, int32_max, one;
    // apply16_narrow takes this programming: no multiplier, the ALU off or MAX/MIN/SUM with an
    // operand provably within 2^30 and computed in 32-bit lanes (a register's, or from memory
    // through a bypassed convertor or one whose (x - offset) * scale stays within 2^30 with a
    // shift of at most 30).
    bool narrow;
    bool cvt_bypass;
    __m512i alu_constant32, cvt_offset32, cvt_scale32, cvt_half32;
    __m128i cvt_count;
    uint32_t cvt_shift;

    NVDLA_SDP_SIMD explicit YParams(const YStage& stage)
        : algo(stage.alu_algo),
          truncate(stage.truncate),
          prelu(stage.prelu),
          mul(!stage.mul_bypass),
          alu(!stage.alu_bypass),
          mul_cvt(stage.mul_cvt),
          alu_cvt(stage.alu_cvt),
          mul_constant(_mm512_set1_epi64(static_cast<int32_t>(stage.mul_operand))),
          alu_constant(_mm512_set1_epi64(static_cast<int32_t>(stage.alu_operand))),
          count(_mm_cvtsi32_si128(static_cast<int>(stage.truncate))),
          // EW_TRUNCATE has 10 bits: the vector form takes at most 63 (y_simd_supported).
          half(_mm512_set1_epi64(
              stage.truncate && stage.truncate < 64 ? int64_t(1) << (stage.truncate - 1) : 0)),
          int32_min(_mm512_set1_epi64(INT32_MIN)),
          int32_max(_mm512_set1_epi64(INT32_MAX)),
          one(_mm512_set1_epi64(1)) {
        const YNarrowPlan plan = plan_y_narrow(stage);
        narrow = plan.narrow;
        cvt_bypass = stage.alu_cvt.bypass;
        cvt_shift = plan.cvt_shift;
        alu_constant32 = _mm512_set1_epi32(static_cast<int32_t>(stage.alu_operand));
        cvt_offset32 = _mm512_set1_epi32(plan.cvt_offset);
        cvt_scale32 = _mm512_set1_epi32(stage.alu_cvt.params.scale);
        cvt_half32 = _mm512_set1_epi32(plan.cvt_half);
        cvt_count = _mm_cvtsi32_si128(static_cast<int>(cvt_shift));
    }

    // 16 elements in 32-bit lanes (`narrow` programming, |in| < 2^30): the ALU result fits
    // 32 bits, so its saturation is none.
    NVDLA_SDP_SIMD_STEP __m512i apply16_narrow(__m512i in, const int16_t* alu_mem) const {
        if (!alu) return in;
        __m512i operand = alu_constant32;
        if (alu_mem) {
            operand = _mm512_maskz_cvtepi16_epi32(
                kAll16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(alu_mem)));
            if (!cvt_bypass)
                operand =
                    round_shift32(_mm512_maskz_mullo_epi32(
                                      kAll16, _mm512_sub_epi32(operand, cvt_offset32), cvt_scale32),
                                  cvt_shift, cvt_count, cvt_half32);
        }
        if (algo == 0) return _mm512_maskz_max_epi32(kAll16, in, operand);
        if (algo == 1) return _mm512_maskz_min_epi32(kAll16, in, operand);
        return _mm512_add_epi32(in, operand);
    }
    // The same summing 16 one-byte memory operands read in place (OperandLine::alu_bytes).
    NVDLA_SDP_SIMD_STEP __m512i sum16_narrow(__m512i in, const int8_t* alu_bytes) const {
        __m512i operand = _mm512_maskz_cvtepi8_epi32(
            kAll16, _mm_loadu_si128(reinterpret_cast<const __m128i*>(alu_bytes)));
        if (!cvt_bypass)
            operand =
                round_shift32(_mm512_maskz_mullo_epi32(
                                  kAll16, _mm512_sub_epi32(operand, cvt_offset32), cvt_scale32),
                              cvt_shift, cvt_count, cvt_half32);
        return _mm512_add_epi32(in, operand);
    }

    // 8 elements (int32 values); the memory operands (or nullptr) at the same place.
    NVDLA_SDP_SIMD_STEP __m256i apply(__m256i in32, const int16_t* alu_mem,
                                      const int16_t* mul_mem) const {
        const __m512i in = _mm512_maskz_cvtepi32_epi64(kAll8, in32);
        __m512i x = in;
        if (mul) {
            const __m512i operand = mul_mem ? mul_cvt.apply(mul_mem) : mul_constant;
            // 32 x 32 -> 64 bits, then EW_TRUNCATE with rounding into 32 bits.
            const __m512i product = _mm512_maskz_mul_epi32(kAll8, in, operand);
            x = clamp64(round_shift64(product, truncate, count, half), int32_min, int32_max);
            // PReLU: a non-negative input passes unchanged.
            if (prelu)
                x = _mm512_mask_mov_epi64(x, _mm512_cmpge_epi64_mask(in, _mm512_setzero_si512()),
                                          in);
        }
        if (alu) {
            const __m512i operand = alu_mem ? alu_cvt.apply(alu_mem) : alu_constant;
            switch (algo) {
                case 0: x = _mm512_maskz_max_epi64(kAll8, x, operand); break;
                case 1: x = _mm512_maskz_min_epi64(kAll8, x, operand); break;
                case 2: x = _mm512_add_epi64(x, operand); break;  // 33 bits
                default:
                    x = _mm512_maskz_mov_epi64(_mm512_cmpneq_epi64_mask(x, operand), one);
                    break;
            }
            x = clamp64(x, int32_min, int32_max);
        }
        return _mm512_maskz_cvtepi64_epi32(kAll8, x);
    }

    // 16 elements.
    NVDLA_SDP_SIMD_STEP __m512i apply16(__m512i in, const int16_t* alu_mem,
                                        const int16_t* mul_mem) const {
        const __m256i low = apply(low_half(in), alu_mem, mul_mem);
        const __m256i high =
            apply(high_half(in), alu_mem ? alu_mem + 8 : nullptr, mul_mem ? mul_mem + 8 : nullptr);
        return join(low, high);
    }
};

// ---- C ----

// The output convertor's constants.
struct CParams {
    uint32_t shift;
    bool count_saturation;
    bool narrow_ok;  // 32-bit lanes possible at all (shift <= 30)
    // Values outside [lower, upper] saturate the output (plan_c_narrow), so they need no
    // product: the output's bound on the side of the product's sign, their flags from
    // convertor_flag_bounds.
    bool outside_saturates;
    bool negative_scale;
    bool flag_above, flag_below;
    __m512i above_bound, below_bound;
    bool identity;         // offset 0, scale 1
    __m512i lower, upper;  // x in [lower, upper]: the product fits 32-bit lanes (plan_c_narrow)
    __m512i offset, scale, half, lo17, hi17, lo, hi;
    __m512i scale64, offset_product, half64, lo17_64, hi17_64, lo64, hi64;
    __m128i count;
    // clamped() takes this programming: the flag not counted, the input clamped (plan_c_clamp).
    bool clamp;
    __m512i clamp_lower, clamp_upper;
    // The least input from which every output is the same, the flag not counted (else
    // INT32_MAX): plan_c_clamp's upper bound.
    int32_t constant_from;

    NVDLA_SDP_SIMD explicit CParams(const Settings& s, bool clamp_form = false)
        : shift(s.cvt.shift & 63u),
          count_saturation(s.count_saturation),
          narrow_ok(shift <= 30),
          outside_saturates(plan_c_narrow(s.cvt, s.output).outside_saturates),
          negative_scale(s.cvt.scale < 0),
          identity(s.cvt.offset == 0 && s.cvt.scale == 1) {
        const FlagBounds bounds = convertor_flag_bounds(s.cvt, shift);
        flag_above = bounds.above <= INT32_MAX;
        flag_below = bounds.below >= INT32_MIN;
        above_bound =
            _mm512_set1_epi32(static_cast<int32_t>(std::max<int64_t>(bounds.above, INT32_MIN)));
        below_bound =
            _mm512_set1_epi32(static_cast<int32_t>(std::min<int64_t>(bounds.below, INT32_MAX)));
        const CNarrowPlan plan = plan_c_narrow(s.cvt, s.output);
        lower = _mm512_set1_epi32(plan.lower);
        upper = _mm512_set1_epi32(plan.upper);
        offset = _mm512_set1_epi32(s.cvt.offset);
        scale = _mm512_set1_epi32(s.cvt.scale);
        half = _mm512_set1_epi32(narrow_ok && shift ? int32_t(1) << (shift - 1) : 0);
        lo17 = _mm512_set1_epi32(-65536);
        hi17 = _mm512_set1_epi32(65535);
        const bool int8 = s.output == Precision::Int8;
        lo = _mm512_set1_epi32(int8 ? -128 : -32768);
        hi = _mm512_set1_epi32(int8 ? 127 : 32767);
        scale64 = _mm512_set1_epi64(s.cvt.scale);
        offset_product = _mm512_set1_epi64(int64_t(s.cvt.offset) * s.cvt.scale);
        half64 = _mm512_set1_epi64(shift ? int64_t(1) << (shift - 1) : 0);
        lo17_64 = _mm512_set1_epi64(-65536);
        hi17_64 = _mm512_set1_epi64(65535);
        lo64 = _mm512_set1_epi64(int8 ? -128 : -32768);
        hi64 = _mm512_set1_epi64(int8 ? 127 : 32767);
        count = _mm_cvtsi32_si128(static_cast<int>(shift));
        // (The plan's searches only for the fused pass, once per operation.)
        const CClampPlan clamp_plan =
            clamp_form && !count_saturation ? plan_c_clamp(s.cvt, s.output) : CClampPlan{};
        clamp = clamp_plan.exact;
        constant_from = clamp_form && !count_saturation ? clamp_plan.upper : INT32_MAX;
        clamp_lower = _mm512_set1_epi32(clamp_plan.lower);
        clamp_upper = _mm512_set1_epi32(clamp_plan.upper);
    }

    // 16 elements (`clamp` programming): the rounded product of the clamped input, which a
    // saturating narrowing to the output precision turns into the output.
    NVDLA_SDP_SIMD_STEP __m512i clamped(__m512i x) const {
        const __m512i inside = clamp32(x, clamp_lower, clamp_upper);
        return round_shift32(
            _mm512_maskz_mullo_epi32(kAll16, _mm512_sub_epi32(inside, offset), scale), shift, count,
            half);
    }

    // 8 elements in 64-bit lanes: the output values (int32) and the flag count.
    NVDLA_SDP_SIMD __m256i wide(__m256i x32, __mmask8 m, uint32_t& saturations) const {
        const __m512i x = _mm512_maskz_cvtepi32_epi64(kAll8, x32);
        const __m512i p =
            _mm512_sub_epi64(_mm512_maskz_mul_epi32(kAll8, x, scale64), offset_product);
        const __m512i r17 = clamp64(round_shift64(p, shift, count, half64), lo17_64, hi17_64);
        if (count_saturation) {
            const __m512i floor_value = _mm512_maskz_sra_epi64(kAll8, p, count);
            saturations += static_cast<uint32_t>(__builtin_popcount(flag64(floor_value, r17) & m));
        }
        return _mm512_maskz_cvtepi64_epi32(kAll8, clamp64(r17, lo64, hi64));
    }

    // 16 elements: the output values as int32, saturated to the output precision.
    NVDLA_SDP_SIMD_STEP __m512i apply(__m512i x, __mmask16 m, uint32_t& saturations) const {
        const __mmask16 inside =
            _mm512_mask_cmpge_epi32_mask(m, x, lower) & _mm512_mask_cmple_epi32_mask(m, x, upper);
        if (outside_saturates) return apply_saturating(x, m, inside, saturations);
        if (!narrow_ok || inside != m) {
            const __m256i low = wide(low_half(x), static_cast<__mmask8>(m), saturations);
            const __m256i high = wide(high_half(x), static_cast<__mmask8>(m >> 8), saturations);
            return join(low, high);
        }
        const __m512i p =
            identity ? x : _mm512_maskz_mullo_epi32(kAll16, _mm512_sub_epi32(x, offset), scale);
        const __m512i r = round_shift32(p, shift, count, half);
        if (count_saturation) {
            const __m512i floor_value = _mm512_maskz_sra_epi32(kAll16, p, count);
            saturations += static_cast<uint32_t>(
                __builtin_popcount(flag32(floor_value, clamp32(r, lo17, hi17)) & m));
        }
        return clamp32(r, lo, hi);
    }

    // 16 elements when the values outside [lower, upper] saturate (outside_saturates),
    // branch-free: the inside ones computed in 32-bit lanes, the others' bounds blended in.
    NVDLA_SDP_SIMD_STEP __m512i apply_saturating(__m512i x, __mmask16 m,
                                                 uint32_t& saturations) const {
        const __mmask16 inside =
            _mm512_mask_cmpge_epi32_mask(m, x, lower) & _mm512_mask_cmple_epi32_mask(m, x, upper);
        return apply_saturating(x, m, inside, saturations);
    }
    NVDLA_SDP_SIMD_STEP __m512i apply_saturating(__m512i x, __mmask16 m, __mmask16 inside,
                                                 uint32_t& saturations) const {
        const __m512i p = _mm512_maskz_mullo_epi32(kAll16, _mm512_sub_epi32(x, offset), scale);
        const __m512i rounded = round_shift32(p, shift, count, half);
        const __m512i r = clamp32(rounded, lo, hi);
        // The product's sign: x > offset, unless the scale is negative (not 0: outside).
        const __mmask16 greater = _mm512_cmpgt_epi32_mask(x, offset);
        const __mmask16 high_side = negative_scale ? __mmask16(~greater) : greater;
        const __mmask16 outside = m & __mmask16(~inside);
        if (count_saturation) {
            const __m512i floor_value = _mm512_maskz_sra_epi32(kAll16, p, count);
            __mmask16 flagged = flag32(floor_value, clamp32(rounded, lo17, hi17)) & inside;
            if (flag_above) flagged |= _mm512_mask_cmpge_epi32_mask(outside, x, above_bound);
            if (flag_below) flagged |= _mm512_mask_cmple_epi32_mask(outside, x, below_bound);
            saturations += static_cast<uint32_t>(__builtin_popcount(flagged));
        }
        return _mm512_mask_mov_epi32(_mm512_mask_mov_epi32(r, outside & high_side, hi),
                                     outside & __mmask16(~high_side), lo);
    }
};

// ---- The stages over a line ----

NVDLA_SDP_SIMD void flying_channels_last(const Settings& s, const AccumulatorCube& cube, uint32_t b,
                                         uint32_t g, uint32_t h, std::span<int32_t> line) {
    const uint32_t first = g * s.group;
    const uint32_t valid = std::min(s.group, s.channels - first);
    const int32_t* base = cube.sums.get() + cube.sum_index(b, first, h, 0);
    const Delivery cacc(cube.clip);
    for (uint32_t w = 0; w < s.width; ++w) {
        const int32_t* src = base + size_t(w) * cube.channel_stride;
        int32_t* dst = line.data() + size_t(w) * s.group;
        for (uint32_t j = 0; j < s.group; j += 16)
            _mm512_mask_storeu_epi32(dst + j, lanes16(s.group - j),
                                     cacc.load(src + j, lanes16(valid > j ? valid - j : 0)));
    }
}

NVDLA_SDP_SIMD void x_line(const XStage& stage, std::span<int32_t> line, OperandLine ops) {
    const XParams x(stage);
    const size_t n = line.size();
    for (size_t i = 0; i < n; i += 8) {
        const __mmask8 m = lanes8(n - i);
        const __m256i out =
            x.apply(_mm256_maskz_loadu_epi32(m, line.data() + i), ops.alu ? ops.alu + i : nullptr,
                    ops.mul ? ops.mul + i : nullptr, m);
        _mm256_mask_storeu_epi32(line.data() + i, m, out);
    }
}

NVDLA_SDP_SIMD void c_line(const Settings& s, std::span<const int32_t> line,
                           std::span<uint16_t> out, Counters& counters) {
    const CParams c(s);
    const size_t n = line.size();
    uint32_t saturations = 0;
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = lanes16(n - i);
        const __m512i v = c.apply(_mm512_maskz_loadu_epi32(m, line.data() + i), m, saturations);
        _mm256_mask_storeu_epi16(out.data() + i, m, _mm512_maskz_cvtepi32_epi16(kAll16, v));
    }
    counters.saturations += saturations;
}

// The X stages' operands of a line's channel group when they are the same for every element.
struct XOperands {
    const XLanes16* bs = nullptr;
    const XLanes16* bn = nullptr;
};

// Which stages the fused pass's pieces run: none, any (each checked), or the common
// programming of a convolution's requantisation (Fused::common_stages).
constexpr int kNoStages = 0, kAnyStages = 1, kCommonStages = 2, kBareStages = 3,
              kResidualStages = 4, kClipStages = 5, kRectifiedStages = 6, kRectifiedClipStages = 7,
              kMemorySumStages = 8;
// What a rectified form falls back to for a line it does not take.
constexpr int unrectified(int x) {
    return x == kRectifiedStages ? kCommonStages : x == kRectifiedClipStages ? kClipStages : x;
}
// The output convertor's forms in the fused pass: it only saturates (offset 0, scale 1, shift 0,
// its flag not counted: the narrowing does it), its clamp form (CParams::clamp), any.
constexpr int kCvtSaturate = 0, kCvtClamp = 1, kCvtAny = 2;

// Fused::bounded_line's per-channel constants for one channel group's X operands (up to two
// pieces of 16 channels): X1's operand and factor, a's cap, the clamp's bounds; whether the
// group's lines take that form at all, and whether the convertor's products are >= 0; the
// input's clamp and X1's offset (Fused::input_clamps) when every channel takes it
// (`clamps_input`).
// (alignas: outside the AVX-512 functions the vector types align less, which a std::vector's
// allocation would follow, and the functions' aligned moves would fault.)
struct alignas(64) BoundedConstants {
    __m512i bias[2], factor[2], cap[2], lower[2], upper[2];
    __m512i input_low[2], input_high[2], offset[2];
    bool takes = false, positive = false, clamps_input = false;
};

// The constants of the fused pass, set up once per operation.
struct Fused {
    const Settings& s;
    bool bs_on, bn_on, ew_on;
    Delivery cacc;
    XParams x1, x2;
    YParams y;
    CParams c;
    // bounded_line's constants of each channel group (run() makes them for the pass).
    const GroupConstants<BoundedConstants>* bounded = nullptr;

    // `clip`: CACC's delivery of a channels-last cube, 0 for values taken as they are.
    NVDLA_SDP_SIMD Fused(const Settings& settings, uint32_t clip)
        : s(settings),
          bs_on(settings.bs.enabled),
          bn_on(settings.bn.enabled),
          ew_on(settings.ew.enabled),
          cacc(clip),
          x1(settings.bs),
          x2(settings.bn),
          y(settings.ew),
          c(settings, true) {}

    // The programmings the pass runs without branches on the stages: X1 alone (X2 and Y off)
    // with operands the same for every element (per kernel or registers) in 32-bit lanes
    // (XParams::narrow), and a convertor whose values beyond 32-bit products saturate;
    // kCommonStages: X1 sums and multiplies, without PReLU (a convolution's requantisation);
    // kBareStages: no multiplier (a bias, a ReLU); kResidualStages: the requantisation, then Y
    // summing in 32-bit lanes without a multiplier (YParams::narrow: a residual network's
    // sum); kClipStages: the requantisation, then X2 bounding it by a MAX or MIN without a
    // multiplier or shift (a clip such as ReLU6; 32-bit lanes for any value). Else kAnyStages.
    // kRectifiedStages and kRectifiedClipStages: kCommonStages and kClipStages whose
    // requantisation has its ReLU (XParams::rectified16), for the lines whose multipliers are
    // all >= 0 and whose inputs lie in [-2^30, 2^30), with a shift below 16 only where what
    // follows X1 saturates beyond XParams::rectified_limit (the other lines take the
    // unrectified form).
    // kMemorySumStages: the requantisation, then X2 summing a per-element memory operand
    // without multiplier or shift, its ReLU or not (nv_small's and nv_full's residual sum and
    // ReLU: XParams::sum16_memory), Y off.
    int common_stages() const {
        const bool x1_alone = bs_on && (x1.narrow || x1.narrow_low) && c.outside_saturates &&
                              !(s.bs_dma.enabled && s.bs_dma.per_element);
        const bool x1_first = x1_alone && !bn_on;
        const bool requantise = x1_first && x1.mul && x1.sum && !x1.prelu;
        const bool rectified = x1.relu;
        if (requantise && !ew_on) return rectified ? kRectifiedStages : kCommonStages;
        if (x1_first && !ew_on && !x1.mul) return kBareStages;
        if (requantise && ew_on && y.narrow && y.alu && y.algo == 2) return kResidualStages;
        const bool x1_requantise = x1_alone && x1.mul && x1.sum && !x1.prelu;
        const bool memory_sum = bn_on && x2.sum && !x2.mul && x2.shift == 0 &&
                                s.bn.alu_from_memory && s.bn_dma.enabled && s.bn_dma.per_element &&
                                s.bn_dma.take_alu && !s.bn_dma.take_mul;
        if (x1_requantise && memory_sum && !ew_on) return kMemorySumStages;
        const bool bound = bn_on && !x2.mul && x2.shift == 0 && (!x2.alu || x2.algo <= 1) &&
                           !(s.bn_dma.enabled && s.bn_dma.per_element);
        if (x1_alone && x1.mul && x1.sum && !x1.prelu && bound && !ew_on)
            return rectified ? kRectifiedClipStages : kClipStages;
        return kAnyStages;
    }

    // The output convertor of 16 values: `Cvt` (kCvtSaturate, kCvtClamp or kCvtAny, then
    // `saturating`: values beyond 32-bit products saturate, CParams::apply_saturating).
    template <int Cvt, bool Saturating>
    NVDLA_SDP_SIMD_STEP __m512i convert(__m512i v, __m512i lo, __m512i hi,
                                        uint32_t& flagged) const {
        if constexpr (Cvt == kCvtClamp) return c.clamped(v);
        if constexpr (Cvt == kCvtAny) {
            if constexpr (Saturating)
                return clamp32(c.apply_saturating(v, kAll16, flagged), lo, hi);
            return clamp32(c.apply(v, kAll16, flagged), lo, hi);
        }
        return v;
    }

    // One piece of 16 channels from CACC's values to the output values (int32, within the
    // output precision, or beyond it where the narrowing to it saturates them as the
    // convertor would); `at`: its place in the operand lines.
    // `j`: the piece within its channel group, whose X operands `k` holds when they are the
    // same for every element of the line (per kernel or registers; else nullptr).
    template <int Cvt, int X>
    NVDLA_SDP_SIMD_STEP __m512i piece(__m512i v, size_t at, uint32_t j, const OperandLine* ops,
                                      const XOperands& k, __m512i lo, __m512i hi,
                                      uint32_t& flagged) const {
        if constexpr (X == kCommonStages || X == kBareStages) {
            // The common programmings (common_stages()), with no branch on the stages.
            if constexpr (X == kCommonStages)
                v = x1.requantise16(v, k.bs[j]);
            else if (x1.fits_narrow(v))
                v = x1.apply16_narrow(v, k.bs[j]);
            else
                v = x1.apply16(v, k.bs[j]);
            return convert<Cvt, true>(v, lo, hi, flagged);
        }
        if constexpr (X == kRectifiedStages || X == kRectifiedClipStages) {
            v = x1.rectified16(v, k.bs[j]);
            if constexpr (X == kRectifiedClipStages) v = x2.bound16(v, k.bn[j]);
            return convert<Cvt, true>(v, lo, hi, flagged);
        }
        if constexpr (X == kClipStages)
            return convert<Cvt, true>(x2.bound16(x1.requantise16(v, k.bs[j]), k.bn[j]), lo, hi,
                                      flagged);
        if constexpr (X == kMemorySumStages) {
            const __m512i operand =
                ops[1].alu_bytes
                    ? _mm512_maskz_cvtepi8_epi32(
                          kAll16,
                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(ops[1].alu_bytes + at)))
                    : _mm512_maskz_cvtepi16_epi32(
                          kAll16,
                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ops[1].alu + at)));
            return convert<Cvt, true>(x2.sum16_memory(x1.requantise16(v, k.bs[j]), operand), lo, hi,
                                      flagged);
        }
        if constexpr (X == kResidualStages) {
            v = x1.requantise16(v, k.bs[j]);
            if (ops[2].alu_bytes) {
                // One-byte operands in place (Y has no multiplier here).
                const int8_t* bytes = ops[2].alu_bytes + at;
                if (below_2_30(v)) {
                    v = y.sum16_narrow(v, bytes);
                } else {
                    alignas(32) int16_t alu[16];
                    _mm256_store_si256(reinterpret_cast<__m256i*>(alu),
                                       _mm256_cvtepi8_epi16(_mm_loadu_si128(
                                           reinterpret_cast<const __m128i*>(bytes))));
                    v = y.apply16(v, alu, nullptr);
                }
            } else {
                const int16_t* alu = ops[2].alu ? ops[2].alu + at : nullptr;
                v = below_2_30(v) ? y.apply16_narrow(v, alu)
                                  : y.apply16(v, alu, ops[2].mul ? ops[2].mul + at : nullptr);
            }
            return convert<Cvt, true>(v, lo, hi, flagged);
        }
        if constexpr (X) {
            const auto at_ = [at](const int16_t* p) { return p ? p + at : nullptr; };
            if (bs_on) {
                if (k.bs && x1.narrow && x1.fits_narrow(v))
                    v = x1.apply16_narrow(v, k.bs[j]);
                else
                    v = k.bs ? x1.apply16(v, k.bs[j])
                             : x1.apply16(v, at_(ops[0].alu), at_(ops[0].mul), kAll16);
            }
            if (bn_on) {
                if (k.bn && x2.narrow && x2.fits_narrow(v))
                    v = x2.apply16_narrow(v, k.bn[j]);
                else
                    v = k.bn ? x2.apply16(v, k.bn[j])
                             : x2.apply16(v, at_(ops[1].alu), at_(ops[1].mul), kAll16);
            }
            if (ew_on)
                v = y.narrow && below_2_30(v) ? y.apply16_narrow(v, at_(ops[2].alu))
                                              : y.apply16(v, at_(ops[2].alu), at_(ops[2].mul));
        }
        return convert<Cvt, false>(v, lo, hi, flagged);
    }

    // Stores a line's pieces as `line` does: piece(src, mask, j) gives the output values
    // (int32, narrowed by saturation) of piece j of the atom whose CACC values start at src.
    template <bool Int8Out, uint32_t Pieces, class Piece>
    NVDLA_SDP_SIMD_STEP void store_pieces(FusedSource from, std::byte* lines,
                                          const Piece& piece) const {
        const int32_t* src = from.values;
        const size_t step = from.step, atom = s.atom, group = s.group;
        const uint32_t width = s.width;
        const __mmask16 mask0 = lanes16(from.valid),
                        mask1 = lanes16(from.valid > 16 ? from.valid - 16 : 0);
        uint32_t w = 0;
        // A channel group that fills the atom (int8 -> int8 of 32 channels, int16 -> int16 of
        // 16): two atoms at a time, narrowed by saturating packs (which leave in-range values
        // as they are) and stored as one 64-byte piece of the line.
        constexpr bool kPairs = Int8Out ? Pieces == 2 : Pieces == 1;
        if constexpr (kPairs) {
            const __m512i order =
                Int8Out ? _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15)
                        : _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
            for (; w + 1 < width; w += 2, src += 2 * step, lines += 2 * atom) {
                prefetch_ahead(src, step);
                prefetch_ahead(src + step, step);
                const size_t at = size_t(w) * group;
                __m512i out;
                if constexpr (Int8Out) {
                    const __m512i a = piece(src, mask0, at, 0);
                    const __m512i b1 = piece(src + 16, mask1, at + 16, 1);
                    const __m512i c1 = piece(src + step, mask0, at + 32, 0);
                    const __m512i d1 = piece(src + step + 16, mask1, at + 48, 1);
                    // Per 128-bit lane i the bytes of a, b, c, d [4i, 4i + 4); dword m of the
                    // result is dword 4 (m % 4) + m / 4 of that.
                    const __m512i words0 = _mm512_maskz_packs_epi32(~__mmask32(0), a, b1);
                    const __m512i words1 = _mm512_maskz_packs_epi32(~__mmask32(0), c1, d1);
                    out = _mm512_maskz_permutexvar_epi32(
                        kAll16, order, _mm512_maskz_packs_epi16(~__mmask64(0), words0, words1));
                } else {
                    const __m512i a = piece(src, mask0, at, 0);
                    const __m512i b1 = piece(src + step, mask0, at + 16, 0);
                    out = _mm512_maskz_permutexvar_epi64(
                        kAll8, order, _mm512_maskz_packs_epi32(~__mmask32(0), a, b1));
                }
                _mm512_storeu_si512(lines, out);
            }
        }
        // Piece j of atom w goes to output surface 16j / out_lanes, element 16j % out_lanes.
        const size_t line_bytes = size_t(width) * atom;
        const size_t element_bytes = Int8Out ? 1 : 2;
        const size_t offset1 = (16 / s.out_lanes) * line_bytes + (16 % s.out_lanes) * element_bytes;
        const auto store = [](std::byte* dst, __m512i v) NVDLA_SDP_SIMD_STEP {
            if constexpr (Int8Out)
                _mm_storeu_si128(reinterpret_cast<__m128i*>(dst),
                                 _mm512_maskz_cvtsepi32_epi8(kAll16, v));
            else
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst),
                                    _mm512_maskz_cvtsepi32_epi16(kAll16, v));
        };
        for (; w < width; ++w, src += step, lines += atom) {
            prefetch_ahead(src, step);
            store(lines, piece(src, mask0, size_t(w) * group, 0));
            if constexpr (Pieces == 2)
                store(lines + offset1, piece(src + 16, mask1, size_t(w) * group + 16, 1));
        }
    }

    // The rectified forms with a convertor that saturates or clamps, CACC's values taken
    // unrounded (clip 0) and X1's shift at most 30, in about half their steps. Per channel
    // everything after X1's ALU is monotone in a = max(in + operand, 0): X1's rounded product
    // r >= 0, X2's bound (a MAX or MIN by a register or per-kernel operand, then its ReLU), the
    // convertor's clamp, product and saturating narrowing. So
    // - X2's bound and the convertor's clamp are one clamp of r to [lower, upper] per channel
    //   (min(max(r, lower), upper); lower >= 0 as r is);
    // - a is capped at `cap` = (2^31 - 1 - 2^(shift - 1)) / factor, below which X1's product and
    //   rounding fit 32-bit lanes, when the output at the cap is already the output of every
    //   larger a (that of r = INT32_MAX, checked per channel group: the monotone output then
    //   takes no other value in between);
    // - the convertor's product and rounding lose their sign terms when (x - offset) * scale
    //   is >= 0 for every x it takes (`positive`).
    // What depends on the channel group's X operands (BoundedConstants) is made once per group
    // and pass (`bounded`, set up by run()), or by a line whose operands are no group's.
    // False (nothing written) when a line does not take this form; a line with an input beyond
    // 2^30 is computed again by the unrectified form, as `line` does.
    bool bounded_form() const { return cacc.clip == 0 && x1.shift <= 30 && c.shift <= 30; }

    // X1's product and rounding and the convertor's terms of bounded_line.
    struct BoundedTerms {
        int32_t x1_half;  // 2^(shift - 1), 0 for shift 0
        __m512i x1_round;
        __m128i x1_count;
        __m512i scale, half;
        __m128i count;
        uint32_t shift;
        // (x - offset) * scale as x * scale + offset_term, wrapping (the result fits 32 bits),
        // and with the rounding's half when it is >= 0.
        __m512i offset_term, positive_term;
    };
    NVDLA_SDP_SIMD BoundedTerms bounded_terms() const {
        const int32_t x1_half = x1.shift ? int32_t(1) << (x1.shift - 1) : 0;
        const uint32_t offset_product = uint32_t(s.cvt.offset) * uint32_t(s.cvt.scale);
        return {x1_half,
                _mm512_set1_epi32(x1_half),
                _mm_cvtsi32_si128(static_cast<int>(x1.shift)),
                c.scale,
                c.half,
                c.count,
                c.shift,
                _mm512_set1_epi32(static_cast<int32_t>(0u - offset_product)),
                _mm512_set1_epi32(static_cast<int32_t>(
                    uint32_t(c.shift ? 1u << (c.shift - 1) : 0u) - offset_product))};
    }
    // (a * factor + round) >> X1's shift: `round` is its half, or with the input clamped
    // the offset that adds the bias too (input_clamps).
    NVDLA_SDP_SIMD_STEP static __m512i bounded_requantise(__m512i a, __m512i factor,
                                                          const BoundedTerms& t) {
        return bounded_product(a, factor, t.x1_round, t);
    }
    NVDLA_SDP_SIMD_STEP static __m512i bounded_product(__m512i a, __m512i factor, __m512i round,
                                                       const BoundedTerms& t) {
        return _mm512_maskz_srl_epi32(
            kAll16, _mm512_add_epi32(_mm512_maskz_mullo_epi32(kAll16, a, factor), round),
            t.x1_count);
    }
    template <int Cvt, bool Positive>
    NVDLA_SDP_SIMD_STEP static __m512i bounded_finish(__m512i x, __m512i lower, __m512i upper,
                                                      const BoundedTerms& t) {
        return bounded_convert<Cvt, Positive>(
            _mm512_maskz_min_epi32(kAll16, _mm512_maskz_max_epi32(kAll16, x, lower), upper), t);
    }
    // The convertor of bounded_finish on x in [min(lower, upper), upper].
    template <int Cvt, bool Positive>
    NVDLA_SDP_SIMD_STEP static __m512i bounded_convert(__m512i x, const BoundedTerms& t) {
        if constexpr (Cvt == kCvtSaturate) return x;
        if constexpr (Positive)
            return _mm512_maskz_sra_epi32(
                kAll16,
                _mm512_add_epi32(_mm512_maskz_mullo_epi32(kAll16, x, t.scale), t.positive_term),
                t.count);
        const __m512i p =
            _mm512_add_epi32(_mm512_maskz_mullo_epi32(kAll16, x, t.scale), t.offset_term);
        return round_shift32(p, t.shift, t.count, t.half);
    }

    // The constants of bounded_line's lines with X operands `ops` (X1's the same for every
    // element, X2's too for the clip form), two pieces of 16 channels.
    template <int Cvt>
    NVDLA_SDP_SIMD BoundedConstants bounded_constants(const OperandLine* ops, bool clip_form,
                                                      uint32_t pieces) const {
        BoundedConstants k;
        const bool bound = clip_form && x2.alu;
        const BoundedTerms t = bounded_terms();
        const __m512i zero = _mm512_setzero_si512();
        const __m512i int32_max = _mm512_set1_epi32(INT32_MAX);
        const __m512i clamp_lower = Cvt == kCvtClamp ? c.clamp_lower : _mm512_set1_epi32(INT32_MIN);
        const __m512i clamp_upper = Cvt == kCvtClamp ? c.clamp_upper : int32_max;
        const __m512d cap_numerator = _mm512_set1_pd(double(INT32_MAX - t.x1_half));
        const __m512i offset = c.offset, out_lo = c.lo, out_hi = c.hi;
        __mmask16 negative = 0, below_offset = 0, above_offset = 0, differ = 0, unclamped = 0;
        for (uint32_t j = 0; j < pieces; ++j) {
            const XLanes16 k1 = x1.lanes16(ops[0].alu ? ops[0].alu + 16 * j : nullptr,
                                           ops[0].mul ? ops[0].mul + 16 * j : nullptr);
            k.bias[j] = k1.operand32;
            k.factor[j] = k1.factor32;
            negative |= _mm512_movepi32_mask(k.factor[j]);
            k.lower[j] = clamp_lower;
            k.upper[j] = clamp_upper;
            if (bound) {
                const XLanes16 k2 = x2.lanes16(ops[1].alu ? ops[1].alu + 16 * j : nullptr,
                                               ops[1].mul ? ops[1].mul + 16 * j : nullptr);
                if (x2.algo == 0) {
                    k.lower[j] = _mm512_maskz_max_epi32(kAll16, k2.operand32, clamp_lower);
                } else {
                    const __m512i limit =
                        x2.relu ? _mm512_maskz_max_epi32(kAll16, k2.operand32, zero) : k2.operand32;
                    k.upper[j] = _mm512_maskz_min_epi32(
                        kAll16, _mm512_maskz_max_epi32(kAll16, limit, clamp_lower), clamp_upper);
                }
            }
            // X1's results are >= 0, so the clamp's lower bound may be too; the convertor then
            // takes x in [min(lower, upper), upper].
            k.lower[j] = _mm512_maskz_max_epi32(kAll16, k.lower[j], zero);
            below_offset |= _mm512_cmplt_epi32_mask(
                _mm512_maskz_min_epi32(kAll16, k.lower[j], k.upper[j]), offset);
            above_offset |= _mm512_cmpgt_epi32_mask(k.upper[j], offset);
            const __m512i divisor =
                _mm512_maskz_max_epi32(kAll16, k.factor[j], _mm512_set1_epi32(1));
            const __m256i cap_low = _mm512_maskz_cvttpd_epi32(
                kAll8, _mm512_maskz_div_round_pd(kAll8, cap_numerator,
                                                 _mm512_maskz_cvtepi32_pd(kAll8, low_half(divisor)),
                                                 _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
            const __m256i cap_high = _mm512_maskz_cvttpd_epi32(
                kAll8,
                _mm512_maskz_div_round_pd(kAll8, cap_numerator,
                                          _mm512_maskz_cvtepi32_pd(kAll8, high_half(divisor)),
                                          _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
            k.cap[j] = join(cap_low, cap_high);
            // The output at the cap against the output beyond every a (X1's result at
            // INT32_MAX), on the lanes the cap can bound: a factor of 0 multiplies every a to 0,
            // and inputs below 2^30 keep a at most operand + 2^30 - 1.
            const auto out = [&](__m512i x) NVDLA_SDP_SIMD_STEP {
                return clamp32(bounded_finish<Cvt, false>(x, k.lower[j], k.upper[j], t), out_lo,
                               out_hi);
            };
            const __mmask16 capped =
                _mm512_cmpgt_epi32_mask(
                    _mm512_add_epi32(k.bias[j], _mm512_set1_epi32((1 << 30) - 1)), k.cap[j]) &
                _mm512_test_epi32_mask(k.factor[j], k.factor[j]);
            differ |= _mm512_mask_cmpneq_epi32_mask(
                capped, out(bounded_requantise(k.cap[j], k.factor[j], t)), out(int32_max));
            unclamped |= input_clamps(k, j, t, out);
        }
        k.takes = negative == 0 && differ == 0;
        k.clamps_input = k.takes && unclamped == 0;
        // Whether (x - offset) * scale >= 0 for every x the convertor takes.
        k.positive = s.cvt.scale >= 0 ? below_offset == 0 : above_offset == 0;
        return k;
    }

    // bounded_line's clamp of the input, piece j's from its other constants. X1's rounded
    // product r(a) = (a * factor + half) >> shift of a = max(in + bias, 0) (factor >= 0) is
    // clamped to [lower, upper] and a capped at `cap`, where r still fits 32 bits. r is
    // non-decreasing in a, so a clamped to [a_low, a_high] instead (about the least a whose r
    // reaches lower, and the least whose r reaches upper, at most the cap: from a double
    // quotient, one off at most) gives the same outputs when r(a_low) and r(a_high) lie in
    // [lower, upper] and give the outputs of a = 0 and of every a beyond (of r = INT32_MAX;
    // a factor of 0 leaves r at 0): then the clamp of r is the identity. The input itself is
    // clamped to [a_low - bias, a_high - bias], so that no sum wraps and inputs of any size
    // need no check, and r is (in * factor + offset) >> shift with offset = bias * factor +
    // half, wrapping (the true value lies in [0, 2^31)). Returns the lanes where this does not
    // hold, or where the input's bounds leave int32; `out` gives the output of X1's results.
    template <class Out>
    NVDLA_SDP_SIMD_STEP __mmask16 input_clamps(BoundedConstants& k, uint32_t j,
                                               const BoundedTerms& t, const Out& out) const {
        const __m512i factor = k.factor[j], bias = k.bias[j];
        const __mmask16 scaled = _mm512_test_epi32_mask(factor, factor);
        const __m512i divisor = _mm512_maskz_max_epi32(kAll16, factor, _mm512_set1_epi32(1));
        const __m512d scale = _mm512_set1_pd(double(int64_t(1) << x1.shift));
        const __m512d half = _mm512_set1_pd(double(t.x1_half));
        // ceil((target * 2^shift - half) / factor) within [0, cap], 8 lanes.
        const auto least8 = [&](__m256i target, __m256i by, __m256i cap) NVDLA_SDP_SIMD_STEP {
            const __m512d numerator = _mm512_maskz_sub_pd(
                kAll8, _mm512_maskz_mul_pd(kAll8, _mm512_maskz_cvtepi32_pd(kAll8, target), scale),
                half);
            const __m512d q =
                _mm512_maskz_div_pd(kAll8, numerator, _mm512_maskz_cvtepi32_pd(kAll8, by));
            const __m512d within =
                _mm512_maskz_min_pd(kAll8, _mm512_maskz_max_pd(kAll8, q, _mm512_setzero_pd()),
                                    _mm512_maskz_cvtepi32_pd(kAll8, cap));
            return _mm512_maskz_cvt_roundpd_epi32(kAll8, within,
                                                  _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
        };
        const auto least = [&](__m512i target) NVDLA_SDP_SIMD_STEP {
            return _mm512_maskz_mov_epi32(
                scaled, join(least8(low_half(target), low_half(divisor), low_half(k.cap[j])),
                             least8(high_half(target), high_half(divisor), high_half(k.cap[j]))));
        };
        const __m512i a_high = least(k.upper[j]);
        const __m512i a_low = _mm512_maskz_min_epi32(kAll16, least(k.lower[j]), a_high);
        const __m512i low = _mm512_sub_epi32(a_low, bias), high = _mm512_sub_epi32(a_high, bias);
        // a - bias wraps when a and bias differ in sign and so do a and the difference.
        const auto wraps = [&](__m512i a, __m512i difference) NVDLA_SDP_SIMD_STEP {
            return _mm512_movepi32_mask(
                _mm512_and_si512(_mm512_xor_si512(a, bias), _mm512_xor_si512(a, difference)));
        };
        k.input_low[j] = low;
        k.input_high[j] = high;
        k.offset[j] = _mm512_add_epi32(_mm512_maskz_mullo_epi32(kAll16, bias, factor), t.x1_round);
        const __m512i r_low = bounded_requantise(a_low, factor, t);
        const __m512i r_high = bounded_requantise(a_high, factor, t);
        return wraps(a_low, low) | wraps(a_high, high) |
               _mm512_cmplt_epi32_mask(r_low, k.lower[j]) |
               _mm512_cmpgt_epi32_mask(r_high, k.upper[j]) |
               _mm512_cmpneq_epi32_mask(out(r_low), out(_mm512_setzero_si512())) |
               _mm512_mask_cmpneq_epi32_mask(scaled, out(r_high),
                                             out(_mm512_set1_epi32(INT32_MAX)));
    }

    // bounded_line with the input clamped (input_clamps): a clamp, X1's product and shift, the
    // convertor's product and shift, for inputs of any size (about 9 steps per 16 outputs).
    template <bool Int8Out, int Cvt, uint32_t Pieces>
    NVDLA_SDP_SIMD void clamped_input_line(FusedSource from, std::byte* lines,
                                           const BoundedConstants& k) const {
        // Locals, so that the stores through `lines` cannot make the compiler reload them.
        __m512i low[Pieces], high[Pieces], factor[Pieces], offset[Pieces];
        for (uint32_t j = 0; j < Pieces; ++j) {
            low[j] = k.input_low[j];
            high[j] = k.input_high[j];
            factor[j] = k.factor[j];
            offset[j] = k.offset[j];
        }
        const BoundedTerms t = bounded_terms();
        const auto run = [&](auto positive_form) NVDLA_SDP_SIMD_STEP {
            store_pieces<Int8Out, Pieces>(
                from, lines,
                [&](const int32_t* at, __mmask16 m, size_t, uint32_t j) NVDLA_SDP_SIMD_STEP {
                    const __m512i in = clamp32(_mm512_maskz_loadu_epi32(m, at), low[j], high[j]);
                    return bounded_convert<Cvt, decltype(positive_form)::value>(
                        bounded_product(in, factor[j], offset[j], t), t);
                });
        };
        if (k.positive)
            run(std::true_type{});
        else
            run(std::false_type{});
    }

    template <bool Int8Out, int Cvt, int X, uint32_t Pieces>
    NVDLA_SDP_SIMD bool bounded_line(FusedSource from, const OperandLine* ops, std::byte* lines,
                                     uint32_t& saturations) const {
        static_assert(Cvt != kCvtAny && (X == kRectifiedStages || X == kRectifiedClipStages));
        if (!bounded_form()) return false;
        const auto constant = [](const XStage& x, const OperandLine& o) {
            return x.enabled && (o.same_for_every_element || (!o.alu && !o.mul));
        };
        if (!constant(s.bs, ops[0])) return false;
        if (X == kRectifiedClipStages && x2.alu && !constant(s.bn, ops[1])) return false;
        const BoundedConstants* group = bounded ? bounded->find(ops) : nullptr;
        BoundedConstants made;
        if (!group) made = bounded_constants<Cvt>(ops, X == kRectifiedClipStages, Pieces);
        const BoundedConstants& k = group ? *group : made;
        if (!k.takes) return false;
        if (k.clamps_input) {
            clamped_input_line<Int8Out, Cvt, Pieces>(from, lines, k);
            return true;
        }
        // Locals, so that the stores through `lines` cannot make the compiler reload them.
        __m512i bias[Pieces], factor[Pieces], cap[Pieces], lower[Pieces], upper[Pieces];
        for (uint32_t j = 0; j < Pieces; ++j) {
            bias[j] = k.bias[j];
            factor[j] = k.factor[j];
            cap[j] = k.cap[j];
            lower[j] = k.lower[j];
            upper[j] = k.upper[j];
        }
        const BoundedTerms t = bounded_terms();
        const __m512i zero = _mm512_setzero_si512();
        const __m512i bias30 = _mm512_set1_epi32(1 << 30);
        __m512i beyond = zero;
        const auto run = [&](auto positive_form) NVDLA_SDP_SIMD {
            store_pieces<Int8Out, Pieces>(
                from, lines,
                [&](const int32_t* at, __mmask16 m, size_t, uint32_t j) NVDLA_SDP_SIMD_STEP {
                    const __m512i v = _mm512_maskz_loadu_epi32(m, at);
                    beyond = _mm512_or_si512(beyond, _mm512_add_epi32(v, bias30));
                    const __m512i a = _mm512_maskz_min_epi32(
                        kAll16, _mm512_maskz_max_epi32(kAll16, _mm512_add_epi32(v, bias[j]), zero),
                        cap[j]);
                    return bounded_finish<Cvt, decltype(positive_form)::value>(
                        bounded_requantise(a, factor[j], t), lower[j], upper[j], t);
                });
        };
        if (k.positive)
            run(std::true_type{});
        else
            run(std::false_type{});
        if (_mm512_movepi32_mask(beyond))
            line<Int8Out, Cvt, unrectified(X), Pieces>(from, ops, lines, saturations);
        return true;
    }

    // X: kNoStages, kAnyStages (an X or Y stage is on) or kCommonStages; Pieces: 16-channel
    // pieces per channel group (1 or 2).
    template <bool Int8Out, int Cvt, int X, uint32_t Pieces>
    NVDLA_SDP_SIMD void line(FusedSource from, const OperandLine* ops, std::byte* lines,
                             uint32_t& saturations) const {
        if constexpr ((X == kRectifiedStages || X == kRectifiedClipStages) && Cvt != kCvtAny)
            if (bounded_line<Int8Out, Cvt, X, Pieces>(from, ops, lines, saturations)) return;
        // Locals, so that the stores through `lines` cannot make the compiler reload them.
        // A copy of the constants, so that the stores through `lines` (std::byte, which may
        // alias anything) cannot make the compiler reload them for every element.
        const Fused f = *this;
        const Delivery d = f.cacc;
        const __m512i lo = f.c.lo, hi = f.c.hi;
        // X operands the same for every element: taken once for the line.
        XLanes16 bs[Pieces], bn[Pieces];
        XOperands k;
        if constexpr (X) {
            const auto constant = [](const XStage& x, const OperandLine& o) {
                return x.enabled && (o.same_for_every_element || (!o.alu && !o.mul));
            };
            if (constant(s.bs, ops[0])) {
                for (uint32_t j = 0; j < Pieces; ++j)
                    bs[j] = f.x1.lanes16(ops[0].alu ? ops[0].alu + 16 * j : nullptr,
                                         ops[0].mul ? ops[0].mul + 16 * j : nullptr);
                k.bs = bs;
            }
            if (constant(s.bn, ops[1])) {
                for (uint32_t j = 0; j < Pieces; ++j)
                    bn[j] = f.x2.lanes16(ops[1].alu ? ops[1].alu + 16 * j : nullptr,
                                         ops[1].mul ? ops[1].mul + 16 * j : nullptr);
                k.bn = bn;
            }
        }
        // The rectified forms: multipliers >= 0, inputs in [-2^30, 2^30) (each input plus
        // 2^30 OR-ed into `beyond`, whose sign bit then says whether one was not).
        constexpr bool kRectified = X == kRectifiedStages || X == kRectifiedClipStages;
        __m512i beyond = _mm512_setzero_si512();
        if constexpr (kRectified) {
            // (Per kernel or from registers: common_stages().)
            if (!k.bs)
                return line<Int8Out, Cvt, unrectified(X), Pieces>(from, ops, lines, saturations);
            for (uint32_t j = 0; j < Pieces; ++j)
                beyond = _mm512_or_si512(beyond, k.bs[j].factor32);
            // Below a shift of 16, what follows X1 must take every value from rectified_limit
            // on to the same output: the convertor does, or X2's MIN by operands not above it.
            bool limit_ok = !f.x1.narrow_low || f.c.constant_from <= f.x1.rectified_limit;
            if (!limit_ok && X == kRectifiedClipStages && f.x2.alu && f.x2.algo == 1 && k.bn) {
                const __m512i limit = _mm512_set1_epi32(f.x1.rectified_limit);
                __mmask16 above = 0;
                for (uint32_t j = 0; j < Pieces; ++j)
                    above |= _mm512_cmpgt_epi32_mask(k.bn[j].operand32, limit);
                limit_ok = above == 0;
            }
            if (_mm512_movepi32_mask(beyond) || !limit_ok)
                return line<Int8Out, Cvt, unrectified(X), Pieces>(from, ops, lines, saturations);
        }
        const __m512i bias30 = _mm512_set1_epi32(1 << 30);
        const auto take = [&](const int32_t* at, __mmask16 m) NVDLA_SDP_SIMD_STEP {
            const __m512i v = d.load(at, m);
            if constexpr (kRectified) beyond = _mm512_or_si512(beyond, _mm512_add_epi32(v, bias30));
            return v;
        };
        uint32_t flagged = 0;
        store_pieces<Int8Out, Pieces>(
            from, lines,
            [&](const int32_t* at, __mmask16 m, size_t place, uint32_t j) NVDLA_SDP_SIMD_STEP {
                return f.template piece<Cvt, X>(take(at, m), place, j, ops, k, lo, hi, flagged);
            });
        if constexpr (kRectified)
            if (_mm512_movepi32_mask(beyond))
                return line<Int8Out, Cvt, unrectified(X), Pieces>(from, ops, lines, saturations);
        saturations += flagged;
    }

    template <bool Int8Out, int Cvt>
    NVDLA_SDP_SIMD void run(const AccumulatorCube* cube, InputReader* input, FusedOperands operands,
                            OutputWriter& writer, Counters& counters) {
        const int x = s.bs.enabled || s.bn.enabled || s.ew.enabled ? common_stages() : kNoStages;
        using LineFn =
            void (Fused::*)(FusedSource, const OperandLine*, std::byte*, uint32_t&) const;
        static constexpr LineFn kLines[9][2] = {
            {&Fused::line<Int8Out, Cvt, kNoStages, 1>, &Fused::line<Int8Out, Cvt, kNoStages, 2>},
            {&Fused::line<Int8Out, Cvt, kAnyStages, 1>, &Fused::line<Int8Out, Cvt, kAnyStages, 2>},
            {&Fused::line<Int8Out, Cvt, kCommonStages, 1>,
             &Fused::line<Int8Out, Cvt, kCommonStages, 2>},
            {&Fused::line<Int8Out, Cvt, kBareStages, 1>,
             &Fused::line<Int8Out, Cvt, kBareStages, 2>},
            {&Fused::line<Int8Out, Cvt, kResidualStages, 1>,
             &Fused::line<Int8Out, Cvt, kResidualStages, 2>},
            {&Fused::line<Int8Out, Cvt, kClipStages, 1>,
             &Fused::line<Int8Out, Cvt, kClipStages, 2>},
            {&Fused::line<Int8Out, Cvt, kRectifiedStages, 1>,
             &Fused::line<Int8Out, Cvt, kRectifiedStages, 2>},
            {&Fused::line<Int8Out, Cvt, kRectifiedClipStages, 1>,
             &Fused::line<Int8Out, Cvt, kRectifiedClipStages, 2>},
            {&Fused::line<Int8Out, Cvt, kMemorySumStages, 1>,
             &Fused::line<Int8Out, Cvt, kMemorySumStages, 2>}};
        const LineFn line_fn = kLines[x][s.group == 32 ? 1 : 0];
        // The residual form takes Y's one-byte operands where they lie, when the output cannot
        // overwrite them before they are used.
        if (x == kResidualStages && operands.ew && !operands_overlap_output(s))
            operands.ew->hand_bytes_in_place();
        if (x == kMemorySumStages && operands.bn && !operands_overlap_output(s))
            operands.bn->hand_bytes_in_place();
        std::optional<GroupConstants<BoundedConstants>> groups;
        if constexpr (Cvt != kCvtAny)
            if ((x == kRectifiedStages || x == kRectifiedClipStages) && bounded_form()) {
                const uint32_t pieces = s.group == 32 ? 2 : 1;
                groups.emplace(s, operands, [&](const OperandLine* ops) {
                    return bounded_constants<Cvt>(ops, x == kRectifiedClipStages, pieces);
                });
                bounded = &*groups;
            }
        fused_pass(s, cube, input, operands, writer, counters,
                   [&](FusedSource from, const OperandLine* ops, std::byte* lines,
                       uint32_t& saturations) { (this->*line_fn)(from, ops, lines, saturations); });
    }
};

// ---- Offline int8 layers without memory operands ----

// An offline int8 -> int8 layer whose stages take their operands from registers maps each input
// byte to an output byte by the same function in every lane: the scalar stages (the reference)
// compute it for the 256 values once, and the lines are mapped 64 bytes at a time with AVX-512
// VBMI's byte permutes. Input, groups and output share the atom's layout (group = atom lanes).
bool byte_table_supported(const Settings& s, const FusedOperands& operands) {
    const auto x_registers = [](const XStage& x) {
        return !x.enabled ||
               ((x.alu_bypass || !x.alu_from_memory) && (x.mul_bypass || !x.mul_from_memory));
    };
    const YStage& y = s.ew;
    const bool y_registers = !y.enabled || (!y.lut && (y.alu_bypass || !y.alu_from_memory) &&
                                            (y.mul_bypass || !y.mul_from_memory));
    return isa_vbmi() && !s.flying && s.input == Precision::Int8 && s.proc == Precision::Int8 &&
           s.output == Precision::Int8 && !s.eql && !s.to_pdp && !s.src.packed && !s.dst.packed &&
           s.group == s.atom && s.in_lanes == s.atom && s.out_lanes == s.atom && !operands.bs &&
           !operands.bn && !operands.ew && x_registers(s.bs) && x_registers(s.bn) && y_registers;
}

// The output byte and the saturation flag (0 or 1) of each input byte, by its unsigned value.
struct ByteTable {
    alignas(64) uint8_t out[256];
    alignas(64) uint8_t flag[256];
};

ByteTable byte_table(const Settings& s) {
    std::array<int32_t, 256> values;
    for (int u = 0; u < 256; ++u) values[u] = static_cast<int8_t>(u);
    Counters unused;
    if (s.bs.enabled) run_x(s.bs, false, false, values, {});
    if (s.bn.enabled) run_x(s.bn, false, false, values, {});
    if (s.ew.enabled) run_y(s, values, {}, unused);
    ByteTable t;
    for (int u = 0; u < 256; ++u) {
        Counters c;
        uint16_t out = 0;
        run_c(s, std::span(&values[u], 1), std::span(&out, 1), c);
        t.out[u] = static_cast<uint8_t>(out);
        t.flag[u] = c.saturations ? 1 : 0;
    }
    return t;
}

#define NVDLA_SDP_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

// 64 table entries from 256 by the bytes of x: permutes of 128 entries by the low 7 bits,
// the half chosen by the top bit.
NVDLA_SDP_VBMI inline __m512i look_up(const __m512i (&t)[4], __m512i x) {
    const __m512i low = _mm512_permutex2var_epi8(t[0], x, t[1]);
    const __m512i high = _mm512_permutex2var_epi8(t[2], x, t[3]);
    return _mm512_mask_mov_epi8(low, _mm512_movepi8_mask(x), high);
}

NVDLA_SDP_VBMI void run_byte_table(const Settings& s, InputReader& input, OutputWriter& writer,
                                   Counters& counters) {
    const ByteTable table = byte_table(s);
    __m512i out[4], flag[4];
    for (int i = 0; i < 4; ++i) {
        out[i] = _mm512_load_si512(table.out + 64 * i);
        flag[i] = _mm512_load_si512(table.flag + 64 * i);
    }
    const size_t n = size_t(s.width) * s.atom;  // writer.group_bytes(): one surface per group
    std::byte* const line = writer.group_lines();
    uint64_t flagged = 0;
    for (uint32_t g = 0; g < s.groups; ++g)
        for (uint32_t h = 0; h < s.height; ++h)
            for (uint32_t b = 0; b < s.batches; ++b) {
                // Every batch reads the same input (Sdp::execute's order).
                const std::byte* src = input.line_bytes(g, h);
                for (size_t i = 0; i < n; i += 64) {
                    const __mmask64 m = n - i >= 64 ? ~__mmask64(0) : (__mmask64(1) << (n - i)) - 1;
                    const __m512i x = _mm512_maskz_loadu_epi8(m, src + i);
                    _mm512_mask_storeu_epi8(line + i, m, look_up(out, x));
                    if (s.count_saturation) {
                        const __m512i f = look_up(flag, x);
                        flagged += static_cast<uint64_t>(
                            __builtin_popcountll(_mm512_mask_test_epi8_mask(m, f, f)));
                    }
                }
                writer.write_lines(b, g, h, line);
            }
    counters.saturations += static_cast<uint32_t>(flagged);
}

NVDLA_SDP_SIMD void fused(const Settings& s, const AccumulatorCube* cube, InputReader* input,
                          FusedOperands operands, OutputWriter& writer, Counters& counters) {
    Fused f(s, cube ? cube->clip : 0);
    const int cvt =
        s.cvt.offset == 0 && s.cvt.scale == 1 && (s.cvt.shift & 63u) == 0 && !s.count_saturation
            ? kCvtSaturate
        : f.c.clamp ? kCvtClamp
                    : kCvtAny;
    if (s.output == Precision::Int8) {
        if (cvt == kCvtSaturate)
            f.run<true, kCvtSaturate>(cube, input, operands, writer, counters);
        else if (cvt == kCvtClamp)
            f.run<true, kCvtClamp>(cube, input, operands, writer, counters);
        else
            f.run<true, kCvtAny>(cube, input, operands, writer, counters);
    } else {
        if (cvt == kCvtSaturate)
            f.run<false, kCvtSaturate>(cube, input, operands, writer, counters);
        else if (cvt == kCvtClamp)
            f.run<false, kCvtClamp>(cube, input, operands, writer, counters);
        else
            f.run<false, kCvtAny>(cube, input, operands, writer, counters);
    }
}

}  // namespace

void force_scalar(bool scalar) {
    g_scalar = scalar;
}

bool simd_enabled() {
    return !g_scalar && isa_level() >= IsaLevel::Avx2;
}

void flying_line_simd(const Settings& s, const AccumulatorCube& cube, uint32_t b, uint32_t g,
                      uint32_t h, std::span<int32_t> line) {
    if (use_avx512())
        flying_channels_last(s, cube, b, g, h, line);
    else
        avx2::flying_line(s, cube, b, g, h, line);
}

bool x_simd_supported(const XStage& x) {
    // A memory operand's shift must leave every int16 within 32 bits (no saturation).
    return x.alu_bypass || !x.alu_from_memory || x.alu_shift <= 15;
}

void run_x_simd(const XStage& x, std::span<int32_t> line, OperandLine ops) {
    if (use_avx512())
        x_line(x, line, ops);
    else
        avx2::run_x(x, line, ops);
}

bool y_simd_supported(const Settings& s) {
    // EW_TRUNCATE is 10 bits; the vector form rounds by at most 63.
    return !s.fp() && s.ew.enabled && !s.ew.lut && (s.ew.mul_bypass || s.ew.truncate <= 63);
}

void run_y_simd(const YStage& y, std::span<int32_t> line, OperandLine ops) {
    avx2::run_y(y, line, ops);
}

bool c_simd_supported(const Settings& s) {
    return !s.fp() && !s.eql && s.output != Precision::Fp16;
}

void run_c_simd(const Settings& s, std::span<const int32_t> line, std::span<uint16_t> out,
                Counters& counters) {
    if (use_avx512())
        c_line(s, line, out, counters);
    else
        avx2::run_c(s, line, out, counters);
}

bool fused_supported(const Settings& s, const AccumulatorCube* flying) {
    const bool source = s.flying ? flying && flying->channels_last() : s.input != Precision::Fp16;
    return source && c_simd_supported(s) && (!s.ew.enabled || y_simd_supported(s)) &&
           (s.to_pdp || !s.dst.packed) && (!s.bs.enabled || x_simd_supported(s.bs)) &&
           (!s.bn.enabled || x_simd_supported(s.bn)) &&
           ((s.group % 16 == 0 && s.out_lanes % 16 == 0 && s.group <= 32) ||
            (s.group == 8 && s.out_lanes == 8));
}

void run_fused(const Settings& s, const AccumulatorCube* cube, InputReader* input,
               FusedOperands operands, OutputWriter& writer, Counters& counters) {
    if (input && byte_table_supported(s, operands))
        run_byte_table(s, *input, writer, counters);
    else if (use_avx512() && s.group >= 16)
        fused(s, cube, input, operands, writer, counters);
    else
        // Groups of 8 (nv_small's 8-byte atoms) take the AVX2 form's 8 lanes at both levels.
        avx2::run_fused(s, cube, input, operands, writer, counters);
}

}  // namespace nvdla::emu::sdp
