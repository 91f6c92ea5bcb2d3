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
	uint32_t magic;
	uint32_t version;
	uint32_t num_operations;
	uint32_t num_luts;
	uint32_t num_addresses;
	int16_t op_head[NVDLA_DLA_OP_COUNT];
	uint64_t *addresses; /* [num_addresses] device address of each entry */
	uint8_t *secondary;  /* [num_addresses] 1 when behind the secondary interface */
	struct nvdla_dla_common_op_desc *graph;	     /* [num_operations] */
	union nvdla_dla_operation_container *ops;    /* [num_operations] */
	union nvdla_dla_surface_container *surfaces; /* [num_operations], 0.12 layout */
	struct nvdla_dla_lut_param *luts;	     /* [num_luts] */
	uint8_t *pending; /* [num_operations] dependencies still to come (run time) */
};

/* One register group of a processor, as the scheduler sees it. */
struct dla_group {
	int16_t op;   /* operation held, -1 when free */
	int16_t lut;  /* LUT this operation programmed, -1 for none */
	uint8_t rdma; /* the RDMA unit's group it uses */
	bool uses_rdma;
	bool programmed; /* its registers are written */
	bool enabled;	 /* its D_OP_ENABLE is written (or BDMA launched) */
	uint8_t events;	 /* latched events, bit n = enum nvdla_dla_event n */
};

struct dla_processor {
	struct dla_group groups[NVDLA_DLA_NUM_GROUPS];
	int16_t next_op;   /* next operation of this type to program, -1 at the end */
	uint8_t rdma_busy; /* RDMA groups in use, one bit each */
	uint8_t last_done; /* the group that completed last */
};

struct nvdla_dla_engine {
	uint32_t magic;
	const struct nvdla_hw_config *cfg;
	struct nvdla_dla_engine_ops ops;
	void *priv;
	uint32_t base[NVDLA_UNIT_COUNT]; /* unit windows in this register map */
	uint32_t intr_bits;		 /* S_INTR_STATUS bits this configuration raises */
	struct nvdla_dla_task *task;	 /* running task, NULL when idle */
	uint32_t completed;		 /* operations of the task completed */
	uint32_t status;		 /* S_INTR_STATUS bits latched by the ISR */
	bool failed;			 /* an error stopped the task */
	struct dla_processor proc[NVDLA_DLA_OP_COUNT];
};

/* ---- errors (dla_error.c) ---- */

#ifdef __GNUC__
#define DLA_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define DLA_PRINTF(f, a)
#endif

/*
 * Fills @err (when not NULL) and returns the errno that goes with @code.
 * @op is the operation concerned or -1; @field a static name or NULL.
 */
int dla_fail(struct nvdla_dla_error *err, int code, int op, const char *field, uint64_t value,
	     uint64_t limit, const char *fmt, ...) DLA_PRINTF(7, 8);
int dla_code_errno(int code);
void dla_clear_error(struct nvdla_dla_error *err);

/* dla_launch.c: 0 when the task's dependency graph can run to its end. */
int dla_check_launchable(struct nvdla_dla_task *t, uint8_t *scratch, struct nvdla_dla_error *err);

extern const char *const dla_op_names[NVDLA_DLA_OP_COUNT];

static inline const char *dla_op_name(unsigned int type)
{
	return type < NVDLA_DLA_OP_COUNT ? dla_op_names[type] : "?";
}

/* ---- small arithmetic ---- */

static inline uint64_t dla_div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static inline uint64_t dla_round_up(uint64_t a, uint64_t b)
{
	return dla_div_up(a, b) * b;
}

static inline uint32_t dla_bytes_per_element(unsigned int precision)
{
	return precision == NVDLA_DLA_PRECISION_INT8 ? 1 : 2;
}

static inline uint32_t dla_lo32(uint64_t v)
{
	return (uint32_t)v;
}

static inline uint32_t dla_hi32(uint64_t v)
{
	return (uint32_t)(v >> 32);
}

/* ---- register access (dla_sched.c keeps the bases) ---- */

static inline void dla_wr(struct nvdla_dla_engine *e, enum nvdla_unit unit, uint32_t reg,
			  uint32_t value)
{
	e->ops.reg_write(e->priv, e->base[unit] + reg, value);
}

static inline uint32_t dla_rd(struct nvdla_dla_engine *e, enum nvdla_unit unit, uint32_t reg)
{
	return e->ops.reg_read(e->priv, e->base[unit] + reg);
}

/* A RAM_TYPE field value for a memory type (the hardware: 1 = MC, 0 = CV). */
static inline uint32_t dla_ram_type(unsigned int mem_type)
{
	return mem_type == NVDLA_DLA_MEM_CV ? 0 : 1;
}

/* Device address of a cube (validated: the index is in range). */
static inline uint64_t dla_cube_address(const struct nvdla_dla_task *t,
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
	uint8_t group;
	uint8_t rdma;
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
uint32_t dla_pixel_bytes(unsigned int format, unsigned int plane);

/* Polls @reg of @unit until (value & mask) != 0, at most NVDLA_DLA_POLL_LIMIT reads. */
int dla_poll(struct nvdla_dla_engine *e, enum nvdla_unit unit, uint32_t reg, uint32_t mask,
	     uint32_t *value);

/* ---- validation of one operation (dla_check.c) ---- */

struct dla_check {
	const struct nvdla_hw_config *cfg;
	const struct nvdla_dla_task_source *src;
	struct nvdla_dla_task *task;
	struct nvdla_dla_error *err;
	int op; /* operation being checked */
};

int dla_check_operation(struct dla_check *c, int index);
int dla_check_lut(struct dla_check *c, uint32_t index);

#define DLA_MAX_DIM 8192u /* 13-bit size fields hold the size minus one */

/* The rules every processor's checks share: 0, or the errno of the failure they record. */
const char *dla_mem_name(unsigned int type);
int dla_fail_range(struct dla_check *c, const char *what, const char *field, uint64_t value,
		   uint64_t lo, uint64_t hi);
int dla_check_range(struct dla_check *c, const char *what, const char *field, uint64_t value,
		    uint64_t lo, uint64_t hi);
int dla_check_enum(struct dla_check *c, const char *what, const char *field, uint64_t value,
		   uint64_t max);
int dla_check_feature_bit(struct dla_check *c, const char *what, uint32_t feature,
			  const char *name);
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
		     int32_t index, int64_t offset, uint64_t footprint, uint32_t align);
int dla_check_aligned(struct dla_check *c, const char *what, const char *field, uint64_t value,
		      uint32_t align);
int dla_check_at_least(struct dla_check *c, const char *what, const char *field, uint64_t value,
		       uint64_t minimum, const char *reason);
int64_t dla_cube_offset(const struct nvdla_dla_data_cube *cube);
int dla_check_surface(struct dla_check *c, const char *what, const char *field,
		      const struct nvdla_dla_data_cube *cube, uint32_t height, uint64_t surfaces,
		      uint64_t line_bytes, uint64_t extra, uint32_t align);
int dla_check_feature(struct dla_check *c, const char *what, const char *field,
		      const struct nvdla_dla_data_cube *cube, unsigned int precision,
		      uint64_t extra);
int dla_check_batches(struct dla_check *c, const char *what, const char *field, uint32_t batches,
		      uint32_t stride, uint64_t one, uint64_t *extra);
uint64_t dla_feature_bytes(const struct dla_check *c, const struct nvdla_dla_data_cube *cube,
			   unsigned int precision);

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
