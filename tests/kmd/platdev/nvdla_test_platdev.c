// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * make test-kmd only: board code for a QEMU guest without a device tree.
 * Registers a platform device "nvdla-nv-large" so that the NVDLA platform
 * glue (nvdla_platform.c: MMIO, IRQ, runtime PM, DMA memory) is exercised:
 *
 *   MMIO  4 KiB of BAR0 of QEMU's pci-testdev (1b36:0005), a range no
 *         driver uses; nv_large's register map needs 0x12000 bytes, so the
 *         driver warns, and every register the engine uses lies beyond the
 *         window: reads return all ones, writes are dropped (a dead device)
 *   IRQ   5, an ISA interrupt nothing raises on QEMU's pc machine
 *   reset a reset line of a reset controller registered here (a device
 *         "nvdla-test-reset" found through a reset lookup, as board code
 *         without a device tree names it; kernels without lookups, 7.x,
 *         take a software node's "resets" reference), whose assert and deassert count
 *         in /sys/module/nvdla_test_platdev/parameters/resets; with reset=0
 *         the device has none, as a device tree without `resets`, and the
 *         instance is "nvdla-nv-large" instead of "nvdla-nv-large.0"
 */
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/platform_device.h>
#include <linux/property.h>
#include <linux/reset-controller.h>
#include <linux/slab.h>

#include "nvdla_conftest.h"

static bool reset = true;
module_param(reset, bool, 0444);
MODULE_PARM_DESC(reset, "Give the instance a reset line (default 1)");

static unsigned int resets;
module_param(resets, uint, 0444);
MODULE_PARM_DESC(resets, "Times the reset line was asserted");

static struct platform_device *nvdla_test_pdev;
static struct platform_device *nvdla_test_reset_pdev;

static int nvdla_test_assert(struct reset_controller_dev *rcdev, unsigned long id)
{
	WRITE_ONCE(resets, READ_ONCE(resets) + 1);
	return 0;
}

static int nvdla_test_deassert(struct reset_controller_dev *rcdev, unsigned long id)
{
	return 0;
}

static const struct reset_control_ops nvdla_test_reset_ops = {
	.assert = nvdla_test_assert,
	.deassert = nvdla_test_deassert,
};

static struct reset_controller_dev nvdla_test_rcdev = {
	.ops = &nvdla_test_reset_ops,
	.owner = THIS_MODULE,
	.nr_resets = 1,
};

#ifdef HAVE_RESET_CONTROL_LOOKUP
/*
 * The reset framework cannot remove a lookup: it is allocated (with its
 * strings) and left registered, so that none points into this module after
 * it is unloaded. Reloading adds an equal one; the first match is used.
 */
static int nvdla_test_reset_name(void)
{
	struct reset_control_lookup *lookup;

	lookup = kzalloc(sizeof(*lookup), GFP_KERNEL);
	if (lookup) {
		lookup->provider = kstrdup("nvdla-test-reset", GFP_KERNEL);
		lookup->dev_id = kstrdup("nvdla-nv-large.0", GFP_KERNEL);
	}
	if (!lookup || !lookup->provider || !lookup->dev_id) {
		if (lookup) {
			kfree(lookup->provider);
			kfree(lookup->dev_id);
		}
		kfree(lookup);
		return -ENOMEM;
	}
	reset_controller_add_lookup(lookup, 1);
	return 0;
}

#else
/*
 * The reset core finds the line through the instance's "resets" reference;
 * fw_devlink then waits for the supplier's device to be bound, so the
 * controller is registered by a driver, as a real one is.
 */
static const struct property_entry nvdla_test_reset_props[] = {
	PROPERTY_ENTRY_U32("#reset-cells", 1),
	{ }
};

static const struct software_node nvdla_test_reset_node = {
	.name = "nvdla-test-reset",
	.properties = nvdla_test_reset_props,
};

static const struct software_node_ref_args nvdla_test_reset_refs[] = {
	SOFTWARE_NODE_REFERENCE(&nvdla_test_reset_node, 0),
};

static const struct property_entry nvdla_test_dev_props[] = {
	PROPERTY_ENTRY_REF_ARRAY("resets", nvdla_test_reset_refs),
	{ }
};

static const struct software_node nvdla_test_dev_node = {
	.name = "nvdla-nv-large",
	.properties = nvdla_test_dev_props,
};

static int nvdla_test_reset_name(void)
{
	return 0;
}
#endif

static int nvdla_test_reset_probe(struct platform_device *pdev)
{
	nvdla_test_rcdev.dev = &pdev->dev;
	return devm_reset_controller_register(&pdev->dev, &nvdla_test_rcdev);
}

static struct platform_driver nvdla_test_reset_driver = {
	.probe = nvdla_test_reset_probe,
	.driver = { .name = "nvdla-test-reset" },
};

static int nvdla_test_reset_register(void)
{
	struct platform_device_info info = {
		.name = "nvdla-test-reset",
		.id = PLATFORM_DEVID_NONE,
#ifndef HAVE_RESET_CONTROL_LOOKUP
		.swnode = &nvdla_test_reset_node,
#endif
	};
	int ret;

	ret = nvdla_test_reset_name();
	if (ret)
		return ret;
	ret = platform_driver_register(&nvdla_test_reset_driver);
	if (ret)
		return ret;
	nvdla_test_reset_pdev = platform_device_register_full(&info);
	if (IS_ERR(nvdla_test_reset_pdev)) {
		platform_driver_unregister(&nvdla_test_reset_driver);
		return PTR_ERR(nvdla_test_reset_pdev);
	}
	return 0;
}

static void nvdla_test_reset_unregister(void)
{
	platform_device_unregister(nvdla_test_reset_pdev);
	platform_driver_unregister(&nvdla_test_reset_driver);
}

static int __init nvdla_test_platdev_init(void)
{
	struct platform_device_info info = {
		.name = "nvdla-nv-large",
		.id = reset ? 0 : PLATFORM_DEVID_NONE,
		.dma_mask = DMA_BIT_MASK(32),
		.num_res = 2,
	};
	struct resource res[2] = { };
	struct pci_dev *pdev;
	int ret;

	pdev = pci_get_device(0x1b36, 0x0005, NULL);
	if (!pdev)
		return -ENODEV;
	res[0].start = pci_resource_start(pdev, 0);
	res[0].end = res[0].start + min_t(resource_size_t, pci_resource_len(pdev, 0), SZ_4K) - 1;
	res[0].flags = IORESOURCE_MEM;
	res[0].name = "nvdla-test-regs";
	pci_dev_put(pdev);
	res[1].start = 5;
	res[1].end = 5;
	res[1].flags = IORESOURCE_IRQ;
	info.res = res;

	if (reset) {
		ret = nvdla_test_reset_register();
		if (ret)
			return ret;
#ifndef HAVE_RESET_CONTROL_LOOKUP
		info.swnode = &nvdla_test_dev_node;
#endif
	}
	nvdla_test_pdev = platform_device_register_full(&info);
	if (IS_ERR(nvdla_test_pdev)) {
		if (reset)
			nvdla_test_reset_unregister();
		return PTR_ERR(nvdla_test_pdev);
	}
	return 0;
}

static void __exit nvdla_test_platdev_exit(void)
{
	platform_device_unregister(nvdla_test_pdev);
	if (reset)
		nvdla_test_reset_unregister();
}

module_init(nvdla_test_platdev_init);
module_exit(nvdla_test_platdev_exit);
MODULE_DESCRIPTION("make test-kmd: an NVDLA platform device on a QEMU guest");
MODULE_LICENSE("Dual MIT/GPL");
