// ONNX operators: Conv, ConvTranspose.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "importer.hpp"

namespace nvdla::onnx::detail {

namespace {

// What Conv and ConvTranspose read alike: X, the constant W and optional constant B, the
// kernel (from W, checked against kernel_shape) and the strides.
struct WeightedOperands {
    const Val* x = nullptr;
    const TensorData* w = nullptr;
    std::vector<float> bias;
    int rank = 0;
    size_t spatial_axes = 0;
    Window win;
};

Status weighted_operands(Importer& im, const char* what, WeightedOperands& op) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    Result<const TensorData*> w = im.constant(1);
    if (!w) return w.status();
    op.x = *x;
    op.w = *w;
    if (im.has_input(2)) {
        Result<const TensorData*> b = im.constant(2);
        if (!b) return b.status();
        op.bias = (*b)->values;
    }
    op.rank = op.x->rank;
    if (op.rank != 3 && op.rank != 4)
        return im.fail(op.rank == 5 ? std::string("3-D ") + what + " are not supported"
                                    : "the input must be [N, C, H, W] or [N, C, L]");
    const auto& ws = op.w->shape;
    if (static_cast<int>(ws.size()) != op.rank)
        return im.fail("weights of shape " + shape_text(ws) + " do not match the input's rank");
    op.spatial_axes = static_cast<size_t>(op.rank - 2);
    op.win.kernel.assign(ws.begin() + 2, ws.end());
    if (auto k = im.attr_ints("kernel_shape"); !k.empty() && k != op.win.kernel)
        return im.fail("kernel_shape " + shape_text(k) + " differs from the weights' " +
                       shape_text(op.win.kernel));
    op.win.stride = im.attr_ints("strides");
    if (op.win.stride.empty()) op.win.stride.assign(op.spatial_axes, 1);
    return Status();
}

Status conv(Importer& im) {
    WeightedOperands op;
    if (Status s = weighted_operands(im, "convolutions", op); !s) return s;
    const Val* const x = op.x;
    const TensorData* const w = op.w;
    const std::vector<float>& bias = op.bias;
    const int rank = op.rank;
    const auto& ws = w->shape;
    const size_t n = op.spatial_axes;
    Window& win = op.win;
    win.dilation = im.attr_ints("dilations");
    if (win.dilation.empty()) win.dilation.assign(n, 1);
    win.pads = im.attr_ints("pads");
    if (win.pads.empty()) win.pads.assign(2 * n, 0);
    if (win.stride.size() != n || win.dilation.size() != n || win.pads.size() != 2 * n)
        return im.fail("strides, dilations or pads do not have one value per spatial axis");
    if (Status s = check_window(im, win); !s) return s;
    const std::string auto_pad = im.attr_string("auto_pad", "NOTSET");
    const Dims4 d = im.dims(*x);
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
        same_pads(auto_pad, spatial(d, rank), win.kernel, win.stride, win.dilation, win.pads);
    else if (auto_pad == "VALID")
        win.pads.assign(2 * n, 0);
    else if (auto_pad != "NOTSET")
        return im.fail("auto_pad '" + auto_pad + "' is not known");

    builder::ConvolutionDesc desc;
    desc.out_channels = static_cast<uint32_t>(ws[0]);
    desc.groups = static_cast<uint32_t>(im.attr_int("group", 1));
    auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    if (rank == 4) {
        desc.kernel_h = u(win.kernel[0]), desc.kernel_w = u(win.kernel[1]);
        desc.stride_h = u(win.stride[0]), desc.stride_w = u(win.stride[1]);
        desc.dilation_h = u(win.dilation[0]), desc.dilation_w = u(win.dilation[1]);
        desc.pad_top = u(win.pads[0]), desc.pad_left = u(win.pads[1]);
        desc.pad_bottom = u(win.pads[2]), desc.pad_right = u(win.pads[3]);
    } else {
        desc.kernel_w = u(win.kernel[0]);
        desc.stride_w = u(win.stride[0]);
        desc.dilation_w = u(win.dilation[0]);
        desc.pad_left = u(win.pads[0]), desc.pad_right = u(win.pads[1]);
    }
    if (desc.groups == 0 || uint64_t(ws[1]) * desc.groups != d.c)
        return im.fail("weights of shape " + shape_text(ws) + " with group " +
                       std::to_string(desc.groups) + " do not match " + std::to_string(d.c) +
                       " input channels");
    return im.define_feature(
        im.network().convolution(x->tensor, desc, w->values, bias, im.layer_name()), rank);
}

Status conv_transpose(Importer& im) {
    WeightedOperands op;
    if (Status s = weighted_operands(im, "transposed convolutions", op); !s) return s;
    const Val* const x = op.x;
    const TensorData* const w = op.w;
    const std::vector<float>& bias = op.bias;
    const int rank = op.rank;
    const auto& ws = w->shape;
    const size_t n = op.spatial_axes;
    Window& win = op.win;
    for (int64_t v : im.attr_ints("dilations"))
        if (v != 1) return im.fail("dilations are not supported");
    std::vector<int64_t> output_padding = im.attr_ints("output_padding");
    if (output_padding.empty()) output_padding.assign(n, 0);
    win.pads = im.attr_ints("pads");
    if (win.pads.empty()) win.pads.assign(2 * n, 0);
    if (win.stride.size() != n || win.pads.size() != 2 * n || output_padding.size() != n)
        return im.fail("strides, pads or output_padding do not have one value per spatial axis");
    if (Status s = check_window(im, win); !s) return s;
    const Dims4 d = im.dims(*x);
    const std::vector<int64_t> in = spatial(d, rank);
    const std::string auto_pad = im.attr_string("auto_pad", "NOTSET");
    std::vector<int64_t> output_shape = im.attr_ints("output_shape");
    if (output_shape.size() > n)  // the whole shape given
        output_shape.erase(output_shape.begin(),
                           output_shape.begin() + static_cast<long>(output_shape.size() - n));
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" || !output_shape.empty()) {
        if (output_shape.empty())
            for (size_t i = 0; i < n; ++i) output_shape.push_back(in[i] * win.stride[i]);
        if (output_shape.size() != n) return im.fail("output_shape has the wrong number of axes");
        for (size_t i = 0; i < n; ++i) {
            const int64_t total =
                win.stride[i] * (in[i] - 1) + output_padding[i] + win.kernel[i] - output_shape[i];
            if (total < 0)
                return im.fail("output_shape " + shape_text(output_shape) +
                               " needs output padding, which is not supported");
            // ONNX: SAME_UPPER puts the smaller half first... as its reference does.
            const int64_t small = total / 2, large = total - small;
            const bool lower = auto_pad == "SAME_LOWER";
            win.pads[i] = lower ? large : small;
            win.pads[n + i] = lower ? small : large;
        }
    } else if (auto_pad == "VALID") {
        win.pads.assign(2 * n, 0);
    } else if (auto_pad != "NOTSET") {
        return im.fail("auto_pad '" + auto_pad + "' is not known");
    }
    // Output padding adds outputs at the end: the end padding crops them back.
    for (size_t i = 0; i < n; ++i) {
        if (output_padding[i] > win.pads[n + i])
            return im.fail("output_padding " + shape_text(output_padding) +
                           " beyond the end padding is not supported");
        win.pads[n + i] -= output_padding[i];
    }
    for (int64_t v : win.pads)  // output_padding comes off the end pads
        if (v < 0) return im.fail("negative pads are not supported");
    builder::DeconvolutionDesc desc;
    desc.groups = static_cast<uint32_t>(im.attr_int("group", 1));
    desc.out_channels = static_cast<uint32_t>(ws[1]) * desc.groups;
    auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    if (rank == 4) {
        desc.kernel_h = u(win.kernel[0]), desc.kernel_w = u(win.kernel[1]);
        desc.stride_h = u(win.stride[0]), desc.stride_w = u(win.stride[1]);
        desc.pad_top = u(win.pads[0]), desc.pad_left = u(win.pads[1]);
        desc.pad_bottom = u(win.pads[2]), desc.pad_right = u(win.pads[3]);
    } else {
        desc.kernel_w = u(win.kernel[0]);
        desc.stride_w = u(win.stride[0]);
        desc.pad_left = u(win.pads[0]), desc.pad_right = u(win.pads[1]);
    }
    if (uint64_t(ws[0]) != d.c)
        return im.fail("weights of shape " + shape_text(ws) + " do not match " +
                       std::to_string(d.c) + " input channels");
    return im.define_feature(
        im.network().deconvolution(x->tensor, desc, w->values, bias, im.layer_name()), rank);
}

}  // namespace

void add_convolution_ops(OpTable& table) {
    table["Conv"] = conv;
    table["ConvTranspose"] = conv_transpose;
}

}  // namespace nvdla::onnx::detail
