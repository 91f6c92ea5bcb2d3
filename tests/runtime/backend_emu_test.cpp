// The emu backend: device memory (alignment, SRAM, imports and exports without copies), the
// kernel's validation, DMA containment, asynchronous jobs with timeouts, stalls and recovery.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "networks.hpp"
#include "runtime/backend_emu.hpp"
#include "test_support.hpp"

namespace nvdla::runtime_test {
namespace {

using namespace std::chrono_literals;
using runtime::BackendOptions;
using runtime::Buffer;
using runtime::BufferRequest;
using runtime::EmuBackend;
using runtime::MemoryDomain;

std::unique_ptr<EmuBackend> backend(const char* config = "nv_full",
                                    std::chrono::milliseconds timeout = 10000ms) {
    BackendOptions o;
    o.config = config;
    o.job_timeout = timeout;
    o.emu_memory_bytes = 16u << 20;
    Result<std::unique_ptr<EmuBackend>> b = EmuBackend::create(o);
    EXPECT_TRUE(b.ok()) << b.message();
    return b.ok() ? std::move(b).value() : nullptr;
}

std::unique_ptr<Buffer> buffer(EmuBackend& b, uint64_t size, uint64_t alignment = 256,
                               MemoryDomain domain = MemoryDomain::System) {
    Result<std::unique_ptr<Buffer>> r = b.create_buffer({size, alignment, domain});
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? std::move(r).value() : nullptr;
}

// A BDMA copy task over backend buffers (descriptors in the 0.12 layout).
struct CopyTask {
    std::unique_ptr<Buffer> net, ops, surfaces, deps, src, dst;
    runtime::Task task;

    CopyTask(EmuBackend& b, uint32_t line, uint32_t lines, std::unique_ptr<Buffer> from = nullptr,
             std::unique_ptr<Buffer> to = nullptr) {
        NetworkBuilder builder;
        builder.bdma_copy(0, 0, line, lines);  // descriptor blobs only; memories unused
        const Loadable& l = builder.loadable();
        std::unique_ptr<Buffer>* slots[4] = {&net, &ops, &surfaces, &deps};
        for (int i = 0; i < 4; ++i) {
            const auto& data = l.blobs[static_cast<size_t>(i)].data;
            *slots[i] = buffer(b, data.size());
            std::memcpy((*slots[i])->data(), data.data(), data.size());
        }
        src = from ? std::move(from) : buffer(b, uint64_t(line) * lines);
        dst = to ? std::move(to) : buffer(b, uint64_t(line) * lines);
        task.dla_version = NVDLA_DLA_VERSION(0, 12, 0);
        for (Buffer* p : {net.get(), ops.get(), surfaces.get(), deps.get(), src.get(), dst.get()})
            task.addresses.push_back({p, 0});
    }
};

void fill(Buffer& b, uint8_t seed) {
    for (uint64_t i = 0; i < b.size(); ++i) b.data()[i] = std::byte(uint8_t(seed + i * 7));
}

TEST(EmuBackend, Identity) {
    auto b = backend("nv_small");
    EXPECT_EQ(b->info().name, "emu");
    EXPECT_EQ(b->info().device, "in-process emulated nv_small");
    EXPECT_STREQ(b->info().config->name, "nv_small");
    EXPECT_EQ(b->info().memory_bytes, 16u << 20);
}

TEST(EmuBackend, UnknownConfiguration) {
    BackendOptions o;
    o.config = "nv_tiny";
    Result<std::unique_ptr<EmuBackend>> b = EmuBackend::create(o);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.message().rfind("emu backend: ", 0), 0u) << b.message();
    EXPECT_NE(b.message().find("nv_tiny"), std::string::npos) << b.message();
}

TEST(EmuBackend, AlignmentIsHonoured) {
    auto b = backend();
    std::vector<std::unique_ptr<Buffer>> keep;
    for (uint64_t alignment : {1u, 32u, 256u, 4096u, 65536u, 1u << 20}) {
        keep.push_back(buffer(*b, 100, 1));  // disturb the next start
        keep.push_back(buffer(*b, 1000, alignment));
        EXPECT_EQ(keep.back()->device_address() % alignment, 0u) << alignment;
        EXPECT_EQ(keep.back()->size(), 1000u);
        EXPECT_EQ(keep.back()->domain(), MemoryDomain::System);
    }
}

TEST(EmuBackend, BuffersAreZeroAndDistinct) {
    auto b = backend();
    auto x = buffer(*b, 5000), y = buffer(*b, 5000);
    for (uint64_t i = 0; i < 5000; ++i) ASSERT_EQ(x->data()[i], std::byte{0});
    EXPECT_GE(y->device_address(), x->device_address() + 5000);
    EXPECT_GT(b->bytes_in_use(MemoryDomain::System), 10000u);
    x.reset();
    y.reset();
    EXPECT_EQ(b->bytes_in_use(MemoryDomain::System), 0u);
}

TEST(EmuBackend, RequestErrors) {
    auto b = backend();
    EXPECT_EQ(b->create_buffer({0, 32, MemoryDomain::System}).message(),
              "emu backend: a buffer of 0 bytes was requested");
    EXPECT_EQ(b->create_buffer({64, 48, MemoryDomain::System}).message(),
              "emu backend: alignment 48 is not a power of two up to 1 MiB");
    EXPECT_EQ(b->create_buffer({32u << 20, 32, MemoryDomain::System}).message(),
              "emu backend: 33554432 bytes is more than the 16777216 bytes of emulated device "
              "memory");
    auto big = buffer(*b, 12u << 20);
    const std::string full = b->create_buffer({8u << 20, 32, MemoryDomain::System}).message();
    EXPECT_EQ(full.rfind("emu backend: out of emulated system memory: no 8388608-byte range "
                         "aligned to 32 is free",
                         0),
              0u)
        << full;
}

TEST(EmuBackend, SramOnConfigurationsThatHaveIt) {
    auto full = backend("nv_full");
    auto s = buffer(*full, 4096, 256, MemoryDomain::Sram);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->domain(), MemoryDomain::Sram);
    EXPECT_EQ(full->bytes_in_use(MemoryDomain::Sram), 4096u);
    auto small = backend("nv_small");
    EXPECT_EQ(small->create_buffer({4096, 256, MemoryDomain::Sram}).message(),
              "emu backend: nv_small has no SRAM (no secondary memory interface)");
}

TEST(EmuBackend, RunsAndContainsDma) {
    auto b = backend();
    CopyTask t(*b, 256, 8);
    fill(*t.src, 3);
    Result<runtime::JobId> job = b->submit(t.task);
    ASSERT_TRUE(job.ok()) << job.message();
    runtime::JobProfile profile;
    ASSERT_TRUE(b->wait_with_profile(*job, 1s, &profile).ok());
    EXPECT_EQ(std::memcmp(t.src->data(), t.dst->data(), 2048), 0);
    EXPECT_EQ(b->dma_faults(), 0u);
    EXPECT_LE(profile.queued, profile.started);
    EXPECT_LE(profile.started, profile.finished);
}

// A sealed buffer's contents keep one number until the device writes into it or it is exported;
// a buffer sealed later, imported memory and buffers never sealed have none.
TEST(EmuBackend, SealedBuffersKeepTheirNumberUntilWritten) {
    auto b = backend();
    CopyTask t(*b, 256, 8);
    t.src->seal();
    t.dst->seal();
    const uint64_t src = b->sealed_contents(*t.src), dst = b->sealed_contents(*t.dst);
    EXPECT_NE(src, 0u);
    EXPECT_NE(dst, 0u);
    EXPECT_NE(src, dst);
    EXPECT_EQ(b->sealed_contents(*t.net), 0u) << "never sealed";
    ASSERT_TRUE(b->wait(*b->submit(t.task), 1s).ok());
    EXPECT_EQ(b->sealed_contents(*t.src), src) << "only read";
    EXPECT_EQ(b->sealed_contents(*t.dst), 0u) << "the copy wrote it";
    t.dst->seal();
    EXPECT_NE(b->sealed_contents(*t.dst), 0u);
    EXPECT_NE(b->sealed_contents(*t.dst), dst) << "a new seal gives a new number";
    Result<int> fd = t.src->export_dmabuf();
    ASSERT_TRUE(fd.ok()) << fd.message();
    close(*fd);
    EXPECT_EQ(b->sealed_contents(*t.src), 0u) << "exported";

    std::vector<std::byte> host(2048);
    Result<std::unique_ptr<Buffer>> imported = b->import_host_memory(host.data(), host.size());
    ASSERT_TRUE(imported.ok()) << imported.message();
    (*imported)->seal();
    EXPECT_EQ(b->sealed_contents(**imported), 0u) << "the caller can write it";
}

TEST(EmuBackend, ProfilesOperations) {
    BackendOptions o;
    o.profiling = true;
    auto b = std::move(EmuBackend::create(o)).value();
    CopyTask t(*b, 256, 8);
    runtime::JobProfile profile;
    ASSERT_TRUE(b->wait_with_profile(*b->submit(t.task), 1s, &profile).ok());
    ASSERT_EQ(profile.operations.size(), 1u);
    EXPECT_EQ(profile.operations[0].unit, "BDMA");
    EXPECT_EQ(profile.operations[0].layers, 1u);
}

TEST(EmuBackend, ValidationIsTheKernels) {
    auto b = backend();
    CopyTask t(*b, 256, 8, nullptr, buffer(*b, 2047));
    const std::string e = b->submit(t.task).message();
    EXPECT_EQ(e.rfind("rejected by the validator (E_EXTENT): ", 0), 0u) << e;
    EXPECT_EQ(b->validate(t.task).message(), e);
    CopyTask ok(*b, 256, 8);
    EXPECT_TRUE(b->validate(ok.task).ok());
}

// A task submitted again runs the checked copy of its first validation only while its
// descriptors and address list are the ones validated: any change is validated anew.
TEST(EmuBackend, ResubmittedTasksAreValidatedAgainWhenTheyChange) {
    auto b = backend();
    CopyTask t(*b, 256, 8);
    auto transfer = [&t] {
        nvdla_dla_bdma_surface_desc s;
        std::memcpy(&s, t.surfaces->data(), sizeof(s));
        return s.transfers[0];
    };
    auto set_transfer = [&t](const nvdla_dla_bdma_transfer& x) {
        nvdla_dla_bdma_surface_desc s;
        std::memcpy(&s, t.surfaces->data(), sizeof(s));
        s.transfers[0] = x;
        std::memcpy(t.surfaces->data(), &s, sizeof(s));
    };
    auto run = [&b](const runtime::Task& task) {
        Result<runtime::JobId> job = b->submit(task);
        return job ? b->wait(*job, 1s) : job.status();
    };
    fill(*t.src, 5);
    ASSERT_TRUE(run(t.task).ok());
    ASSERT_EQ(std::memcmp(t.src->data(), t.dst->data(), 2048), 0);

    // Lines of 512 bytes reach past the 2048-byte destination: rejected, not run.
    const nvdla_dla_bdma_transfer original = transfer();
    nvdla_dla_bdma_transfer wide = original;
    wide.line_size = wide.source_line = wide.destination_line = 512;
    wide.source_surface = wide.destination_surface = 4096;
    set_transfer(wide);
    const std::string e = run(t.task).message();
    EXPECT_EQ(e.rfind("rejected by the validator (E_EXTENT): ", 0), 0u) << e;
    EXPECT_EQ(b->validate(t.task).message(), e);

    // Four lines instead of eight: the new descriptor runs, not the first one.
    nvdla_dla_bdma_transfer half = original;
    half.line_repeat = 4;
    set_transfer(half);
    std::memset(t.dst->data(), 0, 2048);
    ASSERT_TRUE(run(t.task).ok());
    EXPECT_EQ(std::memcmp(t.src->data(), t.dst->data(), 1024), 0);
    EXPECT_TRUE(std::all_of(t.dst->data() + 1024, t.dst->data() + 2048,
                            [](std::byte x) { return x == std::byte{0}; }));

    // Back to the first descriptor, into another destination buffer: the copy lands there.
    set_transfer(original);
    auto other = buffer(*b, 2048);
    runtime::Task moved = t.task;
    moved.addresses[5].buffer = other.get();
    fill(*t.src, 11);
    ASSERT_TRUE(run(moved).ok());
    EXPECT_EQ(std::memcmp(t.src->data(), other->data(), 2048), 0);
    ASSERT_TRUE(run(t.task).ok());
    EXPECT_EQ(std::memcmp(t.src->data(), t.dst->data(), 2048), 0);
    EXPECT_EQ(b->dma_faults(), 0u);
}

// With sealed descriptors the bytes are not compared again while the buffers keep their
// numbers (a change behind the seal, which the seal promised there would not be, goes unseen);
// sealed again after a change, the task is validated anew.
TEST(EmuBackend, SealedDescriptorsAreComparedOnlyWhenResealed) {
    auto b = backend();
    CopyTask t(*b, 256, 8);
    for (Buffer* d : {t.net.get(), t.ops.get(), t.surfaces.get(), t.deps.get()}) d->seal();
    auto set_lines = [&t](uint32_t lines) {
        nvdla_dla_bdma_surface_desc s;
        std::memcpy(&s, t.surfaces->data(), sizeof(s));
        s.transfers[0].line_repeat = lines;
        std::memcpy(t.surfaces->data(), &s, sizeof(s));
    };
    auto copied_bytes = [&] {
        fill(*t.src, 3);
        std::memset(t.dst->data(), 0, 2048);
        Result<runtime::JobId> job = b->submit(t.task);
        EXPECT_TRUE(job.ok() && b->wait(*job, 1s).ok());
        uint64_t n = 0;
        while (n < 2048 && t.dst->data()[n] == t.src->data()[n]) ++n;
        return n;
    };
    EXPECT_EQ(copied_bytes(), 2048u);
    set_lines(4);
    EXPECT_EQ(copied_bytes(), 2048u) << "compared although still sealed";
    t.surfaces->seal();
    EXPECT_EQ(copied_bytes(), 1024u) << "a new number was not compared";
}

TEST(EmuBackend, TaskShapeErrors) {
    auto b = backend();
    auto other = backend();
    CopyTask t(*b, 256, 8);
    runtime::Task empty;
    EXPECT_EQ(b->submit(empty).message(), "rejected: its address list is empty");
    runtime::Task foreign = t.task;
    auto stranger = buffer(*other, 2048);
    foreign.addresses[5].buffer = stranger.get();
    EXPECT_EQ(b->submit(foreign).message(),
              "rejected: address-list entry 5 names a buffer of another backend");
    runtime::Task past = t.task;
    past.addresses[4].offset = 4096;
    EXPECT_EQ(b->submit(past).message(),
              "rejected: address-list entry 4: offset 4096 is past the end of its 2048-byte "
              "buffer");
    runtime::Task old = t.task;
    old.dla_version = NVDLA_DLA_VERSION(0, 9, 0);
    EXPECT_EQ(b->submit(old).message().rfind("rejected by the validator (E_VERSION)", 0), 0u);
}

TEST(EmuBackend, EntryOffsetsLimitTheWindow) {
    // The destination is an entry 1024 bytes into a 3072-byte buffer: what the copy writes is
    // inside [1024, 3072), the bytes before stay.
    auto b = backend();
    auto big = buffer(*b, 3072);
    fill(*big, 9);
    std::vector<std::byte> before(big->data(), big->data() + 1024);
    CopyTask t(*b, 256, 8, nullptr, std::move(big));
    t.task.addresses[5].offset = 1024;
    fill(*t.src, 1);
    ASSERT_TRUE(b->wait(*b->submit(t.task), 1s).ok());
    EXPECT_EQ(std::memcmp(t.dst->data(), before.data(), 1024), 0);
    EXPECT_EQ(std::memcmp(t.dst->data() + 1024, t.src->data(), 2048), 0);
}

TEST(DmaWindow, AllowsOnlyWhatWasAdded) {
    runtime::DmaWindow w;
    using emu::MemoryPort;
    w.add(MemoryPort::Primary, 0x1000, 0x2000);
    w.add(MemoryPort::Primary, 0x2000, 0x2800);  // adjacent: merged
    w.add(MemoryPort::Primary, 0x8000, 0x8100);
    w.add(MemoryPort::Secondary, 0x1000, 0x1100);
    w.add(MemoryPort::Primary, 0x5000, 0x5000);  // empty: ignored
    w.seal();
    EXPECT_TRUE(w.allows(MemoryPort::Primary, 0x1000, 0x1800));
    EXPECT_TRUE(w.allows(MemoryPort::Primary, 0x27ff, 1));
    EXPECT_FALSE(w.allows(MemoryPort::Primary, 0x27ff, 2));
    EXPECT_FALSE(w.allows(MemoryPort::Primary, 0xfff, 2));
    EXPECT_FALSE(w.allows(MemoryPort::Primary, 0x4000, 1));
    EXPECT_TRUE(w.allows(MemoryPort::Primary, 0x8000, 0x100));
    EXPECT_FALSE(w.allows(MemoryPort::Primary, 0x8000, 0x101));
    EXPECT_FALSE(w.allows(MemoryPort::Secondary, 0x2000, 1));
    EXPECT_TRUE(w.allows(MemoryPort::Secondary, 0x1080, 0x80));
    EXPECT_FALSE(w.allows(MemoryPort::Secondary, 0x8000, 1));
    EXPECT_FALSE(runtime::DmaWindow().allows(MemoryPort::Primary, 0, 1));
}

TEST(EmuBackend, HostMemoryWithoutCopies) {
    auto b = backend();
    std::vector<std::byte> out(2048, std::byte{0xee});
    Result<std::unique_ptr<Buffer>> host = b->import_host_memory(out.data(), out.size());
    ASSERT_TRUE(host.ok()) << host.message();
    EXPECT_EQ((*host)->data(), out.data());
    EXPECT_EQ((*host)->export_dmabuf().message(),
              "emu backend: this buffer has no file descriptor to export (it wraps host memory)");
    CopyTask t(*b, 256, 8, nullptr, std::move(host).value());
    fill(*t.src, 5);
    ASSERT_TRUE(b->wait(*b->submit(t.task), 1s).ok());
    EXPECT_EQ(std::memcmp(out.data(), t.src->data(), 2048), 0);
    EXPECT_EQ(b->import_host_memory(nullptr, 10).message(),
              "emu backend: host memory to import is empty");
}

TEST(EmuBackend, FileDescriptorsWithoutCopies) {
    auto b = backend();
    auto exported = buffer(*b, 2048);
    Result<int> fd = exported->export_dmabuf();
    ASSERT_TRUE(fd.ok()) << fd.message();
    Result<std::unique_ptr<Buffer>> imported = b->import_dmabuf(*fd);
    ASSERT_TRUE(imported.ok()) << imported.message();
    close(*fd);
    EXPECT_GE((*imported)->size(), 2048u);
    // The same pages behind two mappings.
    exported->data()[17] = std::byte{42};
    EXPECT_EQ((*imported)->data()[17], std::byte{42});
    CopyTask t(*b, 256, 8, nullptr, std::move(imported).value());
    fill(*t.src, 11);
    ASSERT_TRUE(b->wait(*b->submit(t.task), 1s).ok());
    EXPECT_EQ(std::memcmp(exported->data(), t.src->data(), 2048), 0);

    EXPECT_EQ(b->import_dmabuf(-1).message(), "emu backend: file descriptor -1 is not valid");
    const int empty = memfd_create("empty", MFD_CLOEXEC);
    EXPECT_EQ(b->import_dmabuf(empty).message(),
              "emu backend: file descriptor " + std::to_string(empty) + " refers to 0 bytes");
    close(empty);
}

TEST(EmuBackend, JobsCompleteInOrderAndAsynchronously) {
    auto b = backend();
    std::vector<std::unique_ptr<CopyTask>> tasks;
    std::vector<runtime::JobId> jobs;
    for (int i = 0; i < 8; ++i) {
        tasks.push_back(std::make_unique<CopyTask>(*b, 256, 8));
        fill(*tasks.back()->src, static_cast<uint8_t>(i));
        jobs.push_back(*b->submit(tasks.back()->task));
    }
    // Waited for backwards: the last wait runs (or sees run) every job before it.
    for (int i = 7; i >= 0; --i) ASSERT_TRUE(b->wait(jobs[size_t(i)], 1s).ok()) << i;
    for (auto& t : tasks) EXPECT_EQ(std::memcmp(t->src->data(), t->dst->data(), 2048), 0);
    EXPECT_EQ(b->wait(jobs[0], 1s).message(),
              "emu backend: job 1 is unknown (never submitted, or already waited for)");
}

TEST(EmuBackend, WorkerRunsJobsNobodyWaitsFor) {
    auto b = backend();
    CopyTask t(*b, 256, 8);
    fill(*t.src, 77);
    const runtime::JobId job = *b->submit(t.task);
    for (int i = 0; i < 2000 && std::memcmp(t.src->data(), t.dst->data(), 2048) != 0; ++i)
        std::this_thread::sleep_for(1ms);
    EXPECT_EQ(std::memcmp(t.src->data(), t.dst->data(), 2048), 0);
    EXPECT_TRUE(b->wait(job, 0ns).ok());
}

TEST(EmuBackend, JobsSubmittedForAWaitRunInThatWait) {
    auto b = backend();
    CopyTask t(*b, 256, 8);
    fill(*t.src, 78);
    const runtime::JobId job = *b->submit_for_wait(t.task);
    std::this_thread::sleep_for(50ms);  // the worker leaves it alone
    EXPECT_NE(std::memcmp(t.src->data(), t.dst->data(), 2048), 0);
    ASSERT_TRUE(b->wait(job, 1s).ok());
    EXPECT_EQ(std::memcmp(t.src->data(), t.dst->data(), 2048), 0);
}

TEST(EmuBackend, JobsSubmittedForAWaitRunEvenWhenTheWaitGivesUp) {
    auto b = backend();
    CopyTask first(*b, 256, 8), second(*b, 256, 8);
    fill(*second.src, 79);
    b->set_stalled(true);
    const runtime::JobId held = *b->submit(first.task);
    const runtime::JobId job = *b->submit_for_wait(second.task);
    EXPECT_TRUE(runtime::timed_out(b->wait(job, 2ms)));  // gives up while the device stalls
    b->set_stalled(false);  // runs the first job and whatever is queued behind it
    for (int i = 0; i < 2000 && std::memcmp(second.src->data(), second.dst->data(), 2048) != 0; ++i)
        std::this_thread::sleep_for(1ms);
    EXPECT_EQ(std::memcmp(second.src->data(), second.dst->data(), 2048), 0);
    EXPECT_TRUE(b->wait(held, 1s).ok());
    EXPECT_TRUE(b->wait(job, 1s).ok());
}

TEST(EmuBackend, WaitTimesOutWhileTheDeviceStalls) {
    auto b = backend();
    CopyTask t(*b, 256, 8);
    fill(*t.src, 1);
    b->set_stalled(true);
    const runtime::JobId job = *b->submit(t.task);
    const Status early = b->wait(job, 2ms);
    EXPECT_TRUE(runtime::timed_out(early)) << early.message();
    EXPECT_EQ(early.message(), "timed out after 2000 us: job 1 has not completed yet");
    b->set_stalled(false);
    ASSERT_TRUE(b->wait(job, 1s).ok());
    EXPECT_EQ(std::memcmp(t.src->data(), t.dst->data(), 2048), 0);
}

TEST(EmuBackend, StalledJobFailsAtItsTimeoutAndTheDeviceRecovers) {
    auto b = backend("nv_full", 30ms);
    CopyTask t(*b, 256, 8);
    b->set_stalled(true);
    const runtime::JobId job = *b->submit(t.task);
    const Status s = b->wait(job, 5s);
    EXPECT_EQ(s.message(),
              "job 1 did not complete within 30 ms: the device stopped raising "
              "interrupts (the engine and the device were reset)");
    EXPECT_FALSE(runtime::timed_out(s));
    b->set_stalled(false);
    CopyTask again(*b, 256, 8);
    fill(*again.src, 4);
    ASSERT_TRUE(b->wait(*b->submit(again.task), 1s).ok());
    EXPECT_EQ(std::memcmp(again.src->data(), again.dst->data(), 2048), 0);
}

TEST(EmuBackend, ManyThreadsShareTheDevice) {
    auto b = backend();
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int k = 0; k < 4; ++k)
        threads.emplace_back([&, k] {
            CopyTask t(*b, 256, 8);
            for (int i = 0; i < 50; ++i) {
                fill(*t.src, static_cast<uint8_t>(k * 50 + i));
                Result<runtime::JobId> job = i % 2 ? b->submit_for_wait(t.task) : b->submit(t.task);
                if (!job.ok() || !b->wait(*job, 5s).ok() ||
                    std::memcmp(t.src->data(), t.dst->data(), 2048) != 0)
                    ++failures;
            }
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace nvdla::runtime_test
