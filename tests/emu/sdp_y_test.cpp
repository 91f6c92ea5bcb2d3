// SDP Y on the int pipelines: the operand convertors, MUL before ALU, EQL mode, and the LUT
// (programming and reading it back through S_LUT_ACCESS_*, linear and exponent tables,
// under/overflow extrapolation, the priorities and the D_PERF_LUT_* counters).
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <string>
#include <vector>

#include "isa_levels.hpp"
#include "sdp_test_harness.hpp"

namespace nvdla::emu::sdp_test {
namespace {

constexpr uint64_t kSrc = 0x10000;
constexpr uint64_t kDst = 0x40000;
constexpr uint64_t kOperands = 0x80000;

// (y0 * (2^bits - f) + y1 * f) / 2^bits rounded half away from zero.
int64_t interpolate(int64_t y0, int64_t y1, int64_t f, unsigned bits) {
    return round_shift(y0 * ((int64_t(1) << bits) - f) + y1 * f, bits);
}

TEST(SdpLut, TablesAreWrittenAndReadBackWithAutoIncrement) {
    Rig rig("nv_full");
    std::vector<int16_t> le(65), lo(257);
    for (int i = 0; i < 65; ++i) le[size_t(i)] = static_cast<int16_t>(i * 3 - 7);
    for (int i = 0; i < 257; ++i) lo[size_t(i)] = static_cast<int16_t>(i * 131 - 20000);
    rig.write_lut(false, le);
    rig.write_lut(true, lo);

    rig.sdp("S_LUT_ACCESS_CFG", 0);  // READ, LE, address 0
    for (int i = 0; i < 65; ++i)
        EXPECT_EQ(rig.get("SDP", "S_LUT_ACCESS_DATA"), uint16_t(le[size_t(i)]));
    EXPECT_EQ(rig.get("SDP", "S_LUT_ACCESS_DATA"), 0u);  // address 65: past the LE table
    rig.sdp("S_LUT_ACCESS_CFG", (1u << 16) | 250);       // READ, LO, address 250
    EXPECT_EQ(rig.get("SDP", "S_LUT_ACCESS_CFG"), (1u << 16) | 250);  // reads back as written
    for (int i = 250; i < 257; ++i)
        EXPECT_EQ(rig.get("SDP", "S_LUT_ACCESS_DATA"), uint16_t(lo[size_t(i)]));

    // A data write under a READ access type changes nothing, but moves the address on.
    rig.sdp("S_LUT_ACCESS_CFG", 3);
    rig.sdp("S_LUT_ACCESS_DATA", 0x1234);
    EXPECT_EQ(rig.get("SDP", "S_LUT_ACCESS_DATA"), uint16_t(le[4]));
    rig.sdp("S_LUT_ACCESS_CFG", 3);
    EXPECT_EQ(rig.get("SDP", "S_LUT_ACCESS_DATA"), uint16_t(le[3]));

    // Writing past the end of a table is dropped.
    rig.sdp("S_LUT_ACCESS_CFG", (1u << 17) | 64);
    rig.sdp("S_LUT_ACCESS_DATA", 0x5555);
    rig.sdp("S_LUT_ACCESS_DATA", 0x6666);  // address 65
    rig.sdp("S_LUT_ACCESS_CFG", 64);
    EXPECT_EQ(rig.get("SDP", "S_LUT_ACCESS_DATA"), 0x5555u);
    EXPECT_EQ(rig.get("SDP", "S_LUT_ACCESS_DATA"), 0u);

    rig.device().reset();
    rig.sdp("S_LUT_ACCESS_CFG", 1u << 16);
    EXPECT_EQ(rig.get("SDP", "S_LUT_ACCESS_DATA"), 0u);
}

// One line of int16 values through Y with the LUT only.
class LutLine {
  public:
    explicit LutLine(const std::vector<int16_t>& x) : rig_("nv_full"), x_(x) {
        width_ = static_cast<uint32_t>((x_.size() + 15) / 16);
        x_.resize(size_t(width_) * 16, 0);
        uint8_t* src = rig_.region(kSrc, width_ * 32);
        for (size_t i = 0; i < x_.size(); ++i) put16(src + 2 * i, static_cast<uint16_t>(x_[i]));
        dst_ = rig_.region(kDst, width_ * 32);
        rig_.bypass_all();
        rig_.shape(width_, 1, 16);
        rig_.precisions(1, 1, 1);
        rig_.source(kSrc, width_ * 32, width_ * 32);
        rig_.destination(kDst, width_ * 32, width_ * 32);
        rig_.sdp("D_DP_EW_CFG", 0x12);  // ALU and MUL bypassed, LUT on
        rig_.sdp("D_PERF_ENABLE", 0x2);
    }
    Rig& rig() { return rig_; }
    const std::vector<int16_t>& x() const { return x_; }
    std::vector<int16_t> run() {
        rig_.run();
        EXPECT_EQ(rig_.stats().programming_errors, 0u) << rig_.stats().last_error;
        std::vector<int16_t> out(x_.size());
        for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int16_t>(get16(dst_ + 2 * i));
        return out;
    }

  private:
    Rig rig_;
    std::vector<int16_t> x_;
    uint32_t width_ = 1;
    uint8_t* dst_ = nullptr;
};

// LO linear from 1000 in steps of 16 (to 5096), LE linear from 3000 in steps of 4 (to 3256).
// Both hit: HYBRID picks LE; both under: UFLOW picks LO; both over: OFLOW picks LE.
TEST(SdpLut, LinearTablesPrioritiesAndExtrapolation) {
    std::vector<int16_t> x;
    for (int v = -200; v <= 6000; v += 13) x.push_back(static_cast<int16_t>(v));
    for (int v : {1000, 1001, 3000, 3001, 3255, 3256, 5095, 5096})
        x.push_back(static_cast<int16_t>(v));
    LutLine line(x);
    Rig& rig = line.rig();
    std::vector<int16_t> le(65), lo(257);
    for (int i = 0; i < 65; ++i) le[size_t(i)] = static_cast<int16_t>(5000 - i * i);
    for (int i = 0; i < 257; ++i) lo[size_t(i)] = static_cast<int16_t>(i * 100 - 9000);
    rig.write_lut(false, le);
    rig.write_lut(true, lo);
    rig.sdp("S_LUT_CFG", 0x11);                 // LE linear, UFLOW LO, OFLOW LE, HYBRID LE
    rig.sdp("S_LUT_INFO", 4u << 16 | 2u << 8);  // LO select 4, LE select 2
    rig.sdp("S_LUT_LE_START", 3000);
    rig.sdp("S_LUT_LE_END", 3256);
    rig.sdp("S_LUT_LO_START", 1000);
    rig.sdp("S_LUT_LO_END", 5096);
    rig.sdp("S_LUT_LO_SLOPE_SCALE", 0x0003);  // LO underflow: 3 >> 1
    rig.sdp("S_LUT_LO_SLOPE_SHIFT", 1);
    rig.sdp("S_LUT_LE_SLOPE_SCALE", 0xfffbu << 16);  // LE overflow: -5 << 2 (shift -2)
    rig.sdp("S_LUT_LE_SLOPE_SHIFT", 30u << 5);
    const auto out = line.run();

    // Every lane counts, the zeros filling the last atom too.
    uint32_t le_hits = 0, lo_hits = 0, under = 0, over = 0, hybrid = 0;
    for (size_t i = 0; i < line.x().size(); ++i) {
        const int64_t v = line.x()[i];
        const bool le_hit = v > 3000 && v<3256, lo_hit = v> 1000 && v < 5096;
        int64_t y;
        if (le_hit) {  // both hit: LE
            const int64_t d = v - 3000;
            y = interpolate(le[size_t(d >> 2)], le[size_t(d >> 2) + 1], d & 3, 2);
        } else if (lo_hit) {
            const int64_t d = v - 1000;
            y = interpolate(lo[size_t(d >> 4)], lo[size_t(d >> 4) + 1], d & 15, 4);
        } else if (v <= 1000) {  // both under: LO
            y = lo[0] + round_shift((v - 1000) * 3, 1);
        } else {  // both over: LE
            y = le[64] + (v - 3256) * -5 * 4;
        }
        le_hits += le_hit;
        lo_hits += lo_hit;
        under += v <= 1000;
        over += v >= 5096;
        hybrid += lo_hit;
        EXPECT_EQ(out[i], clamp_bits(y, 16)) << "x = " << v;
    }
    EXPECT_EQ(rig.get("SDP", "D_PERF_LUT_LE_HIT"), le_hits);
    EXPECT_EQ(rig.get("SDP", "D_PERF_LUT_LO_HIT"), lo_hits);
    EXPECT_EQ(rig.get("SDP", "D_PERF_LUT_UFLOW"), under);
    EXPECT_EQ(rig.get("SDP", "D_PERF_LUT_OFLOW"), over);
    EXPECT_EQ(rig.get("SDP", "D_PERF_LUT_HYBRID"), hybrid);
}

// LE exponent table from 0 with index offset 2: entry i sits at 2^(i+2); below 4 it
// underflows and extrapolates from 0 + 2^2 (the bias of a positive offset).
TEST(SdpLut, ExponentTable) {
    std::vector<int16_t> x;
    for (int v = -40; v <= 32767; v = v < 200 ? v + 3 : v * 5 / 4)
        x.push_back(static_cast<int16_t>(v));
    LutLine line(x);
    Rig& rig = line.rig();
    std::vector<int16_t> le(65);
    for (int i = 0; i < 65; ++i) le[size_t(i)] = static_cast<int16_t>(i * 1000 - 12000);
    rig.write_lut(false, le);
    rig.write_lut(true, std::vector<int16_t>(257, 0));
    rig.sdp("S_LUT_CFG", 0x00);  // LE exponent, every priority LE
    rig.sdp("S_LUT_INFO", 2);    // LE index offset 2
    rig.sdp("S_LUT_LE_START", 0);
    rig.sdp("S_LUT_LO_START", 0x7fffffff);  // LO never hits
    rig.sdp("S_LUT_LE_SLOPE_SCALE", 7);     // LE underflow: 7 >> 0
    const auto out = line.run();
    for (size_t i = 0; i < line.x().size(); ++i) {
        const int64_t v = line.x()[i];
        int64_t y;
        if (v < 4) {
            y = le[0] + (v - 4) * 7;
        } else {
            const int e = std::bit_width(uint64_t(v)) - 1;
            const int64_t d = v - (int64_t(1) << e);
            y = interpolate(le[size_t(e - 2)], le[size_t(e - 1)], d, unsigned(e));
        }
        EXPECT_EQ(out[i], clamp_bits(y, 16)) << "x = " << v;
    }
}

// Y with per-element operands (ALU and MUL, two bytes, interleaved): the MUL operand taken as
// it is, the ALU operand converted ((a - 5) * 3 >> 1), then x * m >> 2 (EW_TRUNCATE) + a.
TEST(SdpY, OperandConvertorsAndMulBeforeAlu) {
    Rig rig("nv_full");
    const uint32_t W = 4, H = 2, C = 32;  // int8: one surface
    const uint32_t line = W * 32, surface = H * line;
    const uint32_t op_line = W * 32 * 4, op_surface = H * op_line;  // 32 values of 4 bytes per atom
    int8_t* src = reinterpret_cast<int8_t*>(rig.region(kSrc, surface));
    uint8_t* ops = rig.region(kOperands, op_surface);
    uint8_t* dst = rig.region(kDst, surface);
    auto rng = test::rng_for_test();
    for (uint32_t i = 0; i < surface; ++i) src[i] = static_cast<int8_t>(rng());
    for (uint32_t i = 0; i < op_surface; ++i) ops[i] = static_cast<uint8_t>(rng());

    rig.bypass_all();
    rig.shape(W, H, C);
    rig.source(kSrc, line, surface);
    rig.destination(kDst, line, surface);
    rig.sdp("D_DP_EW_CFG", 0x48);   // MUL, ALU SUM, LUT bypassed
    rig.sdp("D_DP_EW_ALU_CFG", 1);  // MEM, convertor on
    rig.sdp("D_DP_EW_ALU_CVT_OFFSET_VALUE", 5);
    rig.sdp("D_DP_EW_ALU_CVT_SCALE_VALUE", 3);
    rig.sdp("D_DP_EW_ALU_CVT_TRUNCATE_VALUE", 1);
    rig.sdp("D_DP_EW_MUL_CFG", 3);  // MEM, convertor bypassed
    rig.sdp("D_DP_EW_TRUNCATE_VALUE", 2);
    rig.rdma("D_ERDMA_CFG", 0x3c);  // enabled, BOTH, two bytes, per element, MC
    rig.rdma("D_EW_BASE_ADDR_LOW", kOperands);
    rig.rdma("D_EW_LINE_STRIDE", op_line);
    rig.rdma("D_EW_SURFACE_STRIDE", op_surface);
    rig.sdp("D_CVT_SHIFT", 8);
    rig.run();

    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    for (uint32_t c = 0; c < C; ++c)
        for (uint32_t h = 0; h < H; ++h)
            for (uint32_t w = 0; w < W; ++w) {
                const uint64_t o = cube_offset(32, 1, line, surface, c, h, w);
                const uint64_t op = h * op_line + w * 128 + c * 4;
                const int64_t a = static_cast<int16_t>(get16(ops + op));
                const int64_t m = static_cast<int16_t>(get16(ops + op + 2));
                const int64_t y = round_shift(src[o] * m, 2) + round_shift((a - 5) * 3, 1);
                EXPECT_EQ(static_cast<int8_t>(dst[o]), clamp_bits(round_shift(y, 8), 8))
                    << c << "," << h << "," << w;
            }
}

// Y's ALU operand convertor where SDP's vector forms may take 32-bit lanes (products within
// 2^30, shifts up to 30) and just past them (shifts 31 to 38, which must take 64-bit lanes or
// round to 0 as below): products of exactly +-2^30, +-2^29 and their neighbours, every sign, at
// every ISA level of this CPU. At a shift of 31 or more every product within 2^30 rounds to 0,
// except +-2^30 at 31 (+-1); a 32-bit lane's arithmetic shift would give -1 for the negative ones.
TEST(SdpY, AluConvertorAtTheEdgeOfThe32BitLanes) {
    struct Convertor {
        int32_t offset, scale;
    };
    // (x - offset) * scale within 2^30 for every int16 x; the second and third reach -2^30 and
    // +2^30 (x = -32768).
    constexpr std::array<Convertor, 4> kConvertors = {
        {{0, -32768}, {32768, 16384}, {32768, -16384}, {-5, 3}}};
    constexpr std::array<uint32_t, 12> kShifts = {0, 16, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38};
    const uint32_t W = 16, H = 4, C = 32;  // int8: one surface
    const uint32_t line = W * 32, surface = H * line;
    const uint32_t op_line = W * 32 * 2, op_surface = H * op_line;  // 32 int16 operands per atom
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        for (const Convertor& cvt : kConvertors)
            for (uint32_t shift : kShifts) {
                SCOPED_TRACE(std::string(isa_name(level)) + ": offset " +
                             std::to_string(cvt.offset) + ", scale " + std::to_string(cvt.scale) +
                             ", shift " + std::to_string(shift));
                Rig rig("nv_full");
                int8_t* src = reinterpret_cast<int8_t*>(rig.region(kSrc, surface));
                uint8_t* ops = rig.region(kOperands, op_surface);
                uint8_t* dst = rig.region(kDst, surface);
                auto rng = test::rng_for_test();
                for (uint32_t i = 0; i < surface; ++i)
                    src[i] = static_cast<int8_t>(int(rng() % 201) - 100);
                // Operands whose products land on and next to +-2^30, +-2^29 and 0.
                std::vector<int16_t> edges = {-32768, -32767, -32766, 32767, 32766, 0, 1, -1};
                for (int64_t target : {int64_t(1) << 29, -(int64_t(1) << 29)})
                    for (int64_t d : {-1, 0, 1}) {
                        const int64_t x = cvt.offset + target / cvt.scale + d;
                        if (x >= INT16_MIN && x <= INT16_MAX) edges.push_back(int16_t(x));
                    }
                for (uint32_t i = 0; i < op_surface / 2; ++i)
                    put16(ops + 2 * i, static_cast<uint16_t>(i % 2 ? edges[rng() % edges.size()]
                                                                   : int16_t(rng())));

                rig.bypass_all();
                rig.shape(W, H, C);
                rig.source(kSrc, line, surface);
                rig.destination(kDst, line, surface);
                rig.sdp("D_DP_EW_CFG", 0x58);   // ALU SUM; MUL and LUT bypassed
                rig.sdp("D_DP_EW_ALU_CFG", 1);  // MEM, convertor on
                rig.sdp("D_DP_EW_ALU_CVT_OFFSET_VALUE", static_cast<uint32_t>(cvt.offset));
                rig.sdp("D_DP_EW_ALU_CVT_SCALE_VALUE", static_cast<uint16_t>(cvt.scale));
                rig.sdp("D_DP_EW_ALU_CVT_TRUNCATE_VALUE", shift);
                rig.rdma("D_ERDMA_CFG", 0x3a);  // enabled, ALU, two bytes, per element, MC
                rig.rdma("D_EW_BASE_ADDR_LOW", kOperands);
                rig.rdma("D_EW_LINE_STRIDE", op_line);
                rig.rdma("D_EW_SURFACE_STRIDE", op_surface);
                rig.run();

                ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
                int wrong = 0;
                for (uint32_t h = 0; h < H; ++h)
                    for (uint32_t w = 0; w < W; ++w)
                        for (uint32_t c = 0; c < C; ++c) {
                            const uint64_t o = cube_offset(32, 1, line, surface, c, h, w);
                            const int64_t a =
                                static_cast<int16_t>(get16(ops + h * op_line + w * 64 + c * 2));
                            const int64_t operand =
                                clamp_bits(round_shift((a - cvt.offset) * cvt.scale, shift), 32);
                            const int64_t expected = clamp_bits(src[o] + operand, 8);
                            if (static_cast<int8_t>(dst[o]) != expected && ++wrong <= 3)
                                ADD_FAILURE() << "operand " << a << " at " << c << "," << h << ","
                                              << w << ": " << int(static_cast<int8_t>(dst[o]))
                                              << ", expected " << expected;
                        }
                ASSERT_EQ(wrong, 0);
            }
    }
}

// EQL compares with the operand cube, writes nothing and reports D_STATUS.STATUS_UNEQUAL.
TEST(SdpY, EqlModeComparesAndWritesNothing) {
    Rig rig("nv_full");
    const uint32_t W = 3, C = 40, surfaces = 2, bytes = surfaces * W * 32;  // int8, 64 lanes
    int8_t* src = reinterpret_cast<int8_t*>(rig.region(kSrc, bytes));
    int8_t* ops = reinterpret_cast<int8_t*>(rig.region(kOperands, bytes));
    uint8_t* dst = rig.region(kDst, bytes);
    for (uint32_t i = 0; i < bytes; ++i) src[i] = ops[i] = static_cast<int8_t>(i * 5);
    std::fill(dst, dst + bytes, 0xee);
    for (uint32_t g = 0; g < 2; ++g) {
        rig.group(g);
        rig.bypass_all();
        rig.shape(W, 1, C);
        rig.source(kSrc, W * 32, W * 32);
        rig.destination(kDst, W * 32, W * 32);
        rig.sdp("D_DP_EW_CFG", 0x5c);   // ALU EQL, MUL and LUT bypassed
        rig.sdp("D_DP_EW_ALU_CFG", 3);  // MEM, convertor bypassed
        rig.rdma("D_ERDMA_CFG", 0x32);  // enabled, ALU, one byte, per element, MC
        rig.rdma("D_EW_BASE_ADDR_LOW", kOperands);
        rig.rdma("D_EW_LINE_STRIDE", W * 32);
        rig.rdma("D_EW_SURFACE_STRIDE", W * 32);
        if (g == 1) ops[W * 32 + 7] = 99;  // one element of the second surface differs
        rig.run();
        ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
        EXPECT_EQ(rig.get("SDP", "D_STATUS"), g) << "group " << g;
    }
    for (uint32_t i = 0; i < bytes; ++i) ASSERT_EQ(dst[i], 0xee);
    EXPECT_EQ(rig.stats().bytes_written, 0u);
    EXPECT_EQ(rig.get("GLB", "S_INTR_STATUS") & 3u, 3u);  // both groups done
}

}  // namespace
}  // namespace nvdla::emu::sdp_test
