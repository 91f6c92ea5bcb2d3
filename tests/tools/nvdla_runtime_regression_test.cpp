// nvdla_runtime --regression on a directory laid out as ../shared's sw-regression, holding one
// public loadable: a matching golden passes, a wrong one and a missing one fail.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_support.hpp"

#include "tool_run.hpp"

namespace {

using nvdla::test::run_tool;
using nvdla::test::ToolRun;

namespace fs = std::filesystem;

ToolRun run_regression(const fs::path& dir) {
    return run_tool("nvdla_runtime", "--backend emu --regression " + dir.string());
}

class RuntimeRegression : public ::testing::Test {
  protected:
    void SetUp() override {
        NVDLA_REQUIRE_SHARED();
        source_ = nvdla::test::shared_dir() / "vectors/sw-regression";
        root_ = fs::temp_directory_path() /
                ("nvdla_regression_test_" + std::to_string(getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(root_ / "flatbufs/PDP");
        fs::copy_file(source_ / "flatbufs/PDP/PDP_L0_0_small_fbuf",
                      root_ / "flatbufs/PDP/PDP_L0_0_small_fbuf");
    }
    void TearDown() override {
        if (!root_.empty()) fs::remove_all(root_);
    }
    // The golden directory of PDP_L0_0_small with `digest` as its lead.md5.
    void golden(const std::string& digest) {
        const fs::path dir = root_ / "golden/PDP_L0_0_small_fbdf76";
        fs::create_directories(dir);
        std::ofstream(dir / "lead.md5") << digest << "\n";
    }
    fs::path source_, root_;
};

TEST_F(RuntimeRegression, MatchingGoldenPasses) {
    std::ifstream lead(source_ / "golden/PDP_L0_0_small_fbdf76/lead.md5");
    std::string digest;
    ASSERT_TRUE(lead >> digest);
    golden(digest);
    const ToolRun r = run_regression(root_);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("match"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("1 of 1 outputs match"), std::string::npos) << r.output;
}

TEST_F(RuntimeRegression, WrongGoldenFails) {
    golden("0123456789abcdef0123456789abcdef");
    const ToolRun r = run_regression(root_);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("MISMATCH"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("0 of 1 outputs match"), std::string::npos) << r.output;
}

// A loadable that nothing checks is not a pass.
TEST_F(RuntimeRegression, MissingGoldenFails) {
    const ToolRun r = run_regression(root_);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("NO GOLDEN"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("1 failed"), std::string::npos) << r.output;
}

}  // namespace
