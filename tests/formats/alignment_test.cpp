#include "nvdla/formats/alignment.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace nvdla {
namespace {

using test::config;

SurfacePlacement at(uint64_t address) {
    SurfacePlacement p;
    p.address = address;
    return p;
}

TEST(Alignment, StartAddressRulesOfTheSeedTable) {
    const HwConfig& full = config("nv_full");
    // 256 bytes for weights, WMB and WGS; 32 (one nv_full atom) for the others.
    for (SurfaceKind k :
         {SurfaceKind::Weight, SurfaceKind::WeightMask, SurfaceKind::WeightGroupSizes}) {
        EXPECT_TRUE(check_alignment(full, k, at(0x80000100)).ok());
        EXPECT_FALSE(check_alignment(full, k, at(0x80000080)).ok());
    }
    for (SurfaceKind k :
         {SurfaceKind::FeatureCube, SurfaceKind::PitchLinearPixel, SurfaceKind::Bias,
          SurfaceKind::PRelu, SurfaceKind::BatchNorm, SurfaceKind::ElementWise}) {
        EXPECT_TRUE(check_alignment(full, k, at(0x80000020)).ok()) << to_string(k);
        EXPECT_FALSE(check_alignment(full, k, at(0x80000010)).ok()) << to_string(k);
    }
}

TEST(Alignment, ErrorNamesFieldValueAndAlignment) {
    SurfacePlacement p = at(0x1000);
    p.line_stride = 100;
    EXPECT_EQ(check_alignment(config("nv_full"), SurfaceKind::FeatureCube, p).message(),
              "feature data cube: line stride 100 (0x64) is not a multiple of 32 bytes");
    p = at(0x1000);
    p.data_size = 200;
    EXPECT_EQ(check_alignment(config("nv_full"), SurfaceKind::WeightMask, p).message(),
              "weight mask bits (WMB): data size 200 (0xc8) is not a multiple of 128 bytes");
    EXPECT_EQ(check_alignment(config("nv_full"), SurfaceKind::Weight, at(0x1080)).message(),
              "weight: start address 4224 (0x1080) is not a multiple of 256 bytes");
}

TEST(Alignment, FieldsTheTableMarksNotApplicableAreNotChecked) {
    SurfacePlacement p = at(0x100);
    p.line_stride = 3;     // NA for weights
    p.surface_stride = 5;  // NA for weights
    EXPECT_TRUE(check_alignment(config("nv_full"), SurfaceKind::Weight, p).ok());
    p = at(0x40);
    p.line_stride = 7;  // N/A for PReLU
    EXPECT_TRUE(check_alignment(config("nv_full"), SurfaceKind::PRelu, p).ok());
    p.data_size = 40;  // element-wise data size must be whole atoms
    EXPECT_FALSE(check_alignment(config("nv_full"), SurfaceKind::ElementWise, p).ok());
}

TEST(Alignment, FeatureRulesFollowTheAtomOfTheSmallConfigurations) {
    SurfacePlacement p = at(0x80000008);
    p.line_stride = 8;
    p.surface_stride = 8;
    EXPECT_TRUE(check_alignment(config("nv_small"), SurfaceKind::FeatureCube, p).ok());
    EXPECT_FALSE(check_alignment(config("nv_full"), SurfaceKind::FeatureCube, p).ok());
    p.line_stride = 16;
    EXPECT_FALSE(
        check_alignment(config("nv_medium_512"), SurfaceKind::FeatureCube, p).ok());  // address 8
    p = at(0x80000010);
    p.line_stride = 16;
    p.surface_stride = 48;
    EXPECT_TRUE(check_alignment(config("nv_medium_512"), SurfaceKind::FeatureCube, p).ok());
    // Pitch-linear pixels too: nv_small's x offset only reaches within one 8-byte atom (RTL
    // NV_NVDLA_CDMA_IMG_ctrl.v), so its planes start on any atom.
    EXPECT_TRUE(check_alignment(config("nv_small"), SurfaceKind::PitchLinearPixel, at(8)).ok());
    EXPECT_FALSE(check_alignment(config("nv_small"), SurfaceKind::PitchLinearPixel, at(4)).ok());
    EXPECT_FALSE(check_alignment(config("nv_full"), SurfaceKind::PitchLinearPixel, at(8)).ok());
}

}  // namespace
}  // namespace nvdla
