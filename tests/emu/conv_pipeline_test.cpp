// The pipeline around the arithmetic: compressed weights, the decoded-weight cache, DATA_REUSE /
// WEIGHT_REUSE keeping the convolution buffer, S_CBUF_FLUSH_STATUS, a whole layer through the
// Device with SDP writing memory and raising the interrupts, and registers the hardware cannot run.
#include <gtest/gtest.h>

#include "conv_test_rig.hpp"
#include "emu/conv_layer.hpp"
#include "emu/parallel.hpp"
#include "nvdla/formats/weights.hpp"

namespace nvdla::emu::conv_test {
namespace {

IntCase small_case(std::mt19937_64& rng) {
    IntCase c;
    c.spec.width = 6, c.spec.height = 5, c.spec.channels = 40, c.spec.kernels = 20;
    c.spec.pad_left = c.spec.pad_top = 1;
    c.spec.clip = 4;
    c.fill_random(rng);
    return c;
}

// Writes c's kernels compressed by the formats library into weights, WMB and WGS and programs
// the layer to read them.
void load_compressed(Rig& rig, const IntCase& c, uint64_t wmb_address = kWmbBase) {
    const auto surface = dc_weight_surface(
        rig.cfg(), Precision::Int8, c.spec.kernels, c.spec.channels, 3, 3,
        [&](uint32_t k, uint32_t ch, uint32_t r, uint32_t s) { return c.wt(k, ch, r, s); });
    WeightSurfaceShape shape{Precision::Int8, c.spec.kernels, rig.cfg().mac_atomic_k,
                             uint64_t(9) * c.spec.channels};
    const auto sizes = compressed_weight_sizes(
        rig.cfg(), shape, {reinterpret_cast<const std::byte*>(surface.data()), surface.size()});
    ASSERT_TRUE(sizes) << sizes.message();
    // (No stream is longer than the dense surface: one region serves every kernel set.)
    ASSERT_LE(sizes->weight_bytes, surface.size());
    auto* wt = reinterpret_cast<std::byte*>(rig.region(kWeightBase + 0x1000000, surface.size()));
    auto* wmb = reinterpret_cast<std::byte*>(rig.region(wmb_address, sizes->mask_bytes));
    auto* wgs = reinterpret_cast<std::byte*>(rig.region(kWgsBase, sizes->group_size_bytes));
    ASSERT_TRUE(compress_weights(
        rig.cfg(), shape, {reinterpret_cast<const std::byte*>(surface.data()), surface.size()},
        {wt, sizes->weight_bytes}, {wmb, sizes->mask_bytes}, {wgs, sizes->group_size_bytes}));
    for (const char* unit : {"CDMA", "CSC"}) {
        rig.set(unit, "D_WEIGHT_FORMAT", 1);
        rig.set(unit, "D_WEIGHT_BYTES", static_cast<uint32_t>(sizes->weight_bytes));
        rig.set(unit, "D_WMB_BYTES", static_cast<uint32_t>(sizes->mask_bytes));
    }
    rig.set("CDMA", "D_WEIGHT_ADDR_LOW", static_cast<uint32_t>(kWeightBase + 0x1000000));
    rig.set("CDMA", "D_WMB_ADDR_LOW", static_cast<uint32_t>(wmb_address));
    rig.set("CDMA", "D_WGS_ADDR_LOW", static_cast<uint32_t>(kWgsBase));
}

TEST(ConvWeights, CompressedWeightsGiveTheDenseResult) {
    auto rng = test::rng_for_test();
    IntCase c = small_case(rng);
    for (size_t i = 0; i < c.weights.size(); ++i)
        if (i % 3) c.weights[i] = 0;  // sparse
    Rig rig("nv_full");
    c.load(rig);
    const AccumulatorCube dense = rig.execute();
    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;

    load_compressed(rig, c);
    const AccumulatorCube compressed = rig.execute();
    ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    EXPECT_EQ(compressed.planar(), dense.planar());
}

TEST(ConvWeights, CompressedWeightsChangedInPlaceAreDecompressedAgain) {
    // The cache skips decompressing when the stream, mask and group sizes are the ones it
    // decompressed: each of them changing at the same addresses must give the new kernels.
    auto rng = test::rng_for_test();
    IntCase a = small_case(rng);
    for (size_t i = 0; i < a.weights.size(); ++i)
        if (i % 3) a.weights[i] = 0;
    // The same non-zero values in the same order one place later: the same stream (and group
    // sizes where no value crosses a group), another mask.
    IntCase shifted = a;
    std::rotate(shifted.weights.rbegin(), shifted.weights.rbegin() + 1, shifted.weights.rend());
    // Other values in a's places: the same mask, another stream.
    IntCase revalued = a;
    for (int32_t& v : revalued.weights)
        if (v) v = v == -128 ? 127 : -v;
    Rig rig("nv_full");
    for (const IntCase* c : {&a, &shifted, &a, &revalued, &revalued, &a}) {
        c->load(rig);
        load_compressed(rig, *c);
        EXPECT_EQ(rig.execute().planar(), expected_values(*c));
        ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    }
}

// CDMA trusts sealed memory: while the memory gives the number the cache's entry was taken
// under, the bytes are not even compared (a change behind the seal, which the seal promised
// there would not be, goes unseen); under another number, or none, they are compared again.
TEST(ConvWeights, SealedWeightsAreComparedOnlyWhenTheirNumberChanges) {
    Rig rig("nv_full");
    auto rng = test::rng_for_test();
    IntCase first;
    first.spec.width = 6, first.spec.height = 5, first.spec.channels = 40, first.spec.kernels = 20;
    first.fill_random(rng);
    IntCase second = first;
    second.weights = test::random_vector<int32_t>(rng, first.weights.size(), -128, 127);
    ASSERT_NE(expected_values(first), expected_values(second));
    auto run = [&](const IntCase& written, uint64_t sealed) {
        written.load(rig);
        rig.set_sealed_contents(sealed);
        return rig.execute().planar();
    };
    EXPECT_EQ(run(first, 7), expected_values(first));
    EXPECT_EQ(run(second, 7), expected_values(first)) << "compared although still sealed";
    EXPECT_EQ(run(second, 8), expected_values(second)) << "a new number was not compared";
    EXPECT_EQ(run(first, 0), expected_values(first)) << "unsealed memory was not compared";
    EXPECT_EQ(run(second, 0), expected_values(second)) << "unsealed memory was not compared";
    EXPECT_EQ(run(first, 9), expected_values(first));
}

// The same for compressed weights, whose stream, mask and group sizes are compared only when
// the number changed or one of them is read from another place.
TEST(ConvWeights, SealedCompressedWeightsAreComparedOnlyWhenTheirNumberOrPlacesChange) {
    auto rng = test::rng_for_test();
    IntCase a = small_case(rng);
    for (size_t i = 0; i < a.weights.size(); ++i)
        if (i % 3) a.weights[i] = 0;
    IntCase shifted = a;  // the same stream, another mask
    std::rotate(shifted.weights.rbegin(), shifted.weights.rbegin() + 1, shifted.weights.rend());
    IntCase revalued = a;  // the same mask, another stream
    for (int32_t& v : revalued.weights)
        if (v) v = v == -128 ? 127 : -v;
    Rig rig("nv_full");
    auto run = [&](const IntCase& c, uint64_t sealed, uint64_t wmb_address = kWmbBase) {
        c.load(rig);
        load_compressed(rig, c, wmb_address);
        rig.set_sealed_contents(sealed);
        return rig.execute().planar();
    };
    EXPECT_EQ(run(a, 7), expected_values(a));
    EXPECT_EQ(run(revalued, 7), expected_values(a)) << "compared although still sealed";
    EXPECT_EQ(run(revalued, 8), expected_values(revalued)) << "a new number was not compared";
    EXPECT_EQ(run(shifted, 8, kWmbBase + 0x10000), expected_values(shifted))
        << "the mask read from another place was not compared";
    EXPECT_EQ(run(a, 0), expected_values(a)) << "unsealed memory was not compared";
    EXPECT_EQ(run(revalued, 0), expected_values(revalued)) << "unsealed memory was not compared";
}

TEST(ConvWeights, DenseWeightsChangedInPlaceAreDecodedAgainOnAnyThreadCount) {
    // A layer's weights (147 KiB: several chunks of the threads' comparison with the cached
    // ones) changed in place in the first or the last byte must give the new kernels.
    set_work_per_thread(1);
    auto rng = test::rng_for_test();
    IntCase c;
    c.spec.width = 4, c.spec.height = 3, c.spec.channels = 256, c.spec.kernels = 64;
    c.spec.clip = 8;
    c.fill_random(rng);
    for (unsigned threads : {1u, 3u}) {
        Rig rig("nv_full");
        rig.set_threads(threads);
        IntCase changed = c;
        for (int step = 0; step < 3; ++step) {
            if (step == 1) changed.weights.front() = changed.weights.front() == 1 ? 2 : 1;
            if (step == 2) changed.weights.back() = changed.weights.back() == 1 ? 2 : 1;
            changed.load(rig);
            EXPECT_EQ(rig.execute().planar(), expected_values(changed))
                << threads << " threads, step " << step;
            ASSERT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
        }
    }
    set_work_per_thread(0);
}

TEST(ConvWeights, CompressionNeedsTheFeature) {
    auto rng = test::rng_for_test();
    IntCase c = small_case(rng);
    c.spec.channels = 8;
    c.fill_random(rng);
    Rig rig("nv_small");
    c.load(rig);
    rig.set("CDMA", "D_WEIGHT_FORMAT", 1);
    rig.set("CSC", "D_WEIGHT_FORMAT", 1);
    EXPECT_TRUE(rig.execute().empty());
    EXPECT_NE(rig.stats().last_error.find("compressed"), std::string::npos)
        << rig.stats().last_error;
}

TEST(ConvWeights, CacheKeepsOneEntryPerAddressAndDropsTheLeastRecentlyUsed) {
    nvdla::emu::conv::WeightCache cache;
    nvdla::emu::conv::ConvWeights& first = cache.entry(MemoryPort::Primary, 0x1000);
    first.values = {1, 2, 3};
    EXPECT_EQ(&cache.entry(MemoryPort::Primary, 0x1000), &first);
    EXPECT_TRUE(cache.entry(MemoryPort::Secondary, 0x1000).values.empty());
    nvdla::emu::conv::ConvWeights& second = cache.entry(MemoryPort::Primary, 0x2000);
    second.values = {4};
    // Fill the cache; the first entry stays the most recently used one but the second does not.
    for (uint64_t i = 0; i + 3 < nvdla::emu::conv::WeightCache::kMaxEntries; ++i) {
        cache.entry(MemoryPort::Primary, 0x100000 + i * 0x100);
        cache.entry(MemoryPort::Primary, 0x1000);
    }
    // Two more than fit: the two oldest go (the secondary port's entry, then the second).
    cache.entry(MemoryPort::Primary, 0x9000);
    cache.entry(MemoryPort::Primary, 0x9100);
    EXPECT_EQ(cache.entry(MemoryPort::Primary, 0x1000).values, (std::vector<int16_t>{1, 2, 3}));
    EXPECT_TRUE(cache.entry(MemoryPort::Primary, 0x2000).values.empty());
}

TEST(ConvWeights, LayersSharingAWeightAddressEachGetTheirOwnWeights) {
    // A network run again finds its weights cached by address; another loadable's layer at the
    // same address, with other bytes, must be decoded anew, and so must the first one again.
    auto rng = test::rng_for_test();
    const IntCase a = small_case(rng);
    const IntCase b = small_case(rng);
    Rig rig("nv_full");
    for (const IntCase* c : {&a, &b, &a, &a, &b}) {
        c->load(rig);
        EXPECT_EQ(rig.execute().planar(), expected_values(*c));
    }
    EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
}

TEST(ConvBuffer, DataAndWeightReuseKeepThePreviousLayersBuffer) {
    auto rng = test::rng_for_test();
    IntCase c = small_case(rng);
    IntCase other = c;
    other.fill_random(rng);
    const uint32_t keep = 1u << 24 | 1u << 28;   // SKIP_DATA_RLS, SKIP_WEIGHT_RLS
    const uint32_t reuse = 1u << 16 | 1u << 20;  // DATA_REUSE, WEIGHT_REUSE
    Rig rig("nv_full");

    // Layer 1 fetches and keeps the buffer.
    c.spec.misc_extra = keep;
    c.load(rig);
    const AccumulatorCube first = rig.execute();
    EXPECT_EQ(first.planar(), expected_values(c));

    // Memory changes, but layer 2 reuses what layer 1 kept (and keeps it again)...
    other.spec.misc_extra = keep | reuse;
    other.load(rig);
    EXPECT_EQ(rig.execute().planar(), first.planar());
    // ...layer 3 still reuses it, and releases it...
    other.spec.misc_extra = reuse;
    other.load(rig);
    EXPECT_EQ(rig.execute().planar(), first.planar());
    // ...so layer 4 fetches the new data and weights despite asking for reuse.
    EXPECT_EQ(rig.execute().planar(), expected_values(other));
    EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
}

TEST(ConvBuffer, FlushStatusReadsDoneOnceSoftwareWaitsForIt) {
    FlatMemory memory;
    Device device(test::config("nv_small"), memory);
    const auto& map = hw::RegisterMap::get(NVDLA_REG_MAP_SMALL);
    const uint32_t flush = map.find("CDMA", "S_CBUF_FLUSH_STATUS")->address;
    EXPECT_EQ(device.read_register(flush), 0u);  // still flushing right after reset
    EXPECT_EQ(device.read_register(flush), 1u);
    EXPECT_EQ(device.read_register(flush), 1u);
    device.reset();
    EXPECT_EQ(device.read_register(flush), 0u);
}

// A whole layer through the Device: the convolution's CACC output goes to SDP (flying), which
// writes it as int16 through its identity convertor.
TEST(ConvDevice, LayerThroughSdpToMemoryWithInterrupts) {
    auto rng = test::rng_for_test();
    IntCase c = small_case(rng);
    c.spec.clip = 6;  // sums fit int16 after the truncation
    FlatMemory memory;
    const HwConfig& cfg = test::config("nv_full");
    Device device(cfg, memory);
    const auto& map = hw::RegisterMap::get(cfg.reg_map);
    // Program the convolution units through a rig's register list, replayed onto the device.
    Rig rig("nv_full");
    c.load(rig);
    auto copy_group = [&](const char* unit, nvdla_unit u) {
        for (const hw::RegisterInfo& r : map.registers())
            if (r.unit_name == unit && r.name.rfind("D_", 0) == 0 && r.name != "D_OP_ENABLE")
                device.write_register(r.address, rig.group_value(u, r.offset));
    };
    copy_group("CDMA", NVDLA_UNIT_CDMA);
    copy_group("CSC", NVDLA_UNIT_CSC);
    copy_group("CMAC_A", NVDLA_UNIT_CMAC_A);
    copy_group("CMAC_B", NVDLA_UNIT_CMAC_B);
    copy_group("CACC", NVDLA_UNIT_CACC);
    const CubeLayout in{cfg.atom_bytes, 1, c.spec.width, c.spec.height, c.spec.channels};
    auto* data = memory.add_region(MemoryPort::Primary, kDataBase, in.batch());
    for (uint32_t h = 0; h < c.spec.height; ++h)
        for (uint32_t w = 0; w < c.spec.width; ++w)
            for (uint32_t ch = 0; ch < c.spec.channels; ++ch)
                data[in.offset(0, ch, h, w)] = std::byte(static_cast<uint8_t>(c.in(0, h, w, ch)));
    const auto surface = dc_weight_surface(
        cfg, Precision::Int8, c.spec.kernels, c.spec.channels, 3, 3,
        [&](uint32_t k, uint32_t ch, uint32_t r, uint32_t s) { return c.wt(k, ch, r, s); });
    std::memcpy(memory.add_region(MemoryPort::Primary, kWeightBase, surface.size()), surface.data(),
                surface.size());
    const uint32_t ow = c.spec.output_width(), oh = c.spec.output_height();
    const CubeLayout out{cfg.atom_bytes, 2, ow, oh, c.spec.kernels};
    auto* result =
        reinterpret_cast<uint8_t*>(memory.add_region(MemoryPort::Primary, kOutBase, out.batch()));
    auto sdp = [&](const char* reg, uint32_t v) {
        device.write_register(map.find("SDP", reg)->address, v);
    };
    sdp("D_FEATURE_MODE_CFG", 1);
    sdp("D_DATA_FORMAT", 0 | 1 << 2);  // int8 processing, int16 out
    sdp("D_DP_BS_CFG", 1);
    sdp("D_DP_BN_CFG", 1);
    sdp("D_DP_EW_CFG", 1);
    sdp("D_CVT_OFFSET", 0);
    sdp("D_CVT_SCALE", 1);
    sdp("D_CVT_SHIFT", 0);
    sdp("D_DATA_CUBE_WIDTH", ow - 1);
    sdp("D_DATA_CUBE_HEIGHT", oh - 1);
    sdp("D_DATA_CUBE_CHANNEL", c.spec.kernels - 1);
    sdp("D_DST_BASE_ADDR_LOW", static_cast<uint32_t>(kOutBase));
    sdp("D_DST_LINE_STRIDE", static_cast<uint32_t>(out.line()));
    sdp("D_DST_SURFACE_STRIDE", static_cast<uint32_t>(out.surface()));
    sdp("D_DST_DMA_CFG", 1);
    for (const char* unit : {"SDP", "CACC", "CMAC_A", "CMAC_B", "CSC"})
        device.write_register(map.find(unit, "D_OP_ENABLE")->address, 1);
    EXPECT_EQ(device.stats().operations, 0u);  // waits for CDMA
    device.write_register(map.find("CDMA", "D_OP_ENABLE")->address, 1);
    EXPECT_EQ(device.stats().operations, 1u);
    EXPECT_EQ(device.stats().programming_errors, 0u) << device.stats().last_error;
    const uint32_t status = device.read_register(map.find("GLB", "S_INTR_STATUS")->address);
    EXPECT_EQ(status & (1u << 16 | 1u << 18 | 1u << 20 | 1u), 1u << 16 | 1u << 18 | 1u << 20 | 1u)
        << std::hex << status;  // CDMA data, CDMA weights, CACC and SDP done
    for (uint32_t k = 0; k < c.spec.kernels; ++k)
        for (uint32_t y = 0; y < oh; ++y)
            for (uint32_t x = 0; x < ow; ++x) {
                const int64_t want = round_shift(c.sum(0, k, y, x), c.spec.clip);
                const auto got = static_cast<int16_t>(result[out.offset(0, k, y, x)] |
                                                      result[out.offset(0, k, y, x) + 1] << 8);
                ASSERT_EQ(got, want) << "k " << k << " y " << y << " x " << x;
            }
}

TEST(ConvRegisters, DisagreementsAreNamedAndNothingRuns) {
    auto rng = test::rng_for_test();
    IntCase c = small_case(rng);
    struct Bad {
        const char* unit;
        const char* reg;
        uint32_t value;
        const char* named;
    };
    for (const Bad& b : {Bad{"CDMA", "D_MISC_CFG", 3u << 12 | 3u << 8, "PROC_PRECISION"},
                         Bad{"CACC", "D_DATAOUT_SIZE_1", 3, "DATAOUT_CHANNEL"},
                         Bad{"CSC", "D_DATAIN_SIZE_EXT_1", 3, "DATAIN_CHANNEL"},
                         Bad{"CDMA", "D_WEIGHT_BYTES", 0, "D_WEIGHT_BYTES"},
                         Bad{"CDMA", "D_WEIGHT_SIZE_0", 17, "BYTE_PER_KERNEL"},
                         Bad{"CDMA", "D_BATCH_NUMBER", 4, "BATCHES"},
                         Bad{"CSC", "D_POST_Y_EXTENSION", 3, "Y_EXTENSION"},
                         Bad{"CMAC_B", "D_MISC_CFG", 2u << 12, "CMAC_B"}}) {
        Rig rig("nv_full");
        c.load(rig);
        rig.set(b.unit, b.reg, b.value);
        EXPECT_TRUE(rig.execute().empty()) << b.reg;
        EXPECT_EQ(rig.stats().programming_errors, 1u) << b.reg;
        EXPECT_NE(rig.stats().last_error.find(b.named), std::string::npos)
            << b.reg << ": " << rig.stats().last_error;
    }
}

TEST(ConvRegisters, HugeSizesAreRefusedNotAllocated) {
    auto rng = test::rng_for_test();
    IntCase c = small_case(rng);
    Rig rig("nv_full");
    c.load(rig);
    rig.set("CDMA", "D_WEIGHT_BYTES", 0xffffff80u);  // 4 GiB of weights: only the kernels are read
    EXPECT_EQ(rig.execute().planar(), expected_values(c));
    for (const char* unit : {"CDMA", "CSC"}) {  // an 8192 x 8192 x 8192 cube
        rig.set(unit, unit[1] == 'D' ? "D_DATAIN_SIZE_0" : "D_DATAIN_SIZE_EXT_0", 0x1fff1fff);
        rig.set(unit, unit[1] == 'D' ? "D_DATAIN_SIZE_1" : "D_DATAIN_SIZE_EXT_1", 0x1fff);
    }
    rig.set("CDMA", "D_DATAIN_SIZE_EXT_0", 0x1fff1fff);
    rig.set("CSC", "D_WEIGHT_SIZE_EXT_1", (c.spec.kernels - 1) << 16 | 0x1fff);
    rig.set("CDMA", "D_WEIGHT_SIZE_0", 9 * 8192 - 1);
    EXPECT_TRUE(rig.execute().empty());
    EXPECT_NE(rig.stats().last_error.find("more than"), std::string::npos)
        << rig.stats().last_error;
}

TEST(ConvRegisters, RandomRegisterValuesNeverCrash) {
    // Whatever lands in the registers, the model answers with a result or an error sentence.
    auto rng = test::rng_for_test();
    const auto& map = hw::RegisterMap::get(NVDLA_REG_MAP_FULL);
    for (int round = 0; round < 100; ++round) {
        IntCase c = small_case(rng);
        Rig rig("nv_full");
        c.load(rig);
        std::uniform_int_distribution<uint32_t> any;
        for (int i = 0; i < 3; ++i) {
            const auto& regs = map.registers();
            const hw::RegisterInfo& r = regs[any(rng) % regs.size()];
            if (r.unit_name != "CDMA" && r.unit_name != "CSC" && r.unit_name != "CACC") continue;
            // Small values keep a lucky layer fast: sizes, strides, dilations and paddings only
            // vary in their low bits; the rest (precisions, modes, addresses) anywhere.
            uint32_t v = any(rng);
            for (const char* small : {"SIZE", "STRIDE", "DILATION", "PADDING", "BATCH"})
                if (r.name.find(small) != std::string_view::npos) v &= 0x00030003;
            rig.set(std::string(r.unit_name).c_str(), std::string(r.name).c_str(), v);
        }
        const AccumulatorCube out = rig.execute();
        EXPECT_TRUE(!out.empty() || rig.stats().programming_errors == 1u);
    }
}

}  // namespace
}  // namespace nvdla::emu::conv_test
