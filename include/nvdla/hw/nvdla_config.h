/* SPDX-License-Identifier: MIT */
/*
 * NVDLA hardware configurations: the build-time parameters of each public
 * configuration (hw/spec/defs/<name>.spec in the hardware tree) that software
 * has to know. Shared by the kernel module, the engine, the emulator and the
 * userspace libraries, so it is plain C with no dependencies.
 */
#ifndef NVDLA_HW_CONFIG_H
#define NVDLA_HW_CONFIG_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The two register maps: nv_full (nvdlav1) and the nv_small family (master). */
enum nvdla_reg_map {
	NVDLA_REG_MAP_FULL = 0,
	NVDLA_REG_MAP_SMALL = 1,
};

/* Feature bits of struct nvdla_hw_config.features. */
#define NVDLA_FEATURE_INT8		(1u << 0)
#define NVDLA_FEATURE_INT16		(1u << 1)
#define NVDLA_FEATURE_FP16		(1u << 2)
#define NVDLA_FEATURE_WINOGRAD		(1u << 3)
#define NVDLA_FEATURE_BATCH		(1u << 4)
#define NVDLA_FEATURE_WEIGHT_COMPRESSION (1u << 5)
#define NVDLA_FEATURE_SECONDARY_MEMIF	(1u << 6) /* SRAM / CVSRAM interface */
#define NVDLA_FEATURE_SDP_LUT		(1u << 7)
#define NVDLA_FEATURE_SDP_BS		(1u << 8)
#define NVDLA_FEATURE_SDP_BN		(1u << 9)
#define NVDLA_FEATURE_SDP_EW		(1u << 10)
#define NVDLA_FEATURE_BDMA		(1u << 11)
#define NVDLA_FEATURE_RUBIK		(1u << 12)
#define NVDLA_FEATURE_PDP		(1u << 13)
#define NVDLA_FEATURE_CDP		(1u << 14)

struct nvdla_hw_config {
	const char *name;
	enum nvdla_reg_map reg_map;
	uint32_t features;		/* NVDLA_FEATURE_* */
	uint32_t atom_bytes;		/* MEMORY_ATOMIC_SIZE: bytes of one feature atom */
	uint32_t mac_atomic_c;		/* MAC_ATOMIC_C_SIZE: input channels per MAC cycle */
	uint32_t mac_atomic_k;		/* MAC_ATOMIC_K_SIZE: kernels per MAC cycle, int8 */
	uint32_t max_batch;		/* MAX_BATCH_SIZE, 1 without batch support */
	uint32_t cbuf_banks;		/* CBUF_BANK_NUMBER */
	uint32_t cbuf_bank_width;	/* CBUF_BANK_WIDTH, bytes per entry */
	uint32_t cbuf_bank_depth;	/* CBUF_BANK_DEPTH, entries per bank */
	uint32_t primary_memif_width;	/* bits */
	uint32_t secondary_memif_width;	/* bits, 0 without a secondary interface */
	uint32_t address_bits;		/* MEM_ADDRESS_WIDTH */
	uint32_t sdp_bs_throughput;	/* elements per cycle */
	uint32_t sdp_bn_throughput;
	uint32_t sdp_ew_throughput;	/* 0 without EW */
	uint32_t pdp_throughput;
	uint32_t cdp_throughput;
};

/* All configurations, terminated by an entry whose name is NULL. */
extern const struct nvdla_hw_config nvdla_hw_configs[];

/* The configuration called @name, or NULL. */
const struct nvdla_hw_config *nvdla_hw_config_find(const char *name);

static inline bool nvdla_hw_has(const struct nvdla_hw_config *cfg, uint32_t feature)
{
	return (cfg->features & feature) == feature;
}

/* Bytes of the convolution buffer. */
static inline uint32_t nvdla_hw_cbuf_bytes(const struct nvdla_hw_config *cfg)
{
	return cfg->cbuf_banks * cfg->cbuf_bank_width * cfg->cbuf_bank_depth;
}

#ifdef __cplusplus
}
#endif

#endif /* NVDLA_HW_CONFIG_H */
