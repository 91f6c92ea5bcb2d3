// Runtime benchmarks on the emulated backend, through the public API (nvdla/runtime.hpp):
//
// - the runtime's submit-to-completion overhead: Context::run() of a network whose only task
//   is one BDMA copy of 32 bytes (the least work a DLA task can do). Target: <= 20 us.
// - each regression loadable of ../shared (vectors/sw-regression/flatbufs): loaded once, one
//   context, Context::run() per iteration (nv_small for the "_small" ones, else nv_full).
//
// Ends with a table of the medians. NVDLA_SHARED_DIR overrides where ../shared is.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nvdla/hw/dla_interface.h"
#include "nvdla/runtime.hpp"
#include "runtime/loadable.hpp"
#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;

constexpr double kTargetMicroseconds = 20.0;

template <class T>
std::vector<std::byte> bytes_of(const T& value) {
    std::vector<std::byte> out(sizeof value);
    std::memcpy(out.data(), &value, sizeof value);
    return out;
}

// A loadable with one DLA task: BDMA copies 32 bytes from one buffer to another.
std::vector<std::byte> trivial_loadable() {
    using namespace nvdla::runtime;
    const BlobVersion version{0, 12, 0};
    Loadable l;
    l.version = {0, 7, 0};
    auto memory = [&](std::vector<std::byte> contents, uint64_t size, uint32_t sub) {
        MemoryEntry m;
        m.flags = kMemoryAlloc;
        m.size = size;
        if (!contents.empty()) {
            LoadableBlob b;
            b.name = "blob" + std::to_string(l.blobs.size());
            b.interface = TaskInterface::Dla1;
            b.sub_interface = sub;
            b.version = version;
            b.data = std::move(contents);
            m.flags |= kMemorySet;
            m.contents.push_back({static_cast<uint32_t>(l.blobs.size()), 0});
            l.blobs.push_back(std::move(b));
        }
        l.memories.push_back(m);
        l.addresses.push_back({static_cast<uint16_t>(l.memories.size() - 1), 0, size});
        return static_cast<uint16_t>(l.addresses.size() - 1);
    };

    nvdla_dla_network_desc net{};
    net.operation_desc_index = 1;
    net.surface_desc_index = 2;
    net.dependency_graph_index = 3;
    net.lut_data_index = -1;
    net.roi_array_index = -1;
    net.surface_index = -1;
    net.stat_list_index = -1;
    for (int t = 0; t < NVDLA_DLA_OP_COUNT; ++t) net.op_head[t] = -1;
    net.op_head[NVDLA_DLA_OP_BDMA] = 0;
    net.num_rois = 1;
    net.num_operations = 1;
    net.num_addresses = 6;
    nvdla_dla_common_op_desc dep{};
    dep.op_type = NVDLA_DLA_OP_BDMA;
    for (int t = 0; t < NVDLA_DLA_OP_COUNT; ++t) dep.consumers[t].index = -1;
    dep.fused_parent.index = -1;
    std::vector<std::byte> ops(NVDLA_DLA_OP_SLOT_SIZE);
    const uint16_t transfers = 1;
    std::memcpy(ops.data(), &transfers, sizeof transfers);  // bdma_op.num_transfers
    nvdla_dla_bdma_surface_desc surface{};
    surface.source_type = surface.destination_type = NVDLA_DLA_MEM_MC;
    surface.num_transfers = 1;
    surface.transfers[0] = {4, 5, 32, 1, 32, 32, 1, 32, 32};

    TaskEntry task;
    task.interface = TaskInterface::Dla1;
    task.instance = -1;
    task.version = version;
    const auto net_bytes = bytes_of(net);
    const auto surface_bytes = bytes_of(surface);
    const auto dep_bytes = bytes_of(dep);
    task.addresses = {memory(net_bytes, net_bytes.size(), kSubInterfaceAddressList0),
                      memory(ops, ops.size(), kSubInterfaceOperations),
                      memory(surface_bytes, surface_bytes.size(), kSubInterfaceSurfaces),
                      memory(dep_bytes, dep_bytes.size(), kSubInterfaceDependencies),
                      memory({}, 256, 0),
                      memory({}, 256, 0)};
    l.tasks.push_back(task);
    l.submits.push_back({{0}});
    return serialize_loadable(l);
}

std::unique_ptr<nvdla::Runtime> emu_runtime(const std::string& config) {
    nvdla::RuntimeOptions o;
    o.backend = nvdla::BackendChoice::Emu;
    o.emu_config = config;
    auto rt = nvdla::Runtime::open(o);
    if (!rt) {
        std::fprintf(stderr, "bench_runtime: %s\n", rt.message().c_str());
        return nullptr;
    }
    return std::move(rt).value();
}

// One network ready to run: its runtime, the network and a context.
struct Prepared {
    std::unique_ptr<nvdla::Runtime> runtime;
    std::shared_ptr<nvdla::Network> network;
    std::unique_ptr<nvdla::Context> context;
    std::string error;
};

Prepared prepare(const std::string& config, const std::vector<std::byte>* bytes,
                 const std::string& path) {
    Prepared p;
    p.runtime = emu_runtime(config);
    if (!p.runtime) {
        p.error = "the emulated " + config + " runtime did not open";
        return p;
    }
    auto net = bytes ? p.runtime->load(*bytes) : p.runtime->load_file(path);
    if (!net) {
        p.error = net.message();
        return p;
    }
    p.network = *net;
    auto ctx = p.network->create_context();
    if (!ctx) {
        p.error = ctx.message();
        return p;
    }
    p.context = std::move(ctx).value();
    return p;
}

void run_iterations(benchmark::State& state, Prepared& p) {
    if (!p.error.empty()) {
        state.SkipWithError(p.error.c_str());
        return;
    }
    for (auto _ : state) {
        nvdla::Status s = p.context->run(std::chrono::seconds(60));
        if (!s) {
            state.SkipWithError(s.message().c_str());
            break;
        }
    }
}

void BM_TrivialTask(benchmark::State& state) {
    static Prepared p = [] {
        const std::vector<std::byte> bytes = trivial_loadable();
        return prepare("nv_full", &bytes, "");
    }();
    run_iterations(state, p);
}
BENCHMARK(BM_TrivialTask)
    ->Unit(benchmark::kMicrosecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

// The regression loadables (NVDLA_SHARED_DIR, else ../shared beside the checkout).
fs::path regression_flatbufs() {
    return nvdla::test::configured_shared_dir() / "vectors" / "sw-regression" / "flatbufs";
}

// One benchmark per regression loadable.
std::vector<std::string> register_regression_loadables() {
    std::vector<std::string> names;
    const fs::path dir = regression_flatbufs();
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return names;
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec))
        if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
        const std::string name = file.filename().string();
        const std::string config =
            name.find("_small") != std::string::npos ? "nv_small" : "nv_full";
        const std::string bench = "Regression/" + name;
        benchmark::RegisterBenchmark(
            bench.c_str(),
            [file, config](benchmark::State& state) {
                static std::map<std::string, Prepared> cache;
                auto it = cache.find(file.string());
                if (it == cache.end())
                    it =
                        cache.emplace(file.string(), prepare(config, nullptr, file.string())).first;
                run_iterations(state, it->second);
            })
            ->Unit(benchmark::kMicrosecond)
            ->Repetitions(3)
            ->ReportAggregatesOnly(true);
        names.push_back(name);
    }
    return names;
}

// Console output as usual, plus each benchmark's median (or its error) for the table.
class TableReporter : public benchmark::ConsoleReporter {
  public:
    std::map<std::string, double> median_us;
    std::map<std::string, std::string> errors;

    void ReportRuns(const std::vector<Run>& runs) override {
        for (const Run& r : runs) {
            const std::string name = r.run_name.function_name;
            if (r.error_occurred) errors[name] = r.error_message;
            if (r.aggregate_name == "median")
                median_us[name] =
                    r.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(r.time_unit) * 1e6;
        }
        ConsoleReporter::ReportRuns(runs);
    }
};

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> loadables = register_regression_loadables();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    TableReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();

    auto line = [&](const std::string& key, const std::string& label, const char* config,
                    bool target) {
        if (reporter.errors.count(key)) {
            std::printf("%-34s %-9s %12s  %s\n", label.c_str(), config, "-",
                        reporter.errors[key].c_str());
            return;
        }
        if (!reporter.median_us.count(key)) return;  // filtered out
        const double us = reporter.median_us[key];
        std::printf("%-34s %-9s %12.1f  %s\n", label.c_str(), config, us,
                    !target                     ? ""
                    : us <= kTargetMicroseconds ? "target <= 20 us: met"
                                                : "target <= 20 us: MISSED");
    };
    std::printf(
        "\nRuntime on the emulated backend, submit to completion (Context::run), "
        "median\n");
    std::printf("%-34s %-9s %12s  %s\n", "network", "config", "time (us)", "");
    line("BM_TrivialTask", "trivial task (BDMA, 32 bytes)", "nv_full", true);
    for (const std::string& name : loadables)
        line("Regression/" + name, name,
             name.find("_small") != std::string::npos ? "nv_small" : "nv_full", false);
    if (loadables.empty())
        std::printf("(regression loadables: %s is absent)\n", regression_flatbufs().c_str());
    return 0;
}
