// Whole networks on the emulated backend, side by side with oneDNN running the same
// convolutions: ResNet-18, ResNet-50 and MobileNetV2 (224x224, described here with the builder
// API, weights random from a fixed seed), int8 on nv_full and nv_small and fp16 on nv_full.
// GMAC/s count the network's own MACs (a depthwise layer's, not the block-diagonal zeros the
// convolution core multiplies; the build line shows both).
//
// For each: images/s of the emulator (input packed, submit, wait; one warm-up run first) with
// its thread count (RuntimeOptions::emu_threads: NVDLA_EMU_THREADS, else every core), the
// network's convolutions run by oneDNN on as many threads (int8 targets: u8 x s8 -> s32, fp16
// target: f32, from NHWC data and weights reordered beforehand; convolutions only, no other
// layer) with the implementations oneDNN chose, their ratio (oneDNN time / emulator time), and
// the emulator's time per unit from the runtime's per-operation profile. The timed runs are not
// profiled (as a user runs a network; the profile's clock reads and records cost 2-3% of a
// MobileNetV2): the profile comes from a second runtime's runs. The CPU and the emulator's
// instruction set are printed.
//
// With two threads or more (N), the throughput of N images in flight is measured too: N
// runtimes with one emulator thread each, every one running its own images, next to oneDNN's
// best throughput on as many cores (one image on N threads, or N images in flight on one
// thread each). This is how a user runs a validation set (nvdla_fmnist classify does); the
// time of one image on N threads is the latency, shown above it.
//
// Arguments: --networks=resnet18,resnet50,mobilenetv2 --targets=int8-full,int8-small,fp16-full
// --images=N (timed runs per network and target, default 1; the median is shown). Times are
// wall-clock; the process's CPU time per image is shown too, for the emulator and for oneDNN,
// and the ratio both ways: on a shared machine the CPU ratio is the one to read, best with
// NVDLA_EMU_THREADS=1 (then oneDNN runs on one thread too and no OpenMP thread spins).
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <time.h>
#include <unistd.h>

#include "cpu_name.hpp"
#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"
#include "emu/parallel.hpp"
#include "nvdla/builder.hpp"
#include "nvdla/runtime.hpp"

#if defined(NVDLA_BENCH_WITH_DNNL)
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace {

using namespace nvdla::builder;
using nvdla::Dims4;
using nvdla::Result;
using nvdla::Status;
using Clock = std::chrono::steady_clock;

struct ConvShape {
    uint32_t c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, stride = 1, pad = 0, groups = 1;
    // The network's own multiply-accumulates (c / groups input channels per output channel).
    uint64_t macs() const {
        const uint64_t oh = (h + 2 * pad - r) / stride + 1, ow = (w + 2 * pad - s) / stride + 1;
        return oh * ow * k * (c / groups) * r * s;
    }
};

enum class Activation : uint8_t { None, Relu, Relu6 };

// A network described with the builder, weights random from a fixed seed, remembering its
// convolutions' shapes (for oneDNN).
class Model {
  public:
    explicit Model(const std::string& name) : net(name), rng_(2026) {}

    Network net;
    std::vector<ConvShape> convs;
    uint64_t macs() const {
        uint64_t m = 0;
        for (const ConvShape& c : convs) m += c.macs();
        return m;
    }

    // Uniform He initialisation (scaled by `gain`).
    void fill(std::vector<float>& v, uint32_t fan_in, float gain) {
        const float a = gain * std::sqrt(6.0f / static_cast<float>(fan_in));
        std::uniform_real_distribution<float> d(-a, a);
        for (float& f : v) f = d(rng_);
    }

    Tensor conv(Tensor x, uint32_t k, uint32_t size, uint32_t stride, uint32_t pad,
                Activation activation, float gain = 1.0f, uint32_t groups = 1) {
        const Dims4 in = shape_of(x);
        ConvShape s{in.c, in.h, in.w, k, size, size, stride, pad, groups};
        convs.push_back(s);
        const uint32_t fan_in = in.c / groups * size * size;
        std::vector<float> w(size_t(k) * fan_in), b(k);
        fill(w, fan_in, gain);
        fill(b, 1, 0.05f);
        Tensor y = net.convolution(x,
                                   {.out_channels = k,
                                    .kernel_h = size,
                                    .kernel_w = size,
                                    .stride_h = stride,
                                    .stride_w = stride,
                                    .pad_top = pad,
                                    .pad_left = pad,
                                    .pad_bottom = pad,
                                    .pad_right = pad,
                                    .groups = groups},
                                   w, b);
        const uint32_t oh = (in.h + 2 * pad - size) / stride + 1;
        const uint32_t ow = (in.w + 2 * pad - size) / stride + 1;
        dims_[y.id] = {1, k, oh, ow};
        if (activation == Activation::None) return y;
        Tensor a = activation == Activation::Relu ? net.relu(y) : net.clip(y, 0.0f, 6.0f);
        dims_[a.id] = dims_[y.id];
        return a;
    }

    // The shape of a tensor this class made (the input is 3x224x224).
    Dims4 shape_of(Tensor x) {
        const auto it = dims_.find(x.id);
        return it != dims_.end() ? it->second : Dims4{1, 3, 224, 224};
    }
    void set_shape(Tensor y, Dims4 dims) { dims_[y.id] = dims; }
    void same_shape(Tensor y, Tensor as) { dims_[y.id] = shape_of(as); }

    // Global average pooling of the 7x7 maps and the 1000-class classifier.
    void classifier(Tensor x) {
        const uint32_t channels = shape_of(x).c;
        x = net.pooling(x, {.type = PoolingType::Average,
                            .kernel_h = 7,
                            .kernel_w = 7,
                            .stride_h = 7,
                            .stride_w = 7});
        std::vector<float> fc(size_t(1000) * channels), bias(1000);
        fill(fc, channels, 1.0f);
        fill(bias, 1, 0.05f);
        net.output(net.fully_connected(x, 1000, fc, bias), "logits");
    }

  private:
    std::mt19937 rng_;
    std::map<uint32_t, Dims4> dims_;
};

// ResNet-18 (basic blocks) or ResNet-50 (bottlenecks).
void describe_resnet(Model& m, bool bottleneck, const std::vector<uint32_t>& blocks) {
    Network& net = m.net;
    Tensor x = net.input("data", {1, 3, 224, 224});
    x = m.conv(x, 64, 7, 2, 3, Activation::Relu);
    Tensor pooled = net.pooling(x, {.type = PoolingType::Max,
                                    .kernel_h = 3,
                                    .kernel_w = 3,
                                    .stride_h = 2,
                                    .stride_w = 2,
                                    .pad_top = 1,
                                    .pad_left = 1,
                                    .pad_bottom = 1,
                                    .pad_right = 1});
    m.set_shape(pooled, {1, 64, 56, 56});
    x = pooled;
    uint32_t channels = 64;
    const uint32_t widths[4] = {64, 128, 256, 512};
    for (uint32_t stage = 0; stage < 4; ++stage)
        for (uint32_t b = 0; b < blocks[stage]; ++b) {
            const uint32_t stride = stage > 0 && b == 0 ? 2 : 1;
            const uint32_t width = widths[stage], out = bottleneck ? width * 4 : width;
            Tensor shortcut = x;
            if (stride != 1 || channels != out)
                shortcut = m.conv(x, out, 1, stride, 0, Activation::None);
            Tensor y;
            if (bottleneck) {
                y = m.conv(x, width, 1, 1, 0, Activation::Relu);
                y = m.conv(y, width, 3, stride, 1, Activation::Relu);
                y = m.conv(y, out, 1, 1, 0, Activation::None, 0.3f);
            } else {
                y = m.conv(x, width, 3, stride, 1, Activation::Relu);
                y = m.conv(y, out, 3, 1, 1, Activation::None, 0.3f);
            }
            x = net.relu(net.eltwise(y, shortcut, EltwiseOp::Sum));
            m.same_shape(x, y);
            channels = out;
        }
    m.classifier(x);
}

// torchvision's MobileNetV2 (width 1.0): inverted residuals (1x1 expansion, depthwise 3x3,
// linear 1x1 projection; a residual sum where stride 1 keeps the channels), ReLU6 as a clip.
void describe_mobilenet_v2(Model& m) {
    Network& net = m.net;
    Tensor x = net.input("data", {1, 3, 224, 224});
    x = m.conv(x, 32, 3, 2, 1, Activation::Relu6);
    struct Stage {
        uint32_t expansion, channels, blocks, stride;
    };
    constexpr Stage kStages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                 {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    uint32_t channels = 32;
    for (const Stage& stage : kStages)
        for (uint32_t b = 0; b < stage.blocks; ++b) {
            const uint32_t stride = b == 0 ? stage.stride : 1;
            const uint32_t hidden = channels * stage.expansion;
            const bool residual = stride == 1 && channels == stage.channels;
            Tensor y = x;
            if (stage.expansion != 1) y = m.conv(y, hidden, 1, 1, 0, Activation::Relu6);
            y = m.conv(y, hidden, 3, stride, 1, Activation::Relu6, 1.0f, hidden);
            y = m.conv(y, stage.channels, 1, 1, 0, Activation::None, residual ? 0.3f : 1.0f);
            if (residual) {
                Tensor sum = net.eltwise(y, x, EltwiseOp::Sum);
                m.same_shape(sum, y);
                y = sum;
            }
            x = y;
            channels = stage.channels;
        }
    x = m.conv(x, 1280, 1, 1, 0, Activation::Relu6);
    m.classifier(x);
}

HostTensor random_image() {
    HostTensor t = make_host_tensor({1, 3, 224, 224});
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (float& f : t.data) f = d(rng);
    return t;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

double process_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// Runs body(i, ready) on `count` threads at once, i = 0 .. count - 1: each calls ready() once
// warm, then runs `images` images. Returns the images per second from the moment all are ready
// to the last one's end; cpu_per_image gets the process's CPU seconds per image over that time.
double in_flight_images_per_second(
    unsigned count, uint32_t images, double& cpu_per_image,
    const std::function<void(unsigned, const std::function<void()>&)>& body) {
    Clock::time_point start;
    double cpu_start = 0;
    std::barrier ready(count, [&]() noexcept {
        start = Clock::now();
        cpu_start = process_cpu_seconds();
    });
    std::vector<Clock::time_point> ends(count);
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < count; ++i)
        threads.emplace_back([&, i] {
            body(i, [&ready] { ready.arrive_and_wait(); });
            ends[i] = Clock::now();
        });
    for (std::thread& t : threads) t.join();
    cpu_per_image = (process_cpu_seconds() - cpu_start) / (double(count) * images);
    const double seconds =
        std::chrono::duration<double>(*std::max_element(ends.begin(), ends.end()) - start).count();
    return double(count) * images / seconds;
}

#if defined(NVDLA_BENCH_WITH_DNNL)
// The network's convolutions in oneDNN, one primitive each, data and weights random.
class OneDnnConvolutions {
  public:
    OneDnnConvolutions(const std::vector<ConvShape>& convs, bool int8) {
        using dt = dnnl::memory::data_type;
        using tag = dnnl::memory::format_tag;
        for (const ConvShape& c : convs) {
            const int64_t oh = (c.h + 2 * c.pad - c.r) / c.stride + 1;
            const int64_t ow = (c.w + 2 * c.pad - c.s) / c.stride + 1;
            const dnnl::memory::desc src_md({1, c.c, c.h, c.w}, int8 ? dt::u8 : dt::f32, tag::nhwc);
            // Grouped (depthwise: groups = channels) as oneDNN takes groups: the weights
            // {groups, k / groups, c / groups, r, s}, computing the model's MACs only.
            const dnnl::memory::dims wei_dims =
                c.groups == 1
                    ? dnnl::memory::dims{c.k, c.c, c.r, c.s}
                    : dnnl::memory::dims{c.groups, c.k / c.groups, c.c / c.groups, c.r, c.s};
            const dnnl::memory::desc wei_md(wei_dims, int8 ? dt::s8 : dt::f32, tag::any);
            const dnnl::memory::desc dst_md({1, c.k, oh, ow}, int8 ? dt::s32 : dt::f32, tag::nhwc);
            const dnnl::convolution_forward::desc desc(
                dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
                wei_md, dst_md, {c.stride, c.stride}, {c.pad, c.pad}, {c.pad, c.pad});
            const dnnl::convolution_forward::primitive_desc pd(desc, engine_);
            Layer l;
            l.impl = pd.impl_info_str();
            l.macs = c.macs();
            l.conv = dnnl::convolution_forward(pd);
            l.src = dnnl::memory(pd.src_desc(), engine_);
            l.weights = dnnl::memory(pd.weights_desc(), engine_);
            l.dst = dnnl::memory(pd.dst_desc(), engine_);
            std::memset(l.src.get_data_handle(), 1, pd.src_desc().get_size());
            std::memset(l.weights.get_data_handle(), 1, pd.weights_desc().get_size());
            layers_.push_back(std::move(l));
        }
    }
    double run_seconds() {
        const auto start = Clock::now();
        for (Layer& l : layers_) {
            const auto layer_start = Clock::now();
            l.conv.execute(
                stream_,
                {{DNNL_ARG_SRC, l.src}, {DNNL_ARG_WEIGHTS, l.weights}, {DNNL_ARG_DST, l.dst}});
            stream_.wait();
            l.seconds += std::chrono::duration<double>(Clock::now() - layer_start).count();
        }
        return std::chrono::duration<double>(Clock::now() - start).count();
    }
    // oneDNN's implementations (the data types show in their names' ISA) with their layer
    // counts, multiply-adds and share of the time, so that the comparison is seen to run what
    // it says.
    void print_implementations() const {
        std::map<std::string, std::tuple<uint32_t, uint64_t, double>> by_impl;
        double total = 0;
        for (const Layer& l : layers_) {
            auto& [count, macs, seconds] = by_impl[l.impl];
            ++count;
            macs += l.macs;
            seconds += l.seconds;
            total += l.seconds;
        }
        for (const auto& [impl, entry] : by_impl) {
            const auto& [count, macs, seconds] = entry;
            std::printf("    oneDNN %-28s %2u convolutions, %6.3f GMAC, %5.1f%% of its time\n",
                        impl.c_str(), count, double(macs) / 1e9,
                        total > 0 ? 100 * seconds / total : 0.0);
        }
    }

  private:
    struct Layer {
        dnnl::convolution_forward conv;
        dnnl::memory src, weights, dst;
        std::string impl;
        uint64_t macs = 0;
        double seconds = 0;
    };
    dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream_{engine_};
    std::vector<Layer> layers_;
};

// oneDNN's images/s with `count` images in flight, each thread running its own primitives on
// one OpenMP thread (created in that thread, so that oneDNN plans them for one thread);
// cpu_per_image gets the process's CPU seconds per image.
double onednn_in_flight_images_per_second(const std::vector<ConvShape>& convs, bool int8,
                                          unsigned count, uint32_t images, double& cpu_per_image) {
    return in_flight_images_per_second(count, images, cpu_per_image,
                                       [&](unsigned, const std::function<void()>& ready) {
                                           omp_set_num_threads(1);
                                           OneDnnConvolutions onednn(convs, int8);
                                           onednn.run_seconds();  // warm-up
                                           ready();
                                           for (uint32_t run = 0; run < images; ++run)
                                               onednn.run_seconds();
                                       });
}
#endif

// One runtime with the network loaded and its input packed: what one image in flight needs.
struct Instance {
    std::unique_ptr<nvdla::Runtime> runtime;
    std::shared_ptr<nvdla::Network> network;
    std::unique_ptr<nvdla::Context> context;
};

Result<Instance> open_instance(const CompiledNetwork& built, const std::string& config,
                               unsigned threads, bool profiling) {
    nvdla::RuntimeOptions ro;
    ro.backend = nvdla::BackendChoice::Emu;
    ro.emu_config = config;
    ro.emu_memory_bytes = uint64_t(1) << 30;
    ro.profiling = profiling;
    ro.emu_threads = threads;
    Instance instance;
    auto rt = nvdla::Runtime::open(ro);
    if (!rt) return nvdla::error("runtime: ", rt.message());
    instance.runtime = std::move(rt).value();
    auto loaded = instance.runtime->load(built.loadable);
    if (!loaded) return nvdla::error("load: ", loaded.message());
    instance.network = std::move(loaded).value();
    auto ctx = instance.network->create_context();
    if (!ctx) return nvdla::error("context: ", ctx.message());
    instance.context = std::move(ctx).value();
    if (Status s = pack_input(built.inputs[0], random_image(), instance.context->input(0)); !s)
        return nvdla::error("input: ", s.message());
    return instance;
}

// The emulator's images/s with `count` images in flight, each on its own runtime with one
// emulator thread; cpu_per_image gets the process's CPU seconds per image.
Result<double> emulator_in_flight_images_per_second(const CompiledNetwork& built,
                                                    const std::string& config, unsigned count,
                                                    uint32_t images, double& cpu_per_image) {
    std::vector<Instance> instances;
    for (unsigned i = 0; i < count; ++i) {
        Result<Instance> instance = open_instance(built, config, 1, false);
        if (!instance) return instance.status();
        instances.push_back(std::move(instance).value());
    }
    std::vector<Status> results(count);
    const double images_per_second = in_flight_images_per_second(
        count, images, cpu_per_image, [&](unsigned i, const std::function<void()>& ready) {
            auto run = [&]() -> Status {
                Result<nvdla::Job> job = instances[i].context->submit();
                return job ? job->wait() : job.status();
            };
            results[i] = run();  // warm-up (weights decoded once)
            ready();
            for (uint32_t r = 0; r < images && results[i]; ++r) results[i] = run();
        });
    for (const Status& s : results)
        if (!s) return nvdla::error("run: ", s.message());
    return images_per_second;
}

struct Target {
    std::string key, config;
    nvdla::Precision precision;
};

bool listed(const std::string& list, const std::string& item) {
    return list.empty() || ("," + list + ",").find("," + item + ",") != std::string::npos;
}

// Whether run `run` (from 0) of a series meant to count `counted` runs, which took `seconds`,
// is the warm-up (weights decoded once), left out: the first, unless the series counts one run
// and that one took long enough to be what every run costs.
bool warm_up(uint32_t run, uint32_t counted, double seconds) {
    return run == 0 && !(counted == 1 && seconds > 5);
}

// The emulator's time per unit: a profiled runtime's runs (a warm-up first, as for the timed
// runs), the mean per image of each kind of operation and the rest (the runtime's own time).
bool print_unit_profile(const CompiledNetwork& built, const std::string& config, unsigned threads,
                        uint32_t images) {
    Result<Instance> instance = open_instance(built, config, threads, true);
    if (!instance) {
        std::printf("  profiled runtime: %s\n", instance.message().c_str());
        return false;
    }
    std::map<std::string, double> units;  // seconds per operation kind, over the counted runs
    double total = 0;
    uint32_t counted = 0;
    const uint32_t runs = std::min(images, 3u);
    for (uint32_t i = 0; i <= runs; ++i) {
        const auto start = Clock::now();
        Result<nvdla::Job> job = instance->context->submit();
        Status done = job ? job->wait() : job.status();
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (!done) {
            std::printf("  profiled run: %s\n", done.message().c_str());
            return false;
        }
        if (warm_up(i, runs, seconds)) continue;
        total += seconds;
        for (const nvdla::OperationTime& op : job->timing().operations)
            units[op.name.substr(0, op.name.find(' '))] +=
                std::chrono::duration<double>(op.duration).count();
        if (++counted == runs) break;
    }
    std::printf(
        "  emulator time per unit (runtime profile, mean per image of %u profiled run(s), "
        "wall-clock):\n",
        counted);
    const double per_image = total / counted;
    double profiled = 0;
    for (const auto& [name, seconds] : units) {
        std::printf("    %-12s %9.4f s  %5.1f%%\n", name.c_str(), seconds / counted,
                    100 * seconds / counted / per_image);
        profiled += seconds / counted;
    }
    std::printf("    %-12s %9.4f s  %5.1f%%\n", "(runtime)", per_image - profiled,
                100 * (per_image - profiled) / per_image);
    return true;
}

// One network on one target: images/s, the oneDNN comparison, the per-unit profile.
bool run_target(Model& model, const Target& t, uint32_t images, unsigned threads,
                const Calibration* calibration) {
    std::printf("\n%s, %s on %s:\n", model.net.name().c_str(),
                std::string(nvdla::to_string(t.precision)).c_str(), t.config.c_str());
    BuildOptions options;
    options.config = t.config;
    options.precision = t.precision;
    options.calibration = calibration;
    Result<CompiledNetwork> built = build(model.net, options);
    if (!built) {
        std::printf("  build: %s\n", built.message().c_str());
        return false;
    }
    std::printf(
        "  build: %.3f GMAC on the convolution core for the network's %.3f GMAC (hardware / "
        "model MACs %.2f: block-diagonal zeros of grouped layers, padding, builder's own "
        "convolutions)\n",
        double(built->hardware_macs) / 1e9, double(built->model_macs) / 1e9,
        built->model_macs ? double(built->hardware_macs) / double(built->model_macs) : 0.0);
    Result<Instance> instance = open_instance(*built, t.config, threads, false);
    if (!instance) {
        std::printf("  %s\n", instance.message().c_str());
        return false;
    }
    nvdla::Context* ctx = instance->context.get();
    std::vector<double> times;
    double cpu = 0;
    uint64_t onednn_layers = 0;       // convolutions the emulator gave oneDNN, over the timed runs
    nvdla::emu::ParallelStats waits;  // the layers' threads' waits, over the timed runs
    for (uint32_t i = 0; i <= images; ++i) {
        const double cpu_start = process_cpu_seconds();
        const uint64_t onednn_start = nvdla::emu::conv::onednn_layers();
        const nvdla::emu::ParallelStats waits_start = nvdla::emu::parallel_stats();
        const auto start = Clock::now();
        Result<nvdla::Job> job = ctx->submit();
        Status done = job ? job->wait() : job.status();
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (!done) {
            std::printf("  run: %s\n", done.message().c_str());
            return false;
        }
        if (warm_up(i, images, seconds)) continue;
        times.push_back(seconds);
        cpu += process_cpu_seconds() - cpu_start;
        onednn_layers += nvdla::emu::conv::onednn_layers() - onednn_start;
        const nvdla::emu::ParallelStats waits_end = nvdla::emu::parallel_stats();
        waits.calls += waits_end.calls - waits_start.calls;
        waits.end_idle += waits_end.end_idle - waits_start.end_idle;
        waits.caller_waited += waits_end.caller_waited - waits_start.caller_waited;
        waits.others_waited += waits_end.others_waited - waits_start.others_waited;
        waits.others_busy += waits_end.others_busy - waits_start.others_busy;
        if (times.size() == images) break;
    }
    const double emulator = median(times);
    cpu /= images;
    const double gmac = double(model.macs()) / 1e9;
    std::printf(
        "  emulator: %.3f s per image (median of %u), %.2f images/s, %.2f GMAC/s; "
        "%.4f s of CPU per image (%.2f GMAC/s per CPU second), %u thread(s); GMAC/s here and "
        "below count the model's MACs\n",
        emulator, images, 1 / emulator, gmac / emulator, cpu, gmac / cpu, threads);
    if (threads > 1)
        std::printf(
            "  threads per image (mean wall-clock %.4f s): %.0f calls on several threads; "
            "waited (s, summed over threads): %.4f at the calls' ends, %.4f calling thread "
            "and %.4f others for blocks; the pool's threads ran parts %.4f s\n",
            std::accumulate(times.begin(), times.end(), 0.0) / images, double(waits.calls) / images,
            waits.end_idle / images, waits.caller_waited / images, waits.others_waited / images,
            waits.others_busy / images);
    std::printf(
        "  %.0f convolution operations through oneDNN inside the emulator (the network's %zu "
        "convolutions, as the builder split them)\n",
        double(onednn_layers) / images, model.convs.size());
    const bool int8 = t.precision == nvdla::Precision::Int8;
#if defined(NVDLA_BENCH_WITH_DNNL)
    OneDnnConvolutions onednn(model.convs, int8);
    onednn.run_seconds();  // warm-up
    std::vector<double> reference_times;
    const uint32_t reference_runs = std::max(images, 5u);
    const double reference_cpu_start = process_cpu_seconds();
    for (uint32_t i = 0; i < reference_runs; ++i) reference_times.push_back(onednn.run_seconds());
    const double reference_cpu = (process_cpu_seconds() - reference_cpu_start) / reference_runs;
    const double reference = median(reference_times);
    std::printf(
        "  oneDNN %s, the same convolutions only: %.4f s per image, %.2f images/s, "
        "%.1f GMAC/s; %.4f s of CPU per image\n",
        int8 ? "u8 x s8 -> s32" : "f32", reference, 1 / reference,
        double(model.macs()) / 1e9 / reference, reference_cpu);
    // On a shared machine the wall-clock times swing with the other load; the CPU times do
    // not (with one thread each they are the time each computed; with several, OpenMP's
    // spinning threads count towards oneDNN's).
    std::printf("  ratio (oneDNN time / emulator time): wall-clock %.3f, CPU %.3f\n",
                reference / emulator, reference_cpu / cpu);
    onednn.print_implementations();
#endif
    if (!print_unit_profile(*built, t.config, threads, images)) return false;
    if (threads < 2) return true;
    // Images in flight run for half a second at least (a short network's few images would be
    // a few milliseconds, within the machine's jitter); cpu_per_image estimates one's time.
    const auto in_flight_runs = [images](double cpu_per_image) {
        return std::max(images, static_cast<uint32_t>(std::ceil(0.5 / cpu_per_image)));
    };
    double in_flight_cpu = 0;
    const uint32_t in_flight_images = in_flight_runs(cpu);
    Result<double> in_flight = emulator_in_flight_images_per_second(
        *built, t.config, threads, in_flight_images, in_flight_cpu);
    if (!in_flight) {
        std::printf("  %u images in flight: %s\n", threads, in_flight.message().c_str());
        return false;
    }
    std::printf(
        "  %u images in flight (a runtime with one emulator thread each, %u images each): "
        "%.2f images/s, %.4f s of CPU per image\n",
        threads, in_flight_images, *in_flight, in_flight_cpu);
#if defined(NVDLA_BENCH_WITH_DNNL)
    double onednn_in_flight_cpu = 0;
    const uint32_t onednn_in_flight_images = in_flight_runs(reference_cpu);
    const double onednn_in_flight = onednn_in_flight_images_per_second(
        model.convs, int8, threads, onednn_in_flight_images, onednn_in_flight_cpu);
    std::printf(
        "  oneDNN, %u images in flight on one thread each (%u images each): %.2f images/s, "
        "%.4f s of CPU per image\n",
        threads, onednn_in_flight_images, onednn_in_flight, onednn_in_flight_cpu);
    // oneDNN's better way to use the cores: its one image on every thread, or images in flight.
    const bool onednn_in_flight_best = onednn_in_flight > 1 / reference;
    std::printf(
        "  throughput ratio on %u cores (the emulator's images in flight to oneDNN's best, %s): "
        "wall-clock %.3f, CPU %.3f\n",
        threads, onednn_in_flight_best ? "its images in flight" : "one image on every thread",
        *in_flight / std::max(1 / reference, onednn_in_flight),
        (onednn_in_flight_best ? onednn_in_flight_cpu : reference_cpu) / in_flight_cpu);
#endif
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress shows while the networks run
    std::string networks, targets_list;
    uint32_t images = 1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a.rfind("--networks=", 0) == 0) {
            networks = a.substr(11);
        } else if (a.rfind("--targets=", 0) == 0) {
            targets_list = a.substr(10);
        } else if (a.rfind("--images=", 0) == 0) {
            images = static_cast<uint32_t>(std::max(1L, std::strtol(a.c_str() + 9, nullptr, 10)));
        } else if (a.rfind("--benchmark", 0) == 0) {
            // make bench's BENCH_ARGS are meant for the Google Benchmark programs
        } else {
            std::fprintf(stderr,
                         "unknown argument %s (--networks=resnet18,resnet50,mobilenetv2 "
                         "--targets=int8-full,int8-small,fp16-full --images=N)\n",
                         a.c_str());
            return 2;
        }
    }
    const unsigned threads = nvdla::emu::default_emu_threads();
    // Below the avx512 level the emulator stands for a machine without AVX-512: oneDNN gets the
    // same limit (unless ONEDNN_MAX_CPU_ISA is set), so that it runs what it would run there.
    if (nvdla::emu::isa_level() != nvdla::emu::IsaLevel::Avx512)
        setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 0);
    // oneDNN on as many threads as the emulator: its OpenMP runtime reads OMP_NUM_THREADS when
    // the program loads, so run again with it set.
    if (!std::getenv("OMP_NUM_THREADS")) {
        setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
        execv("/proc/self/exe", argv);  // returns only on failure: go on as we are
    }
    std::printf(
        "CPU: %s; emulator kernels: %s; %u thread(s) (NVDLA_EMU_THREADS), "
        "OMP_NUM_THREADS=%s, ONEDNN_MAX_CPU_ISA=%s\n",
        cpu_name().c_str(), nvdla::emu::isa_name(nvdla::emu::isa_level()), threads,
        std::getenv("OMP_NUM_THREADS"),
        std::getenv("ONEDNN_MAX_CPU_ISA") ? std::getenv("ONEDNN_MAX_CPU_ISA") : "(not set)");
    const std::vector<Target> targets = {{"int8-full", "nv_full", nvdla::Precision::Int8},
                                         {"int8-small", "nv_small", nvdla::Precision::Int8},
                                         {"fp16-full", "nv_full", nvdla::Precision::Fp16}};
    bool ok = true;
    for (const std::string name : {"resnet18", "resnet50", "mobilenetv2"}) {
        if (!listed(networks, name)) continue;
        Model model(name);
        if (name == "resnet18")
            describe_resnet(model, false, {2, 2, 2, 2});
        else if (name == "resnet50")
            describe_resnet(model, true, {3, 4, 6, 3});
        else
            describe_mobilenet_v2(model);
        if (Status s = model.net.status(); !s) {
            std::printf("%s: %s\n", name.c_str(), s.message().c_str());
            ok = false;
            continue;
        }
        std::printf("\n== %s: %zu convolutions, %.3f GMAC (the model's)\n", name.c_str(),
                    model.convs.size(), double(model.macs()) / 1e9);
        Calibration calibration;  // int8: the ranges of one random image
        const auto start = Clock::now();
        if (Status s = calibration.add_sample(model.net, {random_image()}); !s) {
            std::printf("calibration: %s\n", s.message().c_str());
            ok = false;
            continue;
        }
        std::printf("builder's float reference (calibration run): %.2f s\n",
                    std::chrono::duration<double>(Clock::now() - start).count());
        for (const Target& t : targets)
            if (listed(targets_list, t.key))
                ok &= run_target(model, t, images, threads, &calibration);
    }
    return ok ? 0 : 1;
}
