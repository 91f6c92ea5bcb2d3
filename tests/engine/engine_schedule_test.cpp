// Tasks of several operations: dependencies between processors, both register groups of a
// processor, fused pipelines, the shared LUT, CDMA events, and the engine's behaviour when the
// hardware misbehaves (bounded waits, spurious interrupts, stalls) or the API is misused.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "engine_ops.hpp"
#include "nvdla/formats/weights.hpp"

namespace nvdla::engine_test {
namespace {

// The producer groups the engine selected for a unit, in order.
std::vector<uint32_t> producers(const Rig& rig, nvdla_unit unit) {
    std::vector<uint32_t> groups;
    const uint32_t pointer = rig.unit_base(unit) + NVDLA_SDP_S_POINTER;
    for (const auto& [offset, value] : rig.write_log())
        if (offset == pointer) groups.push_back(value & 1u);
    return groups;
}

class EngineChain : public testing::TestWithParam<uint32_t> {};

// BDMA copies the input, SDP adds 1 to the copy, PDP max-pools SDP's output.
TEST_P(EngineChain, BdmaThenSdpThenPdp) {
    Rig rig("nv_full");
    auto rng = test::rng_for_test();
    const Feature f(4, 4, 16, 1, 32), pooled(2, 2, 16, 1, 32);
    const uint32_t bytes = static_cast<uint32_t>(f.bytes);
    const int input = rig.add_entry(bytes), copy = rig.add_entry(bytes),
              summed = rig.add_entry(bytes), out = rig.add_entry(pooled.bytes);
    const auto x = test::random_vector<int8_t>(rng, 16 * 16, -100, 100);
    put_int8(rig.data(input), f, x);

    TaskBuilder t;
    const int bdma = t.add(NVDLA_DLA_OP_BDMA);
    const int sdp = t.add(NVDLA_DLA_OP_SDP);
    const int pdp = t.add(NVDLA_DLA_OP_PDP);
    nvdla_dla_bdma_surface_desc& s = t[bdma].surf.bdma_surface;
    s.num_transfers = 1;
    s.transfers[0] = bdma_transfer(input, copy, bytes, 1, 1, bytes, bytes, bytes, bytes);
    t[bdma].op.bdma_op.num_transfers = 1;
    sdp_copy(t[sdp], f.cube(copy), f.cube(summed));
    nvdla_dla_sdp_op& x1 = t[sdp].op.sdp_op.x1_op;
    x1.enable = 1;
    x1.type = NVDLA_DLA_SDP_OP_ADD;
    x1.alu_type = NVDLA_DLA_SDP_ALU_SUM;
    x1.mode = NVDLA_DLA_SDP_PER_LAYER;
    x1.alu_operand = 1;
    pdp_pool(t[pdp], f.cube(summed), pooled.cube(out), NVDLA_DLA_POOL_MAX, 2, 2, 2, 2);
    t.depend(bdma, sdp, NVDLA_DLA_EVENT_OP_COMPLETED);
    t.depend(sdp, pdp, NVDLA_DLA_EVENT_OP_COMPLETED);
    t.finish_queues();
    rig.write(t, GetParam());
    rig.validate_and_run();

    const auto y = get_int8(rig.data(out), pooled);
    for (uint32_t c = 0; c < 16; ++c)
        for (uint32_t oy = 0; oy < 2; ++oy)
            for (uint32_t ox = 0; ox < 2; ++ox) {
                int v = -128;
                for (uint32_t k = 0; k < 4; ++k)
                    v = std::max(v, x[(c * 4 + oy * 2 + k / 2) * 4 + ox * 2 + k % 2] + 1);
                ASSERT_EQ(y[(c * 2 + oy) * 2 + ox], v);
            }
    EXPECT_EQ(rig.stats().operations, 3u);
}

INSTANTIATE_TEST_SUITE_P(Versions, EngineChain, testing::Values(kV10, kV11, kV12),
                         [](const testing::TestParamInfo<uint32_t>& i) {
                             return "v0_" + std::to_string(NVDLA_DLA_VERSION_MINOR(i.param));
                         });

class EnginePingPong : public testing::TestWithParam<const char*> {};

// Four SDP operations, each waiting for the previous one to complete and adding i + 1 to its
// output, written to the rig: every one is programmed while its predecessor holds the other
// register group. The output, input + 10, goes to the last of the five buffers.
struct SerialSdp {
    Feature f;
    std::vector<int> buffers;
    std::vector<int8_t> x;

    explicit SerialSdp(Rig& rig) : f(3, 2, 10, 1, rig.cfg().atom_bytes) {
        auto rng = test::rng_for_test();
        for (int i = 0; i < 5; ++i) buffers.push_back(rig.add_entry(f.bytes));
        x = test::random_vector<int8_t>(rng, 60, -100, 100);
        put_int8(rig.data(buffers[0]), f, x);
        TaskBuilder t;
        for (int i = 0; i < 4; ++i) {
            const int op = t.add(NVDLA_DLA_OP_SDP);
            sdp_copy(t[op], f.cube(buffers[size_t(i)]), f.cube(buffers[size_t(i) + 1]));
            nvdla_dla_sdp_op& x1 = t[op].op.sdp_op.x1_op;
            x1.enable = 1;
            x1.type = NVDLA_DLA_SDP_OP_ADD;
            x1.alu_type = NVDLA_DLA_SDP_ALU_SUM;
            x1.alu_operand = i + 1;
            if (i > 0) t.depend(op - 1, op, NVDLA_DLA_EVENT_OP_COMPLETED);
        }
        t.finish_queues();
        rig.write(t, kV12);
    }
    void clear_output(Rig& rig) const {
        put_int8(rig.data(buffers[4]), f, std::vector<int8_t>(x.size(), 0));
    }
    void check_output(Rig& rig) const {
        const auto y = get_int8(rig.data(buffers[4]), f);
        for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], saturate(x[i] + 10, 8));
    }
};

TEST_P(EnginePingPong, SerialisedSdpOperationsAlternateGroups) {
    Rig rig(GetParam());
    const SerialSdp task(rig);
    rig.validate_and_run();
    task.check_output(rig);
    const std::vector<uint32_t> groups = producers(rig, NVDLA_UNIT_SDP);
    EXPECT_EQ(std::set<uint32_t>(groups.begin(), groups.end()), (std::set<uint32_t>{0, 1}));
    EXPECT_GE(rig.interrupts(), 4u);
}

// The writes of a register at a unit's offset in the engine's log.
size_t writes_of(const Rig& rig, nvdla_unit unit, uint32_t offset) {
    const uint32_t address = rig.unit_base(unit) + offset;
    return size_t(std::count_if(rig.write_log().begin(), rig.write_log().end(),
                                [&](const auto& w) { return w.first == address; }));
}

// Within a task, a group register that holds the value an operation needs is not written
// again (the four operations share their cube, not their operand), while D_OP_ENABLE and
// S_POINTER always are; a task started again, or after a reset, writes everything anew.
TEST_P(EnginePingPong, GroupRegistersHoldingTheValueAreNotWrittenAgainInATask) {
    Rig rig(GetParam());
    const SerialSdp task(rig);
    rig.validate_and_run();
    task.check_output(rig);
    EXPECT_EQ(writes_of(rig, NVDLA_UNIT_SDP, NVDLA_SDP_D_OP_ENABLE), 4u);
    EXPECT_GE(writes_of(rig, NVDLA_UNIT_SDP, NVDLA_SDP_S_POINTER), 4u);  // programmed, enabled
    EXPECT_EQ(writes_of(rig, NVDLA_UNIT_SDP, NVDLA_SDP_D_DP_BS_ALU_SRC_VALUE), 4u);
    EXPECT_EQ(writes_of(rig, NVDLA_UNIT_SDP, NVDLA_SDP_D_DATA_CUBE_WIDTH), 2u);  // once a group

    // Started again, the task's writes are all made again (the device may have been reset).
    task.clear_output(rig);
    ASSERT_EQ(rig.run(), 0) << rig.error().message;
    task.check_output(rig);
    EXPECT_EQ(writes_of(rig, NVDLA_UNIT_SDP, NVDLA_SDP_D_DATA_CUBE_WIDTH), 4u);

    // Likewise after a reset of the engine.
    nvdla_dla_engine_reset(rig.engine());
    rig.device().reset();
    task.clear_output(rig);
    ASSERT_EQ(rig.run(), 0) << rig.error().message;
    task.check_output(rig);
    EXPECT_EQ(writes_of(rig, NVDLA_UNIT_SDP, NVDLA_SDP_D_DATA_CUBE_WIDTH), 6u);
    EXPECT_EQ(writes_of(rig, NVDLA_UNIT_SDP, NVDLA_SDP_D_OP_ENABLE), 12u);
}

// Four independent SDP operations: two are enabled at once and complete in one interrupt.
TEST_P(EnginePingPong, IndependentSdpOperationsShareInterrupts) {
    Rig rig(GetParam());
    auto rng = test::rng_for_test();
    const Feature f(3, 2, 10, 1, rig.cfg().atom_bytes);
    std::vector<int> in, out;
    std::vector<std::vector<int8_t>> x;
    for (int i = 0; i < 4; ++i) {
        in.push_back(rig.add_entry(f.bytes));
        out.push_back(rig.add_entry(f.bytes));
        x.push_back(test::random_vector<int8_t>(rng, 60, -128, 127));
        put_int8(rig.data(in.back()), f, x.back());
    }
    TaskBuilder t;
    for (size_t i = 0; i < 4; ++i) {
        const int op = t.add(NVDLA_DLA_OP_SDP);
        sdp_copy(t[op], f.cube(in[i]), f.cube(out[i]));
        t[op].op.sdp_op.x1_op.enable = 1;
        t[op].op.sdp_op.x1_op.act = NVDLA_DLA_ACT_RELU;
    }
    t.finish_queues();
    rig.write(t, kV10);
    rig.validate_and_run();
    for (size_t i = 0; i < 4; ++i) {
        const auto y = get_int8(rig.data(out[i]), f);
        for (size_t j = 0; j < 60; ++j) ASSERT_EQ(y[j], std::max<int8_t>(x[i][j], 0));
    }
    EXPECT_LE(rig.interrupts(), 3u);
}

INSTANTIATE_TEST_SUITE_P(Maps, EnginePingPong, testing::Values("nv_full", "nv_small"));

// CONV -> SDP -> PDP fused in one pass, a BDMA copy waiting for the convolution's input to be
// loaded (CDMA_DT_DONE), and the result checked against a reference.
TEST(EngineFused, ConvSdpPdpWithCdmaEvent) {
    Rig rig("nv_full");
    auto rng = test::rng_for_test();
    const ConvShape sh{4, 4, 8, 8, 3, 3, 1};
    const Feature in(4, 4, 8, 1, 32), pooled(2, 2, 8, 1, 32);
    const auto x = test::random_vector<int8_t>(rng, 8 * 16, -20, 20);
    const auto wt = test::random_vector<int8_t>(rng, 8 * 8 * 9, -8, 8);
    const Result<WeightLayout> layout =
        make_weight_layout(rig.cfg(), {WeightKind::Direct, Precision::Int8}, Dims4{8, 8, 3, 3});
    ASSERT_TRUE(layout);
    const uint32_t weight_bytes = static_cast<uint32_t>(layout->size_bytes());
    const int src = rig.add_entry(in.bytes), weights = rig.add_entry(weight_bytes),
              dst = rig.add_entry(pooled.bytes), backup = rig.add_entry(in.bytes);
    put_int8(rig.data(src), in, x);
    ASSERT_TRUE(
        pack_weights({wt.data(), wt.size(), HostType::Int8, HostLayout::NCHW, Dims4{8, 8, 3, 3}},
                     *layout, ByteSpan(rig.entry(weights).host, weight_bytes)));

    TaskBuilder t;
    const int conv = t.add(NVDLA_DLA_OP_CONV);
    const int sdp = t.add(NVDLA_DLA_OP_SDP);
    const int pdp = t.add(NVDLA_DLA_OP_PDP);
    const int bdma = t.add(NVDLA_DLA_OP_BDMA);
    conv_direct(t[conv], rig.cfg(), sh, in.cube(src), weights, weight_bytes);
    sdp_after_conv(t[sdp], sh, hw_cube(4, 4, 8), 3);
    pdp_pool(t[pdp], hw_cube(4, 4, 8), pooled.cube(dst), NVDLA_DLA_POOL_MAX, 2, 2, 2, 2);
    t.fuse(conv, sdp);
    t.fuse(sdp, pdp);
    nvdla_dla_bdma_surface_desc& s = t[bdma].surf.bdma_surface;
    s.num_transfers = 1;
    const uint32_t bytes = static_cast<uint32_t>(in.bytes);
    s.transfers[0] = bdma_transfer(src, backup, bytes, 1, 1, bytes, bytes, bytes, bytes);
    t.depend(conv, bdma, NVDLA_DLA_EVENT_CDMA_DT_DONE);
    t.finish_queues();
    rig.write(t, kV12);
    rig.validate_and_run();

    const auto y = get_int8(rig.data(dst), pooled);
    for (uint32_t k = 0; k < 8; ++k)
        for (uint32_t py = 0; py < 2; ++py)
            for (uint32_t px = 0; px < 2; ++px) {
                int64_t best = -128;
                for (uint32_t q = 0; q < 4; ++q) {
                    const uint32_t oy = py * 2 + q / 2, ox = px * 2 + q % 2;
                    int64_t acc = 0;
                    for (uint32_t c = 0; c < 8; ++c)
                        for (uint32_t r = 0; r < 3; ++r)
                            for (uint32_t ss = 0; ss < 3; ++ss) {
                                const int iy = int(oy + r) - 1, ix = int(ox + ss) - 1;
                                if (iy < 0 || ix < 0 || iy >= 4 || ix >= 4) continue;
                                acc += int64_t(x[(c * 4 + uint32_t(iy)) * 4 + uint32_t(ix)]) *
                                       wt[((k * 8 + c) * 3 + r) * 3 + ss];
                            }
                    best = std::max(best, saturate(round_shift(std::max<int64_t>(acc, 0), 3), 8));
                }
                ASSERT_EQ(y[(k * 2 + py) * 2 + px], best) << "kernel " << k;
            }
    EXPECT_EQ(0, std::memcmp(rig.data(backup), rig.data(src), in.bytes));
}

// Two SDP operations with different LUTs, the first held back by a dependency: the second
// may not rewrite the single LUT until the first has run.
TEST(EngineLut, SecondLutWaitsForTheFirstOperation) {
    Rig rig("nv_full");
    const Feature f(2, 2, 8, 1, 32);
    const int a = rig.add_entry(f.bytes), b = rig.add_entry(f.bytes), c = rig.add_entry(f.bytes),
              d = rig.add_entry(f.bytes);
    TaskBuilder t;
    const int lut5 = t.add_lut(constant_lut(5)), lut7 = t.add_lut(constant_lut(7));
    const int first = t.add(NVDLA_DLA_OP_SDP), with5 = t.add(NVDLA_DLA_OP_SDP),
              with7 = t.add(NVDLA_DLA_OP_SDP);
    sdp_copy(t[first], f.cube(a), f.cube(b));
    sdp_copy(t[with5], f.cube(a), f.cube(c));
    sdp_copy(t[with7], f.cube(a), f.cube(d));
    for (auto [op, lut] : {std::pair{with5, lut5}, std::pair{with7, lut7}}) {
        t[op].op.sdp_op.lut_index = static_cast<int16_t>(lut);
        nvdla_dla_sdp_op& y = t[op].op.sdp_op.y_op;
        y.enable = 1;
        y.act = NVDLA_DLA_ACT_LUT;
        y.precision = NVDLA_DLA_PRECISION_INT8;
        y.cvt.alu_cvt.scale = 1;
        y.cvt.mul_cvt.scale = 1;
    }
    t.depend(first, with5, NVDLA_DLA_EVENT_OP_COMPLETED);
    t.finish_queues();
    rig.write(t, kV12);
    rig.validate_and_run();
    const auto y5 = get_int8(rig.data(c), f), y7 = get_int8(rig.data(d), f);
    EXPECT_TRUE(std::all_of(y5.begin(), y5.end(), [](int8_t v) { return v == 5; }));
    EXPECT_TRUE(std::all_of(y7.begin(), y7.end(), [](int8_t v) { return v == 7; }));
}

// ---- misbehaving hardware and API misuse ----

// A one-SDP task, ready to run.
void sdp_task(Rig& rig) {
    const Feature f(2, 2, 8, 1, rig.cfg().atom_bytes);
    const int a = rig.add_entry(f.bytes), b = rig.add_entry(f.bytes);
    TaskBuilder t;
    sdp_copy(t[t.add(NVDLA_DLA_OP_SDP)], f.cube(a), f.cube(b));
    t.finish_queues();
    rig.write(t, kV12);
    ASSERT_EQ(rig.validate(), 0) << rig.error().message;
}

TEST(EngineRun, SameTaskRunsTwice) {
    Rig rig("nv_small");
    sdp_task(rig);
    ASSERT_EQ(rig.run(), 0) << rig.error().message;
    ASSERT_EQ(rig.run(), 0) << rig.error().message;
    EXPECT_EQ(rig.stats().operations, 2u);
    EXPECT_FALSE(nvdla_dla_engine_busy(rig.engine()));
}

TEST(EngineRun, StartRejectsAnUnvalidatedTask) {
    Rig rig("nv_full");
    sdp_task(rig);
    std::vector<uint64_t> storage((nvdla_dla_engine_size() + 7) / 8);
    nvdla_dla_engine_ops ops{};
    ops.reg_read = [](void*, uint32_t) { return 0u; };
    ops.reg_write = [](void*, uint32_t, uint32_t) {};
    nvdla_dla_error err{};
    nvdla_dla_engine* e =
        nvdla_dla_engine_init(storage.data(), storage.size() * 8, &rig.cfg(), &ops, nullptr, &err);
    ASSERT_NE(e, nullptr);
    std::vector<uint64_t> junk(1024, 0);
    EXPECT_EQ(nvdla_dla_engine_start(e, reinterpret_cast<nvdla_dla_task*>(junk.data()), &err),
              -EINVAL);
    EXPECT_EQ(err.code, NVDLA_DLA_E_ARGUMENT);
    EXPECT_EQ(nvdla_dla_engine_init(storage.data(), 8, &rig.cfg(), &ops, nullptr, &err), nullptr);
    EXPECT_EQ(err.code, NVDLA_DLA_E_STORAGE);
    ops.reg_read = nullptr;
    EXPECT_EQ(
        nvdla_dla_engine_init(storage.data(), storage.size() * 8, &rig.cfg(), &ops, nullptr, &err),
        nullptr);
    EXPECT_EQ(err.code, NVDLA_DLA_E_ARGUMENT);
}

TEST(EngineRun, StartWhileBusyAndStalledDevice) {
    Rig rig("nv_full");
    sdp_task(rig);
    rig.device().set_stalled(true);
    EXPECT_EQ(rig.run(), kStuck);  // no interrupt ever comes: the embedder's timeout
    EXPECT_TRUE(nvdla_dla_engine_busy(rig.engine()));
    nvdla_dla_error err{};
    EXPECT_EQ(nvdla_dla_engine_start(rig.engine(), rig.task(), &err), -EBUSY);
    EXPECT_EQ(err.code, NVDLA_DLA_E_BUSY);
    // Recovery: the engine forgets the task, the embedder resets the device.
    nvdla_dla_engine_reset(rig.engine());
    EXPECT_FALSE(nvdla_dla_engine_busy(rig.engine()));
    rig.device().reset();
    rig.device().set_stalled(false);
    ASSERT_EQ(rig.run(), 0) << rig.error().message;
}

TEST(EngineRun, SpuriousInterruptStopsTheTask) {
    Rig rig("nv_full");
    sdp_task(rig);
    rig.device().set_stalled(true);
    EXPECT_EQ(rig.run(), kStuck);
    // PDP group 1 reports completion though the task never used it.
    rig.device().write_register(rig.unit_base(NVDLA_UNIT_GLB) + NVDLA_GLB_S_INTR_SET, 1u << 5);
    ASSERT_TRUE(nvdla_dla_engine_isr(rig.engine()));
    bool done = true;
    nvdla_dla_error err{};
    EXPECT_EQ(nvdla_dla_engine_process(rig.engine(), &done, &err), -EIO);
    EXPECT_FALSE(done);
    EXPECT_EQ(err.code, NVDLA_DLA_E_HARDWARE);
    EXPECT_NE(std::string(err.message).find("PDP group 1"), std::string::npos) << err.message;
    // The task stays stopped until reset.
    EXPECT_EQ(nvdla_dla_engine_process(rig.engine(), &done, &err), -EINVAL);
    EXPECT_EQ(err.code, NVDLA_DLA_E_STATE);
    nvdla_dla_engine_reset(rig.engine());
    rig.device().reset();
    rig.device().set_stalled(false);
    EXPECT_EQ(rig.run(), 0) << rig.error().message;
}

TEST(EngineRun, ConvolutionBufferNeverFlushedTimesOut) {
    Rig rig("nv_small");
    const ConvShape sh{2, 2, 8, 8, 1, 1, 0};
    const Feature in(2, 2, 8, 1, 8), out(2, 2, 8, 1, 8);
    const int src = rig.add_entry(in.bytes), w = rig.add_entry(128), dst = rig.add_entry(out.bytes);
    TaskBuilder t;
    const int conv = t.add(NVDLA_DLA_OP_CONV), sdp = t.add(NVDLA_DLA_OP_SDP);
    conv_direct(t[conv], rig.cfg(), sh, in.cube(src), w, 128);
    sdp_after_conv(t[sdp], sh, out.cube(dst), 0);
    t.fuse(conv, sdp);
    t.finish_queues();
    rig.write(t, kV12);
    ASSERT_EQ(rig.validate(), 0) << rig.error().message;
    const uint32_t flush = rig.unit_base(NVDLA_UNIT_CDMA) + NVDLA_CDMA_S_CBUF_FLUSH_STATUS;
    uint64_t polls = 0;
    rig.read_override = [&](uint32_t offset) -> std::optional<uint32_t> {
        if (offset != flush) return std::nullopt;
        ++polls;
        return 0u;
    };
    EXPECT_EQ(rig.run(), -ETIMEDOUT);
    EXPECT_EQ(rig.error().code, NVDLA_DLA_E_TIMEOUT);
    EXPECT_EQ(polls, uint64_t(NVDLA_DLA_POLL_LIMIT));
    nvdla_dla_engine_reset(rig.engine());
    rig.read_override = nullptr;
    rig.device().reset();
    EXPECT_EQ(rig.run(), 0) << rig.error().message;
}

TEST(EngineRun, BdmaWithoutFreeSlotsTimesOut) {
    Rig rig("nv_full");
    const int a = rig.add_entry(64), b = rig.add_entry(64);
    TaskBuilder t;
    const int op = t.add(NVDLA_DLA_OP_BDMA);
    t[op].surf.bdma_surface.num_transfers = 1;
    t[op].surf.bdma_surface.transfers[0] = bdma_transfer(a, b, 64, 1, 1, 64, 64, 64, 64);
    t.finish_queues();
    rig.write(t, kV12);
    ASSERT_EQ(rig.validate(), 0) << rig.error().message;
    const uint32_t status = rig.unit_base(NVDLA_UNIT_BDMA) + NVDLA_BDMA_STATUS;
    rig.read_override = [&](uint32_t offset) -> std::optional<uint32_t> {
        return offset == status ? std::optional<uint32_t>(0u) : std::nullopt;
    };
    EXPECT_EQ(rig.run(), -ETIMEDOUT);
    EXPECT_EQ(rig.error().code, NVDLA_DLA_E_TIMEOUT);
    EXPECT_EQ(rig.error().operation, op);
}

TEST(EngineRun, BdmaWithoutTransfersCompletesInSoftware) {
    Rig rig("nv_full");
    const Feature f(2, 2, 8, 1, 32);
    const int a = rig.add_entry(f.bytes), b = rig.add_entry(f.bytes);
    TaskBuilder t;
    const int empty = t.add(NVDLA_DLA_OP_BDMA), sdp = t.add(NVDLA_DLA_OP_SDP);
    sdp_copy(t[sdp], f.cube(a), f.cube(b));
    t.depend(empty, sdp, NVDLA_DLA_EVENT_OP_COMPLETED);
    t.finish_queues();
    rig.write(t, kV12);
    rig.validate_and_run();
    EXPECT_EQ(rig.stats().operations, 1u);
}

}  // namespace
}  // namespace nvdla::engine_test
