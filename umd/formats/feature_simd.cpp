// float32 <-> fp16 feature cubes with 16 channels per surface, vectorised with AVX2 + F16C.
//
// NCHW: 8 pixels of 16 channel rows are converted to fp16 (16 x 8 halves) and transposed in
// two 8x8 blocks into 8 atoms of 16 channels. NHWC: every atom is 16 consecutive floats.
// F16C rounds exactly like nvdla::fp16::from_float, so results equal the element-wise path.
#include "formats/feature_simd.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "nvdla/precision/fp16.hpp"
#include "precision/cpu.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nvdla::detail {
namespace {

constexpr uint32_t kLanes = 16;  // fp16 channels in a 32-byte atom

#if defined(__x86_64__)

#define NVDLA_SIMD __attribute__((target("avx2,f16c")))

// In-place transpose of an 8x8 matrix of 16-bit elements held in 8 registers.
NVDLA_SIMD inline void transpose8x8_epi16(__m128i* r) {
    const __m128i t0 = _mm_unpacklo_epi16(r[0], r[1]), t1 = _mm_unpackhi_epi16(r[0], r[1]);
    const __m128i t2 = _mm_unpacklo_epi16(r[2], r[3]), t3 = _mm_unpackhi_epi16(r[2], r[3]);
    const __m128i t4 = _mm_unpacklo_epi16(r[4], r[5]), t5 = _mm_unpackhi_epi16(r[4], r[5]);
    const __m128i t6 = _mm_unpacklo_epi16(r[6], r[7]), t7 = _mm_unpackhi_epi16(r[6], r[7]);
    const __m128i u0 = _mm_unpacklo_epi32(t0, t2), u1 = _mm_unpackhi_epi32(t0, t2);
    const __m128i u2 = _mm_unpacklo_epi32(t1, t3), u3 = _mm_unpackhi_epi32(t1, t3);
    const __m128i u4 = _mm_unpacklo_epi32(t4, t6), u5 = _mm_unpackhi_epi32(t4, t6);
    const __m128i u6 = _mm_unpacklo_epi32(t5, t7), u7 = _mm_unpackhi_epi32(t5, t7);
    r[0] = _mm_unpacklo_epi64(u0, u4);
    r[1] = _mm_unpackhi_epi64(u0, u4);
    r[2] = _mm_unpacklo_epi64(u1, u5);
    r[3] = _mm_unpackhi_epi64(u1, u5);
    r[4] = _mm_unpacklo_epi64(u2, u6);
    r[5] = _mm_unpackhi_epi64(u2, u6);
    r[6] = _mm_unpacklo_epi64(u3, u7);
    r[7] = _mm_unpackhi_epi64(u3, u7);
}

// One line of one surface from NCHW rows: rows[j] is channel c0 + j at (n, h, 0).
// Rows of one plane are often a multiple of 4 KiB apart (224 x 224 floats is), so the 16 rows'
// cache lines compete for the same L1 sets: 16 pixels at a time use each line whole (64 bytes)
// while it is still there, instead of coming back to it for its second half.
NVDLA_SIMD void pack_line_nchw(const float* const* rows, uint32_t valid, uint32_t width,
                               uint8_t* line) {
    uint32_t w = 0;
    for (; w + 16 <= width; w += 16) {
        __m128i v[2][kLanes];
        // 16 streams are more than the hardware prefetchers follow: ask for each row's data
        // 4 lines ahead (past the row's end that is the next line's row, read next).
        for (uint32_t j = 0; j < valid; ++j)
            _mm_prefetch(reinterpret_cast<const char*>(rows[j] + w + 64), _MM_HINT_T0);
        for (uint32_t j = 0; j < kLanes; ++j) {
            if (j < valid) {
                v[0][j] = _mm256_cvtps_ph(_mm256_loadu_ps(rows[j] + w), _MM_FROUND_TO_NEAREST_INT);
                v[1][j] =
                    _mm256_cvtps_ph(_mm256_loadu_ps(rows[j] + w + 8), _MM_FROUND_TO_NEAREST_INT);
            } else {
                v[0][j] = v[1][j] = _mm_setzero_si128();
            }
        }
        for (uint32_t half = 0; half < 2; ++half) {
            transpose8x8_epi16(v[half]);
            transpose8x8_epi16(v[half] + 8);
            for (uint32_t i = 0; i < 8; ++i) {
                auto* atom = reinterpret_cast<__m128i*>(line + (w + 8 * half + i) * 32);
                _mm_storeu_si128(atom, v[half][i]);
                _mm_storeu_si128(atom + 1, v[half][8 + i]);
            }
        }
    }
    for (; w + 8 <= width; w += 8) {
        __m128i v[kLanes];
        for (uint32_t j = 0; j < kLanes; ++j)
            v[j] = j < valid
                       ? _mm256_cvtps_ph(_mm256_loadu_ps(rows[j] + w), _MM_FROUND_TO_NEAREST_INT)
                       : _mm_setzero_si128();
        transpose8x8_epi16(v);
        transpose8x8_epi16(v + 8);
        for (uint32_t i = 0; i < 8; ++i) {
            auto* atom = reinterpret_cast<__m128i*>(line + (w + i) * 32);
            _mm_storeu_si128(atom, v[i]);
            _mm_storeu_si128(atom + 1, v[8 + i]);
        }
    }
    for (; w < width; ++w) {
        uint16_t atom[kLanes] = {};
        for (uint32_t j = 0; j < valid; ++j) atom[j] = fp16::from_float(rows[j][w]);
        std::memcpy(line + w * 32, atom, sizeof atom);
    }
}

// Copies n floats with non-temporal stores where dst is 32-byte aligned: the host tensor is
// written once here and not read back, so its cache lines need not be fetched first.
NVDLA_SIMD void stream_copy(float* dst, const float* src, uint32_t n) {
    uint32_t i = 0;
    for (; i < n && (reinterpret_cast<uintptr_t>(dst + i) & 31) != 0; ++i) dst[i] = src[i];
    for (; i + 8 <= n; i += 8) _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
    for (; i < n; ++i) dst[i] = src[i];
}

// Where every row is 16-byte aligned: 16 pixels at a time, each channel's 64 bytes written at
// once with non-temporal stores, which need no cache line (the 4 KiB aliasing of the rows does
// not matter to them) and fill a write-combining buffer whole. Returns the pixels done.
NVDLA_SIMD uint32_t unpack_line_nchw_streaming(const uint8_t* line, uint32_t valid, uint32_t width,
                                               float* const* rows) {
    uint32_t w = 0;
    for (; w + 16 <= width; w += 16) {
        __m128i v[2][kLanes];
        for (uint32_t half = 0; half < 2; ++half) {
            for (uint32_t i = 0; i < 8; ++i) {
                const auto* atom = reinterpret_cast<const __m128i*>(line + (w + 8 * half + i) * 32);
                v[half][i] = _mm_loadu_si128(atom);
                v[half][8 + i] = _mm_loadu_si128(atom + 1);
            }
            transpose8x8_epi16(v[half]);
            transpose8x8_epi16(v[half] + 8);
        }
        for (uint32_t j = 0; j < valid; ++j) {
            const __m256 a = _mm256_cvtph_ps(v[0][j]), b = _mm256_cvtph_ps(v[1][j]);
            float* dst = rows[j] + w;
            _mm_stream_ps(dst, _mm256_castps256_ps128(a));
            _mm_stream_ps(dst + 4, _mm256_extractf128_ps(a, 1));
            _mm_stream_ps(dst + 8, _mm256_castps256_ps128(b));
            _mm_stream_ps(dst + 12, _mm256_extractf128_ps(b, 1));
        }
    }
    return w;
}

// The same 4 KiB aliasing: 16 rows written side by side would fight over the same L1 sets, so
// the line is transposed into a line-sized scratch buffer first, then each channel's row goes
// out in one sequential run.
NVDLA_SIMD void unpack_line_nchw(const uint8_t* line, uint32_t valid, uint32_t width,
                                 float* const* rows, float* scratch) {
    bool aligned = true;
    for (uint32_t j = 0; j < valid; ++j)
        aligned &= (reinterpret_cast<uintptr_t>(rows[j]) & 15) == 0;
    if (aligned) {
        const uint32_t done = unpack_line_nchw_streaming(line, valid, width, rows);
        for (uint32_t w = done; w < width; ++w) {
            uint16_t atom[kLanes];
            std::memcpy(atom, line + w * 32, sizeof atom);
            for (uint32_t j = 0; j < valid; ++j) rows[j][w] = fp16::to_float(atom[j]);
        }
        return;
    }
    uint32_t w = 0;
    for (; w + 8 <= width; w += 8) {
        __m128i v[kLanes];
        for (uint32_t i = 0; i < 8; ++i) {
            const auto* atom = reinterpret_cast<const __m128i*>(line + (w + i) * 32);
            v[i] = _mm_loadu_si128(atom);
            v[8 + i] = _mm_loadu_si128(atom + 1);
        }
        transpose8x8_epi16(v);
        transpose8x8_epi16(v + 8);
        for (uint32_t j = 0; j < valid; ++j)
            _mm256_storeu_ps(scratch + j * width + w, _mm256_cvtph_ps(v[j]));
    }
    for (; w < width; ++w) {
        uint16_t atom[kLanes];
        std::memcpy(atom, line + w * 32, sizeof atom);
        for (uint32_t j = 0; j < valid; ++j) scratch[j * width + w] = fp16::to_float(atom[j]);
    }
    for (uint32_t j = 0; j < valid; ++j) stream_copy(rows[j], scratch + j * width, width);
}

// One atom from NHWC: `valid` consecutive floats, zero padded.
NVDLA_SIMD inline void pack_atom_nhwc(const float* px, uint32_t valid, uint8_t* atom) {
    if (valid == kLanes) {
        const __m128i lo = _mm256_cvtps_ph(_mm256_loadu_ps(px), _MM_FROUND_TO_NEAREST_INT);
        const __m128i hi = _mm256_cvtps_ph(_mm256_loadu_ps(px + 8), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(atom), lo);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(atom) + 1, hi);
        return;
    }
    uint16_t halves[kLanes] = {};
    for (uint32_t j = 0; j < valid; ++j) halves[j] = fp16::from_float(px[j]);
    std::memcpy(atom, halves, sizeof halves);
}

NVDLA_SIMD inline void unpack_atom_nhwc(const uint8_t* atom, uint32_t valid, float* px) {
    if (valid == kLanes) {
        const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(atom));
        const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(atom) + 1);
        _mm256_storeu_ps(px, _mm256_cvtph_ps(lo));
        _mm256_storeu_ps(px + 8, _mm256_cvtph_ps(hi));
        return;
    }
    uint16_t halves[kLanes];
    std::memcpy(halves, atom, sizeof halves);
    for (uint32_t j = 0; j < valid; ++j) px[j] = fp16::to_float(halves[j]);
}

bool applies(const FeatureCube& cube) {
    return cpu_has_avx2() && cube.precision == Precision::Fp16 &&
           cube.channels_per_surface() == kLanes;
}

#endif  // __x86_64__

}  // namespace

#if defined(__x86_64__)

bool pack_fp32_to_fp16(const float* src, HostLayout layout, const FeatureCube& cube, uint8_t* dst) {
    if (!applies(cube)) return false;
    const uint64_t plane = uint64_t(cube.height) * cube.width;
    for (uint32_t n = 0; n < cube.batches; ++n) {
        const float* batch = src + uint64_t(n) * cube.channels * plane;
        for (uint32_t s = 0; s < cube.surfaces(); ++s) {
            const uint32_t c0 = s * kLanes, valid = std::min(kLanes, cube.channels - c0);
            for (uint32_t h = 0; h < cube.height; ++h) {
                uint8_t* line = dst + cube.offset(n, c0, h, 0);
                if (layout == HostLayout::NCHW) {
                    const float* rows[kLanes];
                    for (uint32_t j = 0; j < valid; ++j)
                        rows[j] = batch + (c0 + j) * plane + uint64_t(h) * cube.width;
                    pack_line_nchw(rows, valid, cube.width, line);
                } else {
                    const float* px = batch + uint64_t(h) * cube.width * cube.channels + c0;
                    for (uint32_t w = 0; w < cube.width; ++w, px += cube.channels)
                        pack_atom_nhwc(px, valid, line + w * 32);
                }
            }
        }
    }
    return true;
}

bool unpack_fp16_to_fp32(const uint8_t* src, const FeatureCube& cube, float* dst,
                         HostLayout layout) {
    if (!applies(cube)) return false;
    const uint64_t plane = uint64_t(cube.height) * cube.width;
    std::vector<float> scratch(layout == HostLayout::NCHW ? size_t(kLanes) * cube.width : 0);
    for (uint32_t n = 0; n < cube.batches; ++n) {
        float* batch = dst + uint64_t(n) * cube.channels * plane;
        for (uint32_t s = 0; s < cube.surfaces(); ++s) {
            const uint32_t c0 = s * kLanes, valid = std::min(kLanes, cube.channels - c0);
            for (uint32_t h = 0; h < cube.height; ++h) {
                const uint8_t* line = src + cube.offset(n, c0, h, 0);
                if (layout == HostLayout::NCHW) {
                    float* rows[kLanes];
                    for (uint32_t j = 0; j < valid; ++j)
                        rows[j] = batch + (c0 + j) * plane + uint64_t(h) * cube.width;
                    unpack_line_nchw(line, valid, cube.width, rows, scratch.data());
                } else {
                    float* px = batch + uint64_t(h) * cube.width * cube.channels + c0;
                    for (uint32_t w = 0; w < cube.width; ++w, px += cube.channels)
                        unpack_atom_nhwc(line + w * 32, valid, px);
                }
            }
        }
    }
    if (layout == HostLayout::NCHW) _mm_sfence();  // the streaming stores, before the caller reads
    return true;
}

#else

bool pack_fp32_to_fp16(const float*, HostLayout, const FeatureCube&, uint8_t*) {
    return false;
}
bool unpack_fp16_to_fp32(const uint8_t*, const FeatureCube&, float*, HostLayout) {
    return false;
}

#endif

}  // namespace nvdla::detail
