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
