// Layers larger than the convolution buffer: split output channels (weights) and input rows
// (data), and the pieces still compute the layer.
#include "builder_rig.hpp"

namespace nvdla::builder_test {
namespace {

bool mentions(const Outcome& o, const std::string& what) {
    for (const auto& line : o.built.operations)
        if (line.find(what) != std::string::npos) return true;
    return false;
}

TEST(Tiling, WeightsBeyondTheBufferSplitOutputChannels) {
    // nv_small: 128 KiB of buffer; 256 kernels of 3x3x64 int8 are 144 KiB.
    std::mt19937_64 rng = test::rng_for_test();
    Network net;
    Tensor x = net.input("data", {1, 64, 6, 6});
    ConvolutionDesc d;
    d.out_channels = 256;
    d.kernel_h = d.kernel_w = 3;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
    x = net.convolution(x, d, random_weights(rng, 256 * 64 * 9, 0.1f), random_weights(rng, 256),
                        "big");
    x = net.relu(x, "relu");
    net.output(x, "out");
    BuildOptions opt;
    opt.config = "nv_small";
    opt.precision = Precision::Int8;
    auto o = run_and_compare(net, {random_tensor(rng, {1, 64, 6, 6})}, opt, 1);
    ASSERT_TRUE(o);
    EXPECT_TRUE(mentions(*o, "pieces (output channels)")) << describe(*o);
    EXPECT_LT(o->diff[0].relative(), 2e-2) << describe(*o);
}

TEST(Tiling, DataBeyondTheBufferSplitsInputRows) {
    // nv_small: one 48-pixel row of 64 int8 channels takes 384 entries, 0.75 banks; 60 rows
    // are more than the 32 banks.
    std::mt19937_64 rng = test::rng_for_test();
    Network net;
    Tensor x = net.input("data", {1, 64, 60, 48});
    ConvolutionDesc d;
    d.out_channels = 8;
    d.kernel_h = d.kernel_w = 3;
    d.stride_h = 2;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
    x = net.convolution(x, d, random_weights(rng, 8 * 64 * 9, 0.1f), random_weights(rng, 8),
                        "tall");
    PoolingDesc p;
    p.kernel_h = p.kernel_w = 2;
    p.stride_h = p.stride_w = 2;
    x = net.pooling(x, p, "pool");  // not fused into a row-split convolution
    net.output(x, "out");
    BuildOptions opt;
    opt.config = "nv_small";
    opt.precision = Precision::Int8;
    auto o = run_and_compare(net, {random_tensor(rng, {1, 64, 60, 48})}, opt, 1);
    ASSERT_TRUE(o);
    EXPECT_TRUE(mentions(*o, "pieces (input rows)")) << describe(*o);
    EXPECT_TRUE(mentions(*o, "pool: PDP")) << describe(*o);
    EXPECT_LT(o->diff[0].relative(), 2e-2) << describe(*o);
}

TEST(Tiling, BothSplitsInt8) {
    // nv_small: 256 kernels of 3x3x64 (144 KiB) and 64 rows of 48 pixels of 64 channels.
    std::mt19937_64 rng = test::rng_for_test();
    Network net;
    Tensor x = net.input("data", {1, 64, 64, 48});
    ConvolutionDesc d;
    d.out_channels = 256;
    d.kernel_h = d.kernel_w = 3;
    d.stride_h = d.stride_w = 8;
    x = net.convolution(x, d, random_weights(rng, 256 * 64 * 9, 0.1f), {}, "huge");
    net.output(x, "out");
    BuildOptions opt;
    opt.config = "nv_small";
    opt.precision = Precision::Int8;
    auto o = run_and_compare(net, {random_tensor(rng, {1, 64, 64, 48})}, opt, 0);
    ASSERT_TRUE(o);
    EXPECT_TRUE(mentions(*o, "pieces (output channels x input rows)")) << describe(*o);
    EXPECT_LT(o->diff[0].relative(), 2e-2) << describe(*o);
}

TEST(Tiling, OutputChannelsFp16) {
    // nv_full fp16: 1056 kernels of 1x1x256 are 528 KiB, more than the whole buffer.
    std::mt19937_64 rng = test::rng_for_test();
    Network net;
    Tensor x = net.input("data", {1, 256, 1, 1});
    x = net.fully_connected(x, 1056, random_weights(rng, 1056 * 256, 0.05f), {}, "fc");
    net.output(x, "out");
    auto o = run_and_compare(net, {random_tensor(rng, {1, 256, 1, 1})}, BuildOptions{}, -1);
    ASSERT_TRUE(o);
    EXPECT_TRUE(mentions(*o, "pieces (output channels)")) << describe(*o);
    EXPECT_LT(o->diff[0].relative(), 4e-3) << describe(*o);
}

// The layers the C model refused in the builder's earlier programming: a 1x1 convolution on
// 55x55x64 int8 (1540 buffer entries of 128 bytes: 7 banks, not 6) and a fully connected
// layer with per-channel scales (per-kernel SDP operands on a 1x1 output: packed surface
// strides). The emulator refuses what the hardware cannot run, so running is the check.
TEST(Tiling, BufferAndStridesTheHardwareAccepts) {
    std::mt19937_64 rng = test::rng_for_test();
    Network net;
    Tensor x = net.input("data", {1, 64, 55, 55});
    ConvolutionDesc d;
    d.out_channels = 16;
    d.kernel_h = d.kernel_w = 1;
    x = net.convolution(x, d, random_weights(rng, 16 * 64, 0.2f), random_weights(rng, 16),
                        "squeeze");
    x = net.relu(x, "relu");
    PoolingDesc p;
    p.kernel_h = p.kernel_w = 8;
    p.stride_h = p.stride_w = 8;
    x = net.pooling(x, p, "pool");
    x = net.fully_connected(x, 40, random_weights(rng, 40 * 16 * 6 * 6, 0.1f),
                            random_weights(rng, 40), "fc");
    net.output(x, "out");
    BuildOptions opt;
    opt.precision = Precision::Int8;
    auto o = run_and_compare(net, {random_tensor(rng, {1, 64, 55, 55})}, opt, 1);
    ASSERT_TRUE(o);
    EXPECT_LT(o->diff[0].relative(), 3e-2) << describe(*o);
}

}  // namespace
}  // namespace nvdla::builder_test
