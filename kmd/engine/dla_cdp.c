// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * CDP: local response normalisation across channels, from memory (CDP_RDMA)
 * to memory, through the unit's LUT.
 */
#include "dla_internal.h"

#define CDP_WR(c, unit, reg, value) dla_wr((c)->e, NVDLA_UNIT_##unit, NVDLA_##unit##_##reg, (value))
#define F(unit, reg, field, value) NVDLA_FIELD_SET(unit, reg, field, (u32)(value))

int dla_cdp_program(struct dla_op_ctx *c, struct nvdla_dla_error *err)
{
	const struct nvdla_dla_cdp_op_desc *op = &c->op->cdp_op;
	const struct nvdla_dla_cdp_surface_desc *s = &c->surf->cdp_surface;
	const struct nvdla_dla_data_cube *src = &s->src_data, *dst = &s->dst_data;
	const struct dla_group *other = &c->e->proc[NVDLA_DLA_OP_CDP].groups[!c->group];
	u64 in = dla_cube_address(c->task, src);
	u64 out = dla_cube_address(c->task, dst);

	(void)err;
	CDP_WR(c, CDP_RDMA, D_DATA_CUBE_WIDTH,
	       F(CDP_RDMA, D_DATA_CUBE_WIDTH, WIDTH, src->width - 1));
	CDP_WR(c, CDP_RDMA, D_DATA_CUBE_HEIGHT,
	       F(CDP_RDMA, D_DATA_CUBE_HEIGHT, HEIGHT, src->height - 1));
	CDP_WR(c, CDP_RDMA, D_DATA_CUBE_CHANNEL,
	       F(CDP_RDMA, D_DATA_CUBE_CHANNEL, CHANNEL, src->channel - 1));
	CDP_WR(c, CDP_RDMA, D_SRC_BASE_ADDR_LOW, dla_lo32(in));
	CDP_WR(c, CDP_RDMA, D_SRC_BASE_ADDR_HIGH, dla_hi32(in));
	CDP_WR(c, CDP_RDMA, D_SRC_LINE_STRIDE, src->line_stride);
	CDP_WR(c, CDP_RDMA, D_SRC_SURFACE_STRIDE, src->surf_stride);
	CDP_WR(c, CDP_RDMA, D_SRC_DMA_CFG,
	       F(CDP_RDMA, D_SRC_DMA_CFG, SRC_RAM_TYPE, dla_ram_type(src->type)));
	CDP_WR(c, CDP_RDMA, D_DATA_FORMAT,
	       F(CDP_RDMA, D_DATA_FORMAT, INPUT_DATA, op->in_precision));

	/* The LUT is shared by both groups: write it unless the other group loaded it. */
	if (op->lut_index >= 0 && other->lut != op->lut_index)
		dla_lut_program(c->e, NVDLA_UNIT_CDP, &c->task->luts[op->lut_index],
				op->in_precision);

	CDP_WR(c, CDP, D_DST_BASE_ADDR_LOW, dla_lo32(out));
	CDP_WR(c, CDP, D_DST_BASE_ADDR_HIGH, dla_hi32(out));
	CDP_WR(c, CDP, D_DST_LINE_STRIDE, dst->line_stride);
	CDP_WR(c, CDP, D_DST_SURFACE_STRIDE, dst->surf_stride);
	CDP_WR(c, CDP, D_DST_DMA_CFG, F(CDP, D_DST_DMA_CFG, DST_RAM_TYPE, dla_ram_type(dst->type)));
	CDP_WR(c, CDP, D_DATA_FORMAT, F(CDP, D_DATA_FORMAT, INPUT_DATA_TYPE, op->in_precision));
	/* 3, 5, 7, 9 channels are LEN3..LEN9 = 0..3. */
	CDP_WR(c, CDP, D_LRN_CFG, F(CDP, D_LRN_CFG, NORMALZ_LEN, (op->local_size - 3u) / 2));
	CDP_WR(c, CDP, D_DATIN_OFFSET,
	       F(CDP, D_DATIN_OFFSET, DATIN_OFFSET, (u32)op->in_cvt.offset));
	CDP_WR(c, CDP, D_DATIN_SCALE, F(CDP, D_DATIN_SCALE, DATIN_SCALE, (u16)op->in_cvt.scale));
	CDP_WR(c, CDP, D_DATIN_SHIFTER,
	       F(CDP, D_DATIN_SHIFTER, DATIN_SHIFTER, op->in_cvt.truncate));
	CDP_WR(c, CDP, D_DATOUT_OFFSET, (u32)op->out_cvt.offset);
	CDP_WR(c, CDP, D_DATOUT_SCALE,
	       F(CDP, D_DATOUT_SCALE, DATOUT_SCALE, (u16)op->out_cvt.scale));
	CDP_WR(c, CDP, D_DATOUT_SHIFTER,
	       F(CDP, D_DATOUT_SHIFTER, DATOUT_SHIFTER, op->out_cvt.truncate));
	CDP_WR(c, CDP, D_FUNC_BYPASS,
	       F(CDP, D_FUNC_BYPASS, SQSUM_BYPASS, op->bypass_sqsum) |
		       F(CDP, D_FUNC_BYPASS, MUL_BYPASS, op->bypass_out_mul));
	return 0;
}

int dla_cdp_enable(struct dla_op_ctx *c, struct nvdla_dla_error *err)
{
	(void)err;
	CDP_WR(c, CDP_RDMA, D_OP_ENABLE, F(CDP_RDMA, D_OP_ENABLE, OP_EN, 1));
	CDP_WR(c, CDP, D_OP_ENABLE, F(CDP, D_OP_ENABLE, OP_EN, 1));
	return 0;
}

/* ---- checks (the shared rules are in dla_check.c) ---- */

int dla_cdp_check(struct dla_check *c, const struct nvdla_dla_cdp_op_desc *op,
		  const struct nvdla_dla_cdp_surface_desc *s)
{
	int ret;

	ret = dla_check_precision(c, "CDP", "in_precision", op->in_precision);
	if (!ret && op->out_precision != op->in_precision)
		ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "out_precision", op->out_precision,
			       op->in_precision,
			       "CDP out_precision %u differs from in_precision %u; CDP does not convert",
			       op->out_precision, op->in_precision);
	if (!ret &&
	    (op->lut_index < -1 || (op->lut_index >= 0 && (u32)op->lut_index >= c->task->num_luts)))
		ret = dla_fail(c->err, NVDLA_DLA_E_LUT_INDEX, c->op, "lut_index",
			       (u64)(s64)op->lut_index, c->task->num_luts,
			       "CDP lut_index is %d; the task has %u LUTs", op->lut_index,
			       c->task->num_luts);
	if (!ret && (op->local_size < 3 || op->local_size > 9 || !(op->local_size & 1)))
		ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "local_size", op->local_size, 9,
			       "CDP local_size is %u; it must be 3, 5, 7 or 9", op->local_size);
	if (!ret)
		ret = dla_check_enum(c, "CDP", "bypass_sqsum", op->bypass_sqsum, 1);
	if (!ret)
		ret = dla_check_enum(c, "CDP", "bypass_out_mul", op->bypass_out_mul, 1);
	if (!ret)
		ret = dla_check_range(c, "CDP", "in_cvt.truncate", op->in_cvt.truncate, 0, 31);
	if (!ret)
		ret = dla_check_range(c, "CDP", "out_cvt.truncate", op->out_cvt.truncate, 0, 63);
	if (!ret)
		ret = dla_check_dims(c, "CDP", "src_data", &s->src_data);
	if (!ret)
		ret = dla_same_dims(c, "CDP", "dst_data", &s->dst_data, &s->src_data, "src_data");
	if (!ret)
		ret = dla_check_mem_type(c, "CDP", "src_data", s->src_data.type, false);
	if (!ret)
		ret = dla_check_mem_type(c, "CDP", "dst_data", s->dst_data.type, false);
	if (!ret)
		ret = dla_check_feature(c, "CDP", "src_data", &s->src_data, op->in_precision, 0);
	if (!ret)
		ret = dla_check_feature(c, "CDP", "dst_data", &s->dst_data, op->in_precision, 0);
	return ret;
}
