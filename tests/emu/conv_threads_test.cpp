// A flying integer layer (convolution -> SDP -> memory, or -> PDP -> memory; dense or
// block-diagonal weights) run through the Device with 1, 2, 3 and 4 threads writes the same
// memory, leaves the same registers and counts the same DMA traffic: the layer's threads make
// CACC's blocks of rows while SDP takes them in order on the calling thread (fused_pass), or
// compute the whole cube when SDP cannot take blocks (an operand where the output goes).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "conv_test_rig.hpp"
#include "emu/parallel.hpp"
#include "isa_levels.hpp"
#include "nvdla/emu/device.hpp"
#include "nvdla/hw/register_map.hpp"
#include "test_support.hpp"

namespace nvdla::emu::conv_test {
namespace {

constexpr uint64_t kBiasBase = 0xb0000000, kEwBase = 0xb4000000, kPdpBase = 0xb8000000;

// What SDP (and PDP) do with the convolution's output.
struct Post {
    bool bias = false;        // X1 ALU SUM, per-kernel 16-bit operands from memory
    bool mul_memory = false;  // X1 MUL from the same operands (else a register)
    bool relu = false;
    bool residual = false;           // Y ALU SUM of a per-element int8/int16 operand in memory
    bool residual_in_place = false;  // ...which is where the output goes
    bool over_input = false;         // the output goes where the convolution's input is
    bool input_cut = false;          // only the input's first half is memory: CDMA's reads fault
    bool output_cut = false;         // ...the output's: SDP's writes fault
    bool residual_cut = false;       // ...the residual operand's: SDP_RDMA's reads fault
    bool to_pdp = false;             // 2x2 (or 1x1) max pooling on the fly
    bool overlapping_lines = false;  // output line stride half a line: lines share bytes
    uint32_t cvt_scale = 1, cvt_shift = 0;
    int32_t cvt_offset = 0;
};

// Everything a run leaves: memory, registers, DMA statistics.
struct Outcome {
    std::vector<std::vector<uint8_t>> regions;
    std::vector<uint32_t> registers;
    uint64_t bytes_read = 0, bytes_written = 0, faults = 0, programming_errors = 0;
    std::string last_error;
    uint64_t first_fault_address = 0;
    bool first_fault_write = false;
    bool operator==(const Outcome&) const = default;
};

struct Layer {
    ConvSpec conv;
    Post post;
    uint64_t seed = 0;
    // Kernel k reads only the channels of its group of `group` (block-diagonal weights, which
    // CMAC's grouped kernel takes); 0: dense weights.
    uint32_t group = 0;

    uint32_t bpe() const { return bytes_per_element(conv.precision); }
};

Outcome run(const Layer& layer, unsigned threads) {
    const ConvSpec& spec = layer.conv;
    const Post& post = layer.post;
    const HwConfig& cfg = test::config("nv_full");
    const auto& map = hw::RegisterMap::get(cfg.reg_map);
    FlatMemory memory;
    Device device(cfg, memory);
    device.set_threads(threads);

    // The convolution's registers as the conv rig programs them, replayed onto the device.
    Rig rig("nv_full");
    IntCase c{spec, {}, {}};
    std::mt19937_64 rng(layer.seed);
    c.fill_random(rng);
    if (layer.group)
        for (uint32_t k = 0; k < spec.kernels; ++k)
            for (uint32_t ch = 0; ch < spec.channels; ++ch)
                if (k / layer.group != ch / layer.group)
                    for (uint32_t r = 0; r < spec.kernel_h; ++r)
                        for (uint32_t x = 0; x < spec.kernel_w; ++x)
                            c.weights[((uint64_t(k) * spec.channels + ch) * spec.kernel_h + r) *
                                          spec.kernel_w +
                                      x] = 0;
    c.load(rig);
    const std::pair<const char*, nvdla_unit> units[] = {{"CDMA", NVDLA_UNIT_CDMA},
                                                        {"CSC", NVDLA_UNIT_CSC},
                                                        {"CMAC_A", NVDLA_UNIT_CMAC_A},
                                                        {"CMAC_B", NVDLA_UNIT_CMAC_B},
                                                        {"CACC", NVDLA_UNIT_CACC}};
    for (const hw::RegisterInfo& r : map.registers())
        for (const auto& [unit, id] : units)
            if (r.unit_name == unit && r.name.rfind("D_", 0) == 0 && r.name != "D_OP_ENABLE")
                device.write_register(r.address, rig.group_value(id, r.offset));

    const uint32_t bpe = layer.bpe();
    const uint32_t ow = spec.output_width(), oh = spec.output_height(), K = spec.kernels;
    const CubeLayout in{cfg.atom_bytes, bpe, spec.width, spec.height, spec.channels};
    const CubeLayout out{cfg.atom_bytes, bpe, ow, oh, K};
    const uint64_t in_bytes = in.batch() * spec.batches, out_bytes = out.batch() * spec.batches;
    std::vector<uint64_t> bases = {kDataBase, kWeightBase};
    std::vector<uint64_t> sizes = {std::max(in_bytes, out_bytes), 0};
    std::vector<uint8_t> input(sizes[0]);
    c.write_input(input.data(), in);
    if (post.input_cut) sizes[0] = in_bytes / 2;
    std::memcpy(memory.add_region(MemoryPort::Primary, kDataBase, sizes[0]), input.data(),
                sizes[0]);
    const auto surface = dc_weight_surface(
        cfg, spec.precision, K, spec.channels, spec.kernel_h, spec.kernel_w,
        [&](uint32_t k, uint32_t ch, uint32_t r, uint32_t s) { return c.wt(k, ch, r, s); });
    sizes[1] = surface.size();
    std::memcpy(memory.add_region(MemoryPort::Primary, kWeightBase, surface.size()), surface.data(),
                surface.size());

    const uint64_t out_base = post.over_input ? kDataBase : kOutBase;
    if (!post.over_input) {
        const uint64_t out_region = post.output_cut ? out_bytes / 2 : out_bytes;
        bases.push_back(kOutBase);
        sizes.push_back(out_region);
        memory.add_region(MemoryPort::Primary, kOutBase, out_region);
    }
    // Operands: per kernel (ALU and MUL, 16 bits each), per element (the residual).
    const uint32_t lanes = cfg.atom_bytes / bpe;
    const uint32_t padded = (K + lanes - 1) / lanes * lanes;
    if (post.bias) {
        auto* bias = reinterpret_cast<uint8_t*>(
            memory.add_region(MemoryPort::Primary, kBiasBase, uint64_t(padded) * 4));
        for (uint32_t k = 0; k < padded; ++k) {
            put16(bias + 4 * k, static_cast<uint16_t>(test::random_between(rng, 0, 0xffff)));
            put16(bias + 4 * k + 2, static_cast<uint16_t>(test::random_between(rng, 0, 0xffff)));
        }
        bases.push_back(kBiasBase);
        sizes.push_back(uint64_t(padded) * 4);
    }
    const uint64_t ew_base = post.residual_in_place ? out_base : kEwBase;
    if (post.residual) {
        const uint64_t ew_bytes = post.residual_cut ? out.batch() / 2 : out.batch();
        uint8_t* ew = post.residual_in_place ? reinterpret_cast<uint8_t*>(memory.translate(
                                                   MemoryPort::Primary, out_base, ew_bytes))
                                             : reinterpret_cast<uint8_t*>(memory.add_region(
                                                   MemoryPort::Primary, kEwBase, ew_bytes));
        for (uint64_t i = 0; i < ew_bytes; ++i)
            ew[i] = static_cast<uint8_t>(test::random_between(rng, 0, 255));
        if (!post.residual_in_place) {
            bases.push_back(kEwBase);
            sizes.push_back(ew_bytes);
        }
    }

    auto set = [&](const char* unit, const char* reg, uint32_t v) {
        const hw::RegisterInfo* r = map.find(unit, reg);
        ASSERT_NE(r, nullptr) << unit << "." << reg;
        device.write_register(r->address, v);
    };
    auto sdp = [&](const char* reg, uint32_t v) { set("SDP", reg, v); };
    auto rdma = [&](const char* reg, uint32_t v) { set("SDP_RDMA", reg, v); };
    const uint32_t p = static_cast<uint32_t>(spec.precision);
    sdp("D_FEATURE_MODE_CFG", 1 | (post.to_pdp ? 2u : 0u) | (spec.batches - 1) << 8);
    sdp("D_DATA_FORMAT", p | p << 2);
    sdp("D_DATA_CUBE_WIDTH", ow - 1);
    sdp("D_DATA_CUBE_HEIGHT", oh - 1);
    sdp("D_DATA_CUBE_CHANNEL", K - 1);
    sdp("D_DST_BASE_ADDR_LOW", static_cast<uint32_t>(out_base));
    sdp("D_DST_BASE_ADDR_HIGH", static_cast<uint32_t>(out_base >> 32));
    sdp("D_DST_LINE_STRIDE",
        static_cast<uint32_t>(post.overlapping_lines ? uint64_t(std::max(1u, ow / 2)) * out.atom
                                                     : out.line()));
    sdp("D_DST_SURFACE_STRIDE", static_cast<uint32_t>(out.surface()));
    sdp("D_DST_BATCH_STRIDE", static_cast<uint32_t>(out.batch()));
    sdp("D_DST_DMA_CFG", 1);
    sdp("D_CVT_OFFSET", static_cast<uint32_t>(post.cvt_offset));
    sdp("D_CVT_SCALE", post.cvt_scale);
    sdp("D_CVT_SHIFT", post.cvt_shift);
    sdp("D_PERF_ENABLE", 0x4);  // count saturations
    // X1: ALU SUM (operand shifted left 2), MUL (shift 7), ReLU, each as the layer asks.
    const bool x1 = post.bias || post.relu;
    sdp("D_DP_BS_CFG",
        x1 ? (post.bias ? 2u << 2 : 1u << 1 | 1u << 4) | (post.relu ? 0 : 1u << 6) : 1u);
    sdp("D_DP_BS_ALU_CFG", 1u | 2u << 8);
    sdp("D_DP_BS_MUL_CFG", (post.mul_memory ? 1u : 0u) | 7u << 8);
    sdp("D_DP_BS_MUL_SRC_VALUE", 93);
    sdp("D_DP_BN_CFG", 1);
    // Y: ALU SUM of the memory operand through its convertor (scale 3, shift 1), MUL and LUT off.
    sdp("D_DP_EW_CFG", post.residual ? 2u << 2 | 1u << 4 | 1u << 6 : 1u);
    sdp("D_DP_EW_ALU_CFG", 1);
    sdp("D_DP_EW_ALU_CVT_OFFSET_VALUE", 5);
    sdp("D_DP_EW_ALU_CVT_SCALE_VALUE", 3);
    sdp("D_DP_EW_ALU_CVT_TRUNCATE_VALUE", 1);
    const bool uses_rdma = post.bias || post.residual;
    if (uses_rdma) {
        rdma("D_FEATURE_MODE_CFG", 1 | p << 2 | p << 4 | p << 6 | (spec.batches - 1) << 8);
        rdma("D_DATA_CUBE_WIDTH", ow - 1);
        rdma("D_DATA_CUBE_HEIGHT", oh - 1);
        rdma("D_DATA_CUBE_CHANNEL", K - 1);
        // Per kernel, both (ALU then MUL), 16 bits each.
        rdma("D_BRDMA_CFG", post.bias ? 2u << 1 | 1u << 3 | 1u << 5 : 1u);
        rdma("D_BS_BASE_ADDR_LOW", static_cast<uint32_t>(kBiasBase));
        rdma("D_BS_BASE_ADDR_HIGH", static_cast<uint32_t>(kBiasBase >> 32));
        rdma("D_NRDMA_CFG", 1);
        // Per element, ALU, one component of the precision's size.
        rdma("D_ERDMA_CFG",
             post.residual ? 1u << 1 | (bpe == 2 ? 1u << 3 : 0u) | 1u << 4 | 1u << 5 : 1u);
        rdma("D_EW_BASE_ADDR_LOW", static_cast<uint32_t>(ew_base));
        rdma("D_EW_BASE_ADDR_HIGH", static_cast<uint32_t>(ew_base >> 32));
        rdma("D_EW_LINE_STRIDE", static_cast<uint32_t>(out.line()));
        rdma("D_EW_SURFACE_STRIDE", static_cast<uint32_t>(out.surface()));
    }
    if (post.to_pdp) {
        const uint32_t kw = ow > 1 ? 2 : 1, kh = oh > 1 ? 2 : 1;
        const uint32_t pw = ow - kw + 1, ph = oh - kh + 1;
        const CubeLayout pooled{cfg.atom_bytes, bpe, pw, ph, K};
        bases.push_back(kPdpBase);
        sizes.push_back(pooled.batch());
        memory.add_region(MemoryPort::Primary, kPdpBase, pooled.batch());
        auto pdp = [&](const char* reg, uint32_t v) { set("PDP", reg, v); };
        pdp("D_DATA_CUBE_IN_WIDTH", ow - 1);
        pdp("D_DATA_CUBE_IN_HEIGHT", oh - 1);
        pdp("D_DATA_CUBE_IN_CHANNEL", K - 1);
        pdp("D_DATA_CUBE_OUT_WIDTH", pw - 1);
        pdp("D_DATA_CUBE_OUT_HEIGHT", ph - 1);
        pdp("D_DATA_CUBE_OUT_CHANNEL", K - 1);
        pdp("D_OPERATION_MODE_CFG", 1);  // max, on the fly
        pdp("D_POOLING_KERNEL_CFG", (kw - 1) | (kh - 1) << 8);
        pdp("D_POOLING_PADDING_CFG", 0);
        pdp("D_DST_BASE_ADDR_LOW", static_cast<uint32_t>(kPdpBase));
        pdp("D_DST_BASE_ADDR_HIGH", static_cast<uint32_t>(kPdpBase >> 32));
        pdp("D_DST_LINE_STRIDE", static_cast<uint32_t>(pooled.line()));
        pdp("D_DST_SURFACE_STRIDE", static_cast<uint32_t>(pooled.surface()));
        pdp("D_DST_RAM_CFG", 1);
        pdp("D_DATA_FORMAT", p);
        pdp("D_OP_ENABLE", 1);
    }
    if (uses_rdma) rdma("D_OP_ENABLE", 1);
    for (const char* unit : {"SDP", "CACC", "CMAC_A", "CMAC_B", "CSC", "CDMA"})
        set(unit, "D_OP_ENABLE", 1);

    Outcome o;
    for (size_t i = 0; i < bases.size(); ++i) {
        const auto* bytes =
            reinterpret_cast<const uint8_t*>(memory.translate(MemoryPort::Primary, bases[i], 1));
        o.regions.emplace_back(bytes, bytes + sizes[i]);
    }
    for (const hw::RegisterInfo& r : map.registers())
        o.registers.push_back(device.read_register(r.address));
    const DeviceStats& st = device.stats();
    o.bytes_read = st.bytes_read;
    o.bytes_written = st.bytes_written;
    o.faults = st.faults;
    o.programming_errors = st.programming_errors;
    o.last_error = st.last_error;
    o.first_fault_address = st.first_fault.address;
    o.first_fault_write = st.first_fault.write;
    EXPECT_EQ(st.operations, 1u) << st.last_error;
    EXPECT_EQ(st.programming_errors, 0u) << st.last_error;
    return o;
}

Layer random_layer(std::mt19937_64& rng) {
    Layer l;
    ConvSpec& s = l.conv;
    s.precision = test::random_between(rng, 0, 2) ? Precision::Int8 : Precision::Int16;
    s.batches = test::random_between(rng, 0, 3) ? 1 : 2;
    s.width = test::random_between(rng, 1, 16);
    s.height = test::random_between(rng, 1, 16);
    s.channels = test::random_between(rng, 1, 24);
    s.kernels = test::random_between(rng, 1, 40);
    s.kernel_w = test::random_between(rng, 1, 3);
    s.kernel_h = test::random_between(rng, 1, 3);
    s.pad_left = s.pad_right = test::random_between(rng, 0, 1);
    s.pad_top = s.pad_bottom = test::random_between(rng, 0, 1);
    if (s.width + s.pad_left + s.pad_right < s.kernel_w) s.kernel_w = 1;
    if (s.height + s.pad_top + s.pad_bottom < s.kernel_h) s.kernel_h = 1;
    s.stride_y = test::random_between(rng, 1, 2);
    // int16 sums beyond 2^31 at clip 0: CACC's delivery saturates and counts them.
    s.clip = s.precision == Precision::Int16 ? test::random_between(rng, 0, 2) * 8
                                             : test::random_between(rng, 0, 6);
    if (test::random_between(rng, 0, 3) == 0) {
        // Depthwise (the grouped kernel's diagonal band) or grouped: as many kernels as
        // channels.
        const uint32_t groups[] = {1, 1, 4};
        l.group = groups[test::random_between(rng, 0, 2)];
        s.kernels = s.channels = l.group * test::random_between(rng, 4, 10);
    }
    Post& p = l.post;
    p.bias = test::random_between(rng, 0, 2) != 0;
    p.mul_memory = p.bias && test::random_between(rng, 0, 1);
    p.relu = test::random_between(rng, 0, 1);
    p.residual = test::random_between(rng, 0, 2) == 0;
    p.residual_in_place = p.residual && test::random_between(rng, 0, 3) == 0;
    p.over_input = test::random_between(rng, 0, 5) == 0;
    p.to_pdp = test::random_between(rng, 0, 5) == 0 && s.batches == 1;
    p.cvt_scale = test::random_between(rng, 1, 300);
    p.cvt_shift = test::random_between(rng, 4, 20);
    p.cvt_offset = static_cast<int32_t>(test::random_between(rng, 0, 64)) - 32;
    l.seed = rng();
    return l;
}

std::string describe(const Layer& l) {
    const ConvSpec& s = l.conv;
    const Post& p = l.post;
    return std::string(to_string(s.precision)) + " " + std::to_string(s.batches) + "x" +
           std::to_string(s.width) + "x" + std::to_string(s.height) + "x" +
           std::to_string(s.channels) + " -> " + std::to_string(s.kernels) + " kernels " +
           std::to_string(s.kernel_w) + "x" + std::to_string(s.kernel_h) + (p.bias ? " bias" : "") +
           (p.relu ? " relu" : "") + (p.residual ? " residual" : "") +
           (p.residual_in_place ? " in place" : "") + (p.over_input ? " over the input" : "") +
           (p.to_pdp ? " to PDP" : "") + (l.group ? " grouped by " + std::to_string(l.group) : "");
}

// Every layer small enough to run on several threads.
class ManyThreads : public ::testing::Test {
  protected:
    void SetUp() override { set_work_per_thread(1); }
    void TearDown() override { set_work_per_thread(0); }
};

// 2, 3 and 4 threads give `one`, the layer's outcome on one thread; `where` names the case.
void expect_as_on_one_thread(const Layer& layer, const Outcome& one, const std::string& where) {
    for (unsigned threads : {2u, 3u, 4u})
        EXPECT_TRUE(run(layer, threads) == one) << where << ", " << threads << " threads";
}

// "layer i (its description)" for failure messages.
std::string layer_case(int i, const Layer& layer) {
    return "layer " + std::to_string(i) + " (" + describe(layer) + ")";
}

// Layer i's DMAs fault on one thread, and 2, 3 and 4 threads give the same outcome.
void expect_faults_as_on_one_thread(const Layer& layer, int i) {
    const Outcome one = run(layer, 1);
    EXPECT_GT(one.faults, 0u) << describe(layer);
    expect_as_on_one_thread(layer, one, layer_case(i, layer));
}

TEST_F(ManyThreads, FlyingLayersAreTheSameOnAnyThreadCount) {
    auto rng = test::rng_for_test();
    for (int i = 0; i < 24; ++i) {
        const Layer layer = random_layer(rng);
        for (IsaLevel level : levels_of_this_cpu()) {
            const IsaLimit limit(level);
            const Outcome one = run(layer, 1);
            expect_as_on_one_thread(layer, one, layer_case(i, layer) + ", " + isa_name(level));
        }
    }
}

// Heights whose blocks come out odd, even and one per thread, with batches.
TEST_F(ManyThreads, BlockCountsOddEvenAndOne) {
    auto rng = test::rng_for_test();
    for (uint32_t height : {1u, 2u, 3u, 5u, 8u, 13u})
        for (uint32_t batches : {1u, 3u}) {
            Layer layer = random_layer(rng);
            layer.conv.precision = Precision::Int8;
            // Big enough for the other threads to make some of the blocks.
            layer.conv.width = 12;
            layer.conv.channels = 48;
            layer.conv.kernels = 64;
            layer.conv.height = height;
            layer.conv.batches = batches;
            layer.conv.kernel_w = layer.conv.kernel_h = 3;
            layer.conv.pad_left = layer.conv.pad_right = 1;
            layer.conv.pad_top = layer.conv.pad_bottom = 1;
            layer.conv.stride_y = 1;
            layer.conv.clip = 4;
            layer.group = 0;
            layer.post = Post{};
            layer.post.bias = layer.post.relu = true;
            layer.post.residual = true;
            layer.post.cvt_scale = 1;
            layer.post.cvt_shift = 6;
            const Outcome one = run(layer, 1);
            expect_as_on_one_thread(layer, one, describe(layer));
        }
}

// CDMA's input reads fault past the first half of the input (zeros in their place, the
// faults counted) while the rows are converted and the plane built on the layer's threads.
TEST_F(ManyThreads, InputReadFaultsAreTheSameOnAnyThreadCount) {
    auto rng = test::rng_for_test();
    for (int i = 0; i < 6; ++i) {
        Layer layer = random_layer(rng);
        ConvSpec& c = layer.conv;
        c.channels = test::random_between(rng, 40, 72);  // several surfaces
        c.height = test::random_between(rng, 6, 16);
        c.batches = i % 3 == 2 ? 2 : 1;
        layer.group = 0;
        Post& p = layer.post;
        p.input_cut = true;
        p.over_input = p.residual_in_place = p.to_pdp = false;
        expect_faults_as_on_one_thread(layer, i);
    }
}

// SDP_RDMA's residual reads and the write DMA's writes fault past the first half of their
// regions, alone or both, while the blocks and their lines (which read the residual operand)
// are made on the layer's threads: the same first and last fault, count and memory.
TEST_F(ManyThreads, ResidualAndOutputFaultsAreTheSameOnAnyThreadCount) {
    auto rng = test::rng_for_test();
    for (int i = 0; i < 9; ++i) {
        Layer layer = random_layer(rng);
        ConvSpec& c = layer.conv;
        c.height = test::random_between(rng, 6, 16);    // several blocks
        c.kernels = test::random_between(rng, 40, 72);  // several channel groups
        layer.group = 0;
        Post& p = layer.post;
        p.residual = true;
        p.residual_cut = i % 3 != 1;
        p.output_cut = i % 3 != 0;
        p.over_input = p.residual_in_place = p.to_pdp = false;
        expect_faults_as_on_one_thread(layer, i);
    }
}

// The write DMA's writes fault past the first half of the output (and CDMA's reads past the
// first half of the input in some layers) while the blocks' lines, which read no memory, are
// made and copied to their checked places on the layer's threads: the same faults and memory.
TEST_F(ManyThreads, OutputFaultsWithoutOperandReadsAreTheSameOnAnyThreadCount) {
    auto rng = test::rng_for_test();
    for (int i = 0; i < 9; ++i) {
        Layer layer = random_layer(rng);
        ConvSpec& c = layer.conv;
        c.height = test::random_between(rng, 6, 16);    // several blocks
        c.kernels = test::random_between(rng, 40, 72);  // several channel groups
        Post& p = layer.post;
        p.residual = false;
        p.output_cut = true;
        p.input_cut = i % 3 == 2;
        p.over_input = p.residual_in_place = p.to_pdp = false;
        expect_faults_as_on_one_thread(layer, i);
    }
}

// Output lines that share bytes (a line stride of half a line), written with lines that read
// a residual operand and with lines that read no memory: the later line's bytes win, as on one
// thread, whichever threads make the blocks.
TEST_F(ManyThreads, OverlappingOutputLinesAreTheSameOnAnyThreadCount) {
    auto rng = test::rng_for_test();
    for (int i = 0; i < 6; ++i) {
        Layer layer = random_layer(rng);
        ConvSpec& c = layer.conv;
        c.width = test::random_between(rng, 4, 16);
        c.height = test::random_between(rng, 8, 16);  // several blocks
        c.kernels = test::random_between(rng, 8, 72);
        c.batches = 1;
        layer.group = 0;
        Post& p = layer.post;
        p.residual = i % 2 == 0;  // odd layers: lines that read no memory, made with their blocks
        p.overlapping_lines = true;
        p.over_input = p.residual_in_place = p.to_pdp = false;
        const Outcome one = run(layer, 1);
        for (int again = 0; again < 3; ++again)
            expect_as_on_one_thread(layer, one, layer_case(i, layer));
    }
}

// A register's value in an outcome (its place in the register map's list).
uint32_t register_value(const Outcome& o, const char* unit, const char* name) {
    const auto& registers = hw::RegisterMap::get(test::config("nv_full").reg_map).registers();
    for (size_t i = 0; i < registers.size(); ++i)
        if (registers[i].unit_name == unit && registers[i].name == name) return o.registers[i];
    ADD_FAILURE() << unit << "." << name << " is not in the register map";
    return 0;
}

// Layers whose outputs saturate in SDP's convertor, and int16 sums in CACC's delivery: the
// threads count their own lines (operands per kernel: the lines are made with the blocks) and
// blocks, summed after the pass; with a residual operand the lines stay on the calling thread.
TEST_F(ManyThreads, SaturationCountsAreTheSameOnAnyThreadCount) {
    auto rng = test::rng_for_test();
    for (int i = 0; i < 8; ++i) {
        Layer layer = random_layer(rng);
        ConvSpec& c = layer.conv;
        c.precision = i % 4 == 3 ? Precision::Int16 : Precision::Int8;
        c.clip = 0;  // int16 sums beyond 2^31 saturate in CACC's delivery
        c.width = test::random_between(rng, 4, 14);
        c.height = test::random_between(rng, 5, 16);  // several blocks
        c.stride_y = 1;
        c.kernel_w = c.kernel_h = 3;
        c.pad_left = c.pad_right = c.pad_top = c.pad_bottom = 1;
        Post& p = layer.post;
        p.bias = true;
        p.residual = i % 2 == 1;
        p.residual_in_place = p.over_input = p.to_pdp = false;
        p.cvt_scale = test::random_between(rng, 100, 300);
        p.cvt_shift = test::random_between(rng, 0, 3);
        for (IsaLevel level : levels_of_this_cpu()) {
            const IsaLimit limit(level);
            const Outcome one = run(layer, 1);
            EXPECT_GT(register_value(one, "SDP", "D_PERF_OUT_SATURATION"), 0u) << describe(layer);
            if (c.precision == Precision::Int16 && !layer.group) {
                EXPECT_GT(register_value(one, "CACC", "D_OUT_SATURATION"), 0u) << describe(layer);
            }
            expect_as_on_one_thread(layer, one, layer_case(i, layer) + ", " + isa_name(level));
        }
    }
}

TEST(ProduceInOrder, EveryBlockMadeOnceAndConsumedInOrder) {
    for (unsigned threads : {1u, 2u, 3u, 8u})
        for (uint32_t count : {0u, 1u, 2u, 7u, 64u})
            for (uint32_t slots : {1u, 2u, 5u}) {
                std::vector<uint32_t> slot_block(slots, UINT32_MAX);
                std::vector<int> made(count, 0);
                std::vector<uint32_t> consumed;
                produce_in_order(
                    threads, count, slots,
                    [&](unsigned part, uint32_t block, uint32_t slot) {
                        EXPECT_LT(part, threads);
                        EXPECT_EQ(slot, block % slots);
                        slot_block[slot] = block;  // the slot is this part's alone until consumed
                        ++made[block];
                    },
                    [&](uint32_t block, uint32_t slot) {
                        EXPECT_EQ(slot_block[slot], block);
                        consumed.push_back(block);
                    });
                ASSERT_EQ(consumed.size(), count);
                for (uint32_t i = 0; i < count; ++i) {
                    EXPECT_EQ(consumed[i], i);
                    EXPECT_EQ(made[i], 1);
                }
            }
}

// Every block prepared in order on the calling thread, then made once, after its slot's
// previous block was made (the waits of both sides: 8 threads for 2 cores, one slot).
TEST(PrepareThenMake, EveryBlockMadeOnceAfterItIsPrepared) {
    for (unsigned threads : {1u, 2u, 3u, 8u})
        for (uint32_t count : {0u, 1u, 2u, 7u, 64u})
            for (uint32_t slots : {1u, 2u, 5u}) {
                std::vector<uint32_t> prepared;
                std::vector<std::atomic<int>> made(count);
                // The block each slot was last prepared for.
                std::vector<std::atomic<uint32_t>> slot_block(slots);
                for (std::atomic<uint32_t>& b : slot_block) b = UINT32_MAX;
                prepare_then_make(
                    threads, count, slots,
                    [&](uint32_t block, uint32_t slot) {
                        EXPECT_EQ(slot, block % slots);
                        if (block >= slots) {
                            EXPECT_EQ(made[block - slots].load(), 1);
                        }
                        slot_block[slot] = block;
                        prepared.push_back(block);
                    },
                    [&](unsigned part, uint32_t block, uint32_t slot) {
                        EXPECT_LT(part, threads);
                        EXPECT_EQ(slot_block[slot].load(), block);
                        ++made[block];
                    });
                ASSERT_EQ(prepared.size(), count);
                for (uint32_t i = 0; i < count; ++i) EXPECT_EQ(prepared[i], i);
                for (const std::atomic<int>& m : made) EXPECT_EQ(m.load(), 1);
            }
}

// Nested calls (a part running parts) and calls from several threads at once run every part.
TEST(RunParts, NestedAndConcurrentCallsRunEveryPart) {
    std::atomic<int> runs{0};
    std::vector<std::thread> callers;
    for (int t = 0; t < 3; ++t)
        callers.emplace_back([&] {
            for (int i = 0; i < 50; ++i)
                run_parts(3, [&](unsigned) { run_parts(2, [&](unsigned) { ++runs; }); });
        });
    for (std::thread& t : callers) t.join();
    EXPECT_EQ(runs.load(), 3 * 50 * 3 * 2);
}

// A part that returns 20 ms before the other counts those 20 ms as waited at the call's end
// (whichever thread runs the other part), and the call is counted: the pool is free here.
TEST(RunParts, StatsCountTheWaitAtTheCallsEnd) {
    const ParallelStats before = parallel_stats();
    run_parts(2, [](unsigned part) {
        if (part == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    });
    const ParallelStats after = parallel_stats();
    EXPECT_EQ(after.calls, before.calls + 1);
    EXPECT_GE(after.end_idle - before.end_idle, 0.020);
    EXPECT_LT(after.end_idle - before.end_idle, 10.0);
}

// A child forked after the pool's threads started (which it does not have) runs parts on
// threads of its own: part 0 sees part 1 start while it waits (the pool is free here, so part 1
// runs at the same time unless the child's pool counts the parent's threads).
TEST(RunParts, ForkedChildRunsPartsAtTheSameTime) {
#if defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "ThreadSanitizer does not follow a multi-threaded fork";
#endif
    // The parent's pool thread runs part 1 while part 0 waits, so it is past its start when the
    // process forks: a thread still starting holds AddressSanitizer's locks (GCC 12's libasan
    // takes none around fork), and the child's copies of them would stay held.
    std::atomic<bool> taken{false};
    run_parts(2, [&](unsigned part) {
        if (part == 1) {
            taken = true;
            return;
        }
        for (int i = 0; i < 5000 && !taken; ++i) usleep(1000);
    });
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        alarm(20);
        std::atomic<bool> second{false};
        bool together = false;
        run_parts(2, [&](unsigned part) {
            if (part == 1) {
                second = true;
                return;
            }
            for (int i = 0; i < 5000 && !second; ++i) usleep(1000);
            together = second;
        });
        _exit(together ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace nvdla::emu::conv_test
