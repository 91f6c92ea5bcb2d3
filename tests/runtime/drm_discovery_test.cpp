// Finding the nvdla render node: on a fake /dev/dri tree (regular files, so drmGetVersion
// fails on each, or an injected driver lookup), and on this machine, which normally has none.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "runtime/backend_drm.hpp"

namespace nvdla::runtime {
namespace {

namespace fs = std::filesystem;

class FakeDevTree : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("nvdla_drm_test_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string touch(const std::string& name) {
        const fs::path p = dir_ / name;
        std::ofstream(p) << "not a DRM device";
        return p.string();
    }
    fs::path dir_;
};

TEST_F(FakeDevTree, PicksTheLowestNumberedNvdlaNode) {
    for (const char* n : {"card0", "card1", "renderD130", "renderD129", "renderD128", "renderD1000",
                          "renderDx", "renderD", "renderD12a", "controlD64"})
        touch(n);
    const std::map<std::string, std::string> drivers = {{"renderD128", "i915"},
                                                        {"renderD129", "nvdla"},
                                                        {"renderD130", "nvdla"},
                                                        {"renderD1000", "nvdla"}};
    std::vector<std::string> asked;
    auto lookup = [&](const std::string& path) -> Result<std::string> {
        const std::string name = fs::path(path).filename().string();
        asked.push_back(name);
        auto it = drivers.find(name);
        if (it == drivers.end()) return error(path, ": unexpected lookup");
        return it->second;
    };
    EXPECT_EQ(drm::find_nvdla_render_node_in(dir_.string(), lookup),
              (dir_ / "renderD129").string());
    // Only render nodes are asked, in numeric order, until one is nvdla.
    EXPECT_EQ(asked, (std::vector<std::string>{"renderD128", "renderD129"}));
}

TEST_F(FakeDevTree, NumericNotLexicalOrder) {
    touch("renderD1000");
    touch("renderD999");
    auto lookup = [](const std::string&) -> Result<std::string> { return std::string("nvdla"); };
    EXPECT_EQ(drm::find_nvdla_render_node_in(dir_.string(), lookup),
              (dir_ / "renderD999").string());
}

TEST_F(FakeDevTree, NodesWhoseDriverIsUnknownAreSkipped) {
    touch("renderD128");
    touch("renderD129");
    auto lookup = [](const std::string& path) -> Result<std::string> {
        if (path.ends_with("renderD128")) return error(path, ": cannot open: EACCES");
        return std::string("nvdla");
    };
    EXPECT_EQ(drm::find_nvdla_render_node_in(dir_.string(), lookup),
              (dir_ / "renderD129").string());
}

TEST_F(FakeDevTree, AccelNodesWhenThereIsNoRenderNode) {
    fs::create_directories(dir_ / "dri");
    fs::create_directories(dir_ / "accel");
    touch("dri/renderD128");
    touch("accel/accel1");
    touch("accel/accel0");
    touch("accel/accelx");
    std::vector<std::string> asked;
    auto lookup = [&](const std::string& path) -> Result<std::string> {
        asked.push_back(fs::path(path).filename().string());
        return std::string(path.ends_with("renderD128") ? "i915" : "nvdla");
    };
    EXPECT_EQ(drm::find_nvdla_node_in((dir_ / "dri").string(), (dir_ / "accel").string(), lookup),
              (dir_ / "accel" / "accel0").string());
    EXPECT_EQ(asked, (std::vector<std::string>{"renderD128", "accel0"}));
}

TEST_F(FakeDevTree, RenderNodesComeBeforeAccelNodes) {
    fs::create_directories(dir_ / "dri");
    fs::create_directories(dir_ / "accel");
    touch("dri/renderD129");
    touch("accel/accel0");
    auto lookup = [](const std::string&) -> Result<std::string> { return std::string("nvdla"); };
    EXPECT_EQ(drm::find_nvdla_node_in((dir_ / "dri").string(), (dir_ / "accel").string(), lookup),
              (dir_ / "dri" / "renderD129").string());
    EXPECT_EQ(
        drm::find_nvdla_node_in((dir_ / "absent").string(), (dir_ / "accel").string(), lookup),
        (dir_ / "accel" / "accel0").string());
}

TEST_F(FakeDevTree, RegularFilesAreNotDrmDevices) {
    const std::string node = touch("renderD128");
    EXPECT_EQ(drm::find_nvdla_render_node_in(dir_.string(), drm::drm_driver_name), "");
    Result<std::string> driver = drm::drm_driver_name(node);
    ASSERT_FALSE(driver.ok());
    EXPECT_EQ(driver.message().rfind(node + ": not a DRM device (drmGetVersion failed: ", 0), 0u)
        << driver.message();

    BackendOptions options;
    options.kind = BackendKind::Drm;
    options.drm_device = node;
    auto b = open_drm_backend(options);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.message().rfind("drm: " + node + ": not a DRM device", 0), 0u) << b.message();
}

TEST_F(FakeDevTree, MissingDirectoryOrNodes) {
    EXPECT_EQ(drm::find_nvdla_render_node_in((dir_ / "absent").string(), drm::drm_driver_name), "");
    EXPECT_EQ(drm::find_nvdla_render_node_in(dir_.string(), drm::drm_driver_name), "");

    BackendOptions options;
    options.drm_device = (dir_ / "renderD128").string();
    auto b = open_drm_backend(options);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.message(), "drm: " + options.drm_device +
                               ": cannot open: ENOENT (No such file or directory) (no such "
                               "file: is nvdla.ko loaded? docs/kernel-driver.md)");
}

TEST(DrmDiscovery, OpeningWithoutANodeSaysSo) {
    if (!find_nvdla_render_node().empty())
        GTEST_SKIP() << "this machine has an nvdla render node: " << find_nvdla_render_node();
    auto b = open_drm_backend({});
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.message().rfind("drm: no nvdla render node in /dev/dri", 0), 0u) << b.message();
    EXPECT_NE(b.message().find("is nvdla.ko loaded"), std::string::npos) << b.message();
    EXPECT_NE(b.message().find("NVDLA_BACKEND=emu"), std::string::npos) << b.message();
}

// Sets an environment variable for one scope and restores what was there.
class ScopedVariable {
  public:
    ScopedVariable(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        ::setenv(name, value, 1);
    }
    ~ScopedVariable() {
        if (old_)
            ::setenv(name_.c_str(), old_->c_str(), 1);
        else
            ::unsetenv(name_.c_str());
    }

  private:
    std::string name_;
    std::optional<std::string> old_;
};

class ScopedBackendVariable : public ScopedVariable {
  public:
    explicit ScopedBackendVariable(const char* value) : ScopedVariable("NVDLA_BACKEND", value) {}
};

TEST(DrmDiscovery, AutoFallsBackToEmuWithoutANode) {
    if (!find_nvdla_render_node().empty())
        GTEST_SKIP() << "this machine has an nvdla render node: " << find_nvdla_render_node();
    BackendOptions options;
    options.kind = BackendKind::Drm;  // the environment overrides it
    options.emu_memory_bytes = 1u << 20;
    {
        ScopedBackendVariable env("auto");
        auto b = open_backend(options);
        ASSERT_TRUE(b.ok()) << b.message();
        EXPECT_EQ((*b)->info().name, "emu");
    }
    {
        ScopedBackendVariable env("drm");
        options.kind = BackendKind::Auto;
        auto b = open_backend(options);
        ASSERT_FALSE(b.ok());
        EXPECT_EQ(b.message().rfind("drm: no nvdla render node", 0), 0u) << b.message();
    }
}

// NVDLA_DEVICE names the render node to open when the application names none; auto then
// means drm, and the error names that node.
TEST_F(FakeDevTree, DeviceVariablePicksTheRenderNode) {
    const std::string node = (dir_ / "renderD129").string();
    ScopedVariable device("NVDLA_DEVICE", node.c_str());
    ScopedBackendVariable backend("auto");
    BackendOptions options;
    options.emu_memory_bytes = 1u << 20;
    auto b = open_backend(options);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.message().rfind("drm: " + node + ": cannot open: ENOENT", 0), 0u) << b.message();

    // The application's own choice wins over the variable.
    options.drm_device = (dir_ / "renderD200").string();
    b = open_backend(options);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.message().rfind("drm: " + options.drm_device + ": cannot open", 0), 0u)
        << b.message();
}

TEST(DrmDiscovery, OpenFileErrorsNameThePath) {
    auto f = drm::open_drm_file("/nonexistent/renderD128");
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.message(),
              "drm: cannot open /nonexistent/renderD128: ENOENT (No such file or directory) (no "
              "such file: is nvdla.ko loaded? docs/kernel-driver.md)");
}

}  // namespace
}  // namespace nvdla::runtime
