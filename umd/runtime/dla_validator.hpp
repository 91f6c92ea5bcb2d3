// Internal: the one adapter between a DLA task and the engine's validator
// (include/nvdla/hw/dla_engine.h, kmd/engine/dla_validate.c, the code the kernel runs). The emu
// backend runs it before starting a task, the drm backend to explain a rejection, and the
// dla_validate fuzz target on raw inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend.hpp"
#include "nvdla/hw/dla_engine.h"
#include "nvdla/hw_config.hpp"

namespace nvdla::runtime {

// The validator's verdict. Accepted (result 0): `task` points into `storage`, the checked copy
// the engine runs. Rejected: `error` names the rule the task breaks.
struct DlaValidation {
    int result = 0;                         // 0, or the negative errno of measure or validate
    nvdla_dla_error error{};                // when rejected
    size_t bytes = 0;                       // what measure asked for
    std::vector<uint64_t> storage;          // 8-byte aligned, at least `bytes`
    nvdla_dla_task* task = nullptr;         // what validate set (NULL when rejected)
    std::vector<nvdla_dla_buffer> buffers;  // validate_task(): the address list it checked

    bool accepted() const { return result == 0; }
};

// Measures `source`, allocates the checked copy (of exactly the bytes measured) and validates the
// task into it for `cfg`.
DlaValidation run_dla_validator(const HwConfig& cfg, const nvdla_dla_task_source& source);

// The bytes of a task's buffers that the validator read, as ranges of address-list entries
// (offsets from the entry) and their contents when read. Reads of one entry that follow each
// other closely share a range (with the bytes between them, which the validator did not need).
// The validator's verdict depends on nothing else than these bytes, the address list, the
// interface version and the configuration.
struct DlaReads {
    struct Range {
        uint32_t index;
        uint64_t offset, size;
    };
    std::vector<Range> ranges;
    std::vector<std::byte> bytes;  // the ranges' contents, one after the other
};

// The address list the validator sees for a task (validate_task() describes it).
std::vector<nvdla_dla_buffer> dla_buffers(const Task& task);

// run_dla_validator() on a runtime task: entry i is [its buffer's device address + offset, the
// buffer's end), SRAM buffers on the secondary port, descriptors read through the buffers' CPU
// mappings. The caller has checked that every entry names a buffer and lies inside it. With
// `reads`, what the validator read is recorded there.
DlaValidation validate_task(const HwConfig& cfg, const Task& task, DlaReads* reads = nullptr);

// Whether the task's buffers hold the bytes `reads` recorded (false if one is not mapped).
bool same_bytes(const Task& task, const DlaReads& reads);

}  // namespace nvdla::runtime
