// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Validation of one operation: every enumeration, range and register field
 * of its descriptors, and every memory range its processor would read or
 * write, computed from the registers the engine will program, against the
 * address-list entry the range names (docs/engine.md lists the rules).
 * The rules every processor shares are here; each processor's checks are
 * beside its programming, in dla_<processor>.c.
 */
#include "dla_internal.h"

static const char *const mem_names[] = {"MC", "CV", "HW"};

const char *dla_mem_name(unsigned int type)
{
	return type <= NVDLA_DLA_MEM_HW ? mem_names[type] : "?";
}
/* ---- generic rules ---- */

int dla_fail_range(struct dla_check *c, const char *what, const char *field, uint64_t value,
		   uint64_t lo, uint64_t hi)
{
	return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, field, value, value < lo ? lo : hi,
			"%s %s is %llu, outside %llu..%llu", what, field, (unsigned long long)value,
			(unsigned long long)lo, (unsigned long long)hi);
}

int dla_check_range(struct dla_check *c, const char *what, const char *field, uint64_t value,
		    uint64_t lo, uint64_t hi)
{
	if (value < lo || value > hi)
		return dla_fail_range(c, what, field, value, lo, hi);
	return 0;
}

int dla_check_enum(struct dla_check *c, const char *what, const char *field, uint64_t value,
		   uint64_t max)
{
	if (value > max)
		return dla_fail(c->err, NVDLA_DLA_E_ENUM, c->op, field, value, max,
				"%s %s is %llu, not a valid value (0..%llu)", what, field,
				(unsigned long long)value, (unsigned long long)max);
	return 0;
}

int dla_check_feature_bit(struct dla_check *c, const char *what, uint32_t feature, const char *name)
{
	if (!nvdla_hw_has(c->cfg, feature))
		return dla_fail(c->err, NVDLA_DLA_E_UNSUPPORTED, c->op, name, 0, 0,
				"%s needs %s, which %s does not have", what, name, c->cfg->name);
	return 0;
}

int dla_check_precision(struct dla_check *c, const char *what, const char *field,
			unsigned int precision)
{
	static const char *const names[] = {"int8", "int16", "fp16"};
	int ret = dla_check_enum(c, what, field, precision, NVDLA_DLA_PRECISION_FP16);

	if (ret)
		return ret;
	if ((precision == NVDLA_DLA_PRECISION_INT16 &&
	     !nvdla_hw_has(c->cfg, NVDLA_FEATURE_INT16)) ||
	    (precision == NVDLA_DLA_PRECISION_FP16 && !nvdla_hw_has(c->cfg, NVDLA_FEATURE_FP16)))
		return dla_fail(c->err, NVDLA_DLA_E_UNSUPPORTED, c->op, field, precision, 0,
				"%s %s is %s, which %s does not support", what, field,
				names[precision], c->cfg->name);
	return 0;
}

int dla_check_dims(struct dla_check *c, const char *what, const char *field,
		   const struct nvdla_dla_data_cube *cube)
{
	if (cube->width < 1 || cube->width > DLA_MAX_DIM)
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, field, cube->width, DLA_MAX_DIM,
				"%s %s width is %u, outside 1..%u", what, field, cube->width,
				DLA_MAX_DIM);
	if (cube->height < 1 || cube->height > DLA_MAX_DIM)
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, field, cube->height, DLA_MAX_DIM,
				"%s %s height is %u, outside 1..%u", what, field, cube->height,
				DLA_MAX_DIM);
	if (cube->channel < 1 || cube->channel > DLA_MAX_DIM)
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, field, cube->channel, DLA_MAX_DIM,
				"%s %s channel is %u, outside 1..%u", what, field, cube->channel,
				DLA_MAX_DIM);
	return 0;
}

int dla_same_dims(struct dla_check *c, const char *what, const char *field,
		  const struct nvdla_dla_data_cube *a, const struct nvdla_dla_data_cube *b,
		  const char *other)
{
	if (a->width != b->width || a->height != b->height || a->channel != b->channel)
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, field, 0, 0,
				"%s %s is %ux%ux%u but %s is %ux%ux%u; they must match", what,
				field, a->width, a->height, a->channel, other, b->width, b->height,
				b->channel);
	return 0;
}

/* The memory type of a cube: MC or CV (when the configuration has CV), or HW when allowed. */
int dla_check_mem_type(struct dla_check *c, const char *what, const char *field, unsigned int type,
		       bool allow_hw)
{
	int ret = dla_check_enum(c, what, field, type, NVDLA_DLA_MEM_HW);

	if (ret)
		return ret;
	if (type == NVDLA_DLA_MEM_HW && !allow_hw)
		return dla_fail(c->err, NVDLA_DLA_E_MEMORY, c->op, field, type, 0,
				"%s %s has memory type HW, but this surface must be in memory",
				what, field);
	if (type == NVDLA_DLA_MEM_CV && !nvdla_hw_has(c->cfg, NVDLA_FEATURE_SECONDARY_MEMIF))
		return dla_fail(c->err, NVDLA_DLA_E_UNSUPPORTED, c->op, field, type, 0,
				"%s %s is in CV-SRAM, but %s has no secondary memory interface",
				what, field, c->cfg->name);
	return 0;
}

/*
 * The range [offset, offset + footprint) of address-list entry @index, read or
 * written as memory type @type, starting aligned to @align.
 */
int dla_check_memory(struct dla_check *c, const char *what, const char *field, unsigned int type,
		     int32_t index, int64_t offset, uint64_t footprint, uint32_t align)
{
	const struct nvdla_dla_task_source *src = c->src;
	const struct nvdla_dla_buffer *buf;
	uint64_t address, end;
	bool secondary;

	if (index < 0 || (uint32_t)index >= src->num_addresses)
		return dla_fail(c->err, NVDLA_DLA_E_ADDRESS, c->op, field, (uint64_t)(int64_t)index,
				src->num_addresses,
				"%s %s names address-list entry %d; the task has %u entries", what,
				field, index, src->num_addresses);
	buf = &src->addresses[index];
	secondary = (buf->flags & NVDLA_DLA_BUFFER_SECONDARY) != 0;
	if (secondary != (type == NVDLA_DLA_MEM_CV))
		return dla_fail(c->err, NVDLA_DLA_E_MEMORY, c->op, field, type, 0,
				"%s %s has memory type %s, but address-list entry %d is %s memory",
				what, field, dla_mem_name(type), index,
				secondary ? "secondary (CV-SRAM)" : "primary");
	if (offset < 0)
		return dla_fail(c->err, NVDLA_DLA_E_EXTENT, c->op, field, (uint64_t)offset, 0,
				"%s %s starts %llu bytes before address-list entry %d", what, field,
				(unsigned long long)-offset, index);
	if ((uint64_t)offset > buf->size || footprint > buf->size - (uint64_t)offset)
		return dla_fail(
		    c->err, NVDLA_DLA_E_EXTENT, c->op, field, (uint64_t)offset + footprint,
		    buf->size,
		    "%s %s: %llu bytes at offset %llu end at %llu, past the %llu bytes of "
		    "address-list entry %d",
		    what, field, (unsigned long long)footprint, (unsigned long long)offset,
		    (unsigned long long)((uint64_t)offset + footprint),
		    (unsigned long long)buf->size, index);
	address = buf->address + (uint64_t)offset;
	if (align > 1 && address % align)
		return dla_fail(c->err, NVDLA_DLA_E_ALIGN, c->op, field, address, align,
				"%s %s starts at 0x%llx, which is not a multiple of %u bytes", what,
				field, (unsigned long long)address, align);
	end = address + footprint;
	if (end < address ||
	    (c->cfg->address_bits < 64 && end > ((uint64_t)1 << c->cfg->address_bits)))
		return dla_fail(c->err, NVDLA_DLA_E_EXTENT, c->op, field, end,
				c->cfg->address_bits < 64 ? (uint64_t)1 << c->cfg->address_bits : 0,
				"%s %s ends at 0x%llx, beyond the %u-bit address space of %s", what,
				field, (unsigned long long)end, c->cfg->address_bits, c->cfg->name);
	return 0;
}

int dla_check_aligned(struct dla_check *c, const char *what, const char *field, uint64_t value,
		      uint32_t align)
{
	if (align > 1 && value % align)
		return dla_fail(c->err, NVDLA_DLA_E_ALIGN, c->op, field, value, align,
				"%s %s is %llu, not a multiple of %u bytes", what, field,
				(unsigned long long)value, align);
	return 0;
}

int dla_check_at_least(struct dla_check *c, const char *what, const char *field, uint64_t value,
		       uint64_t minimum, const char *reason)
{
	if (value < minimum)
		return dla_fail(c->err, NVDLA_DLA_E_STRIDE, c->op, field, value, minimum,
				"%s %s is %llu, smaller than the %llu bytes %s", what, field,
				(unsigned long long)value, (unsigned long long)minimum, reason);
	return 0;
}

/* The cube's offset in its entry: 0 in the 0.10/0.11 layout (validated copies carry 0). */
int64_t dla_cube_offset(const struct nvdla_dla_data_cube *cube)
{
	return (int64_t)cube->offset;
}

/*
 * A feature-layout surface: @surfaces surfaces of @height lines of
 * @line_bytes, with the cube's line and surface strides (checked when they
 * separate something), plus @extra bytes (batches) past the first cube.
 */
int dla_check_surface(struct dla_check *c, const char *what, const char *field,
		      const struct nvdla_dla_data_cube *cube, uint32_t height, uint64_t surfaces,
		      uint64_t line_bytes, uint64_t extra, uint32_t align)
{
	uint64_t footprint = line_bytes;
	int ret;

	if (height > 1) {
		ret = dla_check_aligned(c, what, "line_stride", cube->line_stride, align);
		if (!ret)
			ret = dla_check_at_least(c, what, "line_stride", cube->line_stride,
						 line_bytes, "a line needs");
		if (ret)
			return ret;
		footprint += (uint64_t)(height - 1) * cube->line_stride;
	}
	if (surfaces > 1) {
		ret = dla_check_aligned(c, what, "surf_stride", cube->surf_stride, align);
		if (!ret)
			ret = dla_check_at_least(c, what, "surf_stride", cube->surf_stride,
						 footprint, "a surface needs");
		if (ret)
			return ret;
		footprint += (surfaces - 1) * cube->surf_stride;
	}
	return dla_check_memory(c, what, field, cube->type, cube->address, dla_cube_offset(cube),
				footprint + extra, align);
}

/* A feature data cube of @precision elements in atoms of @atom bytes. */
int dla_check_feature(struct dla_check *c, const char *what, const char *field,
		      const struct nvdla_dla_data_cube *cube, unsigned int precision,
		      uint64_t extra)
{
	uint32_t atom = c->cfg->atom_bytes;
	uint32_t lanes = atom / dla_bytes_per_element(precision);

	return dla_check_surface(c, what, field, cube, cube->height,
				 dla_div_up(cube->channel, lanes), (uint64_t)cube->width * atom,
				 extra, atom);
}

/* Batches after the first: @batches cubes @stride apart, each @one bytes. */
int dla_check_batches(struct dla_check *c, const char *what, const char *field, uint32_t batches,
		      uint32_t stride, uint64_t one, uint64_t *extra)
{
	int ret;

	*extra = 0;
	if (batches <= 1)
		return 0;
	ret = dla_check_aligned(c, what, field, stride, c->cfg->atom_bytes);
	if (!ret)
		ret = dla_check_at_least(c, what, field, stride, one, "a cube of the batch needs");
	if (ret)
		return ret;
	*extra = (uint64_t)(batches - 1) * stride;
	return 0;
}

/* Bytes of one feature cube as dla_check_feature() counts them (strides assumed checked). */
uint64_t dla_feature_bytes(const struct dla_check *c, const struct nvdla_dla_data_cube *cube,
			   unsigned int precision)
{
	uint32_t atom = c->cfg->atom_bytes;
	uint64_t surfaces = dla_div_up(cube->channel, atom / dla_bytes_per_element(precision));

	return (surfaces - 1) * cube->surf_stride +
	       (uint64_t)(cube->height - 1) * cube->line_stride + (uint64_t)cube->width * atom;
}

/* ---- entry points ---- */

int dla_check_operation(struct dla_check *c, int index)
{
	const struct nvdla_dla_task *t = c->task;
	const union nvdla_dla_operation_container *op = &t->ops[index];
	const union nvdla_dla_surface_container *surf = &t->surfaces[index];

	c->op = index;
	switch (t->graph[index].op_type) {
	case NVDLA_DLA_OP_BDMA:
		return dla_bdma_check(c, &surf->bdma_surface);
	case NVDLA_DLA_OP_CONV:
		return dla_conv_check(c, &op->conv_op, &surf->conv_surface);
	case NVDLA_DLA_OP_SDP:
		return dla_sdp_check(c, &op->sdp_op, &surf->sdp_surface);
	case NVDLA_DLA_OP_PDP:
		return dla_pdp_check(c, &op->pdp_op, &surf->pdp_surface);
	case NVDLA_DLA_OP_CDP:
		return dla_cdp_check(c, &op->cdp_op, &surf->cdp_surface);
	case NVDLA_DLA_OP_RUBIK:
		return dla_rubik_check(c, &op->rubik_op, &surf->rubik_surface);
	default:
		return dla_fail(c->err, NVDLA_DLA_E_ENUM, index, "op_type", t->graph[index].op_type,
				NVDLA_DLA_OP_COUNT - 1, "op_type %u is not a processor",
				t->graph[index].op_type);
	}
}

int dla_check_lut(struct dla_check *c, uint32_t index)
{
	const struct nvdla_dla_lut_param *lut = &c->task->luts[index];
	char what[16];
	int ret;

	c->op = -1;
	snprintf(what, sizeof(what), "LUT %u", index);
	ret = dla_check_enum(c, what, "method", lut->method, NVDLA_DLA_LUT_METHOD_LINEAR);
	if (!ret)
		ret = dla_check_enum(c, what, "hybrid_priority", lut->hybrid_priority, 1);
	if (!ret)
		ret = dla_check_enum(c, what, "underflow_priority", lut->underflow_priority, 1);
	if (!ret)
		ret = dla_check_enum(c, what, "overflow_priority", lut->overflow_priority, 1);
	return ret;
}
