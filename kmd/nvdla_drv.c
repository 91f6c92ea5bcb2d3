// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * NVDLA DRM driver: the render node, its ioctls, the open files, and the
 * module that registers the SoC (platform) and virtual-platform (PCI) glue.
 */
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_prime.h>
#include <linux/module.h>
#include <linux/slab.h>

#include <uapi/drm/nvdla_drm.h>

#include "nvdla_compat.h"
#include "nvdla_drv.h"
#include "nvdla_glue.h"

#if defined(HAVE_DRM_ACCEL)
#include <drm/drm_accel.h>
#endif

static unsigned int job_timeout_ms = 5000;
module_param(job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms, "A job running longer fails with ETIMEDOUT and resets the engine (default 5000)");

static bool accel;
module_param(accel, bool, 0444);
MODULE_PARM_DESC(accel, "Register compute-accelerator nodes (/dev/accel/accel*) instead of render nodes, where the kernel has them (default 0: render nodes, which the original runtime needs)");

static unsigned int file_queue_mib = 64;
module_param(file_queue_mib, uint, 0444);
MODULE_PARM_DESC(file_queue_mib, "Kernel memory the unfinished jobs of one open file may hold, in MiB; more is refused with EBUSY (default 64)");

#ifdef NVDLA_SELFTEST_ENGINE
static bool selftest_engine;
module_param(selftest_engine, bool, 0444);
MODULE_PARM_DESC(selftest_engine, "Test builds only: pass jobs through the scheduler to an engine that fails them");
#endif

unsigned int nvdla_job_timeout_ms(void)
{
	return clamp(job_timeout_ms, 10u, 600000u);
}

u64 nvdla_file_queue_limit(void)
{
	return (u64)clamp(file_queue_mib, 1u, 65536u) << 20;
}

const struct nvdla_engine_ops *nvdla_default_engine(void)
{
#ifdef NVDLA_SELFTEST_ENGINE
	if (selftest_engine)
		return &nvdla_engine_selftest;
#endif
	return &nvdla_engine_dla;
}

/* The features of nvdla_config.h are the interface's: keep them equal. */
static_assert(NVDLA_HW_FEATURE_INT8 == NVDLA_FEATURE_INT8);
static_assert(NVDLA_HW_FEATURE_INT16 == NVDLA_FEATURE_INT16);
static_assert(NVDLA_HW_FEATURE_FP16 == NVDLA_FEATURE_FP16);
static_assert(NVDLA_HW_FEATURE_WINOGRAD == NVDLA_FEATURE_WINOGRAD);
static_assert(NVDLA_HW_FEATURE_BATCH == NVDLA_FEATURE_BATCH);
static_assert(NVDLA_HW_FEATURE_WEIGHT_COMPRESSION == NVDLA_FEATURE_WEIGHT_COMPRESSION);
static_assert(NVDLA_HW_FEATURE_SECONDARY_MEMIF == NVDLA_FEATURE_SECONDARY_MEMIF);
static_assert(NVDLA_HW_FEATURE_SDP_LUT == NVDLA_FEATURE_SDP_LUT);
static_assert(NVDLA_HW_FEATURE_SDP_BS == NVDLA_FEATURE_SDP_BS);
static_assert(NVDLA_HW_FEATURE_SDP_BN == NVDLA_FEATURE_SDP_BN);
static_assert(NVDLA_HW_FEATURE_SDP_EW == NVDLA_FEATURE_SDP_EW);
static_assert(NVDLA_HW_FEATURE_BDMA == NVDLA_FEATURE_BDMA);
static_assert(NVDLA_HW_FEATURE_RUBIK == NVDLA_FEATURE_RUBIK);
static_assert(NVDLA_HW_FEATURE_PDP == NVDLA_FEATURE_PDP);
static_assert(NVDLA_HW_FEATURE_CDP == NVDLA_FEATURE_CDP);

/* The interface's layouts, identical for 32- and 64-bit userspace (no compat ioctl). */
static_assert(sizeof(struct nvdla_submit_args) == 16);
static_assert(sizeof(struct nvdla_ioctl_submit_task) == 16);
static_assert(sizeof(struct nvdla_mem_handle) == 16);
static_assert(sizeof(struct nvdla_gem_create_args) == 16);
static_assert(sizeof(struct nvdla_gem_map_offset_args) == 16);
static_assert(sizeof(struct nvdla_gem_destroy_args) == 4);
static_assert(sizeof(struct drm_nvdla_get_param) == 16);
static_assert(sizeof(struct drm_nvdla_bo_create) == 40);
static_assert(sizeof(struct drm_nvdla_bo_info) == 32);
static_assert(sizeof(struct drm_nvdla_address) == 16);
static_assert(sizeof(struct drm_nvdla_job) == 48);
static_assert(sizeof(struct drm_nvdla_submit) == 24);
static_assert(sizeof(struct drm_nvdla_wait) == 24);

static int nvdla_ioctl_get_param(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct nvdla_device *ndev = to_nvdla_device(drm);
	const struct nvdla_hw_config *cfg = ndev->config;
	struct drm_nvdla_get_param *args = data;

	if (args->pad)
		return -EINVAL;

	switch (args->param) {
	case NVDLA_PARAM_API_VERSION:
		args->value = NVDLA_API_VERSION;
		break;
	case NVDLA_PARAM_DRIVER_VERSION:
		args->value = (u64)NVDLA_DRIVER_MAJOR << 32 | NVDLA_DRIVER_MINOR << 16 |
			      NVDLA_DRIVER_PATCH;
		break;
	case NVDLA_PARAM_HW_CONFIG:
		args->value = ndev->uapi_config;
		break;
	case NVDLA_PARAM_HW_FEATURES:
		args->value = cfg->features;
		break;
	case NVDLA_PARAM_ATOM_BYTES:
		args->value = cfg->atom_bytes;
		break;
	case NVDLA_PARAM_MAC_ATOMIC_C:
		args->value = cfg->mac_atomic_c;
		break;
	case NVDLA_PARAM_MAC_ATOMIC_K:
		args->value = cfg->mac_atomic_k;
		break;
	case NVDLA_PARAM_CBUF_BYTES:
		args->value = nvdla_hw_cbuf_bytes(cfg);
		break;
	case NVDLA_PARAM_ADDRESS_BITS:
		args->value = cfg->address_bits;
		break;
	case NVDLA_PARAM_MEMORY_SIZE:
		args->value = ndev->carveout.size;
		break;
	case NVDLA_PARAM_BO_ALIGNMENT:
		args->value = PAGE_SIZE;
		break;
	case NVDLA_PARAM_MAX_ADDRESSES:
		args->value = NVDLA_MAX_ADDRESSES;
		break;
	case NVDLA_PARAM_MAX_JOBS:
		args->value = NVDLA_MAX_JOBS;
		break;
	case NVDLA_PARAM_JOB_TIMEOUT_MS:
		args->value = ndev->job_timeout_ms;
		break;
	case NVDLA_PARAM_ENGINE:
		args->value = ndev->engine->id;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

static int nvdla_open(struct drm_device *drm, struct drm_file *file)
{
	struct nvdla_file *nfile;
	int ret;

	nfile = kzalloc(sizeof(*nfile), GFP_KERNEL);
	if (!nfile)
		return -ENOMEM;

	kref_init(&nfile->ref);
	nfile->ndev = to_nvdla_device(drm);
	ret = nvdla_job_open(nfile);
	if (ret) {
		kfree(nfile);
		return ret;
	}
	file->driver_priv = nfile;
	return 0;
}

static void nvdla_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct nvdla_file *nfile = file->driver_priv;

	nvdla_job_close(nfile);
	nvdla_file_put(nfile);
}

static const struct drm_ioctl_desc nvdla_ioctls[] = {
	DRM_IOCTL_DEF_DRV(NVDLA_SUBMIT, nvdla_ioctl_submit_legacy, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NVDLA_GEM_CREATE, nvdla_ioctl_gem_create, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NVDLA_GEM_MMAP, nvdla_ioctl_gem_mmap, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NVDLA_GEM_DESTROY, nvdla_ioctl_gem_destroy, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NVDLA_GET_PARAM, nvdla_ioctl_get_param, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NVDLA_BO_CREATE, nvdla_ioctl_bo_create, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NVDLA_BO_INFO, nvdla_ioctl_bo_info, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NVDLA_JOB_SUBMIT, nvdla_ioctl_job_submit, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(NVDLA_WAIT, nvdla_ioctl_wait, DRM_RENDER_ALLOW),
};

DEFINE_DRM_GEM_FOPS(nvdla_drm_fops);

/* What the render-node and the accel-node drivers share. */
#if defined(HAVE_DRM_DRIVER_PRIME_HANDLE_TO_FD)
#define NVDLA_DRIVER_PRIME_FDS \
	.prime_handle_to_fd = drm_gem_prime_handle_to_fd, \
	.prime_fd_to_handle = drm_gem_prime_fd_to_handle,
#else
#define NVDLA_DRIVER_PRIME_FDS
#endif
#if defined(HAVE_DRM_DRIVER_GEM_PRIME_MMAP)
#define NVDLA_DRIVER_PRIME_MMAP .gem_prime_mmap = drm_gem_prime_mmap,
#else
#define NVDLA_DRIVER_PRIME_MMAP
#endif
#if defined(HAVE_DRM_DRIVER_DATE)
#define NVDLA_DRIVER_DATE .date = "20251121",
#else
#define NVDLA_DRIVER_DATE
#endif
#define NVDLA_DRIVER_COMMON \
	.open = nvdla_open, \
	.postclose = nvdla_postclose, \
	.ioctls = nvdla_ioctls, \
	.num_ioctls = ARRAY_SIZE(nvdla_ioctls), \
	NVDLA_DRIVER_PRIME_FDS \
	NVDLA_DRIVER_PRIME_MMAP \
	.gem_prime_import_sg_table = nvdla_gem_prime_import_sg_table, \
	.name = "nvdla", \
	.desc = "NVIDIA Deep Learning Accelerator", \
	NVDLA_DRIVER_DATE \
	.major = NVDLA_DRIVER_MAJOR, \
	.minor = NVDLA_DRIVER_MINOR, \
	.patchlevel = NVDLA_DRIVER_PATCH

static const struct drm_driver nvdla_render_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ,
	.fops = &nvdla_drm_fops,
	NVDLA_DRIVER_COMMON,
};

#if defined(HAVE_DRM_ACCEL)
DEFINE_DRM_ACCEL_FOPS(nvdla_accel_fops);

static const struct drm_driver nvdla_accel_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL | DRIVER_SYNCOBJ,
	.fops = &nvdla_accel_fops,
	NVDLA_DRIVER_COMMON,
};
#endif

/* A render node (the default), or with accel=1 an accel node where the kernel has them. */
const struct drm_driver *nvdla_drm_driver(struct device *dev)
{
#if defined(HAVE_DRM_ACCEL)
	if (accel)
		return &nvdla_accel_driver;
#else
	if (accel)
		dev_warn(dev, "accel=1: this kernel has no compute-accelerator nodes (CONFIG_DRM_ACCEL): a render node instead\n");
#endif
	return &nvdla_render_driver;
}

static int __init nvdla_init(void)
{
	int ret;

	ret = platform_driver_register(&nvdla_platform_driver);
	if (ret)
		return ret;

	ret = nvdla_ivshmem_register();
	if (ret)
		platform_driver_unregister(&nvdla_platform_driver);
	return ret;
}

static void __exit nvdla_exit(void)
{
	nvdla_ivshmem_unregister();
	platform_driver_unregister(&nvdla_platform_driver);
}

module_init(nvdla_init);
module_exit(nvdla_exit);

MODULE_DESCRIPTION("NVIDIA Deep Learning Accelerator (NVDLA) DRM driver");
MODULE_LICENSE("Dual MIT/GPL");
NVDLA_IMPORT_NS_DMA_BUF();
