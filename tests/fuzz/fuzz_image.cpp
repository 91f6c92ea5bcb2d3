// libFuzzer target: image decoding (PGM/PPM, PNG through libpng, JPEG through libjpeg) and,
// for every image that decodes, its conversion into the input layouts its size allows.
//
// A decode may fail (that is what malformed files do) but must return a sentence; a decoded
// image must be consistent, and converting it into a tensor of its own size must succeed.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "runtime/image.hpp"

namespace {

using nvdla::runtime::Image;
using nvdla::runtime::InputFormat;
using nvdla::runtime::InputTensorLayout;

[[noreturn]] void fail(const char* what, const std::string& message) {
    std::fprintf(stderr, "fuzz_image: %s: %s\n", what, message.c_str());
    std::abort();
}

void convert(const Image& image, const nvdla::HwConfig& cfg, const InputTensorLayout& layout) {
    nvdla::Result<uint64_t> bytes = nvdla::runtime::input_tensor_bytes(cfg, layout);
    if (!bytes) fail("input_tensor_bytes", bytes.message());
    std::vector<std::byte> out(*bytes);
    const nvdla::runtime::ImageConversion conversion{{1.5f, -2, 100, 7}, 3.0f};
    nvdla::Status s = nvdla::runtime::convert_image(image, cfg, layout, conversion, out);
    if (!s) fail("convert_image", s.message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    nvdla::runtime::ImageDecodeOptions options;
    options.max_extent = 256;  // bounds the work per input; the limit itself is tested
    options.keep_alpha = size % 2 == 1;
    options.order =
        size % 3 == 0 ? nvdla::runtime::ColorOrder::Rgb : nvdla::runtime::ColorOrder::Bgr;
    const std::span<const std::byte> file(reinterpret_cast<const std::byte*>(data), size);
    nvdla::Result<Image> decoded = nvdla::runtime::decode_image(file, options);
    if (!decoded) {
        if (decoded.message().empty()) fail("decode_image", "an error without a sentence");
        return 0;
    }
    const Image& image = *decoded;
    if (image.width == 0 || image.height == 0 || image.width > options.max_extent ||
        image.height > options.max_extent || image.channels == 0 || image.channels > 4 ||
        image.max_value == 0 || image.max_value > 65535 ||
        image.samples.size() != size_t(image.width) * image.height * image.channels)
        fail("decode_image", "inconsistent image " + image.describe());
    for (uint16_t v : image.samples)
        if (v > image.max_value) fail("decode_image", "a sample above max_value");

    const nvdla::HwConfig& full = **nvdla::find_hw_config("nv_full");
    const nvdla::HwConfig& small = **nvdla::find_hw_config("nv_small");
    const nvdla::Dims4 dims{1, image.channels, image.height, image.width};
    convert(image, full, {InputFormat::Feature, nvdla::Precision::Fp16, dims, 0, 0, 0});
    convert(image, full, {InputFormat::Feature, nvdla::Precision::Int8, dims, 0, 0, 0});
    convert(image, small, {InputFormat::FeatureX8, nvdla::Precision::Int8, dims, 0, 0, 0});
    convert(image, full, {InputFormat::A8B8G8R8, nvdla::Precision::Int8, dims, 0, 0, 0});
    convert(image, small, {InputFormat::A16B16G16R16_F, nvdla::Precision::Fp16, dims, 0, 0, 0});
    if (image.channels == 1)
        convert(image, small, {InputFormat::R8, nvdla::Precision::Int8, dims, 0, 0, 0});
    return 0;
}
