// Internal: vectorised float32 <-> fp16 feature-cube conversion for 16-channel surfaces
// (fp16 with 32-byte atoms). Each returns false when it does not apply (other surface widths,
// or a CPU without AVX2/F16C) and the caller falls back to the element-wise path.
#pragma once

#include <cstdint>

#include "nvdla/formats/feature.hpp"

namespace nvdla::detail {

bool pack_fp32_to_fp16(const float* src, HostLayout layout, const FeatureCube& cube, uint8_t* dst);
bool unpack_fp16_to_fp32(const uint8_t* src, const FeatureCube& cube, float* dst,
                         HostLayout layout);

}  // namespace nvdla::detail
