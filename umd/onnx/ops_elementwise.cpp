// ONNX element-wise operators: Add, Sub, Mul, Div, Pow, Max, Min, Sum. Between two feature tensors
// (numpy broadcasting per batch item) the SDP element-wise stage or a CPU task; with a constant
// per channel the SDP bias and scale; between constants, folded.
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

// Numpy broadcasting of two shapes; empty optional when they do not broadcast.
std::optional<std::vector<int64_t>> broadcast_shape(const std::vector<int64_t>& a,
                                                    const std::vector<int64_t>& b) {
    const size_t rank = std::max(a.size(), b.size());
    std::vector<int64_t> out(rank);
    for (size_t i = 0; i < rank; ++i) {
        const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        if (da != db && da != 1 && db != 1) return std::nullopt;
        out[i] = da == 1 ? db : da;  // a 0 against a 1 stays 0 (empty)
    }
    return out;
}

double apply(const std::string& op, double x, double y, bool integer) {
    if (op == "Add") return x + y;
    if (op == "Sub") return x - y;
    if (op == "Mul") return x * y;
    if (op == "Div") return integer ? (y == 0 ? 0 : std::trunc(x / y)) : x / y;
    if (op == "Pow") return std::pow(x, y);
    if (op == "Max") return std::max(x, y);
    return std::min(x, y);
}

// Both inputs constant (shape arithmetic, mostly): folded.
Status fold(Importer& im, const Val& a, const Val& b) {
    const std::vector<int64_t>&sa = a.data.shape, &sb = b.data.shape;
    std::optional<std::vector<int64_t>> shape = broadcast_shape(sa, sb);
    if (!shape)
        return im.fail("constants of shapes " + shape_text(sa) + " and " + shape_text(sb) +
                       " do not broadcast");
    TensorData d;
    d.shape = *shape;
    const size_t rank = shape->size();
    if (!within(*shape, uint64_t(1) << 24)) return im.fail("the folded constant is too large");
    const uint64_t n = product(*shape);
    d.values.resize(n);
    std::vector<int64_t> index(rank, 0);
    auto offset = [&](const std::vector<int64_t>& s) {
        uint64_t o = 0;
        for (size_t i = rank - s.size(); i < rank; ++i) {
            const int64_t dim = s[i - (rank - s.size())];
            o = o * uint64_t(dim) + uint64_t(dim == 1 ? 0 : index[i]);
        }
        return o;
    };
    const bool integer = a.integer && b.integer;
    for (uint64_t k = 0; k < n; ++k) {
        d.values[k] = static_cast<float>(
            apply(im.op(), a.data.values[offset(sa)], b.data.values[offset(sb)], integer));
        for (size_t i = rank; i-- > 0;) {
            if (++index[i] < (*shape)[i]) break;
            index[i] = 0;
        }
    }
    return im.define_constant(std::move(d), integer);
}

// Mul(x, f(x)) with f a pending Sigmoid, HardSigmoid(1/6, 1/2) or Tanh(Softplus): one layer.
std::optional<Tensor> fused_product(Importer& im, const Val& a, const Val& b) {
    for (int swap = 0; swap < 2; ++swap) {
        const Val& x = swap ? b : a;
        const Val& f = swap ? a : b;
        if (x.constant || x.pending != Pending::None || f.source != x.tensor) continue;
        auto& net = im.network();
        switch (f.pending) {
            case Pending::Sigmoid: return net.silu(x.tensor, im.layer_name());
            case Pending::HardSigmoid:
                if (std::fabs(f.alpha - 1.0f / 6.0f) < 1e-6f && f.beta == 0.5f)
                    return net.hard_swish(x.tensor, im.layer_name());
                break;
            case Pending::TanhSoftplus: return net.mish(x.tensor, im.layer_name());
            default: break;
        }
    }
    return std::nullopt;
}

// Two feature tensors of the same rank, numpy-broadcast: the element-wise hardware where one
// side is whole and the other whole, per channel, per position or one value; else the CPU.
Status features(Importer& im, const Val& a, const Val& b) {
    const std::string& op = im.op();
    const std::vector<int64_t> sa = im.shape_of(a), sb = im.shape_of(b);
    std::optional<std::vector<int64_t>> shape = broadcast_shape(sa, sb);
    if (!shape || sa.size() != sb.size())
        return im.fail("the inputs have shapes " + shape_text(sa) + " and " + shape_text(sb) +
                       ", which do not broadcast per batch item");
    const Dims4 da = im.dims(a), db = im.dims(b);
    auto broadcasts_onto = [](Dims4 small, Dims4 full) {
        const bool c = small.c == full.c || small.c == 1;
        const bool plane =
            (small.h == full.h && small.w == full.w) || (small.h == 1 && small.w == 1);
        return c && plane && (small.c == full.c || small.h == full.h || small == Dims4{1, 1, 1, 1});
    };
    using builder::CpuOpKind;
    using builder::EltwiseOp;
    static const std::map<std::string, std::pair<CpuOpKind, std::optional<EltwiseOp>>, std::less<>>
        kinds = {{"Add", {CpuOpKind::Add, EltwiseOp::Sum}},
                 {"Sub", {CpuOpKind::Sub, EltwiseOp::Sub}},
                 {"Mul", {CpuOpKind::Mul, EltwiseOp::Product}},
                 {"Div", {CpuOpKind::Div, std::nullopt}},
                 {"Max", {CpuOpKind::Max, EltwiseOp::Max}},
                 {"Min", {CpuOpKind::Min, EltwiseOp::Min}},
                 {"Pow", {CpuOpKind::Pow, std::nullopt}}};
    const auto& kind = kinds.at(op);
    const bool hardware =
        kind.second && (da == db || broadcasts_onto(db, da) || broadcasts_onto(da, db));
    const Tensor t = hardware
                         ? im.network().eltwise(a.tensor, b.tensor, *kind.second, im.layer_name())
                         : im.cpu({a.tensor, b.tensor}, kind.first);
    return im.define_feature(t, static_cast<int>(shape->size()));
}

// A feature tensor and a constant of one value or one per channel: SDP bias and scale.
Status with_constant(Importer& im, const Val& x, const TensorData& c, bool constant_first) {
    const std::string& op = im.op();
    Result<std::vector<float>> v = im.per_channel(c, x, "the constant");
    if (!v) return v.status();
    std::vector<float> values = std::move(v).value();
    auto& net = im.network();
    Tensor t;
    if (op == "Add") {
        t = net.bias(x.tensor, values, im.layer_name());
    } else if (op == "Sub" && !constant_first) {
        for (float& f : values) f = -f;
        t = net.bias(x.tensor, values, im.layer_name());
    } else if (op == "Sub") {  // c - x
        const std::vector<float> minus_one(values.size(), -1.0f);
        t = net.scale(x.tensor, minus_one, values, im.layer_name());
    } else if (op == "Mul") {
        t = net.scale(x.tensor, values, {}, im.layer_name());
    } else if (op == "Div" && !constant_first) {
        for (float& f : values) f = 1.0f / f;
        t = net.scale(x.tensor, values, {}, im.layer_name());
    } else if (op == "Div") {  // c / x
        const Tensor r = im.cpu({x.tensor}, builder::CpuOpKind::Reciprocal, {}, {}, {},
                                im.layer_name() + "_reciprocal");
        t = net.scale(r, values, {}, im.layer_name());
    } else if ((op == "Max" || op == "Min") && values.size() == 1) {
        const float inf = std::numeric_limits<float>::infinity();
        t = op == "Max" ? net.clip(x.tensor, values[0], inf, im.layer_name())
                        : net.clip(x.tensor, -inf, values[0], im.layer_name());
    } else if (op == "Pow" && !constant_first && values.size() == 1) {
        t = im.cpu({x.tensor}, builder::CpuOpKind::PowScalar, {}, {values[0]});
    } else {
        return im.fail(op + " with a constant " + (constant_first ? "first" : "second") +
                       " operand of shape " + shape_text(c.shape) + " is not supported");
    }
    return im.define_feature(t, x.rank);
}

Status binary(Importer& im) {
    Result<const Val*> a = im.input(0);
    if (!a) return a.status();
    Result<const Val*> b = im.input(1);
    if (!b) return b.status();
    if ((*a)->constant && (*b)->constant) return fold(im, **a, **b);
    if (im.op() == "Mul") {
        if (std::optional<Tensor> t = fused_product(im, **a, **b))
            return im.define_feature(*t, (*a)->pending == Pending::None ? (*a)->rank : (*b)->rank);
    }
    if (!(*a)->constant && !(*b)->constant) {
        a = im.feature(0);
        if (!a) return a.status();
        b = im.feature(1);
        if (!b) return b.status();
        return features(im, **a, **b);
    }
    const bool constant_first = (*a)->constant;
    Result<const Val*> x = im.feature(constant_first ? 1 : 0);
    if (!x) return x.status();
    return with_constant(im, **x, constant_first ? (*a)->data : (*b)->data, constant_first);
}

Status sum(Importer& im) {
    Result<const Val*> first = im.feature(0);
    if (!first) return first.status();
    Tensor t = (*first)->tensor;
    const int rank = (*first)->rank;
    for (int i = 1; i < im.node().input_size(); ++i) {
        Result<const Val*> x = im.feature(i);
        if (!x) return x.status();
        if (im.dims(**x) != im.dims(**first) || (*x)->rank != rank)
            return im.fail("the inputs have different shapes (broadcasting is not supported)");
        t = im.network().eltwise(t, (*x)->tensor, builder::EltwiseOp::Sum,
                                 im.node().input_size() == 2
                                     ? im.layer_name()
                                     : im.layer_name() + "_" + std::to_string(i));
    }
    return im.define_feature(t, rank);
}

}  // namespace

void add_elementwise_ops(OpTable& table) {
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"}) table[op] = binary;
    table["Max"] = [](Importer& im) {
        if (im.node().input_size() != 2) return im.fail("Max needs two inputs here");
        return binary(im);
    };
    table["Min"] = [](Importer& im) {
        if (im.node().input_size() != 2) return im.fail("Min needs two inputs here");
        return binary(im);
    };
    table["Sum"] = sum;
}

}  // namespace nvdla::onnx::detail
