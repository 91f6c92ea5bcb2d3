// The per-unit fp16 comparisons: one loop, the unit's allowed error per element.
#include "nvdla/precision/compare.hpp"

#include <cmath>
#include <limits>
#include <ostream>
#include <sstream>

#include "nvdla/precision/fp16.hpp"

namespace nvdla::precision {
namespace {

OutputComparison setup_failure(const char* unit, std::string why) {
    OutputComparison c;
    c.passed = false;
    c.unit = unit;
    c.setup_error = std::move(why);
    return c;
}

// Empty when the spans can be compared element by element; otherwise why not.
std::string size_mismatch(size_t actual, size_t expected, size_t per_element,
                          const char* per_element_name) {
    std::ostringstream why;
    if (actual != expected)
        why << "actual has " << actual << " elements but expected has " << expected;
    else if (per_element != actual)
        why << per_element_name << " has " << per_element << " entries for " << actual
            << " elements";
    return why.str();
}

// Compares element by element; allowed(i, a) is the largest |a-b| allowed for element i.
template <class Allowed>
OutputComparison compare_within(const char* unit, std::span<const uint16_t> actual,
                                std::span<const uint16_t> expected, Allowed allowed) {
    OutputComparison c;
    c.unit = unit;
    c.elements = actual.size();
    for (size_t i = 0; i < actual.size(); ++i) {
        const uint16_t a = actual[i], b = expected[i];
        if (a == b) continue;
        const bool a_nan = fp16::is_nan(a), b_nan = fp16::is_nan(b);
        if (a_nan && b_nan) continue;
        const double error = a_nan || b_nan
                                 ? std::numeric_limits<double>::infinity()
                                 : std::fabs(double(fp16::to_float(a)) - double(fp16::to_float(b)));
        const double limit = allowed(i, a);
        if (error <= limit) continue;
        if (c.mismatches++ == 0) {
            c.first_mismatch = i;
            c.actual = a;
            c.expected = b;
            c.actual_error = error;
            c.allowed_error = limit;
        }
    }
    c.passed = c.mismatches == 0;
    return c;
}

template <class T>
OutputComparison compare_identical(const char* unit, std::span<const T> actual,
                                   std::span<const T> expected, bool fp16_values) {
    if (std::string why = size_mismatch(actual.size(), expected.size(), actual.size(), "");
        !why.empty()) {
        OutputComparison failed = setup_failure(unit, std::move(why));
        failed.bit_exact = true;
        return failed;
    }
    OutputComparison c;
    c.unit = unit;
    c.bit_exact = true;
    c.fp16_values = fp16_values;
    c.elements = actual.size();
    for (size_t i = 0; i < actual.size(); ++i) {
        if (actual[i] == expected[i]) continue;
        if (c.mismatches++ == 0) {
            c.first_mismatch = i;
            c.actual = actual[i];
            c.expected = expected[i];
        }
    }
    c.passed = c.mismatches == 0;
    return c;
}

void print_element(std::ostream& out, uint16_t bits, bool fp16_values) {
    out << "0x" << std::hex << bits << std::dec;
    if (fp16_values) out << " (" << fp16::to_float(bits) << ")";
}

}  // namespace

Result<int> max_product_exponent(std::span<const uint16_t> data,
                                 std::span<const uint16_t> weights) {
    if (data.size() != weights.size())
        return error("max_exp: ", data.size(), " data elements but ", weights.size(),
                     " weights in the kernel window");
    if (data.empty()) return error("max_exp: the kernel window is empty");
    int largest = aligned_product_exponent(data[0], weights[0]);
    for (size_t i = 1; i < data.size(); ++i) {
        const int e = aligned_product_exponent(data[i], weights[i]);
        if (e > largest) largest = e;
    }
    return largest;
}

std::string OutputComparison::describe() const {
    std::ostringstream out;
    out << unit << ": ";
    if (!setup_error.empty()) {
        out << setup_error;
        return out.str();
    }
    if (passed) {
        out << "all " << elements << " elements "
            << (bit_exact ? "identical" : "within the threshold");
        return out.str();
    }
    out << mismatches << " of " << elements << " elements "
        << (bit_exact ? "differ" : "outside the threshold") << "; first at " << first_mismatch
        << ": actual ";
    print_element(out, actual, fp16_values);
    out << " expected ";
    print_element(out, expected, fp16_values);
    if (!bit_exact) out << ", error " << actual_error << " > allowed " << allowed_error;
    return out.str();
}

std::ostream& operator<<(std::ostream& out, const OutputComparison& c) {
    return out << c.describe();
}

OutputComparison compare_direct_conv(std::span<const uint16_t> actual,
                                     std::span<const uint16_t> expected,
                                     std::span<const int> max_exp, ConvKernel kernel,
                                     double scale) {
    const char* unit = "CC direct conv";
    if (std::string why = size_mismatch(actual.size(), expected.size(), max_exp.size(), "max_exp");
        !why.empty())
        return setup_failure(unit, std::move(why));
    return compare_within(unit, actual, expected, [&](size_t i, uint16_t a) {
        return direct_conv_allowed_error(a, max_exp[i], kernel, scale);
    });
}

OutputComparison compare_winograd_conv(std::span<const uint16_t> actual,
                                       std::span<const uint16_t> expected,
                                       std::span<const int> max_exp, uint32_t channels,
                                       double scale) {
    const char* unit = "CC Winograd conv";
    if (std::string why = size_mismatch(actual.size(), expected.size(), max_exp.size(), "max_exp");
        !why.empty())
        return setup_failure(unit, std::move(why));
    return compare_within(unit, actual, expected, [&](size_t i, uint16_t a) {
        return winograd_conv_allowed_error(a, max_exp[i], channels, scale);
    });
}

namespace {
OutputComparison compare_window(const char* unit, std::span<const uint16_t> actual,
                                std::span<const uint16_t> expected,
                                std::span<const float> max_value) {
    if (std::string why =
            size_mismatch(actual.size(), expected.size(), max_value.size(), "max_value");
        !why.empty())
        return setup_failure(unit, std::move(why));
    return compare_within(unit, actual, expected,
                          [&](size_t i, uint16_t) { return window_allowed_error(max_value[i]); });
}
}  // namespace

OutputComparison compare_cdp(std::span<const uint16_t> actual, std::span<const uint16_t> expected,
                             std::span<const float> max_value) {
    return compare_window("CDP", actual, expected, max_value);
}

OutputComparison compare_pdp(std::span<const uint16_t> actual, std::span<const uint16_t> expected,
                             std::span<const float> max_value) {
    return compare_window("PDP", actual, expected, max_value);
}

OutputComparison compare_bit_exact(std::span<const uint16_t> actual,
                                   std::span<const uint16_t> expected, bool fp16_values) {
    return compare_identical("SDP bit-exact", actual, expected, fp16_values);
}

OutputComparison compare_bit_exact(std::span<const uint8_t> actual,
                                   std::span<const uint8_t> expected) {
    return compare_identical("SDP bit-exact", actual, expected, false);
}

}  // namespace nvdla::precision
