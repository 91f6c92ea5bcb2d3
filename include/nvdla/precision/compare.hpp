// The error NVDLA's fp16 outputs may show against a reference, per unit (doc/hw/v1/ias/
// precision.rst:68-102, the seed nvdla-precision-preservation.txt "FP16 error threshold"):
//   CC direct conv  |a-b| <= 2^(max_exp-20) * R*S*C * 2 * scale + 2^(exp(a)-10)
//   CC Winograd     |a-b| <= 2^(max_exp-20) * 18*C  * 2 * scale + 2^(exp(a)-10)
//   SDP             bit-by-bit identical
//   CDP, PDP        |a-b| <= 0.0001 and |a-b| / max_value <= 0.001
// a is the NVDLA output, b the reference, both fp16 patterns; exp(x) = ((x>>10)&0x1f) - 15.
//
// Every comparison returns an OutputComparison that reads well in a test:
//   const auto r = compare_pdp(actual, expected, window_max);
//   EXPECT_TRUE(r) << r;
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>

#include "nvdla/api.hpp"
#include "nvdla/status.hpp"

namespace nvdla::precision {

// exp(x) of the seed: the unbiased exponent field of an fp16 pattern, -15..16 (denormals and
// zero read -15).
constexpr int fp16_exponent(uint16_t h) {
    return ((h >> 10) & 0x1f) - 15;
}

// The exponent the threshold gives one product data * weight: exp(data) & ~3 plus
// exp(weight) & ~3 (each rounded down to a multiple of 4, as the CMAC aligns in 4-step blocks).
constexpr int aligned_product_exponent(uint16_t data, uint16_t weight) {
    return (fp16_exponent(data) & ~3) + (fp16_exponent(weight) & ~3);
}

// max_exp: the largest aligned_product_exponent over one output's kernel window, data[i] paired
// with weights[i]. Fails when the spans differ in size or are empty.
NVDLA_API Result<int> max_product_exponent(std::span<const uint16_t> data,
                                           std::span<const uint16_t> weights);

namespace detail {
constexpr double exact_power_of_two(int e) {  // 2^e for |e| < 1000, exact
    double v = 1.0;
    for (; e > 0; --e) v *= 2.0;
    for (; e < 0; ++e) v *= 0.5;
    return v;
}
}  // namespace detail

// The kernel one convolution output sums over.
struct ConvKernel {
    uint32_t r = 1;  // height
    uint32_t s = 1;  // width
    uint32_t c = 1;  // input channels
};

// The largest |a-b| the direct-convolution threshold allows for output a.
constexpr double direct_conv_allowed_error(uint16_t a, int max_exp, ConvKernel k,
                                           double scale = 1.0) {
    const double products = double(k.r) * double(k.s) * double(k.c);
    return detail::exact_power_of_two(max_exp - 20) * products * 2.0 * scale +
           detail::exact_power_of_two(fp16_exponent(a) - 10);
}

// The largest |a-b| the Winograd threshold allows for output a (18 * C in place of R*S*C).
constexpr double winograd_conv_allowed_error(uint16_t a, int max_exp, uint32_t channels,
                                             double scale = 1.0) {
    return detail::exact_power_of_two(max_exp - 20) * 18.0 * double(channels) * 2.0 * scale +
           detail::exact_power_of_two(fp16_exponent(a) - 10);
}

// The largest |a-b| the CDP and PDP threshold allows: both 0.0001 and 0.001 * |max_value|.
constexpr double window_allowed_error(double max_value) {
    const double relative = 0.001 * (max_value < 0 ? -max_value : max_value);
    return relative < 0.0001 ? relative : 0.0001;
}

// The outcome of comparing NVDLA output against a reference. Identical patterns always pass;
// a NaN matches only a NaN (any payload) except in bit-exact comparisons.
struct OutputComparison {
    static constexpr size_t kNone = static_cast<size_t>(-1);

    bool passed = true;
    std::string unit;         // "CC direct conv", "PDP", ...
    std::string setup_error;  // non-empty when the inputs could not be compared at all
    bool bit_exact = false;   // any difference fails (SDP)
    bool fp16_values = true;  // elements are fp16 patterns (false: int8/int16)
    size_t elements = 0;
    size_t mismatches = 0;
    // The first element outside the threshold.
    size_t first_mismatch = kNone;
    uint16_t actual = 0;
    uint16_t expected = 0;
    double actual_error = 0;  // |a-b|; infinity when only one side is a NaN
    double allowed_error = 0;

    explicit operator bool() const { return passed; }
    // One sentence: "PDP: 2 of 64 elements outside the threshold; first at 17: actual 0x3c01
    // (1.00098) expected 0x3c00 (1), error 0.000977 > allowed 0.0001".
    NVDLA_API std::string describe() const;
};

NVDLA_API std::ostream& operator<<(std::ostream& out, const OutputComparison& c);

// CC direct convolution: max_exp[i] is output i's max_product_exponent.
NVDLA_API OutputComparison compare_direct_conv(std::span<const uint16_t> actual,
                                               std::span<const uint16_t> expected,
                                               std::span<const int> max_exp, ConvKernel kernel,
                                               double scale = 1.0);

// CC Winograd convolution over `channels` input channels.
NVDLA_API OutputComparison compare_winograd_conv(std::span<const uint16_t> actual,
                                                 std::span<const uint16_t> expected,
                                                 std::span<const int> max_exp, uint32_t channels,
                                                 double scale = 1.0);

// CDP: max_value[i] is the largest value of output i's square-sum window.
NVDLA_API OutputComparison compare_cdp(std::span<const uint16_t> actual,
                                       std::span<const uint16_t> expected,
                                       std::span<const float> max_value);

// PDP: max_value[i] is the largest value of output i's pooling window.
NVDLA_API OutputComparison compare_pdp(std::span<const uint16_t> actual,
                                       std::span<const uint16_t> expected,
                                       std::span<const float> max_value);

// SDP: bit-by-bit identical. 16-bit elements are taken as fp16 patterns or int16 as
// `fp16_values` says (it only changes how describe() prints them); 8-bit ones are int8.
NVDLA_API OutputComparison compare_bit_exact(std::span<const uint16_t> actual,
                                             std::span<const uint16_t> expected,
                                             bool fp16_values = true);
NVDLA_API OutputComparison compare_bit_exact(std::span<const uint8_t> actual,
                                             std::span<const uint8_t> expected);

}  // namespace nvdla::precision
