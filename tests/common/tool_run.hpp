// Runs one of the project's command-line tools as a user would (the build's bin/ directory is
// tools_build_dir()), capturing its exit code and output.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "test_paths.hpp"

namespace nvdla::test {

struct ToolRun {
    int exit_code;
    std::string output;  // stdout and stderr
};

// `tool args 2>&1` through the shell; args are shell words.
inline ToolRun run_tool(const std::string& tool, const std::string& args) {
    const std::string cmd = std::string(tools_build_dir()) + "/" + tool + " " + args + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return {-1, "popen failed for " + cmd};
    std::string out;
    std::array<char, 4096> buf;
    while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
    const int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace nvdla::test
