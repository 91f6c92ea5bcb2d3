// SDP Y (EW): operand convertors, MUL (PReLU) then ALU, then the LUT (cmod/hls/sdp/sdp_y.cpp,
// sdp_y_cvt.cpp, sdp_y_core.cpp; the LUT in nvdla/precision/lut.hpp).
#include <algorithm>
#include <bit>

#include "emu/sdp_internal.hpp"
#include "nvdla/precision/integer.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::emu::sdp {
namespace {

using namespace nvdla::precision;

// A memory operand on the int pipelines: (x - offset) * scale >> truncate into 32 bits, or the
// sign-extended 16-bit value when the convertor is bypassed.
int32_t convert_int(const OperandConvertor& c, int16_t value) {
    if (c.bypass) return value;
    return static_cast<int32_t>(convert(value, c.params, kSdpEwOperandConvertor).value);
}

// On the fp16 pipeline the convertor only flushes NaN and widens; its bypass and its
// parameters are not used (sdp_y_cvt.cpp:31-57).
uint32_t convert_fp(bool nan_to_zero, int16_t value) {
    const auto h = static_cast<uint16_t>(value);
    return fp16_to_fp32(nan_to_zero ? fp16_flush_nan(h) : h);
}

int32_t y_int(const YStage& y, int32_t in, const int16_t* alu_mem, const int16_t* mul_mem,
              size_t i) {
    int32_t x = in;
    if (!y.mul_bypass && !(y.prelu && in >= 0)) {
        const int64_t operand =
            mul_mem ? convert_int(y.mul_cvt, mul_mem[i]) : static_cast<int32_t>(y.mul_operand);
        // 32 x 32 -> 64 bits, then EW_TRUNCATE (10 bits) with rounding into 32 bits.
        x = static_cast<int32_t>(shift_right_round_saturate(int64_t(in) * operand, y.truncate, 32));
    }
    if (!y.alu_bypass) {
        const int64_t operand =
            alu_mem ? convert_int(y.alu_cvt, alu_mem[i]) : static_cast<int32_t>(y.alu_operand);
        int64_t o;  // 33 bits, then saturated to 32
        switch (y.alu_algo) {
            case 0: o = std::max<int64_t>(x, operand); break;
            case 1: o = std::min<int64_t>(x, operand); break;
            case 2: o = int64_t(x) + operand; break;
            default: o = int64_t(x) == operand ? 0 : 1; break;  // EQL
        }
        x = static_cast<int32_t>(saturate(o, 32));
    }
    return x;
}

}  // namespace

uint32_t y_fp_element(const YStage& y, bool nan_to_zero, uint32_t in, const int16_t* alu_mem,
                      const int16_t* mul_mem, size_t i) {
    uint32_t x = in;
    if (!y.mul_bypass && !(y.prelu && (in >> 31) == 0)) {
        const uint32_t operand = mul_mem ? convert_fp(nan_to_zero, mul_mem[i]) : y.mul_operand;
        x = fp32_mul(in, operand);
    }
    if (!y.alu_bypass) {
        const uint32_t operand = alu_mem ? convert_fp(nan_to_zero, alu_mem[i]) : y.alu_operand;
        x = fp_alu(y.alu_algo, x, operand);
    }
    return x;
}

void run_y(const Settings& s, std::span<int32_t> line, OperandLine ops, Counters& counters) {
    const YStage& y = s.ew;
    const size_t n = line.size();
    if (s.fp() && !y.lut && float_simd_enabled()) {
        run_y_float_simd(y, s.nan_to_zero, line, ops);
        return;
    }
    if (s.fp()) {
        for (size_t i = 0; i < n; ++i) {
            uint32_t x =
                y_fp_element(y, s.nan_to_zero, static_cast<uint32_t>(line[i]), ops.alu, ops.mul, i);
            if (y.lut) {
                const LutFpLookup r = sdp_lut_lookup_fp(s.lut, std::bit_cast<float>(x));
                x = std::bit_cast<uint32_t>(r.value);
                counters.lut.count_sdp(r.outcome);
            }
            line[i] = static_cast<int32_t>(x);
        }
        return;
    }
    for (size_t i = 0; i < n; ++i) {
        int32_t x = y_int(y, line[i], ops.alu, ops.mul, i);
        if (y.lut) {
            const LutIntLookup r = sdp_lut_lookup_int(s.lut, x);
            x = static_cast<int32_t>(r.value);
            counters.lut.count_sdp(r.outcome);
        }
        line[i] = x;
    }
}

}  // namespace nvdla::emu::sdp
