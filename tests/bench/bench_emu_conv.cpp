// The emulated convolution pipeline against oneDNN, side by side in one run.
//
// A 3x3 int8 convolution 56x56x64 -> 56x56x64 (stride 1, zero padding 1) on nv_full: the model
// runs it from registers to the result in memory (CDMA fetch, CSC/CMAC/CACC, SDP writing int8),
// oneDNN runs the same convolution to int32 sums. Before timing, the model's output is checked
// bit for bit against oneDNN's sums put through the same CACC truncation. The ratio printed is
// oneDNN time / model time (target >= 0.5). Both run on one thread.
//
// oneDNN is optional: built with NVDLA_BENCH_WITH_DNNL (the CMake package `dnnl`, Debian
// libdnnl-dev) the comparison runs; without it only the model is measured.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "nvdla/emu/device.hpp"
#include "nvdla/formats/weights.hpp"
#include "nvdla/hw/register_map.hpp"

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

    // One layer: program the next register group of every unit and enable them.
    void run() {
        const uint32_t g = group_;
        group_ ^= 1;
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
    }

  private:
    void set(const char* unit, const char* reg, uint32_t value) {
        const nvdla::hw::RegisterInfo* r = map_.find(unit, reg);
        if (!r) std::abort();
        device_.write_register(r->address, value);
    }

    const nvdla::hw::RegisterMap& map_;
    nvdla::emu::FlatMemory memory_;
    nvdla::emu::Device device_;
    uint8_t* in_ = nullptr;
    uint8_t* out_ = nullptr;
    uint64_t weight_bytes_ = 0;
    uint32_t group_ = 0;
};

Model& model() {
    static Model m;
    return m;
}

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
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

#if defined(NVDLA_BENCH_WITH_DNNL)
int64_t round_half_away(int64_t x, unsigned shift) {
    const int64_t half = int64_t(1) << (shift - 1);
    return x < 0 ? -((-x + half) >> shift) : (x + half) >> shift;
}

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
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

// The model's int8 output against oneDNN's sums through CACC's truncation (round half away,
// then int32) and SDP's identity convertor to int8.
bool bit_exact() {
    Model& m = model();
    OneDnn& o = onednn();
    m.run();
    o.run();
    uint64_t mismatches = 0;
    for (uint32_t k = 0; k < kK; ++k)
        for (uint32_t h = 0; h < kH; ++h)
            for (uint32_t w = 0; w < kW; ++w) {
                int64_t v = round_half_away(o.sum(k, h, w), kClip);
                v = v > 127 ? 127 : (v < -128 ? -128 : v);
                if (m.output(k, h, w) != v) ++mismatches;
            }
    std::printf("bit-exact check: %llu of %u outputs differ from oneDNN\n",
                static_cast<unsigned long long>(mismatches), kW * kH * kK);
    return mismatches == 0;
}
#endif

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
    // One thread for oneDNN too (the model is single-threaded); set before oneDNN starts.
    setenv("OMP_NUM_THREADS", "1", 0);
    setenv("DNNL_CPU_RUNTIME_THREADS", "1", 0);
    std::vector<char*> args(argv, argv + argc);
    std::string interleave = "--benchmark_enable_random_interleaving=true";
    bool given = false;
    for (char* a : args)
        given |= std::string(a).rfind("--benchmark_enable_random_interleaving", 0) == 0;
    if (!given) args.insert(args.begin() + 1, interleave.data());
    int count = static_cast<int>(args.size());
    benchmark::Initialize(&count, args.data());
    if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
#if defined(NVDLA_BENCH_WITH_DNNL)
    if (!bit_exact()) return 1;
#endif
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();

    auto& t = reporter.median_seconds;
    const double gmac = double(kW) * kH * kK * kC * kR * kS / 1e9;
    std::printf("\n3x3 int8 convolution 56x56x64 -> 56x56x64 on nv_full (%.3f GMAC)\n", gmac);
    std::printf("%-34s %10s %10s %12s\n", "", "median ms", "GMAC/s", "ratio");
    const char* model_name = "BM_ModelConv3x3Int8";
    const char* dnnl_name = "BM_OneDnnConv3x3Int8";
    if (t.count(dnnl_name))
        std::printf("%-34s %10.3f %10.2f %12s\n", "oneDNN (reference)", t[dnnl_name] * 1e3,
                    gmac / t[dnnl_name], "1.00");
    if (t.count(model_name)) {
        std::printf("%-34s %10.3f %10.2f", "model, registers -> memory", t[model_name] * 1e3,
                    gmac / t[model_name]);
        if (t.count(dnnl_name)) {
            const double ratio = t[dnnl_name] / t[model_name];
            std::printf(" %12.2f%s", ratio, ratio >= 0.5 ? "" : "   below the 0.5 target");
        }
        std::printf("\n");
    }
    return 0;
}
