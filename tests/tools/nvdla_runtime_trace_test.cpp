// nvdla_runtime --trace and --threads on a network the test builds: the trace is Chrome
// trace-event JSON whose spans are the run's tasks and operations, and the output does not
// depend on the thread count.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nvdla/builder.hpp"

#include "tool_run.hpp"

namespace {

using nvdla::test::run_tool;
using nvdla::test::ToolRun;

namespace fs = std::filesystem;

ToolRun run(const std::string& args) {
    return run_tool("nvdla_runtime", args);
}

std::string read(const fs::path& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

class NvdlaRuntimeTrace : public ::testing::Test {
  protected:
    void SetUp() override {
        root_ =
            fs::temp_directory_path() / ("nvdla_runtime_trace_test_" + std::to_string(getpid()));
        fs::create_directories(root_);
        // Two convolutions (fp16, nv_full), weights 1/16 .. so every output is non-zero.
        using namespace nvdla::builder;
        Network net("two_convs");
        Tensor x = net.input("data", {1, 8, 16, 16});
        std::vector<float> w1(16 * 8 * 9), w2(8 * 16 * 9);
        for (size_t i = 0; i < w1.size(); ++i) w1[i] = float(i % 7) / 16.0f - 0.2f;
        for (size_t i = 0; i < w2.size(); ++i) w2[i] = float(i % 5) / 16.0f - 0.1f;
        x = net.convolution(x,
                            {.out_channels = 16,
                             .kernel_h = 3,
                             .kernel_w = 3,
                             .pad_top = 1,
                             .pad_left = 1,
                             .pad_bottom = 1,
                             .pad_right = 1},
                            w1);
        x = net.relu(x);
        x = net.convolution(x, {.out_channels = 8, .kernel_h = 3, .kernel_w = 3}, w2);
        net.output(x, "out");
        BuildOptions options;
        options.winograd = false;
        auto built = build(net, options);
        ASSERT_TRUE(built) << built.message();
        loadable_ = root_ / "two_convs.nvdla";
        std::ofstream(loadable_, std::ios::binary)
            .write(reinterpret_cast<const char*>(built->loadable.data()),
                   static_cast<std::streamsize>(built->loadable.size()));
    }
    void TearDown() override { fs::remove_all(root_); }

    fs::path root_, loadable_;
};

TEST_F(NvdlaRuntimeTrace, WritesTheRunAsChromeTraceEvents) {
    const fs::path trace = root_ / "run.json";
    const ToolRun r =
        run("--backend emu --config nv_full --loadable " + loadable_.string() + " --output " +
            (root_ / "out.dimg").string() + " --trace " + trace.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const nlohmann::json j = nlohmann::json::parse(read(trace));
    ASSERT_TRUE(j.contains("traceEvents"));
    std::vector<std::string> tasks, operations;
    double task_end = 0, op_end = 0;
    for (const auto& e : j["traceEvents"]) {
        if (e["ph"] != "X") continue;
        const double ts = e["ts"], dur = e["dur"];
        EXPECT_GE(dur, 0.0);
        if (e["tid"] == 1) {
            EXPECT_DOUBLE_EQ(ts, task_end);  // tasks one after another
            task_end = ts + dur;
            tasks.push_back(e["name"]);
        } else {
            EXPECT_GE(ts, op_end);
            op_end = ts + dur;
            operations.push_back(e["name"]);
        }
    }
    EXPECT_EQ(tasks.size(), 1u);
    ASSERT_EQ(operations.size(), 2u);  // the two convolutions
    EXPECT_EQ(operations[0], "CONV");
    EXPECT_LE(op_end, task_end + 1e-3);
}

TEST_F(NvdlaRuntimeTrace, OutputIsTheSameForAnyThreadCount) {
    std::string reference;
    for (const char* threads : {"1", "2", "3"}) {
        const fs::path out = root_ / (std::string("out") + threads + ".dimg");
        const ToolRun r = run("--backend emu --config nv_full --loadable " + loadable_.string() +
                              " --output " + out.string() + " --threads " + threads);
        ASSERT_EQ(r.exit_code, 0) << r.output;
        if (reference.empty())
            reference = read(out);
        else
            EXPECT_EQ(read(out), reference) << threads << " threads";
    }
    EXPECT_FALSE(reference.empty());
    EXPECT_NE(run("--loadable " + loadable_.string() + " --threads 0").exit_code, 0);
}

}  // namespace
