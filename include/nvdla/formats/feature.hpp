// The feature data cube: NVDLA's private format for every activation it reads and writes.
//
// A W x H x C cube is cut into 1 x 1 x atom-byte atoms (atom = 32 bytes on nv_full/nv_large,
// 8 on nv_small; channels padded up to a whole atom) and laid out pitch-linearly:
//
//     byte offset(n, c, h, w) = n * batch_stride + (c / k) * surface_stride
//                             + h * line_stride + w * atom_bytes + (c % k) * bytes_per_element
//
// with k = atom_bytes / bytes_per_element channels per surface. Line and surface strides are
// the caller's (at least the packed size, multiples of the atom); 0 asks for the packed value.
#pragma once

#include <cstdint>

#include "nvdla/api.hpp"
#include "nvdla/formats/convert.hpp"
#include "nvdla/hw_config.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla {

// Largest width, height and channel count a cube may have (13-bit "size minus one" fields).
inline constexpr uint32_t kMaxCubeExtent = 8192;

struct FeatureStrides {
    uint64_t line = 0;     // bytes from one line to the next; 0 = packed (width * atom)
    uint64_t surface = 0;  // bytes from one surface to the next; 0 = packed (height * line)
    uint64_t batch = 0;    // bytes from one batch's cube to the next; 0 = packed
};

struct FeatureCube {
    Precision precision = Precision::Int8;
    uint32_t atom_bytes = 32;
    uint32_t batches = 1, channels = 1, height = 1, width = 1;
    uint64_t line_stride = 0, surface_stride = 0, batch_stride = 0;

    uint32_t bytes_per_element() const { return nvdla::bytes_per_element(precision); }
    uint32_t channels_per_surface() const { return atom_bytes / bytes_per_element(); }
    uint32_t surfaces() const {
        return (channels + channels_per_surface() - 1) / channels_per_surface();
    }
    // Bytes from the cube's start to one past the last byte the hardware touches.
    uint64_t size_bytes() const {
        return uint64_t(batches - 1) * batch_stride + uint64_t(surfaces() - 1) * surface_stride +
               uint64_t(height - 1) * line_stride + uint64_t(width) * atom_bytes;
    }
    uint64_t offset(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
        const uint32_t k = channels_per_surface();
        return n * batch_stride + (c / k) * surface_stride + h * line_stride +
               uint64_t(w) * atom_bytes + (c % k) * bytes_per_element();
    }
    bool line_packed() const { return line_stride == uint64_t(width) * atom_bytes; }
    bool surface_packed() const { return line_packed() && surface_stride == height * line_stride; }
    Dims4 dims() const { return {batches, channels, height, width}; }
};

// Describes a cube of `dims` (n = batches) in precision p on cfg, with the given strides
// (0 = packed). Fails when the configuration lacks the precision, an extent is 0 or above
// kMaxCubeExtent, or a stride is misaligned or too small to hold what it steps over.
NVDLA_API Result<FeatureCube> make_feature_cube(const HwConfig& cfg, Precision p, Dims4 dims,
                                                FeatureStrides strides = {});

// A 1 x 1 x C cube whose surfaces are packed is, byte for byte, a 1-line cube of
// ceil(C / k) atoms: the hardware may read it that way to save bandwidth. Returns that
// W = surfaces, H = 1, C = k view, or an error when the cube is not 1 x 1 x C surface-packed.
NVDLA_API Result<FeatureCube> as_surface_packed_line(const FeatureCube& cube);

// Packs a host tensor (dims must equal the cube's) into dst (at least cube.size_bytes()).
// Writes every byte of every atom, channel padding as zeros; bytes between lines or surfaces
// that the strides skip are left untouched.
NVDLA_API Status pack_feature(const ConstTensorView& src, const FeatureCube& cube, ByteSpan dst,
                              const ConvertOptions& opt = {});

// Unpacks the cube in src into a host tensor with the cube's dims.
NVDLA_API Status unpack_feature(ConstByteSpan src, const FeatureCube& cube, const TensorView& dst,
                                const ConvertOptions& opt = {});

}  // namespace nvdla
