// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * NVDLA on the virtual platform: an ivshmem PCI device whose shared memory
 * carries a header (nvdla_ivshmem.h), the carve-out and, later, the
 * register mailbox to a hardware model on the host. It provides the same
 * hooks as the SoC glue: register access, interrupt, buffer memory.
 *
 * Today no hardware model is attached (mailbox_size 0): register reads
 * return all ones and writes are dropped, as on a dead bus. A valid job
 * still reaches the engine: it fails to start (-EIO, a register group reads
 * as busy) or, when it starts (BDMA), never completes and times out.
 */
#include <drm/drm_print.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/pci.h>

#include "nvdla_drv.h"
#include "nvdla_glue.h"
#include "nvdla_ivshmem.h"

#define NVDLA_IVSHMEM_BAR_REGS 0
#define NVDLA_IVSHMEM_BAR_SHM 2

struct nvdla_ivshmem {
	void __iomem *regs;	/* ivshmem registers: interrupt mask/status, doorbell */
	void *shm;		/* BAR2, write-combined */
	resource_size_t shm_size;
	u64 mailbox_offset;
	u64 mailbox_size;
};

static u32 nvdla_ivshmem_read(struct nvdla_device *ndev, u32 reg)
{
	drm_warn_once(&ndev->drm, "no hardware model attached: registers read as all ones\n");
	return ~0u;
}

static void nvdla_ivshmem_write(struct nvdla_device *ndev, u32 reg, u32 val)
{
	drm_warn_once(&ndev->drm, "no hardware model attached: register writes are dropped\n");
}

static const struct nvdla_bus_ops nvdla_ivshmem_bus_ops = {
	.name = "ivshmem",
	.read = nvdla_ivshmem_read,
	.write = nvdla_ivshmem_write,
};

static bool nvdla_ivshmem_range_ok(u64 offset, u64 size, u64 limit)
{
	return offset <= limit && size <= limit - offset;
}

/* Reads and checks the header the host wrote; the configuration it names. */
static const struct nvdla_hw_config *nvdla_ivshmem_header(struct device *dev,
							  struct nvdla_ivshmem *ivs,
							  u64 *mem_offset, u64 *mem_size)
{
	struct nvdla_ivshmem_header hdr;
	const struct nvdla_hw_config *config;

	if (ivs->shm_size < PAGE_SIZE)
		return ERR_PTR(-ENODEV);
	memcpy(&hdr, ivs->shm, sizeof(hdr));
	if (memcmp(hdr.magic, NVDLA_IVSHMEM_MAGIC, sizeof(hdr.magic))) {
		dev_info(dev, "ivshmem without an NVDLA header: not an NVDLA virtual platform\n");
		return ERR_PTR(-ENODEV);
	}
	if (le32_to_cpu(hdr.version) != NVDLA_IVSHMEM_VERSION ||
	    le32_to_cpu(hdr.header_size) < sizeof(hdr) || hdr.flags) {
		dev_err(dev, "NVDLA ivshmem header version %u (size %u, flags %#x) is not supported\n",
			le32_to_cpu(hdr.version), le32_to_cpu(hdr.header_size),
			le32_to_cpu(hdr.flags));
		return ERR_PTR(-EINVAL);
	}

	hdr.config[sizeof(hdr.config) - 1] = '\0';
	config = nvdla_hw_config_find(hdr.config);
	if (!config) {
		dev_err(dev, "NVDLA ivshmem header names an unknown configuration \"%s\"\n",
			hdr.config);
		return ERR_PTR(-EINVAL);
	}

	ivs->mailbox_offset = le64_to_cpu(hdr.mailbox_offset);
	ivs->mailbox_size = le64_to_cpu(hdr.mailbox_size);
	*mem_offset = le64_to_cpu(hdr.memory_offset);
	*mem_size = le64_to_cpu(hdr.memory_size);
	if (!nvdla_ivshmem_range_ok(ivs->mailbox_offset, ivs->mailbox_size, ivs->shm_size) ||
	    !nvdla_ivshmem_range_ok(*mem_offset, *mem_size, ivs->shm_size) ||
	    (*mem_size && *mem_offset < PAGE_SIZE)) {
		dev_err(dev, "NVDLA ivshmem header: regions outside the %llu-byte shared memory\n",
			(u64)ivs->shm_size);
		return ERR_PTR(-EINVAL);
	}
	return config;
}

static int nvdla_ivshmem_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	const struct nvdla_hw_config *config;
	struct nvdla_ivshmem *ivs;
	struct nvdla_device *ndev;
	u64 mem_offset, mem_size;
	resource_size_t shm_start;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;

	ivs = devm_kzalloc(dev, sizeof(*ivs), GFP_KERNEL);
	if (!ivs)
		return -ENOMEM;

	/* Regions requested on a pcim-enabled device are released with it. */
	ret = pci_request_region(pdev, NVDLA_IVSHMEM_BAR_REGS, "nvdla");
	if (ret)
		return ret;
	ivs->regs = pcim_iomap(pdev, NVDLA_IVSHMEM_BAR_REGS, 0);
	if (!ivs->regs)
		return -ENOMEM;

	/* The shared memory is mapped write-combined, not through pcim_iomap (uncached). */
	ret = pci_request_region(pdev, NVDLA_IVSHMEM_BAR_SHM, "nvdla");
	if (ret)
		return ret;
	shm_start = pci_resource_start(pdev, NVDLA_IVSHMEM_BAR_SHM);
	ivs->shm_size = pci_resource_len(pdev, NVDLA_IVSHMEM_BAR_SHM);
	ivs->shm = devm_memremap(dev, shm_start, ivs->shm_size, MEMREMAP_WC);
	if (IS_ERR(ivs->shm))
		return PTR_ERR(ivs->shm);

	config = nvdla_ivshmem_header(dev, ivs, &mem_offset, &mem_size);
	if (IS_ERR(config))
		return PTR_ERR(config);

	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(min(config->address_bits, 64u)));
	if (ret)
		return dev_err_probe(dev, ret, "cannot use %u-bit DMA\n", config->address_bits);

	ndev = nvdla_device_alloc(dev, config);
	if (IS_ERR(ndev))
		return PTR_ERR(ndev);
	ndev->bus = &nvdla_ivshmem_bus_ops;
	ndev->bus_priv = ivs;
	pci_set_drvdata(pdev, ndev);

	if (mem_size) {
		ret = nvdla_mem_init_carveout(ndev, shm_start + mem_offset,
					      pci_bus_address(pdev, NVDLA_IVSHMEM_BAR_SHM) +
						      mem_offset,
					      mem_size, ivs->shm + mem_offset);
		if (ret)
			return ret;
	}

	/* ivshmem-doorbell interrupts the guest through MSI-X; ivshmem-plain cannot. */
	if (pci_msix_vec_count(pdev) > 0) {
		ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSIX);
		if (ret < 0)
			return ret;
		ndev->irq = pci_irq_vector(pdev, 0);
	}

	if (!ivs->mailbox_size)
		dev_info(dev, "no hardware model attached: jobs fail or time out\n");
	else
		dev_warn(dev, "register mailbox not supported yet: no job can run\n");

	return nvdla_device_register(ndev);
}

static void nvdla_ivshmem_remove(struct pci_dev *pdev)
{
	nvdla_device_unregister(pci_get_drvdata(pdev));
}

/*
 * No MODULE_DEVICE_TABLE: ivshmem is a generic device, so the module is not
 * loaded automatically for it; devices without the NVDLA header are refused.
 */
static const struct pci_device_id nvdla_ivshmem_ids[] = {
	{ PCI_DEVICE(NVDLA_IVSHMEM_VENDOR, NVDLA_IVSHMEM_DEVICE) },
	{ }
};

static struct pci_driver nvdla_ivshmem_driver = {
	.name = "nvdla-ivshmem",
	.id_table = nvdla_ivshmem_ids,
	.probe = nvdla_ivshmem_probe,
	.remove = nvdla_ivshmem_remove,
};

int nvdla_ivshmem_register(void)
{
	return pci_register_driver(&nvdla_ivshmem_driver);
}

void nvdla_ivshmem_unregister(void)
{
	pci_unregister_driver(&nvdla_ivshmem_driver);
}
