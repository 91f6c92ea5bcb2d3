#include "nvdla/formats/precision_rules.hpp"

#include <array>

namespace nvdla {
namespace {

using P = Precision;
using D = DatapathPrecision;
constexpr std::optional<D> kInvalid = std::nullopt;

// Read against the seed's tables; the convolution table's weight precision always equals the
// datapath precision.
constexpr std::array<PrecisionConversion, 45> kTable{{
    // Convolution, image input (uint8/int16/uint16): converts to any precision.
    {Pipeline::ConvolutionImage, P::Int8, P::Int8, D::Int8},
    {Pipeline::ConvolutionImage, P::Int8, P::Int16, D::Int16},
    {Pipeline::ConvolutionImage, P::Int8, P::Fp16, D::Fp16},
    {Pipeline::ConvolutionImage, P::Int16, P::Int8, D::Int8},
    {Pipeline::ConvolutionImage, P::Int16, P::Int16, D::Int16},
    {Pipeline::ConvolutionImage, P::Int16, P::Fp16, D::Fp16},
    // Convolution, image input (fp16): only fp16.
    {Pipeline::ConvolutionImage, P::Fp16, P::Int8, kInvalid},
    {Pipeline::ConvolutionImage, P::Fp16, P::Int16, kInvalid},
    {Pipeline::ConvolutionImage, P::Fp16, P::Fp16, D::Fp16},
    // Convolution, feature data: no conversion in DC or Winograd mode.
    {Pipeline::Convolution, P::Int8, P::Int8, D::Int8},
    {Pipeline::Convolution, P::Int8, P::Int16, kInvalid},
    {Pipeline::Convolution, P::Int8, P::Fp16, kInvalid},
    {Pipeline::Convolution, P::Int16, P::Int8, kInvalid},
    {Pipeline::Convolution, P::Int16, P::Int16, D::Int16},
    {Pipeline::Convolution, P::Int16, P::Fp16, kInvalid},
    {Pipeline::Convolution, P::Fp16, P::Int8, kInvalid},
    {Pipeline::Convolution, P::Fp16, P::Int16, kInvalid},
    {Pipeline::Convolution, P::Fp16, P::Fp16, D::Fp16},
    // SDP (offline mode).
    {Pipeline::Sdp, P::Int8, P::Int8, D::Int32},
    {Pipeline::Sdp, P::Int8, P::Int16, D::Int32},
    {Pipeline::Sdp, P::Int8, P::Fp16, kInvalid},
    {Pipeline::Sdp, P::Int16, P::Int8, D::Int32},
    {Pipeline::Sdp, P::Int16, P::Int16, D::Int32},
    {Pipeline::Sdp, P::Int16, P::Fp16, D::Int32},
    {Pipeline::Sdp, P::Fp16, P::Int8, kInvalid},
    {Pipeline::Sdp, P::Fp16, P::Int16, D::Fp32},
    {Pipeline::Sdp, P::Fp16, P::Fp16, D::Fp32},
    // CDP (LRN): no conversion.
    {Pipeline::Cdp, P::Int8, P::Int8, D::Int8},
    {Pipeline::Cdp, P::Int8, P::Int16, kInvalid},
    {Pipeline::Cdp, P::Int8, P::Fp16, kInvalid},
    {Pipeline::Cdp, P::Int16, P::Int8, kInvalid},
    {Pipeline::Cdp, P::Int16, P::Int16, D::Int16},
    {Pipeline::Cdp, P::Int16, P::Fp16, kInvalid},
    {Pipeline::Cdp, P::Fp16, P::Int8, kInvalid},
    {Pipeline::Cdp, P::Fp16, P::Int16, kInvalid},
    {Pipeline::Cdp, P::Fp16, P::Fp16, D::Fp16},
    // PDP (pooling): no conversion. (The seed's int8 rows list "int16" twice; the second is
    // the fp16 output.)
    {Pipeline::Pdp, P::Int8, P::Int8, D::Int8},
    {Pipeline::Pdp, P::Int8, P::Int16, kInvalid},
    {Pipeline::Pdp, P::Int8, P::Fp16, kInvalid},
    {Pipeline::Pdp, P::Int16, P::Int8, kInvalid},
    {Pipeline::Pdp, P::Int16, P::Int16, D::Int16},
    {Pipeline::Pdp, P::Int16, P::Fp16, kInvalid},
    {Pipeline::Pdp, P::Fp16, P::Int8, kInvalid},
    {Pipeline::Pdp, P::Fp16, P::Int16, kInvalid},
    {Pipeline::Pdp, P::Fp16, P::Fp16, D::Fp16},
}};

}  // namespace

std::string_view to_string(Pipeline p) {
    switch (p) {
        case Pipeline::ConvolutionImage: return "convolution (image input)";
        case Pipeline::Convolution: return "convolution";
        case Pipeline::Sdp: return "SDP";
        case Pipeline::Cdp: return "CDP (LRN)";
        case Pipeline::Pdp: return "PDP (pooling)";
    }
    return "?";
}

std::string_view to_string(DatapathPrecision p) {
    switch (p) {
        case D::Int8: return "int8";
        case D::Int16: return "int16";
        case D::Fp16: return "fp16";
        case D::Int32: return "int32";
        case D::Fp32: return "fp32";
    }
    return "?";
}

std::span<const PrecisionConversion> precision_conversions() {
    return kTable;
}

Result<DatapathPrecision> check_precision_conversion(Pipeline pipeline, Precision input,
                                                     Precision output) {
    const char* input_kind = pipeline == Pipeline::ConvolutionImage
                                 ? (input == P::Fp16 ? " image" : " (integer) image")
                                 : " data";
    for (const PrecisionConversion& row : kTable) {
        if (row.pipeline != pipeline || row.input != input || row.output != output) continue;
        if (row.datapath) return *row.datapath;
        break;
    }
    return error(to_string(pipeline), ": ", to_string(input), input_kind,
                 " cannot be converted to ", to_string(output),
                 " output (an invalid case of the precision conversion tables)");
}

}  // namespace nvdla
