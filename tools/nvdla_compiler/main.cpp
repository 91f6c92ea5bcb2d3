// nvdla_compiler: compiles an ONNX or Caffe model into an NVDLA loadable (docs/compiler.md).
//
//   nvdla_compiler model.onnx --config nv_small --precision int8 --calibration images/ -o m.nvdla
//   nvdla_compiler --prototxt deploy.prototxt --caffemodel w.caffemodel --cprecision fp16
//
// The model is imported (nvdla/onnx.hpp, nvdla/caffe.hpp), calibrated for int8 from sample
// files or a calibration table, built (nvdla/builder.hpp), optionally checked on the emulated
// NVDLA against the float reference, and written with its report. Every file is written under
// a temporary name and renamed, so a failure never leaves a half-written output.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "nvdla/caffe.hpp"
#include "nvdla/onnx.hpp"
#include "report.hpp"
#include "samples.hpp"

namespace {

namespace fs = std::filesystem;
using namespace nvdla;
using namespace nvdla::compiler;

int fail(const std::string& sentence) {
    std::cerr << "nvdla_compiler: " << sentence << "\n";
    return 1;
}

// The imported model, whatever its format.
struct Imported {
    builder::Network network;
    std::string kind;
    std::vector<builder::Tensor> inputs;
    // Names for calibration tables: every tensor by the layer that writes it, plus the Caffe
    // layer names and input blob names.
    std::map<std::string, builder::Tensor> by_name;
};

std::map<std::string, builder::Tensor> names_of(const builder::Network& net) {
    std::map<std::string, builder::Tensor> names;
    const size_t count = net.inputs().size() + net.layer_count();
    for (uint32_t id = 0; id < count; ++id) {
        const builder::Tensor t{id};
        const std::string name = net.tensor_name(t);
        if (!name.empty()) names[name] = t;
    }
    return names;
}

// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
Status write_atomically(const std::string& path, std::string_view bytes) {
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string tmp = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
    const int fd = mkstemp(tmp.data());
    if (fd < 0) return error("cannot write ", path, ": ", std::strerror(errno));
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            ::unlink(tmp.c_str());
            return error("cannot write ", path, ": ", std::strerror(err));
        }
        done += static_cast<size_t>(n);
    }
    fchmod(fd, 0644);
    if (::close(fd) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        return error("cannot write ", path, ": ", std::strerror(err));
    }
    return Status();
}

// "label [#####.....] 40/100" on stderr when it is a terminal.
class Progress {
  public:
    Progress(std::string label, size_t total)
        : label_(std::move(label)), total_(total), tty_(isatty(STDERR_FILENO) != 0) {}
    void update(size_t done) const {
        if (!tty_ || total_ == 0) return;
        constexpr size_t kWidth = 40;
        const size_t filled = done * kWidth / total_;
        std::fprintf(stderr, "\r  %s [%s%s] %zu/%zu", label_.c_str(),
                     std::string(filled, '#').c_str(), std::string(kWidth - filled, '.').c_str(),
                     done, total_);
        if (done == total_) std::fprintf(stderr, "\r%*s\r", 80, "");
        std::fflush(stderr);
    }

  private:
    std::string label_;
    size_t total_;
    bool tty_;
};

Result<PixelFormat> parse_pixel_format(std::string name) {
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (name.rfind("NVDLA_IMG_", 0) == 0) name = name.substr(10);
    if (name.rfind("T_", 0) == 0) name = name.substr(2);
    for (uint32_t i = 0; i < kPixelFormatCount; ++i) {
        std::string candidate(to_string(static_cast<PixelFormat>(i)));
        if (candidate.rfind("T_", 0) == 0) candidate = candidate.substr(2);
        if (candidate == name) return static_cast<PixelFormat>(i);
    }
    return error("--pixel-format ", name,
                 ": not a pixel format (R8, A8B8G8R8, R8G8B8A8, A16B16G16R16_F, ...)");
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        ab += double(a[i]) * b[i];
        aa += double(a[i]) * a[i];
        bb += double(b[i]) * b[i];
    }
    if (aa == 0 && bb == 0) return 1.0;
    return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Compiles an ONNX or Caffe model into an NVDLA loadable.", "nvdla_compiler"};
    app.set_help_flag("-h,--help", "print this help and exit");
    app.get_formatter()->column_width(34);
    std::string model, prototxt, caffemodel, output, config = "nv_full", precision_name = "fp16";
    std::string quantization = "per-channel", cpu_fallback = "on", input_format = "feature";
    std::string pixel_format_name, calibration_dir, calibtable, write_calibtable, labels;
    std::string graph, channel_order = "bgr";
    std::vector<float> mean;
    float scale = 1.0f, normalize = 0.0f;
    int64_t batch = 1;
    uint32_t calibration_samples = 0, verify = 0;
    bool no_winograd = false, no_compression = false, json = false, resize = false;

    app.add_option("model", model, "the ONNX model (model.onnx)");
    app.add_option("--prototxt", prototxt, "a Caffe network (deploy.prototxt)");
    app.add_option("--caffemodel", caffemodel, "the Caffe network's weights (.caffemodel)");
    app.add_option("-o,--output", output,
                   "the loadable to write (default: the model's name .nvdla; a directory: "
                   "DIR/<name>.nvdla)");
    app.add_option("--config,--configtarget", config,
                   "hardware configuration: nv_full, nv_large, nv_small, nv_small_256, ...")
        ->capture_default_str();
    app.add_option("--precision,--cprecision", precision_name, "fp16 or int8")
        ->check(CLI::IsMember({"fp16", "int8"}))
        ->capture_default_str();
    app.add_option("--quantization", quantization, "int8 weight scales: per-channel, per-tensor")
        ->check(CLI::IsMember({"per-channel", "per-tensor"}))
        ->capture_default_str();
    app.add_option("--batch", batch, "batch size where an ONNX model leaves it symbolic")
        ->check(CLI::Range(int64_t(1), int64_t(4096)));
    app.add_flag("--no-winograd", no_winograd, "no Winograd convolutions");
    app.add_flag("--no-compression", no_compression, "no weight compression");
    app.add_option("--cpu-fallback", cpu_fallback,
                   "on: layers the hardware cannot run become CPU tasks; off: an error")
        ->check(CLI::IsMember({"on", "off"}))
        ->capture_default_str();
    app.add_option("--calibration", calibration_dir,
                   "int8: a directory of sample images (.pgm .ppm .png .jpg) or tensors (.pb "
                   ".npy)");
    app.add_option("--calibration-samples", calibration_samples,
                   "use the first N files of --calibration (default: all)");
    app.add_option("--mean", mean,
                   "images: per-channel mean subtracted from pixels (one, or "
                   "one per channel)")
        ->delimiter(',');
    app.add_option("--scale", scale, "images: factor applied after the mean");
    app.add_option("--normalize", normalize, "images: divide by this (--scale 1/N)");
    app.add_option("--channel-order", channel_order, "images: rgb or bgr (Caffe's)")
        ->check(CLI::IsMember({"rgb", "bgr"}))
        ->capture_default_str();
    app.add_flag("--resize", resize,
                 "images: scale and centre-crop to the input size instead of refusing others");
    app.add_option("--calibtable", calibtable,
                   "int8: a JSON calibration table (the original stack's format)");
    app.add_option("--write-calibtable", write_calibtable,
                   "write the ranges used as a JSON calibration table");
    app.add_option("--input-format", input_format,
                   "feature (a feature cube) or image (pixels, the first convolution in image "
                   "mode)")
        ->check(CLI::IsMember({"feature", "image"}))
        ->capture_default_str();
    app.add_option("--pixel-format", pixel_format_name,
                   "image input: R8, A8B8G8R8, R8G8B8A8, A16B16G16R16_F, ... (default R8 for one "
                   "channel, else A8B8G8R8)");
    app.add_option("--labels", labels, "class names, one a line: written beside the loadable");
    app.add_flag("--json", json, "print the report as JSON");
    app.add_option("--graph", graph, "write the mapped network for Graphviz (FILE.dot)");
    app.add_option("--verify", verify,
                   "run N calibration samples on the emulated NVDLA against the float "
                   "reference");
    CLI11_PARSE(app, argc, argv);

    // ---- what to compile ----
    if (model.empty() == prototxt.empty())
        return fail(model.empty() ? "no model: give model.onnx or --prototxt (with --caffemodel)"
                                  : "give either an ONNX model or --prototxt, not both");
    if (!caffemodel.empty() && prototxt.empty()) return fail("--caffemodel needs --prototxt");
    Result<const HwConfig*> hw = find_hw_config(config);
    if (!hw) return fail("--config " + config + ": " + hw.message());
    const Precision precision = precision_name == "int8" ? Precision::Int8 : Precision::Fp16;
    if (!supports(**hw, precision))
        return fail("--config " + config + " has no " + precision_name +
                    (precision == Precision::Fp16 ? " (use --precision int8)" : ""));
    if (normalize < 0 || (normalize > 0 && scale != 1.0f))
        return fail("give --scale or --normalize (a positive divisor), not both");
    if (normalize > 0) scale = 1.0f / normalize;
    ImagePreprocess pre;
    if (mean.size() == 1) mean.assign(4, mean[0]);
    if (mean.size() > 4) return fail("--mean takes one value or one per channel (up to 4)");
    std::copy(mean.begin(), mean.end(), pre.mean.begin());
    pre.scale = scale;
    pre.rgb = channel_order == "rgb";
    pre.resize = resize;

    Imported imported;
    std::string model_text;
    if (!model.empty()) {
        model_text = model;
        onnx::ImportOptions import_options;
        import_options.batch = batch;
        Result<onnx::Model> m = onnx::import_file(model, import_options);
        if (!m)
            return fail(m.message().find(model) == std::string::npos ? model + ": " + m.message()
                                                                     : m.message());
        imported.kind = "ONNX opset " + std::to_string(m->opset);
        for (const onnx::Value& v : m->inputs) imported.inputs.push_back(v.tensor);
        imported.network = std::move(m.value().network);
        imported.by_name = names_of(imported.network);
    } else {
        model_text = prototxt + (caffemodel.empty() ? "" : " + " + caffemodel);
        Result<caffe::Model> m = caffe::import_files(prototxt, caffemodel);
        if (!m) return fail(m.message());
        imported.kind = "Caffe";
        for (const caffe::Value& v : m->inputs) imported.inputs.push_back(v.tensor);
        imported.network = std::move(m.value().network);
        imported.by_name = names_of(imported.network);
        for (const auto& [name, t] : m->blobs) imported.by_name[name] = t;
    }
    const builder::Network& net = imported.network;
    if (Status s = net.status(); !s) return fail(s.message());

    if (output.empty()) {
        output = fs::path(model.empty() ? prototxt : model).stem().string() + ".nvdla";
    } else {
        std::error_code ec;
        if (fs::is_directory(output, ec))
            output = (fs::path(output) /
                      (fs::path(model.empty() ? prototxt : model).stem().string() + ".nvdla"))
                         .string();
    }

    // ---- inputs ----
    builder::BuildOptions options;
    options.config = config;
    options.precision = precision;
    options.quantization = quantization == "per-tensor" ? builder::Quantization::PerTensor
                                                        : builder::Quantization::PerChannel;
    options.winograd = !no_winograd;
    options.compress_weights = !no_compression;
    options.cpu_fallback = cpu_fallback == "on";
    if (input_format == "image") {
        if (imported.inputs.empty()) return fail("the network has no input");
        const Dims4 d = net.dims(imported.inputs[0]);
        builder::InputFormat f;
        f.image = true;
        if (pixel_format_name.empty()) pixel_format_name = d.c == 1 ? "R8" : "A8B8G8R8";
        Result<PixelFormat> pf = parse_pixel_format(pixel_format_name);
        if (!pf) return fail(pf.message());
        f.pixel_format = *pf;
        f.mean = pre.mean;
        f.scale = pre.scale;
        options.inputs.push_back(f);
    } else if (!pixel_format_name.empty()) {
        return fail("--pixel-format needs --input-format image");
    }

    // ---- calibration ----
    std::vector<Sample> samples;
    builder::Calibration calibration;
    std::string calibration_text;
    bool images = false;
    if (!calibration_dir.empty()) {
        if (imported.inputs.size() != 1)
            return fail("--calibration: the network has " + std::to_string(imported.inputs.size()) +
                        " inputs; a directory of samples calibrates networks with one input");
        Result<std::vector<std::string>> files = list_samples(calibration_dir, calibration_samples);
        if (!files) return fail(files.message());
        const builder::Tensor input = imported.inputs[0];
        Progress progress("calibrating", files->size());
        for (size_t i = 0; i < files->size(); ++i) {
            Result<Sample> s = load_sample((*files)[i], net.dims(input), pre);
            if (!s) return fail(s.message());
            images = images || s->pixels.has_value();
            if (Status st = calibration.add_sample(net, {s->values}); !st)
                return fail("calibration sample " + (*files)[i] + ": " + st.message());
            samples.push_back(std::move(s).value());
            progress.update(i + 1);
        }
        // An image input can take every pixel value, whatever the samples held.
        if (images) calibration.set_range(input, image_input_range(pre, net.dims(input).c));
        calibration_text = "calibrated on " + std::to_string(samples.size()) + " sample" +
                           (samples.size() == 1 ? "" : "s") + " of " + calibration_dir;
    }
    if (!calibtable.empty()) {
        Result<std::map<std::string, float>> table = read_calibration_table(calibtable);
        if (!table) return fail(table.message());
        size_t used = 0;
        for (const auto& [name, range] : *table) {
            auto it = imported.by_name.find(name);
            if (it == imported.by_name.end()) continue;
            calibration.set_range(it->second, range);
            ++used;
        }
        if (used == 0)
            return fail("calibration table " + calibtable +
                        ": no entry names a tensor of this network");
        calibration_text += std::string(calibration_text.empty() ? "" : ", then ") + "table " +
                            calibtable + " (" + std::to_string(used) + " tensors)";
    }
    const bool calibrated = !calibration_dir.empty() || !calibtable.empty();
    if (precision == Precision::Int8 && !calibrated)
        return fail("int8 needs activation ranges: give --calibration DIR or --calibtable FILE");
    if (precision == Precision::Int8 && calibration_dir.empty()) {
        for (const auto& [name, t] : imported.by_name)
            if (!calibration.range(t))
                return fail("calibration table " + calibtable + " has no entry for tensor '" +
                            name + "'");
    }
    if (calibrated) options.calibration = &calibration;
    if (verify > 0 && samples.empty())
        return fail("--verify needs samples: give --calibration DIR");

    // ---- build ----
    Result<builder::CompiledNetwork> built = builder::build(net, options);
    if (!built) return fail(built.message());

    // ---- check ----
    std::vector<VerifyResult> verified;
    if (verify > 0) {
        RuntimeOptions emulator;
        emulator.backend = BackendChoice::Emu;
        emulator.emu_config = config;
        Result<std::unique_ptr<Runtime>> rt = Runtime::open(emulator);
        if (!rt) return fail("--verify: " + rt.message());
        const size_t n = std::min<size_t>(verify, samples.size());
        verified.resize(built->outputs.size());
        for (size_t o = 0; o < verified.size(); ++o) {
            verified[o].name = built->outputs[o].name;
            verified[o].cosine = 1.0;
        }
        Progress progress("verifying", n);
        for (size_t i = 0; i < n; ++i) {
            const Sample& s = samples[i];
            const bool pixels = !options.inputs.empty() && options.inputs[0].image;
            if (pixels && !s.pixels)
                return fail("--verify: sample " + s.path +
                            " is a tensor; an image input runs on "
                            "images");
            Result<std::vector<builder::HostTensor>> device =
                builder::run(*built, **rt, {pixels ? *s.pixels : s.values});
            if (!device) return fail("--verify: sample " + s.path + ": " + device.message());
            Result<std::vector<builder::HostTensor>> ref = builder::run_reference(net, {s.values});
            if (!ref) return fail("--verify: sample " + s.path + ": " + ref.message());
            for (size_t o = 0; o < verified.size(); ++o) {
                const builder::HostTensor a = builder::to_layout((*device)[o], HostLayout::NCHW);
                const builder::HostTensor e = builder::to_layout((*ref)[o], HostLayout::NCHW);
                VerifyResult& v = verified[o];
                v.cosine = std::min(v.cosine, cosine(a.data, e.data));
                for (size_t k = 0; k < a.data.size(); ++k) {
                    v.max_error = std::max(v.max_error, std::fabs(double(a.data[k]) - e.data[k]));
                    v.max_ref = std::max(v.max_ref, std::fabs(double(e.data[k])));
                }
                const auto top_a = std::max_element(a.data.begin(), a.data.end()) - a.data.begin();
                const auto top_e = std::max_element(e.data.begin(), e.data.end()) - e.data.begin();
                v.top1_same += top_a == top_e;
                ++v.samples;
            }
            progress.update(i + 1);
        }
    }

    // ---- outputs: each complete or absent ----
    ReportContext ctx;
    ctx.model = model_text;
    ctx.model_kind = imported.kind;
    ctx.network = net.name();
    ctx.output = output;
    ctx.calibration = calibration_text;
    ctx.quantization = quantization;
    ctx.layers = net.layer_count();
    if (!write_calibtable.empty()) {
        std::map<std::string, float> ranges;
        for (const auto& [name, t] : imported.by_name)
            if (std::optional<float> r = calibration.range(t)) ranges[name] = *r;
        if (ranges.empty())
            return fail(
                "--write-calibtable: there are no ranges to write (give --calibration "
                "DIR or --calibtable FILE)");
        if (Status s = write_atomically(write_calibtable, calibration_table_json(ranges)); !s)
            return fail(s.message());
    }
    if (!graph.empty())
        if (Status s = write_atomically(graph, graph_dot(*built, ctx)); !s)
            return fail(s.message());
    if (!labels.empty()) {
        std::ifstream in(labels);
        if (!in) return fail("--labels " + labels + ": cannot be opened");
        std::ostringstream text;
        text << in.rdbuf();
        if (text.str().find_first_not_of(" \t\r\n") == std::string::npos)
            return fail("--labels " + labels + ": the file has no class names");
        const std::string side =
            (fs::path(output).parent_path() / (fs::path(output).stem().string() + ".labels"))
                .string();
        if (Status s = write_atomically(side, text.str()); !s) return fail(s.message());
    }
    const std::string_view bytes(reinterpret_cast<const char*>(built->loadable.data()),
                                 built->loadable.size());
    if (Status s = write_atomically(output, bytes); !s) return fail(s.message());

    std::cout << (json ? json_report(*built, ctx, verified) : text_report(*built, ctx, verified));
    return 0;
}
