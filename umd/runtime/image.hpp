// Image input: PGM/PPM, PNG and JPEG files decoded into samples, and samples converted into a
// network's input tensor with the original nvdla_runtime's rules (docs/images.md).
//
//   Result<Image> image = read_image("digit.pgm");
//   InputTensorLayout in{InputFormat::Feature, Precision::Fp16, {1, 1, 28, 28}, 64, 1792, 1792};
//   Status s = convert_image(*image, cfg, in, {}, buffer);
//
// Decoding never resizes and never changes sample values (no gamma, no colour management);
// converting fails when the image's size is not the tensor's. Every malformed file gives a
// sentence naming the format and what is wrong with it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nvdla/hw_config.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla::runtime {

enum class ImageFileType : uint8_t { Pnm, Png, Jpeg };
std::string_view to_string(ImageFileType t);

// Order of a colour image's channels. The original runtime decodes colour JPEGs as BGR (the
// Caffe convention); every colour image is BGR by default here, whatever its file type.
enum class ColorOrder : uint8_t { Bgr, Rgb };

// Largest width or height an image may have by default: no NVDLA input is larger (13-bit
// size fields), and the limit bounds what a hostile file can make the decoder allocate.
inline constexpr uint32_t kMaxImageExtent = 8192;

struct ImageDecodeOptions {
    ColorOrder order = ColorOrder::Bgr;
    bool keep_alpha = false;  // PNG alpha (and tRNS transparency) as the last channel
    uint32_t max_extent = kMaxImageExtent;
};

// A decoded image: height x width pixels of `channels` interleaved samples, 0..max_value.
struct Image {
    ImageFileType type = ImageFileType::Pnm;
    uint32_t width = 0, height = 0;
    uint32_t channels = 0;   // 1 grey, 2 grey + alpha, 3 colour, 4 colour + alpha
    uint32_t max_value = 0;  // 255 for 8-bit samples, 65535 for 16-bit; a PNM's maxval
    ColorOrder order = ColorOrder::Bgr;
    std::vector<uint16_t> samples;  // [(y * width + x) * channels + c]

    uint16_t at(uint32_t x, uint32_t y, uint32_t c) const {
        return samples[(size_t(y) * width + x) * channels + c];
    }
    // "28 x 28 grey, 8-bit PGM" / "640 x 480 BGR, 8-bit JPEG".
    std::string describe() const;
};

// Decodes a whole file held in memory; the type is recognised by its first bytes.
Result<Image> decode_image(ConstByteSpan file, const ImageDecodeOptions& options = {});
// Reads and decodes a file; errors start with "image <path>: ".
Result<Image> read_image(const std::string& path, const ImageDecodeOptions& options = {});

// The layouts an image can be converted into: the original runtime's set of input pixel
// formats (the loadable's TensorDesc.pixelFormat).
enum class InputFormat : uint8_t {
    R8,              // pitch-linear, 1 byte per pixel (pixel format 0)
    A16B16G16R16_F,  // pitch-linear, 4 fp16 components per pixel (8)
    A8B8G8R8,        // pitch-linear, 4 bytes per pixel (12)
    Feature,         // feature cube with 32-byte atoms: 32 int8 or 16 fp16 channels (36)
    FeatureX8,       // feature cube with nv_small's 8-byte atoms: 8 int8 channels (37)
};
std::string_view to_string(InputFormat f);
// From the loadable's pixel-format number; an error names the formats that are supported.
Result<InputFormat> input_format_from_pixel_format(uint32_t pixel_format);

// An input tensor as the loadable describes it.
struct InputTensorLayout {
    InputFormat format = InputFormat::Feature;
    Precision precision = Precision::Int8;  // int8 or fp16 (the tensor's data type)
    Dims4 dims;                             // n must be 1
    uint64_t line_stride = 0;               // bytes; 0 = packed
    uint64_t surface_stride = 0;            // bytes, feature formats only; 0 = packed
    uint64_t size = 0;                      // bytes of the tensor's buffer; 0 = what it needs
};

// The original runtime's --mean and --normalize.
struct ImageConversion {
    std::array<float, 4> mean{};  // per image channel
    float normalize = 1.0f;       // > 0
};

// Bytes convert_image writes for `layout` on `cfg` (the buffer must hold at least this), or
// why the layout cannot be written (strides too small or misaligned, unsupported precision).
Result<uint64_t> input_tensor_bytes(const HwConfig& cfg, const InputTensorLayout& layout);

// Writes `image` into dst as the input tensor `layout` of a network for `cfg`:
//   fp16: (x - mean[c]) / normalize, rounded to nearest with ties away from zero (as the
//         original's half_float library), x the sample value;
//   int8: floor(x * 127 / max_value + 0.5), mean and normalize ignored (the original's rule
//         for 8-bit images, max_value 255).
// Image channel c goes to tensor channel c; tensor channels the image lacks are zero, as is
// every byte of the buffer not written (the whole buffer is cleared first). Fails before
// writing anything when the sizes differ, the image has more channels than the tensor, the
// format and precision do not go together, the layout is invalid or dst is too small.
Status convert_image(const Image& image, const HwConfig& cfg, const InputTensorLayout& layout,
                     const ImageConversion& conversion, ByteSpan dst);

// float -> fp16 rounding to nearest, ties away from zero (half_float's default rounding, which
// the original runtime used); overflow gives infinity.
uint16_t fp16_round_ties_away(float value);

}  // namespace nvdla::runtime
