// The float reference of the operators of post-2018 vision models: element-wise operations
// with broadcasting, clip, mish, pad, channel slices and bilinear resizing.
#include <algorithm>
#include <cmath>

#include "builder/modern_ops.hpp"

namespace nvdla::builder::detail {

void reference_eltwise(const Node& n, const std::vector<float>& a, Dims4 da,
                       const std::vector<float>& b, Dims4 db, std::vector<float>& y) {
    const Dims4 o = n.dims;
    auto at = [](const std::vector<float>& v, Dims4 d, uint32_t c, uint32_t h, uint32_t w) {
        return v[(size_t(d.c == 1 ? 0 : c) * d.h + (d.h == 1 ? 0 : h)) * d.w + (d.w == 1 ? 0 : w)];
    };
    for (uint32_t c = 0; c < o.c; ++c)
        for (uint32_t h = 0; h < o.h; ++h)
            for (uint32_t w = 0; w < o.w; ++w) {
                const float p = at(a, da, c, h, w), q = at(b, db, c, h, w);
                float v = 0;
                switch (n.eltwise) {
                    case EltwiseOp::Sum: v = p + q; break;
                    case EltwiseOp::Product: v = p * q; break;
                    case EltwiseOp::Max: v = std::max(p, q); break;
                    case EltwiseOp::Sub: v = p - q; break;
                    case EltwiseOp::Min: v = std::min(p, q); break;
                    case EltwiseOp::Div: v = p / q; break;
                }
                y[(size_t(c) * o.h + h) * o.w + w] = v;
            }
}

namespace {

// Source index and weight of the upper neighbour for output o of a bilinear resize by an
// integer scale (half-pixel centres, clamped to the edges).
void bilinear_tap(uint32_t o, uint32_t scale, uint32_t in, uint32_t& i0, uint32_t& i1,
                  double& frac) {
    const double src = std::max(0.0, (o + 0.5) / scale - 0.5);
    i0 = std::min(static_cast<uint32_t>(src), in - 1);
    i1 = std::min(i0 + 1, in - 1);
    frac = src - i0;
}

}  // namespace

void reference_modern(const Node& n, const std::vector<float>& x, Dims4 dx, std::vector<float>& y) {
    const Dims4 o = n.dims;
    const size_t in_plane = size_t(dx.h) * dx.w, plane = size_t(o.h) * o.w;
    switch (n.op) {
        case Op::Clip:
            for (size_t i = 0; i < y.size(); ++i)
                y[i] = std::min(std::max(x[i], n.clip_min), n.clip_max);
            break;
        case Op::Mish:
            for (size_t i = 0; i < y.size(); ++i) {
                const double v = x[i];
                const double softplus = v > 20 ? v : std::log1p(std::exp(v));
                y[i] = static_cast<float>(v * std::tanh(softplus));
            }
            break;
        case Op::Pad:
            for (uint32_t c = 0; c < o.c; ++c)
                for (uint32_t h = 0; h < o.h; ++h)
                    for (uint32_t w = 0; w < o.w; ++w) {
                        const int64_t ih = int64_t(h) - n.pads[0], iw = int64_t(w) - n.pads[1];
                        const bool inside = ih >= 0 && ih < dx.h && iw >= 0 && iw < dx.w;
                        y[c * plane + size_t(h) * o.w + w] =
                            inside ? x[c * in_plane + size_t(ih) * dx.w + size_t(iw)] : n.pad_value;
                    }
            break;
        case Op::Slice:
            std::copy_n(x.begin() + static_cast<ptrdiff_t>(n.slice_begin * in_plane),
                        size_t(o.c) * plane, y.begin());
            break;
        case Op::ResizeNearest:
            for (uint32_t c = 0; c < o.c; ++c)
                for (uint32_t h = 0; h < o.h; ++h)
                    for (uint32_t w = 0; w < o.w; ++w)
                        y[c * plane + size_t(h) * o.w + w] =
                            x[c * in_plane + size_t(h / n.scales[0]) * dx.w + w / n.scales[1]];
            break;
        case Op::ResizeBilinear:
            for (uint32_t c = 0; c < o.c; ++c)
                for (uint32_t h = 0; h < o.h; ++h) {
                    uint32_t h0, h1;
                    double fh;
                    bilinear_tap(h, n.scales[0], dx.h, h0, h1, fh);
                    for (uint32_t w = 0; w < o.w; ++w) {
                        uint32_t w0, w1;
                        double fw;
                        bilinear_tap(w, n.scales[1], dx.w, w0, w1, fw);
                        const float* p = x.data() + c * in_plane;
                        const double top = p[h0 * dx.w + w0] * (1 - fw) + p[h0 * dx.w + w1] * fw;
                        const double bot = p[h1 * dx.w + w0] * (1 - fw) + p[h1 * dx.w + w1] * fw;
                        y[c * plane + size_t(h) * o.w + w] =
                            static_cast<float>(top * (1 - fh) + bot * fh);
                    }
                }
            break;
        default: break;
    }
}

}  // namespace nvdla::builder::detail
