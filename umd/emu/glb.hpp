// GLB: the interrupt registers. Done events always set their S_INTR_STATUS bit; the line is
// raised when an unmasked event fires (or S_INTR_SET sets an unmasked bit) and dropped when a
// write-1-to-clear of S_INTR_STATUS leaves no status bit set (the C model's
// NV_NVDLA_glb::Update_nvdla_intr_w).
#pragma once

#include <cstdint>

#include "emu/register_file.hpp"
#include "emu/unit.hpp"

namespace nvdla::emu {

class Glb {
  public:
    explicit Glb(RegisterFile& regs) : regs_(regs) {}
    void set_line(InterruptLine line) { line_ = std::move(line); }
    void reset() { set_level(false); }

    // A unit finished: event + group.
    void raise(InterruptEvent event, int group);
    // CSB writes the registers cannot simply store: S_INTR_STATUS is write-1-to-clear,
    // S_INTR_SET sets status bits. Returns false for the others (stored as written).
    bool handle_write(uint32_t offset, uint32_t value);
    bool asserted() const { return level_; }

  private:
    static constexpr uint32_t kEventBits = 0x003f03ff;
    uint32_t status() { return regs_.single(NVDLA_UNIT_GLB)[NVDLA_GLB_S_INTR_STATUS]; }
    uint32_t mask() { return regs_.single(NVDLA_UNIT_GLB)[NVDLA_GLB_S_INTR_MASK]; }
    void set_status(uint32_t v) { regs_.single(NVDLA_UNIT_GLB).set(NVDLA_GLB_S_INTR_STATUS, v); }
    void set_level(bool level);

    RegisterFile& regs_;
    InterruptLine line_;
    bool level_ = false;
};

}  // namespace nvdla::emu
