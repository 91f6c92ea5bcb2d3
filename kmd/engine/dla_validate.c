// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The task validator: reads the network descriptor and every list it names
 * once, into the embedder's storage, checks the lists and the dependency
 * graph, and has every operation checked (dla_check.c). The engine runs the
 * copy only.
 */
#include "dla_internal.h"

/* Where the arrays of a checked task live in its storage. */
struct dla_layout {
	size_t addresses, secondary, graph, ops, surfaces, luts, pending, scratch, total;
};

static size_t align8(size_t v)
{
	return (v + 7) & ~(size_t)7;
}

static void layout(struct dla_layout *l, u32 ops, u32 luts, u32 addresses)
{
	size_t at = align8(sizeof(struct nvdla_dla_task));

	l->addresses = at;
	at += (size_t)addresses * sizeof(u64);
	l->secondary = at;
	at = align8(at + addresses);
	l->graph = at;
	at += (size_t)ops * sizeof(struct nvdla_dla_common_op_desc);
	l->ops = at;
	at += (size_t)ops * sizeof(union nvdla_dla_operation_container);
	l->surfaces = at;
	at += (size_t)ops * sizeof(union nvdla_dla_surface_container);
	l->luts = at;
	at += (size_t)luts * sizeof(struct nvdla_dla_lut_param);
	l->pending = at;
	at += ops;
	l->scratch = at;
	at = align8(at + ops);
	l->total = at;
}

/* Reads @size bytes at @offset of entry @index, which must hold them. */
static int read_entry(const struct nvdla_dla_task_source *src, u32 index, u64 offset, void *dst,
		      u32 size, const char *what, struct nvdla_dla_error *err)
{
	const struct nvdla_dla_buffer *buf = &src->addresses[index];
	int ret;

	if (offset > buf->size || size > buf->size - offset)
		return dla_fail(err, NVDLA_DLA_E_LIST, -1, what, offset + size, buf->size,
				"the %s needs %llu bytes of address-list entry %u, which has %llu",
				what, (unsigned long long)(offset + size), index,
				(unsigned long long)buf->size);
	ret = src->read(src->priv, index, offset, dst, size);
	if (ret) {
		dla_fail(err, NVDLA_DLA_E_READ, -1, what, (u64)(s64)ret, 0,
			 "reading the %s (%u bytes at offset %llu of entry %u) failed: error %d",
			 what, size, (unsigned long long)offset, index, ret);
		return ret < 0 ? ret : -EPROTO;
	}
	return 0;
}

static int check_source(const struct nvdla_dla_task_source *src, struct nvdla_dla_error *err)
{
	u32 v;

	if (!src || !src->read || !src->addresses)
		return dla_fail(err, NVDLA_DLA_E_ARGUMENT, -1, "source", 0, 0,
				"the task source, its address list or its read callback is missing");
	v = src->version;
	if (v < NVDLA_DLA_VERSION_OLDEST || v > NVDLA_DLA_VERSION_NEWEST)
		return dla_fail(err, NVDLA_DLA_E_VERSION, -1, "version", v,
				NVDLA_DLA_VERSION_NEWEST,
				"interface version %u.%u.%u is not supported (0.10.x to 0.12.x are)",
				NVDLA_DLA_VERSION_MAJOR(v), NVDLA_DLA_VERSION_MINOR(v),
				NVDLA_DLA_VERSION_SUB(v));
	if (src->num_addresses < 1 || src->num_addresses > NVDLA_DLA_MAX_ADDRESSES)
		return dla_fail(err, NVDLA_DLA_E_COUNT, -1, "num_addresses", src->num_addresses,
				NVDLA_DLA_MAX_ADDRESSES,
				"the address list has %u entries; 1 to %u are allowed",
				src->num_addresses, NVDLA_DLA_MAX_ADDRESSES);
	return 0;
}

static int read_network(const struct nvdla_dla_task_source *src, struct nvdla_dla_network_desc *net,
			struct nvdla_dla_error *err)
{
	int ret = read_entry(src, 0, 0, net, sizeof(*net), "network descriptor", err);

	if (ret)
		return ret;
	if (net->num_operations == 0)
		return dla_fail(err, NVDLA_DLA_E_COUNT, -1, "num_operations", 0, 1,
				"the network has no operations");
	if (net->num_operations > NVDLA_DLA_MAX_OPERATIONS)
		return dla_fail(err, NVDLA_DLA_E_COUNT, -1, "num_operations", net->num_operations,
				NVDLA_DLA_MAX_OPERATIONS,
				"the network has %u operations; at most %u are allowed",
				net->num_operations, NVDLA_DLA_MAX_OPERATIONS);
	if (net->num_luts > NVDLA_DLA_MAX_LUTS)
		return dla_fail(err, NVDLA_DLA_E_COUNT, -1, "num_luts", net->num_luts,
				NVDLA_DLA_MAX_LUTS,
				"the network has %u LUTs; at most %u are allowed", net->num_luts,
				NVDLA_DLA_MAX_LUTS);
	return 0;
}

int nvdla_dla_task_measure(const struct nvdla_dla_task_source *src, size_t *bytes,
			   struct nvdla_dla_error *err)
{
	struct nvdla_dla_network_desc net;
	struct dla_layout l;
	int ret;

	dla_clear_error(err);
	if (!bytes)
		return dla_fail(err, NVDLA_DLA_E_ARGUMENT, -1, "bytes", 0, 0, "bytes is NULL");
	*bytes = 0;
	ret = check_source(src, err);
	if (!ret)
		ret = read_network(src, &net, err);
	if (ret)
		return ret;
	layout(&l, net.num_operations, net.num_luts, src->num_addresses);
	*bytes = l.total;
	return 0;
}

/* An address-list index of the network descriptor, for a list of @bytes bytes. */
static int check_list(const struct nvdla_dla_task_source *src, s16 index, u64 bytes,
		      const char *field, struct nvdla_dla_error *err)
{
	if (index < 0 || (u32)index >= src->num_addresses)
		return dla_fail(err, NVDLA_DLA_E_ADDRESS, -1, field, (u64)(s64)index,
				src->num_addresses,
				"network %s is %d; the task has %u address-list entries", field,
				index, src->num_addresses);
	if (bytes > src->addresses[index].size)
		return dla_fail(err, NVDLA_DLA_E_LIST, -1, field, bytes, src->addresses[index].size,
				"network %s names entry %d of %llu bytes; the list needs %llu",
				field, index, (unsigned long long)src->addresses[index].size,
				(unsigned long long)bytes);
	return 0;
}

static int check_network(const struct nvdla_dla_task_source *src,
			 const struct nvdla_dla_network_desc *net, struct nvdla_dla_error *err)
{
	u32 n = net->num_operations;
	int ret;

	if (net->num_rois == 0)
		return dla_fail(err, NVDLA_DLA_E_FIELD, -1, "num_rois", 0, 1,
				"the network has num_rois 0; it must be 1");
	if (net->num_rois != 1)
		return dla_fail(err, NVDLA_DLA_E_UNSUPPORTED, -1, "num_rois", net->num_rois, 1,
				"the network has %u ROIs; this engine runs one", net->num_rois);
	if (net->dynamic_roi)
		return dla_fail(err, NVDLA_DLA_E_UNSUPPORTED, -1, "dynamic_roi", net->dynamic_roi,
				0,
				"the network asks for dynamic ROIs, which this engine does not run");
	ret = check_list(src, net->operation_desc_index, (u64)n * NVDLA_DLA_OP_SLOT_SIZE,
			 "operation_desc_index", err);
	if (!ret)
		ret = check_list(src, net->surface_desc_index, (u64)n * NVDLA_DLA_SURFACE_SLOT_SIZE,
				 "surface_desc_index", err);
	if (!ret)
		ret = check_list(src, net->dependency_graph_index,
				 (u64)n * NVDLA_DLA_COMMON_OP_DESC_SIZE, "dependency_graph_index",
				 err);
	if (!ret && net->num_luts)
		ret = check_list(src, net->lut_data_index, (u64)net->num_luts * NVDLA_DLA_LUT_SIZE,
				 "lut_data_index", err);
	return ret;
}

/* Widens the 28-byte cubes of a 0.10/0.11 surface descriptor to the 0.12 layout in place. */
static void widen_cubes(u8 *p, unsigned int cubes, unsigned int old_size)
{
	const unsigned int narrow = NVDLA_DLA_DATA_CUBE_V10_SIZE;
	const unsigned int wide = NVDLA_DLA_DATA_CUBE_SIZE;
	unsigned int k;

	/* The fields after the cubes, then each cube from the last: their sources lie below. */
	memmove(p + cubes * wide, p + cubes * narrow, old_size - cubes * narrow);
	for (k = cubes; k-- > 0;) {
		memmove(p + k * wide + 8, p + k * narrow + 4, narrow - 4);
		memmove(p + k * wide, p + k * narrow, 4);
		memset(p + k * wide + 4, 0, 4);
	}
}

static int read_lists(const struct nvdla_dla_task_source *src,
		      const struct nvdla_dla_network_desc *net, struct nvdla_dla_task *t,
		      struct nvdla_dla_error *err)
{
	u32 n = t->num_operations, i;
	int ret;

	ret = read_entry(src, (u32)net->dependency_graph_index, 0, t->graph,
			 n * NVDLA_DLA_COMMON_OP_DESC_SIZE, "dependency graph", err);
	if (!ret)
		ret = read_entry(src, (u32)net->operation_desc_index, 0, t->ops,
				 n * NVDLA_DLA_OP_SLOT_SIZE, "operation list", err);
	if (!ret && t->num_luts)
		ret = read_entry(src, (u32)net->lut_data_index, 0, t->luts,
				 t->num_luts * NVDLA_DLA_LUT_SIZE, "LUT list", err);
	for (i = 0; !ret && i < n; i++) {
		unsigned int type = t->graph[i].op_type;
		unsigned int size = nvdla_dla_surface_size(type, t->version);
		u8 *slot = (u8 *)&t->surfaces[i];

		if (type >= NVDLA_DLA_OP_COUNT)
			return dla_fail(err, NVDLA_DLA_E_ENUM, (int)i, "op_type", type,
					NVDLA_DLA_OP_COUNT - 1,
					"op_type %u is not a processor (0..5)", type);
		memset(slot, 0, NVDLA_DLA_SURFACE_SLOT_SIZE);
		ret = read_entry(src, (u32)net->surface_desc_index,
				 (u64)i * NVDLA_DLA_SURFACE_SLOT_SIZE, slot, size, "surface list",
				 err);
		if (!ret && !nvdla_dla_version_has_cube_offset(t->version))
			widen_cubes(slot, nvdla_dla_surface_cubes(type), size);
	}
	return ret;
}

static int check_consumer(const struct nvdla_dla_task *t, u32 owner, int slot,
			  const struct nvdla_dla_consumer *cons, struct nvdla_dla_error *err)
{
	const struct nvdla_dla_common_op_desc *op = &t->graph[owner];
	const char *field = slot < 0 ? "fused_parent" : "consumers";
	unsigned int want = slot < 0 ? op->op_type - 1u : (unsigned int)slot;

	if (cons->index == -1)
		return 0;
	if (cons->index < 0 || (u32)cons->index >= t->num_operations)
		return dla_fail(err, NVDLA_DLA_E_OP_INDEX, (int)owner, field, (u64)(s64)cons->index,
				t->num_operations,
				"%s %s[%s] names operation %d; the network has %u",
				dla_op_name(op->op_type), field,
				slot < 0 ? "-" : dla_op_name((unsigned int)slot), cons->index,
				t->num_operations);
	if (slot < 0 && op->op_type != NVDLA_DLA_OP_SDP && op->op_type != NVDLA_DLA_OP_PDP)
		return dla_fail(err, NVDLA_DLA_E_OP_TYPE, (int)owner, field, op->op_type, 0,
				"%s has a fused parent; only SDP (after CONV) and PDP (after SDP) are fused",
				dla_op_name(op->op_type));
	if (t->graph[cons->index].op_type != want)
		return dla_fail(err, NVDLA_DLA_E_OP_TYPE, (int)owner, field,
				t->graph[cons->index].op_type, want,
				"%s %s names operation %d of type %s where a %s is expected",
				dla_op_name(op->op_type), field, cons->index,
				dla_op_name(t->graph[cons->index].op_type), dla_op_name(want));
	if (cons->event < NVDLA_DLA_EVENT_OP_COMPLETED ||
	    cons->event > NVDLA_DLA_EVENT_CDMA_DT_DONE)
		return dla_fail(err, NVDLA_DLA_E_ENUM, (int)owner, "event", cons->event,
				NVDLA_DLA_EVENT_CDMA_DT_DONE,
				"%s %s entry for operation %d has event %u, not an event (1..5)",
				dla_op_name(op->op_type), field, cons->index, cons->event);
	if (cons->event >= NVDLA_DLA_EVENT_CDMA_WT_DONE && op->op_type != NVDLA_DLA_OP_CONV)
		return dla_fail(err, NVDLA_DLA_E_EVENT, (int)owner, "event", cons->event, 0,
				"%s %s entry for operation %d waits for a CDMA event, which only a convolution raises",
				dla_op_name(op->op_type), field, cons->index);
	return 0;
}

static void count_incoming(struct nvdla_dla_task *t, const struct nvdla_dla_consumer *cons)
{
	if (cons->index >= 0 && t->pending[cons->index] < 0xff)
		t->pending[cons->index]++;
}

/*
 * The graph: heads, consumers and fused parents point at operations of the
 * right type; every operation is in exactly one processor queue (the chain
 * of consumers[own type] from op_head); no operation waits for more events
 * than are sent to it; every convolution feeds exactly one SDP and every
 * fused SDP output feeds a PDP.
 */
static int check_graph(struct nvdla_dla_task *t, u8 *scratch, struct nvdla_dla_error *err)
{
	u32 n = t->num_operations, i, queued = 0;
	int type, slot, ret;

	for (type = 0; type < NVDLA_DLA_OP_COUNT; type++) {
		s16 head = t->op_head[type];

		if (head == -1)
			continue;
		if (head < 0 || (u32)head >= n)
			return dla_fail(err, NVDLA_DLA_E_OP_INDEX, -1, "op_head", (u64)(s64)head, n,
					"network op_head[%s] is %d; the network has %u operations",
					dla_op_name((unsigned int)type), head, n);
		if (t->graph[head].op_type != (unsigned int)type)
			return dla_fail(err, NVDLA_DLA_E_OP_TYPE, head, "op_head",
					t->graph[head].op_type, (u64)type,
					"network op_head[%s] names a %s operation",
					dla_op_name((unsigned int)type),
					dla_op_name(t->graph[head].op_type));
	}
	for (i = 0; i < n; i++) {
		for (slot = 0; slot < NVDLA_DLA_OP_COUNT; slot++) {
			ret = check_consumer(t, i, slot, &t->graph[i].consumers[slot], err);
			if (ret)
				return ret;
		}
		ret = check_consumer(t, i, -1, &t->graph[i].fused_parent, err);
		if (ret)
			return ret;
	}

	/* Every queue, once: scratch marks the operations reached. */
	memset(scratch, 0, n);
	for (type = 0; type < NVDLA_DLA_OP_COUNT; type++) {
		s16 at = t->op_head[type];

		while (at != -1) {
			if (scratch[at])
				return dla_fail(err, NVDLA_DLA_E_GRAPH, at, "consumers", (u64)at, 0,
						"the %s queue reaches operation %d twice (a loop in consumers[%s])",
						dla_op_name((unsigned int)type), at,
						dla_op_name((unsigned int)type));
			scratch[at] = 1;
			queued++;
			at = t->graph[at].consumers[type].index;
		}
	}
	if (queued != n) {
		for (i = 0; i < n && scratch[i]; i++)
			;
		return dla_fail(err, NVDLA_DLA_E_GRAPH, (int)i, "op_head", queued, n,
				"%s operation %u is in no processor queue (op_head and consumers[%s] never reach it), so the task could never complete",
				dla_op_name(t->graph[i].op_type), i,
				dla_op_name(t->graph[i].op_type));
	}

	/* Dependencies: pending counts the events sent to each operation (saturating). */
	memset(t->pending, 0, n);
	for (i = 0; i < n; i++) {
		for (slot = 0; slot < NVDLA_DLA_OP_COUNT; slot++)
			count_incoming(t, &t->graph[i].consumers[slot]);
		count_incoming(t, &t->graph[i].fused_parent);
	}
	for (i = 0; i < n; i++) {
		if (t->graph[i].dependency_count > t->pending[i])
			return dla_fail(err, NVDLA_DLA_E_GRAPH, (int)i, "dependency_count",
					t->graph[i].dependency_count, t->pending[i],
					"%s operation %u waits for %u events, but only %u are sent to it, so it would never start",
					dla_op_name(t->graph[i].op_type), i,
					t->graph[i].dependency_count,
					t->pending[i]);
	}

	/* Fusion: scratch now counts the operations fused to each one. */
	memset(scratch, 0, n);
	for (i = 0; i < n; i++) {
		s16 parent = t->graph[i].fused_parent.index;

		if (parent >= 0 && scratch[parent] < 0xff)
			scratch[parent]++;
	}
	for (i = 0; i < n; i++) {
		unsigned int type_i = t->graph[i].op_type;
		const struct nvdla_dla_sdp_surface_desc *ss = &t->surfaces[i].sdp_surface;
		unsigned int want = 0;

		if (type_i == NVDLA_DLA_OP_CONV)
			want = 1;
		else if (type_i == NVDLA_DLA_OP_SDP && ss->dst_data.type == NVDLA_DLA_MEM_HW)
			want = 1;
		if (scratch[i] != want)
			return dla_fail(err, NVDLA_DLA_E_GRAPH, (int)i, "fused_parent", scratch[i],
					want,
					"%s operation %u is the fused parent of %u operations; it needs %u (a %s)",
					dla_op_name(type_i), i, scratch[i], want,
					type_i == NVDLA_DLA_OP_CONV ? "SDP reading its output"
								    : "PDP reading its output");
	}
	return 0;
}

static int copy_addresses(const struct nvdla_dla_task_source *src, struct nvdla_dla_task *t,
			  struct nvdla_dla_error *err)
{
	u32 i;

	for (i = 0; i < src->num_addresses; i++) {
		const struct nvdla_dla_buffer *b = &src->addresses[i];

		if (b->flags & ~NVDLA_DLA_BUFFER_SECONDARY)
			return dla_fail(err, NVDLA_DLA_E_ARGUMENT, -1, "flags", b->flags,
					NVDLA_DLA_BUFFER_SECONDARY,
					"address-list entry %u has unknown flags 0x%x", i,
					b->flags);
		if (b->address + b->size < b->address)
			return dla_fail(err, NVDLA_DLA_E_EXTENT, -1, "size", b->size, 0,
					"address-list entry %u (0x%llx, %llu bytes) wraps around the address space",
					i, (unsigned long long)b->address,
					(unsigned long long)b->size);
		t->addresses[i] = b->address;
		t->secondary[i] = (b->flags & NVDLA_DLA_BUFFER_SECONDARY) ? 1 : 0;
	}
	return 0;
}

int nvdla_dla_task_validate(const struct nvdla_hw_config *cfg,
			    const struct nvdla_dla_task_source *src, void *storage, size_t bytes,
			    struct nvdla_dla_task **task, struct nvdla_dla_error *err)
{
	struct nvdla_dla_network_desc net;
	struct nvdla_dla_task *t = storage;
	struct dla_check check;
	struct dla_layout l;
	u8 *base = storage;
	u32 i;
	int ret;

	dla_clear_error(err);
	if (!task || !cfg)
		return dla_fail(err, NVDLA_DLA_E_ARGUMENT, -1, "task", 0, 0,
				"the configuration or the task pointer is NULL");
	*task = NULL;
	ret = check_source(src, err);
	if (!ret)
		ret = read_network(src, &net, err);
	if (ret)
		return ret;
	layout(&l, net.num_operations, net.num_luts, src->num_addresses);
	if (!storage || ((uintptr_t)storage & 7) || bytes < l.total)
		return dla_fail(err, NVDLA_DLA_E_STORAGE, -1, "bytes", bytes, l.total,
				"the task needs %llu bytes of 8-byte aligned storage; %llu bytes at %p were given (did the network descriptor change since it was measured?)",
				(unsigned long long)l.total, (unsigned long long)bytes, storage);
	ret = check_network(src, &net, err);
	if (ret)
		return ret;

	memset(t, 0, sizeof(*t));
	t->version = src->version;
	t->num_operations = net.num_operations;
	t->num_luts = net.num_luts;
	t->num_addresses = src->num_addresses;
	memcpy(t->op_head, net.op_head, sizeof(t->op_head));
	t->addresses = (u64 *)(base + l.addresses);
	t->secondary = base + l.secondary;
	t->graph = (struct nvdla_dla_common_op_desc *)(base + l.graph);
	t->ops = (union nvdla_dla_operation_container *)(base + l.ops);
	t->surfaces = (union nvdla_dla_surface_container *)(base + l.surfaces);
	t->luts = (struct nvdla_dla_lut_param *)(base + l.luts);
	t->pending = base + l.pending;

	ret = copy_addresses(src, t, err);
	if (!ret)
		ret = read_lists(src, &net, t, err);
	if (!ret)
		ret = check_graph(t, base + l.scratch, err);
	if (!ret)
		ret = dla_check_launchable(t, base + l.scratch, err);
	if (ret)
		return ret;

	check.cfg = cfg;
	check.src = src;
	check.task = t;
	check.err = err;
	for (i = 0; i < t->num_operations; i++) {
		ret = dla_check_operation(&check, (int)i);
		if (ret)
			return ret;
	}
	for (i = 0; i < t->num_luts; i++) {
		ret = dla_check_lut(&check, i);
		if (ret)
			return ret;
	}
	t->magic = DLA_TASK_MAGIC;
	*task = t;
	return 0;
}

u32 nvdla_dla_task_num_operations(const struct nvdla_dla_task *task)
{
	return task && task->magic == DLA_TASK_MAGIC ? task->num_operations : 0;
}

u32 nvdla_dla_task_version(const struct nvdla_dla_task *task)
{
	return task && task->magic == DLA_TASK_MAGIC ? task->version : 0;
}
