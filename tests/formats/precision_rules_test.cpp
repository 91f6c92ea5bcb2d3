#include "nvdla/formats/precision_rules.hpp"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

namespace nvdla {
namespace {

using P = Precision;
using D = DatapathPrecision;

TEST(PrecisionRules, EveryPipelineHasOneRowPerPair) {
    std::map<std::tuple<Pipeline, P, P>, int> rows;
    for (const auto& r : precision_conversions()) ++rows[{r.pipeline, r.input, r.output}];
    for (Pipeline p : {Pipeline::ConvolutionImage, Pipeline::Convolution, Pipeline::Sdp,
                       Pipeline::Cdp, Pipeline::Pdp})
        for (P in : {P::Int8, P::Int16, P::Fp16})
            for (P out : {P::Int8, P::Int16, P::Fp16})
                EXPECT_EQ((rows[{p, in, out}]), 1)
                    << to_string(p) << " " << to_string(in) << "->" << to_string(out);
}

TEST(PrecisionRules, ValidPairsAreExactlyTheSeeds) {
    // Transcribed from the seed's four tables: every pair not listed is an invalid case.
    const std::map<std::tuple<Pipeline, P, P>, D> valid{
        {{Pipeline::ConvolutionImage, P::Int8, P::Int8}, D::Int8},
        {{Pipeline::ConvolutionImage, P::Int8, P::Int16}, D::Int16},
        {{Pipeline::ConvolutionImage, P::Int8, P::Fp16}, D::Fp16},
        {{Pipeline::ConvolutionImage, P::Int16, P::Int8}, D::Int8},
        {{Pipeline::ConvolutionImage, P::Int16, P::Int16}, D::Int16},
        {{Pipeline::ConvolutionImage, P::Int16, P::Fp16}, D::Fp16},
        {{Pipeline::ConvolutionImage, P::Fp16, P::Fp16}, D::Fp16},
        {{Pipeline::Convolution, P::Int8, P::Int8}, D::Int8},
        {{Pipeline::Convolution, P::Int16, P::Int16}, D::Int16},
        {{Pipeline::Convolution, P::Fp16, P::Fp16}, D::Fp16},
        {{Pipeline::Sdp, P::Int8, P::Int8}, D::Int32},
        {{Pipeline::Sdp, P::Int8, P::Int16}, D::Int32},
        {{Pipeline::Sdp, P::Int16, P::Int8}, D::Int32},
        {{Pipeline::Sdp, P::Int16, P::Int16}, D::Int32},
        {{Pipeline::Sdp, P::Int16, P::Fp16}, D::Int32},
        {{Pipeline::Sdp, P::Fp16, P::Int16}, D::Fp32},
        {{Pipeline::Sdp, P::Fp16, P::Fp16}, D::Fp32},
        {{Pipeline::Cdp, P::Int8, P::Int8}, D::Int8},
        {{Pipeline::Cdp, P::Int16, P::Int16}, D::Int16},
        {{Pipeline::Cdp, P::Fp16, P::Fp16}, D::Fp16},
        {{Pipeline::Pdp, P::Int8, P::Int8}, D::Int8},
        {{Pipeline::Pdp, P::Int16, P::Int16}, D::Int16},
        {{Pipeline::Pdp, P::Fp16, P::Fp16}, D::Fp16},
    };
    for (Pipeline p : {Pipeline::ConvolutionImage, Pipeline::Convolution, Pipeline::Sdp,
                       Pipeline::Cdp, Pipeline::Pdp})
        for (P in : {P::Int8, P::Int16, P::Fp16})
            for (P out : {P::Int8, P::Int16, P::Fp16}) {
                auto r = check_precision_conversion(p, in, out);
                auto it = valid.find({p, in, out});
                if (it == valid.end()) {
                    EXPECT_FALSE(r.ok())
                        << to_string(p) << " " << to_string(in) << "->" << to_string(out);
                } else {
                    ASSERT_TRUE(r.ok()) << r.message();
                    EXPECT_EQ(*r, it->second);
                }
            }
}

TEST(PrecisionRules, ErrorsNameThePipelineAndThePair) {
    EXPECT_EQ(check_precision_conversion(Pipeline::ConvolutionImage, P::Fp16, P::Int8).message(),
              "convolution (image input): fp16 image cannot be converted to int8 output (an "
              "invalid case of the precision conversion tables)");
    EXPECT_EQ(check_precision_conversion(Pipeline::Sdp, P::Int8, P::Fp16).message(),
              "SDP: int8 data cannot be converted to fp16 output (an invalid case of the precision "
              "conversion tables)");
}

}  // namespace
}  // namespace nvdla
