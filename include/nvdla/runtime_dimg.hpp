// DIMG: the original nvdla_runtime's output file (output.dimg), written exactly as the original
// regression goldens have it, so that their md5 sums can be checked.
//
// Layout: "DIMG", u32 version 0, then seven u32 {pixel format, width, height, channels, line
// stride, surface stride, size} (36 bytes, little-endian), then the elements in channel, row,
// column order, each read at (c / x) * surface + h * line + w * x * bytes + (c % x) * bytes,
// x being the channels of one atom group (32 int8, 16 int16/fp16, 8 for FEATURE_X8 int8).
// fp16 elements get the original's "stable hash" rewrite: the value 32768.0 (not the bit
// pattern of -0) becomes 0 and every NaN becomes half(31744.0), 0x77C0.
//
// Pixel-format numbers: the goldens were written before nvdla/sw inserted D_F8_CxHWx_x8_I
// (41) into its enumeration, so there int8 is 40, int16 41 and fp16 42. That numbering is the
// default; the later one (int8 40, int8 x8 41, int16 42, fp16 43) is available. The older
// enumeration has no x8 int8 format: this library writes it as 47 there, a number that
// enumeration never used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nvdla/api.hpp"
#include "nvdla/runtime.hpp"
#include "nvdla/status.hpp"

namespace nvdla::dimg {

enum class Numbering : uint8_t {
    Golden,  // nvdla/sw before April 2019: what the regression goldens hold
    Current  // nvdla/sw HEAD (DlaImage.h with D_F8_CxHWx_x8_I)
};

inline constexpr size_t kHeaderBytes = 36;

struct Header {
    uint32_t pixel_format = 0;
    uint32_t width = 0, height = 0, channels = 0;
    uint32_t line_stride = 0, surface_stride = 0, size = 0;
};

// The header a tensor gets, or why it cannot be written (not feature data, unknown type).
NVDLA_API Result<Header> header_for(const TensorInfo& tensor,
                                    Numbering numbering = Numbering::Golden);

// The whole file for an output tensor whose memory is `data` (at least tensor.size_bytes).
NVDLA_API Result<std::vector<std::byte>> encode(const TensorInfo& tensor,
                                                std::span<const std::byte> data,
                                                Numbering numbering = Numbering::Golden);

// The original's --rawdump text: every element as a number followed by a space, same order.
NVDLA_API Result<std::string> encode_text(const TensorInfo& tensor,
                                          std::span<const std::byte> data);

// The elements in DIMG order, as floats (for printing the best classes and such).
NVDLA_API Result<std::vector<float>> elements(const TensorInfo& tensor,
                                              std::span<const std::byte> data);

}  // namespace nvdla::dimg
