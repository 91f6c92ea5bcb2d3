// The loadable layer: verification, every cross-reference rule, and a corpus of malformed
// files (truncated, bad offsets, wrong types, huge counts, random damage) that must each give a
// precise error and never crash.
#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include "loadable_generated.h"
#include "networks.hpp"
#include "test_support.hpp"

namespace nvdla::runtime_test {
namespace {

namespace fbs = nvdla::runtime::fb;
using runtime::parse_loadable;

std::vector<std::byte> read_file(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::vector<char> raw((std::istreambuf_iterator<char>(f)), {});
    std::vector<std::byte> out(raw.size());
    std::memcpy(out.data(), raw.data(), raw.size());
    return out;
}

std::string error_of(std::span<const std::byte> bytes) {
    Result<Loadable> l = parse_loadable(bytes);
    return l.ok() ? std::string("(accepted)") : l.message();
}

TEST(Loadable, RoundTrip) {
    NetworkBuilder b;
    const uint16_t in = b.tensor(true, "data", kInt8, 32, 8, 8, 256, 2048, 2048);
    const uint16_t out = b.tensor(false, "copy", kInt8, 32, 8, 8, 256, 2048, 2048);
    b.bdma_copy(in, out, 256, 8, {0, 10, 0});
    b.loadable().relocs.push_back({4, 2, 3, 1, 4, runtime::kRelocLineStride});
    b.loadable().events.push_back({0, 0, 0, 0});
    b.loadable().tasks[0].post_actions = {0};
    const std::vector<std::byte> bytes = b.bytes();
    Result<Loadable> parsed = parse_loadable(bytes);
    ASSERT_TRUE(parsed.ok()) << parsed.message();
    const Loadable& l = *parsed;
    const Loadable& want = b.loadable();
    EXPECT_EQ(l.version, (runtime::BlobVersion{0, 7, 0}));
    ASSERT_EQ(l.memories.size(), want.memories.size());
    for (size_t i = 0; i < l.memories.size(); ++i) {
        EXPECT_EQ(l.memories[i].flags, want.memories[i].flags);
        EXPECT_EQ(l.memories[i].size, want.memories[i].size);
        EXPECT_EQ(l.memories[i].contents.size(), want.memories[i].contents.size());
    }
    ASSERT_EQ(l.tasks.size(), 1u);
    EXPECT_EQ(l.tasks[0].interface, runtime::TaskInterface::Dla1);
    EXPECT_EQ(l.tasks[0].addresses.size(), 6u);
    EXPECT_EQ(l.tasks[0].version, (runtime::BlobVersion{0, 10, 0}));
    EXPECT_EQ(l.tasks[0].post_actions, std::vector<uint16_t>{0});
    EXPECT_EQ(l.input_memories, std::vector<uint16_t>{in});
    EXPECT_EQ(l.output_memories, std::vector<uint16_t>{out});
    ASSERT_EQ(l.tensor_descs.size(), 2u);
    EXPECT_EQ(l.tensor_descs[0].name, "data");
    EXPECT_EQ(l.tensor_descs[0].strides[1], 256u);
    ASSERT_EQ(l.relocs.size(), 1u);
    EXPECT_EQ(l.relocs[0].offset, 3u);
    ASSERT_EQ(l.blobs.size(), want.blobs.size());
    EXPECT_EQ(l.blobs[0].data, want.blobs[0].data);
    // Serialising what was parsed gives the same bytes.
    Loadable again = l;
    EXPECT_EQ(runtime::serialize_loadable(again), bytes);
}

TEST(Loadable, RegressionLoadablesParse) {
    NVDLA_REQUIRE_SHARED();
    const auto dir = test::shared_dir() / "vectors/sw-regression/flatbufs";
    if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " is absent";
    int count = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
        if (!e.is_regular_file()) continue;
        const std::vector<std::byte> bytes = read_file(e.path());
        Result<Loadable> l = parse_loadable(bytes);
        ASSERT_TRUE(l.ok()) << e.path() << ": " << l.message();
        EXPECT_EQ(l->tasks.size(), 1u);
        EXPECT_EQ(l->tasks[0].version, (runtime::BlobVersion{0, 10, 0})) << e.path();
        EXPECT_TRUE(l->input_memories.empty());
        EXPECT_EQ(l->output_memories.size(), 1u);
        ++count;
    }
    EXPECT_EQ(count, 10);
}

// ---- cross-reference rules, one test each, with the exact sentence ----

struct Rule {
    const char* name;
    std::function<void(NetworkBuilder&)> damage;
    const char* message;
};

class LoadableRule : public ::testing::TestWithParam<Rule> {};

TEST_P(LoadableRule, GivesItsSentence) {
    NetworkBuilder b;
    const uint16_t in = b.tensor(true, "data", kInt8, 32, 8, 8, 256, 2048, 2048);
    const uint16_t out = b.tensor(false, "copy", kInt8, 32, 8, 8, 256, 2048, 2048);
    b.bdma_copy(in, out, 256, 8);
    b.finish();
    GetParam().damage(b);
    EXPECT_EQ(error_of(runtime::serialize_loadable(b.loadable())), GetParam().message);
}

// Memories: 0 input, 1 output, 2..5 the BDMA task's descriptors. Addresses: 0..3 descriptors,
// 4 input, 5 output.
const Rule kRules[] = {
    {"Version",
     [](NetworkBuilder& b) {
         b.loadable().version = {0, 8, 1};
     },
     "loadable: format version 0.8.1 is not supported (this runtime reads 0.7.x)"},
    {"NoMemory", [](NetworkBuilder& b) { b.loadable().memories.clear(); },
     "loadable: the memory list is empty"},
    {"UnknownFlags", [](NetworkBuilder& b) { b.loadable().memories[2].flags |= 16; },
     "loadable: memory_list entry 2: flags 19 hold bits other than ALLOC, SET, INPUT and OUTPUT"},
    {"InputAndOutput", [](NetworkBuilder& b) { b.loadable().memories[0].flags |= 8; },
     "loadable: memory_list entry 0: it is marked both INPUT and OUTPUT"},
    {"ZeroSize", [](NetworkBuilder& b) { b.loadable().memories[1].size = 0; },
     "loadable: memory_list entry 1: its size is 0"},
    {"AlignmentNotPowerOfTwo", [](NetworkBuilder& b) { b.loadable().memories[3].alignment = 48; },
     "loadable: memory_list entry 3: alignment 48 is not a power of two"},
    {"AlignmentTooLarge", [](NetworkBuilder& b) { b.loadable().memories[3].alignment = 1u << 24; },
     "loadable: memory_list entry 3: alignment 16777216 is larger than the 1048576 bytes this "
     "runtime supports"},
    {"BindableInSram",
     [](NetworkBuilder& b) { b.loadable().memories[1].domain = runtime::LoadableDomain::Sram; },
     "loadable: memory_list entry 1: an INPUT or OUTPUT tensor cannot live in SRAM"},
    {"ContentTooLarge", [](NetworkBuilder& b) { b.loadable().memories[2].size = 39; },
     "loadable: memory_list entry 2: blob 't0_network' (40 bytes) at offset 0 does not fit in "
     "its 39 bytes"},
    {"ContentOffset", [](NetworkBuilder& b) { b.loadable().memories[2].contents[0].offset = 8; },
     "loadable: memory_list entry 2: blob 't0_network' (40 bytes) at offset 8 does not fit in "
     "its 40 bytes"},
    {"AddressMemory", [](NetworkBuilder& b) { b.loadable().addresses[3].mem_id = 6; },
     "loadable: address_list entry 3: mem_id 6 is not one of the 6 memory entries"},
    {"AddressOffset", [](NetworkBuilder& b) { b.loadable().addresses[4].offset = 2048; },
     "loadable: address_list entry 4: offset 2048 is past the end of memory 0 (2048 bytes)"},
    {"TensorDescMemory", [](NetworkBuilder& b) { b.loadable().tensor_descs[1].mem_id = 9; },
     "loadable: tensor_desc_list entry 1: mem_id 9 is not one of the 6 memory entries"},
    {"NegativeDims", [](NetworkBuilder& b) { b.loadable().tensor_descs[0].h = -8; },
     "loadable: tensor_desc_list entry 0: dimensions 1x32x-8x8 (NxCxHxW) are negative"},
    {"TensorDescId", [](NetworkBuilder& b) { b.loadable().memories[1].tensor_desc_id = 2; },
     "loadable: memory_list entry 1: tensor_desc_id 2 is not one of the 2 tensor descriptors"},
    {"DuplicateBindId",
     [](NetworkBuilder& b) {
         b.tensor(false, "again", kInt8, 1, 1, 1, 32, 32, 32);
         b.loadable().memories.back().bind_id = 0;
     },
     "loadable: memory_list entry 6: output bind id 0 is used by memory entry 1 too"},
    {"BindIdGap", [](NetworkBuilder& b) { b.loadable().memories[0].bind_id = 1; },
     "loadable: memory_list entry 0: input bind id 1 leaves a gap (expected 0)"},
    {"NoTask",
     [](NetworkBuilder& b) {
         b.loadable().tasks.clear();
         b.loadable().submits.clear();
     },
     "loadable: the task list is empty"},
    {"TaskInterface",
     [](NetworkBuilder& b) { b.loadable().tasks[0].interface = runtime::TaskInterface::None; },
     "loadable: task_list entry 0: interface 0 is neither DLA1 (1) nor EMU1 (2)"},
    {"TaskAddressEmpty", [](NetworkBuilder& b) { b.loadable().tasks[0].addresses.clear(); },
     "loadable: task_list entry 0: its address list is empty (entry 0 must hold the network "
     "descriptor)"},
    {"TaskAddressRange", [](NetworkBuilder& b) { b.loadable().tasks[0].addresses[5] = 6; },
     "loadable: task_list entry 0: address_list[5] = 6 is not one of the 6 address-list "
     "entries"},
    {"TaskTooManyAddresses",
     [](NetworkBuilder& b) { b.loadable().tasks[0].addresses.resize(6145, 0); },
     "loadable: task_list entry 0: its address list has 6145 entries, more than the 6144 "
     "allowed"},
    {"TaskEvent", [](NetworkBuilder& b) { b.loadable().tasks[0].pre_actions = {3}; },
     "loadable: task_list entry 0: event 3 is not one of the 0 events"},
    {"NetworkDescInSram",
     [](NetworkBuilder& b) { b.loadable().memories[2].domain = runtime::LoadableDomain::Sram; },
     "loadable: task_list entry 0: its network descriptor lies in SRAM, where the CPU cannot "
     "read it"},
    {"NoSubmit", [](NetworkBuilder& b) { b.loadable().submits.clear(); },
     "loadable: the submit list is empty"},
    {"SubmitNoTask", [](NetworkBuilder& b) { b.loadable().submits[0].tasks.clear(); },
     "loadable: submit_list entry 0: it names no task"},
    {"SubmitTask",
     [](NetworkBuilder& b) {
         b.loadable().submits[0].tasks = {0, 1};
     },
     "loadable: submit_list entry 0: task 1 is not one of the 1 tasks"},
    {"RelocAddress",
     [](NetworkBuilder& b) {
         b.loadable().relocs.push_back({6, 3, 0, 1, 3, 1});
     },
     "loadable: reloc_list entry 0: address_id 6 is not one of the 6 address-list entries"},
    {"RelocMemory",
     [](NetworkBuilder& b) {
         b.loadable().relocs.push_back({4, 6, 0, 1, 3, 1});
     },
     "loadable: reloc_list entry 0: write_id 6 is not one of the 6 memory entries"},
    {"RelocType",
     [](NetworkBuilder& b) {
         b.loadable().relocs.push_back({4, 3, 0, 1, 3, 3});
     },
     "loadable: reloc_list entry 0: reloc_type 3 is neither a line (1) nor a surface (2) "
     "stride"},
    {"RelocOffset",
     [](NetworkBuilder& b) {
         b.loadable().relocs.push_back({4, 3, 113, 1, 3, 1});
     },
     "loadable: reloc_list entry 0: it patches the 4 bytes at byte offset 113 of memory 3, past "
     "its 116 bytes"},
};

INSTANTIATE_TEST_SUITE_P(Rules, LoadableRule, ::testing::ValuesIn(kRules),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

// ---- rules that only raw FlatBuffers can break ----

// A loadable built with the generated API, `edit` changing what it writes.
struct Raw {
    uint16_t memory_id = 0, address_id = 0, task_id = 0, submit_id = 0, event_id = 0;
    bool offsets_short = false;
    std::string content = "blob";
    uint64_t blob_size = 4;
    uint8_t event_op = 0;
    uint8_t domain = 0;
    bool version = true;
};

std::vector<std::byte> raw_loadable(const Raw& r) {
    flatbuffers::FlatBufferBuilder b;
    const uint8_t data[4] = {1, 2, 3, 4};
    const fbs::Version blob_version(0, 12, 0);
    auto blob = fbs::CreateBlob(b, b.CreateString("blob"), r.blob_size, fbs::Interface::NONE, 1,
                                &blob_version, b.CreateVector(data, 4));
    std::vector<flatbuffers::Offset<flatbuffers::String>> contents = {b.CreateString(r.content)};
    std::vector<uint64_t> offsets = {0};
    if (r.offsets_short) offsets.clear();
    auto memory =
        fbs::CreateMemoryListEntry(b, r.memory_id, static_cast<fbs::MemoryDomain>(r.domain),
                                   fbs::MemoryFlags::ALLOC | fbs::MemoryFlags::SET, 64, 0,
                                   b.CreateVector(contents), b.CreateVector(offsets));
    auto address = fbs::CreateAddressListEntry(b, r.address_id, 0, 0, 64);
    auto event = fbs::CreateEventListEntry(b, r.event_id, fbs::EventType::TYPE0, 0, 0,
                                           static_cast<fbs::EventOp>(r.event_op));
    std::vector<uint16_t> list = {0};
    auto task =
        fbs::CreateTaskListEntry(b, r.task_id, fbs::Interface::DLA1, -1, b.CreateVector(list));
    auto submit = fbs::CreateSubmitListEntry(b, r.submit_id, b.CreateVector(list));
    const fbs::Version version(0, 7, 0);
    std::vector<decltype(task)> tasks = {task};
    std::vector<decltype(memory)> memories = {memory};
    std::vector<decltype(address)> addresses = {address};
    std::vector<decltype(event)> events = {event};
    std::vector<decltype(blob)> blobs = {blob};
    std::vector<decltype(submit)> submits = {submit};
    if (r.version) {
        b.Finish(fbs::CreateLoadable(b, &version, b.CreateVector(tasks), b.CreateVector(memories),
                                     b.CreateVector(addresses), b.CreateVector(events),
                                     b.CreateVector(blobs), 0, 0, b.CreateVector(submits)));
    } else {
        // The generated builder insists on the required field: the table by hand.
        const auto task_list = b.CreateVector(tasks);
        const auto memory_list = b.CreateVector(memories);
        const auto address_list = b.CreateVector(addresses);
        const auto event_list = b.CreateVector(events);
        const auto blob_list = b.CreateVector(blobs);
        const auto submit_list = b.CreateVector(submits);
        const flatbuffers::uoffset_t start = b.StartTable();
        b.AddOffset(fbs::Loadable::VT_TASK_LIST, task_list);
        b.AddOffset(fbs::Loadable::VT_MEMORY_LIST, memory_list);
        b.AddOffset(fbs::Loadable::VT_ADDRESS_LIST, address_list);
        b.AddOffset(fbs::Loadable::VT_EVENT_LIST, event_list);
        b.AddOffset(fbs::Loadable::VT_BLOBS, blob_list);
        b.AddOffset(fbs::Loadable::VT_SUBMIT_LIST, submit_list);
        b.Finish(flatbuffers::Offset<fbs::Loadable>(b.EndTable(start)));
    }
    const auto* p = reinterpret_cast<const std::byte*>(b.GetBufferPointer());
    return {p, p + b.GetSize()};
}

// The original compiler's relocation offsets are bytes, not always 4-byte aligned (an EMU
// buffer descriptor's line stride sits at byte 18): the last 4 bytes of a memory are in range.
TEST(Loadable, RelocationOffsetsAreBytes) {
    NetworkBuilder b;
    const uint16_t in = b.tensor(true, "data", kInt8, 32, 8, 8, 256, 2048, 2048);
    const uint16_t out = b.tensor(false, "copy", kInt8, 32, 8, 8, 256, 2048, 2048);
    b.bdma_copy(in, out, 256, 8);
    b.finish();
    b.loadable().relocs.push_back({4, 3, 112, 1, 3, runtime::kRelocLineStride});
    b.loadable().relocs.push_back({4, 3, 18, 1, 3, runtime::kRelocSurfaceStride});
    Result<runtime::Loadable> parsed = runtime::parse_loadable(b.bytes());
    ASSERT_TRUE(parsed.ok()) << parsed.message();
    EXPECT_EQ(parsed->relocs[0].offset, 112u);
    EXPECT_EQ(parsed->relocs[1].offset, 18u);
}

// What the runtime seals: SET memories that no tensor reaches (a relocation's target is sealed
// again after the runtime patched it, a CPU task's destination after the task wrote it).
TEST(Loadable, SealableMemories) {
    using namespace runtime;
    Loadable l;
    constexpr uint16_t kSet = kMemoryAlloc | kMemorySet;
    const uint16_t memories[] = {kSet,                 // 0: a DLA task's weights
                                 kMemoryAlloc,         // 1: not SET
                                 kSet | kMemoryInput,  // 2: a tensor
                                 kSet,                 // 3: in a CPU task's list
                                 kSet,                 // 4: relocated into: sealable
                                 kSet,                 // 5: an output's memory
                                 kSet,                 // 6: a tensor's memory
                                 kSet};                // 7: a DLA task's too
    for (uint16_t flags : memories) {
        l.memories.emplace_back();
        l.memories.back().flags = flags;
    }
    l.addresses = {{0, 0, 0}, {3, 0, 0}, {7, 0, 0}};
    l.tasks.push_back({TaskInterface::Dla1, 0, {0, 2}, {}, {}, {}});
    l.tasks.push_back({TaskInterface::Emu1, 0, {1, 99}, {}, {}, {}});
    l.relocs.push_back({0, 4, 0, 1, 3, kRelocLineStride});
    l.relocs.push_back({0, 99, 0, 1, 3, kRelocLineStride});
    l.output_memories = {5};
    l.tensor_descs.emplace_back();
    l.tensor_descs.back().mem_id = 6;
    EXPECT_EQ(sealable_memories(l),
              (std::vector<bool>{true, false, false, true, true, false, false, true}));
}

TEST(LoadableRaw, ValidBaseline) {
    EXPECT_EQ(error_of(raw_loadable({})), "(accepted)");
}

TEST(LoadableRaw, IdsMustEqualPositions) {
    EXPECT_EQ(error_of(raw_loadable({.memory_id = 3})),
              "loadable: memory_list entry 0: id 3 differs from its position (ids must be 0, 1, "
              "2, ...)");
    EXPECT_EQ(error_of(raw_loadable({.address_id = 1})),
              "loadable: address_list entry 0: id 1 differs from its position (ids must be 0, "
              "1, 2, ...)");
    EXPECT_EQ(error_of(raw_loadable({.task_id = 2})),
              "loadable: task_list entry 0: id 2 differs from its position (ids must be 0, 1, "
              "2, ...)");
    EXPECT_EQ(error_of(raw_loadable({.submit_id = 5})),
              "loadable: submit_list entry 0: id 5 differs from its position (ids must be 0, 1, "
              "2, ...)");
    EXPECT_EQ(error_of(raw_loadable({.event_id = 9})),
              "loadable: event_list entry 0: id 9 differs from its position (ids must be 0, 1, "
              "2, ...)");
}

TEST(LoadableRaw, SetContents) {
    EXPECT_EQ(error_of(raw_loadable({.offsets_short = true})),
              "loadable: memory_list entry 0: SET names 1 blobs but gives 0 offsets");
    EXPECT_EQ(error_of(raw_loadable({.content = "weights"})),
              "loadable: memory_list entry 0: SET content 'weights' names no blob");
    EXPECT_EQ(error_of(raw_loadable({.blob_size = 5})),
              "loadable: blobs entry 0 ('blob'): it declares 5 bytes but holds 4");
}

TEST(LoadableRaw, Enumerations) {
    EXPECT_EQ(error_of(raw_loadable({.event_op = 7})),
              "loadable: event_list entry 0: op 7 is neither WAIT nor SIGNAL");
    EXPECT_EQ(error_of(raw_loadable({.domain = 2})),
              "loadable: memory_list entry 0: domain 2 is neither SYSTEM (0) nor SRAM (1)");
}

TEST(LoadableRaw, VersionIsRequired) {
    EXPECT_EQ(error_of(raw_loadable({.version = false})),
              "loadable: the required version field is missing or truncated");
}

// ---- byte-level damage ----

TEST(LoadableMalformed, TooShort) {
    EXPECT_EQ(error_of(std::vector<std::byte>{}),
              "loadable: 0 bytes is too short to be a loadable (at least 8 are needed)");
    EXPECT_EQ(error_of(std::vector<std::byte>(7)),
              "loadable: 7 bytes is too short to be a loadable (at least 8 are needed)");
}

TEST(LoadableMalformed, RootOffsetOutside) {
    std::vector<std::byte> bytes = copy_network();
    put<uint32_t>(bytes, 0, static_cast<uint32_t>(bytes.size() + 100));
    EXPECT_EQ(error_of(bytes), "loadable: the root offset " + std::to_string(bytes.size() + 100) +
                                   " does not point to a table inside the " +
                                   std::to_string(bytes.size()) + " bytes (not a loadable?)");
}

TEST(LoadableMalformed, NotALoadable) {
    // A PNG signature and header: the root offset is nonsense.
    const unsigned char png[] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13,
                                 'I',  'H', 'D', 'R', 0,    0,    0,    8,    0, 0, 0, 8};
    std::vector<std::byte> bytes(sizeof png);
    std::memcpy(bytes.data(), png, sizeof png);
    EXPECT_EQ(error_of(bytes),
              "loadable: the root offset 1196314761 does not point to a table "
              "inside the 24 bytes (not a loadable?)");
}

TEST(LoadableMalformed, VtableOutside) {
    std::vector<std::byte> bytes = copy_network();
    uint32_t root = 0;
    std::memcpy(&root, bytes.data(), 4);
    put<int32_t>(bytes, root, -0x40000000);  // the root table's vtable offset
    EXPECT_EQ(error_of(bytes),
              "loadable: the root table's vtable lies outside the buffer (truncated or not a "
              "loadable)");
}

// The address of a root field's vector (its length word).
size_t vector_position(const std::vector<std::byte>& bytes, flatbuffers::voffset_t field) {
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
    const auto* table = flatbuffers::GetRoot<flatbuffers::Table>(data);
    const auto* v = table->GetPointer<const uint8_t*>(field);
    return static_cast<size_t>(v - data);
}

TEST(LoadableMalformed, HugeCounts) {
    struct Case {
        flatbuffers::voffset_t field;
        const char* list;
    };
    for (const Case c :
         {Case{fbs::Loadable::VT_MEMORY_LIST, "memory_list"},
          Case{fbs::Loadable::VT_TASK_LIST, "task_list"}, Case{fbs::Loadable::VT_BLOBS, "blobs"},
          Case{fbs::Loadable::VT_TENSOR_DESC_LIST, "tensor_desc_list"}}) {
        std::vector<std::byte> bytes = copy_network();
        put<uint32_t>(bytes, vector_position(bytes, c.field), 0x3fffffff);
        EXPECT_EQ(error_of(bytes), "loadable: " + std::string(c.list) +
                                       ": the list (1073741823 entries claimed) does not fit in "
                                       "the buffer")
            << c.list;
    }
}

TEST(LoadableMalformed, EntryOffsetOutside) {
    std::vector<std::byte> bytes = copy_network();
    const size_t list = vector_position(bytes, fbs::Loadable::VT_ADDRESS_LIST);
    put<uint32_t>(bytes, list + 4 + 2 * 4, 0x7ffffff0);  // entry 2's offset
    EXPECT_EQ(error_of(bytes),
              "loadable: address_list entry 2: the table is malformed (a field or string outside "
              "the buffer, or a field of the wrong size or alignment)");
}

TEST(LoadableMalformed, WrongTypes) {
    // The submit list's field made to point at the blob list: tables of another shape.
    std::vector<std::byte> bytes = copy_network();
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
    const auto* table = flatbuffers::GetRoot<flatbuffers::Table>(data);
    const size_t blobs = vector_position(bytes, fbs::Loadable::VT_BLOBS);
    const size_t field =
        static_cast<size_t>(reinterpret_cast<const uint8_t*>(table) +
                            table->GetOptionalFieldOffset(fbs::Loadable::VT_SUBMIT_LIST) - data);
    put<uint32_t>(bytes, field, static_cast<uint32_t>(blobs - field));
    // Blob tables read as submit entries: field 1 (task_id) is the blob's size, not an offset.
    const std::string e = error_of(bytes);
    EXPECT_TRUE(e.rfind("loadable: submit_list", 0) == 0) << e;

    // A string where the version struct should be: the struct is read from it (3 bytes), so
    // the result is a wrong version, reported as such, or a malformed table.
    std::vector<std::byte> other = copy_network();
    const auto* other_table =
        flatbuffers::GetRoot<flatbuffers::Table>(reinterpret_cast<const uint8_t*>(other.data()));
    const auto vt = other_table->GetOptionalFieldOffset(fbs::Loadable::VT_VERSION);
    ASSERT_NE(vt, 0);
    put<uint8_t>(other,
                 static_cast<size_t>(reinterpret_cast<const uint8_t*>(other_table) -
                                     reinterpret_cast<const uint8_t*>(other.data())) +
                     vt + 1,
                 9);
    EXPECT_EQ(error_of(other),
              "loadable: format version 0.9.0 is not supported (this runtime reads 0.7.x)");
}

// Only trailing alignment padding (zeros) can go without the loadable noticing.
bool only_padding_after(std::span<const std::byte> bytes, size_t n) {
    return std::all_of(bytes.begin() + static_cast<long>(n), bytes.end(),
                       [](std::byte b) { return b == std::byte{0}; });
}

TEST(LoadableMalformed, EveryTruncationIsRejected) {
    const std::vector<std::byte> bytes = copy_network();
    for (size_t n = 0; n < bytes.size(); ++n) {
        const std::string e = error_of(std::span(bytes).first(n));
        if (e == "(accepted)") {
            ASSERT_TRUE(only_padding_after(bytes, n))
                << "truncated to " << n << " of " << bytes.size() << " bytes";
            continue;
        }
        ASSERT_EQ(e.rfind("loadable: ", 0), 0u) << e;
    }
}

// Found by the loadable fuzzer: a SET offsets vector ([ulong]) 4 bytes off its 8-byte
// boundary passes the FlatBuffers verifier; reading it would be a misaligned load.
TEST(LoadableMalformed, MisalignedSetOffsets) {
    const std::vector<std::byte> bytes =
        read_file(std::filesystem::path(nvdla::test::tests_source_dir()) /
                  "runtime/data/misaligned_set_offsets.nvdla");
    ASSERT_FALSE(bytes.empty());
    const std::string error = error_of(bytes);
    EXPECT_NE(error.find("its SET offsets are not on 8-byte boundaries"), std::string::npos)
        << error;
    EXPECT_EQ(error.rfind("loadable: memory_list entry ", 0), 0u) << error;
}

TEST(LoadableMalformed, RandomDamageNeverCrashes) {
    auto rng = test::rng_for_test();
    const std::vector<std::byte> good = copy_network();
    int rejected = 0;
    for (int round = 0; round < 3000; ++round) {
        std::vector<std::byte> bytes = good;
        const uint32_t flips = test::random_between(rng, 1, 8);
        for (uint32_t f = 0; f < flips; ++f)
            bytes[test::random_between(rng, 0, static_cast<uint32_t>(bytes.size() - 1))] =
                static_cast<std::byte>(test::random_between(rng, 0, 255));
        Result<Loadable> l = parse_loadable(bytes);
        if (!l.ok()) {
            ++rejected;
            ASSERT_EQ(l.message().rfind("loadable: ", 0), 0u) << l.message();
        }
    }
    EXPECT_GT(rejected, 100);
}

TEST(LoadableMalformed, RegressionLoadablesTruncated) {
    NVDLA_REQUIRE_SHARED();
    const auto file = test::shared_dir() / "vectors/sw-regression/flatbufs/CDP/CDP_L0_0_fbuf";
    if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " is absent";
    const std::vector<std::byte> bytes = read_file(file);
    for (size_t n = 0; n < bytes.size(); n += 7) {
        if (parse_loadable(std::span(bytes).first(n)).ok()) {
            ASSERT_TRUE(only_padding_after(bytes, n)) << n;
        }
    }
}

}  // namespace
}  // namespace nvdla::runtime_test
