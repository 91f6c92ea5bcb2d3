// The float reference's convolution: each output the double sum of bias and taps in the order
// (channel, row, column), rounded once to float, whatever the strides, dilations and padding.
#include <bit>

#include "builder_rig.hpp"

namespace nvdla::builder_test {
namespace {

// One output element at a time, taps outside the input skipped.
std::vector<float> direct_convolution(const ConvolutionDesc& d, Dims4 in, Dims4 out,
                                      const std::vector<float>& x, const std::vector<float>& w,
                                      const std::vector<float>& bias) {
    const uint32_t cin = in.c / d.groups, kout = d.out_channels / d.groups;
    std::vector<float> y(out.elements());
    for (uint32_t k = 0; k < out.c; ++k)
        for (uint32_t oy = 0; oy < out.h; ++oy)
            for (uint32_t ox = 0; ox < out.w; ++ox) {
                double sum = bias.empty() ? 0.0 : double(bias[k]);
                for (uint32_t c = 0; c < cin; ++c)
                    for (uint32_t r = 0; r < d.kernel_h; ++r)
                        for (uint32_t s = 0; s < d.kernel_w; ++s) {
                            const int64_t iy =
                                int64_t(oy) * d.stride_h + int64_t(r) * d.dilation_h - d.pad_top;
                            const int64_t ix =
                                int64_t(ox) * d.stride_w + int64_t(s) * d.dilation_w - d.pad_left;
                            if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) continue;
                            const uint32_t ci = k / kout * cin + c;
                            sum +=
                                double(
                                    w[((size_t(k) * cin + c) * d.kernel_h + r) * d.kernel_w + s]) *
                                double(x[(size_t(ci) * in.h + size_t(iy)) * in.w + size_t(ix)]);
                        }
                y[(size_t(k) * out.h + oy) * out.w + ox] = static_cast<float>(sum);
            }
    return y;
}

TEST(ReferenceConvolution, EveryOutputIsTheDirectSumBitForBit) {
    std::mt19937_64 rng = test::rng_for_test();
    auto pick = [&](uint32_t lo, uint32_t hi) {
        return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
    };
    int checked = 0;
    for (int t = 0; t < 300; ++t) {
        ConvolutionDesc d;
        d.groups = pick(1, 3);
        const Dims4 in{1, d.groups * pick(1, 3), pick(1, 9), pick(1, 9)};
        d.out_channels = d.groups * pick(1, 3);
        d.kernel_h = pick(1, 5);
        d.kernel_w = pick(1, 5);
        d.stride_h = pick(1, 3);
        d.stride_w = pick(1, 3);
        d.dilation_h = pick(1, 3);
        d.dilation_w = pick(1, 3);
        d.pad_top = pick(0, 4);
        d.pad_left = pick(0, 4);
        d.pad_bottom = pick(0, 4);
        d.pad_right = pick(0, 4);
        const int64_t span_h = int64_t(d.kernel_h - 1) * d.dilation_h + 1;
        const int64_t span_w = int64_t(d.kernel_w - 1) * d.dilation_w + 1;
        if (int64_t(in.h) + d.pad_top + d.pad_bottom < span_h ||
            int64_t(in.w) + d.pad_left + d.pad_right < span_w)
            continue;  // no output
        const std::vector<float> w = random_weights(
            rng, size_t(d.out_channels) * (in.c / d.groups) * d.kernel_h * d.kernel_w);
        const std::vector<float> bias =
            pick(0, 1) ? random_weights(rng, d.out_channels) : std::vector<float>{};
        Network net("conv");
        const Tensor x = net.input("x", in);
        const Tensor y = net.convolution(x, d, w, bias, "conv");
        net.output(y, "y");
        ASSERT_TRUE(net.status()) << net.status().message();
        const HostTensor input = random_tensor(rng, in);
        auto out = run_reference(net, {input});
        ASSERT_TRUE(out) << out.message();
        const std::vector<float> expected =
            direct_convolution(d, in, net.dims(y), input.data, w, bias);
        ASSERT_EQ((*out)[0].data.size(), expected.size());
        for (size_t i = 0; i < expected.size(); ++i)
            ASSERT_EQ(std::bit_cast<uint32_t>((*out)[0].data[i]),
                      std::bit_cast<uint32_t>(expected[i]))
                << "case " << t << ", output " << i;
        ++checked;
    }
    EXPECT_GT(checked, 200);
}

}  // namespace
}  // namespace nvdla::builder_test
