/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * NVDLA DRM driver: one hardware instance (struct nvdla_device), one open
 * DRM file (struct nvdla_file), and what the parts of the driver call of
 * each other.
 *
 *   nvdla_drv.c       DRM driver, ioctl table, GET_PARAM, open/close, module
 *   nvdla_device.c    an instance: bus hooks, IRQ, power, registration
 *   nvdla_platform.c  SoC glue: device tree, MMIO, clocks, resets, memory
 *   nvdla_ivshmem.c   virtual-platform glue: an ivshmem PCI device
 *   nvdla_gem.c       buffer objects: carve-out or DMA memory, mmap, PRIME
 *   nvdla_job.c       jobs: drm_sched, fences, reservations, IRQ, timeout
 *   nvdla_submit.c    the submit ioctls (original and current) and WAIT
 *   nvdla_engine*.c   engines behind nvdla_engine.h
 */
#ifndef NVDLA_DRV_H
#define NVDLA_DRV_H

#include <drm/drm_device.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>
#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include <nvdla/hw/nvdla_config.h>

#include "nvdla_engine.h"

#define NVDLA_DRIVER_MAJOR 1
#define NVDLA_DRIVER_MINOR 0
#define NVDLA_DRIVER_PATCH 0

/* Limits (the first two are the original interface's). */
#define NVDLA_MAX_ADDRESSES 6144
#define NVDLA_MAX_LEGACY_TASKS 24
#define NVDLA_MAX_JOBS 64
#define NVDLA_MAX_FILE_JOBS 1024 /* remembered (and unfinished) jobs per file */
#define NVDLA_MAX_BO_ALIGNMENT BIT_ULL(30)

struct dma_buf_attachment;
struct nvdla_device;
struct nvdla_job;
struct sg_table;

/*
 * How the driver reaches the accelerator's registers: MMIO on an SoC, a
 * mailbox in shared memory on the virtual platform. read() may be slow
 * there (a round trip to the hardware model), so engines batch writes and
 * read rarely. reset() (optional) resets the accelerator. flush()
 * (optional, any context) hands writes the bus may still hold to the
 * hardware: the driver calls it before it waits for an interrupt; a read
 * flushes the writes before it by itself. reset() returns -EOPNOTSUPP when
 * it cannot truly stop the accelerator (no reset line): the device is then
 * wedged after a failed job (see nvdla_device_reset()).
 */
struct nvdla_bus_ops {
	const char *name;
	bool sleeps; /* the hooks may sleep: process context only (see nvdla_irq()) */
	u32 (*read)(struct nvdla_device *ndev, u32 reg);
	void (*write)(struct nvdla_device *ndev, u32 reg, u32 val);
	int (*reset)(struct nvdla_device *ndev);
	void (*flush)(struct nvdla_device *ndev);
};

/*
 * A physically contiguous range reserved for NVDLA, managed with drm_mm.
 * It lives as long as the DRM device (buffers outlive an unbind), and while
 * it does no other binding may use the range (nvdla_gem.c).
 */
struct nvdla_carveout {
	phys_addr_t phys;   /* CPU physical address */
	dma_addr_t dma;	    /* the same byte as the device addresses it */
	u64 size;
	void *vaddr;	    /* write-combined kernel mapping of the range */
	struct mutex lock;  /* protects mm */
	struct drm_mm mm;
	struct list_head link; /* in the list of live carve-outs */
};

struct nvdla_device {
	struct drm_device drm;
	struct device *dev;
	const struct nvdla_hw_config *config;
	u32 uapi_config; /* enum drm_nvdla_hw_config */

	/* Filled in by the glue before nvdla_device_register(). */
	const struct nvdla_bus_ops *bus;
	void __iomem *regs; /* MMIO bus */
	void *bus_priv;	    /* other buses */
	int irq;	    /* <= 0: none */

	/* Buffer memory: the carve-out if carveout.size, else dma_alloc. */
	struct nvdla_carveout carveout;
	atomic_t bo_count;

	/* Jobs. */
	const struct nvdla_engine_ops *engine;
	void *engine_priv;
	struct drm_gpu_scheduler sched;
	struct drm_gpu_scheduler *sched_list[1];
	bool sched_ready; /* between nvdla_sched_init() and drm_sched_fini() */
	unsigned int job_timeout_ms;
	spinlock_t job_lock;	      /* active_job */
	spinlock_t fence_lock;	      /* the hardware fences */
	struct nvdla_job *active_job; /* handed to the engine, not done */
	u64 fence_context;
	u64 fence_seqno;
	atomic_t jobs_alive;
	wait_queue_head_t jobs_idle;

	/*
	 * Set when a job failed and the device could not be reset: units may
	 * still hold programmed transfers, so no job runs any more and the
	 * buffers of the failed jobs stay allocated (kept_bos) until the DRM
	 * device is released.
	 */
	unsigned long wedged; /* bit 0 */
	int bus_error; /* the bus lost the accelerator (nvdla_device_bus_error()), until a reset */
	spinlock_t kept_lock;	   /* kept_bos */
	struct list_head kept_bos; /* struct nvdla_kept_bos */
};

struct nvdla_file {
	struct kref ref;	  /* the DRM file's and one per queued job */
	struct nvdla_device *ndev;
	atomic64_t queued_bytes;  /* kernel memory of its unfinished jobs */
	struct drm_sched_entity entity;
	struct mutex submit_lock; /* job ids, queueing order */
	struct xarray jobs;	  /* job id -> finished fence */
	u32 next_job_id;
	u32 oldest_job_id;
	u32 job_count;
};

static inline struct nvdla_device *to_nvdla_device(struct drm_device *drm)
{
	return container_of(drm, struct nvdla_device, drm);
}

/* nvdla_drv.c */
const struct drm_driver *nvdla_drm_driver(struct device *dev);
unsigned int nvdla_job_timeout_ms(void);
u64 nvdla_file_queue_limit(void);
const struct nvdla_engine_ops *nvdla_default_engine(void);

/* nvdla_device.c */
struct nvdla_device *nvdla_device_alloc(struct device *dev, const struct nvdla_hw_config *config);
int nvdla_device_register(struct nvdla_device *ndev);
void nvdla_device_unregister(struct nvdla_device *ndev);
int nvdla_device_reset(struct nvdla_device *ndev);
int nvdla_device_check_wedged(struct nvdla_device *ndev);
void nvdla_device_bus_error(struct nvdla_device *ndev, int err);
void nvdla_reg_flush(struct nvdla_device *ndev);

/* nvdla_gem.c */
int nvdla_mem_init_carveout(struct nvdla_device *ndev, phys_addr_t phys, dma_addr_t dma,
			    u64 size);
int nvdla_mem_init(struct nvdla_device *ndev);
struct drm_gem_object *nvdla_gem_prime_import_sg_table(struct drm_device *drm,
						       struct dma_buf_attachment *attach,
						       struct sg_table *sgt);
struct nvdla_bo *nvdla_bo_from_dmabuf_fd(struct nvdla_device *ndev, int fd);
void nvdla_bo_put(struct nvdla_bo *bo);
int nvdla_ioctl_gem_create(struct drm_device *drm, void *data, struct drm_file *file);
int nvdla_ioctl_gem_mmap(struct drm_device *drm, void *data, struct drm_file *file);
int nvdla_ioctl_gem_destroy(struct drm_device *drm, void *data, struct drm_file *file);
int nvdla_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file);
int nvdla_ioctl_bo_info(struct drm_device *drm, void *data, struct drm_file *file);

/* nvdla_job.c */
int nvdla_sched_init(struct nvdla_device *ndev);
int nvdla_job_open(struct nvdla_file *nfile);
void nvdla_job_close(struct nvdla_file *nfile);
void nvdla_file_put(struct nvdla_file *nfile);
void nvdla_job_unplug(struct nvdla_device *ndev);
irqreturn_t nvdla_irq(int irq, void *arg);
irqreturn_t nvdla_irq_thread(int irq, void *arg);

/* nvdla_submit.c */
int nvdla_ioctl_submit_legacy(struct drm_device *drm, void *data, struct drm_file *file);
int nvdla_ioctl_job_submit(struct drm_device *drm, void *data, struct drm_file *file);
int nvdla_ioctl_wait(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* NVDLA_DRV_H */
