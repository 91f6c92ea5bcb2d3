// Emission of a CPU task in the extended encoding (docs/runtime.md "CPU tasks"): EMU1
// descriptors in the current layout whose operation 0 is the marker that stops the original
// runtime, then the CPU operation.
#include <cstring>

#include "builder/emit.hpp"
#include "runtime/cpu_tasks.hpp"

namespace nvdla::builder::detail {

namespace {

constexpr size_t kOpSlot = 24;
constexpr size_t kBufferDesc = 256;
constexpr size_t kPair = 2 * kBufferDesc;
constexpr size_t kExtraDesc = 32;  // second source / parameter reference / marker magic

template <class T>
void put(std::vector<std::byte>& out, size_t offset, T value) {
    std::memcpy(out.data() + offset, &value, sizeof value);
}

uint16_t format_of(const HwConfig& cfg, Precision p) {
    if (p == Precision::Fp16) return 3;  // FF16
    return cfg.atom_bytes == 8 ? 1 : 0;  // INT8_8, INT8
}

// A buffer descriptor of the current layout at `at`.
void put_cube(std::vector<std::byte>& out, size_t at, const Place& p, const HwConfig& cfg,
              Precision precision, std::pair<int16_t, uint32_t> where) {
    const uint32_t lanes = cfg.atom_bytes / bytes_per_element(precision);
    const uint64_t size = uint64_t((p.dims.c + lanes - 1) / lanes - 1) * p.surface +
                          uint64_t(p.dims.h - 1) * p.line + uint64_t(p.dims.w) * cfg.atom_bytes;
    put<int16_t>(out, at, where.first);
    put<uint32_t>(out, at + 2, where.second);
    put<uint32_t>(out, at + 6, static_cast<uint32_t>(size));
    put<uint16_t>(out, at + 10, format_of(cfg, precision));
    put<uint16_t>(out, at + 12, static_cast<uint16_t>(p.dims.w));
    put<uint16_t>(out, at + 14, static_cast<uint16_t>(p.dims.h));
    put<uint16_t>(out, at + 16, static_cast<uint16_t>(p.dims.c));
    put<uint32_t>(out, at + 18, p.line);
    put<uint32_t>(out, at + 22, p.surface);
}

}  // namespace

CpuTaskBlobs encode_cpu_task(const CpuStep& step, const HwConfig& cfg, Precision precision,
                             std::span<const std::pair<int16_t, uint32_t>> where,
                             int16_t parameters) {
    CpuTaskBlobs b;
    b.network.assign(256, std::byte{0});
    put<int16_t>(b.network, 0, 1);   // operation list: address-list entry 1
    put<int16_t>(b.network, 2, 2);   // buffer-descriptor list: entry 2
    put<uint16_t>(b.network, 4, 2);  // the marker and the operation

    b.operations.assign(2 * kOpSlot, std::byte{0});
    // The marker: power 1, scale 1, shift 0 from FF16 to an unknown format.
    put<uint8_t>(b.operations, 0, 0);
    put<float>(b.operations, 4, 1.0f);
    put<float>(b.operations, 8, 1.0f);
    put<float>(b.operations, 12, 1.0f);
    put<float>(b.operations, 16, 1.0f);
    put<float>(b.operations, 20, 0.0f);
    // The operation.
    const size_t op = kOpSlot;
    put<uint8_t>(b.operations, op,
                 static_cast<uint8_t>(runtime::kCpuOpTypeBase + static_cast<uint8_t>(step.kind)));
    put<uint8_t>(b.operations, op + 1, static_cast<uint8_t>(step.inputs.size()));
    put<float>(b.operations, op + 4, step.input_scales.at(0));
    put<float>(b.operations, op + 8, step.output_scale);
    put<float>(b.operations, op + 12, step.input_scales.size() > 1 ? step.input_scales[1] : 1.0f);
    put<uint32_t>(b.operations, op + 16, static_cast<uint32_t>(step.ints.size()));
    put<uint32_t>(b.operations, op + 20, static_cast<uint32_t>(step.floats.size()));

    b.buffers.assign(2 * kPair, std::byte{0});
    put<int16_t>(b.buffers, 0, 0);
    put<uint16_t>(b.buffers, 10, 3);  // FF16
    put<int16_t>(b.buffers, kBufferDesc, 0);
    put<uint16_t>(b.buffers, kBufferDesc + 10, runtime::kCpuTaskMarkerFormat);
    std::memcpy(b.buffers.data() + kBufferDesc + kExtraDesc, runtime::kCpuTaskMagic,
                sizeof runtime::kCpuTaskMagic);
    for (size_t k = 0; k < step.inputs.size(); ++k)
        put_cube(b.buffers, kPair + k * kExtraDesc, step.inputs[k], cfg, precision, where[k]);
    put_cube(b.buffers, kPair + kBufferDesc, step.output, cfg, precision,
             where[step.inputs.size()]);
    put<int16_t>(b.buffers, kPair + kBufferDesc + kExtraDesc, parameters);
    put<uint32_t>(b.buffers, kPair + kBufferDesc + kExtraDesc + 2, 0);

    for (int64_t v : step.ints) {
        const auto i = static_cast<int32_t>(v);
        const size_t at = b.parameters.size();
        b.parameters.resize(at + 4);
        std::memcpy(b.parameters.data() + at, &i, 4);
    }
    for (float f : step.floats) {
        const size_t at = b.parameters.size();
        b.parameters.resize(at + 4);
        std::memcpy(b.parameters.data() + at, &f, 4);
    }
    return b;
}

}  // namespace nvdla::builder::detail
