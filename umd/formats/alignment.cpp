#include "nvdla/formats/alignment.hpp"

#include <array>

namespace nvdla {
namespace {

constexpr uint32_t kAtom = AlignmentRule::kAtom;

// The seed's table, row by row: start, line stride, surface stride, planar/cube stride, size.
constexpr std::array<AlignmentRule, 9> kRules{{
    {SurfaceKind::FeatureCube, kAtom, kAtom, kAtom, kAtom, 0},
    {SurfaceKind::Weight, 256, 0, 0, 0, 128},
    {SurfaceKind::WeightMask, 256, 0, 0, 0, 128},
    {SurfaceKind::WeightGroupSizes, 256, 0, 0, 0, 128},
    {SurfaceKind::PitchLinearPixel, kAtom, kAtom, 0, 0, 0},  // each plane checked on its own
    {SurfaceKind::Bias, kAtom, kAtom, kAtom, 0, 0},
    {SurfaceKind::PRelu, kAtom, 0, 0, 0, 0},
    {SurfaceKind::BatchNorm, kAtom, 0, 0, 0, 0},
    {SurfaceKind::ElementWise, kAtom, kAtom, 0, 0, kAtom},
}};

Status check_field(const HwConfig& cfg, SurfaceKind kind, const char* field,
                   const std::optional<uint64_t>& value, uint32_t rule) {
    if (!value || rule == 0) return {};
    const uint32_t alignment = resolve_alignment(rule, cfg);
    if (*value % alignment == 0) return {};
    return error(to_string(kind), ": ", field, " ", *value, " (0x", std::hex, *value, std::dec,
                 ") is not a multiple of ", alignment, " bytes");
}

}  // namespace

std::string_view to_string(SurfaceKind k) {
    switch (k) {
        case SurfaceKind::FeatureCube: return "feature data cube";
        case SurfaceKind::Weight: return "weight";
        case SurfaceKind::WeightMask: return "weight mask bits (WMB)";
        case SurfaceKind::WeightGroupSizes: return "weight group sizes (WGS)";
        case SurfaceKind::PitchLinearPixel: return "pitch-linear pixel surface";
        case SurfaceKind::Bias: return "bias";
        case SurfaceKind::PRelu: return "PReLU";
        case SurfaceKind::BatchNorm: return "batch normalization";
        case SurfaceKind::ElementWise: return "element-wise";
    }
    return "?";
}

std::span<const AlignmentRule> alignment_rules() {
    return kRules;
}

Status check_alignment(const HwConfig& cfg, SurfaceKind kind, const SurfacePlacement& p) {
    for (const AlignmentRule& r : kRules) {
        if (r.kind != kind) continue;
        // One field after another, stopping at the first: the packing calls this per call.
        const char* planar =
            kind == SurfaceKind::FeatureCube ? "cube (batch) stride" : "planar stride";
        Status s = check_field(cfg, kind, "start address", p.address, r.start);
        if (s.ok()) s = check_field(cfg, kind, "line stride", p.line_stride, r.line_stride);
        if (s.ok())
            s = check_field(cfg, kind, "surface stride", p.surface_stride, r.surface_stride);
        if (s.ok()) s = check_field(cfg, kind, planar, p.planar_stride, r.planar_stride);
        if (s.ok()) s = check_field(cfg, kind, "data size", p.data_size, r.data_size);
        return s;
    }
    return error("unknown surface kind ", static_cast<int>(kind));
}

}  // namespace nvdla
