// SDP X1 (BS) and X2 (BN): ALU -> MUL (PReLU) -> truncate -> ReLU, as cmod/hls/sdp/sdp_x.cpp
// computes it (widths in sdp.h: ALU 33 bits, MUL 49 bits, output 32 bits).
#include <algorithm>

#include "emu/sdp_internal.hpp"
#include "nvdla/precision/integer.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::emu::sdp {
namespace {

using namespace nvdla::precision;

int32_t x_int(const XStage& x, int32_t in, int16_t alu_operand, int16_t mul_operand) {
    int64_t alu = in;  // 33 bits: no saturation after the ALU
    if (!x.alu_bypass) {
        // The 16-bit operand is shifted left into 32 bits, saturating (IntShiftLeft).
        const int64_t operand = x_alu_operand(alu_operand, x.alu_shift);
        if (x.alu_algo == 0)
            alu = std::max<int64_t>(in, operand);
        else if (x.alu_algo == 1)
            alu = std::min<int64_t>(in, operand);
        else
            alu = int64_t(in) + operand;  // SUM, and the undefined algorithm 3
    }
    int32_t out;
    if (!x.mul_bypass && x.prelu && alu >= 0) {
        // PReLU passes a non-negative value on and skips the truncation: the low 32 bits of
        // the 33-bit ALU result (sdp_x.cpp X_trt bypass_trt; X_int_trt.v mul_data_out[31:0]).
        out = static_cast<int32_t>(static_cast<uint32_t>(alu));
    } else {
        // A bypassed multiplier still goes through the truncation (X_int_mul.v:106).
        const int64_t product = x.mul_bypass ? alu : alu * mul_operand;  // 49 bits
        out = static_cast<int32_t>(shift_right_round_saturate(product, x.mul_shift, 32));
    }
    if (!x.relu_bypass && out < 0) out = 0;
    return out;
}

}  // namespace

// FpAlu (sdp.h): MAX, MIN, SUM, and for 3 the inequality of the bit patterns as 0 or 1.
uint32_t fp_alu(uint32_t algo, uint32_t a, uint32_t b) {
    switch (algo) {
        case 0: return fp32_max(a, b);
        case 1: return fp32_min(a, b);
        case 2: return fp32_add(a, b);
        default: return a == b ? 0u : 1u;
    }
}

uint32_t x_fp_element(const XStage& x, bool nan_to_zero, uint32_t in, int16_t alu_operand,
                      int16_t mul_operand) {
    const auto operand = [nan_to_zero](int16_t bits) {
        const auto h = static_cast<uint16_t>(bits);
        return fp16_to_fp32(nan_to_zero ? fp16_flush_nan(h) : h);
    };
    uint32_t alu = in;
    // The fp16 ALU ignores ALU_SHIFT_VALUE.
    if (!x.alu_bypass) alu = fp_alu(x.alu_algo, in, operand(alu_operand));
    uint32_t out = alu;
    if (!x.mul_bypass && !(x.prelu && (alu >> 31) == 0)) out = fp32_mul(alu, operand(mul_operand));
    return x.relu_bypass ? out : fp32_relu(out);
}

void run_x(const XStage& x, bool fp, bool nan_to_zero, std::span<int32_t> line, OperandLine ops) {
    if (fp && float_simd_enabled()) {
        run_x_float_simd(x, nan_to_zero, line, ops);
        return;
    }
    const size_t n = line.size();
    for (size_t i = 0; i < n; ++i) {
        const int16_t alu = ops.alu ? ops.alu[i] : x.alu_operand;
        const int16_t mul = ops.mul ? ops.mul[i] : x.mul_operand;
        if (fp) {
            line[i] = static_cast<int32_t>(
                x_fp_element(x, nan_to_zero, static_cast<uint32_t>(line[i]), alu, mul));
        } else {
            line[i] = x_int(x, line[i], alu, mul);
        }
    }
}

}  // namespace nvdla::emu::sdp
