/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The binary contract between a compiled NVDLA network (the DLA blobs of a
 * loadable) and the engine that runs it: the network descriptor, the
 * dependency graph, the operation and surface descriptors and the LUTs, as
 * the public nvdla/sw interface lays them out in memory (little-endian,
 * packed, 4-byte aligned).
 *
 * Two layouts exist:
 *  - interface 0.12 (the nvdla/sw firmware from April 2019 on): a data cube
 *    is 32 bytes and carries an offset into its address-list entry;
 *  - interfaces 0.10 and 0.11 (the public regression loadables): a data cube
 *    is 28 bytes and has no offset (the cube starts at its entry).
 * Every other structure is the same in both. The structures below are the
 * 0.12 layout; struct nvdla_dla_data_cube_v10 is the older cube, and
 * nvdla_dla_surface_size() gives the size of each surface descriptor in each
 * layout. The operation, surface and LUT lists are arrays of fixed-size slots
 * (NVDLA_DLA_OP_SLOT_SIZE, NVDLA_DLA_SURFACE_SLOT_SIZE, NVDLA_DLA_LUT_SIZE)
 * indexed by operation (or LUT) index, whatever the layout.
 *
 * Plain C shared by the kernel module, the engine, the runtime and the tests.
 */
#ifndef NVDLA_HW_DLA_INTERFACE_H
#define NVDLA_HW_DLA_INTERFACE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Interface versions, as the loadable's Blob.version {major, minor, sub_minor}. */
#define NVDLA_DLA_VERSION(major, minor, sub)                                                       \
	((((major)&0xffu) << 16) | (((minor)&0xffu) << 8) | ((sub)&0xffu))
#define NVDLA_DLA_VERSION_MAJOR(v) (((v) >> 16) & 0xffu)
#define NVDLA_DLA_VERSION_MINOR(v) (((v) >> 8) & 0xffu)
#define NVDLA_DLA_VERSION_SUB(v) ((v)&0xffu)

/* The oldest and newest interfaces the engine accepts (any sub-minor). */
#define NVDLA_DLA_VERSION_OLDEST NVDLA_DLA_VERSION(0, 10, 0)
#define NVDLA_DLA_VERSION_NEWEST NVDLA_DLA_VERSION(0, 12, 255)
/* The first interface whose data cubes carry an offset (32-byte cubes). */
#define NVDLA_DLA_VERSION_CUBE_OFFSET NVDLA_DLA_VERSION(0, 12, 0)

/* The six processors; an operation's op_type. */
enum nvdla_dla_op_type {
	NVDLA_DLA_OP_BDMA = 0,
	NVDLA_DLA_OP_CONV = 1,
	NVDLA_DLA_OP_SDP = 2,
	NVDLA_DLA_OP_PDP = 3,
	NVDLA_DLA_OP_CDP = 4,
	NVDLA_DLA_OP_RUBIK = 5,
};
#define NVDLA_DLA_OP_COUNT 6
/* Register groups (ping-pong) of every processor. */
#define NVDLA_DLA_NUM_GROUPS 2

/* Events an operation raises; a consumer entry names one of them. */
enum nvdla_dla_event {
	NVDLA_DLA_EVENT_NONE = 0,
	NVDLA_DLA_EVENT_OP_COMPLETED = 1,
	NVDLA_DLA_EVENT_OP_PROGRAMMED = 2,
	NVDLA_DLA_EVENT_OP_ENABLED = 3,
	NVDLA_DLA_EVENT_CDMA_WT_DONE = 4, /* convolution: weights loaded */
	NVDLA_DLA_EVENT_CDMA_DT_DONE = 5, /* convolution: input data loaded */
};

/* Where a data cube lives (struct nvdla_dla_data_cube.type). */
enum nvdla_dla_mem_type {
	NVDLA_DLA_MEM_MC = 0, /* external memory, primary interface (MCIF) */
	NVDLA_DLA_MEM_CV = 1, /* CV-SRAM, secondary interface (CVIF) */
	NVDLA_DLA_MEM_HW = 2, /* no memory: passed between fused units */
};

enum nvdla_dla_precision {
	NVDLA_DLA_PRECISION_INT8 = 0,
	NVDLA_DLA_PRECISION_INT16 = 1,
	NVDLA_DLA_PRECISION_FP16 = 2,
};

/* conv_op.data_format: the pixel formats 0..35 (the hardware's enum), or feature data. */
#define NVDLA_DLA_FORMAT_PIXEL_COUNT 36
#define NVDLA_DLA_FORMAT_FEATURE 36

enum nvdla_dla_conv_mode {
	NVDLA_DLA_CONV_DIRECT = 0,
	NVDLA_DLA_CONV_WINOGRAD = 1,
};
enum nvdla_dla_weight_format {
	NVDLA_DLA_WEIGHT_UNCOMPRESSED = 0,
	NVDLA_DLA_WEIGHT_COMPRESSED = 1,
};
#define NVDLA_DLA_PIXEL_MAPPING_PITCH_LINEAR 0
#define NVDLA_DLA_MEAN_DISABLE 0
#define NVDLA_DLA_MEAN_ENABLE 1

/* SDP: one stage (X1, X2, Y) of struct nvdla_dla_sdp_op. */
enum nvdla_dla_sdp_op_kind {
	NVDLA_DLA_SDP_OP_NONE = 0,
	NVDLA_DLA_SDP_OP_MUL = 1,
	NVDLA_DLA_SDP_OP_ADD = 2,
	NVDLA_DLA_SDP_OP_BOTH = 3,
};
enum nvdla_dla_sdp_alu {
	NVDLA_DLA_SDP_ALU_MAX = 0,
	NVDLA_DLA_SDP_ALU_MIN = 1,
	NVDLA_DLA_SDP_ALU_SUM = 2,
	NVDLA_DLA_SDP_ALU_EQL = 3,
};
enum nvdla_dla_sdp_mode {
	NVDLA_DLA_SDP_PER_LAYER = 0,  /* operand in a register */
	NVDLA_DLA_SDP_PER_KERNEL = 1, /* one operand per channel, from memory */
	NVDLA_DLA_SDP_PER_POINT = 2,  /* one operand per element, from memory */
};
enum nvdla_dla_activation {
	NVDLA_DLA_ACT_NONE = 0,
	NVDLA_DLA_ACT_RELU = 1,
	NVDLA_DLA_ACT_LUT = 2,
	NVDLA_DLA_ACT_PRELU = 3,
};

/* LUTs: 65 entries in the linear-exponent table, 257 in the linear-only table. */
#define NVDLA_DLA_LUT_LE_ENTRIES 65
#define NVDLA_DLA_LUT_LO_ENTRIES 257
enum nvdla_dla_lut_method {
	NVDLA_DLA_LUT_METHOD_EXPONENTIAL = 0,
	NVDLA_DLA_LUT_METHOD_LINEAR = 1,
};
enum nvdla_dla_lut_priority {
	NVDLA_DLA_LUT_PRI_LINEAR_EXP = 0,
	NVDLA_DLA_LUT_PRI_LINEAR_ONLY = 1,
};

enum nvdla_dla_pool_mode {
	NVDLA_DLA_POOL_AVERAGE = 0,
	NVDLA_DLA_POOL_MAX = 1,
	NVDLA_DLA_POOL_MIN = 2,
};
/* pool_width/pool_height hold the kernel size minus one (0..7). */
#define NVDLA_DLA_POOL_SIZE_MAX 7
#define NVDLA_DLA_PDP_PAD_VALUES 7

enum nvdla_dla_rubik_mode {
	NVDLA_DLA_RUBIK_CONTRACT = 0,
	NVDLA_DLA_RUBIK_SPLIT = 1,
	NVDLA_DLA_RUBIK_MERGE = 2,
};

#define NVDLA_DLA_BDMA_MAX_TRANSFERS 20

#define NVDLA_DLA_PACKED __attribute__((packed, aligned(4)))

/* Address-list entry 0 of a task: what the task is and where its lists are. */
struct nvdla_dla_network_desc {
	int16_t operation_desc_index;	/* address-list index of the operation list */
	int16_t surface_desc_index;	/* ... of the surface list */
	int16_t dependency_graph_index; /* ... of the dependency graph */
	int16_t lut_data_index;		/* ... of the LUT list (when num_luts > 0) */
	int16_t roi_array_index;	/* dynamic ROI only */
	int16_t surface_index;		/* dynamic ROI only */
	int16_t stat_list_index;	/* statistics (not written by this engine) */
	int16_t reserved1;
	int16_t op_head[NVDLA_DLA_OP_COUNT]; /* first operation of each type, or -1 */
	uint16_t num_rois;
	uint16_t num_operations;
	uint16_t num_luts;
	uint16_t num_addresses;
	int16_t input_layer;
	uint8_t dynamic_roi;
	uint8_t reserved0;
} NVDLA_DLA_PACKED;

/* A dependency: operation @index loses one dependency when the owner raises @event. */
struct nvdla_dla_consumer {
	int16_t index; /* operation index, -1 for none */
	uint8_t event; /* enum nvdla_dla_event */
	uint8_t reserved;
} NVDLA_DLA_PACKED;

/* One entry of the dependency graph, per operation. */
struct nvdla_dla_common_op_desc {
	int16_t index; /* not trusted: the engine uses the entry's position */
	int8_t roi_index;
	uint8_t op_type; /* enum nvdla_dla_op_type */
	uint8_t dependency_count;
	uint8_t reserved0[3];
	/* consumers[t]: the dependent operation of type t; consumers[own type] is also the
	 * next operation of the same type (the processor's queue). */
	struct nvdla_dla_consumer consumers[NVDLA_DLA_OP_COUNT];
	/* The operation of type (own type - 1) this one is fused with (SDP after CONV,
	 * PDP after SDP), or index -1. */
	struct nvdla_dla_consumer fused_parent;
} NVDLA_DLA_PACKED;

/* A data cube, interface 0.12. */
struct nvdla_dla_data_cube {
	uint16_t type;	 /* enum nvdla_dla_mem_type */
	int16_t address; /* address-list index, -1 for none */
	uint32_t offset; /* bytes from the start of that entry */
	uint32_t size;
	uint16_t width;
	uint16_t height;
	uint16_t channel;
	uint16_t reserved0;
	uint32_t line_stride;
	uint32_t surf_stride;
	uint32_t plane_stride; /* Rubik split/merge */
} NVDLA_DLA_PACKED;

/* A data cube, interfaces 0.10 and 0.11: no offset. */
struct nvdla_dla_data_cube_v10 {
	uint16_t type;
	int16_t address;
	uint32_t size;
	uint16_t width;
	uint16_t height;
	uint16_t channel;
	uint16_t reserved0;
	uint32_t line_stride;
	uint32_t surf_stride;
	uint32_t plane_stride;
} NVDLA_DLA_PACKED;

struct nvdla_dla_cvt_param {
	int16_t scale;
	uint8_t truncate;
	uint8_t enable;
	int32_t offset;
} NVDLA_DLA_PACKED;

/* ---- BDMA ---- */

struct nvdla_dla_bdma_transfer {
	int16_t source_address;	     /* address-list index (no offset in any version) */
	int16_t destination_address; /* address-list index */
	uint32_t line_size;	     /* bytes, a multiple of 32 */
	uint32_t line_repeat;	     /* lines per surface */
	uint32_t source_line;	     /* line strides */
	uint32_t destination_line;
	uint32_t surface_repeat; /* surfaces */
	uint32_t source_surface; /* surface strides */
	uint32_t destination_surface;
} NVDLA_DLA_PACKED;

struct nvdla_dla_bdma_surface_desc {
	uint8_t source_type;	  /* enum nvdla_dla_mem_type: MC or CV */
	uint8_t destination_type; /* MC or CV */
	uint16_t num_transfers;
	struct nvdla_dla_bdma_transfer transfers[NVDLA_DLA_BDMA_MAX_TRANSFERS];
} NVDLA_DLA_PACKED;

struct nvdla_dla_bdma_op_desc {
	uint16_t num_transfers;
	uint16_t reserved0;
} NVDLA_DLA_PACKED;

/* ---- Convolution ---- */

struct nvdla_dla_conv_surface_desc {
	struct nvdla_dla_data_cube weight_data;
	struct nvdla_dla_data_cube wmb_data; /* compressed weights: the mask bits */
	struct nvdla_dla_data_cube wgs_data; /* compressed weights: the group sizes */
	struct nvdla_dla_data_cube src_data;
	struct nvdla_dla_data_cube dst_data;
	int64_t offset_u;	    /* semi-planar images: the second plane from src_data */
	uint32_t in_line_uv_stride; /* its line stride */
} NVDLA_DLA_PACKED;

struct nvdla_dla_conv_op_desc {
	uint8_t conv_mode; /* enum nvdla_dla_conv_mode */
	uint8_t data_reuse;
	uint8_t weight_reuse;
	uint8_t skip_data_rls;
	uint8_t skip_weight_rls;
	uint8_t reserved0;
	uint16_t entry_per_slice;
	uint8_t data_format;   /* pixel format 0..35 or NVDLA_DLA_FORMAT_FEATURE */
	uint8_t pixel_mapping; /* NVDLA_DLA_PIXEL_MAPPING_PITCH_LINEAR */
	uint16_t fetch_grain;
	uint8_t reserved_b[8];
	uint8_t batch;
	uint8_t weight_format; /* enum nvdla_dla_weight_format */
	uint8_t data_bank;
	uint8_t weight_bank;
	uint32_t batch_stride;
	uint8_t post_extension;
	uint8_t pixel_override;
	uint16_t release;
	uint16_t input_width_csc;
	uint16_t input_height_csc;
	uint16_t input_channel_csc;
	uint16_t kernel_width_csc;
	uint16_t kernel_height_csc;
	uint16_t kernel_channel_csc;
	uint16_t input_width_cmac;
	uint16_t input_height_cmac;
	uint32_t bytes_per_kernel;
	int16_t mean_ry;
	int16_t mean_gu;
	int16_t mean_bv;
	int16_t mean_ax;
	uint8_t mean_format;
	uint8_t conv_stride_x;
	uint8_t conv_stride_y;
	uint8_t pad_x_left;
	uint8_t pad_x_right;
	uint8_t pad_y_top;
	uint8_t pad_y_bottom;
	uint8_t dilation_x;
	uint8_t dilation_y;
	uint8_t reserved2[2];
	uint8_t pra_truncate;
	uint8_t in_precision;  /* enum nvdla_dla_precision */
	uint8_t out_precision; /* the processing precision */
	int16_t pad_val;
	struct nvdla_dla_cvt_param in_cvt;
	struct nvdla_dla_cvt_param out_cvt; /* truncate only: scale 1, offset 0 */
} NVDLA_DLA_PACKED;

/* ---- SDP ---- */

struct nvdla_dla_sdp_surface_desc {
	struct nvdla_dla_data_cube src_data; /* type HW: fed by the convolution */
	struct nvdla_dla_data_cube x1_data;
	struct nvdla_dla_data_cube x2_data;
	struct nvdla_dla_data_cube y_data;
	struct nvdla_dla_data_cube dst_data; /* type HW: into PDP */
} NVDLA_DLA_PACKED;

struct nvdla_dla_sdp_cvt {
	struct nvdla_dla_cvt_param alu_cvt;
	struct nvdla_dla_cvt_param mul_cvt;
} NVDLA_DLA_PACKED;

struct nvdla_dla_sdp_op {
	uint8_t enable;
	uint8_t alu_type;    /* enum nvdla_dla_sdp_alu */
	uint8_t type;	     /* enum nvdla_dla_sdp_op_kind */
	uint8_t mode;	     /* enum nvdla_dla_sdp_mode */
	uint8_t act;	     /* enum nvdla_dla_activation */
	uint8_t shift_value; /* ALU operand left shift */
	uint8_t truncate;    /* MUL result right shift */
	uint8_t precision;   /* operand precision */
	int32_t alu_operand;
	int32_t mul_operand;
	struct nvdla_dla_sdp_cvt cvt;
} NVDLA_DLA_PACKED;

struct nvdla_dla_sdp_op_desc {
	uint8_t src_precision;
	uint8_t dst_precision;
	int16_t lut_index; /* LUT list index, -1 for none */
	struct nvdla_dla_cvt_param out_cvt;
	uint8_t conv_mode;
	uint8_t batch_num;
	uint16_t reserved0;
	uint32_t batch_stride;
	struct nvdla_dla_sdp_op x1_op;
	struct nvdla_dla_sdp_op x2_op;
	struct nvdla_dla_sdp_op y_op;
} NVDLA_DLA_PACKED;

/* ---- PDP ---- */

struct nvdla_dla_pdp_surface_desc {
	struct nvdla_dla_data_cube src_data; /* type HW: fed by SDP */
	struct nvdla_dla_data_cube dst_data;
} NVDLA_DLA_PACKED;

struct nvdla_dla_pdp_op_desc {
	uint16_t partial_in_width_first;
	uint16_t partial_in_width_mid;
	uint16_t partial_in_width_last;
	uint16_t partial_width_first;
	uint16_t partial_width_mid;
	uint16_t partial_width_last;
	uint8_t split_num;
	uint8_t pool_mode;   /* enum nvdla_dla_pool_mode */
	uint8_t pool_width;  /* kernel width - 1 */
	uint8_t pool_height; /* kernel height - 1 */
	uint8_t stride_x;
	uint8_t stride_y;
	uint8_t pad_left;
	uint8_t pad_right;
	uint8_t pad_top;
	uint8_t pad_bottom;
	uint8_t precision;
	uint8_t reserved0;
	int32_t padding_value[NVDLA_DLA_PDP_PAD_VALUES]; /* n x the padding value, n = 1..7 */
} NVDLA_DLA_PACKED;

/* ---- CDP ---- */

struct nvdla_dla_cdp_surface_desc {
	struct nvdla_dla_data_cube src_data;
	struct nvdla_dla_data_cube dst_data;
} NVDLA_DLA_PACKED;

struct nvdla_dla_cdp_op_desc {
	uint8_t in_precision;
	uint8_t out_precision;
	int16_t lut_index;
	struct nvdla_dla_cvt_param in_cvt;
	struct nvdla_dla_cvt_param out_cvt;
	uint8_t local_size; /* 3, 5, 7 or 9 channels */
	uint8_t bypass_sqsum;
	uint8_t bypass_out_mul;
	uint8_t reserved0;
} NVDLA_DLA_PACKED;

/* ---- Rubik ---- */

struct nvdla_dla_rubik_surface_desc {
	struct nvdla_dla_data_cube src_data;
	struct nvdla_dla_data_cube dst_data;
} NVDLA_DLA_PACKED;

struct nvdla_dla_rubik_op_desc {
	uint8_t mode; /* enum nvdla_dla_rubik_mode */
	uint8_t precision;
	uint8_t stride_x; /* contract: the deconvolution strides */
	uint8_t stride_y;
} NVDLA_DLA_PACKED;

/* ---- LUT ---- */

union nvdla_dla_lut_offset {
	int8_t exp_offset; /* exponent table: log2 offset */
	int8_t frac_bits;  /* linear tables: index right shift */
	uint16_t reserved0;
};

struct nvdla_dla_float_data {
	int16_t scale;
	int8_t shifter;
	uint8_t reserved0;
} NVDLA_DLA_PACKED;

union nvdla_dla_slope {
	struct nvdla_dla_float_data data_i; /* integer pipelines */
	uint16_t data_f;		    /* fp16 pipeline: an fp16 value */
};

struct nvdla_dla_lut_param {
	int16_t linear_exp_table[NVDLA_DLA_LUT_LE_ENTRIES];
	int16_t linear_only_table[NVDLA_DLA_LUT_LO_ENTRIES];
	union nvdla_dla_lut_offset linear_exp_offset;
	union nvdla_dla_lut_offset linear_only_offset;
	uint64_t linear_exp_start;
	uint64_t linear_exp_end;
	uint64_t linear_only_start;
	uint64_t linear_only_end;
	union nvdla_dla_slope linear_exp_underflow_slope;
	union nvdla_dla_slope linear_exp_overflow_slope;
	union nvdla_dla_slope linear_only_underflow_slope;
	union nvdla_dla_slope linear_only_overflow_slope;
	uint8_t hybrid_priority; /* enum nvdla_dla_lut_priority */
	uint8_t underflow_priority;
	uint8_t overflow_priority;
	uint8_t method; /* enum nvdla_dla_lut_method */
} NVDLA_DLA_PACKED;

/* The slots of the lists. */
union nvdla_dla_surface_container {
	struct nvdla_dla_bdma_surface_desc bdma_surface;
	struct nvdla_dla_conv_surface_desc conv_surface;
	struct nvdla_dla_sdp_surface_desc sdp_surface;
	struct nvdla_dla_pdp_surface_desc pdp_surface;
	struct nvdla_dla_cdp_surface_desc cdp_surface;
	struct nvdla_dla_rubik_surface_desc rubik_surface;
};

union nvdla_dla_operation_container {
	struct nvdla_dla_bdma_op_desc bdma_op;
	struct nvdla_dla_conv_op_desc conv_op;
	struct nvdla_dla_sdp_op_desc sdp_op;
	struct nvdla_dla_pdp_op_desc pdp_op;
	struct nvdla_dla_cdp_op_desc cdp_op;
	struct nvdla_dla_rubik_op_desc rubik_op;
};

/* Sizes of the interface (gcc, checked below); the slot sizes hold for every version. */
#define NVDLA_DLA_NETWORK_DESC_SIZE 40
#define NVDLA_DLA_COMMON_OP_DESC_SIZE 36
#define NVDLA_DLA_DATA_CUBE_SIZE 32
#define NVDLA_DLA_DATA_CUBE_V10_SIZE 28
#define NVDLA_DLA_OP_SLOT_SIZE 116
#define NVDLA_DLA_SURFACE_SLOT_SIZE 644
#define NVDLA_DLA_LUT_SIZE 700

#ifdef __cplusplus
#define NVDLA_DLA_CHECK_SIZE(type, bytes) static_assert(sizeof(type) == (bytes), #type)
#else
#define NVDLA_DLA_CHECK_SIZE(type, bytes) _Static_assert(sizeof(type) == (bytes), #type)
#endif
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_network_desc, NVDLA_DLA_NETWORK_DESC_SIZE);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_consumer, 4);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_common_op_desc, NVDLA_DLA_COMMON_OP_DESC_SIZE);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_data_cube, NVDLA_DLA_DATA_CUBE_SIZE);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_data_cube_v10, NVDLA_DLA_DATA_CUBE_V10_SIZE);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_cvt_param, 8);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_bdma_transfer, 32);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_bdma_surface_desc, 644);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_bdma_op_desc, 4);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_conv_surface_desc, 172);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_conv_op_desc, 92);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_sdp_surface_desc, 160);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_sdp_op, 32);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_sdp_op_desc, 116);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_pdp_surface_desc, 64);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_pdp_op_desc, 52);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_cdp_surface_desc, 64);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_cdp_op_desc, 24);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_rubik_surface_desc, 64);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_rubik_op_desc, 4);
NVDLA_DLA_CHECK_SIZE(struct nvdla_dla_lut_param, NVDLA_DLA_LUT_SIZE);
NVDLA_DLA_CHECK_SIZE(union nvdla_dla_surface_container, NVDLA_DLA_SURFACE_SLOT_SIZE);
NVDLA_DLA_CHECK_SIZE(union nvdla_dla_operation_container, NVDLA_DLA_OP_SLOT_SIZE);

/* Whether interface @version lays data cubes out in 32 bytes (with an offset). */
static inline int nvdla_dla_version_has_cube_offset(uint32_t version)
{
	return version >= NVDLA_DLA_VERSION_CUBE_OFFSET;
}

/* Data cubes at the start of each type's surface descriptor (BDMA has none). */
static inline unsigned int nvdla_dla_surface_cubes(unsigned int op_type)
{
	static const unsigned char cubes[NVDLA_DLA_OP_COUNT] = {0, 5, 5, 2, 2, 2};

	return op_type < NVDLA_DLA_OP_COUNT ? cubes[op_type] : 0;
}

/* Bytes of a surface descriptor of @op_type in interface @version (0 for a bad type). */
static inline unsigned int nvdla_dla_surface_size(unsigned int op_type, uint32_t version)
{
	static const unsigned short sizes[NVDLA_DLA_OP_COUNT] = {644, 172, 160, 64, 64, 64};
	unsigned int shrink;

	if (op_type >= NVDLA_DLA_OP_COUNT)
		return 0;
	shrink = nvdla_dla_version_has_cube_offset(version)
		     ? 0
		     : nvdla_dla_surface_cubes(op_type) *
			   (NVDLA_DLA_DATA_CUBE_SIZE - NVDLA_DLA_DATA_CUBE_V10_SIZE);
	return sizes[op_type] - shrink;
}

#ifdef __cplusplus
}
#endif

#endif /* NVDLA_HW_DLA_INTERFACE_H */
