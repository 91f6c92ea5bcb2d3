// Which input/output precision pairs each NVDLA pipeline supports, and the precision it computes
// in: the seed's tables "Precision conversion for convolutional layer / SDP layer (offline mode)
// / LRN layer / pooling layer", row for row.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "nvdla/api.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla {

enum class Pipeline : uint8_t {
    ConvolutionImage,  // convolution reading a pixel surface (input: Int8/Int16 = integer image,
                       // i.e. uint8/int16/uint16 pixels; Fp16 = fp16 image)
    Convolution,       // convolution reading a feature data cube
    Sdp,               // SDP offline (reading memory)
    Cdp,               // LRN
    Pdp,               // pooling
};

// Precision inside the pipeline (SDP computes in 32 bits).
enum class DatapathPrecision : uint8_t { Int8, Int16, Fp16, Int32, Fp32 };

NVDLA_API std::string_view to_string(Pipeline p);
NVDLA_API std::string_view to_string(DatapathPrecision p);

struct PrecisionConversion {
    Pipeline pipeline;
    Precision input, output;
    std::optional<DatapathPrecision> datapath;  // nullopt: the seed's "Invalid case"
};

// Every row of the four tables (the integer-image row of the convolution table is listed for
// both Int8 and Int16 inputs).
NVDLA_API std::span<const PrecisionConversion> precision_conversions();

// The datapath precision of a valid pair, or an error naming the invalid one.
NVDLA_API Result<DatapathPrecision> check_precision_conversion(Pipeline pipeline, Precision input,
                                                               Precision output);

}  // namespace nvdla
