// nvdla_trace: replays a hardware verification trace against the emulated NVDLA and checks it.
//
// Exit codes: 0 every check passed; 1 a check failed; 2 usage or unreadable trace;
// 77 skipped (the trace needs a data file that is not public).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "nvdla/hw_config.hpp"
#include "player.hpp"
#include "trace.hpp"

int main(int argc, char** argv) {
    CLI::App app{"nvdla_trace: replay an NVDLA hardware trace against the emulated device"};
    std::string config = "nv_small", dir;
    bool verbose = false;
    app.add_option("--config", config, "hardware configuration to emulate")->capture_default_str();
    app.add_option("trace", dir, "trace directory (<test>.cfg or input.txn with its .dat files)")
        ->required();
    app.add_flag("-v,--verbose", verbose, "print every command");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }

    auto cfg = nvdla::find_hw_config(config);
    if (!cfg.ok()) {
        std::fprintf(stderr, "nvdla_trace: %s\n", cfg.message().c_str());
        return 2;
    }
    auto trace = nvdla::trace::load_trace(dir);
    if (!trace.ok()) {
        std::fprintf(stderr, "nvdla_trace: %s\n", trace.message().c_str());
        return 2;
    }
    const std::string name = trace->dir.filename().string();
    if (auto missing = nvdla::trace::first_missing_file(*trace); !missing.empty()) {
        std::printf("SKIP %s: %s is not in the trace directory (not public)\n", name.c_str(),
                    missing.c_str());
        std::printf("0 passed, 0 failed, 1 skipped\n");
        return 77;
    }
    const auto outcome = nvdla::trace::play(*trace, **cfg, std::cout, verbose);
    std::printf("%s on %s: %zu commands replayed in %.3f s\n", name.c_str(), config.c_str(),
                trace->commands.size(), outcome.seconds);
    std::printf("%d passed, %d failed, %d skipped\n", outcome.passed, outcome.failed,
                outcome.skipped);
    return outcome.failed ? 1 : 0;
}
