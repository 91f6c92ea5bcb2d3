// Decoding: every PGM/PPM variant (P2, P3, P5, P6; 8 and 16 bits), PNG through libpng and
// JPEG through libjpeg (files written by the test), and every malformed-file error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "image_test_files.hpp"
#include "runtime/image.hpp"
#include "test_support.hpp"

namespace nvdla::runtime {
namespace {

using test::bytes_of;
using test::pnm;

Image decode_ok(const std::vector<std::byte>& file, const ImageDecodeOptions& options = {}) {
    Result<Image> r = decode_image(file, options);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? std::move(r).value() : Image{};
}

std::string decode_error(const std::vector<std::byte>& file,
                         const ImageDecodeOptions& options = {}) {
    Result<Image> r = decode_image(file, options);
    EXPECT_FALSE(r.ok());
    return r.message();
}

void expect_image(const Image& im, uint32_t w, uint32_t h, uint32_t c, uint32_t max,
                  const std::vector<uint16_t>& samples) {
    EXPECT_EQ(im.width, w);
    EXPECT_EQ(im.height, h);
    EXPECT_EQ(im.channels, c);
    EXPECT_EQ(im.max_value, max);
    EXPECT_EQ(im.samples, samples);
}

// ---- PGM / PPM ----------------------------------------------------------------------------

TEST(ImageDecode, PgmBinary8) {
    // The original runtime's PGM: P5, maxval 255, with a comment line.
    const Image im = decode_ok(pnm("P5\n# a digit\n3 2\n255\n", {0, 1, 2, 127, 128, 255}));
    expect_image(im, 3, 2, 1, 255, {0, 1, 2, 127, 128, 255});
    EXPECT_EQ(im.type, ImageFileType::Pnm);
    EXPECT_EQ(im.describe(), "3 x 2 grey, 8-bit PGM");
}

TEST(ImageDecode, PgmBinary16IsBigEndian) {
    const Image im = decode_ok(pnm("P5 2 1 65535\n", {0x12, 0x34, 0xff, 0xfe}));
    expect_image(im, 2, 1, 1, 65535, {0x1234, 0xfffe});
    EXPECT_EQ(im.describe(), "2 x 1 grey, 16-bit PGM");
}

TEST(ImageDecode, PgmBinarySmallMaxval) {
    const Image im = decode_ok(pnm("P5\t2\r\n2 15 ", {0, 15, 7, 8}));
    expect_image(im, 2, 2, 1, 15, {0, 15, 7, 8});
    EXPECT_EQ(im.describe(), "2 x 2 grey, 4-bit PGM");
}

TEST(ImageDecode, PgmAscii) {
    const Image im = decode_ok(bytes_of("P2\n# c1\n3 # c2\n2\n# c3\n1000\n0 1 2\n 999  1000\n5\n"));
    expect_image(im, 3, 2, 1, 1000, {0, 1, 2, 999, 1000, 5});
}

TEST(ImageDecode, PpmBinaryIsBgrByDefault) {
    const std::vector<uint8_t> rgb = {10, 20, 30, 40, 50, 60};
    const Image bgr = decode_ok(pnm("P6 2 1 255\n", rgb));
    // PPM stores R, G, B; the image holds B, G, R (the original's colour order).
    expect_image(bgr, 2, 1, 3, 255, {30, 20, 10, 60, 50, 40});
    EXPECT_EQ(bgr.describe(), "2 x 1 BGR, 8-bit PPM");
    ImageDecodeOptions rgb_order;
    rgb_order.order = ColorOrder::Rgb;
    const Image r = decode_ok(pnm("P6 2 1 255\n", rgb), rgb_order);
    expect_image(r, 2, 1, 3, 255, {10, 20, 30, 40, 50, 60});
    EXPECT_EQ(r.describe(), "2 x 1 RGB, 8-bit PPM");
}

TEST(ImageDecode, PpmBinary16) {
    const Image im = decode_ok(pnm("P6 1 1 4095\n", {0x0f, 0xff, 0x00, 0x01, 0x08, 0x00}));
    expect_image(im, 1, 1, 3, 4095, {0x800, 0x001, 0xfff});
}

TEST(ImageDecode, PpmAscii) {
    const Image im = decode_ok(bytes_of("P3 2 1 255 1 2 3 4 5 6"));
    expect_image(im, 2, 1, 3, 255, {3, 2, 1, 6, 5, 4});
}

TEST(ImageDecode, BytesAfterTheRasterAreIgnored) {
    const Image im = decode_ok(pnm("P5 1 1 255\n", {9, 'P', '5'}));
    expect_image(im, 1, 1, 1, 255, {9});
}

TEST(ImageDecode, PnmErrors) {
    struct Case {
        std::vector<std::byte> file;
        std::string message;
    };
    const std::vector<Case> cases = {
        {bytes_of("P1 1 1 1"),
         "PBM (P1, 1-bit) images are not supported: use PGM, PPM, PNG or JPEG"},
        {bytes_of("P4 1 1 x"),
         "PBM (P4, 1-bit) images are not supported: use PGM, PPM, PNG or JPEG"},
        {bytes_of("P7\nWIDTH 1\n"), "PAM (P7) images are not supported: use PGM, PPM, PNG or JPEG"},
        {bytes_of("P8 1 1 255 x"), "not an image: 'P' followed by byte 0x38"},
        {bytes_of("P5x 1 1 255 x"),
         "PGM (P5): header: the magic number is not followed by whitespace"},
        {bytes_of("P5"), "PGM (P5): header: the file ends before the width"},
        {bytes_of("P5 3"), "PGM (P5): header: the file ends before the height"},
        {bytes_of("P5 3 3"), "PGM (P5): header: the file ends before the maxval"},
        {bytes_of("P5 -3 3 255\n"),
         "PGM (P5): header: the width is not a decimal number (found byte 0x2d at offset 3)"},
        {bytes_of("P5 3x 3 255\n"),
         "PGM (P5): header: the width is followed by byte 0x78 at offset 4 instead of whitespace"},
        {bytes_of("P5 0 3 255\n"), "PGM (P5): the image is 0 x 3 pixels (an extent is 0)"},
        {bytes_of("P6 3 0 255\n"), "PPM (P6): the image is 3 x 0 pixels (an extent is 0)"},
        {bytes_of("P5 8193 1 255\n"),
         "PGM (P5): the image is 8193 x 1 pixels; the limit is 8192 x 8192"},
        {bytes_of("P5 99999999999 1 255\n"),
         "PGM (P5): header: the width is larger than 4294967295"},
        {bytes_of("P5 1 1 0\n"),
         "PGM (P5): maxval 0 is not supported (1 to 255 for 8-bit samples, 256 to 65535 for "
         "16-bit)"},
        {bytes_of("P5 1 1 65536\n"),
         "PGM (P5): maxval 65536 is not supported (1 to 255 for 8-bit samples, 256 to 65535 for "
         "16-bit)"},
        {bytes_of("P5 1 1 255"), "PGM (P5): the file ends after the header (no raster)"},
        {bytes_of("P5 1 1 255#x"),
         "PGM (P5): header: maxval is not followed by a single whitespace byte"},
        {pnm("P5 2 2 255\n", {1, 2, 3}),
         "PGM (P5): truncated: the raster of 2 x 2 x 1 samples needs 4 bytes, the file has 3 "
         "after the header"},
        {pnm("P6 2 1 65535\n", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
         "PPM (P6): truncated: the raster of 2 x 1 x 3 samples needs 12 bytes, the file has 11 "
         "after the header"},
        {pnm("P5 2 1 100\n", {100, 101}),
         "PGM (P5): sample 1 (pixel 1, 0) is 101, above maxval 100"},
        {pnm("P5 1 1 300\n", {0x01, 0x2d}),
         "PGM (P5): sample 0 (pixel 0, 0) is 301, above maxval 300"},
        {bytes_of("P2 2 2 255\n1 2 3"),
         "PGM (P2): truncated: 4 samples need at least 7 bytes, the file has 6 after the header"},
        {bytes_of("P2 2 2 255\n1 2 3        "),
         "PGM (P2): sample 3 of 4 (pixel 1, 1): the file ends before the sample"},
        {bytes_of("P2 2 1 255\n1 256"), "PGM (P2): sample 1 (pixel 1, 0) is 256, above maxval 255"},
        {bytes_of("P3 1 1 255\n1 2 z"),
         "PPM (P3): sample 2 of 3 (pixel 0, 0): the sample is not a decimal number (found byte "
         "0x7a at offset 15)"},
    };
    for (const Case& c : cases) EXPECT_EQ(decode_error(c.file), c.message);
}

TEST(ImageDecode, SizeLimitIsAnOption) {
    ImageDecodeOptions small;
    small.max_extent = 4;
    EXPECT_EQ(decode_error(pnm("P5 5 1 255\n", {1, 2, 3, 4, 5}), small),
              "PGM (P5): the image is 5 x 1 pixels; the limit is 4 x 4");
    small.max_extent = 0;
    EXPECT_EQ(decode_error(pnm("P5 1 1 255\n", {1}), small),
              "image: the size limit (max_extent) is 0");
}

TEST(ImageDecode, UnknownFiles) {
    EXPECT_EQ(decode_error({}), "the file is empty");
    EXPECT_EQ(decode_error(bytes_of("GIF89a")),
              "not a PGM/PPM, PNG or JPEG file (it starts with 0x47 0x49 0x46 0x38)");
    EXPECT_EQ(decode_error(bytes_of("P")), "not a PGM/PPM, PNG or JPEG file (it starts with 0x50)");
    EXPECT_EQ(decode_error(bytes_of("\x89PNG\r\n")),
              "PNG: bad signature (the file is truncated or was transferred as text)");
    EXPECT_EQ(decode_error(bytes_of("\x89PNG\n\n\x1a\n")),
              "PNG: bad signature (the file is truncated or was transferred as text)");
}

// ---- PNG ----------------------------------------------------------------------------------

TEST(ImageDecode, PngGrey8And16) {
    test::PngSpec g8;
    g8.width = 3;
    g8.rows = {0, 100, 255};
    expect_image(decode_ok(test::encode_png(g8)), 3, 1, 1, 255, {0, 100, 255});

    test::PngSpec g16;
    g16.width = 2;
    g16.height = 2;
    g16.bit_depth = 16;
    g16.rows = {0x00, 0x01, 0xab, 0xcd, 0xff, 0xff, 0x10, 0x00};
    const Image im = decode_ok(test::encode_png(g16));
    expect_image(im, 2, 2, 1, 65535, {0x0001, 0xabcd, 0xffff, 0x1000});
    EXPECT_EQ(im.describe(), "2 x 2 grey, 16-bit PNG");
}

TEST(ImageDecode, PngLowBitDepthGreyIsScaledTo8Bits) {
    test::PngSpec g1;
    g1.width = 8;
    g1.bit_depth = 1;
    g1.rows = {0b10110000};
    expect_image(decode_ok(test::encode_png(g1)), 8, 1, 1, 255, {255, 0, 255, 255, 0, 0, 0, 0});
    test::PngSpec g4;
    g4.width = 2;
    g4.bit_depth = 4;
    g4.rows = {0x3f};
    expect_image(decode_ok(test::encode_png(g4)), 2, 1, 1, 255, {0x33, 0xff});
}

TEST(ImageDecode, PngColour8And16) {
    test::PngSpec rgb;
    rgb.width = 2;
    rgb.color_type = PNG_COLOR_TYPE_RGB;
    rgb.rows = {1, 2, 3, 4, 5, 6};
    expect_image(decode_ok(test::encode_png(rgb)), 2, 1, 3, 255, {3, 2, 1, 6, 5, 4});
    ImageDecodeOptions rgb_order;
    rgb_order.order = ColorOrder::Rgb;
    expect_image(decode_ok(test::encode_png(rgb), rgb_order), 2, 1, 3, 255, {1, 2, 3, 4, 5, 6});

    test::PngSpec rgb16;
    rgb16.color_type = PNG_COLOR_TYPE_RGB;
    rgb16.bit_depth = 16;
    rgb16.rows = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06};
    expect_image(decode_ok(test::encode_png(rgb16)), 1, 1, 3, 65535, {0x0506, 0x0304, 0x0102});
}

TEST(ImageDecode, PngAlphaIsStrippedUnlessKept) {
    test::PngSpec rgba;
    rgba.width = 2;
    rgba.color_type = PNG_COLOR_TYPE_RGB_ALPHA;
    rgba.rows = {1, 2, 3, 200, 4, 5, 6, 100};
    expect_image(decode_ok(test::encode_png(rgba)), 2, 1, 3, 255, {3, 2, 1, 6, 5, 4});
    ImageDecodeOptions keep;
    keep.keep_alpha = true;
    const Image im = decode_ok(test::encode_png(rgba), keep);
    expect_image(im, 2, 1, 4, 255, {3, 2, 1, 200, 6, 5, 4, 100});
    EXPECT_EQ(im.describe(), "2 x 1 BGRA, 8-bit PNG");

    test::PngSpec ga;
    ga.width = 2;
    ga.color_type = PNG_COLOR_TYPE_GRAY_ALPHA;
    ga.rows = {10, 20, 30, 40};
    expect_image(decode_ok(test::encode_png(ga)), 2, 1, 1, 255, {10, 30});
    expect_image(decode_ok(test::encode_png(ga), keep), 2, 1, 2, 255, {10, 20, 30, 40});
}

TEST(ImageDecode, PngPaletteAndTransparency) {
    test::PngSpec pal;
    pal.width = 3;
    pal.color_type = PNG_COLOR_TYPE_PALETTE;
    pal.palette = {{255, 0, 0}, {0, 255, 0}, {1, 2, 3}};
    pal.rows = {2, 0, 1};
    expect_image(decode_ok(test::encode_png(pal)), 3, 1, 3, 255, {3, 2, 1, 0, 0, 255, 0, 255, 0});
    pal.trns = {0, 128};  // entries beyond the list are opaque
    ImageDecodeOptions keep;
    keep.keep_alpha = true;
    expect_image(decode_ok(test::encode_png(pal), keep), 3, 1, 4, 255,
                 {3, 2, 1, 255, 0, 0, 255, 0, 0, 255, 0, 128});
    expect_image(decode_ok(test::encode_png(pal)), 3, 1, 3, 255, {3, 2, 1, 0, 0, 255, 0, 255, 0});

    test::PngSpec grey;
    grey.width = 2;
    grey.rows = {7, 8};
    grey.trns = {7};
    expect_image(decode_ok(test::encode_png(grey), keep), 2, 1, 2, 255, {7, 0, 8, 255});
}

TEST(ImageDecode, PngInterlaced) {
    test::PngSpec spec;
    spec.width = 9;
    spec.height = 7;
    spec.color_type = PNG_COLOR_TYPE_RGB;
    spec.interlaced = true;
    std::vector<uint16_t> want;
    for (uint32_t i = 0; i < spec.width * spec.height; ++i) {
        const uint8_t r = uint8_t(i), g = uint8_t(i * 3), b = uint8_t(255 - i);
        spec.rows.insert(spec.rows.end(), {r, g, b});
        want.insert(want.end(), {b, g, r});
    }
    expect_image(decode_ok(test::encode_png(spec)), 9, 7, 3, 255, want);
}

std::vector<std::byte> small_png() {
    test::PngSpec spec;
    spec.width = 4;
    spec.height = 4;
    for (int i = 0; i < 16; ++i) spec.rows.push_back(uint8_t(i * 16));
    return test::encode_png(spec);
}

TEST(ImageDecode, PngTruncatedAnywhere) {
    const std::vector<std::byte> file = small_png();
    for (size_t n = 8; n < file.size(); ++n) {
        const std::vector<std::byte> cut(file.begin(), file.begin() + n);
        const std::string m = decode_error(cut);
        EXPECT_EQ(m.rfind("PNG: ", 0), 0u) << n << ": " << m;
        if (n >= 33) {
            EXPECT_NE(m.find("truncated"), std::string::npos) << n << ": " << m;
        }
    }
    EXPECT_EQ(decode_error({file.begin(), file.begin() + 20}),
              "PNG: truncated: 20 bytes, no IHDR chunk");
}

TEST(ImageDecode, PngCorruption) {
    const std::vector<std::byte> good = small_png();
    // IHDR's CRC.
    std::vector<std::byte> crc = good;
    crc[29] ^= std::byte{1};
    EXPECT_EQ(decode_error(crc), "PNG: IHDR: CRC error");
    // The first chunk is not IHDR.
    std::vector<std::byte> order = good;
    order[12] = std::byte{'X'};
    EXPECT_EQ(decode_error(order), "PNG: the first chunk is not IHDR");
    // A zero width in IHDR (checked before libpng sees it).
    std::vector<std::byte> zero = good;
    for (int i = 16; i < 20; ++i) zero[i] = std::byte{0};
    EXPECT_EQ(decode_error(zero), "PNG: the image is 0 x 4 pixels (an extent is 0)");
    // A huge height.
    std::vector<std::byte> huge = good;
    huge[20] = std::byte{0x7f};
    EXPECT_EQ(decode_error(huge),
              "PNG: the image is 4 x 2130706436 pixels; the limit is 8192 x 8192");
    // Compressed data corrupted (its CRC fixed up would need zlib: flip inside IDAT and the
    // CRC check reports it first).
    std::vector<std::byte> idat = good;
    idat[good.size() - 20] ^= std::byte{0xff};
    const std::string m = decode_error(idat);
    EXPECT_EQ(m.rfind("PNG: ", 0), 0u) << m;
}

TEST(ImageDecode, PngBadBitDepthInHeader) {
    std::vector<std::byte> file = small_png();
    file[24] = std::byte{3};  // bit depth 3 is not a PNG depth; libpng says so (CRC first)
    const std::string m = decode_error(file);
    EXPECT_EQ(m.rfind("PNG: ", 0), 0u) << m;
}

// ---- JPEG ---------------------------------------------------------------------------------

std::vector<uint8_t> gradient(uint32_t w, uint32_t h, int components) {
    std::vector<uint8_t> p;
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x)
            for (int c = 0; c < components; ++c)
                p.push_back(uint8_t((x * 16 + y * 8 + c * 60) & 0xff));
    return p;
}

void expect_matches_reference(const std::vector<std::byte>& file, ColorOrder order) {
    uint32_t channels = 0;
    const std::vector<uint8_t> want =
        test::reference_jpeg_decode(file, order == ColorOrder::Bgr, &channels);
    ImageDecodeOptions options;
    options.order = order;
    const Image im = decode_ok(file, options);
    EXPECT_EQ(im.channels, channels);
    EXPECT_EQ(im.max_value, 255u);
    EXPECT_EQ(im.type, ImageFileType::Jpeg);
    ASSERT_EQ(im.samples.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(im.samples[i], want[i]) << i;
}

TEST(ImageDecode, JpegGrey) {
    test::JpegSpec spec;
    spec.width = 16;
    spec.height = 8;
    spec.pixels = gradient(16, 8, 1);
    const auto file = test::encode_jpeg(spec);
    expect_matches_reference(file, ColorOrder::Bgr);
    const Image im = decode_ok(file);
    EXPECT_EQ(im.describe(), "16 x 8 grey, 8-bit JPEG");
    for (size_t i = 0; i < im.samples.size(); ++i)
        EXPECT_NEAR(im.samples[i], spec.pixels[i], 3) << i;  // quality 100
}

TEST(ImageDecode, JpegColourIsBgrLikeTheOriginal) {
    test::JpegSpec spec;
    spec.width = 16;
    spec.height = 16;
    spec.components = 3;
    for (uint32_t y = 0; y < 16; ++y)
        for (uint32_t x = 0; x < 16; ++x)
            spec.pixels.insert(spec.pixels.end(),
                               {uint8_t(x < 8 ? 250 : 0), 0, uint8_t(x < 8 ? 0 : 250)});
    const auto file = test::encode_jpeg(spec);
    expect_matches_reference(file, ColorOrder::Bgr);
    expect_matches_reference(file, ColorOrder::Rgb);
    const Image im = decode_ok(file);
    EXPECT_EQ(im.describe(), "16 x 16 BGR, 8-bit JPEG");
    EXPECT_GT(im.at(2, 8, 2), 200);  // red on the left is channel 2
    EXPECT_LT(im.at(2, 8, 0), 50);
    EXPECT_GT(im.at(13, 8, 0), 200);  // blue on the right is channel 0
}

TEST(ImageDecode, JpegProgressive) {
    test::JpegSpec spec;
    spec.width = 24;
    spec.height = 17;
    spec.components = 3;
    spec.quality = 80;
    spec.progressive = true;
    spec.pixels = gradient(24, 17, 3);
    expect_matches_reference(test::encode_jpeg(spec), ColorOrder::Bgr);
}

TEST(ImageDecode, JpegErrors) {
    test::JpegSpec spec;
    spec.width = 16;
    spec.height = 16;
    spec.components = 3;
    spec.pixels = gradient(16, 16, 3);
    const auto good = test::encode_jpeg(spec);

    // Truncated in the entropy-coded data: libjpeg pads with grey and warns; refused.
    const std::vector<std::byte> cut(good.begin(), good.begin() + good.size() - 40);
    EXPECT_EQ(decode_error(cut), "JPEG: corrupt data: Premature end of JPEG file");
    // Truncated in the header.
    EXPECT_EQ(decode_error({good.begin(), good.begin() + 30}).rfind("JPEG: ", 0), 0u);
    EXPECT_EQ(decode_error({good.begin(), good.begin() + 2}).rfind("JPEG: ", 0), 0u);
    // Garbage after SOI.
    std::vector<std::byte> junk = {std::byte{0xff}, std::byte{0xd8}};
    for (int i = 0; i < 64; ++i) junk.push_back(std::byte(static_cast<uint8_t>(i * 37)));
    EXPECT_EQ(decode_error(junk).rfind("JPEG: ", 0), 0u);

    // CMYK.
    test::JpegSpec cmyk = spec;
    cmyk.components = 4;
    cmyk.pixels = gradient(16, 16, 4);
    const std::string m = decode_error(test::encode_jpeg(cmyk));
    EXPECT_NE(m.find("is not supported (greyscale, YCbCr and RGB are)"), std::string::npos) << m;

    // Too large, and the size limit as an option.
    test::JpegSpec wide;
    wide.width = 8193;
    wide.height = 1;
    wide.quality = 10;
    EXPECT_EQ(decode_error(test::encode_jpeg(wide)),
              "JPEG: the image is 8193 x 1 pixels; the limit is 8192 x 8192");
    ImageDecodeOptions small;
    small.max_extent = 15;
    EXPECT_EQ(decode_error(good, small), "JPEG: the image is 16 x 16 pixels; the limit is 15 x 15");
}

TEST(ImageDecode, JpegCorruptEntropyDataIsRefused) {
    test::JpegSpec spec;
    spec.width = 32;
    spec.height = 32;
    spec.components = 3;
    spec.quality = 90;
    spec.pixels = gradient(32, 32, 3);
    const auto good = test::encode_jpeg(spec);
    // Overwrite the middle of the scan with a marker-like pattern; every result must be an
    // error sentence or a valid image, never a crash (sanitizer builds check the rest).
    for (size_t at = good.size() / 2; at < good.size() - 4; at += 7) {
        std::vector<std::byte> bad = good;
        bad[at] = std::byte{0xff};
        bad[at + 1] = std::byte(static_cast<uint8_t>(0xd0 + at % 8));
        Result<Image> r = decode_image(bad);
        if (!r.ok()) {
            EXPECT_EQ(r.message().rfind("JPEG: ", 0), 0u) << r.message();
        }
    }
}

// ---- Files --------------------------------------------------------------------------------

TEST(ImageDecode, ReadImageNamesThePath) {
    auto missing = read_image("/nonexistent/digit.pgm");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.message(),
              "image /nonexistent/digit.pgm: cannot open: No such file or directory");

    const std::filesystem::path dir = std::filesystem::temp_directory_path();
    const std::string path = (dir / ("nvdla_image_test_" + std::to_string(::getpid()))).string();
    {
        std::ofstream out(path, std::ios::binary);
        out << "P5 2 2 255\n" << std::string("\x01\x02\x03", 3);
    }
    auto bad = read_image(path);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.message(), "image " + path +
                                 ": PGM (P5): truncated: the raster of 2 x 2 x 1 samples needs 4 "
                                 "bytes, the file has 3 after the header");
    {
        std::ofstream out(path, std::ios::binary);
        out << "P5 2 2 255\n" << std::string("\x01\x02\x03\x04", 4);
    }
    auto good = read_image(path);
    ASSERT_TRUE(good.ok()) << good.message();
    EXPECT_EQ(good->samples, (std::vector<uint16_t>{1, 2, 3, 4}));
    std::filesystem::remove(path);

    auto directory = read_image(dir.string());
    ASSERT_FALSE(directory.ok());
    EXPECT_EQ(directory.message().rfind("image " + dir.string() + ": ", 0), 0u);
}

TEST(ImageDecode, SharedDigits) {
    NVDLA_REQUIRE_SHARED();
    const auto dir = test::shared_dir() / "vectors" / "images";
    size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".pgm") continue;
        ++n;
        auto im = read_image(entry.path().string());
        ASSERT_TRUE(im.ok()) << im.message();
        EXPECT_EQ(im->channels, 1u);
        EXPECT_EQ(im->max_value, 255u);
        // The raster is the file's last width * height bytes.
        std::ifstream in(entry.path(), std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), {});
        const size_t count = size_t(im->width) * im->height;
        ASSERT_GE(bytes.size(), count);
        for (size_t i = 0; i < count; ++i)
            ASSERT_EQ(im->samples[i], uint8_t(bytes[bytes.size() - count + i])) << i;
    }
    EXPECT_GT(n, 0u);
}

}  // namespace
}  // namespace nvdla::runtime
