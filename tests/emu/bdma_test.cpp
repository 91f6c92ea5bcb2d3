// BDMA driven through its registers the way the firmware (kmd/firmware/bdma.c) and the
// hardware traces program it. Expected memory is computed by a straightforward reference in
// this file over the whole region, so bytes written outside a destination are caught too.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "nvdla/emu/device.hpp"
#include "nvdla/hw/register_map.hpp"
#include "test_support.hpp"

namespace nvdla::emu {
namespace {

constexpr uint64_t kDram = 0x80000000;
constexpr uint64_t kSram = 0x50000000;
constexpr uint64_t kRegionBytes = 0x20000;

// One transfer as software describes it (byte sizes and counts, not register encodings).
struct Copy {
    uint64_t src = kDram, dst = kDram + 0x10000;
    uint32_t line_bytes = 32, lines = 1, surfaces = 1;
    uint32_t src_line = 0, dst_line = 0, src_surface = 0, dst_surface = 0;
    bool src_dram = true, dst_dram = true;
};

class BdmaTest : public ::testing::Test {
  protected:
    BdmaTest() : device_(test::nv_full(), memory_) {
        auto rng = test::rng_for_test();
        dram_ = memory_.add_region(MemoryPort::Primary, kDram, kRegionBytes);
        sram_ = memory_.add_region(MemoryPort::Secondary, kSram, kRegionBytes);
        for (std::byte* region : {dram_, sram_}) {
            const auto bytes = test::random_vector<uint8_t>(rng, kRegionBytes, 0, 255);
            std::memcpy(region, bytes.data(), bytes.size());
        }
    }

    const hw::RegisterMap& map() const { return hw::RegisterMap::get(NVDLA_REG_MAP_FULL); }
    void set(const char* unit, const char* reg, uint32_t value) {
        device_.write_register(map().find(unit, reg)->address, value);
    }
    uint32_t get(const char* unit, const char* reg) {
        return device_.read_register(map().find(unit, reg)->address);
    }
    void set(const char* reg, uint32_t value) { set("BDMA", reg, value); }
    uint32_t get(const char* reg) { return get("BDMA", reg); }

    // Programs one transfer and queues it (CFG_OP.EN), in the firmware's register order.
    void queue(const Copy& c) {
        set("CFG_SRC_ADDR_LOW", uint32_t(c.src));
        set("CFG_SRC_ADDR_HIGH", uint32_t(c.src >> 32));
        set("CFG_DST_ADDR_LOW", uint32_t(c.dst));
        set("CFG_DST_ADDR_HIGH", uint32_t(c.dst >> 32));
        set("CFG_LINE", c.line_bytes / 32 - 1);
        set("CFG_CMD", (c.src_dram ? 1u : 0u) | (c.dst_dram ? 2u : 0u));
        set("CFG_LINE_REPEAT", c.lines - 1);
        set("CFG_SRC_LINE", c.src_line);
        set("CFG_DST_LINE", c.dst_line);
        set("CFG_SURF_REPEAT", c.surfaces - 1);
        set("CFG_SRC_SURF", c.src_surface);
        set("CFG_DST_SURF", c.dst_surface);
        set("CFG_OP", 1);
    }

    std::vector<uint8_t> snapshot(const std::byte* region) const {
        const auto* p = reinterpret_cast<const uint8_t*>(region);
        return std::vector<uint8_t>(p, p + kRegionBytes);
    }
    // The reference: what memory holds after c, applied to images of both regions.
    static void apply(const Copy& c, std::vector<uint8_t>& dram, std::vector<uint8_t>& sram) {
        const std::vector<uint8_t>& src = c.src_dram ? dram : sram;
        std::vector<uint8_t>& dst = c.dst_dram ? dram : sram;
        const uint64_t src_base = c.src - (c.src_dram ? kDram : kSram);
        const uint64_t dst_base = c.dst - (c.dst_dram ? kDram : kSram);
        for (uint32_t s = 0; s < c.surfaces; ++s)
            for (uint32_t l = 0; l < c.lines; ++l)
                for (uint32_t b = 0; b < c.line_bytes; ++b)
                    dst[dst_base + s * c.dst_surface + l * c.dst_line + b] =
                        src[src_base + s * c.src_surface + l * c.src_line + b];
    }

    uint32_t interrupt_status() { return get("GLB", "S_INTR_STATUS"); }

    FlatMemory memory_;
    Device device_;
    std::byte* dram_ = nullptr;
    std::byte* sram_ = nullptr;
};

constexpr uint32_t kGroup0Done = 1u << 6;
constexpr uint32_t kGroup1Done = 1u << 7;

// Whole-region comparison that names the first differing byte instead of printing both.
::testing::AssertionResult same_bytes(const std::vector<uint8_t>& got,
                                      const std::vector<uint8_t>& want) {
    for (size_t i = 0; i < want.size(); ++i)
        if (got[i] != want[i])
            return ::testing::AssertionFailure()
                   << "byte " << i << " is " << int(got[i]) << ", expected " << int(want[i]);
    return ::testing::AssertionSuccess();
}

uint32_t free_slots(uint32_t status) {
    return status & 0xff;
}
bool idle(uint32_t status) {
    return status & (1u << 8);
}
bool group_busy(uint32_t status, int group) {
    return status & (1u << (9 + group));
}

TEST_F(BdmaTest, ResetStatusIsIdleWithTwentyFreeSlots) {
    EXPECT_EQ(get("STATUS"), 0x114u);  // FREE_SLOT 20, IDLE
    EXPECT_EQ(get("STATUS_GRP0_READ_STALL"), 0u);
    EXPECT_EQ(get("STATUS_GRP1_WRITE_STALL"), 0u);
}

TEST_F(BdmaTest, CopiesStridedLinesAndSurfaces) {
    Copy c;
    c.line_bytes = 64;
    c.lines = 3;
    c.surfaces = 2;
    c.src_line = 96;  // padded source lines
    c.src_surface = 0x200;
    c.dst_line = 128;
    c.dst_surface = 0x1c0;
    auto dram = snapshot(dram_), sram = snapshot(sram_);
    apply(c, dram, sram);

    queue(c);
    set("CFG_LAUNCH0", 1);
    EXPECT_TRUE(same_bytes(snapshot(dram_), dram));
    EXPECT_TRUE(same_bytes(snapshot(sram_), sram));
    EXPECT_EQ(interrupt_status(), kGroup0Done);
    EXPECT_TRUE(device_.interrupt_asserted());
    EXPECT_EQ(device_.stats().bytes_written, 64u * 3 * 2);
    EXPECT_EQ(device_.stats().programming_errors, 0u);
    EXPECT_EQ(device_.stats().faults, 0u);
}

TEST_F(BdmaTest, RegressionTransferOfEightLinesOf256Bytes) {
    // BDMA_L0_0: one transfer of 8 x 256 B, packed on both sides (like the sanity1 trace).
    Copy c;
    c.line_bytes = 256;
    c.lines = 8;
    c.src_line = c.dst_line = 256;
    c.src_surface = c.dst_surface = 0x800;
    queue(c);
    set("CFG_LAUNCH0", 1);
    EXPECT_EQ(std::memcmp(dram_ + 0x10000, dram_, 8 * 256), 0);
    EXPECT_NE(dram_[0x10000 + 8 * 256], dram_[8 * 256]);  // random data: no ninth line
    EXPECT_EQ(device_.stats().operations, 1u);
}

TEST_F(BdmaTest, CfgOpAndLaunchReadBackAsWrittenLikeTheTraces) {
    queue(Copy{});
    EXPECT_EQ(get("CFG_OP"), 1u);
    set("CFG_LAUNCH0", 1);
    EXPECT_EQ(get("CFG_LAUNCH0"), 1u);
    EXPECT_EQ(get("CFG_LINE"), 0u);
    EXPECT_EQ(get("CFG_CMD"), 3u);
}

TEST_F(BdmaTest, QueuedTransfersWaitForTheLaunchAndKeepTheirRegisters) {
    Copy first;
    first.dst = kDram + 0x10000;
    Copy second = first;
    second.src = kDram + 0x100;
    second.dst = kDram + 0x11000;
    auto dram = snapshot(dram_), sram = snapshot(sram_);
    const auto untouched = dram;
    apply(first, dram, sram);
    apply(second, dram, sram);

    queue(first);
    queue(second);
    set("CFG_SRC_ADDR_LOW", uint32_t(kDram + 0x4000));  // too late for the queued ones
    uint32_t status = get("STATUS");
    EXPECT_EQ(free_slots(status), 18u);
    EXPECT_FALSE(idle(status));
    EXPECT_FALSE(group_busy(status, 0));
    EXPECT_TRUE(same_bytes(snapshot(dram_), untouched));  // nothing moves before the launch
    EXPECT_EQ(interrupt_status(), 0u);

    set("CFG_LAUNCH0", 1);
    EXPECT_TRUE(same_bytes(snapshot(dram_), dram));
    status = get("STATUS");
    EXPECT_EQ(free_slots(status), 20u);
    EXPECT_TRUE(idle(status));
    EXPECT_EQ(interrupt_status(), kGroup0Done);
    EXPECT_EQ(device_.stats().operations, 1u);  // one group, one operation
}

TEST_F(BdmaTest, TwoGroupsRaiseTheirOwnInterrupts) {
    Copy a;
    a.dst = kDram + 0x10000;
    Copy b;
    b.src = kDram + 0x2000;
    b.dst = kDram + 0x12000;
    b.line_bytes = 96;
    Copy c = b;
    c.dst = kDram + 0x13000;
    auto dram = snapshot(dram_), sram = snapshot(sram_);
    apply(a, dram, sram);
    apply(b, dram, sram);
    apply(c, dram, sram);

    set("GLB", "S_INTR_MASK", kGroup1Done);  // group 1 masked: status only
    queue(a);
    set("CFG_LAUNCH0", 1);
    EXPECT_EQ(interrupt_status(), kGroup0Done);
    EXPECT_TRUE(device_.interrupt_asserted());
    set("GLB", "S_INTR_STATUS", kGroup0Done);  // the ISR clears it
    EXPECT_FALSE(device_.interrupt_asserted());

    queue(b);
    queue(c);
    set("CFG_LAUNCH1", 1);
    EXPECT_EQ(interrupt_status(), kGroup1Done);
    EXPECT_FALSE(device_.interrupt_asserted());
    EXPECT_TRUE(same_bytes(snapshot(dram_), dram));
    EXPECT_EQ(device_.stats().operations, 2u);
}

TEST_F(BdmaTest, LaunchesWaitWhileStalledAndShowBusyGroups) {
    Copy a;
    a.dst = kDram + 0x10000;
    Copy b = a;
    b.src = kDram + 0x40;
    b.dst = kDram + 0x10020;
    auto dram = snapshot(dram_), sram = snapshot(sram_);
    const auto untouched = dram;
    apply(a, dram, sram);
    apply(b, dram, sram);

    device_.set_stalled(true);
    queue(a);
    set("CFG_LAUNCH0", 1);
    queue(b);
    set("CFG_LAUNCH1", 1);
    uint32_t status = get("STATUS");
    EXPECT_TRUE(group_busy(status, 0));
    EXPECT_TRUE(group_busy(status, 1));
    EXPECT_FALSE(idle(status));
    EXPECT_EQ(free_slots(status), 18u);  // launched commands stay in their slots until issued
    EXPECT_TRUE(same_bytes(snapshot(dram_), untouched));

    device_.set_stalled(false);
    EXPECT_TRUE(same_bytes(snapshot(dram_), dram));
    status = get("STATUS");
    EXPECT_EQ(status, 0x114u);
    EXPECT_EQ(interrupt_status(), kGroup0Done | kGroup1Done);
    EXPECT_EQ(device_.stats().operations, 2u);
}

TEST_F(BdmaTest, TwentySlotsAndATwentyFirstTransferIsDropped) {
    auto dram = snapshot(dram_), sram = snapshot(sram_);
    for (uint32_t i = 0; i < 21; ++i) {
        Copy c;
        c.src = kDram + 32 * i;
        c.dst = kDram + 0x10000 + 64 * i;
        if (i < 20) apply(c, dram, sram);
        queue(c);
        if (i < 20) {
            EXPECT_EQ(free_slots(get("STATUS")), 19u - i);
        }
    }
    EXPECT_EQ(device_.stats().programming_errors, 1u);
    EXPECT_NE(device_.stats().last_error.find("CFG_OP"), std::string::npos)
        << device_.stats().last_error;
    set("CFG_LAUNCH0", 1);
    EXPECT_TRUE(same_bytes(snapshot(dram_), dram));  // the 21st destination was not written
    EXPECT_EQ(get("STATUS"), 0x114u);
    EXPECT_EQ(device_.stats().programming_errors, 1u);
}

TEST_F(BdmaTest, SecondaryMemoryAndBothDirections) {
    Copy to_sram;
    to_sram.src = kDram + 0x800;
    to_sram.dst = kSram + 0x1000;
    to_sram.dst_dram = false;
    to_sram.line_bytes = 128;
    to_sram.lines = 2;
    to_sram.src_line = 128;
    to_sram.dst_line = 160;
    Copy within_sram;
    within_sram.src_dram = within_sram.dst_dram = false;
    within_sram.src = kSram + 0x1000;  // reads what the previous transfer wrote
    within_sram.dst = kSram + 0x8000;
    within_sram.line_bytes = 288;
    Copy to_dram;
    to_dram.src_dram = false;
    to_dram.src = kSram + 0x20;
    to_dram.dst = kDram + 0x14000;
    auto dram = snapshot(dram_), sram = snapshot(sram_);
    for (const Copy* c : {&to_sram, &within_sram, &to_dram}) apply(*c, dram, sram);

    queue(to_sram);
    queue(within_sram);
    queue(to_dram);
    set("CFG_LAUNCH1", 1);
    EXPECT_TRUE(same_bytes(snapshot(dram_), dram));
    EXPECT_TRUE(same_bytes(snapshot(sram_), sram));
    EXPECT_EQ(interrupt_status(), kGroup1Done);
}

TEST_F(BdmaTest, HighAddressBitsSelectMemoryAbove4GiB) {
    std::byte* high = memory_.add_region(MemoryPort::Primary, 0x100000000ull, 0x1000);
    Copy c;
    c.dst = 0x100000040ull;
    c.line_bytes = 64;
    queue(c);
    set("CFG_LAUNCH0", 1);
    EXPECT_EQ(std::memcmp(high + 0x40, dram_, 64), 0);
    EXPECT_EQ(high[0x3f], std::byte{0});
    EXPECT_EQ(high[0x80], std::byte{0});
    EXPECT_EQ(device_.stats().faults, 0u);
}

TEST_F(BdmaTest, RepeatsBeyondTheStoreCounterAreRefused) {
    const auto untouched = snapshot(dram_);
    Copy c;
    c.lines = 8193;  // LINE_REPEAT 8192 does not fit the store engine's 13 bits
    c.src_line = c.dst_line = 0;
    queue(c);
    set("CFG_LAUNCH0", 1);
    EXPECT_TRUE(same_bytes(snapshot(dram_), untouched));
    EXPECT_EQ(device_.stats().programming_errors, 1u);
    EXPECT_NE(device_.stats().last_error.find("CFG_LINE_REPEAT 8192"), std::string::npos)
        << device_.stats().last_error;
    EXPECT_EQ(interrupt_status(), kGroup0Done);  // the group still completes
}

TEST_F(BdmaTest, AnEmptyLaunchIsReportedAndCompletes) {
    set("CFG_LAUNCH1", 1);
    EXPECT_EQ(device_.stats().programming_errors, 1u);
    EXPECT_NE(device_.stats().last_error.find("CFG_LAUNCH1"), std::string::npos);
    EXPECT_EQ(interrupt_status(), kGroup1Done);
    EXPECT_EQ(get("STATUS"), 0x114u);
}

TEST_F(BdmaTest, WritingZeroToOpOrLaunchDoesNothing) {
    const auto untouched = snapshot(dram_);
    set("CFG_OP", 0);
    set("CFG_LAUNCH0", 0);
    EXPECT_EQ(get("STATUS"), 0x114u);
    EXPECT_EQ(interrupt_status(), 0u);
    EXPECT_TRUE(same_bytes(snapshot(dram_), untouched));
}

TEST_F(BdmaTest, DestinationOutsideMemoryIsAFaultAndWritesNothingElse) {
    const auto dram = snapshot(dram_), sram = snapshot(sram_);
    Copy c;
    c.dst = 0x90000000;  // not backed
    c.lines = 2;
    c.dst_line = 32;
    queue(c);
    set("CFG_LAUNCH0", 1);
    EXPECT_EQ(device_.stats().faults, 2u);  // one per line
    EXPECT_EQ(device_.stats().first_fault.unit, NVDLA_UNIT_BDMA);
    EXPECT_TRUE(device_.stats().first_fault.write);
    EXPECT_TRUE(same_bytes(snapshot(dram_), dram));
    EXPECT_TRUE(same_bytes(snapshot(sram_), sram));
    EXPECT_EQ(interrupt_status(), kGroup0Done);
}

TEST_F(BdmaTest, ResetForgetsQueuedTransfers) {
    queue(Copy{});
    EXPECT_EQ(free_slots(get("STATUS")), 19u);
    device_.reset();
    EXPECT_EQ(get("STATUS"), 0x114u);
    const auto untouched = snapshot(dram_);
    set("CFG_LAUNCH0", 1);  // nothing left to launch
    EXPECT_TRUE(same_bytes(snapshot(dram_), untouched));
}

}  // namespace
}  // namespace nvdla::emu
