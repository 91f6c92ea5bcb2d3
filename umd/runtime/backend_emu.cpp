#include "backend_emu.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <typeinfo>
#include <unordered_map>

#include "nvdla/hw/dla_engine.h"
#include "nvdla/hw/register_map.hpp"
#include "runtime/dla_validator.hpp"

namespace nvdla::runtime {

namespace {

using Clock = std::chrono::steady_clock;

// Device addresses of the emulated memories. nv_small-family configurations address 32 bits,
// so both fit below 4 GiB; the secondary (SRAM) port has its own window.
constexpr uint64_t kPrimaryBase = 0x40000000ull;
constexpr uint64_t kPrimaryLimit = 0xe0000000ull;  // at most 2.5 GiB of emulated DRAM
constexpr uint64_t kSecondaryBase = 0xf0000000ull;
constexpr uint64_t kSecondaryLimit = 0x100000000ull;
constexpr uint64_t kPageBytes = 4096;

uint64_t round_up(uint64_t v, uint64_t a) {
    return (v + a - 1) / a * a;
}

std::string hex(uint64_t v) {
    std::ostringstream out;
    out << "0x" << std::hex << v;
    return out.str();
}

std::string errno_text(int err) {
    return std::strerror(err);
}

emu::MemoryPort port_of(MemoryDomain d) {
    return d == MemoryDomain::Sram ? emu::MemoryPort::Secondary : emu::MemoryPort::Primary;
}

std::string_view port_name(emu::MemoryPort p) {
    return p == emu::MemoryPort::Primary ? "system memory" : "SRAM";
}

// The emulated device address space: address ranges of each port handed out first-fit with
// alignment, each mapped to the host memory behind it.
class AddressSpace final : public emu::Memory {
  public:
    struct Window {
        uint64_t base = 0, size = 0;
    };

    AddressSpace(Window primary, Window secondary) {
        ports_[0].window = primary;
        ports_[1].window = secondary;
        for (Port& p : ports_)
            if (p.window.size) p.free.emplace(p.window.base, p.window.size);
    }

    Result<uint64_t> allocate(emu::MemoryPort port, uint64_t size, uint64_t alignment,
                              std::byte* host) {
        std::lock_guard lock(mutex_);
        Port& p = ports_[index(port)];
        if (p.window.size == 0) return error("the configuration has no ", port_name(port));
        const uint64_t span = round_up(std::max<uint64_t>(size, 1), 64);
        for (auto it = p.free.begin(); it != p.free.end(); ++it) {
            const uint64_t start = round_up(it->first, alignment);
            const uint64_t end = it->first + it->second;
            if (start > end || end - start < span) continue;
            const uint64_t hole_start = it->first;
            p.free.erase(it);
            if (start > hole_start) p.free.emplace(hole_start, start - hole_start);
            if (end > start + span) p.free.emplace(start + span, end - start - span);
            p.used.try_emplace(start, span, size, host);
            p.in_use += span;
            renew_generation();
            return start;
        }
        return error("out of emulated ", port_name(port), ": no ", size, "-byte range aligned to ",
                     alignment, " is free (", p.in_use, " of ", p.window.size, " bytes in use)");
    }

    void release(emu::MemoryPort port, uint64_t address) {
        std::lock_guard lock(mutex_);
        Port& p = ports_[index(port)];
        auto it = p.used.find(address);
        if (it == p.used.end()) return;
        uint64_t start = address, span = it->second.span;
        p.in_use -= span;
        p.used.erase(it);
        renew_generation();
        // Merge with the free neighbours.
        auto next = p.free.lower_bound(start);
        if (next != p.free.end() && start + span == next->first) {
            span += next->second;
            next = p.free.erase(next);
        }
        if (next != p.free.begin()) {
            auto prev = std::prev(next);
            if (prev->first + prev->second == start) {
                start = prev->first;
                span += prev->second;
                p.free.erase(prev);
            }
        }
        p.free.emplace(start, span);
    }

    std::byte* translate(emu::MemoryPort port, uint64_t address, uint64_t size) override {
        return locate(port, address, size).host;
    }

    std::byte* translate_for_write(emu::MemoryPort port, uint64_t address, uint64_t size) override {
        const Located at = locate(port, address, size);
        if (at.seal && at.seal->load(std::memory_order_relaxed) != 0)
            at.seal->store(0, std::memory_order_release);
        return at.host;
    }

    uint64_t sealed_contents(emu::MemoryPort port, uint64_t address, uint64_t size) override {
        const Located at = locate(port, address, size);
        return at.seal ? at.seal->load(std::memory_order_acquire) : 0;
    }

    // From now on only DMA writes the buffer at `address`: its contents get a number of their
    // own, until the first write (or unseal()).
    void seal(emu::MemoryPort port, uint64_t address) {
        set_seal(port, address, next_generation());
    }
    void unseal(emu::MemoryPort port, uint64_t address) { set_seal(port, address, 0); }

    uint64_t in_use(emu::MemoryPort port) const {
        std::lock_guard lock(mutex_);
        return ports_[index(port)].in_use;
    }

  private:
    struct Mapping {
        Mapping(uint64_t span_bytes, uint64_t size_bytes, std::byte* host_bytes)
            : span(span_bytes), size(size_bytes), host(host_bytes) {}
        uint64_t span;  // bytes of address space taken
        uint64_t size;  // bytes backed by host memory
        std::byte* host;
        std::atomic<uint64_t> seal{0};  // sealed_contents(), 0 when not sealed
    };
    struct Port {
        Window window;
        std::map<uint64_t, uint64_t> free;  // start -> bytes
        std::map<uint64_t, Mapping> used;   // start -> mapping
        uint64_t in_use = 0;
    };
    struct LastMapping {
        uint64_t generation = 0;  // 0: none (generations start at 1)
        emu::MemoryPort port = emu::MemoryPort::Primary;
        uint64_t start = 0, size = 0;
        std::byte* host = nullptr;
        std::atomic<uint64_t>* seal = nullptr;
    };
    struct Located {
        std::byte* host = nullptr;  // nullptr: not backed
        std::atomic<uint64_t>* seal = nullptr;
    };

    // The device translates every DMA transfer (SDP a line at a time): each thread keeps the
    // mapping it found last and takes it again without the lock while no buffer was added or
    // released since (`generation_`, from a process-wide counter, so never the same for two
    // address spaces or two states of one).
    Located locate(emu::MemoryPort port, uint64_t address, uint64_t size) {
        thread_local LastMapping last;
        if (last.generation == generation_.load(std::memory_order_acquire) && last.port == port &&
            address >= last.start && address - last.start <= last.size &&
            size <= last.size - (address - last.start))
            return {last.host + (address - last.start), last.seal};
        std::lock_guard lock(mutex_);
        Port& p = ports_[index(port)];
        auto it = p.used.upper_bound(address);
        if (it == p.used.begin()) return {};
        --it;
        const uint64_t offset = address - it->first;
        if (offset > it->second.size || size > it->second.size - offset) return {};
        last = {generation_.load(std::memory_order_relaxed),
                port,
                it->first,
                it->second.size,
                it->second.host,
                &it->second.seal};
        return {it->second.host + offset, &it->second.seal};
    }
    static size_t index(emu::MemoryPort p) { return p == emu::MemoryPort::Primary ? 0 : 1; }
    static uint64_t next_generation() {
        static std::atomic<uint64_t> counter{0};
        return counter.fetch_add(1, std::memory_order_relaxed) + 1;
    }
    void set_seal(emu::MemoryPort port, uint64_t address, uint64_t number) {
        std::lock_guard lock(mutex_);
        Port& p = ports_[index(port)];
        if (auto it = p.used.find(address); it != p.used.end())
            it->second.seal.store(number, std::memory_order_release);
    }
    // With the mutex held, after the mappings changed.
    void renew_generation() { generation_.store(next_generation(), std::memory_order_release); }

    mutable std::mutex mutex_;
    Port ports_[2];
    std::atomic<uint64_t> generation_{next_generation()};
};

// Host memory behind a buffer, and how to give it back.
struct Backing {
    enum class Kind { Memfd, Heap, Caller, Mapped } kind = Kind::Heap;
    std::byte* host = nullptr;
    uint64_t mapped_bytes = 0;  // Memfd and Mapped
    int fd = -1;                // Memfd and Mapped (our own descriptor)

    void release() {
        switch (kind) {
            case Kind::Memfd:
            case Kind::Mapped:
                if (host) munmap(host, mapped_bytes);
                break;
            case Kind::Heap: std::free(host); break;
            case Kind::Caller: break;
        }
        if (fd >= 0) close(fd);
        host = nullptr;
        fd = -1;
    }
};

class EmuBuffer final : public Buffer {
  public:
    EmuBuffer(std::shared_ptr<AddressSpace> space, MemoryDomain domain, uint64_t address,
              uint64_t size, Backing backing)
        : space_(std::move(space)),
          domain_(domain),
          address_(address),
          size_(size),
          backing_(backing) {}
    ~EmuBuffer() override {
        space_->release(port_of(domain_), address_);
        backing_.release();
    }
    EmuBuffer(const EmuBuffer&) = delete;
    EmuBuffer& operator=(const EmuBuffer&) = delete;

    uint64_t size() const override { return size_; }
    uint64_t device_address() const override { return address_; }
    MemoryDomain domain() const override { return domain_; }
    std::byte* data() override { return backing_.host; }
    Result<int> export_dmabuf() override {
        space_->unseal(port_of(domain_), address_);
        if (backing_.fd < 0)
            return error(
                "emu backend: this buffer has no file descriptor to export (it wraps host memory)");
        const int fd = fcntl(backing_.fd, F_DUPFD_CLOEXEC, 0);
        if (fd < 0) return error("emu backend: dup failed: ", errno_text(errno));
        return fd;
    }
    void seal() override {
        if (backing_.kind == Backing::Kind::Heap || backing_.kind == Backing::Kind::Memfd)
            space_->seal(port_of(domain_), address_);
    }
    uint64_t sealed_contents() const {
        return space_->sealed_contents(port_of(domain_), address_, size_);
    }
    const AddressSpace* space() const { return space_.get(); }

  private:
    std::shared_ptr<AddressSpace> space_;
    MemoryDomain domain_;
    uint64_t address_, size_;
    Backing backing_;
};

std::string_view operation_unit(nvdla_unit unit) {
    switch (unit) {
        case NVDLA_UNIT_CDMA:
        case NVDLA_UNIT_CSC:
        case NVDLA_UNIT_CMAC_A:
        case NVDLA_UNIT_CMAC_B:
        case NVDLA_UNIT_CACC: return "CONV";
        case NVDLA_UNIT_SDP:
        case NVDLA_UNIT_SDP_RDMA: return "SDP";
        case NVDLA_UNIT_PDP:
        case NVDLA_UNIT_PDP_RDMA: return "PDP";
        case NVDLA_UNIT_CDP:
        case NVDLA_UNIT_CDP_RDMA: return "CDP";
        case NVDLA_UNIT_RBK: return "RUBIK";
        case NVDLA_UNIT_BDMA: return "BDMA";
        default: return "?";
    }
}

}  // namespace

void DmaWindow::add(emu::MemoryPort port, uint64_t start, uint64_t end) {
    if (end > start) ranges_.push_back({port, start, end});
}

void DmaWindow::seal() {
    std::sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) {
        return a.port != b.port ? a.port < b.port : a.start < b.start;
    });
    std::vector<Range> merged;
    for (const Range& r : ranges_) {
        if (!merged.empty() && merged.back().port == r.port && r.start <= merged.back().end)
            merged.back().end = std::max(merged.back().end, r.end);
        else
            merged.push_back(r);
    }
    ranges_ = std::move(merged);
}

bool DmaWindow::allows(emu::MemoryPort port, uint64_t address, uint64_t size) const {
    // The last range starting at or before address, on this port.
    auto it =
        std::upper_bound(ranges_.begin(), ranges_.end(), std::make_pair(port, address),
                         [](const std::pair<emu::MemoryPort, uint64_t>& key, const Range& r) {
                             return key.first != r.port ? key.first < r.port : key.second < r.start;
                         });
    if (it == ranges_.begin()) return false;
    --it;
    return it->port == port && address >= it->start && address < it->end &&
           size <= it->end - address;
}

// A validated task, ready to start. The jobs of a task whose descriptors did not change share
// one: the engine keeps its run-time state in it (the dependency counts, set again whenever it
// starts the task), and jobs run one at a time.
struct ValidatedTask {
    std::vector<uint64_t> storage;
    nvdla_dla_task* task = nullptr;
    DmaWindow window;
};

// A task validated before. The validator's verdict is a function of the configuration, the
// interface version, the address list and the bytes it read: a task with the same version and
// address list whose buffers hold the same bytes there gets the same checked copy.
struct ValidationRecord {
    uint32_t version = 0;
    std::vector<nvdla_dla_buffer> buffers;
    DlaReads reads;
    // (entry, sealed number) of every entry the validator read when all of them were sealed:
    // while they keep their numbers, the bytes are not compared. Empty: compare them.
    std::vector<std::pair<uint32_t, uint64_t>> sealed;
    std::shared_ptr<ValidatedTask> validated;

    bool same_list(uint32_t v, const std::vector<nvdla_dla_buffer>& list) const {
        return version == v && std::equal(buffers.begin(), buffers.end(), list.begin(), list.end(),
                                          [](const nvdla_dla_buffer& a, const nvdla_dla_buffer& b) {
                                              return a.address == b.address && a.size == b.size &&
                                                     a.flags == b.flags;
                                          });
    }
};

struct EmuJob {
    JobId id = 0;
    std::shared_ptr<ValidatedTask> validated;
    enum class Phase { Queued, Running, Stalled, Done } phase = Phase::Queued;
    Status result;
    JobProfile profile;
    Clock::time_point deadline{};
    uint64_t faults = 0;
    std::optional<emu::DmaAccess> first_fault;
    uint64_t programming_errors_before = 0;
    bool for_waiter = false;  // left to the wait that follows its submission (submit_for_wait)
};

struct EmuBackend::State {
    BackendInfo info;
    BackendOptions options;
    const HwConfig* cfg = nullptr;
    std::shared_ptr<AddressSpace> space;
    std::unique_ptr<emu::Device> device;
    const hw::RegisterMap* registers = nullptr;
    std::vector<uint64_t> engine_storage;
    nvdla_dla_engine* engine = nullptr;

    std::mutex mutex;
    std::condition_variable changed;         // for waiters and the executor role
    std::condition_variable worker_changed;  // for the worker: only when it has work
    std::deque<std::shared_ptr<EmuJob>> queue;
    std::shared_ptr<EmuJob> running;
    std::unordered_map<JobId, std::shared_ptr<EmuJob>> jobs;
    JobId next_id = 1;
    bool executing = false;  // someone holds the executor role (device and engine)
    int waiters = 0;         // threads in wait(): they run queued jobs themselves
    bool stopping = false;
    std::thread worker;
    std::atomic<uint64_t> total_faults{0};

    // Executor-only: the job the device is working for.
    EmuJob* current = nullptr;

    // ---- validation ----

    // The most recently used validations, first (a network's DLA tasks are validated once and
    // then compared with what they were validated from on every run).
    static constexpr size_t kValidationRecords = 8;
    std::mutex records_mutex;
    std::vector<std::shared_ptr<const ValidationRecord>> records;

    std::shared_ptr<ValidatedTask> recorded_validation(const Task& task,
                                                       const std::vector<nvdla_dla_buffer>& list) {
        std::shared_ptr<const ValidationRecord> record;
        {
            std::lock_guard lock(records_mutex);
            const auto it = std::find_if(records.begin(), records.end(), [&](const auto& r) {
                return r->same_list(task.dla_version, list);
            });
            if (it == records.end()) return nullptr;
            std::rotate(records.begin(), it, it + 1);
            record = records.front();
        }
        const bool unchanged =
            still_sealed(task, record->sealed) || same_bytes(task, record->reads);
        return unchanged ? record->validated : nullptr;
    }

    // The entries' buffers are EmuBuffers of this backend (check() made sure).
    static uint64_t sealed_number(const Task& task, uint32_t entry) {
        return static_cast<const EmuBuffer*>(task.addresses[entry].buffer)->sealed_contents();
    }
    static bool still_sealed(const Task& task,
                             const std::vector<std::pair<uint32_t, uint64_t>>& sealed) {
        if (sealed.empty()) return false;
        for (const auto& [entry, number] : sealed)
            if (entry >= task.addresses.size() || sealed_number(task, entry) != number)
                return false;
        return true;
    }
    // What still_sealed() checks for the entries `reads` covers, from their numbers taken
    // before the validator read them; empty when one was not sealed.
    static std::vector<std::pair<uint32_t, uint64_t>> sealed_reads(
        const std::vector<uint64_t>& numbers, const DlaReads& reads) {
        std::vector<std::pair<uint32_t, uint64_t>> sealed;
        for (const DlaReads::Range& r : reads.ranges) {
            if (r.index >= numbers.size() || numbers[r.index] == 0) return {};
            if (std::none_of(sealed.begin(), sealed.end(),
                             [&](const auto& s) { return s.first == r.index; }))
                sealed.emplace_back(r.index, numbers[r.index]);
        }
        return sealed;
    }

    void remember(std::shared_ptr<const ValidationRecord> record) {
        std::lock_guard lock(records_mutex);
        std::erase_if(
            records, [&](const auto& r) { return r->same_list(record->version, record->buffers); });
        if (records.size() >= kValidationRecords) records.pop_back();
        records.insert(records.begin(), std::move(record));
    }

    Result<std::shared_ptr<ValidatedTask>> check(const Task& task) {
        if (task.addresses.empty()) return error("rejected: its address list is empty");
        if (task.addresses.size() > NVDLA_DLA_MAX_ADDRESSES)
            return error("rejected: ", task.addresses.size(),
                         " address-list entries, more than the ", NVDLA_DLA_MAX_ADDRESSES,
                         " allowed");
        for (size_t i = 0; i < task.addresses.size(); ++i) {
            const Address& a = task.addresses[i];
            // (EmuBuffer is final: a type comparison, cheaper than a dynamic_cast per entry.)
            const auto* buffer = a.buffer && typeid(*a.buffer) == typeid(EmuBuffer)
                                     ? static_cast<const EmuBuffer*>(a.buffer)
                                     : nullptr;
            if (!buffer || buffer->space() != space.get())
                return error("rejected: address-list entry ", i,
                             (a.buffer ? " names a buffer of another backend" : " has no buffer"));
            if (a.offset > buffer->size())
                return error("rejected: address-list entry ", i, ": offset ", a.offset,
                             " is past the end of its ", buffer->size(), "-byte buffer");
        }
        if (std::shared_ptr<ValidatedTask> known = recorded_validation(task, dla_buffers(task)))
            return known;
        auto record = std::make_shared<ValidationRecord>();
        std::vector<uint64_t> numbers(task.addresses.size());
        for (size_t i = 0; i < numbers.size(); ++i)
            numbers[i] = sealed_number(task, static_cast<uint32_t>(i));
        DlaValidation v = validate_task(*cfg, task, &record->reads);
        if (!v.accepted())
            return error("rejected by the validator (", nvdla_dla_code_name(v.error.code),
                         "): ", v.error.message);
        auto out = std::make_shared<ValidatedTask>();
        for (size_t i = 0; i < v.buffers.size(); ++i)
            out->window.add(port_of(task.addresses[i].buffer->domain()), v.buffers[i].address,
                            v.buffers[i].address + v.buffers[i].size);
        out->storage = std::move(v.storage);
        out->task = v.task;
        out->window.seal();
        record->version = task.dla_version;
        record->sealed = sealed_reads(numbers, record->reads);
        record->buffers = std::move(v.buffers);
        record->validated = out;
        remember(std::move(record));
        return out;
    }

    // ---- the device's view ----

    bool allowed(const emu::DmaAccess& a) {
        EmuJob* job = current;
        if (job) {
            if (job->validated->window.allows(a.port, a.address, a.size)) return true;
            if (job->faults++ == 0) job->first_fault = a;
        }
        total_faults.fetch_add(1, std::memory_order_relaxed);
        return false;
    }

    static uint32_t reg_read(void* priv, uint32_t offset) {
        return static_cast<State*>(priv)->device->read_register(offset);
    }

    // The registers whose writes start operations in the device: each unit's D_OP_ENABLE and
    // BDMA's (which also launches from its other registers). Only those are timed when
    // profiling: a clock read around every register write cost about 1% of a network's time.
    // (By unit, found through the map's window table: a search per write cost more than the
    // write itself.)
    std::array<uint32_t, NVDLA_UNIT_COUNT> op_enable_address{};  // kNoOpEnable: none
    static constexpr uint32_t kNoOpEnable = 0xffffffffu;
    bool may_start_operation(std::optional<nvdla_unit> unit, uint32_t offset) const {
        return unit && (*unit == NVDLA_UNIT_BDMA || offset == op_enable_address[*unit]);
    }
    const emu::DeviceStats* device_stats = nullptr;  // the device's, read after every write

    static void reg_write(void* priv, uint32_t offset, uint32_t value) {
        auto* self = static_cast<State*>(priv);
        if (!self->options.profiling || !self->current) {
            self->device->write_register(offset, value);
            return;
        }
        const uint64_t before = self->device_stats->operations;
        const auto unit = self->registers->unit_at(offset);
        const bool timed = self->may_start_operation(unit, offset);
        const Clock::time_point start = timed ? Clock::now() : Clock::time_point{};
        self->device->write_register(offset, value);
        const uint64_t after = self->device_stats->operations;
        if (after == before) return;
        // (An operation started by another write would be listed with no duration.)
        self->current->profile.operations.push_back(
            {std::string(unit ? operation_unit(*unit) : "?"), static_cast<uint32_t>(after - before),
             timed ? Clock::now() - start : Clock::duration{0}});
    }

    // ---- execution (executor role held, mutex not held) ----

    std::string fault_sentence(const EmuJob& job) const {
        std::ostringstream out;
        out << "the device made " << job.faults << " DMA access" << (job.faults == 1 ? "" : "es")
            << " outside the task's buffers";
        if (job.first_fault) {
            const emu::DmaAccess& a = *job.first_fault;
            out << "; the first: " << hw::RegisterMap::unit_name(a.unit) << " "
                << (a.write ? "wrote " : "read ") << a.size << " bytes at " << hex(a.address)
                << " in " << port_name(a.port);
        }
        return out.str();
    }

    void finish(const std::shared_ptr<EmuJob>& job, Status result) {
        const emu::DeviceStats& stats = device->stats();
        if (result && job->faults) result = error(fault_sentence(*job));
        if (result && stats.programming_errors > job->programming_errors_before)
            result =
                error("the emulated device could not execute an operation: ", stats.last_error);
        job->profile.finished = Clock::now();
        current = nullptr;
        std::lock_guard lock(mutex);
        job->result = std::move(result);
        job->phase = EmuJob::Phase::Done;
        if (running == job) running.reset();
        changed.notify_all();
    }

    // Runs the engine's interrupt loop. True when the job finished (well or not), false when
    // the device has nothing more to report for now (stalled).
    bool drive(const std::shared_ptr<EmuJob>& job) {
        current = job.get();
        for (;;) {
            if (!nvdla_dla_engine_isr(engine)) {
                current = nullptr;
                return false;
            }
            bool done = false;
            nvdla_dla_error err{};
            if (nvdla_dla_engine_process(engine, &done, &err) != 0) {
                reset_device();
                finish(job, error("the engine stopped the task (", nvdla_dla_code_name(err.code),
                                  "): ", err.message));
                return true;
            }
            if (done) {
                finish(job, Status());
                return true;
            }
        }
    }

    bool start(const std::shared_ptr<EmuJob>& job) {
        job->profile.started = Clock::now();
        job->programming_errors_before = device->stats().programming_errors;
        current = job.get();
        nvdla_dla_error err{};
        if (nvdla_dla_engine_start(engine, job->validated->task, &err) != 0) {
            reset_device();
            finish(job, error("the engine could not start the task (",
                              nvdla_dla_code_name(err.code), "): ", err.message));
            return true;
        }
        return drive(job);
    }

    void reset_device() {
        nvdla_dla_engine_reset(engine);
        device->reset();
        current = nullptr;
    }

    // Starts queued jobs until the queue is empty or one stalls.
    void run_queue() {
        for (;;) {
            std::shared_ptr<EmuJob> job;
            {
                std::lock_guard lock(mutex);
                if (running || queue.empty()) return;
                job = queue.front();
                queue.pop_front();
                running = job;
                job->phase = EmuJob::Phase::Running;
            }
            if (!start(job)) {
                std::lock_guard lock(mutex);
                job->phase = EmuJob::Phase::Stalled;
                job->deadline = Clock::now() + options.job_timeout;
                return;
            }
        }
    }

    void fail_stalled_job() {
        std::shared_ptr<EmuJob> job;
        {
            std::lock_guard lock(mutex);
            job = running;
        }
        if (!job) return;
        reset_device();
        finish(job, error("job ", job->id, " did not complete within ", options.job_timeout.count(),
                          " ms: the device stopped raising interrupts (the engine and the device "
                          "were reset)"));
    }

    // Takes the executor role (waiting for it), runs `work`, gives the role back.
    template <class Work>
    void as_executor(std::unique_lock<std::mutex>& lock, Work&& work) {
        changed.wait(lock, [this] { return !executing; });
        executing = true;
        lock.unlock();
        work();
        lock.lock();
        executing = false;
        changed.notify_all();
        wake_worker();
    }

    // Wakes the worker when there is something for it: queued jobs nobody is there to run, a
    // stalled job whose deadline it keeps, or the end. (Not after every job: a thread that
    // runs its own jobs pays no wake-up of the worker.) The mutex is held.
    void wake_worker() {
        const bool queued = !queue.empty() && waiters == 0 && !queue.front()->for_waiter;
        const bool stalled = running && running->phase == EmuJob::Phase::Stalled;
        if (stopping || queued || stalled) worker_changed.notify_one();
    }

    bool stalled_past_deadline() const {
        return running && running->phase == EmuJob::Phase::Stalled &&
               Clock::now() >= running->deadline;
    }

    void worker_loop() {
        std::unique_lock lock(mutex);
        while (!stopping) {
            // Queued jobs are left to a waiting thread, which runs them without a hand-over,
            // and to the one about to wait (submit_for_wait).
            if (!executing && !running && !queue.empty() && waiters == 0 &&
                !queue.front()->for_waiter) {
                as_executor(lock, [this] { run_queue(); });
                continue;
            }
            if (!executing && stalled_past_deadline()) {
                as_executor(lock, [this] {
                    fail_stalled_job();
                    run_queue();
                });
                continue;
            }
            if (running && running->phase == EmuJob::Phase::Stalled) {
                const Clock::time_point deadline = running->deadline;  // the job may go away
                worker_changed.wait_until(lock, deadline);
            } else
                worker_changed.wait(lock);
        }
    }
};

EmuBackend::EmuBackend(std::unique_ptr<State> state) : state_(std::move(state)) {}

EmuBackend::~EmuBackend() {
    {
        std::lock_guard lock(state_->mutex);
        state_->stopping = true;
        state_->changed.notify_all();
        state_->worker_changed.notify_all();
    }
    if (state_->worker.joinable()) state_->worker.join();
    // A job still in the device is abandoned with the device.
    if (state_->engine) nvdla_dla_engine_reset(state_->engine);
}

Result<std::unique_ptr<EmuBackend>> EmuBackend::create(const BackendOptions& options) {
    Result<const HwConfig*> cfg = find_hw_config(options.config);
    if (!cfg) return error("emu backend: ", cfg.message());
    const HwConfig& config = **cfg;
    if (options.emu_memory_bytes < (1u << 20) ||
        options.emu_memory_bytes > kPrimaryLimit - kPrimaryBase)
        return error("emu backend: device memory of ", options.emu_memory_bytes,
                     " bytes is outside 1 MiB .. 2.5 GiB");
    const bool has_sram = nvdla_hw_has(&config, NVDLA_FEATURE_SECONDARY_MEMIF);
    if (has_sram && options.emu_sram_bytes > kSecondaryLimit - kSecondaryBase)
        return error("emu backend: SRAM of ", options.emu_sram_bytes,
                     " bytes is larger than 256 MiB");

    auto state = std::make_unique<State>();
    state->options = options;
    state->cfg = &config;
    state->space = std::make_shared<AddressSpace>(
        AddressSpace::Window{kPrimaryBase, options.emu_memory_bytes},
        AddressSpace::Window{kSecondaryBase, has_sram ? options.emu_sram_bytes : 0});
    state->device = std::make_unique<emu::Device>(config, *state->space);
    state->device->set_threads(options.emu_threads);
    state->registers = &hw::RegisterMap::get(config.reg_map);
    state->device_stats = &state->device->stats();
    state->op_enable_address.fill(State::kNoOpEnable);
    for (const hw::RegisterInfo& r : state->registers->registers())
        if (r.name == "D_OP_ENABLE") state->op_enable_address[r.unit] = r.address;
    State* raw = state.get();
    state->device->set_access_check([raw](const emu::DmaAccess& a) { return raw->allowed(a); });

    state->engine_storage.assign((nvdla_dla_engine_size() + 7) / 8, 0);
    nvdla_dla_engine_ops ops{};
    ops.reg_read = &State::reg_read;
    ops.reg_write = &State::reg_write;
    nvdla_dla_error err{};
    state->engine = nvdla_dla_engine_init(
        state->engine_storage.data(), state->engine_storage.size() * 8, &config, &ops, raw, &err);
    if (!state->engine) return error("emu backend: ", err.message);

    state->info.name = "emu";
    state->info.device = "in-process emulated " + std::string(config.name);
    state->info.config = &config;
    state->info.memory_bytes = options.emu_memory_bytes;
    state->worker = std::thread([raw] { raw->worker_loop(); });
    return std::unique_ptr<EmuBackend>(new EmuBackend(std::move(state)));
}

const BackendInfo& EmuBackend::info() const {
    return state_->info;
}

Result<std::unique_ptr<Buffer>> EmuBackend::create_buffer(const BufferRequest& request) {
    if (request.size == 0) return error("emu backend: a buffer of 0 bytes was requested");
    const uint64_t alignment = std::max<uint64_t>(request.alignment, 1);
    if ((alignment & (alignment - 1)) != 0 || alignment > (1u << 20))
        return error("emu backend: alignment ", request.alignment,
                     " is not a power of two up to 1 MiB");
    if (request.size > state_->options.emu_memory_bytes)
        return error("emu backend: ", request.size, " bytes is more than the ",
                     state_->options.emu_memory_bytes, " bytes of emulated device memory");
    const emu::MemoryPort port = port_of(request.domain);
    if (request.domain == MemoryDomain::Sram &&
        !nvdla_hw_has(state_->cfg, NVDLA_FEATURE_SECONDARY_MEMIF))
        return error("emu backend: ", state_->cfg->name,
                     " has no SRAM (no secondary memory interface)");

    Backing backing;
    const uint64_t mapped = round_up(request.size, kPageBytes);
    const int fd = memfd_create("nvdla-emu-buffer", MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, static_cast<off_t>(mapped)) == 0) {
        void* host = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (host != MAP_FAILED) {
            backing = {Backing::Kind::Memfd, static_cast<std::byte*>(host), mapped, fd};
        }
    }
    if (!backing.host) {
        if (fd >= 0) close(fd);
        void* host = std::aligned_alloc(kPageBytes, mapped);
        if (!host) return error("emu backend: no host memory for a ", request.size, "-byte buffer");
        std::memset(host, 0, mapped);
        backing = {Backing::Kind::Heap, static_cast<std::byte*>(host), mapped, -1};
    }
    Result<uint64_t> address = state_->space->allocate(port, request.size, alignment, backing.host);
    if (!address) {
        backing.release();
        return error("emu backend: ", address.message());
    }
    return std::unique_ptr<Buffer>(
        new EmuBuffer(state_->space, request.domain, *address, request.size, backing));
}

Result<std::unique_ptr<Buffer>> EmuBackend::import_dmabuf(int fd) {
    if (fd < 0) return error("emu backend: file descriptor ", fd, " is not valid");
    const off_t end = lseek(fd, 0, SEEK_END);
    if (end <= 0)
        return error("emu backend: file descriptor ", fd,
                     (end < 0 ? " cannot be sized: " + errno_text(errno) : " refers to 0 bytes"));
    const auto size = static_cast<uint64_t>(end);
    void* host = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (host == MAP_FAILED)
        return error("emu backend: file descriptor ", fd, " cannot be mapped: ", errno_text(errno));
    const int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    Backing backing{Backing::Kind::Mapped, static_cast<std::byte*>(host), size, own};
    Result<uint64_t> address =
        state_->space->allocate(emu::MemoryPort::Primary, size, kPageBytes, backing.host);
    if (!address) {
        backing.release();
        return error("emu backend: ", address.message());
    }
    return std::unique_ptr<Buffer>(
        new EmuBuffer(state_->space, MemoryDomain::System, *address, size, backing));
}

Result<std::unique_ptr<Buffer>> EmuBackend::import_host_memory(void* data, uint64_t size) {
    if (!data || size == 0) return error("emu backend: host memory to import is empty");
    Backing backing{Backing::Kind::Caller, static_cast<std::byte*>(data), 0, -1};
    Result<uint64_t> address =
        state_->space->allocate(emu::MemoryPort::Primary, size, kPageBytes, backing.host);
    if (!address) return error("emu backend: ", address.message());
    return std::unique_ptr<Buffer>(
        new EmuBuffer(state_->space, MemoryDomain::System, *address, size, backing));
}

Status EmuBackend::validate(const Task& task) {
    Result<std::shared_ptr<ValidatedTask>> checked = state_->check(task);
    return checked ? Status() : checked.status();
}

Result<JobId> EmuBackend::submit(const Task& task) {
    return queue(task, false);
}

Result<JobId> EmuBackend::submit_for_wait(const Task& task) {
    return queue(task, true);
}

Result<JobId> EmuBackend::queue(const Task& task, bool for_waiter) {
    Result<std::shared_ptr<ValidatedTask>> checked = state_->check(task);
    if (!checked) return checked.status();
    auto job = std::make_shared<EmuJob>();
    job->validated = std::move(checked).value();
    job->profile.queued = Clock::now();
    job->for_waiter = for_waiter;
    std::lock_guard lock(state_->mutex);
    job->id = state_->next_id++;
    state_->jobs.emplace(job->id, job);
    state_->queue.push_back(job);
    // Waiters see the new job; the worker is woken for jobs it may take (a waiter about to
    // come runs the others).
    state_->changed.notify_all();
    state_->wake_worker();
    return job->id;
}

Status EmuBackend::wait(JobId job, std::chrono::nanoseconds timeout) {
    return wait_with_profile(job, timeout, nullptr);
}

Status EmuBackend::wait_with_profile(JobId id, std::chrono::nanoseconds timeout,
                                     JobProfile* profile) {
    State& s = *state_;
    const Clock::time_point now = Clock::now();
    const Clock::time_point deadline =
        timeout >= Clock::time_point::max() - now ? Clock::time_point::max() : now + timeout;
    std::unique_lock lock(s.mutex);
    ++s.waiters;
    struct Leave {
        State& s;
        ~Leave() {
            --s.waiters;
            // The worker takes over what is still queued, left to a waiter or not.
            for (const std::shared_ptr<EmuJob>& job : s.queue) job->for_waiter = false;
            s.changed.notify_all();
            s.wake_worker();
        }
    } leave{s};
    for (;;) {
        auto it = s.jobs.find(id);
        if (it == s.jobs.end())
            return error("emu backend: job ", id,
                         " is unknown (never submitted, or already waited for)");
        const std::shared_ptr<EmuJob> job = it->second;
        if (job->phase == EmuJob::Phase::Done) {
            s.jobs.erase(it);
            if (profile) *profile = std::move(job->profile);
            return job->result;
        }
        // Run the queue on this thread rather than wait for the worker to wake up.
        if (!s.executing && !s.running && !s.queue.empty()) {
            s.as_executor(lock, [&s] { s.run_queue(); });
            continue;
        }
        if (!s.executing && s.stalled_past_deadline()) {
            s.as_executor(lock, [&s] {
                s.fail_stalled_job();
                s.run_queue();
            });
            continue;
        }
        Clock::time_point wake = deadline;
        if (s.running && s.running->phase == EmuJob::Phase::Stalled)
            wake = std::min(wake, s.running->deadline);
        if (Clock::now() >= deadline)
            return error(kTimedOut, " after ",
                         std::chrono::duration_cast<std::chrono::microseconds>(timeout).count(),
                         " us: job ", id, " has not completed yet");
        s.changed.wait_until(lock, wake);
    }
}

void EmuBackend::set_stalled(bool stalled) {
    State& s = *state_;
    std::unique_lock lock(s.mutex);
    s.as_executor(lock, [&s, stalled] {
        std::shared_ptr<EmuJob> job;
        {
            std::lock_guard inner(s.mutex);
            if (s.running && s.running->phase == EmuJob::Phase::Stalled) job = s.running;
        }
        // Releasing runs what was held back: the DMA is the pending job's.
        s.current = job.get();
        s.device->set_stalled(stalled);
        s.current = nullptr;
        if (!stalled && job) {
            {
                std::lock_guard inner(s.mutex);
                job->phase = EmuJob::Phase::Running;
            }
            if (!s.drive(job)) {
                std::lock_guard inner(s.mutex);
                job->phase = EmuJob::Phase::Stalled;
                return;
            }
        }
        if (!stalled) s.run_queue();
    });
}

uint64_t EmuBackend::dma_faults() const {
    return state_->total_faults.load();
}

uint64_t EmuBackend::bytes_in_use(MemoryDomain domain) const {
    return state_->space->in_use(port_of(domain));
}

uint64_t EmuBackend::sealed_contents(const Buffer& buffer) const {
    return state_->space->sealed_contents(port_of(buffer.domain()), buffer.device_address(),
                                          buffer.size());
}

Result<std::unique_ptr<Backend>> open_emu_backend(const BackendOptions& options) {
    Result<std::unique_ptr<EmuBackend>> backend = EmuBackend::create(options);
    if (!backend) return backend.status();
    return std::unique_ptr<Backend>(std::move(backend).value());
}

}  // namespace nvdla::runtime
