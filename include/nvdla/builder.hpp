// The network builder: describe a network in C++ from layers with float32 weights, build it
// for an NVDLA configuration in fp16 or int8, and get a loadable that nvdla_runtime (and the
// original runtime) runs. A float reference executor of the same network is included so that
// anyone can compare.
//
//   using namespace nvdla::builder;
//   Network net("lenet");
//   Tensor x = net.input("data", {1, 1, 28, 28});
//   x = net.convolution(x, {.out_channels = 20, .kernel_h = 5, .kernel_w = 5}, w1, b1, "conv1");
//   x = net.pooling(x, {.type = PoolingType::Max, .kernel_h = 2, .kernel_w = 2,
//                       .stride_h = 2, .stride_w = 2}, "pool1");
//   ...
//   x = net.fully_connected(x, 10, w3, b3, "ip2");
//   net.output(net.softmax(x, "prob"), "prob");
//
//   Calibration cal;                                  // int8 only: activation ranges
//   for (const auto& sample : samples) cal.add_sample(net, {sample});
//   BuildOptions opt{.config = "nv_small", .precision = nvdla::Precision::Int8,
//                    .calibration = &cal};
//   Result<CompiledNetwork> built = build(net, opt); // loadable bytes + tensor descriptions
//   write built->loadable to lenet.nvdla, or run it:
//   auto rt = nvdla::Runtime::open({.backend = nvdla::BackendChoice::Emu,
//                                   .emu_config = "nv_small"});
//   Result<std::vector<HostTensor>> out = run(*built, **rt, {sample});
//   Result<std::vector<HostTensor>> ref = run_reference(net, {sample});
//
// Conventions:
// - Tensors are 4-D {n, c, h, w}; n must be 1. Host data (HostTensor) is float32, dense, in
//   the layout it says (NCHW or NHWC).
// - Weights are float32 in the order each layer documents (KCRS for convolutions, as ONNX,
//   Caffe and PyTorch store them). Spans passed to a layer are copied.
// - Errors: a layer call with bad arguments records an error naming the layer ("layer 'conv1'
//   (convolution): 150 weights given, 20x1x5x5 = 500 expected") and returns an invalid
//   Tensor; layers given an invalid Tensor return an invalid Tensor without a new error.
//   Network::status() returns the first error; build(), run_reference() and Calibration fail
//   with it. Everything build() cannot map onto the configuration (an unsupported layer, an
//   impossible shape) is a sentence naming the layer, too.
// - Thread safety: a Network is not modified by build(), run_reference() or calibration; those
//   may run concurrently on one Network. Adding layers needs exclusive access.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nvdla/api.hpp"
#include "nvdla/formats/pixel.hpp"
#include "nvdla/hw_config.hpp"
#include "nvdla/runtime.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla::builder {

// A handle to a tensor of one Network (a layer's output or a network input).
struct Tensor {
    static constexpr uint32_t kInvalid = 0xffffffffu;
    uint32_t id = kInvalid;
    bool valid() const { return id != kInvalid; }
    friend bool operator==(const Tensor&, const Tensor&) = default;
};

// A dense float32 host tensor. data.size() == dims.elements().
struct HostTensor {
    Dims4 dims;
    HostLayout layout = HostLayout::NCHW;
    std::vector<float> data;

    // Element (n, c, h, w) whatever the layout.
    float at(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
        return data[index(n, c, h, w)];
    }
    float& at(uint32_t n, uint32_t c, uint32_t h, uint32_t w) { return data[index(n, c, h, w)]; }
    size_t index(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
        return layout == HostLayout::NCHW ? ((size_t(n) * dims.c + c) * dims.h + h) * dims.w + w
                                          : ((size_t(n) * dims.h + h) * dims.w + w) * dims.c + c;
    }
};

// A zero-filled tensor.
NVDLA_API HostTensor make_host_tensor(Dims4 dims, HostLayout layout = HostLayout::NCHW);
// The same values in another layout.
NVDLA_API HostTensor to_layout(const HostTensor& t, HostLayout layout);

// ---- Layer descriptions ----

// 2-D convolution. Output size per axis: (in + pad_begin + pad_end - dilation*(k-1) - 1) /
// stride + 1. Weights: out_channels x (in_channels / groups) x kernel_h x kernel_w (KCRS).
struct ConvolutionDesc {
    uint32_t out_channels = 0;
    uint32_t kernel_h = 1, kernel_w = 1;
    uint32_t stride_h = 1, stride_w = 1;
    uint32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    uint32_t dilation_h = 1, dilation_w = 1;
    uint32_t groups = 1;  // in_channels and out_channels must both divide by it
};

// 2-D transposed convolution (deconvolution). Output size per axis: (in - 1) * stride +
// kernel - pad_begin - pad_end + output_pad. Weights: in_channels x (out_channels / groups) x
// kernel_h x kernel_w (the ONNX ConvTranspose / PyTorch / Caffe order).
struct DeconvolutionDesc {
    uint32_t out_channels = 0;
    uint32_t kernel_h = 1, kernel_w = 1;
    uint32_t stride_h = 1, stride_w = 1;
    uint32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    uint32_t groups = 1;
    // Extra output rows/columns at the bottom/right (ONNX output_padding), below the stride.
    uint32_t output_pad_h = 0, output_pad_w = 0;
};

enum class PoolingType : uint8_t { Max, Average };

// Pooling over kernel_h x kernel_w windows. Output size per axis: (in + pad_begin + pad_end -
// kernel) / stride + 1 (floor; for "ceil mode" add the missing pad at the end). Average
// pooling divides by the whole window, padding included (count_include_pad); excluding the
// padding is only possible without padding.
struct PoolingDesc {
    PoolingType type = PoolingType::Max;
    uint32_t kernel_h = 1, kernel_w = 1;
    uint32_t stride_h = 1, stride_w = 1;
    uint32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    bool count_include_pad = true;
};

// Local response normalisation across channels (Caffe/ONNX LRN):
// y = x / (k + alpha / local_size * sum over local_size channels of x^2) ^ beta.
struct LrnDesc {
    uint32_t local_size = 5;  // 3, 5, 7 or 9
    float alpha = 1e-4f;
    float beta = 0.75f;
    float k = 1.0f;
};

// Sub: a - b. Min: element-wise minimum. Div: a / b (the CPU: the hardware cannot divide by a
// computed tensor).
enum class EltwiseOp : uint8_t { Sum, Product, Max, Sub, Min, Div };

// An operator the hardware cannot run, computed by the runtime on the CPU as a CPU task between
// hardware tasks (BuildOptions::cpu_fallback). Dims are the builder's {n, c, h, w} (per batch
// item, n = 1); an axis is 1 (c), 2 (h) or 3 (w).
enum class CpuOpKind : uint8_t {
    Softmax,     // axis ints[0]
    LogSoftmax,  // axis ints[0]
    // Unary, element by element.
    Exp,
    Log,
    Sqrt,
    Reciprocal,
    Neg,
    Abs,
    Erf,
    Sigmoid,
    Tanh,
    Relu,
    // floats[0] = exponent
    PowScalar,
    // Binary with broadcasting (each of c, h, w equal or 1 in either input).
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Pow,
    // Over the axes in ints; the reduced axes become 1.
    ReduceSum,
    ReduceMean,
    ReduceMax,
    ReduceMin,
    // a {1, C, H, K} x b {1, C, K, W} -> {1, C, H, W} (batched over C; b may have C = 1).
    MatMul,
    // Over the trailing axes from ints[0] to 3; floats = {epsilon, gamma[...], beta[...]} with
    // gamma and beta over those axes (empty: 1 and 0).
    LayerNorm,
    // Along axis ints[0], the indices ints[1...] (non-negative).
    Gather,
    // Output axis i (1..3) is input axis ints[i - 1].
    Transpose,
    // Same elements in NCHW order, new dims (out_dims).
    Reshape,
    // Unary: x * tanh(softplus(x)). (New kinds go last: the loadable stores 16 + kind.)
    Mish,
};

struct CpuOpDesc {
    CpuOpKind kind = CpuOpKind::Exp;
    std::vector<int64_t> ints;
    std::vector<float> floats;
    Dims4 out_dims;  // Reshape: required; others: computed (left {0,0,0,0})
};

// ---- The network ----

class NVDLA_API Network {
  public:
    explicit Network(std::string name = "network");
    ~Network();
    Network(Network&&) noexcept;
    Network& operator=(Network&&) noexcept;
    Network(const Network&) = delete;
    Network& operator=(const Network&) = delete;

    const std::string& name() const;

    // A network input: its dims (n = 1) and the layout of the float data callers give for it
    // (run_reference, run, Calibration, pack_input accept either layout; this one is what
    // TensorDesc::host_layout reports).
    Tensor input(const std::string& name, Dims4 dims, HostLayout layout = HostLayout::NCHW);

    // Convolution; bias empty or out_channels values.
    Tensor convolution(Tensor x, const ConvolutionDesc& desc, std::span<const float> weights,
                       std::span<const float> bias = {}, const std::string& name = "");
    // Transposed convolution; bias empty or out_channels values.
    Tensor deconvolution(Tensor x, const DeconvolutionDesc& desc, std::span<const float> weights,
                         std::span<const float> bias = {}, const std::string& name = "");
    // Fully connected: every output is a dot product with the whole input, flattened in NCHW
    // order. Weights: outputs x (c * h * w) (ONNX Gemm with transB = 1, Caffe InnerProduct).
    // The output is {1, outputs, 1, 1}.
    Tensor fully_connected(Tensor x, uint32_t outputs, std::span<const float> weights,
                           std::span<const float> bias = {}, const std::string& name = "");
    Tensor pooling(Tensor x, const PoolingDesc& desc, const std::string& name = "");
    Tensor lrn(Tensor x, const LrnDesc& desc, const std::string& name = "");
    // y = (x - mean) / sqrt(variance + epsilon) * gamma + beta, per channel.
    Tensor batch_norm(Tensor x, std::span<const float> mean, std::span<const float> variance,
                      std::span<const float> gamma, std::span<const float> beta,
                      float epsilon = 1e-5f, const std::string& name = "");
    // y = x * scale + shift, per channel (one value each: the same for every channel; shift
    // may be empty).
    Tensor scale(Tensor x, std::span<const float> scale, std::span<const float> shift = {},
                 const std::string& name = "");
    // y = x + bias, per channel (one value: every channel).
    Tensor bias(Tensor x, std::span<const float> bias, const std::string& name = "");
    Tensor relu(Tensor x, const std::string& name = "");
    // y = x for x >= 0, slope * x otherwise; slopes: one per channel or one for all (leaky
    // ReLU).
    Tensor prelu(Tensor x, std::span<const float> slopes, const std::string& name = "");
    // Through the SDP lookup table: configurations with NVDLA_FEATURE_SDP_LUT only.
    Tensor sigmoid(Tensor x, const std::string& name = "");
    Tensor tanh(Tensor x, const std::string& name = "");
    // Element by element (b may broadcast: see below). Sub and Min as a - b and min(a, b).
    Tensor eltwise(Tensor a, Tensor b, EltwiseOp op, const std::string& name = "");
    // Along the channels; every input has the same n, h, w. Inputs starting on a whole atom
    // of channels are written in place; otherwise 1x1 convolutions move each input to its
    // channels and sum them.
    Tensor concat(std::span<const Tensor> inputs, const std::string& name = "");
    // {1, c, h, w} -> {1, c*h*w, 1, 1} in NCHW order. Free when h = w = 1 or when only fully
    // connected layers consume it; otherwise build() reports it as unsupported.
    Tensor flatten(Tensor x, const std::string& name = "");
    // Softmax over the channels at every position; runs on the CPU (an EMU task).
    Tensor softmax(Tensor x, const std::string& name = "");

    // ---- Operators of post-2018 vision models ----
    // y = min(max(x, min), max); either bound may be -/+infinity (ReLU6: 0, 6). SDP X-stage
    // ALU max/min with register operands.
    Tensor clip(Tensor x, float min, float max, const std::string& name = "");
    // y = max(0, min(1, alpha * x + beta)) (ONNX HardSigmoid; PyTorch's: alpha 1/6, beta 1/2).
    Tensor hard_sigmoid(Tensor x, float alpha = 0.2f, float beta = 0.5f,
                        const std::string& name = "");
    // y = x * max(0, min(1, x / 6 + 1 / 2)).
    Tensor hard_swish(Tensor x, const std::string& name = "");
    // y = x * sigmoid(x) (SiLU / Swish).
    Tensor silu(Tensor x, const std::string& name = "");
    // y = x * tanh(softplus(x)): a CPU operation (CpuOpKind::Mish; no SDP program computes it).
    Tensor mish(Tensor x, const std::string& name = "");
    // eltwise() with broadcasting: b's dims may be {1, C, 1, 1}, {1, 1, H, W} or {1, 1, 1, 1}
    // against a's {1, C, H, W} (squeeze-excitation); a and b may also be swapped.
    // Constant padding of the plane with `value`: folded into the consumer's padding where it
    // fits (value 0 before a convolution, -inf-like before max pooling), else an operation.
    Tensor pad(Tensor x, uint32_t top, uint32_t left, uint32_t bottom, uint32_t right,
               float value = 0.0f, const std::string& name = "");
    // Nearest-neighbour upsampling by integer factors: y[h][w] = x[h / sh][w / sw].
    Tensor resize_nearest(Tensor x, uint32_t scale_h, uint32_t scale_w,
                          const std::string& name = "");
    // Bilinear upsampling by an integer factor, align_corners false (half-pixel centres, edges
    // clamped), as ONNX Resize linear / PyTorch interpolate.
    Tensor resize_bilinear(Tensor x, uint32_t scale_h, uint32_t scale_w,
                           const std::string& name = "");
    // Channels [begin, end) of x (Split, Slice and Gather along channels).
    Tensor slice_channels(Tensor x, uint32_t begin, uint32_t end, const std::string& name = "");
    // Channel shuffle with c = groups * k: output channel i * groups + g is input channel
    // g * k + i (ShuffleNet's reshape to [groups, k], transpose, flatten).
    Tensor shuffle_channels(Tensor x, uint32_t groups, const std::string& name = "");
    // A CPU task (BuildOptions::cpu_fallback must allow it): an operator the hardware cannot
    // run. Inputs are feature tensors of this network.
    Tensor cpu_op(std::span<const Tensor> inputs, const CpuOpDesc& desc,
                  const std::string& name = "");

    // Marks a tensor as a network output (bound by the application), in order of the calls.
    // `layout` is the layout run() and unpack_output() give its values in. A network input
    // may be an output too (it is copied).
    void output(Tensor x, const std::string& name, HostLayout layout = HostLayout::NCHW);

    // The first error any call recorded, or success.
    Status status() const;
    // A tensor's dims ({0, 0, 0, 0} for an invalid handle).
    Dims4 dims(Tensor t) const;
    // The name of the layer producing t (the input's name for inputs), "" if invalid.
    std::string tensor_name(Tensor t) const;
    std::vector<Tensor> inputs() const;
    std::vector<Tensor> outputs() const;
    // Layers added so far (inputs not counted).
    size_t layer_count() const;

    struct Impl;
    const Impl& impl() const { return *impl_; }

  private:
    std::unique_ptr<Impl> impl_;
};

// ---- Calibration (int8) ----

// Activation ranges for int8: the largest magnitude each tensor of one Network takes, per
// tensor and per channel, collected by running the float reference on sample inputs (or set
// by the caller, e.g. from an importer's own table). Scales are symmetric: scale = range/127.
class NVDLA_API Calibration {
  public:
    Calibration();
    ~Calibration();
    Calibration(const Calibration&);
    Calibration& operator=(const Calibration&);
    Calibration(Calibration&&) noexcept;
    Calibration& operator=(Calibration&&) noexcept;

    // Runs the float reference on one sample (one HostTensor per network input, in order)
    // and widens every tensor's range; keeps the inputs (BuildOptions::adaptive_rounding).
    Status add_sample(const Network& net, const std::vector<HostTensor>& inputs);
    // Sets a tensor's range (max |x|, > 0), replacing what samples gave.
    void set_range(Tensor t, float max_abs);
    // The range of a tensor, if known.
    std::optional<float> range(Tensor t) const;
    // Per-channel ranges of a tensor from the samples (empty if unknown); for inspection,
    // activations are quantized per tensor.
    std::vector<float> channel_ranges(Tensor t) const;
    size_t samples() const;

    struct Impl;
    const Impl& impl() const { return *impl_; }

  private:
    std::unique_ptr<Impl> impl_;
};

// ---- Building ----

enum class Quantization : uint8_t {
    PerTensor,   // one int8 scale per weight tensor
    PerChannel,  // one int8 scale per output channel of the weights (SDP per-channel operands)
};

// How an input reaches the hardware.
struct InputFormat {
    // false: a feature cube in the network precision (TensorDesc says the layout).
    // true: a pitch-linear single-plane image in pixel_format that the convolutions reading it
    // take in image mode (every consumer must be a convolution without groups or dilation);
    // the network sees (pixel - mean[c]) * scale for channel c (R, G, B, A order; the CDMA
    // subtracts whole-pixel means, so means are rounded; fp16 pixel formats take mean 0).
    // For such an input, run() and pack_input() take the pixel component values (0..255 for
    // 8-bit formats) while run_reference() and Calibration take the network's values.
    bool image = false;
    PixelFormat pixel_format = PixelFormat::R8;
    std::array<float, 4> mean{};
    float scale = 1.0f;
};

struct BuildOptions {
    // A configuration of nvdla::hw_configs(): "nv_full", "nv_small", "nv_small_256",
    // "nv_small_256_full", "nv_medium_512", "nv_medium_1024_full", "nv_large".
    std::string config = "nv_full";
    // Fp16 (configurations with fp16) or Int8.
    Precision precision = Precision::Fp16;
    // Int8: weight scales per tensor or per output channel.
    Quantization quantization = Quantization::PerChannel;
    // Int8: activation ranges (required; every tensor needs one). Fp16: optional, used for
    // the LRN lookup table's range (without it LRN inputs are assumed within +-8).
    const Calibration* calibration = nullptr;
    // Per network input, by index; inputs beyond the vector are feature cubes.
    std::vector<InputFormat> inputs;
    // Let 3x3 stride-1 convolutions run as Winograd where it saves work (fp16, configurations
    // with NVDLA_FEATURE_WINOGRAD).
    bool winograd = true;
    // Compress sparse weights where the compressed surfaces are smaller (configurations with
    // NVDLA_FEATURE_WEIGHT_COMPRESSION).
    bool compress_weights = true;
    // Fuse pooling into the convolution/SDP operation that feeds it where the hardware can.
    bool fuse_pooling = true;
    // Sigmoid/tanh LUT input range [-lut_range, lut_range]; beyond it the edge values hold.
    float lut_range = 8.0f;
    // Layers the hardware cannot run become CPU tasks (cpu_op layers, and hardware layers the
    // configuration cannot map). false: build() fails with the sentence naming the layer.
    bool cpu_fallback = true;
    // Int8 with per-channel weight scales: narrow the spread of channel ranges within the
    // tensors a convolution reads (cross-layer equalization through ReLUs; docs/builder.md).
    bool equalize_channel_ranges = false;
    // Int8, with a calibration from samples (add_sample): each convolution and fully connected
    // weight rounded down or up, whichever lowers its layer's output error on the samples as
    // the int8 network computes them (adaptive rounding; docs/builder.md). false: every weight
    // to its nearest int8 value.
    bool adaptive_rounding = false;
};

// A network input or output as the loadable binds it.
struct TensorDesc {
    std::string name;
    uint32_t index = 0;  // bind index among the inputs (or outputs)
    Dims4 dims;          // the network tensor's {1, c, h, w}
    HostLayout host_layout = HostLayout::NCHW;
    Precision precision = Precision::Fp16;  // stored elements
    // Feature cube (kPixelFormatFeature, or kPixelFormatFeatureX8 on 8-byte atoms) or, for an
    // image input, the PixelFormat value.
    uint8_t pixel_format = kPixelFormatFeature;
    const HwConfig* hw = nullptr;
    uint32_t atom_bytes = 32;
    uint32_t line_stride = 0, surface_stride = 0;
    uint64_t size_bytes = 0;  // bytes of the buffer (what Context::input/output hold)
    // Int8: real value = scale * stored value; fp16: 1. An image input: see `image`.
    float scale = 1.0f;
    std::optional<InputFormat> image;
};

struct CompiledNetwork {
    std::vector<std::byte> loadable;  // the loadable file's bytes (FlatBuffers, schema 0.7)
    std::string config;
    const HwConfig* hw = nullptr;
    Precision precision = Precision::Fp16;
    std::vector<TensorDesc> inputs, outputs;
    // What each layer became, one line per step (operations that run as one) in execution
    // order: "conv1: CONV direct int8 20x1x5x5 + SDP X1 bias+requantize -> PDP max 2x2/2x2
    // (pool1)"; "prob: CPU softmax axis 1 10x1x1 -> 10x1x1 int8".
    std::vector<std::string> operations;
    uint32_t hardware_tasks = 0, cpu_tasks = 0;
    // The layers that run on the CPU, one line each ("sm: CPU softmax axis 3").
    std::vector<std::string> cpu_operations;
    // Multiply-accumulates the hardware performs (padding and block-diagonal zeros included)
    // and the ones the network defines.
    uint64_t hardware_macs = 0, model_macs = 0;
    // true when a CPU task needs this runtime (operations beyond the original runtime's
    // softmax and power).
    bool needs_extended_cpu_tasks = false;
    uint64_t weight_bytes = 0;      // weight, WMB/WGS and operand surfaces in the loadable
    uint64_t activation_bytes = 0;  // device memory for activations after buffer reuse
};

// Builds the network for the configuration and precision. Fails with a sentence naming the
// layer for anything the configuration cannot run.
NVDLA_API Result<CompiledNetwork> build(const Network& net, const BuildOptions& options = {});

// Host float data <-> the bytes of a bound tensor (quantized with TensorDesc::scale for int8,
// converted to fp16 otherwise; images as pixel components). dst/src hold size_bytes.
NVDLA_API Status pack_input(const TensorDesc& desc, const HostTensor& value,
                            std::span<std::byte> dst);
NVDLA_API Result<HostTensor> unpack_output(const TensorDesc& desc, std::span<const std::byte> src);

// Runs a compiled network once on rt (load, context, pack inputs, submit, wait, unpack).
// Inputs in order of CompiledNetwork::inputs; outputs in their declared layouts.
NVDLA_API Result<std::vector<HostTensor>> run(const CompiledNetwork& net, Runtime& rt,
                                              const std::vector<HostTensor>& inputs);

// ---- The float reference ----

// Runs the network in float32 on the CPU (straightforward C++): the outputs in order, in
// their declared layouts.
NVDLA_API Result<std::vector<HostTensor>> run_reference(const Network& net,
                                                        const std::vector<HostTensor>& inputs);

// How far `actual` is from `expected` (same dims; layouts may differ).
struct Difference {
    double max_abs = 0;   // largest |a - e|
    double mean_abs = 0;  // mean |a - e|
    double max_ref = 0;   // largest |e|
    size_t worst = 0;     // NCHW index of the largest difference
    // max_abs relative to the reference's largest magnitude (0 when both are 0).
    double relative() const { return max_ref > 0 ? max_abs / max_ref : max_abs; }
};
NVDLA_API Result<Difference> compare(const HostTensor& actual, const HostTensor& expected);

}  // namespace nvdla::builder
