// Pixel (image input) formats: the 36 formats the CDMA reads in image-input mode, their
// pitch-linear surfaces, and the conversion the CDMA applies while it reads them.
//
// The table follows the seed's "Pixel formats and valid setting"; the component layouts are
// those the nv_full C model's image path unpacks (cmod/cdma/NV_NVDLA_cdma.cpp), written as
// bit fields of each plane's little-endian pixel word. docs/formats/pixel.md has the table,
// the layout rules and the sources.
//
// A pitch-linear surface is one or two planes. Pixel x of line y of plane p is at
//
//     planes[p].offset + y * planes[p].line_stride + (x_offset_p + x) * bytes_per_pixel[p]
//
// where x_offset_0 is the PIXEL_X_OFFSET register and x_offset_1 (the U/V plane of the
// semi-planar formats) is the same offset taken modulo the pixels of one atom, as the
// hardware does (both plane starts are atom-aligned addresses of the same image column).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "nvdla/api.hpp"
#include "nvdla/formats/convert.hpp"
#include "nvdla/hw_config.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla {

// CDMA D_DATAIN_FORMAT.PIXEL_FORMAT values. Names drop the "T_" prefix and squeeze the
// seed's "___" to "_" (C++ reserves double underscores); to_string gives the seed's name.
enum class PixelFormat : uint8_t {
    R8 = 0,
    R10 = 1,
    R12 = 2,
    R16 = 3,
    R16_I = 4,
    R16_F = 5,
    A16B16G16R16 = 6,
    X16B16G16R16 = 7,
    A16B16G16R16_F = 8,
    A16Y16U16V16 = 9,
    V16U16Y16A16 = 10,
    A16Y16U16V16_F = 11,
    A8B8G8R8 = 12,
    A8R8G8B8 = 13,
    B8G8R8A8 = 14,
    R8G8B8A8 = 15,
    X8B8G8R8 = 16,
    X8R8G8B8 = 17,
    B8G8R8X8 = 18,
    R8G8B8X8 = 19,
    A2B10G10R10 = 20,
    A2R10G10B10 = 21,
    B10G10R10A2 = 22,
    R10G10B10A2 = 23,
    A2Y10U10V10 = 24,
    V10U10Y10A2 = 25,
    A8Y8U8V8 = 26,
    V8U8Y8A8 = 27,
    Y8_U8V8_N444 = 28,
    Y8_V8U8_N444 = 29,
    Y10_U10V10_N444 = 30,
    Y10_V10U10_N444 = 31,
    Y12_U12V12_N444 = 32,
    Y12_V12U12_N444 = 33,
    Y16_U16V16_N444 = 34,
    Y16_V16U16_N444 = 35,
};

inline constexpr uint32_t kPixelFormatCount = 36;

enum class PixelChannel : uint8_t { R, G, B, A, X, Y, U, V };

// How the CDMA reads a format's elements (the RTL's pixel precision): unsigned 8-bit,
// unsigned 16-bit, signed 16-bit or fp16. Integer elements are really read as unsigned or
// signed according to PixelConversion::sign_override, not this class; the class says which
// setting the format is meant for (only T_R16_I is signed).
enum class PixelPrecision : uint8_t { Uint8, Uint16, Int16, Fp16 };

// One component: a bit field of the little-endian pixel word of a plane.
struct PixelComponent {
    PixelChannel channel;
    uint8_t plane;       // 0, or 1 for U and V of the semi-planar (N444) formats
    uint8_t bit_offset;  // lowest bit of the field in the plane's pixel word
    uint8_t bits;        // width of the field in memory
};

struct PixelFormatInfo {
    PixelFormat format;
    std::string_view name;  // the seed's name, e.g. "T_Y8___U8V8_N444"
    uint8_t planes;
    uint8_t channels;                        // the valid DATAIN_CHANNEL setting
    std::array<uint8_t, 2> bytes_per_pixel;  // per plane; 0 for a plane the format lacks
    Precision input_precision;               // the valid IN_PRECISION setting
    PixelPrecision pixel_precision;
    uint8_t significant_bits;  // 8, 10, 12 or 16: bits of information per colour component
    uint8_t max_x_offset;      // the seed's x offset range is 0..max_x_offset (32-byte atoms)
    // Components in channel order, the order the CDMA writes them to the convolution buffer:
    // R,G,B,A / Y,U,V,A / R,G,B,X. Only the first `channels` entries are used.
    std::array<PixelComponent, 4> components;

    // Bits the CDMA shifts a component left by to form its 8- or 16-bit element: 6 for the
    // 10-bit fields of the packed formats, 14 for their 2-bit alpha, 0 otherwise.
    // channel < channels.
    constexpr uint32_t element_shift(uint32_t channel) const {
        return bytes_per_element(input_precision) * 8 - components[channel].bits;
    }
};

// Every format, in hardware-enum order (the seed's table order).
NVDLA_API std::span<const PixelFormatInfo> pixel_formats();
// f must be one of the enumerators; any other value gets T_R8's row (functions that take a
// PixelSurface or check a conversion report such a value as an error instead).
NVDLA_API const PixelFormatInfo& pixel_format_info(PixelFormat f);
// By the seed's name ("T_A8B8G8R8"); the "T_" prefix may be left out, case is ignored.
NVDLA_API Result<const PixelFormatInfo*> find_pixel_format(std::string_view name);
// By the value of the PIXEL_FORMAT register field.
NVDLA_API Result<const PixelFormatInfo*> find_pixel_format(uint32_t hw_value);

NVDLA_API std::string_view to_string(PixelFormat f);
NVDLA_API std::string_view to_string(PixelChannel c);
NVDLA_API std::string_view to_string(PixelPrecision p);

// Largest PIXEL_X_OFFSET on cfg: one atom of plane 0 minus one pixel. On 32-byte-atom
// configurations this is the seed's range; the nv_small family masks the offset to its
// smaller atom (master RTL NV_NVDLA_CDMA_IMG_ctrl.v).
NVDLA_API uint32_t max_pixel_x_offset(const HwConfig& cfg, PixelFormat f);

struct PixelPlane {
    uint64_t offset = 0;       // start address of the plane, relative to a 32-byte-aligned buffer
    uint64_t line_stride = 0;  // D_LINE_STRIDE for plane 0, D_LINE_UV_STRIDE for plane 1
};

// The region of an image the CDMA reads: width x height pixels starting x_offset pixels after
// each line's (aligned) start.
struct PixelSurface {
    PixelFormat format = PixelFormat::R8;
    uint32_t width = 1, height = 1;      // DATAIN_WIDTH + 1, DATAIN_HEIGHT + 1
    uint32_t x_offset = 0;               // PIXEL_X_OFFSET
    std::array<PixelPlane, 2> planes{};  // planes[1] only for the semi-planar formats
};

// Largest width and height (13-bit "size minus one" fields).
inline constexpr uint32_t kMaxPixelExtent = 8192;

// Pixel offset of the first pixel of plane p's lines (x_offset for plane 0; for plane 1, the
// offset modulo the pixels of one atom).
NVDLA_API uint32_t pixel_plane_x_offset(const HwConfig& cfg, const PixelSurface& s, unsigned plane);

// Bytes a line of plane p must hold: from the line start through the last pixel. The
// hardware rejects a line stride smaller than this (C model ImageConvDataRequestSequencerCommon).
NVDLA_API uint64_t min_pixel_line_stride(const HwConfig& cfg, const PixelSurface& s,
                                         unsigned plane);

// Checks s against the seed's rules: width and height 1..8192; x offset within range; each
// plane's start address and line stride aligned to an atom (check_alignment(PitchLinearPixel));
// each line stride at least min_pixel_line_stride and below 2^32; the planes' pixels disjoint.
NVDLA_API Status check_pixel_surface(const HwConfig& cfg, const PixelSurface& s);

// Bytes from the buffer start through the last byte the CDMA reads: the last line of each
// plane rounded up to a whole atom (it reads whole atoms). Fails if s is invalid.
NVDLA_API Result<uint64_t> pixel_surface_bytes(const HwConfig& cfg, const PixelSurface& s);

// A surface with the smallest 32-byte-aligned line strides, plane 0 at offset 0 and plane 1
// (if any) right after it.
NVDLA_API Result<PixelSurface> dense_pixel_surface(const HwConfig& cfg, PixelFormat f,
                                                   uint32_t width, uint32_t height,
                                                   uint32_t x_offset = 0);

// Packs component values into the surface's pixels. src has dims {1, channels, height, width}
// (NCHW = CHW or NHWC = HWC), channels in the format's channel order. Integer formats take
// integer host types: a signed type's values are stored as two's complement fields
// (-2^(bits-1)..2^(bits-1)-1), an unsigned type's as 0..2^bits-1; anything else is an error.
// fp16 formats take float16 (copied bit for bit) or float32 (rounded to nearest even).
// Only the pixels' bytes are written; x offset bytes and bytes past a line are untouched.
// dst must hold pixel_surface_bytes(). On error nothing is written.
NVDLA_API Status pack_pixels(const HwConfig& cfg, const ConstTensorView& src, const PixelSurface& s,
                             ByteSpan dst);

// The inverse of pack_pixels: reads the components back. dst's host type must hold every
// field (a signed type reads fields as two's complement). On error nothing is written.
NVDLA_API Status unpack_pixels(const HwConfig& cfg, ConstByteSpan src, const PixelSurface& s,
                               const TensorView& dst);

// The image-input registers of the CDMA that decide how pixels become int8/int16/fp16.
struct PixelConversion {
    Precision output = Precision::Int8;    // D_MISC_CFG.PROC_PRECISION
    bool convertor = false;                // D_CVT_CFG.CVT_EN
    int16_t offset = 0;                    // D_CVT_OFFSET
    int16_t scale = 1;                     // D_CVT_SCALE
    uint8_t truncate = 0;                  // D_CVT_CFG.CVT_TRUNCATE, 0..63
    bool mean = false;                     // D_MEAN_FORMAT: the channel's mean replaces offset
    std::array<int16_t, 4> mean_values{};  // D_MEAN_GLOBAL: RY, GU, BV, AX (channel order)
    bool sign_override = false;            // D_DATAIN_FORMAT.PIXEL_SIGN_OVERRIDE: signed pixels
    bool nan_to_zero = false;              // D_NAN_FLUSH_TO_ZERO: fp16 NaN pixels read as +0
    // When set, adds the elements that saturated and the fp16 NaN pixels read.
    ConversionStats* stats = nullptr;
};

// Checks the precision combination against the seed's table "Precision conversion for
// convolutional layer" (integer images -> int8/int16/fp16, fp16 images -> fp16 only), that a
// change of precision has the convertor enabled (the RTL asserts it), and truncate <= 63.
NVDLA_API Status check_pixel_conversion(PixelFormat f, const PixelConversion& c);
// The same, and that cfg's datapath has both the format's and the output's precision.
NVDLA_API Status check_pixel_conversion(const HwConfig& cfg, PixelFormat f,
                                        const PixelConversion& c);

// The element the CDMA reads for a component value: the field shifted to the top of its
// 8- or 16-bit element (the packed 10-bit formats) or unchanged.
NVDLA_API uint16_t pixel_element(PixelFormat f, uint32_t channel, uint32_t component);

// The CDMA's conversion of one element of `channel` (C model hls_convertor / cdma_cvt.cpp):
//   integer image, convertor on:
//       x   = element zero- or sign-extended (sign_override) to 17 bits
//       v   = round_half_away((x - (mean ? mean_values[channel] : offset)) * scale / 2^truncate)
//             saturated to 17 bits
//       out = v saturated to int8/int16, or v converted to fp16 (nearest even, +-65504 on overflow)
//   convertor off: the element's bits as the output precision (they must match);
//   fp16 image: the element unchanged (NaN -> +0 with nan_to_zero); mean and convertor unused.
// Returns the output's bits: int8 sign-extended to 16 bits, int16 or fp16 as they are.
// Expects a combination check_pixel_conversion accepts.
NVDLA_API uint16_t convert_pixel_element(PixelFormat f, const PixelConversion& c, uint32_t channel,
                                         uint16_t element);

// Reads a pitch-linear surface the way the CDMA does in image-input mode and writes the
// converted elements to dst (dims {1, channels, height, width}, NCHW or NHWC). dst of type
// int8, int16 or float16 receives the elements bit for bit; other types get their values.
// On error nothing is written.
NVDLA_API Status convert_pixel_surface(const HwConfig& cfg, ConstByteSpan src,
                                       const PixelSurface& s, const PixelConversion& c,
                                       const TensorView& dst);

// The same conversion applied to component values (the host tensor pack_pixels takes).
NVDLA_API Status convert_pixel_channels(PixelFormat f, const PixelConversion& c,
                                        const ConstTensorView& src, const TensorView& dst);

}  // namespace nvdla
