#include "vp_instance.hpp"

#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>

#include "nvdla/hw/nvdla_regs.h"

namespace nvdla::vp {

static_assert(std::endian::native == std::endian::little,
              "the mailbox is little endian and read in place");
static_assert(sizeof(nvdla_ivshmem_header) == 112);
static_assert(sizeof(nvdla_vp_mailbox) == NVDLA_VP_CONTROL_SIZE);
static_assert(sizeof(nvdla_vp_entry) == 16);
static_assert(offsetof(nvdla_vp_mailbox, producer) == 64);
static_assert(offsetof(nvdla_vp_mailbox, consumer) == 128);
static_assert(NVDLA_VP_STAT_COUNT <= 14);

namespace {

// Shared-memory fields are read and written as atomics: the guest changes them concurrently.
template <class T>
T load(const T& field, std::memory_order order = std::memory_order_relaxed) {
    return std::atomic_ref<T>(const_cast<T&>(field)).load(order);
}

template <class T, class V>
void store(T& field, V value, std::memory_order order = std::memory_order_relaxed) {
    std::atomic_ref<T>(field).store(static_cast<T>(value), order);
}

// Bytes of the configuration's register map: every unit's window.
uint32_t register_space(const HwConfig& cfg) {
    uint32_t end = 0;
    for (int u = 0; u < NVDLA_UNIT_COUNT; ++u) {
        const uint32_t base = nvdla_unit_base(cfg.reg_map, static_cast<nvdla_unit>(u));
        if (base != NVDLA_UNIT_ABSENT) end = std::max(end, base + NVDLA_UNIT_WINDOW);
    }
    return end;
}

std::string hex(uint64_t v) {
    std::ostringstream out;
    out << "0x" << std::hex << v;
    return out.str();
}

const char* op_name(unsigned op) {
    switch (op) {
        case NVDLA_VP_OP_NOP: return "NOP";
        case NVDLA_VP_OP_WRITE: return "WRITE";
        case NVDLA_VP_OP_READ: return "READ";
        case NVDLA_VP_OP_RESET: return "RESET";
        case NVDLA_VP_OP_ATTACH: return "ATTACH";
        case NVDLA_VP_OP_STALL: return "STALL";
        case NVDLA_VP_OP_HANG: return "HANG";
        default: return "unknown operation";
    }
}

constexpr uint64_t kRefusalsLogged = 10;
constexpr uint64_t kMaxHangMs = 60000;
constexpr size_t kMaxHeldWrites = size_t{1} << 16;
constexpr int kComputeNice = 5;

}  // namespace

// The model's address space: the carve-out, at the device address the guest attached it at.
class Instance::CarveoutMemory final : public emu::Memory {
  public:
    CarveoutMemory(std::byte* bytes, uint64_t size) : bytes_(bytes), size_(size) {}

    void attach(uint64_t base) {
        base_ = base;
        attached_ = true;
    }
    void detach() { attached_ = false; }
    bool attached() const { return attached_; }
    uint64_t base() const { return base_; }

    bool inside(emu::MemoryPort port, uint64_t address, uint64_t size) const {
        if (port != emu::MemoryPort::Primary || !attached_ || address < base_) return false;
        const uint64_t offset = address - base_;
        return offset <= size_ && size <= size_ - offset;
    }

    std::byte* translate(emu::MemoryPort port, uint64_t address, uint64_t size) override {
        return inside(port, address, size) ? bytes_ + (address - base_) : nullptr;
    }

  private:
    std::byte* bytes_;
    uint64_t size_;
    uint64_t base_ = 0;
    bool attached_ = false;
};

Result<std::unique_ptr<Instance>> Instance::create(const InstanceOptions& options) {
    Result<const HwConfig*> cfg = find_hw_config(options.config);
    if (!cfg) return cfg.status();
    if (!std::has_single_bit(options.shm_bytes) || options.shm_bytes < 2 * kCarveoutOffset)
        return error("shared memory of ", options.shm_bytes,
                     " bytes: it must be a power of two of at least 2 MiB (it is a PCI BAR)");
    if (!std::has_single_bit(options.ring_entries) ||
        options.ring_entries < NVDLA_VP_MIN_RING_ENTRIES ||
        options.ring_entries > NVDLA_VP_MAX_RING_ENTRIES)
        return error("ring of ", options.ring_entries, " entries: a power of two from ",
                     NVDLA_VP_MIN_RING_ENTRIES, " to ", NVDLA_VP_MAX_RING_ENTRIES);
    const uint64_t mailbox = NVDLA_VP_CONTROL_SIZE + uint64_t{options.ring_entries} * 16;
    if (kMailboxOffset + mailbox > kCarveoutOffset)
        return error("a ring of ", options.ring_entries, " entries does not fit before the ",
                     "carve-out");

    std::unique_ptr<Instance> inst(new Instance(options, **cfg));
    inst->mailbox_bytes_ = (mailbox + 4095) & ~uint64_t{4095};
    inst->carveout_bytes_ = options.shm_bytes - kCarveoutOffset;

    const std::string memfd_name = "nvdla-vp-" + options.config;
    inst->shm_fd_ = UniqueFd(::memfd_create(memfd_name.c_str(), MFD_CLOEXEC));
    if (!inst->shm_fd_.valid()) return errno_failure("memfd_create");
    if (::ftruncate(inst->shm_fd_.get(), static_cast<off_t>(options.shm_bytes)) != 0)
        return errno_failure("ftruncate of the shared memory");
    void* p = ::mmap(nullptr, options.shm_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                     inst->shm_fd_.get(), 0);
    if (p == MAP_FAILED) return errno_failure("mmap of the shared memory");
    inst->shm_ = static_cast<std::byte*>(p);
    inst->mailbox_ = reinterpret_cast<nvdla_vp_mailbox*>(inst->shm_ + kMailboxOffset);
    inst->ring_ =
        reinterpret_cast<nvdla_vp_entry*>(inst->shm_ + kMailboxOffset + NVDLA_VP_CONTROL_SIZE);

    Result<UniqueFd> doorbell = make_eventfd();
    if (!doorbell) return doorbell.status();
    inst->doorbell_ = std::move(doorbell).value();
    Result<UniqueFd> computed = make_eventfd();
    if (!computed) return computed.status();
    inst->computed_ = std::move(computed).value();
    Result<UniqueFd> listener = listen_unix(options.socket_path);
    if (!listener) return listener.status();
    inst->listen_ = std::move(listener).value();

    inst->memory_ =
        std::make_unique<CarveoutMemory>(inst->shm_ + kCarveoutOffset, inst->carveout_bytes_);
    inst->device_ = std::make_unique<emu::Device>(**cfg, *inst->memory_);
    Instance* self = inst.get();
    inst->device_->set_access_check(
        [self](const emu::DmaAccess& access) { return self->access_check(access); });
    inst->device_->set_interrupt_line([self](bool asserted) {
        if (asserted && !self->line_) self->rose_ = true;
        self->line_ = asserted;
    });
    inst->device_->set_stalled(true);  // operations run on the compute thread only
    inst->init_shared_memory();
    inst->compute_thread_ = std::thread([self] { self->compute_loop(); });
    return inst;
}

Instance::Instance(const InstanceOptions& options, const HwConfig& cfg)
    : options_(options),
      cfg_(cfg),
      name_(options.config),
      reg_space_(register_space(cfg)),
      view_(cfg.reg_map) {}

Instance::~Instance() {
    if (compute_thread_.joinable()) {
        {
            std::lock_guard<std::mutex> lock(compute_lock_);
            compute_exit_ = true;
        }
        compute_cv_.notify_all();
        compute_thread_.join();
    }
    device_.reset();
    if (shm_) ::munmap(shm_, options_.shm_bytes);
    if (!options_.socket_path.empty()) ::unlink(options_.socket_path.c_str());
}

std::string Instance::qemu_chardev(const std::string& id) const {
    return "socket,id=" + id + ",path=" + options_.socket_path;
}

std::string Instance::qemu_device(const std::string& id) const {
    return "ivshmem-doorbell,chardev=" + id + ",vectors=1";
}

void Instance::log(const std::string& line) const {
    std::fprintf(stderr, "nvdla_vp: %s: %s\n", name_.c_str(), line.c_str());
}

// The header and the mailbox a new guest finds; the carve-out keeps its bytes (the guest
// driver zeroes every buffer it hands out).
void Instance::init_shared_memory() {
    std::memset(shm_, 0, kCarveoutOffset);
    auto* hdr = reinterpret_cast<nvdla_ivshmem_header*>(shm_);
    hdr->version = NVDLA_IVSHMEM_VERSION;
    hdr->header_size = sizeof(nvdla_ivshmem_header);
    std::strncpy(hdr->config, cfg_.name, sizeof(hdr->config) - 1);
    hdr->mailbox_offset = kMailboxOffset;
    hdr->mailbox_size = mailbox_bytes_;
    hdr->memory_offset = kCarveoutOffset;
    hdr->memory_size = carveout_bytes_;
    hdr->flags = 0;

    nvdla_vp_mailbox* mb = mailbox_;
    mb->version = NVDLA_VP_MAILBOX_VERSION;
    mb->control_size = NVDLA_VP_CONTROL_SIZE;
    mb->ring_offset = NVDLA_VP_CONTROL_SIZE;
    mb->ring_entries = options_.ring_entries;
    mb->reg_space = reg_space_;
    mb->host_peer = kHostPeer;
    mb->doorbell_vector = 0;
    mb->irq_vector = 0;
    mb->host_flags = options_.test_hooks ? NVDLA_VP_HOST_TEST_HOOKS : 0;
    consumer_ = 0;
    std::memcpy(mb->magic, NVDLA_VP_MAILBOX_MAGIC, sizeof(mb->magic));
    std::atomic_thread_fence(std::memory_order_release);
    std::memcpy(hdr->magic, NVDLA_IVSHMEM_MAGIC, sizeof(hdr->magic));
    publish_stats();
}

void Instance::serve(int stop_fd) {
    for (;;) {
        pollfd fds[5] = {{stop_fd, POLLIN, 0},
                         {listen_.get(), POLLIN, 0},
                         {doorbell_.get(), POLLIN, 0},
                         {computed_.get(), POLLIN, 0},
                         {client_.get(), POLLIN, 0}};
        const nfds_t count = client_.valid() ? 5 : 4;
        if (::poll(fds, count, -1) < 0) {
            if (errno == EINTR) continue;
            log(errno_failure("poll").message());
            break;
        }
        if (fds[0].revents) break;
        if (fds[3].revents & POLLIN) {
            drain_eventfd(computed_.get());
            computation_done();
        }
        if (fds[1].revents & POLLIN) accept_client();
        if (count == 5 && fds[4].revents) {
            // QEMU never sends anything: readable means it went away.
            char byte;
            const ssize_t n = ::recv(client_.get(), &byte, 1, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                drop_client("the guest disconnected");
        }
        if (fds[2].revents & POLLIN) {
            const uint64_t rings = drain_eventfd(doorbell_.get());
            stats_.doorbells += rings;
            if (client_.valid()) process_ring();
        }
    }
    // The counters include the last computation.
    wait_computation();
    publish_stats();
}

// ---- the compute thread ----

void Instance::compute_loop() {
    // The serving thread (register accesses, answered at once) goes first on a busy host.
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kComputeNice);
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(compute_lock_);
            compute_cv_.wait(lock, [this] { return compute_requested_ || compute_exit_; });
            if (!compute_requested_) return;
            compute_requested_ = false;
        }
        try {
            // Everything armed runs, and whatever its completion makes ready.
            device_->set_stalled(false);
            device_->set_stalled(true);
        } catch (const std::exception& ex) {
            ++stats_.model_exceptions;
            log(std::string("the model threw: ") + ex.what());
            device_->set_stalled(true);
        }
        {
            std::lock_guard<std::mutex> lock(compute_lock_);
            computing_.store(false, std::memory_order_release);
        }
        compute_cv_.notify_all();
        signal_eventfd(computed_.get());
    }
}

// Hands the model to the compute thread; until it is done, registers read as the view says.
void Instance::start_computation() {
    view_.capture(*device_);
    may_start_ = false;
    handed_over_ = true;
    ++stats_.computations;
    {
        std::lock_guard<std::mutex> lock(compute_lock_);
        computing_.store(true, std::memory_order_release);
        compute_requested_ = true;
    }
    compute_cv_.notify_all();
}

void Instance::wait_computation() {
    std::unique_lock<std::mutex> lock(compute_lock_);
    compute_cv_.wait(lock, [this] { return !computing_.load(std::memory_order_acquire); });
}

// The model is back: the writes held meanwhile reach it in order, then the ring goes on where it
// stopped (an entry only the model can answer) and the batch ends (interrupt, next computation).
void Instance::computation_done() {
    if (!model_available()) return;
    if (client_.valid())
        process_ring();
    else
        end_batch();
}

// Whether the serving thread owns the model. A computation that ended is taken back first (its
// held writes applied, in order), even before its completion event is seen: the ring may be in
// the middle of a batch when the compute thread finishes.
bool Instance::model_available() {
    if (computing_.load(std::memory_order_acquire)) return false;
    if (!handed_over_) return true;
    handed_over_ = false;
    cancel_dma_.store(false, std::memory_order_relaxed);
    for (const auto& [address, value] : held_writes_) {
        try {
            device_->write_register(address, value);
        } catch (const std::exception& ex) {
            ++stats_.model_exceptions;
            log(std::string("the model threw: ") + ex.what());
        }
        wrote_ = true;
    }
    held_writes_.clear();
    return true;
}

void Instance::accept_client() {
    UniqueFd c(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!c.valid()) return;
    if (client_.valid()) {
        log("a second QEMU device connected to " + options_.socket_path +
            ": refused (one device per socket)");
        return;
    }
    // A new guest: fresh header, ring and model.
    wait_computation();
    drain_eventfd(computed_.get());
    held_writes_.clear();
    handed_over_ = false;
    cancel_dma_.store(false, std::memory_order_relaxed);
    worked_ = false;
    init_shared_memory();
    reset_model(false);
    memory_->detach();
    drain_eventfd(doorbell_.get());
    Result<UniqueFd> irq = make_eventfd();
    if (!irq) {
        log(irq.message());
        return;
    }
    const int64_t minus_one = -1;
    Status s = send_message(c.get(), kIvshmemProtocolVersion);
    if (s) s = send_message(c.get(), kGuestPeer);
    if (s) s = send_message(c.get(), minus_one, shm_fd_.get());
    // The host model as a peer: the guest's doorbell to (kHostPeer, vector 0) writes this.
    if (s) s = send_message(c.get(), kHostPeer, doorbell_.get());
    // The guest's own vector 0: writing it raises the guest's MSI-X vector 0.
    if (s) s = send_message(c.get(), kGuestPeer, irq->get());
    if (!s) {
        log("ivshmem handshake failed: " + s.message());
        return;
    }
    client_ = std::move(c);
    guest_irq_ = std::move(irq).value();
    ++stats_.connections;
    if (options_.verbose)
        log("QEMU connected: peer " + std::to_string(kGuestPeer) + ", " +
            std::to_string(options_.shm_bytes >> 20) + " MiB shared memory, carve-out " +
            std::to_string(carveout_bytes_ >> 20) + " MiB");
}

void Instance::drop_client(const char* why) {
    client_.reset();
    guest_irq_.reset();
    if (options_.verbose) log(why);
}

bool Instance::access_check(const emu::DmaAccess& a) {
    // The guest reset the accelerator while this computation ran: it touches memory no more.
    if (cancel_dma_.load(std::memory_order_relaxed)) return false;
    if (memory_->inside(a.port, a.address, a.size)) return true;
    if (++stats_.outside_carveout == 1) {
        std::ostringstream what;
        what << (a.write ? "write" : "read") << " of " << a.size << " bytes at " << hex(a.address)
             << (a.port == emu::MemoryPort::Secondary ? " (secondary port)" : "") << " by unit "
             << static_cast<int>(a.unit);
        if (memory_->attached())
            what << ", outside the carve-out [" << hex(memory_->base()) << ", "
                 << hex(memory_->base() + carveout_bytes_) << ")";
        else
            what << " before the guest attached the carve-out";
        stats_.first_outside = what.str();
        log("DMA outside the carve-out refused: " + stats_.first_outside);
    }
    return false;
}

void Instance::refuse(uint32_t index, const nvdla_vp_entry& e, const std::string& why) {
    ++stats_.bad_entries;
    std::ostringstream what;
    what << "ring entry " << index << " (" << op_name(e.op) << ", op " << e.op << ", register "
         << hex(e.reg) << ", value " << hex(e.value) << ") refused: " << why;
    if (stats_.first_bad_entry.empty()) stats_.first_bad_entry = what.str();
    if (++bad_entries_logged_ <= kRefusalsLogged) log(what.str());
}

void Instance::reset_model(bool counted) {
    const emu::DeviceStats& s = device_->stats();
    model_before_reset_.operations += s.operations;
    model_before_reset_.faults += s.faults;
    model_before_reset_.programming_errors += s.programming_errors;
    device_->reset();
    device_->set_stalled(true);
    test_stalled_ = may_start_ = false;
    held_writes_.clear();
    line_ = rose_ = false;
    if (counted) ++stats_.resets;
}

// While the model computes: what the serving thread can answer itself. False: only the model
// can (it waits for the computation).
bool Instance::execute_while_computing(const nvdla_vp_entry& e, uint64_t& value) {
    switch (e.op) {
        case NVDLA_VP_OP_WRITE:
            view_.write(e.reg, static_cast<uint32_t>(e.value));
            held_writes_.emplace_back(e.reg, static_cast<uint32_t>(e.value));
            break;
        case NVDLA_VP_OP_READ: {
            const std::optional<uint32_t> v = view_.read(e.reg);
            if (!v) return false;
            value = *v;
            break;
        }
        case NVDLA_VP_OP_RESET:
            // It waits for the computation, whose DMA is refused from now on.
            cancel_dma_.store(true, std::memory_order_relaxed);
            return false;
        case NVDLA_VP_OP_ATTACH: return false;
        default: break;
    }
    ++stats_.answered_while_computing;
    return true;
}

// Executes one entry; false when it must wait for the computation (the entry stays unconsumed).
bool Instance::execute(nvdla_vp_entry& slot) {
    // One copy of the entry: the guest may rewrite the slot while it is read.
    nvdla_vp_entry e;
    e.op = load(slot.op);
    e.reg = load(slot.reg);
    e.value = load(slot.value);
    e.status = 0;
    const uint32_t index = consumer_;
    uint16_t status = NVDLA_VP_OK;
    uint64_t value = e.value;
    const bool reg_ok = e.reg % 4 == 0 && e.reg < reg_space_;
    const bool computing = !model_available();
    try {
        switch (e.op) {
            case NVDLA_VP_OP_NOP: break;
            case NVDLA_VP_OP_WRITE:
                if (!reg_ok) {
                    status = NVDLA_VP_BAD_REG;
                    break;
                }
                if (computing) {
                    // A guest that writes on and on waits for the model (bounded memory).
                    if (held_writes_.size() >= kMaxHeldWrites) return false;
                    execute_while_computing(e, value);
                } else {
                    device_->write_register(e.reg, static_cast<uint32_t>(e.value));
                    wrote_ = true;
                }
                if (view_.may_start(e.reg, static_cast<uint32_t>(e.value))) may_start_ = true;
                ++stats_.writes;
                break;
            case NVDLA_VP_OP_READ:
                if (!reg_ok) {
                    status = NVDLA_VP_BAD_REG;
                    value = 0xffffffffu;
                    break;
                }
                if (computing) {
                    if (!execute_while_computing(e, value)) return false;
                } else {
                    value = device_->read_register(e.reg);
                }
                ++stats_.reads;
                break;
            case NVDLA_VP_OP_RESET:
                if (computing) return execute_while_computing(e, value);
                reset_model(true);
                break;
            case NVDLA_VP_OP_ATTACH: {
                const uint64_t limit =
                    cfg_.address_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << cfg_.address_bits) - 1;
                if (e.value % 4096 || e.value > limit || carveout_bytes_ - 1 > limit - e.value) {
                    status = NVDLA_VP_BAD_VALUE;
                    break;
                }
                if (computing) return execute_while_computing(e, value);
                memory_->attach(e.value);
                if (options_.verbose)
                    log("carve-out attached at device address " + hex(e.value) + " (" +
                        std::to_string(carveout_bytes_ >> 20) + " MiB)");
                break;
            }
            case NVDLA_VP_OP_STALL:
                if (!options_.test_hooks) {
                    status = NVDLA_VP_REFUSED;
                    break;
                }
                // What is armed from now on waits for the next reset (a computation already
                // under way finishes).
                test_stalled_ = true;
                ++stats_.stalls;
                if (options_.verbose) log("stalled until the next reset (test hook)");
                break;
            case NVDLA_VP_OP_HANG:
                if (!options_.test_hooks) {
                    status = NVDLA_VP_REFUSED;
                    break;
                }
                if (e.value > kMaxHangMs) {
                    status = NVDLA_VP_BAD_VALUE;
                    break;
                }
                // A host that stops answering: nothing of this instance runs meanwhile.
                log("stops answering for " + std::to_string(e.value) + " ms (test hook)");
                std::this_thread::sleep_for(std::chrono::milliseconds(e.value));
                break;
            default: status = NVDLA_VP_BAD_OP; break;
        }
    } catch (const std::exception& ex) {
        // The model is not expected to throw; a guest must not be able to stop the host.
        ++stats_.model_exceptions;
        log(std::string("the model threw: ") + ex.what());
        status = NVDLA_VP_BAD_VALUE;
    }
    if (status != NVDLA_VP_OK) {
        static const char* const why[] = {"", "unknown operation",
                                          "register offset outside the register space or "
                                          "not 4-byte aligned",
                                          "bad value", "test hooks are off"};
        refuse(index, e, why[std::min<unsigned>(status, 4)]);
    }
    store(slot.value, value);
    store(slot.status, status);
    return true;
}

void Instance::process_ring() {
    const uint32_t entries = options_.ring_entries;
    for (;;) {
        const uint32_t producer = load(mailbox_->producer, std::memory_order_acquire);
        const uint32_t pending = producer - consumer_;
        if (pending == 0) break;
        worked_ = true;
        if (pending > entries) {
            ++stats_.protocol_errors;
            store(mailbox_->error, producer);
            store(mailbox_->error_count, stats_.protocol_errors);
            if (stats_.protocol_errors <= kRefusalsLogged)
                log("protocol error: producer index " + std::to_string(producer) + " is " +
                    std::to_string(pending) + " entries ahead of the consumer index " +
                    std::to_string(consumer_) + " (the ring has " + std::to_string(entries) +
                    "): nothing executed, skipping to it");
            consumer_ = producer;
            publish_stats();
            store(mailbox_->consumer, consumer_, std::memory_order_release);
            break;
        }
        while (consumer_ != producer) {
            // An entry only the model can answer: the ring goes on once the computation is done.
            if (!execute(ring_[consumer_ & (entries - 1)])) {
                publish_stats();
                return;
            }
            ++consumer_;
            // The counters are current once the consumer index passes the last entry.
            if (consumer_ == producer) publish_stats();
            // Published after every entry: a guest spinning on a read sees it at once.
            store(mailbox_->consumer, consumer_, std::memory_order_release);
        }
    }
    end_batch();
}

// After the entries published so far: the interrupt, and the operations armed meanwhile.
void Instance::end_batch() {
    if (model_available()) {
        // The counters include the computation just done before its interrupt is seen.
        publish_stats();
        // Level semantics over an edge-triggered MSI-X: raise it when the line rose, or when
        // it is still high after the guest wrote registers (it cleared some status bits, not
        // all).
        if (line_ && (rose_ || wrote_)) notify_guest();
        rose_ = wrote_ = false;
        if (may_start_ && !test_stalled_) start_computation();
    }
    if (worked_) ++stats_.batches;
    publish_stats();
    if (options_.verbose >= 2 && worked_)
        log("batch done: consumer " + std::to_string(consumer_) +
            (computing_.load(std::memory_order_relaxed) ? ", computing" : ""));
    worked_ = false;
}

void Instance::notify_guest() {
    if (guest_irq_.valid() && signal_eventfd(guest_irq_.get())) ++stats_.interrupts;
}

void Instance::publish_stats() {
    if (!device_) return;
    // The model's own counters only while this thread owns it; the last ones meanwhile.
    if (!computing_.load(std::memory_order_acquire)) {
        const emu::DeviceStats& m = device_->stats();
        stats_.operations = model_before_reset_.operations + m.operations;
        stats_.dma_faults = model_before_reset_.faults + m.faults;
        stats_.programming_errors = model_before_reset_.programming_errors + m.programming_errors;
        published_model_[NVDLA_VP_STAT_OPERATIONS] = stats_.operations;
        published_model_[NVDLA_VP_STAT_DMA_FAULTS] = stats_.dma_faults;
        published_model_[NVDLA_VP_STAT_OUTSIDE_CARVEOUT] = stats_.outside_carveout;
        published_model_[NVDLA_VP_STAT_PROGRAMMING_ERRORS] = stats_.programming_errors;
    }
    uint64_t values[NVDLA_VP_STAT_COUNT] = {};
    values[NVDLA_VP_STAT_WRITES] = stats_.writes;
    values[NVDLA_VP_STAT_READS] = stats_.reads;
    values[NVDLA_VP_STAT_BATCHES] = stats_.batches;
    values[NVDLA_VP_STAT_INTERRUPTS] = stats_.interrupts;
    values[NVDLA_VP_STAT_OPERATIONS] = published_model_[NVDLA_VP_STAT_OPERATIONS];
    values[NVDLA_VP_STAT_DMA_FAULTS] = published_model_[NVDLA_VP_STAT_DMA_FAULTS];
    values[NVDLA_VP_STAT_OUTSIDE_CARVEOUT] = published_model_[NVDLA_VP_STAT_OUTSIDE_CARVEOUT];
    values[NVDLA_VP_STAT_BAD_ENTRIES] = stats_.bad_entries;
    values[NVDLA_VP_STAT_PROTOCOL_ERRORS] = stats_.protocol_errors;
    values[NVDLA_VP_STAT_RESETS] = stats_.resets;
    values[NVDLA_VP_STAT_PROGRAMMING_ERRORS] = published_model_[NVDLA_VP_STAT_PROGRAMMING_ERRORS];
    for (int i = 0; i < NVDLA_VP_STAT_COUNT; ++i) store(mailbox_->stats[i], values[i]);
}

}  // namespace nvdla::vp
