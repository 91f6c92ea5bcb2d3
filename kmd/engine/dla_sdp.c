// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * SDP: the single data processor, offline (input from memory through
 * SDP_RDMA) or on the fly behind a convolution, with its three stages X1
 * (bias), X2 (batch normalisation) and Y (element-wise, LUT), writing to
 * memory or into a fused PDP.
 */
#include "dla_internal.h"

#define SDP_WR(c, unit, reg, value) dla_wr((c)->e, NVDLA_UNIT_##unit, NVDLA_##unit##_##reg, (value))
#define F(unit, reg, field, value) NVDLA_FIELD_SET(unit, reg, field, (u32)(value))

/* program_operand() and program_x() rely on these register orders. */
static_assert(NVDLA_SDP_RDMA_D_BS_SURFACE_STRIDE - NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW == 12 &&
	      NVDLA_SDP_RDMA_D_BN_SURFACE_STRIDE - NVDLA_SDP_RDMA_D_BN_BASE_ADDR_LOW == 12 &&
	      NVDLA_SDP_RDMA_D_EW_SURFACE_STRIDE - NVDLA_SDP_RDMA_D_EW_BASE_ADDR_LOW == 12,
	      "operand DMA registers");
static_assert(NVDLA_SDP_D_DP_BS_MUL_SRC_VALUE - NVDLA_SDP_D_DP_BS_CFG == 16 &&
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
static u32 operand_dma_cfg(const struct nvdla_dla_sdp_op *s, const struct nvdla_dla_data_cube *cube)
{
	u32 use = NVDLA_SDP_RDMA_D_BRDMA_CFG_BRDMA_DATA_USE_MUL;

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
static void program_operand(struct dla_op_ctx *c, u32 cfg_reg, u32 base_reg,
			    const struct nvdla_dla_sdp_op *s,
			    const struct nvdla_dla_data_cube *cube)
{
	/* Registers of BS, BN and EW follow CFG in the same order: LOW, HIGH, LINE, SURFACE. */
	dla_wr(c->e, NVDLA_UNIT_SDP_RDMA, cfg_reg, operand_dma_cfg(s, cube));
	if (dla_sdp_stage_dma(s)) {
		u64 address = dla_cube_address(c->task, cube);

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
		u64 address = dla_cube_address(c->task, src);

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
static void program_x(struct dla_op_ctx *c, const struct nvdla_dla_sdp_op *s, u32 cfg_reg)
{
	/* CFG, ALU_CFG, ALU_SRC_VALUE, MUL_CFG, MUL_SRC_VALUE follow each other. */
	u32 src = per_layer(s) ? NVDLA_SDP_D_DP_BS_ALU_CFG_BS_ALU_SRC_REG
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
		       F(SDP, D_DP_BS_ALU_SRC_VALUE, BS_ALU_OPERAND, (u32)s->alu_operand));
		dla_wr(c->e, NVDLA_UNIT_SDP, cfg_reg + 16,
		       F(SDP, D_DP_BS_MUL_SRC_VALUE, BS_MUL_OPERAND, (u32)s->mul_operand));
	}
	/* The MUL truncation applies even when MUL is bypassed. */
	dla_wr(c->e, NVDLA_UNIT_SDP, cfg_reg + 12,
	       F(SDP, D_DP_BS_MUL_CFG, BS_MUL_SRC, src) |
		       F(SDP, D_DP_BS_MUL_CFG, BS_MUL_SHIFT_VALUE, s->truncate));
}

static void program_y(struct dla_op_ctx *c, const struct nvdla_dla_sdp_op *s)
{
	u32 src = per_layer(s) ? NVDLA_SDP_D_DP_EW_ALU_CFG_EW_ALU_SRC_REG
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
			SDP_WR(c, SDP, D_DP_EW_ALU_SRC_VALUE, (u32)s->alu_operand);
		} else {
			SDP_WR(c, SDP, D_DP_EW_ALU_CVT_OFFSET_VALUE, (u32)s->cvt.alu_cvt.offset);
			SDP_WR(c, SDP, D_DP_EW_ALU_CVT_SCALE_VALUE,
			       F(SDP, D_DP_EW_ALU_CVT_SCALE_VALUE, EW_ALU_CVT_SCALE,
				 (u16)s->cvt.alu_cvt.scale));
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
			SDP_WR(c, SDP, D_DP_EW_MUL_SRC_VALUE, (u32)s->mul_operand);
		} else {
			SDP_WR(c, SDP, D_DP_EW_MUL_CVT_OFFSET_VALUE, (u32)s->cvt.mul_cvt.offset);
			SDP_WR(c, SDP, D_DP_EW_MUL_CVT_SCALE_VALUE,
			       F(SDP, D_DP_EW_MUL_CVT_SCALE_VALUE, EW_MUL_CVT_SCALE,
				 (u16)s->cvt.mul_cvt.scale));
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
		u64 address = dla_cube_address(c->task, dst);

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
			 dst->type == NVDLA_DLA_MEM_HW
				 ? NVDLA_SDP_D_FEATURE_MODE_CFG_OUTPUT_DST_PDP
				 : NVDLA_SDP_D_FEATURE_MODE_CFG_OUTPUT_DST_MEM) |
		       F(SDP, D_FEATURE_MODE_CFG, WINOGRAD,
			 op->conv_mode == NVDLA_DLA_CONV_WINOGRAD) |
		       F(SDP, D_FEATURE_MODE_CFG, BATCH_NUMBER, op->batch_num - 1));
	SDP_WR(c, SDP, D_DST_DMA_CFG, F(SDP, D_DST_DMA_CFG, DST_RAM_TYPE, dla_ram_type(dst->type)));
	if (op->batch_num > 1)
		SDP_WR(c, SDP, D_DST_BATCH_STRIDE, op->batch_stride);
	SDP_WR(c, SDP, D_DATA_FORMAT,
	       F(SDP, D_DATA_FORMAT, PROC_PRECISION, proc) |
		       F(SDP, D_DATA_FORMAT, OUT_PRECISION, op->dst_precision));
	SDP_WR(c, SDP, D_CVT_OFFSET, (u32)op->out_cvt.offset);
	SDP_WR(c, SDP, D_CVT_SCALE, F(SDP, D_CVT_SCALE, CVT_SCALE, (u16)op->out_cvt.scale));
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

/* ---- checks (the shared rules are in dla_check.c) ---- */

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
			   const struct nvdla_dla_data_cube *src, bool y, u32 feature,
			   const char *feature_name)
{
	u32 atom = c->cfg->atom_bytes;
	unsigned int proc = dla_sdp_proc_precision(op->src_precision, op->dst_precision);
	u32 group = atom / dla_bytes_per_element(proc);
	u64 groups = dla_div_up(src->channel, group);
	u32 value_bytes;
	char what[16];
	int ret;

	snprintf(what, sizeof(what), "SDP %s", name);
	ret = dla_check_enum(c, what, "enable", stage->enable, 1);
	if (!ret)
		ret = dla_check_enum(c, what, "alu_type", stage->alu_type, NVDLA_DLA_SDP_ALU_EQL);
	if (!ret)
		ret = dla_check_enum(c, what, "type", stage->type, NVDLA_DLA_SDP_OP_BOTH);
	if (!ret)
		ret = dla_check_enum(c, what, "mode", stage->mode, NVDLA_DLA_SDP_PER_POINT);
	if (!ret)
		ret = dla_check_enum(c, what, "act", stage->act, NVDLA_DLA_ACT_PRELU);
	if (!ret && !y && stage->act == NVDLA_DLA_ACT_LUT)
		ret = dla_fail(c->err, NVDLA_DLA_E_ENUM, c->op, "act", stage->act, 0,
			       "%s act is LUT, which only the Y stage has", what);
	if (!ret && y && stage->act == NVDLA_DLA_ACT_RELU)
		ret = dla_fail(c->err, NVDLA_DLA_E_ENUM, c->op, "act", stage->act, 0,
			       "%s act is ReLU, which only the X stages have", what);
	if (!ret)
		ret = dla_check_enum(c, what, "precision", stage->precision,
				     NVDLA_DLA_PRECISION_FP16);
	if (!ret && !y)
		ret = dla_check_range(c, what, "shift_value", stage->shift_value, 0, 63);
	if (!ret && y)
		ret = dla_check_range(c, what, "truncate", stage->truncate, 0, 1023);
	if (!ret && y) {
		ret = dla_check_range(c, what, "cvt.alu_cvt.truncate", stage->cvt.alu_cvt.truncate,
				      0, 63);
		if (!ret)
			ret = dla_check_range(c, what, "cvt.mul_cvt.truncate",
					      stage->cvt.mul_cvt.truncate, 0, 63);
		if (!ret)
			ret = dla_check_enum(c, what, "cvt.alu_cvt.enable",
					     stage->cvt.alu_cvt.enable, 1);
		if (!ret)
			ret = dla_check_enum(c, what, "cvt.mul_cvt.enable",
					     stage->cvt.mul_cvt.enable, 1);
	}
	if (ret || !stage->enable)
		return ret;
	ret = dla_check_feature_bit(c, what, feature, feature_name);
	if (!ret && y && stage->act == NVDLA_DLA_ACT_LUT)
		ret = dla_check_feature_bit(c, what, NVDLA_FEATURE_SDP_LUT, "the SDP LUT");
	if (ret || !dla_sdp_stage_dma(stage))
		return ret;

	/* The operand read from memory: 1 or 2 values of 1 or 2 bytes per element. */
	value_bytes = (stage->precision == NVDLA_DLA_PRECISION_INT8 ? 1 : 2) *
		      (stage->type == NVDLA_DLA_SDP_OP_BOTH ? 2 : 1);
	ret = dla_check_mem_type(c, what, "data", cube->type, false);
	if (ret)
		return ret;
	if (stage->mode == NVDLA_DLA_SDP_PER_KERNEL)
		return dla_check_memory(c, what, "data", cube->type, cube->address,
					dla_cube_offset(cube),
					dla_round_up(groups * group * value_bytes, atom), atom);
	return dla_check_surface(c, what, "data", cube, src->height, groups,
				 (u64)src->width * group * value_bytes, 0, atom);
}

int dla_sdp_check(struct dla_check *c, const struct nvdla_dla_sdp_op_desc *op,
		  const struct nvdla_dla_sdp_surface_desc *s)
{
	const struct nvdla_dla_common_op_desc *dep = &c->task->graph[c->op];
	u32 atom = c->cfg->atom_bytes;
	unsigned int proc;
	u64 padded, extra;
	int ret;

	ret = dla_check_precision(c, "SDP", "src_precision", op->src_precision);
	if (!ret)
		ret = dla_check_precision(c, "SDP", "dst_precision", op->dst_precision);
	if (!ret && !sdp_conversion_ok(op->src_precision, op->dst_precision))
		ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "dst_precision", op->dst_precision,
			       0, "SDP cannot convert src_precision %u to dst_precision %u",
			       op->src_precision, op->dst_precision);
	if (!ret &&
	    (op->lut_index < -1 || (op->lut_index >= 0 && (u32)op->lut_index >= c->task->num_luts)))
		ret = dla_fail(c->err, NVDLA_DLA_E_LUT_INDEX, c->op, "lut_index",
			       (u64)(s64)op->lut_index, c->task->num_luts,
			       "SDP lut_index is %d; the task has %u LUTs", op->lut_index,
			       c->task->num_luts);
	if (!ret && op->lut_index >= 0)
		ret = dla_check_feature_bit(c, "SDP", NVDLA_FEATURE_SDP_LUT, "the SDP LUT");
	if (!ret)
		ret = dla_check_enum(c, "SDP", "conv_mode", op->conv_mode, NVDLA_DLA_CONV_WINOGRAD);
	if (!ret && op->conv_mode == NVDLA_DLA_CONV_WINOGRAD)
		ret = dla_check_feature_bit(c, "SDP Winograd mode", NVDLA_FEATURE_WINOGRAD,
					    "Winograd convolution");
	if (!ret)
		ret = dla_check_range(c, "SDP", "batch_num", op->batch_num, 1,
				      c->cfg->max_batch < 32 ? c->cfg->max_batch : 32);
	if (!ret)
		ret = dla_check_range(c, "SDP", "out_cvt.truncate", op->out_cvt.truncate, 0, 63);
	if (!ret)
		ret = dla_check_dims(c, "SDP", "src_data", &s->src_data);
	if (!ret)
		ret = dla_check_mem_type(c, "SDP", "src_data", s->src_data.type, true);
	if (!ret)
		ret = dla_check_mem_type(c, "SDP", "dst_data", s->dst_data.type, true);
	if (ret)
		return ret;

	/* Fusion: flying input from a convolution, output into a PDP. */
	ret = dla_check_fused_parent(c, "SDP", "convolution", &s->src_data);
	if (ret)
		return ret;
	if (s->src_data.type == NVDLA_DLA_MEM_HW) {
		const struct nvdla_dla_conv_surface_desc *cs =
			&c->task->surfaces[dep->fused_parent.index].conv_surface;

		const struct nvdla_dla_conv_op_desc *co =
			&c->task->ops[dep->fused_parent.index].conv_op;

		ret = dla_same_dims(c, "SDP", "src_data", &s->src_data, &cs->dst_data,
				    "its convolution's dst_data");
		if (!ret && co->out_precision != op->src_precision)
			ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "src_precision",
				       op->src_precision, co->out_precision,
				       "SDP src_precision %u differs from its convolution's out_precision %u",
				       op->src_precision, co->out_precision);
		if (ret)
			return ret;
	}

	ret = check_sdp_stage(c, "x1_op", &op->x1_op, &s->x1_data, op, &s->src_data, false,
			      NVDLA_FEATURE_SDP_BS, "the SDP bias (X1) stage");
	if (!ret)
		ret = check_sdp_stage(c, "x2_op", &op->x2_op, &s->x2_data, op, &s->src_data, false,
				      NVDLA_FEATURE_SDP_BN,
				      "the SDP batch-normalization (X2) stage");
	if (!ret)
		ret = check_sdp_stage(c, "y_op", &op->y_op, &s->y_data, op, &s->src_data, true,
				      NVDLA_FEATURE_SDP_EW, "the SDP element-wise (Y) stage");
	if (ret)
		return ret;

	/* The hardware moves whole groups of the processing precision's channels. */
	proc = dla_sdp_proc_precision(op->src_precision, op->dst_precision);
	padded = dla_round_up(s->src_data.channel, atom / dla_bytes_per_element(proc));
	if (s->src_data.type != NVDLA_DLA_MEM_HW) {
		u32 lanes = atom / dla_bytes_per_element(op->src_precision);

		ret = dla_check_surface(c, "SDP", "src_data", &s->src_data, s->src_data.height,
					dla_div_up(padded, lanes), (u64)s->src_data.width * atom, 0,
					atom);
		if (ret)
			return ret;
	}
	if (s->dst_data.type == NVDLA_DLA_MEM_HW) {
		if (op->batch_num != 1 || op->conv_mode != NVDLA_DLA_CONV_DIRECT ||
		    op->src_precision != op->dst_precision)
			return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "dst_data", 0, 0,
					"SDP output to PDP (dst_data type HW) needs one batch, direct convolution and no precision conversion");
		return 0;
	}
	{
		u32 lanes = atom / dla_bytes_per_element(op->dst_precision);
		u64 surfaces = dla_div_up(padded, lanes);
		u64 one = (surfaces - 1) * s->dst_data.surf_stride +
			  (u64)(s->src_data.height - 1) * s->dst_data.line_stride +
			  (u64)s->src_data.width * atom;

		ret = dla_check_batches(c, "SDP", "batch_stride", op->batch_num, op->batch_stride,
					one, &extra);
		if (!ret)
			ret = dla_check_surface(c, "SDP", "dst_data", &s->dst_data,
						s->src_data.height, surfaces,
						(u64)s->src_data.width * atom, extra, atom);
	}
	return ret;
}
