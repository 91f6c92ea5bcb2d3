// Image files the image tests write themselves: PNM text, PNG through libpng, JPEG through
// libjpeg, all in memory. Inputs are always valid here, so the libraries' default error
// handling (abort) never triggers.
#pragma once

#include <cstdio>
// clang-format off
#include <jpeglib.h>
// clang-format on
#include <png.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace nvdla::test {

inline std::vector<std::byte> bytes_of(const std::string& s) {
    std::vector<std::byte> out(s.size());
    std::memcpy(out.data(), s.data(), s.size());
    return out;
}

// A PNM file: the header text then raw bytes.
inline std::vector<std::byte> pnm(const std::string& header, const std::vector<uint8_t>& raster) {
    std::vector<std::byte> out = bytes_of(header);
    for (uint8_t b : raster) out.push_back(std::byte{b});
    return out;
}

struct PngSpec {
    uint32_t width = 1, height = 1;
    int bit_depth = 8;
    int color_type = PNG_COLOR_TYPE_GRAY;
    bool interlaced = false;
    std::vector<png_color> palette;  // PNG_COLOR_TYPE_PALETTE
    std::vector<uint8_t> trns;       // palette alpha, or for grey the first entry as the value
    std::vector<uint8_t> rows;       // packed rows as PNG stores them (big-endian 16-bit)
};

inline std::vector<std::byte> encode_png(const PngSpec& spec) {
    std::vector<std::byte> out;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png_create_info_struct(png);
    png_set_write_fn(
        png, &out,
        [](png_structp p, png_bytep data, size_t n) {
            auto* v = static_cast<std::vector<std::byte>*>(png_get_io_ptr(p));
            const auto* b = reinterpret_cast<const std::byte*>(data);
            v->insert(v->end(), b, b + n);
        },
        [](png_structp) {});
    png_set_IHDR(png, info, spec.width, spec.height, spec.bit_depth, spec.color_type,
                 spec.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (!spec.palette.empty())
        png_set_PLTE(png, info, spec.palette.data(), static_cast<int>(spec.palette.size()));
    if (!spec.trns.empty()) {
        if (spec.color_type == PNG_COLOR_TYPE_PALETTE) {
            png_set_tRNS(png, info, spec.trns.data(), static_cast<int>(spec.trns.size()), nullptr);
        } else {
            png_color_16 value{};
            value.gray = spec.trns[0];
            png_set_tRNS(png, info, nullptr, 0, &value);
        }
    }
    png_write_info(png, info);
    const size_t row_bytes = png_get_rowbytes(png, info);
    std::vector<png_bytep> rows(spec.height);
    std::vector<uint8_t> copy = spec.rows;
    copy.resize(row_bytes * spec.height);
    for (uint32_t y = 0; y < spec.height; ++y) rows[y] = copy.data() + y * row_bytes;
    png_write_image(png, rows.data());
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    return out;
}

struct JpegSpec {
    uint32_t width = 8, height = 8;
    int components = 1;  // 1 grey, 3 RGB, 4 CMYK
    int quality = 100;
    bool progressive = false;
    std::vector<uint8_t> pixels;  // interleaved rows
};

inline std::vector<std::byte> encode_jpeg(const JpegSpec& spec) {
    jpeg_compress_struct cinfo{};
    jpeg_error_mgr err{};
    cinfo.err = jpeg_std_error(&err);
    jpeg_CreateCompress(&cinfo, JPEG_LIB_VERSION, sizeof(cinfo));
    unsigned char* buffer = nullptr;
    unsigned long size = 0;
    jpeg_mem_dest(&cinfo, &buffer, &size);
    cinfo.image_width = spec.width;
    cinfo.image_height = spec.height;
    cinfo.input_components = spec.components;
    cinfo.in_color_space = spec.components == 1   ? JCS_GRAYSCALE
                           : spec.components == 3 ? JCS_RGB
                                                  : JCS_CMYK;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, spec.quality, TRUE);
    if (spec.progressive) jpeg_simple_progression(&cinfo);
    jpeg_start_compress(&cinfo, TRUE);
    std::vector<uint8_t> pixels = spec.pixels;
    pixels.resize(size_t(spec.width) * spec.height * spec.components);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = pixels.data() + size_t(cinfo.next_scanline) * spec.width * spec.components;
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    std::vector<std::byte> out(size);
    std::memcpy(out.data(), buffer, size);
    std::free(buffer);
    return out;
}

// libjpeg's own decode of a valid file with the original runtime's settings (JDCT_ISLOW,
// colour as BGR or RGB): what the runtime's decoder must produce exactly.
inline std::vector<uint8_t> reference_jpeg_decode(const std::vector<std::byte>& file, bool bgr,
                                                  uint32_t* channels) {
    jpeg_decompress_struct cinfo{};
    jpeg_error_mgr err{};
    cinfo.err = jpeg_std_error(&err);
    jpeg_CreateDecompress(&cinfo, JPEG_LIB_VERSION, sizeof(cinfo));
    jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(file.data()), file.size());
    jpeg_read_header(&cinfo, TRUE);
    if (cinfo.jpeg_color_space != JCS_GRAYSCALE)
        cinfo.out_color_space = bgr ? JCS_EXT_BGR : JCS_EXT_RGB;
    cinfo.dct_method = JDCT_ISLOW;
    jpeg_start_decompress(&cinfo);
    *channels = static_cast<uint32_t>(cinfo.output_components);
    const size_t stride = size_t(cinfo.output_width) * cinfo.output_components;
    std::vector<uint8_t> out(stride * cinfo.output_height);
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = out.data() + cinfo.output_scanline * stride;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return out;
}

}  // namespace nvdla::test
