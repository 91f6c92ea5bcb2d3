// The NVDLA runtime: load a compiled network (a loadable) once, run it many times.
//
//   auto rt = nvdla::Runtime::open();                       // NVDLA_BACKEND=emu|drm|auto
//   auto net = (*rt)->load_file("lenet.nvdla");              // verified and checked once
//   auto ctx = (*net)->create_context();                     // buffers for one execution
//   std::memcpy((*ctx)->input(0).data(), pixels, size);      // or bind your own memory
//   auto job = (*ctx)->submit();                             // returns at once
//   nvdla::Status done = job->wait(std::chrono::seconds(1)); // or job->done()
//   use((*ctx)->output(0));
//
// - Runtime: one accelerator (the kernel driver's render node, or the emulated device in this
//   process). Thread-safe; many networks and contexts share it, their jobs run in order of
//   submission.
// - Network: a loaded loadable, immutable: tensor descriptions, tasks. Thread-safe.
// - Context: the memory of one execution of a network (every buffer the loadable asks for),
//   its bound inputs and outputs, one job at a time. Use a context from one thread at a time;
//   create several to run a network concurrently.
// - Job: a submitted execution; wait with a timeout, then read timings.
//
// Every failure is a Status whose message is a sentence saying what is wrong.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nvdla/api.hpp"
#include "nvdla/hw_config.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla {

// Element types, layouts and categories with the loadable's numbering.
enum class TensorDataType : uint8_t { Unknown = 0, Float32 = 1, Float16 = 2, Int16 = 3, Int8 = 4 };
enum class TensorLayout : uint8_t { Unknown = 0, NCHW = 1, NHWC = 2, NCxHWx = 3 };
enum class TensorCategory : uint8_t { Image = 0, Weight = 1, Feature = 2, Planar = 3, Bias = 4 };

NVDLA_API std::string_view to_string(TensorDataType t);
NVDLA_API std::string_view to_string(TensorLayout l);

// The loadable's pixel-format numbers of feature data (0..35 are image pixel formats).
inline constexpr uint8_t kPixelFormatFeature = 36;    // 32-byte atoms
inline constexpr uint8_t kPixelFormatFeatureX8 = 37;  // 8-byte atoms (nv_small)

// real value = scale * (stored value - offset). The 0.7 loadable format carries no
// quantization for tensors: `known` is true only when the network's own CPU operations give
// the scale of a tensor they read or write (int8 softmax/power), otherwise scale 1, offset 0.
struct TensorQuantization {
    float scale = 1.0f;
    int32_t offset = 0;
    bool known = false;
};

struct TensorInfo {
    std::string name;
    uint32_t index = 0;  // the bind index among the network's inputs (or outputs)
    Dims4 dims;
    TensorLayout layout = TensorLayout::Unknown;
    TensorDataType data_type = TensorDataType::Unknown;
    TensorCategory category = TensorCategory::Feature;
    uint8_t pixel_format = kPixelFormatFeature;
    uint8_t pixel_mapping = 0;
    uint64_t size_bytes = 0;            // bytes of the buffer the tensor occupies
    std::array<uint32_t, 8> strides{};  // bytes: [0] element, [1] line, [2] surface
    TensorQuantization quantization;

    uint32_t line_stride() const { return strides[1]; }
    uint32_t surface_stride() const { return strides[2]; }
};

enum class BackendChoice : uint8_t { Auto, Emu, Drm };

struct RuntimeOptions {
    // Auto: the kernel driver when an nvdla render node exists, else the emulator. The
    // environment variable NVDLA_BACKEND=emu|drm|auto overrides this.
    BackendChoice backend = BackendChoice::Auto;
    std::string emu_config = "nv_full";  // the configuration the emulator models
    uint64_t emu_memory_bytes = 256u << 20;
    std::string drm_device;  // a render node to use instead of searching
    std::chrono::milliseconds job_timeout{10000};
    bool profiling = false;  // per-operation hardware times in RunTiming
    // Emulator: threads one hardware operation may use; 0 = NVDLA_EMU_THREADS when set, else
    // every core. Results are identical for any count.
    unsigned emu_threads = 0;
};

struct DeviceInfo {
    std::string backend;  // "emu" or "drm"
    std::string device;   // "in-process emulated nv_full", "/dev/dri/renderD128 (nvdla)"
    std::string config;   // the hardware configuration's name
    const HwConfig* hw = nullptr;
    uint64_t memory_bytes = 0;  // device memory buffers can take, 0 if unknown
};

struct OperationTime {
    std::string name;   // "DLA task 1", "CONV", "SDP", "EMU softmax", ...
    uint32_t task = 0;  // the loadable's task id
    std::chrono::nanoseconds duration{0};
};

struct RunTiming {
    std::chrono::nanoseconds total{0};      // submit to completion
    std::vector<OperationTime> tasks;       // each task, in execution order
    std::vector<OperationTime> operations;  // each operation (hardware ones with profiling)
};

class Runtime;
class Context;

// The original nvdla_runtime's --mean and --normalize.
struct ImageInputOptions {
    std::array<float, 4> mean{};  // per image channel
    float normalize = 1.0f;       // > 0
};

// Memory the accelerator can reach, mapped for the CPU; movable, shared by copies.
class NVDLA_API DeviceBuffer {
  public:
    DeviceBuffer() = default;
    uint64_t size() const;
    std::byte* data() const;
    std::span<std::byte> bytes() const { return {data(), static_cast<size_t>(size())}; }
    // A file descriptor for the memory (a dma-buf on drm, a memfd on emu); the caller owns it.
    Result<int> export_fd() const;
    explicit operator bool() const { return impl_ != nullptr; }

    struct Impl;
    explicit DeviceBuffer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
    const std::shared_ptr<Impl>& impl() const { return impl_; }

  private:
    std::shared_ptr<Impl> impl_;
};

// Whether a Job::wait() failure means "not finished yet" (the run goes on and can be waited
// for again) rather than a failed run.
inline bool timed_out(const Status& s) {
    return !s.ok() && std::string_view(s.message()).starts_with("timed out");
}

// A submitted execution.
class NVDLA_API Job {
  public:
    Job() = default;
    // Waits until the run completed or `timeout` passed. A run that completed gives its result
    // (every later call gives it again); a timeout gives a failure starting with "timed out"
    // and the run goes on.
    Status wait(std::chrono::nanoseconds timeout = std::chrono::nanoseconds::max()) const;
    // Whether the run has completed (a wait() with no timeout).
    bool done() const;
    // Valid once wait() returned success.
    const RunTiming& timing() const;

    struct State;
    explicit Job(std::shared_ptr<State> state) : state_(std::move(state)) {}

  private:
    std::shared_ptr<State> state_;
};

class NVDLA_API Context {
  public:
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    // The memory behind an input/output: the context's own buffer, or what was bound.
    std::span<std::byte> input(uint32_t index);
    std::span<std::byte> output(uint32_t index);

    // Uses the caller's memory for a tensor from now on, without copies. The buffer must hold
    // the tensor (TensorInfo::size_bytes) and stay alive while the context uses it.
    Status bind_input(uint32_t index, const DeviceBuffer& buffer);
    Status bind_output(uint32_t index, const DeviceBuffer& buffer);
    // Host memory (emu only: the kernel driver cannot use arbitrary host memory) and dma-bufs.
    Status bind_input(uint32_t index, void* host, uint64_t bytes);
    Status bind_output(uint32_t index, void* host, uint64_t bytes);
    Status bind_input_fd(uint32_t index, int dmabuf_fd);
    Status bind_output_fd(uint32_t index, int dmabuf_fd);

    // Changes a bound tensor's line and surface strides where the loadable's relocations allow
    // (the original setInputTensorDesc); the descriptors of this context are patched.
    Status set_input_strides(uint32_t index, uint32_t line_stride, uint32_t surface_stride);
    Status set_output_strides(uint32_t index, uint32_t line_stride, uint32_t surface_stride);

    // Decodes an image file (PGM/PPM, PNG, JPEG) and writes it into an input with the original
    // nvdla_runtime's rules: fp16 (x - mean[c]) / normalize; int8 floor(x * 127 / 255 + 0.5).
    // The image must have the tensor's width and height.
    Status load_image(uint32_t index, const std::string& path,
                      const ImageInputOptions& options = {});

    // Checks every hardware task as a submission would, without running anything.
    Status validate();
    // Starts the network; the context must not have a job still running.
    Result<Job> submit();
    // submit() and wait(). The network may run on the calling thread (no hand-over to another
    // one); networks with CPU tasks then run to their end (each hardware task still fails at
    // the runtime's job_timeout).
    Status run(std::chrono::nanoseconds timeout = std::chrono::nanoseconds::max());
    // The timing of the last run() or submitted job (valid once it completed).
    const RunTiming& last_timing() const;

    struct Impl;
    explicit Context(std::unique_ptr<Impl> impl);

  private:
    std::unique_ptr<Impl> impl_;
};

struct TaskInfo {
    uint32_t id = 0;
    bool hardware = true;  // DLA1; false: EMU1 (runs on the CPU)
    std::string version;   // the descriptors' interface version, "0.10.0"
};

class NVDLA_API Network {
  public:
    const std::vector<TensorInfo>& inputs() const;
    const std::vector<TensorInfo>& outputs() const;
    const std::vector<TaskInfo>& tasks() const;
    // Bytes of device memory one context takes (bound tensors included).
    uint64_t context_bytes() const;

    Result<std::unique_ptr<Context>> create_context() const;

    struct Impl;
    explicit Network(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  private:
    std::shared_ptr<Impl> impl_;
};

class NVDLA_API Runtime {
  public:
    static Result<std::unique_ptr<Runtime>> open(const RuntimeOptions& options = {});
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    const DeviceInfo& device() const;

    // Verifies and checks a loadable (the bytes are copied; they can go away afterwards).
    Result<std::shared_ptr<Network>> load(std::span<const std::byte> loadable);
    Result<std::shared_ptr<Network>> load_file(const std::string& path);

    Result<DeviceBuffer> allocate(uint64_t bytes, uint64_t alignment = 4096);
    Result<DeviceBuffer> import_fd(int dmabuf_fd);
    Result<DeviceBuffer> import_host(void* host, uint64_t bytes);

    struct Core;
    explicit Runtime(std::shared_ptr<Core> core);

  private:
    std::shared_ptr<Core> core_;
};

// The library's version, "0.1.0".
NVDLA_API std::string_view runtime_version();

}  // namespace nvdla
