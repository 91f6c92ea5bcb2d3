// CPU feature checks for the vectorised paths (x86-64; other CPUs take the scalar paths).
#pragma once

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace nvdla {

#if defined(__x86_64__)
// CPUID leaf 1, ECX bit 29 (clang before 16 has no __builtin_cpu_supports("f16c")).
inline bool cpuid_has_f16c() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}
#endif

inline bool cpu_has_f16c() {
#if defined(__x86_64__)
    static const bool has = __builtin_cpu_supports("avx") && cpuid_has_f16c();
    return has;
#else
    return false;
#endif
}

inline bool cpu_has_avx2() {
#if defined(__x86_64__)
    static const bool has = __builtin_cpu_supports("avx2") && cpuid_has_f16c();
    return has;
#else
    return false;
#endif
}

}  // namespace nvdla
