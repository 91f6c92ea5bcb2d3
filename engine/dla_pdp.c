// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * PDP: pooling, offline (input from memory through PDP_RDMA, optionally in
 * width splits) or on the fly behind SDP.
 */
#include "dla_internal.h"

#define PDP_WR(c, unit, reg, value) dla_wr((c)->e, NVDLA_UNIT_##unit, NVDLA_##unit##_##reg, (value))
#define F(unit, reg, field, value) NVDLA_FIELD_SET(unit, reg, field, (uint32_t)(value))

/*
 * 1/k for kernel sizes k = 1..8: unsigned 0.16 fixed point (truncated) for
 * the integer pipelines, fp17 (6-bit exponent, bias 31, 10-bit mantissa,
 * truncated) for fp16.
 */
static const uint32_t recip_int[8] = {
    0x10000, 0x8000, 0x5555, 0x4000, 0x3333, 0x2aaa, 0x2492, 0x2000,
};
static const uint32_t recip_fp17[8] = {
    0x7c00, 0x7800, 0x7555, 0x7400, 0x7266, 0x7155, 0x7092, 0x7000,
};

static uint32_t minus_one(uint16_t v)
{
	return v ? v - 1u : 0;
}

static uint32_t partial_in(const struct nvdla_dla_pdp_op_desc *op)
{
	return F(PDP, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_FIRST,
		 minus_one(op->partial_in_width_first)) |
	       F(PDP, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_MID,
		 minus_one(op->partial_in_width_mid)) |
	       F(PDP, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_LAST,
		 minus_one(op->partial_in_width_last));
}

int dla_pdp_program(struct dla_op_ctx *c, struct nvdla_dla_error *err)
{
	static const uint32_t pad_regs[NVDLA_DLA_PDP_PAD_VALUES] = {
	    NVDLA_PDP_D_POOLING_PADDING_VALUE_1_CFG, NVDLA_PDP_D_POOLING_PADDING_VALUE_2_CFG,
	    NVDLA_PDP_D_POOLING_PADDING_VALUE_3_CFG, NVDLA_PDP_D_POOLING_PADDING_VALUE_4_CFG,
	    NVDLA_PDP_D_POOLING_PADDING_VALUE_5_CFG, NVDLA_PDP_D_POOLING_PADDING_VALUE_6_CFG,
	    NVDLA_PDP_D_POOLING_PADDING_VALUE_7_CFG,
	};
	const struct nvdla_dla_pdp_op_desc *op = &c->op->pdp_op;
	const struct nvdla_dla_pdp_surface_desc *s = &c->surf->pdp_surface;
	const struct nvdla_dla_data_cube *src = &s->src_data, *dst = &s->dst_data;
	bool fly = src->type == NVDLA_DLA_MEM_HW;
	bool fp16 = op->precision == NVDLA_DLA_PRECISION_FP16;
	uint64_t out = dla_cube_address(c->task, dst);
	int i;

	(void)err;
	if (!fly) {
		uint64_t in = dla_cube_address(c->task, src);

		PDP_WR(c, PDP_RDMA, D_DATA_CUBE_IN_WIDTH,
		       F(PDP_RDMA, D_DATA_CUBE_IN_WIDTH, CUBE_IN_WIDTH, src->width - 1));
		PDP_WR(c, PDP_RDMA, D_DATA_CUBE_IN_HEIGHT,
		       F(PDP_RDMA, D_DATA_CUBE_IN_HEIGHT, CUBE_IN_HEIGHT, src->height - 1));
		PDP_WR(c, PDP_RDMA, D_DATA_CUBE_IN_CHANNEL,
		       F(PDP_RDMA, D_DATA_CUBE_IN_CHANNEL, CUBE_IN_CHANNEL, src->channel - 1));
		PDP_WR(c, PDP_RDMA, D_SRC_BASE_ADDR_HIGH, dla_hi32(in));
		PDP_WR(c, PDP_RDMA, D_SRC_BASE_ADDR_LOW, dla_lo32(in));
		PDP_WR(c, PDP_RDMA, D_SRC_LINE_STRIDE, src->line_stride);
		PDP_WR(c, PDP_RDMA, D_SRC_SURFACE_STRIDE, src->surf_stride);
		PDP_WR(c, PDP_RDMA, D_DATA_FORMAT,
		       F(PDP_RDMA, D_DATA_FORMAT, INPUT_DATA, op->precision));
		PDP_WR(c, PDP_RDMA, D_SRC_RAM_CFG,
		       F(PDP_RDMA, D_SRC_RAM_CFG, SRC_RAM_TYPE, dla_ram_type(src->type)));
		PDP_WR(c, PDP_RDMA, D_OPERATION_MODE_CFG,
		       F(PDP_RDMA, D_OPERATION_MODE_CFG, SPLIT_NUM, op->split_num - 1));
		PDP_WR(
		    c, PDP_RDMA, D_POOLING_KERNEL_CFG,
		    F(PDP_RDMA, D_POOLING_KERNEL_CFG, KERNEL_WIDTH, op->pool_width) |
			F(PDP_RDMA, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_WIDTH, op->stride_x - 1));
		PDP_WR(c, PDP_RDMA, D_POOLING_PADDING_CFG,
		       F(PDP_RDMA, D_POOLING_PADDING_CFG, PAD_WIDTH, op->pad_left));
		PDP_WR(c, PDP_RDMA, D_PARTIAL_WIDTH_IN, partial_in(op));
	}

	PDP_WR(c, PDP, D_DATA_CUBE_IN_WIDTH,
	       F(PDP, D_DATA_CUBE_IN_WIDTH, CUBE_IN_WIDTH, src->width - 1));
	PDP_WR(c, PDP, D_DATA_CUBE_IN_HEIGHT,
	       F(PDP, D_DATA_CUBE_IN_HEIGHT, CUBE_IN_HEIGHT, src->height - 1));
	PDP_WR(c, PDP, D_DATA_CUBE_IN_CHANNEL,
	       F(PDP, D_DATA_CUBE_IN_CHANNEL, CUBE_IN_CHANNEL, src->channel - 1));
	PDP_WR(c, PDP, D_DATA_CUBE_OUT_WIDTH,
	       F(PDP, D_DATA_CUBE_OUT_WIDTH, CUBE_OUT_WIDTH, dst->width - 1));
	PDP_WR(c, PDP, D_DATA_CUBE_OUT_HEIGHT,
	       F(PDP, D_DATA_CUBE_OUT_HEIGHT, CUBE_OUT_HEIGHT, dst->height - 1));
	PDP_WR(c, PDP, D_DATA_CUBE_OUT_CHANNEL,
	       F(PDP, D_DATA_CUBE_OUT_CHANNEL, CUBE_OUT_CHANNEL, dst->channel - 1));
	PDP_WR(c, PDP, D_OPERATION_MODE_CFG,
	       F(PDP, D_OPERATION_MODE_CFG, POOLING_METHOD, op->pool_mode) |
		   F(PDP, D_OPERATION_MODE_CFG, FLYING_MODE,
		     fly ? NVDLA_PDP_D_OPERATION_MODE_CFG_FLYING_MODE_ON_FLYING
			 : NVDLA_PDP_D_OPERATION_MODE_CFG_FLYING_MODE_OFF_FLYING) |
		   F(PDP, D_OPERATION_MODE_CFG, SPLIT_NUM, op->split_num - 1));
	PDP_WR(c, PDP, D_PARTIAL_WIDTH_IN, partial_in(op));
	PDP_WR(c, PDP, D_PARTIAL_WIDTH_OUT,
	       F(PDP, D_PARTIAL_WIDTH_OUT, PARTIAL_WIDTH_OUT_FIRST,
		 minus_one(op->partial_width_first)) |
		   F(PDP, D_PARTIAL_WIDTH_OUT, PARTIAL_WIDTH_OUT_MID,
		     minus_one(op->partial_width_mid)) |
		   F(PDP, D_PARTIAL_WIDTH_OUT, PARTIAL_WIDTH_OUT_LAST,
		     minus_one(op->partial_width_last)));
	PDP_WR(c, PDP, D_POOLING_KERNEL_CFG,
	       F(PDP, D_POOLING_KERNEL_CFG, KERNEL_WIDTH, op->pool_width) |
		   F(PDP, D_POOLING_KERNEL_CFG, KERNEL_HEIGHT, op->pool_height) |
		   F(PDP, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_WIDTH, op->stride_x - 1) |
		   F(PDP, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_HEIGHT, op->stride_y - 1));
	PDP_WR(c, PDP, D_RECIP_KERNEL_WIDTH,
	       fp16 ? recip_fp17[op->pool_width] : recip_int[op->pool_width]);
	PDP_WR(c, PDP, D_RECIP_KERNEL_HEIGHT,
	       fp16 ? recip_fp17[op->pool_height] : recip_int[op->pool_height]);
	PDP_WR(c, PDP, D_POOLING_PADDING_CFG,
	       F(PDP, D_POOLING_PADDING_CFG, PAD_LEFT, op->pad_left) |
		   F(PDP, D_POOLING_PADDING_CFG, PAD_RIGHT, op->pad_right) |
		   F(PDP, D_POOLING_PADDING_CFG, PAD_TOP, op->pad_top) |
		   F(PDP, D_POOLING_PADDING_CFG, PAD_BOTTOM, op->pad_bottom));
	for (i = 0; i < NVDLA_DLA_PDP_PAD_VALUES; i++)
		dla_wr(c->e, NVDLA_UNIT_PDP, pad_regs[i],
		       F(PDP, D_POOLING_PADDING_VALUE_1_CFG, PAD_VALUE_1X,
			 (uint32_t)op->padding_value[i]));
	if (!fly) {
		PDP_WR(c, PDP, D_SRC_LINE_STRIDE, src->line_stride);
		PDP_WR(c, PDP, D_SRC_SURFACE_STRIDE, src->surf_stride);
	}
	PDP_WR(c, PDP, D_DST_BASE_ADDR_LOW, dla_lo32(out));
	PDP_WR(c, PDP, D_DST_BASE_ADDR_HIGH, dla_hi32(out));
	PDP_WR(c, PDP, D_DST_LINE_STRIDE, dst->line_stride);
	PDP_WR(c, PDP, D_DST_SURFACE_STRIDE, dst->surf_stride);
	PDP_WR(c, PDP, D_DST_RAM_CFG, F(PDP, D_DST_RAM_CFG, DST_RAM_TYPE, dla_ram_type(dst->type)));
	PDP_WR(c, PDP, D_DATA_FORMAT, F(PDP, D_DATA_FORMAT, INPUT_DATA, op->precision));
	return 0;
}

int dla_pdp_enable(struct dla_op_ctx *c, struct nvdla_dla_error *err)
{
	(void)err;
	if (c->uses_rdma)
		PDP_WR(c, PDP_RDMA, D_OP_ENABLE, F(PDP_RDMA, D_OP_ENABLE, OP_EN, 1));
	PDP_WR(c, PDP, D_OP_ENABLE, F(PDP, D_OP_ENABLE, OP_EN, 1));
	return 0;
}
