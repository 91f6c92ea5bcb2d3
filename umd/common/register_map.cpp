#include "nvdla/hw/register_map.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace nvdla::hw {
namespace {

struct Entry {
    nvdla_unit unit;
    const char* unit_name;
    const char* name;
    uint32_t offset;
    uint32_t masks[2][3];  // [map][read, write, reset]
};

constexpr Entry kEntries[] = {
#define NVDLA_REG(unit, name, offset, frm, fwm, frs, srm, swm, srs) \
    {NVDLA_UNIT_##unit, #unit, #name, offset, {{frm, fwm, frs}, {srm, swm, srs}}},
#include "nvdla/hw/nvdla_regs.def"
#undef NVDLA_REG
};

constexpr const char* kUnitNames[] = {
#define NVDLA_UNIT(unit, full_base, small_base) #unit,
#include "nvdla/hw/nvdla_units.def"
#undef NVDLA_UNIT
};

// The registers a map has (some read or write bit), sorted by address.
std::vector<RegisterInfo> build(nvdla_reg_map map) {
    std::vector<RegisterInfo> out;
    for (const Entry& e : kEntries) {
        const uint32_t* m = e.masks[map];
        const uint32_t base = nvdla_unit_base(map, e.unit);
        if ((m[0] | m[1]) == 0 || base == NVDLA_UNIT_ABSENT) continue;
        out.push_back({e.unit, e.unit_name, e.name, e.offset, base + e.offset, m[0], m[1], m[2]});
    }
    std::sort(out.begin(), out.end(),
              [](const RegisterInfo& a, const RegisterInfo& b) { return a.address < b.address; });
    return out;
}

// The unit whose window holds address, by a scan of the units.
std::optional<nvdla_unit> scan_units(nvdla_reg_map map, uint32_t address) {
    for (int u = 0; u < NVDLA_UNIT_COUNT; ++u) {
        const uint32_t base = nvdla_unit_base(map, nvdla_unit(u));
        if (base != NVDLA_UNIT_ABSENT && address >= base && address - base < NVDLA_UNIT_WINDOW)
            return nvdla_unit(u);
    }
    return std::nullopt;
}

}  // namespace

// Address lookups are tables (the emulator and the virtual platform ask on every register
// access): the unit of each of the first kWindows windows, and per unit the index of the
// register at each word.
struct RegisterMap::Tables {
    std::vector<RegisterInfo> registers;
    std::array<uint8_t, kWindows> window_unit{};
    std::array<std::array<uint16_t, NVDLA_UNIT_WINDOW / 4>, NVDLA_UNIT_COUNT> register_index{};

    explicit Tables(nvdla_reg_map map) : registers(build(map)) {
        for (uint32_t w = 0; w < kWindows; ++w) {
            // A window that one unit's window fills exactly, or none; otherwise the scan decides.
            const std::optional<nvdla_unit> first = scan_units(map, w * NVDLA_UNIT_WINDOW);
            const bool whole = first && nvdla_unit_base(map, *first) == w * NVDLA_UNIT_WINDOW;
            window_unit[w] = !first ? kNoUnit : whole ? uint8_t(*first) : kScan;
        }
        for (auto& unit : register_index) unit.fill(kNoRegister);
        for (size_t i = 0; i < registers.size(); ++i)
            register_index[registers[i].unit][registers[i].offset / 4] = uint16_t(i);
    }
};

RegisterMap::RegisterMap(nvdla_reg_map map) : map_(map) {
    static const std::array<Tables, 2> tables{Tables(NVDLA_REG_MAP_FULL),
                                              Tables(NVDLA_REG_MAP_SMALL)};
    tables_ = &tables[map];
    window_unit_ = tables_->window_unit.data();
    registers_ = tables_->registers.data();
    count_ = tables_->registers.size();
}

const RegisterMap& RegisterMap::get(nvdla_reg_map map) {
    static const RegisterMap full(NVDLA_REG_MAP_FULL), small(NVDLA_REG_MAP_SMALL);
    return map == NVDLA_REG_MAP_FULL ? full : small;
}

const RegisterInfo* RegisterMap::find(std::string_view unit, std::string_view name) const {
    for (const RegisterInfo& r : registers())
        if (r.unit_name == unit && r.name == name) return &r;
    return nullptr;
}

const RegisterInfo* RegisterMap::find(std::string_view qualified) const {
    const size_t dot = qualified.find('.');
    if (dot == std::string_view::npos) return nullptr;
    std::string_view unit = qualified.substr(0, dot), name = qualified.substr(dot + 1);
    if (unit.starts_with("NVDLA_")) unit.remove_prefix(6);
    if (const RegisterInfo* r = find(unit, name)) return r;
    // The traces and the hardware headers add "_0" (the register's first word).
    if (name.ends_with("_0")) return find(unit, name.substr(0, name.size() - 2));
    return nullptr;
}

const RegisterInfo* RegisterMap::at(uint32_t address) const {
    const std::optional<nvdla_unit> unit = unit_at(address);
    if (!unit) return nullptr;
    const uint16_t index = tables_->register_index[*unit][(address - unit_base(*unit)) / 4];
    if (index == kNoRegister || registers_[index].address != address) return nullptr;
    return &registers_[index];
}

uint8_t RegisterMap::scan_unit_at(uint32_t address) const {
    const std::optional<nvdla_unit> unit = scan_units(map_, address);
    return unit ? uint8_t(*unit) : kNoUnit;
}

std::string_view RegisterMap::unit_name(nvdla_unit unit) {
    return unsigned(unit) < NVDLA_UNIT_COUNT ? kUnitNames[unit] : "?";
}

std::optional<nvdla_unit> RegisterMap::unit_named(std::string_view name) {
    if (name.starts_with("NVDLA_")) name.remove_prefix(6);
    for (int u = 0; u < NVDLA_UNIT_COUNT; ++u)
        if (name == kUnitNames[u]) return nvdla_unit(u);
    return std::nullopt;
}

}  // namespace nvdla::hw
