// CMAC's fp16 MAC cell vectorised: the lanes of one operation in vectors of 16 (AVX-512) or
// 8 (AVX2) lanes, each lane computed exactly as the scalar cell in cmac.cpp (which stays the
// reference: cmac_fp16_dot_scalar; tests/emu compares both on every path the CPU has). An
// operation with a NaN operand takes the scalar path. Layers (cmac_fp16_accumulate) use
// operands decoded once (Fp16Operands) and add the results into CACC's fp48 sums of several
// output positions at once (cacc_fp48_add on 64-bit lanes).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"

namespace nvdla::emu::conv {
namespace {

#include "emu/cmac_fp16_per_isa.inc"

constexpr uint64_t kMask38 = (uint64_t(1) << 38) - 1;

uint64_t pack_fp44(uint32_t exponent, int64_t total) {
    return (uint64_t(exponent & 0x3fu) << 38) | (static_cast<uint64_t>(total) & kMask38);
}

// `chunks`: the vectors holding the operation's lanes (1, 2, 4 or, AVX2, 8); the lanes past
// them are zeros.
__attribute__((target("avx2,f16c"))) bool dot_avx2(const uint16_t* d, const uint16_t* w,
                                                   unsigned chunks, uint64_t* out) {
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

__attribute__((target("avx2,f16c"))) bool products_avx2(const uint16_t* d, const uint16_t* w,
                                                        int32_t out[64], uint32_t& exponent) {
    return avx2::products64(d, w, out, exponent);
}

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) bool products_avx512(
    const uint16_t* d, const uint16_t* w, int32_t out[64], uint32_t& exponent) {
    return avx512::products64(d, w, out, exponent);
}

// The block's positions in groups of as many accumulators as two vectors hold.
__attribute__((target("avx2,f16c"))) void block_avx2(const Fp16Operands& d, size_t d_op,
                                                     size_t d_stride, unsigned count,
                                                     const Fp16Operands& w, size_t w_op,
                                                     uint32_t operations, uint64_t* out) {
    for (unsigned p = 0; p < count; p += avx2::kBlockPositions) {
        const unsigned n = std::min<unsigned>(avx2::kBlockPositions, count - p);
        const size_t first = d_op + p * d_stride;
        switch (d.width) {
            case 1:
                avx2::accumulate_block<1>(d, first, d_stride, n, w, w_op, operations, out + p);
                break;
            case 2:
                avx2::accumulate_block<2>(d, first, d_stride, n, w, w_op, operations, out + p);
                break;
            case 4:
                avx2::accumulate_block<4>(d, first, d_stride, n, w, w_op, operations, out + p);
                break;
            case 8:
                avx2::accumulate_block<8>(d, first, d_stride, n, w, w_op, operations, out + p);
                break;
            case 16:
                avx2::accumulate_block<16>(d, first, d_stride, n, w, w_op, operations, out + p);
                break;
            case 32:
                avx2::accumulate_block<32>(d, first, d_stride, n, w, w_op, operations, out + p);
                break;
            default:
                avx2::accumulate_block<64>(d, first, d_stride, n, w, w_op, operations, out + p);
        }
    }
}

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void block_avx512(
    const Fp16Operands& d, size_t d_op, size_t d_stride, unsigned count, const Fp16Operands& w,
    size_t w_op, uint32_t operations, uint64_t* out) {
    for (unsigned p = 0; p < count; p += avx512::kBlockPositions) {
        const unsigned n = std::min<unsigned>(avx512::kBlockPositions, count - p);
        const size_t first = d_op + p * d_stride;
        switch (d.width) {
            case 1:
                avx512::accumulate_block<1>(d, first, d_stride, n, w, w_op, operations, out + p);
                break;
            case 2:
                avx512::accumulate_block<2>(d, first, d_stride, n, w, w_op, operations, out + p);
                break;
            case 4:
                avx512::accumulate_block<4>(d, first, d_stride, n, w, w_op, operations, out + p);
                break;
            case 8:
                avx512::accumulate_block<8>(d, first, d_stride, n, w, w_op, operations, out + p);
                break;
            case 16:
                avx512::accumulate_block<16>(d, first, d_stride, n, w, w_op, operations, out + p);
                break;
            case 32:
                avx512::accumulate_block<32>(d, first, d_stride, n, w, w_op, operations, out + p);
                break;
            default:
                avx512::accumulate_block<64>(d, first, d_stride, n, w, w_op, operations, out + p);
        }
    }
}

__attribute__((target("avx2,f16c"))) void fp48_add_avx2(const uint64_t* acc, const uint64_t* mac,
                                                        uint64_t* out) {
    avx2::Q a, m;
    std::memcpy(&a, acc, sizeof a);
    std::memcpy(&m, mac, sizeof m);
    const avx2::Q r = avx2::fp48_add(a, m);
    std::memcpy(out, &r, sizeof r);
}

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void fp48_add_avx512(
    const uint64_t* acc, const uint64_t* mac, uint64_t* out) {
    avx512::Q a, m;
    std::memcpy(&a, acc, sizeof a);
    std::memcpy(&m, mac, sizeof m);
    const avx512::Q r = avx512::fp48_add(a, m);
    std::memcpy(out, &r, sizeof r);
}

constexpr unsigned kMaxSummedLanes = 64;

__attribute__((target("avx2,f16c"))) void fp48_sum_avx2(const uint64_t* macs, unsigned n,
                                                        uint64_t* out) {
    avx2::Q q[kMaxSummedLanes];
    std::memcpy(q, macs, n * sizeof(avx2::Q));
    const avx2::Q r = avx2::fp48_sum(q, int(n));
    std::memcpy(out, &r, sizeof r);
}

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void fp48_sum_avx512(
    const uint64_t* macs, unsigned n, uint64_t* out) {
    avx512::Q q[kMaxSummedLanes];
    std::memcpy(q, macs, n * sizeof(avx512::Q));
    const avx512::Q r = avx512::fp48_sum(q, int(n));
    std::memcpy(out, &r, sizeof r);
}

// The band kernel's sums of 32-bit products: 8 lanes (AVX-512: in the low half of 16).
__attribute__((target("avx2,f16c"))) void fp48_sum_products_avx2(const int32_t* products,
                                                                 const int32_t* exponents,
                                                                 unsigned n, uint64_t* out) {
    avx2::S p[kMaxSummedLanes], e[kMaxSummedLanes];
    std::memcpy(p, products, n * sizeof(avx2::S));
    std::memcpy(e, exponents, n * sizeof(avx2::S));
    avx2::Q sums[2];
    avx2::fp48_sum_products(p, e, int(n), sums);
    std::memcpy(out, sums, sizeof sums);
}

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void fp48_sum_products_avx512(
    const int32_t* products, const int32_t* exponents, unsigned n, uint64_t* out) {
    avx512::S p[kMaxSummedLanes] = {}, e[kMaxSummedLanes] = {};
    for (unsigned t = 0; t < n; ++t) {
        std::memcpy(&p[t], products + t * 8, 8 * sizeof(int32_t));
        std::memcpy(&e[t], exponents + t * 8, 8 * sizeof(int32_t));
    }
    avx512::Q sums[2];
    avx512::fp48_sum_products(p, e, int(n), sums);
    std::memcpy(out, &sums[0], 8 * sizeof(uint64_t));
}

__attribute__((target("avx2,f16c"))) void fp48_to_fp32_avx2(const uint64_t* accumulators,
                                                            unsigned n, uint32_t* out) {
    avx2::fp48_to_fp32_many(accumulators, n, out);
}

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void fp48_to_fp32_avx512(
    const uint64_t* accumulators, unsigned n, uint32_t* out) {
    avx512::fp48_to_fp32_many(accumulators, n, out);
}

// Fp16Operands::set's decoding, 8 lanes at a time (`lanes` a multiple of 8); of the decoded
// mantissas ORed, the sign (bit 31) and whether any bit is set (bit 0), and whether a lane is a
// NaN (bit 1).
__attribute__((target("avx2,f16c"))) uint32_t decode_avx2(const uint16_t* h, unsigned lanes,
                                                          uint32_t* mantissa, int32_t* exponent) {
    const __m256i fraction_bits = _mm256_set1_epi32(0x3ff), hidden = _mm256_set1_epi32(0x400);
    __m256i all = _mm256_setzero_si256(), nan = _mm256_setzero_si256();
    for (unsigned i = 0; i < lanes; i += 8) {
        const __m256i v =
            _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i)));
        const __m256i e = _mm256_and_si256(_mm256_srli_epi32(v, 10), _mm256_set1_epi32(31));
        const __m256i denormal = _mm256_cmpeq_epi32(e, _mm256_setzero_si256());
        const __m256i fraction = _mm256_or_si256(_mm256_and_si256(v, fraction_bits),
                                                 _mm256_andnot_si256(denormal, hidden));
        const __m256i shift = _mm256_blendv_epi8(_mm256_and_si256(e, _mm256_set1_epi32(3)),
                                                 _mm256_set1_epi32(1), denormal);
        const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(v, _mm256_set1_epi32(0x8000)), 16);
        const __m256i magnitude = _mm256_and_si256(v, _mm256_set1_epi32(0x7fff));
        const __m256i zero = _mm256_cmpeq_epi32(magnitude, _mm256_setzero_si256());
        nan = _mm256_or_si256(nan, _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7c00)));
        const __m256i m =
            _mm256_andnot_si256(zero, _mm256_or_si256(_mm256_sllv_epi32(fraction, shift), sign));
        const __m256i x =
            _mm256_blendv_epi8(_mm256_and_si256(_mm256_srli_epi32(v, 10), _mm256_set1_epi32(0x1c)),
                               _mm256_set1_epi32(-256), zero);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(mantissa + i), m);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(exponent + i), x);
        all = _mm256_or_si256(all, m);
    }
    return (_mm256_movemask_ps(_mm256_castsi256_ps(all)) != 0 ? 0x80000000u : 0) |
           (_mm256_testz_si256(all, all) ? 0 : 1u) | (_mm256_testz_si256(nan, nan) ? 0 : 2u);
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

void Fp16Operands::resize(size_t operations, unsigned lanes) {
    width = lanes;
    mantissa.resize(operations * width);
    exponent.resize(operations * width);
    raw.resize(operations * width);
    nan.resize(operations);
    negative.resize(operations);
    all_zero.resize(operations);
}

uint64_t Fp16Operands::bytes() const {
    return mantissa.capacity() * sizeof(uint32_t) + exponent.capacity() * sizeof(int32_t) +
           raw.capacity() * sizeof(uint16_t) + nan.capacity() + negative.capacity() +
           all_zero.capacity();
}

void Fp16Operands::zero_from(size_t op) {
    std::fill(mantissa.begin() + ptrdiff_t(op * width), mantissa.end(), 0u);
    std::fill(exponent.begin() + ptrdiff_t(op * width), exponent.end(), 0);
    std::fill(raw.begin() + ptrdiff_t(op * width), raw.end(), uint16_t{0});
    std::fill(nan.begin() + ptrdiff_t(op), nan.end(), uint8_t{0});
    std::fill(negative.begin() + ptrdiff_t(op), negative.end(), uint8_t{0});
    std::fill(all_zero.begin() + ptrdiff_t(op), all_zero.end(), uint8_t{0});
}

void Fp16Operands::set(size_t op, const int16_t* lanes, unsigned count) {
    const size_t first = op * width;
    uint16_t* h = raw.data() + first;
    const unsigned given = std::min(count, width);
    if (given) std::memcpy(h, lanes, given * sizeof(uint16_t));
    std::fill(h + given, h + width, uint16_t(0));
    bool has_nan = false;
    unsigned i = 0;
    // The decoded mantissas ORed (-0 decodes as 0).
    uint32_t all = 0;
    if (width >= 8 && isa_level() != IsaLevel::Scalar) {
        const uint32_t found =
            decode_avx2(h, width, mantissa.data() + first, exponent.data() + first);
        has_nan = found & 2u;
        all = found & ~2u;
        i = width;
    }
    // Without branches (a ReLU's zeros come at random).
    for (; i < width; ++i) {
        has_nan |= (h[i] & 0x7fffu) > 0x7c00u;
        const bool zero = (h[i] & 0x7fffu) == 0;
        // cmac.cpp's aligned_products: a denormal counts as exponent 1.
        const uint32_t e = (h[i] >> 10) & 31u;
        const uint32_t aligned = ((h[i] & 0x3ffu) | (e ? 0x400u : 0)) << (e ? (e & 3u) : 1u);
        mantissa[first + i] = zero ? 0 : aligned | uint32_t(h[i] & 0x8000u) << 16;
        exponent[first + i] = zero ? -256 : (h[i] >> 10) & 0x1c;
        all |= mantissa[first + i];
    }
    nan[op] = has_nan;
    negative[op] = all >> 31;
    all_zero[op] = all == 0;
}

void cacc_fp48_add_lanes(const uint64_t acc[8], const uint64_t mac[8], uint64_t out[8]) {
    switch (isa_level()) {
        case IsaLevel::Avx512: return fp48_add_avx512(acc, mac, out);
        case IsaLevel::Avx2:
            fp48_add_avx2(acc, mac, out);
            return fp48_add_avx2(acc + 4, mac + 4, out + 4);
        default:
            for (int i = 0; i < 8; ++i) out[i] = cacc_fp48_add(acc[i], mac[i]);
    }
}

void cacc_fp48_sum_lanes(const uint64_t* macs, unsigned n, uint64_t out[8]) {
    n = std::min(n, kMaxSummedLanes);
    switch (isa_level()) {
        case IsaLevel::Avx512: return fp48_sum_avx512(macs, n, out);
        case IsaLevel::Avx2: {
            // Lanes 0-3, then 4-7, each as n vectors of 4.
            std::vector<uint64_t> half(size_t(n) * 4);
            for (int part = 0; part < 2; ++part) {
                for (unsigned t = 0; t < n; ++t)
                    std::memcpy(&half[t * 4], macs + t * 8 + part * 4, 4 * sizeof(uint64_t));
                fp48_sum_avx2(half.data(), n, out + part * 4);
            }
            return;
        }
        default:
            for (int i = 0; i < 8; ++i) {
                uint64_t acc = 0;
                for (unsigned t = 0; t < n; ++t) acc = cacc_fp48_add(acc, macs[t * 8 + i]);
                out[i] = acc;
            }
    }
}

void cacc_fp48_sum_products_lanes(const int32_t* products, const int32_t* exponents, unsigned n,
                                  uint64_t out[8]) {
    n = std::min(n, kMaxSummedLanes);
    switch (isa_level()) {
        case IsaLevel::Avx512: return fp48_sum_products_avx512(products, exponents, n, out);
        case IsaLevel::Avx2: return fp48_sum_products_avx2(products, exponents, n, out);
        default:
            for (int i = 0; i < 8; ++i) {
                uint64_t acc = 0;
                for (unsigned t = 0; t < n; ++t) {
                    const uint64_t e = uint64_t(exponents[t * 8 + i]) & 0x3f;
                    const uint64_t p = uint64_t(int64_t(products[t * 8 + i]));
                    acc = cacc_fp48_add(acc, e << 38 | (p & ((uint64_t(1) << 38) - 1)));
                }
                out[i] = acc;
            }
    }
}

void cacc_fp48_to_fp32_lanes(const uint64_t* accumulators, unsigned n, uint32_t* out) {
    switch (isa_level()) {
        case IsaLevel::Avx512: return fp48_to_fp32_avx512(accumulators, n, out);
        case IsaLevel::Avx2: return fp48_to_fp32_avx2(accumulators, n, out);
        default:
            for (unsigned i = 0; i < n; ++i) out[i] = cacc_fp48_to_fp32(accumulators[i]);
    }
}

bool cmac_fp16_vector_cell() {
    return isa_level() != IsaLevel::Scalar;
}

void cmac_fp16_accumulate(const Fp16Operands& data, size_t data_op, size_t data_stride,
                          unsigned positions, const Fp16Operands& weights, size_t weight_op,
                          uint32_t operations, uint64_t* out) {
    switch (isa_level()) {
        case IsaLevel::Avx512:
            return block_avx512(data, data_op, data_stride, positions, weights, weight_op,
                                operations, out);
        case IsaLevel::Avx2:
            return block_avx2(data, data_op, data_stride, positions, weights, weight_op, operations,
                              out);
        default: break;
    }
    const unsigned width = data.width;
    for (unsigned p = 0; p < positions; ++p) {
        uint64_t acc = 0;
        for (uint32_t op = 0; op < operations; ++op)
            acc = cacc_fp48_add(acc, cmac_fp16_dot_scalar(
                                         data.raw.data() + (data_op + p * data_stride + op) * width,
                                         weights.raw.data() + (weight_op + op) * width, width));
        out[p] = acc;
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
