// A small ONNX importer: reads an ONNX model (a ModelProto file, float32 weights) and describes
// it with the network builder (nvdla/builder.hpp), which builds it for an NVDLA configuration in
// fp16 or int8 and runs its float reference.
//
//   Result<nvdla::onnx::Model> m = nvdla::onnx::import_file("lenet.onnx");
//   if (!m) die(m.message());  // "ONNX node 4 'lstm_1' (LSTM): the operator is not supported"
//   auto built = nvdla::builder::build(m->network, {.config = "nv_small", ...});
//
// Tensors. The builder's tensors are {1, c, h, w}. ONNX dimension 0 of a tensor of rank 2 to 4
// is the batch: the network is described for one batch item and each item runs separately
// (Model::batch; split_batch/merge_batch convert whole tensors). Per item: [N, C, H, W] is
// {1, C, H, W}, [N, C, L] is {1, C, 1, L} and [N, C] is {1, C, 1, 1}; a rank-1 tensor [C] is
// {1, C, 1, 1} without a batch. Operators that mix batch items (Concat, Softmax or a reduction
// on axis 0, Gemm with transA, Flatten at axis 0, a Transpose moving axis 0, ...) are refused.
// Several inputs and outputs are fine.
//
// Operators (ai.onnx, opsets 1-18) and what they become ("CPU": a CpuOpKind task between the
// hardware tasks, which BuildOptions::cpu_fallback = false refuses naming the node):
//
//   Conv                    convolution (2-D, or 1-D as 1xL), groups, dilations, pads, auto_pad
//   ConvTranspose           deconvolution (no dilations; output_padding only within the end
//                           padding; output_shape and auto_pad)
//   MaxPool, AveragePool    pooling (2-D or 1-D; ceil_mode and auto_pad as extra padding;
//                           no dilations; the MaxPool indices output is refused)
//   GlobalMaxPool,          pooling over the whole plane
//   GlobalAveragePool
//   ReduceMean, ReduceMax   over H and W (keepdims or not): global pooling; other axes: CPU
//   ReduceSum, ReduceMin    CPU (axes as an attribute or an input, as the opset has them)
//   BatchNormalization      batch_norm (inference form only)
//   LayerNormalization      CPU (scale and bias constants)
//   Gemm                    fully_connected (B a constant; alpha and beta folded; C a constant
//                           of one value or one per output)
//   MatMul                  fully_connected (2-D, B a constant); two computed tensors
//                           [N, (C,) M, K] x [N, (C,) K, P]: CPU
//   Relu, LeakyRelu, PRelu  relu, prelu (slopes: one, or one per channel)
//   Clip                    relu when min = 0 and there is no max, clip otherwise (any bounds)
//   Sigmoid, Tanh           sigmoid, tanh (the SDP lookup table)
//   HardSigmoid, HardSwish  hard_sigmoid, hard_swish; Mul(x, HardSigmoid(x)) with PyTorch's
//                           alpha 1/6, beta 1/2 (opset 13's HardSwish) is hard_swish
//   Mul(x, Sigmoid(x))      silu (SiLU/Swish)
//   Mul(x, Tanh(Softplus(x))), Mish    softplus as relu(x) + log(1 + exp(-|x|)) (Abs, Neg,
//                           Exp, Log on the CPU), tanh, product (no hardware mish yet)
//   Softplus                the same softplus
//   Exp, Log, Sqrt, Reciprocal, Neg, Abs, Erf    CPU
//   Softmax, LogSoftmax     softmax over the channels (the CPU softmax every runtime has);
//                           any other axis (or, before opset 13, the flattened axes): CPU
//   Concat                  concat (axis 1); constants along any axis: folded
//   Add, Sub, Mul, Max, Min,  eltwise between computed tensors of equal shape, or one of
//   Sum                     [N, C, 1, 1], [N, 1, H, W], [N, 1, 1, 1] against [N, C, H, W]
//                           (squeeze-excitation); other broadcasts: CPU. With a constant of one
//                           value or one per channel: bias, scale (Max/Min: clip)
//   Div, Pow                by a computed tensor: CPU; by a constant: scale, CPU power
//   Pad                     pad (constant mode, value any; pads as attribute or inputs)
//   Resize, Upsample        nearest: resize_nearest where output row h reads input row h / k
//                           (integer scales; scales=[1,1,k,k] or sizes=), other index mappings
//                           as CPU gathers; linear with half_pixel and integer scales:
//                           resize_bilinear
//   Reshape -> Transpose (0 2 1 3 4) -> Reshape   shuffle_channels (channel shuffle)
//   Split, Slice, Gather    along the channels, consecutive: slice_channels; other axes or
//                           index lists: CPU gather
//   Transpose               CPU (the batch axis stays first)
//   LRN                     lrn
//   Flatten, Reshape,       flatten (to [N, C*H*W]), nothing when the builder dims agree, a
//   Squeeze, Unsqueeze      CPU reshape otherwise
//   Dropout, Identity, Cast nothing (inference; the Dropout mask output is refused)
//   Constant, ConstantOfShape, Shape, and arithmetic, Gather, Slice, Concat, Cast, Transpose,
//   Unsqueeze, Squeeze, Reshape of constants: folded (the shape computations exporters write)
//
// Anything else fails with a sentence naming the node: "ONNX node 3 'conv_5' (Conv): 3-D
// convolutions are not supported". Data types: float32 tensors (int64 for shapes and axes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nvdla/api.hpp"
#include "nvdla/builder.hpp"
#include "nvdla/status.hpp"

namespace nvdla::onnx {

// A dense ONNX tensor in float32 (row-major, ONNX's order).
struct TensorData {
    std::string name;
    std::vector<int64_t> shape;
    std::vector<float> values;

    uint64_t elements() const;
};

// Reads a TensorProto (the .pb files of ONNX's test data) of float32 (or float64, int32, int64,
// converted to float).
NVDLA_API Result<TensorData> read_tensor_file(const std::string& path);
NVDLA_API Result<TensorData> parse_tensor(std::span<const std::byte> bytes);

struct ImportOptions {
    // Graph inputs to take as constants instead of network inputs, by name (ONNX's node tests
    // feed the weights as inputs). Initializers of the same name are replaced.
    std::vector<TensorData> constants;
    // The batch size where the model leaves dimension 0 symbolic ("N", "batch_size").
    int64_t batch = 1;
    // The network's name (default: the graph's).
    std::string name;
};

// A graph input or output and the builder tensor it became.
struct Value {
    std::string name;
    std::vector<int64_t> shape;  // ONNX shape, batch included
    builder::Tensor tensor;      // per batch item, {1, c, h, w}
};

struct Model {
    builder::Network network;
    std::vector<Value> inputs;   // graph inputs that are not constants, in graph order
    std::vector<Value> outputs;  // graph outputs, in graph order (network outputs in this order)
    int64_t batch = 1;           // dimension 0 shared by every input and output of rank >= 2
    int64_t opset = 0;           // the model's ai.onnx opset
    std::string producer;        // producer_name producer_version
};

NVDLA_API Result<Model> import_file(const std::string& path, const ImportOptions& options = {});
NVDLA_API Result<Model> import_bytes(std::span<const std::byte> bytes,
                                     const ImportOptions& options = {});

// A whole ONNX tensor of `value` -> one builder HostTensor per batch item, and back.
NVDLA_API Result<std::vector<builder::HostTensor>> split_batch(const Value& value,
                                                               const TensorData& data);
NVDLA_API Result<TensorData> merge_batch(const Value& value,
                                         const std::vector<builder::HostTensor>& items);

// Runs the float reference of the imported network on whole ONNX inputs (graph input order),
// item by item: the graph outputs.
NVDLA_API Result<std::vector<TensorData>> run_reference(const Model& model,
                                                        const std::vector<TensorData>& inputs);

}  // namespace nvdla::onnx
