// Helpers shared by the test suites: seeded random data and the location of ../shared.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "nvdla/hw_config.hpp"
#include "test_paths.hpp"

namespace nvdla::test {

// A configuration by name; the names are the fixed set of hw_configs().
inline const HwConfig& config(const char* name) {
    return **find_hw_config(name);
}
inline const HwConfig& nv_full() {
    return config("nv_full");
}

// ../shared (overridable with NVDLA_SHARED_DIR); empty when absent.
inline std::filesystem::path shared_dir() {
    const std::filesystem::path dir = configured_shared_dir();
    return std::filesystem::is_directory(dir) ? dir : std::filesystem::path();
}

// Skips the current test, saying why, when ../shared is not there.
#define NVDLA_REQUIRE_SHARED()                                                           \
    do {                                                                                 \
        if (::nvdla::test::shared_dir().empty())                                         \
            GTEST_SKIP() << "../shared (hardware documents and vectors) is absent; set " \
                            "NVDLA_SHARED_DIR to run this test";                         \
    } while (0)

// A generator seeded per test so failures reproduce; NVDLA_TEST_SEED overrides the seed.
inline std::mt19937_64 rng_for_test() {
    const char* env = std::getenv("NVDLA_TEST_SEED");
    uint64_t seed = env ? std::strtoull(env, nullptr, 0) : 0x6e76646c61ull;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    if (info)
        seed ^= std::hash<std::string>{}(std::string(info->test_suite_name()) + "." + info->name());
    return std::mt19937_64(seed);
}

template <class T>
std::vector<T> random_vector(std::mt19937_64& rng, size_t n, T lo, T hi) {
    std::vector<T> v(n);
    if constexpr (std::is_floating_point_v<T>) {
        std::uniform_real_distribution<T> d(lo, hi);
        for (auto& x : v) x = d(rng);
    } else {
        std::uniform_int_distribution<int64_t> d(lo, hi);
        for (auto& x : v) x = static_cast<T>(d(rng));
    }
    return v;
}

inline uint32_t random_between(std::mt19937_64& rng, uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
}

}  // namespace nvdla::test
