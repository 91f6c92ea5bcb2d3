// libFuzzer target: the hardware trace formats of nvdla_trace (tools/nvdla_trace/trace.hpp),
// the input's text as a nv_small .cfg trace, a nv_full input.txn and a surface file.
//
// A parse may fail (that is what malformed files do) but must return a sentence; a parsed
// surface has a presence bit per byte and stays within its extent (1 MiB here, which bounds the
// work per input; the bound itself is tested in tests/tools/trace_format_test.cpp).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "trace.hpp"

namespace {

constexpr uint64_t kMaxExtent = uint64_t(1) << 20;

[[noreturn]] void fail(const char* what, const std::string& message) {
    std::fprintf(stderr, "fuzz_trace: %s: %s\n", what, message.c_str());
    std::abort();
}

void parse_as(nvdla::trace::Trace::Format format, std::string_view text) {
    const auto commands = nvdla::trace::parse_commands(format, text, "input");
    if (!commands.ok() && commands.message().empty()) fail("parse_commands", "no sentence");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    parse_as(nvdla::trace::Trace::Format::NvSmallCfg, text);
    parse_as(nvdla::trace::Trace::Format::NvFullTxn, text);
    const auto surface = nvdla::trace::parse_surface(text, "surface", kMaxExtent);
    if (!surface.ok()) {
        if (surface.message().empty()) fail("parse_surface", "no sentence");
        return 0;
    }
    if (surface->bytes.size() != surface->present.size())
        fail("parse_surface", "bytes and presence bits differ in number");
    if (text.find("offset:") != std::string_view::npos && surface->bytes.size() > kMaxExtent)
        fail("parse_surface", "a packet file's surface exceeds its extent");
    return 0;
}
