// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * One NVDLA instance, whatever bus it sits on: register access through the
 * glue's hooks, the interrupt, the engine, the scheduler and the DRM device.
 * Several instances coexist; nothing here is global.
 */
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/string.h>

#include <uapi/drm/nvdla_drm.h>

#include "nvdla_drv.h"

u32 nvdla_reg_read(struct nvdla_device *ndev, u32 reg)
{
	return ndev->bus->read(ndev, reg);
}

void nvdla_reg_write(struct nvdla_device *ndev, u32 reg, u32 val)
{
	ndev->bus->write(ndev, reg, val);
}

/* Posted register writes reach the hardware (buses that batch them). */
void nvdla_reg_flush(struct nvdla_device *ndev)
{
	if (ndev->bus->flush)
		ndev->bus->flush(ndev);
}

/*
 * Hard reset of the accelerator through the bus (reset line, model). A bus
 * that cannot reset it (no reset line) or a reset that fails wedges the
 * device: whatever a unit still holds programmed may yet run, so the
 * caller's job keeps its buffers (nvdla_job.c) and no job runs any more.
 */
int nvdla_device_reset(struct nvdla_device *ndev)
{
	int ret = ndev->bus->reset ? ndev->bus->reset(ndev) : -EOPNOTSUPP;

	if (!ret)
		WRITE_ONCE(ndev->bus_error, 0);
	if (ret && !test_and_set_bit(0, &ndev->wedged))
		drm_err(&ndev->drm, "the accelerator cannot be reset (%d%s): the device is wedged: the failed job's buffers stay allocated and new jobs fail with EIO until the accelerator is powered off (reboot)\n",
			ret, ret == -EOPNOTSUPP ? ", no reset line" : "");
	return ret;
}

/*
 * A register access timed out (the bus lost the accelerator): the running
 * job fails with @err once the device has been reset, through the
 * scheduler's timeout path, started now (nvdla_job_timedout()); until then
 * no job is taken for done. Any context.
 */
void nvdla_device_bus_error(struct nvdla_device *ndev, int err)
{
	if (!cmpxchg(&ndev->bus_error, 0, err))
		drm_err_ratelimited(&ndev->drm, "a register access failed (%d): the running job fails, the accelerator is reset\n",
				    err);
	/* Not before the scheduler exists (probe): the next reset clears the error. */
	if (READ_ONCE(ndev->sched_ready))
		drm_sched_fault(&ndev->sched);
}

/* 0, or -EIO when the device is wedged: a job must not start. */
int nvdla_device_check_wedged(struct nvdla_device *ndev)
{
	if (likely(!test_bit(0, &ndev->wedged)))
		return 0;
	drm_err_ratelimited(&ndev->drm, "job refused: the device is wedged (a job failed and the accelerator could not be reset)\n");
	return -EIO;
}

static const struct {
	const char *name;
	u32 uapi;
} nvdla_uapi_configs[] = {
	{ "nv_full", NVDLA_HW_CONFIG_NV_FULL },
	{ "nv_small", NVDLA_HW_CONFIG_NV_SMALL },
	{ "nv_small_256", NVDLA_HW_CONFIG_NV_SMALL_256 },
	{ "nv_small_256_full", NVDLA_HW_CONFIG_NV_SMALL_256_FULL },
	{ "nv_medium_512", NVDLA_HW_CONFIG_NV_MEDIUM_512 },
	{ "nv_medium_1024_full", NVDLA_HW_CONFIG_NV_MEDIUM_1024_FULL },
	{ "nv_large", NVDLA_HW_CONFIG_NV_LARGE },
};

/*
 * Allocates an instance (its lifetime is the DRM device's: until the device
 * is unbound and the last file closed) for the glue to fill in.
 */
struct nvdla_device *nvdla_device_alloc(struct device *dev, const struct nvdla_hw_config *config)
{
	struct nvdla_device *ndev;
	unsigned int i;

	ndev = devm_drm_dev_alloc(dev, nvdla_drm_driver(dev), struct nvdla_device, drm);
	if (IS_ERR(ndev))
		return ndev;

	ndev->dev = dev;
	ndev->config = config;
	for (i = 0; i < ARRAY_SIZE(nvdla_uapi_configs); i++)
		if (!strcmp(config->name, nvdla_uapi_configs[i].name))
			ndev->uapi_config = nvdla_uapi_configs[i].uapi;
	ndev->irq = -ENXIO;
	ndev->engine = nvdla_default_engine();
	ndev->job_timeout_ms = nvdla_job_timeout_ms();
	spin_lock_init(&ndev->job_lock);
	spin_lock_init(&ndev->kept_lock);
	INIT_LIST_HEAD(&ndev->kept_bos);
	atomic_set(&ndev->jobs_alive, 0);
	atomic_set(&ndev->bo_count, 0);
	init_waitqueue_head(&ndev->jobs_idle);
	return ndev;
}

static void nvdla_engine_release(struct drm_device *drm, void *arg)
{
	struct nvdla_device *ndev = arg;

	if (ndev->engine->fini)
		ndev->engine->fini(ndev);
}

/*
 * Brings up an instance whose hooks the glue has filled in: buffer memory
 * (nvdla_mem_init_carveout() before, or DMA memory), engine, scheduler,
 * interrupt, and finally the render node.
 */
int nvdla_device_register(struct nvdla_device *ndev)
{
	struct drm_device *drm = &ndev->drm;
	int ret;

	if (WARN_ON(!ndev->bus || !ndev->uapi_config))
		return -EINVAL;

	ret = nvdla_mem_init(ndev);
	if (ret)
		return ret;

	if (ndev->engine->init) {
		ret = ndev->engine->init(ndev);
		if (ret) {
			drm_err(drm, "engine %s: init failed (%d)\n", ndev->engine->name, ret);
			return ret;
		}
	}
	ret = drmm_add_action_or_reset(drm, nvdla_engine_release, ndev);
	if (ret)
		return ret;

	ret = nvdla_sched_init(ndev);
	if (ret)
		return ret;

	if (ndev->irq > 0) {
		ret = devm_request_threaded_irq(ndev->dev, ndev->irq, nvdla_irq, nvdla_irq_thread,
						0, dev_name(ndev->dev), ndev);
		if (ret) {
			drm_err(drm, "cannot request IRQ %d (%d)\n", ndev->irq, ret);
			return ret;
		}
	}

	ret = drm_dev_register(drm, 0);
	if (ret)
		return ret;

	if (ndev->carveout.size)
		drm_info(drm, "NVDLA %s on %s: carve-out memory %llu MiB, engine: %s, job timeout %u ms\n",
			 ndev->config->name, ndev->bus->name, ndev->carveout.size >> 20,
			 ndev->engine->name, ndev->job_timeout_ms);
	else
		drm_info(drm, "NVDLA %s on %s: DMA memory, engine: %s, job timeout %u ms\n",
			 ndev->config->name, ndev->bus->name, ndev->engine->name,
			 ndev->job_timeout_ms);
	return 0;
}

/*
 * The glue's remove: no ioctl reaches the hardware after this returns;
 * unfinished jobs fail with -ENODEV. Open files keep the DRM device (and
 * their buffers) until they are closed.
 */
void nvdla_device_unregister(struct nvdla_device *ndev)
{
	drm_dev_unplug(&ndev->drm);
	nvdla_job_unplug(ndev);
}
