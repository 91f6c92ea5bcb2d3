// The host side of the virtual platform (tools/nvdla_vp) driven the way QEMU's ivshmem-doorbell
// device and the guest driver drive it, without QEMU: the ivshmem-doorbell handshake, the
// register ring, interrupts, DMA confined to the carve-out, and what a hostile guest can write
// into the shared memory (unknown operations, registers outside the map, producer indices
// from nowhere, random rings): every bad thing is refused and counted, none stops the host.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nvdla/hw/nvdla_ivshmem.h"
#include "nvdla/hw/nvdla_regs.h"
#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr uint64_t kShmBytes = 4ull << 20;
constexpr uint64_t kMailbox = 0x1000, kCarveout = 1ull << 20;
constexpr uint64_t kBase = 0x80000000ull;  // where the test attaches the carve-out

uint32_t reg(nvdla_unit unit, uint32_t offset) {
    return nvdla_unit_base(NVDLA_REG_MAP_FULL, unit) + offset;
}

template <class T>
T load(const T& f) {
    return std::atomic_ref<T>(const_cast<T&>(f)).load(std::memory_order_acquire);
}
template <class T, class V>
void store(T& f, V v) {
    std::atomic_ref<T>(f).store(static_cast<T>(v), std::memory_order_release);
}

// One message of the server: its value and the descriptor that came with it (or -1).
struct Message {
    int64_t value = 0;
    int fd = -1;
};

bool receive(int sock, Message& m) {
    iovec iov{&m.value, sizeof(m.value)};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    if (::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != sizeof(m.value)) return false;
    m.fd = -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            std::memcpy(&m.fd, CMSG_DATA(c), sizeof(int));
    return true;
}

// nvdla_vp with one nv_full instance, and this test as its QEMU device and guest driver.
class VpHost : public ::testing::Test {
  protected:
    void start(bool test_hooks = false) {
        dir_ = fs::temp_directory_path() /
               ("nvdla-vp-test-" + std::to_string(::getpid()) + "-" + std::to_string(++serial_));
        fs::create_directories(dir_);
        std::vector<std::string> args = {std::string(nvdla::test::tools_build_dir()) + "/nvdla_vp",
                                         "--instance",
                                         "nv_full:4M",
                                         "--ring-entries",
                                         "64",
                                         "--socket-dir",
                                         dir_.string(),
                                         "--stats",
                                         (dir_ / "stats.json").string()};
        if (test_hooks) args.push_back("--test-hooks");
        pid_ = ::fork();
        if (pid_ == 0) {
            std::vector<char*> argv;
            for (std::string& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            const int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, STDOUT_FILENO);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        ASSERT_GT(pid_, 0);

        const std::string path = (dir_ / "nvdla-0.sock").string();
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
        sock_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT_GE(sock_, 0);
        bool connected = false;
        for (int i = 0; i < 500 && !connected; ++i) {
            connected =
                ::connect(sock_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
            if (!connected) std::this_thread::sleep_for(10ms);
        }
        ASSERT_TRUE(connected) << "nvdla_vp did not listen on " << path;

        for (Message& m : handshake_) ASSERT_TRUE(receive(sock_, m));
        struct stat st {};
        ASSERT_EQ(::fstat(handshake_[2].fd, &st), 0);
        ASSERT_EQ(static_cast<uint64_t>(st.st_size), kShmBytes);
        void* p =
            ::mmap(nullptr, kShmBytes, PROT_READ | PROT_WRITE, MAP_SHARED, handshake_[2].fd, 0);
        ASSERT_NE(p, MAP_FAILED);
        shm_ = static_cast<std::byte*>(p);
        mb_ = reinterpret_cast<nvdla_vp_mailbox*>(shm_ + kMailbox);
        ring_ = reinterpret_cast<nvdla_vp_entry*>(shm_ + kMailbox + mb_->ring_offset);
        doorbell_ = handshake_[3].fd;
        irq_ = handshake_[4].fd;
    }

    // Stops nvdla_vp; its exit status, its counters.
    int stop(nlohmann::json* stats = nullptr) {
        if (pid_ <= 0) return -1;
        ::kill(pid_, SIGTERM);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        if (stats) {
            std::ifstream in(dir_ / "stats.json");
            *stats = nlohmann::json::parse(in)["instances"][0];
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    void TearDown() override {
        stop();
        if (shm_) ::munmap(shm_, kShmBytes);
        for (Message& m : handshake_)
            if (m.fd >= 0) ::close(m.fd);
        if (sock_ >= 0) ::close(sock_);
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }

    // The guest driver's side of the ring.
    uint32_t push(uint16_t op, uint32_t r = 0, uint64_t value = 0) {
        nvdla_vp_entry& e = ring_[producer_ % mb_->ring_entries];
        e.op = op;
        e.status = NVDLA_VP_PENDING;
        e.reg = r;
        e.value = value;
        return producer_++;
    }
    void publish_raw(uint32_t producer) {
        store(mb_->producer, producer);
        const uint64_t one = 1;
        ASSERT_EQ(::write(doorbell_, &one, sizeof(one)), 8);
    }
    // Publishes, rings and waits until the host consumed everything.
    bool flush() {
        publish_raw(producer_);
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (load(mb_->consumer) != producer_)
            if (std::chrono::steady_clock::now() > deadline) return false;
        return true;
    }
    const nvdla_vp_entry& entry(uint32_t index) { return ring_[index % mb_->ring_entries]; }
    // Launches a long BDMA copy: a 64 KiB line from the carve-out's start to 1 MiB above it,
    // 1000 lines x `surfaces` surfaces over the same bytes (strides 0).
    void launch_long_bdma_copy(uint32_t surfaces) {
        auto w = [&](uint32_t offset, uint32_t v) {
            push(NVDLA_VP_OP_WRITE, reg(NVDLA_UNIT_BDMA, offset), v);
        };
        w(NVDLA_BDMA_CFG_SRC_ADDR_LOW, static_cast<uint32_t>(kBase));
        w(NVDLA_BDMA_CFG_DST_ADDR_LOW, static_cast<uint32_t>(kBase + 0x100000));
        w(NVDLA_BDMA_CFG_LINE, 0x10000 / 32 - 1);
        w(NVDLA_BDMA_CFG_CMD, NVDLA_FIELD_SET(BDMA, CFG_CMD, SRC_RAM_TYPE, 1) |
                                  NVDLA_FIELD_SET(BDMA, CFG_CMD, DST_RAM_TYPE, 1));
        w(NVDLA_BDMA_CFG_LINE_REPEAT, 999);
        w(NVDLA_BDMA_CFG_SURF_REPEAT, surfaces - 1);
        w(NVDLA_BDMA_CFG_OP, 1);
        w(NVDLA_BDMA_CFG_LAUNCH0, 1);
        ASSERT_TRUE(flush());
    }
    uint32_t read(uint32_t r) {
        const uint32_t i = push(NVDLA_VP_OP_READ, r);
        EXPECT_TRUE(flush());
        EXPECT_EQ(entry(i).status, NVDLA_VP_OK);
        return static_cast<uint32_t>(entry(i).value);
    }
    uint64_t stat(nvdla_vp_stat s) { return load(mb_->stats[s]); }
    // Whether the MSI-X eventfd fired within the time.
    bool interrupted(std::chrono::milliseconds within = 2000ms) {
        pollfd p{irq_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(within.count())) != 1) return false;
        uint64_t n = 0;
        return ::read(irq_, &n, sizeof(n)) == 8 && n > 0;
    }

    // One BDMA transfer (nv_full), launched on group 0: the done interrupt follows.
    void bdma_copy(uint64_t src, uint64_t dst, uint32_t line_bytes) {
        auto w = [&](uint32_t offset, uint32_t v) {
            push(NVDLA_VP_OP_WRITE, reg(NVDLA_UNIT_BDMA, offset), v);
        };
        w(NVDLA_BDMA_CFG_SRC_ADDR_LOW, static_cast<uint32_t>(src));
        w(NVDLA_BDMA_CFG_SRC_ADDR_HIGH, static_cast<uint32_t>(src >> 32));
        w(NVDLA_BDMA_CFG_DST_ADDR_LOW, static_cast<uint32_t>(dst));
        w(NVDLA_BDMA_CFG_DST_ADDR_HIGH, static_cast<uint32_t>(dst >> 32));
        w(NVDLA_BDMA_CFG_LINE, line_bytes / 32 - 1);
        w(NVDLA_BDMA_CFG_CMD, NVDLA_FIELD_SET(BDMA, CFG_CMD, SRC_RAM_TYPE, 1) |
                                  NVDLA_FIELD_SET(BDMA, CFG_CMD, DST_RAM_TYPE, 1));
        w(NVDLA_BDMA_CFG_LINE_REPEAT, 0);
        w(NVDLA_BDMA_CFG_SRC_LINE, line_bytes);
        w(NVDLA_BDMA_CFG_DST_LINE, line_bytes);
        w(NVDLA_BDMA_CFG_SURF_REPEAT, 0);
        w(NVDLA_BDMA_CFG_SRC_SURF, line_bytes);
        w(NVDLA_BDMA_CFG_DST_SURF, line_bytes);
        w(NVDLA_BDMA_CFG_OP, 1);
        w(NVDLA_BDMA_CFG_LAUNCH0, 1);
    }
    std::byte* carveout(uint64_t offset) { return shm_ + kCarveout + offset; }

    fs::path dir_;
    pid_t pid_ = -1;
    int sock_ = -1, doorbell_ = -1, irq_ = -1;
    Message handshake_[5];
    std::byte* shm_ = nullptr;
    nvdla_vp_mailbox* mb_ = nullptr;
    nvdla_vp_entry* ring_ = nullptr;
    uint32_t producer_ = 0;
    static inline int serial_ = 0;
};

TEST_F(VpHost, HandshakeHeaderAndMailbox) {
    start();
    // The ivshmem-doorbell protocol: version, own id, memory, the host as peer 0, own vector.
    EXPECT_EQ(handshake_[0].value, 0);
    EXPECT_EQ(handshake_[0].fd, -1);
    EXPECT_EQ(handshake_[1].value, 1);
    EXPECT_EQ(handshake_[1].fd, -1);
    EXPECT_EQ(handshake_[2].value, -1);
    EXPECT_EQ(handshake_[3].value, 0);
    EXPECT_GE(handshake_[3].fd, 0);
    EXPECT_EQ(handshake_[4].value, 1);
    EXPECT_GE(handshake_[4].fd, 0);

    const auto* hdr = reinterpret_cast<const nvdla_ivshmem_header*>(shm_);
    EXPECT_EQ(std::memcmp(hdr->magic, NVDLA_IVSHMEM_MAGIC, 8), 0);
    EXPECT_EQ(hdr->version, NVDLA_IVSHMEM_VERSION);
    EXPECT_STREQ(hdr->config, "nv_full");
    EXPECT_EQ(hdr->mailbox_offset, kMailbox);
    EXPECT_EQ(hdr->memory_offset, kCarveout);
    EXPECT_EQ(hdr->memory_size, kShmBytes - kCarveout);
    EXPECT_LE(hdr->mailbox_offset + hdr->mailbox_size, hdr->memory_offset);

    EXPECT_EQ(std::memcmp(mb_->magic, NVDLA_VP_MAILBOX_MAGIC, 8), 0);
    EXPECT_EQ(mb_->version, NVDLA_VP_MAILBOX_VERSION);
    EXPECT_EQ(mb_->control_size, NVDLA_VP_CONTROL_SIZE);
    EXPECT_EQ(mb_->ring_entries, 64u);
    EXPECT_EQ(mb_->host_peer, 0u);
    EXPECT_EQ(mb_->reg_space, 0x11000u);  // nv_full's register map
    EXPECT_EQ(mb_->host_flags, 0u);
    EXPECT_LE(mb_->ring_offset + 64 * sizeof(nvdla_vp_entry), hdr->mailbox_size);
    EXPECT_EQ(stop(), 0);
}

// nvdla_vp takes SIGINT, SIGTERM and SIGHUP with sigwait() in its main thread. A thread that
// left them unblocked would take a process-directed SIGTERM whenever the main thread is not in
// sigwait(), and its default action kills the host (exit 143 instead of its report). (The main
// thread's own mask shows them unblocked while it waits in sigwait().)
TEST_F(VpHost, EveryThreadLeavesTerminationSignalsToTheMainThread) {
    start();
    EXPECT_EQ(read(reg(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_MASK)), 0u);  // the compute path ran
    const uint64_t termination = (uint64_t{1} << (SIGHUP - 1)) | (uint64_t{1} << (SIGINT - 1)) |
                                 (uint64_t{1} << (SIGTERM - 1));
    int threads = 0;
    for (const fs::directory_entry& task :
         fs::directory_iterator("/proc/" + std::to_string(pid_) + "/task")) {
        if (task.path().filename() == std::to_string(pid_)) continue;
        std::ifstream status(task.path() / "status");
        std::string line;
        uint64_t blocked = 0;
        bool found = false;
        while (std::getline(status, line))
            if (line.rfind("SigBlk:", 0) == 0) {
                blocked = std::stoull(line.substr(7), nullptr, 16);
                found = true;
            }
        ASSERT_TRUE(found) << task.path();
        EXPECT_EQ(blocked & termination, termination)
            << "thread " << task.path().filename() << " blocks only 0x" << std::hex << blocked;
        ++threads;
    }
    EXPECT_GE(threads, 2);  // the instance's ring server and its compute thread
    EXPECT_EQ(stop(), 0);
}

TEST_F(VpHost, WritesAndReadsInOrderAcrossRingWraps) {
    start();
    const uint32_t mask = reg(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_MASK);
    // Several times the ring's 64 entries: writes and reads in program order.
    for (uint32_t v = 0; v < 300; ++v) {
        push(NVDLA_VP_OP_WRITE, mask, v & 0x3f03ffu);
        if (v % 7 == 0) {
            EXPECT_EQ(read(mask), v & 0x3f03ffu);
        }
    }
    EXPECT_TRUE(flush());
    EXPECT_EQ(read(mask), 299u & 0x3f03ffu);
    EXPECT_EQ(stat(NVDLA_VP_STAT_WRITES), 300u);
    EXPECT_EQ(stat(NVDLA_VP_STAT_BAD_ENTRIES), 0u);
    EXPECT_EQ(stop(), 0);
}

TEST_F(VpHost, BadEntriesAreRefusedAndCounted) {
    start();
    const uint32_t bad_op = push(99, 0, 0);
    const uint32_t past_map = push(NVDLA_VP_OP_WRITE, 0x11000, 1);
    const uint32_t huge = push(NVDLA_VP_OP_READ, 0xfffffffcu);
    const uint32_t unaligned = push(NVDLA_VP_OP_READ, reg(NVDLA_UNIT_GLB, 2));
    const uint32_t attach_unaligned = push(NVDLA_VP_OP_ATTACH, 0, kBase + 8);
    const uint32_t attach_wraps = push(NVDLA_VP_OP_ATTACH, 0, ~uint64_t{0} & ~uint64_t{4095});
    const uint32_t stall = push(NVDLA_VP_OP_STALL);
    ASSERT_TRUE(flush());
    EXPECT_EQ(entry(bad_op).status, NVDLA_VP_BAD_OP);
    EXPECT_EQ(entry(past_map).status, NVDLA_VP_BAD_REG);
    EXPECT_EQ(entry(huge).status, NVDLA_VP_BAD_REG);
    EXPECT_EQ(entry(huge).value, 0xffffffffu);
    EXPECT_EQ(entry(unaligned).status, NVDLA_VP_BAD_REG);
    EXPECT_EQ(entry(attach_unaligned).status, NVDLA_VP_BAD_VALUE);
    EXPECT_EQ(entry(attach_wraps).status, NVDLA_VP_BAD_VALUE);
    EXPECT_EQ(entry(stall).status, NVDLA_VP_REFUSED);  // no --test-hooks
    EXPECT_EQ(stat(NVDLA_VP_STAT_BAD_ENTRIES), 7u);
    // The host goes on.
    EXPECT_EQ(read(reg(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_MASK)), 0u);
    nlohmann::json s;
    EXPECT_EQ(stop(&s), 2);  // refused entries: the report says so
    EXPECT_EQ(s["bad_entries"], 7);
    EXPECT_NE(s["first_bad_entry"].get<std::string>().find("unknown operation"), std::string::npos);
}

TEST_F(VpHost, ProducerIndexFromNowhereIsAProtocolError) {
    start();
    push(NVDLA_VP_OP_WRITE, reg(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_MASK), 5);
    // Far more entries than the ring holds: nothing runs, the host skips to that index.
    producer_ += 1000;
    ASSERT_TRUE(flush());
    EXPECT_EQ(stat(NVDLA_VP_STAT_PROTOCOL_ERRORS), 1u);
    EXPECT_EQ(load(mb_->error), producer_);
    EXPECT_EQ(stat(NVDLA_VP_STAT_WRITES), 0u);
    // And continues from there.
    EXPECT_EQ(read(reg(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_MASK)), 0u);
    nlohmann::json s;
    EXPECT_EQ(stop(&s), 2);
    EXPECT_EQ(s["protocol_errors"], 1);
}

TEST_F(VpHost, DmaStaysInTheCarveoutAndCompletionIsAnInterrupt) {
    start();
    push(NVDLA_VP_OP_ATTACH, 0, kBase);
    ASSERT_TRUE(flush());
    for (int i = 0; i < 256; ++i) *carveout(0x1000 + i) = static_cast<std::byte>(i);

    // A copy inside the carve-out: done interrupt, bytes moved.
    bdma_copy(kBase + 0x1000, kBase + 0x2000, 256);
    ASSERT_TRUE(flush());
    EXPECT_TRUE(interrupted());
    EXPECT_EQ(std::memcmp(carveout(0x1000), carveout(0x2000), 256), 0);
    const uint32_t status = read(reg(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_STATUS));
    EXPECT_NE(status, 0u);
    // Clearing the status drops the line: no new interrupt.
    push(NVDLA_VP_OP_WRITE, reg(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_STATUS), status);
    ASSERT_TRUE(flush());
    EXPECT_FALSE(interrupted(100ms));
    EXPECT_EQ(stat(NVDLA_VP_STAT_OUTSIDE_CARVEOUT), 0u);

    // Reading below the carve-out and writing past its end: refused and counted, the
    // shared memory outside the carve-out (header, mailbox) untouched.
    std::vector<std::byte> before(shm_, shm_ + kCarveout);
    bdma_copy(kBase - 0x1000, kBase + 0x3000, 64);
    bdma_copy(kBase + 0x1000, kBase + (kShmBytes - kCarveout) - 32, 64);
    ASSERT_TRUE(flush());
    EXPECT_TRUE(interrupted());  // the copies are done (the model computes them after the batch)
    EXPECT_EQ(stat(NVDLA_VP_STAT_OUTSIDE_CARVEOUT), 2u);
    EXPECT_EQ(std::memcmp(before.data() + kMailbox + NVDLA_VP_CONTROL_SIZE + 64 * 16,
                          shm_ + kMailbox + NVDLA_VP_CONTROL_SIZE + 64 * 16,
                          kCarveout - kMailbox - NVDLA_VP_CONTROL_SIZE - 64 * 16),
              0);
    nlohmann::json s;
    EXPECT_EQ(stop(&s), 2);
    EXPECT_EQ(s["outside_carveout"], 2);
    EXPECT_NE(s["first_outside"].get<std::string>().find("outside the carve-out"),
              std::string::npos);
}

TEST_F(VpHost, DmaBeforeAttachIsRefused) {
    start();
    bdma_copy(0x1000, 0x2000, 32);
    ASSERT_TRUE(flush());
    EXPECT_TRUE(interrupted());
    EXPECT_GE(stat(NVDLA_VP_STAT_OUTSIDE_CARVEOUT), 1u);
    EXPECT_EQ(stop(), 2);
}

TEST_F(VpHost, StallHoldsOperationsUntilReset) {
    start(/*test_hooks=*/true);
    EXPECT_EQ(mb_->host_flags, NVDLA_VP_HOST_TEST_HOOKS);
    push(NVDLA_VP_OP_ATTACH, 0, kBase);
    const uint32_t stall = push(NVDLA_VP_OP_STALL);
    bdma_copy(kBase, kBase + 0x1000, 32);
    ASSERT_TRUE(flush());
    EXPECT_EQ(entry(stall).status, NVDLA_VP_OK);
    EXPECT_FALSE(interrupted(200ms));
    EXPECT_EQ(stat(NVDLA_VP_STAT_OPERATIONS), 0u);
    // The reset releases the stall and drops what was pending; the next copy runs.
    push(NVDLA_VP_OP_RESET);
    bdma_copy(kBase, kBase + 0x1000, 32);
    ASSERT_TRUE(flush());
    EXPECT_TRUE(interrupted());
    EXPECT_EQ(stat(NVDLA_VP_STAT_OPERATIONS), 1u);
    EXPECT_EQ(stat(NVDLA_VP_STAT_RESETS), 1u);
    EXPECT_EQ(stop(), 0);
}

TEST_F(VpHost, RegistersAnswerAtOnceWhileALayerComputes) {
    start();
    push(NVDLA_VP_OP_ATTACH, 0, kBase);
    ASSERT_TRUE(flush());
    // A long BDMA transfer: a 64 KiB line copied 100 000 times, gigabytes of copying.
    launch_long_bdma_copy(100);

    // The model is still copying, yet a read is answered at once, as hardware answers it: the
    // launched group busy, no completion yet.
    const auto start = std::chrono::steady_clock::now();
    const uint32_t status = read(reg(NVDLA_UNIT_BDMA, NVDLA_BDMA_STATUS));
    const auto answered = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(NVDLA_FIELD_GET(BDMA, STATUS, GRP0_BUSY, status), 1u) << std::hex << status;
    EXPECT_EQ(NVDLA_FIELD_GET(BDMA, STATUS, IDLE, status), 0u) << std::hex << status;
    EXPECT_FALSE(interrupted(0ms));
    EXPECT_EQ(read(reg(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_STATUS)), 0u);
    // A write meanwhile reads back at once and reaches the model after the computation.
    const uint32_t mask = reg(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_MASK);
    push(NVDLA_VP_OP_WRITE, mask, 0x3u << 16);
    EXPECT_EQ(read(mask), 0x3u << 16);

    // Then the completion interrupt (BDMA's done bits are not masked), the group idle again.
    ASSERT_TRUE(interrupted(60000ms));
    const auto computed = std::chrono::steady_clock::now() - start;
    EXPECT_LT(answered * 4, computed) << "the read waited for the computation";
    const uint32_t after = read(reg(NVDLA_UNIT_BDMA, NVDLA_BDMA_STATUS));
    EXPECT_EQ(NVDLA_FIELD_GET(BDMA, STATUS, IDLE, after), 1u) << std::hex << after;
    EXPECT_NE(read(reg(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_STATUS)), 0u);
    EXPECT_EQ(read(mask), 0x3u << 16);
    EXPECT_EQ(stat(NVDLA_VP_STAT_OPERATIONS), 1u);
    nlohmann::json s;
    EXPECT_EQ(stop(&s), 0);
    EXPECT_GE(s["computations"].get<uint64_t>(), 1u);
    EXPECT_GE(s["answered_while_computing"].get<uint64_t>(), 4u);
}

TEST_F(VpHost, AResetDuringAComputationStopsItsDma) {
    start();
    push(NVDLA_VP_OP_ATTACH, 0, kBase);
    ASSERT_TRUE(flush());
    std::memset(carveout(0), 0x5a, 0x10000);
    std::memset(carveout(0x100000), 0, 0x10000);
    // A long copy (shorter than above: refused DMA is slow to report), then a reset at once: the
    // reset is answered once the model stopped, and what the copy had not written by then stays
    // unwritten (its DMA is refused).
    launch_long_bdma_copy(50);
    const uint32_t reset = push(NVDLA_VP_OP_RESET);
    ASSERT_TRUE(flush());
    EXPECT_EQ(entry(reset).status, NVDLA_VP_OK);
    std::memset(carveout(0x100000), 0, 0x10000);
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(*carveout(0x100000), std::byte{0});  // nothing written after the reset
    EXPECT_FALSE(interrupted(100ms));
    EXPECT_EQ(read(reg(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_STATUS)), 0u);
    EXPECT_EQ(stat(NVDLA_VP_STAT_RESETS), 1u);
    EXPECT_EQ(stop(), 0);
}

TEST_F(VpHost, RandomRingsNeverStopTheHost) {
    start(/*test_hooks=*/true);
    push(NVDLA_VP_OP_ATTACH, 0, kBase);
    ASSERT_TRUE(flush());
    std::mt19937_64 rng(20251121);
    for (int round = 0; round < 400; ++round) {
        const int n = 1 + static_cast<int>(rng() % 40);
        for (int i = 0; i < n; ++i) {
            // GLB's registers (any value: interrupt masks, status, set) or offsets off the
            // map, aligned or not. Not the other units: a guest that programs operations of
            // random sizes keeps the model computing them (the guest driver's validator is
            // what bounds jobs), which is not what this test is about.
            const uint32_t offset = (rng() & 1) ? static_cast<uint32_t>(rng()) % 0x1000u
                                                : static_cast<uint32_t>(rng()) | 0x100000u;
            push(static_cast<uint16_t>(rng() % 8), offset, rng());
        }
        if (rng() % 10 == 0) producer_ += static_cast<uint32_t>(rng());  // from nowhere
        if (rng() % 3 == 0) {
            // Scribble over the slots and the control block's guest fields too.
            for (int i = 0; i < 8; ++i)
                shm_[kMailbox + NVDLA_VP_CONTROL_SIZE + rng() % 1024] =
                    static_cast<std::byte>(rng());
        }
        ASSERT_TRUE(flush()) << "round " << round;
        if (rng() % 4 == 0) {
            push(NVDLA_VP_OP_RESET);
            push(NVDLA_VP_OP_ATTACH, 0, kBase);
        }
    }
    // Still answering, every index still checked.
    push(NVDLA_VP_OP_RESET);
    push(NVDLA_VP_OP_ATTACH, 0, kBase);
    EXPECT_EQ(read(reg(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_MASK)), 0u);
    nlohmann::json s;
    EXPECT_EQ(stop(&s), 2);
    EXPECT_GT(s["bad_entries"].get<uint64_t>(), 0u);
    EXPECT_GT(s["register_writes"].get<uint64_t>(), 0u);
    EXPECT_EQ(s["model_exceptions"], 0);
}

TEST_F(VpHost, ASecondDeviceOnTheSocketIsRefused) {
    start();
    const std::string path = (dir_ / "nvdla-0.sock").string();
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    const int second = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(::connect(second, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
    Message m;
    EXPECT_FALSE(receive(second, m));  // closed without a word
    ::close(second);
    // The first device still works.
    EXPECT_EQ(read(reg(NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_MASK)), 0u);
    EXPECT_EQ(stop(), 0);
}

}  // namespace
