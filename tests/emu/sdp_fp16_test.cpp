// SDP on nv_full's fp16 pipeline: special values (NaN, infinity, denormals, -0) through the
// datapath, the NaN/Inf input counters of SDP_RDMA, the NaN output and saturation counters,
// NAN_TO_ZERO, X-stage arithmetic, PReLU, fp16 -> int16 output, and an fp16 LUT. Ordinary
// values are checked against IEEE fp16 (nvdla/precision/fp16.hpp), special ones by pattern.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nvdla/precision/fp16.hpp"
#include "sdp_test_harness.hpp"

namespace nvdla::emu::sdp_test {
namespace {

constexpr uint64_t kSrc = 0x10000;
constexpr uint64_t kDst = 0x40000;
constexpr uint64_t kOperands = 0x80000;

uint16_t h(float f) {
    return fp16::from_float(f);
}

// One line of fp16 values (W x 16 lanes, one surface) through SDP with the given setup.
class Fp16Line {
  public:
    explicit Fp16Line(std::vector<uint16_t> in) : in_(std::move(in)), rig_("nv_full") {
        width_ = static_cast<uint32_t>((in_.size() + 15) / 16);
        in_.resize(size_t(width_) * 16, 0);
        uint8_t* src = rig_.region(kSrc, width_ * 32);
        for (size_t i = 0; i < in_.size(); ++i) put16(src + 2 * i, in_[i]);
        dst_ = rig_.region(kDst, width_ * 32);
        rig_.bypass_all();
        rig_.shape(width_, 1, 16);
        rig_.precisions(2, 2, 2);
        rig_.source(kSrc, width_ * 32, width_ * 32);
        rig_.destination(kDst, width_ * 32, width_ * 32);
    }
    Rig& rig() { return rig_; }
    std::vector<uint16_t> run() {
        rig_.run();
        EXPECT_EQ(rig_.stats().programming_errors, 0u) << rig_.stats().last_error;
        std::vector<uint16_t> out(in_.size());
        for (size_t i = 0; i < out.size(); ++i) out[i] = get16(dst_ + 2 * i);
        return out;
    }
    const std::vector<uint16_t>& in() const { return in_; }

  private:
    std::vector<uint16_t> in_;
    Rig rig_;
    uint32_t width_ = 1;
    uint8_t* dst_ = nullptr;
};

TEST(SdpFp16, SpecialValuesThroughABypassedDatapathAndTheirCounters) {
    // denormals, -0, +-Inf, NaNs (quiet, signalling, negative), the largest finite value
    const std::vector<uint16_t> in = {0x0001, 0x03ff, 0x8000, 0x3c00, 0x7c00, 0xfc00,
                                      0x7e00, 0x7c01, 0xfe00, 0x7bff, 0x0400, 0xc000};
    Fp16Line line(in);
    line.rig().sdp("D_PERF_ENABLE", 0xc);   // PERF_SAT_EN, PERF_NAN_INF_COUNT_EN
    line.rig().rdma("D_PERF_ENABLE", 0x2);  // PERF_NAN_INF_COUNT_EN
    const std::vector<uint16_t> out = line.run();
    // Denormals and -0 survive fp16 -> fp32 -> fp16; infinity saturates to the largest finite
    // value; a NaN keeps its low mantissa bits.
    const std::vector<uint16_t> expected = {0x0001, 0x03ff, 0x8000, 0x3c00, 0x7bff, 0xfbff,
                                            0x7e00, 0x7c01, 0xfe00, 0x7bff, 0x0400, 0xc000};
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(out[i], expected[i]) << "lane " << i;
    Rig& rig = line.rig();
    EXPECT_EQ(rig.get("SDP_RDMA", "D_STATUS_NAN_INPUT_NUM"), 3u);
    EXPECT_EQ(rig.get("SDP_RDMA", "D_STATUS_INF_INPUT_NUM"), 2u);
    EXPECT_EQ(rig.get("SDP", "D_STATUS_NAN_INPUT_NUM"), 0u);  // SDP's own are tied to 0
    EXPECT_EQ(rig.get("SDP", "D_STATUS_NAN_OUTPUT_NUM"), 3u);
    EXPECT_EQ(rig.get("SDP", "D_PERF_OUT_SATURATION"), 3u);  // +-0x7bff outputs
}

TEST(SdpFp16, CountersStayZeroWhenNotEnabled) {
    Fp16Line line({0x7c00, 0x7e00, 0xfc00});
    line.run();
    Rig& rig = line.rig();
    EXPECT_EQ(rig.get("SDP_RDMA", "D_STATUS_NAN_INPUT_NUM"), 0u);
    EXPECT_EQ(rig.get("SDP_RDMA", "D_STATUS_INF_INPUT_NUM"), 0u);
    EXPECT_EQ(rig.get("SDP", "D_STATUS_NAN_OUTPUT_NUM"), 0u);
    EXPECT_EQ(rig.get("SDP", "D_PERF_OUT_SATURATION"), 0u);
}

TEST(SdpFp16, NanToZeroFlushesInputsAndOperands) {
    const std::vector<uint16_t> in = {0x7e00, 0xfc01, h(1.5f), h(-2.0f)};
    {
        Fp16Line line(in);
        line.rig().sdp("D_FEATURE_MODE_CFG", 0x8);        // NAN_TO_ZERO
        line.rig().sdp("D_DP_BS_CFG", 0x58);              // ALU SUM, MUL and ReLU bypassed
        line.rig().sdp("D_DP_BS_ALU_SRC_VALUE", 0x7e00);  // a NaN operand: flushed to +0
        const auto out = line.run();
        EXPECT_EQ(out[0], 0x0000);
        EXPECT_EQ(out[1], 0x0000);
        EXPECT_EQ(out[2], h(1.5f));
        EXPECT_EQ(out[3], h(-2.0f));
    }
    {
        Fp16Line line(in);  // without the flush a NaN operand is the result
        line.rig().sdp("D_DP_BS_CFG", 0x58);
        line.rig().sdp("D_DP_BS_ALU_SRC_VALUE", 0x7e00);
        const auto out = line.run();
        EXPECT_EQ(out[0], 0x7e00);  // the input NaN comes first
        EXPECT_EQ(out[2], 0x7e00);
        EXPECT_EQ(out[3], 0x7e00);
    }
}

// X1: (x + 0.5) * 2 then ReLU; X2: MIN with 3.0. Values are exact in fp16 and fp32.
TEST(SdpFp16, XStageArithmetic) {
    std::vector<uint16_t> in;
    for (int k = -20; k <= 20; ++k) in.push_back(h(k / 4.0f));
    Fp16Line line(in);
    Rig& rig = line.rig();
    rig.sdp("D_DP_BS_CFG", 0x08);         // ALU SUM, MUL, ReLU
    rig.sdp("D_DP_BS_ALU_CFG", 5u << 8);  // the fp16 ALU ignores the shift
    rig.sdp("D_DP_BS_ALU_SRC_VALUE", h(0.5f));
    rig.sdp("D_DP_BS_MUL_CFG", 7u << 8);  // and the MUL the truncation
    rig.sdp("D_DP_BS_MUL_SRC_VALUE", h(2.0f));
    rig.sdp("D_DP_BN_CFG", 0x54);  // ALU MIN, MUL and ReLU bypassed
    rig.sdp("D_DP_BN_ALU_SRC_VALUE", h(3.0f));
    const auto out = line.run();
    for (int k = -20; k <= 20; ++k) {
        const float x = k / 4.0f;
        const float y = std::min(std::max((x + 0.5f) * 2.0f, 0.0f), 3.0f);
        EXPECT_EQ(out[size_t(k + 20)], h(y)) << "x = " << x;
    }
}

TEST(SdpFp16, PreluScalesNegativesOnly) {
    std::vector<uint16_t> in;
    for (int k = -8; k <= 8; ++k) in.push_back(h(k * 0.75f));
    Fp16Line line(in);
    line.rig().sdp("D_DP_BS_CFG", 0x62);  // ALU bypass, PReLU, ReLU bypass
    line.rig().sdp("D_DP_BS_MUL_SRC_VALUE", h(0.25f));
    const auto out = line.run();
    for (int k = -8; k <= 8; ++k) {
        const float x = k * 0.75f;
        EXPECT_EQ(out[size_t(k + 8)], h(x < 0 ? x * 0.25f : x)) << "x = " << x;
    }
}

TEST(SdpFp16, OverflowSaturatesAndIsCounted) {
    Fp16Line line({h(60000.0f), h(-60000.0f), h(30000.0f), h(1.0f)});
    line.rig().sdp("D_PERF_ENABLE", 0x4);
    line.rig().sdp("D_DP_BS_CFG", 0x42);  // MUL only
    line.rig().sdp("D_DP_BS_MUL_SRC_VALUE", h(2.0f));
    const auto out = line.run();
    EXPECT_EQ(out[0], 0x7bff);
    EXPECT_EQ(out[1], 0xfbff);
    EXPECT_EQ(out[2], h(60000.0f));
    EXPECT_EQ(out[3], h(2.0f));
    EXPECT_EQ(line.rig().get("SDP", "D_PERF_OUT_SATURATION"), 2u);
}

// fp16 processing written as int16: rounding half away from zero, saturation, NaN -> -32768;
// none of it counts as a saturation.
TEST(SdpFp16, Int16OutputRoundsHalfAwayAndSaturates) {
    const std::vector<uint16_t> in = {h(2.5f),     h(-2.5f),     h(0.5f), h(1.25f),
                                      h(40000.0f), h(-40000.0f), 0x7e00,  0x7c00};
    Fp16Line line(in);
    line.rig().precisions(2, 2, 1);
    line.rig().sdp("D_PERF_ENABLE", 0x4);
    const auto out = line.run();
    const std::vector<int16_t> expected = {3, -3, 1, 1, 32767, -32768, -32768, 32767};
    for (size_t i = 0; i < expected.size(); ++i)
        EXPECT_EQ(static_cast<int16_t>(out[i]), expected[i]) << "lane " << i;
    EXPECT_EQ(line.rig().get("SDP", "D_PERF_OUT_SATURATION"), 0u);
}

// Y on fp16: a per-element fp16 MUL operand (NaN-flushed and widened; the convertor's
// parameters do not apply), a 32-bit fp32 register ALU operand, then a linear LO table.
TEST(SdpFp16, ElementWiseAndLut) {
    std::vector<uint16_t> in;
    for (int k = -6; k <= 9; ++k) in.push_back(h(k * 0.125f));  // one atom of 16
    Fp16Line line(in);
    Rig& rig = line.rig();
    uint8_t* ops = rig.region(kOperands, 32);
    for (int i = 0; i < 16; ++i) put16(ops + 2 * i, h(2.0f));
    rig.sdp("D_DP_EW_CFG", 0x08);   // MUL, ALU SUM, LUT
    rig.sdp("D_DP_EW_MUL_CFG", 1);  // MEM, convertor on (ignored on fp16)
    rig.sdp("D_DP_EW_MUL_CVT_SCALE_VALUE", 77);
    rig.sdp("D_DP_EW_ALU_CFG", 0);                 // REG
    rig.sdp("D_DP_EW_ALU_SRC_VALUE", 0x3f800000);  // 1.0f
    rig.rdma("D_ERDMA_CFG", 0x38);                 // enabled, MUL, two bytes, per element, MC
    rig.rdma("D_EW_BASE_ADDR_LOW", kOperands);
    rig.rdma("D_EW_LINE_STRIDE", 32);
    rig.rdma("D_EW_SURFACE_STRIDE", 32);
    // LO linear from 0.0 in steps of 1.0 holding 0, 1, 2, ...: the identity on [0, 256);
    // below 0 both tables underflow and LO (UFLOW_PRIORITY) extrapolates with slope 0.5.
    std::vector<int16_t> lo(257);
    for (int i = 0; i < 257; ++i) lo[size_t(i)] = static_cast<int16_t>(h(float(i)));
    rig.write_lut(true, lo);
    rig.write_lut(false, std::vector<int16_t>(65, 0));
    rig.sdp("S_LUT_CFG", 0x10);  // LE exponent, UFLOW LO, OFLOW LE, HYBRID LE
    rig.sdp("S_LUT_INFO", 0);
    rig.sdp("S_LUT_LE_START", 0x4e6e6b28);  // 1e9: LE never hits
    rig.sdp("S_LUT_LO_START", 0);
    rig.sdp("S_LUT_LO_END", 0x43800000);  // 256.0
    rig.sdp("S_LUT_LO_SLOPE_SCALE", h(0.5f));
    rig.sdp("D_PERF_ENABLE", 0x2);
    const auto out = line.run();
    uint32_t lo_hits = 0, underflows = 0;
    for (int k = -6; k <= 9; ++k) {
        const float y = k * 0.125f * 2.0f + 1.0f;  // -0.5 .. 3.25
        const float expected = y > 0 ? y : y * 0.5f;
        lo_hits += y > 0;
        underflows += y <= 0;
        EXPECT_EQ(out[size_t(k + 6)], h(expected)) << "y = " << y;
    }
    EXPECT_EQ(rig.get("SDP", "D_PERF_LUT_LO_HIT"), lo_hits);
    EXPECT_EQ(rig.get("SDP", "D_PERF_LUT_UFLOW"), underflows);
    EXPECT_EQ(rig.get("SDP", "D_PERF_LUT_HYBRID"), lo_hits);
    EXPECT_EQ(rig.get("SDP", "D_PERF_LUT_LE_HIT"), 0u);
}

}  // namespace
}  // namespace nvdla::emu::sdp_test
