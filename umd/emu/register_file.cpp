#include "emu/register_file.hpp"

#include <stdexcept>
#include <string>

namespace nvdla::emu {
namespace {

enum GroupStatus : uint32_t { kIdle = 0, kRunning = 1, kPending = 2 };

}  // namespace

RegisterFile::RegisterFile(nvdla_reg_map map) : map_(hw::RegisterMap::get(map)) {
    op_enable_.fill(kNoGroups);
    for (int u = 0; u < NVDLA_UNIT_COUNT; ++u) base_[u] = map_.unit_base(nvdla_unit(u));
    for (const hw::RegisterInfo& r : map_.registers()) {
        const uint32_t w = r.offset / 4;
        if (w >= kWords)
            throw std::logic_error("register " + std::string(r.name) + " at offset " +
                                   std::to_string(r.offset) + " lies past the register file's " +
                                   std::to_string(kWords * 4) + " bytes per unit");
        read_masks_[r.unit][w] = r.read_mask;
        write_masks_[r.unit][w] = r.write_mask;
        if (r.read_mask | r.write_mask) present_[r.unit][w / 64] |= uint64_t(1) << (w % 64);
        if (r.name == "D_OP_ENABLE") op_enable_[r.unit] = r.offset;
    }
    reset();
}

void RegisterFile::reset() {
    for (UnitState& u : units_) u = UnitState{};
    for (const hw::RegisterInfo& r : map_.registers()) {
        const bool grouped = has_groups(r.unit) && r.offset >= op_enable_[r.unit];
        if (grouped) {
            units_[r.unit].groups[0][r.offset / 4] = r.reset;
            units_[r.unit].groups[1][r.offset / 4] = r.reset;
        } else {
            units_[r.unit].single[r.offset / 4] = r.reset;
        }
    }
}

uint32_t RegisterFile::status_of(nvdla_unit unit) const {
    uint32_t status = 0;
    for (int g = 0; g < 2; ++g) {
        const uint32_t s = !armed(unit, g) ? kIdle : (g == consumer(unit) ? kRunning : kPending);
        status |= s << (16 * g);
    }
    return status;
}

uint32_t RegisterFile::csb_read(nvdla_unit unit, uint32_t offset) const {
    offset &= ~3u;
    if (offset / 4 >= kWords) return 0;  // no register there
    const uint32_t read_mask = read_masks_[unit][offset / 4];
    if (has_groups(unit)) {
        if (offset == kPointerOffset)
            return uint32_t(producer(unit)) | uint32_t(consumer(unit)) << 16;
        if (offset == kStatusOffset) return status_of(unit);
    }
    return *word(unit, offset, producer(unit)) & read_mask;
}

void RegisterFile::complete(nvdla_unit unit) {
    UnitState& u = units_[unit];
    u.groups[u.consumer][op_enable_[unit] / 4] &= ~1u;
    u.consumer ^= 1;
}

}  // namespace nvdla::emu
