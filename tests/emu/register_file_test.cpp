// The register file's CSB address tables against the register map they are built from: every
// address of the CSB space (aligned or not, in a unit's window or not) lands in the unit and
// the register the map names, on both maps.
#include <gtest/gtest.h>

#include "emu/register_file.hpp"
#include "nvdla/hw/register_map.hpp"

namespace nvdla::emu {
namespace {

constexpr uint32_t kCsbSpace = 0x40000;  // well past the last unit's window on both maps

void expect_tables_follow_the_map(nvdla_reg_map which) {
    const hw::RegisterMap& map = hw::RegisterMap::get(which);
    RegisterFile regs(which);
    for (uint32_t address = 0; address < kCsbSpace; ++address) {
        const std::optional<nvdla_unit> unit = map.unit_at(address);
        ASSERT_EQ(regs.unit_at(address), unit) << std::hex << "address 0x" << address;
        const hw::RegisterInfo* want = map.at(address & ~3u);
        const hw::RegisterInfo* got = regs.csb_write(address, 0);
        ASSERT_EQ(got, want) << std::hex << "address 0x" << address;
    }
}

TEST(RegisterFile, CsbTablesFollowTheNvFullMap) {
    expect_tables_follow_the_map(NVDLA_REG_MAP_FULL);
}

TEST(RegisterFile, CsbTablesFollowTheNvSmallMap) {
    expect_tables_follow_the_map(NVDLA_REG_MAP_SMALL);
}

// A write lands in the producer group's word through the write mask, misaligned or not.
TEST(RegisterFile, WritesReachTheRegisterThroughItsMask) {
    RegisterFile regs(NVDLA_REG_MAP_FULL);
    const hw::RegisterInfo* r = regs.map().find("PDP", "D_DATA_CUBE_IN_WIDTH");
    ASSERT_NE(r, nullptr);
    regs.csb_write(r->address + 2, 0xffffffffu);
    EXPECT_EQ(regs.csb_read(r->address), r->write_mask & r->read_mask);
    EXPECT_EQ(regs.group(NVDLA_UNIT_PDP, 0)[r->offset], r->write_mask);
    EXPECT_EQ(regs.group(NVDLA_UNIT_PDP, 1)[r->offset], r->reset);
}

}  // namespace
}  // namespace nvdla::emu
