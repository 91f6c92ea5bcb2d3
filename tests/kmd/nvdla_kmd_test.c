// SPDX-License-Identifier: MIT
/*
 * Tests of the NVDLA kernel driver through its UAPI, run inside a QEMU
 * guest by tests/kmd/run.sh (make test-kmd). Statically linked; needs root
 * (pagemap, sysfs) and two NVDLA instances on ivshmem:
 *
 *   instance A  nv_full, carve-out in the ivshmem BAR
 *   instance B  nv_small, buffers from guest DMA memory
 *
 *   instance C  nv_large on the platform bus (a 4 KiB MMIO window)
 *
 * Usage: nvdla_kmd_test dla|selftest|wedge
 *   dla       the production engine (nvdla_engine_dla): every argument check,
 *             then the validator on descriptors built here (dla_interface.h):
 *             broken ones are rejected with EINVAL; valid ones are queued and
 *             meet no hardware (the ivshmem devices have no model behind them,
 *             registers read as all ones): they fail to start with EIO, or
 *             (BDMA) start, hang, time out with ETIMEDOUT and reset the engine
 *   selftest  the test engine: jobs go through the scheduler and fail with
 *             ENODEV (FAIL) or hang until the job timeout (HANG)
 *   wedge     the test engine, the platform instance without a reset line:
 *             a hung job wedges it
 *
 * Prints one line per check and "nvdla-kmd-test: N passed, N failed, N skipped".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nvdla_drm.h"
#include <nvdla/hw/dla_interface.h>

#include "guest_common.h"

#ifndef NVDLA_ENGINE_DLA
#define NVDLA_ENGINE_DLA 1 /* kmd/nvdla_engine.h */
#endif

#define SELFTEST_ENGINE_ID 0x7e57	/* nvdla_engine_selftest.c */
#define SELFTEST_FAIL 0x4c494146	/* "FAIL" */
#define SELFTEST_HANG 0x474e4148	/* "HANG" */
#define PAGE 4096u

static int skipped;
static bool selftest;

/* ioctl returning 0 or -errno. */
#define EXPECT_ERR(expr, want, what)								\
	do {										\
		int r_ = (expr);							\
		int want_ = (want);							\
		result(r_ == want_, "%s -> %s (want %s)", what, errname(r_), errname(want_));	\
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

	/* Render nodes, or accel nodes when the module was loaded with accel=1. */
	for (i = 0; i < 24; i++) {
		struct dev d = { 0 };
		int fd;

		if (i < 12)
			snprintf(path, sizeof(path), "/dev/dri/renderD%d", 128 + i);
		else
			snprintf(path, sizeof(path), "/dev/accel/accel%d", i - 12);
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

/* Exports HANDLE of FROM as *DMABUF and imports it into TO as *HANDLE_TO: true if both worked. */
static bool share_bo(int from, uint32_t handle, int to, int *dmabuf, uint32_t *handle_to)
{
	*dmabuf = prime_export(from, handle);
	return *dmabuf >= 0 && !prime_import(to, *dmabuf, handle_to);
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
	/* The device reads it: a store the compiler may neither drop nor split. */
	__atomic_store_n((uint32_t *)desc->map, command, __ATOMIC_RELAXED);
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

/*
 * The original interface: @num_tasks copies of one task of @n entries
 * (dma-buf fd, offset); entries past the @given ones repeat entry 0.
 */
static int legacy_submit(int fd, const int *fds, const uint64_t *offsets, uint32_t n,
			 uint32_t given, uint16_t num_tasks)
{
	static struct nvdla_mem_handle list[NVDLA_MAX_BUFFERS_PER_TASK + 1];
	struct nvdla_ioctl_submit_task tasks[NVDLA_MAX_TASKS_PER_SUBMIT + 1];
	struct nvdla_submit_args args;
	uint32_t i;

	/* Fields the original runtime leaves uninitialised: garbage here. */
	memset(list, 0xa5, sizeof(list));
	memset(tasks, 0x5a, sizeof(tasks));
	for (i = 0; i < n && i < NVDLA_MAX_BUFFERS_PER_TASK + 1; i++) {
		list[i].handle = (uint32_t)fds[i < given ? i : 0];
		list[i].offset = offsets && i < given ? offsets[i] : 0;
	}
	for (i = 0; i < NVDLA_MAX_TASKS_PER_SUBMIT + 1; i++) {
		tasks[i].num_addresses = n;
		tasks[i].address_list = (uintptr_t)list;
	}
	memset(&args, 0, sizeof(args));
	args.tasks = (uintptr_t)tasks;
	args.num_tasks = num_tasks;
	args.version = 0xa5a5a5a5; /* the original runtime's is 0; never read */
	return xioctl(fd, DRM_IOCTL_NVDLA_SUBMIT, &args);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_params(struct dev *a, struct dev *b, struct dev *c)
{
	struct drm_nvdla_get_param gp = { 0 };
	uint64_t want_engine = selftest ? SELFTEST_ENGINE_ID : NVDLA_ENGINE_DLA;

	guest_group = "get_param";
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

	guest_group = "legacy gem";
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

	guest_group = name;
	for (i = 0; i < 6; i++) {
		uint64_t want = aligns[i] > PAGE ? aligns[i] : PAGE;
		int r = bo_create(d->fd, 1000 + i * 5000, aligns[i], &bos[i]);

		result(!r && bos[i].dma % want == 0,
		       "BO_CREATE alignment %" PRIu64 ": %s at %#" PRIx64, aligns[i], errname(r),
		       bos[i].dma);
		if (r)
			continue;
		ok &= !bo_info(d->fd, bos[i].handle, &info) && info.dma_address == bos[i].dma &&
		      info.size == bos[i].size && info.mmap_offset == bos[i].offset;
	}
	result(ok, "BO_INFO returns size, address and mmap offset");
	for (i = 0; i < 6; i++)
		for (j = 0; j < 6; j++)
			if (i != j && bos[i].size && bos[j].size &&
			    bos[i].dma < bos[j].dma + bos[j].size &&
			    bos[j].dma < bos[i].dma + bos[i].size)
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

/*
 * Without an IOMMU a device address is a physical address of kernel memory:
 * only CAP_SYS_ADMIN learns it. A child without capabilities gets 0 from
 * BO_CREATE and BO_INFO (and still a working buffer); root gets the address.
 */
static void test_address_privilege(struct dev *d)
{
	struct bo bo;
	int status = -1;
	pid_t pid;

	guest_group = "bo address";
	status = bo_create(d->fd, PAGE, 0, &bo);
	result(!status && bo.dma, "CAP_SYS_ADMIN: BO_CREATE returns %#" PRIx64, bo.dma);
	bo_free(d->fd, &bo);
	pid = fork();
	if (pid == 0) {
		struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct caps[2] = { { 0 } };
		struct drm_nvdla_bo_info info;

		if (syscall(SYS_capset, &hdr, caps))
			_exit(2);
		if (bo_create(d->fd, PAGE, 0, &bo) || !bo_map(d->fd, &bo))
			_exit(3);
		if (bo.dma || bo_info(d->fd, bo.handle, &info) || info.dma_address)
			_exit(4);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	result(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "without CAP_SYS_ADMIN: BO_CREATE and BO_INFO return address 0 (child exit %d)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* Fill the carve-out, then free everything: the range allocator gives it all back. */
static void test_carveout_exhaustion(struct dev *d)
{
	static struct bo bos[512];
	unsigned int n = 0, i;
	uint64_t chunk = d->memory / 16, total = 0;
	struct bo big;
	int r = 0;

	guest_group = "carve-out";
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

	guest_group = "prime";
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
 * A 16-page vgem buffer made of scattered pages, whatever the page allocator
 * does with freed pages (a per-CPU list, or back to the buddy lists, where
 * freed neighbours merge into a block that a new buffer gets whole):
 * SINGLES one-page buffers, then as many kept to push the first ones out of
 * the per-CPU LRU batches (their pages are freed at once); every other one
 * of the first is freed, so no freed page has a free neighbour to merge with
 * and no two of them are adjacent; the new buffer takes them (the most
 * recently freed pages, or the buddy's single pages). The task stays on one
 * CPU so that it sees the pages it freed. (pagemap cannot confirm it: vgem
 * maps with VM_PFNMAP; the driver's log says in how many pieces it was.)
 */
#define VGEM_SINGLES 32

static int vgem_scattered(int fd, struct vbo *z, struct vbo *held)
{
	int i, r = 0;

	for (i = 0; i < 2 * VGEM_SINGLES; i++) {
		r = vgem_create(fd, 1, &held[i]);
		if (r)
			break;
	}
	for (; i < 2 * VGEM_SINGLES; i++)
		held[i].map = NULL;
	for (i = 1; i < VGEM_SINGLES; i += 2) {
		if (held[i].map)
			vgem_free(fd, &held[i]);
		held[i].map = NULL;
	}
	if (!r)
		r = vgem_create(fd, VGEM_SINGLES / 2, z);
	return r;
}

static void vgem_release(int fd, struct vbo *held)
{
	int i;

	for (i = 0; i < 2 * VGEM_SINGLES; i++)
		if (held[i].map)
			vgem_free(fd, &held[i]);
}

static void test_vgem_import(struct dev *a)
{
	int vfd = vgem_open(), rejected = 0, other = 0, accepted = 0;
	struct vbo one, z, held[2 * VGEM_SINGLES];
	struct drm_nvdla_bo_info info;
	cpu_set_t cpus, cpu0;
	unsigned int round;
	uint32_t h;

	guest_group = "import";
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

	sched_getaffinity(0, sizeof(cpus), &cpus);
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	sched_setaffinity(0, sizeof(cpu0), &cpu0);
	for (round = 0; round < 4; round++) {
		int r, dmabuf;

		if (vgem_scattered(vfd, &z, held)) {
			other++;
			vgem_release(vfd, held);
			break;
		}
		dmabuf = prime_export(vfd, z.handle);
		r = prime_import(a->fd, dmabuf, &h);
		if (r == -EINVAL) {
			rejected++;
		} else if (r) {
			other++;
		} else {
			/* Contiguous after all: then it must be whole. */
			r = bo_info(a->fd, h, &info);
			other += r || info.size != 16 * PAGE || info.dma_address % PAGE;
			accepted++;
			gem_close(a->fd, h);
		}
		close(dmabuf);
		vgem_free(vfd, &z);
		vgem_release(vfd, held);
	}
	sched_setaffinity(0, sizeof(cpus), &cpus);
	result(rejected == 4 && !other,
	       "scattered 16-page vgem buffers refused with EINVAL (%d of 4, %d accepted, %d other errors)",
	       rejected, accepted, other);
	close(vfd);
}

/* ---- fixtures ---------------------------------------------------------------- */

/* Two buffers for the selftest engine: its command in the first word of entry 0. */
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

/*
 * A task of the DLA interface (include/nvdla/hw/dla_interface.h) in two
 * buffers of two pages. desc holds the network descriptor (entry 0) and the
 * dependency graph, operation list and surface list (entries 1-3, each list
 * at the start of its entry); data holds the input and output (entries 4, 5).
 */
static const uint64_t task_offsets[TASK_ENTRIES] = { 0, 256, 512, 1024, 0, PAGE };

struct task {
	struct bo desc, data;
	int desc_fd, data_fd;
	uint64_t offsets[TASK_ENTRIES]; /* as submitted */
};

/* One operation's descriptors, before they are written to the buffers. */
static bool task_init(struct dev *d, struct task *t)
{
	memset(t, 0, sizeof(*t));
	t->desc_fd = -1;
	t->data_fd = -1;
	memcpy(t->offsets, task_offsets, sizeof(task_offsets));
	if (bo_create(d->fd, 2 * PAGE, 0, &t->desc) || !bo_map(d->fd, &t->desc) ||
	    bo_create(d->fd, 2 * PAGE, 0, &t->data))
		return false;
	t->desc_fd = prime_export(d->fd, t->desc.handle);
	t->data_fd = prime_export(d->fd, t->data.handle);
	return t->desc_fd >= 0 && t->data_fd >= 0;
}

static void task_fini(struct dev *d, struct task *t)
{
	if (t->desc_fd >= 0)
		close(t->desc_fd);
	if (t->data_fd >= 0)
		close(t->data_fd);
	if (t->desc.handle)
		bo_free(d->fd, &t->desc);
	if (t->data.handle)
		bo_free(d->fd, &t->data);
}

static uint32_t task_handle(const struct task *t, unsigned int entry)
{
	return entry < TASK_SRC ? t->desc.handle : t->data.handle;
}

static int task_fd(const struct task *t, unsigned int entry)
{
	return entry < TASK_SRC ? t->desc_fd : t->data_fd;
}

/* An int8 feature cube of w x h x c, one surface per atom of channels, packed. */
static struct nvdla_dla_data_cube cube(const struct dev *d, int16_t entry, uint16_t w, uint16_t h,
				       uint16_t c)
{
	struct nvdla_dla_data_cube k;

	memset(&k, 0, sizeof(k));
	k.type = NVDLA_DLA_MEM_MC;
	k.address = entry;
	k.width = w;
	k.height = h;
	k.channel = c;
	k.line_stride = w * d->atom;
	k.surf_stride = w * h * d->atom;
	k.size = k.surf_stride * ((c + d->atom - 1) / d->atom);
	return k;
}

/* SDP copying a 4x4xatom int8 cube from entry 4 to entry 5 (no stage enabled). */
static void descs_sdp(const struct dev *d, struct dla_test_descs *x)
{
	struct nvdla_dla_sdp_op_desc *op = &x->op.sdp_op;
	struct nvdla_dla_sdp_surface_desc *s = &x->surf.sdp_surface;

	dla_test_descs_init(x, NVDLA_DLA_OP_SDP);
	op->src_precision = NVDLA_DLA_PRECISION_INT8;
	op->dst_precision = NVDLA_DLA_PRECISION_INT8;
	op->lut_index = -1;
	op->out_cvt.scale = 1;
	op->batch_num = 1;
	s->src_data = cube(d, TASK_SRC, 4, 4, (uint16_t)d->atom);
	s->dst_data = cube(d, TASK_DST, 4, 4, (uint16_t)d->atom);
	s->x1_data.address = -1;
	s->x2_data.address = -1;
	s->y_data.address = -1;
}

/* BDMA copying @lines lines of 256 bytes from entry 4 to entry 5 (nv_full only). */
static void descs_bdma(struct dla_test_descs *x, uint32_t lines)
{
	struct nvdla_dla_bdma_surface_desc *s = &x->surf.bdma_surface;
	struct nvdla_dla_bdma_transfer *tr = &s->transfers[0];

	dla_test_descs_init(x, NVDLA_DLA_OP_BDMA);
	x->op.bdma_op.num_transfers = 1;
	s->source_type = NVDLA_DLA_MEM_MC;
	s->destination_type = NVDLA_DLA_MEM_MC;
	s->num_transfers = 1;
	tr->source_address = TASK_SRC;
	tr->destination_address = TASK_DST;
	tr->line_size = 256;
	tr->line_repeat = lines;
	tr->source_line = 256;
	tr->destination_line = 256;
	tr->surface_repeat = 1;
	tr->source_surface = 256 * lines;
	tr->destination_surface = 256 * lines;
}

/*
 * Writes @x into the task's buffer, the surface in the 0.12 layout or, with
 * @v10, in the 0.10/0.11 one (28-byte cubes without offset; the slot keeps
 * its 644 bytes). Resets the entries' offsets.
 */
static void task_write(struct task *t, const struct dla_test_descs *x, bool v10)
{
	uint8_t *m = t->desc.map;
	const uint8_t *wide = (const uint8_t *)&x->surf;
	uint8_t *surf = m + task_offsets[TASK_SURFS];
	unsigned int type = x->graph.op_type < NVDLA_DLA_OP_COUNT ? x->graph.op_type : 0;
	unsigned int cubes = nvdla_dla_surface_cubes(type), k;

	memset(m, 0, t->desc.size);
	memcpy(m + task_offsets[TASK_NET], &x->net, sizeof(x->net));
	memcpy(m + task_offsets[TASK_GRAPH], &x->graph, sizeof(x->graph));
	memcpy(m + task_offsets[TASK_OPS], &x->op, sizeof(x->op));
	if (!v10) {
		memcpy(surf, wide, sizeof(x->surf));
	} else {
		for (k = 0; k < cubes; k++) {
			memcpy(surf + k * NVDLA_DLA_DATA_CUBE_V10_SIZE, wide + k * 32, 4);
			memcpy(surf + k * NVDLA_DLA_DATA_CUBE_V10_SIZE + 4, wide + k * 32 + 8, 24);
		}
		memcpy(surf + cubes * NVDLA_DLA_DATA_CUBE_V10_SIZE, wide + cubes * 32,
		       nvdla_dla_surface_size(type, NVDLA_DLA_VERSION(0, 12, 0)) - cubes * 32);
	}
	memcpy(t->offsets, task_offsets, sizeof(task_offsets));
}

/* JOB_SUBMIT of @t with descriptor version @version; *id is the job's when queued. */
static int submit_task(int fd, const struct task *t, uint32_t version, uint32_t *id)
{
	struct drm_nvdla_address addr[TASK_ENTRIES];
	struct drm_nvdla_job job;
	struct drm_nvdla_submit s;
	unsigned int i;
	int r;

	memset(addr, 0, sizeof(addr));
	memset(&job, 0, sizeof(job));
	memset(&s, 0, sizeof(s));
	for (i = 0; i < TASK_ENTRIES; i++) {
		addr[i].handle = task_handle(t, i);
		addr[i].offset = t->offsets[i];
	}
	job.addresses = (uintptr_t)addr;
	job.address_count = TASK_ENTRIES;
	job.address_struct_size = sizeof(addr[0]);
	job.dla_version = version;
	s.jobs = (uintptr_t)&job;
	s.job_count = 1;
	s.job_struct_size = sizeof(job);
	r = xioctl(fd, DRM_IOCTL_NVDLA_JOB_SUBMIT, &s);
	*id = job.job_id;
	return r;
}

/* The validator rejects @t: JOB_SUBMIT fails with @want and queues nothing. */
static void expect_reject(struct dev *d, const struct task *t, uint32_t version, int want,
			  const char *what)
{
	uint32_t id = 0;
	int r = submit_task(d->fd, t, version, &id);

	result(r == want && !id, "%s -> %s (want %s)", what, errname(r), errname(want));
}

/* The validator accepts @t: the job is queued and finishes with @want; *ms it took. */
static void expect_job(struct dev *d, const struct task *t, uint32_t version, int want,
		       const char *what, int64_t *ms)
{
	int64_t t0 = now_ns();
	int32_t status = 1;
	uint32_t id = 0;
	int r = submit_task(d->fd, t, version, &id);

	if (!r)
		r = wait_job(d->fd, id, 10000000000ll, &status);
	if (ms)
		*ms = (now_ns() - t0) / 1000000;
	if (r)
		result(false, "%s -> rejected: %s (want accepted, job %s)", what, errname(r),
		       errname(want));
	else
		result(status == want, "%s -> accepted, job %s (want %s)", what, errname(status),
		       errname(want));
}

/* ---- the original SUBMIT ----------------------------------------------------- */

static void test_legacy_submit(struct dev *d)
{
	struct task t;
	struct dla_test_descs x;
	int fds[TASK_ENTRIES], pipefd[2];
	uint64_t offsets[TASK_ENTRIES];
	struct nvdla_submit_args args = { 0 };
	unsigned int i;

	guest_group = "legacy submit";
	if (!task_init(d, &t)) {
		result(false, "setup");
		task_fini(d, &t);
		return;
	}
	descs_sdp(d, &x);
	task_write(&t, &x, false);
	for (i = 0; i < TASK_ENTRIES; i++) {
		fds[i] = task_fd(&t, i);
		offsets[i] = t.offsets[i];
	}

	/* Valid arguments (garbage in version, timeout and reserved): the engine decides. */
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, TASK_ENTRIES, TASK_ENTRIES, 1), -EIO,
		   "valid task, garbage version/timeout/reserved: validated, no hardware");
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, TASK_ENTRIES, TASK_ENTRIES, 3), -EIO,
		   "3 tasks, each validated and run");
	task_write(&t, &x, true);
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, TASK_ENTRIES, TASK_ENTRIES, 1), -EIO,
		   "0.10 layout: detected, validated, no hardware");
	x.net.num_operations = 0;
	task_write(&t, &x, false);
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, TASK_ENTRIES, TASK_ENTRIES, 1), -EINVAL,
		   "no operations: the validator rejects it");
	descs_sdp(d, &x);
	task_write(&t, &x, false);

	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, TASK_ENTRIES, TASK_ENTRIES, 0), -EINVAL,
		   "num_tasks 0");
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, TASK_ENTRIES, TASK_ENTRIES,
				 NVDLA_MAX_TASKS_PER_SUBMIT + 1),
		   -EINVAL, "too many tasks (25)");
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, 0, 0, 1), -EINVAL, "no addresses");
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, NVDLA_MAX_BUFFERS_PER_TASK + 1,
				 TASK_ENTRIES, 1),
		   -EINVAL, "too many addresses (6145)");

	fds[TASK_SRC] = 1000; /* not an open file */
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, TASK_ENTRIES, TASK_ENTRIES, 1), -EBADF,
		   "bad handle (closed fd)");
	if (!pipe(pipefd)) {
		fds[TASK_SRC] = pipefd[0];
		EXPECT_ERR(legacy_submit(d->fd, fds, offsets, TASK_ENTRIES, TASK_ENTRIES, 1),
			   -EINVAL, "bad handle (fd not a dma-buf)");
		close(pipefd[0]);
		close(pipefd[1]);
	}
	fds[TASK_SRC] = t.data_fd;

	offsets[TASK_SRC] = t.data.size;
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, TASK_ENTRIES, TASK_ENTRIES, 1), -EINVAL,
		   "offset at the end");
	offsets[TASK_SRC] = 1ull << 40;
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, TASK_ENTRIES, TASK_ENTRIES, 1), -EINVAL,
		   "offset far past the end");
	offsets[TASK_SRC] = d->atom / 2;
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, TASK_ENTRIES, TASK_ENTRIES, 1), -EINVAL,
		   "misaligned address");
	offsets[TASK_SRC] = d->atom;
	EXPECT_ERR(legacy_submit(d->fd, fds, offsets, TASK_ENTRIES, TASK_ENTRIES, 1), -EIO,
		   "atom-aligned entry offset: validated, no hardware");
	offsets[TASK_SRC] = 0;

	args.tasks = 8; /* unmapped */
	args.num_tasks = 1;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_SUBMIT, &args), -EFAULT, "bad tasks pointer");
	args.tasks = 0;
	args.flags = 2;
	EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_SUBMIT, &args), -EINVAL, "unknown flag");

	task_fini(d, &t);
}

/* ---- JOB_SUBMIT argument checks ---------------------------------------------- */

static int submit_raw(int fd, struct drm_nvdla_submit *s)
{
	return xioctl(fd, DRM_IOCTL_NVDLA_JOB_SUBMIT, s);
}

/* Submits @s and, when it was queued, waits for its first job: its status, else the error. */
static int submit_wait(int fd, struct drm_nvdla_submit *s)
{
	struct drm_nvdla_job *job = (struct drm_nvdla_job *)(uintptr_t)s->jobs;
	int32_t status = 1;
	int r = submit_raw(fd, s);

	if (r)
		return r;
	r = wait_job(fd, job->job_id, 10000000000ll, &status);
	return r ? r : status;
}

static void test_submit_args(struct dev *d)
{
	struct task t;
	struct dla_test_descs x;
	struct drm_nvdla_address addr[TASK_ENTRIES];
	struct {
		struct drm_nvdla_job job;
		uint64_t extra;
	} big[2];
	struct drm_nvdla_submit s;
	uint32_t sync, bad = 0xbad;
	unsigned int i;

	guest_group = "submit";
	if (!task_init(d, &t)) {
		result(false, "setup");
		task_fini(d, &t);
		return;
	}
	descs_sdp(d, &x);
	task_write(&t, &x, false);

	/* A valid task: accepted jobs meet no hardware and fail to start with EIO. */
#define RESET()                                                                 \
	do {                                                                    \
		memset(addr, 0, sizeof(addr));                                  \
		memset(big, 0, sizeof(big));                                    \
		memset(&s, 0, sizeof(s));                                       \
		for (i = 0; i < TASK_ENTRIES; i++) {                               \
			addr[i].handle = task_handle(&t, i);                    \
			addr[i].offset = t.offsets[i];                          \
		}                                                               \
		big[0].job.addresses = (uintptr_t)addr;                         \
		big[0].job.address_count = TASK_ENTRIES;                           \
		big[0].job.address_struct_size = sizeof(addr[0]);               \
		big[1].job = big[0].job;                                        \
		s.jobs = (uintptr_t)&big[0].job;                                \
		s.job_count = 1;                                                \
		s.job_struct_size = sizeof(struct drm_nvdla_job);               \
	} while (0)

	RESET();
	EXPECT_ERR(submit_wait(d->fd, &s), -EIO, "valid job: queued, no hardware");
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
	EXPECT_ERR(submit_wait(d->fd, &s), -EIO, "larger job struct, zero tail: queued");
	RESET();
	big[0].job.flags = 1;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "job flags");
	RESET();
	big[0].job.pad = 1;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "job pad");
	RESET();
	big[0].job.dla_version = 0x000c05;
	EXPECT_ERR(submit_wait(d->fd, &s), -EIO, "job with descriptor version 0.12.5: queued");
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
	addr[TASK_SRC].handle = 0xbad;
	EXPECT_ERR(submit_raw(d->fd, &s), -ENOENT, "bad handle");
	RESET();
	addr[TASK_SRC].offset = t.data.size;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "offset past the end");
	RESET();
	addr[TASK_SRC].offset = d->atom / 2;
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
	big[0].job.in_syncobjs = (uintptr_t)&sync;
	big[0].job.in_syncobj_count = 1;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL,
		   "in-syncobj without a fence (it could never run)");
	RESET();
	big[0].job.out_syncobj = sync;
	EXPECT_ERR(submit_wait(d->fd, &s), -EIO, "with an out-syncobj: queued");
	RESET();
	big[0].job.out_syncobj = sync;
	big[0].job.in_syncobjs = (uintptr_t)&sync;
	big[0].job.in_syncobj_count = 1;
	EXPECT_ERR(submit_wait(d->fd, &s), -EIO, "with syncobjs: queued");
	RESET();
	s.job_count = 2;
	s.job_struct_size = sizeof(big[0]);
	big[1].job.address_count = 0;
	big[0].job.job_id = 77;
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "two jobs, the second bad");
	result(big[0].job.job_id == 0, "... and the first was not queued (job_id %u)",
	       big[0].job.job_id);
	x.net.num_operations = 0;
	task_write(&t, &x, false);
	RESET();
	s.job_count = 2;
	s.job_struct_size = sizeof(big[0]);
	EXPECT_ERR(submit_raw(d->fd, &s), -EINVAL, "two jobs the validator rejects");
	result(big[0].job.job_id == 0 && big[1].job.job_id == 0, "... none queued");
#undef RESET

	{
		struct drm_nvdla_wait w = { .job_id = 12345 };

		guest_group = "wait";
		EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_WAIT, &w), -ENOENT, "unknown job id");
		w.job_id = 0;
		EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_WAIT, &w), -ENOENT, "job id 0");
		w.flags = 1;
		EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_WAIT, &w), -EINVAL, "flags");
		w.flags = 0;
		w.pad = 1;
		EXPECT_ERR(xioctl(d->fd, DRM_IOCTL_NVDLA_WAIT, &w), -EINVAL, "pad");
	}
	task_fini(d, &t);
}

/* ---- the validator (kmd/engine/) on every submit -------------------------- */

static void test_validator(struct dev *d, const char *name)
{
	const uint32_t v10 = NVDLA_DLA_VERSION(0, 10, 0), v12 = NVDLA_DLA_VERSION(0, 12, 0);
	struct nvdla_dla_sdp_surface_desc *s;
	bool small = d->config == NVDLA_HW_CONFIG_NV_SMALL;
	struct dla_test_descs x;
	struct task t;

	guest_group = name;
	if (!task_init(d, &t)) {
		result(false, "setup");
		task_fini(d, &t);
		return;
	}
	s = &x.surf.sdp_surface;

	/* Valid tasks pass and run; the layout follows the version, or is detected. */
	descs_sdp(d, &x);
	task_write(&t, &x, false);
	expect_job(d, &t, v12, -EIO, "valid SDP task, 0.12: runs, fails to start (no hardware)",
		   NULL);
	expect_job(d, &t, 0, -EIO, "the same, version 0 (unknown): read as 0.12", NULL);
	expect_reject(d, &t, v10, -EINVAL, "the same declared 0.10: 32-byte cubes misread");
	task_write(&t, &x, true);
	expect_job(d, &t, v10, -EIO, "valid SDP task, 0.10 layout (28-byte cubes)", NULL);
	expect_job(d, &t, NVDLA_DLA_VERSION(0, 11, 0), -EIO, "the same declared 0.11", NULL);
	expect_job(d, &t, 0, -EIO, "the same, version 0: the 0.10/0.11 layout is detected", NULL);
	expect_reject(d, &t, v12, -EINVAL, "the same declared 0.12: 28-byte cubes misread");
	task_write(&t, &x, false);
	expect_reject(d, &t, NVDLA_DLA_VERSION(0, 9, 0), -EINVAL, "interface 0.9.0");
	expect_reject(d, &t, NVDLA_DLA_VERSION(0, 13, 0), -EINVAL, "interface 0.13.0");

	/* The network descriptor and the lists. */
	descs_sdp(d, &x);
	x.net.num_operations = 0;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "zero operations");
	descs_sdp(d, &x);
	x.net.operation_desc_index = 9;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "list index out of range (9, 6 entries)");
	descs_sdp(d, &x);
	x.net.dependency_graph_index = TASK_ENTRIES;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "list index = number of entries");
	descs_sdp(d, &x);
	x.net.surface_desc_index = -7;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "negative list index (-7)");
	descs_sdp(d, &x);
	x.net.operation_desc_index = -1;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "list index -1");
	descs_sdp(d, &x);
	x.net.op_head[NVDLA_DLA_OP_SDP] = 1;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "op_head out of range");
	descs_sdp(d, &x);
	x.net.num_operations = 12; /* 12 x 644 bytes: more than the surface list's entry */
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "lists longer than their entries (12 operations)");
	descs_sdp(d, &x);
	task_write(&t, &x, false);
	t.offsets[TASK_NET] = t.desc.size - 32; /* 32 of the descriptor's 40 bytes in the buffer */
	memcpy((char *)t.desc.map + t.offsets[TASK_NET], &x.net, 32);
	expect_reject(d, &t, v12, -EINVAL, "network descriptor past its buffer's end");
	task_write(&t, &x, false);
	t.offsets[TASK_SURFS] = t.desc.size - 512;
	expect_reject(d, &t, v12, -EINVAL, "surface list past its buffer's end");

	/* Operations: enumerations, graph, memory. */
	descs_sdp(d, &x);
	x.graph.op_type = 9;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "bad enum: op_type 9");
	descs_sdp(d, &x);
	s->src_data.type = 7;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "bad enum: memory type 7");
	descs_sdp(d, &x);
	x.op.sdp_op.x1_op.act = 9;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "bad enum: SDP activation 9");
	descs_sdp(d, &x);
	x.graph.dependency_count = 1;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "waits for an event nobody sends");
	descs_sdp(d, &x);
	s->dst_data.offset = (uint32_t)(t.data.size - task_offsets[TASK_DST] - d->atom);
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "output cube extends past its buffer");
	descs_sdp(d, &x);
	s->src_data.height = 1024;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "input cube of 1024 lines extends past its entry");
	descs_sdp(d, &x);
	s->src_data.address = TASK_ENTRIES;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "cube in entry 6 of 6");
	descs_sdp(d, &x);
	s->dst_data.address = -1;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "output cube in entry -1");
	descs_sdp(d, &x);
	s->dst_data.offset = d->atom / 2;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "misaligned surface address");
	descs_sdp(d, &x);
	s->src_data.line_stride += d->atom / 2;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "misaligned line stride");
	descs_sdp(d, &x);
	s->src_data.line_stride = d->atom;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, -EINVAL, "line stride smaller than a line");
	descs_sdp(d, &x);
	s->src_data.type = NVDLA_DLA_MEM_CV;
	task_write(&t, &x, false);
	expect_reject(d, &t, v12, small ? -EOPNOTSUPP : -EINVAL,
		      small ? "CV-SRAM cube on nv_small (no CV-SRAM)"
			    : "CV-SRAM cube in a buffer of system memory");
	if (small) {
		descs_sdp(d, &x);
		x.op.sdp_op.src_precision = NVDLA_DLA_PRECISION_FP16;
		x.op.sdp_op.dst_precision = NVDLA_DLA_PRECISION_FP16;
		task_write(&t, &x, false);
		expect_reject(d, &t, v12, -EOPNOTSUPP, "fp16 on nv_small");
	}
	descs_bdma(&x, 1);
	task_write(&t, &x, false);
	if (d->config == NVDLA_HW_CONFIG_NV_FULL) {
		descs_bdma(&x, (uint32_t)(t.data.size - task_offsets[TASK_DST]) / 256 + 1);
		task_write(&t, &x, false);
		expect_reject(d, &t, v12, -EINVAL, "BDMA transfer past its destination's end");
		descs_bdma(&x, 1);
		x.surf.bdma_surface.transfers[0].line_size = 48;
		task_write(&t, &x, false);
		expect_reject(d, &t, v12, -EINVAL, "BDMA line size not a multiple of 32");
	} else {
		expect_reject(d, &t, v12, -EOPNOTSUPP, "BDMA on a configuration without BDMA");
	}

	task_fini(d, &t);
}

/* Descriptors must be readable by the kernel: an imported buffer cannot hold them. */
/*
 * Two operations, an SDP (op 0) and a BDMA without transfers (op 1): op 1
 * waits for op 0's completion and, with @cycle, op 0 for op 1's too (each is
 * sent the one event it waits for, but neither can run first).
 */
static void task_write_pair(const struct dev *d, struct task *t, bool cycle)
{
	struct dla_test_descs sdp, bdma;
	uint8_t *m = t->desc.map;

	descs_sdp(d, &sdp);
	descs_bdma(&bdma, 0);
	bdma.surf.bdma_surface.num_transfers = 0;
	bdma.op.bdma_op.num_transfers = 0;
	sdp.net.num_operations = 2;
	sdp.net.op_head[NVDLA_DLA_OP_BDMA] = 1;
	sdp.graph.consumers[NVDLA_DLA_OP_BDMA].index = 1;
	sdp.graph.consumers[NVDLA_DLA_OP_BDMA].event = NVDLA_DLA_EVENT_OP_COMPLETED;
	bdma.graph.dependency_count = 1;
	if (cycle) {
		sdp.graph.dependency_count = 1;
		bdma.graph.consumers[NVDLA_DLA_OP_SDP].index = 0;
		bdma.graph.consumers[NVDLA_DLA_OP_SDP].event = NVDLA_DLA_EVENT_OP_COMPLETED;
	}
	task_write(t, &sdp, false);
	memcpy(m + task_offsets[TASK_GRAPH] + sizeof(bdma.graph), &bdma.graph, sizeof(bdma.graph));
	memcpy(m + task_offsets[TASK_OPS] + sizeof(bdma.op), &bdma.op, sizeof(bdma.op));
	memcpy(m + task_offsets[TASK_SURFS] + sizeof(bdma.surf), &bdma.surf, sizeof(bdma.surf));
}

/* A dependency cycle passes every per-operation rule but could never run: refused. */
static void test_validator_cycle(struct dev *a)
{
	const uint32_t v12 = NVDLA_DLA_VERSION(0, 12, 0);
	struct task t;

	guest_group = "validator graph";
	if (!task_init(a, &t)) {
		result(false, "setup");
		return;
	}
	task_write_pair(a, &t, false);
	expect_job(a, &t, v12, -EIO, "SDP then BDMA waiting for it: accepted", NULL);
	task_write_pair(a, &t, true);
	expect_reject(a, &t, v12, -EINVAL, "SDP and BDMA waiting for each other (a cycle)");
	task_fini(a, &t);
}

static void test_validator_import(struct dev *a, struct dev *b)
{
	struct bo other = { 0 };
	struct dla_test_descs x;
	struct task t;
	uint32_t h = 0, id = 0, own;
	int dmabuf = -1, r;

	guest_group = "validator import";
	if (!task_init(a, &t) || bo_create(b->fd, 2 * PAGE, 0, &other) || !bo_map(b->fd, &other) ||
	    !share_bo(b->fd, other.handle, a->fd, &dmabuf, &h)) {
		result(false, "setup");
	} else {
		descs_sdp(a, &x);
		task_write(&t, &x, false);
		memcpy(other.map, t.desc.map, 2 * PAGE);
		own = t.desc.handle;
		t.desc.handle = h; /* entries 0-3 in B's buffer, imported into A */
		r = submit_task(a->fd, &t, NVDLA_DLA_VERSION(0, 12, 0), &id);
		t.desc.handle = own;
		result(r == -EINVAL && !id, "descriptors in an imported buffer -> %s (want EINVAL)",
		       errname(r));
		gem_close(a->fd, h);
	}
	if (dmabuf >= 0)
		close(dmabuf);
	if (other.handle)
		bo_free(b->fd, &other);
	task_fini(a, &t);
}

/*
 * nv_full on ivshmem without a hardware model: a BDMA task starts (its
 * registers read as ready), nothing ever completes it, the job times out,
 * the engine and the device are reset, and the next job runs.
 */
static void test_no_hardware(struct dev *a)
{
	struct dla_test_descs x;
	struct task t;
	int fds[TASK_ENTRIES];
	unsigned int i;
	int64_t ms, t0;

	guest_group = "no hardware";
	if (!task_init(a, &t)) {
		result(false, "setup");
		task_fini(a, &t);
		return;
	}
	descs_bdma(&x, 16);
	task_write(&t, &x, false);
	expect_job(a, &t, NVDLA_DLA_VERSION(0, 12, 0), -ETIMEDOUT, "valid BDMA task: starts, hangs",
		   &ms);
	result(ms >= (int64_t)a->timeout_ms * 9 / 10 && ms < (int64_t)a->timeout_ms * 10,
	       "... it failed after the job timeout: %" PRId64 " ms (timeout %" PRIu64 ")", ms,
	       a->timeout_ms);
	descs_sdp(a, &x);
	task_write(&t, &x, false);
	expect_job(a, &t, 0, -EIO, "the next job runs after the reset (and fails to start)", NULL);
	descs_bdma(&x, 16);
	task_write(&t, &x, false);
	expect_job(a, &t, 0, -ETIMEDOUT, "another BDMA task starts: the engine was reset", NULL);
	for (i = 0; i < TASK_ENTRIES; i++)
		fds[i] = task_fd(&t, i);
	t0 = now_ns();
	EXPECT_ERR(legacy_submit(a->fd, fds, t.offsets, TASK_ENTRIES, TASK_ENTRIES, 1), -ETIMEDOUT,
		   "original SUBMIT of the BDMA task");
	ms = (now_ns() - t0) / 1000000;
	result(ms >= (int64_t)a->timeout_ms * 9 / 10, "... returned after %" PRId64 " ms", ms);
	descs_sdp(a, &x);
	task_write(&t, &x, false);
	EXPECT_ERR(legacy_submit(a->fd, fds, t.offsets, TASK_ENTRIES, TASK_ENTRIES, 1), -EIO,
		   "original SUBMIT of the SDP task after it");
	/* Nothing to do: the task completes while it starts, without an interrupt. */
	descs_bdma(&x, 1);
	x.op.bdma_op.num_transfers = 0;
	x.surf.bdma_surface.num_transfers = 0;
	task_write(&t, &x, false);
	expect_job(a, &t, 0, 0, "a BDMA task without transfers completes as it starts", NULL);
	EXPECT_ERR(legacy_submit(a->fd, fds, t.offsets, TASK_ENTRIES, TASK_ENTRIES, 1), 0,
		   "... through the original SUBMIT too");
	task_fini(a, &t);
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

	guest_group = "jobs";
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
	result(!r && ids[7] == ids[0] + 7,
	       "8 jobs in a row, consecutive ids, all fail with ENODEV");

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
	guest_group = "jobs legacy";
	EXPECT_ERR(legacy_submit(a->fd, fds, NULL, 2, 2, 1), -ENODEV,
		   "FAIL task: ENODEV after running");
	EXPECT_ERR(legacy_submit(a->fd, fds, NULL, 2, 2, 3), -ENODEV, "3 tasks");

	/* A hung job: timeout, engine reset, the job fails, the next one runs. */
	guest_group = "timeout";
	/*
	 * The scheduler's timeout timer runs from the first of the jobs on the
	 * hardware: let the jobs above be freed (it stops) so that it starts
	 * with the hung job, not with one that ran just before it.
	 */
	usleep(100000);
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
	EXPECT_ERR(legacy_submit(a->fd, fds, NULL, 2, 2, 1), -ETIMEDOUT,
		   "original SUBMIT of a hung task");
	set_command(&f.desc, SELFTEST_FAIL);

	/* Implicit sync across instances: B's job waits for A's on a shared buffer. */
	guest_group = "implicit sync";
	{
		struct bo shared, bdesc;
		uint32_t h, bh[2];
		int dmabuf;

		if (!bo_create(b->fd, PAGE, 0, &shared) && !bo_create(b->fd, PAGE, 0, &bdesc) &&
		    bo_map(b->fd, &bdesc) && share_bo(b->fd, shared.handle, a->fd, &dmabuf, &h)) {
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
	guest_group = "job ids";
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

/* vgem's fences (include/uapi/drm/vgem_drm.h): signalled only when asked, or after 10 s. */
struct vgem_fence_attach {
	uint32_t handle, flags, out_fence, pad;
};

struct vgem_fence_signal {
	uint32_t fence, flags;
};

#define VGEM_FENCE_WRITE 0x1
#define VGEM_IOCTL_FENCE_ATTACH DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct vgem_fence_attach)
#define VGEM_IOCTL_FENCE_SIGNAL DRM_IOW(DRM_COMMAND_BASE + 0x2, struct vgem_fence_signal)

/*
 * A job on a buffer imported from vgem, whose write fence nobody signals
 * (vgem would after 10 s): the job fails with ETIMEDOUT after the job
 * timeout instead of being held until the other driver gives up.
 */
static void test_foreign_fence(struct dev *a)
{
	struct vgem_fence_attach fa = { .flags = VGEM_FENCE_WRITE };
	struct vgem_fence_signal fs = { 0 };
	struct fixture f;
	struct vbo v;
	uint32_t handles[2], id = 0, h = 0;
	int32_t status = 1;
	int vfd, dmabuf = -1, r;
	int64_t t0, ms;

	guest_group = "foreign fence";
	vfd = vgem_open();
	if (vfd < 0 || !fixture_init(a, &f) || vgem_create(vfd, 1, &v) ||
	    !share_bo(vfd, v.handle, a->fd, &dmabuf, &h)) {
		result(false, "setup (vgem)");
		return;
	}
	fa.handle = v.handle;
	r = xioctl(vfd, VGEM_IOCTL_FENCE_ATTACH, &fa);
	result(!r, "a vgem write fence on the buffer: %s", errname(r));
	set_command(&f.desc, SELFTEST_FAIL);
	handles[0] = f.desc.handle;
	handles[1] = h;
	t0 = now_ns();
	r = submit_job(a->fd, handles, NULL, 2, 0, 0, &id);
	if (!r)
		r = wait_job(a->fd, id, 5000000000ll, &status);
	ms = (now_ns() - t0) / 1000000;
	result(!r && status == -ETIMEDOUT && ms < (int64_t)a->timeout_ms * 5,
	       "a job waiting for it fails with ETIMEDOUT after %" PRId64
	       " ms (%s, timeout %" PRIu64 " ms)",
	       ms, r ? errname(r) : errname(status), a->timeout_ms);
	fs.fence = fa.out_fence;
	xioctl(vfd, VGEM_IOCTL_FENCE_SIGNAL, &fs);
	r = submit_job(a->fd, handles, NULL, 2, 0, 0, &id);
	if (!r)
		r = wait_job(a->fd, id, 5000000000ll, &status);
	result(!r && status == -ENODEV, "once it is signalled, the next job runs: %s",
	       errname(status));
	gem_close(a->fd, h);
	close(dmabuf);
	vgem_free(vfd, &v);
	close(vfd);
	fixture_fini(a, &f);
}

/*
 * The memory a file's unfinished jobs hold is capped (file_queue_mib=1 in
 * this phase): jobs of 6144 addresses (about 100 KiB each) queued behind a
 * hung one are refused with EBUSY at the cap, another file is not, and once
 * the jobs are done the file can queue again.
 */
static void test_file_cap(struct dev *a)
{
	static struct drm_nvdla_address addr[6144];
	struct drm_nvdla_job job = { 0 };
	struct drm_nvdla_submit s = { 0 };
	uint32_t handles[2], id = 0, last = 0;
	int32_t status = 1;
	struct fixture f;
	char name[32];
	int fd, r = 0, n, i;

	guest_group = "file cap";
	fd = open_node(a->path, name, sizeof(name));
	if (fd < 0) {
		result(false, "setup");
		return;
	}
	{
		struct dev mine = *a;

		mine.fd = fd;
		if (!fixture_init(&mine, &f)) {
			result(false, "setup");
			close(fd);
			return;
		}
	}
	handles[0] = f.desc.handle;
	handles[1] = f.data.handle;
	set_command(&f.desc, SELFTEST_HANG);
	r = submit_job(fd, handles, NULL, 2, 0, 0, &id);
	set_command(&f.desc, SELFTEST_FAIL);
	result(!r, "a hung job holds the file's queue");
	for (i = 0; i < 6144; i++)
		addr[i].handle = i ? f.data.handle : f.desc.handle;
	job.addresses = (uintptr_t)addr;
	job.address_count = 6144;
	job.address_struct_size = sizeof(addr[0]);
	s.jobs = (uintptr_t)&job;
	s.job_count = 1;
	s.job_struct_size = sizeof(job);
	for (n = 0; n < 100; n++) {
		job.job_id = 0;
		r = xioctl(fd, DRM_IOCTL_NVDLA_JOB_SUBMIT, &s);
		if (r)
			break;
		last = job.job_id;
	}
	result(r == -EBUSY && n >= 6 && n <= 15,
	       "jobs of 6144 addresses behind it: %d queued, then %s (want EBUSY at 1 MiB)", n,
	       errname(r));
	{
		struct fixture g;
		uint32_t gh[2];

		if (fixture_init(a, &g)) {
			gh[0] = g.desc.handle;
			gh[1] = g.data.handle;
			set_command(&g.desc, SELFTEST_FAIL);
			EXPECT_ERR(submit_job(a->fd, gh, NULL, 2, 0, 0, NULL), 0,
				   "another file still queues");
			fixture_fini(a, &g);
		} else {
			result(false, "setup");
		}
	}
	r = last ? wait_job(fd, last, 20000000000ll, &status) : -1;
	result(!r && status == -ENODEV, "the queued jobs run once the hung one timed out: %s",
	       errname(status));
	EXPECT_ERR(xioctl(fd, DRM_IOCTL_NVDLA_JOB_SUBMIT, &s), 0, "then the file queues again");
	if (!xioctl(fd, DRM_IOCTL_NVDLA_JOB_SUBMIT, &s))
		wait_job(fd, job.job_id, 10000000000ll, NULL);
	{
		struct dev mine = *a;

		mine.fd = fd;
		fixture_fini(&mine, &f);
	}
	close(fd);
}

/* ---- concurrency ------------------------------------------------------------ */

/* dla: valid and broken tasks, with buffers created, shared and freed around them. */
static int child_dla(struct dev *d, int fd)
{
	struct dev mine = *d;
	struct dla_test_descs x;
	struct task t;
	uint32_t id, h;
	int32_t status;
	int errors = 0, i, dmabuf;

	mine.fd = fd;
	for (i = 0; i < 30; i++) {
		if (!task_init(&mine, &t)) {
			task_fini(&mine, &t);
			return 1;
		}
		descs_sdp(&mine, &x);
		task_write(&t, &x, i % 2);
		if (submit_task(fd, &t, 0, &id) ||
		    wait_job(fd, id, 5000000000ll, &status) || status != -EIO)
			errors++;
		x.net.num_operations = 0;
		task_write(&t, &x, false);
		errors += submit_task(fd, &t, 0, &id) != -EINVAL;
		if (i % 3 == 0) {
			dmabuf = prime_export(fd, t.data.handle);
			errors += dmabuf < 0 || prime_import(fd, dmabuf, &h) || h != t.data.handle;
			close(dmabuf);
		}
		if (i % 2) {
			task_fini(&mine, &t);
		} else { /* the buffers are left for close() to free */
			close(t.desc_fd);
			close(t.data_fd);
		}
	}
	return errors;
}

static int child(struct dev *d, int seed)
{
	char name[32];
	int fd = open_node(d->path, name, sizeof(name)), errors = 0, i;
	struct bo desc, data;
	uint32_t handles[2], id;
	int32_t status;

	if (fd < 0)
		return 1;
	if (!selftest) {
		errors = child_dla(d, fd);
		close(fd);
		return errors ? 1 : 0;
	}
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
		errors += r != 0;
		if (!r && (wait_job(fd, id, 5000000000ll, &status) || status != -ENODEV))
			errors++;
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

	guest_group = "processes";
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

	snprintf(path, sizeof(path), "/sys/class/drm/%s/device/power/%s", strrchr(d->path, '/') + 1,
		 "runtime_status");
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

	guest_group = "runtime pm";
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

	guest_group = "exit";
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
	struct bo bo, data;
	uint32_t handles[2], id;
	ssize_t n;
	int fd, ufd, i;

	guest_group = "unbind";
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
	/* A job hangs on the device (it times out only after 300 ms): unbind stops and fails it. */
	handles[0] = bo.handle;
	set_command(&bo, SELFTEST_HANG);
	result(!bo_create(fd, PAGE, 0, &data) && (handles[1] = data.handle) &&
	       !submit_job(fd, handles, NULL, 2, 0, 0, &id),
	       "a job hangs on the device");
	usleep(100000); /* running by then (the scheduler starts it), 200 ms before its timeout */
	ufd = open("/sys/bus/pci/drivers/nvdla-ivshmem/unbind", O_WRONLY);
	result(ufd >= 0 && write(ufd, addr, strlen(addr)) == (ssize_t)strlen(addr),
	       "unbind %s with a file open, a buffer mapped and a job running", addr);
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
	gem_close(fd, data.handle);
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

/*
 * Mode wedge: the platform instance has no reset line (nvdla_test_platdev
 * reset=0). A job that times out cannot be stopped on the hardware, so the
 * device is wedged: the job fails, the job queued behind it never runs, new
 * jobs are refused with EIO, and the other instances are not affected. The
 * failed job's buffers stay allocated (the kernel log says so; run.sh checks).
 */
static void test_wedged(struct dev *a, struct dev *c)
{
	struct fixture f, fa;
	uint32_t handles[2], id = 0, id2 = 0;
	int32_t status = 1, status2 = 1;
	int fds[2], r;

	guest_group = "wedged";
	if (!fixture_init(c, &f) || !fixture_init(a, &fa)) {
		result(false, "setup");
		return;
	}
	handles[0] = f.desc.handle;
	handles[1] = f.data.handle;
	set_command(&f.desc, SELFTEST_HANG);
	r = submit_job(c->fd, handles, NULL, 2, 0, 0, &id);
	set_command(&f.desc, SELFTEST_FAIL);
	r |= submit_job(c->fd, handles, NULL, 2, 0, 0, &id2);
	result(!r, "a HANG job and a FAIL job queued behind it (no reset line)");
	r = wait_job(c->fd, id, 20000000000ll, &status);
	result(!r && status == -ETIMEDOUT, "the hung job fails: %s", errname(status));
	r = wait_job(c->fd, id2, 10000000000ll, &status2);
	result(!r && status2 == -EIO, "the job behind it never reaches the wedged device: %s",
	       errname(status2));
	EXPECT_ERR(submit_job(c->fd, handles, NULL, 2, 0, 0, NULL), -EIO,
		   "JOB_SUBMIT on the wedged device");
	fds[0] = f.desc_fd;
	fds[1] = f.data_fd;
	EXPECT_ERR(legacy_submit(c->fd, fds, NULL, 2, 2, 1), -EIO,
		   "original SUBMIT on the wedged device");
	handles[0] = fa.desc.handle;
	handles[1] = fa.data.handle;
	set_command(&fa.desc, SELFTEST_FAIL);
	r = submit_job(a->fd, handles, NULL, 2, 0, 0, &id);
	if (!r)
		r = wait_job(a->fd, id, 5000000000ll, &status);
	result(!r && status == -ENODEV, "another instance still runs jobs: %s", errname(status));
	fixture_fini(a, &fa);
	fixture_fini(c, &f);
}

/* Writes @addr ("0000:00:04.0") to /sys/bus/pci/drivers/nvdla-ivshmem/@what (bind, unbind). */
static bool ivshmem_driver(const char *what, const char *addr)
{
	char path[96];
	int fd;
	bool ok;

	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/nvdla-ivshmem/%s", what);
	fd = open(path, O_WRONLY);
	ok = fd >= 0 && write(fd, addr, strlen(addr)) == (ssize_t)strlen(addr);
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * Unbind of the carve-out instance while a job runs and a buffer is mapped
 * through an exported dma-buf: the mapping is revoked (SIGBUS, not memory
 * another buffer may get), a new binding is refused while the old one's
 * buffers live (their memory stays theirs), and once everything is closed
 * the device binds again. All three instances are found again afterwards
 * (*a, *b, *c are reopened).
 */
static void test_unbind_carveout(struct dev *a, struct dev *b, struct dev *c)
{
	char link[256], target[256], name[32];
	const char *addr;
	uint32_t handles[2], id;
	struct fixture f;
	struct dev mine = *a;
	uint8_t *p = NULL;
	ssize_t n;
	int fd, i, ok;

	guest_group = "unbind carve-out";
	fd = open_node(a->path, name, sizeof(name));
	snprintf(link, sizeof(link), "/sys/class/drm/%s/device", strrchr(a->path, '/') + 1);
	n = readlink(link, target, sizeof(target) - 1);
	mine.fd = fd;
	if (fd < 0 || n <= 0 || !fixture_init(&mine, &f)) {
		result(false, "setup");
		return;
	}
	target[n] = '\0';
	addr = strrchr(target, '/') + 1;
	p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, f.data_fd, 0);
	result(p != MAP_FAILED, "a carve-out buffer mapped through its dma-buf");
	if (p == MAP_FAILED)
		p = NULL;
	if (p)
		memset(p, 0x5a, 2 * PAGE);
	handles[0] = f.desc.handle;
	handles[1] = f.data.handle;
	set_command(&f.desc, SELFTEST_HANG);
	result(!submit_job(fd, handles, NULL, 2, 0, 0, &id), "a job hangs on the device");
	usleep(100000);
	result(ivshmem_driver("unbind", addr), "unbind %s with the job running", addr);
	{
		pid_t pid = fork();
		int st = 0;

		if (pid == 0) {
			ok = p && p[0] == 0x5a;
			_exit(ok ? 0 : 1);
		}
		result(pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
		       WTERMSIG(st) == SIGBUS,
		       "the dma-buf mapping is revoked (SIGBUS)");
	}
	result(!ivshmem_driver("bind", addr),
	       "bind again is refused while buffers of the old binding live");
	if (p)
		munmap(p, 2 * PAGE);
	fixture_fini(&mine, &f);
	close(fd);
	close(a->fd);
	if (b->fd >= 0)
		close(b->fd);
	close(c->fd);
	result(ivshmem_driver("bind", addr), "once everything is closed it binds");
	for (i = 0; i < 50 && !find_devices(a, b, c); i++)
		usleep(20000);
	result(i < 50, "the three instances are there again (%s)", a->path);
	if (i == 50) {
		a->fd = open("/dev/null", O_RDONLY);
		b->fd = -1;
		c->fd = open("/dev/null", O_RDONLY);
	}
}

int main(int argc, char **argv)
{
	struct dev a, b, c;

	bool wedge;

	if (argc != 2 ||
	    (strcmp(argv[1], "dla") && strcmp(argv[1], "selftest") && strcmp(argv[1], "wedge"))) {
		fprintf(stderr, "usage: %s dla|selftest|wedge\n", argv[0]);
		return 2;
	}
	wedge = !strcmp(argv[1], "wedge");
	selftest = wedge || !strcmp(argv[1], "selftest");
	setvbuf(stdout, NULL, _IOLBF, 0);

	guest_group = "devices";
	if (!find_devices(&a, &b, &c)) {
		result(false, "three NVDLA render nodes (nv_full, nv_small, nv_large)");
		printf("nvdla-kmd-test %s: %d passed, %d failed, %d skipped\n", argv[1],
		       guest_passed, guest_failed, skipped);
		return 1;
	}
	if (wedge) {
		/* This phase loads the module with accel=1. */
		guest_group = "accel";
		if (access("/sys/class/accel", F_OK) == 0) {
			result(!strncmp(a.path, "/dev/accel/accel", 16) &&
			       !strncmp(c.path, "/dev/accel/accel", 16),
		       "accel=1: the instances are compute-accelerator nodes (%s, %s)",
		       a.path, c.path);
			char path[64], name[32];
			int i, fd, render = 0;

			for (i = 128; i < 140; i++) {
				snprintf(path, sizeof(path), "/dev/dri/renderD%d", i);
				fd = open_node(path, name, sizeof(name));
				render += fd >= 0 && !strcmp(name, "nvdla");
				if (fd >= 0)
					close(fd);
			}
			result(!render, "... and no nvdla render node (%d)", render);
		} else {
			printf("SKIP accel: this kernel has no compute-accelerator nodes (CONFIG_DRM_ACCEL): accel=1 keeps the render nodes (%s)\n",
			       a.path);
			skipped++;
		}
		test_file_cap(&a);
		test_wedged(&a, &c);
		goto out;
	}
	test_params(&a, &b, &c);
	if (!selftest) {
		test_legacy_gem(&a);
		test_bo(&a, "bo carve-out");
		test_bo(&b, "bo dma");
		test_bo(&c, "bo platform");
		test_address_privilege(&b);
		test_carveout_exhaustion(&a);
		test_prime(&a, &b);
		test_vgem_import(&a);
		test_legacy_submit(&a);
		test_legacy_submit(&b);
		test_submit_args(&a);
		test_submit_args(&b);
		test_validator(&a, "validator nv_full");
		test_validator(&b, "validator nv_small");
		test_validator(&c, "validator nv_large");
		test_validator_import(&a, &b);
		test_no_hardware(&a);
		/* after: a job just before shortens the next one's timeout */
		test_validator_cycle(&a);
	} else {
		test_jobs(&a, &b);
		test_foreign_fence(&a);
		test_runtime_pm(&c);
	}
	test_processes(&a, &b, &c);
	if (selftest) {
		test_unbind(&b);
		test_unbind_carveout(&a, &b, &c);
		test_exit_with_jobs(&a); /* last: rmmod follows at once */
	}

out:
	close(a.fd);
	if (b.fd >= 0)
		close(b.fd);
	close(c.fd);
	printf("nvdla-kmd-test %s: %d passed, %d failed, %d skipped\n", argv[1], guest_passed,
	       guest_failed, skipped);
	return guest_failed ? 1 : 0;
}
