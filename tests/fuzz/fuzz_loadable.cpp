// libFuzzer target: a loadable through the runtime's public entry point, as an application
// gives it one: Runtime::load (FlatBuffers verification and every cross-reference check),
// then Network::create_context (memory plan, SET contents, relocations) and Context::validate
// (each DLA task's descriptors through the engine validator), on the emulated nv_full or
// nv_small.
// Nothing is run: a mutated but valid network could take the emulator arbitrarily long.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>

#include "nvdla/runtime.hpp"

namespace {

nvdla::Runtime* open_runtime(const char* config) {
    ::setenv("NVDLA_BACKEND", "emu", 1);  // the environment would override the options
    nvdla::RuntimeOptions options;
    options.backend = nvdla::BackendChoice::Emu;
    options.emu_config = config;
    options.emu_memory_bytes = 32u << 20;
    auto opened = nvdla::Runtime::open(options);
    if (!opened) {
        std::fprintf(stderr, "fuzz_loadable: %s\n", opened.message().c_str());
        std::abort();
    }
    return std::move(opened).value().release();  // lives for the whole process
}

// nv_full (32-byte atoms, every feature) or nv_small (8-byte atoms, int8 only), by the input's
// size: mutations reach both.
nvdla::Runtime* runtime(size_t size) {
    static nvdla::Runtime* full = open_runtime("nv_full");
    static nvdla::Runtime* small = open_runtime("nv_small");
    return size % 2 ? small : full;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    nvdla::Runtime* rt = runtime(size);
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    auto net = rt->load(bytes);
    if (!net) {
        if (net.message().empty()) std::abort();  // every failure is a sentence
        return 0;
    }
    auto ctx = (*net)->create_context();
    if (!ctx) {
        if (ctx.message().empty()) std::abort();
        return 0;
    }
    nvdla::Status s = (*ctx)->validate();
    if (!s && s.message().empty()) std::abort();
    return 0;
}
