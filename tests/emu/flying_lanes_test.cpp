// SDP feeding PDP in flying mode with channel counts that leave lanes of the last atom unused
// (white box: the units called as the scheduler calls them). The hardware has no lane mask on
// that path: CACC delivers 0 in the unused lanes, SDP runs them through its stages like any
// other (here bias from memory, then ReLU and the output convertor), sdp2pdp carries whole
// atoms, and PDP pools and writes every lane (docs/emu/pdp.md). The expected bytes are derived
// by hand below: per lane v = ReLU(x + bias), x = 0 past the channels; the 2x2 windows hold
// v - 3, v + 1, v + 1, v + 1, so max = v + 1 and average = v exactly. The nv_full cases are
// also compared with the C model's bytes (ctest -L cmodel, tests/emu/data/cmodel/); nv_small
// rests on this test.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "emu/dma.hpp"
#include "emu/pdp.hpp"
#include "emu/sdp.hpp"
#include "emu/unit.hpp"
#include "nvdla/precision/fp16.hpp"
#include "test_support.hpp"

namespace nvdla::emu {
namespace {

constexpr uint64_t kBias = 0x10000, kDst = 0x20000;
constexpr uint32_t kAverage = 0, kMax = 1;
constexpr uint32_t W = 4, H = 2;  // pooled 2x2, stride 2: 2 x 1 outputs

struct Words {
    std::array<uint32_t, NVDLA_UNIT_WINDOW / 4> w{};
    void set(uint32_t offset, uint32_t value) { w[offset / 4] = value; }
    Group group() { return Group(w.data()); }
};

struct Case {
    const char* config;
    Precision precision;
    uint32_t channels;
    uint32_t method;
};

std::string name_of(const Case& c) {
    return std::string(c.config) + " " + std::string(to_string(c.precision)) +
           " C=" + std::to_string(c.channels) + (c.method == kMax ? " max" : " average");
}

uint32_t field_of(Precision p) {
    return p == Precision::Int8 ? 0 : p == Precision::Int16 ? 1 : 2;
}

// Bias of lane c: negative in some lanes, so ReLU matters in the unused ones too.
int32_t bias_of(uint32_t c) {
    return c % 5 == 3 ? -7 - int32_t(c % 4) : int32_t(c % 11) + 2;
}
// The base of channel c's windows, window k.
int32_t base_of(uint32_t c, uint32_t k) {
    return 10 + int32_t((c * 3 + k * 7) % 40);
}

void run(const Case& t) {
    SCOPED_TRACE(name_of(t));
    const HwConfig& cfg = test::config(t.config);
    const uint32_t bytes = bytes_per_element(t.precision);
    const uint32_t lanes = cfg.atom_bytes / bytes;
    const uint32_t surfaces = (t.channels + lanes - 1) / lanes, padded = surfaces * lanes;
    const bool fp = t.precision == Precision::Fp16;

    FlatMemory memory;
    auto* bias = reinterpret_cast<uint8_t*>(memory.add_region(MemoryPort::Primary, kBias, 0x1000));
    auto* dst = reinterpret_cast<uint8_t*>(memory.add_region(MemoryPort::Primary, kDst, 0x1000));
    DeviceStats stats;
    Dma dma(memory, stats);
    Context ctx{cfg, dma, stats};

    // Per-kernel bias, two bytes per value, for every lane of every atom (as stored).
    for (uint32_t c = 0; c < padded; ++c) {
        const uint16_t v = fp ? fp16::from_float(float(bias_of(c)))
                              : static_cast<uint16_t>(static_cast<int16_t>(bias_of(c)));
        bias[2 * c] = static_cast<uint8_t>(v);
        bias[2 * c + 1] = static_cast<uint8_t>(v >> 8);
    }

    // CACC's values: window k of channel c holds base - 3 at (0, 2k), base + 1 elsewhere.
    AccumulatorCube acc;
    acc.width = W, acc.height = H, acc.channels = t.channels, acc.precision = t.precision;
    acc.values.resize(size_t(W) * H * t.channels);
    for (uint32_t c = 0; c < t.channels; ++c)
        for (uint32_t h = 0; h < H; ++h)
            for (uint32_t w = 0; w < W; ++w) {
                const int32_t x = base_of(c, w / 2) - bias_of(c) + (h == 0 && w % 2 == 0 ? -3 : 1);
                const float f = float(x);
                uint32_t bits;
                std::memcpy(&bits, &f, 4);
                acc.values[acc.index(0, c, h, w)] = fp ? static_cast<int32_t>(bits) : x;
            }

    // SDP: flying, to PDP; X1 adds the bias from memory (per kernel) and applies ReLU.
    Words single, sdp, rdma;
    const uint32_t p = field_of(t.precision);
    sdp.set(NVDLA_SDP_D_DATA_CUBE_WIDTH, W - 1);
    sdp.set(NVDLA_SDP_D_DATA_CUBE_HEIGHT, H - 1);
    sdp.set(NVDLA_SDP_D_DATA_CUBE_CHANNEL, t.channels - 1);
    sdp.set(NVDLA_SDP_D_FEATURE_MODE_CFG, 1 | 2);
    sdp.set(NVDLA_SDP_D_DATA_FORMAT, p | p << 2);
    sdp.set(NVDLA_SDP_D_DP_BS_CFG, 2 << 2 | 1 << 4);  // ALU SUM, MUL bypassed, ReLU on
    sdp.set(NVDLA_SDP_D_DP_BS_ALU_CFG, 1);            // ALU operand from memory
    sdp.set(NVDLA_SDP_D_DP_BN_CFG, 1);
    sdp.set(NVDLA_SDP_D_DP_EW_CFG, 1);
    sdp.set(NVDLA_SDP_D_CVT_SCALE, 1);
    rdma.set(NVDLA_SDP_RDMA_D_DATA_CUBE_WIDTH, W - 1);
    rdma.set(NVDLA_SDP_RDMA_D_DATA_CUBE_HEIGHT, H - 1);
    rdma.set(NVDLA_SDP_RDMA_D_DATA_CUBE_CHANNEL, t.channels - 1);
    rdma.set(NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG, 1 | p << 2 | p << 4 | p << 6);
    rdma.set(NVDLA_SDP_RDMA_D_BRDMA_CFG, 1 << 1 | 1 << 3 | 1 << 5);  // ALU, 2 bytes, per kernel
    rdma.set(NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW, static_cast<uint32_t>(kBias));
    rdma.set(NVDLA_SDP_RDMA_D_NRDMA_CFG, 1);
    rdma.set(NVDLA_SDP_RDMA_D_ERDMA_CFG, 1);
    ElementCube handed;
    Sdp sdp_unit;
    sdp_unit.execute(ctx, single.group(), sdp.group(), rdma.group(), &acc, &handed);
    ASSERT_EQ(stats.programming_errors, 0u) << stats.last_error;

    // PDP: on the fly, 2x2 windows, stride 2.
    Words pdp;
    pdp.set(NVDLA_PDP_D_DATA_CUBE_IN_WIDTH, W - 1);
    pdp.set(NVDLA_PDP_D_DATA_CUBE_IN_HEIGHT, H - 1);
    pdp.set(NVDLA_PDP_D_DATA_CUBE_IN_CHANNEL, t.channels - 1);
    pdp.set(NVDLA_PDP_D_DATA_CUBE_OUT_WIDTH, W / 2 - 1);
    pdp.set(NVDLA_PDP_D_DATA_CUBE_OUT_HEIGHT, H / 2 - 1);
    pdp.set(NVDLA_PDP_D_DATA_CUBE_OUT_CHANNEL, t.channels - 1);
    pdp.set(NVDLA_PDP_D_OPERATION_MODE_CFG, t.method);
    pdp.set(NVDLA_PDP_D_POOLING_KERNEL_CFG, 1 | 1 << 8 | 1 << 16 | 1 << 20);
    const uint32_t half = fp ? 0x7800 : 0x8000;  // 0.5: fp17, or 2^16 / 2
    pdp.set(NVDLA_PDP_D_RECIP_KERNEL_WIDTH, half);
    pdp.set(NVDLA_PDP_D_RECIP_KERNEL_HEIGHT, half);
    pdp.set(NVDLA_PDP_D_DST_BASE_ADDR_LOW, static_cast<uint32_t>(kDst));
    const uint32_t line = W / 2 * cfg.atom_bytes;
    pdp.set(NVDLA_PDP_D_DST_LINE_STRIDE, line);
    pdp.set(NVDLA_PDP_D_DST_SURFACE_STRIDE, line);
    pdp.set(NVDLA_PDP_D_DST_RAM_CFG, 1);
    pdp.set(NVDLA_PDP_D_DATA_FORMAT, p);
    Pdp pdp_unit;
    pdp_unit.execute(ctx, pdp.group(), Group(), &handed);
    ASSERT_EQ(stats.programming_errors, 0u) << stats.last_error;

    for (uint32_t c = 0; c < padded; ++c)
        for (uint32_t k = 0; k < W / 2; ++k) {
            // Lanes past the channels: x = 0 everywhere, so every window holds ReLU(bias).
            const int32_t v = c < t.channels ? base_of(c, k) : std::max(0, bias_of(c));
            const int32_t expected = c >= t.channels || t.method == kAverage ? v : v + 1;
            const uint8_t* at = dst + (c / lanes) * line + k * cfg.atom_bytes + (c % lanes) * bytes;
            int32_t got;
            if (fp)
                got =
                    static_cast<int32_t>(fp16::to_float(static_cast<uint16_t>(at[0] | at[1] << 8)));
            else if (bytes == 1)
                got = static_cast<int8_t>(at[0]);
            else
                got = static_cast<int16_t>(at[0] | at[1] << 8);
            EXPECT_EQ(got, expected) << "channel " << c << ", output column " << k;
        }
}

TEST(FlyingLanes, SdpToPdpWritesEveryLaneOfTheLastAtom) {
    for (uint32_t channels : {17u, 20u, 33u, 45u})
        for (uint32_t method : {kAverage, kMax}) {
            for (Precision p : {Precision::Int8, Precision::Int16, Precision::Fp16})
                run({"nv_full", p, channels, method});
            run({"nv_small", Precision::Int8, channels, method});
        }
}

}  // namespace
}  // namespace nvdla::emu
