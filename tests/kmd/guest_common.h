/* SPDX-License-Identifier: MIT */
/*
 * What the guest test programs (tests/kmd/nvdla_kmd_test.c, tests/vp/nvdla_vp_guest.c,
 * tests/kmd/arm64/nvdla_dt_test.c) share: the check lines the host scripts count, ioctl and
 * errno helpers, and the one-operation DLA task they submit (which address-list entry holds
 * what, and the network and dependency descriptors around the one operation).
 */
#ifndef NVDLA_TESTS_GUEST_COMMON_H
#define NVDLA_TESTS_GUEST_COMMON_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include <nvdla/hw/dla_interface.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The checks so far; each program prints its own summary. */
static int guest_passed, guest_failed;
/* Printed as "<group>: " after "ok  " or "FAIL" when not empty. */
static const char *guest_group = "";

/* One check's line, flushed at once so that the host has it even if the guest dies next. */
static inline void result(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %s%s", ok ? "ok  " : "FAIL", guest_group, *guest_group ? ": " : "");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		guest_passed++;
	else
		guest_failed++;
}

/* An ioctl retried on EINTR/EAGAIN: 0 or -errno. */
static inline int xioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do {
		r = ioctl(fd, req, arg);
	} while (r < 0 && (errno == EINTR || errno == EAGAIN));
	return r < 0 ? -errno : 0;
}

/* The name of an errno value, given with either sign; the number when it has none here. */
static inline const char *errname(int e)
{
	static char buf[16];

	switch (e < 0 ? -e : e) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EIO: return "EIO";
	case EBADF: return "EBADF";
	case E2BIG: return "E2BIG";
	case ENOMEM: return "ENOMEM";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case ENOSPC: return "ENOSPC";
	case ERANGE: return "ERANGE";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ECANCELED: return "ECANCELED";
	case EOVERFLOW: return "EOVERFLOW";
	}
	snprintf(buf, sizeof(buf), "%d", e);
	return buf;
}

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

#endif /* NVDLA_TESTS_GUEST_COMMON_H */
