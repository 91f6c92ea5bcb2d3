// CPU operations (Network::cpu_op): argument checks and shape inference (shared with the
// runtime's descriptor checks), and their float reference in float64 arithmetic.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "builder/graph.hpp"
#include "runtime/cpu_tasks.hpp"

namespace nvdla::builder {

using detail::Node;
using detail::Op;

Tensor Network::cpu_op(std::span<const Tensor> inputs, const CpuOpDesc& desc,
                       const std::string& name) {
    Impl& net = *impl_;
    Node node;
    node.op = Op::Cpu;
    const char* kind = runtime::cpu_op_name(desc.kind);
    node.kind = std::string("CPU ") + kind;
    node.name = name.empty() ? std::string(kind) + "_" + std::to_string(net.nodes.size()) : name;
    node.cpu = desc;
    auto fail = [&](const std::string& what) -> Tensor {
        if (net.error.ok())
            net.error = Status::failure("layer '" + node.name + "' (" + node.kind + "): " + what);
        return {};
    };
    std::vector<Dims4> dims;
    for (Tensor t : inputs) {
        if (!t.valid()) return {};  // an earlier failure; no new error
        if (t.id >= net.nodes.size()) return fail("an input does not belong to this network");
        node.inputs.push_back(t.id);
        dims.push_back(net.nodes[t.id].dims);
    }
    for (float f : desc.floats)
        if (!std::isfinite(f)) return fail("a float parameter is NaN or infinite");
    Result<Dims4> out =
        runtime::cpu_op_output_dims(desc.kind, dims, desc.ints, desc.floats.size(), desc.out_dims);
    if (!out) return fail(out.status().message());
    node.dims = *out;
    net.nodes.push_back(std::move(node));
    return Tensor{static_cast<uint32_t>(net.nodes.size() - 1)};
}

namespace detail {

namespace {

// One input of the reference: values in NCHW order (n = 1) and dims.
struct In {
    const std::vector<float>* v;
    Dims4 d;
    // Element (c, h, w), broadcasting extents of 1.
    double at(uint32_t c, uint32_t h, uint32_t w) const {
        c = d.c == 1 ? 0 : c;
        h = d.h == 1 ? 0 : h;
        w = d.w == 1 ? 0 : w;
        return (*v)[(size_t(c) * d.h + h) * d.w + w];
    }
};

uint32_t axis_extent(Dims4 d, int64_t axis) {
    return axis == 1 ? d.c : axis == 2 ? d.h : d.w;
}

double unary_op(CpuOpKind k, double x) {
    switch (k) {
        case CpuOpKind::Exp: return std::exp(x);
        case CpuOpKind::Log: return std::log(x);
        case CpuOpKind::Sqrt: return std::sqrt(x);
        case CpuOpKind::Reciprocal: return 1.0 / x;
        case CpuOpKind::Neg: return -x;
        case CpuOpKind::Abs: return std::fabs(x);
        case CpuOpKind::Erf: return std::erf(x);
        case CpuOpKind::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
        case CpuOpKind::Tanh: return std::tanh(x);
        case CpuOpKind::Relu: return x > 0 ? x : 0.0;
        case CpuOpKind::Mish: return x * std::tanh(std::log1p(std::exp(x)));
        default: return x;
    }
}

}  // namespace

void cpu_op_reference(const Network::Impl& net, uint32_t id,
                      const std::vector<std::vector<float>>& tensors, std::vector<float>& y) {
    const Node& n = net.nodes[id];
    const CpuOpDesc& p = n.cpu;
    const In a{&tensors[n.inputs[0]], net.nodes[n.inputs[0]].dims};
    const In b = n.inputs.size() > 1 ? In{&tensors[n.inputs[1]], net.nodes[n.inputs[1]].dims} : a;
    const Dims4 o = n.dims;
    auto out = [&](uint32_t c, uint32_t h, uint32_t w) -> float& {
        return y[(size_t(c) * o.h + h) * o.w + w];
    };
    // Every output coordinate, in order.
    auto each = [&](auto&& f) {
        for (uint32_t c = 0; c < o.c; ++c)
            for (uint32_t h = 0; h < o.h; ++h)
                for (uint32_t w = 0; w < o.w; ++w) f(c, h, w);
    };
    // The input coordinates along `axis` through (c, h, w): q[axis] runs over the axis.
    auto along = [](uint32_t c, uint32_t h, uint32_t w, int64_t axis, uint32_t k) {
        std::array<uint32_t, 4> q{0, c, h, w};
        q[size_t(axis)] = k;
        return q;
    };
    switch (p.kind) {
        case CpuOpKind::Softmax:
        case CpuOpKind::LogSoftmax: {
            const int64_t axis = p.ints[0];
            const uint32_t count = axis_extent(a.d, axis);
            each([&](uint32_t c, uint32_t h, uint32_t w) {
                double largest = -std::numeric_limits<double>::infinity();
                for (uint32_t k = 0; k < count; ++k) {
                    const auto q = along(c, h, w, axis, k);
                    largest = std::max(largest, a.at(q[1], q[2], q[3]));
                }
                double sum = 0;
                for (uint32_t k = 0; k < count; ++k) {
                    const auto q = along(c, h, w, axis, k);
                    sum += std::exp(a.at(q[1], q[2], q[3]) - largest);
                }
                const double v = a.at(c, h, w) - largest;
                out(c, h, w) = static_cast<float>(p.kind == CpuOpKind::Softmax ? std::exp(v) / sum
                                                                               : v - std::log(sum));
            });
            break;
        }
        case CpuOpKind::PowScalar:
            each([&](uint32_t c, uint32_t h, uint32_t w) {
                out(c, h, w) = static_cast<float>(std::pow(a.at(c, h, w), double(p.floats[0])));
            });
            break;
        case CpuOpKind::Add:
        case CpuOpKind::Sub:
        case CpuOpKind::Mul:
        case CpuOpKind::Div:
        case CpuOpKind::Max:
        case CpuOpKind::Min:
        case CpuOpKind::Pow:
            each([&](uint32_t c, uint32_t h, uint32_t w) {
                const double x = a.at(c, h, w), z = b.at(c, h, w);
                double r = 0;
                switch (p.kind) {
                    case CpuOpKind::Add: r = x + z; break;
                    case CpuOpKind::Sub: r = x - z; break;
                    case CpuOpKind::Mul: r = x * z; break;
                    case CpuOpKind::Div: r = x / z; break;
                    case CpuOpKind::Max: r = std::max(x, z); break;
                    case CpuOpKind::Min: r = std::min(x, z); break;
                    default: r = std::pow(x, z); break;
                }
                out(c, h, w) = static_cast<float>(r);
            });
            break;
        case CpuOpKind::ReduceSum:
        case CpuOpKind::ReduceMean:
        case CpuOpKind::ReduceMax:
        case CpuOpKind::ReduceMin: {
            bool reduced[4] = {};
            for (int64_t axis : p.ints) reduced[axis] = true;
            const size_t outputs = o.elements();
            std::vector<double> sum(outputs, 0.0), hi(outputs, -HUGE_VAL), lo(outputs, HUGE_VAL);
            std::vector<size_t> count(outputs, 0);
            for (uint32_t c = 0; c < a.d.c; ++c)
                for (uint32_t h = 0; h < a.d.h; ++h)
                    for (uint32_t w = 0; w < a.d.w; ++w) {
                        const size_t i =
                            (size_t(reduced[1] ? 0 : c) * o.h + (reduced[2] ? 0 : h)) * o.w +
                            (reduced[3] ? 0 : w);
                        const double v = a.at(c, h, w);
                        sum[i] += v;
                        hi[i] = std::max(hi[i], v);
                        lo[i] = std::min(lo[i], v);
                        ++count[i];
                    }
            for (size_t i = 0; i < outputs; ++i) {
                double r = sum[i];
                if (p.kind == CpuOpKind::ReduceMean) r = sum[i] / double(count[i]);
                if (p.kind == CpuOpKind::ReduceMax) r = hi[i];
                if (p.kind == CpuOpKind::ReduceMin) r = lo[i];
                y[i] = static_cast<float>(r);
            }
            break;
        }
        case CpuOpKind::MatMul:
            each([&](uint32_t c, uint32_t h, uint32_t w) {
                double sum = 0;
                for (uint32_t k = 0; k < a.d.w; ++k) sum += a.at(c, h, k) * b.at(c, k, w);
                out(c, h, w) = static_cast<float>(sum);
            });
            break;
        case CpuOpKind::LayerNorm: {
            const int64_t axis = p.ints[0];
            // Groups: the elements agreeing on the axes before `axis`; j is an element's
            // position inside its group (the gamma and beta index).
            auto group = [&](uint32_t c, uint32_t h) {
                return axis == 1 ? size_t(0) : axis == 2 ? size_t(c) : size_t(c) * o.h + h;
            };
            auto position = [&](uint32_t c, uint32_t h, uint32_t w) {
                return axis == 1   ? (size_t(c) * o.h + h) * o.w + w
                       : axis == 2 ? size_t(h) * o.w + w
                                   : size_t(w);
            };
            const size_t groups = axis == 1 ? 1 : axis == 2 ? o.c : size_t(o.c) * o.h;
            const double per_group = double(o.elements()) / double(groups);
            std::vector<double> mean(groups, 0.0), var(groups, 0.0);
            each([&](uint32_t c, uint32_t h, uint32_t w) { mean[group(c, h)] += a.at(c, h, w); });
            for (double& m : mean) m /= per_group;
            each([&](uint32_t c, uint32_t h, uint32_t w) {
                const double d = a.at(c, h, w) - mean[group(c, h)];
                var[group(c, h)] += d * d;
            });
            const size_t inner = static_cast<size_t>(per_group);
            each([&](uint32_t c, uint32_t h, uint32_t w) {
                const size_t g = group(c, h);
                double r = (a.at(c, h, w) - mean[g]) / std::sqrt(var[g] / per_group + p.floats[0]);
                if (p.floats.size() > 1) {
                    const size_t j = position(c, h, w);
                    r = r * p.floats[1 + j] + p.floats[1 + inner + j];
                }
                out(c, h, w) = static_cast<float>(r);
            });
            break;
        }
        case CpuOpKind::Gather: {
            const int64_t axis = p.ints[0];
            each([&](uint32_t c, uint32_t h, uint32_t w) {
                std::array<uint32_t, 4> q{0, c, h, w};
                q[size_t(axis)] = static_cast<uint32_t>(p.ints[1 + q[size_t(axis)]]);
                out(c, h, w) = static_cast<float>(a.at(q[1], q[2], q[3]));
            });
            break;
        }
        case CpuOpKind::Transpose:
            each([&](uint32_t c, uint32_t h, uint32_t w) {
                const uint32_t at_out[4] = {0, c, h, w};
                std::array<uint32_t, 4> q{};
                for (size_t i = 1; i <= 3; ++i) q[size_t(p.ints[i - 1])] = at_out[i];
                out(c, h, w) = static_cast<float>(a.at(q[1], q[2], q[3]));
            });
            break;
        case CpuOpKind::Reshape: std::copy(a.v->begin(), a.v->end(), y.begin()); break;
        default:  // unary
            each([&](uint32_t c, uint32_t h, uint32_t w) {
                out(c, h, w) = static_cast<float>(unary_op(p.kind, a.at(c, h, w)));
            });
            break;
    }
}

}  // namespace detail

}  // namespace nvdla::builder
