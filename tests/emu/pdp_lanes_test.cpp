// PDP in flying mode pools one work lane for all the lanes past the channels that hold one
// value over the whole plane (what SDP computed there, or 0 past its held channels). Checked
// against the plain path: the same cube stored in memory and pooled offline, where every lane
// is pooled as PDP_RDMA reads it. Random shapes, kernels, padding values and reciprocals, lanes
// past the channels constant (some sharing a value), zero, varying, or constant but for one
// element; the destination bytes (and the fp16 NaN output count) must be identical.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "emu/dma.hpp"
#include "emu/isa.hpp"
#include "emu/pdp.hpp"
#include "emu/unit.hpp"
#include "test_support.hpp"

namespace nvdla::emu {
namespace {

constexpr uint64_t kSrc = 0x100000, kFlyingDst = 0x200000, kOfflineDst = 0x300000;
constexpr uint64_t kRegion = 0x40000;
constexpr uint8_t kUntouched = 0xa5;

struct Words {
    std::array<uint32_t, NVDLA_UNIT_WINDOW / 4> w{};
    void set(uint32_t offset, uint32_t value) { w[offset / 4] = value; }
    Group group() { return Group(w.data()); }
};

uint32_t uniform(std::mt19937_64& rng, uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
}

struct Case {
    const char* config;
    Precision precision;
    uint32_t method;  // 0 average, 1 max, 2 min
    uint32_t channels;
    bool held_is_channels;    // SDP held only the channels (lanes past them are 0)
    bool wide_pairs = false;  // a wide cube, 2x2 kernel of stride 2 (AVX2's 8-column blocks)
};

void run_case(const Case& t, std::mt19937_64& rng) {
    const HwConfig& cfg = test::config(t.config);
    const uint32_t bytes = bytes_per_element(t.precision);
    const uint32_t lanes = cfg.atom_bytes / bytes;
    const uint32_t surfaces = (t.channels + lanes - 1) / lanes, padded = surfaces * lanes;
    const uint32_t width = t.wide_pairs ? uniform(rng, 16, 70) : uniform(rng, 1, 12),
                   height = uniform(rng, 1, 12);
    const uint32_t kernel_w = t.wide_pairs ? 2 : uniform(rng, 1, std::min(8u, width));
    const uint32_t kernel_h = uniform(rng, 1, std::min(8u, height));
    const uint32_t stride_w = t.wide_pairs ? 2 : uniform(rng, 1, 3), stride_h = uniform(rng, 1, 3);
    const uint32_t pad_left = uniform(rng, 0, std::min(7u, kernel_w - 1));
    const uint32_t pad_right = uniform(rng, 0, std::min(7u, kernel_w - 1));
    const uint32_t pad_top = uniform(rng, 0, std::min(7u, kernel_h - 1));
    const uint32_t pad_bottom = uniform(rng, 0, std::min(7u, kernel_h - 1));
    const uint32_t out_w = (width + pad_left + pad_right - kernel_w) / stride_w + 1;
    const uint32_t out_h = (height + pad_top + pad_bottom - kernel_h) / stride_h + 1;
    SCOPED_TRACE(std::string(t.config) + " " + std::string(to_string(t.precision)) + " method " +
                 std::to_string(t.method) + " C=" + std::to_string(t.channels) + " " +
                 std::to_string(width) + "x" + std::to_string(height) + " kernel " +
                 std::to_string(kernel_w) + "x" + std::to_string(kernel_h));

    // SDP's cube: random channels; past them a value per lane from a small set (so lanes
    // share values), 0, varying values, or one value but for one element.
    ElementCube cube;
    cube.channels = t.channels, cube.height = height, cube.width = width;
    cube.precision = t.precision;
    cube.stored_channels = t.held_is_channels ? t.channels : padded;
    cube.values.resize(size_t(cube.held()) * height * width);
    auto value = [&] {
        if (t.precision == Precision::Int8) return static_cast<int16_t>(uniform(rng, 0, 255) - 128);
        return static_cast<int16_t>(uniform(rng, 0, 0xffff));
    };
    const std::array<int16_t, 3> shared = {value(), value(), 0};
    const size_t plane = size_t(height) * width;
    for (uint32_t c = 0; c < cube.held(); ++c) {
        int16_t* v = cube.values.data() + cube.index(0, c, 0, 0);
        const uint32_t kind = c < t.channels ? 0 : uniform(rng, 0, 3);
        for (size_t i = 0; i < plane; ++i) v[i] = kind == 0 ? value() : shared[c % 3];
        if (kind == 3) v[uniform(rng, 0, uint32_t(plane - 1))] = value();
    }

    FlatMemory memory;
    auto* src = reinterpret_cast<uint8_t*>(memory.add_region(MemoryPort::Primary, kSrc, kRegion));
    auto* flying_dst =
        reinterpret_cast<uint8_t*>(memory.add_region(MemoryPort::Primary, kFlyingDst, kRegion));
    auto* offline_dst =
        reinterpret_cast<uint8_t*>(memory.add_region(MemoryPort::Primary, kOfflineDst, kRegion));
    std::memset(flying_dst, kUntouched, kRegion);
    std::memset(offline_dst, kUntouched, kRegion);
    const uint32_t src_line = width * cfg.atom_bytes, src_surface = height * src_line;
    for (uint32_t c = 0; c < cube.held(); ++c)
        for (uint32_t h = 0; h < height; ++h)
            for (uint32_t w = 0; w < width; ++w) {
                const auto v = static_cast<uint16_t>(cube.values[cube.index(0, c, h, w)]);
                uint8_t* at = src + (c / lanes) * src_surface + h * src_line + w * cfg.atom_bytes +
                              (c % lanes) * bytes;
                at[0] = static_cast<uint8_t>(v);
                if (bytes == 2) at[1] = static_cast<uint8_t>(v >> 8);
            }

    const uint32_t format = t.precision == Precision::Int8    ? 0
                            : t.precision == Precision::Int16 ? 1
                                                              : 2;
    const uint32_t dst_line = out_w * cfg.atom_bytes, dst_surface = out_h * dst_line;
    auto program = [&](Words& pdp, uint64_t dst, bool flying) {
        pdp.set(NVDLA_PDP_D_DATA_CUBE_IN_WIDTH, width - 1);
        pdp.set(NVDLA_PDP_D_DATA_CUBE_IN_HEIGHT, height - 1);
        pdp.set(NVDLA_PDP_D_DATA_CUBE_IN_CHANNEL, t.channels - 1);
        pdp.set(NVDLA_PDP_D_DATA_CUBE_OUT_WIDTH, out_w - 1);
        pdp.set(NVDLA_PDP_D_DATA_CUBE_OUT_HEIGHT, out_h - 1);
        pdp.set(NVDLA_PDP_D_DATA_CUBE_OUT_CHANNEL, t.channels - 1);
        pdp.set(NVDLA_PDP_D_OPERATION_MODE_CFG, t.method | (flying ? 0 : 1u << 4));
        pdp.set(NVDLA_PDP_D_POOLING_KERNEL_CFG,
                (kernel_w - 1) | (kernel_h - 1) << 8 | (stride_w - 1) << 16 | (stride_h - 1) << 20);
        pdp.set(NVDLA_PDP_D_POOLING_PADDING_CFG,
                pad_left | pad_top << 4 | pad_right << 8 | pad_bottom << 12);
        pdp.set(NVDLA_PDP_D_DST_BASE_ADDR_LOW, static_cast<uint32_t>(dst));
        pdp.set(NVDLA_PDP_D_DST_LINE_STRIDE, dst_line);
        pdp.set(NVDLA_PDP_D_DST_SURFACE_STRIDE, dst_surface);
        pdp.set(NVDLA_PDP_D_DST_RAM_CFG, 1);
        pdp.set(NVDLA_PDP_D_DATA_FORMAT, format);
    };
    Words flying_pdp, offline_pdp, rdma;
    program(flying_pdp, kFlyingDst, true);
    program(offline_pdp, kOfflineDst, false);
    // Padding values and reciprocals: random register contents, the same for both.
    for (uint32_t offset :
         {NVDLA_PDP_D_POOLING_PADDING_VALUE_1_CFG, NVDLA_PDP_D_POOLING_PADDING_VALUE_2_CFG,
          NVDLA_PDP_D_POOLING_PADDING_VALUE_3_CFG, NVDLA_PDP_D_POOLING_PADDING_VALUE_4_CFG,
          NVDLA_PDP_D_POOLING_PADDING_VALUE_5_CFG, NVDLA_PDP_D_POOLING_PADDING_VALUE_6_CFG,
          NVDLA_PDP_D_POOLING_PADDING_VALUE_7_CFG, NVDLA_PDP_D_RECIP_KERNEL_WIDTH,
          NVDLA_PDP_D_RECIP_KERNEL_HEIGHT}) {
        const uint32_t v = uniform(rng, 0, 0x7ffff);
        flying_pdp.set(offset, v);
        offline_pdp.set(offset, v);
    }
    rdma.set(NVDLA_PDP_RDMA_D_DATA_CUBE_IN_WIDTH, width - 1);
    rdma.set(NVDLA_PDP_RDMA_D_DATA_CUBE_IN_HEIGHT, height - 1);
    rdma.set(NVDLA_PDP_RDMA_D_DATA_CUBE_IN_CHANNEL, t.channels - 1);
    rdma.set(NVDLA_PDP_RDMA_D_SRC_BASE_ADDR_LOW, static_cast<uint32_t>(kSrc));
    rdma.set(NVDLA_PDP_RDMA_D_SRC_LINE_STRIDE, src_line);
    rdma.set(NVDLA_PDP_RDMA_D_SRC_SURFACE_STRIDE, src_surface);
    rdma.set(NVDLA_PDP_RDMA_D_SRC_RAM_CFG, 1);
    rdma.set(NVDLA_PDP_RDMA_D_DATA_FORMAT, format);
    rdma.set(NVDLA_PDP_RDMA_D_POOLING_KERNEL_CFG, (kernel_w - 1) | (stride_w - 1) << 4);

    DeviceStats stats;
    Dma dma(memory, stats);
    Context ctx{cfg, dma, stats};
    Pdp pdp;
    pdp.execute(ctx, flying_pdp.group(), Group(), &cube);
    ASSERT_EQ(stats.programming_errors, 0u) << stats.last_error;
    pdp.execute(ctx, offline_pdp.group(), rdma.group(), nullptr);
    ASSERT_EQ(stats.programming_errors, 0u) << stats.last_error;

    for (uint64_t i = 0; i < kRegion; ++i)
        ASSERT_EQ(flying_dst[i], offline_dst[i])
            << "byte " << i << " (surface " << i / dst_surface << ", line "
            << i % dst_surface / dst_line << ", column " << i % dst_line / cfg.atom_bytes
            << ", lane " << i % cfg.atom_bytes / bytes << ")";
    EXPECT_EQ(flying_pdp.w[NVDLA_PDP_D_NAN_OUTPUT_NUM / 4],
              offline_pdp.w[NVDLA_PDP_D_NAN_OUTPUT_NUM / 4]);
}

TEST(PdpLanes, FlyingLanesPastTheChannelsPoolAsTheirValuesOffline) {
    auto rng = test::rng_for_test();
    for (bool held_is_channels : {false, true})
        for (uint32_t channels : {1u, 6u, 17u, 33u})
            for (uint32_t method : {0u, 1u, 2u})
                for (int trial = 0; trial < 4; ++trial) {
                    for (Precision p : {Precision::Int8, Precision::Int16, Precision::Fp16})
                        run_case({"nv_full", p, method, channels, held_is_channels}, rng);
                    run_case({"nv_small", Precision::Int8, method, channels, held_is_channels},
                             rng);
                }
}

// Max and min over 2-wide, stride-2 windows of wide cubes (LeNet's pooling) take the vector
// path at the levels above scalar; the offline path pools every lane with the plain loops.
TEST(PdpLanes, WidePairsPoolAsOfflineAtEveryLevel) {
    auto rng = test::rng_for_test();
    const IsaLevel restore = isa_limit_from_environment();
    for (IsaLevel level : {IsaLevel::Scalar, IsaLevel::Avx2, IsaLevel::Avx512}) {
        set_isa_limit(level);
        if (isa_level() != level) continue;  // the CPU does not run it
        SCOPED_TRACE(isa_name(level));
        for (bool held_is_channels : {false, true})
            for (uint32_t channels : {1u, 6u, 16u, 17u, 40u})
                for (uint32_t method : {1u, 2u})
                    for (int trial = 0; trial < 3; ++trial) {
                        for (Precision p : {Precision::Int8, Precision::Int16})
                            run_case({"nv_full", p, method, channels, held_is_channels, true}, rng);
                        run_case(
                            {"nv_small", Precision::Int8, method, channels, held_is_channels, true},
                            rng);
                    }
    }
    set_isa_limit(restore);
}

}  // namespace
}  // namespace nvdla::emu
