// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Rubik: data reshaping in memory (contract for deconvolution, split into
 * planes, merge from planes), in 32-byte atoms.
 */
#include "dla_internal.h"

#define RBK_WR(c, reg, value) dla_wr((c)->e, NVDLA_UNIT_RBK, NVDLA_RBK_##reg, (value))
#define F(reg, field, value) NVDLA_FIELD_SET(RBK, reg, field, (uint32_t)(value))

int dla_rubik_program(struct dla_op_ctx *c, struct nvdla_dla_error *err)
{
	const struct nvdla_dla_rubik_op_desc *op = &c->op->rubik_op;
	const struct nvdla_dla_rubik_surface_desc *s = &c->surf->rubik_surface;
	const struct nvdla_dla_data_cube *src = &s->src_data, *dst = &s->dst_data;
	uint64_t in = dla_cube_address(c->task, src);
	uint64_t out = dla_cube_address(c->task, dst);

	(void)err;
	RBK_WR(c, D_MISC_CFG,
	       F(D_MISC_CFG, RUBIK_MODE, op->mode) | F(D_MISC_CFG, IN_PRECISION, op->precision));
	RBK_WR(c, D_DAIN_RAM_TYPE, F(D_DAIN_RAM_TYPE, DATAIN_RAM_TYPE, dla_ram_type(src->type)));
	RBK_WR(c, D_DATAIN_SIZE_0,
	       F(D_DATAIN_SIZE_0, DATAIN_WIDTH, src->width - 1) |
		   F(D_DATAIN_SIZE_0, DATAIN_HEIGHT, src->height - 1));
	RBK_WR(c, D_DATAIN_SIZE_1, F(D_DATAIN_SIZE_1, DATAIN_CHANNEL, src->channel - 1));
	/* Addresses and strides are byte values whose low five bits the registers drop. */
	RBK_WR(c, D_DAIN_ADDR_LOW, dla_lo32(in));
	RBK_WR(c, D_DAIN_ADDR_HIGH, dla_hi32(in));
	if (op->mode == NVDLA_DLA_RUBIK_MERGE)
		RBK_WR(c, D_DAIN_PLANAR_STRIDE, src->plane_stride);
	else
		RBK_WR(c, D_DAIN_SURF_STRIDE, src->surf_stride);
	RBK_WR(c, D_DAIN_LINE_STRIDE, src->line_stride);

	RBK_WR(c, D_DAOUT_RAM_TYPE, F(D_DAOUT_RAM_TYPE, DATAOUT_RAM_TYPE, dla_ram_type(dst->type)));
	RBK_WR(c, D_DATAOUT_SIZE_1, F(D_DATAOUT_SIZE_1, DATAOUT_CHANNEL, dst->channel - 1));
	RBK_WR(c, D_DAOUT_ADDR_LOW, dla_lo32(out));
	RBK_WR(c, D_DAOUT_ADDR_HIGH, dla_hi32(out));
	RBK_WR(c, D_DAOUT_LINE_STRIDE, dst->line_stride);
	if (op->mode == NVDLA_DLA_RUBIK_SPLIT) {
		RBK_WR(c, D_DAOUT_PLANAR_STRIDE, dst->plane_stride);
		return 0;
	}
	RBK_WR(c, D_DAOUT_SURF_STRIDE, dst->surf_stride);
	if (op->mode == NVDLA_DLA_RUBIK_CONTRACT) {
		uint32_t bpe = dla_bytes_per_element(op->precision);
		/* Between kernel positions: the input surfaces of one output-channel cube. */
		uint64_t kernel_stride =
		    dla_div_up((uint64_t)dst->channel * bpe, 32) * src->surf_stride;

		RBK_WR(c, D_CONTRACT_STRIDE_0, (uint32_t)kernel_stride);
		RBK_WR(c, D_CONTRACT_STRIDE_1, (uint32_t)op->stride_y * dst->line_stride);
		RBK_WR(c, D_DECONV_STRIDE,
		       F(D_DECONV_STRIDE, DECONV_X_STRIDE, op->stride_x - 1) |
			   F(D_DECONV_STRIDE, DECONV_Y_STRIDE, op->stride_y - 1));
	}
	return 0;
}

int dla_rubik_enable(struct dla_op_ctx *c, struct nvdla_dla_error *err)
{
	(void)err;
	RBK_WR(c, D_OP_ENABLE, F(D_OP_ENABLE, OP_EN, 1));
	return 0;
}
