// Layer 1 of the runtime: the loadable, verified and checked, as plain C++ values.
//
// parse_loadable() runs the FlatBuffers verifier over the bytes (nothing is read before it
// passed), then checks every cross-reference the runtime will follow: ids equal positions, list
// indices in range, SET contents that fit their memory, dense bind ids, relocations inside the
// memory they patch. What it returns owns copies of everything it needs (the caller's bytes
// can go away) and can be used without further checks. Errors are sentences that name the list,
// the entry and the field ("loadable: memory_list entry 3: alignment 48 is not a power of two").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nvdla/status.hpp"

namespace nvdla::runtime {

// Who runs a task or consumes a blob (the loadable's Interface enumeration).
enum class TaskInterface : uint32_t { None = 0, Dla1 = 1, Emu1 = 2 };

// Sub-interfaces of DLA1 and EMU1 blobs and relocations.
inline constexpr uint32_t kSubInterfaceAddressList0 = 1;  // the network descriptor
inline constexpr uint32_t kSubInterfaceDependencies = 2;
inline constexpr uint32_t kSubInterfaceOperations = 3;
inline constexpr uint32_t kSubInterfaceSurfaces = 4;
inline constexpr uint32_t kSubInterfaceLuts = 5;

struct BlobVersion {
    uint8_t major = 0, minor = 0, sub_minor = 0;
    bool empty() const { return major == 0 && minor == 0 && sub_minor == 0; }
    friend bool operator==(const BlobVersion&, const BlobVersion&) = default;
};
std::string to_string(const BlobVersion& v);

struct LoadableBlob {
    std::string name;
    TaskInterface interface = TaskInterface::None;
    uint32_t sub_interface = 0;
    BlobVersion version;
    std::vector<std::byte> data;
};

// Memory-list flags (a bit set).
inline constexpr uint16_t kMemoryAlloc = 1;
inline constexpr uint16_t kMemorySet = 2;
inline constexpr uint16_t kMemoryInput = 4;
inline constexpr uint16_t kMemoryOutput = 8;

enum class LoadableDomain : uint8_t { System = 0, Sram = 1 };

struct MemoryContent {
    uint32_t blob = 0;    // index into Loadable::blobs
    uint64_t offset = 0;  // where in the memory it goes
};

struct MemoryEntry {
    LoadableDomain domain = LoadableDomain::System;
    uint16_t flags = 0;
    uint64_t size = 0;
    uint32_t alignment = 0;               // 0 or a power of two
    std::vector<MemoryContent> contents;  // SET only
    uint16_t bind_id = 0;                 // INPUT/OUTPUT only
    uint16_t tensor_desc_id = 0;          // INPUT/OUTPUT only

    bool bindable() const { return (flags & (kMemoryInput | kMemoryOutput)) != 0; }
    bool input() const { return (flags & kMemoryInput) != 0; }
};

struct AddressEntry {
    uint16_t mem_id = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
};

struct EventEntry {
    uint8_t type = 0;
    uint16_t target = 0;
    uint32_t value = 0;
    uint8_t op = 0;  // 0 wait, 1 signal
};

struct TaskEntry {
    TaskInterface interface = TaskInterface::None;
    int16_t instance = -1;
    std::vector<uint16_t> addresses;  // address-list ids; [0] holds the network descriptor
    std::vector<uint16_t> pre_actions, post_actions;
    BlobVersion version;  // of the descriptor blob behind addresses[0]
};

struct SubmitEntry {
    std::vector<uint16_t> tasks;
};

struct TensorDescEntry {
    std::string name;
    uint16_t mem_id = 0;
    uint64_t size = 0;
    uint64_t offset = 0;
    uint8_t data_format = 0, data_type = 0, data_category = 0, pixel_format = 0, pixel_mapping = 0;
    int32_t n = 0, c = 0, h = 0, w = 0;
    std::array<uint32_t, 8> strides{};
};

inline constexpr uint8_t kRelocLineStride = 1;
inline constexpr uint8_t kRelocSurfaceStride = 2;

struct RelocEntry {
    uint16_t address_id = 0;
    uint16_t write_id = 0;  // memory id
    uint64_t offset = 0;    // in bytes
    uint32_t interface = 0;
    uint32_t sub_interface = 0;
    uint8_t type = 0;
};

struct Loadable {
    BlobVersion version;
    std::vector<LoadableBlob> blobs;
    std::vector<MemoryEntry> memories;
    std::vector<AddressEntry> addresses;
    std::vector<EventEntry> events;
    std::vector<TaskEntry> tasks;
    std::vector<SubmitEntry> submits;
    std::vector<TensorDescEntry> tensor_descs;
    std::vector<RelocEntry> relocs;
    // Memory ids of the bindable tensors, by bind id.
    std::vector<uint16_t> input_memories, output_memories;
};

// Limits beyond which a loadable is refused before anything is allocated.
inline constexpr uint64_t kMaxLoadableBytes = 0x7fffffffu;  // the FlatBuffers maximum
inline constexpr uint32_t kMaxTaskAddresses = 6144;         // the original ioctl's limit
inline constexpr uint32_t kMaxAlignment = 1u << 20;

// Verifies and checks a loadable.
Result<Loadable> parse_loadable(std::span<const std::byte> bytes);

// The length of the loadable at `data` when the caller does not know it (the original
// IRuntime::load): at most `readable` bytes are read (verified in place, then the objects are
// walked to find where they end). parse_loadable() still checks the result.
Result<uint64_t> measure_loadable(const std::byte* data, uint64_t readable);

// Per memory, whether only the device and the runtime write it once loaded: SET memories that
// are not a bindable tensor's. The runtime seals their buffers (Buffer::seal), and seals one
// again after a relocation patched it or a CPU task wrote into it.
std::vector<bool> sealable_memories(const Loadable& loadable);

// The FlatBuffers bytes of a loadable (for tests, fuzzing seeds and tools); parse_loadable()
// of the result gives `loadable` back. Input/output bind tables and task versions are derived
// data and are not written.
std::vector<std::byte> serialize_loadable(const Loadable& loadable);

}  // namespace nvdla::runtime
