// Format conversion throughput against memcpy, measured side by side in one run.
//
// The reference is memcpy of the float32 tensor (the larger side of the conversion); each
// ratio is memcpy time / conversion time, so 1.0 means "as fast as copying the tensor".
// Target (issue: foundation): >= 0.8 for packing 1x64x224x224 float32 NCHW into an fp16 feature
// cube and for unpacking it back.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "nvdla/formats/feature.hpp"

namespace {

const nvdla::Dims4 kDims{1, 64, 224, 224};

struct Buffers {
    std::vector<float> host, back;
    std::vector<std::byte> surface;
    nvdla::FeatureCube cube;

    Buffers() {
        cube = *nvdla::make_feature_cube(**nvdla::find_hw_config("nv_full"), nvdla::Precision::Fp16,
                                         kDims);
        host.resize(kDims.elements());
        std::mt19937 rng(1);
        std::uniform_real_distribution<float> d(-4.0f, 4.0f);
        for (float& f : host) f = d(rng);
        back.resize(host.size());
        surface.resize(cube.size_bytes());
        // Touch every page once so first-use faults are not measured.
        std::memset(back.data(), 0, back.size() * sizeof(float));
        std::memset(surface.data(), 0, surface.size());
    }
};

Buffers& buffers() {
    static Buffers b;
    return b;
}

size_t tensor_bytes() {
    return kDims.elements() * sizeof(float);
}

void BM_Memcpy(benchmark::State& state) {
    Buffers& b = buffers();
    for (auto _ : state) {
        std::memcpy(b.back.data(), b.host.data(), tensor_bytes());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(tensor_bytes()));
}

void BM_PackFp32ToFp16(benchmark::State& state) {
    Buffers& b = buffers();
    const nvdla::ConstTensorView in{b.host.data(), tensor_bytes(), nvdla::HostType::Float32,
                                    nvdla::HostLayout::NCHW, kDims};
    for (auto _ : state) {
        if (!nvdla::pack_feature(in, b.cube, b.surface).ok()) state.SkipWithError("pack failed");
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(tensor_bytes()));
}

void BM_UnpackFp16ToFp32(benchmark::State& state) {
    Buffers& b = buffers();
    const nvdla::TensorView out{b.back.data(), tensor_bytes(), nvdla::HostType::Float32,
                                nvdla::HostLayout::NCHW, kDims};
    for (auto _ : state) {
        if (!nvdla::unpack_feature(b.surface, b.cube, out).ok())
            state.SkipWithError("unpack failed");
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(tensor_bytes()));
}

BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_PackFp32ToFp16)
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_UnpackFp16ToFp32)
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

// Console output as usual, plus the median time of each benchmark for the ratio table.
class RatioReporter : public benchmark::ConsoleReporter {
  public:
    std::map<std::string, double> median_seconds;

    void ReportRuns(const std::vector<Run>& runs) override {
        for (const Run& r : runs)
            if (r.aggregate_name == "median")
                median_seconds[r.run_name.function_name] =
                    r.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(r.time_unit);
        ConsoleReporter::ReportRuns(runs);
    }
};

}  // namespace

int main(int argc, char** argv) {
    // Repetitions of the three benchmarks run in random interleaved order by default, so that
    // cache state and machine noise do not favour whichever runs first.
    std::vector<char*> args(argv, argv + argc);
    std::string interleave = "--benchmark_enable_random_interleaving=true";
    bool given = false;
    for (char* a : args)
        given |= std::string(a).rfind("--benchmark_enable_random_interleaving", 0) == 0;
    if (!given) args.insert(args.begin() + 1, interleave.data());
    int count = static_cast<int>(args.size());
    benchmark::Initialize(&count, args.data());
    if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();

    auto& t = reporter.median_seconds;
    if (!t.count("BM_Memcpy")) return 0;  // filtered out: nothing to compare against
    const double copy = t["BM_Memcpy"];
    const double mb = double(tensor_bytes()) / 1e6;
    std::printf("\n1x64x224x224 float32 NCHW <-> fp16 feature cube (nv_full), %.1f MB tensor\n",
                mb);
    std::printf("%-28s %10s %10s %14s\n", "", "median ms", "GB/s", "ratio/memcpy");
    std::printf("%-28s %10.3f %10.2f %14s\n", "memcpy (reference)", copy * 1e3, mb / 1e3 / copy,
                "1.00");
    for (const auto& [name, label] :
         {std::pair{"BM_PackFp32ToFp16", "pack fp32 -> fp16 cube"},
          std::pair{"BM_UnpackFp16ToFp32", "unpack fp16 cube -> fp32"}}) {
        if (!t.count(name)) continue;
        const double ratio = copy / t[name];
        std::printf("%-28s %10.3f %10.2f %14.2f%s\n", label, t[name] * 1e3, mb / 1e3 / t[name],
                    ratio, ratio >= 0.8 ? "" : "   below the 0.8 target");
    }
    return 0;
}
