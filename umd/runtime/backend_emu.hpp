// The `emu` backend: the DLA engine (kmd/engine/) driving the emulated accelerator (umd/emu) in
// this process, over an emulated device address space.
//
// - Memory: buffers get device addresses from a region per port (primary: system memory;
//   secondary: SRAM, on configurations with that interface), aligned as requested, backed by
//   host memory (a memfd, so a buffer can be exported as a file descriptor), by a caller's host
//   memory, or by an mmap of an imported file descriptor (dma-buf, memfd).
// - Validation: every submitted task goes through nvdla_dla_task_validate(), exactly as the
//   kernel driver does, before anything is queued; a task submitted again whose address list
//   and descriptor bytes are the ones validated before (compared in full) gets that checked
//   copy again.
// - Containment: while a job runs, the device's DMA may only touch the buffers of its address
//   list; any other access is refused, counted and fails the job with where it went.
// - Execution: jobs run in submission order, on a worker thread or on the thread that waits
//   for them (whichever gets there first: no hand-over latency when the caller waits at once).
//   The engine's interrupt loop runs until the task completes; a device that stops raising
//   interrupts leaves the job pending until BackendOptions::job_timeout, then it fails and the
//   engine and device are reset.
#pragma once

#include <memory>
#include <vector>

#include "backend.hpp"
#include "nvdla/emu/device.hpp"

namespace nvdla::runtime {

// The memory a job's DMA may touch: each address-list entry's buffer from the entry's offset
// to the buffer's end, per port.
class DmaWindow {
  public:
    void add(emu::MemoryPort port, uint64_t start, uint64_t end);
    // Sorts and merges what was added; allows() needs it.
    void seal();
    bool allows(emu::MemoryPort port, uint64_t address, uint64_t size) const;

  private:
    struct Range {
        emu::MemoryPort port;
        uint64_t start, end;
    };
    std::vector<Range> ranges_;
};

class EmuBackend : public Backend {
  public:
    static Result<std::unique_ptr<EmuBackend>> create(const BackendOptions& options);
    ~EmuBackend() override;

    const BackendInfo& info() const override;
    Result<std::unique_ptr<Buffer>> create_buffer(const BufferRequest& request) override;
    Result<std::unique_ptr<Buffer>> import_dmabuf(int fd) override;
    Result<std::unique_ptr<Buffer>> import_host_memory(void* data, uint64_t size) override;
    Status validate(const Task& task) override;
    Result<JobId> submit(const Task& task) override;
    Result<JobId> submit_for_wait(const Task& task) override;
    Status wait(JobId job, std::chrono::nanoseconds timeout) override;
    Status wait_with_profile(JobId job, std::chrono::nanoseconds timeout,
                             JobProfile* profile) override;

    // For tests: hold the device's operations back (jobs then wait for their timeout), or
    // release them and let the pending job continue.
    void set_stalled(bool stalled);
    // DMA accesses refused since the backend was created.
    uint64_t dma_faults() const;
    // Bytes of device memory in use by buffers of each port.
    uint64_t bytes_in_use(MemoryDomain domain) const;
    // What the device's memory answers for the whole buffer (emu::Memory::sealed_contents).
    uint64_t sealed_contents(const Buffer& buffer) const;

    struct State;

  private:
    explicit EmuBackend(std::unique_ptr<State> state);
    Result<JobId> queue(const Task& task, bool for_waiter);
    std::unique_ptr<State> state_;
};

}  // namespace nvdla::runtime
