// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * SDP: the single data processor, offline (input from memory through
 * SDP_RDMA) or on the fly behind a convolution, with its three stages X1
 * (bias), X2 (batch normalisation) and Y (element-wise, LUT), writing to
 * memory or into a fused PDP.
 */
#include "dla_internal.h"

#define SDP_WR(c, unit, reg, value) dla_wr((c)->e, NVDLA_UNIT_##unit, NVDLA_##unit##_##reg, (value))
#define F(unit, reg, field, value) NVDLA_FIELD_SET(unit, reg, field, (uint32_t)(value))

/* program_operand() and program_x() rely on these register orders. */
_Static_assert(NVDLA_SDP_RDMA_D_BS_SURFACE_STRIDE - NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW == 12 &&
		   NVDLA_SDP_RDMA_D_BN_SURFACE_STRIDE - NVDLA_SDP_RDMA_D_BN_BASE_ADDR_LOW == 12 &&
		   NVDLA_SDP_RDMA_D_EW_SURFACE_STRIDE - NVDLA_SDP_RDMA_D_EW_BASE_ADDR_LOW == 12,
	       "operand DMA registers");
_Static_assert(NVDLA_SDP_D_DP_BS_MUL_SRC_VALUE - NVDLA_SDP_D_DP_BS_CFG == 16 &&
		   NVDLA_SDP_D_DP_BN_MUL_SRC_VALUE - NVDLA_SDP_D_DP_BN_CFG == 16 &&
		   NVDLA_SDP_D_DP_BN_ALU_CFG - NVDLA_SDP_D_DP_BN_CFG == 4,
	       "X stage registers");

static bool does_alu(const struct nvdla_dla_sdp_op *s)
{
	return s->type == NVDLA_DLA_SDP_OP_ADD || s->type == NVDLA_DLA_SDP_OP_BOTH;
}

static bool does_mul(const struct nvdla_dla_sdp_op *s)
{
	return s->type == NVDLA_DLA_SDP_OP_MUL || s->type == NVDLA_DLA_SDP_OP_BOTH;
}

static bool per_layer(const struct nvdla_dla_sdp_op *s)
{
	return s->mode == NVDLA_DLA_SDP_PER_LAYER;
}

/* BRDMA/NRDMA/ERDMA_CFG: the three operand DMAs share one field layout. */
static uint32_t operand_dma_cfg(const struct nvdla_dla_sdp_op *s,
				const struct nvdla_dla_data_cube *cube)
{
	uint32_t use = NVDLA_SDP_RDMA_D_BRDMA_CFG_BRDMA_DATA_USE_MUL;

	if (s->type == NVDLA_DLA_SDP_OP_ADD)
		use = NVDLA_SDP_RDMA_D_BRDMA_CFG_BRDMA_DATA_USE_ALU;
	else if (s->type == NVDLA_DLA_SDP_OP_BOTH)
		use = NVDLA_SDP_RDMA_D_BRDMA_CFG_BRDMA_DATA_USE_BOTH;
	return F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DISABLE, !dla_sdp_stage_dma(s)) |
	       F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_USE, use) |
	       F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_SIZE, s->precision != NVDLA_DLA_PRECISION_INT8) |
	       F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_MODE,
		 s->mode == NVDLA_DLA_SDP_PER_KERNEL
		     ? NVDLA_SDP_RDMA_D_BRDMA_CFG_BRDMA_DATA_MODE_PER_KERNEL
		     : NVDLA_SDP_RDMA_D_BRDMA_CFG_BRDMA_DATA_MODE_PER_ELEMENT) |
	       F(SDP_RDMA, D_BRDMA_CFG, BRDMA_RAM_TYPE, dla_ram_type(cube->type));
}

/* One operand DMA: its configuration and, when it reads, its surface. */
static void program_operand(struct dla_op_ctx *c, uint32_t cfg_reg, uint32_t base_reg,
			    const struct nvdla_dla_sdp_op *s,
			    const struct nvdla_dla_data_cube *cube)
{
	/* Registers of BS, BN and EW follow CFG in the same order: LOW, HIGH, LINE, SURFACE. */
	dla_wr(c->e, NVDLA_UNIT_SDP_RDMA, cfg_reg, operand_dma_cfg(s, cube));
	if (dla_sdp_stage_dma(s)) {
		uint64_t address = dla_cube_address(c->task, cube);

		dla_wr(c->e, NVDLA_UNIT_SDP_RDMA, base_reg, dla_lo32(address));
		dla_wr(c->e, NVDLA_UNIT_SDP_RDMA, base_reg + 4, dla_hi32(address));
		dla_wr(c->e, NVDLA_UNIT_SDP_RDMA, base_reg + 8, cube->line_stride);
		dla_wr(c->e, NVDLA_UNIT_SDP_RDMA, base_reg + 12, cube->surf_stride);
	}
}

static void program_rdma(struct dla_op_ctx *c, unsigned int proc)
{
	const struct nvdla_dla_sdp_op_desc *op = &c->op->sdp_op;
	const struct nvdla_dla_sdp_surface_desc *s = &c->surf->sdp_surface;
	const struct nvdla_dla_data_cube *src = &s->src_data;
	bool fly = src->type == NVDLA_DLA_MEM_HW;

	SDP_WR(c, SDP_RDMA, D_FEATURE_MODE_CFG,
	       F(SDP_RDMA, D_FEATURE_MODE_CFG, FLYING_MODE, fly) |
		   F(SDP_RDMA, D_FEATURE_MODE_CFG, WINOGRAD,
		     op->conv_mode == NVDLA_DLA_CONV_WINOGRAD) |
		   F(SDP_RDMA, D_FEATURE_MODE_CFG, IN_PRECISION, op->src_precision) |
		   F(SDP_RDMA, D_FEATURE_MODE_CFG, PROC_PRECISION, proc) |
		   F(SDP_RDMA, D_FEATURE_MODE_CFG, OUT_PRECISION, op->dst_precision) |
		   F(SDP_RDMA, D_FEATURE_MODE_CFG, BATCH_NUMBER, op->batch_num - 1));
	SDP_WR(c, SDP_RDMA, D_DATA_CUBE_WIDTH,
	       F(SDP_RDMA, D_DATA_CUBE_WIDTH, WIDTH, src->width - 1));
	SDP_WR(c, SDP_RDMA, D_DATA_CUBE_HEIGHT,
	       F(SDP_RDMA, D_DATA_CUBE_HEIGHT, HEIGHT, src->height - 1));
	SDP_WR(c, SDP_RDMA, D_DATA_CUBE_CHANNEL,
	       F(SDP_RDMA, D_DATA_CUBE_CHANNEL, CHANNEL, src->channel - 1));
	if (!fly) {
		uint64_t address = dla_cube_address(c->task, src);

		SDP_WR(c, SDP_RDMA, D_SRC_BASE_ADDR_LOW, dla_lo32(address));
		SDP_WR(c, SDP_RDMA, D_SRC_BASE_ADDR_HIGH, dla_hi32(address));
		SDP_WR(c, SDP_RDMA, D_SRC_LINE_STRIDE, src->line_stride);
		SDP_WR(c, SDP_RDMA, D_SRC_SURFACE_STRIDE, src->surf_stride);
		SDP_WR(c, SDP_RDMA, D_SRC_DMA_CFG,
		       F(SDP_RDMA, D_SRC_DMA_CFG, SRC_RAM_TYPE, dla_ram_type(src->type)));
	}
	program_operand(c, NVDLA_SDP_RDMA_D_BRDMA_CFG, NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW,
			&op->x1_op, &s->x1_data);
	program_operand(c, NVDLA_SDP_RDMA_D_NRDMA_CFG, NVDLA_SDP_RDMA_D_BN_BASE_ADDR_LOW,
			&op->x2_op, &s->x2_data);
	program_operand(c, NVDLA_SDP_RDMA_D_ERDMA_CFG, NVDLA_SDP_RDMA_D_EW_BASE_ADDR_LOW, &op->y_op,
			&s->y_data);
}

/* X1 (BS) or X2 (BN): the two stages share one field layout, at different offsets. */
static void program_x(struct dla_op_ctx *c, const struct nvdla_dla_sdp_op *s, uint32_t cfg_reg)
{
	/* CFG, ALU_CFG, ALU_SRC_VALUE, MUL_CFG, MUL_SRC_VALUE follow each other. */
	uint32_t src = per_layer(s) ? NVDLA_SDP_D_DP_BS_ALU_CFG_BS_ALU_SRC_REG
				    : NVDLA_SDP_D_DP_BS_ALU_CFG_BS_ALU_SRC_MEM;

	dla_wr(c->e, NVDLA_UNIT_SDP, cfg_reg,
	       F(SDP, D_DP_BS_CFG, BS_BYPASS, !s->enable) |
		   F(SDP, D_DP_BS_CFG, BS_ALU_BYPASS, !does_alu(s)) |
		   F(SDP, D_DP_BS_CFG, BS_ALU_ALGO, s->alu_type) |
		   F(SDP, D_DP_BS_CFG, BS_MUL_BYPASS, !does_mul(s)) |
		   F(SDP, D_DP_BS_CFG, BS_MUL_PRELU, s->act == NVDLA_DLA_ACT_PRELU) |
		   F(SDP, D_DP_BS_CFG, BS_RELU_BYPASS, s->act != NVDLA_DLA_ACT_RELU));
	if (!s->enable)
		return;
	if (does_alu(s))
		dla_wr(c->e, NVDLA_UNIT_SDP, cfg_reg + 4,
		       F(SDP, D_DP_BS_ALU_CFG, BS_ALU_SRC, src) |
			   F(SDP, D_DP_BS_ALU_CFG, BS_ALU_SHIFT_VALUE, s->shift_value));
	if (per_layer(s)) {
		dla_wr(c->e, NVDLA_UNIT_SDP, cfg_reg + 8,
		       F(SDP, D_DP_BS_ALU_SRC_VALUE, BS_ALU_OPERAND, (uint32_t)s->alu_operand));
		dla_wr(c->e, NVDLA_UNIT_SDP, cfg_reg + 16,
		       F(SDP, D_DP_BS_MUL_SRC_VALUE, BS_MUL_OPERAND, (uint32_t)s->mul_operand));
	}
	/* The MUL truncation applies even when MUL is bypassed. */
	dla_wr(c->e, NVDLA_UNIT_SDP, cfg_reg + 12,
	       F(SDP, D_DP_BS_MUL_CFG, BS_MUL_SRC, src) |
		   F(SDP, D_DP_BS_MUL_CFG, BS_MUL_SHIFT_VALUE, s->truncate));
}

static void program_y(struct dla_op_ctx *c, const struct nvdla_dla_sdp_op *s)
{
	uint32_t src = per_layer(s) ? NVDLA_SDP_D_DP_EW_ALU_CFG_EW_ALU_SRC_REG
				    : NVDLA_SDP_D_DP_EW_ALU_CFG_EW_ALU_SRC_MEM;

	SDP_WR(c, SDP, D_DP_EW_CFG,
	       F(SDP, D_DP_EW_CFG, EW_BYPASS, !s->enable) |
		   F(SDP, D_DP_EW_CFG, EW_ALU_BYPASS, !does_alu(s)) |
		   F(SDP, D_DP_EW_CFG, EW_ALU_ALGO, s->alu_type) |
		   F(SDP, D_DP_EW_CFG, EW_MUL_BYPASS, !does_mul(s)) |
		   F(SDP, D_DP_EW_CFG, EW_MUL_PRELU, s->act == NVDLA_DLA_ACT_PRELU) |
		   F(SDP, D_DP_EW_CFG, EW_LUT_BYPASS, s->act != NVDLA_DLA_ACT_LUT));
	if (!s->enable)
		return;
	if (does_alu(s)) {
		SDP_WR(c, SDP, D_DP_EW_ALU_CFG,
		       F(SDP, D_DP_EW_ALU_CFG, EW_ALU_SRC, src) |
			   F(SDP, D_DP_EW_ALU_CFG, EW_ALU_CVT_BYPASS, !s->cvt.alu_cvt.enable));
		if (per_layer(s)) {
			SDP_WR(c, SDP, D_DP_EW_ALU_SRC_VALUE, (uint32_t)s->alu_operand);
		} else {
			SDP_WR(c, SDP, D_DP_EW_ALU_CVT_OFFSET_VALUE,
			       (uint32_t)s->cvt.alu_cvt.offset);
			SDP_WR(c, SDP, D_DP_EW_ALU_CVT_SCALE_VALUE,
			       F(SDP, D_DP_EW_ALU_CVT_SCALE_VALUE, EW_ALU_CVT_SCALE,
				 (uint16_t)s->cvt.alu_cvt.scale));
			SDP_WR(c, SDP, D_DP_EW_ALU_CVT_TRUNCATE_VALUE,
			       F(SDP, D_DP_EW_ALU_CVT_TRUNCATE_VALUE, EW_ALU_CVT_TRUNCATE,
				 s->cvt.alu_cvt.truncate));
		}
	}
	if (does_mul(s)) {
		SDP_WR(c, SDP, D_DP_EW_MUL_CFG,
		       F(SDP, D_DP_EW_MUL_CFG, EW_MUL_SRC, src) |
			   F(SDP, D_DP_EW_MUL_CFG, EW_MUL_CVT_BYPASS, !s->cvt.mul_cvt.enable));
		if (per_layer(s)) {
			SDP_WR(c, SDP, D_DP_EW_MUL_SRC_VALUE, (uint32_t)s->mul_operand);
		} else {
			SDP_WR(c, SDP, D_DP_EW_MUL_CVT_OFFSET_VALUE,
			       (uint32_t)s->cvt.mul_cvt.offset);
			SDP_WR(c, SDP, D_DP_EW_MUL_CVT_SCALE_VALUE,
			       F(SDP, D_DP_EW_MUL_CVT_SCALE_VALUE, EW_MUL_CVT_SCALE,
				 (uint16_t)s->cvt.mul_cvt.scale));
			SDP_WR(c, SDP, D_DP_EW_MUL_CVT_TRUNCATE_VALUE,
			       F(SDP, D_DP_EW_MUL_CVT_TRUNCATE_VALUE, EW_MUL_CVT_TRUNCATE,
				 s->cvt.mul_cvt.truncate));
		}
	}
	SDP_WR(c, SDP, D_DP_EW_TRUNCATE_VALUE,
	       F(SDP, D_DP_EW_TRUNCATE_VALUE, EW_TRUNCATE, s->truncate));
}

int dla_sdp_program(struct dla_op_ctx *c, struct nvdla_dla_error *err)
{
	const struct nvdla_dla_sdp_op_desc *op = &c->op->sdp_op;
	const struct nvdla_dla_sdp_surface_desc *s = &c->surf->sdp_surface;
	const struct nvdla_dla_data_cube *src = &s->src_data, *dst = &s->dst_data;
	unsigned int proc = dla_sdp_proc_precision(op->src_precision, op->dst_precision);
	const struct dla_group *other = &c->e->proc[NVDLA_DLA_OP_SDP].groups[!c->group];

	(void)err;
	if (c->uses_rdma)
		program_rdma(c, proc);
	/* The LUT is shared by both groups: write it unless the other group loaded it. */
	if (op->lut_index >= 0 && other->lut != op->lut_index)
		dla_lut_program(c->e, NVDLA_UNIT_SDP, &c->task->luts[op->lut_index],
				op->src_precision);

	SDP_WR(c, SDP, D_DATA_CUBE_WIDTH, F(SDP, D_DATA_CUBE_WIDTH, WIDTH, src->width - 1));
	SDP_WR(c, SDP, D_DATA_CUBE_HEIGHT, F(SDP, D_DATA_CUBE_HEIGHT, HEIGHT, src->height - 1));
	SDP_WR(c, SDP, D_DATA_CUBE_CHANNEL, F(SDP, D_DATA_CUBE_CHANNEL, CHANNEL, src->channel - 1));
	if (dst->type != NVDLA_DLA_MEM_HW) {
		uint64_t address = dla_cube_address(c->task, dst);

		SDP_WR(c, SDP, D_DST_BASE_ADDR_HIGH, dla_hi32(address));
		SDP_WR(c, SDP, D_DST_BASE_ADDR_LOW, dla_lo32(address));
		SDP_WR(c, SDP, D_DST_LINE_STRIDE, dst->line_stride);
		SDP_WR(c, SDP, D_DST_SURFACE_STRIDE, dst->surf_stride);
	}
	program_x(c, &op->x1_op, NVDLA_SDP_D_DP_BS_CFG);
	program_x(c, &op->x2_op, NVDLA_SDP_D_DP_BN_CFG);
	program_y(c, &op->y_op);

	SDP_WR(c, SDP, D_FEATURE_MODE_CFG,
	       F(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, src->type == NVDLA_DLA_MEM_HW) |
		   F(SDP, D_FEATURE_MODE_CFG, OUTPUT_DST,
		     dst->type == NVDLA_DLA_MEM_HW ? NVDLA_SDP_D_FEATURE_MODE_CFG_OUTPUT_DST_PDP
						   : NVDLA_SDP_D_FEATURE_MODE_CFG_OUTPUT_DST_MEM) |
		   F(SDP, D_FEATURE_MODE_CFG, WINOGRAD, op->conv_mode == NVDLA_DLA_CONV_WINOGRAD) |
		   F(SDP, D_FEATURE_MODE_CFG, BATCH_NUMBER, op->batch_num - 1));
	SDP_WR(c, SDP, D_DST_DMA_CFG, F(SDP, D_DST_DMA_CFG, DST_RAM_TYPE, dla_ram_type(dst->type)));
	if (op->batch_num > 1)
		SDP_WR(c, SDP, D_DST_BATCH_STRIDE, op->batch_stride);
	SDP_WR(c, SDP, D_DATA_FORMAT,
	       F(SDP, D_DATA_FORMAT, PROC_PRECISION, proc) |
		   F(SDP, D_DATA_FORMAT, OUT_PRECISION, op->dst_precision));
	SDP_WR(c, SDP, D_CVT_OFFSET, (uint32_t)op->out_cvt.offset);
	SDP_WR(c, SDP, D_CVT_SCALE, F(SDP, D_CVT_SCALE, CVT_SCALE, (uint16_t)op->out_cvt.scale));
	SDP_WR(c, SDP, D_CVT_SHIFT, F(SDP, D_CVT_SHIFT, CVT_SHIFT, op->out_cvt.truncate));
	return 0;
}

int dla_sdp_enable(struct dla_op_ctx *c, struct nvdla_dla_error *err)
{
	(void)err;
	if (c->uses_rdma)
		SDP_WR(c, SDP_RDMA, D_OP_ENABLE, F(SDP_RDMA, D_OP_ENABLE, OP_EN, 1));
	SDP_WR(c, SDP, D_OP_ENABLE, F(SDP, D_OP_ENABLE, OP_EN, 1));
	return 0;
}
