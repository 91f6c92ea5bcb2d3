// libFuzzer target: the Caffe importer (nvdla::caffe::import_bytes) on a network in protobuf
// text format and its weights in binary, split at the input's first NUL byte (no NUL: the
// whole input is the prototxt, without weights).
//
// An import may fail (malformed files do) but must say why in a sentence; an imported model
// must be consistent: valid inputs and outputs with the dims the network reports.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string_view>

#include "nvdla/caffe.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view all(reinterpret_cast<const char*>(data), size);
    const size_t nul = all.find('\0');
    const std::string_view prototxt = all.substr(0, nul);
    const std::span<const std::byte> caffemodel =
        nul == std::string_view::npos
            ? std::span<const std::byte>()
            : std::as_bytes(std::span<const uint8_t>(data + nul + 1, size - nul - 1));
    nvdla::Result<nvdla::caffe::Model> m = nvdla::caffe::import_bytes(prototxt, caffemodel);
    if (!m) {
        if (m.message().empty()) {
            std::fprintf(stderr, "fuzz_caffe: a failure without a sentence\n");
            std::abort();
        }
        return 0;
    }
    if (m->inputs.empty() || m->outputs.empty() || !m->network.status()) {
        std::fprintf(stderr, "fuzz_caffe: an imported model without inputs or outputs\n");
        std::abort();
    }
    for (const auto& v : m->outputs)
        if (!v.tensor.valid() || m->network.dims(v.tensor).elements() == 0) {
            std::fprintf(stderr, "fuzz_caffe: output '%s' is not a valid tensor\n", v.name.c_str());
            std::abort();
        }
    return 0;
}
