// Conversion of an image into an input tensor: every supported format and precision with the
// expected bytes computed here from the original runtime's address rules (DlaImage
// getAddrOffset) and value rules (TestUtils createImageCopy), and every error.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <random>

#include "nvdla/precision/fp16.hpp"
#include "runtime/image.hpp"
#include "test_support.hpp"

namespace nvdla::runtime {
namespace {

// ---- References ---------------------------------------------------------------------------

// fp16 nearest to v, ties away from zero, found by search over the fp16 values.
uint16_t reference_half(float v) {
    const double d = std::fabs(double(v));
    const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    if (d >= 65520.0) return sign | 0x7c00;
    uint16_t lo = 0, hi = 0x7bff;
    while (lo < hi) {
        const uint16_t mid = uint16_t((lo + hi + 1) / 2);
        if (double(fp16::to_float(mid)) <= d)
            lo = mid;
        else
            hi = uint16_t(mid - 1);
    }
    const double below = fp16::to_float(lo);
    if (below == d) return sign | lo;
    const double above = lo == 0x7bff ? 65536.0 : double(fp16::to_float(uint16_t(lo + 1)));
    return uint16_t(sign | (above - d <= d - below ? lo + 1 : lo));
}

// The original's int8 value: floor(x * 127.0 / 255.0 + 0.5), generalised to max_value.
uint8_t reference_int8(uint32_t x, uint32_t max_value) {
    return uint8_t(std::floor(x * 127.0 / max_value + 0.5));
}

uint16_t reference_fp16(uint32_t x, float mean, float normalize) {
    return reference_half((float(x) - mean) / normalize);
}

Image make_image(uint32_t w, uint32_t h, uint32_t c, uint32_t max_value, uint64_t seed = 1) {
    Image im;
    im.width = w;
    im.height = h;
    im.channels = c;
    im.max_value = max_value;
    im.type = ImageFileType::Pnm;
    std::mt19937_64 rng(seed);
    for (size_t i = 0; i < size_t(w) * h * c; ++i)
        im.samples.push_back(uint16_t(rng() % (uint64_t(max_value) + 1)));
    return im;
}

const HwConfig& nv_full() {
    return test::config("nv_full");
}
const HwConfig& nv_small() {
    return test::config("nv_small");
}

// Converts into a buffer prefilled with 0xAA (the conversion must clear it).
std::vector<std::byte> convert(const Image& im, const HwConfig& cfg, const InputTensorLayout& l,
                               const ImageConversion& conv = {}, size_t bytes = 0) {
    Result<uint64_t> need = input_tensor_bytes(cfg, l);
    EXPECT_TRUE(need.ok()) << need.message();
    std::vector<std::byte> out(bytes ? bytes : size_t(need.ok() ? *need : 0), std::byte{0xaa});
    Status s = convert_image(im, cfg, l, conv, out);
    EXPECT_TRUE(s.ok()) << s.message();
    return out;
}

void put16(std::vector<std::byte>& v, size_t at, uint16_t x) {
    v[at] = std::byte(x & 0xff);
    v[at + 1] = std::byte(x >> 8);
}

void expect_bytes(const std::vector<std::byte>& got, const std::vector<std::byte>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(int(got[i]), int(want[i])) << "byte " << i;
}

// ---- fp16 rounding ------------------------------------------------------------------------

TEST(ImageConvert, Fp16RoundsTiesAwayFromZero) {
    // Ties: 2049 lies between 2048 and 2050 (ties to even would give 2048).
    EXPECT_EQ(fp16_round_ties_away(2049.0f), 0x6801);
    EXPECT_EQ(fp16_round_ties_away(2051.0f), 0x6802);
    EXPECT_EQ(fp16_round_ties_away(-2049.0f), 0xe801);
    EXPECT_EQ(fp16_round_ties_away(1.0f + 1.0f / 2048), 0x3c01);
    EXPECT_EQ(fp16_round_ties_away(std::ldexp(1.0f, -25)), 0x0001);  // half the smallest
    EXPECT_EQ(fp16_round_ties_away(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 units
    EXPECT_EQ(fp16_round_ties_away(std::ldexp(1.0f, -26)), 0x0000);
    EXPECT_EQ(fp16_round_ties_away(-0.0f), 0x8000);
    EXPECT_EQ(fp16_round_ties_away(65504.0f), 0x7bff);
    EXPECT_EQ(fp16_round_ties_away(65519.99f), 0x7bff);
    EXPECT_EQ(fp16_round_ties_away(65520.0f), 0x7c00);
    EXPECT_EQ(fp16_round_ties_away(1e9f), 0x7c00);
    EXPECT_EQ(fp16_round_ties_away(-INFINITY), 0xfc00);
    EXPECT_TRUE(fp16::is_nan(fp16_round_ties_away(NAN)));
    // Agrees with IEEE round-to-nearest-even except on ties.
    EXPECT_EQ(fp16_round_ties_away(0.1f), fp16::from_float(0.1f));
}

TEST(ImageConvert, Fp16RoundingMatchesTheSearchReference) {
    auto rng = test::rng_for_test();
    for (int i = 0; i < 200000; ++i) {
        // Random bit patterns over the fp16 range, and exact midpoints between fp16 values.
        float v;
        if (i % 2) {
            v = std::bit_cast<float>(uint32_t(0x30000000u + rng() % 0x17800000u));
        } else {
            const uint16_t h = uint16_t(rng() % 0x7bff);
            v = float((double(fp16::to_float(h)) + double(fp16::to_float(uint16_t(h + 1)))) / 2);
        }
        if (rng() & 1) v = -v;
        ASSERT_EQ(fp16_round_ties_away(v), reference_half(v)) << v;
    }
}

// ---- Formats ------------------------------------------------------------------------------

TEST(ImageConvert, FeatureFp16) {
    const Image im = make_image(3, 2, 1, 255);
    InputTensorLayout l{InputFormat::Feature, Precision::Fp16, {1, 1, 2, 3}, 96, 192, 192};
    const ImageConversion conv{{10.5f, 0, 0, 0}, 4.0f};
    std::vector<std::byte> want(192, std::byte{0});
    for (uint32_t y = 0; y < 2; ++y)
        for (uint32_t x = 0; x < 3; ++x)
            put16(want, y * 96 + x * 32, reference_fp16(im.at(x, y, 0), 10.5f, 4.0f));
    expect_bytes(convert(im, nv_full(), l, conv), want);
}

TEST(ImageConvert, FeatureInt8IgnoresMeanAndNormalize) {
    const Image im = make_image(4, 3, 3, 255, 7);
    // 40 channels: two surfaces (32 int8 channels per atom); padded strides.
    InputTensorLayout l{InputFormat::Feature, Precision::Int8, {1, 40, 3, 4}, 160, 512, 0};
    const ImageConversion conv{{100, 50, 25, 0}, 0.0f};  // ignored for int8, even normalize 0
    Result<uint64_t> need = input_tensor_bytes(nv_full(), l);
    ASSERT_TRUE(need.ok()) << need.message();
    EXPECT_EQ(*need, 512u + 2 * 160 + 4 * 32);
    std::vector<std::byte> want(*need, std::byte{0});
    for (uint32_t c = 0; c < 3; ++c)
        for (uint32_t y = 0; y < 3; ++y)
            for (uint32_t x = 0; x < 4; ++x)
                want[(c / 32) * 512 + y * 160 + x * 32 + c % 32] =
                    std::byte(reference_int8(im.at(x, y, c), 255));
    expect_bytes(convert(im, nv_full(), l, conv), want);
}

TEST(ImageConvert, FeatureFp16MoreChannelsThanTheImage) {
    const Image im = make_image(2, 2, 3, 255, 3);
    // 20 fp16 channels: 16 per atom, two surfaces.
    InputTensorLayout l{InputFormat::Feature, Precision::Fp16, {1, 20, 2, 2}, 0, 0, 0};
    const ImageConversion conv{{1, 2, 3, 4}, 3.0f};
    const uint64_t ls = 2 * 32, ss = 2 * ls;
    std::vector<std::byte> want(ss + ls + 2 * 32, std::byte{0});
    for (uint32_t c = 0; c < 3; ++c)
        for (uint32_t y = 0; y < 2; ++y)
            for (uint32_t x = 0; x < 2; ++x)
                put16(want, (c / 16) * ss + y * ls + x * 32 + (c % 16) * 2,
                      reference_fp16(im.at(x, y, c), conv.mean[c], 3.0f));
    expect_bytes(convert(im, nv_full(), l, conv), want);
}

TEST(ImageConvert, FeatureX8) {
    const Image im = make_image(5, 2, 1, 255, 9);
    InputTensorLayout l{InputFormat::FeatureX8, Precision::Int8, {1, 1, 2, 5}, 48, 96, 0};
    std::vector<std::byte> want(48 + 5 * 8, std::byte{0});
    for (uint32_t y = 0; y < 2; ++y)
        for (uint32_t x = 0; x < 5; ++x)
            want[y * 48 + x * 8] = std::byte(reference_int8(im.at(x, y, 0), 255));
    // The configuration does not matter for feature layouts.
    expect_bytes(convert(im, nv_small(), l), want);
    expect_bytes(convert(im, nv_full(), l), want);
}

TEST(ImageConvert, R8) {
    const Image im = make_image(5, 3, 1, 255, 11);
    InputTensorLayout l{InputFormat::R8, Precision::Int8, {1, 1, 3, 5}, 32, 0, 96};
    std::vector<std::byte> want(96, std::byte{0});
    for (uint32_t y = 0; y < 3; ++y)
        for (uint32_t x = 0; x < 5; ++x)
            want[y * 32 + x] = std::byte(reference_int8(im.at(x, y, 0), 255));
    expect_bytes(convert(im, nv_full(), l), want);

    // nv_small's 8-byte atom allows an 8-byte line stride; nv_full's 32-byte one does not.
    InputTensorLayout small = l;
    small.line_stride = 8;
    small.size = 0;
    std::vector<std::byte> want_small(2 * 8 + 8, std::byte{0});
    for (uint32_t y = 0; y < 3; ++y)
        for (uint32_t x = 0; x < 5; ++x)
            want_small[y * 8 + x] = std::byte(reference_int8(im.at(x, y, 0), 255));
    expect_bytes(convert(im, nv_small(), small), want_small);
    EXPECT_FALSE(input_tensor_bytes(nv_full(), small).ok());
}

TEST(ImageConvert, A8B8G8R8FromColour) {
    const Image im = make_image(5, 2, 3, 255, 13);
    InputTensorLayout l{InputFormat::A8B8G8R8, Precision::Int8, {1, 4, 2, 5}, 32, 0, 64};
    std::vector<std::byte> want(64, std::byte{0});
    for (uint32_t y = 0; y < 2; ++y)
        for (uint32_t x = 0; x < 5; ++x)
            for (uint32_t c = 0; c < 3; ++c)  // image channel c at byte c; alpha stays 0
                want[y * 32 + x * 4 + c] = std::byte(reference_int8(im.at(x, y, c), 255));
    expect_bytes(convert(im, nv_full(), l), want);
}

TEST(ImageConvert, A16B16G16R16FFromColour) {
    const Image im = make_image(5, 2, 3, 255, 17);
    InputTensorLayout l{InputFormat::A16B16G16R16_F, Precision::Fp16, {1, 3, 2, 5}, 64, 0, 0};
    const ImageConversion conv{{103.94f, 116.78f, 123.68f, 0}, 2.0f};
    std::vector<std::byte> want(64 + 64, std::byte{0});
    for (uint32_t y = 0; y < 2; ++y)
        for (uint32_t x = 0; x < 5; ++x)
            for (uint32_t c = 0; c < 3; ++c)
                put16(want, y * 64 + x * 8 + c * 2,
                      reference_fp16(im.at(x, y, c), conv.mean[c], 2.0f));
    expect_bytes(convert(im, nv_full(), l, conv), want);
}

TEST(ImageConvert, SixteenBitImages) {
    Image im = make_image(3, 1, 1, 65535, 19);
    im.samples = {0, 32768, 65535};
    InputTensorLayout l{InputFormat::Feature, Precision::Int8, {1, 1, 1, 3}, 0, 0, 0};
    const auto out = convert(im, nv_full(), l);
    EXPECT_EQ(int(out[0]), 0);
    EXPECT_EQ(int(out[32]), reference_int8(32768, 65535));
    EXPECT_EQ(int(out[64]), 127);
    // fp16 takes the sample as it is: 65535 is above fp16's range.
    l.precision = Precision::Fp16;
    const auto half = convert(im, nv_full(), l);
    EXPECT_EQ(int(half[64]) | int(half[65]) << 8, 0x7c00);
    EXPECT_EQ(int(half[32]) | int(half[33]) << 8, 0x7800);  // 32768
}

TEST(ImageConvert, SamplesAboveMaxValueSaturate) {
    Image im = make_image(2, 1, 1, 15);
    im.samples = {15, 200};  // only a hand-made Image can hold 200 > 15
    InputTensorLayout l{InputFormat::Feature, Precision::Int8, {1, 1, 1, 2}, 0, 0, 0};
    const auto out = convert(im, nv_full(), l);
    EXPECT_EQ(int(out[0]), 127);
    EXPECT_EQ(int(out[32]), 127);
}

// An image with more samples than values converts through a table of the formula: every
// value, and samples above max_value, as the formula gives them.
TEST(ImageConvert, Int8TableFollowsTheFormula) {
    for (uint32_t max_value : {15u, 255u, 1000u}) {
        Image im = make_image(40, 30, 1, max_value, 23);
        for (uint32_t v = 0; v <= max_value && v < im.samples.size(); ++v)
            im.samples[v] = uint16_t(v);
        im.samples.back() = uint16_t(max_value + 1);  // hand-made: saturates
        InputTensorLayout l{InputFormat::Feature, Precision::Int8, {1, 1, 30, 40}, 0, 0, 0};
        const auto out = convert(im, nv_full(), l);
        for (uint32_t y = 0; y < 30; ++y)
            for (uint32_t x = 0; x < 40; ++x) {
                const uint32_t v = im.at(x, y, 0);
                const int want = std::min<int>(reference_int8(v, max_value), 127);
                ASSERT_EQ(int(out[(size_t(y) * 40 + x) * 32]), want)
                    << "max_value " << max_value << ", sample " << v;
            }
    }
}

TEST(ImageConvert, TiesAwayInTheOriginalsFormula) {
    Image im = make_image(1, 1, 1, 255);
    im.samples = {255};
    InputTensorLayout l{InputFormat::Feature, Precision::Fp16, {1, 1, 1, 1}, 0, 0, 0};
    const auto out = convert(im, nv_full(), l, {{-1794.0f, 0, 0, 0}, 1.0f});  // 2049
    EXPECT_EQ(int(out[0]) | int(out[1]) << 8, 0x6801);
}

TEST(ImageConvert, BufferLargerThanTheTensorIsClearedUpToItsSize) {
    const Image im = make_image(1, 1, 1, 255);
    InputTensorLayout l{InputFormat::Feature, Precision::Int8, {1, 1, 1, 1}, 0, 0, 64};
    std::vector<std::byte> out(80, std::byte{0xaa});
    ASSERT_TRUE(convert_image(im, nv_full(), l, {}, out).ok());
    for (size_t i = 1; i < 64; ++i) EXPECT_EQ(int(out[i]), 0) << i;
    for (size_t i = 64; i < 80; ++i) EXPECT_EQ(int(out[i]), 0xaa) << i;
}

TEST(ImageConvert, SharedDigitAsLeNetInput) {
    NVDLA_REQUIRE_SHARED();
    const auto path = test::shared_dir() / "vectors" / "images" / "eight.pgm";
    auto im = read_image(path.string());
    ASSERT_TRUE(im.ok()) << im.message();
    ASSERT_EQ(im->width, 28u);
    ASSERT_EQ(im->height, 28u);
    // NN_L0_0's input: 1 x 1 x 28 x 28 fp16 feature data.
    InputTensorLayout l{InputFormat::Feature, Precision::Fp16, {1, 1, 28, 28}, 0, 0, 0};
    const auto out = convert(*im, nv_full(), l);
    for (uint32_t y = 0; y < 28; ++y)
        for (uint32_t x = 0; x < 28; ++x) {
            const size_t at = y * 28 * 32 + x * 32;
            ASSERT_EQ(int(out[at]) | int(out[at + 1]) << 8, reference_fp16(im->at(x, y, 0), 0, 1))
                << x << "," << y;
        }
}

// ---- Errors -------------------------------------------------------------------------------

std::string convert_error(const Image& im, const InputTensorLayout& l,
                          const ImageConversion& conv = {}, size_t bytes = 4096,
                          const HwConfig& cfg = nv_full()) {
    std::vector<std::byte> out(bytes, std::byte{0xaa});
    Status s = convert_image(im, cfg, l, conv, out);
    EXPECT_FALSE(s.ok());
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] != std::byte{0xaa}) {
            ADD_FAILURE() << "byte " << i << " written by a failed conversion";
            break;
        }
    }
    return s.message();
}

TEST(ImageConvert, Errors) {
    const Image grey = make_image(3, 2, 1, 255);
    const Image colour = make_image(3, 2, 3, 255);
    const std::string g = "image 3 x 2 grey, 8-bit PGM into ";
    const std::string c = "image 3 x 2 BGR, 8-bit PPM into ";
    using F = InputFormat;
    using P = Precision;

    EXPECT_EQ(convert_error(grey, {F::Feature, P::Fp16, {1, 1, 2, 4}, 0, 0, 0}),
              g + "FEATURE fp16 input: the image is 3 x 2 pixels and the input tensor 4 x 2 "
                  "(images are not resized: resize it first)");
    EXPECT_EQ(convert_error(grey, {F::Feature, P::Fp16, {1, 1, 3, 3}, 0, 0, 0}),
              g + "FEATURE fp16 input: the image is 3 x 2 pixels and the input tensor 3 x 3 "
                  "(images are not resized: resize it first)");
    EXPECT_EQ(convert_error(colour, {F::Feature, P::Int8, {1, 1, 2, 3}, 0, 0, 0}),
              c + "FEATURE int8 input: the image has 3 channels (BGR) and the input tensor 1");
    EXPECT_EQ(convert_error(colour, {F::R8, P::Int8, {1, 1, 2, 3}, 32, 0, 0}),
              c + "R8 int8 input: the image has 3 channels (BGR) and the input tensor 1");
    EXPECT_EQ(convert_error(grey, {F::R8, P::Fp16, {1, 1, 2, 3}, 32, 0, 0}),
              g + "R8 fp16 input: the R8 format cannot hold fp16 data (R8, A8B8G8R8 and "
                  "FEATURE_X8 take int8, A16B16G16R16_F fp16, FEATURE either)");
    EXPECT_NE(convert_error(grey, {F::A8B8G8R8, P::Fp16, {1, 4, 2, 3}, 32, 0, 0})
                  .find("the A8B8G8R8 format cannot hold fp16 data"),
              std::string::npos);
    EXPECT_NE(convert_error(grey, {F::A16B16G16R16_F, P::Int8, {1, 4, 2, 3}, 32, 0, 0})
                  .find("the A16B16G16R16_F format cannot hold int8 data"),
              std::string::npos);
    EXPECT_NE(convert_error(grey, {F::FeatureX8, P::Fp16, {1, 1, 2, 3}, 0, 0, 0})
                  .find("the FEATURE_X8 format cannot hold fp16 data"),
              std::string::npos);
    EXPECT_NE(convert_error(grey, {F::Feature, P::Int16, {1, 1, 2, 3}, 0, 0, 0})
                  .find("the FEATURE format cannot hold int16 data"),
              std::string::npos);
    EXPECT_EQ(convert_error(grey, {F::Feature, P::Int8, {2, 1, 2, 3}, 0, 0, 0}),
              g + "FEATURE int8 input: the input tensor has 2 batches; an image fills exactly "
                  "one");
    EXPECT_EQ(convert_error(grey, {F::Feature, P::Int8, {1, 0, 2, 3}, 0, 0, 0}),
              g + "FEATURE int8 input: the input tensor is 3 x 2 x 0 (an extent is 0)");
    EXPECT_EQ(convert_error(grey, {F::A8B8G8R8, P::Int8, {1, 5, 2, 3}, 32, 0, 0}),
              g + "A8B8G8R8 int8 input: the A8B8G8R8 format holds 4 channels per pixel; the "
                  "tensor has 5");
    EXPECT_EQ(convert_error(grey, {F::R8, P::Int8, {1, 2, 2, 3}, 32, 0, 0}),
              g + "R8 int8 input: the R8 format holds 1 channel per pixel; the tensor has 2");
    EXPECT_EQ(convert_error(grey, {F::Feature, P::Int8, {1, 1, 2, 3}, 0, 0, 100}),
              g + "FEATURE int8 input: the input tensor's buffer of 100 bytes is smaller than "
                  "the 192 bytes its layout covers");
    EXPECT_EQ(convert_error(grey, {F::Feature, P::Int8, {1, 1, 2, 3}, 0, 0, 0}, {}, 191),
              g + "FEATURE int8 input: the destination of 191 bytes is smaller than the 192 "
                  "bytes of the tensor");
    // Strides the feature-cube rules refuse (too small, misaligned).
    EXPECT_EQ(convert_error(grey, {F::Feature, P::Int8, {1, 1, 2, 3}, 64, 0, 0})
                  .rfind(g + "FEATURE int8 input: ", 0),
              0u);
    EXPECT_EQ(convert_error(grey, {F::Feature, P::Int8, {1, 1, 2, 3}, 100, 0, 0})
                  .rfind(g + "FEATURE int8 input: ", 0),
              0u);
    EXPECT_EQ(convert_error(grey, {F::R8, P::Int8, {1, 1, 2, 3}, 2, 0, 0})
                  .rfind(g + "R8 int8 input: ", 0),
              0u);

    const InputTensorLayout fp16{F::Feature, P::Fp16, {1, 1, 2, 3}, 0, 0, 0};
    EXPECT_EQ(convert_error(grey, fp16, {{}, 0.0f}),
              g + "FEATURE fp16 input: normalize must be a positive number, not 0");
    EXPECT_EQ(convert_error(grey, fp16, {{}, -2.0f}),
              g + "FEATURE fp16 input: normalize must be a positive number, not -2");
    EXPECT_NE(convert_error(grey, fp16, {{}, NAN}).find("normalize must be a positive number"),
              std::string::npos);
    EXPECT_EQ(convert_error(grey, fp16, {{0, INFINITY, 0, 0}, 1.0f}),
              g + "FEATURE fp16 input: mean inf is not a finite number");

    Image five = make_image(3, 2, 5, 255);
    EXPECT_EQ(convert_error(five, {F::Feature, P::Fp16, {1, 8, 2, 3}, 0, 0, 0}),
              "image 3 x 2 5-channel, 8-bit PPM into FEATURE fp16 input: the image is empty or "
              "inconsistent");
    Image broken = grey;
    broken.samples.pop_back();
    EXPECT_EQ(convert_error(broken, fp16),
              g + "FEATURE fp16 input: the image is empty or inconsistent");
}

TEST(ImageConvert, PixelFormatNumbers) {
    EXPECT_EQ(*input_format_from_pixel_format(0), InputFormat::R8);
    EXPECT_EQ(*input_format_from_pixel_format(8), InputFormat::A16B16G16R16_F);
    EXPECT_EQ(*input_format_from_pixel_format(12), InputFormat::A8B8G8R8);
    EXPECT_EQ(*input_format_from_pixel_format(36), InputFormat::Feature);
    EXPECT_EQ(*input_format_from_pixel_format(37), InputFormat::FeatureX8);
    EXPECT_EQ(input_format_from_pixel_format(5).message(),
              "input pixel format T_R16_F cannot take an image: the supported formats are R8, "
              "A8B8G8R8, A16B16G16R16_F, FEATURE and FEATURE_X8");
    EXPECT_EQ(input_format_from_pixel_format(200).message(),
              "input pixel format number 200 cannot take an image: the supported formats are R8, "
              "A8B8G8R8, A16B16G16R16_F, FEATURE and FEATURE_X8");
}

}  // namespace
}  // namespace nvdla::runtime
