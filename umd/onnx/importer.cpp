// The ONNX importer (include/nvdla/onnx.hpp): ModelProto -> builder::Network, node by node in
// the graph's (topological) order. Constants (initializers, Constant nodes, inputs the caller
// names) are kept as TensorData and folded where an operator only rearranges them; every other
// value is a builder tensor of one batch item.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>

#include "nvdla/onnx.hpp"

namespace nvdla::onnx {

namespace {

static_assert(std::endian::native == std::endian::little, "ONNX raw data is little-endian");

using builder::HostTensor;
using builder::Tensor;

std::string shape_text(const std::vector<int64_t>& shape) {
    std::ostringstream out;
    out << "[";
    for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
    out << "]";
    return out.str();
}

uint64_t product(const std::vector<int64_t>& shape, size_t from = 0) {
    uint64_t n = 1;
    for (size_t i = from; i < shape.size(); ++i) n *= static_cast<uint64_t>(shape[i]);
    return n;
}

// A tensor's values as floats: its raw little-endian bytes when it has them, else the typed
// repeated field.
template <class T, class Typed>
void append_values(const std::string& raw, const Typed& typed, std::vector<float>& out) {
    if (raw.empty()) {
        for (T v : typed) out.push_back(static_cast<float>(v));
        return;
    }
    const size_t n = raw.size() / sizeof(T);
    for (size_t i = 0; i < n; ++i) {
        T v;
        std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
        out.push_back(static_cast<float>(v));
    }
}

Result<TensorData> from_proto(const ::onnx::TensorProto& t) {
    TensorData d;
    d.name = t.name();
    for (int64_t dim : t.dims()) {
        if (dim < 0) return error("tensor '", t.name(), "': negative dimension ", dim);
        d.shape.push_back(dim);
    }
    if (t.has_data_location() && t.data_location() == ::onnx::TensorProto_DataLocation_EXTERNAL)
        return error("tensor '", t.name(), "': external data is not supported");
    if (t.has_segment()) return error("tensor '", t.name(), "': segments are not supported");
    const uint64_t n = product(d.shape);
    if (n > (uint64_t(1) << 31)) return error("tensor '", t.name(), "': too many elements");
    const std::string& raw = t.raw_data();
    switch (t.data_type()) {
        case ::onnx::TensorProto_DataType_FLOAT:
            append_values<float>(raw, t.float_data(), d.values);
            break;
        case ::onnx::TensorProto_DataType_DOUBLE:
            append_values<double>(raw, t.double_data(), d.values);
            break;
        case ::onnx::TensorProto_DataType_INT64:
            append_values<int64_t>(raw, t.int64_data(), d.values);
            break;
        case ::onnx::TensorProto_DataType_INT32:
            append_values<int32_t>(raw, t.int32_data(), d.values);
            break;
        default:
            return error("tensor '", t.name(), "': data type ", t.data_type(),
                         " is not supported (float32, float64, int32, int64 are)");
    }
    if (d.values.size() != n)
        return error("tensor '", t.name(), "' of shape ", shape_text(d.shape), " holds ",
                     d.values.size(), " values instead of ", n);
    return d;
}

// A value of the graph: a constant, or a feature tensor (one batch item) with its ONNX rank.
struct Val {
    bool constant = false;
    TensorData data;  // constant
    Tensor tensor;    // feature
    int rank = 0;     // feature: the ONNX rank (1..4)
};

// Per-item builder dims of an ONNX shape (rank 1..4).
Result<Dims4> item_dims(const std::vector<int64_t>& shape) {
    for (int64_t d : shape)
        if (d <= 0 || d > 0xffffff) return error("dimension ", d, " is not supported");
    auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    switch (shape.size()) {
        case 1: return Dims4{1, u(shape[0]), 1, 1};
        case 2: return Dims4{1, u(shape[1]), 1, 1};
        case 3: return Dims4{1, u(shape[1]), 1, u(shape[2])};
        case 4: return Dims4{1, u(shape[1]), u(shape[2]), u(shape[3])};
        default: return error("tensors of rank ", shape.size(), " are not supported (1 to 4 are)");
    }
}

// The ONNX shape of a feature tensor of `rank` whose item has dims d.
std::vector<int64_t> onnx_shape(Dims4 d, int rank, int64_t batch) {
    switch (rank) {
        case 1: return {d.c};
        case 2: return {batch, d.c};
        case 3: return {batch, d.c, d.w};
        default: return {batch, d.c, d.h, d.w};
    }
}

class Importer {
  public:
    Importer(const ::onnx::ModelProto& proto, const ImportOptions& options)
        : proto_(proto), options_(options) {}

    Result<Model> run();

  private:
    const ::onnx::ModelProto& proto_;
    const ImportOptions& options_;
    Model model_;
    std::map<std::string, Val> values_;
    bool batch_known_ = false;

    // The node being imported, for messages.
    int node_index_ = 0;
    const ::onnx::NodeProto* node_ = nullptr;

    Status fail(const std::string& why) const {
        std::ostringstream out;
        out << "ONNX node " << node_index_ << " '" << node_name() << "' (" << node_->op_type()
            << "): " << why;
        return Status::failure(out.str());
    }
    std::string node_name() const {
        if (!node_->name().empty()) return node_->name();
        return node_->output_size() ? node_->output(0) : std::string();
    }
    Status check_builder() const {
        Status s = model_.network.status();
        if (!s) return fail(s.message());
        return Status();
    }

    // ---- inputs and attributes of the current node ----
    bool has_input(int i) const { return i < node_->input_size() && !node_->input(i).empty(); }
    Result<const Val*> input(int i) const {
        if (!has_input(i)) return fail("input " + std::to_string(i) + " is missing");
        auto it = values_.find(node_->input(i));
        if (it == values_.end()) return fail("input '" + node_->input(i) + "' is not defined");
        return &it->second;
    }
    Result<const Val*> feature(int i) const {
        Result<const Val*> v = input(i);
        if (!v) return v;
        if ((*v)->constant)
            return fail("input '" + node_->input(i) +
                        "' is a constant; this operator needs a feature tensor there");
        return v;
    }
    Result<const TensorData*> constant(int i) const {
        Result<const Val*> v = input(i);
        if (!v) return v.status();
        if (!(*v)->constant)
            return fail("input '" + node_->input(i) +
                        "' must be a constant (an initializer or a Constant node)");
        return &(*v)->data;
    }
    const ::onnx::AttributeProto* attr(const std::string& name) const {
        for (const auto& a : node_->attribute())
            if (a.name() == name) return &a;
        return nullptr;
    }
    int64_t attr_int(const std::string& name, int64_t fallback) const {
        const auto* a = attr(name);
        return a ? a->i() : fallback;
    }
    float attr_float(const std::string& name, float fallback) const {
        const auto* a = attr(name);
        return a ? a->f() : fallback;
    }
    std::string attr_string(const std::string& name, const std::string& fallback) const {
        const auto* a = attr(name);
        return a ? a->s() : fallback;
    }
    std::vector<int64_t> attr_ints(const std::string& name) const {
        const auto* a = attr(name);
        if (!a) return {};
        return {a->ints().begin(), a->ints().end()};
    }
    // Whether output i exists and is used by name (optional outputs may be "").
    bool output_used(int i) const { return i < node_->output_size() && !node_->output(i).empty(); }

    std::string layer_name() const { return node_name(); }
    void define(const std::string& name, Val v) { values_[name] = std::move(v); }
    Status define_feature(Tensor t, int rank) {
        if (Status s = check_builder(); !s) return s;
        Val v;
        v.tensor = t;
        v.rank = rank;
        define(node_->output(0), std::move(v));
        return Status();
    }
    Status define_constant(TensorData d) {
        d.name = node_->output(0);
        Val v;
        v.constant = true;
        v.data = std::move(d);
        define(node_->output(0), std::move(v));
        return Status();
    }
    Dims4 dims(const Val& v) const { return model_.network.dims(v.tensor); }

    Result<int> channel_axis_check(const Val& x, int64_t axis, const std::string& what) const {
        const int rank = x.rank;
        if (axis < -rank || axis >= rank)
            return fail(what + " " + std::to_string(axis) + " is out of range for rank " +
                        std::to_string(rank));
        const int64_t a = axis < 0 ? axis + rank : axis;
        const int64_t channel = rank == 1 ? 0 : 1;
        if (a != channel) {
            if (rank > 1 && a == 0)
                return fail(what + " " + std::to_string(axis) +
                            " is the batch dimension (each batch item runs separately)");
            return fail(what + " " + std::to_string(axis) +
                        " is not the channel axis (only axis 1 is supported)");
        }
        return static_cast<int>(a);
    }

    // Per-channel (or single) values of a constant that broadcasts onto feature x.
    Result<std::vector<float>> per_channel(const TensorData& c, const Val& x,
                                           const std::string& what) const;

    Status import_graph_inputs();
    Status import_node();
    Status import_outputs();

    struct WeightedOperands;
    Status weighted_operands(const char* what, WeightedOperands& op);
    Status conv();
    Status conv_transpose();
    Status pool(bool max, bool global);
    Status batch_norm();
    Status gemm(bool matmul);
    Status softmax();
    Status concat();
    Status binary();
    Status sum();
    Status flatten();
    Status reshape();
    Status clip();
    Status constant_node();
    Status transpose();
    Status squeeze(bool unsqueeze);
};

Result<std::vector<float>> Importer::per_channel(const TensorData& c, const Val& x,
                                                 const std::string& what) const {
    if (c.values.size() == 1) return c.values;
    const uint32_t channels = dims(x).c;
    // Before opset 7, a 1-D PRelu slope is per channel (no Numpy broadcasting yet).
    if (model_.opset < 7 && node_->op_type() == "PRelu" && c.shape.size() == 1 &&
        c.values.size() == channels)
        return c.values;
    // Right-aligned broadcasting: only the channel axis of x may be other than 1.
    const int xr = x.rank;
    const int cr = static_cast<int>(c.shape.size());
    bool ok = cr <= xr;
    for (int i = 0; ok && i < cr; ++i) {
        const int axis = xr - cr + i;
        const int channel = xr == 1 ? 0 : 1;
        if (c.shape[static_cast<size_t>(i)] == 1) continue;
        ok = axis == channel && c.shape[static_cast<size_t>(i)] == channels;
    }
    if (!ok || c.values.size() != channels)
        return fail(what + " of shape " + shape_text(c.shape) +
                    " does not broadcast per channel "
                    "onto a tensor of shape " +
                    shape_text(onnx_shape(dims(x), x.rank, model_.batch)) +
                    " (one value, or one per channel, is supported)");
    return c.values;
}

Status Importer::import_graph_inputs() {
    const auto& g = proto_.graph();
    for (const auto& init : g.initializer()) {
        Result<TensorData> d = from_proto(init);
        if (!d) return Status::failure("ONNX initializer: " + d.message());
        Val v;
        v.constant = true;
        v.data = std::move(d).value();
        values_[init.name()] = std::move(v);
    }
    if (g.sparse_initializer_size())
        return Status::failure("ONNX: sparse initializers are not supported");
    for (const TensorData& c : options_.constants) {
        Val v;
        v.constant = true;
        v.data = c;
        values_[c.name] = std::move(v);
    }
    for (const auto& in : g.input()) {
        auto it = values_.find(in.name());
        if (it != values_.end() && it->second.constant) continue;  // a constant (weights)
        const std::string where = "ONNX graph input '" + in.name() + "'";
        if (!in.type().has_tensor_type())
            return Status::failure(where + ": only tensors are supported");
        const auto& tt = in.type().tensor_type();
        if (tt.elem_type() != ::onnx::TensorProto_DataType_FLOAT)
            return error(where, ": element type ", tt.elem_type(), " is not float32");
        if (!tt.has_shape()) return Status::failure(where + ": the shape is not given");
        std::vector<int64_t> shape;
        for (int i = 0; i < tt.shape().dim_size(); ++i) {
            const auto& d = tt.shape().dim(i);
            if (d.has_dim_value()) {
                shape.push_back(d.dim_value());
            } else if (i == 0 && tt.shape().dim_size() >= 2) {
                shape.push_back(options_.batch);  // a symbolic batch
            } else {
                return error(where, ": dimension ", i, " is symbolic ('", d.dim_param(),
                             "'); only the batch (dimension 0) may be");
            }
        }
        Result<Dims4> d = item_dims(shape);
        if (!d)
            return Status::failure(where + " of shape " + shape_text(shape) + ": " + d.message());
        if (shape.size() >= 2) {
            if (batch_known_ && shape[0] != model_.batch)
                return error(where, ": batch ", shape[0], " differs from the other inputs' ",
                             model_.batch);
            model_.batch = shape[0];
            batch_known_ = true;
        }
        Val v;
        v.tensor = model_.network.input(in.name(), *d);
        v.rank = static_cast<int>(shape.size());
        if (Status s = model_.network.status(); !s)
            return Status::failure(where + ": " + s.message());
        model_.inputs.push_back({in.name(), shape, v.tensor});
        values_[in.name()] = std::move(v);
    }
    if (model_.inputs.empty())
        return Status::failure("ONNX: the graph has no (non-constant) input");
    return Status();
}

Status Importer::import_outputs() {
    for (const auto& out : proto_.graph().output()) {
        auto it = values_.find(out.name());
        if (it == values_.end())
            return Status::failure("ONNX graph output '" + out.name() + "' is never computed");
        if (it->second.constant)
            return Status::failure("ONNX graph output '" + out.name() +
                                   "' is a constant; outputs must be computed from the inputs");
        model_.network.output(it->second.tensor, out.name());
        if (Status s = model_.network.status(); !s)
            return Status::failure("ONNX graph output '" + out.name() + "': " + s.message());
        const Dims4 d = model_.network.dims(it->second.tensor);
        model_.outputs.push_back(
            {out.name(), onnx_shape(d, it->second.rank, model_.batch), it->second.tensor});
    }
    if (model_.outputs.empty()) return Status::failure("ONNX: the graph has no output");
    return Status();
}

// Pads [begin..., end...] of the spatial axes for an auto_pad of SAME_UPPER/SAME_LOWER.
void same_pads(const std::string& mode, const std::vector<int64_t>& in,
               const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
               const std::vector<int64_t>& dilation, std::vector<int64_t>& pads) {
    const size_t n = in.size();
    pads.assign(2 * n, 0);
    for (size_t i = 0; i < n; ++i) {
        const int64_t out = (in[i] + stride[i] - 1) / stride[i];
        const int64_t total =
            std::max<int64_t>(0, (out - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1 - in[i]);
        const int64_t small = total / 2, large = total - small;
        pads[i] = mode == "SAME_UPPER" ? small : large;
        pads[n + i] = mode == "SAME_UPPER" ? large : small;
    }
}

// Spatial extents of x's item as ONNX orders them: {H, W} (rank 4) or {L} (rank 3).
std::vector<int64_t> spatial(Dims4 d, int rank) {
    if (rank == 4) return {d.h, d.w};
    if (rank == 3) return {d.w};
    return {};
}

// Kernel-window attributes of Conv/ConvTranspose/pooling for n spatial axes.
struct Window {
    std::vector<int64_t> kernel, stride, dilation, pads;  // pads: begin..., end...
};

// What Conv and ConvTranspose read alike: X, the constant W and optional constant B, the
// kernel (from W, checked against kernel_shape) and the strides.
struct Importer::WeightedOperands {
    const Val* x = nullptr;
    const TensorData* w = nullptr;
    std::vector<float> bias;
    int rank = 0;
    size_t spatial_axes = 0;
    Window win;
};

Status Importer::weighted_operands(const char* what, WeightedOperands& op) {
    Result<const Val*> x = feature(0);
    if (!x) return x.status();
    Result<const TensorData*> w = constant(1);
    if (!w) return w.status();
    op.x = *x;
    op.w = *w;
    if (has_input(2)) {
        Result<const TensorData*> b = constant(2);
        if (!b) return b.status();
        op.bias = (*b)->values;
    }
    op.rank = op.x->rank;
    if (op.rank != 3 && op.rank != 4)
        return fail(op.rank == 5 ? std::string("3-D ") + what + " are not supported"
                                 : "the input must be [N, C, H, W] or [N, C, L]");
    const auto& ws = op.w->shape;
    if (static_cast<int>(ws.size()) != op.rank)
        return fail("weights of shape " + shape_text(ws) + " do not match the input's rank");
    op.spatial_axes = static_cast<size_t>(op.rank - 2);
    op.win.kernel.assign(ws.begin() + 2, ws.end());
    if (auto k = attr_ints("kernel_shape"); !k.empty() && k != op.win.kernel)
        return fail("kernel_shape " + shape_text(k) + " differs from the weights' " +
                    shape_text(op.win.kernel));
    op.win.stride = attr_ints("strides");
    if (op.win.stride.empty()) op.win.stride.assign(op.spatial_axes, 1);
    return Status();
}

Status Importer::conv() {
    WeightedOperands op;
    if (Status s = weighted_operands("convolutions", op); !s) return s;
    const Val* const x = op.x;
    const TensorData* const w = op.w;
    const std::vector<float>& bias = op.bias;
    const int rank = op.rank;
    const auto& ws = w->shape;
    const size_t n = op.spatial_axes;
    Window& win = op.win;
    win.dilation = attr_ints("dilations");
    if (win.dilation.empty()) win.dilation.assign(n, 1);
    win.pads = attr_ints("pads");
    if (win.pads.empty()) win.pads.assign(2 * n, 0);
    if (win.stride.size() != n || win.dilation.size() != n || win.pads.size() != 2 * n)
        return fail("strides, dilations or pads do not have one value per spatial axis");
    const std::string auto_pad = attr_string("auto_pad", "NOTSET");
    const Dims4 d = dims(*x);
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
        same_pads(auto_pad, spatial(d, rank), win.kernel, win.stride, win.dilation, win.pads);
    else if (auto_pad == "VALID")
        win.pads.assign(2 * n, 0);
    else if (auto_pad != "NOTSET")
        return fail("auto_pad '" + auto_pad + "' is not known");
    for (int64_t v : win.pads)
        if (v < 0) return fail("negative pads are not supported");

    builder::ConvolutionDesc desc;
    desc.out_channels = static_cast<uint32_t>(ws[0]);
    desc.groups = static_cast<uint32_t>(attr_int("group", 1));
    auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    if (rank == 4) {
        desc.kernel_h = u(win.kernel[0]), desc.kernel_w = u(win.kernel[1]);
        desc.stride_h = u(win.stride[0]), desc.stride_w = u(win.stride[1]);
        desc.dilation_h = u(win.dilation[0]), desc.dilation_w = u(win.dilation[1]);
        desc.pad_top = u(win.pads[0]), desc.pad_left = u(win.pads[1]);
        desc.pad_bottom = u(win.pads[2]), desc.pad_right = u(win.pads[3]);
    } else {
        desc.kernel_w = u(win.kernel[0]);
        desc.stride_w = u(win.stride[0]);
        desc.dilation_w = u(win.dilation[0]);
        desc.pad_left = u(win.pads[0]), desc.pad_right = u(win.pads[1]);
    }
    if (desc.groups == 0 || uint64_t(ws[1]) * desc.groups != d.c)
        return fail("weights of shape " + shape_text(ws) + " with group " +
                    std::to_string(desc.groups) + " do not match " + std::to_string(d.c) +
                    " input channels");
    return define_feature(
        model_.network.convolution(x->tensor, desc, w->values, bias, layer_name()), rank);
}

Status Importer::conv_transpose() {
    WeightedOperands op;
    if (Status s = weighted_operands("transposed convolutions", op); !s) return s;
    const Val* const x = op.x;
    const TensorData* const w = op.w;
    const std::vector<float>& bias = op.bias;
    const int rank = op.rank;
    const auto& ws = w->shape;
    const size_t n = op.spatial_axes;
    Window& win = op.win;
    for (int64_t v : attr_ints("dilations"))
        if (v != 1) return fail("dilations are not supported");
    std::vector<int64_t> output_padding = attr_ints("output_padding");
    if (output_padding.empty()) output_padding.assign(n, 0);
    win.pads = attr_ints("pads");
    if (win.pads.empty()) win.pads.assign(2 * n, 0);
    if (win.stride.size() != n || win.pads.size() != 2 * n || output_padding.size() != n)
        return fail("strides, pads or output_padding do not have one value per spatial axis");
    const Dims4 d = dims(*x);
    const std::vector<int64_t> in = spatial(d, rank);
    const std::string auto_pad = attr_string("auto_pad", "NOTSET");
    std::vector<int64_t> output_shape = attr_ints("output_shape");
    if (output_shape.size() > n)  // the whole shape given
        output_shape.erase(output_shape.begin(),
                           output_shape.begin() + static_cast<long>(output_shape.size() - n));
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" || !output_shape.empty()) {
        if (output_shape.empty())
            for (size_t i = 0; i < n; ++i) output_shape.push_back(in[i] * win.stride[i]);
        if (output_shape.size() != n) return fail("output_shape has the wrong number of axes");
        for (size_t i = 0; i < n; ++i) {
            const int64_t total =
                win.stride[i] * (in[i] - 1) + output_padding[i] + win.kernel[i] - output_shape[i];
            if (total < 0)
                return fail("output_shape " + shape_text(output_shape) +
                            " needs output padding, which is not supported");
            // ONNX: SAME_UPPER puts the smaller half first... as its reference does.
            const int64_t small = total / 2, large = total - small;
            const bool lower = auto_pad == "SAME_LOWER";
            win.pads[i] = lower ? large : small;
            win.pads[n + i] = lower ? small : large;
        }
    } else if (auto_pad == "VALID") {
        win.pads.assign(2 * n, 0);
    } else if (auto_pad != "NOTSET") {
        return fail("auto_pad '" + auto_pad + "' is not known");
    }
    // Output padding adds outputs at the end: the end padding crops them back.
    for (size_t i = 0; i < n; ++i) {
        if (output_padding[i] > win.pads[n + i])
            return fail("output_padding " + shape_text(output_padding) +
                        " beyond the end padding is not supported");
        win.pads[n + i] -= output_padding[i];
    }
    for (int64_t v : win.pads)
        if (v < 0) return fail("negative pads are not supported");
    builder::DeconvolutionDesc desc;
    desc.groups = static_cast<uint32_t>(attr_int("group", 1));
    desc.out_channels = static_cast<uint32_t>(ws[1]) * desc.groups;
    auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    if (rank == 4) {
        desc.kernel_h = u(win.kernel[0]), desc.kernel_w = u(win.kernel[1]);
        desc.stride_h = u(win.stride[0]), desc.stride_w = u(win.stride[1]);
        desc.pad_top = u(win.pads[0]), desc.pad_left = u(win.pads[1]);
        desc.pad_bottom = u(win.pads[2]), desc.pad_right = u(win.pads[3]);
    } else {
        desc.kernel_w = u(win.kernel[0]);
        desc.stride_w = u(win.stride[0]);
        desc.pad_left = u(win.pads[0]), desc.pad_right = u(win.pads[1]);
    }
    if (uint64_t(ws[0]) != d.c)
        return fail("weights of shape " + shape_text(ws) + " do not match " + std::to_string(d.c) +
                    " input channels");
    return define_feature(
        model_.network.deconvolution(x->tensor, desc, w->values, bias, layer_name()), rank);
}

Status Importer::pool(bool max, bool global) {
    Result<const Val*> x = feature(0);
    if (!x) return x.status();
    if (output_used(1)) return fail("the indices output is not supported");
    const int rank = (*x)->rank;
    if (rank != 3 && rank != 4)
        return fail(rank == 5 ? "3-D pooling is not supported"
                              : "the input must be [N, C, H, W] or [N, C, L]");
    const size_t n = static_cast<size_t>(rank - 2);
    const Dims4 d = dims(**x);
    const std::vector<int64_t> in = spatial(d, rank);
    Window win;
    bool include_pad = true;
    if (global) {
        win.kernel = in;
        win.stride.assign(n, 1);
        win.pads.assign(2 * n, 0);
    } else {
        win.kernel = attr_ints("kernel_shape");
        if (win.kernel.size() != n) return fail("kernel_shape must have one value per axis");
        win.stride = attr_ints("strides");
        if (win.stride.empty()) win.stride.assign(n, 1);
        win.pads = attr_ints("pads");
        if (win.pads.empty()) win.pads.assign(2 * n, 0);
        for (int64_t v : attr_ints("dilations"))
            if (v != 1) return fail("dilations are not supported");
        if (win.stride.size() != n || win.pads.size() != 2 * n)
            return fail("strides or pads do not have one value per spatial axis");
        const std::string auto_pad = attr_string("auto_pad", "NOTSET");
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
            same_pads(auto_pad, in, win.kernel, win.stride, std::vector<int64_t>(n, 1), win.pads);
        else if (auto_pad == "VALID")
            win.pads.assign(2 * n, 0);
        else if (auto_pad != "NOTSET")
            return fail("auto_pad '" + auto_pad + "' is not known");
        include_pad = max || attr_int("count_include_pad", 0) != 0;
        if (attr_int("ceil_mode", 0)) {
            for (size_t i = 0; i < n; ++i) {
                const int64_t span = in[i] + win.pads[i] + win.pads[n + i] - win.kernel[i];
                int64_t out = (span + win.stride[i] - 1) / win.stride[i] + 1;
                // The last window must start inside the input or its leading padding.
                if ((out - 1) * win.stride[i] >= in[i] + win.pads[i]) --out;
                const int64_t extra = (out - 1) * win.stride[i] + win.kernel[i] -
                                      (in[i] + win.pads[i] + win.pads[n + i]);
                if (extra > 0) {
                    if (!max)
                        return fail("ceil_mode needs " + std::to_string(extra) +
                                    " more padding, which the average would count");
                    win.pads[n + i] += extra;
                }
            }
        }
    }
    for (int64_t v : win.pads)
        if (v < 0) return fail("negative pads are not supported");
    builder::PoolingDesc desc;
    desc.type = max ? builder::PoolingType::Max : builder::PoolingType::Average;
    auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    if (rank == 4) {
        desc.kernel_h = u(win.kernel[0]), desc.kernel_w = u(win.kernel[1]);
        desc.stride_h = u(win.stride[0]), desc.stride_w = u(win.stride[1]);
        desc.pad_top = u(win.pads[0]), desc.pad_left = u(win.pads[1]);
        desc.pad_bottom = u(win.pads[2]), desc.pad_right = u(win.pads[3]);
    } else {
        desc.kernel_w = u(win.kernel[0]);
        desc.stride_w = u(win.stride[0]);
        desc.pad_left = u(win.pads[0]), desc.pad_right = u(win.pads[1]);
    }
    const bool padded = std::any_of(win.pads.begin(), win.pads.end(), [](int64_t v) { return v; });
    desc.count_include_pad = include_pad || !padded;
    return define_feature(model_.network.pooling((*x)->tensor, desc, layer_name()), rank);
}

Status Importer::batch_norm() {
    Result<const Val*> x = feature(0);
    if (!x) return x.status();
    if (attr_int("training_mode", 0) || output_used(1) || output_used(2) || output_used(3) ||
        output_used(4))
        return fail("the training form (running statistics outputs) is not supported");
    const TensorData* p[4];
    for (int i = 0; i < 4; ++i) {
        Result<const TensorData*> c = constant(i + 1);
        if (!c) return c.status();
        p[i] = *c;
    }
    const float epsilon = attr_float("epsilon", 1e-5f);
    // Inputs: scale, B, mean, var.
    return define_feature(
        model_.network.batch_norm((*x)->tensor, p[2]->values, p[3]->values, p[0]->values,
                                  p[1]->values, epsilon, layer_name()),
        (*x)->rank);
}

Status Importer::gemm(bool matmul) {
    Result<const Val*> a = feature(0);
    if (!a) return a.status();
    Result<const TensorData*> b = constant(1);
    if (!b) return b.status();
    if ((*a)->rank != 2)
        return fail("the first input must be a matrix [N, K] (it has rank " +
                    std::to_string((*a)->rank) + ")");
    if (!matmul && attr_int("transA", 0))
        return fail("transA is not supported (it mixes batch items)");
    const auto& bs = (*b)->shape;
    if (bs.size() != 2) return fail("the second input must be a constant matrix");
    const bool trans_b = !matmul && attr_int("transB", 0);
    const float alpha = matmul ? 1.0f : attr_float("alpha", 1.0f);
    const float beta = matmul ? 1.0f : attr_float("beta", 1.0f);
    const uint64_t k = trans_b ? uint64_t(bs[1]) : uint64_t(bs[0]);
    const uint64_t outputs = trans_b ? uint64_t(bs[0]) : uint64_t(bs[1]);
    const Dims4 d = dims(**a);
    if (k != d.elements())
        return fail("the second input of shape " + shape_text(bs) + " does not match " +
                    std::to_string(d.elements()) + " inputs");
    std::vector<float> weights(outputs * k);
    for (uint64_t o = 0; o < outputs; ++o)
        for (uint64_t i = 0; i < k; ++i)
            weights[o * k + i] =
                alpha * (trans_b ? (*b)->values[o * k + i] : (*b)->values[i * outputs + o]);
    std::vector<float> bias;
    if (!matmul && has_input(2)) {
        Result<const TensorData*> c = constant(2);
        if (!c) return c.status();
        const TensorData& cd = **c;
        const bool row = cd.values.size() == outputs &&
                         (cd.shape.size() == 1 || (cd.shape.size() == 2 && cd.shape[0] == 1));
        if (cd.values.size() == 1)
            bias.assign(outputs, beta * cd.values[0]);
        else if (row)
            for (float v : cd.values) bias.push_back(beta * v);
        else
            return fail("C of shape " + shape_text(cd.shape) +
                        " is not supported (one value, or one per output: [" +
                        std::to_string(outputs) + "] or [1, " + std::to_string(outputs) + "])");
    }
    return define_feature(
        model_.network.fully_connected((*a)->tensor, static_cast<uint32_t>(outputs), weights, bias,
                                       layer_name()),
        2);
}

Status Importer::softmax() {
    Result<const Val*> x = feature(0);
    if (!x) return x.status();
    const int rank = (*x)->rank;
    const Dims4 d = dims(**x);
    if (model_.opset >= 13) {
        Result<int> a = channel_axis_check(**x, attr_int("axis", -1), "axis");
        if (!a) return a.status();
    } else {
        // Before opset 13: softmax over the flattened dimensions from axis on.
        int64_t axis = attr_int("axis", 1);
        if (axis < 0) axis += rank;
        const bool channels_only =
            (rank == 1 && axis == 0) || (rank >= 2 && axis == 1 && d.h == 1 && d.w == 1);
        if (!channels_only)
            return fail("softmax over the flattened dimensions from axis " + std::to_string(axis) +
                        " of a tensor of shape " + shape_text(onnx_shape(d, rank, model_.batch)) +
                        " is not supported (only over the channels)");
    }
    return define_feature(model_.network.softmax((*x)->tensor, layer_name()), rank);
}

Status Importer::concat() {
    std::vector<Tensor> parts;
    int rank = 0;
    for (int i = 0; i < node_->input_size(); ++i) {
        Result<const Val*> x = feature(i);
        if (!x) return x.status();
        if (i == 0) {
            rank = (*x)->rank;
            Result<int> a = channel_axis_check(**x, attr_int("axis", 1), "axis");
            if (!a) return a.status();
        } else if ((*x)->rank != rank) {
            return fail("the inputs have different ranks");
        }
        parts.push_back((*x)->tensor);
    }
    if (parts.size() == 1) {
        define(node_->output(0), values_.at(node_->input(0)));
        return Status();
    }
    return define_feature(model_.network.concat(parts, layer_name()), rank);
}

Status Importer::binary() {
    const std::string& op = node_->op_type();
    Result<const Val*> a = input(0);
    if (!a) return a.status();
    Result<const Val*> b = input(1);
    if (!b) return b.status();
    if ((*a)->constant && (*b)->constant)
        return fail("both inputs are constants (constant folding is not supported)");
    if (!(*a)->constant && !(*b)->constant) {
        const Dims4 da = dims(**a), db = dims(**b);
        if (da != db || (*a)->rank != (*b)->rank)
            return fail("the inputs have different shapes " +
                        shape_text(onnx_shape(da, (*a)->rank, model_.batch)) + " and " +
                        shape_text(onnx_shape(db, (*b)->rank, model_.batch)) +
                        " (broadcasting between feature tensors is not supported)");
        builder::EltwiseOp e;
        if (op == "Add")
            e = builder::EltwiseOp::Sum;
        else if (op == "Mul")
            e = builder::EltwiseOp::Product;
        else if (op == "Max")
            e = builder::EltwiseOp::Max;
        else
            return fail(op + " of two feature tensors is not supported");
        return define_feature(model_.network.eltwise((*a)->tensor, (*b)->tensor, e, layer_name()),
                              (*a)->rank);
    }
    const bool constant_first = (*a)->constant;
    const Val& x = constant_first ? **b : **a;
    const TensorData& c = constant_first ? (*a)->data : (*b)->data;
    Result<std::vector<float>> v = per_channel(c, x, "the constant");
    if (!v) return v.status();
    std::vector<float> values = std::move(v).value();
    Tensor t;
    if (op == "Add") {
        t = model_.network.bias(x.tensor, values, layer_name());
    } else if (op == "Sub" && !constant_first) {
        for (float& f : values) f = -f;
        t = model_.network.bias(x.tensor, values, layer_name());
    } else if (op == "Sub") {  // c - x
        const std::vector<float> minus_one(values.size(), -1.0f);
        t = model_.network.scale(x.tensor, minus_one, values, layer_name());
    } else if (op == "Mul") {
        t = model_.network.scale(x.tensor, values, {}, layer_name());
    } else if (op == "Div" && !constant_first) {
        for (float& f : values) f = 1.0f / f;
        t = model_.network.scale(x.tensor, values, {}, layer_name());
    } else {
        return fail(op + " with a constant " + (constant_first ? "first" : "second") +
                    " operand is not supported");
    }
    return define_feature(t, x.rank);
}

Status Importer::sum() {
    Result<const Val*> first = feature(0);
    if (!first) return first.status();
    Tensor t = (*first)->tensor;
    const int rank = (*first)->rank;
    for (int i = 1; i < node_->input_size(); ++i) {
        Result<const Val*> x = feature(i);
        if (!x) return x.status();
        if (dims(**x) != dims(**first) || (*x)->rank != rank)
            return fail("the inputs have different shapes (broadcasting is not supported)");
        t = model_.network.eltwise(
            t, (*x)->tensor, builder::EltwiseOp::Sum,
            node_->input_size() == 2 ? layer_name() : layer_name() + "_" + std::to_string(i));
    }
    return define_feature(t, rank);
}

Status Importer::flatten() {
    Result<const Val*> in = input(0);
    if (!in) return in.status();
    const int rank = (*in)->constant ? static_cast<int>((*in)->data.shape.size()) : (*in)->rank;
    int64_t axis = attr_int("axis", 1);
    if (axis < -rank || axis > rank)
        return fail("axis " + std::to_string(axis) + " is out of range");
    if (axis < 0) axis += rank;
    if ((*in)->constant) {
        TensorData d = (*in)->data;
        const auto& s = (*in)->data.shape;
        const uint64_t outer = product(std::vector<int64_t>(s.begin(), s.begin() + axis));
        d.shape = {static_cast<int64_t>(outer), static_cast<int64_t>(product(s) / outer)};
        return define_constant(std::move(d));
    }
    if (rank == 1 || axis != 1)
        return fail("flattening at axis " + std::to_string(axis) + " of a rank-" +
                    std::to_string(rank) + " tensor is not supported (only at axis 1: [N, C*H*W])");
    return define_feature(model_.network.flatten((*in)->tensor, layer_name()), 2);
}

Status Importer::reshape() {
    Result<const Val*> in = input(0);
    if (!in) return in.status();
    std::vector<int64_t> target;
    if (has_input(1)) {
        Result<const TensorData*> s = constant(1);
        if (!s) return s.status();
        for (float f : (*s)->values) target.push_back(static_cast<int64_t>(f));
    } else {
        target = attr_ints("shape");
    }
    const bool allow_zero = attr_int("allowzero", 0) != 0;
    const std::vector<int64_t> source =
        (*in)->constant ? (*in)->data.shape : onnx_shape(dims(**in), (*in)->rank, model_.batch);
    std::vector<int64_t> out = target;
    int infer = -1;
    uint64_t known = 1;
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] == 0 && !allow_zero) {
            if (i >= source.size())
                return fail("shape " + shape_text(target) + " copies a missing dimension");
            out[i] = source[i];
        }
        if (out[i] == -1) {
            if (infer >= 0) return fail("shape " + shape_text(target) + " has two -1");
            infer = static_cast<int>(i);
        } else if (out[i] < 0) {
            return fail("shape " + shape_text(target) + " is invalid");
        } else {
            known *= static_cast<uint64_t>(out[i]);
        }
    }
    const uint64_t total = product(source);
    if (infer >= 0) {
        if (known == 0 || total % known)
            return fail("shape " + shape_text(target) + " does not fit");
        out[static_cast<size_t>(infer)] = static_cast<int64_t>(total / known);
    }
    if (product(out) != total)
        return fail("cannot reshape " + shape_text(source) + " to " + shape_text(target));
    if ((*in)->constant) {
        TensorData d = (*in)->data;
        d.shape = out;
        return define_constant(std::move(d));
    }
    if (out == source) {
        define(node_->output(0), **in);
        return Status();
    }
    if ((*in)->rank >= 2 && out.size() == 2 && out[0] == source[0])
        return define_feature(model_.network.flatten((*in)->tensor, layer_name()), 2);
    return fail("reshaping " + shape_text(source) + " to " + shape_text(out) +
                " is not supported (only flattening to [N, C*H*W])");
}

Status Importer::clip() {
    Result<const Val*> x = feature(0);
    if (!x) return x.status();
    std::optional<float> lo, hi;
    if (model_.opset < 11) {
        if (attr("min")) lo = attr_float("min", 0);
        if (attr("max")) hi = attr_float("max", 0);
    } else {
        for (int i = 1; i <= 2; ++i) {
            if (!has_input(i)) continue;
            Result<const TensorData*> c = constant(i);
            if (!c) return c.status();
            if ((*c)->values.size() != 1) return fail("min and max must be scalars");
            (i == 1 ? lo : hi) = (*c)->values[0];
        }
    }
    const bool unbounded_above = !hi || std::isinf(*hi);
    if (lo && *lo == 0.0f && unbounded_above)
        return define_feature(model_.network.relu((*x)->tensor, layer_name()), (*x)->rank);
    return fail("only Clip(min = 0, no max) is supported (as ReLU)");
}

Status Importer::constant_node() {
    if (const auto* a = attr("value")) {
        Result<TensorData> d = from_proto(a->t());
        if (!d) return fail(d.message());
        return define_constant(std::move(d).value());
    }
    TensorData d;
    if (const auto* a = attr("value_float")) {
        d.values = {a->f()};
    } else if (const auto* f = attr("value_floats")) {
        d.values.assign(f->floats().begin(), f->floats().end());
        d.shape = {static_cast<int64_t>(d.values.size())};
    } else if (const auto* i = attr("value_int")) {
        d.values = {static_cast<float>(i->i())};
    } else if (const auto* is = attr("value_ints")) {
        for (int64_t v : is->ints()) d.values.push_back(static_cast<float>(v));
        d.shape = {static_cast<int64_t>(d.values.size())};
    } else {
        return fail("only value, value_float(s) and value_int(s) constants are supported");
    }
    return define_constant(std::move(d));
}

Status Importer::transpose() {
    Result<const Val*> in = input(0);
    if (!in) return in.status();
    if (!(*in)->constant) return fail("transposing a feature tensor is not supported");
    const TensorData& s = (*in)->data;
    const size_t rank = s.shape.size();
    std::vector<int64_t> perm = attr_ints("perm");
    if (perm.empty())
        for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
    if (perm.size() != rank) return fail("perm does not match the rank");
    TensorData d;
    for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(rank)) return fail("perm is invalid");
        d.shape.push_back(s.shape[static_cast<size_t>(p)]);
    }
    d.values.resize(s.values.size());
    std::vector<uint64_t> in_stride(rank, 1);
    for (size_t i = rank; i-- > 1;) in_stride[i - 1] = in_stride[i] * uint64_t(s.shape[i]);
    std::vector<int64_t> idx(rank, 0);  // index into d
    for (uint64_t o = 0; o < d.values.size(); ++o) {
        uint64_t src = 0;
        for (size_t i = 0; i < rank; ++i) src += uint64_t(idx[i]) * in_stride[size_t(perm[i])];
        d.values[o] = s.values[src];
        for (size_t i = rank; i-- > 0;) {
            if (++idx[i] < d.shape[i]) break;
            idx[i] = 0;
        }
    }
    return define_constant(std::move(d));
}

Status Importer::squeeze(bool unsqueeze) {
    Result<const Val*> in = input(0);
    if (!in) return in.status();
    if (!(*in)->constant)
        return fail(std::string(unsqueeze ? "Unsqueeze" : "Squeeze") +
                    " of a feature tensor is not supported");
    std::vector<int64_t> axes = attr_ints("axes");
    if (has_input(1)) {
        Result<const TensorData*> a = constant(1);
        if (!a) return a.status();
        for (float f : (*a)->values) axes.push_back(static_cast<int64_t>(f));
    }
    TensorData d = (*in)->data;
    if (unsqueeze) {
        const int64_t rank = static_cast<int64_t>(d.shape.size() + axes.size());
        for (int64_t& a : axes) a = a < 0 ? a + rank : a;
        std::sort(axes.begin(), axes.end());
        for (int64_t a : axes) {
            if (a < 0 || a > static_cast<int64_t>(d.shape.size())) return fail("axes are invalid");
            d.shape.insert(d.shape.begin() + a, 1);
        }
    } else {
        const int64_t rank = static_cast<int64_t>(d.shape.size());
        std::vector<int64_t> kept;
        for (int64_t i = 0; i < rank; ++i) {
            const bool listed =
                axes.empty() ? d.shape[size_t(i)] == 1
                             : std::any_of(axes.begin(), axes.end(),
                                           [&](int64_t a) { return (a < 0 ? a + rank : a) == i; });
            if (!listed) kept.push_back(d.shape[size_t(i)]);
        }
        d.shape = kept;
    }
    return define_constant(std::move(d));
}

Status Importer::import_node() {
    const std::string& op = node_->op_type();
    if (!node_->domain().empty() && node_->domain() != "ai.onnx")
        return fail("operators of domain '" + node_->domain() + "' are not supported");
    if (node_->output_size() < 1) return fail("the node has no output");
    if (op == "Conv") return conv();
    if (op == "ConvTranspose") return conv_transpose();
    if (op == "MaxPool") return pool(true, false);
    if (op == "AveragePool") return pool(false, false);
    if (op == "GlobalMaxPool") return pool(true, true);
    if (op == "GlobalAveragePool") return pool(false, true);
    if (op == "BatchNormalization") return batch_norm();
    if (op == "Gemm") return gemm(false);
    if (op == "MatMul") return gemm(true);
    if (op == "Softmax") return softmax();
    if (op == "Concat") return concat();
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max") {
        if (op == "Max" && node_->input_size() != 2) return fail("Max needs two inputs here");
        return binary();
    }
    if (op == "Sum") return sum();
    if (op == "Flatten") return flatten();
    if (op == "Reshape") return reshape();
    if (op == "Clip") return clip();
    if (op == "Constant") return constant_node();
    if (op == "Transpose") return transpose();
    if (op == "Squeeze" || op == "Unsqueeze") return squeeze(op == "Unsqueeze");
    if (op == "Identity" || op == "Dropout") {
        if (op == "Dropout" && output_used(1)) return fail("the mask output is not supported");
        if (op == "Dropout" && attr_int("training_mode", 0)) return fail("training mode");
        Result<const Val*> x = input(0);
        if (!x) return x.status();
        define(node_->output(0), **x);
        return Status();
    }
    if (op == "Relu" || op == "LeakyRelu" || op == "PRelu" || op == "Sigmoid" || op == "Tanh" ||
        op == "LRN") {
        Result<const Val*> x = feature(0);
        if (!x) return x.status();
        const Tensor t = (*x)->tensor;
        const int rank = (*x)->rank;
        auto& net = model_.network;
        if (op == "Relu") return define_feature(net.relu(t, layer_name()), rank);
        if (op == "Sigmoid") return define_feature(net.sigmoid(t, layer_name()), rank);
        if (op == "Tanh") return define_feature(net.tanh(t, layer_name()), rank);
        if (op == "LeakyRelu") {
            const float slope[1] = {attr_float("alpha", 0.01f)};
            return define_feature(net.prelu(t, slope, layer_name()), rank);
        }
        if (op == "PRelu") {
            Result<const TensorData*> s = constant(1);
            if (!s) return s.status();
            Result<std::vector<float>> slopes = per_channel(**s, **x, "the slope");
            if (!slopes) return slopes.status();
            return define_feature(net.prelu(t, *slopes, layer_name()), rank);
        }
        // LRN
        builder::LrnDesc desc;
        const int64_t size = attr_int("size", 0);
        if (size <= 0) return fail("size is missing");
        desc.local_size = static_cast<uint32_t>(size);
        desc.alpha = attr_float("alpha", 1e-4f);
        desc.beta = attr_float("beta", 0.75f);
        desc.k = attr_float("bias", 1.0f);
        return define_feature(net.lrn(t, desc, layer_name()), rank);
    }
    return fail("the operator " + op +
                " is not supported (Conv, ConvTranspose, MaxPool, AveragePool, Global*Pool, "
                "BatchNormalization, Gemm, MatMul, Relu, LeakyRelu, PRelu, Clip, Sigmoid, Tanh, "
                "Softmax, Concat, Add, Sub, Mul, Div, Max, Sum, LRN, Flatten, Reshape, Dropout, "
                "Identity, Constant are)");
}

Result<Model> Importer::run() {
    model_.opset = 0;
    for (const auto& o : proto_.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") model_.opset = o.version();
    if (model_.opset == 0) model_.opset = 1;
    if (model_.opset > 17)
        return error("ONNX: opset ", model_.opset, " is newer than this importer knows (17)");
    model_.producer = proto_.producer_name();
    if (!proto_.producer_version().empty()) model_.producer += " " + proto_.producer_version();
    model_.network =
        builder::Network(options_.name.empty() ? proto_.graph().name() : options_.name);
    if (Status s = import_graph_inputs(); !s) return s;
    const auto& nodes = proto_.graph().node();
    for (int i = 0; i < nodes.size(); ++i) {
        node_index_ = i;
        node_ = &nodes[i];
        if (Status s = import_node(); !s) return s;
        if (Status s = check_builder(); !s) return s;
    }
    if (Status s = import_outputs(); !s) return s;
    return std::move(model_);
}

}  // namespace

uint64_t TensorData::elements() const {
    return product(shape);
}

Result<TensorData> parse_tensor(std::span<const std::byte> bytes) {
    ::onnx::TensorProto t;
    if (bytes.size() > size_t(std::numeric_limits<int>::max()) ||
        !t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return Status::failure("ONNX: not a TensorProto");
    return from_proto(t);
}

namespace {

Result<std::vector<std::byte>> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::failure(path + ": cannot open the file");
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> bytes(chars.size());
    std::memcpy(bytes.data(), chars.data(), chars.size());
    return bytes;
}

}  // namespace

Result<TensorData> read_tensor_file(const std::string& path) {
    Result<std::vector<std::byte>> bytes = read_file(path);
    if (!bytes) return bytes.status();
    Result<TensorData> t = parse_tensor(*bytes);
    if (!t) return Status(t.status()).context(path);
    return t;
}

Result<Model> import_bytes(std::span<const std::byte> bytes, const ImportOptions& options) {
    ::onnx::ModelProto proto;
    if (bytes.size() > size_t(std::numeric_limits<int>::max()) ||
        !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return Status::failure("ONNX: not a ModelProto (the protobuf does not parse)");
    if (!proto.has_graph()) return Status::failure("ONNX: the model has no graph");
    if (options.batch < 1) return Status::failure("ONNX: the batch must be at least 1");
    Importer importer(proto, options);
    return importer.run();
}

Result<Model> import_file(const std::string& path, const ImportOptions& options) {
    Result<std::vector<std::byte>> bytes = read_file(path);
    if (!bytes) return bytes.status();
    Result<Model> m = import_bytes(*bytes, options);
    if (!m) return Status(m.status()).context(path);
    return m;
}

Result<std::vector<HostTensor>> split_batch(const Value& value, const TensorData& data) {
    if (data.elements() != product(value.shape))
        return error("'", value.name, "': a tensor of shape ", shape_text(data.shape),
                     " given for shape ", shape_text(value.shape));
    Result<Dims4> d = item_dims(value.shape);
    if (!d) return d.status();
    const uint64_t items = value.shape.size() >= 2 ? uint64_t(value.shape[0]) : 1;
    const uint64_t per = d->elements();
    std::vector<HostTensor> out;
    for (uint64_t i = 0; i < items; ++i) {
        HostTensor t;
        t.dims = *d;
        t.layout = HostLayout::NCHW;
        t.data.assign(data.values.begin() + static_cast<long>(i * per),
                      data.values.begin() + static_cast<long>((i + 1) * per));
        out.push_back(std::move(t));
    }
    return out;
}

Result<TensorData> merge_batch(const Value& value, const std::vector<HostTensor>& items) {
    TensorData d;
    d.name = value.name;
    d.shape = value.shape;
    if (d.shape.size() >= 2)
        d.shape[0] = static_cast<int64_t>(items.size());
    else if (items.size() != 1)
        return error("'", value.name, "': ", items.size(), " items for a tensor without batch");
    Result<Dims4> dims = item_dims(value.shape);
    if (!dims) return dims.status();
    for (const HostTensor& t : items) {
        if (t.dims != *dims) return error("'", value.name, "': an item has other dims");
        const HostTensor n = builder::to_layout(t, HostLayout::NCHW);
        d.values.insert(d.values.end(), n.data.begin(), n.data.end());
    }
    return d;
}

Result<std::vector<TensorData>> run_reference(const Model& model,
                                              const std::vector<TensorData>& inputs) {
    if (inputs.size() != model.inputs.size())
        return error("ONNX reference: ", inputs.size(), " inputs given, the model has ",
                     model.inputs.size());
    std::vector<std::vector<HostTensor>> split;
    for (size_t i = 0; i < inputs.size(); ++i) {
        Result<std::vector<HostTensor>> s = split_batch(model.inputs[i], inputs[i]);
        if (!s) return s.status();
        split.push_back(std::move(s).value());
    }
    std::vector<std::vector<HostTensor>> outputs(model.outputs.size());
    for (int64_t b = 0; b < model.batch; ++b) {
        std::vector<HostTensor> item;
        for (const auto& s : split) item.push_back(s.size() == 1 ? s[0] : s[size_t(b)]);
        Result<std::vector<HostTensor>> out = builder::run_reference(model.network, item);
        if (!out) return out.status();
        for (size_t o = 0; o < out->size(); ++o) outputs[o].push_back((*out)[o]);
    }
    std::vector<TensorData> result;
    for (size_t o = 0; o < outputs.size(); ++o) {
        std::vector<HostTensor> items = outputs[o];
        if (model.outputs[o].shape.size() < 2) items.resize(1);
        Result<TensorData> m = merge_batch(model.outputs[o], items);
        if (!m) return m.status();
        result.push_back(std::move(m).value());
    }
    return result;
}

}  // namespace nvdla::onnx
