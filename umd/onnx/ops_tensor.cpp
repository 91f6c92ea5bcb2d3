// ONNX operators that move or rename data: Concat, Flatten, Reshape, Transpose, Squeeze,
// Unsqueeze, Constant, Identity, Dropout.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "importer.hpp"

namespace nvdla::onnx::detail {

namespace {

Status concat(Importer& im) {
    std::vector<Tensor> parts;
    const Val* first = nullptr;
    int rank = 0;
    for (int i = 0; i < im.node().input_size(); ++i) {
        Result<const Val*> x = im.feature(i);
        if (!x) return x.status();
        if (i == 0) {
            first = *x;
            rank = (*x)->rank;
            Result<int> a = im.channel_axis_check(**x, im.attr_int("axis", 1), "axis");
            if (!a) return a.status();
        } else if ((*x)->rank != rank) {
            return im.fail("the inputs have different ranks");
        }
        parts.push_back((*x)->tensor);
    }
    if (parts.size() == 1) {
        im.define(im.node().output(0), *first);
        return Status();
    }
    return im.define_feature(im.network().concat(parts, im.layer_name()), rank);
}

Status flatten(Importer& im) {
    Result<const Val*> in = im.input(0);
    if (!in) return in.status();
    const int rank = (*in)->constant ? static_cast<int>((*in)->data.shape.size()) : (*in)->rank;
    int64_t axis = im.attr_int("axis", 1);
    if (axis < -rank || axis > rank)
        return im.fail("axis " + std::to_string(axis) + " is out of range");
    if (axis < 0) axis += rank;
    if ((*in)->constant) {
        TensorData d = (*in)->data;
        const auto& s = (*in)->data.shape;
        const uint64_t outer = product(std::vector<int64_t>(s.begin(), s.begin() + axis));
        d.shape = {static_cast<int64_t>(outer), static_cast<int64_t>(product(s) / outer)};
        return im.define_constant(std::move(d));
    }
    if (rank == 1 || axis != 1)
        return im.fail("flattening at axis " + std::to_string(axis) + " of a rank-" +
                       std::to_string(rank) +
                       " tensor is not supported (only at axis 1: [N, C*H*W])");
    return im.define_feature(im.network().flatten((*in)->tensor, im.layer_name()), 2);
}

Status reshape(Importer& im) {
    Result<const Val*> in = im.input(0);
    if (!in) return in.status();
    std::vector<int64_t> target;
    if (im.has_input(1)) {
        Result<const TensorData*> s = im.constant(1);
        if (!s) return s.status();
        for (float f : (*s)->values) target.push_back(static_cast<int64_t>(f));
    } else {
        target = im.attr_ints("shape");
    }
    const bool allow_zero = im.attr_int("allowzero", 0) != 0;
    const std::vector<int64_t> source =
        (*in)->constant ? (*in)->data.shape : onnx_shape(im.dims(**in), (*in)->rank, im.batch());
    std::vector<int64_t> out = target;
    int infer = -1;
    uint64_t known = 1;
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] == 0 && !allow_zero) {
            if (i >= source.size())
                return im.fail("shape " + shape_text(target) + " copies a missing dimension");
            out[i] = source[i];
        }
        if (out[i] == -1) {
            if (infer >= 0) return im.fail("shape " + shape_text(target) + " has two -1");
            infer = static_cast<int>(i);
        } else if (out[i] < 0) {
            return im.fail("shape " + shape_text(target) + " is invalid");
        } else {
            known *= static_cast<uint64_t>(out[i]);
        }
    }
    const uint64_t total = product(source);
    if (infer >= 0) {
        if (known == 0 || total % known)
            return im.fail("shape " + shape_text(target) + " does not fit");
        out[static_cast<size_t>(infer)] = static_cast<int64_t>(total / known);
    }
    if (product(out) != total)
        return im.fail("cannot reshape " + shape_text(source) + " to " + shape_text(target));
    if ((*in)->constant) {
        TensorData d = (*in)->data;
        d.shape = out;
        return im.define_constant(std::move(d));
    }
    if (out == source) {
        im.define(im.node().output(0), **in);
        return Status();
    }
    if ((*in)->rank >= 2 && out.size() == 2 && out[0] == source[0])
        return im.define_feature(im.network().flatten((*in)->tensor, im.layer_name()), 2);
    return im.fail("reshaping " + shape_text(source) + " to " + shape_text(out) +
                   " is not supported (only flattening to [N, C*H*W])");
}

Status constant_node(Importer& im) {
    if (const auto* a = im.attr("value")) {
        Result<TensorData> d = from_proto(a->t());
        if (!d) return im.fail(d.message());
        return im.define_constant(std::move(d).value());
    }
    TensorData d;
    if (const auto* a = im.attr("value_float")) {
        d.values = {a->f()};
    } else if (const auto* f = im.attr("value_floats")) {
        d.values.assign(f->floats().begin(), f->floats().end());
        d.shape = {static_cast<int64_t>(d.values.size())};
    } else if (const auto* i = im.attr("value_int")) {
        d.values = {static_cast<float>(i->i())};
    } else if (const auto* is = im.attr("value_ints")) {
        for (int64_t v : is->ints()) d.values.push_back(static_cast<float>(v));
        d.shape = {static_cast<int64_t>(d.values.size())};
    } else {
        return im.fail("only value, value_float(s) and value_int(s) constants are supported");
    }
    return im.define_constant(std::move(d));
}

Status transpose(Importer& im) {
    Result<const Val*> in = im.input(0);
    if (!in) return in.status();
    if (!(*in)->constant) return im.fail("transposing a feature tensor is not supported");
    const TensorData& s = (*in)->data;
    const size_t rank = s.shape.size();
    std::vector<int64_t> perm = im.attr_ints("perm");
    if (perm.empty())
        for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
    if (perm.size() != rank) return im.fail("perm does not match the rank");
    TensorData d;
    for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(rank)) return im.fail("perm is invalid");
        d.shape.push_back(s.shape[static_cast<size_t>(p)]);
    }
    d.values.resize(s.values.size());
    std::vector<uint64_t> in_stride(rank, 1);
    for (size_t i = rank; i-- > 1;) in_stride[i - 1] = in_stride[i] * uint64_t(s.shape[i]);
    std::vector<int64_t> idx(rank, 0);  // index into d
    for (uint64_t o = 0; o < d.values.size(); ++o) {
        uint64_t src = 0;
        for (size_t i = 0; i < rank; ++i) src += uint64_t(idx[i]) * in_stride[size_t(perm[i])];
        d.values[o] = s.values[src];
        for (size_t i = rank; i-- > 0;) {
            if (++idx[i] < d.shape[i]) break;
            idx[i] = 0;
        }
    }
    return im.define_constant(std::move(d));
}

Status squeeze(Importer& im, bool unsqueeze) {
    Result<const Val*> in = im.input(0);
    if (!in) return in.status();
    if (!(*in)->constant)
        return im.fail(std::string(unsqueeze ? "Unsqueeze" : "Squeeze") +
                       " of a feature tensor is not supported");
    std::vector<int64_t> axes = im.attr_ints("axes");
    if (im.has_input(1)) {
        Result<const TensorData*> a = im.constant(1);
        if (!a) return a.status();
        for (float f : (*a)->values) axes.push_back(static_cast<int64_t>(f));
    }
    TensorData d = (*in)->data;
    if (unsqueeze) {
        const int64_t rank = static_cast<int64_t>(d.shape.size() + axes.size());
        for (int64_t& a : axes) a = a < 0 ? a + rank : a;
        std::sort(axes.begin(), axes.end());
        for (int64_t a : axes) {
            if (a < 0 || a > static_cast<int64_t>(d.shape.size()))
                return im.fail("axes are invalid");
            d.shape.insert(d.shape.begin() + a, 1);
        }
    } else {
        const int64_t rank = static_cast<int64_t>(d.shape.size());
        std::vector<int64_t> kept;
        for (int64_t i = 0; i < rank; ++i) {
            const bool listed =
                axes.empty() ? d.shape[size_t(i)] == 1
                             : std::any_of(axes.begin(), axes.end(),
                                           [&](int64_t a) { return (a < 0 ? a + rank : a) == i; });
            if (!listed) kept.push_back(d.shape[size_t(i)]);
        }
        d.shape = kept;
    }
    return im.define_constant(std::move(d));
}

Status identity(Importer& im) {
    if (im.op() == "Dropout" && im.output_used(1))
        return im.fail("the mask output is not supported");
    if (im.op() == "Dropout" && im.attr_int("training_mode", 0)) return im.fail("training mode");
    Result<const Val*> x = im.input(0);
    if (!x) return x.status();
    im.define(im.node().output(0), **x);
    return Status();
}

}  // namespace

void add_tensor_ops(OpTable& table) {
    table["Concat"] = concat;
    table["Flatten"] = flatten;
    table["Reshape"] = reshape;
    table["Constant"] = constant_node;
    table["Transpose"] = transpose;
    table["Squeeze"] = [](Importer& im) { return squeeze(im, false); };
    table["Unsqueeze"] = [](Importer& im) { return squeeze(im, true); };
    table["Identity"] = identity;
    table["Dropout"] = identity;
}

}  // namespace nvdla::onnx::detail
