// Lowering: the network's layers become hardware operations in fused groups (CONV -> SDP ->
// PDP, SDP -> PDP, PDP, CDP, RUBIK) and EMU softmax steps, with placed tensors, packed
// weights and operands, and int8 scales.
#include "builder/lower_impl.hpp"
#include "builder/recorder.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

#include "nvdla/formats/feature.hpp"
#include "nvdla/formats/pixel.hpp"
#include "nvdla/formats/weights.hpp"

namespace nvdla::builder::detail {

// ---- Plan helpers ----

uint32_t Plan::add_buffer(BufferKind kind, uint64_t size, const std::string& what, uint32_t bind) {
    Buffer b;
    b.kind = kind;
    b.size = size;
    b.what = what;
    b.bind = bind;
    buffers.push_back(b);
    return static_cast<uint32_t>(buffers.size() - 1);
}

uint64_t Plan::add_const(std::span<const std::byte> bytes) {
    const uint64_t offset = (consts.size() + 255) / 256 * 256;
    consts.resize(offset + bytes.size());
    std::copy(bytes.begin(), bytes.end(), consts.begin() + static_cast<ptrdiff_t>(offset));
    buffers[kConstBuffer].size = consts.size();
    return offset;
}

nvdla_dla_data_cube cube_of(const Place& p, uint64_t size) {
    nvdla_dla_data_cube c;
    std::memset(&c, 0, sizeof c);
    c.type = NVDLA_DLA_MEM_MC;
    c.address = static_cast<int16_t>(p.buffer);
    c.offset = static_cast<uint32_t>(p.offset);
    c.size = static_cast<uint32_t>(size);
    c.width = static_cast<uint16_t>(p.dims.w);
    c.height = static_cast<uint16_t>(p.dims.h);
    c.channel = static_cast<uint16_t>(p.dims.c);
    c.line_stride = p.line;
    c.surf_stride = p.surface;
    return c;
}

nvdla_dla_data_cube hw_cube(Dims4 d) {
    nvdla_dla_data_cube c;
    std::memset(&c, 0, sizeof c);
    c.type = NVDLA_DLA_MEM_HW;
    c.address = -1;
    c.width = static_cast<uint16_t>(d.w);
    c.height = static_cast<uint16_t>(d.h);
    c.channel = static_cast<uint16_t>(d.c);
    return c;
}

nvdla_dla_data_cube no_cube() {
    nvdla_dla_data_cube c;
    std::memset(&c, 0, sizeof c);
    c.type = NVDLA_DLA_MEM_MC;
    c.address = -1;
    return c;
}

// ---- Lowering ----

Lowering::Lowering(const Network::Impl& net, const BuildOptions& options, const HwConfig& cfg,
                   const Calibration::Impl* cal)
    : net_(net), cal_(cal) {
    t_.cfg = &cfg;
    t_.precision = options.precision;
    t_.options = &options;
    plan_.add_buffer(BufferKind::Const, 0, "weights");
}

std::string Lowering::layer(uint32_t id) const {
    return net_.describe(id);
}

uint64_t Lowering::cube_bytes(const Place& p) const {
    const uint32_t surfaces = (p.dims.c + t_.lanes() - 1) / t_.lanes();
    return uint64_t(surfaces - 1) * p.surface + uint64_t(p.dims.h - 1) * p.line +
           uint64_t(p.dims.w) * t_.cfg->atom_bytes;
}

Place Lowering::dense(uint32_t buffer, Dims4 d) const {
    Place p;
    p.buffer = buffer;
    p.dims = d;
    p.line = d.w * t_.cfg->atom_bytes;
    p.surface = d.h * p.line;
    return p;
}

Place& Lowering::home(uint32_t id) {
    const uint32_t r = root(id);
    if (!home_[r].valid()) {
        const Dims4 d = net_.nodes[r].dims;
        Place p = dense(0, d);
        p.buffer = plan_.add_buffer(BufferKind::Pool, cube_bytes(p), net_.nodes[r].name);
        home_[r] = p;
    }
    return home_[r];
}

Place Lowering::sub_place(const Place& p, uint32_t c0, uint32_t channels, uint32_t row0,
                          uint32_t rows) const {
    Place q = p;
    q.offset += uint64_t(c0 / t_.lanes()) * p.surface + uint64_t(row0) * p.line;
    q.dims.c = channels;
    q.dims.h = rows;
    return q;
}

double Lowering::scale(uint32_t id) const {
    return t_.int8() ? scale_[root(id)] : 1.0;
}

// The consumers, aliases, outputs and homes of every tensor.
Status Lowering::analyse() {
    const size_t n = net_.nodes.size();
    alias_.resize(n);
    cons_.assign(n, {});
    out_index_.assign(n, -1);
    home_.assign(n, Place{});
    done_.assign(n, false);
    scale_.assign(n, 1.0);
    image_.assign(n, std::nullopt);
    summed_.assign(n, false);
    for (uint32_t id = 0; id < n; ++id) {
        alias_[id] = id;
        const Node& node = net_.nodes[id];
        if (node.op == Op::Flatten) {
            const uint32_t in = root(node.inputs[0]);
            const Dims4 d = net_.nodes[in].dims;
            if (d.h == 1 && d.w == 1) alias_[id] = in;
        }
    }
    for (uint32_t id = 0; id < n; ++id) {
        const Node& node = net_.nodes[id];
        if (alias_[id] != id) continue;
        for (uint32_t in : node.inputs) cons_[root(in)].push_back(id);
        const Dims4 d = node.dims;
        if (node.op != Op::Flatten && (d.c > 8192 || d.h > 8192 || d.w > 8192))
            return error(layer(id), ": its ", d.c, "x", d.h, "x", d.w,
                         " output is beyond the 8192 channels, lines and pixels a cube can have");
    }
    // A flatten that is not a free view: only fully connected layers may read it.
    for (uint32_t id = 0; id < n; ++id) {
        const Node& node = net_.nodes[id];
        if (node.op != Op::Flatten || alias_[id] != id) continue;
        if (t_.options->cpu_fallback && runs_on_cpu(id)) {
            if (node.dims.c > 8192)
                return error(layer(id), ": its ", node.dims.c,
                             " values are beyond the 8192 channels a cube can have");
            continue;  // a CPU reshape
        }
        for (uint32_t c : cons_[id])
            if (net_.nodes[c].op != Op::FullyConnected)
                return error(layer(id), ": its ", net_.nodes[root(node.inputs[0])].dims.h, "x",
                             net_.nodes[root(node.inputs[0])].dims.w,
                             " input can only be flattened for fully connected layers, but ",
                             layer(c), " reads it");
        for (size_t o = 0; o < net_.outputs.size(); ++o)
            if (net_.outputs[o].tensor == id)
                return error(layer(id), ": a flattened ", net_.nodes[root(node.inputs[0])].dims.h,
                             "x", net_.nodes[root(node.inputs[0])].dims.w,
                             " tensor cannot be an output (the hardware keeps it as a cube)");
    }
    for (size_t o = 0; o < net_.outputs.size(); ++o) {
        const uint32_t r = root(net_.outputs[o].tensor);
        if (out_index_[r] >= 0)
            return error("outputs '", net_.outputs[size_t(out_index_[r])].name, "' and '",
                         net_.outputs[o].name, "' are the same tensor");
        out_index_[r] = static_cast<int>(o);
    }
    return Status();
}

// int8 scales: tensors that share their bytes or their values' scale (pooling keeps the
// input's, concat puts its inputs in one cube, flatten is a view) get one scale, the largest
// range of the group over 127.
Result<std::vector<double>> int8_scales(const Network::Impl& net, const Calibration::Impl* cal) {
    const size_t n = net.nodes.size();
    std::vector<uint32_t> parent(n);
    std::iota(parent.begin(), parent.end(), 0u);
    auto find = [&](uint32_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
    };
    auto unite = [&](uint32_t a, uint32_t b) { parent[find(a)] = find(b); };
    for (uint32_t id = 0; id < n; ++id) {
        const Node& node = net.nodes[id];
        if (node.op == Op::Pooling || node.op == Op::Flatten || node.shares_input_scale)
            unite(id, node.inputs[0]);
        if (node.op == Op::Concat)
            for (uint32_t in : node.inputs) unite(id, in);
    }
    std::vector<float> own(n, 0.0f);  // each tensor's range (inner nodes: derived)
    for (uint32_t id = 0; id < n; ++id) {
        const Node& node = net.nodes[id];
        float r = 0;
        if (cal && id < cal->range.size()) r = cal->range[id];
        if (!(r > 0) && !node.inputs.empty() && (node.range_gain > 0 || node.range_offset > 0))
            r = node.range_gain * own[node.inputs[0]] + node.range_offset;
        if (!(r > 0) && cal && cal->samples > 0 && id < cal->range.size()) r = 1e-3f;
        own[id] = r;
    }
    std::vector<float> range(n, 0.0f);
    for (uint32_t id = 0; id < n; ++id) {
        // A node sharing its input's scale does not widen it (a pad's "-infinity" value).
        const Node& node = net.nodes[id];
        if (node.shares_input_scale && own[node.inputs[0]] > 0) continue;
        range[find(id)] = std::max(range[find(id)], own[id]);
    }
    for (uint32_t id = 0; id < n; ++id)
        if (!(own[id] > 0) && !(net.nodes[id].shares_input_scale && range[find(id)] > 0))
            return error(net.describe(id),
                         ": the calibration has no range for its output; int8 needs "
                         "one for every tensor (Calibration::add_sample or set_range)");
    std::vector<double> scales(n);
    for (uint32_t id = 0; id < n; ++id) scales[id] = double(range[find(id)]) / 127.0;
    return scales;
}

Status Lowering::assign_scales() {
    if (!t_.int8()) return Status();
    Result<std::vector<double>> scales = int8_scales(net_, cal_);
    if (!scales) return scales.status();
    scale_ = std::move(scales).value();
    return Status();
}

// Concats place their inputs at channel offsets of one cube (the outer concat first, so
// nested ones become views of it); inputs that already live elsewhere are copied in.
Status Lowering::place_concats() {
    out_place_.resize(net_.outputs.size());
    for (uint32_t i = 0; i < net_.outputs.size(); ++i) {
        const uint32_t r = root(net_.outputs[i].tensor);
        Place p = dense(0, net_.nodes[r].dims);
        p.buffer = plan_.add_buffer(BufferKind::Output, cube_bytes(p), net_.outputs[i].name, i);
        out_place_[i] = p;
        if (net_.nodes[r].op == Op::Input) {
            // The input itself is an output: copied.
            if (image_[r])
                return error("output '", net_.outputs[i].name, "' is the image input '",
                             net_.nodes[r].name, "', which the SDP cannot copy");
            copies_.push_back({r, p});
        } else {
            home_[r] = p;
        }
    }
    for (uint32_t id = static_cast<uint32_t>(net_.nodes.size()); id-- > 0;) {
        const Node& node = net_.nodes[id];
        if (node.op != Op::Concat) continue;
        // Inputs that would not start on an atom: the whole concat is made by convolutions.
        uint32_t offset = 0;
        bool aligned = true;
        for (uint32_t in : node.inputs) {
            aligned = aligned && offset % t_.lanes() == 0;
            offset += net_.nodes[root(in)].dims.c;
        }
        if (!aligned) {
            summed_[id] = true;
            continue;
        }
        const Place whole = home(id);
        uint32_t c0 = 0;
        for (uint32_t in : node.inputs) {
            const uint32_t r = root(in);
            const Dims4 d = net_.nodes[r].dims;
            if (c0 % t_.lanes() != 0)
                return error(layer(id), ": input '", net_.nodes[r].name,
                             "' would start at channel ", c0, ", which is not a multiple of the ",
                             t_.lanes(), " channels of a ", to_string(t_.precision), " atom on ",
                             t_.cfg->name, "; the hardware can only concatenate whole atoms");
            const Place slot = sub_place(whole, c0, d.c, 0, d.h);
            if (home_[r].valid() || net_.nodes[r].op == Op::Input)
                copies_.push_back({r, slot});
            else
                home_[r] = slot;
            c0 += d.c;
        }
    }
    return Status();
}

void Lowering::add_step(Group g) {
    Step s;
    s.group = std::move(g);
    plan_.steps.push_back(std::move(s));
}

// Marks a tensor computed and runs the copies waiting for it.
Status Lowering::computed(uint32_t id) {
    const uint32_t r = root(id);
    done_[r] = true;
    for (const auto& [src, dst] : copies_)
        if (src == r)
            if (Status s = copy(r, home(r), dst); !s) return s;
    return Status();
}

// An SDP that copies (and for int8 requantizes) a cube.
Status Lowering::copy(uint32_t id, const Place& from, const Place& to) {
    SdpSource src;
    src.in_scale = scale(id);
    src.scale = scale(id);
    src.channels = from.dims.c;
    SdpProgram prog(t_, src);
    Group g;
    HwOp op;
    SdpProgram::Piece pc;
    pc.channels = from.dims.c;
    pc.src = cube_of(from, cube_bytes(from));
    pc.dst = cube_of(to, cube_bytes(to));
    if (Status s = prog.emit(plan_, pc, scale(id), op); !s) return s.context(layer(id));
    g.ops.push_back(op);
    g.note = net_.nodes[id].name + ": SDP copy";
    add_step(std::move(g));
    return Status();
}

// The next layer that can join an SDP chain ending at `cur`: cur's only consumer, when cur is
// neither an output nor read by anything else.
int Lowering::next_in_chain(uint32_t cur) const {
    if (out_index_[cur] >= 0 || cons_[cur].size() != 1) return -1;
    const uint32_t c = cons_[cur][0];
    const Node& n = net_.nodes[c];
    if (runs_on_cpu(c)) return -1;
    switch (n.op) {
        case Op::Affine:
        case Op::Relu:
        case Op::PRelu:
        case Op::Sigmoid:
        case Op::Clip:
        case Op::Tanh: return static_cast<int>(c);
        case Op::Eltwise: {
            const uint32_t a = root(n.inputs[0]), b = root(n.inputs[1]);
            const uint32_t other = a == cur ? b : a;
            if (other == cur || !done_[other] || n.eltwise == EltwiseOp::Div) return -1;
            // The chain streams the full-size input; the other one is the operand.
            if (net_.nodes[cur].dims != n.dims || !operand_form(c, other)) return -1;
            return static_cast<int>(c);
        }
        default: return -1;
    }
}

ChainElem Lowering::chain_elem(uint32_t id, uint32_t from) {
    const Node& n = net_.nodes[id];
    ChainElem e;
    e.op = n.op;
    e.node = id;
    e.scale = &n.scale;
    e.shift = &n.shift;
    e.eltwise = n.eltwise;
    e.out_scale = scale(id);
    e.clip_min = n.clip_min;
    e.clip_max = n.clip_max;
    if (n.op == Op::Eltwise) {
        const uint32_t a = root(n.inputs[0]), b = root(n.inputs[1]);
        const uint32_t other = a == from ? b : a;
        e.operand = home(other);
        e.operand_scale = scale(other);
        e.per_channel = net_.nodes[other].dims != n.dims;
    }
    return e;
}

// Extends prog with the layers after `cur` that it can take; returns the last one fused.
uint32_t Lowering::grow_chain(SdpProgram& prog, uint32_t cur, bool allow_eltwise) {
    for (;;) {
        const int next = next_in_chain(cur);
        if (next < 0) return cur;
        const uint32_t nx = static_cast<uint32_t>(next);
        if (!allow_eltwise && net_.nodes[nx].op == Op::Eltwise) return cur;
        if (!prog.add(chain_elem(nx, cur))) return cur;
        done_[nx] = true;
        cur = nx;
    }
}

void Lowering::write_for_clip(uint32_t last) {
    const int next = next_in_chain(last);
    if (!t_.int8() || next < 0 || net_.nodes[size_t(next)].op != Op::Clip) return;
    const Node& n = net_.nodes[last];
    // Only a tensor with a scale of its own (no pooling, flatten, concat or view shares it).
    if (root(last) != last || n.op == Op::Input || n.op == Op::Pooling || n.op == Op::Flatten ||
        n.op == Op::Concat || n.shares_input_scale)
        return;
    scale_[last] = std::min(scale_[last], scale(static_cast<uint32_t>(next)));
}

uint32_t Lowering::chain_reach(SdpProgram prog, uint32_t id, uint32_t source) {
    if (!prog.add(chain_elem(id, source))) return 0;
    uint32_t layers = 1;
    for (uint32_t cur = id;; ++layers) {
        const int next = next_in_chain(cur);
        if (next < 0 || !prog.add(chain_elem(static_cast<uint32_t>(next), cur))) return layers;
        cur = static_cast<uint32_t>(next);
    }
}

// ---- PDP ----

uint32_t Lowering::pdp_max_width(const PoolingDesc& p) const {
    static const uint32_t overlap[9] = {1, 1, 2, 4, 4, 8, 8, 8, 8};
    const uint32_t lines = std::min<uint32_t>(8, (p.kernel_h + p.stride_h - 1) / p.stride_h);
    const uint32_t kpg = t_.int8() ? t_.cfg->mac_atomic_k : t_.cfg->mac_atomic_k / 2;
    const uint32_t bits = t_.int8() ? 14 : 28;
    return std::max<uint32_t>(1, (7 * 1024 * 8) / (overlap[lines] * kpg * bits));
}

Status Lowering::check_pool(uint32_t id, const PoolingDesc* desc) const {
    const PoolingDesc& p = desc ? *desc : net_.nodes[id].pool;
    if (p.kernel_w > 8 || p.kernel_h > 8)
        return error(layer(id), ": the ", p.kernel_h, "x", p.kernel_w,
                     " window is larger than the 8x8 PDP maximum");
    if (p.stride_w > 16 || p.stride_h > 16)
        return error(layer(id), ": stride ", p.stride_h, "x", p.stride_w,
                     " is larger than the PDP's 16");
    if (p.pad_left > 7 || p.pad_right > 7 || p.pad_top > 7 || p.pad_bottom > 7)
        return error(layer(id), ": PDP pads at most 7 on each side");
    if (p.type == PoolingType::Average && !p.count_include_pad &&
        (p.pad_left || p.pad_right || p.pad_top || p.pad_bottom))
        return error(layer(id),
                     ": average pooling that leaves the padding out of the divisor is not what "
                     "the PDP computes (it divides by the whole window); use count_include_pad");
    return Status();
}

// One PDP operation pooling src (memory or the SDP's flying output) into dst over output
// columns [x0, x1) (the whole width for flying input).
HwOp Lowering::pdp_op(const PoolingDesc& p, const nvdla_dla_data_cube& src,
                      const nvdla_dla_data_cube& dst, uint32_t pad_left, uint32_t pad_right) const {
    HwOp hw;
    hw.type = NVDLA_DLA_OP_PDP;
    std::memset(&hw.op, 0, sizeof hw.op);
    std::memset(&hw.surf, 0, sizeof hw.surf);
    nvdla_dla_pdp_op_desc& op = hw.op.pdp_op;
    op.partial_in_width_first = src.width;
    op.partial_width_first = dst.width;
    op.split_num = 1;
    op.pool_mode = p.type == PoolingType::Max ? NVDLA_DLA_POOL_MAX : NVDLA_DLA_POOL_AVERAGE;
    op.pool_width = static_cast<uint8_t>(p.kernel_w - 1);
    op.pool_height = static_cast<uint8_t>(p.kernel_h - 1);
    op.stride_x = static_cast<uint8_t>(p.stride_w);
    op.stride_y = static_cast<uint8_t>(p.stride_h);
    op.pad_left = static_cast<uint8_t>(pad_left);
    op.pad_right = static_cast<uint8_t>(pad_right);
    op.pad_top = static_cast<uint8_t>(p.pad_top);
    op.pad_bottom = static_cast<uint8_t>(p.pad_bottom);
    op.precision = t_.int8() ? NVDLA_DLA_PRECISION_INT8 : NVDLA_DLA_PRECISION_FP16;
    hw.surf.pdp_surface.src_data = src;
    hw.surf.pdp_surface.dst_data = dst;
    return hw;
}

std::string pool_text(const PoolingDesc& p) {
    std::ostringstream o;
    o << (p.type == PoolingType::Max ? "max " : "average ") << p.kernel_h << "x" << p.kernel_w;
    if (p.stride_h != 1 || p.stride_w != 1) o << "/" << p.stride_h << "x" << p.stride_w;
    return o.str();
}

// PDP operations pooling `in` into `out` from memory: one per group of output columns the PDP
// can hold.
void Lowering::pool_steps(const PoolingDesc& p, const Place& in, const Place& out,
                          const std::string& name) {
    const uint32_t max_w = pdp_max_width(p);
    const uint32_t ow = out.dims.w;
    const uint32_t iw = in.dims.w;
    for (uint32_t x0 = 0; x0 < ow; x0 += max_w) {
        const uint32_t x1 = std::min(ow, x0 + max_w);
        const int64_t first = int64_t(x0) * p.stride_w - p.pad_left;
        const int64_t last = int64_t(x1 - 1) * p.stride_w - p.pad_left + p.kernel_w - 1;
        const uint32_t c0 = static_cast<uint32_t>(std::max<int64_t>(0, first));
        const uint32_t c1 = static_cast<uint32_t>(std::min<int64_t>(iw - 1, last));
        Place src = in;
        src.offset += uint64_t(c0) * t_.cfg->atom_bytes;
        src.dims.w = c1 - c0 + 1;
        Place dst = out;
        dst.offset += uint64_t(x0) * t_.cfg->atom_bytes;
        dst.dims.w = x1 - x0;
        const uint32_t pl = static_cast<uint32_t>(std::max<int64_t>(0, -first));
        const uint32_t pr = static_cast<uint32_t>(std::max<int64_t>(0, last - (iw - 1)));
        Group g;
        g.ops.push_back(
            pdp_op(p, cube_of(src, cube_bytes(src)), cube_of(dst, cube_bytes(dst)), pl, pr));
        g.note =
            name + ": PDP " + pool_text(p) +
            (ow > max_w ? " (columns " + std::to_string(x0) + "-" + std::to_string(x1 - 1) + ")"
                        : "");
        add_step(std::move(g));
    }
}

namespace {

// k = a * b with both at most 8 (a the larger), or {0, 0}.
std::pair<uint32_t, uint32_t> two_factors(uint32_t k) {
    for (uint32_t a = 8; a >= 2; --a)
        if (k % a == 0 && k / a <= 8) return {a, k / a};
    return {0, 0};
}

}  // namespace

// A pooling layer from memory. Windows beyond the PDP's 8x8 that tile the input (stride =
// window, no padding on that axis) run as two PDP passes; other large average windows as a
// depthwise convolution of 1/(kh*kw).
Status Lowering::lower_pool(uint32_t id) {
    const Node& n = net_.nodes[id];
    PoolingDesc p = n.pool;
    uint32_t in_id = n.inputs[0];
    if (const int pad = folded_pad(id); pad >= 0) {
        const Node& pn = net_.nodes[size_t(pad)];
        in_id = pn.inputs[0];
        p.pad_top += pn.pads[0];
        p.pad_left += pn.pads[1];
        p.pad_bottom += pn.pads[2];
        p.pad_right += pn.pads[3];
        p.count_include_pad = true;  // explicit zeros are elements of the window
    }
    const Place in = home(in_id);
    if (p.kernel_w <= 8 && p.kernel_h <= 8) {
        if (Status s = check_pool(id, &p); !s) return s;
        pool_steps(p, in, home(id), n.name);
        return computed(id);
    }
    auto axis_split = [](uint32_t k, uint32_t stride, uint32_t pad_a, uint32_t pad_b,
                         std::pair<uint32_t, uint32_t>& f) {
        if (k <= 8) {
            f = {k, 1};
            return true;
        }
        if (stride != k || pad_a || pad_b) return false;
        f = two_factors(k);
        return f.first != 0;
    };
    std::pair<uint32_t, uint32_t> fh, fw;
    if (axis_split(p.kernel_h, p.stride_h, p.pad_top, p.pad_bottom, fh) &&
        axis_split(p.kernel_w, p.stride_w, p.pad_left, p.pad_right, fw)) {
        PoolingDesc a = p, b = p;
        a.kernel_h = fh.first;
        a.kernel_w = fw.first;
        if (p.kernel_h > 8) a.stride_h = fh.first;
        if (p.kernel_w > 8) a.stride_w = fw.first;
        b.kernel_h = fh.second;
        b.kernel_w = fw.second;
        b.stride_h = p.kernel_h > 8 ? fh.second : 1;
        b.stride_w = p.kernel_w > 8 ? fw.second : 1;
        b.pad_top = b.pad_bottom = b.pad_left = b.pad_right = 0;
        if (p.kernel_h <= 8) b.stride_h = 1;
        if (p.kernel_w <= 8) b.stride_w = 1;
        const Dims4 mid_dims{
            1, in.dims.c,
            p.kernel_h > 8 ? in.dims.h / fh.first
                           : (in.dims.h + p.pad_top + p.pad_bottom - p.kernel_h) / p.stride_h + 1,
            p.kernel_w > 8 ? in.dims.w / fw.first
                           : (in.dims.w + p.pad_left + p.pad_right - p.kernel_w) / p.stride_w + 1};
        Place mid = dense(0, mid_dims);
        mid.buffer = plan_.add_buffer(BufferKind::Pool, cube_bytes(mid), n.name + " (first pass)");
        if (a.type == PoolingType::Average && !a.count_include_pad &&
            (a.pad_left || a.pad_right || a.pad_top || a.pad_bottom))
            return check_pool(id);
        pool_steps(a, in, mid, n.name);
        pool_steps(b, mid, home(id), n.name);
        return computed(id);
    }
    if (p.type != PoolingType::Average || p.kernel_h > 32 || p.kernel_w > 32 ||
        (!p.count_include_pad && (p.pad_left || p.pad_right || p.pad_top || p.pad_bottom)))
        return error(layer(id), ": the ", p.kernel_h, "x", p.kernel_w,
                     " window is larger than the 8x8 PDP maximum and does not split into two "
                     "passes (that needs stride = window, no padding and a size that is a "
                     "product of two factors up to 8)");
    // Average as a depthwise convolution.
    ConvJob job;
    job.node = id;
    job.name = n.name;
    job.in = in;
    job.kernels = in.dims.c;
    job.groups = in.dims.c;
    job.channels = 1;
    job.r = p.kernel_h;
    job.s = p.kernel_w;
    job.stride_x = p.stride_w;
    job.stride_y = p.stride_h;
    job.pad_l = p.pad_left;
    job.pad_r = p.pad_right;
    job.pad_t = p.pad_top;
    job.pad_b = p.pad_bottom;
    job.out_w = n.dims.w;
    job.out_h = n.dims.h;
    job.weights.assign(uint64_t(in.dims.c) * p.kernel_h * p.kernel_w,
                       1.0f / float(p.kernel_h * p.kernel_w));
    job.what = "average pooling as depthwise ";
    SdpSource src;
    src.flying = true;
    src.channels = in.dims.c;
    src.scale = scale(id);
    job.weight_scale = weight_scales(job.weights, job.kernels);
    if (t_.int8()) {
        src.units.resize(job.kernels);
        for (uint32_t k = 0; k < job.kernels; ++k)
            src.units[k] = scale(n.inputs[0]) * job.weight_scale[k];
    }
    SdpProgram prog(t_, src);
    job.prog = &prog;
    job.out_scale = scale(id);
    bool fused = false;
    if (Status s = conv_job(job, fused, id); !s) return s;
    return computed(id);
}

// ---- CDP ----

Status Lowering::lower_lrn(uint32_t id) {
    const Node& n = net_.nodes[id];
    if (!nvdla_hw_has(t_.cfg, NVDLA_FEATURE_CDP))
        return error(layer(id), ": ", t_.cfg->name, " has no CDP for LRN");
    const Place in = home(n.inputs[0]);
    const Place out = home(id);
    precision::LrnParameters lrn;
    lrn.k = n.lrn.k;
    lrn.alpha = n.lrn.alpha;
    lrn.beta = n.lrn.beta;
    lrn.local_size = n.lrn.local_size;
    double range = 0;
    if (t_.int8())
        range = scale(n.inputs[0]) * 127.0;
    else if (cal_ && n.inputs[0] < cal_->range.size() && cal_->range[root(n.inputs[0])] > 0)
        range = cal_->range[root(n.inputs[0])];
    else
        range = 8.0;  // fp16 without calibration: inputs assumed within +-8
    const double hi = std::max(1e-6, double(n.lrn.local_size) * range * range);
    Result<precision::BuiltLut> built =
        precision::build_lrn_lut(lrn, 0.0, hi, t_.int8() ? Precision::Int8 : Precision::Fp16);
    if (!built) return built.status().context(layer(id));
    HwOp hw;
    hw.type = NVDLA_DLA_OP_CDP;
    std::memset(&hw.op, 0, sizeof hw.op);
    std::memset(&hw.surf, 0, sizeof hw.surf);
    nvdla_dla_cdp_op_desc& op = hw.op.cdp_op;
    op.in_precision = op.out_precision =
        t_.int8() ? NVDLA_DLA_PRECISION_INT8 : NVDLA_DLA_PRECISION_FP16;
    op.local_size = static_cast<uint8_t>(n.lrn.local_size);
    op.in_cvt.scale = 1;
    op.out_cvt.scale = 1;
    if (t_.int8()) {
        // The input convertor makes x * 2^M (9 bits), the multiplier f * OS * x * 2^M.
        const Fixed in_f =
            fixed_one(scale(n.inputs[0]) * std::ldexp(1.0, built->lrn_data_shift), 32767, 31);
        op.in_cvt.scale = static_cast<int16_t>(in_f.m);
        op.in_cvt.truncate = static_cast<uint8_t>(in_f.shift);
        op.in_cvt.enable = 1;
        const Fixed out_f = fixed_one(
            1.0 / (built->output_scale * std::ldexp(1.0, built->lrn_data_shift) * scale(id)), 32767,
            63);
        op.out_cvt.scale = static_cast<int16_t>(out_f.m);
        op.out_cvt.truncate = static_cast<uint8_t>(out_f.shift);
        op.out_cvt.enable = 1;
    }
    plan_.luts.push_back(to_lut_param(built->program, !t_.int8()));
    hw.lut = static_cast<int>(plan_.luts.size() - 1);
    hw.surf.cdp_surface.src_data = cube_of(in, cube_bytes(in));
    hw.surf.cdp_surface.dst_data = cube_of(out, cube_bytes(out));
    Group g;
    g.ops.push_back(hw);
    g.note = n.name + ": CDP LRN " + std::to_string(n.lrn.local_size) + " channels";
    add_step(std::move(g));
    return computed(id);
}

// ---- EMU softmax ----

Status Lowering::lower_softmax(uint32_t id) {
    const Node& n = net_.nodes[id];
    const uint32_t atom = t_.cfg->atom_bytes;
    if (atom != 32 && !(atom == 8 && t_.int8()))
        return error(layer(id), ": the CPU softmax reads ", to_string(t_.precision),
                     " cubes with 32-byte atoms", t_.int8() ? " or 8-byte atoms" : "", ", not the ",
                     atom, "-byte atoms of ", t_.cfg->name);
    Step s;
    s.cpu_task = true;
    s.soft.src = home(n.inputs[0]);
    s.soft.dst = home(id);
    s.soft.precision = t_.precision;
    s.soft.input_scale = static_cast<float>(scale(n.inputs[0]));
    s.soft.output_scale = static_cast<float>(scale(id));
    const std::string dims =
        std::to_string(n.dims.c) + "x" + std::to_string(n.dims.h) + "x" + std::to_string(n.dims.w);
    s.group.note = n.name + ": CPU softmax axis 1 " + dims + " -> " + dims + " " +
                   std::string(to_string(t_.precision));
    plan_.steps.push_back(std::move(s));
    return computed(id);
}

// ---- SDP from memory ----

Status Lowering::lower_sdp(uint32_t id) {
    if (runs_on_cpu(id)) return lower_cpu(id);
    const Node& n = net_.nodes[id];
    const uint32_t source = root(n.inputs[0]);
    if (n.op == Op::Eltwise) {
        if (n.eltwise == EltwiseOp::Div)
            return error(layer(id),
                         ": the hardware cannot divide by a computed tensor (the SDP multiplies "
                         "and adds); division runs on the CPU");
        if (net_.nodes[source].dims != n.dims || !operand_form(id, root(n.inputs[1])))
            return error(layer(id),
                         ": the SDP reads an element-wise operand per element or per "
                         "channel, not of dims ",
                         dims_text(net_.nodes[root(n.inputs[1])].dims), " against ",
                         dims_text(n.dims));
    }
    SdpSource src;
    src.in_scale = scale(source);
    src.scale = scale(source);
    src.channels = n.dims.c;
    SdpProgram prog(t_, src);
    // int8: an affine's shift in fine units takes a stage for the rescaling MUL in front of
    // it; only where the chain still fuses as many layers (a hard sigmoid's clip would not).
    if (t_.int8()) {
        SdpProgram coarse(t_, src);
        coarse.set_fine_shifts(false);
        prog.set_fine_shifts(chain_reach(prog, id, source) >= chain_reach(coarse, id, source));
    }
    // (Sigmoid and tanh without the SDP lookup table are CPU operations: runs_on_cpu.)
    if (!prog.add(chain_elem(id, source)))
        return error(layer(id), ": the SDP cannot compute it on ", t_.cfg->name);
    done_[id] = true;
    const uint32_t last = grow_chain(prog, id, true);
    write_for_clip(last);
    return finish_sdp(prog, home(source), last, n.name);
}

// Writes an SDP program over `in` into the home of `last`, fusing a following pooling layer
// into a flying PDP when it can.
Status Lowering::finish_sdp(const SdpProgram& prog, const Place& in, uint32_t last,
                            const std::string& name) {
    const int pool = fusable_pool(last, in.dims.w);
    const uint32_t result = pool >= 0 ? static_cast<uint32_t>(pool) : last;
    Group g;
    HwOp op;
    SdpProgram::Piece pc;
    pc.channels = in.dims.c;
    pc.src = cube_of(in, cube_bytes(in));
    const Place out = home(result);
    pc.dst = pool >= 0 ? hw_cube(in.dims) : cube_of(out, cube_bytes(out));
    if (Status s = prog.emit(plan_, pc, scale(last), op); !s) return s.context(layer(last));
    g.ops.push_back(op);
    g.note = name + ": SDP " + prog.describe();
    if (pool >= 0) {
        const PoolingDesc& p = net_.nodes[size_t(pool)].pool;
        g.ops.push_back(
            pdp_op(p, hw_cube(in.dims), cube_of(out, cube_bytes(out)), p.pad_left, p.pad_right));
        g.note += " -> PDP " + pool_text(p) + " (" + net_.nodes[size_t(pool)].name + ")";
        done_[size_t(pool)] = true;
    }
    add_step(std::move(g));
    if (Status s = computed(last); !s) return s;
    if (pool >= 0) return computed(static_cast<uint32_t>(pool));
    return Status();
}

// The pooling layer that can run on the fly behind the SDP writing `cur`, or -1.
int Lowering::fusable_pool(uint32_t cur, uint32_t in_width) const {
    if (!t_.options->fuse_pooling || out_index_[cur] >= 0 || cons_[cur].size() != 1) return -1;
    const uint32_t c = cons_[cur][0];
    const Node& n = net_.nodes[c];
    if (n.op != Op::Pooling || !check_pool(c).ok()) return -1;
    if (n.dims.w > pdp_max_width(n.pool)) return -1;
    (void)in_width;
    return static_cast<int>(c);
}

// ---- dispatch ----

Result<Plan> Lowering::run() {
    if (Status s = analyse(); !s) return s;
    if (Status s = assign_scales(); !s) return s;
    // Inputs live in their bound buffers.
    for (uint32_t i = 0; i < net_.inputs.size(); ++i) {
        const uint32_t id = net_.inputs[i];
        Place p;
        if (Status s = place_input(i, id, p); !s) return s;
        home_[id] = p;
    }
    if (Status s = place_concats(); !s) return s;
    for (uint32_t id : net_.inputs)
        if (Status s = computed(id); !s) return s;

    for (uint32_t id = 0; id < net_.nodes.size(); ++id) {
        if (done_[id] || alias_[id] != id) continue;
        const Node& n = net_.nodes[id];
        Status s;
        switch (n.op) {
            case Op::Input: break;
            case Op::Convolution:
            case Op::FullyConnected: s = lower_conv(id); break;
            case Op::Deconvolution: s = lower_deconv(id); break;
            case Op::Pooling: s = lower_pool(id); break;
            case Op::Lrn: s = lower_lrn(id); break;
            case Op::Affine:
            case Op::Relu:
            case Op::PRelu:
            case Op::Sigmoid:
            case Op::Tanh:
            case Op::Clip:
            case Op::Eltwise: s = lower_sdp(id); break;
            case Op::Pad: s = lower_pad(id); break;
            case Op::Slice: s = lower_slice(id); break;
            case Op::ResizeNearest: s = lower_resize_nearest(id); break;
            case Op::ResizeBilinear: s = lower_resize_bilinear(id); break;
            case Op::Concat: s = summed_[id] ? lower_concat_sum(id) : computed(id); break;
            case Op::Flatten: s = runs_on_cpu(id) ? lower_cpu(id) : computed(id); break;
            case Op::Softmax: s = lower_softmax(id); break;
            case Op::Mish:
            case Op::Cpu: s = lower_cpu(id); break;
        }
        if (!s) return s;
    }
    for (uint32_t id = 0; id < net_.nodes.size(); ++id)
        if (!done_[root(id)]) return error(layer(id), ": internal: the layer was not lowered");
    plan_.inputs = std::move(input_descs_);
    for (uint32_t i = 0; i < net_.outputs.size(); ++i) {
        const uint32_t r = root(net_.outputs[i].tensor);
        const Place& p = out_place_[i];
        TensorDesc d;
        d.name = net_.outputs[i].name;
        d.index = i;
        d.dims = net_.nodes[r].dims;
        d.host_layout = net_.outputs[i].layout;
        d.precision = t_.precision;
        d.pixel_format = t_.cfg->atom_bytes == 8 ? kPixelFormatFeatureX8 : kPixelFormatFeature;
        d.hw = t_.cfg;
        d.atom_bytes = t_.cfg->atom_bytes;
        d.line_stride = p.line;
        d.surface_stride = p.surface;
        d.size_bytes = cube_bytes(p);
        d.scale = static_cast<float>(scale(r));
        plan_.outputs.push_back(d);
    }
    return std::move(plan_);
}

}  // namespace nvdla::builder::detail
