// The integer convolution pipeline (int8, int16): direct convolution of feature data with
// padding values, strides, dilation, batches, the nv_full and nv_small atoms, CACC's rounding
// and saturation, against a textbook convolution written in the test.
#include <gtest/gtest.h>

#include "conv_test_rig.hpp"
#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"
#include "isa_levels.hpp"

namespace nvdla::emu::conv_test {
namespace {

uint64_t run_random(const char* config, const ConvSpec& spec, uint32_t* saturations = nullptr) {
    Rig rig(config);
    IntCase c{spec, {}, {}};
    auto rng = test::rng_for_test();
    c.fill_random(rng);
    return check_int_case(rig, c, saturations);
}

TEST(ConvInt, Int8ThreeByThreeWithZeroPadding) {
    ConvSpec s;
    s.width = 9, s.height = 7, s.channels = 70, s.kernels = 33;  // a partial atom and group
    s.pad_left = s.pad_right = s.pad_top = s.pad_bottom = 1;
    s.clip = 5;
    EXPECT_EQ(run_random("nv_full", s), 0u);
}

TEST(ConvInt, Int8PadValueIsTheLowByte) {
    ConvSpec s;
    s.width = 5, s.height = 4, s.channels = 8, s.kernels = 4;
    s.pad_left = 2, s.pad_right = 3, s.pad_top = 1, s.pad_bottom = 2;
    s.pad_value = 0x1280;  // int8 reads 0x80 = -128
    EXPECT_EQ(run_random("nv_full", s), 0u);
}

TEST(ConvInt, Int8HandWorkedPadding) {
    // 1x1 input of value 1, one 3x3 kernel of ones, padding 1 with PAD_VALUE 2: the centre
    // output sums 1 + 8 * 2 = 17.
    Rig rig("nv_full");
    IntCase c;
    c.spec.width = c.spec.height = 1, c.spec.channels = 1, c.spec.kernels = 1;
    c.spec.pad_left = c.spec.pad_right = c.spec.pad_top = c.spec.pad_bottom = 1;
    c.spec.pad_value = 2;
    c.input = {1};
    c.weights.assign(9, 1);
    c.load(rig);
    const AccumulatorCube out = rig.execute();
    ASSERT_EQ(out.planar().size(), 1u);
    EXPECT_EQ(out.at(0, 0, 0, 0), 17);
}

TEST(ConvInt, StridesDilationAndOutputsPastTheInput) {
    ConvSpec s;
    s.width = 11, s.height = 9, s.channels = 20, s.kernels = 7;
    s.kernel_w = 3, s.kernel_h = 2;
    s.stride_x = 2, s.stride_y = 3, s.dilation_x = 3, s.dilation_y = 2;
    s.pad_left = 4, s.pad_top = 3, s.pad_right = 1, s.pad_bottom = 0;
    s.pad_value = 0x7f05;
    s.clip = 3;
    s.out_w = 8, s.out_h = 5;  // more than the input holds: the rest reads padding
    EXPECT_EQ(run_random("nv_full", s), 0u);
}

TEST(ConvInt, Batches) {
    ConvSpec s;
    s.batches = 3, s.width = 6, s.height = 5, s.channels = 40, s.kernels = 16;
    s.pad_left = s.pad_top = 1;
    s.clip = 4;
    EXPECT_EQ(run_random("nv_full", s), 0u);
}

TEST(ConvInt, NvSmallAtomsOfEightChannels) {
    ConvSpec s;
    s.width = 10, s.height = 6, s.channels = 13, s.kernels = 10, s.kernel_w = 2, s.kernel_h = 4;
    s.pad_left = 1, s.pad_bottom = 2, s.pad_value = 0x33;
    s.clip = 2;
    EXPECT_EQ(run_random("nv_small", s), 0u);
}

TEST(ConvInt, Int16WithClipTruncate) {
    ConvSpec s;
    s.precision = Precision::Int16;
    s.width = 7, s.height = 6, s.channels = 37, s.kernels = 19;
    s.pad_left = s.pad_right = s.pad_top = s.pad_bottom = 1;
    s.pad_value = 0x8123;
    s.clip = 16;
    EXPECT_EQ(run_random("nv_full", s), 0u);
}

TEST(ConvInt, Int16SaturatesToInt32AndCounts) {
    // Full-range int16 without truncation: most sums leave the int32 range.
    ConvSpec s;
    s.precision = Precision::Int16;
    s.width = 4, s.height = 4, s.channels = 64, s.kernels = 16;
    s.clip = 0;
    Rig rig("nv_full");
    IntCase c{s, {}, {}};
    c.input.assign(size_t(16) * 64, -32768);
    c.weights.assign(size_t(16) * 64 * 9, 0);
    for (uint32_t k = 0; k < 16; ++k)
        for (uint32_t i = 0; i < 64 * 9; ++i)
            c.weights[k * 64 * 9 + i] = (k % 2) ? 32767 : -32768;  // odd kernels go negative
    uint32_t want_saturations = 0;
    EXPECT_EQ(check_int_case(rig, c, &want_saturations), 0u);
    EXPECT_EQ(want_saturations, 16u * 2 * 2);
    EXPECT_EQ(rig.group_value(NVDLA_UNIT_CACC, NVDLA_CACC_D_OUT_SATURATION), want_saturations);
}

TEST(ConvInt, CaccRoundsHalfAwayFromZero) {
    // One input of 1 against kernels of +-3, +-5 and +-6, CLIP_TRUNCATE 1.
    Rig rig("nv_full");
    IntCase c;
    c.spec.width = c.spec.height = 1, c.spec.channels = 1, c.spec.kernels = 6;
    c.spec.kernel_w = c.spec.kernel_h = 1;
    c.spec.clip = 1;
    c.input = {1};
    c.weights = {3, -3, 5, -5, 6, -6};
    c.load(rig);
    const AccumulatorCube out = rig.execute();
    ASSERT_EQ(out.planar().size(), 6u);
    EXPECT_EQ(out.planar(), (std::vector<int32_t>{2, -2, 3, -3, 3, -3}));
    EXPECT_EQ(rig.group_value(NVDLA_UNIT_CACC, NVDLA_CACC_D_OUT_SATURATION), 0u);
}

TEST(ConvInt, FortyEightBitAssemblySaturates) {
    // 131072 products of (-32768)^2 = 2^30 reach 2^47 exactly; the 48-bit assembly buffer
    // stops at 2^47 - 1 (the register limit BYTE_PER_KERNEL < 2^18 keeps every sum within
    // 2^47, so this is the only way to saturate it). CLIP_TRUNCATE 17 shows the missing unit
    // was there: (2^47 - 1) / 2^17 rounds to 2^30 like 2^47 would, so look below the delivery.
    ConvSpec s;
    s.precision = Precision::Int16;
    s.width = s.height = 16, s.kernel_w = s.kernel_h = 16, s.channels = 512, s.kernels = 1;
    s.clip = 17;
    Rig rig("nv_full");
    IntCase c{s, {}, {}};
    c.input.assign(size_t(16) * 16 * 512, -32768);
    c.weights.assign(size_t(16) * 16 * 512, -32768);
    EXPECT_EQ(conv::cacc_accumulate_int(conv::kAccumulatorMax - 5, 10), conv::kAccumulatorMax);
    EXPECT_EQ(conv::cacc_accumulate_int(conv::kAccumulatorMin + 5, -10), conv::kAccumulatorMin);
    c.load(rig);
    const AccumulatorCube out = rig.execute();
    ASSERT_EQ(out.planar().size(), 1u);
    EXPECT_EQ(out.at(0, 0, 0, 0), 1 << 30);
    EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
}

TEST(ConvInt, EveryMacKernelGivesTheSameBits) {
    ConvSpec s8;
    s8.width = 13, s8.height = 5, s8.channels = 45, s8.kernels = 70;  // tails everywhere
    s8.kernel_w = 3, s8.kernel_h = 2, s8.stride_x = 2, s8.pad_left = 1, s8.pad_right = 2;
    s8.pad_value = 0x9c;
    s8.clip = 6;
    ConvSpec s16 = s8;
    s16.precision = Precision::Int16;
    s16.pad_value = 0x9c42;
    s16.clip = 14;
    for (conv::MacKernel k :
         {conv::MacKernel::Scalar, conv::MacKernel::Avx2, conv::MacKernel::Avx512,
          conv::MacKernel::Avx512Vnni, conv::MacKernel::OneDnn}) {
        conv::force_mac_kernel(k);
        EXPECT_EQ(run_random("nv_full", s8), 0u) << "int8, kernel " << int(k);
        EXPECT_EQ(run_random("nv_full", s16), 0u) << "int16, kernel " << int(k);
    }
    conv::force_mac_kernel(conv::MacKernel::Auto);
}

// Every instruction-set level this CPU runs (NVDLA_EMU_ISA's limit set directly), each with
// its kernels: the same bits as the textbook convolution.
TEST(ConvInt, EveryIsaLevelGivesTheSameBits) {
    ConvSpec odd;  // odd depth, kernels not a whole block, strides and padding
    odd.width = 11, odd.height = 4, odd.channels = 37, odd.kernels = 21;
    odd.kernel_w = 3, odd.kernel_h = 3, odd.stride_y = 2, odd.pad_left = 2, odd.pad_top = 1;
    odd.pad_value = 0x81;
    odd.clip = 5;
    ConvSpec whole = odd;  // kernels in whole blocks: written in place
    whole.channels = 64, whole.kernels = 48, whole.dilation_x = 2, whole.clip = 0;
    ConvSpec long_kernel;  // 9 x 8000 products: one int32 run still holds them
    long_kernel.width = long_kernel.height = 3, long_kernel.channels = 8000;
    long_kernel.kernels = 3, long_kernel.kernel_w = long_kernel.kernel_h = 3;
    long_kernel.clip = 9;
    ConvSpec wide16 = odd;
    wide16.precision = Precision::Int16;
    wide16.pad_value = 0x8123;
    wide16.clip = 12;
    const IsaLevel restore = isa_limit_from_environment();
    for (IsaLevel level : {IsaLevel::Scalar, IsaLevel::Avx2, IsaLevel::Avx512}) {
        set_isa_limit(level);
        if (isa_level() != level) continue;  // the CPU does not run it
        if (level == IsaLevel::Avx2) {
            EXPECT_EQ(conv::active_mac_kernel(Precision::Int8), conv::MacKernel::Avx2);
            EXPECT_FALSE(conv::mac_wants_biased_bytes(Precision::Int8));
        }
        for (const ConvSpec* s : {&odd, &whole, &long_kernel, &wide16})
            EXPECT_EQ(run_random("nv_full", *s), 0u)
                << isa_name(level) << ", " << s->channels << " channels";
        EXPECT_EQ(run_random("nv_small", odd), 0u) << isa_name(level);
    }
    set_isa_limit(restore);
}

// Below AVX-512 oneDNN is left alone even when asked for: the level's own kernels compute.
TEST(ConvInt, IsaLimitKeepsOneDnnOut) {
    ConvSpec s;
    s.width = s.height = 8, s.channels = 32, s.kernels = 16, s.kernel_w = s.kernel_h = 3;
    conv::force_mac_kernel(conv::MacKernel::OneDnn);
    set_isa_limit(IsaLevel::Avx2);
    const uint64_t before = conv::onednn_layers();
    EXPECT_EQ(run_random("nv_full", s), 0u);
    EXPECT_EQ(conv::onednn_layers(), before);
    set_isa_limit(isa_limit_from_environment());
    conv::force_mac_kernel(conv::MacKernel::Auto);
}

TEST(ConvInt, LongKernelsAccumulateBeyondInt32) {
    // 3x3x8192 int8 products: more than the VNNI kernel's int32 runs hold at once.
    ConvSpec s;
    s.width = s.height = 3, s.channels = 8192, s.kernels = 3;
    s.clip = 8;
    EXPECT_EQ(run_random("nv_full", s), 0u);
}

TEST(ConvInt, ConvertorOnFeatureData) {
    // D_CVT_CFG on feature data: (x - offset) * scale >> truncate, rounded, saturated to int8.
    Rig rig("nv_full");
    IntCase c;
    c.spec.width = 4, c.spec.height = 1, c.spec.channels = 1, c.spec.kernels = 1;
    c.spec.kernel_w = c.spec.kernel_h = 1;
    c.input = {10, -7, 127, -128};
    c.weights = {1};
    c.load(rig);
    rig.set("CDMA", "D_CVT_CFG", 2 << 4 | 1);  // truncate 2, enabled
    rig.set("CDMA", "D_CVT_OFFSET", 3);
    rig.set("CDMA", "D_CVT_SCALE", 6);
    const AccumulatorCube out = rig.execute();
    // (10-3)*6/4 = 10.5 -> 11; (-7-3)*6/4 = -15; (127-3)*6/4 = 186 -> 127; (-131)*6/4 -> -128.
    EXPECT_EQ(out.planar(), (std::vector<int32_t>{11, -15, 127, -128}));
}

// int8 data that no later layer can reuse stays in CDMA's atoms and CSC builds its plane from
// them (ConvData::in_atoms); with SKIP_DATA_RLS CDMA copies it into (n, h, w, c) first, the plain
// path. Random layers (channels below, at and past whole atoms, the stem's 3, padding with pad
// values, strides, batches; memory's lanes past the channels holding junk, which CSC must read
// as 0; a fetch that faults) give the same bits both ways, on every level, every kernel (oneDNN
// takes its own int8 plane), nv_full's and nv_small's atoms, one and two threads, each after a
// larger layer whose plane the scratch still holds.
TEST(ConvInt, PlaneFromTheAtomsEqualsPlaneFromTheCopiedData) {
    auto rng = test::rng_for_test();
    constexpr uint32_t kSkipDataRelease = 1u << 24;
    const uint32_t channel_choices[] = {1, 3, 4, 8, 16, 24, 30, 32, 33, 45, 63, 64, 96, 100};
    for (int i = 0; i < 40; ++i) {
        ConvSpec s;
        s.batches = rng() % 4 ? 1 : 2;
        s.channels = channel_choices[rng() % std::size(channel_choices)];
        // Up to 4 channels (a stem) also rows of 16 columns and more (taken 16 at a time).
        s.width = 1 + static_cast<uint32_t>(rng() % (s.channels <= 4 ? 40 : 12));
        s.height = 1 + static_cast<uint32_t>(rng() % 7);
        s.kernels = 1 + static_cast<uint32_t>(rng() % 40);
        s.kernel_w = s.kernel_h = rng() % 2 ? 1 : 3;
        s.pad_left = static_cast<uint32_t>(rng() % 2),
        s.pad_right = static_cast<uint32_t>(rng() % 3);
        s.pad_top = static_cast<uint32_t>(rng() % 2),
        s.pad_bottom = static_cast<uint32_t>(rng() % 2);
        if (s.width + s.pad_left + s.pad_right < s.kernel_w) s.pad_right = s.kernel_w;
        if (s.height + s.pad_top + s.pad_bottom < s.kernel_h) s.pad_bottom = s.kernel_h;
        s.stride_x = 1 + static_cast<uint32_t>(rng() % 2);
        s.pad_value = static_cast<uint16_t>(rng() % 2 ? 0 : rng());
        s.clip = static_cast<uint32_t>(rng() % 6);
        const char* config = i % 3 == 2 ? "nv_small" : "nv_full";
        const bool faults = i % 10 == 9;  // no memory at the data address
        const uint64_t seed = rng();
        const auto run = [&](uint32_t misc, unsigned threads) {
            Rig rig(config);
            rig.set_threads(threads);
            std::mt19937_64 values(seed);
            // A larger layer first: the case's plane lands on scratch holding that one's.
            IntCase previous{s, {}, {}};
            previous.spec.width += 5, previous.spec.height += 3, previous.spec.channels = 70;
            previous.spec.pad_left = previous.spec.pad_top = 2, previous.spec.pad_value = 0x5a;
            previous.fill_random(values);
            previous.load(rig);
            rig.execute();
            IntCase c{s, {}, {}};
            c.spec.misc_extra = misc;
            c.fill_random(values);
            c.load(rig);
            if (faults) rig.set("CDMA", "D_DAIN_ADDR_HIGH_0", 0x7);
            const CubeLayout layout{rig.cfg().atom_bytes, 1, s.width, s.height, s.channels};
            uint8_t* data = rig.region(kDataBase, layout.batch() * s.batches);
            const uint32_t lanes = rig.cfg().atom_bytes;
            for (uint32_t n = 0; n < s.batches; ++n)  // junk past the channels
                for (uint32_t h = 0; h < s.height; ++h)
                    for (uint32_t w = 0; w < s.width; ++w)
                        for (uint32_t c8 = s.channels; c8 % lanes != 0; ++c8)
                            data[layout.offset(n, c8, h, w)] = static_cast<uint8_t>(values());
            return rig.execute().planar();
        };
        const std::vector<int32_t> reference = [&] {
            const IsaLimit limit(IsaLevel::Scalar);
            return run(kSkipDataRelease, 1);
        }();
        ASSERT_FALSE(reference.empty()) << "layer " << i;
        for (IsaLevel level : levels_of_this_cpu()) {
            const IsaLimit limit(level);
            for (conv::MacKernel kernel : {conv::MacKernel::Auto, conv::MacKernel::OneDnn}) {
                conv::force_mac_kernel(kernel);
                for (unsigned threads : {1u, 2u})
                    for (uint32_t misc : {0u, kSkipDataRelease})
                        EXPECT_EQ(run(misc, threads), reference)
                            << "layer " << i << ", " << isa_name(level) << ", kernel "
                            << int(kernel) << ", " << threads << " threads, misc " << misc;
            }
            conv::force_mac_kernel(conv::MacKernel::Auto);
        }
    }
}

}  // namespace
}  // namespace nvdla::emu::conv_test
