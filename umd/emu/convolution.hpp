// The convolution pipeline: CDMA (direct, image, Winograd; weight decompression; the
// convolution buffer), CSC, CMAC_A/B and CACC, executed as one operation whose result goes to
// the SDP (flying mode).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "emu/unit.hpp"

namespace nvdla::emu {

class Convolution {
  public:
    Convolution();
    ~Convolution();
    void reset();

    // CSB accesses of CDMA's single registers that the hardware computes
    // (S_CBUF_FLUSH_STATUS); nullopt: the stored value.
    std::optional<uint32_t> handle_read(nvdla_unit unit, uint32_t offset);

    // One layer with the consumer groups of the five units. The convolution buffer's content
    // persists across layers (DATA_REUSE / WEIGHT_REUSE).
    AccumulatorCube execute(Context& ctx, Group cdma, Group csc, Group cmac_a, Group cmac_b,
                            Group cacc);

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace nvdla::emu
