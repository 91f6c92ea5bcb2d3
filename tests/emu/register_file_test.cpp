// The register map's CSB address tables, and the register file's writes through them, against
// a plain scan of the units and registers: every address of the CSB space (aligned or not, in
// a unit's window or not) lands in the unit and the register the scan finds, on both maps.
#include <gtest/gtest.h>

#include "emu/register_file.hpp"
#include "nvdla/hw/register_map.hpp"

namespace nvdla::emu {
namespace {

constexpr uint32_t kCsbSpace = 0x40000;  // well past the last unit's window on both maps

std::optional<nvdla_unit> scanned_unit(nvdla_reg_map which, uint32_t address) {
    for (int u = 0; u < NVDLA_UNIT_COUNT; ++u) {
        const uint32_t base = nvdla_unit_base(which, nvdla_unit(u));
        if (base != NVDLA_UNIT_ABSENT && address >= base && address - base < NVDLA_UNIT_WINDOW)
            return nvdla_unit(u);
    }
    return std::nullopt;
}

void expect_tables_follow_the_map(nvdla_reg_map which) {
    const hw::RegisterMap& map = hw::RegisterMap::get(which);
    std::vector<const hw::RegisterInfo*> register_at(kCsbSpace / 4, nullptr);
    for (const hw::RegisterInfo& r : map.registers())
        if (r.address < kCsbSpace) register_at[r.address / 4] = &r;
    RegisterFile regs(which);
    for (uint32_t address = 0; address < kCsbSpace; ++address) {
        ASSERT_EQ(map.unit_at(address), scanned_unit(which, address))
            << std::hex << "address 0x" << address;
        const hw::RegisterInfo* want = register_at[address / 4];
        ASSERT_EQ(map.at(address), address % 4 ? nullptr : want)
            << std::hex << "address 0x" << address;
        // The register file writes by unit and offset (what Device finds with unit_at).
        const std::optional<nvdla_unit> unit = scanned_unit(which, address);
        if (unit) {
            const uint32_t offset = address - nvdla_unit_base(which, *unit);
            ASSERT_EQ(regs.csb_write(*unit, offset, 0), want != nullptr)
                << std::hex << "address 0x" << address;
            // Where no register is, a read gives 0 (anywhere in the window).
            if (!register_at[(address & ~3u) / 4]) {
                ASSERT_EQ(regs.csb_read(*unit, offset), 0u) << std::hex << "address 0x" << address;
            }
        }
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
    regs.csb_write(r->unit, r->offset + 2, 0xffffffffu);
    EXPECT_EQ(regs.csb_read(r->unit, r->offset), r->write_mask & r->read_mask);
    EXPECT_EQ(regs.group(NVDLA_UNIT_PDP, 0)[r->offset], r->write_mask);
    EXPECT_EQ(regs.group(NVDLA_UNIT_PDP, 1)[r->offset], r->reset);
}

}  // namespace
}  // namespace nvdla::emu
