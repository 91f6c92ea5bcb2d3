// The instruction sets the emulator's vector kernels may use, chosen once at run time: what the
// CPU has, lowered by NVDLA_EMU_ISA=scalar|avx2|avx512|avx512-novbmi (unset or "auto": no
// limit) so that one machine can run and test every path. Private to umd/emu.
#pragma once

#include <cstdint>

namespace nvdla::emu {

enum class IsaLevel : uint8_t { Scalar, Avx2, Avx512 };

// The level the CPU runs (Avx2: AVX2 + FMA; Avx512: AVX-512 F/BW/DQ/VL), at most the limit.
IsaLevel isa_level();
// The limit from NVDLA_EMU_ISA (read once; Avx512 when unset); "scalar", "avx2", "avx512",
// "auto" are understood, anything else is reported once on stderr and ignored.
IsaLevel isa_limit();
// Tests: replace the limit (nullopt-like: pass isa_limit_from_environment() to restore).
void set_isa_limit(IsaLevel limit);
IsaLevel isa_limit_from_environment();
const char* isa_name(IsaLevel level);

// Whether the AVX-512 level may use VBMI's byte permutes: the CPU has them, the level is
// AVX-512, and NVDLA_EMU_ISA is not "avx512-novbmi" (AVX-512 without them, so that a VBMI
// machine runs the fallback too). Tests: set_isa_vbmi(isa_vbmi_from_environment()) restores.
bool isa_vbmi();
void set_isa_vbmi(bool allowed);
bool isa_vbmi_from_environment();

}  // namespace nvdla::emu
