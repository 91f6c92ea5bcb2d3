// Internal: what the runtime needs from an NVDLA device, and the two implementations behind
// it — `emu` (the engine and the emulated accelerator in process) and `drm` (the kernel driver
// through libdrm and include/uapi/drm/nvdla_drm.h). The runtime never talks to either directly.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nvdla/hw_config.hpp"
#include "nvdla/status.hpp"

namespace nvdla::runtime {

enum class MemoryDomain : uint8_t { System, Sram };

struct BufferRequest {
    uint64_t size = 0;
    uint64_t alignment = 32;  // power of two; 256 for weights, WMB, WGS
    MemoryDomain domain = MemoryDomain::System;
};

// A buffer the accelerator can reach: contiguous, at a device address, mapped for the CPU.
class Buffer {
  public:
    virtual ~Buffer() = default;
    virtual uint64_t size() const = 0;
    virtual uint64_t device_address() const = 0;
    virtual MemoryDomain domain() const = 0;
    virtual std::byte* data() = 0;  // CPU view of the whole buffer, valid for its lifetime
    // A dma-buf file descriptor for the buffer (the caller owns it), where the backend has them.
    // Exporting ends a seal.
    virtual Result<int> export_dmabuf() = 0;
    // The caller's promise that from now on nothing but the device writes the buffer (a
    // loadable's weights): a backend that emulates the device may then trust its copy of what
    // it read there until a DMA write. Buffers that others can reach (imports) stay unsealed.
    virtual void seal() {}
};

// One entry of a task's address list: a byte offset into a buffer.
struct Address {
    Buffer* buffer = nullptr;
    uint64_t offset = 0;
};

// One DLA task: the blobs' interface version and the address list (entry 0 is the network
// descriptor).
struct Task {
    uint32_t dla_version = 0;
    std::vector<Address> addresses;
};

using JobId = uint64_t;

// Backend::wait's answer when the timeout passed first starts with this; the job is still
// pending and can be waited for again.
inline constexpr std::string_view kTimedOut = "timed out";
inline bool timed_out(const Status& s) {
    return !s.ok() && std::string_view(s.message()).starts_with(kTimedOut);
}

// What a backend measured while a job ran (all optional: a backend fills what it can).
struct OperationProfile {
    std::string unit;     // the processor that ran it: "CONV", "SDP", "PDP", "CDP", ...
    uint32_t layers = 0;  // hardware layers it completed (fused ones count as one)
    std::chrono::nanoseconds duration{0};
};
struct JobProfile {
    std::chrono::steady_clock::time_point queued{}, started{}, finished{};
    std::vector<OperationProfile> operations;  // with BackendOptions::profiling only
};

struct BackendInfo {
    std::string name;    // "emu" or "drm"
    std::string device;  // "in-process emulated nv_full", "/dev/dri/renderD128 (nvdla)"
    const HwConfig* config = nullptr;
    uint64_t memory_bytes = 0;  // what buffers can take in all, 0 if unknown
};

class Backend {
  public:
    virtual ~Backend() = default;
    virtual const BackendInfo& info() const = 0;

    virtual Result<std::unique_ptr<Buffer>> create_buffer(const BufferRequest& request) = 0;
    // A dma-buf from elsewhere, used without a copy (contiguous buffers only on drm).
    virtual Result<std::unique_ptr<Buffer>> import_dmabuf(int fd) = 0;

    // Validates the task (the error says which descriptor field is wrong) and queues it.
    virtual Result<JobId> submit(const Task& task) = 0;
    // Waits until the job finished or the timeout passed; the job's own failure is the error.
    virtual Status wait(JobId job, std::chrono::nanoseconds timeout) = 0;

    // Optional, with defaults for backends that lack them:
    // submit() for a caller that waits for the job next, at once: a backend may leave the
    // job to that wait (run it on the waiting thread) instead of handing it to a worker.
    virtual Result<JobId> submit_for_wait(const Task& task) { return submit(task); }
    // The buffer at host memory the caller owns and keeps alive, used without a copy.
    virtual Result<std::unique_ptr<Buffer>> import_host_memory(void* data, uint64_t size) {
        (void)data;
        (void)size;
        return Status::failure(info().name + " backend: host memory cannot be used directly");
    }
    // Checks a task as submit() would, without running it (OK when the check happens later,
    // e.g. in the kernel).
    virtual Status validate(const Task& task) {
        (void)task;
        return Status();
    }
    // wait() that also reports what the job's execution measured.
    virtual Status wait_with_profile(JobId job, std::chrono::nanoseconds timeout,
                                     JobProfile* profile) {
        if (profile) *profile = JobProfile{};
        return wait(job, timeout);
    }
};

enum class BackendKind : uint8_t { Emu, Drm, Auto };

struct BackendOptions {
    BackendKind kind = BackendKind::Auto;
    std::string config = "nv_full";          // emu: the configuration to emulate
    uint64_t emu_memory_bytes = 256u << 20;  // emu: size of its device memory
    std::string drm_device;                  // drm: a render node to use instead of searching
    uint64_t emu_sram_bytes = 4u << 20;      // emu: SRAM, on configurations with a secondary port
    // A job that has not completed after this long fails (and the device is reset).
    std::chrono::milliseconds job_timeout{10000};
    bool profiling = false;    // measure each hardware operation (JobProfile::operations)
    unsigned emu_threads = 0;  // emu: threads per operation (0: NVDLA_EMU_THREADS or all cores)
};

// The backend `options` ask for; Auto takes drm when an nvdla render node exists, else emu.
// NVDLA_BACKEND=emu|drm|auto in the environment overrides options.kind.
Result<std::unique_ptr<Backend>> open_backend(const BackendOptions& options);

Result<std::unique_ptr<Backend>> open_emu_backend(const BackendOptions& options);
Result<std::unique_ptr<Backend>> open_drm_backend(const BackendOptions& options);
// Whether a render node (/dev/dri) or an accel node (/dev/accel) whose driver is "nvdla"
// exists (its path when it does; render nodes first).
std::string find_nvdla_render_node();

}  // namespace nvdla::runtime
