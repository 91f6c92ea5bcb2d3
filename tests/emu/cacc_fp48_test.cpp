// CACC's fp16 assembly (cacc_fp48_add): the rounding of the bits an aligned operand loses,
// worked by hand. An fp48 accumulator is an 8-bit exponent over a 40-bit two's-complement
// mantissa; a CMAC result is a 6-bit exponent over a 38-bit one, widened by 4 and biased by 49.
#include <gtest/gtest.h>

#include <cstdint>

#include "emu/conv_layer.hpp"

namespace nvdla::emu::conv {
namespace {

constexpr uint64_t bit(unsigned n) {
    return uint64_t(1) << n;
}
// A CMAC result: exponent over a 38-bit mantissa.
constexpr uint64_t mac(uint64_t exponent, uint64_t mantissa38) {
    return exponent << 38 | (mantissa38 & (bit(38) - 1));
}
constexpr uint64_t fp48(uint64_t exponent, uint64_t mantissa40) {
    return exponent << 40 | mantissa40;
}

// A positive sum: it rounds up when the first bit shifted out is set.
TEST(CaccFp48, FirstBitShiftedOutRoundsAPositiveSumUp) {
    // 2^36 at exponent 20: already normalised, widened to 2^38 at exponent 20 + 49.
    const uint64_t acc = cacc_fp48_add(0, mac(20, bit(36)));
    ASSERT_EQ(acc, fp48(69, bit(38)));
    // (2^36 + 1) * 4 at exponent 17 aligns 3 places right: 2^35 is kept and the bits shifted
    // out are 1, 0, 0 (the widening's two zeros last), so the sum 2^38 + 2^35 rounds up.
    EXPECT_EQ(cacc_fp48_add(acc, mac(17, bit(36) + 1)), fp48(69, bit(38) + bit(35) + 1));
    // 2^36 * 4 loses only zeros: exact.
    EXPECT_EQ(cacc_fp48_add(acc, mac(17, bit(36))), fp48(69, bit(38) + bit(35)));
}

// A negative sum rounds up only when a bit after the first one shifted out is set too.
TEST(CaccFp48, NegativeSumsRoundUpOnlyWithAStickyBit) {
    // -2^37 + 2^35 at exponent 20 (bit 36 differs from the sign: normalised), widened.
    const uint64_t negative = (bit(38) - bit(37) + bit(35)) & (bit(38) - 1);
    const uint64_t acc = cacc_fp48_add(0, mac(20, negative));
    ASSERT_EQ(acc, fp48(69, bit(39) + bit(37)));  // -2^39 + 2^37 in 40 bits
    // (2^36 + 3) * 4 at exponent 16 aligns 4 places right: 2^34 is kept, 1, 1, 0, 0 shifted out.
    EXPECT_EQ(cacc_fp48_add(acc, mac(16, bit(36) + 3)), fp48(69, bit(39) + bit(37) + bit(34) + 1));
    // (2^36 + 2) * 4: 1, 0, 0, 0 shifted out, a tie without sticky bits: truncated.
    EXPECT_EQ(cacc_fp48_add(acc, mac(16, bit(36) + 2)), fp48(69, bit(39) + bit(37) + bit(34)));
}

}  // namespace
}  // namespace nvdla::emu::conv
