/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Kernel API differences between Linux 6.1 and newer kernels, decided by
 * the compile-time probes of conftest.sh (nvdla_conftest.h), never by
 * version numbers: distribution kernels backport API changes.
 */
#ifndef NVDLA_COMPAT_H
#define NVDLA_COMPAT_H

#include <drm/gpu_scheduler.h>
#include <linux/mm.h>

#include "nvdla_conftest.h"

static inline int nvdla_compat_sched_init(struct drm_gpu_scheduler *sched,
					  const struct drm_sched_backend_ops *ops,
					  long timeout, const char *name, struct device *dev)
{
#if defined(HAVE_DRM_SCHED_INIT_ARGS)
	const struct drm_sched_init_args args = {
		.ops = ops,
#if defined(HAVE_DRM_SCHED_INIT_ARGS_NUM_RQS)
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
#endif
		.credit_limit = 1,
		.hang_limit = 0,
		.timeout = timeout,
		.name = name,
		.dev = dev,
	};

	return drm_sched_init(sched, &args);
#elif defined(HAVE_DRM_SCHED_INIT_SUBMIT_WQ)
	return drm_sched_init(sched, ops, NULL, DRM_SCHED_PRIORITY_COUNT, 1, 0, timeout, NULL, NULL,
			      name, dev);
#else
	return drm_sched_init(sched, ops, 1, 0, timeout, NULL, NULL, name, dev);
#endif
}

static inline int nvdla_compat_sched_job_init(struct drm_sched_job *job,
					      struct drm_sched_entity *entity, void *owner)
{
#if defined(HAVE_DRM_SCHED_JOB_INIT_CLIENT_ID)
	return drm_sched_job_init(job, entity, 1, owner, 0);
#elif defined(HAVE_DRM_SCHED_JOB_INIT_CREDITS)
	return drm_sched_job_init(job, entity, 1, owner);
#else
	return drm_sched_job_init(job, entity, owner);
#endif
}

/* Restart after a reset; jobs left without a hardware fence fail with @error. */
static inline void nvdla_compat_sched_start(struct drm_gpu_scheduler *sched, int error)
{
#if defined(HAVE_DRM_SCHED_START_ERRNO)
	drm_sched_start(sched, error);
#else
	drm_sched_start(sched, true);
#endif
}

/* Re-attaches pending jobs to their hardware fences (run_job is called again). */
static inline void nvdla_compat_sched_resubmit(struct drm_gpu_scheduler *sched)
{
#if defined(HAVE_DRM_SCHED_RESUBMIT_JOBS)
	drm_sched_resubmit_jobs(sched);
#endif
}

#if defined(HAVE_DRM_GPU_SCHED_STAT_RESET)
#define NVDLA_SCHED_STAT_RESET DRM_GPU_SCHED_STAT_RESET
#else
#define NVDLA_SCHED_STAT_RESET DRM_GPU_SCHED_STAT_NOMINAL
#endif

static inline void nvdla_compat_vm_flags_set(struct vm_area_struct *vma, vm_flags_t set,
					     vm_flags_t clear)
{
#if defined(HAVE_VM_FLAGS_SET)
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

#if defined(HAVE_MODULE_IMPORT_NS_IDENTIFIER)
#define NVDLA_IMPORT_NS_DMA_BUF() MODULE_IMPORT_NS(DMA_BUF)
#else
#define NVDLA_IMPORT_NS_DMA_BUF() MODULE_IMPORT_NS("DMA_BUF")
#endif

#endif /* NVDLA_COMPAT_H */
