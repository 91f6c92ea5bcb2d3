#include "nvdla/hw_config.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace nvdla {
namespace {

TEST(HwConfig, KnowsEveryPublicConfiguration) {
    std::set<std::string> names;
    for (const HwConfig& cfg : hw_configs()) names.insert(cfg.name);
    EXPECT_EQ(names,
              (std::set<std::string>{"nv_full", "nv_small", "nv_small_256", "nv_small_256_full",
                                     "nv_medium_512", "nv_medium_1024_full", "nv_large"}));
}

TEST(HwConfig, AtomSizesFollowTheSpecs) {
    EXPECT_EQ((*find_hw_config("nv_full"))->atom_bytes, 32u);
    EXPECT_EQ((*find_hw_config("nv_large"))->atom_bytes, 32u);
    EXPECT_EQ((*find_hw_config("nv_small"))->atom_bytes, 8u);
    EXPECT_EQ((*find_hw_config("nv_medium_512"))->atom_bytes, 16u);
}

TEST(HwConfig, OnlyNvFullHasTheFullRegisterMapAndWideDatapath) {
    for (const HwConfig& cfg : hw_configs()) {
        const bool full = std::string(cfg.name) == "nv_full";
        EXPECT_EQ(cfg.reg_map == NVDLA_REG_MAP_FULL, full) << cfg.name;
        EXPECT_EQ(supports(cfg, Precision::Fp16), full) << cfg.name;
        EXPECT_EQ(supports(cfg, Precision::Int16), full) << cfg.name;
        EXPECT_TRUE(supports(cfg, Precision::Int8)) << cfg.name;
    }
}

TEST(HwConfig, CbufSizes) {
    EXPECT_EQ(nvdla_hw_cbuf_bytes(*find_hw_config("nv_full")), 512u * 1024);
    EXPECT_EQ(nvdla_hw_cbuf_bytes(*find_hw_config("nv_small")), 128u * 1024);
}

TEST(HwConfig, UnknownNameListsTheKnownOnes) {
    auto r = find_hw_config("nv_tiny");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("nv_tiny"), std::string::npos);
    EXPECT_NE(r.message().find("nv_small_256_full"), std::string::npos);
}

}  // namespace
}  // namespace nvdla
