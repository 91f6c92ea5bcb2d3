// The ONNX importer (include/nvdla/onnx.hpp): ModelProto -> builder::Network, node by node in
// the graph's (topological) order, each node's operator looked up in the operator table that the
// ops_*.cpp families fill. Constants (initializers, Constant nodes, inputs the caller names) are
// kept as TensorData and folded where an operator only rearranges them; every other value is a
// builder tensor of one batch item.
#include "importer.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace nvdla::onnx {

namespace detail {

static_assert(std::endian::native == std::endian::little, "ONNX raw data is little-endian");

namespace {

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

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
    std::ostringstream out;
    out << "[";
    for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
    out << "]";
    return out.str();
}

bool within(const std::vector<int64_t>& shape, uint64_t limit) {
    uint64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0) return false;
        if (d == 0) return true;
        if (uint64_t(d) > limit / n) return false;
        n *= uint64_t(d);
    }
    return true;
}

uint64_t product(const std::vector<int64_t>& shape, size_t from) {
    uint64_t n = 1;
    for (size_t i = from; i < shape.size(); ++i) n *= static_cast<uint64_t>(shape[i]);
    return n;
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
    if (!within(d.shape, uint64_t(1) << 31))
        return error("tensor '", t.name(), "': too many elements");
    const uint64_t n = product(d.shape);
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

int builder_axis(int64_t axis, int rank) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return -1;
    switch (rank) {
        case 1: return 1;
        case 2: return axis == 0 ? 0 : 1;
        case 3: return axis == 0 ? 0 : axis == 1 ? 1 : 3;
        default: return static_cast<int>(axis);
    }
}

std::vector<int64_t> value_shape(const Val& v, Dims4 d, int64_t batch) {
    const int64_t g = v.groups;
    if (v.pending == Pending::Grouped) return {batch, g, d.c / g, d.h, d.w};
    if (v.pending == Pending::Shuffled) return {batch, d.c / g, g, d.h, d.w};
    return onnx_shape(d, v.rank, batch);
}

Status check_window(const Importer& im, const Window& win) {
    constexpr int64_t kLargest = 65535;
    auto positive = [&](const std::vector<int64_t>& values) {
        return std::all_of(values.begin(), values.end(),
                           [&](int64_t v) { return v >= 1 && v <= kLargest; });
    };
    if (!positive(win.kernel)) return im.fail("kernel sizes must be 1 to 65535");
    if (!positive(win.stride)) return im.fail("strides must be 1 to 65535");
    if (!positive(win.dilation)) return im.fail("dilations must be 1 to 65535");
    for (int64_t v : win.pads) {
        if (v < 0) return im.fail("negative pads are not supported");
        if (v > kLargest) return im.fail("pads must be at most 65535");
    }
    return Status();
}

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

// ---- Importer ----

Status Importer::fail(const std::string& why) const {
    std::ostringstream out;
    out << "ONNX node " << node_index_ << " '" << node_name() << "' (" << node_->op_type()
        << "): " << why;
    return Status::failure(out.str());
}

std::string Importer::node_name() const {
    if (!node_->name().empty()) return node_->name();
    return node_->output_size() ? node_->output(0) : std::string();
}

Status Importer::check_builder() const {
    Status s = model_.network.status();
    if (!s) return fail(s.message());
    return Status();
}

Result<const Val*> Importer::input(int i) const {
    if (!has_input(i)) return fail("input " + std::to_string(i) + " is missing");
    auto it = values_.find(node_->input(i));
    if (it == values_.end()) return fail("input '" + node_->input(i) + "' is not defined");
    return &it->second;
}

Result<const Val*> Importer::feature(int i) {
    Result<const Val*> v = input(i);
    if (!v) return v;
    if ((*v)->constant)
        return fail("input '" + node_->input(i) +
                    "' is a constant; this operator needs a feature tensor there");
    if ((*v)->pending != Pending::None) {
        Val& pending = values_[node_->input(i)];
        if (Status s = make_pending(pending); !s) return s;
        if (Status s = check_builder(); !s) return s;
    }
    return v;
}

Status Importer::make_pending(Val& v) {
    auto& net = model_.network;
    switch (v.pending) {
        case Pending::None: return Status();
        case Pending::Sigmoid: v.tensor = net.sigmoid(v.source, v.layer); break;
        case Pending::HardSigmoid:
            v.tensor = net.hard_sigmoid(v.source, v.alpha, v.beta, v.layer);
            break;
        case Pending::Softplus:
        case Pending::TanhSoftplus: {
            // softplus(x) = relu(x) + log(1 + exp(-|x|)): exp of a value <= 0 lies in (0, 1],
            // which int8 resolves (exp(x) itself overflows fp16 and spans too wide a range).
            using builder::CpuOpKind;
            Tensor t = cpu({v.source}, CpuOpKind::Abs, {}, {}, {}, v.layer + "_abs");
            t = cpu({t}, CpuOpKind::Neg, {}, {}, {}, v.layer + "_neg");
            t = cpu({t}, CpuOpKind::Exp, {}, {}, {}, v.layer + "_exp");
            const float one[1] = {1.0f};
            t = net.bias(t, one, v.layer + "_plus1");
            t = cpu({t}, CpuOpKind::Log, {}, {}, {}, v.layer + "_log");
            const Tensor r = net.relu(v.source, v.layer + "_relu");
            t = net.eltwise(r, t, builder::EltwiseOp::Sum, v.layer + "_softplus");
            v.tensor = v.pending == Pending::Softplus ? t : net.tanh(t, v.layer);
            break;
        }
        case Pending::Grouped:
        case Pending::Shuffled:
            return fail(
                "a 5-D tensor is supported only as the middle of a channel shuffle "
                "(Reshape to [N, g, C/g, H, W], Transpose 0 2 1 3 4, Reshape to [N, C, H, "
                "W])");
    }
    v.pending = Pending::None;
    return Status();
}

void Importer::define_pending(Val v, int index) {
    v.layer = layer_name();
    define(node_->output(index), std::move(v));
}

std::vector<int64_t> Importer::shape_of(const Val& v) const {
    if (v.constant) return v.data.shape;
    const Dims4 d = model_.network.dims(v.pending == Pending::None ? v.tensor : v.source);
    return value_shape(v, d, model_.batch);
}

Status Importer::define_shaped(Tensor t, const std::vector<int64_t>& shape, int index,
                               const std::string& suffix) {
    if (Status s = check_builder(); !s) return s;
    if (shape.empty() || shape.size() > 4)
        return fail("a result of shape " + shape_text(shape) +
                    " is not supported (ranks 1 to 4 are)");
    if (shape.size() >= 2 && shape[0] != model_.batch)
        return fail("a result of shape " + shape_text(shape) +
                    " mixes batch items (each runs separately)");
    Result<Dims4> d = item_dims(shape);
    if (!d) return fail("a result of shape " + shape_text(shape) + ": " + d.message());
    if (*d != model_.network.dims(t)) {
        builder::CpuOpDesc desc;
        desc.kind = builder::CpuOpKind::Reshape;
        desc.out_dims = *d;
        const Tensor in[1] = {t};
        t = model_.network.cpu_op(in, desc, layer_name() + suffix);
    }
    return define_feature(t, static_cast<int>(shape.size()), index);
}

Tensor Importer::cpu(std::vector<Tensor> inputs, builder::CpuOpKind kind, std::vector<int64_t> ints,
                     std::vector<float> floats, Dims4 out_dims, const std::string& name) {
    builder::CpuOpDesc desc;
    desc.kind = kind;
    desc.ints = std::move(ints);
    desc.floats = std::move(floats);
    desc.out_dims = out_dims;
    return model_.network.cpu_op(inputs, desc, name.empty() ? layer_name() : name);
}

Result<const TensorData*> Importer::constant(int i) const {
    Result<const Val*> v = input(i);
    if (!v) return v.status();
    if (!(*v)->constant)
        return fail("input '" + node_->input(i) +
                    "' must be a constant (an initializer or a Constant node)");
    return &(*v)->data;
}

const ::onnx::AttributeProto* Importer::attr(const std::string& name) const {
    for (const auto& a : node_->attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

int64_t Importer::attr_int(const std::string& name, int64_t fallback) const {
    const auto* a = attr(name);
    return a ? a->i() : fallback;
}

float Importer::attr_float(const std::string& name, float fallback) const {
    const auto* a = attr(name);
    return a ? a->f() : fallback;
}

std::string Importer::attr_string(const std::string& name, const std::string& fallback) const {
    const auto* a = attr(name);
    return a ? a->s() : fallback;
}

std::vector<int64_t> Importer::attr_ints(const std::string& name) const {
    const auto* a = attr(name);
    if (!a) return {};
    return {a->ints().begin(), a->ints().end()};
}

Status Importer::define_feature(Tensor t, int rank, int index) {
    if (Status s = check_builder(); !s) return s;
    if (index >= node_->output_size()) return Status();
    Val v;
    v.tensor = t;
    v.rank = rank;
    define(node_->output(index), std::move(v));
    return Status();
}

Status Importer::define_constant(TensorData d, bool integer, int index) {
    if (index >= node_->output_size()) return Status();
    d.name = node_->output(index);
    Val v;
    v.constant = true;
    v.integer = integer;
    v.data = std::move(d);
    define(node_->output(index), std::move(v));
    return Status();
}

Result<int> Importer::channel_axis_check(const Val& x, int64_t axis,
                                         const std::string& what) const {
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
        v.integer = init.data_type() == ::onnx::TensorProto_DataType_INT64 ||
                    init.data_type() == ::onnx::TensorProto_DataType_INT32;
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
        Val& v = it->second;
        if (v.pending == Pending::Grouped || v.pending == Pending::Shuffled)
            return Status::failure("ONNX graph output '" + out.name() +
                                   "' is 5-D, which is supported only inside a channel shuffle");
        if (Status s = make_pending(v); !s) return s;
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

Status Importer::import_node(const OpTable& table) {
    const std::string& op = node_->op_type();
    if (!node_->domain().empty() && node_->domain() != "ai.onnx")
        return fail("operators of domain '" + node_->domain() + "' are not supported");
    if (node_->output_size() < 1) return fail("the node has no output");
    auto it = table.find(op);
    if (it == table.end()) {
        std::string known;
        for (const auto& entry : table) known += (known.empty() ? "" : ", ") + entry.first;
        return fail("the operator " + op + " is not supported (" + known + " are)");
    }
    return it->second(*this);
}

const OpTable& operator_table() {
    static const OpTable table = [] {
        OpTable t;
        add_convolution_ops(t);
        add_pooling_ops(t);
        add_activation_ops(t);
        add_elementwise_ops(t);
        add_linear_ops(t);
        add_normalization_ops(t);
        add_tensor_ops(t);
        add_resize_ops(t);
        return t;
    }();
    return table;
}

Result<Model> Importer::run() {
    model_.opset = 0;
    for (const auto& o : proto_.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") model_.opset = o.version();
    if (model_.opset == 0) model_.opset = 1;
    if (model_.opset > 18)
        return error("ONNX: opset ", model_.opset, " is newer than this importer knows (18)");
    model_.producer = proto_.producer_name();
    if (!proto_.producer_version().empty()) model_.producer += " " + proto_.producer_version();
    model_.network =
        builder::Network(options_.name.empty() ? proto_.graph().name() : options_.name);
    if (Status s = import_graph_inputs(); !s) return s;
    const OpTable& table = operator_table();
    const auto& nodes = proto_.graph().node();
    for (int i = 0; i < nodes.size(); ++i) {
        node_index_ = i;
        node_ = &nodes[i];
        if (Status s = import_node(table); !s) return s;
        if (Status s = check_builder(); !s) return s;
    }
    if (Status s = import_outputs(); !s) return s;
    return std::move(model_);
}

}  // namespace detail

using builder::HostTensor;
using detail::item_dims;
using detail::product;
using detail::shape_text;

uint64_t TensorData::elements() const {
    return product(shape);
}

Result<TensorData> parse_tensor(std::span<const std::byte> bytes) {
    ::onnx::TensorProto t;
    if (bytes.size() > size_t(std::numeric_limits<int>::max()) ||
        !t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return Status::failure("ONNX: not a TensorProto");
    return detail::from_proto(t);
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
    detail::Importer importer(proto, options);
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
