// Table builders for sigmoid, tanh (SDP) and LRN (CDP). docs/precision-lut.md describes how
// they choose the layout, the scalings and the out-of-range slopes.
#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <vector>

#include "nvdla/precision/fp16.hpp"
#include "nvdla/precision/lut.hpp"

namespace nvdla::precision {

namespace {

using RealFunction = std::function<double(double)>;

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr int kMaxRefine = 6;        // the dense table's step is the raw step / 2^1..2^6
constexpr int kIntRawSpanLog2 = 20;  // int pipelines: the raw table spans 2^20 input units
constexpr double kFp16Max = 65504.0;
constexpr double kFp32Max = std::numeric_limits<float>::max();
constexpr double kFp16MaxSquareSum = 9 * kFp16Max * kFp16Max;  // 9 channels of 65504^2

struct Curve {
    const char* name;
    RealFunction value;
    RealFunction slope;  // derivative
    bool saturating;     // tends to constants at both ends
};

double sigmoid(double x) {
    if (x >= 0) return 1 / (1 + std::exp(-x));
    const double e = std::exp(x);
    return e / (1 + e);
}

Curve sigmoid_curve() {
    return {"sigmoid", sigmoid,
            [](double x) {
                const double s = sigmoid(x);
                return s * (1 - s);
            },
            true};
}

Curve tanh_curve() {
    return {"tanh", [](double x) { return std::tanh(x); },
            [](double x) {
                const double t = std::tanh(x);
                return 1 - t * t;
            },
            true};
}

Curve lrn_curve(const LrnParameters& p) {
    const double c = p.alpha / p.local_size;
    return {"LRN", [=](double s) { return std::pow(p.k + c * s, -p.beta); },
            [=](double s) { return -p.beta * c * std::pow(p.k + c * s, -p.beta - 1); }, false};
}

uint32_t entries_of(LutTable t) {
    return t == LutTable::Le ? kLutLeEntries : kLutLoEntries;
}
uint32_t intervals_of(LutTable t) {
    return entries_of(t) - 1;
}
LutTable other(LutTable t) {
    return t == LutTable::Le ? LutTable::Lo : LutTable::Le;
}

// The largest deviation of the chord from g over [a, b], sampled at the quarter points.
double segment_error(const RealFunction& g, double a, double b, double ga, double gb) {
    double worst = 0;
    for (const double t : {0.25, 0.5, 0.75}) {
        const double chord = ga + (gb - ga) * t;
        worst = std::max(worst, std::abs(g(a + (b - a) * t) - chord));
    }
    return worst;
}

// Errors of the consecutive segments [u0 + i*step, u0 + (i+1)*step], i < count; segments
// starting at or beyond `limit` are outside the user's range and count as 0.
std::vector<double> segment_errors(const RealFunction& g, double u0, double step, size_t count,
                                   double limit) {
    std::vector<double> errors(count, 0.0);
    double a = u0, ga = g(a);
    for (size_t i = 0; i < count; ++i) {
        const double b = u0 + step * double(i + 1);
        const double gb = g(b);
        if (a < limit) errors[i] = segment_error(g, a, b, ga, gb);
        a = b;
        ga = gb;
    }
    return errors;
}

// Two linear tables over the input u: the raw one spans [u0, u0 + intervals * raw_step], the
// dense one has step raw_step / 2^refine and starts dense_offset of its own steps after u0.
struct LinearLayout {
    LutTable raw = LutTable::Lo;
    int refine = 1;
    int64_t dense_offset = 0;
    double error = kInfinity;  // the largest segment error
    double total = kInfinity;  // the sum of segment errors, to choose among equal maxima

    bool better_than(const LinearLayout& o) const {
        const double tolerance = 1e-9 * o.error;
        if (error < o.error - tolerance) return true;
        return error <= o.error + tolerance && total < o.total;
    }
};

// Searches which table is raw, the refinement and the dense table's position for the smallest
// largest interpolation error over [u0, u_limit]. Where both tables hit the dense one is used.
LinearLayout choose_linear_layout(const RealFunction& g, double u0, double u_limit,
                                  const std::function<double(LutTable)>& raw_step) {
    LinearLayout best;
    for (const LutTable raw : {LutTable::Lo, LutTable::Le}) {
        const size_t raw_count = intervals_of(raw);
        const size_t dense_count = intervals_of(other(raw));
        const double step = raw_step(raw);
        const std::vector<double> raw_errors = segment_errors(g, u0, step, raw_count, u_limit);
        std::vector<double> prefix(raw_count + 1, 0.0), suffix(raw_count + 1, 0.0),
            raw_sum(raw_count + 1, 0.0);
        for (size_t i = 0; i < raw_count; ++i) {
            prefix[i + 1] = std::max(prefix[i], raw_errors[i]);
            raw_sum[i + 1] = raw_sum[i] + raw_errors[i];
        }
        for (size_t i = raw_count; i-- > 0;) suffix[i] = std::max(suffix[i + 1], raw_errors[i]);

        for (int refine = 1; refine <= kMaxRefine; ++refine) {
            const size_t per_raw = size_t(1) << refine;
            const size_t fine_count = raw_count * per_raw;
            const std::vector<double> fine =
                segment_errors(g, u0, std::ldexp(step, -refine), fine_count, u_limit);
            std::vector<double> fine_sum(fine_count + 1, 0.0);
            for (size_t i = 0; i < fine_count; ++i) fine_sum[i + 1] = fine_sum[i] + fine[i];
            if (fine_count <= dense_count) {  // the dense table covers everything
                const LinearLayout candidate{
                    raw, refine, 0, *std::max_element(fine.begin(), fine.end()), fine_sum.back()};
                if (candidate.better_than(best)) best = candidate;
                continue;
            }
            // Sliding maximum of the dense table's window over the fine segments.
            std::deque<size_t> window;
            for (size_t i = 0; i < fine_count; ++i) {
                while (!window.empty() && fine[window.back()] <= fine[i]) window.pop_back();
                window.push_back(i);
                if (i + 1 < dense_count) continue;
                const size_t first = i + 1 - dense_count;
                if (window.front() < first) window.pop_front();
                // Raw segments wholly inside [first, first + dense_count) are never used.
                const size_t inside_begin = (first + per_raw - 1) / per_raw;
                const size_t inside_end = std::max(inside_begin, (first + dense_count) / per_raw);
                const double outside = std::max(prefix[inside_begin], suffix[inside_end]);
                const double total = fine_sum[first + dense_count] - fine_sum[first] +
                                     raw_sum[inside_begin] +
                                     (raw_sum[raw_count] - raw_sum[inside_end]);
                const LinearLayout candidate{raw, refine, int64_t(first),
                                             std::max(fine[window.front()], outside), total};
                if (candidate.better_than(best)) best = candidate;
            }
        }
    }
    return best;
}

// Slope registers for an int pipeline: scale * 2^-shift closest to `per_unit` (LUT output
// units per LUT input unit) with the largest shift whose scale fits int16.
LutSlope int_slope(double per_unit) {
    if (!std::isfinite(per_unit) || per_unit == 0) return {};
    for (int shift = 15; shift >= -16; --shift) {
        const double scaled = std::nearbyint(std::ldexp(per_unit, shift));
        if (std::abs(scaled) <= 32767) {
            if (scaled == 0) return {};
            return {static_cast<int16_t>(scaled), static_cast<int8_t>(shift)};
        }
    }
    return {static_cast<int16_t>(per_unit > 0 ? 32767 : -32768), -16};
}

LutSlope fp_slope(double per_unit) {
    return {static_cast<int16_t>(nvdla::fp16::from_float(static_cast<float>(per_unit))), 0};
}

int16_t int_entry(double v) {
    if (std::isnan(v)) return 0;
    return static_cast<int16_t>(std::clamp(std::round(v), -32768.0, 32767.0));
}

int16_t fp_entry(double v) {
    return static_cast<int16_t>(nvdla::fp16::from_float(static_cast<float>(v)));
}

// The largest float not above v.
float float_at_or_below(double v) {
    float f = static_cast<float>(v);
    if (double(f) > v) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
    return f;
}

// Smallest s with count * 2^s >= span.
int covering_select(double span, uint32_t count) {
    int s = static_cast<int>(std::ceil(std::log2(span / count)));
    while (std::ldexp(double(count), s) < span) ++s;
    while (std::ldexp(double(count), s - 1) >= span) --s;
    return s;
}

bool holds(LutExtrapolation e, const Curve& c) {
    if (e == LutExtrapolation::Auto) return c.saturating;
    return e == LutExtrapolation::Hold;
}

// `limit`: the largest magnitude the LUT input can have on the fp16 pipeline.
Status check_range(const char* what, double lo, double hi, Precision precision, double limit) {
    if (!std::isfinite(lo) || !std::isfinite(hi))
        return error(what, " LUT range [", lo, ", ", hi, "]: the bounds must be finite numbers");
    if (!(lo < hi)) return error(what, " LUT range [", lo, ", ", hi, "]: lo must be less than hi");
    if (precision == Precision::Fp16 && (std::abs(lo) > limit || std::abs(hi) > limit))
        return error(what, " LUT range [", lo, ", ", hi,
                     "]: the fp16 pipeline's LUT input reaches magnitudes up to ", limit, " only");
    return {};
}

Status check_options(const char* what, const LutBuildOptions& options) {
    if (!(options.output_scale >= 0) || !std::isfinite(options.output_scale))
        return error(what,
                     " LUT: output scale must be 0 (automatic) or a positive finite number, got ",
                     options.output_scale);
    return {};
}

// Which table plays which role, written into the program: linear LE, dense table preferred
// where both hit, raw table's extrapolation outside the range.
void set_linear_roles(LutProgram& p, LutTable raw) {
    p.le_mode = LutLeMode::Linear;
    p.hybrid_priority = other(raw);
    p.underflow_priority = raw;
    p.overflow_priority = raw;
}

struct LinearTablePlacement {
    double start, end;  // in LUT input units
    int select;
};

Result<BuiltLut> build_activation(const Curve& curve, double lo, double hi, Precision precision,
                                  const LutBuildOptions& options) {
    if (Status s = check_range(curve.name, lo, hi, precision, kFp16Max); !s) return s;
    if (Status s = check_options(curve.name, options); !s) return s;

    BuiltLut out;
    out.precision = precision;
    const bool fp = precision == Precision::Fp16;
    const bool hold = holds(options.extrapolation, curve);

    // The LUT input u and the real x: u = (x - offset) * scale.
    double u0, u_limit;
    std::function<double(LutTable)> raw_step;
    if (fp) {
        u0 = float_at_or_below(lo);
        u_limit = hi;
        // The finest dense select must still fit the signed 8-bit field.
        if (covering_select(hi - u0, intervals_of(LutTable::Lo)) - kMaxRefine < -128)
            return error(curve.name, " LUT range [", lo, ", ", hi,
                         "]: the range is too narrow to index on the fp16 pipeline");
        raw_step = [=](LutTable t) {
            return std::ldexp(1.0, covering_select(hi - u0, intervals_of(t)));
        };
    } else {
        out.input_offset = lo;
        out.input_scale = std::ldexp(1.0, kIntRawSpanLog2) / (hi - lo);
        if (!std::isfinite(out.input_scale) || out.input_scale == 0)
            return error(curve.name, " LUT range [", lo, ", ", hi,
                         "]: the range is too narrow or too wide to scale");
        u0 = 0;
        u_limit = std::ldexp(1.0, kIntRawSpanLog2);
        raw_step = [](LutTable t) { return std::ldexp(1.0, kIntRawSpanLog2) / intervals_of(t); };
    }
    const double offset = out.input_offset, scale = out.input_scale;
    const RealFunction g = [&](double u) { return curve.value(offset + u / scale); };

    const LinearLayout layout = choose_linear_layout(g, u0, u_limit, raw_step);
    out.raw_table = layout.raw;
    out.interpolation_error = layout.error;

    const double step = raw_step(layout.raw);
    const double dense_step = std::ldexp(step, -layout.refine);
    LinearTablePlacement raw{u0, u0 + step * intervals_of(layout.raw),
                             static_cast<int>(std::lround(std::log2(step)))};
    LinearTablePlacement dense{u0 + dense_step * double(layout.dense_offset), 0,
                               raw.select - layout.refine};
    if (fp) {
        raw.end = static_cast<float>(raw.end);
        dense.start = float_at_or_below(dense.start);
    }
    dense.end = dense.start + dense_step * intervals_of(other(layout.raw));
    if (fp) dense.end = static_cast<float>(dense.end);

    if (!fp) {
        double largest = 0;
        for (int i = 0; i <= 1024; ++i)
            largest = std::max(largest, std::abs(curve.value(lo + (hi - lo) * i / 1024)));
        out.output_scale =
            options.output_scale > 0 ? options.output_scale : (largest > 0 ? 32767 / largest : 1.0);
    }

    LutProgram& p = out.program;
    set_linear_roles(p, layout.raw);
    for (const LutTable t : {LutTable::Le, LutTable::Lo}) {
        const LinearTablePlacement& place = t == layout.raw ? raw : dense;
        const double table_step = t == layout.raw ? step : dense_step;
        int16_t* entries = t == LutTable::Le ? p.le.data() : p.lo.data();
        for (uint32_t i = 0; i < entries_of(t); ++i) {
            const double v = g(place.start + table_step * i);
            entries[i] = fp ? fp_entry(v) : int_entry(v * out.output_scale);
        }
        const auto register_of = [&](double u) {
            return fp ? lut_register_from_float(static_cast<float>(u))
                      : static_cast<int64_t>(std::llround(u));
        };
        const auto slope_at = [&](double u) {
            if (hold) return LutSlope{};
            const double per_x = curve.slope(offset + u / scale);
            return fp ? fp_slope(per_x) : int_slope(per_x / scale * out.output_scale);
        };
        const auto select = static_cast<int8_t>(place.select);
        if (t == LutTable::Le) {
            p.le_index_select = select;
            p.le_start = register_of(place.start);
            p.le_end = register_of(place.end);
            p.le_underflow = slope_at(place.start);
            p.le_overflow = slope_at(place.end);
        } else {
            p.lo_index_select = select;
            p.lo_start = register_of(place.start);
            p.lo_end = register_of(place.end);
            p.lo_underflow = slope_at(place.start);
            p.lo_overflow = slope_at(place.end);
        }
    }
    return out;
}

Status check_lrn(const LrnParameters& p) {
    if (!(p.k > 0) || !std::isfinite(p.k))
        return error("LRN LUT: k must be positive and finite, got ", p.k);
    if (!(p.alpha >= 0) || !std::isfinite(p.alpha))
        return error("LRN LUT: alpha must be non-negative and finite, got ", p.alpha);
    if (!std::isfinite(p.beta)) return error("LRN LUT: beta must be finite, got ", p.beta);
    if (p.local_size != 3 && p.local_size != 5 && p.local_size != 7 && p.local_size != 9)
        return error("LRN LUT: local size must be 3, 5, 7 or 9 (NORMALZ_LEN), got ", p.local_size);
    return {};
}

}  // namespace

Result<BuiltLut> build_sigmoid_lut(double lo, double hi, Precision precision,
                                   const LutBuildOptions& options) {
    return build_activation(sigmoid_curve(), lo, hi, precision, options);
}

Result<BuiltLut> build_tanh_lut(double lo, double hi, Precision precision,
                                const LutBuildOptions& options) {
    return build_activation(tanh_curve(), lo, hi, precision, options);
}

// LRN: LE in exponent mode as the raw table from the smallest non-zero square sum up to beyond
// the largest the pipeline can produce, LO linear as the dense table over [lo, hi].
Result<BuiltLut> build_lrn_lut(const LrnParameters& lrn, double lo, double hi, Precision precision,
                               const LutBuildOptions& options) {
    if (Status s = check_lrn(lrn); !s) return s;
    if (Status s = check_range("LRN", lo, hi, precision, kFp32Max); !s) return s;
    if (lo < 0) return error("LRN LUT range [", lo, ", ", hi, "]: a square sum cannot be negative");
    if (Status s = check_options("LRN", options); !s) return s;

    const Curve curve = lrn_curve(lrn);
    const bool fp = precision == Precision::Fp16;
    const bool hold = holds(options.extrapolation, curve);

    BuiltLut out;
    out.precision = precision;
    out.raw_table = LutTable::Le;
    LutProgram& p = out.program;
    p.le_mode = LutLeMode::Exponent;
    p.le_start = fp ? lut_register_from_float(0.0f) : 0;

    double lo_start;  // LO table in LUT input units
    int lo_select;
    if (fp) {
        // Exponent range 2^offset .. 2^(offset + 64) reaching the largest fp16 square sum.
        const double top = std::max(hi, kFp16MaxSquareSum);
        p.le_index_offset =
            static_cast<int8_t>(std::max(-128, static_cast<int>(std::ceil(std::log2(top))) - 64));
        lo_start = float_at_or_below(lo);
        lo_select = covering_select(hi - lo_start, intervals_of(LutTable::Lo));
        if (lo_select < -128)
            return error("LRN LUT range [", lo, ", ", hi,
                         "]: the range is too narrow to index on the fp16 pipeline");
    } else {
        // The CDP input converter produces x * 2^M in 9 (int8) or 17 (int16) bits: the largest M
        // that keeps sqrt(hi) * 2^M in range, so square sums reach at most its square.
        const double converter_max = precision == Precision::Int8 ? 255.0 : 65535.0;
        out.lrn_data_shift = std::clamp(
            static_cast<int>(std::floor(std::log2(converter_max / std::sqrt(hi)))), -30, 30);
        out.input_scale = std::ldexp(1.0, 2 * out.lrn_data_shift);
        p.le_index_offset = 0;  // entry i at square sum 2^i: every positive integer input hits
        lo_start = std::floor(lo * out.input_scale);
        const double span = std::max(hi * out.input_scale - lo_start, 1.0);
        lo_select = std::max(covering_select(span, intervals_of(LutTable::Lo)),
                             -8);  // end stays an integer
    }
    const double scale = out.input_scale;
    const double lo_step = std::ldexp(1.0, lo_select);
    const double lo_end = lo_start + lo_step * intervals_of(LutTable::Lo);
    const double le_top = std::ldexp(1.0, p.le_index_offset + 64);  // where LE overflows
    p.lo_index_select = static_cast<int8_t>(lo_select);

    if (!fp) {
        const double largest = std::max(std::abs(curve.value(0)), std::abs(curve.value(hi)));
        out.output_scale =
            options.output_scale > 0 ? options.output_scale : (largest > 0 ? 32767 / largest : 1.0);
    }
    const RealFunction g = [&](double u) { return curve.value(u / scale); };
    const auto entry = [&](double u) {
        return fp ? fp_entry(g(u)) : int_entry(g(u) * out.output_scale);
    };
    for (uint32_t i = 0; i < kLutLeEntries; ++i)
        p.le[i] = entry(std::ldexp(1.0, int(i) + p.le_index_offset));
    for (uint32_t i = 0; i < kLutLoEntries; ++i) p.lo[i] = entry(lo_start + lo_step * i);

    const auto slope_at = [&](double u) {
        if (hold) return LutSlope{};
        const double per_x = curve.slope(u / scale);
        return fp ? fp_slope(per_x) : int_slope(per_x / scale * out.output_scale);
    };
    if (fp) {
        p.le_end = lut_register_from_float(static_cast<float>(le_top));
        p.lo_start = lut_register_from_float(static_cast<float>(lo_start));
        p.lo_end = lut_register_from_float(static_cast<float>(lo_end));
    } else {
        p.le_end = (int64_t(1) << 37) - 1;  // beyond any 38-bit input: LE never overflows
        p.lo_start = static_cast<int64_t>(lo_start);
        p.lo_end = static_cast<int64_t>(lo_end);
    }
    p.le_underflow = slope_at(0);
    p.le_overflow = slope_at(fp ? le_top : double(p.le_end));
    p.lo_underflow = slope_at(lo_start);
    p.lo_overflow = slope_at(lo_end);

    // Inside LO's range LO is the finer table. Below it, LE's entry 0 sits at 2^offset next
    // to 0 and is the better origin unless LO starts at 0 itself.
    p.hybrid_priority = LutTable::Lo;
    p.underflow_priority = lo_start <= 0 ? LutTable::Lo : LutTable::Le;
    p.overflow_priority = LutTable::Le;

    const std::vector<double> errors =
        segment_errors(g, lo_start, lo_step, intervals_of(LutTable::Lo), hi * (fp ? 1.0 : scale));
    out.interpolation_error = *std::max_element(errors.begin(), errors.end());
    return out;
}

}  // namespace nvdla::precision
