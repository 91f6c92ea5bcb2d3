// The LUT access port of SDP and CDP: the two tables behind S_LUT_ACCESS_DATA and the address
// S_LUT_ACCESS_CFG loads, which data accesses move on. One model for both units; the two RTLs
// differ in the details `Rules` names.
#pragma once

#include <array>
#include <cstdint>

#include "nvdla/precision/lut.hpp"

namespace nvdla::emu {

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

    // S_LUT_ACCESS_CFG: LUT_ADDR, LUT_TABLE_ID (1: LO), LUT_ACCESS_TYPE (1: write).
    void configure(uint32_t address, bool lo_table, bool write) {
        address_ = address;
        lo_table_ = lo_table;
        write_ = write;
    }
    uint32_t address() const { return address_; }
    bool lo_table() const { return lo_table_; }
    bool write_access() const { return write_; }

    // S_LUT_ACCESS_DATA written: the entry lands only with a write access type and an address
    // inside the table.
    void write_data(int16_t value) {
        if (write_) {
            if (int16_t* e = entry()) *e = value;
        }
        if (write_ || rules_.every_access_advances) advance();
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

}  // namespace nvdla::emu
