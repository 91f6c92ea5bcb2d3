/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Internals of the DLA engine shared by its source files: the checked task,
 * the engine context, register access and error reporting.
 */
#ifndef NVDLA_ENGINE_DLA_INTERNAL_H
#define NVDLA_ENGINE_DLA_INTERNAL_H

#include <nvdla/hw/dla_engine.h>
#include <nvdla/hw/nvdla_regs.h>

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#else
#include <nvdla/hw/dla_user_compat.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the DLA descriptors are little-endian and the engine reads them in place"
#endif

#define DLA_TASK_MAGIC 0x4b534154u   /* "TASK" */
#define DLA_ENGINE_MAGIC 0x4e474e45u /* "ENGN" */

/* The checked copy of a task, in the embedder's storage (all arrays follow the header). */
struct nvdla_dla_task {
	u32 magic;
	u32 version;
	u32 num_operations;
	u32 num_luts;
	u32 num_addresses;
	s16 op_head[NVDLA_DLA_OP_COUNT];
	u64 *addresses; /* [num_addresses] device address of each entry */
	u8 *secondary;	/* [num_addresses] 1 when behind the secondary interface */
	struct nvdla_dla_common_op_desc *graph;	     /* [num_operations] */
	union nvdla_dla_operation_container *ops;    /* [num_operations] */
	union nvdla_dla_surface_container *surfaces; /* [num_operations], 0.12 layout */
	struct nvdla_dla_lut_param *luts;	     /* [num_luts] */
	u8 *pending; /* [num_operations] dependencies still to come (run time) */
};

/* One register group of a processor, as the scheduler sees it. */
struct dla_group {
	s16 op;	 /* operation held, -1 when free */
	s16 lut; /* LUT this operation programmed, -1 for none */
	u8 rdma; /* the RDMA unit's group it uses */
	bool uses_rdma;
	bool programmed; /* its registers are written */
	bool enabled;	 /* its D_OP_ENABLE is written (or BDMA launched) */
	u8 events;	 /* latched events, bit n = enum nvdla_dla_event n */
};

struct dla_processor {
	struct dla_group groups[NVDLA_DLA_NUM_GROUPS];
	s16 next_op;  /* next operation of this type to program, -1 at the end */
	u8 rdma_busy; /* RDMA groups in use, one bit each */
	u8 last_done; /* the group that completed last */
};

/* Group registers (D_*) of every unit lie in its first 64 words. */
#define DLA_GROUP_WORDS 64
#define DLA_NO_GROUP 0xff

struct nvdla_dla_engine {
	u32 magic;
	const struct nvdla_hw_config *cfg;
	struct nvdla_dla_engine_ops ops;
	void *priv;
	u32 base[NVDLA_UNIT_COUNT];  /* unit windows in this register map */
	u32 intr_bits;		     /* S_INTR_STATUS bits this configuration raises */
	struct nvdla_dla_task *task; /* running task, NULL when idle */
	u32 completed;		     /* operations of the task completed */
	u32 status;		     /* S_INTR_STATUS bits latched by the ISR */
	bool failed;		     /* an error stopped the task */
	struct dla_processor proc[NVDLA_DLA_OP_COUNT];
	/*
	 * The group registers the engine wrote during the running task, by unit
	 * and group: a write of the value a register holds is skipped (most of an
	 * operation's 120-odd writes repeat what the operation before it in that
	 * group wrote). Forgotten when a task starts and when the engine is reset:
	 * the device may have been reset or powered down in between.
	 */
	u8 producer[NVDLA_UNIT_COUNT]; /* the group S_POINTER selects, DLA_NO_GROUP if not known */
	u64 known[NVDLA_UNIT_COUNT][NVDLA_DLA_NUM_GROUPS]; /* bit w: written[..][w] holds */
	u32 written[NVDLA_UNIT_COUNT][NVDLA_DLA_NUM_GROUPS][DLA_GROUP_WORDS];
};

/* ---- errors (dla_error.c) ---- */

/*
 * Fills @err (when not NULL) and returns the errno that goes with @code.
 * @op is the operation concerned or -1; @field a static name or NULL.
 */
int dla_fail(struct nvdla_dla_error *err, int code, int op, const char *field, u64 value, u64 limit,
	     const char *fmt, ...) __printf(7, 8);
int dla_code_errno(int code);
void dla_clear_error(struct nvdla_dla_error *err);

/* dla_launch.c: 0 when the task's dependency graph can run to its end. */
int dla_check_launchable(struct nvdla_dla_task *t, u8 *scratch, struct nvdla_dla_error *err);

extern const char *const dla_op_names[NVDLA_DLA_OP_COUNT];

static inline const char *dla_op_name(unsigned int type)
{
	return type < NVDLA_DLA_OP_COUNT ? dla_op_names[type] : "?";
}

/* ---- small arithmetic ---- */

static inline u64 dla_div_up(u64 a, u64 b)
{
	return (a + b - 1) / b;
}

static inline u64 dla_round_up(u64 a, u64 b)
{
	return dla_div_up(a, b) * b;
}

static inline u32 dla_bytes_per_element(unsigned int precision)
{
	return precision == NVDLA_DLA_PRECISION_INT8 ? 1 : 2;
}

static inline u32 dla_lo32(u64 v)
{
	return (u32)v;
}

static inline u32 dla_hi32(u64 v)
{
	return (u32)(v >> 32);
}

/* ---- register access (dla_sched.c keeps the bases) ---- */

/* Writes a register, unless it is a group register that already holds @value. */
void dla_wr(struct nvdla_dla_engine *e, enum nvdla_unit unit, u32 reg, u32 value);

static inline u32 dla_rd(struct nvdla_dla_engine *e, enum nvdla_unit unit, u32 reg)
{
	return e->ops.reg_read(e->priv, e->base[unit] + reg);
}

/* A RAM_TYPE field value for a memory type (the hardware: 1 = MC, 0 = CV). */
static inline u32 dla_ram_type(unsigned int mem_type)
{
	return mem_type == NVDLA_DLA_MEM_CV ? 0 : 1;
}

/* Device address of a cube (validated: the index is in range). */
static inline u64 dla_cube_address(const struct nvdla_dla_task *t,
				   const struct nvdla_dla_data_cube *cube)
{
	return t->addresses[cube->address] + cube->offset;
}

/* ---- programming, one file per processor ---- */

struct dla_op_ctx {
	struct nvdla_dla_engine *e;
	const struct nvdla_dla_task *task;
	int index;
	const union nvdla_dla_operation_container *op;
	const union nvdla_dla_surface_container *surf;
	u8 group;
	u8 rdma;
	bool uses_rdma;
};

int dla_bdma_program(struct dla_op_ctx *c, struct nvdla_dla_error *err);
int dla_bdma_enable(struct dla_op_ctx *c, struct nvdla_dla_error *err);
int dla_conv_program(struct dla_op_ctx *c, struct nvdla_dla_error *err);
int dla_conv_enable(struct dla_op_ctx *c, struct nvdla_dla_error *err);
int dla_sdp_program(struct dla_op_ctx *c, struct nvdla_dla_error *err);
int dla_sdp_enable(struct dla_op_ctx *c, struct nvdla_dla_error *err);
int dla_pdp_program(struct dla_op_ctx *c, struct nvdla_dla_error *err);
int dla_pdp_enable(struct dla_op_ctx *c, struct nvdla_dla_error *err);
int dla_cdp_program(struct dla_op_ctx *c, struct nvdla_dla_error *err);
int dla_cdp_enable(struct dla_op_ctx *c, struct nvdla_dla_error *err);
int dla_rubik_program(struct dla_op_ctx *c, struct nvdla_dla_error *err);
int dla_rubik_enable(struct dla_op_ctx *c, struct nvdla_dla_error *err);

/* Writes the producer pointers of a processor's units (before programming and enabling). */
void dla_set_producer(struct dla_op_ctx *c, unsigned int type);

/* Writes a LUT into CDP's or SDP's LUT registers (dla_lut.c). */
void dla_lut_program(struct nvdla_dla_engine *e, enum nvdla_unit unit,
		     const struct nvdla_dla_lut_param *lut, unsigned int precision);

/* Whether an SDP operation reads anything through SDP_RDMA. */
bool dla_sdp_uses_rdma(const struct nvdla_dla_sdp_op_desc *op,
		       const struct nvdla_dla_sdp_surface_desc *surf);
/* Whether an SDP stage reads an operand from memory. */
bool dla_sdp_stage_dma(const struct nvdla_dla_sdp_op *stage);

/* SDP's processing precision for an input and output precision (the hardware's table). */
unsigned int dla_sdp_proc_precision(unsigned int src, unsigned int dst);

/* Bytes per pixel of plane @plane of pixel format @format, 0 when the plane does not exist. */
u32 dla_pixel_bytes(unsigned int format, unsigned int plane);

/* Polls @reg of @unit until (value & mask) != 0, at most NVDLA_DLA_POLL_LIMIT reads. */
int dla_poll(struct nvdla_dla_engine *e, enum nvdla_unit unit, u32 reg, u32 mask, u32 *value);

/* ---- validation of one operation (dla_check.c) ---- */

struct dla_check {
	const struct nvdla_hw_config *cfg;
	const struct nvdla_dla_task_source *src;
	struct nvdla_dla_task *task;
	struct nvdla_dla_error *err;
	int op; /* operation being checked */
};

int dla_check_operation(struct dla_check *c, int index);
int dla_check_lut(struct dla_check *c, u32 index);

#define DLA_MAX_DIM 8192u /* 13-bit size fields hold the size minus one */

/* The rules every processor's checks share: 0, or the errno of the failure they record. */
const char *dla_mem_name(unsigned int type);
int dla_fail_range(struct dla_check *c, const char *what, const char *field, u64 value, u64 lo,
		   u64 hi);
int dla_check_range(struct dla_check *c, const char *what, const char *field, u64 value, u64 lo,
		    u64 hi);
int dla_check_enum(struct dla_check *c, const char *what, const char *field, u64 value, u64 max);
int dla_check_feature_bit(struct dla_check *c, const char *what, u32 feature, const char *name);
int dla_check_precision(struct dla_check *c, const char *what, const char *field,
			unsigned int precision);
int dla_check_dims(struct dla_check *c, const char *what, const char *field,
		   const struct nvdla_dla_data_cube *cube);
int dla_same_dims(struct dla_check *c, const char *what, const char *field,
		  const struct nvdla_dla_data_cube *a, const struct nvdla_dla_data_cube *b,
		  const char *other);
int dla_check_mem_type(struct dla_check *c, const char *what, const char *field, unsigned int type,
		       bool allow_hw);
int dla_check_memory(struct dla_check *c, const char *what, const char *field, unsigned int type,
		     s32 index, s64 offset, u64 footprint, u32 align);
int dla_check_aligned(struct dla_check *c, const char *what, const char *field, u64 value,
		      u32 align);
int dla_check_at_least(struct dla_check *c, const char *what, const char *field, u64 value,
		       u64 minimum, const char *reason);
s64 dla_cube_offset(const struct nvdla_dla_data_cube *cube);
int dla_check_surface(struct dla_check *c, const char *what, const char *field,
		      const struct nvdla_dla_data_cube *cube, u32 height, u64 surfaces,
		      u64 line_bytes, u64 extra, u32 align);
int dla_check_feature(struct dla_check *c, const char *what, const char *field,
		      const struct nvdla_dla_data_cube *cube, unsigned int precision, u64 extra);
int dla_check_batches(struct dla_check *c, const char *what, const char *field, u32 batches,
		      u32 stride, u64 one, u64 *extra);
u64 dla_feature_bytes(const struct dla_check *c, const struct nvdla_dla_data_cube *cube,
		      unsigned int precision);

int dla_check_fused_parent(struct dla_check *c, const char *what, const char *parent,
			   const struct nvdla_dla_data_cube *src);

/* Each processor's checks, beside its programming (dla_<processor>.c). */
int dla_bdma_check(struct dla_check *c, const struct nvdla_dla_bdma_surface_desc *s);
int dla_conv_check(struct dla_check *c, const struct nvdla_dla_conv_op_desc *op,
		   const struct nvdla_dla_conv_surface_desc *s);
int dla_sdp_check(struct dla_check *c, const struct nvdla_dla_sdp_op_desc *op,
		  const struct nvdla_dla_sdp_surface_desc *s);
int dla_pdp_check(struct dla_check *c, const struct nvdla_dla_pdp_op_desc *op,
		  const struct nvdla_dla_pdp_surface_desc *s);
int dla_cdp_check(struct dla_check *c, const struct nvdla_dla_cdp_op_desc *op,
		  const struct nvdla_dla_cdp_surface_desc *s);
int dla_rubik_check(struct dla_check *c, const struct nvdla_dla_rubik_op_desc *op,
		    const struct nvdla_dla_rubik_surface_desc *s);

#endif /* NVDLA_ENGINE_DLA_INTERNAL_H */
