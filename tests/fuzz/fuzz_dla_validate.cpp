// libFuzzer target: the DLA task validator (nvdla_dla_task_validate, include/nvdla/hw/
// dla_engine.h), the code the kernel runs on every submitted job before the hardware sees it.
// Input: dla_task_input.hpp. The validator must accept or reject every input without reading
// outside the entries it is given; when it accepts, the checked task must say what it read.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dla_task_input.hpp"
#include "nvdla/hw/dla_engine.h"
#include "nvdla/hw_config.hpp"

namespace {

using nvdla::fuzz::DlaTaskInput;

[[noreturn]] void fail(const char* message) {
    std::fprintf(stderr, "fuzz_dla_validate: %s\n", message);
    std::abort();
}

// The validator promises to read only inside [0, size) of an entry; bytes the input does not
// store are zeros.
int read_entry(void* priv, uint32_t index, uint64_t offset, void* dst, uint32_t size) {
    const auto* task = static_cast<const DlaTaskInput*>(priv);
    if (index >= task->entries.size()) fail("read of an entry that does not exist");
    const auto& e = task->entries[index];
    if (offset > e.size || size > e.size - offset) fail("read outside an entry");
    auto* out = static_cast<std::byte*>(dst);
    for (uint32_t i = 0; i < size; ++i) {
        const uint64_t at = offset + i;
        out[i] = at < e.bytes.size() ? e.bytes[at] : std::byte{0};
    }
    return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    DlaTaskInput task;
    if (!nvdla::fuzz::parse_dla_task_input({data, size}, &task)) return 0;
    const auto configs = nvdla::hw_configs();
    const nvdla::HwConfig& cfg = configs[task.config % configs.size()];

    std::vector<nvdla_dla_buffer> buffers(task.entries.size());
    for (size_t i = 0; i < task.entries.size(); ++i) {
        const auto& e = task.entries[i];
        buffers[i].address =
            nvdla::fuzz::kEntryBase + i * nvdla::fuzz::kEntrySpacing + e.offset_steps * 32ull;
        buffers[i].size = e.size;
        buffers[i].flags = e.secondary ? NVDLA_DLA_BUFFER_SECONDARY : 0;
    }
    nvdla_dla_task_source src{};
    src.version = NVDLA_DLA_VERSION(0, task.minor, task.sub);
    src.num_addresses = static_cast<uint32_t>(buffers.size());
    src.addresses = buffers.data();
    src.read = read_entry;
    src.priv = &task;

    nvdla_dla_error err{};
    size_t bytes = 0;
    if (nvdla_dla_task_measure(&src, &bytes, &err) != 0) {
        if (err.message[0] == '\0') fail("measure failed without a sentence");
        return 0;
    }
    // The checked copy is bounded by the task's limits (operations, LUTs, addresses).
    if (bytes > (64u << 20)) fail("measure asks for more than 64 MiB");
    std::vector<uint64_t> storage((bytes + 7) / 8 + 1);
    nvdla_dla_task* checked = nullptr;
    const int ret = nvdla_dla_task_validate(&cfg, &src, storage.data(), bytes, &checked, &err);
    if (ret != 0) {
        if (checked != nullptr) fail("a rejected task was returned");
        if (err.message[0] == '\0') fail("validation failed without a sentence");
        return 0;
    }
    if (checked == nullptr) fail("an accepted task is NULL");
    if (nvdla_dla_task_version(checked) != src.version) fail("the task's version changed");
    if (nvdla_dla_task_num_operations(checked) > NVDLA_DLA_MAX_OPERATIONS)
        fail("more operations than the limit");
    return 0;
}
