// A fake nvdla kernel driver behind drm::DrmFile: GEM objects in host memory, handles as the
// kernel numbers them (lowest free first, so numbers are reused), PRIME export/import with the
// kernel's de-duplication (importing an object the file knows returns its handle), JOB_SUBMIT
// and WAIT recorded for inspection, and errors injected per ioctl.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/backend_drm.hpp"
#include "uapi/drm/nvdla_drm.h"

namespace nvdla::test {

class FakeDrm : public runtime::drm::DrmFile {
  public:
    struct Object {
        uint64_t size = 0;
        uint64_t dma = 0;
        uint64_t mmap_offset = 0;
        std::vector<std::byte> memory;
    };
    struct SubmittedJob {
        drm_nvdla_job job;
        std::vector<drm_nvdla_address> addresses;
        drm_nvdla_submit submit;
    };

    explicit FakeDrm(std::string path = "/dev/dri/renderD128") : path_(std::move(path)) {
        params[NVDLA_PARAM_API_VERSION] = NVDLA_API_VERSION;
        params[NVDLA_PARAM_DRIVER_VERSION] = (1ull << 32) | (2u << 16) | 3u;
        params[NVDLA_PARAM_HW_CONFIG] = NVDLA_HW_CONFIG_NV_SMALL;
        params[NVDLA_PARAM_HW_FEATURES] = config("nv_small").features;
        params[NVDLA_PARAM_ATOM_BYTES] = 8;
        params[NVDLA_PARAM_MAC_ATOMIC_C] = 8;
        params[NVDLA_PARAM_MAC_ATOMIC_K] = 8;
        params[NVDLA_PARAM_CBUF_BYTES] = 128 * 1024;
        params[NVDLA_PARAM_ADDRESS_BITS] = 32;
        params[NVDLA_PARAM_MEMORY_SIZE] = 16u << 20;
        params[NVDLA_PARAM_BO_ALIGNMENT] = 4096;
        params[NVDLA_PARAM_MAX_ADDRESSES] = 6144;
        params[NVDLA_PARAM_MAX_JOBS] = 64;
        params[NVDLA_PARAM_JOB_TIMEOUT_MS] = 5000;
        params[NVDLA_PARAM_ENGINE] = NVDLA_ENGINE_NONE;
    }

    static const HwConfig& config(const char* name) { return **find_hw_config(name); }

    const std::string& path() const override { return path_; }

    int ioctl(unsigned long request, void* arg) override {
        std::lock_guard<std::mutex> lock(mutex_);
        ++calls[request];
        if (auto it = fail.find(request); it != fail.end()) return -it->second;
        switch (request) {
            case DRM_IOCTL_NVDLA_GET_PARAM:
                return get_param(*static_cast<drm_nvdla_get_param*>(arg));
            case DRM_IOCTL_NVDLA_BO_CREATE:
                return bo_create(*static_cast<drm_nvdla_bo_create*>(arg));
            case DRM_IOCTL_NVDLA_BO_INFO: return bo_info(*static_cast<drm_nvdla_bo_info*>(arg));
            case DRM_IOCTL_GEM_CLOSE: return gem_close(*static_cast<drm_gem_close*>(arg));
            case DRM_IOCTL_PRIME_HANDLE_TO_FD:
                return prime_export(*static_cast<drm_prime_handle*>(arg));
            case DRM_IOCTL_PRIME_FD_TO_HANDLE:
                return prime_import(*static_cast<drm_prime_handle*>(arg));
            case DRM_IOCTL_NVDLA_JOB_SUBMIT:
                return job_submit(*static_cast<drm_nvdla_submit*>(arg));
            case DRM_IOCTL_NVDLA_WAIT: return wait(*static_cast<drm_nvdla_wait*>(arg));
            default: return -ENOTTY;
        }
    }

    int map(uint64_t offset, uint64_t length, void** address) override {
        std::lock_guard<std::mutex> lock(mutex_);
        if (map_error) return -map_error;
        for (auto& [id, o] : objects_) {
            if (o.mmap_offset == offset) {
                if (length > o.memory.size()) return -EINVAL;
                *address = o.memory.data();
                ++mappings;
                return 0;
            }
        }
        return -EINVAL;
    }

    void unmap(void*, uint64_t) override {
        std::lock_guard<std::mutex> lock(mutex_);
        --mappings;
    }

    // ---- inspection and injection (tests hold no other thread while they use these) ----
    std::map<uint32_t, uint64_t> params;
    std::map<unsigned long, int> fail;  // request -> errno to return
    std::map<unsigned long, int> calls;
    int map_error = 0;
    int mappings = 0;
    std::vector<drm_nvdla_bo_create> creates;
    std::vector<uint32_t> closed;
    std::vector<SubmittedJob> jobs;
    std::vector<drm_nvdla_wait> waits;
    int32_t wait_status = 0;        // the status WAIT reports
    std::optional<int> wait_error;  // an errno WAIT fails with
    bool return_job_id = true;

    size_t open_handles() const { return handles_.size(); }
    bool handle_open(uint32_t h) const { return handles_.count(h) != 0; }
    Object* object_of_handle(uint32_t h) {
        auto it = handles_.find(h);
        return it == handles_.end() ? nullptr : &objects_[it->second];
    }
    // A dma-buf of another device (as vgem would export): importable, `size` bytes.
    int foreign_dmabuf(uint64_t size) {
        std::lock_guard<std::mutex> lock(mutex_);
        const uint64_t id = new_object(size, 0);
        const int fd = next_fd_++;
        dmabufs_[fd] = id;
        return fd;
    }

  private:
    uint64_t new_object(uint64_t size, uint64_t alignment) {
        const uint64_t align = std::max<uint64_t>(alignment, 4096);
        next_dma_ = (next_dma_ + align - 1) / align * align;
        Object o;
        o.size = (size + 4095) / 4096 * 4096;
        o.dma = next_dma_;
        o.mmap_offset = next_mmap_;
        o.memory.assign(o.size, std::byte{0});
        next_dma_ += o.size;
        next_mmap_ += o.size;
        const uint64_t id = next_object_++;
        objects_[id] = std::move(o);
        return id;
    }

    uint32_t new_handle(uint64_t object) {
        uint32_t h = 1;
        while (handles_.count(h)) ++h;  // lowest free, as idr_alloc(.., 1, 0)
        handles_[h] = object;
        return h;
    }

    int get_param(drm_nvdla_get_param& a) {
        if (a.pad) return -EINVAL;
        auto it = params.find(a.param);
        if (it == params.end()) return -EINVAL;
        a.value = it->second;
        return 0;
    }

    int bo_create(drm_nvdla_bo_create& a) {
        creates.push_back(a);
        if (a.flags || a.size == 0) return -EINVAL;
        if (a.alignment && (a.alignment & (a.alignment - 1))) return -EINVAL;
        const uint64_t id = new_object(a.size, a.alignment);
        a.handle = new_handle(id);
        a.dma_address = objects_[id].dma;
        a.mmap_offset = objects_[id].mmap_offset;
        return 0;
    }

    int bo_info(drm_nvdla_bo_info& a) {
        if (a.flags) return -EINVAL;
        auto it = handles_.find(a.handle);
        if (it == handles_.end()) return -ENOENT;
        const Object& o = objects_[it->second];
        a.size = o.size;
        a.dma_address = o.dma;
        a.mmap_offset = o.mmap_offset;
        return 0;
    }

    int gem_close(drm_gem_close& a) {
        if (!handles_.erase(a.handle)) return -EINVAL;
        closed.push_back(a.handle);
        return 0;
    }

    int prime_export(drm_prime_handle& a) {
        auto it = handles_.find(a.handle);
        if (it == handles_.end()) return -ENOENT;
        exported_flags.push_back(a.flags);
        a.fd = next_fd_++;
        dmabufs_[a.fd] = it->second;
        return 0;
    }

    int prime_import(drm_prime_handle& a) {
        auto it = dmabufs_.find(a.fd);
        if (it == dmabufs_.end()) return -EBADF;
        for (const auto& [h, id] : handles_) {
            if (id == it->second) {
                a.handle = h;
                return 0;
            }
        }
        a.handle = new_handle(it->second);
        return 0;
    }

    int job_submit(drm_nvdla_submit& a) {
        if (a.flags || a.pad || a.job_count == 0 || a.job_struct_size < sizeof(drm_nvdla_job))
            return -EINVAL;
        auto* job = reinterpret_cast<drm_nvdla_job*>(static_cast<uintptr_t>(a.jobs));
        SubmittedJob s;
        s.submit = a;
        s.job = *job;
        const auto* list =
            reinterpret_cast<const drm_nvdla_address*>(static_cast<uintptr_t>(job->addresses));
        s.addresses.assign(list, list + job->address_count);
        for (const auto& e : s.addresses)
            if (!handles_.count(e.handle)) return -ENOENT;
        jobs.push_back(s);
        if (return_job_id) job->job_id = static_cast<uint32_t>(jobs.size());
        return 0;
    }

    int wait(drm_nvdla_wait& a) {
        waits.push_back(a);
        if (wait_error) return -*wait_error;
        a.status = wait_status;
        return 0;
    }

  public:
    std::vector<uint32_t> exported_flags;

  private:
    std::string path_;
    std::mutex mutex_;
    std::map<uint64_t, Object> objects_;
    std::map<uint32_t, uint64_t> handles_;  // handle -> object
    std::map<int, uint64_t> dmabufs_;       // fd -> object
    uint64_t next_object_ = 1;
    uint64_t next_dma_ = 0x80000000ull;
    uint64_t next_mmap_ = 0x100000000ull;
    int next_fd_ = 1000;
};

}  // namespace nvdla::test
