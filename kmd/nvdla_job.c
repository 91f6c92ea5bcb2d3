// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Jobs through drm_sched (one scheduler per instance, one entity per open
 * file); the ioctls that make them are in nvdla_submit.c.
 *
 * A submit resolves each job's address list into buffers, checks the
 * arguments, lets the engine validate the task, and only then queues it:
 * in-fences (syncobjs) and the buffers' reservation objects (implicit sync)
 * become dependencies, and the job's finished fence goes back into the
 * reservations, the out-syncobj and the file's table of job ids. The
 * scheduler runs one job at a time: run_job hands it to the engine, whose
 * IRQ path calls nvdla_job_done(). A job that runs too long is failed with
 * -ETIMEDOUT after an engine reset, and the next one runs.
 */
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/pm_runtime.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "nvdla_compat.h"
#include "nvdla_drv.h"
#include "nvdla_gem.h"
#include "nvdla_job.h"

static const char *nvdla_fence_driver_name(struct dma_fence *fence)
{
	return "nvdla";
}

static const char *nvdla_fence_timeline_name(struct dma_fence *fence)
{
	return "nvdla-engine";
}

static const struct dma_fence_ops nvdla_fence_ops = {
	.get_driver_name = nvdla_fence_driver_name,
	.get_timeline_name = nvdla_fence_timeline_name,
};

/* ---- job objects --------------------------------------------------------- */

struct nvdla_job *nvdla_job_alloc(struct nvdla_device *ndev, u32 num_addresses)
{
	struct nvdla_job *job;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return NULL;
	job->ndev = ndev;
	atomic_inc(&ndev->jobs_alive);

	job->task.addresses = kvcalloc(num_addresses, sizeof(*job->task.addresses), GFP_KERNEL);
	job->hw_fence = kzalloc(sizeof(*job->hw_fence), GFP_KERNEL);
	if (!job->task.addresses || !job->hw_fence) {
		kvfree(job->task.addresses);
		kfree(job->hw_fence);
		kfree(job);
		atomic_dec(&ndev->jobs_alive);
		return NULL;
	}
	return job;
}

void nvdla_job_free(struct nvdla_job *job)
{
	struct nvdla_device *ndev = job->ndev;
	unsigned int i;

	if (job->sched_inited)
		drm_sched_job_cleanup(&job->base);
	if (job->validated && ndev->engine->task_free)
		ndev->engine->task_free(ndev, &job->task);

	for (i = 0; i < job->task.num_addresses; i++)
		nvdla_bo_put(job->task.addresses[i].bo);
	kvfree(job->task.addresses);
	kvfree(job->bos);

	for (i = 0; i < job->in_syncobj_count; i++)
		drm_syncobj_put(job->in_syncobjs[i]);
	kfree(job->in_syncobjs);
	if (job->out_syncobj)
		drm_syncobj_put(job->out_syncobj);

	if (job->hw_fence_live)
		dma_fence_put(job->hw_fence);
	else
		kfree(job->hw_fence);
	if (job->powered) {
		pm_runtime_mark_last_busy(ndev->dev);
		pm_runtime_put_autosuspend(ndev->dev);
	}
	kfree(job);

	if (atomic_dec_and_test(&ndev->jobs_alive))
		wake_up_all(&ndev->jobs_idle);
}

/*
 * Adds address-list entry @i. The job holds the reference to @bo from now
 * on; the entry must lie inside the buffer and be atom-aligned.
 */
int nvdla_job_set_address(struct nvdla_job *job, u32 i, struct nvdla_bo *bo, u64 offset)
{
	struct nvdla_device *ndev = job->ndev;

	job->task.addresses[i].bo = bo;
	job->task.addresses[i].offset = offset;
	job->task.num_addresses = i + 1;

	if (offset >= bo->base.size) {
		drm_dbg(&ndev->drm, "address %u: offset %llu is past the %zu-byte buffer\n", i,
			offset, bo->base.size);
		return -EINVAL;
	}
	if (!IS_ALIGNED(bo->dma + offset, ndev->config->atom_bytes)) {
		drm_dbg(&ndev->drm, "address %u: %pad + %llu is not %u-byte aligned\n", i, &bo->dma,
			offset, ndev->config->atom_bytes);
		return -EINVAL;
	}
	return 0;
}

static int nvdla_ptr_cmp(const void *a, const void *b)
{
	const uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* Collects the distinct buffers of the address list. */
static int nvdla_job_collect_bos(struct nvdla_job *job)
{
	u32 i, n = job->task.num_addresses, count = 0;

	job->bos = kvmalloc_array(n, sizeof(*job->bos), GFP_KERNEL);
	if (!job->bos)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		job->bos[i] = &job->task.addresses[i].bo->base;
	sort(job->bos, n, sizeof(*job->bos), nvdla_ptr_cmp, NULL);
	for (i = 0; i < n; i++)
		if (!count || job->bos[count - 1] != job->bos[i])
			job->bos[count++] = job->bos[i];
	job->bo_count = count;
	return 0;
}

/* The checks every job passes before it is queued, ending with the engine's. */
int nvdla_job_validate(struct nvdla_job *job)
{
	struct nvdla_device *ndev = job->ndev;
	int ret;

	ret = nvdla_job_collect_bos(job);
	if (ret)
		return ret;

	ret = ndev->engine->validate(ndev, &job->task);
	if (ret)
		return ret;
	job->validated = true;
	return 0;
}

/* ---- the file's job ids ------------------------------------------------- */

static u32 nvdla_next_id(u32 id)
{
	return id == U32_MAX ? 1 : id + 1;
}

/*
 * Reserves the next job id, forgetting the oldest finished jobs beyond
 * NVDLA_MAX_FILE_JOBS (a file's jobs finish in order). Under submit_lock.
 */
static int nvdla_file_reserve_id(struct nvdla_file *nfile, u32 *id)
{
	while (nfile->job_count >= NVDLA_MAX_FILE_JOBS) {
		struct dma_fence *oldest = xa_load(&nfile->jobs, nfile->oldest_job_id);

		if (oldest && !dma_fence_is_signaled(oldest))
			return -EBUSY;
		xa_erase(&nfile->jobs, nfile->oldest_job_id);
		dma_fence_put(oldest);
		nfile->oldest_job_id = nvdla_next_id(nfile->oldest_job_id);
		nfile->job_count--;
	}
	*id = nfile->next_job_id;
	return xa_reserve(&nfile->jobs, *id, GFP_KERNEL);
}

/* ---- queueing ------------------------------------------------------------ */

/*
 * Queues a validated job. On success the scheduler owns the job (which may
 * be freed at any moment), its id is stored in @id and its finished fence
 * returned with a reference; on failure the caller still owns the job.
 */
struct dma_fence *nvdla_job_queue(struct nvdla_file *nfile, struct nvdla_job *job, u32 *id)
{
	struct ww_acquire_ctx ctx;
	struct dma_fence *finished;
	unsigned int i;
	int ret;

	ret = nvdla_compat_sched_job_init(&job->base, &nfile->entity, nfile);
	if (ret)
		return ERR_PTR(ret);
	job->sched_inited = true;

	for (i = 0; i < job->in_syncobj_count; i++) {
		struct dma_fence *fence = drm_syncobj_fence_get(job->in_syncobjs[i]);

		if (!fence) {
			/* Nothing was ever submitted to signal it: the job could never run. */
			drm_dbg(&nfile->ndev->drm, "in-syncobj %u has no fence\n", i);
			return ERR_PTR(-EINVAL);
		}
		ret = drm_sched_job_add_dependency(&job->base, fence);
		if (ret)
			return ERR_PTR(ret);
	}

	ret = drm_gem_lock_reservations(job->bos, job->bo_count, &ctx);
	if (ret)
		return ERR_PTR(ret);

	for (i = 0; i < job->bo_count; i++) {
		ret = dma_resv_reserve_fences(job->bos[i]->resv, 1);
		if (ret)
			goto unlock;
		/* Until the validator reports what is read only, every buffer is written. */
		ret = drm_sched_job_add_implicit_dependencies(&job->base, job->bos[i], true);
		if (ret)
			goto unlock;
	}

	/*
	 * Powered from before arming until the job is freed: run_job is on the
	 * fence-signalling path, where resuming a device (which may sleep and
	 * allocate) is not allowed.
	 */
	ret = pm_runtime_resume_and_get(nfile->ndev->dev);
	if (ret < 0) {
		drm_err_ratelimited(&nfile->ndev->drm, "cannot power the device up (%d)\n", ret);
		goto unlock;
	}
	job->powered = true;

	mutex_lock(&nfile->submit_lock);
	ret = nvdla_file_reserve_id(nfile, &job->id);
	if (ret) {
		mutex_unlock(&nfile->submit_lock);
		goto unlock;
	}

	drm_sched_job_arm(&job->base);
	finished = dma_fence_get(&job->base.s_fence->finished);
	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, finished, DMA_RESV_USAGE_WRITE);
	drm_gem_unlock_reservations(job->bos, job->bo_count, &ctx);

	*id = job->id;
	xa_store(&nfile->jobs, job->id, dma_fence_get(finished), GFP_KERNEL);
	nfile->next_job_id = nvdla_next_id(job->id);
	nfile->job_count++;

	job->sched_inited = false; /* from here on the scheduler cleans up */
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&nfile->submit_lock);
	return finished;

unlock:
	drm_gem_unlock_reservations(job->bos, job->bo_count, &ctx);
	return ERR_PTR(ret);
}

/* ---- scheduler backend -------------------------------------------------- */

/*
 * Ends the active job with @status if it is still @expected (NULL: whatever
 * job is active). The status is the hardware fence's error; the scheduler
 * passes it on to the finished fence. Any context.
 */
static bool nvdla_job_finish(struct nvdla_device *ndev, struct nvdla_job *expected, int status)
{
	struct dma_fence *fence;
	struct nvdla_job *job;
	unsigned long flags;

	spin_lock_irqsave(&ndev->job_lock, flags);
	job = ndev->active_job;
	if (!job || (expected && job != expected)) {
		spin_unlock_irqrestore(&ndev->job_lock, flags);
		return false;
	}
	WRITE_ONCE(ndev->active_job, NULL);
	if (status) {
		dma_fence_set_error(job->hw_fence, status);
		nvdla_compat_sched_forward_error(&job->base, status);
	}
	/* The job can be freed once its fence signals: only the fence is used below. */
	fence = dma_fence_get(job->hw_fence);
	spin_unlock_irqrestore(&ndev->job_lock, flags);

	dma_fence_signal(fence);
	dma_fence_put(fence);
	return true;
}

void nvdla_job_done(struct nvdla_device *ndev, int status)
{
	/* What the engine wrote reaches the hardware before anyone sees the job end. */
	nvdla_reg_flush(ndev);
	nvdla_job_finish(ndev, NULL, status);
}

static struct dma_fence *nvdla_job_run(struct drm_sched_job *sched_job)
{
	struct nvdla_job *job = to_nvdla_job(sched_job);
	struct nvdla_device *ndev = job->ndev;
	struct dma_fence *fence = job->hw_fence;
	unsigned long flags;
	int ret, idx;

	/* Cancelled while queued (its file was closed, a dependency failed). */
	if (unlikely(sched_job->s_fence->finished.error))
		return NULL;

	dma_fence_init(fence, &nvdla_fence_ops, &ndev->fence_lock, ndev->fence_context,
		       ++ndev->fence_seqno);
	job->hw_fence_live = true;

	/* Powered since it was queued (nvdla_job_queue): nothing here may sleep on the device. */
	if (!drm_dev_enter(&ndev->drm, &idx)) {
		ret = -ENODEV;
		goto fail;
	}

	spin_lock_irqsave(&ndev->job_lock, flags);
	WRITE_ONCE(ndev->active_job, job);
	spin_unlock_irqrestore(&ndev->job_lock, flags);

	ret = ndev->engine->run(ndev, &job->task);
	nvdla_reg_flush(ndev);
	drm_dev_exit(idx);
	if (ret)
		nvdla_job_finish(ndev, job, ret);
	return dma_fence_get(fence);

fail:
	dma_fence_set_error(fence, ret);
	nvdla_compat_sched_forward_error(sched_job, ret);
	dma_fence_signal(fence);
	return dma_fence_get(fence);
}

/* Stops the hardware: the engine, then the device (reset line, model). */
static void nvdla_job_reset_hw(struct nvdla_device *ndev)
{
	int idx;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return;
	if (ndev->engine->reset)
		ndev->engine->reset(ndev);
	nvdla_device_reset(ndev);
	drm_dev_exit(idx);
}

static bool nvdla_job_is_active(struct nvdla_device *ndev, struct nvdla_job *job)
{
	bool active;

	spin_lock_irq(&ndev->job_lock);
	active = job ? ndev->active_job == job : !!ndev->active_job;
	spin_unlock_irq(&ndev->job_lock);
	return active;
}

/*
 * A job ran longer than the timeout. The hardware is reset and the job ends
 * through its hardware fence with ETIMEDOUT, as any job ends; then, as
 * panthor, v3d and rocket recover, the scheduler is stopped and started
 * again (no job is ever run twice). A job that started after this one in
 * the meantime was detached from its hardware fence by drm_sched_stop():
 * the reset stops it as well and the scheduler ends it with ECANCELED, so
 * no job still on the hardware is taken for done. The scheduler keeps
 * @sched_job off its pending list until drm_sched_stop(): it cannot be
 * freed before.
 */
static enum drm_gpu_sched_stat nvdla_job_timedout(struct drm_sched_job *sched_job)
{
	struct nvdla_job *job = to_nvdla_job(sched_job);
	struct nvdla_device *ndev = job->ndev;

	if (ndev->irq > 0)
		disable_irq(ndev->irq);
	if (nvdla_job_is_active(ndev, job)) {
		drm_err(&ndev->drm, "job %u ran longer than %u ms: resetting the engine, the job fails with ETIMEDOUT\n",
			job->id, ndev->job_timeout_ms);
		nvdla_job_reset_hw(ndev);
		nvdla_job_finish(ndev, job, -ETIMEDOUT);
	}
	if (ndev->irq > 0)
		enable_irq(ndev->irq);

	drm_sched_stop(&ndev->sched, sched_job);

	if (ndev->irq > 0)
		disable_irq(ndev->irq);
	if (nvdla_job_is_active(ndev, NULL)) {
		drm_err(&ndev->drm, "the job started during the timeout recovery is stopped with ECANCELED\n");
		nvdla_job_reset_hw(ndev);
		nvdla_job_finish(ndev, NULL, -ECANCELED);
	}
	if (ndev->irq > 0)
		enable_irq(ndev->irq);

	nvdla_compat_sched_start(&ndev->sched, -ECANCELED);
	return NVDLA_SCHED_STAT_RESET;
}

static void nvdla_job_free_cb(struct drm_sched_job *sched_job)
{
	struct nvdla_job *job = to_nvdla_job(sched_job);

	drm_sched_job_cleanup(sched_job);
	nvdla_job_free(job);
}

static const struct drm_sched_backend_ops nvdla_sched_ops = {
	.run_job = nvdla_job_run,
	.timedout_job = nvdla_job_timedout,
	.free_job = nvdla_job_free_cb,
};

/*
 * The device is powered only while a job is active: an interrupt without
 * one is not ours to read registers for (the clocks may be off).
 */
irqreturn_t nvdla_irq(int irq, void *arg)
{
	struct nvdla_device *ndev = arg;
	irqreturn_t ret;

	if (!ndev->engine->irq || !READ_ONCE(ndev->active_job))
		return IRQ_NONE;
	ret = ndev->engine->irq(ndev);
	nvdla_reg_flush(ndev);
	return ret;
}

irqreturn_t nvdla_irq_thread(int irq, void *arg)
{
	struct nvdla_device *ndev = arg;
	irqreturn_t ret;

	if (!ndev->engine->irq_thread)
		return IRQ_NONE;
	ret = ndev->engine->irq_thread(ndev);
	nvdla_reg_flush(ndev);
	return ret;
}

static void nvdla_sched_release(struct drm_device *drm, void *arg)
{
	struct nvdla_device *ndev = arg;

	/* Every file is closed; let the scheduler free the jobs it still holds. */
	if (!wait_event_timeout(ndev->jobs_idle, !atomic_read(&ndev->jobs_alive), 10 * HZ))
		drm_err(drm, "%d jobs still alive at release\n", atomic_read(&ndev->jobs_alive));
	drm_sched_fini(&ndev->sched);
}

int nvdla_sched_init(struct nvdla_device *ndev)
{
	int ret;

	spin_lock_init(&ndev->fence_lock);
	ndev->fence_context = dma_fence_context_alloc(1);
	ret = nvdla_compat_sched_init(&ndev->sched, &nvdla_sched_ops,
				      msecs_to_jiffies(ndev->job_timeout_ms), dev_name(ndev->dev),
				      ndev->dev);
	if (ret) {
		drm_err(&ndev->drm, "cannot create the job scheduler (%d)\n", ret);
		return ret;
	}
	ndev->sched_list[0] = &ndev->sched;
	return drmm_add_action_or_reset(&ndev->drm, nvdla_sched_release, ndev);
}

/*
 * The hardware is going away (still reachable: the bus is removing it): stop
 * it, then fail the running job, whose buffers may be freed at once; the
 * queued ones fail in run_job.
 */
void nvdla_job_unplug(struct nvdla_device *ndev)
{
	if (ndev->irq > 0)
		disable_irq(ndev->irq);
	if (nvdla_job_is_active(ndev, NULL)) {
		if (ndev->engine->reset)
			ndev->engine->reset(ndev);
		nvdla_device_reset(ndev);
	}
	if (nvdla_job_finish(ndev, NULL, -ENODEV))
		drm_info(&ndev->drm, "device removed: the running job fails with ENODEV, the hardware reset first\n");
	if (ndev->irq > 0)
		enable_irq(ndev->irq);
}

int nvdla_job_open(struct nvdla_file *nfile)
{
	struct nvdla_device *ndev = nfile->ndev;

	mutex_init(&nfile->submit_lock);
	xa_init(&nfile->jobs);
	nfile->next_job_id = 1;
	nfile->oldest_job_id = 1;
	return drm_sched_entity_init(&nfile->entity, DRM_SCHED_PRIORITY_NORMAL, ndev->sched_list,
				     1, NULL);
}

void nvdla_job_close(struct nvdla_file *nfile)
{
	struct dma_fence *fence;
	unsigned long id;

	drm_sched_entity_destroy(&nfile->entity);
	xa_for_each(&nfile->jobs, id, fence)
		dma_fence_put(fence);
	xa_destroy(&nfile->jobs);
	mutex_destroy(&nfile->submit_lock);
}
