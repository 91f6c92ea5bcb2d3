// The main job's network on the emulated backend (tools/lenet, docs/main-job.md):
//
// - images per second (wall time) and the process's CPU time per image (cpu_us_per_image,
//   every thread's): one Fashion-MNIST test image classified per iteration (input packed,
//   Context::run, output unpacked) on one runtime, for int8 on nv_full and nv_small and fp16
//   on nv_full, next to the builder's float reference on the CPU; for int8 also with two
//   images in flight (two threads, each with its own runtime, one emulator thread each);
// - a per-layer profile: the runtime's per-operation timing (RuntimeOptions::profiling), the
//   mean time of each hardware operation and CPU task over kProfileRuns runs, after the
//   builder's list of what it made of each layer.
//
// Without Fashion-MNIST (dataset-fashion-mnist), zero images are used (same work per image).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <time.h>

#include "lenet.hpp"
#include "nvdla/builder.hpp"
#include "nvdla/runtime.hpp"

namespace {

using namespace nvdla::lenet;

constexpr uint32_t kImages = 64;  // test images cycled through
constexpr uint32_t kProfileRuns = 20;

double process_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

struct Setup {
    std::string error;
    std::optional<nvdla::builder::Network> net;
    std::vector<std::vector<uint8_t>> images;
    std::optional<nvdla::builder::Calibration> calibration;
};

Setup& setup() {
    static Setup instance = [] {
        Setup s;
        auto model = load_model(default_weights_path());
        if (!model) {
            s.error = model.message();
            return s;
        }
        s.net.emplace(describe_network(*model));
        auto test = load_fashion_mnist(kDefaultDatasetDir, false, kImages);
        auto train = load_fashion_mnist(kDefaultDatasetDir, true, 200);
        for (uint32_t i = 0; i < kImages; ++i)
            s.images.push_back(
                test ? std::vector<uint8_t>(test->image(i), test->image(i) + kImagePixels)
                     : std::vector<uint8_t>(kImagePixels, 0));
        nvdla::builder::Calibration cal;
        if (train) {
            auto c = calibrate(*s.net, *train, 200);
            if (!c) {
                s.error = c.message();
                return s;
            }
            cal = std::move(c).value();
        } else {
            for (const auto& img : s.images)
                if (!cal.add_sample(*s.net, {image_tensor(img.data())})) break;
            cal.set_range(s.net->inputs()[0], 255.0f);
        }
        s.calibration = std::move(cal);
        return s;
    }();
    return instance;
}

struct Target {
    std::string config;
    nvdla::Precision precision;
    std::string key() const { return config + " " + std::string(nvdla::to_string(precision)); }
};

const std::vector<Target>& targets() {
    static const std::vector<Target> t = {{"nv_full", nvdla::Precision::Int8},
                                          {"nv_small", nvdla::Precision::Int8},
                                          {"nv_full", nvdla::Precision::Fp16}};
    return t;
}

struct Prepared {
    std::string error;
    std::optional<nvdla::builder::CompiledNetwork> built;
    std::unique_ptr<Classifier> classifier;
};

// instance: one classifier (runtime) per image in flight; with several, each operation runs
// on one thread (the images keep the cores busy).
Prepared& prepared(const Target& t, bool profiling, uint32_t instance = 0, bool in_flight = false) {
    static std::mutex mutex;
    static std::map<std::string, Prepared> cache;
    std::lock_guard lock(mutex);
    const std::string key = t.key() + (profiling ? " profile" : "") +
                            (in_flight ? " in flight " + std::to_string(instance) : "");
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    Prepared p;
    Setup& s = setup();
    if (!s.error.empty()) {
        p.error = s.error;
    } else {
        auto built = build_network(*s.net, t.config, t.precision, &*s.calibration);
        if (!built) {
            p.error = built.message();
        } else {
            p.built = std::move(built).value();
            nvdla::RuntimeOptions ro;
            ro.backend = nvdla::BackendChoice::Emu;
            ro.profiling = profiling;
            if (in_flight) ro.emu_threads = 1;
            auto c = Classifier::open(*p.built, ro);
            if (!c)
                p.error = c.message();
            else
                p.classifier = std::move(c).value();
        }
    }
    return cache.emplace(key, std::move(p)).first->second;
}

// With state.threads() > 1, that many images in flight: each thread classifies its own
// images on its own runtime.
void BM_Lenet(benchmark::State& state, Target t) {
    const bool in_flight = state.threads() > 1;
    Prepared& p = prepared(t, false, uint32_t(state.thread_index()), in_flight);
    if (!p.error.empty()) {
        state.SkipWithError(p.error.c_str());
        return;
    }
    Setup& s = setup();
    uint32_t i = uint32_t(state.thread_index()) * 7;
    const double cpu_start = process_cpu_seconds();
    for (auto _ : state) {
        auto r = p.classifier->classify(s.images[i++ % kImages].data());
        if (!r) {
            state.SkipWithError(r.message().c_str());
            break;
        }
        benchmark::DoNotOptimize(r->data());
    }
    state.SetItemsProcessed(state.iterations());
    // The process's CPU time per image, every thread's (jobs run on the runtime's worker): on
    // a shared machine the wall-clock time also counts the waits for a core.
    // (Every thread measures the whole process: divided by all threads' images, averaged.)
    state.counters["cpu_us_per_image"] =
        benchmark::Counter(1e6 * (process_cpu_seconds() - cpu_start) /
                               double(std::max<int64_t>(state.iterations() * state.threads(), 1)),
                           benchmark::Counter::kAvgThreads);
}

void BM_LenetFloatReference(benchmark::State& state) {
    Setup& s = setup();
    if (!s.error.empty()) {
        state.SkipWithError(s.error.c_str());
        return;
    }
    uint32_t i = 0;
    for (auto _ : state) {
        auto r =
            nvdla::builder::run_reference(*s.net, {image_tensor(s.images[i++ % kImages].data())});
        if (!r) {
            state.SkipWithError(r.message().c_str());
            break;
        }
        benchmark::DoNotOptimize(r->data());
    }
    state.SetItemsProcessed(state.iterations());
}

// Mean time of each operation over kProfileRuns runs.
void print_profile(const Target& t) {
    Prepared& p = prepared(t, true);
    std::printf("\n%s:", t.key().c_str());
    if (!p.error.empty()) {
        std::printf(" %s\n", p.error.c_str());
        return;
    }
    std::printf("\n");
    Setup& s = setup();
    std::vector<std::pair<std::string, double>> ops;  // name, total us
    double total_us = 0;
    if (auto warm = p.classifier->classify(s.images[0].data()); !warm) {  // page faults
        std::printf("  %s\n", warm.message().c_str());
        return;
    }
    for (uint32_t run = 0; run < kProfileRuns; ++run) {
        auto r = p.classifier->classify(s.images[run % kImages].data());
        if (!r) {
            std::printf("  %s\n", r.message().c_str());
            return;
        }
        const nvdla::RunTiming& timing = p.classifier->timing();
        total_us += static_cast<double>(timing.total.count()) / 1e3;
        for (size_t k = 0; k < timing.operations.size(); ++k) {
            const auto& op = timing.operations[k];
            const double us = static_cast<double>(op.duration.count()) / 1e3;
            if (ops.size() <= k)
                ops.emplace_back("task " + std::to_string(op.task) + " " + op.name, us);
            else
                ops[k].second += us;
        }
    }
    std::printf("  the builder's operations:\n");
    for (const std::string& note : p.built->operations) std::printf("    %s\n", note.c_str());
    // The builder lists one line per layer ("conv1: CONV ... -> PDP ..."), in the order the
    // runtime reports the operations that start each layer; name them when the counts agree.
    const bool named = p.built->operations.size() == ops.size();
    std::printf("  measured:\n");
    for (size_t k = 0; k < ops.size(); ++k) {
        std::string label = ops[k].first;
        if (named) {
            const std::string& note = p.built->operations[k];
            label = note.substr(0, note.find(':')) + " (" + label + ")";
        }
        std::printf("  %-32s %10.1f us\n", label.c_str(), ops[k].second / kProfileRuns);
    }
    std::printf("  %-32s %10.1f us  (submit to completion, mean of %u runs)\n", "total",
                total_us / kProfileRuns, kProfileRuns);
}

}  // namespace

int main(int argc, char** argv) {
    for (const Target& t : targets()) {
        const std::string name =
            "Lenet/" + t.config + "/" + std::string(nvdla::to_string(t.precision));
        benchmark::RegisterBenchmark(name.c_str(), BM_Lenet, t)
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
        // Two images in flight, one per core: the main job's classify loop (make run).
        if (t.precision == nvdla::Precision::Int8)
            benchmark::RegisterBenchmark((name + "/two_in_flight").c_str(), BM_Lenet, t)
                ->Unit(benchmark::kMicrosecond)
                ->UseRealTime()
                ->Threads(2);
    }
    benchmark::RegisterBenchmark("Lenet/float_reference", BM_LenetFloatReference)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();

    std::printf(
        "\nPer-layer profile on the emulated backend (mean per operation; the builder's "
        "description of each hardware operation in order)\n");
    for (const Target& t : targets()) print_profile(t);
    return 0;
}
