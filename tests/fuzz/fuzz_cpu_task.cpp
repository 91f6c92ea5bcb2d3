// libFuzzer target: an EMU1 task's descriptors and data as the runtime sees them
// (runtime::inspect_cpu_task, then runtime::run_cpu_task: the original's power and softmax and
// the CPU operations of docs/runtime.md "CPU tasks"), each address-list entry in its own heap
// buffer so that any read or write outside one is a sanitizer report.
//
// Input: byte 0 = number of address-list entries - 1 (mod 8), then one little-endian uint16
// length per entry but the last, then the entries' bytes one after the other (the last takes
// what remains; lengths beyond the input are cut).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/cpu_tasks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const size_t entries = size_t(data[0] % 8) + 1;
    size_t at = 1;
    std::vector<size_t> lengths;
    for (size_t i = 0; i + 1 < entries; ++i) {
        size_t n = 0;
        if (at + 2 <= size) {
            n = size_t(data[at]) | size_t(data[at + 1]) << 8;
            at += 2;
        }
        lengths.push_back(n);
    }
    std::vector<std::vector<std::byte>> memory;
    for (size_t i = 0; i < entries; ++i) {
        const size_t left = size - at;
        const size_t n = i + 1 < entries ? std::min(lengths[i], left) : left;
        memory.emplace_back(n);
        if (n) std::memcpy(memory.back().data(), data + at, n);
        at += n;
    }
    std::vector<nvdla::runtime::CpuTaskAddress> addresses;
    for (auto& m : memory) addresses.push_back({m.data(), m.size(), m.size()});

    auto info = nvdla::runtime::inspect_cpu_task(addresses);
    if (!info && info.message().empty()) std::abort();  // every failure is a sentence
    nvdla::Status s = nvdla::runtime::run_cpu_task(addresses);
    if (!s && s.message().empty()) std::abort();
    return 0;
}
