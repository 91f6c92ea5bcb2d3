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

/*
 * Stops the scheduler from running further jobs while the timed-out one is
 * still being reset and failed (drm_sched_stop() follows and stops it too).
 * Before 6.8 there is no such call: a job submitted in that window may start
 * and is then stopped with ECANCELED.
 */
static inline void nvdla_compat_sched_pause_submit(struct drm_gpu_scheduler *sched)
{
#if defined(HAVE_DRM_SCHED_WQUEUE_STOP)
	drm_sched_wqueue_stop(sched);
#endif
}

/*
 * Restarts the scheduler after a reset: every pending job without a hardware
 * fence (drm_sched_stop() detached them) ends with @error (ECANCELED where
 * drm_sched_start() takes no errno; before, with the error of its finished
 * fence, see nvdla_compat_sched_forward_error()).
 */
static inline void nvdla_compat_sched_start(struct drm_gpu_scheduler *sched, int error)
{
#if defined(HAVE_DRM_SCHED_START_ERRNO)
	drm_sched_start(sched, error);
#elif defined(HAVE_DRM_SCHED_START_SCHED_ONLY)
	drm_sched_start(sched);
#else
	drm_sched_start(sched, true);
#endif
}

/*
 * A job's error is its hardware fence's: from 6.4 the scheduler passes it on
 * to the finished fence, which it owns. Before, drivers set it themselves,
 * before the hardware fence signals.
 */
static inline void nvdla_compat_sched_forward_error(struct drm_sched_job *job, int error)
{
#if defined(HAVE_DRM_SCHED_FENCE_FINISHED_NO_ERROR)
	dma_fence_set_error(&job->s_fence->finished, error);
#endif
}

static inline bool nvdla_compat_vma_is_cow(struct vm_area_struct *vma)
{
#if defined(HAVE_VMA_IS_COW_MAPPING)
	return vma_is_cow_mapping(vma);
#else
	return is_cow_mapping(vma->vm_flags);
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

#if defined(CONFIG_PCI)
#include <linux/pci.h>

/*
 * A BAR region released when the driver unbinds. Before pcim_request_region()
 * (6.12) a region requested on a pcim-enabled device was released with it;
 * newer kernels no longer do that for pci_request_region().
 */
static inline int nvdla_compat_pcim_request_region(struct pci_dev *pdev, int bar, const char *name)
{
#if defined(HAVE_PCIM_REQUEST_REGION)
	return pcim_request_region(pdev, bar, name);
#else
	return pci_request_region(pdev, bar, name);
#endif
}
#endif

#if defined(HAVE_MODULE_IMPORT_NS_IDENTIFIER)
#define NVDLA_IMPORT_NS_DMA_BUF() MODULE_IMPORT_NS(DMA_BUF)
#else
#define NVDLA_IMPORT_NS_DMA_BUF() MODULE_IMPORT_NS("DMA_BUF")
#endif

#endif /* NVDLA_COMPAT_H */
