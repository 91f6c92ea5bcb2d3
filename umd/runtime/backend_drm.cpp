// The drm backend: NVDLA through its kernel driver (kmd/, include/uapi/drm/nvdla_drm.h) with
// libdrm. docs/runtime-drm.md describes what it does and how each error reads.
//
// One render node, one DRM file per backend. Buffers are GEM objects created with BO_CREATE
// (or imported with PRIME) and mapped through the file; a task becomes one job of JOB_SUBMIT
// whose address list is {GEM handle, offset}; WAIT waits for it with an absolute deadline. The
// backend keeps no per-job state, so every call may come from any thread.
#include "runtime/backend_drm.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nvdla/hw/dla_engine.h"
#include "runtime/dla_validator.hpp"
#include "uapi/drm/nvdla_drm.h"

namespace nvdla::runtime {
namespace drm {

// ---- The interface's layouts (kernel-driver.md; the kernel asserts the same sizes) ----------

static_assert(sizeof(drm_nvdla_get_param) == 16);
static_assert(offsetof(drm_nvdla_get_param, value) == 8);
static_assert(sizeof(drm_nvdla_bo_create) == 40);
static_assert(offsetof(drm_nvdla_bo_create, flags) == 16);
static_assert(offsetof(drm_nvdla_bo_create, handle) == 20);
static_assert(offsetof(drm_nvdla_bo_create, dma_address) == 24);
static_assert(offsetof(drm_nvdla_bo_create, mmap_offset) == 32);
static_assert(sizeof(drm_nvdla_bo_info) == 32);
static_assert(offsetof(drm_nvdla_bo_info, size) == 8);
static_assert(offsetof(drm_nvdla_bo_info, mmap_offset) == 24);
static_assert(sizeof(drm_nvdla_address) == 16);
static_assert(offsetof(drm_nvdla_address, offset) == 8);
static_assert(sizeof(drm_nvdla_job) == 48);
static_assert(offsetof(drm_nvdla_job, address_count) == 16);
static_assert(offsetof(drm_nvdla_job, job_id) == 36);
static_assert(offsetof(drm_nvdla_job, dla_version) == 40);
static_assert(sizeof(drm_nvdla_submit) == 24);
static_assert(offsetof(drm_nvdla_submit, job_count) == 8);
static_assert(sizeof(drm_nvdla_wait) == 24);
static_assert(offsetof(drm_nvdla_wait, timeout_ns) == 8);
static_assert(offsetof(drm_nvdla_wait, status) == 16);
static_assert(DRM_IOCTL_NVDLA_GET_PARAM == 0xC0106444u);
static_assert(DRM_IOCTL_NVDLA_BO_CREATE == 0xC0286445u);
static_assert(DRM_IOCTL_NVDLA_BO_INFO == 0xC0206446u);
static_assert(DRM_IOCTL_NVDLA_JOB_SUBMIT == 0xC0186447u);
static_assert(DRM_IOCTL_NVDLA_WAIT == 0xC0186448u);

namespace {

constexpr const char* kDriverName = "nvdla";

// ---- The real file --------------------------------------------------------------------------

class SystemDrmFile final : public DrmFile {
  public:
    SystemDrmFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
    ~SystemDrmFile() override { ::close(fd_); }
    SystemDrmFile(const SystemDrmFile&) = delete;
    SystemDrmFile& operator=(const SystemDrmFile&) = delete;

    const std::string& path() const override { return path_; }

    int ioctl(unsigned long request, void* arg) override {
        return drmIoctl(fd_, request, arg) == 0 ? 0 : -errno;
    }

    int map(uint64_t offset, uint64_t length, void** address) override {
        if (length == 0 || length > std::numeric_limits<size_t>::max() ||
            offset > static_cast<uint64_t>(std::numeric_limits<off_t>::max()))
            return -EOVERFLOW;
        void* p = ::mmap(nullptr, static_cast<size_t>(length), PROT_READ | PROT_WRITE, MAP_SHARED,
                         fd_, static_cast<off_t>(offset));
        if (p == MAP_FAILED) return -errno;
        *address = p;
        return 0;
    }

    void unmap(void* address, uint64_t length) override {
        ::munmap(address, static_cast<size_t>(length));
    }

  private:
    int fd_;
    std::string path_;
};

std::string hint_for_open(int err) {
    switch (err) {
        case EACCES:
        case EPERM: return " (render nodes belong to the 'render' group: add the user to it)";
        case ENOENT: return " (no such file: is nvdla.ko loaded? docs/kernel-driver.md)";
        default: return "";
    }
}

uint64_t page_size() {
    const long p = ::sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<uint64_t>(p) : 4096;
}

// ---- The device a backend and its buffers share ---------------------------------------------

struct DeviceParams {
    uint64_t api_version = 0;
    uint64_t driver_version = 0;
    uint64_t uapi_config = 0;
    uint64_t features = 0;
    uint64_t atom_bytes = 0;
    uint64_t address_bits = 0;
    uint64_t memory_size = 0;
    uint64_t bo_alignment = 0;
    uint64_t max_addresses = 0;
    uint64_t max_jobs = 0;
    uint64_t job_timeout_ms = 0;
    uint64_t engine = 0;
};

// The DRM file and what every buffer needs from it. GEM handles are per file and PRIME import
// of a buffer this file already knows returns its existing handle, so handles are counted:
// the last Buffer holding a handle closes it.
class Device {
  public:
    Device(std::shared_ptr<DrmFile> file, const HwConfig* config, DeviceParams params)
        : file_(std::move(file)), config_(config), params_(params) {}

    DrmFile& file() { return *file_; }
    const std::string& path() const { return file_->path(); }
    const HwConfig& config() const { return *config_; }
    const DeviceParams& params() const { return params_; }

    // Takes one reference on a handle the kernel just returned. PRIME import can return a
    // handle a Buffer already holds, so it runs under handle_lock() until the count is taken.
    void hold_handle_locked(uint32_t handle, const std::unique_lock<std::mutex>& /*lock*/) {
        ++refs_[handle];
    }
    std::unique_lock<std::mutex> handle_lock() { return std::unique_lock<std::mutex>(mutex_); }

    // Drops one reference; the last closes the GEM handle.
    void release_handle(uint32_t handle) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = refs_.find(handle);
        if (it == refs_.end() || --it->second > 0) return;
        refs_.erase(it);
        drm_gem_close args{};
        args.handle = handle;
        file_->ioctl(DRM_IOCTL_GEM_CLOSE, &args);  // nothing to do if it fails: handle is gone
    }

  private:
    std::shared_ptr<DrmFile> file_;
    const HwConfig* config_;
    DeviceParams params_;
    std::mutex mutex_;
    std::unordered_map<uint32_t, uint32_t> refs_;
};

std::string describe_bytes(uint64_t bytes) {
    std::ostringstream out;
    if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
        out << (bytes >> 20) << " MiB";
    else
        out << bytes << " bytes";
    return out.str();
}

class DrmBuffer final : public Buffer {
  public:
    DrmBuffer(std::shared_ptr<Device> device, uint32_t handle, uint64_t size, uint64_t address,
              std::byte* map, uint64_t map_length)
        : device_(std::move(device)),
          handle_(handle),
          size_(size),
          address_(address),
          map_(map),
          map_length_(map_length) {}
    ~DrmBuffer() override {
        device_->file().unmap(map_, map_length_);
        device_->release_handle(handle_);
    }
    DrmBuffer(const DrmBuffer&) = delete;
    DrmBuffer& operator=(const DrmBuffer&) = delete;

    uint64_t size() const override { return size_; }
    uint64_t device_address() const override { return address_; }
    MemoryDomain domain() const override { return MemoryDomain::System; }
    std::byte* data() override { return map_; }

    Result<int> export_dmabuf() override {
        drm_prime_handle args{};
        args.handle = handle_;
        args.flags = DRM_CLOEXEC | DRM_RDWR;
        if (int r = device_->file().ioctl(DRM_IOCTL_PRIME_HANDLE_TO_FD, &args); r < 0) {
            return error("drm ", device_->path(), ": export of buffer (GEM handle ", handle_,
                         ") as a dma-buf: PRIME_HANDLE_TO_FD failed: ", errno_sentence(-r));
        }
        return args.fd;
    }

    const Device* device() const { return device_.get(); }
    uint32_t handle() const { return handle_; }

  private:
    std::shared_ptr<Device> device_;
    uint32_t handle_;
    uint64_t size_;
    uint64_t address_;
    std::byte* map_;
    uint64_t map_length_;
};

// ---- The backend ----------------------------------------------------------------------------

class DrmBackend final : public Backend {
  public:
    DrmBackend(std::shared_ptr<Device> device, BackendInfo info)
        : device_(std::move(device)), info_(std::move(info)) {}

    const BackendInfo& info() const override { return info_; }

    Result<std::unique_ptr<Buffer>> create_buffer(const BufferRequest& request) override;
    Result<std::unique_ptr<Buffer>> import_dmabuf(int fd) override;
    Result<JobId> submit(const Task& task) override;
    Status wait(JobId job, std::chrono::nanoseconds timeout) override;
    Status validate(const Task& task) override;

  private:
    Result<std::unique_ptr<Buffer>> map_buffer(uint32_t handle, uint64_t size, uint64_t address,
                                               uint64_t mmap_offset, const std::string& what);
    Status check_address_list(const Task& task, const std::string& what,
                              std::vector<drm_nvdla_address>* list) const;
    std::string run_validator(const Task& task) const;
    std::string device_name() const { return "drm " + device_->path(); }

    std::shared_ptr<Device> device_;
    BackendInfo info_;
};

Result<std::unique_ptr<Buffer>> DrmBackend::map_buffer(uint32_t handle, uint64_t size,
                                                       uint64_t address, uint64_t mmap_offset,
                                                       const std::string& what) {
    // The kernel maps whole pages; so do we.
    const uint64_t page = page_size();
    const uint64_t length =
        size <= std::numeric_limits<uint64_t>::max() - page ? (size + page - 1) / page * page : 0;
    void* map = nullptr;
    if (int r = length ? device_->file().map(mmap_offset, length, &map) : -EOVERFLOW; r < 0) {
        device_->release_handle(handle);
        return error(device_name(), ": ", what, ": mmap of ", length, " bytes at offset 0x",
                     std::hex, mmap_offset, std::dec, " failed: ", errno_sentence(-r));
    }
    return std::unique_ptr<Buffer>(std::make_unique<DrmBuffer>(
        device_, handle, size, address, static_cast<std::byte*>(map), length));
}

Result<std::unique_ptr<Buffer>> DrmBackend::create_buffer(const BufferRequest& request) {
    std::ostringstream what_stream;
    what_stream << "buffer of " << request.size << " bytes";
    const std::string what = what_stream.str();
    if (request.domain == MemoryDomain::Sram)
        return error(device_name(), ": ", what, ": the kernel driver has no SRAM (CV-SRAM) ",
                     "allocator; only system memory can be allocated");
    if (request.size == 0) return error(device_name(), ": a buffer of 0 bytes was requested");
    if (request.alignment != 0 && (request.alignment & (request.alignment - 1)) != 0)
        return error(device_name(), ": ", what, ": alignment ", request.alignment,
                     " is not a power of two");
    if (request.alignment > (1ull << 30))
        return error(device_name(), ": ", what, ": alignment ", request.alignment,
                     " is above the driver's limit of 1 GiB");

    drm_nvdla_bo_create args{};
    args.size = request.size;
    args.alignment = request.alignment;
    // A new object gets a handle no Buffer holds: the kernel reuses a number only after its
    // GEM_CLOSE, which release_handle() issues under the lock as it drops the last count.
    if (int r = device_->file().ioctl(DRM_IOCTL_NVDLA_BO_CREATE, &args); r < 0) {
        std::string why = errno_sentence(-r);
        if (r == -ENOMEM) {
            const uint64_t memory = device_->params().memory_size;
            why += memory ? ": no contiguous range of that size is free in the " +
                                describe_bytes(memory) + " carve-out"
                          : ": the kernel could not allocate contiguous DMA memory of that "
                            "size (enable CMA, e.g. cma=256M, or give the device a "
                            "carve-out; docs/kernel-driver.md)";
        }
        return error(device_name(), ": ", what, " (alignment ", request.alignment,
                     "): BO_CREATE failed: ", why);
    }
    const uint32_t handle = args.handle;
    device_->hold_handle_locked(handle, device_->handle_lock());
    if (request.alignment != 0 && args.dma_address % request.alignment != 0) {
        device_->release_handle(handle);
        return error(device_name(), ": ", what, ": the kernel returned device address 0x", std::hex,
                     args.dma_address, std::dec, ", not ", request.alignment,
                     "-byte aligned as requested");
    }
    return map_buffer(handle, request.size, args.dma_address, args.mmap_offset, what);
}

Result<std::unique_ptr<Buffer>> DrmBackend::import_dmabuf(int fd) {
    std::ostringstream what_stream;
    what_stream << "import of dma-buf fd " << fd;
    const std::string what = what_stream.str();
    if (fd < 0) return error(device_name(), ": ", what, ": not a file descriptor");

    uint32_t handle = 0;
    {
        auto lock = device_->handle_lock();
        drm_prime_handle prime{};
        prime.fd = fd;
        if (int r = device_->file().ioctl(DRM_IOCTL_PRIME_FD_TO_HANDLE, &prime); r < 0) {
            std::string why = errno_sentence(-r);
            if (r == -EBADF)
                why += ": not an open file descriptor";
            else if (r == -EINVAL)
                why +=
                    ": not a dma-buf, or one that does not map to a single contiguous, "
                    "page-aligned range of device addresses (NVDLA has no MMU)";
            return error(device_name(), ": ", what, ": PRIME_FD_TO_HANDLE failed: ", why);
        }
        handle = prime.handle;
        device_->hold_handle_locked(handle, lock);
    }

    drm_nvdla_bo_info info{};
    info.handle = handle;
    if (int r = device_->file().ioctl(DRM_IOCTL_NVDLA_BO_INFO, &info); r < 0) {
        device_->release_handle(handle);
        return error(device_name(), ": ", what, ": BO_INFO of GEM handle ", handle,
                     " failed: ", errno_sentence(-r));
    }
    if (info.size == 0) {
        device_->release_handle(handle);
        return error(device_name(), ": ", what, ": the kernel reports a buffer of 0 bytes");
    }
    return map_buffer(handle, info.size, info.dma_address, info.mmap_offset, what);
}

// What the kernel's engine validator (the same C code, kmd/engine/dla_validate.c) says about
// the task: "" when it accepts it, else the sentence of the rule it breaks. Only called after
// check_address_list(), so every entry is a mapped DrmBuffer and its offset lies inside it.
std::string DrmBackend::run_validator(const Task& task) const {
    const DlaValidation v = validate_task(device_->config(), task);
    return v.accepted() ? "" : v.error.message;
}

// The checks the kernel makes on the address list before the engine sees the task, with
// sentences that say which entry is wrong (the kernel only returns EINVAL).
Status DrmBackend::check_address_list(const Task& task, const std::string& what,
                                      std::vector<drm_nvdla_address>* list) const {
    const DeviceParams& p = device_->params();
    if (task.addresses.empty())
        return error(what, ": the task has no address list (entry 0 is the network descriptor)");
    if (p.max_addresses != 0 && task.addresses.size() > p.max_addresses)
        return error(what, ": the task has ", task.addresses.size(),
                     " address-list entries; the kernel takes at most ", p.max_addresses);
    list->assign(task.addresses.size(), drm_nvdla_address{});
    for (size_t i = 0; i < task.addresses.size(); ++i) {
        const Address& a = task.addresses[i];
        const auto* buffer = dynamic_cast<const DrmBuffer*>(a.buffer);
        if (a.buffer == nullptr) return error(what, ": address-list entry ", i, " has no buffer");
        if (buffer == nullptr || buffer->device() != device_.get())
            return error(what, ": address-list entry ", i,
                         ": the buffer was not created or imported by this drm backend");
        if (a.offset >= buffer->size())
            return error(what, ": address-list entry ", i, ": offset ", a.offset,
                         " is past the end of its ", buffer->size(), "-byte buffer");
        const uint64_t address = buffer->device_address() + a.offset;
        if (p.atom_bytes != 0 && address % p.atom_bytes != 0)
            return error(what, ": address-list entry ", i, ": device address 0x", std::hex, address,
                         std::dec, " (offset ", a.offset, ") is not a multiple of the ",
                         p.atom_bytes, "-byte atom");
        (*list)[i].handle = buffer->handle();
        (*list)[i].offset = a.offset;
    }
    return {};
}

Status DrmBackend::validate(const Task& task) {
    const std::string what = device_name() + ": validate";
    std::vector<drm_nvdla_address> list;
    if (Status s = check_address_list(task, what, &list); !s) return s;
    const std::string reason = run_validator(task);
    if (!reason.empty()) return error(what, ": ", reason);
    return {};
}

Result<JobId> DrmBackend::submit(const Task& task) {
    const DeviceParams& p = device_->params();
    const std::string what = device_name() + ": submit";
    std::vector<drm_nvdla_address> list;
    if (Status s = check_address_list(task, what, &list); !s) return s;

    drm_nvdla_job job{};
    job.addresses = reinterpret_cast<uintptr_t>(list.data());
    job.address_count = static_cast<uint32_t>(list.size());
    job.address_struct_size = sizeof(drm_nvdla_address);
    job.dla_version = task.dla_version;
    drm_nvdla_submit args{};
    args.jobs = reinterpret_cast<uintptr_t>(&job);
    args.job_count = 1;
    args.job_struct_size = sizeof(drm_nvdla_job);

    if (int r = device_->file().ioctl(DRM_IOCTL_NVDLA_JOB_SUBMIT, &args); r < 0) {
        std::string why = "JOB_SUBMIT failed: " + errno_sentence(-r);
        switch (r) {
            case -ENODEV:
                why += p.engine == NVDLA_ENGINE_NONE
                           ? ": the kernel driver has no engine yet and rejects every job "
                             "(docs/kernel-driver.md); use the emu backend"
                           : ": the device is gone (unbound or removed)";
                break;
            case -EBUSY: why += ": 1024 jobs of this DRM file are unfinished; wait for some"; break;
            case -ENOENT:
                why += ": a GEM handle of the address list is unknown to the kernel";
                break;
            case -EINVAL:
            case -EOPNOTSUPP: {
                const std::string reason = run_validator(task);
                why += reason.empty()
                           ? ": the kernel rejected the task although the runtime's validator "
                             "accepts it (are the kernel module and the library the same "
                             "version?)"
                           : ": " + reason;
                break;
            }
            default: break;
        }
        return error(what, ": ", why);
    }
    if (job.job_id == 0)
        return error(what, ": JOB_SUBMIT succeeded but returned no job id (kernel bug)");
    return JobId{job.job_id};
}

int64_t monotonic_now_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

Status DrmBackend::wait(JobId job, std::chrono::nanoseconds timeout) {
    const std::string what = device_name() + ": wait for job " + std::to_string(job);
    if (job == 0 || job > std::numeric_limits<uint32_t>::max())
        return error(what, ": no such job (the kernel's job ids are 1 to 2^32-1)");

    // Absolute deadline: a WAIT restarted after a signal keeps it.
    const int64_t now = monotonic_now_ns();
    const int64_t relative = std::max<int64_t>(timeout.count(), 0);
    const int64_t deadline = relative > std::numeric_limits<int64_t>::max() - now
                                 ? std::numeric_limits<int64_t>::max()
                                 : now + relative;

    drm_nvdla_wait args{};
    args.job_id = static_cast<uint32_t>(job);
    args.timeout_ns = deadline;
    if (int r = device_->file().ioctl(DRM_IOCTL_NVDLA_WAIT, &args); r < 0) {
        if (r == -ETIMEDOUT) {
            // The runtime recognises a timeout by its first words (kTimedOut).
            std::ostringstream out;
            out << kTimedOut << ": " << what << ": not finished after " << relative / 1000000.0
                << " ms";
            return error(out.str());
        }
        std::string why = errno_sentence(-r);
        if (r == -ENOENT)
            why +=
                ": this DRM file never had the job or has forgotten it (a file remembers its "
                "last 1024 jobs)";
        return error(what, ": WAIT failed: ", why);
    }
    if (args.status != 0)
        return error(device_name(), ": job ", job, " failed: ",
                     job_status_sentence(args.status, device_->params().job_timeout_ms));
    return {};
}

// ---- Opening --------------------------------------------------------------------------------

Result<uint64_t> get_param(DrmFile& file, uint32_t param, const char* name) {
    drm_nvdla_get_param args{};
    args.param = param;
    if (int r = file.ioctl(DRM_IOCTL_NVDLA_GET_PARAM, &args); r < 0) {
        std::string why = errno_sentence(-r);
        if (r == -ENOTTY)
            why += ": the device is not driven by the nvdla kernel module";
        else if (r == -EINVAL)
            why += ": the kernel module does not know this parameter (too old?)";
        return error("drm ", file.path(), ": GET_PARAM ", name, " failed: ", why);
    }
    return args.value;
}

std::string version_string(uint64_t v) {
    std::ostringstream out;
    out << (v >> 32) << '.' << ((v >> 16) & 0xffff) << '.' << (v & 0xffff);
    return out.str();
}

struct RenderNode {
    unsigned number;
    std::string path;
};

struct RenderNodeSearch {
    std::string path;                  // the nvdla node, or empty
    std::vector<std::string> skipped;  // "renderD128: driver i915", ...
};

// Nodes named <prefix><N> in `dir` (renderD128 in /dev/dri, accel0 in /dev/accel), lowest N
// first, until one is nvdla's.
RenderNodeSearch search_nodes(const std::string& dir, std::string_view prefix,
                              const DriverLookup& driver_of) {
    RenderNodeSearch result;
    std::vector<RenderNode> nodes;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
        unsigned number = 0;
        const char* first = name.data() + prefix.size();
        const char* last = name.data() + name.size();
        auto [ptr, err] = std::from_chars(first, last, number);
        if (err != std::errc() || ptr != last) continue;
        nodes.push_back({number, it->path().string()});
    }
    std::sort(nodes.begin(), nodes.end(),
              [](const RenderNode& a, const RenderNode& b) { return a.number < b.number; });
    for (const RenderNode& node : nodes) {
        Result<std::string> driver = driver_of(node.path);
        if (driver.ok() && *driver == kDriverName) {
            result.path = node.path;
            return result;
        }
        result.skipped.push_back(driver.ok() ? node.path + ": driver '" + *driver + "'"
                                             : driver.message());
    }
    return result;
}

// Render nodes first (the default), then compute-accelerator nodes (nvdla.ko accel=1).
RenderNodeSearch search_nvdla_nodes(const std::string& dri_dir, const std::string& accel_dir,
                                    const DriverLookup& driver_of) {
    RenderNodeSearch result = search_nodes(dri_dir, "renderD", driver_of);
    if (!result.path.empty()) return result;
    RenderNodeSearch accel = search_nodes(accel_dir, "accel", driver_of);
    accel.skipped.insert(accel.skipped.begin(), result.skipped.begin(), result.skipped.end());
    return accel;
}

}  // namespace

std::string errno_sentence(int err) {
    const char* name = strerrorname_np(err);
    const char* text = strerrordesc_np(err);
    if (name == nullptr || text == nullptr) return "error " + std::to_string(err);
    return std::string(name) + " (" + text + ")";
}

std::string job_status_sentence(int status, uint64_t job_timeout_ms) {
    if (status == 0) return "success";
    if (status > 0) return "status " + std::to_string(status) + " (not an errno)";
    std::string s = errno_sentence(-status);
    switch (-status) {
        case ENODEV: return s + ": the kernel driver has no engine, or the device was unbound";
        case ETIMEDOUT:
            return s + ": it ran longer than the kernel's job timeout (" +
                   std::to_string(job_timeout_ms) + " ms) and the engine was reset";
        case ECANCELED:
            return s +
                   ": cancelled by an engine reset (kernels 6.8 to 6.11 report a job that "
                   "timed out this way)";
        case EIO: return s + ": the hardware reported an error";
        case EINVAL: return s + ": the engine rejected the task";
        default: return s;
    }
}

const char* hw_config_name(uint64_t uapi_config) {
    switch (uapi_config) {
        case NVDLA_HW_CONFIG_NV_FULL: return "nv_full";
        case NVDLA_HW_CONFIG_NV_SMALL: return "nv_small";
        case NVDLA_HW_CONFIG_NV_SMALL_256: return "nv_small_256";
        case NVDLA_HW_CONFIG_NV_SMALL_256_FULL: return "nv_small_256_full";
        case NVDLA_HW_CONFIG_NV_MEDIUM_512: return "nv_medium_512";
        case NVDLA_HW_CONFIG_NV_MEDIUM_1024_FULL: return "nv_medium_1024_full";
        case NVDLA_HW_CONFIG_NV_LARGE: return "nv_large";
        default: return nullptr;
    }
}

Result<std::shared_ptr<DrmFile>> open_drm_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        return error("drm: cannot open ", path, ": ", errno_sentence(err), hint_for_open(err));
    }
    return std::shared_ptr<DrmFile>(std::make_shared<SystemDrmFile>(fd, path));
}

Result<std::string> drm_driver_name(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        return error(path, ": cannot open: ", errno_sentence(err), hint_for_open(err));
    }
    drmVersionPtr version = drmGetVersion(fd);
    const int err = errno;
    ::close(fd);
    if (version == nullptr)
        return error(path, ": not a DRM device (drmGetVersion failed: ", errno_sentence(err), ")");
    std::string name =
        version->name != nullptr
            ? std::string(version->name, static_cast<size_t>(std::max(version->name_len, 0)))
            : std::string();
    drmFreeVersion(version);
    // name_len counts the bytes the kernel wrote; a NUL inside would end the C string.
    name.erase(std::find(name.begin(), name.end(), '\0'), name.end());
    return name;
}

std::string find_nvdla_render_node_in(const std::string& dir, const DriverLookup& driver_of) {
    return search_nodes(dir, "renderD", driver_of).path;
}

std::string find_nvdla_node_in(const std::string& dri_dir, const std::string& accel_dir,
                               const DriverLookup& driver_of) {
    return search_nvdla_nodes(dri_dir, accel_dir, driver_of).path;
}

Result<std::unique_ptr<Backend>> open_drm_backend_on(std::shared_ptr<DrmFile> file) {
    DrmFile& f = *file;
    DeviceParams p;
    struct Param {
        uint32_t id;
        const char* name;
        uint64_t* value;
    };
    const Param params[] = {
        {NVDLA_PARAM_API_VERSION, "API_VERSION", &p.api_version},
        {NVDLA_PARAM_DRIVER_VERSION, "DRIVER_VERSION", &p.driver_version},
        {NVDLA_PARAM_HW_CONFIG, "HW_CONFIG", &p.uapi_config},
        {NVDLA_PARAM_HW_FEATURES, "HW_FEATURES", &p.features},
        {NVDLA_PARAM_ATOM_BYTES, "ATOM_BYTES", &p.atom_bytes},
        {NVDLA_PARAM_ADDRESS_BITS, "ADDRESS_BITS", &p.address_bits},
        {NVDLA_PARAM_MEMORY_SIZE, "MEMORY_SIZE", &p.memory_size},
        {NVDLA_PARAM_BO_ALIGNMENT, "BO_ALIGNMENT", &p.bo_alignment},
        {NVDLA_PARAM_MAX_ADDRESSES, "MAX_ADDRESSES", &p.max_addresses},
        {NVDLA_PARAM_MAX_JOBS, "MAX_JOBS", &p.max_jobs},
        {NVDLA_PARAM_JOB_TIMEOUT_MS, "JOB_TIMEOUT_MS", &p.job_timeout_ms},
        {NVDLA_PARAM_ENGINE, "ENGINE", &p.engine},
    };
    for (const Param& param : params) {
        Result<uint64_t> v = get_param(f, param.id, param.name);
        if (!v) return v.status();
        *param.value = *v;
        if (param.id == NVDLA_PARAM_API_VERSION && p.api_version < NVDLA_API_VERSION)
            return error("drm ", f.path(), ": the kernel module's interface version is ",
                         p.api_version, "; this runtime needs ", NVDLA_API_VERSION);
    }

    const char* name = hw_config_name(p.uapi_config);
    if (name == nullptr)
        return error("drm ", f.path(), ": the kernel reports hardware configuration ",
                     p.uapi_config, ", which this runtime does not know (newer kernel module?)");
    Result<const HwConfig*> config = find_hw_config(name);
    if (!config) return config.status();
    const HwConfig& cfg = **config;
    if (p.atom_bytes != cfg.atom_bytes || p.features != cfg.features)
        return error("drm ", f.path(), ": the kernel's ", name, " has a ", p.atom_bytes,
                     "-byte atom and features 0x", std::hex, p.features, "; this runtime's has a ",
                     std::dec, cfg.atom_bytes, "-byte atom and 0x", std::hex, cfg.features,
                     " (kernel module and library disagree)");

    BackendInfo info;
    info.name = "drm";
    std::ostringstream device;
    device << f.path() << " (nvdla " << name << ", driver " << version_string(p.driver_version)
           << ", engine ";
    if (p.engine == NVDLA_ENGINE_NONE)
        device << "none: jobs are rejected";
    else
        device << "0x" << std::hex << p.engine;
    device << ')';
    info.device = device.str();
    info.config = &cfg;
    info.memory_bytes = p.memory_size;

    auto shared = std::make_shared<Device>(std::move(file), &cfg, p);
    return std::unique_ptr<Backend>(std::make_unique<DrmBackend>(std::move(shared), info));
}

}  // namespace drm

std::string find_nvdla_render_node() {
    return drm::find_nvdla_node_in("/dev/dri", "/dev/accel", drm::drm_driver_name);
}

Result<std::unique_ptr<Backend>> open_drm_backend(const BackendOptions& options) {
    std::string path = options.drm_device;
    if (path.empty()) {
        drm::RenderNodeSearch search =
            drm::search_nvdla_nodes("/dev/dri", "/dev/accel", drm::drm_driver_name);
        if (search.path.empty()) {
            std::string seen;
            for (const std::string& s : search.skipped) seen += (seen.empty() ? "" : "; ") + s;
            return error("drm: no nvdla render node in /dev/dri nor accel node in /dev/accel",
                         seen.empty() ? std::string(" (no render or accel nodes at all)")
                                      : " (" + seen + ")",
                         ": is nvdla.ko loaded (docs/kernel-driver.md)? NVDLA_BACKEND=emu runs "
                         "on the emulated accelerator");
        }
        path = search.path;
    } else {
        Result<std::string> driver = drm::drm_driver_name(path);
        if (!driver) return error("drm: ", driver.message());
        if (*driver != drm::kDriverName)
            return error("drm: ", path, " is driven by '", *driver, "', not nvdla");
    }
    Result<std::shared_ptr<drm::DrmFile>> file = drm::open_drm_file(path);
    if (!file) return file.status();
    return drm::open_drm_backend_on(std::move(file).value());
}

}  // namespace nvdla::runtime
