/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * NVDLA DRM driver: the interface between userspace and the kernel.
 *
 * Two generations of ioctls share the render node (/dev/dri/renderD*):
 *
 * - The four ioctls of the original NVDLA kernel driver (nvdla/sw, 2017),
 *   with their numbers, structure layouts and names, so that the original
 *   runtime keeps working unchanged: SUBMIT, GEM_CREATE, GEM_MMAP and
 *   GEM_DESTROY. See "Original ioctls" below for what the kernel checks.
 *
 * - The current interface: GET_PARAM, BO_CREATE, BO_INFO, JOB_SUBMIT and
 *   WAIT. Every structure is naturally aligned, every reserved or padding
 *   field must be zero (else -EINVAL), arrays carry their element size so
 *   that both sides can grow, and timeouts are absolute.
 *
 * Buffer objects (BOs) are physically contiguous (NVDLA has no MMU) and
 * start on a page boundary at least, which satisfies every alignment rule of
 * the hardware (32 bytes for feature data, 256 bytes for weights, WMB and
 * WGS). CPU mappings are write-combined. BOs are freed with the generic
 * DRM_IOCTL_GEM_CLOSE (or GEM_DESTROY) and shared with DRM PRIME.
 */
#ifndef _UAPI_NVDLA_DRM_H_
#define _UAPI_NVDLA_DRM_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Original ioctls (binary compatible with nvdla/sw's nvdla_ioctl.h)
 *
 * SUBMIT runs each task as one job, in order, and returns when the last has
 * finished: 0 when all succeeded, else the error of the first failed task
 * (-EINVAL: the validator rejected a descriptor; -ETIMEDOUT: the task hung
 * and the engine was reset;
 * -EIO: the hardware reported an error). Checked: 1 <= num_tasks <= 24,
 * flags (only NVDLA_SUBMIT_FLAGS_ATOMIC, which has no effect), 1 <=
 * num_addresses <= 6144, each entry's handle is a dma-buf file descriptor
 * of a buffer of this device (-EBADF: not a file descriptor; -EINVAL: not
 * such a buffer), offset < size of that buffer and (buffer address + offset)
 * a multiple of the hardware's atom size. Entry 0 holds the network
 * descriptor. Not read: version, the tasks' timeout and the entries'
 * reserved fields (the original runtime leaves them uninitialised).
 *
 * GEM_CREATE allocates size bytes (rounded up to a page); flags must be 0.
 * GEM_MMAP returns the offset to mmap() on the DRM file; reserved is ignored.
 * GEM_DESTROY closes the handle (as DRM_IOCTL_GEM_CLOSE).
 * ------------------------------------------------------------------------
 */

/* One address-list entry: a dma-buf file descriptor and a byte offset. */
struct nvdla_mem_handle {
	__u32 handle;
	__u32 reserved;
	__u64 offset;
};

struct nvdla_ioctl_submit_task {
#define NVDLA_MAX_BUFFERS_PER_TASK (6144)
	__u32 num_addresses;
#define NVDLA_NO_TIMEOUT (0xffffffff)
	__u32 timeout;
	__u64 address_list; /* pointer to num_addresses struct nvdla_mem_handle */
};

struct nvdla_submit_args {
	__u64 tasks; /* pointer to num_tasks struct nvdla_ioctl_submit_task */
	__u16 num_tasks;
#define NVDLA_MAX_TASKS_PER_SUBMIT 24
#define NVDLA_SUBMIT_FLAGS_ATOMIC (1 << 0)
	__u16 flags;
	__u32 version;
};

struct nvdla_gem_create_args {
	__u32 handle; /* out */
	__u32 flags;
	__u64 size;
};

struct nvdla_gem_map_offset_args {
	__u32 handle;
	__u32 reserved;
	__u64 offset; /* out */
};

struct nvdla_gem_destroy_args {
	__u32 handle;
};

#define DRM_NVDLA_SUBMIT 0x00
#define DRM_NVDLA_GEM_CREATE 0x01
#define DRM_NVDLA_GEM_MMAP 0x02
#define DRM_NVDLA_GEM_DESTROY 0x03

/* ------------------------------------------------------------------------
 * Current interface
 * ------------------------------------------------------------------------
 */
#define DRM_NVDLA_GET_PARAM 0x04
#define DRM_NVDLA_BO_CREATE 0x05
#define DRM_NVDLA_BO_INFO 0x06
#define DRM_NVDLA_JOB_SUBMIT 0x07
#define DRM_NVDLA_WAIT 0x08

/* Version of this interface, NVDLA_PARAM_API_VERSION. */
#define NVDLA_API_VERSION 1

/* Hardware configurations, NVDLA_PARAM_HW_CONFIG. */
enum drm_nvdla_hw_config {
	NVDLA_HW_CONFIG_NV_FULL = 1,
	NVDLA_HW_CONFIG_NV_SMALL = 2,
	NVDLA_HW_CONFIG_NV_SMALL_256 = 3,
	NVDLA_HW_CONFIG_NV_SMALL_256_FULL = 4,
	NVDLA_HW_CONFIG_NV_MEDIUM_512 = 5,
	NVDLA_HW_CONFIG_NV_MEDIUM_1024_FULL = 6,
	NVDLA_HW_CONFIG_NV_LARGE = 7,
};

/* Hardware features, bits of NVDLA_PARAM_HW_FEATURES. */
#define NVDLA_HW_FEATURE_INT8 (1u << 0)
#define NVDLA_HW_FEATURE_INT16 (1u << 1)
#define NVDLA_HW_FEATURE_FP16 (1u << 2)
#define NVDLA_HW_FEATURE_WINOGRAD (1u << 3)
#define NVDLA_HW_FEATURE_BATCH (1u << 4)
#define NVDLA_HW_FEATURE_WEIGHT_COMPRESSION (1u << 5)
#define NVDLA_HW_FEATURE_SECONDARY_MEMIF (1u << 6)
#define NVDLA_HW_FEATURE_SDP_LUT (1u << 7)
#define NVDLA_HW_FEATURE_SDP_BS (1u << 8)
#define NVDLA_HW_FEATURE_SDP_BN (1u << 9)
#define NVDLA_HW_FEATURE_SDP_EW (1u << 10)
#define NVDLA_HW_FEATURE_BDMA (1u << 11)
#define NVDLA_HW_FEATURE_RUBIK (1u << 12)
#define NVDLA_HW_FEATURE_PDP (1u << 13)
#define NVDLA_HW_FEATURE_CDP (1u << 14)

/* Engines, NVDLA_PARAM_ENGINE (test builds of the module report 0x7e57: jobs all fail). */
#define NVDLA_ENGINE_NONE 0 /* no engine: every job fails with -ENODEV */
#define NVDLA_ENGINE_DLA 1  /* kmd/engine/: validator, scheduler, register programming */

enum drm_nvdla_param {
	NVDLA_PARAM_API_VERSION = 0,	  /* NVDLA_API_VERSION */
	NVDLA_PARAM_DRIVER_VERSION = 1,	  /* major << 32 | minor << 16 | patch */
	NVDLA_PARAM_HW_CONFIG = 2,	  /* enum drm_nvdla_hw_config */
	NVDLA_PARAM_HW_FEATURES = 3,	  /* NVDLA_HW_FEATURE_* */
	NVDLA_PARAM_ATOM_BYTES = 4,	  /* bytes of a memory atom */
	NVDLA_PARAM_MAC_ATOMIC_C = 5,	  /* input channels per MAC cycle */
	NVDLA_PARAM_MAC_ATOMIC_K = 6,	  /* kernels per MAC cycle (int8) */
	NVDLA_PARAM_CBUF_BYTES = 7,	  /* bytes of the convolution buffer */
	NVDLA_PARAM_ADDRESS_BITS = 8,	  /* width of a device address */
	NVDLA_PARAM_MEMORY_SIZE = 9,	  /* bytes of BO memory, 0: system DMA memory */
	NVDLA_PARAM_BO_ALIGNMENT = 10,	  /* alignment every BO has at least */
	NVDLA_PARAM_MAX_ADDRESSES = 11,	  /* address-list entries per job */
	NVDLA_PARAM_MAX_JOBS = 12,	  /* jobs per JOB_SUBMIT */
	NVDLA_PARAM_JOB_TIMEOUT_MS = 13, /* a job running longer fails with -ETIMEDOUT */
	NVDLA_PARAM_ENGINE = 14,	  /* NVDLA_ENGINE_* */
};

/* DRM_IOCTL_NVDLA_GET_PARAM: one value; -EINVAL for an unknown param. */
struct drm_nvdla_get_param {
	__u32 param; /* enum drm_nvdla_param */
	__u32 pad;   /* must be zero */
	__u64 value; /* out */
};

/*
 * DRM_IOCTL_NVDLA_BO_CREATE: a buffer of size bytes (rounded up to a page)
 * whose device address is a multiple of alignment (0: the default,
 * NVDLA_PARAM_BO_ALIGNMENT; else a power of two up to 1 GiB). The memory is
 * zeroed. -ENOMEM when no contiguous range is free.
 */
struct drm_nvdla_bo_create {
	__u64 size;
	__u64 alignment;
	__u32 flags;	    /* must be zero */
	__u32 handle;	    /* out: GEM handle */
	__u64 dma_address;  /* out: device address of the first byte (0 unless CAP_SYS_ADMIN) */
	__u64 mmap_offset;  /* out: offset to mmap() on the DRM file */
};

/* DRM_IOCTL_NVDLA_BO_INFO: what BO_CREATE returns, for any handle (imported too). */
struct drm_nvdla_bo_info {
	__u32 handle;
	__u32 flags;	    /* must be zero */
	__u64 size;	    /* out: bytes */
	__u64 dma_address;  /* out: as BO_CREATE's */
	__u64 mmap_offset;  /* out */
};

/* One address-list entry of a job: a GEM handle and a byte offset into it. */
struct drm_nvdla_address {
	__u32 handle;
	__u32 flags; /* must be zero */
	__u64 offset;
};

/*
 * One job: one task of a loadable, i.e. a network descriptor (address-list
 * entry 0) and the buffers its descriptors refer to by list index.
 *
 * The job starts when the fences of all in_syncobjs have signalled and every
 * earlier job touching the same buffers (implicit sync, also across
 * processes and devices) has finished. Jobs of one DRM file run in
 * submission order. out_syncobj (0: none) receives the job's fence; job_id
 * is set once the job is queued and names it in DRM_IOCTL_NVDLA_WAIT.
 */
struct drm_nvdla_job {
	__u64 addresses;	     /* pointer to address_count entries */
	__u64 in_syncobjs;	     /* pointer to in_syncobj_count __u32 handles */
	__u32 address_count;	     /* 1 .. NVDLA_PARAM_MAX_ADDRESSES */
	__u32 address_struct_size;   /* sizeof(struct drm_nvdla_address) */
	__u32 in_syncobj_count;
	__u32 out_syncobj;
	__u32 flags;		     /* must be zero */
	__u32 job_id;		     /* out, 0 if the job was not queued */
	/*
	 * Interface version of the task's descriptors (the loadable's DLA
	 * blobs): major << 16 | minor << 8 | sub, e.g. 0x000c05 for 0.12.5;
	 * 0: not known (the engine decides, as for the original SUBMIT).
	 */
	__u32 dla_version;
	__u32 pad;		     /* must be zero */
};

/*
 * DRM_IOCTL_NVDLA_JOB_SUBMIT: queue job_count jobs. The arguments of all
 * jobs are checked before any is queued (-EINVAL, -ENOENT for an unknown
 * GEM or syncobj handle, -E2BIG for too many entries, -EINVAL or
 * -EOPNOTSUPP when the validator rejects a descriptor); -EBUSY when 1024 jobs of this DRM file are
 * unfinished. An allocation failure or a signal while queueing can leave
 * the earlier jobs queued (their job_id is set). Element sizes
 * smaller than the current structures are rejected; larger ones must have
 * zero bytes beyond what this header knows.
 */
struct drm_nvdla_submit {
	__u64 jobs;		/* pointer to job_count jobs */
	__u32 job_count;	/* 1 .. NVDLA_PARAM_MAX_JOBS */
	__u32 job_struct_size;	/* sizeof(struct drm_nvdla_job) */
	__u32 flags;		/* must be zero */
	__u32 pad;		/* must be zero */
};

/*
 * DRM_IOCTL_NVDLA_WAIT: wait until job_id has finished or CLOCK_MONOTONIC
 * reaches timeout_ns (absolute; a time in the past only polls). Returns 0
 * with status = 0 (success) or the job's negative errno; -ETIMEDOUT if the
 * job is still running; -ENOENT for an id this file never had or has
 * forgotten (a DRM file remembers its last 1024 jobs).
 */
struct drm_nvdla_wait {
	__u32 job_id;
	__u32 flags;	  /* must be zero */
	__s64 timeout_ns;
	__s32 status;	  /* out */
	__u32 pad;	  /* must be zero */
};

#define DRM_IOCTL_NVDLA_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NVDLA_SUBMIT, struct nvdla_submit_args)
#define DRM_IOCTL_NVDLA_GEM_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NVDLA_GEM_CREATE, struct nvdla_gem_create_args)
#define DRM_IOCTL_NVDLA_GEM_MMAP \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NVDLA_GEM_MMAP, struct nvdla_gem_map_offset_args)
#define DRM_IOCTL_NVDLA_GEM_DESTROY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NVDLA_GEM_DESTROY, struct nvdla_gem_destroy_args)
#define DRM_IOCTL_NVDLA_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NVDLA_GET_PARAM, struct drm_nvdla_get_param)
#define DRM_IOCTL_NVDLA_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NVDLA_BO_CREATE, struct drm_nvdla_bo_create)
#define DRM_IOCTL_NVDLA_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NVDLA_BO_INFO, struct drm_nvdla_bo_info)
#define DRM_IOCTL_NVDLA_JOB_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NVDLA_JOB_SUBMIT, struct drm_nvdla_submit)
#define DRM_IOCTL_NVDLA_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NVDLA_WAIT, struct drm_nvdla_wait)

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_NVDLA_DRM_H_ */
