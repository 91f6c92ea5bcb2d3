// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Buffer objects. NVDLA addresses memory physically, so every buffer is one
 * contiguous range of device addresses: carved out of the instance's
 * reserved range with drm_mm, allocated with dma_alloc_attrs() (CMA or a
 * device pool), or imported from a dma-buf that maps contiguously for this
 * device. Buffers start on a page boundary at least and are zeroed; CPU
 * mappings are write-combined.
 */
#include <drm/drm_file.h>
#include <drm/drm_managed.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
#include <linux/capability.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/iosys-map.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include <uapi/drm/nvdla_drm.h>

#include "nvdla_compat.h"
#include "nvdla_drv.h"
#include "nvdla_gem.h"

u64 nvdla_bo_size(const struct nvdla_bo *bo)
{
	return bo->base.size;
}

dma_addr_t nvdla_bo_dma_address(const struct nvdla_bo *bo)
{
	return bo->dma;
}

void *nvdla_bo_vaddr(const struct nvdla_bo *bo)
{
	return bo->vaddr;
}

void nvdla_bo_put(struct nvdla_bo *bo)
{
	drm_gem_object_put(&bo->base);
}

/* ---- memory of an instance ---------------------------------------------- */

/*
 * Carve-outs of live DRM devices. Buffers (and their CPU mappings through
 * exported dma-bufs) outlive an unbind, so a new binding must not hand out
 * the same memory until the old device is released.
 */
static DEFINE_MUTEX(nvdla_carveouts_lock);
static LIST_HEAD(nvdla_carveouts);

static void nvdla_carveout_release(struct drm_device *drm, void *arg)
{
	struct nvdla_carveout *co = arg;

	mutex_lock(&nvdla_carveouts_lock);
	list_del(&co->link);
	mutex_unlock(&nvdla_carveouts_lock);
	memunmap(co->vaddr);
}

/*
 * Declares the instance's carve-out: @size bytes at CPU physical address
 * @phys, seen by the accelerator at @dma. It is mapped write-combined for
 * the lifetime of the DRM device, not the binding's.
 */
int nvdla_mem_init_carveout(struct nvdla_device *ndev, phys_addr_t phys, dma_addr_t dma,
			    u64 size)
{
	struct nvdla_carveout *co = &ndev->carveout;
	u64 mask = dma_get_mask(ndev->dev);
	struct nvdla_carveout *other;
	void *vaddr;

	if (!size || !PAGE_ALIGNED(phys) || !PAGE_ALIGNED(size) || !PAGE_ALIGNED(dma)) {
		drm_err(&ndev->drm, "carve-out %pa + %llu bytes: not page aligned\n", &phys, size);
		return -EINVAL;
	}
	if (dma > mask || size - 1 > mask - dma) {
		drm_err(&ndev->drm,
			"carve-out at device address %pad + %llu bytes is beyond the %u address bits of %s\n",
			&dma, size, ndev->config->address_bits, ndev->config->name);
		return -EINVAL;
	}

	mutex_lock(&nvdla_carveouts_lock);
	list_for_each_entry(other, &nvdla_carveouts, link) {
		if (phys < other->phys + other->size && other->phys < phys + size) {
			mutex_unlock(&nvdla_carveouts_lock);
			drm_err(&ndev->drm, "carve-out %pa + %llu bytes: buffers of an earlier binding still use it (open files, mappings): close them, then bind again\n",
				&phys, size);
			return -EBUSY;
		}
	}
	vaddr = memremap(phys, size, MEMREMAP_WC);
	if (!vaddr) {
		mutex_unlock(&nvdla_carveouts_lock);
		drm_err(&ndev->drm, "cannot map the carve-out %pa + %llu bytes\n", &phys, size);
		return -ENOMEM;
	}
	co->phys = phys;
	co->dma = dma;
	co->size = size;
	co->vaddr = vaddr;
	list_add(&co->link, &nvdla_carveouts);
	mutex_unlock(&nvdla_carveouts_lock);
	return drmm_add_action_or_reset(&ndev->drm, nvdla_carveout_release, co);
}

static void nvdla_mem_release(struct drm_device *drm, void *arg)
{
	struct nvdla_device *ndev = arg;
	int leaked = atomic_read(&ndev->bo_count);

	if (leaked)
		drm_err(drm, "%d buffer objects leaked\n", leaked);
	if (ndev->carveout.size)
		drm_mm_takedown(&ndev->carveout.mm);
}

int nvdla_mem_init(struct nvdla_device *ndev)
{
	struct nvdla_carveout *co = &ndev->carveout;
	int ret;

	if (co->size) {
		ret = drmm_mutex_init(&ndev->drm, &co->lock);
		if (ret)
			return ret;
		/* Nodes are device addresses, so drm_mm's alignment is the device's. */
		drm_mm_init(&co->mm, co->dma, co->size);
	}
	return drmm_add_action_or_reset(&ndev->drm, nvdla_mem_release, ndev);
}

static int nvdla_carveout_alloc(struct nvdla_bo *bo, u64 size, u64 align)
{
	struct nvdla_carveout *co = &bo->ndev->carveout;
	int ret;

	mutex_lock(&co->lock);
	ret = drm_mm_insert_node_in_range(&co->mm, &bo->node, size, align, 0, co->dma,
					  co->dma + co->size, DRM_MM_INSERT_BEST);
	mutex_unlock(&co->lock);
	if (ret)
		return -ENOMEM;

	bo->dma = bo->node.start;
	bo->vaddr = co->vaddr + (bo->node.start - co->dma);
	memset(bo->vaddr, 0, size);
	return 0;
}

static void nvdla_carveout_free(struct nvdla_bo *bo)
{
	struct nvdla_carveout *co = &bo->ndev->carveout;

	mutex_lock(&co->lock);
	drm_mm_remove_node(&bo->node);
	mutex_unlock(&co->lock);
}

static phys_addr_t nvdla_carveout_phys(const struct nvdla_bo *bo)
{
	const struct nvdla_carveout *co = &bo->ndev->carveout;

	return co->phys + (bo->node.start - co->dma);
}

/*
 * dma_alloc_attrs() aligns an allocation to its size rounded up to a power
 * of two pages, so allocating at least @align bytes gives @align.
 */
static int nvdla_dma_alloc(struct nvdla_bo *bo, u64 size, u64 align)
{
	struct device *dev = bo->ndev->dev;
	u64 alloc = max(size, align);

	if (alloc > SIZE_MAX)
		return -ENOMEM;

	bo->vaddr = dma_alloc_attrs(dev, alloc, &bo->dma, GFP_KERNEL | __GFP_NOWARN,
				    DMA_ATTR_WRITE_COMBINE);
	if (!bo->vaddr)
		return -ENOMEM;
	bo->alloc_size = alloc;

	if (!IS_ALIGNED(bo->dma, align)) {
		drm_dbg(&bo->ndev->drm, "dma_alloc gave %pad, not %llu-byte aligned\n", &bo->dma,
			align);
		dma_free_attrs(dev, alloc, bo->vaddr, bo->dma, DMA_ATTR_WRITE_COMBINE);
		bo->vaddr = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* ---- GEM object functions ----------------------------------------------- */

static void nvdla_gem_free(struct drm_gem_object *obj)
{
	struct nvdla_bo *bo = to_nvdla_bo(obj);
	struct nvdla_device *ndev = bo->ndev;

	if (obj->import_attach)
		drm_prime_gem_destroy(obj, bo->sgt);
	else if (drm_mm_node_allocated(&bo->node))
		nvdla_carveout_free(bo);
	else if (bo->vaddr)
		dma_free_attrs(ndev->dev, bo->alloc_size, bo->vaddr, bo->dma,
			       DMA_ATTR_WRITE_COMBINE);

	drm_gem_object_release(obj);
	kfree(bo);
	atomic_dec(&ndev->bo_count);
}

static int nvdla_gem_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	struct nvdla_bo *bo = to_nvdla_bo(obj);
	unsigned long pgoff = vma->vm_pgoff - drm_vma_node_start(&obj->vma_node);
	unsigned long pages = vma_pages(vma);
	int ret;

	if (pgoff > (obj->size >> PAGE_SHIFT) || pages > (obj->size >> PAGE_SHIFT) - pgoff)
		return -EINVAL;

	if (obj->import_attach) {
		/* The exporter maps it; the reference drm_gem_mmap_obj() took is not needed. */
		vma->vm_private_data = NULL;
		vma->vm_ops = NULL;
		ret = dma_buf_mmap(obj->dma_buf, vma, pgoff);
		if (!ret)
			drm_gem_object_put(obj);
		return ret;
	}

	if (nvdla_compat_vma_is_cow(vma))
		return -EINVAL;

	if (drm_mm_node_allocated(&bo->node)) {
		nvdla_compat_vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP, 0);
		vma->vm_page_prot = pgprot_writecombine(vm_get_page_prot(vma->vm_flags));
		return io_remap_pfn_range(vma, vma->vm_start,
					  PHYS_PFN(nvdla_carveout_phys(bo)) + pgoff,
					  vma->vm_end - vma->vm_start, vma->vm_page_prot);
	}

	nvdla_compat_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP, VM_PFNMAP);
	vma->vm_pgoff = pgoff;
	return dma_mmap_attrs(bo->ndev->dev, vma, bo->vaddr, bo->dma, bo->alloc_size,
			      DMA_ATTR_WRITE_COMBINE);
}

/* For other devices importing an NVDLA buffer. */
static struct sg_table *nvdla_gem_get_sg_table(struct drm_gem_object *obj)
{
	struct nvdla_bo *bo = to_nvdla_bo(obj);
	struct sg_table *sgt;
	int ret;

	/*
	 * A carve-out is memory outside the kernel's linear map (a no-map
	 * reserved region, a BAR): importers that kmap its pages would fault.
	 */
	if (drm_mm_node_allocated(&bo->node)) {
		drm_dbg(obj->dev, "carve-out buffers have no kernel mapping other devices could use\n");
		return ERR_PTR(-EOPNOTSUPP);
	}

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);

	ret = dma_get_sgtable_attrs(bo->ndev->dev, sgt, bo->vaddr, bo->dma, bo->alloc_size,
				    DMA_ATTR_WRITE_COMBINE);
	if (ret) {
		kfree(sgt);
		return ERR_PTR(ret);
	}
	return sgt;
}

static int nvdla_gem_vmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	struct nvdla_bo *bo = to_nvdla_bo(obj);

	if (!bo->vaddr)
		return -ENOMEM;
	iosys_map_set_vaddr(map, bo->vaddr);
	return 0;
}

static void nvdla_gem_print_info(struct drm_printer *p, unsigned int indent,
				 const struct drm_gem_object *obj)
{
	const struct nvdla_bo *bo = container_of(obj, struct nvdla_bo, base);

	drm_printf_indent(p, indent, "dma_address=%pad\n", &bo->dma);
	drm_printf_indent(p, indent, "memory=%s\n",
			  obj->import_attach ? "imported" :
			  drm_mm_node_allocated(&bo->node) ? "carve-out" : "dma");
}

static const struct vm_operations_struct nvdla_gem_vm_ops = {
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static const struct drm_gem_object_funcs nvdla_gem_funcs = {
	.free = nvdla_gem_free,
	.print_info = nvdla_gem_print_info,
	.get_sg_table = nvdla_gem_get_sg_table,
	.vmap = nvdla_gem_vmap,
	.mmap = nvdla_gem_mmap,
	.vm_ops = &nvdla_gem_vm_ops,
};

static struct nvdla_bo *nvdla_bo_alloc(struct nvdla_device *ndev, u64 size)
{
	struct nvdla_bo *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return NULL;
	bo->ndev = ndev;
	bo->base.funcs = &nvdla_gem_funcs;
	drm_gem_private_object_init(&ndev->drm, &bo->base, size);
	atomic_inc(&ndev->bo_count);
	return bo;
}

/*
 * A zeroed buffer of @size bytes (rounded up to a page) whose device address
 * is a multiple of @align (a power of two, at least a page).
 */
static struct nvdla_bo *nvdla_bo_create(struct nvdla_device *ndev, u64 size, u64 align)
{
	struct nvdla_bo *bo;
	int ret;

	if (!size || size > SIZE_MAX - PAGE_SIZE)
		return ERR_PTR(-EINVAL);
	size = PAGE_ALIGN(size);
	if (ndev->carveout.size && size > ndev->carveout.size)
		return ERR_PTR(-ENOMEM);

	bo = nvdla_bo_alloc(ndev, size);
	if (!bo)
		return ERR_PTR(-ENOMEM);

	if (ndev->carveout.size)
		ret = nvdla_carveout_alloc(bo, size, align);
	else
		ret = nvdla_dma_alloc(bo, size, align);
	if (ret) {
		drm_gem_object_put(&bo->base);
		return ERR_PTR(ret);
	}
	return bo;
}

/*
 * PRIME import of another driver's buffer: accepted only if it is one
 * contiguous, page-aligned range of device addresses for this device.
 */
struct drm_gem_object *nvdla_gem_prime_import_sg_table(struct drm_device *drm,
						       struct dma_buf_attachment *attach,
						       struct sg_table *sgt)
{
	struct nvdla_device *ndev = to_nvdla_device(drm);
	size_t size = attach->dmabuf->size;
	struct scatterlist *sg;
	dma_addr_t start, next;
	struct nvdla_bo *bo;
	unsigned int i;

	if (!size || !PAGE_ALIGNED(size) || !sgt->nents)
		return ERR_PTR(-EINVAL);

	start = sg_dma_address(sgt->sgl);
	next = start;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (sg_dma_address(sg) != next) {
			drm_dbg(drm, "import: %zu bytes in %u pieces, not contiguous\n", size,
				sgt->nents);
			return ERR_PTR(-EINVAL);
		}
		next += sg_dma_len(sg);
	}
	if (next - start < size || !PAGE_ALIGNED(start)) {
		drm_dbg(drm, "import: %pad + %zu bytes is short or not page aligned\n", &start,
			size);
		return ERR_PTR(-EINVAL);
	}

	bo = nvdla_bo_alloc(ndev, size);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->dma = start;
	bo->sgt = sgt;
	return &bo->base;
}

/*
 * The original interface names buffers by dma-buf file descriptor: the
 * buffer behind @fd if it is one of this device's, with a reference.
 */
struct nvdla_bo *nvdla_bo_from_dmabuf_fd(struct nvdla_device *ndev, int fd)
{
	struct drm_gem_object *obj = NULL;
	struct dma_buf *dmabuf;

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return ERR_CAST(dmabuf);

	/* DRM's PRIME exports have a GEM object as priv. */
	if (dmabuf->ops->release == drm_gem_dmabuf_release) {
		obj = dmabuf->priv;
		if (obj->dev == &ndev->drm)
			drm_gem_object_get(obj);
		else
			obj = NULL;
	}
	dma_buf_put(dmabuf);

	return obj ? to_nvdla_bo(obj) : ERR_PTR(-EINVAL);
}

/* ---- ioctls -------------------------------------------------------------- */

/*
 * The device address userspace may learn: without an IOMMU it is the
 * physical address of kernel memory, so only CAP_SYS_ADMIN gets it (the
 * runtime needs none: jobs name buffers by handle and offset).
 */
static u64 nvdla_bo_user_address(const struct nvdla_bo *bo)
{
	return capable(CAP_SYS_ADMIN) ? bo->dma : 0;
}

/* A new buffer and its handle; the outputs are read before another thread can close it. */
static int nvdla_bo_create_handle(struct drm_file *file, struct nvdla_device *ndev, u64 size,
				  u64 align, u32 *handle, u64 *dma_address, u64 *mmap_offset)
{
	struct nvdla_bo *bo;
	int ret;

	bo = nvdla_bo_create(ndev, size, align);
	if (IS_ERR(bo))
		return PTR_ERR(bo);

	ret = drm_gem_create_mmap_offset(&bo->base);
	if (!ret) {
		*dma_address = nvdla_bo_user_address(bo);
		*mmap_offset = drm_vma_node_offset_addr(&bo->base.vma_node);
		ret = drm_gem_handle_create(file, &bo->base, handle);
	}
	/* On success the handle holds the object. */
	drm_gem_object_put(&bo->base);
	return ret;
}

int nvdla_ioctl_gem_create(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct nvdla_gem_create_args *args = data;
	u64 dma_address, mmap_offset;

	if (args->flags)
		return -EINVAL;
	return nvdla_bo_create_handle(file, to_nvdla_device(drm), args->size, PAGE_SIZE,
				      &args->handle, &dma_address, &mmap_offset);
}

int nvdla_ioctl_gem_mmap(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct nvdla_gem_map_offset_args *args = data;
	struct drm_gem_object *obj;
	int ret;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret)
		args->offset = drm_vma_node_offset_addr(&obj->vma_node);
	drm_gem_object_put(obj);
	return ret;
}

int nvdla_ioctl_gem_destroy(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct nvdla_gem_destroy_args *args = data;

	return drm_gem_handle_delete(file, args->handle);
}

int nvdla_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_nvdla_bo_create *args = data;
	u64 align = args->alignment;

	if (args->flags)
		return -EINVAL;
	if (align && (!is_power_of_2(align) || align > NVDLA_MAX_BO_ALIGNMENT))
		return -EINVAL;
	align = max_t(u64, align, PAGE_SIZE);

	return nvdla_bo_create_handle(file, to_nvdla_device(drm), args->size, align,
				      &args->handle, &args->dma_address, &args->mmap_offset);
}

int nvdla_ioctl_bo_info(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_nvdla_bo_info *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->flags)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret) {
		args->size = obj->size;
		args->dma_address = nvdla_bo_user_address(to_nvdla_bo(obj));
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	}
	drm_gem_object_put(obj);
	return ret;
}
