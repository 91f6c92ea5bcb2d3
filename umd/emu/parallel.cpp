// Threads for one layer (parallel.hpp).
#include "emu/parallel.hpp"

#include <pthread.h>
#include <sched.h>

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace nvdla::emu {
namespace {

// Below this much work per thread, handing a range to another thread (waking it, a few
// microseconds, and its caches starting cold) costs more than it saves.
constexpr uint64_t kWorkPerThread = uint64_t(1) << 21;
std::atomic<uint64_t> g_work_per_thread{kWorkPerThread};
// How long a pool thread waits for the next call spinning before it sleeps.
constexpr std::chrono::microseconds kSpin{100};
// parallel_for's ranges per thread.
constexpr uint64_t kRangesPerThread = 4;

using Clock = std::chrono::steady_clock;

// parallel_stats()'s sums, in nanoseconds.
struct Waits {
    std::atomic<uint64_t> calls{0}, end_idle{0}, caller_waited{0}, others_waited{0}, others_busy{0};
    static void add(std::atomic<uint64_t>& sum, Clock::duration d) {
        sum.fetch_add(static_cast<uint64_t>(std::chrono::nanoseconds(d).count()),
                      std::memory_order_relaxed);
    }
};
Waits g_waits;

// Adds the time from its making to its end to a sum of Waits.
class Timed {
  public:
    explicit Timed(std::atomic<uint64_t>& sum) : sum_(sum) {}
    Timed(const Timed&) = delete;
    Timed& operator=(const Timed&) = delete;
    ~Timed() { Waits::add(sum_, Clock::now() - start_); }

  private:
    std::atomic<uint64_t>& sum_;
    const Clock::time_point start_ = Clock::now();
};

// Spins while `waiting()` holds, for at most kSpin: handing work between threads often takes
// less than a sleeping thread of this virtual machine takes to wake.
template <class Waiting>
void spin_while(const Waiting& waiting) {
    const auto start = std::chrono::steady_clock::now();
    while (waiting() && std::chrono::steady_clock::now() - start < kSpin)
        for (int i = 0; i < 16; ++i) _mm_pause();
}

// The shared state of produce_in_order and prepare_then_make: a mutex for their counters and a
// way to wait for another thread to change them. A wait spins first (kSpin): the threads hand
// blocks to each other every few tens of microseconds, less than a sleeping thread of this
// virtual machine takes to wake, and a condition variable's wake-up costs the notifying thread
// a futex call too (docs/emu/performance.md, "Two threads"); a thread that waits longer sleeps.
class Handoff {
  public:
    std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }
    // With the lock held: the counters changed.
    void changed() {
        version_.fetch_add(1, std::memory_order_release);
        if (sleepers_ > 0) wake_.notify_all();
    }
    // With the lock held: returns, the lock held again, once another thread called changed().
    void wait(std::unique_lock<std::mutex>& lock, unsigned part) {
        const Timed timed(part == 0 ? g_waits.caller_waited : g_waits.others_waited);
        const uint64_t seen = version_.load(std::memory_order_relaxed);
        lock.unlock();
        spin_while([&] { return version_.load(std::memory_order_acquire) == seen; });
        lock.lock();
        if (version_.load(std::memory_order_relaxed) != seen) return;
        ++sleepers_;
        wake_.wait(lock, [&] { return version_.load(std::memory_order_relaxed) != seen; });
        --sleepers_;
    }

  private:
    std::mutex mutex_;
    std::condition_variable wake_;
    std::atomic<uint64_t> version_{0};  // changed() calls, read without the lock too
    unsigned sleepers_ = 0;             // threads in wake_.wait
};

// Threads that wait for parts of one call at a time. Starting threads on every call cost 40 to
// 100 us per layer (docs/emu/performance.md, "Two threads").
class Pool {
  public:
    Pool() = default;
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;
    ~Pool() {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (std::thread& t : workers_) t.join();
    }

    // false (nothing run) when another call holds the pool.
    bool run(unsigned parts, const std::function<void(unsigned)>& fn) {
        std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
        if (!busy) return false;
        std::unique_lock<std::mutex> lock(mutex_);
        try {
            while (workers_.size() + 1 < parts) workers_.emplace_back([this] { work(); });
        } catch (const std::system_error&) {
            // No more threads: the calling thread runs the parts no worker takes.
        }
        ends_.assign(parts, Clock::time_point{});  // (kept: no allocation per call)
        job_ = &fn;
        parts_ = parts;
        next_ = 1;
        unfinished_ = parts - 1;
        calls_.fetch_add(1, std::memory_order_release);
        lock.unlock();
        wake_.notify_all();
        run_part(fn, 0);
        lock.lock();
        while (next_ < parts_) {
            const unsigned part = next_++;
            lock.unlock();
            run_part(fn, part);
            lock.lock();
            --unfinished_;
        }
        // The other parts often end within microseconds of this one: awaited spinning first.
        if (unfinished_.load(std::memory_order_relaxed) != 0) {
            lock.unlock();
            spin_while([this] { return unfinished_.load(std::memory_order_acquire) != 0; });
            lock.lock();
        }
        done_.wait(lock, [this] { return unfinished_.load(std::memory_order_relaxed) == 0; });
        job_ = nullptr;
        // The time each part waited for the call's end.
        const Clock::time_point end = Clock::now();
        g_waits.calls.fetch_add(1, std::memory_order_relaxed);
        for (const Clock::time_point part_end : ends_) Waits::add(g_waits.end_idle, end - part_end);
        return true;
    }

  private:
    // fn(part), its end noted in ends_ (each part's slot is written by its own thread only).
    void run_part(const std::function<void(unsigned)>& fn, unsigned part) {
        fn(part);
        ends_[part] = Clock::now();
    }

    void work() {
        std::unique_lock<std::mutex> lock(mutex_);
        const auto ready = [this] { return stop_ || (job_ && next_ < parts_); };
        for (;;) {
            if (!ready()) {
                // A layer makes its calls back to back (CDMA's rows, CSC's plane, the blocks),
                // each often shorter than a sleeping thread takes to wake: the next call is
                // awaited spinning for a while first.
                const uint64_t seen = calls_.load(std::memory_order_relaxed);
                lock.unlock();
                spin_while([&] { return calls_.load(std::memory_order_acquire) == seen; });
                lock.lock();
            }
            wake_.wait(lock, ready);
            if (stop_) return;
            const unsigned part = next_++;
            const std::function<void(unsigned)>& fn = *job_;
            lock.unlock();
            {
                const Timed timed(g_waits.others_busy);
                run_part(fn, part);
            }
            lock.lock();
            if (--unfinished_ == 0) done_.notify_all();
        }
    }

    std::mutex busy_;  // held by the call the pool runs
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::vector<std::thread> workers_;
    const std::function<void(unsigned)>* job_ = nullptr;
    std::vector<Clock::time_point> ends_;  // each part's end, in the call the pool runs
    unsigned parts_ = 0, next_ = 0;
    std::atomic<unsigned> unfinished_{0};  // changed with the lock held, read without it too
    bool stop_ = false;
    std::atomic<uint64_t> calls_{0};  // calls run so far, read without the lock
};

// The process's pool, made on first use and joined at exit. A forked child has none of the
// parent's threads: it leaves the parent's pool untouched (its locks may be held by threads
// that do not exist there) and makes its own.
struct PoolHolder {
    std::mutex mutex;
    Pool* pool = nullptr;
    // A parent's pools in a child: never used nor destroyed (their threads are not there).
    std::vector<Pool*>* forsaken = new std::vector<Pool*>;

    PoolHolder() {
        // The holder's lock is held across fork(), so that the child's copy is in a known state.
        pthread_atfork([] { holder().mutex.lock(); }, [] { holder().mutex.unlock(); },
                       [] {
                           PoolHolder& h = holder();
                           if (h.pool) h.forsaken->push_back(h.pool);
                           h.pool = nullptr;
                           h.mutex.unlock();
                       });
    }
    ~PoolHolder() {
        const std::lock_guard<std::mutex> lock(mutex);
        delete pool;
        pool = nullptr;
    }
    static PoolHolder& holder() {
        static PoolHolder h;
        return h;
    }
};

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

unsigned threads_for(unsigned threads, uint64_t work) {
    const uint64_t per_thread = g_work_per_thread.load(std::memory_order_relaxed);
    return static_cast<unsigned>(
        std::min<uint64_t>(std::max(1u, threads), std::max<uint64_t>(1, work / per_thread)));
}

void set_work_per_thread(uint64_t work) {
    g_work_per_thread.store(work ? work : kWorkPerThread, std::memory_order_relaxed);
}

void run_parts(unsigned parts, const std::function<void(unsigned)>& fn) {
    if (parts > 1) {
        PoolHolder& h = PoolHolder::holder();
        Pool* pool = nullptr;
        {
            const std::lock_guard<std::mutex> lock(h.mutex);
            if (!h.pool) h.pool = new Pool;
            pool = h.pool;
        }
        if (pool->run(parts, fn)) return;
    }
    for (unsigned part = 0; part < parts; ++part) fn(part);
}

void produce_in_order(unsigned threads, uint32_t count, uint32_t slots,
                      const std::function<void(unsigned, uint32_t, uint32_t)>& produce,
                      const std::function<void(uint32_t, uint32_t)>& consume) {
    if (count == 0) return;
    slots = std::max(1u, slots);
    const unsigned parts = std::min(std::max(1u, threads), count);
    if (parts == 1) {
        // Alone, without the lock and the hand-over: each block is made, then handed on.
        for (uint32_t block = 0; block < count; ++block) {
            produce(0, block, block % slots);
            consume(block, block % slots);
        }
        return;
    }
    Handoff handoff;
    uint32_t next = 0, consumed = 0;
    std::vector<uint32_t> made(slots, UINT32_MAX);  // the block each slot holds
    // With the lock held: makes the next block if there is one and its slot is free.
    const auto make_next = [&](std::unique_lock<std::mutex>& lock, unsigned part) {
        if (next >= count || next - consumed >= slots) return false;
        const uint32_t block = next++;
        lock.unlock();
        produce(part, block, block % slots);
        lock.lock();
        made[block % slots] = block;
        handoff.changed();
        return true;
    };
    const auto run_part = [&](unsigned part) {
        std::unique_lock<std::mutex> lock = handoff.lock();
        if (part != 0) {
            while (next < count)
                if (!make_next(lock, part)) handoff.wait(lock, part);
            return;
        }
        // The consumer makes blocks too while the next one is not there.
        for (uint32_t block = 0; block < count; ++block) {
            while (made[block % slots] != block)
                if (!make_next(lock, 0)) handoff.wait(lock, 0);
            lock.unlock();
            consume(block, block % slots);
            lock.lock();
            consumed = block + 1;
            handoff.changed();
        }
    };
    run_parts(parts, std::cref(run_part));  // (by reference: no copy of the captures on the heap)
}

void prepare_then_make(unsigned threads, uint32_t count, uint32_t slots,
                       const std::function<void(uint32_t, uint32_t)>& prepare,
                       const std::function<void(unsigned, uint32_t, uint32_t)>& make) {
    if (count == 0) return;
    slots = std::max(1u, slots);
    const unsigned parts = std::min(std::max(1u, threads), count);
    if (parts == 1) {
        // Alone, without the lock and the hand-over: each block is prepared, then made.
        for (uint32_t block = 0; block < count; ++block) {
            prepare(block, block % slots);
            make(0, block, block % slots);
        }
        return;
    }
    Handoff handoff;
    uint32_t prepared = 0, started = 0, finished = 0;
    std::vector<uint32_t> made(slots, UINT32_MAX);  // the last block made in each slot
    // With the lock held: makes the next prepared block if there is one.
    const auto make_next = [&](std::unique_lock<std::mutex>& lock, unsigned part) {
        if (started >= prepared) return false;
        const uint32_t block = started++;
        lock.unlock();
        make(part, block, block % slots);
        lock.lock();
        made[block % slots] = block;
        ++finished;
        handoff.changed();
        return true;
    };
    const auto run_part = [&](unsigned part) {
        std::unique_lock<std::mutex> lock = handoff.lock();
        if (part != 0) {
            while (started < count)
                if (!make_next(lock, part)) handoff.wait(lock, part);
            return;
        }
        for (uint32_t block = 0; block < count; ++block) {
            // The slot is free once the block before it there is made.
            while (block >= slots && made[block % slots] != block - slots)
                if (!make_next(lock, 0)) handoff.wait(lock, 0);
            lock.unlock();
            prepare(block, block % slots);
            lock.lock();
            prepared = block + 1;
            handoff.changed();
        }
        while (finished < count)
            if (!make_next(lock, 0)) handoff.wait(lock, 0);
    };
    run_parts(parts, std::cref(run_part));
}

ParallelStats parallel_stats() {
    const auto seconds = [](const std::atomic<uint64_t>& ns) {
        return double(ns.load(std::memory_order_relaxed)) * 1e-9;
    };
    return {g_waits.calls.load(std::memory_order_relaxed), seconds(g_waits.end_idle),
            seconds(g_waits.caller_waited), seconds(g_waits.others_waited),
            seconds(g_waits.others_busy)};
}

void parallel_for(unsigned threads, uint64_t count, uint64_t work,
                  const std::function<void(uint64_t, uint64_t)>& fn) {
    const uint64_t parts = std::min<uint64_t>(threads_for(threads, work), count);
    if (parts <= 1) {
        if (count) fn(0, count);
        return;
    }
    // A few ranges per thread, each taken by the next thread free: a thread that starts late
    // (woken late, or without a core for a while) takes fewer, instead of the others waiting
    // for its share.
    const uint64_t ranges = std::min<uint64_t>(count, parts * kRangesPerThread);
    std::atomic<uint64_t> next{0};
    const auto run_part = [&](unsigned) {
        for (uint64_t i = next.fetch_add(1, std::memory_order_relaxed); i < ranges;
             i = next.fetch_add(1, std::memory_order_relaxed))
            fn(count * i / ranges, count * (i + 1) / ranges);
    };
    run_parts(static_cast<unsigned>(parts), std::cref(run_part));
}

}  // namespace nvdla::emu
