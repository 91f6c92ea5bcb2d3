// Image input: CDMA reads a pitch-linear pixel surface, converts every component with the
// per-channel mean, scale and truncation, pads each line left and right with PAD_VALUE, and
// CSC walks the lines with the pre-extended kernels (1 x R x S * channels), optionally
// post-extended. The reference converts and convolves with the test's own loops.
#include <gtest/gtest.h>

#include "conv_test_rig.hpp"
#include "nvdla/formats/pixel.hpp"
#include "nvdla/formats/weights.hpp"

namespace nvdla::emu::conv_test {
namespace {

struct ImageCase {
    const char* config = "nv_full";
    PixelFormat format = PixelFormat::A8B8G8R8;  // components R, G, B, A in the buffer
    uint32_t width = 10, height = 6, kernels = 8, kernel_h = 3, kernel_s = 4;
    uint32_t stride_x = 2, stride_y = 1, pad_left = 2, pad_right = 1, pad_top = 1, pad_bottom = 0;
    uint16_t pad_value = 0x10fb;  // int8 reads -5
    int16_t mean[4] = {100, -20, 7, 255};
    int16_t scale = 3;
    uint32_t truncate = 2;
    uint32_t post_extension = 1;   // 1, 2 or 4
    std::vector<uint8_t> pixels;   // [h][w][4] components
    std::vector<int32_t> weights;  // [k][r][c'] pre-extended, c' = s * 4 + channel

    uint32_t depth() const { return kernel_s * 4; }
    uint32_t out_w() const {
        return ((pad_left + width + pad_right) * 4 - depth()) / (stride_x * 4) + 1;
    }
    uint32_t out_h() const { return (pad_top + height + pad_bottom - kernel_h) / stride_y + 1; }

    // The CDMA's conversion of component value v of channel ch, written plainly.
    int32_t converted(uint32_t v, uint32_t ch) const {
        const int64_t product = (int64_t(v) - mean[ch]) * scale;
        const int64_t q = round_shift(product, truncate);
        return static_cast<int32_t>(q > 127 ? 127 : (q < -128 ? -128 : q));
    }
    int32_t line_element(int32_t y, uint32_t e) const {
        const int32_t pad = static_cast<int8_t>(pad_value & 0xff);
        if (y < 0 || y >= int32_t(height)) return pad;
        const uint32_t px = e / 4, ch = e % 4;
        if (px < pad_left || px >= pad_left + width) return pad;
        return converted(pixels[(size_t(y) * width + px - pad_left) * 4 + ch], ch);
    }
    int64_t sum(uint32_t k, uint32_t oy, uint32_t ox) const {
        int64_t total = 0;
        for (uint32_t r = 0; r < kernel_h; ++r)
            for (uint32_t c = 0; c < depth(); ++c)
                total += int64_t(line_element(int32_t(oy * stride_y + r) - int32_t(pad_top),
                                              ox * stride_x * 4 + c)) *
                         weights[(size_t(k) * kernel_h + r) * depth() + c];
        return total;
    }

    AccumulatorCube run(Rig& rig) {
        const HwConfig& cfg = rig.cfg();
        const PixelSurface s = *dense_pixel_surface(cfg, format, width, height);
        const uint64_t bytes = *pixel_surface_bytes(cfg, s);
        uint8_t* image = rig.region(kDataBase, bytes);
        const ConstTensorView host{
            pixels.data(), pixels.size(), HostType::Uint8, HostLayout::NHWC, {1, 4, height, width}};
        EXPECT_TRUE(pack_pixels(cfg, host, s, {reinterpret_cast<std::byte*>(image), bytes}));

        // Weights: without post-extension the pre-extended kernels are a direct-convolution
        // surface 1 wide (written by hand); with it, the formats library's image layout.
        std::vector<uint8_t> surface;
        if (post_extension == 1) {
            surface =
                dc_weight_surface(cfg, Precision::Int8, kernels, depth(), kernel_h, 1,
                                  [&](uint32_t k, uint32_t c, uint32_t r, uint32_t) {
                                      return weights[(size_t(k) * kernel_h + r) * depth() + c];
                                  });
        } else {
            WeightFormat f{WeightKind::Image, Precision::Int8};
            f.image_channels = 4;
            f.post_extension = post_extension;
            f.stride_x = stride_x;
            f.stride_y = stride_y;
            const auto layout = make_weight_layout(cfg, f, {kernels, 4, kernel_h, kernel_s});
            EXPECT_TRUE(layout) << layout.message();
            std::vector<int8_t> krsc(size_t(kernels) * kernel_h * kernel_s * 4);
            for (size_t i = 0; i < krsc.size(); ++i) krsc[i] = static_cast<int8_t>(weights[i]);
            surface.assign(layout->size_bytes(), 0);
            EXPECT_TRUE(pack_weights(
                {krsc.data(),
                 krsc.size(),
                 HostType::Int8,
                 HostLayout::NHWC,
                 {kernels, 4, kernel_h, kernel_s}},
                *layout, {reinterpret_cast<std::byte*>(surface.data()), surface.size()}));
        }
        std::memcpy(rig.region(kWeightBase, surface.size()), surface.data(), surface.size());

        const uint32_t size = (height - 1) << 16 | (width - 1);
        const uint32_t out_size = (out_h() - 1) << 16 | (out_w() - 1);
        rig.set("CDMA", "D_MISC_CFG", 0);
        rig.set("CDMA", "D_DATAIN_FORMAT", 1 | static_cast<uint32_t>(format) << 8);
        rig.set("CDMA", "D_DATAIN_SIZE_0", size);
        rig.set("CDMA", "D_DATAIN_SIZE_1", 3);
        rig.set("CDMA", "D_DATAIN_SIZE_EXT_0", size);
        rig.set("CDMA", "D_DAIN_RAM_TYPE", 1);
        rig.set("CDMA", "D_DAIN_ADDR_LOW_0", static_cast<uint32_t>(kDataBase));
        rig.set("CDMA", "D_LINE_STRIDE", static_cast<uint32_t>(s.planes[0].line_stride));
        rig.set("CDMA", "D_CVT_CFG", 1 | truncate << 4);
        rig.set("CDMA", "D_CVT_SCALE", static_cast<uint16_t>(scale));
        rig.set("CDMA", "D_MEAN_FORMAT", 1);
        rig.set("CDMA", "D_MEAN_GLOBAL_0", uint16_t(mean[0]) | uint32_t(uint16_t(mean[1])) << 16);
        rig.set("CDMA", "D_MEAN_GLOBAL_1", uint16_t(mean[2]) | uint32_t(uint16_t(mean[3])) << 16);
        rig.set("CDMA", "D_ZERO_PADDING",
                pad_bottom << 24 | pad_top << 16 | pad_right << 8 | pad_left);
        rig.set("CDMA", "D_ZERO_PADDING_VALUE", pad_value);
        rig.set("CDMA", "D_CONV_STRIDE", (stride_y - 1) << 16 | (stride_x - 1));
        rig.set("CDMA", "D_WEIGHT_SIZE_0", kernel_h * depth() - 1);
        rig.set("CDMA", "D_WEIGHT_SIZE_1", kernels - 1);
        rig.set("CDMA", "D_WEIGHT_RAM_TYPE", 1);
        rig.set("CDMA", "D_WEIGHT_ADDR_LOW", static_cast<uint32_t>(kWeightBase));
        rig.set("CDMA", "D_WEIGHT_BYTES", static_cast<uint32_t>(surface.size()));
        rig.set("CSC", "D_MISC_CFG", 0);
        rig.set("CSC", "D_DATAIN_FORMAT", 1);
        rig.set("CSC", "D_DATAIN_SIZE_EXT_0", size);
        rig.set("CSC", "D_DATAIN_SIZE_EXT_1", 3);
        rig.set("CSC", "D_POST_Y_EXTENSION", post_extension == 4 ? 2 : post_extension - 1);
        rig.set("CSC", "D_WEIGHT_SIZE_EXT_0", (kernel_h - 1) << 16);
        rig.set("CSC", "D_WEIGHT_SIZE_EXT_1", (kernels - 1) << 16 | (depth() - 1));
        rig.set("CSC", "D_DATAOUT_SIZE_0", out_size);
        rig.set("CSC", "D_DATAOUT_SIZE_1", kernels - 1);
        rig.set("CSC", "D_CONV_STRIDE_EXT", (stride_y - 1) << 16 | (stride_x - 1));
        rig.set("CSC", "D_ZERO_PADDING", pad_top << 16 | pad_left);
        rig.set("CSC", "D_ZERO_PADDING_VALUE", pad_value);
        rig.set("CMAC_A", "D_MISC_CFG", 0);
        rig.set("CMAC_B", "D_MISC_CFG", 0);
        rig.set("CACC", "D_MISC_CFG", 0);
        rig.set("CACC", "D_DATAOUT_SIZE_0", out_size);
        rig.set("CACC", "D_DATAOUT_SIZE_1", kernels - 1);
        // Whole padded lines of 4 one-byte components in the buffer's entries.
        const uint32_t entry = cbuf_geometry(cfg).entry_bytes;
        rig.buffer(((pad_left + width + pad_right) * 4 + entry - 1) / entry, height);
        return rig.execute();
    }

    void check(Rig& rig) {
        auto rng = test::rng_for_test();
        for (int v : test::random_vector<int>(rng, size_t(width) * height * 4, 0, 255))
            pixels.push_back(static_cast<uint8_t>(v));
        weights =
            test::random_vector<int32_t>(rng, size_t(kernels) * kernel_h * depth(), -128, 127);
        const AccumulatorCube out = run(rig);
        ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
        ASSERT_EQ(out.planar().size(), size_t(kernels) * out_w() * out_h());
        for (uint32_t k = 0; k < kernels; ++k)
            for (uint32_t y = 0; y < out_h(); ++y)
                for (uint32_t x = 0; x < out_w(); ++x)
                    ASSERT_EQ(out.at(0, k, y, x), sum(k, y, x))
                        << "k " << k << " y " << y << " x " << x;
    }
};

TEST(ConvImage, A8B8G8R8WithMeanScaleAndPadding) {
    ImageCase c;
    Rig rig(c.config);
    c.check(rig);
}

TEST(ConvImage, PostExtensionByTwoAndFourGivesTheSameSums) {
    for (uint32_t f : {2u, 4u}) {
        ImageCase c;
        c.post_extension = f;
        c.kernel_h = 5;  // a last row group shorter than the factor
        c.kernel_s = f == 4 ? 2 : 4;
        Rig rig(c.config);
        c.check(rig);
    }
}

TEST(ConvImage, NvSmallAtoms) {
    ImageCase c;
    c.config = "nv_small";
    c.format = PixelFormat::R8G8B8A8;
    c.kernel_s = 3;
    c.pad_left = 0, c.pad_right = 2;
    Rig rig(c.config);
    c.check(rig);
}

TEST(ConvImage, UnknownPixelFormatIsAnError) {
    ImageCase c;
    Rig rig(c.config);
    c.pixels.assign(size_t(c.width) * c.height * 4, 1);
    c.weights.assign(size_t(c.kernels) * c.kernel_h * c.depth(), 1);
    c.run(rig);
    rig.set("CDMA", "D_DATAIN_FORMAT", 1 | 40u << 8);
    EXPECT_TRUE(rig.execute().empty());
    EXPECT_NE(rig.stats().last_error.find("PIXEL_FORMAT"), std::string::npos)
        << rig.stats().last_error;
}

// The C model converts into elements of IN_PRECISION's size: only the format's own is valid.
TEST(ConvImage, InputPrecisionMustBeTheFormats) {
    ImageCase c;
    Rig rig(c.config);
    c.pixels.assign(size_t(c.width) * c.height * 4, 1);
    c.weights.assign(size_t(c.kernels) * c.kernel_h * c.depth(), 1);
    c.run(rig);
    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    rig.set("CDMA", "D_MISC_CFG", 1u << 8);  // int16 elements for an 8-bit format
    EXPECT_TRUE(rig.execute().empty());
    EXPECT_EQ(rig.stats().programming_errors, 1u);
    EXPECT_NE(rig.stats().last_error.find("IN_PRECISION"), std::string::npos)
        << rig.stats().last_error;
}

}  // namespace
}  // namespace nvdla::emu::conv_test
