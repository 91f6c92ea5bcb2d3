/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The buses an NVDLA instance is found on. Each glue fills in the hooks of
 * struct nvdla_device (register access, IRQ, buffer memory, power) and
 * calls nvdla_device_register().
 */
#ifndef NVDLA_GLUE_H
#define NVDLA_GLUE_H

#include <linux/platform_device.h>

/* nvdla_platform.c: device-tree (or platform_device_id) instances on an SoC. */
extern struct platform_driver nvdla_platform_driver;

/* nvdla_ivshmem.c: the virtual platform, an ivshmem PCI device. */
#ifdef NVDLA_HAVE_IVSHMEM
int nvdla_ivshmem_register(void);
void nvdla_ivshmem_unregister(void);
#else
static inline int nvdla_ivshmem_register(void)
{
	return 0;
}

static inline void nvdla_ivshmem_unregister(void)
{
}
#endif

#endif /* NVDLA_GLUE_H */
