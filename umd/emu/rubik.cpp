// RUBIK as the nv_full RTL sequences it (vmod/nvdla/rubik/NV_NVDLA_RUBIK_seq_gen.v). Data
// moves as 32-byte atoms (one pixel of a feature surface: 32 int8 or 16 int16/fp16 channels)
// or as planar lines (one channel, bytes-per-element per pixel); nothing is converted.
//   contract: out[s][h*Y + sy][w*X + sx] = in[kernel (sy*X + sx)][s][h][w]  (atoms)
//   split:    plane[c][h][w] = in[c / epa][h][w].channel(c % epa)
//   merge:    out[c / epa][h][w].channel(c % epa) = plane[c][h][w]
// Lines are moved with one DMA each; the hardware issues them in 8-atom (contract) or
// 64-pixel (split/merge) pieces in the same line order, which matters only when the
// destination overlaps itself or the source.
#include "emu/rubik.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace nvdla::emu {
namespace {

constexpr uint32_t kAtom = 32;
// CONTRACT writes a whole output line per request whose size field has 13 bits (width *
// x stride atoms, minus one); the verification constraints cap it at 8192 (bug 200270306).
constexpr uint64_t kContractMaxLineAtoms = 8192;

uint64_t round_up_to_atom(uint64_t bytes) {
    return (bytes + kAtom - 1) / kAtom * kAtom;
}

// The registers of one operation. Addresses and strides are byte values (their registers keep
// bits 31:5); sizes are counts.
struct Operation {
    uint32_t width, height, in_channels, out_channels;
    uint32_t element_bytes, elements_per_atom;
    MemoryPort in_port, out_port;
    uint64_t src, dst;
    uint64_t in_line, in_surface, in_planar;
    uint64_t out_line, out_surface, out_planar;
    uint64_t kernel_stride;  // CONTRACT_STRIDE_0: between the inputs of two kernel positions
    uint32_t x_stride, y_stride;

    // Surfaces of a feature cube with this many channels.
    uint32_t surfaces(uint32_t channels) const {
        return (channels + elements_per_atom - 1) / elements_per_atom;
    }
    // Planes (channels) held by surface s.
    uint32_t planes_of(uint32_t s, uint32_t channels) const {
        return std::min(channels - s * elements_per_atom, elements_per_atom);
    }
};

Operation decode(Group rbk) {
    Operation op{};
    const bool int8 = NVDLA_REG_FIELD(RBK, D_MISC_CFG, IN_PRECISION, rbk) ==
                      NVDLA_RBK_D_MISC_CFG_IN_PRECISION_INT8;
    op.element_bytes = int8 ? 1 : 2;
    op.elements_per_atom = kAtom / op.element_bytes;
    op.width = NVDLA_REG_FIELD(RBK, D_DATAIN_SIZE_0, DATAIN_WIDTH, rbk) + 1;
    op.height = NVDLA_REG_FIELD(RBK, D_DATAIN_SIZE_0, DATAIN_HEIGHT, rbk) + 1;
    op.in_channels = NVDLA_REG_FIELD(RBK, D_DATAIN_SIZE_1, DATAIN_CHANNEL, rbk) + 1;
    op.out_channels = NVDLA_REG_FIELD(RBK, D_DATAOUT_SIZE_1, DATAOUT_CHANNEL, rbk) + 1;
    op.in_port = Dma::port_of(NVDLA_REG_FIELD(RBK, D_DAIN_RAM_TYPE, DATAIN_RAM_TYPE, rbk));
    op.out_port = Dma::port_of(NVDLA_REG_FIELD(RBK, D_DAOUT_RAM_TYPE, DATAOUT_RAM_TYPE, rbk));
    op.src = Dma::address(rbk[NVDLA_RBK_D_DAIN_ADDR_HIGH], rbk[NVDLA_RBK_D_DAIN_ADDR_LOW]);
    op.dst = Dma::address(rbk[NVDLA_RBK_D_DAOUT_ADDR_HIGH], rbk[NVDLA_RBK_D_DAOUT_ADDR_LOW]);
    op.in_line = rbk[NVDLA_RBK_D_DAIN_LINE_STRIDE];
    op.in_surface = rbk[NVDLA_RBK_D_DAIN_SURF_STRIDE];
    op.in_planar = rbk[NVDLA_RBK_D_DAIN_PLANAR_STRIDE];
    op.out_line = rbk[NVDLA_RBK_D_DAOUT_LINE_STRIDE];
    op.out_surface = rbk[NVDLA_RBK_D_DAOUT_SURF_STRIDE];
    op.out_planar = rbk[NVDLA_RBK_D_DAOUT_PLANAR_STRIDE];
    op.kernel_stride = rbk[NVDLA_RBK_D_CONTRACT_STRIDE_0];
    op.x_stride = NVDLA_REG_FIELD(RBK, D_DECONV_STRIDE, DECONV_X_STRIDE, rbk) + 1;
    op.y_stride = NVDLA_REG_FIELD(RBK, D_DECONV_STRIDE, DECONV_Y_STRIDE, rbk) + 1;
    return op;
}

// CONTRACT (the last phase of a deconvolution): the X*Y kernel positions' output cubes are
// interleaved into one cube X times wider and Y times taller. Output line h*Y + sy is built
// from X input lines and written in one piece, as the hardware does for X <= 8 (for larger X
// it writes 8-atom pieces of the same line). CONTRACT_STRIDE_1 is not used: the RTL only
// monitors it and steps every output line by DAOUT_LINE_STRIDE (the C model uses it as the
// stride between groups of Y lines; the two agree when it equals Y * DAOUT_LINE_STRIDE, as
// the programming guide and the firmware program it).
void contract(Context& ctx, const Operation& op) {
    const uint64_t out_atoms = uint64_t(op.width) * op.x_stride;
    if (out_atoms > kContractMaxLineAtoms) {
        ctx.error("RBK contract output lines of DATAIN_WIDTH+1 (" + std::to_string(op.width) +
                  ") x DECONV_X_STRIDE+1 (" + std::to_string(op.x_stride) +
                  ") = " + std::to_string(out_atoms) + " atoms exceed the " +
                  std::to_string(kContractMaxLineAtoms) +
                  " a write request can describe; nothing was written");
        return;
    }
    std::vector<std::byte> in(uint64_t(op.width) * kAtom);
    std::vector<std::byte> out(out_atoms * kAtom);
    for (uint32_t s = 0; s < op.surfaces(op.out_channels); ++s) {
        for (uint32_t h = 0; h < op.height; ++h) {
            for (uint32_t sy = 0; sy < op.y_stride; ++sy) {
                for (uint32_t sx = 0; sx < op.x_stride; ++sx) {
                    const uint64_t kernel = uint64_t(sy) * op.x_stride + sx;
                    ctx.dma.read(
                        NVDLA_UNIT_RBK, op.in_port,
                        op.src + s * op.in_surface + h * op.in_line + kernel * op.kernel_stride,
                        in.data(), in.size());
                    for (uint32_t w = 0; w < op.width; ++w)
                        std::memcpy(&out[(uint64_t(w) * op.x_stride + sx) * kAtom],
                                    &in[uint64_t(w) * kAtom], kAtom);
                }
                const uint64_t line = uint64_t(h) * op.y_stride + sy;
                ctx.dma.write(NVDLA_UNIT_RBK, op.out_port,
                              op.dst + s * op.out_surface + line * op.out_line, out.data(),
                              out.size());
            }
        }
    }
}

// SPLIT: a feature cube to one plane per channel. A plane line is written up to the next
// 32 bytes; the bytes past the last pixel are zero (the RTL masks them, rf_ctrl split_rd_mask).
void split(Context& ctx, const Operation& op) {
    const uint32_t eb = op.element_bytes;
    std::vector<std::byte> in(uint64_t(op.width) * kAtom);
    std::vector<std::byte> plane(round_up_to_atom(uint64_t(op.width) * eb));
    for (uint32_t s = 0; s < op.surfaces(op.in_channels); ++s) {
        const uint64_t first_plane = uint64_t(s) * op.elements_per_atom;
        for (uint32_t h = 0; h < op.height; ++h) {
            ctx.dma.read(NVDLA_UNIT_RBK, op.in_port, op.src + s * op.in_surface + h * op.in_line,
                         in.data(), in.size());
            for (uint32_t p = 0; p < op.planes_of(s, op.in_channels); ++p) {
                std::fill(plane.begin(), plane.end(), std::byte{0});
                for (uint32_t w = 0; w < op.width; ++w)
                    std::memcpy(&plane[uint64_t(w) * eb], &in[uint64_t(w) * kAtom + p * eb], eb);
                ctx.dma.write(NVDLA_UNIT_RBK, op.out_port,
                              op.dst + (first_plane + p) * op.out_planar + h * op.out_line,
                              plane.data(), plane.size());
            }
        }
    }
}

// MERGE: one plane per channel to a feature cube. Channels of the last surface past the
// last plane are zero (the RTL masks them, rf_ctrl merge_rd_mask).
void merge(Context& ctx, const Operation& op) {
    const uint32_t eb = op.element_bytes;
    std::vector<std::byte> plane(round_up_to_atom(uint64_t(op.width) * eb));
    std::vector<std::byte> out(uint64_t(op.width) * kAtom);
    for (uint32_t s = 0; s < op.surfaces(op.in_channels); ++s) {
        const uint64_t first_plane = uint64_t(s) * op.elements_per_atom;
        for (uint32_t h = 0; h < op.height; ++h) {
            std::fill(out.begin(), out.end(), std::byte{0});
            for (uint32_t p = 0; p < op.planes_of(s, op.in_channels); ++p) {
                ctx.dma.read(NVDLA_UNIT_RBK, op.in_port,
                             op.src + (first_plane + p) * op.in_planar + h * op.in_line,
                             plane.data(), plane.size());
                for (uint32_t w = 0; w < op.width; ++w)
                    std::memcpy(&out[uint64_t(w) * kAtom + p * eb], &plane[uint64_t(w) * eb], eb);
            }
            ctx.dma.write(NVDLA_UNIT_RBK, op.out_port,
                          op.dst + s * op.out_surface + h * op.out_line, out.data(), out.size());
        }
    }
}

}  // namespace

void Rubik::execute(Context& ctx, Group rbk) {
    const uint32_t mode = NVDLA_REG_FIELD(RBK, D_MISC_CFG, RUBIK_MODE, rbk);
    const uint32_t precision = NVDLA_REG_FIELD(RBK, D_MISC_CFG, IN_PRECISION, rbk);
    if (mode > NVDLA_RBK_D_MISC_CFG_RUBIK_MODE_MERGE) {
        ctx.error("RBK D_MISC_CFG.RUBIK_MODE " + std::to_string(mode) +
                  " is not a mode (0 contract, 1 split, 2 merge); nothing was written");
        return;
    }
    if (precision > NVDLA_RBK_D_MISC_CFG_IN_PRECISION_FP16) {
        ctx.error("RBK D_MISC_CFG.IN_PRECISION " + std::to_string(precision) +
                  " is not a precision (0 int8, 1 int16, 2 fp16); nothing was written");
        return;
    }
    const Operation op = decode(rbk);
    if (mode == NVDLA_RBK_D_MISC_CFG_RUBIK_MODE_CONTRACT) {
        contract(ctx, op);
        return;
    }
    if (op.out_channels != op.in_channels) {
        // The read sequencer walks DATAIN_CHANNEL, the write sequencer DATAOUT_CHANNEL: they
        // would disagree on the amount of data.
        ctx.error("RBK split/merge needs D_DATAOUT_SIZE_1.DATAOUT_CHANNEL (" +
                  std::to_string(op.out_channels - 1) +
                  ") equal to D_DATAIN_SIZE_1.DATAIN_CHANNEL (" +
                  std::to_string(op.in_channels - 1) + "); nothing was written");
        return;
    }
    if (mode == NVDLA_RBK_D_MISC_CFG_RUBIK_MODE_SPLIT)
        split(ctx, op);
    else
        merge(ctx, op);
}

}  // namespace nvdla::emu
