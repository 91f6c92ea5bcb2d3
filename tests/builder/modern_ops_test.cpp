// The operators of post-2018 vision models (clip, hard sigmoid/swish, SiLU, broadcasting
// element-wise operations, pad, nearest resize, channel slices and shuffles), alone and in the
// blocks real models use, on nv_full in fp16 and int8 and on nv_small in int8, against the
// float reference. Channel counts are odd on purpose (not multiples of an atom).
//
// Bounds: fp16 within kFp16 of the output range (the 5e-3). int8 within a number of
// output quantization steps (range / 127): an SDP-only layer rounds its input and its output
// by half a step each (kInt8Layer = 2 steps); behind a convolution the input and weight
// rounding over the kernel adds up to the convolution tests' bound (kInt8Conv, 4e-2 as in
// layers_test.cpp); blocks add a step per quantized tensor on the way (kInt8Block = 5 steps).
#include <cmath>
#include <limits>

#include "builder_rig.hpp"

namespace nvdla::builder_test {
namespace {

constexpr double kFp16 = 5e-3;
constexpr double kInt8Layer = 2.0 / 127;
constexpr double kInt8Conv = 4e-2;
constexpr double kInt8Block = 5.0 / 127;

struct Target {
    const char* config;
    Precision precision;
};

std::string target_name(const ::testing::TestParamInfo<Target>& p) {
    return std::string(p.param.config) + "_" + std::string(to_string(p.param.precision));
}

ConvolutionDesc conv(uint32_t k, uint32_t r, uint32_t pad = 0, uint32_t groups = 1,
                     uint32_t stride = 1) {
    ConvolutionDesc d;
    d.out_channels = k;
    d.kernel_h = d.kernel_w = r;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = pad;
    d.groups = groups;
    d.stride_h = d.stride_w = stride;
    return d;
}

bool contains(const std::vector<std::string>& lines, const std::string& what) {
    for (const auto& l : lines)
        if (l.find(what) != std::string::npos) return true;
    return false;
}

class ModernOp : public ::testing::TestWithParam<Target> {
  protected:
    BuildOptions options() const {
        BuildOptions o;
        o.config = GetParam().config;
        o.precision = GetParam().precision;
        return o;
    }
    bool int8() const { return GetParam().precision == Precision::Int8; }
    bool has(uint32_t feature) const {
        return nvdla_hw_has(&test::config(GetParam().config), feature);
    }
    double layer_bound() const { return int8() ? kInt8Layer : kFp16; }
    double conv_bound() const { return int8() ? kInt8Conv : kFp16; }
    double block_bound() const { return int8() ? kInt8Block : kFp16; }
    // Builds, runs and checks every output against the bound; returns the build.
    std::optional<Outcome> check(const Network& net, const std::vector<HostTensor>& in,
                                 double limit, float lo = -1, float hi = 1) {
        auto r = run_and_compare(net, in, options(), 4, lo, hi);
        EXPECT_TRUE(r);
        if (!r) return r;
        for (size_t i = 0; i < r->diff.size(); ++i)
            EXPECT_LE(r->diff[i].relative(), limit) << "output " << i << "\n" << describe(*r);
        return r;
    }
    // The build fails with a sentence naming `layer` and containing `what`.
    void expect_refused(const Network& net, const std::vector<HostTensor>& in,
                        const std::string& layer, const std::string& what) {
        Calibration cal;
        ASSERT_TRUE(cal.add_sample(net, in).ok());
        BuildOptions o = options();
        o.calibration = &cal;
        o.cpu_fallback = false;
        Result<CompiledNetwork> built = build(net, o);
        ASSERT_FALSE(built.ok());
        EXPECT_NE(built.message().find("'" + layer + "'"), std::string::npos) << built.message();
        EXPECT_NE(built.message().find(what), std::string::npos) << built.message();
    }
    std::vector<float> weights(size_t n, float scale = 0.5f) {
        return random_weights(rng, n, scale);
    }
    std::mt19937_64 rng = test::rng_for_test();
};

// ---- clip and the activations built on it ----

TEST_P(ModernOp, Relu6FusedBehindConvolution) {
    Network net;
    Tensor x = net.input("data", {1, 5, 9, 8});
    x = net.convolution(x, conv(7, 3, 1), weights(7 * 5 * 9), weights(7), "conv");
    x = net.clip(x, 0.0f, 0.6f, "relu6");
    net.output(x, "out");
    auto r = check(net, {random_tensor(rng, {1, 5, 9, 8})}, conv_bound());
    ASSERT_TRUE(r);
    // One operation: the clip runs in the convolution's SDP.
    EXPECT_EQ(r->built.operations.size(), 1u) << describe(*r);
    EXPECT_TRUE(contains(r->built.operations, "relu")) << describe(*r);
}

TEST_P(ModernOp, ClipAnyRange) {
    // Both bounds non-zero, behind a convolution with bias (X1 is taken by the bias); on
    // configurations without the Y stage the second bound runs in a second SDP pass, which
    // reads the convolution's int8 output: the error is in steps of the convolution's range m,
    // and the bounds are fractions of m.
    const std::vector<float> w = weights(27), b = weights(9);
    const HostTensor in = random_tensor(rng, {1, 3, 8, 11});
    Network pre;
    pre.output(pre.convolution(pre.input("data", {1, 3, 8, 11}), conv(9, 1), w, b, "conv"), "out");
    Result<std::vector<HostTensor>> ref = run_reference(pre, {in});
    ASSERT_TRUE(ref.ok()) << ref.message();
    float m = 0;
    for (float v : (*ref)[0].data) m = std::max(m, std::fabs(v));
    Network net;
    Tensor x = net.input("data", {1, 3, 8, 11});
    x = net.convolution(x, conv(9, 1), w, b, "conv");
    x = net.clip(x, -0.5f * m, 0.6f * m, "clip");
    net.output(x, "out");
    check(net, {in}, int8() ? kInt8Conv / 0.6 : kFp16);
}

TEST_P(ModernOp, ClipOfAnInputWithOneBound) {
    Network net;
    Tensor in = net.input("data", {1, 5, 7, 6});
    net.output(net.clip(in, -std::numeric_limits<float>::infinity(), 0.25f, "upper"), "upper");
    net.output(net.clip(in, -0.5f, std::numeric_limits<float>::infinity(), "lower"), "lower");
    check(net, {random_tensor(rng, {1, 5, 7, 6})}, layer_bound());
}

TEST_P(ModernOp, HardSigmoid) {
    Network net;
    Tensor x = net.input("data", {1, 6, 8, 8});
    x = net.convolution(x, conv(5, 3, 1), weights(5 * 6 * 9), weights(5), "conv");
    x = net.hard_sigmoid(x, 0.2f, 0.5f, "hsig");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 6, 8, 8}, -3, 3)}, conv_bound(), -3, 3);
}

TEST_P(ModernOp, HardSwishBlock) {
    // MobileNetV3: convolution, batch norm, hard swish.
    Network net;
    Tensor x = net.input("data", {1, 3, 10, 10});
    x = net.convolution(x, conv(11, 3, 1, 1, 2), weights(11 * 27), weights(11), "conv");
    x = net.batch_norm(x, weights(11), test::random_vector<float>(rng, 11, 0.5f, 2.0f),
                       weights(11, 3.0f), weights(11), 1e-5f, "bn");
    x = net.hard_swish(x, "hswish");
    net.output(x, "out");
    // The gate is quantized on configurations where the product needs a second pass.
    const double limit = int8() && !has(NVDLA_FEATURE_SDP_EW) ? kInt8Block : conv_bound();
    check(net, {random_tensor(rng, {1, 3, 10, 10}, -2, 2)}, limit, -2, 2);
}

TEST_P(ModernOp, HardSwishOfALargerConvolution) {
    // 3x3 stride 1 on a 16x16 plane: Winograd in fp16 on nv_full; the convolution's output is
    // both the gate's source and the product's operand.
    Network net;
    Tensor x = net.input("data", {1, 16, 16, 16});
    x = net.convolution(x, conv(16, 3, 1), weights(16 * 16 * 9, 0.2f), weights(16), "conv");
    x = net.hard_swish(x, "hswish");
    x = net.convolution(x, conv(5, 1), weights(5 * 16, 0.3f), weights(5), "head");
    net.output(x, "out");
    const double limit = int8() && !has(NVDLA_FEATURE_SDP_EW) ? kInt8Block : conv_bound();
    check(net, {random_tensor(rng, {1, 16, 16, 16}, -2, 2)}, limit, -2, 2);
}

TEST_P(ModernOp, SiLU) {
    Network net;
    Tensor x = net.input("data", {1, 7, 6, 9});
    x = net.convolution(x, conv(5, 1), weights(35), weights(5), "conv");
    x = net.silu(x, "silu");
    net.output(x, "out");
    const std::vector<HostTensor> in{random_tensor(rng, {1, 7, 6, 9}, -2, 2)};
    if (!has(NVDLA_FEATURE_SDP_LUT)) {
        expect_refused(net, in, "silu/sigmoid", "lookup table");
        return;
    }
    // The sigmoid is an interpolated LUT, and quantized before the product.
    check(net, in, int8() ? kInt8Block : 1e-2, -2, 2);
}

TEST_P(ModernOp, MishBehindConvolution) {
    // A CPU operation between the convolution and the next layer; the float reference computes
    // mish on its own (reference_ops.cpp), the runtime as x * tanh(relu(x) + log1p(exp(-|x|))).
    Network net;
    Tensor x = net.input("data", {1, 6, 7, 9});
    x = net.convolution(x, conv(11, 3, 1), weights(11 * 6 * 9), weights(11), "conv");
    x = net.mish(x, "mish");
    x = net.convolution(x, conv(5, 1), weights(5 * 11), weights(5), "head");
    net.output(x, "out");
    const std::vector<HostTensor> in{random_tensor(rng, {1, 6, 7, 9}, -2, 2)};
    auto r = check(net, in, int8() ? kInt8Conv + kInt8Block : kFp16, -2, 2);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->built.cpu_operations.size(), 1u) << describe(*r);
    EXPECT_EQ(r->built.cpu_operations[0].rfind("mish: CPU mish", 0), 0u)
        << r->built.cpu_operations[0];
    // Without CPU fallback: a sentence naming the layer and why.
    expect_refused(net, in, "mish", "no SDP program computes mish");
}

// ---- element-wise operations and broadcasting ----

TEST_P(ModernOp, SubtractAndMinimum) {
    Network net;
    Tensor a = net.input("a", {1, 9, 6, 7});
    Tensor b = net.input("b", {1, 9, 6, 7});
    Tensor ca = net.convolution(a, conv(9, 1), weights(81), weights(9), "ca");
    Tensor cb = net.convolution(b, conv(9, 1), weights(81), weights(9), "cb");
    net.output(net.eltwise(ca, cb, EltwiseOp::Sub, "sub"), "sub");
    net.output(net.eltwise(a, b, EltwiseOp::Min, "min"), "min");
    check(net, {random_tensor(rng, {1, 9, 6, 7}), random_tensor(rng, {1, 9, 6, 7})},
          int8() ? 3.0 / 127 : kFp16);
}

TEST_P(ModernOp, BroadcastPerChannel) {
    // b {1, C, 1, 1} computed by the network: a per-channel operand read from memory.
    Network net;
    Tensor a = net.input("a", {1, 13, 7, 8});
    Tensor v = net.input("v", {1, 13, 1, 1});
    Tensor x = net.convolution(a, conv(13, 1), weights(169), weights(13), "conv");
    Tensor s = net.convolution(v, conv(13, 1), weights(169), weights(13), "vec");
    net.output(net.eltwise(x, s, EltwiseOp::Product, "mul"), "mul");
    net.output(net.eltwise(s, a, EltwiseOp::Sum, "add_swapped"), "add");
    net.output(net.eltwise(s, a, EltwiseOp::Sub, "sub_swapped"), "sub");
    auto r = check(net, {random_tensor(rng, {1, 13, 7, 8}), random_tensor(rng, {1, 13, 1, 1})},
                   int8() ? 3.0 / 127 : kFp16);
    ASSERT_TRUE(r);
    EXPECT_TRUE(contains(r->built.operations, "per channel")) << describe(*r);
}

TEST_P(ModernOp, BroadcastPlaneAndScalar) {
    Network net;
    Tensor a = net.input("a", {1, 6, 5, 9});
    Tensor p = net.input("p", {1, 1, 5, 9});
    Tensor s = net.input("s", {1, 1, 1, 1});
    Tensor x = net.eltwise(a, p, EltwiseOp::Sum, "plane");
    net.output(net.eltwise(s, x, EltwiseOp::Product, "scalar"), "out");
    check(net,
          {random_tensor(rng, {1, 6, 5, 9}), random_tensor(rng, {1, 1, 5, 9}),
           random_tensor(rng, {1, 1, 1, 1}, 0.5f, 1.0f)},
          int8() ? 4.0 / 127 : kFp16);
}

TEST_P(ModernOp, DivisionIsLeftToTheCpu) {
    Network net;
    Tensor a = net.input("a", {1, 4, 3, 3});
    Tensor b = net.input("b", {1, 4, 1, 1});
    // Behind a convolution whose SDP could otherwise take it as a chain element.
    a = net.convolution(a, conv(4, 1), weights(16), weights(4), "conv");
    net.output(net.eltwise(a, b, EltwiseOp::Div, "div"), "out");
    expect_refused(net, {random_tensor(rng, {1, 4, 3, 3}), random_tensor(rng, {1, 4, 1, 1}, 1, 2)},
                   "div", "divide");
}

TEST_P(ModernOp, SqueezeExcitationBlock) {
    // EfficientNet / MobileNetV3: global average pool, reduce, ReLU, expand, hard sigmoid,
    // channel-wise product with the block's input.
    const uint32_t c = 12, h = 8, w = 8, mid = 5;
    Network net;
    Tensor in = net.input("data", {1, 3, h, w});
    Tensor x = net.convolution(in, conv(c, 3, 1), weights(c * 27), weights(c), "conv");
    x = net.relu(x, "relu");
    PoolingDesc gap;
    gap.type = PoolingType::Average;
    gap.kernel_h = gap.stride_h = h;
    gap.kernel_w = gap.stride_w = w;
    Tensor s = net.pooling(x, gap, "squeeze");
    s = net.convolution(s, conv(mid, 1), weights(mid * c), weights(mid), "reduce");
    s = net.relu(s, "reduce_relu");
    s = net.convolution(s, conv(c, 1), weights(c * mid, 1.0f), weights(c), "expand");
    s = net.hard_sigmoid(s, 1.0f / 6, 0.5f, "gate");
    x = net.eltwise(x, s, EltwiseOp::Product, "excite");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 3, h, w})}, block_bound());
}

TEST_P(ModernOp, GlobalPoolingOfLargePlanes) {
    // ReduceMean / ReduceMax over H and W: 56x56 runs as two PDP passes (8x8 then 7x7), 7x7 in
    // one.
    for (uint32_t size : {56u, 7u}) {
        Network net;
        Tensor x = net.input("data", {1, 5, size, size});
        PoolingDesc mean, max;
        mean.type = PoolingType::Average;
        max.type = PoolingType::Max;
        for (PoolingDesc* d : {&mean, &max})
            d->kernel_h = d->kernel_w = d->stride_h = d->stride_w = size;
        net.output(net.pooling(x, mean, "mean"), "mean");
        net.output(net.pooling(x, max, "max"), "max");
        // The mean of uniform values in [0, 1] is near 0.5 whatever the plane: a relative bound
        // on it is a bound on the arithmetic, not on cancellation.
        check(net, {random_tensor(rng, {1, 5, size, size}, 0, 1)}, layer_bound(), 0, 1);
    }
}

// ---- pad ----

TEST_P(ModernOp, PadFoldsIntoConvolution) {
    Network net;
    Tensor x = net.input("data", {1, 5, 7, 7});
    x = net.pad(x, 1, 2, 0, 1, 0.0f, "pad");
    x = net.convolution(x, conv(6, 3), weights(6 * 5 * 9), weights(6), "conv");
    net.output(x, "out");
    auto r = check(net, {random_tensor(rng, {1, 5, 7, 7})}, layer_bound());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->built.operations.size(), 1u) << describe(*r);
    EXPECT_TRUE(contains(r->built.operations, "pad folded")) << describe(*r);
}

TEST_P(ModernOp, PadFoldsIntoMaxPooling) {
    Network net;
    Tensor x = net.input("data", {1, 7, 8, 8});
    x = net.pad(x, 1, 1, 1, 1, -std::numeric_limits<float>::infinity(), "pad");
    x = net.pooling(
        x, {.type = PoolingType::Max, .kernel_h = 3, .kernel_w = 3, .stride_h = 2, .stride_w = 2},
        "pool");
    net.output(x, "out");
    auto r = check(net, {random_tensor(rng, {1, 7, 8, 8})}, layer_bound());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->built.operations.size(), 1u) << describe(*r);
}

TEST_P(ModernOp, PadWithAValueFoldsIntoAnUnpaddedConvolution) {
    // The convolution core pads with the pad's value (PAD_VALUE) when the convolution has no
    // padding of its own.
    Network net;
    Tensor x = net.input("data", {1, 6, 7, 5});
    x = net.pad(x, 1, 1, 2, 0, -0.75f, "pad");
    x = net.convolution(x, conv(5, 3), weights(5 * 6 * 9), weights(5), "conv");
    net.output(x, "out");
    auto r = check(net, {random_tensor(rng, {1, 6, 7, 5})}, layer_bound());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->built.operations.size(), 1u) << describe(*r);
    // In Winograd mode (fp16 on nv_full, a plane large enough to pay) the same.
    Network big;
    Tensor y = big.input("data", {1, 16, 16, 16});
    y = big.pad(y, 1, 1, 1, 1, 0.5f, "pad");
    y = big.convolution(y, conv(16, 3), weights(16 * 16 * 9, 0.2f), weights(16), "conv");
    y = big.convolution(y, conv(4, 1), weights(4 * 16, 0.3f), weights(4), "head");
    big.output(y, "out");
    check(big, {random_tensor(rng, {1, 16, 16, 16})}, conv_bound());
}

TEST_P(ModernOp, PadWithAValueIsAnOperation) {
    // A value other than 0 before a convolution, and a pad that is an output.
    Network net;
    Tensor in = net.input("data", {1, 5, 6, 7});
    Tensor p = net.pad(in, 2, 1, 1, 3, 0.5f, "pad");
    net.output(p, "padded");
    Tensor x = net.convolution(p, conv(4, 3), weights(4 * 5 * 9), weights(4), "conv");
    net.output(x, "conv");
    check(net, {random_tensor(rng, {1, 5, 6, 7})}, layer_bound());
}

// ---- resizing, slices and shuffles ----

TEST_P(ModernOp, ResizeNearest) {
    Network net;
    Tensor x = net.input("data", {1, 5, 6, 7});
    x = net.convolution(x, conv(9, 1), weights(45), weights(9), "conv");
    x = net.resize_nearest(x, 2, 3, "up");
    net.output(x, "out");
    auto r = check(net, {random_tensor(rng, {1, 5, 6, 7})}, layer_bound());
    ASSERT_TRUE(r);
    EXPECT_TRUE(contains(r->built.operations, "up: nearest resize 2x3 as 5 SDP copies"))
        << describe(*r);
}

TEST_P(ModernOp, ResizeNearestOfALargePlane) {
    // 100x100 = 10000 pixels: the column pass reads bands of 81 rows (8192 pixels at most).
    Network net;
    Tensor x = net.input("data", {1, 3, 100, 100});
    net.output(net.resize_nearest(x, 1, 2, "up"), "out");
    check(net, {random_tensor(rng, {1, 3, 100, 100})}, layer_bound());
}

TEST_P(ModernOp, ResizeBilinear) {
    // Scale 2 (weights 1/16, 3/16, 9/16: exact in fp16) and 3x2 (thirds), edges clamped.
    Network net;
    Tensor x = net.input("data", {1, 5, 6, 7});
    net.output(net.resize_bilinear(x, 2, 2, "up2"), "up2");
    net.output(net.resize_bilinear(x, 3, 2, "up32"), "up32");
    // int8: the weights round to 127ths of the largest (9/16) and the output by half a step.
    check(net, {random_tensor(rng, {1, 5, 6, 7})}, int8() ? 3.0 / 127 : kFp16);
}

TEST_P(ModernOp, UNetDecoderStep) {
    // Upsample the deep map bilinearly, concatenate the skip connection, convolve.
    Network net;
    Tensor in = net.input("data", {1, 3, 12, 12});
    Tensor skip = net.convolution(in, conv(8, 3, 1), weights(8 * 27), weights(8), "enc");
    skip = net.relu(skip, "enc_relu");
    Tensor deep =
        net.convolution(skip, conv(9, 3, 1, 1, 2), weights(9 * 8 * 9, 0.3f), weights(9), "down");
    deep = net.resize_bilinear(deep, 2, 2, "up");
    const Tensor parts[] = {skip, deep};
    Tensor x = net.concat(parts, "cat");
    x = net.convolution(x, conv(4, 3, 1), weights(4 * 17 * 9, 0.2f), weights(4), "dec");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 3, 12, 12})}, block_bound());
}

TEST_P(ModernOp, UpsampleAndConcat) {
    // A YOLO neck: a deep feature map upsampled and concatenated with a shallow one.
    Network net;
    Tensor in = net.input("data", {1, 3, 16, 16});
    Tensor shallow = net.convolution(in, conv(16, 3, 1), weights(16 * 27), weights(16), "c1");
    shallow = net.clip(shallow, 0.0f, 6.0f, "c1_relu6");
    Tensor deep = net.convolution(shallow, conv(32, 3, 1, 1, 2), weights(32 * 16 * 9, 0.2f),
                                  weights(32), "c2");
    deep = net.resize_nearest(deep, 2, 2, "up");
    const Tensor parts[] = {deep, shallow};
    Tensor x = net.concat(parts, "cat");
    x = net.convolution(x, conv(7, 1), weights(7 * 48, 0.2f), weights(7), "head");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 3, 16, 16})}, block_bound());
}

TEST_P(ModernOp, SliceChannels) {
    // Slices starting on an atom are views, the others 1x1 selections.
    Network net;
    Tensor in = net.input("data", {1, 37, 5, 6});
    Tensor x = net.convolution(in, conv(37, 1), weights(37 * 37, 0.2f), weights(37), "conv");
    net.output(net.slice_channels(x, 0, 11, "head"), "head");
    net.output(net.slice_channels(x, 3, 20, "odd"), "odd");
    net.output(net.slice_channels(x, 32, 37, "tail"), "tail");
    check(net, {random_tensor(rng, {1, 37, 5, 6})}, layer_bound());
}

TEST_P(ModernOp, SliceViewFeedsAConvolution) {
    Network net;
    Tensor in = net.input("data", {1, 40, 6, 6});
    Tensor x = net.slice_channels(in, 32, 40, "slice");
    x = net.convolution(x, conv(3, 3, 1), weights(3 * 8 * 9), weights(3), "conv");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 40, 6, 6})}, layer_bound());
}

TEST_P(ModernOp, ChannelShuffleUnit) {
    // ShuffleNetV2's stride-1 unit: split, 1x1 -> depthwise 3x3 -> 1x1 on one half, concat,
    // shuffle in two groups.
    const uint32_t c = 10, half = 5;
    Network net;
    Tensor in = net.input("data", {1, c, 8, 8});
    Tensor left = net.slice_channels(in, 0, half, "split_left");
    Tensor right = net.slice_channels(in, half, c, "split_right");
    right = net.convolution(right, conv(half, 1), weights(half * half), weights(half), "pw1");
    right = net.relu(right, "pw1_relu");
    right = net.convolution(right, conv(half, 3, 1, half), weights(half * 9), weights(half), "dw");
    right = net.convolution(right, conv(half, 1), weights(half * half), weights(half), "pw2");
    right = net.relu(right, "pw2_relu");
    const Tensor parts[] = {left, right};
    Tensor x = net.concat(parts, "cat");
    x = net.shuffle_channels(x, 2, "shuffle");
    net.output(x, "out");
    auto r = check(net, {random_tensor(rng, {1, c, 8, 8})}, block_bound());
    ASSERT_TRUE(r);
    // The shuffle's permutation goes into the concat's convolutions.
    EXPECT_TRUE(contains(r->built.operations, "concat input 1 shuffled")) << describe(*r);
    EXPECT_FALSE(contains(r->built.operations, "shuffle: CONV")) << describe(*r);
}

TEST_P(ModernOp, InvertedResidualBlock) {
    // MobileNetV2: 1x1 expand + ReLU6, depthwise 3x3 + ReLU6, 1x1 project, residual sum.
    const uint32_t c = 7, e = 21;
    Network net;
    Tensor in = net.input("data", {1, c, 10, 10});
    Tensor x = net.convolution(in, conv(e, 1), weights(e * c), weights(e), "expand");
    x = net.clip(x, 0.0f, 6.0f, "expand_relu6");
    x = net.convolution(x, conv(e, 3, 1, e), weights(e * 9), weights(e), "depthwise");
    x = net.clip(x, 0.0f, 6.0f, "depthwise_relu6");
    x = net.convolution(x, conv(c, 1), weights(c * e, 0.3f), weights(c), "project");
    x = net.eltwise(x, in, EltwiseOp::Sum, "residual");
    net.output(x, "out");
    auto r = check(net, {random_tensor(rng, {1, c, 10, 10})}, block_bound());
    ASSERT_TRUE(r);
    // MACs: the network's own, and what the convolution core does (the depthwise layer as
    // block-diagonal chunks of an atom of channels).
    const uint64_t plane = 100;
    const uint64_t model = plane * (e * c) + plane * e * 9 + plane * c * e;
    EXPECT_EQ(r->built.model_macs, model);
    EXPECT_GT(r->built.hardware_macs, model);
}

TEST_P(ModernOp, MobileNetV3Block) {
    // Stem with hard swish, a depthwise layer, squeeze-excitation with hard sigmoid, a
    // projection with a residual sum, global pooling and a classifier; two outputs.
    const uint32_t c = 16, se = 8;
    Network net("mnv3");
    Tensor in = net.input("data", {1, 3, 16, 16});
    Tensor x = net.convolution(in, conv(c, 3, 1, 1, 2), weights(c * 27), weights(c), "stem");
    x = net.hard_swish(x, "stem_hswish");
    Tensor y = net.convolution(x, conv(c, 3, 1, c), weights(c * 9), weights(c), "dw");
    y = net.batch_norm(y, weights(c), test::random_vector<float>(rng, c, 0.5f, 2.0f), {}, {}, 1e-5f,
                       "dw_bn");
    y = net.relu(y, "dw_relu");
    PoolingDesc gap;
    gap.type = PoolingType::Average;
    gap.kernel_h = gap.stride_h = gap.kernel_w = gap.stride_w = 8;
    Tensor s = net.pooling(y, gap, "se_pool");
    s = net.relu(net.convolution(s, conv(se, 1), weights(se * c), weights(se), "se_reduce"),
                 "se_relu");
    s = net.hard_sigmoid(
        net.convolution(s, conv(c, 1), weights(c * se, 1.0f), weights(c), "se_expand"), 1.0f / 6,
        0.5f, "se_gate");
    y = net.eltwise(y, s, EltwiseOp::Product, "se_scale");
    y = net.convolution(y, conv(c, 1), weights(c * c, 0.3f), weights(c), "project");
    y = net.eltwise(x, y, EltwiseOp::Sum, "residual");
    net.output(y, "features");
    Tensor g = net.pooling(y, gap, "head_pool");
    g = net.hard_swish(net.convolution(g, conv(10, 1), weights(10 * c), weights(10), "head"),
                       "head_hswish");
    net.output(g, "logits");
    check(net, {random_tensor(rng, {1, 3, 16, 16})}, block_bound());
}

TEST_P(ModernOp, EfficientNetBlock) {
    // MBConv: expand + SiLU, depthwise + SiLU, squeeze-excitation with sigmoid, project.
    const uint32_t c = 6, e = 12;
    Network net("effnet");
    Tensor in = net.input("data", {1, c, 8, 8});
    Tensor x = net.silu(net.convolution(in, conv(e, 1), weights(e * c), weights(e), "expand"),
                        "expand_silu");
    x = net.silu(net.convolution(x, conv(e, 3, 1, e), weights(e * 9), weights(e), "dw"), "dw_silu");
    PoolingDesc gap;
    gap.type = PoolingType::Average;
    gap.kernel_h = gap.stride_h = gap.kernel_w = gap.stride_w = 8;
    Tensor s = net.pooling(x, gap, "se_pool");
    s = net.silu(net.convolution(s, conv(3, 1), weights(3 * e), weights(3), "se_reduce"),
                 "se_silu");
    s = net.sigmoid(net.convolution(s, conv(e, 1), weights(e * 3), weights(e), "se_expand"),
                    "se_gate");
    x = net.eltwise(s, x, EltwiseOp::Product, "se_scale");
    x = net.convolution(x, conv(c, 1), weights(c * e, 0.3f), weights(c), "project");
    net.output(net.eltwise(x, in, EltwiseOp::Sum, "residual"), "out");
    const std::vector<HostTensor> inputs{random_tensor(rng, {1, c, 8, 8}, -2, 2)};
    if (!has(NVDLA_FEATURE_SDP_LUT)) {
        expect_refused(net, inputs, "expand_silu/sigmoid", "lookup table");
        return;
    }
    check(net, inputs, int8() ? kInt8Block : 1e-2, -2, 2);
}

TEST_P(ModernOp, DepthwiseMacs) {
    // Depthwise layers run as block-diagonal convolutions of `per_chunk` groups, the fewest
    // whose channels fill whole atoms: the core multiplies per_chunk times the model's MACs.
    const uint32_t c = 64;
    Network net;
    Tensor in = net.input("data", {1, c, 6, 6});
    Tensor x = net.convolution(in, conv(c, 3, 1, c), weights(c * 9), weights(c), "dw");
    net.output(x, "out");
    auto r = check(net, {random_tensor(rng, {1, c, 6, 6})}, layer_bound());
    ASSERT_TRUE(r);
    const uint32_t lanes = test::config(GetParam().config).atom_bytes / (int8() ? 1 : 2);
    EXPECT_EQ(r->built.model_macs, uint64_t(c) * 36 * 9);
    EXPECT_EQ(r->built.hardware_macs, uint64_t(c) * 36 * 9 * lanes);
}

INSTANTIATE_TEST_SUITE_P(Targets, ModernOp,
                         ::testing::Values(Target{"nv_full", Precision::Fp16},
                                           Target{"nv_full", Precision::Int8},
                                           Target{"nv_small", Precision::Int8}),
                         target_name);

// ---- the float reference, against hand-worked values ----

TEST(ModernOpReference, ValuesWorkedByHand) {
    Network net;
    Tensor x = net.input("x", {1, 1, 1, 4});
    net.output(net.clip(x, 0.0f, 6.0f, "relu6"), "relu6");
    net.output(net.hard_sigmoid(x, 0.2f, 0.5f, "hsig"), "hsig");
    net.output(net.hard_swish(x, "hswish"), "hswish");
    net.output(net.pad(x, 1, 0, 0, 1, 9.0f, "pad"), "pad");
    net.output(net.resize_nearest(x, 2, 1, "up"), "up");
    net.output(net.resize_nearest(x, 1, 2, "wide"), "wide");
    HostTensor in = make_host_tensor({1, 1, 1, 4});
    in.data = {-4.0f, -1.5f, 2.0f, 7.0f};
    Result<std::vector<HostTensor>> out = run_reference(net, {in});
    ASSERT_TRUE(out.ok()) << out.message();
    EXPECT_EQ((*out)[0].data, (std::vector<float>{0, 0, 2, 6}));
    // 0.2 x + 0.5: -0.3, 0.2, 0.9, 1.9 -> clipped.
    EXPECT_NEAR((*out)[1].data[1], 0.2f, 1e-6);
    EXPECT_NEAR((*out)[1].data[2], 0.9f, 1e-6);
    EXPECT_EQ((*out)[1].data[0], 0.0f);
    EXPECT_EQ((*out)[1].data[3], 1.0f);
    // x * clip(x / 6 + 1/2, 0, 1): 0, -1.5 * 0.25, 2 * 5/6, 7.
    EXPECT_EQ((*out)[2].data[0], 0.0f);
    EXPECT_NEAR((*out)[2].data[1], -0.375f, 1e-6);
    EXPECT_NEAR((*out)[2].data[2], 2.0f * 5 / 6, 1e-6);
    EXPECT_NEAR((*out)[2].data[3], 7.0f, 1e-6);
    EXPECT_EQ((*out)[3].dims, (Dims4{1, 1, 2, 5}));
    EXPECT_EQ((*out)[3].data, (std::vector<float>{9, 9, 9, 9, 9, -4, -1.5f, 2, 7, 9}));
    EXPECT_EQ((*out)[4].data, (std::vector<float>{-4, -1.5f, 2, 7, -4, -1.5f, 2, 7}));
    EXPECT_EQ((*out)[5].data, (std::vector<float>{-4, -4, -1.5f, -1.5f, 2, 2, 7, 7}));
}

TEST(ModernOpReference, BilinearShuffleAndBroadcast) {
    Network net;
    Tensor x = net.input("x", {1, 4, 2, 2});
    Tensor v = net.input("v", {1, 4, 1, 1});
    net.output(net.resize_bilinear(x, 2, 2, "bilinear"), "bilinear");
    net.output(net.shuffle_channels(x, 2, "shuffle"), "shuffle");
    net.output(net.eltwise(v, x, EltwiseOp::Sub, "sub"), "sub");
    net.output(net.slice_channels(x, 1, 3, "slice"), "slice");
    HostTensor in = make_host_tensor({1, 4, 2, 2});
    for (size_t i = 0; i < in.data.size(); ++i) in.data[i] = float(i);
    HostTensor vec = make_host_tensor({1, 4, 1, 1});
    vec.data = {10, 20, 30, 40};
    Result<std::vector<HostTensor>> out = run_reference(net, {in, vec});
    ASSERT_TRUE(out.ok()) << out.message();
    // Channel 0 is [[0, 1], [2, 3]]: row 0 of the 4x4 result is 0, 0.25, 0.75, 1 (edges
    // clamped), row 1 blends rows 0 and 1 by 1/4.
    const HostTensor& b = (*out)[0];
    EXPECT_FLOAT_EQ(b.at(0, 0, 0, 0), 0.0f);
    EXPECT_FLOAT_EQ(b.at(0, 0, 0, 1), 0.25f);
    EXPECT_FLOAT_EQ(b.at(0, 0, 0, 2), 0.75f);
    EXPECT_FLOAT_EQ(b.at(0, 0, 0, 3), 1.0f);
    EXPECT_FLOAT_EQ(b.at(0, 0, 1, 0), 0.5f);
    EXPECT_FLOAT_EQ(b.at(0, 0, 3, 3), 3.0f);
    // Groups of 2 over 4 channels: output channels are inputs 0, 2, 1, 3.
    const HostTensor& s = (*out)[1];
    EXPECT_EQ(s.at(0, 1, 0, 0), 8.0f);
    EXPECT_EQ(s.at(0, 2, 0, 0), 4.0f);
    EXPECT_EQ(s.at(0, 3, 1, 1), 15.0f);
    // v - x with v per channel: channel 2, element 1 is 30 - 9.
    EXPECT_EQ((*out)[2].at(0, 2, 0, 1), 21.0f);
    EXPECT_EQ((*out)[3].dims, (Dims4{1, 2, 2, 2}));
    EXPECT_EQ((*out)[3].at(0, 0, 0, 0), 4.0f);
}

TEST(ModernOpCalibration, InnerNodesNeedNoRange) {
    // An importer sets ranges for the tensors it knows; the nodes an operator adds inside
    // (hard swish's linear part and gate, a subtraction's negation, a broadcast's expansion)
    // derive theirs from their input's.
    std::mt19937_64 rng = test::rng_for_test();
    Network net;
    Tensor in = net.input("data", {1, 6, 5, 5});
    Tensor s = net.input("s", {1, 1, 1, 1});
    Tensor x = net.convolution(in, conv(6, 1), random_weights(rng, 36), {}, "conv");
    Tensor h = net.hard_swish(x, "hswish");
    Tensor y = net.eltwise(h, s, EltwiseOp::Sub, "sub");
    net.output(y, "out");
    const std::vector<HostTensor> inputs{random_tensor(rng, {1, 6, 5, 5}),
                                         random_tensor(rng, {1, 1, 1, 1})};
    Result<std::vector<HostTensor>> ref = run_reference(net, inputs);
    ASSERT_TRUE(ref.ok());
    Calibration full;
    ASSERT_TRUE(full.add_sample(net, inputs).ok());
    Calibration cal;
    for (Tensor t : {in, s, x, h, y}) cal.set_range(t, *full.range(t));
    BuildOptions o;
    o.precision = Precision::Int8;
    o.calibration = &cal;
    Result<CompiledNetwork> built = build(net, o);
    ASSERT_TRUE(built.ok()) << built.message();
    Result<std::vector<HostTensor>> out = run(*built, emu("nv_full"), inputs);
    ASSERT_TRUE(out.ok()) << out.message();
    Result<Difference> d = compare((*out)[0], (*ref)[0]);
    ASSERT_TRUE(d.ok());
    EXPECT_LE(d->relative(), kInt8Block);
}

TEST(ModernOpErrors, BadArgumentsNameTheLayer) {
    Network net;
    Tensor x = net.input("x", {1, 6, 4, 4});
    EXPECT_FALSE(net.clip(x, 2.0f, 1.0f, "bad_clip").valid());
    EXPECT_NE(net.status().message().find("'bad_clip'"), std::string::npos);
    Network n2;
    x = n2.input("x", {1, 6, 4, 4});
    EXPECT_FALSE(n2.slice_channels(x, 4, 9, "bad_slice").valid());
    EXPECT_NE(n2.status().message().find("'bad_slice'"), std::string::npos);
    Network n3;
    x = n3.input("x", {1, 6, 4, 4});
    EXPECT_FALSE(n3.shuffle_channels(x, 4, "bad_shuffle").valid());
    EXPECT_NE(n3.status().message().find("'bad_shuffle'"), std::string::npos);
    Network n4;
    x = n4.input("x", {1, 6, 4, 4});
    Tensor y = n4.input("y", {1, 6, 2, 4});
    EXPECT_FALSE(n4.eltwise(x, y, EltwiseOp::Sum, "bad_eltwise").valid());
    EXPECT_NE(n4.status().message().find("'bad_eltwise'"), std::string::npos);
    Network n5;
    x = n5.input("x", {1, 6, 4, 4});
    EXPECT_FALSE(n5.resize_nearest(x, 0, 2, "bad_resize").valid());
    EXPECT_NE(n5.status().message().find("'bad_resize'"), std::string::npos);
}

}  // namespace
}  // namespace nvdla::builder_test
