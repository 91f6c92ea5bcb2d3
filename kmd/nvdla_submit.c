// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The submit ioctls: the original SUBMIT (entries are dma-buf fds; returns
 * when the tasks are done), JOB_SUBMIT (GEM handles, syncobjs, job ids) and
 * WAIT. Every job's arguments are checked, then the engine validates it,
 * then it is queued (nvdla_job.c).
 */
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/drm_utils.h>
#include <linux/dma-fence.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <uapi/drm/nvdla_drm.h>

#include "nvdla_drv.h"
#include "nvdla_gem.h"
#include "nvdla_job.h"

#define NVDLA_MAX_IN_SYNCOBJS 64
#define NVDLA_MAX_STRUCT_SIZE PAGE_SIZE

/* ---- the original SUBMIT ------------------------------------------------ */

/* One task of the original interface as a job: entries are dma-buf fds + offsets. */
static int nvdla_legacy_job(struct nvdla_device *ndev, const struct nvdla_ioctl_submit_task *task,
			    struct nvdla_job **out)
{
	struct nvdla_mem_handle __user *uaddr = u64_to_user_ptr(task->address_list);
	struct nvdla_mem_handle entry;
	struct nvdla_job *job;
	u32 i;
	int ret;

	/* task->timeout and the entries' reserved fields are not read (see the UAPI). */
	if (!task->num_addresses || task->num_addresses > NVDLA_MAX_ADDRESSES)
		return -EINVAL;

	job = nvdla_job_alloc(ndev, task->num_addresses);
	if (!job)
		return -ENOMEM;

	for (i = 0; i < task->num_addresses; i++) {
		struct nvdla_bo *bo;

		if (copy_from_user(&entry, &uaddr[i], sizeof(entry))) {
			ret = -EFAULT;
			goto fail;
		}
		bo = nvdla_bo_from_dmabuf_fd(ndev, (int)entry.handle);
		if (IS_ERR(bo)) {
			ret = PTR_ERR(bo);
			drm_dbg(&ndev->drm, "address %u: fd %d is not a buffer of this device\n", i,
				(int)entry.handle);
			goto fail;
		}
		ret = nvdla_job_set_address(job, i, bo, entry.offset);
		if (ret)
			goto fail;
	}

	ret = nvdla_job_validate(job);
	if (ret)
		goto fail;
	*out = job;
	return 0;

fail:
	nvdla_job_free(job);
	return ret;
}

int nvdla_ioctl_submit_legacy(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct nvdla_device *ndev = to_nvdla_device(drm);
	struct nvdla_file *nfile = file->driver_priv;
	struct nvdla_submit_args *args = data;
	struct nvdla_ioctl_submit_task tasks[NVDLA_MAX_LEGACY_TASKS];
	struct dma_fence *finished[NVDLA_MAX_LEGACY_TASKS];
	struct nvdla_job *jobs[NVDLA_MAX_LEGACY_TASKS] = { };
	u32 n = args->num_tasks, queued, i, id;
	int ret, status = 0;

	ret = nvdla_device_check_wedged(ndev);
	if (ret)
		return ret;
	/* args->version is not read: the original driver ignored it. */
	if (!n || n > NVDLA_MAX_LEGACY_TASKS || (args->flags & ~NVDLA_SUBMIT_FLAGS_ATOMIC))
		return -EINVAL;
	if (copy_from_user(tasks, u64_to_user_ptr(args->tasks), n * sizeof(tasks[0])))
		return -EFAULT;

	for (i = 0; i < n; i++) {
		ret = nvdla_legacy_job(ndev, &tasks[i], &jobs[i]);
		if (ret)
			goto free;
	}

	for (queued = 0; queued < n; queued++) {
		struct dma_fence *fence = nvdla_job_queue(nfile, jobs[queued], &id);

		if (IS_ERR(fence)) {
			ret = PTR_ERR(fence);
			break;
		}
		jobs[queued] = NULL; /* the scheduler's now */
		finished[queued] = fence;
	}

	/* The original interface returns when the tasks are done. */
	for (i = 0; i < queued; i++) {
		long r = dma_fence_wait(finished[i], true);

		if (r < 0 && !ret)
			ret = -EINTR; /* not restartable: the tasks are queued */
		if (!r && finished[i]->error < 0 && !status)
			status = finished[i]->error;
		dma_fence_put(finished[i]);
	}
	if (!ret)
		ret = status;

free:
	for (i = 0; i < n; i++)
		if (jobs[i])
			nvdla_job_free(jobs[i]);
	return ret;
}

/* ---- JOB_SUBMIT and WAIT ------------------------------------------------ */

static int nvdla_submit_job(struct drm_file *file, struct nvdla_device *ndev,
			    const struct drm_nvdla_job *args, struct nvdla_job **out)
{
	struct nvdla_job *job;
	u32 i;
	int ret;

	if (args->flags || args->pad)
		return -EINVAL;
	if (!args->address_count || args->address_struct_size < sizeof(struct drm_nvdla_address) ||
	    args->address_struct_size > NVDLA_MAX_STRUCT_SIZE)
		return -EINVAL;
	if (args->address_count > NVDLA_MAX_ADDRESSES ||
	    args->in_syncobj_count > NVDLA_MAX_IN_SYNCOBJS)
		return -E2BIG;

	job = nvdla_job_alloc(ndev, args->address_count);
	if (!job)
		return -ENOMEM;
	job->task.dla_version = args->dla_version;

	for (i = 0; i < args->address_count; i++) {
		void __user *uaddr = u64_to_user_ptr(args->addresses) +
				     (u64)i * args->address_struct_size;
		struct drm_nvdla_address entry;
		struct drm_gem_object *obj;

		ret = copy_struct_from_user(&entry, sizeof(entry), uaddr,
					    args->address_struct_size);
		if (ret)
			goto fail;
		if (entry.flags) {
			ret = -EINVAL;
			goto fail;
		}
		obj = drm_gem_object_lookup(file, entry.handle);
		if (!obj) {
			drm_dbg(&ndev->drm, "address %u: no GEM handle %u\n", i, entry.handle);
			ret = -ENOENT;
			goto fail;
		}
		ret = nvdla_job_set_address(job, i, to_nvdla_bo(obj), entry.offset);
		if (ret)
			goto fail;
	}

	if (args->in_syncobj_count) {
		u32 __user *uhandles = u64_to_user_ptr(args->in_syncobjs);

		job->in_syncobjs = kcalloc(args->in_syncobj_count, sizeof(*job->in_syncobjs),
					   GFP_KERNEL);
		if (!job->in_syncobjs) {
			ret = -ENOMEM;
			goto fail;
		}
		for (i = 0; i < args->in_syncobj_count; i++) {
			u32 handle;

			if (get_user(handle, &uhandles[i])) {
				ret = -EFAULT;
				goto fail;
			}
			job->in_syncobjs[i] = drm_syncobj_find(file, handle);
			if (!job->in_syncobjs[i]) {
				ret = -ENOENT;
				goto fail;
			}
			job->in_syncobj_count = i + 1;
		}
	}
	if (args->out_syncobj) {
		job->out_syncobj = drm_syncobj_find(file, args->out_syncobj);
		if (!job->out_syncobj) {
			ret = -ENOENT;
			goto fail;
		}
	}

	ret = nvdla_job_validate(job);
	if (ret)
		goto fail;
	*out = job;
	return 0;

fail:
	nvdla_job_free(job);
	return ret;
}

int nvdla_ioctl_job_submit(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct nvdla_device *ndev = to_nvdla_device(drm);
	struct nvdla_file *nfile = file->driver_priv;
	struct drm_nvdla_submit *args = data;
	void __user *ujobs = u64_to_user_ptr(args->jobs);
	struct nvdla_job **jobs;
	u32 i, queued;
	int ret;

	if (args->flags || args->pad || !args->job_count ||
	    args->job_struct_size < sizeof(struct drm_nvdla_job) ||
	    args->job_struct_size > NVDLA_MAX_STRUCT_SIZE)
		return -EINVAL;
	if (args->job_count > NVDLA_MAX_JOBS)
		return -E2BIG;
	ret = nvdla_device_check_wedged(ndev);
	if (ret)
		return ret;

	jobs = kcalloc(args->job_count, sizeof(*jobs), GFP_KERNEL);
	if (!jobs)
		return -ENOMEM;

	/* Every job's arguments are checked before any is queued. */
	for (i = 0; i < args->job_count; i++) {
		void __user *ujob = ujobs + (u64)i * args->job_struct_size;
		u32 __user *uid = ujob + offsetof(struct drm_nvdla_job, job_id);
		struct drm_nvdla_job job;

		ret = copy_struct_from_user(&job, sizeof(job), ujob, args->job_struct_size);
		if (!ret && put_user(0u, uid))
			ret = -EFAULT;
		if (!ret)
			ret = nvdla_submit_job(file, ndev, &job, &jobs[i]);
		if (ret)
			goto free;
	}

	for (queued = 0; queued < args->job_count; queued++) {
		struct nvdla_job *job = jobs[queued];
		u32 __user *uid = ujobs + (u64)queued * args->job_struct_size +
				  offsetof(struct drm_nvdla_job, job_id);
		struct drm_syncobj *out_syncobj = job->out_syncobj;
		struct dma_fence *finished;
		u32 id;

		/* The job may be freed as soon as it is queued: keep what is needed after. */
		job->out_syncobj = NULL;
		finished = nvdla_job_queue(nfile, job, &id);
		if (IS_ERR(finished)) {
			job->out_syncobj = out_syncobj;
			ret = PTR_ERR(finished);
			break;
		}
		jobs[queued] = NULL; /* the scheduler's now */
		if (out_syncobj) {
			drm_syncobj_replace_fence(out_syncobj, finished);
			drm_syncobj_put(out_syncobj);
		}
		dma_fence_put(finished);
		if (put_user(id, uid))
			ret = -EFAULT;
	}

free:
	for (i = 0; i < args->job_count; i++)
		if (jobs[i])
			nvdla_job_free(jobs[i]);
	kfree(jobs);
	return ret;
}

int nvdla_ioctl_wait(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct nvdla_file *nfile = file->driver_priv;
	struct drm_nvdla_wait *args = data;
	struct dma_fence *fence;
	long timeout, r;

	if (args->flags || args->pad)
		return -EINVAL;

	mutex_lock(&nfile->submit_lock);
	fence = dma_fence_get(args->job_id ? xa_load(&nfile->jobs, args->job_id) : NULL);
	mutex_unlock(&nfile->submit_lock);
	if (!fence)
		return -ENOENT;

	timeout = drm_timeout_abs_to_jiffies(args->timeout_ns);
	r = dma_fence_wait_timeout(fence, true, timeout);
	if (r > 0 || (r == 0 && dma_fence_is_signaled(fence))) {
		args->status = fence->error < 0 ? fence->error : 0;
		r = 0;
	} else if (r == 0) {
		r = -ETIMEDOUT;
	}
	dma_fence_put(fence);
	return r;
}
