// Emission of a lowered plan as loadable bytes (private).
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "builder/plan.hpp"
#include "nvdla/hw_config.hpp"

namespace nvdla::builder::detail {

// Plans the activation memory (pool_bytes: its size) and writes the loadable.
Result<std::vector<std::byte>> emit_loadable(Plan& plan, const HwConfig& cfg, Precision precision,
                                             uint64_t& pool_bytes);

// The descriptors of a CPU task holding one CPU operation (cpu_emit.cpp): the network
// descriptor, the operation list (the marker, then the operation), the buffer-descriptor list
// and the parameter block (empty when there are no parameters). `where` gives, for each input
// and then the output, its address-list index and byte offset; the parameter block is at
// address-list index `parameters`.
struct CpuTaskBlobs {
    std::vector<std::byte> network, operations, buffers, parameters;
};
CpuTaskBlobs encode_cpu_task(const CpuStep& step, const HwConfig& cfg, Precision precision,
                             std::span<const std::pair<int16_t, uint32_t>> where,
                             int16_t parameters);

}  // namespace nvdla::builder::detail
