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

int dla_fail_range(struct dla_check *c, const char *what, const char *field, u64 value, u64 lo,
		   u64 hi)
{
	return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, field, value, value < lo ? lo : hi,
			"%s %s is %llu, outside %llu..%llu", what, field, (unsigned long long)value,
			(unsigned long long)lo, (unsigned long long)hi);
}

int dla_check_range(struct dla_check *c, const char *what, const char *field, u64 value, u64 lo,
		    u64 hi)
{
	if (value < lo || value > hi)
		return dla_fail_range(c, what, field, value, lo, hi);
	return 0;
}

int dla_check_enum(struct dla_check *c, const char *what, const char *field, u64 value, u64 max)
{
	if (value > max)
		return dla_fail(c->err, NVDLA_DLA_E_ENUM, c->op, field, value, max,
				"%s %s is %llu, not a valid value (0..%llu)", what, field,
				(unsigned long long)value, (unsigned long long)max);
	return 0;
}

int dla_check_feature_bit(struct dla_check *c, const char *what, u32 feature, const char *name)
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
		     s32 index, s64 offset, u64 footprint, u32 align)
{
	const struct nvdla_dla_task_source *src = c->src;
	const struct nvdla_dla_buffer *buf;
	u64 address, end;
	bool secondary, wants_secondary;

	if (index < 0 || (u32)index >= src->num_addresses)
		return dla_fail(c->err, NVDLA_DLA_E_ADDRESS, c->op, field, (u64)(s64)index,
				src->num_addresses,
				"%s %s names address-list entry %d; the task has %u entries", what,
				field, index, src->num_addresses);
	buf = &src->addresses[index];
	secondary = (buf->flags & NVDLA_DLA_BUFFER_SECONDARY) != 0;
	wants_secondary = type == NVDLA_DLA_MEM_CV;
	if (secondary != wants_secondary)
		return dla_fail(c->err, NVDLA_DLA_E_MEMORY, c->op, field, type, 0,
				"%s %s has memory type %s, but address-list entry %d is %s memory",
				what, field, dla_mem_name(type), index,
				secondary ? "secondary (CV-SRAM)" : "primary");
	if (offset < 0)
		return dla_fail(c->err, NVDLA_DLA_E_EXTENT, c->op, field, (u64)offset, 0,
				"%s %s starts %llu bytes before address-list entry %d", what, field,
				(unsigned long long)-offset, index);
	if ((u64)offset > buf->size || footprint > buf->size - (u64)offset)
		return dla_fail(c->err, NVDLA_DLA_E_EXTENT, c->op, field, (u64)offset + footprint,
				buf->size,
				"%s %s: %llu bytes at offset %llu end at %llu, past the %llu bytes of address-list entry %d",
				what, field, (unsigned long long)footprint,
				(unsigned long long)offset,
				(unsigned long long)((u64)offset + footprint),
				(unsigned long long)buf->size, index);
	address = buf->address + (u64)offset;
	if (align > 1 && address % align)
		return dla_fail(c->err, NVDLA_DLA_E_ALIGN, c->op, field, address, align,
				"%s %s starts at 0x%llx, which is not a multiple of %u bytes", what,
				field, (unsigned long long)address, align);
	end = address + footprint;
	if (end < address || (c->cfg->address_bits < 64 && end > ((u64)1 << c->cfg->address_bits)))
		return dla_fail(c->err, NVDLA_DLA_E_EXTENT, c->op, field, end,
				c->cfg->address_bits < 64 ? (u64)1 << c->cfg->address_bits : 0,
				"%s %s ends at 0x%llx, beyond the %u-bit address space of %s", what,
				field, (unsigned long long)end, c->cfg->address_bits, c->cfg->name);
	return 0;
}

int dla_check_aligned(struct dla_check *c, const char *what, const char *field, u64 value,
		      u32 align)
{
	if (align > 1 && value % align)
		return dla_fail(c->err, NVDLA_DLA_E_ALIGN, c->op, field, value, align,
				"%s %s is %llu, not a multiple of %u bytes", what, field,
				(unsigned long long)value, align);
	return 0;
}

int dla_check_at_least(struct dla_check *c, const char *what, const char *field, u64 value,
		       u64 minimum, const char *reason)
{
	if (value < minimum)
		return dla_fail(c->err, NVDLA_DLA_E_STRIDE, c->op, field, value, minimum,
				"%s %s is %llu, smaller than the %llu bytes %s", what, field,
				(unsigned long long)value, (unsigned long long)minimum, reason);
	return 0;
}

/* The cube's offset in its entry: 0 in the 0.10/0.11 layout (validated copies carry 0). */
s64 dla_cube_offset(const struct nvdla_dla_data_cube *cube)
{
	return (s64)cube->offset;
}

/*
 * A feature-layout surface: @surfaces surfaces of @height lines of
 * @line_bytes, with the cube's line and surface strides (checked when they
 * separate something), plus @extra bytes (batches) past the first cube.
 */
int dla_check_surface(struct dla_check *c, const char *what, const char *field,
		      const struct nvdla_dla_data_cube *cube, u32 height, u64 surfaces,
		      u64 line_bytes, u64 extra, u32 align)
{
	u64 footprint = line_bytes;
	int ret;

	if (height > 1) {
		ret = dla_check_aligned(c, what, "line_stride", cube->line_stride, align);
		if (!ret)
			ret = dla_check_at_least(c, what, "line_stride", cube->line_stride,
						 line_bytes, "a line needs");
		if (ret)
			return ret;
		footprint += (u64)(height - 1) * cube->line_stride;
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
		      const struct nvdla_dla_data_cube *cube, unsigned int precision, u64 extra)
{
	u32 atom = c->cfg->atom_bytes;
	u32 lanes = atom / dla_bytes_per_element(precision);

	return dla_check_surface(c, what, field, cube, cube->height,
				 dla_div_up(cube->channel, lanes), (u64)cube->width * atom, extra,
				 atom);
}

/* Batches after the first: @batches cubes @stride apart, each @one bytes. */
int dla_check_batches(struct dla_check *c, const char *what, const char *field, u32 batches,
		      u32 stride, u64 one, u64 *extra)
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
	*extra = (u64)(batches - 1) * stride;
	return 0;
}

/* Bytes of one feature cube as dla_check_feature() counts them (strides assumed checked). */
u64 dla_feature_bytes(const struct dla_check *c, const struct nvdla_dla_data_cube *cube,
		      unsigned int precision)
{
	u32 atom = c->cfg->atom_bytes;
	u64 surfaces = dla_div_up(cube->channel, atom / dla_bytes_per_element(precision));

	return (surfaces - 1) * cube->surf_stride + (u64)(cube->height - 1) * cube->line_stride +
	       (u64)cube->width * atom;
}

/*
 * A fused operation's input is of type HW exactly when it has a fused parent (@parent says
 * which processor that must be).
 */
int dla_check_fused_parent(struct dla_check *c, const char *what, const char *parent,
			   const struct nvdla_dla_data_cube *src)
{
	const struct nvdla_dla_common_op_desc *dep = &c->task->graph[c->op];
	bool flying_input = src->type == NVDLA_DLA_MEM_HW;
	bool fused_parent = dep->fused_parent.index >= 0;

	if (flying_input == fused_parent)
		return 0;
	if (flying_input)
		return dla_fail(c->err, NVDLA_DLA_E_GRAPH, c->op, "fused_parent",
				(u64)(s64)dep->fused_parent.index, 0,
				"%s src_data is type HW, but no %s is its fused parent", what,
				parent);
	return dla_fail(c->err, NVDLA_DLA_E_GRAPH, c->op, "fused_parent",
			(u64)(s64)dep->fused_parent.index, 0,
			"%s has a fused parent, but its src_data is in memory", what);
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

int dla_check_lut(struct dla_check *c, u32 index)
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
