// SDP's integer datapath in AVX2: the same stages as the AVX-512 forms (sdp_simd.cpp), 8
// elements at a time, for CPUs without AVX-512 (and NVDLA_EMU_ISA=avx2). Bit for bit what the
// scalar stages compute (sdp_x.cpp, sdp_c.cpp); tests/emu/sdp_simd_test.cpp compares them.
//
// X works in 64-bit lanes (the ALU result has 33 bits, the products 49), 4 at a time; AVX2 has
// no 64-bit min, max, abs or arithmetic shift, so those are made of compares and blends. The
// convertor works in 32-bit lanes when every (x - offset) * scale of the 8 elements provably
// stays within 2^30, else the 8 elements go through the scalar convertor.
#include <immintrin.h>

#include <algorithm>
#include <optional>
#include <type_traits>
#include <vector>

#include "emu/sdp_internal.hpp"

#define NVDLA_SDP_AVX2 __attribute__((target("avx2")))
// The per-vector steps of the line loops: inlined, so that their vectors stay in registers.
#define NVDLA_SDP_AVX2_STEP NVDLA_SDP_AVX2 __attribute__((always_inline))

namespace nvdla::emu::sdp::avx2 {
namespace {

// The output convertor's forms in the fused pass (sdp_simd.cpp): it only saturates, its clamp
// form (CParams::clamp), any.
constexpr int kCvtSaturate = 0, kCvtClamp = 1, kCvtAny = 2;

// The first n (at most 8) of 8 int32 lanes set, for maskload.
NVDLA_SDP_AVX2 inline __m256i lanes8(size_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min<size_t>(n, 8))),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

NVDLA_SDP_AVX2 inline __m256i low64(__m256i v) {
    return _mm256_cvtepi32_epi64(_mm256_castsi256_si128(v));
}
NVDLA_SDP_AVX2 inline __m256i high64(__m256i v) {
    return _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1));
}
// The low 32 bits of the 64-bit lanes of low and high, in order.
NVDLA_SDP_AVX2 inline __m256i narrow(__m256i low, __m256i high) {
    const __m256 pairs =
        _mm256_shuffle_ps(_mm256_castsi256_ps(low), _mm256_castsi256_ps(high), 0x88);
    return _mm256_permute4x64_epi64(_mm256_castps_si256(pairs), 0xd8);
}

NVDLA_SDP_AVX2 inline __m256i max64(__m256i a, __m256i b) {
    return _mm256_blendv_epi8(b, a, _mm256_cmpgt_epi64(a, b));
}
NVDLA_SDP_AVX2 inline __m256i min64(__m256i a, __m256i b) {
    return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(a, b));
}

// x / 2^shift rounded half away from zero, 4 int64 lanes whose magnitude is below 2^62.
NVDLA_SDP_AVX2 inline __m256i round_shift64(__m256i x, uint32_t shift, __m128i count,
                                            __m256i half) {
    if (shift == 0) return x;
    const __m256i sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), x);
    const __m256i magnitude = _mm256_sub_epi64(_mm256_xor_si256(x, sign), sign);
    const __m256i q = _mm256_srl_epi64(_mm256_add_epi64(magnitude, half), count);
    return _mm256_sub_epi64(_mm256_xor_si256(q, sign), sign);
}

// The same for 8 int32 lanes whose magnitude plus 2^(shift - 1) stays below 2^31:
// floor((x + 2^(shift - 1) - [x < 0]) / 2^shift), which is that rounding for shift >= 1.
NVDLA_SDP_AVX2 inline __m256i round_shift32(__m256i x, uint32_t shift, __m128i count,
                                            __m256i half) {
    if (shift == 0) return x;
    return _mm256_sra_epi32(_mm256_add_epi32(_mm256_add_epi32(x, half), _mm256_srai_epi32(x, 31)),
                            count);
}

NVDLA_SDP_AVX2 inline __m256i clamp32(__m256i x, __m256i lo, __m256i hi) {
    return _mm256_min_epi32(_mm256_max_epi32(x, lo), hi);
}

// Whether all 8 lanes are below 2^30 in magnitude.
NVDLA_SDP_AVX2 inline bool below_2_30(__m256i v) {
    const __m256i magnitude = _mm256_abs_epi32(v);  // INT32_MIN stays 2^31 unsigned
    const __m256i limit = _mm256_set1_epi32(1 << 30);
    const __m256i beyond = _mm256_cmpeq_epi32(_mm256_max_epu32(magnitude, limit), magnitude);
    return _mm256_testz_si256(beyond, beyond);
}

// ---- CACC's values ----

// CACC's delivery of 8 channels-last sums, rounded half away by 2^clip (sdp_simd.cpp).
struct Delivery {
    uint32_t clip;
    __m128i count;
    __m256i half;

    NVDLA_SDP_AVX2 explicit Delivery(uint32_t c)
        : clip(c),
          count(_mm_cvtsi32_si128(static_cast<int>(c))),
          half(_mm256_set1_epi32(c ? int32_t(1) << (c - 1) : 0)) {}
    NVDLA_SDP_AVX2_STEP __m256i round(__m256i x) const {
        if (clip == 0) return x;
        const __m256i sign = _mm256_srai_epi32(x, 31);
        return _mm256_sra_epi32(_mm256_add_epi32(_mm256_add_epi32(x, half), sign), count);
    }
    NVDLA_SDP_AVX2_STEP __m256i load(const int32_t* src) const {
        return round(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
    }
    NVDLA_SDP_AVX2_STEP __m256i load(const int32_t* src, __m256i mask) const {
        return round(_mm256_maskload_epi32(src, mask));
    }
};

// ---- X ----

// One X stage's operands for 8 channels: the ALU operand after its shift (8 x int32 and in
// 64-bit lanes), the multiplier and, for a SUM, their product (64-bit lanes, 4 + 4).
struct XLanes {
    __m256i op32, op_lo, op_hi, factor_lo, factor_hi, op_factor_lo, op_factor_hi;
    __m256i factor32;  // the multipliers in 32-bit lanes (XParams::narrow)
};

struct XParams {
    // Values, not a reference to the stage (sdp_simd.cpp's XParams).
    uint32_t algo, shift;
    bool relu;
    bool alu, sum, mul, prelu;
    __m256i alu_constant;  // 8 x int32
    __m128i alu_count;
    __m256i mul_constant;  // 4 x int64
    __m128i count;
    __m256i half;  // 4 x int64
    __m256i int32_min, int32_max;
    // apply_narrow takes this programming (sdp_simd.cpp's XParams::narrow).
    bool narrow_lanes;
    __m128i narrow_count;  // shift - 16
    __m256i narrow_half;   // 2^(shift - 17)
    // sum_low_shift takes a multiplier with a shift below 16 after a SUM (no PReLU)
    // (sdp_simd.cpp's XParams::narrow_low).
    bool narrow_low;
    __m128i low_count, high_count;  // shift, 16 - shift
    __m256i low_round, q_limit;     // 2^(shift - 1) (0 for shift 0), 2^(15 + shift) - 2
    int32_t rectified_limit;        // q_limit * 2^(16 - shift) (narrow_low), else INT32_MAX
    __m256i relu_floor;             // 0 with the ReLU, else INT32_MIN (sum_memory)

    NVDLA_SDP_AVX2 explicit XParams(const XStage& stage)
        : algo(stage.alu_algo),
          shift(stage.mul_shift),
          relu(!stage.relu_bypass),
          alu(!stage.alu_bypass),
          sum(alu && stage.alu_algo >= 2),
          mul(!stage.mul_bypass),
          prelu(mul && stage.prelu),
          alu_constant(_mm256_set1_epi32(alu && !stage.alu_from_memory
                                             ? x_alu_operand(stage.alu_operand, stage.alu_shift)
                                             : 0)),
          alu_count(_mm_cvtsi32_si128(static_cast<int>(stage.alu_shift))),
          mul_constant(_mm256_set1_epi64x(stage.mul_operand)),
          count(_mm_cvtsi32_si128(static_cast<int>(stage.mul_shift))),
          half(_mm256_set1_epi64x(stage.mul_shift ? int64_t(1) << (stage.mul_shift - 1) : 0)),
          int32_min(_mm256_set1_epi64x(INT32_MIN)),
          int32_max(_mm256_set1_epi64x(INT32_MAX)) {
        const int32_t operand =
            alu && !stage.alu_from_memory ? x_alu_operand(stage.alu_operand, stage.alu_shift) : 0;
        narrow_lanes = (mul ? shift >= 16 && shift <= 45 : shift == 0) && operand >= -(1 << 30) &&
                       operand <= (1 << 30);
        narrow_count = _mm_cvtsi32_si128(static_cast<int>(narrow_lanes && mul ? shift - 16 : 0));
        narrow_half =
            _mm256_set1_epi32(narrow_lanes && mul && shift > 16 ? int32_t(1) << (shift - 17) : 0);
        narrow_low =
            mul && sum && !prelu && shift < 16 && operand >= -(1 << 30) && operand <= (1 << 30);
        const uint32_t low_shift = narrow_low ? shift : 0;
        low_count = _mm_cvtsi32_si128(static_cast<int>(low_shift));
        high_count = _mm_cvtsi32_si128(static_cast<int>(16 - low_shift));
        low_round = _mm256_set1_epi32(low_shift ? int32_t(1) << (low_shift - 1) : 0);
        q_limit = _mm256_set1_epi32((int32_t(1) << (15 + low_shift)) - 2);
        rectified_limit =
            narrow_low ? ((int32_t(1) << (15 + low_shift)) - 2) << (16 - low_shift) : INT32_MAX;
        relu_floor = _mm256_set1_epi32(relu ? 0 : INT32_MIN);
    }

    // Whether 8 inputs may take apply_narrow: every |in| < 2^30.
    NVDLA_SDP_AVX2_STEP bool fits_narrow(__m256i in) const { return below_2_30(in); }

    // 8 elements in 32-bit lanes (sdp_simd.cpp's XParams::apply16_narrow). `SumOnly`: the ALU
    // sums, the multiplier is on and there is no PReLU (a requantisation, known at compile time).
    template <bool SumOnly = false>
    NVDLA_SDP_AVX2_STEP __m256i apply_narrow(__m256i in, const XLanes& k) const {
        __m256i a = in;
        if (SumOnly) {
            a = _mm256_add_epi32(in, k.op32);
        } else if (alu) {
            if (algo == 0)
                a = _mm256_max_epi32(in, k.op32);
            else if (algo == 1)
                a = _mm256_min_epi32(in, k.op32);
            else
                a = _mm256_add_epi32(in, k.op32);
        }
        const __m256i zero = _mm256_setzero_si256();
        if (!SumOnly && !mul) return relu ? _mm256_max_epi32(a, zero) : a;
        const __m256i low16 = _mm256_set1_epi32(0xffff);
        const __m256i high_product = _mm256_mullo_epi32(_mm256_srai_epi32(a, 16), k.factor32);
        const __m256i low_product = _mm256_mullo_epi32(_mm256_and_si256(a, low16), k.factor32);
        const __m256i q = _mm256_add_epi32(high_product, _mm256_srai_epi32(low_product, 16));
        const __m256i low = _mm256_and_si256(low_product, low16);
        const __m256i negative = _mm256_srai_epi32(q, 31);  // -1 or 0
        __m256i out;
        if (shift == 16) {
            // q plus the carry of low + 2^15 - [q < 0] (the compare gives -1 for a carry).
            out = _mm256_sub_epi32(
                q, _mm256_cmpgt_epi32(_mm256_add_epi32(low, negative), _mm256_set1_epi32(0x7fff)));
        } else {
            const __m256i correction = _mm256_and_si256(_mm256_cmpeq_epi32(low, zero), negative);
            out = _mm256_sra_epi32(_mm256_add_epi32(_mm256_add_epi32(q, narrow_half), correction),
                                   narrow_count);
        }
        if (!SumOnly && prelu)
            out = _mm256_blendv_epi8(out, a, _mm256_cmpgt_epi32(a, _mm256_set1_epi32(-1)));
        if (relu) out = _mm256_max_epi32(out, zero);
        return out;
    }

    // 8 elements in 32-bit lanes (`narrow_low` programming, |in| < 2^30; sdp_simd.cpp's
    // XParams::sum16_low_shift): a = in + operand, a * factor = q * 2^16 + low, rounded by
    // 2^shift as q * 2^(16 - shift) + ((low + 2^(shift - 1) - [q < 0]) >> shift) while
    // |q| <= 2^(15 + shift) - 2 (|q| < 2^30 here). False (and `out` unset) when some |q| is
    // beyond.
    NVDLA_SDP_AVX2_STEP bool sum_low_shift(__m256i in, const XLanes& k, __m256i& out) const {
        const __m256i a = _mm256_add_epi32(in, k.op32);
        const __m256i low16 = _mm256_set1_epi32(0xffff);
        const __m256i high_product = _mm256_mullo_epi32(_mm256_srai_epi32(a, 16), k.factor32);
        const __m256i low_product = _mm256_mullo_epi32(_mm256_and_si256(a, low16), k.factor32);
        const __m256i q = _mm256_add_epi32(high_product, _mm256_srai_epi32(low_product, 16));
        __m256i low = _mm256_and_si256(low_product, low16);
        const __m256i beyond = _mm256_cmpgt_epi32(_mm256_abs_epi32(q), q_limit);
        if (!_mm256_testz_si256(beyond, beyond)) return false;
        if (shift)
            low = _mm256_add_epi32(_mm256_add_epi32(low, low_round), _mm256_srai_epi32(q, 31));
        out = _mm256_add_epi32(_mm256_sll_epi32(q, high_count), _mm256_srl_epi32(low, low_count));
        if (relu) out = _mm256_max_epi32(out, _mm256_setzero_si256());
        return true;
    }

    // A requantisation's 8 elements (SUM and MUL without PReLU: narrow_lanes or narrow_low)
    // in 32-bit lanes where they fit, else in 64-bit lanes.
    NVDLA_SDP_AVX2_STEP __m256i requantise(__m256i in, const XLanes& k) const {
        if (fits_narrow(in)) {
            if (!narrow_low) return apply_narrow<true>(in, k);
            __m256i out;
            if (sum_low_shift(in, k, out)) return out;
        }
        return apply(in, k);
    }

    // A requantisation with its ReLU on 8 elements whose multipliers are all >= 0 and
    // |in + operand| < 2^31 (sdp_simd.cpp's XParams::rectified16; below a shift of 16 a q
    // beyond q_limit gives at least rectified_limit).
    NVDLA_SDP_AVX2_STEP __m256i rectified(__m256i in, const XLanes& k) const {
        const __m256i a = _mm256_max_epi32(_mm256_add_epi32(in, k.op32), _mm256_setzero_si256());
        const __m256i low16 = _mm256_set1_epi32(0xffff);
        const __m256i low_product = _mm256_mullo_epi32(_mm256_and_si256(a, low16), k.factor32);
        const __m256i q = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_srli_epi32(a, 16), k.factor32),
                                           _mm256_srli_epi32(low_product, 16));
        if (narrow_low)
            return _mm256_add_epi32(
                _mm256_sll_epi32(_mm256_min_epi32(q, q_limit), high_count),
                _mm256_srl_epi32(_mm256_add_epi32(_mm256_and_si256(low_product, low16), low_round),
                                 low_count));
        if (shift == 16)
            return _mm256_add_epi32(
                q, _mm256_and_si256(_mm256_srli_epi32(low_product, 15), _mm256_set1_epi32(1)));
        return _mm256_srl_epi32(_mm256_add_epi32(q, narrow_half), narrow_count);
    }

    // 8 elements through a stage without multiplier or shift whose ALU is off, MAX or MIN
    // (exact in 32-bit lanes for any input), then ReLU.
    NVDLA_SDP_AVX2_STEP __m256i bound(__m256i in, const XLanes& k) const {
        __m256i a = in;
        if (alu) a = algo == 0 ? _mm256_max_epi32(in, k.op32) : _mm256_min_epi32(in, k.op32);
        return relu ? _mm256_max_epi32(a, _mm256_setzero_si256()) : a;
    }

    // 8 elements through a stage summing memory operands (their int16 values) without
    // multiplier or shift, then its ReLU (sdp_simd.cpp's XParams::sum16_memory): the 32-bit
    // sum, saturated to in's side where it overflows.
    NVDLA_SDP_AVX2_STEP __m256i sum_memory(__m256i in, const int16_t* operand) const {
        const __m256i shifted = _mm256_sll_epi32(
            _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(operand))),
            alu_count);
        const __m256i total = _mm256_add_epi32(in, shifted);
        // Sign bit set on overflow: in and the operand of one sign, the sum of the other.
        const __m256i over =
            _mm256_and_si256(_mm256_xor_si256(in, total), _mm256_xor_si256(shifted, total));
        const __m256i bound =
            _mm256_xor_si256(_mm256_srai_epi32(in, 31), _mm256_set1_epi32(INT32_MAX));
        const __m256i saturated = _mm256_castps_si256(_mm256_blendv_ps(
            _mm256_castsi256_ps(total), _mm256_castsi256_ps(bound), _mm256_castsi256_ps(over)));
        return _mm256_max_epi32(saturated, relu_floor);
    }

    // The operands of 8 elements from memory (or nullptr: the registers').
    NVDLA_SDP_AVX2_STEP XLanes lanes(const int16_t* alu_mem, const int16_t* mul_mem) const {
        XLanes k;
        const __m256i zero = _mm256_setzero_si256();
        // Memory operands: int16 shifted left by at most 15, so no saturation.
        k.op32 = !alu      ? zero
                 : alu_mem ? _mm256_sll_epi32(_mm256_cvtepi16_epi32(_mm_loadu_si128(
                                                  reinterpret_cast<const __m128i*>(alu_mem))),
                                              alu_count)
                           : alu_constant;
        k.op_lo = low64(k.op32);
        k.op_hi = high64(k.op32);
        k.factor_lo = k.factor_hi = mul_constant;
        if (mul && mul_mem) {
            k.factor_lo =
                _mm256_cvtepi16_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(mul_mem)));
            k.factor_hi = _mm256_cvtepi16_epi64(
                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(mul_mem + 4)));
        }
        k.factor32 = narrow(k.factor_lo, k.factor_hi);
        k.op_factor_lo = sum && mul ? _mm256_mul_epi32(k.op_lo, k.factor_lo) : zero;
        k.op_factor_hi = sum && mul ? _mm256_mul_epi32(k.op_hi, k.factor_hi) : zero;
        return k;
    }

    // 4 elements in 64-bit lanes: the truncated product saturated to 32 bits (in 64-bit lanes).
    NVDLA_SDP_AVX2_STEP __m256i product4(__m256i in, __m256i a, __m256i factor,
                                         __m256i op_factor) const {
        __m256i product = a;
        // 33 x 16 bits: a SUM is multiplied term by term (each term fits 32 bits).
        if (mul)
            product = sum ? _mm256_add_epi64(_mm256_mul_epi32(in, factor), op_factor)
                          : _mm256_mul_epi32(a, factor);
        const __m256i r = round_shift64(product, shift, count, half);
        return min64(max64(r, int32_min), int32_max);
    }

    // 8 elements with their operands.
    NVDLA_SDP_AVX2_STEP __m256i apply(__m256i in32, const XLanes& k) const {
        __m256i a32 = in32;
        if (alu) {
            if (algo == 0)
                a32 = _mm256_max_epi32(in32, k.op32);
            else if (algo == 1)
                a32 = _mm256_min_epi32(in32, k.op32);
        }
        const __m256i in_lo = low64(in32), in_hi = high64(in32);
        // The ALU result: 33 bits for a SUM, else within 32.
        const __m256i a_lo = sum ? _mm256_add_epi64(in_lo, k.op_lo) : low64(a32);
        const __m256i a_hi = sum ? _mm256_add_epi64(in_hi, k.op_hi) : high64(a32);
        __m256i out = narrow(product4(in_lo, a_lo, k.factor_lo, k.op_factor_lo),
                             product4(in_hi, a_hi, k.factor_hi, k.op_factor_hi));
        if (prelu) {
            // A non-negative ALU result passes with its low 32 bits, untruncated.
            const __m256i negative = narrow(_mm256_cmpgt_epi64(_mm256_setzero_si256(), a_lo),
                                            _mm256_cmpgt_epi64(_mm256_setzero_si256(), a_hi));
            out = _mm256_blendv_epi8(narrow(a_lo, a_hi), out, negative);
        }
        if (relu) out = _mm256_max_epi32(out, _mm256_setzero_si256());
        return out;
    }

    // 8 elements; the memory operands (or nullptr) at the same place of their lines.
    NVDLA_SDP_AVX2_STEP __m256i apply(__m256i in32, const int16_t* alu_mem,
                                      const int16_t* mul_mem) const {
        return apply(in32, lanes(alu_mem, mul_mem));
    }
};

// ---- Y ----

// A Y memory operand's convertor on 4 int16 values, in 64-bit lanes: sign-extended when
// bypassed, else (x - offset) * scale = x * scale - offset * scale (exact: below 2^47),
// rounded by the shift (6 bits) and saturated to 32 bits.
struct YConvertor {
    bool bypass;
    uint32_t shift;
    __m128i count;
    __m256i scale, offset_product, half, int32_min, int32_max;

    NVDLA_SDP_AVX2 explicit YConvertor(const OperandConvertor& c)
        : bypass(c.bypass),
          shift(c.params.shift & 63u),
          count(_mm_cvtsi32_si128(static_cast<int>(shift))),
          scale(_mm256_set1_epi64x(c.params.scale)),
          offset_product(_mm256_set1_epi64x(int64_t(c.params.offset) * c.params.scale)),
          half(_mm256_set1_epi64x(shift ? int64_t(1) << (shift - 1) : 0)),
          int32_min(_mm256_set1_epi64x(INT32_MIN)),
          int32_max(_mm256_set1_epi64x(INT32_MAX)) {}
    NVDLA_SDP_AVX2_STEP __m256i apply(const int16_t* src) const {
        const __m256i x =
            _mm256_cvtepi16_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src)));
        if (bypass) return x;
        const __m256i p = _mm256_sub_epi64(_mm256_mul_epi32(x, scale), offset_product);
        return min64(max64(round_shift64(p, shift, count, half), int32_min), int32_max);
    }
};

// Y's MUL (PReLU) and ALU on the int pipelines, without the LUT (sdp_y.cpp's y_int).
struct YParams {
    uint32_t algo, truncate;  // values (XParams)
    bool prelu;
    bool mul, alu;
    YConvertor mul_cvt, alu_cvt;
    __m256i mul_constant, alu_constant;  // 4 x int64
    __m128i count;
    __m256i half, int32_min, int32_max, one;
    // apply_narrow takes this programming (plan_y_narrow).
    bool narrow_lanes;
    bool cvt_bypass;
    __m256i alu_constant32, cvt_offset32, cvt_scale32, cvt_half32;
    __m128i cvt_count;
    uint32_t cvt_shift;

    NVDLA_SDP_AVX2 explicit YParams(const YStage& stage)
        : algo(stage.alu_algo),
          truncate(stage.truncate),
          prelu(stage.prelu),
          mul(!stage.mul_bypass),
          alu(!stage.alu_bypass),
          mul_cvt(stage.mul_cvt),
          alu_cvt(stage.alu_cvt),
          mul_constant(_mm256_set1_epi64x(static_cast<int32_t>(stage.mul_operand))),
          alu_constant(_mm256_set1_epi64x(static_cast<int32_t>(stage.alu_operand))),
          count(_mm_cvtsi32_si128(static_cast<int>(stage.truncate))),
          // EW_TRUNCATE has 10 bits: from 64 on the shift leaves 0 and the half is moot.
          half(_mm256_set1_epi64x(
              stage.truncate && stage.truncate < 64 ? int64_t(1) << (stage.truncate - 1) : 0)),
          int32_min(_mm256_set1_epi64x(INT32_MIN)),
          int32_max(_mm256_set1_epi64x(INT32_MAX)),
          one(_mm256_set1_epi64x(1)) {
        const YNarrowPlan plan = plan_y_narrow(stage);
        narrow_lanes = plan.narrow;
        cvt_bypass = stage.alu_cvt.bypass;
        cvt_shift = plan.cvt_shift;
        alu_constant32 = _mm256_set1_epi32(static_cast<int32_t>(stage.alu_operand));
        cvt_offset32 = _mm256_set1_epi32(plan.cvt_offset);
        cvt_scale32 = _mm256_set1_epi32(stage.alu_cvt.params.scale);
        cvt_half32 = _mm256_set1_epi32(plan.cvt_half);
        cvt_count = _mm_cvtsi32_si128(static_cast<int>(cvt_shift));
    }

    // 8 elements in 32-bit lanes (`narrow_lanes` programming, |in| < 2^30).
    NVDLA_SDP_AVX2_STEP __m256i apply_narrow(__m256i in, const int16_t* alu_mem) const {
        if (!alu) return in;
        __m256i operand = alu_constant32;
        if (alu_mem) {
            operand =
                _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(alu_mem)));
            if (!cvt_bypass)
                operand = round_shift32(
                    _mm256_mullo_epi32(_mm256_sub_epi32(operand, cvt_offset32), cvt_scale32),
                    cvt_shift, cvt_count, cvt_half32);
        }
        if (algo == 0) return _mm256_max_epi32(in, operand);
        if (algo == 1) return _mm256_min_epi32(in, operand);
        return _mm256_add_epi32(in, operand);
    }

    // 4 elements in 64-bit lanes (int32 values); the memory operands at the same place.
    NVDLA_SDP_AVX2_STEP __m256i apply4(__m256i in, const int16_t* alu_mem,
                                       const int16_t* mul_mem) const {
        __m256i x = in;
        if (mul) {
            const __m256i operand = mul_mem ? mul_cvt.apply(mul_mem) : mul_constant;
            // 32 x 32 -> 64 bits, then EW_TRUNCATE with rounding into 32 bits.
            const __m256i product = _mm256_mul_epi32(in, operand);
            x = min64(max64(round_shift64(product, truncate, count, half), int32_min), int32_max);
            // PReLU: a non-negative input passes unchanged.
            if (prelu)
                x = _mm256_blendv_epi8(in, x, _mm256_cmpgt_epi64(_mm256_setzero_si256(), in));
        }
        if (alu) {
            const __m256i operand = alu_mem ? alu_cvt.apply(alu_mem) : alu_constant;
            switch (algo) {
                case 0: x = max64(x, operand); break;
                case 1: x = min64(x, operand); break;
                case 2: x = _mm256_add_epi64(x, operand); break;  // 33 bits
                default: x = _mm256_andnot_si256(_mm256_cmpeq_epi64(x, operand), one); break;
            }
            x = min64(max64(x, int32_min), int32_max);
        }
        return x;
    }

    NVDLA_SDP_AVX2_STEP __m256i apply(__m256i in32, const int16_t* alu_mem,
                                      const int16_t* mul_mem) const {
        return narrow(
            apply4(low64(in32), alu_mem, mul_mem),
            apply4(high64(in32), alu_mem ? alu_mem + 4 : nullptr, mul_mem ? mul_mem + 4 : nullptr));
    }
};

// ---- C ----

struct CParams {
    const Settings& s;
    uint32_t shift;
    bool count_saturation;
    bool narrow_ok;  // 32-bit lanes possible at all (shift <= 30)
    // Values outside [lower, upper] saturate the output (sdp_simd.cpp's CParams).
    bool outside_saturates;
    bool negative_scale;
    bool flag_above, flag_below;
    __m256i above_bound, below_bound;
    bool identity;         // offset 0, scale 1
    int32_t lower, upper;  // x in [lower, upper]: the product fits 32-bit lanes (plan_c_narrow)
    __m256i lower_v, upper_v, offset, scale, half, lo17, hi17, lo, hi, three;
    __m128i count;
    // 64-bit lanes (4 x int64).
    __m256i scale64, offset_product, half64, lo17_64, hi17_64, lo64, hi64, two64;
    // clamped() takes this programming: the flag not counted, the input clamped (plan_c_clamp).
    bool clamp;
    __m256i clamp_lower, clamp_upper;
    int32_t constant_from;  // sdp_simd.cpp's CParams::constant_from

    NVDLA_SDP_AVX2 explicit CParams(const Settings& settings, bool clamp_form = false)
        : s(settings),
          shift(settings.cvt.shift & 63u),
          count_saturation(settings.count_saturation),
          narrow_ok(shift <= 30),
          outside_saturates(plan_c_narrow(settings.cvt, settings.output).outside_saturates),
          negative_scale(settings.cvt.scale < 0),
          identity(settings.cvt.offset == 0 && settings.cvt.scale == 1) {
        const FlagBounds bounds = convertor_flag_bounds(s.cvt, shift);
        flag_above = bounds.above <= INT32_MAX;
        flag_below = bounds.below >= INT32_MIN;
        above_bound =
            _mm256_set1_epi32(static_cast<int32_t>(std::max<int64_t>(bounds.above, INT32_MIN)));
        below_bound =
            _mm256_set1_epi32(static_cast<int32_t>(std::min<int64_t>(bounds.below, INT32_MAX)));
        const CNarrowPlan plan = plan_c_narrow(s.cvt, s.output);
        lower = plan.lower;
        upper = plan.upper;
        lower_v = _mm256_set1_epi32(lower);
        upper_v = _mm256_set1_epi32(upper);
        offset = _mm256_set1_epi32(s.cvt.offset);
        scale = _mm256_set1_epi32(s.cvt.scale);
        half = _mm256_set1_epi32(narrow_ok && shift ? int32_t(1) << (shift - 1) : 0);
        lo17 = _mm256_set1_epi32(-65536);
        hi17 = _mm256_set1_epi32(65535);
        const bool int8 = s.output == Precision::Int8;
        lo = _mm256_set1_epi32(int8 ? -128 : -32768);
        hi = _mm256_set1_epi32(int8 ? 127 : 32767);
        three = _mm256_set1_epi32(3);
        scale64 = _mm256_set1_epi64x(s.cvt.scale);
        offset_product = _mm256_set1_epi64x(int64_t(s.cvt.offset) * s.cvt.scale);
        half64 = _mm256_set1_epi64x(shift ? int64_t(1) << (shift - 1) : 0);
        lo17_64 = _mm256_set1_epi64x(-65536);
        hi17_64 = _mm256_set1_epi64x(65535);
        lo64 = _mm256_set1_epi64x(int8 ? -128 : -32768);
        hi64 = _mm256_set1_epi64x(int8 ? 127 : 32767);
        two64 = _mm256_set1_epi64x(2);
        count = _mm_cvtsi32_si128(static_cast<int>(shift));
        // (The plan's searches only for the fused pass, once per operation.)
        const CClampPlan clamp_plan =
            clamp_form && !count_saturation ? plan_c_clamp(s.cvt, s.output) : CClampPlan{};
        clamp = clamp_plan.exact;
        constant_from = clamp_form && !count_saturation ? clamp_plan.upper : INT32_MAX;
        clamp_lower = _mm256_set1_epi32(clamp_plan.lower);
        clamp_upper = _mm256_set1_epi32(clamp_plan.upper);
    }

    // 8 elements (`clamp` programming): the rounded product of the clamped input, which a
    // saturating narrowing to the output precision turns into the output (sdp_simd.cpp).
    NVDLA_SDP_AVX2_STEP __m256i clamped(__m256i x) const {
        const __m256i inside = clamp32(x, clamp_lower, clamp_upper);
        return round_shift32(_mm256_mullo_epi32(_mm256_sub_epi32(inside, offset), scale), shift,
                             count, half);
    }

    // 8 elements (the first `valid` counted): the output values as int32, saturated to the
    // output precision.
    NVDLA_SDP_AVX2_STEP __m256i apply(__m256i x, size_t valid, uint32_t& saturations) const {
        const __m256i outside =
            _mm256_or_si256(_mm256_cmpgt_epi32(lower_v, x), _mm256_cmpgt_epi32(x, upper_v));
        const unsigned valid_bits = (1u << valid) - 1;
        const unsigned outside_bits =
            static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(outside))) & valid_bits;
        // (Branch-free when the values outside saturate: the inside ones are blended through.)
        if (outside_saturates) {
            const __m256i p = _mm256_mullo_epi32(_mm256_sub_epi32(x, offset), scale);
            const __m256i rounded = round_shift32(p, shift, count, half);
            const __m256i r = clamp32(rounded, lo, hi);
            if (count_saturation) {
                const __m256i floor_value = _mm256_sra_epi32(p, count);
                const __m256i d =
                    _mm256_add_epi32(_mm256_sub_epi32(floor_value, clamp32(rounded, lo17, hi17)),
                                     _mm256_set1_epi32(1));
                __m256i flagged =
                    _mm256_andnot_si256(outside, _mm256_cmpeq_epi32(_mm256_max_epu32(d, three), d));
                // x >= above, x <= below on the lanes outside.
                if (flag_above)
                    flagged = _mm256_or_si256(
                        flagged, _mm256_andnot_si256(_mm256_cmpgt_epi32(above_bound, x), outside));
                if (flag_below)
                    flagged = _mm256_or_si256(
                        flagged, _mm256_andnot_si256(_mm256_cmpgt_epi32(x, below_bound), outside));
                saturations += static_cast<uint32_t>(__builtin_popcount(
                    static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(flagged))) &
                    valid_bits));
            }
            // The product's sign: x > offset, unless the scale is negative (not 0: outside).
            __m256i high_side = _mm256_cmpgt_epi32(x, offset);
            if (negative_scale) high_side = _mm256_xor_si256(high_side, _mm256_set1_epi32(-1));
            const __m256i bound = _mm256_blendv_epi8(lo, hi, high_side);
            return _mm256_blendv_epi8(r, bound, outside);
        }
        if (!narrow_ok || outside_bits) {
            uint32_t flagged_bits = 0;
            const __m256i out =
                narrow(wide(low64(x), 0, flagged_bits), wide(high64(x), 4, flagged_bits));
            if (count_saturation)
                saturations += static_cast<uint32_t>(__builtin_popcount(flagged_bits & valid_bits));
            return out;
        }
        const __m256i p = identity ? x : _mm256_mullo_epi32(_mm256_sub_epi32(x, offset), scale);
        const __m256i r = round_shift32(p, shift, count, half);
        if (count_saturation) {
            // The C model's flag: floor - result + 1 > 2 unsigned (sdp_simd.cpp).
            const __m256i floor_value = _mm256_sra_epi32(p, count);
            const __m256i d = _mm256_add_epi32(
                _mm256_sub_epi32(floor_value, clamp32(r, lo17, hi17)), _mm256_set1_epi32(1));
            const __m256i above = _mm256_cmpeq_epi32(_mm256_max_epu32(d, three), d);
            saturations += static_cast<uint32_t>(__builtin_popcount(
                static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(above))) &
                valid_bits));
        }
        return clamp32(r, lo, hi);
    }

    // 4 elements in 64-bit lanes: (x - offset) * scale = x * scale - offset * scale (48 bits),
    // rounded, saturated to 17 bits and the output precision; the C model's flags (of lanes
    // first, first + 1, ...) into `flagged`.
    NVDLA_SDP_AVX2_STEP __m256i wide(__m256i x, unsigned first, uint32_t& flagged) const {
        const __m256i p = _mm256_sub_epi64(_mm256_mul_epi32(x, scale64), offset_product);
        const __m256i r17 = min64(max64(round_shift64(p, shift, count, half64), lo17_64), hi17_64);
        if (count_saturation) {
            // floor(p / 2^shift): an arithmetic shift made of a logical one.
            const __m256i sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), p);
            const __m256i floor_value =
                _mm256_xor_si256(_mm256_srl_epi64(_mm256_xor_si256(p, sign), count), sign);
            // floor - result + 1 > 2 unsigned: above 2 or negative as signed.
            const __m256i d =
                _mm256_add_epi64(_mm256_sub_epi64(floor_value, r17), _mm256_set1_epi64x(1));
            const __m256i beyond = _mm256_or_si256(_mm256_cmpgt_epi64(d, two64),
                                                   _mm256_cmpgt_epi64(_mm256_setzero_si256(), d));
            flagged |= static_cast<uint32_t>(_mm256_movemask_pd(_mm256_castsi256_pd(beyond)))
                       << first;
        }
        return min64(max64(r17, lo64), hi64);
    }
};

// ---- The stages over a line ----

NVDLA_SDP_AVX2 void flying_channels_last(const Settings& s, const AccumulatorCube& cube, uint32_t b,
                                         uint32_t g, uint32_t h, std::span<int32_t> line) {
    const uint32_t first = g * s.group;
    const uint32_t valid = std::min(s.group, s.channels - first);
    const int32_t* base = cube.sums.get() + cube.sum_index(b, first, h, 0);
    const Delivery cacc(cube.clip);
    for (uint32_t w = 0; w < s.width; ++w) {
        const int32_t* src = base + size_t(w) * cube.channel_stride;
        int32_t* dst = line.data() + size_t(w) * s.group;
        for (uint32_t j = 0; j < s.group; j += 8) {
            const __m256i v = cacc.load(src + j, lanes8(valid > j ? valid - j : 0));
            if (s.group - j >= 8)
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j), v);
            else
                _mm256_maskstore_epi32(dst + j, lanes8(s.group - j), v);
        }
    }
}

// One X or Y stage over a line, 8 elements at a time; the last few through buffers of 8.
template <class Params, class Stage>
NVDLA_SDP_AVX2 void stage_line(const Stage& stage, std::span<int32_t> line, OperandLine ops) {
    const Params p(stage);
    const size_t n = line.size();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i in = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line.data() + i));
        _mm256_storeu_si256(
            reinterpret_cast<__m256i*>(line.data() + i),
            p.apply(in, ops.alu ? ops.alu + i : nullptr, ops.mul ? ops.mul + i : nullptr));
    }
    if (i == n) return;
    const size_t rest = n - i;
    int16_t alu[8] = {}, mul[8] = {};
    if (ops.alu) std::copy_n(ops.alu + i, rest, alu);
    if (ops.mul) std::copy_n(ops.mul + i, rest, mul);
    const __m256i mask = lanes8(rest);
    const __m256i out = p.apply(_mm256_maskload_epi32(line.data() + i, mask),
                                ops.alu ? alu : nullptr, ops.mul ? mul : nullptr);
    _mm256_maskstore_epi32(line.data() + i, mask, out);
}

NVDLA_SDP_AVX2 void x_line(const XStage& stage, std::span<int32_t> line, OperandLine ops) {
    stage_line<XParams>(stage, line, ops);
}

NVDLA_SDP_AVX2 void y_line(const YStage& stage, std::span<int32_t> line, OperandLine ops) {
    stage_line<YParams>(stage, line, ops);
}

NVDLA_SDP_AVX2 void c_line(const Settings& s, std::span<const int32_t> line,
                           std::span<uint16_t> out, Counters& counters) {
    const CParams c(s);
    const size_t n = line.size();
    uint32_t saturations = 0;
    for (size_t i = 0; i < n; i += 8) {
        const size_t valid = std::min<size_t>(8, n - i);
        const __m256i v =
            c.apply(_mm256_maskload_epi32(line.data() + i, lanes8(valid)), valid, saturations);
        alignas(16) uint16_t words[8];
        _mm_store_si128(reinterpret_cast<__m128i*>(words),
                        _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
        std::copy_n(words, valid, out.data() + i);
    }
    counters.saturations += saturations;
}

// Fused::bounded_line's per-channel constants for one channel group's X operands (up to four
// pieces of 8 channels), as sdp_simd.cpp's (alignas too), with the input's clamp and the
// convertor in 16-bit lanes.
struct alignas(64) BoundedConstants {
    __m256i bias[4], factor[4], cap[4], lower[4], upper[4];
    __m256i input_low[4], input_high[4], offset[4];
    bool takes = false, positive = false, clamps_input = false, converts_in_words = false;
};

// The constants of the fused pass (sdp_simd.cpp's Fused, 8 channels at a time).
struct Fused {
    const Settings& s;
    bool bs_on, bn_on, ew_on;
    uint32_t out_lanes;
    Delivery cacc;
    XParams x1, x2;
    YParams y;
    CParams c;
    // bounded_line's constants of each channel group (run() makes them for the pass).
    const GroupConstants<BoundedConstants>* bounded = nullptr;

    // `clip`: CACC's delivery of a channels-last cube, 0 for values taken as they are.
    NVDLA_SDP_AVX2 Fused(const Settings& settings, uint32_t clip)
        : s(settings),
          bs_on(settings.bs.enabled),
          bn_on(settings.bn.enabled),
          ew_on(settings.ew.enabled),
          out_lanes(settings.out_lanes),
          cacc(clip),
          x1(settings.bs),
          x2(settings.bn),
          y(settings.ew),
          c(settings, true) {}

    // The forms of a line: any programming (each stage checked for every 8 elements), or a
    // convolution's requantisation in X1 (SUM and MUL without PReLU, operands the same for
    // every element, 32-bit lanes where the values fit), alone or bounded by X2 (a MAX or MIN
    // without multiplier or shift: a clip such as ReLU6), Y off.
    // kRectified and kRectifiedBound: those whose requantisation has its ReLU
    // (XParams::rectified), for the lines whose multipliers are all >= 0 and whose inputs lie
    // in [-2^30, 2^30), with a shift below 16 only where what follows X1 saturates beyond
    // XParams::rectified_limit (sdp_simd.cpp; the other lines take the unrectified form).
    // kRequantiseSum: the requantisation, then X2 summing a per-element memory operand without
    // multiplier or shift, its ReLU or not (XParams::sum_memory; a residual sum and ReLU).
    enum Form {
        kAnyStages,
        kRequantise,
        kRequantiseBound,
        kRectified,
        kRectifiedBound,
        kRequantiseSum
    };
    static constexpr Form unrectified(Form f) {
        return f == kRectified ? kRequantise : f == kRectifiedBound ? kRequantiseBound : f;
    }
    Form form() const {
        const bool requantise = bs_on && (x1.narrow_lanes || x1.narrow_low) && x1.mul && x1.sum &&
                                !x1.prelu && !(s.bs_dma.enabled && s.bs_dma.per_element) && !ew_on;
        if (!requantise) return kAnyStages;
        const bool rectified = x1.relu;
        if (!bn_on) return rectified ? kRectified : kRequantise;
        if (x2.sum && !x2.mul && x2.shift == 0 && s.bn.alu_from_memory && s.bn_dma.enabled &&
            s.bn_dma.per_element && s.bn_dma.take_alu && !s.bn_dma.take_mul)
            return kRequantiseSum;
        const bool bound = !x2.mul && x2.shift == 0 && (!x2.alu || x2.algo <= 1) &&
                           !(s.bn_dma.enabled && s.bn_dma.per_element);
        if (!bound) return kAnyStages;
        return rectified ? kRectifiedBound : kRequantiseBound;
    }

    // The rectified forms with a convertor that saturates or clamps, CACC's values taken
    // unrounded and X1's shift at most 30, in about half their steps (sdp_simd.cpp's
    // Fused::bounded_line: X2's bound and the convertor's clamp as one clamp to [lower, upper],
    // a capped where the output no longer changes so that X1's product fits 32-bit lanes, the
    // convertor's sign terms dropped when (x - offset) * scale >= 0 on [lower, upper]; what
    // depends on the channel group's X operands made once per group and pass). False (nothing
    // written) when a line does not take this form.
    bool bounded_form() const { return cacc.clip == 0 && x1.shift <= 30 && c.shift <= 30; }

    // X1's product and rounding and the convertor's terms of bounded_line.
    struct BoundedTerms {
        int32_t x1_half;  // 2^(shift - 1), 0 for shift 0
        __m256i x1_round;
        __m128i x1_count;
        __m256i scale, half;
        __m128i count;
        uint32_t shift;
        // (x - offset) * scale as x * scale + offset_term, wrapping (the result fits 32 bits),
        // and with the rounding's half when it is >= 0.
        __m256i offset_term, positive_term;
        // words_convert's: the scale, positive_term / 2^16 and the shift less 16 in 16-bit lanes.
        __m256i word_scale, word_term;
        __m128i word_count;
    };
    // The convertor's -offset * scale + half, wrapping (BoundedTerms::positive_term).
    uint32_t positive_term() const {
        return uint32_t(c.shift ? 1u << (c.shift - 1) : 0u) -
               uint32_t(s.cvt.offset) * uint32_t(s.cvt.scale);
    }
    NVDLA_SDP_AVX2 BoundedTerms bounded_terms() const {
        const int32_t x1_half = x1.shift ? int32_t(1) << (x1.shift - 1) : 0;
        const uint32_t offset_product = uint32_t(s.cvt.offset) * uint32_t(s.cvt.scale);
        const uint32_t positive = positive_term();
        return {x1_half,
                _mm256_set1_epi32(x1_half),
                _mm_cvtsi32_si128(static_cast<int>(x1.shift)),
                c.scale,
                c.half,
                c.count,
                c.shift,
                _mm256_set1_epi32(static_cast<int32_t>(0u - offset_product)),
                _mm256_set1_epi32(static_cast<int32_t>(positive)),
                _mm256_set1_epi16(s.cvt.scale),
                _mm256_set1_epi16(static_cast<int16_t>(positive >> 16)),
                _mm_cvtsi32_si128(static_cast<int>(c.shift > 16 ? c.shift - 16 : 0))};
    }
    // (a * factor + round) >> X1's shift: `round` is its half, or with the input clamped
    // the offset that adds the bias too (input_clamps).
    NVDLA_SDP_AVX2_STEP static __m256i bounded_requantise(__m256i a, __m256i factor,
                                                          const BoundedTerms& t) {
        return bounded_product(a, factor, t.x1_round, t);
    }
    NVDLA_SDP_AVX2_STEP static __m256i bounded_product(__m256i a, __m256i factor, __m256i round,
                                                       const BoundedTerms& t) {
        return _mm256_srl_epi32(_mm256_add_epi32(_mm256_mullo_epi32(a, factor), round), t.x1_count);
    }
    template <int Cvt, bool Positive>
    NVDLA_SDP_AVX2_STEP static __m256i bounded_finish(__m256i x, __m256i lower, __m256i upper,
                                                      const BoundedTerms& t) {
        return bounded_convert<Cvt, Positive>(_mm256_min_epi32(_mm256_max_epi32(x, lower), upper),
                                              t);
    }
    // The convertor of bounded_finish on x in [min(lower, upper), upper].
    template <int Cvt, bool Positive>
    NVDLA_SDP_AVX2_STEP static __m256i bounded_convert(__m256i x, const BoundedTerms& t) {
        if constexpr (Cvt == kCvtSaturate) return x;
        if constexpr (Positive)
            return _mm256_sra_epi32(
                _mm256_add_epi32(_mm256_mullo_epi32(x, t.scale), t.positive_term), t.count);
        const __m256i p = _mm256_add_epi32(_mm256_mullo_epi32(x, t.scale), t.offset_term);
        return round_shift32(p, t.shift, t.count, t.half);
    }
    // bounded_convert's positive form in 16-bit lanes, for x in [0, 2^15) (two pieces' values
    // packed), a shift of at least 16 and positive_term a multiple of 2^16 (converts_in_words):
    // x * scale + positive_term is V + k 2^32, V the true (x - offset) * scale + half, which
    // fits int32 (bounded_convert's premise). So floor(x * scale / 2^16), the high half of the
    // product of 16-bit lanes, plus positive_term / 2^16, wrapping in 16 bits, is
    // floor(V / 2^16), which fits them, and its shift by shift - 16 is V's by shift.
    NVDLA_SDP_AVX2_STEP static __m256i words_convert(__m256i x, const BoundedTerms& t) {
        return _mm256_sra_epi16(_mm256_add_epi16(_mm256_mulhi_epi16(x, t.word_scale), t.word_term),
                                t.word_count);
    }

    // The constants of bounded_line's lines with X operands `ops` (X1's the same for every
    // element, X2's too for the bounded form), 8 channels at a time.
    template <int Cvt>
    NVDLA_SDP_AVX2 BoundedConstants bounded_constants(const OperandLine* ops,
                                                      bool bound_form) const {
        BoundedConstants k;
        const bool bound = bound_form && x2.alu;
        const BoundedTerms t = bounded_terms();
        const __m256i zero = _mm256_setzero_si256();
        const __m256i int32_max = _mm256_set1_epi32(INT32_MAX);
        const __m256i clamp_lower = Cvt == kCvtClamp ? c.clamp_lower : _mm256_set1_epi32(INT32_MIN);
        const __m256i clamp_upper = Cvt == kCvtClamp ? c.clamp_upper : int32_max;
        const __m256d cap_numerator = _mm256_set1_pd(double(INT32_MAX - t.x1_half));
        const __m256i offset = c.offset, out_lo = c.lo, out_hi = c.hi;
        __m256i negative = zero, below_offset = zero, above_offset = zero, differ = zero,
                unclamped = zero, above_word = zero;
        const auto at_ = [](const int16_t* p, size_t at) { return p ? p + at : nullptr; };
        const uint32_t pieces = std::min(s.group, 32u) / 8;
        for (uint32_t j = 0; j < pieces; ++j) {
            const XLanes k1 = x1.lanes(at_(ops[0].alu, 8 * j), at_(ops[0].mul, 8 * j));
            k.bias[j] = k1.op32;
            k.factor[j] = k1.factor32;
            negative = _mm256_or_si256(negative, k.factor[j]);
            k.lower[j] = clamp_lower;
            k.upper[j] = clamp_upper;
            if (bound) {
                const XLanes k2 = x2.lanes(at_(ops[1].alu, 8 * j), at_(ops[1].mul, 8 * j));
                if (x2.algo == 0) {
                    k.lower[j] = _mm256_max_epi32(k2.op32, clamp_lower);
                } else {
                    const __m256i limit = x2.relu ? _mm256_max_epi32(k2.op32, zero) : k2.op32;
                    k.upper[j] =
                        _mm256_min_epi32(_mm256_max_epi32(limit, clamp_lower), clamp_upper);
                }
            }
            // X1's results are >= 0, so the clamp's lower bound may be too; the convertor then
            // takes x in [min(lower, upper), upper].
            k.lower[j] = _mm256_max_epi32(k.lower[j], zero);
            below_offset = _mm256_or_si256(
                below_offset, _mm256_cmpgt_epi32(offset, _mm256_min_epi32(k.lower[j], k.upper[j])));
            above_offset = _mm256_or_si256(above_offset, _mm256_cmpgt_epi32(k.upper[j], offset));
            above_word = _mm256_or_si256(
                above_word, _mm256_cmpgt_epi32(k.upper[j], _mm256_set1_epi32(INT16_MAX)));
            // The quotient of integers below 2^31 rounded to nearest is not rounded up to the
            // next integer (its distance to one is at least 1 / factor, far above an ulp).
            const __m256i divisor = _mm256_max_epi32(k.factor[j], _mm256_set1_epi32(1));
            const __m128i cap_low = _mm256_cvttpd_epi32(
                _mm256_div_pd(cap_numerator, _mm256_cvtepi32_pd(_mm256_castsi256_si128(divisor))));
            const __m128i cap_high = _mm256_cvttpd_epi32(_mm256_div_pd(
                cap_numerator, _mm256_cvtepi32_pd(_mm256_extracti128_si256(divisor, 1))));
            k.cap[j] = _mm256_inserti128_si256(_mm256_castsi128_si256(cap_low), cap_high, 1);
            // The output at the cap against the output beyond every a (X1's result at
            // INT32_MAX), on the lanes the cap can bound: a factor of 0 multiplies every a to 0,
            // and inputs below 2^30 keep a at most operand + 2^30 - 1.
            const auto out = [&](__m256i x) NVDLA_SDP_AVX2_STEP {
                return clamp32(bounded_finish<Cvt, false>(x, k.lower[j], k.upper[j], t), out_lo,
                               out_hi);
            };
            const __m256i capped = _mm256_andnot_si256(
                _mm256_cmpeq_epi32(k.factor[j], zero),
                _mm256_cmpgt_epi32(_mm256_add_epi32(k.bias[j], _mm256_set1_epi32((1 << 30) - 1)),
                                   k.cap[j]));
            const __m256i at_cap = out(bounded_requantise(k.cap[j], k.factor[j], t));
            differ = _mm256_or_si256(
                differ, _mm256_andnot_si256(_mm256_cmpeq_epi32(at_cap, out(int32_max)), capped));
            unclamped = _mm256_or_si256(unclamped, input_clamps(k, j, t, out));
        }
        k.takes = !_mm256_movemask_ps(_mm256_castsi256_ps(negative)) &&
                  _mm256_testz_si256(differ, differ);
        k.clamps_input = k.takes && _mm256_testz_si256(unclamped, unclamped);
        // Whether (x - offset) * scale >= 0 for every x the convertor takes.
        k.positive = s.cvt.scale >= 0 ? _mm256_testz_si256(below_offset, below_offset)
                                      : _mm256_testz_si256(above_offset, above_offset);
        // Whether words_convert gives bounded_convert's values after input_clamps, which keeps
        // X1's results within [0, upper]; for scales >= 0 only (MobileNetV2's): the tests'
        // random programs hardly reach the form with negative ones.
        k.converts_in_words = Cvt == kCvtClamp && k.clamps_input && k.positive &&
                              s.cvt.scale >= 0 && _mm256_testz_si256(above_word, above_word) &&
                              c.shift >= 16 && (positive_term() & 0xffffu) == 0;
        return k;
    }

    // sdp_simd.cpp's Fused::input_clamps for piece j of 8 channels: sets up the input's clamp
    // and X1's offset; the lanes (all ones) where they do not give the bounded form's outputs.
    template <class Out>
    NVDLA_SDP_AVX2_STEP __m256i input_clamps(BoundedConstants& k, uint32_t j, const BoundedTerms& t,
                                             const Out& out) const {
        const __m256i zero = _mm256_setzero_si256();
        const __m256i factor = k.factor[j], bias = k.bias[j];
        const __m256i unscaled = _mm256_cmpeq_epi32(factor, zero);
        const __m256i divisor = _mm256_max_epi32(factor, _mm256_set1_epi32(1));
        const __m256d scale = _mm256_set1_pd(double(int64_t(1) << x1.shift));
        const __m256d half = _mm256_set1_pd(double(t.x1_half));
        // ceil((target * 2^shift - half) / factor) within [0, cap], 4 lanes.
        const auto least4 = [&](__m128i target, __m128i by, __m128i cap) NVDLA_SDP_AVX2_STEP {
            const __m256d numerator =
                _mm256_sub_pd(_mm256_mul_pd(_mm256_cvtepi32_pd(target), scale), half);
            const __m256d q = _mm256_div_pd(numerator, _mm256_cvtepi32_pd(by));
            const __m256d within =
                _mm256_min_pd(_mm256_max_pd(q, _mm256_setzero_pd()), _mm256_cvtepi32_pd(cap));
            return _mm256_cvttpd_epi32(_mm256_ceil_pd(within));
        };
        const auto least = [&](__m256i target) NVDLA_SDP_AVX2_STEP {
            const __m128i low4 =
                least4(_mm256_castsi256_si128(target), _mm256_castsi256_si128(divisor),
                       _mm256_castsi256_si128(k.cap[j]));
            const __m128i high4 =
                least4(_mm256_extracti128_si256(target, 1), _mm256_extracti128_si256(divisor, 1),
                       _mm256_extracti128_si256(k.cap[j], 1));
            return _mm256_andnot_si256(
                unscaled, _mm256_inserti128_si256(_mm256_castsi128_si256(low4), high4, 1));
        };
        const __m256i a_high = least(k.upper[j]);
        const __m256i a_low = _mm256_min_epi32(least(k.lower[j]), a_high);
        const __m256i low = _mm256_sub_epi32(a_low, bias), high = _mm256_sub_epi32(a_high, bias);
        // a - bias wraps when a and bias differ in sign and so do a and the difference.
        const auto wraps = [&](__m256i a, __m256i difference) NVDLA_SDP_AVX2_STEP {
            return _mm256_srai_epi32(
                _mm256_and_si256(_mm256_xor_si256(a, bias), _mm256_xor_si256(a, difference)), 31);
        };
        k.input_low[j] = low;
        k.input_high[j] = high;
        k.offset[j] = _mm256_add_epi32(_mm256_mullo_epi32(bias, factor), t.x1_round);
        const __m256i r_low = bounded_requantise(a_low, factor, t);
        const __m256i r_high = bounded_requantise(a_high, factor, t);
        const __m256i at_zero = out(zero), beyond = out(_mm256_set1_epi32(INT32_MAX));
        const __m256i off_zero =
            _mm256_xor_si256(_mm256_cmpeq_epi32(out(r_low), at_zero), _mm256_set1_epi32(-1));
        const __m256i off_beyond =
            _mm256_andnot_si256(_mm256_or_si256(unscaled, _mm256_cmpeq_epi32(out(r_high), beyond)),
                                _mm256_set1_epi32(-1));
        return _mm256_or_si256(
            _mm256_or_si256(_mm256_or_si256(wraps(a_low, low), wraps(a_high, high)),
                            _mm256_or_si256(_mm256_cmpgt_epi32(k.lower[j], r_low),
                                            _mm256_cmpgt_epi32(r_high, k.upper[j]))),
            _mm256_or_si256(off_zero, off_beyond));
    }

    // The bounded forms' loop over a line's elements: piece(v, p) gives the 8 output values of
    // channels 8p to 8p + 7 from their CACC values v, stored in their places in the line buffers.
    template <bool Int8Out, class Piece>
    NVDLA_SDP_AVX2_STEP void bounded_pieces(FusedSource from, std::byte* lines,
                                            const Piece& piece) const {
        const uint32_t valid = from.valid, group = s.group, width = s.width;
        const size_t step = from.step, atom = s.atom, line_bytes = size_t(width) * atom;
        size_t place[4];
        piece_places<Int8Out>(line_bytes, place);
        const int32_t* src = from.values;
        for (uint32_t w = 0; w < width; ++w, src += step) {
            prefetch_position(src, step);
            for (uint32_t j = 0; j < group; j += 8)
                store8<Int8Out>(lines + w * atom + place[j / 8],
                                piece(load8(src, j, valid), j / 8));
        }
    }
    // The CACC values of the position 8 ahead of src's.
    NVDLA_SDP_AVX2_STEP static void prefetch_position(const int32_t* src, size_t step) {
        const auto ahead = reinterpret_cast<uintptr_t>(src) + 8 * step * sizeof(int32_t);
        __builtin_prefetch(reinterpret_cast<const void*>(ahead));
        __builtin_prefetch(reinterpret_cast<const void*>(ahead + 64));
    }
    // Channels j to j + 7 of a position's `valid` CACC values at src (0 past them).
    NVDLA_SDP_AVX2_STEP static __m256i load8(const int32_t* src, uint32_t j, uint32_t valid) {
        return j + 8 <= valid ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + j))
                              : _mm256_maskload_epi32(src + j, lanes8(valid > j ? valid - j : 0));
    }

    // clamped_input_line's int8 lines of 32-channel groups that fill their surface, with the
    // convertor in 16-bit lanes (`converts_in_words`: X1's results r within [0, 2^15)): the 32
    // values of r packed to 16 bits, words_convert, packed to bytes and stored as one piece.
    template <class Product>
    NVDLA_SDP_AVX2_STEP void words_line(FusedSource from, std::byte* lines, const Product& product,
                                        const BoundedTerms& t) const {
        const uint32_t valid = from.valid, width = s.width;
        const size_t step = from.step, atom = s.atom;
        // Per 128-bit lane i the bytes of pieces 0 to 3 [4i, 4i + 4).
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        const int32_t* src = from.values;
        for (uint32_t w = 0; w < width; ++w, src += step, lines += atom) {
            prefetch_position(src, step);
            const auto r = [&](uint32_t p)
                               NVDLA_SDP_AVX2_STEP { return product(load8(src, 8 * p, valid), p); };
            const __m256i words0 = words_convert(_mm256_packs_epi32(r(0), r(1)), t);
            const __m256i words1 = words_convert(_mm256_packs_epi32(r(2), r(3)), t);
            _mm256_storeu_si256(
                reinterpret_cast<__m256i*>(lines),
                _mm256_permutevar8x32_epi32(_mm256_packs_epi16(words0, words1), order));
        }
    }

    // bounded_line with the input clamped (input_clamps): a clamp, X1's product and shift, the
    // convertor's product and shift, for inputs of any size.
    template <bool Int8Out, int Cvt>
    NVDLA_SDP_AVX2 void clamped_input_line(FusedSource from, std::byte* lines,
                                           const BoundedConstants& k) const {
        // Locals, so that the stores through `lines` cannot make the compiler reload them.
        constexpr uint32_t kMaxPieces = 4;  // a group has at most 32 channels
        __m256i low[kMaxPieces], high[kMaxPieces], factor[kMaxPieces], offset[kMaxPieces];
        for (uint32_t j = 0; j < s.group / 8; ++j) {
            low[j] = k.input_low[j];
            high[j] = k.input_high[j];
            factor[j] = k.factor[j];
            offset[j] = k.offset[j];
        }
        const BoundedTerms t = bounded_terms();
        // X1's results.
        const auto product = [&](__m256i v, uint32_t p) NVDLA_SDP_AVX2_STEP {
            return bounded_product(clamp32(v, low[p], high[p]), factor[p], offset[p], t);
        };
        if constexpr (Int8Out)
            if (k.converts_in_words && s.group == 32 && out_lanes >= 32)
                return words_line(from, lines, product, t);
        const auto run = [&](auto positive_form) NVDLA_SDP_AVX2_STEP {
            bounded_pieces<Int8Out>(from, lines, [&](__m256i v, uint32_t p) NVDLA_SDP_AVX2_STEP {
                return bounded_convert<Cvt, decltype(positive_form)::value>(product(v, p), t);
            });
        };
        if (k.positive)
            run(std::true_type{});
        else
            run(std::false_type{});
    }

    template <bool Int8Out, int Cvt, Form F>
    NVDLA_SDP_AVX2 bool bounded_line(FusedSource from, const OperandLine* ops, std::byte* lines,
                                     uint32_t& saturations) const {
        static_assert(Cvt != kCvtAny && (F == kRectified || F == kRectifiedBound));
        if (!bounded_form()) return false;
        const auto constant = [](const XStage& x, const OperandLine& o) {
            return x.enabled && (o.same_for_every_element || (!o.alu && !o.mul));
        };
        if (!constant(s.bs, ops[0])) return false;
        if (F == kRectifiedBound && x2.alu && !constant(s.bn, ops[1])) return false;
        const BoundedConstants* group_constants = bounded ? bounded->find(ops) : nullptr;
        BoundedConstants made;
        if (!group_constants) made = bounded_constants<Cvt>(ops, F == kRectifiedBound);
        const BoundedConstants& k = group_constants ? *group_constants : made;
        if (!k.takes) return false;
        if (k.clamps_input) {
            clamped_input_line<Int8Out, Cvt>(from, lines, k);
            return true;
        }
        // Locals, so that the stores through `lines` cannot make the compiler reload them.
        constexpr uint32_t kMaxPieces = 4;  // a group has at most 32 channels
        __m256i bias[kMaxPieces], factor[kMaxPieces], cap[kMaxPieces], lower[kMaxPieces],
            upper[kMaxPieces];
        for (uint32_t j = 0; j < s.group / 8; ++j) {
            bias[j] = k.bias[j];
            factor[j] = k.factor[j];
            cap[j] = k.cap[j];
            lower[j] = k.lower[j];
            upper[j] = k.upper[j];
        }
        const BoundedTerms t = bounded_terms();
        const __m256i zero = _mm256_setzero_si256();
        const __m256i bias30 = _mm256_set1_epi32(1 << 30);
        __m256i beyond = zero;
        const auto run = [&](auto positive_form) NVDLA_SDP_AVX2 {
            bounded_pieces<Int8Out>(from, lines, [&](__m256i v, uint32_t p) NVDLA_SDP_AVX2_STEP {
                beyond = _mm256_or_si256(beyond, _mm256_add_epi32(v, bias30));
                const __m256i a =
                    _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v, bias[p]), zero), cap[p]);
                return bounded_finish<Cvt, decltype(positive_form)::value>(
                    bounded_requantise(a, factor[p], t), lower[p], upper[p], t);
            });
        };
        if (k.positive)
            run(std::true_type{});
        else
            run(std::false_type{});
        if (_mm256_movemask_ps(_mm256_castsi256_ps(beyond)))
            line<Int8Out, Cvt, unrectified(F)>(from, ops, lines, saturations);
        return true;
    }

    // Where the 8 values of channels j to j + 7 of an element go in a line's buffers, for
    // j = 0, 8, 16, 24: output surface j / out_lanes, element j % out_lanes (set up before the
    // loops, which then divide by nothing).
    template <bool Int8Out>
    NVDLA_SDP_AVX2_STEP void piece_places(size_t line_bytes, size_t (&place)[4]) const {
        constexpr size_t kElementBytes = Int8Out ? 1 : 2;
        for (uint32_t p = 0; p < 4; ++p)
            place[p] = (8 * p / out_lanes) * line_bytes + (8 * p % out_lanes) * kElementBytes;
    }

    // 8 output values (int32) into the line buffer, narrowed by saturating packs (which leave
    // in-range values as they are).
    template <bool Int8Out>
    NVDLA_SDP_AVX2_STEP static void store8(std::byte* dst, __m256i v) {
        const __m128i words =
            _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        if constexpr (Int8Out)
            _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), _mm_packs_epi16(words, words));
        else
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), words);
    }

    // One line of a channel group into the write DMA's line buffers. `Cvt`: the output
    // convertor's form (sdp_simd.cpp's kCvtSaturate, kCvtClamp, kCvtAny).
    template <bool Int8Out, int Cvt, Form F = kAnyStages>
    NVDLA_SDP_AVX2 void line(FusedSource from, const OperandLine* ops, std::byte* lines,
                             uint32_t& saturations) const {
        if constexpr ((F == kRectified || F == kRectifiedBound) && Cvt != kCvtAny)
            if (bounded_line<Int8Out, Cvt, F>(from, ops, lines, saturations)) return;
        // A copy of the constants, so that the stores through `lines` (std::byte, which may
        // alias anything) cannot make the compiler reload them for every element.
        const Fused f = *this;
        const uint32_t valid = from.valid;
        const int32_t* src = from.values;
        const size_t step = from.step, atom = s.atom, group = s.group;
        const uint32_t width = s.width;
        size_t place[4];
        piece_places<Int8Out>(size_t(width) * atom, place);
        // X operands the same for every element (per kernel or registers): once for the line,
        // 8 channels at a time (a group has at most 32).
        const auto constant = [](const XStage& x, const OperandLine& o) {
            return x.enabled && (o.same_for_every_element || (!o.alu && !o.mul));
        };
        const bool bs_constant = constant(s.bs, ops[0]), bn_constant = constant(s.bn, ops[1]);
        constexpr bool kBound = F == kRequantiseBound || F == kRectifiedBound;
        constexpr bool kSum = F == kRequantiseSum;
        if constexpr (F != kAnyStages)
            if (!bs_constant || (kBound && !bn_constant) || (kSum && !ops[1].alu))
                return line<Int8Out, Cvt>(from, ops, lines, saturations);
        XLanes bs[4], bn[4];
        const auto at_ = [](const int16_t* p, size_t at) { return p ? p + at : nullptr; };
        for (uint32_t j = 0; j < group && j < 32; j += 8) {
            if (bs_constant) bs[j / 8] = f.x1.lanes(at_(ops[0].alu, j), at_(ops[0].mul, j));
            if (bn_constant) bn[j / 8] = f.x2.lanes(at_(ops[1].alu, j), at_(ops[1].mul, j));
        }
        // The rectified forms: multipliers >= 0, inputs in [-2^30, 2^30) (each input plus 2^30
        // OR-ed into `beyond`, whose sign bits then say whether one was not).
        constexpr bool kRectifiedForm = F == kRectified || F == kRectifiedBound;
        std::byte* const first_line = lines;
        __m256i beyond = _mm256_setzero_si256();
        if constexpr (kRectifiedForm) {
            for (uint32_t j = 0; j < group && j < 32; j += 8)
                beyond = _mm256_or_si256(beyond, bs[j / 8].factor32);
            bool limit_ok = !f.x1.narrow_low || f.c.constant_from <= f.x1.rectified_limit;
            if (!limit_ok && kBound && f.x2.alu && f.x2.algo == 1) {
                const __m256i limit = _mm256_set1_epi32(f.x1.rectified_limit);
                __m256i above = _mm256_setzero_si256();
                for (uint32_t j = 0; j < group && j < 32; j += 8)
                    above = _mm256_or_si256(above, _mm256_cmpgt_epi32(bn[j / 8].op32, limit));
                limit_ok = _mm256_testz_si256(above, above);
            }
            if (_mm256_movemask_ps(_mm256_castsi256_ps(beyond)) || !limit_ok)
                return line<Int8Out, Cvt, unrectified(F)>(from, ops, lines, saturations);
        }
        const __m256i bias30 = _mm256_set1_epi32(1 << 30);
        uint32_t flagged = 0;
        for (uint32_t w = 0; w < width; ++w, src += step) {
            // The cube's elements are `step` values apart, mostly beyond the caches: fetch the
            // group's 128 bytes a few elements ahead (past the cube's end it touches nothing).
            const auto ahead = reinterpret_cast<uintptr_t>(src) + 8 * step * sizeof(int32_t);
            __builtin_prefetch(reinterpret_cast<const void*>(ahead));
            __builtin_prefetch(reinterpret_cast<const void*>(ahead + 64));
            for (uint32_t j = 0; j < group; j += 8) {
                const size_t at = w * group + j;
                __m256i v = j + 8 <= valid
                                ? f.cacc.load(src + j)
                                : f.cacc.load(src + j, lanes8(valid > j ? valid - j : 0));
                if constexpr (kRectifiedForm) {
                    beyond = _mm256_or_si256(beyond, _mm256_add_epi32(v, bias30));
                    v = f.x1.rectified(v, bs[j / 8]);
                    if constexpr (kBound) v = f.x2.bound(v, bn[j / 8]);
                } else if constexpr (F != kAnyStages) {
                    v = f.x1.requantise(v, bs[j / 8]);
                    if constexpr (kBound) v = f.x2.bound(v, bn[j / 8]);
                    if constexpr (kSum) v = f.x2.sum_memory(v, ops[1].alu + at);
                } else if (f.bs_on) {
                    // Memory operands too take the 32-bit lanes (int16 shifted by at most 15).
                    const XLanes k = bs_constant
                                         ? bs[j / 8]
                                         : f.x1.lanes(at_(ops[0].alu, at), at_(ops[0].mul, at));
                    v = f.x1.narrow_lanes && f.x1.fits_narrow(v) ? f.x1.apply_narrow(v, k)
                                                                 : f.x1.apply(v, k);
                }
                if (F == kAnyStages && f.bn_on) {
                    const XLanes k = bn_constant
                                         ? bn[j / 8]
                                         : f.x2.lanes(at_(ops[1].alu, at), at_(ops[1].mul, at));
                    v = f.x2.narrow_lanes && f.x2.fits_narrow(v) ? f.x2.apply_narrow(v, k)
                                                                 : f.x2.apply(v, k);
                }
                if (F == kAnyStages && f.ew_on)
                    v = f.y.narrow_lanes && below_2_30(v)
                            ? f.y.apply_narrow(v, at_(ops[2].alu, at))
                            : f.y.apply(v, at_(ops[2].alu, at), at_(ops[2].mul, at));
                if constexpr (Cvt == kCvtClamp)
                    v = f.c.clamped(v);
                else if constexpr (Cvt == kCvtAny)
                    v = f.c.apply(v, 8, flagged);
                store8<Int8Out>(lines + w * atom + place[j / 8], v);
            }
        }
        if constexpr (kRectifiedForm)
            if (_mm256_movemask_ps(_mm256_castsi256_ps(beyond)))
                return line<Int8Out, Cvt, unrectified(F)>(from, ops, first_line, saturations);
        saturations += flagged;
    }

    template <bool Int8Out, int Cvt>
    NVDLA_SDP_AVX2 void run(const AccumulatorCube* cube, InputReader* input, FusedOperands operands,
                            OutputWriter& writer, Counters& counters) {
        using LineFn =
            void (Fused::*)(FusedSource, const OperandLine*, std::byte*, uint32_t&) const;
        static constexpr LineFn kLines[6] = {&Fused::line<Int8Out, Cvt, kAnyStages>,
                                             &Fused::line<Int8Out, Cvt, kRequantise>,
                                             &Fused::line<Int8Out, Cvt, kRequantiseBound>,
                                             &Fused::line<Int8Out, Cvt, kRectified>,
                                             &Fused::line<Int8Out, Cvt, kRectifiedBound>,
                                             &Fused::line<Int8Out, Cvt, kRequantiseSum>};
        const Form form_of_lines = form();
        const LineFn line_fn = kLines[form_of_lines];
        std::optional<GroupConstants<BoundedConstants>> groups;
        if constexpr (Cvt != kCvtAny)
            if ((form_of_lines == kRectified || form_of_lines == kRectifiedBound) &&
                bounded_form()) {
                groups.emplace(s, operands, [&](const OperandLine* ops) {
                    return bounded_constants<Cvt>(ops, form_of_lines == kRectifiedBound);
                });
                bounded = &*groups;
            }
        fused_pass(s, cube, input, operands, writer, counters,
                   [&](FusedSource from, const OperandLine* ops, std::byte* lines,
                       uint32_t& saturations) { (this->*line_fn)(from, ops, lines, saturations); });
    }
};

}  // namespace

void flying_line(const Settings& s, const AccumulatorCube& cube, uint32_t b, uint32_t g, uint32_t h,
                 std::span<int32_t> line) {
    flying_channels_last(s, cube, b, g, h, line);
}

void run_x(const XStage& x, std::span<int32_t> line, OperandLine ops) {
    x_line(x, line, ops);
}

void run_y(const YStage& y, std::span<int32_t> line, OperandLine ops) {
    y_line(y, line, ops);
}

void run_c(const Settings& s, std::span<const int32_t> line, std::span<uint16_t> out,
           Counters& counters) {
    c_line(s, line, out, counters);
}

void run_fused(const Settings& s, const AccumulatorCube* cube, InputReader* input,
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

}  // namespace nvdla::emu::sdp::avx2
