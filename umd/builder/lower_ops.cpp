// Lowering the operators of post-2018 vision models that are not SDP chain elements: padding
// (folded into the consumer's padding, else an identity depthwise convolution whose padding
// value is the pad value), channel slices (views of whole atoms, else a 1x1 selection
// convolution) and the operators no unit computes (a sentence naming the layer).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

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

bool absorbs(const Node& consumer, const Node& pad) {
    const auto& p = pad.pads;  // top, left, bottom, right
    if (consumer.op == Op::Convolution) {
        const ConvolutionDesc& c = consumer.conv;
        return pad.pad_value == 0 && c.pad_left + p[1] <= 31 && c.pad_top + p[0] <= 31 &&
               c.pad_right + p[3] <= 63 && c.pad_bottom + p[2] <= 63;
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
    for (uint32_t c : cons_[in])
        if (!absorbs(net_.nodes[c], pad)) return -1;
    return static_cast<int>(in);
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
    int16_t pad_value = 0;
    if (t_.int8()) {
        const double q = std::round(double(n.pad_value) / scale(in_id));
        pad_value = static_cast<int16_t>(std::clamp(q, -128.0, 127.0));
    } else {
        pad_value = static_cast<int16_t>(
            aux_register_value(Precision::Fp16, std::max(n.pad_value, kLowest)));
    }
    return selection_conv(id, in_id, home(in_id), c, c, std::vector<float>(c, 1.0f),
                          "pad as identity depthwise ", {p[0], p[1], p[2], p[3]}, pad_value);
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

// Nearest upsampling by (sh, sw) as SDP copies, exact on every configuration: sw copies
// spread the columns (the plane read as one column of h*w pixels, written with a line stride
// of sw atoms at column offset b, so pixel (y, x) lands at (y, x*sw + b)), then sh copies
// spread the rows (line stride sh lines, row offset a).
Status Lowering::lower_resize_nearest(uint32_t id) {
    const Node& n = net_.nodes[id];
    const uint32_t in_id = root(n.inputs[0]);
    const Place in = home(in_id);
    const uint32_t sh = n.scales[0], sw = n.scales[1], atom = t_.cfg->atom_bytes;
    const Dims4 d = in.dims;
    if (uint64_t(d.h) * d.w > 8192 || (d.h == 1 && d.w == 1 && d.c > t_.lanes()))
        return error(layer(id), ": the ", d.h, "x", d.w,
                     " input plane is read as one column of pixels, which the SDP takes up to "
                     "8192 long (and a 1x1 plane only within one atom of channels)");
    Place out = home(id);
    const bool dense_out = out.line == uint64_t(out.dims.w) * atom;
    Place wide = out;  // after the column pass
    if (sh > 1 || !dense_out) {
        wide = dense(0, {1, d.c, d.h, d.w * sw});
        if (sw > 1)
            wide.buffer = plan_.add_buffer(BufferKind::Pool, cube_bytes(wide), n.name + " (wide)");
    }
    const size_t first_step = plan_.steps.size();
    if (sh == 1 && sw == 1) {
        done_[id] = true;
        if (Status s = copy(id, in, out); !s) return s;
        return computed(id);
    }
    if (sw > 1) {
        // Rows of the input must follow each other to be read as one column.
        Place src = in;
        if (in.line != uint64_t(d.w) * atom) {
            src = dense(0, d);
            src.buffer = plan_.add_buffer(BufferKind::Pool, cube_bytes(src), n.name + " (dense)");
            if (Status s = copy(in_id, in, src); !s) return s;
        }
        src.dims = {1, d.c, d.h * d.w, 1};
        src.line = atom;
        for (uint32_t b = 0; b < sw; ++b) {
            Place dst = wide;
            dst.offset += uint64_t(b) * atom;
            dst.dims = {1, d.c, d.h * d.w, 1};
            dst.line = sw * atom;
            if (Status s = copy(id, src, dst); !s) return s;
        }
    } else {
        wide = in;
    }
    if (sh > 1 || !dense_out)
        for (uint32_t a = 0; a < sh; ++a) {
            Place dst = out;
            dst.offset += uint64_t(a) * out.line;
            dst.dims = wide.dims;
            dst.line = sh * out.line;
            if (Status s = copy(id, wide, dst); !s) return s;
        }
    plan_.steps[first_step].group.note =
        n.name + ": nearest resize " + std::to_string(sh) + "x" + std::to_string(sw) + " as " +
        std::to_string(plan_.steps.size() - first_step) + " SDP copies (columns, then rows)";
    for (size_t i = first_step + 1; i < plan_.steps.size(); ++i)
        plan_.steps[i].group.note = n.name + ": (copy " + std::to_string(i - first_step + 1) + ")";
    done_[id] = true;
    return computed(id);
}

Status Lowering::lower_unmapped(uint32_t id) {
    const Node& n = net_.nodes[id];
    if (n.op == Op::Mish)
        return error(layer(id),
                     ": no SDP lookup-table program computes softplus, so the hardware cannot "
                     "compute mish; it needs the CPU");
    return error(layer(id),
                 ": bilinear resizing clamps at the edges, which no transposed "
                 "convolution of the hardware reproduces exactly; it needs the CPU");
}

}  // namespace nvdla::builder::detail
