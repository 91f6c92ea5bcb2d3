// Image inputs: the first convolution reads a pixel surface and the CDMA converts the pixels.
#include "builder_rig.hpp"

namespace nvdla::builder_test {
namespace {

struct ImageCase {
    const char* config;
    Precision precision;
    PixelFormat format;
    uint32_t channels;
};

class Image : public ::testing::TestWithParam<ImageCase> {};

TEST_P(Image, FirstConvolutionReadsPixels) {
    const ImageCase& c = GetParam();
    std::mt19937_64 rng = test::rng_for_test();
    const Dims4 dims{1, c.channels, 11, 13};
    const std::array<float, 4> mean{120, 100, 90, 0};
    const float scale = 1.0f / 64;
    Network net;
    Tensor x = net.input("image", dims);
    ConvolutionDesc d;
    d.out_channels = 6;
    d.kernel_h = d.kernel_w = 3;
    d.stride_h = 2;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
    x = net.convolution(x, d, random_weights(rng, 6 * c.channels * 9), random_weights(rng, 6),
                        "conv1");
    PoolingDesc p;
    p.kernel_h = p.kernel_w = p.stride_h = p.stride_w = 2;
    x = net.pooling(net.relu(x, "relu1"), p, "pool1");
    net.output(x, "out");

    // Pixels for the hardware, (pixel - mean) * scale for the reference.
    HostTensor pixels = make_host_tensor(dims);
    for (float& v : pixels.data) v = float(test::random_between(rng, 0, 255));
    HostTensor values = pixels;
    for (uint32_t ch = 0; ch < c.channels; ++ch)
        for (uint32_t y = 0; y < dims.h; ++y)
            for (uint32_t w = 0; w < dims.w; ++w)
                values.at(0, ch, y, w) = (pixels.at(0, ch, y, w) - mean[ch]) * scale;

    Calibration cal;
    ASSERT_TRUE(cal.add_sample(net, {values}).ok());
    BuildOptions opt;
    opt.config = c.config;
    opt.precision = c.precision;
    opt.calibration = &cal;
    InputFormat f;
    f.image = true;
    f.pixel_format = c.format;
    f.mean = mean;
    f.scale = scale;
    opt.inputs = {f};
    Result<CompiledNetwork> built = build(net, opt);
    ASSERT_TRUE(built.ok()) << built.message();
    EXPECT_TRUE(built->inputs[0].image.has_value());
    EXPECT_EQ(built->inputs[0].pixel_format, static_cast<uint8_t>(c.format));
    Result<std::vector<HostTensor>> got = run(*built, emu(c.config), {pixels});
    ASSERT_TRUE(got.ok()) << got.message();
    Result<std::vector<HostTensor>> ref = run_reference(net, {values});
    ASSERT_TRUE(ref.ok());
    Result<Difference> diff = compare((*got)[0], (*ref)[0]);
    ASSERT_TRUE(diff.ok());
    std::string ops;
    for (const auto& s : built->operations) ops += s + "\n";
    EXPECT_LE(diff->relative(), c.precision == Precision::Fp16 ? 4e-3 : 4e-2) << ops;
    EXPECT_NE(ops.find("CONV image"), std::string::npos) << ops;
}

INSTANTIATE_TEST_SUITE_P(
    Formats, Image,
    ::testing::Values(ImageCase{"nv_full", Precision::Fp16, PixelFormat::R8, 1},
                      ImageCase{"nv_full", Precision::Int8, PixelFormat::R8, 1},
                      ImageCase{"nv_small", Precision::Int8, PixelFormat::R8, 1},
                      ImageCase{"nv_full", Precision::Fp16, PixelFormat::A8B8G8R8, 3},
                      ImageCase{"nv_full", Precision::Int8, PixelFormat::A8B8G8R8, 3},
                      ImageCase{"nv_small", Precision::Int8, PixelFormat::A8B8G8R8, 3}),
    [](const ::testing::TestParamInfo<ImageCase>& p) {
        return std::string(p.param.config) + "_" + std::string(to_string(p.param.precision)) + "_" +
               std::string(to_string(p.param.format)).substr(2);
    });

}  // namespace
}  // namespace nvdla::builder_test
