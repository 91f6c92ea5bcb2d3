// The builder's network graph (private): one node per layer, each producing one tensor whose id
// is the node's index. Nodes only refer to earlier nodes, so index order is a topological order.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "nvdla/builder.hpp"

namespace nvdla::builder::detail {

enum class Op : uint8_t {
    Input,
    Convolution,
    Deconvolution,
    FullyConnected,
    Pooling,
    Lrn,
    Affine,  // batch norm, scale and bias: y = x * scale[c] + shift[c]
    Relu,
    PRelu,
    Sigmoid,
    Tanh,
    Eltwise,
    Clip,            // clip_min <= y <= clip_max
    Mish,            // x * tanh(softplus(x)); no SDP program computes it
    Pad,             // pads[] with pad_value
    Slice,           // channels [slice_begin, slice_begin + dims.c)
    ResizeNearest,   // scales[]
    ResizeBilinear,  // scales[] (align_corners false)
    Concat,
    Flatten,
    Softmax,
    Cpu,  // cpu_op, and layers the hardware cannot run that fall back to the CPU
};

// "convolution", "batch norm", ... as error messages name them.
const char* op_name(Op op);

struct Node {
    Op op = Op::Input;
    std::string name;
    std::string kind;              // the API call that made it: "batch norm", "scale", "bias"
    std::vector<uint32_t> inputs;  // tensor ids
    Dims4 dims;
    HostLayout layout = HostLayout::NCHW;  // inputs: the declared host layout

    ConvolutionDesc conv;      // Convolution; FullyConnected as a convolution over the input
    DeconvolutionDesc deconv;  // Deconvolution
    PoolingDesc pool;
    LrnDesc lrn;
    EltwiseOp eltwise = EltwiseOp::Sum;
    float clip_min = 0, clip_max = 0;
    std::array<uint32_t, 4> pads{};  // top, left, bottom, right
    float pad_value = 0;
    uint32_t slice_begin = 0;
    std::array<uint32_t, 2> scales{};  // h, w
    // A node an operator added around the one the caller asked for (e.g. the negation of a
    // subtraction): its int8 scale is its first input's, and calibrations need no range for it.
    bool shares_input_scale = false;
    // Another inner node of a composite operator: without a calibrated range, int8 assumes
    // range_gain * range(input 0) + range_offset.
    float range_gain = 0, range_offset = 0;
    // Convolution and FullyConnected: KCRS (c = input channels per group). Deconvolution: as
    // given, (in_channels, out_channels / groups, kh, kw).
    std::vector<float> weights, bias;
    // Affine: per channel (expanded to c values). PRelu: the slopes (c values).
    std::vector<float> scale, shift;
    CpuOpDesc cpu;  // Cpu
};

struct OutputInfo {
    uint32_t tensor = 0;
    std::string name;
    HostLayout layout = HostLayout::NCHW;
};

}  // namespace nvdla::builder::detail

namespace nvdla::builder {

struct Network::Impl {
    std::string name;
    std::vector<detail::Node> nodes;
    std::vector<uint32_t> inputs;
    std::vector<detail::OutputInfo> outputs;
    Status error;

    // "layer 'conv1' (convolution)"
    std::string describe(uint32_t id) const;
};

struct Calibration::Impl {
    std::vector<float> range;                  // by tensor id; 0 = unknown
    std::vector<std::vector<float>> channels;  // by tensor id
    std::vector<bool> fixed;                   // set by set_range
    size_t samples = 0;
    // The samples' inputs (NCHW), for BuildOptions::adaptive_rounding.
    std::vector<std::vector<HostTensor>> inputs;
};

namespace detail {

// Every tensor of the network in float32 NCHW (index = tensor id), for inputs in any layout.
Result<std::vector<std::vector<float>>> evaluate(const Network::Impl& net,
                                                 const std::vector<HostTensor>& inputs);
// One node of the float reference: t[id] from the tensors before it.
void evaluate_node(const Network::Impl& net, uint32_t id, std::vector<std::vector<float>>& t);
// int8 tensor scales (range / 127 per scale group, as the lowering uses them), by tensor id.
Result<std::vector<double>> int8_scales(const Network::Impl& net, const Calibration::Impl* cal);
// BuildOptions::adaptive_rounding (umd/builder/rounding.cpp): moves every convolution's and
// fully connected layer's weights onto the int8 grid point below or above each weight that
// lowers the layer's output error on the calibration samples.
Status round_weights_adaptively(Network::Impl& net, const Calibration::Impl& cal,
                                Quantization quantization);
// The float reference of a CPU operation (umd/builder/cpu_op.cpp): node id's output into y.
void cpu_op_reference(const Network::Impl& net, uint32_t id,
                      const std::vector<std::vector<float>>& tensors, std::vector<float>& y);
// BuildOptions::equalize_channel_ranges (umd/builder/equalize.cpp): rescales the channels of
// convolution inputs where they are made and unscales the convolution's weights (the float
// network computes the same), and the calibrated ranges with them.
void equalize_channel_ranges(Network::Impl& net, Calibration::Impl& cal);

}  // namespace detail

}  // namespace nvdla::builder
