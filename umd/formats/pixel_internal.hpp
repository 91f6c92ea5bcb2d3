// Internal: addressing of pitch-linear pixel surfaces and access to the components of one
// pixel, shared by packing and by the image-input conversion.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "nvdla/formats/pixel.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla::detail {

// Where the pixels of one plane are.
struct PixelPlaneGeometry {
    uint64_t offset = 0;       // plane start
    uint64_t line_stride = 0;  // bytes from one line to the next
    uint32_t bytes_per_pixel = 0;
    uint32_t x_offset = 0;  // pixels before the first pixel of each line

    uint64_t address(uint32_t y, uint32_t x) const {
        return offset + uint64_t(y) * line_stride + line_bytes(x);
    }
    // Bytes from a line's start to the end of its first `width` pixels.
    uint64_t line_bytes(uint32_t width) const {
        return (uint64_t(x_offset) + width) * bytes_per_pixel;
    }
};

// Geometry of plane p of a surface of format f.
PixelPlaneGeometry plane_geometry(const HwConfig& cfg, const PixelSurface& s,
                                  const PixelFormatInfo& f, unsigned p);
// Geometry of each plane of a surface (planes the format lacks have bytes_per_pixel 0).
std::array<PixelPlaneGeometry, 2> pixel_geometry(const HwConfig& cfg, const PixelSurface& s);

// The little-endian word of `bytes` (1..8) bytes at p.
inline uint64_t load_pixel_word(const std::byte* p, uint32_t bytes) {
    uint64_t word = 0;
    for (uint32_t i = 0; i < bytes; ++i)
        word |= uint64_t(std::to_integer<uint8_t>(p[i])) << (8 * i);
    return word;
}

inline void store_pixel_word(std::byte* p, uint32_t bytes, uint64_t word) {
    for (uint32_t i = 0; i < bytes; ++i) p[i] = std::byte(static_cast<uint8_t>(word >> (8 * i)));
}

inline uint32_t field_mask(uint32_t bits) {
    return bits >= 32 ? 0xffffffffu : (1u << bits) - 1;
}

// The component fields of one pixel, in channel order.
inline std::array<uint32_t, 4> read_pixel_fields(const PixelFormatInfo& f,
                                                 const std::array<PixelPlaneGeometry, 2>& g,
                                                 const std::byte* base, uint32_t y, uint32_t x) {
    std::array<uint64_t, 2> words{};
    for (uint32_t p = 0; p < f.planes; ++p)
        words[p] = load_pixel_word(base + g[p].address(y, x), g[p].bytes_per_pixel);
    std::array<uint32_t, 4> fields{};
    for (uint32_t ch = 0; ch < f.channels; ++ch) {
        const PixelComponent& c = f.components[ch];
        fields[ch] = static_cast<uint32_t>(words[c.plane] >> c.bit_offset) & field_mask(c.bits);
    }
    return fields;
}

// Checks that a host tensor of component values fits format f and a width x height region:
// dims {1, channels, height, width}, a buffer large enough, and a host type that can carry
// the components (integers for integer formats, float16/float32 for fp16 formats; for
// reading back, a type wide enough for every field). `what` names the tensor in messages.
Status check_pixel_tensor(const ConstTensorView& t, const PixelFormatInfo& f, uint32_t width,
                          uint32_t height, bool reading_back, const char* what);

// The field value of host element p for component c of format f, or false if the value does
// not fit the field (then *field is untouched). The host type must have passed
// check_pixel_tensor.
bool host_to_field(const PixelFormatInfo& f, HostType type, const void* p, const PixelComponent& c,
                   uint32_t* field);

// Finds the first host element that does not fit its field; the message names it.
Status check_pixel_values(const ConstTensorView& t, const PixelFormatInfo& f, const char* what);

}  // namespace nvdla::detail
