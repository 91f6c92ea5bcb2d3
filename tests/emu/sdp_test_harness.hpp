// The SDP tests' rig: a device over flat memory, registers written by name like software
// does, feature cubes packed and unpacked by hand (independently of the model's DMA code), and
// reference arithmetic written plainly.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "nvdla/emu/device.hpp"
#include "nvdla/hw/register_map.hpp"
#include "test_support.hpp"

namespace nvdla::emu::sdp_test {

class Rig {
  public:
    explicit Rig(const char* config)
        : cfg_(test::config(config)),
          map_(hw::RegisterMap::get(cfg_.reg_map)),
          device_(std::make_unique<Device>(cfg_, memory_)) {}

    const HwConfig& cfg() const { return cfg_; }
    Device& device() { return *device_; }
    const DeviceStats& stats() const { return device_->stats(); }

    void set(const char* unit, const char* reg, uint32_t value) {
        const hw::RegisterInfo* r = map_.find(unit, reg);
        ASSERT_NE(r, nullptr) << unit << "." << reg;
        device_->write_register(r->address, value);
    }
    uint32_t get(const char* unit, const char* reg) {
        const hw::RegisterInfo* r = map_.find(unit, reg);
        EXPECT_NE(r, nullptr) << unit << "." << reg;
        return r ? device_->read_register(r->address) : 0;
    }
    void sdp(const char* reg, uint32_t value) { set("SDP", reg, value); }
    void rdma(const char* reg, uint32_t value) { set("SDP_RDMA", reg, value); }

    // Memory [address, address + size) on the primary port, zero-filled.
    uint8_t* region(uint64_t address, uint64_t size, MemoryPort port = MemoryPort::Primary) {
        return reinterpret_cast<uint8_t*>(memory_.add_region(port, address, size));
    }

    // Everything bypassed, int8 in and out, converter identity, no counters.
    void bypass_all() {
        sdp("D_DP_BS_CFG", 0x1);
        sdp("D_DP_BN_CFG", 0x1);
        sdp("D_DP_EW_CFG", 0x1);
        sdp("D_DATA_FORMAT", 0);
        sdp("D_CVT_OFFSET", 0);
        sdp("D_CVT_SCALE", 1);
        sdp("D_CVT_SHIFT", 0);
        sdp("D_FEATURE_MODE_CFG", 0);
        sdp("D_PERF_ENABLE", 0);
        sdp("D_DST_DMA_CFG", 1);
        rdma("D_BRDMA_CFG", 0x1);
        rdma("D_NRDMA_CFG", 0x1);
        rdma("D_ERDMA_CFG", 0x1);
        rdma("D_FEATURE_MODE_CFG", 0);
        rdma("D_SRC_DMA_CFG", 1);
        rdma("D_PERF_ENABLE", 0);
    }
    // The cube's shape in both units (W x H x C).
    void shape(uint32_t w, uint32_t h, uint32_t c) {
        for (const char* unit : {"SDP", "SDP_RDMA"}) {
            set(unit, "D_DATA_CUBE_WIDTH", w - 1);
            set(unit, "D_DATA_CUBE_HEIGHT", h - 1);
            set(unit, "D_DATA_CUBE_CHANNEL", c - 1);
        }
    }
    // SDP_RDMA D_FEATURE_MODE_CFG: input/processing precisions (0 int8, 1 int16, 2 fp16).
    void precisions(uint32_t in, uint32_t proc, uint32_t out) {
        rdma("D_FEATURE_MODE_CFG", in << 2 | proc << 4 | out << 6);
        sdp("D_DATA_FORMAT", proc | out << 2);
    }
    void source(uint64_t base, uint32_t line, uint32_t surface) {
        rdma("D_SRC_BASE_ADDR_LOW", static_cast<uint32_t>(base));
        rdma("D_SRC_BASE_ADDR_HIGH", static_cast<uint32_t>(base >> 32));
        rdma("D_SRC_LINE_STRIDE", line);
        rdma("D_SRC_SURFACE_STRIDE", surface);
    }
    void destination(uint64_t base, uint32_t line, uint32_t surface) {
        sdp("D_DST_BASE_ADDR_LOW", static_cast<uint32_t>(base));
        sdp("D_DST_BASE_ADDR_HIGH", static_cast<uint32_t>(base >> 32));
        sdp("D_DST_LINE_STRIDE", line);
        sdp("D_DST_SURFACE_STRIDE", surface);
    }
    // The register group software programs next, in SDP and SDP_RDMA.
    void group(uint32_t g) {
        sdp("S_POINTER", g);
        rdma("S_POINTER", g);
    }
    // Offline operation: enable SDP_RDMA and SDP, which runs it.
    void run() {
        rdma("D_OP_ENABLE", 1);
        sdp("D_OP_ENABLE", 1);
    }
    // S_LUT_ACCESS_CFG + S_LUT_ACCESS_DATA writes, as the firmware programs a table.
    void write_lut(bool lo, const std::vector<int16_t>& entries) {
        sdp("S_LUT_ACCESS_CFG", (1u << 17) | (lo ? 1u << 16 : 0u));
        for (int16_t e : entries) sdp("S_LUT_ACCESS_DATA", static_cast<uint16_t>(e));
    }

  private:
    const HwConfig& cfg_;
    const hw::RegisterMap& map_;
    FlatMemory memory_;
    std::unique_ptr<Device> device_;
};

// Byte offset of element (c, h, w) of a feature cube with `lanes` channels per atom.
inline uint64_t cube_offset(uint32_t atom, uint32_t element_bytes, uint32_t line, uint32_t surface,
                            uint32_t c, uint32_t h, uint32_t w) {
    const uint32_t lanes = atom / element_bytes;
    return uint64_t(c / lanes) * surface + uint64_t(h) * line + uint64_t(w) * atom +
           (c % lanes) * element_bytes;
}

inline void put16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v);
    p[1] = static_cast<uint8_t>(v >> 8);
}
inline uint16_t get16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] | p[1] << 8);
}

// x / 2^shift rounded half away from zero, written out plainly.
inline int64_t round_shift(int64_t x, unsigned shift) {
    if (shift == 0) return x;
    const int64_t half = int64_t(1) << (shift - 1);
    const int64_t magnitude = x < 0 ? -x : x;
    const int64_t q = (magnitude + half) >> shift;
    return x < 0 ? -q : q;
}
inline int64_t clamp_bits(int64_t x, unsigned bits) {
    const int64_t hi = (int64_t(1) << (bits - 1)) - 1, lo = -(int64_t(1) << (bits - 1));
    return x > hi ? hi : (x < lo ? lo : x);
}

}  // namespace nvdla::emu::sdp_test
