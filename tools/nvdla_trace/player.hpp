// Replays a parsed trace against the emulated device and checks its results.
#pragma once

#include <cstdint>
#include <ostream>

#include "nvdla/hw_config.hpp"
#include "trace.hpp"

namespace nvdla::trace {

struct Outcome {
    int passed = 0, failed = 0, skipped = 0;
    double seconds = 0;  // replay time (register writes, model, checks)
};

// Runs every command of t on a fresh device of configuration cfg, printing one line per check
// to out (and every command with verbose).
Outcome play(const Trace& t, const HwConfig& cfg, std::ostream& out, bool verbose);

// The file of a mem_load/load_mem/check_file that the trace directory lacks (empty if none):
// some hardware tests reference data that is not public.
std::filesystem::path first_missing_file(const Trace& t);

}  // namespace nvdla::trace
