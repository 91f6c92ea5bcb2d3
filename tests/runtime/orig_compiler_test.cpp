// Loadables written by the original nvdla_compiler (../shared/vectors/orig-compiler, README
// there): each one loads, runs on the emulated configuration it was compiled for and matches
// the float output its Caffe network computes (an independent NumPy forward pass), or, when the
// compiler wrote something the hardware cannot run, is refused with one sentence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nvdla/precision/fp16.hpp"
#include "nvdla/runtime.hpp"
#include "test_support.hpp"

namespace nvdla {
namespace {

namespace fs = std::filesystem;

fs::path corpus_dir() {
    return test::shared_dir() / "vectors" / "orig-compiler";
}

std::vector<float> read_f32(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    return v;
}

// One loadable of the corpus with what meta.json says about it.
struct Variant {
    std::string model, name, config, status;
    bool int8 = false;
    float input_scale = 1, output_scale = 1;
    Dims4 input, output;  // the Caffe network's shapes
};

void PrintTo(const Variant& v, std::ostream* os) {
    *os << v.model << "/" << v.name;
}

// index.json lists every loadable (status, int8 scales); meta.json has each model's shapes.
std::vector<Variant> corpus() {
    std::vector<Variant> out;
    if (test::shared_dir().empty() || !fs::exists(corpus_dir() / "index.json")) return out;
    std::ifstream index_file(corpus_dir() / "index.json");
    const nlohmann::json index = nlohmann::json::parse(index_file);
    auto dims = [](const nlohmann::json& shape) {
        return Dims4{shape[0].get<uint32_t>(), shape[1].get<uint32_t>(), shape[2].get<uint32_t>(),
                     shape[3].get<uint32_t>()};
    };
    for (const auto& [model, loadables] : index.items()) {
        std::ifstream meta_file(corpus_dir() / model / "meta.json");
        const nlohmann::json meta = nlohmann::json::parse(meta_file);
        for (const auto& l : loadables) {
            Variant v;
            v.model = model;
            v.name = l["variant"].get<std::string>();
            v.status = l["status"].get<std::string>();
            v.config = l["config"].get<std::string>();
            v.int8 = l["precision"].get<std::string>() == "int8";
            if (v.int8) {
                v.input_scale = l["int8_input_scale"].get<float>();
                v.output_scale = l["int8_output_scale"].get<float>();
            }
            v.input = dims(meta["input"]["shape"]);
            v.output = dims(meta["output"]["shape"]);
            out.push_back(std::move(v));
        }
    }
    return out;
}

std::unique_ptr<Runtime> emu_runtime(const std::string& config) {
    RuntimeOptions o;
    o.backend = BackendChoice::Emu;
    o.emu_config = config;
    return std::move(Runtime::open(o)).value();
}

// Where element (c, h, w) of a tensor lives in its buffer: image surfaces are pitch-linear
// pixels of all channels; feature cubes are atoms of 32 bytes (8 for FEATURE_X8).
uint64_t element_offset(const TensorInfo& t, uint32_t c, uint32_t h, uint32_t w) {
    const uint32_t bpe = t.data_type == TensorDataType::Int8 ? 1 : 2;
    if (t.category == TensorCategory::Image)
        return uint64_t(h) * t.line_stride() + uint64_t(w) * t.dims.c * bpe + c * bpe;
    const uint32_t atom = t.pixel_format == kPixelFormatFeatureX8 ? 8 : 32;
    const uint32_t lanes = atom / bpe;
    return uint64_t(c / lanes) * t.surface_stride() + uint64_t(h) * t.line_stride() +
           uint64_t(w) * atom + (c % lanes) * bpe;
}

// Packs the float NCHW input as the tensor wants it; image channels beyond the network's are 0.
void pack_input(const Variant& v, const TensorInfo& t, const std::vector<float>& x,
                std::span<std::byte> dst) {
    std::fill(dst.begin(), dst.end(), std::byte{0});
    for (uint32_t c = 0; c < v.input.c; ++c)
        for (uint32_t h = 0; h < v.input.h; ++h)
            for (uint32_t w = 0; w < v.input.w; ++w) {
                const float value = x[(uint64_t(c) * v.input.h + h) * v.input.w + w];
                std::byte* p = dst.data() + element_offset(t, c, h, w);
                if (v.int8) {
                    const float q = std::round(value / v.input_scale);
                    p[0] =
                        static_cast<std::byte>(static_cast<int8_t>(std::clamp(q, -128.0f, 127.0f)));
                } else {
                    const uint16_t half = fp16::from_float(value);
                    std::memcpy(p, &half, 2);
                }
            }
}

std::vector<float> unpack_output(const Variant& v, const TensorInfo& t,
                                 std::span<const std::byte> src) {
    std::vector<float> y(v.output.elements());
    for (uint32_t c = 0; c < v.output.c; ++c)
        for (uint32_t h = 0; h < v.output.h; ++h)
            for (uint32_t w = 0; w < v.output.w; ++w) {
                const std::byte* p = src.data() + element_offset(t, c, h, w);
                float value;
                if (v.int8) {
                    value = static_cast<float>(static_cast<int8_t>(p[0])) * v.output_scale;
                } else {
                    uint16_t half;
                    std::memcpy(&half, p, 2);
                    value = fp16::to_float(half);
                }
                y[(uint64_t(c) * v.output.h + h) * v.output.w + w] = value;
            }
    return y;
}

struct Agreement {
    double max_error = 0, range = 0, cosine = 0;
    bool same_top = false;
};

Agreement agreement(const std::vector<float>& y, const std::vector<float>& expected) {
    Agreement a;
    const auto [lo, hi] = std::minmax_element(expected.begin(), expected.end());
    a.range = *hi - *lo;
    double dot = 0, yy = 0, ee = 0;
    for (size_t i = 0; i < y.size(); ++i) {
        a.max_error = std::max(a.max_error, std::abs(double(y[i]) - expected[i]));
        dot += double(y[i]) * expected[i];
        yy += double(y[i]) * y[i];
        ee += double(expected[i]) * expected[i];
    }
    a.cosine = yy > 0 && ee > 0 ? dot / std::sqrt(yy * ee) : 0;
    a.same_top = std::max_element(y.begin(), y.end()) - y.begin() == hi - expected.begin();
    return a;
}

// Runs a loadable on the input: the output, or the runtime's refusal.
Result<std::vector<float>> run(const Variant& v, const std::vector<float>& input) {
    auto rt = emu_runtime(v.config);
    Result<std::shared_ptr<Network>> net =
        rt->load_file((corpus_dir() / v.model / (v.name + ".nvdla")).string());
    if (!net) return net.status();
    Result<std::unique_ptr<Context>> ctx = (*net)->create_context();
    if (!ctx) return ctx.status();
    pack_input(v, (*net)->inputs()[0], input, (*ctx)->input(0));
    if (Status s = (*ctx)->run(); !s) return s;
    return unpack_output(v, (*net)->outputs()[0], (*ctx)->output(0));
}

class OrigCompiler : public testing::TestWithParam<Variant> {};

// Where the original compiler, not the hardware, keeps a loadable from the float output
// (docs/runtime.md, "Loadables from the original compiler", has the evidence).
struct CompilerDefect {
    const char* model;
    const char* variant;
    const char* what;
};
const CompilerDefect kCompilerDefects[] = {
    {"lenet", "fp16_nv_full", "post-extended image weights hold kernel rows 0,1 / 3,4 / 4"},
    {"lenet", "int8_nv_full", "post-extended image weights hold kernel rows 0,1 / 3,4 / 4"},
    {"lenet", "int8_nv_large", "post-extended image weights hold kernel rows 0,1 / 3,4 / 4"},
    {"resnet_small", "fp16_nv_full",
     "BatchNorm/Scale folded into the pre-extended image weights with the unextended kernel size"},
    {"resnet_small", "int8_nv_small", "first SDP rescales by 1 >> 22"},
    {"resnet_small", "int8_nv_large", "first SDP rescales by 1 >> 22"},
    {"resnet_small", "int8_nv_full", "first SDP rescales by 1 >> 22"},
};

// int8: the compiler quantizes a pooling's output with the pooling's own calibrated scale, but
// PDP cannot rescale, so the consumer reads the producer's scale: the logits shrink by the
// product of these ratios (calib.json).
const std::map<std::string, std::vector<std::pair<std::string, std::string>>> kPoolScales = {
    {"lenet", {{"pool1", "conv1"}, {"pool2", "conv2"}}},
    {"resnet_small", {{"pool5", "res3a_relu"}}},
};

const CompilerDefect* defect_of(const Variant& v) {
    for (const CompilerDefect& d : kCompilerDefects)
        if (v.model == d.model && v.name == d.variant) return &d;
    return nullptr;
}

// The float output as the compiler's int8 quantization makes it: softmax(f * logits), with
// the logits recovered from the expected probabilities (softmax ignores the constant).
std::vector<float> pool_quantized(const std::string& model, const std::vector<float>& expected) {
    std::ifstream in(corpus_dir() / model / "calib.json");
    const nlohmann::json calib = nlohmann::json::parse(in);
    double f = 1;
    for (const auto& [pool, producer] : kPoolScales.at(model))
        f *= calib[pool]["scale"].get<double>() / calib[producer]["scale"].get<double>();
    std::vector<double> logits;
    for (float p : expected) logits.push_back(f * std::log(double(p)));
    const double top = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (double& l : logits) sum += (l = std::exp(l - top));
    std::vector<float> out;
    for (double l : logits) out.push_back(static_cast<float>(l / sum));
    return out;
}

TEST_P(OrigCompiler, MatchesTheCaffeOutputOrIsRefused) {
    NVDLA_REQUIRE_SHARED();
    const Variant& v = GetParam();
    const std::vector<float> input = read_f32(corpus_dir() / v.model / "input.f32");
    const std::vector<float> expected = read_f32(corpus_dir() / v.model / "expected.f32");
    ASSERT_EQ(input.size(), v.input.elements());
    ASSERT_EQ(expected.size(), v.output.elements());
    Result<std::vector<float>> y = run(v, input);
    if (v.status == "compiled_invalid") {
        ASSERT_FALSE(y.ok()) << "the compiler wrote an operation the hardware cannot run";
        const std::string m = y.message();
        std::cout << v.model << "/" << v.name << ": refused: " << m << "\n";
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
        EXPECT_TRUE(m.find("PDP") != std::string::npos || m.find("RUBIK") != std::string::npos)
            << m;
        return;
    }
    ASSERT_TRUE(y.ok()) << y.message();
    const Agreement a = agreement(*y, expected);
    std::cout << v.model << "/" << v.name << ": max error " << a.max_error << " of range "
              << a.range << ", cosine " << a.cosine << ", same top " << a.same_top << "\n";
    if (const CompilerDefect* d = defect_of(v)) {
        // It runs and the softmax gives probabilities; the numbers are the compiler's.
        std::cout << "  compiler defect: " << d->what << "\n";
        double sum = 0;
        for (float p : *y) {
            EXPECT_TRUE(std::isfinite(p) && p >= 0) << p;
            sum += p;
        }
        EXPECT_NEAR(sum, 1.0, 0.05);
        return;
    }
    if (!v.int8) {
        EXPECT_LE(a.max_error, 1e-2 * a.range);
        return;
    }
    EXPECT_TRUE(a.same_top);
    if (kPoolScales.contains(v.model)) {
        const Agreement q = agreement(*y, pool_quantized(v.model, expected));
        std::cout << "  against the compiler's pooling scales: cosine " << q.cosine << "\n";
        EXPECT_GE(q.cosine, 0.99);
    } else {
        EXPECT_GE(a.cosine, 0.99);
    }
}

TEST(OrigCompilerCorpus, IsThere) {
    NVDLA_REQUIRE_SHARED();
    EXPECT_GE(corpus().size(), 32u) << corpus_dir() << " lacks its loadables";
}

// The compiler's relocations name the input's line and surface strides (byte offsets into
// surface descriptors, DLA and EMU alike): an input rebound with twice the strides, in a
// buffer of its own, gives the same output.
void expect_rebinding_changes_nothing(const std::string& model, const std::string& name) {
    const std::vector<Variant> all = corpus();
    const auto v = std::find_if(all.begin(), all.end(), [&](const Variant& x) {
        return x.model == model && x.name == name;
    });
    ASSERT_NE(v, all.end());
    const std::vector<float> input = read_f32(corpus_dir() / model / "input.f32");
    Result<std::vector<float>> reference = run(*v, input);
    ASSERT_TRUE(reference.ok()) << reference.message();

    auto rt = emu_runtime(v->config);
    auto net =
        std::move(rt->load_file((corpus_dir() / model / (name + ".nvdla")).string())).value();
    auto ctx = std::move(net->create_context()).value();
    TensorInfo wide = net->inputs()[0];
    wide.strides[1] *= 2;
    if (wide.category != TensorCategory::Image) wide.strides[2] *= 2;
    ASSERT_TRUE(ctx->set_input_strides(0, wide.line_stride(), wide.surface_stride()).ok());
    const uint64_t bytes = wide.category == TensorCategory::Image
                               ? uint64_t(wide.dims.h) * wide.line_stride()
                               : uint64_t(wide.dims.c + 31) / 32 * wide.surface_stride() + 4096;
    DeviceBuffer buffer = std::move(rt->allocate(bytes)).value();
    ASSERT_TRUE(ctx->bind_input(0, buffer).ok());
    pack_input(*v, wide, input, {buffer.data(), buffer.size()});
    const Status ran = ctx->run();
    ASSERT_TRUE(ran.ok()) << ran.message();
    EXPECT_EQ(unpack_output(*v, net->outputs()[0], ctx->output(0)), *reference);
}

TEST(OrigCompilerRelocations, ImageInputRebound) {
    NVDLA_REQUIRE_SHARED();
    expect_rebinding_changes_nothing("lenet", "fp16_nv_full");
}

TEST(OrigCompilerRelocations, FeatureInputRebound) {
    NVDLA_REQUIRE_SHARED();
    expect_rebinding_changes_nothing("resnet_small", "int8_nv_small_nchw");
}

std::string variant_name(const testing::TestParamInfo<Variant>& info) {
    return info.param.model + "_" + info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, OrigCompiler, testing::ValuesIn(corpus()), variant_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OrigCompiler);

}  // namespace
}  // namespace nvdla
