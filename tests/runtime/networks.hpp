// Test networks written from scratch: loadables with DLA tasks (BDMA copies, which nv_full
// runs on every element type) and CPU tasks (power, softmax) in either descriptor layout.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "nvdla/hw/dla_interface.h"
#include "nvdla/precision/fp16.hpp"
#include "nvdla/runtime.hpp"
#include "runtime/cpu_tasks.hpp"
#include "runtime/loadable.hpp"

namespace nvdla::runtime_test {

using runtime::CpuTaskAddress;
using runtime::Loadable;

template <class T>
std::vector<std::byte> bytes_of(const T& value) {
    std::vector<std::byte> out(sizeof value);
    std::memcpy(out.data(), &value, sizeof value);
    return out;
}

template <class T>
void put(std::vector<std::byte>& out, size_t offset, T value) {
    std::memcpy(out.data() + offset, &value, sizeof value);
}

inline constexpr uint8_t kInt8 = 4, kFp16 = 2, kInt16 = 3;  // loadable data types

class NetworkBuilder {
  public:
    NetworkBuilder() { l_.version = {0, 7, 0}; }

    uint32_t blob(const std::string& name, std::vector<std::byte> data,
                  runtime::BlobVersion version = {0, 12, 0}, uint32_t sub_interface = 0) {
        runtime::LoadableBlob b;
        b.name = name;
        b.version = version;
        b.sub_interface = sub_interface;
        b.data = std::move(data);
        l_.blobs.push_back(std::move(b));
        return static_cast<uint32_t>(l_.blobs.size() - 1);
    }

    // A memory filled with `contents` (a new blob), ALLOC|SET.
    uint16_t constant(const std::string& name, std::vector<std::byte> contents,
                      runtime::BlobVersion version = {0, 12, 0}, uint32_t sub_interface = 0) {
        const uint64_t size = contents.size();
        const uint32_t b = blob(name, std::move(contents), version, sub_interface);
        runtime::MemoryEntry m;
        m.flags = runtime::kMemoryAlloc | runtime::kMemorySet;
        m.size = size;
        m.contents.push_back({b, 0});
        return add_memory(m);
    }

    uint16_t scratch(uint64_t size, uint32_t alignment = 0,
                     runtime::LoadableDomain domain = runtime::LoadableDomain::System) {
        runtime::MemoryEntry m;
        m.flags = runtime::kMemoryAlloc;
        m.size = size;
        m.alignment = alignment;
        m.domain = domain;
        return add_memory(m);
    }

    // A bindable feature tensor (FEATURE pixel format, NCHW), `size` bytes.
    uint16_t tensor(bool input, const std::string& name, uint8_t data_type, uint32_t c, uint32_t h,
                    uint32_t w, uint32_t line, uint32_t surface, uint64_t size,
                    uint8_t pixel_format = kPixelFormatFeature) {
        runtime::MemoryEntry m;
        m.flags = runtime::kMemoryAlloc | (input ? runtime::kMemoryInput : runtime::kMemoryOutput);
        m.size = size;
        m.bind_id = input ? inputs_++ : outputs_++;
        m.tensor_desc_id = static_cast<uint16_t>(l_.tensor_descs.size());
        const uint16_t mem = add_memory(m);
        runtime::TensorDescEntry d;
        d.name = name;
        d.mem_id = mem;
        d.size = size;
        d.data_format = 1;
        d.data_type = data_type;
        d.data_category = 2;
        d.pixel_format = pixel_format;
        d.n = 1;
        d.c = static_cast<int32_t>(c);
        d.h = static_cast<int32_t>(h);
        d.w = static_cast<int32_t>(w);
        d.strides = {data_type == kInt8 ? 1u : 2u, line, surface, 0, 0, 0, 0, 0};
        l_.tensor_descs.push_back(d);
        return mem;
    }

    uint16_t address(uint16_t mem, uint64_t offset = 0) {
        l_.addresses.push_back({mem, offset, l_.memories.at(mem).size - offset});
        return static_cast<uint16_t>(l_.addresses.size() - 1);
    }

    // A DLA task: one BDMA operation copying `lines` lines of `line_bytes` from memory src to
    // memory dst (nv_full only).
    uint16_t bdma_copy(uint16_t src, uint16_t dst, uint32_t line_bytes, uint32_t lines,
                       runtime::BlobVersion version = {0, 12, 0}) {
        const std::string tag = "t" + std::to_string(l_.tasks.size()) + "_";
        nvdla_dla_network_desc net{};
        net.operation_desc_index = 1;
        net.surface_desc_index = 2;
        net.dependency_graph_index = 3;
        net.lut_data_index = -1;
        net.roi_array_index = -1;
        net.surface_index = -1;
        net.stat_list_index = -1;
        for (int t = 0; t < NVDLA_DLA_OP_COUNT; ++t) net.op_head[t] = -1;
        net.op_head[NVDLA_DLA_OP_BDMA] = 0;
        net.num_rois = 1;
        net.num_operations = 1;
        net.num_addresses = 6;
        nvdla_dla_common_op_desc dep{};
        dep.op_type = NVDLA_DLA_OP_BDMA;
        for (int t = 0; t < NVDLA_DLA_OP_COUNT; ++t) dep.consumers[t].index = -1;
        dep.fused_parent.index = -1;
        std::vector<std::byte> ops(NVDLA_DLA_OP_SLOT_SIZE);
        put<uint16_t>(ops, 0, 1);  // bdma_op.num_transfers
        nvdla_dla_bdma_surface_desc surface{};
        surface.source_type = surface.destination_type = NVDLA_DLA_MEM_MC;
        surface.num_transfers = 1;
        surface.transfers[0] = {4,
                                5,
                                line_bytes,
                                lines,
                                line_bytes,
                                line_bytes,
                                1,
                                line_bytes * lines,
                                line_bytes * lines};
        runtime::TaskEntry task;
        task.interface = runtime::TaskInterface::Dla1;
        task.instance = -1;
        task.addresses = {address(constant(tag + "network", bytes_of(net), version, 1)),
                          address(constant(tag + "operations", ops, version, 3)),
                          address(constant(tag + "surfaces", bytes_of(surface), version, 4)),
                          address(constant(tag + "dependencies", bytes_of(dep), version, 2)),
                          address(src),
                          address(dst)};
        task.version = version;
        l_.tasks.push_back(task);
        return static_cast<uint16_t>(l_.tasks.size() - 1);
    }

    struct CpuTaskOp {
        uint8_t type = 0;     // 0 power, 1 softmax
        uint16_t format = 3;  // of the layout: current FF16 3, INT8 0, INT8_8 1; original FF16 2
        uint16_t w = 1, h = 1, c = 1;
        uint32_t line = 32, surface = 32;
        float power = 1, scale = 1, shift = 0;
        float input_scale = 1, output_scale = 1;
    };

    // The three descriptor blobs of a CPU task with one operation.
    static std::vector<std::vector<std::byte>> cpu_task_descriptors(runtime::CpuTaskLayout layout,
                                                                    const CpuTaskOp& op,
                                                                    int16_t src_address = 3,
                                                                    int16_t dst_address = 4) {
        const bool current = layout == runtime::CpuTaskLayout::Current;
        std::vector<std::byte> net(256), ops(current ? 24 : 16), buffers(512);
        put<int16_t>(net, 0, 1);
        put<int16_t>(net, 2, 2);
        put<uint16_t>(net, 4, 1);
        put<uint8_t>(ops, 0, op.type);
        size_t p = 1;
        if (current) {
            put<float>(ops, 4, op.input_scale);
            put<float>(ops, 8, op.output_scale);
            p = 12;
        }
        if (op.type == 0) {
            put<float>(ops, p, op.power);
            put<float>(ops, p + 4, op.scale);
            put<float>(ops, p + 8, op.shift);
        }
        for (int k = 0; k < 2; ++k) {
            const size_t b = static_cast<size_t>(k) * 256;
            put<int16_t>(buffers, b, k == 0 ? src_address : dst_address);
            const size_t q = b + (current ? 4 : 0);
            if (current) put<uint32_t>(buffers, b + 2, 0);
            put<uint32_t>(buffers, q + 2, 0);
            put<uint16_t>(buffers, q + 6, op.format);
            put<uint16_t>(buffers, q + 8, op.w);
            put<uint16_t>(buffers, q + 10, op.h);
            put<uint16_t>(buffers, q + 12, op.c);
            put<uint32_t>(buffers, q + 14, op.line);
            put<uint32_t>(buffers, q + 18, op.surface);
        }
        return {net, ops, buffers};
    }

    uint16_t cpu_task(runtime::CpuTaskLayout layout, const CpuTaskOp& op, uint16_t src,
                      uint16_t dst) {
        const std::string tag = "t" + std::to_string(l_.tasks.size()) + "_";
        const auto d = cpu_task_descriptors(layout, op);
        runtime::TaskEntry task;
        task.interface = runtime::TaskInterface::Emu1;
        task.instance = -1;
        task.addresses = {address(constant(tag + "addr0", d[0], {0, 0, 1}, 1)),
                          address(constant(tag + "op_list", d[1], {0, 0, 1}, 3)),
                          address(constant(tag + "op_buf_list", d[2], {0, 0, 1}, 4)), address(src),
                          address(dst)};
        task.version = {0, 0, 1};
        l_.tasks.push_back(task);
        return static_cast<uint16_t>(l_.tasks.size() - 1);
    }

    // Every task in one submit-list entry each, in order.
    std::vector<std::byte> bytes() {
        finish();
        return runtime::serialize_loadable(l_);
    }
    Loadable& loadable() { return l_; }
    void finish() {
        l_.submits.clear();
        for (uint16_t t = 0; t < l_.tasks.size(); ++t) l_.submits.push_back({{t}});
    }

  private:
    uint16_t add_memory(const runtime::MemoryEntry& m) {
        l_.memories.push_back(m);
        return static_cast<uint16_t>(l_.memories.size() - 1);
    }

    Loadable l_;
    uint16_t inputs_ = 0, outputs_ = 0;
};

// input (int8 32x8x8, 2048 bytes) -> BDMA -> output: the output equals the input.
inline std::vector<std::byte> copy_network(runtime::BlobVersion version = {0, 12, 0}) {
    NetworkBuilder b;
    const uint16_t in = b.tensor(true, "data", kInt8, 32, 8, 8, 256, 2048, 2048);
    const uint16_t out = b.tensor(false, "copy", kInt8, 32, 8, 8, 256, 2048, 2048);
    b.bdma_copy(in, out, 256, 8, version);
    return b.bytes();
}

inline std::shared_ptr<Network> load_or_fail(Runtime& rt, std::span<const std::byte> bytes) {
    Result<std::shared_ptr<Network>> net = rt.load(bytes);
    EXPECT_TRUE(net.ok()) << net.message();
    return net.ok() ? *net : nullptr;
}

inline std::unique_ptr<Runtime> emu_runtime(const char* config = "nv_full",
                                            bool profiling = false) {
    RuntimeOptions o;
    o.backend = BackendChoice::Emu;
    o.emu_config = config;
    o.profiling = profiling;
    Result<std::unique_ptr<Runtime>> rt = Runtime::open(o);
    EXPECT_TRUE(rt.ok()) << rt.message();
    return rt.ok() ? std::move(rt).value() : nullptr;
}

}  // namespace nvdla::runtime_test
