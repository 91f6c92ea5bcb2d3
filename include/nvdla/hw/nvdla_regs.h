/* SPDX-License-Identifier: MIT */
/*
 * NVDLA registers of both register maps, from the generated lists nvdla_units.def,
 * nvdla_regs.def and nvdla_fields.def (tools/regmap/generate_regs.py).
 *
 * The two maps (nv_full; the nv_small family) have the same registers at the same offsets
 * within each unit's 4 KiB window; they differ in the units' base addresses, in a few field
 * widths (nv_full keeps addresses and strides 32-byte aligned) and in reset values.
 *
 *   offset of a register = nvdla_unit_base(map, NVDLA_UNIT_SDP) + NVDLA_SDP_D_OP_ENABLE
 *   field of a value     = NVDLA_FIELD_GET(SDP, D_DP_BS_CFG, BS_BYPASS, value)
 */
#ifndef NVDLA_HW_REGS_H
#define NVDLA_HW_REGS_H

#include "nvdla/hw/nvdla_config.h"

#ifdef __cplusplus
extern "C" {
#endif

enum nvdla_unit {
#define NVDLA_UNIT(unit, full_base, small_base) NVDLA_UNIT_##unit,
#include "nvdla/hw/nvdla_units.def"
#undef NVDLA_UNIT
	NVDLA_UNIT_COUNT
};

/* Base of a unit that a map lacks (CFGROM on nv_full). */
#define NVDLA_UNIT_ABSENT 0xffffffffu
/* Every unit's registers live in a window of this many bytes. */
#define NVDLA_UNIT_WINDOW 0x1000u

/* Register offsets within their unit: NVDLA_<unit>_<register>. */
enum nvdla_register_offset {
#define NVDLA_REG(unit, name, offset, frm, fwm, frs, srm, swm, srs) NVDLA_##unit##_##name = (offset),
#include "nvdla/hw/nvdla_regs.def"
#undef NVDLA_REG
};

/* Field positions: NVDLA_<unit>_<register>_<field>_SHIFT and _WIDTH. */
enum nvdla_field_position {
#define NVDLA_FIELD(unit, reg, field, msb, lsb)                                     \
	NVDLA_##unit##_##reg##_##field##_SHIFT = (lsb),                             \
	NVDLA_##unit##_##reg##_##field##_WIDTH = (msb) - (lsb) + 1,
#define NVDLA_ENUM(unit, reg, field, value_name, value)
#include "nvdla/hw/nvdla_fields.def"
#undef NVDLA_ENUM
#undef NVDLA_FIELD
};

/* Named field values: NVDLA_<unit>_<register>_<field>_<value name>. */
enum nvdla_field_value {
#define NVDLA_FIELD(unit, reg, field, msb, lsb)
#define NVDLA_ENUM(unit, reg, field, value_name, value) \
	NVDLA_##unit##_##reg##_##field##_##value_name = (value),
#include "nvdla/hw/nvdla_fields.def"
#undef NVDLA_ENUM
#undef NVDLA_FIELD
};

/* Casts would trip C++'s -Wold-style-cast: the masks are built from unsigned constants. */
#define NVDLA_FIELD_ONES(unit, reg, field) (0xffffffffu >> (32 - NVDLA_##unit##_##reg##_##field##_WIDTH))
#define NVDLA_FIELD_MASK(unit, reg, field)                                                  \
	(NVDLA_FIELD_ONES(unit, reg, field) << NVDLA_##unit##_##reg##_##field##_SHIFT)
#define NVDLA_FIELD_GET(unit, reg, field, value)                                            \
	(((value) >> NVDLA_##unit##_##reg##_##field##_SHIFT) & NVDLA_FIELD_ONES(unit, reg, field))
#define NVDLA_FIELD_SET(unit, reg, field, x)                                                \
	(((x) & NVDLA_FIELD_ONES(unit, reg, field)) << NVDLA_##unit##_##reg##_##field##_SHIFT)

/* Base address of a unit's window in a map, or NVDLA_UNIT_ABSENT. */
static inline uint32_t nvdla_unit_base(enum nvdla_reg_map map, enum nvdla_unit unit)
{
	static const uint32_t bases[2][NVDLA_UNIT_COUNT] = {
		{
#define NVDLA_UNIT(unit, full_base, small_base) (full_base),
#include "nvdla/hw/nvdla_units.def"
#undef NVDLA_UNIT
		},
		{
#define NVDLA_UNIT(unit, full_base, small_base) (small_base),
#include "nvdla/hw/nvdla_units.def"
#undef NVDLA_UNIT
		},
	};
	/* Out-of-range enum values wrap to large indices (no cast: C++'s -Wold-style-cast). */
	const unsigned int unit_index = unit, map_index = map;

	if (unit_index >= NVDLA_UNIT_COUNT || map_index > 1)
		return NVDLA_UNIT_ABSENT;
	return bases[map_index][unit_index];
}

#ifdef __cplusplus
}
#endif

#endif /* NVDLA_HW_REGS_H */
