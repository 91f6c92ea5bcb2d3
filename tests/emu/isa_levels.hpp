// The emulator's instruction-set levels in tests: a scoped limit, and the levels this CPU runs,
// so that every path the machine has is tested (NVDLA_EMU_ISA only lowers the default).
#pragma once

#include <vector>

#include "emu/isa.hpp"

namespace nvdla::emu {

// Sets the ISA limit for a scope, then restores NVDLA_EMU_ISA's.
class IsaLimit {
  public:
    explicit IsaLimit(IsaLevel level) { set_isa_limit(level); }
    ~IsaLimit() { set_isa_limit(isa_limit_from_environment()); }
    IsaLimit(const IsaLimit&) = delete;
    IsaLimit& operator=(const IsaLimit&) = delete;
};

// Keeps the AVX-512 level off VBMI for a scope (as NVDLA_EMU_ISA=avx512-novbmi does), then
// restores NVDLA_EMU_ISA's choice.
class VbmiOff {
  public:
    VbmiOff() { set_isa_vbmi(false); }
    ~VbmiOff() { set_isa_vbmi(isa_vbmi_from_environment()); }
    VbmiOff(const VbmiOff&) = delete;
    VbmiOff& operator=(const VbmiOff&) = delete;
};

// Every level the CPU can run, lowest first.
inline std::vector<IsaLevel> levels_of_this_cpu() {
    std::vector<IsaLevel> levels;
    for (IsaLevel level : {IsaLevel::Scalar, IsaLevel::Avx2, IsaLevel::Avx512}) {
        const IsaLimit limit(level);
        if (isa_level() == level) levels.push_back(level);
    }
    return levels;
}

// The vector levels this CPU runs (AVX2, AVX-512), whatever NVDLA_EMU_ISA says.
inline std::vector<IsaLevel> vector_levels() {
    std::vector<IsaLevel> levels = levels_of_this_cpu();
    std::erase(levels, IsaLevel::Scalar);
    return levels;
}

}  // namespace nvdla::emu
