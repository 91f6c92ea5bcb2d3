// --regression DIR: every loadable of DIR/flatbufs run on its configuration, its output
// compared with the md5 of DIR/golden/<NAME>_<hash>/lead.md5.
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "md5.hpp"
#include "run.hpp"

namespace nvdla::tool {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Case {
    std::string name;    // "CONV_D_L0_0_small"
    fs::path loadable;   // .../flatbufs/CONV/CONV_D_L0_0_small_fbuf
    std::string golden;  // md5 digest, "" when there is no golden
};

struct Outcome {
    std::string config, shape, md5, verdict;  // verdict: "match", "MISMATCH", "NO GOLDEN", error
    std::chrono::nanoseconds time{0};
    bool ok = false;
};

// The regression's naming: *_small loadables target nv_small, the others nv_full.
std::string config_of(const std::string& name) {
    return name.size() >= 6 && name.compare(name.size() - 6, 6, "_small") == 0 ? "nv_small"
                                                                               : "nv_full";
}

std::string golden_digest(const fs::path& golden_dir, const std::string& name) {
    if (!fs::is_directory(golden_dir)) return "";
    const std::regex pattern(name + "_[0-9a-f]+");
    for (const fs::directory_entry& e : fs::directory_iterator(golden_dir)) {
        if (!e.is_directory() || !std::regex_match(e.path().filename().string(), pattern)) continue;
        std::ifstream lead(e.path() / "lead.md5");
        std::string digest;
        if (lead >> digest) return digest;
    }
    return "";
}

Outcome run_case(const Options& options, const Case& c) {
    Outcome o;
    o.config = options.config == "auto" ? config_of(c.name) : options.config;
    Result<Opened> opened = open_for(options, c.loadable.string(), o.config);
    if (!opened) {
        o.verdict = opened.message();
        return o;
    }
    o.config = opened->runtime->device().config;
    const Network& net = *opened->network;
    if (net.outputs().empty()) {
        o.verdict = "the network has no output";
        return o;
    }
    o.shape = describe_tensor(net.outputs()[0]);
    const Clock::time_point start = Clock::now();
    if (Status s = opened->context->run(); !s) {
        o.verdict = s.message();
        return o;
    }
    o.time = Clock::now() - start;
    Result<std::vector<std::byte>> file =
        dimg::encode(net.outputs()[0], opened->context->output(0), options.numbering);
    if (!file) {
        o.verdict = file.message();
        return o;
    }
    o.md5 = md5_hex(*file);
    // A loadable without a golden is not checked, so it cannot count as a pass.
    if (c.golden.empty()) {
        o.verdict = "NO GOLDEN (no <name>_<hash>/lead.md5 in golden/)";
    } else {
        o.ok = o.md5 == c.golden;
        o.verdict = o.ok ? "match" : "MISMATCH (golden " + c.golden + ")";
    }
    return o;
}

}  // namespace

int run_regression(const Options& options) {
    const fs::path dir = options.regression_dir;
    const fs::path flatbufs = dir / "flatbufs", golden = dir / "golden";
    if (!fs::is_directory(flatbufs)) {
        std::cerr << "nvdla_runtime: " << flatbufs.string()
                  << " is absent: the regression loadables are not there\n";
        return 1;
    }
    std::vector<Case> cases;
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(flatbufs)) {
        const std::string file = e.path().filename().string();
        if (!e.is_regular_file() || file.size() <= 5 || file.substr(file.size() - 5) != "_fbuf")
            continue;
        const std::string name = file.substr(0, file.size() - 5);
        cases.push_back({name, e.path(), golden_digest(golden, name)});
    }
    std::sort(cases.begin(), cases.end(),
              [](const Case& a, const Case& b) { return a.name < b.name; });
    if (cases.empty()) {
        std::cerr << "nvdla_runtime: " << flatbufs.string() << " holds no *_fbuf loadable\n";
        return 1;
    }

    nlohmann::json results = nlohmann::json::array();
    unsigned matched = 0, failed = 0;
    if (!options.json)
        std::cout << std::left << std::setw(22) << "loadable" << std::setw(10) << "config"
                  << std::setw(18) << "output" << std::setw(11) << "time"
                  << "md5\n";
    for (const Case& c : cases) {
        const Outcome o = run_case(options, c);
        if (o.ok && o.verdict == "match") ++matched;
        if (!o.ok) ++failed;
        if (options.json) {
            results.push_back({{"name", c.name},
                               {"config", o.config},
                               {"output", o.shape},
                               {"md5", o.md5},
                               {"golden", c.golden},
                               {"verdict", o.verdict},
                               {"ok", o.ok},
                               {"time_us", static_cast<double>(o.time.count()) / 1000.0}});
            continue;
        }
        std::cout << std::left << std::setw(22) << c.name << std::setw(10) << o.config
                  << std::setw(18) << (o.shape.empty() ? "-" : o.shape) << std::setw(11)
                  << (o.time.count() ? format_duration(o.time) : "-") << o.verdict << "\n";
    }
    if (options.json) {
        std::cout << nlohmann::json{{"results", results},
                                    {"loadables", cases.size()},
                                    {"matched", matched},
                                    {"failed", failed}}
                         .dump(2)
                  << "\n";
    } else {
        std::cout << matched << " of " << cases.size()
                  << " outputs match their golden md5 (the golden's whole output.dimg, header "
                     "included)";
        if (failed) std::cout << "; " << failed << " failed";
        std::cout << "\n";
    }
    return failed ? 1 : 0;
}

}  // namespace nvdla::tool
