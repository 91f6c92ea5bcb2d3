// The consistency rules the hardware (and the C model) enforce, which the model refuses with a
// sentence naming the registers: convolution-buffer entries and banks (conv_checks.cpp) and the
// SDP DMAs' strides on 1x1 cubes (sdp_checks.cpp). The numbers are worked by hand from the C
// model's formulas (docs/emu/convolution.md, "Buffer rules"; docs/emu/sdp.md, "DMA rules").
#include <gtest/gtest.h>

#include <string>

#include "conv_test_rig.hpp"
#include "sdp_test_harness.hpp"

namespace nvdla::emu {
namespace {

using conv_test::ConvSpec;
using conv_test::IntCase;
using conv_test::Rig;

// The 1x1 convolution on 55x55x64 int8 the C model stalled on: 64 channels are 2 atoms of 32
// bytes, half of a 128-byte entry, so two neighbouring elements share an entry: ceil(55 / 2) =
// 28 entries per line, 55 x 28 = 1540 entries = 7 banks of 256 (6 hold 1536).
struct Squeeze {
    Rig rig{"nv_full"};
    IntCase c;
    Squeeze() {
        c.spec.width = c.spec.height = 55;
        c.spec.channels = 64, c.spec.kernels = 16;
        c.spec.kernel_w = c.spec.kernel_h = 1;
        auto rng = test::rng_for_test();
        c.fill_random(rng);
        c.load(rig);
    }
    void program(uint32_t entries, uint32_t data_banks) {
        for (const char* unit : {"CDMA", "CSC"}) {
            rig.set(unit, "D_ENTRY_PER_SLICE", entries - 1);
            rig.set(unit, "D_BANK", (16 - data_banks - 1) << 16 | (data_banks - 1));
        }
    }
};

TEST(ConvBufferRules, TheBuildersOldProgrammingIsRefusedWithTheRegisters) {
    Squeeze s;
    s.program(55, 6);  // 64-byte entries: 55 per line; 6 banks
    s.rig.execute();
    EXPECT_EQ(s.rig.stats().programming_errors, 1u);
    const std::string& e = s.rig.stats().last_error;
    EXPECT_NE(e.find("D_ENTRY_PER_SLICE.ENTRIES is 54"), std::string::npos) << e;
    EXPECT_NE(e.find("must be 27"), std::string::npos) << e;
}

TEST(ConvBufferRules, TooFewDataBanksAreRefused) {
    Squeeze s;
    s.program(28, 6);
    s.rig.execute();
    EXPECT_EQ(s.rig.stats().programming_errors, 1u);
    const std::string& e = s.rig.stats().last_error;
    EXPECT_NE(e.find("D_BANK.DATA_BANK is 5"), std::string::npos) << e;
    EXPECT_NE(e.find("1540 entries, 7 banks"), std::string::npos) << e;
}

// The rig programs what nvdla::cbuf_entries_per_slice computes (the builder's function): the
// hand-worked 28 entries and 7 banks, and the layer runs.
uint32_t cdma_register(Rig& rig, uint32_t offset) {
    return rig.group_value(NVDLA_UNIT_CDMA, offset);
}

TEST(ConvBufferRules, TheHardwaresProgrammingRuns) {
    Squeeze s;
    EXPECT_EQ(conv_test::check_int_case(s.rig, s.c), 0u);
    EXPECT_EQ(s.rig.stats().programming_errors, 0u) << s.rig.stats().last_error;
    EXPECT_EQ(cdma_register(s.rig, NVDLA_CDMA_D_ENTRY_PER_SLICE), 27u);
    EXPECT_EQ(cdma_register(s.rig, NVDLA_CDMA_D_BANK) & 0x1f, 6u);
}

TEST(ConvBufferRules, NvSmallEntriesAreOneAtom) {
    // nv_small: 8-byte entries, one atom; 20 int8 channels are 3 atoms: 3 x 13 = 39 entries.
    Rig rig("nv_small");
    IntCase c;
    c.spec.width = 13, c.spec.height = 5, c.spec.channels = 20, c.spec.kernels = 8;
    auto rng = test::rng_for_test();
    c.fill_random(rng);
    EXPECT_EQ(conv_test::check_int_case(rig, c), 0u);
    EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    EXPECT_EQ(cdma_register(rig, NVDLA_CDMA_D_ENTRY_PER_SLICE), 38u);
    for (const char* unit : {"CDMA", "CSC"}) rig.set(unit, "D_ENTRY_PER_SLICE", 19);
    rig.execute();
    EXPECT_NE(rig.stats().last_error.find("must be 38"), std::string::npos)
        << rig.stats().last_error;
}

TEST(ConvBufferRules, CdmaAndCscMustAgreeAndBanksFit) {
    Squeeze s;
    s.program(28, 7);
    s.rig.set("CSC", "D_ENTRY_PER_SLICE", 28);
    s.rig.execute();
    EXPECT_NE(s.rig.stats().last_error.find("CDMA and CSC disagree"), std::string::npos)
        << s.rig.stats().last_error;
    s.program(28, 7);
    for (const char* unit : {"CDMA", "CSC"}) s.rig.set(unit, "D_BANK", 7 << 16 | 8);
    s.rig.execute();
    EXPECT_NE(s.rig.stats().last_error.find("9 + 8 banks"), std::string::npos)
        << s.rig.stats().last_error;
}

// ---- SDP: a 1x1 cube (the final fully connected layers) ----

void one_by_one(sdp_test::Rig& rig, uint32_t bs_surface, uint32_t dst_surface) {
    constexpr uint64_t kSrc = 0x1000, kBias = 0x2000, kDst = 0x3000;
    rig.region(kSrc, 0x100);
    rig.region(kBias, 0x200);
    rig.region(kDst, 0x100);
    rig.bypass_all();
    rig.shape(1, 1, 40);  // two int8 surfaces
    rig.source(kSrc, 32, 32);
    rig.destination(kDst, 32, dst_surface);
    rig.sdp("D_DP_BS_CFG", 2 << 2 | 1 << 4 | 1 << 6);   // ALU SUM only
    rig.sdp("D_DP_BS_ALU_CFG", 1);                      // from memory
    rig.rdma("D_BRDMA_CFG", 1 << 1 | 1 << 3 | 1 << 5);  // ALU, 2 bytes, per kernel, MC
    rig.rdma("D_BS_BASE_ADDR_LOW", static_cast<uint32_t>(kBias));
    rig.rdma("D_BS_LINE_STRIDE", bs_surface);
    rig.rdma("D_BS_SURFACE_STRIDE", bs_surface);
    rig.run();
}

TEST(SdpDmaRules, PackedOperandSurfacesOnOneByOneCubes) {
    {
        // The builder's old programming: surface stride 0.
        sdp_test::Rig rig("nv_full");
        one_by_one(rig, 0, 32);
        EXPECT_EQ(rig.stats().programming_errors, 1u);
        EXPECT_NE(rig.stats().last_error.find("D_BS_SURFACE_STRIDE is 0"), std::string::npos)
            << rig.stats().last_error;
        // 32 int8-processing values of 2 bytes.
        EXPECT_NE(rig.stats().last_error.find("must be 64"), std::string::npos)
            << rig.stats().last_error;
        EXPECT_EQ(rig.stats().bytes_written, 0u);
    }
    {
        sdp_test::Rig rig("nv_full");
        one_by_one(rig, 64, 32);
        EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    }
    {
        sdp_test::Rig rig("nv_full");
        one_by_one(rig, 64, 64);
        EXPECT_NE(rig.stats().last_error.find("D_DST_SURFACE_STRIDE is 64"), std::string::npos)
            << rig.stats().last_error;
    }
}

}  // namespace
}  // namespace nvdla::emu
