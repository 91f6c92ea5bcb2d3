// Small whole networks against the float reference, and what the loadable holds.
#include <cstring>
#include <filesystem>
#include <fstream>

#include "builder_rig.hpp"
#include "nvdla/IRuntime.h"
#include "runtime/loadable.hpp"

namespace nvdla::builder_test {
namespace {

ConvolutionDesc conv(uint32_t k, uint32_t kernel, uint32_t stride = 1, uint32_t pad = 0) {
    ConvolutionDesc d;
    d.out_channels = k;
    d.kernel_h = d.kernel_w = kernel;
    d.stride_h = d.stride_w = stride;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = pad;
    return d;
}

PoolingDesc pool(uint32_t kernel, uint32_t stride, PoolingType type = PoolingType::Max,
                 uint32_t pad = 0) {
    PoolingDesc p;
    p.type = type;
    p.kernel_h = p.kernel_w = kernel;
    p.stride_h = p.stride_w = stride;
    p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = pad;
    return p;
}

// LeNet as Caffe's example has it, narrower (32 channels in conv2, 100 in ip1) to stay fast.
Network lenet(std::mt19937_64& rng) {
    Network net("lenet");
    Tensor x = net.input("data", {1, 1, 28, 28});
    x = net.convolution(x, conv(20, 5), random_weights(rng, 20 * 25, 0.3f),
                        random_weights(rng, 20, 0.1f), "conv1");
    x = net.pooling(x, pool(2, 2), "pool1");
    x = net.convolution(x, conv(32, 5), random_weights(rng, 32 * 20 * 25, 0.06f),
                        random_weights(rng, 32, 0.1f), "conv2");
    x = net.pooling(x, pool(2, 2), "pool2");
    x = net.fully_connected(x, 100, random_weights(rng, 100 * 512, 0.05f),
                            random_weights(rng, 100, 0.1f), "ip1");
    x = net.relu(x, "relu1");
    x = net.fully_connected(x, 10, random_weights(rng, 1000, 0.2f), random_weights(rng, 10, 0.1f),
                            "ip2");
    net.output(net.softmax(x, "prob"), "prob");
    return net;
}

struct Target {
    const char* config;
    Precision precision;
};

class Networks : public ::testing::TestWithParam<Target> {
  protected:
    BuildOptions options() const {
        BuildOptions o;
        o.config = GetParam().config;
        o.precision = GetParam().precision;
        return o;
    }
    double bound(double fp16, double int8) const {
        return GetParam().precision == Precision::Fp16 ? fp16 : int8;
    }
    std::mt19937_64 rng = test::rng_for_test();
};

TEST_P(Networks, LeNet) {
    Network net = lenet(rng);
    auto o = run_and_compare(net, {random_tensor(rng, {1, 1, 28, 28}, 0, 1)}, options(), 4, 0, 1);
    ASSERT_TRUE(o);
    EXPECT_LE(o->diff[0].max_abs, bound(2e-3, 3e-2)) << describe(*o);
    // conv -> SDP -> PDP fused twice, the two fully connected layers, the CPU softmax.
    EXPECT_EQ(o->built.operations.size(), 5u) << describe(*o);
    EXPECT_EQ(o->built.hardware_tasks, 1u);
    EXPECT_EQ(o->built.cpu_tasks, 1u);
}

TEST_P(Networks, ResidualBlock) {
    Network net("resblock");
    Tensor x = net.input("data", {1, 16, 10, 10});
    Tensor a =
        net.convolution(x, conv(16, 3, 1, 1), random_weights(rng, 16 * 144, 0.1f), {}, "conv_a");
    a = net.batch_norm(a, random_weights(rng, 16), test::random_vector<float>(rng, 16, 0.5f, 1.5f),
                       test::random_vector<float>(rng, 16, 0.5f, 1.5f), random_weights(rng, 16),
                       1e-5f, "bn_a");
    a = net.relu(a, "relu_a");
    Tensor b =
        net.convolution(a, conv(16, 3, 1, 1), random_weights(rng, 16 * 144, 0.1f), {}, "conv_b");
    b = net.batch_norm(b, random_weights(rng, 16), test::random_vector<float>(rng, 16, 0.5f, 1.5f),
                       test::random_vector<float>(rng, 16, 0.5f, 1.5f), random_weights(rng, 16),
                       1e-5f, "bn_b");
    Tensor y = net.eltwise(b, x, EltwiseOp::Sum, "add");
    y = net.relu(y, "relu");
    y = net.pooling(y, pool(10, 10, PoolingType::Average), "gap");
    net.output(net.fully_connected(y, 4, random_weights(rng, 64), {}, "fc"), "logits");
    auto o = run_and_compare(net, {random_tensor(rng, {1, 16, 10, 10})}, options());
    ASSERT_TRUE(o);
    EXPECT_LE(o->diff[0].relative(), bound(4e-3, 5e-2)) << describe(*o);
    // conv_a with bn_a and relu_a; conv_b with bn_b, the sum and the ReLU after it (X2 on
    // every target: Y has no ReLU after its ALU); the pooling (10x10 in two PDP passes); the
    // fully connected layer.
    EXPECT_EQ(o->built.operations.size(), 5u) << describe(*o);
    bool fused = false;
    for (const std::string& line : o->built.operations)
        fused = fused || line.find("X2 sum+relu") != std::string::npos;
    EXPECT_TRUE(fused) << describe(*o);
}

TEST_P(Networks, InceptionModule) {
    Network net("inception");
    Tensor x = net.input("data", {1, 8, 9, 9});
    const uint32_t lanes =
        test::config(GetParam().config).atom_bytes / bytes_per_element(GetParam().precision);
    Tensor b1 = net.relu(net.convolution(x, conv(lanes, 1), random_weights(rng, lanes * 8),
                                         random_weights(rng, lanes), "1x1"),
                         "r1");
    Tensor b2 =
        net.relu(net.convolution(x, conv(8, 1), random_weights(rng, 64), {}, "3x3_reduce"), "r2a");
    b2 = net.relu(
        net.convolution(b2, conv(lanes, 3, 1, 1), random_weights(rng, lanes * 72, 0.2f), {}, "3x3"),
        "r2");
    Tensor b3 =
        net.relu(net.convolution(x, conv(4, 1), random_weights(rng, 32), {}, "5x5_reduce"), "r3a");
    b3 = net.relu(net.convolution(b3, conv(lanes, 5, 1, 2), random_weights(rng, lanes * 100, 0.2f),
                                  {}, "5x5"),
                  "r3");
    Tensor b4 = net.pooling(x, pool(3, 1, PoolingType::Max, 1), "pool");
    b4 = net.relu(net.convolution(b4, conv(5, 1), random_weights(rng, 40), {}, "pool_proj"), "r4");
    const Tensor parts[] = {b1, b2, b3, b4};
    Tensor y = net.concat(parts, "concat");
    y = net.lrn(y, LrnDesc{}, "norm");
    net.output(y, "out");
    auto o = run_and_compare(net, {random_tensor(rng, {1, 8, 9, 9})}, options());
    ASSERT_TRUE(o);
    EXPECT_LE(o->diff[0].relative(), bound(4e-3, 5e-2)) << describe(*o);
}

TEST_P(Networks, EncoderDecoder) {
    // Convolution down, deconvolution up (RUBIK on nv_full; SDP copies interleave the sets
    // elsewhere), a skip sum.
    Network net("unet");
    Tensor x = net.input("data", {1, 4, 8, 8});
    Tensor d = net.relu(net.convolution(x, conv(8, 3, 2, 1), random_weights(rng, 8 * 36, 0.3f),
                                        random_weights(rng, 8), "down"),
                        "relu_down");
    DeconvolutionDesc up;
    up.out_channels = 4;
    up.kernel_h = up.kernel_w = 4;
    up.stride_h = up.stride_w = 2;
    up.pad_top = up.pad_left = up.pad_bottom = up.pad_right = 1;
    Tensor u = net.deconvolution(
        d, up, random_weights(rng, 8 * 4 * up.kernel_h * up.kernel_w, 0.3f), {}, "up");
    Tensor y = net.eltwise(u, x, EltwiseOp::Sum, "skip");
    net.output(net.relu(y, "relu"), "out");
    auto o = run_and_compare(net, {random_tensor(rng, {1, 4, 8, 8})}, options());
    ASSERT_TRUE(o);
    EXPECT_LE(o->diff[0].relative(), bound(4e-3, 5e-2)) << describe(*o);
}

TEST_P(Networks, ActivationBuffersAreReused) {
    // A chain of ten convolutions: two activation buffers suffice.
    Network net("chain");
    Tensor x = net.input("data", {1, 8, 12, 12});
    for (int i = 0; i < 10; ++i)
        x = net.relu(net.convolution(x, conv(8, 3, 1, 1), random_weights(rng, 8 * 72, 0.35f), {},
                                     "conv" + std::to_string(i)),
                     "relu" + std::to_string(i));
    net.output(x, "out");
    auto o = run_and_compare(net, {random_tensor(rng, {1, 8, 12, 12})}, options(), 1);
    ASSERT_TRUE(o);
    EXPECT_LE(o->diff[0].relative(), bound(4e-3, 1e-1)) << describe(*o);  // ten requantized layers
    const TensorDesc& in = o->built.inputs[0];
    EXPECT_LE(o->built.activation_bytes, 2 * ((in.size_bytes + 255) / 256 * 256)) << describe(*o);
}

INSTANTIATE_TEST_SUITE_P(Targets, Networks,
                         ::testing::Values(Target{"nv_full", Precision::Fp16},
                                           Target{"nv_full", Precision::Int8},
                                           Target{"nv_small", Precision::Int8}),
                         [](const ::testing::TestParamInfo<Target>& p) {
                             return std::string(p.param.config) + "_" +
                                    std::string(to_string(p.param.precision));
                         });

// ---- the loadable ----

CompiledNetwork build_lenet(const char* config, Precision precision, Network& net,
                            std::mt19937_64& rng) {
    Calibration cal;
    for (int i = 0; i < 3; ++i)
        EXPECT_TRUE(cal.add_sample(net, {random_tensor(rng, {1, 1, 28, 28}, 0, 1)}).ok());
    BuildOptions o;
    o.config = config;
    o.precision = precision;
    o.calibration = &cal;
    Result<CompiledNetwork> b = build(net, o);
    EXPECT_TRUE(b.ok()) << b.message();
    return b.ok() ? std::move(b).value() : CompiledNetwork{};
}

TEST(Loadable, ParsesAndDescribesItsTensors) {
    std::mt19937_64 rng = test::rng_for_test();
    Network net = lenet(rng);
    const CompiledNetwork b = build_lenet("nv_small", Precision::Int8, net, rng);
    Result<runtime::Loadable> l = runtime::parse_loadable(b.loadable);
    ASSERT_TRUE(l.ok()) << l.message();
    EXPECT_EQ(l->version, (runtime::BlobVersion{0, 7, 0}));
    ASSERT_EQ(l->tasks.size(), 2u);
    EXPECT_EQ(l->tasks[0].interface, runtime::TaskInterface::Dla1);
    EXPECT_EQ(l->tasks[0].version, (runtime::BlobVersion{0, 12, 3}));
    EXPECT_EQ(l->tasks[1].interface, runtime::TaskInterface::Emu1);
    // Round trip through the schema.
    Result<runtime::Loadable> again = runtime::parse_loadable(runtime::serialize_loadable(*l));
    ASSERT_TRUE(again.ok()) << again.message();

    Runtime& rt = emu("nv_small");
    Result<std::shared_ptr<nvdla::Network>> loaded = rt.load(b.loadable);
    ASSERT_TRUE(loaded.ok()) << loaded.message();
    ASSERT_EQ((*loaded)->inputs().size(), 1u);
    ASSERT_EQ((*loaded)->outputs().size(), 1u);
    const TensorInfo& in = (*loaded)->inputs()[0];
    EXPECT_EQ(in.name, "data");
    EXPECT_EQ(in.dims, (Dims4{1, 1, 28, 28}));
    EXPECT_EQ(in.data_type, TensorDataType::Int8);
    EXPECT_EQ(in.pixel_format, kPixelFormatFeatureX8);
    EXPECT_EQ(in.size_bytes, b.inputs[0].size_bytes);
    EXPECT_EQ(in.line_stride(), b.inputs[0].line_stride);
    EXPECT_EQ(in.surface_stride(), b.inputs[0].surface_stride);
    const TensorInfo& out = (*loaded)->outputs()[0];
    EXPECT_EQ(out.name, "prob");
    EXPECT_EQ(out.dims, (Dims4{1, 10, 1, 1}));
    // The softmax's int8 scale is known to the runtime.
    EXPECT_TRUE(out.quantization.known);
    EXPECT_FLOAT_EQ(out.quantization.scale, b.outputs[0].scale);
    Result<std::unique_ptr<Context>> ctx = (*loaded)->create_context();
    ASSERT_TRUE(ctx.ok());
    EXPECT_TRUE((*ctx)->validate().ok());
}

TEST(Loadable, ReloadedFromAFile) {
    std::mt19937_64 rng = test::rng_for_test();
    Network net = lenet(rng);
    const CompiledNetwork b = build_lenet("nv_small", Precision::Int8, net, rng);
    const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                       ("builder_lenet_" + std::to_string(::getpid()) + ".nvdla");
    {
        std::ofstream f(file, std::ios::binary);
        f.write(reinterpret_cast<const char*>(b.loadable.data()),
                static_cast<std::streamsize>(b.loadable.size()));
    }
    Result<std::shared_ptr<nvdla::Network>> loaded = emu("nv_small").load_file(file.string());
    std::filesystem::remove(file);
    ASSERT_TRUE(loaded.ok()) << loaded.message();
    Result<std::unique_ptr<Context>> ctx = (*loaded)->create_context();
    ASSERT_TRUE(ctx.ok());
    const HostTensor in = random_tensor(rng, {1, 1, 28, 28}, 0, 1);
    ASSERT_TRUE(pack_input(b.inputs[0], in, (*ctx)->input(0)).ok());
    ASSERT_TRUE((*ctx)->run().ok());
    Result<HostTensor> got = unpack_output(b.outputs[0], (*ctx)->output(0));
    ASSERT_TRUE(got.ok());
    Result<std::vector<HostTensor>> ref = run_reference(net, {in});
    ASSERT_TRUE(ref.ok());
    Result<Difference> d = compare(*got, (*ref)[0]);
    ASSERT_TRUE(d.ok());
    EXPECT_LT(d->max_abs, 3e-2);
}

TEST(Loadable, TheOriginalInterfaceRunsIt) {
    std::mt19937_64 rng = test::rng_for_test();
    Network net = lenet(rng);
    const CompiledNetwork b = build_lenet("nv_full", Precision::Int8, net, rng);
    const HostTensor in = random_tensor(rng, {1, 1, 28, 28}, 0, 1);
    Result<std::vector<HostTensor>> modern = run(b, emu("nv_full"), {in});
    ASSERT_TRUE(modern.ok()) << modern.message();

    nvdla::IRuntime* rt = nvdla::createRuntime();
    ASSERT_NE(rt, nullptr);
    ASSERT_TRUE(rt->load(reinterpret_cast<const NvU8*>(b.loadable.data()), b.loadable.size(), 0))
        << rt->getLastError();
    ASSERT_TRUE(rt->initEMU());
    nvdla::IRuntime::NvDlaTensor in_desc, out_desc;
    ASSERT_EQ(rt->getInputTensorDesc(0, &in_desc), NvDlaSuccess);
    ASSERT_EQ(rt->getOutputTensorDesc(0, &out_desc), NvDlaSuccess);
    EXPECT_EQ(in_desc.bufferSize, b.inputs[0].size_bytes);
    void *in_handle = nullptr, *in_data = nullptr, *out_handle = nullptr, *out_data = nullptr;
    ASSERT_EQ(rt->allocateSystemMemory(&in_handle, in_desc.bufferSize, &in_data), NvDlaSuccess);
    ASSERT_EQ(rt->allocateSystemMemory(&out_handle, out_desc.bufferSize, &out_data), NvDlaSuccess);
    ASSERT_TRUE(
        pack_input(b.inputs[0], in,
                   {static_cast<std::byte*>(in_data), static_cast<size_t>(in_desc.bufferSize)})
            .ok());
    ASSERT_TRUE(rt->bindInputTensor(0, in_handle));
    ASSERT_TRUE(rt->bindOutputTensor(0, out_handle));
    ASSERT_TRUE(rt->submit()) << rt->getLastError();
    Result<HostTensor> got = unpack_output(
        b.outputs[0],
        {static_cast<const std::byte*>(out_data), static_cast<size_t>(out_desc.bufferSize)});
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got->data, (*modern)[0].data);
    rt->freeSystemMemory(out_handle, out_desc.bufferSize);
    rt->freeSystemMemory(in_handle, in_desc.bufferSize);
    rt->stopEMU();
    rt->unload();
    nvdla::destroyRuntime(rt);
}

}  // namespace
}  // namespace nvdla::builder_test

namespace nvdla::builder_test {
namespace {

// Every configuration of the nv_small family and nv_large, int8: a small network with a
// fused pooling, a residual sum, a batch norm after ReLU and a fully connected layer.
class AllConfigs : public ::testing::TestWithParam<const char*> {};

TEST_P(AllConfigs, SmallNetwork) {
    std::mt19937_64 rng = test::rng_for_test();
    Network net;
    Tensor x = net.input("data", {1, 12, 10, 10});
    Tensor a = net.convolution(x, conv(12, 3, 1, 1), random_weights(rng, 12 * 108, 0.2f),
                               random_weights(rng, 12), "conv1");
    a = net.relu(a, "relu1");
    a = net.batch_norm(a, random_weights(rng, 12), test::random_vector<float>(rng, 12, 0.5f, 1.5f),
                       random_weights(rng, 12, 1.0f), random_weights(rng, 12), 1e-5f, "bn");
    Tensor y = net.eltwise(a, x, EltwiseOp::Sum, "sum");
    y = net.pooling(
        net.convolution(y, conv(20, 3), random_weights(rng, 20 * 108, 0.2f), {}, "conv2"),
        pool(2, 2), "pool");
    net.output(net.fully_connected(y, 7, random_weights(rng, 7 * 320, 0.1f), {}, "fc"), "out");
    BuildOptions o;
    o.config = GetParam();
    o.precision = Precision::Int8;
    auto r = run_and_compare(net, {random_tensor(rng, {1, 12, 10, 10})}, o);
    ASSERT_TRUE(r);
    EXPECT_LE(r->diff[0].relative(), 5e-2) << describe(*r);
}

INSTANTIATE_TEST_SUITE_P(Int8, AllConfigs,
                         ::testing::Values("nv_small", "nv_small_256", "nv_small_256_full",
                                           "nv_medium_512", "nv_medium_1024_full", "nv_large",
                                           "nv_full"));

}  // namespace
}  // namespace nvdla::builder_test
