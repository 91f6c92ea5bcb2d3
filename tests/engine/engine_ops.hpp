// Descriptor fragments the engine tests share: one plain operation of each processor, filled
// as the compiler would, for the tests to adjust.
#pragma once

#include <cstring>

#include "engine_rig.hpp"

namespace nvdla::engine_test {

// A feature cube of int8/int16 elements in `entry`, lines `pad` atoms longer than needed.
struct Feature {
    uint32_t w, h, c, bpe, atom, line, surface, surfaces;
    uint64_t bytes;

    Feature(uint32_t w_, uint32_t h_, uint32_t c_, uint32_t bpe_, uint32_t atom_, uint32_t pad = 0)
        : w(w_), h(h_), c(c_), bpe(bpe_), atom(atom_) {
        line = (w + pad) * atom;
        surface = h * line;
        surfaces = (c + atom / bpe - 1) / (atom / bpe);
        bytes = uint64_t(surfaces - 1) * surface + uint64_t(h - 1) * line + uint64_t(w) * atom;
    }
    uint64_t at(uint32_t ch, uint32_t y, uint32_t x) const {
        return feature_offset(atom, bpe, line, surface, ch, y, x);
    }
    nvdla_dla_data_cube cube(int entry) const {
        return engine_test::cube(entry, w, h, c, line, surface, static_cast<uint32_t>(bytes));
    }
};

// Writes int8 values[(c * h + y) * w + x] into the cube.
inline void put_int8(uint8_t* base, const Feature& f, const std::vector<int8_t>& values) {
    for (uint32_t ch = 0; ch < f.c; ++ch)
        for (uint32_t y = 0; y < f.h; ++y)
            for (uint32_t x = 0; x < f.w; ++x)
                base[f.at(ch, y, x)] =
                    static_cast<uint8_t>(values[(size_t(ch) * f.h + y) * f.w + x]);
}

inline std::vector<int8_t> get_int8(const uint8_t* base, const Feature& f) {
    std::vector<int8_t> out(size_t(f.c) * f.h * f.w);
    for (uint32_t ch = 0; ch < f.c; ++ch)
        for (uint32_t y = 0; y < f.h; ++y)
            for (uint32_t x = 0; x < f.w; ++x)
                out[(size_t(ch) * f.h + y) * f.w + x] = static_cast<int8_t>(base[f.at(ch, y, x)]);
    return out;
}

// SDP reading `in` from memory and writing `out`, int8, every stage bypassed.
inline void sdp_copy(OpDesc& d, const nvdla_dla_data_cube& in, const nvdla_dla_data_cube& out) {
    nvdla_dla_sdp_op_desc& op = d.op.sdp_op;
    std::memset(&op, 0, sizeof(op));
    op.src_precision = NVDLA_DLA_PRECISION_INT8;
    op.dst_precision = NVDLA_DLA_PRECISION_INT8;
    op.lut_index = -1;
    op.out_cvt.scale = 1;
    op.out_cvt.enable = 1;
    op.batch_num = 1;
    nvdla_dla_sdp_surface_desc& s = d.surf.sdp_surface;
    s.src_data = in;
    s.x1_data = no_cube();
    s.x2_data = no_cube();
    s.y_data = no_cube();
    s.dst_data = out;
}

// PDP pooling `in` to `out` (int8), kernel kw x kh, strides sx x sy, no padding.
inline void pdp_pool(OpDesc& d, const nvdla_dla_data_cube& in, const nvdla_dla_data_cube& out,
                     uint8_t mode, uint8_t kw, uint8_t kh, uint8_t sx, uint8_t sy) {
    nvdla_dla_pdp_op_desc& op = d.op.pdp_op;
    std::memset(&op, 0, sizeof(op));
    op.partial_in_width_first = in.width;
    op.partial_width_first = out.width;
    op.split_num = 1;
    op.pool_mode = mode;
    op.pool_width = static_cast<uint8_t>(kw - 1);
    op.pool_height = static_cast<uint8_t>(kh - 1);
    op.stride_x = sx;
    op.stride_y = sy;
    op.precision = NVDLA_DLA_PRECISION_INT8;
    d.surf.pdp_surface.src_data = in;
    d.surf.pdp_surface.dst_data = out;
}

// A LUT whose every entry is `value` and whose slopes are 0: any lookup gives `value`.
inline nvdla_dla_lut_param constant_lut(int16_t value) {
    nvdla_dla_lut_param lut;
    std::memset(&lut, 0, sizeof(lut));
    for (int i = 0; i < NVDLA_DLA_LUT_LE_ENTRIES; ++i) lut.linear_exp_table[i] = value;
    for (int i = 0; i < NVDLA_DLA_LUT_LO_ENTRIES; ++i) lut.linear_only_table[i] = value;
    lut.method = NVDLA_DLA_LUT_METHOD_EXPONENTIAL;
    lut.linear_exp_end = 1u << 20;
    lut.linear_only_end = 1024;
    return lut;
}

// CDP normalisation of `in` into `out` (int8), LUT `lut`, output shifted right by `shift`.
inline void cdp_lrn(OpDesc& d, const nvdla_dla_data_cube& in, const nvdla_dla_data_cube& out,
                    int16_t lut, uint8_t shift) {
    nvdla_dla_cdp_op_desc& op = d.op.cdp_op;
    std::memset(&op, 0, sizeof(op));
    op.in_precision = NVDLA_DLA_PRECISION_INT8;
    op.out_precision = NVDLA_DLA_PRECISION_INT8;
    op.lut_index = lut;
    op.in_cvt.scale = 1;
    op.in_cvt.enable = 1;
    op.out_cvt.scale = 1;
    op.out_cvt.truncate = shift;
    op.out_cvt.enable = 1;
    op.local_size = 5;
    d.surf.cdp_surface.src_data = in;
    d.surf.cdp_surface.dst_data = out;
}

// One BDMA transfer of `lines` lines of `line` bytes per surface, `surfaces` surfaces.
inline nvdla_dla_bdma_transfer bdma_transfer(int src, int dst, uint32_t line, uint32_t lines,
                                             uint32_t surfaces, uint32_t src_line,
                                             uint32_t dst_line, uint32_t src_surface,
                                             uint32_t dst_surface) {
    nvdla_dla_bdma_transfer t{};
    t.source_address = static_cast<int16_t>(src);
    t.destination_address = static_cast<int16_t>(dst);
    t.line_size = line;
    t.line_repeat = lines;
    t.surface_repeat = surfaces;
    t.source_line = src_line;
    t.destination_line = dst_line;
    t.source_surface = src_surface;
    t.destination_surface = dst_surface;
    return t;
}

// A direct int8 convolution of `in` (feature cube) by K kernels R x S, padding `pad`, stride 1,
// into a fused SDP (the caller fills the SDP).
struct ConvShape {
    uint32_t w, h, c, k, r, s, pad;
    uint32_t out_w() const { return w + 2 * pad - s + 1; }
    uint32_t out_h() const { return h + 2 * pad - r + 1; }
};

inline void conv_direct(OpDesc& d, const HwConfig& cfg, const ConvShape& sh,
                        const nvdla_dla_data_cube& in, int weights, uint32_t weight_bytes) {
    nvdla_dla_conv_op_desc& op = d.op.conv_op;
    std::memset(&op, 0, sizeof(op));
    op.conv_mode = NVDLA_DLA_CONV_DIRECT;
    op.data_format = NVDLA_DLA_FORMAT_FEATURE;
    op.in_precision = NVDLA_DLA_PRECISION_INT8;
    op.out_precision = NVDLA_DLA_PRECISION_INT8;
    op.batch = 1;
    // The buffer as CDMA/CSC need it (docs/emu/convolution.md, "Buffer rules").
    const uint32_t entries = cbuf_entries_per_slice(cfg, sh.c, 1, sh.w);
    const uint32_t per_bank = cbuf_geometry(cfg).entries_per_bank;
    op.data_bank = static_cast<uint8_t>((uint64_t(entries) * sh.h + per_bank - 1) / per_bank);
    op.weight_bank = 1;
    op.entry_per_slice = static_cast<uint16_t>(entries);
    op.fetch_grain = 1;
    op.release = static_cast<uint16_t>(sh.h);
    op.input_width_csc = static_cast<uint16_t>(sh.w);
    op.input_height_csc = static_cast<uint16_t>(sh.h);
    op.input_channel_csc = static_cast<uint16_t>(sh.c);
    op.kernel_width_csc = static_cast<uint16_t>(sh.s);
    op.kernel_height_csc = static_cast<uint16_t>(sh.r);
    op.kernel_channel_csc = static_cast<uint16_t>(sh.c);
    op.input_width_cmac = static_cast<uint16_t>(sh.out_w());
    op.input_height_cmac = static_cast<uint16_t>(sh.out_h());
    op.bytes_per_kernel = sh.r * sh.s * sh.c;
    op.conv_stride_x = 1;
    op.conv_stride_y = 1;
    op.pad_x_left = static_cast<uint8_t>(sh.pad);
    op.pad_x_right = static_cast<uint8_t>(sh.pad);
    op.pad_y_top = static_cast<uint8_t>(sh.pad);
    op.pad_y_bottom = static_cast<uint8_t>(sh.pad);
    op.dilation_x = 1;
    op.dilation_y = 1;
    op.in_cvt.scale = 1;
    op.out_cvt.scale = 1;
    nvdla_dla_conv_surface_desc& s = d.surf.conv_surface;
    s.weight_data = cube(weights, sh.s, sh.r, sh.c, 0, 0, weight_bytes);
    s.wmb_data = no_cube();
    s.wgs_data = no_cube();
    s.src_data = in;
    s.dst_data = hw_cube(sh.out_w(), sh.out_h(), sh.k);
}

// The fused SDP of a convolution: ReLU, then the output shifted right by `shift`, to `out`.
inline void sdp_after_conv(OpDesc& d, const ConvShape& sh, const nvdla_dla_data_cube& out,
                           uint8_t shift) {
    sdp_copy(d, hw_cube(sh.out_w(), sh.out_h(), sh.k), out);
    nvdla_dla_sdp_op& x1 = d.op.sdp_op.x1_op;
    x1.enable = 1;
    x1.type = NVDLA_DLA_SDP_OP_NONE;
    x1.act = NVDLA_DLA_ACT_RELU;
    d.op.sdp_op.out_cvt.truncate = shift;
}

}  // namespace nvdla::engine_test
