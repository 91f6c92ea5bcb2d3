// nvdla_runtime's two jobs: running one loadable (the original tool's behaviour, plus timing,
// profiles and machine-readable output) and running the regression loadables against their
// goldens.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvdla/runtime.hpp"
#include "nvdla/runtime_dimg.hpp"

namespace nvdla::tool {

struct Options {
    std::string loadable;
    std::string image;
    std::string input_dir;  // -i: must exist when given
    std::string output = "output.dimg";
    std::string backend = "auto";
    std::string device;  // a render node for the drm backend (default: NVDLA_DEVICE, else found)
    std::string config = "auto";
    std::string expect_md5;  // 32 hex digits, or a file whose first word is the digest
    std::string regression_dir;
    // Class names, one per line (line i names class i); without it, the loadable's side file
    // (the loadable's path with the extension replaced by .labels) when it exists.
    std::string labels;
    dimg::Numbering numbering = dimg::Numbering::Golden;
    ImageInputOptions image_options;
    bool rawdump = false;
    bool json = false;
    bool profile = false;
    uint32_t topk = 0;
    uint32_t iterations = 1;
    uint32_t threads = 0;
    std::string trace;  // --trace: the last run as a Chrome trace-event file (implies --profile) //
                        // emulator threads per operation (0: NVDLA_EMU_THREADS or all cores)
};

// A runtime on the backend the options ask for, the configuration given or, with "auto" on the
// emulator, the first configuration whose validation accepts every task of the loadable.
struct Opened {
    std::unique_ptr<Runtime> runtime;
    std::shared_ptr<Network> network;
    std::unique_ptr<Context> context;
};
Result<Opened> open_for(const Options& options, const std::string& loadable,
                        const std::string& config);

// Times of repeated runs.
struct LatencyStats {
    uint32_t runs = 0;
    std::chrono::nanoseconds mean{0}, min{0}, p50{0}, p90{0}, p99{0}, max{0};
};
LatencyStats latency_stats(std::vector<std::chrono::nanoseconds> samples);

// "812 ns", "12.3 us", "4.56 ms", "1.23 s".
std::string format_duration(std::chrono::nanoseconds d);
// "1x32x8x8 int16".
std::string describe_tensor(const TensorInfo& t);

// The class names of a labels file: line i names class i (a '\r' before the newline is
// dropped; the file must name at least one class).
Result<std::vector<std::string>> read_labels(const std::string& path);
// The side file of a loadable: "dir/net.nvdla" -> "dir/net.labels".
std::string labels_side_file(const std::string& loadable);

int run_loadable(const Options& options);
int run_regression(const Options& options);
int print_info(const Options& options);

}  // namespace nvdla::tool
