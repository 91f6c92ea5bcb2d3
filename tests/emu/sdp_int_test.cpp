// SDP on the int pipelines, driven through registers: layouts (strides, padding lanes, 1 x 1
// cubes, int16 <-> int8 conversions), the X stages (ALU shift, MAX/MIN/SUM, MUL truncation,
// PReLU, ReLU), operands from registers and memory, the output convertor and its saturation
// counter. Expected values come from the plain reference arithmetic in the tests.
#include <gtest/gtest.h>

#include <string>

#include <algorithm>
#include <vector>

#include "sdp_test_harness.hpp"

namespace nvdla::emu::sdp_test {
namespace {

constexpr uint64_t kSrc = 0x10000;
constexpr uint64_t kDst = 0x40000;
constexpr uint64_t kOperands = 0x80000;

TEST(SdpInt, PassThroughCopiesEveryLaneAndLeavesStrideGapsAlone) {
    Rig rig("nv_small");  // 8-byte atoms: 11 channels are two surfaces, 5 padding lanes
    const uint32_t W = 3, H = 2, C = 11;
    const uint32_t src_line = 32, src_surface = 96, dst_line = 40, dst_surface = 128;
    uint8_t* src = rig.region(kSrc, 2 * src_surface);
    uint8_t* dst = rig.region(kDst, 2 * dst_surface);
    auto rng = test::rng_for_test();
    for (uint32_t i = 0; i < 2 * src_surface; ++i) src[i] = static_cast<uint8_t>(rng());
    std::fill(dst, dst + 2 * dst_surface, 0xee);

    rig.bypass_all();
    rig.shape(W, H, C);
    rig.source(kSrc, src_line, src_surface);
    rig.destination(kDst, dst_line, dst_surface);
    rig.run();

    EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    std::vector<bool> written(2 * dst_surface, false);
    for (uint32_t s = 0; s < 2; ++s)
        for (uint32_t h = 0; h < H; ++h)
            for (uint32_t w = 0; w < W; ++w)
                for (uint32_t lane = 0; lane < 8; ++lane) {
                    const uint32_t o = s * dst_surface + h * dst_line + w * 8 + lane;
                    EXPECT_EQ(dst[o], src[s * src_surface + h * src_line + w * 8 + lane]);
                    written[o] = true;
                }
    for (uint32_t i = 0; i < 2 * dst_surface; ++i) {
        if (!written[i]) {
            EXPECT_EQ(dst[i], 0xee) << "byte " << i << " is outside the cube";
        }
    }
    // The done interrupt of group 0 was raised and both groups moved on.
    EXPECT_EQ(rig.get("GLB", "S_INTR_STATUS") & 1u, 1u);
    EXPECT_EQ(rig.get("SDP", "S_POINTER") >> 16, 1u);
}

// X1: (x + (op << shift)) * m, truncated by the MUL shift with rounding, then ReLU.
TEST(SdpInt, BiasFromRegisterMultiplyTruncateAndRelu) {
    Rig rig("nv_small");
    const uint32_t W = 16, H = 1, C = 16;
    int8_t* src = reinterpret_cast<int8_t*>(rig.region(kSrc, 2 * W * 8));
    uint8_t* dst = rig.region(kDst, 2 * W * 8);
    for (uint32_t i = 0; i < 2 * W * 8; ++i) src[i] = static_cast<int8_t>(i * 37 - 128);

    rig.bypass_all();
    rig.shape(W, H, C);
    rig.source(kSrc, W * 8, W * 8);
    rig.destination(kDst, W * 8, W * 8);
    rig.sdp("D_DP_BS_CFG", 0x08);              // ALU SUM, MUL, ReLU on
    rig.sdp("D_DP_BS_ALU_CFG", 2u << 8);       // REG operand, shift 2
    rig.sdp("D_DP_BS_ALU_SRC_VALUE", 0xfffd);  // -3 -> -12
    rig.sdp("D_DP_BS_MUL_CFG", 1u << 8);       // REG operand, truncate 1
    rig.sdp("D_DP_BS_MUL_SRC_VALUE", 5);
    rig.run();

    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    for (uint32_t i = 0; i < 2 * W * 8; ++i) {
        const int64_t v = std::max<int64_t>(round_shift((src[i] - 12) * 5, 1), 0);
        EXPECT_EQ(static_cast<int8_t>(dst[i]), clamp_bits(v, 8)) << "element " << i;
    }
}

// PReLU scales negative values and passes the others on without the MUL shift; a bypassed
// MUL still applies its shift; MAX and MIN take the shifted operand, which saturates to 32 bits.
TEST(SdpInt, PreluMulBypassTruncationAndAluLimits) {
    Rig rig("nv_small");
    const uint32_t W = 32, C = 8;
    int8_t* src = reinterpret_cast<int8_t*>(rig.region(kSrc, W * 8));
    uint8_t* dst = rig.region(kDst, W * 8);
    for (uint32_t i = 0; i < W * 8; ++i) src[i] = static_cast<int8_t>(i);  // -128..127

    rig.bypass_all();
    rig.shape(W, 1, C);
    rig.source(kSrc, W * 8, W * 8);
    rig.destination(kDst, W * 8, W * 8);
    // X1: ALU bypass, PReLU with 3 >> 4, ReLU bypass.
    rig.sdp("D_DP_BS_CFG", 0x62);
    rig.sdp("D_DP_BS_MUL_CFG", 4u << 8);
    rig.sdp("D_DP_BS_MUL_SRC_VALUE", 3);
    // X2: ALU MAX with -1 << 3 = -8, MUL bypassed but shift 1 applies, ReLU bypass.
    rig.sdp("D_DP_BN_CFG", 0x50);
    rig.sdp("D_DP_BN_ALU_CFG", 3u << 8);
    rig.sdp("D_DP_BN_ALU_SRC_VALUE", 0xffff);
    rig.sdp("D_DP_BN_MUL_CFG", 1u << 8);
    rig.run();

    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    for (uint32_t i = 0; i < W * 8; ++i) {
        const int64_t x = src[i];
        const int64_t x1 = x >= 0 ? x : round_shift(x * 3, 4);
        const int64_t x2 = round_shift(std::max<int64_t>(x1, -8), 1);
        EXPECT_EQ(static_cast<int8_t>(dst[i]), x2) << "x = " << x;
    }
}

TEST(SdpInt, MinAgainstASaturatedOperandPassesTheInput) {
    Rig rig("nv_small");
    const uint32_t W = 32;
    int8_t* src = reinterpret_cast<int8_t*>(rig.region(kSrc, W * 8));
    uint8_t* dst = rig.region(kDst, W * 8);
    for (uint32_t i = 0; i < W * 8; ++i) src[i] = static_cast<int8_t>(i);
    rig.bypass_all();
    rig.shape(W, 1, 8);
    rig.source(kSrc, W * 8, W * 8);
    rig.destination(kDst, W * 8, W * 8);
    // MIN against 0x7fff << 40, which saturates to INT32_MAX; then MAX against -32768 << 63.
    rig.sdp("D_DP_BS_CFG", 0x54);  // ALU MIN, MUL bypass, ReLU bypass
    rig.sdp("D_DP_BS_ALU_CFG", 40u << 8);
    rig.sdp("D_DP_BS_ALU_SRC_VALUE", 0x7fff);
    rig.sdp("D_DP_BN_CFG", 0x50);  // ALU MAX
    rig.sdp("D_DP_BN_ALU_CFG", 63u << 8);
    rig.sdp("D_DP_BN_ALU_SRC_VALUE", 0x8000);
    rig.run();
    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    for (uint32_t i = 0; i < W * 8; ++i) EXPECT_EQ(static_cast<int8_t>(dst[i]), src[i]);
}

// Per-element operands (one byte, ALU) with their own strides.
TEST(SdpInt, PerElementBiasFromMemory) {
    Rig rig("nv_small");
    const uint32_t W = 5, H = 3, C = 12;
    const uint32_t op_line = 48, op_surface = 160;
    int8_t* src = reinterpret_cast<int8_t*>(rig.region(kSrc, 2 * H * W * 8));
    int8_t* ops = reinterpret_cast<int8_t*>(rig.region(kOperands, 2 * op_surface));
    uint8_t* dst = rig.region(kDst, 2 * H * W * 8);
    auto rng = test::rng_for_test();
    for (uint32_t i = 0; i < 2 * H * W * 8; ++i) src[i] = static_cast<int8_t>(rng());
    for (uint32_t i = 0; i < 2 * op_surface; ++i) ops[i] = static_cast<int8_t>(rng());

    rig.bypass_all();
    rig.shape(W, H, C);
    rig.source(kSrc, W * 8, H * W * 8);
    rig.destination(kDst, W * 8, H * W * 8);
    rig.sdp("D_DP_BS_CFG", 0x58);   // ALU SUM, MUL bypass, ReLU bypass
    rig.sdp("D_DP_BS_ALU_CFG", 1);  // MEM
    rig.rdma("D_BRDMA_CFG", 0x32);  // enabled, ALU, one byte, per element, MC
    rig.rdma("D_BS_BASE_ADDR_LOW", kOperands);
    rig.rdma("D_BS_LINE_STRIDE", op_line);
    rig.rdma("D_BS_SURFACE_STRIDE", op_surface);
    rig.run();

    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    for (uint32_t c = 0; c < 16; ++c)
        for (uint32_t h = 0; h < H; ++h)
            for (uint32_t w = 0; w < W; ++w) {
                const uint64_t o = cube_offset(8, 1, W * 8, H * W * 8, c, h, w);
                const int64_t op = ops[cube_offset(8, 1, op_line, op_surface, c, h, w)];
                EXPECT_EQ(static_cast<int8_t>(dst[o]), clamp_bits(src[o] + op, 8))
                    << c << "," << h << "," << w;
            }
}

// nv_full int16: per-channel batch-norm operands (ALU and MUL, two bytes each, interleaved),
// then the output convertor with an offset, a scale, a shift and the saturation counter.
TEST(SdpInt, NvFullInt16PerChannelBatchNormAndConvertor) {
    Rig rig("nv_full");
    const uint32_t W = 2, H = 2, C = 20;  // 16 lanes per atom: two surfaces
    const uint32_t line = W * 32, surface = H * line;
    uint8_t* src = rig.region(kSrc, 2 * surface);
    uint8_t* ops = rig.region(kOperands, 32 * 4);
    uint8_t* dst = rig.region(kDst, 2 * surface);
    auto rng = test::rng_for_test();
    std::vector<int16_t> x(2 * surface / 2), alu(32), mul(32);
    for (size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<int16_t>(rng());
        put16(src + 2 * i, static_cast<uint16_t>(x[i]));
    }
    for (uint32_t c = 0; c < 32; ++c) {
        alu[c] = static_cast<int16_t>(rng());
        mul[c] = static_cast<int16_t>(static_cast<int16_t>(rng()) >> (c % 8));
        put16(ops + 4 * c, static_cast<uint16_t>(alu[c]));
        put16(ops + 4 * c + 2, static_cast<uint16_t>(mul[c]));
    }

    rig.bypass_all();
    rig.shape(W, H, C);
    rig.precisions(1, 1, 1);
    rig.source(kSrc, line, surface);
    rig.destination(kDst, line, surface);
    rig.sdp("D_DP_BN_CFG", 0x48);             // ALU SUM, MUL, ReLU bypass
    rig.sdp("D_DP_BN_ALU_CFG", 1);            // MEM, no shift
    rig.sdp("D_DP_BN_MUL_CFG", 1 | 3u << 8);  // MEM, truncate 3
    rig.rdma("D_NRDMA_CFG", 0x2c);            // enabled, BOTH, two bytes, per kernel, MC
    rig.rdma("D_BN_BASE_ADDR_LOW", kOperands);
    rig.sdp("D_CVT_OFFSET", static_cast<uint32_t>(-7));
    rig.sdp("D_CVT_SCALE", 3);
    rig.sdp("D_CVT_SHIFT", 2);
    rig.sdp("D_PERF_ENABLE", 0x4);  // PERF_SAT_EN
    rig.run();

    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    uint32_t saturated = 0;
    for (uint32_t c = 0; c < 32; ++c)
        for (uint32_t h = 0; h < H; ++h)
            for (uint32_t w = 0; w < W; ++w) {
                const uint64_t o = cube_offset(32, 2, line, surface, c, h, w);
                const int64_t v =
                    clamp_bits(round_shift((int64_t(x[o / 2]) + alu[c]) * mul[c], 3), 32);
                const int64_t converted = round_shift((v + 7) * 3, 2);
                // The counter counts the 17-bit convertor saturating; the values are far from
                // its edge here, so an exact comparison is the C model's flag too.
                ASSERT_TRUE(std::abs(converted) < 65500 || std::abs(converted) > 65600);
                saturated += std::abs(converted) > 65536;
                EXPECT_EQ(static_cast<int16_t>(get16(dst + o)), clamp_bits(converted, 16))
                    << c << "," << h << "," << w;
            }
    EXPECT_GT(saturated, 0u);
    // Written into the group that ran (software's producer group is still 0).
    EXPECT_EQ(rig.get("SDP", "D_PERF_OUT_SATURATION"), saturated);
}

// The saturation counter counts the 17-bit convertor, not the int8 narrowing after it, and is
// 0 when PERF_SAT_EN is off.
TEST(SdpInt, SaturationCounterCountsTheSeventeenBitConvertorOnly) {
    Rig rig("nv_small");
    const uint32_t W = 32;
    int8_t* src = reinterpret_cast<int8_t*>(rig.region(kSrc, W * 8));
    uint8_t* dst = rig.region(kDst, W * 8);
    for (uint32_t i = 0; i < W * 8; ++i) src[i] = static_cast<int8_t>(i);

    rig.bypass_all();
    rig.shape(W, 1, 8);
    rig.source(kSrc, W * 8, W * 8);
    rig.destination(kDst, W * 8, W * 8);
    rig.sdp("D_PERF_ENABLE", 0x4);
    rig.sdp("D_CVT_OFFSET", 10);
    rig.sdp("D_CVT_SCALE", 300);
    rig.sdp("D_CVT_SHIFT", 2);
    rig.run();
    uint32_t narrowed = 0;
    for (uint32_t i = 0; i < W * 8; ++i) {
        const int64_t v = round_shift((int64_t(src[i]) - 10) * 300, 2);
        narrowed += v != clamp_bits(v, 8);
        EXPECT_EQ(static_cast<int8_t>(dst[i]), clamp_bits(v, 8));
    }
    EXPECT_GT(narrowed, 100u);
    EXPECT_EQ(rig.get("SDP", "D_PERF_OUT_SATURATION"), 0u);

    // Group 1, scale 32767 and shift 0: |x - 10| >= 3 overflows 17 bits.
    rig.group(1);
    rig.bypass_all();
    rig.shape(W, 1, 8);
    rig.source(kSrc, W * 8, W * 8);
    rig.destination(kDst, W * 8, W * 8);
    rig.sdp("D_PERF_ENABLE", 0x4);
    rig.sdp("D_CVT_OFFSET", 10);
    rig.sdp("D_CVT_SCALE", 32767);
    rig.run();
    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    uint32_t expected = 0;
    for (uint32_t i = 0; i < W * 8; ++i) expected += std::abs(src[i] - 10) >= 3;
    EXPECT_EQ(rig.get("SDP", "D_PERF_OUT_SATURATION"), expected);

    // Group 1 again with counting off: the register reads 0 after the operation.
    rig.group(0);
    rig.run();  // group 0 as before
    rig.group(1);
    rig.sdp("D_PERF_ENABLE", 0);
    rig.run();
    EXPECT_EQ(rig.stats().operations, 4u);
    EXPECT_EQ(rig.get("SDP", "D_PERF_OUT_SATURATION"), 0u);
}

// A 1 x 1 cube is read and written as one run of atoms; other surface strides are refused, as
// the C model asserts on them (docs/emu/sdp.md, "DMA rules").
TEST(SdpInt, OneByOneCubeIsPacked) {
    {
        Rig rig("nv_small");
        rig.region(kSrc, 256);
        rig.region(kDst, 256);
        rig.bypass_all();
        rig.shape(1, 1, 20);
        rig.source(kSrc, 64, 64);
        rig.destination(kDst, 64, 64);
        rig.run();
        EXPECT_EQ(rig.stats().programming_errors, 1u);
        EXPECT_NE(rig.stats().last_error.find("D_SRC_SURFACE_STRIDE is 64"), std::string::npos)
            << rig.stats().last_error;
        EXPECT_EQ(rig.stats().bytes_written, 0u);
    }
    Rig rig("nv_small");
    const uint32_t C = 20;  // three atoms
    uint8_t* src = rig.region(kSrc, 256);
    uint8_t* dst = rig.region(kDst, 256);
    for (uint32_t i = 0; i < 256; ++i) src[i] = static_cast<uint8_t>(i + 1);
    std::fill(dst, dst + 256, 0xee);

    rig.bypass_all();
    rig.shape(1, 1, C);
    rig.source(kSrc, 8, 8);
    rig.destination(kDst, 8, 8);
    rig.run();

    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    for (uint32_t i = 0; i < 24; ++i) EXPECT_EQ(dst[i], src[i]);
    for (uint32_t i = 24; i < 256; ++i) EXPECT_EQ(dst[i], 0xee);
}

// nv_full, int16 data processed as int8: two int16 surfaces make one int8 group (the second
// one read even when it only holds padding lanes), written as 32-lane int8 atoms.
TEST(SdpInt, NvFullInt16InputProcessedAsInt8) {
    Rig rig("nv_full");
    const uint32_t W = 2, C = 40;  // int16: 3 surfaces of 16, read as 4; int8 output: 2 of 32
    const uint32_t in_line = W * 32, in_surface = in_line, out_line = W * 32, out_surface = 128;
    uint8_t* src = rig.region(kSrc, 4 * in_surface);
    uint8_t* dst = rig.region(kDst, 2 * out_surface);
    auto rng = test::rng_for_test();
    for (uint32_t i = 0; i < 4 * in_surface; ++i) src[i] = static_cast<uint8_t>(rng());

    rig.bypass_all();
    rig.shape(W, 1, C);
    rig.precisions(1, 0, 0);
    rig.source(kSrc, in_line, in_surface);
    rig.destination(kDst, out_line, out_surface);
    rig.sdp("D_CVT_SHIFT", 4);
    rig.run();

    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    for (uint32_t c = 0; c < 64; ++c)
        for (uint32_t w = 0; w < W; ++w) {
            const auto x =
                static_cast<int16_t>(get16(src + cube_offset(32, 2, in_line, in_surface, c, 0, w)));
            const uint8_t y = dst[cube_offset(32, 1, out_line, out_surface, c, 0, w)];
            EXPECT_EQ(static_cast<int8_t>(y), clamp_bits(round_shift(x, 4), 8)) << c << "," << w;
        }
}

// nv_full, int8 processing written as int16: each 32-lane group becomes two int16 surfaces.
TEST(SdpInt, NvFullInt8ProcessingWrittenAsInt16) {
    Rig rig("nv_full");
    const uint32_t W = 3, H = 2, C = 20;
    const uint32_t line = W * 32, surface = H * line;
    int8_t* src = reinterpret_cast<int8_t*>(rig.region(kSrc, surface));
    uint8_t* dst = rig.region(kDst, 2 * surface);
    for (uint32_t i = 0; i < surface; ++i) src[i] = static_cast<int8_t>(i * 7);

    rig.bypass_all();
    rig.shape(W, H, C);
    rig.precisions(0, 0, 1);
    rig.source(kSrc, line, surface);
    rig.destination(kDst, line, surface);
    rig.sdp("D_CVT_SCALE", 300);
    rig.run();

    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    for (uint32_t c = 0; c < 32; ++c)
        for (uint32_t h = 0; h < H; ++h)
            for (uint32_t w = 0; w < W; ++w) {
                const int8_t x = src[cube_offset(32, 1, line, surface, c, h, w)];
                const auto y =
                    static_cast<int16_t>(get16(dst + cube_offset(32, 2, line, surface, c, h, w)));
                EXPECT_EQ(y, clamp_bits(x * 300, 16)) << c << "," << h << "," << w;
            }
}

// Offline batches: every batch reads the same input (SDP_RDMA has no source batch stride) and
// is written at its DST_BATCH_STRIDE.
TEST(SdpInt, NvFullBatchesReuseTheInputAndFollowTheBatchStride) {
    Rig rig("nv_full");
    const uint32_t W = 2, C = 32, batches = 3, batch_stride = 0x100;
    int8_t* src = reinterpret_cast<int8_t*>(rig.region(kSrc, W * 32));
    uint8_t* dst = rig.region(kDst, batches * batch_stride);
    for (uint32_t i = 0; i < W * 32; ++i) src[i] = static_cast<int8_t>(i * 3 - 90);
    std::fill(dst, dst + batches * batch_stride, 0xee);
    rig.bypass_all();
    rig.shape(W, 1, C);
    rig.source(kSrc, W * 32, W * 32);
    rig.destination(kDst, W * 32, W * 32);
    rig.sdp("D_FEATURE_MODE_CFG", (batches - 1) << 8);
    rig.rdma("D_FEATURE_MODE_CFG", (batches - 1) << 8);
    rig.sdp("D_DST_BATCH_STRIDE", batch_stride);
    rig.sdp("D_DP_BS_CFG", 0x58);  // ALU SUM (reg 1), MUL bypass, ReLU bypass
    rig.sdp("D_DP_BS_ALU_SRC_VALUE", 1);
    rig.run();
    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    EXPECT_EQ(rig.stats().faults, 0u) << rig.stats().last_error;
    EXPECT_EQ(rig.stats().operations, 1u);
    EXPECT_EQ(rig.stats().bytes_read, batches * W * 32);
    EXPECT_EQ(rig.stats().bytes_written, batches * W * 32);
    for (uint32_t b = 0; b < batches; ++b)
        for (uint32_t i = 0; i < batch_stride; ++i) {
            const uint8_t got = dst[b * batch_stride + i];
            if (i < W * 32)
                EXPECT_EQ(static_cast<int8_t>(got), clamp_bits(src[i] + 1, 8)) << b << "," << i;
            else
                EXPECT_EQ(got, 0xee) << b << "," << i;
        }
}

// The atom sizes of the nv_small family's other members (16 and 32 bytes with int8).
TEST(SdpInt, OtherAtomSizes) {
    for (const char* config : {"nv_medium_512", "nv_large", "nv_small_256"}) {
        SCOPED_TRACE(config);
        Rig rig(config);
        const uint32_t atom = rig.cfg().atom_bytes, W = 3, H = 2, C = atom + 3;
        const uint32_t line = W * atom, surface = H * line;
        int8_t* src = reinterpret_cast<int8_t*>(rig.region(kSrc, 2 * surface));
        uint8_t* dst = rig.region(kDst, 2 * surface);
        for (uint32_t i = 0; i < 2 * surface; ++i) src[i] = static_cast<int8_t>(i * 11);
        rig.bypass_all();
        rig.shape(W, H, C);
        rig.source(kSrc, line, surface);
        rig.destination(kDst, line, surface);
        rig.sdp("D_DP_BN_CFG", 0x62);  // PReLU x 3 >> 1 on negatives
        rig.sdp("D_DP_BN_MUL_CFG", 1u << 8);
        rig.sdp("D_DP_BN_MUL_SRC_VALUE", 3);
        rig.run();
        ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
        for (uint32_t i = 0; i < 2 * surface; ++i) {
            const int64_t x = src[i];
            EXPECT_EQ(static_cast<int8_t>(dst[i]),
                      clamp_bits(x >= 0 ? x : round_shift(x * 3, 1), 8))
                << i;
        }
    }
}

// nv_small's RTL leaves the Y stage out, but the C model and the nv_small traces compute it
// when it is programmed; so does the model.
// nv_small is built without the element-wise stage: its RTL ignores a programmed Y stage
// (NV_NVDLA_SDP_core.v cfg_ew_en). nv_small_256_full has it, with the same atom.
TEST(SdpInt, ElementWiseStageRunsOnlyWhereTheConfigurationHasIt) {
    for (const char* config : {"nv_small", "nv_small_256_full"}) {
        Rig rig(config);
        int8_t* src = reinterpret_cast<int8_t*>(rig.region(kSrc, 64));
        uint8_t* dst = rig.region(kDst, 64);
        for (uint32_t i = 0; i < 64; ++i) src[i] = static_cast<int8_t>(3 * i);
        rig.bypass_all();
        rig.shape(8, 1, 8);
        rig.source(kSrc, 64, 64);
        rig.destination(kDst, 64, 64);
        rig.sdp("D_DP_EW_CFG", 0x58);  // ALU SUM with a register operand, MUL and LUT bypassed
        rig.sdp("D_DP_EW_ALU_CFG", 0);
        rig.sdp("D_DP_EW_ALU_SRC_VALUE", 100);
        rig.run();
        ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
        const bool has_ew = std::string(config) != "nv_small";
        for (uint32_t i = 0; i < 64; ++i)
            EXPECT_EQ(static_cast<int8_t>(dst[i]), has_ew ? clamp_bits(src[i] + 100, 8) : src[i])
                << config << " element " << i;
    }
}

}  // namespace
}  // namespace nvdla::emu::sdp_test
