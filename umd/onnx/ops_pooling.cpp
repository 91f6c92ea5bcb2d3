// ONNX operators: MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool, and ReduceMean,
// ReduceMax, ReduceMin, ReduceSum.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "importer.hpp"

namespace nvdla::onnx::detail {

namespace {

Status pool(Importer& im, bool max, bool global) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    if (im.output_used(1)) return im.fail("the indices output is not supported");
    const int rank = (*x)->rank;
    if (rank != 3 && rank != 4)
        return im.fail(rank == 5 ? "3-D pooling is not supported"
                                 : "the input must be [N, C, H, W] or [N, C, L]");
    const size_t n = static_cast<size_t>(rank - 2);
    const Dims4 d = im.dims(**x);
    const std::vector<int64_t> in = spatial(d, rank);
    Window win;
    bool include_pad = true;
    if (global) {
        // One window: its stride is the window (what the builder splits over 8x8 needs).
        win.kernel = in;
        win.stride = in;
        win.pads.assign(2 * n, 0);
    } else {
        win.kernel = im.attr_ints("kernel_shape");
        if (win.kernel.size() != n) return im.fail("kernel_shape must have one value per axis");
        win.stride = im.attr_ints("strides");
        if (win.stride.empty()) win.stride.assign(n, 1);
        win.pads = im.attr_ints("pads");
        if (win.pads.empty()) win.pads.assign(2 * n, 0);
        for (int64_t v : im.attr_ints("dilations"))
            if (v != 1) return im.fail("dilations are not supported");
        if (win.stride.size() != n || win.pads.size() != 2 * n)
            return im.fail("strides or pads do not have one value per spatial axis");
        if (Status s = check_window(im, win); !s) return s;
        const std::string auto_pad = im.attr_string("auto_pad", "NOTSET");
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
            same_pads(auto_pad, in, win.kernel, win.stride, std::vector<int64_t>(n, 1), win.pads);
        else if (auto_pad == "VALID")
            win.pads.assign(2 * n, 0);
        else if (auto_pad != "NOTSET")
            return im.fail("auto_pad '" + auto_pad + "' is not known");
        include_pad = max || im.attr_int("count_include_pad", 0) != 0;
        if (im.attr_int("ceil_mode", 0)) {
            for (size_t i = 0; i < n; ++i) {
                const int64_t span = in[i] + win.pads[i] + win.pads[n + i] - win.kernel[i];
                int64_t out = (span + win.stride[i] - 1) / win.stride[i] + 1;
                // The last window must start inside the input or its leading padding.
                if ((out - 1) * win.stride[i] >= in[i] + win.pads[i]) --out;
                const int64_t extra = (out - 1) * win.stride[i] + win.kernel[i] -
                                      (in[i] + win.pads[i] + win.pads[n + i]);
                if (extra > 0) {
                    if (!max)
                        return im.fail("ceil_mode needs " + std::to_string(extra) +
                                       " more padding, which the average would count");
                    win.pads[n + i] += extra;
                }
            }
        }
    }
    builder::PoolingDesc desc;
    desc.type = max ? builder::PoolingType::Max : builder::PoolingType::Average;
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
    const bool padded = std::any_of(win.pads.begin(), win.pads.end(), [](int64_t v) { return v; });
    desc.count_include_pad = include_pad || !padded;
    return im.define_feature(im.network().pooling((*x)->tensor, desc, im.layer_name()), rank);
}

// ReduceMean/ReduceMax over H and W: global pooling; other reductions and axes: CPU tasks.
// Axes come as an attribute, or as input 1 (ReduceSum from opset 13, the others from 18).
Status reduce(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    const int rank = (*x)->rank;
    std::vector<int64_t> axes = im.attr_ints("axes");
    if (im.has_input(1)) {
        Result<const TensorData*> c = im.constant(1);
        if (!c) return c.status();
        for (float f : (*c)->values) axes.push_back(to_int(f));
    }
    const bool keep = im.attr_int("keepdims", 1) != 0;
    if (axes.empty()) {
        if (im.attr_int("noop_with_empty_axes", 0)) {
            im.define(im.node().output(0), **x);
            return Status();
        }
        for (int64_t i = rank >= 2 ? 1 : 0; i < rank; ++i) axes.push_back(i);
        if (rank >= 2) axes.insert(axes.begin(), 0);  // all axes, the batch included
    }
    std::vector<int64_t> builder_axes;
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    for (int64_t a : axes) {
        const int b = builder_axis(a, rank);
        if (b < 0) return im.fail("axis " + std::to_string(a) + " is out of range");
        if (b == 0)
            return im.fail(
                "reducing over the batch (axis 0) is not supported (each batch item "
                "runs separately)");
        builder_axes.push_back(b);
        reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
    }
    std::sort(builder_axes.begin(), builder_axes.end());
    builder_axes.erase(std::unique(builder_axes.begin(), builder_axes.end()), builder_axes.end());
    std::vector<int64_t> shape;
    const std::vector<int64_t> in = im.shape_of(**x);
    for (size_t i = 0; i < in.size(); ++i) {
        if (!reduced[i])
            shape.push_back(in[i]);
        else if (keep)
            shape.push_back(1);
    }
    if (shape.empty()) shape = {1};
    const std::string& op = im.op();
    const bool plane = rank == 4 && builder_axes == std::vector<int64_t>{2, 3};
    Tensor t;
    if (plane && (op == "ReduceMean" || op == "ReduceMax")) {
        const Dims4 d = im.dims(**x);
        builder::PoolingDesc desc;
        desc.type = op == "ReduceMax" ? builder::PoolingType::Max : builder::PoolingType::Average;
        desc.kernel_h = desc.stride_h = d.h;
        desc.kernel_w = desc.stride_w = d.w;
        t = im.network().pooling((*x)->tensor, desc, im.layer_name());
    } else {
        using builder::CpuOpKind;
        const CpuOpKind kind = op == "ReduceMean"  ? CpuOpKind::ReduceMean
                               : op == "ReduceMax" ? CpuOpKind::ReduceMax
                               : op == "ReduceMin" ? CpuOpKind::ReduceMin
                                                   : CpuOpKind::ReduceSum;
        t = im.cpu({(*x)->tensor}, kind, builder_axes);
    }
    return im.define_shaped(t, shape, 0, "_reshape");
}

}  // namespace

void add_pooling_ops(OpTable& table) {
    table["MaxPool"] = [](Importer& im) { return pool(im, true, false); };
    table["AveragePool"] = [](Importer& im) { return pool(im, false, false); };
    table["GlobalMaxPool"] = [](Importer& im) { return pool(im, true, true); };
    table["GlobalAveragePool"] = [](Importer& im) { return pool(im, false, true); };
    for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum"}) table[op] = reduce;
}

}  // namespace nvdla::onnx::detail
