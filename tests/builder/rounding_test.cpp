// BuildOptions::adaptive_rounding: int8 weights rounded down or up by their layer's output error
// on the calibration samples instead of to the nearest value.
#include <cmath>

#include "builder_rig.hpp"

namespace nvdla::builder_test {
namespace {

// Dense 3x3 + ReLU -> depthwise 5x5 + ReLU -> dense 1x1 on inputs in [0, 1]: every kind of
// layer the rounding changes. Each kernel has one large tap (as trained depthwise kernels often
// do), which sets its int8 scale, so the small taps round coarsely; the inputs have a positive
// mean, so those rounding errors add up in the sum rather than averaging out.
struct Layers {
    Network net{"rounding"};
    std::vector<Tensor> tensors;
};

std::vector<float> one_large_tap(std::mt19937_64& rng, uint32_t kernels, uint32_t taps,
                                 float small) {
    std::vector<float> w = random_weights(rng, size_t(kernels) * taps, small);
    for (uint32_t k = 0; k < kernels; ++k) w[size_t(k) * taps + taps / 2] = k % 2 ? 1.0f : -1.0f;
    return w;
}

Layers make_layers(std::mt19937_64& rng) {
    constexpr uint32_t kIn = 8, kMid = 16, kOut = 10;
    Layers l;
    Tensor x = l.net.input("data", {1, kIn, 12, 12});
    l.tensors.push_back(x);
    x = l.net.convolution(x, same_size_conv(kMid, 3), one_large_tap(rng, kMid, kIn * 9, 0.1f),
                          random_weights(rng, kMid, 0.1f), "dense");
    l.tensors.push_back(x);
    x = l.net.relu(x, "relu1");
    l.tensors.push_back(x);
    x = l.net.convolution(x, same_size_conv(kMid, 5, kMid), one_large_tap(rng, kMid, 25, 0.1f), {},
                          "depthwise");
    l.tensors.push_back(x);
    x = l.net.relu(x, "relu2");
    l.tensors.push_back(x);
    x = l.net.convolution(x, same_size_conv(kOut, 1), one_large_tap(rng, kOut, kMid, 0.1f), {},
                          "project");
    l.tensors.push_back(x);
    l.net.output(x, "y");
    return l;
}

class AdaptiveRounding : public ::testing::TestWithParam<const char*> {};

// Over inputs the calibration has not seen, the int8 output's squared error is smaller than
// with every weight rounded to its nearest value.
// The network in int8 with weights rounded to the nearest value (built[0]) and adaptively
// (built[1]).
void build_nearest_and_adaptive(const Network& net, const char* config, const Calibration& cal,
                                std::vector<CompiledNetwork>& built) {
    for (int adaptive = 0; adaptive < 2; ++adaptive) {
        BuildOptions o;
        o.config = config;
        o.precision = Precision::Int8;
        o.calibration = &cal;
        o.adaptive_rounding = adaptive == 1;
        Result<CompiledNetwork> b = build(net, o);
        ASSERT_TRUE(b) << b.message();
        built.push_back(std::move(b).value());
    }
}

TEST_P(AdaptiveRounding, LowersTheInt8ErrorOnNewInputs) {
    std::mt19937_64 rng = test::rng_for_test();
    const Layers l = make_layers(rng);
    Calibration cal;
    for (int s = 0; s < 8; ++s)
        ASSERT_TRUE(cal.add_sample(l.net, {random_tensor(rng, {1, 8, 12, 12}, 0.0f, 1.0f)}));
    double error[2] = {0, 0};
    std::vector<CompiledNetwork> built;
    ASSERT_NO_FATAL_FAILURE(build_nearest_and_adaptive(l.net, GetParam(), cal, built));
    EXPECT_NE(built[0].loadable, built[1].loadable) << "no weight was rounded differently";
    for (int s = 0; s < 16; ++s) {
        const std::vector<HostTensor> in = {random_tensor(rng, {1, 8, 12, 12}, 0.0f, 1.0f)};
        Result<std::vector<HostTensor>> expected = run_reference(l.net, in);
        ASSERT_TRUE(expected) << expected.message();
        for (int adaptive = 0; adaptive < 2; ++adaptive) {
            Result<std::vector<HostTensor>> actual =
                run(built[size_t(adaptive)], emu(GetParam()), in);
            ASSERT_TRUE(actual) << actual.message();
            const std::vector<float>& a = (*actual)[0].data;
            const std::vector<float>& e = (*expected)[0].data;
            ASSERT_EQ(a.size(), e.size());
            for (size_t i = 0; i < a.size(); ++i)
                error[adaptive] += (double(a[i]) - e[i]) * (double(a[i]) - e[i]);
        }
    }
    if (std::getenv("NVDLA_TEST_VERBOSE"))
        std::printf("squared error over 16 inputs: %.5f nearest, %.5f adaptive\n", error[0],
                    error[1]);
    EXPECT_LT(error[1], 0.6 * error[0]);
}

// Without samples (ranges set by hand) there is nothing to measure: the weights round to the
// nearest value, as without the option.
TEST_P(AdaptiveRounding, NeedsCalibrationSamples) {
    std::mt19937_64 rng = test::rng_for_test();
    const Layers l = make_layers(rng);
    Calibration sampled;
    for (int s = 0; s < 4; ++s)
        ASSERT_TRUE(sampled.add_sample(l.net, {random_tensor(rng, {1, 8, 12, 12}, 0.0f, 1.0f)}));
    Calibration by_hand;
    for (Tensor t : l.tensors) by_hand.set_range(t, sampled.range(t).value_or(1.0f));
    EXPECT_EQ(by_hand.samples(), 0u);
    std::vector<CompiledNetwork> built;
    ASSERT_NO_FATAL_FAILURE(build_nearest_and_adaptive(l.net, GetParam(), by_hand, built));
    EXPECT_EQ(built[0].loadable, built[1].loadable);
}

INSTANTIATE_TEST_SUITE_P(Configs, AdaptiveRounding, ::testing::Values("nv_full", "nv_small"));

}  // namespace
}  // namespace nvdla::builder_test
