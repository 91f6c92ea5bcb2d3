// nvdla_runtime: runs a compiled network (a loadable) on an NVDLA, the emulated one or the
// kernel driver's, and writes its output as output.dimg, as the original tool of nvdla/sw did
// (same flags, same file), with timing, profiles, the best classes and JSON on top.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "run.hpp"

namespace {

using nvdla::tool::Options;

// "--mean 104,117,123" -> up to four numbers.
bool parse_mean(const std::string& text, std::array<float, 4>& mean, std::string& error) {
    std::stringstream in(text);
    std::string item;
    size_t count = 0;
    while (std::getline(in, item, ',')) {
        if (count == 4) {
            error = "--mean takes at most 4 comma-separated values";
            return false;
        }
        char* end = nullptr;
        const float v = std::strtof(item.c_str(), &end);
        if (item.empty() || *end != '\0') {
            error = "--mean: '" + item + "' is not a number";
            return false;
        }
        mean[count++] = v;
    }
    if (count == 0) {
        error = "--mean needs 1 to 4 comma-separated values";
        return false;
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    Options options;
    CLI::App app{"Runs an NVDLA loadable and writes its first output as a DIMG file.",
                 "nvdla_runtime"};
    app.set_help_flag("-h,--help", "print this help and exit");
    app.get_formatter()->column_width(30);
    bool server = false, version = false, info = false;
    std::string mean, numbering = "golden";
    float normalize = 1.0f;
    app.add_option("--loadable", options.loadable, "the compiled network to run");
    app.add_option("--image", options.image, "input image (PGM/PPM, PNG or JPEG) for input 0");
    app.add_option("--normalize", normalize, "fp16 inputs: divide (pixel - mean) by this")
        ->check(CLI::PositiveNumber);
    app.add_option("--mean", mean, "per-channel mean subtracted from fp16 inputs: a,b,c[,d]");
    app.add_flag("--rawdump", options.rawdump, "write the output as text values instead");
    app.add_option("-i", options.input_dir, "input directory (must exist)");
    app.add_flag("-s", server, "server mode of the original tool (not available)");
    app.add_option("--output", options.output, "where to write the output (default output.dimg)");
    app.add_option("--backend", options.backend, "emu, drm or auto (default; NVDLA_BACKEND wins)");
    app.add_option("--device", options.device,
                   "render node of the drm backend, e.g. /dev/dri/renderD129 (default: "
                   "NVDLA_DEVICE, else the first nvdla node)");
    app.add_option("--config", options.config,
                   "emulated configuration, or auto: the first that accepts the loadable");
    app.add_option("--iterations", options.iterations, "run N times, report latency statistics")
        ->check(CLI::Range(1u, 1000000u));
    app.add_flag("--profile", options.profile, "print per-task and per-operation times");
    app.add_option("--trace", options.trace,
                   "write the last run's tasks and operations as a Chrome "
                   "trace-event JSON file (Perfetto, chrome://tracing)");
    app.add_option("--threads", options.threads,
                   "emulator: threads per operation (default NVDLA_EMU_THREADS, else all cores)")
        ->check(CLI::Range(1u, 256u));
    app.add_option("--topk", options.topk,
                   "print the N best classes of output 0 (default 3 when class names are known)");
    app.add_option("--labels", options.labels,
                   "class names, one per line (default: the loadable's side file NAME.labels)");
    app.add_flag("--json", options.json, "print the results as JSON");
    app.add_option("--expect-md5", options.expect_md5,
                   "fail unless the DIMG's md5 is this digest (or the first word of this file)");
    app.add_option("--dimg-numbering", numbering,
                   "pixel-format numbers in DIMG headers: golden (default) or current")
        ->check(CLI::IsMember({"golden", "current"}));
    app.add_option("--regression", options.regression_dir,
                   "run every loadable of DIR/flatbufs against DIR/golden");
    app.add_flag("--info", info, "print the backend, configuration and features");
    app.add_flag("--version", version, "print the version");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "nvdla_runtime: " << e.what() << " (see --help)\n";
        return 1;
    }
    if (version) {
        std::cout << "nvdla_runtime " << nvdla::runtime_version() << "\n";
        return 0;
    }
    if (server) {
        std::cerr << "nvdla_runtime: server mode (-s) is not available; run --loadable FILE "
                     "(with --json for machine-readable results) instead\n";
        return 1;
    }
    if (!options.trace.empty()) options.profile = true;  // the trace is the profile
    options.numbering =
        numbering == "current" ? nvdla::dimg::Numbering::Current : nvdla::dimg::Numbering::Golden;
    options.image_options.normalize = normalize;
    if (!mean.empty()) {
        std::string error;
        if (!parse_mean(mean, options.image_options.mean, error)) {
            std::cerr << "nvdla_runtime: " << error << "\n";
            return 1;
        }
    }
    if (info) return nvdla::tool::print_info(options);
    if (!options.regression_dir.empty()) return nvdla::tool::run_regression(options);
    if (options.loadable.empty()) {
        std::cerr << "nvdla_runtime: --loadable FILE is required (see --help)\n";
        return 1;
    }
    return nvdla::tool::run_loadable(options);
}
