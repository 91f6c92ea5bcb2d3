// The emulator's fast paths against its plain ones: the vectorised fp16 MAC cell against the
// scalar cell kept as the reference (cmac_fp16_dot_scalar), on every instruction-set level
// this CPU runs (NVDLA_EMU_ISA's limit set directly); whole layers the same bit for bit on
// every level and for any thread count.
#include <gtest/gtest.h>

#include <mutex>
#include <random>

#include "conv_test_rig.hpp"
#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"
#include "emu/parallel.hpp"

namespace nvdla::emu::conv_test {
namespace {

// Sets the ISA limit for a scope.
class IsaLimit {
  public:
    explicit IsaLimit(IsaLevel level) { set_isa_limit(level); }
    ~IsaLimit() { set_isa_limit(isa_limit_from_environment()); }
    IsaLimit(const IsaLimit&) = delete;
    IsaLimit& operator=(const IsaLimit&) = delete;
};

std::vector<IsaLevel> levels_of_this_cpu() {
    std::vector<IsaLevel> levels;
    for (IsaLevel level : {IsaLevel::Scalar, IsaLevel::Avx2, IsaLevel::Avx512}) {
        const IsaLimit limit(level);
        if (isa_level() == level) levels.push_back(level);
    }
    return levels;
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
