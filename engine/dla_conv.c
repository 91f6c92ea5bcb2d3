// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Convolution: the CDMA -> CSC -> CMAC_A/CMAC_B -> CACC pipeline, programmed
 * back to front and enabled together; its output goes to the fused SDP.
 */
#include "dla_internal.h"

#define CONV_WR(c, unit, reg, value)                                                               \
	dla_wr((c)->e, NVDLA_UNIT_##unit, NVDLA_##unit##_##reg, (value))
#define F(unit, reg, field, value) NVDLA_FIELD_SET(unit, reg, field, (uint32_t)(value))

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
	uint32_t misc = F(CMAC_A, D_MISC_CFG, CONV_MODE, op->conv_mode) |
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
	CONV_WR(c, CSC, D_ATOMICS,
		F(CSC, D_ATOMICS, ATOMICS, (uint32_t)dst->width * dst->height - 1));
	CONV_WR(c, CSC, D_RELEASE, F(CSC, D_RELEASE, RLS_SLICES, op->release - 1));
	/* Winograd strides and pads are applied by CDMA alone. */
	CONV_WR(
	    c, CSC, D_CONV_STRIDE_EXT,
	    F(CSC, D_CONV_STRIDE_EXT, CONV_X_STRIDE_EXT, direct ? op->conv_stride_x - 1 : 0) |
		F(CSC, D_CONV_STRIDE_EXT, CONV_Y_STRIDE_EXT, direct ? op->conv_stride_y - 1 : 0));
	CONV_WR(c, CSC, D_DILATION_EXT,
		F(CSC, D_DILATION_EXT, X_DILATION_EXT, op->dilation_x - 1) |
		    F(CSC, D_DILATION_EXT, Y_DILATION_EXT, op->dilation_y - 1));
	CONV_WR(c, CSC, D_ZERO_PADDING,
		F(CSC, D_ZERO_PADDING, PAD_LEFT, direct ? op->pad_x_left : 0) |
		    F(CSC, D_ZERO_PADDING, PAD_TOP, direct ? op->pad_y_top : 0));
	CONV_WR(c, CSC, D_ZERO_PADDING_VALUE,
		F(CSC, D_ZERO_PADDING_VALUE, PAD_VALUE, (uint16_t)op->pad_val));
	CONV_WR(c, CSC, D_BANK,
		F(CSC, D_BANK, DATA_BANK, op->data_bank - 1) |
		    F(CSC, D_BANK, WEIGHT_BANK, op->weight_bank - 1));
	CONV_WR(c, CSC, D_PRA_CFG, F(CSC, D_PRA_CFG, PRA_TRUNCATE, op->pra_truncate));
}

static void program_cdma(struct dla_op_ctx *c, const struct nvdla_dla_conv_op_desc *op,
			 const struct nvdla_dla_conv_surface_desc *s)
{
	const struct nvdla_dla_data_cube *src = &s->src_data, *w = &s->weight_data;
	uint32_t atom = c->e->cfg->atom_bytes;
	bool feature = op->data_format == NVDLA_DLA_FORMAT_FEATURE;
	uint64_t input = dla_cube_address(c->task, src);
	uint64_t input_uv = input + (uint64_t)s->offset_u;
	uint64_t weights = dla_cube_address(c->task, w);

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
		F(CDMA, D_DAIN_MAP, LINE_PACKED, src->line_stride == (uint32_t)src->width * atom) |
		    F(CDMA, D_DAIN_MAP, SURF_PACKED,
		      src->surf_stride == (uint32_t)src->width * src->height * atom));
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
		uint64_t wgs = dla_cube_address(c->task, &s->wgs_data);
		uint64_t wmb = dla_cube_address(c->task, &s->wmb_data);

		CONV_WR(c, CDMA, D_WGS_ADDR_HIGH, dla_hi32(wgs));
		CONV_WR(c, CDMA, D_WGS_ADDR_LOW, dla_lo32(wgs));
		CONV_WR(c, CDMA, D_WMB_ADDR_HIGH, dla_hi32(wmb));
		CONV_WR(c, CDMA, D_WMB_ADDR_LOW, dla_lo32(wmb));
		CONV_WR(c, CDMA, D_WMB_BYTES, F(CDMA, D_WMB_BYTES, WMB_BYTES, s->wmb_data.size));
	}
	CONV_WR(c, CDMA, D_MEAN_FORMAT, F(CDMA, D_MEAN_FORMAT, MEAN_FORMAT, op->mean_format));
	if (op->mean_format == NVDLA_DLA_MEAN_ENABLE) {
		CONV_WR(c, CDMA, D_MEAN_GLOBAL_0,
			F(CDMA, D_MEAN_GLOBAL_0, MEAN_RY, (uint16_t)op->mean_ry) |
			    F(CDMA, D_MEAN_GLOBAL_0, MEAN_GU, (uint16_t)op->mean_gu));
		CONV_WR(c, CDMA, D_MEAN_GLOBAL_1,
			F(CDMA, D_MEAN_GLOBAL_1, MEAN_BV, (uint16_t)op->mean_bv) |
			    F(CDMA, D_MEAN_GLOBAL_1, MEAN_AX, (uint16_t)op->mean_ax));
	}
	if (op->in_cvt.enable) {
		CONV_WR(c, CDMA, D_CVT_CFG,
			F(CDMA, D_CVT_CFG, CVT_EN, NVDLA_CDMA_D_CVT_CFG_CVT_EN_ENABLE) |
			    F(CDMA, D_CVT_CFG, CVT_TRUNCATE, op->in_cvt.truncate));
		CONV_WR(c, CDMA, D_CVT_OFFSET,
			F(CDMA, D_CVT_OFFSET, CVT_OFFSET, (uint32_t)op->in_cvt.offset));
		CONV_WR(c, CDMA, D_CVT_SCALE,
			F(CDMA, D_CVT_SCALE, CVT_SCALE, (uint16_t)op->in_cvt.scale));
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
		F(CDMA, D_ZERO_PADDING_VALUE, PAD_VALUE, (uint16_t)op->pad_val));
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
	uint32_t on = NVDLA_FIELD_SET(CACC, D_OP_ENABLE, OP_EN, 1);
	uint32_t status;

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
