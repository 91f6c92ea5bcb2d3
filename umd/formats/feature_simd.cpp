// Feature cubes <-> host tensors with vector instructions (AVX2, or AVX-512 where it helps).
//
// NCHW is a transpose: an atom holds one pixel of k channel rows, and the rows of one plane are
// often a multiple of 4 KiB apart (224 x 224 floats are), so k rows read or written side by side
// fight for the same L1 sets and are more streams than the prefetchers follow. Whole surfaces
// (all k channels valid) of float32 <-> fp16, float32 -> int8 and int8 copies read or write the
// rows side by side anyway, a whole cache line or two passes of 16 rows at a time (the sections
// below say why); the rest cuts the plane into tiles of a few hundred pixels: each channel's run
// of the tile is converted sequentially into a small buffer (8 or 16 KiB, it stays in L1) and
// the buffer is transposed into atoms, or the reverse. Outputs larger than the caches are
// written with non-temporal stores.
// NHWC converts each atom's run of channels directly.
//
// The conversions give element.cpp's bits: F16C rounds like fp16::from_float and widens like
// fp16::to_float; integers are scaled, rounded and clamped as to_integer does in double (in
// float lanes, one FMA giving the exact product's side of the rounding point, see
// scaled_int32_avx2).
#include "formats/feature_simd.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/avx2_transpose.hpp"
#include "emu/isa.hpp"
#include "formats/element.hpp"
#include "nvdla/precision/fp16.hpp"
#include "precision/cpu.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nvdla::detail {

#if defined(__x86_64__)
namespace {

#define NVDLA_AVX2 __attribute__((target("avx2,fma,f16c")))
#define NVDLA_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")))

using emu::IsaLevel;

// Bytes of the tile buffer (k rows of `tile` surface elements, as many bytes as `tile` atoms):
// measured best (docs/emu/performance.md) at 8 KiB for packing, whose next tile's host runs
// are prefetched into L1 meanwhile, and 16 KiB for unpacking, whose host runs are streamed out.
constexpr uint32_t kPackTileBytes = 8192;
constexpr uint32_t kUnpackTileBytes = 16384;
// Host bytes of one pack tile at most (all k runs, prefetched a tile ahead into L1).
constexpr uint32_t kPackHostBytes = 16384;
// Outputs at least this large are written with non-temporal stores: they do not stay in the
// caches anyway, and such stores do not read the lines they fill.
constexpr uint64_t kStreamBytes = uint64_t(4) << 20;

#define NVDLA_AVX2_INLINE __attribute__((target("avx2,fma,f16c"), always_inline)) inline
#define NVDLA_AVX512_INLINE                                                    \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c"), \
                   always_inline)) inline

// GCC's unmasked forms of some AVX-512 intrinsics pass an undefined vector through, which
// -Wmaybe-uninitialized reports; the maskz forms with every lane set do not.
constexpr __mmask8 kAll8 = 0xff;
constexpr __mmask16 kAll16 = 0xffff;

// ---- Row conversions ----
// Pack: n host elements -> n surface elements. Unpack: n surface elements -> n host elements,
// with non-temporal stores where `stream` and the destination is aligned.
using PackRowFn = void (*)(const void* in, void* out, uint32_t n, double scale);
using UnpackRowFn = void (*)(const void* in, void* out, uint32_t n, bool stream);

// The scalar tails convert through element.cpp, whose bits the vector forms reproduce.
ConvertOptions fp16_options(bool saturate) {
    ConvertOptions o;
    o.saturate_fp16 = saturate;
    return o;
}

// Infinities to the largest finite value of their sign: one less in the bits (0x7c00 ->
// 0x7bff), three integer operations that issue on every vector pipe.
NVDLA_AVX2_INLINE __m128i saturated_avx2(__m128i h) {
    const __m128i inf = _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7fff)),
                                        _mm_set1_epi16(0x7c00));  // all ones: minus one
    return _mm_add_epi16(h, inf);
}

template <bool Saturate>
NVDLA_AVX2 void fp32_to_fp16_avx2(const void* in, void* out, uint32_t n, double) {
    const auto* s = static_cast<const float*>(in);
    auto* d = static_cast<uint16_t*>(out);
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT);
        if constexpr (Saturate) h = saturated_avx2(h);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h);
    }
    const ConvertOptions tail = fp16_options(Saturate);
    for (; i < n; ++i) store_surface(Precision::Fp16, load_element(s + i), d + i, tail);
}

template <bool Saturate>
NVDLA_AVX512 void fp32_to_fp16_avx512(const void* in, void* out, uint32_t n, double scale) {
    const auto* s = static_cast<const float*>(in);
    auto* d = static_cast<uint16_t*>(out);
    uint32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i h =
            _mm512_maskz_cvtps_ph(kAll16, _mm512_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT);
        if constexpr (Saturate) {
            const __m256i inf = _mm256_cmpeq_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)),
                                                   _mm256_set1_epi16(0x7c00));
            h = _mm256_add_epi16(h, inf);
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), h);
    }
    fp32_to_fp16_avx2<Saturate>(s + i, d + i, n - i, scale);
}

NVDLA_AVX2 void saturate_fp16_avx2(const void* in, void* out, uint32_t n, double) {
    const auto* s = static_cast<const uint16_t*>(in);
    auto* d = static_cast<uint16_t*>(out);
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), saturated_avx2(h));
    }
    const ConvertOptions tail = fp16_options(true);
    for (; i < n; ++i) store_element(d + i, saturate_fp16_bits(load_element(s + i), tail));
}

template <uint32_t Bytes>
void copy_row(const void* in, void* out, uint32_t n, double) {
    std::memcpy(out, in, size_t(n) * Bytes);
}

// round(v * scale) half away from zero, NaN as 0, for 8 floats, as element.cpp's double
// arithmetic gives it; magnitudes past 2^30 are left for the caller's saturating packs. With p
// the float product and t = trunc(p), the result is t or t +- 1: it is t +- 1 where the exact
// product is at least |t| + 1/2 away from zero, and the sign of v * scale - (t +- 1/2), from one
// FMA, is exact (t +- 1/2 is a float wherever it matters, below 2^23). Where p rounded up to
// an integer t past the exact product, that sign says t too.
NVDLA_AVX2_INLINE __m256i scaled_int32_avx2(__m256 v, __m256 scale) {
    const __m256 sign_bit = _mm256_set1_ps(-0.0f);
    const __m256 p = _mm256_mul_ps(v, scale);
    const __m256 t = _mm256_round_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 sign = _mm256_and_ps(p, sign_bit);
    const __m256 beyond =
        _mm256_fmsub_ps(v, scale, _mm256_add_ps(t, _mm256_or_ps(sign, _mm256_set1_ps(0.5f))));
    const __m256 away = _mm256_cmp_ps(_mm256_xor_ps(beyond, sign), _mm256_setzero_ps(), _CMP_GE_OQ);
    __m256 r = _mm256_add_ps(t, _mm256_and_ps(away, _mm256_or_ps(sign, _mm256_set1_ps(1.0f))));
    r = _mm256_min_ps(r, _mm256_set1_ps(1073741824.0f));  // above: INT32_MIN, saturating low
    r = _mm256_and_ps(r, _mm256_cmp_ps(p, p, _CMP_ORD_Q));
    return _mm256_cvttps_epi32(r);
}

// Where the float product p is not a half-integer (nor NaN nor infinite), the exact product
// lies on p's side of every rounding point, so p rounded to nearest is the answer: a few
// operations, and the exact form only for the rare 32 values that hold a tie. Any integer r
// with |p - r| < 0.5 (0x3f000000) is p rounded to nearest, whatever MXCSR's rounding mode gave
// it; |p - r| is exact, 0.5 for a tie, and more for NaN, infinities and products outside the
// int32 range (converted to INT32_MIN). The running unsigned maximum of its bits tells whether
// a block needs the exact form. (Rounding with vroundps and converting with vcvttps2dq took
// twice as long per vector on AMD Zen 5.)
NVDLA_AVX2_INLINE __m256i rounded_unless_tie_avx2(__m256 p, __m256i* worst) {
    const __m256i ints = _mm256_cvtps_epi32(p);
    const __m256 distance = _mm256_sub_ps(p, _mm256_cvtepi32_ps(ints));
    *worst = _mm256_max_epu32(
        *worst, _mm256_and_si256(_mm256_castps_si256(distance), _mm256_set1_epi32(0x7fffffff)));
    return ints;
}

// Whether a block's `worst` from rounded_unless_tie_avx2 needs the exact form.
NVDLA_AVX2_INLINE bool needs_exact_avx2(__m256i worst) {
    const __m256i half = _mm256_set1_epi32(0x3f000000);
    const __m256i at_least_half = _mm256_cmpeq_epi32(_mm256_min_epu32(worst, half), half);
    return !_mm256_testz_si256(at_least_half, at_least_half);
}

template <class T>
NVDLA_AVX2 void fp32_to_int_avx2(const void* in, void* out, uint32_t n, double scale) {
    const auto* s = static_cast<const float*>(in);
    auto* d = static_cast<T*>(out);
    const __m256 k = _mm256_set1_ps(float(scale));  // scale is a float widened
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32) {  // the packs saturate and interleave 128-bit lanes
        __m256i r[4];
        __m256i worst = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j)
            r[j] =
                rounded_unless_tie_avx2(_mm256_mul_ps(_mm256_loadu_ps(s + i + 8 * j), k), &worst);
        if (needs_exact_avx2(worst)) {
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) r[j] = scaled_int32_avx2(_mm256_loadu_ps(s + i + 8 * j), k);
        }
        const __m256i w01 = _mm256_packs_epi32(r[0], r[1]), w23 = _mm256_packs_epi32(r[2], r[3]);
        if constexpr (sizeof(T) == 1) {
            const __m256i bytes = _mm256_packs_epi16(w01, w23);
            _mm256_storeu_si256(
                reinterpret_cast<__m256i*>(d + i),
                _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
        } else {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i),
                                _mm256_permute4x64_epi64(w01, 0xd8));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i + 16),
                                _mm256_permute4x64_epi64(w23, 0xd8));
        }
    }
    for (; i + 8 <= n; i += 8) {
        const __m256i ints = scaled_int32_avx2(_mm256_loadu_ps(s + i), k);
        const __m128i words =
            _mm_packs_epi32(_mm256_castsi256_si128(ints), _mm256_extracti128_si256(ints, 1));
        if constexpr (sizeof(T) == 1)
            _mm_storel_epi64(reinterpret_cast<__m128i*>(d + i), _mm_packs_epi16(words, words));
        else
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), words);
    }
    constexpr Precision precision = sizeof(T) == 1 ? Precision::Int8 : Precision::Int16;
    for (; i < n; ++i)
        store_surface(precision, double(load_element(s + i)) * scale, d + i, ConvertOptions{});
}

// The same for 16 floats; NaN lanes come out 0 from the masked conversion.
NVDLA_AVX512_INLINE __m512i scaled_int32_avx512(__m512 v, __m512 scale) {
    const __m512 sign_bit = _mm512_set1_ps(-0.0f);
    const __m512 p = _mm512_mul_ps(v, scale);
    const __m512 t = _mm512_maskz_roundscale_ps(kAll16, p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m512 sign = _mm512_and_ps(p, sign_bit);
    const __m512 beyond =
        _mm512_fmsub_ps(v, scale, _mm512_add_ps(t, _mm512_or_ps(sign, _mm512_set1_ps(0.5f))));
    const __mmask16 away =
        _mm512_cmp_ps_mask(_mm512_xor_ps(beyond, sign), _mm512_setzero_ps(), _CMP_GE_OQ);
    __m512 r = _mm512_mask_add_ps(t, away, t, _mm512_or_ps(sign, _mm512_set1_ps(1.0f)));
    r = _mm512_maskz_min_ps(kAll16, r, _mm512_set1_ps(1073741824.0f));
    return _mm512_maskz_cvttps_epi32(_mm512_cmp_ps_mask(p, p, _CMP_ORD_Q), r);
}

template <class T>
NVDLA_AVX512 void fp32_to_int_avx512(const void* in, void* out, uint32_t n, double scale) {
    const auto* s = static_cast<const float*>(in);
    auto* d = static_cast<T*>(out);
    const __m512 k = _mm512_set1_ps(float(scale));
    uint32_t i = 0;
    for (; i + 16 <= n; i += 16) {  // as fp32_to_int_avx2
        const __m512 v = _mm512_loadu_ps(s + i);
        const __m512 p = _mm512_mul_ps(v, k);
        const __m512 rounded =
            _mm512_maskz_roundscale_ps(kAll16, p, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m512 distance = _mm512_andnot_ps(_mm512_set1_ps(-0.0f), _mm512_sub_ps(p, rounded));
        const __m512i ints =
            _mm512_cmp_ps_mask(distance, _mm512_set1_ps(0.5f), _CMP_NLT_UQ)
                ? scaled_int32_avx512(v, k)
                : _mm512_maskz_cvttps_epi32(
                      kAll16, _mm512_maskz_min_ps(kAll16, rounded, _mm512_set1_ps(1073741824.0f)));
        if constexpr (sizeof(T) == 1)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                             _mm512_maskz_cvtsepi32_epi8(kAll16, ints));
        else
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i),
                                _mm512_maskz_cvtsepi32_epi16(kAll16, ints));
    }
    fp32_to_int_avx2<T>(s + i, d + i, n - i, scale);
}

NVDLA_AVX512 void fp16_to_fp32_avx512(const void* in, void* out, uint32_t n, bool stream) {
    const auto* s = static_cast<const uint16_t*>(in);
    auto* d = static_cast<float*>(out);
    uint32_t i = 0;
    if (stream)
        for (; i < n && (reinterpret_cast<uintptr_t>(d + i) & 63) != 0; ++i)
            store_element(d + i, fp16::to_float(load_element(s + i)));
    for (; i + 16 <= n; i += 16) {
        const __m512 f = _mm512_maskz_cvtph_ps(
            kAll16, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
        if (stream)
            _mm512_stream_ps(d + i, f);
        else
            _mm512_storeu_ps(d + i, f);
    }
    for (; i < n; ++i) store_element(d + i, fp16::to_float(load_element(s + i)));
}

NVDLA_AVX2 void fp16_to_fp32_avx2(const void* in, void* out, uint32_t n, bool stream) {
    const auto* s = static_cast<const uint16_t*>(in);
    auto* d = static_cast<float*>(out);
    uint32_t i = 0;
    if (stream)
        for (; i < n && (reinterpret_cast<uintptr_t>(d + i) & 31) != 0; ++i)
            store_element(d + i, fp16::to_float(load_element(s + i)));
    for (; i + 8 <= n; i += 8) {
        const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
        if (stream)
            _mm256_stream_ps(d + i, f);
        else
            _mm256_storeu_ps(d + i, f);
    }
    for (; i < n; ++i) store_element(d + i, fp16::to_float(load_element(s + i)));
}

template <uint32_t Bytes>
NVDLA_AVX2 void copy_row_streaming(const void* in, void* out, uint32_t n, bool stream) {
    const auto* s = static_cast<const uint8_t*>(in);
    auto* d = static_cast<uint8_t*>(out);
    const size_t bytes = size_t(n) * Bytes;
    size_t i = 0;
    if (stream) {
        const size_t head =
            std::min<size_t>(bytes, (32 - reinterpret_cast<uintptr_t>(d) % 32) % 32);
        std::memcpy(d, s, head);
        for (i = head; i + 32 <= bytes; i += 32)
            _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i),
                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
    }
    std::memcpy(d + i, s + i, bytes - i);
}

// ---- Transposes between the tile buffer (k rows `pitch` bytes apart) and `count` atoms ----

struct AtomShape {
    uint32_t lanes;          // k: elements per atom
    uint32_t element_bytes;  // 1 or 2
};
using ToAtomsFn = void (*)(const uint8_t* rows, uint32_t pitch, uint32_t count, uint8_t* atoms,
                           bool stream, AtomShape shape);
using FromAtomsFn = void (*)(const uint8_t* atoms, uint32_t count, uint8_t* rows, uint32_t pitch,
                             AtomShape shape);

// Element copies of a constant size (a memcpy call per element was most of the time of a
// narrow cube, whose rows end in a scalar tail).
template <uint32_t E>
void to_atoms_lanes(const uint8_t* rows, uint32_t pitch, uint32_t count, uint8_t* atoms,
                    uint32_t lanes) {
    for (uint32_t p = 0; p < count; ++p)
        for (uint32_t j = 0; j < lanes; ++j)
            std::memcpy(atoms + (p * lanes + j) * E, rows + j * pitch + p * E, E);
}

template <uint32_t E>
void from_atoms_lanes(const uint8_t* atoms, uint32_t count, uint8_t* rows, uint32_t pitch,
                      uint32_t lanes) {
    for (uint32_t p = 0; p < count; ++p)
        for (uint32_t j = 0; j < lanes; ++j)
            std::memcpy(rows + j * pitch + p * E, atoms + (p * lanes + j) * E, E);
}

void to_atoms_scalar(const uint8_t* rows, uint32_t pitch, uint32_t count, uint8_t* atoms, bool,
                     AtomShape shape) {
    if (shape.element_bytes == 1)
        to_atoms_lanes<1>(rows, pitch, count, atoms, shape.lanes);
    else
        to_atoms_lanes<2>(rows, pitch, count, atoms, shape.lanes);
}

void from_atoms_scalar(const uint8_t* atoms, uint32_t count, uint8_t* rows, uint32_t pitch,
                       AtomShape shape) {
    if (shape.element_bytes == 1)
        from_atoms_lanes<1>(atoms, count, rows, pitch, shape.lanes);
    else
        from_atoms_lanes<2>(atoms, count, rows, pitch, shape.lanes);
}

// transpose16x16_epi8: the in-place transpose of the two 128-bit lanes of 16 registers at once
// (16x16 bytes; lane 0 of the inputs forms lane 0 of the outputs), as simd::transpose8x8_epi16
// does 8x8 16-bit elements.
// Four stages of in-lane unpacks (bytes, words, dwords, qwords), 16 registers each: on AMD
// Zen 5 every unpack width issues on all four vector pipes, where shifts, byte shuffles and
// lane inserts issue on two (so the dword stage is unpacks, not shifts and blends).
NVDLA_AVX2_INLINE void transpose16x16_epi8(__m256i* r) {
    __m256i a[16];
#pragma GCC unroll 16
    for (int i = 0; i < 8; ++i) {  // a[2i + h]: byte pairs of rows 2i, 2i+1, columns 8h..8h+7
        a[2 * i] = _mm256_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm256_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
    }
#pragma GCC unroll 16
    for (int m = 0; m < 4; ++m) {  // r[4m + q]: rows 4m..4m+3 of columns 4q..4q+3
        r[4 * m] = _mm256_unpacklo_epi16(a[4 * m], a[4 * m + 2]);
        r[4 * m + 1] = _mm256_unpackhi_epi16(a[4 * m], a[4 * m + 2]);
        r[4 * m + 2] = _mm256_unpacklo_epi16(a[4 * m + 1], a[4 * m + 3]);
        r[4 * m + 3] = _mm256_unpackhi_epi16(a[4 * m + 1], a[4 * m + 3]);
    }
#pragma GCC unroll 16
    for (int p = 0; p < 2; ++p)  // a[8p + 2q + t]: rows 8p..8p+7 of columns 4q+2t, 4q+2t+1
#pragma GCC unroll 16
        for (int q = 0; q < 4; ++q) {
            a[8 * p + 2 * q] = _mm256_unpacklo_epi32(r[8 * p + q], r[8 * p + 4 + q]);
            a[8 * p + 2 * q + 1] = _mm256_unpackhi_epi32(r[8 * p + q], r[8 * p + 4 + q]);
        }
#pragma GCC unroll 16
    for (int s = 0; s < 8; ++s) {  // column 2s and 2s + 1, rows 0..15
        r[2 * s] = _mm256_unpacklo_epi64(a[s], a[8 + s]);
        r[2 * s + 1] = _mm256_unpackhi_epi64(a[s], a[8 + s]);
    }
}

NVDLA_AVX2_INLINE __m128i load128(const uint8_t* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
NVDLA_AVX2_INLINE __m256i load256(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
// 16 bytes at lo in lane 0, 16 at hi in lane 1.
NVDLA_AVX2_INLINE __m256i load_lanes(const uint8_t* lo, const uint8_t* hi) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(load128(lo)), load128(hi), 1);
}
NVDLA_AVX2_INLINE void store_lanes(__m256i v, uint8_t* lo, uint8_t* hi) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(lo), _mm256_castsi256_si128(v));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(hi), _mm256_extracti128_si256(v, 1));
}
// How atoms are stored: non-temporal where asked for and as aligned as the atoms allow (large
// buffers from malloc start 16 bytes into a page).
enum class AtomStore { Cached, Stream16, Stream32 };

AtomStore atom_store(const uint8_t* atoms, bool stream) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(atoms);
    if (!stream || address % 16 != 0) return AtomStore::Cached;
    return address % 32 == 0 ? AtomStore::Stream32 : AtomStore::Stream16;
}

NVDLA_AVX2_INLINE void store_atom(uint8_t* p, __m256i v, AtomStore how) {
    if (how == AtomStore::Stream32) {
        _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v);
    } else if (how == AtomStore::Stream16) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(v));
        _mm_stream_si128(reinterpret_cast<__m128i*>(p + 16), _mm256_extracti128_si256(v, 1));
    } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
    }
}

// 32-byte atoms of 16 lanes of 16 bits (fp16, int16: 8 pixels at a time, lane 0 carries
// channels 0..7, lane 1 channels 8..15) or 32 lanes of 8 bits (int8: 16 pixels at a time, lane 0
// channels 0..15, lane 1 channels 16..31), so each transposed register is one whole atom.
template <uint32_t Bytes>
NVDLA_AVX2_INLINE void transpose_atoms(__m256i* v) {
    if constexpr (Bytes == 2)
        simd::transpose8x8_epi16(v);
    else
        transpose16x16_epi8(v);
}

template <uint32_t Bytes>
NVDLA_AVX2 void to_atoms_32byte(const uint8_t* rows, uint32_t pitch, uint32_t count, uint8_t* atoms,
                                bool stream, AtomShape shape) {
    constexpr uint32_t block = 16 / Bytes;
    const AtomStore how = atom_store(atoms, stream);
    uint32_t p = 0;
    for (; p + block <= count; p += block) {
        __m256i v[block];
#pragma GCC unroll 16
        for (uint32_t j = 0; j < block; ++j)
            v[j] = load_lanes(rows + j * pitch + p * Bytes, rows + (block + j) * pitch + p * Bytes);
        transpose_atoms<Bytes>(v);
#pragma GCC unroll 16
        for (uint32_t i = 0; i < block; ++i) store_atom(atoms + (p + i) * 32, v[i], how);
    }
    to_atoms_scalar(rows + p * Bytes, pitch, count - p, atoms + p * 32, false, shape);
}

template <uint32_t Bytes>
NVDLA_AVX2 void from_atoms_32byte(const uint8_t* atoms, uint32_t count, uint8_t* rows,
                                  uint32_t pitch, AtomShape shape) {
    constexpr uint32_t block = 16 / Bytes;
    uint32_t p = 0;
    for (; p + block <= count; p += block) {
        __m256i v[block];
#pragma GCC unroll 16
        for (uint32_t i = 0; i < block; ++i) v[i] = load256(atoms + (p + i) * 32);
        transpose_atoms<Bytes>(v);
#pragma GCC unroll 16
        for (uint32_t j = 0; j < block; ++j)
            store_lanes(v[j], rows + j * pitch + p * Bytes, rows + (block + j) * pitch + p * Bytes);
    }
    from_atoms_scalar(atoms + p * 32, count - p, rows + p * Bytes, pitch, shape);
}

// 8 lanes of 8 bits (int8 on nv_small's 8-byte atoms), 32 pixels at a time: lane 0 carries
// pixels 0..15, lane 1 pixels 16..31; rows 8..15 of each 16x16 block are zero.
NVDLA_AVX2 void to_atoms_8x8bit(const uint8_t* rows, uint32_t pitch, uint32_t count, uint8_t* atoms,
                                bool, AtomShape shape) {
    uint32_t p = 0;
    for (; p + 32 <= count; p += 32) {
        __m256i v[16];
#pragma GCC unroll 16
        for (uint32_t j = 0; j < 8; ++j) {
            v[j] = load256(rows + j * pitch + p);
            v[8 + j] = _mm256_setzero_si256();
        }
        transpose16x16_epi8(v);
#pragma GCC unroll 16
        for (uint32_t i = 0; i < 16; ++i) {
            _mm_storel_epi64(reinterpret_cast<__m128i*>(atoms + (p + i) * 8),
                             _mm256_castsi256_si128(v[i]));
            _mm_storel_epi64(reinterpret_cast<__m128i*>(atoms + (p + 16 + i) * 8),
                             _mm256_extracti128_si256(v[i], 1));
        }
    }
    to_atoms_scalar(rows + p, pitch, count - p, atoms + p * 8, false, shape);
}

NVDLA_AVX2 void from_atoms_8x8bit(const uint8_t* atoms, uint32_t count, uint8_t* rows,
                                  uint32_t pitch, AtomShape shape) {
    uint32_t p = 0;
    for (; p + 32 <= count; p += 32) {
        __m256i v[16];
#pragma GCC unroll 16
        for (uint32_t i = 0; i < 16; ++i) {
            const auto* lo = reinterpret_cast<const __m128i*>(atoms + (p + i) * 8);
            const auto* hi = reinterpret_cast<const __m128i*>(atoms + (p + 16 + i) * 8);
            v[i] = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadl_epi64(lo)),
                                           _mm_loadl_epi64(hi), 1);
        }
        transpose16x16_epi8(v);
#pragma GCC unroll 16
        for (uint32_t j = 0; j < 8; ++j)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(rows + j * pitch + p), v[j]);
    }
    from_atoms_scalar(atoms + p * 8, count - p, rows + p, pitch, shape);
}

// ---- int8 rows straight to and from 32-byte atoms ----
// A copy has no conversion pass to fill the tile buffer with, and the buffer's extra load and
// store of every byte cost more than reading (or writing) the 32 rows side by side, 16 bytes of
// each per block of 16 atoms.
using RowsToAtomsFn = void (*)(const uint8_t* rows, uint64_t pitch, uint32_t count, uint8_t* atoms,
                               bool stream, double scale);
using AtomsToRowsFn = void (*)(const uint8_t* atoms, uint32_t count, uint8_t* rows, uint64_t pitch,
                               bool stream);

// Unpacking reads the atoms in order, yet the hardware prefetchers seemed to fall behind while
// the 32 rows were written (0.52-0.65 of memcpy without, 0.58-0.72 with, side by side on the
// loaded machine): the block two ahead is asked for.
void prefetch_atoms_ahead(const uint8_t* block, uint32_t atoms_left) {
    constexpr uint32_t kAhead = 2048, kBlock = 32 * 32;
    if (atoms_left * 32 < kAhead + kBlock) return;
    for (uint32_t line = 0; line < kBlock; line += 64)
        _mm_prefetch(reinterpret_cast<const char*>(block + kAhead + line), _MM_HINT_T0);
}

void int8_rows_to_atoms_tail(const uint8_t* rows, uint64_t pitch, uint32_t count, uint8_t* atoms) {
    for (uint32_t p = 0; p < count; ++p)
        for (uint32_t j = 0; j < 32; ++j) atoms[p * 32 + j] = rows[j * pitch + p];
}

void int8_atoms_to_rows_tail(const uint8_t* atoms, uint32_t count, uint8_t* rows, uint64_t pitch) {
    for (uint32_t p = 0; p < count; ++p)
        for (uint32_t j = 0; j < 32; ++j) rows[j * pitch + p] = atoms[p * 32 + j];
}

// Row j of 32 rows `pitch` apart, as one base register of its group of 8 plus a scaled index
// register: GCC otherwise computed most of the 32 addresses with separate instructions per block
// (half of the loop's instructions).
struct RowGroups {
    uint64_t p1, p3, p5, p7;  // 1, 3, 5 and 7 pitches

    explicit RowGroups(uint64_t pitch) : p1(pitch), p3(3 * pitch), p5(5 * pitch), p7(7 * pitch) {}
    template <class T>
    NVDLA_AVX2_INLINE T* at(T* group, uint32_t m) const {
        switch (m) {
            case 0: return group;
            case 1: return group + p1;
            case 2: return group + 2 * p1;
            case 3: return group + p3;
            case 4: return group + 4 * p1;
            case 5: return group + p5;
            case 6: return group + 2 * p3;
            default: return group + p7;
        }
    }
};

// The hardware prefetchers apparently do not follow 32 row streams into L1: each block asks for
// the next line of 8 of the rows, so that every row's next line is asked for once per 4 blocks
// (64 bytes) before it is needed (AVX2, the kernel alone: 0.70-0.74 -> 0.80-0.84 of memcpy;
// farther ahead, 1 KiB, or into L2 only: 0.56-0.67).
constexpr uint32_t kRowPrefetchAhead = 64;

NVDLA_AVX2 void int8_rows_to_atoms_avx2(const uint8_t* rows, uint64_t pitch, uint32_t count,
                                        uint8_t* atoms, bool stream, double) {
    const AtomStore how = atom_store(atoms, stream);
    const RowGroups at(pitch);
    const uint8_t* g[4] = {rows, rows + 8 * pitch, rows + 16 * pitch, rows + 24 * pitch};
    const uint64_t group_bytes = 8 * pitch;
    const uint32_t blocks = count / 16;
    uint8_t* out = atoms;
    for (uint32_t b = 0; b < blocks; ++b) {
        const uint8_t* ahead = g[0] + (b % 4) * group_bytes + kRowPrefetchAhead;
#pragma GCC unroll 8
        for (uint32_t j = 0; j < 8; ++j)
            _mm_prefetch(reinterpret_cast<const char*>(at.at(ahead, j)), _MM_HINT_T0);
        __m256i v[16];
#pragma GCC unroll 16
        for (uint32_t j = 0; j < 16; ++j)
            v[j] = load_lanes(at.at(g[j / 8], j % 8), at.at(g[2 + j / 8], j % 8));
        transpose16x16_epi8(v);
#pragma GCC unroll 16
        for (uint32_t i = 0; i < 16; ++i) store_atom(out + i * 32, v[i], how);
        out += 16 * 32;
#pragma GCC unroll 4
        for (auto& group : g) group += 16;
    }
    const uint32_t p = blocks * 16;
    int8_rows_to_atoms_tail(rows + p, pitch, count - p, atoms + uint64_t(p) * 32);
}

// ---- float32 rows straight to fp16 and int8 atoms ----
// Converting each channel's run into the tile buffer first cost 5 to 10 cycles per 8 values even
// with everything in L2 (call, prefetch and buffer traffic per run, a second pass for the
// transpose); these read 16 values (one cache line) of every row of the surface side by side,
// as the int8 copies do, and convert and transpose them in registers. Whole lines, because the
// rows of a plane are often a multiple of 4 KiB apart (224 x 224 floats are): all 16 or 32
// rows then fall into one L1 set, more than its ways, and a half-used line was gone before the
// next block came back for its other half. The second 8 pixels wait in a stack buffer.

// 8 float32 values as fp16.
NVDLA_AVX2_INLINE __m128i fp16_of(const uint8_t* row) {
    return _mm256_cvtps_ph(_mm256_loadu_ps(reinterpret_cast<const float*>(row)),
                           _MM_FROUND_TO_NEAREST_INT);
}

// 16 pixels of 16 rows (fp16 atoms: lane 0 channels 0..7, lane 1 channels 8..15).
template <bool Saturate>
NVDLA_AVX2 void fp32_rows_to_fp16_atoms_avx2(const uint8_t* rows, uint64_t pitch, uint32_t count,
                                             uint8_t* atoms, bool stream, double) {
    const AtomStore how = atom_store(atoms, stream);
    const RowGroups at(pitch);
    const uint8_t* g[2] = {rows, rows + 8 * pitch};
    const uint32_t blocks = count / 16;
    uint8_t* out = atoms;
    for (uint32_t b = 0; b < blocks; ++b) {
        __m256i v[8];
        alignas(32) __m256i later[8];  // pixels 8..15
#pragma GCC unroll 8
        for (uint32_t j = 0; j < 8; ++j) {
            const uint8_t *lo = at.at(g[0], j), *hi = at.at(g[1], j);
            v[j] = _mm256_inserti128_si256(_mm256_castsi128_si256(fp16_of(lo)), fp16_of(hi), 1);
            later[j] = _mm256_inserti128_si256(_mm256_castsi128_si256(fp16_of(lo + 32)),
                                               fp16_of(hi + 32), 1);
        }
#pragma GCC unroll 2
        for (uint32_t p = 0; p < 2; ++p) {
            if (p == 1) std::memcpy(v, later, sizeof v);
#pragma GCC unroll 8
            for (uint32_t j = 0; j < 8; ++j)
                if constexpr (Saturate) {
                    const __m256i inf =
                        _mm256_cmpeq_epi16(_mm256_and_si256(v[j], _mm256_set1_epi16(0x7fff)),
                                           _mm256_set1_epi16(0x7c00));
                    v[j] = _mm256_add_epi16(v[j], inf);
                }
            simd::transpose8x8_epi16(v);
#pragma GCC unroll 8
            for (uint32_t i = 0; i < 8; ++i) store_atom(out + (8 * p + i) * 32, v[i], how);
        }
        out += 16 * 32;
        g[0] += 64;
        g[1] += 64;
    }
    const ConvertOptions opt = fp16_options(Saturate);
    for (uint32_t p = blocks * 16; p < count; ++p)
        for (uint32_t j = 0; j < 16; ++j) {
            float f;
            std::memcpy(&f, rows + j * pitch + uint64_t(p) * 4, 4);
            store_surface(Precision::Fp16, f, atoms + uint64_t(p) * 32 + j * 2, opt);
        }
}

// Rows 4t..4t+3 (of 16) of pixels 0..7 (q[t]) and 8..15 (q[4 + t]) as bytes: lane 0 pixels
// 0..3, lane 1 pixels 4..7 (of the 8), each lane the four rows' 4 bytes in turn (the saturating
// packs' order).
template <bool Exact>
NVDLA_AVX2_INLINE void int8_row_quads_avx2(const RowGroups& at, const uint8_t* const* g, __m256 k,
                                           __m256i* q, __m256i* worst) {
#pragma GCC unroll 4
    for (uint32_t t = 0; t < 4; ++t) {
        __m256i r[8];
#pragma GCC unroll 4
        for (uint32_t u = 0; u < 4; ++u) {
            const uint32_t row = 4 * t + u;
            const auto* f = reinterpret_cast<const float*>(at.at(g[row / 8], row % 8));
            if constexpr (Exact) {
                r[u] = scaled_int32_avx2(_mm256_loadu_ps(f), k);
                r[4 + u] = scaled_int32_avx2(_mm256_loadu_ps(f + 8), k);
            } else {
                r[u] = rounded_unless_tie_avx2(_mm256_mul_ps(_mm256_loadu_ps(f), k), worst);
                r[4 + u] = rounded_unless_tie_avx2(_mm256_mul_ps(_mm256_loadu_ps(f + 8), k), worst);
            }
        }
        q[t] = _mm256_packs_epi16(_mm256_packs_epi32(r[0], r[1]), _mm256_packs_epi32(r[2], r[3]));
        q[4 + t] =
            _mm256_packs_epi16(_mm256_packs_epi32(r[4], r[5]), _mm256_packs_epi32(r[6], r[7]));
    }
}

// The rare blocks holding a tie, NaN or an out-of-range value, out of the hot loop.
NVDLA_AVX2 __attribute__((noinline)) void int8_row_quads_exact_avx2(const RowGroups& at,
                                                                    const uint8_t* const* g,
                                                                    __m256 k, __m256i* q) {
    int8_row_quads_avx2<true>(at, g, k, q, nullptr);
}

// 32 rows side by side were more streams than the hardware prefetchers follow (0.7 of the tile
// path's speed); so a run of pixels is done in two passes of 16 rows, each writing its half of
// the atoms (the run's atoms stay in L1 between them).
constexpr uint32_t kInt8PassPixels = 256;

// 16 pixels of 16 rows into the halves of 16 atoms, scaled and rounded as fp32_to_int_avx2
// does: the packs leave 4 rows x 4 pixels per lane, one byte shuffle per register makes that 4
// pixels x 4 rows, and two stages of dword and qword unpacks gather a pixel's 16 channels per
// lane.
NVDLA_AVX2_INLINE void fp32_rows_to_int8_half_atoms(const RowGroups& at, const uint8_t* const* g,
                                                    __m256 k, uint8_t* out) {
    const __m256i pixels_of_rows =
        _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0, 4, 8, 12, 1, 5, 9,
                         13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m256i q[8];
    __m256i worst = _mm256_setzero_si256();
    int8_row_quads_avx2<false>(at, g, k, q, &worst);
    if (needs_exact_avx2(worst)) int8_row_quads_exact_avx2(at, g, k, q);
#pragma GCC unroll 2
    for (uint32_t set = 0; set < 2; ++set) {  // pixels 0..7, then 8..15
        __m256i a[4];
#pragma GCC unroll 4
        for (uint32_t t = 0; t < 4; ++t) a[t] = _mm256_shuffle_epi8(q[4 * set + t], pixels_of_rows);
        const __m256i t0 = _mm256_unpacklo_epi32(a[0], a[1]),
                      t1 = _mm256_unpackhi_epi32(a[0], a[1]);
        const __m256i t2 = _mm256_unpacklo_epi32(a[2], a[3]),
                      t3 = _mm256_unpackhi_epi32(a[2], a[3]);
        const __m256i pixel[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                                  _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3)};
        uint8_t* o = out + set * 8 * 32;
#pragma GCC unroll 4
        for (uint32_t p = 0; p < 4; ++p)  // pixels p and 4 + p
            store_lanes(pixel[p], o + p * 32, o + (4 + p) * 32);
    }
}

// The int8 cubes of float32 inputs (the builder's int8 network inputs). Cached stores even for
// cubes past kStreamBytes: the two passes write each atom in halves, which non-temporal stores
// would flush as partial lines.
NVDLA_AVX2 void fp32_rows_to_int8_atoms_avx2(const uint8_t* rows, uint64_t pitch, uint32_t count,
                                             uint8_t* atoms, bool, double scale) {
    const RowGroups at(pitch);
    const __m256 k = _mm256_set1_ps(float(scale));  // scale is a float widened
    const uint32_t whole = count / 16 * 16;
    for (uint32_t p0 = 0; p0 < whole; p0 += kInt8PassPixels) {
        const uint32_t end = std::min(whole, p0 + kInt8PassPixels);
#pragma GCC unroll 1
        for (uint32_t half = 0; half < 2; ++half) {
            const uint8_t* first = rows + (16 * half) * pitch + uint64_t(p0) * 4;
            const uint8_t* g[2] = {first, first + 8 * pitch};
            uint8_t* out = atoms + uint64_t(p0) * 32 + 16 * half;
            for (uint32_t p = p0; p < end; p += 16) {
                fp32_rows_to_int8_half_atoms(at, g, k, out);
                out += 16 * 32;
                g[0] += 64;
                g[1] += 64;
            }
        }
    }
    for (uint32_t p = whole; p < count; ++p)
        for (uint32_t j = 0; j < 32; ++j) {
            float f;
            std::memcpy(&f, rows + j * pitch + uint64_t(p) * 4, 4);
            store_surface(Precision::Int8, double(f) * scale, atoms + uint64_t(p) * 32 + j,
                          ConvertOptions{});
        }
}

// 16 bytes at each of a, b, c, d in lanes 0..3.
NVDLA_AVX512_INLINE __m512i load_4_lanes(const uint8_t* a, const uint8_t* b, const uint8_t* c,
                                         const uint8_t* d) {
    __m512i v = _mm512_castsi128_si512(load128(a));
    v = _mm512_mask_broadcast_i32x4(v, 0x00f0, load128(b));
    v = _mm512_mask_broadcast_i32x4(v, 0x0f00, load128(c));
    return _mm512_mask_broadcast_i32x4(v, 0xf000, load128(d));
}

// 16 bytes at p, p + 8 rows, p + 16 rows, p + 24 rows in lanes 0..3.
NVDLA_AVX512_INLINE __m512i load_4_rows(const uint8_t* p, uint64_t pitch) {
    return load_4_lanes(p, p + 8 * pitch, p + 16 * pitch, p + 24 * pitch);
}

// Each 128-bit lane transposes 8 rows x 16 pixels (rows 8L..8L+7 in lane L) in three stages,
// which leaves the 8 bytes of a pixel's rows in a 64-bit word; one permute per register then
// joins the four lanes' words of a pixel into its atom.
NVDLA_AVX512 void int8_rows_to_atoms_avx512(const uint8_t* rows, uint64_t pitch, uint32_t count,
                                            uint8_t* atoms, bool stream, double) {
    const AtomStore how = atom_store(atoms, stream);
    const __m512i words_of_pixels = _mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0);
    uint32_t p = 0;
    for (; p + 16 <= count; p += 16) {
        const uint8_t* ahead = rows + (p / 16 % 4) * 8 * pitch + p + kRowPrefetchAhead;
#pragma GCC unroll 8
        for (uint32_t j = 0; j < 8; ++j)
            _mm_prefetch(reinterpret_cast<const char*>(ahead + j * pitch), _MM_HINT_T0);
        __m512i v[8], a[8];
#pragma GCC unroll 8
        for (uint32_t j = 0; j < 8; ++j) v[j] = load_4_rows(rows + j * pitch + p, pitch);
#pragma GCC unroll 8
        for (int i = 0; i < 4; ++i) {  // a[2i + h]: rows 2i, 2i+1 of pixels 8h..8h+7
            a[2 * i] = _mm512_unpacklo_epi8(v[2 * i], v[2 * i + 1]);
            a[2 * i + 1] = _mm512_unpackhi_epi8(v[2 * i], v[2 * i + 1]);
        }
#pragma GCC unroll 8
        for (int m = 0; m < 2; ++m) {  // v[4m + q]: rows 4m..4m+3 of pixels 4q..4q+3
            v[4 * m] = _mm512_unpacklo_epi16(a[4 * m], a[4 * m + 2]);
            v[4 * m + 1] = _mm512_unpackhi_epi16(a[4 * m], a[4 * m + 2]);
            v[4 * m + 2] = _mm512_unpacklo_epi16(a[4 * m + 1], a[4 * m + 3]);
            v[4 * m + 3] = _mm512_unpackhi_epi16(a[4 * m + 1], a[4 * m + 3]);
        }
#pragma GCC unroll 8
        for (int q = 0; q < 4; ++q) {  // pixels 4q, 4q+1 and 4q+2, 4q+3
            const __m512i lo = _mm512_maskz_permutexvar_epi64(
                kAll8, words_of_pixels, _mm512_maskz_unpacklo_epi32(kAll16, v[q], v[4 + q]));
            const __m512i hi = _mm512_maskz_permutexvar_epi64(
                kAll8, words_of_pixels, _mm512_maskz_unpackhi_epi32(kAll16, v[q], v[4 + q]));
            uint8_t* out = atoms + (p + 4 * q) * 32;
            if (how == AtomStore::Cached) {
                _mm512_storeu_si512(out, lo);
                _mm512_storeu_si512(out + 64, hi);
            } else {
                store_atom(out, _mm512_maskz_extracti64x4_epi64(kAll8, lo, 0), how);
                store_atom(out + 32, _mm512_maskz_extracti64x4_epi64(kAll8, lo, 1), how);
                store_atom(out + 64, _mm512_maskz_extracti64x4_epi64(kAll8, hi, 0), how);
                store_atom(out + 96, _mm512_maskz_extracti64x4_epi64(kAll8, hi, 1), how);
            }
        }
    }
    int8_rows_to_atoms_tail(rows + p, pitch, count - p, atoms + p * 32);
}

// 32 pixels per block, so that every row takes one 32-byte store: registers of channels 0..15
// (then 16..31) of pixels i and 16 + i, transposed into channel rows of 32 pixels.
// Rows of a run of pixels written in two passes of 16 rows (the run's atoms are read twice, from
// L1 the second time): 32 rows written side by side were more streams than the store path
// kept up with. (At the AVX-512 level, int8_atoms_to_rows_avx512 below does the same 64 pixels
// at a time; an earlier AVX-512 form of 32 rows per block with 64-bit permutes was slower.)
constexpr uint32_t kInt8CopyPassPixels = 256;

NVDLA_AVX2 void int8_atoms_to_rows_avx2(const uint8_t* atoms, uint32_t count, uint8_t* rows,
                                        uint64_t pitch, bool stream) {
    // The first pixels alone, so that the rows' 32-byte stores start on a 32-byte boundary (host
    // buffers from malloc start 16 bytes into a page, and a store across two cache lines costs
    // two).
    const uint32_t head =
        std::min<uint32_t>(count, (32 - reinterpret_cast<uintptr_t>(rows) % 32) % 32);
    int8_atoms_to_rows_tail(atoms, head, rows, pitch);
    atoms += uint64_t(head) * 32;
    rows += head;
    count -= head;
    // Non-temporal stores need every row's block aligned.
    stream = stream && pitch % 32 == 0;
    const RowGroups at(pitch);
    const uint32_t whole = count / 32 * 32;
    for (uint32_t p0 = 0; p0 < whole; p0 += kInt8CopyPassPixels) {
        const uint32_t end = std::min(whole, p0 + kInt8CopyPassPixels);
#pragma GCC unroll 1
        for (uint32_t half = 0; half < 2; ++half) {
            uint8_t* first = rows + 16 * half * pitch + p0;
            uint8_t* g[2] = {first, first + 8 * pitch};
            const uint8_t* in = atoms + uint64_t(p0) * 32 + half * 16;
            for (uint32_t p = p0; p < end; p += 32) {
                if (half == 0) prefetch_atoms_ahead(in, count - p);
                __m256i v[16];
#pragma GCC unroll 16
                for (uint32_t i = 0; i < 16; ++i)
                    v[i] = load_lanes(in + i * 32, in + (16 + i) * 32);
                transpose16x16_epi8(v);
#pragma GCC unroll 16
                for (uint32_t j = 0; j < 16; ++j) {
                    auto* row = reinterpret_cast<__m256i*>(at.at(g[j / 8], j % 8));
                    if (stream)
                        _mm256_stream_si256(row, v[j]);
                    else
                        _mm256_storeu_si256(row, v[j]);
                }
                in += 32 * 32;
                g[0] += 32;
                g[1] += 32;
            }
        }
    }
    int8_atoms_to_rows_tail(atoms + uint64_t(whole) * 32, count - whole, rows + whole, pitch);
}

// The same transpose as transpose16x16_epi8 in each of four 128-bit lanes.
NVDLA_AVX512_INLINE void transpose16x16_epi8_x4(__m512i* r) {
    __m512i a[16];
#pragma GCC unroll 16
    for (int i = 0; i < 8; ++i) {
        a[2 * i] = _mm512_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm512_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
    }
#pragma GCC unroll 16
    for (int m = 0; m < 4; ++m) {
        r[4 * m] = _mm512_unpacklo_epi16(a[4 * m], a[4 * m + 2]);
        r[4 * m + 1] = _mm512_unpackhi_epi16(a[4 * m], a[4 * m + 2]);
        r[4 * m + 2] = _mm512_unpacklo_epi16(a[4 * m + 1], a[4 * m + 3]);
        r[4 * m + 3] = _mm512_unpackhi_epi16(a[4 * m + 1], a[4 * m + 3]);
    }
#pragma GCC unroll 16
    for (int p = 0; p < 2; ++p)
#pragma GCC unroll 16
        for (int q = 0; q < 4; ++q) {
            a[8 * p + 2 * q] = _mm512_maskz_unpacklo_epi32(kAll16, r[8 * p + q], r[8 * p + 4 + q]);
            a[8 * p + 2 * q + 1] =
                _mm512_maskz_unpackhi_epi32(kAll16, r[8 * p + q], r[8 * p + 4 + q]);
        }
#pragma GCC unroll 16
    for (int s = 0; s < 8; ++s) {
        r[2 * s] = _mm512_maskz_unpacklo_epi64(kAll8, a[s], a[8 + s]);
        r[2 * s + 1] = _mm512_maskz_unpackhi_epi64(kAll8, a[s], a[8 + s]);
    }
}

// int8_atoms_to_rows_avx2 with 64 pixels per block, so that every row takes one whole cache
// line per block, over runs of 512 pixels (the kernel alone: 0.81-0.85 of memcpy, 0.77-0.79
// with runs of 256, against 0.75-0.76 for the AVX2 form at either).
constexpr uint32_t kInt8CopyPassPixelsAvx512 = 512;

NVDLA_AVX512 void int8_atoms_to_rows_avx512(const uint8_t* atoms, uint32_t count, uint8_t* rows,
                                            uint64_t pitch, bool stream) {
    // The first pixels alone, so that the rows' stores start on a cache line.
    const uint32_t head =
        std::min<uint32_t>(count, (64 - reinterpret_cast<uintptr_t>(rows) % 64) % 64);
    int8_atoms_to_rows_tail(atoms, head, rows, pitch);
    atoms += uint64_t(head) * 32;
    rows += head;
    count -= head;
    const bool stream_lines = stream && pitch % 64 == 0;
    const RowGroups at(pitch);
    const uint32_t whole = count / 64 * 64;
    for (uint32_t p0 = 0; p0 < whole; p0 += kInt8CopyPassPixelsAvx512) {
        const uint32_t end = std::min(whole, p0 + kInt8CopyPassPixelsAvx512);
#pragma GCC unroll 1
        for (uint32_t half = 0; half < 2; ++half) {
            uint8_t* first = rows + 16 * half * pitch + p0;
            uint8_t* g[2] = {first, first + 8 * pitch};
            const uint8_t* in = atoms + uint64_t(p0) * 32 + half * 16;
            for (uint32_t p = p0; p < end; p += 64) {
                if (half == 0) {
                    prefetch_atoms_ahead(in, count - p);
                    prefetch_atoms_ahead(in + 32 * 32, count - p - 32);
                }
                __m512i v[16];
#pragma GCC unroll 16
                for (uint32_t i = 0; i < 16; ++i)
                    v[i] = load_4_lanes(in + i * 32, in + (16 + i) * 32, in + (32 + i) * 32,
                                        in + (48 + i) * 32);
                transpose16x16_epi8_x4(v);
#pragma GCC unroll 16
                for (uint32_t j = 0; j < 16; ++j) {
                    uint8_t* row = at.at(g[j / 8], j % 8);
                    if (stream_lines)
                        _mm512_stream_si512(reinterpret_cast<__m512i*>(row), v[j]);
                    else
                        _mm512_storeu_si512(row, v[j]);
                }
                in += 64 * 32;
                g[0] += 64;
                g[1] += 64;
            }
        }
    }
    int8_atoms_to_rows_avx2(atoms + uint64_t(whole) * 32, count - whole, rows + whole, pitch,
                            stream);
}

// ---- fp16 atoms straight to float32 rows ----
// 16 pixels per block, so that each of the 16 rows takes one whole, aligned cache line per
// block: registers of channels 0..7 (then 8..15) of pixels i and 8 + i, two 8x8 16-bit
// transposes, widened. Whole lines matter twice: the rows of a 224 x 224 plane fall into one L1
// set (half-written lines were evicted before their other half came), and a non-temporal store
// of a whole line goes out without being combined with other stores. The kernel alone, 12.8 MB
// of float32: 1.4-1.7 of memcpy against 0.7-0.8 for the tile path (buffer, then each row).

void fp16_atoms_to_fp32_rows_tail(const uint8_t* atoms, uint32_t count, uint8_t* rows,
                                  uint64_t pitch) {
    for (uint32_t p = 0; p < count; ++p)
        for (uint32_t j = 0; j < 16; ++j) {
            uint16_t h;
            std::memcpy(&h, atoms + uint64_t(p) * 32 + j * 2, 2);
            const float f = fp16::to_float(h);
            std::memcpy(rows + j * pitch + uint64_t(p) * 4, &f, 4);
        }
}

// Row j's 16 fp16 values of the block at `atoms` (pixels 0..7 in lane 0, 8..15 in lane 1):
// lo[j] for channels 0..7, hi[j] for channels 8..15.
NVDLA_AVX2_INLINE void fp16_atoms_to_channel_rows(const uint8_t* atoms, __m256i* lo, __m256i* hi) {
#pragma GCC unroll 8
    for (uint32_t i = 0; i < 8; ++i) {
        lo[i] = load_lanes(atoms + i * 32, atoms + (8 + i) * 32);
        hi[i] = load_lanes(atoms + i * 32 + 16, atoms + (8 + i) * 32 + 16);
    }
    simd::transpose8x8_epi16(lo);
    simd::transpose8x8_epi16(hi);
}

// Converts the pixels before the first whole line of row 0 alone and advances past them. The
// rows' lines are aligned alike where `pitch` is a multiple of 64 (otherwise the stores are
// unaligned ones); streaming needs them aligned.
void fp16_rows_head(const uint8_t*& atoms, uint32_t& count, uint8_t*& rows, uint64_t pitch,
                    bool& stream) {
    const auto address = reinterpret_cast<uintptr_t>(rows);
    const uint32_t head =
        address % 4 != 0 ? 0 : std::min<uint32_t>(count, uint32_t(-address % 64) / 4);
    fp16_atoms_to_fp32_rows_tail(atoms, head, rows, pitch);
    atoms += uint64_t(head) * 32;
    rows += uint64_t(head) * 4;
    count -= head;
    stream = stream && reinterpret_cast<uintptr_t>(rows) % 64 == 0 && pitch % 64 == 0;
}

NVDLA_AVX2 void fp16_atoms_to_fp32_rows_avx2(const uint8_t* atoms, uint32_t count, uint8_t* rows,
                                             uint64_t pitch, bool stream) {
    fp16_rows_head(atoms, count, rows, pitch, stream);
    const RowGroups at(pitch);
    uint8_t* g[2] = {rows, rows + 8 * pitch};
    const uint32_t whole = count / 16 * 16;
    for (uint32_t p = 0; p < whole; p += 16) {
        __m256i lo[8], hi[8];
        fp16_atoms_to_channel_rows(atoms + uint64_t(p) * 32, lo, hi);
#pragma GCC unroll 8
        for (uint32_t j = 0; j < 8; ++j) {
            auto* r0 = reinterpret_cast<float*>(at.at(g[0], j));
            auto* r1 = reinterpret_cast<float*>(at.at(g[1], j));
            const __m256 f[4] = {_mm256_cvtph_ps(_mm256_castsi256_si128(lo[j])),
                                 _mm256_cvtph_ps(_mm256_extracti128_si256(lo[j], 1)),
                                 _mm256_cvtph_ps(_mm256_castsi256_si128(hi[j])),
                                 _mm256_cvtph_ps(_mm256_extracti128_si256(hi[j], 1))};
            if (stream) {
                _mm256_stream_ps(r0, f[0]);
                _mm256_stream_ps(r0 + 8, f[1]);
                _mm256_stream_ps(r1, f[2]);
                _mm256_stream_ps(r1 + 8, f[3]);
            } else {
                _mm256_storeu_ps(r0, f[0]);
                _mm256_storeu_ps(r0 + 8, f[1]);
                _mm256_storeu_ps(r1, f[2]);
                _mm256_storeu_ps(r1 + 8, f[3]);
            }
        }
        g[0] += 64;
        g[1] += 64;
    }
    fp16_atoms_to_fp32_rows_tail(atoms + uint64_t(whole) * 32, count - whole,
                                 rows + uint64_t(whole) * 4, pitch);
}

NVDLA_AVX512 void fp16_atoms_to_fp32_rows_avx512(const uint8_t* atoms, uint32_t count,
                                                 uint8_t* rows, uint64_t pitch, bool stream) {
    fp16_rows_head(atoms, count, rows, pitch, stream);
    const RowGroups at(pitch);
    uint8_t* g[2] = {rows, rows + 8 * pitch};
    const uint32_t whole = count / 16 * 16;
    for (uint32_t p = 0; p < whole; p += 16) {
        __m256i lo[8], hi[8];
        fp16_atoms_to_channel_rows(atoms + uint64_t(p) * 32, lo, hi);
#pragma GCC unroll 8
        for (uint32_t j = 0; j < 8; ++j) {
            auto* r0 = reinterpret_cast<float*>(at.at(g[0], j));
            auto* r1 = reinterpret_cast<float*>(at.at(g[1], j));
            const __m512 f0 = _mm512_maskz_cvtph_ps(kAll16, lo[j]);
            const __m512 f1 = _mm512_maskz_cvtph_ps(kAll16, hi[j]);
            if (stream) {
                _mm512_stream_ps(r0, f0);
                _mm512_stream_ps(r1, f1);
            } else {
                _mm512_storeu_ps(r0, f0);
                _mm512_storeu_ps(r1, f1);
            }
        }
        g[0] += 64;
        g[1] += 64;
    }
    fp16_atoms_to_fp32_rows_tail(atoms + uint64_t(whole) * 32, count - whole,
                                 rows + uint64_t(whole) * 4, pitch);
}

// ---- Choosing the kernels ----

struct Plan {
    PackRowFn pack_row = nullptr;
    UnpackRowFn unpack_row = nullptr;
    ToAtomsFn to_atoms = to_atoms_scalar;
    FromAtomsFn from_atoms = from_atoms_scalar;
    // Host rows straight to and from atoms, for surfaces whose channels are all valid.
    RowsToAtomsFn rows_to_atoms = nullptr;
    AtomsToRowsFn atoms_to_rows = nullptr;
    AtomShape shape{};
};

// Vector forms need AVX2 with F16C (every AVX2 CPU has it) at the emulator's level.
bool vector_level(IsaLevel* level) {
    *level = emu::isa_level();
    return *level != IsaLevel::Scalar && cpu_has_avx2();
}

// int8 copies between NCHW rows and 32-byte atoms.
bool direct_int8(HostType host, HostLayout layout, const FeatureCube& cube,
                 const ConvertOptions& opt) {
    return host == HostType::Int8 && layout == HostLayout::NCHW &&
           cube.precision == Precision::Int8 && cube.channels_per_surface() == 32 &&
           opt.quant_scale == 1.0f && !opt.stats;
}

// fp16 atoms straight to float32 NCHW rows (the options unpack_row_for takes for it).
bool direct_fp16_to_fp32(HostType host, HostLayout layout, const FeatureCube& cube) {
    return host == HostType::Float32 && layout == HostLayout::NCHW &&
           cube.precision == Precision::Fp16 && cube.channels_per_surface() == 16;
}

// float32 NCHW rows straight to fp16 or int8 atoms (fp32_rows_to_*_atoms_avx2).
RowsToAtomsFn direct_float(HostType host, HostLayout layout, const FeatureCube& cube,
                           const ConvertOptions& opt, IsaLevel) {
    if (host != HostType::Float32 || layout != HostLayout::NCHW || opt.stats) return nullptr;
    if (cube.precision == Precision::Fp16 && cube.channels_per_surface() == 16 &&
        opt.quant_scale == 1.0f)
        return opt.saturate_fp16 ? fp32_rows_to_fp16_atoms_avx2<true>
                                 : fp32_rows_to_fp16_atoms_avx2<false>;
    if (cube.precision == Precision::Int8 && cube.channels_per_surface() == 32)
        return fp32_rows_to_int8_atoms_avx2;
    return nullptr;
}

void choose_transposes(const FeatureCube& cube, Plan& plan) {
    plan.shape = {cube.channels_per_surface(), cube.bytes_per_element()};
    const AtomShape s = plan.shape;
    if (s.element_bytes == 2 && s.lanes == 16) {
        plan.to_atoms = to_atoms_32byte<2>;
        plan.from_atoms = from_atoms_32byte<2>;
    } else if (s.element_bytes == 1 && s.lanes == 32) {
        plan.to_atoms = to_atoms_32byte<1>;
        plan.from_atoms = from_atoms_32byte<1>;
    } else if (s.element_bytes == 1 && s.lanes == 8) {
        plan.to_atoms = to_atoms_8x8bit;
        plan.from_atoms = from_atoms_8x8bit;
    }
}

PackRowFn pack_row_for(HostType from, Precision to, const ConvertOptions& opt, IsaLevel level) {
    if (opt.stats) return nullptr;  // counting is the element-wise path's
    const bool avx512 = level == IsaLevel::Avx512;
    const bool unscaled = opt.quant_scale == 1.0f;
    if (from == HostType::Float32 && to == Precision::Fp16 && unscaled) {
        if (opt.saturate_fp16) return avx512 ? fp32_to_fp16_avx512<true> : fp32_to_fp16_avx2<true>;
        return avx512 ? fp32_to_fp16_avx512<false> : fp32_to_fp16_avx2<false>;
    }
    if (from == HostType::Float32 && to == Precision::Int8)
        return avx512 ? fp32_to_int_avx512<int8_t> : fp32_to_int_avx2<int8_t>;
    if (from == HostType::Float32 && to == Precision::Int16)
        return avx512 ? fp32_to_int_avx512<int16_t> : fp32_to_int_avx2<int16_t>;
    if (from == HostType::Float16 && to == Precision::Fp16 && unscaled)
        return opt.saturate_fp16 ? saturate_fp16_avx2 : copy_row<2>;
    if (from == HostType::Int8 && to == Precision::Int8 && unscaled) return copy_row<1>;
    if (from == HostType::Int16 && to == Precision::Int16 && unscaled) return copy_row<2>;
    return nullptr;
}

UnpackRowFn unpack_row_for(Precision from, HostType to, const ConvertOptions& opt, IsaLevel level) {
    if (opt.stats || opt.quant_scale != 1.0f) return nullptr;
    if (from == Precision::Fp16 && to == HostType::Float32)
        return level == IsaLevel::Avx512 ? fp16_to_fp32_avx512 : fp16_to_fp32_avx2;
    if (from == Precision::Fp16 && to == HostType::Float16 && !opt.saturate_fp16)
        return copy_row_streaming<2>;
    if (from == Precision::Int8 && to == HostType::Int8) return copy_row_streaming<1>;
    if (from == Precision::Int16 && to == HostType::Int16) return copy_row_streaming<2>;
    return nullptr;
}

// Lines of atoms without gaps, and a plane small enough to count in 32 bits.
bool dense_lines(const FeatureCube& cube) {
    return cube.line_stride == uint64_t(cube.width) * cube.atom_bytes &&
           uint64_t(cube.height) * cube.width <= UINT32_MAX;
}

// Pixels [p, end) of a tile that one to_atoms / from_atoms call takes: all of them on dense
// lines (one tail per tile, not per line), else those on p's line.
uint32_t pixels_in_one_go(const FeatureCube& cube, bool dense, uint64_t p, uint64_t end) {
    return uint32_t(dense ? end - p : std::min<uint64_t>(cube.width - p % cube.width, end - p));
}

void prefetch(const uint8_t* p, size_t bytes) {
    for (size_t i = 0; i < bytes; i += 64)
        _mm_prefetch(reinterpret_cast<const char*>(p + i), _MM_HINT_T0);
}

// ---- Rows that share L1 sets ----
// Planes a multiple of 2 KiB apart (int8 planes of 64 x 64, 32 x 128, 128 x 128) put the 32 rows
// an atom reads or writes into one or two of L1's sets, more lines than the sets' ways hold;
// side by side they ran at 0.16-0.19 (pack) and 0.06 (unpack) of memcpy of 1x64x64x64's 256 kB.
// Such rows go through a small buffer whose rows are a line further apart than their length,
// copied into or out of it one row at a time: 0.25-0.30 both ways. (Whole lines of the 32 rows
// in turn stayed at 0.15 and 0.06; runs of 1 KiB per row gave the same as 256 bytes.)
constexpr uint32_t kStagedRowBytes = 256;
constexpr uint32_t kStagedPitch = kStagedRowBytes + 64;

bool rows_share_sets(uint64_t pitch) {
    return pitch % 2048 == 0;
}

// n bytes of each of 32 rows, one row after the other.
NVDLA_AVX2 void copy_32_rows(const uint8_t* from, uint64_t from_pitch, uint8_t* to,
                             uint64_t to_pitch, uint32_t n) {
    for (uint32_t j = 0; j < 32; ++j) {
        uint32_t i = 0;
        for (; i + 64 <= n; i += 64) {
            const uint8_t* a = from + j * from_pitch + i;
            uint8_t* b = to + j * to_pitch + i;
            const __m256i lo = load256(a), hi = load256(a + 32);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(b), lo);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + 32), hi);
        }
        std::memcpy(to + j * to_pitch + i, from + j * from_pitch + i, n - i);
    }
}

void rows_to_atoms_staged(RowsToAtomsFn rows_to_atoms, const uint8_t* rows, uint64_t pitch,
                          uint32_t count, uint8_t* atoms, bool stream, double scale) {
    alignas(64) uint8_t buffer[32 * kStagedPitch];
    for (uint32_t p0 = 0; p0 < count; p0 += kStagedRowBytes) {
        const uint32_t n = std::min(kStagedRowBytes, count - p0);
        copy_32_rows(rows + p0, pitch, buffer, kStagedPitch, n);
        rows_to_atoms(buffer, kStagedPitch, n, atoms + uint64_t(p0) * 32, stream, scale);
    }
}

void atoms_to_rows_staged(AtomsToRowsFn atoms_to_rows, const uint8_t* atoms, uint32_t count,
                          uint8_t* rows, uint64_t pitch) {
    alignas(64) uint8_t buffer[32 * kStagedPitch];
    for (uint32_t p0 = 0; p0 < count; p0 += kStagedRowBytes) {
        const uint32_t n = std::min(kStagedRowBytes, count - p0);
        atoms_to_rows(atoms + uint64_t(p0) * 32, n, buffer, kStagedPitch, false);
        copy_32_rows(buffer, kStagedPitch, rows + p0, pitch, n);
    }
}

// ---- The walks ----

void pack_nchw(const uint8_t* host, uint32_t host_bytes, const FeatureCube& cube, uint8_t* dst,
               const Plan& plan, double scale) {
    const uint32_t k = plan.shape.lanes, e = plan.shape.element_bytes;
    // As many pixels as fill the buffer, or as many whose host runs (prefetched a tile ahead)
    // fill half of L1, whichever is less.
    const uint32_t tile =
        std::min(kPackTileBytes / cube.atom_bytes, kPackHostBytes / (k * host_bytes));
    const uint32_t pitch = tile * e;
    const uint64_t plane = uint64_t(cube.height) * cube.width;
    const bool stream = cube.size_bytes() >= kStreamBytes;
    const bool dense = dense_lines(cube);
    alignas(64) uint8_t buffer[kPackTileBytes];
    for (uint32_t n = 0; n < cube.batches; ++n)
        for (uint32_t s = 0; s < cube.surfaces(); ++s) {
            const uint32_t c0 = s * k, valid = std::min(k, cube.channels - c0);
            const uint8_t* rows = host + (uint64_t(n) * cube.channels + c0) * plane * host_bytes;
            uint8_t* surface = dst + n * cube.batch_stride + s * cube.surface_stride;
            if (plan.rows_to_atoms && valid == k) {
                if (dense && host_bytes == 1 && rows_share_sets(plane)) {
                    rows_to_atoms_staged(plan.rows_to_atoms, rows, plane, uint32_t(plane), surface,
                                         stream, scale);
                    continue;
                }
                if (dense) {  // the plane is one run
                    plan.rows_to_atoms(rows, plane * host_bytes, uint32_t(plane), surface, stream,
                                       scale);
                    continue;
                }
                for (uint32_t h = 0; h < cube.height; ++h)
                    plan.rows_to_atoms(rows + uint64_t(h) * cube.width * host_bytes,
                                       plane * host_bytes, cube.width,
                                       surface + h * cube.line_stride, stream, scale);
                continue;
            }
            std::memset(buffer + valid * pitch, 0, (k - valid) * pitch);  // padding channels
            for (uint64_t p0 = 0; p0 < plane; p0 += tile) {
                const uint32_t count = uint32_t(std::min<uint64_t>(tile, plane - p0));
                for (uint32_t j = 0; j < valid; ++j) {
                    const uint8_t* run = rows + (j * plane + p0) * host_bytes;
                    plan.pack_row(run, buffer + j * pitch, count, scale);
                    // The next tile's run now: k streams are more than the prefetchers follow.
                    if (p0 + tile < plane)
                        prefetch(run + tile * host_bytes,
                                 std::min<uint64_t>(tile, plane - p0 - tile) * host_bytes);
                }
                for (uint64_t p = p0, end = p0 + count; p < end;) {
                    const uint32_t h = uint32_t(p / cube.width), w = uint32_t(p % cube.width);
                    const uint32_t len = pixels_in_one_go(cube, dense, p, end);
                    plan.to_atoms(buffer + (p - p0) * e, pitch, len,
                                  surface + h * cube.line_stride + uint64_t(w) * cube.atom_bytes,
                                  stream, plan.shape);
                    p += len;
                }
            }
        }
    if (stream) _mm_sfence();  // the non-temporal stores, before anyone reads the cube
}

void unpack_nchw(const uint8_t* src, const FeatureCube& cube, uint8_t* host, uint32_t host_bytes,
                 const Plan& plan) {
    const uint32_t k = plan.shape.lanes, e = plan.shape.element_bytes;
    const uint32_t tile = kUnpackTileBytes / cube.atom_bytes, pitch = tile * e;
    const uint64_t plane = uint64_t(cube.height) * cube.width;
    const bool stream = uint64_t(cube.batches) * cube.channels * plane * host_bytes >= kStreamBytes;
    const bool dense = dense_lines(cube);
    alignas(64) uint8_t buffer[kUnpackTileBytes];
    for (uint32_t n = 0; n < cube.batches; ++n)
        for (uint32_t s = 0; s < cube.surfaces(); ++s) {
            const uint32_t c0 = s * k, valid = std::min(k, cube.channels - c0);
            uint8_t* rows = host + (uint64_t(n) * cube.channels + c0) * plane * host_bytes;
            const uint8_t* surface = src + n * cube.batch_stride + s * cube.surface_stride;
            if (plan.atoms_to_rows && valid == k) {
                if (dense && host_bytes == 1 && rows_share_sets(plane)) {
                    atoms_to_rows_staged(plan.atoms_to_rows, surface, uint32_t(plane), rows, plane);
                    continue;
                }
                if (dense) {
                    plan.atoms_to_rows(surface, uint32_t(plane), rows, plane * host_bytes, stream);
                    continue;
                }
                for (uint32_t h = 0; h < cube.height; ++h)
                    plan.atoms_to_rows(surface + h * cube.line_stride, cube.width,
                                       rows + uint64_t(h) * cube.width * host_bytes,
                                       plane * host_bytes, stream);
                continue;
            }
            for (uint64_t p0 = 0; p0 < plane; p0 += tile) {
                const uint32_t count = uint32_t(std::min<uint64_t>(tile, plane - p0));
                for (uint64_t p = p0, end = p0 + count; p < end;) {
                    const uint32_t h = uint32_t(p / cube.width), w = uint32_t(p % cube.width);
                    const uint32_t len = pixels_in_one_go(cube, dense, p, end);
                    plan.from_atoms(surface + h * cube.line_stride + uint64_t(w) * cube.atom_bytes,
                                    len, buffer + (p - p0) * e, pitch, plan.shape);
                    p += len;
                }
                for (uint32_t j = 0; j < valid; ++j)
                    plan.unpack_row(buffer + j * pitch, rows + (j * plane + p0) * host_bytes, count,
                                    stream);
            }
        }
    if (stream) _mm_sfence();
}

}  // namespace

bool pack_feature_vector(const ConstTensorView& src, const FeatureCube& cube, uint8_t* dst,
                         const ConvertOptions& opt) {
    IsaLevel level;
    if (!vector_level(&level)) return false;
    Plan plan;
    plan.pack_row = pack_row_for(src.type, cube.precision, opt, level);
    if (!plan.pack_row) return false;
    choose_transposes(cube, plan);
    if (direct_int8(src.type, src.layout, cube, opt))
        plan.rows_to_atoms =
            level == IsaLevel::Avx512 ? int8_rows_to_atoms_avx512 : int8_rows_to_atoms_avx2;
    else
        plan.rows_to_atoms = direct_float(src.type, src.layout, cube, opt, level);
    const auto* host = static_cast<const uint8_t*>(src.data);
    const uint32_t host_bytes = bytes_per_element(src.type);
    const double scale = double(opt.quant_scale);
    if (src.layout == HostLayout::NCHW) {
        pack_nchw(host, host_bytes, cube, dst, plan, scale);
        return true;
    }
    const uint32_t k = plan.shape.lanes, e = plan.shape.element_bytes;
    for (uint32_t n = 0; n < cube.batches; ++n)
        for (uint32_t s = 0; s < cube.surfaces(); ++s) {
            const uint32_t c0 = s * k, valid = std::min(k, cube.channels - c0);
            for (uint32_t h = 0; h < cube.height; ++h) {
                uint8_t* atom = dst + cube.offset(n, c0, h, 0);
                const uint8_t* px =
                    host + host_offset(src.dims, HostLayout::NHWC, host_bytes, n, c0, h, 0);
                for (uint32_t w = 0; w < cube.width; ++w) {
                    plan.pack_row(px, atom, valid, scale);
                    std::memset(atom + valid * e, 0, (k - valid) * e);
                    atom += cube.atom_bytes;
                    px += uint64_t(cube.channels) * host_bytes;
                }
            }
        }
    return true;
}

bool unpack_feature_vector(const uint8_t* src, const FeatureCube& cube, const TensorView& dst,
                           const ConvertOptions& opt) {
    IsaLevel level;
    if (!vector_level(&level)) return false;
    Plan plan;
    plan.unpack_row = unpack_row_for(cube.precision, dst.type, opt, level);
    if (!plan.unpack_row) return false;
    choose_transposes(cube, plan);
    if (direct_int8(dst.type, dst.layout, cube, opt))
        plan.atoms_to_rows =
            level == IsaLevel::Avx512 ? int8_atoms_to_rows_avx512 : int8_atoms_to_rows_avx2;
    else if (direct_fp16_to_fp32(dst.type, dst.layout, cube))
        plan.atoms_to_rows = level == IsaLevel::Avx512 ? fp16_atoms_to_fp32_rows_avx512
                                                       : fp16_atoms_to_fp32_rows_avx2;
    auto* host = static_cast<uint8_t*>(dst.data);
    const uint32_t host_bytes = bytes_per_element(dst.type);
    if (dst.layout == HostLayout::NCHW) {
        unpack_nchw(src, cube, host, host_bytes, plan);
        return true;
    }
    const uint32_t k = plan.shape.lanes;
    for (uint32_t n = 0; n < cube.batches; ++n)
        for (uint32_t s = 0; s < cube.surfaces(); ++s) {
            const uint32_t c0 = s * k, valid = std::min(k, cube.channels - c0);
            for (uint32_t h = 0; h < cube.height; ++h) {
                const uint8_t* atom = src + cube.offset(n, c0, h, 0);
                uint8_t* px =
                    host + host_offset(dst.dims, HostLayout::NHWC, host_bytes, n, c0, h, 0);
                for (uint32_t w = 0; w < cube.width; ++w) {
                    plan.unpack_row(atom, px, valid, false);
                    atom += cube.atom_bytes;
                    px += uint64_t(cube.channels) * host_bytes;
                }
            }
        }
    return true;
}

#else  // not x86-64: the element-wise path

bool pack_feature_vector(const ConstTensorView&, const FeatureCube&, uint8_t*,
                         const ConvertOptions&) {
    return false;
}
bool unpack_feature_vector(const uint8_t*, const FeatureCube&, const TensorView&,
                           const ConvertOptions&) {
    return false;
}

#endif

}  // namespace nvdla::detail
