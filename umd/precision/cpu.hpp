// CPU feature checks for the vectorised paths (x86-64; other CPUs take the scalar paths).
#pragma once

namespace nvdla {

inline bool cpu_has_f16c() {
#if defined(__x86_64__)
    static const bool has = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
    return has;
#else
    return false;
#endif
}

inline bool cpu_has_avx2() {
#if defined(__x86_64__)
    static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
    return has;
#else
    return false;
#endif
}

}  // namespace nvdla
