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

std::vector<nvdla_dla_buffer> dla_buffers(const Task& task) {
    std::vector<nvdla_dla_buffer> buffers(task.addresses.size());
    for (size_t i = 0; i < task.addresses.size(); ++i) {
        const Address& a = task.addresses[i];
        buffers[i].address = a.buffer->device_address() + a.offset;
        buffers[i].size = a.buffer->size() - a.offset;
        buffers[i].flags =
            a.buffer->domain() == MemoryDomain::Sram ? NVDLA_DLA_BUFFER_SECONDARY : 0;
    }
    return buffers;
}

namespace {

// Reads of one entry at most this far past the previous one extend its range.
constexpr uint64_t kReadGapBytes = 4096;

struct Reader {
    const Task& task;
    DlaReads* reads;

    void record(uint32_t index, uint64_t offset, const void* data, uint32_t size) {
        std::vector<DlaReads::Range>& ranges = reads->ranges;
        const std::byte* host = task.addresses[index].buffer->data() + task.addresses[index].offset;
        if (!ranges.empty() && ranges.back().index == index) {
            DlaReads::Range& last = ranges.back();
            const uint64_t end = last.offset + last.size;
            if (offset >= end && offset - end <= kReadGapBytes) {
                reads->bytes.insert(reads->bytes.end(), host + end, host + offset);
                const auto* bytes = static_cast<const std::byte*>(data);
                reads->bytes.insert(reads->bytes.end(), bytes, bytes + size);
                last.size = offset + size - last.offset;
                return;
            }
        }
        ranges.push_back({index, offset, size});
        const auto* bytes = static_cast<const std::byte*>(data);
        reads->bytes.insert(reads->bytes.end(), bytes, bytes + size);
    }
};

}  // namespace

DlaValidation validate_task(const HwConfig& cfg, const Task& task, DlaReads* reads) {
    std::vector<nvdla_dla_buffer> buffers = dla_buffers(task);
    Reader reader{task, reads};
    nvdla_dla_task_source source{};
    source.version = task.dla_version;
    source.num_addresses = static_cast<uint32_t>(buffers.size());
    source.addresses = buffers.data();
    source.priv = &reader;
    source.read = [](void* priv, uint32_t index, uint64_t offset, void* dst, uint32_t size) -> int {
        Reader& r = *static_cast<Reader*>(priv);
        if (index >= r.task.addresses.size()) return -EINVAL;
        const Address& a = r.task.addresses[index];
        const std::byte* host = a.buffer->data();
        if (!host) return -EFAULT;
        std::memcpy(dst, host + a.offset + offset, size);
        if (r.reads) r.record(index, offset, dst, size);
        return 0;
    };
    DlaValidation v = run_dla_validator(cfg, source);
    v.buffers = std::move(buffers);
    return v;
}

bool same_bytes(const Task& task, const DlaReads& reads) {
    const std::byte* recorded = reads.bytes.data();
    for (const DlaReads::Range& r : reads.ranges) {
        if (r.index >= task.addresses.size()) return false;
        const Address& a = task.addresses[r.index];
        const std::byte* host = a.buffer->data();
        if (!host || a.offset > a.buffer->size() || r.offset > a.buffer->size() - a.offset ||
            r.size > a.buffer->size() - a.offset - r.offset)
            return false;
        if (std::memcmp(host + a.offset + r.offset, recorded, r.size) != 0) return false;
        recorded += r.size;
    }
    return true;
}

}  // namespace nvdla::runtime
