// The vector forms of SDP's fp16-pipeline stages (sdp_float_simd.cpp) against the scalar stages
// (force_scalar): random X stages, Y stages without the LUT and the fp16 output convertor on
// lines of fp32 patterns that mix ordinary values (exponents within and beyond the model's 25
// alignment bits of each other, sums that cancel, products that overflow or fall below 2^-126)
// with NaNs, infinities, denormals, -0 and fp16's limits, and fp16 operands likewise, at every
// vector level this CPU runs. Reported skipped (never passed) only on a CPU without AVX2.
#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <vector>

#include "emu/isa.hpp"
#include "emu/sdp_internal.hpp"
#include "isa_levels.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::emu::sdp {
namespace {

uint32_t pick(std::mt19937_64& rng, uint32_t n) {
    return static_cast<uint32_t>(rng() % n);
}

uint32_t with_exponent(std::mt19937_64& rng, uint32_t exponent) {
    return (pick(rng, 2) << 31) | (exponent << 23) | pick(rng, 1u << 23);
}

// An fp32 pattern: mostly ordinary values around 1, some huge or tiny ones, special ones, and
// any bits at all.
uint32_t awkward32(std::mt19937_64& rng) {
    static constexpr uint32_t kSpecial[] = {
        0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001,
        0x00000001, 0x807fffff, 0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff, 0x477fe000,
        0x477ff000, 0xc77ff000, 0x477fefff, 0x33000000, 0x33000001, 0xb3800000, 0x38800000,
        0x387fe000, 0x3f800000, 0xbf800000, 0x00ffffff, 0x01000000};
    switch (pick(rng, 10)) {
        case 0: return with_exponent(rng, 1 + pick(rng, 30));                 // tiny
        case 1: return with_exponent(rng, 224 + pick(rng, 31));               // huge
        case 2: return kSpecial[pick(rng, std::size(kSpecial))];              // limits
        case 3: return static_cast<uint32_t>(rng());                          // anything
        case 4: return with_exponent(rng, 95 + pick(rng, 50)) & 0xffffe000u;  // fp16-like
        default: return with_exponent(rng, 97 + pick(rng, 61));  // ordinary, +-30 around 1
    }
}

// An fp16 operand pattern: mostly ordinary, some of fp16's special values, any bits.
int16_t awkward16(std::mt19937_64& rng) {
    static constexpr uint16_t kSpecial[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01,
                                            0xfdff, 0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff,
                                            0x3c00, 0xbc00, 0x0200, 0x3555};
    uint16_t h;
    switch (pick(rng, 6)) {
        case 0: h = kSpecial[pick(rng, std::size(kSpecial))]; break;
        case 1: h = static_cast<uint16_t>(rng()); break;
        default:
            h = static_cast<uint16_t>((pick(rng, 2) << 15) | ((1 + pick(rng, 30)) << 10) |
                                      pick(rng, 1024));
            break;
    }
    return static_cast<int16_t>(h);
}

// A line whose values are sometimes the exact negation, or the copy, of the operand they meet
// (sums that cancel to +-0, MAX/MIN/EQL of equal values).
std::vector<int32_t> line_against(std::mt19937_64& rng, size_t n,
                                  const std::vector<int16_t>* operands, uint32_t reg) {
    std::vector<int32_t> line(n);
    for (size_t i = 0; i < n; ++i) {
        uint32_t v = awkward32(rng);
        if (pick(rng, 6) == 0) {
            const uint32_t op =
                operands ? precision::fp16_to_fp32(static_cast<uint16_t>((*operands)[i])) : reg;
            v = op ^ (pick(rng, 2) << 31);
        }
        line[i] = static_cast<int32_t>(v);
    }
    return line;
}

std::vector<int16_t> operand_line(std::mt19937_64& rng, size_t n) {
    std::vector<int16_t> v(n);
    for (int16_t& x : v) x = awkward16(rng);
    return v;
}

// Line lengths: whole vectors of both widths and tails.
size_t random_length(std::mt19937_64& rng) {
    return pick(rng, 3) == 0 ? 1 + pick(rng, 40) : 16 * (1 + pick(rng, 8));
}

// Runs check at every vector level this CPU has; false when it has none.
template <class Check>
bool at_every_vector_level(Check check) {
    const std::vector<IsaLevel> levels = vector_levels();
    for (IsaLevel level : levels) {
        const IsaLimit limit(level);
        SCOPED_TRACE(isa_name(level));
        EXPECT_TRUE(float_simd_enabled());
        check();
        if (::testing::Test::HasFatalFailure()) break;
    }
    return !levels.empty();
}

TEST(SdpFloatSimd, XStagesMatchScalar) {
    const bool ran = at_every_vector_level([] {
        std::mt19937_64 rng(1301);
        for (int trial = 0; trial < 3000; ++trial) {
            XStage x;
            x.enabled = true;
            x.alu_bypass = pick(rng, 4) == 0;
            x.alu_algo = pick(rng, 4);
            x.mul_bypass = pick(rng, 3) == 0;
            x.prelu = pick(rng, 3) == 0;
            x.relu_bypass = pick(rng, 2) == 0;
            x.alu_operand = awkward16(rng);
            x.mul_operand = awkward16(rng);
            const bool nan_to_zero = pick(rng, 2) == 0;
            const size_t n = random_length(rng);
            const std::vector<int16_t> alu = operand_line(rng, n), mul = operand_line(rng, n);
            OperandLine ops;
            if (pick(rng, 2)) ops.alu = alu.data();
            if (pick(rng, 2)) ops.mul = mul.data();
            const uint32_t reg = precision::fp16_to_fp32(static_cast<uint16_t>(x.alu_operand));
            std::vector<int32_t> expected = line_against(rng, n, ops.alu ? &alu : nullptr, reg);
            std::vector<int32_t> got = expected;
            force_scalar(true);
            run_x(x, true, nan_to_zero, expected, ops);
            force_scalar(false);
            run_x(x, true, nan_to_zero, got, ops);
            ASSERT_EQ(got, expected) << "trial " << trial;
        }
    });
    if (!ran) GTEST_SKIP() << "this CPU has no AVX2";
}

TEST(SdpFloatSimd, YStagesMatchScalar) {
    const bool ran = at_every_vector_level([] {
        std::mt19937_64 rng(1302);
        for (int trial = 0; trial < 3000; ++trial) {
            Settings s;
            s.proc = s.input = s.output = Precision::Fp16;
            s.nan_to_zero = pick(rng, 2) == 0;
            YStage& y = s.ew;
            y.enabled = true;
            y.alu_bypass = pick(rng, 4) == 0;
            y.alu_algo = pick(rng, 4);
            y.mul_bypass = pick(rng, 3) == 0;
            y.prelu = pick(rng, 3) == 0;
            y.alu_operand = pick(rng, 2)
                                ? precision::fp16_to_fp32(static_cast<uint16_t>(awkward16(rng)))
                                : awkward32(rng);
            y.mul_operand = awkward32(rng);
            const size_t n = random_length(rng);
            const std::vector<int16_t> alu = operand_line(rng, n), mul = operand_line(rng, n);
            OperandLine ops;
            if (pick(rng, 2)) ops.alu = alu.data();
            if (pick(rng, 2)) ops.mul = mul.data();
            std::vector<int32_t> expected =
                line_against(rng, n, ops.alu ? &alu : nullptr, y.alu_operand);
            std::vector<int32_t> got = expected;
            Counters scalar_counters, vector_counters;
            force_scalar(true);
            run_y(s, expected, ops, scalar_counters);
            force_scalar(false);
            run_y(s, got, ops, vector_counters);
            ASSERT_EQ(got, expected) << "trial " << trial;
        }
    });
    if (!ran) GTEST_SKIP() << "this CPU has no AVX2";
}

TEST(SdpFloatSimd, OutputConvertorMatchesScalar) {
    const bool ran = at_every_vector_level([] {
        std::mt19937_64 rng(1303);
        Settings s;
        s.proc = s.input = s.output = Precision::Fp16;
        for (int trial = 0; trial < 3000; ++trial) {
            const size_t n = random_length(rng);
            std::vector<int32_t> line(n);
            for (int32_t& v : line) v = static_cast<int32_t>(awkward32(rng));
            std::vector<uint16_t> expected(n), got(n);
            Counters scalar_counters, vector_counters;
            force_scalar(true);
            run_c(s, line, expected, scalar_counters);
            force_scalar(false);
            run_c(s, line, got, vector_counters);
            ASSERT_EQ(got, expected) << "trial " << trial;
            ASSERT_EQ(vector_counters.saturations, scalar_counters.saturations);
            ASSERT_EQ(vector_counters.output_nans, scalar_counters.output_nans);
        }
    });
    if (!ran) GTEST_SKIP() << "this CPU has no AVX2";
}

// fp16 operands (powers of two among them) plus line values at every exponent distance from
// -40 to 40 (powers of two and all-ones mantissas among them), through X's SUM: within and
// beyond the model's 25 alignment bits, where it truncates the smaller addend.
TEST(SdpFloatSimd, SumsAtEveryExponentDistance) {
    const bool ran = at_every_vector_level([] {
        std::mt19937_64 rng(1304);
        XStage x;
        x.enabled = true;
        x.alu_bypass = false;
        x.alu_algo = 2;
        for (uint32_t round = 0; round < 60; ++round) {
            // Operands 2^-14 .. 2^15 (fp16 normals), powers of two in the second half; the line
            // at exponent distances -40..40.
            const uint32_t e = 1 + round % 30;
            x.alu_operand = static_cast<int16_t>((pick(rng, 2) << 15) | (e << 10) |
                                                 (round >= 30 ? 0 : pick(rng, 1024)));
            const uint32_t operand_exponent = e + 112;
            std::vector<int32_t> expected;
            for (int d = -40; d <= 40; ++d)
                for (int k = 0; k < 4; ++k) {
                    const int exponent = int(operand_exponent) + d;
                    uint32_t v =
                        with_exponent(rng, static_cast<uint32_t>(std::clamp(exponent, 1, 254)));
                    if (k == 0) v &= 0xff800000u;
                    if (k == 1) v |= 0x007fffffu;
                    expected.push_back(static_cast<int32_t>(v));
                }
            std::vector<int32_t> got = expected;
            force_scalar(true);
            run_x(x, true, false, expected, {});
            force_scalar(false);
            run_x(x, true, false, got, {});
            ASSERT_EQ(got, expected) << "round " << round;
        }
    });
    if (!ran) GTEST_SKIP() << "this CPU has no AVX2";
}

}  // namespace
}  // namespace nvdla::emu::sdp
