// CACC: the accumulator between CMAC and SDP (cmod/cacc/NV_NVDLA_cacc.cpp).
//
// Integers: partial sums add into a 48-bit assembly buffer that saturates (mac2accu), and the
// delivery divides by 2^CLIP_TRUNCATE rounding half away from zero, then saturates to int32,
// counting every clamped value in D_OUT_SATURATION (ReshapeSequencerDirectConvCommon).
//
// fp16: the CMAC results (6-bit exponent, 38-bit mantissa) add into a "fp48" accumulator of an
// 8-bit exponent (bias 63) and a 40-bit two's-complement mantissa normalised to bit 38, with
// guard/sticky rounding (cacc_fp16_add), and leave as fp32 (cacc_fp48_to_fp32). Ported bit for
// bit, including the exponent wrapping of the sc_uint<8> fields.
#include <cstdint>
#include "emu/conv_layer.hpp"

namespace nvdla::emu::conv {
namespace {

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

// The index of the highest set bit, -1 for 0.
int highest_bit(uint64_t v) {
    return v ? 63 - __builtin_clzll(v) : -1;
}

}  // namespace

uint32_t cacc_deliver_int(const int64_t* sums, size_t count, uint32_t clip, int32_t* out) {
    uint32_t saturations = 0;
    for (size_t i = 0; i < count; ++i) out[i] = cacc_deliver_one(sums[i], clip, saturations);
    return saturations;
}

uint64_t cacc_fp48_add(uint64_t accumulator, uint64_t mac) {
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

    // Normalise the CMAC mantissa to bit 36 and widen it to 40 bits: i is the highest bit below
    // the sign (37) that differs from it, -1 if none (the C model scans down from 36).
    const uint64_t mac_u = static_cast<uint64_t>(mac_mant);
    const uint64_t mac_differs =
        (mac_u ^ (bit(mac_u, 37) ? ~uint64_t(0) : 0)) & ((uint64_t(1) << 37) - 1);
    const int i = highest_bit(mac_differs);
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
        // j: the highest bit below the sign (39) that differs from it, -1 if none.
        const int j = highest_bit((sum_tmp_u ^ (bit(sum_tmp_u, 39) ? ~uint64_t(0) : 0)) &
                                  ((uint64_t(1) << 39) - 1));
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

uint32_t cacc_fp48_to_fp32(uint64_t accumulator) {
    const uint32_t exp = static_cast<uint32_t>((accumulator >> 40) & 0xffu);
    const uint64_t mant_u = accumulator & kMask40;
    const uint32_t sign = bit(mant_u, 39);
    if (exp == 0xff)  // NaN: the fp16 NaN's fraction in the low bits
        return (sign << 31) | (0xffu << 23) | static_cast<uint32_t>((mant_u >> 29) & 0x3ffu);
    const uint64_t low39 = mant_u & ((uint64_t(1) << 39) - 1);
    if (sign && low39 == 0)  // -2^39: a power of two the magnitude form cannot hold
        return (1u << 31) | (((exp + 65) & 0xffu) << 23);
    // Sign and magnitude, the leading one at bit 38. The rest without branches: the sign and
    // the rounding bit are random per output.
    const uint64_t negate = uint64_t(0) - sign;
    const uint64_t magnitude = ((low39 ^ negate) + sign) & ((uint64_t(1) << 39) - 1);
    const uint64_t mant_o = (uint64_t(sign) << 39) | magnitude;
    const uint32_t exp_out = mant_u == 0 ? 0 : (exp + 64) & 0xffu;
    // Round half up on the magnitude. Without a round up, bit 24 of t is the sign (bit 39 of
    // mant_o): no carry.
    const uint64_t t = ((mant_o >> 15) + bit(mant_o, 14)) & ((uint64_t(1) << 25) - 1);
    const uint32_t carry = bit(t, 24) ^ sign;
    const uint32_t fraction = static_cast<uint32_t>((t >> carry) & 0x7fffffu);
    return (sign << 31) | (((exp_out + carry) & 0xffu) << 23) | fraction;
}

}  // namespace nvdla::emu::conv
