// SDP and SDP_RDMA: the single-point data processor (X1/X2/Y stages, LUT, output convertor)
// reading its input from memory or from CACC (flying mode) and writing to memory or to PDP.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "emu/unit.hpp"

namespace nvdla::emu {

class Sdp {
  public:
    Sdp();
    ~Sdp();
    void reset();

    // S_LUT_ACCESS_DATA and friends (single registers in `single`): true when handled.
    bool handle_write(Group single, uint32_t offset, uint32_t value);
    std::optional<uint32_t> handle_read(Group single, uint32_t offset);

    // One operation. rdma is SDP_RDMA's consumer group (invalid when SDP_RDMA is not part of
    // it); flying is CACC's output in flying mode (else nullptr); to_pdp receives the output
    // when D_FEATURE_MODE_CFG.OUTPUT_DST is PDP (else nullptr). `single` holds the LUT registers.
    void execute(Context& ctx, Group single, Group sdp, Group rdma, const AccumulatorCube* flying,
                 ElementCube* to_pdp);

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace nvdla::emu
