// The emulated convolution pipeline against oneDNN, side by side in one run, and the model on a
// whole hardware trace against the C model.
//
// A 3x3 int8 convolution 56x56x64 -> 56x56x64 (stride 1, zero padding 1) on nv_full: the model
// runs it from registers to the result in memory (CDMA fetch, CSC/CMAC/CACC, SDP writing int8
// through CACC's truncation and SDP's convertor), oneDNN runs the same convolution from s8 NHWC
// data and pre-reordered s8 weights to s32 NHWC sums, with no output stage: the model does
// strictly more work. Before timing, the model's output is checked bit for bit against the
// exact sums (computed plainly here) put through the same CACC truncation and int8
// saturation, and oneDNN's sums against the exact ones: oneDNN is not exact on every CPU
// (AVX2 without VNNI), which is reported, not a failure. The ratio printed is
// oneDNN time / model time (target >= 0.5), from the medians of repeated runs, interleaved at
// random; both run on one thread (OMP_NUM_THREADS=1, set before oneDNN's OpenMP runtime
// starts). Below the avx512 level (NVDLA_EMU_ISA=avx2) oneDNN is limited to AVX2 as well
// (ONEDNN_MAX_CPU_ISA=AVX2 unless set), as on the machine that level stands for.
//
// Then the nv_full trace googlenet_conv2_3x3_int16 (19x19x64 -> 192, 3x3, int16, through
// BS/BN and the convertor) is replayed by build/bin/nvdla_trace next to this program; its replay
// time (registers, memory loading from the trace files, the layer, the output check) is set
// against the ~84 s the C model takes for the trace (target: >= 1000 times faster). The trace
// directory is $NVDLA_SHARED_DIR/vectors/hw-traces (default ../shared next to the sources).
//
// oneDNN is optional: built with NVDLA_BENCH_WITH_DNNL (Debian libdnnl-dev) the comparison
// runs; without it only the model is measured.
#include <benchmark/benchmark.h>

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cpu_name.hpp"
#include "emu/isa.hpp"
#include "nvdla/emu/device.hpp"
#include "nvdla/formats/weights.hpp"
#include "nvdla/hw/register_map.hpp"
#include "test_paths.hpp"

#if defined(NVDLA_BENCH_WITH_DNNL)
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace {

constexpr uint32_t kW = 56, kH = 56, kC = 64, kK = 64, kR = 3, kS = 3;
constexpr uint32_t kClip = 7;  // CACC truncation that brings the sums into int8 range
constexpr uint64_t kInput = 0x80000000, kWeights = 0x81000000, kOutput = 0x82000000;

const nvdla::HwConfig& config() {
    return **nvdla::find_hw_config("nv_full");
}

struct Problem {
    std::vector<int8_t> input;    // NHWC
    std::vector<int8_t> weights;  // OIHW
    Problem() {
        std::mt19937 rng(7);
        std::uniform_int_distribution<int> d(-128, 127);
        input.resize(size_t(kH) * kW * kC);
        weights.resize(size_t(kK) * kC * kR * kS);
        for (int8_t& v : input) v = static_cast<int8_t>(d(rng));
        for (int8_t& v : weights) v = static_cast<int8_t>(d(rng));
    }
};

const Problem& problem() {
    static const Problem p;
    return p;
}

// The model: a device over flat memory, programmed through its registers like software does.
class Model {
  public:
    Model() : map_(nvdla::hw::RegisterMap::get(config().reg_map)), device_(config(), memory_) {
        device_.set_threads(1);  // one thread, like oneDNN here
        const Problem& p = problem();
        const uint32_t atom = config().atom_bytes;
        in_ = reinterpret_cast<uint8_t*>(
            memory_.add_region(nvdla::emu::MemoryPort::Primary, kInput, input_bytes()));
        for (uint32_t h = 0; h < kH; ++h)
            for (uint32_t w = 0; w < kW; ++w)
                for (uint32_t c = 0; c < kC; ++c)
                    in_[(c / atom) * surface() + h * line() + w * atom + c % atom] =
                        static_cast<uint8_t>(p.input[(size_t(h) * kW + w) * kC + c]);
        const auto layout = *nvdla::make_weight_layout(
            config(), {nvdla::WeightKind::Direct, nvdla::Precision::Int8}, {kK, kC, kR, kS});
        weight_bytes_ = layout.size_bytes();
        auto* wt = memory_.add_region(nvdla::emu::MemoryPort::Primary, kWeights, weight_bytes_);
        const nvdla::ConstTensorView host{p.weights.data(),
                                          p.weights.size(),
                                          nvdla::HostType::Int8,
                                          nvdla::HostLayout::NCHW,
                                          {kK, kC, kR, kS}};
        if (!nvdla::pack_weights(host, layout, {wt, weight_bytes_})) std::abort();
        out_ = reinterpret_cast<uint8_t*>(
            memory_.add_region(nvdla::emu::MemoryPort::Primary, kOutput, input_bytes()));
    }

    static uint32_t line() { return kW * config().atom_bytes; }
    static uint32_t surface() { return kH * line(); }
    static uint64_t input_bytes() { return uint64_t(kC / config().atom_bytes) * surface(); }
    int8_t output(uint32_t k, uint32_t h, uint32_t w) const {
        const uint32_t atom = config().atom_bytes;
        return static_cast<int8_t>(out_[(k / atom) * surface() + h * line() + w * atom + k % atom]);
    }
    const nvdla::emu::DeviceStats& stats() const { return device_.stats(); }

    // One layer: program the next register group of every unit and enable them, the way a
    // driver does (addresses resolved beforehand).
    void run() {
        const uint32_t g = group_;
        group_ ^= 1;
        if (program_[g].empty()) record(g);
        for (const auto& [address, value] : program_[g]) device_.write_register(address, value);
    }

  private:
    // The register writes of a layer in register group g.
    void record(uint32_t g) {
        recording_ = &program_[g];
        for (const char* unit : {"CDMA", "CSC", "CMAC_A", "CMAC_B", "CACC", "SDP"})
            set(unit, "S_POINTER", g);
        const uint32_t size = (kH - 1) << 16 | (kW - 1);
        set("CDMA", "D_MISC_CFG", 0);
        set("CDMA", "D_DATAIN_FORMAT", 0);
        set("CDMA", "D_DATAIN_SIZE_0", size);
        set("CDMA", "D_DATAIN_SIZE_1", kC - 1);
        set("CDMA", "D_DATAIN_SIZE_EXT_0", size);
        set("CDMA", "D_DAIN_RAM_TYPE", 1);
        set("CDMA", "D_DAIN_ADDR_HIGH_0", static_cast<uint32_t>(kInput >> 32));
        set("CDMA", "D_DAIN_ADDR_LOW_0", static_cast<uint32_t>(kInput));
        set("CDMA", "D_LINE_STRIDE", line());
        set("CDMA", "D_SURF_STRIDE", surface());
        set("CDMA", "D_DAIN_MAP", 0x10001);
        set("CDMA", "D_BATCH_NUMBER", 0);
        set("CDMA", "D_WEIGHT_FORMAT", 0);
        set("CDMA", "D_WEIGHT_SIZE_0", kR * kS * kC - 1);
        set("CDMA", "D_WEIGHT_SIZE_1", kK - 1);
        set("CDMA", "D_WEIGHT_RAM_TYPE", 1);
        set("CDMA", "D_WEIGHT_ADDR_HIGH", static_cast<uint32_t>(kWeights >> 32));
        set("CDMA", "D_WEIGHT_ADDR_LOW", static_cast<uint32_t>(kWeights));
        set("CDMA", "D_WEIGHT_BYTES", static_cast<uint32_t>(weight_bytes_));
        set("CDMA", "D_CVT_CFG", 0);
        set("CDMA", "D_CONV_STRIDE", 0);
        // The buffer as the hardware needs it (docs/emu/convolution.md "Buffer rules"): every
        // input line in as few data banks as hold them, the other banks for weights.
        const nvdla::CbufGeometry cbuf = nvdla::cbuf_geometry(config());
        const uint32_t entries = nvdla::cbuf_entries_per_slice(config(), kC, 1, kW);
        const uint32_t data_banks =
            (kH * entries + cbuf.entries_per_bank - 1) / cbuf.entries_per_bank;
        const uint32_t weight_banks = config().cbuf_banks - data_banks;
        for (const char* unit : {"CDMA", "CSC"}) {
            set(unit, "D_ENTRY_PER_SLICE", entries - 1);
            set(unit, "D_BANK", (weight_banks - 1) << 16 | (data_banks - 1));
        }
        set("CDMA", "D_ZERO_PADDING", 0x01010101);
        set("CDMA", "D_ZERO_PADDING_VALUE", 0);
        set("CSC", "D_MISC_CFG", 0);
        set("CSC", "D_DATAIN_FORMAT", 0);
        set("CSC", "D_DATAIN_SIZE_EXT_0", size);
        set("CSC", "D_DATAIN_SIZE_EXT_1", kC - 1);
        set("CSC", "D_WEIGHT_FORMAT", 0);
        set("CSC", "D_WEIGHT_SIZE_EXT_0", (kR - 1) << 16 | (kS - 1));
        set("CSC", "D_WEIGHT_SIZE_EXT_1", (kK - 1) << 16 | (kC - 1));
        set("CSC", "D_WEIGHT_BYTES", static_cast<uint32_t>(weight_bytes_));
        set("CSC", "D_DATAOUT_SIZE_0", size);
        set("CSC", "D_DATAOUT_SIZE_1", kK - 1);
        set("CSC", "D_CONV_STRIDE_EXT", 0);
        set("CSC", "D_DILATION_EXT", 0);
        set("CSC", "D_ZERO_PADDING", 0x10001);
        set("CSC", "D_ZERO_PADDING_VALUE", 0);
        set("CMAC_A", "D_MISC_CFG", 0);
        set("CMAC_B", "D_MISC_CFG", 0);
        set("CACC", "D_MISC_CFG", 0);
        set("CACC", "D_DATAOUT_SIZE_0", size);
        set("CACC", "D_DATAOUT_SIZE_1", kK - 1);
        set("CACC", "D_CLIP_CFG", kClip);
        set("SDP", "D_FEATURE_MODE_CFG", 1);  // flying: the input comes from CACC
        set("SDP", "D_DATA_FORMAT", 0);       // int8 in, int8 out
        set("SDP", "D_DP_BS_CFG", 1);
        set("SDP", "D_DP_BN_CFG", 1);
        set("SDP", "D_DP_EW_CFG", 1);
        set("SDP", "D_CVT_OFFSET", 0);
        set("SDP", "D_CVT_SCALE", 1);
        set("SDP", "D_CVT_SHIFT", 0);
        set("SDP", "D_DATA_CUBE_WIDTH", kW - 1);
        set("SDP", "D_DATA_CUBE_HEIGHT", kH - 1);
        set("SDP", "D_DATA_CUBE_CHANNEL", kK - 1);
        set("SDP", "D_DST_BASE_ADDR_HIGH", static_cast<uint32_t>(kOutput >> 32));
        set("SDP", "D_DST_BASE_ADDR_LOW", static_cast<uint32_t>(kOutput));
        set("SDP", "D_DST_LINE_STRIDE", line());
        set("SDP", "D_DST_SURFACE_STRIDE", surface());
        set("SDP", "D_DST_DMA_CFG", 1);
        for (const char* unit : {"SDP", "CACC", "CMAC_A", "CMAC_B", "CSC", "CDMA"})
            set(unit, "D_OP_ENABLE", 1);
        recording_ = nullptr;
    }

    void set(const char* unit, const char* reg, uint32_t value) {
        const nvdla::hw::RegisterInfo* r = map_.find(unit, reg);
        if (!r || !recording_) std::abort();
        recording_->emplace_back(r->address, value);
    }

    const nvdla::hw::RegisterMap& map_;
    nvdla::emu::FlatMemory memory_;
    nvdla::emu::Device device_;
    uint8_t* in_ = nullptr;
    uint8_t* out_ = nullptr;
    uint64_t weight_bytes_ = 0;
    uint32_t group_ = 0;
    std::vector<std::pair<uint32_t, uint32_t>> program_[2];
    std::vector<std::pair<uint32_t, uint32_t>>* recording_ = nullptr;
};

Model& model() {
    static Model m;
    return m;
}

int64_t round_half_away(int64_t x, unsigned shift) {
    const int64_t half = int64_t(1) << (shift - 1);
    return x < 0 ? -((-x + half) >> shift) : (x + half) >> shift;
}

// The convolution's exact sum for output (k, h, w), written out plainly.
int64_t exact_sum(uint32_t k, uint32_t h, uint32_t w) {
    const Problem& p = problem();
    int64_t sum = 0;
    for (uint32_t r = 0; r < kR; ++r)
        for (uint32_t s = 0; s < kS; ++s) {
            const int64_t y = int64_t(h) + r - 1, x = int64_t(w) + s - 1;
            if (y < 0 || y >= kH || x < 0 || x >= kW) continue;
            for (uint32_t c = 0; c < kC; ++c)
                sum += int64_t(p.input[(size_t(y) * kW + size_t(x)) * kC + c]) *
                       p.weights[((size_t(k) * kC + c) * kR + r) * kS + s];
        }
    return sum;
}

// The model's int8 output against the exact sums through CACC's truncation (round half away,
// then int32) and SDP's identity convertor to int8.
bool bit_exact() {
    Model& m = model();
    m.run();
    uint64_t mismatches = 0;
    for (uint32_t k = 0; k < kK; ++k)
        for (uint32_t h = 0; h < kH; ++h)
            for (uint32_t w = 0; w < kW; ++w) {
                const int64_t sum = exact_sum(k, h, w);
                int64_t v = round_half_away(sum, kClip);
                v = v > 127 ? 127 : (v < -128 ? -128 : v);
                if (m.output(k, h, w) != v && mismatches++ < 5)
                    std::printf("k %u h %u w %u: model %d, exact %d (sum %lld)\n", k, h, w,
                                m.output(k, h, w), int(v), static_cast<long long>(sum));
            }
    std::printf("bit-exact check: %llu of %u outputs of the model differ from the exact ones\n",
                static_cast<unsigned long long>(mismatches), kW * kH * kK);
    return mismatches == 0;
}

constexpr double kMinTime = 0.2;  // seconds per repetition
constexpr int kRepetitions = 7;

void BM_ModelConv3x3Int8(benchmark::State& state) {
    Model& m = model();
    for (auto _ : state) {
        m.run();
        benchmark::ClobberMemory();
    }
    if (m.stats().programming_errors || m.stats().faults)
        state.SkipWithError(("model: " + m.stats().last_error).c_str());
    state.SetItemsProcessed(int64_t(state.iterations()) * kW * kH * kK * kC * kR * kS);
}
BENCHMARK(BM_ModelConv3x3Int8)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(kMinTime)
    ->Repetitions(kRepetitions)
    ->ReportAggregatesOnly(true);

// ---- The googlenet trace through build/bin/nvdla_trace ----

constexpr const char* kTrace = "googlenet_conv2_3x3_int16";
constexpr double kCModelSeconds = 84.0;  // the C model on the same trace (docs/emu/convolution.md)

std::filesystem::path trace_dir() {
    return nvdla::test::configured_shared_dir() / "vectors/hw-traces/nv_full" / kTrace;
}

std::filesystem::path trace_player() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::path() : self.parent_path() / "nvdla_trace";
}

// One replay: the time nvdla_trace reports (its replay loop) and whether every check passed.
bool replay(double& seconds) {
    const std::string command =
        trace_player().string() + " --config nv_full '" + trace_dir().string() + "' 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return false;
    char line[512];
    bool timed = false;
    while (std::fgets(line, sizeof line, pipe))
        if (const char* at = std::strstr(line, "replayed in "))
            timed = std::sscanf(at, "replayed in %lf s", &seconds) == 1;
    return pclose(pipe) == 0 && timed;
}

// User + system time of the children waited for so far.
double children_cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

void BM_TraceGooglenetInt16(benchmark::State& state) {
    double process_ms = 0, cpu_ms = 0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        const double cpu = children_cpu_seconds();
        double seconds = 0;
        if (!replay(seconds)) {
            state.SkipWithError("nvdla_trace did not replay the trace or a check failed");
            return;
        }
        state.SetIterationTime(seconds);
        cpu_ms += (children_cpu_seconds() - cpu) * 1e3;
        process_ms +=
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
    }
    state.counters["process_ms"] =
        benchmark::Counter(process_ms, benchmark::Counter::kAvgIterations);
    state.counters["process_cpu_ms"] =
        benchmark::Counter(cpu_ms, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_TraceGooglenetInt16)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Iterations(3)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

#if defined(NVDLA_BENCH_WITH_DNNL)
struct OneDnn {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    dnnl::convolution_forward conv;
    dnnl::memory src, weights, dst;

    OneDnn() {
        using dt = dnnl::memory::data_type;
        using tag = dnnl::memory::format_tag;
        const Problem& p = problem();
        const dnnl::memory::desc src_md({1, kC, kH, kW}, dt::s8, tag::nhwc);
        const dnnl::memory::desc any_weights({kK, kC, kR, kS}, dt::s8, tag::any);
        const dnnl::memory::desc dst_md({1, kK, kH, kW}, dt::s32, tag::nhwc);
        const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                                   dnnl::algorithm::convolution_direct, src_md,
                                                   any_weights, dst_md, {1, 1}, {1, 1}, {1, 1});
        const dnnl::convolution_forward::primitive_desc pd(desc, engine);
        conv = dnnl::convolution_forward(pd);
        src = dnnl::memory(src_md, engine);
        std::memcpy(src.get_data_handle(), p.input.data(), p.input.size());
        dnnl::memory plain({{kK, kC, kR, kS}, dt::s8, tag::oihw}, engine);
        std::memcpy(plain.get_data_handle(), p.weights.data(), p.weights.size());
        weights = dnnl::memory(pd.weights_desc(), engine);
        dnnl::reorder(plain, weights).execute(stream, plain, weights);
        dst = dnnl::memory(dst_md, engine);
        stream.wait();
    }
    void run() {
        conv.execute(stream,
                     {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
        stream.wait();
    }
    int32_t sum(uint32_t k, uint32_t h, uint32_t w) const {
        return static_cast<const int32_t*>(dst.get_data_handle())[(size_t(h) * kW + w) * kK + k];
    }
};

OneDnn& onednn() {
    static OneDnn o;
    return o;
}

void BM_OneDnnConv3x3Int8(benchmark::State& state) {
    OneDnn& o = onednn();
    for (auto _ : state) {
        o.run();
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(int64_t(state.iterations()) * kW * kH * kK * kC * kR * kS);
}
BENCHMARK(BM_OneDnnConv3x3Int8)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(kMinTime)
    ->Repetitions(kRepetitions)
    ->ReportAggregatesOnly(true);

// oneDNN's sums against the exact ones: whether its int8 kernel is exact on this CPU (it is
// not with AVX2 alone, where it multiplies pairs of bytes into saturating int16).
void report_onednn_exactness() {
    OneDnn& o = onednn();
    o.run();
    uint64_t differ = 0;
    for (uint32_t k = 0; k < kK; ++k)
        for (uint32_t h = 0; h < kH; ++h)
            for (uint32_t w = 0; w < kW; ++w) differ += o.sum(k, h, w) != exact_sum(k, h, w);
    if (differ)
        std::printf(
            "oneDNN is not exact on this CPU: %llu of %u sums differ from the exact ones "
            "(its timing is still shown)\n",
            static_cast<unsigned long long>(differ), kW * kH * kK);
    else
        std::printf("oneDNN's int8 sums are exact on this CPU\n");
}
#endif

class RatioReporter : public benchmark::ConsoleReporter {
  public:
    struct Medians {
        double real = 0, cpu = 0;  // seconds
        double process_ms = 0, process_cpu_ms = 0;
    };
    std::map<std::string, Medians> medians;
    void ReportRuns(const std::vector<Run>& runs) override {
        for (const Run& r : runs)
            if (r.aggregate_name == "median") {
                Medians& m = medians[r.run_name.function_name];
                const double unit = benchmark::GetTimeUnitMultiplier(r.time_unit);
                m.real = r.GetAdjustedRealTime() / unit;
                m.cpu = r.GetAdjustedCPUTime() / unit;
                if (auto c = r.counters.find("process_ms"); c != r.counters.end())
                    m.process_ms = c->second.value;
                if (auto c = r.counters.find("process_cpu_ms"); c != r.counters.end())
                    m.process_cpu_ms = c->second.value;
            }
        ConsoleReporter::ReportRuns(runs);
    }
};

}  // namespace

int main(int argc, char** argv) {
    // Below the avx512 level the model stands for a machine without AVX-512: oneDNN gets the
    // same limit (unless ONEDNN_MAX_CPU_ISA is set), so that it runs what it would run there.
    if (nvdla::emu::isa_level() != nvdla::emu::IsaLevel::Avx512)
        setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 0);
    // One thread for oneDNN too, like the model: its OpenMP runtime reads OMP_NUM_THREADS when
    // the program loads, so run again with it set.
    if (!std::getenv("OMP_NUM_THREADS")) {
        setenv("OMP_NUM_THREADS", "1", 1);
        execv("/proc/self/exe", argv);  // returns only on failure: go on as we are
    }
    std::vector<char*> args(argv, argv + argc);
    std::string interleave = "--benchmark_enable_random_interleaving=true";
    bool given = false;
    for (char* a : args)
        given |= std::string(a).rfind("--benchmark_enable_random_interleaving", 0) == 0;
    if (!given) args.insert(args.begin() + 1, interleave.data());
    int count = static_cast<int>(args.size());
    benchmark::Initialize(&count, args.data());
    if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
    std::printf(
        "CPU: %s; emulator kernels: %s (NVDLA_EMU_ISA lowers them), ONEDNN_MAX_CPU_ISA=%s\n",
        cpu_name().c_str(), nvdla::emu::isa_name(nvdla::emu::isa_level()),
        std::getenv("ONEDNN_MAX_CPU_ISA") ? std::getenv("ONEDNN_MAX_CPU_ISA") : "(not set)");
    if (!bit_exact()) return 1;
#if defined(NVDLA_BENCH_WITH_DNNL)
    report_onednn_exactness();
#endif
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();

    auto& t = reporter.medians;
    const double gmac = double(kW) * kH * kK * kC * kR * kS / 1e9;
    std::printf(
        "\n3x3 int8 convolution 56x56x64 -> 56x56x64 on nv_full (%.3f GMAC), "
        "OMP_NUM_THREADS=%s\n",
        gmac, std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "unset");
    std::printf("%-40s %10s %10s %8s %8s\n", "", "median ms", "GMAC/s", "ratio", "(CPU)");
    const char* model_name = "BM_ModelConv3x3Int8";
    const char* dnnl_name = "BM_OneDnnConv3x3Int8";
    if (t.count(dnnl_name))
        std::printf("%-40s %10.3f %10.2f %8s %8s\n", "oneDNN s8 -> s32 sums (conv only)",
                    t[dnnl_name].real * 1e3, gmac / t[dnnl_name].real, "1.00", "1.00");
    if (t.count(model_name)) {
        std::printf("%-40s %10.3f %10.2f", "model, registers -> int8 in memory",
                    t[model_name].real * 1e3, gmac / t[model_name].real);
        if (t.count(dnnl_name)) {
            const double ratio = t[dnnl_name].real / t[model_name].real;
            std::printf(" %8.2f %8.2f%s", ratio, t[dnnl_name].cpu / t[model_name].cpu,
                        ratio >= 0.5 ? "" : "   below the 0.5 target");
        }
        std::printf("\n");
    }
    const char* trace_name = "BM_TraceGooglenetInt16";
    if (t.count(trace_name)) {
        // The replay covers the register writes, loading the memory from the trace's text
        // files (most of it), the layer and the output check.
        const double replay = t[trace_name].real, cpu = t[trace_name].process_cpu_ms * 1e-3;
        std::printf("\n%s (nv_full trace), C model ~%.0f s:\n", kTrace, kCModelSeconds);
        std::printf("  nvdla_trace replay %.1f ms: %.0f times faster%s\n", replay * 1e3,
                    kCModelSeconds / replay,
                    kCModelSeconds / replay >= 1000 ? "" : "   below the 1000x target");
        std::printf("  the whole process %.1f ms, %.1f ms of CPU: %.0f times faster%s\n",
                    t[trace_name].process_ms, cpu * 1e3, kCModelSeconds / cpu,
                    kCModelSeconds / cpu >= 1000 ? "" : "   below the 1000x target");
    }
    return 0;
}
