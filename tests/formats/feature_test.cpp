#include "nvdla/formats/feature.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "nvdla/precision/fp16.hpp"
#include "test_support.hpp"

namespace nvdla {
namespace {

using test::config;

ByteSpan bytes(std::vector<uint8_t>& v) {
    return std::as_writable_bytes(std::span(v));
}
ConstByteSpan cbytes(const std::vector<uint8_t>& v) {
    return std::as_bytes(std::span(v));
}

template <class T>
ConstTensorView view(const std::vector<T>& v, HostType t, Dims4 d,
                     HostLayout l = HostLayout::NCHW) {
    return {v.data(), v.size() * sizeof(T), t, l, d};
}
template <class T>
TensorView mview(std::vector<T>& v, HostType t, Dims4 d, HostLayout l = HostLayout::NCHW) {
    return {v.data(), v.size() * sizeof(T), t, l, d};
}

TEST(FeatureCube, PackedInt8OnNvFullWorkedByHand) {
    // 2x2x40 int8 on 32-byte atoms: 32 channels per surface, 2 surfaces.
    auto cube = make_feature_cube(config("nv_full"), Precision::Int8, {1, 40, 2, 2});
    ASSERT_TRUE(cube.ok()) << cube.message();
    EXPECT_EQ(cube->line_stride, 64u);      // 2 atoms
    EXPECT_EQ(cube->surface_stride, 128u);  // 2 lines
    EXPECT_EQ(cube->size_bytes(), 256u);
    EXPECT_EQ(cube->offset(0, 33, 1, 0), 128u + 64u + 1u);
    EXPECT_TRUE(cube->surface_packed());

    // Element (c, h, w) holds c*4 + h*2 + w; check three of them land where computed.
    std::vector<int8_t> host(40 * 2 * 2);
    for (uint32_t c = 0; c < 40; ++c)
        for (uint32_t h = 0; h < 2; ++h)
            for (uint32_t w = 0; w < 2; ++w)
                host[(c * 2 + h) * 2 + w] = static_cast<int8_t>(c * 4 + h * 2 + w);
    std::vector<uint8_t> surface(256, 0xaa);
    ASSERT_TRUE(
        pack_feature(view(host, HostType::Int8, {1, 40, 2, 2}), *cube, bytes(surface)).ok());
    EXPECT_EQ(surface[0], 0);                           // c0 h0 w0
    EXPECT_EQ(surface[32 + 5], 5 * 4 + 1);              // c5 h0 w1: second atom of line 0
    EXPECT_EQ(surface[193], 33 * 4 + 2);                // c33 h1 w0
    EXPECT_EQ(surface[128 + 64 + 32 + 7], 39 * 4 + 3);  // c39 h1 w1
    EXPECT_EQ(surface[128 + 8], 0);                     // c40 does not exist: padded with zero
    EXPECT_EQ(surface[255], 0);
}

TEST(FeatureCube, Fp16OnNvFullHas16ChannelsPerSurface) {
    auto cube = make_feature_cube(config("nv_full"), Precision::Fp16, {1, 20, 1, 3});
    ASSERT_TRUE(cube.ok()) << cube.message();
    EXPECT_EQ(cube->channels_per_surface(), 16u);
    EXPECT_EQ(cube->surfaces(), 2u);
    EXPECT_EQ(cube->line_stride, 96u);
    EXPECT_EQ(cube->offset(0, 17, 0, 2), 96u + 2 * 32 + 1 * 2);

    std::vector<float> host(20 * 3, 0.0f);
    host[17 * 3 + 2] = -2.5f;
    std::vector<uint8_t> surface(cube->size_bytes());
    ASSERT_TRUE(
        pack_feature(view(host, HostType::Float32, {1, 20, 1, 3}), *cube, bytes(surface)).ok());
    EXPECT_EQ(surface[162], 0x00);  // -2.5 = 0xc100, little-endian
    EXPECT_EQ(surface[163], 0xc1);
}

TEST(FeatureCube, NvSmallUsesEightByteAtoms) {
    auto cube = make_feature_cube(config("nv_small"), Precision::Int8, {1, 20, 1, 1});
    ASSERT_TRUE(cube.ok()) << cube.message();
    EXPECT_EQ(cube->channels_per_surface(), 8u);
    EXPECT_EQ(cube->surfaces(), 3u);
    EXPECT_EQ(cube->line_stride, 8u);
    EXPECT_EQ(cube->surface_stride, 8u);
    EXPECT_EQ(cube->size_bytes(), 24u);  // 20 channels + 4 padding, contiguous
    // The hardware traces program 8-byte strides for 1x1 cubes on nv_small.
    EXPECT_TRUE(
        make_feature_cube(config("nv_small"), Precision::Int8, {1, 8, 1, 1}, {8, 8, 0}).ok());
}

TEST(FeatureCube, UnpackedStridesLeaveGapsUntouched) {
    // 2x2x40 int8, line stride 96 (one spare atom), surface stride 256.
    auto cube = make_feature_cube(config("nv_full"), Precision::Int8, {1, 40, 2, 2}, {96, 256, 0});
    ASSERT_TRUE(cube.ok()) << cube.message();
    EXPECT_FALSE(cube->line_packed());
    EXPECT_EQ(cube->offset(0, 33, 1, 1), 256u + 96u + 32u + 1u);
    EXPECT_EQ(cube->size_bytes(), 256u + 96u + 64u);
    std::vector<int8_t> host(160, 1);
    std::vector<uint8_t> surface(cube->size_bytes(), 0xaa);
    ASSERT_TRUE(
        pack_feature(view(host, HostType::Int8, {1, 40, 2, 2}), *cube, bytes(surface)).ok());
    EXPECT_EQ(surface[64], 0xaa);       // spare atom after line 0
    EXPECT_EQ(surface[96 + 64], 0xaa);  // spare atom after line 1
    EXPECT_EQ(surface[192], 0xaa);      // between the surfaces
    EXPECT_EQ(surface[256 + 8], 0);     // channel 40: padding
    EXPECT_EQ(surface[256 + 7], 1);     // channel 39
}

TEST(FeatureCube, OneByOneByCSurfacePackedReadsAsALine) {
    auto cube = make_feature_cube(config("nv_full"), Precision::Int8, {1, 70, 1, 1});
    ASSERT_TRUE(cube.ok());
    auto line = as_surface_packed_line(*cube);
    ASSERT_TRUE(line.ok()) << line.message();
    EXPECT_EQ(line->width, 3u);  // ceil(70 / 32) atoms
    EXPECT_EQ(line->height, 1u);
    EXPECT_EQ(line->channels, 32u);
    EXPECT_EQ(line->size_bytes(), cube->size_bytes());
    // The strides of the packed 3-atom line, as make_feature_cube gives them.
    auto packed = make_feature_cube(config("nv_full"), Precision::Int8, {1, 32, 1, 3});
    ASSERT_TRUE(packed.ok());
    EXPECT_EQ(line->line_stride, packed->line_stride);
    EXPECT_EQ(line->line_stride, 96u);
    EXPECT_EQ(line->surface_stride, packed->surface_stride);
    // Every element sits at the same byte in both views.
    for (uint32_t c = 0; c < 70; ++c)
        EXPECT_EQ(cube->offset(0, c, 0, 0), line->offset(0, c % 32, 0, c / 32));

    auto wide = make_feature_cube(config("nv_full"), Precision::Int8, {1, 70, 1, 2});
    EXPECT_FALSE(as_surface_packed_line(*wide).ok());
    auto gappy = make_feature_cube(config("nv_full"), Precision::Int8, {1, 70, 1, 1}, {32, 64, 0});
    ASSERT_TRUE(gappy.ok());
    auto r = as_surface_packed_line(*gappy);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("surface stride 64"), std::string::npos) << r.message();
}

TEST(FeatureCube, BatchesFollowTheBatchStride) {
    auto cube = make_feature_cube(config("nv_full"), Precision::Int8, {2, 8, 1, 1}, {0, 0, 64});
    ASSERT_TRUE(cube.ok()) << cube.message();
    EXPECT_EQ(cube->offset(1, 3, 0, 0), 64u + 3u);
    EXPECT_EQ(cube->size_bytes(), 96u);
    auto nv_small = make_feature_cube(config("nv_small"), Precision::Int8, {2, 8, 1, 1});
    ASSERT_FALSE(nv_small.ok());
    EXPECT_NE(nv_small.message().find("maximum of 1"), std::string::npos) << nv_small.message();
    // nv_full's MAX_BATCH_SIZE is 32: 32 batches are accepted, 33 are not.
    auto most = make_feature_cube(config("nv_full"), Precision::Int8, {32, 8, 1, 1});
    ASSERT_TRUE(most.ok()) << most.message();
    EXPECT_EQ(most->batch_stride, 32u);  // packed: one atom per cube
    EXPECT_EQ(most->size_bytes(), 32u * 32u);
    EXPECT_FALSE(make_feature_cube(config("nv_full"), Precision::Int8, {33, 8, 1, 1}).ok());
}

TEST(FeatureCube, ConversionRoundsHalfAwayAndCountsSaturation) {
    auto cube = make_feature_cube(config("nv_full"), Precision::Int8, {1, 6, 1, 1});
    std::vector<float> host{1.5f, -1.5f, 2.49f, 200.0f, -300.0f, NAN};
    std::vector<uint8_t> surface(cube->size_bytes());
    ConversionStats stats;
    ConvertOptions opt;
    opt.stats = &stats;
    ASSERT_TRUE(
        pack_feature(view(host, HostType::Float32, {1, 6, 1, 1}), *cube, bytes(surface), opt).ok());
    EXPECT_EQ(static_cast<int8_t>(surface[0]), 2);
    EXPECT_EQ(static_cast<int8_t>(surface[1]), -2);
    EXPECT_EQ(static_cast<int8_t>(surface[2]), 2);
    EXPECT_EQ(static_cast<int8_t>(surface[3]), 127);
    EXPECT_EQ(static_cast<int8_t>(surface[4]), -128);
    EXPECT_EQ(static_cast<int8_t>(surface[5]), 0);
    EXPECT_EQ(stats.saturated, 2u);
    EXPECT_EQ(stats.nan, 1u);

    // quant_scale multiplies on the way in and divides on the way out.
    opt = {};
    opt.quant_scale = 0.5f;
    std::vector<float> scaled{3.0f, -5.0f, 100.0f, 0.0f, 1.0f, 254.0f};
    ASSERT_TRUE(
        pack_feature(view(scaled, HostType::Float32, {1, 6, 1, 1}), *cube, bytes(surface), opt)
            .ok());
    EXPECT_EQ(static_cast<int8_t>(surface[0]), 2);   // 1.5 -> 2
    EXPECT_EQ(static_cast<int8_t>(surface[1]), -3);  // -2.5 -> -3
    EXPECT_EQ(static_cast<int8_t>(surface[5]), 127);
    std::vector<float> back(6);
    ASSERT_TRUE(
        unpack_feature(cbytes(surface), *cube, mview(back, HostType::Float32, {1, 6, 1, 1}), opt)
            .ok());
    EXPECT_EQ(back[0], 4.0f);
    EXPECT_EQ(back[2], 100.0f);
}

TEST(FeatureCube, Fp16OverflowIsInfinityOrSaturated) {
    auto cube = make_feature_cube(config("nv_full"), Precision::Fp16, {1, 2, 1, 1});
    std::vector<float> host{70000.0f, -1e30f};
    std::vector<uint8_t> surface(cube->size_bytes());
    ASSERT_TRUE(
        pack_feature(view(host, HostType::Float32, {1, 2, 1, 1}), *cube, bytes(surface)).ok());
    EXPECT_EQ(surface[0] | surface[1] << 8, 0x7c00);
    EXPECT_EQ(surface[2] | surface[3] << 8, 0xfc00);
    ConvertOptions opt;
    opt.saturate_fp16 = true;
    ASSERT_TRUE(
        pack_feature(view(host, HostType::Float32, {1, 2, 1, 1}), *cube, bytes(surface), opt).ok());
    EXPECT_EQ(surface[0] | surface[1] << 8, 0x7bff);
    EXPECT_EQ(surface[2] | surface[3] << 8, 0xfbff);
}

// Values every (host type, precision) pair represents exactly, so a round trip is lossless.
std::vector<double> representable_values(std::mt19937_64& rng, size_t n, HostType t, Precision p) {
    std::vector<double> v(n);
    for (auto& x : v) {
        if (p == Precision::Fp16 && (t == HostType::Float32 || t == HostType::Float16)) {
            uint16_t h;
            do h = static_cast<uint16_t>(rng());
            while (fp16::is_nan(h) || fp16::is_inf(h));
            x = fp16::to_float(h);
            continue;
        }
        int64_t lo = p == Precision::Int8 ? -128 : (p == Precision::Int16 ? -32768 : -2048);
        int64_t hi = p == Precision::Int8 ? 127 : (p == Precision::Int16 ? 32767 : 2048);
        if (t == HostType::Int8) lo = std::max<int64_t>(lo, -128), hi = std::min<int64_t>(hi, 127);
        if (t == HostType::Uint8) lo = std::max<int64_t>(lo, 0), hi = std::min<int64_t>(hi, 255);
        if (t == HostType::Uint16) lo = std::max<int64_t>(lo, 0);
        if (t == HostType::Float16)
            lo = std::max<int64_t>(lo, -2048), hi = std::min<int64_t>(hi, 2048);
        x = static_cast<double>(std::uniform_int_distribution<int64_t>(lo, hi)(rng));
    }
    return v;
}

std::vector<uint8_t> encode_host(const std::vector<double>& v, HostType t) {
    std::vector<uint8_t> out(v.size() * bytes_per_element(t));
    for (size_t i = 0; i < v.size(); ++i) {
        uint8_t* p = out.data() + i * bytes_per_element(t);
        switch (t) {
            case HostType::Float32: {
                float f = static_cast<float>(v[i]);
                std::memcpy(p, &f, 4);
                break;
            }
            case HostType::Float16: {
                uint16_t h = fp16::from_float(static_cast<float>(v[i]));
                std::memcpy(p, &h, 2);
                break;
            }
            case HostType::Int8: {
                int8_t x = static_cast<int8_t>(v[i]);
                std::memcpy(p, &x, 1);
                break;
            }
            case HostType::Uint8: {
                uint8_t x = static_cast<uint8_t>(v[i]);
                std::memcpy(p, &x, 1);
                break;
            }
            case HostType::Int16: {
                int16_t x = static_cast<int16_t>(v[i]);
                std::memcpy(p, &x, 2);
                break;
            }
            case HostType::Uint16: {
                uint16_t x = static_cast<uint16_t>(v[i]);
                std::memcpy(p, &x, 2);
                break;
            }
        }
    }
    return out;
}

TEST(FeatureCube, RandomRoundTripsOverEveryConfigTypeAndLayout) {
    auto rng = test::rng_for_test();
    const HostType types[] = {HostType::Float32, HostType::Float16, HostType::Int8,
                              HostType::Uint8,   HostType::Int16,   HostType::Uint16};
    int cases = 0;
    for (const HwConfig& hw : hw_configs())
        for (Precision p : {Precision::Int8, Precision::Int16, Precision::Fp16}) {
            if (!supports(hw, p)) continue;
            for (HostType t : types)
                for (HostLayout layout : {HostLayout::NCHW, HostLayout::NHWC}) {
                    const uint32_t batches = hw.max_batch > 1 ? test::random_between(rng, 1, 2) : 1;
                    Dims4 d{batches, test::random_between(rng, 1, 70),
                            test::random_between(rng, 1, 9), test::random_between(rng, 1, 19)};
                    if (rng() % 4 == 0) d.w = 1;
                    if (rng() % 4 == 0) d.h = 1;
                    FeatureStrides strides;
                    if (rng() % 2) {  // unpacked, up to a few spare atoms
                        strides.line =
                            (d.w + test::random_between(rng, 0, 3)) * uint64_t(hw.atom_bytes);
                        strides.surface =
                            d.h * strides.line + test::random_between(rng, 0, 5) * hw.atom_bytes;
                    }
                    auto cube = make_feature_cube(hw, p, d, strides);
                    ASSERT_TRUE(cube.ok()) << cube.message();
                    const auto values = representable_values(rng, d.elements(), t, p);
                    const auto host = encode_host(values, t);
                    std::vector<uint8_t> surface(cube->size_bytes(), 0x5a);
                    ConstTensorView in{host.data(), host.size(), t, layout, d};
                    ASSERT_TRUE(pack_feature(in, *cube, bytes(surface)).ok());
                    std::vector<uint8_t> back(host.size(), 0xee);
                    TensorView out{back.data(), back.size(), t, layout, d};
                    ASSERT_TRUE(unpack_feature(cbytes(surface), *cube, out).ok());
                    ASSERT_EQ(back, host) << hw.name << " " << to_string(p) << " from "
                                          << to_string(t) << " " << to_string(layout);
                    ++cases;
                }
        }
    EXPECT_GT(cases, 50);
}

TEST(FeatureCube, RejectsWhatTheHardwareCannotHold) {
    const HwConfig& full = config("nv_full");
    auto r = make_feature_cube(config("nv_small"), Precision::Fp16, {1, 8, 2, 2});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(), "feature cube: nv_small does not support fp16 (it has: int8)");
    r = make_feature_cube(full, Precision::Int8, {1, 8, 2, 0});
    EXPECT_EQ(r.message(), "feature cube: width 0 is out of range 1..8192");
    r = make_feature_cube(full, Precision::Int8, {1, 8193, 2, 2});
    EXPECT_EQ(r.message(), "feature cube: channel count 8193 is out of range 1..8192");
    r = make_feature_cube(full, Precision::Int8, {1, 8, 2, 3}, {64, 0, 0});
    EXPECT_EQ(r.message(),
              "feature cube: line stride 64 is smaller than one line of atoms (96 bytes)");
    r = make_feature_cube(full, Precision::Int8, {1, 8, 2, 3}, {100, 0, 0});
    EXPECT_EQ(r.message(),
              "feature data cube: line stride 100 (0x64) is not a multiple of 32 bytes");
    r = make_feature_cube(config("nv_small"), Precision::Int8, {1, 8, 2, 3}, {28, 0, 0});
    EXPECT_EQ(r.message(), "feature data cube: line stride 28 (0x1c) is not a multiple of 8 bytes");
    r = make_feature_cube(full, Precision::Int8, {1, 40, 2, 3}, {96, 160, 0});
    EXPECT_EQ(r.message(),
              "feature cube: surface stride 160 is smaller than one surface (192 bytes)");
    r = make_feature_cube(config("nv_small"), Precision::Int8, {1, 8, 2, 3},
                          {uint64_t(1) << 32, 0, 0});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("address space"), std::string::npos) << r.message();
}

// 8192 (13-bit size fields hold the size minus one) is the largest legal extent of each axis.
TEST(FeatureCube, TheLargestLegalExtentIsAccepted) {
    const HwConfig& full = config("nv_full");
    // int8 on nv_full: 32 channels per 32-byte atom.
    auto r = make_feature_cube(full, Precision::Int8, {1, 8192, 1, 1});
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r.value().size_bytes(), 256u * 32u);  // 256 surfaces of one atom
    r = make_feature_cube(full, Precision::Int8, {1, 1, 8192, 1});
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r.value().size_bytes(), 8192u * 32u);
    r = make_feature_cube(full, Precision::Int8, {1, 1, 1, 8192});
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r.value().size_bytes(), 8192u * 32u);
    r = make_feature_cube(full, Precision::Int8, {1, 1, 8193, 1});
    EXPECT_EQ(r.message(), "feature cube: height 8193 is out of range 1..8192");
    r = make_feature_cube(full, Precision::Int8, {1, 1, 1, 8193});
    EXPECT_EQ(r.message(), "feature cube: width 8193 is out of range 1..8192");
}

TEST(FeatureCube, BadBuffersAreRejectedAndNothingIsWritten) {
    auto cube = make_feature_cube(config("nv_full"), Precision::Int8, {1, 40, 2, 2});
    std::vector<int8_t> host(160, 3);
    std::vector<uint8_t> small(255, 0xaa);
    Status s = pack_feature(view(host, HostType::Int8, {1, 40, 2, 2}), *cube, bytes(small));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(
        s.message(),
        "pack feature cube: surface buffer of 255 bytes is smaller than the cube (256 bytes)");
    EXPECT_EQ(small, std::vector<uint8_t>(255, 0xaa));

    std::vector<uint8_t> surface(256, 0xaa);
    s = pack_feature(view(host, HostType::Int8, {1, 40, 2, 1}), *cube, bytes(surface));
    EXPECT_EQ(s.message(),
              "pack feature cube: host tensor is 1x40x2x1 but the cube is 1x40x2x2 (NxCxHxW)");
    s = pack_feature({host.data(), 100, HostType::Int8, HostLayout::NCHW, {1, 40, 2, 2}}, *cube,
                     bytes(surface));
    EXPECT_EQ(s.message(),
              "pack feature cube: buffer of 100 bytes is too small for 1x40x2x2 int8 (160 bytes)");
    s = pack_feature({nullptr, 160, HostType::Int8, HostLayout::NCHW, {1, 40, 2, 2}}, *cube,
                     bytes(surface));
    EXPECT_EQ(s.message(), "pack feature cube: data pointer is null");
    EXPECT_EQ(surface, std::vector<uint8_t>(256, 0xaa));

    std::vector<float> out(160, 7.0f);
    s = unpack_feature(cbytes(small), *cube, mview(out, HostType::Float32, {1, 40, 2, 2}));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(out, std::vector<float>(160, 7.0f));
}

}  // namespace
}  // namespace nvdla
