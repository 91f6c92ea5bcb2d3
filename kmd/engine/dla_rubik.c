// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Rubik: data reshaping in memory (contract for deconvolution, split into
 * planes, merge from planes), in 32-byte atoms.
 */
#include "dla_internal.h"

#define RBK_WR(c, reg, value) dla_wr((c)->e, NVDLA_UNIT_RBK, NVDLA_RBK_##reg, (value))
#define F(reg, field, value) NVDLA_FIELD_SET(RBK, reg, field, (u32)(value))

int dla_rubik_program(struct dla_op_ctx *c, struct nvdla_dla_error *err)
{
	const struct nvdla_dla_rubik_op_desc *op = &c->op->rubik_op;
	const struct nvdla_dla_rubik_surface_desc *s = &c->surf->rubik_surface;
	const struct nvdla_dla_data_cube *src = &s->src_data, *dst = &s->dst_data;
	u64 in = dla_cube_address(c->task, src);
	u64 out = dla_cube_address(c->task, dst);

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
		u32 bpe = dla_bytes_per_element(op->precision);
		/* Between kernel positions: the input surfaces of one output-channel cube. */
		u64 kernel_stride = dla_div_up((u64)dst->channel * bpe, 32) * src->surf_stride;

		RBK_WR(c, D_CONTRACT_STRIDE_0, (u32)kernel_stride);
		RBK_WR(c, D_CONTRACT_STRIDE_1, (u32)op->stride_y * dst->line_stride);
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

/* ---- checks (the shared rules are in dla_check.c) ---- */

#define DLA_RUBIK_ATOM 32u

/* One plane per channel: @planes planes of @height lines of @line bytes. */
static int check_planes(struct dla_check *c, const char *field,
			const struct nvdla_dla_data_cube *cube, u32 planes, u32 height, u64 line)
{
	u64 plane = line;
	int ret = 0;

	if (height > 1) {
		ret = dla_check_aligned(c, "RUBIK", "line_stride", cube->line_stride,
					DLA_RUBIK_ATOM);
		if (!ret)
			ret = dla_check_at_least(c, "RUBIK", "line_stride", cube->line_stride, line,
						 "a plane line needs");
		plane += (u64)(height - 1) * cube->line_stride;
	}
	if (!ret && (planes > 1 || cube->plane_stride == 0)) {
		ret = dla_check_aligned(c, "RUBIK", "plane_stride", cube->plane_stride,
					DLA_RUBIK_ATOM);
		if (!ret)
			ret = dla_check_at_least(c, "RUBIK", "plane_stride", cube->plane_stride,
						 plane, "a plane needs");
	}
	if (ret)
		return ret;
	return dla_check_memory(c, "RUBIK", field, cube->type, cube->address, dla_cube_offset(cube),
				(u64)(planes - 1) * cube->plane_stride + plane, DLA_RUBIK_ATOM);
}

int dla_rubik_check(struct dla_check *c, const struct nvdla_dla_rubik_op_desc *op,
		    const struct nvdla_dla_rubik_surface_desc *s)
{
	const struct nvdla_dla_data_cube *src = &s->src_data, *dst = &s->dst_data;
	u32 bpe, lanes;
	int ret;

	ret = dla_check_feature_bit(c, "RUBIK", NVDLA_FEATURE_RUBIK, "the Rubik unit");
	if (!ret)
		ret = dla_check_enum(c, "RUBIK", "mode", op->mode, NVDLA_DLA_RUBIK_MERGE);
	if (!ret)
		ret = dla_check_precision(c, "RUBIK", "precision", op->precision);
	if (!ret)
		ret = dla_check_dims(c, "RUBIK", "src_data", src);
	if (!ret)
		ret = dla_check_dims(c, "RUBIK", "dst_data", dst);
	if (!ret)
		ret = dla_check_mem_type(c, "RUBIK", "src_data", src->type, false);
	if (!ret)
		ret = dla_check_mem_type(c, "RUBIK", "dst_data", dst->type, false);
	if (ret)
		return ret;
	bpe = dla_bytes_per_element(op->precision);
	lanes = DLA_RUBIK_ATOM / bpe;

	if (op->mode == NVDLA_DLA_RUBIK_CONTRACT) {
		u64 surfaces = dla_div_up(dst->channel, lanes);
		u64 kernels, kernel_stride, in_bytes;

		ret = dla_check_range(c, "RUBIK", "stride_x", op->stride_x, 1, 32);
		if (!ret)
			ret = dla_check_range(c, "RUBIK", "stride_y", op->stride_y, 1, 32);
		if (ret)
			return ret;
		kernels = (u64)op->stride_x * op->stride_y;
		if ((u64)dst->width != (u64)src->width * op->stride_x ||
		    (u64)dst->height != (u64)src->height * op->stride_y ||
		    (u64)src->channel != (u64)dst->channel * kernels)
			return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "dst_data", 0, 0,
					"RUBIK contract of %ux%ux%u with strides %ux%u gives %llux%llux%llu, but dst_data is %ux%ux%u",
					src->width, src->height, src->channel, op->stride_x,
					op->stride_y, (unsigned long long)src->width * op->stride_x,
					(unsigned long long)src->height * op->stride_y,
					(unsigned long long)(src->channel / kernels), dst->width,
					dst->height, dst->channel);
		/* The input of each kernel position is a whole output-channel cube away. */
		ret = dla_check_aligned(c, "RUBIK", "src_data.surf_stride", src->surf_stride,
					DLA_RUBIK_ATOM);
		if (ret)
			return ret;
		kernel_stride = surfaces * src->surf_stride;
		if (kernel_stride > 0xffffffffu ||
		    (u64)op->stride_y * dst->line_stride > 0xffffffffu)
			return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "src_data.surf_stride",
					kernel_stride, 0xffffffffu,
					"RUBIK contract strides (%llu between kernel positions, %llu between line groups) exceed the 32-bit registers",
					(unsigned long long)kernel_stride,
					(unsigned long long)op->stride_y * dst->line_stride);
		in_bytes = (u64)src->width * DLA_RUBIK_ATOM;
		if (src->height > 1) {
			ret = dla_check_aligned(c, "RUBIK", "src_data.line_stride",
						src->line_stride, DLA_RUBIK_ATOM);
			if (!ret)
				ret = dla_check_at_least(c, "RUBIK", "src_data.line_stride",
							 src->line_stride, in_bytes,
							 "a line needs");
			in_bytes += (u64)(src->height - 1) * src->line_stride;
		}
		if (!ret)
			ret = dla_check_at_least(c, "RUBIK", "src_data.surf_stride",
						 src->surf_stride, in_bytes, "a surface needs");
		if (!ret)
			ret = dla_check_memory(c, "RUBIK", "src_data", src->type, src->address,
					       dla_cube_offset(src),
					       (kernels - 1) * kernel_stride +
						       (surfaces - 1) * src->surf_stride + in_bytes,
					       DLA_RUBIK_ATOM);
		if (!ret)
			ret = dla_check_surface(c, "RUBIK", "dst_data", dst, dst->height, surfaces,
						(u64)dst->width * DLA_RUBIK_ATOM, 0,
						DLA_RUBIK_ATOM);
		return ret;
	}

	ret = dla_same_dims(c, "RUBIK", "dst_data", dst, src, "src_data");
	if (ret)
		return ret;
	if (op->mode == NVDLA_DLA_RUBIK_SPLIT) {
		ret = dla_check_surface(c, "RUBIK", "src_data", src, src->height,
					dla_div_up(src->channel, lanes),
					(u64)src->width * DLA_RUBIK_ATOM, 0, DLA_RUBIK_ATOM);
		if (!ret)
			ret = check_planes(c, "dst_data", dst, dst->channel, dst->height,
					   dla_round_up((u64)dst->width * bpe, DLA_RUBIK_ATOM));
		return ret;
	}
	ret = check_planes(c, "src_data", src, src->channel, src->height,
			   dla_round_up((u64)src->width * bpe, DLA_RUBIK_ATOM));
	if (!ret)
		ret = dla_check_surface(c, "RUBIK", "dst_data", dst, dst->height,
					dla_div_up(dst->channel, lanes),
					(u64)dst->width * DLA_RUBIK_ATOM, 0, DLA_RUBIK_ATOM);
	return ret;
}
