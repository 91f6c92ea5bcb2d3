// Lowering the operators of post-2018 vision models that are not SDP chain elements: padding
// (folded into the consumer's padding, else an identity depthwise convolution whose padding
// value is the pad value), channel slices (views of whole atoms, else a 1x1 selection
// convolution) and the operators no unit computes (a sentence naming the layer).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "builder/lower_impl.hpp"
#include "nvdla/formats/auxiliary.hpp"

namespace nvdla::builder::detail {

// Whether the SDP can read `operand` as the other input of element-wise layer `eltwise`: the
// same dims (per element) or {1, C, 1, 1} (per channel, squeeze-excitation).
bool Lowering::operand_form(uint32_t eltwise, uint32_t operand) const {
    const Dims4 out = net_.nodes[eltwise].dims, d = net_.nodes[operand].dims;
    return d == out || (d.c == out.c && d.h == 1 && d.w == 1);
}

namespace {

constexpr float kLowest = -65504.0f;  // at or below every fp16 value: "never the maximum"

// value_fits: the pad value is an element of the input's precision (int8: within its scale).
bool absorbs(const Node& consumer, const Node& pad, bool value_fits) {
    const auto& p = pad.pads;  // top, left, bottom, right
    if (consumer.op == Op::Convolution) {
        // The convolution core pads with one value (PAD_VALUE): the pad's, when the
        // convolution has no padding of its own.
        const ConvolutionDesc& c = consumer.conv;
        const bool own = c.pad_left || c.pad_top || c.pad_right || c.pad_bottom;
        return (pad.pad_value == 0 || (!own && value_fits)) && c.pad_left + p[1] <= 31 &&
               c.pad_top + p[0] <= 31 && c.pad_right + p[3] <= 63 && c.pad_bottom + p[2] <= 63;
    }
    if (consumer.op == Op::Pooling) {
        const PoolingDesc& q = consumer.pool;
        const bool value_ok =
            q.type == PoolingType::Max
                ? pad.pad_value <= kLowest
                : pad.pad_value == 0 && (q.count_include_pad ||
                                         !(q.pad_top || q.pad_left || q.pad_bottom || q.pad_right));
        return value_ok && q.kernel_h <= 8 && q.kernel_w <= 8 && q.pad_top + p[0] <= 7 &&
               q.pad_left + p[1] <= 7 && q.pad_bottom + p[2] <= 7 && q.pad_right + p[3] <= 7 &&
               q.pad_top + p[0] < q.kernel_h && q.pad_bottom + p[2] < q.kernel_h &&
               q.pad_left + p[1] < q.kernel_w && q.pad_right + p[3] < q.kernel_w;
    }
    return false;
}

}  // namespace

int Lowering::folded_pad(uint32_t consumer) const {
    const uint32_t in = root(net_.nodes[consumer].inputs[0]);
    const Node& pad = net_.nodes[in];
    if (pad.op != Op::Pad || out_index_[in] >= 0 || home_[in].valid() || cons_[in].empty() ||
        image_[root(pad.inputs[0])])
        return -1;
    const bool value_fits =
        std::isfinite(pad.pad_value) &&
        (!t_.int8() || std::fabs(pad.pad_value) <= 127.5 * scale(root(pad.inputs[0])));
    for (uint32_t c : cons_[in])
        if (!absorbs(net_.nodes[c], pad, value_fits)) return -1;
    return static_cast<int>(in);
}

// The padding element of a convolution reading `in` (fp16 bits or int8 in the input's scale).
int16_t Lowering::pad_element(float value, uint32_t in) const {
    if (t_.int8())
        return static_cast<int16_t>(
            std::clamp(std::round(double(value) / scale(in)), -128.0, 127.0));
    return static_cast<int16_t>(aux_register_value(Precision::Fp16, std::max(value, kLowest)));
}

// A pad every consumer absorbs costs nothing; otherwise an identity depthwise convolution
// writes the padded cube, the convolution core filling the border with the pad value.
Status Lowering::lower_pad(uint32_t id) {
    const Node& n = net_.nodes[id];
    bool folded = out_index_[id] < 0 && !home_[id].valid() && !cons_[id].empty();
    for (uint32_t c : cons_[id]) folded = folded && folded_pad(c) == static_cast<int>(id);
    if (folded) {
        done_[id] = true;  // its consumers read its input with more padding
        return Status();
    }
    const uint32_t in_id = root(n.inputs[0]);
    const auto& p = n.pads;
    if (p[0] > 31 || p[1] > 31 || p[2] > 63 || p[3] > 63)
        return error(layer(id), ": padding ", p[0], ",", p[1], ",", p[2], ",", p[3],
                     " is beyond the convolution core's 31 (left, top) and 63 (right, bottom) "
                     "that writes it");
    const uint32_t c = n.dims.c;
    return selection_conv(id, in_id, home(in_id), c, c, std::vector<float>(c, 1.0f),
                          "pad as identity depthwise ", {p[0], p[1], p[2], p[3]},
                          pad_element(n.pad_value, in_id));
}

// Channels [begin, end): a view where they start on an atom, else a 1x1 convolution selecting
// them from the atoms that hold them.
Status Lowering::lower_slice(uint32_t id) {
    const Node& n = net_.nodes[id];
    const uint32_t in_id = root(n.inputs[0]);
    const Place in = home(in_id);
    const uint32_t lanes = t_.lanes(), begin = n.slice_begin, c = n.dims.c;
    if (begin % lanes == 0) {
        const Place view = sub_place(in, begin, c, 0, n.dims.h);
        if (home_[id].valid()) {
            done_[id] = true;
            if (Status s = copy(id, view, home_[id]); !s) return s;
        } else {
            home_[id] = view;
        }
        return computed(id);
    }
    const uint32_t first = begin / lanes * lanes;
    const uint32_t span = begin + c - first;
    const Place from = sub_place(in, first, span, 0, in.dims.h);
    std::vector<float> ones(uint64_t(c) * span, 0.0f);
    for (uint32_t k = 0; k < c; ++k) ones[size_t(k) * span + (begin - first + k)] = 1.0f;
    return selection_conv(id, in_id, from, c, 1, ones, "channel slice as 1x1 ", {0, 0, 0, 0}, 0);
}

// A 1x1 convolution with fixed weights (0 and 1: exact in fp16 and int8) over `in` making
// layer id, with the SDP chain and pooling after it fused as behind any convolution.
Status Lowering::selection_conv(uint32_t id, uint32_t in_id, const Place& in, uint32_t kernels,
                                uint32_t groups, const std::vector<float>& weights,
                                const char* what, std::array<uint32_t, 4> pads, int16_t pad_value) {
    const Node& n = net_.nodes[id];
    ConvJob job;
    job.node = id;
    job.name = n.name;
    job.in = in;
    job.kernels = kernels;
    job.groups = groups;
    job.channels = in.dims.c / groups;
    job.pad_t = pads[0];
    job.pad_l = pads[1];
    job.pad_b = pads[2];
    job.pad_r = pads[3];
    job.pad_value = pad_value;
    job.out_w = n.dims.w;
    job.out_h = n.dims.h;
    job.weights = weights;
    job.bias.assign(kernels, 0.0f);
    job.what = what;
    job.in_scale = scale(in_id);
    SdpSource src;
    src.flying = true;
    src.bias = job.bias;
    src.channels = kernels;
    src.scale = scale(id);
    job.weight_scale = weight_scales(job.weights, kernels);
    if (t_.int8()) {
        src.units.resize(kernels);
        for (uint32_t k = 0; k < kernels; ++k) src.units[k] = job.in_scale * job.weight_scale[k];
    }
    SdpProgram prog(t_, src);
    done_[id] = true;
    const uint32_t last = grow_chain(prog, id, true);
    job.prog = &prog;
    job.pool = fusable_pool(last, job.out_w);
    job.out_scale = scale(last);
    bool fused = false;
    if (Status s = conv_job(job, fused, last); !s) return s;
    if (Status s = computed(last); !s) return s;
    if (fused) {
        done_[size_t(job.pool)] = true;
        return computed(static_cast<uint32_t>(job.pool));
    }
    return Status();
}

// Writes the phases of an upsampling by (sh, sw) into `out` with SDP copies: phase (a, b)
// (phases[a * sw + b], h x w) holds the outputs (y * sh + a, x * sw + b). sw copies per row
// phase spread the columns (a phase read as one column of h*w pixels, written with a line
// stride of sw atoms at column offset b, so pixel (y, x) lands at (y, x*sw + b)), then sh
// copies spread the rows (line stride sh lines, row offset a). Returns the number of copies.
Result<uint32_t> Lowering::interleave(uint32_t id, const std::vector<Place>& phases, uint32_t sh,
                                      uint32_t sw, const Place& out) {
    const Node& n = net_.nodes[id];
    const uint32_t atom = t_.cfg->atom_bytes;
    const Dims4 d = phases[0].dims;
    if (sw > 1 && d.h == 1 && d.w == 1 && d.c > t_.lanes())
        return error(layer(id), ": a 1x1 plane of ", d.c,
                     " channels cannot be spread (the SDP moves a 1x1 cube as one packed block; "
                     "at most ",
                     t_.lanes(), " channels)");
    // The column pass reads bands of rows as one column of at most 8192 pixels.
    const uint32_t band = std::max<uint32_t>(1, 8192 / d.w);
    uint32_t copies = 0;
    auto emit = [&](const Place& from, const Place& to) {
        ++copies;
        return copy(id, from, to);
    };
    const bool dense_out = out.line == uint64_t(out.dims.w) * atom;
    std::vector<Place> dense_phases;  // rows following each other, for the column pass
    for (const Place& p : phases) {
        if (sw == 1 || p.line == uint64_t(d.w) * atom) {
            dense_phases.push_back(p);
            continue;
        }
        if (!dense_phases.empty() && phases[0].buffer == p.buffer && phases[0].offset == p.offset) {
            dense_phases.push_back(dense_phases[0]);
            continue;
        }
        Place q = dense(0, d);
        q.buffer = plan_.add_buffer(BufferKind::Pool, cube_bytes(q), n.name + " (dense)");
        if (Status s = emit(p, q); !s) return s;
        dense_phases.push_back(q);
    }
    // Row phases made of the same places (nearest resizing) share one column pass.
    bool rows_alike = true;
    for (size_t i = sw; i < phases.size(); ++i)
        rows_alike = rows_alike && phases[i].buffer == phases[i % sw].buffer &&
                     phases[i].offset == phases[i % sw].offset;
    Place wide = out;  // the row phase being written, columns spread
    for (uint32_t a = 0; a < sh; ++a) {
        const bool spread = sw > 1 && (a == 0 || !rows_alike);
        if (sw == 1) {
            wide = dense_phases[a];
        } else if (spread && (sh > 1 || !dense_out)) {
            wide = dense(0, {1, d.c, d.h, d.w * sw});
            wide.buffer = plan_.add_buffer(BufferKind::Pool, cube_bytes(wide), n.name + " (wide)");
        }
        for (uint32_t b = 0; spread && b < sw; ++b)
            for (uint32_t r0 = 0; r0 < d.h; r0 += band) {
                const uint32_t rows = std::min(band, d.h - r0);
                Place src = dense_phases[a * sw + b], dst = wide;
                src.offset += uint64_t(r0) * src.line;
                dst.offset += uint64_t(r0) * wide.line + uint64_t(b) * atom;
                src.dims = dst.dims = {1, d.c, rows * d.w, 1};
                src.line = atom;
                dst.line = sw * atom;
                if (Status s = emit(src, dst); !s) return s;
            }
        if (sh > 1 || !dense_out || sw == 1) {
            Place dst = out;
            dst.offset += uint64_t(a) * out.line;
            dst.dims = wide.dims;
            dst.line = sh * out.line;
            if (Status s = emit(wide, dst); !s) return s;
        }
    }
    return copies;
}

// Nearest upsampling: every phase is the input.
Status Lowering::lower_resize_nearest(uint32_t id) {
    const Node& n = net_.nodes[id];
    const uint32_t in_id = root(n.inputs[0]);
    const uint32_t sh = n.scales[0], sw = n.scales[1];
    const size_t first_step = plan_.steps.size();
    done_[id] = true;
    Result<uint32_t> copies =
        interleave(id, std::vector<Place>(size_t(sh) * sw, home(in_id)), sh, sw, home(id));
    if (!copies) return copies.status();
    plan_.steps[first_step].group.note = n.name + ": nearest resize " + std::to_string(sh) + "x" +
                                         std::to_string(sw) + " as " + std::to_string(*copies) +
                                         " SDP copies (columns, then rows)";
    for (size_t i = first_step + 1; i < plan_.steps.size(); ++i)
        plan_.steps[i].group.note = n.name + ": (copy " + std::to_string(i - first_step + 1) + ")";
    return computed(id);
}

// Bilinear upsampling by integer scales, half-pixel centres, edges clamped: the input padded
// by one replicated row and column on each side (SDP copies), then per output phase (a, b) a
// depthwise 2x2 convolution of that padded cube at offset (oa, ob) with the phase's fixed
// weights, and the phases interleaved. Output x*s + b samples the input at x + d, d = (b +
// 1/2) / s - 1/2 in (-1/2, 1/2): the neighbours x - 1, x (offset 0, weights -d, 1 + d) for
// d < 0, else x, x + 1 (offset 1, weights 1 - d, d); weights are products of the two axes'.
Status Lowering::lower_resize_bilinear(uint32_t id) {
    const Node& n = net_.nodes[id];
    const uint32_t in_id = root(n.inputs[0]);
    const Place in = home(in_id);
    const uint32_t sh = n.scales[0], sw = n.scales[1], atom = t_.cfg->atom_bytes;
    const Dims4 d = in.dims;
    const size_t first_step = plan_.steps.size();
    done_[id] = true;

    // The replicated border.
    Place padded = dense(0, {1, d.c, d.h + 2, d.w + 2});
    padded.buffer = plan_.add_buffer(BufferKind::Pool, cube_bytes(padded), n.name + " (padded)");
    auto at = [&](uint32_t row, uint32_t col, uint32_t rows, uint32_t cols) {
        Place p = padded;
        p.offset += uint64_t(row) * padded.line + uint64_t(col) * atom;
        p.dims = {1, d.c, rows, cols};
        return p;
    };
    const std::pair<Place, Place> border[] = {
        {in, at(1, 1, d.h, d.w)},
        {sub_place(in, 0, d.c, 0, 1), at(0, 1, 1, d.w)},
        {sub_place(in, 0, d.c, d.h - 1, 1), at(d.h + 1, 1, 1, d.w)},
        {at(0, 1, d.h + 2, 1), at(0, 0, d.h + 2, 1)},
        {at(0, d.w, d.h + 2, 1), at(0, d.w + 1, d.h + 2, 1)},
    };
    for (const auto& [from, to] : border)
        if (Status s = copy(id, from, to); !s) return s;

    auto taps = [](uint32_t phase, uint32_t scale, uint32_t& offset) {
        const double f = (phase + 0.5) / scale - 0.5;
        offset = f < 0 ? 0 : 1;
        return f < 0 ? std::array<double, 2>{-f, 1 + f} : std::array<double, 2>{1 - f, f};
    };
    std::vector<Place> phases;
    for (uint32_t a = 0; a < sh; ++a)
        for (uint32_t b = 0; b < sw; ++b) {
            uint32_t oa = 0, ob = 0;
            const std::array<double, 2> wa = taps(a, sh, oa), wb = taps(b, sw, ob);
            Place ph = dense(0, d);
            ph.buffer = plan_.add_buffer(
                BufferKind::Pool, cube_bytes(ph),
                n.name + " (phase " + std::to_string(a) + "," + std::to_string(b) + ")");
            ConvJob job;
            job.node = id;
            job.name = n.name;
            job.in = at(oa, ob, d.h + 1, d.w + 1);
            job.kernels = job.groups = d.c;
            job.channels = 1;
            job.r = job.s = 2;
            job.out_w = d.w;
            job.out_h = d.h;
            for (uint32_t c = 0; c < d.c; ++c)
                for (uint32_t r = 0; r < 2; ++r)
                    for (uint32_t t = 0; t < 2; ++t)
                        job.weights.push_back(static_cast<float>(wa[r] * wb[t]));
            job.bias.assign(d.c, 0.0f);
            job.what =
                "bilinear phase " + std::to_string(a) + "," + std::to_string(b) + " as depthwise ";
            job.in_scale = scale(in_id);
            job.weight_scale = weight_scales(job.weights, d.c);
            SdpSource src;
            src.flying = true;
            src.bias = job.bias;
            src.channels = d.c;
            src.scale = scale(id);
            if (t_.int8())
                for (uint32_t k = 0; k < d.c; ++k)
                    src.units.push_back(job.in_scale * job.weight_scale[k]);
            SdpProgram prog(t_, src);
            job.prog = &prog;
            job.out = ph;
            job.out_scale = scale(id);
            bool fused = false;
            if (Status s = conv_job(job, fused, id); !s) return s;
            phases.push_back(ph);
        }
    Result<uint32_t> copies = interleave(id, phases, sh, sw, home(id));
    if (!copies) return copies.status();
    plan_.steps[first_step].group.note =
        n.name + ": bilinear resize " + std::to_string(sh) + "x" + std::to_string(sw) +
        ": 5 SDP copies replicate the border, " + std::to_string(sh * sw) +
        " depthwise 2x2 convolutions make the phases, " + std::to_string(*copies) +
        " SDP copies interleave them";
    return computed(id);
}

}  // namespace nvdla::builder::detail
