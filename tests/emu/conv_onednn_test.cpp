// CMAC's oneDNN kernel (cmac_onednn.cpp): the int8 layers it takes give the same bits as the
// model's own kernels and the textbook convolution, through oneDNN's padding or a plane of the
// model's own (pad values, outputs past or short of the input), with batches, strides and
// dilation; weights changing in memory are seen; layers whose sums could leave fp32's exact
// range, and int16 layers, stay with the model's kernels. Without oneDNN (or VNNI/AMX) the
// layers all stay with the model's kernels and the same checks hold.
#include <gtest/gtest.h>

#include <cstring>

#include "conv_test_rig.hpp"
#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"
#include "isa_levels.hpp"

namespace nvdla::emu::conv_test {
namespace {

// Forces a kernel for the test's duration.
class ForcedKernel {
  public:
    explicit ForcedKernel(conv::MacKernel k) { conv::force_mac_kernel(k); }
    ~ForcedKernel() { conv::force_mac_kernel(conv::MacKernel::Auto); }
    ForcedKernel(const ForcedKernel&) = delete;
    ForcedKernel& operator=(const ForcedKernel&) = delete;
};

// Runs the case with oneDNN forced: the values match the reference, and oneDNN computed them
// exactly when `expect_onednn` and it is available.
void expect_onednn_case(const IntCase& c, bool expect_onednn) {
    const ForcedKernel forced(conv::MacKernel::OneDnn);
    const IsaLimit no_limit(IsaLevel::Avx512);  // oneDNN runs wherever the CPU has it
    Rig rig("nv_full");
    c.load(rig);
    const uint64_t before = conv::onednn_layers();
    const AccumulatorCube out = rig.execute();
    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    const bool by_onednn = conv::onednn_layers() > before;
    EXPECT_EQ(by_onednn, expect_onednn && conv::onednn_available());
    EXPECT_EQ(out.planar(), expected_values(c));
    EXPECT_EQ(rig.group_value(NVDLA_UNIT_CACC, NVDLA_CACC_D_OUT_SATURATION), 0u);
}

IntCase random_case(const ConvSpec& spec) {
    IntCase c{spec, {}, {}};
    auto rng = test::rng_for_test();
    c.fill_random(rng);
    return c;
}

TEST(ConvOnednn, ZeroPaddingThroughOnednn) {
    ConvSpec s;
    s.width = 11, s.height = 9, s.channels = 40, s.kernels = 24;
    s.pad_left = s.pad_right = s.pad_top = s.pad_bottom = 1;
    s.clip = 6;
    expect_onednn_case(random_case(s), true);
}

TEST(ConvOnednn, PadValuesStridesDilationAndBatches) {
    ConvSpec s;
    s.batches = 2, s.width = 13, s.height = 7, s.channels = 45, s.kernels = 70;
    s.kernel_w = 3, s.kernel_h = 2, s.stride_x = 2, s.dilation_y = 2;
    s.pad_left = 1, s.pad_right = 2, s.pad_top = 2;
    s.pad_value = 0x9c;  // a plane of the model's own
    s.clip = 5;
    expect_onednn_case(random_case(s), true);
}

TEST(ConvOnednn, OutputsPastAndShortOfTheInput) {
    ConvSpec s;
    s.width = 10, s.height = 8, s.channels = 16, s.kernels = 16;
    s.pad_left = 1, s.pad_top = 1;
    s.out_w = 12, s.out_h = 5;  // past the right edge, short of the bottom
    expect_onednn_case(random_case(s), true);
    s.out_w = 4, s.out_h = 10;
    expect_onednn_case(random_case(s), true);
}

TEST(ConvOnednn, ExtremeValuesWithinTheBound) {
    // 256 x sum |w| = 2^24 exactly: every weight -128 over 512 products per kernel, data -128.
    ConvSpec s;
    s.width = 4, s.height = 4, s.channels = 64, s.kernels = 4, s.kernel_w = s.kernel_h = 3;
    s.pad_left = s.pad_top = 1, s.pad_value = 0x80;
    IntCase c{s, {}, {}};
    c.input.assign(size_t(s.width) * s.height * s.channels, -128);
    c.weights.assign(size_t(s.kernels) * s.channels * 9, -128);
    for (size_t i = 0; i < c.weights.size(); i += 9) c.weights[i] = 0;  // 512 of 576 per kernel
    expect_onednn_case(c, true);
    // One more weight of -128 and the sums might leave fp32's exact range: the model's kernels.
    c.weights[0] = -128;
    expect_onednn_case(c, false);
}

TEST(ConvOnednn, Int16StaysWithTheModelsKernels) {
    ConvSpec s;
    s.precision = Precision::Int16;
    s.width = 6, s.height = 5, s.channels = 20, s.kernels = 8;
    s.clip = 12;
    expect_onednn_case(random_case(s), false);
}

TEST(ConvOnednn, WeightsChangingInMemoryAreSeen) {
    const ForcedKernel forced(conv::MacKernel::OneDnn);
    const IsaLimit no_limit(IsaLevel::Avx512);  // oneDNN runs wherever the CPU has it
    ConvSpec s;
    s.width = 7, s.height = 6, s.channels = 32, s.kernels = 20;
    s.pad_left = s.pad_right = s.pad_top = s.pad_bottom = 1;
    IntCase c = random_case(s);
    Rig rig("nv_full");
    c.load(rig);
    EXPECT_EQ(rig.execute().planar(), expected_values(c));
    EXPECT_EQ(rig.execute().planar(), expected_values(c));  // the kept weights
    // One weight changes in memory: the next layer uses it.
    c.weights[5] = c.weights[5] == 7 ? 8 : 7;
    c.load(rig);
    EXPECT_EQ(rig.execute().planar(), expected_values(c));
    // New data, same weights.
    auto rng = test::rng_for_test();
    c.input = test::random_vector<int32_t>(rng, c.input.size(), -128, 127);
    c.load(rig);
    EXPECT_EQ(rig.execute().planar(), expected_values(c));
}

TEST(ConvOnednn, CubesOfEarlierLayersStayValid) {
    // The sums buffer is shared with the cube: a cube kept across layers keeps its values.
    const ForcedKernel forced(conv::MacKernel::OneDnn);
    const IsaLimit no_limit(IsaLevel::Avx512);  // oneDNN runs wherever the CPU has it
    ConvSpec s;
    s.width = 5, s.height = 5, s.channels = 8, s.kernels = 8;
    IntCase a = random_case(s);
    Rig rig("nv_full");
    a.load(rig);
    const AccumulatorCube first = rig.execute();
    IntCase b = a;
    for (int32_t& v : b.input) v = -v / 2;
    b.load(rig);
    const AccumulatorCube second = rig.execute();
    EXPECT_EQ(first.planar(), expected_values(a));
    EXPECT_EQ(second.planar(), expected_values(b));
}

}  // namespace
}  // namespace nvdla::emu::conv_test
