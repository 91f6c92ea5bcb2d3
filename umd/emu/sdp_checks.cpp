// What SDP's DMAs need of their strides on 1x1 cubes: the C model asserts on anything else
// (cmod sdp/NV_NVDLA_sdp.cpp; sources in docs/emu/sdp.md, "DMA rules").
#include <sstream>
#include <string>

#include "emu/sdp_internal.hpp"

namespace nvdla::emu::sdp {

bool check_dma_rules(Context& ctx, Group sdp, const Settings& s) {
    if (s.width != 1 || s.height != 1) return true;
    ErrorMessage msg;
    // A 1x1 cube is read as one run of groups: each surface one group of values after the
    // previous (RdmaSequence: surf_stride == element_per_group * bytes_per_element).
    if (!s.flying && s.src.surface_stride != s.atom) {
        msg << "SDP_RDMA D_SRC_SURFACE_STRIDE is " << s.src.surface_stride
            << " on a 1x1 cube; its surfaces are read packed, so it must be " << s.atom;
        return ctx.error(msg.str());
    }
    const struct {
        const OperandDma& dma;
        const char* reg;
    } operands[] = {{s.bs_dma, "BS"}, {s.bn_dma, "BN"}, {s.ew_dma, "EW"}};
    for (const auto& [dma, reg] : operands) {
        if (!dma.enabled) continue;
        const uint64_t packed = uint64_t(s.group) * dma.bytes_per_value();
        if (dma.surface_stride != packed) {
            msg << "SDP_RDMA D_" << reg << "_SURFACE_STRIDE is " << dma.surface_stride
                << " on a 1x1 cube; its surfaces are read packed (" << s.group << " values of "
                << dma.bytes_per_value() << " bytes), so it must be " << packed;
            return ctx.error(msg.str());
        }
    }
    // The write DMA writes a 1x1 output's surfaces as one run of atoms (WdmaSequenceDC).
    const bool winograd =
        NVDLA_FIELD_GET(SDP, D_FEATURE_MODE_CFG, WINOGRAD, sdp[NVDLA_SDP_D_FEATURE_MODE_CFG]) != 0;
    const uint32_t dst_surface = sdp[NVDLA_SDP_D_DST_SURFACE_STRIDE];
    if (!s.to_pdp && !s.eql && !winograd && s.batches == 1 && dst_surface != ctx.cfg.atom_bytes) {
        msg << "SDP D_DST_SURFACE_STRIDE is " << dst_surface
            << " on a 1x1 output; its surfaces are written packed, so it must be "
            << ctx.cfg.atom_bytes;
        return ctx.error(msg.str());
    }
    return true;
}

}  // namespace nvdla::emu::sdp
