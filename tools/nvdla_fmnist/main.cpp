// nvdla_fmnist: the main job's data and run steps on the user's flow (`make run`,
// docs/main-job.md). The network is trained in PyTorch and exported to ONNX
// (tools/fmnist_resnet), compiled by nvdla_compiler; this program
//   images    writes Fashion-MNIST images as PGM files (calibration and test inputs), and
//   classify  runs loadables on every test image as nvdla_runtime --image does (the image file
//             decoded into the input with --normalize 255), next to the ONNX model's float
//             reference, and prints accuracy, images per second and example predictions.
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "lenet.hpp"
#include "nvdla/onnx.hpp"

namespace {

namespace fs = std::filesystem;
using namespace nvdla;
using lenet::kClasses;
using lenet::kClassNames;
using lenet::kImagePixels;
using lenet::kImageSide;
using Clock = std::chrono::steady_clock;

int fail(const std::string& sentence) {
    std::cerr << "nvdla_fmnist: " << sentence << "\n";
    return 1;
}

std::string image_path(const std::string& dir, const std::string& set, uint32_t i) {
    char name[64];
    std::snprintf(name, sizeof name, "/%s_%05u.pgm", set.c_str(), i);
    return dir + name;
}

int write_images(const std::string& dataset, const std::string& set, uint32_t count,
                 const std::string& out) {
    Result<lenet::Dataset> data = lenet::load_fashion_mnist(dataset, set == "train", count);
    if (!data) return fail(data.message() + " (install dataset-fashion-mnist or pass --dataset)");
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) return fail(out + ": " + ec.message());
    for (uint32_t i = 0; i < data->count; ++i) {
        const std::string path = image_path(out, set, i);
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f << "P5\n" << kImageSide << " " << kImageSide << "\n255\n";
        f.write(reinterpret_cast<const char*>(data->image(i)), kImagePixels);
        if (!f) return fail(path + ": cannot write the file");
    }
    std::printf("wrote %u %s images to %s/\n", data->count, set.c_str(), out.c_str());
    return 0;
}

// Probabilities of one image.
using Scores = std::array<float, kClasses>;

// One loadable on one runtime: images in, class scores out.
class Worker {
  public:
    static Result<std::unique_ptr<Worker>> open(const std::vector<std::byte>& loadable,
                                                const RuntimeOptions& options) {
        auto w = std::make_unique<Worker>();
        Result<std::unique_ptr<Runtime>> rt = Runtime::open(options);
        if (!rt) return rt.status();
        w->runtime_ = std::move(rt).value();
        Result<std::shared_ptr<Network>> net = w->runtime_->load(loadable);
        if (!net) return net.status();
        w->network_ = std::move(net).value();
        if (w->network_->inputs().size() != 1 || w->network_->outputs().size() != 1)
            return Status::failure("the loadable must have one input and one output");
        Result<std::unique_ptr<Context>> ctx = w->network_->create_context();
        if (!ctx) return ctx.status();
        w->context_ = std::move(ctx).value();
        // The output as the builder's unpacking needs it: the loadable's description of it.
        const TensorInfo info = w->network_->outputs()[0];
        builder::TensorDesc& d = w->output_;
        d.name = info.name;
        d.dims = info.dims;
        d.precision = info.data_type == TensorDataType::Int8 ? Precision::Int8 : Precision::Fp16;
        d.pixel_format = info.pixel_format;
        d.hw = w->runtime_->device().hw;
        d.atom_bytes = info.pixel_format == kPixelFormatFeatureX8 ? 8 : 32;
        d.line_stride = info.line_stride();
        d.surface_stride = info.surface_stride();
        d.size_bytes = info.size_bytes;
        if (d.precision == Precision::Int8 && !info.quantization.known)
            return Status::failure(
                "the int8 output's scale is unknown (the network should end "
                "with its softmax)");
        d.scale = info.quantization.scale;
        if (d.dims.c * d.dims.h * d.dims.w != kClasses)
            return error("the output has ", d.dims.c * d.dims.h * d.dims.w, " values, not ",
                         kClasses);
        return w;
    }

    Result<Scores> classify(const std::string& image) {
        if (Status s = context_->load_image(0, image, {.mean = {}, .normalize = 255.0f}); !s)
            return s;
        if (Status s = context_->run(); !s) return s;
        Result<builder::HostTensor> out = builder::unpack_output(output_, context_->output(0));
        if (!out) return out.status();
        Scores p{};
        std::copy_n(out->data.begin(), kClasses, p.begin());
        return p;
    }

  private:
    std::unique_ptr<Runtime> runtime_;
    std::shared_ptr<Network> network_;
    std::unique_ptr<Context> context_;
    builder::TensorDesc output_;
};

struct Pass {
    std::string name;
    std::vector<uint8_t> predicted;
    std::vector<float> confidence;
    double seconds = 0;
    double cpu_seconds = 0;  // the process's, every thread's

    uint32_t correct(const lenet::Dataset& set) const {
        uint32_t n = 0;
        for (uint32_t i = 0; i < predicted.size(); ++i) n += predicted[i] == set.labels[i];
        return n;
    }
};

double process_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// classify(worker, i) for every image on `workers` threads; a progress bar on a terminal.
template <class Classify>
Status run_pass(Pass& pass, uint32_t count, uint32_t workers, Classify classify) {
    pass.predicted.assign(count, 0);
    pass.confidence.assign(count, 0);
    std::atomic<uint32_t> next{0}, done{0};
    std::mutex mutex;
    Status status;
    const bool tty = isatty(STDOUT_FILENO) != 0;
    const Clock::time_point start = Clock::now();
    Clock::time_point finished = start;  // when the last worker ran out of images
    const double cpu_start = process_cpu_seconds();
    auto work = [&](uint32_t worker) {
        for (uint32_t i; (i = next.fetch_add(1)) < count;) {
            Result<Scores> p = classify(worker, i);
            if (!p) {
                std::lock_guard lock(mutex);
                if (status.ok()) status = Status(p.status()).context("image " + std::to_string(i));
                next = count;
                return;
            }
            const auto best = std::max_element(p->begin(), p->end()) - p->begin();
            pass.predicted[i] = static_cast<uint8_t>(best);
            pass.confidence[i] = (*p)[size_t(best)];
            done.fetch_add(1);
        }
        std::lock_guard lock(mutex);
        finished = std::max(finished, Clock::now());
    };
    std::vector<std::thread> threads;
    for (uint32_t w = 0; w < workers; ++w) threads.emplace_back(work, w);
    for (;;) {
        const uint32_t d = done.load();
        {
            std::lock_guard lock(mutex);
            if (!status.ok()) break;
        }
        if (tty) {
            const double secs = std::chrono::duration<double>(Clock::now() - start).count();
            const int filled = static_cast<int>(int64_t(d) * 40 / count);
            std::printf("\r  %-6s [%s%s] %5u/%u %6.0f img/s", pass.name.c_str(),
                        std::string(size_t(filled), '#').c_str(),
                        std::string(size_t(40 - filled), '.').c_str(), d, count,
                        secs > 0 ? d / secs : 0.0);
            std::fflush(stdout);
        }
        if (d >= count) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    for (std::thread& t : threads) t.join();
    if (tty) std::printf("\r%*s\r", 90, "");
    // (Not when the progress loop noticed: it looks every 200 ms.)
    pass.seconds = std::chrono::duration<double>(finished - start).count();
    pass.cpu_seconds = process_cpu_seconds() - cpu_start;
    return status;
}

std::string percent(uint32_t n, uint32_t total) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f%%", total ? 100.0 * n / total : 0.0);
    return text;
}

int classify(const std::string& dataset, const std::string& model, const std::string& images_dir,
             const std::vector<std::string>& loadables, uint32_t count, uint32_t jobs,
             uint32_t examples, const std::string& config, const std::string& backend) {
    const Clock::time_point job_start = Clock::now();
    Result<lenet::Dataset> test = lenet::load_fashion_mnist(dataset, false, count);
    if (!test) return fail(test.message() + " (install dataset-fashion-mnist or pass --dataset)");
    count = test->count;
    for (uint32_t i : {0u, count - 1})
        if (!fs::exists(image_path(images_dir, "test", i)))
            return fail(image_path(images_dir, "test", i) +
                        " is missing (nvdla_fmnist images --set test writes it)");
    Result<onnx::Model> m = onnx::import_file(model);
    if (!m) return fail(model + ": " + m.message());

    RuntimeOptions ro;
    ro.backend = backend == "emu"   ? BackendChoice::Emu
                 : backend == "drm" ? BackendChoice::Drm
                                    : BackendChoice::Auto;
    ro.emu_config = config;
    // One image per worker in flight: the workers share the cores rather than each operation
    // taking all of them (tiny layers gain nothing from a split, and pay for it).
    ro.emu_threads = std::max(1u, std::thread::hardware_concurrency() / std::max(jobs, 1u));
    std::vector<Pass> passes;

    // The float reference: the ONNX model on pixel / 255.
    Pass reference;
    reference.name = "float";
    {
        Status s = run_pass(reference, count, jobs, [&](uint32_t, uint32_t i) -> Result<Scores> {
            builder::HostTensor x = builder::make_host_tensor({1, 1, kImageSide, kImageSide});
            for (uint32_t k = 0; k < kImagePixels; ++k) x.data[k] = test->image(i)[k] / 255.0f;
            Result<std::vector<builder::HostTensor>> out = builder::run_reference(m->network, {x});
            if (!out) return out.status();
            Scores p{};
            std::copy_n((*out)[0].data.begin(), kClasses, p.begin());
            return p;
        });
        if (!s) return fail("float reference: " + s.message());
    }

    std::string device;
    for (const std::string& spec : loadables) {
        const size_t eq = spec.find('=');
        if (eq == std::string::npos) return fail("--loadable " + spec + ": NAME=FILE expected");
        Pass pass;
        pass.name = spec.substr(0, eq);
        const std::string path = spec.substr(eq + 1);
        std::ifstream in(path, std::ios::binary);
        if (!in) return fail(path + ": cannot be opened (make run compiles it)");
        std::vector<char> raw((std::istreambuf_iterator<char>(in)), {});
        std::vector<std::byte> bytes(raw.size());
        std::transform(raw.begin(), raw.end(), bytes.begin(),
                       [](char c) { return static_cast<std::byte>(c); });
        std::vector<std::unique_ptr<Worker>> workers;
        for (uint32_t w = 0; w < jobs; ++w) {
            Result<std::unique_ptr<Worker>> wk = Worker::open(bytes, ro);
            if (!wk) return fail(path + ": " + wk.message());
            workers.push_back(std::move(wk).value());
        }
        if (device.empty()) {
            Result<std::unique_ptr<Runtime>> probe = Runtime::open(ro);
            if (probe) device = (*probe)->device().device;
        }
        Status s = run_pass(pass, count, jobs, [&](uint32_t w, uint32_t i) {
            return workers[w]->classify(image_path(images_dir, "test", i));
        });
        if (!s) return fail(pass.name + " (" + path + "): " + s.message());
        std::printf("  %-5s %s: %u images in %.1f s, %.0f images/s (%.0f us of CPU each)\n",
                    pass.name.c_str(), path.c_str(), count, pass.seconds, count / pass.seconds,
                    1e6 * pass.cpu_seconds / count);
        std::fflush(stdout);
        passes.push_back(std::move(pass));
    }

    std::printf("\naccuracy on %u Fashion-MNIST test images (%s, %u worker%s):\n", count,
                device.c_str(), jobs, jobs == 1 ? "" : "s");
    std::printf("  %-10s %9s %10s %20s %10s\n", "model", "accuracy", "vs float",
                "same class as float", "images/s");
    const uint32_t float_correct = reference.correct(*test);
    std::printf("  %-10s %9s %10s %20s %10.0f\n", "float32", percent(float_correct, count).c_str(),
                "-", "-", count / reference.seconds);
    for (const Pass& pass : passes) {
        uint32_t same = 0;
        for (uint32_t i = 0; i < count; ++i) same += pass.predicted[i] == reference.predicted[i];
        char delta[32];
        std::snprintf(delta, sizeof delta, "%+.2f",
                      100.0 * (double(pass.correct(*test)) - float_correct) / count);
        std::printf("  %-10s %9s %10s %20s %10.1f\n", pass.name.c_str(),
                    percent(pass.correct(*test), count).c_str(), delta,
                    percent(same, count).c_str(), count / pass.seconds);
    }

    if (examples) {
        std::printf("\nexample predictions (* wrong):\n");
        std::vector<uint32_t> shown;
        for (uint32_t i = 0; i < count && shown.size() < examples - examples / 3; ++i)
            shown.push_back(i);
        for (uint32_t i = uint32_t(shown.size()); i < count && shown.size() < examples; ++i) {
            bool wrong = reference.predicted[i] != test->labels[i];
            for (const Pass& pass : passes) wrong = wrong || pass.predicted[i] != test->labels[i];
            if (wrong) shown.push_back(i);
        }
        for (uint32_t i : shown) {
            std::printf("  %s  %-11s",
                        fs::path(image_path(images_dir, "test", i)).filename().c_str(),
                        std::string(kClassNames[test->labels[i]]).c_str());
            auto show = [&](const Pass& pass) {
                const uint8_t p = pass.predicted[i];
                std::printf("  %s: %s%s %.2f", pass.name.c_str(), p == test->labels[i] ? "" : "*",
                            std::string(kClassNames[p]).c_str(), pass.confidence[i]);
            };
            show(reference);
            for (const Pass& pass : passes) show(pass);
            std::printf("\n");
        }
    }
    std::printf("\nclassified in %.1f s\n",
                std::chrono::duration<double>(Clock::now() - job_start).count());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "The main job's Fashion-MNIST steps: images as PGM files, and loadables "
        "classifying them.",
        "nvdla_fmnist"};
    app.set_help_flag("-h,--help", "print this help and exit");
    app.require_subcommand(1);
    std::string dataset = lenet::kDefaultDatasetDir;
    app.add_option("--dataset", dataset, "directory of the Fashion-MNIST IDX files");

    CLI::App* images = app.add_subcommand("images", "write images as PGM files");
    std::string set = "test", out;
    uint32_t count = 0;
    images->add_option("--set", set, "train or test")->check(CLI::IsMember({"train", "test"}));
    images->add_option("--count", count, "the first N images (default: all)");
    images->add_option("--out", out, "directory to write SET_NNNNN.pgm into")->required();

    CLI::App* run = app.add_subcommand("classify", "classify the test images with loadables");
    std::string model, images_dir, config = "nv_full", backend = "auto";
    std::vector<std::string> loadables;
    uint32_t test_count = 10000, jobs = 0, examples = 10;
    run->add_option("--model", model, "the ONNX model (the float reference)")->required();
    run->add_option("--images", images_dir, "directory of test_NNNNN.pgm")->required();
    run->add_option("--loadable", loadables, "NAME=FILE, a loadable to run (repeatable)");
    run->add_option("--count", test_count, "test images to classify (first N)")
        ->check(CLI::Range(1u, 10000u));
    run->add_option("--jobs", jobs, "worker threads, each with its own runtime (default: cores)");
    run->add_option("--examples", examples, "example predictions to print")
        ->check(CLI::Range(0u, 100u));
    run->add_option("--config", config, "the loadables' configuration (the emulator's)");
    run->add_option("--backend", backend, "emu, drm or auto (default; NVDLA_BACKEND wins)")
        ->check(CLI::IsMember({"emu", "drm", "auto"}));
    CLI11_PARSE(app, argc, argv);

    if (images->parsed()) return write_images(dataset, set, count, out);
    if (jobs == 0) jobs = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    return classify(dataset, model, images_dir, loadables, test_count, jobs, examples, config,
                    backend);
}
