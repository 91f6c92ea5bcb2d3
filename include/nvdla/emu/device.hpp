// The emulated NVDLA: a register-level, bit-exact model of one accelerator instance.
//
// The embedder drives it like hardware: 32-bit register reads and writes at byte offsets of
// the CSB space, DMA into an address space it supplies, and an interrupt line. An operation
// runs when its D_OP_ENABLE is written and the units it is fused with are enabled (the
// convolution pipeline CDMA -> CSC -> CMAC -> CACC -> SDP runs as one); its completion
// interrupts are raised before the write returns. Execution is functional and deterministic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nvdla/api.hpp"
#include "nvdla/hw/nvdla_regs.h"
#include "nvdla/hw_config.hpp"

namespace nvdla::emu {

// The two DMA interfaces: MCIF (primary memory, usually DRAM) and CVIF (the secondary
// SRAM/CVSRAM interface, on configurations that have one).
enum class MemoryPort : uint8_t { Primary, Secondary };

// The address space the accelerator's DMA sees, supplied by the embedder.
class Memory {
  public:
    virtual ~Memory() = default;
    // Host pointer to the bytes [address, address + size) of port, or nullptr when that whole
    // range is not backed by memory (the access is then a fault).
    virtual std::byte* translate(MemoryPort port, uint64_t address, uint64_t size) = 0;
    // translate() for a DMA write. An embedder with sealed memory ends the seal here.
    virtual std::byte* translate_for_write(MemoryPort port, uint64_t address, uint64_t size) {
        return translate(port, address, size);
    }
    // For sealed memory, which nothing but the devices' DMA writes after it was set up (a
    // loadable's weights, held by the runtime): a nonzero number that stays the same while
    // nothing writes [address, address + size) and is never given again once something did;
    // 0 when unknown. CDMA then skips comparing its decoded weights' source with the bytes.
    virtual uint64_t sealed_contents(MemoryPort port, uint64_t address, uint64_t size) {
        (void)port, (void)address, (void)size;
        return 0;
    }
};

struct DmaAccess {
    nvdla_unit unit;  // the DMA client
    MemoryPort port;
    uint64_t address;
    uint64_t size;
    bool write;
};

// Asked before every DMA transfer; false rejects it. A rejected or unbacked access is a fault:
// a read gives zeros, a write is dropped, and the fault is counted and reported.
using AccessCheck = std::function<bool(const DmaAccess&)>;
// Called with the new level whenever the interrupt line changes.
using InterruptLine = std::function<void(bool asserted)>;

// When an operation's completion becomes visible. The model computes a layer in one go; with
// Immediate its done interrupts are raised (and its register groups freed) before the enabling
// write returns. With Stepped they form a queue in hardware order (CDMA data, CDMA weights,
// CACC, SDP, PDP, ...): nothing is visible until the embedder calls advance(), which delivers the
// next one. Hardware traces need Stepped: they wait for and clear each interrupt in turn, and
// expect D_OP_ENABLE to read 1 while a layer is under way.
enum class EventPacing : uint8_t { Immediate, Stepped };

struct DeviceStats {
    uint64_t operations = 0;  // hardware layers completed
    uint64_t register_reads = 0, register_writes = 0;
    uint64_t bytes_read = 0, bytes_written = 0;
    uint64_t faults = 0;              // DMA accesses rejected or outside memory
    DmaAccess first_fault{};          // valid when faults > 0
    uint64_t programming_errors = 0;  // operations whose registers the model cannot execute
    std::string last_error;           // a sentence for the most recent fault or error
};

class NVDLA_API Device {
  public:
    Device(const HwConfig& cfg, Memory& memory);
    ~Device();
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    const HwConfig& config() const;

    // CSB register access at a byte offset. Absent registers read 0 and ignore writes.
    uint32_t read_register(uint32_t offset);
    void write_register(uint32_t offset, uint32_t value);

    void set_interrupt_line(InterruptLine line);
    void set_access_check(AccessCheck check);
    bool interrupt_asserted() const;

    // Threads one operation may use (0: NVDLA_EMU_THREADS, else every core, the default).
    // Results are the same for any count.
    void set_threads(unsigned threads);
    unsigned threads() const;

    // Holds every operation back (they stay pending) until released: lets a test make a job
    // time out. Releasing runs what became ready.
    void set_stalled(bool stalled);

    // Immediate (the default) or Stepped completion; switching to Immediate delivers whatever
    // is pending.
    void set_event_pacing(EventPacing pacing);
    // Stepped pacing: delivers the next completion step (one done interrupt, the register
    // groups it frees) and runs what that made ready; false when nothing is pending.
    bool advance();

    // Power-on state: registers at their reset values, no pending work, line low.
    void reset();

    const DeviceStats& stats() const;

    struct Impl;

  private:
    std::unique_ptr<Impl> impl_;
};

// A Memory over host buffers at fixed device addresses, for tests, tools and the in-process
// backend.
class NVDLA_API FlatMemory : public Memory {
  public:
    // Adds [address, address + size) of port, zero-filled; regions must not overlap.
    std::byte* add_region(MemoryPort port, uint64_t address, uint64_t size);
    std::byte* translate(MemoryPort port, uint64_t address, uint64_t size) override;

  private:
    struct Region {
        MemoryPort port;
        uint64_t address;
        std::vector<std::byte> bytes;
    };
    std::vector<Region> regions_;
};

}  // namespace nvdla::emu
