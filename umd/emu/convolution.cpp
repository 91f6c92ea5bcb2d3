// The convolution pipeline is not modelled yet: every layer is reported as a programming error.
#include "emu/convolution.hpp"

namespace nvdla::emu {

struct Convolution::State {};
Convolution::Convolution() = default;
Convolution::~Convolution() = default;
void Convolution::reset() {}
std::optional<uint32_t> Convolution::handle_read(nvdla_unit, uint32_t) { return std::nullopt; }
AccumulatorCube Convolution::execute(Context& ctx, Group, Group, Group, Group, Group) {
    ctx.error("convolution is not modelled yet");
    return {};
}

}  // namespace nvdla::emu
