// The nvdla_surface tool, run as a user would: exit codes, messages, files.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tool_run.hpp"

namespace {

using nvdla::test::run_tool;
using nvdla::test::ToolRun;

namespace fs = std::filesystem;

ToolRun run(const std::string& args) {
    return run_tool("nvdla_surface", args);
}

class NvdlaSurface : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("nvdla_surface_test_" + std::to_string(getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const char* name) const { return (dir_ / name).string(); }
    fs::path dir_;
};

std::vector<char> slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(NvdlaSurface, SizeReportsTheLayout) {
    ToolRun r = run("size --format feature --config nv_small --dims 1x20x4x4 --json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("\"size_bytes\": 384"), std::string::npos)
        << r.output;  // 3 surfaces x 4 x 4 x 8
    EXPECT_NE(r.output.find("\"line_stride\": 32"), std::string::npos) << r.output;
}

TEST_F(NvdlaSurface, PackThenUnpackGivesTheFileBack) {
    std::vector<float> host(2 * 5 * 7 * 3);
    for (size_t i = 0; i < host.size(); ++i) host[i] = float(i % 97) - 40.0f;
    {
        std::ofstream out(path("in.raw"), std::ios::binary);
        out.write(reinterpret_cast<const char*>(host.data()), std::streamsize(host.size() * 4));
    }
    const std::string common =
        "--format feature --config nv_full --precision fp16 --dims 2x5x7x3 "
        "--host-type float32 --layout nhwc ";
    ToolRun r = run("pack " + common + path("in.raw") + " " + path("cube.bin"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(fs::file_size(path("cube.bin")), 2u * 7 * 3 * 32);  // 1 surface, packed batches
    r = run("unpack " + common + path("cube.bin") + " " + path("out.raw"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(slurp(path("in.raw")), slurp(path("out.raw")));
}

TEST_F(NvdlaSurface, PixelAndWeightFilesRoundTrip) {
    std::vector<uint8_t> rgba(4 * 3 * 5);  // HWC, 5 wide, 3 high
    for (size_t i = 0; i < rgba.size(); ++i) rgba[i] = uint8_t(i * 13);
    {
        std::ofstream out(path("rgba.raw"), std::ios::binary);
        out.write(reinterpret_cast<const char*>(rgba.data()), std::streamsize(rgba.size()));
    }
    const std::string px =
        "--format pixel --pixel-format T_A8B8G8R8 --dims 4x3x5 --host-type uint8 "
        "--layout nhwc --x-offset 2 ";
    ToolRun r = run("pack " + px + path("rgba.raw") + " " + path("img.bin"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = run("unpack " + px + path("img.bin") + " " + path("rgba2.raw"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(slurp(path("rgba.raw")), slurp(path("rgba2.raw")));

    std::vector<int8_t> kernels(16 * 3 * 3 * 3);
    for (size_t i = 0; i < kernels.size(); ++i) kernels[i] = int8_t(int(i % 11) - 5);
    {
        std::ofstream out(path("k.raw"), std::ios::binary);
        out.write(reinterpret_cast<const char*>(kernels.data()), std::streamsize(kernels.size()));
    }
    const std::string shape = "--format weights --kind direct --config nv_small --dims 16x3x3x3 ";
    const std::string wt = shape + "--host-type int8 ";
    r = run("size " + shape + "--json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("\"size_bytes\": 512"), std::string::npos) << r.output;  // 432 -> 512
    r = run("pack " + wt + path("k.raw") + " " + path("w.bin"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = run("unpack " + wt + path("w.bin") + " " + path("k2.raw"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(slurp(path("k.raw")), slurp(path("k2.raw")));
}

TEST_F(NvdlaSurface, BadInputIsOneSentenceAndExitCodeOne) {
    ToolRun r = run("size --format feature --config nv_small --precision fp16 --dims 8x2x2");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.output,
              "nvdla_surface: feature cube: nv_small does not support fp16 (it has: int8)\n");
    r = run("size --format feature --config nv_tiny --dims 8x2x2");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.output.find("unknown hardware configuration 'nv_tiny'"), std::string::npos)
        << r.output;
    { std::ofstream(path("short.raw")) << "abc"; }
    r = run("pack --format feature --dims 1x2x2 --host-type int8 " + path("short.raw") + " " +
            path("o"));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.output.find("has 3 bytes, a 1x2x2 int8 tensor has 4"), std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(path("o")));
    r = run("pack --format feature --dims 1x2x2 " + path("missing.raw") + " " + path("o"));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.output.find("cannot open"), std::string::npos) << r.output;
}

TEST_F(NvdlaSurface, UsageErrorsExitWithTwo) {
    EXPECT_EQ(run("").exit_code, 2);
    EXPECT_EQ(run("size").exit_code, 2);  // --dims is required
    EXPECT_EQ(run("frobnicate").exit_code, 2);
    ToolRun help = run("--help");
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.output.find("pack"), std::string::npos);
}

TEST_F(NvdlaSurface, DemoRunsWithoutTheSharedDirectory) {
    ToolRun r = run("demo --shared " + path("nowhere"));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("using a generated 28x28 ramp"), std::string::npos);
    EXPECT_NE(r.output.find("0 check(s) failed"), std::string::npos);
}

}  // namespace
