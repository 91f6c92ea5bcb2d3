// BDMA: the bridge DMA (line and surface copies between memories, two launch groups). Its
// registers are single (no S_POINTER ping-pong): CFG_* describe a transfer, CFG_CMD queues
// it, CFG_LAUNCH0/1 start a group of queued transfers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "emu/unit.hpp"

namespace nvdla::emu {

class Bdma {
  public:
    Bdma();
    ~Bdma();
    void reset();

    // Register writes with side effects (queueing, launching); true when handled.
    bool handle_write(Group regs, uint32_t offset, uint32_t value);
    // Registers the hardware computes (STATUS, CFG_STATUS, stall counters).
    std::optional<uint32_t> handle_read(Group regs, uint32_t offset);

    // Executes launched groups, reporting each group's done interrupt; false when nothing was
    // launched.
    bool run(Context& ctx, Group regs, const std::function<void(InterruptEvent, int)>& done);

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace nvdla::emu
