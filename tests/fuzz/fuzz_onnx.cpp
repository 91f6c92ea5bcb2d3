// libFuzzer target: ONNX model bytes through the importer (nvdla::onnx::import_bytes), as an
// application gives it a file, then the imported network's float reference description
// (nothing is built or run: a mutated but valid network could be arbitrarily large). Every
// failure must be a sentence; an imported model must be consistent.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "nvdla/onnx.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    auto tensor = nvdla::onnx::parse_tensor(bytes);
    if (!tensor && tensor.message().empty()) std::abort();
    if (tensor && tensor->values.size() != tensor->elements()) std::abort();
    auto model = nvdla::onnx::import_bytes(bytes);
    if (!model) {
        if (model.message().empty()) std::abort();  // every failure is a sentence
        return 0;
    }
    if (!model->network.status()) std::abort();
    if (model->inputs.empty() || model->outputs.empty() || model->batch < 1) std::abort();
    for (const auto& out : model->outputs)
        if (!out.tensor.valid() || model->network.dims(out.tensor).elements() == 0) std::abort();
    return 0;
}
