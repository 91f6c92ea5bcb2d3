// ONNX activations: Relu, LeakyRelu, PRelu, Sigmoid, Tanh, Clip, HardSigmoid, HardSwish,
// Softplus, Mish, and the element-by-element functions that run on the CPU (Exp, Log, Sqrt,
// Reciprocal, Neg, Abs, Erf). Sigmoid, HardSigmoid, Softplus and Tanh(Softplus) stay pending
// until a consumer needs them, so that Mul can fuse them (ops_elementwise.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "importer.hpp"

namespace nvdla::onnx::detail {

namespace {

Status relu(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    return im.define_feature(im.network().relu((*x)->tensor, im.layer_name()), (*x)->rank);
}

// Sigmoid and HardSigmoid: pending (Mul(x, f(x)) becomes silu or hard_swish).
Status sigmoid(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    Val v;
    v.rank = (*x)->rank;
    v.source = (*x)->tensor;
    if (im.op() == "Sigmoid") {
        v.pending = Pending::Sigmoid;
    } else {
        v.pending = Pending::HardSigmoid;
        v.alpha = im.attr_float("alpha", 0.2f);
        v.beta = im.attr_float("beta", 0.5f);
    }
    im.define_pending(std::move(v));
    return Status();
}

Status softplus(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    Val v;
    v.rank = (*x)->rank;
    v.source = (*x)->tensor;
    v.pending = Pending::Softplus;
    im.define_pending(std::move(v));
    return Status();
}

// Tanh of a pending Softplus stays pending (mish); otherwise the SDP lookup table.
Status tanh(Importer& im) {
    Result<const Val*> in = im.input(0);
    if (!in) return in.status();
    if ((*in)->pending == Pending::Softplus) {
        Val v = **in;
        v.pending = Pending::TanhSoftplus;
        im.define_pending(std::move(v));
        return Status();
    }
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    return im.define_feature(im.network().tanh((*x)->tensor, im.layer_name()), (*x)->rank);
}

Status hard_swish(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    return im.define_feature(im.network().hard_swish((*x)->tensor, im.layer_name()), (*x)->rank);
}

// x * tanh(softplus(x)): the builder's mish (a CPU operation).
Status mish(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    return im.define_feature(im.network().mish((*x)->tensor, im.layer_name()), (*x)->rank);
}

// Element-by-element functions without a hardware mapping: CPU tasks.
Status cpu_unary(Importer& im) {
    using builder::CpuOpKind;
    static const std::map<std::string, CpuOpKind, std::less<>> kinds = {
        {"Exp", CpuOpKind::Exp},   {"Log", CpuOpKind::Log},
        {"Sqrt", CpuOpKind::Sqrt}, {"Reciprocal", CpuOpKind::Reciprocal},
        {"Neg", CpuOpKind::Neg},   {"Abs", CpuOpKind::Abs},
        {"Erf", CpuOpKind::Erf}};
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    return im.define_feature(im.cpu({(*x)->tensor}, kinds.at(im.op())), (*x)->rank);
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
    auto& net = im.network();
    if (lo && *lo == 0.0f && unbounded_above)
        return im.define_feature(net.relu((*x)->tensor, im.layer_name()), (*x)->rank);
    const float inf = std::numeric_limits<float>::infinity();
    return im.define_feature(
        net.clip((*x)->tensor, lo.value_or(-inf), hi.value_or(inf), im.layer_name()), (*x)->rank);
}

}  // namespace

void add_activation_ops(OpTable& table) {
    table["Relu"] = relu;
    table["Sigmoid"] = sigmoid;
    table["HardSigmoid"] = sigmoid;
    table["Tanh"] = tanh;
    table["Softplus"] = softplus;
    table["HardSwish"] = hard_swish;
    table["Mish"] = mish;
    table["LeakyRelu"] = leaky_relu;
    table["PRelu"] = prelu;
    table["Clip"] = clip;
    for (const char* op : {"Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Erf"})
        table[op] = cpu_unary;
}

}  // namespace nvdla::onnx::detail
