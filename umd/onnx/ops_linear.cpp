// ONNX operators: Gemm, MatMul.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "importer.hpp"

namespace nvdla::onnx::detail {

namespace {

Status gemm(Importer& im, bool matmul) {
    Result<const Val*> a = im.feature(0);
    if (!a) return a.status();
    Result<const TensorData*> b = im.constant(1);
    if (!b) return b.status();
    if ((*a)->rank != 2)
        return im.fail("the first input must be a matrix [N, K] (it has rank " +
                       std::to_string((*a)->rank) + ")");
    if (!matmul && im.attr_int("transA", 0))
        return im.fail("transA is not supported (it mixes batch items)");
    const auto& bs = (*b)->shape;
    if (bs.size() != 2) return im.fail("the second input must be a constant matrix");
    const bool trans_b = !matmul && im.attr_int("transB", 0);
    const float alpha = matmul ? 1.0f : im.attr_float("alpha", 1.0f);
    const float beta = matmul ? 1.0f : im.attr_float("beta", 1.0f);
    const uint64_t k = trans_b ? uint64_t(bs[1]) : uint64_t(bs[0]);
    const uint64_t outputs = trans_b ? uint64_t(bs[0]) : uint64_t(bs[1]);
    const Dims4 d = im.dims(**a);
    if (k != d.elements())
        return im.fail("the second input of shape " + shape_text(bs) + " does not match " +
                       std::to_string(d.elements()) + " inputs");
    std::vector<float> weights(outputs * k);
    for (uint64_t o = 0; o < outputs; ++o)
        for (uint64_t i = 0; i < k; ++i)
            weights[o * k + i] =
                alpha * (trans_b ? (*b)->values[o * k + i] : (*b)->values[i * outputs + o]);
    std::vector<float> bias;
    if (!matmul && im.has_input(2)) {
        Result<const TensorData*> c = im.constant(2);
        if (!c) return c.status();
        const TensorData& cd = **c;
        const bool row = cd.values.size() == outputs &&
                         (cd.shape.size() == 1 || (cd.shape.size() == 2 && cd.shape[0] == 1));
        if (cd.values.size() == 1)
            bias.assign(outputs, beta * cd.values[0]);
        else if (row)
            for (float v : cd.values) bias.push_back(beta * v);
        else
            return im.fail("C of shape " + shape_text(cd.shape) +
                           " is not supported (one value, or one per output: [" +
                           std::to_string(outputs) + "] or [1, " + std::to_string(outputs) + "])");
    }
    return im.define_feature(
        im.network().fully_connected((*a)->tensor, static_cast<uint32_t>(outputs), weights, bias,
                                     im.layer_name()),
        2);
}

}  // namespace

void add_linear_ops(OpTable& table) {
    table["Gemm"] = [](Importer& im) { return gemm(im, false); };
    table["MatMul"] = [](Importer& im) { return gemm(im, true); };
}

}  // namespace nvdla::onnx::detail
