/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Jobs between the submit ioctls (nvdla_submit.c) and the scheduler
 * (nvdla_job.c): a job is allocated, filled with its address list, validated
 * (arguments, then the engine) and queued; from then on the scheduler owns
 * it and frees it.
 */
#ifndef NVDLA_JOB_H
#define NVDLA_JOB_H

#include <drm/gpu_scheduler.h>

#include "nvdla_engine.h"

struct drm_syncobj;
struct nvdla_bo;
struct nvdla_device;
struct nvdla_file;

struct nvdla_job {
	struct drm_sched_job base;
	struct nvdla_device *ndev;
	struct nvdla_task task;		/* addresses hold buffer references */
	struct drm_gem_object **bos;	/* the distinct buffers, for reservations */
	unsigned int bo_count;
	struct drm_syncobj **in_syncobjs;
	unsigned int in_syncobj_count;
	struct drm_syncobj *out_syncobj;
	struct dma_fence **deadlines;	/* foreign dependencies' deadline fences */
	unsigned int deadline_count;
	struct dma_fence *hw_fence;	/* allocated at submit, initialised by run_job */
	bool hw_fence_live;
	bool powered;			/* holds a runtime-PM reference (from arming) */
	bool sched_inited;		/* drm_sched_job_init() done, not yet pushed */
	bool validated;			/* task->engine_priv is the engine's */
	bool keep_bos;			/* ended on a wedged device: buffers stay */
	u32 id;
	struct nvdla_file *nfile;	/* once queued: its file, with a reference */
	size_t queued_bytes;		/* counted in nfile->queued_bytes */
};

static inline struct nvdla_job *to_nvdla_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct nvdla_job, base);
}

struct nvdla_job *nvdla_job_alloc(struct nvdla_device *ndev, u32 num_addresses);
void nvdla_job_free(struct nvdla_job *job);
int nvdla_job_set_address(struct nvdla_job *job, u32 i, struct nvdla_bo *bo, u64 offset);
int nvdla_job_validate(struct nvdla_job *job);
struct dma_fence *nvdla_job_queue(struct nvdla_file *nfile, struct nvdla_job *job, u32 *id);

#endif /* NVDLA_JOB_H */
