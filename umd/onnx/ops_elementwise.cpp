// ONNX operators: Add, Sub, Mul, Div, Max, Sum.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "importer.hpp"

namespace nvdla::onnx::detail {

namespace {

Status binary(Importer& im) {
    const std::string& op = im.op();
    Result<const Val*> a = im.input(0);
    if (!a) return a.status();
    Result<const Val*> b = im.input(1);
    if (!b) return b.status();
    if ((*a)->constant && (*b)->constant)
        return im.fail("both inputs are constants (constant folding is not supported)");
    if (!(*a)->constant && !(*b)->constant) {
        const Dims4 da = im.dims(**a), db = im.dims(**b);
        if (da != db || (*a)->rank != (*b)->rank)
            return im.fail("the inputs have different shapes " +
                           shape_text(onnx_shape(da, (*a)->rank, im.batch())) + " and " +
                           shape_text(onnx_shape(db, (*b)->rank, im.batch())) +
                           " (broadcasting between feature tensors is not supported)");
        builder::EltwiseOp e;
        if (op == "Add")
            e = builder::EltwiseOp::Sum;
        else if (op == "Mul")
            e = builder::EltwiseOp::Product;
        else if (op == "Max")
            e = builder::EltwiseOp::Max;
        else
            return im.fail(op + " of two feature tensors is not supported");
        return im.define_feature(
            im.network().eltwise((*a)->tensor, (*b)->tensor, e, im.layer_name()), (*a)->rank);
    }
    const bool constant_first = (*a)->constant;
    const Val& x = constant_first ? **b : **a;
    const TensorData& c = constant_first ? (*a)->data : (*b)->data;
    Result<std::vector<float>> v = im.per_channel(c, x, "the constant");
    if (!v) return v.status();
    std::vector<float> values = std::move(v).value();
    Tensor t;
    if (op == "Add") {
        t = im.network().bias(x.tensor, values, im.layer_name());
    } else if (op == "Sub" && !constant_first) {
        for (float& f : values) f = -f;
        t = im.network().bias(x.tensor, values, im.layer_name());
    } else if (op == "Sub") {  // c - x
        const std::vector<float> minus_one(values.size(), -1.0f);
        t = im.network().scale(x.tensor, minus_one, values, im.layer_name());
    } else if (op == "Mul") {
        t = im.network().scale(x.tensor, values, {}, im.layer_name());
    } else if (op == "Div" && !constant_first) {
        for (float& f : values) f = 1.0f / f;
        t = im.network().scale(x.tensor, values, {}, im.layer_name());
    } else {
        return im.fail(op + " with a constant " + (constant_first ? "first" : "second") +
                       " operand is not supported");
    }
    return im.define_feature(t, x.rank);
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
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) table[op] = binary;
    table["Max"] = [](Importer& im) {
        if (im.node().input_size() != 2) return im.fail("Max needs two inputs here");
        return binary(im);
    };
    table["Sum"] = sum;
}

}  // namespace nvdla::onnx::detail
