// Convolutions and fully connected layers against the float reference.
#include "builder_rig.hpp"

namespace nvdla::builder_test {
namespace {

struct ConvCase {
    const char* config;
    Precision precision;
};

class Conv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv, Basic3x3) {
    std::mt19937_64 rng = test::rng_for_test();
    Network net("conv");
    Tensor x = net.input("data", {1, 3, 9, 11});
    ConvolutionDesc d;
    d.out_channels = 5;
    d.kernel_h = d.kernel_w = 3;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
    x = net.convolution(x, d, random_weights(rng, 5 * 3 * 9), random_weights(rng, 5), "conv1");
    net.output(x, "out");
    BuildOptions opt;
    opt.config = GetParam().config;
    opt.precision = GetParam().precision;
    auto o = run_and_compare(net, {random_tensor(rng, {1, 3, 9, 11})}, opt);
    ASSERT_TRUE(o);
    EXPECT_LT(o->diff[0].relative(), GetParam().precision == Precision::Fp16 ? 2e-3 : 3e-2)
        << describe(*o);
}

INSTANTIATE_TEST_SUITE_P(Configs, Conv,
                         ::testing::Values(ConvCase{"nv_full", Precision::Fp16},
                                           ConvCase{"nv_full", Precision::Int8},
                                           ConvCase{"nv_small", Precision::Int8}),
                         [](const auto& p) {
                             return std::string(p.param.config) + "_" +
                                    std::string(to_string(p.param.precision));
                         });

}  // namespace
}  // namespace nvdla::builder_test
