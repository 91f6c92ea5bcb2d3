// The CDMA image-input conversion: hand-worked examples of mean/offset, scale, truncate with
// round-half-away and saturation, fp16 output, sign override, fp16 images, the precision rules,
// and agreement with an independent reference over random surfaces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "nvdla/formats/pixel.hpp"
#include "nvdla/precision/fp16.hpp"
#include "test_support.hpp"

namespace nvdla {
namespace {

using test::config;
using test::nv_full;

PixelConversion convertor(Precision out, int16_t offset, int16_t scale, uint8_t truncate) {
    PixelConversion c;
    c.output = out;
    c.convertor = true;
    c.offset = offset;
    c.scale = scale;
    c.truncate = truncate;
    return c;
}

int16_t as_int(uint16_t bits) {
    return static_cast<int16_t>(bits);
}

TEST(PixelConvert, OffsetScaleTruncateToInt8) {
    const PixelConversion c = convertor(Precision::Int8, 128, 3, 2);
    // (200 - 128) * 3 = 216; 216 / 4 = 54.
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 200)), 54);
    // (201 - 128) * 3 = 219; 219 / 4 = 54.75 -> 55.
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 201)), 55);
    // (100 - 128) * 3 = -84; -84 / 4 = -21.
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 100)), -21);
}

TEST(PixelConvert, TruncationRoundsHalfAwayFromZero) {
    const PixelConversion c = convertor(Precision::Int8, 128, 1, 1);
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 133)), 3);  // 5 / 2 = 2.5 -> 3
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 131)), 2);  // 3 / 2 = 1.5 -> 2
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 123)),
              -3);  // -5 / 2 = -2.5 -> -3
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 125)),
              -2);  // -3 / 2 = -1.5 -> -2
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 127)),
              -1);  // -1 / 2 = -0.5 -> -1
}

TEST(PixelConvert, SaturatesToTheOutputPrecisionAndCounts) {
    ConversionStats stats;
    PixelConversion c = convertor(Precision::Int8, 0, 1, 0);
    c.stats = &stats;
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 255)), 127);
    c.offset = 200;
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 0)), -128);
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 250)), 50);
    EXPECT_EQ(stats.saturated, 2u);
    // int16: a 16-bit unsigned pixel above 32767 saturates.
    c = convertor(Precision::Int16, 0, 1, 0);
    c.stats = &stats;
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R16, c, 0, 40000)), 32767);
    // The 17-bit intermediate saturates first: (65535 + 32768) * 32767 does not fit, -> 65535,
    // then int16 -> 32767; counted once.
    c.offset = -32768;
    c.scale = 32767;
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R16, c, 0, 65535)), 32767);
    EXPECT_EQ(stats.saturated, 4u);
    // A 63-bit truncate leaves nothing.
    c.scale = -32768;
    c.truncate = 63;
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R16, c, 0, 65535)), 0);
}

TEST(PixelConvert, Int8ImageExpandsToInt16) {
    // (255 - 0) * 300 = 76500 / 2^2 = 19125.
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::A8B8G8R8,
                                           convertor(Precision::Int16, 0, 300, 2), 2, 255)),
              19125);
}

TEST(PixelConvert, MeanReplacesTheOffsetPerChannel) {
    // A8R8G8B8 pixel (R 50, G 60, B 70, A 80) lies in memory as B, G, R, A.
    auto s = dense_pixel_surface(nv_full(), PixelFormat::A8R8G8B8, 1, 1);
    ASSERT_TRUE(s.ok());
    std::vector<std::byte> surface(32);
    surface[0] = std::byte{70};
    surface[1] = std::byte{60};
    surface[2] = std::byte{50};
    surface[3] = std::byte{80};
    PixelConversion c = convertor(Precision::Int8, 1000, 1, 0);
    c.mean = true;
    c.mean_values = {1, 2, 3, 4};  // RY, GU, BV, AX
    std::vector<int8_t> out(4);
    const TensorView dst{out.data(), out.size(), HostType::Int8, HostLayout::NHWC, {1, 4, 1, 1}};
    ASSERT_TRUE(convert_pixel_surface(nv_full(), surface, *s, c, dst).ok());
    EXPECT_EQ(out, (std::vector<int8_t>{49, 58, 67, 76}));  // R-1, G-2, B-3, A-4; offset unused
    // Without the mean the offset applies to every channel: (50 - 40) * 2 = 20 ...
    c.mean = false;
    c.offset = 40;
    c.scale = 2;
    ASSERT_TRUE(convert_pixel_surface(nv_full(), surface, *s, c, dst).ok());
    EXPECT_EQ(out, (std::vector<int8_t>{20, 40, 60, 80}));
}

TEST(PixelConvert, SignOverrideDecidesHowPixelsExtend) {
    // The IAS example: R8 0x87 extends to 0x00087 (135) unsigned, 0x1ff87 (-121) signed.
    PixelConversion c = convertor(Precision::Int16, 0, 1, 0);
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 0x87)), 135);
    c.sign_override = true;
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 0x87)), -121);
    // It applies to 16-bit formats too, T_R16_I included: without it 0xff00 is 65280.
    c = convertor(Precision::Int16, 0, 1, 8);
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R16_I, c, 0, 0xff00)), 255);
    c.sign_override = true;
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R16_I, c, 0, 0xff00)), -1);
}

TEST(PixelConvert, Fp16OutputRoundsToNearestEvenAndSaturates) {
    ConversionStats stats;
    PixelConversion c = convertor(Precision::Fp16, 0, 1, 0);
    c.stats = &stats;
    // 200 = 1.5625 * 2^7: exponent 7 + 15 = 22, mantissa 0.5625 * 1024 = 0x240.
    EXPECT_EQ(convert_pixel_element(PixelFormat::R8, c, 0, 200), 0x5a40);
    // 2049 is halfway between 2048 and 2050: even mantissa -> 2048 = 0x6800.
    EXPECT_EQ(convert_pixel_element(PixelFormat::R16, c, 0, 2049), 0x6800);
    // 2051 is halfway between 2050 and 2052: -> 2052 = 0x6802.
    EXPECT_EQ(convert_pixel_element(PixelFormat::R16, c, 0, 2051), 0x6802);
    // 65519 rounds down to 65504 = 0x7bff; 65520 rounds (to even) up to 65536, which saturates.
    EXPECT_EQ(convert_pixel_element(PixelFormat::R16, c, 0, 65519), 0x7bff);
    EXPECT_EQ(stats.saturated, 0u);
    EXPECT_EQ(convert_pixel_element(PixelFormat::R16, c, 0, 65520), 0x7bff);
    EXPECT_EQ(stats.saturated, 1u);
    // 0 - 100 = -100 = -1.5625 * 2^6: 0xd640. Zero is +0.
    c.offset = 100;
    EXPECT_EQ(convert_pixel_element(PixelFormat::R8, c, 0, 0), 0xd640);
    EXPECT_EQ(convert_pixel_element(PixelFormat::R8, c, 0, 100), 0x0000);
    // -65536 (the int17 minimum) saturates to -65504.
    c = convertor(Precision::Fp16, 0, -1, 0);
    c.offset = -1;  // (65535 + 1) * -1 = -65536
    EXPECT_EQ(convert_pixel_element(PixelFormat::R16, c, 0, 65535), 0xfbff);
}

TEST(PixelConvert, Packed10BitFieldsAreReadAtTheTopOf16Bits) {
    // A2B10G10R10 R = 1023 is read as 1023 << 6 = 65472; A = 3 as 3 << 14 = 49152.
    EXPECT_EQ(pixel_element(PixelFormat::A2B10G10R10, 0, 1023), 0xffc0);
    EXPECT_EQ(pixel_element(PixelFormat::A2B10G10R10, 3, 3), 0xc000);
    EXPECT_EQ(pixel_element(PixelFormat::R10, 0, 1023), 1023);  // 16-bit container, as stored
    const PixelConversion c = convertor(Precision::Int16, 0, 1, 6);
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::A2B10G10R10, c, 0, 0xffc0)), 1023);
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::A2B10G10R10, c, 3, 0xc000)), 768);
}

TEST(PixelConvert, WithoutTheConvertorBitsPassThrough) {
    PixelConversion c;  // int8 out, convertor off
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::R8, c, 0, 200)), -56);  // 0xc8 as int8
    c.output = Precision::Int16;
    c.mean = true;  // the mean needs the convertor
    c.mean_values = {100, 0, 0, 0};
    EXPECT_EQ(as_int(convert_pixel_element(PixelFormat::A2B10G10R10, c, 0, 0xffc0)), -64);
}

TEST(PixelConvert, Fp16ImagesPassThroughWithOptionalNaNFlush) {
    ConversionStats stats;
    PixelConversion c = convertor(Precision::Fp16, 5, 3, 1);  // ignored for fp16 images
    c.mean = true;
    c.mean_values = {7, 7, 7, 7};
    c.stats = &stats;
    EXPECT_EQ(convert_pixel_element(PixelFormat::R16_F, c, 0, 0x3c00), 0x3c00);
    EXPECT_EQ(convert_pixel_element(PixelFormat::R16_F, c, 0, 0x7c00), 0x7c00);  // infinity stays
    EXPECT_EQ(convert_pixel_element(PixelFormat::R16_F, c, 0, 0x7e01), 0x7e01);
    c.nan_to_zero = true;
    EXPECT_EQ(convert_pixel_element(PixelFormat::A16B16G16R16_F, c, 2, 0xfe00), 0x0000);
    EXPECT_EQ(stats.nan, 2u);
}

TEST(PixelConvert, PrecisionCombinationsFollowTheSeedTable) {
    PixelConversion c;
    c.output = Precision::Int8;
    EXPECT_EQ(check_pixel_conversion(PixelFormat::R16_F, c).message(),
              "pixel conversion: T_R16_F is an fp16 image and can only be read as fp16, not int8 "
              "(seed table 'Precision conversion for convolutional layer')");
    c.output = Precision::Int16;
    c.convertor = true;
    EXPECT_FALSE(check_pixel_conversion(PixelFormat::A16Y16U16V16_F, c).ok());
    c.output = Precision::Fp16;
    EXPECT_TRUE(check_pixel_conversion(PixelFormat::A16Y16U16V16_F, c).ok());
    // Every integer format converts to all three with the convertor on.
    for (const PixelFormatInfo& f : pixel_formats()) {
        if (f.input_precision == Precision::Fp16) continue;
        for (Precision out : {Precision::Int8, Precision::Int16, Precision::Fp16}) {
            PixelConversion on;
            on.output = out;
            on.convertor = true;
            EXPECT_TRUE(check_pixel_conversion(f.format, on).ok()) << f.name;
            on.convertor = false;
            EXPECT_EQ(check_pixel_conversion(f.format, on).ok(), out == f.input_precision)
                << f.name;
        }
    }
    PixelConversion off;
    off.output = Precision::Fp16;
    EXPECT_EQ(check_pixel_conversion(PixelFormat::R8, off).message(),
              "pixel conversion: reading T_R8 (int8) as fp16 needs the input convertor (CVT_EN); "
              "without it the output precision must be int8");
    PixelConversion truncate = convertor(Precision::Int8, 0, 1, 64);
    EXPECT_EQ(check_pixel_conversion(PixelFormat::R8, truncate).message(),
              "pixel conversion: truncate 64 is out of range 0..63 (6-bit CVT_TRUNCATE)");
    EXPECT_FALSE(check_pixel_conversion(static_cast<PixelFormat>(40), off).ok());
}

TEST(PixelConvert, PrecisionsMustExistOnTheConfiguration) {
    PixelConversion c = convertor(Precision::Int8, 0, 1, 0);
    EXPECT_TRUE(check_pixel_conversion(config("nv_small"), PixelFormat::R8G8B8A8, c).ok());
    EXPECT_EQ(check_pixel_conversion(config("nv_small"), PixelFormat::R16, c).message(),
              "pixel conversion: nv_small has no int16 datapath, which T_R16 needs");
    c.output = Precision::Fp16;
    EXPECT_EQ(check_pixel_conversion(config("nv_small"), PixelFormat::R8, c).message(),
              "pixel conversion: nv_small has no fp16 datapath to convert T_R8 to");
    EXPECT_TRUE(check_pixel_conversion(nv_full(), PixelFormat::R8, c).ok());
}

// ---- agreement with an independent reference ----------------------------------------------

// The C model's own double-precision checker (hls_convertor): (x - sub) * scale / 2^t rounded
// half away, saturated; fp16 from the rounded value with overflow to +-65504.
uint16_t reference(const PixelFormatInfo& f, const PixelConversion& c, uint32_t ch,
                   uint32_t field) {
    const uint32_t shift = f.element_shift(ch);
    const uint32_t element = field << shift;
    const bool wide = f.input_precision == Precision::Int16;
    double x = wide ? double(element) : double(element & 0xff);
    if (c.sign_override) x = wide ? double(int16_t(element)) : double(int8_t(element & 0xff));
    const double sub = c.mean ? c.mean_values[ch] : c.offset;
    const double v = (x - sub) * c.scale / std::ldexp(1.0, c.truncate);
    double r = v > 0 ? std::floor(v + 0.5) : std::ceil(v - 0.5);
    r = std::clamp(r, -65536.0, 65535.0);
    if (r == 0) r = 0;  // the datapath's zero is +0
    switch (c.output) {
        case Precision::Int8: return uint16_t(int16_t(std::clamp(r, -128.0, 127.0)));
        case Precision::Int16: return uint16_t(int16_t(std::clamp(r, -32768.0, 32767.0)));
        case Precision::Fp16: {
            const uint16_t h = fp16::from_float(static_cast<float>(r));
            return fp16::is_inf(h) ? uint16_t((h & 0x8000) | fp16::kMaxFinite) : h;
        }
    }
    return 0;
}

TEST(PixelConvert, SurfaceConversionMatchesTheReferenceForEveryIntegerFormat) {
    auto rng = test::rng_for_test();
    for (const PixelFormatInfo& f : pixel_formats()) {
        if (f.input_precision == Precision::Fp16) continue;
        for (int i = 0; i < 6; ++i) {
            const uint32_t w = test::random_between(rng, 1, 24),
                           h = test::random_between(rng, 1, 5);
            auto s = dense_pixel_surface(nv_full(), f.format, w, h,
                                         test::random_between(rng, 0, f.max_x_offset));
            ASSERT_TRUE(s.ok()) << s.message();
            PixelConversion c;
            c.output = static_cast<Precision>(test::random_between(rng, 0, 2));
            c.convertor = true;
            c.offset = static_cast<int16_t>(test::random_between(rng, 0, 0xffff));
            c.scale = static_cast<int16_t>(test::random_between(rng, 0, 0xffff));
            c.truncate = static_cast<uint8_t>(test::random_between(rng, 0, 40));
            c.mean = test::random_between(rng, 0, 1);
            for (auto& m : c.mean_values)
                m = static_cast<int16_t>(test::random_between(rng, 0, 0xffff));
            c.sign_override = test::random_between(rng, 0, 1);
            SCOPED_TRACE(::testing::Message() << f.name << " case " << i);

            std::vector<uint16_t> fields(size_t(f.channels) * h * w);  // HWC
            for (size_t k = 0; k < fields.size(); ++k)
                fields[k] = static_cast<uint16_t>(
                    test::random_between(rng, 0, (1u << f.components[k % f.channels].bits) - 1));
            const ConstTensorView src{fields.data(),
                                      fields.size() * 2,
                                      HostType::Uint16,
                                      HostLayout::NHWC,
                                      {1, f.channels, h, w}};
            std::vector<std::byte> surface(*pixel_surface_bytes(nv_full(), *s));
            ASSERT_TRUE(pack_pixels(nv_full(), src, *s, surface).ok());

            const HostType out_type = c.output == Precision::Int8    ? HostType::Int8
                                      : c.output == Precision::Int16 ? HostType::Int16
                                                                     : HostType::Float16;
            const size_t bpe = bytes_per_element(out_type);
            std::vector<uint8_t> from_surface(fields.size() * bpe),
                from_channels(fields.size() * bpe);
            const TensorView dst_surface{from_surface.data(),
                                         from_surface.size(),
                                         out_type,
                                         HostLayout::NCHW,
                                         {1, f.channels, h, w}};
            const TensorView dst_channels{from_channels.data(),
                                          from_channels.size(),
                                          out_type,
                                          HostLayout::NCHW,
                                          {1, f.channels, h, w}};
            ASSERT_TRUE(convert_pixel_surface(nv_full(), surface, *s, c, dst_surface).ok());
            ASSERT_TRUE(convert_pixel_channels(f.format, c, src, dst_channels).ok());
            EXPECT_EQ(from_surface, from_channels);
            for (uint32_t y = 0; y < h; ++y)
                for (uint32_t x = 0; x < w; ++x)
                    for (uint32_t ch = 0; ch < f.channels; ++ch) {
                        const uint16_t want =
                            reference(f, c, ch, fields[(size_t(y) * w + x) * f.channels + ch]);
                        const size_t at = ((size_t(ch) * h + y) * w + x) * bpe;
                        uint16_t got;
                        if (bpe == 1) {
                            got = uint16_t(int16_t(int8_t(from_surface[at])));
                        } else {
                            std::memcpy(&got, &from_surface[at], 2);
                        }
                        ASSERT_EQ(got, want)
                            << "channel " << ch << " at (" << x << ", " << y << ")";
                    }
        }
    }
}

TEST(PixelConvert, Fp16SurfaceToFloat32Values) {
    auto s = dense_pixel_surface(nv_full(), PixelFormat::A16B16G16R16_F, 1, 1);
    ASSERT_TRUE(s.ok());
    // R 1.0 (0x3c00), G -2.0 (0xc000), B NaN (0x7e00), A 0.5 (0x3800).
    std::vector<std::byte> surface(32);
    const uint8_t bytes[8] = {0x00, 0x3c, 0x00, 0xc0, 0x00, 0x7e, 0x00, 0x38};
    for (int i = 0; i < 8; ++i) surface[i] = std::byte{bytes[i]};
    PixelConversion c;
    c.output = Precision::Fp16;
    c.nan_to_zero = true;
    std::vector<float> out(4, 9.0f);
    const TensorView dst{
        out.data(), out.size() * 4, HostType::Float32, HostLayout::NHWC, {1, 4, 1, 1}};
    ASSERT_TRUE(convert_pixel_surface(nv_full(), surface, *s, c, dst).ok());
    EXPECT_EQ(out, (std::vector<float>{1.0f, -2.0f, 0.0f, 0.5f}));
}

TEST(PixelConvert, ErrorsWriteNothing) {
    auto s = dense_pixel_surface(nv_full(), PixelFormat::R8, 4, 2);
    ASSERT_TRUE(s.ok());
    std::vector<std::byte> surface(*pixel_surface_bytes(nv_full(), *s));
    std::vector<int8_t> out(8, 42);
    const TensorView dst{out.data(), out.size(), HostType::Int8, HostLayout::NHWC, {1, 1, 2, 4}};
    const auto untouched = [&] {
        return std::all_of(out.begin(), out.end(), [](int8_t v) { return v == 42; });
    };

    PixelConversion bad;
    bad.output = Precision::Fp16;  // needs the convertor
    Status st = convert_pixel_surface(nv_full(), surface, *s, bad, dst);
    EXPECT_NE(st.message().find("convert pixel surface: pixel conversion: reading T_R8"),
              std::string::npos)
        << st.message();
    EXPECT_TRUE(untouched());

    PixelConversion ok;
    const std::vector<std::byte> short_surface(surface.size() - 1);
    st = convert_pixel_surface(nv_full(), short_surface, *s, ok, dst);
    EXPECT_NE(st.message().find("source of 63 bytes is too small for T_R8 4x2 (64 bytes)"),
              std::string::npos)
        << st.message();
    EXPECT_TRUE(untouched());

    TensorView wrong = dst;
    wrong.dims = {1, 1, 4, 2};
    st = convert_pixel_surface(nv_full(), surface, *s, ok, wrong);
    EXPECT_NE(st.message().find("destination: dimensions 1x1x4x2 (NxCxHxW) do not match T_R8 4x2"),
              std::string::npos)
        << st.message();
    EXPECT_TRUE(untouched());

    PixelSurface misaligned = *s;
    misaligned.planes[0].offset = 8;
    st = convert_pixel_surface(nv_full(), surface, misaligned, ok, dst);
    EXPECT_NE(st.message().find("start address 8 (0x8) is not a multiple of 32 bytes"),
              std::string::npos);
    EXPECT_TRUE(untouched());

    // Channel values out of their fields.
    std::vector<uint16_t> values(8, 0);
    values[5] = 300;
    const ConstTensorView src{
        values.data(), values.size() * 2, HostType::Uint16, HostLayout::NHWC, {1, 1, 2, 4}};
    st = convert_pixel_channels(PixelFormat::R8, ok, src, dst);
    EXPECT_NE(st.message().find("channel R at (x 1, y 1) is 300, out of range 0..255"),
              std::string::npos)
        << st.message();
    EXPECT_TRUE(untouched());
}

}  // namespace
}  // namespace nvdla
