// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * BDMA: each transfer's registers are queued into the unit's command slots
 * (CFG_OP), and the launch register of the operation's group starts them
 * all and names the done interrupt.
 */
#include "dla_internal.h"

int dla_bdma_program(struct dla_op_ctx *c, struct nvdla_dla_error *err)
{
	const struct nvdla_dla_bdma_surface_desc *s = &c->surf->bdma_surface;
	const struct nvdla_dla_task *t = c->task;
	struct nvdla_dla_engine *e = c->e;
	u32 free_slots = 0, status, cmd;
	unsigned int k;

	cmd = NVDLA_FIELD_SET(BDMA, CFG_CMD, SRC_RAM_TYPE, dla_ram_type(s->source_type)) |
	      NVDLA_FIELD_SET(BDMA, CFG_CMD, DST_RAM_TYPE, dla_ram_type(s->destination_type));
	for (k = 0; k < s->num_transfers; k++) {
		const struct nvdla_dla_bdma_transfer *x = &s->transfers[k];
		u64 src = t->addresses[x->source_address];
		u64 dst = t->addresses[x->destination_address];

		if (!free_slots) {
			if (dla_poll(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_STATUS,
				     NVDLA_FIELD_MASK(BDMA, STATUS, FREE_SLOT), &status))
				return dla_fail(err, NVDLA_DLA_E_TIMEOUT, c->index, "STATUS",
						status, NVDLA_DLA_POLL_LIMIT,
						"BDMA had no free command slot after %u reads",
						NVDLA_DLA_POLL_LIMIT);
			free_slots = NVDLA_FIELD_GET(BDMA, STATUS, FREE_SLOT, status);
		}
		dla_wr(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_SRC_ADDR_LOW, dla_lo32(src));
		dla_wr(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_SRC_ADDR_HIGH, dla_hi32(src));
		dla_wr(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_DST_ADDR_LOW, dla_lo32(dst));
		dla_wr(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_DST_ADDR_HIGH, dla_hi32(dst));
		dla_wr(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_LINE,
		       NVDLA_FIELD_SET(BDMA, CFG_LINE, SIZE, x->line_size / 32 - 1));
		dla_wr(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_CMD, cmd);
		dla_wr(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_LINE_REPEAT,
		       NVDLA_FIELD_SET(BDMA, CFG_LINE_REPEAT, NUMBER, x->line_repeat - 1));
		dla_wr(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_SRC_LINE, x->source_line);
		dla_wr(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_DST_LINE, x->destination_line);
		dla_wr(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_SURF_REPEAT,
		       NVDLA_FIELD_SET(BDMA, CFG_SURF_REPEAT, NUMBER, x->surface_repeat - 1));
		dla_wr(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_SRC_SURF, x->source_surface);
		dla_wr(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_DST_SURF, x->destination_surface);
		dla_wr(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_OP, NVDLA_FIELD_SET(BDMA, CFG_OP, EN, 1));
		free_slots--;
	}
	return 0;
}

int dla_bdma_enable(struct dla_op_ctx *c, struct nvdla_dla_error *err)
{
	(void)err;
	if (c->surf->bdma_surface.num_transfers == 0)
		return 0;
	if (c->group)
		dla_wr(c->e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_LAUNCH1,
		       NVDLA_FIELD_SET(BDMA, CFG_LAUNCH1, GRP1_LAUNCH, 1));
	else
		dla_wr(c->e, NVDLA_UNIT_BDMA, NVDLA_BDMA_CFG_LAUNCH0,
		       NVDLA_FIELD_SET(BDMA, CFG_LAUNCH0, GRP0_LAUNCH, 1));
	return 0;
}

/* ---- checks (the shared rules are in dla_check.c) ---- */

static int check_bdma_side(struct dla_check *c, const char *what, const char *field,
			   unsigned int type, s16 index, u32 line_size, u32 lines, u32 line,
			   u32 surfaces, u32 surface)
{
	u64 footprint = (u64)(surfaces - 1) * surface + (u64)(lines - 1) * line + line_size;
	int ret;

	ret = dla_check_aligned(c, what, field, line, 32);
	if (!ret)
		ret = dla_check_aligned(c, what, field, surface, 32);
	if (!ret)
		ret = dla_check_memory(c, what, field, type, index, 0, footprint, 32);
	return ret;
}

int dla_bdma_check(struct dla_check *c, const struct nvdla_dla_bdma_surface_desc *s)
{
	char what[32];
	u32 k;
	int ret;

	ret = dla_check_feature_bit(c, "BDMA", NVDLA_FEATURE_BDMA, "the BDMA unit");
	if (!ret)
		ret = dla_check_range(c, "BDMA", "num_transfers", s->num_transfers, 0,
				      NVDLA_DLA_BDMA_MAX_TRANSFERS);
	if (!ret && s->num_transfers)
		ret = dla_check_mem_type(c, "BDMA", "source_type", s->source_type, false);
	if (!ret && s->num_transfers)
		ret = dla_check_mem_type(c, "BDMA", "destination_type", s->destination_type, false);
	for (k = 0; !ret && k < s->num_transfers; k++) {
		const struct nvdla_dla_bdma_transfer *t = &s->transfers[k];

		snprintf(what, sizeof(what), "BDMA transfer %u", k);
		ret = dla_check_range(c, what, "line_size", t->line_size, 32, 8192u * 32);
		if (!ret)
			ret = dla_check_aligned(c, what, "line_size", t->line_size, 32);
		if (!ret)
			ret = dla_check_range(c, what, "line_repeat", t->line_repeat, 1, 8192);
		if (!ret)
			ret = dla_check_range(c, what, "surface_repeat", t->surface_repeat, 1,
					      8192);
		if (!ret)
			ret = dla_check_at_least(c, what, "source_line", t->source_line,
						 t->line_size, "a line needs");
		if (!ret)
			ret = dla_check_at_least(c, what, "destination_line", t->destination_line,
						 t->line_size, "a line needs");
		if (!ret)
			ret = dla_check_at_least(c, what, "source_surface", t->source_surface,
						 (u64)t->source_line * t->line_repeat,
						 "its lines need");
		if (!ret)
			ret = dla_check_at_least(c, what, "destination_surface",
						 t->destination_surface,
						 (u64)t->destination_line * t->line_repeat,
						 "its lines need");
		if (!ret)
			ret = check_bdma_side(c, what, "source_address", s->source_type,
					      t->source_address, t->line_size, t->line_repeat,
					      t->source_line, t->surface_repeat, t->source_surface);
		if (!ret)
			ret = check_bdma_side(c, what, "destination_address", s->destination_type,
					      t->destination_address, t->line_size, t->line_repeat,
					      t->destination_line, t->surface_repeat,
					      t->destination_surface);
	}
	return ret;
}
