// Loadables written by the original nvdla_compiler (../shared/vectors/orig-compiler, README
// there): each one loads, runs on the emulated configuration it was compiled for and matches
// the float output its Caffe network computes (an independent NumPy forward pass), or, when the
// compiler wrote something the hardware cannot run, is refused with one sentence.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "nvdla/runtime.hpp"
#include "orig_compiler_corpus.hpp"
#include "test_support.hpp"

namespace nvdla {
namespace {

using namespace orig_compiler;

fs::path corpus_dir() {
    return test::shared_dir() / "vectors" / "orig-compiler";
}

std::vector<Variant> corpus() {
    return orig_compiler::corpus(test::shared_dir().empty() ? fs::path() : corpus_dir());
}

std::unique_ptr<Runtime> emu_runtime(const std::string& config) {
    RuntimeOptions o;
    o.backend = BackendChoice::Emu;
    o.emu_config = config;
    return std::move(Runtime::open(o)).value();
}

// Runs a loadable on the input: the output, or the runtime's refusal.
Result<std::vector<float>> run(const Variant& v, const std::vector<float>& input) {
    auto rt = emu_runtime(v.config);
    Result<std::shared_ptr<Network>> net = rt->load_file(v.file(corpus_dir()).string());
    if (!net) return net.status();
    Result<std::unique_ptr<Context>> ctx = (*net)->create_context();
    if (!ctx) return ctx.status();
    pack_input(v, (*net)->inputs()[0], input, (*ctx)->input(0));
    if (Status s = (*ctx)->run(); !s) return s;
    return unpack_output(v, (*net)->outputs()[0], (*ctx)->output(0));
}

class OrigCompiler : public testing::TestWithParam<Variant> {};

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
    const Judgement j = judge(corpus_dir(), v, *y, expected);
    std::cout << v.model << "/" << v.name << ": " << j.measured << "\n";
    EXPECT_TRUE(j.pass) << j.measured;
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
    auto net = std::move(rt->load_file(v->file(corpus_dir()).string())).value();
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
