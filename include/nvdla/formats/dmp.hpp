// The network input/output layout of DMP's dv-sdk AI FPGA module (a second accelerator the
// format library serves): channels in chunks of 8, each chunk a dense W-major (DWHC) or, with
// the convertor's transpose_weight flag, H-major (DHWC) block.
//
//   chunk = c / 8, ci = c % 8, Cc = 8 for full chunks, C % 8 for the last partial one
//   DWHC: offset = d*W*H*C + chunk*W*H*8 + x*H*Cc + y*Cc + ci   (elements)
//   DHWC: offset = d*W*H*C + chunk*W*H*8 + y*W*Cc + x*Cc + ci
//
// Network inputs are fp16, network outputs float32.
#pragma once

#include <cstdint>

#include "nvdla/api.hpp"
#include "nvdla/formats/convert.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla {

enum class DmpElement : uint8_t { Fp16, Float32 };

struct DmpLayout {
    uint32_t depth = 1, channels = 1, height = 1, width = 1;
    bool transposed = false;  // transpose_weight set: DHWC instead of DWHC
    DmpElement element = DmpElement::Fp16;

    static constexpr uint32_t kChunk = 8;
    uint32_t bytes_per_element() const { return element == DmpElement::Fp16 ? 2 : 4; }
    uint32_t chunks() const { return (channels + kChunk - 1) / kChunk; }
    uint64_t size_bytes() const {
        return uint64_t(depth) * channels * height * width * bytes_per_element();
    }
    // Byte offset of element (d, c, y, x).
    uint64_t offset(uint32_t d, uint32_t c, uint32_t y, uint32_t x) const {
        const uint32_t chunk = c / kChunk, ci = c % kChunk;
        const uint64_t cc = chunk < channels / kChunk ? kChunk : channels % kChunk;
        const uint64_t plane = uint64_t(width) * height;
        const uint64_t inner =
            transposed ? (uint64_t(y) * width + x) * cc : (uint64_t(x) * height + y) * cc;
        return (uint64_t(d) * plane * channels + chunk * plane * kChunk + inner + ci) *
               bytes_per_element();
    }
};

// dims: {n = depth, c, h, w}; all extents at least 1.
NVDLA_API Result<DmpLayout> make_dmp_layout(Dims4 dims, DmpElement element, bool transposed);

// Host tensor (NCHW or NHWC, n = depth) <-> DMP buffer (at least layout.size_bytes()).
NVDLA_API Status pack_dmp(const ConstTensorView& src, const DmpLayout& layout, ByteSpan dst,
                          const ConvertOptions& opt = {});
NVDLA_API Status unpack_dmp(ConstByteSpan src, const DmpLayout& layout, const TensorView& dst,
                            const ConvertOptions& opt = {});

}  // namespace nvdla
