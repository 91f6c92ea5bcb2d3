// CACC's fp48 -> fp32 delivery (cacc_fp48_to_fp32) runs without branches on the sign and the
// rounding bit; checked here against the C model's branching form (cacc.cpp's before, kept
// below as the reference) on every exponent with mantissas at the rounding boundary, rounding
// carries into the next power of two, -2^39, zero, NaNs and random accumulators; and the vector
// form the fp16 kernels deliver with (cacc_fp48_to_fp32_lanes) against it on every level.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"
#include "isa_levels.hpp"

namespace nvdla::emu::conv {
namespace {

constexpr uint64_t kMask40 = (uint64_t(1) << 40) - 1;

uint32_t bit_of(uint64_t v, unsigned i) {
    return static_cast<uint32_t>((v >> i) & 1u);
}

// The C model's conversion (NV_NVDLA_CACC_calc_fp16: fp48 to fp32), branch for branch.
uint32_t reference_fp48_to_fp32(uint64_t accumulator) {
    const uint32_t exp = static_cast<uint32_t>((accumulator >> 40) & 0xffu);
    const uint64_t mant_u = accumulator & kMask40;
    const uint32_t sign = bit_of(mant_u, 39);
    if (exp == 0xff)
        return (sign << 31) | (0xffu << 23) | static_cast<uint32_t>((mant_u >> 29) & 0x3ffu);
    const uint64_t low39 = mant_u & ((uint64_t(1) << 39) - 1);
    if (sign && low39 == 0) return (1u << 31) | (((exp + 65) & 0xffu) << 23);
    const uint64_t magnitude = sign ? ((~low39 + 1) & ((uint64_t(1) << 39) - 1)) : low39;
    const uint64_t mant_o = (uint64_t(sign) << 39) | magnitude;
    uint32_t exp_out = mant_u == 0 ? 0 : (exp + 64) & 0xffu;
    uint32_t fraction;
    if (bit_of(mant_o, 14)) {
        uint64_t t = ((mant_o >> 15) + 1) & ((uint64_t(1) << 25) - 1);
        if (bit_of(t, 24) != bit_of(mant_o, 39)) {
            t = (uint64_t(sign) << 24) | (t >> 1);
            exp_out = (exp_out + 1) & 0xffu;
        }
        fraction = static_cast<uint32_t>(t & 0x7fffffu);
    } else {
        fraction = static_cast<uint32_t>((mant_o >> 15) & 0x7fffffu);
    }
    return (sign << 31) | (exp_out << 23) | fraction;
}

uint64_t fp48(uint64_t exponent, uint64_t mantissa) {
    return (exponent & 0xffu) << 40 | (mantissa & kMask40);
}

TEST(CaccFp48ToFp32, EqualsTheBranchingFormAtEveryExponent) {
    // Magnitudes whose bits 14 and up are at the rounding boundary: all ones above bit 14
    // (the round up carries into bit 39), bit 14 alone, bit 14 with ones below, powers of
    // two, and their two's-complement negations.
    std::vector<uint64_t> mantissas = {0,
                                       uint64_t(1) << 39,
                                       (uint64_t(1) << 39) - 1,
                                       (uint64_t(1) << 39) - (uint64_t(1) << 14),
                                       (uint64_t(1) << 39) - (uint64_t(1) << 15),
                                       (uint64_t(1) << 38) | (uint64_t(1) << 14),
                                       (uint64_t(1) << 38) | 0x3fff,
                                       (uint64_t(1) << 38) | 0x7fff,
                                       (uint64_t(1) << 38) | 0x4000 | 1,
                                       uint64_t(1) << 14,
                                       uint64_t(1) << 15,
                                       0x7fff,
                                       1};
    for (unsigned b = 0; b < 40; ++b) mantissas.push_back(uint64_t(1) << b);
    const size_t base = mantissas.size();
    for (size_t i = 0; i < base; ++i) mantissas.push_back((~mantissas[i] + 1) & kMask40);
    int rounded_up = 0, carried = 0;
    for (uint64_t exponent = 0; exponent < 256; ++exponent)
        for (uint64_t m : mantissas) {
            const uint64_t acc = fp48(exponent, m);
            ASSERT_EQ(cacc_fp48_to_fp32(acc), reference_fp48_to_fp32(acc))
                << "exponent " << exponent << ", mantissa 0x" << std::hex << m;
        }
    std::mt19937_64 rng(48);
    for (int i = 0; i < 2000000; ++i) {
        const uint64_t r = rng();
        // Random fields, a third of them with the low 15 bits at the boundary.
        uint64_t m = r & kMask40;
        if (i % 3 == 1) m = (m & ~uint64_t(0x7fff)) | 0x4000 | (rng() % 2 ? 0 : rng() & 0x3fff);
        if (i % 3 == 2) m |= ~uint64_t(0x7fff) & ((uint64_t(1) << 39) - 1);
        const uint64_t acc = fp48(r >> 40, m);
        const uint32_t want = reference_fp48_to_fp32(acc);
        ASSERT_EQ(cacc_fp48_to_fp32(acc), want) << "accumulator 0x" << std::hex << acc;
        rounded_up += ((acc >> 40 & 0xff) != 0xff) && bit_of(m, 14);
        carried += ((acc >> 40 & 0xff) != 0xff) && (want >> 23 & 0xff) != 0 &&
                   (want >> 23 & 0xff) == (((acc >> 40) + 65) & 0xff);
    }
    // Both rounding forms were met often.
    EXPECT_GT(rounded_up, 500000);
    EXPECT_GT(carried, 50000);
}

TEST(CaccFp48ToFp32, LanesEqualTheScalarDeliveryOnEveryLevel) {
    // The boundary mantissas above at every exponent (NaNs and -2^39 among them), then random
    // accumulators, converted in runs of 1 .. 17 (whole vectors and tails).
    std::vector<uint64_t> accumulators;
    std::vector<uint64_t> mantissas = {0,
                                       uint64_t(1) << 39,
                                       (uint64_t(1) << 39) - 1,
                                       (uint64_t(1) << 39) - (uint64_t(1) << 14),
                                       (uint64_t(1) << 38) | (uint64_t(1) << 14),
                                       (uint64_t(1) << 38) | 0x3fff,
                                       (uint64_t(1) << 38) | 0x4000 | 1,
                                       uint64_t(1) << 14,
                                       1};
    const size_t base = mantissas.size();
    for (size_t i = 0; i < base; ++i) mantissas.push_back((~mantissas[i] + 1) & kMask40);
    for (uint64_t exponent = 0; exponent < 256; ++exponent)
        for (uint64_t m : mantissas) accumulators.push_back(fp48(exponent, m));
    std::mt19937_64 rng(4832);
    for (int i = 0; i < 200000; ++i) {
        uint64_t m = rng() & kMask40;
        if (i % 3 == 1) m = (m & ~uint64_t(0x7fff)) | 0x4000;
        if (i % 3 == 2) m |= ~uint64_t(0x7fff) & ((uint64_t(1) << 39) - 1);
        accumulators.push_back(fp48(rng() >> 56, m));
    }
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        std::vector<uint32_t> out(accumulators.size() + 1);
        size_t at = 0;
        for (unsigned n = 1; at < accumulators.size(); n = n % 17 + 1) {
            const unsigned count = unsigned(std::min<size_t>(n, accumulators.size() - at));
            out[at + count] = 0x5a5a5a5a;  // past the run: must stay as it is
            cacc_fp48_to_fp32_lanes(accumulators.data() + at, count, out.data() + at);
            ASSERT_EQ(out[at + count], 0x5a5a5a5au)
                << "level " << int(level) << ", run of " << count;
            for (unsigned i = 0; i < count; ++i)
                ASSERT_EQ(out[at + i], cacc_fp48_to_fp32(accumulators[at + i]))
                    << "level " << int(level) << ", accumulator 0x" << std::hex
                    << accumulators[at + i];
            at += count;
        }
    }
}

}  // namespace
}  // namespace nvdla::emu::conv
