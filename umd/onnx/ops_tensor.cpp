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

// Constants along any axis (shape arithmetic), folded.
Status concat_constants(Importer& im) {
    TensorData d;
    int64_t axis = im.attr_int("axis", 0);
    std::vector<const TensorData*> parts;
    bool integer = true;
    for (int i = 0; i < im.node().input_size(); ++i) {
        Result<const TensorData*> c = im.constant(i);
        if (!c) return c.status();
        parts.push_back(*c);
        integer = integer && (*im.input(i))->integer;
    }
    const std::vector<int64_t>& first = parts[0]->shape;
    const int64_t rank = static_cast<int64_t>(first.size());
    if (axis < -rank || axis >= rank)
        return im.fail("axis " + std::to_string(axis) + " is out of range");
    if (axis < 0) axis += rank;
    d.shape = first;
    d.shape[size_t(axis)] = 0;
    for (const TensorData* t : parts) {
        if (t->shape.size() != first.size()) return im.fail("the inputs have different ranks");
        for (int64_t i = 0; i < rank; ++i)
            if (i != axis && t->shape[size_t(i)] != first[size_t(i)])
                return im.fail("the inputs' shapes disagree off the axis");
        d.shape[size_t(axis)] += t->shape[size_t(axis)];
    }
    const uint64_t outer = product(std::vector<int64_t>(first.begin(), first.begin() + axis));
    for (uint64_t o = 0; o < outer; ++o)
        for (const TensorData* t : parts) {
            const uint64_t block = product(t->shape, size_t(axis));
            d.values.insert(d.values.end(), t->values.begin() + long(o * block),
                            t->values.begin() + long((o + 1) * block));
        }
    return im.define_constant(std::move(d), integer);
}

Status concat(Importer& im) {
    bool all_constant = im.node().input_size() > 0;
    for (int i = 0; i < im.node().input_size(); ++i) {
        Result<const Val*> v = im.input(i);
        if (!v) return v.status();
        all_constant = all_constant && (*v)->constant;
    }
    if (all_constant) return concat_constants(im);
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
        const uint64_t inner = product(s, static_cast<size_t>(axis));
        d.shape = {static_cast<int64_t>(outer), static_cast<int64_t>(inner)};
        return im.define_constant(std::move(d), (*in)->integer);
    }
    if (rank == 1 || axis != 1)
        return im.fail("flattening at axis " + std::to_string(axis) + " of a rank-" +
                       std::to_string(rank) +
                       " tensor is not supported (only at axis 1: [N, C*H*W])");
    Result<const Val*> x = im.feature(0);  // made, if pending
    if (!x) return x.status();
    return im.define_feature(im.network().flatten((*x)->tensor, im.layer_name()), 2);
}

// A feature tensor of ONNX shape `source` reshaped to `out`: the channel shuffle's views, flatten,
// or a CPU reshape.
Status reshape_feature(Importer& im, const Val& in, const std::vector<int64_t>& source,
                       const std::vector<int64_t>& out) {
    if (out == source) {
        im.define(im.node().output(0), in);
        return Status();
    }
    if (in.pending == Pending::Shuffled && out.size() == 4 && out[0] == source[0] &&
        out[2] == source[3] && out[3] == source[4]) {
        return im.define_feature(
            im.network().shuffle_channels(in.source, in.groups, im.layer_name()), 4);
    }
    if (in.pending == Pending::None && in.rank == 4 && out.size() == 5 && out[0] == source[0] &&
        out[1] * out[2] == source[1] && out[3] == source[2] && out[4] == source[3]) {
        Val v;
        v.rank = 5;
        v.source = in.tensor;
        v.pending = Pending::Grouped;
        v.groups = static_cast<uint32_t>(out[1]);
        im.define_pending(std::move(v));
        return Status();
    }
    Result<const Val*> x = im.feature(0);  // made, if pending
    if (!x) return x.status();
    if ((*x)->rank >= 2 && out.size() == 2 && out[0] == source[0])
        return im.define_feature(im.network().flatten((*x)->tensor, im.layer_name()), 2);
    return im.define_shaped((*x)->tensor, out);
}

Status reshape(Importer& im) {
    Result<const Val*> in = im.input(0);
    if (!in) return in.status();
    std::vector<int64_t> target;
    if (im.has_input(1)) {
        Result<const TensorData*> s = im.constant(1);
        if (!s) return s.status();
        for (float f : (*s)->values) target.push_back(to_int(f));
    } else {
        target = im.attr_ints("shape");
    }
    const bool allow_zero = im.attr_int("allowzero", 0) != 0;
    const std::vector<int64_t> source = im.shape_of(**in);
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
    if (!within(out, uint64_t(1) << 31) || product(out) != total)
        return im.fail("cannot reshape " + shape_text(source) + " to " + shape_text(target));
    if ((*in)->constant) {
        TensorData d = (*in)->data;
        d.shape = out;
        return im.define_constant(std::move(d), (*in)->integer);
    }
    return reshape_feature(im, **in, source, out);
}

Status constant_node(Importer& im) {
    if (const auto* a = im.attr("value")) {
        Result<TensorData> d = from_proto(a->t());
        if (!d) return im.fail(d.message());
        const int type = a->t().data_type();
        return im.define_constant(std::move(d).value(),
                                  type == ::onnx::TensorProto_DataType_INT64 ||
                                      type == ::onnx::TensorProto_DataType_INT32);
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
    return im.define_constant(std::move(d), im.attr("value_int") || im.attr("value_ints"));
}

// A feature tensor transposed: the channel shuffle's middle step (pending), or a CPU task that
// keeps the batch axis first.
Status transpose_feature(Importer& im, const Val& in) {
    std::vector<int64_t> perm = im.attr_ints("perm");
    if (in.pending == Pending::Grouped && perm == std::vector<int64_t>{0, 2, 1, 3, 4}) {
        Val v = in;
        v.pending = Pending::Shuffled;
        im.define_pending(std::move(v));
        return Status();
    }
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    const int rank = (*x)->rank;
    if (perm.empty())
        for (int i = 0; i < rank; ++i) perm.push_back(rank - 1 - i);
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
        if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != size_t(rank))
            return im.fail("perm " + shape_text(perm) + " is invalid");
    if (rank < 2 || perm[0] != 0)
        return im.fail("perm " + shape_text(perm) +
                       " moves the batch axis (each batch item runs separately)");
    const std::vector<int64_t> source = im.shape_of(**x);
    std::vector<int64_t> out_shape;
    for (int64_t p : perm) out_shape.push_back(source[size_t(p)]);
    std::vector<int64_t> ints = {1, 2, 3};
    for (int i = 1; i < rank; ++i) {
        const int out_axis = builder_axis(i, rank), in_axis = builder_axis(perm[size_t(i)], rank);
        ints[size_t(out_axis - 1)] = in_axis;
    }
    if (rank == 3) ints[1] = 2;  // h: one element either side
    if (rank == 2) ints = {1, 2, 3};
    const Tensor t = im.cpu({(*x)->tensor}, builder::CpuOpKind::Transpose, ints);
    return im.define_shaped(t, out_shape, 0, "_reshape");
}

Status transpose(Importer& im) {
    Result<const Val*> in = im.input(0);
    if (!in) return in.status();
    if (!(*in)->constant) return transpose_feature(im, **in);
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
    return im.define_constant(std::move(d), (*in)->integer);
}

Status squeeze(Importer& im, bool unsqueeze) {
    Result<const Val*> in = im.input(0);
    if (!in) return in.status();
    std::vector<int64_t> axes = im.attr_ints("axes");
    if (im.has_input(1)) {
        Result<const TensorData*> a = im.constant(1);
        if (!a) return a.status();
        for (float f : (*a)->values) axes.push_back(to_int(f));
    }
    const std::vector<int64_t> source = im.shape_of(**in);
    std::vector<int64_t> shape = source;
    if (unsqueeze) {
        const int64_t rank = static_cast<int64_t>(shape.size() + axes.size());
        for (int64_t& a : axes) a = a < 0 ? a + rank : a;
        std::sort(axes.begin(), axes.end());
        for (int64_t a : axes) {
            if (a < 0 || a > static_cast<int64_t>(shape.size())) return im.fail("axes are invalid");
            shape.insert(shape.begin() + a, 1);
        }
    } else {
        const int64_t rank = static_cast<int64_t>(shape.size());
        std::vector<int64_t> kept;
        for (int64_t i = 0; i < rank; ++i) {
            const bool listed =
                axes.empty() ? shape[size_t(i)] == 1
                             : std::any_of(axes.begin(), axes.end(),
                                           [&](int64_t a) { return (a < 0 ? a + rank : a) == i; });
            if (!listed) kept.push_back(shape[size_t(i)]);
        }
        shape = kept;
    }
    if (!(*in)->constant) {
        if (!source.empty() && source.size() >= 2 && (shape.empty() || shape[0] != source[0]))
            return im.fail("the batch axis would move (each batch item runs separately)");
        return reshape_feature(im, **in, source, shape);
    }
    TensorData d = (*in)->data;
    d.shape = shape;
    return im.define_constant(std::move(d), (*in)->integer);
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

// Elements `indices` along `axis` of a constant (the axis keeps its place, with indices.size()
// elements).
TensorData take_constant(const TensorData& d, size_t axis, const std::vector<int64_t>& indices) {
    TensorData out;
    out.shape = d.shape;
    out.shape[axis] = static_cast<int64_t>(indices.size());
    const uint64_t outer =
        product(std::vector<int64_t>(d.shape.begin(), d.shape.begin() + long(axis)));
    const uint64_t inner = product(d.shape, axis + 1);
    const uint64_t n = uint64_t(d.shape[axis]);
    for (uint64_t o = 0; o < outer; ++o)
        for (int64_t i : indices)
            for (uint64_t k = 0; k < inner; ++k)
                out.values.push_back(d.values[(o * n + uint64_t(i)) * inner + k]);
    return out;
}

// Elements `indices` along ONNX axis `axis` of feature x: a channel slice where they are
// consecutive channels, else a CPU gather. The axis keeps its place.
Result<Tensor> take_feature(Importer& im, const Val& x, int64_t axis,
                            const std::vector<int64_t>& indices, const std::string& name) {
    const int b = builder_axis(axis, x.rank);
    if (b <= 0)
        return im.fail("axis " + std::to_string(axis) +
                       (b == 0 ? " is the batch dimension (each batch item runs separately)"
                               : " is out of range"));
    bool consecutive = !indices.empty();
    for (size_t i = 1; i < indices.size(); ++i)
        consecutive = consecutive && indices[i] == indices[i - 1] + 1;
    const Dims4 d = im.dims(x);
    const uint32_t extent = b == 1 ? d.c : b == 2 ? d.h : d.w;
    if (consecutive && indices.front() == 0 && indices.size() == extent) return x.tensor;
    if (b == 1 && consecutive)
        return im.network().slice_channels(x.tensor, static_cast<uint32_t>(indices.front()),
                                           static_cast<uint32_t>(indices.back() + 1), name);
    std::vector<int64_t> ints = {b};
    ints.insert(ints.end(), indices.begin(), indices.end());
    return im.cpu({x.tensor}, builder::CpuOpKind::Gather, ints, {}, {}, name);
}

// Normalizes an index against an axis of `n` elements (negative from the end); false if out of
// range.
bool normalize_index(int64_t& i, int64_t n) {
    if (i < 0) i += n;
    return i >= 0 && i < n;
}

Status shape(Importer& im) {
    Result<const Val*> in = im.input(0);
    if (!in) return in.status();
    const std::vector<int64_t> s = im.shape_of(**in);
    const int64_t rank = static_cast<int64_t>(s.size());
    int64_t start = im.attr_int("start", 0), end = im.attr_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    TensorData d;
    for (int64_t i = start; i < end; ++i) d.values.push_back(static_cast<float>(s[size_t(i)]));
    d.shape = {end - start};
    return im.define_constant(std::move(d), true);
}

Status gather(Importer& im) {
    Result<const Val*> in = im.input(0);
    if (!in) return in.status();
    Result<const TensorData*> idx = im.constant(1);
    if (!idx) return idx.status();
    const std::vector<int64_t> s = im.shape_of(**in);
    const int64_t rank = static_cast<int64_t>(s.size());
    int64_t axis = im.attr_int("axis", 0);
    if (axis < -rank || axis >= rank)
        return im.fail("axis " + std::to_string(axis) + " is out of range");
    if (axis < 0) axis += rank;
    std::vector<int64_t> indices;
    for (float f : (*idx)->values) {
        int64_t i = to_int(f);
        if (!normalize_index(i, s[size_t(axis)]))
            return im.fail("index " + std::to_string(int64_t(f)) + " is out of range");
        indices.push_back(i);
    }
    // The output shape: the indices' shape in place of the axis.
    std::vector<int64_t> shape(s.begin(), s.begin() + axis);
    shape.insert(shape.end(), (*idx)->shape.begin(), (*idx)->shape.end());
    shape.insert(shape.end(), s.begin() + axis + 1, s.end());
    if ((*in)->constant) {
        TensorData d = take_constant((*in)->data, size_t(axis), indices);
        d.shape = shape;
        return im.define_constant(std::move(d), (*in)->integer);
    }
    if ((*idx)->shape.size() > 1) return im.fail("indices of rank above 1 are not supported");
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    Result<Tensor> t = take_feature(im, **x, axis, indices, im.layer_name());
    if (!t) return t.status();
    return im.define_shaped(*t, shape, 0, "_reshape");
}

Status slice(Importer& im) {
    Result<const Val*> in = im.input(0);
    if (!in) return in.status();
    std::vector<int64_t> starts, ends, axes, steps;
    if (im.opset() < 10) {
        starts = im.attr_ints("starts");
        ends = im.attr_ints("ends");
        axes = im.attr_ints("axes");
    } else {
        std::vector<int64_t>* lists[4] = {&starts, &ends, &axes, &steps};
        for (int i = 1; i <= 4; ++i) {
            if (!im.has_input(i)) continue;
            Result<const TensorData*> c = im.constant(i);
            if (!c) return c.status();
            for (float f : (*c)->values) lists[i - 1]->push_back(to_int(f));
        }
    }
    std::vector<int64_t> shape = im.shape_of(**in);
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size())
        return im.fail("starts, ends, axes and steps have different lengths");
    const Val* current = *in;
    Val folded;
    Tensor t;
    bool feature = !(*in)->constant;
    if (feature) {
        Result<const Val*> x = im.feature(0);
        if (!x) return x.status();
        current = *x;
        t = (*x)->tensor;
    } else {
        folded = **in;
    }
    for (size_t k = 0; k < starts.size(); ++k) {
        int64_t axis = axes[k];
        if (axis < -rank || axis >= rank)
            return im.fail("axis " + std::to_string(axis) + " is out of range");
        if (axis < 0) axis += rank;
        const int64_t n = shape[size_t(axis)], step = steps[k];
        if (step == 0) return im.fail("a step is 0");
        // ONNX's clamping of starts and ends.
        auto clamp = [&](int64_t v, bool is_end) {
            if (v < 0) v += n;
            if (step > 0) return std::clamp<int64_t>(v, 0, n);
            return std::clamp<int64_t>(v, is_end ? -1 : 0, n - 1);
        };
        const int64_t begin = clamp(starts[k], false), end = clamp(ends[k], true);
        std::vector<int64_t> indices;
        for (int64_t i = begin; step > 0 ? i < end : i > end; i += step) indices.push_back(i);
        if (indices.empty()) return im.fail("a slice is empty");
        shape[size_t(axis)] = static_cast<int64_t>(indices.size());
        if (!feature) {
            folded.data = take_constant(folded.data, size_t(axis), indices);
            continue;
        }
        Val v = *current;
        v.tensor = t;
        Result<Tensor> r = take_feature(
            im, v, axis, indices,
            starts.size() == 1 ? im.layer_name() : im.layer_name() + "_" + std::to_string(k));
        if (!r) return r.status();
        t = *r;
    }
    if (!feature) return im.define_constant(std::move(folded.data), folded.integer);
    return im.define_shaped(t, shape, 0, "_reshape");
}

Status split(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    const std::vector<int64_t> s = im.shape_of(**x);
    const int64_t rank = static_cast<int64_t>(s.size());
    int64_t axis = im.attr_int("axis", 0);
    if (axis < -rank || axis >= rank)
        return im.fail("axis " + std::to_string(axis) + " is out of range");
    if (axis < 0) axis += rank;
    std::vector<int64_t> sizes = im.attr_ints("split");
    if (im.has_input(1)) {
        Result<const TensorData*> c = im.constant(1);
        if (!c) return c.status();
        for (float f : (*c)->values) sizes.push_back(to_int(f));
    }
    const int64_t n = s[size_t(axis)];
    const int outputs = im.node().output_size();
    if (sizes.empty()) {
        const int64_t parts = im.attr_int("num_outputs", outputs);
        const int64_t each = (n + parts - 1) / parts;
        for (int64_t begin = 0; begin < n; begin += each)
            sizes.push_back(std::min(each, n - begin));
    }
    int64_t total = 0;
    for (int64_t v : sizes) {
        if (v <= 0) return im.fail("split sizes must be positive");
        total += v;
    }
    if (total != n || static_cast<int>(sizes.size()) != outputs)
        return im.fail("split sizes " + shape_text(sizes) + " do not divide axis " +
                       std::to_string(axis) + " of " + std::to_string(n) + " into " +
                       std::to_string(outputs) + " outputs");
    int64_t begin = 0;
    for (int o = 0; o < outputs; ++o) {
        std::vector<int64_t> indices;
        for (int64_t i = 0; i < sizes[size_t(o)]; ++i) indices.push_back(begin + i);
        begin += sizes[size_t(o)];
        if (!im.output_used(o)) continue;
        Result<Tensor> t = take_feature(im, **x, axis, indices, im.node().output(o));
        if (!t) return t.status();
        std::vector<int64_t> shape = s;
        shape[size_t(axis)] = sizes[size_t(o)];
        if (Status st = im.define_shaped(*t, shape, o, "_reshape_" + std::to_string(o)); !st)
            return st;
    }
    return Status();
}

Status cast(Importer& im) {
    Result<const Val*> in = im.input(0);
    if (!in) return in.status();
    const int64_t to = im.attr_int("to", ::onnx::TensorProto_DataType_FLOAT);
    const bool to_float = to == ::onnx::TensorProto_DataType_FLOAT ||
                          to == ::onnx::TensorProto_DataType_DOUBLE ||
                          to == ::onnx::TensorProto_DataType_FLOAT16;
    const bool to_integer =
        to == ::onnx::TensorProto_DataType_INT64 || to == ::onnx::TensorProto_DataType_INT32;
    if ((*in)->constant) {
        if (!to_float && !to_integer)
            return im.fail("casting to type " + std::to_string(to) + " is not supported");
        TensorData d = (*in)->data;
        if (to_integer)
            for (float& v : d.values) v = std::trunc(v);
        return im.define_constant(std::move(d), to_integer);
    }
    if (!to_float) return im.fail("a feature tensor can only be cast to a float type");
    im.define(im.node().output(0), **in);
    return Status();
}

Status constant_of_shape(Importer& im) {
    Result<const TensorData*> s = im.constant(0);
    if (!s) return s.status();
    TensorData d;
    for (float f : (*s)->values) {
        if (f < 0) return im.fail("a dimension is negative");
        d.shape.push_back(to_int(f));
    }
    float value = 0;
    bool integer = false;
    if (const auto* a = im.attr("value")) {
        Result<TensorData> v = from_proto(a->t());
        if (!v) return im.fail(v.message());
        if (v->values.size() != 1) return im.fail("value must hold one element");
        value = v->values[0];
        integer = a->t().data_type() == ::onnx::TensorProto_DataType_INT64 ||
                  a->t().data_type() == ::onnx::TensorProto_DataType_INT32;
    }
    if (!within(d.shape, uint64_t(1) << 24)) return im.fail("the constant is too large");
    d.values.assign(product(d.shape), value);
    return im.define_constant(std::move(d), integer);
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
    table["Shape"] = shape;
    table["Gather"] = gather;
    table["Slice"] = slice;
    table["Split"] = split;
    table["Cast"] = cast;
    table["ConstantOfShape"] = constant_of_shape;
}

}  // namespace nvdla::onnx::detail
