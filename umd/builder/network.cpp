// Network construction: argument checks, shape inference and the node list.
#include <cmath>
#include <sstream>
#include <utility>

#include "builder/graph.hpp"
#include "builder/modern_ops.hpp"
#include "builder/recorder.hpp"

namespace nvdla::builder {

using detail::dims_text;
using detail::Node;
using detail::Op;

namespace detail {

const char* op_name(Op op) {
    switch (op) {
        case Op::Input: return "input";
        case Op::Convolution: return "convolution";
        case Op::Deconvolution: return "deconvolution";
        case Op::FullyConnected: return "fully connected";
        case Op::Pooling: return "pooling";
        case Op::Lrn: return "LRN";
        case Op::Affine: return "scale";
        case Op::Relu: return "ReLU";
        case Op::PRelu: return "PReLU";
        case Op::Sigmoid: return "sigmoid";
        case Op::Tanh: return "tanh";
        case Op::Eltwise: return "element-wise";
        case Op::Clip: return "clip";
        case Op::Mish: return "mish";
        case Op::Pad: return "pad";
        case Op::Slice: return "slice";
        case Op::ResizeNearest: return "nearest resize";
        case Op::ResizeBilinear: return "bilinear resize";
        case Op::Concat: return "concat";
        case Op::Flatten: return "flatten";
        case Op::Softmax: return "softmax";
        case Op::Cpu: return "CPU operation";
    }
    return "?";
}

}  // namespace detail

std::string Network::Impl::describe(uint32_t id) const {
    const Node& n = nodes.at(id);
    return "layer '" + n.name + "' (" + (n.kind.empty() ? detail::op_name(n.op) : n.kind) + ")";
}

namespace {

bool finite(std::span<const float> v) {
    for (float x : v)
        if (!std::isfinite(x)) return false;
    return true;
}

}  // namespace

Network::Network(std::string name) : impl_(std::make_unique<Impl>()) {
    impl_->name = std::move(name);
}
Network::~Network() = default;
Network::Network(Network&&) noexcept = default;
Network& Network::operator=(Network&&) noexcept = default;

const std::string& Network::name() const {
    return impl_->name;
}
Status Network::status() const {
    return impl_->error;
}

Dims4 Network::dims(Tensor t) const {
    if (!t.valid() || t.id >= impl_->nodes.size()) return {0, 0, 0, 0};
    return impl_->nodes[t.id].dims;
}

std::string Network::tensor_name(Tensor t) const {
    if (!t.valid() || t.id >= impl_->nodes.size()) return "";
    return impl_->nodes[t.id].name;
}

std::vector<Tensor> Network::inputs() const {
    std::vector<Tensor> out;
    for (uint32_t id : impl_->inputs) out.push_back(Tensor{id});
    return out;
}

std::vector<Tensor> Network::outputs() const {
    std::vector<Tensor> out;
    for (const auto& o : impl_->outputs) out.push_back(Tensor{o.tensor});
    return out;
}

size_t Network::layer_count() const {
    return impl_->nodes.size() - impl_->inputs.size();
}

Tensor Network::input(const std::string& name, Dims4 dims, HostLayout layout) {
    LayerRecorder r(*impl_, Op::Input, "input", name, {});
    r.node().layout = layout;
    if (name.empty()) r.fail("an input needs a name");
    if (dims.n != 1) r.fail("batch ", dims.n, " is not supported; n must be 1");
    for (const auto& n : impl_->nodes)
        if (n.op == Op::Input && n.name == name) r.fail("another input has this name");
    const Tensor t = r.finish(dims);
    if (t.valid()) impl_->inputs.push_back(t.id);
    return t;
}

namespace {

// Output extent of a window layer, or 0 when the window does not fit.
uint32_t window_out(uint32_t in, uint32_t pad_begin, uint32_t pad_end, uint32_t kernel,
                    uint32_t dilation, uint32_t stride) {
    const uint64_t span = uint64_t(kernel - 1) * dilation + 1;
    const uint64_t padded = uint64_t(in) + pad_begin + pad_end;
    if (stride == 0 || kernel == 0 || span > padded) return 0;
    return static_cast<uint32_t>((padded - span) / stride + 1);
}

}  // namespace

Tensor Network::convolution(Tensor x, const ConvolutionDesc& d, std::span<const float> weights,
                            std::span<const float> bias, const std::string& name) {
    LayerRecorder r(*impl_, Op::Convolution, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    const Dims4 in = r.in();
    if (d.out_channels == 0) r.fail("out_channels is 0");
    if (d.kernel_h == 0 || d.kernel_w == 0) r.fail("the kernel is ", d.kernel_h, "x", d.kernel_w);
    if (d.stride_h == 0 || d.stride_w == 0) r.fail("the stride is ", d.stride_h, "x", d.stride_w);
    if (d.dilation_h == 0 || d.dilation_w == 0)
        r.fail("the dilation is ", d.dilation_h, "x", d.dilation_w);
    if (d.groups == 0 || in.c % std::max(d.groups, 1u) || d.out_channels % std::max(d.groups, 1u))
        r.fail(d.groups, " groups do not divide the ", in.c, " input and ", d.out_channels,
               " output channels");
    if (!r.ok()) return r.finish({});
    const uint64_t expected =
        uint64_t(d.out_channels) * (in.c / d.groups) * d.kernel_h * d.kernel_w;
    if (weights.size() != expected)
        r.fail(weights.size(), " weights given, ", d.out_channels, "x", in.c / d.groups, "x",
               d.kernel_h, "x", d.kernel_w, " = ", expected, " expected");
    if (!bias.empty() && bias.size() != d.out_channels)
        r.fail(bias.size(), " bias values given, ", d.out_channels, " expected");
    if (!finite(weights) || !finite(bias)) r.fail("weights or bias hold NaN or infinity");
    const uint32_t oh =
        window_out(in.h, d.pad_top, d.pad_bottom, d.kernel_h, d.dilation_h, d.stride_h);
    const uint32_t ow =
        window_out(in.w, d.pad_left, d.pad_right, d.kernel_w, d.dilation_w, d.stride_w);
    if (r.ok() && (oh == 0 || ow == 0))
        r.fail("the dilated ", d.kernel_h, "x", d.kernel_w, " kernel does not fit the padded ",
               in.h, "x", in.w, " input");
    r.node().conv = d;
    r.node().weights.assign(weights.begin(), weights.end());
    r.node().bias.assign(bias.begin(), bias.end());
    return r.finish({1, d.out_channels, oh, ow});
}

Tensor Network::deconvolution(Tensor x, const DeconvolutionDesc& d, std::span<const float> weights,
                              std::span<const float> bias, const std::string& name) {
    LayerRecorder r(*impl_, Op::Deconvolution, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    const Dims4 in = r.in();
    if (d.out_channels == 0) r.fail("out_channels is 0");
    if (d.kernel_h == 0 || d.kernel_w == 0) r.fail("the kernel is ", d.kernel_h, "x", d.kernel_w);
    if (d.stride_h == 0 || d.stride_w == 0) r.fail("the stride is ", d.stride_h, "x", d.stride_w);
    if (d.groups == 0 || in.c % std::max(d.groups, 1u) || d.out_channels % std::max(d.groups, 1u))
        r.fail(d.groups, " groups do not divide the ", in.c, " input and ", d.out_channels,
               " output channels");
    if (!r.ok()) return r.finish({});
    const uint64_t expected =
        uint64_t(in.c) * (d.out_channels / d.groups) * d.kernel_h * d.kernel_w;
    if (weights.size() != expected)
        r.fail(weights.size(), " weights given, ", in.c, "x", d.out_channels / d.groups, "x",
               d.kernel_h, "x", d.kernel_w, " = ", expected, " expected");
    if (!bias.empty() && bias.size() != d.out_channels)
        r.fail(bias.size(), " bias values given, ", d.out_channels, " expected");
    if (!finite(weights) || !finite(bias)) r.fail("weights or bias hold NaN or infinity");
    if (d.output_pad_h >= d.stride_h || d.output_pad_w >= d.stride_w)
        r.fail("output padding ", d.output_pad_h, "x", d.output_pad_w,
               " must be smaller than the stride ", d.stride_h, "x", d.stride_w);
    const int64_t oh =
        int64_t(in.h - 1) * d.stride_h + d.kernel_h - d.pad_top - d.pad_bottom + d.output_pad_h;
    const int64_t ow =
        int64_t(in.w - 1) * d.stride_w + d.kernel_w - d.pad_left - d.pad_right + d.output_pad_w;
    if (r.ok() && (oh <= 0 || ow <= 0))
        r.fail("the padding removes the whole ", (in.h - 1) * d.stride_h + d.kernel_h, "x",
               (in.w - 1) * d.stride_w + d.kernel_w, " output");
    if (r.ok() && (d.pad_top >= d.kernel_h || d.pad_bottom >= d.kernel_h ||
                   d.pad_left >= d.kernel_w || d.pad_right >= d.kernel_w))
        r.fail("padding ", d.pad_top, ",", d.pad_left, ",", d.pad_bottom, ",", d.pad_right,
               " must be smaller than the ", d.kernel_h, "x", d.kernel_w, " kernel");
    r.node().deconv = d;
    r.node().weights.assign(weights.begin(), weights.end());
    r.node().bias.assign(bias.begin(), bias.end());
    if (!r.ok()) return r.finish({});
    return r.finish({1, d.out_channels, static_cast<uint32_t>(oh), static_cast<uint32_t>(ow)});
}

Tensor Network::fully_connected(Tensor x, uint32_t outputs, std::span<const float> weights,
                                std::span<const float> bias, const std::string& name) {
    LayerRecorder r(*impl_, Op::FullyConnected, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    Dims4 in = r.in();
    // A flatten in front is a view: the weights already follow the NCHW order.
    if (impl_->nodes[r.node().inputs[0]].op == Op::Flatten)
        in = impl_->nodes[impl_->nodes[r.node().inputs[0]].inputs[0]].dims;
    if (outputs == 0) r.fail("outputs is 0");
    const uint64_t per = uint64_t(in.c) * in.h * in.w;
    if (weights.size() != uint64_t(outputs) * per)
        r.fail(weights.size(), " weights given, ", outputs, "x", per, " = ",
               uint64_t(outputs) * per, " expected");
    if (!bias.empty() && bias.size() != outputs)
        r.fail(bias.size(), " bias values given, ", outputs, " expected");
    if (!finite(weights) || !finite(bias)) r.fail("weights or bias hold NaN or infinity");
    ConvolutionDesc d;
    d.out_channels = outputs;
    d.kernel_h = in.h;
    d.kernel_w = in.w;
    r.node().conv = d;
    r.node().weights.assign(weights.begin(), weights.end());
    r.node().bias.assign(bias.begin(), bias.end());
    return r.finish({1, outputs, 1, 1});
}

Tensor Network::pooling(Tensor x, const PoolingDesc& d, const std::string& name) {
    LayerRecorder r(*impl_, Op::Pooling, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    const Dims4 in = r.in();
    if (d.kernel_h == 0 || d.kernel_w == 0) r.fail("the kernel is ", d.kernel_h, "x", d.kernel_w);
    if (d.stride_h == 0 || d.stride_w == 0) r.fail("the stride is ", d.stride_h, "x", d.stride_w);
    if (d.pad_top >= d.kernel_h || d.pad_bottom >= d.kernel_h || d.pad_left >= d.kernel_w ||
        d.pad_right >= d.kernel_w)
        r.fail("padding ", d.pad_top, ",", d.pad_left, ",", d.pad_bottom, ",", d.pad_right,
               " must be smaller than the ", d.kernel_h, "x", d.kernel_w, " window");
    if (!r.ok()) return r.finish({});
    const uint32_t oh = window_out(in.h, d.pad_top, d.pad_bottom, d.kernel_h, 1, d.stride_h);
    const uint32_t ow = window_out(in.w, d.pad_left, d.pad_right, d.kernel_w, 1, d.stride_w);
    if (oh == 0 || ow == 0)
        r.fail("the ", d.kernel_h, "x", d.kernel_w, " window does not fit the padded ", in.h, "x",
               in.w, " input");
    r.node().pool = d;
    return r.finish({1, in.c, oh, ow});
}

Tensor Network::lrn(Tensor x, const LrnDesc& d, const std::string& name) {
    LayerRecorder r(*impl_, Op::Lrn, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    if (d.local_size != 3 && d.local_size != 5 && d.local_size != 7 && d.local_size != 9)
        r.fail("local_size is ", d.local_size, "; the CDP sums 3, 5, 7 or 9 channels");
    if (!(d.k > 0) || !(d.alpha >= 0) || !std::isfinite(d.beta) || !std::isfinite(d.alpha) ||
        !std::isfinite(d.k))
        r.fail("k ", d.k, ", alpha ", d.alpha, ", beta ", d.beta,
               ": k must be > 0, alpha >= 0, all finite");
    r.node().lrn = d;
    return r.finish(r.in());
}

namespace {

// One value per channel, or one for all: expanded to c values.
bool per_channel(LayerRecorder& r, std::span<const float> v, uint32_t c, const char* what,
                 std::vector<float>& out, bool allow_empty, float empty_value) {
    if (v.empty() && allow_empty) {
        out.assign(c, empty_value);
        return true;
    }
    if (v.size() != c && v.size() != 1) {
        r.fail(v.size(), " ", what, " values given, ", c, " (one per channel) or 1 expected");
        return false;
    }
    if (!finite(v)) {
        r.fail(what, " values hold NaN or infinity");
        return false;
    }
    out.assign(c, v[0]);
    if (v.size() == c) out.assign(v.begin(), v.end());
    return true;
}

}  // namespace

Tensor Network::batch_norm(Tensor x, std::span<const float> mean, std::span<const float> variance,
                           std::span<const float> gamma, std::span<const float> beta, float epsilon,
                           const std::string& name) {
    LayerRecorder r(*impl_, Op::Affine, "batch norm", name, {x});
    if (!r.ok()) return r.finish({});
    const uint32_t c = r.in().c;
    std::vector<float> m, v, g, b;
    if (!per_channel(r, mean, c, "mean", m, false, 0) ||
        !per_channel(r, variance, c, "variance", v, false, 0) ||
        !per_channel(r, gamma, c, "gamma", g, true, 1) ||
        !per_channel(r, beta, c, "beta", b, true, 0))
        return r.finish({});
    if (!(epsilon >= 0) || !std::isfinite(epsilon)) r.fail("epsilon is ", epsilon);
    for (uint32_t i = 0; i < c && r.ok(); ++i)
        if (!(v[i] + epsilon > 0))
            r.fail("channel ", i, ": variance + epsilon is ", v[i] + epsilon, ", not positive");
    if (!r.ok()) return r.finish({});
    Node& n = r.node();
    n.scale.resize(c);
    n.shift.resize(c);
    for (uint32_t i = 0; i < c; ++i) {
        const double s = double(g[i]) / std::sqrt(double(v[i]) + epsilon);
        n.scale[i] = static_cast<float>(s);
        n.shift[i] = static_cast<float>(double(b[i]) - double(m[i]) * s);
    }
    return r.finish(r.in());
}

Tensor Network::scale(Tensor x, std::span<const float> scale, std::span<const float> shift,
                      const std::string& name) {
    LayerRecorder r(*impl_, Op::Affine, "scale", name, {x});
    if (!r.ok()) return r.finish({});
    const uint32_t c = r.in().c;
    if (!per_channel(r, scale, c, "scale", r.node().scale, false, 1) ||
        !per_channel(r, shift, c, "shift", r.node().shift, true, 0))
        return r.finish({});
    return r.finish(r.in());
}

Tensor Network::bias(Tensor x, std::span<const float> bias, const std::string& name) {
    LayerRecorder r(*impl_, Op::Affine, "bias", name, {x});
    if (!r.ok()) return r.finish({});
    const uint32_t c = r.in().c;
    if (!per_channel(r, bias, c, "bias", r.node().shift, false, 0)) return r.finish({});
    r.node().scale.assign(c, 1.0f);
    return r.finish(r.in());
}

Tensor Network::relu(Tensor x, const std::string& name) {
    LayerRecorder r(*impl_, Op::Relu, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    return r.finish(r.in());
}

Tensor Network::prelu(Tensor x, std::span<const float> slopes, const std::string& name) {
    LayerRecorder r(*impl_, Op::PRelu, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    if (!per_channel(r, slopes, r.in().c, "slope", r.node().scale, false, 0)) return r.finish({});
    return r.finish(r.in());
}

Tensor Network::sigmoid(Tensor x, const std::string& name) {
    LayerRecorder r(*impl_, Op::Sigmoid, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    return r.finish(r.in());
}

Tensor Network::tanh(Tensor x, const std::string& name) {
    LayerRecorder r(*impl_, Op::Tanh, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    return r.finish(r.in());
}

Tensor Network::eltwise(Tensor a, Tensor b, EltwiseOp op, const std::string& name) {
    return detail::broadcast_eltwise(*impl_, a, b, op, name);
}

Tensor Network::concat(std::span<const Tensor> inputs, const std::string& name) {
    LayerRecorder r(*impl_, Op::Concat, nullptr, name, {});
    for (Tensor t : inputs) r.add_input(t);
    if (!r.ok()) return r.finish({});
    if (inputs.empty()) r.fail("no inputs");
    if (!r.ok()) return r.finish({});
    Dims4 out = r.in(0);
    out.c = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const Dims4 d = r.in(i);
        if (d.h != out.h || d.w != out.w)
            r.fail("input ", i, " is ", dims_text(d), " but input 0 is ", dims_text(r.in(0)),
                   "; heights and widths must match");
        out.c += d.c;
    }
    return r.finish(out);
}

Tensor Network::flatten(Tensor x, const std::string& name) {
    LayerRecorder r(*impl_, Op::Flatten, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    const Dims4 in = r.in();
    const uint64_t c = uint64_t(in.c) * in.h * in.w;
    if (c > 0xffffffffu) r.fail(c, " values do not fit one dimension");
    return r.finish({1, static_cast<uint32_t>(c), 1, 1});
}

Tensor Network::softmax(Tensor x, const std::string& name) {
    LayerRecorder r(*impl_, Op::Softmax, nullptr, name, {x});
    if (!r.ok()) return r.finish({});
    return r.finish(r.in());
}

void Network::output(Tensor x, const std::string& name, HostLayout layout) {
    if (!x.valid()) return;
    auto fail = [&](const std::string& m) {
        if (impl_->error.ok()) impl_->error = Status::failure("output '" + name + "': " + m);
    };
    if (x.id >= impl_->nodes.size()) return fail("the tensor does not belong to this network");
    if (name.empty()) return fail("an output needs a name");
    for (const auto& o : impl_->outputs) {
        if (o.name == name) return fail("another output has this name");
        if (o.tensor == x.id)
            return fail("tensor '" + impl_->nodes[x.id].name + "' is already output '" + o.name +
                        "'");
    }
    impl_->outputs.push_back({x.id, name, layout});
}

}  // namespace nvdla::builder
