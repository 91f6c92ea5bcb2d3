// nvdla_compiler's outputs besides the loadable: the terminal report, the JSON report and the
// Graphviz drawing of the network as it was mapped.
#pragma once

#include <string>
#include <vector>

#include "nvdla/builder.hpp"

namespace nvdla::compiler {

// What the report says about the compilation beyond the CompiledNetwork.
struct ReportContext {
    std::string model;        // the model file(s)
    std::string model_kind;   // "ONNX" or "Caffe"
    std::string network;      // the network's name
    std::string output;       // the loadable's path
    std::string calibration;  // "500 images from DIR", "table FILE", "" (fp16)
    std::string quantization;
    size_t layers = 0;
};

// Per network output of --verify: the emulated NVDLA against the float reference.
struct VerifyResult {
    std::string name;
    double cosine = 0;       // worst over the samples
    double max_error = 0;    // largest |device - float| over the samples
    double max_ref = 0;      // largest |float|
    uint32_t top1_same = 0;  // samples whose arg-max over the output agrees
    uint32_t samples = 0;
};

std::string text_report(const builder::CompiledNetwork& net, const ReportContext& ctx,
                        const std::vector<VerifyResult>& verify);
std::string json_report(const builder::CompiledNetwork& net, const ReportContext& ctx,
                        const std::vector<VerifyResult>& verify);
// A Graphviz digraph: the inputs, each hardware step (coloured by the unit that starts it) and
// each CPU task (marked) in execution order, and the outputs.
std::string graph_dot(const builder::CompiledNetwork& net, const ReportContext& ctx);

}  // namespace nvdla::compiler
