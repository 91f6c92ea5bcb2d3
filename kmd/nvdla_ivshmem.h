/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The NVDLA virtual platform: an ivshmem PCI device (QEMU ivshmem-plain or
 * ivshmem-doorbell, 1af4:1110) whose shared memory (BAR2) begins with this
 * header. The host side (the hardware model, or the test harness) writes
 * it before the guest driver probes; a device without it is left alone.
 *
 *   offset 0               struct nvdla_ivshmem_header (little endian)
 *   mailbox_offset         register mailbox: register accesses carried to
 *                          the hardware model through shared memory plus the
 *                          ivshmem doorbell (BAR0), answered by MSI-X vector
 *                          0; mailbox_size 0 means no model is attached
 *   memory_offset          the carve-out buffers are allocated from (device
 *                          address = guest-physical address of the byte);
 *                          memory_size 0: buffers come from guest DMA memory
 *
 * Plain C with fixed-size fields so that the host model can include it.
 */
#ifndef NVDLA_IVSHMEM_H
#define NVDLA_IVSHMEM_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
typedef uint32_t __le32;
typedef uint64_t __le64;
#endif

#define NVDLA_IVSHMEM_MAGIC "NVDLA-VP"
#define NVDLA_IVSHMEM_VERSION 1
#define NVDLA_IVSHMEM_VENDOR 0x1af4
#define NVDLA_IVSHMEM_DEVICE 0x1110

struct nvdla_ivshmem_header {
	char magic[8];		/* NVDLA_IVSHMEM_MAGIC, not NUL-terminated */
	__le32 version;		/* NVDLA_IVSHMEM_VERSION */
	__le32 header_size;	/* sizeof(struct nvdla_ivshmem_header) */
	char config[32];	/* hardware configuration ("nv_full"), NUL-terminated */
	__le64 mailbox_offset;
	__le64 mailbox_size;
	__le64 memory_offset;	/* page aligned */
	__le64 memory_size;	/* page aligned */
	__le32 flags;		/* none defined: 0 */
	__le32 reserved[7];
};

#endif /* NVDLA_IVSHMEM_H */
