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

#if defined(HAVE_DRM_EXEC)
#include <drm/drm_exec.h>
#endif

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

/*
 * ---- dependencies with a deadline ------------------------------------------
 *
 * A job may wait for fences of other drivers (in-syncobjs, the reservations
 * of imported buffers). One that never signals would keep the job, and the
 * memory it holds, forever: the job waits for a deadline fence instead,
 * which signals with the other fence or, after job_timeout_ms, with
 * ETIMEDOUT; run_job then fails the job with ETIMEDOUT. Fences of a DRM
 * scheduler (this driver's and others') end within their own timeouts and
 * are waited for as they are.
 */
struct nvdla_deadline {
	struct dma_fence base;
	spinlock_t lock; /* the fence's */
	struct dma_fence *fence; /* the one waited for */
	struct dma_fence_cb cb;
	struct timer_list timer;
};

static const char *nvdla_deadline_timeline_name(struct dma_fence *fence)
{
	return "nvdla-dependency-deadline";
}

static void nvdla_deadline_release(struct dma_fence *fence)
{
	struct nvdla_deadline *dl = container_of(fence, struct nvdla_deadline, base);

	dma_fence_put(dl->fence);
	dma_fence_free(fence);
}

static const struct dma_fence_ops nvdla_deadline_ops = {
	.get_driver_name = nvdla_fence_driver_name,
	.get_timeline_name = nvdla_deadline_timeline_name,
	.release = nvdla_deadline_release,
};

static void nvdla_deadline_signal(struct nvdla_deadline *dl, int error)
{
	unsigned long flags;

	spin_lock_irqsave(&dl->lock, flags);
	if (!dma_fence_is_signaled_locked(&dl->base)) {
		if (error)
			dma_fence_set_error(&dl->base, error);
		dma_fence_signal_locked(&dl->base);
	}
	spin_unlock_irqrestore(&dl->lock, flags);
}

/* The fence signalled in time (the callback holds a reference, as the timer does). */
static void nvdla_deadline_met(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct nvdla_deadline *dl = container_of(cb, struct nvdla_deadline, cb);

	nvdla_deadline_signal(dl, 0);
	if (timer_delete(&dl->timer))
		dma_fence_put(&dl->base);
	dma_fence_put(&dl->base);
}

static void nvdla_deadline_missed(struct timer_list *timer)
{
	struct nvdla_deadline *dl = container_of(timer, struct nvdla_deadline, timer);

	nvdla_deadline_signal(dl, -ETIMEDOUT);
	if (dma_fence_remove_callback(dl->fence, &dl->cb))
		dma_fence_put(&dl->base);
	dma_fence_put(&dl->base);
}

/*
 * What the job waits for instead of @fence (whose reference is taken over):
 * @fence itself, or a deadline fence remembered in the job. Either way a
 * reference for drm_sched_job_add_dependency().
 */
static struct dma_fence *nvdla_job_deadline(struct nvdla_job *job, struct dma_fence *fence)
{
	struct nvdla_device *ndev = job->ndev;
	struct nvdla_deadline *dl;
	struct dma_fence **slots;

	if (to_drm_sched_fence(fence) || dma_fence_is_signaled(fence))
		return fence;

	slots = krealloc_array(job->deadlines, job->deadline_count + 1, sizeof(*slots),
			       GFP_KERNEL_ACCOUNT);
	if (!slots)
		goto plain;
	job->deadlines = slots;
	dl = kzalloc(sizeof(*dl), GFP_KERNEL_ACCOUNT);
	if (!dl)
		goto plain;
	spin_lock_init(&dl->lock);
	dma_fence_init(&dl->base, &nvdla_deadline_ops, &dl->lock, dma_fence_context_alloc(1), 1);
	dl->fence = fence;
	timer_setup(&dl->timer, nvdla_deadline_missed, 0);

	/* References: the dependency's, the job's, the callback's and the timer's. */
	dma_fence_get(&dl->base);
	job->deadlines[job->deadline_count++] = dma_fence_get(&dl->base);
	dma_fence_get(&dl->base);
	/* The timer (at least 10 ms) cannot fire before the callback is added. */
	INIT_LIST_HEAD(&dl->cb.node);
	mod_timer(&dl->timer, jiffies + msecs_to_jiffies(ndev->job_timeout_ms));
	if (dma_fence_add_callback(fence, &dl->cb, nvdla_deadline_met))
		nvdla_deadline_met(fence, &dl->cb); /* signalled meanwhile */
	return &dl->base;

plain:
	/* Without memory for a deadline the job waits as it would have. */
	return fence;
}

/* -ETIMEDOUT if a foreign dependency missed its deadline. */
static int nvdla_job_deadlines_status(const struct nvdla_job *job)
{
	unsigned int i;

	for (i = 0; i < job->deadline_count; i++)
		if (job->deadlines[i]->error)
			return job->deadlines[i]->error;
	return 0;
}

/* ---- job objects --------------------------------------------------------- */

struct nvdla_job *nvdla_job_alloc(struct nvdla_device *ndev, u32 num_addresses)
{
	struct nvdla_job *job;

	/* A job's memory is charged to the submitter's memory cgroup. */
	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job)
		return NULL;
	job->ndev = ndev;
	atomic_inc(&ndev->jobs_alive);

	job->task.addresses = kvcalloc(num_addresses, sizeof(*job->task.addresses),
				       GFP_KERNEL_ACCOUNT);
	job->hw_fence = kzalloc(sizeof(*job->hw_fence), GFP_KERNEL_ACCOUNT);
	if (!job->task.addresses || !job->hw_fence) {
		kvfree(job->task.addresses);
		kfree(job->hw_fence);
		kfree(job);
		atomic_dec(&ndev->jobs_alive);
		return NULL;
	}
	return job;
}

/* Buffers of jobs that ended on a wedged device, released with the DRM device. */
struct nvdla_kept_bos {
	struct list_head link;
	unsigned int count;
	struct drm_gem_object *bos[] __counted_by(count);
};

/*
 * The job ended on a wedged device: its units may still be armed, so its
 * buffers must not be freed (and reused) while the accelerator can run.
 * False if they could not be kept: then their references are never dropped.
 */
static bool nvdla_job_keep_bos(struct nvdla_job *job)
{
	struct nvdla_device *ndev = job->ndev;
	struct nvdla_kept_bos *kept;
	unsigned int i;

	kept = kvmalloc(struct_size(kept, bos, job->bo_count), GFP_KERNEL);
	if (!kept)
		return false;
	kept->count = job->bo_count;
	for (i = 0; i < job->bo_count; i++) {
		kept->bos[i] = job->bos[i];
		drm_gem_object_get(kept->bos[i]);
	}
	spin_lock(&ndev->kept_lock);
	list_add_tail(&kept->link, &ndev->kept_bos);
	spin_unlock(&ndev->kept_lock);
	drm_warn(&ndev->drm, "job %u ended on the wedged device: its %u buffers stay allocated\n",
		 job->id, job->bo_count);
	return true;
}

static void nvdla_kept_bos_release(struct drm_device *drm, void *arg)
{
	struct nvdla_device *ndev = arg;
	struct nvdla_kept_bos *kept, *next;
	unsigned int i;

	list_for_each_entry_safe(kept, next, &ndev->kept_bos, link) {
		for (i = 0; i < kept->count; i++)
			drm_gem_object_put(kept->bos[i]);
		list_del(&kept->link);
		kvfree(kept);
	}
}

void nvdla_job_free(struct nvdla_job *job)
{
	struct nvdla_device *ndev = job->ndev;
	bool put_bos = true;
	unsigned int i;

	if (job->sched_inited)
		drm_sched_job_cleanup(&job->base);
	if (job->validated && ndev->engine->task_free)
		ndev->engine->task_free(ndev, &job->task);

	if (job->keep_bos && !nvdla_job_keep_bos(job)) {
		drm_err(&ndev->drm, "job %u: the buffers of the wedged device are never freed\n",
			job->id);
		put_bos = false;
	}
	for (i = 0; put_bos && i < job->task.num_addresses; i++)
		nvdla_bo_put(job->task.addresses[i].bo);
	kvfree(job->task.addresses);
	kvfree(job->bos);

	for (i = 0; i < job->in_syncobj_count; i++)
		drm_syncobj_put(job->in_syncobjs[i]);
	kfree(job->in_syncobjs);
	for (i = 0; i < job->deadline_count; i++)
		dma_fence_put(job->deadlines[i]);
	kfree(job->deadlines);
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
	if (job->nfile) {
		atomic64_sub(job->queued_bytes, &job->nfile->queued_bytes);
		nvdla_file_put(job->nfile);
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

	job->bos = kvmalloc_array(n, sizeof(*job->bos), GFP_KERNEL_ACCOUNT);
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

/* Kernel memory a queued job holds until it is freed (its descriptor copy above all). */
static size_t nvdla_job_bytes(const struct nvdla_job *job)
{
	return sizeof(*job) + sizeof(*job->hw_fence) +
	       job->task.num_addresses * sizeof(*job->task.addresses) +
	       job->bo_count * sizeof(*job->bos) +
	       job->in_syncobj_count * sizeof(*job->in_syncobjs) + job->task.engine_bytes;
}

/*
 * Counts the job against its file's cap (nvdla_file_queue_limit()): a file
 * cannot pin more kernel memory with queued jobs. Under submit_lock.
 */
static int nvdla_file_charge(struct nvdla_file *nfile, struct nvdla_job *job)
{
	u64 limit = nvdla_file_queue_limit();
	size_t bytes = nvdla_job_bytes(job);
	u64 queued = atomic64_read(&nfile->queued_bytes);

	if (queued + bytes > limit) {
		drm_dbg(&nfile->ndev->drm,
			"job refused: the file's unfinished jobs hold %llu bytes, this one needs %zu, the limit is %llu (module parameter file_queue_mib): wait for some\n",
			queued, bytes, limit);
		return -EBUSY;
	}
	atomic64_add(bytes, &nfile->queued_bytes);
	job->queued_bytes = bytes;
	kref_get(&nfile->ref);
	job->nfile = nfile;
	return 0;
}

/*
 * The reservations of the job's buffers, locked with room for one more
 * fence each: drm_exec where the kernel has it, else drm_gem_lock_reservations().
 */
struct nvdla_bo_locks {
#if defined(HAVE_DRM_EXEC)
	struct drm_exec exec;
#else
	struct ww_acquire_ctx ctx;
#endif
};

static int nvdla_job_lock_bos(struct nvdla_job *job, struct nvdla_bo_locks *locks)
{
#if defined(HAVE_DRM_EXEC)
	int ret = 0;

	drm_exec_init(&locks->exec, DRM_EXEC_INTERRUPTIBLE_WAIT, job->bo_count);
	drm_exec_until_all_locked(&locks->exec) {
		ret = drm_exec_prepare_array(&locks->exec, job->bos, job->bo_count, 1);
		drm_exec_retry_on_contention(&locks->exec);
		if (ret)
			break;
	}
	if (ret)
		drm_exec_fini(&locks->exec);
	return ret;
#else
	unsigned int i;
	int ret;

	ret = drm_gem_lock_reservations(job->bos, job->bo_count, &locks->ctx);
	if (ret)
		return ret;
	for (i = 0; i < job->bo_count; i++) {
		ret = dma_resv_reserve_fences(job->bos[i]->resv, 1);
		if (ret) {
			drm_gem_unlock_reservations(job->bos, job->bo_count, &locks->ctx);
			return ret;
		}
	}
	return 0;
#endif
}

static void nvdla_job_unlock_bos(struct nvdla_job *job, struct nvdla_bo_locks *locks)
{
#if defined(HAVE_DRM_EXEC)
	drm_exec_fini(&locks->exec);
#else
	drm_gem_unlock_reservations(job->bos, job->bo_count, &locks->ctx);
#endif
}

/*
 * Every fence of @obj's reservation (until the validator reports what is
 * read only, every buffer is written), with deadlines for foreign ones.
 */
static int nvdla_job_add_implicit_dependencies(struct nvdla_job *job, struct drm_gem_object *obj)
{
	struct dma_resv_iter cursor;
	struct dma_fence *fence;
	int ret;

	dma_resv_for_each_fence(&cursor, obj->resv, dma_resv_usage_rw(true), fence) {
		dma_fence_get(fence);
		ret = drm_sched_job_add_dependency(&job->base, nvdla_job_deadline(job, fence));
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Queues a validated job. On success the scheduler owns the job (which may
 * be freed at any moment), its id is stored in @id and its finished fence
 * returned with a reference; on failure the caller still owns the job.
 */
struct dma_fence *nvdla_job_queue(struct nvdla_file *nfile, struct nvdla_job *job, u32 *id)
{
	struct nvdla_bo_locks locks;
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
		ret = drm_sched_job_add_dependency(&job->base, nvdla_job_deadline(job, fence));
		if (ret)
			return ERR_PTR(ret);
	}

	ret = nvdla_job_lock_bos(job, &locks);
	/* Not restartable: earlier jobs of the same submit may be queued already. */
	if (ret == -ERESTARTSYS)
		ret = -EINTR;
	if (ret)
		return ERR_PTR(ret);

	for (i = 0; i < job->bo_count; i++) {
		ret = nvdla_job_add_implicit_dependencies(job, job->bos[i]);
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
	if (!ret)
		ret = nvdla_file_charge(nfile, job);
	if (ret) {
		mutex_unlock(&nfile->submit_lock);
		goto unlock;
	}

	drm_sched_job_arm(&job->base);
	finished = dma_fence_get(&job->base.s_fence->finished);
	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, finished, DMA_RESV_USAGE_WRITE);
	nvdla_job_unlock_bos(job, &locks);

	*id = job->id;
	xa_store(&nfile->jobs, job->id, dma_fence_get(finished), GFP_KERNEL);
	nfile->next_job_id = nvdla_next_id(job->id);
	nfile->job_count++;

	job->sched_inited = false; /* from here on the scheduler cleans up */
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&nfile->submit_lock);
	return finished;

unlock:
	nvdla_job_unlock_bos(job, &locks);
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
	if (test_bit(0, &ndev->wedged))
		job->keep_bos = true;
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
	/* After a bus error the timeout path ends the job, once the device is reset. */
	if (READ_ONCE(ndev->bus_error))
		return;
	nvdla_job_finish(ndev, NULL, status);
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

	ret = nvdla_job_deadlines_status(job);
	if (ret) {
		drm_dbg(&ndev->drm, "job %u: a fence of another driver did not signal within %u ms\n",
			job->id, ndev->job_timeout_ms);
		goto fail;
	}
	/* A bus error after the previous job ended: reset before this one starts. */
	if (unlikely(READ_ONCE(ndev->bus_error)))
		nvdla_job_reset_hw(ndev);
	ret = nvdla_device_check_wedged(ndev);
	if (ret)
		goto fail;
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
	if (ret && !READ_ONCE(ndev->bus_error))
		nvdla_job_finish(ndev, job, ret);
	return dma_fence_get(fence);

fail:
	dma_fence_set_error(fence, ret);
	nvdla_compat_sched_forward_error(sched_job, ret);
	dma_fence_signal(fence);
	return dma_fence_get(fence);
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
	int bus_error;

	/* No new job starts between this one's end and drm_sched_stop(). */
	nvdla_compat_sched_pause_submit(&ndev->sched);
	if (ndev->irq > 0)
		disable_irq(ndev->irq);
	bus_error = READ_ONCE(ndev->bus_error);
	if (nvdla_job_is_active(ndev, job)) {
		if (bus_error)
			drm_err(&ndev->drm, "job %u: a register access failed: resetting the engine, the job fails with %d\n",
				job->id, bus_error);
		else
			drm_err(&ndev->drm, "job %u ran longer than %u ms: resetting the engine, the job fails with ETIMEDOUT\n",
				job->id, ndev->job_timeout_ms);
		nvdla_job_reset_hw(ndev);
		nvdla_job_finish(ndev, job, bus_error ?: -ETIMEDOUT);
	} else if (bus_error) {
		nvdla_job_reset_hw(ndev);
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
	/* A bus that sleeps (the virtual platform's mailbox) is read in the thread. */
	if (ndev->bus->sleeps)
		return IRQ_WAKE_THREAD;
	ret = ndev->engine->irq(ndev);
	nvdla_reg_flush(ndev);
	return ret;
}

irqreturn_t nvdla_irq_thread(int irq, void *arg)
{
	struct nvdla_device *ndev = arg;
	irqreturn_t ret;

	if (ndev->bus->sleeps && ndev->engine->irq) {
		ret = ndev->engine->irq(ndev);
		nvdla_reg_flush(ndev);
		if (ret != IRQ_WAKE_THREAD)
			return ret;
	}
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
	WRITE_ONCE(ndev->sched_ready, false);
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
	WRITE_ONCE(ndev->sched_ready, true);
	/* Released in reverse order: the jobs first, then the buffers they kept. */
	ret = drmm_add_action_or_reset(&ndev->drm, nvdla_kept_bos_release, ndev);
	if (ret) {
		WRITE_ONCE(ndev->sched_ready, false);
		drm_sched_fini(&ndev->sched);
		return ret;
	}
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

static void nvdla_file_release(struct kref *ref)
{
	kfree(container_of(ref, struct nvdla_file, ref));
}

void nvdla_file_put(struct nvdla_file *nfile)
{
	kref_put(&nfile->ref, nvdla_file_release);
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
