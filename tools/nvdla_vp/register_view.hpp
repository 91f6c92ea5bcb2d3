// What the registers read while the model computes on its own thread: the state the hardware
// shows during a layer (the enabled groups busy, no new done interrupt), captured from the
// stalled model when the computation is handed over, and the guest's writes since. The guest's
// register accesses are answered from here at once, as real hardware answers them in
// nanoseconds; the writes are applied to the model, in order, once the computation is over.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "nvdla/emu/device.hpp"
#include "nvdla/hw/register_map.hpp"

namespace nvdla::vp {

class RegisterView {
  public:
    explicit RegisterView(nvdla_reg_map map);

    // Reads every register of the map from the model (both groups of the grouped units),
    // except the few whose reads have side effects. The model must be stalled.
    void capture(emu::Device& device);

    // The value a CSB read returns now, or nullopt for a register only the model can answer
    // (the LUT data ports, whose reads step through the table).
    std::optional<uint32_t> read(uint32_t address) const;
    // A CSB write: stored as the register file stores it (write mask, S_POINTER's producer,
    // GLB's write-1-to-clear status and S_INTR_SET).
    void write(uint32_t address, uint32_t value);

    // Whether a write may start an operation: D_OP_ENABLE with bit 0, BDMA's CFG_LAUNCH0/1.
    bool may_start(uint32_t address, uint32_t value) const;

  private:
    static constexpr uint32_t kWords = NVDLA_UNIT_WINDOW / 4;
    struct Unit {
        bool grouped = false;
        uint32_t op_enable = 0;  // D_OP_ENABLE's offset: grouped registers start there
        int producer = 0, consumer = 0;
        std::vector<uint32_t> single, groups[2];
    };
    uint32_t* word(nvdla_unit unit, uint32_t offset);
    bool model_only(const hw::RegisterInfo& r) const;

    const hw::RegisterMap& map_;
    std::array<Unit, NVDLA_UNIT_COUNT> units_;
};

}  // namespace nvdla::vp
