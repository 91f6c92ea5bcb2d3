// nvdla_compiler run as a user runs it: each input kind, the flags, the errors; its loadables
// against the library path and nvdla_runtime, Caffe against ONNX, calibration tables.
// The models are tests/compiler/models/ (written by make_models.py).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "nvdla/builder.hpp"
#include "nvdla/caffe.hpp"
#include "nvdla/onnx.hpp"
#include "test_support.hpp"

#include "tool_run.hpp"

namespace {

using nvdla::test::run_tool;
using nvdla::test::ToolRun;

namespace fs = std::filesystem;
using namespace nvdla;

const std::string kModels = std::string(nvdla::test::tests_source_dir()) + "/compiler/models/";

ToolRun compile(const std::string& args) {
    return run_tool("nvdla_compiler", args);
}

std::vector<std::byte> slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::vector<char> c{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::vector<std::byte> b(c.size());
    std::memcpy(b.data(), c.data(), c.size());
    return b;
}

// A 28x28 grey PGM of pseudo-random pixels.
void write_pgm(const std::string& path, uint32_t seed, uint32_t w = 28, uint32_t h = 28) {
    std::mt19937 rng(seed);
    std::ofstream out(path, std::ios::binary);
    out << "P5\n" << w << " " << h << "\n255\n";
    for (uint32_t i = 0; i < w * h; ++i) out.put(static_cast<char>(rng() % 256));
}

std::vector<uint8_t> pgm_pixels(const std::string& path) {
    std::vector<std::byte> b = slurp(path);
    std::vector<uint8_t> px(28 * 28);
    std::memcpy(px.data(), b.data() + b.size() - px.size(), px.size());
    return px;
}

class Compiler : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("nvdla_compiler_test_" + std::to_string(getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_ / "calibration");
        for (uint32_t i = 0; i < 6; ++i)
            write_pgm((dir_ / "calibration" / ("img" + std::to_string(i) + ".pgm")).string(),
                      i + 1);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    std::string calibration() const { return path("calibration"); }
    fs::path dir_;
};

builder::HostTensor image_input(const std::vector<uint8_t>& px, float scale) {
    builder::HostTensor t = builder::make_host_tensor({1, 1, 28, 28});
    for (size_t i = 0; i < px.size(); ++i) t.data[i] = float(px[i]) * scale;
    return t;
}

// Runs a loadable's bytes on the emulator through the library, the input given as floats.
std::vector<float> run_library(const builder::CompiledNetwork& net,
                               const builder::HostTensor& input) {
    RuntimeOptions options;
    options.backend = BackendChoice::Emu;
    options.emu_config = net.config;
    auto rt = Runtime::open(options);
    EXPECT_TRUE(rt) << rt.message();
    if (!rt) return {};
    Result<std::vector<builder::HostTensor>> out = builder::run(net, **rt, {input});
    EXPECT_TRUE(out) << out.message();
    return out ? (*out)[0].data : std::vector<float>{};
}

// ---- inputs ----

TEST_F(Compiler, OnnxFp16LoadableIsTheLibrarysBuild) {
    const std::string out = path("lenet.nvdla");
    ToolRun r = compile(kModels + "lenet.onnx --config nv_full --precision fp16 -o " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // The report: what each layer became, tasks, memory, MACs, the tensors.
    for (const char* part : {"conv1", "ip2", "tasks:", "of weights", "multiply-accumulates",
                             "input  0 'data' 1x28x28", "output 0 'prob'"})
        EXPECT_NE(r.output.find(part), std::string::npos) << part << "\n" << r.output;

    Result<nvdla::onnx::Model> m = nvdla::onnx::import_file(kModels + "lenet.onnx");
    ASSERT_TRUE(m) << m.message();
    Result<builder::CompiledNetwork> built = builder::build(m->network, {});
    ASSERT_TRUE(built) << built.message();
    EXPECT_EQ(slurp(out), built->loadable);
}

TEST_F(Compiler, CompiledLoadableRunsInNvdlaRuntimeAsInTheLibrary) {
    const std::string out = path("lenet.nvdla"), image = path("digit.pgm");
    ASSERT_EQ(compile(kModels + "lenet.onnx -o " + out).exit_code, 0);
    write_pgm(image, 42);
    ToolRun r = run_tool("nvdla_runtime", "--backend emu --loadable " + out + " --image " + image +
                                              " --rawdump --output " + path("out.txt"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::ifstream text(path("out.txt"));
    std::vector<float> runtime_values{std::istream_iterator<float>(text),
                                      std::istream_iterator<float>()};

    Result<nvdla::onnx::Model> m = nvdla::onnx::import_file(kModels + "lenet.onnx");
    ASSERT_TRUE(m);
    Result<builder::CompiledNetwork> built = builder::build(m->network, {});
    ASSERT_TRUE(built);
    // nvdla_runtime --image feeds an fp16 input the pixel values (normalize 1).
    const std::vector<float> library = run_library(*built, image_input(pgm_pixels(image), 1.0f));
    ASSERT_EQ(runtime_values.size(), library.size()) << r.output;
    for (size_t i = 0; i < library.size(); ++i)
        EXPECT_NEAR(runtime_values[i], library[i], 1e-5 * std::fabs(library[i]) + 1e-7) << i;
}

TEST_F(Compiler, CaffeLenetAndOnnxLenetGiveTheSameOutputs) {
    for (const char* precision : {"fp16", "int8"}) {
        SCOPED_TRACE(precision);
        const std::string caffe_out = path(std::string("caffe_") + precision + ".nvdla");
        const std::string onnx_out = path(std::string("onnx_") + precision + ".nvdla");
        const std::string common = std::string(" --precision ") + precision + " --calibration " +
                                   calibration() + " --scale 0.00392157";
        ToolRun a = compile("--prototxt " + kModels + "lenet.prototxt --caffemodel " + kModels +
                            "lenet.caffemodel -o " + caffe_out + common);
        ASSERT_EQ(a.exit_code, 0) << a.output;
        ToolRun b = compile(kModels + "lenet.onnx -o " + onnx_out + common);
        ASSERT_EQ(b.exit_code, 0) << b.output;
        // Both on nvdla_runtime with the same images: the same output values.
        for (int i = 0; i < 3; ++i) {
            const std::string image = calibration() + "/img" + std::to_string(i) + ".pgm";
            std::vector<std::string> dumps;
            for (const std::string& loadable : {caffe_out, onnx_out}) {
                const std::string dump = path("dump.txt");
                ToolRun r = run_tool("nvdla_runtime",
                                     "--backend emu --loadable " + loadable + " --image " + image +
                                         " --normalize 255 --rawdump --output " + dump);
                ASSERT_EQ(r.exit_code, 0) << r.output;
                std::ifstream in(dump);
                dumps.emplace_back(std::istreambuf_iterator<char>(in),
                                   std::istreambuf_iterator<char>());
            }
            EXPECT_EQ(dumps[0], dumps[1]);
            EXPECT_FALSE(dumps[0].empty());
        }
    }
    // And the float references agree.
    Result<caffe::Model> c =
        caffe::import_files(kModels + "lenet.prototxt", kModels + "lenet.caffemodel");
    ASSERT_TRUE(c) << c.message();
    Result<nvdla::onnx::Model> o = nvdla::onnx::import_file(kModels + "lenet.onnx");
    ASSERT_TRUE(o);
    const builder::HostTensor x = image_input(pgm_pixels(calibration() + "/img0.pgm"), 1 / 255.f);
    auto rc = builder::run_reference(c->network, {x});
    auto ro = builder::run_reference(o->network, {x});
    ASSERT_TRUE(rc && ro);
    ASSERT_EQ((*rc)[0].data.size(), 10u);
    for (size_t i = 0; i < 10; ++i) EXPECT_NEAR((*rc)[0].data[i], (*ro)[0].data[i], 1e-6);
}

TEST_F(Compiler, CaffeLayersModelCompiles) {
    // BatchNorm, Scale, PReLU, Eltwise (coefficients, max), Sigmoid, TanH, Concat, LRN,
    // average and global pooling, Deconvolution, Flatten, the legacy input_dim form.
    ToolRun r = compile("--prototxt " + kModels + "layers.prototxt --caffemodel " + kModels +
                        "layers.caffemodel -o " + path("layers.nvdla"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (const char* layer :
         {"conv1", "branch_a", "max", "sig", "tanh", "norm", "pool", "up", "gpool", "fc"})
        EXPECT_NE(r.output.find(std::string(layer) + ":"), std::string::npos) << layer;
    EXPECT_TRUE(fs::exists(path("layers.nvdla")));
}

TEST_F(Compiler, CalibrationFromTensorFiles) {
    // .npy (float32 and float64) and .pb TensorProto samples of the input's 1x1x28x28.
    fs::create_directories(path("tensors"));
    std::vector<float> values(28 * 28);
    for (size_t i = 0; i < values.size(); ++i) values[i] = float(i % 17) / 17.0f;
    {
        std::ofstream f(path("tensors/a.npy"), std::ios::binary);
        std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 28, 28), }";
        header.resize(118, ' ');
        header += '\n';
        f << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
          << char(header.size() >> 8) << header;
        f.write(reinterpret_cast<const char*>(values.data()), values.size() * 4);
    }
    {
        std::ofstream f(path("tensors/b.npy"), std::ios::binary);
        std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (784,), }";
        header.resize(118, ' ');
        header += '\n';
        f << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
          << char(header.size() >> 8) << header;
        for (float v : values) {
            const double d = v * 0.5;
            f.write(reinterpret_cast<const char*>(&d), 8);
        }
    }
    {
        ::onnx::TensorProto t;
        t.set_data_type(::onnx::TensorProto_DataType_FLOAT);
        for (int64_t d : {1, 1, 28, 28}) t.add_dims(d);
        for (float v : values) t.add_float_data(v * 0.25f);
        std::ofstream f(path("tensors/c.pb"), std::ios::binary);
        t.SerializeToOstream(&f);
    }
    ToolRun r = compile(kModels + "lenet.onnx --precision int8 --calibration " + path("tensors") +
                        " --write-calibtable " + path("t.json") + " -o " + path("l.nvdla"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("3 samples"), std::string::npos) << r.output;
    // The input's range is what the tensors held (max 16/17), not an image's.
    std::ifstream in(path("t.json"));
    nlohmann::json table = nlohmann::json::parse(in);
    EXPECT_NEAR(table["data"]["scale"].get<double>() * 127, 16.0 / 17.0, 1e-6);

    // A tensor of the wrong size is refused, naming the file.
    {
        std::ofstream f(path("tensors/d.npy"), std::ios::binary);
        std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
        header.resize(118, ' ');
        header += '\n';
        f << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
          << char(header.size() >> 8) << header;
        f.write(reinterpret_cast<const char*>(values.data()), 12);
    }
    r = compile(kModels + "lenet.onnx --precision int8 --calibration " + path("tensors") + " -o " +
                path("bad.nvdla"));
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("d.npy: 3 values"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(path("bad.nvdla")));
}

TEST_F(Compiler, ImagePreprocessingFlags) {
    // --calibration-samples takes the first N files; --mean/--normalize set the input's range
    // (the whole pixel range: max(|0 - 100|, |255 - 100|) / 128).
    ToolRun r = compile(kModels + "lenet.onnx --precision int8 --calibration " + calibration() +
                        " --calibration-samples 2 --mean 100 --normalize 128 --write-calibtable " +
                        path("t.json") + " -o " + path("a.nvdla"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("2 samples"), std::string::npos) << r.output;
    std::ifstream in(path("t.json"));
    nlohmann::json j = nlohmann::json::parse(in);
    EXPECT_NEAR(j["data"]["scale"].get<double>() * 127, 155.0 / 128.0, 1e-6);

    // --resize: 40x30 images are scaled and cropped to 28x28 (refused without it).
    fs::create_directories(path("big"));
    for (uint32_t i = 0; i < 2; ++i)
        write_pgm(path("big/b" + std::to_string(i) + ".pgm"), i + 7, 40, 30);
    r = compile(kModels + "lenet.onnx --precision int8 --calibration " + path("big") + " -o " +
                path("b.nvdla"));
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("--resize"), std::string::npos) << r.output;
    r = compile(kModels + "lenet.onnx --precision int8 --resize --calibration " + path("big") +
                " -o " + path("b.nvdla"));
    EXPECT_EQ(r.exit_code, 0) << r.output;

    // --channel-order: the same colour images in RGB and BGR calibrate a colour network
    // differently.
    fs::create_directories(path("colour"));
    for (uint32_t i = 0; i < 2; ++i) {
        std::ofstream f(path("colour/c" + std::to_string(i) + ".ppm"), std::ios::binary);
        f << "P6\n16 16\n255\n";
        for (uint32_t k = 0; k < 16 * 16; ++k) {
            f.put(static_cast<char>(250));  // red
            f.put(static_cast<char>(20 * i));
            f.put(static_cast<char>(k % 7));
        }
    }
    std::vector<std::string> tables;
    for (const char* order : {"rgb", "bgr"}) {
        const std::string table = path(std::string(order) + ".json");
        r = compile("--prototxt " + kModels + "layers.prototxt --caffemodel " + kModels +
                    "layers.caffemodel --precision int8 --calibration " + path("colour") +
                    " --normalize 255 --channel-order " + order + " --write-calibtable " + table +
                    " -o " + path("c.nvdla"));
        ASSERT_EQ(r.exit_code, 0) << r.output;
        std::ifstream t(table);
        tables.emplace_back(std::istreambuf_iterator<char>(t), std::istreambuf_iterator<char>());
    }
    EXPECT_NE(tables[0], tables[1]);
}

// ---- calibration tables ----

TEST_F(Compiler, CalibrationTableRoundTrip) {
    const std::string table = path("table.json");
    ToolRun a =
        compile(kModels + "lenet.onnx --precision int8 --calibration " + calibration() +
                " --scale 0.00392157 --write-calibtable " + table + " -o " + path("a.nvdla"));
    ASSERT_EQ(a.exit_code, 0) << a.output;
    std::ifstream in(table);
    nlohmann::json j = nlohmann::json::parse(in);
    for (const char* name : {"data", "conv1", "pool1", "ip1", "relu1", "prob"}) {
        ASSERT_TRUE(j.contains(name)) << name;
        EXPECT_GT(j[name]["scale"].get<double>(), 0) << name;
    }
    // The image input's range is its whole pixel range: 255 * (1/255) = 1.
    EXPECT_NEAR(j["data"]["scale"].get<double>() * 127, 255 * 0.00392157, 1e-5);
    ToolRun b = compile(kModels + "lenet.onnx --precision int8 --calibtable " + table + " -o " +
                        path("b.nvdla"));
    ASSERT_EQ(b.exit_code, 0) << b.output;
    EXPECT_EQ(slurp(path("a.nvdla")), slurp(path("b.nvdla")));
}

TEST_F(Compiler, TableMissingATensorIsAnError) {
    std::ofstream(path("partial.json")) << R"({"data": {"scale": 0.01, "min": 0, "max": 0,
        "offset": 0}})";
    ToolRun r = compile(kModels + "lenet.onnx --precision int8 --calibtable " +
                        path("partial.json") + " -o " + path("x.nvdla"));
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("has no entry for tensor"), std::string::npos) << r.output;
    std::ofstream(path("broken.json")) << "{\"data\": ";
    r = compile(kModels + "lenet.onnx --precision int8 --calibtable " + path("broken.json"));
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("not a JSON object"), std::string::npos) << r.output;
}

// ---- the original compiler's models and calibration tables ----

std::vector<float> read_f32(const fs::path& p) {
    std::vector<std::byte> b = slurp(p.string());
    std::vector<float> v(b.size() / 4);
    std::memcpy(v.data(), b.data(), v.size() * 4);
    return v;
}

TEST_F(Compiler, OriginalCompilersCaffeModelsMatchTheirExpectedOutputs) {
    NVDLA_REQUIRE_SHARED();
    const fs::path root = test::shared_dir() / "vectors" / "orig-compiler";
    for (const char* name : {"lenet", "resnet_small", "deconv_only", "resnet_gpool16"}) {
        SCOPED_TRACE(name);
        const fs::path dir = root / name;
        if (!fs::exists(dir / "deploy.prototxt")) continue;
        for (const char* precision : {"fp16", "int8"}) {
            SCOPED_TRACE(precision);
            const std::string out = path(std::string(name) + precision + ".nvdla");
            ToolRun r =
                compile("--prototxt " + (dir / "deploy.prototxt").string() + " --caffemodel " +
                        (dir / "model.caffemodel").string() + " --cprecision " + precision +
                        " --configtarget nv_full --calibtable " + (dir / "calib.json").string() +
                        " -o " + out);
            ASSERT_EQ(r.exit_code, 0) << r.output;

            // The loadable on the emulator against the independent NumPy forward pass.
            Result<caffe::Model> m = caffe::import_files((dir / "deploy.prototxt").string(),
                                                         (dir / "model.caffemodel").string());
            ASSERT_TRUE(m) << m.message();
            builder::HostTensor x = builder::make_host_tensor(m->inputs[0].dims);
            x.data = read_f32(dir / "input.f32");
            const std::vector<float> expected = read_f32(dir / "expected.f32");
            builder::Calibration cal;
            std::ifstream in(dir / "calib.json");
            nlohmann::json table = nlohmann::json::parse(in);
            for (const auto& [blob, t] : m->blobs)
                if (table.contains(blob))
                    cal.set_range(t, float(table[blob]["scale"].get<double>() * 127));
            builder::BuildOptions options;
            options.precision =
                std::string(precision) == "int8" ? Precision::Int8 : Precision::Fp16;
            options.calibration = &cal;
            Result<builder::CompiledNetwork> built = builder::build(m->network, options);
            ASSERT_TRUE(built) << built.message();
            EXPECT_EQ(slurp(out), built->loadable);  // the tool's file is the library's build
            const std::vector<float> got = run_library(*built, x);
            ASSERT_EQ(got.size(), expected.size());
            double lo = expected[0], hi = expected[0], dot = 0, gg = 0, ee = 0, worst = 0;
            for (size_t i = 0; i < got.size(); ++i) {
                lo = std::min<double>(lo, expected[i]);
                hi = std::max<double>(hi, expected[i]);
                dot += double(got[i]) * expected[i];
                gg += double(got[i]) * got[i];
                ee += double(expected[i]) * expected[i];
                worst = std::max(worst, std::fabs(double(got[i]) - expected[i]));
            }
            if (std::string(precision) == "fp16") {
                EXPECT_LE(worst, 1e-2 * (hi - lo)) << "range " << hi - lo;
            } else {
                EXPECT_GE(dot / std::sqrt(gg * ee), 0.99);
                EXPECT_EQ(std::max_element(got.begin(), got.end()) - got.begin(),
                          std::max_element(expected.begin(), expected.end()) - expected.begin());
            }
        }
    }
}

// ---- flags ----

TEST_F(Compiler, JsonGraphLabelsAndOutputDirectory) {
    std::ofstream(path("classes.txt")) << "zero\none\ntwo\nthree\nfour\nfive\nsix\nseven\n"
                                          "eight\nnine\n";
    fs::create_directories(path("out"));
    ToolRun r = compile(kModels + "lenet.onnx --json --graph " + path("net.dot") + " --labels " +
                        path("classes.txt") + " -o " + path("out"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    nlohmann::json j = nlohmann::json::parse(r.output);
    EXPECT_EQ(j["config"], "nv_full");
    EXPECT_EQ(j["precision"], "fp16");
    EXPECT_TRUE(j["model_macs"].is_number_unsigned());
    EXPECT_TRUE(j["hardware_macs"].is_number_unsigned());
    EXPECT_FALSE(j["operations"].empty());
    EXPECT_EQ(j["outputs"][0]["name"], "prob");
    EXPECT_TRUE(fs::exists(path("out/lenet.nvdla")));
    std::ifstream labels(path("out/lenet.labels"));
    std::string first;
    std::getline(labels, first);
    EXPECT_EQ(first, "zero");
    std::ifstream dot(path("net.dot"));
    const std::string graph{std::istreambuf_iterator<char>(dot), {}};
    EXPECT_NE(graph.find("digraph"), std::string::npos);
    EXPECT_NE(graph.find("conv1"), std::string::npos);
    EXPECT_NE(graph.find("CPU task"), std::string::npos);  // the softmax
}

TEST_F(Compiler, BuildFlagsReachTheBuilder) {
    // Each flag changes the loadable the way the builder option does.
    Result<nvdla::onnx::Model> m = nvdla::onnx::import_file(kModels + "lenet.onnx");
    ASSERT_TRUE(m);
    struct Case {
        std::string flags;
        builder::BuildOptions options;
    };
    builder::BuildOptions no_winograd, no_compression, no_fallback;
    no_winograd.winograd = false;
    no_compression.compress_weights = false;
    no_fallback.cpu_fallback = false;
    const std::vector<Case> cases = {
        {"--no-winograd", no_winograd},
        {"--no-compression", no_compression},
        {"--cpu-fallback off --batch 1", no_fallback},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.flags);
        const std::string out = path("flags.nvdla");
        ToolRun r = compile(kModels + "lenet.onnx " + c.flags + " -o " + out);
        ASSERT_EQ(r.exit_code, 0) << r.output;
        Result<builder::CompiledNetwork> built = builder::build(m->network, c.options);
        ASSERT_TRUE(built) << built.message();
        EXPECT_EQ(slurp(out), built->loadable);
    }
    // Per-tensor quantization differs from per-channel; nv_small int8 (8-byte atoms).
    ToolRun a = compile(kModels + "lenet.onnx --precision int8 --calibration " + calibration() +
                        " --quantization per-tensor --config nv_small -o " + path("pt.nvdla"));
    ASSERT_EQ(a.exit_code, 0) << a.output;
    ToolRun b = compile(kModels + "lenet.onnx --cprecision int8 --calibration " + calibration() +
                        " --configtarget nv_small -o " + path("pc.nvdla"));
    ASSERT_EQ(b.exit_code, 0) << b.output;
    EXPECT_NE(slurp(path("pt.nvdla")), slurp(path("pc.nvdla")));
    EXPECT_NE(b.output.find("feature (8-byte atoms)"), std::string::npos) << b.output;
}

TEST_F(Compiler, ImageInputAndVerify) {
    ToolRun r = compile(kModels + "lenet.onnx --precision int8 --calibration " + calibration() +
                        " --scale 0.00392157 --input-format image --pixel-format R8 --verify 3 "
                        "-o " +
                        path("img.nvdla"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("image R8"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("verify:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("top-1 agreement"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("/3"), std::string::npos) << r.output;
}

// ---- errors: one sentence, non-zero exit, no output file ----

TEST_F(Compiler, ErrorsAreOneSentenceAndLeaveNoFile) {
    const std::string out = path("never.nvdla");
    std::ofstream(path("garbage.onnx")) << "this is not protobuf \x01\x02\x03";
    std::ofstream(path("bad.prototxt")) << "layer { name: \"x\" type: ";
    std::ofstream(path("crop.prototxt"))
        << "input: \"data\" input_dim: 1 input_dim: 1 input_dim: 8 input_dim: 8\n"
           "layer { name: \"crop1\" type: \"Crop\" bottom: \"data\" top: \"c\" }\n";
    fs::create_directories(path("small"));
    write_pgm(path("small/a.pgm"), 1, 10, 10);
    fs::create_directories(path("colour"));
    {
        std::ofstream f(path("colour/a.ppm"), std::ios::binary);
        f << "P6\n28 28\n255\n" << std::string(28 * 28 * 3, '\x40');
    }
    const std::string lenet = kModels + "lenet.onnx";
    struct Case {
        std::string args, says;
    };
    const std::vector<Case> cases = {
        {"", "no model"},
        {path("missing.onnx"), "missing.onnx"},
        {path("garbage.onnx"), "garbage.onnx"},
        {"--prototxt " + path("bad.prototxt"), "bad.prototxt"},
        {"--prototxt " + path("crop.prototxt"), "'crop1' (Crop)"},
        {"--prototxt " + kModels + "lenet.prototxt", "'conv1'"},  // no weights
        {lenet + " --config nv_tiny", "nv_tiny"},
        {lenet + " --config nv_small --precision fp16", "nv_small has no fp16"},
        {lenet + " --precision int8", "--calibration DIR or --calibtable FILE"},
        {lenet + " --precision int8 --calibration " + path("small"), "a.pgm"},
        {lenet + " --precision int8 --calibration " + path("colour"), "3 channels"},
        {lenet + " --precision int8 --calibration " + path("nowhere"), "not a directory"},
        {lenet + " --pixel-format R8", "--input-format image"},
        {lenet + " --input-format image --pixel-format Q99", "Q99"},
        {lenet + " --verify 2", "--verify needs samples"},
        {lenet + " --labels " + path("nolabels.txt"), "nolabels.txt"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.args);
        ToolRun r = compile(c.args + " -o " + out);
        EXPECT_NE(r.exit_code, 0) << r.output;
        EXPECT_NE(r.output.find(c.says), std::string::npos) << r.output;
        EXPECT_FALSE(fs::exists(out));
        // One sentence on one line (CLI11's usage errors aside).
        if (r.output.rfind("nvdla_compiler: ", 0) == 0) {
            EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
        }
    }
    // An output that cannot be written: the sentence names it, nothing is left behind.
    ToolRun r = compile(lenet + " -o " + path("no/such/dir/x.nvdla"));
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.output.find("cannot write " + path("no/such/dir/x.nvdla")), std::string::npos)
        << r.output;
    // Nothing half-written next to a failed output either.
    for (const fs::directory_entry& e : fs::directory_iterator(dir_))
        EXPECT_EQ(e.path().filename().string().find(".XXXX"), std::string::npos);
}

TEST_F(Compiler, UnsupportedLayerWithoutFallbackNamesTheLayer) {
    // nv_small has no SDP lookup table: a sigmoid cannot run on its hardware.
    std::ofstream(path("sig.prototxt"))
        << "input: \"data\" input_dim: 1 input_dim: 8 input_dim: 4 input_dim: 4\n"
           "layer { name: \"squash\" type: \"Sigmoid\" bottom: \"data\" top: \"s\" }\n";
    std::ofstream(path("sig.json")) << R"({"data": {"scale": 0.01}, "squash": {"scale": 0.008}})";
    ToolRun r = compile("--prototxt " + path("sig.prototxt") +
                        " --config nv_small --precision int8 --cpu-fallback off --calibtable " +
                        path("sig.json") + " -o " + path("sig.nvdla"));
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("squash"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(path("sig.nvdla")));
}

}  // namespace
