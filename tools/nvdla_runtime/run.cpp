#include "run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "md5.hpp"

namespace nvdla::tool {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

int fail(const std::string& sentence) {
    std::cerr << "nvdla_runtime: " << sentence << "\n";
    return 1;
}

Result<BackendChoice> backend_choice(const std::string& name) {
    if (name == "auto") return BackendChoice::Auto;
    if (name == "emu") return BackendChoice::Emu;
    if (name == "drm") return BackendChoice::Drm;
    return Status::failure("--backend " + name + " is not one of emu, drm, auto");
}

// Configurations to try for "auto": nv_full, nv_small, then the others.
std::vector<std::string> candidate_configs() {
    std::vector<std::string> names = {"nv_full", "nv_small"};
    for (const HwConfig& c : hw_configs())
        if (std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
    return names;
}

Result<Opened> open_one(const Options& options, const std::string& loadable,
                        const std::string& config, bool validate) {
    Result<BackendChoice> backend = backend_choice(options.backend);
    if (!backend) return backend.status();
    RuntimeOptions ro;
    ro.backend = *backend;
    ro.drm_device = options.device;
    ro.emu_config = config;
    ro.profiling = options.profile;
    ro.emu_threads = options.threads;
    Result<std::unique_ptr<Runtime>> rt = Runtime::open(ro);
    if (!rt) return rt.status();
    Opened o;
    o.runtime = std::move(rt).value();
    Result<std::shared_ptr<Network>> net = o.runtime->load_file(loadable);
    if (!net) return net.status();
    o.network = std::move(net).value();
    Result<std::unique_ptr<Context>> ctx = o.network->create_context();
    if (!ctx) return ctx.status();
    o.context = std::move(ctx).value();
    if (validate)
        if (Status s = o.context->validate(); !s) return s;
    return o;
}

// The digest a --expect-md5 argument names: itself, or the first word of the file it names.
Result<std::string> expected_digest(const std::string& arg) {
    auto is_digest = [](const std::string& s) {
        return s.size() == 32 && std::all_of(s.begin(), s.end(), [](char c) {
                   return std::isxdigit(static_cast<unsigned char>(c));
               });
    };
    if (is_digest(arg)) {
        std::string lower = arg;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](char c) { return static_cast<char>(std::tolower(c)); });
        return lower;
    }
    std::ifstream file(arg);
    std::string word;
    if (!file)
        return Status::failure("--expect-md5 " + arg +
                               " is neither an md5 digest nor a readable file");
    if (!(file >> word) || !is_digest(word))
        return Status::failure("--expect-md5: " + arg + " does not start with an md5 digest");
    return word;
}

// The run as Chrome trace events ("X" spans in microseconds): tasks on one track, their
// operations on a second. The runtime reports durations in execution order, so each span
// starts where the previous one on its track ended (tasks run one after another, and so do a
// task's operations).
json chrome_trace(const RunTiming& timing, const std::string& device) {
    json events = json::array();
    const auto span = [&](const std::string& name, int track, double start_us, double us,
                          uint32_t task) {
        events.push_back({{"name", name},
                          {"ph", "X"},
                          {"pid", 1},
                          {"tid", track},
                          {"ts", start_us},
                          {"dur", us},
                          {"args", {{"task", task}}}});
    };
    events.push_back(
        {{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", device}}}});
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", 1},
                      {"args", {{"name", "tasks"}}}});
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", 2},
                      {"args", {{"name", "operations"}}}});
    const auto micros_of = [](std::chrono::nanoseconds d) {
        return static_cast<double>(d.count()) / 1e3;
    };
    double task_start = 0;
    size_t next_op = 0;
    for (const OperationTime& t : timing.tasks) {
        span(t.name, 1, task_start, micros_of(t.duration), t.task);
        double op_start = task_start;
        for (; next_op < timing.operations.size() && timing.operations[next_op].task == t.task;
             ++next_op) {
            const OperationTime& op = timing.operations[next_op];
            span(op.name, 2, op_start, micros_of(op.duration), op.task);
            op_start += micros_of(op.duration);
        }
        task_start += micros_of(t.duration);
    }
    return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

Status write_file(const std::string& path, const void* data, size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return Status::failure(path + ": cannot create the file");
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) return Status::failure(path + ": cannot write the file");
    return Status();
}

std::string join_dims(const Dims4& d) {
    return std::to_string(d.n) + "x" + std::to_string(d.c) + "x" + std::to_string(d.h) + "x" +
           std::to_string(d.w);
}

json tensor_json(const TensorInfo& t) {
    return json{{"name", t.name},
                {"index", t.index},
                {"dims", {t.dims.n, t.dims.c, t.dims.h, t.dims.w}},
                {"data_type", std::string(to_string(t.data_type))},
                {"layout", std::string(to_string(t.layout))},
                {"pixel_format", t.pixel_format},
                {"bytes", t.size_bytes},
                {"line_stride", t.line_stride()},
                {"surface_stride", t.surface_stride()},
                {"quantization",
                 {{"scale", t.quantization.scale},
                  {"offset", t.quantization.offset},
                  {"known", t.quantization.known}}}};
}

double micros(std::chrono::nanoseconds d) {
    return static_cast<double>(d.count()) / 1000.0;
}

}  // namespace

Result<std::vector<std::string>> read_labels(const std::string& path) {
    std::ifstream in(path);
    if (!in) return Status::failure("--labels " + path + ": cannot open the file");
    std::vector<std::string> names;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        names.push_back(line);
    }
    if (names.empty()) return Status::failure("--labels " + path + ": the file names no class");
    return names;
}

std::string labels_side_file(const std::string& loadable) {
    return std::filesystem::path(loadable).replace_extension(".labels").string();
}

std::string format_duration(std::chrono::nanoseconds d) {
    const double ns = static_cast<double>(d.count());
    char text[32];
    if (ns < 1e3)
        std::snprintf(text, sizeof text, "%.0f ns", ns);
    else if (ns < 1e6)
        std::snprintf(text, sizeof text, "%.1f us", ns / 1e3);
    else if (ns < 1e9)
        std::snprintf(text, sizeof text, "%.2f ms", ns / 1e6);
    else
        std::snprintf(text, sizeof text, "%.2f s", ns / 1e9);
    return text;
}

std::string describe_tensor(const TensorInfo& t) {
    return join_dims(t.dims) + " " + std::string(to_string(t.data_type));
}

LatencyStats latency_stats(std::vector<std::chrono::nanoseconds> samples) {
    LatencyStats s;
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    s.runs = static_cast<uint32_t>(samples.size());
    s.min = samples.front();
    s.max = samples.back();
    s.mean = std::accumulate(samples.begin(), samples.end(), std::chrono::nanoseconds{0}) /
             static_cast<int64_t>(samples.size());
    // Nearest-rank percentiles.
    auto rank = [&](double p) {
        const auto r =
            static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(samples.size())));
        return samples[std::clamp<size_t>(r, 1, samples.size()) - 1];
    };
    s.p50 = rank(50);
    s.p90 = rank(90);
    s.p99 = rank(99);
    return s;
}

Result<Opened> open_for(const Options& options, const std::string& loadable,
                        const std::string& config) {
    if (config != "auto") return open_one(options, loadable, config, false);
    // Try each configuration the emulator knows; a drm device has its own.
    Status first_failure;
    for (const std::string& candidate : candidate_configs()) {
        Result<Opened> o = open_one(options, loadable, candidate, true);
        if (o) return o;
        if (first_failure) first_failure = o.status();
        // Failures that no configuration changes end the search.
        const std::string& why = o.message();
        if (why.find("DLA task") == std::string::npos) return o.status();
    }
    return Status::failure("no emulated configuration accepts " + loadable +
                           " (on nv_full: " + first_failure.message() + ")");
}

int run_loadable(const Options& options) {
    if (!options.input_dir.empty() && !std::filesystem::exists(options.input_dir))
        return fail("-i " + options.input_dir + ": the input path does not exist");
    std::string expected;
    if (!options.expect_md5.empty()) {
        Result<std::string> digest = expected_digest(options.expect_md5);
        if (!digest) return fail(digest.message());
        expected = *digest;
    }
    const bool human = !options.json;
    std::vector<std::string> labels;
    if (!options.labels.empty() ||
        std::filesystem::is_regular_file(labels_side_file(options.loadable))) {
        Result<std::vector<std::string>> names = read_labels(
            options.labels.empty() ? labels_side_file(options.loadable) : options.labels);
        if (!names) return fail(names.message());
        labels = std::move(names).value();
    }
    const uint32_t topk = options.topk ? options.topk : labels.empty() ? 0 : 3;
    if (human) std::cout << "creating new runtime context...\n";
    Result<Opened> opened = open_for(options, options.loadable, options.config);
    if (!opened) return fail(opened.message());
    Runtime& rt = *opened->runtime;
    const Network& net = *opened->network;
    Context& ctx = *opened->context;
    if (human) {
        std::cout << "device: " << rt.device().device << " (" << rt.device().backend
                  << " backend)\n";
        std::cout << "loadable: " << options.loadable << ": " << net.tasks().size() << " task"
                  << (net.tasks().size() == 1 ? "" : "s") << ", " << net.inputs().size() << " input"
                  << (net.inputs().size() == 1 ? "" : "s") << ", " << net.outputs().size()
                  << " output" << (net.outputs().size() == 1 ? "" : "s") << "\n";
    }
    if (net.outputs().empty())
        return fail(options.loadable + ": the network has no output tensor to write");

    if (!options.image.empty()) {
        if (net.inputs().empty())
            return fail("--image: the network has no input tensor to put the image in");
        if (Status s = ctx.load_image(0, options.image, options.image_options); !s)
            return fail(s.message());
    } else if (!net.inputs().empty() && human) {
        std::cout << "input 0 '" << net.inputs()[0].name << "' is all zeros (no --image)\n";
    }

    if (human) std::cout << "submitting tasks...\n";
    std::vector<std::chrono::nanoseconds> samples;
    RunTiming timing;
    for (uint32_t i = 0; i < options.iterations; ++i) {
        const Clock::time_point start = Clock::now();
        Result<Job> job = ctx.submit();
        if (!job) return fail(job.message());
        Status s = job.value().wait();
        const Clock::time_point end = Clock::now();
        if (!s) return fail(s.message());
        samples.push_back(end - start);
        timing = job.value().timing();
    }
    const LatencyStats stats = latency_stats(samples);
    if (!options.trace.empty()) {
        const std::string text = chrome_trace(timing, rt.device().device).dump(1);
        if (Status s = write_file(options.trace, text.data(), text.size()); !s)
            return fail(s.message());
    }

    const TensorInfo& out = net.outputs()[0];
    const std::span<const std::byte> out_bytes = ctx.output(0);
    Result<std::vector<std::byte>> file = dimg::encode(out, out_bytes, options.numbering);
    if (!file) return fail(file.message());
    const std::string digest = md5_hex(*file);
    if (options.rawdump) {
        Result<std::string> text = dimg::encode_text(out, out_bytes);
        if (!text) return fail(text.message());
        if (Status s = write_file(options.output, text->data(), text->size()); !s)
            return fail(s.message());
    } else if (Status s = write_file(options.output, file->data(), file->size()); !s) {
        return fail(s.message());
    }

    std::vector<std::pair<size_t, float>> best;
    if (topk) {
        Result<std::vector<float>> values = dimg::elements(out, out_bytes);
        if (!values) return fail(values.message());
        // int8 values whose scale the network's own CPU operations give (a softmax) are
        // shown as the real values they stand for.
        const TensorQuantization& q = out.quantization;
        for (size_t i = 0; i < values->size(); ++i)
            best.emplace_back(i, q.known ? q.scale * ((*values)[i] - static_cast<float>(q.offset))
                                         : (*values)[i]);
        const size_t k = std::min<size_t>(topk, best.size());
        std::partial_sort(best.begin(), best.begin() + static_cast<long>(k), best.end(),
                          [](const auto& a, const auto& b) { return a.second > b.second; });
        best.resize(k);
    }
    const bool md5_checked = !expected.empty();
    const bool md5_match = digest == expected;

    if (options.json) {
        json j;
        j["loadable"] = options.loadable;
        j["backend"] = rt.device().backend;
        j["device"] = rt.device().device;
        j["config"] = rt.device().config;
        j["inputs"] = json::array();
        for (const TensorInfo& t : net.inputs()) j["inputs"].push_back(tensor_json(t));
        j["outputs"] = json::array();
        for (const TensorInfo& t : net.outputs()) j["outputs"].push_back(tensor_json(t));
        j["output_file"] = options.output;
        j["output_md5"] = digest;
        if (md5_checked) j["md5_match"] = md5_match;
        j["latency_us"] = {{"runs", stats.runs},       {"mean", micros(stats.mean)},
                           {"min", micros(stats.min)}, {"p50", micros(stats.p50)},
                           {"p90", micros(stats.p90)}, {"p99", micros(stats.p99)},
                           {"max", micros(stats.max)}};
        if (options.profile) {
            j["tasks"] = json::array();
            for (const OperationTime& t : timing.tasks)
                j["tasks"].push_back(
                    {{"name", t.name}, {"task", t.task}, {"us", micros(t.duration)}});
            j["operations"] = json::array();
            for (const OperationTime& t : timing.operations)
                j["operations"].push_back(
                    {{"name", t.name}, {"task", t.task}, {"us", micros(t.duration)}});
        }
        if (topk) {
            j["topk"] = json::array();
            for (const auto& [index, value] : best) {
                json entry{{"index", index}, {"value", value}};
                if (index < labels.size()) entry["label"] = labels[index];
                j["topk"].push_back(entry);
            }
        }
        std::cout << j.dump(2) << "\n";
    } else {
        if (stats.runs == 1) {
            std::cout << "execution time = " << format_duration(stats.mean) << "\n";
        } else {
            std::cout << "latency over " << stats.runs << " runs: mean "
                      << format_duration(stats.mean) << ", min " << format_duration(stats.min)
                      << ", p50 " << format_duration(stats.p50) << ", p90 "
                      << format_duration(stats.p90) << ", p99 " << format_duration(stats.p99)
                      << ", max " << format_duration(stats.max) << "\n";
        }
        if (options.profile) {
            for (const OperationTime& t : timing.tasks)
                std::cout << "  " << t.name << ": " << format_duration(t.duration) << "\n";
            for (const OperationTime& t : timing.operations)
                std::cout << "    task " << t.task << " " << t.name << ": "
                          << format_duration(t.duration) << "\n";
            if (timing.operations.empty())
                std::cout << "    (no per-operation times from the " << rt.device().backend
                          << " backend)\n";
        }
        std::cout << "output 0 '" << out.name << "': " << describe_tensor(out) << " -> "
                  << options.output << (options.rawdump ? " (text)" : "") << ", md5 " << digest
                  << "\n";
        if (topk) {
            bool unit = true;  // values in [0, 1] read as probabilities (a softmax output)
            for (const auto& [index, value] : best) unit = unit && value >= 0.0f && value <= 1.0f;
            for (size_t r = 0; r < best.size(); ++r) {
                std::cout << "  #" << r + 1 << ": class " << best[r].first;
                if (best[r].first < labels.size())
                    std::cout << " (" << labels[best[r].first] << ")";
                std::cout << ", " << (unit ? "probability " : "score ") << best[r].second << "\n";
            }
        }
    }
    if (md5_checked && !md5_match)
        return fail(options.output + ": md5 " + digest + " differs from the expected " + expected);
    if (human) {
        if (md5_checked) std::cout << "md5 matches the expected digest\n";
        std::cout << "Test pass\n";
    }
    return 0;
}

int print_info(const Options& options) {
    Result<BackendChoice> backend = backend_choice(options.backend);
    if (!backend) return fail(backend.message());
    RuntimeOptions ro;
    ro.backend = *backend;
    ro.drm_device = options.device;
    ro.emu_config = options.config == "auto" ? "nv_full" : options.config;
    Result<std::unique_ptr<Runtime>> rt = Runtime::open(ro);
    if (!rt) return fail(rt.message());
    const DeviceInfo& d = (*rt)->device();
    static const std::pair<uint32_t, const char*> kFeatures[] = {
        {NVDLA_FEATURE_INT8, "int8"},
        {NVDLA_FEATURE_INT16, "int16"},
        {NVDLA_FEATURE_FP16, "fp16"},
        {NVDLA_FEATURE_WINOGRAD, "winograd"},
        {NVDLA_FEATURE_BATCH, "batch"},
        {NVDLA_FEATURE_WEIGHT_COMPRESSION, "weight-compression"},
        {NVDLA_FEATURE_SECONDARY_MEMIF, "sram"},
        {NVDLA_FEATURE_SDP_LUT, "sdp-lut"},
        {NVDLA_FEATURE_SDP_BS, "sdp-bs"},
        {NVDLA_FEATURE_SDP_BN, "sdp-bn"},
        {NVDLA_FEATURE_SDP_EW, "sdp-ew"},
        {NVDLA_FEATURE_BDMA, "bdma"},
        {NVDLA_FEATURE_RUBIK, "rubik"},
        {NVDLA_FEATURE_PDP, "pdp"},
        {NVDLA_FEATURE_CDP, "cdp"},
    };
    std::vector<std::string> features;
    if (d.hw)
        for (const auto& [bit, name] : kFeatures)
            if (nvdla_hw_has(d.hw, bit)) features.push_back(name);
    if (options.json) {
        json j{{"version", std::string(runtime_version())},
               {"backend", d.backend},
               {"device", d.device},
               {"config", d.config},
               {"features", features},
               {"memory_bytes", d.memory_bytes}};
        if (d.hw)
            j["hardware"] = {{"atom_bytes", d.hw->atom_bytes},
                             {"mac_atomic_c", d.hw->mac_atomic_c},
                             {"mac_atomic_k", d.hw->mac_atomic_k},
                             {"cbuf_bytes", nvdla_hw_cbuf_bytes(d.hw)},
                             {"address_bits", d.hw->address_bits}};
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::cout << "nvdla_runtime " << runtime_version() << "\n";
    std::cout << "backend:       " << d.backend << "\n";
    std::cout << "device:        " << d.device << "\n";
    std::cout << "configuration: " << d.config << "\n";
    if (d.hw) {
        std::cout << "features:      ";
        for (size_t i = 0; i < features.size(); ++i) std::cout << (i ? ", " : "") << features[i];
        std::cout << "\n";
        std::cout << "atom:          " << d.hw->atom_bytes << " bytes; MAC " << d.hw->mac_atomic_c
                  << "x" << d.hw->mac_atomic_k << "; CBUF " << nvdla_hw_cbuf_bytes(d.hw) / 1024
                  << " KiB; " << d.hw->address_bits << "-bit addresses\n";
    }
    if (d.memory_bytes)
        std::cout << "memory:        " << d.memory_bytes / (1024 * 1024) << " MiB\n";
    return 0;
}

}  // namespace nvdla::tool
