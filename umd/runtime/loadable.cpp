#include "loadable.hpp"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <memory>
#include <string_view>

#include "loadable_generated.h"

namespace nvdla::runtime {

namespace fbs = nvdla::runtime::fb;

std::string to_string(const BlobVersion& v) {
    return std::to_string(v.major) + "." + std::to_string(v.minor) + "." +
           std::to_string(v.sub_minor);
}

namespace {

Status fail(const std::string& where, const std::string& what) {
    return error("loadable: ", where, ": ", what);
}

std::string entry_name(std::string_view list, size_t index) {
    return std::string(list) + " entry " + std::to_string(index);
}

// List entries carry their index as their id; other lists refer to them by it.
Status check_id(const std::string& where, uint64_t id, size_t position) {
    if (id == position) return Status();
    return fail(where, "id " + std::to_string(id) +
                           " differs from its position (ids must be 0, 1, 2, ...)");
}

template <class T>
size_t length(const flatbuffers::Vector<T>* v) {
    return v ? v->size() : 0;
}

// The verifier's answer for one table vector field of the root, so that a failure names the
// list and the entry rather than just "invalid".
// `list_of` reads the field; it is called only once the field itself is known to be inside.
template <class ListOf>
Status verify_list(flatbuffers::Verifier& verifier, std::span<const std::byte> bytes,
                   const flatbuffers::Table* root, flatbuffers::voffset_t field,
                   std::string_view name, ListOf list_of) {
    if (!root->VerifyOffset(verifier, field))
        return fail(std::string(name), "its offset points outside the buffer");
    const auto* list = list_of();
    if (!list) return Status();
    if (!verifier.VerifyVector(list)) {
        // The claimed length, read bytewise where it can be read at all.
        const auto position = reinterpret_cast<const std::byte*>(list) - bytes.data();
        if (position < 0 || static_cast<uint64_t>(position) + 4 > bytes.size() || position % 4)
            return fail(std::string(name), "the list lies outside the buffer or is misaligned");
        uint32_t claimed = 0;
        std::memcpy(&claimed, bytes.data() + position, 4);
        return fail(std::string(name), "the list (" + std::to_string(claimed) +
                                           " entries claimed) does not fit in the buffer");
    }
    for (flatbuffers::uoffset_t i = 0; i < list->size(); ++i) {
        const auto* e = list->Get(i);
        if (!e || !e->Verify(verifier))
            return fail(entry_name(name, i),
                        "the table is malformed (a field or string outside the buffer, or a "
                        "field of the wrong size or alignment)");
    }
    return Status();
}

// The verifier's limits; alignment is checked (see place()), so nothing is read misaligned.
constexpr uint32_t kMaxDepth = 64;
constexpr uint32_t kMaxTables = 1000000;
constexpr bool kCheckAlignment = true;

// The bytes the verifier and the accessors read, in 8-byte aligned storage. FlatBuffers
// aligns fields relative to the end of a buffer; the shipped regression loadables are 4 bytes
// longer than a multiple of 8, so their 64-bit fields lie 4 bytes off an 8-byte boundary from
// the start. `shift` places such a buffer 4 bytes further, behind a root offset adjusted to
// match, which puts every field on its boundary.
struct Placed {
    std::vector<uint64_t> storage;
    std::span<const std::byte> bytes;
};

Placed place(std::span<const std::byte> in, bool shift) {
    Placed p;
    const size_t lead = shift ? 4 : 0;
    p.storage.assign((in.size() + lead + 7) / 8, 0);
    auto* out = reinterpret_cast<std::byte*>(p.storage.data());
    std::memcpy(out + lead, in.data(), in.size());
    if (shift) {
        uint32_t root = 0;
        std::memcpy(&root, in.data(), 4);
        root += 4;
        std::memcpy(out, &root, 4);
    }
    p.bytes = {out, in.size() + lead};
    return p;
}

// Runs the FlatBuffers verifier; on failure a second, field-by-field pass names the culprit.
Status verify(std::span<const std::byte> bytes, bool check_alignment = kCheckAlignment) {
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
    if (bytes.size() < 8)
        return error("loadable: ", bytes.size(),
                     " bytes is too short to be a loadable (at least 8 are needed)");
    if (bytes.size() > kMaxLoadableBytes)
        return error("loadable: ", bytes.size(),
                     " bytes is larger than the 2 GiB a FlatBuffer can hold");
    {
        flatbuffers::Verifier verifier(data, bytes.size(), kMaxDepth, kMaxTables, check_alignment);
        if (verifier.VerifyBuffer<fbs::Loadable>(nullptr)) return Status();
    }
    flatbuffers::Verifier verifier(data, bytes.size(), kMaxDepth, kMaxTables, check_alignment);
    uint32_t root_offset = 0;
    std::memcpy(&root_offset, data, 4);
    if (root_offset == 0 || root_offset % 4 != 0 || root_offset > bytes.size() - 4)
        return error("loadable: the root offset ", root_offset,
                     " does not point to a table inside the ", bytes.size(),
                     " bytes (not a loadable?)");
    // The same table seen untyped (its verification helpers) and typed (its accessors).
    const auto* table = flatbuffers::GetRoot<flatbuffers::Table>(data);
    const auto* root = flatbuffers::GetRoot<fbs::Loadable>(data);
    if (!table->VerifyTableStart(verifier))
        return error(
            "loadable: the root table's vtable lies outside the buffer (truncated or not a "
            "loadable)");
    if (!table->VerifyFieldRequired<fbs::Version>(verifier, fbs::Loadable::VT_VERSION, 1))
        return error("loadable: the required version field is missing or truncated");
    Status s;
    if (!(s = verify_list(verifier, bytes, table, fbs::Loadable::VT_TASK_LIST, "task_list",
                          [root] { return root->task_list(); })))
        return s;
    if (!(s = verify_list(verifier, bytes, table, fbs::Loadable::VT_MEMORY_LIST, "memory_list",
                          [root] { return root->memory_list(); })))
        return s;
    if (!(s = verify_list(verifier, bytes, table, fbs::Loadable::VT_ADDRESS_LIST, "address_list",
                          [root] { return root->address_list(); })))
        return s;
    if (!(s = verify_list(verifier, bytes, table, fbs::Loadable::VT_EVENT_LIST, "event_list",
                          [root] { return root->event_list(); })))
        return s;
    if (!(s = verify_list(verifier, bytes, table, fbs::Loadable::VT_BLOBS, "blobs",
                          [root] { return root->blobs(); })))
        return s;
    if (!(s = verify_list(verifier, bytes, table, fbs::Loadable::VT_TENSOR_DESC_LIST,
                          "tensor_desc_list", [root] { return root->tensor_desc_list(); })))
        return s;
    if (!(s = verify_list(verifier, bytes, table, fbs::Loadable::VT_RELOC_LIST, "reloc_list",
                          [root] { return root->reloc_list(); })))
        return s;
    if (!(s = verify_list(verifier, bytes, table, fbs::Loadable::VT_SUBMIT_LIST, "submit_list",
                          [root] { return root->submit_list(); })))
        return s;
    return error(
        "loadable: the FlatBuffers verifier rejected the buffer (nesting too deep or too many "
        "tables)");
}

// The bytes a verified loadable's objects span (tables, vtables, vectors, strings), walked
// with bytewise reads so that nothing is read misaligned.
class ExtentWalker {
  public:
    explicit ExtentWalker(const uint8_t* base) : base_(base) {}

    uint64_t walk() {
        const uint8_t* root = base_ + u32(base_);
        table(root);
        using L = fbs::Loadable;
        for (flatbuffers::voffset_t list :
             {L::VT_TASK_LIST, L::VT_MEMORY_LIST, L::VT_ADDRESS_LIST, L::VT_EVENT_LIST, L::VT_BLOBS,
              L::VT_TENSOR_DESC_LIST, L::VT_RELOC_LIST, L::VT_SUBMIT_LIST}) {
            const uint8_t* v = target(root, list);
            if (!v) continue;
            const uint32_t n = vector(v, 4);
            for (uint32_t i = 0; i < n; ++i) {
                const uint8_t* e = v + 4 + 4 * i;
                e += u32(e);
                table(e);
                entry(list, e);
            }
        }
        cover(base_, 4);
        return end_;
    }

  private:
    void entry(flatbuffers::voffset_t list, const uint8_t* e) {
        using L = fbs::Loadable;
        if (list == L::VT_TASK_LIST) {
            for (flatbuffers::voffset_t f :
                 {fbs::TaskListEntry::VT_ADDRESS_LIST, fbs::TaskListEntry::VT_PRE_ACTIONS,
                  fbs::TaskListEntry::VT_POST_ACTIONS})
                if (const uint8_t* v = target(e, f)) vector(v, 2);
        } else if (list == L::VT_MEMORY_LIST) {
            if (const uint8_t* v = target(e, fbs::MemoryListEntry::VT_CONTENTS)) {
                const uint32_t n = vector(v, 4);
                for (uint32_t i = 0; i < n; ++i) string(v + 4 + 4 * i + u32(v + 4 + 4 * i));
            }
            if (const uint8_t* v = target(e, fbs::MemoryListEntry::VT_OFFSETS)) vector(v, 8);
        } else if (list == L::VT_BLOBS) {
            if (const uint8_t* s = target(e, fbs::Blob::VT_NAME)) string(s);
            if (const uint8_t* v = target(e, fbs::Blob::VT_DATA)) vector(v, 1);
        } else if (list == L::VT_TENSOR_DESC_LIST) {
            if (const uint8_t* s = target(e, fbs::TensorDescListEntry::VT_NAME)) string(s);
        } else if (list == L::VT_SUBMIT_LIST) {
            if (const uint8_t* v = target(e, fbs::SubmitListEntry::VT_TASK_ID)) vector(v, 2);
        }
    }
    static uint32_t u32(const uint8_t* p) {
        uint32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    static uint16_t u16(const uint8_t* p) {
        uint16_t v;
        std::memcpy(&v, p, 2);
        return v;
    }
    void cover(const uint8_t* p, uint64_t bytes) {
        end_ = std::max<uint64_t>(end_, static_cast<uint64_t>(p - base_) + bytes);
    }
    const uint8_t* vtable(const uint8_t* t) const {
        int32_t back;
        std::memcpy(&back, t, 4);
        return t - back;
    }
    void table(const uint8_t* t) {
        const uint8_t* vt = vtable(t);
        cover(vt, u16(vt));
        cover(t, u16(vt + 2));
    }
    // What an offset field of table t points to, or nullptr when the field is absent.
    const uint8_t* target(const uint8_t* t, flatbuffers::voffset_t field) const {
        const uint8_t* vt = vtable(t);
        if (field + 2u > u16(vt)) return nullptr;
        const uint16_t at = u16(vt + field);
        if (!at) return nullptr;
        return t + at + u32(t + at);
    }
    uint32_t vector(const uint8_t* v, uint32_t element_bytes) {
        const uint32_t n = u32(v);
        cover(v, 4 + uint64_t(n) * element_bytes);
        return n;
    }
    void string(const uint8_t* s) { cover(s, 4 + uint64_t(u32(s)) + 1); }

    const uint8_t* base_;
    uint64_t end_ = 0;
};

std::vector<uint16_t> copy_ids(const flatbuffers::Vector<uint16_t>* v) {
    std::vector<uint16_t> out;
    if (v) out.assign(v->begin(), v->end());
    return out;
}

BlobVersion version_of(const fbs::Version* v) {
    if (!v) return {};
    return {v->major(), v->minor(), v->sub_minor()};
}

bool is_power_of_two(uint64_t v) {
    return v != 0 && (v & (v - 1)) == 0;
}

// Parses a verified FlatBuffer loadable into a Loadable, checking every index and range.
class LoadableParser {
  public:
    explicit LoadableParser(const fbs::Loadable& root) : root_(root) {}

    Result<Loadable> parse() {
        Status s;
        if (!(s = version())) return s;
        if (!(s = blobs())) return s;
        if (!(s = memories())) return s;
        if (!(s = addresses())) return s;
        if (!(s = events())) return s;
        if (!(s = tensor_descs())) return s;
        if (!(s = bindings())) return s;
        if (!(s = tasks())) return s;
        if (!(s = submits())) return s;
        if (!(s = relocs())) return s;
        return std::move(out_);
    }

  private:
    Status version() {
        out_.version = version_of(root_.version());
        if (out_.version.major != 0 || out_.version.minor != 7)
            return error("loadable: format version ", to_string(out_.version),
                         " is not supported (this runtime reads 0.7.x)");
        return Status();
    }

    Status blobs() {
        const auto* list = root_.blobs();
        for (size_t i = 0; i < length(list); ++i) {
            const fbs::Blob& b = *list->Get(static_cast<flatbuffers::uoffset_t>(i));
            LoadableBlob blob;
            blob.name = b.name() ? b.name()->str() : std::string();
            const std::string where = entry_name("blobs", i) + " ('" + blob.name + "')";
            if (blob.name.empty()) return fail(entry_name("blobs", i), "the blob has no name");
            if (names_.count(blob.name))
                return fail(where, "the name is used by blob " + std::to_string(names_[blob.name]) +
                                       " too");
            const uint64_t held = b.data() ? b.data()->size() : 0;
            if (b.size() != held)
                return fail(where, "it declares " + std::to_string(b.size()) + " bytes but holds " +
                                       std::to_string(held));
            blob.interface = static_cast<TaskInterface>(b.interface());
            blob.sub_interface = b.sub_interface();
            blob.version = version_of(b.version());
            if (held)
                blob.data.assign(reinterpret_cast<const std::byte*>(b.data()->data()),
                                 reinterpret_cast<const std::byte*>(b.data()->data()) + held);
            names_[blob.name] = static_cast<uint32_t>(i);
            out_.blobs.push_back(std::move(blob));
        }
        return Status();
    }

    Status memories() {
        const auto* list = root_.memory_list();
        if (length(list) == 0) return error("loadable: the memory list is empty");
        for (size_t i = 0; i < length(list); ++i) {
            const fbs::MemoryListEntry& m = *list->Get(static_cast<flatbuffers::uoffset_t>(i));
            const std::string where = entry_name("memory_list", i);
            if (Status id_status = check_id(where, m.id(), i); !id_status) return id_status;
            MemoryEntry e;
            const uint8_t domain = static_cast<uint8_t>(m.domain());
            if (domain > 1)
                return fail(where, "domain " + std::to_string(domain) +
                                       " is neither SYSTEM (0) nor SRAM (1)");
            e.domain = static_cast<LoadableDomain>(domain);
            e.flags = static_cast<uint16_t>(m.flags());
            if (e.flags & ~uint16_t(kMemoryAlloc | kMemorySet | kMemoryInput | kMemoryOutput))
                return fail(where, "flags " + std::to_string(e.flags) +
                                       " hold bits other than ALLOC, SET, INPUT and OUTPUT");
            if ((e.flags & kMemoryInput) && (e.flags & kMemoryOutput))
                return fail(where, "it is marked both INPUT and OUTPUT");
            e.size = m.size();
            if (e.size == 0 && (e.flags & (kMemoryAlloc | kMemoryInput | kMemoryOutput)))
                return fail(where, "its size is 0");
            e.alignment = m.alignment();
            if (e.alignment != 0 && !is_power_of_two(e.alignment))
                return fail(where,
                            "alignment " + std::to_string(e.alignment) + " is not a power of two");
            if (e.alignment > kMaxAlignment)
                return fail(where, "alignment " + std::to_string(e.alignment) +
                                       " is larger than the " + std::to_string(kMaxAlignment) +
                                       " bytes this runtime supports");
            if (e.bindable() && e.domain == LoadableDomain::Sram)
                return fail(where, "an INPUT or OUTPUT tensor cannot live in SRAM");
            if (e.flags & kMemorySet) {
                const size_t contents = length(m.contents()), offsets = length(m.offsets());
                if (contents != offsets)
                    return fail(where, "SET names " + std::to_string(contents) +
                                           " blobs but gives " + std::to_string(offsets) +
                                           " offsets");
                // The verifier checks a vector's length word, not that its 64-bit elements
                // sit on 8-byte boundaries as every FlatBuffers writer places them.
                if (offsets != 0 &&
                    reinterpret_cast<uintptr_t>(m.offsets()->Data()) % alignof(uint64_t) != 0)
                    return fail(where,
                                "its SET offsets are not on 8-byte boundaries (the "
                                "file is damaged)");
                for (size_t k = 0; k < contents; ++k) {
                    const auto* name = m.contents()->Get(static_cast<flatbuffers::uoffset_t>(k));
                    const std::string blob_name = name ? name->str() : std::string();
                    auto found = names_.find(blob_name);
                    if (found == names_.end())
                        return fail(where, "SET content '" + blob_name + "' names no blob");
                    const uint64_t offset =
                        m.offsets()->Get(static_cast<flatbuffers::uoffset_t>(k));
                    const uint64_t bytes = out_.blobs[found->second].data.size();
                    if (offset > e.size || bytes > e.size - offset)
                        return fail(where, "blob '" + blob_name + "' (" + std::to_string(bytes) +
                                               " bytes) at offset " + std::to_string(offset) +
                                               " does not fit in its " + std::to_string(e.size) +
                                               " bytes");
                    e.contents.push_back({found->second, offset});
                }
            }
            if (e.bindable()) {
                e.bind_id = m.bind_id();
                e.tensor_desc_id = m.tensor_desc_id();
            }
            out_.memories.push_back(std::move(e));
        }
        return Status();
    }

    Status addresses() {
        const auto* list = root_.address_list();
        for (size_t i = 0; i < length(list); ++i) {
            const fbs::AddressListEntry& a = *list->Get(static_cast<flatbuffers::uoffset_t>(i));
            const std::string where = entry_name("address_list", i);
            if (Status id_status = check_id(where, a.id(), i); !id_status) return id_status;
            if (a.mem_id() >= out_.memories.size())
                return fail(where, "mem_id " + std::to_string(a.mem_id()) + " is not one of the " +
                                       std::to_string(out_.memories.size()) + " memory entries");
            const MemoryEntry& m = out_.memories[a.mem_id()];
            if (a.offset() >= m.size && m.size != 0)
                return fail(where, "offset " + std::to_string(a.offset()) +
                                       " is past the end of memory " + std::to_string(a.mem_id()) +
                                       " (" + std::to_string(m.size) + " bytes)");
            out_.addresses.push_back({a.mem_id(), a.offset(), a.size()});
        }
        return Status();
    }

    Status events() {
        const auto* list = root_.event_list();
        for (size_t i = 0; i < length(list); ++i) {
            const fbs::EventListEntry& e = *list->Get(static_cast<flatbuffers::uoffset_t>(i));
            const std::string where = entry_name("event_list", i);
            if (Status id_status = check_id(where, e.id(), i); !id_status) return id_status;
            const uint8_t op = static_cast<uint8_t>(e.op());
            if (op > 1)
                return fail(where, "op " + std::to_string(op) + " is neither WAIT nor SIGNAL");
            out_.events.push_back({static_cast<uint8_t>(e.type()), e.target(), e.val(), op});
        }
        return Status();
    }

    Status tensor_descs() {
        const auto* list = root_.tensor_desc_list();
        for (size_t i = 0; i < length(list); ++i) {
            const fbs::TensorDescListEntry& t = *list->Get(static_cast<flatbuffers::uoffset_t>(i));
            const std::string where = entry_name("tensor_desc_list", i);
            TensorDescEntry d;
            d.name = t.name() ? t.name()->str() : std::string();
            d.mem_id = t.mem_id();
            if (d.mem_id >= out_.memories.size())
                return fail(where, "mem_id " + std::to_string(d.mem_id) + " is not one of the " +
                                       std::to_string(out_.memories.size()) + " memory entries");
            d.size = t.size();
            d.offset = t.offset();
            d.data_format = static_cast<uint8_t>(t.data_format());
            d.data_type = static_cast<uint8_t>(t.data_type());
            d.data_category = static_cast<uint8_t>(t.data_category());
            d.pixel_format = static_cast<uint8_t>(t.pixel_format());
            d.pixel_mapping = static_cast<uint8_t>(t.pixel_mapping());
            d.n = t.n();
            d.c = t.c();
            d.h = t.h();
            d.w = t.w();
            if (d.n < 0 || d.c < 0 || d.h < 0 || d.w < 0)
                return fail(where, "dimensions " + std::to_string(d.n) + "x" + std::to_string(d.c) +
                                       "x" + std::to_string(d.h) + "x" + std::to_string(d.w) +
                                       " (NxCxHxW) are negative");
            d.strides = {t.stride_0(), t.stride_1(), t.stride_2(), t.stride_3(),
                         t.stride_4(), t.stride_5(), t.stride_6(), t.stride_7()};
            out_.tensor_descs.push_back(std::move(d));
        }
        return Status();
    }

    // Dense bind ids per direction, each with a tensor descriptor.
    Status bindings() {
        for (int direction = 0; direction < 2; ++direction) {
            const bool input = direction == 0;
            std::map<uint16_t, uint16_t> by_bind_id;
            for (size_t i = 0; i < out_.memories.size(); ++i) {
                const MemoryEntry& m = out_.memories[i];
                if (!m.bindable() || m.input() != input) continue;
                const std::string where = entry_name("memory_list", i);
                if (m.tensor_desc_id >= out_.tensor_descs.size())
                    return fail(where, "tensor_desc_id " + std::to_string(m.tensor_desc_id) +
                                           " is not one of the " +
                                           std::to_string(out_.tensor_descs.size()) +
                                           " tensor descriptors");
                auto [it, inserted] = by_bind_id.emplace(m.bind_id, static_cast<uint16_t>(i));
                if (!inserted)
                    return fail(where, std::string(input ? "input" : "output") + " bind id " +
                                           std::to_string(m.bind_id) + " is used by memory entry " +
                                           std::to_string(it->second) + " too");
            }
            std::vector<uint16_t>& ids = input ? out_.input_memories : out_.output_memories;
            for (const auto& [bind_id, memory] : by_bind_id) {
                if (bind_id != ids.size())
                    return fail(entry_name("memory_list", memory),
                                std::string(input ? "input" : "output") + " bind id " +
                                    std::to_string(bind_id) + " leaves a gap (expected " +
                                    std::to_string(ids.size()) + ")");
                ids.push_back(memory);
            }
        }
        return Status();
    }

    // The version of the blob SET where an address-list entry points.
    BlobVersion blob_version_at(uint16_t address_id) const {
        const AddressEntry& a = out_.addresses[address_id];
        const MemoryEntry& m = out_.memories[a.mem_id];
        for (const MemoryContent& c : m.contents)
            if (c.offset == a.offset) return out_.blobs[c.blob].version;
        return {};
    }

    Status tasks() {
        const auto* list = root_.task_list();
        if (length(list) == 0) return error("loadable: the task list is empty");
        for (size_t i = 0; i < length(list); ++i) {
            const fbs::TaskListEntry& t = *list->Get(static_cast<flatbuffers::uoffset_t>(i));
            const std::string where = entry_name("task_list", i);
            if (Status id_status = check_id(where, t.id(), i); !id_status) return id_status;
            TaskEntry task;
            const uint32_t interface = static_cast<uint32_t>(t.interface());
            if (interface != 1 && interface != 2)
                return fail(where, "interface " + std::to_string(interface) +
                                       " is neither DLA1 (1) nor EMU1 (2)");
            task.interface = static_cast<TaskInterface>(interface);
            task.instance = t.instance();
            task.addresses = copy_ids(t.address_list());
            if (task.addresses.empty())
                return fail(where,
                            "its address list is empty (entry 0 must hold the network "
                            "descriptor)");
            if (task.addresses.size() > kMaxTaskAddresses)
                return fail(where, "its address list has " + std::to_string(task.addresses.size()) +
                                       " entries, more than the " +
                                       std::to_string(kMaxTaskAddresses) + " allowed");
            for (size_t k = 0; k < task.addresses.size(); ++k)
                if (task.addresses[k] >= out_.addresses.size())
                    return fail(
                        where, "address_list[" + std::to_string(k) + "] = " +
                                   std::to_string(task.addresses[k]) + " is not one of the " +
                                   std::to_string(out_.addresses.size()) + " address-list entries");
            task.pre_actions = copy_ids(t.pre_actions());
            task.post_actions = copy_ids(t.post_actions());
            for (const auto* actions : {&task.pre_actions, &task.post_actions})
                for (uint16_t event : *actions)
                    if (event >= out_.events.size())
                        return fail(where, "event " + std::to_string(event) +
                                               " is not one of the " +
                                               std::to_string(out_.events.size()) + " events");
            const AddressEntry& head = out_.addresses[task.addresses[0]];
            if (out_.memories[head.mem_id].domain != LoadableDomain::System)
                return fail(where,
                            "its network descriptor lies in SRAM, where the CPU cannot "
                            "read it");
            task.version = blob_version_at(task.addresses[0]);
            out_.tasks.push_back(std::move(task));
        }
        return Status();
    }

    Status submits() {
        const auto* list = root_.submit_list();
        if (length(list) == 0) return error("loadable: the submit list is empty");
        for (size_t i = 0; i < length(list); ++i) {
            const fbs::SubmitListEntry& s = *list->Get(static_cast<flatbuffers::uoffset_t>(i));
            const std::string where = entry_name("submit_list", i);
            if (Status id_status = check_id(where, s.id(), i); !id_status) return id_status;
            SubmitEntry entry{copy_ids(s.task_id())};
            if (entry.tasks.empty()) return fail(where, "it names no task");
            for (uint16_t task : entry.tasks)
                if (task >= out_.tasks.size())
                    return fail(where, "task " + std::to_string(task) + " is not one of the " +
                                           std::to_string(out_.tasks.size()) + " tasks");
            out_.submits.push_back(std::move(entry));
        }
        return Status();
    }

    Status relocs() {
        const auto* list = root_.reloc_list();
        for (size_t i = 0; i < length(list); ++i) {
            const fbs::RelocListEntry& r = *list->Get(static_cast<flatbuffers::uoffset_t>(i));
            const std::string where = entry_name("reloc_list", i);
            RelocEntry e{r.address_id(), r.write_id(),      r.offset(),
                         r.interface(),  r.sub_interface(), r.reloc_type()};
            if (e.address_id >= out_.addresses.size())
                return fail(where,
                            "address_id " + std::to_string(e.address_id) + " is not one of the " +
                                std::to_string(out_.addresses.size()) + " address-list entries");
            if (e.write_id >= out_.memories.size())
                return fail(where, "write_id " + std::to_string(e.write_id) +
                                       " is not one of the " +
                                       std::to_string(out_.memories.size()) + " memory entries");
            if (e.type != kRelocLineStride && e.type != kRelocSurfaceStride)
                return fail(where, "reloc_type " + std::to_string(e.type) +
                                       " is neither a line (1) nor a surface (2) stride");
            // The original compiler writes byte offsets (of a stride field inside a surface
            // descriptor, not always 4-byte aligned); its runtime's word indexing was a bug.
            const uint64_t size = out_.memories[e.write_id].size;
            if (size < 4 || e.offset > size - 4)
                return fail(where, "it patches the 4 bytes at byte offset " +
                                       std::to_string(e.offset) + " of memory " +
                                       std::to_string(e.write_id) + ", past its " +
                                       std::to_string(size) + " bytes");
            out_.relocs.push_back(e);
        }
        return Status();
    }

    const fbs::Loadable& root_;
    Loadable out_;
    std::map<std::string, uint32_t> names_;
};

}  // namespace

std::vector<bool> sealable_memories(const Loadable& l) {
    std::vector<bool> only(l.memories.size());
    for (size_t i = 0; i < l.memories.size(); ++i)
        only[i] = (l.memories[i].flags & kMemorySet) && !l.memories[i].bindable();
    auto exclude = [&](size_t memory) {
        if (memory < only.size()) only[memory] = false;
    };
    for (uint16_t m : l.input_memories) exclude(m);
    for (uint16_t m : l.output_memories) exclude(m);
    for (const TensorDescEntry& t : l.tensor_descs) exclude(t.mem_id);
    return only;
}

std::vector<std::byte> serialize_loadable(const Loadable& l) {
    flatbuffers::FlatBufferBuilder b(1024);
    auto version = [](const BlobVersion& v) { return fbs::Version(v.major, v.minor, v.sub_minor); };

    std::vector<flatbuffers::Offset<fbs::Blob>> blobs;
    for (const LoadableBlob& blob : l.blobs) {
        const auto name = b.CreateString(blob.name);
        const auto data =
            b.CreateVector(reinterpret_cast<const uint8_t*>(blob.data.data()), blob.data.size());
        const fbs::Version v = version(blob.version);
        blobs.push_back(fbs::CreateBlob(b, name, blob.data.size(),
                                        static_cast<fbs::Interface>(blob.interface),
                                        blob.sub_interface, &v, data));
    }
    std::vector<flatbuffers::Offset<fbs::MemoryListEntry>> memories;
    for (size_t i = 0; i < l.memories.size(); ++i) {
        const MemoryEntry& m = l.memories[i];
        std::vector<flatbuffers::Offset<flatbuffers::String>> names;
        std::vector<uint64_t> offsets;
        for (const MemoryContent& c : m.contents) {
            names.push_back(b.CreateString(l.blobs.at(c.blob).name));
            offsets.push_back(c.offset);
        }
        memories.push_back(fbs::CreateMemoryListEntry(
            b, static_cast<uint16_t>(i), static_cast<fbs::MemoryDomain>(m.domain),
            static_cast<fbs::MemoryFlags>(m.flags), m.size, m.alignment, b.CreateVector(names),
            b.CreateVector(offsets), m.bind_id, m.tensor_desc_id));
    }
    std::vector<flatbuffers::Offset<fbs::AddressListEntry>> addresses;
    for (size_t i = 0; i < l.addresses.size(); ++i)
        addresses.push_back(
            fbs::CreateAddressListEntry(b, static_cast<uint16_t>(i), l.addresses[i].mem_id,
                                        l.addresses[i].offset, l.addresses[i].size));
    std::vector<flatbuffers::Offset<fbs::EventListEntry>> events;
    for (size_t i = 0; i < l.events.size(); ++i)
        events.push_back(fbs::CreateEventListEntry(
            b, static_cast<uint16_t>(i), static_cast<fbs::EventType>(l.events[i].type),
            l.events[i].target, l.events[i].value, static_cast<fbs::EventOp>(l.events[i].op)));
    std::vector<flatbuffers::Offset<fbs::TaskListEntry>> tasks;
    for (size_t i = 0; i < l.tasks.size(); ++i) {
        const TaskEntry& t = l.tasks[i];
        tasks.push_back(fbs::CreateTaskListEntry(
            b, static_cast<uint16_t>(i), static_cast<fbs::Interface>(t.interface), t.instance,
            b.CreateVector(t.addresses), b.CreateVector(t.pre_actions),
            b.CreateVector(t.post_actions)));
    }
    std::vector<flatbuffers::Offset<fbs::SubmitListEntry>> submits;
    for (size_t i = 0; i < l.submits.size(); ++i)
        submits.push_back(fbs::CreateSubmitListEntry(b, static_cast<uint16_t>(i),
                                                     b.CreateVector(l.submits[i].tasks)));
    std::vector<flatbuffers::Offset<fbs::TensorDescListEntry>> descs;
    for (size_t i = 0; i < l.tensor_descs.size(); ++i) {
        const TensorDescEntry& d = l.tensor_descs[i];
        descs.push_back(fbs::CreateTensorDescListEntry(
            b, b.CreateString(d.name), static_cast<uint16_t>(i), d.mem_id, d.size, d.offset,
            static_cast<fbs::DataFormat>(d.data_format), static_cast<fbs::DataType>(d.data_type),
            static_cast<fbs::DataCategory>(d.data_category),
            static_cast<fbs::PixelFormat>(d.pixel_format),
            static_cast<fbs::PixelMapping>(d.pixel_mapping), d.n, d.c, d.h, d.w, d.strides[0],
            d.strides[1], d.strides[2], d.strides[3], d.strides[4], d.strides[5], d.strides[6],
            d.strides[7]));
    }
    std::vector<flatbuffers::Offset<fbs::RelocListEntry>> relocs;
    for (const RelocEntry& r : l.relocs)
        relocs.push_back(fbs::CreateRelocListEntry(b, r.address_id, r.write_id, r.offset,
                                                   r.interface, r.sub_interface, r.type));
    const fbs::Version v = version(l.version);
    b.Finish(fbs::CreateLoadable(b, &v, b.CreateVector(tasks), b.CreateVector(memories),
                                 b.CreateVector(addresses), b.CreateVector(events),
                                 b.CreateVector(blobs), b.CreateVector(descs),
                                 b.CreateVector(relocs), b.CreateVector(submits)));
    const auto* p = reinterpret_cast<const std::byte*>(b.GetBufferPointer());
    return std::vector<std::byte>(p, p + b.GetSize());
}

Result<uint64_t> measure_loadable(const std::byte* data, uint64_t readable) {
    readable = std::min<uint64_t>(readable, kMaxLoadableBytes);
    if (readable < 8)
        return error("loadable: ", readable,
                     " bytes is too short to be a loadable (at least 8 are needed)");
    // In place and without alignment checks: the buffer's own alignment is unknown here.
    if (Status s = verify({data, readable}, false); !s) return s;
    const uint64_t end = ExtentWalker(reinterpret_cast<const uint8_t*>(data)).walk();
    return std::min<uint64_t>((end + 3) / 4 * 4, readable);
}

Result<Loadable> parse_loadable(std::span<const std::byte> bytes) {
    if (bytes.size() < 8)
        return error("loadable: ", bytes.size(),
                     " bytes is too short to be a loadable (at least 8 are needed)");
    if (bytes.size() > kMaxLoadableBytes)
        return error("loadable: ", bytes.size(),
                     " bytes is larger than the 2 GiB a FlatBuffer can hold");
    uint32_t root_offset = 0;
    std::memcpy(&root_offset, bytes.data(), 4);
    if (root_offset == 0 || root_offset % 4 != 0 || root_offset > bytes.size() - 4)
        return error("loadable: the root offset ", root_offset,
                     " does not point to a table inside the ", bytes.size(),
                     " bytes (not a loadable?)");
    const bool end_aligned = bytes.size() % 8 == 4;
    Placed placed = place(bytes, end_aligned);
    Status verified = verify(placed.bytes);
    if (!verified && end_aligned) {
        // Not aligned to its end after all: try it as it is.
        Placed plain = place(bytes, false);
        if (verify(plain.bytes)) {
            placed = std::move(plain);
            verified = Status();
        }
    }
    if (!verified) return verified;
    const auto* root = flatbuffers::GetRoot<fbs::Loadable>(placed.bytes.data());
    return LoadableParser(*root).parse();
}

}  // namespace nvdla::runtime
