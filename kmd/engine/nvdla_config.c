// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Parameters of the public NVDLA configurations, from the hardware tree's
 * spec/defs/<name>.spec (nvdlav1 branch for nv_full, master for the others).
 */
#include <nvdla/hw/nvdla_config.h>

#ifdef __KERNEL__
#include <linux/string.h>
#else
#include <stddef.h>
#include <string.h>
#endif

#define SDP_CORE (NVDLA_FEATURE_SDP_BS | NVDLA_FEATURE_SDP_BN | NVDLA_FEATURE_PDP | \
		  NVDLA_FEATURE_CDP)
#define LARGE_SDP (NVDLA_FEATURE_SECONDARY_MEMIF | NVDLA_FEATURE_SDP_LUT | NVDLA_FEATURE_SDP_EW)

const struct nvdla_hw_config nvdla_hw_configs[] = {
	{
		.name = "nv_full",
		.reg_map = NVDLA_REG_MAP_FULL,
		.features = NVDLA_FEATURE_INT8 | NVDLA_FEATURE_INT16 | NVDLA_FEATURE_FP16 |
			    NVDLA_FEATURE_WINOGRAD | NVDLA_FEATURE_BATCH |
			    NVDLA_FEATURE_WEIGHT_COMPRESSION | NVDLA_FEATURE_BDMA |
			    NVDLA_FEATURE_RUBIK | SDP_CORE | LARGE_SDP,
		.atom_bytes = 32, .mac_atomic_c = 64, .mac_atomic_k = 32, .max_batch = 32,
		.cbuf_banks = 16, .cbuf_bank_width = 64, .cbuf_bank_depth = 512,
		.primary_memif_width = 512, .secondary_memif_width = 512, .address_bits = 64,
		.sdp_bs_throughput = 16, .sdp_bn_throughput = 16, .sdp_ew_throughput = 4,
		.pdp_throughput = 8, .cdp_throughput = 8,
	},
	{
		.name = "nv_small",
		.reg_map = NVDLA_REG_MAP_SMALL,
		.features = NVDLA_FEATURE_INT8 | SDP_CORE,
		.atom_bytes = 8, .mac_atomic_c = 8, .mac_atomic_k = 8, .max_batch = 1,
		.cbuf_banks = 32, .cbuf_bank_width = 8, .cbuf_bank_depth = 512,
		.primary_memif_width = 64, .secondary_memif_width = 0, .address_bits = 32,
		.sdp_bs_throughput = 1, .sdp_bn_throughput = 1, .sdp_ew_throughput = 0,
		.pdp_throughput = 1, .cdp_throughput = 1,
	},
	{
		.name = "nv_small_256",
		.reg_map = NVDLA_REG_MAP_SMALL,
		.features = NVDLA_FEATURE_INT8 | SDP_CORE,
		.atom_bytes = 8, .mac_atomic_c = 32, .mac_atomic_k = 8, .max_batch = 1,
		.cbuf_banks = 32, .cbuf_bank_width = 32, .cbuf_bank_depth = 128,
		.primary_memif_width = 64, .secondary_memif_width = 0, .address_bits = 32,
		.sdp_bs_throughput = 1, .sdp_bn_throughput = 1, .sdp_ew_throughput = 0,
		.pdp_throughput = 1, .cdp_throughput = 1,
	},
	{
		.name = "nv_small_256_full",
		.reg_map = NVDLA_REG_MAP_SMALL,
		.features = NVDLA_FEATURE_INT8 | SDP_CORE | LARGE_SDP,
		.atom_bytes = 8, .mac_atomic_c = 32, .mac_atomic_k = 8, .max_batch = 1,
		.cbuf_banks = 32, .cbuf_bank_width = 32, .cbuf_bank_depth = 128,
		.primary_memif_width = 64, .secondary_memif_width = 64, .address_bits = 32,
		.sdp_bs_throughput = 2, .sdp_bn_throughput = 2, .sdp_ew_throughput = 1,
		.pdp_throughput = 1, .cdp_throughput = 1,
	},
	{
		.name = "nv_medium_512",
		.reg_map = NVDLA_REG_MAP_SMALL,
		.features = NVDLA_FEATURE_INT8 | SDP_CORE,
		.atom_bytes = 16, .mac_atomic_c = 32, .mac_atomic_k = 16, .max_batch = 1,
		.cbuf_banks = 32, .cbuf_bank_width = 32, .cbuf_bank_depth = 512,
		.primary_memif_width = 128, .secondary_memif_width = 0, .address_bits = 64,
		.sdp_bs_throughput = 4, .sdp_bn_throughput = 4, .sdp_ew_throughput = 0,
		.pdp_throughput = 2, .cdp_throughput = 2,
	},
	{
		.name = "nv_medium_1024_full",
		.reg_map = NVDLA_REG_MAP_SMALL,
		.features = NVDLA_FEATURE_INT8 | SDP_CORE | LARGE_SDP,
		.atom_bytes = 32, .mac_atomic_c = 32, .mac_atomic_k = 32, .max_batch = 1,
		.cbuf_banks = 32, .cbuf_bank_width = 32, .cbuf_bank_depth = 512,
		.primary_memif_width = 256, .secondary_memif_width = 256, .address_bits = 64,
		.sdp_bs_throughput = 8, .sdp_bn_throughput = 8, .sdp_ew_throughput = 2,
		.pdp_throughput = 4, .cdp_throughput = 4,
	},
	{
		.name = "nv_large",
		.reg_map = NVDLA_REG_MAP_SMALL,
		.features = NVDLA_FEATURE_INT8 | SDP_CORE | LARGE_SDP,
		.atom_bytes = 32, .mac_atomic_c = 64, .mac_atomic_k = 32, .max_batch = 1,
		.cbuf_banks = 16, .cbuf_bank_width = 64, .cbuf_bank_depth = 512,
		.primary_memif_width = 256, .secondary_memif_width = 256, .address_bits = 64,
		.sdp_bs_throughput = 16, .sdp_bn_throughput = 16, .sdp_ew_throughput = 4,
		.pdp_throughput = 8, .cdp_throughput = 8,
	},
	{ .name = NULL },
};

const struct nvdla_hw_config *nvdla_hw_config_find(const char *name)
{
	const struct nvdla_hw_config *cfg;

	if (!name)
		return NULL;
	for (cfg = nvdla_hw_configs; cfg->name; cfg++)
		if (!strcmp(cfg->name, name))
			return cfg;
	return NULL;
}
