// The walk-through `make run` shows until the runtime exists: one digit image through the
// in-memory formats of several configurations, each step checked by a round trip.
#pragma once

#include <ostream>
#include <string>

namespace nvdla::tools {

void print_config_table(std::ostream& out);
int run_demo(const std::string& shared_dir);

}  // namespace nvdla::tools
