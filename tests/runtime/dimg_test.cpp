// DIMG files: headers in both pixel-format numberings, element order and strides, the
// original's fp16 "stable hash" rewrite, the text dump, and the errors.
#include <gtest/gtest.h>

#include <cstring>

#include "nvdla/precision/fp16.hpp"
#include "nvdla/runtime_dimg.hpp"

namespace nvdla {
namespace {

TensorInfo feature(TensorDataType type, uint32_t c, uint32_t h, uint32_t w, uint32_t line,
                   uint32_t surface, uint64_t size, uint8_t pixel_format = kPixelFormatFeature) {
    TensorInfo t;
    t.name = "out";
    t.dims = {1, c, h, w};
    t.data_type = type;
    t.pixel_format = pixel_format;
    t.size_bytes = size;
    t.strides = {0, line, surface, 0, 0, 0, 0, 0};
    return t;
}

uint32_t word(const std::vector<std::byte>& f, size_t i) {
    uint32_t v;
    std::memcpy(&v, f.data() + 4 * i, 4);
    return v;
}

TEST(Dimg, HeaderInTheGoldensNumbering) {
    std::vector<std::byte> data(4096);
    const auto int16 =
        dimg::encode(feature(TensorDataType::Int16, 32, 8, 8, 256, 2048, 4096), data);
    ASSERT_TRUE(int16.ok()) << int16.message();
    EXPECT_EQ(int16->size(), 36u + 32 * 8 * 8 * 2);
    EXPECT_EQ(std::memcmp(int16->data(), "DIMG", 4), 0);
    EXPECT_EQ(word(*int16, 1), 0u);     // version
    EXPECT_EQ(word(*int16, 2), 41u);    // D_F16_CxHWx_x16_I before nvdla/sw added x8
    EXPECT_EQ(word(*int16, 3), 8u);     // width
    EXPECT_EQ(word(*int16, 4), 8u);     // height
    EXPECT_EQ(word(*int16, 5), 32u);    // channels
    EXPECT_EQ(word(*int16, 6), 256u);   // line stride
    EXPECT_EQ(word(*int16, 7), 2048u);  // surface stride
    EXPECT_EQ(word(*int16, 8), 4096u);  // size
    auto code = [&](TensorDataType t, uint8_t pf, dimg::Numbering n) {
        return dimg::header_for(feature(t, 1, 1, 1, 32, 32, 32, pf), n)->pixel_format;
    };
    using N = dimg::Numbering;
    EXPECT_EQ(code(TensorDataType::Int8, kPixelFormatFeature, N::Golden), 40u);
    EXPECT_EQ(code(TensorDataType::Float16, kPixelFormatFeature, N::Golden), 42u);
    EXPECT_EQ(code(TensorDataType::Int8, kPixelFormatFeatureX8, N::Golden), 47u);
    EXPECT_EQ(code(TensorDataType::Int8, kPixelFormatFeature, N::Current), 40u);
    EXPECT_EQ(code(TensorDataType::Int8, kPixelFormatFeatureX8, N::Current), 41u);
    EXPECT_EQ(code(TensorDataType::Int16, kPixelFormatFeature, N::Current), 42u);
    EXPECT_EQ(code(TensorDataType::Float16, kPixelFormatFeatureX8, N::Current), 43u);
}

TEST(Dimg, ElementOrderFollowsTheStrides) {
    // int8, 40 channels (two 32-channel surfaces), 2 x 3; x8: 8-channel groups.
    const TensorInfo t = feature(TensorDataType::Int8, 40, 2, 3, 128, 512, 1024);
    std::vector<std::byte> data(1024);
    for (size_t i = 0; i < data.size(); ++i) data[i] = std::byte(uint8_t(i * 31 + 7));
    const auto f = dimg::encode(t, data);
    ASSERT_TRUE(f.ok());
    size_t k = 36;
    for (uint32_t c = 0; c < 40; ++c)
        for (uint32_t h = 0; h < 2; ++h)
            for (uint32_t w = 0; w < 3; ++w)
                ASSERT_EQ((*f)[k++], data[(c / 32) * 512 + h * 128 + w * 32 + c % 32]);
    const TensorInfo x8 =
        feature(TensorDataType::Int8, 10, 1, 2, 16, 16, 32, kPixelFormatFeatureX8);
    const auto g = dimg::encode(x8, data);
    ASSERT_TRUE(g.ok());
    EXPECT_EQ((*g)[36 + 2 * 9 + 1], data[16 + 8 + 1]);  // c 9, w 1
}

TEST(Dimg, StableHashRewritesFp16AsTheOriginalDid) {
    const TensorInfo t = feature(TensorDataType::Float16, 4, 1, 1, 32, 32, 32);
    std::vector<std::byte> data(32);
    const uint16_t in[4] = {0x7800 /* 32768.0 */, 0x7e01 /* NaN */, 0x8000 /* -0 */, 0x3c00};
    std::memcpy(data.data(), in, sizeof in);
    const auto f = dimg::encode(t, data);
    ASSERT_TRUE(f.ok());
    uint16_t out[4];
    std::memcpy(out, f->data() + 36, sizeof out);
    EXPECT_EQ(out[0], 0x0000);
    EXPECT_EQ(out[1], 0x77c0);  // half(31744.0)
    EXPECT_EQ(out[2], 0x8000);  // the bit pattern of -0 is kept: the original compared values
    EXPECT_EQ(out[3], 0x3c00);
    const auto text = dimg::encode_text(t, data);
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(*text, "0 31744 -0 1 ");
    const auto values = dimg::elements(t, data);
    ASSERT_TRUE(values.ok());
    EXPECT_EQ((*values)[3], 1.0f);
}

TEST(Dimg, TextDumpOfIntegers) {
    std::vector<std::byte> data(64);
    const int8_t v[3] = {-5, 0, 127};
    std::memcpy(data.data(), v, 3);
    EXPECT_EQ(*dimg::encode_text(feature(TensorDataType::Int8, 3, 1, 1, 32, 32, 32), data),
              "-5 0 127 ");
    const int16_t s[2] = {-300, 12000};
    std::memcpy(data.data(), s, 4);
    EXPECT_EQ(*dimg::encode_text(feature(TensorDataType::Int16, 2, 1, 1, 32, 32, 32), data),
              "-300 12000 ");
}

TEST(Dimg, Errors) {
    std::vector<std::byte> data(64);
    EXPECT_EQ(dimg::encode(feature(TensorDataType::Int8, 1, 1, 1, 32, 32, 32, 0), data).message(),
              "output tensor 'out' has pixel format 0: only feature data (36, 37) can be "
              "written as DIMG");
    EXPECT_EQ(dimg::encode(feature(TensorDataType::Float32, 1, 1, 1, 32, 32, 32), data).message(),
              "output tensor 'out' holds float32 data, which DIMG files cannot hold (int8, "
              "int16 and fp16 can)");
    EXPECT_EQ(dimg::encode(feature(TensorDataType::Int8, 1, 2, 2, 64, 128, 128), data).message(),
              "output tensor 'out': element (c 0, h 1, w 0) at byte 64 lies outside its 64 bytes");
}

}  // namespace
}  // namespace nvdla
