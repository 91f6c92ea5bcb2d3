// Internal: vectorised packing and unpacking of feature cubes from and to NCHW or NHWC host
// tensors, at the emulator's instruction-set level (emu/isa.hpp: NVDLA_EMU_ISA lowers it).
// Each returns false when it has no vector form for the conversion or the atom (or the level is
// scalar) and the caller converts element by element; where it applies it gives the same bytes.
#pragma once

#include <cstdint>

#include "nvdla/formats/convert.hpp"
#include "nvdla/formats/feature.hpp"

namespace nvdla::detail {

bool pack_feature_vector(const ConstTensorView& src, const FeatureCube& cube, uint8_t* dst,
                         const ConvertOptions& opt);
bool unpack_feature_vector(const uint8_t* src, const FeatureCube& cube, const TensorView& dst,
                           const ConvertOptions& opt);

}  // namespace nvdla::detail
