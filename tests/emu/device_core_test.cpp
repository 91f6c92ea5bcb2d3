// The device's register behaviour: masks per map, ping-pong groups, interrupts, absent
// registers, DMA faults.
#include <gtest/gtest.h>

#include <vector>

#include "emu/dma.hpp"
#include "nvdla/emu/device.hpp"
#include "nvdla/hw/register_map.hpp"
#include "test_support.hpp"

namespace nvdla::emu {
namespace {

uint32_t addr(nvdla_reg_map map, nvdla_unit unit, uint32_t offset) {
    return nvdla_unit_base(map, unit) + offset;
}

TEST(RegisterMap, BothMapsShareOffsetsButNotBases) {
    const auto& full = hw::RegisterMap::get(NVDLA_REG_MAP_FULL);
    const auto& small = hw::RegisterMap::get(NVDLA_REG_MAP_SMALL);
    const hw::RegisterInfo* f = full.find("NVDLA_SDP.D_OP_ENABLE_0");
    const hw::RegisterInfo* s = small.find("SDP.D_OP_ENABLE");
    ASSERT_TRUE(f && s);
    EXPECT_EQ(f->offset, 0x38u);
    EXPECT_EQ(f->address, 0xb038u);  // SDP at 0xb000 on nv_full
    EXPECT_EQ(s->address, 0x9038u);  // and at 0x9000 on the nv_small family
    EXPECT_EQ(full.at(0xb038), f);
    EXPECT_EQ(full.find("CFGROM.CFGROM_HW_VERSION"), nullptr);  // nv_full has no CFGROM
    ASSERT_NE(small.find("NVDLA_CFGROM.CFGROM_HW_VERSION_0"), nullptr);
    // Registers whose own name ends in _0 keep it: CDMA D_DAIN_ADDR_LOW_0 is "..._0_0".
    EXPECT_NE(full.find("NVDLA_CDMA.D_DAIN_ADDR_LOW_0_0"), nullptr);
    EXPECT_NE(full.find("NVDLA_CDMA.D_DAIN_ADDR_LOW_1_0"), nullptr);
    EXPECT_EQ(full.find("NVDLA_SDP.D_NO_SUCH_0"), nullptr);
}

TEST(RegisterMap, NvFullKeepsAddressesAligned) {
    // nv_full's DST_BASE_ADDR_LOW is [31:5]; the nv_small family's is [31:0].
    EXPECT_EQ(
        hw::RegisterMap::get(NVDLA_REG_MAP_FULL).find("SDP", "D_DST_BASE_ADDR_LOW")->write_mask,
        0xffffffe0u);
    EXPECT_EQ(
        hw::RegisterMap::get(NVDLA_REG_MAP_SMALL).find("SDP", "D_DST_BASE_ADDR_LOW")->write_mask,
        0xffffffffu);
}

class DeviceCore : public ::testing::Test {
  protected:
    void make(const char* config) {
        device_ = std::make_unique<Device>(test::config(config), memory_);
        map_ = test::config(config).reg_map;
    }
    uint32_t rd(nvdla_unit u, uint32_t off) { return device_->read_register(addr(map_, u, off)); }
    void wr(nvdla_unit u, uint32_t off, uint32_t v) {
        device_->write_register(addr(map_, u, off), v);
    }

    FlatMemory memory_;
    std::unique_ptr<Device> device_;
    nvdla_reg_map map_{};
};

TEST_F(DeviceCore, WritesAreMaskedLikeTheMap) {
    make("nv_full");
    wr(NVDLA_UNIT_SDP, NVDLA_SDP_D_DST_BASE_ADDR_LOW, 0x80000013);
    EXPECT_EQ(rd(NVDLA_UNIT_SDP, NVDLA_SDP_D_DST_BASE_ADDR_LOW), 0x80000000u);
    make("nv_small");
    wr(NVDLA_UNIT_SDP, NVDLA_SDP_D_DST_BASE_ADDR_LOW, 0x80000013);
    EXPECT_EQ(rd(NVDLA_UNIT_SDP, NVDLA_SDP_D_DST_BASE_ADDR_LOW), 0x80000013u);
    // The hardware version reads its reset value and ignores writes.
    wr(NVDLA_UNIT_GLB, NVDLA_GLB_S_NVDLA_HW_VERSION, 0);
    EXPECT_EQ(rd(NVDLA_UNIT_GLB, NVDLA_GLB_S_NVDLA_HW_VERSION), 0x303031u);
}

TEST_F(DeviceCore, AbsentRegistersReadZeroAndIgnoreWrites) {
    make("nv_full");
    device_->write_register(0x0b0fc, 0x1234);  // inside SDP's window, no register there
    EXPECT_EQ(device_->read_register(0x0b0fc), 0u);
    EXPECT_EQ(device_->read_register(0x7fff0), 0u);     // outside every unit
    EXPECT_EQ(device_->read_register(0x0), 0x303031u);  // GLB at 0 on nv_full
}

TEST_F(DeviceCore, PingPongGroupsFollowTheProducerPointer) {
    make("nv_small");
    wr(NVDLA_UNIT_PDP, NVDLA_PDP_S_POINTER, 0);
    wr(NVDLA_UNIT_PDP, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH, 7);
    wr(NVDLA_UNIT_PDP, NVDLA_PDP_S_POINTER, 1);
    EXPECT_EQ(rd(NVDLA_UNIT_PDP, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH), 0u);  // group 1 untouched
    wr(NVDLA_UNIT_PDP, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH, 9);
    EXPECT_EQ(rd(NVDLA_UNIT_PDP, NVDLA_PDP_S_POINTER), 1u);  // producer 1, consumer 0
    wr(NVDLA_UNIT_PDP, NVDLA_PDP_S_POINTER, 0);
    EXPECT_EQ(rd(NVDLA_UNIT_PDP, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH), 7u);
    // Single registers (below D_OP_ENABLE) are shared; CONSUMER cannot be written.
    wr(NVDLA_UNIT_PDP, NVDLA_PDP_S_POINTER, 0x10000);
    EXPECT_EQ(rd(NVDLA_UNIT_PDP, NVDLA_PDP_S_POINTER), 0u);
}

TEST_F(DeviceCore, StatusShowsEnabledGroupsWaitingForTheirPartners) {
    make("nv_small");
    device_->set_stalled(true);  // nothing runs
    wr(NVDLA_UNIT_PDP, NVDLA_PDP_S_POINTER, 1);
    wr(NVDLA_UNIT_PDP, NVDLA_PDP_D_OP_ENABLE, 1);
    // Group 0 idle, group 1 enabled but not the consumer: PENDING (2) in bits 17:16.
    EXPECT_EQ(rd(NVDLA_UNIT_PDP, NVDLA_PDP_S_STATUS), 2u << 16);
    EXPECT_EQ(rd(NVDLA_UNIT_PDP, NVDLA_PDP_D_OP_ENABLE), 1u);
}

TEST_F(DeviceCore, InterruptsSetStatusRaiseTheLineAndClearOnWriteOne) {
    make("nv_small");
    std::vector<bool> levels;
    device_->set_interrupt_line([&](bool level) { levels.push_back(level); });
    // Mask PDP group 0, then set SDP 1 and PDP 0 by hand.
    wr(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_MASK, 1u << 4);
    wr(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_SET, 1u << 4);
    EXPECT_EQ(rd(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_STATUS), 1u << 4);
    EXPECT_FALSE(device_->interrupt_asserted());  // masked: status only
    wr(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_SET, 1u << 1);
    EXPECT_TRUE(device_->interrupt_asserted());
    EXPECT_EQ(rd(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_STATUS), (1u << 4) | (1u << 1));
    wr(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_STATUS, 1u << 1);  // clear one: another remains
    EXPECT_TRUE(device_->interrupt_asserted());
    wr(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_STATUS, 1u << 4);
    EXPECT_FALSE(device_->interrupt_asserted());
    EXPECT_EQ(levels, (std::vector<bool>{true, false}));
}

TEST(Dma, FaultsReadZerosDropWritesAndAreReported) {
    FlatMemory memory;
    std::byte* ram = memory.add_region(MemoryPort::Primary, 0x80000000, 0x1000);
    DeviceStats stats;
    Dma dma(memory, stats);
    std::vector<uint8_t> buf(16, 0xaa);
    EXPECT_TRUE(dma.write(NVDLA_UNIT_SDP, MemoryPort::Primary, 0x80000ff0, buf.data(), 16));
    EXPECT_EQ(ram[0xff0], std::byte{0xaa});
    EXPECT_FALSE(dma.read(NVDLA_UNIT_PDP, MemoryPort::Primary, 0x80000ff8, buf.data(), 16));
    EXPECT_EQ(buf, std::vector<uint8_t>(16, 0));
    EXPECT_FALSE(dma.write(NVDLA_UNIT_SDP, MemoryPort::Secondary, 0x80000000, buf.data(), 1));
    dma.set_access_check([](const DmaAccess& a) { return a.address >= 0x80000800; });
    EXPECT_FALSE(dma.read(NVDLA_UNIT_CDP, MemoryPort::Primary, 0x80000000, buf.data(), 4));
    EXPECT_TRUE(dma.read(NVDLA_UNIT_CDP, MemoryPort::Primary, 0x80000800, buf.data(), 4));
    EXPECT_EQ(stats.faults, 3u);
    EXPECT_EQ(stats.first_fault.unit, NVDLA_UNIT_PDP);
    EXPECT_EQ(stats.first_fault.address, 0x80000ff8u);
    EXPECT_NE(stats.last_error.find("CDP DMA read of 4 bytes at 0x80000000"), std::string::npos)
        << stats.last_error;
    EXPECT_EQ(stats.bytes_written, 16u);
    EXPECT_EQ(stats.bytes_read, 4u);
}

}  // namespace
}  // namespace nvdla::emu
