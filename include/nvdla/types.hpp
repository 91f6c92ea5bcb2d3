// Basic vocabulary shared by the format, precision and runtime libraries: element precisions
// of the hardware, element types and layouts of host tensors, and non-owning tensor views.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "nvdla/api.hpp"
#include "nvdla/status.hpp"

namespace nvdla {

// Precision of data as the hardware reads or writes it.
enum class Precision : uint8_t { Int8, Int16, Fp16 };

constexpr uint32_t bytes_per_element(Precision p) {
    return p == Precision::Int8 ? 1 : 2;
}

constexpr std::string_view to_string(Precision p) {
    switch (p) {
        case Precision::Int8: return "int8";
        case Precision::Int16: return "int16";
        case Precision::Fp16: return "fp16";
    }
    return "?";
}

// Element type of a host tensor.
enum class HostType : uint8_t { Float32, Float16, Int8, Uint8, Int16, Uint16 };

constexpr uint32_t bytes_per_element(HostType t) {
    switch (t) {
        case HostType::Float32: return 4;
        case HostType::Float16:
        case HostType::Int16:
        case HostType::Uint16: return 2;
        case HostType::Int8:
        case HostType::Uint8: return 1;
    }
    return 0;
}

constexpr std::string_view to_string(HostType t) {
    switch (t) {
        case HostType::Float32: return "float32";
        case HostType::Float16: return "float16";
        case HostType::Int8: return "int8";
        case HostType::Uint8: return "uint8";
        case HostType::Int16: return "int16";
        case HostType::Uint16: return "uint16";
    }
    return "?";
}

// Order of a dense host tensor's dimensions, slowest first.
enum class HostLayout : uint8_t { NCHW, NHWC };

constexpr std::string_view to_string(HostLayout l) {
    return l == HostLayout::NCHW ? "NCHW" : "NHWC";
}

struct Dims4 {
    uint32_t n = 1, c = 1, h = 1, w = 1;
    constexpr uint64_t elements() const { return uint64_t(n) * c * h * w; }
    friend constexpr bool operator==(const Dims4&, const Dims4&) = default;
};

// A dense host tensor that a conversion reads.
struct ConstTensorView {
    const void* data = nullptr;
    size_t bytes = 0;  // size of the buffer behind data
    HostType type = HostType::Float32;
    HostLayout layout = HostLayout::NCHW;
    Dims4 dims;

    uint64_t required_bytes() const { return dims.elements() * bytes_per_element(type); }
};

// A dense host tensor that a conversion writes.
struct TensorView {
    void* data = nullptr;
    size_t bytes = 0;
    HostType type = HostType::Float32;
    HostLayout layout = HostLayout::NCHW;
    Dims4 dims;

    uint64_t required_bytes() const { return dims.elements() * bytes_per_element(type); }
    operator ConstTensorView() const { return {data, bytes, type, layout, dims}; }  // NOLINT
};

using ByteSpan = std::span<std::byte>;
using ConstByteSpan = std::span<const std::byte>;

}  // namespace nvdla
