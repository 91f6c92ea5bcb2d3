// SDP C, the output convertor (cmod/hls/sdp/sdp_c.cpp, counters in
// hls_wrapper/sdp_hls_wrapper.cpp:478-580).
#include <algorithm>
#include <cmath>

#include "emu/sdp_internal.hpp"
#include "nvdla/precision/convertor.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::emu::sdp {

using namespace nvdla::precision;

void run_c(const Settings& s, std::span<const int32_t> line, std::span<uint16_t> out,
           Counters& counters) {
    const size_t n = line.size();
    if (s.eql) {
        // EQL mode: the 0/1 comparison results pass through unconverted and nothing is written;
        // any non-zero one sets D_STATUS.STATUS_UNEQUAL.
        for (size_t i = 0; i < n; ++i) {
            out[i] = static_cast<uint16_t>(line[i]);
            counters.unequal |= out[i] != 0;
            if (s.output == Precision::Fp16) counters.saturations += (out[i] & 0x7fffu) == 0x7bffu;
        }
        return;
    }
    const bool fp16_out = s.output == Precision::Fp16;
    if (s.fp() && fp16_out && float_simd_enabled()) {
        run_c_float_simd(line, out, counters);
        return;
    }
    for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        bool saturated;
        if (s.fp()) {
            h = fp32_to_fp16(static_cast<uint32_t>(line[i]));
            if (s.output == Precision::Int16) h = static_cast<uint16_t>(fp16_to_int16(h));
            saturated = false;  // fp16 -> int16 is not counted (sdp_c.cpp: sat stays 0)
        } else {
            h = convert_to(s.output, line[i], s.cvt, kSdpOutputConvertor).bits;
            // The C model's IntShiftRightSat flag of the 49 -> 17-bit shift; the int8/int16
            // saturation after it is not counted.
            saturated = cmodel_convertor_saturation_flag(line[i], s.cvt, kSdpOutputConvertor);
        }
        // An fp16 output counts when it is the largest finite value, whatever its origin.
        if (fp16_out) {
            saturated = (h & 0x7fffu) == 0x7bffu;
            counters.output_nans += fp16_is_nan(h);
        }
        counters.saturations += saturated;
        out[i] = h;
    }
}

CClampPlan plan_c_clamp(const ConvertorParams& cvt, Precision output) {
    CClampPlan plan;
    if (output == Precision::Fp16) return {false, INT32_MIN, INT32_MAX};
    const auto out = [&](int64_t x) {
        return static_cast<int16_t>(convert_to(output, x, cvt, kSdpOutputConvertor).bits);
    };
    const int16_t at_min = out(INT32_MIN), at_max = out(INT32_MAX);
    if (at_min == at_max) {
        // A constant output: any x, the offset's product being 0.
        plan.lower = plan.upper = cvt.offset;
    } else {
        // Where the rounded (x - offset) * scale / 2^shift passes half a step beyond the two
        // outputs, checked around that guess (the output is monotone); a binary search when
        // the guess misses.
        const int sign = cvt.scale > 0 ? 1 : -1;
        const double step =
            std::ldexp(1.0, int(convertor_shift(cvt, kSdpOutputConvertor))) / double(cvt.scale);
        const auto guess = [&](int16_t value, double half) {
            const double x = double(cvt.offset) + (double(value) + half) * step;
            return static_cast<int64_t>(
                std::clamp(std::round(x), double(INT32_MIN), double(INT32_MAX)));
        };
        const auto within = [](int64_t x) { return x >= INT32_MIN && x <= INT32_MAX; };
        // The greatest x with INT32_MIN's output.
        int64_t lower = INT32_MIN - int64_t(1);
        const int64_t g = guess(at_min, 0.5 * sign);
        for (int64_t x = g - 2; x <= g + 2 && lower < INT32_MIN; ++x)
            if (within(x) && out(x) == at_min && (x == INT32_MAX || out(x + 1) != at_min))
                lower = x;
        if (lower < INT32_MIN) {
            int64_t lo = INT32_MIN, hi = INT32_MAX;
            while (lo < hi) {
                const int64_t mid = lo + (hi - lo + 1) / 2;
                if (out(mid) == at_min)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            lower = lo;
        }
        // The least x with INT32_MAX's output.
        int64_t upper = INT32_MAX + int64_t(1);
        const int64_t h = guess(at_max, -0.5 * sign);
        for (int64_t x = h - 2; x <= h + 2 && upper > INT32_MAX; ++x)
            if (within(x) && out(x) == at_max && (x == INT32_MIN || out(x - 1) != at_max))
                upper = x;
        if (upper > INT32_MAX) {
            int64_t lo = INT32_MIN, hi = INT32_MAX;
            while (lo < hi) {
                const int64_t mid = lo + (hi - lo) / 2;
                if (out(mid) == at_max)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            upper = lo;
        }
        plan.lower = static_cast<int32_t>(lower);
        plan.upper = static_cast<int32_t>(upper);
    }
    // Exact in 32-bit lanes: x - offset and the product fit, and so does the rounding's sum
    // x + half - [x < 0] (a negative product only needs to fit itself), at both bounds (the
    // product is monotone in x).
    const uint32_t shift = convertor_shift(cvt, kSdpOutputConvertor);
    const int64_t half = shift ? int64_t(1) << (shift - 1) : 0;
    const auto fits = [&](int64_t x) {
        const int64_t difference = x - cvt.offset, product = difference * cvt.scale;
        return difference >= INT32_MIN && difference <= INT32_MAX && product >= INT32_MIN &&
               product + half <= INT32_MAX;
    };
    plan.exact = shift <= 30 && fits(plan.lower) && fits(plan.upper);
    return plan;
}

}  // namespace nvdla::emu::sdp
