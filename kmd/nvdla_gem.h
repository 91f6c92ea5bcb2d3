/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Buffer objects: physically contiguous memory the accelerator addresses
 * directly (NVDLA has no MMU). Three kinds, by where the memory comes from:
 * the instance's carve-out (node allocated), dma_alloc (vaddr, no node), or
 * another driver's dma-buf verified to be contiguous (imported).
 */
#ifndef NVDLA_GEM_H
#define NVDLA_GEM_H

#include <drm/drm_gem.h>
#include <drm/drm_mm.h>

struct nvdla_device;

struct nvdla_bo {
	struct drm_gem_object base;
	struct nvdla_device *ndev;
	dma_addr_t dma;		  /* device address of the first byte */
	void *vaddr;		  /* kernel mapping, NULL if imported */
	struct drm_mm_node node;  /* carve-out range */
	size_t alloc_size;	  /* bytes from dma_alloc (>= size, for alignment) */
	struct sg_table *sgt;	  /* imported: the exporter's mapping for us */
};

static inline struct nvdla_bo *to_nvdla_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct nvdla_bo, base);
}

#endif /* NVDLA_GEM_H */
