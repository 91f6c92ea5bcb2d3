// What lowering produces and emission turns into a loadable (private): buffers, placed
// tensors, hardware operations in fused groups, DLA and CPU tasks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nvdla/builder.hpp"
#include "nvdla/hw/dla_interface.h"

namespace nvdla::builder::detail {

// Where bytes live. Kind Const is the one SET memory of weights and operands; Pool buffers are
// activations placed by the memory planner; Input/Output are the bound tensors.
enum class BufferKind : uint8_t { Const, Pool, Input, Output };

struct Buffer {
    BufferKind kind = BufferKind::Pool;
    uint32_t bind = 0;  // Input/Output: the bind index
    uint64_t size = 0;  // bytes
    // Pool: the first and last steps (in execution order) whose operations touch it, found by
    // the memory planner.
    uint32_t first_use = UINT32_MAX, last_use = 0;
    uint64_t pool_offset = 0;  // assigned by the planner
    std::string what;          // for messages
};

// A tensor in memory: a feature cube (or image) at an offset of a buffer.
struct Place {
    uint32_t buffer = UINT32_MAX;
    uint64_t offset = 0;
    uint32_t line = 0, surface = 0;
    Dims4 dims;
    bool valid() const { return buffer != UINT32_MAX; }
};

// One hardware operation. Data cubes hold a buffer id in `address` and the byte offset inside
// that buffer in `offset` until emission resolves them (HW cubes keep type HW).
struct HwOp {
    uint8_t type = NVDLA_DLA_OP_CONV;
    nvdla_dla_operation_container op{};
    nvdla_dla_surface_container surf{};
    int lut = -1;  // index into Plan::luts
};

// Operations that run as one: a convolution with its SDP (and PDP), an SDP with its PDP, or
// one operation. Each group starts after the previous one completed.
struct Group {
    std::vector<HwOp> ops;
    std::string note;  // what the group computes, for CompiledNetwork::operations
};

struct OriginalSoftmax {
    Place src, dst;
    Precision precision = Precision::Fp16;
    float input_scale = 1, output_scale = 1;
};

// A CPU operation in the extended encoding (umd/builder/cpu_lower.cpp, docs/runtime.md).
struct CpuStep {
    CpuOpKind kind = CpuOpKind::Exp;
    std::vector<Place> inputs;  // 1 or 2
    Place output;
    std::vector<float> input_scales;  // int8: per input
    float output_scale = 1;
    std::vector<int64_t> ints;
    std::vector<float> floats;
};

struct Step {
    bool cpu_task = false;
    Group group;                 // hardware; the note for every step
    OriginalSoftmax soft;        // cpu_task without cpu: the original's softmax
    std::optional<CpuStep> cpu;  // cpu_task: a CPU operation only this runtime runs
};

struct Plan {
    std::vector<Buffer> buffers;    // buffers[0] is the Const buffer
    std::vector<std::byte> consts;  // contents of the Const buffer
    std::vector<Step> steps;        // in execution order
    std::vector<nvdla_dla_lut_param> luts;
    std::vector<TensorDesc> inputs, outputs;
    // Multiply-accumulates of the convolution core's operations and of the network's own
    // convolution layers (CompiledNetwork::hardware_macs, model_macs).
    uint64_t hardware_macs = 0, model_macs = 0;

    uint32_t add_buffer(BufferKind kind, uint64_t size, const std::string& what, uint32_t bind = 0);
    // Appends bytes to the Const buffer at a 256-byte boundary; returns their offset.
    uint64_t add_const(std::span<const std::byte> bytes);
};

inline constexpr uint32_t kConstBuffer = 0;

// A cube of the descriptors naming place p (type MC).
nvdla_dla_data_cube cube_of(const Place& p, uint64_t size);
nvdla_dla_data_cube hw_cube(Dims4 d);
nvdla_dla_data_cube no_cube();

}  // namespace nvdla::builder::detail
