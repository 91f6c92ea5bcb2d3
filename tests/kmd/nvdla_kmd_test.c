// SPDX-License-Identifier: MIT
/*
 * Tests of the NVDLA kernel driver through its UAPI, run inside a QEMU
 * guest by tests/kmd/run.sh (make test-kmd). Statically linked; needs root
 * (pagemap, sysfs) and two NVDLA instances on ivshmem:
 *
 *   instance A  nv_full, carve-out in the ivshmem BAR
 *   instance B  nv_small, buffers from guest DMA memory
 *
 * Usage: nvdla_kmd_test stub|selftest
 *   stub      the production engine (nvdla_engine_none): every valid job is
 *             rejected with ENODEV; all argument checks are exercised
 *   selftest  the test engine: jobs go through the scheduler and fail with
 *             ENODEV (FAIL) or hang until the job timeout (HANG)
 *
 * Prints one line per check and "nvdla-kmd-test: N passed, N failed, N skipped".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nvdla_drm.h"

#define SELFTEST_ENGINE_ID 0x7e57	/* nvdla_engine_selftest.c */
#define SELFTEST_FAIL 0x4c494146	/* "FAIL" */
#define SELFTEST_HANG 0x474e4148	/* "HANG" */
#define PAGE 4096u

static int passed, failed, skipped;
static bool selftest;
static const char *group = "";

static void result(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %s: ", ok ? "ok  " : "FAIL", group);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		passed++;
	else
		failed++;
}

static void todo(const char *what)
{
	printf("TODO %s: %s (needs the engine's validator; skipped)\n", group, what);
	skipped++;
}

/* ioctl returning 0 or -errno. */
static int xioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do {
		r = ioctl(fd, req, arg);
	} while (r < 0 && (errno == EINTR || errno == EAGAIN));
	return r < 0 ? -errno : 0;
}

static const char *errname(int e)
{
	static char buf[32];

	switch (e) {
	case 0: return "0";
	case -EINVAL: return "EINVAL";
	case -ENOENT: return "ENOENT";
	case -ENODEV: return "ENODEV";
	case -ENOMEM: return "ENOMEM";
	case -EBADF: return "EBADF";
	case -EFAULT: return "EFAULT";
	case -E2BIG: return "E2BIG";
	case -EBUSY: return "EBUSY";
	case -ETIMEDOUT: return "ETIMEDOUT";
	case -EOPNOTSUPP: return "EOPNOTSUPP";
	case -EPERM: return "EPERM";
	}
	snprintf(buf, sizeof(buf), "%d", e);
	return buf;
}

#define EXPECT_ERR(expr, want, what)                                                      \
	do {                                                                              \
		int r_ = (expr);                                                          \
		result(r_ == (want), "%s -> %s (want %s)", what, errname(r_), errname(want)); \
	} while (0)

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- device helpers ------------------------------------------------------ */

struct dev {
	int fd;
	char path[64];
	uint64_t config, atom, memory, engine, timeout_ms;
};

static int open_node(const char *path, char *name, size_t len)
{
	struct drm_version v = { 0 };
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -1;
	v.name = name;
	v.name_len = len - 1;
	memset(name, 0, len);
	if (xioctl(fd, DRM_IOCTL_VERSION, &v)) {
		close(fd);
		return -1;
	}
	return fd;
}

static uint64_t param(int fd, uint32_t p)
{
	struct drm_nvdla_get_param gp = { .param = p };

	if (xioctl(fd, DRM_IOCTL_NVDLA_GET_PARAM, &gp))
		return UINT64_MAX;
	return gp.value;
}

/* The three instances: nv_full and nv_small on ivshmem, nv_large on the platform bus. */
static bool find_devices(struct dev *a, struct dev *b, struct dev *c)
{
	struct dev *slot[3] = { a, b, c };
	char path[64], name[32];
	int i, k, found = 0;

	for (i = 128; i < 140; i++) {
		struct dev d = { 0 };
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/renderD%d", i);
		fd = open_node(path, name, sizeof(name));
		if (fd < 0)
			continue;
		if (strcmp(name, "nvdla")) {
			close(fd);
			continue;
		}
		d.fd = fd;
		snprintf(d.path, sizeof(d.path), "%s", path);
		d.config = param(fd, NVDLA_PARAM_HW_CONFIG);
		d.atom = param(fd, NVDLA_PARAM_ATOM_BYTES);
		d.memory = param(fd, NVDLA_PARAM_MEMORY_SIZE);
		d.engine = param(fd, NVDLA_PARAM_ENGINE);
		d.timeout_ms = param(fd, NVDLA_PARAM_JOB_TIMEOUT_MS);
		k = d.config == NVDLA_HW_CONFIG_NV_FULL	 ? 0 :
		    d.config == NVDLA_HW_CONFIG_NV_SMALL ? 1 :
		    d.config == NVDLA_HW_CONFIG_NV_LARGE ? 2 : -1;
		if (k < 0 || (found & (1 << k))) {
			close(fd);
			continue;
		}
		*slot[k] = d;
		found |= 1 << k;
	}
	if (found != 7)
		for (k = 0; k < 3; k++)
			if (found & (1 << k))
				close(slot[k]->fd);
	return found == 7;
}

struct bo {
	uint32_t handle;
	uint64_t size, dma, offset;
	void *map;
};

static int bo_create(int fd, uint64_t size, uint64_t align, struct bo *bo)
{
	struct drm_nvdla_bo_create c = { .size = size, .alignment = align };
	int r = xioctl(fd, DRM_IOCTL_NVDLA_BO_CREATE, &c);

	memset(bo, 0, sizeof(*bo));
	if (r)
		return r;
	bo->handle = c.handle;
	bo->size = (size + PAGE - 1) / PAGE * PAGE;
	bo->dma = c.dma_address;
	bo->offset = c.mmap_offset;
	return 0;
}

static void *bo_map(int fd, struct bo *bo)
{
	void *p = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, bo->offset);

	bo->map = p == MAP_FAILED ? NULL : p;
	return bo->map;
}

static int gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return xioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

static void bo_free(int fd, struct bo *bo)
{
	if (bo->map)
		munmap(bo->map, bo->size);
	gem_close(fd, bo->handle);
	memset(bo, 0, sizeof(*bo));
}

static int prime_export(int fd, uint32_t handle)
{
	struct drm_prime_handle p = { .handle = handle, .flags = DRM_CLOEXEC | DRM_RDWR };

	return xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) ? -1 : p.fd;
}

static int prime_import(int fd, int dmabuf, uint32_t *handle)
{
	struct drm_prime_handle p = { .fd = dmabuf };
	int r = xioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	*handle = p.handle;
	return r;
}

static int bo_info(int fd, uint32_t handle, struct drm_nvdla_bo_info *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = handle;
	return xioctl(fd, DRM_IOCTL_NVDLA_BO_INFO, info);
}

static uint32_t syncobj_create(int fd)
{
	struct drm_syncobj_create c = { 0 };

	return xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c) ? 0 : c.handle;
}

/* Writes the selftest engine's command into a descriptor buffer. */
static void set_command(struct bo *desc, uint32_t command)
{
	*(volatile uint32_t *)desc->map = command;
}

/* One job of the current interface with @n entries: entry i = (handles[i], offsets[i]). */
static int submit_job(int fd, const uint32_t *handles, const uint64_t *offsets, uint32_t n,
		      uint32_t in_sync, uint32_t out_sync, uint32_t *job_id)
{
	struct drm_nvdla_address addr[8] = { 0 };
	struct drm_nvdla_job job = { 0 };
	struct drm_nvdla_submit s = { 0 };
	uint32_t i;
	int r;

	for (i = 0; i < n; i++) {
		addr[i].handle = handles[i];
		addr[i].offset = offsets ? offsets[i] : 0;
	}
	job.addresses = (uintptr_t)addr;
	job.address_count = n;
	job.address_struct_size = sizeof(addr[0]);
	if (in_sync) {
		job.in_syncobjs = (uintptr_t)&in_sync;
		job.in_syncobj_count = 1;
	}
	job.out_syncobj = out_sync;
	s.jobs = (uintptr_t)&job;
	s.job_count = 1;
	s.job_struct_size = sizeof(job);
	r = xioctl(fd, DRM_IOCTL_NVDLA_JOB_SUBMIT, &s);
	if (job_id)
		*job_id = job.job_id;
	return r;
}

static int wait_job(int fd, uint32_t id, int64_t timeout_ns_from_now, int32_t *status)
{
	struct drm_nvdla_wait w = { .job_id = id, .timeout_ns = now_ns() + timeout_ns_from_now };
	int r = xioctl(fd, DRM_IOCTL_NVDLA_WAIT, &w);

	if (status)
		*status = w.status;
	return r;
}

/* The original interface: one task, entries (dma-buf fd, offset). */
static int legacy_submit(int fd, const int *fds, const uint64_t *offsets, uint32_t n,
			 uint16_t num_tasks)
{
	static struct nvdla_mem_handle list[NVDLA_MAX_BUFFERS_PER_TASK + 1];
	struct nvdla_ioctl_submit_task tasks[NVDLA_MAX_TASKS_PER_SUBMIT + 1];
	struct nvdla_submit_args args;
	uint32_t i;

	/* Fields the original runtime leaves uninitialised: garbage here. */
	memset(list, 0xa5, sizeof(list));
	memset(tasks, 0x5a, sizeof(tasks));
	for (i = 0; i < n && i < NVDLA_MAX_BUFFERS_PER_TASK + 1; i++) {
		list[i].handle = (uint32_t)fds[i % 2];
		list[i].offset = offsets ? offsets[i] : 0;
	}
	for (i = 0; i < NVDLA_MAX_TASKS_PER_SUBMIT + 1; i++) {
		tasks[i].num_addresses = n;
		tasks[i].address_list = (uintptr_t)list;
	}
	memset(&args, 0, sizeof(args));
	args.tasks = (uintptr_t)tasks;
	args.num_tasks = num_tasks;
	return xioctl(fd, DRM_IOCTL_NVDLA_SUBMIT, &args);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_params(struct dev *a, struct dev *b, struct dev *c)
{
	struct drm_nvdla_get_param gp = { 0 };
	uint64_t want_engine = selftest ? SELFTEST_ENGINE_ID : NVDLA_ENGINE_NONE;

	group = "get_param";
	result(param(a->fd, NVDLA_PARAM_API_VERSION) == NVDLA_API_VERSION, "API version 1");
	result(param(a->fd, NVDLA_PARAM_DRIVER_VERSION) >> 32 == 1, "driver version 1.x");
	result(a->config == NVDLA_HW_CONFIG_NV_FULL && b->config == NVDLA_HW_CONFIG_NV_SMALL,
	       "two instances: nv_full (%s) and nv_small (%s)", a->path, b->path);
	result(c->config == NVDLA_HW_CONFIG_NV_LARGE && c->memory == 0,
	       "third instance: nv_large on the platform bus (%s), DMA memory", c->path);
	result(a->atom == 32 && b->atom == 8 && c->atom == 32, "atom 32, 8 and 32 bytes");
	result(param(a->fd, NVDLA_PARAM_HW_FEATURES) & NVDLA_HW_FEATURE_FP16 &&
		       param(a->fd, NVDLA_PARAM_HW_FEATURES) & NVDLA_HW_FEATURE_RUBIK &&
		       !(param(b->fd, NVDLA_PARAM_HW_FEATURES) & NVDLA_HW_FEATURE_FP16),
	       "features: nv_full has FP16 and Rubik, nv_small no FP16");
	result(param(a->fd, NVDLA_PARAM_MAC_ATOMIC_C) == 64 &&
		       param(b->fd, NVDLA_PARAM_MAC_ATOMIC_K) == 8,
	       "MAC atomics");
	result(param(a->fd, NVDLA_PARAM_CBUF_BYTES) == 512 * 1024 &&
		       param(b->fd, NVDLA_PARAM_CBUF_BYTES) == 128 * 1024,
	       "CBUF 512 KiB and 128 KiB");
	result(param(a->fd, NVDLA_PARAM_ADDRESS_BITS) == 64 &&
		       param(b->fd, NVDLA_PARAM_ADDRESS_BITS) == 32,
	       "address bits 64 and 32");
	result(a->memory >= (8u << 20) && b->memory == 0,
	       "memory: carve-out %" PRIu64 " bytes / DMA memory (0)", a->memory);
	result(param(a->fd, NVDLA_PARAM_BO_ALIGNMENT) == PAGE, "BO alignment = page");
	result(param(a->fd, NVDLA_PARAM_MAX_ADDRESSES) == NVDLA_MAX_BUFFERS_PER_TASK,
	       "max addresses 6144");
	result(param(a->fd, NVDLA_PARAM_MAX_JOBS) >= 1, "max jobs per submit");
	result(a->timeout_ms > 0 && a->timeout_ms < 600000, "job timeout %" PRIu64 " ms",
	       a->timeout_ms);
	result(a->engine == want_engine && b->engine == want_engine && c->engine == want_engine,
	       "engine id %#" PRIx64,
	       a->engine);

	gp.param = 9999;
	EXPECT_ERR(xioctl(a->fd, DRM_IOCTL_NVDLA_GET_PARAM, &gp), -EINVAL, "unknown param");
	gp.param = NVDLA_PARAM_API_VERSION;
	gp.pad = 1;
	EXPECT_ERR(xioctl(a->fd, DRM_IOCTL_NVDLA_GET_PARAM, &gp), -EINVAL, "non-zero pad");
}

/* The original runtime's buffer flow, with its exact calls. */
static void test_legacy_gem(struct dev *d)
{
	struct nvdla_gem_create_args create = { .size = 1000 };
	struct nvdla_gem_map_offset_args map = { 0 };
	struct nvdla_gem_destroy_args destroy = { 0 };
	struct drm_prime_handle prime = { 0 };
	unsigned char *p;
	bool same = true;
	int i;

	group = "legacy gem";
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_GEM_CREATE, &create), 0, "GEM_CREATE 1000 bytes");
	prime.handle = create.handle;
	prime.flags = DRM_CLOEXEC;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime), 0,
		   "PRIME_HANDLE_TO_FD (DRM_CLOEXEC only)");
	map.handle = create.handle;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_GEM_MMAP, &map), 0, "GEM_MMAP");
	p = mmap(NULL, 1000, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, map.offset);
	result(p != MAP_FAILED, "mmap 1000 bytes on the DRM fd");
	if (p != MAP_FAILED) {
		for (i = 0; i < 1000; i++)
			same &= p[i] == 0;
		result(same, "new buffer is zeroed");
		for (i = 0; i < 1000; i++)
			p[i] = (unsigned char)(i * 7);
		same = true;
		for (i = 0; i < 1000; i++)
			same &= p[i] == (unsigned char)(i * 7);
		result(same, "write and read back through the mapping");
		munmap(p, 1000);
	}
	close(prime.fd);
	destroy.handle = create.handle;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_GEM_DESTROY, &destroy), 0,
		   "GEM_DESTROY after the dma-buf fd was closed");
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_GEM_DESTROY, &destroy), -EINVAL,
		   "GEM_DESTROY twice");

	create.flags = 1;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_GEM_CREATE, &create), -EINVAL,
		   "GEM_CREATE with flags");
	create.flags = 0;
	create.size = 0;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_GEM_CREATE, &create), -EINVAL,
		   "GEM_CREATE size 0");
	create.size = d->memory + PAGE;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_GEM_CREATE, &create), -ENOMEM,
		   "GEM_CREATE larger than the carve-out");
	create.size = 1ull << 40; /* 4 GiB + more than u32: not truncated */
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_GEM_CREATE, &create), -ENOMEM,
		   "GEM_CREATE 1 TiB");
	map.handle = 0xdead;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_GEM_MMAP, &map), -ENOENT, "GEM_MMAP bad handle");
}

static void test_bo(struct dev *d, const char *name)
{
	static const uint64_t aligns[] = { 0, 32, 256, 4096, 65536, 1u << 20 };
	struct bo bos[6], again;
	struct drm_nvdla_bo_create c = { 0 };
	struct drm_nvdla_bo_info info;
	bool ok = true, zero = true, overlap = false;
	unsigned int i, j;

	group = name;
	for (i = 0; i < 6; i++) {
		uint64_t want = aligns[i] > PAGE ? aligns[i] : PAGE;
		int r = bo_create(d->fd, 1000 + i * 5000, aligns[i], &bos[i]);

		result(!r && bos[i].dma % want == 0, "BO_CREATE alignment %" PRIu64 ": %s at %#" PRIx64,
		       aligns[i], errname(r), bos[i].dma);
		if (r)
			continue;
		ok &= !bo_info(d->fd, bos[i].handle, &info) && info.dma_address == bos[i].dma &&
		      info.size == bos[i].size && info.mmap_offset == bos[i].offset;
	}
	result(ok, "BO_INFO returns size, address and mmap offset");
	for (i = 0; i < 6; i++)
		for (j = 0; j < 6; j++)
			if (i != j && bos[i].size && bos[j].size &&
			    bos[i].dma < bos[j].dma + bos[j].size && bos[j].dma < bos[i].dma + bos[i].size)
				overlap = true;
	result(!overlap, "buffers do not overlap");
	for (i = 0; i < 6; i++)
		if (bos[i].size && bo_map(d->fd, &bos[i]))
			memset(bos[i].map, 0xee, bos[i].size);
	for (i = 0; i < 6; i++)
		bo_free(d->fd, &bos[i]);
	/* Memory freed and allocated again comes back zeroed. */
	for (i = 0; i < 4; i++) {
		if (bo_create(d->fd, 6 * PAGE, 0, &again) || !bo_map(d->fd, &again)) {
			zero = false;
			break;
		}
		for (j = 0; j < again.size; j++)
			zero &= ((unsigned char *)again.map)[j] == 0;
		bo_free(d->fd, &again);
	}
	result(zero, "reused memory is zeroed");

	c.size = PAGE;
	c.alignment = 3 * 1024;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_BO_CREATE, &c), -EINVAL, "alignment 3072");
	c.alignment = 1ull << 31;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_BO_CREATE, &c), -EINVAL, "alignment 2 GiB");
	c.alignment = 0;
	c.flags = 1;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_BO_CREATE, &c), -EINVAL, "flags");
	c.flags = 0;
	c.size = 0;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_BO_CREATE, &c), -EINVAL, "size 0");
	c.size = UINT64_MAX;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_BO_CREATE, &c), -EINVAL, "size 2^64-1");
	c.size = 1ull << 40;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_BO_CREATE, &c), -ENOMEM, "size 1 TiB");
	info.handle = 0xbeef;
	info.flags = 0;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_BO_INFO, &info), -ENOENT, "BO_INFO bad handle");
	EXPECT_ERR(gem_close(d->fd, 0xbeef), -EINVAL, "GEM_CLOSE bad handle");
}

/* Fill the carve-out, then free everything: the range allocator gives it all back. */
static void test_carveout_exhaustion(struct dev *d)
{
	static struct bo bos[512];
	unsigned int n = 0, i;
	uint64_t chunk = d->memory / 16, total = 0;
	struct bo big;
	int r = 0;

	group = "carve-out";
	while (n < 512 && !(r = bo_create(d->fd, chunk, 0, &bos[n]))) {
		total += bos[n].size;
		n++;
	}
	result(r == -ENOMEM && total > d->memory / 2,
	       "allocations until ENOMEM: %u x %" PRIu64 " bytes", n, chunk);
	for (i = 0; i < n; i++)
		bo_free(d->fd, &bos[i]);
	r = bo_create(d->fd, d->memory / 2, 0, &big);
	result(!r, "after freeing, half the carve-out in one piece: %s", errname(r));
	if (!r)
		bo_free(d->fd, &big);
}

static void test_prime(struct dev *a, struct dev *b)
{
	struct drm_nvdla_bo_info info;
	struct bo x, y;
	uint32_t h;
	char name[32];
	int fd2, dmabuf, r;
	void *p;

	group = "prime";
	if (bo_create(a->fd, 3 * PAGE, 0, &x) || !bo_map(a->fd, &x)) {
		result(false, "setup");
		return;
	}
	memcpy(x.map, "nvdla prime", 12);
	dmabuf = prime_export(a->fd, x.handle);
	result(dmabuf >= 0, "export");
	r = prime_import(a->fd, dmabuf, &h);
	result(!r && h == x.handle, "import into the same file gives the same handle");

	fd2 = open_node(a->path, name, sizeof(name));
	r = prime_import(fd2, dmabuf, &h);
	result(!r && !bo_info(fd2, h, &info) && info.dma_address == x.dma && info.size == x.size,
	       "import into another file: same buffer");
	if (!r) {
		p = mmap(NULL, x.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, info.mmap_offset);
		result(p != MAP_FAILED && !memcmp(p, "nvdla prime", 12),
		       "the other file's mapping shows the data");
		if (p != MAP_FAILED)
			munmap(p, x.size);
	}
	close(fd2);

	p = mmap(NULL, x.size, PROT_READ, MAP_SHARED, dmabuf, 0);
	result(p != MAP_FAILED && !memcmp(p, "nvdla prime", 12), "mmap of the dma-buf");
	if (p != MAP_FAILED)
		munmap(p, x.size);

	/* The carve-out of A lies in a PCI BAR: no struct pages, not shareable with B. */
	r = prime_import(b->fd, dmabuf, &h);
	result(r < 0, "carve-out buffer into the other instance refused: %s", errname(r));
	if (!r)
		gem_close(b->fd, h);
	close(dmabuf);
	bo_free(a->fd, &x);

	/* B's buffers are contiguous DMA memory: A can import them. */
	if (bo_create(b->fd, 5 * PAGE, 0, &y) || !bo_map(b->fd, &y)) {
		result(false, "setup B");
		return;
	}
	memcpy(y.map, "from B", 7);
	dmabuf = prime_export(b->fd, y.handle);
	r = prime_import(a->fd, dmabuf, &h);
	result(!r && !bo_info(a->fd, h, &info) && info.dma_address == y.dma && info.size == y.size,
	       "DMA buffer of B imported into A: same device address %#" PRIx64, y.dma);
	if (!r) {
		p = mmap(NULL, y.size, PROT_READ, MAP_SHARED, a->fd, info.mmap_offset);
		result(p != MAP_FAILED && !memcmp(p, "from B", 7),
		       "imported buffer mapped through A's file");
		if (p != MAP_FAILED)
			munmap(p, y.size);
		gem_close(a->fd, h);
	}
	close(dmabuf);
	bo_free(b->fd, &y);
}

/* ---- imports from vgem: contiguous or not, checked against pagemap -------- */

static int vgem_open(void)
{
	char path[64], name[32];
	int i, fd;

	for (i = 0; i < 8; i++) {
		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open_node(path, name, sizeof(name));
		if (fd >= 0 && !strcmp(name, "vgem"))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

struct vbo {
	uint32_t handle;
	uint64_t size;
	void *map;
};

static int vgem_create(int fd, uint32_t pages, struct vbo *v)
{
	struct drm_mode_create_dumb c = { .width = PAGE / 4 * pages, .height = 1, .bpp = 32 };
	struct drm_mode_map_dumb m = { 0 };

	memset(v, 0, sizeof(*v));
	if (xioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return -1;
	v->handle = c.handle;
	v->size = c.size;
	m.handle = c.handle;
	if (xioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m))
		return -1;
	v->map = mmap(NULL, v->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, m.offset);
	if (v->map == MAP_FAILED)
		return -1;
	memset(v->map, 0x11, v->size);
	return 0;
}

static void vgem_free(int fd, struct vbo *v)
{
	munmap(v->map, v->size);
	gem_close(fd, v->handle);
}

/*
 * vgem's pages come from shmem, page by page. One page is contiguous by
 * definition; pages freed and taken again come back from the allocator in
 * reverse order, so a buffer allocated right after freeing another is
 * scattered. (pagemap cannot confirm it: vgem maps with VM_PFNMAP.)
 */
static void test_vgem_import(struct dev *a)
{
	int vfd = vgem_open(), rejected = 0, other = 0;
	struct drm_nvdla_bo_info info;
	struct vbo one, x, y, z;
	unsigned int round;
	uint32_t h;

	group = "import";
	if (vfd < 0) {
		result(false, "vgem device present");
		return;
	}
	if (!vgem_create(vfd, 1, &one)) {
		int dmabuf = prime_export(vfd, one.handle), r;

		r = prime_import(a->fd, dmabuf, &h);
		if (!r)
			r = bo_info(a->fd, h, &info);
		result(!r && info.dma_address && info.dma_address % PAGE == 0 && info.size == PAGE,
		       "one vgem page (contiguous) imported at %#" PRIx64, info.dma_address);
		if (!r)
			gem_close(a->fd, h);
		close(dmabuf);
		vgem_free(vfd, &one);
	}

	for (round = 0; round < 4; round++) {
		int r, dmabuf;

		if (vgem_create(vfd, 16, &x) || vgem_create(vfd, 16, &y))
			break;
		vgem_free(vfd, &x);
		if (vgem_create(vfd, 16, &z))
			break;
		dmabuf = prime_export(vfd, z.handle);
		r = prime_import(a->fd, dmabuf, &h);
		if (r == -EINVAL)
			rejected++;
		else if (r)
			other++;
		else
			gem_close(a->fd, h);
		close(dmabuf);
		vgem_free(vfd, &y);
		vgem_free(vfd, &z);
	}
	result(rejected > 0 && !other,
	       "scattered 16-page vgem buffers refused with EINVAL (%d of 4, %d other errors)",
	       rejected, other);
	close(vfd);
}

/* ---- submit argument checks ------------------------------------------------ */

struct fixture {
	struct bo desc, data;
	int desc_fd, data_fd;
};

static bool fixture_init(struct dev *d, struct fixture *f)
{
	if (bo_create(d->fd, PAGE, 0, &f->desc) || !bo_map(d->fd, &f->desc) ||
	    bo_create(d->fd, 2 * PAGE, 0, &f->data) || !bo_map(d->fd, &f->data))
		return false;
	f->desc_fd = prime_export(d->fd, f->desc.handle);
	f->data_fd = prime_export(d->fd, f->data.handle);
	set_command(&f->desc, 0);
	return f->desc_fd >= 0 && f->data_fd >= 0;
}

static void fixture_fini(struct dev *d, struct fixture *f)
{
	close(f->desc_fd);
	close(f->data_fd);
	bo_free(d->fd, &f->desc);
	bo_free(d->fd, &f->data);
}

static void test_legacy_submit(struct dev *d)
{
	struct fixture f;
	int fds[2], pipefd[2];
	uint64_t offsets[2] = { 0, 0 };
	struct nvdla_submit_args args = { 0 };

	group = "legacy submit";
	if (!fixture_init(d, &f)) {
		result(false, "setup");
		return;
	}
	fds[0] = f.desc_fd;
	fds[1] = f.data_fd;

	/* Valid arguments (garbage in timeout and reserved): the engine decides. */
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, 2, 1), -ENODEV,
		   "valid task, uninitialised timeout/reserved: no engine");
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, 2, 0), -EINVAL, "num_tasks 0");
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, 2, NVDLA_MAX_TASKS_PER_SUBMIT + 1), -EINVAL,
		   "too many tasks (25)");
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, 0, 1), -EINVAL, "no addresses");
	EXPECT_ERR(legacy_submit(d->fd, fds, NULL, NVDLA_MAX_BUFFERS_PER_TASK + 1, 1), -EINVAL,
		   "too many addresses (6145)");

	fds[1] = 1000; /* not an open file */
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, 2, 1), -EBADF, "bad handle (closed fd)");
	if (!pipe(pipefd)) {
		fds[1] = pipefd[0];
		EXPECT_ERR(legacy_submit(d->fd, fds, offsets, 2, 1), -EINVAL,
			   "bad handle (fd not a dma-buf)");
		close(pipefd[0]);
		close(pipefd[1]);
	}
	fds[1] = f.data_fd;

	offsets[1] = f.data.size;
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, 2, 1), -EINVAL, "offset at the end");
	offsets[1] = 1ull << 40;
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, 2, 1), -EINVAL, "offset far past the end");
	offsets[1] = d->atom / 2;
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, 2, 1), -EINVAL, "misaligned address");
	offsets[1] = d->atom;
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, 2, 1), -ENODEV, "atom-aligned offset: no engine");
	offsets[1] = 0;

	args.tasks = 8; /* unmapped */
	args.num_tasks = 1;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_SUBMIT, &args), -EFAULT, "bad tasks pointer");
	args.tasks = 0;
	args.flags = 2;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_SUBMIT, &args), -EINVAL, "unknown flag");

	fixture_fini(d, &f);
}

/*
 * Descriptor-level checks: the engine's validator. They run once the device
 * reports an engine (NVDLA_PARAM_ENGINE other than none and selftest);
 * until then each prints a TODO line.
 *
 * The network descriptor (entry 0) of the firmware interface, 40 bytes:
 * list indices, the first operation of each of the 6 processors, counts.
 */
struct net_desc {
	int16_t operation_desc_index, surface_desc_index, dependency_graph_index, lut_data_index;
	int16_t roi_array_index, surface_index, stat_list_index, reserved1;
	int16_t op_head[6];
	uint16_t num_rois, num_operations, num_luts, num_addresses;
	int16_t input_layer;
	uint8_t dynamic_roi, reserved0;
} __attribute__((packed, aligned(4)));

_Static_assert(sizeof(struct net_desc) == 40, "dla_network_desc is 40 bytes");

/* A one-operation network whose lists all live in entry 1. */
static void net_valid(struct net_desc *n)
{
	memset(n, 0, sizeof(*n));
	n->operation_desc_index = 1;
	n->surface_desc_index = 1;
	n->dependency_graph_index = 1;
	n->lut_data_index = -1;
	n->roi_array_index = 1;
	n->surface_index = -1;
	n->stat_list_index = -1;
	n->reserved1 = -1;
	memset(n->op_head, 0xff, sizeof(n->op_head));
	n->op_head[0] = 0; /* BDMA */
	n->num_rois = 1;
	n->num_operations = 1;
	n->num_addresses = 2;
	n->input_layer = 0;
}

static void descriptor_case(struct dev *d, struct fixture *f, const char *what,
			    const struct net_desc *n, uint64_t desc_offset)
{
	uint32_t handles[2] = { f->desc.handle, f->data.handle };
	uint64_t offsets[2] = { desc_offset, 0 };

	if (d->engine == NVDLA_ENGINE_NONE || d->engine == SELFTEST_ENGINE_ID) {
		todo(what);
		return;
	}
	memset(f->desc.map, 0, f->desc.size);
	memcpy((char *)f->desc.map + desc_offset, n,
	       desc_offset + sizeof(*n) <= f->desc.size ? sizeof(*n) : f->desc.size - desc_offset);
	EXPECT_ERR(submit_job(d->fd, handles, offsets, 2, 0, 0, NULL), -EINVAL, what);
}

static void test_descriptors(struct dev *d, struct fixture *f)
{
	struct net_desc n;

	net_valid(&n);
	n.num_operations = 0;
	descriptor_case(d, f, "zero operations in the network descriptor -> EINVAL", &n, 0);

	net_valid(&n);
	n.operation_desc_index = 5; /* the list has 2 entries */
	descriptor_case(d, f, "address-list index out of range -> EINVAL", &n, 0);

	net_valid(&n);
	n.surface_desc_index = -7;
	descriptor_case(d, f, "negative address-list index -> EINVAL", &n, 0);

	net_valid(&n);
	descriptor_case(d, f, "network descriptor running past its buffer's end -> EINVAL", &n,
			f->desc.size - 2 * d->atom);

	/*
	 * TODO(validator): a BDMA operation (entry 1: operation, surface and
	 * dependency descriptors) whose transfer's destination extent,
	 * line_size * line_repeat, ends past the end of entry 1's buffer; and
	 * the same for a convolution's weight and feature cubes. Needs the
	 * engine's descriptor structures.
	 */
	if (d->engine == NVDLA_ENGINE_NONE || d->engine == SELFTEST_ENGINE_ID)
		todo("descriptor extents past a buffer (BDMA transfer, conv cubes) -> EINVAL");
	else
		todo("descriptor extents past a buffer: write the case for the engine's structures");
}

static int submit_raw(int fd, struct drm_nvdla_submit *s)
{
	return xioctl(fd, DRM_IOCTL_NVDLA_JOB_SUBMIT, s);
}

static void test_submit_args(struct dev *d)
{
	struct fixture f;
	struct drm_nvdla_address addr[2];
	struct {
		struct drm_nvdla_job job;
		uint64_t extra;
	} big[2];
	struct drm_nvdla_submit s;
	uint32_t sync, bad = 0xbad;

	group = "submit";
	if (!fixture_init(d, &f)) {
		result(false, "setup");
		return;
	}

#define RESET()                                                                 \
	do {                                                                    \
		memset(addr, 0, sizeof(addr));                                  \
		memset(big, 0, sizeof(big));                                    \
		memset(&s, 0, sizeof(s));                                       \
		addr[0].handle = f.desc.handle;                                 \
		addr[1].handle = f.data.handle;                                 \
		big[0].job.addresses = (uintptr_t)addr;                         \
		big[0].job.address_count = 2;                                   \
		big[0].job.address_struct_size = sizeof(addr[0]);               \
		big[1].job = big[0].job;                                        \
		s.jobs = (uintptr_t)&big[0].job;                                \
		s.job_count = 1;                                                \
		s.job_struct_size = sizeof(struct drm_nvdla_job);               \
	} while (0)

	RESET();
	EXPECT_ERR(submit_raw(d->fd, &s), -ENODEV, "valid job: no engine");
	RESET();
	s.flags = 1;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "submit flags");
	RESET();
	s.pad = 1;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "submit pad");
	RESET();
	s.job_count = 0;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "zero jobs");
	RESET();
	s.job_count = 65;
	EXPECT_ERR(submit_raw(d->fd, &s), -E2BIG, "too many jobs (65)");
	RESET();
	s.job_struct_size = 16;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "job struct too small");
	RESET();
	s.job_struct_size = sizeof(big[0]);
	big[0].extra = 1;
	EXPECT_ERR(submit_raw(d->fd, &s), -E2BIG, "larger job struct with unknown non-zero field");
	RESET();
	s.job_struct_size = sizeof(big[0]);
	EXPECT_ERR(submit_raw(d->fd, &s), -ENODEV, "larger job struct, zero tail: no engine");
	RESET();
	big[0].job.flags = 1;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "job flags");
	RESET();
	big[0].job.pad = 1;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "job pad");
	RESET();
	big[0].job.dla_version = 0x000c05;
	EXPECT_ERR(submit_raw(d->fd, &s), -ENODEV, "job with a descriptor version: no engine");
	RESET();
	big[0].job.address_count = 0;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "zero addresses");
	RESET();
	big[0].job.address_count = NVDLA_MAX_BUFFERS_PER_TASK + 1;
	EXPECT_ERR(submit_raw(d->fd, &s), -E2BIG, "too many addresses (6145)");
	RESET();
	big[0].job.address_struct_size = 8;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "address struct too small");
	RESET();
	addr[1].flags = 1;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "address flags (reserved)");
	RESET();
	addr[1].handle = 0xbad;
	EXPECT_ERR(submit_raw(d->fd, &s), -ENOENT, "bad handle");
	RESET();
	addr[1].offset = f.data.size;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "offset past the end");
	RESET();
	addr[1].offset = d->atom / 2;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "misaligned address");
	RESET();
	big[0].job.addresses = 8;
	EXPECT_ERR(submit_raw(d->fd, &s), -EFAULT, "bad address-list pointer");
	RESET();
	big[0].job.in_syncobjs = (uintptr_t)&bad;
	big[0].job.in_syncobj_count = 1;
	EXPECT_ERR(submit_raw(d->fd, &s), -ENOENT, "unknown in-syncobj");
	RESET();
	big[0].job.in_syncobj_count = 65;
	EXPECT_ERR(submit_raw(d->fd, &s), -E2BIG, "too many in-syncobjs");
	RESET();
	big[0].job.out_syncobj = 0xbad;
	EXPECT_ERR(submit_raw(d->fd, &s), -ENOENT, "unknown out-syncobj");
	sync = syncobj_create(d->fd);
	RESET();
	big[0].job.out_syncobj = sync;
	big[0].job.in_syncobjs = (uintptr_t)&sync;
	big[0].job.in_syncobj_count = 1;
	EXPECT_ERR(submit_raw(d->fd, &s), -ENODEV, "with syncobjs: no engine");

	test_descriptors(d, &f);

	{
		struct drm_nvdla_wait w = { .job_id = 12345 };

		group = "wait";
		EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_WAIT, &w), -ENOENT, "unknown job id");
		w.job_id = 0;
		EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_WAIT, &w), -ENOENT, "job id 0");
		w.flags = 1;
		EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_WAIT, &w), -EINVAL, "flags");
		w.flags = 0;
		w.pad = 1;
		EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_WAIT, &w), -EINVAL, "pad");
	}
	fixture_fini(d, &f);
}

/* ---- jobs through the scheduler (selftest engine) ------------------------- */

static void test_jobs(struct dev *a, struct dev *b)
{
	struct fixture f;
	uint32_t handles[2], id, id2, sync, ids[8];
	int32_t status = 1;
	int fds[2], r;
	int64_t t0, ms;
	unsigned int i;
	struct drm_syncobj_wait sw = { 0 };

	group = "jobs";
	if (!fixture_init(a, &f)) {
		result(false, "setup");
		return;
	}
	handles[0] = f.desc.handle;
	handles[1] = f.data.handle;
	fds[0] = f.desc_fd;
	fds[1] = f.data_fd;

	set_command(&f.desc, SELFTEST_FAIL);
	sync = syncobj_create(a->fd);
	r = submit_job(a->fd, handles, NULL, 2, 0, sync, &id);
	result(!r && id > 0, "FAIL job queued: %s, id %u", errname(r), id);
	r = wait_job(a->fd, id, 5000000000ll, &status);
	result(!r && status == -ENODEV, "WAIT: done, status %s", errname(status));
	r = wait_job(a->fd, id, 0, &status);
	result(!r && status == -ENODEV, "WAIT again (poll): %s", errname(status));
	sw.handles = (uintptr_t)&sync;
	sw.count_handles = 1;
	sw.timeout_nsec = now_ns() + 1000000000ll;
	EXPECT_ERR(xioctl(a->fd, DRM_IOCTL_SYNCOBJ_WAIT, &sw), 0, "out-syncobj signalled");

	for (i = 0; i < 8; i++)
		submit_job(a->fd, handles, NULL, 2, 0, 0, &ids[i]);
	r = 0;
	for (i = 0; i < 8; i++)
		r |= wait_job(a->fd, ids[i], 5000000000ll, &status) || status != -ENODEV;
	result(!r && ids[7] == ids[0] + 7, "8 jobs in a row, consecutive ids, all fail with ENODEV");

	/* All jobs of a submit are checked before any is queued. */
	{
		struct drm_nvdla_address addr[2] = { { .handle = f.desc.handle },
						     { .handle = f.data.handle } };
		struct drm_nvdla_job jobs[2] = { { 0 } };
		struct drm_nvdla_submit s = { .jobs = (uintptr_t)jobs, .job_count = 2,
					      .job_struct_size = sizeof(jobs[0]) };

		jobs[0].addresses = (uintptr_t)addr;
		jobs[0].address_count = 2;
		jobs[0].address_struct_size = sizeof(addr[0]);
		jobs[0].job_id = 77;
		jobs[1] = jobs[0];
		jobs[1].address_count = 0;
		EXPECT_ERR(xioctl(a->fd, DRM_IOCTL_NVDLA_JOB_SUBMIT, &s), -EINVAL,
			   "two jobs, the second bad");
		result(jobs[0].job_id == 0, "... and the first was not queued (job_id %u)",
		       jobs[0].job_id);
		jobs[1].address_count = 2;
		EXPECT_ERR(xioctl(a->fd, DRM_IOCTL_NVDLA_JOB_SUBMIT, &s), 0, "two good jobs");
		result(jobs[0].job_id && jobs[1].job_id == jobs[0].job_id + 1 &&
			       !wait_job(a->fd, jobs[1].job_id, 5000000000ll, &status) &&
			       status == -ENODEV,
		       "... queued as ids %u and %u", jobs[0].job_id, jobs[1].job_id);
	}

	/* Original SUBMIT: returns when the task is done, with its error. */
	group = "jobs legacy";
	EXPECT_ERR(legacy_submit(a->fd, fds, NULL, 2, 1), -ENODEV, "FAIL task: ENODEV after running");
	EXPECT_ERR(legacy_submit(a->fd, fds, NULL, 2, 3), -ENODEV, "3 tasks");

	/* A hung job: timeout, engine reset, the job fails, the next one runs. */
	group = "timeout";
	set_command(&f.desc, SELFTEST_HANG);
	t0 = now_ns();
	r = submit_job(a->fd, handles, NULL, 2, 0, sync, &id);
	set_command(&f.desc, SELFTEST_FAIL); /* the engine keeps what it validated */
	r |= submit_job(a->fd, handles, NULL, 2, sync, 0, &id2);
	result(!r, "HANG job then a job waiting on its syncobj");
	EXPECT_ERR(wait_job(a->fd, id, 0, &status), -ETIMEDOUT, "WAIT with a past deadline");
	r = wait_job(a->fd, id, 10000000000ll, &status);
	ms = (now_ns() - t0) / 1000000;
	result(!r && status == -ETIMEDOUT && ms >= (int64_t)a->timeout_ms * 9 / 10,
	       "hung job fails with ETIMEDOUT after %" PRId64 " ms (timeout %" PRIu64 ")", ms,
	       a->timeout_ms);
	r = wait_job(a->fd, id2, 5000000000ll, &status);
	result(!r && status == -ENODEV, "the next job ran after the reset: %s", errname(status));
	set_command(&f.desc, SELFTEST_HANG);
	t0 = now_ns();
	EXPECT_ERR(legacy_submit(a->fd, fds, NULL, 2, 1), -ETIMEDOUT, "original SUBMIT of a hung task");
	set_command(&f.desc, SELFTEST_FAIL);

	/* Implicit sync across instances: B's job waits for A's on a shared buffer. */
	group = "implicit sync";
	{
		struct bo shared, bdesc;
		uint32_t h, bh[2];
		int dmabuf;

		if (!bo_create(b->fd, PAGE, 0, &shared) && !bo_create(b->fd, PAGE, 0, &bdesc) &&
		    bo_map(b->fd, &bdesc) && (dmabuf = prime_export(b->fd, shared.handle)) >= 0 &&
		    !prime_import(a->fd, dmabuf, &h)) {
			uint32_t ah[2] = { f.desc.handle, h };

			set_command(&f.desc, SELFTEST_HANG);
			r = submit_job(a->fd, ah, NULL, 2, 0, 0, &id);
			set_command(&bdesc, SELFTEST_FAIL);
			bh[0] = bdesc.handle;
			bh[1] = shared.handle;
			r |= submit_job(b->fd, bh, NULL, 2, 0, 0, &id2);
			result(!r, "A: HANG job on the shared buffer; B: FAIL job on it");
			EXPECT_ERR(wait_job(b->fd, id2, a->timeout_ms / 3 * 1000000ll, &status),
				   -ETIMEDOUT, "B's job waits while A's runs");
			r = wait_job(b->fd, id2, 10000000000ll, &status);
			result(!r && status == -ENODEV, "B's job ran once A's timed out");
			wait_job(a->fd, id, 10000000000ll, &status);
			gem_close(a->fd, h);
			close(dmabuf);
			bo_free(b->fd, &shared);
			bo_free(b->fd, &bdesc);
			set_command(&f.desc, SELFTEST_FAIL);
		} else {
			result(false, "setup");
		}
	}

	/* A file remembers its last 1024 jobs. */
	group = "job ids";
	{
		uint32_t first = 0, last = 0;

		for (i = 0; i < 1100; i++) {
			if (submit_job(a->fd, handles, NULL, 2, 0, 0, &id))
				break;
			if (!first)
				first = id;
			last = id;
			if (i % 100 == 99)
				wait_job(a->fd, id, 5000000000ll, NULL);
		}
		result(i == 1100, "1100 jobs queued");
		EXPECT_ERR(wait_job(a->fd, first, 0, NULL), -ENOENT, "the oldest is forgotten");
		r = wait_job(a->fd, last, 5000000000ll, &status);
		result(!r && status == -ENODEV, "the newest finishes: %s", errname(status));
	}
	fixture_fini(a, &f);
}

/* ---- concurrency ------------------------------------------------------------ */

static int child(struct dev *d, int seed)
{
	char name[32];
	int fd = open_node(d->path, name, sizeof(name)), errors = 0, i;
	struct bo desc, data;
	uint32_t handles[2], id;
	int32_t status;

	if (fd < 0)
		return 1;
	for (i = 0; i < 60; i++) {
		int r;

		if (bo_create(fd, PAGE * (1 + (i + seed) % 4), 0, &desc) || !bo_map(fd, &desc) ||
		    bo_create(fd, PAGE * (1 + (i * seed) % 7), 256, &data)) {
			errors++;
			break;
		}
		set_command(&desc, SELFTEST_FAIL);
		handles[0] = desc.handle;
		handles[1] = data.handle;
		r = submit_job(fd, handles, NULL, 2, 0, 0, &id);
		if (selftest) {
			errors += r != 0;
			if (!r && (wait_job(fd, id, 5000000000ll, &status) || status != -ENODEV))
				errors++;
		} else {
			errors += r != -ENODEV;
		}
		if (i % 3 == 0) {
			int dmabuf = prime_export(fd, data.handle);
			uint32_t h;

			errors += dmabuf < 0 || prime_import(fd, dmabuf, &h) || h != data.handle;
			close(dmabuf);
		}
		bo_free(fd, &desc);
		if (i % 2)
			bo_free(fd, &data); /* the others are left for close() to free */
	}
	close(fd);
	return errors ? 1 : 0;
}

static void test_processes(struct dev *a, struct dev *b, struct dev *c)
{
	struct dev *devs[3] = { a, b, c };
	pid_t pids[6];
	int i, status, ok = 0;

	group = "processes";
	for (i = 0; i < 6; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(child(devs[i % 3], i + 1));
	}
	for (i = 0; i < 6; i++)
		if (pids[i] > 0 && waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0)
			ok++;
	result(ok == 6, "6 processes on 3 instances at once: %d clean", ok);
}

/* Runtime PM of the platform instance: powered only while a job runs (+ autosuspend). */
static const char *runtime_status(struct dev *d)
{
	static char buf[32];
	char path[128];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/drm/%s/device/power/runtime_status",
		 strrchr(d->path, '/') + 1);
	fd = open(path, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n - 1 : 0] = '\0';
	return buf;
}

static void test_runtime_pm(struct dev *c)
{
	struct fixture f;
	uint32_t handles[2], id;
	int32_t status;
	char before[32], during[32];
	int i;

	group = "runtime pm";
	if (!fixture_init(c, &f)) {
		result(false, "setup");
		return;
	}
	handles[0] = f.desc.handle;
	handles[1] = f.data.handle;
	snprintf(before, sizeof(before), "%s", runtime_status(c));
	set_command(&f.desc, SELFTEST_HANG);
	submit_job(c->fd, handles, NULL, 2, 0, 0, &id);
	/* The job hangs for the timeout (300 ms): it is running within the first 200. */
	for (i = 0; i < 20; i++) {
		snprintf(during, sizeof(during), "%s", runtime_status(c));
		if (!strcmp(during, "active"))
			break;
		usleep(10000);
	}
	wait_job(c->fd, id, 10000000000ll, &status);
	for (i = 0; i < 100 && strcmp(runtime_status(c), "suspended"); i++)
		usleep(10000);
	result(!strcmp(before, "suspended") && !strcmp(during, "active") && i < 100,
	       "suspended, active while a job runs, suspended %d ms after it", i * 10);
	result(status == -ETIMEDOUT, "the platform instance's hung job timed out too");
	fixture_fini(c, &f);
}

/*
 * A process that exits with jobs queued, the last hung on the hardware: the
 * hung one is still running when the module is unloaded right after this
 * program (the unbind fails it with ENODEV; rmmod must still be clean).
 */
static void test_exit_with_jobs(struct dev *a)
{
	pid_t pid;
	int st = 0;

	group = "exit";
	pid = fork();
	if (pid == 0) {
		char name[32];
		int fd = open_node(a->path, name, sizeof(name)), i, errors = 0;
		struct bo desc, data;
		uint32_t handles[2];

		if (fd < 0 || bo_create(fd, PAGE, 0, &desc) || !bo_map(fd, &desc) ||
		    bo_create(fd, PAGE, 0, &data))
			_exit(1);
		handles[0] = desc.handle;
		handles[1] = data.handle;
		set_command(&desc, SELFTEST_FAIL);
		for (i = 0; i < 100; i++)
			errors += submit_job(fd, handles, NULL, 2, 0, 0, NULL) != 0;
		set_command(&desc, SELFTEST_HANG);
		errors += submit_job(fd, handles, NULL, 2, 0, 0, NULL) != 0;
		_exit(errors ? 1 : 0); /* no wait, no close: exit does it */
	}
	result(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
	       "a process exits with 101 jobs queued, the last one hangs");
}

/* A file open across unbind: ioctls fail with ENODEV, close works, rebind works. */
static void test_unbind(struct dev *b)
{
	char link[256], target[256], name[32];
	const char *addr;
	struct dev a2, b2, c2;
	struct bo bo;
	ssize_t n;
	int fd, ufd, i;

	group = "unbind";
	fd = open_node(b->path, name, sizeof(name));
	snprintf(link, sizeof(link), "/sys/class/drm/%s/device", strrchr(b->path, '/') + 1);
	n = readlink(link, target, sizeof(target) - 1);
	close(b->fd);
	b->fd = -1;
	if (fd < 0 || n <= 0 || bo_create(fd, PAGE, 0, &bo) || !bo_map(fd, &bo)) {
		result(false, "setup");
		return;
	}
	target[n] = '\0';
	addr = strrchr(target, '/') + 1;
	ufd = open("/sys/bus/pci/drivers/nvdla-ivshmem/unbind", O_WRONLY);
	result(ufd >= 0 && write(ufd, addr, strlen(addr)) == (ssize_t)strlen(addr),
	       "unbind %s with a file open and a buffer mapped", addr);
	close(ufd);
	{
		struct bo other;

		EXPECT_ERR(bo_create(fd, PAGE, 0, &other), -ENODEV, "BO_CREATE after unbind");
	}
	{
		/* Unplug revoked the CPU mappings: touching one is SIGBUS, not stale memory. */
		pid_t pid = fork();
		int st = 0;

		if (pid == 0) {
			memset(bo.map, 1, PAGE);
			_exit(0);
		}
		result(pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
			       WTERMSIG(st) == SIGBUS,
		       "the buffer's mapping is revoked (SIGBUS)");
	}
	bo_free(fd, &bo);
	close(fd);
	ufd = open("/sys/bus/pci/drivers/nvdla-ivshmem/bind", O_WRONLY);
	result(ufd >= 0 && write(ufd, addr, strlen(addr)) == (ssize_t)strlen(addr), "bind again");
	close(ufd);
	for (i = 0; i < 50 && !find_devices(&a2, &b2, &c2); i++)
		usleep(20000);
	result(i < 50 && !bo_create(b2.fd, PAGE, 0, &bo), "the device works again (%s)", b2.path);
	if (i < 50) {
		gem_close(b2.fd, bo.handle);
		close(a2.fd);
		close(b2.fd);
		close(c2.fd);
	}
}

int main(int argc, char **argv)
{
	struct dev a, b, c;

	if (argc != 2 || (strcmp(argv[1], "stub") && strcmp(argv[1], "selftest"))) {
		fprintf(stderr, "usage: %s stub|selftest\n", argv[0]);
		return 2;
	}
	selftest = !strcmp(argv[1], "selftest");
	setvbuf(stdout, NULL, _IOLBF, 0);

	group = "devices";
	if (!find_devices(&a, &b, &c)) {
		result(false, "three NVDLA render nodes (nv_full, nv_small, nv_large)");
		printf("nvdla-kmd-test %s: %d passed, %d failed, %d skipped\n", argv[1], passed,
		       failed, skipped);
		return 1;
	}
	test_params(&a, &b, &c);
	if (!selftest) {
		test_legacy_gem(&a);
		test_bo(&a, "bo carve-out");
		test_bo(&b, "bo dma");
		test_bo(&c, "bo platform");
		test_carveout_exhaustion(&a);
		test_prime(&a, &b);
		test_vgem_import(&a);
		test_legacy_submit(&a);
		test_legacy_submit(&b);
		test_submit_args(&a);
		test_submit_args(&b);
	} else {
		test_jobs(&a, &b);
		test_runtime_pm(&c);
	}
	test_processes(&a, &b, &c);
	if (selftest) {
		test_unbind(&b);
		test_exit_with_jobs(&a); /* last: rmmod follows at once */
	}

	close(a.fd);
	if (b.fd >= 0)
		close(b.fd);
	close(c.fd);
	printf("nvdla-kmd-test %s: %d passed, %d failed, %d skipped\n", argv[1], passed, failed,
	       skipped);
	return failed ? 1 : 0;
}
