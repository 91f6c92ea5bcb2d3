/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The hand-off between the driver and an engine (the operation scheduler
 * and register programming of kmd/engine/).
 *
 * The driver does everything up to a checked job: it resolves the
 * submitter's address list into buffers (struct nvdla_task), checks the
 * arguments (handles, offsets in bounds, atom-aligned addresses, counts),
 * queues the job through drm_sched with its fences, and powers the device.
 * The engine does the rest:
 *
 *   validate(task)  In the submitter's context, before the job is queued;
 *                   may sleep; touches no register. Parses the network
 *                   descriptor and every descriptor it reaches, and returns
 *                   0 only if the hardware, running this task, would touch
 *                   no memory outside [dma address, dma address + size) of
 *                   the task's buffers. Userspace can rewrite its buffers at
 *                   any time (they are mapped), so what was checked must be
 *                   copied into task->engine_priv and run() must use that
 *                   copy only, never re-read descriptors from the buffers.
 *                   Returns -EINVAL (or another errno) to reject the job;
 *                   the errno reaches userspace. Sets task->engine_bytes
 *                   to the memory engine_priv holds (the file's cap counts
 *                   it) and allocates it with GFP_KERNEL_ACCOUNT.
 *   run(task)       From the scheduler when the job's turn has come, with
 *                   the device powered (runtime PM held until completion).
 *                   Programs and starts the hardware and returns 0; the job
 *                   then completes when the engine calls nvdla_job_done()
 *                   (from its IRQ handler or thread). A non-zero return
 *                   fails the job at once with that errno.
 *   irq()/irq_thread()  The device's interrupt; irq runs in hard IRQ
 *                   context and returns IRQ_NONE, IRQ_HANDLED or
 *                   IRQ_WAKE_THREAD.
 *   reset()         After a job timed out (the IRQ is disabled meanwhile):
 *                   stop the hardware and forget the current task. The
 *                   driver then resets the device (nvdla_device_reset()),
 *                   fails that job with -ETIMEDOUT, and the next job runs.
 *   task_free(task) Releases task->engine_priv.
 *
 * The engine is nvdla_engine_dla (nvdla_engine_dla.c): kmd/engine/'s
 * validator (include/nvdla/hw/dla_engine.h) on every submit and its
 * scheduler when the job runs. Test builds (NVDLA_SELFTEST=y) can select
 * nvdla_engine_selftest instead, which fails every job on purpose.
 */
#ifndef NVDLA_ENGINE_H
#define NVDLA_ENGINE_H

#include <linux/interrupt.h>
#include <linux/types.h>

struct nvdla_bo;
struct nvdla_device;

/* One address-list entry: a buffer (with a reference held) and an offset in it. */
struct nvdla_address {
	struct nvdla_bo *bo;
	u64 offset; /* < nvdla_bo_size(bo), dma address + offset atom-aligned */
};

/* What an engine sees of a job. */
struct nvdla_task {
	u32 dla_version;		/* of the descriptors, 0: not known (see the UAPI) */
	u32 num_addresses;		/* >= 1 */
	struct nvdla_address *addresses; /* [0]: the network descriptor */
	void *engine_priv;		/* the engine's, freed by task_free() */
	size_t engine_bytes;		/* what validate() allocated for it */
};

struct nvdla_engine_ops {
	const char *name;
	u32 id; /* NVDLA_PARAM_ENGINE */
	int (*init)(struct nvdla_device *ndev);
	void (*fini)(struct nvdla_device *ndev);
	int (*validate)(struct nvdla_device *ndev, struct nvdla_task *task);
	int (*run)(struct nvdla_device *ndev, struct nvdla_task *task);
	void (*reset)(struct nvdla_device *ndev);
	irqreturn_t (*irq)(struct nvdla_device *ndev);
	irqreturn_t (*irq_thread)(struct nvdla_device *ndev);
	void (*task_free)(struct nvdla_device *ndev, struct nvdla_task *task);
};

/*
 * Called by the engine when the running task has finished: status 0 on
 * success, else a negative errno (-EIO for a hardware error). Any context.
 */
void nvdla_job_done(struct nvdla_device *ndev, int status);

/* Register access for engines, whatever the bus (MMIO, ivshmem mailbox). */
u32 nvdla_reg_read(struct nvdla_device *ndev, u32 reg);
void nvdla_reg_write(struct nvdla_device *ndev, u32 reg, u32 val);

/* Buffer facts for validators. */
u64 nvdla_bo_size(const struct nvdla_bo *bo);
dma_addr_t nvdla_bo_dma_address(const struct nvdla_bo *bo);
/* Kernel mapping of the whole buffer, NULL for imported buffers. */
void *nvdla_bo_vaddr(const struct nvdla_bo *bo);

/* The engine of kmd/engine/: validator, scheduler, register programming. */
extern const struct nvdla_engine_ops nvdla_engine_dla;

#ifdef NVDLA_SELFTEST_ENGINE
/* make test-kmd only: fails every job, after passing it through the scheduler. */
extern const struct nvdla_engine_ops nvdla_engine_selftest;
#endif

#endif /* NVDLA_ENGINE_H */
