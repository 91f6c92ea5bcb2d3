#include "nvdla/formats/dmp.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "nvdla/precision/fp16.hpp"
#include "test_support.hpp"

namespace nvdla {
namespace {

TEST(DmpLayout, TwentyChannelsMakeThreeChunks) {
    // The seed's example: 20 channels -> chunks of channels 0-7, 8-15 and 16-19.
    auto l = make_dmp_layout({1, 20, 3, 4}, DmpElement::Fp16, false);
    ASSERT_TRUE(l.ok());
    EXPECT_EQ(l->chunks(), 3u);
    // (x=1, y=2, n=17): chunk 2, n_ 1, C_ = 20 % 8 = 4:
    // (2*(4*3*8) + 1*(3*4) + 2*4 + 1) * 2 = (192 + 12 + 8 + 1) * 2
    EXPECT_EQ(l->offset(0, 17, 2, 1), 426u);
    // (x=3, y=0, n=9): chunk 1, n_ 1, C_ 8: (96 + 3*3*8 + 0 + 1) * 2
    EXPECT_EQ(l->offset(0, 9, 0, 3), (96u + 72u + 1u) * 2u);
    // transpose_weight: offset = (chunk*W*H*8 + y*W*C_ + x*C_ + n_) * 2
    auto t = make_dmp_layout({1, 20, 3, 4}, DmpElement::Fp16, true);
    EXPECT_EQ(t->offset(0, 17, 2, 1), (192u + 2u * 4u * 4u + 1u * 4u + 1u) * 2u);
}

TEST(DmpLayout, AtMostEightChannelsIsPlainDwhc) {
    auto l = make_dmp_layout({2, 5, 3, 4}, DmpElement::Fp16, false);
    ASSERT_TRUE(l.ok());
    // offset = (d*(W*H*C) + w*(H*C) + h*C + c) * 2
    for (uint32_t d = 0; d < 2; ++d)
        for (uint32_t c = 0; c < 5; ++c)
            for (uint32_t h = 0; h < 3; ++h)
                for (uint32_t w = 0; w < 4; ++w)
                    EXPECT_EQ(l->offset(d, c, h, w), (d * 60u + w * 15u + h * 5u + c) * 2u);
}

TEST(DmpLayout, OffsetsCoverTheBufferExactlyOnce) {
    for (bool transposed : {false, true}) {
        auto l = make_dmp_layout({2, 19, 3, 5}, DmpElement::Float32, transposed);
        std::set<uint64_t> seen;
        for (uint32_t d = 0; d < 2; ++d)
            for (uint32_t c = 0; c < 19; ++c)
                for (uint32_t h = 0; h < 3; ++h)
                    for (uint32_t w = 0; w < 5; ++w) {
                        const uint64_t o = l->offset(d, c, h, w);
                        EXPECT_EQ(o % 4, 0u);
                        EXPECT_LT(o, l->size_bytes());
                        seen.insert(o);
                    }
        EXPECT_EQ(seen.size(), 2u * 19 * 3 * 5);
    }
}

TEST(DmpLayout, RoundTripsFp16InputsAndFloatOutputs) {
    auto rng = test::rng_for_test();
    for (int i = 0; i < 20; ++i) {
        const Dims4 d{test::random_between(rng, 1, 2), test::random_between(rng, 1, 30),
                      test::random_between(rng, 1, 6), test::random_between(rng, 1, 6)};
        const bool transposed = i % 2;
        const DmpElement e = i % 4 < 2 ? DmpElement::Fp16 : DmpElement::Float32;
        auto l = make_dmp_layout(d, e, transposed);
        ASSERT_TRUE(l.ok());
        std::vector<float> host(d.elements());
        for (auto& f : host)
            f = fp16::to_float(fp16::from_float(std::uniform_real_distribution<float>(-9, 9)(rng)));
        const HostLayout hl = i % 3 ? HostLayout::NCHW : HostLayout::NHWC;
        std::vector<uint8_t> buf(l->size_bytes(), 0xcc);
        ASSERT_TRUE(pack_dmp({host.data(), host.size() * 4, HostType::Float32, hl, d}, *l,
                             std::as_writable_bytes(std::span(buf)))
                        .ok());
        std::vector<float> back(host.size());
        ASSERT_TRUE(unpack_dmp(std::as_bytes(std::span(buf)), *l,
                               {back.data(), back.size() * 4, HostType::Float32, hl, d})
                        .ok());
        EXPECT_EQ(back, host);
    }
}

TEST(DmpLayout, PackWritesFp16Bits) {
    auto l = make_dmp_layout({1, 1, 1, 2}, DmpElement::Fp16, false);
    std::vector<float> host{1.0f, -2.0f};
    std::vector<uint8_t> buf(4);
    ASSERT_TRUE(pack_dmp({host.data(), 8, HostType::Float32, HostLayout::NCHW, {1, 1, 1, 2}}, *l,
                         std::as_writable_bytes(std::span(buf)))
                    .ok());
    EXPECT_EQ(buf, (std::vector<uint8_t>{0x00, 0x3c, 0x00, 0xc0}));
}

TEST(DmpLayout, RejectsBadInput) {
    EXPECT_EQ(make_dmp_layout({1, 0, 2, 2}, DmpElement::Fp16, false).message(),
              "DMP layout: dimensions 1x0x2x2 (DxCxHxW) have a zero extent");
    auto l = make_dmp_layout({1, 3, 2, 2}, DmpElement::Fp16, false);
    std::vector<float> host(12, 1.0f);
    std::vector<uint8_t> small(23, 0xaa);
    Status s = pack_dmp({host.data(), 48, HostType::Float32, HostLayout::NCHW, {1, 3, 2, 2}}, *l,
                        std::as_writable_bytes(std::span(small)));
    EXPECT_EQ(s.message(),
              "pack DMP layout: buffer of 23 bytes is smaller than the layout (24 bytes)");
    EXPECT_EQ(small, std::vector<uint8_t>(23, 0xaa));
    std::vector<uint8_t> buf(24);
    s = pack_dmp({host.data(), 48, HostType::Float32, HostLayout::NCHW, {1, 2, 2, 3}}, *l,
                 std::as_writable_bytes(std::span(buf)));
    EXPECT_EQ(s.message(),
              "pack DMP layout: host tensor is 1x2x2x3 but the layout is 1x3x2x2 (DxCxHxW)");
}

}  // namespace
}  // namespace nvdla
