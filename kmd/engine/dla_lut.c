// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The lookup tables of SDP and CDP: the same fields in both units (the CDP
 * layout below), at different offsets, and CDP's range registers are 38
 * bits (a LOW and a HIGH register) where SDP's are 32.
 */
#include "dla_internal.h"

#define F(reg, field, value) NVDLA_FIELD_SET(CDP, reg, field, (u32)(value))

struct lut_regs {
	u32 access_cfg, access_data, cfg, info;
	u32 le_start, le_end, lo_start, lo_end; /* the LOW register on CDP */
	u32 le_slope_scale, le_slope_shift, lo_slope_scale, lo_slope_shift;
	bool wide; /* a HIGH register follows each range register */
};

static const struct lut_regs sdp_regs = {
	NVDLA_SDP_S_LUT_ACCESS_CFG,
	NVDLA_SDP_S_LUT_ACCESS_DATA,
	NVDLA_SDP_S_LUT_CFG,
	NVDLA_SDP_S_LUT_INFO,
	NVDLA_SDP_S_LUT_LE_START,
	NVDLA_SDP_S_LUT_LE_END,
	NVDLA_SDP_S_LUT_LO_START,
	NVDLA_SDP_S_LUT_LO_END,
	NVDLA_SDP_S_LUT_LE_SLOPE_SCALE,
	NVDLA_SDP_S_LUT_LE_SLOPE_SHIFT,
	NVDLA_SDP_S_LUT_LO_SLOPE_SCALE,
	NVDLA_SDP_S_LUT_LO_SLOPE_SHIFT,
	false,
};

static const struct lut_regs cdp_regs = {
	NVDLA_CDP_S_LUT_ACCESS_CFG,
	NVDLA_CDP_S_LUT_ACCESS_DATA,
	NVDLA_CDP_S_LUT_CFG,
	NVDLA_CDP_S_LUT_INFO,
	NVDLA_CDP_S_LUT_LE_START_LOW,
	NVDLA_CDP_S_LUT_LE_END_LOW,
	NVDLA_CDP_S_LUT_LO_START_LOW,
	NVDLA_CDP_S_LUT_LO_END_LOW,
	NVDLA_CDP_S_LUT_LE_SLOPE_SCALE,
	NVDLA_CDP_S_LUT_LE_SLOPE_SHIFT,
	NVDLA_CDP_S_LUT_LO_SLOPE_SCALE,
	NVDLA_CDP_S_LUT_LO_SLOPE_SHIFT,
	true,
};

static void write_range(struct nvdla_dla_engine *e, enum nvdla_unit unit, const struct lut_regs *r,
			u32 reg, u64 value)
{
	dla_wr(e, unit, reg, dla_lo32(value));
	if (r->wide)
		dla_wr(e, unit, reg + 4,
		       F(S_LUT_LE_START_HIGH, LUT_LE_START_HIGH, dla_hi32(value)));
}

static void write_table(struct nvdla_dla_engine *e, enum nvdla_unit unit, const struct lut_regs *r,
			u32 table, const s16 *entries, unsigned int count)
{
	unsigned int i;

	/* The data register steps through the table from entry 0. */
	dla_wr(e, unit, r->access_cfg,
	       F(S_LUT_ACCESS_CFG, LUT_ADDR, 0) | F(S_LUT_ACCESS_CFG, LUT_TABLE_ID, table) |
		       F(S_LUT_ACCESS_CFG, LUT_ACCESS_TYPE,
			 NVDLA_CDP_S_LUT_ACCESS_CFG_LUT_ACCESS_TYPE_WRITE));
	for (i = 0; i < count; i++)
		dla_wr(e, unit, r->access_data, F(S_LUT_ACCESS_DATA, LUT_DATA, (u16)entries[i]));
}

void dla_lut_program(struct nvdla_dla_engine *e, enum nvdla_unit unit,
		     const struct nvdla_dla_lut_param *lut, unsigned int precision)
{
	const struct lut_regs *r = unit == NVDLA_UNIT_CDP ? &cdp_regs : &sdp_regs;
	const union nvdla_dla_slope *le_u = &lut->linear_exp_underflow_slope;
	const union nvdla_dla_slope *le_o = &lut->linear_exp_overflow_slope;
	const union nvdla_dla_slope *lo_u = &lut->linear_only_underflow_slope;
	const union nvdla_dla_slope *lo_o = &lut->linear_only_overflow_slope;
	u32 info;

	write_table(e, unit, r, NVDLA_CDP_S_LUT_ACCESS_CFG_LUT_TABLE_ID_LE, lut->linear_exp_table,
		    NVDLA_DLA_LUT_LE_ENTRIES);
	write_table(e, unit, r, NVDLA_CDP_S_LUT_ACCESS_CFG_LUT_TABLE_ID_LO, lut->linear_only_table,
		    NVDLA_DLA_LUT_LO_ENTRIES);
	dla_wr(e, unit, r->cfg,
	       F(S_LUT_CFG, LUT_LE_FUNCTION, lut->method) |
		       F(S_LUT_CFG, LUT_HYBRID_PRIORITY, lut->hybrid_priority) |
		       F(S_LUT_CFG, LUT_UFLOW_PRIORITY, lut->underflow_priority) |
		       F(S_LUT_CFG, LUT_OFLOW_PRIORITY, lut->overflow_priority));
	/* Exponent mode offsets the log2 index; linear mode selects index bits. */
	if (lut->method == NVDLA_DLA_LUT_METHOD_EXPONENTIAL)
		info = F(S_LUT_INFO, LUT_LE_INDEX_OFFSET, (u8)lut->linear_exp_offset.exp_offset);
	else
		info = F(S_LUT_INFO, LUT_LE_INDEX_SELECT, (u8)lut->linear_exp_offset.frac_bits);
	info |= F(S_LUT_INFO, LUT_LO_INDEX_SELECT, (u8)lut->linear_only_offset.frac_bits);
	dla_wr(e, unit, r->info, info);
	write_range(e, unit, r, r->le_start, lut->linear_exp_start);
	write_range(e, unit, r, r->le_end, lut->linear_exp_end);
	write_range(e, unit, r, r->lo_start, lut->linear_only_start);
	write_range(e, unit, r, r->lo_end, lut->linear_only_end);
	if (precision == NVDLA_DLA_PRECISION_FP16) {
		/* fp16 slopes: the value itself, no shift. */
		dla_wr(e, unit, r->le_slope_scale,
		       F(S_LUT_LE_SLOPE_SCALE, LUT_LE_SLOPE_UFLOW_SCALE, le_u->data_f) |
			       F(S_LUT_LE_SLOPE_SCALE, LUT_LE_SLOPE_OFLOW_SCALE, le_o->data_f));
		dla_wr(e, unit, r->lo_slope_scale,
		       F(S_LUT_LO_SLOPE_SCALE, LUT_LO_SLOPE_UFLOW_SCALE, lo_u->data_f) |
			       F(S_LUT_LO_SLOPE_SCALE, LUT_LO_SLOPE_OFLOW_SCALE, lo_o->data_f));
		return;
	}
	dla_wr(e, unit, r->le_slope_scale,
	       F(S_LUT_LE_SLOPE_SCALE, LUT_LE_SLOPE_UFLOW_SCALE, (u16)le_u->data_i.scale) |
		       F(S_LUT_LE_SLOPE_SCALE, LUT_LE_SLOPE_OFLOW_SCALE, (u16)le_o->data_i.scale));
	dla_wr(e, unit, r->le_slope_shift,
	       F(S_LUT_LE_SLOPE_SHIFT, LUT_LE_SLOPE_UFLOW_SHIFT, (u8)le_u->data_i.shifter) |
		       F(S_LUT_LE_SLOPE_SHIFT, LUT_LE_SLOPE_OFLOW_SHIFT, (u8)le_o->data_i.shifter));
	dla_wr(e, unit, r->lo_slope_scale,
	       F(S_LUT_LO_SLOPE_SCALE, LUT_LO_SLOPE_UFLOW_SCALE, (u16)lo_u->data_i.scale) |
		       F(S_LUT_LO_SLOPE_SCALE, LUT_LO_SLOPE_OFLOW_SCALE, (u16)lo_o->data_i.scale));
	dla_wr(e, unit, r->lo_slope_shift,
	       F(S_LUT_LO_SLOPE_SHIFT, LUT_LO_SLOPE_UFLOW_SHIFT, (u8)lo_u->data_i.shifter) |
		       F(S_LUT_LO_SLOPE_SHIFT, LUT_LO_SLOPE_OFLOW_SHIFT, (u8)lo_o->data_i.shifter));
}
