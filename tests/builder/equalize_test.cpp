// BuildOptions::equalize_channel_ranges: int8 channels of very different ranges rescaled where
// they are made and unscaled in the convolution that reads them.
#include <cmath>

#include "builder_rig.hpp"

namespace nvdla::builder_test {
namespace {

// Batch norm gammas 1 to 2^7.5, shuffled: the channels of its output span ranges ~180x apart.
std::vector<float> spread_gammas(std::mt19937_64& rng, uint32_t channels) {
    std::vector<float> g(channels);
    for (uint32_t k = 0; k < channels; ++k) g[k] = std::ldexp(1.0f, int(k % 16)) / 2;
    std::shuffle(g.begin(), g.end(), rng);
    for (float& v : g) v = std::sqrt(v);
    return g;
}

// An inverted residual block: conv 1x1 + batch norm + ReLU -> depthwise 3x3 + batch norm +
// ReLU -> conv 1x1.
Network spread_network(std::mt19937_64& rng) {
    constexpr uint32_t kIn = 8, kMid = 32, kOut = 16;
    Network net("spread");
    Tensor x = net.input("data", {1, kIn, 8, 8});
    const std::vector<float> ones(kMid, 1.0f);
    x = net.convolution(x, same_size_conv(kMid, 1), random_weights(rng, kMid * kIn, 0.4f), {},
                        "expand");
    x = net.batch_norm(x, random_weights(rng, kMid, 0.2f), ones, spread_gammas(rng, kMid),
                       random_weights(rng, kMid, 0.2f), 1e-5f, "bn1");
    x = net.relu(x, "relu1");
    x = net.convolution(x, same_size_conv(kMid, 3, kMid), random_weights(rng, kMid * 9, 0.4f), {},
                        "depthwise");
    x = net.batch_norm(x, random_weights(rng, kMid, 0.2f), ones, spread_gammas(rng, kMid),
                       random_weights(rng, kMid, 0.2f), 1e-5f, "bn2");
    x = net.relu(x, "relu2");
    net.output(net.convolution(x, same_size_conv(kOut, 1), random_weights(rng, kOut * kMid, 0.2f),
                               {}, "project"),
               "y");
    return net;
}

class EqualizeChannelRanges : public ::testing::TestWithParam<const char*> {};

// The rescaled network computes the same function (the float reference matches) and its int8
// error, summed over several inputs, is smaller than without equalization.
TEST_P(EqualizeChannelRanges, LowersTheInt8Error) {
    std::mt19937_64 rng = test::rng_for_test();
    const Network net = spread_network(rng);
    double error[2] = {0, 0};
    for (int sample = 0; sample < 8; ++sample) {
        const HostTensor in = random_tensor(rng, {1, 8, 8, 8});
        for (int equalize = 0; equalize < 2; ++equalize) {
            BuildOptions o;
            o.config = GetParam();
            o.precision = Precision::Int8;
            o.equalize_channel_ranges = equalize == 1;
            auto outcome = run_and_compare(net, {in}, o, 8);
            ASSERT_TRUE(outcome);
            EXPECT_LE(outcome->diff[0].relative(), 0.1) << describe(*outcome);
            error[equalize] += outcome->diff[0].mean_abs / outcome->diff[0].max_ref;
        }
    }
    if (std::getenv("NVDLA_TEST_VERBOSE"))
        std::printf("mean |error| / largest |output|, summed: %.5f without, %.5f with\n", error[0],
                    error[1]);
    EXPECT_LT(error[1], 0.8 * error[0]);
}

INSTANTIATE_TEST_SUITE_P(Configs, EqualizeChannelRanges, ::testing::Values("nv_full", "nv_small"));

}  // namespace
}  // namespace nvdla::builder_test
