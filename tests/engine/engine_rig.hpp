// The engine tests' rig: the emulated device over flat memory, an address list whose entries
// are the only memory the device may touch (any DMA outside them is a fault the tests check
// for), a builder for descriptor sets in either interface layout, and the embedder's side of
// the engine (register ops, the interrupt loop) written as a kernel or backend would.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nvdla/emu/device.hpp"
#include "nvdla/hw/dla_engine.h"
#include "test_support.hpp"

namespace nvdla::engine_test {

inline constexpr uint32_t kV10 = NVDLA_DLA_VERSION(0, 10, 0);
inline constexpr uint32_t kV11 = NVDLA_DLA_VERSION(0, 11, 0);
inline constexpr uint32_t kV12 = NVDLA_DLA_VERSION(0, 12, 5);

// Address-list entries of the descriptors; data buffers follow.
enum : int { kNetwork = 0, kOps = 1, kSurfaces = 2, kGraph = 3, kLuts = 4, kFirstData = 5 };

// The result of Rig::run when the engine waits for an interrupt that never comes.
inline constexpr int kStuck = 1000;

struct Entry {
    uint64_t address = 0;  // device address of the entry's first byte
    uint64_t size = 0;     // bytes the address list declares
    bool secondary = false;
    std::byte* host = nullptr;  // the first byte
    uint64_t capacity = 0;      // bytes backed from there
};

// Rounds v up to a multiple of a.
inline uint64_t round_up(uint64_t v, uint64_t a) {
    return (v + a - 1) / a * a;
}

// Byte offset of element (c, h, w) of a feature cube of `bpe`-byte elements.
inline uint64_t feature_offset(uint32_t atom, uint32_t bpe, uint32_t line, uint32_t surface,
                               uint32_t c, uint32_t h, uint32_t w) {
    const uint32_t lanes = atom / bpe;
    return uint64_t(c / lanes) * surface + uint64_t(h) * line + uint64_t(w) * atom +
           (c % lanes) * bpe;
}

// x / 2^shift rounded half away from zero.
inline int64_t round_shift(int64_t x, unsigned shift) {
    if (shift == 0) return x;
    const int64_t half = int64_t(1) << (shift - 1);
    const int64_t m = x < 0 ? -x : x;
    const int64_t q = (m + half) >> shift;
    return x < 0 ? -q : q;
}

inline int64_t saturate(int64_t x, unsigned bits) {
    const int64_t hi = (int64_t(1) << (bits - 1)) - 1, lo = -(int64_t(1) << (bits - 1));
    return x > hi ? hi : (x < lo ? lo : x);
}

inline nvdla_dla_data_cube cube(int entry, uint32_t w, uint32_t h, uint32_t c, uint32_t line,
                                uint32_t surface, uint32_t size = 0,
                                uint16_t type = NVDLA_DLA_MEM_MC) {
    nvdla_dla_data_cube d{};
    d.type = type;
    d.address = static_cast<int16_t>(entry);
    d.offset = 0;
    d.size = size;
    d.width = static_cast<uint16_t>(w);
    d.height = static_cast<uint16_t>(h);
    d.channel = static_cast<uint16_t>(c);
    d.line_stride = line;
    d.surf_stride = surface;
    return d;
}

// A cube that lives in no memory (between fused units).
inline nvdla_dla_data_cube hw_cube(uint32_t w, uint32_t h, uint32_t c) {
    nvdla_dla_data_cube d = cube(-1, w, h, c, 0, 0, 0, NVDLA_DLA_MEM_HW);
    return d;
}

inline nvdla_dla_data_cube no_cube() {
    return hw_cube(0, 0, 0);
}

// Plain data: zeroed with memset by TaskBuilder::add.
struct OpDesc {
    nvdla_dla_common_op_desc dep;
    nvdla_dla_operation_container op;
    nvdla_dla_surface_container surf;
};

// Descriptor sets built in the 0.12 layout and written in the layout of any version.
class TaskBuilder {
  public:
    int add(nvdla_dla_op_type type) {
        OpDesc d;
        std::memset(&d, 0, sizeof(d));
        d.dep.index = static_cast<int16_t>(ops_.size());
        d.dep.op_type = static_cast<uint8_t>(type);
        for (int t = 0; t < NVDLA_DLA_OP_COUNT; ++t) d.dep.consumers[t].index = -1;
        d.dep.fused_parent.index = -1;
        ops_.push_back(d);
        return static_cast<int>(ops_.size() - 1);
    }
    OpDesc& operator[](int i) { return ops_.at(static_cast<size_t>(i)); }
    size_t size() const { return ops_.size(); }
    uint8_t type(int i) const { return ops_.at(static_cast<size_t>(i)).dep.op_type; }

    // `consumer` waits for `event` of `producer`.
    void depend(int producer, int consumer, uint8_t event) {
        nvdla_dla_consumer& slot = (*this)[producer].dep.consumers[type(consumer)];
        ASSERT_EQ(slot.index, -1) << "operation " << producer
                                  << " already has a consumer of that type";
        slot.index = static_cast<int16_t>(consumer);
        slot.event = event;
        (*this)[consumer].dep.dependency_count++;
    }
    // `child` (SDP after CONV, PDP after SDP) is fused behind `parent`: the child is enabled
    // first, the parent once the child is (the compiler's pattern).
    void fuse(int parent, int child) {
        (*this)[child].dep.fused_parent.index = static_cast<int16_t>(parent);
        (*this)[child].dep.fused_parent.event = NVDLA_DLA_EVENT_OP_ENABLED;
        (*this)[parent].dep.dependency_count++;
        depend(parent, child, NVDLA_DLA_EVENT_OP_PROGRAMMED);
    }
    int add_lut(const nvdla_dla_lut_param& lut) {
        luts_.push_back(lut);
        return static_cast<int>(luts_.size() - 1);
    }

    // Queues: op_head of each type and, between consecutive operations of one type that the
    // test did not link, a PROGRAMMED link (it never delays anything).
    void finish_queues() {
        for (auto& h : heads_) h = -1;
        std::vector<int> last(NVDLA_DLA_OP_COUNT, -1);
        for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
            const uint8_t t = type(i);
            if (last[t] < 0) {
                heads_[t] = static_cast<int16_t>(i);
            } else if ((*this)[last[t]].dep.consumers[t].index == -1) {
                depend(last[t], i, NVDLA_DLA_EVENT_OP_PROGRAMMED);
            }
            last[t] = i;
        }
    }

    nvdla_dla_network_desc network(uint32_t num_addresses) const {
        nvdla_dla_network_desc n{};
        n.operation_desc_index = kOps;
        n.surface_desc_index = kSurfaces;
        n.dependency_graph_index = kGraph;
        n.lut_data_index = luts_.empty() ? -1 : kLuts;
        n.roi_array_index = -1;
        n.surface_index = -1;
        n.stat_list_index = -1;
        for (int t = 0; t < NVDLA_DLA_OP_COUNT; ++t) n.op_head[t] = heads_[t];
        n.num_rois = 1;
        n.num_operations = static_cast<uint16_t>(ops_.size());
        n.num_luts = static_cast<uint16_t>(luts_.size());
        n.num_addresses = static_cast<uint16_t>(num_addresses);
        return n;
    }

    // The surface list in `version`'s layout.
    std::vector<std::byte> surface_list(uint32_t version) const {
        std::vector<std::byte> out(ops_.size() * NVDLA_DLA_SURFACE_SLOT_SIZE);
        for (size_t i = 0; i < ops_.size(); ++i) {
            const auto* wide = reinterpret_cast<const std::byte*>(&ops_[i].surf);
            std::byte* slot = out.data() + i * NVDLA_DLA_SURFACE_SLOT_SIZE;
            const unsigned cubes = nvdla_dla_surface_cubes(ops_[i].dep.op_type);
            if (nvdla_dla_version_has_cube_offset(version) || cubes == 0) {
                std::memcpy(slot, wide, NVDLA_DLA_SURFACE_SLOT_SIZE);
                continue;
            }
            // Drop each cube's offset (bytes 4..7), then copy what follows the cubes.
            for (unsigned k = 0; k < cubes; ++k) {
                std::memcpy(slot + k * 28, wide + k * 32, 4);
                std::memcpy(slot + k * 28 + 4, wide + k * 32 + 8, 24);
            }
            const unsigned tail = nvdla_dla_surface_size(ops_[i].dep.op_type, kV12) - cubes * 32;
            std::memcpy(slot + cubes * 28, wide + cubes * 32, tail);
        }
        return out;
    }

    const std::vector<OpDesc>& ops() const { return ops_; }
    const std::vector<nvdla_dla_lut_param>& luts() const { return luts_; }
    int16_t head(int type) const { return heads_[type]; }

  private:
    std::vector<OpDesc> ops_;
    std::vector<nvdla_dla_lut_param> luts_;
    int16_t heads_[NVDLA_DLA_OP_COUNT] = {-1, -1, -1, -1, -1, -1};
};

// The device, the address list, the checked task and an engine, as an embedder holds them.
class Rig {
  public:
    explicit Rig(const char* config) : cfg_(test::config(config)), device_(cfg_, memory_) {
        device_.set_access_check([this](const emu::DmaAccess& a) { return allowed(a); });
        for (int i = 0; i < kFirstData; ++i) add_entry(64 * 1024);
    }

    const HwConfig& cfg() const { return cfg_; }
    emu::Device& device() { return device_; }
    const emu::DeviceStats& stats() const { return device_.stats(); }

    // A new address-list entry of `size` bytes, `offset` bytes into a fresh buffer.
    int add_entry(uint64_t size, bool secondary = false, uint64_t offset = 0) {
        uint64_t& next = secondary ? next_secondary_ : next_primary_;
        const uint64_t capacity = round_up(offset + size + 1, 4096);
        std::byte* host = memory_.add_region(
            secondary ? emu::MemoryPort::Secondary : emu::MemoryPort::Primary, next, capacity);
        entries_.push_back({next + offset, size, secondary, host + offset, capacity - offset});
        next += capacity + 4096;  // a gap: an overrun reads unbacked memory
        return static_cast<int>(entries_.size() - 1);
    }
    Entry& entry(int i) { return entries_.at(static_cast<size_t>(i)); }
    uint8_t* data(int i) { return reinterpret_cast<uint8_t*>(entry(i).host); }
    uint32_t num_entries() const { return static_cast<uint32_t>(entries_.size()); }

    // Writes the builder's descriptors into the descriptor entries, in `version`'s layout.
    void write(TaskBuilder& b, uint32_t version) {
        version_ = version;
        const nvdla_dla_network_desc net = b.network(num_entries());
        put(kNetwork, &net, sizeof(net));
        std::vector<std::byte> ops(b.size() * NVDLA_DLA_OP_SLOT_SIZE);
        std::vector<std::byte> graph(b.size() * NVDLA_DLA_COMMON_OP_DESC_SIZE);
        for (size_t i = 0; i < b.size(); ++i) {
            std::memcpy(ops.data() + i * NVDLA_DLA_OP_SLOT_SIZE, &b.ops()[i].op,
                        NVDLA_DLA_OP_SLOT_SIZE);
            std::memcpy(graph.data() + i * NVDLA_DLA_COMMON_OP_DESC_SIZE, &b.ops()[i].dep,
                        NVDLA_DLA_COMMON_OP_DESC_SIZE);
        }
        put(kOps, ops.data(), ops.size());
        const std::vector<std::byte> surfaces = b.surface_list(version);
        put(kSurfaces, surfaces.data(), surfaces.size());
        put(kGraph, graph.data(), graph.size());
        put(kLuts, b.luts().data(), b.luts().size() * sizeof(nvdla_dla_lut_param));
    }
    // Copies bytes into an entry and makes them its declared size.
    void put(int index, const void* bytes, size_t size) {
        Entry& e = entry(index);
        ASSERT_LE(size, e.capacity);
        if (size) std::memcpy(e.host, bytes, size);
        e.size = size;
    }

    nvdla_dla_task_source source() {
        buffers_.clear();
        for (const Entry& e : entries_)
            buffers_.push_back(
                {e.address, e.size, e.secondary ? NVDLA_DLA_BUFFER_SECONDARY : 0u, 0});
        nvdla_dla_task_source s{};
        s.version = version_;
        s.num_addresses = num_entries();
        s.addresses = buffers_.data();
        s.read = &Rig::read_entry;
        s.priv = this;
        return s;
    }

    // Measures and validates the task as an embedder would; err_ holds the verdict.
    int validate() {
        task_ = nullptr;
        nvdla_dla_task_source s = source();
        size_t bytes = 0;
        int ret = nvdla_dla_task_measure(&s, &bytes, &err_);
        if (ret) return ret;
        task_storage_.assign((bytes + 7) / 8, 0);
        return nvdla_dla_task_validate(&cfg_, &s, task_storage_.data(), bytes, &task_, &err_);
    }

    // Runs the validated task to completion: start, then the interrupt loop.
    int run() {
        if (!engine_) {
            engine_storage_.assign((nvdla_dla_engine_size() + 7) / 8, 0);
            nvdla_dla_engine_ops ops{};
            ops.reg_read = &Rig::reg_read;
            ops.reg_write = &Rig::reg_write;
            engine_ = nvdla_dla_engine_init(engine_storage_.data(), engine_storage_.size() * 8,
                                            &cfg_, &ops, this, &err_);
            if (!engine_) return -1;
        }
        int ret = nvdla_dla_engine_start(engine_, task_, &err_);
        if (ret) return ret;
        for (int i = 0; i < 100000; ++i) {
            if (!nvdla_dla_engine_isr(engine_)) return kStuck;
            bool done = false;
            ret = nvdla_dla_engine_process(engine_, &done, &err_);
            ++interrupts_;
            if (ret || done) return ret;
        }
        return kStuck;
    }

    // Validates and runs; fails the test with the engine's and the device's messages.
    void validate_and_run() {
        ASSERT_EQ(validate(), 0) << nvdla_dla_code_name(err_.code) << ": " << err_.message;
        const int ret = run();
        ASSERT_EQ(ret, 0) << (ret == kStuck ? "stuck waiting for an interrupt"
                                            : nvdla_dla_code_name(err_.code))
                          << ": " << err_.message << " | device: " << stats().last_error;
        EXPECT_EQ(stats().faults, 0u) << stats().last_error;
        EXPECT_EQ(stats().programming_errors, 0u) << stats().last_error;
    }

    nvdla_dla_task* task() { return task_; }
    nvdla_dla_engine* engine() { return engine_; }
    const nvdla_dla_error& error() const { return err_; }
    uint64_t engine_reads() const { return reads_; }
    uint64_t engine_writes() const { return writes_; }
    uint64_t interrupts() const { return interrupts_; }
    // Every register write of the engine, in order.
    const std::vector<std::pair<uint32_t, uint32_t>>& write_log() const { return log_; }
    // Replaces the value the engine reads at a register offset.
    std::function<std::optional<uint32_t>(uint32_t)> read_override;
    // The failing read callback for tests of that path.
    int read_error = 0;

    uint32_t unit_base(nvdla_unit u) const { return nvdla_unit_base(cfg_.reg_map, u); }

  private:
    static int read_entry(void* priv, uint32_t index, uint64_t offset, void* dst, uint32_t size) {
        auto* rig = static_cast<Rig*>(priv);
        if (rig->read_error) return rig->read_error;
        const Entry& e = rig->entries_.at(index);
        if (offset + size > e.size) {
            ADD_FAILURE() << "the validator read past entry " << index;
            return -5;
        }
        std::memcpy(dst, e.host + offset, size);
        return 0;
    }
    static uint32_t reg_read(void* priv, uint32_t offset) {
        auto* rig = static_cast<Rig*>(priv);
        ++rig->reads_;
        if (rig->read_override)
            if (std::optional<uint32_t> v = rig->read_override(offset)) return *v;
        return rig->device_.read_register(offset);
    }
    static void reg_write(void* priv, uint32_t offset, uint32_t value) {
        auto* rig = static_cast<Rig*>(priv);
        ++rig->writes_;
        rig->log_.emplace_back(offset, value);
        rig->device_.write_register(offset, value);
    }
    bool allowed(const emu::DmaAccess& a) const {
        const bool secondary = a.port == emu::MemoryPort::Secondary;
        for (const Entry& e : entries_)
            if (e.secondary == secondary && a.address >= e.address &&
                a.address + a.size <= e.address + e.size)
                return true;
        return false;
    }

    const HwConfig& cfg_;
    emu::FlatMemory memory_;
    emu::Device device_;
    std::vector<Entry> entries_;
    std::vector<nvdla_dla_buffer> buffers_;
    uint64_t next_primary_ = 0x80000000ull, next_secondary_ = 0x50000000ull;
    uint32_t version_ = kV12;
    std::vector<uint64_t> task_storage_, engine_storage_;
    nvdla_dla_task* task_ = nullptr;
    nvdla_dla_engine* engine_ = nullptr;
    nvdla_dla_error err_{};
    uint64_t reads_ = 0, writes_ = 0, interrupts_ = 0;
    std::vector<std::pair<uint32_t, uint32_t>> log_;
};

}  // namespace nvdla::engine_test
