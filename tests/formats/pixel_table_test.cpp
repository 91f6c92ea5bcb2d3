// The pixel format table against the seed's table "Pixel formats and valid setting", the
// register descriptions (arnvdla.h, NVDLA_CDMA.rdl) and the C model's component layouts.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "nvdla/formats/pixel.hpp"
#include "test_support.hpp"

namespace nvdla {
namespace {

using test::config;

// The seed's table, typed in from nvdla-in-memory-data-formats.rst: name, planes, channels,
// input precision, largest x offset.
struct SeedRow {
    const char* name;
    int planes, channels;
    Precision precision;
    int max_x_offset;
};
constexpr Precision I8 = Precision::Int8, I16 = Precision::Int16, F16 = Precision::Fp16;
const SeedRow kSeedTable[] = {
    {"T_R8", 1, 1, I8, 31},
    {"T_R10", 1, 1, I16, 15},
    {"T_R12", 1, 1, I16, 15},
    {"T_R16", 1, 1, I16, 15},
    {"T_R16_I", 1, 1, I16, 15},
    {"T_R16_F", 1, 1, I16, 15},  // sic: the hardware reads it as fp16, see below
    {"T_A16B16G16R16", 1, 4, I16, 3},
    {"T_X16B16G16R16", 1, 4, I16, 3},
    {"T_A16B16G16R16_F", 1, 4, F16, 3},
    {"T_A16Y16U16V16", 1, 4, I16, 3},
    {"T_V16U16Y16A16", 1, 4, I16, 3},
    {"T_A16Y16U16V16_F", 1, 4, F16, 3},
    {"T_A8B8G8R8", 1, 4, I8, 7},
    {"T_A8R8G8B8", 1, 4, I8, 7},
    {"T_B8G8R8A8", 1, 4, I8, 7},
    {"T_R8G8B8A8", 1, 4, I8, 7},
    {"T_X8B8G8R8", 1, 4, I8, 7},
    {"T_X8R8G8B8", 1, 4, I8, 7},
    {"T_B8G8R8X8", 1, 4, I8, 7},
    {"T_R8G8B8X8", 1, 4, I8, 7},
    {"T_A2B10G10R10", 1, 4, I16, 7},
    {"T_A2R10G10B10", 1, 4, I16, 7},
    {"T_B10G10R10A2", 1, 4, I16, 7},
    {"T_R10G10B10A2", 1, 4, I16, 7},
    {"T_A2Y10U10V10", 1, 4, I16, 7},
    {"T_V10U10Y10A2", 1, 4, I16, 7},
    {"T_A8Y8U8V8", 1, 4, I8, 7},
    {"T_V8U8Y8A8", 1, 4, I8, 7},
    {"T_Y8___U8V8_N444", 2, 3, I8, 31},
    {"T_Y8___V8U8_N444", 2, 3, I8, 31},
    {"T_Y10___U10V10_N444", 2, 3, I16, 15},
    {"T_Y10___V10U10_N444", 2, 3, I16, 15},
    {"T_Y12___U12V12_N444", 2, 3, I16, 15},
    {"T_Y12___V12U12_N444", 2, 3, I16, 15},
    {"T_Y16___U16V16_N444", 2, 3, I16, 15},
    {"T_Y16___V16U16_N444", 2, 3, I16, 15},
};

TEST(PixelTable, MatchesTheSeedTableRowByRow) {
    ASSERT_EQ(pixel_formats().size(), std::size(kSeedTable));
    for (size_t i = 0; i < std::size(kSeedTable); ++i) {
        const SeedRow& want = kSeedTable[i];
        const PixelFormatInfo& got = pixel_formats()[i];
        SCOPED_TRACE(want.name);
        EXPECT_EQ(got.name, want.name);
        EXPECT_EQ(got.planes, want.planes);
        EXPECT_EQ(got.channels, want.channels);
        if (got.format == PixelFormat::R16_F)
            EXPECT_EQ(got.input_precision,
                      Precision::Fp16);  // seed typo, see Fp16FormatsReadAsFp16
        else
            EXPECT_EQ(got.input_precision, want.precision);
        EXPECT_EQ(got.max_x_offset, want.max_x_offset);
        EXPECT_EQ(static_cast<size_t>(got.format), i);
    }
}

TEST(PixelTable, Fp16FormatsReadAsFp16) {
    // The seed prints "int16" for T_R16_F, but the RTL gives it fp16 pixel precision (format 5)
    // and the C model passes it to the convertor as PIXEL_FP16.
    EXPECT_EQ(pixel_format_info(PixelFormat::R16_F).pixel_precision, PixelPrecision::Fp16);
    EXPECT_EQ(pixel_format_info(PixelFormat::A16B16G16R16_F).pixel_precision, PixelPrecision::Fp16);
    EXPECT_EQ(pixel_format_info(PixelFormat::A16Y16U16V16_F).pixel_precision, PixelPrecision::Fp16);
}

// PIXEL_FORMAT enum values, typed in from arnvdla.h (NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_FORMAT_*).
TEST(PixelTable, HardwareEnumValuesFollowArnvdla) {
    const std::pair<const char*, uint32_t> values[] = {
        {"T_R8", 0},
        {"T_R16_F", 5},
        {"T_A16B16G16R16", 6},
        {"T_A16Y16U16V16_F", 11},
        {"T_A8B8G8R8", 12},
        {"T_R8G8B8X8", 19},
        {"T_A2B10G10R10", 20},
        {"T_V10U10Y10A2", 25},
        {"T_A8Y8U8V8", 26},
        {"T_V8U8Y8A8", 27},
        {"T_Y8___U8V8_N444", 28},
        {"T_Y16___V16U16_N444", 35},
    };
    for (const auto& [name, value] : values) {
        auto by_name = find_pixel_format(name);
        ASSERT_TRUE(by_name.ok()) << by_name.message();
        EXPECT_EQ(static_cast<uint32_t>((*by_name)->format), value) << name;
        auto by_value = find_pixel_format(value);
        ASSERT_TRUE(by_value.ok());
        EXPECT_EQ((*by_value)->name, name);
    }
}

// The register description in ../shared spells the same enum; read it and compare every entry.
TEST(PixelTable, HardwareEnumValuesFollowTheRdl) {
    NVDLA_REQUIRE_SHARED();
    std::ifstream in(test::shared_dir() / "hw/spec/manual/NVDLA_CDMA.rdl");
    ASSERT_TRUE(in) << "NVDLA_CDMA.rdl not found";
    std::stringstream text;
    text << in.rdbuf();
    const std::string rdl = text.str();
    const size_t start = rdl.find("enum D_DATAIN_FORMAT_PIXEL_FORMAT_enum");
    ASSERT_NE(start, std::string::npos);
    const std::string block = rdl.substr(start, rdl.find("};", start) - start);
    std::map<std::string, uint32_t> rdl_values;
    const std::regex entry(R"((T_\w+)\s*=\s*6'd(\d+))");
    for (auto it = std::sregex_iterator(block.begin(), block.end(), entry);
         it != std::sregex_iterator(); ++it)
        rdl_values[(*it)[1]] = static_cast<uint32_t>(std::stoul((*it)[2]));
    ASSERT_EQ(rdl_values.size(), kPixelFormatCount);
    for (const PixelFormatInfo& f : pixel_formats()) {
        ASSERT_TRUE(rdl_values.count(std::string(f.name))) << f.name;
        EXPECT_EQ(rdl_values[std::string(f.name)], static_cast<uint32_t>(f.format)) << f.name;
    }
}

TEST(PixelTable, BytesPerPixelAndXOffsetRangeFillOneAtom) {
    for (const PixelFormatInfo& f : pixel_formats()) {
        SCOPED_TRACE(f.name);
        // The seed's x offset range is one 32-byte atom of plane-0 pixels.
        EXPECT_EQ(f.max_x_offset + 1u, 32u / f.bytes_per_pixel[0]);
        EXPECT_EQ(max_pixel_x_offset(config("nv_full"), f.format), f.max_x_offset);
        uint32_t bits = 0;
        for (uint32_t ch = 0; ch < f.channels; ++ch) bits += f.components[ch].bits;
        EXPECT_EQ(bits, 8u * (f.bytes_per_pixel[0] + f.bytes_per_pixel[1]));
    }
}

TEST(PixelTable, XOffsetRangeFollowsTheAtomOfSmallConfigurations) {
    EXPECT_EQ(max_pixel_x_offset(config("nv_small"), PixelFormat::R8), 7u);
    EXPECT_EQ(max_pixel_x_offset(config("nv_small"), PixelFormat::A8B8G8R8), 1u);
    EXPECT_EQ(max_pixel_x_offset(config("nv_medium_512"), PixelFormat::R8), 15u);
    EXPECT_EQ(max_pixel_x_offset(config("nv_large"), PixelFormat::Y8_U8V8_N444), 31u);
}

TEST(PixelTable, PrecisionClassesAndSignificantBits) {
    const auto& r8 = pixel_format_info(PixelFormat::R8);
    EXPECT_EQ(r8.pixel_precision, PixelPrecision::Uint8);
    EXPECT_EQ(r8.significant_bits, 8);
    EXPECT_EQ(pixel_format_info(PixelFormat::R16_I).pixel_precision, PixelPrecision::Int16);
    EXPECT_EQ(pixel_format_info(PixelFormat::R16).pixel_precision, PixelPrecision::Uint16);
    // A16Y16U16V16 is uint16 in the RTL (the C model's PIXEL_SIGNED_INT16 is overridden anyway).
    EXPECT_EQ(pixel_format_info(PixelFormat::A16Y16U16V16).pixel_precision, PixelPrecision::Uint16);
    EXPECT_EQ(pixel_format_info(PixelFormat::R10).significant_bits, 10);
    EXPECT_EQ(pixel_format_info(PixelFormat::R12).significant_bits, 12);
    EXPECT_EQ(pixel_format_info(PixelFormat::Y12_V12U12_N444).significant_bits, 12);
    const auto& packed = pixel_format_info(PixelFormat::A2B10G10R10);
    EXPECT_EQ(packed.significant_bits, 10);
    EXPECT_EQ(packed.input_precision, Precision::Int16);
    EXPECT_EQ(packed.element_shift(0), 6u);   // R: 10-bit field to the top of 16 bits
    EXPECT_EQ(packed.element_shift(3), 14u);  // A: 2-bit field
    EXPECT_EQ(pixel_format_info(PixelFormat::R10).element_shift(0), 0u);  // whole 16-bit container
}

TEST(PixelTable, ComponentLayoutsFollowTheCModelUnpacking) {
    using enum PixelChannel;
    // A8B8G8R8: the C model takes channel i from byte i (R, G, B, A).
    const auto& abgr = pixel_format_info(PixelFormat::A8B8G8R8);
    EXPECT_EQ(abgr.components[0].channel, R);
    EXPECT_EQ(abgr.components[0].bit_offset, 0);
    EXPECT_EQ(abgr.components[3].channel, A);
    EXPECT_EQ(abgr.components[3].bit_offset, 24);
    // R8G8B8A8: channel i from byte 3 - i.
    const auto& rgba = pixel_format_info(PixelFormat::R8G8B8A8);
    EXPECT_EQ(rgba.components[0].bit_offset, 24);
    EXPECT_EQ(rgba.components[3].bit_offset, 0);
    // V8U8Y8A8: Y from byte 1, U byte 2, V byte 3, A byte 0.
    const auto& vuya = pixel_format_info(PixelFormat::V8U8Y8A8);
    EXPECT_EQ(vuya.components[0].channel, Y);
    EXPECT_EQ(vuya.components[0].bit_offset, 8);
    EXPECT_EQ(vuya.components[2].channel, V);
    EXPECT_EQ(vuya.components[2].bit_offset, 24);
    // Y8___U8V8_N444: U is the second byte of the U/V plane, V the first.
    const auto& uv = pixel_format_info(PixelFormat::Y8_U8V8_N444);
    EXPECT_EQ(uv.components[1].channel, U);
    EXPECT_EQ(uv.components[1].plane, 1);
    EXPECT_EQ(uv.components[1].bit_offset, 8);
    EXPECT_EQ(uv.components[2].channel, V);
    EXPECT_EQ(uv.components[2].bit_offset, 0);
    // X formats carry X as the fourth channel.
    EXPECT_EQ(pixel_format_info(PixelFormat::X8R8G8B8).components[3].channel, X);
}

TEST(PixelTable, LooksUpByNameIgnoringCaseAndPrefix) {
    EXPECT_EQ((*find_pixel_format("T_A8B8G8R8"))->format, PixelFormat::A8B8G8R8);
    EXPECT_EQ((*find_pixel_format("a8b8g8r8"))->format, PixelFormat::A8B8G8R8);
    EXPECT_EQ((*find_pixel_format("t_y8___v8u8_n444"))->format, PixelFormat::Y8_V8U8_N444);
    EXPECT_EQ(to_string(PixelFormat::Y10_U10V10_N444), "T_Y10___U10V10_N444");
    EXPECT_EQ(to_string(PixelChannel::U), "U");
    EXPECT_EQ(to_string(PixelPrecision::Uint16), "uint16");
}

TEST(PixelTable, RejectsUnknownNamesAndValues) {
    auto name = find_pixel_format("T_R8G8B8");
    ASSERT_FALSE(name.ok());
    EXPECT_NE(name.message().find("unknown pixel format 'T_R8G8B8'"), std::string::npos)
        << name.message();
    auto value = find_pixel_format(36u);
    ASSERT_FALSE(value.ok());
    EXPECT_EQ(value.message(), "PIXEL_FORMAT value 36 is out of range 0..35");
}

}  // namespace
}  // namespace nvdla
