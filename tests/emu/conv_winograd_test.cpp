// Winograd convolution (nv_full): CDMA pads and channel-extends the input, CSC transforms 4x4
// tiles (PRA, B^T d B), CMAC multiplies them with the stored transformed kernels and applies
// A^T . A. With kernels stored as 4 G g G^T (the formats library's winograd_scale 4) the integer
// result is exactly 4 times the direct convolution, which the test computes plainly.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "conv_test_rig.hpp"
#include "emu/isa.hpp"
#include "nvdla/formats/weights.hpp"
#include "nvdla/precision/compare.hpp"
#include "nvdla/precision/fp16.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::emu::conv_test {
namespace {

struct WinogradCase {
    Precision precision = Precision::Int16;
    uint32_t width = 8, height = 8, channels = 16, kernels = 8, stride = 1, ksize = 3;
    uint32_t pad_left = 1, pad_top = 1, pad_right = 3, pad_bottom = 3;
    uint32_t out = 8;  // output width and height
    float scale = 4.0f;
    std::vector<float> input;      // [h][w][c]
    std::vector<float> weights;    // [k][c][r][s], ksize x ksize
    std::vector<uint8_t> surface;  // the packed transformed kernels

    uint32_t bpe() const { return bytes_per_element(precision); }
    uint16_t bits(float v) const {
        if (precision == Precision::Fp16) return fp16::from_float(v);
        return static_cast<uint16_t>(static_cast<int16_t>(v));
    }
    // The direct strided convolution over the zero-padded input, in double.
    double direct(uint32_t k, uint32_t y, uint32_t x) const {
        double sum = 0;
        for (uint32_t r = 0; r < ksize; ++r)
            for (uint32_t s = 0; s < ksize; ++s) {
                const int iy = int(y * stride + r) - int(pad_top);
                const int ix = int(x * stride + s) - int(pad_left);
                if (iy < 0 || ix < 0 || iy >= int(height) || ix >= int(width)) continue;
                for (uint32_t c = 0; c < channels; ++c) {
                    const double d = input[(size_t(iy) * width + ix) * channels + c];
                    sum += d * weights[((size_t(k) * channels + c) * ksize + r) * ksize + s];
                }
            }
        return sum;
    }

    AccumulatorCube run(Rig& rig) {
        const HwConfig& cfg = rig.cfg();
        const CubeLayout layout{cfg.atom_bytes, bpe(), width, height, channels};
        uint8_t* data = rig.region(kDataBase, layout.batch());
        for (uint32_t h = 0; h < height; ++h)
            for (uint32_t w = 0; w < width; ++w)
                for (uint32_t c = 0; c < channels; ++c) {
                    const uint16_t v = bits(input[(size_t(h) * width + w) * channels + c]);
                    uint8_t* p = data + layout.offset(0, c, h, w);
                    if (bpe() == 1)
                        *p = static_cast<uint8_t>(v);
                    else
                        put16(p, v);
                }
        WeightFormat format{WeightKind::Winograd, precision};
        format.stride_x = format.stride_y = stride;
        format.winograd_scale = scale;
        // (A configuration without Winograd gets a dummy surface: the registers are the test.)
        const auto wl = make_weight_layout(cfg, format, {kernels, channels, ksize, ksize});
        const uint64_t weight_bytes = wl ? wl->size_bytes() : 128;
        uint8_t* wt = rig.region(kWeightBase, weight_bytes);
        if (wl) {
            const ConstTensorView view{weights.data(),
                                       weights.size() * 4,
                                       HostType::Float32,
                                       HostLayout::NCHW,
                                       {kernels, channels, ksize, ksize}};
            EXPECT_TRUE(pack_weights(view, *wl, {reinterpret_cast<std::byte*>(wt), weight_bytes}));
        }
        surface.assign(wt, wt + weight_bytes);

        const uint32_t per_atom = cfg.atom_bytes / bpe();
        const uint32_t ext_w = (pad_left + width + pad_right) / stride;
        const uint32_t ext_h = (pad_top + height + pad_bottom) / stride;
        const uint32_t ext_c = (channels + per_atom - 1) / per_atom * per_atom * stride * stride;
        const uint32_t p = static_cast<uint32_t>(precision);
        const uint32_t misc = 1 | p << 8 | p << 12;
        rig.set("CDMA", "D_MISC_CFG", misc);
        rig.set("CDMA", "D_DATAIN_FORMAT", 0);
        rig.set("CDMA", "D_DATAIN_SIZE_0", (height - 1) << 16 | (width - 1));
        rig.set("CDMA", "D_DATAIN_SIZE_1", channels - 1);
        rig.set("CDMA", "D_DAIN_RAM_TYPE", 1);
        rig.set("CDMA", "D_DAIN_ADDR_LOW_0", static_cast<uint32_t>(kDataBase));
        rig.set("CDMA", "D_LINE_STRIDE", static_cast<uint32_t>(layout.line()));
        rig.set("CDMA", "D_SURF_STRIDE", static_cast<uint32_t>(layout.surface()));
        rig.set("CDMA", "D_DAIN_MAP", 1);
        rig.set("CDMA", "D_WEIGHT_SIZE_0", 16 * ext_c * bpe() - 1);
        rig.set("CDMA", "D_WEIGHT_SIZE_1", kernels - 1);
        rig.set("CDMA", "D_WEIGHT_RAM_TYPE", 1);
        rig.set("CDMA", "D_WEIGHT_ADDR_LOW", static_cast<uint32_t>(kWeightBase));
        rig.set("CDMA", "D_WEIGHT_BYTES", static_cast<uint32_t>(weight_bytes));
        rig.set("CDMA", "D_CONV_STRIDE", (stride - 1) << 16 | (stride - 1));
        rig.set("CDMA", "D_ZERO_PADDING",
                pad_bottom << 24 | pad_top << 16 | pad_right << 8 | pad_left);
        rig.set("CSC", "D_MISC_CFG", misc);
        rig.set("CSC", "D_DATAIN_SIZE_EXT_0", (ext_h - 1) << 16 | (ext_w - 1));
        rig.set("CSC", "D_DATAIN_SIZE_EXT_1", ext_c - 1);
        rig.set("CSC", "D_WEIGHT_SIZE_EXT_0", 3 << 16 | 3);
        rig.set("CSC", "D_WEIGHT_SIZE_EXT_1", (kernels - 1) << 16 | (ext_c - 1));
        rig.set("CSC", "D_DATAOUT_SIZE_0", (out - 1) << 16 | (out - 1));
        rig.set("CSC", "D_DATAOUT_SIZE_1", kernels - 1);
        rig.set("CMAC_A", "D_MISC_CFG", 1 | p << 12);
        rig.set("CMAC_B", "D_MISC_CFG", 1 | p << 12);
        rig.set("CACC", "D_MISC_CFG", 1 | p << 12);
        rig.set("CACC", "D_DATAOUT_SIZE_0", (out - 1) << 16 | (out - 1));
        rig.set("CACC", "D_DATAOUT_SIZE_1", kernels - 1);
        // Groups of 4 extended columns times the extended cube's atoms, per extended line.
        rig.buffer(ext_w / 4 * (ext_c / per_atom), ext_h);
        return rig.execute();
    }
};

void fill(WinogradCase& c, int data_range, int weight_range) {
    auto rng = test::rng_for_test();
    for (int v : test::random_vector<int>(rng, size_t(c.height) * c.width * c.channels, -data_range,
                                          data_range))
        c.input.push_back(float(v));
    for (int v : test::random_vector<int>(rng, size_t(c.kernels) * c.channels * c.ksize * c.ksize,
                                          -weight_range, weight_range))
        c.weights.push_back(float(v));
}

TEST(ConvWinograd, Int16IsFourTimesTheDirectConvolution) {
    WinogradCase c;
    fill(c, 1000, 100);
    Rig rig("nv_full");
    const AccumulatorCube out = c.run(rig);
    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    ASSERT_EQ(out.values.size(), size_t(c.kernels) * c.out * c.out);
    for (uint32_t k = 0; k < c.kernels; ++k)
        for (uint32_t y = 0; y < c.out; ++y)
            for (uint32_t x = 0; x < c.out; ++x)
                ASSERT_EQ(out.values[out.index(0, k, y, x)], int64_t(4 * c.direct(k, y, x)))
                    << "k " << k << " y " << y << " x " << x;
}

TEST(ConvWinograd, Int8StrideTwoExtendsTheChannels) {
    // Stride 2: CDMA folds the 2x2 phases into channels (32 -> 128), the kernels are extended
    // to 3x3 the same way; still exactly 4 x the strided direct convolution.
    WinogradCase c;
    c.precision = Precision::Int8;
    c.width = c.height = 15, c.channels = 32, c.kernels = 40, c.stride = 2, c.ksize = 5;
    c.pad_left = c.pad_top = 1, c.pad_right = c.pad_bottom = 0;
    c.out = 4;
    fill(c, 7, 7);  // keeps the 8-bit PRA results and the transformed kernels in range
    Rig rig("nv_full");
    const AccumulatorCube out = c.run(rig);
    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    ASSERT_EQ(out.values.size(), size_t(c.kernels) * c.out * c.out);
    for (uint32_t k = 0; k < c.kernels; ++k)
        for (uint32_t y = 0; y < c.out; ++y)
            for (uint32_t x = 0; x < c.out; ++x)
                ASSERT_EQ(out.values[out.index(0, k, y, x)], int64_t(4 * c.direct(k, y, x)))
                    << "k " << k << " y " << y << " x " << x;
}

// The transformed kernel U[k][position][channel] as stored (docs/formats/weights.md
// section 3: groups of G kernels, 4x4x4 cubes scanned K -> C), fp16.
uint16_t stored_u(const WinogradCase& c, const HwConfig& cfg, uint32_t k, uint32_t pos,
                  uint32_t ce) {
    const uint32_t g_size = cfg.mac_atomic_k / 2, g = k / g_size, kk = k % g_size;
    const uint32_t in_group = std::min(g_size, c.kernels - g * g_size);
    const uint32_t ext_c = c.channels;  // stride 1, channels a whole atom
    const uint64_t index = uint64_t(g) * g_size * 16 * ext_c +
                           (uint64_t(ce / 4) * in_group + kk) * 64 + pos * 4 + ce % 4;
    return static_cast<uint16_t>(c.surface[index * 2] | c.surface[index * 2 + 1] << 8);
}

TEST(ConvWinograd, Fp16WithinTheWinogradThreshold) {
    // The threshold bounds CMAC/CACC's arithmetic, so the reference multiplies the same fp16
    // operands exactly: the stored U and the tile transform B^T d B as the PRA computes it
    // (fp17 additions of the precision library, then fp16), summed in double and put through
    // A^T . A.
    WinogradCase c;
    c.precision = Precision::Fp16;
    c.scale = 1.0f;
    auto rng = test::rng_for_test();
    c.input = test::random_vector<float>(rng, size_t(c.height) * c.width * c.channels, -2, 2);
    c.weights = test::random_vector<float>(rng, size_t(c.kernels) * c.channels * 9, -1, 1);
    for (float& v : c.input) v = fp16::to_float(fp16::from_float(v));
    Rig rig("nv_full");
    const AccumulatorCube out = c.run(rig);
    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    auto padded = [&](int y, int x, uint32_t ch) -> double {
        const int iy = y - int(c.pad_top), ix = x - int(c.pad_left);
        if (iy < 0 || ix < 0 || iy >= int(c.height) || ix >= int(c.width)) return 0.0;
        return c.input[(size_t(iy) * c.width + ix) * c.channels + ch];
    };
    const double bt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
    std::vector<uint16_t> actual, expected;
    std::vector<int> max_exp;
    for (uint32_t k = 0; k < c.kernels; ++k)
        for (uint32_t ty = 0; ty < c.out / 2; ++ty)
            for (uint32_t tx = 0; tx < c.out / 2; ++tx) {
                double m[16] = {};
                int largest = -100;
                for (uint32_t ch = 0; ch < c.channels; ++ch) {
                    // Each row of B^T has two non-zero entries: one fp17 addition per element.
                    auto combine = [&](const uint32_t(&x)[4], int row) {
                        uint32_t acc = 0;
                        bool first = true;
                        for (int q = 0; q < 4; ++q) {
                            if (bt[row][q] == 0) continue;
                            const uint32_t term = bt[row][q] < 0 ? x[q] ^ fp17::kSignBit : x[q];
                            acc = first ? term : precision::fp17_add(acc, term);
                            first = false;
                        }
                        return acc;
                    };
                    uint32_t t[4][4];
                    for (int j = 0; j < 4; ++j) {
                        uint32_t column[4];
                        for (int q = 0; q < 4; ++q)
                            column[q] = precision::fp16_to_fp17(fp16::from_float(
                                static_cast<float>(padded(int(ty * 2) + q, int(tx * 2) + j, ch))));
                        for (int i = 0; i < 4; ++i) t[i][j] = combine(column, i);
                    }
                    for (int i = 0; i < 4; ++i)
                        for (int j = 0; j < 4; ++j) {
                            const uint16_t v16 = precision::fp17_to_fp16(combine(t[i], j));
                            const uint16_t u16 = stored_u(c, rig.cfg(), k, i * 4 + j, ch);
                            m[i * 4 + j] += double(fp16::to_float(v16)) * fp16::to_float(u16);
                            if ((v16 & 0x7fff) && (u16 & 0x7fff))
                                largest = std::max(largest,
                                                   precision::aligned_product_exponent(v16, u16));
                        }
                }
                const double y[4] = {
                    m[0] + m[4] + m[8] + m[1] + m[5] + m[9] + m[2] + m[6] + m[10],
                    m[1] + m[5] + m[9] - m[2] - m[6] - m[10] - m[3] - m[7] - m[11],
                    m[4] - m[8] - m[12] + m[5] - m[9] - m[13] + m[6] - m[10] - m[14],
                    m[5] - m[9] - m[13] - m[6] + m[10] + m[14] - m[7] + m[11] + m[15]};
                for (uint32_t j = 0; j < 4; ++j) {
                    actual.push_back(precision::fp32_to_fp16(static_cast<uint32_t>(
                        out.values[out.index(0, k, ty * 2 + j / 2, tx * 2 + j % 2)])));
                    expected.push_back(fp16::from_float(static_cast<float>(y[j])));
                    max_exp.push_back(largest);
                }
            }
    const auto r = precision::compare_winograd_conv(actual, expected, max_exp, c.channels);
    EXPECT_TRUE(r) << r;
    // And the whole chain stays near the direct convolution (the fp16 transforms add error).
    double worst = 0;
    for (uint32_t k = 0; k < c.kernels; ++k)
        for (uint32_t y = 0; y < c.out; ++y)
            for (uint32_t x = 0; x < c.out; ++x)
                worst = std::max(
                    worst,
                    std::abs(double(std::bit_cast<float>(out.values[out.index(0, k, y, x)])) -
                             c.direct(k, y, x)));
    EXPECT_LT(worst, 0.05);
}

// The fp16 Winograd layer the same bit for bit on every instruction-set level this CPU runs
// (NVDLA_EMU_ISA's limit set directly; scalar is the reference) and for any thread count.
TEST(ConvWinograd, Fp16SameOnEveryLevelAndThreadCount) {
    WinogradCase c;
    c.precision = Precision::Fp16;
    c.scale = 1.0f;
    c.channels = 32, c.kernels = 24;
    auto rng = test::rng_for_test();
    c.input = test::random_vector<float>(rng, size_t(c.height) * c.width * c.channels, -2, 2);
    c.weights = test::random_vector<float>(rng, size_t(c.kernels) * c.channels * 9, -1, 1);
    const auto run = [&](IsaLevel level, unsigned threads) {
        set_isa_limit(level);
        Rig rig("nv_full");
        rig.set_threads(threads);
        const AccumulatorCube out = c.run(rig);
        EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
        set_isa_limit(isa_limit_from_environment());
        return out.planar();
    };
    const std::vector<int32_t> reference = run(IsaLevel::Scalar, 1);
    ASSERT_FALSE(reference.empty());
    for (IsaLevel level : {IsaLevel::Avx2, IsaLevel::Avx512}) {
        set_isa_limit(level);
        const bool runs = isa_level() == level;
        set_isa_limit(isa_limit_from_environment());
        if (!runs) continue;
        for (unsigned threads : {1u, 2u, 5u})
            EXPECT_EQ(run(level, threads), reference) << isa_name(level) << ", " << threads;
    }
}

TEST(ConvWinograd, OutputMustBeWholeTileGroups) {
    WinogradCase c;
    fill(c, 10, 10);
    c.out = 6;  // not a multiple of 4: CSC cannot walk it
    Rig rig("nv_full");
    const AccumulatorCube out = c.run(rig);
    EXPECT_TRUE(out.values.empty());
    EXPECT_EQ(rig.stats().programming_errors, 1u);
    EXPECT_NE(rig.stats().last_error.find("D_DATAOUT_SIZE_0"), std::string::npos)
        << rig.stats().last_error;
}

TEST(ConvWinograd, NvSmallHasNoWinograd) {
    WinogradCase c;
    c.precision = Precision::Int8;
    c.channels = 8;
    fill(c, 5, 5);
    Rig rig("nv_small");
    const AccumulatorCube out = c.run(rig);
    EXPECT_TRUE(out.values.empty());
    EXPECT_EQ(rig.stats().programming_errors, 1u);
    EXPECT_NE(rig.stats().last_error.find("Winograd"), std::string::npos) << rig.stats().last_error;
}

}  // namespace
}  // namespace nvdla::emu::conv_test
