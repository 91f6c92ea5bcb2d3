// Internal: the pieces of the drm backend (backend_drm.cpp) that tests reach without a device.
//
// The backend talks to a render node only through DrmFile (ioctl, mmap, munmap), so a test can
// put a fake kernel behind it; render-node discovery takes the directory to search and the way
// to learn a node's driver, so a test can search a fake /dev tree.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "runtime/backend.hpp"

namespace nvdla::runtime::drm {

// An open DRM file. ioctl() restarts on EINTR/EAGAIN and returns 0 or -errno.
class DrmFile {
  public:
    virtual ~DrmFile() = default;
    virtual const std::string& path() const = 0;
    virtual int ioctl(unsigned long request, void* arg) = 0;
    // Maps `length` bytes at `offset` of the file shared, read and write; 0 or -errno.
    virtual int map(uint64_t offset, uint64_t length, void** address) = 0;
    virtual void unmap(void* address, uint64_t length) = 0;
};

// Opens a render node (O_RDWR | O_CLOEXEC). The error names the path and errno, with a hint
// for EACCES (the 'render' group) and ENOENT.
Result<std::shared_ptr<DrmFile>> open_drm_file(const std::string& path);

// The kernel driver's name behind a DRM file ("nvdla", "i915"), or an error when the file is
// not a DRM device (drmGetVersion fails).
Result<std::string> drm_driver_name(const std::string& path);

// The first render node (renderD<N>, lowest N first) in `dir` whose driver, as `driver_of`
// tells, is "nvdla"; "" when there is none. Entries whose driver cannot be learnt are skipped.
using DriverLookup = std::function<Result<std::string>(const std::string& path)>;
std::string find_nvdla_render_node_in(const std::string& dir, const DriverLookup& driver_of);
// The same in `dri_dir`, then, when it has none, the first compute-accelerator node (accel<N>)
// in `accel_dir` (nvdla.ko loaded with accel=1 registers those instead of render nodes).
std::string find_nvdla_node_in(const std::string& dri_dir, const std::string& accel_dir,
                               const DriverLookup& driver_of);

// The backend on an already open file (GET_PARAM decides the configuration).
Result<std::unique_ptr<Backend>> open_drm_backend_on(std::shared_ptr<DrmFile> file);

// "EINVAL (Invalid argument)" for 22; "error 4242" for a number libc does not know.
std::string errno_sentence(int err);

// What a job status from DRM_IOCTL_NVDLA_WAIT means (0 or a negative errno), as the tail of
// "job 7 failed: ...". job_timeout_ms is the kernel's (NVDLA_PARAM_JOB_TIMEOUT_MS).
std::string job_status_sentence(int status, uint64_t job_timeout_ms);

// The configuration name of an NVDLA_HW_CONFIG_* value, or nullptr.
const char* hw_config_name(uint64_t uapi_config);

}  // namespace nvdla::runtime::drm
