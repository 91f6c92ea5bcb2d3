// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Whether a task can run to its end: the scheduler of dla_sched.c played
 * on the dependency graph alone, every step it may take taken as early as
 * it may, every enabled operation completing as soon as the hardware lets
 * it. A task that cannot complete this way (a dependency cycle, an
 * operation waiting for an event only sent after it, a processor queue
 * blocked behind such an operation) would leave operations programmed on
 * the hardware that never run; it is refused before anything is
 * programmed.
 *
 * The hardware rules played: a processor holds two operations (its register
 * groups) and runs them in the order they were programmed; a BDMA
 * operation is programmed only when the other group is free or launched
 * (BDMA queues transfers at programming); an operation and its fused
 * partner (CONV and SDP, SDP and PDP) stream data to each other, so neither
 * completes before both are enabled; a convolution raises its CDMA events
 * once enabled. Taking every step early can only release more events, so
 * when this play stalls, every run of the task stalls.
 */
#include "dla_internal.h"

/* scratch[op]: the step the operation reached, and whether a fused child is enabled. */
#define LAUNCH_STEP_MASK 0x3
#define LAUNCH_QUEUED 0
#define LAUNCH_PROGRAMMED 1
#define LAUNCH_ENABLED 2
#define LAUNCH_DONE 3
#define LAUNCH_HAS_CHILD 0x4
#define LAUNCH_CHILD_ENABLED 0x8

struct launch_proc {
	s16 next;	  /* next operation of the queue, -1 at its end */
	s16 held[2];  /* programmed operations, the older first */
	u8 count;
};

static unsigned int launch_step(const u8 *scratch, int op)
{
	return scratch[op] & LAUNCH_STEP_MASK;
}

static void set_step(u8 *scratch, int op, unsigned int s)
{
	scratch[op] = (u8)((scratch[op] & ~LAUNCH_STEP_MASK) | s);
}

static void launch_raise(struct nvdla_dla_task *t, int op, unsigned int event)
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

static bool may_complete(const struct nvdla_dla_task *t, const u8 *scratch, int op)
{
	s16 parent = t->graph[op].fused_parent.index;

	if (launch_step(scratch, op) != LAUNCH_ENABLED)
		return false;
	if (parent >= 0 && launch_step(scratch, parent) < LAUNCH_ENABLED)
		return false;
	return !(scratch[op] & LAUNCH_HAS_CHILD) || (scratch[op] & LAUNCH_CHILD_ENABLED);
}

int dla_check_launchable(struct nvdla_dla_task *t, u8 *scratch, struct nvdla_dla_error *err)
{
	struct launch_proc proc[NVDLA_DLA_OP_COUNT];
	u32 n = t->num_operations, done = 0, i;
	unsigned int type;
	bool progress = true;

	memset(scratch, 0, n);
	for (i = 0; i < n; i++) {
		s16 parent = t->graph[i].fused_parent.index;

		t->pending[i] = t->graph[i].dependency_count;
		if (parent >= 0)
			scratch[parent] |= LAUNCH_HAS_CHILD;
	}
	for (type = 0; type < NVDLA_DLA_OP_COUNT; type++) {
		proc[type].next = t->op_head[type];
		proc[type].count = 0;
	}

	while (progress && done < n) {
		progress = false;
		for (type = 0; type < NVDLA_DLA_OP_COUNT; type++) {
			struct launch_proc *p = &proc[type];
			unsigned int g;

			/* Complete the older operation when the hardware lets it. */
			if (p->count && may_complete(t, scratch, p->held[0])) {
				int op = p->held[0];

				set_step(scratch, op, LAUNCH_DONE);
				p->held[0] = p->held[1];
				p->count--;
				done++;
				launch_raise(t, op, NVDLA_DLA_EVENT_OP_COMPLETED);
				progress = true;
			}
			/* Program while a group is free. */
			while (p->next >= 0 && p->count < 2 &&
			       (type != NVDLA_DLA_OP_BDMA || !p->count ||
				launch_step(scratch, p->held[0]) >= LAUNCH_ENABLED)) {
				int op = p->next;

				set_step(scratch, op, LAUNCH_PROGRAMMED);
				p->held[p->count++] = (s16)op;
				p->next = t->graph[op].consumers[type].index;
				launch_raise(t, op, NVDLA_DLA_EVENT_OP_PROGRAMMED);
				progress = true;
			}
			/* Enable what no longer waits. */
			for (g = 0; g < p->count; g++) {
				int op = p->held[g];
				s16 parent = t->graph[op].fused_parent.index;

				if (launch_step(scratch, op) != LAUNCH_PROGRAMMED || t->pending[op])
					continue;
				set_step(scratch, op, LAUNCH_ENABLED);
				if (parent >= 0)
					scratch[parent] |= LAUNCH_CHILD_ENABLED;
				launch_raise(t, op, NVDLA_DLA_EVENT_OP_ENABLED);
				if (type == NVDLA_DLA_OP_CONV) {
					launch_raise(t, op, NVDLA_DLA_EVENT_CDMA_WT_DONE);
					launch_raise(t, op, NVDLA_DLA_EVENT_CDMA_DT_DONE);
				}
				progress = true;
			}
		}
	}
	if (done == n)
		return 0;

	for (i = 0; i < n && launch_step(scratch, (int)i) == LAUNCH_DONE; i++)
		;
	if (launch_step(scratch, (int)i) == LAUNCH_QUEUED)
		return dla_fail(err, NVDLA_DLA_E_GRAPH, (int)i, "dependency_count", done, n,
				"the task cannot complete: %s operation %u is never programmed, its queue is blocked by operations waiting for events that never come (a dependency cycle); %u of %u operations could run",
				dla_op_name(t->graph[i].op_type), i, done, n);
	return dla_fail(err, NVDLA_DLA_E_GRAPH, (int)i, "dependency_count", t->pending[i], 0,
			"the task cannot complete: %s operation %u still waits for %u events that are never sent (a dependency cycle); %u of %u operations could run",
			dla_op_name(t->graph[i].op_type), i, t->pending[i], done, n);
}
