// ONNX operators: BatchNormalization, LRN, Softmax, LogSoftmax, LayerNormalization.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "importer.hpp"

namespace nvdla::onnx::detail {

namespace {

Status batch_norm(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    if (im.attr_int("training_mode", 0) || im.output_used(1) || im.output_used(2) ||
        im.output_used(3) || im.output_used(4))
        return im.fail("the training form (running statistics outputs) is not supported");
    const TensorData* p[4];
    for (int i = 0; i < 4; ++i) {
        Result<const TensorData*> c = im.constant(i + 1);
        if (!c) return c.status();
        p[i] = *c;
    }
    const float epsilon = im.attr_float("epsilon", 1e-5f);
    // Inputs: scale, B, mean, var.
    return im.define_feature(
        im.network().batch_norm((*x)->tensor, p[2]->values, p[3]->values, p[0]->values,
                                p[1]->values, epsilon, im.layer_name()),
        (*x)->rank);
}

Status lrn(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    builder::LrnDesc desc;
    const int64_t size = im.attr_int("size", 0);
    if (size <= 0) return im.fail("size is missing");
    desc.local_size = static_cast<uint32_t>(size);
    desc.alpha = im.attr_float("alpha", 1e-4f);
    desc.beta = im.attr_float("beta", 0.75f);
    desc.k = im.attr_float("bias", 1.0f);
    return im.define_feature(im.network().lrn((*x)->tensor, desc, im.layer_name()), (*x)->rank);
}

// Softmax and LogSoftmax. Over the channels: the existing CPU softmax (the original runtime has
// it); over another axis, or (before opset 13) over the flattened axes from `axis` on: a CPU
// task over the last builder axis of a reshaped view.
Status softmax(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    const int rank = (*x)->rank;
    const Dims4 d = im.dims(**x);
    const bool log = im.op() == "LogSoftmax";
    int64_t axis = im.attr_int("axis", im.opset() >= 13 ? -1 : 1);
    if (axis < -rank || axis >= rank)
        return im.fail("axis " + std::to_string(axis) + " is out of range for rank " +
                       std::to_string(rank));
    if (axis < 0) axis += rank;
    const int b = builder_axis(axis, rank);
    if (b == 0)
        return im.fail("axis " + std::to_string(axis) +
                       " is the batch dimension (each batch item runs separately)");
    // Opset 13 normalizes along `axis`; before, over everything from `axis` on, which is the
    // same where the axes after it have one element.
    const uint32_t after = b == 1 ? d.h * d.w : b == 2 ? d.w : 1;
    const bool span_one = im.opset() >= 13 || after == 1;
    using builder::CpuOpKind;
    const CpuOpKind kind = log ? CpuOpKind::LogSoftmax : CpuOpKind::Softmax;
    if (span_one && b == 1 && !log)
        return im.define_feature(im.network().softmax((*x)->tensor, im.layer_name()), rank);
    if (span_one) return im.define_feature(im.cpu({(*x)->tensor}, kind, {b}), rank);
    // Before opset 13, over the flattened axes from b on: {1, outer, 1, inner}, axis 3.
    const uint32_t outer = b == 1 ? 1 : b == 2 ? d.c : d.c * d.h;
    const uint32_t inner = static_cast<uint32_t>(d.elements() / outer);
    const Tensor flat = im.cpu({(*x)->tensor}, CpuOpKind::Reshape, {}, {},
                               Dims4{1, outer, 1, inner}, im.layer_name() + "_flatten");
    const Tensor t = im.cpu({flat}, kind, {3});
    return im.define_shaped(t, im.shape_of(**x), 0, "_reshape");
}

// LayerNormalization over the axes from `axis` to the end, scale and bias constants.
Status layer_norm(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    const int rank = (*x)->rank;
    int64_t axis = im.attr_int("axis", -1);
    if (axis < -rank || axis >= rank) return im.fail("axis is out of range");
    if (axis < 0) axis += rank;
    const int b = builder_axis(axis, rank);
    if (b == 0) return im.fail("normalizing over the batch (axis 0) is not supported");
    if (im.output_used(1) || im.output_used(2))
        return im.fail("the mean and inverse deviation outputs are not supported");
    const Dims4 d = im.dims(**x);
    const uint64_t count = b == 1 ? d.elements() : b == 2 ? uint64_t(d.h) * d.w : d.w;
    std::vector<float> floats = {im.attr_float("epsilon", 1e-5f)};
    for (int i = 1; i <= 2; ++i) {
        if (!im.has_input(i)) continue;
        Result<const TensorData*> c = im.constant(i);
        if (!c) return c.status();
        if ((*c)->values.size() != count && (*c)->values.size() != 1)
            return im.fail(std::string(i == 1 ? "the scale" : "the bias") + " of shape " +
                           shape_text((*c)->shape) + " does not match the normalized axes");
        std::vector<float> v = (*c)->values;
        if (v.size() == 1) v.assign(count, v[0]);
        floats.insert(floats.end(), v.begin(), v.end());
        if (i == 1 && !im.has_input(2)) floats.insert(floats.end(), count, 0.0f);
    }
    return im.define_feature(im.cpu({(*x)->tensor}, builder::CpuOpKind::LayerNorm, {b}, floats),
                             rank);
}

}  // namespace

void add_normalization_ops(OpTable& table) {
    table["BatchNormalization"] = batch_norm;
    table["LRN"] = lrn;
    table["Softmax"] = softmax;
    table["LogSoftmax"] = softmax;
    table["LayerNormalization"] = layer_norm;
}

}  // namespace nvdla::onnx::detail
