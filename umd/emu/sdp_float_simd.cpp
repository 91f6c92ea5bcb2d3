// The vector forms of SDP's fp16-pipeline stages (sdp_float_simd_lanes.inc), 16 lanes at the
// AVX-512 level and 8 at AVX2, bit for bit the scalar stages (sdp_x.cpp, sdp_y.cpp,
// sdp_c.cpp); tests/emu/sdp_float_simd_test.cpp compares them.
#include <immintrin.h>

#include <cstring>

#include "emu/isa.hpp"
#include "emu/sdp_internal.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::emu::sdp {
namespace {

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,f16c")
#endif
#define NVDLA_SDPF_NS float_avx2
#define NVDLA_SDPF_WIDTH 8
#include "emu/sdp_float_simd_lanes.inc"
#undef NVDLA_SDPF_NS
#undef NVDLA_SDPF_WIDTH
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl")
#endif
#define NVDLA_SDPF_NS float_avx512
#define NVDLA_SDPF_WIDTH 16
#include "emu/sdp_float_simd_lanes.inc"
#undef NVDLA_SDPF_NS
#undef NVDLA_SDPF_WIDTH
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

bool use_avx512() {
    return isa_level() == IsaLevel::Avx512;
}

}  // namespace

bool float_simd_enabled() {
    // The vector adds and multiplies round as the model only in MXCSR's default mode: nearest
    // even, denormals neither flushed nor read as zero.
    constexpr unsigned kRoundingFlushDenormalsAsZero = 0x6000u | 0x8000u | 0x0040u;
    return simd_enabled() && (_mm_getcsr() & kRoundingFlushDenormalsAsZero) == 0;
}

void run_x_float_simd(const XStage& x, bool nan_to_zero, std::span<int32_t> line, OperandLine ops) {
    if (use_avx512())
        float_avx512::run_x(x, nan_to_zero, line.data(), line.size(), ops);
    else
        float_avx2::run_x(x, nan_to_zero, line.data(), line.size(), ops);
}

void run_y_float_simd(const YStage& y, bool nan_to_zero, std::span<int32_t> line, OperandLine ops) {
    if (use_avx512())
        float_avx512::run_y(y, nan_to_zero, line.data(), line.size(), ops);
    else
        float_avx2::run_y(y, nan_to_zero, line.data(), line.size(), ops);
}

void run_c_float_simd(std::span<const int32_t> line, std::span<uint16_t> out, Counters& counters) {
    if (use_avx512())
        float_avx512::run_c(line.data(), out.data(), line.size(), counters);
    else
        float_avx2::run_c(line.data(), out.data(), line.size(), counters);
}

}  // namespace nvdla::emu::sdp
