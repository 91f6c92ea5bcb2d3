// The fp16 kernels add a chain of CMAC results into CACC's fp48 sum as one addition where no
// addition of the chain rounds (cmac_fp16_lanes.inc's fp48_sum): checked here against the
// chain of cacc_fp48_add, on every instruction-set level this CPU runs, for sums just below,
// at and above the limit (2^37 at the smallest exponent), exact cancellations, zero results of
// every exponent, NaN results and exponents far apart.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <random>
#include <vector>

#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"
#include "isa_levels.hpp"

namespace nvdla::emu::conv {
namespace {

constexpr uint64_t kMask38 = (uint64_t(1) << 38) - 1;

uint64_t cmac_result(uint64_t exponent, int64_t mantissa) {
    return exponent << 38 | (static_cast<uint64_t>(mantissa) & kMask38);
}

int64_t mantissa_of(uint64_t mac) {
    const uint64_t m = mac & kMask38, top = uint64_t(1) << 37;
    return static_cast<int64_t>((m ^ top) - top);
}

// Whether the chain of `macs` rounds nowhere by this test's own reckoning: no NaN result, and
// the magnitudes scaled to the smallest exponent of a nonzero result add up below 2^37.
bool exact_by_bound(const std::vector<uint64_t>& macs) {
    int low = 64;
    for (uint64_t mac : macs)
        if (mantissa_of(mac) != 0) low = std::min(low, int(mac >> 38 & 0x3f));
    __int128 total = 0;
    for (uint64_t mac : macs) {
        const int64_t m = mantissa_of(mac);
        if (m == 0) continue;
        if ((mac >> 38 & 0x3f) == 0x3f) return false;
        const int scale = int(mac >> 38 & 0x3f) - low;
        total += static_cast<__int128>(m < 0 ? -m : m) << scale;
    }
    return total < (__int128(1) << 37);
}

// A lane's chain of n results: `kind` 0 random, 1 a bound just below, at or above the limit,
// 2 exact cancellations (partial sums of zero, sums -2^k), 3 zero results and NaNs among them.
std::vector<uint64_t> random_chain(std::mt19937_64& rng, unsigned n, int kind) {
    std::vector<uint64_t> macs(n);
    const uint64_t base = rng() % 15 * 4 + (rng() % 4 == 0 ? rng() % 4 : 0);
    const auto exponent = [&] { return std::min<uint64_t>(62, base + rng() % 3 * 4); };
    switch (kind) {
        case 0:
            for (auto& mac : macs)
                mac = cmac_result(rng() % 63, static_cast<int64_t>(rng() & kMask38) >>
                                                  (rng() % 38) << (rng() % 8));
            break;
        case 1: {
            // Terms at scales 0, 4 and 8 above the base, the first one filling the bound up
            // to 2^37 + delta; all of one sign now and then (the sum then is the bound).
            const int64_t delta = int64_t(rng() % 5) - 3;
            const bool one_sign = rng() % 2;
            const bool negative_sign = rng() % 2;
            __int128 rest = 0;
            for (unsigned t = 1; t < n; ++t) {
                const uint64_t e = exponent();
                const int scale = int(e - base);
                const int64_t magnitude = static_cast<int64_t>(rng() >> (rng() % 30 + 32)) >> scale;
                rest += static_cast<__int128>(magnitude) << scale;
                const bool negative = one_sign ? negative_sign : rng() % 2;
                macs[t] = cmac_result(e, negative ? -magnitude : magnitude);
            }
            const __int128 first = (__int128(1) << 37) + delta - rest;
            if (first <= 0 || first >= (__int128(1) << 37)) return random_chain(rng, n, 1);
            const int64_t m = static_cast<int64_t>(first);
            macs[0] = cmac_result(base, (one_sign ? negative_sign : rng() % 2) ? -m : m);
            break;
        }
        case 2: {
            // Pairs that cancel, and a last result of -2^k or 2^k.
            for (unsigned t = 0; t + 1 < n; t += 2) {
                const uint64_t e = exponent();
                const int64_t m = static_cast<int64_t>(rng() >> (rng() % 30 + 34));
                macs[t] = cmac_result(e, m);
                macs[t + 1] = cmac_result(e, -m);
            }
            const int64_t power = int64_t(1) << (rng() % 37);
            macs[n - 1] = cmac_result(exponent(), rng() % 2 ? -power : power);
            break;
        }
        default:
            for (auto& mac : macs) {
                const uint64_t r = rng() % 4;
                const int64_t m = static_cast<int64_t>(rng() >> (rng() % 30 + 34));
                mac = r == 0   ? cmac_result(rng() % 64, 0)  // zero, any exponent
                      : r == 1 ? cmac_result(0x3f, m | 1)    // NaN
                               : cmac_result(exponent(), rng() % 2 ? -m : m);
            }
    }
    return macs;
}

TEST(CaccFp48Sum, OneAdditionEqualsTheChain) {
    std::mt19937_64 rng(3707);
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        uint64_t differ = 0, exact = 0, at_limit = 0, chains = 0;
        for (int i = 0; i < 6000; ++i) {
            const unsigned n = 1 + unsigned(rng() % 25);
            std::vector<uint64_t> macs(size_t(n) * 8);
            uint64_t expected[8];
            for (int lane = 0; lane < 8; ++lane) {
                const int kind = int(rng() % 4);
                const std::vector<uint64_t> chain = random_chain(rng, n, kind);
                uint64_t acc = 0;
                for (unsigned t = 0; t < n; ++t) {
                    macs[t * 8 + lane] = chain[t];
                    acc = cacc_fp48_add(acc, chain[t]);
                }
                expected[lane] = acc;
                ++chains;
                exact += exact_by_bound(chain);
                at_limit += kind == 1;
            }
            uint64_t out[8];
            cacc_fp48_sum_lanes(macs.data(), n, out);
            for (int lane = 0; lane < 8; ++lane) differ += out[lane] != expected[lane];
        }
        EXPECT_EQ(differ, 0u) << isa_name(level);
        // Both forms are exercised: many chains within the bound, many beyond it.
        EXPECT_GT(exact, chains / 5) << isa_name(level);
        EXPECT_LT(exact, chains * 4 / 5) << isa_name(level);
        EXPECT_GT(at_limit, chains / 5) << isa_name(level);
    }
}

// Sums exactly at the limit: 2^37 (one more than the 38-bit CMAC mantissa holds) and
// 2^37 - 1, of one sign, from two and from many results.
TEST(CaccFp48Sum, SumsAtTheLimit) {
    const int64_t limit = int64_t(1) << 37;
    const std::vector<std::vector<uint64_t>> chains = {
        {cmac_result(8, limit / 2), cmac_result(8, limit / 2)},
        {cmac_result(8, -limit / 2), cmac_result(8, -limit / 2)},
        {cmac_result(8, limit / 2), cmac_result(8, limit / 2 - 1)},
        {cmac_result(12, limit / 32), cmac_result(8, limit / 2)},
        {cmac_result(12, limit / 32), cmac_result(8, limit / 2 - 1)},
        {cmac_result(4, limit - 1)},
        {cmac_result(4, -limit)},
        {cmac_result(4, 3), cmac_result(44, 1)},
        {cmac_result(4, 3), cmac_result(40, 1)},
    };
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit_level(level);
        for (size_t c = 0; c < chains.size(); ++c) {
            const unsigned n = unsigned(chains[c].size());
            std::vector<uint64_t> macs(size_t(n) * 8);
            uint64_t acc = 0;
            for (unsigned t = 0; t < n; ++t) {
                for (int lane = 0; lane < 8; ++lane) macs[t * 8 + lane] = chains[c][t];
                acc = cacc_fp48_add(acc, chains[c][t]);
            }
            uint64_t out[8];
            cacc_fp48_sum_lanes(macs.data(), n, out);
            for (int lane = 0; lane < 8; ++lane)
                EXPECT_EQ(out[lane], acc) << "chain " << c << ", " << isa_name(level);
        }
    }
}

// One result alone is CACC's first addition into a cleared sum (fp48_sum normalises it
// without fp48_add): every exponent (the field wraps at 8 bits, 63 is a NaN) with mantissas
// of every leading-bit position, both signs, -2^k, -1, 0 and random low bits.
TEST(CaccFp48Sum, OneResultIsTheFirstAddition) {
    std::mt19937_64 rng(4801);
    std::vector<int64_t> mantissas = {0, 1, -1, 2, -2, (int64_t(1) << 37) - 1};
    for (int b = 0; b < 37; ++b) {
        const int64_t power = int64_t(1) << b;
        for (int64_t m : {power, -power, power | int64_t(rng() & uint64_t(power - 1)),
                          -power - int64_t(rng() & uint64_t(power - 1)), 2 * power - 1})
            mantissas.push_back(m);
    }
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        uint64_t differ = 0;
        for (uint64_t exponent = 0; exponent < 64; ++exponent)
            for (size_t i = 0; i < mantissas.size(); i += 8) {
                uint64_t macs[8], out[8];
                for (int lane = 0; lane < 8; ++lane)
                    macs[lane] = cmac_result(exponent, mantissas[(i + lane) % mantissas.size()]);
                cacc_fp48_sum_lanes(macs, 1, out);
                for (int lane = 0; lane < 8; ++lane)
                    differ += out[lane] != cacc_fp48_add(0, macs[lane]);
            }
        EXPECT_EQ(differ, 0u) << isa_name(level);
    }
}

// The band kernel's form (fp48_sum_products): its CMAC results as 32-bit products at
// exponents 0 .. 62, summed as doubles. A lane's chain: `kind` 0 products of random widths at
// exponents 0, 4 and 8 above a base (as a depthwise output's taps), 1 a bound just below, at or
// above 2^37 at the base, 2 exact cancellations, 3 zero products at any exponent (below the
// base too) and exponents far apart, 4 full 32-bit products (-2^31 among them).
std::vector<uint64_t> random_product_chain(std::mt19937_64& rng, unsigned n, int kind) {
    std::vector<uint64_t> macs(n);
    const uint64_t base = rng() % 12 * 4 + (rng() % 4 == 0 ? rng() % 4 : 0);
    const auto exponent = [&] { return base + rng() % 3 * 4; };
    const auto product = [&](int bits) {
        const int64_t m = static_cast<int64_t>(rng() >> (64 - bits));
        return rng() % 2 ? -m : m;
    };
    switch (kind) {
        case 0:
            for (auto& mac : macs) mac = cmac_result(exponent(), product(1 + int(rng() % 31)));
            break;
        case 1: {
            if (n < 2) return random_product_chain(rng, n, 0);
            // The rest well below 2^36, then two results making the bound 2^37 + delta.
            const int64_t delta = int64_t(rng() % 5) - 3;
            const bool one_sign = rng() % 2, negative_sign = rng() % 2;
            __int128 rest = 0;
            for (unsigned t = 2; t < n; ++t) {
                const uint64_t e = exponent();
                const int64_t magnitude = static_cast<int64_t>(rng() >> (64 - 22));
                rest += static_cast<__int128>(magnitude) << (e - base);
                macs[t] =
                    cmac_result(e, (one_sign ? negative_sign : rng() % 2) ? -magnitude : magnitude);
            }
            const int64_t target = static_cast<int64_t>((__int128(1) << 37) + delta - rest);
            const int64_t high = target >> 8, low = target & 255;
            macs[0] = cmac_result(base + 8, (one_sign ? negative_sign : rng() % 2) ? -high : high);
            macs[1] = cmac_result(base, (one_sign ? negative_sign : rng() % 2) ? -low : low);
            break;
        }
        case 2: {
            for (unsigned t = 0; t + 1 < n; t += 2) {
                const uint64_t e = exponent();
                const int64_t m = product(31);
                macs[t] = cmac_result(e, m);
                macs[t + 1] = cmac_result(e, -m);
            }
            const int64_t power = int64_t(1) << (rng() % 31);
            macs[n - 1] = cmac_result(exponent(), rng() % 2 ? -power : power);
            break;
        }
        case 3:
            for (auto& mac : macs)
                mac = rng() % 3 == 0 ? cmac_result(rng() % 63, 0)
                                     : cmac_result(rng() % 2 ? exponent() : rng() % 63,
                                                   product(1 + int(rng() % 31)));
            break;
        default:
            for (auto& mac : macs)
                mac = cmac_result(exponent(), rng() % 8 == 0 ? INT32_MIN : product(31));
    }
    return macs;
}

TEST(CaccFp48Sum, ProductsSummedAsDoublesEqualTheChain) {
    std::mt19937_64 rng(5113);
    for (IsaLevel level : levels_of_this_cpu()) {
        const IsaLimit limit(level);
        uint64_t differ = 0, exact = 0, chains = 0, near_limit = 0;
        for (int i = 0; i < 6000; ++i) {
            const unsigned n = 1 + unsigned(rng() % 25);
            std::vector<int32_t> products(size_t(n) * 8), exponents(size_t(n) * 8);
            uint64_t expected[8];
            for (int lane = 0; lane < 8; ++lane) {
                const int kind = int(rng() % 5);
                const std::vector<uint64_t> chain = random_product_chain(rng, n, kind);
                uint64_t acc = 0;
                for (unsigned t = 0; t < n; ++t) {
                    products[t * 8 + lane] = static_cast<int32_t>(mantissa_of(chain[t]));
                    exponents[t * 8 + lane] = static_cast<int32_t>(chain[t] >> 38);
                    acc = cacc_fp48_add(acc, chain[t]);
                }
                expected[lane] = acc;
                ++chains;
                exact += exact_by_bound(chain);
                near_limit += kind == 1 && n >= 2;
            }
            uint64_t out[8];
            cacc_fp48_sum_products_lanes(products.data(), exponents.data(), n, out);
            for (int lane = 0; lane < 8; ++lane) differ += out[lane] != expected[lane];
        }
        EXPECT_EQ(differ, 0u) << isa_name(level);
        // Both forms are exercised: many chains within the bound, many beyond it.
        EXPECT_GT(exact, chains / 5) << isa_name(level);
        EXPECT_LT(exact, chains * 4 / 5) << isa_name(level);
        EXPECT_GT(near_limit, chains / 8) << isa_name(level);
    }
}

}  // namespace
}  // namespace nvdla::emu::conv
