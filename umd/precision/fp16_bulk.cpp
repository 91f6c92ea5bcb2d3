// Bulk fp16 conversions. The F16C instructions round to nearest even, keep denormals and
// quieten NaNs exactly like the scalar functions, so both paths give identical bits.
#include <cstddef>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "nvdla/precision/fp16.hpp"
#include "precision/cpu.hpp"

namespace nvdla::fp16 {
namespace {

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void from_float_f16c(const float* in, uint16_t* out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
    }
    for (; i < n; ++i) out[i] = from_float(in[i]);
}

__attribute__((target("avx,f16c"))) void to_float_f16c(const uint16_t* in, float* out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; ++i) out[i] = to_float(in[i]);
}
#else
void from_float_f16c(const float*, uint16_t*, size_t) {}
void to_float_f16c(const uint16_t*, float*, size_t) {}
#endif

}  // namespace

void from_float(std::span<const float> in, std::span<uint16_t> out) {
    const size_t n = in.size() < out.size() ? in.size() : out.size();
    if (cpu_has_f16c()) {
        from_float_f16c(in.data(), out.data(), n);
        return;
    }
    for (size_t i = 0; i < n; ++i) out[i] = from_float(in[i]);
}

void to_float(std::span<const uint16_t> in, std::span<float> out) {
    const size_t n = in.size() < out.size() ? in.size() : out.size();
    if (cpu_has_f16c()) {
        to_float_f16c(in.data(), out.data(), n);
        return;
    }
    for (size_t i = 0; i < n; ++i) out[i] = to_float(in[i]);
}

}  // namespace nvdla::fp16
