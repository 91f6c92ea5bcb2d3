// The three integer precision controls of NVDLA's pipeline (doc/hw/v1/ias/precision.rst, the
// seed nvdla-precision-preservation.txt), with the datapath widths of each hardware instance:
//   convertor  y = saturate(round((x - offset) * scale >> shift))
//   truncate   y = saturate(round(x[msb:lsb])),  msb = lsb + output bits
//   shifter    y = saturate(x << shift)
// Every right shift rounds half away from zero, every narrowing saturates (integer.hpp), and the
// saturation and NaN counters count what the units' status registers count.
#pragma once

#include <cstdint>
#include <span>

#include "nvdla/api.hpp"
#include "nvdla/precision/integer.hpp"
#include "nvdla/precision/nvdla_float.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla::precision {

// The two's-complement value of the low `bits` bits of x (1..64): what a `bits`-wide datapath
// port makes of a wider register or bus value.
constexpr int64_t sign_extend(int64_t x, unsigned bits) {
    if (bits == 0) return 0;
    if (bits >= 64) return x;
    const uint64_t low = uint64_t(x) & ((uint64_t(1) << bits) - 1);
    const uint64_t sign = uint64_t(1) << (bits - 1);
    return static_cast<int64_t>(low ^ sign) - static_cast<int64_t>(sign);
}

// The seed's overflow definitions, which the saturation counters count:
// INT32/INT16/INT8: x outside the signed range; FP16: |x| >= 65504 (a NaN is not an overflow).
constexpr bool overflows_int(int64_t x, unsigned bits) {
    return x > max_of_width(bits) || x < min_of_width(bits);
}
constexpr bool overflows_fp16(uint16_t h) {
    const unsigned magnitude = h & 0x7fffu;
    return magnitude >= kFp16MaxFinite && magnitude <= 0x7c00u;
}

// A value after a rounding or saturating stage, and whether the stage had to clamp it.
struct Clamped {
    int64_t value = 0;
    bool saturated = false;
    friend constexpr bool operator==(const Clamped&, const Clamped&) = default;
};

// Truncate: x / 2^lsb rounded half away from zero, saturated to output_bits (CACC's
// CLIP_TRUNCATE to int32, SDP X MUL_SHIFT to int32, SDP Y EW_TRUNCATE, CSC PRA_TRUNCATE).
constexpr Clamped truncate(int64_t x, unsigned lsb, unsigned output_bits) {
    Clamped r;
    r.value = shift_right_round_saturate(x, lsb, output_bits, &r.saturated);
    return r;
}

// Shifter: x * 2^shift saturated to output_bits (SDP X ALU_SHIFT_VALUE, the bias shifter).
constexpr Clamped shifter(int64_t x, unsigned shift, unsigned output_bits) {
    Clamped r;
    r.value = shift_left_saturate(x, shift, output_bits, &r.saturated);
    return r;
}

// The register values of one convertor. The seed's general encoding is offset INT32, scale
// INT16, shifter UINT5; each instance cuts them to its own widths (ConvertorShape).
struct ConvertorParams {
    int32_t offset = 0;
    int16_t scale = 1;
    uint32_t shift = 0;
};

// Datapath widths of one hardware convertor. x and offset are cut to their widths as the ports
// do (sign_extend), the difference and the product are exact (the hardware sizes them so), the
// shift is the low shift_bits of the register, and the rounded result saturates to output_bits.
struct ConvertorShape {
    unsigned input_bits = 32;
    unsigned offset_bits = 32;
    unsigned shift_bits = 5;
    unsigned output_bits = 32;
    friend constexpr bool operator==(const ConvertorShape&, const ConvertorShape&) = default;
};

// The instances of the nv_full C model (cmod/hls/*), {input, offset, shift, output} bits:
// CDMA input convertor, int17 pixel/feature in, then int8/int16 saturation or int->fp16
// (cdma_libs/cdma_cvt.h: 17, 16, 6 -> 17).
inline constexpr ConvertorShape kCdmaInputConvertor{17, 16, 6, 17};
// CDP input convertor (cdp_libs/cdp_icvt.h): int8 lanes 8, 8, 5 -> 9; int16 16, 16, 5 -> 17.
inline constexpr ConvertorShape kCdpInputConvertorInt8{8, 8, 5, 9};
inline constexpr ConvertorShape kCdpInputConvertorInt16{16, 16, 5, 17};
// CDP output convertor (cdp_libs/cdp_ocvt.h): int8 lanes 25, 25, 6 -> 8; int16 33, 32, 6 -> 16.
inline constexpr ConvertorShape kCdpOutputConvertorInt8{25, 25, 6, 8};
inline constexpr ConvertorShape kCdpOutputConvertorInt16{33, 32, 6, 16};
// SDP output convertor (sdp/sdp_c.cpp): 32, 32, 6 -> 17, then int8/int16 saturation or
// Int17ToFp16.
inline constexpr ConvertorShape kSdpOutputConvertor{32, 32, 6, 17};
// SDP Y element-wise operand convertor (sdp/sdp_y_cvt.cpp): 16, 32, 6 -> 32.
inline constexpr ConvertorShape kSdpEwOperandConvertor{16, 32, 6, 32};

// Whether the shape is one this library computes exactly: widths 1..63 (shift 1..6) and a
// product that fits 63 bits. The error names the offending width.
NVDLA_API Status validate(const ConvertorShape& shape);

// (x - offset) * scale with x and offset cut to the shape's widths: exact for a valid shape.
constexpr int64_t convertor_product(int64_t x, const ConvertorParams& p,
                                    const ConvertorShape& shape) {
    return (sign_extend(x, shape.input_bits) - sign_extend(p.offset, shape.offset_bits)) * p.scale;
}

// The shift the convertor applies: the low shape.shift_bits of the register value.
constexpr unsigned convertor_shift(const ConvertorParams& p, const ConvertorShape& shape) {
    const uint32_t field = shape.shift_bits >= 32 ? ~0u : (1u << shape.shift_bits) - 1;
    return p.shift & field;
}

// Convertor: saturate(round((x - offset) * scale >> shift)) to shape.output_bits; `saturated`
// when the rounded value did not fit. The shape must be valid.
constexpr Clamped convert(int64_t x, const ConvertorParams& p, const ConvertorShape& shape) {
    return truncate(convertor_product(x, p, shape), convertor_shift(p, shape), shape.output_bits);
}

// The flag the C model's IntShiftRightSat raises (nvdla_int.h:56-77), which the SDP and CDP
// output convertors count: set when the saturated result is more than one away from
// floor(x / 2^shift). It misses results pushed past the limit by less than one step, e.g.
// 65535.5 -> 65535 and -65537 -> -65536 for 17 bits; Clamped::saturated does not.
constexpr bool cmodel_shift_right_saturation_flag(int64_t x, unsigned shift, unsigned output_bits) {
    const int64_t floor_value = shift >= 63 ? (x < 0 ? -1 : 0) : (x >> shift);
    const int64_t result = shift_right_round_saturate(x, shift, output_bits);
    return floor_value - result > 1 || result - floor_value > 1;
}

// The same flag for a whole convertor (what the SDP output convertor and the CDP output
// convertor report for an integer output).
constexpr bool cmodel_convertor_saturation_flag(int64_t x, const ConvertorParams& p,
                                                const ConvertorShape& shape) {
    return cmodel_shift_right_saturation_flag(convertor_product(x, p, shape),
                                              convertor_shift(p, shape), shape.output_bits);
}

// One element a convertor wrote in an external precision.
struct ConvertedElement {
    uint16_t bits = 0;             // int8 sign-extended to 16 bits, int16, or an fp16 pattern
    bool saturated = false;        // did not fit the output precision (seed's INT8/INT16/FP16)
    bool shift_saturated = false;  // the rounding shift itself clamped (shape.output_bits)
    friend constexpr bool operator==(const ConvertedElement&, const ConvertedElement&) = default;
};

// A convertor that writes an external precision, as the CDMA input convertor and the SDP output
// convertor do: convert() to shape.output_bits (17), then int8/int16 saturation or int->fp16
// (round to nearest even, |x| >= 65520 -> +-65504).
constexpr ConvertedElement convert_to(Precision out, int64_t x, const ConvertorParams& p,
                                      const ConvertorShape& shape) {
    const Clamped shifted = convert(x, p, shape);
    ConvertedElement e;
    e.shift_saturated = shifted.saturated;
    if (out == Precision::Fp16) {
        e.bits = int_to_fp16(static_cast<int32_t>(saturate(shifted.value, 32)));
        e.saturated = shifted.saturated || overflows_fp16(e.bits);
        return e;
    }
    const unsigned bits = out == Precision::Int8 ? 8 : 16;
    bool narrowed = false;
    const int64_t value = saturate(shifted.value, bits, &narrowed);
    e.bits = static_cast<uint16_t>(value);
    e.saturated = shifted.saturated || narrowed;
    return e;
}

// Saturation and NaN counters of a unit, 32-bit and wrapping like the status registers
// (CACC D_OUT_SATURATION, SDP D_PERF_OUT_SATURATION and D_STATUS_NAN_OUTPUT_NUM,
// CDP D_OUT_SATURATION). A unit resets them when a layer starts.
struct PrecisionCounters {
    uint32_t saturations = 0;
    uint32_t nans = 0;

    constexpr void reset() { *this = PrecisionCounters{}; }
    constexpr void count_saturation(bool saturated) { saturations += saturated ? 1u : 0u; }
    // An integer result before narrowing to `bits`: counted when it does not fit.
    constexpr void count_int(int64_t unclamped, unsigned bits) {
        count_saturation(overflows_int(unclamped, bits));
    }
    // An fp16 result: |x| >= 65504 counts as a saturation, a NaN as a NaN.
    constexpr void count_fp16(uint16_t h) {
        count_saturation(overflows_fp16(h));
        nans += fp16_is_nan(h) ? 1u : 0u;
    }
    friend constexpr bool operator==(const PrecisionCounters&, const PrecisionCounters&) = default;
};

// convert_to() over a buffer: out[i] = convert_to(precision, in[i], p, shape).bits, and, when
// counters is given, each element's `saturated` counted (an fp16 NaN cannot come out of an
// integer input). Fails, writing nothing, when the shape is invalid or the sizes differ.
NVDLA_API Status convert_to(Precision out_precision, std::span<const int32_t> in,
                            const ConvertorParams& p, const ConvertorShape& shape,
                            std::span<uint16_t> out, PrecisionCounters* counters = nullptr);

}  // namespace nvdla::precision
