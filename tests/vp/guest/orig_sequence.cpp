// The original runtime's ioctl sequence against our kernel driver, in the virtual platform's
// guest (make test-vp, docs/kernel-driver.md "The original runtime"). Our own code, not the
// original's: it runs the original compiler's loadables (../shared/vectors/orig-compiler)
// with our runtime library, whose drm backend is redirected at link time
// (-Wl,--wrap=drmIoctl) onto the original runtime's calls (nvdla/sw umd/port/linux/nvdla.c):
//
//   allocate: GEM_CREATE {size as the loadable gives it, not a page multiple}
//             PRIME_HANDLE_TO_FD {DRM_CLOEXEC}, GEM_MMAP, mmap of the DRM file
//   run:      SUBMIT {1 task, its address list {dma-buf fd, offset}}, blocking
//   free:     close(dma-buf fd), GEM_DESTROY    (--keep-fds: GEM_DESTROY with the fd still
//             open, the fds closed at the end: what the original does, which never closes them)
//
// Only GET_PARAM and VERSION (device discovery, which the original replaces by a fixed
// renderD128) reach the kernel besides these; BO_CREATE, JOB_SUBMIT and WAIT never do.
//
//   nvdla_vp_orig corpus DIR CONFIG [--keep-fds] [MODEL/VARIANT...]
//       every loadable of DIR (index.json) compiled for CONFIG, or the ones named: each must
//       match the float output within the emulator tests' tolerance (orig_compiler_corpus.hpp)
//       or, when the compiler wrote an invalid operation, be refused with one sentence.
//   nvdla_vp_orig prime NODE OTHER_NODE
//       a carve-out buffer's dma-buf: the same device takes it back without pages (same
//       buffer, another file too), SUBMIT takes its fd; another device is refused.
// Prints "ok   ..." / "FAIL ..." lines; exit status 1 when any check failed.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "nvdla/runtime.hpp"
#include "orig_compiler_corpus.hpp"
#include "uapi/drm/nvdla_drm.h"

namespace {

// ---- The original runtime's calls behind the drm backend ------------------------------------

struct OrigBuffer {
    int dmabuf = -1;
    uint64_t size = 0;
};

struct Sequence {
    bool keep_fds = false;
    std::map<uint32_t, OrigBuffer> buffers;  // GEM handle -> what the original keeps
    std::vector<int> kept_fds;               // --keep-fds: closed at the end
    uint32_t next_job = 0;
    // What reached the kernel.
    unsigned gem_create = 0, odd_sizes = 0, prime_export = 0, gem_mmap = 0, submit = 0, entries = 0,
             dmabuf_entries = 0, destroy = 0, destroy_after_close = 0, destroy_failed = 0,
             setup = 0, refused_calls = 0;
    uint64_t over_page_alignment = 0;
};

Sequence seq;

extern "C" int __real_drmIoctl(int fd, unsigned long request, void* arg);

int fail_with(int err) {
    errno = err;
    return -1;
}

bool is_dmabuf(int fd) {
    char link[64];
    char target[128] = {};
    std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    const ssize_t n = ::readlink(link, target, sizeof(target) - 1);
    return n > 0 && std::strstr(target, "dmabuf") != nullptr;
}

int orig_create(int drm, drm_nvdla_bo_create* args) {
    if (args->flags) return fail_with(EINVAL);
    // The original ignores the loadable's alignment: GEM_CREATE gives a page.
    if (args->alignment > 4096) ++seq.over_page_alignment;
    nvdla_gem_create_args create{};
    create.size = args->size;
    if (__real_drmIoctl(drm, DRM_IOCTL_NVDLA_GEM_CREATE, &create)) return -1;
    ++seq.gem_create;
    seq.odd_sizes += args->size % 4096 != 0;

    // On failure the buffer goes again, as the original's NvDlaFreeMem does.
    auto undo = [&](const char* call, int dmabuf) {
        const int err = errno;
        std::printf("info orig: buffer of %llu bytes: %s failed: %s\n",
                    static_cast<unsigned long long>(args->size), call, std::strerror(err));
        if (dmabuf >= 0) ::close(dmabuf);
        nvdla_gem_destroy_args destroy{create.handle};
        __real_drmIoctl(drm, DRM_IOCTL_NVDLA_GEM_DESTROY, &destroy);
        return fail_with(err);
    };
    drm_prime_handle prime{};
    prime.handle = create.handle;
    prime.flags = DRM_CLOEXEC;
    if (__real_drmIoctl(drm, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime))
        return undo("PRIME_HANDLE_TO_FD", -1);
    ++seq.prime_export;
    nvdla_gem_map_offset_args map{};
    map.handle = create.handle;
    if (__real_drmIoctl(drm, DRM_IOCTL_NVDLA_GEM_MMAP, &map)) return undo("GEM_MMAP", prime.fd);
    ++seq.gem_mmap;
    seq.buffers[create.handle] = {prime.fd, args->size};
    args->handle = create.handle;
    args->dma_address = 0;  // the original never learns it
    args->mmap_offset = map.offset;
    return 0;
}

int orig_free(int drm, const drm_gem_close* args) {
    const auto it = seq.buffers.find(args->handle);
    if (it == seq.buffers.end()) return fail_with(EINVAL);
    const bool closed = !seq.keep_fds;
    if (closed)
        ::close(it->second.dmabuf);
    else
        seq.kept_fds.push_back(it->second.dmabuf);
    seq.buffers.erase(it);
    nvdla_gem_destroy_args destroy{args->handle};
    if (__real_drmIoctl(drm, DRM_IOCTL_NVDLA_GEM_DESTROY, &destroy)) {
        ++seq.destroy_failed;
        std::printf("info orig: GEM_DESTROY of handle %u failed: %s\n", args->handle,
                    std::strerror(errno));
        return -1;
    }
    ++seq.destroy;
    seq.destroy_after_close += closed;
    return 0;
}

// One SUBMIT per job, as the original submits one DLA task at a time; it blocks until done.
int orig_submit(int drm, drm_nvdla_submit* args) {
    if (args->flags || args->job_count == 0) return fail_with(EINVAL);
    for (uint32_t j = 0; j < args->job_count; ++j) {
        auto* job = reinterpret_cast<drm_nvdla_job*>(
            static_cast<uintptr_t>(args->jobs + uint64_t(j) * args->job_struct_size));
        if (job->in_syncobj_count || job->out_syncobj || job->flags) return fail_with(EINVAL);
        std::vector<nvdla_mem_handle> list(job->address_count);
        for (uint32_t i = 0; i < job->address_count; ++i) {
            const auto* a = reinterpret_cast<const drm_nvdla_address*>(
                static_cast<uintptr_t>(job->addresses + uint64_t(i) * job->address_struct_size));
            const auto it = seq.buffers.find(a->handle);
            if (it == seq.buffers.end()) return fail_with(ENOENT);
            list[i].handle = static_cast<uint32_t>(it->second.dmabuf);
            list[i].offset = a->offset;
            ++seq.entries;
            seq.dmabuf_entries += is_dmabuf(it->second.dmabuf);
        }
        nvdla_ioctl_submit_task task{};
        task.num_addresses = job->address_count;
        task.timeout = 0;  // the original leaves it uninitialised; the driver ignores it
        task.address_list = reinterpret_cast<uintptr_t>(list.data());
        nvdla_submit_args submit{};
        submit.tasks = reinterpret_cast<uintptr_t>(&task);
        submit.num_tasks = 1;
        if (__real_drmIoctl(drm, DRM_IOCTL_NVDLA_SUBMIT, &submit)) return -1;
        ++seq.submit;
        job->job_id = ++seq.next_job;
    }
    return 0;
}

}  // namespace

// The drm backend's every ioctl comes here (-Wl,--wrap=drmIoctl).
extern "C" int __wrap_drmIoctl(int fd, unsigned long request, void* arg) {
    switch (request) {
        case DRM_IOCTL_NVDLA_BO_CREATE:
            return orig_create(fd, static_cast<drm_nvdla_bo_create*>(arg));
        case DRM_IOCTL_GEM_CLOSE: return orig_free(fd, static_cast<drm_gem_close*>(arg));
        case DRM_IOCTL_NVDLA_JOB_SUBMIT:
            return orig_submit(fd, static_cast<drm_nvdla_submit*>(arg));
        case DRM_IOCTL_NVDLA_WAIT: {
            auto* wait = static_cast<drm_nvdla_wait*>(arg);
            if (wait->job_id == 0 || wait->job_id > seq.next_job) return fail_with(ENOENT);
            wait->status = 0;  // SUBMIT returned when the job was done, or failed
            return 0;
        }
        case DRM_IOCTL_PRIME_FD_TO_HANDLE:
        case DRM_IOCTL_NVDLA_BO_INFO:
            // Imports: the original runtime has none.
            ++seq.refused_calls;
            return fail_with(ENOTTY);
        default:
            // GET_PARAM, and the DRM core's own (VERSION) in discovery.
            ++seq.setup;
            return __real_drmIoctl(fd, request, arg);
    }
}

namespace {

namespace oc = nvdla::orig_compiler;

int failures = 0;

void result(bool ok, const std::string& what) {
    std::printf("%s guest: %s\n", ok ? "ok  " : "FAIL", what.c_str());
    std::fflush(stdout);
    failures += !ok;
}

// Runs one loadable through the kernel with the original sequence: "" and the judgement, or
// the runtime's refusal.
struct Outcome {
    bool ran = false;
    std::string refusal;
    oc::Judgement judgement;
    double ms = 0;
};

Outcome run_one(const oc::fs::path& dir, const oc::Variant& v) {
    Outcome o;
    const auto start = std::chrono::steady_clock::now();
    nvdla::RuntimeOptions options;
    options.backend = nvdla::BackendChoice::Drm;
    auto rt = nvdla::Runtime::open(options);
    if (!rt) {
        o.refusal = rt.message();
        return o;
    }
    {
        auto net = (*rt)->load_file(v.file(dir).string());
        if (!net) {
            o.refusal = net.message();
            return o;
        }
        auto ctx = (*net)->create_context();
        if (!ctx) {
            o.refusal = ctx.message();
            return o;
        }
        const std::vector<float> input = oc::read_f32(dir / v.model / "input.f32");
        const std::vector<float> expected = oc::read_f32(dir / v.model / "expected.f32");
        oc::pack_input(v, (*net)->inputs()[0], input, (*ctx)->input(0));
        if (nvdla::Status s = (*ctx)->run(); !s) {
            o.refusal = s.message();
            return o;
        }
        o.ran = true;
        const std::vector<float> y = oc::unpack_output(v, (*net)->outputs()[0], (*ctx)->output(0));
        o.judgement = oc::judge(dir, v, y, expected);
    }
    o.ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return o;
}

int corpus_command(int argc, char** argv) {
    const oc::fs::path dir = argv[2];
    const std::string config = argv[3];
    std::vector<std::string> only;
    for (int i = 4; i < argc; ++i) {
        if (std::strcmp(argv[i], "--keep-fds") == 0)
            seq.keep_fds = true;
        else
            only.emplace_back(argv[i]);
    }
    const std::vector<oc::Variant> all = oc::corpus(dir);
    if (all.empty()) {
        result(false, "orig-compiler corpus: no index.json in " + dir.string());
        return 1;
    }
    unsigned ran = 0;
    for (const oc::Variant& v : all) {
        const std::string name = v.model + "/" + v.name;
        if (v.config != config) continue;
        if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
        ++ran;
        const Outcome o = run_one(dir, v);
        if (v.refused()) {
            const bool named = o.refusal.find("PDP") != std::string::npos ||
                               o.refusal.find("RUBIK") != std::string::npos;
            result(!o.ran && named && o.refusal.find('\n') == std::string::npos,
                   config + " " + name + " (compiled_invalid): refused: " + o.refusal);
            continue;
        }
        if (!o.ran) {
            result(false, config + " " + name + ": " + o.refusal);
            continue;
        }
        char ms[32];
        std::snprintf(ms, sizeof(ms), "%.0f ms", o.ms);
        result(o.judgement.pass,
               config + " " + name + " through the kernel (" + ms + "): " + o.judgement.measured);
    }
    for (int fd : seq.kept_fds) ::close(fd);
    if (ran == 0 && !only.empty()) {
        std::printf("info orig: none of the named loadables is compiled for %s\n", config.c_str());
        return 0;
    }

    char line[512];
    std::snprintf(line, sizeof(line),
                  "%s: the original sequence: %u GEM_CREATE (%u not page multiples), %u "
                  "PRIME_HANDLE_TO_FD, %u GEM_MMAP, %u SUBMIT with %u/%u entries dma-buf fds, "
                  "%u GEM_DESTROY (%u after the fd was closed, %s), %u failed; %u setup "
                  "(GET_PARAM, VERSION), %u imports",
                  config.c_str(), seq.gem_create, seq.odd_sizes, seq.prime_export, seq.gem_mmap,
                  seq.submit, seq.dmabuf_entries, seq.entries, seq.destroy, seq.destroy_after_close,
                  seq.keep_fds ? "the others with it open" : "all", seq.destroy_failed, seq.setup,
                  seq.refused_calls);
    const bool submitted = seq.submit > 0 || ran == 0;
    result(ran > 0 && submitted && seq.odd_sizes > 0 && seq.entries == seq.dmabuf_entries &&
               seq.destroy == seq.gem_create && seq.destroy_failed == 0 && seq.refused_calls == 0 &&
               seq.buffers.empty(),
           line);
    if (seq.over_page_alignment)
        std::printf(
            "info orig: %llu buffers asked for more than a page of alignment (the "
            "original ignores it; GEM_CREATE gives a page)\n",
            static_cast<unsigned long long>(seq.over_page_alignment));
    return failures ? 1 : 0;
}

// ---- PRIME of a carve-out buffer: self-import without pages, other devices refused -----------

int open_node(const char* path) {
    const int fd = ::open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) std::printf("info orig: open %s: %s\n", path, std::strerror(errno));
    return fd;
}

int raw(int fd, unsigned long request, void* arg) {
    return __real_drmIoctl(fd, request, arg) ? -errno : 0;
}

int prime_command(char** argv) {
    const int a = open_node(argv[2]), a2 = open_node(argv[2]), b = open_node(argv[3]);
    if (a < 0 || a2 < 0 || b < 0) {
        result(false, "prime: open the render nodes");
        return 1;
    }
    nvdla_gem_create_args create{};
    create.size = 5000;  // not a page multiple, as the original's buffers
    drm_prime_handle prime{};
    nvdla_gem_map_offset_args map{};
    if (raw(a, DRM_IOCTL_NVDLA_GEM_CREATE, &create) ||
        (prime.handle = create.handle, prime.flags = DRM_CLOEXEC,
         raw(a, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime)) ||
        (map.handle = create.handle, raw(a, DRM_IOCTL_NVDLA_GEM_MMAP, &map))) {
        result(false,
               "prime: GEM_CREATE 5000 bytes, PRIME_HANDLE_TO_FD, GEM_MMAP of a carve-out "
               "buffer");
        return 1;
    }
    result(is_dmabuf(prime.fd),
           "prime: a carve-out buffer exported as a dma-buf (fd " + std::to_string(prime.fd) + ")");
    void* p = ::mmap(nullptr, 5000, PROT_READ | PROT_WRITE, MAP_SHARED, a, map.offset);
    if (p != MAP_FAILED) std::memcpy(p, "self-import", 12);

    drm_prime_handle back{};
    back.fd = prime.fd;
    int r = raw(a, DRM_IOCTL_PRIME_FD_TO_HANDLE, &back);
    result(!r && back.handle == create.handle,
           "prime: imported into the same file: the same GEM object (handle " +
               std::to_string(back.handle) + ")");

    drm_prime_handle other{};
    other.fd = prime.fd;
    r = raw(a2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &other);
    drm_nvdla_bo_info info{};
    info.handle = other.handle;
    bool same = !r && !raw(a2, DRM_IOCTL_NVDLA_BO_INFO, &info) && info.size == 8192;
    if (same) {
        void* q = ::mmap(nullptr, 8192, PROT_READ, MAP_SHARED, a2, info.mmap_offset);
        same = q != MAP_FAILED && std::memcmp(q, "self-import", 12) == 0;
        if (q != MAP_FAILED) ::munmap(q, 8192);
    }
    result(same,
           "prime: imported into another file of the same device: the same buffer, no "
           "pages needed");

    drm_prime_handle foreign{};
    foreign.fd = prime.fd;
    r = raw(b, DRM_IOCTL_PRIME_FD_TO_HANDLE, &foreign);
    result(r == -EOPNOTSUPP, std::string("prime: another device's import refused: ") +
                                 (r ? std::strerror(-r) : "accepted"));
    if (!r) {
        drm_gem_close close_args{};
        close_args.handle = foreign.handle;
        raw(b, DRM_IOCTL_GEM_CLOSE, &close_args);
    }

    if (p != MAP_FAILED) ::munmap(p, 5000);
    ::close(prime.fd);
    nvdla_gem_destroy_args destroy{create.handle};
    result(raw(a, DRM_IOCTL_NVDLA_GEM_DESTROY, &destroy) == 0,
           "prime: GEM_DESTROY after the dma-buf fd was closed");
    ::close(a);
    ::close(a2);
    ::close(b);
    return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 4 && std::strcmp(argv[1], "corpus") == 0) return corpus_command(argc, argv);
    if (argc == 4 && std::strcmp(argv[1], "prime") == 0) return prime_command(argv);
    std::fprintf(stderr,
                 "usage: nvdla_vp_orig corpus DIR CONFIG [--keep-fds] [MODEL/VARIANT...]\n"
                 "       nvdla_vp_orig prime NODE OTHER_NODE\n");
    return 2;
}
