// Winograd weights: the G g G^T transform worked by hand, the 4x4x4-cube layout, channel
// extension for strided kernels, round trips and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "nvdla/formats/weights.hpp"
#include "nvdla/precision/fp16.hpp"
#include "test_support.hpp"

namespace nvdla {
namespace {

using test::nv_full;

template <class T>
std::vector<uint8_t> host_bytes(const std::vector<T>& values) {
    std::vector<uint8_t> b(values.size() * sizeof(T));
    std::memcpy(b.data(), values.data(), b.size());
    return b;
}

int16_t load_i16(const std::vector<std::byte>& b, uint64_t element) {
    int16_t v;
    std::memcpy(&v, b.data() + element * 2, 2);
    return v;
}

WeightFormat winograd(Precision p, uint32_t sx = 1, uint32_t sy = 1, float scale = 1.0f) {
    WeightFormat f{WeightKind::Winograd, p};
    f.stride_x = sx;
    f.stride_y = sy;
    f.winograd_scale = scale;
    return f;
}

// g = [1 2 3; 4 5 6; 7 8 9]. By hand:
//   G g   rows: g0 = [1 2 3], (g0+g1+g2)/2 = [6 7.5 9], (g0-g1+g2)/2 = [2 2.5 3], g2 = [7 8 9]
//   (G g) G^T: each row [a b c] -> [a, (a+b+c)/2, (a-b+c)/2, c]
TEST(WeightsWinograd, TransformWorkedByHand) {
    const std::array<float, 16> u = winograd_transform({1, 2, 3, 4, 5, 6, 7, 8, 9});
    const std::array<float, 16> expected = {1, 3,     1,    3,  //
                                            6, 11.25, 3.75, 9,  //
                                            2, 3.75,  1.25, 3,  //
                                            7, 12,    4,    9};
    for (int i = 0; i < 16; ++i) EXPECT_EQ(u[i], expected[i]) << i;
    const std::array<float, 9> g = winograd_inverse_transform(u);
    for (int i = 0; i < 9; ++i) EXPECT_EQ(g[i], float(i + 1)) << i;
}

// A single weight at the centre: U = w * c c^T with c = G's middle column (0, .5, -.5, 0).
TEST(WeightsWinograd, CentreWeightTransform) {
    const std::array<float, 16> u = winograd_transform({0, 0, 0, 0, 4, 0, 0, 0, 0});
    const std::array<float, 16> expected = {0, 0, 0, 0, 0, 1, -1, 0, 0, -1, 1, 0, 0, 0, 0, 0};
    EXPECT_EQ(u, expected);
}

// One fp16 kernel of one channel: channels pad to 16 (32 bytes), the kernel becomes 4x4x16,
// stored as four 4x4x4 cubes; element (r, s) of channel c sits at (r x 4 + s) x 4 + c.
TEST(WeightsWinograd, SingleKernelLayout) {
    const Dims4 d{1, 1, 3, 3};
    Result<WeightLayout> l = make_weight_layout(nv_full(), winograd(Precision::Fp16), d);
    ASSERT_TRUE(l.ok()) << l.message();
    EXPECT_EQ(l->kernel_width, 4u);
    EXPECT_EQ(l->kernel_height, 4u);
    EXPECT_EQ(l->kernel_channels, 16u);
    EXPECT_EQ(l->padded_channels, 16u);
    EXPECT_EQ(l->cube_channels, 4u);
    EXPECT_EQ(l->surface.bytes_per_kernel, 512u);
    EXPECT_EQ(l->size_bytes(), 512u);

    std::vector<float> g = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    std::vector<uint8_t> host = host_bytes(g);
    const ConstTensorView src{host.data(), host.size(), HostType::Float32, HostLayout::NCHW, d};
    std::vector<std::byte> surface(l->size_bytes(), std::byte{0x77});
    ASSERT_TRUE(pack_weights(src, *l, surface).ok());
    const float u[16] = {1, 3, 1, 3, 6, 11.25f, 3.75f, 9, 2, 3.75f, 1.25f, 3, 7, 12, 4, 9};
    for (uint32_t i = 0; i < 256; ++i) {
        const uint16_t bits = static_cast<uint16_t>(load_i16(surface, i));
        const float expected = i % 4 == 0 && i < 64 ? u[i / 4] : 0.0f;
        EXPECT_EQ(fp16::to_float(bits), expected) << "element " << i;
    }
}

// 17 int16 kernels of 20 channels: 2 groups (16 + 1), channels padded to 32 -> 8 cubes of 4
// per kernel; within a group cube 0 of every kernel, then cube 1 of every kernel, ...
TEST(WeightsWinograd, CubesScanKernelsThenChannels) {
    const Dims4 d{17, 20, 3, 3};
    Result<WeightLayout> l = make_weight_layout(nv_full(), winograd(Precision::Int16), d);
    ASSERT_TRUE(l.ok()) << l.message();
    EXPECT_EQ(l->kernel_channels, 32u);
    EXPECT_EQ(l->surface.bytes_per_kernel, 16u * 32 * 2);
    EXPECT_EQ(l->size_bytes(), 17u * 1024);

    std::vector<int16_t> g(d.elements(), 0);
    auto at = [&](uint32_t k, uint32_t c, uint32_t r, uint32_t s) -> int16_t& {
        return g[((size_t(k) * d.c + c) * 3 + r) * 3 + s];
    };
    at(16, 6, 1, 1) = 4;  // kernel 16, alone in group 1
    at(3, 6, 1, 1) = 8;   // kernel 3 of group 0
    std::vector<uint8_t> host = host_bytes(g);
    const ConstTensorView src{host.data(), host.size(), HostType::Int16, HostLayout::NCHW, d};
    std::vector<std::byte> surface(l->size_bytes());
    ASSERT_TRUE(pack_weights(src, *l, surface).ok());

    // Centre weight w -> U = w/4 x [1 -1; -1 1] at (1,1), (1,2), (2,1), (2,2).
    // Kernel 16: group 1 starts at 16 kernels x 512 elements = 8192; channel 6 is cube 1
    // (x 1 kernel x 64) and lane 2.
    const uint64_t k16 = 8192 + 64 + 2;
    // Kernel 3: cube 1 of group 0 comes after cube 0 of all 16 kernels: (1 x 16 + 3) x 64.
    const uint64_t k3 = (16 + 3) * 64 + 2;
    std::vector<int16_t> expected(surface.size() / 2, 0);
    for (auto [base, w] : {std::pair{k16, int16_t(1)}, std::pair{k3, int16_t(2)}}) {
        expected[base + (1 * 4 + 1) * 4] = w;
        expected[base + (1 * 4 + 2) * 4] = int16_t(-w);
        expected[base + (2 * 4 + 1) * 4] = int16_t(-w);
        expected[base + (2 * 4 + 2) * 4] = w;
    }
    for (size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(load_i16(surface, i), expected[i]) << i;
}

// Stride 2: a 5x5 kernel extends to 3x3 with 4x the channels. Original (r, s) goes to
// extended (r / 2, s / 2) in channel ((r % 2) x 2 + s % 2) x padded + c.
TEST(WeightsWinograd, StrideTwoExtendsChannels) {
    const Dims4 d{1, 1, 5, 5};
    Result<WeightLayout> l = make_weight_layout(nv_full(), winograd(Precision::Int16, 2, 2), d);
    ASSERT_TRUE(l.ok()) << l.message();
    EXPECT_EQ(l->kernel_channels, 64u);  // 16 padded x 2 x 2
    std::vector<int16_t> g(25, 0);
    g[3 * 5 + 2] = 4;  // r 3, s 2 -> extended (1, 1) of channel (1 x 2 + 0) x 16 = 32
    std::vector<uint8_t> host = host_bytes(g);
    const ConstTensorView src{host.data(), host.size(), HostType::Int16, HostLayout::NCHW, d};
    std::vector<std::byte> surface(l->size_bytes());
    ASSERT_TRUE(pack_weights(src, *l, surface).ok());
    // Channel 32 = cube 8 (x 64 elements), lane 0.
    const uint64_t base = 8 * 64;
    for (size_t i = 0; i < surface.size() / 2; ++i) {
        int16_t want = 0;
        if (i == base + 20 || i == base + 40) want = 1;   // (1,1), (2,2)
        if (i == base + 24 || i == base + 36) want = -1;  // (1,2), (2,1)
        ASSERT_EQ(load_i16(surface, i), want) << i;
    }
}

TEST(WeightsWinograd, UnequalStridesExtendEachAxis) {
    // 3 rows at stride 1, 6 columns at stride 2: 3x3 with 2 column phases.
    Result<WeightLayout> l =
        make_weight_layout(nv_full(), winograd(Precision::Int8, 2, 1), {1, 40, 3, 6});
    ASSERT_TRUE(l.ok()) << l.message();
    EXPECT_EQ(l->padded_channels, 64u);  // int8 atom = 32 channels
    EXPECT_EQ(l->kernel_channels, 128u);
}

// Integer precisions need the scale: G g G^T has quarters. With scale 4 everything is exact
// and unpacking inverts the transform; fp16 carries the quarters itself.
TEST(WeightsWinograd, RoundTrips) {
    auto rng = test::rng_for_test();
    for (Precision p : {Precision::Int8, Precision::Int16, Precision::Fp16}) {
        for (int iteration = 0; iteration < 8; ++iteration) {
            const uint32_t sx = test::random_between(rng, 1, 3),
                           sy = test::random_between(rng, 1, 3);
            const Dims4 d{test::random_between(rng, 1, 40), test::random_between(rng, 1, 40),
                          test::random_between(rng, 2 * sy + 1, 3 * sy),
                          test::random_between(rng, 2 * sx + 1, 3 * sx)};
            const float scale = p == Precision::Fp16 ? 1.0f : 4.0f;
            SCOPED_TRACE(std::string(to_string(p)) + " " + std::to_string(d.n) + "x" +
                         std::to_string(d.c) + "x" + std::to_string(d.h) + "x" +
                         std::to_string(d.w) + " stride " + std::to_string(sx) + "x" +
                         std::to_string(sy));
            Result<WeightLayout> l = make_weight_layout(nv_full(), winograd(p, sx, sy, scale), d);
            ASSERT_TRUE(l.ok()) << l.message();
            const int32_t limit = p == Precision::Int8 ? 3 : (p == Precision::Int16 ? 1000 : 8);
            std::vector<float> g(d.elements());
            for (float& v : g) v = float(int32_t(test::random_between(rng, 0, 2 * limit)) - limit);
            const HostLayout layout = iteration % 2 ? HostLayout::NHWC : HostLayout::NCHW;
            // The values are the same in either layout: only their order differs.
            std::vector<uint8_t> in = host_bytes(g);
            const ConstTensorView src{in.data(), in.size(), HostType::Float32, layout, d};
            std::vector<std::byte> surface(l->size_bytes());
            ConversionStats stats;
            ConvertOptions opt;
            opt.stats = &stats;
            ASSERT_TRUE(pack_weights(src, *l, surface, opt).ok());
            EXPECT_EQ(stats.saturated, 0u);
            std::vector<uint8_t> out(in.size(), 0xff);
            const TensorView dst{out.data(), out.size(), HostType::Float32, layout, d};
            ASSERT_TRUE(unpack_weights(surface, *l, dst, opt).ok());
            ASSERT_EQ(in, out);
        }
    }
}

TEST(WeightsWinograd, QuantScaleAndWinogradScaleMultiply) {
    const Dims4 d{1, 1, 3, 3};
    Result<WeightLayout> l =
        make_weight_layout(nv_full(), winograd(Precision::Int8, 1, 1, 4.0f), d);
    ASSERT_TRUE(l.ok());
    std::vector<float> g(9, 0.0f);
    g[0] = 0.5f;  // corner: U[0][0] = g[0][0]; x 4 x 2 = 4
    g[4] = 100;   // centre: U[1][1] = 25; x 8 = 200 -> saturates to 127
    std::vector<uint8_t> host = host_bytes(g);
    const ConstTensorView src{host.data(), host.size(), HostType::Float32, HostLayout::NCHW, d};
    std::vector<std::byte> surface(l->size_bytes());
    ConversionStats stats;
    ConvertOptions opt;
    opt.quant_scale = 2.0f;
    opt.stats = &stats;
    ASSERT_TRUE(pack_weights(src, *l, surface, opt).ok());
    EXPECT_EQ(std::to_integer<int8_t>(surface[0]), 4);
    // U[1][1] = 0.5/4 + 25 -> x 8 = 201 -> 127; U[1][2] = 0.5/4 - 25 -> -199 -> -128.
    EXPECT_EQ(std::to_integer<int8_t>(surface[(1 * 4 + 1) * 4]), 127);
    EXPECT_EQ(std::to_integer<int8_t>(surface[(1 * 4 + 2) * 4]), -128);
    EXPECT_EQ(stats.saturated, 4u);  // the four centre entries
}

void expect_error(const WeightFormat& f, Dims4 d, std::initializer_list<const char*> pieces,
                  const HwConfig& cfg = nv_full()) {
    Result<WeightLayout> l = make_weight_layout(cfg, f, d);
    ASSERT_FALSE(l.ok());
    for (const char* piece : pieces)
        EXPECT_NE(l.message().find(piece), std::string::npos)
            << "'" << l.message() << "' lacks '" << piece << "'";
}

TEST(WeightsWinograd, Errors) {
    expect_error(winograd(Precision::Int8), {1, 1, 3, 3}, {"nv_small has no Winograd"},
                 **find_hw_config("nv_small"));
    expect_error(winograd(Precision::Int8), {1, 1, 5, 5},
                 {"winograd weights", "5x5", "extends to 5x5", "3x3"});
    expect_error(winograd(Precision::Int8, 2, 2), {1, 1, 4, 4}, {"extends to 2x2"});
    expect_error(winograd(Precision::Int8, 3, 3), {1, 1, 5, 9}, {"extends to 2x3"});
    expect_error(winograd(Precision::Int8, 9, 1), {1, 1, 3, 27}, {"stride 9", "1 to 8"});
    expect_error(winograd(Precision::Int8, 1, 1, 0.0f), {1, 1, 3, 3}, {"scale 0"});
    expect_error(winograd(Precision::Int8, 1, 1, std::numeric_limits<float>::quiet_NaN()),
                 {1, 1, 3, 3}, {"scale"});
    expect_error(winograd(Precision::Int16, 2, 2), {1, 4096, 5, 5},
                 {"4096 channels x stride 2x2 = 16384", "8192"});
    WeightFormat f = winograd(Precision::Int8);
    f.post_extension = 2;
    expect_error(f, {1, 1, 3, 3}, {"post-extension"});

    Result<WeightLayout> l = make_weight_layout(nv_full(), winograd(Precision::Int8), {1, 1, 3, 3});
    ASSERT_TRUE(l.ok());
    Result<uint64_t> offset = weight_byte_offset(*l, 0, 0, 0, 0);
    ASSERT_FALSE(offset.ok());
    EXPECT_NE(offset.message().find("no single position"), std::string::npos);

    WeightLayout edited = *l;
    edited.padded_channels = 64;  // claims more channels than the surface holds
    std::vector<uint8_t> host(9, 1);
    const ConstTensorView src{
        host.data(), host.size(), HostType::Int8, HostLayout::NCHW, {1, 1, 3, 3}};
    std::vector<std::byte> surface(4096, std::byte{0xab});
    Status s = pack_weights(src, edited, surface);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("inconsistent"), std::string::npos) << s.message();
    for (std::byte b : surface) ASSERT_EQ(b, std::byte{0xab});
}

}  // namespace
}  // namespace nvdla
