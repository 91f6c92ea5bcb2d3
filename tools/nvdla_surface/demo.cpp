#include "demo.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <vector>

#include "nvdla/formats/auxiliary.hpp"
#include "nvdla/formats/dmp.hpp"
#include "nvdla/formats/feature.hpp"
#include "nvdla/formats/pixel.hpp"
#include "nvdla/formats/weights.hpp"
#include "nvdla/hw_config.hpp"
#include "pgm.hpp"

namespace nvdla::tools {
namespace {

int g_failures = 0;

void check(bool ok, const char* what) {
    std::printf("   %-52s %s\n", what, ok ? "ok" : "FAILED");
    if (!ok) ++g_failures;
}

std::string features_of(const HwConfig& c) {
    std::string s;
    const std::pair<uint32_t, const char*> names[] = {
        {NVDLA_FEATURE_WINOGRAD, "winograd"},   {NVDLA_FEATURE_WEIGHT_COMPRESSION, "compression"},
        {NVDLA_FEATURE_BDMA, "bdma"},           {NVDLA_FEATURE_RUBIK, "rubik"},
        {NVDLA_FEATURE_SDP_LUT, "lut"},         {NVDLA_FEATURE_SDP_EW, "ew"},
        {NVDLA_FEATURE_SECONDARY_MEMIF, "sram"}};
    for (auto [bit, name] : names)
        if (nvdla_hw_has(&c, bit)) s += (s.empty() ? "" : " ") + std::string(name);
    return s;
}

void hexdump(const std::vector<std::byte>& bytes, uint64_t offset, size_t n) {
    std::printf("   @%-6llu", static_cast<unsigned long long>(offset));
    for (size_t i = 0; i < n && offset + i < bytes.size(); ++i)
        std::printf("%s%02x", i % 8 == 0 ? "  " : " ", static_cast<unsigned>(bytes[offset + i]));
    std::printf("\n");
}

GrayImage load_digit(const std::string& shared_dir) {
    const auto path = std::filesystem::path(shared_dir) / "vectors/images/seven.pgm";
    auto img = read_pgm(path);
    if (img.ok()) {
        std::printf("Input: %s (%ux%u, 8-bit grey)\n", path.c_str(), img->width, img->height);
        return *img;
    }
    std::printf("Input: %s not readable (%s); using a generated 28x28 ramp\n", path.c_str(),
                img.message().c_str());
    GrayImage ramp{28, 28, std::vector<uint8_t>(28 * 28)};
    for (uint32_t i = 0; i < ramp.pixels.size(); ++i)
        ramp.pixels[i] = static_cast<uint8_t>((i * 7) % 256);
    return ramp;
}

void draw(const GrayImage& img) {
    const char* shades = " .:-=+*#%@";
    for (uint32_t y = 0; y < img.height; y += 2) {
        std::printf("   ");
        // Dark ink on a light background: draw the ink.
        for (uint32_t x = 0; x < img.width; ++x)
            std::putchar(shades[(255 - img.pixels[y * img.width + x]) * 9 / 255]);
        std::printf("\n");
    }
}

template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
    return a == b;
}

void feature_step(const char* title, const HwConfig& cfg, Precision p, const ConstTensorView& src,
                  const TensorView& back) {
    auto cube = make_feature_cube(cfg, p, src.dims);
    if (!cube.ok()) {
        std::printf("%s: %s\n", title, cube.message().c_str());
        ++g_failures;
        return;
    }
    std::printf("\n%s\n", title);
    std::printf(
        "   %u surface(s) of %u channels, %u-byte atoms, line stride %llu, surface stride %llu,"
        " %llu bytes\n",
        cube->surfaces(), cube->channels_per_surface(), cube->atom_bytes,
        static_cast<unsigned long long>(cube->line_stride),
        static_cast<unsigned long long>(cube->surface_stride),
        static_cast<unsigned long long>(cube->size_bytes()));
    std::vector<std::byte> surface(cube->size_bytes());
    check(pack_feature(src, *cube, surface).ok(), "pack");
    const uint64_t middle = cube->offset(0, 0, src.dims.h / 2, src.dims.w / 2);
    std::printf("   the atom of the centre pixel (channel 0 first, then padding):\n");
    hexdump(surface, middle, std::min<uint32_t>(cube->atom_bytes, 16));
    check(unpack_feature(surface, *cube, back).ok(), "unpack");
}

}  // namespace

void print_config_table(std::ostream& out) {
    char line[200];
    std::snprintf(line, sizeof line, "   %-20s %-5s %5s %8s %7s  %-16s %s\n", "configuration",
                  "map", "atom", "MAC CxK", "CBUF", "precisions", "features");
    out << line;
    for (const HwConfig& c : hw_configs()) {
        std::string precisions;
        for (Precision p : {Precision::Int8, Precision::Int16, Precision::Fp16})
            if (supports(c, p))
                precisions += (precisions.empty() ? "" : ",") + std::string(to_string(p));
        char mac[16];
        std::snprintf(mac, sizeof mac, "%ux%u", c.mac_atomic_c, c.mac_atomic_k);
        std::snprintf(line, sizeof line, "   %-20s %-5s %5u %8s %4uKiB  %-16s %s\n", c.name,
                      c.reg_map == NVDLA_REG_MAP_FULL ? "full" : "small", c.atom_bytes, mac,
                      nvdla_hw_cbuf_bytes(&c) / 1024, precisions.c_str(), features_of(c).c_str());
        out << line;
    }
}

int run_demo(const std::string& shared_dir) {
    std::printf("NVDLA in-memory formats: a walk-through\n\nHardware configurations\n");
    print_config_table(std::cout);
    std::printf("\n");
    const GrayImage img = load_digit(shared_dir);
    draw(img);

    const Dims4 dims{1, 1, img.height, img.width};
    const ConstTensorView grey{img.pixels.data(), img.pixels.size(), HostType::Uint8,
                               HostLayout::NCHW, dims};
    const HwConfig& full = **find_hw_config("nv_full");
    const HwConfig& small = **find_hw_config("nv_small");

    // int8 features hold 0..127: halve the grey levels as a quantiser with scale 0.5 would.
    ConvertOptions half;
    half.quant_scale = 0.5f;
    std::vector<uint8_t> back(img.pixels.size());
    const TensorView back_view{back.data(), back.size(), HostType::Uint8, HostLayout::NCHW, dims};
    auto cube = make_feature_cube(full, Precision::Int8, dims);
    std::vector<std::byte> surface(cube->size_bytes());
    std::printf("\n1. int8 feature cube on nv_full (grey / 2, a quantisation scale of 0.5)\n");
    std::printf(
        "   1 real channel + 31 padding channels per 32-byte atom: %llu bytes for %zu pixels\n",
        static_cast<unsigned long long>(cube->size_bytes()), img.pixels.size());
    check(pack_feature(grey, *cube, surface, half).ok(), "pack");
    hexdump(surface, cube->offset(0, 0, 14, 14), 16);
    check(unpack_feature(surface, *cube, back_view, half).ok(), "unpack");
    size_t exact = 0;
    for (size_t i = 0; i < back.size(); ++i) exact += back[i] == img.pixels[i];
    std::printf(
        "   %zu of %zu grey levels come back exactly; odd ones lose their last bit (x/2 is\n"
        "   rounded half away from zero and saturated at 127)\n",
        exact, back.size());

    std::vector<float> normalised(img.pixels.size()), normalised_back(img.pixels.size());
    for (size_t i = 0; i < img.pixels.size(); ++i) normalised[i] = img.pixels[i] / 255.0f;
    const ConstTensorView fsrc{normalised.data(), normalised.size() * 4, HostType::Float32,
                               HostLayout::NCHW, dims};
    const TensorView fback{normalised_back.data(), normalised_back.size() * 4, HostType::Float32,
                           HostLayout::NCHW, dims};
    feature_step("2. fp16 feature cube on nv_full (grey / 255)", full, Precision::Fp16, fsrc,
                 fback);
    double worst = 0;
    for (size_t i = 0; i < normalised.size(); ++i)
        worst = std::max(worst, double(std::abs(normalised[i] - normalised_back[i])));
    check(worst <= 1.0 / 2048, "fp16 error within half an ulp of 1.0");

    std::vector<uint8_t> small_back(img.pixels.size());
    const ConstTensorView half_grey{img.pixels.data(), img.pixels.size(), HostType::Uint8,
                                    HostLayout::NCHW, dims};
    auto small_cube = make_feature_cube(small, Precision::Int8, dims);
    std::printf("\n3. the same int8 cube on nv_small: 8-byte atoms, %llu bytes (a quarter)\n",
                static_cast<unsigned long long>(small_cube->size_bytes()));
    std::vector<std::byte> small_surface(small_cube->size_bytes());
    check(pack_feature(half_grey, *small_cube, small_surface, half).ok(), "pack");
    check(unpack_feature(
              small_surface, *small_cube,
              {small_back.data(), small_back.size(), HostType::Uint8, HostLayout::NCHW, dims}, half)
                  .ok() &&
              small_back == back,
          "unpack gives what nv_full gave");

    // The image's 28 rows as 28 channels of a 1x1 cube: surface-packed, it reads as a line.
    auto column = make_feature_cube(full, Precision::Int8, {1, 70, 1, 1});
    auto line = as_surface_packed_line(*column);
    std::printf(
        "\n4. a 1x1x70 int8 cube, surface-packed, is a %ux1x%u line of atoms (%llu bytes)\n",
        line->width, line->channels, static_cast<unsigned long long>(line->size_bytes()));
    check(line.ok() && line->size_bytes() == column->size_bytes(), "same bytes in both views");

    auto bn = make_aux_layout(full, AuxKind::BatchNorm, AuxMode::PerChannel, AuxUse::Both,
                              Precision::Int8, Precision::Int16, {1, 40, 1, 1});
    std::printf(
        "\n5. batch-normalization data, 40 channels, int16 ALU+MUL pairs: %u bytes per atom,"
        " %llu bytes\n",
        bn->bytes_per_atom(), static_cast<unsigned long long>(bn->size_bytes()));
    check(bn.ok() && bn->offset(33, 0, 0, 1) == 134, "channel 33's MUL operand at byte 134");

    auto dmp = make_dmp_layout({1, 20, img.height, img.width}, DmpElement::Fp16, false);
    std::printf("\n6. DMP dv-sdk input layout, 20 channels: %u chunks of up to 8, %llu bytes\n",
                dmp->chunks(), static_cast<unsigned long long>(dmp->size_bytes()));
    check(dmp.ok() && dmp->chunks() == 3, "20 channels make 3 chunks");

    // Image input: the digit as a T_R8 pitch-linear surface, converted as the CDMA reads it.
    auto pixels = dense_pixel_surface(full, PixelFormat::R8, img.width, img.height, 5);
    std::printf(
        "\n7. the digit as a T_R8 pitch-linear image, x offset 5: line stride %llu, %llu bytes\n",
        static_cast<unsigned long long>(pixels->planes[0].line_stride),
        static_cast<unsigned long long>(*pixel_surface_bytes(full, *pixels)));
    std::vector<std::byte> image(*pixel_surface_bytes(full, *pixels));
    check(pack_pixels(full, grey, *pixels, image).ok(), "pack pixels");
    PixelConversion cvt;  // int8 = round((pixel - mean) / 2): the CDMA's mean and truncate
    cvt.output = Precision::Int8;
    cvt.convertor = true;
    cvt.mean = true;
    cvt.mean_values = {128, 0, 0, 0};
    cvt.truncate = 1;
    std::vector<int8_t> converted(img.pixels.size());
    check(convert_pixel_surface(
              full, image, *pixels, cvt,
              {converted.data(), converted.size(), HostType::Int8, HostLayout::NCHW, dims})
              .ok(),
          "convert (mean 128, truncate 1) as the CDMA does");
    bool all_match = true;
    for (size_t i = 0; i < img.pixels.size(); ++i) {
        const int d = int(img.pixels[i]) - 128;  // halve, rounding half away from zero
        const int expected = d >= 0 ? (d + 1) / 2 : -((-d + 1) / 2);
        all_match &= converted[i] == std::clamp(expected, -128, 127);
    }
    check(all_match, "every element is round((pixel - 128) / 2)");

    // Weights: eight 3x3 kernels for that single-channel image, in the image-input format.
    std::vector<float> kernels(8 * 1 * 3 * 3);
    for (size_t i = 0; i < kernels.size(); ++i) kernels[i] = float(int(i % 7) - 3);
    WeightFormat wf;
    wf.kind = WeightKind::Image;
    wf.precision = Precision::Int8;
    auto wl = make_weight_layout(full, wf, {8, 1, 3, 3});
    std::printf(
        "\n8. eight 3x3 int8 kernels for it, image-input format: each becomes a 1x3x3 kernel"
        " (pre-extension), %llu bytes padded to 128\n",
        static_cast<unsigned long long>(wl->size_bytes()));
    std::vector<std::byte> weights(wl->size_bytes());
    const ConstTensorView ksrc{
        kernels.data(), kernels.size() * 4, HostType::Float32, HostLayout::NCHW, {8, 1, 3, 3}};
    check(pack_weights(ksrc, *wl, weights).ok(), "pack weights");
    std::vector<float> kernels_back(kernels.size());
    check(unpack_weights(weights, *wl,
                         {kernels_back.data(),
                          kernels_back.size() * 4,
                          HostType::Float32,
                          HostLayout::NCHW,
                          {8, 1, 3, 3}})
                  .ok() &&
              kernels_back == kernels,
          "unpack gives the kernels back");
    std::vector<std::byte> packed(wl->surface.size_bytes()), mask(128), sizes(128);
    auto compressed = compress_weights(full, wl->surface, weights, packed, mask, sizes);
    std::printf(
        "   sparse compression: %llu of %llu elements are non-zero -> %llu weight bytes,"
        " %llu WMB bytes, %llu WGS bytes\n",
        static_cast<unsigned long long>(compressed->nonzero_elements),
        static_cast<unsigned long long>(wl->surface.elements()),
        static_cast<unsigned long long>(compressed->weight_bytes),
        static_cast<unsigned long long>(compressed->mask_bytes),
        static_cast<unsigned long long>(compressed->group_size_bytes));
    std::vector<std::byte> dense(wl->surface.size_bytes());
    check(compressed.ok() &&
              decompress_weights(full, wl->surface, packed, mask, sizes, dense).ok() &&
              dense == weights,
          "decompress gives the dense surface back");

    std::printf("\n%s: %d check(s) failed\n", g_failures ? "FAILED" : "done", g_failures);
    std::printf(
        "Next: `make test` runs every suite; `make bench` measures packing against memcpy;\n"
        "`build/bin/nvdla_surface --help` sizes, packs and unpacks any surface.\n");
    return g_failures ? 1 : 0;
}

}  // namespace nvdla::tools
