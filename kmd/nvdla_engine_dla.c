// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The DLA engine (kmd/engine/, include/nvdla/hw/dla_engine.h) behind the
 * driver's engine hand-off (nvdla_engine.h): the validator on every submit,
 * the scheduler and register programming when the job runs.
 *
 * validate()  builds the engine's view of the address list (device address
 *             and usable size of each entry), lets the validator read the
 *             descriptors once through the buffers' kernel mappings and
 *             keeps its checked copy in task->engine_priv; run() starts that
 *             copy, never the buffers.
 * run()       starts the task; irq() latches the interrupt; irq_thread()
 *             schedules what the events allow and completes the job.
 * reset()     after a timeout: the engine forgets the task (the driver then
 *             resets the device).
 *
 * The engine neither sleeps nor allocates: every call into it is made under
 * one lock per device, a spinlock taken with irqsave (MMIO), or a mutex where
 * the bus sleeps (the virtual platform's mailbox). A task that fails at run time
 * (an impossible hardware state, a bounded wait that expired) resets the
 * engine and the device and fails its job with -EIO; the kernel log says why.
 *
 * Interface version of the descriptors (task->dla_version): JOB_SUBMIT
 * passes the loadable's blob version. When it is 0 (unknown; always for the
 * original SUBMIT, whose `version` field is that interface's structure
 * version, set to 0 by the original runtime and never read) the task is
 * validated in the 0.12 layout and, if it breaks a rule there, in the
 * 0.10/0.11 layout (28-byte data cubes); the first reading that passes runs.
 * Either reading is fully validated, so the choice never lets the hardware
 * touch memory outside the task's buffers.
 */
#include <drm/drm_print.h>
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include <nvdla/hw/dla_engine.h>
#include <uapi/drm/nvdla_drm.h>

#include "nvdla_drv.h"

/* The layouts tried, in this order, when the submitter does not give the version. */
#define NVDLA_DLA_GUESS_FIRST NVDLA_DLA_VERSION(0, 12, 0)
#define NVDLA_DLA_GUESS_OLDER NVDLA_DLA_VERSION(0, 10, 0) /* 0.10 and 0.11: 28-byte cubes */

/* Per device (ndev->engine_priv). */
struct nvdla_dla {
	spinlock_t lock; /* serialises every call into the engine (MMIO) */
	struct mutex mutex; /* the same on a bus that sleeps (the virtual platform) */
	bool sleeps;
	struct nvdla_dla_engine *engine;
	u64 storage[]; /* the engine context (8-byte aligned) */
};

/* Per job (task->engine_priv): the validator's checked copy of the task. */
struct nvdla_dla_job {
	struct nvdla_dla_task *task;
	u64 storage[];
};

/* What the validator's read callback needs. */
struct nvdla_dla_reader {
	struct nvdla_device *ndev;
	const struct nvdla_task *task;
};

/*
 * Every call into the engine is serialised: with a spinlock (interrupts off)
 * where registers are MMIO and the hard IRQ handler calls in, with a mutex
 * where the bus sleeps (its interrupt is handled in the IRQ thread).
 */
static unsigned long nvdla_dla_lock(struct nvdla_dla *dla)
{
	unsigned long flags = 0;

	if (dla->sleeps)
		mutex_lock(&dla->mutex);
	else
		flags = nvdla_dla_lock(dla);
	return flags;
}

static void nvdla_dla_unlock(struct nvdla_dla *dla, unsigned long flags)
{
	if (dla->sleeps)
		mutex_unlock(&dla->mutex);
	else
		nvdla_dla_unlock(dla, flags);
}

/* ---- register access for the engine -------------------------------------- */

static u32 nvdla_dla_reg_read(void *priv, u32 offset)
{
	return nvdla_reg_read(priv, offset);
}

static void nvdla_dla_reg_write(void *priv, u32 offset, u32 value)
{
	nvdla_reg_write(priv, offset, value);
}

static void nvdla_dla_delay_us(void *priv, u32 us)
{
	udelay(us);
}

static const struct nvdla_dla_engine_ops nvdla_dla_engine_ops = {
	.reg_read = nvdla_dla_reg_read,
	.reg_write = nvdla_dla_reg_write,
	.delay_us = nvdla_dla_delay_us,
};

/* ---- validation ----------------------------------------------------------- */

/*
 * Copies descriptor bytes of address-list entry @index for the validator,
 * which asks only for bytes inside the entry. Imported buffers have no
 * kernel mapping: they can hold data, not descriptors.
 */
static int nvdla_dla_read(void *priv, u32 index, u64 offset, void *dst, u32 size)
{
	const struct nvdla_dla_reader *reader = priv;
	const struct nvdla_address *entry;
	const u8 *vaddr;
	u64 usable;

	if (index >= reader->task->num_addresses)
		return -EINVAL;
	entry = &reader->task->addresses[index];
	usable = nvdla_bo_size(entry->bo) - entry->offset;
	if (offset > usable || size > usable - offset)
		return -EINVAL;
	vaddr = nvdla_bo_vaddr(entry->bo);
	if (!vaddr) {
		drm_dbg(&reader->ndev->drm,
			"address %u: an imported buffer cannot hold descriptors (no kernel mapping)\n",
			index);
		return -EINVAL;
	}
	memcpy(dst, vaddr + entry->offset + offset, size);
	/* Called for every descriptor: a task of thousands of operations takes a while. */
	cond_resched();
	return 0;
}

static void nvdla_dla_log_rejection(struct nvdla_device *ndev, u32 version,
				    const struct nvdla_dla_error *err)
{
	drm_dbg(&ndev->drm, "job rejected (descriptors read as interface %u.%u.%u): %s: %s\n",
		NVDLA_DLA_VERSION_MAJOR(version), NVDLA_DLA_VERSION_MINOR(version),
		NVDLA_DLA_VERSION_SUB(version), nvdla_dla_code_name(err->code), err->message);
}

static int nvdla_dla_validate(struct nvdla_device *ndev, struct nvdla_task *task)
{
	struct nvdla_dla_reader reader = { .ndev = ndev, .task = task };
	struct nvdla_dla_task_source src = { };
	struct nvdla_dla_buffer *list;
	struct nvdla_dla_job *job = NULL;
	struct nvdla_dla_error err;
	size_t bytes;
	u32 i;
	int ret;

	list = kvcalloc(task->num_addresses, sizeof(*list), GFP_KERNEL_ACCOUNT);
	if (!list)
		return -ENOMEM;
	for (i = 0; i < task->num_addresses; i++) {
		const struct nvdla_address *entry = &task->addresses[i];

		/*
		 * Every buffer of this driver is system or carve-out memory behind
		 * the primary interface: no entry is NVDLA_DLA_BUFFER_SECONDARY
		 * (the driver allocates no CV-SRAM), so CV cubes are rejected.
		 */
		list[i].address = nvdla_bo_dma_address(entry->bo) + entry->offset;
		list[i].size = nvdla_bo_size(entry->bo) - entry->offset;
	}
	src.version = task->dla_version ? task->dla_version : NVDLA_DLA_GUESS_FIRST;
	src.num_addresses = task->num_addresses;
	src.addresses = list;
	src.read = nvdla_dla_read;
	src.priv = &reader;

	ret = nvdla_dla_task_measure(&src, &bytes, &err);
	if (ret) {
		nvdla_dla_log_rejection(ndev, src.version, &err);
		goto out;
	}
	/* Charged to the submitter: up to a few MiB for the largest tasks. */
	job = kvmalloc(struct_size(job, storage, DIV_ROUND_UP(bytes, sizeof(u64))),
		       GFP_KERNEL_ACCOUNT);
	if (!job) {
		ret = -ENOMEM;
		goto out;
	}
	ret = nvdla_dla_task_validate(ndev->config, &src, job->storage, bytes, &job->task, &err);
	if (ret) {
		nvdla_dla_log_rejection(ndev, src.version, &err);
		if (!task->dla_version && (ret == -EINVAL || ret == -EOPNOTSUPP)) {
			src.version = NVDLA_DLA_GUESS_OLDER;
			if (!nvdla_dla_task_validate(ndev->config, &src, job->storage, bytes,
						     &job->task, &err)) {
				drm_dbg(&ndev->drm,
					"job accepted in the 0.10/0.11 layout (28-byte data cubes)\n");
				ret = 0;
			} else {
				nvdla_dla_log_rejection(ndev, src.version, &err);
			}
		}
	}
	/* The network descriptor changed between measuring and validating. */
	if (ret == -ENOSPC)
		ret = -EINVAL;

out:
	kvfree(list);
	if (ret) {
		kvfree(job);
		return ret;
	}
	task->engine_priv = job;
	task->engine_bytes = struct_size(job, storage, DIV_ROUND_UP(bytes, sizeof(u64)));
	return 0;
}

static void nvdla_dla_task_free(struct nvdla_device *ndev, struct nvdla_task *task)
{
	kvfree(task->engine_priv);
	task->engine_priv = NULL;
}

/* ---- execution ------------------------------------------------------------ */

/*
 * After a run-time error: the engine forgets the task and the device is
 * reset (the bus's reset may sleep: outside the lock). The job fails with
 * -EIO, the interface's "the hardware reported an error".
 */
static int nvdla_dla_fail(struct nvdla_device *ndev, const char *when,
			  const struct nvdla_dla_error *err, int ret)
{
	drm_err_ratelimited(&ndev->drm, "job failed %s: %s (%s, %d); resetting the engine\n",
			    when, err->message, nvdla_dla_code_name(err->code), ret);
	nvdla_device_reset(ndev);
	return -EIO;
}

static int nvdla_dla_run(struct nvdla_device *ndev, struct nvdla_task *task)
{
	struct nvdla_dla *dla = ndev->engine_priv;
	struct nvdla_dla_job *job = task->engine_priv;
	struct nvdla_dla_error err;
	unsigned long flags;
	bool done = false;
	int ret;

	flags = nvdla_dla_lock(dla);
	ret = nvdla_dla_engine_start(dla->engine, job->task, &err);
	/* A task can complete while it starts (BDMA operations without transfers). */
	if (!ret)
		ret = nvdla_dla_engine_process(dla->engine, &done, &err);
	if (ret)
		nvdla_dla_engine_reset(dla->engine);
	nvdla_dla_unlock(dla, flags);

	if (ret)
		return nvdla_dla_fail(ndev, "to start", &err, ret);
	if (done)
		nvdla_job_done(ndev, 0);
	return 0;
}

/* Hard IRQ: latch and clear the interrupt status; the thread does the rest. */
static irqreturn_t nvdla_dla_irq(struct nvdla_device *ndev)
{
	struct nvdla_dla *dla = ndev->engine_priv;
	unsigned long flags;
	bool pending;

	flags = nvdla_dla_lock(dla);
	pending = nvdla_dla_engine_isr(dla->engine);
	nvdla_dla_unlock(dla, flags);
	return pending ? IRQ_WAKE_THREAD : IRQ_NONE;
}

static irqreturn_t nvdla_dla_irq_thread(struct nvdla_device *ndev)
{
	struct nvdla_dla *dla = ndev->engine_priv;
	struct nvdla_dla_error err;
	unsigned long flags;
	bool done = false;
	int ret;

	flags = nvdla_dla_lock(dla);
	ret = nvdla_dla_engine_process(dla->engine, &done, &err);
	if (ret)
		nvdla_dla_engine_reset(dla->engine);
	nvdla_dla_unlock(dla, flags);

	if (ret)
		nvdla_job_done(ndev, nvdla_dla_fail(ndev, "on the hardware", &err, ret));
	else if (done)
		nvdla_job_done(ndev, 0);
	return IRQ_HANDLED;
}

/* After a timeout (the IRQ is disabled): forget the task; the driver resets the device. */
static void nvdla_dla_reset(struct nvdla_device *ndev)
{
	struct nvdla_dla *dla = ndev->engine_priv;
	unsigned long flags;

	flags = nvdla_dla_lock(dla);
	nvdla_dla_engine_reset(dla->engine);
	nvdla_dla_unlock(dla, flags);
}

/* ---- per device ----------------------------------------------------------- */

static int nvdla_dla_init(struct nvdla_device *ndev)
{
	size_t bytes = nvdla_dla_engine_size();
	struct nvdla_dla_error err;
	struct nvdla_dla *dla;

	dla = kzalloc(struct_size(dla, storage, DIV_ROUND_UP(bytes, sizeof(u64))), GFP_KERNEL);
	if (!dla)
		return -ENOMEM;
	spin_lock_init(&dla->lock);
	mutex_init(&dla->mutex);
	dla->sleeps = ndev->bus->sleeps;
	/* Touches no register: the device may be powered down. */
	dla->engine = nvdla_dla_engine_init(dla->storage, bytes, ndev->config,
					    &nvdla_dla_engine_ops, ndev, &err);
	if (!dla->engine) {
		drm_err(&ndev->drm, "DLA engine: %s\n", err.message);
		kfree(dla);
		return -EINVAL;
	}
	ndev->engine_priv = dla;
	return 0;
}

/*
 * With the DRM device: no job runs any more (the scheduler is gone), so
 * nothing calls into the engine. A job failed by an unbind leaves the
 * engine pointing at its task, which is never used again.
 */
static void nvdla_dla_fini(struct nvdla_device *ndev)
{
	kfree(ndev->engine_priv);
	ndev->engine_priv = NULL;
}

const struct nvdla_engine_ops nvdla_engine_dla = {
	.name = "dla (validator and scheduler of kmd/engine/)",
	.id = NVDLA_ENGINE_DLA,
	.init = nvdla_dla_init,
	.fini = nvdla_dla_fini,
	.validate = nvdla_dla_validate,
	.run = nvdla_dla_run,
	.reset = nvdla_dla_reset,
	.irq = nvdla_dla_irq,
	.irq_thread = nvdla_dla_irq_thread,
	.task_free = nvdla_dla_task_free,
};
