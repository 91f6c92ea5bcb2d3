// The float reference: every layer in straightforward float32/float64 C++, tensors in NCHW.
// Also calibration (ranges from the reference's tensors), host tensor helpers and compare().
#include <algorithm>
#include <cmath>
#include <limits>

#include "builder/graph.hpp"
#include "builder/modern_ops.hpp"

namespace nvdla::builder {

using detail::Node;
using detail::Op;

HostTensor make_host_tensor(Dims4 dims, HostLayout layout) {
    HostTensor t;
    t.dims = dims;
    t.layout = layout;
    t.data.assign(dims.elements(), 0.0f);
    return t;
}

HostTensor to_layout(const HostTensor& t, HostLayout layout) {
    if (t.layout == layout) return t;
    HostTensor out = make_host_tensor(t.dims, layout);
    for (uint32_t n = 0; n < t.dims.n; ++n)
        for (uint32_t c = 0; c < t.dims.c; ++c)
            for (uint32_t h = 0; h < t.dims.h; ++h)
                for (uint32_t w = 0; w < t.dims.w; ++w) out.at(n, c, h, w) = t.at(n, c, h, w);
    return out;
}

namespace detail {
namespace {

using Plane = std::vector<float>;  // one tensor, NCHW with n = 1

struct View {
    const float* data;
    Dims4 d;
    float at(uint32_t c, uint32_t h, uint32_t w) const {
        return data[(size_t(c) * d.h + h) * d.w + w];
    }
};

// Each output channel accumulates in a double plane, tap by tap in the order (c, r, s): every
// output element sums the same terms in the same order as one element at a time would, so the
// result is the same to the bit, with no bounds test per term.
void convolution(const Node& n, View x, Plane& y) {
    const ConvolutionDesc& p = n.conv;
    const Dims4 o = n.dims;
    const uint32_t cin = x.d.c / p.groups, kout = p.out_channels / p.groups;
    const size_t in_plane = size_t(x.d.h) * x.d.w, out_plane = size_t(o.h) * o.w;
    std::vector<double> acc(out_plane);
    // The output columns [begin, end) whose input column ox * stride + offset lies in the row.
    auto columns = [&](int64_t offset, int64_t& begin, int64_t& end) {
        const int64_t stride = p.stride_w;
        begin = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
        end = x.d.w - 1 - offset >= 0 ? (x.d.w - 1 - offset) / stride + 1 : 0;
        end = std::min<int64_t>(end, o.w);
    };
    for (uint32_t k = 0; k < o.c; ++k) {
        const uint32_t g = k / kout;
        std::fill(acc.begin(), acc.end(), n.bias.empty() ? 0.0 : double(n.bias[k]));
        for (uint32_t c = 0; c < cin; ++c) {
            const float* xc = x.data + size_t(g * cin + c) * in_plane;
            for (uint32_t r = 0; r < p.kernel_h; ++r)
                for (uint32_t s = 0; s < p.kernel_w; ++s) {
                    const double wv =
                        n.weights[((size_t(k) * cin + c) * p.kernel_h + r) * p.kernel_w + s];
                    const int64_t offset = int64_t(s) * p.dilation_w - p.pad_left;
                    int64_t begin = 0, end = 0;
                    columns(offset, begin, end);
                    if (begin >= end) continue;
                    for (uint32_t oy = 0; oy < o.h; ++oy) {
                        const int64_t iy =
                            int64_t(oy) * p.stride_h + int64_t(r) * p.dilation_h - p.pad_top;
                        if (iy < 0 || iy >= x.d.h) continue;
                        const float* row = xc + size_t(iy) * x.d.w;
                        double* out = &acc[size_t(oy) * o.w];
                        if (p.stride_w == 1)
                            for (int64_t ox = begin; ox < end; ++ox)
                                out[ox] += wv * double(row[ox + offset]);
                        else
                            for (int64_t ox = begin; ox < end; ++ox)
                                out[ox] += wv * double(row[ox * p.stride_w + offset]);
                    }
                }
        }
        float* yk = &y[size_t(k) * out_plane];
        for (size_t i = 0; i < out_plane; ++i) yk[i] = static_cast<float>(acc[i]);
    }
}

void deconvolution(const Node& n, View x, Plane& y) {
    const DeconvolutionDesc& p = n.deconv;
    const Dims4 o = n.dims;
    const uint32_t cin = x.d.c / p.groups, kout = p.out_channels / p.groups;
    std::vector<double> acc(o.elements(), 0.0);
    for (uint32_t c = 0; c < x.d.c; ++c) {
        const uint32_t g = c / cin;
        for (uint32_t iy = 0; iy < x.d.h; ++iy)
            for (uint32_t ix = 0; ix < x.d.w; ++ix) {
                const double v = x.at(c, iy, ix);
                if (v == 0) continue;
                for (uint32_t kk = 0; kk < kout; ++kk)
                    for (uint32_t r = 0; r < p.kernel_h; ++r) {
                        const int64_t oy = int64_t(iy) * p.stride_h + r - p.pad_top;
                        if (oy < 0 || oy >= o.h) continue;
                        for (uint32_t s = 0; s < p.kernel_w; ++s) {
                            const int64_t ox = int64_t(ix) * p.stride_w + s - p.pad_left;
                            if (ox < 0 || ox >= o.w) continue;
                            const float wv =
                                n.weights[((size_t(c) * kout + kk) * p.kernel_h + r) * p.kernel_w +
                                          s];
                            acc[(size_t(g * kout + kk) * o.h + size_t(oy)) * o.w + size_t(ox)] +=
                                v * wv;
                        }
                    }
            }
    }
    for (uint32_t k = 0; k < o.c; ++k)
        for (size_t i = 0; i < size_t(o.h) * o.w; ++i)
            y[k * size_t(o.h) * o.w + i] = static_cast<float>(acc[k * size_t(o.h) * o.w + i] +
                                                              (n.bias.empty() ? 0.0 : n.bias[k]));
}

void fully_connected(const Node& n, View x, Plane& y) {
    const size_t per = size_t(x.d.c) * x.d.h * x.d.w;
    for (uint32_t k = 0; k < n.dims.c; ++k) {
        double sum = n.bias.empty() ? 0.0 : n.bias[k];
        const float* w = n.weights.data() + k * per;
        for (size_t i = 0; i < per; ++i) sum += double(w[i]) * x.data[i];
        y[k] = static_cast<float>(sum);
    }
}

void pooling(const Node& n, View x, Plane& y) {
    const PoolingDesc& p = n.pool;
    const Dims4 o = n.dims;
    for (uint32_t c = 0; c < o.c; ++c)
        for (uint32_t oy = 0; oy < o.h; ++oy)
            for (uint32_t ox = 0; ox < o.w; ++ox) {
                double sum = 0;
                float best = -std::numeric_limits<float>::infinity();
                uint32_t count = 0;
                for (uint32_t r = 0; r < p.kernel_h; ++r) {
                    const int64_t iy = int64_t(oy) * p.stride_h + r - p.pad_top;
                    if (iy < 0 || iy >= x.d.h) continue;
                    for (uint32_t s = 0; s < p.kernel_w; ++s) {
                        const int64_t ix = int64_t(ox) * p.stride_w + s - p.pad_left;
                        if (ix < 0 || ix >= x.d.w) continue;
                        const float v = x.at(c, uint32_t(iy), uint32_t(ix));
                        sum += v;
                        best = std::max(best, v);
                        ++count;
                    }
                }
                float v;
                if (p.type == PoolingType::Max)
                    v = count ? best : 0.0f;
                else
                    v = static_cast<float>(sum / (p.count_include_pad
                                                      ? double(p.kernel_h) * p.kernel_w
                                                      : double(count)));
                y[(size_t(c) * o.h + oy) * o.w + ox] = v;
            }
}

void lrn(const Node& n, View x, Plane& y) {
    const LrnDesc& p = n.lrn;
    const int half = int(p.local_size) / 2;
    for (uint32_t c = 0; c < x.d.c; ++c)
        for (uint32_t h = 0; h < x.d.h; ++h)
            for (uint32_t w = 0; w < x.d.w; ++w) {
                double sq = 0;
                for (int j = int(c) - half; j <= int(c) + half; ++j)
                    if (j >= 0 && j < int(x.d.c)) {
                        const double v = x.at(uint32_t(j), h, w);
                        sq += v * v;
                    }
                const double f = std::pow(p.k + p.alpha / p.local_size * sq, -double(p.beta));
                y[(size_t(c) * x.d.h + h) * x.d.w + w] = static_cast<float>(x.at(c, h, w) * f);
            }
}

void softmax(View x, Plane& y) {
    const size_t plane = size_t(x.d.h) * x.d.w;
    for (size_t i = 0; i < plane; ++i) {
        double largest = -std::numeric_limits<double>::infinity();
        for (uint32_t c = 0; c < x.d.c; ++c)
            largest = std::max(largest, double(x.data[c * plane + i]));
        double sum = 0;
        for (uint32_t c = 0; c < x.d.c; ++c)
            sum += std::exp(double(x.data[c * plane + i]) - largest);
        for (uint32_t c = 0; c < x.d.c; ++c)
            y[c * plane + i] =
                static_cast<float>(std::exp(double(x.data[c * plane + i]) - largest) / sum);
    }
}

}  // namespace

void evaluate_node(const Network::Impl& net, uint32_t id, std::vector<std::vector<float>>& t) {
    const Node& n = net.nodes[id];
    if (n.op == Op::Input) return;
    Plane& y = t[id];
    y.assign(n.dims.elements(), 0.0f);
    const View x{t[n.inputs[0]].data(), net.nodes[n.inputs[0]].dims};
    const size_t plane = size_t(n.dims.h) * n.dims.w;
    switch (n.op) {
        case Op::Input: break;
        case Op::Convolution: convolution(n, x, y); break;
        case Op::Deconvolution: deconvolution(n, x, y); break;
        case Op::FullyConnected: fully_connected(n, x, y); break;
        case Op::Pooling: pooling(n, x, y); break;
        case Op::Lrn: lrn(n, x, y); break;
        case Op::Affine:
            for (uint32_t c = 0; c < n.dims.c; ++c)
                for (size_t i = 0; i < plane; ++i)
                    y[c * plane + i] = x.data[c * plane + i] * n.scale[c] + n.shift[c];
            break;
        case Op::Relu:
            for (size_t i = 0; i < y.size(); ++i) y[i] = std::max(x.data[i], 0.0f);
            break;
        case Op::PRelu:
            for (uint32_t c = 0; c < n.dims.c; ++c)
                for (size_t i = 0; i < plane; ++i) {
                    const float v = x.data[c * plane + i];
                    y[c * plane + i] = v >= 0 ? v : v * n.scale[c];
                }
            break;
        case Op::Sigmoid:
            for (size_t i = 0; i < y.size(); ++i)
                y[i] = static_cast<float>(1.0 / (1.0 + std::exp(-double(x.data[i]))));
            break;
        case Op::Tanh:
            for (size_t i = 0; i < y.size(); ++i) y[i] = std::tanh(x.data[i]);
            break;
        case Op::Eltwise:
            reference_eltwise(n, t[n.inputs[0]], x.d, t[n.inputs[1]], net.nodes[n.inputs[1]].dims,
                              y);
            break;
        case Op::Clip:
        case Op::Mish:
        case Op::Pad:
        case Op::Slice:
        case Op::ResizeNearest:
        case Op::ResizeBilinear: reference_modern(n, t[n.inputs[0]], x.d, y); break;
        case Op::Concat: {
            size_t at = 0;
            for (uint32_t in : n.inputs) {
                std::copy(t[in].begin(), t[in].end(), y.begin() + static_cast<ptrdiff_t>(at));
                at += t[in].size();
            }
            break;
        }
        case Op::Flatten: y = t[n.inputs[0]]; break;
        case Op::Softmax: softmax(x, y); break;
        case Op::Cpu: cpu_op_reference(net, id, t, y); break;
    }
}

Result<std::vector<std::vector<float>>> evaluate(const Network::Impl& net,
                                                 const std::vector<HostTensor>& inputs) {
    if (!net.error.ok()) return net.error;
    if (inputs.size() != net.inputs.size())
        return error("network '", net.name, "' has ", net.inputs.size(), " inputs, ", inputs.size(),
                     " given");
    std::vector<Plane> t(net.nodes.size());
    for (size_t i = 0; i < net.inputs.size(); ++i) {
        const Node& n = net.nodes[net.inputs[i]];
        const HostTensor& in = inputs[i];
        if (in.dims != n.dims)
            return error("input '", n.name, "': the tensor is ", in.dims.n, "x", in.dims.c, "x",
                         in.dims.h, "x", in.dims.w, ", the network expects ", n.dims.n, "x",
                         n.dims.c, "x", n.dims.h, "x", n.dims.w);
        if (in.data.size() != in.dims.elements())
            return error("input '", n.name, "': ", in.data.size(), " values for ",
                         in.dims.elements(), " elements");
        t[net.inputs[i]] = to_layout(in, HostLayout::NCHW).data;
    }
    for (uint32_t id = 0; id < net.nodes.size(); ++id) evaluate_node(net, id, t);
    return t;
}

}  // namespace detail

Result<std::vector<HostTensor>> run_reference(const Network& net,
                                              const std::vector<HostTensor>& inputs) {
    const Network::Impl& impl = net.impl();
    if (impl.outputs.empty() && impl.error.ok())
        return error("network '", impl.name, "' has no outputs");
    Result<std::vector<std::vector<float>>> all = detail::evaluate(impl, inputs);
    if (!all) return all.status();
    std::vector<HostTensor> out;
    for (const auto& o : impl.outputs) {
        HostTensor t;
        t.dims = impl.nodes[o.tensor].dims;
        t.data = std::move(all.value()[o.tensor]);
        out.push_back(to_layout(t, o.layout));
    }
    return out;
}

Result<Difference> compare(const HostTensor& actual, const HostTensor& expected) {
    if (actual.dims != expected.dims)
        return error("compare: the tensors are ", actual.dims.n, "x", actual.dims.c, "x",
                     actual.dims.h, "x", actual.dims.w, " and ", expected.dims.n, "x",
                     expected.dims.c, "x", expected.dims.h, "x", expected.dims.w);
    if (actual.data.size() != actual.dims.elements() ||
        expected.data.size() != expected.dims.elements())
        return error("compare: a tensor's data does not match its dims");
    const HostTensor a = to_layout(actual, HostLayout::NCHW);
    const HostTensor e = to_layout(expected, HostLayout::NCHW);
    Difference d;
    double total = 0;
    for (size_t i = 0; i < a.data.size(); ++i) {
        double diff = std::fabs(double(a.data[i]) - double(e.data[i]));
        if (std::isnan(diff)) diff = std::numeric_limits<double>::infinity();
        total += diff;
        if (diff > d.max_abs || (i == 0 && diff >= d.max_abs)) {
            d.max_abs = diff;
            d.worst = i;
        }
        d.max_ref = std::max(d.max_ref, std::fabs(double(e.data[i])));
    }
    d.mean_abs = a.data.empty() ? 0 : total / double(a.data.size());
    return d;
}

// ---- Calibration ----

Calibration::Calibration() : impl_(std::make_unique<Impl>()) {}
Calibration::~Calibration() = default;
Calibration::Calibration(const Calibration& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
Calibration& Calibration::operator=(const Calibration& o) {
    if (this != &o) *impl_ = *o.impl_;
    return *this;
}
Calibration::Calibration(Calibration&&) noexcept = default;
Calibration& Calibration::operator=(Calibration&&) noexcept = default;

namespace {
void ensure(Calibration::Impl& c, size_t n) {
    if (c.range.size() < n) {
        c.range.resize(n, 0.0f);
        c.channels.resize(n);
        c.fixed.resize(n, false);
    }
}
}  // namespace

Status Calibration::add_sample(const Network& net, const std::vector<HostTensor>& inputs) {
    const Network::Impl& impl = net.impl();
    Result<std::vector<std::vector<float>>> all = detail::evaluate(impl, inputs);
    if (!all) return all.status().context("calibration");
    Impl& c = *impl_;
    ensure(c, impl.nodes.size());
    for (size_t id = 0; id < impl.nodes.size(); ++id) {
        const std::vector<float>& v = all.value()[id];
        const Dims4 d = impl.nodes[id].dims;
        const size_t plane = size_t(d.h) * d.w;
        std::vector<float>& ch = c.channels[id];
        if (ch.size() != d.c) ch.assign(d.c, 0.0f);
        float m = 0;
        for (uint32_t k = 0; k < d.c; ++k)
            for (size_t i = 0; i < plane; ++i) {
                const float a = std::fabs(v[k * plane + i]);
                if (!std::isfinite(a)) continue;
                ch[k] = std::max(ch[k], a);
                m = std::max(m, a);
            }
        if (!c.fixed[id]) c.range[id] = std::max(c.range[id], m);
    }
    std::vector<HostTensor> kept;
    for (const HostTensor& in : inputs) kept.push_back(to_layout(in, HostLayout::NCHW));
    c.inputs.push_back(std::move(kept));
    ++c.samples;
    return Status();
}

void Calibration::set_range(Tensor t, float max_abs) {
    if (!t.valid() || !(max_abs > 0) || !std::isfinite(max_abs)) return;
    ensure(*impl_, size_t(t.id) + 1);
    impl_->range[t.id] = max_abs;
    impl_->fixed[t.id] = true;
}

std::optional<float> Calibration::range(Tensor t) const {
    if (!t.valid() || t.id >= impl_->range.size() || !(impl_->range[t.id] > 0)) return std::nullopt;
    return impl_->range[t.id];
}

std::vector<float> Calibration::channel_ranges(Tensor t) const {
    if (!t.valid() || t.id >= impl_->channels.size()) return {};
    return impl_->channels[t.id];
}

size_t Calibration::samples() const {
    return impl_->samples;
}

}  // namespace nvdla::builder
