// The register state of every unit: single registers (S_*) and, for units with ping-pong
// register groups, two copies of every register at or above D_OP_ENABLE. CSB accesses go
// through the map's read/write masks and the group S_POINTER.PRODUCER selects; units read the
// group they execute (the consumer) and write back status and performance counters.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "nvdla/hw/register_map.hpp"

// A field of register `reg` of `unit` read from `regs`, register words by byte offset (a
// Group): the one register-field accessor of the emulated units.
#define NVDLA_REG_FIELD(unit, reg, field, regs) \
    NVDLA_FIELD_GET(unit, reg, field, (regs)[NVDLA_##unit##_##reg])

namespace nvdla::emu {

// One unit's register words (its single registers, or one of its groups), by byte offset.
class Group {
  public:
    explicit Group(uint32_t* words = nullptr) : words_(words) {}
    uint32_t operator[](uint32_t offset) const { return words_[offset / 4]; }
    // A hardware-side update (status, counters): not subject to the CSB write mask.
    void set(uint32_t offset, uint32_t value) const { words_[offset / 4] = value; }
    bool valid() const { return words_ != nullptr; }

  private:
    uint32_t* words_;
};

class RegisterFile {
  public:
    explicit RegisterFile(nvdla_reg_map map);
    void reset();

    const hw::RegisterMap& map() const { return map_; }

    // The base address of a unit's window in this map.
    uint32_t unit_base(nvdla_unit unit) const { return base_[unit]; }

    // CSB side, at a byte offset in a unit's window (the map's unit_at finds the unit of an
    // address). A write returns whether a register is there (if not, it is ignored). (Inline:
    // the engine programs tens of registers per operation.)
    uint32_t csb_read(nvdla_unit unit, uint32_t offset) const;
    bool csb_write(nvdla_unit unit, uint32_t offset, uint32_t value) {
        offset &= ~3u;
        if (!present(unit, offset)) return false;
        UnitState& u = units_[unit];
        if (has_groups(unit) && offset == kPointerOffset) {
            u.producer = int(value & 1u);  // CONSUMER is read-only
            return true;
        }
        const uint32_t mask = write_masks_[unit][offset / 4];
        uint32_t* w = word(unit, offset, u.producer);
        *w = (*w & ~mask) | (value & mask);
        return true;
    }

    // Unit side.
    bool has_groups(nvdla_unit unit) const { return op_enable_[unit] != kNoGroups; }
    uint32_t op_enable_offset(nvdla_unit unit) const { return op_enable_[unit]; }
    Group single(nvdla_unit unit) { return Group(units_[unit].single.data()); }
    // The words of group g (registers below D_OP_ENABLE are not in it).
    Group group(nvdla_unit unit, int g) { return Group(units_[unit].groups[g].data()); }
    int producer(nvdla_unit unit) const { return units_[unit].producer; }
    int consumer(nvdla_unit unit) const { return units_[unit].consumer; }
    bool armed(nvdla_unit unit, int g) const {
        return has_groups(unit) && (units_[unit].groups[g][op_enable_[unit] / 4] & 1u);
    }
    // The consumer group finished: clear its D_OP_ENABLE and move the consumer on.
    void complete(nvdla_unit unit);

  private:
    static constexpr uint32_t kNoGroups = 0xffffffffu;
    // S_POINTER: PRODUCER (bit 0) is the group CSB accesses go to; CONSUMER (bit 16),
    // read-only, the group the hardware executes next.
    static constexpr uint32_t kPointerOffset = 0x004;
    static constexpr uint32_t kStatusOffset = 0x000;
    // Every unit's registers lie in the first 512 bytes of its 4 KiB window (the constructor
    // checks): the file is small enough to stay in the caches between the operations the
    // engine programs (the whole windows, 400 kB, missed on most writes).
    static constexpr size_t kWords = 128;
    struct UnitState {
        std::array<uint32_t, kWords> single{};
        std::array<std::array<uint32_t, kWords>, 2> groups{};
        int producer = 0, consumer = 0;
    };
    // Whether a register is at the word (its read or write mask is not 0).
    bool present(nvdla_unit unit, uint32_t offset) const {
        const uint32_t w = offset / 4;
        return w < kWords && ((present_[unit][w / 64] >> (w % 64)) & 1u);
    }

    uint32_t* word(nvdla_unit unit, uint32_t offset, int g) {
        UnitState& u = units_[unit];
        if (has_groups(unit) && offset >= op_enable_[unit]) return &u.groups[g][offset / 4];
        return &u.single[offset / 4];
    }
    const uint32_t* word(nvdla_unit unit, uint32_t offset, int g) const {
        return const_cast<RegisterFile*>(this)->word(unit, offset, g);
    }
    uint32_t status_of(nvdla_unit unit) const;

    const hw::RegisterMap& map_;
    std::array<uint32_t, NVDLA_UNIT_COUNT> base_{};
    std::array<uint32_t, NVDLA_UNIT_COUNT> op_enable_{};
    // The masks by word, apart: a write touches its write mask only, and the presence bits of
    // every unit share a few cache lines (the units' data flushes the caches between the
    // operations the engine programs).
    std::array<std::array<uint64_t, kWords / 64>, NVDLA_UNIT_COUNT> present_{};
    std::array<std::array<uint32_t, kWords>, NVDLA_UNIT_COUNT> write_masks_{};
    std::array<std::array<uint32_t, kWords>, NVDLA_UNIT_COUNT> read_masks_{};
    std::array<UnitState, NVDLA_UNIT_COUNT> units_{};
};

}  // namespace nvdla::emu
