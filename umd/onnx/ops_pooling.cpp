// ONNX operators: MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool.
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
        win.kernel = in;
        win.stride.assign(n, 1);
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
    for (int64_t v : win.pads)
        if (v < 0) return im.fail("negative pads are not supported");
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

}  // namespace

void add_pooling_ops(OpTable& table) {
    table["MaxPool"] = [](Importer& im) { return pool(im, true, false); };
    table["AveragePool"] = [](Importer& im) { return pool(im, false, false); };
    table["GlobalMaxPool"] = [](Importer& im) { return pool(im, true, true); };
    table["GlobalAveragePool"] = [](Importer& im) { return pool(im, false, true); };
}

}  // namespace nvdla::onnx::detail
