// The seed's table "Pixel formats and valid setting", one row per PIXEL_FORMAT value, with the
// component layout of each format as the nv_full C model's image path unpacks it
// (ImageConvDataResponseSequencerCommon in cmod/cdma/NV_NVDLA_cdma.cpp). Fields are bit ranges
// of the plane's little-endian pixel word, listed in the order the CDMA writes the channels.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "nvdla/formats/pixel.hpp"

namespace nvdla {
namespace {

using enum PixelChannel;
constexpr Precision I8 = Precision::Int8;
constexpr Precision I16 = Precision::Int16;
constexpr Precision F16 = Precision::Fp16;
constexpr PixelPrecision U8c = PixelPrecision::Uint8;
constexpr PixelPrecision U16c = PixelPrecision::Uint16;
constexpr PixelPrecision S16c = PixelPrecision::Int16;
constexpr PixelPrecision F16c = PixelPrecision::Fp16;

// A field of plane 0 or of plane 1: (channel, lowest bit, width).
constexpr PixelComponent p0(PixelChannel ch, uint8_t bit, uint8_t bits) {
    return {ch, 0, bit, bits};
}
constexpr PixelComponent p1(PixelChannel ch, uint8_t bit, uint8_t bits) {
    return {ch, 1, bit, bits};
}
constexpr PixelComponent none{R, 0, 0, 0};

using Fmt = PixelFormat;

// clang-format off
//  format               name                   planes ch  bytes/px  in   class sig  x-max  components (channel order)
constexpr std::array<PixelFormatInfo, kPixelFormatCount> kFormats{{
    {Fmt::R8,              "T_R8",                  1, 1, {1, 0}, I8,  U8c,  8, 31, {p0(R, 0, 8), none, none, none}},
    {Fmt::R10,             "T_R10",                 1, 1, {2, 0}, I16, U16c, 10, 15, {p0(R, 0, 16), none, none, none}},
    {Fmt::R12,             "T_R12",                 1, 1, {2, 0}, I16, U16c, 12, 15, {p0(R, 0, 16), none, none, none}},
    {Fmt::R16,             "T_R16",                 1, 1, {2, 0}, I16, U16c, 16, 15, {p0(R, 0, 16), none, none, none}},
    {Fmt::R16_I,           "T_R16_I",               1, 1, {2, 0}, I16, S16c, 16, 15, {p0(R, 0, 16), none, none, none}},
    {Fmt::R16_F,           "T_R16_F",               1, 1, {2, 0}, F16, F16c, 16, 15, {p0(R, 0, 16), none, none, none}},
    {Fmt::A16B16G16R16,    "T_A16B16G16R16",        1, 4, {8, 0}, I16, U16c, 16, 3,  {p0(R, 0, 16), p0(G, 16, 16), p0(B, 32, 16), p0(A, 48, 16)}},
    {Fmt::X16B16G16R16,    "T_X16B16G16R16",        1, 4, {8, 0}, I16, U16c, 16, 3,  {p0(R, 0, 16), p0(G, 16, 16), p0(B, 32, 16), p0(X, 48, 16)}},
    {Fmt::A16B16G16R16_F,  "T_A16B16G16R16_F",      1, 4, {8, 0}, F16, F16c, 16, 3,  {p0(R, 0, 16), p0(G, 16, 16), p0(B, 32, 16), p0(A, 48, 16)}},
    {Fmt::A16Y16U16V16,    "T_A16Y16U16V16",        1, 4, {8, 0}, I16, U16c, 16, 3,  {p0(Y, 32, 16), p0(U, 16, 16), p0(V, 0, 16), p0(A, 48, 16)}},
    {Fmt::V16U16Y16A16,    "T_V16U16Y16A16",        1, 4, {8, 0}, I16, U16c, 16, 3,  {p0(Y, 16, 16), p0(U, 32, 16), p0(V, 48, 16), p0(A, 0, 16)}},
    {Fmt::A16Y16U16V16_F,  "T_A16Y16U16V16_F",      1, 4, {8, 0}, F16, F16c, 16, 3,  {p0(Y, 32, 16), p0(U, 16, 16), p0(V, 0, 16), p0(A, 48, 16)}},
    {Fmt::A8B8G8R8,        "T_A8B8G8R8",            1, 4, {4, 0}, I8,  U8c,  8, 7,   {p0(R, 0, 8), p0(G, 8, 8), p0(B, 16, 8), p0(A, 24, 8)}},
    {Fmt::A8R8G8B8,        "T_A8R8G8B8",            1, 4, {4, 0}, I8,  U8c,  8, 7,   {p0(R, 16, 8), p0(G, 8, 8), p0(B, 0, 8), p0(A, 24, 8)}},
    {Fmt::B8G8R8A8,        "T_B8G8R8A8",            1, 4, {4, 0}, I8,  U8c,  8, 7,   {p0(R, 8, 8), p0(G, 16, 8), p0(B, 24, 8), p0(A, 0, 8)}},
    {Fmt::R8G8B8A8,        "T_R8G8B8A8",            1, 4, {4, 0}, I8,  U8c,  8, 7,   {p0(R, 24, 8), p0(G, 16, 8), p0(B, 8, 8), p0(A, 0, 8)}},
    {Fmt::X8B8G8R8,        "T_X8B8G8R8",            1, 4, {4, 0}, I8,  U8c,  8, 7,   {p0(R, 0, 8), p0(G, 8, 8), p0(B, 16, 8), p0(X, 24, 8)}},
    {Fmt::X8R8G8B8,        "T_X8R8G8B8",            1, 4, {4, 0}, I8,  U8c,  8, 7,   {p0(R, 16, 8), p0(G, 8, 8), p0(B, 0, 8), p0(X, 24, 8)}},
    {Fmt::B8G8R8X8,        "T_B8G8R8X8",            1, 4, {4, 0}, I8,  U8c,  8, 7,   {p0(R, 8, 8), p0(G, 16, 8), p0(B, 24, 8), p0(X, 0, 8)}},
    {Fmt::R8G8B8X8,        "T_R8G8B8X8",            1, 4, {4, 0}, I8,  U8c,  8, 7,   {p0(R, 24, 8), p0(G, 16, 8), p0(B, 8, 8), p0(X, 0, 8)}},
    {Fmt::A2B10G10R10,     "T_A2B10G10R10",         1, 4, {4, 0}, I16, U16c, 10, 7,  {p0(R, 0, 10), p0(G, 10, 10), p0(B, 20, 10), p0(A, 30, 2)}},
    {Fmt::A2R10G10B10,     "T_A2R10G10B10",         1, 4, {4, 0}, I16, U16c, 10, 7,  {p0(R, 20, 10), p0(G, 10, 10), p0(B, 0, 10), p0(A, 30, 2)}},
    {Fmt::B10G10R10A2,     "T_B10G10R10A2",         1, 4, {4, 0}, I16, U16c, 10, 7,  {p0(R, 2, 10), p0(G, 12, 10), p0(B, 22, 10), p0(A, 0, 2)}},
    {Fmt::R10G10B10A2,     "T_R10G10B10A2",         1, 4, {4, 0}, I16, U16c, 10, 7,  {p0(R, 22, 10), p0(G, 12, 10), p0(B, 2, 10), p0(A, 0, 2)}},
    {Fmt::A2Y10U10V10,     "T_A2Y10U10V10",         1, 4, {4, 0}, I16, U16c, 10, 7,  {p0(Y, 20, 10), p0(U, 10, 10), p0(V, 0, 10), p0(A, 30, 2)}},
    {Fmt::V10U10Y10A2,     "T_V10U10Y10A2",         1, 4, {4, 0}, I16, U16c, 10, 7,  {p0(Y, 2, 10), p0(U, 12, 10), p0(V, 22, 10), p0(A, 0, 2)}},
    {Fmt::A8Y8U8V8,        "T_A8Y8U8V8",            1, 4, {4, 0}, I8,  U8c,  8, 7,   {p0(Y, 16, 8), p0(U, 8, 8), p0(V, 0, 8), p0(A, 24, 8)}},
    {Fmt::V8U8Y8A8,        "T_V8U8Y8A8",            1, 4, {4, 0}, I8,  U8c,  8, 7,   {p0(Y, 8, 8), p0(U, 16, 8), p0(V, 24, 8), p0(A, 0, 8)}},
    {Fmt::Y8_U8V8_N444,    "T_Y8___U8V8_N444",      2, 3, {1, 2}, I8,  U8c,  8, 31,  {p0(Y, 0, 8), p1(U, 8, 8), p1(V, 0, 8), none}},
    {Fmt::Y8_V8U8_N444,    "T_Y8___V8U8_N444",      2, 3, {1, 2}, I8,  U8c,  8, 31,  {p0(Y, 0, 8), p1(U, 0, 8), p1(V, 8, 8), none}},
    {Fmt::Y10_U10V10_N444, "T_Y10___U10V10_N444",   2, 3, {2, 4}, I16, U16c, 10, 15, {p0(Y, 0, 16), p1(U, 16, 16), p1(V, 0, 16), none}},
    {Fmt::Y10_V10U10_N444, "T_Y10___V10U10_N444",   2, 3, {2, 4}, I16, U16c, 10, 15, {p0(Y, 0, 16), p1(U, 0, 16), p1(V, 16, 16), none}},
    {Fmt::Y12_U12V12_N444, "T_Y12___U12V12_N444",   2, 3, {2, 4}, I16, U16c, 12, 15, {p0(Y, 0, 16), p1(U, 16, 16), p1(V, 0, 16), none}},
    {Fmt::Y12_V12U12_N444, "T_Y12___V12U12_N444",   2, 3, {2, 4}, I16, U16c, 12, 15, {p0(Y, 0, 16), p1(U, 0, 16), p1(V, 16, 16), none}},
    {Fmt::Y16_U16V16_N444, "T_Y16___U16V16_N444",   2, 3, {2, 4}, I16, U16c, 16, 15, {p0(Y, 0, 16), p1(U, 16, 16), p1(V, 0, 16), none}},
    {Fmt::Y16_V16U16_N444, "T_Y16___V16U16_N444",   2, 3, {2, 4}, I16, U16c, 16, 15, {p0(Y, 0, 16), p1(U, 0, 16), p1(V, 16, 16), none}},
}};
// clang-format on

// The table is indexed by the enum: row i describes PIXEL_FORMAT value i.
constexpr bool rows_in_enum_order() {
    for (uint32_t i = 0; i < kFormats.size(); ++i)
        if (static_cast<uint32_t>(kFormats[i].format) != i) return false;
    return true;
}
static_assert(rows_in_enum_order());

// Every plane's pixel word is covered exactly once by the components in it.
constexpr bool components_tile_their_words() {
    for (const PixelFormatInfo& f : kFormats) {
        for (uint32_t plane = 0; plane < f.planes; ++plane) {
            uint64_t covered = 0;
            uint32_t total = 0;
            for (uint32_t ch = 0; ch < f.channels; ++ch) {
                const PixelComponent& c = f.components[ch];
                if (c.plane != plane) continue;
                const uint64_t mask = ((uint64_t(1) << c.bits) - 1) << c.bit_offset;
                if (covered & mask) return false;
                covered |= mask;
                total += c.bits;
            }
            if (total != f.bytes_per_pixel[plane] * 8u) return false;
        }
    }
    return true;
}
static_assert(components_tile_their_words());

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return out;
}

}  // namespace

std::span<const PixelFormatInfo> pixel_formats() {
    return kFormats;
}

const PixelFormatInfo& pixel_format_info(PixelFormat f) {
    const auto i = static_cast<uint32_t>(f);
    return kFormats[i < kFormats.size() ? i : 0];
}

Result<const PixelFormatInfo*> find_pixel_format(std::string_view name) {
    std::string wanted = upper(name);
    if (wanted.rfind("T_", 0) != 0) wanted = "T_" + wanted;
    for (const PixelFormatInfo& f : kFormats)
        if (f.name == wanted) return &f;
    return error("unknown pixel format '", name,
                 "' (known: T_R8, T_R10, ..., T_Y16___V16U16_N444; ", kFormats.size(),
                 " formats in the seed's table 'Pixel formats and valid setting')");
}

Result<const PixelFormatInfo*> find_pixel_format(uint32_t hw_value) {
    if (hw_value < kFormats.size()) return &kFormats[hw_value];
    return error("PIXEL_FORMAT value ", hw_value, " is out of range 0..", kFormats.size() - 1);
}

std::string_view to_string(PixelFormat f) {
    const auto i = static_cast<uint32_t>(f);
    return i < kFormats.size() ? kFormats[i].name : std::string_view("T_?");
}

std::string_view to_string(PixelChannel c) {
    switch (c) {
        case PixelChannel::R: return "R";
        case PixelChannel::G: return "G";
        case PixelChannel::B: return "B";
        case PixelChannel::A: return "A";
        case PixelChannel::X: return "X";
        case PixelChannel::Y: return "Y";
        case PixelChannel::U: return "U";
        case PixelChannel::V: return "V";
    }
    return "?";
}

std::string_view to_string(PixelPrecision p) {
    switch (p) {
        case PixelPrecision::Uint8: return "uint8";
        case PixelPrecision::Uint16: return "uint16";
        case PixelPrecision::Int16: return "int16";
        case PixelPrecision::Fp16: return "fp16";
    }
    return "?";
}

uint32_t max_pixel_x_offset(const HwConfig& cfg, PixelFormat f) {
    const PixelFormatInfo& info = pixel_format_info(f);
    const uint32_t pixels_per_atom = cfg.atom_bytes / info.bytes_per_pixel[0];
    // The register field is 5 bits; a 32-byte atom never needs more.
    return std::min<uint32_t>(pixels_per_atom == 0 ? 0 : pixels_per_atom - 1, 31);
}

}  // namespace nvdla
