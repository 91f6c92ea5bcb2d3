// The validator's rules, one test each: a valid task is broken in one field, and validation
// must reject it with the expected code, field and sentence, before any register is touched.
// Also: every public regression loadable's layout (version, cube size) is accepted.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "engine_ops.hpp"
#include "nvdla/formats/weights.hpp"

namespace nvdla::engine_test {
namespace {

// A valid task on nv_full: SDP (input + per-channel bias) into `mid`, then PDP pools `mid`
// into `out` once the SDP has completed. Tests add operations and break one field.
class Reject : public testing::Test {
  protected:
    void SetUp() override {
        in = rig.add_entry(f.bytes);
        bias = rig.add_entry(32);
        mid = rig.add_entry(f.bytes);
        out = rig.add_entry(pooled.bytes);
        sdp = t.add(NVDLA_DLA_OP_SDP);
        sdp_copy(t[sdp], f.cube(in), f.cube(mid));
        nvdla_dla_sdp_op& x1 = t[sdp].op.sdp_op.x1_op;
        x1.enable = 1;
        x1.type = NVDLA_DLA_SDP_OP_ADD;
        x1.mode = NVDLA_DLA_SDP_PER_KERNEL;
        x1.alu_type = NVDLA_DLA_SDP_ALU_SUM;
        t[sdp].surf.sdp_surface.x1_data = cube(bias, 1, 1, 16, 0, 0, 32);
        pdp = t.add(NVDLA_DLA_OP_PDP);
        pdp_pool(t[pdp], f.cube(mid), pooled.cube(out), NVDLA_DLA_POOL_MAX, 2, 2, 2, 2);
        t.depend(sdp, pdp, NVDLA_DLA_EVENT_OP_COMPLETED);
    }

    // The queues, once every operation is there (graph tests break them afterwards).
    void finish() {
        if (finished) return;
        t.finish_queues();
        finished = true;
    }
    void write(uint32_t version = kV12) {
        finish();
        rig.write(t, version);
    }
    template <class F>
    void patch_network(F change) {
        nvdla_dla_network_desc n;
        std::memcpy(&n, rig.entry(kNetwork).host, sizeof(n));
        change(n);
        rig.put(kNetwork, &n, sizeof(n));
    }

    // Validates a task already written; it must fail with `code` on `field`, touching no
    // register. Returns the sentence.
    std::string expect_reject(int code, const char* field) {
        const int ret = rig.validate();
        const nvdla_dla_error& e = rig.error();
        EXPECT_LT(ret, 0);
        EXPECT_STREQ(nvdla_dla_code_name(e.code), nvdla_dla_code_name(code)) << e.message;
        if (field) {
            EXPECT_STREQ(e.field ? e.field : "(null)", field) << e.message;
        }
        EXPECT_EQ(rig.task(), nullptr);
        EXPECT_NE(std::string(e.message), "");
        EXPECT_EQ(rig.engine_reads() + rig.engine_writes(), 0u);
        EXPECT_EQ(rig.stats().register_reads + rig.stats().register_writes, 0u);
        EXPECT_EQ(rig.stats().bytes_read + rig.stats().bytes_written, 0u);
        return e.message;
    }
    std::string reject(int code, const char* field, uint32_t version = kV12) {
        write(version);
        return expect_reject(code, field);
    }

    // Appends operations of the other processors (valid) for their own rules.
    int add_bdma() {
        const int a = rig.add_entry(256), b = rig.add_entry(256);
        const int op = t.add(NVDLA_DLA_OP_BDMA);
        t[op].surf.bdma_surface.num_transfers = 1;
        t[op].surf.bdma_surface.transfers[0] = bdma_transfer(a, b, 128, 2, 1, 128, 128, 256, 256);
        return op;
    }
    int add_cdp() {
        const int a = rig.add_entry(f.bytes), b = rig.add_entry(f.bytes);
        const int lut = t.add_lut(constant_lut(1));
        const int op = t.add(NVDLA_DLA_OP_CDP);
        cdp_lrn(t[op], f.cube(a), f.cube(b), static_cast<int16_t>(lut), 0);
        return op;
    }
    int add_rubik() {
        const int a = rig.add_entry(f.bytes), b = rig.add_entry(16 * 128);
        const int op = t.add(NVDLA_DLA_OP_RUBIK);
        t[op].op.rubik_op.mode = NVDLA_DLA_RUBIK_SPLIT;
        t[op].surf.rubik_surface.src_data = f.cube(a);
        nvdla_dla_data_cube planes = cube(b, 4, 4, 16, 32, 0);
        planes.plane_stride = 128;
        t[op].surf.rubik_surface.dst_data = planes;
        return op;
    }
    // CONV (8 kernels of 3x3x16 over `in`) with its fused SDP writing to a new buffer.
    int add_conv() {
        const ConvShape sh{4, 4, 16, 8, 3, 3, 1};
        const int w = rig.add_entry(1152), o = rig.add_entry(f.bytes);
        const int conv = t.add(NVDLA_DLA_OP_CONV), s = t.add(NVDLA_DLA_OP_SDP);
        conv_direct(t[conv], rig.cfg(), sh, f.cube(in), w, 1152);
        sdp_after_conv(t[s], sh, cube(o, 4, 4, 8, 128, 512, 512), 0);
        t.fuse(conv, s);
        return conv;
    }

    Rig rig{"nv_full"};
    TaskBuilder t;
    const Feature f{4, 4, 16, 1, 32}, pooled{2, 2, 16, 1, 32};
    int in = 0, bias = 0, mid = 0, out = 0, sdp = 0, pdp = 0;
    bool finished = false;
};

TEST_F(Reject, TheBaseTasksAreValid) {
    add_bdma();
    add_cdp();
    add_rubik();
    add_conv();
    for (uint32_t v : {kV10, kV11, kV12}) {
        write(v);
        ASSERT_EQ(rig.validate(), 0) << rig.error().message;
        EXPECT_EQ(nvdla_dla_task_num_operations(rig.task()), 7u);
        EXPECT_EQ(nvdla_dla_task_version(rig.task()), v);
    }
    EXPECT_EQ(rig.stats().register_reads + rig.stats().register_writes, 0u);
}

// ---- versions, counts, lists ----

TEST_F(Reject, UnsupportedVersions) {
    for (uint32_t v : {NVDLA_DLA_VERSION(0, 0, 1), NVDLA_DLA_VERSION(0, 9, 9),
                       NVDLA_DLA_VERSION(0, 13, 0), NVDLA_DLA_VERSION(1, 0, 0)}) {
        const std::string m = reject(NVDLA_DLA_E_VERSION, "version", v);
        EXPECT_NE(m.find("0.10.x to 0.12.x"), std::string::npos) << m;
    }
}

TEST_F(Reject, ZeroOperations) {
    write();
    patch_network([](nvdla_dla_network_desc& n) { n.num_operations = 0; });
    EXPECT_EQ(expect_reject(NVDLA_DLA_E_COUNT, "num_operations"), "the network has no operations");
}

TEST_F(Reject, TooManyOperations) {
    write();
    patch_network(
        [](nvdla_dla_network_desc& n) { n.num_operations = NVDLA_DLA_MAX_OPERATIONS + 1; });
    const std::string m = expect_reject(NVDLA_DLA_E_COUNT, "num_operations");
    EXPECT_NE(m.find("4097 operations; at most 4096"), std::string::npos) << m;
    EXPECT_EQ(rig.error().value, 4097u);
    EXPECT_EQ(rig.error().limit, 4096u);
}

TEST_F(Reject, TooManyLuts) {
    write();
    patch_network([](nvdla_dla_network_desc& n) { n.num_luts = NVDLA_DLA_MAX_LUTS + 1; });
    expect_reject(NVDLA_DLA_E_COUNT, "num_luts");
}

TEST_F(Reject, NetworkDescriptorTruncated) {
    write();
    rig.entry(kNetwork).size = sizeof(nvdla_dla_network_desc) - 1;
    expect_reject(NVDLA_DLA_E_LIST, "network descriptor");
}

TEST_F(Reject, RoisAreOneStaticRoi) {
    write();
    patch_network([](nvdla_dla_network_desc& n) { n.num_rois = 0; });
    expect_reject(NVDLA_DLA_E_FIELD, "num_rois");
    patch_network([](nvdla_dla_network_desc& n) { n.num_rois = 2; });
    expect_reject(NVDLA_DLA_E_UNSUPPORTED, "num_rois");
    patch_network([](nvdla_dla_network_desc& n) {
        n.num_rois = 1;
        n.dynamic_roi = 1;
    });
    expect_reject(NVDLA_DLA_E_UNSUPPORTED, "dynamic_roi");
}

TEST_F(Reject, ListIndexOutOfRange) {
    write();
    patch_network(
        [&](nvdla_dla_network_desc& n) { n.operation_desc_index = int16_t(rig.num_entries()); });
    const std::string m = expect_reject(NVDLA_DLA_E_ADDRESS, "operation_desc_index");
    EXPECT_NE(m.find("operation_desc_index is " + std::to_string(rig.num_entries())),
              std::string::npos)
        << m;
    patch_network([](nvdla_dla_network_desc& n) {
        n.operation_desc_index = kOps;
        n.dependency_graph_index = -2;
    });
    expect_reject(NVDLA_DLA_E_ADDRESS, "dependency_graph_index");
}

TEST_F(Reject, ListsPastTheirEntries) {
    write();
    rig.entry(kOps).size -= 1;
    std::string m = expect_reject(NVDLA_DLA_E_LIST, "operation_desc_index");
    EXPECT_NE(m.find("the list needs 232"), std::string::npos) << m;
    rig.entry(kOps).size += 1;
    rig.entry(kSurfaces).size = NVDLA_DLA_SURFACE_SLOT_SIZE;
    expect_reject(NVDLA_DLA_E_LIST, "surface_desc_index");
    rig.entry(kSurfaces).size = 2 * NVDLA_DLA_SURFACE_SLOT_SIZE;
    rig.entry(kGraph).size = 40;
    expect_reject(NVDLA_DLA_E_LIST, "dependency_graph_index");
}

TEST_F(Reject, LutListPastItsEntry) {
    add_cdp();
    write();
    rig.entry(kLuts).size = NVDLA_DLA_LUT_SIZE - 4;
    expect_reject(NVDLA_DLA_E_LIST, "lut_data_index");
}

TEST_F(Reject, ReadCallbackFailure) {
    write();
    rig.read_error = -EFAULT;
    EXPECT_EQ(rig.validate(), -EFAULT);
    EXPECT_EQ(rig.error().code, NVDLA_DLA_E_READ);
    EXPECT_NE(std::string(rig.error().message).find("error -14"), std::string::npos);
}

TEST_F(Reject, StorageTooSmallOrMisaligned) {
    write();
    nvdla_dla_task_source s = rig.source();
    size_t bytes = 0;
    nvdla_dla_error err{};
    ASSERT_EQ(nvdla_dla_task_measure(&s, &bytes, &err), 0);
    std::vector<uint64_t> storage(bytes / 8 + 2);
    nvdla_dla_task* task = nullptr;
    EXPECT_EQ(nvdla_dla_task_validate(&rig.cfg(), &s, storage.data(), bytes - 8, &task, &err),
              -ENOSPC);
    EXPECT_EQ(err.code, NVDLA_DLA_E_STORAGE);
    EXPECT_EQ(err.limit, bytes);
    auto* odd = reinterpret_cast<uint8_t*>(storage.data()) + 4;
    EXPECT_EQ(nvdla_dla_task_validate(&rig.cfg(), &s, odd, bytes, &task, &err), -ENOSPC);
    EXPECT_EQ(task, nullptr);
    EXPECT_EQ(nvdla_dla_task_validate(&rig.cfg(), &s, storage.data(), bytes, &task, &err), 0);
    EXPECT_NE(task, nullptr);
}

TEST_F(Reject, BufferFlagsAndWrappingEntries) {
    write();
    nvdla_dla_task_source s = rig.source();
    std::vector<nvdla_dla_buffer> list(s.addresses, s.addresses + s.num_addresses);
    s.addresses = list.data();
    std::vector<uint64_t> storage(1 << 16);
    nvdla_dla_task* task = nullptr;
    nvdla_dla_error err{};
    list[in].flags = 0x80;
    EXPECT_EQ(
        nvdla_dla_task_validate(&rig.cfg(), &s, storage.data(), storage.size() * 8, &task, &err),
        -EINVAL);
    EXPECT_EQ(err.code, NVDLA_DLA_E_ARGUMENT);
    list[in].flags = 0;
    list[in].address = ~uint64_t(0) - 16;
    EXPECT_EQ(
        nvdla_dla_task_validate(&rig.cfg(), &s, storage.data(), storage.size() * 8, &task, &err),
        -EINVAL);
    EXPECT_EQ(err.code, NVDLA_DLA_E_EXTENT);
}

// ---- the graph ----

TEST_F(Reject, OpHeadOutOfRangeOrWrongType) {
    write();
    patch_network([](nvdla_dla_network_desc& n) { n.op_head[NVDLA_DLA_OP_PDP] = 2; });
    expect_reject(NVDLA_DLA_E_OP_INDEX, "op_head");
    patch_network([](nvdla_dla_network_desc& n) { n.op_head[NVDLA_DLA_OP_PDP] = -3; });
    expect_reject(NVDLA_DLA_E_OP_INDEX, "op_head");
    patch_network([](nvdla_dla_network_desc& n) { n.op_head[NVDLA_DLA_OP_PDP] = 0; });
    const std::string m = expect_reject(NVDLA_DLA_E_OP_TYPE, "op_head");
    EXPECT_NE(m.find("op_head[PDP] names a SDP operation"), std::string::npos) << m;
}

TEST_F(Reject, ConsumerOutOfRange) {
    finish();
    t[sdp].dep.consumers[NVDLA_DLA_OP_PDP].index = 7;
    const std::string m = reject(NVDLA_DLA_E_OP_INDEX, "consumers");
    EXPECT_EQ(m, "operation 0: SDP consumers[PDP] names operation 7; the network has 2");
}

TEST_F(Reject, ConsumerOfTheWrongType) {
    finish();
    t[sdp].dep.consumers[NVDLA_DLA_OP_CDP] = t[sdp].dep.consumers[NVDLA_DLA_OP_PDP];
    t[sdp].dep.consumers[NVDLA_DLA_OP_PDP].index = -1;
    reject(NVDLA_DLA_E_OP_TYPE, "consumers");
}

TEST_F(Reject, BadEvents) {
    finish();
    t[sdp].dep.consumers[NVDLA_DLA_OP_PDP].event = 0;
    reject(NVDLA_DLA_E_ENUM, "event");
    t[sdp].dep.consumers[NVDLA_DLA_OP_PDP].event = 6;
    reject(NVDLA_DLA_E_ENUM, "event");
    t[sdp].dep.consumers[NVDLA_DLA_OP_PDP].event = NVDLA_DLA_EVENT_CDMA_WT_DONE;
    const std::string m = reject(NVDLA_DLA_E_EVENT, "event");
    EXPECT_NE(m.find("only a convolution raises"), std::string::npos) << m;
}

TEST_F(Reject, FusedParentRules) {
    const int b = add_bdma();
    finish();
    t[b].dep.fused_parent = {static_cast<int16_t>(sdp), NVDLA_DLA_EVENT_OP_ENABLED, 0};
    reject(NVDLA_DLA_E_OP_TYPE, "fused_parent");
    t[b].dep.fused_parent.index = -1;
    // A PDP reading memory cannot have a fused parent; one of the wrong type is refused first.
    t[pdp].dep.fused_parent = {static_cast<int16_t>(b), NVDLA_DLA_EVENT_OP_ENABLED, 0};
    reject(NVDLA_DLA_E_OP_TYPE, "fused_parent");
    t[pdp].dep.fused_parent.index = static_cast<int16_t>(sdp);
    reject(NVDLA_DLA_E_GRAPH, "fused_parent");
}

TEST_F(Reject, QueueLoopAndUnreachableOperation) {
    const int second = t.add(NVDLA_DLA_OP_SDP);
    sdp_copy(t[second], f.cube(in), f.cube(mid));
    finish();
    t[second].dep.consumers[NVDLA_DLA_OP_SDP] = {static_cast<int16_t>(sdp),
                                                 NVDLA_DLA_EVENT_OP_PROGRAMMED, 0};
    t[sdp].dep.dependency_count++;
    std::string m = reject(NVDLA_DLA_E_GRAPH, "consumers");
    EXPECT_NE(m.find("reaches operation 0 twice"), std::string::npos) << m;
    t[second].dep.consumers[NVDLA_DLA_OP_SDP].index = -1;
    t[sdp].dep.dependency_count--;
    t[sdp].dep.consumers[NVDLA_DLA_OP_SDP].index = -1;
    t[second].dep.dependency_count--;
    m = reject(NVDLA_DLA_E_GRAPH, "op_head");
    EXPECT_NE(m.find("SDP operation 2 is in no processor queue"), std::string::npos) << m;
}

TEST_F(Reject, DependencyCountThatCanNeverBeMet) {
    finish();
    t[pdp].dep.dependency_count = 2;
    const std::string m = reject(NVDLA_DLA_E_GRAPH, "dependency_count");
    EXPECT_EQ(m,
              "operation 1: PDP operation 1 waits for 2 events, but only 1 are sent to it, so "
              "it would never start");
}

TEST_F(Reject, OperationTypeOutOfRange) {
    finish();
    t[pdp].dep.op_type = 7;
    reject(NVDLA_DLA_E_ENUM, "op_type");
}

TEST_F(Reject, ConvolutionWithoutItsSdp) {
    const int conv = add_conv();
    finish();
    const int s = conv + 1;
    t[s].dep.fused_parent.index = -1;
    t[conv].dep.dependency_count--;
    const std::string m = reject(NVDLA_DLA_E_GRAPH, "fused_parent");
    EXPECT_NE(m.find("CONV operation 2 is the fused parent of 0 operations"), std::string::npos)
        << m;
}

// ---- surfaces: indices, offsets, extents, alignment, strides ----

TEST_F(Reject, SurfaceAddressIndexOutOfRange) {
    t[sdp].surf.sdp_surface.src_data.address = 42;
    const std::string m = reject(NVDLA_DLA_E_ADDRESS, "src_data");
    EXPECT_NE(m.find("names address-list entry 42"), std::string::npos) << m;
    t[sdp].surf.sdp_surface.src_data.address = -1;
    reject(NVDLA_DLA_E_ADDRESS, "src_data");
}

TEST_F(Reject, OffsetPastTheEnd) {
    t[pdp].surf.pdp_surface.dst_data.offset = 4096;
    const std::string m = reject(NVDLA_DLA_E_EXTENT, "dst_data");
    EXPECT_NE(m.find("at offset 4096"), std::string::npos) << m;
    EXPECT_EQ(rig.error().operation, pdp);
    EXPECT_EQ(rig.error().limit, pooled.bytes);
}

// A cube that starts inside its entry but has fewer bytes left there than it covers.
TEST_F(Reject, OffsetLeavesTooFewBytes) {
    t[pdp].surf.pdp_surface.dst_data.offset = 64;
    rig.entry(out).size = pooled.bytes + 63;
    std::string m = reject(NVDLA_DLA_E_EXTENT, "dst_data");
    EXPECT_NE(m.find("at offset 64 end at " + std::to_string(pooled.bytes + 64)), std::string::npos)
        << m;
    rig.entry(out).size = pooled.bytes + 64;  // exactly enough
    write();
    ASSERT_EQ(rig.validate(), 0) << rig.error().message;
}

TEST_F(Reject, OffsetIgnoredByTheOlderLayout) {
    // 0.10 has no offset: the same bytes are read as part of the next field there.
    t[pdp].surf.pdp_surface.dst_data.offset = 4096;
    write(kV10);
    ASSERT_EQ(rig.validate(), 0) << rig.error().message;
}

TEST_F(Reject, ExtentPastTheBuffer) {
    t[sdp].surf.sdp_surface.dst_data.height = 5;
    t[sdp].surf.sdp_surface.src_data.height = 5;
    const std::string m = reject(NVDLA_DLA_E_EXTENT, "src_data");
    EXPECT_NE(m.find("end at 640, past the 512 bytes of address-list entry 5"), std::string::npos)
        << m;
}

TEST_F(Reject, BiasPastItsBuffer) {
    rig.entry(bias).size = 16;
    const std::string m = reject(NVDLA_DLA_E_EXTENT, "data");
    EXPECT_NE(m.find("SDP x1_op data"), std::string::npos) << m;
}

TEST_F(Reject, MisalignedAddress) {
    t[pdp].surf.pdp_surface.dst_data.offset = 8;
    rig.entry(out).size += 8;
    const std::string m = reject(NVDLA_DLA_E_ALIGN, "dst_data");
    EXPECT_NE(m.find("not a multiple of 32 bytes"), std::string::npos) << m;
}

TEST_F(Reject, MisalignedStride) {
    t[pdp].surf.pdp_surface.src_data.line_stride = 136;
    reject(NVDLA_DLA_E_ALIGN, "line_stride");
}

TEST_F(Reject, LineStrideTooSmall) {
    t[pdp].surf.pdp_surface.src_data.line_stride = 96;
    const std::string m = reject(NVDLA_DLA_E_STRIDE, "line_stride");
    EXPECT_EQ(m, "operation 1: PDP line_stride is 96, smaller than the 128 bytes a line needs");
    EXPECT_EQ(rig.error().value, 96u);
    EXPECT_EQ(rig.error().limit, 128u);
}

TEST_F(Reject, SurfaceStrideTooSmall) {
    t[sdp].surf.sdp_surface.src_data.channel = 40;
    t[sdp].surf.sdp_surface.src_data.surf_stride = 256;
    rig.entry(bias).size = 64;  // the bias of 40 channels
    reject(NVDLA_DLA_E_STRIDE, "surf_stride");
}

TEST_F(Reject, DimensionsOutOfRange) {
    t[pdp].surf.pdp_surface.dst_data.width = 0;
    reject(NVDLA_DLA_E_FIELD, "dst_data");
    t[pdp].surf.pdp_surface.dst_data.width = 9000;
    reject(NVDLA_DLA_E_FIELD, "dst_data");
}

// 8192 (13-bit fields holding the size minus one) is the largest width, height and channel count.
TEST_F(Reject, TheLargestExtentsAreAccepted) {
    t[sdp].op.sdp_op.x1_op.enable = 0;  // no per-channel operand to size
    const Feature wide{8192, 1, 16, 1, 32}, tall{1, 8192, 16, 1, 32}, deep{1, 1, 8192, 1, 32};
    for (const Feature& g : {wide, tall, deep}) {
        const int a = rig.add_entry(g.bytes), b = rig.add_entry(g.bytes);
        t[sdp].surf.sdp_surface.src_data = g.cube(a);
        t[sdp].surf.sdp_surface.dst_data = g.cube(b);
        write();
        ASSERT_EQ(rig.validate(), 0) << rig.error().message;
    }
    const Feature wider{8193, 1, 16, 1, 32};
    const int a = rig.add_entry(wider.bytes), b = rig.add_entry(wider.bytes);
    t[sdp].surf.sdp_surface.src_data = wider.cube(a);
    t[sdp].surf.sdp_surface.dst_data = wider.cube(b);
    const std::string m = reject(NVDLA_DLA_E_FIELD, "src_data");
    EXPECT_NE(m.find("width is 8193, outside 1..8192"), std::string::npos) << m;
}

// Batches: the output holds batch_num cubes batch_stride apart, the last one whole.
TEST_F(Reject, BatchesMustFitTheirBuffer) {
    t[sdp].op.sdp_op.batch_num = 2;
    t[sdp].op.sdp_op.batch_stride = static_cast<uint32_t>(f.bytes);
    rig.entry(mid).size = 2 * f.bytes;  // exactly two cubes
    write();
    ASSERT_EQ(rig.validate(), 0) << rig.error().message;
    rig.entry(mid).size = 2 * f.bytes - 1;
    const std::string m = reject(NVDLA_DLA_E_EXTENT, "dst_data");
    EXPECT_NE(m.find("end at " + std::to_string(2 * f.bytes)), std::string::npos) << m;
}

TEST_F(Reject, MemoryTypes) {
    t[pdp].surf.pdp_surface.dst_data.type = 3;
    reject(NVDLA_DLA_E_ENUM, "dst_data");
    t[pdp].surf.pdp_surface.dst_data.type = NVDLA_DLA_MEM_HW;
    reject(NVDLA_DLA_E_MEMORY, "dst_data");
    // CV-SRAM cube over a primary-memory entry.
    t[pdp].surf.pdp_surface.dst_data.type = NVDLA_DLA_MEM_CV;
    const std::string m = reject(NVDLA_DLA_E_MEMORY, "dst_data");
    EXPECT_NE(m.find("is primary memory"), std::string::npos) << m;
}

TEST_F(Reject, SecondaryMemoryIsAcceptedWhereItExists) {
    const int sram = rig.add_entry(pooled.bytes, true);
    t[pdp].surf.pdp_surface.dst_data = pooled.cube(sram);
    t[pdp].surf.pdp_surface.dst_data.type = NVDLA_DLA_MEM_CV;
    write();
    ASSERT_EQ(rig.validate(), 0) << rig.error().message;
}

// ---- enumerations and fields of each processor ----

TEST_F(Reject, SdpEnums) {
    t[sdp].op.sdp_op.src_precision = 3;
    reject(NVDLA_DLA_E_ENUM, "src_precision");
    t[sdp].op.sdp_op.src_precision = 0;
    t[sdp].op.sdp_op.x1_op.type = 4;
    reject(NVDLA_DLA_E_ENUM, "type");
    t[sdp].op.sdp_op.x1_op.type = NVDLA_DLA_SDP_OP_ADD;
    t[sdp].op.sdp_op.x1_op.act = NVDLA_DLA_ACT_LUT;
    reject(NVDLA_DLA_E_ENUM, "act");
}

TEST_F(Reject, SdpPrecisionConversions) {
    t[sdp].op.sdp_op.dst_precision = NVDLA_DLA_PRECISION_FP16;
    reject(NVDLA_DLA_E_FIELD, "dst_precision");
}

TEST_F(Reject, BadLutIndex) {
    const int cdp = add_cdp();
    t[sdp].op.sdp_op.lut_index = 1;
    std::string m = reject(NVDLA_DLA_E_LUT_INDEX, "lut_index");
    EXPECT_EQ(m, "operation 0: SDP lut_index is 1; the task has 1 LUTs");
    t[sdp].op.sdp_op.lut_index = -2;
    reject(NVDLA_DLA_E_LUT_INDEX, "lut_index");
    t[sdp].op.sdp_op.lut_index = -1;
    t[cdp].op.cdp_op.lut_index = 1;
    m = reject(NVDLA_DLA_E_LUT_INDEX, "lut_index");
    EXPECT_EQ(m, "operation 2: CDP lut_index is 1; the task has 1 LUTs");
}

TEST_F(Reject, BadLutContents) {
    add_cdp();
    write();
    nvdla_dla_lut_param lut;
    std::memcpy(&lut, rig.entry(kLuts).host, sizeof(lut));
    lut.method = 2;
    rig.put(kLuts, &lut, sizeof(lut));
    const std::string m = expect_reject(NVDLA_DLA_E_ENUM, "method");
    EXPECT_EQ(m, "LUT 0 method is 2, not a valid value (0..1)");
}

TEST_F(Reject, PdpRules) {
    t[pdp].op.pdp_op.pool_mode = 3;
    reject(NVDLA_DLA_E_ENUM, "pool_mode");
    t[pdp].op.pdp_op.pool_mode = NVDLA_DLA_POOL_MAX;
    t[pdp].op.pdp_op.stride_x = 0;
    reject(NVDLA_DLA_E_FIELD, "stride_x");
    t[pdp].op.pdp_op.stride_x = 2;
    t[pdp].surf.pdp_surface.dst_data.channel = 8;
    reject(NVDLA_DLA_E_FIELD, "dst_data");
    t[pdp].surf.pdp_surface.dst_data.channel = 16;
    // Three output columns from four input columns at stride 2: the third has no input.
    t[pdp].surf.pdp_surface.dst_data.width = 3;
    const std::string m = reject(NVDLA_DLA_E_FIELD, "dst_data");
    EXPECT_NE(m.find("leave a window without input"), std::string::npos) << m;
}

TEST_F(Reject, PdpSplitsMustCoverTheCube) {
    nvdla_dla_pdp_op_desc& p = t[pdp].op.pdp_op;
    p.split_num = 2;
    p.partial_in_width_first = 2;
    p.partial_in_width_last = 3;
    p.partial_width_first = 1;
    p.partial_width_last = 1;
    const std::string m = reject(NVDLA_DLA_E_FIELD, "partial_in_width_last");
    EXPECT_NE(m.find("cover 5 columns, but src_data is 4 wide"), std::string::npos) << m;
    p.partial_in_width_last = 2;
    write();
    EXPECT_EQ(rig.validate(), 0) << rig.error().message;
    // Stride 3 over a kernel of 2 skips a column before the second split: one column is none.
    p.stride_x = 3;
    p.partial_in_width_first = 3;
    p.partial_in_width_last = 1;
    const std::string skip = reject(NVDLA_DLA_E_FIELD, "partial_in_width_mid");
    EXPECT_NE(skip.find("leave nothing to pool"), std::string::npos) << skip;
}

TEST_F(Reject, CdpRules) {
    const int cdp = add_cdp();
    t[cdp].op.cdp_op.local_size = 4;
    reject(NVDLA_DLA_E_FIELD, "local_size");
    t[cdp].op.cdp_op.local_size = 5;
    t[cdp].op.cdp_op.out_precision = NVDLA_DLA_PRECISION_INT16;
    reject(NVDLA_DLA_E_FIELD, "out_precision");
}

TEST_F(Reject, BdmaRules) {
    const int b = add_bdma();
    nvdla_dla_bdma_transfer& x = t[b].surf.bdma_surface.transfers[0];
    x.line_size = 100;
    reject(NVDLA_DLA_E_ALIGN, "line_size");
    x.line_size = 128;
    x.line_repeat = 0;
    reject(NVDLA_DLA_E_FIELD, "line_repeat");
    x.line_repeat = 3;
    x.source_surface = x.destination_surface = 384;
    std::string m = reject(NVDLA_DLA_E_EXTENT, "source_address");
    EXPECT_NE(m.find("BDMA transfer 0 source_address: 384 bytes"), std::string::npos) << m;
    x.line_repeat = 2;
    x.source_surface = x.destination_surface = 256;
    x.destination_line = 64;
    reject(NVDLA_DLA_E_STRIDE, "destination_line");
    x.destination_line = 128;
    x.source_address = 99;
    reject(NVDLA_DLA_E_ADDRESS, "source_address");
    x.source_address = static_cast<int16_t>(in);
    t[b].surf.bdma_surface.num_transfers = 21;
    reject(NVDLA_DLA_E_FIELD, "num_transfers");
    t[b].surf.bdma_surface.num_transfers = 1;
    t[b].surf.bdma_surface.source_type = NVDLA_DLA_MEM_HW;
    reject(NVDLA_DLA_E_MEMORY, "source_type");
}

TEST_F(Reject, RubikRules) {
    const int r = add_rubik();
    t[r].op.rubik_op.mode = 3;
    reject(NVDLA_DLA_E_ENUM, "mode");
    t[r].op.rubik_op.mode = NVDLA_DLA_RUBIK_SPLIT;
    t[r].surf.rubik_surface.dst_data.plane_stride = 64;
    reject(NVDLA_DLA_E_STRIDE, "plane_stride");
    t[r].surf.rubik_surface.dst_data.plane_stride = 128;
    t[r].op.rubik_op.mode = NVDLA_DLA_RUBIK_CONTRACT;
    t[r].op.rubik_op.stride_x = 2;
    t[r].op.rubik_op.stride_y = 2;
    const std::string m = reject(NVDLA_DLA_E_FIELD, "dst_data");
    EXPECT_NE(m.find("RUBIK contract of 4x4x16 with strides 2x2"), std::string::npos) << m;
}

TEST_F(Reject, ConvolutionRules) {
    const int conv = add_conv();
    nvdla_dla_conv_op_desc& c = t[conv].op.conv_op;
    nvdla_dla_conv_surface_desc& s = t[conv].surf.conv_surface;
    c.conv_mode = 2;
    reject(NVDLA_DLA_E_ENUM, "conv_mode");
    c.conv_mode = 0;
    c.data_bank = 10;
    c.weight_bank = 10;
    std::string m = reject(NVDLA_DLA_E_FIELD, "data_bank");
    EXPECT_NE(m.find("exceed the 16 banks of nv_full"), std::string::npos) << m;
    c.data_bank = c.weight_bank = 1;
    c.out_cvt.scale = 2;
    reject(NVDLA_DLA_E_FIELD, "out_cvt.scale");
    c.out_cvt.scale = 1;
    s.weight_data.size = 1100;
    reject(NVDLA_DLA_E_ALIGN, "weight_data.size");
    s.weight_data.size = 1152;
    s.weight_data.offset = 128;
    rig.entry(s.weight_data.address).size += 128;
    m = reject(NVDLA_DLA_E_ALIGN, "weight_data");
    EXPECT_NE(m.find("not a multiple of 256 bytes"), std::string::npos) << m;
    s.weight_data.offset = 0;
    s.src_data.type = NVDLA_DLA_MEM_HW;
    reject(NVDLA_DLA_E_MEMORY, "src_data");
}

// ---- what a configuration lacks ----

class RejectSmall : public testing::Test {
  protected:
    Rig rig{"nv_small"};
};

TEST_F(RejectSmall, BdmaRubikInt16AndCvsramDoNotExist) {
    const Feature f(2, 2, 8, 1, 8);
    const int a = rig.add_entry(256), b = rig.add_entry(256);
    {
        TaskBuilder t;
        const int op = t.add(NVDLA_DLA_OP_BDMA);
        t[op].surf.bdma_surface.num_transfers = 1;
        t[op].surf.bdma_surface.transfers[0] = bdma_transfer(a, b, 32, 1, 1, 32, 32, 32, 32);
        t.finish_queues();
        rig.write(t, kV12);
        EXPECT_EQ(rig.validate(), -EOPNOTSUPP);
        EXPECT_EQ(rig.error().code, NVDLA_DLA_E_UNSUPPORTED);
        EXPECT_NE(std::string(rig.error().message).find("nv_small does not have"),
                  std::string::npos);
    }
    {
        TaskBuilder t;
        const int op = t.add(NVDLA_DLA_OP_RUBIK);
        t[op].surf.rubik_surface.src_data = f.cube(a);
        t[op].surf.rubik_surface.dst_data = f.cube(b);
        t.finish_queues();
        rig.write(t, kV12);
        EXPECT_EQ(rig.validate(), -EOPNOTSUPP);
    }
    {
        TaskBuilder t;
        const int op = t.add(NVDLA_DLA_OP_SDP);
        sdp_copy(t[op], f.cube(a), f.cube(b));
        t[op].op.sdp_op.src_precision = NVDLA_DLA_PRECISION_INT16;
        t.finish_queues();
        rig.write(t, kV12);
        EXPECT_EQ(rig.validate(), -EOPNOTSUPP);
        EXPECT_STREQ(rig.error().field, "src_precision");
        t[op].op.sdp_op.src_precision = NVDLA_DLA_PRECISION_INT8;
        t[op].surf.sdp_surface.dst_data.type = NVDLA_DLA_MEM_CV;
        rig.write(t, kV12);
        EXPECT_EQ(rig.validate(), -EOPNOTSUPP);
        EXPECT_STREQ(rig.error().field, "dst_data");
    }
    EXPECT_EQ(rig.stats().register_reads + rig.stats().register_writes, 0u);
}

TEST_F(RejectSmall, AddressesBeyondThe32BitSpace) {
    const Feature f(2, 2, 8, 1, 8);
    const int a = rig.add_entry(f.bytes), b = rig.add_entry(f.bytes);
    TaskBuilder t;
    sdp_copy(t[t.add(NVDLA_DLA_OP_SDP)], f.cube(a), f.cube(b));
    t.finish_queues();
    rig.write(t, kV12);
    rig.entry(b).address = 0xfffffff0ull;
    EXPECT_EQ(rig.validate(), -EINVAL);
    EXPECT_EQ(rig.error().code, NVDLA_DLA_E_EXTENT);
    EXPECT_NE(std::string(rig.error().message).find("32-bit address space"), std::string::npos)
        << rig.error().message;
    // The output's last byte at the last address is fine.
    rig.entry(b).address = (uint64_t(1) << 32) - f.bytes;
    EXPECT_EQ(rig.validate(), 0) << rig.error().message;
}

// nv_small's CDMA counts D_WEIGHT_BYTES in 8-byte memory atoms (nv_full's register has no bits
// 6:0): the original compiler's exact sizes (8 kernels of 3x3x8 int8: 576 bytes) run there.
TEST_F(RejectSmall, WeightSizesInMemoryAtoms) {
    const HwConfig& cfg = rig.cfg();
    const ConvShape sh{4, 4, 8, 8, 3, 3, 1};
    const Feature in(4, 4, 8, 1, 8);
    const int a = rig.add_entry(in.bytes), w = rig.add_entry(584), o = rig.add_entry(in.bytes);
    TaskBuilder t;
    const int conv = t.add(NVDLA_DLA_OP_CONV), sdp = t.add(NVDLA_DLA_OP_SDP);
    conv_direct(t[conv], cfg, sh, in.cube(a), w, 576);
    sdp_after_conv(t[sdp], sh, in.cube(o), 0);
    t.fuse(conv, sdp);
    t.finish_queues();
    rig.write(t, kV12);
    ASSERT_EQ(rig.validate(), 0) << rig.error().message;
    t[conv].surf.conv_surface.weight_data.size = 580;
    rig.write(t, kV12);
    EXPECT_EQ(rig.validate(), -EINVAL);
    EXPECT_EQ(rig.error().code, NVDLA_DLA_E_ALIGN);
    EXPECT_STREQ(rig.error().message,
                 "operation 0: CONV weight_data.size is 580, not a multiple of 8 bytes");
    t[conv].surf.conv_surface.weight_data.size = 592;
    rig.write(t, kV12);
    EXPECT_EQ(rig.validate(), -EINVAL);
    EXPECT_EQ(rig.error().code, NVDLA_DLA_E_EXTENT) << rig.error().message;
}

// ---- layouts ----

TEST(DescriptorLayout, SizesOfBothVersions) {
    EXPECT_EQ(sizeof(nvdla_dla_network_desc), 40u);
    EXPECT_EQ(sizeof(nvdla_dla_common_op_desc), 36u);
    EXPECT_EQ(sizeof(nvdla_dla_data_cube), 32u);
    EXPECT_EQ(sizeof(nvdla_dla_data_cube_v10), 28u);
    EXPECT_EQ(sizeof(nvdla_dla_surface_container), 644u);
    EXPECT_EQ(sizeof(nvdla_dla_operation_container), 116u);
    EXPECT_EQ(sizeof(nvdla_dla_lut_param), 700u);
    EXPECT_EQ(offsetof(nvdla_dla_data_cube, size), 8u);
    EXPECT_EQ(offsetof(nvdla_dla_data_cube_v10, size), 4u);
    EXPECT_EQ(offsetof(nvdla_dla_conv_surface_desc, offset_u), 160u);
    EXPECT_EQ(offsetof(nvdla_dla_conv_op_desc, in_cvt), 76u);
    EXPECT_EQ(offsetof(nvdla_dla_sdp_op_desc, x1_op), 20u);
    EXPECT_EQ(offsetof(nvdla_dla_lut_param, linear_exp_start), 648u);
    EXPECT_EQ(offsetof(nvdla_dla_pdp_op_desc, padding_value), 24u);
    const unsigned v12[] = {644, 172, 160, 64, 64, 64}, v10[] = {644, 152, 140, 56, 56, 56};
    for (unsigned type = 0; type < NVDLA_DLA_OP_COUNT; ++type) {
        EXPECT_EQ(nvdla_dla_surface_size(type, kV12), v12[type]);
        EXPECT_EQ(nvdla_dla_surface_size(type, kV10), v10[type]);
        EXPECT_EQ(nvdla_dla_surface_size(type, kV11), v10[type]);
    }
    EXPECT_EQ(nvdla_dla_surface_size(6, kV12), 0u);
    EXPECT_STREQ(nvdla_dla_code_name(NVDLA_DLA_E_EXTENT), "E_EXTENT");
    EXPECT_STREQ(nvdla_dla_code_name(999), "E_UNKNOWN");
}

}  // namespace
}  // namespace nvdla::engine_test
