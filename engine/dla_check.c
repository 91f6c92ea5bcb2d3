// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Validation of one operation: every enumeration, range and register field
 * of its descriptors, and every memory range its processor would read or
 * write, computed from the registers the engine will program, against the
 * address-list entry the range names (docs/engine.md lists the rules).
 */
#include "dla_internal.h"

#define DLA_MAX_DIM 8192u /* 13-bit size fields hold the size minus one */
#define DLA_RUBIK_ATOM 32u

static const char *const mem_names[] = {"MC", "CV", "HW"};

static const char *mem_name(unsigned int type)
{
	return type <= NVDLA_DLA_MEM_HW ? mem_names[type] : "?";
}

/* ---- generic rules ---- */

static int fail_range(struct dla_check *c, const char *what, const char *field, uint64_t value,
		      uint64_t lo, uint64_t hi)
{
	return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, field, value, value < lo ? lo : hi,
			"%s %s is %llu, outside %llu..%llu", what, field, (unsigned long long)value,
			(unsigned long long)lo, (unsigned long long)hi);
}

static int check_range(struct dla_check *c, const char *what, const char *field, uint64_t value,
		       uint64_t lo, uint64_t hi)
{
	if (value < lo || value > hi)
		return fail_range(c, what, field, value, lo, hi);
	return 0;
}

static int check_enum(struct dla_check *c, const char *what, const char *field, uint64_t value,
		      uint64_t max)
{
	if (value > max)
		return dla_fail(c->err, NVDLA_DLA_E_ENUM, c->op, field, value, max,
				"%s %s is %llu, not a valid value (0..%llu)", what, field,
				(unsigned long long)value, (unsigned long long)max);
	return 0;
}

static int check_feature_bit(struct dla_check *c, const char *what, uint32_t feature,
			     const char *name)
{
	if (!nvdla_hw_has(c->cfg, feature))
		return dla_fail(c->err, NVDLA_DLA_E_UNSUPPORTED, c->op, name, 0, 0,
				"%s needs %s, which %s does not have", what, name, c->cfg->name);
	return 0;
}

static int check_precision(struct dla_check *c, const char *what, const char *field,
			   unsigned int precision)
{
	static const char *const names[] = {"int8", "int16", "fp16"};
	int ret = check_enum(c, what, field, precision, NVDLA_DLA_PRECISION_FP16);

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

static int check_dims(struct dla_check *c, const char *what, const char *field,
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

static int same_dims(struct dla_check *c, const char *what, const char *field,
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
static int check_mem_type(struct dla_check *c, const char *what, const char *field,
			  unsigned int type, bool allow_hw)
{
	int ret = check_enum(c, what, field, type, NVDLA_DLA_MEM_HW);

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
static int check_memory(struct dla_check *c, const char *what, const char *field, unsigned int type,
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
				what, field, mem_name(type), index,
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

static int check_aligned(struct dla_check *c, const char *what, const char *field, uint64_t value,
			 uint32_t align)
{
	if (align > 1 && value % align)
		return dla_fail(c->err, NVDLA_DLA_E_ALIGN, c->op, field, value, align,
				"%s %s is %llu, not a multiple of %u bytes", what, field,
				(unsigned long long)value, align);
	return 0;
}

static int check_at_least(struct dla_check *c, const char *what, const char *field, uint64_t value,
			  uint64_t minimum, const char *reason)
{
	if (value < minimum)
		return dla_fail(c->err, NVDLA_DLA_E_STRIDE, c->op, field, value, minimum,
				"%s %s is %llu, smaller than the %llu bytes %s", what, field,
				(unsigned long long)value, (unsigned long long)minimum, reason);
	return 0;
}

/* The cube's offset in its entry: 0 in the 0.10/0.11 layout (validated copies carry 0). */
static int64_t cube_offset(const struct nvdla_dla_data_cube *cube)
{
	return (int64_t)cube->offset;
}

/*
 * A feature-layout surface: @surfaces surfaces of @height lines of
 * @line_bytes, with the cube's line and surface strides (checked when they
 * separate something), plus @extra bytes (batches) past the first cube.
 */
static int check_surface(struct dla_check *c, const char *what, const char *field,
			 const struct nvdla_dla_data_cube *cube, uint32_t height, uint64_t surfaces,
			 uint64_t line_bytes, uint64_t extra, uint32_t align)
{
	uint64_t footprint = line_bytes;
	int ret;

	if (height > 1) {
		ret = check_aligned(c, what, "line_stride", cube->line_stride, align);
		if (!ret)
			ret = check_at_least(c, what, "line_stride", cube->line_stride, line_bytes,
					     "a line needs");
		if (ret)
			return ret;
		footprint += (uint64_t)(height - 1) * cube->line_stride;
	}
	if (surfaces > 1) {
		ret = check_aligned(c, what, "surf_stride", cube->surf_stride, align);
		if (!ret)
			ret = check_at_least(c, what, "surf_stride", cube->surf_stride, footprint,
					     "a surface needs");
		if (ret)
			return ret;
		footprint += (surfaces - 1) * cube->surf_stride;
	}
	return check_memory(c, what, field, cube->type, cube->address, cube_offset(cube),
			    footprint + extra, align);
}

/* A feature data cube of @precision elements in atoms of @atom bytes. */
static int check_feature(struct dla_check *c, const char *what, const char *field,
			 const struct nvdla_dla_data_cube *cube, unsigned int precision,
			 uint64_t extra)
{
	uint32_t atom = c->cfg->atom_bytes;
	uint32_t lanes = atom / dla_bytes_per_element(precision);

	return check_surface(c, what, field, cube, cube->height, dla_div_up(cube->channel, lanes),
			     (uint64_t)cube->width * atom, extra, atom);
}

/* Batches after the first: @batches cubes @stride apart, each @one bytes. */
static int check_batches(struct dla_check *c, const char *what, const char *field, uint32_t batches,
			 uint32_t stride, uint64_t one, uint64_t *extra)
{
	int ret;

	*extra = 0;
	if (batches <= 1)
		return 0;
	ret = check_aligned(c, what, field, stride, c->cfg->atom_bytes);
	if (!ret)
		ret = check_at_least(c, what, field, stride, one, "a cube of the batch needs");
	if (ret)
		return ret;
	*extra = (uint64_t)(batches - 1) * stride;
	return 0;
}

/* Bytes of one feature cube as check_feature() counts them (strides assumed checked). */
static uint64_t feature_bytes(const struct dla_check *c, const struct nvdla_dla_data_cube *cube,
			      unsigned int precision)
{
	uint32_t atom = c->cfg->atom_bytes;
	uint64_t surfaces = dla_div_up(cube->channel, atom / dla_bytes_per_element(precision));

	return (surfaces - 1) * cube->surf_stride +
	       (uint64_t)(cube->height - 1) * cube->line_stride + (uint64_t)cube->width * atom;
}

/* ---- BDMA ---- */

static int check_bdma_side(struct dla_check *c, const char *what, const char *field,
			   unsigned int type, int16_t index, uint32_t line_size, uint32_t lines,
			   uint32_t line, uint32_t surfaces, uint32_t surface)
{
	uint64_t footprint =
	    (uint64_t)(surfaces - 1) * surface + (uint64_t)(lines - 1) * line + line_size;
	int ret;

	ret = check_aligned(c, what, field, line, 32);
	if (!ret)
		ret = check_aligned(c, what, field, surface, 32);
	if (!ret)
		ret = check_memory(c, what, field, type, index, 0, footprint, 32);
	return ret;
}

static int check_bdma(struct dla_check *c, const struct nvdla_dla_bdma_surface_desc *s)
{
	char what[32];
	uint32_t k;
	int ret;

	ret = check_feature_bit(c, "BDMA", NVDLA_FEATURE_BDMA, "the BDMA unit");
	if (!ret)
		ret = check_range(c, "BDMA", "num_transfers", s->num_transfers, 0,
				  NVDLA_DLA_BDMA_MAX_TRANSFERS);
	if (!ret && s->num_transfers)
		ret = check_mem_type(c, "BDMA", "source_type", s->source_type, false);
	if (!ret && s->num_transfers)
		ret = check_mem_type(c, "BDMA", "destination_type", s->destination_type, false);
	for (k = 0; !ret && k < s->num_transfers; k++) {
		const struct nvdla_dla_bdma_transfer *t = &s->transfers[k];

		snprintf(what, sizeof(what), "BDMA transfer %u", k);
		ret = check_range(c, what, "line_size", t->line_size, 32, 8192u * 32);
		if (!ret)
			ret = check_aligned(c, what, "line_size", t->line_size, 32);
		if (!ret)
			ret = check_range(c, what, "line_repeat", t->line_repeat, 1, 8192);
		if (!ret)
			ret = check_range(c, what, "surface_repeat", t->surface_repeat, 1, 8192);
		if (!ret)
			ret = check_at_least(c, what, "source_line", t->source_line, t->line_size,
					     "a line needs");
		if (!ret)
			ret = check_at_least(c, what, "destination_line", t->destination_line,
					     t->line_size, "a line needs");
		if (!ret)
			ret = check_at_least(c, what, "source_surface", t->source_surface,
					     (uint64_t)t->source_line * t->line_repeat,
					     "its lines need");
		if (!ret)
			ret = check_at_least(c, what, "destination_surface", t->destination_surface,
					     (uint64_t)t->destination_line * t->line_repeat,
					     "its lines need");
		if (!ret)
			ret = check_bdma_side(c, what, "source_address", s->source_type,
					      t->source_address, t->line_size, t->line_repeat,
					      t->source_line, t->surface_repeat, t->source_surface);
		if (!ret)
			ret = check_bdma_side(c, what, "destination_address", s->destination_type,
					      t->destination_address, t->line_size, t->line_repeat,
					      t->destination_line, t->surface_repeat,
					      t->destination_surface);
	}
	return ret;
}

/* ---- convolution ---- */

static const uint8_t pixel_bytes[NVDLA_DLA_FORMAT_PIXEL_COUNT][2] = {
    {1, 0}, {2, 0}, {2, 0}, {2, 0}, {2, 0}, {2, 0}, /* R8 .. R16_F */
    {8, 0}, {8, 0}, {8, 0}, {8, 0}, {8, 0}, {8, 0}, /* 16-bit RGBA/YUVA */
    {4, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, /* 8-bit RGBA */
    {4, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, /* 10-bit packed */
    {4, 0}, {4, 0}, {4, 0}, {4, 0},		    /* YUV packed */
    {1, 2}, {1, 2}, {2, 4}, {2, 4}, {2, 4}, {2, 4}, /* semi-planar */
    {2, 4}, {2, 4},
};

uint32_t dla_pixel_bytes(unsigned int format, unsigned int plane)
{
	if (format >= NVDLA_DLA_FORMAT_PIXEL_COUNT || plane > 1)
		return 0;
	return pixel_bytes[format][plane];
}

/* One plane of a pitch-linear image: @height lines of @width pixels of @bpp bytes. */
static int check_plane(struct dla_check *c, const char *field,
		       const struct nvdla_dla_data_cube *cube, int64_t offset, uint32_t line_stride,
		       uint32_t bpp)
{
	uint32_t atom = c->cfg->atom_bytes;
	uint64_t line = (uint64_t)cube->width * bpp;
	int ret;

	ret = check_aligned(c, "CONV", field, line_stride, atom);
	if (!ret)
		ret = check_at_least(c, "CONV", field, line_stride, line, "an image line needs");
	if (ret)
		return ret;
	return check_memory(c, "CONV", field, cube->type, cube->address, offset,
			    (uint64_t)(cube->height - 1) * line_stride + dla_round_up(line, atom),
			    atom);
}

static int check_conv_input(struct dla_check *c, const struct nvdla_dla_conv_op_desc *op,
			    const struct nvdla_dla_conv_surface_desc *s)
{
	const struct nvdla_dla_data_cube *src = &s->src_data;
	uint64_t extra;
	int ret;

	ret = check_mem_type(c, "CONV", "src_data", src->type, false);
	if (!ret)
		ret = check_dims(c, "CONV", "src_data", src);
	if (ret)
		return ret;
	if (op->data_format == NVDLA_DLA_FORMAT_FEATURE) {
		ret = check_batches(c, "CONV", "batch_stride", op->batch, op->batch_stride,
				    feature_bytes(c, src, op->in_precision), &extra);
		if (ret)
			return ret;
		return check_feature(c, "CONV", "src_data", src, op->in_precision, extra);
	}
	if (op->batch != 1)
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "batch", op->batch, 1,
				"CONV batch is %u, but image input has one batch", op->batch);
	if (op->conv_mode != NVDLA_DLA_CONV_DIRECT)
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "conv_mode", op->conv_mode, 0,
				"CONV image input needs direct convolution (conv_mode 0)");
	ret = check_plane(c, "src_data", src, cube_offset(src), src->line_stride,
			  dla_pixel_bytes(op->data_format, 0));
	if (ret || !dla_pixel_bytes(op->data_format, 1))
		return ret;
	/* The second plane of a semi-planar image, offset_u bytes after the first. */
	if (s->offset_u < -((int64_t)1 << 40) || s->offset_u > ((int64_t)1 << 40))
		return dla_fail(c->err, NVDLA_DLA_E_EXTENT, c->op, "offset_u",
				(uint64_t)s->offset_u, 0,
				"CONV offset_u %lld is outside any buffer", (long long)s->offset_u);
	return check_plane(c, "offset_u", src, cube_offset(src) + s->offset_u, s->in_line_uv_stride,
			   dla_pixel_bytes(op->data_format, 1));
}

/*
 * The unit in which CDMA counts D_WEIGHT_BYTES: nv_full's register has no bits 6:0 (128 bytes);
 * the nv_small family's CDMA requests weight_bytes[31:log2(atom)] memory atoms (nvdla/hw
 * NV_NVDLA_CDMA_wt.v). A size that is a multiple of it is fetched exactly; the firmware
 * programs weight_data.size unchanged, so another size would silently lose weights.
 */
static uint32_t weight_bytes_unit(const struct nvdla_hw_config *cfg)
{
	return cfg->reg_map == NVDLA_REG_MAP_FULL ? 128 : cfg->atom_bytes;
}

static int check_conv_weights(struct dla_check *c, const struct nvdla_dla_conv_op_desc *op,
			      const struct nvdla_dla_conv_surface_desc *s)
{
	const struct nvdla_dla_data_cube *w = &s->weight_data;
	const uint32_t unit = weight_bytes_unit(c->cfg);
	uint32_t per_group, groups;
	int ret;

	ret = check_mem_type(c, "CONV", "weight_data", w->type, false);
	if (!ret)
		ret = check_range(c, "CONV", "weight_data.size", w->size, unit, 0xffffffffu);
	if (!ret)
		ret = check_aligned(c, "CONV", "weight_data.size", w->size, unit);
	if (!ret)
		ret = check_memory(c, "CONV", "weight_data", w->type, w->address, cube_offset(w),
				   w->size, 256);
	if (ret || op->weight_format != NVDLA_DLA_WEIGHT_COMPRESSED)
		return ret;

	ret = check_mem_type(c, "CONV", "wmb_data", s->wmb_data.type, false);
	if (!ret)
		ret = check_range(c, "CONV", "wmb_data.size", s->wmb_data.size, 128, 0x0fffffffu);
	if (!ret)
		ret = check_aligned(c, "CONV", "wmb_data.size", s->wmb_data.size, 128);
	if (!ret)
		ret = check_memory(c, "CONV", "wmb_data", s->wmb_data.type, s->wmb_data.address,
				   cube_offset(&s->wmb_data), s->wmb_data.size, 256);
	if (ret)
		return ret;
	/* One 32-bit size per kernel group. */
	per_group = op->out_precision == NVDLA_DLA_PRECISION_INT8 ? c->cfg->mac_atomic_k
								  : c->cfg->mac_atomic_k / 2;
	groups = (uint32_t)dla_div_up(s->dst_data.channel, per_group ? per_group : 1);
	ret = check_mem_type(c, "CONV", "wgs_data", s->wgs_data.type, false);
	if (!ret)
		ret = check_memory(c, "CONV", "wgs_data", s->wgs_data.type, s->wgs_data.address,
				   cube_offset(&s->wgs_data), (uint64_t)groups * 4, 256);
	return ret;
}

static int check_conv(struct dla_check *c, const struct nvdla_dla_conv_op_desc *op,
		      const struct nvdla_dla_conv_surface_desc *s)
{
	const struct nvdla_hw_config *cfg = c->cfg;
	int ret;

	ret = check_enum(c, "CONV", "conv_mode", op->conv_mode, NVDLA_DLA_CONV_WINOGRAD);
	if (!ret && op->conv_mode == NVDLA_DLA_CONV_WINOGRAD)
		ret = check_feature_bit(c, "CONV Winograd mode", NVDLA_FEATURE_WINOGRAD,
					"Winograd convolution");
	if (!ret)
		ret = check_precision(c, "CONV", "in_precision", op->in_precision);
	if (!ret)
		ret = check_precision(c, "CONV", "out_precision", op->out_precision);
	if (!ret)
		ret =
		    check_enum(c, "CONV", "data_format", op->data_format, NVDLA_DLA_FORMAT_FEATURE);
	if (!ret)
		ret = check_enum(c, "CONV", "pixel_mapping", op->pixel_mapping,
				 NVDLA_DLA_PIXEL_MAPPING_PITCH_LINEAR);
	if (!ret)
		ret = check_enum(c, "CONV", "pixel_override", op->pixel_override, 1);
	if (!ret)
		ret = check_enum(c, "CONV", "weight_format", op->weight_format,
				 NVDLA_DLA_WEIGHT_COMPRESSED);
	if (!ret && op->weight_format == NVDLA_DLA_WEIGHT_COMPRESSED)
		ret = check_feature_bit(c, "CONV compressed weights",
					NVDLA_FEATURE_WEIGHT_COMPRESSION, "weight compression");
	if (!ret)
		ret = check_enum(c, "CONV", "mean_format", op->mean_format, NVDLA_DLA_MEAN_ENABLE);
	if (!ret)
		ret = check_enum(c, "CONV", "data_reuse", op->data_reuse, 1);
	if (!ret)
		ret = check_enum(c, "CONV", "weight_reuse", op->weight_reuse, 1);
	if (!ret)
		ret = check_enum(c, "CONV", "skip_data_rls", op->skip_data_rls, 1);
	if (!ret)
		ret = check_enum(c, "CONV", "skip_weight_rls", op->skip_weight_rls, 1);
	if (!ret)
		ret = check_range(c, "CONV", "batch", op->batch, 1,
				  cfg->max_batch < 32 ? cfg->max_batch : 32);
	if (!ret)
		ret = check_range(c, "CONV", "conv_stride_x", op->conv_stride_x, 1, 8);
	if (!ret)
		ret = check_range(c, "CONV", "conv_stride_y", op->conv_stride_y, 1, 8);
	if (!ret)
		ret = check_range(c, "CONV", "dilation_x", op->dilation_x, 1, 32);
	if (!ret)
		ret = check_range(c, "CONV", "dilation_y", op->dilation_y, 1, 32);
	if (!ret)
		ret = check_range(c, "CONV", "pad_x_left", op->pad_x_left, 0, 31);
	if (!ret)
		ret = check_range(c, "CONV", "pad_x_right", op->pad_x_right, 0, 63);
	if (!ret)
		ret = check_range(c, "CONV", "pad_y_top", op->pad_y_top, 0, 31);
	if (!ret)
		ret = check_range(c, "CONV", "pad_y_bottom", op->pad_y_bottom, 0, 63);
	if (!ret)
		ret = check_range(c, "CONV", "data_bank", op->data_bank, 1, 32);
	if (!ret)
		ret = check_range(c, "CONV", "weight_bank", op->weight_bank, 1, 32);
	if (!ret && (uint32_t)op->data_bank + op->weight_bank > cfg->cbuf_banks)
		ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "data_bank",
			       (uint64_t)op->data_bank + op->weight_bank, cfg->cbuf_banks,
			       "CONV data_bank %u + weight_bank %u exceed the %u banks of %s",
			       op->data_bank, op->weight_bank, cfg->cbuf_banks, cfg->name);
	if (!ret)
		ret = check_range(c, "CONV", "entry_per_slice", op->entry_per_slice, 1, 16384);
	if (!ret)
		ret = check_range(c, "CONV", "fetch_grain", op->fetch_grain, 1, 4096);
	if (!ret)
		ret = check_range(c, "CONV", "release", op->release, 1, 4096);
	if (!ret)
		ret =
		    check_range(c, "CONV", "input_width_csc", op->input_width_csc, 1, DLA_MAX_DIM);
	if (!ret)
		ret = check_range(c, "CONV", "input_height_csc", op->input_height_csc, 1,
				  DLA_MAX_DIM);
	if (!ret)
		ret = check_range(c, "CONV", "input_channel_csc", op->input_channel_csc, 1,
				  DLA_MAX_DIM);
	if (!ret)
		ret = check_range(c, "CONV", "kernel_width_csc", op->kernel_width_csc, 1, 32);
	if (!ret)
		ret = check_range(c, "CONV", "kernel_height_csc", op->kernel_height_csc, 1, 32);
	if (!ret)
		ret = check_range(c, "CONV", "kernel_channel_csc", op->kernel_channel_csc, 1,
				  DLA_MAX_DIM);
	if (!ret)
		ret = check_range(c, "CONV", "input_width_cmac", op->input_width_cmac, 1,
				  DLA_MAX_DIM);
	if (!ret)
		ret = check_range(c, "CONV", "input_height_cmac", op->input_height_cmac, 1,
				  DLA_MAX_DIM);
	if (!ret)
		ret = check_range(c, "CONV", "bytes_per_kernel", op->bytes_per_kernel, 1, 1u << 18);
	if (!ret)
		ret = check_range(c, "CONV", "post_extension", op->post_extension, 0, 3);
	if (!ret)
		ret = check_range(c, "CONV", "pra_truncate", op->pra_truncate, 0, 3);
	if (!ret)
		ret = check_range(c, "CONV", "in_cvt.truncate", op->in_cvt.truncate, 0, 63);
	if (!ret)
		ret = check_enum(c, "CONV", "in_cvt.enable", op->in_cvt.enable, 1);
	if (!ret)
		ret = check_range(c, "CONV", "out_cvt.truncate", op->out_cvt.truncate, 0, 31);
	if (!ret && (op->out_cvt.scale != 1 || op->out_cvt.offset != 0))
		ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "out_cvt.scale",
			       (uint64_t)(int64_t)op->out_cvt.scale, 1,
			       "CONV out_cvt has scale %d and offset %d; the convolution output "
			       "only truncates (scale 1, offset 0)",
			       op->out_cvt.scale, op->out_cvt.offset);
	if (!ret)
		ret = check_dims(c, "CONV", "dst_data", &s->dst_data);
	if (!ret && (uint64_t)s->dst_data.width * s->dst_data.height > (1u << 21))
		ret = fail_range(c, "CONV", "dst_data.width x height",
				 (uint64_t)s->dst_data.width * s->dst_data.height, 1, 1u << 21);
	if (!ret)
		ret = check_mem_type(c, "CONV", "dst_data", s->dst_data.type, true);
	if (!ret && s->dst_data.type != NVDLA_DLA_MEM_HW)
		ret = dla_fail(c->err, NVDLA_DLA_E_MEMORY, c->op, "dst_data", s->dst_data.type,
			       NVDLA_DLA_MEM_HW,
			       "CONV dst_data has memory type %s; the convolution delivers to SDP "
			       "(type HW)",
			       mem_name(s->dst_data.type));
	if (!ret)
		ret = check_conv_input(c, op, s);
	if (!ret)
		ret = check_conv_weights(c, op, s);
	return ret;
}

/* ---- SDP ---- */

unsigned int dla_sdp_proc_precision(unsigned int src, unsigned int dst)
{
	if (src == NVDLA_DLA_PRECISION_FP16)
		return NVDLA_DLA_PRECISION_FP16;
	if (src == NVDLA_DLA_PRECISION_INT16 && dst != NVDLA_DLA_PRECISION_INT8)
		return NVDLA_DLA_PRECISION_INT16;
	return NVDLA_DLA_PRECISION_INT8;
}

bool dla_sdp_stage_dma(const struct nvdla_dla_sdp_op *stage)
{
	return stage->enable && stage->type != NVDLA_DLA_SDP_OP_NONE &&
	       stage->mode != NVDLA_DLA_SDP_PER_LAYER;
}

bool dla_sdp_uses_rdma(const struct nvdla_dla_sdp_op_desc *op,
		       const struct nvdla_dla_sdp_surface_desc *surf)
{
	return surf->src_data.type != NVDLA_DLA_MEM_HW || dla_sdp_stage_dma(&op->x1_op) ||
	       dla_sdp_stage_dma(&op->x2_op) || dla_sdp_stage_dma(&op->y_op);
}

/* Valid precision conversions of SDP: int8 -> int8/int16, int16 -> any, fp16 -> int16/fp16. */
static bool sdp_conversion_ok(unsigned int src, unsigned int dst)
{
	if (src == NVDLA_DLA_PRECISION_INT8)
		return dst != NVDLA_DLA_PRECISION_FP16;
	if (src == NVDLA_DLA_PRECISION_FP16)
		return dst != NVDLA_DLA_PRECISION_INT8;
	return true;
}

static int check_sdp_stage(struct dla_check *c, const char *name,
			   const struct nvdla_dla_sdp_op *stage,
			   const struct nvdla_dla_data_cube *cube,
			   const struct nvdla_dla_sdp_op_desc *op,
			   const struct nvdla_dla_data_cube *src, bool y, uint32_t feature,
			   const char *feature_name)
{
	uint32_t atom = c->cfg->atom_bytes;
	unsigned int proc = dla_sdp_proc_precision(op->src_precision, op->dst_precision);
	uint32_t group = atom / dla_bytes_per_element(proc);
	uint64_t groups = dla_div_up(src->channel, group);
	uint32_t value_bytes;
	char what[16];
	int ret;

	snprintf(what, sizeof(what), "SDP %s", name);
	ret = check_enum(c, what, "enable", stage->enable, 1);
	if (!ret)
		ret = check_enum(c, what, "alu_type", stage->alu_type, NVDLA_DLA_SDP_ALU_EQL);
	if (!ret)
		ret = check_enum(c, what, "type", stage->type, NVDLA_DLA_SDP_OP_BOTH);
	if (!ret)
		ret = check_enum(c, what, "mode", stage->mode, NVDLA_DLA_SDP_PER_POINT);
	if (!ret)
		ret = check_enum(c, what, "act", stage->act, NVDLA_DLA_ACT_PRELU);
	if (!ret && !y && stage->act == NVDLA_DLA_ACT_LUT)
		ret = dla_fail(c->err, NVDLA_DLA_E_ENUM, c->op, "act", stage->act, 0,
			       "%s act is LUT, which only the Y stage has", what);
	if (!ret && y && stage->act == NVDLA_DLA_ACT_RELU)
		ret = dla_fail(c->err, NVDLA_DLA_E_ENUM, c->op, "act", stage->act, 0,
			       "%s act is ReLU, which only the X stages have", what);
	if (!ret)
		ret = check_enum(c, what, "precision", stage->precision, NVDLA_DLA_PRECISION_FP16);
	if (!ret && !y)
		ret = check_range(c, what, "shift_value", stage->shift_value, 0, 63);
	if (!ret && y)
		ret = check_range(c, what, "truncate", stage->truncate, 0, 1023);
	if (!ret && y) {
		ret = check_range(c, what, "cvt.alu_cvt.truncate", stage->cvt.alu_cvt.truncate, 0,
				  63);
		if (!ret)
			ret = check_range(c, what, "cvt.mul_cvt.truncate",
					  stage->cvt.mul_cvt.truncate, 0, 63);
		if (!ret)
			ret =
			    check_enum(c, what, "cvt.alu_cvt.enable", stage->cvt.alu_cvt.enable, 1);
		if (!ret)
			ret =
			    check_enum(c, what, "cvt.mul_cvt.enable", stage->cvt.mul_cvt.enable, 1);
	}
	if (ret || !stage->enable)
		return ret;
	ret = check_feature_bit(c, what, feature, feature_name);
	if (!ret && y && stage->act == NVDLA_DLA_ACT_LUT)
		ret = check_feature_bit(c, what, NVDLA_FEATURE_SDP_LUT, "the SDP LUT");
	if (ret || !dla_sdp_stage_dma(stage))
		return ret;

	/* The operand read from memory: 1 or 2 values of 1 or 2 bytes per element. */
	value_bytes = (stage->precision == NVDLA_DLA_PRECISION_INT8 ? 1 : 2) *
		      (stage->type == NVDLA_DLA_SDP_OP_BOTH ? 2 : 1);
	ret = check_mem_type(c, what, "data", cube->type, false);
	if (ret)
		return ret;
	if (stage->mode == NVDLA_DLA_SDP_PER_KERNEL)
		return check_memory(c, what, "data", cube->type, cube->address, cube_offset(cube),
				    dla_round_up(groups * group * value_bytes, atom), atom);
	return check_surface(c, what, "data", cube, src->height, groups,
			     (uint64_t)src->width * group * value_bytes, 0, atom);
}

static int check_sdp(struct dla_check *c, const struct nvdla_dla_sdp_op_desc *op,
		     const struct nvdla_dla_sdp_surface_desc *s)
{
	const struct nvdla_dla_common_op_desc *dep = &c->task->graph[c->op];
	uint32_t atom = c->cfg->atom_bytes;
	unsigned int proc;
	uint64_t padded, extra;
	int ret;

	ret = check_precision(c, "SDP", "src_precision", op->src_precision);
	if (!ret)
		ret = check_precision(c, "SDP", "dst_precision", op->dst_precision);
	if (!ret && !sdp_conversion_ok(op->src_precision, op->dst_precision))
		ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "dst_precision", op->dst_precision,
			       0, "SDP cannot convert src_precision %u to dst_precision %u",
			       op->src_precision, op->dst_precision);
	if (!ret && (op->lut_index < -1 ||
		     (op->lut_index >= 0 && (uint32_t)op->lut_index >= c->task->num_luts)))
		ret = dla_fail(c->err, NVDLA_DLA_E_LUT_INDEX, c->op, "lut_index",
			       (uint64_t)(int64_t)op->lut_index, c->task->num_luts,
			       "SDP lut_index is %d; the task has %u LUTs", op->lut_index,
			       c->task->num_luts);
	if (!ret && op->lut_index >= 0)
		ret = check_feature_bit(c, "SDP", NVDLA_FEATURE_SDP_LUT, "the SDP LUT");
	if (!ret)
		ret = check_enum(c, "SDP", "conv_mode", op->conv_mode, NVDLA_DLA_CONV_WINOGRAD);
	if (!ret && op->conv_mode == NVDLA_DLA_CONV_WINOGRAD)
		ret = check_feature_bit(c, "SDP Winograd mode", NVDLA_FEATURE_WINOGRAD,
					"Winograd convolution");
	if (!ret)
		ret = check_range(c, "SDP", "batch_num", op->batch_num, 1,
				  c->cfg->max_batch < 32 ? c->cfg->max_batch : 32);
	if (!ret)
		ret = check_range(c, "SDP", "out_cvt.truncate", op->out_cvt.truncate, 0, 63);
	if (!ret)
		ret = check_dims(c, "SDP", "src_data", &s->src_data);
	if (!ret)
		ret = check_mem_type(c, "SDP", "src_data", s->src_data.type, true);
	if (!ret)
		ret = check_mem_type(c, "SDP", "dst_data", s->dst_data.type, true);
	if (ret)
		return ret;

	/* Fusion: flying input from a convolution, output into a PDP. */
	if ((s->src_data.type == NVDLA_DLA_MEM_HW) != (dep->fused_parent.index >= 0))
		return dla_fail(
		    c->err, NVDLA_DLA_E_GRAPH, c->op, "fused_parent",
		    (uint64_t)(int64_t)dep->fused_parent.index, 0,
		    s->src_data.type == NVDLA_DLA_MEM_HW
			? "SDP src_data is type HW, but no convolution is its fused parent"
			: "SDP has a fused parent, but its src_data is in memory");
	if (s->src_data.type == NVDLA_DLA_MEM_HW) {
		const struct nvdla_dla_conv_surface_desc *cs =
		    &c->task->surfaces[dep->fused_parent.index].conv_surface;

		const struct nvdla_dla_conv_op_desc *co =
		    &c->task->ops[dep->fused_parent.index].conv_op;

		ret = same_dims(c, "SDP", "src_data", &s->src_data, &cs->dst_data,
				"its convolution's dst_data");
		if (!ret && co->out_precision != op->src_precision)
			ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "src_precision",
				       op->src_precision, co->out_precision,
				       "SDP src_precision %u differs from its convolution's "
				       "out_precision %u",
				       op->src_precision, co->out_precision);
		if (ret)
			return ret;
	}

	ret = check_sdp_stage(c, "x1_op", &op->x1_op, &s->x1_data, op, &s->src_data, false,
			      NVDLA_FEATURE_SDP_BS, "the SDP bias (X1) stage");
	if (!ret)
		ret =
		    check_sdp_stage(c, "x2_op", &op->x2_op, &s->x2_data, op, &s->src_data, false,
				    NVDLA_FEATURE_SDP_BN, "the SDP batch-normalization (X2) stage");
	if (!ret)
		ret = check_sdp_stage(c, "y_op", &op->y_op, &s->y_data, op, &s->src_data, true,
				      NVDLA_FEATURE_SDP_EW, "the SDP element-wise (Y) stage");
	if (ret)
		return ret;

	/* The hardware moves whole groups of the processing precision's channels. */
	proc = dla_sdp_proc_precision(op->src_precision, op->dst_precision);
	padded = dla_round_up(s->src_data.channel, atom / dla_bytes_per_element(proc));
	if (s->src_data.type != NVDLA_DLA_MEM_HW) {
		uint32_t lanes = atom / dla_bytes_per_element(op->src_precision);

		ret = check_surface(c, "SDP", "src_data", &s->src_data, s->src_data.height,
				    dla_div_up(padded, lanes), (uint64_t)s->src_data.width * atom,
				    0, atom);
		if (ret)
			return ret;
	}
	if (s->dst_data.type == NVDLA_DLA_MEM_HW) {
		if (op->batch_num != 1 || op->conv_mode != NVDLA_DLA_CONV_DIRECT ||
		    op->src_precision != op->dst_precision)
			return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "dst_data", 0, 0,
					"SDP output to PDP (dst_data type HW) needs one batch, "
					"direct convolution and no precision conversion");
		return 0;
	}
	{
		uint32_t lanes = atom / dla_bytes_per_element(op->dst_precision);
		uint64_t surfaces = dla_div_up(padded, lanes);
		uint64_t one = (surfaces - 1) * s->dst_data.surf_stride +
			       (uint64_t)(s->src_data.height - 1) * s->dst_data.line_stride +
			       (uint64_t)s->src_data.width * atom;

		ret = check_batches(c, "SDP", "batch_stride", op->batch_num, op->batch_stride, one,
				    &extra);
		if (!ret)
			ret = check_surface(c, "SDP", "dst_data", &s->dst_data, s->src_data.height,
					    surfaces, (uint64_t)s->src_data.width * atom, extra,
					    atom);
	}
	return ret;
}

/* ---- PDP ---- */

/* Whether every pooling window of @count outputs covers at least one of @extent inputs. */
static bool windows_reach(uint32_t count, uint32_t stride, uint32_t pad, uint32_t kernel,
			  uint32_t extent)
{
	return pad <= kernel - 1 && (uint64_t)(count - 1) * stride <= (uint64_t)extent - 1 + pad;
}

static int check_pdp_splits(struct dla_check *c, const struct nvdla_dla_pdp_op_desc *op,
			    const struct nvdla_dla_pdp_surface_desc *s)
{
	uint32_t n = op->split_num;
	uint32_t in_first = op->partial_in_width_first ? op->partial_in_width_first : 1;
	uint32_t in_mid = op->partial_in_width_mid ? op->partial_in_width_mid : 1;
	uint32_t in_last = op->partial_in_width_last ? op->partial_in_width_last : 1;
	uint32_t out_first = op->partial_width_first ? op->partial_width_first : 1;
	uint32_t out_mid = op->partial_width_mid ? op->partial_width_mid : 1;
	uint32_t out_last = op->partial_width_last ? op->partial_width_last : 1;
	int64_t overlap = (int64_t)op->pool_width + 1 - op->stride_x;
	uint64_t in_end = in_first + (uint64_t)(n - 2) * in_mid + in_last;
	uint64_t out_end = out_first + (uint64_t)(n - 2) * out_mid + out_last;
	int ret;

	ret = check_range(c, "PDP", "partial_in_width_first", in_first, 1, 1024);
	if (!ret)
		ret = check_range(c, "PDP", "partial_in_width_mid", in_mid, 1, 1024);
	if (!ret)
		ret = check_range(c, "PDP", "partial_in_width_last", in_last, 1, 1024);
	if (!ret)
		ret = check_range(c, "PDP", "partial_width_first", out_first, 1, 1024);
	if (!ret)
		ret = check_range(c, "PDP", "partial_width_mid", out_mid, 1, 1024);
	if (!ret)
		ret = check_range(c, "PDP", "partial_width_last", out_last, 1, 1024);
	if (ret)
		return ret;
	/* Each split after the first also reads the columns it shares with the one before. */
	if (overlap > (int64_t)in_first || (n > 2 && overlap > (int64_t)in_mid))
		return dla_fail(
		    c->err, NVDLA_DLA_E_FIELD, c->op, "partial_in_width_first", in_first,
		    (uint64_t)overlap,
		    "PDP splits of %u and %u columns are narrower than the %lld columns "
		    "neighbouring splits share",
		    in_first, in_mid, (long long)overlap);
	/* With a stride wider than the kernel, each later split skips that many columns. */
	if (overlap < 0 &&
	    ((n > 2 && (int64_t)in_mid + overlap <= 0) || (int64_t)in_last + overlap <= 0))
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "partial_in_width_mid",
				n > 2 ? in_mid : in_last, (uint64_t)-overlap,
				"PDP splits of %u (middle) and %u (last) columns leave nothing to "
				"pool once the %lld columns the stride skips are dropped",
				in_mid, in_last, (long long)-overlap);
	if (in_end != s->src_data.width)
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "partial_in_width_last", in_end,
				s->src_data.width,
				"PDP's %u input splits cover %llu columns, but src_data is %u wide",
				n, (unsigned long long)in_end, s->src_data.width);
	if (out_end != s->dst_data.width)
		return dla_fail(
		    c->err, NVDLA_DLA_E_FIELD, c->op, "partial_width_last", out_end,
		    s->dst_data.width,
		    "PDP's %u output splits cover %llu columns, but dst_data is %u wide", n,
		    (unsigned long long)out_end, s->dst_data.width);
	return 0;
}

static int check_pdp(struct dla_check *c, const struct nvdla_dla_pdp_op_desc *op,
		     const struct nvdla_dla_pdp_surface_desc *s)
{
	const struct nvdla_dla_common_op_desc *dep = &c->task->graph[c->op];
	int ret;
	int i;

	ret = check_precision(c, "PDP", "precision", op->precision);
	if (!ret)
		ret = check_enum(c, "PDP", "pool_mode", op->pool_mode, NVDLA_DLA_POOL_MIN);
	if (!ret)
		ret = check_enum(c, "PDP", "pool_width", op->pool_width, NVDLA_DLA_POOL_SIZE_MAX);
	if (!ret)
		ret = check_enum(c, "PDP", "pool_height", op->pool_height, NVDLA_DLA_POOL_SIZE_MAX);
	if (!ret)
		ret = check_range(c, "PDP", "stride_x", op->stride_x, 1, 16);
	if (!ret)
		ret = check_range(c, "PDP", "stride_y", op->stride_y, 1, 16);
	if (!ret)
		ret = check_range(c, "PDP", "pad_left", op->pad_left, 0, 7);
	if (!ret)
		ret = check_range(c, "PDP", "pad_right", op->pad_right, 0, 7);
	if (!ret)
		ret = check_range(c, "PDP", "pad_top", op->pad_top, 0, 7);
	if (!ret)
		ret = check_range(c, "PDP", "pad_bottom", op->pad_bottom, 0, 7);
	if (!ret)
		ret = check_range(c, "PDP", "split_num", op->split_num, 1, 64);
	for (i = 0; !ret && i < NVDLA_DLA_PDP_PAD_VALUES; i++) {
		int32_t v = op->padding_value[i];

		if (op->precision == NVDLA_DLA_PRECISION_FP16 && v != 0)
			ret = dla_fail(
			    c->err, NVDLA_DLA_E_FIELD, c->op, "padding_value", (uint64_t)(int64_t)v,
			    0, "PDP padding_value[%d] is %d; the fp16 pipeline pads with 0", i, v);
		else if (v < -(1 << 18) || v >= (1 << 18))
			ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "padding_value",
				       (uint64_t)(int64_t)v, 1u << 18,
				       "PDP padding_value[%d] is %d, beyond the 19-bit register", i,
				       v);
	}
	if (!ret)
		ret = check_dims(c, "PDP", "src_data", &s->src_data);
	if (!ret)
		ret = check_dims(c, "PDP", "dst_data", &s->dst_data);
	if (!ret && s->src_data.channel != s->dst_data.channel)
		ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "dst_data", s->dst_data.channel,
			       s->src_data.channel,
			       "PDP dst_data has %u channels but src_data %u; pooling keeps them",
			       s->dst_data.channel, s->src_data.channel);
	if (!ret)
		ret = check_mem_type(c, "PDP", "src_data", s->src_data.type, true);
	if (!ret)
		ret = check_mem_type(c, "PDP", "dst_data", s->dst_data.type, false);
	if (ret)
		return ret;

	if (op->split_num == 1) {
		if (!windows_reach(s->dst_data.width, op->stride_x, op->pad_left,
				   op->pool_width + 1u, s->src_data.width))
			return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "dst_data",
					s->dst_data.width, 0,
					"PDP: %u output columns from %u input columns (kernel %u, "
					"stride %u, left padding %u) leave a window without input",
					s->dst_data.width, s->src_data.width, op->pool_width + 1u,
					op->stride_x, op->pad_left);
	} else {
		if (s->src_data.type == NVDLA_DLA_MEM_HW)
			return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "split_num",
					op->split_num, 1,
					"PDP fed by SDP (src_data type HW) cannot split the width");
		ret = check_pdp_splits(c, op, s);
		if (ret)
			return ret;
	}
	if (!windows_reach(s->dst_data.height, op->stride_y, op->pad_top, op->pool_height + 1u,
			   s->src_data.height))
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "dst_data", s->dst_data.height, 0,
				"PDP: %u output lines from %u input lines (kernel %u, stride %u, "
				"top padding %u) leave a window without input",
				s->dst_data.height, s->src_data.height, op->pool_height + 1u,
				op->stride_y, op->pad_top);

	if ((s->src_data.type == NVDLA_DLA_MEM_HW) != (dep->fused_parent.index >= 0))
		return dla_fail(c->err, NVDLA_DLA_E_GRAPH, c->op, "fused_parent",
				(uint64_t)(int64_t)dep->fused_parent.index, 0,
				s->src_data.type == NVDLA_DLA_MEM_HW
				    ? "PDP src_data is type HW, but no SDP is its fused parent"
				    : "PDP has a fused parent, but its src_data is in memory");
	if (s->src_data.type == NVDLA_DLA_MEM_HW) {
		const struct nvdla_dla_sdp_surface_desc *ss =
		    &c->task->surfaces[dep->fused_parent.index].sdp_surface;
		const struct nvdla_dla_sdp_op_desc *so =
		    &c->task->ops[dep->fused_parent.index].sdp_op;

		if (ss->dst_data.type != NVDLA_DLA_MEM_HW)
			return dla_fail(c->err, NVDLA_DLA_E_GRAPH, c->op, "fused_parent",
					(uint64_t)dep->fused_parent.index, 0,
					"PDP's fused parent, SDP operation %d, writes to memory",
					dep->fused_parent.index);
		ret = same_dims(c, "PDP", "src_data", &s->src_data, &ss->src_data,
				"its SDP's src_data");
		if (!ret && so->dst_precision != op->precision)
			ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "precision", op->precision,
				       so->dst_precision,
				       "PDP precision %u differs from its SDP's dst_precision %u",
				       op->precision, so->dst_precision);
		if (ret)
			return ret;
	} else {
		ret = check_feature(c, "PDP", "src_data", &s->src_data, op->precision, 0);
		if (ret)
			return ret;
	}
	return check_feature(c, "PDP", "dst_data", &s->dst_data, op->precision, 0);
}

/* ---- CDP ---- */

static int check_cdp(struct dla_check *c, const struct nvdla_dla_cdp_op_desc *op,
		     const struct nvdla_dla_cdp_surface_desc *s)
{
	int ret;

	ret = check_precision(c, "CDP", "in_precision", op->in_precision);
	if (!ret && op->out_precision != op->in_precision)
		ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "out_precision", op->out_precision,
			       op->in_precision,
			       "CDP out_precision %u differs from in_precision %u; CDP does not "
			       "convert",
			       op->out_precision, op->in_precision);
	if (!ret && (op->lut_index < -1 ||
		     (op->lut_index >= 0 && (uint32_t)op->lut_index >= c->task->num_luts)))
		ret = dla_fail(c->err, NVDLA_DLA_E_LUT_INDEX, c->op, "lut_index",
			       (uint64_t)(int64_t)op->lut_index, c->task->num_luts,
			       "CDP lut_index is %d; the task has %u LUTs", op->lut_index,
			       c->task->num_luts);
	if (!ret && (op->local_size < 3 || op->local_size > 9 || !(op->local_size & 1)))
		ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "local_size", op->local_size, 9,
			       "CDP local_size is %u; it must be 3, 5, 7 or 9", op->local_size);
	if (!ret)
		ret = check_enum(c, "CDP", "bypass_sqsum", op->bypass_sqsum, 1);
	if (!ret)
		ret = check_enum(c, "CDP", "bypass_out_mul", op->bypass_out_mul, 1);
	if (!ret)
		ret = check_range(c, "CDP", "in_cvt.truncate", op->in_cvt.truncate, 0, 31);
	if (!ret)
		ret = check_range(c, "CDP", "out_cvt.truncate", op->out_cvt.truncate, 0, 63);
	if (!ret)
		ret = check_dims(c, "CDP", "src_data", &s->src_data);
	if (!ret)
		ret = same_dims(c, "CDP", "dst_data", &s->dst_data, &s->src_data, "src_data");
	if (!ret)
		ret = check_mem_type(c, "CDP", "src_data", s->src_data.type, false);
	if (!ret)
		ret = check_mem_type(c, "CDP", "dst_data", s->dst_data.type, false);
	if (!ret)
		ret = check_feature(c, "CDP", "src_data", &s->src_data, op->in_precision, 0);
	if (!ret)
		ret = check_feature(c, "CDP", "dst_data", &s->dst_data, op->in_precision, 0);
	return ret;
}

/* ---- Rubik ---- */

/* One plane per channel: @planes planes of @height lines of @line bytes. */
static int check_planes(struct dla_check *c, const char *field,
			const struct nvdla_dla_data_cube *cube, uint32_t planes, uint32_t height,
			uint64_t line)
{
	uint64_t plane = line;
	int ret = 0;

	if (height > 1) {
		ret = check_aligned(c, "RUBIK", "line_stride", cube->line_stride, DLA_RUBIK_ATOM);
		if (!ret)
			ret = check_at_least(c, "RUBIK", "line_stride", cube->line_stride, line,
					     "a plane line needs");
		plane += (uint64_t)(height - 1) * cube->line_stride;
	}
	if (!ret && (planes > 1 || cube->plane_stride == 0)) {
		ret = check_aligned(c, "RUBIK", "plane_stride", cube->plane_stride, DLA_RUBIK_ATOM);
		if (!ret)
			ret = check_at_least(c, "RUBIK", "plane_stride", cube->plane_stride, plane,
					     "a plane needs");
	}
	if (ret)
		return ret;
	return check_memory(c, "RUBIK", field, cube->type, cube->address, cube_offset(cube),
			    (uint64_t)(planes - 1) * cube->plane_stride + plane, DLA_RUBIK_ATOM);
}

static int check_rubik(struct dla_check *c, const struct nvdla_dla_rubik_op_desc *op,
		       const struct nvdla_dla_rubik_surface_desc *s)
{
	const struct nvdla_dla_data_cube *src = &s->src_data, *dst = &s->dst_data;
	uint32_t bpe, lanes;
	int ret;

	ret = check_feature_bit(c, "RUBIK", NVDLA_FEATURE_RUBIK, "the Rubik unit");
	if (!ret)
		ret = check_enum(c, "RUBIK", "mode", op->mode, NVDLA_DLA_RUBIK_MERGE);
	if (!ret)
		ret = check_precision(c, "RUBIK", "precision", op->precision);
	if (!ret)
		ret = check_dims(c, "RUBIK", "src_data", src);
	if (!ret)
		ret = check_dims(c, "RUBIK", "dst_data", dst);
	if (!ret)
		ret = check_mem_type(c, "RUBIK", "src_data", src->type, false);
	if (!ret)
		ret = check_mem_type(c, "RUBIK", "dst_data", dst->type, false);
	if (ret)
		return ret;
	bpe = dla_bytes_per_element(op->precision);
	lanes = DLA_RUBIK_ATOM / bpe;

	if (op->mode == NVDLA_DLA_RUBIK_CONTRACT) {
		uint64_t surfaces = dla_div_up(dst->channel, lanes);
		uint64_t kernels, kernel_stride, in_bytes;

		ret = check_range(c, "RUBIK", "stride_x", op->stride_x, 1, 32);
		if (!ret)
			ret = check_range(c, "RUBIK", "stride_y", op->stride_y, 1, 32);
		if (ret)
			return ret;
		kernels = (uint64_t)op->stride_x * op->stride_y;
		if ((uint64_t)dst->width != (uint64_t)src->width * op->stride_x ||
		    (uint64_t)dst->height != (uint64_t)src->height * op->stride_y ||
		    (uint64_t)src->channel != (uint64_t)dst->channel * kernels)
			return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "dst_data", 0, 0,
					"RUBIK contract of %ux%ux%u with strides %ux%u gives "
					"%llux%llux%llu, but dst_data is %ux%ux%u",
					src->width, src->height, src->channel, op->stride_x,
					op->stride_y, (unsigned long long)src->width * op->stride_x,
					(unsigned long long)src->height * op->stride_y,
					(unsigned long long)(src->channel / kernels), dst->width,
					dst->height, dst->channel);
		/* The input of each kernel position is a whole output-channel cube away. */
		ret = check_aligned(c, "RUBIK", "src_data.surf_stride", src->surf_stride,
				    DLA_RUBIK_ATOM);
		if (ret)
			return ret;
		kernel_stride = surfaces * src->surf_stride;
		if (kernel_stride > 0xffffffffu ||
		    (uint64_t)op->stride_y * dst->line_stride > 0xffffffffu)
			return dla_fail(
			    c->err, NVDLA_DLA_E_FIELD, c->op, "src_data.surf_stride", kernel_stride,
			    0xffffffffu,
			    "RUBIK contract strides (%llu between kernel positions, %llu "
			    "between line groups) exceed the 32-bit registers",
			    (unsigned long long)kernel_stride,
			    (unsigned long long)op->stride_y * dst->line_stride);
		in_bytes = (uint64_t)src->width * DLA_RUBIK_ATOM;
		if (src->height > 1) {
			ret = check_aligned(c, "RUBIK", "src_data.line_stride", src->line_stride,
					    DLA_RUBIK_ATOM);
			if (!ret)
				ret = check_at_least(c, "RUBIK", "src_data.line_stride",
						     src->line_stride, in_bytes, "a line needs");
			in_bytes += (uint64_t)(src->height - 1) * src->line_stride;
		}
		if (!ret)
			ret = check_at_least(c, "RUBIK", "src_data.surf_stride", src->surf_stride,
					     in_bytes, "a surface needs");
		if (!ret)
			ret = check_memory(c, "RUBIK", "src_data", src->type, src->address,
					   cube_offset(src),
					   (kernels - 1) * kernel_stride +
					       (surfaces - 1) * src->surf_stride + in_bytes,
					   DLA_RUBIK_ATOM);
		if (!ret)
			ret =
			    check_surface(c, "RUBIK", "dst_data", dst, dst->height, surfaces,
					  (uint64_t)dst->width * DLA_RUBIK_ATOM, 0, DLA_RUBIK_ATOM);
		return ret;
	}

	ret = same_dims(c, "RUBIK", "dst_data", dst, src, "src_data");
	if (ret)
		return ret;
	if (op->mode == NVDLA_DLA_RUBIK_SPLIT) {
		ret = check_surface(c, "RUBIK", "src_data", src, src->height,
				    dla_div_up(src->channel, lanes),
				    (uint64_t)src->width * DLA_RUBIK_ATOM, 0, DLA_RUBIK_ATOM);
		if (!ret)
			ret =
			    check_planes(c, "dst_data", dst, dst->channel, dst->height,
					 dla_round_up((uint64_t)dst->width * bpe, DLA_RUBIK_ATOM));
		return ret;
	}
	ret = check_planes(c, "src_data", src, src->channel, src->height,
			   dla_round_up((uint64_t)src->width * bpe, DLA_RUBIK_ATOM));
	if (!ret)
		ret = check_surface(c, "RUBIK", "dst_data", dst, dst->height,
				    dla_div_up(dst->channel, lanes),
				    (uint64_t)dst->width * DLA_RUBIK_ATOM, 0, DLA_RUBIK_ATOM);
	return ret;
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
		return check_bdma(c, &surf->bdma_surface);
	case NVDLA_DLA_OP_CONV:
		return check_conv(c, &op->conv_op, &surf->conv_surface);
	case NVDLA_DLA_OP_SDP:
		return check_sdp(c, &op->sdp_op, &surf->sdp_surface);
	case NVDLA_DLA_OP_PDP:
		return check_pdp(c, &op->pdp_op, &surf->pdp_surface);
	case NVDLA_DLA_OP_CDP:
		return check_cdp(c, &op->cdp_op, &surf->cdp_surface);
	case NVDLA_DLA_OP_RUBIK:
		return check_rubik(c, &op->rubik_op, &surf->rubik_surface);
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
	ret = check_enum(c, what, "method", lut->method, NVDLA_DLA_LUT_METHOD_LINEAR);
	if (!ret)
		ret = check_enum(c, what, "hybrid_priority", lut->hybrid_priority, 1);
	if (!ret)
		ret = check_enum(c, what, "underflow_priority", lut->underflow_priority, 1);
	if (!ret)
		ret = check_enum(c, what, "overflow_priority", lut->overflow_priority, 1);
	return ret;
}
