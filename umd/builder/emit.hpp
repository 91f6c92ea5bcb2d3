// Emission of a lowered plan as loadable bytes (private).
#pragma once

#include <cstddef>
#include <vector>

#include "builder/plan.hpp"
#include "nvdla/hw_config.hpp"

namespace nvdla::builder::detail {

// Plans the activation memory (pool_bytes: its size) and writes the loadable.
Result<std::vector<std::byte>> emit_loadable(Plan& plan, const HwConfig& cfg, Precision precision,
                                             uint64_t& pool_bytes);

}  // namespace nvdla::builder::detail
