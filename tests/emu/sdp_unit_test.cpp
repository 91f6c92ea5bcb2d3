// The Sdp unit on its own (white box): flying-mode input from CACC, output into PDP's element
// cube, and the checks that turn bad programming into an error sentence without touching
// memory. The device-level tests are in sdp_int_test.cpp, sdp_fp16_test.cpp, sdp_y_test.cpp.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "emu/isa.hpp"
#include "emu/sdp.hpp"
#include "nvdla/precision/nvdla_float.hpp"
#include "sdp_test_harness.hpp"

namespace nvdla::emu::sdp_test {
namespace {

constexpr uint64_t kDst = 0x40000;

// A register group as the unit sees it.
struct Words {
    std::array<uint32_t, NVDLA_UNIT_WINDOW / 4> w{};
    void set(uint32_t offset, uint32_t value) { w[offset / 4] = value; }
    Group group() { return Group(w.data()); }
};

class SdpUnit : public ::testing::Test {
  protected:
    void make(const char* config) {
        cfg_ = &test::config(config);
        dma_ = std::make_unique<Dma>(memory_, stats_);
        ctx_ = std::make_unique<Context>(Context{*cfg_, *dma_, stats_});
        // Bypass everything, identity convertor, flying input, output to memory.
        sdp_.set(NVDLA_SDP_D_DP_BS_CFG, 1);
        sdp_.set(NVDLA_SDP_D_DP_BN_CFG, 1);
        sdp_.set(NVDLA_SDP_D_DP_EW_CFG, 1);
        sdp_.set(NVDLA_SDP_D_CVT_SCALE, 1);
        sdp_.set(NVDLA_SDP_D_FEATURE_MODE_CFG, 1);
        sdp_.set(NVDLA_SDP_D_DST_DMA_CFG, 1);
    }
    void shape(uint32_t w, uint32_t h, uint32_t c) {
        sdp_.set(NVDLA_SDP_D_DATA_CUBE_WIDTH, w - 1);
        sdp_.set(NVDLA_SDP_D_DATA_CUBE_HEIGHT, h - 1);
        sdp_.set(NVDLA_SDP_D_DATA_CUBE_CHANNEL, c - 1);
        rdma_.set(NVDLA_SDP_RDMA_D_DATA_CUBE_WIDTH, w - 1);
        rdma_.set(NVDLA_SDP_RDMA_D_DATA_CUBE_HEIGHT, h - 1);
        rdma_.set(NVDLA_SDP_RDMA_D_DATA_CUBE_CHANNEL, c - 1);
    }
    void execute(const AccumulatorCube* flying, ElementCube* pdp = nullptr, bool rdma = false) {
        unit_.execute(*ctx_, single_.group(), sdp_.group(), rdma ? rdma_.group() : Group(), flying,
                      pdp);
    }

    FlatMemory memory_;
    DeviceStats stats_;
    const HwConfig* cfg_ = nullptr;
    std::unique_ptr<Dma> dma_;
    std::unique_ptr<Context> ctx_;
    Words single_, sdp_, rdma_;
    Sdp unit_;
};

AccumulatorCube cube(uint32_t w, uint32_t h, uint32_t c, Precision p) {
    AccumulatorCube a;
    a.width = w;
    a.height = h;
    a.channels = c;
    a.precision = p;
    a.values.resize(size_t(w) * h * c);
    return a;
}

// CACC's int32 values, truncated by X1 and converted with an offset; the padding lanes of the
// last atom are computed from 0.
TEST_F(SdpUnit, FlyingInt8FromAccumulators) {
    make("nv_small");
    const uint32_t W = 3, H = 2, C = 5;
    shape(W, H, C);
    sdp_.set(NVDLA_SDP_D_DP_BS_CFG, 0x52);  // ALU bypass, MUL bypassed (truncate 6), ReLU bypass
    sdp_.set(NVDLA_SDP_D_DP_BS_MUL_CFG, 6u << 8);
    sdp_.set(NVDLA_SDP_D_CVT_OFFSET, static_cast<uint32_t>(-3));
    sdp_.set(NVDLA_SDP_D_DST_LINE_STRIDE, W * 8);
    sdp_.set(NVDLA_SDP_D_DST_SURFACE_STRIDE, H * W * 8);
    sdp_.set(NVDLA_SDP_D_DST_BASE_ADDR_LOW, kDst);
    uint8_t* dst =
        reinterpret_cast<uint8_t*>(memory_.add_region(MemoryPort::Primary, kDst, H * W * 8));
    AccumulatorCube acc = cube(W, H, C, Precision::Int8);
    for (size_t i = 0; i < acc.values.size(); ++i)
        acc.values[i] = static_cast<int32_t>(i * 1000003 % 20001) - 10000;
    execute(&acc);

    ASSERT_EQ(stats_.programming_errors, 0u) << stats_.last_error;
    for (uint32_t c = 0; c < 8; ++c)
        for (uint32_t h = 0; h < H; ++h)
            for (uint32_t w = 0; w < W; ++w) {
                const int64_t x = c < C ? acc.values[acc.index(0, c, h, w)] : 0;
                EXPECT_EQ(static_cast<int8_t>(dst[h * W * 8 + w * 8 + c]),
                          clamp_bits(round_shift(x, 6) + 3, 8))
                    << c << "," << h << "," << w;
            }
}

// fp16 convolution results arrive as fp32 patterns and leave as fp16.
TEST_F(SdpUnit, FlyingFp16FromAccumulators) {
    make("nv_full");
    const uint32_t W = 2, H = 1, C = 3;
    shape(W, H, C);
    sdp_.set(NVDLA_SDP_D_DATA_FORMAT, 2 | 2 << 2);
    sdp_.set(NVDLA_SDP_D_DST_LINE_STRIDE, W * 32);
    sdp_.set(NVDLA_SDP_D_DST_SURFACE_STRIDE, W * 32);
    sdp_.set(NVDLA_SDP_D_DST_BASE_ADDR_LOW, kDst);
    uint8_t* dst =
        reinterpret_cast<uint8_t*>(memory_.add_region(MemoryPort::Primary, kDst, W * 32));
    AccumulatorCube acc = cube(W, H, C, Precision::Fp16);
    const uint32_t values[] = {0x3fc00000 /* 1.5 */,   0xc1200000 /* -10 */,   0x7f800000 /* inf */,
                               0x33800000 /* 2^-24 */, 0x477fe000 /* 65504 */, 0x00000001};
    for (size_t i = 0; i < 6; ++i) acc.values[i] = static_cast<int32_t>(values[i]);
    execute(&acc);
    ASSERT_EQ(stats_.programming_errors, 0u) << stats_.last_error;
    // (c, w) -> value index c * W + w
    const uint16_t expected[3][2] = {{0x3e00, 0xc900}, {0x7bff, 0x0001}, {0x7bff, 0x0000}};
    for (uint32_t c = 0; c < C; ++c)
        for (uint32_t w = 0; w < W; ++w)
            EXPECT_EQ(get16(dst + w * 32 + c * 2), expected[c][w]) << c << "," << w;
}

// Output to PDP: whole atoms of int8 values, sign-extended; nothing written.
TEST_F(SdpUnit, OutputIntoPdp) {
    make("nv_small");
    const uint32_t W = 2, H = 2, C = 3;
    shape(W, H, C);
    sdp_.set(NVDLA_SDP_D_FEATURE_MODE_CFG, 1 | 2);  // flying, to PDP
    sdp_.set(NVDLA_SDP_D_CVT_SHIFT, 1);
    AccumulatorCube acc = cube(W, H, C, Precision::Int8);
    for (size_t i = 0; i < acc.values.size(); ++i)
        acc.values[i] = static_cast<int32_t>(i * 45) - 250;
    ElementCube out;
    execute(&acc, &out);
    ASSERT_EQ(stats_.programming_errors, 0u) << stats_.last_error;
    // Whole atoms go to PDP: nv_small's 8 int8 lanes, the 5 past C computed from CACC's 0.
    ASSERT_EQ(out.held(), 8u);
    ASSERT_EQ(out.values.size(), size_t(8) * H * W);
    EXPECT_EQ(out.channels, C);
    EXPECT_EQ(out.precision, Precision::Int8);
    for (uint32_t c = 0; c < 8; ++c)
        for (uint32_t h = 0; h < H; ++h)
            for (uint32_t w = 0; w < W; ++w)
                EXPECT_EQ(
                    out.values[out.index(0, c, h, w)],
                    c < C ? clamp_bits(round_shift(acc.values[acc.index(0, c, h, w)], 1), 8) : 0)
                    << c << "," << h << "," << w;
    EXPECT_EQ(stats_.bytes_written, 0u);
}

// nv_full's 32-lane int8 atoms go to PDP's planes through an AVX2 transpose above the scalar
// level (8 columns at a time, the last block overlapping): every width, every level, each value
// where the plain formula puts it.
TEST_F(SdpUnit, OutputIntoPdpAtEveryLevel) {
    const IsaLevel restore = isa_limit_from_environment();
    for (IsaLevel level : {IsaLevel::Scalar, IsaLevel::Avx2, IsaLevel::Avx512}) {
        set_isa_limit(level);
        if (isa_level() != level) continue;  // the CPU does not run it
        for (uint32_t W : {1u, 7u, 8u, 9u, 16u, 28u, 31u}) {
            SCOPED_TRACE(std::string(isa_name(level)) + ", width " + std::to_string(W));
            make("nv_full");
            const uint32_t H = 3, C = 45;
            shape(W, H, C);
            sdp_.set(NVDLA_SDP_D_FEATURE_MODE_CFG, 1 | 2);  // flying, to PDP
            sdp_.set(NVDLA_SDP_D_CVT_SHIFT, 2);
            // Channels last, as CMAC's kernels deliver (the form SDP's vector pass takes).
            AccumulatorCube acc = cube(W, H, C, Precision::Int8);
            acc.values.clear();
            acc.channel_stride = C + 1;
            const size_t count = size_t(W) * H * acc.channel_stride;
            std::shared_ptr<int32_t[]> sums(new int32_t[count]);
            for (size_t i = 0; i < count; ++i)
                sums[i] = static_cast<int32_t>((i * 2654435761u) % 1200) - 600;
            acc.sums = sums;
            ElementCube out;
            execute(&acc, &out);
            ASSERT_EQ(stats_.programming_errors, 0u) << stats_.last_error;
            ASSERT_EQ(out.held(), 64u);
            for (uint32_t c = 0; c < 64; ++c)
                for (uint32_t h = 0; h < H; ++h)
                    for (uint32_t w = 0; w < W; ++w)
                        ASSERT_EQ(out.values[out.index(0, c, h, w)],
                                  c < C ? clamp_bits(round_shift(acc.at(0, c, h, w), 2), 8) : 0)
                            << c << "," << h << "," << w;
        }
    }
    set_isa_limit(restore);
}

// Programming the model cannot execute: an error naming the register, and no memory access.
TEST_F(SdpUnit, BadProgrammingIsAnErrorWithoutMemoryWrites) {
    struct Case {
        const char* config;
        const char* register_named;
        void (*program)(Words& sdp, Words& rdma);
    };
    const Case cases[] = {
        {"nv_full", "PROC_PRECISION", [](Words& s, Words&) { s.set(NVDLA_SDP_D_DATA_FORMAT, 3); }},
        {"nv_small", "D_DATA_FORMAT",
         [](Words& s, Words&) { s.set(NVDLA_SDP_D_DATA_FORMAT, 1 | 1 << 2); }},
        {"nv_full", "OUT_PRECISION", [](Words& s, Words&) { s.set(NVDLA_SDP_D_DATA_FORMAT, 2); }},
        {"nv_small", "BATCH_NUMBER",
         [](Words& s, Words&) { s.set(NVDLA_SDP_D_FEATURE_MODE_CFG, 1 | 3u << 8); }},
        {"nv_full", "BRDMA_DISABLE",
         [](Words& s, Words& r) {
             s.set(NVDLA_SDP_D_DP_BS_CFG, 0x58);
             s.set(NVDLA_SDP_D_DP_BS_ALU_CFG, 1);
             r.set(NVDLA_SDP_RDMA_D_BRDMA_CFG, 1);
             r.set(NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG, 1);
         }},
        {"nv_full", "NRDMA_DATA_USE",
         [](Words& s, Words& r) {
             s.set(NVDLA_SDP_D_DP_BN_CFG, 0x42);
             s.set(NVDLA_SDP_D_DP_BN_MUL_CFG, 1);
             r.set(NVDLA_SDP_RDMA_D_NRDMA_CFG, 0x2);  // ALU only
             r.set(NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG, 1);
         }},
        {"nv_full", "Winograd",
         [](Words& s, Words&) {
             s.set(NVDLA_SDP_D_FEATURE_MODE_CFG, 1 | 4 | 3u << 8);
             s.set(NVDLA_SDP_D_DATA_FORMAT, 4);
         }},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.register_named);
        stats_ = DeviceStats{};
        sdp_ = Words{};
        rdma_ = Words{};
        make(c.config);
        shape(4, 4, 8);
        sdp_.set(NVDLA_SDP_D_DST_BASE_ADDR_LOW, kDst);
        c.program(sdp_, rdma_);
        AccumulatorCube acc = cube(4, 4, 8, Precision::Int8);
        acc.batches = (sdp_.w[NVDLA_SDP_D_FEATURE_MODE_CFG / 4] >> 8 & 31) + 1;
        acc.values.resize(acc.values.size() * acc.batches);
        execute(&acc, nullptr, true);
        EXPECT_EQ(stats_.programming_errors, 1u);
        EXPECT_NE(stats_.last_error.find(c.register_named), std::string::npos) << stats_.last_error;
        EXPECT_EQ(stats_.bytes_written + stats_.bytes_read + stats_.faults, 0u);
    }
}

TEST_F(SdpUnit, CubeFromConvolutionMustMatchTheRegisters) {
    make("nv_small");
    shape(4, 4, 8);
    AccumulatorCube acc = cube(4, 3, 8, Precision::Int8);
    execute(&acc);
    EXPECT_EQ(stats_.programming_errors, 1u);
    EXPECT_NE(stats_.last_error.find("CACC delivers 4x3x8"), std::string::npos)
        << stats_.last_error;
}

// Writing outside memory is a fault the DMA counts; the unit carries on.
TEST_F(SdpUnit, UnbackedOutputIsADmaFault) {
    make("nv_small");
    shape(2, 2, 8);
    sdp_.set(NVDLA_SDP_D_DST_BASE_ADDR_LOW, 0x12340000);
    sdp_.set(NVDLA_SDP_D_DST_LINE_STRIDE, 16);
    sdp_.set(NVDLA_SDP_D_DST_SURFACE_STRIDE, 32);
    AccumulatorCube acc = cube(2, 2, 8, Precision::Int8);
    execute(&acc);
    EXPECT_EQ(stats_.programming_errors, 0u);
    EXPECT_EQ(stats_.faults, 2u);  // one write per line
    EXPECT_TRUE(stats_.first_fault.write);
    EXPECT_EQ(stats_.first_fault.unit, NVDLA_UNIT_SDP);
}

}  // namespace
}  // namespace nvdla::emu::sdp_test
