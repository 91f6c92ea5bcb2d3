// Int8: adaptive weight rounding (BuildOptions::adaptive_rounding).
//
// Rounding every weight to its nearest int8 value minimises each weight's own error, not the
// layer's: the errors of the taps that meet the same inputs add up. Here each weight of a
// convolution or fully connected layer takes its int8 value below or above, whichever lowers
// the squared error of the layer's output over the calibration samples (AdaRound, Nagel et al.
// 2020, in a greedy coordinate form). The layer sees its inputs as the int8 network computes
// them (every tensor the hardware writes rounded to its scale, the layers before already
// rounded this way) and aims at the float network's output, so it also absorbs part of the
// error that arrives from upstream. The weights stay on the grid the lowering quantizes to
// (each kernel's largest weight is kept, so its scale is unchanged).
#include <algorithm>
#include <cmath>
#include <utility>

#include "builder/graph.hpp"

namespace nvdla::builder::detail {

namespace {

using Plane = std::vector<float>;
using Tensors = std::vector<Plane>;

// Patches (output positions x samples) a layer's statistics use at most: 8192, and fewer where
// fan-in^2 multiply-adds per patch would exceed kStatisticsWork (but not below 2 x fan-in).
// A layer with a larger fan-in than kMaxFanIn keeps nearest rounding.
constexpr size_t kMaxPatches = 8192;
constexpr double kStatisticsWork = 536870912.0;  // 2^29
constexpr size_t kMaxFanIn = 1152;
constexpr int kPasses = 4;
constexpr size_t kBlockPatches = 64;  // patches whose moments are added together

void quantize(Plane& v, double scale) {
    if (!(scale > 0)) return;
    for (float& x : v)
        x = static_cast<float>(std::clamp(std::round(double(x) / scale), -127.0, 127.0) * scale);
}

// The inputs one output position of group g reads (zero where the window meets padding).
struct Window {
    const Node& n;
    Dims4 in;
    uint32_t cin, fan_in;
    void read(const Plane& x, uint32_t g, uint32_t oy, uint32_t ox, double* out) const {
        if (n.op == Op::FullyConnected) {
            for (uint32_t i = 0; i < fan_in; ++i) out[i] = x[i];
            return;
        }
        const ConvolutionDesc& p = n.conv;
        uint32_t i = 0;
        for (uint32_t c = 0; c < cin; ++c)
            for (uint32_t r = 0; r < p.kernel_h; ++r) {
                const int64_t iy = int64_t(oy) * p.stride_h + int64_t(r) * p.dilation_h - p.pad_top;
                for (uint32_t s = 0; s < p.kernel_w; ++s, ++i) {
                    const int64_t ix =
                        int64_t(ox) * p.stride_w + int64_t(s) * p.dilation_w - p.pad_left;
                    out[i] = iy < 0 || iy >= in.h || ix < 0 || ix >= in.w
                                 ? 0.0
                                 : x[(size_t(g * cin + c) * in.h + size_t(iy)) * in.w + size_t(ix)];
                }
            }
    }
};

// Chooses n's weights from its inputs as int8 sees them (q) and as float does (fp).
void round_layer(Node& n, const Dims4 in, const std::vector<const Plane*>& q,
                 const std::vector<const Plane*>& fp, Quantization quantization) {
    const bool fc = n.op == Op::FullyConnected;
    const uint32_t groups = fc ? 1 : n.conv.groups;
    const uint32_t kernels = n.dims.c;
    const uint32_t cin = fc ? 0 : in.c / groups;
    const size_t fan = n.weights.size() / kernels;
    if (fan == 0 || fan > kMaxFanIn) return;
    const Window win{n, in, cin, static_cast<uint32_t>(fan)};
    const uint32_t positions = fc ? 1 : n.dims.h * n.dims.w;
    const size_t total = size_t(positions) * q.size();
    const size_t most = std::min(
        kMaxPatches,
        std::max(2 * fan, static_cast<size_t>(kStatisticsWork / double(fan) / double(fan))));
    const size_t step = (total + most - 1) / most;
    const uint32_t per_group = kernels / groups;
    // The upstream term b = (h - cross) w of each kernel: from cross = sum xq xf^T (fan^2 per
    // patch), or, where a group has fewer than fan / 2 kernels, from the stored patches
    // (2 fan per patch and kernel).
    const bool from_patches = 2 * size_t(per_group) < fan;

    std::vector<double> scale(kernels, 0.0);
    double all = 0;
    for (uint32_t k = 0; k < kernels; ++k) {
        for (size_t i = 0; i < fan; ++i)
            scale[k] = std::max(scale[k], std::fabs(double(n.weights[k * fan + i])));
        all = std::max(all, scale[k]);
    }
    for (double& s : scale) {
        if (quantization == Quantization::PerTensor || !(s > 0)) s = all;
        s /= 127.0;
    }

    std::vector<double> h(fan * fan), cross(from_patches ? 0 : fan * fan);
    std::vector<double> block_q(kBlockPatches * fan), block_f(kBlockPatches * fan);
    std::vector<double> b(fan), grad(fan), d(fan);
    std::vector<int> level(fan);
    std::vector<double> patch_q, patch_diff;  // from_patches: xq and xq - xf of every patch
    for (uint32_t g = 0; g < groups; ++g) {
        // Second moments over the patches: h = sum xq xq^T (symmetric), cross = sum xq xf^T.
        std::fill(h.begin(), h.end(), 0.0);
        if (!from_patches) std::fill(cross.begin(), cross.end(), 0.0);
        patch_q.clear();
        patch_diff.clear();
        // A block of patches at a time, row i of the moments over the block's patches in
        // order: the same sums as patch by patch, each row read once per block, not per patch.
        size_t patches = 0, rows = 0;
        auto accumulate = [&] {
            for (size_t i = 0; i < fan; ++i) {
                double* hi = &h[i * fan];
                double* ci = from_patches ? nullptr : &cross[i * fan];
                for (size_t r = 0; r < rows; ++r) {
                    const double* xqr = &block_q[r * fan];
                    const double* xfr = &block_f[r * fan];
                    const double a = xqr[i];
                    if (a == 0 && xfr[i] == 0) continue;
                    for (size_t j = i; j < fan; ++j) hi[j] += a * xqr[j];
                    if (ci)
                        for (size_t j = 0; j < fan; ++j) ci[j] += a * xfr[j];
                }
            }
            rows = 0;
        };
        for (size_t p = 0; p < total; p += step, ++patches) {
            const size_t sample = p / positions;
            const uint32_t pos = static_cast<uint32_t>(p % positions);
            const uint32_t oy = fc ? 0 : pos / n.dims.w, ox = fc ? 0 : pos % n.dims.w;
            double* xq = &block_q[rows * fan];
            double* xf = &block_f[rows * fan];
            win.read(*q[sample], g, oy, ox, xq);
            win.read(*fp[sample], g, oy, ox, xf);
            if (from_patches)
                for (size_t i = 0; i < fan; ++i) {
                    patch_q.push_back(xq[i]);
                    patch_diff.push_back(xq[i] - xf[i]);
                }
            if (++rows == kBlockPatches) accumulate();
        }
        accumulate();
        for (size_t i = 0; i < fan; ++i)
            for (size_t j = i + 1; j < fan; ++j) h[j * fan + i] = h[i * fan + j];
        // Few patches for many weights: lean on each weight's own term and shrink the upstream
        // error's pull (both by fan-in / patches), so that the rounding does not fit the
        // samples' accidents.
        const double shrink = double(fan) / double(std::max<size_t>(patches, 1));
        for (size_t i = 0; i < fan; ++i) h[i * fan + i] *= 1.0 + shrink;
        // cross transposed: the products below run down columns as rows (h is symmetric).
        if (!from_patches)
            for (size_t i = 0; i < fan; ++i)
                for (size_t j = i + 1; j < fan; ++j)
                    std::swap(cross[i * fan + j], cross[j * fan + i]);

        for (uint32_t kk = 0; kk < per_group; ++kk) {
            const uint32_t k = g * per_group + kk;
            const double s = scale[k];
            if (!(s > 0)) continue;
            float* w = &n.weights[k * fan];
            double largest = 0;
            for (size_t i = 0; i < fan; ++i) largest = std::max(largest, std::fabs(double(w[i])));
            for (size_t i = 0; i < fan; ++i) {
                level[i] =
                    static_cast<int>(std::clamp(std::round(double(w[i]) / s), -127.0, 127.0));
                d[i] = level[i] * s - double(w[i]);
            }
            // Error at one patch: d . xq + w . (xq - xf); its squared sum is
            // d^T h d + 2 d^T b + const with b = (h - cross) w.
            if (from_patches) {
                std::fill(b.begin(), b.end(), 0.0);
                for (size_t p = 0; p < patches; ++p) {
                    const double* xp = &patch_q[p * fan];
                    const double* dp = &patch_diff[p * fan];
                    double r = 0;  // w . (xq - xf) at this patch
                    for (size_t j = 0; j < fan; ++j) r += dp[j] * double(w[j]);
                    if (r != 0)
                        for (size_t i = 0; i < fan; ++i) b[i] += xp[i] * r;
                }
                for (double& v : b) v /= 1.0 + shrink;
            } else {
                // Each b[i] sums its terms in the order of j, as a dot product would, but the
                // fan sums advance together (no chain of dependent additions).
                std::fill(b.begin(), b.end(), 0.0);
                for (size_t j = 0; j < fan; ++j) {
                    const double wj = double(w[j]);
                    const double* hj = &h[j * fan];
                    const double* cj = &cross[j * fan];
                    for (size_t i = 0; i < fan; ++i) b[i] += (hj[i] - cj[i]) * wj;
                }
                for (size_t i = 0; i < fan; ++i)
                    b[i] = (b[i] - h[i * fan + i] * shrink / (1.0 + shrink) * double(w[i])) /
                           (1.0 + shrink);
            }
            std::copy(b.begin(), b.end(), grad.begin());
            for (size_t j = 0; j < fan; ++j) {
                const double dj = d[j];
                const double* hj = &h[j * fan];
                for (size_t i = 0; i < fan; ++i) grad[i] += hj[i] * dj;
            }
            for (int pass = 0; pass < kPasses; ++pass) {
                bool changed = false;
                for (size_t i = 0; i < fan; ++i) {
                    const double hii = h[i * fan + i];
                    if (!(hii > 0) || std::fabs(double(w[i])) == largest) continue;
                    const double lower = std::floor(double(w[i]) / s);
                    if (lower == double(w[i]) / s) continue;  // exactly on the grid
                    const int other = level[i] == int(lower) ? int(lower) + 1 : int(lower);
                    if (other < -127 || other > 127) continue;
                    const double delta = (other - level[i]) * s;
                    if (2 * delta * grad[i] + delta * delta * hii >= -1e-12 * hii * s * s) continue;
                    level[i] = other;
                    d[i] += delta;
                    const double* hi = &h[i * fan];
                    for (size_t j = 0; j < fan; ++j) grad[j] += delta * hi[j];
                    changed = true;
                }
                if (!changed) break;
            }
            for (size_t i = 0; i < fan; ++i)
                if (std::fabs(double(w[i])) != largest) w[i] = static_cast<float>(level[i] * s);
        }
    }
}

}  // namespace

Status round_weights_adaptively(Network::Impl& net, const Calibration::Impl& cal,
                                Quantization quantization) {
    if (cal.inputs.empty()) return Status();
    Result<std::vector<double>> scales = int8_scales(net, &cal);
    if (!scales) return scales.status();
    const size_t n = net.nodes.size();
    // A tensor only a fused ReLU, clip or per-channel scale reads stays in the SDP's fine units.
    std::vector<uint32_t> uses(n, 0), last(n, 0);
    std::vector<bool> written(n, true);
    for (uint32_t id = 0; id < n; ++id)
        for (uint32_t in : net.nodes[id].inputs) {
            ++uses[in];
            last[in] = id;
        }
    for (uint32_t id = 0; id < n; ++id) {
        const Node& node = net.nodes[id];
        if ((node.op == Op::Relu || node.op == Op::PRelu || node.op == Op::Clip ||
             node.op == Op::Affine) &&
            uses[node.inputs[0]] == 1)
            written[node.inputs[0]] = false;
    }
    for (const OutputInfo& o : net.outputs) {
        written[o.tensor] = true;
        last[o.tensor] = static_cast<uint32_t>(n);
    }

    const size_t samples = cal.inputs.size();
    std::vector<Tensors> fp(samples, Tensors(n)), q(samples, Tensors(n));
    for (size_t s = 0; s < samples; ++s)
        for (size_t i = 0; i < net.inputs.size(); ++i) {
            if (i >= cal.inputs[s].size() ||
                cal.inputs[s][i].data.size() != net.nodes[net.inputs[i]].dims.elements())
                return Status();
            fp[s][net.inputs[i]] = cal.inputs[s][i].data;
        }
    std::vector<const Plane*> in_q(samples), in_fp(samples);
    for (uint32_t id = 0; id < n; ++id) {
        Node& node = net.nodes[id];
        if (node.op != Op::Input)
            for (size_t s = 0; s < samples; ++s) evaluate_node(net, id, fp[s]);
        if ((node.op == Op::Convolution || node.op == Op::FullyConnected) &&
            !node.weights.empty()) {
            const uint32_t x = node.inputs[0];
            for (size_t s = 0; s < samples; ++s) {
                in_q[s] = &q[s][x];
                in_fp[s] = &fp[s][x];
            }
            round_layer(node, net.nodes[x].dims, in_q, in_fp, quantization);
        }
        for (size_t s = 0; s < samples; ++s) {
            if (node.op == Op::Input)
                q[s][id] = fp[s][id];
            else
                evaluate_node(net, id, q[s]);
            if (written[id]) quantize(q[s][id], (*scales)[id]);
        }
        for (uint32_t in : node.inputs)
            if (last[in] == id)
                for (size_t s = 0; s < samples; ++s) {
                    Plane().swap(fp[s][in]);
                    Plane().swap(q[s][in]);
                }
    }
    return Status();
}

}  // namespace nvdla::builder::detail
