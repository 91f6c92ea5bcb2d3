// The alignment rules of the seed's table "Requirements of alignment": one validator for every
// surface kind, naming the field, the value and the alignment it breaks.
//
// Where the seed says 32 bytes for feature-like and pixel surfaces it means one atom of the
// 32-byte-atom configurations; on the nv_small family the register fields are byte-granular,
// the hardware traces use 8-byte strides and the pixel x offset spans one atom, so those rules
// follow the configuration's atom size.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "nvdla/api.hpp"
#include "nvdla/hw_config.hpp"
#include "nvdla/status.hpp"

namespace nvdla {

enum class SurfaceKind : uint8_t {
    FeatureCube,
    Weight,            // uncompressed or compressed weights
    WeightMask,        // WMB: sparse-compression bit masks
    WeightGroupSizes,  // WGS: sparse-compression group sizes
    PitchLinearPixel,
    Bias,
    PRelu,
    BatchNorm,
    ElementWise,
};

NVDLA_API std::string_view to_string(SurfaceKind k);

// Where a surface is: its start address and whichever strides and size apply to its kind.
struct SurfacePlacement {
    uint64_t address = 0;
    std::optional<uint64_t> line_stride;
    std::optional<uint64_t> surface_stride;
    std::optional<uint64_t> planar_stride;  // second plane of a pixel surface, or batch/cube stride
    std::optional<uint64_t> data_size;
};

// One row of the table. 0 = the rule does not apply; kAtom = the configuration's atom size.
struct AlignmentRule {
    static constexpr uint32_t kAtom = 0xffffffffu;
    SurfaceKind kind;
    uint32_t start, line_stride, surface_stride, planar_stride, data_size;
};

NVDLA_API std::span<const AlignmentRule> alignment_rules();

// The byte alignment that `rule_value` (a field of AlignmentRule) means on cfg.
constexpr uint32_t resolve_alignment(uint32_t rule_value, const HwConfig& cfg) {
    return rule_value == AlignmentRule::kAtom ? cfg.atom_bytes : rule_value;
}

// Checks every field of p that the kind's rule covers. A field whose rule does not apply is not
// checked; the error names the first field that breaks its rule:
// "feature data cube: line stride 100 is not a multiple of 32 bytes".
NVDLA_API Status check_alignment(const HwConfig& cfg, SurfaceKind kind, const SurfacePlacement& p);

}  // namespace nvdla
