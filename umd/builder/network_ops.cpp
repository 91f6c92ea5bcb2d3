// Network construction for the operators of post-2018 vision models. Several are compositions
// of the builder's existing layers (each inner node named "<layer>/<part>" and carrying the
// operator's name as its kind, so errors still name what the caller asked for):
//   hard_sigmoid  = scale(alpha, beta) -> clip(0, 1)
//   hard_swish    = x * hard_sigmoid(x; 1/6, 1/2)
//   silu          = x * sigmoid(x)
//   subtraction   = a + (-1 * b)
//   broadcasting  = b expanded across channels by a 1x1 convolution of ones where the SDP
//                   cannot read it as a per-channel operand
//   shuffle       = a 1x1 convolution with a permutation matrix
// The others (clip, mish, pad, slice, resizing) are nodes of their own.
#include <cmath>
#include <limits>

#include "builder/modern_ops.hpp"
#include "builder/recorder.hpp"

namespace nvdla::builder {

using detail::dims_text;

namespace {

std::string part(const std::string& name, const char* suffix, size_t index) {
    return (name.empty() ? std::string("op_") + std::to_string(index) : name) + "/" + suffix;
}

// An inner node: y = x * scale + shift (one value for every channel).
Tensor inner_affine(Network::Impl& net, Tensor x, float scale, float shift, const char* kind,
                    const std::string& name, bool shares_scale) {
    LayerRecorder r(net, Op::Affine, kind, name, {x});
    if (!r.ok()) return r.finish({});
    r.node().scale.assign(r.in().c, scale);
    r.node().shift.assign(r.in().c, shift);
    r.node().shares_input_scale = shares_scale;
    r.node().range_gain = std::fabs(scale);
    r.node().range_offset = std::fabs(shift);
    return r.finish(r.in());
}

Tensor inner_clip(Network::Impl& net, Tensor x, float lo, float hi, const char* kind,
                  const std::string& name) {
    LayerRecorder r(net, Op::Clip, kind, name, {x});
    if (!r.ok()) return r.finish({});
    if (std::isnan(lo) || std::isnan(hi) || lo > hi)
        r.fail("the bounds ", lo, " and ", hi, " are not an interval (min <= max, no NaN)");
    r.node().clip_min = lo;
    r.node().clip_max = hi;
    r.node().range_gain = 1;
    if (std::isfinite(lo) && std::isfinite(hi)) {
        r.node().range_gain = 0;
        r.node().range_offset = std::max(std::fabs(lo), std::fabs(hi));
    }
    return r.finish(r.in());
}

// A 1x1 convolution whose output channel k is the sum of the input channels with a 1 in
// row k of `ones` (out x in, 0 or 1).
Tensor selection_conv(Network::Impl& net, Tensor x, uint32_t out_channels,
                      const std::vector<float>& ones, const char* kind, const std::string& name) {
    LayerRecorder r(net, Op::Convolution, kind, name, {x});
    if (!r.ok()) return r.finish({});
    ConvolutionDesc d;
    d.out_channels = out_channels;
    r.node().conv = d;
    r.node().weights = ones;
    r.node().shares_input_scale = true;
    const Dims4 in = r.in();
    return r.finish({1, out_channels, in.h, in.w});
}

Tensor resize(Network::Impl& net, Op op, Tensor x, uint32_t scale_h, uint32_t scale_w,
              const std::string& name) {
    LayerRecorder r(net, op, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    if (scale_h == 0 || scale_w == 0 || scale_h > 32 || scale_w > 32)
        r.fail("the scales ", scale_h, "x", scale_w, " must be integers from 1 to 32");
    if (!r.ok()) return r.finish({});
    const Dims4 in = r.in();
    r.node().scales = {scale_h, scale_w};
    r.node().shares_input_scale = true;
    const uint64_t h = uint64_t(in.h) * scale_h, w = uint64_t(in.w) * scale_w;
    if (h > 8192 || w > 8192) r.fail("the output plane ", h, "x", w, " is beyond 8192x8192");
    if (!r.ok()) return r.finish({});
    return r.finish({1, in.c, static_cast<uint32_t>(h), static_cast<uint32_t>(w)});
}

}  // namespace

Tensor Network::clip(Tensor x, float min, float max, const std::string& name) {
    return inner_clip(*impl_, x, min, max, nullptr, name);
}

Tensor Network::hard_sigmoid(Tensor x, float alpha, float beta, const std::string& name) {
    if (!std::isfinite(alpha) || !std::isfinite(beta)) {
        LayerRecorder r(*impl_, Op::Clip, "hard sigmoid", name, {x});
        r.fail("alpha ", alpha, " and beta ", beta, " must be finite");
        return r.finish({});
    }
    const size_t at = impl_->nodes.size();
    Tensor t =
        inner_affine(*impl_, x, alpha, beta, "hard sigmoid", part(name, "linear", at), false);
    return inner_clip(*impl_, t, 0.0f, 1.0f, "hard sigmoid", name);
}

Tensor Network::hard_swish(Tensor x, const std::string& name) {
    const size_t at = impl_->nodes.size();
    Tensor t =
        inner_affine(*impl_, x, 1.0f / 6.0f, 0.5f, "hard swish", part(name, "linear", at), false);
    t = inner_clip(*impl_, t, 0.0f, 1.0f, "hard swish", part(name, "gate", at));
    LayerRecorder r(*impl_, Op::Eltwise, "hard swish", name, {x, t});
    if (!r.ok()) return r.finish({});
    r.node().eltwise = EltwiseOp::Product;
    return r.finish(r.in());
}

Tensor Network::silu(Tensor x, const std::string& name) {
    const size_t at = impl_->nodes.size();
    Tensor s;
    {
        LayerRecorder r(*impl_, Op::Sigmoid, "SiLU", part(name, "sigmoid", at), {x});
        r.node().range_offset = 1;
        s = r.ok() ? r.finish(r.in()) : r.finish({});
    }
    LayerRecorder r(*impl_, Op::Eltwise, "SiLU", name, {x, s});
    if (!r.ok()) return r.finish({});
    r.node().eltwise = EltwiseOp::Product;
    return r.finish(r.in());
}

Tensor Network::mish(Tensor x, const std::string& name) {
    LayerRecorder r(*impl_, Op::Mish, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    r.node().range_gain = 1;
    r.node().range_offset = 0.31f;  // |mish| <= max(|x|, 0.309)
    return r.finish(r.in());
}

Tensor Network::pad(Tensor x, uint32_t top, uint32_t left, uint32_t bottom, uint32_t right,
                    float value, const std::string& name) {
    LayerRecorder r(*impl_, Op::Pad, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    if (std::isnan(value) || value == std::numeric_limits<float>::infinity())
        r.fail("the pad value ", value, " is neither a number nor -infinity");
    const Dims4 in = r.in();
    const uint64_t h = uint64_t(in.h) + top + bottom, w = uint64_t(in.w) + left + right;
    if (h > 8192 || w > 8192) r.fail("the padded plane ", h, "x", w, " is beyond 8192x8192");
    r.node().pads = {top, left, bottom, right};
    r.node().pad_value = value;
    r.node().range_gain = 1;
    r.node().range_offset = std::isfinite(value) ? std::fabs(value) : 0.0f;
    // Zeros and "-infinity" (for max pooling) need no wider int8 scale than the input's.
    r.node().shares_input_scale = value == 0 || value <= -65504.0f;
    if (!r.ok()) return r.finish({});
    return r.finish({1, in.c, static_cast<uint32_t>(h), static_cast<uint32_t>(w)});
}

Tensor Network::resize_nearest(Tensor x, uint32_t scale_h, uint32_t scale_w,
                               const std::string& name) {
    return resize(*impl_, Op::ResizeNearest, x, scale_h, scale_w, name);
}

Tensor Network::resize_bilinear(Tensor x, uint32_t scale_h, uint32_t scale_w,
                                const std::string& name) {
    return resize(*impl_, Op::ResizeBilinear, x, scale_h, scale_w, name);
}

Tensor Network::slice_channels(Tensor x, uint32_t begin, uint32_t end, const std::string& name) {
    LayerRecorder r(*impl_, Op::Slice, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    const Dims4 in = r.in();
    if (begin >= end || end > in.c)
        r.fail("channels [", begin, ", ", end, ") are not a non-empty part of the ", in.c,
               " channels of the input");
    if (!r.ok()) return r.finish({});
    r.node().slice_begin = begin;
    r.node().shares_input_scale = true;
    return r.finish({1, end - begin, in.h, in.w});
}

Tensor Network::shuffle_channels(Tensor x, uint32_t groups, const std::string& name) {
    const Dims4 in = dims(x);
    if (x.valid() && (groups == 0 || in.c % groups != 0)) {
        LayerRecorder r(*impl_, Op::Convolution, "channel shuffle", name, {x});
        r.fail(groups, " groups do not divide the ", in.c, " channels");
        return r.finish({});
    }
    std::vector<float> ones;
    if (x.valid()) {
        const uint32_t c = in.c, k = c / groups;
        ones.assign(uint64_t(c) * c, 0.0f);
        for (uint32_t g = 0; g < groups; ++g)
            for (uint32_t i = 0; i < k; ++i) ones[size_t(i * groups + g) * c + g * k + i] = 1.0f;
    }
    return selection_conv(*impl_, x, in.c, ones, "channel shuffle", name);
}

namespace detail {

// a {1,C,H,W} with b of the same dims, {1,C,1,1}, {1,1,H,W} or {1,1,1,1}, either way round.
Tensor broadcast_eltwise(Network::Impl& net, Tensor a, Tensor b, EltwiseOp op,
                         const std::string& name) {
    const char* kind = op == EltwiseOp::Sub ? "subtraction" : nullptr;
    auto dims_of = [&](Tensor t) {
        return t.valid() && t.id < net.nodes.size() ? net.nodes[t.id].dims : Dims4{0, 0, 0, 0};
    };
    const Dims4 da = dims_of(a), db = dims_of(b);
    auto broadcasts = [](uint32_t x, uint32_t y) { return x == y || x == 1 || y == 1; };
    const bool valid = a.valid() && b.valid() && a.id < net.nodes.size() && b.id < net.nodes.size();
    const Dims4 out{1, std::max(da.c, db.c), std::max(da.h, db.h), std::max(da.w, db.w)};
    if (!valid || static_cast<uint8_t>(op) > static_cast<uint8_t>(EltwiseOp::Div) ||
        !broadcasts(da.c, db.c) || !broadcasts(da.h, db.h) || !broadcasts(da.w, db.w)) {
        LayerRecorder r(net, Op::Eltwise, kind, name, {a, b});
        if (!r.ok()) return r.finish({});
        if (static_cast<uint8_t>(op) > static_cast<uint8_t>(EltwiseOp::Div))
            r.fail("unknown operation ", static_cast<int>(op));
        else
            r.fail("the inputs are ", dims_text(da), " and ", dims_text(db),
                   "; each of channels, height and width must be equal or 1 in one of them");
        return r.finish({});
    }
    const size_t at = net.nodes.size();
    // Division keeps its operands as given (the CPU divides; the hardware cannot).
    if (op == EltwiseOp::Div) {
        LayerRecorder r(net, Op::Eltwise, nullptr, name, {a, b});
        r.node().eltwise = op;
        return r.finish(out);
    }
    // The full-size operand first: the SDP streams it and reads the other as an operand.
    Tensor big = a, small = b;
    bool swapped = false;
    if (db == out && da != out) {
        std::swap(big, small);
        swapped = true;
    }
    if (dims_of(big) != out) {
        LayerRecorder r(net, Op::Eltwise, kind, name, {a, b});
        r.fail("the inputs are ", dims_text(da), " and ", dims_text(db),
               "; one of them must have the dims of the result");
        return r.finish({});
    }
    if (op == EltwiseOp::Sub) {
        // a - b = a + (-b): the negation folds into b's producer where it can.
        Tensor& negated = swapped ? big : small;
        negated =
            inner_affine(net, negated, -1.0f, 0.0f, "subtraction", part(name, "negate", at), true);
        op = EltwiseOp::Sum;
    }
    const Dims4 ds = dims_of(small);
    if (ds.c == 1 && out.c > 1 && small.valid()) {
        // Across channels: a 1x1 convolution of ones makes the C copies.
        std::vector<float> ones(out.c, 1.0f);
        small = selection_conv(net, small, out.c, ones, "broadcast", part(name, "expand", at));
    }
    LayerRecorder r(net, Op::Eltwise, kind, name, {big, small});
    r.node().eltwise = op;
    return r.finish(out);
}

}  // namespace detail

}  // namespace nvdla::builder
