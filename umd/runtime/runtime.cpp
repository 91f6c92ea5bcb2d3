// The public runtime (include/nvdla/runtime.hpp) over the loadable (loadable.hpp), the CPU
// tasks (cpu_tasks.hpp) and a backend (backend.hpp).
#include "nvdla/runtime.hpp"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "backend.hpp"
#include "cpu_tasks.hpp"
#include "image.hpp"
#include "loadable.hpp"
#include "nvdla/hw/dla_engine.h"

namespace nvdla {

using Clock = std::chrono::steady_clock;
using runtime::Backend;
using runtime::Loadable;

namespace {

constexpr uint64_t kMinimumAlignment = 4096;  // what the kernel driver gives every buffer

std::string task_name(const runtime::TaskEntry& task, uint32_t id) {
    return (task.interface == runtime::TaskInterface::Dla1 ? "DLA task " : "EMU task ") +
           std::to_string(id);
}

Status prefixed(const std::string& prefix, const Status& s) {
    return s ? s : error(prefix, ": ", s.message());
}

std::string plural(uint64_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

}  // namespace

std::string_view to_string(TensorDataType t) {
    switch (t) {
        case TensorDataType::Unknown: return "unknown";
        case TensorDataType::Float32: return "float32";
        case TensorDataType::Float16: return "float16";
        case TensorDataType::Int16: return "int16";
        case TensorDataType::Int8: return "int8";
    }
    return "unknown";
}

std::string_view to_string(TensorLayout l) {
    switch (l) {
        case TensorLayout::Unknown: return "unknown";
        case TensorLayout::NCHW: return "NCHW";
        case TensorLayout::NHWC: return "NHWC";
        case TensorLayout::NCxHWx: return "NCxHWx";
    }
    return "unknown";
}

std::string_view runtime_version() {
    return "0.1.0";  // the CMake project's version
}

// ---- Runtime core and buffers ---------------------------------------------------------------

struct Runtime::Core {
    std::unique_ptr<Backend> backend;
    DeviceInfo info;
    RuntimeOptions options;
};

struct DeviceBuffer::Impl {
    std::shared_ptr<Runtime::Core> core;
    std::unique_ptr<runtime::Buffer> buffer;
};

uint64_t DeviceBuffer::size() const {
    return impl_ ? impl_->buffer->size() : 0;
}

std::byte* DeviceBuffer::data() const {
    return impl_ ? impl_->buffer->data() : nullptr;
}

Result<int> DeviceBuffer::export_fd() const {
    if (!impl_) return error("the buffer is empty");
    return impl_->buffer->export_dmabuf();
}

Runtime::Runtime(std::shared_ptr<Core> core) : core_(std::move(core)) {}
Runtime::~Runtime() = default;

Result<std::unique_ptr<Runtime>> Runtime::open(const RuntimeOptions& options) {
    runtime::BackendOptions backend_options;
    switch (options.backend) {
        case BackendChoice::Auto: backend_options.kind = runtime::BackendKind::Auto; break;
        case BackendChoice::Emu: backend_options.kind = runtime::BackendKind::Emu; break;
        case BackendChoice::Drm: backend_options.kind = runtime::BackendKind::Drm; break;
    }
    backend_options.config = options.emu_config;
    backend_options.emu_memory_bytes = options.emu_memory_bytes;
    backend_options.drm_device = options.drm_device;
    backend_options.job_timeout = options.job_timeout;
    backend_options.profiling = options.profiling;
    backend_options.emu_threads = options.emu_threads;
    Result<std::unique_ptr<Backend>> backend = runtime::open_backend(backend_options);
    if (!backend) return backend.status();
    auto core = std::make_shared<Core>();
    core->backend = std::move(backend).value();
    core->options = options;
    const runtime::BackendInfo& info = core->backend->info();
    core->info.backend = info.name;
    core->info.device = info.device;
    core->info.hw = info.config;
    core->info.config = info.config && info.config->name ? info.config->name : "";
    core->info.memory_bytes = info.memory_bytes;
    return std::make_unique<Runtime>(std::move(core));
}

const DeviceInfo& Runtime::device() const {
    return core_->info;
}

Result<DeviceBuffer> Runtime::allocate(uint64_t bytes, uint64_t alignment) {
    runtime::BufferRequest request;
    request.size = bytes;
    request.alignment = alignment;
    Result<std::unique_ptr<runtime::Buffer>> buffer = core_->backend->create_buffer(request);
    if (!buffer) return buffer.status();
    return DeviceBuffer(
        std::make_shared<DeviceBuffer::Impl>(DeviceBuffer::Impl{core_, std::move(buffer).value()}));
}

Result<DeviceBuffer> Runtime::import_fd(int dmabuf_fd) {
    Result<std::unique_ptr<runtime::Buffer>> buffer = core_->backend->import_dmabuf(dmabuf_fd);
    if (!buffer) return buffer.status();
    return DeviceBuffer(
        std::make_shared<DeviceBuffer::Impl>(DeviceBuffer::Impl{core_, std::move(buffer).value()}));
}

Result<DeviceBuffer> Runtime::import_host(void* host, uint64_t bytes) {
    Result<std::unique_ptr<runtime::Buffer>> buffer =
        core_->backend->import_host_memory(host, bytes);
    if (!buffer) return buffer.status();
    return DeviceBuffer(
        std::make_shared<DeviceBuffer::Impl>(DeviceBuffer::Impl{core_, std::move(buffer).value()}));
}

// ---- Network ---------------------------------------------------------------------------------

struct Network::Impl {
    std::shared_ptr<Runtime::Core> core;
    Loadable loadable;
    std::vector<TensorInfo> inputs, outputs;
    std::vector<TaskInfo> tasks;
    std::vector<uint32_t> dla_versions;  // NVDLA_DLA_VERSION of each task (DLA tasks)
    uint64_t context_bytes = 0;
    bool has_cpu_tasks = false;

    uint64_t alignment_of(const runtime::MemoryEntry& m) const {
        return std::max<uint64_t>(m.alignment, kMinimumAlignment);
    }
};

namespace {

TensorInfo tensor_info(const Loadable& l, uint16_t memory_id, uint32_t index) {
    const runtime::MemoryEntry& m = l.memories[memory_id];
    const runtime::TensorDescEntry& d = l.tensor_descs[m.tensor_desc_id];
    TensorInfo t;
    t.name = d.name;
    t.index = index;
    t.dims = {static_cast<uint32_t>(d.n), static_cast<uint32_t>(d.c), static_cast<uint32_t>(d.h),
              static_cast<uint32_t>(d.w)};
    t.layout =
        d.data_format <= 3 ? static_cast<TensorLayout>(d.data_format) : TensorLayout::Unknown;
    t.data_type =
        d.data_type <= 4 ? static_cast<TensorDataType>(d.data_type) : TensorDataType::Unknown;
    t.category = d.data_category <= 4 ? static_cast<TensorCategory>(d.data_category)
                                      : TensorCategory::Feature;
    t.pixel_format = d.pixel_format;
    t.pixel_mapping = d.pixel_mapping;
    t.size_bytes = d.size ? d.size : m.size;
    t.strides = d.strides;
    return t;
}

// More than a CPU task's descriptors can take: 65 535 operations of at most 24 bytes plus
// their buffer pairs.
constexpr uint64_t kMaxCpuTaskDescriptorBytes = uint64_t(16) << 20;

// The scale factors a CPU task's descriptors give for the tensors it reads and writes.
void apply_cpu_task_quantization(Network::Impl& net) {
    const Loadable& l = net.loadable;
    for (const runtime::TaskEntry& task : l.tasks) {
        if (task.interface != runtime::TaskInterface::Emu1) continue;
        // A host image of the task's descriptor memories (their SET contents).
        std::vector<std::vector<std::byte>> images(task.addresses.size());
        std::vector<runtime::CpuTaskAddress> addresses(task.addresses.size());
        for (size_t i = 0; i < task.addresses.size(); ++i) {
            const runtime::AddressEntry& a = l.addresses[task.addresses[i]];
            const runtime::MemoryEntry& m = l.memories[a.mem_id];
            if (m.contents.empty()) continue;
            // Only the bytes the descriptors can occupy: a memory may be declared far larger
            // than its contents (a malformed loadable asked for 1 TB here).
            uint64_t used = a.offset + a.size;
            for (const runtime::MemoryContent& c : m.contents)
                used = std::max<uint64_t>(used, c.offset + l.blobs[c.blob].data.size());
            used = std::min({used, m.size, a.offset + kMaxCpuTaskDescriptorBytes});
            if (used <= a.offset) continue;
            images[i].assign(used, std::byte{0});
            for (const runtime::MemoryContent& c : m.contents) {
                const auto& data = l.blobs[c.blob].data;
                if (c.offset < used && !data.empty())
                    std::memcpy(images[i].data() + c.offset, data.data(),
                                std::min<uint64_t>(data.size(), used - c.offset));
            }
            addresses[i] = {images[i].data() + a.offset, used - a.offset, a.size};
        }
        Result<runtime::CpuTaskInfo> info = runtime::inspect_cpu_task(addresses);
        if (!info) continue;  // reported when the task runs
        for (const runtime::CpuTaskOperationInfo& op : info->operations) {
            if (!op.int8) continue;
            auto mark = [&](int16_t address, float scale, std::vector<TensorInfo>& tensors,
                            const std::vector<uint16_t>& memories) {
                if (address < 0 || static_cast<size_t>(address) >= task.addresses.size()) return;
                const uint16_t mem =
                    l.addresses[task.addresses[static_cast<size_t>(address)]].mem_id;
                for (size_t k = 0; k < memories.size(); ++k)
                    if (memories[k] == mem) tensors[k].quantization = {scale, 0, true};
            };
            mark(op.source_address, op.input_scale, net.inputs, l.input_memories);
            mark(op.destination_address, op.output_scale, net.outputs, l.output_memories);
        }
    }
}

}  // namespace

const std::vector<TensorInfo>& Network::inputs() const {
    return impl_->inputs;
}
const std::vector<TensorInfo>& Network::outputs() const {
    return impl_->outputs;
}
const std::vector<TaskInfo>& Network::tasks() const {
    return impl_->tasks;
}
uint64_t Network::context_bytes() const {
    return impl_->context_bytes;
}

Result<std::shared_ptr<Network>> Runtime::load(std::span<const std::byte> bytes) {
    Result<Loadable> parsed = runtime::parse_loadable(bytes);
    if (!parsed) return parsed.status();
    auto net = std::make_shared<Network::Impl>();
    net->core = core_;
    net->loadable = std::move(parsed).value();
    const Loadable& l = net->loadable;
    for (size_t i = 0; i < l.tasks.size(); ++i) {
        const runtime::TaskEntry& task = l.tasks[i];
        const auto id = static_cast<uint32_t>(i);
        TaskInfo info{id, task.interface == runtime::TaskInterface::Dla1,
                      runtime::to_string(task.version)};
        uint32_t version = 0;
        if (info.hardware) {
            if (task.version.empty())
                return error("loadable: task_list entry ", i,
                             ": the blob of its network descriptor carries no "
                             "interface version");
            version =
                NVDLA_DLA_VERSION(task.version.major, task.version.minor, task.version.sub_minor);
            if (version < NVDLA_DLA_VERSION_OLDEST || version > NVDLA_DLA_VERSION_NEWEST)
                return error("loadable: task_list entry ", i,
                             ": DLA descriptors of interface version ", info.version,
                             " are not supported (0.10.x to 0.12.x are)");
        } else {
            net->has_cpu_tasks = true;
        }
        net->tasks.push_back(info);
        net->dla_versions.push_back(version);
    }
    for (size_t i = 0; i < l.input_memories.size(); ++i)
        net->inputs.push_back(tensor_info(l, l.input_memories[i], static_cast<uint32_t>(i)));
    for (size_t i = 0; i < l.output_memories.size(); ++i)
        net->outputs.push_back(tensor_info(l, l.output_memories[i], static_cast<uint32_t>(i)));
    for (const runtime::MemoryEntry& m : l.memories)
        if (m.bindable() || (m.flags & runtime::kMemoryAlloc))
            net->context_bytes +=
                (m.size + kMinimumAlignment - 1) / kMinimumAlignment * kMinimumAlignment;
    apply_cpu_task_quantization(*net);
    return std::make_shared<Network>(std::move(net));
}

Result<std::shared_ptr<Network>> Runtime::load_file(const std::string& path) {
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    if (!file) return error(path, ": cannot open the file (", std::strerror(errno), ")");
    const std::streamoff size = file.tellg();
    if (size <= 0) return error(path, ": the file is empty");
    if (static_cast<uint64_t>(size) > runtime::kMaxLoadableBytes)
        return error(path, ": the file is larger than the 2 GiB a loadable can be");
    std::vector<std::byte> bytes(static_cast<size_t>(size));
    file.seekg(0);
    if (!file.read(reinterpret_cast<char*>(bytes.data()), size))
        return error(path, ": cannot read the file");
    Result<std::shared_ptr<Network>> net = load(bytes);
    if (!net) return prefixed(path, net.status());
    return net;
}

// ---- Jobs ------------------------------------------------------------------------------------

struct Job::State {
    std::shared_ptr<Runtime::Core> core;
    Clock::time_point submitted = Clock::now();
    std::mutex mutex;
    std::condition_variable changed;
    bool finished = false;
    Status result;
    RunTiming timing;

    // Hardware-only runs: the backend's jobs, waited for in order.
    struct BackendJob {
        uint32_t task;
        runtime::JobId id;
    };
    std::vector<BackendJob> backend_jobs;
    size_t waited = 0;
    Status first_failure;  // of the backend jobs waited for so far

    // Runs with CPU tasks: a thread that does every step.
    std::thread runner;

    ~State() {
        if (runner.joinable()) runner.join();
    }

    void record(uint32_t task, const std::string& name, const runtime::JobProfile& p) {
        if (p.finished > p.started && p.started != Clock::time_point{})
            timing.tasks.push_back({name, task, p.finished - p.started});
        for (const runtime::OperationProfile& op : p.operations)
            timing.operations.push_back({op.unit, task, op.duration});
    }

    // Hardware-only runs. The mutex is held.
    Status wait_backend(Clock::time_point deadline) {
        while (waited < backend_jobs.size()) {
            const BackendJob& job = backend_jobs[waited];
            const Clock::time_point now = Clock::now();
            const auto left = deadline > now ? deadline - now : Clock::duration::zero();
            runtime::JobProfile profile;
            Status s = core->backend->wait_with_profile(job.id, left, &profile);
            if (runtime::timed_out(s)) return s;
            ++waited;
            record(job.task, "DLA task " + std::to_string(job.task), profile);
            if (!s && first_failure)
                first_failure = prefixed("DLA task " + std::to_string(job.task), s);
        }
        finish(first_failure);
        return result;
    }

    void finish(Status s) {
        timing.total = Clock::now() - submitted;
        result = std::move(s);
        finished = true;
        changed.notify_all();
    }
};

Status Job::wait(std::chrono::nanoseconds timeout) const {
    if (!state_) return error("the job is empty (it was never submitted)");
    State& s = *state_;
    const Clock::time_point now = Clock::now();
    const Clock::time_point deadline =
        timeout >= Clock::time_point::max() - now ? Clock::time_point::max() : now + timeout;
    std::unique_lock lock(s.mutex);
    if (s.finished) return s.result;
    if (!s.runner.joinable()) return s.wait_backend(deadline);
    if (!s.changed.wait_until(lock, deadline, [&s] { return s.finished; }))
        return error(runtime::kTimedOut, ": the network has not finished");
    return s.result;
}

bool Job::done() const {
    // A zero-timeout wait: it also collects hardware jobs the device has finished.
    return state_ && !runtime::timed_out(wait(std::chrono::nanoseconds::zero()));
}

const RunTiming& Job::timing() const {
    static const RunTiming none;
    return state_ ? state_->timing : none;
}

// ---- Context ---------------------------------------------------------------------------------

struct Context::Impl {
    std::shared_ptr<Network::Impl> net;
    struct Slot {
        std::unique_ptr<runtime::Buffer> owned;
        std::shared_ptr<DeviceBuffer::Impl> bound;
        runtime::Buffer* buffer = nullptr;
        bool sealed = false;  // only the device and this context write it (Buffer::seal)
    };
    std::vector<Slot> memories;
    std::vector<TensorInfo> inputs, outputs;  // this context's view (strides may change)
    std::shared_ptr<Job::State> active;

    const Loadable& loadable() const { return net->loadable; }
    Backend& backend() const { return *net->core->backend; }

    Status busy() const {
        if (active) {
            std::lock_guard lock(active->mutex);
            if (!active->finished)
                return error("the context's previous job is still running: wait for it first");
        }
        return Status();
    }

    Status allocate() {
        const Loadable& l = loadable();
        memories.resize(l.memories.size());
        const std::vector<bool> sealable = runtime::sealable_memories(l);
        for (size_t i = 0; i < l.memories.size(); ++i) {
            const runtime::MemoryEntry& m = l.memories[i];
            if (!m.bindable() && !(m.flags & runtime::kMemoryAlloc)) continue;
            runtime::BufferRequest request;
            request.size = m.size;
            request.alignment = net->alignment_of(m);
            request.domain = m.domain == runtime::LoadableDomain::Sram
                                 ? runtime::MemoryDomain::Sram
                                 : runtime::MemoryDomain::System;
            Result<std::unique_ptr<runtime::Buffer>> buffer = backend().create_buffer(request);
            if (!buffer)
                return error("memory_list entry ", i, " (", m.size, " bytes): ", buffer.message());
            memories[i].owned = std::move(buffer).value();
            memories[i].buffer = memories[i].owned.get();
            if (Status s = fill(i); !s) return s;
            memories[i].sealed = sealable[i];
            if (sealable[i]) memories[i].owned->seal();
        }
        return Status();
    }

    // Copies a memory's SET contents into its buffer.
    Status fill(size_t i) {
        const runtime::MemoryEntry& m = loadable().memories[i];
        if (!(m.flags & runtime::kMemorySet) || m.contents.empty()) return Status();
        std::byte* host = memories[i].buffer->data();
        if (!host)
            return error("memory_list entry ", i,
                         ": its contents cannot be written (the buffer is not mapped)");
        for (const runtime::MemoryContent& c : m.contents) {
            const auto& data = loadable().blobs[c.blob].data;
            if (!data.empty()) std::memcpy(host + c.offset, data.data(), data.size());
        }
        return Status();
    }

    Result<size_t> memory_of(bool input, uint32_t index) const {
        const auto& ids = input ? loadable().input_memories : loadable().output_memories;
        if (index >= ids.size())
            return error(input ? "input " : "output ", index, " does not exist: the network has ",
                         plural(ids.size(), input ? "input" : "output"));
        return static_cast<size_t>(ids[index]);
    }

    std::span<std::byte> tensor_bytes(bool input, uint32_t index) {
        Result<size_t> mem = memory_of(input, index);
        if (!mem) return {};
        const Slot& slot = memories[*mem];
        const TensorInfo& t = input ? inputs[index] : outputs[index];
        const runtime::TensorDescEntry& d =
            loadable().tensor_descs[loadable().memories[*mem].tensor_desc_id];
        if (!slot.buffer || !slot.buffer->data() || d.offset >= slot.buffer->size()) return {};
        const uint64_t size = std::min(t.size_bytes, slot.buffer->size() - d.offset);
        return {slot.buffer->data() + d.offset, static_cast<size_t>(size)};
    }

    Status bind(bool input, uint32_t index, std::shared_ptr<DeviceBuffer::Impl> buffer) {
        const std::string what = std::string(input ? "input " : "output ") + std::to_string(index);
        Result<size_t> mem = memory_of(input, index);
        if (!mem) return mem.status();
        if (!buffer) return error("bind ", what, ": the buffer is empty");
        if (buffer->core != net->core)
            return error("bind ", what, ": the buffer belongs to another runtime");
        if (Status s = busy(); !s) return prefixed("bind " + what, s);
        const uint64_t needed = loadable().memories[*mem].size;
        if (buffer->buffer->size() < needed)
            return error("bind ", what, ": the buffer holds ", buffer->buffer->size(),
                         " bytes, less than the ", needed, " the tensor's memory needs");
        Slot& slot = memories[*mem];
        slot.owned.reset();
        slot.sealed = false;
        slot.buffer = buffer->buffer.get();
        slot.bound = std::move(buffer);
        return Status();
    }

    Status bind_imported(bool input, uint32_t index, Result<std::unique_ptr<runtime::Buffer>> b) {
        const std::string what = std::string(input ? "input " : "output ") + std::to_string(index);
        if (!b) return prefixed("bind " + what, b.status());
        return bind(input, index,
                    std::make_shared<DeviceBuffer::Impl>(
                        DeviceBuffer::Impl{net->core, std::move(b).value()}));
    }

    Status set_strides(bool input, uint32_t index, uint32_t line, uint32_t surface) {
        const std::string what = std::string(input ? "input " : "output ") + std::to_string(index);
        Result<size_t> mem = memory_of(input, index);
        if (!mem) return mem.status();
        if (Status s = busy(); !s) return prefixed(what, s);
        TensorInfo& t = input ? inputs[index] : outputs[index];
        if (t.strides[1] == line && t.strides[2] == surface) return Status();
        const Loadable& l = loadable();
        unsigned patched = 0;
        for (size_t a = 0; a < l.addresses.size(); ++a) {
            if (l.addresses[a].mem_id != *mem) continue;
            for (const runtime::RelocEntry& r : l.relocs) {
                if (r.address_id != a || (r.interface != 1 && r.interface != 2)) continue;
                if (r.sub_interface == runtime::kSubInterfaceDependencies)
                    return error(what,
                                 ": a relocation patches the dependency graph "
                                 "(memory ",
                                 r.write_id, "), which is not supported");
                if (r.sub_interface != runtime::kSubInterfaceOperations &&
                    r.sub_interface != runtime::kSubInterfaceSurfaces)
                    continue;
                runtime::Buffer* target = memories[r.write_id].buffer;
                if (!target || !target->data()) continue;
                if (target->size() < 4 || r.offset > target->size() - 4)
                    return error(what, ": a relocation patches byte offset ", r.offset,
                                 " of memory ", r.write_id, ", past its ", target->size(),
                                 "-byte buffer");
                const uint32_t value = r.type == runtime::kRelocLineStride ? line : surface;
                std::memcpy(target->data() + r.offset, &value, 4);
                if (memories[r.write_id].sealed) target->seal();  // a new number: changed
                ++patched;
            }
        }
        if (patched == 0)
            return error(what,
                         ": the loadable has no relocation for its strides, so "
                         "they cannot change");
        t.strides[1] = line;
        t.strides[2] = surface;
        return Status();
    }

    // The backend's view of DLA task `t`.
    Result<runtime::Task> dla_task(uint32_t t) const {
        const Loadable& l = loadable();
        runtime::Task task;
        task.dla_version = net->dla_versions[t];
        task.addresses.reserve(l.tasks[t].addresses.size());
        for (size_t k = 0; k < l.tasks[t].addresses.size(); ++k) {
            const runtime::AddressEntry& a = l.addresses[l.tasks[t].addresses[k]];
            runtime::Buffer* buffer = memories[a.mem_id].buffer;
            if (!buffer)
                return error("DLA task ", t, ": address-list entry ", k, " points to memory ",
                             a.mem_id, ", which has no buffer (it is neither ALLOC nor bound)");
            task.addresses.push_back({buffer, a.offset});
        }
        return task;
    }

    Result<std::vector<runtime::CpuTaskAddress>> cpu_task_addresses(uint32_t t) const {
        const Loadable& l = loadable();
        std::vector<runtime::CpuTaskAddress> out;
        for (size_t k = 0; k < l.tasks[t].addresses.size(); ++k) {
            const runtime::AddressEntry& a = l.addresses[l.tasks[t].addresses[k]];
            runtime::Buffer* buffer = memories[a.mem_id].buffer;
            if (!buffer)
                return error("EMU task ", t, ": address-list entry ", k, " points to memory ",
                             a.mem_id, ", which has no buffer");
            runtime::CpuTaskAddress e;
            if (buffer->domain() == runtime::MemoryDomain::System && buffer->data() &&
                a.offset <= buffer->size()) {
                e.data = buffer->data() + a.offset;
                e.size = buffer->size() - a.offset;
            }
            e.declared = a.size;
            out.push_back(e);
        }
        return out;
    }

    // A sealed memory that CPU task `t` wrote into gets a new number: its contents changed.
    void reseal_written(uint32_t t, const std::vector<bool>& written) {
        const Loadable& l = loadable();
        for (size_t k = 0; k < written.size() && k < l.tasks[t].addresses.size(); ++k) {
            if (!written[k]) continue;
            Slot& m = memories[l.addresses[l.tasks[t].addresses[k]].mem_id];
            if (m.sealed) m.owned->seal();
        }
    }

    // The tasks in execution order: submit-list entries in order, their tasks in order.
    std::vector<uint32_t> schedule() const {
        std::vector<uint32_t> order;
        for (const runtime::SubmitEntry& s : loadable().submits)
            for (uint16_t t : s.tasks) order.push_back(t);
        return order;
    }

    // One task on the calling thread (runs with CPU tasks).
    Status run_task(Job::State& state, uint32_t t) {
        const runtime::TaskEntry& task = loadable().tasks[t];
        if (task.interface == runtime::TaskInterface::Dla1) {
            Result<runtime::Task> dla = dla_task(t);
            if (!dla) return dla.status();
            Result<runtime::JobId> id = backend().submit_for_wait(*dla);
            if (!id) return prefixed(task_name(task, t), id.status());
            runtime::JobProfile profile;
            Status s = backend().wait_with_profile(*id, std::chrono::nanoseconds::max(), &profile);
            std::lock_guard lock(state.mutex);
            state.record(t, task_name(task, t), profile);
            return prefixed(task_name(task, t), s);
        }
        Result<std::vector<runtime::CpuTaskAddress>> addresses = cpu_task_addresses(t);
        if (!addresses) return addresses.status();
        std::vector<runtime::CpuTaskOperationTime> times;
        const Clock::time_point start = Clock::now();
        std::vector<bool> written;
        Status s = runtime::run_cpu_task(*addresses, &times, &written);
        reseal_written(t, written);
        std::lock_guard lock(state.mutex);
        state.timing.tasks.push_back({task_name(task, t), t, Clock::now() - start});
        for (const runtime::CpuTaskOperationTime& op : times)
            state.timing.operations.push_back({"EMU " + op.name, t, op.duration});
        return prefixed(task_name(task, t), s);
    }

    // waited: the caller waits for the job at once (Context::run), so the backend may leave
    // its tasks to that wait.
    Result<Job> submit(bool waited) {
        if (Status s = busy(); !s) return s;
        auto state = std::make_shared<Job::State>();
        state->core = net->core;
        const std::vector<uint32_t> order = schedule();
        if (!net->has_cpu_tasks) {
            // Hardware only: everything is queued now, the backend keeps the order.
            for (uint32_t t : order) {
                Result<runtime::Task> task = dla_task(t);
                Status submitted;
                if (task) {
                    Result<runtime::JobId> id =
                        waited ? backend().submit_for_wait(*task) : backend().submit(*task);
                    if (id)
                        state->backend_jobs.push_back({t, *id});
                    else
                        submitted = prefixed("DLA task " + std::to_string(t), id.status());
                } else {
                    submitted = task.status();
                }
                if (!submitted) {
                    // What is already queued runs anyway: wait for it before reporting.
                    std::lock_guard lock(state->mutex);
                    (void)state->wait_backend(Clock::time_point::max());
                    return submitted;
                }
            }
            active = state;
            return Job(state);
        }
        Job::State* raw = state.get();
        auto run_all = [this, raw, order] {
            Status result;
            for (uint32_t t : order)
                if (!(result = run_task(*raw, t))) break;
            std::lock_guard lock(raw->mutex);
            raw->finish(result);
        };
        active = state;
        if (waited)
            run_all();  // the caller would only wait for a thread doing this
        else
            state->runner = std::thread(std::move(run_all));
        return Job(state);
    }

    void drain() {
        if (!active) return;
        (void)Job(active).wait();
        if (active->runner.joinable()) active->runner.join();
    }
};

Context::Context(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::~Context() {
    impl_->drain();
}

std::span<std::byte> Context::input(uint32_t index) {
    return impl_->tensor_bytes(true, index);
}
std::span<std::byte> Context::output(uint32_t index) {
    return impl_->tensor_bytes(false, index);
}
Status Context::bind_input(uint32_t index, const DeviceBuffer& buffer) {
    return impl_->bind(true, index, buffer.impl());
}
Status Context::bind_output(uint32_t index, const DeviceBuffer& buffer) {
    return impl_->bind(false, index, buffer.impl());
}
Status Context::bind_input(uint32_t index, void* host, uint64_t bytes) {
    return impl_->bind_imported(true, index, impl_->backend().import_host_memory(host, bytes));
}
Status Context::bind_output(uint32_t index, void* host, uint64_t bytes) {
    return impl_->bind_imported(false, index, impl_->backend().import_host_memory(host, bytes));
}
Status Context::bind_input_fd(uint32_t index, int fd) {
    return impl_->bind_imported(true, index, impl_->backend().import_dmabuf(fd));
}
Status Context::bind_output_fd(uint32_t index, int fd) {
    return impl_->bind_imported(false, index, impl_->backend().import_dmabuf(fd));
}
Status Context::set_input_strides(uint32_t index, uint32_t line, uint32_t surface) {
    return impl_->set_strides(true, index, line, surface);
}
Status Context::set_output_strides(uint32_t index, uint32_t line, uint32_t surface) {
    return impl_->set_strides(false, index, line, surface);
}

Status Context::load_image(uint32_t index, const std::string& path,
                           const ImageInputOptions& options) {
    Result<size_t> mem = impl_->memory_of(true, index);
    if (!mem) return mem.status();
    if (Status s = impl_->busy(); !s) return s;
    const TensorInfo& t = impl_->inputs[index];
    const std::string what = "input " + std::to_string(index) + " '" + t.name + "'";
    const HwConfig* cfg = impl_->net->core->info.hw;
    if (!cfg) return error(what, ": the device's configuration is unknown");
    Result<runtime::InputFormat> format = runtime::input_format_from_pixel_format(t.pixel_format);
    if (!format) return prefixed(what, format.status());
    runtime::InputTensorLayout layout;
    layout.format = *format;
    if (t.data_type == TensorDataType::Int8)
        layout.precision = Precision::Int8;
    else if (t.data_type == TensorDataType::Float16)
        layout.precision = Precision::Fp16;
    else
        return error(what, " holds ", to_string(t.data_type),
                     " data: images go into int8 or fp16 tensors");
    layout.dims = t.dims;
    layout.line_stride = t.strides[1];
    layout.surface_stride = t.strides[2];
    layout.size = t.size_bytes;
    Result<runtime::Image> image = runtime::read_image(path);
    if (!image) return image.status();
    runtime::ImageConversion conversion;
    conversion.mean = options.mean;
    conversion.normalize = options.normalize;
    return prefixed(what, runtime::convert_image(*image, *cfg, layout, conversion,
                                                 impl_->tensor_bytes(true, index)));
}

Status Context::validate() {
    for (uint32_t t : impl_->schedule()) {
        if (impl_->loadable().tasks[t].interface != runtime::TaskInterface::Dla1) continue;
        Result<runtime::Task> task = impl_->dla_task(t);
        if (!task) return task.status();
        if (Status s = impl_->backend().validate(*task); !s)
            return prefixed("DLA task " + std::to_string(t), s);
    }
    return Status();
}

Result<Job> Context::submit() {
    return impl_->submit(false);
}

Status Context::run(std::chrono::nanoseconds timeout) {
    Result<Job> job = impl_->submit(true);
    if (!job) return job.status();
    return job.value().wait(timeout);
}

const RunTiming& Context::last_timing() const {
    return Job(impl_->active).timing();
}

Result<std::unique_ptr<Context>> Network::create_context() const {
    auto impl = std::make_unique<Context::Impl>();
    impl->net = impl_;
    impl->inputs = impl_->inputs;
    impl->outputs = impl_->outputs;
    if (Status s = impl->allocate(); !s) return s;
    return std::make_unique<Context>(std::move(impl));
}

}  // namespace nvdla
