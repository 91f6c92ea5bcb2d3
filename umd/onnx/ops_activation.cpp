// ONNX operators: Relu, LeakyRelu, PRelu, Sigmoid, Tanh, Clip.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "importer.hpp"

namespace nvdla::onnx::detail {

namespace {

Status unary(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    const Tensor t = (*x)->tensor;
    const int rank = (*x)->rank;
    auto& net = im.network();
    const std::string& op = im.op();
    if (op == "Relu") return im.define_feature(net.relu(t, im.layer_name()), rank);
    if (op == "Sigmoid") return im.define_feature(net.sigmoid(t, im.layer_name()), rank);
    return im.define_feature(net.tanh(t, im.layer_name()), rank);
}

Status leaky_relu(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    const float slope[1] = {im.attr_float("alpha", 0.01f)};
    return im.define_feature(im.network().prelu((*x)->tensor, slope, im.layer_name()), (*x)->rank);
}

Status prelu(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    Result<const TensorData*> s = im.constant(1);
    if (!s) return s.status();
    Result<std::vector<float>> slopes = im.per_channel(**s, **x, "the slope");
    if (!slopes) return slopes.status();
    return im.define_feature(im.network().prelu((*x)->tensor, *slopes, im.layer_name()),
                             (*x)->rank);
}

Status clip(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    std::optional<float> lo, hi;
    if (im.opset() < 11) {
        if (im.attr("min")) lo = im.attr_float("min", 0);
        if (im.attr("max")) hi = im.attr_float("max", 0);
    } else {
        for (int i = 1; i <= 2; ++i) {
            if (!im.has_input(i)) continue;
            Result<const TensorData*> c = im.constant(i);
            if (!c) return c.status();
            if ((*c)->values.size() != 1) return im.fail("min and max must be scalars");
            (i == 1 ? lo : hi) = (*c)->values[0];
        }
    }
    const bool unbounded_above = !hi || std::isinf(*hi);
    if (lo && *lo == 0.0f && unbounded_above)
        return im.define_feature(im.network().relu((*x)->tensor, im.layer_name()), (*x)->rank);
    return im.fail("only Clip(min = 0, no max) is supported (as ReLU)");
}

}  // namespace

void add_activation_ops(OpTable& table) {
    table["Relu"] = unary;
    table["Sigmoid"] = unary;
    table["Tanh"] = unary;
    table["LeakyRelu"] = leaky_relu;
    table["PRelu"] = prelu;
    table["Clip"] = clip;
}

}  // namespace nvdla::onnx::detail
