// The weight cache's lookup: the entry that followed the previous one last time is tried before
// the hash table; whatever the order of lookups, each (port, address) has one entry of its own.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>
#include <vector>

#include "emu/conv_layer.hpp"
#include "test_support.hpp"

namespace {

using nvdla::emu::MemoryPort;
using nvdla::emu::conv::ConvWeights;
using nvdla::emu::conv::WeightCache;
using Place = std::pair<MemoryPort, uint64_t>;

// Looks every place up in turn and checks the entry against a plain map of the entries seen.
void look_up(WeightCache& cache, const std::vector<Place>& places,
             std::map<Place, ConvWeights*>& seen) {
    for (const Place& p : places) {
        ConvWeights& w = cache.entry(p.first, p.second);
        ASSERT_EQ(w.port, p.first);
        ASSERT_EQ(w.address, p.second);
        const auto [it, added] = seen.emplace(p, &w);
        ASSERT_EQ(it->second, &w) << "another entry for address " << p.second;
    }
}

TEST(WeightCacheLookup, ARunInTheSameOrderFindsTheSameEntries) {
    WeightCache cache;
    std::vector<Place> run;
    for (uint64_t i = 0; i < 50; ++i) run.emplace_back(MemoryPort::Primary, 0x10000 + i * 0x400);
    std::map<Place, ConvWeights*> seen;
    for (int pass = 0; pass < 3; ++pass) look_up(cache, run, seen);
    EXPECT_EQ(seen.size(), run.size());
}

TEST(WeightCacheLookup, TheOtherPortOrAddressIsNotTakenForTheExpectedEntry) {
    // The second run asks, where the first asked for (Primary, a), for (Secondary, a) and
    // then (Primary, a + 1): neither is the expected entry.
    WeightCache cache;
    std::map<Place, ConvWeights*> seen;
    look_up(cache, {{MemoryPort::Primary, 0x100}, {MemoryPort::Primary, 0x2000}}, seen);
    look_up(cache, {{MemoryPort::Primary, 0x100}, {MemoryPort::Secondary, 0x2000}}, seen);
    look_up(cache, {{MemoryPort::Primary, 0x100}, {MemoryPort::Primary, 0x2001}}, seen);
    look_up(cache, {{MemoryPort::Primary, 0x100}, {MemoryPort::Primary, 0x2000}}, seen);
    EXPECT_EQ(seen.size(), 4u);
}

TEST(WeightCacheLookup, RandomOrdersWithRepeatsAndDeviations) {
    auto rng = nvdla::test::rng_for_test();
    WeightCache cache;
    std::map<Place, ConvWeights*> seen;
    std::vector<Place> run;
    for (uint64_t i = 0; i < 200; ++i)
        run.emplace_back(rng() % 2 ? MemoryPort::Primary : MemoryPort::Secondary,
                         0x1000 * (rng() % 64) + (rng() % 2));
    for (int pass = 0; pass < 20; ++pass) {
        std::vector<Place> changed = run;
        for (int k = 0; k < 10; ++k) {
            Place& p = changed[rng() % changed.size()];
            if (rng() % 2)
                p.first =
                    p.first == MemoryPort::Primary ? MemoryPort::Secondary : MemoryPort::Primary;
            else
                p.second ^= 1;
        }
        look_up(cache, pass % 2 ? changed : run, seen);
    }
}

TEST(WeightCacheLookup, EvictedEntriesAreNotExpectedAgain) {
    // A cycle longer than the cache: every lookup misses, and the entries it expects have gone.
    WeightCache cache;
    std::vector<Place> run;
    for (uint64_t i = 0; i < WeightCache::kMaxEntries + 5; ++i)
        run.emplace_back(MemoryPort::Primary, i * 0x100);
    for (int pass = 0; pass < 2; ++pass) {
        std::map<Place, ConvWeights*> seen;  // entries are dropped: each pass anew
        for (const Place& p : run) {
            ConvWeights& w = cache.entry(p.first, p.second);
            ASSERT_EQ(w.address, p.second);
            ASSERT_TRUE(w.values.empty());
            w.values = {int16_t(p.second >> 8)};
        }
    }
    // The most recent ones stayed, each with its own values.
    for (uint64_t i = run.size() - 10; i < run.size(); ++i)
        EXPECT_EQ(cache.entry(MemoryPort::Primary, i * 0x100).values,
                  (std::vector<int16_t>{int16_t(i)}));
}

TEST(WeightCacheLookup, ADroppedEntryComesBackEmpty) {
    // x, y, z, x, then entries enough to fill the cache: y goes (the least recently used)
    // while x stays; x keeps its values, y comes back empty.
    WeightCache cache;
    const uint64_t x = 0x100, y = 0x200, z = 0x300;
    cache.entry(MemoryPort::Primary, x).values = {5};
    cache.entry(MemoryPort::Primary, y).values = {7};
    cache.entry(MemoryPort::Primary, z);
    cache.entry(MemoryPort::Primary, x);
    for (uint64_t i = 0; i + 2 < WeightCache::kMaxEntries; ++i)
        cache.entry(MemoryPort::Secondary, 0x10000 + i * 0x100);
    EXPECT_EQ(cache.entry(MemoryPort::Primary, x).values, (std::vector<int16_t>{5}));
    ConvWeights& again = cache.entry(MemoryPort::Primary, y);
    EXPECT_EQ(again.address, y);
    EXPECT_TRUE(again.values.empty());
}

}  // namespace
