// Threads for one layer (parallel.hpp).
#include "emu/parallel.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <vector>

namespace nvdla::emu {
namespace {

// Below this much work per thread, starting a thread (tens of microseconds) costs more than it
// saves.
constexpr uint64_t kWorkPerThread = uint64_t(1) << 21;

}  // namespace

unsigned default_emu_threads() {
    static const unsigned threads = [] {
        if (const char* v = std::getenv("NVDLA_EMU_THREADS"); v && *v) {
            char* end = nullptr;
            const long n = std::strtol(v, &end, 10);
            if (*end == '\0' && n > 0) return static_cast<unsigned>(std::min(n, 256L));
        }
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0)
            return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
        return std::max(1u, std::thread::hardware_concurrency());
    }();
    return threads;
}

void parallel_for(unsigned threads, uint64_t count, uint64_t work,
                  const std::function<void(uint64_t, uint64_t)>& fn) {
    const uint64_t parts = std::min<uint64_t>(
        {threads ? threads : 1, count, std::max<uint64_t>(1, work / kWorkPerThread)});
    if (parts <= 1) {
        if (count) fn(0, count);
        return;
    }
    std::vector<std::thread> helpers;
    helpers.reserve(parts - 1);
    const auto bound = [&](uint64_t i) { return count * i / parts; };
    for (uint64_t i = 1; i < parts; ++i)
        helpers.emplace_back([&, i] { fn(bound(i), bound(i + 1)); });
    fn(0, bound(1));
    for (std::thread& t : helpers) t.join();
}

}  // namespace nvdla::emu
