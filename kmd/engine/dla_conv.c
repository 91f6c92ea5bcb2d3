// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Convolution: the CDMA -> CSC -> CMAC_A/CMAC_B -> CACC pipeline, programmed
 * back to front and enabled together; its output goes to the fused SDP.
 */
#include "dla_internal.h"

#define CONV_WR(c, unit, reg, value)                                                               \
	dla_wr((c)->e, NVDLA_UNIT_##unit, NVDLA_##unit##_##reg, (value))
#define F(unit, reg, field, value) NVDLA_FIELD_SET(unit, reg, field, (u32)(value))

static void program_cacc(struct dla_op_ctx *c, const struct nvdla_dla_conv_op_desc *op,
			 const struct nvdla_dla_conv_surface_desc *s)
{
	const struct nvdla_dla_data_cube *dst = &s->dst_data;
	bool one_by_one = dst->width == 1 && dst->height == 1;

	CONV_WR(c, CACC, D_MISC_CFG,
		F(CACC, D_MISC_CFG, CONV_MODE, op->conv_mode) |
			F(CACC, D_MISC_CFG, PROC_PRECISION, op->out_precision));
	CONV_WR(c, CACC, D_DATAOUT_SIZE_0,
		F(CACC, D_DATAOUT_SIZE_0, DATAOUT_WIDTH, dst->width - 1) |
			F(CACC, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT, dst->height - 1));
	CONV_WR(c, CACC, D_DATAOUT_SIZE_1,
		F(CACC, D_DATAOUT_SIZE_1, DATAOUT_CHANNEL, dst->channel - 1));
	/* The output goes to SDP (type HW): no memory address. */
	CONV_WR(c, CACC, D_DATAOUT_ADDR, 0);
	CONV_WR(c, CACC, D_BATCH_NUMBER, F(CACC, D_BATCH_NUMBER, BATCHES, op->batch - 1));
	CONV_WR(c, CACC, D_LINE_STRIDE, dst->line_stride);
	CONV_WR(c, CACC, D_SURF_STRIDE, dst->surf_stride);
	CONV_WR(c, CACC, D_DATAOUT_MAP,
		F(CACC, D_DATAOUT_MAP, LINE_PACKED, one_by_one) |
			F(CACC, D_DATAOUT_MAP, SURF_PACKED, one_by_one));
	CONV_WR(c, CACC, D_CLIP_CFG, F(CACC, D_CLIP_CFG, CLIP_TRUNCATE, op->out_cvt.truncate));
}

static void program_cmac(struct dla_op_ctx *c, const struct nvdla_dla_conv_op_desc *op)
{
	u32 misc = F(CMAC_A, D_MISC_CFG, CONV_MODE, op->conv_mode) |
		   F(CMAC_A, D_MISC_CFG, PROC_PRECISION, op->out_precision);

	CONV_WR(c, CMAC_A, D_MISC_CFG, misc);
	CONV_WR(c, CMAC_B, D_MISC_CFG, misc);
}

static void program_csc(struct dla_op_ctx *c, const struct nvdla_dla_conv_op_desc *op,
			const struct nvdla_dla_conv_surface_desc *s)
{
	const struct nvdla_dla_data_cube *dst = &s->dst_data;
	bool direct = op->conv_mode == NVDLA_DLA_CONV_DIRECT;
	bool feature = op->data_format == NVDLA_DLA_FORMAT_FEATURE;

	/* The buffer holds the data in the processing precision, whatever came in. */
	CONV_WR(c, CSC, D_MISC_CFG,
		F(CSC, D_MISC_CFG, CONV_MODE, op->conv_mode) |
			F(CSC, D_MISC_CFG, IN_PRECISION, op->out_precision) |
			F(CSC, D_MISC_CFG, PROC_PRECISION, op->out_precision) |
			F(CSC, D_MISC_CFG, DATA_REUSE, op->data_reuse) |
			F(CSC, D_MISC_CFG, WEIGHT_REUSE, op->weight_reuse) |
			F(CSC, D_MISC_CFG, SKIP_DATA_RLS, op->skip_data_rls) |
			F(CSC, D_MISC_CFG, SKIP_WEIGHT_RLS, op->skip_weight_rls));
	CONV_WR(c, CSC, D_DATAIN_FORMAT,
		F(CSC, D_DATAIN_FORMAT, DATAIN_FORMAT,
		  feature ? NVDLA_CSC_D_DATAIN_FORMAT_DATAIN_FORMAT_FEATURE
			  : NVDLA_CSC_D_DATAIN_FORMAT_DATAIN_FORMAT_PIXEL));
	CONV_WR(c, CSC, D_DATAIN_SIZE_EXT_0,
		F(CSC, D_DATAIN_SIZE_EXT_0, DATAIN_WIDTH_EXT, op->input_width_csc - 1) |
			F(CSC, D_DATAIN_SIZE_EXT_0, DATAIN_HEIGHT_EXT, op->input_height_csc - 1));
	CONV_WR(c, CSC, D_DATAIN_SIZE_EXT_1,
		F(CSC, D_DATAIN_SIZE_EXT_1, DATAIN_CHANNEL_EXT, op->input_channel_csc - 1));
	CONV_WR(c, CSC, D_BATCH_NUMBER, F(CSC, D_BATCH_NUMBER, BATCHES, op->batch - 1));
	CONV_WR(c, CSC, D_POST_Y_EXTENSION,
		F(CSC, D_POST_Y_EXTENSION, Y_EXTENSION, op->post_extension));
	CONV_WR(c, CSC, D_ENTRY_PER_SLICE,
		F(CSC, D_ENTRY_PER_SLICE, ENTRIES, op->entry_per_slice - 1));
	CONV_WR(c, CSC, D_WEIGHT_FORMAT, F(CSC, D_WEIGHT_FORMAT, WEIGHT_FORMAT, op->weight_format));
	CONV_WR(c, CSC, D_WEIGHT_SIZE_EXT_0,
		F(CSC, D_WEIGHT_SIZE_EXT_0, WEIGHT_WIDTH_EXT, op->kernel_width_csc - 1) |
			F(CSC, D_WEIGHT_SIZE_EXT_0, WEIGHT_HEIGHT_EXT, op->kernel_height_csc - 1));
	CONV_WR(c, CSC, D_WEIGHT_SIZE_EXT_1,
		F(CSC, D_WEIGHT_SIZE_EXT_1, WEIGHT_CHANNEL_EXT, op->kernel_channel_csc - 1) |
			F(CSC, D_WEIGHT_SIZE_EXT_1, WEIGHT_KERNEL, dst->channel - 1));
	CONV_WR(c, CSC, D_WEIGHT_BYTES, s->weight_data.size);
	CONV_WR(c, CSC, D_WMB_BYTES,
		op->weight_format == NVDLA_DLA_WEIGHT_COMPRESSED
			? F(CSC, D_WMB_BYTES, WMB_BYTES, s->wmb_data.size)
			: 0);
	CONV_WR(c, CSC, D_DATAOUT_SIZE_0,
		F(CSC, D_DATAOUT_SIZE_0, DATAOUT_WIDTH, op->input_width_cmac - 1) |
			F(CSC, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT, op->input_height_cmac - 1));
	CONV_WR(c, CSC, D_DATAOUT_SIZE_1,
		F(CSC, D_DATAOUT_SIZE_1, DATAOUT_CHANNEL, dst->channel - 1));
	CONV_WR(c, CSC, D_ATOMICS, F(CSC, D_ATOMICS, ATOMICS, (u32)dst->width * dst->height - 1));
	CONV_WR(c, CSC, D_RELEASE, F(CSC, D_RELEASE, RLS_SLICES, op->release - 1));
	/* Winograd strides and pads are applied by CDMA alone. */
	CONV_WR(c, CSC, D_CONV_STRIDE_EXT,
		F(CSC, D_CONV_STRIDE_EXT, CONV_X_STRIDE_EXT, direct ? op->conv_stride_x - 1 : 0) |
			F(CSC, D_CONV_STRIDE_EXT, CONV_Y_STRIDE_EXT,
			  direct ? op->conv_stride_y - 1 : 0));
	CONV_WR(c, CSC, D_DILATION_EXT,
		F(CSC, D_DILATION_EXT, X_DILATION_EXT, op->dilation_x - 1) |
			F(CSC, D_DILATION_EXT, Y_DILATION_EXT, op->dilation_y - 1));
	CONV_WR(c, CSC, D_ZERO_PADDING,
		F(CSC, D_ZERO_PADDING, PAD_LEFT, direct ? op->pad_x_left : 0) |
			F(CSC, D_ZERO_PADDING, PAD_TOP, direct ? op->pad_y_top : 0));
	CONV_WR(c, CSC, D_ZERO_PADDING_VALUE,
		F(CSC, D_ZERO_PADDING_VALUE, PAD_VALUE, (u16)op->pad_val));
	CONV_WR(c, CSC, D_BANK,
		F(CSC, D_BANK, DATA_BANK, op->data_bank - 1) |
			F(CSC, D_BANK, WEIGHT_BANK, op->weight_bank - 1));
	CONV_WR(c, CSC, D_PRA_CFG, F(CSC, D_PRA_CFG, PRA_TRUNCATE, op->pra_truncate));
}

static void program_cdma(struct dla_op_ctx *c, const struct nvdla_dla_conv_op_desc *op,
			 const struct nvdla_dla_conv_surface_desc *s)
{
	const struct nvdla_dla_data_cube *src = &s->src_data, *w = &s->weight_data;
	u32 atom = c->e->cfg->atom_bytes;
	bool feature = op->data_format == NVDLA_DLA_FORMAT_FEATURE;
	u64 input = dla_cube_address(c->task, src);
	u64 input_uv = input + (u64)s->offset_u;
	u64 weights = dla_cube_address(c->task, w);

	CONV_WR(c, CDMA, D_MISC_CFG,
		F(CDMA, D_MISC_CFG, CONV_MODE, op->conv_mode) |
			F(CDMA, D_MISC_CFG, IN_PRECISION, op->in_precision) |
			F(CDMA, D_MISC_CFG, PROC_PRECISION, op->out_precision) |
			F(CDMA, D_MISC_CFG, DATA_REUSE, op->data_reuse) |
			F(CDMA, D_MISC_CFG, WEIGHT_REUSE, op->weight_reuse) |
			F(CDMA, D_MISC_CFG, SKIP_DATA_RLS, op->skip_data_rls) |
			F(CDMA, D_MISC_CFG, SKIP_WEIGHT_RLS, op->skip_weight_rls));
	CONV_WR(c, CDMA, D_DATAIN_FORMAT,
		F(CDMA, D_DATAIN_FORMAT, DATAIN_FORMAT,
		  feature ? NVDLA_CDMA_D_DATAIN_FORMAT_DATAIN_FORMAT_FEATURE
			  : NVDLA_CDMA_D_DATAIN_FORMAT_DATAIN_FORMAT_PIXEL) |
			F(CDMA, D_DATAIN_FORMAT, PIXEL_FORMAT, feature ? 0 : op->data_format) |
			F(CDMA, D_DATAIN_FORMAT, PIXEL_MAPPING, op->pixel_mapping) |
			F(CDMA, D_DATAIN_FORMAT, PIXEL_SIGN_OVERRIDE, op->pixel_override));
	CONV_WR(c, CDMA, D_DATAIN_SIZE_0,
		F(CDMA, D_DATAIN_SIZE_0, DATAIN_WIDTH, src->width - 1) |
			F(CDMA, D_DATAIN_SIZE_0, DATAIN_HEIGHT, src->height - 1));
	CONV_WR(c, CDMA, D_DATAIN_SIZE_1,
		F(CDMA, D_DATAIN_SIZE_1, DATAIN_CHANNEL, src->channel - 1));
	CONV_WR(c, CDMA, D_DATAIN_SIZE_EXT_0,
		F(CDMA, D_DATAIN_SIZE_EXT_0, DATAIN_WIDTH_EXT, op->input_width_csc - 1) |
			F(CDMA, D_DATAIN_SIZE_EXT_0, DATAIN_HEIGHT_EXT, op->input_height_csc - 1));
	/* Images start at their first pixel: the validator counted no x offset. */
	if (!feature)
		CONV_WR(c, CDMA, D_PIXEL_OFFSET, 0);
	CONV_WR(c, CDMA, D_DAIN_RAM_TYPE,
		F(CDMA, D_DAIN_RAM_TYPE, DATAIN_RAM_TYPE, dla_ram_type(src->type)));
	CONV_WR(c, CDMA, D_DAIN_ADDR_HIGH_0, dla_hi32(input));
	CONV_WR(c, CDMA, D_DAIN_ADDR_LOW_0, dla_lo32(input));
	CONV_WR(c, CDMA, D_DAIN_ADDR_HIGH_1, dla_hi32(input_uv));
	CONV_WR(c, CDMA, D_DAIN_ADDR_LOW_1, dla_lo32(input_uv));
	CONV_WR(c, CDMA, D_LINE_STRIDE, src->line_stride);
	CONV_WR(c, CDMA, D_SURF_STRIDE, src->surf_stride);
	CONV_WR(c, CDMA, D_LINE_UV_STRIDE, s->in_line_uv_stride);
	CONV_WR(c, CDMA, D_DAIN_MAP,
		F(CDMA, D_DAIN_MAP, LINE_PACKED, src->line_stride == (u32)src->width * atom) |
			F(CDMA, D_DAIN_MAP, SURF_PACKED,
			  src->surf_stride == (u32)src->width * src->height * atom));
	CONV_WR(c, CDMA, D_BATCH_NUMBER, F(CDMA, D_BATCH_NUMBER, BATCHES, op->batch - 1));
	CONV_WR(c, CDMA, D_BATCH_STRIDE, op->batch_stride);
	CONV_WR(c, CDMA, D_ENTRY_PER_SLICE,
		F(CDMA, D_ENTRY_PER_SLICE, ENTRIES, op->entry_per_slice - 1));
	CONV_WR(c, CDMA, D_FETCH_GRAIN, F(CDMA, D_FETCH_GRAIN, GRAINS, op->fetch_grain - 1));
	CONV_WR(c, CDMA, D_WEIGHT_FORMAT,
		F(CDMA, D_WEIGHT_FORMAT, WEIGHT_FORMAT, op->weight_format));
	CONV_WR(c, CDMA, D_WEIGHT_SIZE_0,
		F(CDMA, D_WEIGHT_SIZE_0, BYTE_PER_KERNEL, op->bytes_per_kernel - 1));
	CONV_WR(c, CDMA, D_WEIGHT_SIZE_1,
		F(CDMA, D_WEIGHT_SIZE_1, WEIGHT_KERNEL, s->dst_data.channel - 1));
	CONV_WR(c, CDMA, D_WEIGHT_RAM_TYPE,
		F(CDMA, D_WEIGHT_RAM_TYPE, WEIGHT_RAM_TYPE, dla_ram_type(w->type)));
	CONV_WR(c, CDMA, D_WEIGHT_ADDR_HIGH, dla_hi32(weights));
	CONV_WR(c, CDMA, D_WEIGHT_ADDR_LOW, dla_lo32(weights));
	CONV_WR(c, CDMA, D_WEIGHT_BYTES, w->size);
	if (op->weight_format == NVDLA_DLA_WEIGHT_COMPRESSED) {
		u64 wgs = dla_cube_address(c->task, &s->wgs_data);
		u64 wmb = dla_cube_address(c->task, &s->wmb_data);

		CONV_WR(c, CDMA, D_WGS_ADDR_HIGH, dla_hi32(wgs));
		CONV_WR(c, CDMA, D_WGS_ADDR_LOW, dla_lo32(wgs));
		CONV_WR(c, CDMA, D_WMB_ADDR_HIGH, dla_hi32(wmb));
		CONV_WR(c, CDMA, D_WMB_ADDR_LOW, dla_lo32(wmb));
		CONV_WR(c, CDMA, D_WMB_BYTES, F(CDMA, D_WMB_BYTES, WMB_BYTES, s->wmb_data.size));
	}
	CONV_WR(c, CDMA, D_MEAN_FORMAT, F(CDMA, D_MEAN_FORMAT, MEAN_FORMAT, op->mean_format));
	if (op->mean_format == NVDLA_DLA_MEAN_ENABLE) {
		CONV_WR(c, CDMA, D_MEAN_GLOBAL_0,
			F(CDMA, D_MEAN_GLOBAL_0, MEAN_RY, (u16)op->mean_ry) |
				F(CDMA, D_MEAN_GLOBAL_0, MEAN_GU, (u16)op->mean_gu));
		CONV_WR(c, CDMA, D_MEAN_GLOBAL_1,
			F(CDMA, D_MEAN_GLOBAL_1, MEAN_BV, (u16)op->mean_bv) |
				F(CDMA, D_MEAN_GLOBAL_1, MEAN_AX, (u16)op->mean_ax));
	}
	if (op->in_cvt.enable) {
		CONV_WR(c, CDMA, D_CVT_CFG,
			F(CDMA, D_CVT_CFG, CVT_EN, NVDLA_CDMA_D_CVT_CFG_CVT_EN_ENABLE) |
				F(CDMA, D_CVT_CFG, CVT_TRUNCATE, op->in_cvt.truncate));
		CONV_WR(c, CDMA, D_CVT_OFFSET,
			F(CDMA, D_CVT_OFFSET, CVT_OFFSET, (u32)op->in_cvt.offset));
		CONV_WR(c, CDMA, D_CVT_SCALE,
			F(CDMA, D_CVT_SCALE, CVT_SCALE, (u16)op->in_cvt.scale));
	} else {
		CONV_WR(c, CDMA, D_CVT_CFG,
			F(CDMA, D_CVT_CFG, CVT_EN, NVDLA_CDMA_D_CVT_CFG_CVT_EN_DISABLE));
	}
	CONV_WR(c, CDMA, D_CONV_STRIDE,
		F(CDMA, D_CONV_STRIDE, CONV_X_STRIDE, op->conv_stride_x - 1) |
			F(CDMA, D_CONV_STRIDE, CONV_Y_STRIDE, op->conv_stride_y - 1));
	CONV_WR(c, CDMA, D_ZERO_PADDING,
		F(CDMA, D_ZERO_PADDING, PAD_LEFT, op->pad_x_left) |
			F(CDMA, D_ZERO_PADDING, PAD_RIGHT, op->pad_x_right) |
			F(CDMA, D_ZERO_PADDING, PAD_TOP, op->pad_y_top) |
			F(CDMA, D_ZERO_PADDING, PAD_BOTTOM, op->pad_y_bottom));
	CONV_WR(c, CDMA, D_ZERO_PADDING_VALUE,
		F(CDMA, D_ZERO_PADDING_VALUE, PAD_VALUE, (u16)op->pad_val));
	CONV_WR(c, CDMA, D_BANK,
		F(CDMA, D_BANK, WEIGHT_BANK, op->weight_bank - 1) |
			F(CDMA, D_BANK, DATA_BANK, op->data_bank - 1));
}

int dla_conv_program(struct dla_op_ctx *c, struct nvdla_dla_error *err)
{
	const struct nvdla_dla_conv_op_desc *op = &c->op->conv_op;
	const struct nvdla_dla_conv_surface_desc *s = &c->surf->conv_surface;

	(void)err;
	program_cacc(c, op, s);
	program_cmac(c, op);
	program_csc(c, op, s);
	program_cdma(c, op, s);
	return 0;
}

int dla_conv_enable(struct dla_op_ctx *c, struct nvdla_dla_error *err)
{
	u32 on = NVDLA_FIELD_SET(CACC, D_OP_ENABLE, OP_EN, 1);
	u32 status;

	/* The convolution buffer must have been flushed since reset. */
	if (dla_poll(c->e, NVDLA_UNIT_CDMA, NVDLA_CDMA_S_CBUF_FLUSH_STATUS,
		     NVDLA_FIELD_MASK(CDMA, S_CBUF_FLUSH_STATUS, FLUSH_DONE), &status))
		return dla_fail(err, NVDLA_DLA_E_TIMEOUT, c->index, "S_CBUF_FLUSH_STATUS", status,
				NVDLA_DLA_POLL_LIMIT,
				"CONV: the convolution buffer was not flushed after %u reads",
				NVDLA_DLA_POLL_LIMIT);
	CONV_WR(c, CACC, D_OP_ENABLE, on);
	CONV_WR(c, CMAC_A, D_OP_ENABLE, on);
	CONV_WR(c, CMAC_B, D_OP_ENABLE, on);
	CONV_WR(c, CSC, D_OP_ENABLE, on);
	CONV_WR(c, CDMA, D_OP_ENABLE, on);
	return 0;
}

/* ---- checks (the shared rules are in dla_check.c) ---- */

static const u8 pixel_bytes[NVDLA_DLA_FORMAT_PIXEL_COUNT][2] = {
	{1, 0}, {2, 0}, {2, 0}, {2, 0}, {2, 0}, {2, 0}, /* R8 .. R16_F */
	{8, 0}, {8, 0}, {8, 0}, {8, 0}, {8, 0}, {8, 0}, /* 16-bit RGBA/YUVA */
	{4, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, /* 8-bit RGBA */
	{4, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, /* 10-bit packed */
	{4, 0}, {4, 0}, {4, 0}, {4, 0},			/* YUV packed */
	{1, 2}, {1, 2}, {2, 4}, {2, 4}, {2, 4}, {2, 4}, /* semi-planar */
	{2, 4}, {2, 4},
};

u32 dla_pixel_bytes(unsigned int format, unsigned int plane)
{
	if (format >= NVDLA_DLA_FORMAT_PIXEL_COUNT || plane > 1)
		return 0;
	return pixel_bytes[format][plane];
}

/* One plane of a pitch-linear image: @height lines of @width pixels of @bpp bytes. */
static int check_plane(struct dla_check *c, const char *field,
		       const struct nvdla_dla_data_cube *cube, s64 offset, u32 line_stride, u32 bpp)
{
	u32 atom = c->cfg->atom_bytes;
	u64 line = (u64)cube->width * bpp;
	int ret;

	ret = dla_check_aligned(c, "CONV", field, line_stride, atom);
	if (!ret)
		ret = dla_check_at_least(c, "CONV", field, line_stride, line,
					 "an image line needs");
	if (ret)
		return ret;
	return dla_check_memory(c, "CONV", field, cube->type, cube->address, offset,
				(u64)(cube->height - 1) * line_stride + dla_round_up(line, atom),
				atom);
}

static int check_conv_input(struct dla_check *c, const struct nvdla_dla_conv_op_desc *op,
			    const struct nvdla_dla_conv_surface_desc *s)
{
	const struct nvdla_dla_data_cube *src = &s->src_data;
	u64 extra;
	int ret;

	ret = dla_check_mem_type(c, "CONV", "src_data", src->type, false);
	if (!ret)
		ret = dla_check_dims(c, "CONV", "src_data", src);
	if (ret)
		return ret;
	if (op->data_format == NVDLA_DLA_FORMAT_FEATURE) {
		ret = dla_check_batches(c, "CONV", "batch_stride", op->batch, op->batch_stride,
					dla_feature_bytes(c, src, op->in_precision), &extra);
		if (ret)
			return ret;
		return dla_check_feature(c, "CONV", "src_data", src, op->in_precision, extra);
	}
	if (op->batch != 1)
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "batch", op->batch, 1,
				"CONV batch is %u, but image input has one batch", op->batch);
	if (op->conv_mode != NVDLA_DLA_CONV_DIRECT)
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "conv_mode", op->conv_mode, 0,
				"CONV image input needs direct convolution (conv_mode 0)");
	ret = check_plane(c, "src_data", src, dla_cube_offset(src), src->line_stride,
			  dla_pixel_bytes(op->data_format, 0));
	if (ret || !dla_pixel_bytes(op->data_format, 1))
		return ret;
	/* The second plane of a semi-planar image, offset_u bytes after the first. */
	if (s->offset_u < -((s64)1 << 40) || s->offset_u > ((s64)1 << 40))
		return dla_fail(c->err, NVDLA_DLA_E_EXTENT, c->op, "offset_u", (u64)s->offset_u, 0,
				"CONV offset_u %lld is outside any buffer", (long long)s->offset_u);
	return check_plane(c, "offset_u", src, dla_cube_offset(src) + s->offset_u,
			   s->in_line_uv_stride, dla_pixel_bytes(op->data_format, 1));
}

/*
 * The unit in which CDMA counts D_WEIGHT_BYTES: nv_full's register has no bits 6:0 (128 bytes);
 * the nv_small family's CDMA requests weight_bytes[31:log2(atom)] memory atoms (nvdla/hw
 * NV_NVDLA_CDMA_wt.v). A size that is a multiple of it is fetched exactly; the firmware
 * programs weight_data.size unchanged, so another size would silently lose weights.
 */
static u32 weight_bytes_unit(const struct nvdla_hw_config *cfg)
{
	return cfg->reg_map == NVDLA_REG_MAP_FULL ? 128 : cfg->atom_bytes;
}

static int check_conv_weights(struct dla_check *c, const struct nvdla_dla_conv_op_desc *op,
			      const struct nvdla_dla_conv_surface_desc *s)
{
	const struct nvdla_dla_data_cube *w = &s->weight_data;
	const u32 unit = weight_bytes_unit(c->cfg);
	u32 per_group, groups;
	int ret;

	ret = dla_check_mem_type(c, "CONV", "weight_data", w->type, false);
	if (!ret)
		ret = dla_check_range(c, "CONV", "weight_data.size", w->size, unit, 0xffffffffu);
	if (!ret)
		ret = dla_check_aligned(c, "CONV", "weight_data.size", w->size, unit);
	if (!ret)
		ret = dla_check_memory(c, "CONV", "weight_data", w->type, w->address,
				       dla_cube_offset(w), w->size, 256);
	if (ret || op->weight_format != NVDLA_DLA_WEIGHT_COMPRESSED)
		return ret;

	ret = dla_check_mem_type(c, "CONV", "wmb_data", s->wmb_data.type, false);
	if (!ret)
		ret = dla_check_range(c, "CONV", "wmb_data.size", s->wmb_data.size, 128,
				      0x0fffffffu);
	if (!ret)
		ret = dla_check_aligned(c, "CONV", "wmb_data.size", s->wmb_data.size, 128);
	if (!ret)
		ret = dla_check_memory(c, "CONV", "wmb_data", s->wmb_data.type, s->wmb_data.address,
				       dla_cube_offset(&s->wmb_data), s->wmb_data.size, 256);
	if (ret)
		return ret;
	/* One 32-bit size per kernel group. */
	per_group = op->out_precision == NVDLA_DLA_PRECISION_INT8 ? c->cfg->mac_atomic_k
								  : c->cfg->mac_atomic_k / 2;
	groups = (u32)dla_div_up(s->dst_data.channel, per_group ? per_group : 1);
	ret = dla_check_mem_type(c, "CONV", "wgs_data", s->wgs_data.type, false);
	if (!ret)
		ret = dla_check_memory(c, "CONV", "wgs_data", s->wgs_data.type, s->wgs_data.address,
				       dla_cube_offset(&s->wgs_data), (u64)groups * 4, 256);
	return ret;
}

int dla_conv_check(struct dla_check *c, const struct nvdla_dla_conv_op_desc *op,
		   const struct nvdla_dla_conv_surface_desc *s)
{
	const struct nvdla_hw_config *cfg = c->cfg;
	int ret;

	ret = dla_check_enum(c, "CONV", "conv_mode", op->conv_mode, NVDLA_DLA_CONV_WINOGRAD);
	if (!ret && op->conv_mode == NVDLA_DLA_CONV_WINOGRAD)
		ret = dla_check_feature_bit(c, "CONV Winograd mode", NVDLA_FEATURE_WINOGRAD,
					    "Winograd convolution");
	if (!ret)
		ret = dla_check_precision(c, "CONV", "in_precision", op->in_precision);
	if (!ret)
		ret = dla_check_precision(c, "CONV", "out_precision", op->out_precision);
	if (!ret)
		ret = dla_check_enum(c, "CONV", "data_format", op->data_format,
				     NVDLA_DLA_FORMAT_FEATURE);
	if (!ret)
		ret = dla_check_enum(c, "CONV", "pixel_mapping", op->pixel_mapping,
				     NVDLA_DLA_PIXEL_MAPPING_PITCH_LINEAR);
	if (!ret)
		ret = dla_check_enum(c, "CONV", "pixel_override", op->pixel_override, 1);
	if (!ret)
		ret = dla_check_enum(c, "CONV", "weight_format", op->weight_format,
				     NVDLA_DLA_WEIGHT_COMPRESSED);
	if (!ret && op->weight_format == NVDLA_DLA_WEIGHT_COMPRESSED)
		ret = dla_check_feature_bit(c, "CONV compressed weights",
					    NVDLA_FEATURE_WEIGHT_COMPRESSION, "weight compression");
	if (!ret)
		ret = dla_check_enum(c, "CONV", "mean_format", op->mean_format,
				     NVDLA_DLA_MEAN_ENABLE);
	if (!ret)
		ret = dla_check_enum(c, "CONV", "data_reuse", op->data_reuse, 1);
	if (!ret)
		ret = dla_check_enum(c, "CONV", "weight_reuse", op->weight_reuse, 1);
	if (!ret)
		ret = dla_check_enum(c, "CONV", "skip_data_rls", op->skip_data_rls, 1);
	if (!ret)
		ret = dla_check_enum(c, "CONV", "skip_weight_rls", op->skip_weight_rls, 1);
	if (!ret)
		ret = dla_check_range(c, "CONV", "batch", op->batch, 1,
				      cfg->max_batch < 32 ? cfg->max_batch : 32);
	if (!ret)
		ret = dla_check_range(c, "CONV", "conv_stride_x", op->conv_stride_x, 1, 8);
	if (!ret)
		ret = dla_check_range(c, "CONV", "conv_stride_y", op->conv_stride_y, 1, 8);
	if (!ret)
		ret = dla_check_range(c, "CONV", "dilation_x", op->dilation_x, 1, 32);
	if (!ret)
		ret = dla_check_range(c, "CONV", "dilation_y", op->dilation_y, 1, 32);
	if (!ret)
		ret = dla_check_range(c, "CONV", "pad_x_left", op->pad_x_left, 0, 31);
	if (!ret)
		ret = dla_check_range(c, "CONV", "pad_x_right", op->pad_x_right, 0, 63);
	if (!ret)
		ret = dla_check_range(c, "CONV", "pad_y_top", op->pad_y_top, 0, 31);
	if (!ret)
		ret = dla_check_range(c, "CONV", "pad_y_bottom", op->pad_y_bottom, 0, 63);
	if (!ret)
		ret = dla_check_range(c, "CONV", "data_bank", op->data_bank, 1, 32);
	if (!ret)
		ret = dla_check_range(c, "CONV", "weight_bank", op->weight_bank, 1, 32);
	if (!ret && (u32)op->data_bank + op->weight_bank > cfg->cbuf_banks)
		ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "data_bank",
			       (u64)op->data_bank + op->weight_bank, cfg->cbuf_banks,
			       "CONV data_bank %u + weight_bank %u exceed the %u banks of %s",
			       op->data_bank, op->weight_bank, cfg->cbuf_banks, cfg->name);
	if (!ret)
		ret = dla_check_range(c, "CONV", "entry_per_slice", op->entry_per_slice, 1, 16384);
	if (!ret)
		ret = dla_check_range(c, "CONV", "fetch_grain", op->fetch_grain, 1, 4096);
	if (!ret)
		ret = dla_check_range(c, "CONV", "release", op->release, 1, 4096);
	if (!ret)
		ret = dla_check_range(c, "CONV", "input_width_csc", op->input_width_csc, 1,
				      DLA_MAX_DIM);
	if (!ret)
		ret = dla_check_range(c, "CONV", "input_height_csc", op->input_height_csc, 1,
				      DLA_MAX_DIM);
	if (!ret)
		ret = dla_check_range(c, "CONV", "input_channel_csc", op->input_channel_csc, 1,
				      DLA_MAX_DIM);
	if (!ret)
		ret = dla_check_range(c, "CONV", "kernel_width_csc", op->kernel_width_csc, 1, 32);
	if (!ret)
		ret = dla_check_range(c, "CONV", "kernel_height_csc", op->kernel_height_csc, 1, 32);
	if (!ret)
		ret = dla_check_range(c, "CONV", "kernel_channel_csc", op->kernel_channel_csc, 1,
				      DLA_MAX_DIM);
	if (!ret)
		ret = dla_check_range(c, "CONV", "input_width_cmac", op->input_width_cmac, 1,
				      DLA_MAX_DIM);
	if (!ret)
		ret = dla_check_range(c, "CONV", "input_height_cmac", op->input_height_cmac, 1,
				      DLA_MAX_DIM);
	if (!ret)
		ret = dla_check_range(c, "CONV", "bytes_per_kernel", op->bytes_per_kernel, 1,
				      1u << 18);
	if (!ret)
		ret = dla_check_range(c, "CONV", "post_extension", op->post_extension, 0, 3);
	if (!ret)
		ret = dla_check_range(c, "CONV", "pra_truncate", op->pra_truncate, 0, 3);
	if (!ret)
		ret = dla_check_range(c, "CONV", "in_cvt.truncate", op->in_cvt.truncate, 0, 63);
	if (!ret)
		ret = dla_check_enum(c, "CONV", "in_cvt.enable", op->in_cvt.enable, 1);
	if (!ret)
		ret = dla_check_range(c, "CONV", "out_cvt.truncate", op->out_cvt.truncate, 0, 31);
	if (!ret && (op->out_cvt.scale != 1 || op->out_cvt.offset != 0))
		ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "out_cvt.scale",
			       (u64)(s64)op->out_cvt.scale, 1,
			       "CONV out_cvt has scale %d and offset %d; the convolution output only truncates (scale 1, offset 0)",
			       op->out_cvt.scale, op->out_cvt.offset);
	if (!ret)
		ret = dla_check_dims(c, "CONV", "dst_data", &s->dst_data);
	if (!ret && (u64)s->dst_data.width * s->dst_data.height > (1u << 21))
		ret = dla_fail_range(c, "CONV", "dst_data.width x height",
				     (u64)s->dst_data.width * s->dst_data.height, 1, 1u << 21);
	if (!ret)
		ret = dla_check_mem_type(c, "CONV", "dst_data", s->dst_data.type, true);
	if (!ret && s->dst_data.type != NVDLA_DLA_MEM_HW)
		ret = dla_fail(c->err, NVDLA_DLA_E_MEMORY, c->op, "dst_data", s->dst_data.type,
			       NVDLA_DLA_MEM_HW,
			       "CONV dst_data has memory type %s; the convolution delivers to SDP (type HW)",
			       dla_mem_name(s->dst_data.type));
	if (!ret)
		ret = check_conv_input(c, op, s);
	if (!ret)
		ret = check_conv_weights(c, op, s);
	return ret;
}
