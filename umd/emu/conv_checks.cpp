// The convolution buffer's consistency rules: what CDMA and CSC need of the layer's buffer
// programming before they can run it. The C model FAILs or stalls on each of these (sources
// in docs/emu/convolution.md, "Buffer rules"); silicon hangs or computes garbage.
#include <sstream>
#include <string>

#include "emu/conv_layer.hpp"
#include "nvdla/hw_config.hpp"

namespace nvdla::emu::conv {
namespace {

uint64_t div_up(uint64_t a, uint64_t b) {
    return (a + b - 1) / b;
}

// D_ENTRY_PER_SLICE + 1 the layer needs: entries of one input line in the buffer.
uint64_t required_entries_per_slice(const HwConfig& cfg, const ConvLayer& l) {
    const CbufGeometry cbuf = cbuf_geometry(cfg);
    const uint32_t bytes = bytes_per_element(l.in_precision);
    switch (l.kind) {
        case InputKind::Feature:
            return cbuf_entries_per_slice(cfg, l.in_channels, bytes, l.in_width);
        case InputKind::Image:
            // A line padded left and right, its pixels converted to the processing precision,
            // in whole entries (cmod ImageConvDataResponseSequencerCommon).
            return div_up(uint64_t(l.cdma_pad_left + l.in_width + l.cdma_pad_right) *
                              l.in_channels * bytes_per_element(l.precision),
                          cbuf.entry_bytes);
        case InputKind::Winograd: {
            // Groups of 4 columns of the stride-extended cube, times its atoms (cmod
            // WinoConvDataResponseSequencerCommon: width_ext / (4 * sx) * c_atomics_ext).
            const uint64_t width_ext = uint64_t(l.in_width) + l.cdma_pad_left + l.cdma_pad_right;
            const uint64_t surfaces = div_up(l.in_channels, cfg.atom_bytes / bytes);
            return width_ext / (4 * l.cdma_stride_x) * surfaces * l.cdma_stride_x * l.cdma_stride_y;
        }
    }
    return 0;
}

// Input lines the buffer holds at once (each ENTRY_PER_SLICE + 1 entries).
uint64_t lines_held(const ConvLayer& l) {
    switch (l.kind) {
        case InputKind::Feature: return uint64_t(l.in_height) * l.batches;
        case InputKind::Image: return l.in_height;
        case InputKind::Winograd:
            return (uint64_t(l.in_height) + l.cdma_pad_top + l.cdma_pad_bottom) / l.cdma_stride_y;
    }
    return 0;
}

}  // namespace

bool check_buffer(Context& ctx, Group cdma, Group csc, const ConvLayer& l) {
    const HwConfig& cfg = ctx.cfg;
    const CbufGeometry cbuf = cbuf_geometry(cfg);
    ErrorMessage msg;
    const uint32_t entries = NVDLA_REG_FIELD(CDMA, D_ENTRY_PER_SLICE, ENTRIES, cdma);
    const uint32_t csc_entries = NVDLA_REG_FIELD(CSC, D_ENTRY_PER_SLICE, ENTRIES, csc);
    const uint32_t csc_data_bank = NVDLA_REG_FIELD(CSC, D_BANK, DATA_BANK, csc);
    const uint32_t csc_weight_bank = NVDLA_REG_FIELD(CSC, D_BANK, WEIGHT_BANK, csc);

    // CSC reads the entries and banks CDMA writes.
    if (csc_entries != entries || csc_data_bank != l.data_bank ||
        csc_weight_bank != l.weight_bank) {
        msg << "CDMA and CSC disagree on the convolution buffer: D_ENTRY_PER_SLICE.ENTRIES "
            << entries << " and " << csc_entries << ", D_BANK.DATA_BANK " << l.data_bank << " and "
            << csc_data_bank << ", D_BANK.WEIGHT_BANK " << l.weight_bank << " and "
            << csc_weight_bank;
        return ctx.error(msg.str());
    }
    const uint64_t data_banks = uint64_t(l.data_bank) + 1,
                   weight_banks = uint64_t(l.weight_bank) + 1;
    if (data_banks + weight_banks > cfg.cbuf_banks) {
        msg << "CDMA D_BANK.DATA_BANK is " << l.data_bank << " and WEIGHT_BANK " << l.weight_bank
            << " (" << data_banks << " + " << weight_banks << " banks); " << cfg.name
            << "'s convolution buffer has " << cfg.cbuf_banks;
        return ctx.error(msg.str());
    }

    const uint64_t need = required_entries_per_slice(cfg, l);
    if (uint64_t(entries) + 1 != need) {
        msg << "CDMA D_ENTRY_PER_SLICE.ENTRIES is " << entries << " (" << entries + 1
            << " entries per input line); a line of this layer takes " << need << " entries of "
            << cbuf.entry_bytes << " bytes of " << cfg.name
            << "'s convolution buffer, so it must be " << need - 1;
        return ctx.error(msg.str());
    }
    const uint64_t lines = lines_held(l);
    if (lines * need > data_banks * cbuf.entries_per_bank) {
        msg << "CDMA D_BANK.DATA_BANK is " << l.data_bank << " (" << data_banks << " banks of "
            << cbuf.entries_per_bank << " entries); the layer's " << lines << " input lines of "
            << need << " entries need " << lines * need << " entries, "
            << div_up(lines * need, cbuf.entries_per_bank) << " banks";
        return ctx.error(msg.str());
    }

    if (l.kind == InputKind::Feature) {
        // cmod DirectConvDataRequestSequencerCommon / ResponseSequencerCommon.
        const uint64_t packed_line = uint64_t(cfg.atom_bytes) * l.in_width;
        if (l.line_packed != (l.line_stride == packed_line)) {
            msg << "CDMA D_DAIN_MAP.LINE_PACKED is " << (l.line_packed ? 1 : 0)
                << " but D_LINE_STRIDE is " << l.line_stride << " bytes"
                << (l.line_packed ? ", not " : ", which is ") << "width x atom = " << packed_line;
            return ctx.error(msg.str());
        }
        if (!l.line_packed && l.fetch_grain != 1) {
            msg << "CDMA D_FETCH_GRAIN.GRAINS is " << l.fetch_grain - 1
                << " with D_DAIN_MAP.LINE_PACKED 0; lines that are not packed are fetched one "
                   "at a time (GRAINS 0)";
            return ctx.error(msg.str());
        }
        const uint64_t surfaces =
            div_up(l.in_channels, cfg.atom_bytes / bytes_per_element(l.in_precision));
        if (l.batches > 1 && l.batch_stride < l.surface_stride * surfaces) {
            msg << "CDMA D_BATCH_STRIDE is " << l.batch_stride
                << " bytes, less than D_SURF_STRIDE x surfaces = " << l.surface_stride * surfaces;
            return ctx.error(msg.str());
        }
    }

    // Weights go into whole entries (cmod DirectConvWeightRequestSequencerCommon).
    if (l.weight_bytes % cbuf.entry_bytes != 0 ||
        (l.compressed && l.wmb_bytes % cbuf.entry_bytes != 0)) {
        msg << "CDMA D_WEIGHT_BYTES is " << l.weight_bytes;
        if (l.compressed) msg << " and D_WMB_BYTES " << l.wmb_bytes;
        msg << "; the weights fill whole " << cbuf.entry_bytes << "-byte entries of " << cfg.name
            << "'s convolution buffer";
        return ctx.error(msg.str());
    }
    return true;
}

}  // namespace nvdla::emu::conv
