// nvdla_mainjob: the main job (`make run`, docs/main-job.md). The LeNet of tools/lenet, trained
// on Fashion-MNIST, is built with the network builder in int8 (calibrated on training images)
// and fp16, saved as loadables, and every test image is classified on the default backend (the
// emulated NVDLA unless a device is present), next to the builder's float reference: accuracy
// per precision, images per second, per-class accuracy and a few example predictions.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "lenet.hpp"

namespace {

namespace fs = std::filesystem;
using namespace nvdla;
using namespace nvdla::lenet;
using Clock = std::chrono::steady_clock;

int fail(const std::string& sentence) {
    std::cerr << "nvdla_mainjob: " << sentence << "\n";
    return 1;
}

// One pass over the test images: the predicted class and its probability per image.
struct Pass {
    std::string name;  // "float", "int8", "fp16"
    std::vector<uint8_t> predicted;
    std::vector<float> confidence;
    double seconds = 0;
    uint32_t workers = 1;
    std::string loadable;

    uint32_t correct(const Dataset& set, uint32_t count) const {
        uint32_t n = 0;
        for (uint32_t i = 0; i < count; ++i) n += predicted[i] == set.labels[i];
        return n;
    }
};

// Draws "label [#####.....] 4200/10000 1234 img/s" on a terminal; nothing otherwise.
class Progress {
  public:
    Progress(std::string label, uint32_t total)
        : label_(std::move(label)), total_(total), tty_(isatty(STDOUT_FILENO) != 0) {}
    void update(uint32_t done, Clock::time_point start) {
        if (!tty_) return;
        constexpr int kWidth = 40;
        const int filled = total_ ? static_cast<int>(int64_t(done) * kWidth / total_) : kWidth;
        const double secs = std::chrono::duration<double>(Clock::now() - start).count();
        std::printf("\r  %-6s [%s%s] %5u/%u %7.0f img/s", label_.c_str(),
                    std::string(static_cast<size_t>(filled), '#').c_str(),
                    std::string(static_cast<size_t>(kWidth - filled), '.').c_str(), done, total_,
                    secs > 0 ? done / secs : 0.0);
        std::fflush(stdout);
    }
    void finish() {
        if (!tty_) return;
        std::printf("\r%*s\r", 100, "");
        std::fflush(stdout);
    }

  private:
    std::string label_;
    uint32_t total_;
    bool tty_;
};

// Runs `classify(worker, image)` for every image on `workers` threads, showing progress.
template <class Classify>
Status run_pass(Pass& pass, const Dataset& set, uint32_t count, uint32_t workers,
                Classify classify) {
    pass.predicted.assign(count, 0);
    pass.confidence.assign(count, 0);
    pass.workers = workers;
    std::atomic<uint32_t> next{0}, done{0};
    std::mutex mutex;
    Status status;
    Progress progress(pass.name, count);
    const Clock::time_point start = Clock::now();
    auto work = [&](uint32_t worker) {
        for (;;) {
            const uint32_t i = next.fetch_add(1);
            if (i >= count) return;
            Result<std::array<float, kClasses>> p = classify(worker, set.image(i));
            if (!p) {
                std::lock_guard lock(mutex);
                if (status.ok())
                    status = Status(p.status()).context("test image " + std::to_string(i));
                next = count;
                return;
            }
            const uint32_t best = argmax(p->data(), kClasses);
            pass.predicted[i] = static_cast<uint8_t>(best);
            pass.confidence[i] = (*p)[best];
            done.fetch_add(1);
        }
    };
    std::vector<std::thread> threads;
    for (uint32_t w = 0; w < workers; ++w) threads.emplace_back(work, w);
    auto failed = [&] {
        std::lock_guard lock(mutex);
        return !status.ok();
    };
    while (done.load() < count && !failed()) {
        progress.update(done.load(), start);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (std::thread& t : threads) t.join();
    progress.finish();
    pass.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return status;
}

Status write_bytes(const std::string& path, std::span<const std::byte> bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return Status::failure(path + ": cannot create the file");
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) return Status::failure(path + ": cannot write the file");
    return Status();
}

Status write_labels(const std::string& path) {
    std::ofstream out(path, std::ios::trunc);
    if (!out) return Status::failure(path + ": cannot create the file");
    for (std::string_view name : kClassNames) out << name << "\n";
    return out ? Status() : Status::failure(path + ": cannot write the file");
}

// A binary PGM of one 28x28 image.
Status write_pgm(const std::string& path, const uint8_t* pixels) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return Status::failure(path + ": cannot create the file");
    out << "P5\n" << kImageSide << " " << kImageSide << "\n255\n";
    out.write(reinterpret_cast<const char*>(pixels), kImagePixels);
    return out ? Status() : Status::failure(path + ": cannot write the file");
}

std::string percent(uint32_t n, uint32_t total) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f%%", total ? 100.0 * n / total : 0.0);
    return text;
}

std::string kib(uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "The main job: LeNet on Fashion-MNIST, built for NVDLA in int8 and fp16, on "
        "every test image.",
        "nvdla_mainjob"};
    app.set_help_flag("-h,--help", "print this help and exit");
    std::string weights = default_weights_path(), dataset = kDefaultDatasetDir;
    std::string out_dir = "build", config, backend = "auto";
    std::vector<std::string> precisions = {"int8", "fp16"};
    uint32_t images = 10000, calibration_images = 1000, examples = 10, jobs = 0;
    bool no_float = false;
    app.add_option("--weights", weights, "the network's weights file");
    app.add_option("--dataset", dataset, "directory of the Fashion-MNIST IDX files");
    app.add_option("--out-dir", out_dir, "where to write the loadables, labels and images");
    app.add_option("--config", config,
                   "hardware configuration to build for (default: the device's, else nv_full)");
    app.add_option("--backend", backend, "emu, drm or auto (default; NVDLA_BACKEND wins)")
        ->check(CLI::IsMember({"emu", "drm", "auto"}));
    app.add_option("--precision", precisions, "precisions to build and run (int8, fp16)")
        ->check(CLI::IsMember({"int8", "fp16"}))
        ->delimiter(',');
    app.add_option("--images", images, "test images to classify (first N)")
        ->check(CLI::Range(1u, 10000u));
    app.add_option("--calibration-images", calibration_images,
                   "training images for int8 calibration")
        ->check(CLI::Range(1u, 60000u));
    app.add_option("--examples", examples, "example predictions to print")
        ->check(CLI::Range(0u, 100u));
    app.add_option("--jobs", jobs, "worker threads, each with its own runtime (default: cores)");
    app.add_flag("--no-float", no_float, "skip the float reference pass");
    CLI11_PARSE(app, argc, argv);

    const Clock::time_point job_start = Clock::now();
    if (jobs == 0) jobs = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);

    // The network and the data.
    Result<Model> model = load_model(weights);
    if (!model) return fail(model.message() + " (make train writes it)");
    Result<Dataset> test = load_fashion_mnist(dataset, false);
    if (!test) return fail(test.message() + " (install dataset-fashion-mnist or pass --dataset)");
    Result<Dataset> train = load_fashion_mnist(dataset, true);
    if (!train) return fail(train.message());
    images = std::min(images, test->count);
    uint64_t parameters = 0;
    for (const WeightTensor& t : tensors_from_model(*model)) parameters += t.values.size();
    const builder::Network net = describe_network(*model);
    if (Status s = net.status(); !s) return fail(s.message());

    // The device: its configuration decides what to build for.
    RuntimeOptions ro;
    ro.backend = backend == "emu"   ? BackendChoice::Emu
                 : backend == "drm" ? BackendChoice::Drm
                                    : BackendChoice::Auto;
    ro.emu_config = config.empty() ? "nv_full" : config;
    DeviceInfo device;
    {
        Result<std::unique_ptr<Runtime>> probe = Runtime::open(ro);
        if (!probe) return fail(probe.message());
        device = (*probe)->device();
    }
    if (config.empty()) config = device.backend == "emu" ? "nv_full" : device.config;

    std::printf("== LeNet-5 on Fashion-MNIST: %s (%llu parameters)\n", weights.c_str(),
                static_cast<unsigned long long>(parameters));
    std::printf("device: %s (%s backend), %u worker%s\n", device.device.c_str(),
                device.backend.c_str(), jobs, jobs == 1 ? "" : "s");

    fs::create_directories(out_dir);
    std::vector<Pass> passes;
    std::vector<builder::CompiledNetwork> compiled;

    // Build.
    std::optional<builder::Calibration> calibration;
    for (const std::string& p : precisions) {
        const Precision precision = p == "int8" ? Precision::Int8 : Precision::Fp16;
        const Clock::time_point t0 = Clock::now();
        if (precision == Precision::Int8 && !calibration) {
            Result<builder::Calibration> cal = calibrate(net, *train, calibration_images);
            if (!cal) return fail("calibration: " + cal.message());
            calibration = std::move(cal).value();
        }
        Result<builder::CompiledNetwork> built = build_network(
            net, config, precision, precision == Precision::Int8 ? &*calibration : nullptr);
        if (!built) return fail("build " + p + " for " + config + ": " + built.message());
        const std::string path = out_dir + "/lenet_" + p + ".nvdla";
        if (Status s = write_bytes(path, built->loadable); !s) return fail(s.message());
        if (Status s = write_labels(out_dir + "/lenet_" + p + ".labels"); !s)
            return fail(s.message());
        const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
        std::printf(
            "built %s for %s in %.2f s%s: %u hardware task%s, %u CPU task%s, %s of weights "
            "-> %s\n",
            p.c_str(), config.c_str(), secs,
            precision == Precision::Int8
                ? (" (calibrated on " + std::to_string(calibration_images) + " training images)")
                      .c_str()
                : "",
            built->hardware_tasks, built->hardware_tasks == 1 ? "" : "s", built->cpu_tasks,
            built->cpu_tasks == 1 ? "" : "s", kib(built->weight_bytes).c_str(), path.c_str());
        for (const std::string& op : built->operations) std::printf("    %s\n", op.c_str());
        compiled.push_back(std::move(built).value());
        Pass pass;
        pass.name = p;
        pass.loadable = path;
        passes.push_back(std::move(pass));
    }

    // The float reference.
    std::optional<Pass> reference;
    if (!no_float) {
        Pass pass;
        pass.name = "float";
        Status s =
            run_pass(pass, *test, images, jobs,
                     [&](uint32_t, const uint8_t* pixels) -> Result<std::array<float, kClasses>> {
                         Result<std::vector<builder::HostTensor>> out =
                             builder::run_reference(net, {image_tensor(pixels)});
                         if (!out) return out.status();
                         std::array<float, kClasses> p{};
                         std::copy_n((*out)[0].data.begin(), kClasses, p.begin());
                         return p;
                     });
        if (!s) return fail("float reference: " + s.message());
        reference = std::move(pass);
    }

    // Each precision on the device.
    std::printf("classifying %u test images on %s:\n", images, device.device.c_str());
    for (size_t k = 0; k < passes.size(); ++k) {
        std::vector<std::unique_ptr<Classifier>> workers;
        for (uint32_t w = 0; w < jobs; ++w) {
            Result<std::unique_ptr<Classifier>> c = Classifier::open(compiled[k], ro);
            if (!c) return fail(passes[k].loadable + ": " + c.message());
            workers.push_back(std::move(c).value());
        }
        Status s =
            run_pass(passes[k], *test, images, jobs, [&](uint32_t worker, const uint8_t* pixels) {
                return workers[worker]->classify(pixels);
            });
        if (!s) return fail(passes[k].name + ": " + s.message());
        std::printf("  %-5s %u images in %.2f s: %.1f images/s\n", passes[k].name.c_str(), images,
                    passes[k].seconds, images / passes[k].seconds);
        std::fflush(stdout);
    }

    // Results.
    std::printf("\naccuracy on %u Fashion-MNIST test images (%s):\n", images,
                device.backend == "emu" ? ("emulated " + config).c_str() : device.device.c_str());
    std::printf("  %-10s %9s %22s %12s\n", "precision", "accuracy", "same class as float",
                "images/s");
    if (reference)
        std::printf("  %-10s %9s %22s %12.0f\n", "float32",
                    percent(reference->correct(*test, images), images).c_str(), "-",
                    images / reference->seconds);
    for (const Pass& pass : passes) {
        std::string agree = "-";
        if (reference) {
            uint32_t same = 0;
            for (uint32_t i = 0; i < images; ++i)
                same += pass.predicted[i] == reference->predicted[i];
            agree = percent(same, images);
        }
        std::printf("  %-10s %9s %22s %12.1f\n", pass.name.c_str(),
                    percent(pass.correct(*test, images), images).c_str(), agree.c_str(),
                    images / pass.seconds);
    }

    std::printf("\nper class:\n  %-12s", "class");
    if (reference) std::printf(" %8s", "float32");
    for (const Pass& pass : passes) std::printf(" %8s", pass.name.c_str());
    std::printf("\n");
    for (uint32_t c = 0; c < kClasses; ++c) {
        uint32_t total = 0;
        for (uint32_t i = 0; i < images; ++i) total += test->labels[i] == c;
        std::printf("  %-12s", std::string(kClassNames[c]).c_str());
        auto column = [&](const Pass& pass) {
            uint32_t right = 0;
            for (uint32_t i = 0; i < images; ++i)
                right += test->labels[i] == c && pass.predicted[i] == c;
            std::printf(" %8s", percent(right, total).c_str());
        };
        if (reference) column(*reference);
        for (const Pass& pass : passes) column(pass);
        std::printf("\n");
    }

    if (examples) {
        const std::string image_dir = out_dir + "/fmnist";
        fs::create_directories(image_dir);
        // The first test images, and the first ones that some precision gets wrong.
        std::vector<uint32_t> shown;
        const uint32_t wrong_ones = examples / 3;
        for (uint32_t i = 0; i < images && shown.size() < examples - wrong_ones; ++i)
            shown.push_back(i);
        for (uint32_t i = static_cast<uint32_t>(shown.size());
             i < images && shown.size() < examples; ++i) {
            bool wrong = reference && reference->predicted[i] != test->labels[i];
            for (const Pass& pass : passes) wrong = wrong || pass.predicted[i] != test->labels[i];
            if (wrong) shown.push_back(i);
        }
        std::printf("\nexample predictions (test images, written to %s/):\n", image_dir.c_str());
        for (uint32_t i : shown) {
            char name[64];
            std::snprintf(name, sizeof name, "/test_%05u.pgm", i);
            if (Status s = write_pgm(image_dir + name, test->image(i)); !s)
                return fail(s.message());
            std::printf("  %s label %-11s", name + 1,
                        std::string(kClassNames[test->labels[i]]).c_str());
            auto show = [&](const Pass& pass) {
                const uint8_t p = pass.predicted[i];
                std::printf("  %s: %s%s (%.2f)", pass.name.c_str(), p == test->labels[i] ? "" : "*",
                            std::string(kClassNames[p]).c_str(), pass.confidence[i]);
            };
            if (reference) show(*reference);
            for (const Pass& pass : passes) show(pass);
            std::printf("\n");
        }
        std::printf("  (* a wrong prediction)\n");
        if (!passes.empty())
            std::printf(
                "\none image on the saved loadable:\n  %s --loadable %s --image "
                "%s/test_00000.pgm\n",
                (fs::path(argv[0]).parent_path() / "nvdla_runtime").c_str(),
                passes[0].loadable.c_str(), image_dir.c_str());
    }
    std::printf("\nmain job done in %.1f s\n",
                std::chrono::duration<double>(Clock::now() - job_start).count());
    return 0;
}
