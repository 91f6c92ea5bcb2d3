// Every error is a sentence that names the layer (or the option, input or output).
#include "builder_rig.hpp"

namespace nvdla::builder_test {
namespace {

std::vector<float> zeros(size_t n) {
    return std::vector<float>(n, 0.5f);
}

ConvolutionDesc conv3(uint32_t k) {
    ConvolutionDesc d;
    d.out_channels = k;
    d.kernel_h = d.kernel_w = 3;
    return d;
}

// The first error the network recorded.
std::string network_error(const Network& net) {
    return net.status().message();
}

TEST(NetworkErrors, Inputs) {
    {
        Network net;
        EXPECT_FALSE(net.input("", {1, 1, 2, 2}).valid());
        EXPECT_EQ(network_error(net), "layer 'input_0' (input): an input needs a name");
    }
    {
        Network net;
        EXPECT_FALSE(net.input("x", {2, 1, 2, 2}).valid());
        EXPECT_EQ(network_error(net), "layer 'x' (input): batch 2 is not supported; n must be 1");
    }
    {
        Network net;
        net.input("x", {1, 1, 2, 2});
        net.input("x", {1, 1, 2, 2});
        EXPECT_EQ(network_error(net), "layer 'x' (input): another input has this name");
    }
    {
        Network net;
        EXPECT_FALSE(net.input("x", {1, 0, 2, 2}).valid());
        EXPECT_EQ(
            network_error(net),
            "layer 'x' (input): the output would be 1x0x2x2; every extent must be at least 1");
    }
}

TEST(NetworkErrors, Convolution) {
    struct Case {
        ConvolutionDesc d;
        size_t weights, bias;
        const char* message;
    };
    ConvolutionDesc groups = conv3(4);
    groups.groups = 3;
    ConvolutionDesc big = conv3(4);
    big.kernel_h = 9;
    ConvolutionDesc stride = conv3(4);
    stride.stride_w = 0;
    ConvolutionDesc dilation = conv3(4);
    dilation.dilation_h = 0;
    const Case cases[] = {
        {conv3(0), 0, 0, "layer 'c' (convolution): out_channels is 0"},
        {groups, 36, 0,
         "layer 'c' (convolution): 3 groups do not divide the 6 input and 4 output channels"},
        {conv3(4), 10, 0, "layer 'c' (convolution): 10 weights given, 4x6x3x3 = 216 expected"},
        {conv3(4), 216, 3, "layer 'c' (convolution): 3 bias values given, 4 expected"},
        {big, 4 * 6 * 27, 0,
         "layer 'c' (convolution): the dilated 9x3 kernel does not fit the padded 8x8 input"},
        {stride, 216, 0, "layer 'c' (convolution): the stride is 1x0"},
        {dilation, 216, 0, "layer 'c' (convolution): the dilation is 0x1"},
    };
    for (const Case& c : cases) {
        Network net;
        Tensor x = net.input("x", {1, 6, 8, 8});
        EXPECT_FALSE(net.convolution(x, c.d, zeros(c.weights), zeros(c.bias), "c").valid());
        EXPECT_EQ(network_error(net), c.message);
    }
    Network net;
    Tensor x = net.input("x", {1, 1, 4, 4});
    std::vector<float> w = zeros(9);
    w[3] = std::numeric_limits<float>::quiet_NaN();
    net.convolution(x, conv3(1), w, {}, "c");
    EXPECT_EQ(network_error(net), "layer 'c' (convolution): weights or bias hold NaN or infinity");
}

TEST(NetworkErrors, OtherLayers) {
    Network net;
    Tensor x = net.input("x", {1, 4, 6, 6});
    Tensor y = net.input("y", {1, 4, 5, 6});
    EXPECT_FALSE(net.fully_connected(x, 3, zeros(5), {}, "fc").valid());
    EXPECT_EQ(network_error(net),
              "layer 'fc' (fully connected): 5 weights given, 3x144 = 432 expected");

    auto first_error = [](auto&& make) {
        Network n;
        Tensor a = n.input("x", {1, 4, 6, 6});
        Tensor b = n.input("y", {1, 4, 5, 6});
        make(n, a, b);
        return n.status().message();
    };
    PoolingDesc p;
    p.kernel_h = p.kernel_w = 2;
    p.pad_left = 2;
    EXPECT_EQ(first_error([&](Network& n, Tensor a, Tensor) { n.pooling(a, p, "pool"); }),
              "layer 'pool' (pooling): padding 0,2,0,0 must be smaller than the 2x2 window");
    LrnDesc l;
    l.local_size = 4;
    EXPECT_EQ(first_error([&](Network& n, Tensor a, Tensor) { n.lrn(a, l, "norm"); }),
              "layer 'norm' (LRN): local_size is 4; the CDP sums 3, 5, 7 or 9 channels");
    EXPECT_EQ(first_error([&](Network& n, Tensor a, Tensor) {
                  n.batch_norm(a, zeros(4), std::vector<float>{1, 1, -1, 1}, {}, {}, 0.0f, "bn");
              }),
              "layer 'bn' (batch norm): channel 2: variance + epsilon is -1, not positive");
    EXPECT_EQ(first_error([&](Network& n, Tensor a, Tensor) { n.scale(a, zeros(3), {}, "s"); }),
              "layer 's' (scale): 3 scale values given, 4 (one per channel) or 1 expected");
    EXPECT_EQ(first_error([&](Network& n, Tensor a, Tensor) { n.bias(a, {}, "b"); }),
              "layer 'b' (bias): 0 bias values given, 4 (one per channel) or 1 expected");
    EXPECT_EQ(first_error([&](Network& n, Tensor a, Tensor) { n.prelu(a, zeros(2), "pr"); }),
              "layer 'pr' (PReLU): 2 slope values given, 4 (one per channel) or 1 expected");
    EXPECT_EQ(first_error(
                  [&](Network& n, Tensor a, Tensor b) { n.eltwise(a, b, EltwiseOp::Sum, "add"); }),
              "layer 'add' (element-wise): the inputs are 1x4x6x6 and 1x4x5x6; each of channels, "
              "height and width must be equal or 1 in one of them");
    EXPECT_EQ(first_error([&](Network& n, Tensor a, Tensor b) {
                  const Tensor parts[] = {a, b};
                  n.concat(parts, "cat");
              }),
              "layer 'cat' (concat): input 1 is 1x4x5x6 but input 0 is 1x4x6x6; heights and widths "
              "must match");
    EXPECT_EQ(first_error([&](Network& n, Tensor, Tensor) { n.concat({}, "cat"); }),
              "layer 'cat' (concat): no inputs");
    DeconvolutionDesc d;
    d.out_channels = 2;
    d.kernel_h = d.kernel_w = 2;
    d.pad_top = 2;
    EXPECT_EQ(first_error([&](Network& n, Tensor a, Tensor) {
                  n.deconvolution(a, d, zeros(32), {}, "up");
              }),
              "layer 'up' (deconvolution): padding 2,0,0,0 must be smaller than the 2x2 kernel");
    // Layers after a failed one fail silently: the first error stays.
    Network chain;
    Tensor a = chain.input("x", {1, 4, 6, 6});
    Tensor bad = chain.scale(a, zeros(3), {}, "s");
    EXPECT_FALSE(chain.relu(bad, "r").valid());
    EXPECT_EQ(network_error(chain),
              "layer 's' (scale): 3 scale values given, 4 (one per channel) or 1 expected");
    // A tensor of another network.
    Network other;
    EXPECT_FALSE(other.relu(Tensor{7}, "r").valid());
    EXPECT_EQ(network_error(other),
              "layer 'r' (ReLU): input tensor 7 does not belong to this network");
    (void)y;
}

TEST(NetworkErrors, Outputs) {
    Network net;
    Tensor x = net.input("x", {1, 4, 6, 6});
    Tensor r = net.relu(x, "r");
    net.output(r, "out");
    net.output(r, "out2");
    EXPECT_EQ(network_error(net), "output 'out2': tensor 'r' is already output 'out'");
    Network n2;
    Tensor x2 = n2.input("x", {1, 4, 6, 6});
    n2.output(x2, "x_out");
    n2.output(x2, "again");
    EXPECT_EQ(network_error(n2), "output 'again': tensor 'x' is already output 'x_out'");
    Network n3;
    n3.output(n3.relu(n3.input("x", {1, 1, 1, 1}), "r"), "");
    EXPECT_EQ(network_error(n3), "output '': an output needs a name");
}

// ---- build() ----

class BuildErrors : public ::testing::Test {
  protected:
    // Calibrates on one random sample and builds.
    Result<CompiledNetwork> try_build(const Network& net, BuildOptions o, bool calibrate = true) {
        Calibration cal;
        if (calibrate) {
            std::vector<HostTensor> in;
            for (Tensor t : net.inputs()) in.push_back(random_tensor(rng, net.dims(t)));
            EXPECT_TRUE(cal.add_sample(net, in).ok());
            o.calibration = &cal;
        }
        return build(net, o);
    }
    std::mt19937_64 rng = test::rng_for_test();
};

TEST_F(BuildErrors, Options) {
    Network net("n");
    Tensor x = net.input("x", {1, 4, 6, 6});
    EXPECT_EQ(build(net).message(), "network 'n' has no outputs");
    net.output(net.relu(x, "r"), "out");
    BuildOptions o;
    o.config = "nv_huge";
    EXPECT_NE(build(net, o).message().find("nv_huge"), std::string::npos);
    o = {};
    o.precision = Precision::Int16;
    EXPECT_EQ(build(net, o).message(), "int16 builds are not supported; choose fp16 or int8");
    o = {};
    o.config = "nv_small";
    EXPECT_EQ(build(net, o).message(), "nv_small has no fp16 datapath; build with int8");
    o = {};
    o.precision = Precision::Int8;
    EXPECT_EQ(build(net, o).message(),
              "an int8 build needs activation ranges: set BuildOptions::calibration");
    o = {};
    o.lut_range = -1;
    EXPECT_EQ(build(net, o).message(), "lut_range is -1; it must be in (0, 65504]");
    o = {};
    o.inputs.resize(2);
    EXPECT_EQ(build(net, o).message(), "2 input formats given for 1 inputs");
    // A network with an error reports it.
    Network bad;
    bad.input("", {1, 1, 1, 1});
    EXPECT_EQ(build(bad).message(), "layer 'input_0' (input): an input needs a name");
}

TEST_F(BuildErrors, MissingCalibrationRange) {
    Network net;
    Tensor x = net.input("x", {1, 4, 6, 6});
    Tensor r = net.relu(x, "r");
    net.output(r, "out");
    Calibration cal;
    cal.set_range(x, 1.0f);
    BuildOptions o;
    o.precision = Precision::Int8;
    o.calibration = &cal;
    EXPECT_EQ(build(net, o).message(),
              "layer 'r' (ReLU): the calibration has no range for its output; int8 needs one for "
              "every tensor (Calibration::add_sample or set_range)");
    cal.set_range(r, 2.0f);
    EXPECT_TRUE(build(net, o).ok());
}

TEST_F(BuildErrors, CubeExtents) {
    Network net;
    Tensor x = net.input("x", {1, 1, 1, 9000});
    net.output(net.relu(x, "r"), "out");
    EXPECT_EQ(
        try_build(net, {}).message(),
        "layer 'x' (input): its 1x1x9000 output is beyond the 8192 channels, lines and pixels "
        "a cube can have");
}

TEST_F(BuildErrors, Flatten) {
    // Without CPU fallback (with it, the CPU reshapes: cpu_fallback_test.cpp).
    BuildOptions no_cpu;
    no_cpu.cpu_fallback = false;
    Network net;
    Tensor x = net.input("x", {1, 2, 3, 3});
    Tensor f = net.flatten(x, "flat");
    net.output(net.relu(f, "r"), "out");
    EXPECT_EQ(try_build(net, no_cpu).message(),
              "layer 'flat' (flatten): its 3x3 input can only be flattened for fully connected "
              "layers, but layer 'r' (ReLU) reads it");
    Network n2;
    Tensor x2 = n2.input("x", {1, 2, 3, 3});
    n2.output(n2.flatten(n2.relu(x2, "r"), "flat"), "out");
    EXPECT_EQ(try_build(n2, no_cpu).message(),
              "layer 'flat' (flatten): a flattened 3x3 tensor cannot be an output (the hardware "
              "keeps it as a cube)");
}

TEST_F(BuildErrors, ConvolutionLimits) {
    {
        Network net;
        Tensor x = net.input("x", {1, 1, 40, 40});
        net.output(net.fully_connected(x, 2, zeros(3200), {}, "fc"), "out");
        EXPECT_EQ(try_build(net, {}).message(),
                  "layer 'fc' (fully connected): the 40x40 kernel is larger than the 32x32 the "
                  "convolution core takes");
    }
    {
        Network net;
        Tensor x = net.input("x", {1, 1, 40, 40});
        ConvolutionDesc d = conv3(2);
        d.stride_h = 9;
        net.output(net.convolution(x, d, zeros(18), {}, "c"), "out");
        EXPECT_EQ(try_build(net, {}).message(),
                  "layer 'c' (convolution): stride 9x1 is larger than the convolution core's 8");
    }
    {
        // nv_small int8: three 2048-pixel rows of 64 channels exceed the 32 banks.
        Network net;
        Tensor x = net.input("x", {1, 64, 3, 2048});
        net.output(net.convolution(x, conv3(8), zeros(8 * 64 * 9), {}, "wide"), "out");
        BuildOptions o;
        o.config = "nv_small";
        o.precision = Precision::Int8;
        EXPECT_EQ(
            try_build(net, o).message(),
            "layer 'wide' (convolution): one window of 3 input rows (16384 buffer entries "
            "each) and one group of 8 kernels (576 bytes each) do not fit the 32 banks of 512 "
            "entries of 8 bytes of nv_small's convolution buffer");
    }
}

TEST_F(BuildErrors, PoolingAndSoftmax) {
    {
        Network net;
        Tensor x = net.input("x", {1, 4, 6, 6});
        PoolingDesc p;
        p.type = PoolingType::Average;
        p.kernel_h = p.kernel_w = 3;
        p.pad_left = 1;
        p.count_include_pad = false;
        net.output(net.pooling(x, p, "avg"), "out");
        EXPECT_EQ(
            try_build(net, {}).message(),
            "layer 'avg' (pooling): average pooling that leaves the padding out of the divisor "
            "is not what the PDP computes (it divides by the whole window); use "
            "count_include_pad");
    }
    {
        Network net;
        Tensor x = net.input("x", {1, 4, 6, 6});
        PoolingDesc p;
        p.kernel_h = p.kernel_w = 2;
        p.stride_h = 17;
        net.output(net.pooling(x, p, "pool"), "out");
        EXPECT_EQ(try_build(net, {}).message(),
                  "layer 'pool' (pooling): stride 17x1 is larger than the PDP's 16");
    }
    {
        Network net;
        Tensor x = net.input("x", {1, 4, 1, 1});
        net.output(net.softmax(x, "prob"), "prob");
        BuildOptions o;
        o.config = "nv_medium_512";
        o.precision = Precision::Int8;
        EXPECT_EQ(try_build(net, o).message(),
                  "layer 'prob' (softmax): the CPU softmax reads int8 cubes with 32-byte atoms or "
                  "8-byte atoms, not the 16-byte atoms of nv_medium_512");
    }
}

TEST_F(BuildErrors, ImageInputs) {
    InputFormat f;
    f.image = true;
    {
        Network net;
        Tensor x = net.input("img", {1, 3, 6, 6});
        net.output(net.convolution(x, conv3(2), zeros(54), {}, "c"), "out");
        BuildOptions o;
        f.pixel_format = PixelFormat::R8;
        o.inputs = {f};
        EXPECT_EQ(try_build(net, o).message(), "input 'img': 3 channels do not fit T_R8's 1");
        f.pixel_format = PixelFormat::Y8_U8V8_N444;
        o.inputs = {f};
        EXPECT_EQ(
            try_build(net, o).message(),
            "input 'img': T_Y8___U8V8_N444 has two planes; the builder takes single-plane images");
        f.pixel_format = PixelFormat::A16B16G16R16_F;
        o.inputs = {f};
        o.config = "nv_small";
        o.precision = Precision::Int8;
        EXPECT_EQ(
            try_build(net, o).message(),
            "input 'img': T_A16B16G16R16_F holds fp16 pixels, which only an fp16 build reads");
    }
    {
        Network net;
        Tensor x = net.input("img", {1, 1, 6, 6});
        PoolingDesc p;
        net.output(net.pooling(x, p, "pool"), "out");
        BuildOptions o;
        f.pixel_format = PixelFormat::R8;
        o.inputs = {f};
        EXPECT_EQ(
            try_build(net, o).message(),
            "layer 'pool' (pooling) reads image input 'img'; only convolutions without groups or "
            "dilation read images");
    }
}

TEST(HostDataErrors, PackUnpackRunCompare) {
    std::mt19937_64 rng = test::rng_for_test();
    Network net;
    Tensor x = net.input("x", {1, 4, 3, 3});
    net.output(net.relu(x, "r"), "out");
    Result<CompiledNetwork> b = build(net);
    ASSERT_TRUE(b.ok()) << b.message();
    std::vector<std::byte> buf(b->inputs[0].size_bytes);
    EXPECT_EQ(pack_input(b->inputs[0], random_tensor(rng, {1, 4, 3, 2}), buf).message(),
              "input 'x': the tensor is 1x4x3x2, the network expects 1x4x3x3");
    HostTensor t = random_tensor(rng, {1, 4, 3, 3});
    t.data.pop_back();
    EXPECT_EQ(pack_input(b->inputs[0], t, buf).message(), "input 'x': 35 values for 36 elements");
    std::vector<std::byte> small(8);
    EXPECT_EQ(pack_input(b->inputs[0], random_tensor(rng, {1, 4, 3, 3}), small).message(),
              "input 'x': the buffer holds 8 bytes, the tensor needs " +
                  std::to_string(b->inputs[0].size_bytes));
    EXPECT_EQ(unpack_output(b->outputs[0], small).message(),
              "output 'out': the buffer holds 8 bytes, the tensor needs " +
                  std::to_string(b->outputs[0].size_bytes));
    EXPECT_EQ(run(*b, emu("nv_full"), {}).message(), "the network has 1 inputs, 0 given");
    EXPECT_EQ(run_reference(net, {}).message(), "network 'network' has 1 inputs, 0 given");
    Calibration cal;
    EXPECT_EQ(cal.add_sample(net, {random_tensor(rng, {1, 4, 3, 2})}).message(),
              "calibration: input 'x': the tensor is 1x4x3x2, the network expects 1x4x3x3");
    EXPECT_EQ(compare(random_tensor(rng, {1, 1, 1, 2}), random_tensor(rng, {1, 1, 2, 1})).message(),
              "compare: the tensors are 1x1x1x2 and 1x1x2x1");
}

}  // namespace
}  // namespace nvdla::builder_test
