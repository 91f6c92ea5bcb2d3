// ONNX operators: BatchNormalization, LRN, Softmax.
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

Status softmax(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    const int rank = (*x)->rank;
    const Dims4 d = im.dims(**x);
    if (im.opset() >= 13) {
        Result<int> a = im.channel_axis_check(**x, im.attr_int("axis", -1), "axis");
        if (!a) return a.status();
    } else {
        // Before opset 13: softmax over the flattened dimensions from axis on.
        int64_t axis = im.attr_int("axis", 1);
        if (axis < 0) axis += rank;
        const bool channels_only =
            (rank == 1 && axis == 0) || (rank >= 2 && axis == 1 && d.h == 1 && d.w == 1);
        if (!channels_only)
            return im.fail("softmax over the flattened dimensions from axis " +
                           std::to_string(axis) + " of a tensor of shape " +
                           shape_text(onnx_shape(d, rank, im.batch())) +
                           " is not supported (only over the channels)");
    }
    return im.define_feature(im.network().softmax((*x)->tensor, im.layer_name()), rank);
}

}  // namespace

void add_normalization_ops(OpTable& table) {
    table["BatchNormalization"] = batch_norm;
    table["LRN"] = lrn;
    table["Softmax"] = softmax;
}

}  // namespace nvdla::onnx::detail
