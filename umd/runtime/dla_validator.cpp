#include "dla_validator.hpp"

#include <cerrno>
#include <cstring>

namespace nvdla::runtime {

DlaValidation run_dla_validator(const HwConfig& cfg, const nvdla_dla_task_source& source) {
    DlaValidation v;
    v.result = nvdla_dla_task_measure(&source, &v.bytes, &v.error);
    if (v.result != 0) return v;
    v.storage.assign((v.bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
    v.result = nvdla_dla_task_validate(&cfg, &source, v.storage.data(), v.bytes, &v.task, &v.error);
    return v;
}

DlaValidation validate_task(const HwConfig& cfg, const Task& task) {
    std::vector<nvdla_dla_buffer> buffers(task.addresses.size());
    for (size_t i = 0; i < task.addresses.size(); ++i) {
        const Address& a = task.addresses[i];
        buffers[i].address = a.buffer->device_address() + a.offset;
        buffers[i].size = a.buffer->size() - a.offset;
        buffers[i].flags =
            a.buffer->domain() == MemoryDomain::Sram ? NVDLA_DLA_BUFFER_SECONDARY : 0;
    }
    nvdla_dla_task_source source{};
    source.version = task.dla_version;
    source.num_addresses = static_cast<uint32_t>(buffers.size());
    source.addresses = buffers.data();
    source.priv = const_cast<Task*>(&task);
    source.read = [](void* priv, uint32_t index, uint64_t offset, void* dst, uint32_t size) -> int {
        const Task& t = *static_cast<const Task*>(priv);
        if (index >= t.addresses.size()) return -EINVAL;
        const Address& a = t.addresses[index];
        const std::byte* host = a.buffer->data();
        if (!host) return -EFAULT;
        std::memcpy(dst, host + a.offset + offset, size);
        return 0;
    };
    DlaValidation v = run_dla_validator(cfg, source);
    v.buffers = std::move(buffers);
    return v;
}

}  // namespace nvdla::runtime
