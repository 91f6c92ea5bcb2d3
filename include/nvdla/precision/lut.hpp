// NVDLA's two-table hybrid lookup table (SDP Y for sigmoid/tanh, CDP for LRN): a description
// of a programmed LUT mirroring the S_LUT_* registers, evaluators that compute what the nv_full
// C model computes for one input, the D_PERF_LUT_* statistics, and builders that program the
// tables for sigmoid, tanh and LRN over a user range. docs/precision-lut.md explains the
// hardware algorithm and how the builders choose their parameters.
//
// Tables: LE ("linear or exponent", 65 entries, the X table of the documents) and LO ("linear
// only", 257 entries, the Y table). Entries are int16 values on the int pipelines and fp16 bit
// patterns on the fp16 pipeline.
#pragma once

#include <array>
#include <cstdint>

#include "nvdla/api.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla::precision {

inline constexpr uint32_t kLutLeEntries = 65;
inline constexpr uint32_t kLutLoEntries = 257;

// S_LUT_CFG.LUT_LE_FUNCTION.
enum class LutLeMode : uint8_t { Exponent = 0, Linear = 1 };

// A table; also the encoding of the three S_LUT_CFG priority bits (0 = LE, 1 = LO).
enum class LutTable : uint8_t { Le = 0, Lo = 1 };

// Out-of-range slope: S_LUT_{LE,LO}_SLOPE_SCALE and _SHIFT for one side of one table.
// scale is an int16 on the int pipelines (the slope is scale * 2^-shift, shift a signed 5-bit
// field: negative shifts left) and fp16 bits on the fp16 pipeline, where shift is unused.
struct LutSlope {
    int16_t scale = 0;
    int8_t shift = 0;
    friend constexpr bool operator==(const LutSlope&, const LutSlope&) = default;
};

// One programmed LUT, field for field as the registers hold it.
//
// Start and end: the int pipelines compare them with the LUT input as signed integers (SDP
// uses the low 32 bits, CDP the low 38 bits: S_LUT_*_START_LOW/HIGH); the fp pipelines read
// the low 32 bits as an fp32 (see lut_register_from_float). End is only used by the overflow
// extrapolation; the index of a table depends on its start alone.
struct LutProgram {
    std::array<int16_t, kLutLeEntries> le{};
    std::array<int16_t, kLutLoEntries> lo{};

    LutLeMode le_mode = LutLeMode::Exponent;  // LUT_LE_FUNCTION
    int8_t le_index_offset = 0;               // LUT_LE_INDEX_OFFSET: exponent mode
    int8_t le_index_select = 0;               // LUT_LE_INDEX_SELECT: linear mode
    int8_t lo_index_select = 0;               // LUT_LO_INDEX_SELECT
    // (The SDP and the CDP fp16 pipeline read the 8-bit fields as signed bytes; the CDP int
    // pipelines read the selects as cdp_index_select describes.)

    int64_t le_start = 0, le_end = 0;
    int64_t lo_start = 0, lo_end = 0;

    LutSlope le_underflow, le_overflow;
    LutSlope lo_underflow, lo_overflow;

    LutTable underflow_priority = LutTable::Le;  // LUT_UFLOW_PRIORITY: both tables underflow
    LutTable overflow_priority = LutTable::Le;   // LUT_OFLOW_PRIORITY: both tables overflow
    LutTable hybrid_priority = LutTable::Le;     // LUT_HYBRID_PRIORITY: both hit, or one table
                                                 // underflows while the other overflows

    friend bool operator==(const LutProgram&, const LutProgram&) = default;
};

// The fp32 bit pattern of f as a start/end register value, and back.
NVDLA_API int64_t lut_register_from_float(float f);
NVDLA_API float lut_register_to_float(int64_t reg);

// The index select the CDP C model reads from an 8-bit LUT_LE/LO_INDEX_SELECT field: the int8
// pipeline sign-extends from bit 5, the int16 pipeline from bit 6, and the other upper bits
// stay (NV_NVDLA_cdp.cpp:1257, :1628): on the int8 pipeline 0xe0 reads -32 but 0xc0 reads 192.
// Values in [-32, 31] (int8) or [-64, 63] (int16) read as themselves.
NVDLA_API int cdp_index_select(int8_t field, Precision data_precision);

// Where an input fell in one table.
enum class LutHit : uint8_t { Hit, Underflow, Overflow };

// One table's index computation: the entry read first (0 on underflow, the last entry on
// overflow) and, on a hit, the position between that entry and the next one, as a fraction
// of 2^35 (SDP) or 2^16 (CDP).
struct LutIndex {
    LutHit hit = LutHit::Underflow;
    uint32_t entry = 0;
    uint64_t fraction = 0;
    friend constexpr bool operator==(const LutIndex&, const LutIndex&) = default;
};

// Which table's output a lookup takes, from both tables' outcomes and the priority bits.
struct LutOutcome {
    LutHit le = LutHit::Underflow;
    LutHit lo = LutHit::Underflow;
    LutTable selected = LutTable::Le;

    LutHit selected_hit() const { return selected == LutTable::Le ? le : lo; }
    friend constexpr bool operator==(const LutOutcome&, const LutOutcome&) = default;
};

NVDLA_API LutOutcome lut_select(const LutProgram& lut, LutHit le, LutHit lo);

struct LutIntLookup {
    int64_t value = 0;  // SDP: int32; CDP: int16
    LutOutcome outcome;
};

struct LutFpLookup {
    float value = 0;
    LutOutcome outcome;
};

// ---- SDP, int pipeline (PROC_PRECISION int8/int16): x is the int32 Y-stage value. ----

// The index of one table (sdp_y_idx.cpp):
//  LE exponent: x <= start underflows; otherwise with d = x - start, index =
//    floor(log2 d) - LE_INDEX_OFFSET (< 0 underflows, >= 64 overflows) and the fraction is d's
//    bits below its leading one, scaled to 35 bits.
//  Linear (LE, LO): x <= start underflows; index = (x - start) >> INDEX_SELECT (truncating; a
//    negative select shifts left; saturating at 511), >= 64 (LE) or >= 256 (LO) overflows;
//    the fraction is the bits shifted out, scaled to 35 bits.
NVDLA_API LutIndex sdp_lut_index_int(const LutProgram& lut, LutTable table, int32_t x);

// Hit: (y0 * (2^35 - fraction) + y1 * fraction) / 2^35, rounded half away from zero.
NVDLA_API int32_t sdp_lut_interpolate_int(int16_t y0, int16_t y1, uint64_t fraction35);

// Miss: y_edge + (x - edge - bias) * slope, the product shifted by the slope's signed shift
// with rounding half away and saturation to int32, the sum saturated to int32. edge is the
// table's start (underflow) or end (overflow); bias is sdp_lut_underflow_bias for an LE table
// in exponent mode that underflows and 0 otherwise.
NVDLA_API int32_t sdp_lut_extrapolate_int(int32_t x, int32_t edge, uint32_t bias, int16_t y_edge,
                                          LutSlope slope);
// 2^LE_INDEX_OFFSET in exponent mode when the offset is positive (the C model shifts a 32-bit
// 1, so offsets of 32 and more wrap modulo 32), else 0 - entry 0 sits at start + 2^offset.
NVDLA_API uint32_t sdp_lut_underflow_bias(const LutProgram& lut);

// The whole lookup: both indexes, the priority selection, interpolation or extrapolation.
NVDLA_API LutIntLookup sdp_lut_lookup_int(const LutProgram& lut, int32_t x);

// ---- SDP, fp16 pipeline: x is the fp32 Y-stage value; the result is an fp17 value. ----
// The same index rules on the fp32 difference x - start (exponent mode: its fp32 exponent,
// the fraction its 23 mantissa bits), then y0 * (1 - f) + y1 * f or y_edge + (x - edge - bias)
// * slope (bias 2^LE_INDEX_OFFSET for an exponent-mode LE underflow) in the C model's own
// fp32/fp17 arithmetic (nvdla_float.h: no sticky bit when aligning, no denormal results,
// saturation instead of infinity), bit for bit. Entries and slope scales are fp16 bits.
NVDLA_API LutFpLookup sdp_lut_lookup_fp(const LutProgram& lut, float x);

// ---- CDP, int pipelines (lookup_lut_int8 / lookup_lut): x is the square sum. ----
// Same index rules, but the fraction has 16 bits, exponent-mode underflow subtracts
// 2^LE_INDEX_OFFSET for every offset >= 0, and results are y0 + round((y1 - y0) * f / 2^16)
// and y_edge + round((x - edge - bias) * scale / 2^shift), each saturated to int16 (rounding
// half away from zero through a double, as the C model's convert()). The index select
// fields are decoded as cdp_index_select does for data_precision (Int8, else the int16 rule).
NVDLA_API LutIndex cdp_lut_index_int(const LutProgram& lut, LutTable table, int64_t x,
                                     Precision data_precision);
NVDLA_API int16_t cdp_lut_interpolate_int(int16_t y0, int16_t y1, uint32_t fraction16);
NVDLA_API LutIntLookup cdp_lut_lookup_int(const LutProgram& lut, int64_t x,
                                          Precision data_precision);

// ---- CDP, fp16 pipeline: x is the fp32 square sum; the result is an fp17 value. ----
// HLS_CDP_lookup_lut bit for bit: a 16-bit offset (exponent mode: the top 16 mantissa bits;
// linear: the fraction of (x - start) / 2^select in float), y0 + (y1 - y0) * offset with the
// difference taken in fp32, and under/overflow as on the SDP fp pipeline.
NVDLA_API LutFpLookup cdp_lut_lookup_fp(const LutProgram& lut, float x);

// D_PERF_LUT_{LE_HIT,LO_HIT,UFLOW,OFLOW,HYBRID}. The two units count differently:
//  SDP (NV_NVDLA_SDP_CORE_Y_lut.v, sdp_hls_wrapper.cpp:372-386): le_hit and lo_hit count every
//    hit of that table, underflow/overflow count lookups whose *selected* table missed that
//    way, hybrid counts lookups whose selected table hit.
//  CDP (NV_NVDLA_cdp.cpp:1496-1520, the documents' XHitNum etc.): underflow/overflow count
//    lookups where both tables missed that way, le_hit/lo_hit lookups where only that table
//    hit, hybrid the rest (both hit, or one underflows while the other overflows).
// Counters stop at 0xffffffff.
struct LutStatistics {
    uint32_t le_hit = 0, lo_hit = 0, underflow = 0, overflow = 0, hybrid = 0;

    NVDLA_API void count_sdp(const LutOutcome& o);
    NVDLA_API void count_cdp(const LutOutcome& o);
    friend constexpr bool operator==(const LutStatistics&, const LutStatistics&) = default;
};

// ---- Builders ----

// LRN as the CDP computes it: y = x * (k + alpha / local_size * sum)^-beta, the LUT holding
// the factor as a function of the square sum.
struct LrnParameters {
    double k = 1.0;
    double alpha = 1e-4;
    double beta = 0.75;
    uint32_t local_size = 5;  // 3, 5, 7 or 9 (NORMALZ_LEN)
};

// Outside the range, both tables extrapolate with their slope registers.
enum class LutExtrapolation : uint8_t {
    Auto,     // Hold for sigmoid and tanh, Tangent for LRN
    Hold,     // slope 0: keep the edge value (bounded error for saturating functions)
    Tangent,  // the function's derivative at the edge (diverges far from the edge)
};

struct LutBuildOptions {
    LutExtrapolation extrapolation = LutExtrapolation::Auto;
    // Int pipelines: entries are round(f * output_scale). 0 picks the largest scale at which
    // the function's values over [lo, hi] fit int16.
    double output_scale = 0;
};

// A programmed LUT and the scalings it expects. The LUT input is x' = (x - input_offset) *
// input_scale (the seed's x' = (x - O) * SF; the upstream converters must produce it) and the
// LUT output is f(x) * output_scale. On the fp16 pipelines offset 0 and scales 1.
struct BuiltLut {
    LutProgram program;
    Precision precision = Precision::Int16;
    double input_offset = 0;
    double input_scale = 1;
    double output_scale = 1;
    // LRN on an int pipeline: the CDP input converter must produce x * 2^lrn_data_shift, so
    // input_scale = 4^lrn_data_shift.
    int lrn_data_shift = 0;
    LutTable raw_table = LutTable::Lo;  // the table spanning the whole range; the other is dense
    // The builder's estimate of the largest interpolation error over [lo, hi] in function
    // units, before entries are rounded to int16/fp16.
    double interpolation_error = 0;

    double lut_input(double x) const { return (x - input_offset) * input_scale; }
    double function_value(double lut_output) const { return lut_output / output_scale; }
};

// Sigmoid and tanh for the SDP: precision Int8/Int16 (the int32 LUT datapath) or Fp16.
// Errors: lo >= hi, a non-finite bound, on Fp16 a bound beyond +-65504, a range too narrow to
// scale, a negative or NaN output scale.
NVDLA_API Result<BuiltLut> build_sigmoid_lut(double lo, double hi, Precision precision,
                                             const LutBuildOptions& options = {});
NVDLA_API Result<BuiltLut> build_tanh_lut(double lo, double hi, Precision precision,
                                          const LutBuildOptions& options = {});
// LRN for the CDP over the square-sum range [lo, hi]: precision Int8, Int16 or Fp16.
// Errors: as above (the Fp16 limit is fp32's, the input being an fp32 square sum), lo < 0,
// k <= 0, alpha < 0, a non-finite beta, a local size other than 3, 5, 7 or 9.
NVDLA_API Result<BuiltLut> build_lrn_lut(const LrnParameters& lrn, double lo, double hi,
                                         Precision precision, const LutBuildOptions& options = {});

}  // namespace nvdla::precision
