// The units' DMA: every transfer goes through the embedder's access check and memory, is
// counted, and a fault (rejected or unbacked range) reads zeros and drops writes.
#pragma once

#include <cstdint>
#include <cstring>

#include "nvdla/emu/device.hpp"

namespace nvdla::emu {

class Dma {
  public:
    Dma(Memory& memory, DeviceStats& stats) : memory_(memory), stats_(stats) {}
    void set_access_check(AccessCheck check) { check_ = std::move(check); }

    // Returns false on a fault (dst then holds zeros).
    bool read(nvdla_unit unit, MemoryPort port, uint64_t address, void* dst, uint64_t size);
    // The bytes [address, address + size) in place, for a unit that only reads them before
    // anything is written (counted as read like read()); nullptr on a fault, counted and
    // reported as read() does (the caller then takes zeros).
    const std::byte* view(nvdla_unit unit, MemoryPort port, uint64_t address, uint64_t size);
    // Returns false on a fault (nothing written).
    bool write(nvdla_unit unit, MemoryPort port, uint64_t address, const void* src, uint64_t size);
    // Where write() would put the bytes, checked and counted as write() does, for a unit that
    // copies them there itself before anything reads them (possibly on another thread);
    // nullptr on a fault (the write is dropped).
    std::byte* place(nvdla_unit unit, MemoryPort port, uint64_t address, uint64_t size);

    // Memory::sealed_contents() of the range (no access: nothing is counted or checked).
    uint64_t sealed_contents(MemoryPort port, uint64_t address, uint64_t size) {
        return memory_.sealed_contents(port, address, size);
    }

    // The port a RAM_TYPE field selects: 1 = MC (primary), 0 = CV (secondary).
    static MemoryPort port_of(uint32_t ram_type) {
        return ram_type ? MemoryPort::Primary : MemoryPort::Secondary;
    }
    // A 64-bit address from a HIGH/LOW register pair.
    static uint64_t address(uint32_t high, uint32_t low) { return uint64_t(high) << 32 | low; }

  private:
    std::byte* checked(const DmaAccess& access);

    Memory& memory_;
    DeviceStats& stats_;
    AccessCheck check_;
};

}  // namespace nvdla::emu
