#include "emu/register_file.hpp"

namespace nvdla::emu {
namespace {

// S_POINTER: PRODUCER (bit 0) is the group CSB accesses go to; CONSUMER (bit 16), read-only,
// the group the hardware executes next.
constexpr uint32_t kPointerOffset = 0x004;
constexpr uint32_t kStatusOffset = 0x000;
enum GroupStatus : uint32_t { kIdle = 0, kRunning = 1, kPending = 2 };

}  // namespace

RegisterFile::RegisterFile(nvdla_reg_map map) : map_(hw::RegisterMap::get(map)) {
    op_enable_.fill(kNoGroups);
    for (const hw::RegisterInfo& r : map_.registers()) {
        masks_[r.unit][r.offset / 4] = {r.read_mask, r.write_mask};
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

uint32_t* RegisterFile::word(nvdla_unit unit, uint32_t offset, int g) {
    UnitState& u = units_[unit];
    if (has_groups(unit) && offset >= op_enable_[unit]) return &u.groups[g][offset / 4];
    return &u.single[offset / 4];
}

const uint32_t* RegisterFile::word(nvdla_unit unit, uint32_t offset, int g) const {
    return const_cast<RegisterFile*>(this)->word(unit, offset, g);
}

bool RegisterFile::armed(nvdla_unit unit, int g) const {
    return has_groups(unit) && (units_[unit].groups[g][op_enable_[unit] / 4] & 1u);
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
    const Masks& m = masks_[unit][offset / 4];
    if (has_groups(unit)) {
        if (offset == kPointerOffset)
            return uint32_t(producer(unit)) | uint32_t(consumer(unit)) << 16;
        if (offset == kStatusOffset) return status_of(unit);
    }
    return *word(unit, offset, producer(unit)) & m.read;
}

bool RegisterFile::csb_write(nvdla_unit unit, uint32_t offset, uint32_t value) {
    offset &= ~3u;
    const Masks& m = masks_[unit][offset / 4];
    if ((m.read | m.write) == 0) return false;
    UnitState& u = units_[unit];
    if (has_groups(unit) && offset == kPointerOffset) {
        u.producer = int(value & 1u);  // CONSUMER is read-only
        return true;
    }
    uint32_t* w = word(unit, offset, u.producer);
    *w = (*w & ~m.write) | (value & m.write);
    return true;
}

void RegisterFile::complete(nvdla_unit unit) {
    UnitState& u = units_[unit];
    u.groups[u.consumer][op_enable_[unit] / 4] &= ~1u;
    u.consumer ^= 1;
}

}  // namespace nvdla::emu
