// nvdla_trace on small traces written by the test: both grammars, interrupts, CRC and file
// checks, skips, and failures that must be reported. The interrupts come from GLB's
// S_INTR_SET, so these tests need no computing unit.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tool_run.hpp"

namespace {

using nvdla::test::run_tool;
using nvdla::test::ToolRun;

namespace fs = std::filesystem;

ToolRun run(const std::string& args) {
    return run_tool("nvdla_trace", args);
}

class NvdlaTrace : public ::testing::Test {
  protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("nvdla_trace_test_" + std::to_string(getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(root_);
    }
    void TearDown() override { fs::remove_all(root_); }

    // A trace directory with a .cfg named after it, as the nv_small traces are laid out.
    fs::path cfg_trace(const std::string& name, const std::string& text) {
        const fs::path dir = root_ / name;
        fs::create_directories(dir);
        std::ofstream(dir / (name + ".cfg")) << text;
        return dir;
    }
    fs::path txn_trace(const std::string& name, const std::string& text) {
        const fs::path dir = root_ / name;
        fs::create_directories(dir);
        std::ofstream(dir / "input.txn") << text;
        return dir;
    }
    fs::path root_;
};

// 64 bytes 0..63 as an nv_small memory surface file (two 32-byte packets).
std::string packets() {
    std::string s;
    for (int p = 0; p < 2; ++p) {
        s += "{offset:0x" + std::to_string(p * 20) + ", size:32, payload:";
        for (int i = 0; i < 32; ++i) {
            char b[8];
            std::snprintf(b, sizeof b, "0x%02X ", p * 32 + i);
            s += b;
        }
        s += "},\n";
    }
    return s;
}

uint32_t crc_of_0_to_63() {
    unsigned char bytes[64];
    for (int i = 0; i < 64; ++i) bytes[i] = static_cast<unsigned char>(i);
    return static_cast<uint32_t>(crc32(0, bytes, 64));
}

TEST_F(NvdlaTrace, CfgTraceLoadsMemoryCatchesInterruptsAndChecksCrc) {
    char crc[16];
    std::snprintf(crc, sizeof crc, "0x%08x", crc_of_0_to_63());
    const fs::path dir =
        cfg_trace("t0", std::string() +
                            "// a comment\n"
                            "mem_init(pri_mem, 0x80000000, 0x100, ALL_ZERO);\n"
                            "mem_load(pri_mem, 0x80000000, \"data.dat\");\n"
                            "reg_write(NVDLA_GLB.S_INTR_SET_0, 0x10); // PDP group 0 done\n"
                            "intr_notify(PDP_0, sync_a);\n"
                            "check_crc(sync_a, pri_mem, 0x80000000, 0x40, " +
                            crc +
                            ");\n"
                            "check_crc(sync_a, 1, 0x80000000, 0x40, " +
                            crc +
                            ");\n"
                            "poll_reg_equal(NVDLA_GLB.S_NVDLA_HW_VERSION_0, 0x303031);\n"
                            "reg_read_check(NVDLA_GLB.S_INTR_STATUS_0, 0x0);\n");
    std::ofstream(dir / "data.dat") << packets();
    ToolRun r = run("--config nv_small " + dir.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("PASS line 5: interrupt PDP_0 -> sync_a"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("PASS line 6: crc32 of pri_mem 0x80000000+0x40"), std::string::npos);
    EXPECT_NE(r.output.find("6 passed, 0 failed, 0 skipped"), std::string::npos) << r.output;
}

TEST_F(NvdlaTrace, ATrailingSlashNamesTheSameTrace) {
    const fs::path dir = cfg_trace("t_slash", "reg_read_check(NVDLA_GLB.S_INTR_STATUS_0, 0x0);\n");
    ToolRun r = run("--config nv_small " + dir.string() + "/");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("t_slash on nv_small: 1 commands replayed"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("2 passed, 0 failed, 0 skipped"), std::string::npos) << r.output;
}

TEST_F(NvdlaTrace, ChecksWaitForTheirSyncAndMissedInterruptsFail) {
    const fs::path dir =
        cfg_trace("t1",
                  "intr_notify(SDP_1, late);\n"
                  "check_crc(late, pri_mem, 0x80000000, 0x40, 0x12345678);\n"
                  "reg_write(NVDLA_GLB.S_INTR_SET_0, 0x1);\n");  // SDP group 0, not 1
    ToolRun r = run("--config nv_small " + dir.string());
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.output.find("FAIL line 1: interrupt SDP_1 never arrived"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("FAIL line 2: sync late never fired"), std::string::npos) << r.output;
}

TEST_F(NvdlaTrace, WrongCrcAndUnknownRegisterFail) {
    const fs::path dir = cfg_trace("t2",
                                   "mem_init(pri_mem, 0x80000000, 0x40, ONES);\n"
                                   "check_crc(x, pri_mem, 0x80000000, 0x40, 0x0);\n"
                                   "reg_write(NVDLA_SDP.D_NO_SUCH_REGISTER_0, 0x1);\n");
    std::ofstream(dir / "unused.dat");
    ToolRun r = run("--config nv_small " + dir.string());
    EXPECT_EQ(r.exit_code, 1);
    // No sync is ever fired for "x": the check is not run and that is a failure too.
    EXPECT_NE(r.output.find("register NVDLA_SDP.D_NO_SUCH_REGISTER_0 is not in the nv_small"),
              std::string::npos)
        << r.output;
}

TEST_F(NvdlaTrace, MissingDataFileSkipsTheTrace) {
    const fs::path dir = cfg_trace("t3", "mem_load(pri_mem, 0x80000000, \"secret.dat\");\n");
    ToolRun r = run("--config nv_small " + dir.string());
    EXPECT_EQ(r.exit_code, 77);
    EXPECT_NE(r.output.find("SKIP t3: secret.dat is not in the trace directory"),
              std::string::npos);
    EXPECT_NE(r.output.find("0 passed, 0 failed, 1 skipped"), std::string::npos);
}

TEST_F(NvdlaTrace, TxnTraceUsesWordAddressesMasksAndGoldenDumps) {
    const fs::path dir =
        txn_trace("t4",
                  "# load_mem(addr, offset, file)\n"
                  "load_mem 0x80000000 0x40 in.dat\n"
                  "write_reg 0xffff0002 0x40 #NVDLA_GLB.S_INTR_SET_0 (byte 0x8): BDMA group 0\n"
                  "wait\n"
                  "read_reg 0xffff0003 0x40 0x40 #NVDLA_GLB.S_INTR_STATUS_0\n"
                  "write_reg 0xffff0003 0xffffffff\n"
                  "read_reg 0xffff0003 0xffffffff 0x0\n"
                  "dump_mem 0x80000000 0x40 golden.dat\n");
    std::string dump = "Data_size = 0x40\nW = 2\n";
    for (int i = 0; i < 64; ++i) {
        char b[8];
        std::snprintf(b, sizeof b, "0x%02x%c", i, i % 32 == 31 ? '\n' : ' ');
        dump += b;
    }
    std::ofstream(dir / "in.dat") << dump;
    std::ofstream(dir / "golden.dat") << "dumped memory,start_address=0x80000000 size=0x40\n"
                                         "memory type:dram\n==========\n"
                                      << dump << "=====\ndump done\n";
    ToolRun r = run("--config nv_full " + dir.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("poll GLB.S_INTR_STATUS & 0x40 == 0x40"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("pri_mem 0x80000000+0x40 == golden.dat"), std::string::npos);

    // One differing byte is found and named.
    std::ofstream(dir / "golden.dat") << "0x00 0x01 0x07\n";
    r = run("--config nv_full " + dir.string());
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.output.find("the golden file is shorter"), std::string::npos) << r.output;
}

TEST_F(NvdlaTrace, BadInvocationsExitTwo) {
    EXPECT_EQ(run("").exit_code, 2);
    EXPECT_EQ(run("--config nv_tiny " + root_.string()).exit_code, 2);
    EXPECT_EQ(run("--config nv_small " + (root_ / "nothing").string()).exit_code, 2);
    const fs::path dir = cfg_trace("t5", "frobnicate(1, 2);\n");
    ToolRun r = run("--config nv_small " + dir.string());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("line 1: unknown command 'frobnicate'"), std::string::npos) << r.output;
}

}  // namespace
