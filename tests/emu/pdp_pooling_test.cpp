// PDP and PDP_RDMA driven through their registers as kmd/firmware/pdp.c programs them. Integer
// results are checked against a reference written here per output element (sum of the data in
// the window plus the padding value for every missing position, then the two reciprocal
// multiplications with rounding half away from zero), over the whole destination region so
// that stray writes are caught; fp16 results and counters against values worked out by hand.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "emu/dma.hpp"
#include "emu/pdp.hpp"
#include "emu/unit.hpp"
#include "nvdla/emu/device.hpp"
#include "nvdla/hw/register_map.hpp"
#include "test_support.hpp"

namespace nvdla::emu {
namespace {

constexpr uint64_t kSrc = 0x80000000;
constexpr uint64_t kDst = 0x80100000;
constexpr uint64_t kRegion = 0x20000;
constexpr uint32_t kAverage = 0, kMax = 1, kMin = 2;
constexpr uint32_t kInt8 = 0, kInt16 = 1, kFp16 = 2;

// One pooling operation in software terms (counts, not "minus one" fields).
struct Pool {
    uint32_t precision = kInt8, method = kMax;
    uint32_t width = 1, height = 1, channels = 1;
    uint32_t out_width = 1, out_height = 1;
    uint32_t kernel_w = 1, kernel_h = 1, stride_w = 1, stride_h = 1;
    uint32_t pad_left = 0, pad_right = 0, pad_top = 0, pad_bottom = 0;
    int32_t pad_value = 0;                    // PAD_VALUE_nX = n x pad_value (integer pipelines)
    std::array<uint32_t, 7> pad_registers{};  // used as given when explicit_pads
    bool explicit_pads = false;
    uint32_t recip_w = 0x10000, recip_h = 0x10000;
    bool nan_to_zero = false;
    bool pdp_enabled_first = false;  // PDP's D_OP_ENABLE written before PDP_RDMA's
    uint32_t rdma_width = 0;         // PDP_RDMA's input width when it should differ (0: width)
    // Split width: SPLIT_NUM + 1 pieces with these partial widths (in columns).
    uint32_t split_num = 0;
    uint32_t in_first = 1, in_mid = 1, in_last = 1, out_first = 1, out_mid = 1, out_last = 1;
};

uint32_t bytes_of(uint32_t precision) {
    return precision == kInt8 ? 1 : 2;
}

class PdpRig {
  public:
    explicit PdpRig(const char* config)
        : cfg_(test::config(config)),
          map_(hw::RegisterMap::get(cfg_.reg_map)),
          device_(std::make_unique<Device>(cfg_, memory_)) {
        src_ = reinterpret_cast<uint8_t*>(memory_.add_region(MemoryPort::Primary, kSrc, kRegion));
        dst_ = reinterpret_cast<uint8_t*>(memory_.add_region(MemoryPort::Primary, kDst, kRegion));
    }

    const HwConfig& cfg() const { return cfg_; }
    const DeviceStats& stats() const { return device_->stats(); }
    uint8_t* src() { return src_; }
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

    uint32_t lanes(const Pool& p) const { return cfg_.atom_bytes / bytes_of(p.precision); }
    uint32_t surfaces(const Pool& p) const { return (p.channels + lanes(p) - 1) / lanes(p); }
    uint32_t src_line(const Pool& p) const { return p.width * cfg_.atom_bytes; }
    uint32_t src_surface(const Pool& p) const { return p.height * src_line(p); }
    uint32_t dst_line(const Pool& p) const { return p.out_width * cfg_.atom_bytes; }
    uint32_t dst_surface(const Pool& p) const { return p.out_height * dst_line(p); }

    // Byte offset of element (c, h, w); c counts the padding lanes of the last surface too.
    uint64_t offset(const Pool& p, uint32_t line, uint32_t surface, uint32_t c, uint32_t h,
                    uint32_t w) const {
        return uint64_t(c / lanes(p)) * surface + uint64_t(h) * line +
               uint64_t(w) * cfg_.atom_bytes + (c % lanes(p)) * bytes_of(p.precision);
    }
    uint64_t src_offset(const Pool& p, uint32_t c, uint32_t h, uint32_t w) const {
        return offset(p, src_line(p), src_surface(p), c, h, w);
    }
    uint64_t dst_offset(const Pool& p, uint32_t c, uint32_t h, uint32_t w) const {
        return offset(p, dst_line(p), dst_surface(p), c, h, w);
    }

    // Programs PDP and PDP_RDMA for p (offline, packed cubes at kSrc and kDst) and runs it.
    void run(const Pool& p) {
        const uint32_t mode = p.method | (1u << 4) | (p.split_num << 8);
        const uint32_t kernel = (p.kernel_w - 1) | (p.kernel_h - 1) << 8 | (p.stride_w - 1) << 16 |
                                (p.stride_h - 1) << 20;
        const uint32_t partial_in = (p.in_first - 1) | (p.in_last - 1) << 10 | (p.in_mid - 1) << 20;
        const uint32_t partial_out =
            (p.out_first - 1) | (p.out_last - 1) << 10 | (p.out_mid - 1) << 20;
        set("PDP", "D_DATA_CUBE_IN_WIDTH", p.width - 1);
        set("PDP", "D_DATA_CUBE_IN_HEIGHT", p.height - 1);
        set("PDP", "D_DATA_CUBE_IN_CHANNEL", p.channels - 1);
        set("PDP", "D_DATA_CUBE_OUT_WIDTH", p.out_width - 1);
        set("PDP", "D_DATA_CUBE_OUT_HEIGHT", p.out_height - 1);
        set("PDP", "D_DATA_CUBE_OUT_CHANNEL", p.channels - 1);
        set("PDP", "D_OPERATION_MODE_CFG", mode);
        set("PDP", "D_NAN_FLUSH_TO_ZERO", p.nan_to_zero ? 1 : 0);
        set("PDP", "D_PARTIAL_WIDTH_IN", partial_in);
        set("PDP", "D_PARTIAL_WIDTH_OUT", partial_out);
        set("PDP", "D_POOLING_KERNEL_CFG", kernel);
        set("PDP", "D_RECIP_KERNEL_WIDTH", p.recip_w);
        set("PDP", "D_RECIP_KERNEL_HEIGHT", p.recip_h);
        set("PDP", "D_POOLING_PADDING_CFG",
            p.pad_left | p.pad_top << 4 | p.pad_right << 8 | p.pad_bottom << 12);
        static const char* const kPadRegs[] = {
            "D_POOLING_PADDING_VALUE_1_CFG", "D_POOLING_PADDING_VALUE_2_CFG",
            "D_POOLING_PADDING_VALUE_3_CFG", "D_POOLING_PADDING_VALUE_4_CFG",
            "D_POOLING_PADDING_VALUE_5_CFG", "D_POOLING_PADDING_VALUE_6_CFG",
            "D_POOLING_PADDING_VALUE_7_CFG"};
        for (int n = 1; n <= 7; ++n) {
            const uint32_t v = p.explicit_pads ? p.pad_registers[n - 1]
                                               : static_cast<uint32_t>(n * p.pad_value) & 0x7ffff;
            set("PDP", kPadRegs[n - 1], v);
        }
        set("PDP", "D_DST_BASE_ADDR_LOW", static_cast<uint32_t>(kDst));
        set("PDP", "D_DST_BASE_ADDR_HIGH", 0);
        set("PDP", "D_DST_LINE_STRIDE", dst_line(p));
        set("PDP", "D_DST_SURFACE_STRIDE", dst_surface(p));
        set("PDP", "D_DST_RAM_CFG", 1);
        set("PDP", "D_DATA_FORMAT", p.precision);

        set("PDP_RDMA", "D_DATA_CUBE_IN_WIDTH", (p.rdma_width ? p.rdma_width : p.width) - 1);
        set("PDP_RDMA", "D_DATA_CUBE_IN_HEIGHT", p.height - 1);
        set("PDP_RDMA", "D_DATA_CUBE_IN_CHANNEL", p.channels - 1);
        set("PDP_RDMA", "D_FLYING_MODE", 1);
        set("PDP_RDMA", "D_SRC_BASE_ADDR_LOW", static_cast<uint32_t>(kSrc));
        set("PDP_RDMA", "D_SRC_BASE_ADDR_HIGH", 0);
        set("PDP_RDMA", "D_SRC_LINE_STRIDE", src_line(p));
        set("PDP_RDMA", "D_SRC_SURFACE_STRIDE", src_surface(p));
        set("PDP_RDMA", "D_SRC_RAM_CFG", 1);
        set("PDP_RDMA", "D_DATA_FORMAT", p.precision);
        set("PDP_RDMA", "D_OPERATION_MODE_CFG", p.split_num);
        set("PDP_RDMA", "D_POOLING_KERNEL_CFG", (p.kernel_w - 1) | (p.stride_w - 1) << 4);
        set("PDP_RDMA", "D_POOLING_PADDING_CFG", p.pad_left);
        set("PDP_RDMA", "D_PARTIAL_WIDTH_IN", partial_in);
        if (p.pdp_enabled_first) set("PDP", "D_OP_ENABLE", 1);
        set("PDP_RDMA", "D_OP_ENABLE", 1);
        if (!p.pdp_enabled_first) set("PDP", "D_OP_ENABLE", 1);
    }

    // Signed element (c, h, w) of the source cube.
    int32_t input(const Pool& p, uint32_t c, uint32_t h, uint32_t w) const {
        const uint8_t* at = src_ + src_offset(p, c, h, w);
        if (p.precision == kInt8) return static_cast<int8_t>(at[0]);
        return static_cast<int16_t>(at[0] | at[1] << 8);
    }
    void put(const Pool& p, uint8_t* image, uint32_t c, uint32_t h, uint32_t w, uint32_t v) const {
        uint8_t* at = image + dst_offset(p, c, h, w);
        at[0] = static_cast<uint8_t>(v);
        if (p.precision != kInt8) at[1] = static_cast<uint8_t>(v >> 8);
    }
    uint16_t output16(const Pool& p, uint32_t c, uint32_t h, uint32_t w) const {
        const uint8_t* at = dst_ + dst_offset(p, c, h, w);
        return static_cast<uint16_t>(at[0] | at[1] << 8);
    }

    void fill_random(const Pool& p, int lo, int hi) {
        auto rng = test::rng_for_test();
        const size_t n = size_t(surfaces(p)) * src_surface(p);
        const auto values = test::random_vector<int32_t>(rng, n / bytes_of(p.precision), lo, hi);
        for (size_t i = 0; i < values.size(); ++i) {
            src_[i * bytes_of(p.precision)] = static_cast<uint8_t>(values[i]);
            if (p.precision != kInt8) src_[i * 2 + 1] = static_cast<uint8_t>(values[i] >> 8);
        }
    }

  private:
    const HwConfig& cfg_;
    const hw::RegisterMap& map_;
    FlatMemory memory_;
    std::unique_ptr<Device> device_;
    uint8_t* src_ = nullptr;
    uint8_t* dst_ = nullptr;
};

// x rounded to the nearest integer, halves away from zero.
int64_t round_half_away(double x) {
    return static_cast<int64_t>(x >= 0 ? std::floor(x + 0.5) : -std::floor(-x + 0.5));
}

// The pooled value of output (c, oh, ow), integer pipelines, straight from the definition.
int64_t reference(const PdpRig& rig, const Pool& p, uint32_t c, uint32_t oh, uint32_t ow) {
    int64_t sum = 0, best = 0;
    uint32_t count = 0;
    for (uint32_t r = 0; r < p.kernel_h; ++r) {
        const int64_t y = int64_t(oh) * p.stride_h - p.pad_top + r;
        if (y < 0 || y >= p.height) continue;
        for (uint32_t q = 0; q < p.kernel_w; ++q) {
            const int64_t x = int64_t(ow) * p.stride_w - p.pad_left + q;
            if (x < 0 || x >= p.width) continue;
            const int32_t v = rig.input(p, c, uint32_t(y), uint32_t(x));
            sum += v;
            if (count++ == 0 || (p.method == kMax ? v > best : v < best)) best = v;
        }
    }
    if (p.method != kAverage) return best;
    const int64_t total = sum + int64_t(p.pad_value) * (p.kernel_w * p.kernel_h - count);
    const int64_t t = round_half_away(double(total) * p.recip_w / 65536.0);
    return round_half_away(double(t) * p.recip_h / 65536.0);
}

// The destination region the operation should leave: every lane of every output atom.
std::vector<uint8_t> expected_image(const PdpRig& rig, const Pool& p) {
    std::vector<uint8_t> image(kRegion, 0);
    for (uint32_t c = 0; c < rig.surfaces(p) * rig.lanes(p); ++c)
        for (uint32_t oh = 0; oh < p.out_height; ++oh)
            for (uint32_t ow = 0; ow < p.out_width; ++ow)
                rig.put(p, image.data(), c, oh, ow,
                        static_cast<uint32_t>(reference(rig, p, c, oh, ow)));
    return image;
}

::testing::AssertionResult same_bytes(const uint8_t* got, const std::vector<uint8_t>& want) {
    for (size_t i = 0; i < want.size(); ++i)
        if (got[i] != want[i])
            return ::testing::AssertionFailure() << "byte 0x" << std::hex << i << " is 0x"
                                                 << int(got[i]) << ", expected 0x" << int(want[i]);
    return ::testing::AssertionSuccess();
}

void expect_reference(PdpRig& rig, const Pool& p) {
    const std::vector<uint8_t> want = expected_image(rig, p);
    rig.run(p);
    EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    EXPECT_EQ(rig.stats().faults, 0u) << rig.stats().last_error;
    EXPECT_TRUE(same_bytes(rig.dst(), want));
}

// The 1/n reciprocal the firmware programs (0x10000 = 1.0).
uint32_t recip(uint32_t n) {
    return 0x10000 / n;
}

Pool pooling_3x3(uint32_t method) {
    Pool p;
    p.method = method;
    p.width = 9, p.height = 7, p.channels = 19;  // 3 surfaces of 8 on nv_small, padding lanes
    p.kernel_w = p.kernel_h = 3;
    p.stride_w = p.stride_h = 2;
    p.pad_left = p.pad_right = p.pad_top = p.pad_bottom = 1;
    p.out_width = 5, p.out_height = 4;
    p.recip_w = p.recip_h = recip(3);
    return p;
}

TEST(PdpInt8, MaxAndMinPoolingIgnorePadding) {
    for (uint32_t method : {kMax, kMin}) {
        SCOPED_TRACE(method == kMax ? "max" : "min");
        PdpRig rig("nv_small");
        Pool p = pooling_3x3(method);
        p.pad_value = 100;  // must not matter
        rig.fill_random(p, -128, 127);
        expect_reference(rig, p);
    }
}

TEST(PdpInt8, MaxPoolingByHand) {
    PdpRig rig("nv_small");
    Pool p;
    p.width = 4, p.height = 2, p.channels = 1;
    p.kernel_w = p.kernel_h = 2, p.stride_w = p.stride_h = 2;
    p.out_width = 2, p.out_height = 1;
    const int8_t data[2][4] = {{1, -7, 30, 4}, {5, 2, -1, -128}};
    for (uint32_t h = 0; h < 2; ++h)
        for (uint32_t w = 0; w < 4; ++w)
            rig.src()[rig.src_offset(p, 0, h, w)] = static_cast<uint8_t>(data[h][w]);
    rig.run(p);
    EXPECT_EQ(int8_t(rig.dst()[rig.dst_offset(p, 0, 0, 0)]), 5);
    EXPECT_EQ(int8_t(rig.dst()[rig.dst_offset(p, 0, 0, 1)]), 30);
    EXPECT_EQ(rig.get("GLB", "S_INTR_STATUS"), 1u << 4);  // PDP done, group 0
}

// The operation starts when the last of its two units is enabled, whichever comes last.
TEST(PdpInt8, StartsWhenEitherUnitIsEnabledLast) {
    for (bool pdp_first : {false, true}) {
        PdpRig rig("nv_small");
        Pool p;
        p.width = 2, p.height = 2, p.channels = 1;
        p.kernel_w = p.kernel_h = 2, p.stride_w = p.stride_h = 2;
        p.out_width = 1, p.out_height = 1;
        p.pdp_enabled_first = pdp_first;
        const int8_t data[4] = {3, -9, 17, 6};
        for (uint32_t i = 0; i < 4; ++i)
            rig.src()[rig.src_offset(p, 0, i / 2, i % 2)] = static_cast<uint8_t>(data[i]);
        rig.run(p);
        EXPECT_EQ(int8_t(rig.dst()[rig.dst_offset(p, 0, 0, 0)]), 17) << pdp_first;
        EXPECT_EQ(rig.get("GLB", "S_INTR_STATUS"), 1u << 4) << pdp_first;
    }
}

TEST(PdpInt8, AverageAddsThePaddingValueOnEverySide) {
    const std::array<const char*, 5> names = {"left", "right", "top", "bottom", "all"};
    for (size_t side = 0; side < names.size(); ++side) {
        SCOPED_TRACE(names[side]);
        PdpRig rig("nv_small");
        Pool p;
        p.method = kAverage;
        p.width = 6, p.height = 5, p.channels = 8;
        p.kernel_w = p.kernel_h = 3;
        p.pad_left = side == 0 || side == 4 ? 2 : 0;
        p.pad_right = side == 1 || side == 4 ? 2 : 0;
        p.pad_top = side == 2 || side == 4 ? 2 : 0;
        p.pad_bottom = side == 3 || side == 4 ? 1 : 0;
        p.out_width = p.width + p.pad_left + p.pad_right - 2;
        p.out_height = p.height + p.pad_top + p.pad_bottom - 2;
        p.pad_value = -37;
        p.recip_w = p.recip_h = recip(3);
        rig.fill_random(p, -128, 127);
        expect_reference(rig, p);
    }
}

TEST(PdpInt8, LargeKernelsMostlyPadding) {
    // A 1x3 input under an 8x8 kernel (pdp_1x3x8_8x8_ave_int8_0's geometry): seven padded
    // columns in every row, five padded rows.
    PdpRig rig("nv_small");
    Pool p;
    p.method = kAverage;
    p.width = 1, p.height = 3, p.channels = 8;
    p.kernel_w = p.kernel_h = 8;
    p.pad_left = 1, p.pad_right = 6, p.pad_top = 2, p.pad_bottom = 3;
    p.pad_value = 127;
    p.recip_w = p.recip_h = recip(8);
    rig.fill_random(p, -128, 127);
    expect_reference(rig, p);
}

TEST(PdpInt8, PaddingValuesAreSignExtendedFromTheirWidth) {
    // PAD_VALUE_nX is sign-extended from bit 7, 8, 9, 9, 10, 10, 10 on the int8 pipeline: the
    // low bits alone must give the same result as the full 19-bit two's complement values.
    PdpRig full("nv_small"), low("nv_small");
    Pool p;
    p.method = kAverage;
    p.width = 1, p.height = 1, p.channels = 8;
    p.kernel_w = p.kernel_h = 3;
    p.pad_left = p.pad_right = p.pad_top = p.pad_bottom = 1;
    p.pad_value = -3;
    p.recip_w = p.recip_h = 0x10000;  // no division: the output is the sum
    for (uint8_t* src : {full.src(), low.src()})
        for (uint32_t c = 0; c < 8; ++c) src[c] = static_cast<uint8_t>(10 * c);
    full.run(p);
    p.explicit_pads = true;
    p.pad_registers = {0xfd, 0x1fa, 0x3f7, 0x3f4, 0x7f1, 0x7ee, 0x7eb};  // -3, -6, ..., -21
    low.run(p);
    for (uint32_t c = 0; c < 8; ++c) {
        // One data element, eight padded positions: x + 8 x (-3).
        EXPECT_EQ(int8_t(full.dst()[c]), int8_t(10 * c - 24)) << c;
        EXPECT_EQ(int8_t(low.dst()[c]), int8_t(10 * c - 24)) << c;
    }
}

TEST(PdpInt8, AverageRoundsTwiceHalfAwayFromZero) {
    // 2x2 windows, RECIP = 0.5 twice. Window sums 5, -5, 3, -3, 1, -1 give
    // round(round(s / 2) / 2): 5 -> 3 -> 2 (one rounding would give 1), -5 -> -3 -> -2,
    // 3 -> 2 -> 1, -3 -> -2 -> -1, 1 -> 1 -> 1, -1 -> -1 -> -1.
    PdpRig rig("nv_small");
    Pool p;
    p.method = kAverage;
    p.width = 4, p.height = 2, p.channels = 3;
    p.kernel_w = p.kernel_h = 2, p.stride_w = p.stride_h = 2;
    p.out_width = 2, p.out_height = 1;
    p.recip_w = p.recip_h = 0x8000;
    const int8_t windows[3][2][4] = {{{2, 1, 1, 1}, {-2, -1, -1, -1}},
                                     {{1, 1, 1, 0}, {-1, -1, -1, 0}},
                                     {{1, 0, 0, 0}, {-1, 0, 0, 0}}};
    for (uint32_t c = 0; c < 3; ++c)
        for (uint32_t ow = 0; ow < 2; ++ow)
            for (uint32_t i = 0; i < 4; ++i)
                rig.src()[rig.src_offset(p, c, i / 2, ow * 2 + i % 2)] =
                    static_cast<uint8_t>(windows[c][ow][i]);
    rig.run(p);
    const int8_t want[3][2] = {{2, -2}, {1, -1}, {1, -1}};
    for (uint32_t c = 0; c < 3; ++c)
        for (uint32_t ow = 0; ow < 2; ++ow)
            EXPECT_EQ(int8_t(rig.dst()[rig.dst_offset(p, c, 0, ow)]), want[c][ow])
                << c << "," << ow;
}

TEST(PdpInt8, AverageWithOneThirdReciprocal) {
    // Sum 7 in a 3x3 window: round(7 x 0x5555 / 2^16) = round(2.33) = 2, then
    // round(2 x 0x5555 / 2^16) = round(0.67) = 1.
    PdpRig rig("nv_small");
    Pool p;
    p.method = kAverage;
    p.width = p.height = 3, p.channels = 1;
    p.kernel_w = p.kernel_h = 3;
    p.recip_w = p.recip_h = 0x5555;
    for (uint32_t i = 0; i < 7; ++i) rig.src()[rig.src_offset(p, 0, i / 3, i % 3)] = 1;
    rig.run(p);
    EXPECT_EQ(rig.dst()[0], 1);
}

// The split used by the split tests: 19 columns pooled 3 wide with stride 2 and one padded
// column on each side, in four pieces: 2 + 3 + 3 + 2 output columns.
Pool split_pool(uint32_t method) {
    Pool p;
    p.method = method;
    p.width = 19, p.height = 5, p.channels = 11;
    p.kernel_w = p.kernel_h = 3, p.stride_w = p.stride_h = 2;
    p.pad_left = p.pad_right = p.pad_top = p.pad_bottom = 1;
    p.out_width = 10, p.out_height = 3;
    p.pad_value = 9;
    p.recip_w = p.recip_h = recip(3);
    return p;
}

TEST(PdpInt8, SplitWidthGivesTheSameResultAsOneGo) {
    for (uint32_t method : {kAverage, kMax, kMin}) {
        SCOPED_TRACE(method);
        PdpRig rig("nv_small");
        Pool p = split_pool(method);
        rig.fill_random(p, -128, 127);
        p.split_num = 3;
        // Piece i > 0 starts kernel_w - stride_w columns before the end of the previous one.
        p.in_first = 4, p.in_mid = 6, p.in_last = 3;
        p.out_first = 2, p.out_mid = 3, p.out_last = 2;
        expect_reference(rig, p);
    }
}

TEST(PdpInt8, TwoPieceSplitWithOverlap) {
    // pdp_16x6x16_4x2_split's geometry with an average: 16 columns, kernel 4 stride 2, padding
    // 2 on both sides, pieces of 2 + 12 + 2 input columns and 1 + 6 + 2 outputs.
    PdpRig rig("nv_small");
    Pool p;
    p.method = kAverage;
    p.width = 16, p.height = 6, p.channels = 16;
    p.kernel_w = 4, p.kernel_h = 2, p.stride_w = p.stride_h = 2;
    p.pad_left = p.pad_right = 2, p.pad_top = p.pad_bottom = 1;
    p.out_width = 9, p.out_height = 4;
    p.pad_value = -11;
    p.recip_w = recip(4), p.recip_h = recip(2);
    p.split_num = 2;
    p.in_first = 2, p.in_mid = 12, p.in_last = 2;
    p.out_first = 1, p.out_mid = 6, p.out_last = 2;
    rig.fill_random(p, -128, 127);
    expect_reference(rig, p);
}

TEST(PdpInt16, AverageKeeps32BitSumsOnNvFull) {
    // int16 values near the limits: the sums need more than 16 bits.
    PdpRig rig("nv_full");
    Pool p = pooling_3x3(kAverage);
    p.precision = kInt16;
    p.channels = 20;  // 16 int16 lanes per 32-byte atom: two surfaces
    p.pad_value = -20000;
    rig.fill_random(p, -32768, 32767);
    expect_reference(rig, p);
}

TEST(PdpInt16, MaxPoolingOnNvFull) {
    PdpRig rig("nv_full");
    Pool p;
    p.precision = kInt16;
    p.width = p.height = 8, p.channels = 64;
    p.kernel_w = p.kernel_h = 2;
    p.out_width = p.out_height = 7;
    rig.fill_random(p, -32768, 32767);
    expect_reference(rig, p);
}

TEST(PdpAtoms, SurfacesFollowTheConfigurationsAtom) {
    // 40 int8 channels: five 8-byte surfaces on nv_small, two 32-byte ones on nv_full. Channel
    // 33 of pixel (0, 0) lands at surface 4 lane 1 on nv_small and surface 1 lane 1 on nv_full.
    for (const char* config : {"nv_small", "nv_full"}) {
        SCOPED_TRACE(config);
        PdpRig rig(config);
        Pool p;
        p.width = p.height = 2, p.channels = 40;
        p.kernel_w = p.kernel_h = 2;
        rig.src()[rig.src_offset(p, 33, 1, 1)] = 42;
        rig.run(p);
        const uint32_t atom = rig.cfg().atom_bytes;
        EXPECT_EQ(rig.dst()[(33 / atom) * atom + 33 % atom], 42);
        EXPECT_EQ(rig.dst_offset(p, 33, 0, 0), (33 / atom) * atom + 33 % atom);
        expect_reference(rig, p);
    }
}

// fp16 patterns used below.
constexpr uint16_t kOne = 0x3c00, kTwo = 0x4000, kThree = 0x4200, kFour = 0x4400;
constexpr uint16_t kFp16Nan = 0x7e01, kFp16Inf = 0x7c00;
// fp17 (6-bit exponent, bias 31): 1.0, 0.5.
constexpr uint32_t kFp17One = 0x7c00, kFp17Half = 0x7800;

void put_fp16(PdpRig& rig, const Pool& p, uint32_t c, uint32_t h, uint32_t w, uint16_t v) {
    uint8_t* at = rig.src() + rig.src_offset(p, c, h, w);
    at[0] = static_cast<uint8_t>(v);
    at[1] = static_cast<uint8_t>(v >> 8);
}

TEST(PdpFp16, AverageInFp17WithReciprocals) {
    // (1 + 2) + (3 + 4) = 10, x 0.5 x 0.5 = 2.5.
    PdpRig rig("nv_full");
    Pool p;
    p.precision = kFp16, p.method = kAverage;
    p.width = p.height = 2, p.channels = 1;
    p.kernel_w = p.kernel_h = 2;
    p.recip_w = p.recip_h = kFp17Half;
    put_fp16(rig, p, 0, 0, 0, kOne);
    put_fp16(rig, p, 0, 0, 1, kTwo);
    put_fp16(rig, p, 0, 1, 0, kThree);
    put_fp16(rig, p, 0, 1, 1, kFour);
    rig.run(p);
    EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    EXPECT_EQ(rig.output16(p, 0, 0, 0), 0x4100);  // 2.5
}

TEST(PdpFp16, AveragePaddingIsScaledByTheKernelWidthAlongH) {
    // One input 3.0 under a 2x2 kernel padded left and top: the row gets PAD_VALUE_1X (1.0)
    // for its missing column, 4.0; the missing row adds 1X x kernel width = 2.0; 6.0 / 4 = 1.5.
    PdpRig rig("nv_full");
    Pool p;
    p.precision = kFp16, p.method = kAverage;
    p.width = p.height = 1, p.channels = 1;
    p.kernel_w = p.kernel_h = 2;
    p.pad_left = p.pad_top = 1;
    p.explicit_pads = true;
    p.pad_registers = {kFp17One, 0x8000, 0, 0, 0, 0, 0};
    p.recip_w = p.recip_h = kFp17Half;
    put_fp16(rig, p, 0, 0, 0, kThree);
    rig.run(p);
    EXPECT_EQ(rig.output16(p, 0, 0, 0), 0x3e00);  // 1.5
}

TEST(PdpFp16, MaxAndMinOrderSignedZerosAndInfinities) {
    // Lanes: {-0, +0} max +0 / min -0; {-inf, -65504} max -65504 / min -inf;
    // {1.0, inf} max inf / min 1.0; {-2, -3} max -2 / min -3.
    const uint16_t pairs[4][2] = {
        {0x8000, 0x0000}, {0xfc00, 0xfbff}, {kOne, kFp16Inf}, {0xc000, 0xc200}};
    const uint16_t want_max[4] = {0x0000, 0xfbff, kFp16Inf, 0xc000};
    const uint16_t want_min[4] = {0x8000, 0xfc00, kOne, 0xc200};
    for (uint32_t method : {kMax, kMin}) {
        PdpRig rig("nv_full");
        Pool p;
        p.precision = kFp16, p.method = method;
        p.width = 2, p.height = 1, p.channels = 4;
        p.kernel_w = 2;
        for (uint32_t c = 0; c < 4; ++c)
            for (uint32_t w = 0; w < 2; ++w) put_fp16(rig, p, c, 0, w, pairs[c][w]);
        rig.run(p);
        for (uint32_t c = 0; c < 4; ++c)
            EXPECT_EQ(rig.output16(p, c, 0, 0), method == kMax ? want_max[c] : want_min[c])
                << (method == kMax ? "max " : "min ") << c;
        EXPECT_EQ(rig.get("PDP", "D_INF_INPUT_NUM"), 2u);
        EXPECT_EQ(rig.get("PDP", "D_NAN_INPUT_NUM"), 0u);
    }
}

TEST(PdpFp16, NanInputsAreCountedPropagatedOrFlushed) {
    for (bool flush : {false, true}) {
        SCOPED_TRACE(flush ? "flushed" : "kept");
        PdpRig rig("nv_full");
        Pool p;
        p.precision = kFp16, p.method = kMax;
        p.width = 2, p.height = 2, p.channels = 2;
        p.kernel_w = p.kernel_h = 2;
        p.nan_to_zero = flush;
        // Channel 0: a NaN among 1, 2, 3; channel 1: +inf among negatives.
        put_fp16(rig, p, 0, 0, 0, kOne);
        put_fp16(rig, p, 0, 0, 1, kFp16Nan);
        put_fp16(rig, p, 0, 1, 0, kTwo);
        put_fp16(rig, p, 0, 1, 1, kThree);
        put_fp16(rig, p, 1, 0, 0, 0xbc00);
        put_fp16(rig, p, 1, 0, 1, 0xc000);
        put_fp16(rig, p, 1, 1, 0, kFp16Inf);
        put_fp16(rig, p, 1, 1, 1, 0xc200);
        rig.run(p);
        EXPECT_EQ(rig.output16(p, 0, 0, 0), flush ? kThree : kFp16Nan);
        EXPECT_EQ(rig.output16(p, 1, 0, 0), kFp16Inf);
        EXPECT_EQ(rig.get("PDP", "D_NAN_INPUT_NUM"), 1u);  // counted before the flush
        EXPECT_EQ(rig.get("PDP", "D_INF_INPUT_NUM"), 1u);
        EXPECT_EQ(rig.get("PDP", "D_NAN_OUTPUT_NUM"), flush ? 0u : 1u);
    }
}

TEST(PdpErrors, UnsupportedProgrammingIsReportedAndWritesNothing) {
    struct Case {
        const char* name;
        const char* config;
        void (*change)(Pool&);
    };
    const Case cases[] = {
        {"9x9 kernel", "nv_small", [](Pool& p) { p.kernel_w = p.kernel_h = 9; }},
        {"int16 on nv_small", "nv_small", [](Pool& p) { p.precision = kInt16; }},
        {"reserved method", "nv_full", [](Pool& p) { p.method = 3; }},
        {"window without data", "nv_small", [](Pool& p) { p.pad_left = 3; }},
        {"too many output lines", "nv_full", [](Pool& p) { p.out_height = 9; }},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        PdpRig rig(c.config);
        Pool p;
        p.width = p.height = 4, p.channels = 8;
        p.kernel_w = p.kernel_h = 2, p.stride_w = p.stride_h = 2;
        p.out_width = p.out_height = 2;
        c.change(p);
        rig.fill_random(p, -128, 127);
        rig.run(p);
        EXPECT_EQ(rig.stats().programming_errors, 1u);
        EXPECT_NE(rig.stats().last_error.find("PDP"), std::string::npos) << rig.stats().last_error;
        EXPECT_EQ(rig.stats().bytes_written, 0u);
        EXPECT_EQ(rig.get("GLB", "S_INTR_STATUS"), 1u << 4);  // the operation still completes
    }
}

TEST(PdpErrors, RdmaThatDisagreesWithPdpIsReported) {
    PdpRig rig("nv_small");
    Pool p;
    p.width = p.height = 4, p.channels = 8;
    p.kernel_w = p.kernel_h = 2, p.stride_w = p.stride_h = 2;
    p.out_width = p.out_height = 2;
    p.rdma_width = 7;  // PDP_RDMA would read 7 columns a line, PDP pools 4
    rig.run(p);
    EXPECT_EQ(rig.stats().programming_errors, 1u);
    EXPECT_EQ(rig.stats().bytes_written, 0u);
    EXPECT_NE(rig.stats().last_error.find("PDP_RDMA"), std::string::npos) << rig.stats().last_error;
}

// Flying mode: SDP's output handed over directly (white box: the unit called as the scheduler
// calls it).
TEST(PdpFlying, PoolsTheCubeSdpHandsOver) {
    const HwConfig& cfg = test::config("nv_small");
    FlatMemory memory;
    auto* dst = reinterpret_cast<uint8_t*>(memory.add_region(MemoryPort::Primary, kDst, 0x1000));
    DeviceStats stats;
    Dma dma(memory, stats);
    Context ctx{cfg, dma, stats};
    std::vector<uint32_t> words(NVDLA_UNIT_WINDOW / 4, 0);
    auto reg = [&](uint32_t offset, uint32_t value) { words[offset / 4] = value; };
    reg(NVDLA_PDP_D_DATA_CUBE_IN_WIDTH, 3);
    reg(NVDLA_PDP_D_DATA_CUBE_IN_HEIGHT, 1);
    reg(NVDLA_PDP_D_DATA_CUBE_IN_CHANNEL, 2);
    reg(NVDLA_PDP_D_DATA_CUBE_OUT_WIDTH, 1);
    reg(NVDLA_PDP_D_DATA_CUBE_OUT_HEIGHT, 0);
    reg(NVDLA_PDP_D_OPERATION_MODE_CFG, kMax);  // FLYING_MODE 0: on the fly
    reg(NVDLA_PDP_D_POOLING_KERNEL_CFG, 1 | 1 << 8 | 1 << 16 | 1 << 20);
    reg(NVDLA_PDP_D_DST_BASE_ADDR_LOW, static_cast<uint32_t>(kDst));
    reg(NVDLA_PDP_D_DST_LINE_STRIDE, 16);
    reg(NVDLA_PDP_D_DST_SURFACE_STRIDE, 16);
    reg(NVDLA_PDP_D_DST_RAM_CFG, 1);
    ElementCube cube;
    cube.channels = 3, cube.height = 2, cube.width = 4;
    cube.values.resize(3 * 2 * 4);
    for (size_t i = 0; i < cube.values.size(); ++i) cube.values[i] = static_cast<int16_t>(i);
    Pdp pdp;
    pdp.execute(ctx, Group(words.data()), Group(), &cube);
    EXPECT_EQ(stats.programming_errors, 0u) << stats.last_error;
    // Channel c, output column k: the largest of (c, h, 2k..2k+1) = index(c, 1, 2k + 1).
    for (uint32_t c = 0; c < 3; ++c)
        for (uint32_t k = 0; k < 2; ++k)
            EXPECT_EQ(dst[k * 8 + c], cube.index(0, c, 1, 2 * k + 1)) << c << "," << k;
    EXPECT_EQ(dst[3], 0);  // padding lanes pool zeros
}

}  // namespace
}  // namespace nvdla::emu
