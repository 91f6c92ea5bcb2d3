// CDP and CDP_RDMA: local response normalisation (square sum, LUT, multiplier, convertors).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "emu/unit.hpp"

namespace nvdla::emu {

class Cdp {
  public:
    Cdp();
    ~Cdp();
    void reset();

    bool handle_write(Group single, uint32_t offset, uint32_t value);
    std::optional<uint32_t> handle_read(Group single, uint32_t offset);

    void execute(Context& ctx, Group single, Group cdp, Group rdma);

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace nvdla::emu
