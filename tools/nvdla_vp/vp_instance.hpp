// One NVDLA of the virtual platform: the emulated accelerator (umd/emu) behind one QEMU
// ivshmem-doorbell device.
//
// The instance owns the shared memory the device's BAR2 maps (a memfd it hands to QEMU): the
// header of include/nvdla/hw/nvdla_ivshmem.h, the register mailbox and its ring, and the carve-out
// the guest driver allocates buffers from. It serves the ivshmem-doorbell protocol on its own UNIX
// socket (one QEMU device per socket), executes the ring's register accesses on the model when
// the guest rings the doorbell, lets the model's DMA reach the carve-out and nothing else, and
// turns the model's interrupt line into the guest's MSI-X vector.
//
// Register accesses are answered at once, as hardware answers them: the model is stalled while
// the serving thread executes them, so a write that enables an operation only arms it; the
// operations then run on the instance's compute thread, and while they do the serving thread
// answers from a RegisterView (the enabled groups read busy) and keeps the writes for the model.
// The completion raises the interrupt.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ivshmem.hpp"
#include "nvdla/emu/device.hpp"
#include "nvdla/hw/nvdla_ivshmem.h"
#include "nvdla/hw_config.hpp"
#include "register_view.hpp"

namespace nvdla::vp {

struct InstanceOptions {
    std::string config = "nv_full";
    uint64_t shm_bytes = 64ull << 20;  // BAR2: a power of two, at least 2 MiB
    uint32_t ring_entries = 4096;      // a power of two
    bool test_hooks = false;           // accept the guest's STALL entries
    int verbose = 0;                   // 1: connections, resets, attach; 2: every batch
    std::string socket_path;
};

// Totals over the instance's life (every guest, every model reset).
struct InstanceStats {
    uint64_t writes = 0, reads = 0, batches = 0, doorbells = 0, interrupts = 0;
    uint64_t operations = 0, dma_faults = 0, outside_carveout = 0, bad_entries = 0;
    uint64_t protocol_errors = 0, resets = 0, stalls = 0, programming_errors = 0;
    uint64_t connections = 0, model_exceptions = 0;
    uint64_t computations = 0, answered_while_computing = 0;
    std::string first_outside;    // the first DMA access outside the carve-out, in words
    std::string first_bad_entry;  // the first refused ring entry
};

class Instance {
  public:
    static Result<std::unique_ptr<Instance>> create(const InstanceOptions& options);
    ~Instance();
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;

    // Serves the socket until stop_fd becomes readable. Runs on its own thread; everything the
    // instance does happens here, but the model's operations (on the compute thread).
    void serve(int stop_fd);

    // After serve() returned.
    const InstanceStats& stats() const { return stats_; }
    const std::string& name() const { return name_; }
    const InstanceOptions& options() const { return options_; }
    uint64_t carveout_bytes() const { return carveout_bytes_; }

    // The QEMU options that attach a device to this instance; id names the chardev.
    std::string qemu_chardev(const std::string& id) const;
    std::string qemu_device(const std::string& id) const;

    static constexpr uint64_t kMailboxOffset = 0x1000;
    static constexpr uint64_t kCarveoutOffset = 1ull << 20;
    static constexpr uint32_t kHostPeer = 0, kGuestPeer = 1;

  private:
    class CarveoutMemory;
    Instance(const InstanceOptions& options, const HwConfig& cfg);

    void init_shared_memory();
    void accept_client();
    void drop_client(const char* why);
    void process_ring();
    bool execute(nvdla_vp_entry& slot);
    bool execute_while_computing(const nvdla_vp_entry& e, uint64_t& value);
    void end_batch();
    void start_computation();
    void computation_done();
    bool model_available();
    void wait_computation();
    void compute_loop();
    void reset_model(bool counted);
    void publish_stats();
    void notify_guest();
    bool access_check(const emu::DmaAccess& access);
    void refuse(uint32_t index, const nvdla_vp_entry& e, const std::string& why);
    void log(const std::string& line) const;

    InstanceOptions options_;
    const HwConfig& cfg_;
    std::string name_;
    uint32_t reg_space_ = 0;
    uint64_t mailbox_bytes_ = 0, carveout_bytes_ = 0;

    UniqueFd shm_fd_, listen_, client_, doorbell_, guest_irq_;
    std::byte* shm_ = nullptr;
    nvdla_vp_mailbox* mailbox_ = nullptr;
    nvdla_vp_entry* ring_ = nullptr;

    std::unique_ptr<CarveoutMemory> memory_;
    std::unique_ptr<emu::Device> device_;
    emu::DeviceStats model_before_reset_;  // the model's counters, summed over its resets
    bool line_ = false, rose_ = false, wrote_ = false;
    uint32_t consumer_ = 0;
    bool worked_ = false;  // the batch under way executed entries

    // The compute thread. computing_ says who owns the model (device_, memory_, line_, rose_,
    // and the model's counters): the compute thread while true, the serving thread otherwise.
    RegisterView view_;
    std::vector<std::pair<uint32_t, uint32_t>> held_writes_;  // for the model, in order
    bool handed_over_ = false;   // a computation started and was not taken back yet
    bool may_start_ = false;     // a write since the last computation may have armed one
    bool test_stalled_ = false;  // STALL: no computation until the next reset
    std::atomic<bool> computing_{false};
    std::atomic<bool> cancel_dma_{false};  // a RESET waits: the computation's DMA is refused
    UniqueFd computed_;                    // eventfd: the compute thread finished
    std::mutex compute_lock_;
    std::condition_variable compute_cv_;
    bool compute_requested_ = false, compute_exit_ = false;
    std::thread compute_thread_;
    uint64_t published_model_[NVDLA_VP_STAT_COUNT] = {};
    uint64_t bad_entries_logged_ = 0;

    InstanceStats stats_;
};

}  // namespace nvdla::vp
