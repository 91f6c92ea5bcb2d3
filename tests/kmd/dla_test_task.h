/* SPDX-License-Identifier: MIT */
/*
 * The one-operation DLA task that the guest test programs of tests/kmd and tests/vp submit:
 * which address-list entry holds what, and the network and dependency descriptors around
 * the one operation.
 */
#ifndef NVDLA_TESTS_DLA_TEST_TASK_H
#define NVDLA_TESTS_DLA_TEST_TASK_H

#include <stdint.h>
#include <string.h>

#include <nvdla/hw/dla_interface.h>

/* Address-list entries: descriptors in the first buffer, the data in others. */
enum { TASK_NET, TASK_GRAPH, TASK_OPS, TASK_SURFS, TASK_SRC, TASK_DST, TASK_ENTRIES };

struct dla_test_descs {
	struct nvdla_dla_network_desc net;
	struct nvdla_dla_common_op_desc graph;
	union nvdla_dla_operation_container op;
	union nvdla_dla_surface_container surf;
};

/* A network of one operation of @type: no LUT, ROI array or statistics. */
static inline void dla_test_descs_init(struct dla_test_descs *x, unsigned int type)
{
	int i;

	memset(x, 0, sizeof(*x));
	x->net.operation_desc_index = TASK_OPS;
	x->net.surface_desc_index = TASK_SURFS;
	x->net.dependency_graph_index = TASK_GRAPH;
	x->net.lut_data_index = -1;
	x->net.roi_array_index = -1;
	x->net.surface_index = -1;
	x->net.stat_list_index = -1;
	for (i = 0; i < NVDLA_DLA_OP_COUNT; i++)
		x->net.op_head[i] = i == (int)type ? 0 : -1;
	x->net.num_rois = 1;
	x->net.num_operations = 1;
	x->net.num_addresses = TASK_ENTRIES;
	x->graph.op_type = (uint8_t)type;
	for (i = 0; i < NVDLA_DLA_OP_COUNT; i++)
		x->graph.consumers[i].index = -1;
	x->graph.fused_parent.index = -1;
}

#endif /* NVDLA_TESTS_DLA_TEST_TASK_H */
