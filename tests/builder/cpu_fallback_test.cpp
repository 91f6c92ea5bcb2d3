// CPU operations between hardware layers (Network::cpu_op, BuildOptions::cpu_fallback): every
// CpuOpKind in fp16 on nv_full and int8 on nv_full and nv_small, emulated and compared with the
// float reference; division, sigmoid/tanh and flatten falling back to the CPU; the build
// report; and the sentences for forbidden fallback and bad arguments.
//
// Bounds, relative to the largest reference value: fp16 kFp16 (the tensors round to 2^-11 at
// the hardware layer before, at the CPU operation and at the hardware layer after: about five
// half units in the last place with log's and division's gain; 1.5e-3 is the largest seen over
// 16 seeds), int8 kInt8 (a few steps of range/127: the input, the operation's output and the
// next layer's output each round by half a step, and log near 0.75 doubles the input's error;
// 3.3e-2 is the largest seen). Two int8 convolutions with a CPU operation between them get
// twice that.
#include "builder_rig.hpp"

namespace nvdla::builder_test {
namespace {

constexpr double kFp16 = 2.5e-3;
constexpr double kInt8 = 4e-2;

struct Target {
    const char* config;
    Precision precision;
};

std::string target_name(const ::testing::TestParamInfo<Target>& p) {
    return std::string(p.param.config) + "_" + std::string(to_string(p.param.precision));
}

CpuOpDesc op(CpuOpKind kind, std::vector<int64_t> ints = {}, std::vector<float> floats = {}) {
    CpuOpDesc d;
    d.kind = kind;
    d.ints = std::move(ints);
    d.floats = std::move(floats);
    return d;
}

class CpuOp : public ::testing::TestWithParam<Target> {
  protected:
    BuildOptions options() const {
        BuildOptions o;
        o.config = GetParam().config;
        o.precision = GetParam().precision;
        return o;
    }
    double bound() const { return GetParam().precision == Precision::Fp16 ? kFp16 : kInt8; }

    // in[k] -> bias 0.25 (SDP) -> the CPU operation -> scale 0.5 (SDP) -> out, inputs drawn
    // from [lo, hi].
    void check(const CpuOpDesc& d, std::vector<Dims4> dims, float lo = -1, float hi = 1) {
        SCOPED_TRACE(std::string("CPU ") + cpu_name(d.kind));
        Network net;
        std::vector<Tensor> xs;
        std::vector<HostTensor> in;
        for (size_t k = 0; k < dims.size(); ++k) {
            Tensor x = net.input("in" + std::to_string(k), dims[k]);
            const std::vector<float> b = {0.25f};
            xs.push_back(net.bias(x, b, "bias" + std::to_string(k)));
            in.push_back(random_tensor(rng, dims[k], lo, hi));
        }
        Tensor y = net.cpu_op(xs, d, "cpu");
        const std::vector<float> s = {0.5f};
        net.output(net.scale(y, s, {}, "after"), "out");
        ASSERT_TRUE(net.status().ok()) << net.status().message();
        auto r = run_and_compare(net, in, options(), 4, lo, hi);
        ASSERT_TRUE(r);
        EXPECT_LE(r->diff[0].relative(), bound()) << describe(*r);
        // The report names the CPU task.
        ASSERT_EQ(r->built.cpu_operations.size(), 1u) << describe(*r);
        EXPECT_EQ(r->built.cpu_operations[0].rfind(std::string("cpu: CPU ") + cpu_name(d.kind), 0),
                  0u)
            << r->built.cpu_operations[0];
        EXPECT_EQ(r->built.cpu_tasks, 1u);
    }
    // The names reports use.
    static std::string cpu_name(CpuOpKind k) {
        switch (k) {
            case CpuOpKind::Softmax: return "softmax";
            case CpuOpKind::LogSoftmax: return "log softmax";
            case CpuOpKind::Exp: return "exp";
            case CpuOpKind::Log: return "log";
            case CpuOpKind::Sqrt: return "sqrt";
            case CpuOpKind::Reciprocal: return "reciprocal";
            case CpuOpKind::Neg: return "neg";
            case CpuOpKind::Abs: return "abs";
            case CpuOpKind::Erf: return "erf";
            case CpuOpKind::Sigmoid: return "sigmoid";
            case CpuOpKind::Tanh: return "tanh";
            case CpuOpKind::Relu: return "relu";
            case CpuOpKind::PowScalar: return "pow scalar";
            case CpuOpKind::Add: return "add";
            case CpuOpKind::Sub: return "sub";
            case CpuOpKind::Mul: return "mul";
            case CpuOpKind::Div: return "div";
            case CpuOpKind::Max: return "max";
            case CpuOpKind::Min: return "min";
            case CpuOpKind::Pow: return "pow";
            case CpuOpKind::ReduceSum: return "reduce sum";
            case CpuOpKind::ReduceMean: return "reduce mean";
            case CpuOpKind::ReduceMax: return "reduce max";
            case CpuOpKind::ReduceMin: return "reduce min";
            case CpuOpKind::MatMul: return "matmul";
            case CpuOpKind::LayerNorm: return "layer norm";
            case CpuOpKind::Gather: return "gather";
            case CpuOpKind::Transpose: return "transpose";
            case CpuOpKind::Reshape: return "reshape";
            case CpuOpKind::Mish: return "mish";
        }
        return "?";
    }
    std::mt19937_64 rng = test::rng_for_test();
};

const Dims4 kDims{1, 37, 5, 7};  // several fp16 and int8 surfaces

TEST_P(CpuOp, Unary) {
    for (CpuOpKind k : {CpuOpKind::Exp, CpuOpKind::Neg, CpuOpKind::Abs, CpuOpKind::Erf,
                        CpuOpKind::Sigmoid, CpuOpKind::Tanh, CpuOpKind::Relu})
        check(op(k), {kDims});
    check(op(CpuOpKind::Mish), {kDims}, -4.0f, 3.0f);
    // Positive inputs only.
    for (CpuOpKind k : {CpuOpKind::Log, CpuOpKind::Sqrt, CpuOpKind::Reciprocal})
        check(op(k), {kDims}, 0.5f, 1.5f);
    check(op(CpuOpKind::PowScalar, {}, {1.7f}), {kDims}, 0.5f, 1.5f);
}

TEST_P(CpuOp, SoftmaxOnEveryAxis) {
    for (int64_t axis : {1, 2, 3}) {
        check(op(CpuOpKind::Softmax, {axis}), {kDims}, -3, 3);
        check(op(CpuOpKind::LogSoftmax, {axis}), {kDims}, -3, 3);
    }
}

TEST_P(CpuOp, BinaryWithBroadcasting) {
    const std::vector<std::vector<Dims4>> shapes = {{kDims, kDims},
                                                    {kDims, {1, 37, 1, 1}},
                                                    {{1, 1, 5, 7}, kDims},
                                                    {{1, 37, 1, 7}, {1, 1, 5, 1}}};
    for (const auto& dims : shapes) {
        for (CpuOpKind k :
             {CpuOpKind::Add, CpuOpKind::Sub, CpuOpKind::Mul, CpuOpKind::Max, CpuOpKind::Min})
            check(op(k), dims);
        for (CpuOpKind k : {CpuOpKind::Div, CpuOpKind::Pow}) check(op(k), dims, 0.5f, 1.5f);
    }
}

TEST_P(CpuOp, Reductions) {
    for (CpuOpKind k :
         {CpuOpKind::ReduceSum, CpuOpKind::ReduceMean, CpuOpKind::ReduceMax, CpuOpKind::ReduceMin})
        for (const std::vector<int64_t>& axes :
             std::vector<std::vector<int64_t>>{{1}, {3}, {2, 3}, {1, 2, 3}})
            check(op(k, axes), {kDims});
}

TEST_P(CpuOp, MatMul) {
    check(op(CpuOpKind::MatMul), {{1, 4, 6, 5}, {1, 4, 5, 3}});
    check(op(CpuOpKind::MatMul), {{1, 3, 9, 20}, {1, 1, 20, 11}});
}

TEST_P(CpuOp, LayerNorm) {
    for (int64_t axis : {1, 2, 3}) {
        check(op(CpuOpKind::LayerNorm, {axis}, {1e-5f}), {kDims});
        const size_t inner = axis == 1 ? 37 * 5 * 7 : axis == 2 ? 5 * 7 : 7;
        std::vector<float> floats = {1e-3f};
        for (float g : random_weights(rng, inner, 1.0f)) floats.push_back(g + 1.0f);  // gamma
        for (float b : random_weights(rng, inner, 0.5f)) floats.push_back(b);         // beta
        check(op(CpuOpKind::LayerNorm, {axis}, floats), {kDims});
    }
}

TEST_P(CpuOp, GatherTransposeReshape) {
    check(op(CpuOpKind::Gather, {1, 36, 0, 5, 5, 20}), {kDims});
    check(op(CpuOpKind::Gather, {2, 4, 1}), {kDims});
    check(op(CpuOpKind::Gather, {3, 6, 0, 3, 2, 1, 5, 4, 6}), {kDims});
    for (const std::vector<int64_t>& order :
         std::vector<std::vector<int64_t>>{{1, 3, 2}, {2, 1, 3}, {3, 2, 1}, {2, 3, 1}})
        check(op(CpuOpKind::Transpose, order), {kDims});
    CpuOpDesc reshape = op(CpuOpKind::Reshape);
    reshape.out_dims = {1, 5, 37, 7};
    check(reshape, {kDims});
    reshape.out_dims = {1, 1295, 1, 1};
    check(reshape, {kDims});
}

// Hardware and CPU tasks alternate: conv -> CPU exp -> conv -> CPU transpose -> ReLU.
TEST_P(CpuOp, BetweenHardwareTasks) {
    Network net;
    Tensor x = net.input("data", {1, 8, 6, 6});
    ConvolutionDesc c;
    c.out_channels = 12;
    c.kernel_h = c.kernel_w = 3;
    c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 1;
    x = net.convolution(x, c, random_weights(rng, 12 * 8 * 9, 0.2f), random_weights(rng, 12),
                        "conv1");
    x = net.cpu_op(std::vector<Tensor>{x}, op(CpuOpKind::Exp), "exp");
    c.out_channels = 10;
    x = net.convolution(x, c, random_weights(rng, 10 * 12 * 9, 0.1f), {}, "conv2");
    x = net.cpu_op(std::vector<Tensor>{x}, op(CpuOpKind::Transpose, {2, 1, 3}), "swap");
    net.output(net.relu(x, "relu"), "out");
    auto r = run_and_compare(net, {random_tensor(rng, {1, 8, 6, 6})}, options());
    ASSERT_TRUE(r);
    EXPECT_LE(r->diff[0].relative(), GetParam().precision == Precision::Int8 ? 2 * kInt8 : kFp16)
        << describe(*r);
    EXPECT_EQ(r->built.cpu_tasks, 2u);
    EXPECT_EQ(r->built.hardware_tasks, 3u);
    EXPECT_TRUE(r->built.needs_extended_cpu_tasks);
    ASSERT_EQ(r->built.cpu_operations.size(), 2u);
    EXPECT_EQ(r->built.cpu_operations[0], "exp: CPU exp 12x6x6 -> 12x6x6 " +
                                              std::string(to_string(GetParam().precision)) +
                                              " (needs this runtime)");
    EXPECT_EQ(
        r->built.cpu_operations[1].rfind("swap: CPU transpose order 2,1,3 10x6x6 -> 6x10x6", 0), 0u)
        << r->built.cpu_operations[1];
}

// Division by a computed tensor, and sigmoid/tanh where the SDP has no lookup table, run on
// the CPU.
TEST_P(CpuOp, HardwareLayersFallingBack) {
    Network net;
    Tensor a = net.input("a", kDims), b = net.input("b", kDims);
    const std::vector<float> shift = {0.25f};
    Tensor q =
        net.eltwise(net.bias(a, shift, "a1"), net.bias(b, shift, "b1"), EltwiseOp::Div, "divide");
    Tensor s = net.sigmoid(q, "sigmoid");
    Tensor t = net.tanh(net.bias(q, shift, "q1"), "tanh");
    net.output(s, "s");
    net.output(t, "t");
    net.output(q, "q");
    auto r = run_and_compare(
        net, {random_tensor(rng, kDims, 0.5f, 1.5f), random_tensor(rng, kDims, 0.5f, 1.5f)},
        options(), 4, 0.5f, 1.5f);
    ASSERT_TRUE(r);
    const bool lut = nvdla_hw_has(&test::config(GetParam().config), NVDLA_FEATURE_SDP_LUT);
    // With the lookup table, its accuracy is the layer tests' business.
    for (size_t i = 0; i < 2 && !lut; ++i)
        EXPECT_LE(r->diff[i].relative(), bound()) << describe(*r);
    EXPECT_LE(r->diff[2].relative(), bound()) << describe(*r);
    EXPECT_EQ(r->built.cpu_tasks, lut ? 1u : 3u) << describe(*r);
    EXPECT_EQ(r->built.cpu_operations[0].rfind("divide: CPU div", 0), 0u);
}

// CPU operations reading a network input and writing into a concat's cube (at a channel
// offset) and straight into an output.
TEST_P(CpuOp, IntoConcatAndOutputs) {
    Network net;
    const Dims4 d{1, 32, 3, 5};
    Tensor x = net.input("data", d);
    Tensor e = net.cpu_op(std::vector<Tensor>{x}, op(CpuOpKind::Exp), "exp");
    Tensor n = net.cpu_op(std::vector<Tensor>{x}, op(CpuOpKind::Neg), "neg");
    const std::vector<Tensor> parts = {n, e};
    net.output(net.relu(net.concat(parts, "cat"), "relu"), "relu");
    net.output(net.cpu_op(std::vector<Tensor>{x}, op(CpuOpKind::Abs), "abs"), "abs");
    auto r = run_and_compare(net, {random_tensor(rng, d)}, options());
    ASSERT_TRUE(r);
    for (size_t i = 0; i < 2; ++i) EXPECT_LE(r->diff[i].relative(), bound()) << describe(*r);
    EXPECT_EQ(r->built.cpu_tasks, 3u) << describe(*r);
    EXPECT_EQ(r->built.hardware_tasks, 1u) << describe(*r);  // the ReLU; the concat is free
}

// A flatten that is not a view (read by a ReLU, and an output) becomes a CPU reshape.
TEST_P(CpuOp, FlattenThatIsNotAView) {
    Network net;
    Tensor x = net.input("data", {1, 5, 3, 4});
    ConvolutionDesc c;
    c.out_channels = 6;
    x = net.convolution(x, c, random_weights(rng, 6 * 5), random_weights(rng, 6), "conv");
    Tensor flat = net.flatten(x, "flat");
    net.output(net.relu(flat, "relu"), "relu");
    net.output(flat, "flat");
    auto r = run_and_compare(net, {random_tensor(rng, {1, 5, 3, 4})}, options());
    ASSERT_TRUE(r);
    for (size_t i = 0; i < 2; ++i) EXPECT_LE(r->diff[i].relative(), bound()) << describe(*r);
    ASSERT_EQ(r->built.cpu_operations.size(), 1u);
    EXPECT_EQ(r->built.cpu_operations[0].rfind("flat: CPU reshape 6x3x4 -> 72x1x1", 0), 0u)
        << r->built.cpu_operations[0];
    BuildOptions no = options();
    no.cpu_fallback = false;
    Calibration cal;
    ASSERT_TRUE(cal.add_sample(net, {random_tensor(rng, {1, 5, 3, 4})}).ok());
    no.calibration = &cal;
    Result<CompiledNetwork> refused = build(net, no);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.message(),
              "layer 'flat' (flatten): its 3x4 input can only be flattened for fully connected "
              "layers, but layer 'relu' (ReLU) reads it");
}

INSTANTIATE_TEST_SUITE_P(Targets, CpuOp,
                         ::testing::Values(Target{"nv_full", Precision::Fp16},
                                           Target{"nv_full", Precision::Int8},
                                           Target{"nv_small", Precision::Int8}),
                         target_name);

// A softmax over the channels is the original's EMU softmax: no extended CPU task.
TEST(CpuOpReport, ChannelSoftmaxNeedsNoExtendedTasks) {
    Network net;
    Tensor x = net.input("x", {1, 10, 1, 1});
    x = net.cpu_op(std::vector<Tensor>{x}, op(CpuOpKind::Softmax, {1}), "prob");
    net.output(x, "prob");
    Result<CompiledNetwork> built = build(net);
    ASSERT_TRUE(built) << built.message();
    EXPECT_FALSE(built->needs_extended_cpu_tasks);
    ASSERT_EQ(built->cpu_operations.size(), 1u);
    EXPECT_EQ(built->cpu_operations[0], "prob: CPU softmax axis 1 10x1x1 -> 10x1x1 fp16");
    // Network::softmax is the same operation.
    Network same;
    Tensor s = same.input("x", {1, 10, 1, 1});
    same.output(same.softmax(s, "prob"), "prob");
    Result<CompiledNetwork> softmax = build(same);
    ASSERT_TRUE(softmax) << softmax.message();
    EXPECT_FALSE(softmax->needs_extended_cpu_tasks);
    EXPECT_EQ(softmax->cpu_operations, built->cpu_operations);
    EXPECT_EQ(softmax->loadable, built->loadable);
    // Over another axis it is one.
    Network other;
    Tensor y = other.input("y", {1, 10, 1, 4});
    other.output(other.cpu_op(std::vector<Tensor>{y}, op(CpuOpKind::Softmax, {3}), "sm"), "sm");
    Result<CompiledNetwork> extended = build(other);
    ASSERT_TRUE(extended) << extended.message();
    EXPECT_TRUE(extended->needs_extended_cpu_tasks);
}

TEST(CpuOpErrors, FallbackForbidden) {
    BuildOptions no;
    no.cpu_fallback = false;
    {
        Network net;
        Tensor x = net.input("x", {1, 4, 2, 2});
        net.output(net.cpu_op(std::vector<Tensor>{x}, op(CpuOpKind::Exp), "e"), "e");
        Result<CompiledNetwork> built = build(net, no);
        ASSERT_FALSE(built);
        EXPECT_EQ(built.message(),
                  "layer 'e' (CPU exp): it is a CPU operation; BuildOptions::cpu_fallback is "
                  "false, so it cannot run on the CPU");
    }
    {
        Network net;
        Tensor a = net.input("a", {1, 4, 2, 2}), b = net.input("b", {1, 4, 2, 2});
        net.output(net.eltwise(a, b, EltwiseOp::Div, "ratio"), "r");
        Result<CompiledNetwork> built = build(net, no);
        ASSERT_FALSE(built);
        EXPECT_EQ(built.message(),
                  "layer 'ratio' (element-wise): the hardware cannot divide by a computed tensor; "
                  "BuildOptions::cpu_fallback is false, so it cannot run on the CPU");
    }
    {
        Network net;
        Tensor a = net.input("a", {1, 4, 2, 2});
        net.output(net.sigmoid(a, "sig"), "s");
        Calibration cal;
        cal.set_range(a, 1.0f);
        cal.set_range(net.outputs()[0], 1.0f);
        no.config = "nv_small";
        no.precision = Precision::Int8;
        no.calibration = &cal;
        Result<CompiledNetwork> built = build(net, no);
        ASSERT_FALSE(built);
        EXPECT_EQ(built.message(),
                  "layer 'sig' (sigmoid): nv_small has no SDP lookup table "
                  "(NVDLA_FEATURE_SDP_LUT) for sigmoid; BuildOptions::cpu_fallback is false, so "
                  "it cannot run on the CPU");
    }
}

TEST(CpuOpErrors, ArgumentsNameTheLayer) {
    struct Case {
        CpuOpDesc desc;
        std::vector<Dims4> inputs;
        const char* message;
    };
    CpuOpDesc reshape = op(CpuOpKind::Reshape);
    reshape.out_dims = {1, 5, 5, 1};
    const std::vector<Case> cases = {
        {op(CpuOpKind::Softmax, {4}),
         {{1, 3, 2, 2}},
         "layer 'bad' (CPU softmax): axis 4 is not 1 (c), 2 (h) or 3 (w)"},
        {op(CpuOpKind::Exp, {1}),
         {{1, 3, 2, 2}},
         "layer 'bad' (CPU exp): 1 int and 0 float parameters given, exp takes 0 and 0"},
        {op(CpuOpKind::Add),
         {{1, 3, 2, 2}, {1, 2, 2, 2}},
         "layer 'bad' (CPU add): the inputs are 3x2x2 and 2x2x2; each extent must agree or be 1 "
         "in one of them"},
        {op(CpuOpKind::Mul), {{1, 3, 2, 2}}, "layer 'bad' (CPU mul): 1 inputs given, mul takes 2"},
        {op(CpuOpKind::ReduceMax, {2, 2}),
         {{1, 3, 2, 2}},
         "layer 'bad' (CPU reduce max): axis 2 is given twice"},
        {op(CpuOpKind::MatMul),
         {{1, 3, 2, 4}, {1, 3, 5, 2}},
         "layer 'bad' (CPU matmul): the inputs are 3x2x4 and 3x5x2; a {C, H, K} times b {C or "
         "1, K, W} is possible"},
        {op(CpuOpKind::LayerNorm, {2}, {1e-5f, 1.0f}),
         {{1, 3, 2, 2}},
         "layer 'bad' (CPU layer norm): 2 float parameters given; layer norm over 4 values takes "
         "epsilon, then 4 gamma and 4 beta values or none"},
        {op(CpuOpKind::Gather, {1, 3}),
         {{1, 3, 2, 2}},
         "layer 'bad' (CPU gather): index 3 is outside the 3 entries of axis 1"},
        {op(CpuOpKind::Transpose, {1, 1, 2}),
         {{1, 3, 2, 2}},
         "layer 'bad' (CPU transpose): axes 1, 1, 2 are not an order of 1, 2 and 3"},
        {reshape,
         {{1, 3, 2, 2}},
         "layer 'bad' (CPU reshape): the new dims 1x5x5x1 do not hold the 12 elements of 3x2x2"},
        {op(CpuOpKind::PowScalar, {}, {NAN}),
         {{1, 3, 2, 2}},
         "layer 'bad' (CPU pow scalar): a float parameter is NaN or infinite"},
    };
    for (const Case& c : cases) {
        Network net;
        std::vector<Tensor> xs;
        for (size_t k = 0; k < c.inputs.size(); ++k)
            xs.push_back(net.input("x" + std::to_string(k), c.inputs[k]));
        Tensor y = net.cpu_op(xs, c.desc, "bad");
        EXPECT_FALSE(y.valid());
        EXPECT_EQ(net.status().message(), c.message);
        // Layers after it fail without a new error.
        EXPECT_FALSE(net.relu(y, "next").valid());
        EXPECT_EQ(net.status().message(), c.message);
    }
}

}  // namespace
}  // namespace nvdla::builder_test
