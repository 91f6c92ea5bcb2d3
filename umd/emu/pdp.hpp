// PDP and PDP_RDMA: pooling (max, min, average) from memory or from SDP (flying mode).
#pragma once

#include "emu/unit.hpp"

namespace nvdla::emu {

class Pdp {
  public:
    void reset() {}
    // rdma: PDP_RDMA's consumer group in offline mode (invalid in flying mode); flying: SDP's
    // output in flying mode (else nullptr).
    void execute(Context& ctx, Group pdp, Group rdma, const ElementCube* flying);
};

}  // namespace nvdla::emu
