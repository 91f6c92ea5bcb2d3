// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Test builds only (NVDLA_SELFTEST=y, module parameter selftest_engine=1):
 * an engine that lets make test-kmd exercise the scheduler, fences, syncobjs,
 * WAIT, implicit sync and the timeout path without hardware. It executes
 * nothing and never reports success: the first 32-bit word of address-list
 * entry 0 (the place of the network descriptor) selects how the job fails.
 *
 *   NVDLA_SELFTEST_FAIL  run() starts nothing; a work item completes the
 *                        job with -ENODEV, as the IRQ path would.
 *   NVDLA_SELFTEST_HANG  run() starts nothing and nothing completes the job:
 *                        the scheduler's timeout resets the engine and fails
 *                        the job with -ETIMEDOUT.
 *   anything else        rejected by validate() with -ENODEV.
 */
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <linux/workqueue.h>

#include "nvdla_drv.h"
#include "nvdla_gem.h"

#define NVDLA_SELFTEST_FAIL 0x4c494146 /* "FAIL" */
#define NVDLA_SELFTEST_HANG 0x474e4148 /* "HANG" */
#define NVDLA_ENGINE_SELFTEST 0x7e57

struct nvdla_selftest {
	struct nvdla_device *ndev;
	struct work_struct complete;
	atomic_t resets;
};

static void nvdla_selftest_complete(struct work_struct *work)
{
	struct nvdla_selftest *st = container_of(work, struct nvdla_selftest, complete);

	nvdla_job_done(st->ndev, -ENODEV);
}

static int nvdla_selftest_init(struct nvdla_device *ndev)
{
	struct nvdla_selftest *st;

	st = drmm_kzalloc(&ndev->drm, sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	st->ndev = ndev;
	INIT_WORK(&st->complete, nvdla_selftest_complete);
	ndev->engine_priv = st;
	drm_warn(&ndev->drm, "selftest engine: jobs pass through the scheduler and all fail\n");
	return 0;
}

static void nvdla_selftest_fini(struct nvdla_device *ndev)
{
	struct nvdla_selftest *st = ndev->engine_priv;

	cancel_work_sync(&st->complete);
}

static int nvdla_selftest_validate(struct nvdla_device *ndev, struct nvdla_task *task)
{
	const struct nvdla_address *desc = &task->addresses[0];
	const u8 *vaddr = nvdla_bo_vaddr(desc->bo);
	u32 command;

	if (!vaddr || desc->offset + sizeof(command) > nvdla_bo_size(desc->bo))
		return -ENODEV;
	command = READ_ONCE(*(const u32 *)(vaddr + desc->offset));
	if (command != NVDLA_SELFTEST_FAIL && command != NVDLA_SELFTEST_HANG) {
		drm_err_ratelimited(&ndev->drm, "selftest engine: no command: job rejected\n");
		return -ENODEV;
	}
	/* What was checked is kept: userspace may rewrite the buffer meanwhile. */
	task->engine_priv = (void *)(uintptr_t)command;
	return 0;
}

static int nvdla_selftest_run(struct nvdla_device *ndev, struct nvdla_task *task)
{
	struct nvdla_selftest *st = ndev->engine_priv;

	if ((uintptr_t)task->engine_priv == NVDLA_SELFTEST_FAIL)
		queue_work(system_wq, &st->complete);
	return 0;
}

static void nvdla_selftest_reset(struct nvdla_device *ndev)
{
	struct nvdla_selftest *st = ndev->engine_priv;

	drm_info(&ndev->drm, "selftest engine: reset %d\n", atomic_inc_return(&st->resets));
}

const struct nvdla_engine_ops nvdla_engine_selftest = {
	.name = "selftest (test builds only: every job fails)",
	.id = NVDLA_ENGINE_SELFTEST,
	.init = nvdla_selftest_init,
	.fini = nvdla_selftest_fini,
	.validate = nvdla_selftest_validate,
	.run = nvdla_selftest_run,
	.reset = nvdla_selftest_reset,
};
