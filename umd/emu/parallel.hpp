// Several threads for one layer: the output is split into contiguous ranges that threads
// compute independently, each output by the same arithmetic as with one thread, so results do
// not depend on the thread count. Private to umd/emu.
#pragma once

#include <cstdint>
#include <functional>

namespace nvdla::emu {

// NVDLA_EMU_THREADS when set to a positive number, else every core the process may use.
unsigned default_emu_threads();

// How many of `threads` pay off for `work` (multiply-adds or elements): handing work to another
// thread costs a few microseconds, so below about 2^21 per thread fewer threads do it.
unsigned threads_for(unsigned threads, uint64_t work);
// What threads_for counts for copying, encoding or comparing one byte: about as long as 8
// multiply-adds.
constexpr uint64_t kCopyWorkPerByte = 8;
// ... and for comparing one byte with memcmp where nothing else is done with it (a layer's
// weights with the cached ones): a second thread pays off from 64 KiB each, a fraction of what
// it needs for MAC work, and the pool's threads wait while the calling thread compares.
constexpr uint64_t kCompareWorkPerByte = 32;
// Tests: the work per thread threads_for asks for (0: the default), so that small layers also
// run on several threads.
void set_work_per_thread(uint64_t work);

// Calls fn(part) once for every part < parts, at the same time: part 0 on the calling thread,
// the others on threads kept from call to call (a process-wide pool, joined at exit and
// started again in a forked child). Returns when every part has returned. When the pool is
// busy with another call (a nested one, or another device's), the calling thread runs the parts
// itself, 0 first: a part may wait for what part 0 or a lower part does, never for a higher one.
void run_parts(unsigned parts, const std::function<void(unsigned part)>& fn);

// Blocks 0 .. count-1 made by produce(part, block, slot) on up to `threads` threads (part <
// threads; the calling thread is part 0) and handed to consume(block, slot) on the calling
// thread, in order. A block is made into slot block % slots, at most `slots` blocks ahead of
// the one consumed; which thread makes which block varies from run to run, the order of the
// consume() calls does not.
void produce_in_order(
    unsigned threads, uint32_t count, uint32_t slots,
    const std::function<void(unsigned part, uint32_t block, uint32_t slot)>& produce,
    const std::function<void(uint32_t block, uint32_t slot)>& consume);

// Blocks 0 .. count-1, each prepared by prepare(block, slot) on the calling thread, in order,
// then made by make(part, block, slot) on one of up to `threads` threads (part < threads; the
// calling thread is part 0 and makes blocks whenever it cannot prepare the next one yet). A
// block is prepared into slot block % slots once the block before it in that slot is made;
// which thread makes which block varies from run to run, the order of the prepare() calls does
// not. Returns when every block is made.
void prepare_then_make(
    unsigned threads, uint32_t count, uint32_t slots,
    const std::function<void(uint32_t block, uint32_t slot)>& prepare,
    const std::function<void(unsigned part, uint32_t block, uint32_t slot)>& make);

// Calls fn(begin, end) over contiguous ranges covering [0, count), on up to `threads` threads
// (the calling one included), as many as threads_for(threads, work) gives; which thread takes
// which range, and how many ranges there are, varies.
void parallel_for(unsigned threads, uint64_t count, uint64_t work,
                  const std::function<void(uint64_t, uint64_t)>& fn);

// Where the threads of the process's calls on several threads waited, in seconds summed over
// threads (nvdla_bench_networks prints them per image): what a split leaves idle.
struct ParallelStats {
    uint64_t calls = 0;        // run_parts calls that ran on the pool's threads
    double end_idle = 0;       // parts from their return to their call's end
    double caller_waited = 0;  // part 0 in produce_in_order's and prepare_then_make's waits
    double others_waited = 0;  // the other parts there
    double others_busy = 0;    // the pool's threads running parts (their waits included)
};
ParallelStats parallel_stats();

}  // namespace nvdla::emu
