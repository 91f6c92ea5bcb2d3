// SPDX-License-Identifier: MIT
/*
 * The device-tree instances of make test-kmd-arm64 (tests/kmd/arm64/run.sh), run as root in the
 * arm64 guest, where BO_CREATE and BO_INFO return device addresses:
 *
 *   nvdla_dt_test carveout DEVICE BASE SIZE   buffers come from the no-map region
 *                                            [BASE, BASE+SIZE); vgem may not import them
 *   nvdla_dt_test pool DEVICE BASE SIZE       the same with a DMA pool; vgem imports them
 *   nvdla_dt_test unbind DEVICE BASE SIZE     unbind and bind again while a buffer lives
 *   nvdla_dt_test job DEVICE BASE SIZE        the same while a job on it runs (the test
 *                                            build's selftest engine: it hangs)
 *
 * DEVICE is the platform device's name (5e000000.nvdla), BASE and SIZE the reserved-memory
 * region its memory-region names. Prints "ok   ..." or "FAIL ..." per check; exits 1 when
 * one failed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nvdla_drm.h"

#include "guest_common.h"

static const char *device;
static uint64_t region_base, region_size;

/* The render node (or accel node) of platform device @name: /dev/dri/renderD<N>, or -1. */
static int open_device(const char *name)
{
	char link[PATH_MAX], target[PATH_MAX], node[PATH_MAX];
	struct dirent *e;
	int fd = -1;
	DIR *d;

	d = opendir("/sys/class/drm");
	if (!d)
		return -1;
	while ((e = readdir(d)) && fd < 0) {
		const char *base;
		ssize_t n;

		if (strncmp(e->d_name, "renderD", 7))
			continue;
		snprintf(link, sizeof(link), "/sys/class/drm/%s/device", e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = 0;
		base = strrchr(target, '/');
		if (strcmp(base ? base + 1 : target, name))
			continue;
		snprintf(node, sizeof(node), "/dev/dri/%s", e->d_name);
		fd = open(node, O_RDWR | O_CLOEXEC);
	}
	closedir(d);
	return fd;
}

struct bo {
	uint32_t handle;
	uint64_t size, dma, offset;
};

static int bo_create(int fd, uint64_t size, uint64_t align, struct bo *bo)
{
	struct drm_nvdla_bo_create c = { .size = size, .alignment = align };
	int ret = xioctl(fd, DRM_IOCTL_NVDLA_BO_CREATE, &c);

	if (ret)
		return ret;
	bo->handle = c.handle;
	bo->size = size;
	bo->dma = c.dma_address;
	bo->offset = c.mmap_offset;
	return 0;
}

static void bo_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	xioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* The buffer lies in the region, aligned, and BO_INFO says the same address. */
static bool bo_in_region(int fd, const struct bo *bo, uint64_t align)
{
	struct drm_nvdla_bo_info info = { .handle = bo->handle };

	if (xioctl(fd, DRM_IOCTL_NVDLA_BO_INFO, &info) || info.dma_address != bo->dma)
		return false;
	return bo->dma >= region_base && bo->dma - region_base < region_size &&
	       bo->size <= region_size - (bo->dma - region_base) && bo->dma % align == 0;
}

static uint32_t pattern(uint64_t i, uint32_t seed)
{
	return (uint32_t)(i * 2654435761u) ^ seed;
}

static void fill(uint32_t *p, uint64_t bytes, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < bytes / 4; i++)
		p[i] = pattern(i, seed);
}

/* 1: the pattern, 0: all zero, -1: anything else. */
static int contents(const uint32_t *p, uint64_t bytes, uint32_t seed)
{
	bool is_pattern = true, is_zero = true;
	uint64_t i;

	for (i = 0; i < bytes / 4; i++) {
		is_pattern = is_pattern && p[i] == pattern(i, seed);
		is_zero = is_zero && p[i] == 0;
	}
	return is_pattern ? 1 : is_zero ? 0 : -1;
}

static sigjmp_buf fault_jump;

static void on_sigbus(int sig)
{
	siglongjmp(fault_jump, sig);
}

/* What a mapping reads now: "the pattern", "zeroes", "other data" or "SIGBUS". */
static const char *probe_mapping(const uint32_t *p, uint64_t bytes, uint32_t seed)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old_bus, old_segv;
	const char *what;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	if (sigsetjmp(fault_jump, 1) == 0) {
		int c = contents(p, bytes, seed);

		what = c == 1 ? "the pattern" : c == 0 ? "zeroes" : "other data";
	} else {
		what = "SIGBUS";
	}
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return what;
}

static void *map(int fd, uint64_t offset, uint64_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);

	return p == MAP_FAILED ? NULL : p;
}

/* vgem's card node, or -1. */
static int vgem_open(void)
{
	char path[64], name[16];
	int i, fd;

	for (i = 0; i < 16; i++) {
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		if (!xioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * Another device (vgem) imports a buffer exported by the instance: refused for a carve-out
 * (no-map memory has no kernel mapping an importer could use), accepted for the DMA pool.
 */
static void test_import(bool carveout)
{
	const uint64_t bytes = 65536;
	struct drm_prime_handle prime = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle in = { 0 };
	int fd, vfd, ret;
	struct bo bo;

	fd = open_device(device);
	vfd = vgem_open();
	result(fd >= 0 && vfd >= 0, "%s: its render node and vgem's card node open", device);
	if (fd < 0 || vfd < 0)
		goto out;
	ret = bo_create(fd, bytes, 0, &bo);
	result(!ret, "%s: a buffer to export: %s", device, errname(ret));
	if (ret)
		goto out;
	prime.handle = bo.handle;
	ret = xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime);
	result(!ret, "%s: exported as a dma-buf: %s", device, errname(ret));
	if (ret)
		goto out;
	in.fd = prime.fd;
	ret = xioctl(vfd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &in);
	if (carveout) {
		result(ret == -EOPNOTSUPP, "%s: vgem importing a carve-out buffer: %s (EOPNOTSUPP)",
		       device, errname(ret));
	} else {
		/* (vgem cannot map what it imported: MAP_DUMB refuses imports.) */
		result(!ret, "%s: vgem imports a pool buffer: %s", device, errname(ret));
		if (!ret)
			bo_close(vfd, in.handle);
	}
	close(prime.fd);
	bo_close(fd, bo.handle);
out:
	if (vfd >= 0)
		close(vfd);
	if (fd >= 0)
		close(fd);
}

/* Writes @name to the platform driver's bind or unbind file: 0 or -errno. */
static int driver_file(const char *file, const char *name)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/bus/platform/drivers/nvdla/%s", file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, name, strlen(name)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Buffers of several sizes and alignments in the region, their memory readable and zeroed. */
static void test_alloc(void)
{
	static const struct {
		uint64_t size, align;
	} cases[] = {
		{ 4096, 0 }, { 65536, 65536 }, { 1 << 20, 0 }, { 3 << 20, 1 << 20 }, { 12288, 0 },
	};
	struct bo bos[ARRAY_SIZE(cases)], big, again;
	unsigned int i, n = 0;
	int fd, ret;

	fd = open_device(device);
	result(fd >= 0, "%s: its render node opens", device);
	if (fd < 0)
		return;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t align = cases[i].align;
		uint32_t *p;

		if (!align)
			align = 4096;

		ret = bo_create(fd, cases[i].size, cases[i].align, &bos[n]);
		result(!ret, "%s: BO_CREATE %" PRIu64 " bytes, alignment %" PRIu64 ": %s", device,
		       cases[i].size, cases[i].align, errname(ret));
		if (ret)
			continue;
		result(bo_in_region(fd, &bos[n], align),
		       "%s: buffer at %#" PRIx64 " + %" PRIu64 " in the region %#" PRIx64
		       " + %" PRIu64 ", %" PRIu64 "-byte aligned (BO_CREATE and BO_INFO agree)",
		       device, bos[n].dma, cases[i].size, region_base, region_size, align);
		p = map(fd, bos[n].offset, cases[i].size);
		result(p, "%s: mmap of the buffer", device);
		if (p) {
			result(contents(p, cases[i].size, 0) == 0, "%s: a new buffer is zeroed",
			       device);
			fill(p, cases[i].size, 0x5eed0000u + i);
			result(contents(p, cases[i].size, 0x5eed0000u + i) == 1,
			       "%s: written through the mapping, read back", device);
			munmap(p, cases[i].size);
		}
		n++;
	}
	/* More than the region holds (and than the page allocator gives in one piece). */
	ret = bo_create(fd, region_size + (1 << 20), 0, &big);
	result(ret == -ENOMEM, "%s: a buffer larger than the region: %s (ENOMEM)", device,
	       errname(ret));
	if (!ret)
		bo_close(fd, big.handle);
	for (i = 0; i < n; i++)
		bo_close(fd, bos[i].handle);
	/* Freed memory is handed out again: most of the region in one buffer. */
	ret = bo_create(fd, region_size / 2, 0, &again);
	result(!ret && bo_in_region(fd, &again, 4096),
	       "%s: half the region in one buffer once the others are freed: %s", device,
	       errname(ret));
	if (!ret)
		bo_close(fd, again.handle);
	close(fd);
}

/*
 * Unbind while a buffer lives: mapped through the DRM file and through its exported dma-buf.
 * The old mappings then either fault or still show what was written (never memory handed out
 * again); binding again is refused until the old buffers are gone (the region is still
 * theirs); then the device binds and works.
 */
static void test_unbind(void)
{
	const uint64_t bytes = 1 << 20;
	const uint32_t seed = 0xdead0000u;
	struct drm_prime_handle prime = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_nvdla_bo_info info = { 0 };
	uint32_t *gem_map = NULL, *buf_map = NULL;
	int fd, dmabuf = -1, ret, bound;
	struct bo bo, next;
	const char *seen;

	fd = open_device(device);
	result(fd >= 0, "%s: its render node opens", device);
	if (fd < 0)
		return;
	ret = bo_create(fd, bytes, 0, &bo);
	result(!ret && bo_in_region(fd, &bo, 4096), "%s: a 1 MiB buffer in the region: %s", device,
	       errname(ret));
	if (ret) {
		close(fd);
		return;
	}
	gem_map = map(fd, bo.offset, bytes);
	result(gem_map, "%s: mmap through the DRM file", device);
	if (gem_map)
		fill(gem_map, bytes, seed);
	prime.handle = bo.handle;
	ret = xioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime);
	result(!ret, "%s: exported as a dma-buf: %s", device, errname(ret));
	if (!ret) {
		dmabuf = prime.fd;
		buf_map = map(dmabuf, 0, bytes);
		result(buf_map && contents(buf_map, bytes, seed) == 1,
		       "%s: mmap of the dma-buf shows what the DRM mapping wrote", device);
	}

	ret = driver_file("unbind", device);
	result(!ret, "%s: unbound with the buffer mapped twice and exported: %s", device,
	       errname(ret));
	if (gem_map) {
		seen = probe_mapping(gem_map, bytes, seed);
		result(!strcmp(seen, "SIGBUS") || !strcmp(seen, "the pattern"),
		       "%s: after unbind the DRM file's mapping reads: %s", device, seen);
	}
	if (buf_map) {
		seen = probe_mapping(buf_map, bytes, seed);
		result(!strcmp(seen, "SIGBUS") || !strcmp(seen, "the pattern"),
		       "%s: after unbind the dma-buf's mapping reads: %s", device, seen);
	}
	info.handle = bo.handle;
	ret = xioctl(fd, DRM_IOCTL_NVDLA_BO_INFO, &info);
	result(ret == -ENODEV, "%s: the old file's ioctls fail after unbind: %s (ENODEV)", device,
	       errname(ret));

	/* The old binding's buffer still owns its memory: a new binding must not hand it out. */
	bound = driver_file("bind", device);
	result(bound == -EBUSY, "%s: bind while the old buffer lives is refused: %s (EBUSY)",
	       device, errname(bound));
	if (!bound) {
		/* Accepted: whatever the new binding allocates must stay in the region. */
		int fd2 = open_device(device);

		result(fd2 >= 0, "%s: (bound again) its render node opens", device);
		if (fd2 >= 0) {
			ret = bo_create(fd2, bytes, 0, &next);
			result(!ret && bo_in_region(fd2, &next, 4096) && next.dma != bo.dma,
			       "%s: (bound again) a new buffer in the region, not the live one's",
			       device);
			if (buf_map)
				munmap(buf_map, bytes);
			if (gem_map)
				munmap(gem_map, bytes);
			gem_map = NULL;
			buf_map = NULL;
			if (dmabuf >= 0)
				close(dmabuf);
			dmabuf = -1;
			close(fd);
			fd = -1;
			ret = bo_create(fd2, bytes, 0, &bo);
			result(!ret && bo_in_region(fd2, &bo, 4096),
			       "%s: (bound again) after the old binding's release, buffers still come from the region: %#"
			       PRIx64, device, bo.dma);
			close(fd2);
		}
		ret = driver_file("unbind", device);
		result(!ret, "%s: (bound again) unbound: %s", device, errname(ret));
	}

	if (buf_map)
		munmap(buf_map, bytes);
	if (gem_map)
		munmap(gem_map, bytes);
	if (dmabuf >= 0)
		close(dmabuf);
	if (fd >= 0)
		close(fd);

	ret = driver_file("bind", device);
	result(!ret, "%s: bind once everything is closed: %s", device, errname(ret));
	if (ret)
		return;
	fd = open_device(device);
	result(fd >= 0, "%s: the new render node opens", device);
	if (fd < 0)
		return;
	ret = bo_create(fd, bytes, 0, &next);
	result(!ret && bo_in_region(fd, &next, 4096), "%s: a buffer of the new binding in the region",
	       device);
	if (!ret) {
		gem_map = map(fd, next.offset, bytes);
		result(gem_map && contents(gem_map, bytes, 0) == 0,
		       "%s: the new binding's buffer is zeroed", device);
		if (gem_map)
			munmap(gem_map, bytes);
		bo_close(fd, next.handle);
	}
	close(fd);
}

/*
 * Unbind while a job runs on a buffer of the region (the selftest engine's "HANG": nothing
 * completes it). The job fails; the device has no reset line, so the job's buffer stays
 * allocated until the old DRM device goes; binding again waits for that; then the whole
 * region is free again (nothing leaked, nothing freed twice).
 */
static void test_job(void)
{
	const uint64_t bytes = 65536;
	const uint32_t hang = 0x474e4148; /* "HANG": the selftest engine's command */
	struct drm_nvdla_address address = { 0 };
	struct drm_nvdla_job job = { 0 };
	struct drm_nvdla_submit submit = { 0 };
	struct drm_nvdla_wait wait = { 0 };
	uint32_t *p = NULL;
	struct bo bo, all;
	int fd, ret;

	fd = open_device(device);
	result(fd >= 0, "%s: its render node opens (test build, selftest engine)", device);
	if (fd < 0)
		return;
	ret = bo_create(fd, bytes, 0, &bo);
	result(!ret && bo_in_region(fd, &bo, 4096), "%s: the job's buffer in the region: %s",
	       device, errname(ret));
	if (!ret)
		p = map(fd, bo.offset, bytes);
	result(p, "%s: the job's buffer mapped", device);
	if (!p) {
		close(fd);
		return;
	}
	p[0] = hang;
	address.handle = bo.handle;
	job.addresses = (uintptr_t)&address;
	job.address_count = 1;
	job.address_struct_size = sizeof(address);
	submit.jobs = (uintptr_t)&job;
	submit.job_count = 1;
	submit.job_struct_size = sizeof(job);
	ret = xioctl(fd, DRM_IOCTL_NVDLA_JOB_SUBMIT, &submit);
	result(!ret && job.job_id, "%s: a job that hangs is queued: %s", device, errname(ret));
	usleep(300000); /* it starts */

	ret = driver_file("unbind", device);
	result(!ret, "%s: unbound with the job running: %s", device, errname(ret));
	wait.job_id = job.job_id;
	ret = xioctl(fd, DRM_IOCTL_NVDLA_WAIT, &wait);
	result(ret == -ENODEV, "%s: WAIT on the old file after unbind: %s (ENODEV)", device,
	       errname(ret));
	result(!strcmp(probe_mapping(p, 4, hang), "SIGBUS"),
	       "%s: the job's buffer mapping is revoked (SIGBUS)", device);
	ret = driver_file("bind", device);
	result(ret == -EBUSY, "%s: bind while the old file is open: %s (EBUSY)", device,
	       errname(ret));
	munmap(p, bytes);
	close(fd);

	ret = driver_file("bind", device);
	result(!ret, "%s: bind once the old file is closed: %s", device, errname(ret));
	if (ret)
		return;
	fd = open_device(device);
	result(fd >= 0, "%s: the new render node opens", device);
	if (fd < 0)
		return;
	ret = bo_create(fd, region_size, 0, &all);
	result(!ret && bo_in_region(fd, &all, 4096),
	       "%s: the whole region in one buffer: the job's buffer was freed: %s", device,
	       errname(ret));
	if (!ret)
		bo_close(fd, all.handle);
	close(fd);
}

int main(int argc, char **argv)
{
	bool carveout = argc == 5 && !strcmp(argv[1], "carveout");

	if (argc != 5 || (!carveout && strcmp(argv[1], "pool") && strcmp(argv[1], "unbind") &&
			  strcmp(argv[1], "job"))) {
		fprintf(stderr, "usage: %s carveout|pool|unbind|job DEVICE BASE SIZE\n", argv[0]);
		return 2;
	}
	device = argv[2];
	region_base = strtoull(argv[3], NULL, 0);
	region_size = strtoull(argv[4], NULL, 0);
	guest_group = "arm64";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "unbind")) {
		test_unbind();
	} else if (!strcmp(argv[1], "job")) {
		test_job();
	} else {
		test_alloc();
		test_import(carveout);
	}
	return guest_failed ? 1 : 0;
}
