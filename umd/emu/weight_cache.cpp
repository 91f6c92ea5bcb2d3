#include <algorithm>

#include "emu/conv_layer.hpp"

namespace nvdla::emu::conv {

ConvWeights& WeightCache::entry(MemoryPort port, uint64_t address) {
    ++clock_;
    ConvWeights* w = expected_;
    if (!w || w->address != address || w->port != port) {
        w = &find_or_add(port, address);
        if (previous_) previous_->next_lookup = w;
    }
    w->last_use = clock_;
    previous_ = w;
    expected_ = w->next_lookup;
    return *w;
}

ConvWeights& WeightCache::find_or_add(MemoryPort port, uint64_t address) {
    const Place place{port, address};
    if (const auto found = entries_.find(place); found != entries_.end()) return *found->second;
    // Room for the new entry: the least recently used ones go while over either bound.
    const auto bytes = [](const ConvWeights& w) {
        return w.source.capacity() + w.compressed_source.capacity() +
               w.values.capacity() * sizeof(int16_t) + w.packed_bytes + w.reordered_bytes;
    };
    uint64_t total = 0;
    for (const auto& [_, e] : entries_) total += bytes(*e);
    while (!entries_.empty() && (entries_.size() >= kMaxEntries || total > kMaxBytes)) {
        const auto oldest = std::min_element(
            entries_.begin(), entries_.end(),
            [](const auto& a, const auto& b) { return a.second->last_use < b.second->last_use; });
        // Only the most recent entry's next_lookup can name it (any other entry's successor was
        // looked up after that entry, so it goes later), and that one is set anew right after
        // this. The most recent entry itself goes only when the bytes bound empties the cache.
        const ConvWeights* gone = oldest->second.get();
        total -= bytes(*gone);
        if (previous_ == gone) previous_ = nullptr;
        if (expected_ == gone) expected_ = nullptr;
        entries_.erase(oldest);
    }
    ConvWeights& w = *entries_.emplace(place, std::make_unique<ConvWeights>()).first->second;
    w.port = port;
    w.address = address;
    return w;
}

}  // namespace nvdla::emu::conv
