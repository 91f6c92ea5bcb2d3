// Auxiliary SDP operand formats: bias, PReLU, batch-normalization and element-wise data.
//
// Each element has one or two components (the ALU operand, the MUL operand, or both
// interleaved ALU first) of 1 or 2 bytes. They are laid out like a feature cube whose atom holds
//
//     BytesPerAtom = ElementPerAtom x ComponentsPerElement x BytesPerComponent
//
// where ElementPerAtom = atom bytes / element bytes of the SDP processing precision (32 or 16
// with 32-byte atoms). Per-channel data is a contiguous 1 x 1 x C run; per-element data a W x H x C
// cube with caller-chosen line and surface strides. Per-layer values live in registers
// (aux_register_value).
#pragma once

#include <cstdint>

#include "nvdla/api.hpp"
#include "nvdla/formats/convert.hpp"
#include "nvdla/formats/feature.hpp"
#include "nvdla/hw_config.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla {

// What the data is for; decides the allowed modes and components (seed: ComponentsPerElement).
enum class AuxKind : uint8_t { Bias, PRelu, BatchNorm, ElementWise };
// Where one value applies (the RDMA DATA_MODE field; per-layer values are registers).
enum class AuxMode : uint8_t { PerChannel, PerElement };
// Which SDP operand(s) the components feed (the RDMA DATA_USE field).
enum class AuxUse : uint8_t { Alu, Mul, Both };

NVDLA_API std::string_view to_string(AuxKind k);

struct AuxLayout {
    AuxKind kind = AuxKind::Bias;
    AuxMode mode = AuxMode::PerChannel;
    AuxUse use = AuxUse::Alu;
    Precision processing_precision = Precision::Int8;  // SDP PROC_PRECISION: elements per atom
    Precision component_precision = Precision::Int8;   // 1 byte (int8) or 2 bytes (int16 / fp16)
    uint32_t elements_per_atom = 32;
    uint32_t channels = 1, height = 1, width = 1;
    uint64_t line_stride = 0, surface_stride = 0;

    uint32_t components() const { return use == AuxUse::Both ? 2 : 1; }
    uint32_t bytes_per_component() const { return bytes_per_element(component_precision); }
    uint32_t bytes_per_value() const { return components() * bytes_per_component(); }
    uint32_t bytes_per_atom() const { return elements_per_atom * bytes_per_value(); }
    uint32_t surfaces() const { return (channels + elements_per_atom - 1) / elements_per_atom; }
    // Bytes the hardware reads: whole atoms.
    uint64_t size_bytes() const {
        return uint64_t(surfaces() - 1) * surface_stride + uint64_t(height - 1) * line_stride +
               uint64_t(width) * bytes_per_atom();
    }
    // Byte offset of component `component` (0 = ALU, or the only one) of element (c, h, w).
    uint64_t offset(uint32_t c, uint32_t h, uint32_t w, uint32_t component = 0) const {
        return (c / elements_per_atom) * surface_stride + uint64_t(h) * line_stride +
               uint64_t(w) * bytes_per_atom() + (c % elements_per_atom) * bytes_per_value() +
               component * bytes_per_component();
    }
};

// Describes the operand data. dims: {1, C, 1, 1} per channel, {1, C, H, W} per element.
// strides apply to per-element data (0 = packed); per-channel data is always contiguous.
// Fails on a kind/mode/use combination the seed does not define (PReLU is per-channel MUL,
// batch-normalization per-channel BOTH, element-wise per-element), on component precisions the
// datapath cannot take (fp16 input needs fp16 components; integer input needs int8/int16), on
// bad extents and on misaligned or too small strides.
NVDLA_API Result<AuxLayout> make_aux_layout(const HwConfig& cfg, AuxKind kind, AuxMode mode,
                                            AuxUse use, Precision processing_precision,
                                            Precision component_precision, Dims4 dims,
                                            FeatureStrides strides = {});

// Host operands, each with the layout's dims ({1, C, 1, 1} or {1, C, H, W}).
struct AuxOperands {
    const ConstTensorView* alu = nullptr;  // required for use Alu and Both
    const ConstTensorView* mul = nullptr;  // required for use Mul and Both
};
struct AuxOutputs {
    const TensorView* alu = nullptr;
    const TensorView* mul = nullptr;
};

// Packs the operands into dst (at least layout.size_bytes()); padding channels are zeros,
// bytes skipped by strides are untouched.
NVDLA_API Status pack_aux(const AuxLayout& layout, const AuxOperands& operands, ByteSpan dst,
                          const ConvertOptions& opt = {});
NVDLA_API Status unpack_aux(const AuxLayout& layout, ConstByteSpan src, const AuxOutputs& outputs,
                            const ConvertOptions& opt = {});

// A per-layer operand as the 16-bit register field holds it (int16 or fp16 bits; int8 values
// sign-extended).
NVDLA_API uint16_t aux_register_value(Precision component_precision, float value,
                                      const ConvertOptions& opt = {});

}  // namespace nvdla
