// Where this build's tests find their files. Defined in the generated test_paths.cpp, the one
// source that depends on where the checkout lives, so that ccache reuses every other object
// across checkouts in other directories.
#pragma once

#include <cstdlib>
#include <filesystem>

namespace nvdla::test {

const char* shared_dir_default();  // ../shared as configured (NVDLA_SHARED_DIR)
const char* tests_source_dir();    // this checkout's tests/
const char* tools_build_dir();     // the build's bin/ (the project's programs)

// Where ../shared should be: NVDLA_SHARED_DIR when set, else shared_dir_default().
inline std::filesystem::path configured_shared_dir() {
    const char* env = std::getenv("NVDLA_SHARED_DIR");
    return env ? env : shared_dir_default();
}

}  // namespace nvdla::test
