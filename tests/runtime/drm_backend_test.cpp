// The drm backend against a fake kernel (drm_fake.hpp): what it passes to each ioctl, how it
// keeps GEM handles, and how every error reads. The real module cannot run jobs yet (no
// engine); the QEMU test of the kernel driver covers the kernel side.
#include <gtest/gtest.h>

#include <fcntl.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <limits>
#include <thread>

#include "drm_fake.hpp"
#include "runtime/backend_drm.hpp"

namespace nvdla::runtime {
namespace {

using test::FakeDrm;

std::unique_ptr<Backend> open(const std::shared_ptr<FakeDrm>& fake) {
    Result<std::unique_ptr<Backend>> b = drm::open_drm_backend_on(fake);
    EXPECT_TRUE(b.ok()) << b.message();
    return b.ok() ? std::move(b).value() : nullptr;
}

std::unique_ptr<Buffer> create(Backend& b, uint64_t size, uint64_t alignment = 32) {
    Result<std::unique_ptr<Buffer>> buf = b.create_buffer({size, alignment, MemoryDomain::System});
    EXPECT_TRUE(buf.ok()) << buf.message();
    return buf.ok() ? std::move(buf).value() : nullptr;
}

int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// ---- Opening ------------------------------------------------------------------------------

TEST(DrmBackend, OpenReadsTheConfigurationFromGetParam) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->info().name, "drm");
    EXPECT_EQ(b->info().config, *find_hw_config("nv_small"));
    EXPECT_EQ(b->info().memory_bytes, 16u << 20);
    EXPECT_NE(b->info().device.find("/dev/dri/renderD128"), std::string::npos);
    EXPECT_NE(b->info().device.find("nv_small"), std::string::npos);
    EXPECT_NE(b->info().device.find("driver 1.2.3"), std::string::npos);
    EXPECT_NE(b->info().device.find("engine none"), std::string::npos);
}

TEST(DrmBackend, OpenMapsEveryUapiConfiguration) {
    for (uint64_t id = NVDLA_HW_CONFIG_NV_FULL; id <= NVDLA_HW_CONFIG_NV_LARGE; ++id) {
        const char* name = drm::hw_config_name(id);
        ASSERT_NE(name, nullptr) << id;
        const HwConfig& cfg = FakeDrm::config(name);
        auto fake = std::make_shared<FakeDrm>();
        fake->params[NVDLA_PARAM_HW_CONFIG] = id;
        fake->params[NVDLA_PARAM_HW_FEATURES] = cfg.features;
        fake->params[NVDLA_PARAM_ATOM_BYTES] = cfg.atom_bytes;
        auto b = open(fake);
        ASSERT_TRUE(b) << name;
        EXPECT_EQ(b->info().config, &cfg) << name;
    }
    EXPECT_EQ(drm::hw_config_name(0), nullptr);
    EXPECT_EQ(drm::hw_config_name(8), nullptr);
}

TEST(DrmBackend, OpenErrorsNameTheCallAndErrno) {
    {
        auto fake = std::make_shared<FakeDrm>();
        fake->fail[DRM_IOCTL_NVDLA_GET_PARAM] = ENOTTY;
        auto b = drm::open_drm_backend_on(fake);
        ASSERT_FALSE(b.ok());
        EXPECT_EQ(b.message(),
                  "drm /dev/dri/renderD128: GET_PARAM API_VERSION failed: ENOTTY (Inappropriate "
                  "ioctl for device): the device is not driven by the nvdla kernel module");
    }
    {
        auto fake = std::make_shared<FakeDrm>();
        fake->params.erase(NVDLA_PARAM_ENGINE);  // an older module: EINVAL
        auto b = drm::open_drm_backend_on(fake);
        ASSERT_FALSE(b.ok());
        EXPECT_NE(b.message().find("GET_PARAM ENGINE failed: EINVAL (Invalid argument): the "
                                   "kernel module does not know this parameter"),
                  std::string::npos)
            << b.message();
    }
    {
        auto fake = std::make_shared<FakeDrm>();
        fake->params[NVDLA_PARAM_API_VERSION] = 0;
        auto b = drm::open_drm_backend_on(fake);
        ASSERT_FALSE(b.ok());
        EXPECT_NE(b.message().find("interface version is 0; this runtime needs 1"),
                  std::string::npos)
            << b.message();
    }
    {
        auto fake = std::make_shared<FakeDrm>();
        fake->params[NVDLA_PARAM_HW_CONFIG] = 42;
        auto b = drm::open_drm_backend_on(fake);
        ASSERT_FALSE(b.ok());
        EXPECT_NE(b.message().find("hardware configuration 42, which this runtime does not know"),
                  std::string::npos)
            << b.message();
    }
    {
        auto fake = std::make_shared<FakeDrm>();
        fake->params[NVDLA_PARAM_ATOM_BYTES] = 32;
        auto b = drm::open_drm_backend_on(fake);
        ASSERT_FALSE(b.ok());
        EXPECT_NE(b.message().find("nv_small has a 32-byte atom"), std::string::npos)
            << b.message();
        EXPECT_NE(b.message().find("disagree"), std::string::npos) << b.message();
    }
}

// ---- Buffers ------------------------------------------------------------------------------

TEST(DrmBackend, CreateBufferPassesSizeAndAlignmentAndMapsIt) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    auto buf = create(*b, 5000, 256);
    ASSERT_TRUE(buf);
    ASSERT_EQ(fake->creates.size(), 1u);
    EXPECT_EQ(fake->creates[0].size, 5000u);
    EXPECT_EQ(fake->creates[0].alignment, 256u);
    EXPECT_EQ(fake->creates[0].flags, 0u);
    EXPECT_EQ(buf->size(), 5000u);
    EXPECT_EQ(buf->domain(), MemoryDomain::System);
    EXPECT_EQ(buf->device_address() % 256, 0u);
    EXPECT_EQ(fake->mappings, 1);

    // The CPU view is the object's memory.
    buf->data()[4999] = std::byte{0x5a};
    FakeDrm::Object* o = fake->object_of_handle(fake->creates.size());
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(o->memory[4999], std::byte{0x5a});
    EXPECT_EQ(o->dma, buf->device_address());

    buf.reset();
    EXPECT_EQ(fake->mappings, 0);
    EXPECT_EQ(fake->closed, std::vector<uint32_t>{1});
    EXPECT_EQ(fake->open_handles(), 0u);
}

TEST(DrmBackend, CreateBufferRejectsWhatTheKernelCannotDo) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    auto sram = b->create_buffer({4096, 32, MemoryDomain::Sram});
    ASSERT_FALSE(sram.ok());
    EXPECT_NE(sram.message().find("no SRAM (CV-SRAM) allocator"), std::string::npos);
    auto empty = b->create_buffer({0, 32, MemoryDomain::System});
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.message(), "drm /dev/dri/renderD128: a buffer of 0 bytes was requested");
    auto odd = b->create_buffer({64, 48, MemoryDomain::System});
    ASSERT_FALSE(odd.ok());
    EXPECT_EQ(odd.message(),
              "drm /dev/dri/renderD128: buffer of 64 bytes: alignment 48 is not a power of two");
    auto huge = b->create_buffer({64, 1ull << 31, MemoryDomain::System});
    ASSERT_FALSE(huge.ok());
    EXPECT_NE(huge.message().find("above the driver's limit of 1 GiB"), std::string::npos);
    EXPECT_TRUE(fake->creates.empty());  // none reached the kernel
}

TEST(DrmBackend, CreateBufferErrorsNameTheIoctl) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    fake->fail[DRM_IOCTL_NVDLA_BO_CREATE] = ENOMEM;
    auto r = b->create_buffer({1 << 20, 32, MemoryDomain::System});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(),
              "drm /dev/dri/renderD128: buffer of 1048576 bytes (alignment 32): BO_CREATE failed: "
              "ENOMEM (Cannot allocate memory): no contiguous range of that size is free in the "
              "16 MiB carve-out");

    fake->params[NVDLA_PARAM_MEMORY_SIZE] = 0;  // DMA memory
    auto b2 = open(fake);
    auto r2 = b2->create_buffer({1 << 20, 32, MemoryDomain::System});
    ASSERT_FALSE(r2.ok());
    EXPECT_NE(r2.message().find("could not allocate contiguous DMA memory"), std::string::npos);

    fake->fail.clear();
    fake->map_error = ENOMEM;
    auto r3 = b->create_buffer({4096, 32, MemoryDomain::System});
    ASSERT_FALSE(r3.ok());
    EXPECT_NE(r3.message().find("mmap of 4096 bytes at offset 0x"), std::string::npos)
        << r3.message();
    EXPECT_NE(r3.message().find("failed: ENOMEM"), std::string::npos) << r3.message();
    EXPECT_EQ(fake->open_handles(), 0u);  // the handle was closed again
}

TEST(DrmBackend, ExportUsesCloexecAndReadWrite) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    auto buf = create(*b, 4096);
    Result<int> fd = buf->export_dmabuf();
    ASSERT_TRUE(fd.ok()) << fd.message();
    EXPECT_GE(*fd, 1000);
    ASSERT_EQ(fake->exported_flags.size(), 1u);
    EXPECT_EQ(fake->exported_flags[0], uint32_t(DRM_CLOEXEC | DRM_RDWR));

    fake->fail[DRM_IOCTL_PRIME_HANDLE_TO_FD] = EOPNOTSUPP;
    Result<int> bad = buf->export_dmabuf();
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("PRIME_HANDLE_TO_FD failed: EOPNOTSUPP"), std::string::npos);
    EXPECT_EQ(bad.message().find("PCI BAR"), std::string::npos) << "carve-out buffers do export";
}

TEST(DrmBackend, ImportCountsHandlesTheKernelDeduplicates) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    auto own = create(*b, 8192);
    const int fd = *own->export_dmabuf();

    // Importing a buffer this file already has returns the same GEM handle.
    auto a = std::move(b->import_dmabuf(fd)).value();
    auto c = std::move(b->import_dmabuf(fd)).value();
    EXPECT_EQ(a->device_address(), own->device_address());
    EXPECT_EQ(a->size(), 8192u);
    EXPECT_EQ(fake->open_handles(), 1u);

    own.reset();
    a.reset();
    EXPECT_TRUE(fake->closed.empty());  // c still holds the handle
    EXPECT_TRUE(fake->handle_open(1));
    c->data()[0] = std::byte{1};
    c.reset();
    EXPECT_EQ(fake->closed, std::vector<uint32_t>{1});
    EXPECT_EQ(fake->mappings, 0);
}

TEST(DrmBackend, ImportOfAForeignDmabuf) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    const int fd = fake->foreign_dmabuf(3 * 4096);
    auto r = b->import_dmabuf(fd);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ((*r)->size(), 3u * 4096);
    EXPECT_NE((*r)->data(), nullptr);
}

TEST(DrmBackend, ImportErrorsExplainThemselves) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    auto neg = b->import_dmabuf(-1);
    ASSERT_FALSE(neg.ok());
    EXPECT_EQ(neg.message(),
              "drm /dev/dri/renderD128: import of dma-buf fd -1: not a file descriptor");
    auto unknown = b->import_dmabuf(77);
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.message(),
              "drm /dev/dri/renderD128: import of dma-buf fd 77: PRIME_FD_TO_HANDLE failed: "
              "EBADF (Bad file descriptor): not an open file descriptor");
    fake->fail[DRM_IOCTL_PRIME_FD_TO_HANDLE] = EINVAL;
    auto scattered = b->import_dmabuf(5);
    ASSERT_FALSE(scattered.ok());
    EXPECT_NE(scattered.message().find("single contiguous, page-aligned range"), std::string::npos);

    fake->fail.clear();
    const int fd = fake->foreign_dmabuf(4096);
    fake->fail[DRM_IOCTL_NVDLA_BO_INFO] = ENOENT;
    auto info = b->import_dmabuf(fd);
    ASSERT_FALSE(info.ok());
    EXPECT_NE(info.message().find("BO_INFO of GEM handle 1 failed: ENOENT"), std::string::npos);
    EXPECT_EQ(fake->open_handles(), 0u);
}

// Two threads import and drop the same dma-buf while no other Buffer holds it: a handle the
// kernel hands to one thread must never be closed by the other under it.
TEST(DrmBackend, ConcurrentImportsKeepHandlesValid) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    int fd = 0;
    {
        auto own = create(*b, 4096);
        fd = *own->export_dmabuf();
    }
    std::atomic<int> failures{0};
    // Each thread writes its own byte of the mapping (the writes show it is mapped).
    auto worker = [&](size_t byte) {
        for (int i = 0; i < 2000; ++i) {
            auto r = b->import_dmabuf(fd);
            if (!r.ok()) {
                ++failures;
                continue;
            }
            (*r)->data()[byte] = std::byte{2};
        }
    };
    std::thread t1(worker, 0), t2(worker, 1);
    t1.join();
    t2.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(fake->open_handles(), 0u);
    EXPECT_EQ(fake->mappings, 0);
}

// ---- Jobs ---------------------------------------------------------------------------------

TEST(DrmBackend, SubmitIsOneJobWithHandlesOffsetsAndVersion) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    auto desc = create(*b, 4096);
    auto data = create(*b, 65536);
    Task task;
    task.dla_version = 0x000c05;
    task.addresses = {{desc.get(), 0}, {data.get(), 0}, {data.get(), 1024}, {desc.get(), 64}};
    Result<JobId> id = b->submit(task);
    ASSERT_TRUE(id.ok()) << id.message();
    EXPECT_EQ(*id, 1u);
    ASSERT_EQ(fake->jobs.size(), 1u);
    const auto& s = fake->jobs[0];
    EXPECT_EQ(s.submit.job_count, 1u);
    EXPECT_EQ(s.submit.job_struct_size, sizeof(drm_nvdla_job));
    EXPECT_EQ(s.submit.job_struct_size, 48u);
    EXPECT_EQ(s.submit.flags, 0u);
    EXPECT_EQ(s.submit.pad, 0u);
    EXPECT_EQ(s.job.address_count, 4u);
    EXPECT_EQ(s.job.address_struct_size, 16u);
    EXPECT_EQ(s.job.dla_version, 0x000c05u);
    EXPECT_EQ(s.job.in_syncobj_count, 0u);
    EXPECT_EQ(s.job.in_syncobjs, 0u);
    EXPECT_EQ(s.job.out_syncobj, 0u);
    EXPECT_EQ(s.job.flags, 0u);
    EXPECT_EQ(s.job.pad, 0u);
    const uint32_t hd = 1, hb = 2;
    const std::vector<std::pair<uint32_t, uint64_t>> want = {
        {hd, 0}, {hb, 0}, {hb, 1024}, {hd, 64}};
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(s.addresses[i].handle, want[i].first) << i;
        EXPECT_EQ(s.addresses[i].offset, want[i].second) << i;
        EXPECT_EQ(s.addresses[i].flags, 0u) << i;
    }
    EXPECT_EQ(*b->submit(task), 2u);
}

TEST(DrmBackend, SubmitChecksTheAddressListFirst) {
    auto fake = std::make_shared<FakeDrm>();
    fake->params[NVDLA_PARAM_MAX_ADDRESSES] = 3;
    auto b = open(fake);
    auto other_fake = std::make_shared<FakeDrm>("/dev/dri/renderD129");
    auto other = open(other_fake);
    auto buf = create(*b, 4096);
    auto foreign = create(*other, 4096);
    const std::string prefix = "drm /dev/dri/renderD128: submit: ";

    auto expect_error = [&](const Task& t, const std::string& message) {
        Result<JobId> r = b->submit(t);
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.message(), prefix + message);
    };
    expect_error({}, "the task has no address list (entry 0 is the network descriptor)");
    expect_error({0, {{buf.get(), 0}, {nullptr, 0}}}, "address-list entry 1 has no buffer");
    expect_error({0, {{buf.get(), 0}, {foreign.get(), 0}}},
                 "address-list entry 1: the buffer was not created or imported by this drm "
                 "backend");
    expect_error({0, {{buf.get(), 4096}}},
                 "address-list entry 0: offset 4096 is past the end of its 4096-byte buffer");
    expect_error({0, {{buf.get(), 12}}},
                 "address-list entry 0: device address 0x8000000c (offset 12) is not a multiple "
                 "of the 8-byte atom");
    expect_error({0, {{buf.get(), 0}, {buf.get(), 8}, {buf.get(), 16}, {buf.get(), 24}}},
                 "the task has 4 address-list entries; the kernel takes at most 3");
    EXPECT_TRUE(fake->jobs.empty());
}

TEST(DrmBackend, SubmitErrorsNameTheIoctl) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    auto buf = create(*b, 4096);
    const Task task{0x000c05, {{buf.get(), 0}}};
    const std::string prefix = "drm /dev/dri/renderD128: submit: JOB_SUBMIT failed: ";

    fake->fail[DRM_IOCTL_NVDLA_JOB_SUBMIT] = ENODEV;
    EXPECT_EQ(b->submit(task).message(),
              prefix +
                  "ENODEV (No such device): the kernel driver has no engine yet and rejects "
                  "every job (docs/kernel-driver.md); use the emu backend");
    fake->params[NVDLA_PARAM_ENGINE] = 0x7e57;
    auto b2 = open(fake);
    auto buf2 = create(*b2, 4096);
    EXPECT_EQ(b2->submit({0, {{buf2.get(), 0}}}).message(),
              prefix + "ENODEV (No such device): the device is gone (unbound or removed)");

    fake->fail[DRM_IOCTL_NVDLA_JOB_SUBMIT] = EBUSY;
    EXPECT_EQ(b->submit(task).message(),
              prefix +
                  "EBUSY (Device or resource busy): 1024 jobs of this DRM file are "
                  "unfinished; wait for some");

    // EINVAL: the runtime's copy of the kernel's validator says which rule the task breaks
    // (here: a network descriptor of zeros names no operation).
    fake->fail[DRM_IOCTL_NVDLA_JOB_SUBMIT] = EINVAL;
    const std::string einval = b->submit(task).message();
    EXPECT_EQ(einval.rfind(prefix + "EINVAL (Invalid argument): ", 0), 0u) << einval;
    EXPECT_GT(einval.size(), (prefix + "EINVAL (Invalid argument): ").size()) << einval;
    EXPECT_EQ(einval.find("accepts it"), std::string::npos) << einval;

    fake->fail[DRM_IOCTL_NVDLA_JOB_SUBMIT] = EFAULT;
    EXPECT_EQ(b->submit(task).message(), prefix + "EFAULT (Bad address)");

    fake->fail.clear();
    fake->return_job_id = false;
    EXPECT_EQ(b->submit(task).message(),
              "drm /dev/dri/renderD128: submit: JOB_SUBMIT succeeded but returned no job id "
              "(kernel bug)");
}

TEST(DrmBackend, ValidateRunsTheKernelsChecksInUserspace) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    auto desc = create(*b, 4096);
    // The address-list checks, as submit() makes them.
    EXPECT_EQ(b->validate({0x000c05, {{desc.get(), 4}}}).message(),
              "drm /dev/dri/renderD128: validate: address-list entry 0: device address "
              "0x80000004 (offset 4) is not a multiple of the 8-byte atom");
    // The engine validator: a network descriptor of zeros is refused with its sentence.
    const std::string m = b->validate({0x000c05, {{desc.get(), 0}}}).message();
    EXPECT_EQ(m.rfind("drm /dev/dri/renderD128: validate: ", 0), 0u) << m;
    EXPECT_GT(m.size(), std::string("drm /dev/dri/renderD128: validate: ").size()) << m;
    // An unsupported interface version.
    const std::string v = b->validate({0x000100, {{desc.get(), 0}}}).message();
    EXPECT_NE(v.find("0.1.0"), std::string::npos) << v;
    EXPECT_TRUE(fake->jobs.empty());
}

TEST(DrmBackend, WaitUsesAnAbsoluteMonotonicDeadline) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    const int64_t before = now_ns();
    Status s = b->wait(7, std::chrono::milliseconds(250));
    const int64_t after = now_ns();
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(fake->waits.size(), 1u);
    const drm_nvdla_wait& w = fake->waits[0];
    EXPECT_EQ(w.job_id, 7u);
    EXPECT_EQ(w.flags, 0u);
    EXPECT_EQ(w.pad, 0u);
    EXPECT_GE(w.timeout_ns, before + 250000000);
    EXPECT_LE(w.timeout_ns, after + 250000000);

    // A negative timeout polls; an endless one saturates.
    EXPECT_TRUE(b->wait(7, std::chrono::nanoseconds(-5)).ok());
    EXPECT_LE(fake->waits[1].timeout_ns, now_ns());
    EXPECT_TRUE(b->wait(7, std::chrono::nanoseconds::max()).ok());
    EXPECT_EQ(fake->waits[2].timeout_ns, std::numeric_limits<int64_t>::max());
}

TEST(DrmBackend, WaitReportsTheJobsStatusAsASentence) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    const auto second = std::chrono::seconds(1);
    fake->wait_status = -ETIMEDOUT;
    EXPECT_EQ(b->wait(3, second).message(),
              "drm /dev/dri/renderD128: job 3 failed: ETIMEDOUT (Connection timed out): it ran "
              "longer than the kernel's job timeout (5000 ms) and the engine was reset");
    fake->wait_status = -EIO;
    EXPECT_EQ(b->wait(3, second).message(),
              "drm /dev/dri/renderD128: job 3 failed: EIO (Input/output error): the hardware "
              "reported an error");
    fake->wait_status = -ENODEV;
    EXPECT_NE(b->wait(3, second).message().find("no engine, or the device was unbound"),
              std::string::npos);

    fake->wait_status = 0;
    fake->wait_error = ETIMEDOUT;
    const Status late = b->wait(3, std::chrono::milliseconds(20));
    EXPECT_EQ(late.message(),
              "timed out: drm /dev/dri/renderD128: wait for job 3: not finished after 20 ms");
    EXPECT_TRUE(timed_out(late));
    fake->wait_error = ENOENT;
    EXPECT_EQ(b->wait(3, second).message(),
              "drm /dev/dri/renderD128: wait for job 3: WAIT failed: ENOENT (No such file or "
              "directory): this DRM file never had the job or has forgotten it (a file "
              "remembers its last 1024 jobs)");
    fake->wait_error = EINTR;
    EXPECT_EQ(b->wait(3, second).message(),
              "drm /dev/dri/renderD128: wait for job 3: WAIT failed: EINTR (Interrupted system "
              "call)");

    const size_t waits = fake->waits.size();
    EXPECT_NE(b->wait(0, second).message().find("no such job"), std::string::npos);
    EXPECT_NE(b->wait(1ull << 32, second).message().find("no such job"), std::string::npos);
    EXPECT_EQ(fake->waits.size(), waits);
}

TEST(DrmBackend, BuffersOutliveTheBackend) {
    auto fake = std::make_shared<FakeDrm>();
    auto b = open(fake);
    auto buf = create(*b, 4096);
    b.reset();
    buf->data()[0] = std::byte{3};
    buf.reset();
    EXPECT_EQ(fake->open_handles(), 0u);
    EXPECT_EQ(fake->mappings, 0);
}

// ---- Sentences ----------------------------------------------------------------------------

TEST(DrmBackend, ErrnoAndStatusSentences) {
    EXPECT_EQ(drm::errno_sentence(EINVAL), "EINVAL (Invalid argument)");
    EXPECT_EQ(drm::errno_sentence(ENOMEM), "ENOMEM (Cannot allocate memory)");
    EXPECT_EQ(drm::errno_sentence(4242), "error 4242");
    EXPECT_EQ(drm::job_status_sentence(0, 5000), "success");
    EXPECT_EQ(drm::job_status_sentence(5, 5000), "status 5 (not an errno)");
    EXPECT_EQ(drm::job_status_sentence(-ECANCELED, 5000),
              "ECANCELED (Operation canceled): cancelled by an engine reset (kernels 6.8 to 6.11 "
              "report a job that timed out this way)");
    EXPECT_EQ(drm::job_status_sentence(-EINVAL, 5000),
              "EINVAL (Invalid argument): the engine rejected the task");
    EXPECT_EQ(drm::job_status_sentence(-EFAULT, 5000), "EFAULT (Bad address)");
}

}  // namespace
}  // namespace nvdla::runtime
