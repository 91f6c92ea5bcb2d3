// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The scheduler: the contract of the nvdla/sw firmware, on a checked task.
 *
 * Each processor runs its operations in queue order (op_head, then
 * consumers[own type]) in its two register groups. An operation is
 * programmed as soon as a group is free (and, for SDP/CDP, the single LUT
 * and, for BDMA, the shared command queue allow it), raising PROGRAMMED;
 * it is enabled once every dependency has been released, raising ENABLED;
 * its completion interrupt raises COMPLETED (and a convolution's CDMA
 * interrupts raise CDMA_DT_DONE and CDMA_WT_DONE). Each event releases one
 * dependency of every consumer that waits for it. The task is done when
 * every operation has completed.
 *
 * Nothing recurses: events only count dependencies down, and a loop
 * programs and enables what became possible until nothing changes.
 */
#include "dla_internal.h"

#define DLA_ALL_INTERRUPTS 0x003f03ffu
/* S_STATUS and S_POINTER have the same offsets and fields in every unit with groups. */
#define DLA_S_STATUS NVDLA_SDP_S_STATUS
#define DLA_S_POINTER NVDLA_SDP_S_POINTER

/* The unit whose S_POINTER (or STATUS) tells a processor's hardware group. */
static const enum nvdla_unit main_unit[NVDLA_DLA_OP_COUNT] = {
	NVDLA_UNIT_BDMA, NVDLA_UNIT_CACC, NVDLA_UNIT_SDP,
	NVDLA_UNIT_PDP,	 NVDLA_UNIT_CDP,  NVDLA_UNIT_RBK,
};

/* The read DMA unit of a processor, or NVDLA_UNIT_COUNT. */
static const enum nvdla_unit rdma_unit[NVDLA_DLA_OP_COUNT] = {
	NVDLA_UNIT_COUNT,    NVDLA_UNIT_COUNT,	  NVDLA_UNIT_SDP_RDMA,
	NVDLA_UNIT_PDP_RDMA, NVDLA_UNIT_CDP_RDMA, NVDLA_UNIT_COUNT,
};

/*
 * The word of each unit's D_OP_ENABLE, which starts its group registers; 0
 * for a unit without groups (BDMA's groups are its launches).
 */
static const u8 op_enable_word[NVDLA_UNIT_COUNT] = {
	[NVDLA_UNIT_CDMA] = NVDLA_CDMA_D_OP_ENABLE / 4,
	[NVDLA_UNIT_CSC] = NVDLA_CSC_D_OP_ENABLE / 4,
	[NVDLA_UNIT_CMAC_A] = NVDLA_CMAC_A_D_OP_ENABLE / 4,
	[NVDLA_UNIT_CMAC_B] = NVDLA_CMAC_B_D_OP_ENABLE / 4,
	[NVDLA_UNIT_CACC] = NVDLA_CACC_D_OP_ENABLE / 4,
	[NVDLA_UNIT_SDP_RDMA] = NVDLA_SDP_RDMA_D_OP_ENABLE / 4,
	[NVDLA_UNIT_SDP] = NVDLA_SDP_D_OP_ENABLE / 4,
	[NVDLA_UNIT_PDP_RDMA] = NVDLA_PDP_RDMA_D_OP_ENABLE / 4,
	[NVDLA_UNIT_PDP] = NVDLA_PDP_D_OP_ENABLE / 4,
	[NVDLA_UNIT_CDP_RDMA] = NVDLA_CDP_RDMA_D_OP_ENABLE / 4,
	[NVDLA_UNIT_CDP] = NVDLA_CDP_D_OP_ENABLE / 4,
	[NVDLA_UNIT_RBK] = NVDLA_RBK_D_OP_ENABLE / 4,
};

/*
 * D_OP_ENABLE is always written (it starts the group). The register
 * descriptions (hw/spec/manual) make every other writable register read-only
 * for the hardware, so a group register the engine wrote in this task still
 * holds what it wrote.
 */
void dla_wr(struct nvdla_dla_engine *e, enum nvdla_unit unit, u32 reg, u32 value)
{
	u32 word = reg / 4, first = op_enable_word[unit];

	if (first && reg == DLA_S_POINTER) {
		e->producer[unit] = NVDLA_FIELD_GET(SDP, S_POINTER, PRODUCER, value);
	} else if (first && word > first && word < DLA_GROUP_WORDS &&
		   e->producer[unit] != DLA_NO_GROUP) {
		u8 g = e->producer[unit];
		u64 bit = 1ull << word;

		if ((e->known[unit][g] & bit) && e->written[unit][g][word] == value)
			return;
		e->known[unit][g] |= bit;
		e->written[unit][g][word] = value;
	}
	e->ops.reg_write(e->priv, e->base[unit] + reg, value);
}

/* The device's registers are not known any more. */
static void forget_registers(struct nvdla_dla_engine *e)
{
	memset(e->producer, DLA_NO_GROUP, sizeof(e->producer));
	memset(e->known, 0, sizeof(e->known));
}

size_t nvdla_dla_engine_size(void)
{
	return sizeof(struct nvdla_dla_engine);
}

static void clear_processors(struct nvdla_dla_engine *e)
{
	int p, g;

	for (p = 0; p < NVDLA_DLA_OP_COUNT; p++) {
		struct dla_processor *proc = &e->proc[p];

		memset(proc, 0, sizeof(*proc));
		proc->next_op = -1;
		proc->last_done = 1;
		for (g = 0; g < NVDLA_DLA_NUM_GROUPS; g++) {
			proc->groups[g].op = -1;
			proc->groups[g].lut = -1;
		}
	}
}

struct nvdla_dla_engine *nvdla_dla_engine_init(void *storage, size_t bytes,
					       const struct nvdla_hw_config *cfg,
					       const struct nvdla_dla_engine_ops *ops, void *priv,
					       struct nvdla_dla_error *err)
{
	struct nvdla_dla_engine *e = storage;
	int u;

	dla_clear_error(err);
	if (!cfg || !ops || !ops->reg_read || !ops->reg_write) {
		dla_fail(err, NVDLA_DLA_E_ARGUMENT, -1, "ops", 0, 0,
			 "the configuration or a register accessor is missing");
		return NULL;
	}
	if (!storage || ((uintptr_t)storage & 7) || bytes < sizeof(*e)) {
		dla_fail(err, NVDLA_DLA_E_STORAGE, -1, "bytes", bytes, sizeof(*e),
			 "the engine needs %llu bytes of 8-byte aligned storage; %llu were given",
			 (unsigned long long)sizeof(*e), (unsigned long long)bytes);
		return NULL;
	}
	memset(e, 0, sizeof(*e));
	e->cfg = cfg;
	e->ops = *ops;
	e->priv = priv;
	for (u = 0; u < NVDLA_UNIT_COUNT; u++)
		e->base[u] = nvdla_unit_base(cfg->reg_map, (enum nvdla_unit)u);
	e->intr_bits = 0x3u << 0 | 0x3u << 2 | 0x3u << 4 | 0x3u << 16 | 0x3u << 18 | 0x3u << 20;
	if (nvdla_hw_has(cfg, NVDLA_FEATURE_BDMA))
		e->intr_bits |= 0x3u << 6;
	if (nvdla_hw_has(cfg, NVDLA_FEATURE_RUBIK))
		e->intr_bits |= 0x3u << 8;
	clear_processors(e);
	forget_registers(e);
	e->magic = DLA_ENGINE_MAGIC;
	return e;
}

bool nvdla_dla_engine_busy(const struct nvdla_dla_engine *engine)
{
	return engine && engine->magic == DLA_ENGINE_MAGIC && engine->task;
}

int dla_poll(struct nvdla_dla_engine *e, enum nvdla_unit unit, u32 reg, u32 mask, u32 *value)
{
	u32 v = 0;
	int i;

	for (i = 0; i < NVDLA_DLA_POLL_LIMIT; i++) {
		v = dla_rd(e, unit, reg);
		if (v & mask) {
			if (value)
				*value = v;
			return 0;
		}
		if (e->ops.delay_us)
			e->ops.delay_us(e->priv, 1);
	}
	if (value)
		*value = v;
	return -ETIMEDOUT;
}

void dla_set_producer(struct dla_op_ctx *c, unsigned int type)
{
	static const enum nvdla_unit conv_units[] = {
		NVDLA_UNIT_CACC, NVDLA_UNIT_CMAC_A, NVDLA_UNIT_CMAC_B,
		NVDLA_UNIT_CSC,	 NVDLA_UNIT_CDMA,
	};
	unsigned int i;

	switch (type) {
	case NVDLA_DLA_OP_CONV:
		for (i = 0; i < ARRAY_SIZE(conv_units); i++)
			dla_wr(c->e, conv_units[i], NVDLA_CACC_S_POINTER,
			       NVDLA_FIELD_SET(CACC, S_POINTER, PRODUCER, c->group));
		break;
	case NVDLA_DLA_OP_SDP:
	case NVDLA_DLA_OP_PDP:
	case NVDLA_DLA_OP_CDP:
		dla_wr(c->e, main_unit[type], NVDLA_SDP_S_POINTER,
		       NVDLA_FIELD_SET(SDP, S_POINTER, PRODUCER, c->group));
		if (c->uses_rdma)
			dla_wr(c->e, rdma_unit[type], NVDLA_SDP_RDMA_S_POINTER,
			       NVDLA_FIELD_SET(SDP_RDMA, S_POINTER, PRODUCER, c->rdma));
		break;
	case NVDLA_DLA_OP_RUBIK:
		dla_wr(c->e, NVDLA_UNIT_RBK, NVDLA_RBK_S_POINTER,
		       NVDLA_FIELD_SET(RBK, S_POINTER, PRODUCER, c->group));
		break;
	default: /* BDMA has no groups: the launch register names the group */
		break;
	}
}

/* Whether operation @op uses its processor's read DMA unit. */
static bool op_uses_rdma(const struct nvdla_dla_task *t, int op)
{
	const union nvdla_dla_surface_container *s = &t->surfaces[op];

	switch (t->graph[op].op_type) {
	case NVDLA_DLA_OP_SDP:
		return dla_sdp_uses_rdma(&t->ops[op].sdp_op, &s->sdp_surface);
	case NVDLA_DLA_OP_PDP:
		return s->pdp_surface.src_data.type != NVDLA_DLA_MEM_HW;
	case NVDLA_DLA_OP_CDP:
		return true;
	default:
		return false;
	}
}

static s16 op_lut(const struct nvdla_dla_task *t, int op)
{
	switch (t->graph[op].op_type) {
	case NVDLA_DLA_OP_SDP:
		return t->ops[op].sdp_op.lut_index;
	case NVDLA_DLA_OP_CDP:
		return t->ops[op].cdp_op.lut_index;
	default:
		return -1;
	}
}

/*
 * Whether the processor's state lets @op be programmed into group @g now:
 * the single LUT of SDP/CDP can only be rewritten while the other group
 * neither holds another LUT nor runs; BDMA queues commands for its next
 * launch, so a programmed but unlaunched group blocks the other.
 */
static bool can_program(const struct nvdla_dla_engine *e, unsigned int type, int op, int g)
{
	const struct dla_group *other = &e->proc[type].groups[!g];
	s16 lut;

	if (type == NVDLA_DLA_OP_BDMA)
		return other->op < 0 || other->enabled;
	if (type != NVDLA_DLA_OP_SDP && type != NVDLA_DLA_OP_CDP)
		return true;
	lut = op_lut(e->task, op);
	if (lut < 0 || other->lut == lut)
		return true;
	return other->lut < 0 && !other->enabled;
}

/* The hardware's consumer group of a processor's unit (the next to run). */
static u8 hw_consumer(struct nvdla_dla_engine *e, enum nvdla_unit unit)
{
	u32 v = dla_rd(e, unit, DLA_S_POINTER);

	return (u8)NVDLA_FIELD_GET(SDP, S_POINTER, CONSUMER, v);
}

static int program_op(struct nvdla_dla_engine *e, unsigned int type, int op, int g,
		      struct nvdla_dla_error *err)
{
	static int (*const program[NVDLA_DLA_OP_COUNT])(struct dla_op_ctx *,
							struct nvdla_dla_error *) = {
		dla_bdma_program, dla_conv_program, dla_sdp_program,
		dla_pdp_program,  dla_cdp_program,  dla_rubik_program,
	};
	struct dla_processor *proc = &e->proc[type];
	struct dla_group *grp = &proc->groups[g];
	struct nvdla_dla_task *t = e->task;
	struct dla_op_ctx c;
	int ret;

	c.e = e;
	c.task = t;
	c.index = op;
	c.op = &t->ops[op];
	c.surf = &t->surfaces[op];
	c.group = (u8)g;
	c.uses_rdma = op_uses_rdma(t, op);
	c.rdma = 0;
	if (c.uses_rdma) {
		if (proc->rdma_busy == 0)
			c.rdma = hw_consumer(e, rdma_unit[type]);
		else
			c.rdma = (proc->rdma_busy & 1) ? 1 : 0;
		if (proc->rdma_busy & (1u << c.rdma))
			return dla_fail(err, NVDLA_DLA_E_STATE, op, "rdma", c.rdma, 0,
					"%s: both read DMA groups are in use", dla_op_name(type));
	}
	if (type != NVDLA_DLA_OP_BDMA) {
		u32 status = dla_rd(e, main_unit[type], DLA_S_STATUS);
		u32 state = g ? NVDLA_FIELD_GET(SDP, S_STATUS, STATUS_1, status)
			      : NVDLA_FIELD_GET(SDP, S_STATUS, STATUS_0, status);

		if (state != NVDLA_SDP_S_STATUS_STATUS_0_IDLE)
			return dla_fail(err, NVDLA_DLA_E_HARDWARE, op, "S_STATUS", state, 0,
					"%s register group %d is not idle (status %u) although no operation of this task holds it",
					dla_op_name(type), g, state);
	}

	dla_set_producer(&c, type);
	ret = program[type](&c, err);
	if (ret)
		return ret;
	grp->op = (s16)op;
	grp->programmed = true;
	grp->enabled = false;
	grp->events = 0;
	grp->uses_rdma = c.uses_rdma;
	grp->rdma = c.rdma;
	grp->lut = op_lut(t, op);
	if (c.uses_rdma)
		proc->rdma_busy |= (u8)(1u << c.rdma);
	return 0;
}

static int enable_op(struct nvdla_dla_engine *e, unsigned int type, int g,
		     struct nvdla_dla_error *err)
{
	static int (*const enable[NVDLA_DLA_OP_COUNT])(struct dla_op_ctx *,
						       struct nvdla_dla_error *) = {
		dla_bdma_enable, dla_conv_enable, dla_sdp_enable,
		dla_pdp_enable,	 dla_cdp_enable,  dla_rubik_enable,
	};
	struct dla_group *grp = &e->proc[type].groups[g];
	struct nvdla_dla_task *t = e->task;
	struct dla_op_ctx c;
	int ret;

	c.e = e;
	c.task = t;
	c.index = grp->op;
	c.op = &t->ops[grp->op];
	c.surf = &t->surfaces[grp->op];
	c.group = (u8)g;
	c.rdma = grp->rdma;
	c.uses_rdma = grp->uses_rdma;
	dla_set_producer(&c, type);
	ret = enable[type](&c, err);
	if (ret)
		return ret;
	grp->enabled = true;
	/* A BDMA operation without transfers has nothing to launch: it completes here. */
	if (type == NVDLA_DLA_OP_BDMA && c.surf->bdma_surface.num_transfers == 0)
		grp->events |= 1u << NVDLA_DLA_EVENT_OP_COMPLETED;
	return 0;
}

/* Releases one dependency of every consumer of @op waiting for @event. */
static void raise_event(struct nvdla_dla_task *t, int op, unsigned int event)
{
	const struct nvdla_dla_common_op_desc *d = &t->graph[op];
	int slot;

	for (slot = 0; slot <= NVDLA_DLA_OP_COUNT; slot++) {
		const struct nvdla_dla_consumer *cons =
			slot < NVDLA_DLA_OP_COUNT ? &d->consumers[slot] : &d->fused_parent;

		if (cons->index >= 0 && cons->event == event && t->pending[cons->index])
			t->pending[cons->index]--;
	}
}

/* Handles the latched events of one processor, the older group first. */
static bool handle_events(struct nvdla_dla_engine *e, unsigned int type)
{
	struct dla_processor *proc = &e->proc[type];
	struct nvdla_dla_task *t = e->task;
	bool progress = false;
	int i, g = !proc->last_done;

	for (i = 0; i < NVDLA_DLA_NUM_GROUPS; i++, g = !g) {
		struct dla_group *grp = &proc->groups[g];
		u8 events = grp->events;

		grp->events = 0;
		if (!events || grp->op < 0)
			continue;
		progress = true;
		if (events & (1u << NVDLA_DLA_EVENT_CDMA_WT_DONE))
			raise_event(t, grp->op, NVDLA_DLA_EVENT_CDMA_WT_DONE);
		if (events & (1u << NVDLA_DLA_EVENT_CDMA_DT_DONE))
			raise_event(t, grp->op, NVDLA_DLA_EVENT_CDMA_DT_DONE);
		if (events & (1u << NVDLA_DLA_EVENT_OP_COMPLETED)) {
			int op = grp->op;

			if (grp->uses_rdma)
				proc->rdma_busy &= (u8)~(1u << grp->rdma);
			grp->op = -1;
			grp->lut = -1;
			grp->programmed = false;
			grp->enabled = false;
			grp->uses_rdma = false;
			proc->last_done = (u8)g;
			e->completed++;
			raise_event(t, op, NVDLA_DLA_EVENT_OP_COMPLETED);
		}
	}
	return progress;
}

/* Programs the processor's next operations while a group is free and they may be. */
static int fill(struct nvdla_dla_engine *e, unsigned int type, bool *progress,
		struct nvdla_dla_error *err)
{
	struct dla_processor *proc = &e->proc[type];
	struct nvdla_dla_task *t = e->task;

	while (proc->next_op >= 0) {
		int op = proc->next_op, g, ret;
		bool free0 = proc->groups[0].op < 0, free1 = proc->groups[1].op < 0;

		if (!free0 && !free1)
			break;
		if (free0 && free1) {
			if (type == NVDLA_DLA_OP_BDMA)
				g = NVDLA_FIELD_GET(BDMA, STATUS, GRP0_BUSY,
						    dla_rd(e, NVDLA_UNIT_BDMA, NVDLA_BDMA_STATUS))
					    ? 1
					    : 0;
			else
				g = hw_consumer(e, main_unit[type]);
		} else {
			g = free0 ? 0 : 1;
		}
		if (!can_program(e, type, op, g))
			break;
		ret = program_op(e, type, op, g, err);
		if (ret)
			return ret;
		proc->next_op = t->graph[op].consumers[type].index;
		raise_event(t, op, NVDLA_DLA_EVENT_OP_PROGRAMMED);
		*progress = true;
	}
	return 0;
}

/* Enables every programmed operation whose dependencies are all released. */
static int enable_ready(struct nvdla_dla_engine *e, bool *progress, struct nvdla_dla_error *err)
{
	unsigned int type;
	int ret;

	for (type = 0; type < NVDLA_DLA_OP_COUNT; type++) {
		struct dla_processor *proc = &e->proc[type];
		int i;

		/* The group the hardware runs first is enabled first. */
		for (i = 0; i < NVDLA_DLA_NUM_GROUPS; i++) {
			int g = i ? proc->last_done : !proc->last_done;
			struct dla_group *grp = &proc->groups[g];

			if (grp->op < 0 || !grp->programmed || grp->enabled ||
			    e->task->pending[grp->op])
				continue;
			ret = enable_op(e, type, g, err);
			if (ret)
				return ret;
			raise_event(e->task, grp->op, NVDLA_DLA_EVENT_OP_ENABLED);
			*progress = true;
		}
	}
	return 0;
}

/* Runs the scheduler until nothing changes; bounded by the operations' three steps. */
static int schedule(struct nvdla_dla_engine *e, struct nvdla_dla_error *err)
{
	u32 rounds, limit = 3 * e->task->num_operations + 3;
	unsigned int type;
	bool progress;
	int ret;

	for (rounds = 0; rounds < limit; rounds++) {
		progress = false;
		for (type = 0; type < NVDLA_DLA_OP_COUNT; type++)
			progress |= handle_events(e, type);
		if (e->completed == e->task->num_operations)
			return 0;
		for (type = 0; type < NVDLA_DLA_OP_COUNT; type++) {
			ret = fill(e, type, &progress, err);
			if (ret)
				return ret;
		}
		ret = enable_ready(e, &progress, err);
		if (ret)
			return ret;
		if (!progress)
			return 0;
	}
	return dla_fail(err, NVDLA_DLA_E_STATE, -1, "rounds", rounds, limit,
			"the scheduler made no final progress after %u rounds", rounds);
}

int nvdla_dla_engine_start(struct nvdla_dla_engine *e, struct nvdla_dla_task *task,
			   struct nvdla_dla_error *err)
{
	u32 i;
	int p, ret;

	dla_clear_error(err);
	if (!e || e->magic != DLA_ENGINE_MAGIC || !task || task->magic != DLA_TASK_MAGIC)
		return dla_fail(err, NVDLA_DLA_E_ARGUMENT, -1, "task", 0, 0,
				"the engine or the task is not initialised (validate the task first)");
	if (e->task)
		return dla_fail(err, NVDLA_DLA_E_BUSY, -1, "task", 0, 0,
				"the engine is running another task");
	clear_processors(e);
	forget_registers(e);
	for (p = 0; p < NVDLA_DLA_OP_COUNT; p++)
		e->proc[p].next_op = task->op_head[p];
	for (i = 0; i < task->num_operations; i++)
		task->pending[i] = task->graph[i].dependency_count;
	e->task = task;
	e->completed = 0;
	e->status = 0;
	e->failed = false;

	dla_wr(e, NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_STATUS, DLA_ALL_INTERRUPTS);
	dla_wr(e, NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_MASK, DLA_ALL_INTERRUPTS & ~e->intr_bits);
	ret = schedule(e, err);
	if (ret)
		e->failed = true;
	return ret;
}

bool nvdla_dla_engine_isr(struct nvdla_dla_engine *e)
{
	u32 status;

	if (!e || e->magic != DLA_ENGINE_MAGIC)
		return false;
	status = dla_rd(e, NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_STATUS);
	if (!status)
		return false;
	dla_wr(e, NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_STATUS, status);
	e->status |= status;
	return true;
}

/* Turns latched status bits into group events. */
static int latch(struct nvdla_dla_engine *e, u32 status, struct nvdla_dla_error *err)
{
	static const struct {
		u8 bit, type, event;
	} map[] = {
		{0, NVDLA_DLA_OP_SDP, NVDLA_DLA_EVENT_OP_COMPLETED},
		{2, NVDLA_DLA_OP_CDP, NVDLA_DLA_EVENT_OP_COMPLETED},
		{4, NVDLA_DLA_OP_PDP, NVDLA_DLA_EVENT_OP_COMPLETED},
		{6, NVDLA_DLA_OP_BDMA, NVDLA_DLA_EVENT_OP_COMPLETED},
		{8, NVDLA_DLA_OP_RUBIK, NVDLA_DLA_EVENT_OP_COMPLETED},
		{16, NVDLA_DLA_OP_CONV, NVDLA_DLA_EVENT_CDMA_DT_DONE},
		{18, NVDLA_DLA_OP_CONV, NVDLA_DLA_EVENT_CDMA_WT_DONE},
		{20, NVDLA_DLA_OP_CONV, NVDLA_DLA_EVENT_OP_COMPLETED},
	};
	unsigned int i;
	int g;

	status &= e->intr_bits;
	for (i = 0; i < ARRAY_SIZE(map); i++) {
		for (g = 0; g < NVDLA_DLA_NUM_GROUPS; g++) {
			struct dla_group *grp = &e->proc[map[i].type].groups[g];

			if (!(status & (1u << (map[i].bit + g))))
				continue;
			if (grp->op < 0 || !grp->enabled)
				return dla_fail(err, NVDLA_DLA_E_HARDWARE, -1, "S_INTR_STATUS",
						status, 0,
						"interrupt bit %u reports %s group %d, which runs no operation",
						map[i].bit + g, dla_op_name(map[i].type), g);
			grp->events |= (u8)(1u << map[i].event);
		}
	}
	return 0;
}

int nvdla_dla_engine_process(struct nvdla_dla_engine *e, bool *done, struct nvdla_dla_error *err)
{
	u32 status;
	int ret;

	dla_clear_error(err);
	if (!e || e->magic != DLA_ENGINE_MAGIC || !done)
		return dla_fail(err, NVDLA_DLA_E_ARGUMENT, -1, "engine", 0, 0,
				"the engine is not initialised or done is NULL");
	*done = false;
	status = e->status;
	e->status = 0;
	if (!e->task)
		return 0;
	if (e->failed)
		return dla_fail(err, NVDLA_DLA_E_STATE, -1, "task", 0, 0,
				"the task stopped after an error; reset the engine");
	ret = latch(e, status, err);
	if (!ret)
		ret = schedule(e, err);
	if (ret) {
		e->failed = true;
		return ret;
	}
	if (e->completed == e->task->num_operations) {
		*done = true;
		e->task = NULL;
	}
	return 0;
}

void nvdla_dla_engine_reset(struct nvdla_dla_engine *e)
{
	if (!e || e->magic != DLA_ENGINE_MAGIC)
		return;
	dla_wr(e, NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_MASK, DLA_ALL_INTERRUPTS);
	dla_wr(e, NVDLA_UNIT_GLB, NVDLA_GLB_S_INTR_STATUS, DLA_ALL_INTERRUPTS);
	clear_processors(e);
	forget_registers(e);
	e->task = NULL;
	e->completed = 0;
	e->status = 0;
	e->failed = false;
}
