// The emulator's fast paths against its plain ones: the vectorised fp16 MAC cell against the
// scalar cell kept as the reference (cmac_fp16_dot_scalar), on every instruction-set level
// this CPU runs (NVDLA_EMU_ISA's limit set directly); whole layers the same bit for bit on
// every level and for any thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <random>

#include "conv_test_rig.hpp"
#include "emu/cmac_grouped.hpp"
#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"
#include "emu/parallel.hpp"
#include "isa_levels.hpp"

namespace nvdla::emu::conv_test {
namespace {

// CACC's fp48 addition as first ported, scanning bit by bit for the leading digit (the model
// now counts leading zeros): the reference the model's form is compared with.
constexpr uint64_t kMask40 = (uint64_t(1) << 40) - 1;
constexpr uint64_t kMask38 = (uint64_t(1) << 38) - 1;
int64_t sign_extend(uint64_t v, unsigned bits) {
    const uint64_t m = uint64_t(1) << (bits - 1);
    v &= (m << 1) - 1;
    return static_cast<int64_t>((v ^ m) - m);
}
uint32_t bit(uint64_t v, unsigned i) {
    return static_cast<uint32_t>((v >> i) & 1u);
}

uint64_t reference_fp48_add(uint64_t accumulator, uint64_t mac) {
    const uint32_t mac_exp = static_cast<uint32_t>((mac >> 38) & 0x3fu);
    const int64_t mac_mant = sign_extend(mac & kMask38, 38);
    uint32_t acc_exp = static_cast<uint32_t>((accumulator >> 40) & 0xffu);
    const uint64_t acc_mant_u = accumulator & kMask40;
    const int64_t acc_mant = sign_extend(acc_mant_u, 40);

    // Zero input, then NaNs (accumulator first).
    if (mac_mant == 0) return accumulator;
    if (acc_exp == 0xff) return (uint64_t(0xff) << 40) | (acc_mant_u & (uint64_t(0x7ff) << 29));
    if (mac_exp == 0x3f)
        return (uint64_t(0xff) << 40) | ((static_cast<uint64_t>(mac_mant) >> 27 & 0x7ffu) << 29);

    // Normalise the CMAC mantissa to bit 36 and widen it to 40 bits.
    int i = 36;
    const uint32_t mac_sign = bit(static_cast<uint64_t>(mac_mant), 37);
    if (bit(static_cast<uint64_t>(mac_mant), 36) == mac_sign)
        for (i = 36; i >= 0; --i)
            if (bit(static_cast<uint64_t>(mac_mant), static_cast<unsigned>(i)) != mac_sign) break;
    const int shift0 = 36 - i;
    int64_t mac_ext = sign_extend(static_cast<uint64_t>(mac_mant) << shift0, 38) * 4;  // bits 39:2
    const int mac_exp_norm = static_cast<int>((mac_exp - shift0 + 49) & 0xffu);

    if (acc_mant == 0) acc_exp = 0;
    int64_t acc_ext = acc_mant;

    // Align to the larger exponent, keeping the bits shifted out for rounding.
    uint64_t shifted_out = 0;  // 40 bits, first bit out at bit 39
    int bigger = mac_exp_norm;
    const int acc_exp_i = static_cast<int>(acc_exp);
    if (mac_exp_norm > acc_exp_i) {
        const int diff = mac_exp_norm - acc_exp_i;
        if (diff <= 40) {
            shifted_out = (static_cast<uint64_t>(acc_ext) << (40 - diff)) & kMask40;
            acc_ext >>= diff;
        } else {
            acc_ext = 0;
        }
    } else if (mac_exp_norm < acc_exp_i) {
        bigger = acc_exp_i;
        const int diff = acc_exp_i - mac_exp_norm;
        if (diff <= 40) {
            shifted_out = (static_cast<uint64_t>(mac_ext) << (40 - diff)) & kMask40;
            mac_ext >>= diff;
        } else {
            mac_ext = 0;
        }
    }

    // Add, then renormalise: right by one on overflow, else left to bit 38.
    const int64_t sum_tmp = sign_extend(static_cast<uint64_t>(acc_ext + mac_ext), 40);
    const uint64_t sum_tmp_u = static_cast<uint64_t>(sum_tmp) & kMask40;
    const uint32_t mac_top = bit(static_cast<uint64_t>(mac_ext), 39);
    const uint32_t acc_top = bit(static_cast<uint64_t>(acc_ext), 39);
    bool overflow = false;
    uint32_t high_bit_out = 0;
    uint64_t sum_u;
    int sum_exp;
    if (mac_top == acc_top && mac_top != bit(sum_tmp_u, 39)) {
        high_bit_out = bit(sum_tmp_u, 0);
        overflow = true;
        sum_u = (uint64_t(mac_top) << 39) | (sum_tmp_u >> 1);
        sum_exp = bigger + 1;
    } else if (bit(sum_tmp_u, 38) == bit(sum_tmp_u, 39)) {
        int j;
        for (j = 38; j >= 0; --j)
            if (bit(sum_tmp_u, static_cast<unsigned>(j)) != bit(sum_tmp_u, 39)) break;
        const int n = 38 - j;
        sum_u = ((sum_tmp_u << n) & kMask40) | (shifted_out >> (40 - n));
        shifted_out = (shifted_out << n) & kMask40;
        sum_exp = bigger - n;
    } else {
        sum_u = sum_tmp_u;
        sum_exp = bigger;
    }

    // Round with the guard bit (and the sticky bits for negative sums).
    const uint32_t guard0 = bit(shifted_out, 39);
    const bool sticky0 = (shifted_out & ((uint64_t(1) << 39) - 1)) != 0;
    const bool sticky1 = shifted_out != 0;
    const uint32_t sign = bit(sum_u, 39);
    const bool round_up = overflow ? (sign ? (high_bit_out && sticky1) : high_bit_out != 0)
                                   : (sign ? (guard0 && sticky0) : guard0 != 0);
    const uint64_t rounded = (round_up ? sum_u + 1 : sum_u) & kMask40;
    uint64_t final_u = rounded;
    if (bit(rounded, 39) != sign) {
        final_u = (uint64_t(sign) << 39) | (rounded >> 1);
        ++sum_exp;
    }
    uint32_t exp_field = static_cast<uint32_t>(sum_exp) & 0xffu;
    if (final_u == 0) exp_field = 0;
    return (uint64_t(exp_field) << 40) | final_u;
}

// 64 lanes in one of several styles: random bits; exponents within a few blocks (the common
// case, where truncation matters); zeros and -0s; rare infinities and NaNs; denormals.
void random_operation(std::mt19937_64& rng, int style, uint16_t d[64], uint16_t w[64]) {
    const uint32_t base = rng() % 31;
    for (int i = 0; i < 64; ++i) {
        uint64_t r = rng();
        auto v = static_cast<uint16_t>(r);
        auto u = static_cast<uint16_t>(r >> 16);
        if (style == 1) {
            v = static_cast<uint16_t>((v & 0x83ffu) | (((base + (r >> 32) % 3) % 32) << 10));
            u = static_cast<uint16_t>((u & 0x83ffu) | (((base + (r >> 40) % 4) % 32) << 10));
        }
        if (style == 2 && (r >> 48) % 3 == 0) v = (r >> 60) & 1 ? 0x8000 : 0;
        if (style == 3 && (r >> 48) % 64 == 0)
            v = static_cast<uint16_t>(0x7c00u | ((r >> 54) & 7u));
        if (style == 4) v &= 0x83ff;
        d[i] = v;
        w[i] = u;
    }
}

TEST(ConvFastPaths, Fp16CellEqualsTheScalarCellOnEveryLevel) {
    std::mt19937_64 rng(20261127);
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        uint64_t differ = 0;
        for (int i = 0; i < 40000; ++i) {
            uint16_t d[64], w[64];
            random_operation(rng, i % 5, d, w);
            const unsigned lanes = i % 9 == 0 ? 1 + static_cast<unsigned>(rng() % 64) : 64;
            differ += conv::cmac_fp16_dot(d, w, lanes) != conv::cmac_fp16_dot_scalar(d, w, lanes);
        }
        EXPECT_EQ(differ, 0u) << isa_name(level);
    }
}

TEST(ConvFastPaths, Fp48AdditionEqualsTheBitScanningForm) {
    std::mt19937_64 rng(48);
    uint64_t differ = 0;
    for (int i = 0; i < 400000; ++i) {
        // Accumulators and CMAC results of every exponent, with short and long mantissas
        // (leading digits anywhere), zeros and NaNs now and then.
        const uint64_t r = rng();
        uint64_t acc = ((r & 0xff) << 40) | (rng() & kMask40) >> (r >> 8) % 40;
        uint64_t mac = (((r >> 16) & 0x3f) << 38) | (rng() & kMask38) >> (r >> 24) % 38;
        if ((r >> 32) % 17 == 0) acc = 0;
        if ((r >> 40) % 29 == 0) mac &= ~kMask38;
        if ((r >> 48) % 7 == 0) mac |= kMask38 & ~((uint64_t(1) << (r >> 52) % 38) - 1);
        differ += conv::cacc_fp48_add(acc, mac) != reference_fp48_add(acc, mac);
        // A running sum, as CACC forms it.
        uint64_t sum = 0;
        if (i % 1000 == 0)
            for (int k = 0; k < 64; ++k) {
                const uint64_t m = (((rng() % 20 + 20) & 0x3f) << 38) | (rng() & kMask38);
                const uint64_t next = conv::cacc_fp48_add(sum, m);
                differ += next != reference_fp48_add(sum, m);
                sum = next;
            }
    }
    EXPECT_EQ(differ, 0u);
}

TEST(ConvFastPaths, Fp16WinogradCellEqualsTheScalarCellOnEveryLevel) {
    std::mt19937_64 rng(4);
    std::vector<std::array<uint64_t, 4>> reference;
    std::vector<std::pair<std::array<uint16_t, 64>, std::array<uint16_t, 64>>> operations;
    for (int i = 0; i < 5000; ++i) {
        std::array<uint16_t, 64> d, w;
        random_operation(rng, i % 5, d.data(), w.data());
        operations.emplace_back(d, w);
    }
    {
        const IsaLimit limit(IsaLevel::Scalar);
        for (const auto& [d, w] : operations) {
            std::array<uint64_t, 4> out;
            conv::cmac_fp16_winograd(d.data(), w.data(), out.data());
            reference.push_back(out);
        }
    }
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        uint64_t differ = 0;
        for (size_t i = 0; i < operations.size(); ++i) {
            std::array<uint64_t, 4> out;
            conv::cmac_fp16_winograd(operations[i].first.data(), operations[i].second.data(),
                                     out.data());
            differ += out != reference[i];
        }
        EXPECT_EQ(differ, 0u) << isa_name(level);
    }
}

TEST(ConvFastPaths, Fp16BoothTruncationCasesOnEveryLevel) {
    // One 1 x 1 product sets the exponent; a second product of every aligned mantissa pair of
    // a few exponents apart is truncated by 4 .. 28 bits (cal_fp16_booth's carry-save split).
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        uint64_t differ = 0;
        for (uint32_t a = 0; a < 0x800; a += 7)
            for (uint32_t exponent = 1; exponent < 15; ++exponent) {
                uint16_t d[64] = {0x3c00}, w[64] = {0x7800};
                d[1] = static_cast<uint16_t>((exponent << 10) | (a & 0x3ffu) | (a & 0x400u) << 5);
                w[1] = static_cast<uint16_t>(((exponent + a % 5) << 10) | ((a * 37) & 0x3ffu));
                differ += conv::cmac_fp16_dot(d, w, 2) != conv::cmac_fp16_dot_scalar(d, w, 2);
            }
        EXPECT_EQ(differ, 0u) << isa_name(level);
    }
}

// A random layer's output (planar values) for one level and thread count.
std::vector<int32_t> run_layer(const char* config, const ConvSpec& spec, uint64_t seed,
                               IsaLevel level, unsigned threads) {
    const IsaLimit limit(level);
    Rig rig(config);
    rig.set_threads(threads);
    IntCase c{spec, {}, {}};
    std::mt19937_64 rng(seed);
    if (spec.precision == Precision::Fp16) {
        std::uniform_int_distribution<int> exponent(9, 17), fraction(0, 0x7ff);
        const auto value = [&] {
            return static_cast<int32_t>((exponent(rng) << 10) | (fraction(rng) & 0x3ff) |
                                        (fraction(rng) & 0x400) << 5);
        };
        c.input.resize(size_t(spec.batches) * spec.height * spec.width * spec.channels);
        c.weights.resize(size_t(spec.kernels) * spec.channels * spec.kernel_h * spec.kernel_w);
        for (int32_t& v : c.input) v = rng() % 4 ? value() : 0;  // ReLU-like zeros
        for (int32_t& v : c.weights) v = value();
    } else {
        c.fill_random(rng);
    }
    c.load(rig);
    const AccumulatorCube out = rig.execute();
    EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    return out.planar();
}

TEST(ConvFastPaths, LayersAreTheSameOnEveryLevelAndThreadCount) {
    ConvSpec fp16;
    fp16.precision = Precision::Fp16;
    fp16.width = 9, fp16.height = 7, fp16.channels = 70, fp16.kernels = 19;
    fp16.pad_left = fp16.pad_right = fp16.pad_top = fp16.pad_bottom = 1;
    fp16.stride_x = 2, fp16.dilation_y = 2;
    ConvSpec int8;
    int8.width = 30, int8.height = 28, int8.channels = 64, int8.kernels = 40;  // threads engage
    int8.pad_left = int8.pad_right = int8.pad_top = int8.pad_bottom = 1;
    int8.clip = 7;
    ConvSpec int16 = int8;
    int16.precision = Precision::Int16;
    int16.clip = 16;
    ConvSpec batched = int8;  // a batch of 2, 1x1, odd channels
    batched.batches = 2, batched.kernel_w = batched.kernel_h = 1, batched.channels = 129;
    uint64_t seed = 1;
    for (const ConvSpec* s : {&fp16, &int8, &int16, &batched}) {
        ++seed;
        const std::vector<int32_t> reference = run_layer("nv_full", *s, seed, IsaLevel::Scalar, 1);
        ASSERT_FALSE(reference.empty());
        for (IsaLevel level : levels_of_this_cpu())
            for (unsigned threads : {1u, 2u, 3u, 8u})
                EXPECT_EQ(run_layer("nv_full", *s, seed, level, threads), reference)
                    << "precision " << int(s->precision) << ", " << isa_name(level) << ", "
                    << threads << " threads";
    }
}

// A deferred cube taken block by block, `block` rows at a time, as SDP takes it in flying mode
// (CACC's status then set): its values in planar order.
std::vector<int32_t> planar_by_blocks(const AccumulatorCube& cube, uint32_t block) {
    const uint32_t W = cube.width, H = cube.height, K = cube.channels;
    std::vector<int32_t> planar(size_t(cube.batches) * K * H * W);
    int32_t* rows = cube.deferred->begin(size_t(cube.batches) * block * W * cube.channel_stride);
    uint32_t saturations = 0;
    for (uint32_t y0 = 0; y0 < H; y0 += block) {
        const uint32_t y1 = std::min(H, y0 + block);
        saturations += cube.deferred->compute(y0, y1, rows);
        for (uint32_t n = 0; n < cube.batches; ++n)
            for (uint32_t y = y0; y < y1; ++y)
                for (uint32_t x = 0; x < W; ++x)
                    for (uint32_t k = 0; k < K; ++k)
                        planar[cube.index(n, k, y, x)] =
                            rows[((size_t(n) * (y1 - y0) + y - y0) * W + x) * cube.channel_stride +
                                 k];
    }
    cube.deferred->finish(saturations);
    return planar;
}

// The rows a deferred cube gives block by block (what SDP takes in flying mode) are the whole
// cube's, on every level, and CACC's saturation count is the same.
TEST(ConvFastPaths, DeferredRowsAreTheWholeCubeOnEveryLevel) {
    auto rng = test::rng_for_test();
    for (int i = 0; i < 24; ++i) {
        ConvSpec s;
        s.precision = rng() % 3 ? Precision::Int8 : Precision::Int16;
        s.batches = rng() % 4 ? 1 : 2;
        s.width = 1 + static_cast<uint32_t>(rng() % 13);
        s.height = 1 + static_cast<uint32_t>(rng() % 11);
        s.channels = 1 + static_cast<uint32_t>(rng() % 80);
        s.kernels = 1 + static_cast<uint32_t>(rng() % 70);
        s.kernel_w = 1 + static_cast<uint32_t>(rng() % 3);
        s.kernel_h = 1 + static_cast<uint32_t>(rng() % 3);
        s.pad_left = s.pad_right = static_cast<uint32_t>(rng() % 2);
        s.pad_top = s.pad_bottom = static_cast<uint32_t>(rng() % 2);
        if (s.width + s.pad_left + s.pad_right < s.kernel_w) s.kernel_w = 1;
        if (s.height + s.pad_top + s.pad_bottom < s.kernel_h) s.kernel_h = 1;
        s.stride_x = 1 + static_cast<uint32_t>(rng() % 2);
        s.pad_value = static_cast<uint16_t>(rng() % 3 ? 0 : rng());
        // int16 sums beyond 2^31 at clip 0: CACC's delivery saturates and counts them.
        s.clip = s.precision == Precision::Int16 ? static_cast<uint32_t>(rng() % 3) * 8
                                                 : static_cast<uint32_t>(rng() % 9);
        const uint64_t seed = rng();
        const auto whole = [&](IsaLevel level, uint32_t& saturations) {
            const IsaLimit limit(level);
            Rig rig("nv_full");
            IntCase c{s, {}, {}};
            std::mt19937_64 values(seed);
            c.fill_random(values);
            c.load(rig);
            const std::vector<int32_t> out = rig.execute().planar();
            saturations = rig.group_value(NVDLA_UNIT_CACC, NVDLA_CACC_D_OUT_SATURATION);
            return out;
        };
        uint32_t reference_saturations = 0;
        const std::vector<int32_t> reference = whole(IsaLevel::Scalar, reference_saturations);
        for (IsaLevel level : levels_of_this_cpu()) {
            const IsaLimit limit(level);
            Rig rig("nv_full");
            IntCase c{s, {}, {}};
            std::mt19937_64 values(seed);
            c.fill_random(values);
            c.load(rig);
            const AccumulatorCube cube = rig.execute_deferred();
            ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
            ASSERT_TRUE(cube.deferred) << "layer " << i;
            ASSERT_GE(cube.channel_stride, cube.channels);
            const uint32_t block = 1 + static_cast<uint32_t>(rng() % (cube.height + 1));
            EXPECT_EQ(planar_by_blocks(cube, block), reference)
                << "layer " << i << ", " << isa_name(level);
            EXPECT_EQ(rig.group_value(NVDLA_UNIT_CACC, NVDLA_CACC_D_OUT_SATURATION),
                      reference_saturations)
                << "layer " << i << ", " << isa_name(level);
        }
    }
}

// One Convolution unit running layers one after another gives each the cube a new unit gives
// it alone, block by block, on every level: what the unit keeps from layer to layer (the
// deferred rows, the CSC pad column, the kernels' packings, the scratch) carries nothing over.
// Channel counts, pad values, kernels and precisions change from layer to layer; some layers
// are depthwise (kernel k reads channel k only: the grouped kernel).
TEST(ConvFastPaths, LayersInARowGiveWhatEachGivesAlone) {
    auto rng = test::rng_for_test();
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        Rig in_a_row("nv_full");
        // The input's and the weights' memory once, large enough for every layer (a region
        // added later at the same address would be found after the first, smaller one).
        in_a_row.region(kDataBase, 1 << 20);
        in_a_row.region(kWeightBase, 1 << 20);
        for (int i = 0; i < 8; ++i) {
            ConvSpec s;
            s.precision = rng() % 4 ? Precision::Int8 : Precision::Int16;
            s.width = 2 + static_cast<uint32_t>(rng() % 8);
            s.height = 2 + static_cast<uint32_t>(rng() % 6);
            s.channels = 1 + static_cast<uint32_t>(rng() % 70);
            const bool depthwise = rng() % 2 == 0;
            s.kernels = depthwise ? s.channels : 1 + static_cast<uint32_t>(rng() % 40);
            s.kernel_w = s.kernel_h = 1 + static_cast<uint32_t>(rng() % 3);
            s.pad_left = s.pad_right = s.pad_top = s.pad_bottom = static_cast<uint32_t>(rng() % 2);
            s.pad_value = static_cast<uint16_t>(rng() % 4 ? rng() : 0);
            const uint64_t seed = rng();
            const uint32_t block = 1 + static_cast<uint32_t>(rng() % 4);
            const auto run = [&](Rig& rig) {
                IntCase c{s, {}, {}};
                std::mt19937_64 values(seed);
                c.fill_random(values);
                if (depthwise)
                    for (uint32_t k = 0; k < s.kernels; ++k)
                        for (uint32_t ch = 0; ch < s.channels; ++ch)
                            for (uint32_t t = 0; t < s.kernel_h * s.kernel_w; ++t)
                                if (ch != k)
                                    c.weights[(uint64_t(k) * s.channels + ch) * s.kernel_h *
                                                  s.kernel_w +
                                              t] = 0;
                c.load(rig);
                const AccumulatorCube cube = rig.execute_deferred();
                EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
                return cube.deferred ? planar_by_blocks(cube, block) : cube.planar();
            };
            Rig alone("nv_full");
            const std::vector<int32_t> expected = run(alone);
            ASSERT_FALSE(expected.empty());
            const std::vector<int32_t> got = run(in_a_row);
            const auto differ =
                std::mismatch(got.begin(), got.end(), expected.begin(), expected.end());
            EXPECT_TRUE(differ.first == got.end() && differ.second == expected.end())
                << "layer " << i << " (" << s.channels << " channels, " << s.kernels
                << " kernels, pad value " << s.pad_value << ", "
                << (depthwise ? "depthwise" : "dense") << "), " << isa_name(level) << ": value "
                << (differ.first - got.begin()) << " of " << expected.size();
        }
    }
}

// The VNNI kernel writes its rows into the output itself for any kernel count, the last block
// of 16 kernels stored masked: every sum is the scalar kernel's, and nothing past the output's
// values is written (the words after them keep their sentinel).
TEST(ConvFastPaths, VnniRowsInPlaceWriteTheirKernelsOnly) {
    const IsaLimit limit(IsaLevel::Avx512);
    conv::force_mac_kernel(conv::MacKernel::Avx512Vnni);
    if (conv::active_mac_kernel(Precision::Int8) != conv::MacKernel::Avx512Vnni) {
        conv::force_mac_kernel(conv::MacKernel::Auto);
        GTEST_SKIP() << "no AVX-512 VNNI";
    }
    auto rng = test::rng_for_test();
    constexpr int32_t kSentinel = 0x5a5a5a5a;
    for (uint32_t kernels : {1u, 5u, 16u, 17u, 24u, 40u, 63u, 64u, 70u})
        for (uint32_t width : {1u, 3u, 6u, 7u, 8u, 9u, 13u}) {
            conv::MacProblem m;
            m.batches = 1 + static_cast<uint32_t>(rng() % 2);
            m.out_height = 1 + static_cast<uint32_t>(rng() % 4);
            m.out_width = width;
            m.kernels = kernels;
            m.taps_r = 1 + static_cast<uint32_t>(rng() % 3);
            m.taps_s = 1 + static_cast<uint32_t>(rng() % 3);
            m.depth = 4 * (1 + static_cast<uint32_t>(rng() % 20));
            m.plane_rows = m.out_height + m.taps_r - 1;
            m.row_elements = uint64_t(width + m.taps_s - 1) * m.depth;
            m.x_step = m.s_step = m.depth;
            m.threads = 1 + static_cast<unsigned>(rng() % 3);
            const uint64_t plane = uint64_t(m.batches) * m.plane_rows * m.row_elements;
            std::vector<int16_t> words(plane + conv::kMacReadSlack, 0);
            std::vector<uint8_t> bytes(plane + conv::kMacReadSlack, 128);
            for (uint64_t i = 0; i < plane; ++i) {
                words[i] = static_cast<int8_t>(rng());
                bytes[i] = static_cast<uint8_t>(words[i] + 128);
            }
            std::vector<int16_t> weights(uint64_t(kernels) * m.taps_r * m.taps_s * m.depth);
            for (int16_t& w : weights) w = static_cast<int8_t>(rng());
            m.weights = weights.data();
            const uint32_t clip = static_cast<uint32_t>(rng() % 8);
            const size_t count = size_t(m.batches) * m.out_height * width * kernels;
            std::vector<int32_t> out(count + 64, kSentinel);
            m.bytes = bytes.data();
            EXPECT_EQ(conv::mac_convolve_int(m, Precision::Int8, clip, out.data()), 0u);
            conv::force_mac_kernel(conv::MacKernel::Scalar);
            m.bytes = nullptr;
            m.words = words.data();
            std::vector<int32_t> reference(count);
            conv::mac_convolve_int(m, Precision::Int8, clip, reference.data());
            conv::force_mac_kernel(conv::MacKernel::Avx512Vnni);
            EXPECT_TRUE(std::equal(reference.begin(), reference.end(), out.begin()))
                << kernels << " kernels, " << width << " wide";
            EXPECT_TRUE(std::all_of(out.begin() + count, out.end(),
                                    [](int32_t v) { return v == kSentinel; }))
                << kernels << " kernels, " << width << " wide";
        }
    conv::force_mac_kernel(conv::MacKernel::Auto);
}

// The kernels' calls cover a row in ceil(count / most) pieces, piece i ending at
// floor(count (i + 1) / pieces): each position once, the sizes at most `most` and one apart.
TEST(ConvFastPaths, SplitEvenlyCutsIntoNearEqualPieces) {
    for (uint32_t count = 0; count < 300; ++count)
        for (uint32_t most = 1; most <= 12; ++most) {
            std::vector<std::pair<uint32_t, uint32_t>> pieces;
            conv::split_evenly(count, most, [&](uint32_t begin, uint32_t size) {
                pieces.emplace_back(begin, size);
            });
            const uint64_t expected = (count + most - 1) / most;
            ASSERT_EQ(pieces.size(), expected) << count << " by " << most;
            for (uint64_t i = 0; i < expected; ++i) {
                const uint64_t begin = count * i / expected, end = count * (i + 1) / expected;
                EXPECT_EQ(pieces[i].first, begin) << count << " by " << most << ", piece " << i;
                EXPECT_EQ(pieces[i].second, end - begin)
                    << count << " by " << most << ", piece " << i;
            }
        }
}

TEST(ConvFastPaths, ParallelForCoversTheRangeOnce) {
    for (unsigned threads : {1u, 2u, 5u})
        for (uint64_t count : {0u, 1u, 3u, 100u}) {
            std::vector<int> hits(count, 0);
            std::mutex lock;
            parallel_for(threads, count, uint64_t(1) << 40, [&](uint64_t begin, uint64_t end) {
                const std::lock_guard<std::mutex> guard(lock);
                for (uint64_t i = begin; i < end; ++i) ++hits[i];
            });
            for (uint64_t i = 0; i < count; ++i) EXPECT_EQ(hits[i], 1) << i;
        }
}

}  // namespace
}  // namespace nvdla::emu::conv_test
