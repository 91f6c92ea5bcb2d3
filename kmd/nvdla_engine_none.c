// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * TEMPORARY: the engine that is used until kmd/engine/ provides the real
 * one. It has no validator and cannot program the hardware, so it rejects
 * every job with -ENODEV before it is queued, and says so in the kernel
 * log. It never pretends to execute anything.
 */
#include <drm/drm_print.h>

#include <uapi/drm/nvdla_drm.h>

#include "nvdla_drv.h"

static int nvdla_engine_none_validate(struct nvdla_device *ndev, struct nvdla_task *task)
{
	drm_err_ratelimited(&ndev->drm,
			    "no engine yet: job rejected (this driver cannot run NVDLA tasks yet)\n");
	return -ENODEV;
}

static int nvdla_engine_none_run(struct nvdla_device *ndev, struct nvdla_task *task)
{
	/* Unreachable: validate() rejected the job. */
	return -ENODEV;
}

const struct nvdla_engine_ops nvdla_engine_none = {
	.name = "none (no engine yet: every job is rejected)",
	.id = NVDLA_ENGINE_NONE,
	.validate = nvdla_engine_none_validate,
	.run = nvdla_engine_none_run,
};
