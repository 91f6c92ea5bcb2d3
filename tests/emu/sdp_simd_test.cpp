// SDP's vector forms (sdp_simd.cpp: AVX-512, sdp_simd_avx2.cpp: AVX2) against the scalar stages
// they stand in for: random X stages, Y stages (without the LUT), output convertors and CACC
// deliveries on lines of awkward values (every width's limits), and random flying and offline
// operations run through Sdp::execute, at every ISA level this CPU runs, against the scalar stages
// (force_scalar), which must write the same bytes and the same counters. The stage tests are
// reported skipped (never passed) only on a CPU without AVX2.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "emu/isa.hpp"
#include "emu/sdp.hpp"
#include "emu/sdp_internal.hpp"
#include "isa_levels.hpp"
#include "test_support.hpp"

namespace nvdla::emu::sdp {
namespace {

// Runs check at every vector level.
#define AT_EVERY_VECTOR_LEVEL(check)                                \
    do {                                                            \
        const std::vector<IsaLevel> levels = vector_levels();       \
        if (levels.empty()) GTEST_SKIP() << "this CPU has no AVX2"; \
        for (IsaLevel level : levels) {                             \
            const IsaLimit limit(level);                            \
            SCOPED_TRACE(isa_name(level));                          \
            ASSERT_TRUE(simd_enabled());                            \
            check();                                                \
            if (::testing::Test::HasFatalFailure()) return;         \
        }                                                           \
    } while (0)

uint64_t pick(std::mt19937_64& rng, uint64_t n) {
    return rng() % n;
}

// Values that probe every limit: small ones, powers of two and their neighbours up to 2^31,
// the extremes, and anything at all.
int32_t awkward(std::mt19937_64& rng, int64_t limit = INT64_MAX) {
    int64_t v;
    switch (pick(rng, 5)) {
        case 0: v = int64_t(pick(rng, 601)) - 300; break;
        case 1: {
            static constexpr int kBits[] = {7, 8, 15, 16, 17, 23, 24, 29, 30, 31};
            const int64_t p = int64_t(1) << kBits[pick(rng, std::size(kBits))];
            v = (pick(rng, 2) ? p : -p) + int64_t(pick(rng, 5)) - 2;
            break;
        }
        case 2: v = static_cast<int32_t>(rng()); break;
        case 3: {
            static constexpr int64_t kEdges[] = {INT32_MIN, INT32_MAX, 0, -1, 1};
            v = kEdges[pick(rng, std::size(kEdges))];
            break;
        }
        default: v = int64_t(pick(rng, 1u << 21)) - (1 << 20); break;
    }
    v = std::clamp<int64_t>(v, INT32_MIN, INT32_MAX);
    if (limit != INT64_MAX) v = std::clamp<int64_t>(v, -limit, limit);
    return static_cast<int32_t>(v);
}

int16_t awkward16(std::mt19937_64& rng) {
    static constexpr int16_t kEdges[] = {-32768, 32767, 0, -1, 1, 255, -256, 127, -128};
    if (pick(rng, 3) == 0) return kEdges[pick(rng, std::size(kEdges))];
    return static_cast<int16_t>(rng());
}

XStage random_x(std::mt19937_64& rng) {
    XStage x;
    x.enabled = true;
    x.alu_bypass = pick(rng, 4) == 0;
    x.alu_algo = static_cast<uint32_t>(pick(rng, 4));
    x.alu_from_memory = pick(rng, 2);
    x.alu_shift = pick(rng, 3) ? static_cast<uint32_t>(pick(rng, 16)) : uint32_t(pick(rng, 64));
    x.alu_operand = awkward16(rng);
    x.mul_bypass = pick(rng, 4) == 0;
    x.prelu = pick(rng, 3) == 0;
    x.mul_from_memory = pick(rng, 2);
    x.mul_shift = static_cast<uint32_t>(pick(rng, 64));
    x.mul_operand = awkward16(rng);
    x.relu_bypass = pick(rng, 2);
    return x;
}

TEST(SdpSimd, XAluOperandsSaturateTo32Bits) {
    // IntShiftLeft saturates: -1 shifted by 32 or more is INT32_MIN, not -2^shift.
    EXPECT_EQ(x_alu_operand(3, 4), 48);
    EXPECT_EQ(x_alu_operand(-1, 31), INT32_MIN);
    EXPECT_EQ(x_alu_operand(-1, 32), INT32_MIN);
    EXPECT_EQ(x_alu_operand(-1, 62), INT32_MIN);
    EXPECT_EQ(x_alu_operand(-2, 30), INT32_MIN);
    EXPECT_EQ(x_alu_operand(1, 40), INT32_MAX);
    EXPECT_EQ(x_alu_operand(0, 63), 0);
}

void check_x_stages() {
    auto rng = test::rng_for_test();
    int checked = 0;
    for (int i = 0; i < 3000; ++i) {
        const XStage x = random_x(rng);
        if (!x_simd_supported(x)) continue;
        const size_t n = 1 + pick(rng, 70);
        std::vector<int32_t> line(n);
        std::vector<int16_t> alu(n), mul(n);
        for (size_t j = 0; j < n; ++j) {
            line[j] = awkward(rng);
            alu[j] = awkward16(rng);
            mul[j] = awkward16(rng);
        }
        const OperandLine ops{x.alu_from_memory ? alu.data() : nullptr,
                              x.mul_from_memory ? mul.data() : nullptr};
        std::vector<int32_t> scalar = line, simd = line;
        run_x(x, false, false, scalar, ops);
        run_x_simd(x, simd, ops);
        ASSERT_EQ(simd, scalar) << "stage " << i << ": alu bypass " << x.alu_bypass << " algo "
                                << x.alu_algo << " shift " << x.alu_shift << " mul bypass "
                                << x.mul_bypass << " prelu " << x.prelu << " shift " << x.mul_shift;
        ++checked;
    }
    EXPECT_GT(checked, 2000);
}

TEST(SdpSimd, XStagesMatchTheScalarStage) {
    AT_EVERY_VECTOR_LEVEL(check_x_stages);
}

YStage random_y(std::mt19937_64& rng) {
    YStage y;
    y.enabled = true;
    y.alu_bypass = pick(rng, 4) == 0;
    y.alu_algo = static_cast<uint32_t>(pick(rng, 4));
    y.alu_from_memory = pick(rng, 2);
    y.alu_operand = static_cast<uint32_t>(awkward(rng));
    y.mul_bypass = pick(rng, 4) == 0;
    y.prelu = pick(rng, 3) == 0;
    y.mul_from_memory = pick(rng, 2);
    y.mul_operand = static_cast<uint32_t>(awkward(rng));
    y.truncate = pick(rng, 8) == 0 ? static_cast<uint32_t>(pick(rng, 1024))
                                   : static_cast<uint32_t>(pick(rng, 64));
    for (OperandConvertor* c : {&y.alu_cvt, &y.mul_cvt}) {
        c->bypass = pick(rng, 3) == 0;
        c->params = {awkward(rng), awkward16(rng), static_cast<uint32_t>(pick(rng, 64))};
    }
    return y;
}

void check_y_stages() {
    auto rng = test::rng_for_test();
    int checked = 0;
    for (int i = 0; i < 3000; ++i) {
        Settings s;
        s.proc = s.output = pick(rng, 2) ? Precision::Int8 : Precision::Int16;
        s.ew = random_y(rng);
        if (!y_simd_supported(s)) continue;
        const size_t n = 1 + pick(rng, 70);
        std::vector<int32_t> line(n);
        std::vector<int16_t> alu(n), mul(n);
        for (size_t j = 0; j < n; ++j) {
            line[j] = awkward(rng);
            alu[j] = awkward16(rng);
            mul[j] = awkward16(rng);
        }
        const OperandLine ops{s.ew.alu_from_memory ? alu.data() : nullptr,
                              s.ew.mul_from_memory ? mul.data() : nullptr};
        std::vector<int32_t> scalar = line, simd = line;
        Counters counters;
        run_y(s, scalar, ops, counters);
        run_y_simd(s.ew, simd, ops);
        const YStage& y = s.ew;
        ASSERT_EQ(simd, scalar) << "stage " << i << ": mul bypass " << y.mul_bypass << " prelu "
                                << y.prelu << " truncate " << y.truncate << " alu bypass "
                                << y.alu_bypass << " algo " << y.alu_algo;
        ++checked;
    }
    EXPECT_GT(checked, 2000);
}

TEST(SdpSimd, YStagesMatchTheScalarStage) {
    AT_EVERY_VECTOR_LEVEL(check_y_stages);
}

void check_convertors() {
    auto rng = test::rng_for_test();
    for (int i = 0; i < 3000; ++i) {
        Settings s;
        s.proc = pick(rng, 2) ? Precision::Int8 : Precision::Int16;
        s.output = s.proc == Precision::Int8 && pick(rng, 3) == 0 ? Precision::Int16 : s.proc;
        s.count_saturation = pick(rng, 4) != 0;
        switch (pick(rng, 5)) {
            case 0: s.cvt = {0, 1, 0}; break;  // identity
            case 1:
                s.cvt = {static_cast<int32_t>(pick(rng, 2001)) - 1000,
                         static_cast<int16_t>(int64_t(pick(rng, 201)) - 100),
                         static_cast<uint32_t>(pick(rng, 20))};
                break;
            case 2:
                // A requantisation's: large scales, shifts around the limits of the 32-bit
                // lanes that saturate outside (24 for int8 output, 16 for int16).
                s.cvt = {
                    static_cast<int32_t>(pick(rng, 9)) - 4, awkward16(rng),
                    static_cast<uint32_t>(pick(rng, 2) ? 14 + pick(rng, 5) : 22 + pick(rng, 5))};
                break;
            default:
                s.cvt = {awkward(rng), awkward16(rng), static_cast<uint32_t>(pick(rng, 64))};
                break;
        }
        ASSERT_TRUE(c_simd_supported(s));
        const size_t n = 1 + pick(rng, 70);
        std::vector<int32_t> line(n);
        // Mostly values the convertor maps near the output range, some anywhere.
        for (int32_t& v : line) v = pick(rng, 2) ? awkward(rng, 1 << 20) : awkward(rng);
        // Now and then the inputs next to where the saturation flag starts (on each side).
        if (pick(rng, 3) == 0) {
            const FlagBounds b = convertor_flag_bounds(s.cvt, s.cvt.shift & 63u);
            for (int32_t& v : line) {
                const int64_t bound = pick(rng, 2) ? b.above : b.below;
                int64_t at = 0;
                // A bound at the int64 limit is taken as it is.
                if (__builtin_add_overflow(bound, int64_t(pick(rng, 5)) - 2, &at)) at = bound;
                v = static_cast<int32_t>(std::clamp<int64_t>(at, INT32_MIN, INT32_MAX));
            }
        }
        // Now and then the inputs next to where the 32-bit lanes end (plan_c_narrow).
        if (pick(rng, 3) == 0) {
            const CNarrowPlan plan = plan_c_narrow(s.cvt, s.output);
            for (int32_t& v : line) {
                const int64_t bound = pick(rng, 2) ? plan.lower : plan.upper;
                v = static_cast<int32_t>(
                    std::clamp<int64_t>(bound + int64_t(pick(rng, 5)) - 2, INT32_MIN, INT32_MAX));
            }
        }
        std::vector<uint16_t> scalar(n), simd(n);
        Counters cs, cv;
        run_c(s, line, scalar, cs);
        run_c_simd(s, line, simd, cv);
        ASSERT_EQ(simd, scalar) << "convertor " << i << ": offset " << s.cvt.offset << " scale "
                                << s.cvt.scale << " shift " << s.cvt.shift;
        // The count matters only when D_PERF_OUT_SATURATION reports it (the vector forms
        // count only then).
        if (s.count_saturation) {
            ASSERT_EQ(cv.saturations, cs.saturations) << "convertor " << i;
        }
    }
}

TEST(SdpSimd, OutputConvertorsMatchTheScalarStage) {
    AT_EVERY_VECTOR_LEVEL(check_convertors);
}

void check_flying_lines() {
    auto rng = test::rng_for_test();
    for (int i = 0; i < 300; ++i) {
        AccumulatorCube cube;
        cube.batches = 1 + static_cast<uint32_t>(pick(rng, 2));
        cube.width = 1 + static_cast<uint32_t>(pick(rng, 9));
        cube.height = 1 + static_cast<uint32_t>(pick(rng, 3));
        cube.channels = 1 + static_cast<uint32_t>(pick(rng, 70));
        cube.channel_stride = cube.channels + static_cast<uint32_t>(pick(rng, 3));
        cube.clip = pick(rng, 2) ? static_cast<uint32_t>(pick(rng, 32)) : 0;
        const size_t count = size_t(cube.batches) * cube.height * cube.width * cube.channel_stride;
        std::shared_ptr<int32_t[]> sums(new int32_t[count]);
        // Sums below 2^30 when CACC still rounds them (AccumulatorCube).
        for (size_t j = 0; j < count; ++j)
            sums[j] = awkward(rng, cube.clip ? (1 << 30) - 1 : INT64_MAX);
        cube.sums = sums;
        Settings s;
        s.width = cube.width;
        s.channels = cube.channels;
        s.group = pick(rng, 2) ? 32 : (pick(rng, 2) ? 16 : 8);
        s.groups = (s.channels + s.group - 1) / s.group;
        std::vector<int32_t> line(s.line_elements());
        for (uint32_t b = 0; b < cube.batches; ++b)
            for (uint32_t g = 0; g < s.groups; ++g)
                for (uint32_t h = 0; h < cube.height; ++h) {
                    flying_line_simd(s, cube, b, g, h, line);
                    for (uint32_t w = 0; w < s.width; ++w)
                        for (uint32_t lane = 0; lane < s.group; ++lane) {
                            const uint32_t c = g * s.group + lane;
                            const int32_t want = c < s.channels ? cube.at(b, c, h, w) : 0;
                            ASSERT_EQ(line[size_t(w) * s.group + lane], want)
                                << "cube " << i << " clip " << cube.clip;
                        }
                }
    }
}

TEST(SdpSimd, FlyingLinesDeliverAsCaccDoes) {
    AT_EVERY_VECTOR_LEVEL(check_flying_lines);
}

// ---- Whole operations ----

constexpr uint64_t kDst = 0x100000, kBs = 0x200000, kBn = 0x300000, kEw = 0x400000, kSrc = 0x500000;
constexpr uint64_t kRegion = 0x10000;

struct Words {
    std::array<uint32_t, NVDLA_UNIT_WINDOW / 4> w{};
    void set(uint32_t offset, uint32_t value) { w[offset / 4] = value; }
    Group group() { return Group(w.data()); }
};

// A random operation: the registers, the cube from CACC (flying) or the input in memory
// (offline), and the operand memory.
struct Program {
    const char* config = "nv_full";
    Words sdp, rdma;
    bool uses_rdma = false;
    bool offline = false;
    std::vector<uint8_t> input;
    AccumulatorCube cube;
    std::vector<uint8_t> operands[3];  // BS, BN, EW memory
    std::vector<uint8_t> output;       // the output memory before the operation (else zeros)
    bool to_pdp = false;               // OUTPUT_DST is PDP: SDP hands PDP the cube
};

// A deferred cube (a flying convolution computed when SDP takes it) served from a channels-last
// cube: rows as CACC delivers them, checked to be asked for in order, each once, and ended by
// exactly one finish() or whole(). With set_threads(n > 1) the pass makes the blocks on n
// threads, in any order: then checked to be every row once.
class TestRows final : public DeferredRows {
  public:
    TestRows(AccumulatorCube cube, uint32_t block) : cube_(std::move(cube)), block_(block) {}
    uint32_t block_rows() const override { return block_; }
    unsigned threads() const override { return threads_; }
    void set_threads(unsigned threads) { threads_ = threads; }
    int32_t* begin(size_t values) override {
        rows_.resize(values);
        return rows_.data();
    }
    uint32_t compute(uint32_t y0, uint32_t y1, int32_t* out) const override {
        // The next block of rows.
        rows_made_ += y1 - y0;
        if (threads_ == 1) {
            in_order_ &= y0 == next_ && y1 > y0 && y1 <= cube_.height;
            next_ = y1;
        }
        for (uint32_t n = 0; n < cube_.batches; ++n)
            for (uint32_t y = y0; y < y1; ++y)
                for (uint32_t x = 0; x < cube_.width; ++x)
                    for (uint32_t c = 0; c < cube_.channel_stride; ++c)
                        *out++ = c < cube_.channels ? cube_.at(n, c, y, x) : 0x5a5a5a5a;
        return 0;
    }
    void finish(uint32_t) override {
        ++ends_;
        ++finished;
        in_order_ &= rows_made_ == cube_.height;
    }
    AccumulatorCube whole() override {
        ++ends_;
        in_order_ &= rows_made_ == 0;
        return cube_;
    }
    // Every row once, in order, then one end (read and reset for the next run).
    bool used_once() {
        const bool ok = in_order_ && ends_ == 1;
        in_order_ = true;
        ends_ = 0;
        next_ = 0;
        rows_made_ = 0;
        return ok;
    }

    static inline int finished = 0;  // operations that took the blocks (every TestRows)

  private:
    AccumulatorCube cube_;
    uint32_t block_;
    std::vector<int32_t> rows_;
    unsigned threads_ = 1;
    mutable uint32_t next_ = 0;
    mutable std::atomic<uint32_t> rows_made_{0};
    uint32_t ends_ = 0;
    mutable bool in_order_ = true;
};

Program random_program(std::mt19937_64& rng, uint32_t max_channels = 70) {
    Program p;
    // nv_small's 8-byte atoms: channel groups of 8 (the fused pass's 8-lane form).
    const uint64_t which = pick(rng, 6);
    p.config = which == 0 ? "nv_small_256_full" : which == 1 ? "nv_small" : "nv_full";
    const HwConfig& cfg = test::config(p.config);
    const bool int8 = pick(rng, 2) || !supports(cfg, Precision::Int16);
    const uint32_t proc = int8 ? 0 : 1;
    uint32_t out = proc;
    if (int8 && pick(rng, 4) == 0) out = 1;                            // int8 written as int16
    if (pick(rng, 8) == 0 && supports(cfg, Precision::Fp16)) out = 2;  // int -> fp16
    const uint32_t batches = cfg.max_batch > 1 && pick(rng, 4) == 0 ? 2 : 1;
    const uint32_t W = pick(rng, 6) == 0 ? 1 : 1 + static_cast<uint32_t>(pick(rng, 9));
    const uint32_t H = pick(rng, 6) == 0 ? 1 : 1 + static_cast<uint32_t>(pick(rng, 4));
    const uint32_t C = 1 + static_cast<uint32_t>(pick(rng, max_channels));

    Words& sdp = p.sdp;
    sdp.set(NVDLA_SDP_D_DATA_CUBE_WIDTH, W - 1);
    sdp.set(NVDLA_SDP_D_DATA_CUBE_HEIGHT, H - 1);
    sdp.set(NVDLA_SDP_D_DATA_CUBE_CHANNEL, C - 1);
    p.offline = pick(rng, 3) == 0;
    sdp.set(NVDLA_SDP_D_FEATURE_MODE_CFG,
            (p.offline ? 0u : 1u) |
                NVDLA_FIELD_SET(SDP, D_FEATURE_MODE_CFG, BATCH_NUMBER, batches - 1));
    sdp.set(NVDLA_SDP_D_DATA_FORMAT, proc | out << 2);
    sdp.set(NVDLA_SDP_D_CVT_OFFSET,
            static_cast<uint32_t>(pick(rng, 2) ? awkward(rng) : int32_t(pick(rng, 9)) - 4));
    sdp.set(NVDLA_SDP_D_CVT_SCALE, static_cast<uint16_t>(pick(rng, 3) ? awkward16(rng) : 1));
    sdp.set(NVDLA_SDP_D_CVT_SHIFT, static_cast<uint32_t>(pick(rng, 2) ? pick(rng, 64) : 0));
    sdp.set(NVDLA_SDP_D_PERF_ENABLE, static_cast<uint32_t>(pick(rng, 16)));
    sdp.set(NVDLA_SDP_D_DST_DMA_CFG, 1);
    sdp.set(NVDLA_SDP_D_DST_BASE_ADDR_LOW, static_cast<uint32_t>(kDst));
    const uint32_t atom = cfg.atom_bytes;
    const uint32_t line = W * atom + atom * static_cast<uint32_t>(pick(rng, 2));
    // A 1x1 output is written packed (the hardware requires one atom per surface).
    const uint32_t surface =
        W == 1 && H == 1 ? atom : line * H + atom * static_cast<uint32_t>(pick(rng, 2));
    const uint32_t surfaces = (C * (out == 0 ? 1 : 2) + atom - 1) / atom + 1;
    sdp.set(NVDLA_SDP_D_DST_LINE_STRIDE, line);
    sdp.set(NVDLA_SDP_D_DST_SURFACE_STRIDE, surface);
    sdp.set(NVDLA_SDP_D_DST_BATCH_STRIDE, surface * surfaces);

    // X1 and X2, operands from registers or memory (per kernel or per element).
    const uint32_t x_cfg[2] = {NVDLA_SDP_D_DP_BS_CFG, NVDLA_SDP_D_DP_BN_CFG};
    const uint32_t x_alu[2] = {NVDLA_SDP_D_DP_BS_ALU_CFG, NVDLA_SDP_D_DP_BN_ALU_CFG};
    const uint32_t x_mul[2] = {NVDLA_SDP_D_DP_BS_MUL_CFG, NVDLA_SDP_D_DP_BN_MUL_CFG};
    const uint32_t x_alu_value[2] = {NVDLA_SDP_D_DP_BS_ALU_SRC_VALUE,
                                     NVDLA_SDP_D_DP_BN_ALU_SRC_VALUE};
    const uint32_t x_mul_value[2] = {NVDLA_SDP_D_DP_BS_MUL_SRC_VALUE,
                                     NVDLA_SDP_D_DP_BN_MUL_SRC_VALUE};
    const uint32_t dma_cfg[3] = {NVDLA_SDP_RDMA_D_BRDMA_CFG, NVDLA_SDP_RDMA_D_NRDMA_CFG,
                                 NVDLA_SDP_RDMA_D_ERDMA_CFG};
    const uint32_t dma_base[3] = {NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW,
                                  NVDLA_SDP_RDMA_D_BN_BASE_ADDR_LOW,
                                  NVDLA_SDP_RDMA_D_EW_BASE_ADDR_LOW};
    const uint32_t dma_line[3] = {NVDLA_SDP_RDMA_D_BS_LINE_STRIDE, NVDLA_SDP_RDMA_D_BN_LINE_STRIDE,
                                  NVDLA_SDP_RDMA_D_EW_LINE_STRIDE};
    const uint32_t dma_surface[3] = {NVDLA_SDP_RDMA_D_BS_SURFACE_STRIDE,
                                     NVDLA_SDP_RDMA_D_BN_SURFACE_STRIDE,
                                     NVDLA_SDP_RDMA_D_EW_SURFACE_STRIDE};
    const uint64_t dma_address[3] = {kBs, kBn, kEw};
    for (int i = 0; i < 3; ++i) p.rdma.set(dma_cfg[i], 1);  // disabled
    const auto operand_dma = [&](int i, bool alu, bool mul) {
        const uint32_t use = alu && mul ? 2 : (alu ? 1 : 0);
        const uint32_t size = static_cast<uint32_t>(pick(rng, 2));
        p.rdma.set(dma_cfg[i], NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_USE, use) |
                                   NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_SIZE, size) |
                                   NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_MODE,
                                                   static_cast<uint32_t>(pick(rng, 2))) |
                                   NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_RAM_TYPE, 1u));
        p.rdma.set(dma_base[i], static_cast<uint32_t>(dma_address[i]));
        p.rdma.set(dma_line[i], W * atom * 4);
        // On a 1x1 cube the DMA reads its surfaces packed: one group of values each.
        const uint32_t group = atom / (proc == 0 ? 1 : 2), value = (use == 2 ? 2 : 1) * (size + 1);
        p.rdma.set(dma_surface[i], W == 1 && H == 1 ? group * value : W * atom * 4 * H);
        p.operands[i].resize(kRegion);
        for (uint8_t& b : p.operands[i]) b = static_cast<uint8_t>(rng());
        p.uses_rdma = true;
    };
    for (int i = 0; i < 2; ++i) {
        const bool enabled = pick(rng, 3) != 0;
        const bool alu_bypass = pick(rng, 4) == 0, mul_bypass = pick(rng, 3) == 0;
        sdp.set(x_cfg[i], (enabled ? 0u : 1u) | (alu_bypass ? 2u : 0u) |
                              static_cast<uint32_t>(pick(rng, 4)) << 2 |  // ALU algorithm
                              (mul_bypass ? 1u << 4 : 0u) | (pick(rng, 3) == 0 ? 1u << 5 : 0u) |
                              (pick(rng, 2) ? 1u << 6 : 0u));  // PReLU, ReLU bypass
        const bool alu_memory = pick(rng, 2), mul_memory = pick(rng, 2);
        const uint32_t alu_shift =
            pick(rng, 4) ? static_cast<uint32_t>(pick(rng, 16)) : uint32_t(pick(rng, 64));
        sdp.set(x_alu[i], (alu_memory ? 1u : 0u) | alu_shift << 8);
        sdp.set(x_mul[i], (mul_memory ? 1u : 0u) | static_cast<uint32_t>(pick(rng, 256)) << 8);
        sdp.set(x_alu_value[i], static_cast<uint16_t>(awkward16(rng)));
        sdp.set(x_mul_value[i], static_cast<uint16_t>(awkward16(rng)));
        const bool alu_needed = enabled && !alu_bypass && alu_memory;
        const bool mul_needed = enabled && !mul_bypass && mul_memory;
        if (alu_needed || mul_needed) operand_dma(i, alu_needed, mul_needed);
    }
    // Now and then a convolution's requantisation, which the fused pass runs without a branch
    // on the stages (X1 summing and multiplying with a shift of 0 to 45, X2 off), or X1 with
    // neither multiplier nor shift (a bias, a ReLU: 32-bit lanes too).
    const bool requantise = pick(rng, 5) == 0;
    if (requantise) {
        const bool no_mul = pick(rng, 3) == 0;
        const bool alu_bypass = no_mul && pick(rng, 3) == 0;
        sdp.set(x_cfg[0], (alu_bypass ? 2u : 0u) |
                              static_cast<uint32_t>(no_mul ? pick(rng, 4) : 2) << 2 |
                              (no_mul ? 1u << 4 : 0u) | (pick(rng, 2) ? 1u << 6 : 0u));
        const uint32_t shift = no_mul ? 0 : static_cast<uint32_t>(pick(rng, 46));
        sdp.set(x_mul[0], (sdp.w[x_mul[0] / 4] & 1u) | shift << 8);
        sdp.set(x_cfg[1], 1);  // X2 off, its operand DMA too
        p.rdma.set(dma_cfg[1], 1);
        const bool alu_memory = !alu_bypass && (sdp.w[x_alu[0] / 4] & 1u);
        const bool mul_memory = !no_mul && (sdp.w[x_mul[0] / 4] & 1u);
        p.rdma.set(dma_cfg[0], 1);
        if (alu_memory || mul_memory) operand_dma(0, alu_memory, mul_memory);
        sdp.set(NVDLA_SDP_D_CVT_SHIFT, static_cast<uint32_t>(pick(rng, 26)));
    }
    // Y now and then, without the LUT (the fused pass computes it; after a requantisation, a
    // residual network's sum): MUL and ALU operands from registers or memory, through random
    // operand convertors; EQL (nothing written) and truncations past 63 stay with the scalar
    // stages.
    if (pick(rng, 3) == 0 && nvdla_hw_has(&cfg, NVDLA_FEATURE_SDP_EW)) {
        const bool alu_bypass = pick(rng, 3) == 0, mul_bypass = pick(rng, 3) == 0;
        sdp.set(NVDLA_SDP_D_DP_EW_CFG,
                (alu_bypass ? 0x2u : 0u) | static_cast<uint32_t>(pick(rng, 3)) << 2 |
                    (mul_bypass ? 0x10u : 0u) | (pick(rng, 3) == 0 ? 0x20u : 0u) | 0x40u);
        const bool alu_memory = pick(rng, 2), mul_memory = pick(rng, 2);
        sdp.set(NVDLA_SDP_D_DP_EW_ALU_CFG,
                NVDLA_FIELD_SET(SDP, D_DP_EW_ALU_CFG, EW_ALU_SRC, alu_memory ? 1u : 0u) |
                    NVDLA_FIELD_SET(SDP, D_DP_EW_ALU_CFG, EW_ALU_CVT_BYPASS,
                                    pick(rng, 3) == 0 ? 1u : 0u));
        sdp.set(NVDLA_SDP_D_DP_EW_MUL_CFG,
                NVDLA_FIELD_SET(SDP, D_DP_EW_MUL_CFG, EW_MUL_SRC, mul_memory ? 1u : 0u) |
                    NVDLA_FIELD_SET(SDP, D_DP_EW_MUL_CFG, EW_MUL_CVT_BYPASS,
                                    pick(rng, 3) == 0 ? 1u : 0u));
        for (uint32_t reg :
             {NVDLA_SDP_D_DP_EW_ALU_SRC_VALUE, NVDLA_SDP_D_DP_EW_MUL_SRC_VALUE,
              NVDLA_SDP_D_DP_EW_ALU_CVT_OFFSET_VALUE, NVDLA_SDP_D_DP_EW_MUL_CVT_OFFSET_VALUE})
            sdp.set(reg, static_cast<uint32_t>(awkward(rng)));
        for (uint32_t reg :
             {NVDLA_SDP_D_DP_EW_ALU_CVT_SCALE_VALUE, NVDLA_SDP_D_DP_EW_MUL_CVT_SCALE_VALUE})
            sdp.set(reg, static_cast<uint16_t>(awkward16(rng)));
        for (uint32_t reg :
             {NVDLA_SDP_D_DP_EW_ALU_CVT_TRUNCATE_VALUE, NVDLA_SDP_D_DP_EW_MUL_CVT_TRUNCATE_VALUE})
            sdp.set(reg, static_cast<uint32_t>(pick(rng, 64)));
        // Half the ALU convertors small enough for the 32-bit lanes (plan_y_narrow), with
        // shifts on both sides of their limit of 30.
        if (pick(rng, 2)) {
            sdp.set(NVDLA_SDP_D_DP_EW_ALU_CVT_OFFSET_VALUE,
                    static_cast<uint32_t>(int32_t(pick(rng, 2049)) - 1024));
            sdp.set(NVDLA_SDP_D_DP_EW_ALU_CVT_SCALE_VALUE,
                    static_cast<uint16_t>(int32_t(pick(rng, 32769)) - 16384));
            sdp.set(NVDLA_SDP_D_DP_EW_ALU_CVT_TRUNCATE_VALUE, static_cast<uint32_t>(pick(rng, 40)));
        }
        sdp.set(NVDLA_SDP_D_DP_EW_TRUNCATE_VALUE,
                static_cast<uint32_t>(pick(rng, 8) == 0 ? pick(rng, 1024) : pick(rng, 40)));
        const bool alu_needed = !alu_bypass && alu_memory;
        const bool mul_needed = !mul_bypass && mul_memory;
        if (alu_needed || mul_needed) operand_dma(2, alu_needed, mul_needed);
    } else {
        sdp.set(NVDLA_SDP_D_DP_EW_CFG, 1);
    }
    // Offline: the input cube from memory, int16 now and then processed as int8.
    uint32_t in = proc;
    if (p.offline) {
        if (proc == 0 && pick(rng, 4) == 0 && supports(cfg, Precision::Int16)) in = 1;
        const uint32_t in_line = W * atom + atom * static_cast<uint32_t>(pick(rng, 2));
        p.rdma.set(NVDLA_SDP_RDMA_D_SRC_BASE_ADDR_LOW, static_cast<uint32_t>(kSrc));
        p.rdma.set(NVDLA_SDP_RDMA_D_SRC_LINE_STRIDE, in_line);
        p.rdma.set(NVDLA_SDP_RDMA_D_SRC_SURFACE_STRIDE,
                   in_line * H + atom * static_cast<uint32_t>(pick(rng, 2)));
        p.rdma.set(NVDLA_SDP_RDMA_D_SRC_DMA_CFG, 1);
        p.input.resize(kRegion);
        for (uint8_t& b : p.input) b = static_cast<uint8_t>(rng());
        p.uses_rdma = true;
    }
    if (p.uses_rdma) {
        p.rdma.set(NVDLA_SDP_RDMA_D_DATA_CUBE_WIDTH, W - 1);
        p.rdma.set(NVDLA_SDP_RDMA_D_DATA_CUBE_HEIGHT, H - 1);
        p.rdma.set(NVDLA_SDP_RDMA_D_DATA_CUBE_CHANNEL, C - 1);
        p.rdma.set(NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG,
                   (p.offline ? 0u : 1u) | in << 2 | proc << 4 | out << 6 |
                       NVDLA_FIELD_SET(SDP_RDMA, D_FEATURE_MODE_CFG, BATCH_NUMBER, batches - 1));
    }

    // CACC's cube: channels last (CMAC's kernels, oneDNN) or planar.
    AccumulatorCube& cube = p.cube;
    cube.batches = batches;
    cube.width = W;
    cube.height = H;
    cube.channels = C;
    cube.precision = int8 ? Precision::Int8 : Precision::Int16;
    const size_t count = size_t(batches) * W * H * C;
    const int64_t range = pick(rng, 2) ? (1 << 20) : INT64_MAX;
    if (pick(rng, 4) == 0) {
        cube.values.resize(count);
        for (int32_t& v : cube.values) v = awkward(rng, range);
    } else {
        cube.channel_stride = C + static_cast<uint32_t>(pick(rng, 2)) * 16;
        cube.clip = pick(rng, 2) ? static_cast<uint32_t>(pick(rng, 32)) : 0;
        const size_t n = size_t(batches) * W * H * cube.channel_stride;
        std::shared_ptr<int32_t[]> sums(new int32_t[n]);
        for (size_t j = 0; j < n; ++j)
            sums[j] = awkward(rng, cube.clip ? std::min<int64_t>(range, (1 << 30) - 1) : range);
        cube.sums = sums;
        if (pick(rng, 2)) {
            // Deferred: the same values, taken a few rows at a time.
            const auto block = static_cast<uint32_t>(1 + pick(rng, H + 1));
            AccumulatorCube deferred;
            deferred.batches = batches;
            deferred.width = W;
            deferred.height = H;
            deferred.channels = C;
            deferred.precision = cube.precision;
            deferred.channel_stride = cube.channel_stride;
            deferred.deferred = std::make_shared<TestRows>(cube, block);
            cube = deferred;
        }
    }
    return p;
}

struct Outcome {
    std::vector<uint8_t> memory;
    std::vector<uint32_t> sdp_status, rdma_status;
    uint64_t bytes_written = 0, bytes_read = 0, faults = 0, errors = 0;
    std::string error;
    bool deferred_used_once = true;
    std::vector<int16_t> pdp;  // what PDP received
    bool operator==(const Outcome&) const = default;
};

// Programs run one after the other by one SDP unit over one memory (each region mapped by the
// first program that uses it), each outcome taken after its program (the counts of bytes and
// faults summed from the first).
std::vector<Outcome> run_in_a_row(const std::vector<Program>& programs, bool scalar) {
    force_scalar(scalar);
    FlatMemory memory;
    DeviceStats stats;
    Dma dma(memory, stats);
    std::map<uint64_t, std::byte*> regions;
    const auto region = [&](uint64_t address) {
        const auto [at, added] = regions.try_emplace(address, nullptr);
        if (added) at->second = memory.add_region(MemoryPort::Primary, address, kRegion);
        return at->second;
    };
    Words single;
    Sdp unit;
    std::vector<Outcome> outcomes;
    for (Program p : programs) {
        const HwConfig& cfg = test::config(p.config);
        Context ctx{cfg, dma, stats};
        auto* dst = reinterpret_cast<uint8_t*>(region(kDst));
        if (p.output.empty())
            std::memset(dst, 0, kRegion);
        else
            std::memcpy(dst, p.output.data(), kRegion);
        const uint64_t operand_base[3] = {kBs, kBn, kEw};
        for (int i = 0; i < 3; ++i)
            if (!p.operands[i].empty())
                std::memcpy(region(operand_base[i]), p.operands[i].data(), kRegion);
        if (p.offline) std::memcpy(region(kSrc), p.input.data(), kRegion);
        ElementCube to_pdp;
        unit.execute(ctx, single.group(), p.sdp.group(), p.uses_rdma ? p.rdma.group() : Group(),
                     p.offline ? nullptr : &p.cube, p.to_pdp ? &to_pdp : nullptr);
        Outcome& o = outcomes.emplace_back();
        o.memory.assign(dst, dst + kRegion);
        for (uint32_t reg : {NVDLA_SDP_D_STATUS, NVDLA_SDP_D_PERF_OUT_SATURATION,
                             NVDLA_SDP_D_STATUS_NAN_OUTPUT_NUM, NVDLA_SDP_D_PERF_LUT_LE_HIT})
            o.sdp_status.push_back(p.sdp.w[reg / 4]);
        for (uint32_t reg :
             {NVDLA_SDP_RDMA_D_STATUS_NAN_INPUT_NUM, NVDLA_SDP_RDMA_D_STATUS_INF_INPUT_NUM})
            o.rdma_status.push_back(p.rdma.w[reg / 4]);
        o.bytes_written = stats.bytes_written;
        o.bytes_read = stats.bytes_read;
        o.faults = stats.faults;
        o.errors = stats.programming_errors;
        o.error = stats.last_error;
        o.pdp = to_pdp.values;
        if (!p.offline && p.cube.deferred)
            o.deferred_used_once = static_cast<TestRows&>(*p.cube.deferred).used_once();
    }
    force_scalar(false);
    return outcomes;
}

Outcome run(const Program& p, bool scalar) {
    return run_in_a_row({p}, scalar).front();
}

// SDP_RDMA programmed for a program whose input comes from CACC (no input read) but whose
// operands are read from memory: the cube and formats SDP's.
void program_operand_rdma(Program& p) {
    const Words& sdp = p.sdp;
    const uint32_t format = sdp.w[NVDLA_SDP_D_DATA_FORMAT / 4];
    const uint32_t proc = format & 3u, out = format >> 2 & 3u;
    const uint32_t batches = (sdp.w[NVDLA_SDP_D_FEATURE_MODE_CFG / 4] >> 8 & 0x1fu) + 1;
    p.rdma.set(NVDLA_SDP_RDMA_D_DATA_CUBE_WIDTH, sdp.w[NVDLA_SDP_D_DATA_CUBE_WIDTH / 4]);
    p.rdma.set(NVDLA_SDP_RDMA_D_DATA_CUBE_HEIGHT, sdp.w[NVDLA_SDP_D_DATA_CUBE_HEIGHT / 4]);
    p.rdma.set(NVDLA_SDP_RDMA_D_DATA_CUBE_CHANNEL, sdp.w[NVDLA_SDP_D_DATA_CUBE_CHANNEL / 4]);
    p.rdma.set(NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG,
               1u | proc << 2 | proc << 4 | out << 6 |
                   NVDLA_FIELD_SET(SDP_RDMA, D_FEATURE_MODE_CFG, BATCH_NUMBER, batches - 1));
    p.uses_rdma = true;
}

// X1's ALU and MUL operands for a requantisation: per kernel from memory or from registers, ALU
// shift 0 to 15 and MUL shift 0 to 45; a third of the time small operands and shifts below 16,
// whose products stay within the 32-bit lanes' form for them (XParams::narrow_low).
void program_x1_operands(Words& sdp, std::mt19937_64& rng, bool from_memory) {
    const uint32_t source = from_memory ? 1u : 0u;
    sdp.set(NVDLA_SDP_D_DP_BS_ALU_CFG, static_cast<uint32_t>(pick(rng, 16)) << 8 | source);
    sdp.set(NVDLA_SDP_D_DP_BS_MUL_CFG, static_cast<uint32_t>(pick(rng, 46)) << 8 | source);
    if (pick(rng, 3) == 0) {
        sdp.set(NVDLA_SDP_D_DP_BS_ALU_CFG, static_cast<uint32_t>(pick(rng, 4)) << 8 | source);
        sdp.set(NVDLA_SDP_D_DP_BS_MUL_CFG, static_cast<uint32_t>(pick(rng, 16)) << 8 | source);
        sdp.set(NVDLA_SDP_D_DP_BS_ALU_SRC_VALUE,
                static_cast<uint16_t>(int32_t(pick(rng, 2001)) - 1000));
        sdp.set(NVDLA_SDP_D_DP_BS_MUL_SRC_VALUE,
                static_cast<uint16_t>(int32_t(pick(rng, 4001)) - 2000));
    }
}
// SDP_RDMA reading random per-kernel operands from memory where `memory` says so (BRDMA: ALU and
// MUL, two bytes each; NRDMA: ALU, one byte), else its DMA off; `positive_multipliers` clears
// the sign of BRDMA's MUL components.
void program_kernel_operands(Program& p, std::mt19937_64& rng, std::array<bool, 2> memory,
                             bool positive_multipliers) {
    const Words& sdp = p.sdp;
    const uint32_t W = sdp.w[NVDLA_SDP_D_DATA_CUBE_WIDTH / 4] + 1;
    const uint32_t H = sdp.w[NVDLA_SDP_D_DATA_CUBE_HEIGHT / 4] + 1;
    const uint32_t proc = sdp.w[NVDLA_SDP_D_DATA_FORMAT / 4] & 3u;
    const uint32_t atom = test::config(p.config).atom_bytes, group = atom / (proc == 0 ? 1 : 2);
    const uint32_t dma_cfg[2] = {NVDLA_SDP_RDMA_D_BRDMA_CFG, NVDLA_SDP_RDMA_D_NRDMA_CFG};
    const uint32_t dma_base[2] = {NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW,
                                  NVDLA_SDP_RDMA_D_BN_BASE_ADDR_LOW};
    const uint32_t dma_line[2] = {NVDLA_SDP_RDMA_D_BS_LINE_STRIDE, NVDLA_SDP_RDMA_D_BN_LINE_STRIDE};
    const uint32_t dma_surface[2] = {NVDLA_SDP_RDMA_D_BS_SURFACE_STRIDE,
                                     NVDLA_SDP_RDMA_D_BN_SURFACE_STRIDE};
    const uint64_t address[2] = {kBs, kBn};
    for (int d = 0; d < 2; ++d) {
        if (!memory[d]) {
            p.rdma.set(dma_cfg[d], 1);
            continue;
        }
        const uint32_t use = d == 0 ? 2 : 1, size = d == 0 ? 1 : 0;
        p.rdma.set(dma_cfg[d], NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_USE, use) |
                                   NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_SIZE, size) |
                                   NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_RAM_TYPE, 1u));
        p.rdma.set(dma_base[d], static_cast<uint32_t>(address[d]));
        const uint32_t value = (use == 2 ? 2 : 1) * (size + 1);
        p.rdma.set(dma_line[d], W * atom * 4);
        p.rdma.set(dma_surface[d], W == 1 && H == 1 ? group * value : W * atom * 4 * H);
        p.operands[d].resize(kRegion);
        for (uint8_t& b : p.operands[d]) b = static_cast<uint8_t>(rng());
        // The MUL component's high byte (ALU first, little-endian int16s).
        if (d == 0 && positive_multipliers)
            for (size_t b = 3; b < p.operands[d].size(); b += 4) p.operands[d][b] &= 0x7f;
    }
    if (!p.uses_rdma && (memory[0] || memory[1])) program_operand_rdma(p);
}
// p run by the scalar stages and at `level` (program i): the same outcome. `ran` counts the
// programs that wrote their output without errors or faults.
::testing::AssertionResult same_as_scalar(const Program& p, IsaLevel level, int i, int& ran) {
    const Outcome scalar = run(p, true);
    const Outcome at_level = run(p, false);
    if (at_level.error != scalar.error || !(at_level == scalar))
        return ::testing::AssertionFailure()
               << isa_name(level) << ", program " << i << ": error '" << at_level.error
               << "' (scalar: '" << scalar.error << "')"
               << (at_level.error == scalar.error ? ", other memory or registers" : "");
    ran += scalar.errors == 0 && scalar.faults == 0 && scalar.bytes_written > 0;
    return ::testing::AssertionSuccess();
}

TEST(SdpSimd, RandomOperationsMatchTheScalarStages) {
    const std::vector<IsaLevel> levels = levels_of_this_cpu();
    ASSERT_FALSE(levels.empty());
    EXPECT_EQ(levels.front(), IsaLevel::Scalar);
    bool simd_ran = false;
    for (IsaLevel level : levels) {
        const IsaLimit limit(level);
        // The vector forms run at the AVX2 and AVX-512 levels.
        EXPECT_EQ(simd_enabled(), level != IsaLevel::Scalar) << isa_name(level);
        simd_ran |= simd_enabled();
        auto rng = test::rng_for_test();
        int ran = 0;
        TestRows::finished = 0;
        for (int i = 0; i < 300; ++i) {
            const Program p = random_program(rng);
            const Outcome scalar = run(p, true);
            const Outcome at_level = run(p, false);
            ASSERT_EQ(at_level.error, scalar.error) << isa_name(level) << ", program " << i;
            ASSERT_TRUE(scalar.deferred_used_once && at_level.deferred_used_once)
                << isa_name(level) << ", program " << i;

            ASSERT_TRUE(at_level == scalar)
                << isa_name(level) << ", program " << i << " on " << p.config;
            ran += scalar.errors == 0 && scalar.faults == 0 && scalar.bytes_written > 0;
        }
        EXPECT_GT(ran, 250) << isa_name(level);  // most programs are valid and write output
        // Deferred cubes took the fused pass's blocks at the vector levels, never at scalar.
        if (simd_enabled())
            EXPECT_GT(TestRows::finished, 10) << isa_name(level);
        else
            EXPECT_EQ(TestRows::finished, 0);
    }
    EXPECT_EQ(simd_ran, levels.back() != IsaLevel::Scalar);
}

// A residual network's SDP (the fused pass's residual form): X1 a requantisation from
// registers (SUM and MUL, shift 0 to 45), X2 off, Y summing one-byte operands per element
// (read in place) through a convertor within the 32-bit lanes or bypassed, an output
// convertor of shift 0 to 25, on random operations of every other kind.
TEST(SdpSimd, ResidualSumsMatchTheScalarStages) {
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        auto rng = test::rng_for_test();
        int ran = 0;
        for (int i = 0; i < 100; ++i) {
            Program p = random_program(rng);
            Words& sdp = p.sdp;
            const HwConfig& cfg = test::config(p.config);
            if (!nvdla_hw_has(&cfg, NVDLA_FEATURE_SDP_EW)) continue;
            sdp.set(NVDLA_SDP_D_DP_BS_CFG, 2u << 2 | (pick(rng, 2) ? 1u << 6 : 0u));  // SUM, MUL
            sdp.set(NVDLA_SDP_D_DP_BS_ALU_CFG, static_cast<uint32_t>(pick(rng, 16)) << 8);
            sdp.set(NVDLA_SDP_D_DP_BS_MUL_CFG, static_cast<uint32_t>(pick(rng, 46)) << 8);
            sdp.set(NVDLA_SDP_D_DP_BN_CFG, 1);
            sdp.set(NVDLA_SDP_D_DP_EW_CFG, 0x58);  // ALU SUM; MUL and LUT bypassed
            sdp.set(NVDLA_SDP_D_DP_EW_ALU_CFG,
                    NVDLA_FIELD_SET(SDP, D_DP_EW_ALU_CFG, EW_ALU_SRC, 1u) |
                        NVDLA_FIELD_SET(SDP, D_DP_EW_ALU_CFG, EW_ALU_CVT_BYPASS,
                                        pick(rng, 4) == 0 ? 1u : 0u));
            sdp.set(NVDLA_SDP_D_DP_EW_ALU_CVT_OFFSET_VALUE,
                    static_cast<uint32_t>(int32_t(pick(rng, 2049)) - 1024));
            sdp.set(NVDLA_SDP_D_DP_EW_ALU_CVT_SCALE_VALUE,
                    static_cast<uint16_t>(int32_t(pick(rng, 32769)) - 16384));
            sdp.set(NVDLA_SDP_D_DP_EW_ALU_CVT_TRUNCATE_VALUE, static_cast<uint32_t>(pick(rng, 31)));
            sdp.set(NVDLA_SDP_D_CVT_SHIFT, static_cast<uint32_t>(pick(rng, 26)));
            // ERDMA: ALU, one byte, per element; BRDMA and NRDMA off.
            const uint32_t W = sdp.w[NVDLA_SDP_D_DATA_CUBE_WIDTH / 4] + 1;
            const uint32_t H = sdp.w[NVDLA_SDP_D_DATA_CUBE_HEIGHT / 4] + 1;
            const uint32_t proc = sdp.w[NVDLA_SDP_D_DATA_FORMAT / 4] & 3u;
            const uint32_t atom = cfg.atom_bytes, group = atom / (proc == 0 ? 1 : 2);
            p.rdma.set(NVDLA_SDP_RDMA_D_BRDMA_CFG, 1);
            p.rdma.set(NVDLA_SDP_RDMA_D_NRDMA_CFG, 1);
            p.rdma.set(NVDLA_SDP_RDMA_D_ERDMA_CFG, 0x32);
            p.rdma.set(NVDLA_SDP_RDMA_D_EW_BASE_ADDR_LOW, static_cast<uint32_t>(kEw));
            p.rdma.set(NVDLA_SDP_RDMA_D_EW_LINE_STRIDE, W * group);
            p.rdma.set(NVDLA_SDP_RDMA_D_EW_SURFACE_STRIDE,
                       W == 1 && H == 1 ? group : W * group * H);
            p.operands[2].resize(kRegion);
            for (uint8_t& b : p.operands[2]) b = static_cast<uint8_t>(rng());
            if (!p.uses_rdma) program_operand_rdma(p);
            ASSERT_TRUE(same_as_scalar(p, level, i, ran));
        }
        EXPECT_GT(ran, 60) << isa_name(level);
    }
}

// A residual network's SDP as nv_small and nv_full's builders program the sum and its ReLU (the
// fused pass's memory-sum form): X1 a requantisation from registers or per kernel (SUM and MUL,
// shift 0 to 45, ReLU or not; a third with small operands and shifts below 16), X2 summing
// per-element operands of one or two bytes (SUM or the int pipelines' 3, shift 0 to 15) without
// multiplier or shift, ReLU or not; now and then X2 with a multiplier or a shift, or Y on, which
// take the general form; output convertors of shift 0 to 25. Half the operands lie in place of
// the output (a sum written over its operand: read before the output overwrites them). A
// third of the operations of one batch without a precision conversion, flying or reading their
// input, hand their output to PDP (the last residual block before a global pooling).
// A third of the programs whose output PDP could take (one batch, the output precision the
// processing one) sent to PDP instead of memory.
void send_to_pdp_now_and_then(Program& p, std::mt19937_64& rng) {
    const uint32_t format = p.sdp.w[NVDLA_SDP_D_DATA_FORMAT / 4];
    const uint32_t mode = p.sdp.w[NVDLA_SDP_D_FEATURE_MODE_CFG / 4];
    p.to_pdp = (format >> 2) == (format & 3u) &&
               NVDLA_FIELD_GET(SDP, D_FEATURE_MODE_CFG, BATCH_NUMBER, mode) == 0 &&
               pick(rng, 3) == 0;
    if (p.to_pdp)
        p.sdp.set(NVDLA_SDP_D_FEATURE_MODE_CFG,
                  mode | NVDLA_FIELD_SET(SDP, D_FEATURE_MODE_CFG, OUTPUT_DST, 1u));
}

TEST(SdpSimd, MemorySumsAfterRequantisationMatchTheScalarStages) {
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        auto rng = test::rng_for_test();
        int ran = 0, to_pdp = 0, offline_to_pdp = 0;
        for (int i = 0; i < 150; ++i) {
            Program p = random_program(rng);
            Words& sdp = p.sdp;
            const HwConfig& cfg = test::config(p.config);
            const uint32_t W = sdp.w[NVDLA_SDP_D_DATA_CUBE_WIDTH / 4] + 1;
            const uint32_t H = sdp.w[NVDLA_SDP_D_DATA_CUBE_HEIGHT / 4] + 1;
            const uint32_t proc = sdp.w[NVDLA_SDP_D_DATA_FORMAT / 4] & 3u;
            const uint32_t atom = cfg.atom_bytes, group = atom / (proc == 0 ? 1 : 2);
            send_to_pdp_now_and_then(p, rng);
            sdp.set(NVDLA_SDP_D_DP_BS_CFG, 2u << 2 | (pick(rng, 2) ? 1u << 6 : 0u));  // SUM, MUL
            const bool bs_memory = pick(rng, 3) == 0;
            program_x1_operands(sdp, rng, bs_memory);
            // X2: SUM (or 3) from memory; now and then a multiplier or a shift.
            const bool bn_mul = pick(rng, 8) == 0;
            sdp.set(NVDLA_SDP_D_DP_BN_CFG, static_cast<uint32_t>(2 + pick(rng, 2)) << 2 |
                                               (bn_mul ? 0u : 1u << 4) |
                                               (pick(rng, 2) ? 1u << 6 : 0u));
            sdp.set(NVDLA_SDP_D_DP_BN_ALU_CFG, static_cast<uint32_t>(pick(rng, 16)) << 8 | 1u);
            sdp.set(NVDLA_SDP_D_DP_BN_MUL_CFG,
                    static_cast<uint32_t>(pick(rng, 8) == 0 ? pick(rng, 8) : 0) << 8);
            if (pick(rng, 6)) sdp.set(NVDLA_SDP_D_DP_EW_CFG, 1);  // Y off
            sdp.set(NVDLA_SDP_D_CVT_SHIFT, static_cast<uint32_t>(pick(rng, 26)));
            // BRDMA: ALU and MUL per kernel, two bytes each.
            if (bs_memory) {
                p.rdma.set(NVDLA_SDP_RDMA_D_BRDMA_CFG,
                           NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_USE, 2u) |
                               NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_SIZE, 1u) |
                               NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_RAM_TYPE, 1u));
                p.rdma.set(NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW, static_cast<uint32_t>(kBs));
                p.rdma.set(NVDLA_SDP_RDMA_D_BS_LINE_STRIDE, W * atom * 4);
                p.rdma.set(NVDLA_SDP_RDMA_D_BS_SURFACE_STRIDE,
                           W == 1 && H == 1 ? group * 4 : W * atom * 4 * H);
                p.operands[0].resize(kRegion);
                for (uint8_t& b : p.operands[0]) b = static_cast<uint8_t>(rng());
            } else {
                p.rdma.set(NVDLA_SDP_RDMA_D_BRDMA_CFG, 1);
            }
            // NRDMA: ALU per element, in place of the output (its values per element as wide
            // as the output's, its strides) or apart, one or two bytes.
            const bool in_place = pick(rng, 2);
            const uint32_t size = in_place ? proc : static_cast<uint32_t>(pick(rng, 2));
            p.rdma.set(NVDLA_SDP_RDMA_D_NRDMA_CFG,
                       NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_USE, 1u) |
                           NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_SIZE, size) |
                           NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_MODE, 1u) |
                           NVDLA_FIELD_SET(SDP_RDMA, D_BRDMA_CFG, BRDMA_RAM_TYPE, 1u));
            std::vector<uint8_t>& memory = in_place ? p.output : p.operands[1];
            memory.resize(kRegion);
            for (uint8_t& b : memory) b = static_cast<uint8_t>(rng());
            if (in_place) {
                p.rdma.set(NVDLA_SDP_RDMA_D_BN_BASE_ADDR_LOW, static_cast<uint32_t>(kDst));
                p.rdma.set(NVDLA_SDP_RDMA_D_BN_LINE_STRIDE, sdp.w[NVDLA_SDP_D_DST_LINE_STRIDE / 4]);
                p.rdma.set(NVDLA_SDP_RDMA_D_BN_SURFACE_STRIDE,
                           sdp.w[NVDLA_SDP_D_DST_SURFACE_STRIDE / 4]);
            } else {
                const uint32_t line = W * group * (size + 1);
                p.rdma.set(NVDLA_SDP_RDMA_D_BN_BASE_ADDR_LOW, static_cast<uint32_t>(kBn));
                p.rdma.set(NVDLA_SDP_RDMA_D_BN_LINE_STRIDE, line);
                p.rdma.set(NVDLA_SDP_RDMA_D_BN_SURFACE_STRIDE,
                           W == 1 && H == 1 ? group * (size + 1) : line * H);
            }
            if (!p.uses_rdma) program_operand_rdma(p);
            const int before = ran;
            ASSERT_TRUE(same_as_scalar(p, level, i, ran));
            const bool handed = p.to_pdp && ran == before && !run(p, true).pdp.empty();
            to_pdp += handed;
            offline_to_pdp += handed && p.offline;
        }
        EXPECT_GT(ran, 70) << isa_name(level);
        EXPECT_GT(to_pdp, 10) << isa_name(level);
        EXPECT_GT(offline_to_pdp, 3) << isa_name(level);
    }
}

// A clip after a convolution's requantisation (ReLU6: the fused pass's clip form): X1 summing
// and multiplying (shift 0 to 45, operands from registers or per kernel, ReLU or not; a third
// with small operands and shifts below 16), X2 a MAX
// or MIN (or its ALU bypassed) without multiplier or shift, from a register or per kernel; now
// and then X2 with a multiplier, a shift or a SUM, or Y on, which take the general form; output
// convertors of shift 0 to 25, on random operations of every other kind.
TEST(SdpSimd, ClipsAfterRequantisationMatchTheScalarStages) {
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        auto rng = test::rng_for_test();
        int ran = 0;
        for (int i = 0; i < 120; ++i) {
            Program p = random_program(rng);
            Words& sdp = p.sdp;
            sdp.set(NVDLA_SDP_D_DP_BS_CFG, 2u << 2 | (pick(rng, 2) ? 1u << 6 : 0u));  // SUM, MUL
            const bool bs_memory = pick(rng, 2);
            program_x1_operands(sdp, rng, bs_memory);
            // X2: MAX, MIN (a SUM now and then, which takes the general form), or its ALU
            // bypassed; mostly without multiplier and shift.
            const bool bn_alu_bypass = pick(rng, 6) == 0, bn_mul = pick(rng, 8) == 0;
            const uint32_t bn_algo = pick(rng, 8) == 0 ? 2u : static_cast<uint32_t>(pick(rng, 2));
            sdp.set(NVDLA_SDP_D_DP_BN_CFG, (bn_alu_bypass ? 2u : 0u) | bn_algo << 2 |
                                               (bn_mul ? 0u : 1u << 4) |
                                               (pick(rng, 2) ? 1u << 6 : 0u));
            const bool bn_memory = pick(rng, 2);
            sdp.set(NVDLA_SDP_D_DP_BN_ALU_CFG,
                    static_cast<uint32_t>(pick(rng, 16)) << 8 | (bn_memory ? 1u : 0u));
            sdp.set(NVDLA_SDP_D_DP_BN_MUL_CFG,
                    static_cast<uint32_t>(pick(rng, 8) == 0 ? pick(rng, 8) : 0) << 8);
            if (pick(rng, 6)) sdp.set(NVDLA_SDP_D_DP_EW_CFG, 1);  // Y off
            sdp.set(NVDLA_SDP_D_CVT_SHIFT, static_cast<uint32_t>(pick(rng, 26)));
            program_kernel_operands(p, rng, {bs_memory, bn_memory && !bn_alu_bypass}, false);
            ASSERT_TRUE(same_as_scalar(p, level, i, ran));
        }
        EXPECT_GT(ran, 80) << isa_name(level);
    }
}

// p programmed as a convolution's requantisation with its ReLU, alone or then bounded by X2
// (MobileNetV2's ReLU6), which the fused pass computes after the ReLU (the rectified forms) on
// lines whose multipliers are all >= 0 and whose inputs lie within 2^30, and a convertor without
// its saturation count as a clamp of its input (plan_c_clamp): X1 summing and multiplying with its
// ReLU (shifts of 14 to 18, 0 to 15 or 0 to 45), multipliers mostly >= 0 (from a register or per
// kernel; half the time small ones and small biases, with X2's operands and the convertor's offset
// small enough to show X's rounding), X2 a MIN (mostly), a MAX or its ALU bypassed, or off, whose
// operands now and then reach the 32-bit limit of the forms below a shift of 16; convertors of
// shift 0 to 30 and either sign, their flag counted or not; CACC's values within 2^20 or anything.
void program_rectified(Program& p, std::mt19937_64& rng) {
    Words& sdp = p.sdp;
    sdp.set(NVDLA_SDP_D_DP_BS_CFG, 2u << 2);  // SUM, MUL, ReLU
    // Small multipliers and biases (from registers) half the time, whose products
    // land within the output's range, where X's rounding shows.
    const bool small = pick(rng, 2);
    const bool bs_memory = !small && pick(rng, 2);
    const uint64_t kind = pick(rng, 3);
    const auto shift = static_cast<uint32_t>(kind == 0   ? 14 + pick(rng, 5)
                                             : kind == 1 ? pick(rng, 16)
                                                         : pick(rng, 46));
    sdp.set(NVDLA_SDP_D_DP_BS_ALU_CFG,
            static_cast<uint32_t>(pick(rng, 16)) << 8 | (bs_memory ? 1u : 0u));
    sdp.set(NVDLA_SDP_D_DP_BS_MUL_CFG, shift << 8 | (bs_memory ? 1u : 0u));
    sdp.set(NVDLA_SDP_D_DP_BS_MUL_SRC_VALUE, static_cast<uint16_t>(small ? 1 + pick(rng, 4096)
                                                                   : pick(rng, 5) ? pick(rng, 32768)
                                                                                  : rng()));
    if (small) {
        sdp.set(NVDLA_SDP_D_DP_BS_ALU_CFG, bs_memory ? 1u : 0u);
        sdp.set(NVDLA_SDP_D_DP_BS_ALU_SRC_VALUE, static_cast<uint16_t>(pick(rng, 1001)));
    }
    // X2: a bound (MIN mostly) without multiplier or shift, or off.
    const bool bn_on = pick(rng, 5) != 0;
    const bool bn_alu_bypass = pick(rng, 8) == 0;
    const uint32_t bn_algo = pick(rng, 4) == 0 ? 0u : 1u;
    sdp.set(NVDLA_SDP_D_DP_BN_CFG, (bn_on ? 0u : 1u) | (bn_alu_bypass ? 2u : 0u) | bn_algo << 2 |
                                       1u << 4 | (pick(rng, 2) ? 1u << 6 : 0u));
    const bool bn_memory = bn_on && !bn_alu_bypass && pick(rng, 2);
    // From a register, shifted now and then to the limit of the forms below a shift
    // of 16 (2^31 - 2^(17 - shift)).
    sdp.set(NVDLA_SDP_D_DP_BN_ALU_CFG,
            static_cast<uint32_t>(pick(rng, 3) ? pick(rng, 16) : 14 + pick(rng, 4)) << 8 |
                (bn_memory ? 1u : 0u));
    sdp.set(NVDLA_SDP_D_DP_BN_ALU_SRC_VALUE,
            static_cast<uint16_t>(pick(rng, 2) && !small ? awkward16(rng) : 0x7ffe + pick(rng, 2)));
    sdp.set(NVDLA_SDP_D_DP_BN_MUL_CFG, 0);
    sdp.set(NVDLA_SDP_D_DP_EW_CFG, 1);  // Y off
    // Small convertor shifts and scales now and then, which keep X's last bit.
    const bool fine = small || pick(rng, 2);
    sdp.set(NVDLA_SDP_D_CVT_SHIFT, static_cast<uint32_t>(fine ? pick(rng, 3) : pick(rng, 31)));
    sdp.set(NVDLA_SDP_D_CVT_SCALE, static_cast<uint16_t>(fine           ? 1 + pick(rng, 4)
                                                         : pick(rng, 4) ? 1 + pick(rng, 32767)
                                                                        : awkward16(rng)));
    sdp.set(
        NVDLA_SDP_D_CVT_OFFSET,
        static_cast<uint32_t>(pick(rng, 2) || small ? int32_t(pick(rng, 9)) - 4 : awkward(rng)));
    if (pick(rng, 2)) sdp.w[NVDLA_SDP_D_PERF_ENABLE / 4] &= ~(1u << 2);  // no PERF_SAT_EN
    // The BRDMA multipliers >= 0 in most programs.
    const bool positive = pick(rng, 5) != 0;
    program_kernel_operands(p, rng, {bs_memory, bn_memory}, positive);
}

// `programs` random programs made by make(p, rng) (false: not this one), each against the
// scalar stages at every level; more than `at_least` must run without errors at each.
template <class Make>
void expect_programs_match_the_scalar_stages(int programs, int at_least, const Make& make) {
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        auto rng = test::rng_for_test();
        int ran = 0;
        for (int i = 0; i < programs; ++i) {
            Program p = random_program(rng);
            if (!make(p, rng)) continue;
            ASSERT_TRUE(same_as_scalar(p, level, i, ran));
        }
        EXPECT_GT(ran, at_least) << isa_name(level);
    }
}

TEST(SdpSimd, RectifiedRequantisationsMatchTheScalarStages) {
    expect_programs_match_the_scalar_stages(150, 100, [](Program& p, std::mt19937_64& rng) {
        program_rectified(p, rng);
        return true;
    });
}
// The rectified lines' constants, made once per channel group before the pass (GroupConstants):
// operations of up to 400 channels (13 groups of 32, 50 of 8 on nv_small), whose per-kernel X1
// and X2 operands differ from group to group, on cubes taken whole or by blocks; two programmings
// of one cube run by one SDP unit over one memory, then the first again (other operands in the
// same places, other multipliers and shifts, another convertor): constants kept from another
// group or an earlier operation would show in the bytes.
TEST(SdpSimd, RectifiedLinesTakeTheConstantsOfTheirOwnGroupAndOperation) {
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        SCOPED_TRACE(isa_name(level));
        auto rng = test::rng_for_test();
        int ran = 0;
        for (int i = 0; i < 40; ++i) {
            Program first = random_program(rng, 400);
            program_rectified(first, rng);
            Program second = first;
            program_rectified(second, rng);
            const std::vector<Program> programs{first, second, first};
            const std::vector<Outcome> scalar = run_in_a_row(programs, true);
            const std::vector<Outcome> at_level = run_in_a_row(programs, false);
            for (size_t k = 0; k < programs.size(); ++k)
                ASSERT_TRUE(at_level[k] == scalar[k]) << "program " << i << ", operation " << k
                                                      << ": error '" << at_level[k].error << "'";
            ran += scalar.back().errors == 0 && scalar.back().faults == 0 &&
                   scalar.front().bytes_written > 0;
        }
        EXPECT_GT(ran, 25);
    }
}

// The bounded lines' input clamp (Fused::input_clamps) leaves int32 where the cap on X1's sum
// nears 2^31 (multipliers of 1 or 2) and the bias is negative, and r jumps past a bound where
// the multiplier exceeds 2^shift: such lines must keep the bounded form. Rectified programs with
// register operands made so (biases down to -2^30, shifts 0 to 30), half with the convertor that
// only saturates (its clamp then never binds), CACC's values anywhere.
TEST(SdpSimd, RectifiedLinesWithUnitMultipliersAndNegativeBiasesMatchTheScalarStages) {
    expect_programs_match_the_scalar_stages(120, 40, [](Program& p, std::mt19937_64& rng) {
        program_rectified(p, rng);
        Words& sdp = p.sdp;
        if (sdp.w[NVDLA_SDP_D_DP_BS_ALU_CFG / 4] & 1u) return false;  // X1's operands in memory
        const auto shift = static_cast<uint32_t>(pick(rng, 31));
        sdp.set(NVDLA_SDP_D_DP_BS_ALU_CFG, static_cast<uint32_t>(pick(rng, 16)) << 8);
        sdp.set(NVDLA_SDP_D_DP_BS_ALU_SRC_VALUE,
                static_cast<uint16_t>(-1 - static_cast<int32_t>(pick(rng, 32768))));
        sdp.set(NVDLA_SDP_D_DP_BS_MUL_CFG, shift << 8);
        sdp.set(NVDLA_SDP_D_DP_BS_MUL_SRC_VALUE,
                static_cast<uint32_t>(pick(rng, 4) ? 1 + pick(rng, 2) : pick(rng, 32768)));
        if (pick(rng, 2)) {
            sdp.set(NVDLA_SDP_D_CVT_OFFSET, 0);
            sdp.set(NVDLA_SDP_D_CVT_SCALE, 1);
            sdp.set(NVDLA_SDP_D_CVT_SHIFT, 0);
            sdp.w[NVDLA_SDP_D_PERF_ENABLE / 4] &= ~(1u << 2);  // no PERF_SAT_EN
        }
        return true;
    });
}

// The clamped lines' convertor in 16-bit lanes (AVX2, int8 groups of 32 channels: X1's results
// within [0, 2^15), a convertor shift of 16 or more and -offset * scale + half a multiple of
// 2^16): rectified programs on nv_full, int8 to int8, X1's shifts 12 to 18, X2 a MIN by a
// register up to 32767 (mostly at its edges; a quarter shifted by 1, beyond 2^15), so that X1's
// results reach the largest the form takes and beyond; convertors of shifts 16 to 30 (a quarter
// 16) and scales >= 0 with offsets 0 or -2^16 k, or scales < 0 with shifts 24 to 30 and offsets
// of 2^16 or 2^17 (beyond every result), scales at their extremes now and then; an eighth with
// shifts 12 to 15 and small offsets (the 32-bit form). Every level against the scalar stages
// (counted during the work: about a hundred lines of the 1000 programs take the form at the avx2
// level).
TEST(SdpSimd, ClampedLinesWithTheConvertorInWordsMatchTheScalarStages) {
    expect_programs_match_the_scalar_stages(4000, 240, [](Program& p, std::mt19937_64& rng) {
        program_rectified(p, rng);
        Words& sdp = p.sdp;
        if (p.offline || std::string_view(p.config) != "nv_full" ||
            sdp.w[NVDLA_SDP_D_DATA_FORMAT / 4] != 0 || (sdp.w[NVDLA_SDP_D_DP_BN_ALU_CFG / 4] & 1u))
            return false;
        // X1's shifts of 12 to 18 (keeping its operands' source), where its multipliers rarely
        // jump past a bound.
        const uint32_t x1_memory = sdp.w[NVDLA_SDP_D_DP_BS_MUL_CFG / 4] & 1u;
        sdp.set(NVDLA_SDP_D_DP_BS_MUL_CFG,
                static_cast<uint32_t>(12 + pick(rng, 7)) << 8 | x1_memory);
        static constexpr uint16_t kBounds[] = {32767, 32766, 32765, 16384, 255, 0};
        sdp.set(NVDLA_SDP_D_DP_BN_CFG, 1u << 2 | 1u << 4 | (pick(rng, 2) ? 1u << 6 : 0u));
        // Now and then shifted by 1: bounds beyond 2^15, which keep the 32-bit form.
        sdp.set(NVDLA_SDP_D_DP_BN_ALU_CFG, pick(rng, 4) ? 0u : 1u << 8);
        sdp.set(NVDLA_SDP_D_DP_BN_ALU_SRC_VALUE,
                static_cast<uint32_t>(pick(rng, 2) ? kBounds[pick(rng, std::size(kBounds))]
                                                   : pick(rng, 32768)));
        // Negative scales with shifts of 24 to 30 and offsets of 2^16 or 2^17, where outputs
        // do not all saturate; a quarter of the shifts 16 (the half is 2^15), now and then 12
        // to 15 and small offsets.
        const bool negative = pick(rng, 2);
        const bool edge = pick(rng, 4) == 0;
        const auto scale =
            static_cast<int16_t>(negative ? (edge ? -32768 : -1 - int32_t(pick(rng, 32768)))
                                          : (edge ? 32767 : int32_t(pick(rng, 32768))));
        const bool other = pick(rng, 8) == 0;
        const uint32_t shift = static_cast<uint32_t>(other               ? 12 + pick(rng, 4)
                                                     : negative          ? 24 + pick(rng, 7)
                                                     : pick(rng, 4) == 0 ? 16
                                                                         : 16 + pick(rng, 15));
        const int32_t offset = other      ? int32_t(pick(rng, 9)) - 4
                               : negative ? 65536 * int32_t(1 + pick(rng, 2))
                                          : -65536 * int32_t(pick(rng, 3));
        sdp.set(NVDLA_SDP_D_CVT_SHIFT, shift);
        sdp.set(NVDLA_SDP_D_CVT_SCALE, static_cast<uint16_t>(scale));
        sdp.set(NVDLA_SDP_D_CVT_OFFSET, static_cast<uint32_t>(offset));
        sdp.w[NVDLA_SDP_D_PERF_ENABLE / 4] &= ~(1u << 2);  // no PERF_SAT_EN: the clamp form
        return true;
    });
}

// A flying cube taken by blocks on one thread makes each output line where it goes (the
// write DMA's place, checked and counted there): random operations whose output runs past the
// end of memory (the later lines fault and are dropped), half of them with lines that share
// bytes (a line stride below the line), write the same memory, counts and first fault as the
// scalar stages.
TEST(SdpSimd, LinesMadeInPlaceFaultAndOverlapAsTheScalarStages) {
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        auto rng = test::rng_for_test();
        int faulted = 0;
        TestRows::finished = 0;
        for (int i = 0; i < 200; ++i) {
            Program p = random_program(rng);
            if (p.offline || !p.cube.deferred) continue;
            Words& sdp = p.sdp;
            const uint32_t atom = test::config(p.config).atom_bytes;
            const uint32_t W = sdp.w[NVDLA_SDP_D_DATA_CUBE_WIDTH / 4] + 1;
            if (W > 1 && pick(rng, 2))
                sdp.set(NVDLA_SDP_D_DST_LINE_STRIDE, (W - 1 - uint32_t(pick(rng, W - 1))) * atom);
            // The last line of batch 0 ends `span` bytes after the base; the memory ends
            // somewhere before.
            const uint32_t H = sdp.w[NVDLA_SDP_D_DATA_CUBE_HEIGHT / 4] + 1;
            const uint32_t C = sdp.w[NVDLA_SDP_D_DATA_CUBE_CHANNEL / 4] + 1;
            const uint32_t bytes = (sdp.w[NVDLA_SDP_D_DATA_FORMAT / 4] >> 2 & 3u) ? 2 : 1;
            const uint64_t span = uint64_t((C * bytes + atom - 1) / atom - 1) *
                                      sdp.w[NVDLA_SDP_D_DST_SURFACE_STRIDE / 4] +
                                  uint64_t(H - 1) * sdp.w[NVDLA_SDP_D_DST_LINE_STRIDE / 4] +
                                  uint64_t(W) * atom;
            const uint64_t inside = atom * (1 + pick(rng, span / atom));
            sdp.set(NVDLA_SDP_D_DST_BASE_ADDR_LOW, static_cast<uint32_t>(kDst + kRegion - inside));
            const Outcome scalar = run(p, true);
            const Outcome at_level = run(p, false);
            ASSERT_TRUE(scalar.deferred_used_once && at_level.deferred_used_once)
                << isa_name(level) << ", program " << i;
            ASSERT_TRUE(at_level == scalar)
                << isa_name(level) << ", program " << i << " on " << p.config << ": error '"
                << at_level.error << "' (scalar: '" << scalar.error << "')";
            faulted += scalar.faults > 0 && scalar.bytes_written > 0;
        }
        EXPECT_GT(faulted, 20) << isa_name(level);  // some lines written, later ones dropped
        if (simd_enabled()) {
            EXPECT_GT(TestRows::finished, 20) << isa_name(level);
        }
    }
}

// The output convertor as a clamp (plan_c_clamp): every x outside [lower, upper] converts as
// its nearest bound does, the bounds are the last and first x with the extremes' outputs, and
// `exact` exactly when the products over [lower, upper] fit the 32-bit lanes.
TEST(SdpSimd, OutputConvertorClampKeepsEveryOutput) {
    auto rng = test::rng_for_test();
    const auto out = [](int64_t x, const precision::ConvertorParams& cvt, Precision output) {
        return precision::convert_to(output, x, cvt, precision::kSdpOutputConvertor).bits;
    };
    for (int i = 0; i < 3000; ++i) {
        precision::ConvertorParams cvt;
        cvt.offset = pick(rng, 2) ? awkward(rng) : int32_t(pick(rng, 201)) - 100;
        cvt.scale = pick(rng, 3) ? awkward16(rng) : int16_t(int32_t(pick(rng, 7)) - 3);
        cvt.shift = static_cast<uint32_t>(pick(rng, 4) ? pick(rng, 31) : pick(rng, 64));
        const Precision output = pick(rng, 2) ? Precision::Int8 : Precision::Int16;
        const CClampPlan plan = plan_c_clamp(cvt, output);
        SCOPED_TRACE(::testing::Message() << "offset " << cvt.offset << " scale " << cvt.scale
                                          << " shift " << cvt.shift);
        ASSERT_LE(plan.lower, plan.upper);
        const uint16_t at_min = out(INT32_MIN, cvt, output), at_max = out(INT32_MAX, cvt, output);
        if (at_min != at_max) {
            EXPECT_EQ(out(plan.lower, cvt, output), at_min);
            EXPECT_NE(out(int64_t(plan.lower) + 1, cvt, output), at_min);
            EXPECT_EQ(out(plan.upper, cvt, output), at_max);
            EXPECT_NE(out(int64_t(plan.upper) - 1, cvt, output), at_max);
        }
        for (int j = 0; j < 20; ++j) {
            const int32_t x = awkward(rng);
            EXPECT_EQ(out(std::clamp(x, plan.lower, plan.upper), cvt, output), out(x, cvt, output))
                << "x " << x;
        }
        // Exact: every product over the bounds and its rounding sum p + half - [p < 0] within
        // 32 bits (x - offset too).
        const uint32_t shift = cvt.shift & 63u;
        const auto fits = [&](int64_t x) {
            const int64_t p = (x - cvt.offset) * cvt.scale;
            const int64_t half = shift ? int64_t(1) << (shift - 1) : 0;
            const int64_t sum = shift ? p + half - (p < 0 ? 1 : 0) : p;
            return x - cvt.offset >= INT32_MIN && x - cvt.offset <= INT32_MAX && p >= INT32_MIN &&
                   p <= INT32_MAX && sum >= INT32_MIN && sum <= INT32_MAX;
        };
        EXPECT_EQ(plan.exact, shift <= 30 && fits(plan.lower) && fits(plan.upper));
    }
}

// Offline int8 -> int8 layers whose stages take every operand from registers, which the vector
// levels map byte by byte through a table of the scalar stages' results (run_fused; with
// AVX-512 VBMI's permutes, else the fused pass): random stages, convertors and counters as
// above, the operand DMAs off; at the AVX-512 level with VBMI and without (VbmiOff).
void check_offline_int8_register_layers(IsaLevel level) {
    auto rng = test::rng_for_test();
    int ran = 0;
    for (int i = 0; i < 60;) {
        Program p = random_program(rng);
        const uint32_t format = p.sdp.w[NVDLA_SDP_D_DATA_FORMAT / 4];
        const uint32_t mode = p.rdma.w[NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG / 4];
        if (!p.offline || format != 0 || ((mode >> 2) & 3u) != 0) continue;
        ++i;
        for (uint32_t reg : {NVDLA_SDP_D_DP_BS_ALU_CFG, NVDLA_SDP_D_DP_BS_MUL_CFG,
                             NVDLA_SDP_D_DP_BN_ALU_CFG, NVDLA_SDP_D_DP_BN_MUL_CFG})
            p.sdp.w[reg / 4] &= ~1u;  // SRC: the register
        p.sdp.w[NVDLA_SDP_D_DP_EW_ALU_CFG / 4] &=
            ~NVDLA_FIELD_SET(SDP, D_DP_EW_ALU_CFG, EW_ALU_SRC, 1u);
        p.sdp.w[NVDLA_SDP_D_DP_EW_MUL_CFG / 4] &=
            ~NVDLA_FIELD_SET(SDP, D_DP_EW_MUL_CFG, EW_MUL_SRC, 1u);
        p.sdp.w[NVDLA_SDP_D_DP_EW_CFG / 4] |= 0x40u;  // LUT bypassed
        for (uint32_t reg :
             {NVDLA_SDP_RDMA_D_BRDMA_CFG, NVDLA_SDP_RDMA_D_NRDMA_CFG, NVDLA_SDP_RDMA_D_ERDMA_CFG})
            p.rdma.set(reg, 1);  // disabled
        ASSERT_TRUE(same_as_scalar(p, level, i, ran));
    }
    EXPECT_GT(ran, 50) << isa_name(level);
}

TEST(SdpSimd, OfflineInt8LayersWithRegisterOperandsMatchTheScalarStages) {
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        SCOPED_TRACE(isa_name(level));
        check_offline_int8_register_layers(level);
        if (level != IsaLevel::Avx512) {
            EXPECT_FALSE(isa_vbmi());
            continue;
        }
        EXPECT_EQ(isa_vbmi(), __builtin_cpu_supports("avx512vbmi") && isa_vbmi_from_environment());
        const VbmiOff no_vbmi;
        EXPECT_FALSE(isa_vbmi());
        SCOPED_TRACE("without VBMI");
        check_offline_int8_register_layers(level);
    }
}

// An SDP unit keeps its buffers from operation to operation (sdp::Buffers), taken at each
// operation's sizes: random operations of up to 40 or 400 channels, flying (whole or deferred,
// its blocks made on 1, 2 or 3 threads) or offline, with operands from registers or memory, to
// memory or to PDP, run one after the other by one unit give each what it gives run alone by
// a new unit, at every level.
TEST(SdpSimd, OperationsInARowGiveWhatEachGivesAlone) {
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        SCOPED_TRACE(isa_name(level));
        auto rng = test::rng_for_test();
        std::vector<Program> programs;
        for (int i = 0; i < 300; ++i) {
            Program& p = programs.emplace_back(random_program(rng, i % 3 ? 40 : 400));
            send_to_pdp_now_and_then(p, rng);
            if (!p.offline && p.cube.deferred)
                static_cast<TestRows&>(*p.cube.deferred).set_threads(1 + i % 3);
        }
        const std::vector<Outcome> in_a_row = run_in_a_row(programs, false);
        int ran = 0, large = 0;
        for (size_t k = 0; k < programs.size(); ++k) {
            const Outcome alone = run(programs[k], false);
            Outcome o = in_a_row[k];
            // The row's counts are summed from its first operation, and its last error stays.
            if (k > 0) {
                const Outcome& before = in_a_row[k - 1];
                o.bytes_written -= before.bytes_written;
                o.bytes_read -= before.bytes_read;
                o.faults -= before.faults;
                o.errors -= before.errors;
            }
            if (o.errors == 0) o.error.clear();
            ASSERT_TRUE(o == alone) << "operation " << k << ": error '" << o.error << "'";
            const bool wrote = o.errors == 0 && o.faults == 0 && (o.bytes_written || o.pdp.size());
            ran += wrote;
            large += wrote && programs[k].sdp.w[NVDLA_SDP_D_DATA_CUBE_CHANNEL / 4] >= 64;
        }
        EXPECT_GT(ran, 20);
        EXPECT_GT(large, 5);
    }
}

}  // namespace
}  // namespace nvdla::emu::sdp
