// The main job's network (tools/lenet) as a whole: the committed weights file, the trainer's
// float forward pass against the builder's float reference, and the network built for NVDLA
// (int8 on nv_full and nv_small, fp16 on nv_full; nv_small has no fp16) and run on the
// emulator on a subset of the test images, against the float reference. The runtime's image
// input (what `nvdla_runtime --image` does) must give the same input as the builder's packing.
// Tests that need Fashion-MNIST skip when dataset-fashion-mnist is not installed
// (NVDLA_FMNIST_DIR overrides where it is).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "lenet.hpp"
#include "nvdla/builder.hpp"
#include "nvdla/runtime.hpp"

namespace {

namespace fs = std::filesystem;
using namespace nvdla::lenet;

std::string dataset_dir() {
    if (const char* env = std::getenv("NVDLA_FMNIST_DIR")) return env;
    return kDefaultDatasetDir;
}

// The first images of the data set, read once per process; nullopt (and the reason) when it
// is not installed.
const std::optional<Dataset>& dataset(bool train, std::string* why = nullptr) {
    static std::string reason[2];
    static std::optional<Dataset> sets[2];
    static bool loaded[2] = {false, false};
    const int i = train ? 1 : 0;
    if (!loaded[i]) {
        loaded[i] = true;
        auto d = load_fashion_mnist(dataset_dir(), train, 64);  // the tests use a few
        if (d)
            sets[i] = std::move(d).value();
        else
            reason[i] = d.message();
    }
    if (why) *why = reason[i];
    return sets[i];
}

#define REQUIRE_DATASET(train)                                         \
    std::string why_missing;                                           \
    const std::optional<Dataset>& data = dataset(train, &why_missing); \
    if (!data)                                                         \
    GTEST_SKIP() << "Fashion-MNIST is not available (" << why_missing  \
                 << "): install dataset-fashion-mnist or set NVDLA_FMNIST_DIR"

const Model& model() {
    static const Model m = [] {
        auto r = load_model(default_weights_path());
        if (!r) {
            ADD_FAILURE() << r.message();
            return Model{};
        }
        return *r;
    }();
    return m;
}

TEST(LenetWeights, TheCommittedFileHoldsTheNetwork) {
    auto tensors = read_weights(default_weights_path());
    ASSERT_TRUE(tensors) << tensors.message();
    uint64_t parameters = 0;
    for (const WeightTensor& t : *tensors) parameters += t.values.size();
    EXPECT_EQ(parameters, 61706u);  // LeNet-5: 156 + 2416 + 48120 + 10164 + 850
    EXPECT_LT(fs::file_size(default_weights_path()), 500u * 1024);
    auto m = model_from_tensors(*tensors);
    ASSERT_TRUE(m) << m.message();
    for (float v : m->fc1_w) ASSERT_TRUE(std::isfinite(v));
}

TEST(LenetWeights, MalformedFilesAreRefused) {
    const fs::path dir = fs::temp_directory_path() / ("lenet_weights_" + std::to_string(getpid()));
    fs::create_directories(dir);
    auto tensors = read_weights(default_weights_path());
    ASSERT_TRUE(tensors) << tensors.message();
    // Round trip.
    const std::string copy = (dir / "copy.weights").string();
    ASSERT_TRUE(write_weights(copy, *tensors));
    auto again = read_weights(copy);
    ASSERT_TRUE(again) << again.message();
    EXPECT_EQ(again->size(), tensors->size());
    // Truncated.
    fs::resize_file(copy, fs::file_size(copy) - 3);
    auto cut = read_weights(copy);
    ASSERT_FALSE(cut);
    EXPECT_NE(cut.message().find("fc3.bias"), std::string::npos) << cut.message();
    // A missing tensor.
    std::vector<WeightTensor> fewer(tensors->begin(), tensors->end() - 1);
    auto m = model_from_tensors(fewer);
    ASSERT_FALSE(m);
    EXPECT_NE(m.message().find("fc3.bias"), std::string::npos) << m.message();
    // Not a weights file.
    { std::ofstream(dir / "junk") << "hello"; }
    auto junk = read_weights((dir / "junk").string());
    ASSERT_FALSE(junk);
    EXPECT_NE(junk.message().find("NVLENET1"), std::string::npos) << junk.message();
    fs::remove_all(dir);
}

// The builder's float reference of describe_network() is the trainer's network.
TEST(LenetFloat, BuilderReferenceIsTheTrainersForwardPass) {
    REQUIRE_DATASET(false);
    const nvdla::builder::Network net = describe_network(model());
    ASSERT_TRUE(net.status()) << net.status().message();
    std::vector<float> input(kImagePixels);
    for (uint32_t i = 0; i < 8; ++i) {
        image_to_input(data->image(i), input.data());
        const auto expected = forward(model(), input.data());
        auto out = nvdla::builder::run_reference(net, {image_tensor(data->image(i))});
        ASSERT_TRUE(out) << out.message();
        ASSERT_EQ((*out)[0].data.size(), kClasses);
        for (uint32_t c = 0; c < kClasses; ++c)
            EXPECT_NEAR((*out)[0].data[c], expected[c], 2e-5f) << "image " << i << " class " << c;
    }
}

struct Target {
    const char* config;
    nvdla::Precision precision;
    uint32_t images;          // test images to run (a subset: tests stay under a second)
    float probability_error;  // largest |p - p_float| allowed
};

void PrintTo(const Target& t, std::ostream* out) {
    *out << t.config << " " << nvdla::to_string(t.precision) << ", " << t.images << " images";
}

class LenetOnNvdla : public ::testing::TestWithParam<Target> {};

// Builds the network and runs the first test images, comparing each probability vector with
// the float reference. The int8 bound is the softmax's quantization (1/127 per step) plus the
// propagated activation quantization of five layers; fp16 keeps probabilities within 0.01.
TEST_P(LenetOnNvdla, ClassifiesLikeTheFloatReference) {
    const Target& t = GetParam();
    REQUIRE_DATASET(false);
    const std::optional<Dataset>& train = dataset(true);
    ASSERT_TRUE(train);
    const nvdla::builder::Network net = describe_network(model());
    std::optional<nvdla::builder::Calibration> cal;
    if (t.precision == nvdla::Precision::Int8) {
        auto c = calibrate(net, *train, 16);
        ASSERT_TRUE(c) << c.message();
        cal = std::move(c).value();
    }
    auto built = build_network(net, t.config, t.precision, cal ? &*cal : nullptr);
    ASSERT_TRUE(built) << built.message();
    nvdla::RuntimeOptions ro;
    ro.backend = nvdla::BackendChoice::Emu;
    auto classifier = Classifier::open(*built, ro);
    ASSERT_TRUE(classifier) << classifier.message();
    uint32_t agree = 0, right = 0;
    float worst = 0;
    for (uint32_t i = 0; i < t.images; ++i) {
        auto p = (*classifier)->classify(data->image(i));
        ASSERT_TRUE(p) << p.message();
        auto ref = nvdla::builder::run_reference(net, {image_tensor(data->image(i))});
        ASSERT_TRUE(ref) << ref.message();
        const float* e = (*ref)[0].data.data();
        for (uint32_t c = 0; c < kClasses; ++c) worst = std::max(worst, std::fabs((*p)[c] - e[c]));
        agree += argmax(p->data(), kClasses) == argmax(e, kClasses);
        right += argmax(p->data(), kClasses) == data->labels[i];
    }
    EXPECT_LE(worst, t.probability_error);
    EXPECT_GE(agree, t.images - 1) << "predictions that differ from the float reference";
    EXPECT_GE(right, t.images * 3 / 4) << "correct predictions";
    RecordProperty("worst_probability_error", std::to_string(worst));
}

INSTANTIATE_TEST_SUITE_P(Configs, LenetOnNvdla,
                         ::testing::Values(Target{"nv_full", nvdla::Precision::Int8, 8, 0.08f},
                                           Target{"nv_small", nvdla::Precision::Int8, 8, 0.08f},
                                           Target{"nv_large", nvdla::Precision::Int8, 8, 0.08f},
                                           Target{"nv_full", nvdla::Precision::Fp16, 2, 0.01f}),
                         [](const ::testing::TestParamInfo<Target>& param) {
                             return std::string(param.param.config) + "_" +
                                    std::string(nvdla::to_string(param.param.precision));
                         });

TEST(LenetOnNvdla, Fp16OnNvSmallIsRefused) {
    const nvdla::builder::Network net = describe_network(model());
    auto built = build_network(net, "nv_small", nvdla::Precision::Fp16, nullptr);
    ASSERT_FALSE(built);
    EXPECT_NE(built.message().find("fp16"), std::string::npos) << built.message();
}

// What `nvdla_runtime --image x.pgm` puts in the input (Context::load_image: fp16 pixel values,
// int8 round(pixel * 127 / 255)) is what the builder packs for the same image.
TEST(LenetOnNvdla, RuntimeImageInputMatchesTheBuilder) {
    REQUIRE_DATASET(false);
    const std::optional<Dataset>& train = dataset(true);
    ASSERT_TRUE(train);
    const nvdla::builder::Network net = describe_network(model());
    auto cal = calibrate(net, *train, 8);
    ASSERT_TRUE(cal) << cal.message();
    const fs::path dir = fs::temp_directory_path() / ("lenet_image_" + std::to_string(getpid()));
    fs::create_directories(dir);
    const std::string pgm = (dir / "image.pgm").string();
    {
        std::ofstream out(pgm, std::ios::binary);
        out << "P5\n28 28\n255\n";
        out.write(reinterpret_cast<const char*>(data->image(0)), kImagePixels);
    }
    for (nvdla::Precision precision : {nvdla::Precision::Int8, nvdla::Precision::Fp16}) {
        SCOPED_TRACE(std::string(nvdla::to_string(precision)));
        auto built = build_network(net, "nv_full", precision, &*cal);
        ASSERT_TRUE(built) << built.message();
        nvdla::RuntimeOptions ro;
        ro.backend = nvdla::BackendChoice::Emu;
        auto rt = nvdla::Runtime::open(ro);
        ASSERT_TRUE(rt) << rt.message();
        auto loaded = (*rt)->load(built->loadable);
        ASSERT_TRUE(loaded) << loaded.message();
        auto ctx = (*loaded)->create_context();
        ASSERT_TRUE(ctx) << ctx.message();
        ASSERT_TRUE((*ctx)->load_image(0, pgm));
        const auto bytes = (*ctx)->input(0);
        std::vector<std::byte> packed(built->inputs[0].size_bytes);
        ASSERT_TRUE(
            nvdla::builder::pack_input(built->inputs[0], image_tensor(data->image(0)), packed));
        ASSERT_GE(bytes.size(), packed.size());
        size_t differ = 0;
        for (size_t i = 0; i < packed.size(); ++i) differ += bytes[i] != packed[i];
        // int8 rounding: the runtime rounds half up, the builder may round half to even; a
        // pixel value of x.5 steps cannot occur for 127/255 (odd over odd), so all bytes match.
        EXPECT_EQ(differ, 0u);
    }
    fs::remove_all(dir);
}

// `nvdla_runtime --image` on a saved LeNet loadable prints the best classes with their names,
// from the side file NAME.labels or --labels. The tool is the one beside this test program.
TEST(LenetOnNvdla, NvdlaRuntimePrintsClassNames) {
    REQUIRE_DATASET(false);
    const fs::path tool = fs::read_symlink("/proc/self/exe").parent_path() / "nvdla_runtime";
    if (!fs::exists(tool)) GTEST_SKIP() << tool << " is not built";
    const std::optional<Dataset>& train = dataset(true);
    ASSERT_TRUE(train);
    const nvdla::builder::Network net = describe_network(model());
    auto cal = calibrate(net, *train, 8);
    ASSERT_TRUE(cal) << cal.message();
    auto built = build_network(net, "nv_full", nvdla::Precision::Int8, &*cal);
    ASSERT_TRUE(built) << built.message();
    const fs::path dir = fs::temp_directory_path() / ("lenet_tool_" + std::to_string(getpid()));
    fs::create_directories(dir);
    {
        std::ofstream out(dir / "lenet.nvdla", std::ios::binary);
        out.write(reinterpret_cast<const char*>(built->loadable.data()),
                  static_cast<std::streamsize>(built->loadable.size()));
        std::ofstream labels(dir / "lenet.labels");
        for (std::string_view name : kClassNames) labels << name << "\n";
        std::ofstream pgm(dir / "image.pgm", std::ios::binary);
        pgm << "P5\n28 28\n255\n";
        pgm.write(reinterpret_cast<const char*>(data->image(0)), kImagePixels);  // Ankle boot
    }
    auto run = [&](const std::string& extra, int& status) {
        const std::string command = tool.string() + " --backend emu --loadable " +
                                    (dir / "lenet.nvdla").string() + " --image " +
                                    (dir / "image.pgm").string() + " --output " +
                                    (dir / "out.dimg").string() + " " + extra + " 2>&1";
        std::string text;
        FILE* p = popen(command.c_str(), "r");
        if (!p) return text;
        char buffer[512];
        while (fgets(buffer, sizeof buffer, p)) text += buffer;
        status = pclose(p);
        return text;
    };
    int status = -1;
    std::string out = run("", status);
    EXPECT_EQ(status, 0) << out;
    EXPECT_NE(out.find("#1: class 9 (Ankle boot), probability"), std::string::npos) << out;
    EXPECT_NE(out.find("#3: class"), std::string::npos) << out;  // 3 classes by default
    out = run("--labels " + (dir / "missing.labels").string(), status);
    EXPECT_NE(status, 0) << out;
    EXPECT_NE(out.find("missing.labels: cannot open the file"), std::string::npos) << out;
    fs::remove_all(dir);
}

}  // namespace
