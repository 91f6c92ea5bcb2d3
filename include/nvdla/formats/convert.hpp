// How host element values become hardware element values and back, for every format.
//
//   surface = round(host * quant_scale)    saturated to the surface precision
//   host    = round(surface / quant_scale) saturated to the host type
//
// Rounding is to nearest even for fp16 and half away from zero for integers (as the hardware's
// convertors round). With quant_scale = 1 and matching types the conversion is an exact copy.
#pragma once

#include <cstdint>

namespace nvdla {

struct ConversionStats {
    uint64_t saturated = 0;  // values clamped to the destination's range
    uint64_t nan = 0;        // NaN inputs written to an integer destination (as 0)
};

struct ConvertOptions {
    float quant_scale = 1.0f;
    // fp16 destinations: clamp to +-65504 instead of producing infinity, as NVDLA's datapath
    // does (it never outputs infinity).
    bool saturate_fp16 = false;
    // When set, conversions add what they clamped; the counts are not reset.
    ConversionStats* stats = nullptr;
};

}  // namespace nvdla
