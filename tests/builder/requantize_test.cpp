// int8 SDP operations that read their data from memory (not behind a convolution) round once:
// inputs on their int8 grids, the output is within half an output step (plus the SDP's fine
// units, 1/256 of a step, and the multipliers' 16 bits) of the exact result of those inputs.
// layers_test.cpp's 2.5-step bound would not see one extra rounding of an operand.
#include <cmath>

#include "builder_rig.hpp"

namespace nvdla::builder_test {
namespace {

// Half a step, and what the fixed-point units may add to it.
constexpr double kOneRounding = 0.5 + 1.0 / 64;

// Values k * range / 127 for random integers k in [-127, 127].
HostTensor grid_tensor(std::mt19937_64& rng, Dims4 dims, double range) {
    HostTensor t = make_host_tensor(dims);
    std::uniform_int_distribution<int> k(-127, 127);
    for (float& v : t.data) v = static_cast<float>(k(rng) * range / 127);
    return t;
}

struct Ranges {
    double a, b, out;
};

class Requantize : public ::testing::TestWithParam<const char*> {
  protected:
    // Builds net (ranges set by the caller) for the parameter's configuration in int8, runs it
    // and returns the output in output steps.
    std::vector<double> run_steps(const Network& net, const Calibration& cal,
                                  const std::vector<HostTensor>& in, double out_range) {
        BuildOptions o;
        o.config = GetParam();
        o.precision = Precision::Int8;
        o.calibration = &cal;
        Result<CompiledNetwork> built = build(net, o);
        if (!built) {
            ADD_FAILURE() << built.message();
            return {};
        }
        Result<std::vector<HostTensor>> out = run(*built, emu(GetParam()), in);
        if (!out) {
            ADD_FAILURE() << out.message();
            return {};
        }
        for (const auto& line : built->operations) operations_ += "  " + line + "\n";
        std::vector<double> steps;
        for (float v : (*out)[0].data) steps.push_back(v / (out_range / 127));
        return steps;
    }
    std::string operations_;
    std::mt19937_64 rng = test::rng_for_test();
};

TEST_P(Requantize, ElementwiseOfTwoTensorsInMemoryRoundsOnce) {
    // Operand ranges apart by 2.7 and by 300 (an operand 300 times finer than the data).
    for (const Ranges r : {Ranges{1.0, 0.37, 1.3}, Ranges{0.01, 3.0, 3.0}, Ranges{3.0, 0.01, 3.0}})
        for (EltwiseOp op : {EltwiseOp::Sum, EltwiseOp::Max, EltwiseOp::Min}) {
            SCOPED_TRACE(testing::Message() << "ranges " << r.a << ", " << r.b << " -> " << r.out
                                            << ", op " << int(op));
            const Dims4 dims{1, 19, 3, 5};
            Network net;
            Tensor a = net.input("a", dims), b = net.input("b", dims);
            Tensor y = net.eltwise(a, b, op, "eltwise");
            net.output(y, "out");
            Calibration cal;
            cal.set_range(a, float(r.a));
            cal.set_range(b, float(r.b));
            cal.set_range(y, float(r.out));
            const HostTensor ha = grid_tensor(rng, dims, r.a), hb = grid_tensor(rng, dims, r.b);
            operations_.clear();
            const std::vector<double> got = run_steps(net, cal, {ha, hb}, r.out);
            ASSERT_EQ(got.size(), ha.data.size());
            double worst = 0;
            for (size_t i = 0; i < got.size(); ++i) {
                const double x = ha.data[i], z = hb.data[i];
                const double exact = op == EltwiseOp::Sum   ? x + z
                                     : op == EltwiseOp::Max ? std::max(x, z)
                                                            : std::min(x, z);
                const double e = std::clamp(exact / (r.out / 127), -128.0, 127.0);
                worst = std::max(worst, std::fabs(got[i] - e));
            }
            EXPECT_LE(worst, kOneRounding) << "output steps\n" << operations_;
        }
}

// A per-channel bias and scale of a tensor in memory (behind a pooling layer nothing folds
// into): the additions must not round to the input's steps.
TEST_P(Requantize, AffineOfATensorInMemoryRoundsOnce) {
    const uint32_t C = 7, H = 3, W = 5;
    const double in_range = 2.0, out_range = 2.5;
    Network net;
    Tensor x = net.input("x", {1, C, H, W});
    Tensor p = net.pooling(x, PoolingDesc{}, "identity_pool");
    const std::vector<float> scale = test::random_vector<float>(rng, C, 0.5f, 1.2f);
    const std::vector<float> shift = test::random_vector<float>(rng, C, -0.02f, 0.02f);
    Tensor y = net.scale(p, scale, shift, "affine");
    net.output(y, "out");
    Calibration cal;
    cal.set_range(x, float(in_range));
    cal.set_range(p, float(in_range));
    cal.set_range(y, float(out_range));
    const HostTensor hx = grid_tensor(rng, {1, C, H, W}, in_range);
    const std::vector<double> got = run_steps(net, cal, {hx}, out_range);
    ASSERT_EQ(got.size(), size_t(C * H * W));
    double worst = 0;
    for (uint32_t c = 0; c < C; ++c)
        for (uint32_t i = 0; i < H * W; ++i) {
            const double exact = double(hx.data[c * H * W + i]) * scale[c] + shift[c];
            const double e = std::clamp(exact / (out_range / 127), -128.0, 127.0);
            worst = std::max(worst, std::fabs(got[c * H * W + i] - e));
        }
    EXPECT_LE(worst, kOneRounding) << "output steps\n" << operations_;
}

// A clip with two non-zero bounds behind a convolution (nv_small: its second bound is a
// second SDP pass from memory).
TEST_P(Requantize, ClipBehindAConvolutionRoundsOnce) {
    const uint32_t C = 6, K = 5, H = 3, W = 4;
    const double in_range = 1.0, conv_range = 1.6, out_range = 0.75;
    Network net;
    Tensor x = net.input("x", {1, C, H, W});
    ConvolutionDesc d;
    d.out_channels = K;
    const std::vector<float> w = test::random_vector<float>(rng, K * C, -0.5f, 0.5f);
    const std::vector<float> b = test::random_vector<float>(rng, K, -0.1f, 0.1f);
    Tensor c = net.convolution(x, d, w, b, "conv");
    Tensor y = net.clip(c, -0.5f, 0.75f, "clip");
    net.output(y, "out");
    Calibration cal;
    cal.set_range(x, float(in_range));
    cal.set_range(c, float(conv_range));
    cal.set_range(y, float(out_range));
    const HostTensor hx = grid_tensor(rng, {1, C, H, W}, in_range);
    const std::vector<double> got = run_steps(net, cal, {hx}, out_range);
    ASSERT_EQ(got.size(), size_t(K * H * W));
    double worst = 0;
    for (uint32_t k = 0; k < K; ++k) {
        double largest = 0;
        for (uint32_t i = 0; i < C; ++i)
            largest = std::max(largest, std::fabs(double(w[k * C + i])));
        const double step = largest / 127;
        for (uint32_t p = 0; p < H * W; ++p) {
            double sum = b[k];
            for (uint32_t i = 0; i < C; ++i)
                sum += std::round(w[k * C + i] / step) * step * hx.data[i * H * W + p];
            const double e =
                std::clamp(std::clamp(sum, -0.5, 0.75) / (out_range / 127), -128.0, 127.0);
            worst = std::max(worst, std::fabs(got[k * H * W + p] - e));
        }
    }
    EXPECT_LE(worst, kOneRounding) << "output steps\n" << operations_;
}

// A convolution's residual sum (fused) whose operand's steps are 300 times the convolution's:
// the operand's converter (16 bits) must not saturate.
TEST_P(Requantize, FusedSumWithAMuchWiderOperandRoundsOnce) {
    const uint32_t C = 6, K = 5, H = 3, W = 4;
    const double in_range = 1.0, conv_range = 0.01, res_range = 3.0;
    Network net;
    Tensor x = net.input("x", {1, C, H, W}), r = net.input("r", {1, K, H, W});
    ConvolutionDesc d;
    d.out_channels = K;
    const std::vector<float> w = test::random_vector<float>(rng, K * C, -0.002f, 0.002f);
    Tensor c = net.convolution(x, d, w, {}, "conv");
    Tensor y = net.eltwise(c, r, EltwiseOp::Sum, "sum");
    net.output(y, "out");
    Calibration cal;
    cal.set_range(x, float(in_range));
    cal.set_range(r, float(res_range));
    cal.set_range(c, float(conv_range));
    cal.set_range(y, float(res_range));
    const HostTensor hx = grid_tensor(rng, {1, C, H, W}, in_range);
    const HostTensor hr = grid_tensor(rng, {1, K, H, W}, res_range);
    const std::vector<double> got = run_steps(net, cal, {hx, hr}, res_range);
    ASSERT_EQ(got.size(), size_t(K * H * W));
    double worst = 0;
    for (uint32_t k = 0; k < K; ++k) {
        // The builder's int8 weights: per output channel, largest |w| / 127.
        double largest = 0;
        for (uint32_t i = 0; i < C; ++i)
            largest = std::max(largest, std::fabs(double(w[k * C + i])));
        const double step = largest / 127;
        for (uint32_t p = 0; p < H * W; ++p) {
            double sum = hr.data[k * H * W + p];
            for (uint32_t i = 0; i < C; ++i)
                sum += std::round(w[k * C + i] / step) * step * hx.data[i * H * W + p];
            const double e = std::clamp(sum / (res_range / 127), -128.0, 127.0);
            worst = std::max(worst, std::fabs(got[k * H * W + p] - e));
        }
    }
    EXPECT_LE(worst, kOneRounding) << "output steps\n" << operations_;
}

INSTANTIATE_TEST_SUITE_P(Targets, Requantize,
                         ::testing::Values("nv_full", "nv_small", "nv_small_256_full"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                             return std::string(p.param);
                         });

}  // namespace
}  // namespace nvdla::builder_test
