// The ONNX importer against the per-operator cases of Debian's libonnx-testdata
// (/usr/share/libonnx-testdata/data; NVDLA_ONNX_TESTDATA overrides): each supported case is
// imported, its float reference checked against the case's expected output, then built for
// nv_full (fp16 and int8) and nv_small (int8) and run on the emulated NVDLA, every batch item.
// Cases the importer or the builder cannot take must fail with a sentence naming the node or
// layer. Without the package every test skips and says so.
//
// Thresholds (docs/onnx.md, "Tests against Debian's libonnx-testdata"):
// - fp16: the reference runs on the inputs and constants rounded to fp16, its output rounded to
//   fp16. Convolutions and matrix products: the seed's CC threshold (direct or Winograd,
//   whichever is larger) with max_exp over the whole data and weight tensors; pooling and LRN:
//   the seed's PDP/CDP window rule or one fp16 step; SDP operations: two fp16 steps; the
//   lookup-table functions (sigmoid, tanh, LRN's power): 0.01; the CPU softmax: 2^-8.
// - int8: the worst case of the quantization: two output steps plus half an input step times
//   the operation's gain plus half a weight step times the sum of |inputs| over the window.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nvdla/builder.hpp"
#include "nvdla/onnx.hpp"
#include "nvdla/precision/compare.hpp"
#include "nvdla/precision/fp16.hpp"
#include "nvdla/runtime.hpp"

namespace {

namespace fs = std::filesystem;
using nvdla::onnx::TensorData;

std::string testdata_dir() {
    if (const char* env = std::getenv("NVDLA_ONNX_TESTDATA")) return env;
    return "/usr/share/libonnx-testdata/data";
}

// What an operator does to errors, for the thresholds.
enum class Kind {
    Mac,        // convolution, deconvolution, matrix product
    Window,     // pooling (PDP)
    Pointwise,  // ReLU, concat, identity, bias/scale with gain 1, PReLU
    Affine,     // batch norm: gain from its parameters
    Eltwise,    // two feature tensors
    Lut,        // sigmoid, tanh
    Lrn,        // CDP
    Softmax,    // CPU softmax
    Cpu,        // other CPU tasks (fp16 in and out, float inside)
};

struct Case {
    const char* dir;             // under the test data directory
    std::vector<int> constants;  // graph input indices fed as constants (weights)
    Kind kind = Kind::Pointwise;
    const char* refused = nullptr;  // the importer must refuse it with this text
    // The builder may refuse it (describing or building) with this text, naming the layer; if
    // it takes it, the results must match as for any case.
    const char* may_refuse = nullptr;
    // nv_small must refuse it (for a unit it lacks) with this text; every other target builds.
    const char* small_refusal = nullptr;
};

// The supported cases, and a few that the importer refuses with a reason.
const std::vector<Case>& cases() {
    static const std::vector<Case> all = {
        // Convolution.
        {"node/test_basic_conv_with_padding", {1}, Kind::Mac},
        {"node/test_basic_conv_without_padding", {1}, Kind::Mac},
        {"node/test_conv_with_autopad_same", {1}, Kind::Mac},
        {"node/test_conv_with_strides_padding", {1}, Kind::Mac},
        {"node/test_conv_with_strides_no_padding", {1}, Kind::Mac},
        {"node/test_conv_with_strides_and_asymmetric_padding", {1}, Kind::Mac},
        {"pytorch-converted/test_Conv2d", {}, Kind::Mac},
        {"pytorch-converted/test_Conv2d_no_bias", {}, Kind::Mac},
        {"pytorch-converted/test_Conv2d_padding", {}, Kind::Mac},
        {"pytorch-converted/test_Conv2d_strided", {}, Kind::Mac},
        {"pytorch-converted/test_Conv2d_dilated", {}, Kind::Mac},
        {"pytorch-converted/test_Conv2d_groups", {}, Kind::Mac},
        {"pytorch-converted/test_Conv2d_depthwise", {}, Kind::Mac},
        {"pytorch-converted/test_Conv2d_depthwise_padded", {}, Kind::Mac},
        {"pytorch-converted/test_Conv2d_depthwise_strided", {}, Kind::Mac},
        {"pytorch-converted/test_Conv2d_depthwise_with_multiplier", {}, Kind::Mac},
        {"pytorch-converted/test_Conv1d", {}, Kind::Mac},
        {"pytorch-converted/test_Conv1d_stride", {}, Kind::Mac},
        {"pytorch-converted/test_Conv1d_pad1", {}, Kind::Mac},
        {"node/test_convtranspose", {1}, Kind::Mac},
        {"node/test_convtranspose_pads", {1}, Kind::Mac},
        {"node/test_convtranspose_1d", {1}, Kind::Mac},
        {"pytorch-converted/test_ConvTranspose2d", {}, Kind::Mac},
        {"pytorch-converted/test_ConvTranspose2d_no_bias", {}, Kind::Mac},
        {"node/test_convtranspose_autopad_same", {1}, Kind::Mac},
        {"pytorch-converted/test_Conv3d", {}, Kind::Mac, "tensors of rank 5 are not supported"},
        {"node/test_convtranspose_pad", {1}, Kind::Mac, "beyond the end padding"},
        // Pooling.
        {"node/test_maxpool_2d_default", {}, Kind::Window},
        {"node/test_maxpool_2d_pads", {}, Kind::Window},
        {"node/test_maxpool_2d_strides", {}, Kind::Window},
        {"node/test_maxpool_2d_precomputed_pads", {}, Kind::Window},
        {"node/test_maxpool_2d_precomputed_strides", {}, Kind::Window},
        {"node/test_maxpool_2d_precomputed_same_upper", {}, Kind::Window},
        {"node/test_maxpool_2d_same_upper", {}, Kind::Window},
        {"node/test_maxpool_2d_same_lower", {}, Kind::Window},
        {"node/test_maxpool_2d_ceil", {}, Kind::Window},
        {"node/test_maxpool_1d_default", {}, Kind::Window},
        {"pytorch-converted/test_MaxPool2d", {}, Kind::Window},
        {"node/test_averagepool_2d_default", {}, Kind::Window},
        {"node/test_averagepool_2d_strides", {}, Kind::Window},
        {"node/test_averagepool_2d_precomputed_strides", {}, Kind::Window},
        {"node/test_averagepool_2d_pads_count_include_pad", {}, Kind::Window},
        {"node/test_averagepool_2d_precomputed_pads_count_include_pad", {}, Kind::Window},
        {"node/test_averagepool_1d_default", {}, Kind::Window},
        {"pytorch-converted/test_AvgPool2d", {}, Kind::Window},
        {"pytorch-converted/test_AvgPool2d_stride", {}, Kind::Window},
        {"node/test_globalmaxpool", {}, Kind::Window},
        {"node/test_globalmaxpool_precomputed", {}, Kind::Window},
        {"node/test_globalaveragepool", {}, Kind::Window},
        {"node/test_globalaveragepool_precomputed", {}, Kind::Window},
        {"node/test_maxpool_2d_dilations", {}, Kind::Window, "dilations are not supported"},
        {"node/test_maxpool_with_argmax_2d_precomputed_pads",
         {},
         Kind::Window,
         "the indices output is not supported"},
        {"node/test_averagepool_2d_ceil", {}, Kind::Window, "which the average would count"},
        // Batch normalization.
        {"node/test_batchnorm_example", {1, 2, 3, 4}, Kind::Affine},
        {"node/test_batchnorm_epsilon", {1, 2, 3, 4}, Kind::Affine},
        {"pytorch-converted/test_BatchNorm2d_eval", {}, Kind::Affine},
        {"pytorch-converted/test_BatchNorm2d_momentum_eval", {}, Kind::Affine},
        {"node/test_batchnorm_example_training_mode",
         {1, 2, 3, 4},
         Kind::Affine,
         "the training form"},
        // Gemm and MatMul.
        {"node/test_gemm_default_no_bias", {1}, Kind::Mac},
        {"node/test_gemm_default_vector_bias", {1, 2}, Kind::Mac},
        {"node/test_gemm_default_zero_bias", {1, 2}, Kind::Mac},
        {"node/test_gemm_default_scalar_bias", {1, 2}, Kind::Mac},
        {"node/test_gemm_default_single_elem_vector_bias", {1, 2}, Kind::Mac},
        {"node/test_gemm_alpha", {1, 2}, Kind::Mac},
        {"node/test_gemm_beta", {1, 2}, Kind::Mac},
        {"node/test_gemm_transposeB", {1, 2}, Kind::Mac},
        {"node/test_matmul_2d", {1}, Kind::Mac},
        {"pytorch-converted/test_Linear", {}, Kind::Mac},
        {"pytorch-converted/test_Linear_no_bias", {}, Kind::Mac},
        {"node/test_gemm_transposeA", {1, 2}, Kind::Mac, "transA is not supported"},
        {"node/test_gemm_default_matrix_bias", {1, 2}, Kind::Mac, "C of shape [3, 4]"},
        // Activations.
        {"node/test_relu", {}, Kind::Pointwise},
        {"pytorch-converted/test_ReLU", {}, Kind::Pointwise},
        {"node/test_leakyrelu", {}, Kind::Pointwise},
        {"node/test_leakyrelu_default", {}, Kind::Pointwise},
        {"node/test_leakyrelu_example", {}, Kind::Pointwise},
        {"pytorch-converted/test_LeakyReLU", {}, Kind::Pointwise},
        {"pytorch-converted/test_PReLU_2d", {}, Kind::Pointwise},
        {"pytorch-converted/test_PReLU_2d_multiparam", {}, Kind::Pointwise},
        {"node/test_prelu_broadcast", {1}, Kind::Pointwise, "does not broadcast per channel"},
        {"node/test_sigmoid", {}, Kind::Lut},
        {"node/test_sigmoid_example", {}, Kind::Lut},
        {"pytorch-converted/test_Sigmoid", {}, Kind::Lut},
        {"node/test_tanh", {}, Kind::Lut},
        {"pytorch-converted/test_Tanh", {}, Kind::Lut},
        // Softmax.
        {"node/test_softmax_axis_1", {}, Kind::Softmax},
        {"node/test_softmax_example", {}, Kind::Softmax},
        {"node/test_softmax_large_number", {}, Kind::Softmax},
        {"pytorch-converted/test_Softmax", {}, Kind::Softmax},
        {"node/test_softmax_axis_0", {}, Kind::Softmax, "is the batch dimension"},
        {"node/test_softmax_axis_2", {}, Kind::Softmax},
        {"node/test_softmax_default_axis", {}, Kind::Softmax},
        {"node/test_softmax_negative_axis", {}, Kind::Softmax},
        {"node/test_logsoftmax_axis_1", {}, Kind::Softmax},
        {"node/test_logsoftmax_axis_2", {}, Kind::Softmax},
        // Concat and element-wise operations.
        {"node/test_concat_2d_axis_1", {}, Kind::Pointwise},
        {"node/test_concat_2d_axis_negative_1", {}, Kind::Pointwise},
        {"node/test_concat_3d_axis_1", {}, Kind::Pointwise},
        {"node/test_concat_3d_axis_negative_2", {}, Kind::Pointwise},
        {"node/test_concat_1d_axis_0", {}, Kind::Pointwise},
        {"node/test_concat_2d_axis_0", {}, Kind::Pointwise, "is the batch dimension"},
        {"node/test_add", {}, Kind::Eltwise},
        {"node/test_mul", {}, Kind::Eltwise},
        {"node/test_sum_two_inputs", {}, Kind::Eltwise},
        {"node/test_add_bcast", {}, Kind::Eltwise, "do not broadcast per batch item"},
        {"node/test_sub", {}, Kind::Eltwise},
        {"node/test_max_two_inputs", {}, Kind::Eltwise},
        {"node/test_min_two_inputs", {}, Kind::Eltwise},
        {"node/test_div", {}, Kind::Cpu},
        // LRN, Flatten, identities.
        {"node/test_lrn", {}, Kind::Lrn},
        {"node/test_lrn_default", {}, Kind::Lrn},
        {"node/test_flatten_axis1", {}, Kind::Pointwise, nullptr, "flatten"},
        {"node/test_flatten_axis0", {}, Kind::Pointwise, "at axis 0"},
        {"node/test_identity", {}, Kind::Pointwise},
        {"node/test_dropout_default", {}, Kind::Pointwise},
        // Clip and the hard activations: SDP ALU operations (hard sigmoid: alpha * x + beta in
        // fp16 before the clip, as batch norm's scale and shift).
        {"node/test_clip_default_inbounds", {}, Kind::Pointwise},
        {"node/test_clip", {1, 2}, Kind::Pointwise},
        {"node/test_clip_example", {1, 2}, Kind::Pointwise},
        {"node/test_clip_inbounds", {1, 2}, Kind::Pointwise},
        {"node/test_clip_outbounds", {1, 2}, Kind::Pointwise},
        {"node/test_clip_splitbounds", {1, 2}, Kind::Pointwise},
        {"node/test_clip_default_min", {1}, Kind::Pointwise},
        {"node/test_clip_default_max", {1}, Kind::Pointwise},
        {"node/test_hardsigmoid", {}, Kind::Affine},
        {"node/test_hardsigmoid_default", {}, Kind::Affine},
        {"node/test_hardsigmoid_example", {}, Kind::Affine},
        {"node/test_hardswish", {}, Kind::Lut},
        // Reductions over the channels (a [N, C, L] input): CPU tasks.
        {"node/test_reduce_mean_keepdims_random", {}, Kind::Cpu},
        {"node/test_reduce_max_do_not_keepdims_random", {}, Kind::Cpu},
        {"node/test_reduce_sum_keepdims_random", {1}, Kind::Cpu},
        {"node/test_reduce_mean_default_axes_keepdims_random",
         {},
         Kind::Cpu,
         "reducing over the batch"},
        // Functions without a hardware mapping: CPU tasks.
        {"node/test_abs", {}, Kind::Cpu},
        {"node/test_neg", {}, Kind::Cpu},
        {"node/test_exp", {}, Kind::Cpu},
        {"node/test_sqrt", {}, Kind::Cpu},
        {"node/test_erf", {}, Kind::Cpu},
        {"node/test_softplus", {}, Kind::Cpu},
        {"node/test_matmul_3d", {}, Kind::Cpu},
        {"node/test_matmul_4d", {}, Kind::Cpu},
        // Slices (these cases slice the batch), transposes, unsqueeze.
        {"node/test_slice", {1, 2, 3, 4}, Kind::Pointwise, "is the batch dimension"},
        {"node/test_slice_neg_steps", {1, 2, 3, 4}, Kind::Pointwise, "is the batch dimension"},
        {"node/test_slice_negative_axes", {1, 2, 3}, Kind::Pointwise, "is the batch dimension"},
        {"node/test_transpose_all_permutations_1", {}, Kind::Pointwise},
        {"node/test_transpose_default", {}, Kind::Pointwise, "moves the batch axis"},
        {"node/test_unsqueeze_axis_1", {1}, Kind::Pointwise},
        // Resizing.
        {"node/test_resize_upsample_scales_nearest", {1, 2}, Kind::Pointwise},
        {"node/test_resize_upsample_sizes_nearest", {1, 2, 3}, Kind::Pointwise},
        {"node/test_resize_upsample_sizes_nearest_ceil_half_pixel", {1, 2, 3}, Kind::Pointwise},
        {"node/test_resize_upsample_sizes_nearest_floor_align_corners", {1, 2, 3}, Kind::Pointwise},
        {"node/test_resize_downsample_scales_nearest", {1, 2}, Kind::Pointwise},
        {"node/test_upsample_nearest", {1}, Kind::Pointwise},
        {"node/test_resize_upsample_scales_linear_align_corners",
         {1, 2},
         Kind::Pointwise,
         "is not supported (half_pixel by an integer factor is)"},
        {"node/test_constant_pad", {1, 2}, Kind::Pointwise},
    };
    return all;
}

struct Target {
    const char* config;
    nvdla::Precision precision;
};

// A case's files.
struct Loaded {
    std::vector<std::byte> model;
    std::vector<TensorData> inputs;  // every input_N.pb in order
    TensorData output;
};

std::optional<Loaded> load(const std::string& dir, std::string& why) {
    std::ifstream in(dir + "/model.onnx", std::ios::binary);
    if (!in) {
        why = dir + "/model.onnx is missing";
        return std::nullopt;
    }
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Loaded l;
    l.model.resize(chars.size());
    std::transform(chars.begin(), chars.end(), l.model.begin(),
                   [](char c) { return static_cast<std::byte>(c); });
    const std::string set = dir + "/test_data_set_0";
    for (int i = 0;; ++i) {
        const std::string path = set + "/input_" + std::to_string(i) + ".pb";
        if (!fs::exists(path)) break;
        auto t = nvdla::onnx::read_tensor_file(path);
        if (!t) {
            why = t.message();
            return std::nullopt;
        }
        l.inputs.push_back(*t);
    }
    auto out = nvdla::onnx::read_tensor_file(set + "/output_0.pb");
    if (!out) {
        why = out.message();
        return std::nullopt;
    }
    l.output = *out;
    return l;
}

// The graph's input names (non-initializer), initializers and its main operator (the first
// node that is not a Transpose or Constant), read with protobuf directly.
struct GraphInfo {
    std::vector<std::string> inputs;
    std::vector<TensorData> initializers;
    std::string op;
    std::vector<std::string> op_inputs;
    std::vector<int64_t> kernel_shape;
};

GraphInfo graph_info(const std::vector<std::byte>& bytes) {
    ::onnx::ModelProto proto;
    EXPECT_TRUE(proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
    GraphInfo g;
    std::vector<std::string> init_names;
    for (const auto& init : proto.graph().initializer()) {
        init_names.push_back(init.name());
        std::string serialized;
        init.SerializeToString(&serialized);
        std::vector<std::byte> b(serialized.size());
        std::memcpy(b.data(), serialized.data(), serialized.size());
        auto t = nvdla::onnx::parse_tensor(b);
        EXPECT_TRUE(t) << t.message();
        if (t) g.initializers.push_back(*t);
    }
    for (const auto& in : proto.graph().input())
        if (std::find(init_names.begin(), init_names.end(), in.name()) == init_names.end())
            g.inputs.push_back(in.name());
    for (const auto& node : proto.graph().node()) {
        if (node.op_type() == "Transpose" || node.op_type() == "Constant") continue;
        g.op = node.op_type();
        g.op_inputs.assign(node.input().begin(), node.input().end());
        for (const auto& a : node.attribute())
            if (a.name() == "kernel_shape") g.kernel_shape.assign(a.ints().begin(), a.ints().end());
        break;
    }
    return g;
}

float round_fp16(float v) {
    return nvdla::fp16::to_float(nvdla::fp16::from_float(v));
}

void round_all(std::vector<float>& values) {
    for (float& v : values) v = round_fp16(v);
}

float max_abs(const std::vector<float>& v) {
    float m = 0;
    for (float x : v) m = std::max(m, std::fabs(x));
    return m;
}

// One fp16 step at the magnitude of v (normal numbers; 2^-24 below).
double fp16_step(double v) {
    v = std::fabs(v);
    if (v < std::ldexp(1.0, -14)) return std::ldexp(1.0, -24);
    return std::ldexp(1.0, std::ilogb(v) - 10);
}

// The constants (weights) of a case and the data inputs.
struct Prepared {
    std::vector<TensorData> constants;  // by name
    std::vector<TensorData> data;       // graph data inputs in order
};

Prepared prepare(const Case& c, const Loaded& l, const GraphInfo& g) {
    Prepared p;
    for (size_t i = 0; i < l.inputs.size(); ++i) {
        TensorData t = l.inputs[i];
        t.name = i < g.inputs.size() ? g.inputs[i] : t.name;
        if (std::find(c.constants.begin(), c.constants.end(), int(i)) != c.constants.end())
            p.constants.push_back(t);
        else
            p.data.push_back(t);
    }
    return p;
}

// The operation's figures for the thresholds, from its constants.
struct Figures {
    double window = 1;          // pooled elements per output (Window)
    bool average = false;       // average pooling
    double shift_max = 0;       // largest |shift| of batch norm as scale and shift (Affine)
    double fan_in = 1;          // products per output (Mac)
    double weight_abs_sum = 1;  // largest sum of |weights| of one output (Mac), or the gain
    float weight_max = 0;       // largest |weight| (Mac)
    uint32_t kernel_r = 1, kernel_s = 1, kernel_c = 1;
};

Figures figures(const Case& c, const Prepared& p, const GraphInfo& g) {
    Figures f;
    std::vector<TensorData> consts = p.constants;
    consts.insert(consts.end(), g.initializers.begin(), g.initializers.end());
    if (c.kind == Kind::Mac) {
        // The largest constant of rank >= 2 holds the weights.
        const TensorData* w = nullptr;
        for (const TensorData& t : consts)
            if (t.shape.size() >= 2 && (!w || t.values.size() > w->values.size())) w = &t;
        if (!w) return f;
        f.weight_max = max_abs(w->values);
        const std::string dir = c.dir;
        const bool gemm = w->shape.size() == 2;
        const bool transposed = dir.find("transpose") != std::string::npos ||
                                dir.find("ConvTranspose") != std::string::npos;
        const uint64_t rows =
            gemm ? uint64_t(std::max(w->shape[0], w->shape[1])) : uint64_t(w->shape[0]);
        const uint64_t per = w->values.size() / std::max<uint64_t>(rows, 1);
        f.fan_in = gemm ? double(std::min(w->shape[0], w->shape[1])) : double(per);
        if (transposed) f.fan_in = double(w->values.size() / uint64_t(w->shape[1]));
        double best = 0;
        // Sum of |w| per output row (an upper bound for the transposed/gemm layouts: all).
        if (!gemm && !transposed) {
            for (uint64_t r = 0; r < rows; ++r) {
                double s = 0;
                for (uint64_t k = 0; k < per; ++k) s += std::fabs(w->values[r * per + k]);
                best = std::max(best, s);
            }
        } else {
            best = f.fan_in * f.weight_max;
        }
        f.weight_abs_sum = best;
        if (!gemm && w->shape.size() == 4) {
            f.kernel_r = uint32_t(w->shape[2]);
            f.kernel_s = uint32_t(w->shape[3]);
        } else if (!gemm && w->shape.size() == 3) {
            f.kernel_s = uint32_t(w->shape[2]);
        }
        f.kernel_c = uint32_t(std::max(1.0, f.fan_in / (f.kernel_r * f.kernel_s)));
    } else if (c.kind == Kind::Affine) {
        // Inputs scale, B, mean, var: gain = max |scale| / sqrt(var + eps), and the shift
        // B - mean * scale / sqrt(var + eps) whose rounding the output carries.
        auto find = [&](const std::string& name) -> const TensorData* {
            for (const TensorData& t : consts)
                if (t.name == name) return &t;
            return nullptr;
        };
        const TensorData* v[4] = {};
        for (int i = 0; i < 4 && i + 1 < int(g.op_inputs.size()); ++i)
            v[i] = find(g.op_inputs[size_t(i) + 1]);
        if (v[0] && v[1] && v[2] && v[3]) {
            double gain = 0, shift = 0;
            for (size_t i = 0; i < v[0]->values.size(); ++i) {
                const double k = v[0]->values[i] / std::sqrt(double(v[3]->values[i]) + 1e-5);
                gain = std::max(gain, std::fabs(k));
                shift = std::max(shift, std::fabs(v[1]->values[i] - v[2]->values[i] * k));
            }
            f.weight_abs_sum = gain;
            f.shift_max = shift;
        }
    } else if (c.kind == Kind::Window) {
        f.average = g.op.find("Average") != std::string::npos;
        f.window = 1;
        for (int64_t k : g.kernel_shape) f.window *= double(k);
        if (g.op.rfind("Global", 0) == 0 && !p.data.empty()) {
            const auto& shape = p.data[0].shape;
            for (size_t i = 2; i < shape.size(); ++i) f.window *= double(shape[i]);
        }
    } else if (c.kind == Kind::Eltwise) {
        f.weight_abs_sum = 2;  // x + y: both inputs' errors
    } else if (c.kind == Kind::Softmax) {
        f.weight_abs_sum = 0.5;  // sum over j of |dy_i / dx_j| <= 2 y (1 - y) <= 0.5
    } else if (c.kind == Kind::Lrn) {
        f.weight_abs_sum = 1;
    }
    return f;
}

// The fp16 threshold for output value a against reference b.
double fp16_allowed(const Case& c, const Figures& f, float a, float b, int max_exp, float in_max) {
    const uint16_t ha = nvdla::fp16::from_float(a);
    switch (c.kind) {
        case Kind::Mac: {
            const double direct = nvdla::precision::direct_conv_allowed_error(
                ha, max_exp, {f.kernel_r, f.kernel_s, f.kernel_c});
            const double winograd =
                nvdla::precision::winograd_conv_allowed_error(ha, max_exp, f.kernel_c);
            return std::max(direct, winograd) + fp16_step(b);
        }
        case Kind::Window: {
            // Averages: the PDP sums in fp17 (an fp16 step of each partial sum, at most
            // window * in_max) and multiplies by 1/window: half a step of in_max per element.
            const double sums = f.average ? 0.5 * f.window * fp16_step(in_max) : 0.0;
            return std::max(nvdla::precision::window_allowed_error(b), fp16_step(b)) + sums;
        }
        case Kind::Affine:
            // Scale and shift are fp16 operands: their rounding shows where x * scale and the
            // shift nearly cancel.
            return 2 * fp16_step(b) + fp16_step(in_max * f.weight_abs_sum) + fp16_step(f.shift_max);
        case Kind::Pointwise:
        case Kind::Eltwise: return 2 * fp16_step(b);
        case Kind::Lut: return 0.01;
        case Kind::Lrn: return 0.01 * std::max(1.0, double(std::fabs(b)));
        case Kind::Softmax: return std::ldexp(1.0, -8);
        case Kind::Cpu: return 2 * fp16_step(b) + 2e-3 * std::max(1.0, double(std::fabs(b)));
    }
    return 0;
}

class OnnxNode : public ::testing::TestWithParam<size_t> {};

TEST_P(OnnxNode, MatchesTheTestData) {
    const Case& c = cases()[GetParam()];
    const std::string root = testdata_dir();
    if (!fs::is_directory(root))
        GTEST_SKIP() << root << " is absent: install libonnx-testdata (Debian) or set "
                     << "NVDLA_ONNX_TESTDATA to run the ONNX operator cases";
    std::string why;
    std::optional<Loaded> l = load(root + "/" + c.dir, why);
    ASSERT_TRUE(l) << why;
    const GraphInfo g = graph_info(l->model);
    Prepared p = prepare(c, *l, g);

    nvdla::onnx::ImportOptions options;
    options.constants = p.constants;
    auto model = nvdla::onnx::import_bytes(l->model, options);
    if (!model && c.may_refuse) {
        EXPECT_NE(model.message().find(c.may_refuse), std::string::npos) << model.message();
        return;
    }
    if (c.refused) {
        // Refused by the importer (or by the builder's network description it makes).
        ASSERT_FALSE(model) << c.dir << " was imported";
        EXPECT_NE(model.message().find(c.refused), std::string::npos) << model.message();
        EXPECT_NE(model.message().find("ONNX"), std::string::npos) << model.message();
        return;
    }
    ASSERT_TRUE(model) << model.message();
    ASSERT_EQ(model->outputs.size(), 1u);

    // The importer's semantics: the float reference against the case's expected output.
    auto ref = nvdla::onnx::run_reference(*model, p.data);
    ASSERT_TRUE(ref) << ref.message();
    ASSERT_EQ((*ref)[0].values.size(), l->output.values.size());
    const float out_max = std::max(1.0f, max_abs(l->output.values));
    for (size_t i = 0; i < l->output.values.size(); ++i)
        ASSERT_NEAR((*ref)[0].values[i], l->output.values[i], 1e-4f * out_max) << "element " << i;

    const Figures f = figures(c, p, g);
    const Target targets[] = {{"nv_full", nvdla::Precision::Fp16},
                              {"nv_full", nvdla::Precision::Int8},
                              {"nv_small", nvdla::Precision::Int8}};
    for (const Target& target : targets) {
        SCOPED_TRACE(std::string(target.config) + " " +
                     std::string(nvdla::to_string(target.precision)));
        const bool fp16 = target.precision == nvdla::Precision::Fp16;
        // fp16: the network and its inputs as the hardware sees them.
        Prepared q = p;
        nvdla::onnx::ImportOptions qo;
        if (fp16) {
            for (TensorData& t : q.data) round_all(t.values);
            for (TensorData& t : q.constants) round_all(t.values);
            for (TensorData t : g.initializers) {
                round_all(t.values);
                q.constants.push_back(t);
            }
        }
        qo.constants = q.constants;
        auto qmodel = nvdla::onnx::import_bytes(l->model, qo);
        ASSERT_TRUE(qmodel) << qmodel.message();
        auto expected = nvdla::onnx::run_reference(*qmodel, q.data);
        ASSERT_TRUE(expected) << expected.message();

        nvdla::builder::Calibration cal;
        std::vector<std::vector<nvdla::builder::HostTensor>> items;
        for (size_t i = 0; i < q.data.size(); ++i) {
            auto s = nvdla::onnx::split_batch(qmodel->inputs[i], q.data[i]);
            ASSERT_TRUE(s) << s.message();
            items.push_back(*s);
        }
        auto item = [&](int64_t b) {
            std::vector<nvdla::builder::HostTensor> in;
            for (const auto& s : items) in.push_back(s.size() == 1 ? s[0] : s[size_t(b)]);
            return in;
        };
        for (int64_t b = 0; b < qmodel->batch; ++b)
            ASSERT_TRUE(cal.add_sample(qmodel->network, item(b)));
        nvdla::builder::BuildOptions bo;
        bo.config = target.config;
        bo.precision = target.precision;
        bo.calibration = &cal;
        auto built = nvdla::builder::build(qmodel->network, bo);
        if (!built && c.may_refuse) {
            EXPECT_NE(built.message().find(c.may_refuse), std::string::npos) << built.message();
            EXPECT_NE(built.message().find("layer '"), std::string::npos) << built.message();
            continue;
        }
        // Only the refusals the case names: nv_small's, for a unit it lacks, with the layer.
        const bool must_refuse = c.small_refusal && std::string(target.config) == "nv_small";
        if (!built) {
            const std::string& m = built.message();
            if (std::getenv("NVDLA_TEST_VERBOSE"))
                std::printf("%-60s %-8s refused: %s\n", c.dir, target.config, m.c_str());
            EXPECT_TRUE(must_refuse) << "unexpected refusal: " << m;
            if (must_refuse) {
                EXPECT_NE(m.find(c.small_refusal), std::string::npos) << m;
            }
            EXPECT_NE(m.find("layer '"), std::string::npos) << m;
            continue;
        }
        EXPECT_FALSE(must_refuse) << c.dir << " was built for nv_small, which should refuse it ("
                                  << c.small_refusal << ")";
        nvdla::RuntimeOptions ro;
        ro.backend = nvdla::BackendChoice::Emu;
        ro.emu_config = target.config;
        auto rt = nvdla::Runtime::open(ro);
        ASSERT_TRUE(rt) << rt.message();
        std::vector<nvdla::builder::HostTensor> outs;
        for (int64_t b = 0; b < qmodel->batch; ++b) {
            auto out = nvdla::builder::run(*built, **rt, item(b));
            ASSERT_TRUE(out) << out.message();
            outs.push_back((*out)[0]);
        }
        if (qmodel->outputs[0].shape.size() < 2) outs.resize(1);
        auto actual = nvdla::onnx::merge_batch(qmodel->outputs[0], outs);
        ASSERT_TRUE(actual) << actual.message();
        const std::vector<float>& e = (*expected)[0].values;
        const std::vector<float>& a = actual->values;
        ASSERT_EQ(a.size(), e.size());

        // The operation's input and weight magnitudes.
        float in_max = 0;
        for (const TensorData& t : q.data) in_max = std::max(in_max, max_abs(t.values));
        int max_exp = -60;
        if (fp16 && c.kind == Kind::Mac) {
            const uint16_t hd = nvdla::fp16::from_float(in_max);
            const uint16_t hw = nvdla::fp16::from_float(f.weight_max);
            max_exp = nvdla::precision::aligned_product_exponent(hd, hw);
        }
        float in_scale = 0;
        for (const auto& d : built->inputs) in_scale = std::max(in_scale, d.scale);
        const float out_scale = built->outputs[0].scale;
        size_t bad = 0, first = 0;
        double worst = 0, worst_allowed = 0;
        for (size_t i = 0; i < a.size(); ++i) {
            double allowed;
            double err;
            if (fp16) {
                const float b16 = round_fp16(e[i]);
                err = std::fabs(double(a[i]) - b16);
                allowed = fp16_allowed(c, f, a[i], b16, max_exp, in_max);
            } else {
                err = std::fabs(double(a[i]) - e[i]);
                // Half a step for each rounding: the output's, the input's through the
                // weights, each weight's; one more half output step for the requantization
                // scale held as a fixed-point multiplier and shift.
                const double weight_step = f.weight_max / 127.0;
                allowed = 1.0 * out_scale + 0.5 * in_scale * f.weight_abs_sum +
                          (c.kind == Kind::Mac ? 0.5 * weight_step * f.fan_in * in_max : 0.0) +
                          (c.kind == Kind::Lut ? 0.01 : 0.0) +
                          (c.kind == Kind::Cpu ? 0.01 * std::max(1.0f, std::fabs(e[i])) : 0.0) +
                          (c.kind == Kind::Lrn ? 0.01 * std::max(1.0f, std::fabs(e[i])) : 0.0);
            }
            if (err > allowed || std::isnan(a[i])) {
                if (!bad++) first = i;
            }
            if (worst_allowed == 0 || err / allowed > worst / worst_allowed)
                worst = err, worst_allowed = allowed;
        }
        if (std::getenv("NVDLA_TEST_VERBOSE"))
            std::printf("%-60s %-8s %-4s worst error %.3g, allowed there %.3g\n", c.dir,
                        target.config, fp16 ? "fp16" : "int8", worst, worst_allowed);
        EXPECT_EQ(bad, 0u) << bad << " of " << a.size() << " outside the threshold; first at "
                           << first << ": " << a[first] << " against " << e[first]
                           << "; worst error " << worst << " (allowed " << worst_allowed
                           << "); output scale " << out_scale << ", input scale " << in_scale;
    }
}

std::string case_name(const ::testing::TestParamInfo<size_t>& param) {
    std::string dir = cases()[param.param].dir;
    std::string name = dir.substr(dir.find('/') + 1);
    if (name.rfind("test_", 0) == 0) name = name.substr(5);
    if (dir.rfind("pytorch", 0) == 0) name = "pt_" + name;
    for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
}

INSTANTIATE_TEST_SUITE_P(Cases, OnnxNode, ::testing::Range<size_t>(0, cases().size()), case_name);

// Errors name the node; malformed input is refused with a sentence.
TEST(OnnxImport, GarbageIsRefused) {
    const std::byte junk[] = {std::byte{0xff}, std::byte{0xff}, std::byte{0x01}};
    auto m = nvdla::onnx::import_bytes(junk);
    ASSERT_FALSE(m);
    EXPECT_NE(m.message().find("ONNX"), std::string::npos) << m.message();
    auto t = nvdla::onnx::read_tensor_file("/nonexistent/input_0.pb");
    ASSERT_FALSE(t);
    EXPECT_NE(t.message().find("/nonexistent/input_0.pb"), std::string::npos) << t.message();
}

// A small model written here: Conv -> Relu -> MaxPool -> Flatten -> Gemm -> Softmax with
// initializers, the shape of a LeNet, imported and run through the reference.
TEST(OnnxImport, SmallNetworkWithInitializers) {
    ::onnx::ModelProto proto;
    proto.set_ir_version(7);
    proto.add_opset_import()->set_version(13);
    auto* g = proto.mutable_graph();
    g->set_name("small");
    auto add_init = [&](const std::string& name, std::vector<int64_t> dims, float seed) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto_DataType_FLOAT);
        int64_t n = 1;
        for (int64_t d : dims) t->add_dims(d), n *= d;
        for (int64_t i = 0; i < n; ++i) t->add_float_data(std::sin(seed + float(i)) * 0.5f);
    };
    add_init("w1", {4, 1, 3, 3}, 1);
    add_init("b1", {4}, 2);
    add_init("w2", {3, 4 * 3 * 3}, 3);
    add_init("b2", {3}, 4);
    auto* in = g->add_input();
    in->set_name("x");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(::onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : {1, 1, 8, 8}) tt->mutable_shape()->add_dim()->set_dim_value(d);
    auto node = [&](const std::string& op, std::vector<std::string> ins, const std::string& out) {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(out + "_node");
        for (auto& i : ins) n->add_input(i);
        n->add_output(out);
        return n;
    };
    node("Conv", {"x", "w1", "b1"}, "c1");
    node("Relu", {"c1"}, "r1");
    auto* pool = node("MaxPool", {"r1"}, "p1");
    auto* k = pool->add_attribute();
    k->set_name("kernel_shape");
    k->set_type(::onnx::AttributeProto_AttributeType_INTS);
    k->add_ints(2), k->add_ints(2);
    auto* s = pool->add_attribute();
    s->set_name("strides");
    s->set_type(::onnx::AttributeProto_AttributeType_INTS);
    s->add_ints(2), s->add_ints(2);
    node("Flatten", {"p1"}, "f1");
    auto* gemm = node("Gemm", {"f1", "w2", "b2"}, "fc");
    auto* tb = gemm->add_attribute();
    tb->set_name("transB");
    tb->set_type(::onnx::AttributeProto_AttributeType_INT);
    tb->set_i(1);
    node("Softmax", {"fc"}, "prob");
    g->add_output()->set_name("prob");
    std::string bytes;
    ASSERT_TRUE(proto.SerializeToString(&bytes));
    std::vector<std::byte> b(bytes.size());
    std::memcpy(b.data(), bytes.data(), bytes.size());
    auto m = nvdla::onnx::import_bytes(b);
    ASSERT_TRUE(m) << m.message();
    EXPECT_EQ(m->network.dims(m->outputs[0].tensor), (nvdla::Dims4{1, 3, 1, 1}));
    EXPECT_EQ(m->outputs[0].shape, (std::vector<int64_t>{1, 3}));
    TensorData x{"x", {1, 1, 8, 8}, std::vector<float>(64, 0.25f)};
    auto out = nvdla::onnx::run_reference(*m, {x});
    ASSERT_TRUE(out) << out.message();
    // By hand: the input is constant, so each unpadded 3x3 convolution channel is the constant
    // 0.25 * sum(w1[o]) + b1[o], which ReLU and the 2x2 max pool keep; Gemm then sees 4 x 9
    // copies of those values (channel-major) and softmax normalises its 3 outputs.
    const auto init = [](float seed, int i) { return std::sin(seed + float(i)) * 0.5f; };
    double channel[4];
    for (int o = 0; o < 4; ++o) {
        double v = init(2, o);
        for (int i = 0; i < 9; ++i) v += 0.25 * init(1, o * 9 + i);
        channel[o] = std::max(v, 0.0);
    }
    double logits[3], total = 0;
    for (int j = 0; j < 3; ++j) {
        logits[j] = init(4, j);
        for (int i = 0; i < 36; ++i) logits[j] += channel[i / 9] * init(3, j * 36 + i);
    }
    for (double l : logits) total += std::exp(l);
    ASSERT_EQ((*out)[0].values.size(), 3u);
    for (int j = 0; j < 3; ++j)
        EXPECT_NEAR((*out)[0].values[size_t(j)], std::exp(logits[j]) / total, 1e-5)
            << "class " << j;

    // An unknown operator: the error names the node and the operator.
    node("LSTM", {"prob"}, "lstm_out");
    ASSERT_TRUE(proto.SerializeToString(&bytes));
    b.resize(bytes.size());
    std::memcpy(b.data(), bytes.data(), bytes.size());
    auto bad = nvdla::onnx::import_bytes(b);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.message().find("ONNX node 6 'lstm_out_node' (LSTM): the operator LSTM is not "
                                 "supported"),
              std::string::npos)
        << bad.message();
}

// Concat of whole atoms (32 channels each) on the hardware, which the test data's few-channel
// cases cannot show: every value comes through (fp16 exactly, int8 within an output step).
TEST(OnnxImport, ConcatOfWholeAtoms) {
    ::onnx::ModelProto proto;
    proto.set_ir_version(7);
    proto.add_opset_import()->set_version(13);
    auto* g = proto.mutable_graph();
    g->set_name("concat");
    for (const char* name : {"a", "b"}) {
        auto* in = g->add_input();
        in->set_name(name);
        auto* tt = in->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(::onnx::TensorProto_DataType_FLOAT);
        for (int64_t d : {1, 32, 3, 5}) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    auto* n = g->add_node();
    n->set_op_type("Concat");
    n->add_input("a");
    n->add_input("b");
    n->add_output("y");
    auto* axis = n->add_attribute();
    axis->set_name("axis");
    axis->set_type(::onnx::AttributeProto_AttributeType_INT);
    axis->set_i(1);
    g->add_output()->set_name("y");
    std::string bytes;
    ASSERT_TRUE(proto.SerializeToString(&bytes));
    std::vector<std::byte> b(bytes.size());
    std::memcpy(b.data(), bytes.data(), bytes.size());
    auto m = nvdla::onnx::import_bytes(b);
    ASSERT_TRUE(m) << m.message();
    std::vector<nvdla::builder::HostTensor> in;
    for (int k = 0; k < 2; ++k) {
        nvdla::builder::HostTensor t = nvdla::builder::make_host_tensor({1, 32, 3, 5});
        for (size_t i = 0; i < t.data.size(); ++i)
            t.data[i] = round_fp16(std::sin(float(i) * 0.37f + float(k)) * 3.0f);
        in.push_back(t);
    }
    auto ref = nvdla::builder::run_reference(m->network, in);
    ASSERT_TRUE(ref) << ref.message();
    nvdla::builder::Calibration cal;
    ASSERT_TRUE(cal.add_sample(m->network, in));
    const Target targets[] = {{"nv_full", nvdla::Precision::Fp16},
                              {"nv_full", nvdla::Precision::Int8},
                              {"nv_small", nvdla::Precision::Int8}};
    for (const Target& target : targets) {
        SCOPED_TRACE(target.config);
        nvdla::builder::BuildOptions bo;
        bo.config = target.config;
        bo.precision = target.precision;
        bo.calibration = &cal;
        auto built = nvdla::builder::build(m->network, bo);
        ASSERT_TRUE(built) << built.message();
        nvdla::RuntimeOptions ro;
        ro.backend = nvdla::BackendChoice::Emu;
        ro.emu_config = target.config;
        auto rt = nvdla::Runtime::open(ro);
        ASSERT_TRUE(rt) << rt.message();
        auto out = nvdla::builder::run(*built, **rt, in);
        ASSERT_TRUE(out) << out.message();
        const float step =
            target.precision == nvdla::Precision::Fp16 ? 0.0f : built->outputs[0].scale;
        const auto& e = (*ref)[0].data;
        const auto& a = nvdla::builder::to_layout((*out)[0], nvdla::HostLayout::NCHW).data;
        ASSERT_EQ(a.size(), e.size());
        for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], e[i], 1.01f * step) << i;
    }
}

}  // namespace
