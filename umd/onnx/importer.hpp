// The ONNX importer's internals (include/nvdla/onnx.hpp is the interface): the Importer walks
// the graph node by node and looks each operator up in a table (op type -> handler) that the
// operator families fill, one file each (ops_*.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "nvdla/onnx.hpp"

namespace nvdla::onnx::detail {

using builder::Tensor;

std::string shape_text(const std::vector<int64_t>& shape);
uint64_t product(const std::vector<int64_t>& shape, size_t from = 0);
// Whether the shape has at most `limit` elements (no dimension negative; no overflow).
bool within(const std::vector<int64_t>& shape, uint64_t limit);
// A TensorProto's values as floats (float32, float64, int32, int64).
Result<TensorData> from_proto(const ::onnx::TensorProto& t);
// A constant's element as an integer (shapes, axes, indices), saturated to +-2^62 so that the
// INT64_MAX and INT64_MIN sentinels of Slice come through without overflow.
inline int64_t to_int(float v) {
    constexpr float kLimit = 4.6116860184273879e18f;  // 2^62
    if (!(v == v)) return 0;                          // NaN
    return static_cast<int64_t>(std::clamp(v, -kLimit, kLimit));
}

// Per-item builder dims of an ONNX shape (rank 1..4).
Result<Dims4> item_dims(const std::vector<int64_t>& shape);
// The ONNX shape of a feature tensor of `rank` whose item has dims d.
std::vector<int64_t> onnx_shape(Dims4 d, int rank, int64_t batch);

// A feature value whose layer is not made until a consumer needs it, so that the consumer can
// fuse it: Mul(x, Sigmoid(x)) -> silu, Mul(x, HardSigmoid(x)) -> hard_swish, Mul(x,
// Tanh(Softplus(x))) -> mish, Reshape -> Transpose -> Reshape -> shuffle_channels.
enum class Pending : uint8_t {
    None,
    Sigmoid,       // sigmoid(source)
    HardSigmoid,   // hard_sigmoid(source, alpha, beta)
    Softplus,      // log(1 + exp(source))
    TanhSoftplus,  // tanh(softplus(source))
    Grouped,       // source [N, C, H, W] viewed as [N, groups, C / groups, H, W]
    Shuffled,      // Grouped with axes 1 and 2 swapped: [N, C / groups, groups, H, W]
};

// A value of the graph: a constant, or a feature tensor (one batch item) with its ONNX rank.
struct Val {
    bool constant = false;
    TensorData data;       // constant
    bool integer = false;  // constant: of an integer type (Div truncates)
    Tensor tensor;         // feature
    int rank = 0;          // feature: the ONNX rank (1..4; 5 for Grouped and Shuffled)
    // A pending feature: `tensor` is invalid until made (Importer::feature).
    Pending pending = Pending::None;
    Tensor source;
    float alpha = 0, beta = 0;
    uint32_t groups = 0;
    std::string layer;  // the producing node's layer name
};

// The builder axis (1 c, 2 h, 3 w) of ONNX axis `axis` (negative counts from the end) of a
// feature of `rank`; 0 for the batch axis, -1 when out of range.
int builder_axis(int64_t axis, int rank);
// The feature's ONNX shape per item for pending 5-D values, else onnx_shape.
std::vector<int64_t> value_shape(const Val& v, Dims4 d, int64_t batch);

// Kernel-window attributes of Conv/ConvTranspose/pooling for n spatial axes.
struct Window {
    std::vector<int64_t> kernel, stride, dilation, pads;  // pads: begin..., end...
};

// Pads [begin..., end...] of the spatial axes for an auto_pad of SAME_UPPER/SAME_LOWER.
void same_pads(const std::string& mode, const std::vector<int64_t>& in,
               const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
               const std::vector<int64_t>& dilation, std::vector<int64_t>& pads);
// Spatial extents of x's item as ONNX orders them: {H, W} (rank 4) or {L} (rank 3).
std::vector<int64_t> spatial(Dims4 d, int rank);

class Importer;
// Refuses a window the size arithmetic cannot take: kernels, strides and dilations (those
// given) must be 1 to 65535, pads 0 to 65535 (same_pads divides by the strides).
Status check_window(const Importer& im, const Window& win);
using OpHandler = Status (*)(Importer&);
using OpTable = std::map<std::string, OpHandler, std::less<>>;

// The operator families: each adds its operators to the table.
void add_convolution_ops(OpTable& table);
void add_pooling_ops(OpTable& table);
void add_activation_ops(OpTable& table);
void add_elementwise_ops(OpTable& table);
void add_linear_ops(OpTable& table);
void add_normalization_ops(OpTable& table);
void add_tensor_ops(OpTable& table);
void add_resize_ops(OpTable& table);

class Importer {
  public:
    Importer(const ::onnx::ModelProto& proto, const ImportOptions& options)
        : proto_(proto), options_(options) {}

    Result<Model> run();

    // ---- for the operator handlers: the current node ----
    const ::onnx::NodeProto& node() const { return *node_; }
    const std::string& op() const { return node_->op_type(); }
    int64_t opset() const { return model_.opset; }
    int64_t batch() const { return model_.batch; }
    builder::Network& network() { return model_.network; }

    // A failure naming the node: "ONNX node 3 'conv_5' (Conv): why".
    Status fail(const std::string& why) const;

    bool has_input(int i) const { return i < node_->input_size() && !node_->input(i).empty(); }
    Result<const Val*> input(int i) const;
    // Input i, which must be a feature tensor (not a constant); a pending value is made here.
    Result<const Val*> feature(int i);
    // Input i, which must be a constant.
    Result<const TensorData*> constant(int i) const;

    const ::onnx::AttributeProto* attr(const std::string& name) const;
    int64_t attr_int(const std::string& name, int64_t fallback) const;
    float attr_float(const std::string& name, float fallback) const;
    std::string attr_string(const std::string& name, const std::string& fallback) const;
    std::vector<int64_t> attr_ints(const std::string& name) const;
    // Whether output i exists and is used by name (optional outputs may be "").
    bool output_used(int i) const { return i < node_->output_size() && !node_->output(i).empty(); }

    // The name given to the node's layers.
    std::string layer_name() const { return node_name(); }
    // Defines output 0 as an existing value, a new feature tensor or a constant.
    void define(const std::string& name, Val v) { values_[name] = std::move(v); }
    Status define_feature(Tensor t, int rank, int index = 0);
    Status define_constant(TensorData d, bool integer = false, int index = 0);
    // Makes a pending value's layers (v.tensor).
    Status make_pending(Val& v);
    // Defines output `index` as a pending value.
    void define_pending(Val v, int index = 0);
    Dims4 dims(const Val& v) const { return model_.network.dims(v.tensor); }
    // The ONNX shape of a value (constant or feature, batch included).
    std::vector<int64_t> shape_of(const Val& v) const;
    // Defines output `index` as t reshaped to the ONNX shape (a CPU reshape where the builder's
    // dims differ, nothing where they agree).
    Status define_shaped(Tensor t, const std::vector<int64_t>& shape, int index = 0,
                         const std::string& suffix = "");
    // A CPU task on feature tensors, named `name` (default: the node's layer name).
    Tensor cpu(std::vector<Tensor> inputs, builder::CpuOpKind kind, std::vector<int64_t> ints = {},
               std::vector<float> floats = {}, Dims4 out_dims = {}, const std::string& name = "");

    // `axis` of x, which must be the channel axis: the axis, or a failure saying why not.
    Result<int> channel_axis_check(const Val& x, int64_t axis, const std::string& what) const;
    // Per-channel (or single) values of a constant that broadcasts onto feature x.
    Result<std::vector<float>> per_channel(const TensorData& c, const Val& x,
                                           const std::string& what) const;

  private:
    const ::onnx::ModelProto& proto_;
    const ImportOptions& options_;
    Model model_;
    std::map<std::string, Val> values_;
    bool batch_known_ = false;

    // The node being imported, for messages.
    int node_index_ = 0;
    const ::onnx::NodeProto* node_ = nullptr;

    std::string node_name() const;
    Status check_builder() const;
    Status import_graph_inputs();
    Status import_node(const OpTable& table);
    Status import_outputs();
};

}  // namespace nvdla::onnx::detail
