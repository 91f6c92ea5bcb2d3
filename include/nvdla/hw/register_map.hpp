// The register maps as data: every register of a map with its address, read and write masks
// and reset value, looked up by name or by address. Built from nvdla_regs.def, the same list
// the engine's C code compiles against, so the model, the engine, the trace player and the
// tests agree on every register.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "nvdla/api.hpp"
#include "nvdla/hw/nvdla_regs.h"

namespace nvdla::hw {

struct RegisterInfo {
    nvdla_unit unit;
    std::string_view unit_name;  // "SDP"
    std::string_view name;       // "D_OP_ENABLE"
    uint32_t offset;             // within the unit's window
    uint32_t address;            // in the map: unit base + offset
    uint32_t read_mask, write_mask, reset;
};

class NVDLA_API RegisterMap {
  public:
    static const RegisterMap& get(nvdla_reg_map map);

    nvdla_reg_map map() const { return map_; }
    std::span<const RegisterInfo> registers() const { return {registers_, count_}; }

    // By unit and register name: ("SDP", "D_OP_ENABLE").
    const RegisterInfo* find(std::string_view unit, std::string_view name) const;
    // By a qualified name as the hardware traces spell them: "NVDLA_SDP.D_OP_ENABLE_0",
    // "SDP.D_OP_ENABLE_0" or "SDP.D_OP_ENABLE".
    const RegisterInfo* find(std::string_view qualified) const;
    // The register at a byte address, or nullptr.
    const RegisterInfo* at(uint32_t address) const;

    // The unit whose window holds address, if the map has one there. (Inline: the emulator
    // asks on every register access.)
    std::optional<nvdla_unit> unit_at(uint32_t address) const {
        const uint32_t window = address / NVDLA_UNIT_WINDOW;
        uint8_t unit = window < kWindows ? window_unit_[window] : kScan;
        if (unit == kScan) unit = scan_unit_at(address);
        // (One place makes the optional: GCC kept a second one in memory, stalling each access.)
        if (unit == kNoUnit) return std::nullopt;
        return nvdla_unit(unit);
    }
    uint32_t unit_base(nvdla_unit unit) const { return nvdla_unit_base(map_, unit); }
    static std::string_view unit_name(nvdla_unit unit);
    static std::optional<nvdla_unit> unit_named(std::string_view name);

  private:
    static constexpr uint32_t kWindows = 32;  // unit windows looked up by table
    static constexpr uint8_t kNoUnit = 0xff, kScan = 0xfe;
    static constexpr uint16_t kNoRegister = 0xffff;
    struct Tables;
    explicit RegisterMap(nvdla_reg_map map);
    uint8_t scan_unit_at(uint32_t address) const;  // the unit, or kNoUnit
    nvdla_reg_map map_;
    const Tables* tables_;
    const uint8_t* window_unit_;  // the unit of each of the first kWindows windows
    const RegisterInfo* registers_;
    size_t count_;
};

}  // namespace nvdla::hw
