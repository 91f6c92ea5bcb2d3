// SDP and SDP_RDMA: one operation from registers to memory (or PDP), the LUT tables behind
// S_LUT_ACCESS_CFG/S_LUT_ACCESS_DATA, and the status and performance registers.
#include "emu/sdp.hpp"

#include <algorithm>
#include <array>

#include "emu/lut_port.hpp"
#include "emu/sdp_internal.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::emu {

struct Sdp::State {
    LutPort lut{LutPort::kSdp};
    sdp::Buffers buffers;
};

Sdp::Sdp() : state_(std::make_unique<State>()) {}
Sdp::~Sdp() = default;

void Sdp::reset() {
    state_->lut.reset();
}

bool Sdp::handle_write(Group, uint32_t offset, uint32_t value) {
    return state_->lut.csb_write(offset, value, NVDLA_SDP_S_LUT_ACCESS_CFG,
                                 NVDLA_SDP_S_LUT_ACCESS_DATA);
}

std::optional<uint32_t> Sdp::handle_read(Group, uint32_t offset) {
    if (offset != NVDLA_SDP_S_LUT_ACCESS_DATA) return std::nullopt;
    return state_->lut.read_data();
}

namespace {

using sdp::Counters;
using sdp::Settings;

// NAN_TO_ZERO on the fp16 pipeline flushes NaN inputs of the datapath to +0.
void flush_nan(std::span<int32_t> line) {
    for (int32_t& v : line)
        v = static_cast<int32_t>(precision::fp32_flush_nan(static_cast<uint32_t>(v)));
}

// CACC's values for channel group g, line h of batch b; padding lanes are 0.
void flying_line(const Settings& s, const AccumulatorCube& cube, uint32_t b, uint32_t g, uint32_t h,
                 std::span<int32_t> line) {
    if (cube.channels_last()) {
        // CACC's delivery as it goes: rounded half away by 2^clip.
        const uint32_t first = g * s.group, valid = std::min(s.group, s.channels - first);
        const int32_t* base = cube.sums.get() + cube.sum_index(b, first, h, 0);
        const int64_t half = cube.clip ? int64_t(1) << (cube.clip - 1) : 0;
        for (uint32_t w = 0; w < s.width; ++w) {
            const int32_t* src = base + size_t(w) * cube.channel_stride;
            int32_t* dst = line.data() + size_t(w) * s.group;
            for (uint32_t lane = 0; lane < valid; ++lane) {
                const int64_t v = src[lane];
                dst[lane] = static_cast<int32_t>(v < 0 ? -((half - v) >> cube.clip)
                                                       : (v + half) >> cube.clip);
            }
            std::fill(dst + valid, dst + s.group, 0);
        }
        return;
    }
    // Lane by lane: each channel's row is contiguous in the planar cube.
    for (uint32_t lane = 0; lane < s.group; ++lane) {
        const uint32_t c = g * s.group + lane;
        int32_t* dst = line.data() + lane;
        if (c >= s.channels) {
            for (uint32_t w = 0; w < s.width; ++w) dst[size_t(w) * s.group] = 0;
            continue;
        }
        const int32_t* src = cube.values.data() + cube.index(b, c, h, 0);
        for (uint32_t w = 0; w < s.width; ++w) dst[size_t(w) * s.group] = src[w];
    }
}

void to_element_cube(const Settings& s, uint32_t g, uint32_t h, std::span<const uint16_t> out,
                     ElementCube& cube) {
    // Lane by lane: a lane's row is contiguous in the cube.
    for (uint32_t lane = 0; lane < s.group; ++lane) {
        int16_t* row = cube.values.data() + cube.index(0, g * s.group + lane, h, 0);
        const uint16_t* in = out.data() + lane;
        for (uint32_t w = 0; w < s.width; ++w)
            row[w] = static_cast<int16_t>(in[size_t(w) * s.group]);
    }
}

void write_status(const Settings& s, const Counters& k, Group sdp_group, Group rdma) {
    const auto enabled = [](bool on, uint32_t value) { return on ? value : 0u; };
    sdp_group.set(NVDLA_SDP_D_STATUS, s.eql && k.unequal ? 1u : 0u);
    // SDP's own input counters are tied to 0 (NV_NVDLA_sdp.v); SDP_RDMA's count.
    sdp_group.set(NVDLA_SDP_D_STATUS_NAN_INPUT_NUM, 0);
    sdp_group.set(NVDLA_SDP_D_STATUS_INF_INPUT_NUM, 0);
    sdp_group.set(NVDLA_SDP_D_STATUS_NAN_OUTPUT_NUM, enabled(s.count_output_nan, k.output_nans));
    sdp_group.set(NVDLA_SDP_D_PERF_OUT_SATURATION, enabled(s.count_saturation, k.saturations));
    sdp_group.set(NVDLA_SDP_D_PERF_LUT_UFLOW, enabled(s.count_lut, k.lut.underflow));
    sdp_group.set(NVDLA_SDP_D_PERF_LUT_OFLOW, enabled(s.count_lut, k.lut.overflow));
    sdp_group.set(NVDLA_SDP_D_PERF_LUT_HYBRID, enabled(s.count_lut, k.lut.hybrid));
    sdp_group.set(NVDLA_SDP_D_PERF_LUT_LE_HIT, enabled(s.count_lut, k.lut.le_hit));
    sdp_group.set(NVDLA_SDP_D_PERF_LUT_LO_HIT, enabled(s.count_lut, k.lut.lo_hit));
    sdp_group.set(NVDLA_SDP_D_PERF_WDMA_WRITE_STALL, 0);  // no timing model
    if (rdma.valid()) {
        rdma.set(NVDLA_SDP_RDMA_D_STATUS_NAN_INPUT_NUM,
                 enabled(s.count_input_nan_inf, k.input_nans));
        rdma.set(NVDLA_SDP_RDMA_D_STATUS_INF_INPUT_NUM,
                 enabled(s.count_input_nan_inf, k.input_infs));
        for (uint32_t reg :
             {NVDLA_SDP_RDMA_D_PERF_MRDMA_READ_STALL, NVDLA_SDP_RDMA_D_PERF_BRDMA_READ_STALL,
              NVDLA_SDP_RDMA_D_PERF_NRDMA_READ_STALL, NVDLA_SDP_RDMA_D_PERF_ERDMA_READ_STALL})
            rdma.set(reg, 0);
    }
}

}  // namespace

namespace sdp {

bool operands_overlap_output(const Settings& s) {
    if (s.to_pdp) return false;  // nothing goes to memory
    // Byte ranges as unsigned 128-bit numbers: strides from registers cannot wrap them.
    using Wide = unsigned __int128;
    const uint32_t surfaces = s.padded_channels() / s.out_lanes;
    const Wide out_first = s.dst.base;
    const Wide out_end = out_first + Wide(s.batches - 1) * s.dst.batch_stride +
                         Wide(surfaces - 1) * s.dst.surface_stride +
                         Wide(s.height - 1) * s.dst.line_stride + Wide(s.width) * s.atom;
    for (const OperandDma* dma : {&s.bs_dma, &s.bn_dma, &s.ew_dma}) {
        if (!dma->enabled || !dma->per_element || dma->port != s.dst.port) continue;
        const Wide first = dma->base;
        const Wide end = first + Wide(s.groups - 1) * dma->surface_stride +
                         Wide(s.height - 1) * dma->line_stride +
                         Wide(s.line_elements()) * dma->bytes_per_value();
        if (first < out_end && out_first < end) return true;
    }
    return false;
}

}  // namespace sdp

void Sdp::execute(Context& ctx, Group single, Group sdp_group, Group rdma,
                  const AccumulatorCube* flying, ElementCube* to_pdp) {
    // A deferred convolution is computed here: block by block in the fused pass (below), else
    // whole before anything reads it.
    AccumulatorCube whole;
    const auto take_whole = [&] {
        if (!flying || !flying->deferred) return;
        whole = flying->deferred->whole();
        flying = &whole;
    };
    Settings s;
    if (!sdp::decode(ctx, single, sdp_group, rdma, flying, s) ||
        !sdp::check_dma_rules(ctx, sdp_group, s)) {
        take_whole();
        return;
    }
    if (s.to_pdp && !to_pdp) {
        take_whole();
        ctx.error("SDP D_FEATURE_MODE_CFG.OUTPUT_DST is PDP but PDP is not receiving");
        return;
    }
    s.lut.le = state_->lut.le();
    s.lut.lo = state_->lut.lo();

    sdp::Buffers& buffers = state_->buffers;
    std::optional<sdp::OperandReader> bs, bn, ew;
    if (s.bs_dma.enabled) bs.emplace(ctx, s, s.bs_dma, buffers.bs);
    if (s.bn_dma.enabled) bn.emplace(ctx, s, s.bn_dma, buffers.bn);
    if (s.ew_dma.enabled) ew.emplace(ctx, s, s.ew_dma, buffers.ew);
    std::optional<sdp::InputReader> input;
    if (!s.flying) input.emplace(ctx, s, buffers);
    std::optional<sdp::OutputWriter> writer;
    if (!s.eql && !s.to_pdp) writer.emplace(ctx, s, buffers);
    if (s.to_pdp) {
        *to_pdp = ElementCube{};
        to_pdp->batches = 1;
        to_pdp->channels = s.channels;
        to_pdp->stored_channels = s.padded_channels();  // whole atoms, lanes past C included
        to_pdp->height = s.height;
        to_pdp->width = s.width;
        to_pdp->precision = s.output;
        to_pdp->values.assign(size_t(s.padded_channels()) * s.height * s.width, 0);
    }

    // The vector forms (AVX-512 or AVX2) of the stages that have one for this programming (int
    // pipelines).
    const bool simd = !s.fp() && sdp::simd_enabled();
    // Blocks of a deferred cube, made on the layer's threads and written in order by this one
    // (fused_pass); the whole cube when an operand may lie where the blocks' order (block,
    // group, line) writes before the whole cube's (group, line) would.
    const bool blocks = simd && flying && flying->deferred && sdp::fused_supported(s, flying) &&
                        !sdp::operands_overlap_output(s);
    if (!blocks) take_whole();
    const bool flying_simd = simd && s.flying && flying->channels_last();
    const bool bs_simd = simd && s.bs.enabled && sdp::x_simd_supported(s.bs);
    const bool bn_simd = simd && s.bn.enabled && sdp::x_simd_supported(s.bn);
    const bool y_simd = simd && sdp::y_simd_supported(s);
    const bool c_simd = simd && sdp::c_simd_supported(s);

    Counters counters;
    if (simd && sdp::fused_supported(s, flying)) {
        // Output to PDP: the pass's lines kept, then handed to PDP's cube.
        if (s.to_pdp) writer.emplace(ctx, s, buffers, *to_pdp);
        sdp::run_fused(s, s.flying ? flying : nullptr, input ? &*input : nullptr,
                       {bs ? &*bs : nullptr, bn ? &*bn : nullptr, ew ? &*ew : nullptr}, *writer,
                       counters);
        writer->finish();
        write_status(s, counters, sdp_group, rdma);
        return;
    }
    const size_t n = s.line_elements();
    const std::span<int32_t> line(sdp::take(buffers.line, n), n);
    const std::span<uint16_t> out(sdp::take(buffers.out, n), n);
    // Channel group by channel group, line by line; the operands of a line serve every batch
    // (the operand DMAs have no batch stride) and offline every batch reads the same input.
    for (uint32_t g = 0; g < s.groups; ++g) {
        for (uint32_t h = 0; h < s.height; ++h) {
            const sdp::OperandLine bs_ops = bs ? bs->load(g, h) : sdp::OperandLine{};
            const sdp::OperandLine bn_ops = bn ? bn->load(g, h) : sdp::OperandLine{};
            const sdp::OperandLine ew_ops = ew ? ew->load(g, h) : sdp::OperandLine{};
            for (uint32_t b = 0; b < s.batches; ++b) {
                if (input)
                    input->read(g, h, line, counters);
                else if (flying_simd)
                    sdp::flying_line_simd(s, *flying, b, g, h, line);
                else
                    flying_line(s, *flying, b, g, h, line);
                if (s.nan_to_zero) flush_nan(line);
                if (bs_simd)
                    sdp::run_x_simd(s.bs, line, bs_ops);
                else if (s.bs.enabled)
                    sdp::run_x(s.bs, s.fp(), s.nan_to_zero, line, bs_ops);
                if (bn_simd)
                    sdp::run_x_simd(s.bn, line, bn_ops);
                else if (s.bn.enabled)
                    sdp::run_x(s.bn, s.fp(), s.nan_to_zero, line, bn_ops);
                if (y_simd)
                    sdp::run_y_simd(s.ew, line, ew_ops);
                else if (s.ew.enabled)
                    sdp::run_y(s, line, ew_ops, counters);
                if (c_simd)
                    sdp::run_c_simd(s, line, out, counters);
                else
                    sdp::run_c(s, line, out, counters);
                if (writer)
                    writer->write(b, g, h, out);
                else if (s.to_pdp)
                    to_element_cube(s, g, h, out, *to_pdp);
            }
        }
    }
    if (writer) writer->finish();
    write_status(s, counters, sdp_group, rdma);
}

}  // namespace nvdla::emu
