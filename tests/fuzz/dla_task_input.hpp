// The input format of the validator fuzzer (fuzz_dla_validate.cpp): one DLA task as the
// kernel sees it, an address list of entries with their bytes.
//
//   u8  configuration (index into hw_configs(), modulo their number)
//   u8  interface minor version, u8 sub-minor (major is 0): 0.<minor>.<sub>
//   u8  number of address-list entries (1 + value % 64)
//   per entry, two u32 little-endian:
//       bits 0..23 the entry's size in bytes, bits 24..30 its address offset in 32-byte
//       steps, bit 31 secondary memory (CV-SRAM);
//       how many of its first bytes the input stores (at most the size)
//   then the stored bytes of each entry, one entry after the other. Bytes an entry does not
//   store (or that the input lacks) read as zeros; nothing is allocated for them, so a
//   16 MiB entry costs only what the input stores.
//
// Entry i lives at device address 0x40000000 + i * 16 MiB + offset: entries never overlap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace nvdla::fuzz {

struct DlaTaskEntry {
    uint32_t size = 0;
    uint32_t offset_steps = 0;  // 0..127, in 32-byte steps
    bool secondary = false;
    std::vector<std::byte> bytes;  // the entry's first bytes (at most size); zeros after
};

struct DlaTaskInput {
    uint8_t config = 0;
    uint8_t minor = 12, sub = 5;
    std::vector<DlaTaskEntry> entries;
};

inline constexpr uint32_t kMaxEntrySize = (1u << 24) - 1;
inline constexpr uint64_t kEntryBase = 0x40000000ull;
inline constexpr uint64_t kEntrySpacing = 16ull << 20;

inline uint32_t load_le32(const uint8_t* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

inline bool parse_dla_task_input(std::span<const uint8_t> in, DlaTaskInput* out) {
    if (in.size() < 4) return false;
    out->config = in[0];
    out->minor = in[1];
    out->sub = in[2];
    const size_t n = 1 + in[3] % 64;
    size_t pos = 4;
    if (in.size() < pos + 8 * n) return false;
    out->entries.assign(n, {});
    std::vector<uint32_t> stored(n);
    for (size_t i = 0; i < n; ++i, pos += 8) {
        const uint32_t word = load_le32(in.data() + pos);
        out->entries[i].size = word & kMaxEntrySize;
        out->entries[i].offset_steps = (word >> 24) & 0x7f;
        out->entries[i].secondary = (word >> 31) != 0;
        stored[i] = std::min(load_le32(in.data() + pos + 4), out->entries[i].size);
    }
    for (size_t i = 0; i < n; ++i) {
        const size_t take = std::min<size_t>(stored[i], in.size() - pos);
        const auto* first = reinterpret_cast<const std::byte*>(in.data() + pos);
        out->entries[i].bytes.assign(first, first + take);
        pos += take;
    }
    return true;
}

inline void put_le32(std::vector<uint8_t>& out, uint32_t v) {
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<uint8_t>(v >> (8 * b)));
}

inline std::vector<uint8_t> encode_dla_task_input(const DlaTaskInput& task) {
    std::vector<uint8_t> out = {task.config, task.minor, task.sub,
                                static_cast<uint8_t>(task.entries.size() - 1)};
    for (const DlaTaskEntry& e : task.entries) {
        put_le32(out, (e.size & kMaxEntrySize) | (e.offset_steps & 0x7f) << 24 |
                          (e.secondary ? 1u << 31 : 0));
        put_le32(out, static_cast<uint32_t>(std::min<size_t>(e.bytes.size(), e.size)));
    }
    for (const DlaTaskEntry& e : task.entries) {
        const auto* p = reinterpret_cast<const uint8_t*>(e.bytes.data());
        out.insert(out.end(), p, p + std::min<size_t>(e.bytes.size(), e.size));
    }
    return out;
}

}  // namespace nvdla::fuzz
