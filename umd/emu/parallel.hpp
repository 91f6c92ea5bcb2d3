// Several threads for one layer: the output is split into contiguous ranges that threads
// compute independently, each output by the same arithmetic as with one thread, so results do
// not depend on the thread count. Private to umd/emu.
#pragma once

#include <cstdint>
#include <functional>

namespace nvdla::emu {

// NVDLA_EMU_THREADS when set to a positive number, else every core the process may use.
unsigned default_emu_threads();

// Calls fn(begin, end) over contiguous ranges covering [0, count), on up to `threads` threads
// (the calling one included); on the calling thread alone when `work` (multiply-adds or
// elements) is too small for threads to pay off.
void parallel_for(unsigned threads, uint64_t count, uint64_t work,
                  const std::function<void(uint64_t, uint64_t)>& fn);

}  // namespace nvdla::emu
