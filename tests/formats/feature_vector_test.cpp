// The vectorised feature packing (formats/feature_simd.cpp) against the plain element-wise
// path, at every instruction-set level this CPU has (NVDLA_EMU_ISA only lowers the default).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "../emu/isa_levels.hpp"
#include "formats/feature_simd.hpp"
#include "nvdla/formats/feature.hpp"
#include "test_support.hpp"

namespace nvdla {
namespace {

using emu::IsaLevel;
using emu::IsaLimit;

struct Conversion {
    HostType host;
    Precision precision;
    bool saturate;
    bool scaled;  // a random quant_scale (the runtime's float -> int8 inputs)
};

std::string describe(const Conversion& c, const FeatureCube& cube, HostLayout layout,
                     IsaLevel level) {
    return std::string(to_string(c.host)) + " <-> " + std::string(to_string(c.precision)) +
           (c.saturate ? " saturated" : "") + " " + std::string(to_string(layout)) + " " +
           std::to_string(cube.batches) + "x" + std::to_string(cube.channels) + "x" +
           std::to_string(cube.height) + "x" + std::to_string(cube.width) + " atom " +
           std::to_string(cube.atom_bytes) + " line " + std::to_string(cube.line_stride) +
           " surface " + std::to_string(cube.surface_stride) + " at " + emu::isa_name(level);
}

// Host elements: any bit pattern (NaN, infinity, denormals) or values near the rounding ties
// of the surface precision after scaling.
std::vector<uint8_t> random_host(std::mt19937_64& rng, size_t n, HostType t, double scale) {
    std::vector<uint8_t> out(n * bytes_per_element(t));
    for (size_t i = 0; i < n; ++i) {
        uint8_t* p = out.data() + i * bytes_per_element(t);
        if (t == HostType::Float32) {
            float f;
            switch (rng() % 4) {
                case 0: f = std::bit_cast<float>(uint32_t(rng())); break;
                case 1:  // exact ties and their neighbours after scaling
                    f = float((int64_t(rng() % 600) - 300) * 0.5 / scale);
                    if (rng() % 2) f = std::nextafter(f, rng() % 2 ? 1e30f : -1e30f);
                    break;
                case 2: f = float((double(rng() % 2000001) - 1e6) * 1e-3 / scale); break;
                default: f = float(int64_t(rng() % 140000) - 70000); break;  // fp16 overflow
            }
            std::memcpy(p, &f, 4);
        } else {
            const uint64_t bits = rng();
            std::memcpy(p, &bits, bytes_per_element(t));
        }
    }
    return out;
}

// Packs and unpacks a random tensor at `level` and with the element-wise path; both must write
// the same bytes (also where they must not write at all: the strides' gaps).
void check_case(std::mt19937_64& rng, const HwConfig& hw, const Conversion& c, HostLayout layout,
                Dims4 d, FeatureStrides strides, IsaLevel level, size_t misalign = 0) {
    auto cube = make_feature_cube(hw, c.precision, d, strides);
    ASSERT_TRUE(cube.ok()) << cube.message();
    ConvertOptions opt;
    opt.saturate_fp16 = c.saturate;
    if (c.scaled) {
        const float scales[] = {0.25f, 2.0f, 1.0f / 3.0f, 0.01f, 37.5f};
        opt.quant_scale = scales[rng() % 5];
    }
    const std::string what = describe(c, *cube, layout, level);
    const std::vector<uint8_t> host = random_host(rng, d.elements(), c.host, opt.quant_scale);
    std::vector<uint8_t> host_misaligned(host.size() + misalign);
    std::memcpy(host_misaligned.data() + misalign, host.data(), host.size());
    const ConstTensorView in{host_misaligned.data() + misalign, host.size(), c.host, layout, d};

    std::vector<uint8_t> expected(cube->size_bytes() + misalign, 0x5a);
    std::vector<uint8_t> got = expected;
    {
        const IsaLimit limit(level);
        ASSERT_TRUE(
            pack_feature(in, *cube, std::as_writable_bytes(std::span(got)).subspan(misalign), opt)
                .ok());
    }
    {  // the reference: the scalar level is the element-wise path
        const IsaLimit scalar(IsaLevel::Scalar);
        ASSERT_TRUE(pack_feature(in, *cube,
                                 std::as_writable_bytes(std::span(expected)).subspan(misalign), opt)
                        .ok());
    }
    ASSERT_EQ(got, expected) << "pack " << what;

    // Unpack to the same host type where the library converts that way (integers from a scaled
    // pack come back to float32 only through the element-wise path: same check, less value).
    std::vector<uint8_t> back_expected(host.size() + misalign, 0xee), back_got = back_expected;
    const ConstByteSpan surface = std::as_bytes(std::span(got)).subspan(misalign);
    const TensorView out_expected{back_expected.data() + misalign, host.size(), c.host, layout, d};
    const TensorView out_got{back_got.data() + misalign, host.size(), c.host, layout, d};
    {
        const IsaLimit scalar(IsaLevel::Scalar);
        ASSERT_TRUE(unpack_feature(surface, *cube, out_expected, opt).ok());
    }
    {
        const IsaLimit limit(level);
        ASSERT_TRUE(unpack_feature(surface, *cube, out_got, opt).ok());
    }
    ASSERT_EQ(0, std::memcmp(back_got.data(), back_expected.data(), back_got.size()))
        << "unpack " << what;
}

const Conversion kConversions[] = {
    {HostType::Float32, Precision::Fp16, false, false},
    {HostType::Float32, Precision::Fp16, true, false},
    {HostType::Float32, Precision::Int8, false, true},
    {HostType::Float32, Precision::Int16, false, true},
    {HostType::Float16, Precision::Fp16, false, false},
    {HostType::Float16, Precision::Fp16, true, false},
    {HostType::Int8, Precision::Int8, false, false},
    {HostType::Int16, Precision::Int16, false, false},
};

TEST(FeatureVector, RandomCubesMatchTheElementPathAtEveryLevel) {
    auto rng = test::rng_for_test();
    int cases = 0;
    for (IsaLevel level : emu::levels_of_this_cpu())
        for (const HwConfig& hw : hw_configs())
            for (const Conversion& c : kConversions) {
                if (!supports(hw, c.precision)) continue;
                for (int round = 0; round < 6; ++round) {
                    const HostLayout layout = round % 2 ? HostLayout::NHWC : HostLayout::NCHW;
                    const uint32_t batches =
                        hw.max_batch > 1 && round == 5 ? test::random_between(rng, 2, 3) : 1;
                    // Widths around the vector widths (8, 16 pixels), odd channel counts.
                    Dims4 d{batches, test::random_between(rng, 1, 70),
                            test::random_between(rng, 1, 7), test::random_between(rng, 1, 53)};
                    if (round == 0) d.w = 16 * test::random_between(rng, 1, 4);
                    FeatureStrides strides;
                    if (round >= 2) {  // spare atoms after lines and surfaces
                        strides.line =
                            (d.w + test::random_between(rng, 0, 3)) * uint64_t(hw.atom_bytes);
                        strides.surface =
                            d.h * strides.line + test::random_between(rng, 0, 5) * hw.atom_bytes;
                    }
                    check_case(rng, hw, c, layout, d, strides, level, round == 3 ? 4 : 0);
                    if (HasFatalFailure()) return;
                    ++cases;
                }
            }
    EXPECT_GT(cases, 100);
}

// Outputs past the non-temporal threshold take other stores; host rows start unaligned too.
TEST(FeatureVector, LargeCubesMatchTheElementPathAtEveryLevel) {
    auto rng = test::rng_for_test();
    for (IsaLevel level : emu::levels_of_this_cpu()) {
        if (level == IsaLevel::Scalar) continue;
        for (const Conversion& c : {kConversions[0], kConversions[2], kConversions[6]}) {
            check_case(rng, test::config("nv_full"), c, HostLayout::NCHW, {1, 35, 129, 257}, {},
                       level, level == IsaLevel::Avx2 ? 4 : 0);
            if (HasFatalFailure()) return;
        }
    }
}

// Whole surfaces of `channels` go between host rows and atoms in blocks of 16 or 32 pixels:
// widths around those blocks (up to `max_blocks` of 16 pixels), partial last surfaces, spare
// atoms, host rows at any offset from a cache line (stores begin at the first 32- or 64-byte
// boundary).
void check_whole_surfaces(std::mt19937_64& rng, const Conversion& c, IsaLevel level,
                          std::initializer_list<uint32_t> channel_counts, uint32_t max_blocks) {
    const HwConfig& hw = test::config("nv_full");
    for (uint32_t channels : channel_counts)
        for (int round = 0; round < 6; ++round) {
            const uint32_t width =
                16 * test::random_between(rng, 1, max_blocks) + test::random_between(rng, 0, 2) - 1;
            const Dims4 d{1, channels, test::random_between(rng, 1, 5), width};
            FeatureStrides strides;
            if (round % 2) {
                strides.line = (d.w + test::random_between(rng, 1, 3)) * uint64_t(hw.atom_bytes);
                strides.surface = d.h * strides.line + hw.atom_bytes;
            }
            check_case(rng, hw, c, HostLayout::NCHW, d, strides, level,
                       round == 0 ? 0 : test::random_between(rng, 1, 63));
            if (::testing::Test::HasFatalFailure()) return;
        }
}

// int8 copies of whole 32-channel surfaces skip the tile buffer, 16 or 32 pixels at a time.
TEST(FeatureVector, Int8CopiesOfWholeSurfacesMatchTheElementPathAtEveryLevel) {
    auto rng = test::rng_for_test();
    const Conversion copy{HostType::Int8, Precision::Int8, false, false};
    for (IsaLevel level : emu::levels_of_this_cpu()) {
        check_whole_surfaces(rng, copy, level, {32u, 64u, 96u + 7u}, 4);
        if (HasFatalFailure()) return;
    }
}

// Planes a multiple of 2 KiB apart go through the staging buffer 256 pixels at a time (its
// rows apart by more than their length): planes of 2, 4 and 16 KiB, partial last surfaces
// (element-wise), several batches, host rows at any offset from a cache line.
TEST(FeatureVector, Int8CopiesOfPlanesSharingL1SetsMatchTheElementPathAtEveryLevel) {
    auto rng = test::rng_for_test();
    const HwConfig& hw = test::config("nv_full");
    const Conversion copy{HostType::Int8, Precision::Int8, false, false};
    const Dims4 shapes[] = {{1, 64, 64, 64},
                            {2, 32 + 8, 32, 128},
                            {1, 96 + 7, 16, 128},
                            {1, 32, 128, 128},
                            {1, 32, 2048, 1}};
    for (IsaLevel level : emu::levels_of_this_cpu())
        for (const Dims4& d : shapes)
            for (size_t misalign : {0, 1, 16, 33}) {
                check_case(rng, hw, copy, HostLayout::NCHW, d, {}, level, misalign);
                if (HasFatalFailure()) return;
            }
}

// fp16 cubes unpack to float32 rows straight from whole 16-channel surfaces, 16 pixels at a
// time from the first pixel whose row stores start a cache line; also outputs past the
// non-temporal threshold with rows a multiple of 64 bytes apart (the whole-line streaming form).
TEST(FeatureVector, Fp16ToFloat32OfWholeSurfacesMatchesTheElementPathAtEveryLevel) {
    auto rng = test::rng_for_test();
    const Conversion fp16{HostType::Float32, Precision::Fp16, false, false};
    const HwConfig& hw = test::config("nv_full");
    for (IsaLevel level : emu::levels_of_this_cpu()) {
        check_whole_surfaces(rng, fp16, level, {16u, 32u, 48u + 5u}, 5);
        if (HasFatalFailure()) return;
        // 4.3 MB of float32, planes of 90112 bytes, rows at two offsets from a cache line.
        for (size_t misalign : {0, 16})
            check_case(rng, hw, fp16, HostLayout::NCHW, {1, 48, 128, 176}, {}, level, misalign);
        if (HasFatalFailure()) return;
    }
}

// float32 -> int8/int16 with a scale rounds most vectors in a short form that holds only where
// no value is a tie, NaN or infinite: plain values with such values sprinkled in, so that both
// forms and their switching are compared with the element-wise path.
TEST(FeatureVector, ScaledIntegersWithRareTiesMatchTheElementPathAtEveryLevel) {
    auto rng = test::rng_for_test();
    const float scales[] = {0.25f, 2.0f, 1.0f / 3.0f, 0.01f, 37.5f, 32.0f};
    for (IsaLevel level : emu::levels_of_this_cpu())
        for (Precision precision : {Precision::Int8, Precision::Int16})
            for (HostLayout layout : {HostLayout::NCHW, HostLayout::NHWC})
                for (int round = 0; round < 3; ++round) {
                    const HwConfig& hw = test::config(
                        round == 2 && precision == Precision::Int8 ? "nv_small" : "nv_full");
                    const Dims4 d{1, test::random_between(rng, 1, 70),
                                  test::random_between(rng, 1, 5),
                                  test::random_between(rng, 1, 90)};
                    auto cube = make_feature_cube(hw, precision, d);
                    ASSERT_TRUE(cube.ok()) << cube.message();
                    ConvertOptions opt;
                    opt.quant_scale = scales[rng() % 6];
                    const double range = (precision == Precision::Int8 ? 140.0 : 33000.0);
                    std::vector<float> host(d.elements());
                    for (float& f : host) {
                        const double u = double(rng() % 2000001) / 1e6 - 1.0;  // [-1, 1]
                        f = float(u * range / opt.quant_scale);
                        switch (rng() % 64) {
                            case 0:
                                f = float((int64_t(rng() % 600) - 300) * 0.5 / opt.quant_scale);
                                break;
                            case 1: f = std::numeric_limits<float>::quiet_NaN(); break;
                            case 2: f = rng() % 2 ? INFINITY : -INFINITY; break;
                            case 3: f = rng() % 2 ? 3e38f : -3e38f; break;
                            default: break;
                        }
                    }
                    const ConstTensorView in{host.data(), host.size() * 4, HostType::Float32,
                                             layout, d};
                    std::vector<uint8_t> got(cube->size_bytes(), 0x5a), expected = got;
                    {
                        const IsaLimit limit(level);
                        ASSERT_TRUE(
                            pack_feature(in, *cube, std::as_writable_bytes(std::span(got)), opt)
                                .ok());
                    }
                    {
                        const IsaLimit scalar(IsaLevel::Scalar);
                        ASSERT_TRUE(pack_feature(in, *cube,
                                                 std::as_writable_bytes(std::span(expected)), opt)
                                        .ok());
                    }
                    ASSERT_EQ(got, expected)
                        << to_string(precision) << " " << to_string(layout) << " scale "
                        << opt.quant_scale << " at " << emu::isa_name(level);
                }
}

// Every vector level takes the conversions the runtime uses (not the element-wise fallback).
TEST(FeatureVector, TheRuntimesConversionsHaveAVectorForm) {
    for (IsaLevel level : emu::levels_of_this_cpu()) {
        const IsaLimit limit(level);
        for (const Conversion& c : kConversions)
            for (const char* name : {"nv_full", "nv_small"}) {
                const HwConfig& hw = test::config(name);
                if (!supports(hw, c.precision)) continue;
                const Dims4 d{1, 3, 2, 5};
                auto cube = make_feature_cube(hw, c.precision, d);
                ASSERT_TRUE(cube.ok());
                std::vector<uint8_t> host(d.elements() * bytes_per_element(c.host));
                std::vector<uint8_t> surface(cube->size_bytes());
                ConvertOptions opt;
                opt.saturate_fp16 = c.saturate;
                const ConstTensorView in{host.data(), host.size(), c.host, HostLayout::NCHW, d};
                EXPECT_EQ(detail::pack_feature_vector(in, *cube, surface.data(), opt),
                          level != IsaLevel::Scalar)
                    << to_string(c.host) << " -> " << to_string(c.precision) << " on " << name
                    << " at " << emu::isa_name(level);
            }
    }
}

// Rounding of float -> int8 in the vector lanes, worked by hand: half away from zero, clamped,
// NaN as 0 (16 values so that whole vectors take them at every level).
TEST(FeatureVector, Int8RoundingInVectorLanesWorkedByHand) {
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> host{1.5f,        -1.5f,  2.5f,    -2.5f,     0.5f, -0.5f,
                                  0.49999997f, 127.5f, -128.5f, 126.5f,    NAN,  inf,
                                  -inf,        1e10f,  -0.0f,   3.4999998f};
    const int8_t expected[] = {2, -2, 3, -3, 1, -1, 0, 127, -128, 127, 0, 127, -128, 127, 0, 3};
    const Dims4 d{1, 1, 1, 16};
    auto cube = make_feature_cube(test::config("nv_full"), Precision::Int8, d);
    ASSERT_TRUE(cube.ok());
    for (IsaLevel level : emu::levels_of_this_cpu()) {
        const IsaLimit limit(level);
        std::vector<uint8_t> surface(cube->size_bytes(), 0x77);
        ASSERT_TRUE(pack_feature({host.data(), 64, HostType::Float32, HostLayout::NCHW, d}, *cube,
                                 std::as_writable_bytes(std::span(surface)))
                        .ok());
        for (uint32_t w = 0; w < 16; ++w) {
            EXPECT_EQ(static_cast<int8_t>(surface[w * 32]), expected[w])
                << host[w] << " at " << emu::isa_name(level);
            for (uint32_t c = 1; c < 32; ++c) ASSERT_EQ(surface[w * 32 + c], 0);  // padding
        }
    }
}

// Scaled products that round to an exact tie in float but not in the exact (double) product,
// worked by hand: 5 * 0.7f = 3.49999994 (float 3.5) -> 3; 5 * 0.1f = 0.500000007 (float 0.5)
// -> 1; 25 * 0.1f = 2.50000004 -> 3; 50 * 0.03f = 1.49999997 (float 1.5) -> 1.
TEST(FeatureVector, Int8ScaledTiesFollowTheExactProduct) {
    struct Case {
        float scale, value;
        int8_t expected;
    };
    const Case cases[] = {{0.7f, 5.0f, 3},    {0.7f, -5.0f, -3}, {0.1f, 5.0f, 1},
                          {0.1f, -5.0f, -1},  {0.1f, 25.0f, 3},  {0.03f, 50.0f, 1},
                          {0.03f, -50.0f, -1}};
    const Dims4 d{1, 1, 1, 16};
    auto cube = make_feature_cube(test::config("nv_full"), Precision::Int8, d);
    ASSERT_TRUE(cube.ok());
    for (IsaLevel level : emu::levels_of_this_cpu())
        for (const Case& c : cases) {
            const IsaLimit limit(level);
            const std::vector<float> host(16, c.value);
            std::vector<uint8_t> surface(cube->size_bytes(), 0x77);
            ConvertOptions opt;
            opt.quant_scale = c.scale;
            ASSERT_TRUE(pack_feature({host.data(), 64, HostType::Float32, HostLayout::NCHW, d},
                                     *cube, std::as_writable_bytes(std::span(surface)), opt)
                            .ok());
            for (uint32_t w = 0; w < 16; ++w)
                ASSERT_EQ(static_cast<int8_t>(surface[w * 32]), c.expected)
                    << c.value << " * " << c.scale << " at " << emu::isa_name(level);
        }
}

}  // namespace
}  // namespace nvdla
