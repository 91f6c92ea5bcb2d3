// Buffer forms of the datapath's fp32 <-> fp16 conversions.
#include "nvdla/precision/nvdla_float.hpp"

#include <bit>

namespace nvdla::precision {

Status fp32_to_fp16(std::span<const float> in, std::span<uint16_t> out) {
    if (in.size() != out.size())
        return error("fp32 -> fp16: ", in.size(), " inputs but room for ", out.size(), " outputs");
    for (size_t i = 0; i < in.size(); ++i) out[i] = fp32_to_fp16(std::bit_cast<uint32_t>(in[i]));
    return {};
}

Status fp16_to_fp32(std::span<const uint16_t> in, std::span<float> out) {
    if (in.size() != out.size())
        return error("fp16 -> fp32: ", in.size(), " inputs but room for ", out.size(), " outputs");
    for (size_t i = 0; i < in.size(); ++i) out[i] = std::bit_cast<float>(fp16_to_fp32(in[i]));
    return {};
}

}  // namespace nvdla::precision
