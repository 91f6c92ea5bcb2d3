// Run-time choice of the vector kernels' instruction set (isa.hpp).
#include "emu/isa.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nvdla::emu {
namespace {

IsaLevel cpu_level() {
    static const IsaLevel level = [] {
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
            return IsaLevel::Avx512;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return IsaLevel::Avx2;
        return IsaLevel::Scalar;
    }();
    return level;
}

std::atomic<IsaLevel> g_limit{isa_limit_from_environment()};
std::atomic<bool> g_vbmi{isa_vbmi_from_environment()};

}  // namespace

IsaLevel isa_limit_from_environment() {
    static const IsaLevel limit = [] {
        const char* value = std::getenv("NVDLA_EMU_ISA");
        if (!value || !*value || std::strcmp(value, "auto") == 0 ||
            std::strcmp(value, "avx512") == 0 || std::strcmp(value, "avx512-novbmi") == 0)
            return IsaLevel::Avx512;
        if (std::strcmp(value, "avx2") == 0) return IsaLevel::Avx2;
        if (std::strcmp(value, "scalar") == 0) return IsaLevel::Scalar;
        std::fprintf(stderr,
                     "NVDLA_EMU_ISA=%s is not one of scalar, avx2, avx512, avx512-novbmi, auto: "
                     "ignored\n",
                     value);
        return IsaLevel::Avx512;
    }();
    return limit;
}

IsaLevel isa_limit() {
    return g_limit;
}

void set_isa_limit(IsaLevel limit) {
    g_limit = limit;
}

IsaLevel isa_level() {
    return std::min(cpu_level(), isa_limit());
}

const char* isa_name(IsaLevel level) {
    switch (level) {
        case IsaLevel::Avx512: return "avx512";
        case IsaLevel::Avx2: return "avx2";
        default: return "scalar";
    }
}

bool isa_vbmi_from_environment() {
    static const bool allowed = [] {
        const char* value = std::getenv("NVDLA_EMU_ISA");
        return !value || std::strcmp(value, "avx512-novbmi") != 0;
    }();
    return allowed;
}

void set_isa_vbmi(bool allowed) {
    g_vbmi = allowed;
}

bool isa_vbmi() {
    static const bool cpu = __builtin_cpu_supports("avx512vbmi");
    return cpu && g_vbmi && isa_level() == IsaLevel::Avx512;
}

}  // namespace nvdla::emu
