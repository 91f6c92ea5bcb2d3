// SPDX-License-Identifier: MIT
/*
 * The guest side of the virtual-platform tests (tests/vp/run.sh): a static
 * program run inside the QEMU guest, against nvdla.ko and the hardware model
 * on the host (tools/nvdla_vp).
 *
 *   nvdla_vp_guest info
 *       the NVDLA render nodes (or accel nodes: nvdla.ko accel=1), their
 *       configurations and sysfs directories
 *   nvdla_vp_guest node CONFIG
 *       prints the render (or accel) node of CONFIG (nv_full, nv_small, nv_large)
 *   nvdla_vp_guest reject CONFIG
 *       jobs whose descriptors point outside the submitter's buffers are
 *       rejected (EINVAL) and the host model sees no register access for them
 *   nvdla_vp_guest stall CONFIG
 *       the host model stalls (vp_stall): the job times out, the engine is
 *       reset, the submitter sees ETIMEDOUT, the next job is correct
 *   nvdla_vp_guest fuzz CONFIG ITERATIONS [SEED]
 *       random and mutated submits (handles, offsets, counts, structure
 *       sizes, list indices, descriptor fields, strides, sizes, bytes) with
 *       valid jobs interleaved, whose outputs are checked
 *   nvdla_vp_guest faults CONFIG ITERATIONS [SEED]
 *       fault paths: dependency cycles (refused), and on nv_full two-operation
 *       graphs (SDP, then BDMA) with the model stalled at a random moment,
 *       often between the two: each job completes correctly or times out, and
 *       the next job is correct
 *   nvdla_vp_guest churn CONFIG SECONDS [SEED]
 *       valid jobs for SECONDS while the device is unbound and bound again
 *       (by the caller): jobs complete correctly or fail, the device is
 *       opened again after each rebind, and jobs run after the last one
 *   nvdla_vp_guest count-ioctls COMMAND [ARGS...]
 *       runs COMMAND under ptrace and prints how many DRM ioctls it made, by
 *       request ("ioctls: N drm ...")
 *
 * Valid jobs are SDP copies (int8, every stage bypassed) and, on nv_full,
 * BDMA copies, built here from include/nvdla/hw/dla_interface.h. Prints
 * "ok   ..." / "FAIL ..." lines and exits 0 when everything passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nvdla_drm.h"
#include <nvdla/hw/dla_interface.h>

#include "../kmd/guest_common.h"

#define PAGE 4096u
#define BUF_BYTES (32u * 1024u)

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* xorshift64*: reproducible from the seed. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

/* ---- devices ------------------------------------------------------------------ */

struct dev {
	int fd;
	int minor;
	char node[64];
	char sysfs[96];
	uint64_t config, atom, timeout_ms, features;
};

static uint64_t param(int fd, uint32_t p)
{
	struct drm_nvdla_get_param gp = { .param = p };

	return xioctl(fd, DRM_IOCTL_NVDLA_GET_PARAM, &gp) ? UINT64_MAX : gp.value;
}

static uint64_t config_id(const char *name)
{
	if (!strcmp(name, "nv_full"))
		return NVDLA_HW_CONFIG_NV_FULL;
	if (!strcmp(name, "nv_small"))
		return NVDLA_HW_CONFIG_NV_SMALL;
	if (!strcmp(name, "nv_large"))
		return NVDLA_HW_CONFIG_NV_LARGE;
	return 0;
}

static const char *config_name(uint64_t id)
{
	return id == NVDLA_HW_CONFIG_NV_FULL ? "nv_full" :
	       id == NVDLA_HW_CONFIG_NV_SMALL ? "nv_small" :
	       id == NVDLA_HW_CONFIG_NV_LARGE ? "nv_large" : "other";
}

/*
 * The nodes looked at, in order: render nodes (minors 128 to 191), then
 * compute-accelerator nodes (nvdla.ko accel=1: /dev/accel/accel0 to 63).
 */
#define NODE_COUNT 128

static int node_minor(int i)
{
	return i < 64 ? 128 + i : i - 64;
}

/* Opens render node @minor (128 and up) or accel node @minor (below 128) if nvdla drives it. */
static bool dev_open_minor(int minor, struct dev *d)
{
	struct drm_version v = { 0 };
	char name[32] = { 0 };

	memset(d, 0, sizeof(*d));
	d->minor = minor;
	if (minor >= 128) {
		snprintf(d->node, sizeof(d->node), "/dev/dri/renderD%d", minor);
		snprintf(d->sysfs, sizeof(d->sysfs), "/sys/class/drm/renderD%d/device", minor);
	} else {
		snprintf(d->node, sizeof(d->node), "/dev/accel/accel%d", minor);
		snprintf(d->sysfs, sizeof(d->sysfs), "/sys/class/accel/accel%d/device", minor);
	}
	d->fd = open(d->node, O_RDWR | O_CLOEXEC);
	if (d->fd < 0)
		return false;
	v.name = name;
	v.name_len = sizeof(name) - 1;
	if (xioctl(d->fd, DRM_IOCTL_VERSION, &v) || strcmp(name, "nvdla")) {
		close(d->fd);
		return false;
	}
	d->config = param(d->fd, NVDLA_PARAM_HW_CONFIG);
	d->atom = param(d->fd, NVDLA_PARAM_ATOM_BYTES);
	d->timeout_ms = param(d->fd, NVDLA_PARAM_JOB_TIMEOUT_MS);
	d->features = param(d->fd, NVDLA_PARAM_HW_FEATURES);
	return true;
}

/* Opens the first render node of configuration @config. */
static bool dev_open_quiet(const char *config, struct dev *d)
{
	uint64_t want = config_id(config);
	int i;

	for (i = 0; i < NODE_COUNT; i++) {
		if (!dev_open_minor(node_minor(i), d))
			continue;
		if (d->config == want)
			return true;
		close(d->fd);
	}
	return false;
}

static bool dev_open(const char *config, struct dev *d)
{
	if (dev_open_quiet(config, d))
		return true;
	fprintf(stderr, "nvdla_vp_guest: no nvdla render or accel node of configuration %s\n",
		config);
	return false;
}

/* A counter of the sysfs file vp_stats ("name value" lines), or UINT64_MAX. */
static uint64_t vp_stat(const struct dev *d, const char *name)
{
	char path[128], key[64];
	unsigned long long value;
	uint64_t found = UINT64_MAX;
	FILE *f;

	snprintf(path, sizeof(path), "%s/vp_stats", d->sysfs);
	f = fopen(path, "r");
	if (!f)
		return UINT64_MAX;
	while (fscanf(f, "%63s %llu", key, &value) == 2)
		if (!strcmp(key, name))
			found = value;
	fclose(f);
	return found;
}

static bool vp_stall(const struct dev *d)
{
	char path[128];
	bool ok;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", d->sysfs, "vp_stall");
	f = fopen(path, "w");
	if (!f)
		return false;
	ok = fputs("1\n", f) >= 0;
	return fclose(f) == 0 && ok;
}

/* ---- buffers ------------------------------------------------------------------ */

struct bo {
	uint32_t handle;
	uint64_t size, dma;
	uint8_t *map;
};

static int bo_create(const struct dev *d, uint64_t size, struct bo *bo)
{
	struct drm_nvdla_bo_create c = { .size = size };
	void *p;
	int r;

	memset(bo, 0, sizeof(*bo));
	r = xioctl(d->fd, DRM_IOCTL_NVDLA_BO_CREATE, &c);
	if (r)
		return r;
	bo->handle = c.handle;
	bo->size = size;
	bo->dma = c.dma_address;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, (off_t)c.mmap_offset);
	if (p == MAP_FAILED)
		return -errno;
	bo->map = p;
	return 0;
}

static void bo_free(const struct dev *d, struct bo *bo)
{
	struct drm_gem_close c = { .handle = bo->handle };

	if (bo->map)
		munmap(bo->map, bo->size);
	if (bo->handle)
		xioctl(d->fd, DRM_IOCTL_GEM_CLOSE, &c);
	memset(bo, 0, sizeof(*bo));
}

/* ---- tasks ------------------------------------------------------------------- */

/*
 * A one-operation task: entries 0-3 in the descriptor buffer (network
 * descriptor, dependency graph, operation list, surface list, each list at
 * the start of its entry), entry 4 the source buffer, entry 5 the
 * destination buffer.
 */
static const uint64_t desc_offsets[4] = { 0, 256, 512, 1024 };

struct task {
	struct bo desc, src, dst;
	unsigned int type; /* NVDLA_DLA_OP_SDP or _BDMA */
	/* SDP: the cube (the same geometry in both buffers) */
	uint32_t w, h, c, line, surf, surfaces, size;
	/* BDMA: one transfer */
	uint32_t line_size, lines, src_line, dst_line, repeat, src_surf, dst_surf;
};

static bool task_init(const struct dev *d, struct task *t)
{
	memset(t, 0, sizeof(*t));
	return !bo_create(d, 2 * PAGE, &t->desc) && !bo_create(d, BUF_BYTES, &t->src) &&
	       !bo_create(d, BUF_BYTES, &t->dst);
}

static void task_fini(const struct dev *d, struct task *t)
{
	bo_free(d, &t->desc);
	bo_free(d, &t->src);
	bo_free(d, &t->dst);
}

static struct nvdla_dla_data_cube cube_of(const struct task *t, int16_t entry)
{
	struct nvdla_dla_data_cube k;

	memset(&k, 0, sizeof(k));
	k.type = NVDLA_DLA_MEM_MC;
	k.address = entry;
	k.size = t->size;
	k.width = (uint16_t)t->w;
	k.height = (uint16_t)t->h;
	k.channel = (uint16_t)t->c;
	k.line_stride = t->line;
	k.surf_stride = t->surf;
	return k;
}

/* A random valid SDP copy: int8, every stage bypassed, output = input. */
static void task_random_sdp_in(const struct dev *d, struct task *t, struct dla_test_descs *x,
			       uint32_t limit)
{
	struct nvdla_dla_sdp_op_desc *op = &x->op.sdp_op;
	struct nvdla_dla_sdp_surface_desc *s = &x->surf.sdp_surface;
	uint32_t atom = (uint32_t)d->atom;

	t->type = NVDLA_DLA_OP_SDP;
	do {
		t->w = 1 + below(16);
		t->h = 1 + below(16);
		t->c = 1 + below(3 * atom);
		t->surfaces = (t->c + atom - 1) / atom;
		t->line = (t->w + below(3)) * atom;
		t->surf = t->line * t->h + below(3) * atom;
		/* The C model asserts that a 1 x 1 cube's surfaces are packed (docs/emu/sdp.md). */
		if (t->w == 1 && t->h == 1) {
			t->line = atom;
			t->surf = atom;
		}
		t->size = t->surf * t->surfaces;
	} while (t->size > limit);

	dla_test_descs_init(x, NVDLA_DLA_OP_SDP);
	op->src_precision = NVDLA_DLA_PRECISION_INT8;
	op->dst_precision = NVDLA_DLA_PRECISION_INT8;
	op->lut_index = -1;
	op->out_cvt.scale = 1;
	op->batch_num = 1;
	s->src_data = cube_of(t, TASK_SRC);
	s->dst_data = cube_of(t, TASK_DST);
	s->x1_data.address = -1;
	s->x2_data.address = -1;
	s->y_data.address = -1;
}

static void task_random_sdp(const struct dev *d, struct task *t, struct dla_test_descs *x)
{
	task_random_sdp_in(d, t, x, BUF_BYTES);
}

/* A random valid BDMA copy of one transfer (nv_full), within @limit bytes of each buffer. */
static void task_random_bdma_in(struct task *t, struct dla_test_descs *x, uint32_t limit)
{
	struct nvdla_dla_bdma_surface_desc *s = &x->surf.bdma_surface;
	struct nvdla_dla_bdma_transfer *tr = &s->transfers[0];

	t->type = NVDLA_DLA_OP_BDMA;
	do {
		t->line_size = 32 * (1 + below(16));
		t->lines = 1 + below(16);
		t->src_line = t->line_size + 32 * below(3);
		t->dst_line = t->line_size + 32 * below(3);
		t->repeat = 1 + below(3);
		t->src_surf = t->src_line * t->lines + 32 * below(3);
		t->dst_surf = t->dst_line * t->lines + 32 * below(3);
	} while ((uint64_t)t->src_surf * t->repeat > limit ||
		 (uint64_t)t->dst_surf * t->repeat > limit);

	dla_test_descs_init(x, NVDLA_DLA_OP_BDMA);
	x->op.bdma_op.num_transfers = 1;
	s->source_type = NVDLA_DLA_MEM_MC;
	s->destination_type = NVDLA_DLA_MEM_MC;
	s->num_transfers = 1;
	tr->source_address = TASK_SRC;
	tr->destination_address = TASK_DST;
	tr->line_size = t->line_size;
	tr->line_repeat = t->lines;
	tr->source_line = t->src_line;
	tr->destination_line = t->dst_line;
	tr->surface_repeat = t->repeat;
	tr->source_surface = t->src_surf;
	tr->destination_surface = t->dst_surf;
}

static void task_random_bdma(struct task *t, struct dla_test_descs *x)
{
	task_random_bdma_in(t, x, BUF_BYTES);
}

static void task_random(const struct dev *d, struct task *t, struct dla_test_descs *x)
{
	if ((d->features & NVDLA_HW_FEATURE_BDMA) && below(3) == 0)
		task_random_bdma(t, x);
	else
		task_random_sdp(d, t, x);
}

/* Descriptors into the descriptor buffer (0.12 layout); random input, a canary output. */
static void task_write(struct task *t, const struct dla_test_descs *x)
{
	uint32_t i;

	memset(t->desc.map, 0, t->desc.size);
	memcpy(t->desc.map + desc_offsets[TASK_NET], &x->net, sizeof(x->net));
	memcpy(t->desc.map + desc_offsets[TASK_GRAPH], &x->graph, sizeof(x->graph));
	memcpy(t->desc.map + desc_offsets[TASK_OPS], &x->op, sizeof(x->op));
	memcpy(t->desc.map + desc_offsets[TASK_SURFS], &x->surf, sizeof(x->surf));
	for (i = 0; i < BUF_BYTES; i += 8) {
		uint64_t v = rnd();

		memcpy(t->src.map + i, &v, 8);
	}
	memset(t->dst.map, 0xa5, BUF_BYTES);
}

/*
 * Whether the SDP output's bytes of one atom, from byte O on (channels from C0 on, up to
 * the task's channel count), are the input's.
 */
static bool sdp_atom_check(const struct task *t, uint64_t o, uint32_t c0, uint32_t atom,
			   char *why, size_t len)
{
	uint32_t k;

	for (k = 0; k < atom && c0 + k < t->c; k++) {
		if (t->dst.map[o + k] != t->src.map[o + k]) {
			snprintf(why, len,
				 "SDP %ux%ux%u: byte %" PRIu64 " is 0x%02x, the input's 0x%02x",
				 t->w, t->h, t->c, o + k, t->dst.map[o + k], t->src.map[o + k]);
			return false;
		}
	}
	return true;
}

/* Whether the output is the copy the task asked for. */
static bool task_check(const struct task *t, const struct dev *d, char *why, size_t len)
{
	uint32_t atom = (uint32_t)d->atom, s, y, xx, r;

	if (t->type == NVDLA_DLA_OP_SDP) {
		/*
		 * SDP reads and writes a 1 x 1 cube's surfaces packed, one atom after
		 * the other (the generator programs them so: the C model refuses
		 * anything else, umd/emu/sdp_checks.cpp): the copy is there.
		 */
		uint32_t surf = t->w == 1 && t->h == 1 ? atom : t->surf;

		for (s = 0; s < t->surfaces; s++)
			for (y = 0; y < t->h; y++)
				for (xx = 0; xx < t->w; xx++) {
					uint64_t o = (uint64_t)s * surf + (uint64_t)y * t->line +
						     (uint64_t)xx * atom;

					if (!sdp_atom_check(t, o, s * atom, atom, why, len))
						return false;
				}
		return true;
	}
	for (r = 0; r < t->repeat; r++)
		for (y = 0; y < t->lines; y++) {
			const uint8_t *a = t->src.map + (uint64_t)r * t->src_surf +
					   (uint64_t)y * t->src_line;
			const uint8_t *b = t->dst.map + (uint64_t)r * t->dst_surf +
					   (uint64_t)y * t->dst_line;

			if (memcmp(a, b, t->line_size)) {
				snprintf(why, len, "BDMA %u x %u lines x %u: line %u of surface %u differs",
					 t->line_size, t->lines, t->repeat, y, r);
				return false;
			}
		}
	return true;
}

/* The submit of a task, as the fuzzer mutates it. */
struct submit {
	struct drm_nvdla_address addr[TASK_ENTRIES + 2];
	struct drm_nvdla_job job;
	struct drm_nvdla_submit s;
};

static void submit_init(struct submit *m, const struct task *t)
{
	uint32_t i;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < TASK_ENTRIES; i++) {
		m->addr[i].handle = i < TASK_SRC ? t->desc.handle : i == TASK_SRC ? t->src.handle :
										t->dst.handle;
		m->addr[i].offset = i < TASK_SRC ? desc_offsets[i] : 0;
	}
	m->job.addresses = (uintptr_t)m->addr;
	m->job.address_count = TASK_ENTRIES;
	m->job.address_struct_size = sizeof(m->addr[0]);
	m->job.dla_version = NVDLA_DLA_VERSION(0, 12, 0);
	m->s.jobs = (uintptr_t)&m->job;
	m->s.job_count = 1;
	m->s.job_struct_size = sizeof(m->job);
}

static int submit_do(const struct dev *d, struct submit *m, uint32_t *id)
{
	int r = xioctl(d->fd, DRM_IOCTL_NVDLA_JOB_SUBMIT, &m->s);

	*id = r ? 0 : m->job.job_id;
	return r;
}

static int wait_job(const struct dev *d, uint32_t id, int64_t timeout_ns, int32_t *status)
{
	struct drm_nvdla_wait w = { .job_id = id, .timeout_ns = now_ns() + timeout_ns };
	int r = xioctl(d->fd, DRM_IOCTL_NVDLA_WAIT, &w);

	*status = w.status;
	return r;
}

/* Submits @t as built and waits; 0 or the job's errno, *submit_ret the ioctl's. */
static int run_task(const struct dev *d, struct task *t, int *submit_ret)
{
	struct submit m;
	int32_t status = 0;
	uint32_t id;
	int r;

	submit_init(&m, t);
	*submit_ret = submit_do(d, &m, &id);
	if (*submit_ret)
		return *submit_ret;
	r = wait_job(d, id, (int64_t)(d->timeout_ms + 10000) * 1000000ll, &status);
	return r ? r : status;
}

/* ---- reject: out-of-buffer descriptors never reach the model -------------- */

static int cmd_reject(const char *config)
{
	struct dev d;
	struct task t;
	struct dla_test_descs x;
	uint64_t w0, r0, b0, w1, r1, b1;
	char why[160];
	int sr, st, i;

	if (!dev_open(config, &d) || !task_init(&d, &t))
		return 2;
	rng_state ^= 0x1234;

	/* A valid job first: the model sees its registers. */
	task_random_sdp(&d, &t, &x);
	task_write(&t, &x);
	w0 = vp_stat(&d, "host_register_writes");
	st = run_task(&d, &t, &sr);
	w1 = vp_stat(&d, "host_register_writes");
	result(st == 0 && task_check(&t, &d, why, sizeof(why)),
	       "%s: a valid SDP job runs on the host model (%s), %" PRIu64 " register writes",
	       config, errname(st), w1 - w0);

	for (i = 0; i < 4; i++) {
		struct nvdla_dla_sdp_surface_desc *s = &x.surf.sdp_surface;
		const char *what;

		task_random_sdp(&d, &t, &x);
		switch (i) {
		case 0: /* the output cube ends past the destination buffer */
			s->dst_data.offset = BUF_BYTES - s->dst_data.size / 2 - 1;
			s->dst_data.offset &= ~((uint32_t)d.atom - 1);
			what = "dst_data ends past its buffer";
			break;
		case 1: /* the input cube starts past the source buffer */
			s->src_data.offset = BUF_BYTES;
			what = "src_data starts past its buffer";
			break;
		case 2: /* a surface stride that walks out of the buffer */
			x.op.sdp_op.batch_num = 1;
			s->dst_data.channel = (uint16_t)(3 * d.atom);
			s->dst_data.surf_stride = BUF_BYTES / 2;
			s->dst_data.size = 3 * (BUF_BYTES / 2);
			what = "dst_data surfaces beyond its buffer";
			break;
		default: /* an address-list index past the list */
			s->dst_data.address = TASK_ENTRIES;
			what = "dst_data names entry 6 of 6";
			break;
		}
		task_write(&t, &x);
		w0 = vp_stat(&d, "host_register_writes");
		r0 = vp_stat(&d, "host_register_reads");
		b0 = vp_stat(&d, "host_batches");
		st = run_task(&d, &t, &sr);
		w1 = vp_stat(&d, "host_register_writes");
		r1 = vp_stat(&d, "host_register_reads");
		b1 = vp_stat(&d, "host_batches");
		result(sr == -EINVAL && w0 != UINT64_MAX && w1 == w0 && r1 == r0 && b1 == b0,
		       "%s: %s: rejected in the guest (%s), host register writes %" PRIu64
		       " -> %" PRIu64 ", reads %" PRIu64 " -> %" PRIu64,
		       config, what, errname(sr), w0, w1, r0, r1);
	}
	result(vp_stat(&d, "host_outside_carveout") == 0,
	       "%s: the host model saw no access outside the carve-out", config);
	task_fini(&d, &t);
	close(d.fd);
	return guest_failed ? 1 : 0;
}

/* ---- stall: the fault path ---------------------------------------------------- */

static int cmd_stall(const char *config)
{
	struct dev d;
	struct task t;
	struct dla_test_descs x;
	uint64_t resets0, resets1;
	char why[160] = "";
	int64_t t0, ms;
	int sr, st;

	if (!dev_open(config, &d) || !task_init(&d, &t))
		return 2;
	rng_state ^= 0x5678;
	resets0 = vp_stat(&d, "host_resets");
	result(vp_stall(&d), "%s: the host model is told to stall (vp_stall)", config);

	task_random_sdp(&d, &t, &x);
	task_write(&t, &x);
	t0 = now_ns();
	st = run_task(&d, &t, &sr);
	ms = (now_ns() - t0) / 1000000;
	resets1 = vp_stat(&d, "host_resets");
	result(sr == 0 && st == -ETIMEDOUT,
	       "%s: the stalled job times out: submit %s, job %s after %" PRId64
	       " ms (timeout %" PRIu64 " ms)",
	       config, errname(sr), errname(st), ms, d.timeout_ms);
	result(resets1 != UINT64_MAX && resets1 > resets0,
	       "%s: the engine and the model were reset (host resets %" PRIu64 " -> %" PRIu64 ")",
	       config, resets0, resets1);

	task_random_sdp(&d, &t, &x);
	task_write(&t, &x);
	st = run_task(&d, &t, &sr);
	result(st == 0 && task_check(&t, &d, why, sizeof(why)),
	       "%s: the next job succeeds and its output is correct (%s) %s", config, errname(st),
	       why);
	task_fini(&d, &t);
	close(d.fd);
	return guest_failed ? 1 : 0;
}

/* ---- fuzz ----------------------------------------------------------------------- */

/* Values that break things: edges, signs, sizes around the buffers. */
static uint64_t interesting(const struct dev *d)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 4, 5, 6, 7, 8, 31, 32, 33, 63, 64, 255, 256, 4095, 4096, 4097,
		0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000ull, 0xffffffffull,
		BUF_BYTES - 1, BUF_BYTES, BUF_BYTES + 1, BUF_BYTES / 2, 0xffffffffffffffffull,
	};

	switch (below(4)) {
	case 0: return rnd();
	case 1: return below(64) * d->atom;
	default: return v[below(ARRAY_SIZE(v))];
	}
}

static void poke(uint8_t *base, uint32_t off, uint32_t bytes, uint64_t value)
{
	memcpy(base + off, &value, bytes); /* little endian */
}

enum mutation {
	MUT_HANDLE, MUT_OFFSET, MUT_COUNT, MUT_STRUCT_SIZE, MUT_FLAGS, MUT_VERSION,
	MUT_POINTER, MUT_NET, MUT_GRAPH, MUT_OP, MUT_CUBE, MUT_BDMA, MUT_BYTES,
	MUT_ENTRY_SWAP, MUT_COUNT_ALL
};

static const char *const mutation_names[MUT_COUNT_ALL] = {
	"handle", "offset", "count", "struct-size", "flags", "version", "pointer",
	"network", "graph", "operation", "cube", "bdma", "bytes", "entry-swap",
};

/*
 * Mutates the submit or the descriptors (already in the buffer). @foreign is
 * a handle of another DRM file (meaningless in this one).
 */
static enum mutation mutate(const struct dev *d, struct task *t, struct submit *m,
			    uint32_t foreign)
{
	enum mutation kind = (enum mutation)below(MUT_COUNT_ALL);
	uint8_t *desc = t->desc.map;
	uint32_t e = below(TASK_ENTRIES), off;

	switch (kind) {
	case MUT_HANDLE: {
		static const uint32_t bad[] = { 0, 0xffffffffu, 1000, 12345 };

		m->addr[e].handle = below(2) ? foreign : bad[below(4)];
		if (below(4) == 0)
			m->addr[e].handle = (uint32_t)rnd();
		break;
	}
	case MUT_OFFSET:
		m->addr[e].offset = interesting(d);
		if (below(2))
			m->addr[e].offset = (e < TASK_SRC ? t->desc.size : BUF_BYTES) - below(64);
		break;
	case MUT_COUNT:
		m->job.address_count = below(3) ? below(TASK_ENTRIES + 2) :
						  (uint32_t)interesting(d);
		if (below(3) == 0)
			m->s.job_count = below(3) ? below(3) : (uint32_t)interesting(d);
		break;
	case MUT_STRUCT_SIZE:
		if (below(2))
			m->job.address_struct_size = (uint32_t)interesting(d) & 0xff;
		else
			m->s.job_struct_size = (uint32_t)interesting(d) & 0xff;
		break;
	case MUT_FLAGS:
		switch (below(5)) {
		case 0:
			m->s.flags = 1u << below(32);
			break;
		case 1:
			m->s.pad = (uint32_t)rnd() | 1;
			break;
		case 2:
			m->job.flags = 1u << below(32);
			break;
		case 3:
			m->job.pad = (uint32_t)rnd() | 1;
			break;
		default:
			m->addr[e].flags = 1u << below(32);
			break;
		}
		break;
	case MUT_VERSION:
		m->job.dla_version = below(2) ? (uint32_t)rnd() :
				     NVDLA_DLA_VERSION(0, below(16), below(4));
		break;
	case MUT_POINTER:
		switch (below(4)) {
		case 0:
			m->job.addresses = 16;
			break;
		case 1:
			m->s.jobs = 0xdead0000ull;
			break;
		case 2:
			m->job.in_syncobjs = (uintptr_t)m->addr;
			m->job.in_syncobj_count = 1 + below(4);
			break;
		default:
			m->job.out_syncobj = (uint32_t)rnd() | 1;
			break;
		}
		break;
	case MUT_NET: /* one field of the network descriptor */
		off = below(NVDLA_DLA_NETWORK_DESC_SIZE / 2) * 2;
		poke(desc, (uint32_t)desc_offsets[TASK_NET] + off, 2,
		     below(2) ? interesting(d) : (uint64_t)(int64_t)((int)below(10) - 2));
		break;
	case MUT_GRAPH: /* a field of the dependency graph entry */
		off = below(NVDLA_DLA_COMMON_OP_DESC_SIZE);
		poke(desc, (uint32_t)desc_offsets[TASK_GRAPH] + off, 1 + below(2),
		     below(2) ? interesting(d) : (uint64_t)(int64_t)((int)below(8) - 1));
		break;
	case MUT_OP: /* a byte or word of the operation descriptor */
		off = below(NVDLA_DLA_OP_SLOT_SIZE - 4);
		poke(desc, (uint32_t)desc_offsets[TASK_OPS] + off,
		     1 << below(3) > 4 ? 4 : 1 << below(3), interesting(d));
		break;
	case MUT_CUBE: { /* a field of a data cube of the surface */
		static const uint8_t field_off[] = { 0, 2, 4, 8, 12, 14, 16, 20, 24, 28 };
		static const uint8_t field_len[] = { 2, 2, 4, 4, 2, 2, 2, 4, 4, 4 };
		uint32_t f = below(10), cube = below(5);

		if (t->type == NVDLA_DLA_OP_BDMA)
			cube = 0; /* bytes of the transfer instead */
		poke(desc, (uint32_t)desc_offsets[TASK_SURFS] + cube * 32 + field_off[f],
		     field_len[f],
		     below(3) ? interesting(d) : (uint64_t)(int64_t)((int)below(8) - 1));
		break;
	}
	case MUT_BDMA: /* a field of the transfer list (meaningless for SDP: more bytes) */
		off = 4 + below(NVDLA_DLA_BDMA_MAX_TRANSFERS * 32 / 4) * 4;
		if (below(3) == 0)
			off = 2; /* num_transfers */
		poke(desc, (uint32_t)desc_offsets[TASK_SURFS] + off, off == 2 ? 2 : 4,
		     below(3) ? interesting(d) : below(8));
		break;
	case MUT_BYTES: { /* random bytes anywhere in the descriptors */
		uint32_t n = 1 + below(8), i;

		for (i = 0; i < n; i++)
			desc[below(2048)] ^= (uint8_t)(1u << below(8));
		break;
	}
	case MUT_ENTRY_SWAP: { /* entries point at other buffers or places */
		uint32_t other = below(TASK_ENTRIES);

		m->addr[e].handle = m->addr[other].handle;
		m->addr[e].offset = m->addr[other].offset + below(2) * d->atom;
		break;
	}
	default:
		break;
	}
	return kind;
}

static int cmd_fuzz(const char *config, unsigned long iterations, uint64_t seed)
{
	struct dev d, other;
	struct task t, v;
	struct dla_test_descs x;
	struct bo foreign;
	unsigned long i, accepted = 0, rejected = 0, valid = 0, valid_ok = 0;
	unsigned long hung = 0, failed_hw = 0;
	unsigned long by_kind[MUT_COUNT_ALL] = { 0 }, accepted_kind[MUT_COUNT_ALL] = { 0 };
	unsigned long errnos[256] = { 0 };
	int64_t t0 = now_ns();
	char why[200] = "";
	bool valid_failed = false;

	rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
	if (!dev_open(config, &d) || !task_init(&d, &t) || !task_init(&d, &v))
		return 2;
	/* A buffer of another file: its handle means nothing (or something else) here. */
	if (!dev_open_minor(d.minor, &other) || bo_create(&other, PAGE, &foreign))
		return 2;

	for (i = 0; i < iterations; i++) {
		struct submit m;
		enum mutation kind;
		int32_t status = 0;
		uint32_t id = 0, vid = 0;
		int r, sr, st;

		/* Every fourth iteration, a valid job whose output is checked. */
		if (i % 4 == 0) {
			task_random(&d, &v, &x);
			task_write(&v, &x);
			st = run_task(&d, &v, &sr);
			valid++;
			if (st == 0 && task_check(&v, &d, why, sizeof(why))) {
				valid_ok++;
			} else if (!valid_failed) {
				valid_failed = true;
				printf("fuzz %s: iteration %lu: valid job: submit %s, job %s %s\n",
				       config, i, errname(sr), errname(st), why);
			}
			continue;
		}

		task_random(&d, &t, &x);
		task_write(&t, &x);
		submit_init(&m, &t);
		kind = mutate(&d, &t, &m, foreign.handle);
		if (below(3) == 0)
			mutate(&d, &t, &m, foreign.handle);
		by_kind[kind]++;
		r = submit_do(&d, &m, &id);
		if (r) {
			rejected++;
			errnos[(-r) & 0xff]++;
			continue;
		}
		accepted++;
		accepted_kind[kind]++;
		/* Sometimes a valid job queued behind the mutated one: it must still be right. */
		if (below(4) == 0) {
			struct submit vm;

			task_random(&d, &v, &x);
			task_write(&v, &x);
			submit_init(&vm, &v);
			if (submit_do(&d, &vm, &vid))
				vid = 0;
		}
		r = wait_job(&d, id, (int64_t)(d.timeout_ms + 10000) * 1000000ll, &status);
		if (r || status == -ETIMEDOUT)
			hung++;
		else if (status)
			failed_hw++;
		if (vid) {
			valid++;
			r = wait_job(&d, vid, (int64_t)(d.timeout_ms + 10000) * 1000000ll, &status);
			if (!r && !status && task_check(&v, &d, why, sizeof(why))) {
				valid_ok++;
			} else if (!valid_failed) {
				valid_failed = true;
				printf("fuzz %s: iteration %lu: valid job after a mutated one: %s %s\n",
				       config, i, errname(r ? r : status), why);
			}
		}
	}

	printf("fuzz %s: %lu iterations in %.1f s (seed %" PRIu64 "): %lu mutated submits rejected, %lu accepted (%lu failed on the hardware, %lu timed out); %lu of %lu valid jobs correct\n",
	       config, iterations, (double)(now_ns() - t0) / 1e9, seed, rejected, accepted,
	       failed_hw, hung, valid_ok, valid);
	printf("fuzz %s: mutations (submitted/accepted):", config);
	for (i = 0; i < MUT_COUNT_ALL; i++)
		printf(" %s %lu/%lu", mutation_names[i], by_kind[i], accepted_kind[i]);
	printf("\nfuzz %s: rejections:", config);
	for (i = 0; i < 256; i++)
		if (errnos[i])
			printf(" %s(%lu) %lu", errname((int)i), i, errnos[i]);
	printf("\n");
	result(valid_ok == valid, "fuzz %s: every valid job correct (%lu of %lu)", config,
	       valid_ok, valid);
	result(vp_stat(&d, "host_outside_carveout") == 0 && vp_stat(&d, "host_bad_entries") == 0,
	       "fuzz %s: the host model saw no access outside the carve-out and no bad ring entry",
	       config);
	bo_free(&other, &foreign);
	close(other.fd);
	task_fini(&d, &t);
	task_fini(&d, &v);
	close(d.fd);
	return guest_failed ? 1 : 0;
}

/* ---- faults: cycles, and the model stalled in the middle of a graph ------------- */

/* Entry 6 of a graph's address list: the second half of the destination buffer. */
#define TASK_DST_HIGH TASK_ENTRIES
#define HALF_BYTES (BUF_BYTES / 2)

/*
 * Two operations: op 0 an SDP copy src -> dst, op 1 a BDMA copy src ->
 * dst + HALF_BYTES that waits for op 0's completion; with @cycle op 0 also
 * waits for op 1's (each is sent the event it waits for, neither can start).
 */
static void graph_write(const struct dev *d, struct task *t, bool cycle)
{
	struct dla_test_descs sdp, bdma;
	uint8_t *m = t->desc.map;

	task_random_sdp_in(d, t, &sdp, HALF_BYTES);
	task_random_bdma_in(t, &bdma, HALF_BYTES);
	bdma.surf.bdma_surface.transfers[0].destination_address = TASK_DST_HIGH;
	bdma.graph.index = 1;
	sdp.net.num_operations = 2;
	sdp.net.num_addresses = TASK_ENTRIES + 1;
	sdp.net.op_head[NVDLA_DLA_OP_BDMA] = 1;
	sdp.graph.consumers[NVDLA_DLA_OP_BDMA].index = 1;
	sdp.graph.consumers[NVDLA_DLA_OP_BDMA].event = NVDLA_DLA_EVENT_OP_COMPLETED;
	bdma.graph.dependency_count = 1;
	if (cycle) {
		sdp.graph.dependency_count = 1;
		bdma.graph.consumers[NVDLA_DLA_OP_SDP].index = 0;
		bdma.graph.consumers[NVDLA_DLA_OP_SDP].event = NVDLA_DLA_EVENT_OP_COMPLETED;
	}
	task_write(t, &sdp);
	memcpy(m + desc_offsets[TASK_GRAPH] + sizeof(bdma.graph), &bdma.graph, sizeof(bdma.graph));
	memcpy(m + desc_offsets[TASK_OPS] + sizeof(bdma.op), &bdma.op, sizeof(bdma.op));
	memcpy(m + desc_offsets[TASK_SURFS] + sizeof(bdma.surf), &bdma.surf, sizeof(bdma.surf));
}

/*
 * Op 0 a BDMA without transfers (the engine completes it as it starts, no
 * hardware involved), op 1 an SDP copy waiting for it: with the model stalled
 * beforehand, the job times out in the middle of its graph, op 0 done and
 * op 1 programmed.
 */
static void graph_write_engine_first(const struct dev *d, struct task *t)
{
	struct dla_test_descs bdma, sdp;
	uint8_t *m = t->desc.map;

	task_random_sdp(d, t, &sdp);
	dla_test_descs_init(&bdma, NVDLA_DLA_OP_BDMA);
	bdma.net.num_operations = 2;
	bdma.net.op_head[NVDLA_DLA_OP_SDP] = 1;
	bdma.graph.consumers[NVDLA_DLA_OP_SDP].index = 1;
	bdma.graph.consumers[NVDLA_DLA_OP_SDP].event = NVDLA_DLA_EVENT_OP_COMPLETED;
	sdp.graph.index = 1;
	sdp.graph.dependency_count = 1;
	task_write(t, &bdma);
	memcpy(m + desc_offsets[TASK_GRAPH] + sizeof(sdp.graph), &sdp.graph, sizeof(sdp.graph));
	memcpy(m + desc_offsets[TASK_OPS] + sizeof(sdp.op), &sdp.op, sizeof(sdp.op));
	memcpy(m + desc_offsets[TASK_SURFS] + sizeof(sdp.surf), &sdp.surf, sizeof(sdp.surf));
}

_Static_assert(256 + 2 * sizeof(struct nvdla_dla_common_op_desc) <= 512 &&
	       512 + 2 * sizeof(union nvdla_dla_operation_container) <= 1024 &&
	       1024 + 2 * sizeof(union nvdla_dla_surface_container) <= 2 * PAGE,
	       "two operations fit in the descriptor buffer's entries");

static void graph_submit_init(struct submit *m, const struct task *t)
{
	submit_init(m, t);
	m->addr[TASK_DST_HIGH].handle = t->dst.handle;
	m->addr[TASK_DST_HIGH].offset = HALF_BYTES;
	m->job.address_count = TASK_ENTRIES + 1;
}

/* Whether op 0's (SDP) and op 1's (BDMA) outputs are there. */
static void graph_done(const struct task *t, const struct dev *d, bool *sdp, bool *bdma)
{
	struct task part = *t;
	char why[200];

	part.type = NVDLA_DLA_OP_SDP;
	*sdp = task_check(&part, d, why, sizeof(why));
	part.type = NVDLA_DLA_OP_BDMA;
	part.dst.map += HALF_BYTES;
	*bdma = task_check(&part, d, why, sizeof(why));
}

static int graph_run(const struct dev *d, struct task *t, int *submit_ret)
{
	struct submit m;
	int32_t status = 0;
	uint32_t id;
	int r;

	graph_submit_init(&m, t);
	*submit_ret = submit_do(d, &m, &id);
	if (*submit_ret)
		return *submit_ret;
	r = wait_job(d, id, (int64_t)(d->timeout_ms + 10000) * 1000000ll, &status);
	return r ? r : status;
}

/* A graph that can never run must be refused at submit, before anything is queued. */
static bool never_runs_refused(const struct dev *d, struct task *t, unsigned int kind,
			       const char **what)
{
	struct dla_test_descs x;
	struct submit m;
	uint32_t id;

	if (kind == 0 && (d->features & NVDLA_HW_FEATURE_BDMA)) {
		*what = "SDP and BDMA waiting for each other";
		graph_write(d, t, true);
		graph_submit_init(&m, t);
	} else {
		task_random_sdp(d, t, &x);
		x.graph.dependency_count = 1;
		*what = "an SDP waiting for an event nobody sends";
		if (kind == 1) {
			*what = "an SDP waiting for its own completion";
			x.graph.consumers[NVDLA_DLA_OP_SDP].index = 0;
			x.graph.consumers[NVDLA_DLA_OP_SDP].event = NVDLA_DLA_EVENT_OP_COMPLETED;
		}
		task_write(t, &x);
		submit_init(&m, t);
	}
	return submit_do(d, &m, &id) == -EINVAL;
}

/*
 * Tells the model to stall after @delay_ns or, with @delay_ns < 0, as soon as
 * @t's destination no longer holds task_write()'s canary (giving up after
 * @limit_ns). The sysfs file is opened before waiting, so the stall follows
 * quickly.
 */
static bool stall_later(const struct dev *d, const struct task *t, int64_t delay_ns,
			int64_t limit_ns)
{
	static uint8_t canary[HALF_BYTES];
	char path[128];
	int64_t end = now_ns() + limit_ns;
	bool ok;
	int fd;

	snprintf(path, sizeof(path), "%s/vp_stall", d->sysfs);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (delay_ns >= 0) {
		struct timespec ts = { delay_ns / 1000000000, delay_ns % 1000000000 };

		nanosleep(&ts, NULL);
	} else {
		memset(canary, 0xa5, t->size);
		while (!memcmp((const void *)t->dst.map, canary, t->size) && now_ns() < end)
			;
	}
	ok = write(fd, "1\n", 2) == 2;
	close(fd);
	return ok;
}

/* A valid job after a fault; a stall that came after the last job ended times out once. */
static bool next_job_correct(const struct dev *d, struct task *t, bool retry, char *why,
			     size_t len)
{
	struct dla_test_descs x;
	int sr, st;

	task_random_sdp(d, t, &x);
	task_write(t, &x);
	st = run_task(d, t, &sr);
	if (st == -ETIMEDOUT && retry) {
		task_write(t, &x);
		st = run_task(d, t, &sr);
	}
	if (st) {
		snprintf(why, len, "submit %s, job %s", errname(sr), errname(st));
		return false;
	}
	return task_check(t, d, why, len);
}

static int cmd_faults(const char *config, unsigned long iterations, uint64_t seed)
{
	struct dev d;
	struct task t, v;
	unsigned long i, cycles = 0, refused = 0, graphs = 0, complete = 0, before = 0, middle = 0,
			 bad = 0, next_ok = 0, midway = 0, midway_ok = 0;
	int64_t t0, graph_ns = 1000000;
	char why[200] = "";
	const char *what = "";
	bool have_bdma, sdp_done, bdma_done, told = false;
	int sr, st;

	rng_state = seed * 0x9e3779b97f4a7c15ull + 3;
	if (!dev_open(config, &d) || !task_init(&d, &t) || !task_init(&d, &v))
		return 2;
	have_bdma = d.features & NVDLA_HW_FEATURE_BDMA;
	if (have_bdma) { /* how long an undisturbed graph takes: the stalls fall within it */
		graph_write(&d, &t, false);
		t0 = now_ns();
		st = graph_run(&d, &t, &sr);
		graph_ns = now_ns() - t0;
		graph_done(&t, &d, &sdp_done, &bdma_done);
		result(st == 0 && sdp_done && bdma_done,
		       "faults %s: a graph of two operations (SDP, then BDMA) runs, both outputs correct (%s, %.1f ms)",
		       config, errname(st), (double)graph_ns / 1e6);
	}
	for (i = 0; i < iterations; i++) {
		bool stalled_after = false;
		int wst = 0;
		pid_t child;

		/* On nv_full, in turn: stalled midway, never runnable, stalled at random. */
		if (have_bdma && i % 3 == 0) {
			/*
			 * Stalled before the submit: the timeout comes with op 0 done,
			 * op 1 armed.
			 */
			graphs++;
			midway++;
			graph_write_engine_first(&d, &t);
			sr = 0;
			st = vp_stall(&d) ? run_task(&d, &t, &sr) : -EPERM;
			t.type = NVDLA_DLA_OP_SDP;
			if (st == -ETIMEDOUT && !task_check(&t, &d, why, sizeof(why)))
				midway_ok++;
			else if (!bad++)
				printf("faults %s: iteration %lu: graph stalled after op 0: submit %s, job %s\n",
				       config, i, errname(sr), errname(st));
			if (next_job_correct(&d, &v, false, why, sizeof(why))) {
				next_ok++;
			} else if (!told) {
				told = true;
				printf("faults %s: iteration %lu: the job after a stall: %s\n",
				       config, i, why);
			}
			continue;
		}
		if (!have_bdma || i % 3 == 1) {
			cycles++;
			if (never_runs_refused(&d, &t, below(3), &what))
				refused++;
			else if (cycles - refused == 1)
				printf("faults %s: iteration %lu: not refused: %s\n",
				       config, i, what);
			continue;
		}
		/*
		 * The model stalls at a random moment of the graph or, every other time, as
		 * soon as op 0's output lands (before the interrupt reaches the driver, which
		 * then programs op 1): often between the two operations.
		 */
		graphs++;
		graph_write(&d, &t, false);
		child = fork();
		if (child == 0) {
			int64_t at = below(2) ? -1 : (int64_t)(rnd() % (uint64_t)(graph_ns + 1));

			_exit(stall_later(&d, &t, at, graph_ns * 4) ? 0 : 1);
		}
		st = graph_run(&d, &t, &sr);
		waitpid(child, &wst, 0);
		graph_done(&t, &d, &sdp_done, &bdma_done);
		if (st == 0 && sdp_done && bdma_done) {
			complete++;
			stalled_after = true;
		} else if (st == -ETIMEDOUT && !bdma_done) {
			if (sdp_done)
				middle++;
			else
				before++;
		} else {
			if (!bad++)
				printf("faults %s: iteration %lu: stalled graph: submit %s, job %s, SDP output %s, BDMA output %s\n",
				       config, i, errname(sr), errname(st), sdp_done ? "there" : "missing",
				       bdma_done ? "there" : "missing");
		}
		if (next_job_correct(&d, &v, stalled_after, why, sizeof(why))) {
			next_ok++;
		} else if (!told) {
			told = true;
			printf("faults %s: iteration %lu: the job after a stall: %s\n",
			       config, i, why);
		}
	}
	printf("faults %s: %lu iterations (seed %" PRIu64 "): %lu never-runnable graphs; %lu stalled graphs: %lu stalled before the submit and timed out after op 0 (done by the engine) with op 1 armed; of the others, stalled at a random moment, %lu timed out between op 0 and op 1, %lu before op 0 ran, %lu stalled after the end\n",
	       config, iterations, seed, cycles, graphs, midway, middle, before, complete);
	result(refused == cycles, "faults %s: every dependency cycle or never-released dependency refused with EINVAL (%lu of %lu)",
	       config, refused, cycles);
	if (have_bdma) {
		result(bad == 0, "faults %s: every stalled graph completed correctly or timed out with op 1 not run (%lu of %lu; %lu of %lu stalled after op 0)",
		       config, graphs - bad, graphs, midway_ok, midway);
		result(next_ok == graphs, "faults %s: the job after each stalled graph is correct (%lu of %lu)",
		       config, next_ok, graphs);
	}
	task_fini(&d, &t);
	task_fini(&d, &v);
	close(d.fd);
	return guest_failed ? 1 : 0;
}

/* ---- churn: jobs while the device is unbound and bound again ---------------------- */

static sigjmp_buf churn_jump;

/* A mapping revoked by the unbind faults with SIGBUS: the device is gone. */
static void churn_sigbus(int sig)
{
	(void)sig;
	siglongjmp(churn_jump, 1);
}

static int cmd_churn(const char *config, unsigned long seconds, uint64_t seed)
{
	static struct dev d;
	static struct task t;
	static bool open_now;
	static unsigned long ok, wrong, lost, reopened, ok_after_reopen;
	struct dla_test_descs x;
	int64_t end = now_ns() + (int64_t)seconds * 1000000000ll;
	char why[200] = "";
	int sr, st;

	rng_state = seed * 0x9e3779b97f4a7c15ull + 5;
	signal(SIGBUS, churn_sigbus);
	while (now_ns() < end) {
		if (sigsetjmp(churn_jump, 1)) { /* SIGBUS: a revoked mapping */
			lost++;
			task_fini(&d, &t);
			close(d.fd);
			open_now = false;
			continue;
		}
		if (!open_now) {
			struct timespec ts = { 0, 20000000 };

			if (!dev_open_quiet(config, &d)) {
				nanosleep(&ts, NULL);
				continue;
			}
			if (!task_init(&d, &t)) {
				task_fini(&d, &t);
				close(d.fd);
				nanosleep(&ts, NULL);
				continue;
			}
			if (ok + lost)
				reopened++;
			open_now = true;
		}
		task_random(&d, &t, &x);
		task_write(&t, &x);
		st = run_task(&d, &t, &sr);
		if (st == 0 && task_check(&t, &d, why, sizeof(why))) {
			ok++;
			if (reopened)
				ok_after_reopen++;
		} else if (st == 0) {
			if (!wrong++)
				printf("churn %s: a job completed with a wrong output: %s\n",
				       config, why);
		} else {
			/* The device went away under the job or the submit: open it again. */
			lost++;
			task_fini(&d, &t);
			close(d.fd);
			open_now = false;
		}
	}
	signal(SIGBUS, SIG_DFL);
	printf("churn %s: %lu s (seed %" PRIu64 "): %lu jobs correct (%lu after a rebind), %lu failed by an unbind, device opened again %lu times\n",
	       config, seconds, seed, ok, ok_after_reopen, lost, reopened);
	result(wrong == 0, "churn %s: no job completed with a wrong output (%lu)", config, wrong);
	result(reopened > 0 && ok_after_reopen > 0,
	       "churn %s: the device came back after unbinding and its jobs are correct (%lu)",
	       config, ok_after_reopen);
	if (open_now) {
		task_fini(&d, &t);
		close(d.fd);
	}
	return guest_failed ? 1 : 0;
}

/* ---- count-ioctls: the DRM ioctls a program makes -------------------------------- */

static const char *drm_ioctl_name(unsigned long nr)
{
	switch (nr) {
	case DRM_COMMAND_BASE + DRM_NVDLA_SUBMIT: return "NVDLA_SUBMIT";
	case DRM_COMMAND_BASE + DRM_NVDLA_GEM_CREATE: return "NVDLA_GEM_CREATE";
	case DRM_COMMAND_BASE + DRM_NVDLA_GEM_MMAP: return "NVDLA_GEM_MMAP";
	case DRM_COMMAND_BASE + DRM_NVDLA_GEM_DESTROY: return "NVDLA_GEM_DESTROY";
	case DRM_COMMAND_BASE + DRM_NVDLA_GET_PARAM: return "NVDLA_GET_PARAM";
	case DRM_COMMAND_BASE + DRM_NVDLA_BO_CREATE: return "NVDLA_BO_CREATE";
	case DRM_COMMAND_BASE + DRM_NVDLA_BO_INFO: return "NVDLA_BO_INFO";
	case DRM_COMMAND_BASE + DRM_NVDLA_JOB_SUBMIT: return "NVDLA_JOB_SUBMIT";
	case DRM_COMMAND_BASE + DRM_NVDLA_WAIT: return "NVDLA_WAIT";
	case 0x00: return "VERSION";
	case 0x09: return "GEM_CLOSE";
	case 0x2d: return "PRIME_HANDLE_TO_FD";
	case 0x2e: return "PRIME_FD_TO_HANDLE";
	default: return NULL;
	}
}

static int cmd_count_ioctls(char **argv)
{
	unsigned long counts[256] = { 0 }, total = 0, other = 0, i;
	int status = 0, code = 0;
	pid_t child, pid;

	child = fork();
	if (child == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	if (child < 0 || waitpid(child, &status, 0) != child)
		return 2;
	ptrace(PTRACE_SETOPTIONS, child, NULL,
	       (void *)(uintptr_t)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE |
				   PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK));
	ptrace(PTRACE_SYSCALL, child, NULL, NULL);
	for (;;) {
		int sig = 0;

		pid = waitpid(-1, &status, __WALL);
		if (pid < 0)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (pid == child)
				code = WIFEXITED(status) ? WEXITSTATUS(status) :
							   128 + WTERMSIG(status);
			continue;
		}
		if (WIFSTOPPED(status) && WSTOPSIG(status) == (SIGTRAP | 0x80)) {
			struct __ptrace_syscall_info info;

			if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info), &info) > 0 &&
			    info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == SYS_ioctl) {
				unsigned long req = (unsigned long)info.entry.args[1];

				if (_IOC_TYPE(req) == DRM_IOCTL_BASE) {
					counts[_IOC_NR(req) & 0xff]++;
					total++;
				} else {
					other++;
				}
			}
		} else if (WIFSTOPPED(status) && WSTOPSIG(status) != SIGTRAP &&
			   WSTOPSIG(status) != SIGSTOP) {
			sig = WSTOPSIG(status);
		}
		ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(uintptr_t)sig);
	}
	fprintf(stderr, "ioctls: %lu drm (", total);
	for (i = 0; i < 256; i++)
		if (counts[i]) {
			const char *name = drm_ioctl_name(i);

			if (name)
				fprintf(stderr, " %s %lu", name, counts[i]);
			else
				fprintf(stderr, " 0x%02lx %lu", i, counts[i]);
		}
	fprintf(stderr, " ), %lu other; exit %d\n", other, code);
	return code;
}

/* ---- main ------------------------------------------------------------------------- */

static int cmd_info(void)
{
	struct dev d;
	int i, n = 0;

	for (i = 0; i < NODE_COUNT; i++) {
		if (!dev_open_minor(node_minor(i), &d))
			continue;
		printf("%s %s atom %" PRIu64 " job timeout %" PRIu64 " ms sysfs %s\n", d.node,
		       config_name(d.config), d.atom, d.timeout_ms, d.sysfs);
		close(d.fd);
		n++;
	}
	return n ? 0 : 1;
}

static int usage(void)
{
	fprintf(stderr, "%s: nvdla_vp_guest info | node CONFIG | reject CONFIG | stall CONFIG |\n"
		"       fuzz CONFIG ITERATIONS [SEED] | faults CONFIG ITERATIONS [SEED] |\n"
		"       churn CONFIG SECONDS [SEED] | count-ioctls COMMAND [ARGS...]\n", "usage");
	return 2;
}

int main(int argc, char **argv)
{
	struct dev d;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "info"))
		return cmd_info();
	if (argc < 3)
		return usage();
	if (!strcmp(argv[1], "node")) {
		if (!dev_open(argv[2], &d))
			return 1;
		printf("%s\n", d.node);
		return 0;
	}
	if (!strcmp(argv[1], "reject"))
		return cmd_reject(argv[2]);
	if (!strcmp(argv[1], "stall"))
		return cmd_stall(argv[2]);
	if (!strcmp(argv[1], "count-ioctls"))
		return cmd_count_ioctls(argv + 2);
	if (!strcmp(argv[1], "faults") && argc >= 4)
		return cmd_faults(argv[2], strtoul(argv[3], NULL, 0),
				  argc > 4 ? strtoull(argv[4], NULL, 0) : (uint64_t)time(NULL));
	if (!strcmp(argv[1], "churn") && argc >= 4)
		return cmd_churn(argv[2], strtoul(argv[3], NULL, 0),
				 argc > 4 ? strtoull(argv[4], NULL, 0) : (uint64_t)time(NULL));
	if (!strcmp(argv[1], "fuzz") && argc >= 4)
		return cmd_fuzz(argv[2], strtoul(argv[3], NULL, 0),
				argc > 4 ? strtoull(argv[4], NULL, 0) : (uint64_t)time(NULL));
	return usage();
}
