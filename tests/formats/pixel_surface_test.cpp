// Pitch-linear pixel surfaces: hand-derived byte layouts, round trips of every format over
// random geometries, and every validation error (with nothing written).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "../emu/isa_levels.hpp"
#include "nvdla/formats/pixel.hpp"
#include "nvdla/precision/fp16.hpp"
#include "test_support.hpp"

namespace nvdla {
namespace {

using test::config;
using test::nv_full;

constexpr std::byte kSentinel{0xa5};

// A dense host tensor of component values.
struct Host {
    HostType type = HostType::Uint16;
    HostLayout layout = HostLayout::NHWC;
    Dims4 dims;
    std::vector<uint8_t> bytes;

    Host(HostType t, HostLayout l, uint32_t c, uint32_t h, uint32_t w)
        : type(t), layout(l), dims{1, c, h, w}, bytes(dims.elements() * bytes_per_element(t)) {}

    size_t index(uint32_t c, uint32_t y, uint32_t x) const {
        return layout == HostLayout::NCHW ? (size_t(c) * dims.h + y) * dims.w + x
                                          : (size_t(y) * dims.w + x) * dims.c + c;
    }
    // Stores an integer value (or fp16 bits for float16) in the host type.
    void set(uint32_t c, uint32_t y, uint32_t x, int64_t v) {
        uint8_t* p = bytes.data() + index(c, y, x) * bytes_per_element(type);
        switch (type) {
            case HostType::Int8: {
                const auto t = static_cast<int8_t>(v);
                std::memcpy(p, &t, 1);
                break;
            }
            case HostType::Uint8: {
                const auto t = static_cast<uint8_t>(v);
                std::memcpy(p, &t, 1);
                break;
            }
            case HostType::Int16: {
                const auto t = static_cast<int16_t>(v);
                std::memcpy(p, &t, 2);
                break;
            }
            case HostType::Uint16:
            case HostType::Float16: {
                const auto t = static_cast<uint16_t>(v);
                std::memcpy(p, &t, 2);
                break;
            }
            case HostType::Float32: {
                const auto t = static_cast<float>(v);
                std::memcpy(p, &t, 4);
                break;
            }
        }
    }
    void set_float(uint32_t c, uint32_t y, uint32_t x, float v) {
        std::memcpy(bytes.data() + index(c, y, x) * 4, &v, 4);
    }
    ConstTensorView view() const { return {bytes.data(), bytes.size(), type, layout, dims}; }
    TensorView mut() { return {bytes.data(), bytes.size(), type, layout, dims}; }
};

std::vector<std::byte> sentinel_buffer(uint64_t n) {
    return std::vector<std::byte>(n, kSentinel);
}

uint8_t byte_at(const std::vector<std::byte>& b, size_t i) {
    return std::to_integer<uint8_t>(b.at(i));
}

uint64_t round_up(uint64_t x, uint64_t to) {
    return (x + to - 1) / to * to;
}

// ---- hand-derived layouts -------------------------------------------------------------

struct HandLayout {
    PixelFormat format;
    std::vector<int64_t> components;  // channel order
    std::vector<uint8_t> plane0, plane1;
};

// Bytes derived by hand from the C model's unpacking (ImageConvDataResponseSequencerCommon):
// which byte / bit field it takes each channel from.
const HandLayout kHandLayouts[] = {
    {PixelFormat::R8, {0x7f}, {0x7f}, {}},
    {PixelFormat::R16, {0xbeef}, {0xef, 0xbe}, {}},
    // channel i from byte i
    {PixelFormat::A8B8G8R8, {0x11, 0x22, 0x33, 0x44}, {0x11, 0x22, 0x33, 0x44}, {}},
    {PixelFormat::X8B8G8R8, {0x11, 0x22, 0x33, 0x44}, {0x11, 0x22, 0x33, 0x44}, {}},
    // R from byte 2, G byte 1, B byte 0, A byte 3
    {PixelFormat::A8R8G8B8, {0x11, 0x22, 0x33, 0x44}, {0x33, 0x22, 0x11, 0x44}, {}},
    // R from byte 1, G byte 2, B byte 3, A byte 0
    {PixelFormat::B8G8R8A8, {0x11, 0x22, 0x33, 0x44}, {0x44, 0x11, 0x22, 0x33}, {}},
    // R from byte 3, G byte 2, B byte 1, A byte 0
    {PixelFormat::R8G8B8A8, {0x11, 0x22, 0x33, 0x44}, {0x44, 0x33, 0x22, 0x11}, {}},
    // Y from byte 2, U byte 1, V byte 0, A byte 3
    {PixelFormat::A8Y8U8V8, {0x11, 0x22, 0x33, 0x44}, {0x33, 0x22, 0x11, 0x44}, {}},
    // Y from byte 1, U byte 2, V byte 3, A byte 0
    {PixelFormat::V8U8Y8A8, {0x11, 0x22, 0x33, 0x44}, {0x44, 0x11, 0x22, 0x33}, {}},
    // word = A<<30 | B<<20 | G<<10 | R = 0x80000000 | 0x0f000000 | 0x000aa800 | 0x155 = 0x8f0aa955
    {PixelFormat::A2B10G10R10, {0x155, 0x2aa, 0x0f0, 2}, {0x55, 0xa9, 0x0a, 0x8f}, {}},
    // word = A<<30 | R<<20 | G<<10 | B = 0x80000000 | 0x15500000 | 0x000aa800 | 0xf0 = 0x955aa8f0
    {PixelFormat::A2R10G10B10, {0x155, 0x2aa, 0x0f0, 2}, {0xf0, 0xa8, 0x5a, 0x95}, {}},
    // word = B<<22 | G<<12 | R<<2 | A = 0x3c000000 | 0x002aa000 | 0x554 | 2 = 0x3c2aa556
    {PixelFormat::B10G10R10A2, {0x155, 0x2aa, 0x0f0, 2}, {0x56, 0xa5, 0x2a, 0x3c}, {}},
    // word = R<<22 | G<<12 | B<<2 | A = 0x55400000 | 0x002aa000 | 0x3c0 | 2 = 0x556aa3c2
    {PixelFormat::R10G10B10A2, {0x155, 0x2aa, 0x0f0, 2}, {0xc2, 0xa3, 0x6a, 0x55}, {}},
    // 16-bit elements: R, G, B, A
    {PixelFormat::A16B16G16R16,
     {0x1234, 0x5678, 0x9abc, 0xdef0},
     {0x34, 0x12, 0x78, 0x56, 0xbc, 0x9a, 0xf0, 0xde},
     {}},
    // V, U, Y, A
    {PixelFormat::A16Y16U16V16,
     {0x1111, 0x2222, 0x3333, 0x4444},
     {0x33, 0x33, 0x22, 0x22, 0x11, 0x11, 0x44, 0x44},
     {}},
    // A, Y, U, V
    {PixelFormat::V16U16Y16A16,
     {0x1111, 0x2222, 0x3333, 0x4444},
     {0x44, 0x44, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33},
     {}},
    // Y plane; U/V plane holds V in its first byte, U in its second
    {PixelFormat::Y8_U8V8_N444, {0x10, 0x20, 0x30}, {0x10}, {0x30, 0x20}},
    {PixelFormat::Y8_V8U8_N444, {0x10, 0x20, 0x30}, {0x10}, {0x20, 0x30}},
    // U/V plane: V in the first 16-bit element, U in the second
    {PixelFormat::Y16_U16V16_N444,
     {0xaabb, 0x3344, 0x1122},
     {0xbb, 0xaa},
     {0x22, 0x11, 0x44, 0x33}},
    {PixelFormat::Y10_V10U10_N444,
     {0x03ff, 0x0155, 0x02aa},
     {0xff, 0x03},
     {0x55, 0x01, 0xaa, 0x02}},
};

TEST(PixelSurface, HandDerivedByteLayouts) {
    for (const HandLayout& hand : kHandLayouts) {
        const PixelFormatInfo& f = pixel_format_info(hand.format);
        SCOPED_TRACE(f.name);
        auto s = dense_pixel_surface(nv_full(), hand.format, 1, 1);
        ASSERT_TRUE(s.ok()) << s.message();
        Host host(HostType::Uint16, HostLayout::NHWC, f.channels, 1, 1);
        for (uint32_t ch = 0; ch < f.channels; ++ch) host.set(ch, 0, 0, hand.components[ch]);
        auto buf = sentinel_buffer(*pixel_surface_bytes(nv_full(), *s));
        ASSERT_TRUE(pack_pixels(nv_full(), host.view(), *s, buf).ok());
        for (size_t i = 0; i < hand.plane0.size(); ++i)
            EXPECT_EQ(byte_at(buf, i), hand.plane0[i]) << i;
        EXPECT_EQ(buf[hand.plane0.size()], kSentinel);  // nothing past the pixel
        for (size_t i = 0; i < hand.plane1.size(); ++i)
            EXPECT_EQ(byte_at(buf, s->planes[1].offset + i), hand.plane1[i]) << i;
    }
}

TEST(PixelSurface, A8B8G8R8PixelAtAnOffsetAndStride) {
    PixelSurface s;
    s.format = PixelFormat::A8B8G8R8;
    s.width = 2;
    s.height = 2;
    s.x_offset = 2;
    s.planes[0] = {0, 64};
    // Last line: 64 + (2 + 2) * 4 = 80 bytes, read as whole 32-byte atoms: 64 + 32 = 96.
    ASSERT_EQ(*pixel_surface_bytes(nv_full(), s), 96u);
    Host host(HostType::Uint8, HostLayout::NHWC, 4, 2, 2);
    const int64_t rgba[4] = {0x11, 0x22, 0x33, 0x44};
    for (uint32_t ch = 0; ch < 4; ++ch) host.set(ch, 1, 1, rgba[ch]);
    auto buf = sentinel_buffer(96);
    ASSERT_TRUE(pack_pixels(nv_full(), host.view(), s, buf).ok());
    // Pixel (x 1, y 1) is at 1 * 64 + (2 + 1) * 4 = 76: R, G, B, A.
    EXPECT_EQ(byte_at(buf, 76), 0x11);
    EXPECT_EQ(byte_at(buf, 77), 0x22);
    EXPECT_EQ(byte_at(buf, 78), 0x33);
    EXPECT_EQ(byte_at(buf, 79), 0x44);
    // The x offset bytes (0..7 of each line) are left alone.
    for (size_t i = 0; i < 8; ++i) EXPECT_EQ(buf[i], kSentinel);
    for (size_t i = 64; i < 72; ++i) EXPECT_EQ(buf[i], kSentinel);
}

TEST(PixelSurface, SemiPlanarOffsetWrapsAtTheUVAtom) {
    // nv_full: the U/V plane has 2-byte pixels, 16 per 32-byte atom, so x offset 20 is
    // pixel 4 of its atom there, while the Y plane starts at pixel 20.
    auto s = dense_pixel_surface(nv_full(), PixelFormat::Y8_U8V8_N444, 3, 2, 20);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(pixel_plane_x_offset(nv_full(), *s, 1), 4u);
    // Y stride: (20 + 3) bytes -> 32; U/V stride: (4 + 3) * 2 = 14 -> 32; U/V plane after 2 Y
    // lines.
    EXPECT_EQ(s->planes[0].line_stride, 32u);
    EXPECT_EQ(s->planes[1].line_stride, 32u);
    EXPECT_EQ(s->planes[1].offset, 64u);
    Host host(HostType::Uint8, HostLayout::NCHW, 3, 2, 3);
    host.set(0, 1, 2, 0xa1);  // Y
    host.set(1, 1, 2, 0xb2);  // U
    host.set(2, 1, 2, 0xc3);  // V
    auto buf = sentinel_buffer(*pixel_surface_bytes(nv_full(), *s));
    ASSERT_TRUE(pack_pixels(nv_full(), host.view(), *s, buf).ok());
    EXPECT_EQ(byte_at(buf, 32 + 20 + 2), 0xa1);            // Y: line 1, pixel 20 + 2
    EXPECT_EQ(byte_at(buf, 64 + 32 + (4 + 2) * 2), 0xc3);  // V first in the U/V pair
    EXPECT_EQ(byte_at(buf, 64 + 32 + (4 + 2) * 2 + 1), 0xb2);

    // nv_small has 8-byte atoms: 4 U/V pixels per atom, so x offset 5 is U/V pixel 1.
    PixelSurface small;
    small.format = PixelFormat::Y8_U8V8_N444;
    small.width = 2;
    small.x_offset = 5;
    small.planes = {PixelPlane{0, 32}, PixelPlane{32, 32}};
    ASSERT_TRUE(check_pixel_surface(config("nv_small"), small).ok());
    EXPECT_EQ(pixel_plane_x_offset(config("nv_small"), small, 1), 1u);
    Host one(HostType::Uint8, HostLayout::NHWC, 3, 1, 2);
    one.set(0, 0, 0, 1);
    one.set(1, 0, 0, 2);
    one.set(2, 0, 0, 3);
    auto small_buf = sentinel_buffer(*pixel_surface_bytes(config("nv_small"), small));
    ASSERT_TRUE(pack_pixels(config("nv_small"), one.view(), small, small_buf).ok());
    EXPECT_EQ(byte_at(small_buf, 5), 1);   // Y at pixel 5
    EXPECT_EQ(byte_at(small_buf, 34), 3);  // V at U/V pixel 1
    EXPECT_EQ(byte_at(small_buf, 35), 2);  // U
}

TEST(PixelSurface, DenseSurfaceSizes) {
    // R8, 33 pixels after an offset of 5: a line needs 38 bytes -> stride 64.
    auto r8 = dense_pixel_surface(nv_full(), PixelFormat::R8, 33, 3, 5);
    ASSERT_TRUE(r8.ok());
    EXPECT_EQ(r8->planes[0].line_stride, 64u);
    EXPECT_EQ(min_pixel_line_stride(nv_full(), *r8, 0), 38u);
    EXPECT_EQ(*pixel_surface_bytes(nv_full(), *r8), 2 * 64u + 64u);  // last line: 38 -> 2 atoms
    // Y10 semi-planar, 20 pixels, offset 9: Y needs (9 + 20) * 2 = 58 -> 64; U/V offset 9 % 8 = 1,
    // needs (1 + 20) * 4 = 84 -> 96. U/V plane at 4 * 64 = 256.
    auto y10 = dense_pixel_surface(nv_full(), PixelFormat::Y10_U10V10_N444, 20, 4, 9);
    ASSERT_TRUE(y10.ok());
    EXPECT_EQ(y10->planes[0].line_stride, 64u);
    EXPECT_EQ(y10->planes[1].line_stride, 96u);
    EXPECT_EQ(y10->planes[1].offset, 256u);
    EXPECT_EQ(*pixel_surface_bytes(nv_full(), *y10), 256u + 3 * 96u + 96u);
}

// ---- round trips -------------------------------------------------------------------------

struct RandomCase {
    PixelSurface surface;
    Host host;
};

HostType random_host_type(std::mt19937_64& rng, const PixelFormatInfo& f) {
    if (f.input_precision == Precision::Fp16) return HostType::Float16;
    uint32_t widest = 0;
    for (uint32_t ch = 0; ch < f.channels; ++ch)
        widest = std::max<uint32_t>(widest, f.components[ch].bits);
    if (widest <= 8) {
        const HostType all[] = {HostType::Uint8, HostType::Int8, HostType::Uint16, HostType::Int16};
        return all[test::random_between(rng, 0, 3)];
    }
    return test::random_between(rng, 0, 1) ? HostType::Uint16 : HostType::Int16;
}

PixelSurface random_surface(std::mt19937_64& rng, const HwConfig& cfg, PixelFormat format) {
    const PixelFormatInfo& f = pixel_format_info(format);
    PixelSurface s;
    s.format = format;
    s.width = test::random_between(rng, 0, 3) == 0 ? 1 : test::random_between(rng, 1, 70);
    s.height = test::random_between(rng, 0, 3) == 0 ? 1 : test::random_between(rng, 1, 12);
    s.x_offset = test::random_between(rng, 0, max_pixel_x_offset(cfg, format));
    for (unsigned p = 0; p < f.planes; ++p) {
        const uint64_t needed = round_up(min_pixel_line_stride(cfg, s, p), 32);
        const bool large = test::random_between(rng, 0, 3) == 0;
        s.planes[p].line_stride = needed + 32 * (large ? test::random_between(rng, 64, 160)
                                                       : test::random_between(rng, 0, 3));
    }
    const uint64_t gap = 32 * test::random_between(rng, 0, 4);
    const uint64_t first = 32 * test::random_between(rng, 0, 4);
    if (f.planes == 2 && test::random_between(rng, 0, 2) == 0) {  // U/V plane first
        s.planes[1].offset = first;
        s.planes[0].offset =
            round_up(first + uint64_t(s.height) * s.planes[1].line_stride, 32) + gap;
    } else {
        s.planes[0].offset = first;
        if (f.planes == 2)
            s.planes[1].offset =
                round_up(first + uint64_t(s.height) * s.planes[0].line_stride, 32) + gap;
    }
    return s;
}

void fill_random(std::mt19937_64& rng, const PixelFormatInfo& f, Host& host) {
    const bool is_signed = host.type == HostType::Int8 || host.type == HostType::Int16;
    for (uint32_t y = 0; y < host.dims.h; ++y)
        for (uint32_t x = 0; x < host.dims.w; ++x)
            for (uint32_t ch = 0; ch < f.channels; ++ch) {
                if (host.type == HostType::Float16) {
                    host.set(ch, y, x, test::random_between(rng, 0, 0xffff));  // any bits, NaN too
                    continue;
                }
                const int64_t span = int64_t(1) << f.components[ch].bits;
                const int64_t lo = is_signed ? -span / 2 : 0,
                              hi = is_signed ? span / 2 - 1 : span - 1;
                host.set(ch, y, x, std::uniform_int_distribution<int64_t>(lo, hi)(rng));
            }
}

// Every byte the pixels occupy, from the layout formula of docs/formats/pixel.md.
std::vector<bool> pixel_bytes(const HwConfig& cfg, const PixelSurface& s, size_t size) {
    const PixelFormatInfo& f = pixel_format_info(s.format);
    std::vector<bool> used(size, false);
    for (unsigned p = 0; p < f.planes; ++p) {
        const uint64_t xoff =
            p == 0 ? s.x_offset : s.x_offset % (cfg.atom_bytes / f.bytes_per_pixel[1]);
        for (uint32_t y = 0; y < s.height; ++y)
            for (uint64_t b = 0; b < uint64_t(s.width) * f.bytes_per_pixel[p]; ++b)
                used.at(s.planes[p].offset + y * s.planes[p].line_stride +
                        xoff * f.bytes_per_pixel[p] + b) = true;
    }
    return used;
}

void round_trip_every_format(const HwConfig& cfg, int cases_per_format) {
    auto rng = test::rng_for_test();
    for (const PixelFormatInfo& f : pixel_formats()) {
        for (int i = 0; i < cases_per_format; ++i) {
            const PixelSurface s = random_surface(rng, cfg, f.format);
            SCOPED_TRACE(::testing::Message()
                         << f.name << " " << s.width << "x" << s.height << " x offset "
                         << s.x_offset << " strides " << s.planes[0].line_stride << "/"
                         << s.planes[1].line_stride);
            const auto bytes = pixel_surface_bytes(cfg, s);
            ASSERT_TRUE(bytes.ok()) << bytes.message();
            const HostLayout layout =
                test::random_between(rng, 0, 1) ? HostLayout::NHWC : HostLayout::NCHW;
            Host in(random_host_type(rng, f), layout, f.channels, s.height, s.width);
            fill_random(rng, f, in);
            auto buf = sentinel_buffer(*bytes);
            const Status packed = pack_pixels(cfg, in.view(), s, buf);
            ASSERT_TRUE(packed.ok()) << packed.message();
            const auto used = pixel_bytes(cfg, s, buf.size());
            for (size_t b = 0; b < buf.size(); ++b) {
                if (!used[b]) {
                    ASSERT_EQ(buf[b], kSentinel) << "byte " << b << " is not a pixel's";
                }
            }
            Host out(in.type, layout == HostLayout::NHWC ? HostLayout::NCHW : HostLayout::NHWC,
                     f.channels, s.height, s.width);
            ASSERT_TRUE(unpack_pixels(cfg, buf, s, out.mut()).ok());
            for (uint32_t y = 0; y < s.height; ++y)
                for (uint32_t x = 0; x < s.width; ++x)
                    for (uint32_t ch = 0; ch < f.channels; ++ch) {
                        const size_t bpe = bytes_per_element(in.type);
                        ASSERT_EQ(0, std::memcmp(in.bytes.data() + in.index(ch, y, x) * bpe,
                                                 out.bytes.data() + out.index(ch, y, x) * bpe, bpe))
                            << "channel " << ch << " at (" << x << ", " << y << ")";
                    }
        }
    }
}

TEST(PixelSurface, EveryFormatRoundTripsOnNvFull) {
    round_trip_every_format(nv_full(), 10);
}

TEST(PixelSurface, EveryFormatRoundTripsOnNvSmall) {
    round_trip_every_format(config("nv_small"), 4);
}

// 8-bit NCHW host rows take a shortcut into the formats whose 8-bit fields fill the pixel (the
// runtime's image inputs): the same bytes as the same values given as 16-bit integers, at every
// instruction-set level (the shortcut interleaves 16 or 32 pixels at a time), for lines with
// gaps between them and for dense lines (which it takes as one run).
TEST(PixelSurface, EightBitRowsGiveTheBytesOfSixteenBitValues) {
    auto rng = test::rng_for_test();
    int cases = 0;
    for (emu::IsaLevel level : emu::levels_of_this_cpu())
        for (const PixelFormatInfo& f : pixel_formats()) {
            if (f.planes != 1 || f.significant_bits != 8 || f.bytes_per_pixel[0] != f.channels)
                continue;
            for (HostType narrow : {HostType::Uint8, HostType::Int8}) {
                PixelSurface s = random_surface(rng, nv_full(), f.format);
                s.width = test::random_between(rng, 15, 100);
                const bool dense = cases % 3 == 0;
                if (dense) {  // lines of whole atoms, no gaps
                    s.x_offset = 0;
                    const uint32_t atom_pixels = 32 / f.bytes_per_pixel[0];
                    s.width = (s.width + atom_pixels - 1) / atom_pixels * atom_pixels;
                }
                s.planes[0].line_stride =
                    round_up(min_pixel_line_stride(nv_full(), s, 0), 32) + 32 * (cases % 3);
                if (dense) {
                    ASSERT_EQ(s.planes[0].line_stride, uint64_t(s.width) * f.bytes_per_pixel[0]);
                }
                SCOPED_TRACE(::testing::Message() << f.name << " " << to_string(narrow) << " "
                                                  << s.width << "x" << s.height << " x offset "
                                                  << s.x_offset << " at " << emu::isa_name(level));
                const auto bytes = pixel_surface_bytes(nv_full(), s);
                ASSERT_TRUE(bytes.ok()) << bytes.message();
                Host in(narrow, HostLayout::NCHW, f.channels, s.height, s.width);
                fill_random(rng, f, in);
                const HostType wide =
                    narrow == HostType::Uint8 ? HostType::Uint16 : HostType::Int16;
                Host in_wide(wide, HostLayout::NCHW, f.channels, s.height, s.width);
                for (uint32_t ch = 0; ch < f.channels; ++ch)
                    for (uint32_t y = 0; y < s.height; ++y)
                        for (uint32_t x = 0; x < s.width; ++x) {
                            const uint8_t b = in.bytes[in.index(ch, y, x)];
                            in_wide.set(ch, y, x,
                                        narrow == HostType::Uint8
                                            ? int64_t(b)
                                            : int64_t(static_cast<int8_t>(b)));
                        }
                auto got = sentinel_buffer(*bytes), expected = sentinel_buffer(*bytes);
                {
                    const emu::IsaLimit limit(level);
                    ASSERT_TRUE(pack_pixels(nv_full(), in.view(), s, got).ok());
                }
                ASSERT_TRUE(pack_pixels(nv_full(), in_wide.view(), s, expected).ok());
                ASSERT_EQ(got, expected);
                ++cases;
            }
        }
    EXPECT_GE(cases, 10);  // R8 and the 8-bit RGBA/YUV orders
}

// A dense one-line A8B8G8R8 surface of `width` pixels written `offset` bytes into a buffer from
// 8-bit rows `source_offset` bytes past a 64-byte boundary at `level`: the same bytes as through
// 16-bit values (the element-wise path).
void expect_eight_bit_line_as_sixteen_bit(std::mt19937_64& rng, emu::IsaLevel level, uint32_t width,
                                          uint32_t offset, uint32_t source_offset) {
    const PixelFormatInfo& f = pixel_format_info(PixelFormat::A8B8G8R8);
    const auto s = dense_pixel_surface(nv_full(), f.format, width, 1);
    ASSERT_TRUE(s.ok()) << s.message();
    SCOPED_TRACE(::testing::Message()
                 << "width " << width << " at byte " << offset << ", rows at byte " << source_offset
                 << " at " << emu::isa_name(level));
    const auto bytes = pixel_surface_bytes(nv_full(), *s);
    ASSERT_TRUE(bytes.ok()) << bytes.message();
    Host in(HostType::Uint8, HostLayout::NCHW, 4, 1, width);
    fill_random(rng, f, in);
    Host in_wide(HostType::Uint16, HostLayout::NCHW, 4, 1, width);
    for (uint32_t ch = 0; ch < 4; ++ch)
        for (uint32_t x = 0; x < width; ++x) in_wide.set(ch, 0, x, in.bytes[in.index(ch, 0, x)]);
    // The rows source_offset bytes past a 64-byte boundary.
    std::vector<uint8_t> rows(in.bytes.size() + 128);
    const size_t start = (64 - reinterpret_cast<uintptr_t>(rows.data()) % 64) % 64 + source_offset;
    std::memcpy(rows.data() + start, in.bytes.data(), in.bytes.size());
    const ConstTensorView shifted{rows.data() + start, in.bytes.size(), in.type, in.layout,
                                  in.dims};
    // The pixels `offset` bytes past a 64-byte boundary (in both buffers).
    auto got = sentinel_buffer(*bytes + offset + 64), expected = got;
    const auto at = [&](std::vector<std::byte>& buffer) {
        return std::span(buffer).subspan(
            (64 - reinterpret_cast<uintptr_t>(buffer.data()) % 64) % 64 + offset, *bytes);
    };
    {
        const emu::IsaLimit limit(level);
        ASSERT_TRUE(pack_pixels(nv_full(), shifted, *s, at(got)).ok());
    }
    ASSERT_TRUE(pack_pixels(nv_full(), in_wide.view(), *s, at(expected)).ok());
    ASSERT_TRUE(std::equal(at(got).begin(), at(got).end(), at(expected).begin()));
    // Nothing outside the surface written.
    const auto inside = at(got);
    const auto sentinel = [](std::byte b) { return b == kSentinel; };
    ASSERT_TRUE(std::all_of(got.data(), inside.data(), sentinel));
    ASSERT_TRUE(std::all_of(inside.data() + inside.size(), got.data() + got.size(), sentinel));
}

// The 8-bit shortcut's vector loops wherever the destination and the host rows start (AVX2
// starts where the row loads are aligned, AVX-512 where the pixel stores are): dense A8B8G8R8
// surfaces written at every byte offset into a buffer from rows at every 16-byte and some
// other offsets from a 64-byte boundary, widths around the 32-, 64- and 128-pixel blocks and up
// to several blocks after the longest unaligned start.
TEST(PixelSurface, EightBitRowsAtEveryAlignment) {
    auto rng = test::rng_for_test();
    for (emu::IsaLevel level : emu::levels_of_this_cpu())
        for (uint32_t offset = 0; offset < 72; ++offset)
            for (uint32_t source_offset : {0u, 16u, 32u, 48u, 8u + offset % 8, offset}) {
                const uint32_t whole_blocks[] = {64, 127, 128, 129, 140, 160, 191, 192};
                const uint32_t width =
                    offset < 64 ? test::random_between(rng, 1, 400) : whole_blocks[offset - 64];
                expect_eight_bit_line_as_sixteen_bit(rng, level, width, offset, source_offset);
                if (HasFatalFailure()) return;
            }
}

// AVX2 stores the pixels a 128-bit lane after the blocks' aligned row loads where that aligns
// them (pixels 16 bytes past a 32-byte boundary, as from malloc), carrying each block's last
// lane into the next and writing the last one alone: every width up to several two-block steps,
// from rows whose first aligned load is at pixel 0 or 2 (the first block then starts a block
// later, after the lane before it), 4, 16 and 28, and the same with the pixels 8 bytes further
// (not shifted, unaligned).
TEST(PixelSurface, EightBitRowsWithThePixelStoresALaneAfterTheLoads) {
    auto rng = test::rng_for_test();
    for (emu::IsaLevel level : emu::levels_of_this_cpu())
        for (uint32_t source_offset : {0u, 30u, 28u, 16u, 4u}) {
            const uint32_t first_aligned = (32 - source_offset % 32) % 32;
            const uint32_t lane_later = (16 + 64 - first_aligned * 4 % 32) % 32;
            for (uint32_t offset : {lane_later, lane_later + 32, lane_later + 8})
                for (uint32_t width = 1; width <= 330; ++width) {
                    expect_eight_bit_line_as_sixteen_bit(rng, level, width, offset, source_offset);
                    if (HasFatalFailure()) return;
                }
        }
}

TEST(PixelSurface, Fp16FormatsTakeFloat32RoundedToNearestEven) {
    auto s = dense_pixel_surface(nv_full(), PixelFormat::R16_F, 3, 1);
    ASSERT_TRUE(s.ok());
    Host in(HostType::Float32, HostLayout::NHWC, 1, 1, 3);
    in.set_float(0, 0, 0, 1.0f);                // 0x3c00
    in.set_float(0, 0, 1, 1.0f + 1.0f / 2048);  // halfway between 1 and 1+2^-10: even -> 0x3c00
    in.set_float(0, 0, 2, -65504.0f);           // 0xfbff
    auto buf = sentinel_buffer(*pixel_surface_bytes(nv_full(), *s));
    ASSERT_TRUE(pack_pixels(nv_full(), in.view(), *s, buf).ok());
    EXPECT_EQ(byte_at(buf, 0), 0x00);
    EXPECT_EQ(byte_at(buf, 1), 0x3c);
    EXPECT_EQ(byte_at(buf, 2), 0x00);
    EXPECT_EQ(byte_at(buf, 3), 0x3c);
    EXPECT_EQ(byte_at(buf, 4), 0xff);
    EXPECT_EQ(byte_at(buf, 5), 0xfb);
    Host out(HostType::Float32, HostLayout::NHWC, 1, 1, 3);
    ASSERT_TRUE(unpack_pixels(nv_full(), buf, *s, out.mut()).ok());
    float third;
    std::memcpy(&third, out.bytes.data() + 8, 4);
    EXPECT_EQ(third, -65504.0f);
}

TEST(PixelSurface, SignedHostTypesStoreTwosComplementFields) {
    auto s = dense_pixel_surface(nv_full(), PixelFormat::A2B10G10R10, 1, 1);
    ASSERT_TRUE(s.ok());
    Host in(HostType::Int16, HostLayout::NHWC, 4, 1, 1);
    in.set(0, 0, 0, -1);    // R field 0x3ff
    in.set(1, 0, 0, -512);  // G field 0x200
    in.set(2, 0, 0, 511);   // B field 0x1ff
    in.set(3, 0, 0, -2);    // A field 0b10
    auto buf = sentinel_buffer(*pixel_surface_bytes(nv_full(), *s));
    ASSERT_TRUE(pack_pixels(nv_full(), in.view(), *s, buf).ok());
    // word = 2<<30 | 0x1ff<<20 | 0x200<<10 | 0x3ff = 0x80000000 | 0x1ff00000 | 0x80000 | 0x3ff
    //      = 0x9ff803ff
    EXPECT_EQ(byte_at(buf, 0), 0xff);
    EXPECT_EQ(byte_at(buf, 1), 0x03);
    EXPECT_EQ(byte_at(buf, 2), 0xf8);
    EXPECT_EQ(byte_at(buf, 3), 0x9f);
}

TEST(PixelSurface, InterleavedPlanesThatDoNotOverlapAreAccepted) {
    // Y lines at 0, 128, ...; U/V lines at 64, 192, ...: the planes interleave line by line.
    PixelSurface s;
    s.format = PixelFormat::Y8_V8U8_N444;
    s.width = 20;
    s.height = 3;
    s.planes = {PixelPlane{0, 128}, PixelPlane{64, 128}};
    ASSERT_TRUE(check_pixel_surface(nv_full(), s).ok());
    Host in(HostType::Uint8, HostLayout::NHWC, 3, 3, 20);
    auto rng = test::rng_for_test();
    fill_random(rng, pixel_format_info(s.format), in);
    auto buf = sentinel_buffer(*pixel_surface_bytes(nv_full(), s));
    ASSERT_TRUE(pack_pixels(nv_full(), in.view(), s, buf).ok());
    Host out(HostType::Uint8, HostLayout::NHWC, 3, 3, 20);
    ASSERT_TRUE(unpack_pixels(nv_full(), buf, s, out.mut()).ok());
    EXPECT_EQ(in.bytes, out.bytes);
}

// ---- errors ------------------------------------------------------------------------------

// Packs with s and expects failure with a message containing `want` and an untouched buffer.
void expect_pack_fails(const HwConfig& cfg, const PixelSurface& s, const ConstTensorView& src,
                       size_t buffer_bytes, const std::string& want) {
    auto buf = sentinel_buffer(buffer_bytes);
    const Status st = pack_pixels(cfg, src, s, buf);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(want), std::string::npos) << st.message();
    EXPECT_TRUE(std::all_of(buf.begin(), buf.end(), [](std::byte b) { return b == kSentinel; }))
        << "pack wrote to the buffer although it failed";
}

PixelSurface r8(uint32_t width, uint32_t height, uint64_t offset, uint64_t stride) {
    PixelSurface s;
    s.width = width;
    s.height = height;
    s.planes[0] = {offset, stride};
    return s;
}

TEST(PixelSurface, RejectsMisalignedStartAddress) {
    Host in(HostType::Uint8, HostLayout::NHWC, 1, 2, 8);
    expect_pack_fails(nv_full(), r8(8, 2, 16, 32), in.view(), 256,
                      "pixel surface T_R8: pitch-linear pixel surface: start address 16 (0x10) is "
                      "not a multiple of 32 bytes");
}

TEST(PixelSurface, RejectsMisalignedLineStride) {
    Host in(HostType::Uint8, HostLayout::NHWC, 1, 2, 8);
    expect_pack_fails(nv_full(), r8(8, 2, 0, 100), in.view(), 512,
                      "line stride 100 (0x64) is not a multiple of 32 bytes");
}

TEST(PixelSurface, RejectsMisalignedUVPlane) {
    PixelSurface s;
    s.format = PixelFormat::Y8_U8V8_N444;
    s.width = 4;
    s.planes = {PixelPlane{0, 32}, PixelPlane{40, 32}};
    const Status st = check_pixel_surface(nv_full(), s);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.message(),
              "pixel surface T_Y8___U8V8_N444 plane 1 (U/V): pitch-linear pixel surface: "
              "start address 40 (0x28) is not a multiple of 32 bytes");
}

TEST(PixelSurface, RejectsXOffsetOutOfRange) {
    PixelSurface s = r8(1, 1, 0, 32);
    s.format = PixelFormat::A8B8G8R8;
    s.x_offset = 8;
    Host in(HostType::Uint8, HostLayout::NHWC, 4, 1, 1);
    expect_pack_fails(nv_full(), s, in.view(), 64,
                      "pixel surface: x offset 8 is out of range 0..7 for T_A8B8G8R8 (4-byte "
                      "pixels, 32-byte atoms on nv_full)");
    // nv_small's 8-byte atom holds 8 R8 pixels.
    PixelSurface small = r8(1, 1, 0, 32);
    small.x_offset = 8;
    const Status st = check_pixel_surface(config("nv_small"), small);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("x offset 8 is out of range 0..7 for T_R8"), std::string::npos);
    small.x_offset = 7;
    EXPECT_TRUE(check_pixel_surface(config("nv_small"), small).ok());
}

TEST(PixelSurface, RejectsLineStrideTooSmallForOffsetAndWidth) {
    PixelSurface s = r8(30, 2, 0, 32);
    s.x_offset = 3;  // needs 33 bytes
    Host in(HostType::Uint8, HostLayout::NHWC, 1, 2, 30);
    expect_pack_fails(nv_full(), s, in.view(), 256,
                      "pixel surface T_R8: line stride 32 is smaller than the 33 bytes a line "
                      "needs (x offset 3 + width 30 pixels of 1 bytes)");
    // The U/V plane needs twice the bytes of the Y plane.
    PixelSurface yuv;
    yuv.format = PixelFormat::Y8_U8V8_N444;
    yuv.width = 20;
    yuv.planes = {PixelPlane{0, 32}, PixelPlane{32, 32}};
    const Status st = check_pixel_surface(nv_full(), yuv);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("plane 1 (U/V): line stride 32 is smaller than the 40 bytes"),
              std::string::npos)
        << st.message();
}

TEST(PixelSurface, RejectsHugeLineStride) {
    const Status st = check_pixel_surface(nv_full(), r8(1, 1, 0, uint64_t(1) << 32));
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("does not fit the 32-bit line stride register"), std::string::npos);
}

TEST(PixelSurface, RejectsBadExtentsAndFormat) {
    EXPECT_EQ(check_pixel_surface(nv_full(), r8(0, 1, 0, 32)).message(),
              "pixel surface: width 0 is out of range 1..8192");
    EXPECT_EQ(check_pixel_surface(nv_full(), r8(1, 8193, 0, 32)).message(),
              "pixel surface: height 8193 is out of range 1..8192");
    PixelSurface s = r8(1, 1, 0, 32);
    s.format = static_cast<PixelFormat>(99);
    EXPECT_EQ(check_pixel_surface(nv_full(), s).message(),
              "pixel surface: format value 99 is out of range 0..35");
    EXPECT_FALSE(dense_pixel_surface(nv_full(), static_cast<PixelFormat>(36), 1, 1).ok());
}

TEST(PixelSurface, RejectsOverlappingPlanes) {
    PixelSurface s;
    s.format = PixelFormat::Y8_U8V8_N444;
    s.width = 8;
    s.height = 2;
    s.planes = {PixelPlane{0, 32}, PixelPlane{32, 32}};  // U/V line 0 is Y line 1
    Host in(HostType::Uint8, HostLayout::NHWC, 3, 2, 8);
    expect_pack_fails(nv_full(), s, in.view(), 256,
                      "pixel surface T_Y8___U8V8_N444: line 0 of plane 1 (bytes 32..47) overlaps "
                      "line 1 of plane 0 (bytes 32..39)");
}

TEST(PixelSurface, RejectsTooSmallBuffers) {
    auto s = dense_pixel_surface(nv_full(), PixelFormat::A8B8G8R8, 5, 3);
    ASSERT_TRUE(s.ok());
    const uint64_t need = *pixel_surface_bytes(nv_full(), *s);  // 2 * 32 + 32 = 96
    ASSERT_EQ(need, 96u);
    Host in(HostType::Uint8, HostLayout::NHWC, 4, 3, 5);
    expect_pack_fails(
        nv_full(), *s, in.view(), need - 1,
        "pack pixels: destination of 95 bytes is too small for T_A8B8G8R8 5x3 (96 bytes)");
    Host out(HostType::Uint8, HostLayout::NHWC, 4, 3, 5);
    std::fill(out.bytes.begin(), out.bytes.end(), 0x5a);
    const auto small = sentinel_buffer(need - 1);
    const Status st = unpack_pixels(nv_full(), small, *s, out.mut());
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("source of 95 bytes is too small"), std::string::npos);
    EXPECT_TRUE(
        std::all_of(out.bytes.begin(), out.bytes.end(), [](uint8_t b) { return b == 0x5a; }));
    // A host buffer smaller than its dims.
    Host tiny(HostType::Uint8, HostLayout::NHWC, 4, 3, 5);
    ConstTensorView v = tiny.view();
    v.bytes = 10;
    expect_pack_fails(nv_full(), *s, v, need,
                      "pack pixels: source: buffer of 10 bytes is too small");
}

TEST(PixelSurface, RejectsComponentValuesOutsideTheirFields) {
    auto s = dense_pixel_surface(nv_full(), PixelFormat::A2B10G10R10, 2, 1);
    ASSERT_TRUE(s.ok());
    Host in(HostType::Uint16, HostLayout::NHWC, 4, 1, 2);
    in.set(0, 0, 1, 1024);
    expect_pack_fails(nv_full(), *s, in.view(), 64,
                      "pack pixels: source: T_A2B10G10R10 channel R at (x 1, y 0) is 1024, out of "
                      "range 0..1023 for its 10-bit field (uint16 values)");
    Host alpha(HostType::Int16, HostLayout::NCHW, 4, 1, 2);
    alpha.set(3, 0, 0, 2);  // a 2-bit signed field holds -2..1
    expect_pack_fails(nv_full(), *s, alpha.view(), 64,
                      "channel A at (x 0, y 0) is 2, out of range -2..1");
    // A negative value in an unsigned-only host is impossible; in int8 for an 8-bit field it fits.
    auto r = dense_pixel_surface(nv_full(), PixelFormat::R8, 1, 1);
    Host wide(HostType::Uint16, HostLayout::NHWC, 1, 1, 1);
    wide.set(0, 0, 0, 256);
    expect_pack_fails(nv_full(), *r, wide.view(), 32, "is 256, out of range 0..255");
}

TEST(PixelSurface, RejectsHostTypesThatCannotCarryTheComponents) {
    auto r = dense_pixel_surface(nv_full(), PixelFormat::R8, 1, 1);
    Host f32(HostType::Float32, HostLayout::NHWC, 1, 1, 1);
    expect_pack_fails(nv_full(), *r, f32.view(), 32,
                      "pack pixels: source: T_R8 holds integer components; host type float32 is "
                      "not accepted");
    auto f = dense_pixel_surface(nv_full(), PixelFormat::R16_F, 1, 1);
    Host u16(HostType::Uint16, HostLayout::NHWC, 1, 1, 1);
    expect_pack_fails(nv_full(), *f, u16.view(), 32,
                      "T_R16_F holds fp16 components; host type uint16 is not accepted");
    // Reading 10-bit fields back into uint8 would lose bits.
    auto p = dense_pixel_surface(nv_full(), PixelFormat::A2R10G10B10, 1, 1);
    Host out(HostType::Uint8, HostLayout::NHWC, 4, 1, 1);
    const auto buf = sentinel_buffer(32);
    const Status st = unpack_pixels(nv_full(), buf, *p, out.mut());
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.message(),
              "unpack pixels: destination: host type uint8 (8 bits) cannot hold the "
              "10-bit components of T_A2R10G10B10");
    EXPECT_TRUE(std::all_of(out.bytes.begin(), out.bytes.end(), [](uint8_t b) { return b == 0; }));
}

TEST(PixelSurface, RejectsHostDimensionsThatDoNotMatch) {
    auto s = dense_pixel_surface(nv_full(), PixelFormat::A8B8G8R8, 4, 2);
    Host three(HostType::Uint8, HostLayout::NHWC, 3, 2, 4);
    expect_pack_fails(nv_full(), *s, three.view(), 64,
                      "pack pixels: source: dimensions 1x3x2x4 (NxCxHxW) do not match T_A8B8G8R8 "
                      "4x2 (1x4x2x4)");
}

// 8-bit NCHW rows into one-plane pixels take a few quick checks instead of the full ones, which
// the same bytes as NHWC rows always take. One or two changes to a valid surface, host tensor or
// buffer, at or just past every limit the checks have: the same outcome and message either way,
// and nothing written on a failure.
TEST(PixelSurface, QuickChecksOfEightBitRowsFailAsTheFullChecks) {
    struct Case {
        PixelSurface s;
        Dims4 dims;
        HostType type = HostType::Uint8;
        bool null_data = false;
        int64_t bytes_short = 0;  // host buffer bytes below the tensor's
        uint64_t dst_short = 0;   // destination bytes below the surface's
        uint64_t dst_extra = 0;
    };
    using Change = void (*)(const HwConfig&, Case&);
    const auto line = [](const HwConfig& cfg, const PixelSurface& s) {
        return round_up(min_pixel_line_stride(cfg, s, 0), cfg.atom_bytes);
    };
    static const auto fit_stride = [](const HwConfig& cfg, Case& c) {
        c.s.planes[0].line_stride = round_up(min_pixel_line_stride(cfg, c.s, 0), cfg.atom_bytes);
    };
    const Change changes[] = {
        [](const HwConfig&, Case& c) { c.s.format = static_cast<PixelFormat>(kPixelFormatCount); },
        [](const HwConfig&, Case& c) { c.s.width = c.dims.w = 0; },
        [](const HwConfig& cfg, Case& c) {
            c.s.width = c.dims.w = kMaxPixelExtent;
            fit_stride(cfg, c);
        },
        [](const HwConfig& cfg, Case& c) {
            c.s.width = c.dims.w = kMaxPixelExtent + 1;
            fit_stride(cfg, c);
        },
        [](const HwConfig&, Case& c) { c.s.height = c.dims.h = 0; },
        [](const HwConfig&, Case& c) { c.s.height = c.dims.h = 1; },  // huge strides fit
        [](const HwConfig&, Case& c) { c.s.height = c.dims.h = kMaxPixelExtent; },
        [](const HwConfig&, Case& c) { c.s.height = c.dims.h = kMaxPixelExtent + 1; },
        [](const HwConfig& cfg, Case& c) {
            c.s.x_offset = max_pixel_x_offset(cfg, c.s.format);
            fit_stride(cfg, c);
        },
        [](const HwConfig& cfg, Case& c) {
            c.s.x_offset = max_pixel_x_offset(cfg, c.s.format) + 1;
            fit_stride(cfg, c);
        },
        [](const HwConfig& cfg, Case& c) { c.s.planes[0].offset += cfg.atom_bytes / 2; },
        [](const HwConfig& cfg, Case& c) {
            c.s.planes[0].offset = (uint64_t(1) << 62) + cfg.atom_bytes;
        },
        [](const HwConfig&, Case& c) { c.s.planes[0].offset = uint64_t(1) << 62; },
        [](const HwConfig&, Case& c) { c.s.planes[0].line_stride += 1; },
        [](const HwConfig& cfg, Case& c) { c.s.planes[0].line_stride -= cfg.atom_bytes; },
        [](const HwConfig&, Case& c) { c.s.planes[0].line_stride = uint64_t(1) << 32; },
        [](const HwConfig& cfg, Case& c) {
            c.s.planes[0].line_stride = (uint64_t(1) << 32) - cfg.atom_bytes;
        },
        [](const HwConfig&, Case& c) { c.null_data = true; },
        [](const HwConfig&, Case& c) { c.bytes_short = 1; },
        [](const HwConfig&, Case& c) { c.dims.n = 2; },
        [](const HwConfig&, Case& c) { c.dims.c += 1; },
        [](const HwConfig&, Case& c) { c.dims.h += 1; },
        [](const HwConfig&, Case& c) { c.dims.w -= 1; },
        [](const HwConfig&, Case& c) { c.type = HostType::Float32; },
        [](const HwConfig&, Case& c) { c.type = HostType::Uint16; },
        [](const HwConfig&, Case& c) { c.type = HostType::Int8; },
        [](const HwConfig&, Case& c) { c.dst_short = 1; },
        [](const HwConfig&, Case& c) { c.dst_extra = 1; },
    };
    constexpr uint64_t kMaxBuffer = uint64_t(1) << 24;
    int failures = 0, successes = 0;
    for (const HwConfig* cfg : {&nv_full(), &config("nv_small")})
        for (PixelFormat format : {PixelFormat::A8B8G8R8, PixelFormat::R8}) {
            Case base;
            base.s.format = format;
            base.s.width = 5;
            base.s.height = 3;
            base.s.x_offset = 1;
            base.s.planes[0].offset = 2 * cfg->atom_bytes;
            base.s.planes[0].line_stride = line(*cfg, base.s) + cfg->atom_bytes;
            base.dims = {1, pixel_format_info(format).channels, 3, 5};
            const size_t n = std::size(changes);
            for (size_t i = 0; i <= n; ++i)
                for (size_t j = i; j <= n; ++j) {
                    Case c = base;
                    if (i < n) changes[i](*cfg, c);
                    if (j < n && j != i) changes[j](*cfg, c);
                    SCOPED_TRACE(::testing::Message() << cfg->name << " " << to_string(format)
                                                      << " changes " << i << ", " << j);
                    const uint64_t tensor_bytes = c.dims.elements() * bytes_per_element(c.type);
                    std::vector<uint8_t> host(std::min(tensor_bytes, kMaxBuffer), 0x11);
                    ConstTensorView nchw{c.null_data ? nullptr : host.data(),
                                         tensor_bytes - c.bytes_short, c.type, HostLayout::NCHW,
                                         c.dims};
                    ConstTensorView nhwc = nchw;
                    nhwc.layout = HostLayout::NHWC;
                    // Room for every line (the last one's stride not needed, so that a
                    // one-line surface with a stride past the limit fits a buffer).
                    const uint64_t end =
                        c.s.planes[0].offset +
                        uint64_t(std::max(c.s.height, 1u) - 1) * c.s.planes[0].line_stride +
                        line(*cfg, c.s) + cfg->atom_bytes;
                    const Result<uint64_t> bytes = pixel_surface_bytes(*cfg, c.s);
                    const uint64_t wanted = (bytes.ok() ? *bytes : end) - c.dst_short + c.dst_extra;
                    // Too large to allocate: an empty destination (too small for any surface).
                    const uint64_t given =
                        tensor_bytes > kMaxBuffer || wanted > kMaxBuffer ? 0 : wanted;
                    auto quick = sentinel_buffer(given), full = sentinel_buffer(given);
                    const Status got = pack_pixels(*cfg, nchw, c.s, quick);
                    const Status want = pack_pixels(*cfg, nhwc, c.s, full);
                    ASSERT_EQ(got.ok(), want.ok()) << got.message() << " / " << want.message();
                    ASSERT_EQ(got.message(), want.message());
                    if (got.ok()) {
                        ++successes;
                        continue;
                    }
                    ++failures;
                    ASSERT_TRUE(std::all_of(quick.begin(), quick.end(),
                                            [](std::byte b) { return b == kSentinel; }));
                }
        }
    EXPECT_GT(failures, 1000);
    EXPECT_GT(successes, 40);
}

}  // namespace
}  // namespace nvdla
