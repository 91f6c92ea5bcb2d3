// CDP and CDP_RDMA driven through their registers as kmd/firmware/cdp.c programs them. LUT
// programs are chosen so that every lookup is worked out by hand (exact hits of a linear table,
// straight-line extrapolation); the rest of the datapath (input convertor, square sum over
// NORMALZ_LEN channels, multiplication, output convertor) is computed by a reference written
// here, over every lane of the destination so that stray writes are caught.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "nvdla/emu/device.hpp"
#include "nvdla/hw/register_map.hpp"
#include "test_support.hpp"

namespace nvdla::emu {
namespace {

constexpr uint64_t kSrc = 0x80000000;
constexpr uint64_t kDst = 0x80100000;
constexpr uint64_t kRegion = 0x10000;
constexpr uint32_t kInt8 = 0, kInt16 = 1, kFp16 = 2;
constexpr uint32_t kLeEntries = 65, kLoEntries = 257;

// One LRN operation in software terms.
struct Lrn {
    uint32_t precision = kInt8;
    uint32_t width = 1, height = 1, channels = 8;
    uint32_t normalz_len = 0;  // 0..3: 3, 5, 7 or 9 channels
    bool sqsum_bypass = false, mul_bypass = false, nan_to_zero = false;
    uint32_t in_offset = 0, in_scale = 1, in_shift = 0;
    uint32_t out_offset = 0, out_scale = 1, out_shift = 0;
    int rdma_precision = -1;  // CDP_RDMA's D_DATA_FORMAT when it should differ
};

// A LUT program, register for register.
struct Lut {
    std::vector<int16_t> le = std::vector<int16_t>(kLeEntries, 0);
    std::vector<int16_t> lo = std::vector<int16_t>(kLoEntries, 0);
    uint32_t cfg = 0;   // S_LUT_CFG: LE function, priorities
    uint32_t info = 0;  // S_LUT_INFO: LE index offset, LE/LO index select
    int64_t le_start = 0, le_end = 0, lo_start = 0, lo_end = 0;
    uint32_t le_slope_scale = 0, le_slope_shift = 0, lo_slope_scale = 0, lo_slope_shift = 0;
};

constexpr uint32_t kLeLinear = 1, kUflowLo = 1u << 4, kOflowLo = 1u << 5, kHybridLo = 1u << 6;

// LE exponent from 0 (hits from 1 up), LO linear from 0 with one entry per unit and the LO
// table chosen on a tie and on underflow: sums 0..255 read lo[sum] exactly.
Lut exact_lo_table() {
    Lut lut;
    lut.cfg = kUflowLo | kHybridLo;
    lut.le_end = 1ll << 36;
    lut.lo_end = 256;
    return lut;
}

class CdpRig {
  public:
    explicit CdpRig(const char* config)
        : cfg_(test::config(config)),
          map_(hw::RegisterMap::get(cfg_.reg_map)),
          device_(std::make_unique<Device>(cfg_, memory_)) {
        src_ = reinterpret_cast<uint8_t*>(memory_.add_region(MemoryPort::Primary, kSrc, kRegion));
        dst_ = reinterpret_cast<uint8_t*>(memory_.add_region(MemoryPort::Primary, kDst, kRegion));
    }

    const DeviceStats& stats() const { return device_->stats(); }
    uint8_t* dst() { return dst_; }

    void set(const char* unit, const char* reg, uint32_t value) {
        const hw::RegisterInfo* r = map_.find(unit, reg);
        ASSERT_NE(r, nullptr) << unit << "." << reg;
        device_->write_register(r->address, value);
    }
    uint32_t get(const char* unit, const char* reg) {
        const hw::RegisterInfo* r = map_.find(unit, reg);
        EXPECT_NE(r, nullptr) << unit << "." << reg;
        return r ? device_->read_register(r->address) : 0;
    }

    uint32_t element(const Lrn& l) const { return l.precision == kInt8 ? 1 : 2; }
    uint32_t lanes(const Lrn& l) const { return cfg_.atom_bytes / element(l); }
    uint32_t surfaces(const Lrn& l) const { return (l.channels + lanes(l) - 1) / lanes(l); }
    uint32_t line(const Lrn& l) const { return l.width * cfg_.atom_bytes; }
    uint32_t surface(const Lrn& l) const { return l.height * line(l); }
    uint64_t offset(const Lrn& l, uint32_t c, uint32_t h, uint32_t w) const {
        return uint64_t(c / lanes(l)) * surface(l) + uint64_t(h) * line(l) +
               uint64_t(w) * cfg_.atom_bytes + (c % lanes(l)) * element(l);
    }

    void put(const Lrn& l, uint32_t c, uint32_t h, uint32_t w, uint16_t v) {
        put_at(src_, l, c, h, w, v);
    }
    void put_at(uint8_t* image, const Lrn& l, uint32_t c, uint32_t h, uint32_t w,
                uint16_t v) const {
        uint8_t* at = image + offset(l, c, h, w);
        at[0] = static_cast<uint8_t>(v);
        if (l.precision != kInt8) at[1] = static_cast<uint8_t>(v >> 8);
    }
    int32_t input(const Lrn& l, uint32_t c, uint32_t h, uint32_t w) const {
        const uint8_t* at = src_ + offset(l, c, h, w);
        return l.precision == kInt8 ? int8_t(at[0]) : int16_t(at[0] | at[1] << 8);
    }
    uint16_t output(const Lrn& l, uint32_t c, uint32_t h, uint32_t w) const {
        const uint8_t* at = dst_ + offset(l, c, h, w);
        return l.precision == kInt8 ? at[0] : static_cast<uint16_t>(at[0] | at[1] << 8);
    }

    void program_lut(const Lut& lut) {
        write_table(false, lut.le);
        write_table(true, lut.lo);
        set("CDP", "S_LUT_CFG", lut.cfg);
        set("CDP", "S_LUT_INFO", lut.info);
        const auto wide = [&](const char* low, const char* high, int64_t v) {
            set("CDP", low, static_cast<uint32_t>(v));
            set("CDP", high, static_cast<uint32_t>(v >> 32) & 0x3f);
        };
        wide("S_LUT_LE_START_LOW", "S_LUT_LE_START_HIGH", lut.le_start);
        wide("S_LUT_LE_END_LOW", "S_LUT_LE_END_HIGH", lut.le_end);
        wide("S_LUT_LO_START_LOW", "S_LUT_LO_START_HIGH", lut.lo_start);
        wide("S_LUT_LO_END_LOW", "S_LUT_LO_END_HIGH", lut.lo_end);
        set("CDP", "S_LUT_LE_SLOPE_SCALE", lut.le_slope_scale);
        set("CDP", "S_LUT_LE_SLOPE_SHIFT", lut.le_slope_shift);
        set("CDP", "S_LUT_LO_SLOPE_SCALE", lut.lo_slope_scale);
        set("CDP", "S_LUT_LO_SLOPE_SHIFT", lut.lo_slope_shift);
    }
    void write_table(bool lo, const std::vector<int16_t>& entries) {
        set("CDP", "S_LUT_ACCESS_CFG", (1u << 17) | (lo ? 1u << 16 : 0u));
        for (int16_t e : entries) set("CDP", "S_LUT_ACCESS_DATA", static_cast<uint16_t>(e));
    }

    void run(const Lrn& l) {
        set("CDP_RDMA", "D_DATA_CUBE_WIDTH", l.width - 1);
        set("CDP_RDMA", "D_DATA_CUBE_HEIGHT", l.height - 1);
        set("CDP_RDMA", "D_DATA_CUBE_CHANNEL", l.channels - 1);
        set("CDP_RDMA", "D_SRC_BASE_ADDR_LOW", static_cast<uint32_t>(kSrc));
        set("CDP_RDMA", "D_SRC_BASE_ADDR_HIGH", 0);
        set("CDP_RDMA", "D_SRC_LINE_STRIDE", line(l));
        set("CDP_RDMA", "D_SRC_SURFACE_STRIDE", surface(l));
        set("CDP_RDMA", "D_SRC_DMA_CFG", 1);
        set("CDP_RDMA", "D_DATA_FORMAT",
            l.rdma_precision < 0 ? l.precision : static_cast<uint32_t>(l.rdma_precision));
        set("CDP", "D_FUNC_BYPASS", (l.sqsum_bypass ? 1 : 0) | (l.mul_bypass ? 2 : 0));
        set("CDP", "D_DST_BASE_ADDR_LOW", static_cast<uint32_t>(kDst));
        set("CDP", "D_DST_BASE_ADDR_HIGH", 0);
        set("CDP", "D_DST_LINE_STRIDE", line(l));
        set("CDP", "D_DST_SURFACE_STRIDE", surface(l));
        set("CDP", "D_DST_DMA_CFG", 1);
        set("CDP", "D_DATA_FORMAT", l.precision);
        set("CDP", "D_NAN_FLUSH_TO_ZERO", l.nan_to_zero ? 1 : 0);
        set("CDP", "D_LRN_CFG", l.normalz_len);
        set("CDP", "D_DATIN_OFFSET", l.in_offset);
        set("CDP", "D_DATIN_SCALE", l.in_scale);
        set("CDP", "D_DATIN_SHIFTER", l.in_shift);
        set("CDP", "D_DATOUT_OFFSET", l.out_offset);
        set("CDP", "D_DATOUT_SCALE", l.out_scale);
        set("CDP", "D_DATOUT_SHIFTER", l.out_shift);
        set("CDP_RDMA", "D_OP_ENABLE", 1);
        set("CDP", "D_OP_ENABLE", 1);
    }

  private:
    const HwConfig& cfg_;
    const hw::RegisterMap& map_;
    FlatMemory memory_;
    std::unique_ptr<Device> device_;
    uint8_t* src_ = nullptr;
    uint8_t* dst_ = nullptr;
};

int64_t round_half_away(double x) {
    return static_cast<int64_t>(x >= 0 ? std::floor(x + 0.5) : -std::floor(-x + 0.5));
}
int64_t clamp(int64_t x, unsigned bits) {
    const int64_t hi = (int64_t(1) << (bits - 1)) - 1;
    return std::min(std::max(x, -hi - 1), hi);
}

// The integer pipelines from the definition: x = sat((raw - offset) * scale / 2^shift),
// sum = x^2 over the window (channels outside the cube contribute nothing), y = lo[sum] * x,
// out = sat((y - offset) * scale / 2^shift). The LUT must be exact_lo_table() with sums < 256.
int64_t reference(const CdpRig& rig, const Lrn& l, const Lut& lut, uint32_t c, uint32_t h,
                  uint32_t w) {
    const unsigned in_bits = l.precision == kInt8 ? 9 : 17,
                   out_bits = l.precision == kInt8 ? 8 : 16;
    const auto x_of = [&](int64_t ch) -> int64_t {
        if (ch < 0 || ch >= int64_t(l.channels)) return 0;
        const int64_t d = rig.input(l, uint32_t(ch), h, w) - int16_t(l.in_offset);
        return clamp(round_half_away(double(d * int16_t(l.in_scale)) / double(1 << l.in_shift)),
                     in_bits);
    };
    const int64_t x = x_of(c);
    int64_t sum = 0;
    const int r = int(l.normalz_len) + 1;
    for (int j = -r; j <= r; ++j) sum += x_of(int64_t(c) + j) * x_of(int64_t(c) + j);
    if (l.sqsum_bypass) sum = x;
    EXPECT_TRUE(sum >= 0 && sum < 256) << "the test's LUT only covers sums 0..255";
    const int64_t value = lut.lo[size_t(sum)];
    const int64_t y = l.mul_bypass ? value : value * x;
    return clamp(round_half_away(double((y - int32_t(l.out_offset)) * int16_t(l.out_scale)) /
                                 std::ldexp(1.0, int(l.out_shift))),
                 out_bits);
}

::testing::AssertionResult matches_reference(CdpRig& rig, const Lrn& l, const Lut& lut) {
    std::vector<uint8_t> want(kRegion, 0);
    for (uint32_t c = 0; c < rig.surfaces(l) * rig.lanes(l); ++c)
        for (uint32_t h = 0; h < l.height; ++h)
            for (uint32_t w = 0; w < l.width; ++w)
                rig.put_at(want.data(), l, c, h, w,
                           static_cast<uint16_t>(reference(rig, l, lut, c, h, w)));
    for (size_t i = 0; i < want.size(); ++i)
        if (rig.dst()[i] != want[i])
            return ::testing::AssertionFailure()
                   << "byte 0x" << std::hex << i << " is 0x" << int(rig.dst()[i]) << ", expected 0x"
                   << int(want[i]);
    return ::testing::AssertionSuccess();
}

TEST(CdpLut, TablesAreWrittenAndReadBackWithAutoIncrement) {
    CdpRig rig("nv_small");
    std::vector<int16_t> le(kLeEntries), lo(kLoEntries);
    for (uint32_t i = 0; i < kLeEntries; ++i) le[i] = static_cast<int16_t>(1000 + i);
    for (uint32_t i = 0; i < kLoEntries; ++i) lo[i] = static_cast<int16_t>(-i);
    rig.write_table(false, le);
    EXPECT_EQ(rig.get("CDP", "S_LUT_ACCESS_CFG"), (1u << 17) | 64);  // stopped at the last entry
    rig.set("CDP", "S_LUT_ACCESS_DATA", 0x1234);  // overwrites entry 64 and stays there
    EXPECT_EQ(rig.get("CDP", "S_LUT_ACCESS_CFG"), (1u << 17) | 64);
    rig.write_table(true, lo);
    EXPECT_EQ(rig.get("CDP", "S_LUT_ACCESS_CFG"), (1u << 17) | (1u << 16) | 256);

    rig.set("CDP", "S_LUT_ACCESS_CFG", 0);  // read LE from entry 0
    for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(rig.get("CDP", "S_LUT_ACCESS_DATA"), 1000 + i) << i;
    EXPECT_EQ(rig.get("CDP", "S_LUT_ACCESS_DATA"), 0x1234u);
    rig.set("CDP", "S_LUT_ACCESS_CFG", (1u << 16) | 5);  // read LO from entry 5
    EXPECT_EQ(rig.get("CDP", "S_LUT_ACCESS_DATA"), 0xfffbu);
    EXPECT_EQ(rig.get("CDP", "S_LUT_ACCESS_DATA"), 0xfffau);
    EXPECT_EQ(rig.get("CDP", "S_LUT_ACCESS_CFG"), (1u << 16) | 7);
    // In write mode a read does not move the address; outside the table entry 0 is read.
    rig.set("CDP", "S_LUT_ACCESS_CFG", (1u << 17) | 100);
    EXPECT_EQ(rig.get("CDP", "S_LUT_ACCESS_DATA"), 1000u);
    rig.set("CDP", "S_LUT_ACCESS_DATA", 7);  // ignored beyond the 65 LE entries
    rig.set("CDP", "S_LUT_ACCESS_CFG", 100);
    EXPECT_EQ(rig.get("CDP", "S_LUT_ACCESS_DATA"), 1000u);
    EXPECT_EQ(rig.get("CDP", "S_LUT_ACCESS_CFG"), 101u);
}

TEST(CdpInt8, LrnMatchesTheReference) {
    CdpRig rig("nv_small");
    Lrn l;
    l.width = 5, l.height = 3, l.channels = 19;  // three 8-channel surfaces, padding lanes
    l.normalz_len = 1;
    l.in_offset = 2, l.in_scale = 3, l.in_shift = 2;  // x = round((raw - 2) * 3 / 4)
    l.out_offset = 0xfffffff6, l.out_scale = 5, l.out_shift = 9;
    Lut lut = exact_lo_table();
    for (uint32_t i = 0; i < kLoEntries; ++i) lut.lo[i] = static_cast<int16_t>(3000 - 37 * int(i));
    auto rng = test::rng_for_test();
    const auto values = test::random_vector<int>(rng, 19 * 15, -6, 9);  // |x| <= 5: sums < 256
    size_t k = 0;
    for (uint32_t c = 0; c < 19; ++c)
        for (uint32_t h = 0; h < 3; ++h)
            for (uint32_t w = 0; w < 5; ++w)
                rig.put(l, c, h, w, static_cast<uint16_t>(values[k++]));
    rig.program_lut(lut);
    rig.run(l);
    EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    EXPECT_TRUE(matches_reference(rig, l, lut));
    EXPECT_EQ(rig.get("GLB", "S_INTR_STATUS"), 1u << 2);  // CDP done, group 0
}

TEST(CdpInt8, EveryNormalizationLength) {
    for (uint32_t len = 0; len < 4; ++len) {
        SCOPED_TRACE(2 * len + 3);
        CdpRig rig("nv_small");
        Lrn l;
        l.width = 2, l.channels = 13;
        l.normalz_len = len;
        Lut lut = exact_lo_table();
        for (uint32_t i = 0; i < kLoEntries; ++i) lut.lo[i] = static_cast<int16_t>(i + 1);
        for (uint32_t c = 0; c < 13; ++c) {
            rig.put(l, c, 0, 0, static_cast<uint16_t>(c % 5 - 2));
            rig.put(l, c, 0, 1, static_cast<uint16_t>(5 - c % 3));
        }
        rig.program_lut(lut);
        rig.run(l);
        EXPECT_TRUE(matches_reference(rig, l, lut));
    }
}

TEST(CdpInt8, ChannelsOutsideTheCubeReadAsTheInputOffset) {
    // One channel, LRN 3: the neighbours are outside the cube; with DATIN_OFFSET 5 they read as
    // 5 before the convertor, 0 after it. x = 7 - 5 = 2, sum = 4, y = lo[4] x 2.
    CdpRig rig("nv_small");
    Lrn l;
    l.channels = 1;
    l.in_offset = 5;
    Lut lut = exact_lo_table();
    lut.lo[4] = 30;
    rig.put(l, 0, 0, 0, 7);
    rig.program_lut(lut);
    rig.run(l);
    EXPECT_EQ(int8_t(rig.output(l, 0, 0, 0)), 60);
    EXPECT_TRUE(matches_reference(rig, l, lut));
}

TEST(CdpInt8, OutputSaturationIsCounted) {
    // Every lookup gives 1000, so y = 1000 x: only x = 0 fits int8 without saturating.
    CdpRig rig("nv_small");
    Lrn l;
    l.channels = 8;
    Lut lut;
    lut.le.assign(kLeEntries, 1000);
    lut.lo.assign(kLoEntries, 1000);
    lut.lo_end = 256;
    const int8_t x[8] = {0, 1, -1, 0, 2, -3, 0, 0};
    for (uint32_t c = 0; c < 8; ++c) rig.put(l, c, 0, 0, static_cast<uint8_t>(x[c]));
    rig.program_lut(lut);
    rig.run(l);
    const int8_t want[8] = {0, 127, -128, 0, 127, -128, 0, 0};
    for (uint32_t c = 0; c < 8; ++c) EXPECT_EQ(int8_t(rig.output(l, c, 0, 0)), want[c]) << c;
    EXPECT_EQ(rig.get("CDP", "D_OUT_SATURATION"), 4u);
}

TEST(CdpInt8, SquareSumAndMultiplierBypass) {
    // SQSUM_BYPASS looks up x itself; MUL_BYPASS outputs the LUT value. With DATIN_OFFSET -20
    // the inputs 0..7 become x = 20..27, read as lo[x] = 2x + 1.
    CdpRig rig("nv_small");
    Lrn l;
    l.sqsum_bypass = l.mul_bypass = true;
    l.in_offset = 0xffec;  // -20
    Lut lut = exact_lo_table();
    for (uint32_t i = 0; i < kLoEntries; ++i) lut.lo[i] = static_cast<int16_t>(2 * i + 1);
    for (uint32_t c = 0; c < 8; ++c) rig.put(l, c, 0, 0, static_cast<uint16_t>(c));
    rig.program_lut(lut);
    rig.run(l);
    for (uint32_t c = 0; c < 8; ++c) EXPECT_EQ(rig.output(l, c, 0, 0), 2 * (20 + c) + 1) << c;
}

TEST(CdpInt16, LrnMatchesTheReferenceOnNvFull) {
    CdpRig rig("nv_full");
    Lrn l;
    l.precision = kInt16;
    l.width = 3, l.height = 2, l.channels = 21;  // two 16-channel surfaces
    l.normalz_len = 2;
    l.in_offset = 0xfffd, l.in_scale = 0xfffd, l.in_shift = 1;  // x = round((raw + 3) x -3 / 2)
    l.out_offset = 100, l.out_scale = 0x7fff, l.out_shift = 7;
    Lut lut = exact_lo_table();
    for (uint32_t i = 0; i < kLoEntries; ++i) lut.lo[i] = static_cast<int16_t>(i * i - 30000);
    auto rng = test::rng_for_test();
    for (uint32_t c = 0; c < 21; ++c)
        for (uint32_t h = 0; h < 2; ++h)
            for (uint32_t w = 0; w < 3; ++w)
                rig.put(l, c, h, w,
                        static_cast<uint16_t>(test::random_vector<int>(rng, 1, -6, 0)[0]));
    rig.program_lut(lut);
    rig.run(l);
    EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    EXPECT_TRUE(matches_reference(rig, l, lut));
}

TEST(CdpInt16, LutUnderflowOverflowAndTheirCounters) {
    // SQSUM and MUL bypassed: the output is the lookup of x.
    //   LE: linear from 0, 4 per entry (hits 1..255); LO: linear from 100, 1 per entry
    //   (hits 101..355). LE entries 10 i, LO entries -i.
    //   x = -5:  both underflow, LE chosen: le[0] + (-5 - 0) x 4 / 2 = -10
    //   x = 50:  LE only, index 12 and half way: 120 + round(10 / 2) = 125
    //   x = 150: both hit, LO chosen: lo[50] = -50
    //   x = 300: LO only: lo[200] = -200
    //   x = 400: both overflow, LE chosen: le[64] + (400 - 256) x -1 / 4 = 604
    //   x = 0 (the 11 padding lanes): both underflow, le[0] = 0
    CdpRig rig("nv_full");
    Lrn l;
    l.precision = kInt16;
    l.channels = 5;
    l.sqsum_bypass = l.mul_bypass = true;
    Lut lut;
    lut.cfg = kLeLinear | kHybridLo;
    lut.info = 2u << 8;  // LE index select 2, LO 0
    lut.le_end = 256;
    lut.lo_start = 100, lut.lo_end = 356;
    for (uint32_t i = 0; i < kLeEntries; ++i) lut.le[i] = static_cast<int16_t>(10 * i);
    for (uint32_t i = 0; i < kLoEntries; ++i) lut.lo[i] = static_cast<int16_t>(-int(i));
    lut.le_slope_scale = 4 | 0xffffu << 16;  // underflow 4, overflow -1
    lut.le_slope_shift = 1 | 2u << 5;        // underflow >> 1, overflow >> 2
    const int16_t x[5] = {-5, 50, 150, 300, 400};
    for (uint32_t c = 0; c < 5; ++c) rig.put(l, c, 0, 0, static_cast<uint16_t>(x[c]));
    rig.program_lut(lut);
    rig.run(l);
    const int16_t want[5] = {-10, 125, -50, -200, 604};
    for (uint32_t c = 0; c < 5; ++c) EXPECT_EQ(int16_t(rig.output(l, c, 0, 0)), want[c]) << c;
    EXPECT_EQ(rig.get("CDP", "D_PERF_LUT_UFLOW"), 12u);
    EXPECT_EQ(rig.get("CDP", "D_PERF_LUT_LE_HIT"), 1u);
    EXPECT_EQ(rig.get("CDP", "D_PERF_LUT_HYBRID"), 1u);
    EXPECT_EQ(rig.get("CDP", "D_PERF_LUT_LO_HIT"), 1u);
    EXPECT_EQ(rig.get("CDP", "D_PERF_LUT_OFLOW"), 1u);
    EXPECT_EQ(rig.get("CDP", "D_OUT_SATURATION"), 0u);
}

// fp16: a LUT that gives 0.5 for every input (all entries 0.5, slopes 0).
Lut half_everywhere() {
    Lut lut;
    lut.le.assign(kLeEntries, 0x3800);
    lut.lo.assign(kLoEntries, 0x3800);
    lut.lo_end = 0x43800000;  // 256.0f
    lut.le_end = 0x5f800000;  // 2^64
    return lut;
}

TEST(CdpFp16, LrnMultipliesByTheLutValue) {
    // y = x x 0.5 in fp17, back to fp16.
    CdpRig rig("nv_full");
    Lrn l;
    l.precision = kFp16;
    l.channels = 5;
    const uint16_t x[5] = {0x3c00, 0xc200, 0x7bff, 0x3400, 0x0000};  // 1, -3, 65504, 0.25, 0
    const uint16_t want[5] = {0x3800, 0xbe00, 0x77ff, 0x3000, 0x0000};
    for (uint32_t c = 0; c < 5; ++c) rig.put(l, c, 0, 0, x[c]);
    rig.program_lut(half_everywhere());
    rig.run(l);
    EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    for (uint32_t c = 0; c < 5; ++c) EXPECT_EQ(rig.output(l, c, 0, 0), want[c]) << c;
    EXPECT_EQ(rig.get("CDP", "D_NAN_OUTPUT_NUM"), 0u);
}

TEST(CdpFp16, NanAndInfinityInputs) {
    // A NaN in channel 1 poisons the square sums of channels 0..2 (LRN 3); an infinity in
    // channel 3 reads as the largest fp17 (Fp16ToFp17 saturates) and leaves as 65504. With
    // NAN_TO_ZERO the NaN
    // is +0 before anything sees it (but still counted).
    for (bool flush : {false, true}) {
        SCOPED_TRACE(flush ? "flushed" : "kept");
        CdpRig rig("nv_full");
        Lrn l;
        l.precision = kFp16;
        l.channels = 5;
        l.nan_to_zero = flush;
        const uint16_t x[5] = {0x3c00, 0x7e00, 0x4000, 0x7c00, 0x4400};
        for (uint32_t c = 0; c < 5; ++c) rig.put(l, c, 0, 0, x[c]);
        rig.program_lut(half_everywhere());
        rig.run(l);
        const auto is_nan = [](uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); };
        if (flush) {
            EXPECT_EQ(rig.output(l, 0, 0, 0), 0x3800);
            EXPECT_EQ(rig.output(l, 1, 0, 0), 0x0000);
            EXPECT_EQ(rig.output(l, 2, 0, 0), 0x3c00);
        } else {
            for (uint32_t c = 0; c < 3; ++c) EXPECT_TRUE(is_nan(rig.output(l, c, 0, 0))) << c;
        }
        EXPECT_EQ(rig.output(l, 3, 0, 0), 0x7bff);
        EXPECT_EQ(rig.output(l, 4, 0, 0), 0x4000);
        EXPECT_EQ(rig.get("CDP", "D_NAN_INPUT_NUM"), 1u);
        EXPECT_EQ(rig.get("CDP", "D_INF_INPUT_NUM"), 1u);
        EXPECT_EQ(rig.get("CDP", "D_NAN_OUTPUT_NUM"), flush ? 0u : 3u);
    }
}

TEST(CdpFp16, MultiplierBypassPassesNanInputs) {
    // MUL_BYPASS outputs the LUT value, except for a NaN input, which passes through.
    CdpRig rig("nv_full");
    Lrn l;
    l.precision = kFp16;
    l.channels = 3;
    l.mul_bypass = true;
    rig.put(l, 0, 0, 0, 0x4000);
    rig.put(l, 1, 0, 0, 0x7e05);
    rig.put(l, 2, 0, 0, 0xc000);
    rig.program_lut(half_everywhere());
    rig.run(l);
    EXPECT_EQ(rig.output(l, 1, 0, 0), 0x7e05);
    EXPECT_EQ(rig.output(l, 0, 0, 0) & 0x7c00, 0x7c00);  // its sum is NaN: so is the lookup
    EXPECT_EQ(rig.output(l, 3, 0, 0), 0x3800);           // a padding lane: 0.5
}

TEST(CdpErrors, UnsupportedProgrammingIsReportedAndWritesNothing) {
    {
        CdpRig rig("nv_small");
        Lrn l;
        l.precision = kInt16;
        rig.run(l);
        EXPECT_EQ(rig.stats().programming_errors, 1u);
        EXPECT_NE(rig.stats().last_error.find("int16"), std::string::npos)
            << rig.stats().last_error;
        EXPECT_EQ(rig.stats().bytes_written, 0u);
    }
    {
        CdpRig rig("nv_full");
        Lrn l;
        l.rdma_precision = kInt16;  // CDP reads int8
        rig.run(l);
        EXPECT_EQ(rig.stats().programming_errors, 1u);
        EXPECT_NE(rig.stats().last_error.find("CDP_RDMA"), std::string::npos)
            << rig.stats().last_error;
        EXPECT_EQ(rig.stats().bytes_written, 0u);
    }
}

}  // namespace
}  // namespace nvdla::emu
