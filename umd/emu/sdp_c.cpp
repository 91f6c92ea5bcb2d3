// SDP C, the output convertor (cmod/hls/sdp/sdp_c.cpp, counters in
// hls_wrapper/sdp_hls_wrapper.cpp:478-580).
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

}  // namespace nvdla::emu::sdp
