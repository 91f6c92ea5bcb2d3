// The LUT access port of SDP and CDP: the two tables behind S_LUT_ACCESS_DATA and the address
// S_LUT_ACCESS_CFG loads, which data accesses move on. One model for both units; the two RTLs
// differ in the details `Rules` names.
#pragma once

#include <array>
#include <cstdint>

#include "nvdla/hw/nvdla_regs.h"
#include "nvdla/precision/lut.hpp"

namespace nvdla::emu {

// The LUT registers have the same fields in SDP and CDP: SDP's positions decode both.
#define NVDLA_SAME_LUT_FIELD(reg, field)                                                    \
    static_assert(NVDLA_SDP_##reg##_##field##_SHIFT == NVDLA_CDP_##reg##_##field##_SHIFT && \
                  NVDLA_SDP_##reg##_##field##_WIDTH == NVDLA_CDP_##reg##_##field##_WIDTH)
NVDLA_SAME_LUT_FIELD(S_LUT_ACCESS_CFG, LUT_ADDR);
NVDLA_SAME_LUT_FIELD(S_LUT_ACCESS_CFG, LUT_TABLE_ID);
NVDLA_SAME_LUT_FIELD(S_LUT_ACCESS_CFG, LUT_ACCESS_TYPE);
NVDLA_SAME_LUT_FIELD(S_LUT_ACCESS_DATA, LUT_DATA);
NVDLA_SAME_LUT_FIELD(S_LUT_CFG, LUT_LE_FUNCTION);
NVDLA_SAME_LUT_FIELD(S_LUT_CFG, LUT_UFLOW_PRIORITY);
NVDLA_SAME_LUT_FIELD(S_LUT_CFG, LUT_OFLOW_PRIORITY);
NVDLA_SAME_LUT_FIELD(S_LUT_CFG, LUT_HYBRID_PRIORITY);
NVDLA_SAME_LUT_FIELD(S_LUT_INFO, LUT_LE_INDEX_OFFSET);
NVDLA_SAME_LUT_FIELD(S_LUT_INFO, LUT_LE_INDEX_SELECT);
NVDLA_SAME_LUT_FIELD(S_LUT_INFO, LUT_LO_INDEX_SELECT);
NVDLA_SAME_LUT_FIELD(S_LUT_LE_SLOPE_SCALE, LUT_LE_SLOPE_UFLOW_SCALE);
NVDLA_SAME_LUT_FIELD(S_LUT_LE_SLOPE_SCALE, LUT_LE_SLOPE_OFLOW_SCALE);
NVDLA_SAME_LUT_FIELD(S_LUT_LE_SLOPE_SHIFT, LUT_LE_SLOPE_UFLOW_SHIFT);
NVDLA_SAME_LUT_FIELD(S_LUT_LE_SLOPE_SHIFT, LUT_LE_SLOPE_OFLOW_SHIFT);
NVDLA_SAME_LUT_FIELD(S_LUT_LO_SLOPE_SCALE, LUT_LO_SLOPE_UFLOW_SCALE);
NVDLA_SAME_LUT_FIELD(S_LUT_LO_SLOPE_SCALE, LUT_LO_SLOPE_OFLOW_SCALE);
NVDLA_SAME_LUT_FIELD(S_LUT_LO_SLOPE_SHIFT, LUT_LO_SLOPE_UFLOW_SHIFT);
NVDLA_SAME_LUT_FIELD(S_LUT_LO_SLOPE_SHIFT, LUT_LO_SLOPE_OFLOW_SHIFT);
#undef NVDLA_SAME_LUT_FIELD

class LutPort {
  public:
    struct Rules {
        // SDP (NV_NVDLA_SDP_reg.v): every data access, read or write, moves the address on.
        // CDP (NV_NVDLA_CDP_reg.v): only accesses in the configured direction do.
        bool every_access_advances;
        // CDP: the address stops at the table's last entry (lut_end); SDP wraps at 10 bits.
        bool stops_at_last_entry;
        // CDP: reading outside the table gives its entry 0; SDP: reads 0.
        bool outside_reads_first_entry;
    };
    static constexpr Rules kSdp{true, false, false};
    static constexpr Rules kCdp{false, true, true};

    explicit LutPort(Rules rules) : rules_(rules) {}
    void reset() {
        le_ = {};
        lo_ = {};
        address_ = 0;
        lo_table_ = false;
        write_ = false;
    }

    // A CSB write to the unit's S_LUT_ACCESS_CFG (cfg_reg: LUT_ADDR, LUT_TABLE_ID 1 = LO,
    // LUT_ACCESS_TYPE 1 = write) or S_LUT_ACCESS_DATA (data_reg): true when it was one of them.
    bool csb_write(uint32_t offset, uint32_t value, uint32_t cfg_reg, uint32_t data_reg) {
        if (offset == cfg_reg) {
            address_ = NVDLA_FIELD_GET(SDP, S_LUT_ACCESS_CFG, LUT_ADDR, value);
            lo_table_ = NVDLA_FIELD_GET(SDP, S_LUT_ACCESS_CFG, LUT_TABLE_ID, value) != 0;
            write_ = NVDLA_FIELD_GET(SDP, S_LUT_ACCESS_CFG, LUT_ACCESS_TYPE, value) != 0;
            return true;
        }
        if (offset != data_reg) return false;
        // The entry lands only with a write access type and an address inside the table.
        if (write_) {
            if (int16_t* e = entry())
                *e = static_cast<int16_t>(NVDLA_FIELD_GET(SDP, S_LUT_ACCESS_DATA, LUT_DATA, value));
        }
        if (write_ || rules_.every_access_advances) advance();
        return true;
    }
    // S_LUT_ACCESS_CFG with the port's live address (CDP reads this back; SDP the register as
    // written).
    uint32_t cfg() const {
        return NVDLA_FIELD_SET(SDP, S_LUT_ACCESS_CFG, LUT_ADDR, address_) |
               NVDLA_FIELD_SET(SDP, S_LUT_ACCESS_CFG, LUT_TABLE_ID, lo_table_ ? 1u : 0u) |
               NVDLA_FIELD_SET(SDP, S_LUT_ACCESS_CFG, LUT_ACCESS_TYPE, write_ ? 1u : 0u);
    }
    // S_LUT_ACCESS_DATA read.
    uint16_t read_data() {
        const int16_t* e = entry();
        const int16_t outside =
            rules_.outside_reads_first_entry ? (lo_table_ ? lo_[0] : le_[0]) : int16_t(0);
        const int16_t value = e ? *e : outside;
        if (!write_ || rules_.every_access_advances) advance();
        return static_cast<uint16_t>(value);
    }

    const std::array<int16_t, precision::kLutLeEntries>& le() const { return le_; }
    const std::array<int16_t, precision::kLutLoEntries>& lo() const { return lo_; }

  private:
    static constexpr uint32_t kAddressMask = 0x3ff;  // S_LUT_ACCESS_CFG.LUT_ADDR[9:0]

    int16_t* entry() {
        if (lo_table_) return address_ < lo_.size() ? &lo_[address_] : nullptr;
        return address_ < le_.size() ? &le_[address_] : nullptr;
    }
    void advance() {
        const uint32_t last =
            lo_table_ ? precision::kLutLoEntries - 1 : precision::kLutLeEntries - 1;
        if (rules_.stops_at_last_entry && address_ == last) return;
        address_ = (address_ + 1) & kAddressMask;
    }

    Rules rules_;
    std::array<int16_t, precision::kLutLeEntries> le_{};
    std::array<int16_t, precision::kLutLoEntries> lo_{};
    uint32_t address_ = 0;
    bool lo_table_ = false;
    bool write_ = false;
};

// A unit's LUT registers (single registers), as lut_settings() takes them. The start and end
// points come decoded: SDP's are 32-bit registers, CDP's 38-bit HIGH/LOW pairs.
struct LutRegisters {
    uint32_t cfg = 0, info = 0;
    uint32_t le_slope_scale = 0, le_slope_shift = 0, lo_slope_scale = 0, lo_slope_shift = 0;
    int64_t le_start = 0, le_end = 0, lo_start = 0, lo_end = 0;
};

// The words of a unit's LUT registers with the same fields in SDP and CDP (unit: SDP or CDP).
#define NVDLA_LUT_REGISTERS(unit, single)                                        \
    LutRegisters {                                                               \
        (single)[NVDLA_##unit##_S_LUT_CFG], (single)[NVDLA_##unit##_S_LUT_INFO], \
            (single)[NVDLA_##unit##_S_LUT_LE_SLOPE_SCALE],                       \
            (single)[NVDLA_##unit##_S_LUT_LE_SLOPE_SHIFT],                       \
            (single)[NVDLA_##unit##_S_LUT_LO_SLOPE_SCALE],                       \
            (single)[NVDLA_##unit##_S_LUT_LO_SLOPE_SHIFT]                        \
    }

// The LUT's settings from its registers (the tables come from the unit's LutPort).
inline precision::LutProgram lut_settings(const LutRegisters& r) {
    precision::LutProgram p;
    const auto table = [](uint32_t bit) {
        return bit ? precision::LutTable::Lo : precision::LutTable::Le;
    };
    p.le_mode = NVDLA_FIELD_GET(SDP, S_LUT_CFG, LUT_LE_FUNCTION, r.cfg)
                    ? precision::LutLeMode::Linear
                    : precision::LutLeMode::Exponent;
    p.underflow_priority = table(NVDLA_FIELD_GET(SDP, S_LUT_CFG, LUT_UFLOW_PRIORITY, r.cfg));
    p.overflow_priority = table(NVDLA_FIELD_GET(SDP, S_LUT_CFG, LUT_OFLOW_PRIORITY, r.cfg));
    p.hybrid_priority = table(NVDLA_FIELD_GET(SDP, S_LUT_CFG, LUT_HYBRID_PRIORITY, r.cfg));
    p.le_index_offset =
        static_cast<int8_t>(NVDLA_FIELD_GET(SDP, S_LUT_INFO, LUT_LE_INDEX_OFFSET, r.info));
    p.le_index_select =
        static_cast<int8_t>(NVDLA_FIELD_GET(SDP, S_LUT_INFO, LUT_LE_INDEX_SELECT, r.info));
    p.lo_index_select =
        static_cast<int8_t>(NVDLA_FIELD_GET(SDP, S_LUT_INFO, LUT_LO_INDEX_SELECT, r.info));
    p.le_start = r.le_start;
    p.le_end = r.le_end;
    p.lo_start = r.lo_start;
    p.lo_end = r.lo_end;
    const auto slope = [](uint32_t scale, uint32_t shift) {
        return precision::LutSlope{static_cast<int16_t>(scale), static_cast<int8_t>(shift)};
    };
    p.le_underflow = slope(
        NVDLA_FIELD_GET(SDP, S_LUT_LE_SLOPE_SCALE, LUT_LE_SLOPE_UFLOW_SCALE, r.le_slope_scale),
        NVDLA_FIELD_GET(SDP, S_LUT_LE_SLOPE_SHIFT, LUT_LE_SLOPE_UFLOW_SHIFT, r.le_slope_shift));
    p.le_overflow = slope(
        NVDLA_FIELD_GET(SDP, S_LUT_LE_SLOPE_SCALE, LUT_LE_SLOPE_OFLOW_SCALE, r.le_slope_scale),
        NVDLA_FIELD_GET(SDP, S_LUT_LE_SLOPE_SHIFT, LUT_LE_SLOPE_OFLOW_SHIFT, r.le_slope_shift));
    p.lo_underflow = slope(
        NVDLA_FIELD_GET(SDP, S_LUT_LO_SLOPE_SCALE, LUT_LO_SLOPE_UFLOW_SCALE, r.lo_slope_scale),
        NVDLA_FIELD_GET(SDP, S_LUT_LO_SLOPE_SHIFT, LUT_LO_SLOPE_UFLOW_SHIFT, r.lo_slope_shift));
    p.lo_overflow = slope(
        NVDLA_FIELD_GET(SDP, S_LUT_LO_SLOPE_SCALE, LUT_LO_SLOPE_OFLOW_SCALE, r.lo_slope_scale),
        NVDLA_FIELD_GET(SDP, S_LUT_LO_SLOPE_SHIFT, LUT_LO_SLOPE_OFLOW_SHIFT, r.lo_slope_shift));
    return p;
}

}  // namespace nvdla::emu
