// Helpers of the builder tests: random tensors and weights, emulated runs compared with the
// float reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "nvdla/builder.hpp"
#include "nvdla/runtime.hpp"
#include "test_support.hpp"

namespace nvdla::builder_test {

using namespace nvdla::builder;
using builder::Network;  // not the runtime's nvdla::Network

inline HostTensor random_tensor(std::mt19937_64& rng, Dims4 dims, float lo = -1, float hi = 1,
                                HostLayout layout = HostLayout::NCHW) {
    HostTensor t = make_host_tensor(dims, layout);
    t.data = test::random_vector<float>(rng, dims.elements(), lo, hi);
    return t;
}

inline std::vector<float> random_weights(std::mt19937_64& rng, size_t n, float scale = 0.5f) {
    return test::random_vector<float>(rng, n, -scale, scale);
}

// A square convolution of k kernels padded to keep the plane's size.
inline ConvolutionDesc same_size_conv(uint32_t k, uint32_t kernel, uint32_t groups = 1) {
    ConvolutionDesc d;
    d.out_channels = k;
    d.kernel_h = d.kernel_w = kernel;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = kernel / 2;
    d.groups = groups;
    return d;
}

// One emulated runtime per configuration, shared by the tests of a process. Never destroyed:
// the runtimes would outlive (at exit) the library's statics they use.
inline Runtime& emu(const std::string& config) {
    static auto& cache = *new std::map<std::string, std::unique_ptr<Runtime>>();
    auto it = cache.find(config);
    if (it == cache.end()) {
        RuntimeOptions o;
        o.backend = BackendChoice::Emu;
        o.emu_config = config;
        Result<std::unique_ptr<Runtime>> rt = Runtime::open(o);
        if (!rt) ADD_FAILURE() << rt.message();
        it = cache.emplace(config, std::move(rt).value()).first;
    }
    return *it->second;
}

struct Outcome {
    CompiledNetwork built;
    std::vector<HostTensor> actual, expected;
    std::vector<Difference> diff;
};

inline std::string describe(const Outcome& o) {
    std::string s;
    for (const auto& line : o.built.operations) s += "  " + line + "\n";
    if (o.built.model_macs > 0)
        s += "  MACs: hardware " + std::to_string(o.built.hardware_macs) + ", model " +
             std::to_string(o.built.model_macs) + " (ratio " +
             std::to_string(double(o.built.hardware_macs) / double(o.built.model_macs)) + ")\n";
    for (size_t i = 0; i < o.diff.size(); ++i)
        s += "  output " + std::to_string(i) + ": max |error| " +
             std::to_string(o.diff[i].max_abs) + " (relative " +
             std::to_string(o.diff[i].relative()) + "), mean " +
             std::to_string(o.diff[i].mean_abs) + ", largest reference " +
             std::to_string(o.diff[i].max_ref) + "\n";
    return s;
}

// Builds net for the options (int8: calibrated on `inputs` and `extra` random samples of the
// same shape in [lo, hi]), runs it on the emulator and compares every output with the float
// reference. fp16 builds get the calibration too (LRN ranges) unless extra < 0. Fails the test
// (and returns nullopt) on any error.
inline std::optional<Outcome> run_and_compare(const Network& net,
                                              const std::vector<HostTensor>& inputs,
                                              BuildOptions opt, int extra = 4, float lo = -1,
                                              float hi = 1) {
    Calibration cal;
    if (opt.precision == Precision::Int8 || extra >= 0) {
        std::mt19937_64 rng = test::rng_for_test();
        EXPECT_TRUE(cal.add_sample(net, inputs).ok());
        for (int i = 0; i < std::max(extra, 0); ++i) {
            std::vector<HostTensor> s;
            for (const HostTensor& t : inputs)
                s.push_back(random_tensor(rng, t.dims, lo, hi, t.layout));
            EXPECT_TRUE(cal.add_sample(net, s).ok());
        }
        opt.calibration = &cal;
    }
    Result<CompiledNetwork> built = build(net, opt);
    if (!built) {
        ADD_FAILURE() << "build: " << built.message();
        return std::nullopt;
    }
    Outcome o;
    o.built = std::move(built).value();
    Result<std::vector<HostTensor>> actual = run(o.built, emu(opt.config), inputs);
    if (!actual) {
        ADD_FAILURE() << "run: " << actual.message();
        for (const auto& s : o.built.operations) ADD_FAILURE() << "  " << s;
        return std::nullopt;
    }
    Result<std::vector<HostTensor>> expected = run_reference(net, inputs);
    if (!expected) {
        ADD_FAILURE() << "reference: " << expected.message();
        return std::nullopt;
    }
    o.actual = std::move(actual).value();
    o.expected = std::move(expected).value();
    for (size_t i = 0; i < o.actual.size(); ++i) {
        Result<Difference> d = compare(o.actual[i], o.expected[i]);
        if (!d) {
            ADD_FAILURE() << d.message();
            return std::nullopt;
        }
        o.diff.push_back(*d);
    }
    if (std::getenv("NVDLA_TEST_VERBOSE")) {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::printf("%s.%s\n%s", info->test_suite_name(), info->name(), describe(o).c_str());
    }
    return o;
}

}  // namespace nvdla::builder_test
