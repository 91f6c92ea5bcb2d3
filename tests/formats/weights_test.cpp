// Weight surfaces for direct convolution, image input and deconvolution: hand-worked
// positions from the seed's rules, randomized pack/unpack round trips and every error path.
#include "nvdla/formats/weights.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "nvdla/precision/fp16.hpp"
#include "test_support.hpp"

namespace nvdla {
namespace {

using test::config;

// A dense host tensor with its storage.
struct Host {
    std::vector<uint8_t> storage;
    HostType type = HostType::Int8;
    HostLayout layout = HostLayout::NCHW;
    Dims4 dims;

    Host(HostType t, Dims4 d, HostLayout l = HostLayout::NCHW)
        : storage(d.elements() * bytes_per_element(t)), type(t), layout(l), dims(d) {}
    ConstTensorView view() const { return {storage.data(), storage.size(), type, layout, dims}; }
    TensorView mutable_view() { return {storage.data(), storage.size(), type, layout, dims}; }
    size_t index(uint32_t k, uint32_t c, uint32_t r, uint32_t s) const {
        return layout == HostLayout::NCHW ? ((size_t(k) * dims.c + c) * dims.h + r) * dims.w + s
                                          : ((size_t(k) * dims.h + r) * dims.w + s) * dims.c + c;
    }
    template <class T>
    void set(uint32_t k, uint32_t c, uint32_t r, uint32_t s, T v) {
        std::memcpy(storage.data() + index(k, c, r, s) * sizeof(T), &v, sizeof(T));
    }
};

int16_t load_i16(const std::vector<std::byte>& b, uint64_t offset) {
    int16_t v;
    std::memcpy(&v, b.data() + offset, 2);
    return v;
}

int8_t load_i8(const std::vector<std::byte>& b, uint64_t offset) {
    return static_cast<int8_t>(std::to_integer<uint8_t>(b[offset]));
}

bool all_bytes_are(const std::vector<std::byte>& b, uint8_t value) {
    return std::all_of(b.begin(), b.end(), [&](std::byte x) { return x == std::byte{value}; });
}

WeightLayout layout_or_die(const HwConfig& cfg, const WeightFormat& f, Dims4 d) {
    Result<WeightLayout> l = make_weight_layout(cfg, f, d);
    EXPECT_TRUE(l.ok()) << l.message();
    return *l;
}

// ---- Direct convolution: the seed's example and hand-computed positions ----------------------

// The seed's figure: one group of 3x3 kernels of 192 bytes. In int16 that is 96 channels, so
// each kernel is a 64-channel (128-byte) cube and a 32-channel (64-byte) cube; within the group
// the cubes go C' -> K -> S -> R -> C.
TEST(WeightsDirect, SeedGroupOf3x3x192ByteKernelsInt16) {
    const HwConfig& cfg = config("nv_full");
    const Dims4 d{16, 96, 3, 3};
    const WeightLayout l = layout_or_die(cfg, {WeightKind::Direct, Precision::Int16}, d);
    EXPECT_EQ(l.surface.kernels_per_group, 16u);
    EXPECT_EQ(l.surface.bytes_per_kernel, 9u * 192);
    EXPECT_EQ(l.size_bytes(), 16u * 9 * 192);  // 27648 = 216 x 128: no padding
    EXPECT_EQ(l.kernel_width, 3u);
    EXPECT_EQ(l.kernel_channels, 96u);

    Host host(HostType::Int16, d);
    for (uint32_t k = 0; k < 16; ++k)
        for (uint32_t c = 0; c < 96; ++c)
            for (uint32_t r = 0; r < 3; ++r)
                for (uint32_t s = 0; s < 3; ++s)
                    host.set(k, c, r, s, static_cast<int16_t>(k * 1000 + c * 10 + r * 3 + s));
    std::vector<std::byte> surface(l.size_bytes());
    ASSERT_TRUE(pack_weights(host.view(), l, surface).ok());

    for (uint32_t k = 0; k < 16; ++k)
        for (uint32_t c = 0; c < 96; ++c)
            for (uint32_t r = 0; r < 3; ++r)
                for (uint32_t s = 0; s < 3; ++s) {
                    const uint32_t position = r * 3 + s;
                    // First cubes: 9 positions x 16 kernels x 128 bytes; then the 64-byte ones.
                    const uint64_t expected =
                        c < 64 ? (position * 16 + k) * 128 + c * 2
                               : 9 * 16 * 128 + (position * 16 + k) * 64 + (c - 64) * 2;
                    ASSERT_EQ(*weight_byte_offset(l, k, c, r, s), expected);
                    ASSERT_EQ(load_i16(surface, expected), k * 1000 + c * 10 + r * 3 + s);
                }
    // Spot checks written out: (k 1, c 0, r 0, s 1) is position 1 -> (1 * 16 + 1) * 128.
    EXPECT_EQ(*weight_byte_offset(l, 1, 0, 0, 1), 2176u);
    // (k 0, c 64, r 0, s 0) starts the second cubes at 9 * 16 * 128 = 18432.
    EXPECT_EQ(*weight_byte_offset(l, 0, 64, 0, 0), 18432u);
}

// The same figure in int8: 192 channels, three 64-byte cubes, 32 kernels per group.
TEST(WeightsDirect, SeedGroupOf3x3x192ByteKernelsInt8) {
    const HwConfig& cfg = config("nv_full");
    const Dims4 d{32, 192, 3, 3};
    const WeightLayout l = layout_or_die(cfg, {WeightKind::Direct, Precision::Int8}, d);
    EXPECT_EQ(l.surface.kernels_per_group, 32u);
    EXPECT_EQ(l.size_bytes(), 32u * 9 * 192);
    for (uint32_t k = 0; k < 32; k += 5)
        for (uint32_t c = 0; c < 192; c += 7)
            for (uint32_t r = 0; r < 3; ++r)
                for (uint32_t s = 0; s < 3; ++s)
                    ASSERT_EQ(*weight_byte_offset(l, k, c, r, s),
                              (c / 64) * 9 * 32 * 64 + ((r * 3 + s) * 32 + k) * 64 + c % 64);
}

// Two groups, the last with 3 kernels, and a last cube of 6 channels: nothing is padded
// between groups or cubes, only the end of the surface.
TEST(WeightsDirect, LastGroupAndLastCubeAreCompact) {
    const HwConfig& cfg = config("nv_full");
    const Dims4 d{35, 70, 2, 1};
    const WeightLayout l = layout_or_die(cfg, {WeightKind::Direct, Precision::Int8}, d);
    EXPECT_EQ(l.surface.groups(), 2u);
    EXPECT_EQ(l.surface.data_bytes(), 35u * 140);
    EXPECT_EQ(l.size_bytes(), 4992u);  // 4900 rounded up to 128
    // Group 0: 32 kernels x 140 bytes = 4480. (k 5, c 66, r 1): cube 1 starts after
    // 64 ch x 2 positions x 32 kernels = 4096; inside it (position 1 x 32 + 5) x 6 + 2.
    EXPECT_EQ(*weight_byte_offset(l, 5, 66, 1, 0), 4096u + (1 * 32 + 5) * 6 + 2);
    // Group 1 (k 33 = kernel 1 of 3): base 4480, cube 1 after 64 x 2 x 3 = 384,
    // then (position 1 x 3 + 1) x 6 + 1.
    EXPECT_EQ(*weight_byte_offset(l, 33, 65, 1, 0), 4480u + 384 + (1 * 3 + 1) * 6 + 1);
    // (k 34, c 63, r 0) in cube 0 of group 1: (0 x 3 + 2) x 64 + 63.
    EXPECT_EQ(*weight_byte_offset(l, 34, 63, 0, 0), 4480u + 2 * 64 + 63);

    // The padding is written as zeros whatever dst held.
    Host host(HostType::Int8, d);
    std::fill(host.storage.begin(), host.storage.end(), uint8_t{0x11});
    std::vector<std::byte> surface(l.size_bytes() + 16, std::byte{0xee});
    ASSERT_TRUE(pack_weights(host.view(), l, surface).ok());
    for (size_t i = 0; i < 4900; ++i) ASSERT_EQ(surface[i], std::byte{0x11}) << i;
    for (size_t i = 4900; i < 4992; ++i) ASSERT_EQ(surface[i], std::byte{0}) << i;
    for (size_t i = 4992; i < surface.size(); ++i) ASSERT_EQ(surface[i], std::byte{0xee}) << i;
}

// nv_small: MAC atomic C = K = 8, so 8-kernel groups of 8-channel cubes.
TEST(WeightsDirect, NvSmallUsesItsAtomicSizes) {
    const HwConfig& cfg = config("nv_small");
    const Dims4 d{9, 10, 1, 2};
    const WeightLayout l = layout_or_die(cfg, {WeightKind::Direct, Precision::Int8}, d);
    EXPECT_EQ(l.surface.kernels_per_group, 8u);
    EXPECT_EQ(l.cube_channels, 8u);
    // (k 3, c 9, r 0, s 1): cube 1 after 8 ch x 2 positions x 8 kernels = 128; its cubes are
    // 2 channels wide: (position 1 x 8 + 3) x 2 + 1.
    EXPECT_EQ(*weight_byte_offset(l, 3, 9, 0, 1), 128u + (1 * 8 + 3) * 2 + 1);
    // k 8 is alone in group 1, which starts at 8 kernels x 20 bytes.
    EXPECT_EQ(*weight_byte_offset(l, 8, 4, 0, 1), 160u + 1 * 8 + 4);
    // nv_small_256 has MAC atomic C 32: one cube covers all 10 channels.
    const WeightLayout wide =
        layout_or_die(config("nv_small_256"), {WeightKind::Direct, Precision::Int8}, d);
    EXPECT_EQ(*weight_byte_offset(wide, 3, 9, 0, 1), (1u * 8 + 3) * 10 + 9);
}

TEST(WeightsDirect, ConvertsFloatHostWithScaleAndCountsSaturation) {
    const HwConfig& cfg = config("nv_full");
    const Dims4 d{1, 2, 1, 2};
    const WeightLayout l = layout_or_die(cfg, {WeightKind::Direct, Precision::Int8}, d);
    Host host(HostType::Float32, d, HostLayout::NHWC);
    host.set(0, 0, 0, 0, 1.25f);    // x 4 = 5
    host.set(0, 1, 0, 0, -0.875f);  // x 4 = -3.5 -> -4 (half away from zero)
    host.set(0, 0, 0, 1, 40.0f);    // x 4 = 160 -> 127, saturated
    host.set(0, 1, 0, 1, 0.1f);     // x 4 = 0.4 -> 0
    ConversionStats stats;
    ConvertOptions opt;
    opt.quant_scale = 4.0f;
    opt.stats = &stats;
    std::vector<std::byte> surface(l.size_bytes());
    ASSERT_TRUE(pack_weights(host.view(), l, surface, opt).ok());
    // One cube of 2 channels; positions s 0, s 1.
    EXPECT_EQ(load_i8(surface, 0), 5);
    EXPECT_EQ(load_i8(surface, 1), -4);
    EXPECT_EQ(load_i8(surface, 2), 127);
    EXPECT_EQ(load_i8(surface, 3), 0);
    EXPECT_EQ(stats.saturated, 1u);
}

TEST(WeightsDirect, Fp16FromFloatHost) {
    const HwConfig& cfg = config("nv_full");
    const Dims4 d{2, 1, 1, 1};
    const WeightLayout l = layout_or_die(cfg, {WeightKind::Direct, Precision::Fp16}, d);
    Host host(HostType::Float32, d);
    host.set(0, 0, 0, 0, 1.5f);
    host.set(1, 0, 0, 0, -2.0f);
    std::vector<std::byte> surface(l.size_bytes());
    ASSERT_TRUE(pack_weights(host.view(), l, surface).ok());
    EXPECT_EQ(static_cast<uint16_t>(load_i16(surface, 0)), 0x3e00);  // 1.5
    EXPECT_EQ(static_cast<uint16_t>(load_i16(surface, 2)), 0xc000);  // -2
    EXPECT_EQ(l.size_bytes(), 128u);
}

// ---- Image weights ------------------------------------------------------------------------

// The seed's figure: an int16 image of 3 channels. Pre-extension turns each row of S pixels
// into one column of S x 3 channels, ordered pixel by pixel (s slow, c fast).
TEST(WeightsImage, PreExtensionTurnsEachRowIntoChannels) {
    const HwConfig& cfg = config("nv_full");
    const Dims4 d{1, 3, 2, 3};
    const WeightLayout l = layout_or_die(cfg, {WeightKind::Image, Precision::Int16}, d);
    EXPECT_EQ(l.kernel_width, 1u);
    EXPECT_EQ(l.kernel_height, 2u);
    EXPECT_EQ(l.kernel_channels, 9u);
    EXPECT_EQ(l.format.image_channels, 3u);
    Host host(HostType::Int16, d);
    for (uint32_t c = 0; c < 3; ++c)
        for (uint32_t r = 0; r < 2; ++r)
            for (uint32_t s = 0; s < 3; ++s) host.set(0, c, r, s, int16_t(100 * r + 10 * s + c));
    std::vector<std::byte> surface(l.size_bytes());
    ASSERT_TRUE(pack_weights(host.view(), l, surface).ok());
    // Row r is one 9-channel cube at r x 9 elements; channel s x 3 + c.
    const int16_t expected[18] = {0,   1,   2,   10,  11,  12,  20,  21,  22,
                                  100, 101, 102, 110, 111, 112, 120, 121, 122};
    for (int i = 0; i < 18; ++i) EXPECT_EQ(load_i16(surface, 2 * i), expected[i]) << i;
    EXPECT_TRUE(std::all_of(surface.begin() + 36, surface.end(),
                            [](std::byte b) { return b == std::byte{0}; }));
}

// A 3-channel network on an RGBA pixel format: the 4th channel of each pixel gets zeros.
TEST(WeightsImage, PixelFormatChannelsPadEachPixel) {
    const HwConfig& cfg = config("nv_full");
    WeightFormat f{WeightKind::Image, Precision::Int8};
    f.image_channels = 4;
    const Dims4 d{2, 3, 1, 2};
    const WeightLayout l = layout_or_die(cfg, f, d);
    EXPECT_EQ(l.kernel_channels, 8u);
    EXPECT_EQ(l.padded_channels, 4u);
    // (k 1, c 2, r 0, s 1): channel 1 x 4 + 2 = 6 of kernel 1 -> 1 x 8 + 6.
    EXPECT_EQ(*weight_byte_offset(l, 1, 2, 0, 1), 14u);
    Host host(HostType::Int8, d);
    std::fill(host.storage.begin(), host.storage.end(), uint8_t{7});
    std::vector<std::byte> surface(l.size_bytes(), std::byte{0xcc});
    ASSERT_TRUE(pack_weights(host.view(), l, surface).ok());
    for (int i = 0; i < 16; ++i) EXPECT_EQ(load_i8(surface, i), i % 4 == 3 ? 0 : 7) << i;
}

// Post-extension 2: rows are taken two at a time into one cube, kernel by kernel; the last
// group of an odd R holds a single row (no zeros appended).
TEST(WeightsImage, PostExtensionTwoCombinesRowPairs) {
    const HwConfig& cfg = config("nv_full");
    WeightFormat f{WeightKind::Image, Precision::Int8};
    f.image_channels = 4;
    f.post_extension = 2;
    const Dims4 d{2, 4, 5, 3};  // C' = 3 x 4 = 12 <= 64 / 2
    const WeightLayout l = layout_or_die(cfg, f, d);
    EXPECT_EQ(l.surface.data_bytes(), 2u * 5 * 12);
    // Row groups {0,1}, {2,3} of 2 kernels x 2 rows x 12 = 48 bytes each, then {4}.
    // (k 1, c 2, r 3, s 1): group 1 at 48; kernel 1 (x 2 rows) + row 1: (1 x 2 + 1) x 12,
    // channel 1 x 4 + 2 = 6.
    EXPECT_EQ(*weight_byte_offset(l, 1, 2, 3, 1), 48u + 36 + 6);
    // (k 0, c 0, r 1, s 0): group 0, kernel 0, row 1 -> 12.
    EXPECT_EQ(*weight_byte_offset(l, 0, 0, 1, 0), 12u);
    // Row 4 alone: kernel 0 at 96, kernel 1 at 96 + 12.
    EXPECT_EQ(*weight_byte_offset(l, 0, 3, 4, 2), 96u + 2 * 4 + 3);
    EXPECT_EQ(*weight_byte_offset(l, 1, 0, 4, 0), 108u);
}

TEST(WeightsImage, PostExtensionFourCombinesRowQuads) {
    const HwConfig& cfg = config("nv_full");
    WeightFormat f{WeightKind::Image, Precision::Fp16};
    f.post_extension = 4;
    const Dims4 d{3, 3, 6, 5};  // C' = 15 <= 64 / 4
    const WeightLayout l = layout_or_die(cfg, f, d);
    // Row group 0 = rows 0-3: 3 kernels x 4 rows x 15 = 180 elements; group 1 = rows 4-5.
    // (k 2, c 1, r 5, s 4): 180 + (2 x 2 rows + 1) x 15 + (4 x 3 + 1) = 180 + 75 + 13.
    EXPECT_EQ(*weight_byte_offset(l, 2, 1, 5, 4), 2u * (180 + 75 + 13));
    // (k 1, c 0, r 2, s 0): (1 x 4 + 2) x 15 = 90.
    EXPECT_EQ(*weight_byte_offset(l, 1, 0, 2, 0), 2u * 90);
}

// Without post-extension an image kernel wider than one cube is a DC kernel of width 1.
TEST(WeightsImage, WideImageKernelSpansSeveralCubes) {
    const HwConfig& cfg = config("nv_full");
    const Dims4 d{1, 4, 2, 20};  // C' = 80: cubes of 64 and 16 channels
    const WeightLayout l = layout_or_die(cfg, {WeightKind::Image, Precision::Int8}, d);
    // (k 0, c 1, r 1, s 17): channel 69 -> cube 1 after 64 x 2 rows; row 1 x 16 + 5.
    EXPECT_EQ(*weight_byte_offset(l, 0, 1, 1, 17), 128u + 16 + 5);
}

// ---- Deconvolution ------------------------------------------------------------------------

// A 3x3 kernel with stride 2x2 splits into 4 sets of 2x2 kernels: set (y, x) takes rows
// y, y + 2 and columns x, x + 2, stored last position first. Each set is its own surface,
// 128 bytes here, placed every 256 bytes so each can start a convolution.
TEST(WeightsDeconvolution, SplitsIntoFlippedStridedSets) {
    const HwConfig& cfg = config("nv_full");
    WeightFormat f{WeightKind::Deconvolution, Precision::Int8};
    f.stride_x = 2;
    f.stride_y = 2;
    const Dims4 d{1, 1, 3, 3};
    const WeightLayout l = layout_or_die(cfg, f, d);
    EXPECT_EQ(l.sets, 4u);
    EXPECT_EQ(l.kernel_width, 2u);
    EXPECT_EQ(l.kernel_height, 2u);
    EXPECT_EQ(l.surface.size_bytes(), 128u);
    EXPECT_EQ(l.set_stride, 256u);
    EXPECT_EQ(l.size_bytes(), 3u * 256 + 128);

    Host host(HostType::Int8, d);
    for (uint32_t r = 0; r < 3; ++r)
        for (uint32_t s = 0; s < 3; ++s) host.set(0, 0, r, s, int8_t(10 * r + s + 1));
    std::vector<std::byte> surface(l.size_bytes(), std::byte{0x5a});
    ASSERT_TRUE(pack_weights(host.view(), l, surface).ok());
    // Set 0 (y 0, x 0) = rows {0, 2} x columns {0, 2}: positions (1,1),(1,0),(0,1),(0,0).
    const int8_t set0[4] = {23, 21, 3, 1};
    // Set 1 (y 0, x 1) = rows {0, 2} x column {1, (3)}: missing column 3 is zero.
    const int8_t set1[4] = {0, 22, 0, 2};
    // Set 2 (y 1, x 0) = row {1, (3)} x columns {0, 2}.
    const int8_t set2[4] = {0, 0, 13, 11};
    // Set 3 (y 1, x 1) = element (1, 1) only.
    const int8_t set3[4] = {0, 0, 0, 12};
    const int8_t* sets[4] = {set0, set1, set2, set3};
    for (int set = 0; set < 4; ++set) {
        for (int i = 0; i < 4; ++i) EXPECT_EQ(load_i8(surface, set * 256 + i), sets[set][i]);
        const size_t end = set == 3 ? 128 : 256;
        for (size_t i = 4; i < end; ++i) ASSERT_EQ(surface[set * 256 + i], std::byte{0});
    }
    EXPECT_EQ(*weight_byte_offset(l, 0, 0, 1, 2), 512u + 2);  // set 2, (r' 0, s' 1) -> position 2
}

// Stride 1: one set, a DC surface with the kernel positions reversed.
TEST(WeightsDeconvolution, StrideOneReversesKernelPositions) {
    const HwConfig& cfg = config("nv_full");
    const Dims4 d{2, 3, 2, 3};
    const WeightLayout l = layout_or_die(cfg, {WeightKind::Deconvolution, Precision::Int16}, d);
    const WeightLayout dc = layout_or_die(cfg, {WeightKind::Direct, Precision::Int16}, d);
    EXPECT_EQ(l.sets, 1u);
    EXPECT_EQ(l.size_bytes(), dc.size_bytes());
    for (uint32_t k = 0; k < 2; ++k)
        for (uint32_t c = 0; c < 3; ++c)
            for (uint32_t r = 0; r < 2; ++r)
                for (uint32_t s = 0; s < 3; ++s)
                    EXPECT_EQ(*weight_byte_offset(l, k, c, r, s),
                              *weight_byte_offset(dc, k, c, 1 - r, 2 - s));
}

// ---- Randomized round trips -----------------------------------------------------------------

HostType natural_host_type(Precision p, std::mt19937_64& rng) {
    const bool use_float = test::random_between(rng, 0, 2) == 0;
    if (use_float) return HostType::Float32;
    switch (p) {
        case Precision::Int8:
            return test::random_between(rng, 0, 1) ? HostType::Int8 : HostType::Int16;
        case Precision::Int16: return HostType::Int16;
        case Precision::Fp16: return HostType::Float16;
    }
    return HostType::Float32;
}

// Values every (host type, precision) pair in natural_host_type carries exactly.
void fill_exact(Host& h, Precision p, std::mt19937_64& rng) {
    const size_t n = h.dims.elements();
    for (size_t i = 0; i < n; ++i) {
        const int32_t lo = p == Precision::Int8 ? -128 : (p == Precision::Int16 ? -32768 : -2048);
        const int32_t hi = p == Precision::Int8 ? 127 : (p == Precision::Int16 ? 32767 : 2048);
        const int32_t v =
            static_cast<int32_t>(test::random_between(rng, 0, uint32_t(hi - lo))) + lo;
        uint8_t* dst = h.storage.data() + i * bytes_per_element(h.type);
        switch (h.type) {
            case HostType::Float32: {
                const float f = p == Precision::Fp16 ? float(v) / 8.0f : float(v);
                std::memcpy(dst, &f, 4);
                break;
            }
            case HostType::Float16: {
                const uint16_t b = fp16::from_float(float(v) / 8.0f);
                std::memcpy(dst, &b, 2);
                break;
            }
            case HostType::Int8: *dst = static_cast<uint8_t>(static_cast<int8_t>(v)); break;
            case HostType::Int16: {
                const int16_t b = static_cast<int16_t>(v);
                std::memcpy(dst, &b, 2);
                break;
            }
            default: break;
        }
    }
}

struct RoundTripCase {
    WeightFormat format;
    Dims4 dims;
};

RoundTripCase random_case(const HwConfig& cfg, WeightKind kind, Precision p, std::mt19937_64& rng) {
    RoundTripCase t;
    t.format.kind = kind;
    t.format.precision = p;
    auto pick = [&](uint32_t lo, uint32_t hi) { return test::random_between(rng, lo, hi); };
    const uint32_t k = pick(0, 3) == 0 ? 1 : pick(1, 70);
    switch (kind) {
        case WeightKind::Direct:
            t.dims = {k, pick(0, 3) == 0 ? 1 : pick(1, 100), pick(1, 4), pick(1, 4)};
            break;
        case WeightKind::Image: {
            const uint32_t channels = pick(1, 4);
            t.format.image_channels = pick(0, 1) ? 0 : pick(channels, 4);
            const uint32_t image_channels =
                t.format.image_channels ? t.format.image_channels : channels;
            const uint32_t factor = 1u << pick(0, 2);
            const uint32_t room = cfg.mac_atomic_c / factor;
            if (factor > 1 && image_channels <= room) {
                t.format.post_extension = factor;
                t.format.stride_x = pick(1, std::clamp(room / image_channels, 1u, kMaxConvStride));
                t.dims = {k, channels, pick(1, 9), pick(1, std::max(1u, room / image_channels))};
            } else {
                t.dims = {k, channels, pick(1, 7), pick(1, 7)};
            }
            break;
        }
        case WeightKind::Deconvolution:
            t.format.stride_x = pick(1, 4);
            t.format.stride_y = pick(1, 4);
            t.dims = {k, pick(1, 80), pick(1, 7), pick(1, 7)};
            break;
        case WeightKind::Winograd: break;
    }
    return t;
}

TEST(WeightsRoundTrip, PackThenUnpackReturnsTheKernels) {
    auto rng = test::rng_for_test();
    for (const HwConfig& cfg : hw_configs()) {
        for (Precision p : {Precision::Int8, Precision::Int16, Precision::Fp16}) {
            if (!supports(cfg, p)) continue;
            for (WeightKind kind :
                 {WeightKind::Direct, WeightKind::Image, WeightKind::Deconvolution}) {
                for (int iteration = 0; iteration < 4; ++iteration) {
                    const RoundTripCase t = random_case(cfg, kind, p, rng);
                    SCOPED_TRACE(std::string(cfg.name) + " " + std::string(to_string(p)) + " " +
                                 std::string(to_string(kind)) + " " + std::to_string(t.dims.n) +
                                 "x" + std::to_string(t.dims.c) + "x" + std::to_string(t.dims.h) +
                                 "x" + std::to_string(t.dims.w) + " post " +
                                 std::to_string(t.format.post_extension));
                    Result<WeightLayout> l = make_weight_layout(cfg, t.format, t.dims);
                    ASSERT_TRUE(l.ok()) << l.message();
                    const HostLayout hl =
                        test::random_between(rng, 0, 1) ? HostLayout::NCHW : HostLayout::NHWC;
                    Host in(natural_host_type(p, rng), t.dims, hl);
                    fill_exact(in, p, rng);
                    std::vector<std::byte> surface(l->size_bytes(), std::byte{0xa5});
                    ASSERT_TRUE(pack_weights(in.view(), *l, surface).ok());
                    Host out(in.type, t.dims, in.layout);
                    ASSERT_TRUE(unpack_weights(surface, *l, out.mutable_view()).ok());
                    ASSERT_EQ(in.storage, out.storage);
                }
            }
        }
    }
}

// Every host element has its own position, inside the surface, on an element boundary; for
// direct weights the positions fill the data bytes exactly.
TEST(WeightsRoundTrip, OffsetsAreDistinctAndInside) {
    auto rng = test::rng_for_test();
    for (const HwConfig& cfg : hw_configs()) {
        for (WeightKind kind : {WeightKind::Direct, WeightKind::Image, WeightKind::Deconvolution}) {
            const Precision p =
                supports(cfg, Precision::Int16) ? Precision::Int16 : Precision::Int8;
            RoundTripCase t = random_case(cfg, kind, p, rng);
            while (t.dims.elements() > 20000) t = random_case(cfg, kind, p, rng);
            const WeightLayout l = layout_or_die(cfg, t.format, t.dims);
            std::set<uint64_t> seen;
            const uint32_t bpe = bytes_per_element(p);
            for (uint32_t k = 0; k < t.dims.n; ++k)
                for (uint32_t c = 0; c < t.dims.c; ++c)
                    for (uint32_t r = 0; r < t.dims.h; ++r)
                        for (uint32_t s = 0; s < t.dims.w; ++s) {
                            const uint64_t o = *weight_byte_offset(l, k, c, r, s);
                            ASSERT_EQ(o % bpe, 0u);
                            ASSERT_LT(o % l.set_stride, l.surface.data_bytes());
                            ASSERT_LT(o, l.size_bytes());
                            ASSERT_TRUE(seen.insert(o).second) << "two elements at " << o;
                        }
            if (kind == WeightKind::Direct) {
                ASSERT_EQ(seen.size() * bpe, l.surface.data_bytes());
            }
        }
    }
}

// Large deconvolution strides: 32 x 32 sets of a kernel smaller than the stride.
TEST(WeightsRoundTrip, LargestDeconvolutionStride) {
    const HwConfig& cfg = config("nv_full");
    WeightFormat f{WeightKind::Deconvolution, Precision::Fp16};
    f.stride_x = 32;
    f.stride_y = 32;
    const Dims4 d{3, 2, 33, 40};
    const WeightLayout l = layout_or_die(cfg, f, d);
    EXPECT_EQ(l.sets, 1024u);
    EXPECT_EQ(l.kernel_height, 2u);
    EXPECT_EQ(l.kernel_width, 2u);
    auto rng = test::rng_for_test();
    Host in(HostType::Float16, d);
    fill_exact(in, Precision::Fp16, rng);
    std::vector<std::byte> surface(l.size_bytes());
    ASSERT_TRUE(pack_weights(in.view(), l, surface).ok());
    Host out(HostType::Float16, d);
    ASSERT_TRUE(unpack_weights(surface, l, out.mutable_view()).ok());
    EXPECT_EQ(in.storage, out.storage);
    // Set (y 1, x 31) keeps rows 1 (and 33: none) and column 31: element (k, c, 1, 31) sits at
    // the last position (r' 0, s' 0 reversed = position 3) of kernel k's single cube.
    const uint32_t set = 1 * 32 + 31;
    EXPECT_EQ(*weight_byte_offset(l, 2, 1, 1, 31), l.set_offset(set) + ((3 * 3 + 2) * 2 + 1) * 2);
}

// ---- Errors -------------------------------------------------------------------------------

void expect_layout_error(const HwConfig& cfg, const WeightFormat& f, Dims4 d,
                         std::initializer_list<const char*> pieces) {
    Result<WeightLayout> l = make_weight_layout(cfg, f, d);
    ASSERT_FALSE(l.ok());
    for (const char* piece : pieces)
        EXPECT_NE(l.message().find(piece), std::string::npos)
            << "'" << l.message() << "' lacks '" << piece << "'";
}

TEST(WeightsErrors, LayoutNamesTheValueAndTheLimit) {
    const HwConfig& full = config("nv_full");
    const HwConfig& small = config("nv_small");
    const WeightFormat direct8{WeightKind::Direct, Precision::Int8};
    expect_layout_error(full, direct8, {0, 3, 3, 3}, {"direct convolution weights", "zero extent"});
    expect_layout_error(full, direct8, {3, 3, 3, 0}, {"3x3x3x0"});
    expect_layout_error(small, {WeightKind::Direct, Precision::Int16}, {1, 1, 1, 1},
                        {"int16", "nv_small"});
    expect_layout_error(small, {WeightKind::Direct, Precision::Fp16}, {1, 1, 1, 1}, {"fp16"});
    expect_layout_error(full, direct8, {8193, 1, 1, 1}, {"8193 kernels", "8192"});
    expect_layout_error(full, direct8, {1, 8193, 1, 1}, {"8193 channels", "8192"});
    expect_layout_error(full, direct8, {1, 1, 33, 1}, {"kernel height 33", "32"});
    expect_layout_error(full, direct8, {1, 1, 1, 33}, {"kernel width 33", "32"});
    expect_layout_error(full, {WeightKind::Direct, Precision::Fp16}, {1, 8192, 4, 5},
                        {"327680 bytes per kernel", "limit of 262144"});
    WeightFormat f = direct8;
    f.post_extension = 2;
    expect_layout_error(full, f, {1, 1, 1, 1}, {"post-extension 2", "image weights only"});
    f = direct8;
    f.image_channels = 4;
    expect_layout_error(full, f, {1, 1, 1, 1}, {"image_channels 4"});
}

TEST(WeightsErrors, ImageLimits) {
    const HwConfig& full = config("nv_full");
    WeightFormat f{WeightKind::Image, Precision::Int8};
    f.image_channels = 5;
    expect_layout_error(full, f, {1, 3, 3, 3}, {"image weights", "5 channels", "1 to 4"});
    f.image_channels = 3;
    expect_layout_error(full, f, {1, 4, 3, 3}, {"4 channels", "only 3"});
    f.image_channels = 4;
    expect_layout_error(full, f, {1, 4, 3, 2049}, {"8196", "8192"});
    f.post_extension = 3;
    expect_layout_error(full, f, {1, 3, 3, 3}, {"post-extension 3", "1, 2 or 4"});
    // 2 rows: at most 64 / 2 = 32 pre-extended channels; 9 columns x 4 = 36.
    f.post_extension = 2;
    expect_layout_error(full, f, {1, 3, 3, 9}, {"post-extension 2", "at most 32", "have 36"});
    // 4 rows: 16; 5 x 4 = 20.
    f.post_extension = 4;
    expect_layout_error(full, f, {1, 3, 3, 5}, {"at most 16", "have 20"});
    // Stride x 5 with 4 channels = 20 > 16.
    f.stride_x = 5;
    expect_layout_error(full, f, {1, 3, 3, 2}, {"stride_x x pixel channels <= 16", "5 x 4"});
    f.stride_x = 9;
    expect_layout_error(full, f, {1, 3, 3, 2}, {"stride 9", "1 to 8"});
    // nv_small: MAC atomic C 8 leaves 4 channels per row for 2-row extension.
    WeightFormat small{WeightKind::Image, Precision::Int8};
    small.post_extension = 2;
    expect_layout_error(config("nv_small"), small, {1, 3, 3, 2}, {"at most 4", "have 6"});
}

TEST(WeightsErrors, DeconvolutionLimits) {
    const HwConfig& full = config("nv_full");
    WeightFormat f{WeightKind::Deconvolution, Precision::Int8};
    f.stride_x = 0;
    expect_layout_error(full, f, {1, 1, 3, 3}, {"deconvolution weights", "stride 0", "1 to 32"});
    f.stride_x = 33;
    expect_layout_error(full, f, {1, 1, 3, 3}, {"stride 33"});
    f.stride_x = 2;
    f.stride_y = 2;
    expect_layout_error(full, f, {1, 1, 70, 3}, {"splits into 35x2", "32"});
}

TEST(WeightsErrors, PackRefusesAndLeavesTheDestinationUntouched) {
    const HwConfig& cfg = config("nv_full");
    const Dims4 d{4, 5, 3, 3};
    const WeightLayout l = layout_or_die(cfg, {WeightKind::Direct, Precision::Int8}, d);
    Host host(HostType::Int8, d);
    auto attempt = [&](const ConstTensorView& src, const WeightLayout& layout, size_t dst_size,
                       const char* piece, const ConvertOptions& opt = {}) {
        std::vector<std::byte> dst(dst_size, std::byte{0xab});
        Status s = pack_weights(src, layout, dst, opt);
        ASSERT_FALSE(s.ok()) << piece;
        EXPECT_NE(s.message().find(piece), std::string::npos) << s.message();
        EXPECT_TRUE(all_bytes_are(dst, 0xab)) << piece;
    };
    attempt(host.view(), l, l.size_bytes() - 1, "too small for the 256-byte");
    ConstTensorView wrong_dims = host.view();
    wrong_dims.dims = {4, 5, 3, 2};
    attempt(wrong_dims, l, l.size_bytes(), "4x5x3x2 (KxCxRxS) but the layout is for 4x5x3x3");
    ConstTensorView short_buffer = host.view();
    short_buffer.bytes -= 1;
    attempt(short_buffer, l, l.size_bytes(), "too small");
    ConstTensorView null_data = host.view();
    null_data.data = nullptr;
    attempt(null_data, l, l.size_bytes(), "null");
    ConvertOptions bad_scale;
    bad_scale.quant_scale = 0.0f;
    attempt(host.view(), l, l.size_bytes(), "quant_scale 0", bad_scale);
    WeightLayout edited = l;
    edited.surface.bytes_per_kernel = 1000;  // would send writes past the surface
    attempt(host.view(), edited, 1 << 16, "inconsistent");
    edited = l;
    edited.kernel_channels = 64;
    attempt(host.view(), edited, 1 << 16, "inconsistent");
}

TEST(WeightsErrors, UnpackRefusesAndLeavesTheKernelsUntouched) {
    const HwConfig& cfg = config("nv_full");
    const Dims4 d{2, 3, 1, 1};
    const WeightLayout l = layout_or_die(cfg, {WeightKind::Direct, Precision::Int16}, d);
    std::vector<std::byte> surface(l.size_bytes());
    auto attempt = [&](ConstByteSpan src, Dims4 dims, const char* piece) {
        Host out(HostType::Int16, dims);
        std::fill(out.storage.begin(), out.storage.end(), uint8_t{0xab});
        Status s = unpack_weights(src, l, out.mutable_view());
        ASSERT_FALSE(s.ok()) << piece;
        EXPECT_NE(s.message().find(piece), std::string::npos) << s.message();
        EXPECT_TRUE(std::all_of(out.storage.begin(), out.storage.end(),
                                [](uint8_t b) { return b == 0xab; }));
    };
    attempt(ConstByteSpan(surface).first(127), d, "smaller than the 128-byte");
    attempt(surface, {2, 3, 1, 2}, "but the layout is for 2x3x1x1");
    Result<uint64_t> outside = weight_byte_offset(l, 2, 0, 0, 0);
    ASSERT_FALSE(outside.ok());
    EXPECT_NE(outside.message().find("outside the 2x3x1x1"), std::string::npos);
}

TEST(WeightsErrors, SurfaceBytesQueryMatchesTheLayout) {
    const HwConfig& cfg = config("nv_full");
    EXPECT_EQ(*weight_surface_bytes(cfg, {WeightKind::Direct, Precision::Int16}, {16, 96, 3, 3}),
              27648u);
    EXPECT_EQ(*weight_surface_bytes(cfg, {WeightKind::Direct, Precision::Int8}, {1, 1, 1, 1}),
              128u);
    EXPECT_FALSE(
        weight_surface_bytes(cfg, {WeightKind::Direct, Precision::Int8}, {1, 1, 1, 0}).ok());
}

}  // namespace
}  // namespace nvdla
