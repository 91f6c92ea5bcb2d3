// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * PDP: pooling, offline (input from memory through PDP_RDMA, optionally in
 * width splits) or on the fly behind SDP.
 */
#include "dla_internal.h"

#define PDP_WR(c, unit, reg, value) dla_wr((c)->e, NVDLA_UNIT_##unit, NVDLA_##unit##_##reg, (value))
#define F(unit, reg, field, value) NVDLA_FIELD_SET(unit, reg, field, (u32)(value))

/*
 * 1/k for kernel sizes k = 1..8: unsigned 0.16 fixed point (truncated) for
 * the integer pipelines, fp17 (6-bit exponent, bias 31, 10-bit mantissa,
 * truncated) for fp16.
 */
static const u32 recip_int[8] = {
	0x10000, 0x8000, 0x5555, 0x4000, 0x3333, 0x2aaa, 0x2492, 0x2000,
};

static const u32 recip_fp17[8] = {
	0x7c00, 0x7800, 0x7555, 0x7400, 0x7266, 0x7155, 0x7092, 0x7000,
};

static u32 minus_one(u16 v)
{
	return v ? v - 1u : 0;
}

static u32 partial_in(const struct nvdla_dla_pdp_op_desc *op)
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
	static const u32 pad_regs[NVDLA_DLA_PDP_PAD_VALUES] = {
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
	u64 out = dla_cube_address(c->task, dst);
	int i;

	(void)err;
	if (!fly) {
		u64 in = dla_cube_address(c->task, src);

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
		PDP_WR(c, PDP_RDMA, D_POOLING_KERNEL_CFG,
		       F(PDP_RDMA, D_POOLING_KERNEL_CFG, KERNEL_WIDTH, op->pool_width) |
			       F(PDP_RDMA, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_WIDTH,
				 op->stride_x - 1));
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
			 (u32)op->padding_value[i]));
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

/* ---- checks (the shared rules are in dla_check.c) ---- */

/* Whether every pooling window of @count outputs covers at least one of @extent inputs. */
static bool windows_reach(u32 count, u32 stride, u32 pad, u32 kernel, u32 extent)
{
	return pad <= kernel - 1 && (u64)(count - 1) * stride <= (u64)extent - 1 + pad;
}

static int check_pdp_splits(struct dla_check *c, const struct nvdla_dla_pdp_op_desc *op,
			    const struct nvdla_dla_pdp_surface_desc *s)
{
	u32 n = op->split_num;
	u32 in_first = op->partial_in_width_first ? op->partial_in_width_first : 1;
	u32 in_mid = op->partial_in_width_mid ? op->partial_in_width_mid : 1;
	u32 in_last = op->partial_in_width_last ? op->partial_in_width_last : 1;
	u32 out_first = op->partial_width_first ? op->partial_width_first : 1;
	u32 out_mid = op->partial_width_mid ? op->partial_width_mid : 1;
	u32 out_last = op->partial_width_last ? op->partial_width_last : 1;
	s64 overlap = (s64)op->pool_width + 1 - op->stride_x;
	u64 in_end = in_first + (u64)(n - 2) * in_mid + in_last;
	u64 out_end = out_first + (u64)(n - 2) * out_mid + out_last;
	int ret;

	ret = dla_check_range(c, "PDP", "partial_in_width_first", in_first, 1, 1024);
	if (!ret)
		ret = dla_check_range(c, "PDP", "partial_in_width_mid", in_mid, 1, 1024);
	if (!ret)
		ret = dla_check_range(c, "PDP", "partial_in_width_last", in_last, 1, 1024);
	if (!ret)
		ret = dla_check_range(c, "PDP", "partial_width_first", out_first, 1, 1024);
	if (!ret)
		ret = dla_check_range(c, "PDP", "partial_width_mid", out_mid, 1, 1024);
	if (!ret)
		ret = dla_check_range(c, "PDP", "partial_width_last", out_last, 1, 1024);
	if (ret)
		return ret;
	/* Each split after the first also reads the columns it shares with the one before. */
	if (overlap > (s64)in_first || (n > 2 && overlap > (s64)in_mid))
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "partial_in_width_first",
				in_first,
				(u64)overlap,
				"PDP splits of %u and %u columns are narrower than the %lld columns neighbouring splits share",
				in_first, in_mid, (long long)overlap);
	/* With a stride wider than the kernel, each later split skips that many columns. */
	if (overlap < 0 && ((n > 2 && (s64)in_mid + overlap <= 0) || (s64)in_last + overlap <= 0))
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "partial_in_width_mid",
				n > 2 ? in_mid : in_last, (u64)-overlap,
				"PDP splits of %u (middle) and %u (last) columns leave nothing to pool once the %lld columns the stride skips are dropped",
				in_mid, in_last, (long long)-overlap);
	if (in_end != s->src_data.width)
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "partial_in_width_last", in_end,
				s->src_data.width,
				"PDP's %u input splits cover %llu columns, but src_data is %u wide",
				n, (unsigned long long)in_end, s->src_data.width);
	if (out_end != s->dst_data.width)
		return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "partial_width_last", out_end,
				s->dst_data.width,
				"PDP's %u output splits cover %llu columns, but dst_data is %u wide",
				n, (unsigned long long)out_end, s->dst_data.width);
	return 0;
}

int dla_pdp_check(struct dla_check *c, const struct nvdla_dla_pdp_op_desc *op,
		  const struct nvdla_dla_pdp_surface_desc *s)
{
	const struct nvdla_dla_common_op_desc *dep = &c->task->graph[c->op];
	int ret;
	int i;

	ret = dla_check_precision(c, "PDP", "precision", op->precision);
	if (!ret)
		ret = dla_check_enum(c, "PDP", "pool_mode", op->pool_mode, NVDLA_DLA_POOL_MIN);
	if (!ret)
		ret = dla_check_enum(c, "PDP", "pool_width", op->pool_width,
				     NVDLA_DLA_POOL_SIZE_MAX);
	if (!ret)
		ret = dla_check_enum(c, "PDP", "pool_height", op->pool_height,
				     NVDLA_DLA_POOL_SIZE_MAX);
	if (!ret)
		ret = dla_check_range(c, "PDP", "stride_x", op->stride_x, 1, 16);
	if (!ret)
		ret = dla_check_range(c, "PDP", "stride_y", op->stride_y, 1, 16);
	if (!ret)
		ret = dla_check_range(c, "PDP", "pad_left", op->pad_left, 0, 7);
	if (!ret)
		ret = dla_check_range(c, "PDP", "pad_right", op->pad_right, 0, 7);
	if (!ret)
		ret = dla_check_range(c, "PDP", "pad_top", op->pad_top, 0, 7);
	if (!ret)
		ret = dla_check_range(c, "PDP", "pad_bottom", op->pad_bottom, 0, 7);
	if (!ret)
		ret = dla_check_range(c, "PDP", "split_num", op->split_num, 1, 64);
	for (i = 0; !ret && i < NVDLA_DLA_PDP_PAD_VALUES; i++) {
		s32 v = op->padding_value[i];

		if (op->precision == NVDLA_DLA_PRECISION_FP16 && v != 0)
			ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "padding_value",
				       (u64)(s64)v, 0,
				       "PDP padding_value[%d] is %d; the fp16 pipeline pads with 0",
				       i, v);
		else if (v < -(1 << 18) || v >= (1 << 18))
			ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "padding_value",
				       (u64)(s64)v, 1u << 18,
				       "PDP padding_value[%d] is %d, beyond the 19-bit register", i,
				       v);
	}
	if (!ret)
		ret = dla_check_dims(c, "PDP", "src_data", &s->src_data);
	if (!ret)
		ret = dla_check_dims(c, "PDP", "dst_data", &s->dst_data);
	if (!ret && s->src_data.channel != s->dst_data.channel)
		ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "dst_data", s->dst_data.channel,
			       s->src_data.channel,
			       "PDP dst_data has %u channels but src_data %u; pooling keeps them",
			       s->dst_data.channel, s->src_data.channel);
	if (!ret)
		ret = dla_check_mem_type(c, "PDP", "src_data", s->src_data.type, true);
	if (!ret)
		ret = dla_check_mem_type(c, "PDP", "dst_data", s->dst_data.type, false);
	if (ret)
		return ret;

	if (op->split_num == 1) {
		if (!windows_reach(s->dst_data.width, op->stride_x, op->pad_left,
				   op->pool_width + 1u, s->src_data.width))
			return dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "dst_data",
					s->dst_data.width, 0,
					"PDP: %u output columns from %u input columns (kernel %u, stride %u, left padding %u) leave a window without input",
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
				"PDP: %u output lines from %u input lines (kernel %u, stride %u, top padding %u) leave a window without input",
				s->dst_data.height, s->src_data.height, op->pool_height + 1u,
				op->stride_y, op->pad_top);

	ret = dla_check_fused_parent(c, "PDP", "SDP", &s->src_data);
	if (ret)
		return ret;
	if (s->src_data.type == NVDLA_DLA_MEM_HW) {
		const struct nvdla_dla_sdp_surface_desc *ss =
			&c->task->surfaces[dep->fused_parent.index].sdp_surface;
		const struct nvdla_dla_sdp_op_desc *so =
			&c->task->ops[dep->fused_parent.index].sdp_op;

		if (ss->dst_data.type != NVDLA_DLA_MEM_HW)
			return dla_fail(c->err, NVDLA_DLA_E_GRAPH, c->op, "fused_parent",
					(u64)dep->fused_parent.index, 0,
					"PDP's fused parent, SDP operation %d, writes to memory",
					dep->fused_parent.index);
		ret = dla_same_dims(c, "PDP", "src_data", &s->src_data, &ss->src_data,
				    "its SDP's src_data");
		if (!ret && so->dst_precision != op->precision)
			ret = dla_fail(c->err, NVDLA_DLA_E_FIELD, c->op, "precision", op->precision,
				       so->dst_precision,
				       "PDP precision %u differs from its SDP's dst_precision %u",
				       op->precision, so->dst_precision);
		if (ret)
			return ret;
	} else {
		ret = dla_check_feature(c, "PDP", "src_data", &s->src_data, op->precision, 0);
		if (ret)
			return ret;
	}
	return dla_check_feature(c, "PDP", "dst_data", &s->dst_data, op->precision, 0);
}
