// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * NVDLA on an SoC: a platform device described by the device tree (see
 * docs/kmd/nvidia,nvdla.yaml). Registers (MMIO), one interrupt, optional
 * clocks, resets and power domain, runtime PM with autosuspend, and buffer
 * memory from a reserved-memory carve-out or the DMA API.
 */
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <linux/clk.h>
#include <linux/delay.h>
#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/of_reserved_mem.h>
#include <linux/platform_device.h>
#include <linux/pm_runtime.h>
#include <linux/property.h>
#include <linux/reset.h>

#include <nvdla/hw/nvdla_regs.h>

#include "nvdla_compat.h"
#include "nvdla_drv.h"
#include "nvdla_glue.h"

#define NVDLA_AUTOSUSPEND_MS 100

struct nvdla_platform {
	struct clk_bulk_data *clks;
	int num_clks;
	struct reset_control *rst;
	resource_size_t regs_size; /* bytes of the MMIO window */
};

/*
 * Registers outside the MMIO window (a device tree whose `reg` is smaller
 * than the register map) read as all ones and are not written.
 */
static bool nvdla_platform_reg_ok(struct nvdla_device *ndev, u32 reg)
{
	struct nvdla_platform *plat = ndev->bus_priv;

	if (likely((u64)reg + sizeof(u32) <= plat->regs_size))
		return true;
	drm_warn_once(&ndev->drm, "register 0x%x is outside the %llu-byte MMIO window: ignored\n",
		      reg, (u64)plat->regs_size);
	return false;
}

static u32 nvdla_platform_read(struct nvdla_device *ndev, u32 reg)
{
	if (!nvdla_platform_reg_ok(ndev, reg))
		return ~0u;
	return readl(ndev->regs + reg);
}

static void nvdla_platform_write(struct nvdla_device *ndev, u32 reg, u32 val)
{
	if (nvdla_platform_reg_ok(ndev, reg))
		writel(val, ndev->regs + reg);
}

/* Bytes the configuration's register map spans (every unit's 4 KiB window). */
static u32 nvdla_platform_map_size(const struct nvdla_hw_config *config)
{
	u32 end = 0, base;
	int unit;

	for (unit = 0; unit < NVDLA_UNIT_COUNT; unit++) {
		base = nvdla_unit_base(config->reg_map, (enum nvdla_unit)unit);
		if (base != NVDLA_UNIT_ABSENT)
			end = max(end, base + NVDLA_UNIT_WINDOW);
	}
	return end;
}

static int nvdla_platform_reset(struct nvdla_device *ndev)
{
	struct nvdla_platform *plat = ndev->bus_priv;
	int ret;

	/* Without a reset line the units cannot be stopped: the device is wedged. */
	if (!plat->rst)
		return -EOPNOTSUPP;
	ret = reset_control_assert(plat->rst);
	if (ret)
		return ret;
	udelay(1);
	return reset_control_deassert(plat->rst);
}

static const struct nvdla_bus_ops nvdla_platform_bus_ops = {
	.name = "platform",
	.read = nvdla_platform_read,
	.write = nvdla_platform_write,
	.reset = nvdla_platform_reset,
};

static int nvdla_platform_runtime_suspend(struct device *dev)
{
	struct nvdla_device *ndev = dev_get_drvdata(dev);
	struct nvdla_platform *plat = ndev->bus_priv;

	reset_control_assert(plat->rst);
	clk_bulk_disable_unprepare(plat->num_clks, plat->clks);
	return 0;
}

static int nvdla_platform_runtime_resume(struct device *dev)
{
	struct nvdla_device *ndev = dev_get_drvdata(dev);
	struct nvdla_platform *plat = ndev->bus_priv;
	int ret;

	ret = clk_bulk_prepare_enable(plat->num_clks, plat->clks);
	if (ret)
		return ret;
	ret = reset_control_deassert(plat->rst);
	if (ret)
		clk_bulk_disable_unprepare(plat->num_clks, plat->clks);
	return ret;
}

/* At unbind, after runtime PM is disabled: a device left powered is powered off. */
static void nvdla_platform_power_off(void *data)
{
	struct device *dev = data;

	if (!pm_runtime_status_suspended(dev))
		nvdla_platform_runtime_suspend(dev);
}

/*
 * Devices whose reserved-memory pool a DRM device still holds. Buffers (and
 * their CPU mappings through exported dma-bufs) outlive an unbind, and
 * of_reserved_mem_device_release(), when the old DRM device goes, detaches
 * every pool of the struct device, a newer binding's too: so a new binding
 * waits until the old DRM device is released, as carve-outs do.
 */
struct nvdla_pool_user {
	struct list_head link;
	struct device *dev;
};

static DEFINE_MUTEX(nvdla_pools_lock);
static LIST_HEAD(nvdla_pools);

/* With the DRM device: buffers allocated from the pool may outlive the binding. */
static void nvdla_platform_release_rmem(struct drm_device *drm, void *arg)
{
	struct nvdla_pool_user *user = arg;

	mutex_lock(&nvdla_pools_lock);
	of_reserved_mem_device_release(user->dev);
	list_del(&user->link);
	mutex_unlock(&nvdla_pools_lock);
}

/* The reserved-memory pool @rmem (named by @np) becomes the device's DMA pool. */
static int nvdla_platform_pool(struct nvdla_device *ndev, struct device_node *np,
			       struct reserved_mem *rmem)
{
	struct device *dev = ndev->dev;
	struct nvdla_pool_user *user, *other;
	int ret;

	/*
	 * The kernel maps a pool that is not CMA write-combined
	 * (dma_init_coherent_memory()), which memremap() refuses, with a
	 * warning, for memory in its linear map.
	 */
	if (of_device_is_compatible(np, "shared-dma-pool") &&
	    !of_property_read_bool(np, "reusable"))
		return dev_err_probe(dev, -EINVAL,
				     "memory-region %s: a shared-dma-pool without no-map must be reusable (CMA); with no-map it is the carve-out\n",
				     rmem->name);

	user = drmm_kzalloc(&ndev->drm, sizeof(*user), GFP_KERNEL);
	if (!user)
		return -ENOMEM;
	user->dev = dev;

	mutex_lock(&nvdla_pools_lock);
	list_for_each_entry(other, &nvdla_pools, link) {
		if (other->dev == dev) {
			mutex_unlock(&nvdla_pools_lock);
			return dev_err_probe(dev, -EBUSY,
					     "memory-region %s: buffers of an earlier binding still use it (open files, mappings): close them, then bind again\n",
					     rmem->name);
		}
	}
	ret = of_reserved_mem_device_init(dev);
	if (ret) {
		mutex_unlock(&nvdla_pools_lock);
		return dev_err_probe(dev, ret, "cannot use memory-region %s\n", rmem->name);
	}
	list_add(&user->link, &nvdla_pools);
	mutex_unlock(&nvdla_pools_lock);
	return drmm_add_action_or_reset(&ndev->drm, nvdla_platform_release_rmem, user);
}

/*
 * Buffer memory. With a `memory-region` that is `no-map`, the region is the
 * instance's carve-out (drm_mm); a region the kernel maps (a reusable
 * shared-dma-pool: CMA) becomes the device's DMA pool; without one, buffers
 * come from the DMA API (CMA where the system has it).
 */
static int nvdla_platform_memory(struct nvdla_device *ndev)
{
	struct device *dev = ndev->dev;
	struct reserved_mem *rmem;
	struct device_node *np;
	int ret;

	np = of_parse_phandle(dev->of_node, "memory-region", 0);
	if (!np)
		return 0;
	rmem = of_reserved_mem_lookup(np);
	if (!rmem)
		ret = dev_err_probe(dev, -EINVAL, "memory-region is not a reserved-memory node\n");
	else if (!of_property_read_bool(np, "no-map"))
		ret = nvdla_platform_pool(ndev, np, rmem);
	else
		ret = nvdla_mem_init_carveout(ndev, rmem->base, phys_to_dma(dev, rmem->base),
					      rmem->size);
	of_node_put(np);
	return ret;
}

static int nvdla_platform_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	const struct platform_device_id *id = platform_get_device_id(pdev);
	const struct nvdla_hw_config *config;
	struct nvdla_platform *plat;
	struct nvdla_device *ndev;
	struct resource *regs;
	const char *name;
	int ret;

	name = id ? (const char *)id->driver_data : device_get_match_data(dev);
	config = nvdla_hw_config_find(name);
	if (!config)
		return dev_err_probe(dev, -EINVAL, "unknown configuration %s\n", name);

	plat = devm_kzalloc(dev, sizeof(*plat), GFP_KERNEL);
	if (!plat)
		return -ENOMEM;

	ndev = nvdla_device_alloc(dev, config);
	if (IS_ERR(ndev))
		return PTR_ERR(ndev);
	ndev->bus = &nvdla_platform_bus_ops;
	ndev->bus_priv = plat;
	platform_set_drvdata(pdev, ndev);

	ndev->regs = devm_platform_get_and_ioremap_resource(pdev, 0, &regs);
	if (IS_ERR(ndev->regs))
		return PTR_ERR(ndev->regs);
	plat->regs_size = resource_size(regs);
	if (plat->regs_size < nvdla_platform_map_size(config))
		dev_warn(dev, "the MMIO window (%pR) is smaller than the %#x bytes of the %s register map: registers beyond it read as all ones\n",
			 regs, nvdla_platform_map_size(config), config->name);
	ndev->irq = platform_get_irq(pdev, 0);
	if (ndev->irq < 0)
		return ndev->irq;

	plat->num_clks = devm_clk_bulk_get_all(dev, &plat->clks);
	if (plat->num_clks < 0)
		return dev_err_probe(dev, plat->num_clks, "cannot get clocks\n");
	/* Board code without a device tree names its reset line in a reset lookup. */
	if (dev_of_node(dev))
		plat->rst = devm_reset_control_array_get_optional_exclusive(dev);
	else
		plat->rst = devm_reset_control_get_optional_exclusive(dev, NULL);
	if (IS_ERR(plat->rst))
		return dev_err_probe(dev, PTR_ERR(plat->rst), "cannot get resets\n");
	if (!plat->rst)
		dev_warn(dev, "no reset line (resets): a job that fails or times out wedges the device, since nothing can stop the units it programmed\n");

	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(min(config->address_bits, 64u)));
	if (ret)
		return dev_err_probe(dev, ret, "cannot use %u-bit DMA\n", config->address_bits);

	ret = nvdla_platform_memory(ndev);
	if (ret)
		return ret;

	/*
	 * Powered on here: without CONFIG_PM it stays so (the runtime-PM calls
	 * are stubs). With it, the device is powered only while jobs are
	 * queued or run, plus the autosuspend delay.
	 */
	ret = nvdla_platform_runtime_resume(dev);
	if (ret)
		return dev_err_probe(dev, ret, "cannot power the device up\n");
	ret = devm_add_action_or_reset(dev, nvdla_platform_power_off, dev);
	if (ret)
		return ret;
	pm_runtime_set_active(dev);
	pm_runtime_get_noresume(dev);
	pm_runtime_set_autosuspend_delay(dev, NVDLA_AUTOSUSPEND_MS);
	pm_runtime_use_autosuspend(dev);
	ret = devm_pm_runtime_enable(dev);
	if (!ret)
		ret = nvdla_device_register(ndev);
	pm_runtime_mark_last_busy(dev);
	pm_runtime_put_autosuspend(dev);
	return ret;
}

#if defined(HAVE_PLATFORM_REMOVE_VOID)
static void nvdla_platform_remove(struct platform_device *pdev)
{
	nvdla_device_unregister(platform_get_drvdata(pdev));
}
#else
static int nvdla_platform_remove(struct platform_device *pdev)
{
	nvdla_device_unregister(platform_get_drvdata(pdev));
	return 0;
}
#endif

static const struct of_device_id nvdla_of_match[] = {
	{ .compatible = "nvidia,nvdla-nv-full", .data = "nv_full" },
	{ .compatible = "nvidia,nvdla-nv-small", .data = "nv_small" },
	{ .compatible = "nvidia,nvdla-nv-large", .data = "nv_large" },
	/* The original driver's compatibles, for existing device trees. */
	{ .compatible = "nvidia,nvdla_os_initial", .data = "nv_full" },
	{ .compatible = "nvidia,nv_small", .data = "nv_small" },
	{ .compatible = "nvidia,nv_large", .data = "nv_large" },
	{ }
};
MODULE_DEVICE_TABLE(of, nvdla_of_match);

/* Instances created by board code without a device tree. */
static const struct platform_device_id nvdla_platform_ids[] = {
	{ "nvdla-nv-full", (kernel_ulong_t)"nv_full" },
	{ "nvdla-nv-small", (kernel_ulong_t)"nv_small" },
	{ "nvdla-nv-large", (kernel_ulong_t)"nv_large" },
	{ }
};
MODULE_DEVICE_TABLE(platform, nvdla_platform_ids);

static DEFINE_RUNTIME_DEV_PM_OPS(nvdla_platform_pm, nvdla_platform_runtime_suspend,
				 nvdla_platform_runtime_resume, NULL);

struct platform_driver nvdla_platform_driver = {
	.probe = nvdla_platform_probe,
	.remove = nvdla_platform_remove,
	.id_table = nvdla_platform_ids,
	.driver = {
		.name = "nvdla",
		.of_match_table = nvdla_of_match,
		.pm = pm_ptr(&nvdla_platform_pm),
	},
};
