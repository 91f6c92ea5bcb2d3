// Sparse weight compression: WMB bit patterns and WGS entries worked by hand, compress ->
// decompress round trips over every weight kind with random sparsity, and every error path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "nvdla/formats/weights.hpp"
#include "test_support.hpp"

namespace nvdla {
namespace {

using test::nv_full;

using Bytes = std::vector<std::byte>;

Bytes bytes_of(std::initializer_list<int> values) {
    Bytes b;
    for (int v : values) b.push_back(std::byte(static_cast<uint8_t>(v)));
    return b;
}

Bytes prefix(const Bytes& b, size_t n) {
    return Bytes(b.begin(), b.begin() + n);
}

bool zero_from(const Bytes& b, size_t from) {
    return std::all_of(b.begin() + from, b.end(), [](std::byte x) { return x == std::byte{0}; });
}

// Packs int8 host kernels into a direct-convolution surface.
struct Packed {
    WeightLayout layout;
    Bytes dense;
};

Packed pack_direct(Precision p, Dims4 d, const std::vector<uint8_t>& host, HostType type) {
    Packed out;
    Result<WeightLayout> l = make_weight_layout(nv_full(), {WeightKind::Direct, p}, d);
    EXPECT_TRUE(l.ok()) << l.message();
    out.layout = *l;
    out.dense.resize(l->size_bytes());
    const ConstTensorView src{host.data(), host.size(), type, HostLayout::NCHW, d};
    EXPECT_TRUE(pack_weights(src, *l, out.dense).ok());
    return out;
}

struct Compressed {
    CompressedWeightSizes sizes;
    Bytes weights, mask, groups;
};

Compressed compress(const WeightSurfaceShape& shape, const Bytes& dense) {
    Compressed c;
    Result<CompressedWeightSizes> sizes = compressed_weight_sizes(nv_full(), shape, dense);
    EXPECT_TRUE(sizes.ok()) << sizes.message();
    c.weights.assign(sizes->weight_bytes, std::byte{0xcd});
    c.mask.assign(sizes->mask_bytes, std::byte{0xcd});
    c.groups.assign(sizes->group_size_bytes, std::byte{0xcd});
    Result<CompressedWeightSizes> done =
        compress_weights(nv_full(), shape, dense, c.weights, c.mask, c.groups);
    EXPECT_TRUE(done.ok()) << done.message();
    c.sizes = *done;
    return c;
}

// One int8 kernel of 16 channels: elements 1, 4 and 15 are non-zero. WMB bits little-endian:
// byte 0 = bits 1 and 4 = 0b0001'0010, byte 1 = bit 15 - 8 = 7 = 0x80.
TEST(WeightsCompress, WmbBitPatternWorkedByHand) {
    const std::vector<uint8_t> host = {0, 5, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};
    const Packed p = pack_direct(Precision::Int8, {1, 16, 1, 1}, host, HostType::Int8);
    const Compressed c = compress(p.layout.surface, p.dense);
    EXPECT_EQ(c.sizes.nonzero_elements, 3u);
    EXPECT_EQ(c.sizes.weight_bytes, 128u);
    EXPECT_EQ(c.sizes.mask_bytes, 128u);
    EXPECT_EQ(c.sizes.group_size_bytes, 128u);
    EXPECT_EQ(prefix(c.mask, 2), bytes_of({0x12, 0x80}));
    EXPECT_TRUE(zero_from(c.mask, 2));
    EXPECT_EQ(prefix(c.weights, 3), bytes_of({5, 7, 9}));
    EXPECT_TRUE(zero_from(c.weights, 3));
    EXPECT_EQ(prefix(c.groups, 4), bytes_of({3, 0, 0, 0}));
    EXPECT_TRUE(zero_from(c.groups, 4));
}

// fp16: one bit per 2-byte element. Elements 1 (0x1234) and 3 (-0.0, not all-zero bits) are
// kept: WMB byte 0b1010; WGS counts bytes, 2 per element.
TEST(WeightsCompress, SixteenBitElementsTakeOneBitEach) {
    const std::vector<uint16_t> values = {0x0000, 0x1234, 0x0000, 0x8000};
    std::vector<uint8_t> host(8);
    std::memcpy(host.data(), values.data(), 8);
    const Packed p = pack_direct(Precision::Fp16, {1, 4, 1, 1}, host, HostType::Float16);
    const Compressed c = compress(p.layout.surface, p.dense);
    EXPECT_EQ(prefix(c.mask, 1), bytes_of({0x0a}));
    EXPECT_EQ(prefix(c.weights, 4), bytes_of({0x34, 0x12, 0x00, 0x80}));
    EXPECT_EQ(prefix(c.groups, 4), bytes_of({4, 0, 0, 0}));
}

// 33 int8 kernels of 3 channels: group 0 = 32 kernels = elements 0..95, group 1 = elements
// 96..98. The groups' bits follow each other (group 1 starts at bit 96 = byte 12) and each
// WGS entry counts only its own group.
TEST(WeightsCompress, GroupsShareTheStreamsAndCountTheirOwnBytes) {
    std::vector<uint8_t> host(33 * 3, 0);
    host[0 * 3 + 0] = 1;   // element 0
    host[31 * 3 + 2] = 2;  // element 95: byte 11, bit 7
    host[32 * 3 + 1] = 3;  // element 97: byte 12, bit 1
    const Packed p = pack_direct(Precision::Int8, {33, 3, 1, 1}, host, HostType::Int8);
    ASSERT_EQ(p.layout.surface.groups(), 2u);
    const Compressed c = compress(p.layout.surface, p.dense);
    Bytes mask(13, std::byte{0});
    mask[0] = std::byte{0x01};
    mask[11] = std::byte{0x80};
    mask[12] = std::byte{0x02};
    EXPECT_EQ(prefix(c.mask, 13), mask);
    EXPECT_TRUE(zero_from(c.mask, 13));
    EXPECT_EQ(prefix(c.weights, 3), bytes_of({1, 2, 3}));
    EXPECT_EQ(prefix(c.groups, 8), bytes_of({2, 0, 0, 0, 1, 0, 0, 0}));
}

// 17 fp16 kernels of 1 element: groups of 16 + 1. WGS = {2, 2} bytes.
TEST(WeightsCompress, GroupSizesAreBytesPerGroup) {
    std::vector<uint16_t> values(17, 0);
    values[3] = 0x3c00;
    values[16] = 0xbc00;
    std::vector<uint8_t> host(34);
    std::memcpy(host.data(), values.data(), 34);
    const Packed p = pack_direct(Precision::Fp16, {17, 1, 1, 1}, host, HostType::Float16);
    const Compressed c = compress(p.layout.surface, p.dense);
    EXPECT_EQ(prefix(c.groups, 8), bytes_of({2, 0, 0, 0, 2, 0, 0, 0}));
    EXPECT_EQ(prefix(c.mask, 3), bytes_of({0x08, 0x00, 0x01}));
    EXPECT_EQ(prefix(c.weights, 4), bytes_of({0x00, 0x3c, 0x00, 0xbc}));
}

// A large surface: WMB size follows the element count, WGS the group count.
TEST(WeightsCompress, SurfaceSizes) {
    const WeightSurfaceShape shape{Precision::Int16, 100, 16, 2 * 3 * 3 * 70};
    // 100 x 630 elements = 63000 bits = 7875 bytes -> 7936; 7 groups x 4 = 28 -> 128.
    Bytes dense(shape.size_bytes(), std::byte{1});
    Result<CompressedWeightSizes> s = compressed_weight_sizes(nv_full(), shape, dense);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(s->mask_bytes, 7936u);
    EXPECT_EQ(s->group_size_bytes, 128u);
    EXPECT_EQ(s->weight_bytes, 126000u + 80);  // all non-zero: 126000 -> 126080
    EXPECT_EQ(s->nonzero_elements, 63000u);
}

// ---- Round trips --------------------------------------------------------------------------

TEST(WeightsCompress, CompressThenDecompressEveryKind) {
    auto rng = test::rng_for_test();
    const Precision precisions[] = {Precision::Int8, Precision::Int16, Precision::Fp16};
    for (WeightKind kind :
         {WeightKind::Direct, WeightKind::Image, WeightKind::Winograd, WeightKind::Deconvolution}) {
        for (int iteration = 0; iteration < 12; ++iteration) {
            const Precision p = precisions[iteration % 3];
            WeightFormat f{kind, p};
            Dims4 d{test::random_between(rng, 1, 70), test::random_between(rng, 1, 40),
                    test::random_between(rng, 1, 4), test::random_between(rng, 1, 4)};
            if (kind == WeightKind::Image) {
                d.c = test::random_between(rng, 1, 4);
                f.post_extension = d.c * d.w <= 16 ? 4 : 1;
            } else if (kind == WeightKind::Winograd) {
                d.h = d.w = 3;
                f.winograd_scale = p == Precision::Fp16 ? 1.0f : 4.0f;
            } else if (kind == WeightKind::Deconvolution) {
                f.stride_x = test::random_between(rng, 1, 3);
                f.stride_y = test::random_between(rng, 1, 3);
            }
            Result<WeightLayout> l = make_weight_layout(nv_full(), f, d);
            ASSERT_TRUE(l.ok()) << l.message();
            // Random sparsity from 10% to 95% zeros; every value small enough for int8 scale 4.
            const uint32_t zero_percent = test::random_between(rng, 10, 95);
            std::vector<float> host(d.elements());
            for (float& v : host)
                v = test::random_between(rng, 1, 100) <= zero_percent
                        ? 0.0f
                        : float(int32_t(test::random_between(rng, 1, 6)) - 3);
            host[0] = 1.0f;  // never all zero
            const ConstTensorView src{host.data(), host.size() * 4, HostType::Float32,
                                      HostLayout::NCHW, d};
            Bytes dense(l->size_bytes());
            ASSERT_TRUE(pack_weights(src, *l, dense).ok());

            for (uint32_t set = 0; set < l->sets; ++set) {
                SCOPED_TRACE(std::string(to_string(kind)) + " " + std::string(to_string(p)) +
                             " set " + std::to_string(set));
                const WeightSurfaceShape& shape = l->surface;
                const Bytes one(dense.begin() + l->set_offset(set),
                                dense.begin() + l->set_offset(set) + shape.size_bytes());
                Result<CompressedWeightSizes> sizes =
                    compressed_weight_sizes(nv_full(), shape, one);
                ASSERT_TRUE(sizes.ok()) << sizes.message();
                if (sizes->nonzero_elements == 0) continue;  // an empty deconvolution set
                const Compressed c = compress(shape, one);
                const uint32_t bpe = bytes_per_element(p);
                EXPECT_EQ(c.sizes.weight_bytes % 128, 0u);
                EXPECT_EQ(c.sizes.weight_bytes, (c.sizes.nonzero_elements * bpe + 127) / 128 * 128);
                EXPECT_TRUE(zero_from(c.weights, c.sizes.nonzero_elements * bpe));
                uint64_t total = 0;
                for (uint32_t g = 0; g < shape.groups(); ++g) {
                    uint32_t entry;
                    std::memcpy(&entry, c.groups.data() + 4 * g, 4);
                    total += entry;
                }
                EXPECT_EQ(total, c.sizes.nonzero_elements * bpe);
                Bytes back(shape.size_bytes(), std::byte{0x99});
                ASSERT_TRUE(
                    decompress_weights(nv_full(), shape, c.weights, c.mask, c.groups, back).ok());
                ASSERT_EQ(back, one);
            }
        }
    }
}

// ---- Errors -------------------------------------------------------------------------------

const WeightSurfaceShape kShape{Precision::Int8, 33, 32, 3};

Bytes small_dense() {
    Bytes d(kShape.size_bytes(), std::byte{0});
    d[0] = std::byte{1};
    d[97] = std::byte{2};
    return d;
}

void expect_message(const std::string& message, std::initializer_list<const char*> pieces) {
    for (const char* piece : pieces)
        EXPECT_NE(message.find(piece), std::string::npos)
            << "'" << message << "' lacks '" << piece << "'";
}

TEST(WeightsCompressErrors, ShapeAndConfiguration) {
    const Bytes dense = small_dense();
    auto sizes_error = [&](const HwConfig& cfg, const WeightSurfaceShape& shape) {
        Result<CompressedWeightSizes> r = compressed_weight_sizes(cfg, shape, dense);
        EXPECT_FALSE(r.ok());
        return r.message();
    };
    expect_message(sizes_error(**find_hw_config("nv_small"), kShape),
                   {"nv_small has no weight compression"});
    expect_message(sizes_error(**find_hw_config("nv_large"), kShape),
                   {"nv_large has no weight compression"});
    WeightSurfaceShape shape = kShape;
    shape.kernels_per_group = 16;
    expect_message(sizes_error(nv_full(), shape), {"groups of 16 kernels", "32 for int8"});
    shape = kShape;
    shape.kernels = 0;
    expect_message(sizes_error(nv_full(), shape), {"0 kernels", "1 to 8192"});
    shape = kShape;
    shape.precision = Precision::Int16;
    shape.kernels_per_group = 16;
    expect_message(sizes_error(nv_full(), shape), {"3 bytes per kernel", "2-byte int16"});
    shape = kShape;
    shape.bytes_per_kernel = 262145;
    expect_message(sizes_error(nv_full(), shape), {"262145 bytes per kernel"});
    shape = kShape;
    expect_message(
        compressed_weight_sizes(nv_full(), shape, ConstByteSpan(dense).first(99)).message(),
        {"dense surface of 99 bytes", "128"});
}

TEST(WeightsCompressErrors, CompressWritesNothingOnError) {
    const Bytes dense = small_dense();
    auto attempt = [&](ConstByteSpan in, size_t weights_size, size_t mask_size, size_t groups_size,
                       std::initializer_list<const char*> pieces) {
        Bytes weights(weights_size, std::byte{0xab}), mask(mask_size, std::byte{0xab}),
            groups(groups_size, std::byte{0xab});
        Result<CompressedWeightSizes> r =
            compress_weights(nv_full(), kShape, in, weights, mask, groups);
        ASSERT_FALSE(r.ok());
        expect_message(r.message(), pieces);
        for (const Bytes* b : {&weights, &mask, &groups})
            for (std::byte x : *b) ASSERT_EQ(x, std::byte{0xab});
    };
    attempt(dense, 127, 128, 128, {"compressed weight buffer of 127 bytes", "128"});
    attempt(dense, 128, 100, 128, {"WMB buffer of 100 bytes"});
    attempt(dense, 128, 128, 4, {"WGS buffer of 4 bytes"});
    const Bytes zeros(kShape.size_bytes(), std::byte{0});
    attempt(zeros, 128, 128, 128, {"all 99 weights are zero", "uncompressed"});
}

TEST(WeightsCompressErrors, DecompressChecksBeforeWriting) {
    const Bytes dense = small_dense();
    const Compressed good = compress(kShape, dense);
    auto attempt = [&](const Bytes& weights, const Bytes& mask, const Bytes& groups,
                       size_t dense_size, std::initializer_list<const char*> pieces) {
        Bytes out(dense_size, std::byte{0xab});
        Status s = decompress_weights(nv_full(), kShape, weights, mask, groups, out);
        ASSERT_FALSE(s.ok());
        expect_message(s.message(), pieces);
        for (std::byte x : out) ASSERT_EQ(x, std::byte{0xab});
    };
    Bytes bad_groups = good.groups;
    bad_groups[4] = std::byte{5};  // group 1 holds one element (1 byte), not 5
    attempt(good.weights, good.mask, bad_groups, 128,
            {"WGS entry 1 says 5 bytes", "group 1's mask bits mark 1 non-zero elements (1 bytes)"});
    Bytes bad_mask = good.mask;
    bad_mask[0] |= std::byte{0x02};  // an extra bit in group 0
    attempt(good.weights, bad_mask, good.groups, 128, {"WGS entry 0 says 1 bytes", "mark 2"});
    attempt(good.weights, prefix(good.mask, 12), good.groups, 128, {"WMB of 12 bytes", "13 bytes"});
    attempt(good.weights, good.mask, prefix(good.groups, 7), 128, {"WGS of 7 bytes", "8 bytes"});
    attempt(prefix(good.weights, 1), good.mask, good.groups, 128,
            {"compressed weights of 1 bytes", "2 bytes"});
    attempt(good.weights, good.mask, good.groups, 127, {"dense buffer of 127 bytes"});
    Bytes out(128);
    Status s = decompress_weights(**find_hw_config("nv_small"), kShape, good.weights, good.mask,
                                  good.groups, out);
    EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace nvdla
