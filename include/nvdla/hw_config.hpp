// C++ access to the hardware configurations of include/nvdla/hw/nvdla_config.h.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "nvdla/api.hpp"
#include "nvdla/hw/nvdla_config.h"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla {

using HwConfig = nvdla_hw_config;

// Every known configuration, nv_full first.
NVDLA_API std::span<const HwConfig> hw_configs();

// The configuration called name, or an error listing the known names.
NVDLA_API Result<const HwConfig*> find_hw_config(std::string_view name);

// Whether cfg's datapath supports precision p (the nv_small family is int8 only).
NVDLA_API bool supports(const HwConfig& cfg, Precision p);

// Feature-data elements in one atom: atom bytes / element bytes.
constexpr uint32_t elements_per_atom(const HwConfig& cfg, Precision p) {
    return cfg.atom_bytes / bytes_per_element(p);
}

}  // namespace nvdla

namespace nvdla {

// The convolution buffer as CDMA and CSC count it. nv_full (nvdlav1) stores 4 atoms of 32
// bytes per entry, 256 entries per bank (cmod cdma/NV_NVDLA_cdma.h CBUF_ENTRY_SIZE,
// CBUF_ENTRY_PER_BANK); the nv_small family (nvdla/hw master) has entries of CBUF_BANK_WIDTH
// bytes, CBUF_BANK_DEPTH per bank (cmod NVDLA_CBUF_BANK_WIDTH/DEPTH, spec/defs/<name>.spec).
struct CbufGeometry {
    uint32_t entry_bytes;
    uint32_t entries_per_bank;
};

constexpr CbufGeometry cbuf_geometry(const HwConfig& cfg) {
    if (cfg.reg_map == NVDLA_REG_MAP_FULL) return {128, 256};
    return {cfg.cbuf_bank_width, cfg.cbuf_bank_depth};
}

// D_ENTRY_PER_SLICE + 1 of a direct convolution: buffer entries of one input line of `width`
// elements of `channels` channels of `element_bytes` bytes. Whole entries hold the line's
// atoms of every full group; the last partial group shares entries between neighbouring
// elements (cmod csc/NV_NVDLA_csc.cpp SendDataToMacSequencerDirectConvCommon).
constexpr uint32_t cbuf_entries_per_slice(const HwConfig& cfg, uint32_t channels,
                                          uint32_t element_bytes, uint32_t width) {
    const uint32_t atoms_per_entry = cbuf_geometry(cfg).entry_bytes / cfg.atom_bytes;
    const uint32_t atoms = (channels * element_bytes + cfg.atom_bytes - 1) / cfg.atom_bytes;
    const uint32_t rest = atoms % atoms_per_entry;
    uint32_t entries = atoms / atoms_per_entry * width;
    if (rest == 0) return entries;
    if (rest * 2 > atoms_per_entry) return entries + width;
    if (rest * 4 > atoms_per_entry) return entries + (width + 1) / 2;
    return entries + (width + 3) / 4;
}

}  // namespace nvdla
