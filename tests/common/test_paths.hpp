// Where this build's tests find their files. Defined in the generated test_paths.cpp, the one
// source that depends on where the checkout lives, so that ccache reuses every other object
// across checkouts in other directories.
#pragma once

namespace nvdla::test {

const char* shared_dir_default();  // ../shared as configured (NVDLA_SHARED_DIR)
const char* tests_source_dir();    // this checkout's tests/
const char* tools_build_dir();     // the build's bin/ (the project's programs)

}  // namespace nvdla::test
