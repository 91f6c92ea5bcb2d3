// ONNX operators: Gemm, MatMul (a constant B: fully connected; a computed B: a CPU task).
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

// MatMul of two computed tensors [N, (C,) M, K] x [N, (C or 1,) K, P]: a CPU task on
// {1, C, M, K} x {1, C, K, P} views.
Status matmul_features(Importer& im) {
    Result<const Val*> a = im.feature(0);
    if (!a) return a.status();
    Result<const Val*> b = im.feature(1);
    if (!b) return b.status();
    const std::vector<int64_t> sa = im.shape_of(**a), sb = im.shape_of(**b);
    const size_t rank = sa.size();
    if (rank < 3 || sb.size() != rank)
        return im.fail("MatMul of computed tensors of shapes " + shape_text(sa) + " and " +
                       shape_text(sb) +
                       " is not supported ([N, M, K] x [N, K, P] or [N, C, M, "
                       "K] x [N, C, K, P])");
    const int64_t c = rank == 4 ? sa[1] : 1, cb = rank == 4 ? sb[1] : 1;
    const int64_t m = sa[rank - 2], k = sa[rank - 1], p = sb[rank - 1];
    if (sb[rank - 2] != k || (cb != c && cb != 1))
        return im.fail("shapes " + shape_text(sa) + " and " + shape_text(sb) +
                       " do not agree for a matrix product");
    auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    auto view = [&](const Val& v, Dims4 want, const char* suffix) {
        if (im.dims(v) == want) return v.tensor;
        return im.cpu({v.tensor}, builder::CpuOpKind::Reshape, {}, {}, want,
                      im.layer_name() + suffix);
    };
    const Tensor ta = view(**a, Dims4{1, u(c), u(m), u(k)}, "_a");
    const Tensor tb = view(**b, Dims4{1, u(cb), u(k), u(p)}, "_b");
    const Tensor t = im.cpu({ta, tb}, builder::CpuOpKind::MatMul);
    std::vector<int64_t> shape = sa;
    shape[rank - 1] = p;
    return im.define_shaped(t, shape, 0, "_reshape");
}

}  // namespace

void add_linear_ops(OpTable& table) {
    table["Gemm"] = [](Importer& im) { return gemm(im, false); };
    table["MatMul"] = [](Importer& im) {
        Result<const Val*> b = im.input(1);
        if (b && !(*b)->constant && im.node().input_size() == 2) return matmul_features(im);
        return gemm(im, true);
    };
}

}  // namespace nvdla::onnx::detail
