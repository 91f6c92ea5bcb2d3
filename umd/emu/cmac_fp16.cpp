// CMAC's fp16 MAC cell vectorised: the 64 lanes of one operation in vectors of 16 (AVX-512) or
// 8 (AVX2) lanes, each lane computed exactly as the scalar cell in cmac.cpp (which stays the
// reference: cmac_fp16_dot_scalar; tests/emu compares both on every path the CPU has). An
// operation with a NaN operand takes the scalar path.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"

namespace nvdla::emu::conv {
namespace {

#pragma GCC push_options
#pragma GCC target("avx2")
#define NVDLA_FP16_NS avx2
#define NVDLA_FP16_WIDTH 8
#include "emu/cmac_fp16_lanes.inc"
#undef NVDLA_FP16_NS
#undef NVDLA_FP16_WIDTH
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl")
#define NVDLA_FP16_NS avx512
#define NVDLA_FP16_WIDTH 16
#include "emu/cmac_fp16_lanes.inc"
#undef NVDLA_FP16_NS
#undef NVDLA_FP16_WIDTH
#pragma GCC pop_options

constexpr uint64_t kMask38 = (uint64_t(1) << 38) - 1;

uint64_t pack_fp44(uint32_t exponent, int64_t total) {
    return (uint64_t(exponent & 0x3fu) << 38) | (static_cast<uint64_t>(total) & kMask38);
}

// `chunks`: the vectors holding the operation's lanes (1, 2, 4 or, AVX2, 8); the lanes past
// them are zeros.
__attribute__((target("avx2"))) bool dot_avx2(const uint16_t* d, const uint16_t* w, unsigned chunks,
                                              uint64_t* out) {
    uint32_t exponent = 0;
    int64_t total = 0;  // set by dot(); GCC -O1 cannot see it
    const bool done = chunks == 1   ? avx2::dot<1>(d, w, exponent, total)
                      : chunks == 2 ? avx2::dot<2>(d, w, exponent, total)
                      : chunks == 4 ? avx2::dot<4>(d, w, exponent, total)
                                    : avx2::dot<8>(d, w, exponent, total);
    if (!done) return false;
    *out = pack_fp44(exponent, total);
    return true;
}

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) bool dot_avx512(const uint16_t* d,
                                                                              const uint16_t* w,
                                                                              unsigned chunks,
                                                                              uint64_t* out) {
    uint32_t exponent = 0;
    int64_t total = 0;  // set by dot(); GCC -O1 cannot see it
    const bool done = chunks == 1   ? avx512::dot<1>(d, w, exponent, total)
                      : chunks == 2 ? avx512::dot<2>(d, w, exponent, total)
                                    : avx512::dot<4>(d, w, exponent, total);
    if (!done) return false;
    *out = pack_fp44(exponent, total);
    return true;
}

__attribute__((target("avx2"))) bool products_avx2(const uint16_t* d, const uint16_t* w,
                                                   int32_t out[64], uint32_t& exponent) {
    return avx2::products64(d, w, out, exponent);
}

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) bool products_avx512(
    const uint16_t* d, const uint16_t* w, int32_t out[64], uint32_t& exponent) {
    return avx512::products64(d, w, out, exponent);
}

}  // namespace

bool cmac_fp16_products(const uint16_t* data, const uint16_t* weights, int32_t products[64],
                        uint32_t& exponent) {
    switch (isa_level()) {
        case IsaLevel::Avx512: return products_avx512(data, weights, products, exponent);
        case IsaLevel::Avx2: return products_avx2(data, weights, products, exponent);
        default: return false;
    }
}

uint64_t cmac_fp16_dot(const uint16_t* data, const uint16_t* weights, unsigned lanes) {
    const IsaLevel level = isa_level();
    // One or two lanes cost the scalar cell less than a vector.
    if (level == IsaLevel::Scalar || lanes <= 2) return cmac_fp16_dot_scalar(data, weights, lanes);
    const bool avx512 = level == IsaLevel::Avx512;
    // The vectors the lanes need, rounded up to a power of two.
    const unsigned width = avx512 ? 16 : 8;
    unsigned chunks = 1;
    while (chunks * width < lanes) chunks *= 2;
    const unsigned used = chunks * width;
    // Lanes past the operation's are zeros, which the cell masks off.
    alignas(64) uint16_t d[64], w[64];
    if (lanes < used) {
        std::memset(d, 0, used * sizeof(uint16_t));
        std::memset(w, 0, used * sizeof(uint16_t));
        std::memcpy(d, data, lanes * sizeof(uint16_t));
        std::memcpy(w, weights, lanes * sizeof(uint16_t));
        data = d;
        weights = w;
    }
    uint64_t out;
    const bool done =
        avx512 ? dot_avx512(data, weights, chunks, &out) : dot_avx2(data, weights, chunks, &out);
    return done ? out : cmac_fp16_dot_scalar(data, weights, lanes);
}

}  // namespace nvdla::emu::conv
