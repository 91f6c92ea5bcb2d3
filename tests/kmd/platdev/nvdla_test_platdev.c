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
 */
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/platform_device.h>

static struct platform_device *nvdla_test_pdev;

static int __init nvdla_test_platdev_init(void)
{
	struct platform_device_info info = {
		.name = "nvdla-nv-large",
		.id = PLATFORM_DEVID_NONE,
		.dma_mask = DMA_BIT_MASK(32),
		.num_res = 2,
	};
	struct resource res[2] = { };
	struct pci_dev *pdev;

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

	nvdla_test_pdev = platform_device_register_full(&info);
	return PTR_ERR_OR_ZERO(nvdla_test_pdev);
}

static void __exit nvdla_test_platdev_exit(void)
{
	platform_device_unregister(nvdla_test_pdev);
}

module_init(nvdla_test_platdev_init);
module_exit(nvdla_test_platdev_exit);
MODULE_DESCRIPTION("make test-kmd: an NVDLA platform device on a QEMU guest");
MODULE_LICENSE("Dual MIT/GPL");
