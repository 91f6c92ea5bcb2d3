// CPU tasks (loadable interface EMU1): the operations the original compiler leaves to the CPU
// (softmax and power), and this project's CPU operations (CPU tasks: the builder's cpu_op), run by
// the runtime between DLA tasks.
//
// A CPU task's address list holds, at entry 0, its network descriptor (operation list index,
// buffer-descriptor list index, operation count); the operation list holds one slot per
// operation and the buffer list one {source, destination} pair of 256-byte descriptors. Two
// layouts exist, both with blob version 0.0.1:
//   - Original (as the shipped NN_L0_0 network has it): a 1-byte common descriptor, no
//     addressIndexOffset in buffer descriptors, formats INT8 0 / INT16 1 / FF16 2; 16-byte
//     operation slots.
//   - Current (nvdla/sw from April 2019): a 12-byte common descriptor with input and output
//     scale factors, addressIndexOffset, formats INT8 0 / INT8_8 1 / INT16 2 / FF16 3 /
//     UINT8 4 / UINT16 5; 24-byte operation slots.
// The layout is told apart by the operation list's size per operation (16 or 24 bytes).
//
// Every address, offset and element is checked against the memory behind it before anything is
// read or written; a malformed descriptor is an error naming the operation and field.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nvdla/builder.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla::runtime {

enum class CpuTaskLayout : uint8_t { Original, Current };

// One address-list entry of a CPU task as the CPU sees it.
struct CpuTaskAddress {
    std::byte* data = nullptr;  // nullptr: not reachable by the CPU (SRAM)
    uint64_t size = 0;          // bytes from data to the end of the buffer
    uint64_t declared = 0;      // the loadable's size for the entry (0 if none)
};

struct CpuTaskOperationTime {
    std::string name;  // "power", "softmax"
    std::chrono::nanoseconds duration{0};
};

// What the task's descriptors say before anything runs: the layout, each operation's type and
// the scale factors of the buffers it reads and writes (for tensor quantization queries).
struct CpuTaskOperationInfo {
    uint8_t type = 0;  // 0 power, 1 softmax, kCpuOpTypeBase + CpuOpKind
    int16_t source_address = -1, destination_address = -1;
    float input_scale = 1.0f, output_scale = 1.0f;
    bool int8 = false;
};
struct CpuTaskInfo {
    CpuTaskLayout layout = CpuTaskLayout::Current;
    std::vector<CpuTaskOperationInfo> operations;
};

// ---- CPU tasks (the extended encoding; docs/runtime.md "CPU tasks") ----
// Operation type of a CPU operation: kCpuOpTypeBase + builder::CpuOpKind.
inline constexpr uint8_t kCpuOpTypeBase = 16;
inline constexpr uint8_t kCpuOpKindCount = static_cast<uint8_t>(builder::CpuOpKind::Mish) + 1;
// Operation 0 of a task holding CPU operations is a marker: a power operation with an FF16 source
// and a destination of format kCpuTaskMarkerFormat carrying kCpuTaskMagic at byte 32. The
// original runtime stops the task there (source and destination formats differ); this one skips
// it. The task's descriptor blobs carry version kCpuTaskVersion (0.1.0; the original's are 0.0.1).
inline constexpr uint16_t kCpuTaskMarkerFormat = 0xffff;
inline constexpr char kCpuTaskMagic[8] = {'C', 'P', 'U', '-', 'T', 'A', 'S', 'K'};
inline constexpr uint8_t kCpuTaskVersion[3] = {0, 1, 0};

// "exp", "softmax", "reduce mean", ... as reports and messages name a CPU operation.
const char* cpu_op_name(builder::CpuOpKind kind);

// The output dims of a CPU operation for its input dims and parameters (ints; float_count
// floats; Reshape: reshape_dims), or the sentence saying what does not fit (without a prefix).
// Shared by the builder's checks and the runtime's descriptor checks.
Result<Dims4> cpu_op_output_dims(builder::CpuOpKind kind, std::span<const Dims4> inputs,
                                 std::span<const int64_t> ints, size_t float_count,
                                 Dims4 reshape_dims);

// Decodes a CPU task's descriptors (no execution).
Result<CpuTaskInfo> inspect_cpu_task(std::span<const CpuTaskAddress> addresses);

// Runs every operation of a CPU task in order; `times` (optional) gets one entry per operation,
// `written` (optional) one per address-list entry: whether an operation wrote into it (set when
// the task fails part way too).
Status run_cpu_task(std::span<const CpuTaskAddress> addresses,
                    std::vector<CpuTaskOperationTime>* times = nullptr,
                    std::vector<bool>* written = nullptr);

}  // namespace nvdla::runtime
