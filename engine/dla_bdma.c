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
	uint32_t free_slots = 0, status, cmd;
	unsigned int k;

	cmd = NVDLA_FIELD_SET(BDMA, CFG_CMD, SRC_RAM_TYPE, dla_ram_type(s->source_type)) |
	      NVDLA_FIELD_SET(BDMA, CFG_CMD, DST_RAM_TYPE, dla_ram_type(s->destination_type));
	for (k = 0; k < s->num_transfers; k++) {
		const struct nvdla_dla_bdma_transfer *x = &s->transfers[k];
		uint64_t src = t->addresses[x->source_address];
		uint64_t dst = t->addresses[x->destination_address];

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
