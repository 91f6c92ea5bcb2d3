// One network per layer type (odd shapes), on nv_full in fp16 and int8 and on nv_small in
// int8, against the float reference. Bounds: fp16 outputs within kFp16 of the largest
// reference value (fp16 inputs and weights round to 2^-11; the seed's convolution threshold
// for these sizes is of the same order), int8 within kInt8 (a few quantization steps of the
// output range: input, weights and output each round by half a step of range/127).
#include "builder_rig.hpp"

namespace nvdla::builder_test {
namespace {

constexpr double kFp16 = 4e-3;
constexpr double kInt8 = 4e-2;

struct Target {
    const char* config;
    Precision precision;
};

std::string target_name(const ::testing::TestParamInfo<Target>& p) {
    return std::string(p.param.config) + "_" + std::string(to_string(p.param.precision));
}

class Layer : public ::testing::TestWithParam<Target> {
  protected:
    BuildOptions options() const {
        BuildOptions o;
        o.config = GetParam().config;
        o.precision = GetParam().precision;
        return o;
    }
    double bound(double fp16 = kFp16, double int8 = kInt8) const {
        return GetParam().precision == Precision::Fp16 ? fp16 : int8;
    }
    bool has(uint32_t feature) const {
        return nvdla_hw_has(&test::config(GetParam().config), feature);
    }
    // Builds, runs and checks every output against the bound.
    void check(const Network& net, const std::vector<HostTensor>& in, double limit,
               BuildOptions o) {
        auto r = run_and_compare(net, in, o);
        ASSERT_TRUE(r);
        for (size_t i = 0; i < r->diff.size(); ++i)
            EXPECT_LE(r->diff[i].relative(), limit) << "output " << i << "\n" << describe(*r);
    }
    void check(const Network& net, const std::vector<HostTensor>& in, double limit) {
        check(net, in, limit, options());
    }
    std::mt19937_64 rng = test::rng_for_test();
};

ConvolutionDesc conv(uint32_t k, uint32_t r, uint32_t s, uint32_t stride = 1, uint32_t pad = 0,
                     uint32_t dilation = 1, uint32_t groups = 1) {
    ConvolutionDesc d;
    d.out_channels = k;
    d.kernel_h = r;
    d.kernel_w = s;
    d.stride_h = d.stride_w = stride;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = pad;
    d.dilation_h = d.dilation_w = dilation;
    d.groups = groups;
    return d;
}

TEST_P(Layer, ConvolutionStridePadDilation) {
    Network net;
    Tensor x = net.input("data", {1, 7, 13, 10});
    ConvolutionDesc d = conv(19, 3, 2, 2, 1, 2);
    d.pad_bottom = 0;
    d.pad_right = 2;
    x = net.convolution(x, d, random_weights(rng, 19 * 7 * 3 * 2), random_weights(rng, 19), "conv");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 7, 13, 10})}, bound());
}

TEST_P(Layer, ConvolutionManyChannels) {
    // More channels than one atom holds, in and out (several surfaces, kernel groups).
    Network net;
    Tensor x = net.input("data", {1, 70, 5, 6});
    x = net.convolution(x, conv(45, 3, 3, 1, 1), random_weights(rng, 45 * 70 * 9, 0.2f), {},
                        "conv");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 70, 5, 6})}, bound());
}

TEST_P(Layer, ConvolutionGroups) {
    Network net;
    Tensor x = net.input("data", {1, 12, 6, 7});
    x = net.convolution(x, conv(6, 3, 3, 1, 1, 1, 3), random_weights(rng, 6 * 4 * 9),
                        random_weights(rng, 6), "grouped");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 12, 6, 7})}, bound());
}

TEST_P(Layer, ConvolutionDepthwise) {
    // 40 groups of one channel: split into aligned chunks of block-diagonal convolutions.
    Network net;
    Tensor x = net.input("data", {1, 40, 5, 5});
    x = net.convolution(x, conv(40, 3, 3, 1, 1, 1, 40), random_weights(rng, 40 * 9),
                        random_weights(rng, 40), "depthwise");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 40, 5, 5})}, bound());
}

TEST_P(Layer, ConvolutionBiasBatchNormRelu) {
    // Batch norm and scale fold into the weights; ReLU runs in X1.
    Network net;
    Tensor x = net.input("data", {1, 5, 8, 8});
    x = net.convolution(x, conv(9, 3, 3, 1, 1), random_weights(rng, 9 * 5 * 9),
                        random_weights(rng, 9), "conv");
    const std::vector<float> mean = random_weights(rng, 9),
                             var = test::random_vector<float>(rng, 9, 0.5f, 2.0f);
    x = net.batch_norm(x, mean, var, random_weights(rng, 9, 2.0f), random_weights(rng, 9), 1e-5f,
                       "bn");
    x = net.scale(x, std::vector<float>{1.5f}, std::vector<float>{0.1f}, "scale");
    x = net.relu(x, "relu");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 5, 8, 8})}, bound());
}

TEST_P(Layer, ConvolutionReluThenBatchNorm) {
    // Batch norm after the ReLU cannot fold: it runs in X2.
    Network net;
    Tensor x = net.input("data", {1, 4, 6, 5});
    x = net.convolution(x, conv(6, 1, 1), random_weights(rng, 24), random_weights(rng, 6), "conv");
    x = net.relu(x, "relu");
    x = net.batch_norm(x, random_weights(rng, 6), test::random_vector<float>(rng, 6, 0.5f, 2.0f),
                       random_weights(rng, 6, 1.0f), random_weights(rng, 6), 1e-5f, "bn");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 4, 6, 5})}, bound());
}

TEST_P(Layer, FullyConnected) {
    Network net;
    Tensor x = net.input("data", {1, 6, 3, 4});
    x = net.fully_connected(x, 11, random_weights(rng, 11 * 72, 0.3f), random_weights(rng, 11),
                            "fc");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 6, 3, 4})}, bound());
}

TEST_P(Layer, FlattenThenFullyConnected) {
    Network net;
    Tensor x = net.input("data", {1, 3, 4, 4});
    x = net.flatten(x, "flat");
    x = net.fully_connected(x, 7, random_weights(rng, 7 * 48, 0.3f), random_weights(rng, 7), "fc");
    x = net.flatten(x, "flat2");  // 1x1: a view
    x = net.fully_connected(x, 5, random_weights(rng, 35), {}, "fc2");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 3, 4, 4})}, bound());
}

TEST_P(Layer, MaxPooling) {
    Network net;
    Tensor x = net.input("data", {1, 10, 9, 11});
    PoolingDesc p;
    p.kernel_h = 3;
    p.kernel_w = 2;
    p.stride_h = 2;
    p.stride_w = 2;
    p.pad_top = 1;
    p.pad_right = 1;
    x = net.pooling(x, p, "pool");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 10, 9, 11})}, bound(1e-3, 1e-2));
}

TEST_P(Layer, AveragePooling) {
    Network net;
    Tensor x = net.input("data", {1, 6, 8, 7});
    PoolingDesc p;
    p.type = PoolingType::Average;
    p.kernel_h = p.kernel_w = 3;
    p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
    x = net.pooling(x, p, "pool");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 6, 8, 7})}, bound(2e-3, 2e-2));
}

TEST_P(Layer, WidePoolingSplitsColumns) {
    // Wider than the PDP's line buffer: split into column ranges.
    Network net;
    Tensor x = net.input("data", {1, 3, 4, 300});
    PoolingDesc p;
    p.kernel_h = p.kernel_w = 3;
    p.stride_w = 1;
    p.pad_left = p.pad_right = 1;
    x = net.pooling(x, p, "pool");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 3, 4, 300})}, bound(1e-3, 1e-2));
}

TEST_P(Layer, ConvolutionFusedPooling) {
    Network net;
    Tensor x = net.input("data", {1, 3, 12, 12});
    x = net.convolution(x, conv(8, 5, 5), random_weights(rng, 8 * 75, 0.3f), random_weights(rng, 8),
                        "conv");
    PoolingDesc p;
    p.kernel_h = p.kernel_w = 2;
    p.stride_h = p.stride_w = 2;
    x = net.pooling(x, p, "pool");
    net.output(x, "out");
    auto r = run_and_compare(net, {random_tensor(rng, {1, 3, 12, 12})}, options());
    ASSERT_TRUE(r);
    EXPECT_LE(r->diff[0].relative(), bound()) << describe(*r);
    EXPECT_NE(r->built.operations[0].find("-> PDP"), std::string::npos) << describe(*r);
}

TEST_P(Layer, Lrn) {
    Network net;
    Tensor x = net.input("data", {1, 12, 5, 4});
    LrnDesc d;
    d.local_size = 5;
    d.alpha = 0.5f;
    d.beta = 0.75f;
    d.k = 1.0f;
    x = net.lrn(x, d, "lrn");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 12, 5, 4}, -2, 2)}, bound(5e-3, 4e-2));
}

TEST_P(Layer, StandaloneAffineAndActivations) {
    // After a pooling layer nothing can fold: SDP from memory.
    Network net;
    Tensor x = net.input("data", {1, 9, 5, 6});
    PoolingDesc p;
    x = net.pooling(x, p, "identity_pool");
    x = net.batch_norm(x, random_weights(rng, 9), test::random_vector<float>(rng, 9, 0.5f, 2.0f),
                       random_weights(rng, 9, 2.0f), random_weights(rng, 9), 1e-5f, "bn");
    x = net.bias(x, random_weights(rng, 9), "bias");
    x = net.relu(x, "relu");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 9, 5, 6})}, bound());
}

TEST_P(Layer, PRelu) {
    Network net;
    Tensor x = net.input("data", {1, 5, 4, 7});
    x = net.convolution(x, conv(6, 3, 3, 1, 1), random_weights(rng, 6 * 45), random_weights(rng, 6),
                        "conv");
    x = net.prelu(x, test::random_vector<float>(rng, 6, 0.05f, 0.5f), "prelu");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 5, 4, 7})}, bound());
}

TEST_P(Layer, LeakyReluFromMemory) {
    Network net;
    Tensor x = net.input("data", {1, 5, 4, 7});
    x = net.prelu(x, std::vector<float>{0.1f}, "leaky");
    net.output(x, "out");
    check(net, {random_tensor(rng, {1, 5, 4, 7})}, bound());
}

TEST_P(Layer, SigmoidAndTanh) {
    for (int tanh = 0; tanh < 2; ++tanh) {
        Network net;
        Tensor x = net.input("data", {1, 7, 6, 5});
        x = net.convolution(x, conv(6, 1, 1), random_weights(rng, 42, 1.0f), random_weights(rng, 6),
                            "conv");
        x = tanh ? net.tanh(x, "act") : net.sigmoid(x, "act");
        net.output(x, "out");
        const HostTensor in = random_tensor(rng, {1, 7, 6, 5}, -3, 3);
        if (!has(NVDLA_FEATURE_SDP_LUT)) {
            Calibration cal;
            ASSERT_TRUE(cal.add_sample(net, {in}).ok());
            BuildOptions o = options();
            o.calibration = &cal;
            o.cpu_fallback = false;  // otherwise the CPU computes it (cpu_fallback_test.cpp)
            Result<CompiledNetwork> b = build(net, o);
            ASSERT_FALSE(b.ok());
            EXPECT_EQ(b.message(), std::string("layer 'act' (") + (tanh ? "tanh" : "sigmoid") +
                                       "): " + GetParam().config +
                                       " has no SDP lookup table (NVDLA_FEATURE_SDP_LUT) for " +
                                       (tanh ? "tanh" : "sigmoid") +
                                       "; BuildOptions::cpu_fallback is false, so it cannot "
                                       "run on the CPU");
            continue;
        }
        check(net, {in}, bound(3e-3, 5e-2));
    }
}

TEST_P(Layer, EltwiseFused) {
    for (EltwiseOp op : {EltwiseOp::Sum, EltwiseOp::Product, EltwiseOp::Max}) {
        Network net;
        Tensor a = net.input("data", {1, 5, 6, 7});
        Tensor b = net.convolution(a, conv(5, 3, 3, 1, 1), random_weights(rng, 225, 0.3f),
                                   random_weights(rng, 5), "conv");
        Tensor y = net.eltwise(b, a, op, "eltwise");
        y = net.relu(y, "relu");
        net.output(y, "out");
        check(net, {random_tensor(rng, {1, 5, 6, 7})}, bound(), options());
    }
}

TEST_P(Layer, EltwiseFromMemory) {
    for (EltwiseOp op : {EltwiseOp::Sum, EltwiseOp::Product, EltwiseOp::Max}) {
        Network net;
        Tensor a = net.input("a", {1, 20, 3, 9});
        Tensor b = net.input("b", {1, 20, 3, 9});
        net.output(net.eltwise(a, b, op, "eltwise"), "out");
        check(net, {random_tensor(rng, {1, 20, 3, 9}), random_tensor(rng, {1, 20, 3, 9}, -2, 2)},
              bound(2e-3, 3e-2));
    }
}

TEST_P(Layer, ConcatChannels) {
    const uint32_t lanes =
        test::config(GetParam().config).atom_bytes / bytes_per_element(GetParam().precision);
    Network net;
    Tensor x = net.input("data", {1, 3, 6, 6});
    Tensor a =
        net.convolution(x, conv(lanes, 3, 3, 1, 1), random_weights(rng, lanes * 27), {}, "a");
    Tensor b =
        net.convolution(x, conv(2 * lanes, 1, 1), random_weights(rng, 2 * lanes * 3), {}, "b");
    PoolingDesc p;
    p.kernel_h = p.kernel_w = 3;
    p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
    Tensor c =
        net.convolution(net.pooling(x, p, "pool"), conv(5, 1, 1), random_weights(rng, 15), {}, "c");
    const Tensor parts[] = {a, b, c};
    Tensor y = net.concat(parts, "concat");
    net.output(net.relu(y, "relu"), "out");
    check(net, {random_tensor(rng, {1, 3, 6, 6})}, bound());
}

TEST_P(Layer, Softmax) {
    Network net;
    Tensor x = net.input("data", {1, 10, 1, 1});
    x = net.fully_connected(x, 10, random_weights(rng, 100, 1.0f), random_weights(rng, 10), "fc");
    net.output(net.softmax(x, "prob"), "prob");
    check(net, {random_tensor(rng, {1, 10, 1, 1})}, bound(2e-3, 4e-2));
}

INSTANTIATE_TEST_SUITE_P(Targets, Layer,
                         ::testing::Values(Target{"nv_full", Precision::Fp16},
                                           Target{"nv_full", Precision::Int8},
                                           Target{"nv_small", Precision::Int8}),
                         target_name);

}  // namespace
}  // namespace nvdla::builder_test

namespace nvdla::builder_test {
namespace {

DeconvolutionDesc deconv(uint32_t k, uint32_t kernel, uint32_t stride, uint32_t pad,
                         uint32_t groups = 1) {
    DeconvolutionDesc d;
    d.out_channels = k;
    d.kernel_h = d.kernel_w = kernel;
    d.stride_h = d.stride_w = stride;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = pad;
    d.groups = groups;
    return d;
}

TEST_P(Layer, DeconvolutionStride1) {
    Network net;
    Tensor x = net.input("data", {1, 6, 5, 7});
    DeconvolutionDesc d = deconv(9, 3, 1, 1);
    d.pad_right = 0;
    x = net.deconvolution(x, d, random_weights(rng, 6 * 9 * 9), random_weights(rng, 9), "deconv");
    net.output(net.relu(x, "relu"), "out");
    check(net, {random_tensor(rng, {1, 6, 5, 7})}, bound());
}

TEST_P(Layer, DeconvolutionStride2) {
    for (const DeconvolutionDesc& d :
         {deconv(5, 3, 2, 1), deconv(4, 2, 2, 0), deconv(6, 4, 2, 1, 2)}) {
        Network net;
        Tensor x = net.input("data", {1, 4, 5, 6});
        x = net.deconvolution(
            x, d, random_weights(rng, 4 * d.out_channels / d.groups * d.kernel_h * d.kernel_w),
            random_weights(rng, d.out_channels), "deconv");
        net.output(x, "out");
        const HostTensor in = random_tensor(rng, {1, 4, 5, 6});
        // RUBIK contracts the sets where there is one, SDP copies elsewhere.
        auto r = run_and_compare(net, {in}, options());
        ASSERT_TRUE(r);
        bool contracted = false;
        for (const auto& line : r->built.operations)
            contracted =
                contracted ||
                line.find(has(NVDLA_FEATURE_RUBIK) ? "RUBIK contract" : "SDP copies interleave") !=
                    std::string::npos;
        EXPECT_TRUE(contracted) << describe(*r);
        EXPECT_LE(r->diff[0].relative(), bound()) << describe(*r);
    }
}

}  // namespace
}  // namespace nvdla::builder_test

namespace nvdla::builder_test {
namespace {

TEST_P(Layer, LargePoolingWindows) {
    struct Case {
        uint32_t h, w;
        PoolingType type;
        uint32_t kh, kw, sh, sw;
    };
    // Two PDP passes (10 = 5 x 2, 14 = 7 x 2 with a normal axis), then a depthwise
    // convolution for 13 x 13 averages.
    for (const Case c : {Case{10, 10, PoolingType::Average, 10, 10, 10, 10},
                         Case{14, 9, PoolingType::Max, 14, 3, 14, 2},
                         Case{13, 13, PoolingType::Average, 13, 13, 1, 1}}) {
        Network net;
        Tensor x = net.input("data", {1, 6, c.h, c.w});
        PoolingDesc p;
        p.type = c.type;
        p.kernel_h = c.kh;
        p.kernel_w = c.kw;
        p.stride_h = c.sh;
        p.stride_w = c.sw;
        net.output(net.pooling(x, p, "pool"), "out");
        // Pooling keeps its input's int8 scale (1/127 here): averages are within half a step.
        auto r = run_and_compare(net, {random_tensor(rng, {1, 6, c.h, c.w})}, options());
        ASSERT_TRUE(r);
        if (GetParam().precision == Precision::Fp16)
            EXPECT_LE(r->diff[0].relative(), 2e-3) << describe(*r);
        else
            EXPECT_LE(r->diff[0].max_abs, 0.75 / 127) << describe(*r);
    }
    Network net;
    Tensor x = net.input("data", {1, 6, 11, 11});
    PoolingDesc p;
    p.kernel_h = p.kernel_w = p.stride_h = p.stride_w = 11;
    net.output(net.pooling(x, p, "pool"), "out");
    Calibration cal;
    ASSERT_TRUE(cal.add_sample(net, {random_tensor(rng, {1, 6, 11, 11})}).ok());
    BuildOptions o = options();
    o.calibration = &cal;
    Result<CompiledNetwork> b = build(net, o);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(
        b.message(),
        "layer 'pool' (pooling): the 11x11 window is larger than the 8x8 PDP maximum and does "
        "not split into two passes (that needs stride = window, no padding and a size that is "
        "a product of two factors up to 8)");
}

}  // namespace
}  // namespace nvdla::builder_test

namespace nvdla::builder_test {
namespace {

TEST_P(Layer, PerTensorWeightScales) {
    Network net;
    Tensor x = net.input("data", {1, 6, 7, 7});
    std::vector<float> w = random_weights(rng, 8 * 54);
    for (size_t i = 0; i < 54; ++i) w[i] *= 8;  // one kernel far larger than the others
    x = net.convolution(x, conv(8, 3, 3, 1, 1), w, random_weights(rng, 8), "conv");
    net.output(x, "out");
    BuildOptions o = options();
    o.quantization = Quantization::PerTensor;
    check(net, {random_tensor(rng, {1, 6, 7, 7})}, bound(kFp16, 6e-2), o);
}

TEST_P(Layer, SparseWeightsAreCompressedWhereItPays) {
    for (int sparse = 0; sparse < 2; ++sparse) {
        Network net;
        Tensor x = net.input("data", {1, 32, 6, 6});
        std::vector<float> w = random_weights(rng, 32 * 32 * 9);
        if (sparse)
            for (size_t i = 0; i < w.size(); ++i)
                if (i % 7) w[i] = 0;
        x = net.convolution(x, conv(32, 3, 3, 1, 1), w, {}, "conv");
        net.output(x, "out");
        BuildOptions o = options();
        o.winograd = false;
        auto r = run_and_compare(net, {random_tensor(rng, {1, 32, 6, 6})}, o);
        ASSERT_TRUE(r);
        EXPECT_LE(r->diff[0].relative(), bound()) << describe(*r);
        const bool compressed = r->built.operations[0].find("compressed") != std::string::npos;
        EXPECT_EQ(compressed, sparse && has(NVDLA_FEATURE_WEIGHT_COMPRESSION)) << describe(*r);
    }
}

}  // namespace
}  // namespace nvdla::builder_test

namespace nvdla::builder_test {
namespace {

TEST_P(Layer, ConcatUnalignedChannels) {
    // 5 + 3 + 20 channels: 1x1 convolutions move each part to its channels and sum them.
    Network net;
    Tensor x = net.input("data", {1, 4, 5, 6});
    Tensor a = net.convolution(x, conv(5, 3, 3, 1, 1), random_weights(rng, 5 * 36), {}, "a");
    Tensor b = net.relu(x, "b_relu");
    Tensor b3 = net.convolution(b, conv(3, 1, 1), random_weights(rng, 12), {}, "b");
    Tensor c = net.convolution(x, conv(20, 1, 1), random_weights(rng, 80), {}, "c");
    const Tensor parts[] = {a, b3, c};
    net.output(net.concat(parts, "concat"), "out");
    auto r = run_and_compare(net, {random_tensor(rng, {1, 4, 5, 6})}, options());
    ASSERT_TRUE(r);
    EXPECT_LE(r->diff[0].relative(), bound(kFp16, 5e-2)) << describe(*r);
    bool sums = false;
    for (const auto& line : r->built.operations)
        sums = sums || line.find("concat input 2") != std::string::npos;
    EXPECT_TRUE(sums) << describe(*r);
}

TEST_P(Layer, InputAsOutput) {
    Network net;
    Tensor x = net.input("data", {1, 6, 3, 5});
    net.output(x, "same");
    net.output(net.relu(x, "relu"), "relu");
    check(net, {random_tensor(rng, {1, 6, 3, 5})}, bound(1e-3, 1e-2));
}

TEST_P(Layer, DeconvolutionOutputPadding) {
    for (uint32_t kernel : {3u, 2u}) {
        Network net;
        Tensor x = net.input("data", {1, 4, 4, 5});
        DeconvolutionDesc d = deconv(6, kernel, 2, kernel == 3 ? 1 : 0);
        d.output_pad_h = d.output_pad_w = 1;
        x = net.deconvolution(x, d, random_weights(rng, 4 * 6 * kernel * kernel),
                              random_weights(rng, 6), "up");
        EXPECT_EQ(net.dims(x),
                  (Dims4{1, 6, 8 + (kernel == 2 ? 1u : 0u), 10 + (kernel == 2 ? 1u : 0u)}));
        net.output(x, "out");
        check(net, {random_tensor(rng, {1, 4, 4, 5})}, bound());
    }
}

}  // namespace
}  // namespace nvdla::builder_test
