// ONNX operators on the plane: Pad (constant), Resize and Upsample (nearest: resize_nearest where
// the index mapping is y[h] = x[h / k], a CPU gather of the mapped rows and columns otherwise;
// linear with half-pixel centres and an integer factor: resize_bilinear).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "importer.hpp"

namespace nvdla::onnx::detail {

namespace {

std::vector<int64_t> constant_ints(const TensorData& d) {
    std::vector<int64_t> out;
    for (float f : d.values) out.push_back(to_int(f));
    return out;
}

Status pad(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    const std::string mode = im.attr_string("mode", "constant");
    if (mode != "constant")
        return im.fail("mode '" + mode + "' is not supported (only constant padding is)");
    std::vector<int64_t> pads;
    float value = 0;
    if (im.opset() < 11) {
        pads = im.attr_ints(im.opset() < 2 ? "paddings" : "pads");
        value = im.attr_float("value", 0.0f);
    } else {
        Result<const TensorData*> p = im.constant(1);
        if (!p) return p.status();
        pads = constant_ints(**p);
        if (im.has_input(2)) {
            Result<const TensorData*> v = im.constant(2);
            if (!v) return v.status();
            if ((*v)->values.size() != 1) return im.fail("constant_value must be one value");
            value = (*v)->values[0];
        }
        if (im.has_input(3)) {  // opset 18: the axes the pads are for
            Result<const TensorData*> a = im.constant(3);
            if (!a) return a.status();
            const std::vector<int64_t> axes = constant_ints(**a);
            const size_t rank = static_cast<size_t>((*x)->rank);
            if (pads.size() != 2 * axes.size()) return im.fail("pads do not match axes");
            std::vector<int64_t> all(2 * rank, 0);
            for (size_t i = 0; i < axes.size(); ++i) {
                int64_t axis = axes[i] < 0 ? axes[i] + int64_t(rank) : axes[i];
                if (axis < 0 || axis >= int64_t(rank)) return im.fail("an axis is out of range");
                all[size_t(axis)] = pads[i];
                all[rank + size_t(axis)] = pads[axes.size() + i];
            }
            pads = all;
        }
    }
    const int rank = (*x)->rank;
    if (pads.size() != 2 * size_t(rank))
        return im.fail("pads " + shape_text(pads) + " do not have two values per axis");
    if (rank != 3 && rank != 4) return im.fail("only [N, C, H, W] and [N, C, L] are padded");
    const size_t r = size_t(rank);
    if (pads[0] || pads[1] || pads[r] || pads[r + 1])
        return im.fail("padding the batch or the channels (pads " + shape_text(pads) +
                       ") is not supported");
    for (int64_t v : pads)
        if (v < 0 || v > 0xffff)
            return im.fail("pads " + shape_text(pads) + " are not supported (0 to 65535 are)");
    auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    const uint32_t top = rank == 4 ? u(pads[2]) : 0, bottom = rank == 4 ? u(pads[r + 2]) : 0;
    const uint32_t left = u(pads[r - 1]), right = u(pads[2 * r - 1]);
    return im.define_feature(
        im.network().pad((*x)->tensor, top, left, bottom, right, value, im.layer_name()), rank);
}

// The input index ONNX's Resize reads for output index o of an axis (nearest).
int64_t nearest_source(int64_t o, int64_t in, int64_t out, double scale, const std::string& ctm,
                       const std::string& nearest_mode) {
    double x;
    if (ctm == "half_pixel")
        x = (double(o) + 0.5) / scale - 0.5;
    else if (ctm == "pytorch_half_pixel")
        x = out > 1 ? (double(o) + 0.5) / scale - 0.5 : 0.0;
    else if (ctm == "align_corners")
        x = out > 1 ? double(o) * double(in - 1) / double(out - 1) : 0.0;
    else if (ctm == "tf_half_pixel_for_nn")
        x = (double(o) + 0.5) / scale;
    else  // asymmetric
        x = double(o) / scale;
    double i;
    if (nearest_mode == "floor")
        i = std::floor(x);
    else if (nearest_mode == "ceil")
        i = std::ceil(x);
    else if (nearest_mode == "round_prefer_ceil")
        i = std::floor(x + 0.5);
    else  // round_prefer_floor
        i = x - std::floor(x) == 0.5 ? std::floor(x) : std::round(x);
    return std::clamp<int64_t>(static_cast<int64_t>(i), 0, in - 1);
}

// Resize (opset 10: X, scales; 11+: X, roi, scales, sizes) and Upsample (scales as an attribute
// before opset 9, an input from 9).
Status resize(Importer& im) {
    Result<const Val*> x = im.feature(0);
    if (!x) return x.status();
    const bool upsample = im.op() == "Upsample";
    const int rank = (*x)->rank;
    if (rank != 4) return im.fail("only [N, C, H, W] tensors are resized");
    const std::vector<int64_t> in = im.shape_of(**x);
    if (im.attr_int("antialias", 0) || im.attr("axes") ||
        im.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
        return im.fail("antialias, axes and keep_aspect_ratio_policy are not supported");
    std::vector<float> scales;
    std::vector<int64_t> sizes;
    if (upsample && im.opset() < 9) {
        if (const auto* a = im.attr("scales"))
            scales.assign(a->floats().begin(), a->floats().end());
    } else {
        const int scales_input = upsample || im.opset() < 11 ? 1 : 2;
        if (im.has_input(scales_input)) {
            Result<const TensorData*> s = im.constant(scales_input);
            if (!s) return s.status();
            scales = (*s)->values;
        }
        if (!upsample && im.has_input(3)) {
            Result<const TensorData*> s = im.constant(3);
            if (!s) return s.status();
            sizes = constant_ints(**s);
        }
    }
    std::vector<int64_t> out = in;
    std::vector<double> scale(4, 1.0);
    if (!sizes.empty()) {
        if (sizes.size() != 4) return im.fail("sizes " + shape_text(sizes) + " is not 4 values");
        out = sizes;
        for (size_t i = 0; i < 4; ++i) scale[i] = double(out[i]) / double(in[i]);
    } else {
        if (scales.size() != 4)
            return im.fail("neither 4 scales nor 4 sizes are given (" +
                           std::to_string(scales.size()) + " scales)");
        for (size_t i = 0; i < 4; ++i) {
            if (!(scales[i] > 0) || scales[i] > 1024) return im.fail("a scale is out of range");
            scale[i] = scales[i];
            out[i] = static_cast<int64_t>(std::floor(double(in[i]) * scales[i]));
        }
    }
    if (out[0] != in[0] || out[1] != in[1])
        return im.fail("resizing the batch or the channels is not supported");
    for (size_t i = 2; i < 4; ++i)
        if (out[i] < 1 || out[i] > 0xffff) return im.fail("an output size is out of range");
    const std::string mode = im.attr_string("mode", "nearest");
    const std::string ctm = upsample
                                ? "asymmetric"
                                : im.attr_string("coordinate_transformation_mode",
                                                 im.opset() < 11 ? "asymmetric" : "half_pixel");
    const std::string nearest_mode = upsample || im.opset() < 11
                                         ? "floor"
                                         : im.attr_string("nearest_mode", "round_prefer_floor");
    const bool integer_factor = out[2] % in[2] == 0 && out[3] % in[3] == 0;
    const uint32_t kh = static_cast<uint32_t>(out[2] / in[2]),
                   kw = static_cast<uint32_t>(out[3] / in[3]);
    auto& net = im.network();
    if (mode == "nearest") {
        if (ctm == "tf_crop_and_resize") return im.fail("tf_crop_and_resize is not supported");
        std::vector<int64_t> rows, cols;
        bool plain = integer_factor;
        for (int64_t o = 0; o < out[2]; ++o) {
            rows.push_back(nearest_source(o, in[2], out[2], scale[2], ctm, nearest_mode));
            plain = plain && rows.back() == o / int64_t(kh ? kh : 1);
        }
        for (int64_t o = 0; o < out[3]; ++o) {
            cols.push_back(nearest_source(o, in[3], out[3], scale[3], ctm, nearest_mode));
            plain = plain && cols.back() == o / int64_t(kw ? kw : 1);
        }
        if (plain)
            return im.define_feature(net.resize_nearest((*x)->tensor, kh, kw, im.layer_name()), 4);
        // Any other mapping: the rows, then the columns, gathered on the CPU.
        std::vector<int64_t> ints = {2};
        ints.insert(ints.end(), rows.begin(), rows.end());
        Tensor t = im.cpu({(*x)->tensor}, builder::CpuOpKind::Gather, ints, {}, {},
                          im.layer_name() + "_rows");
        ints = {3};
        ints.insert(ints.end(), cols.begin(), cols.end());
        t = im.cpu({t}, builder::CpuOpKind::Gather, ints);
        return im.define_feature(t, 4);
    }
    if (mode == "linear" || mode == "bilinear") {
        const bool half_pixel =
            ctm == "half_pixel" || (ctm == "pytorch_half_pixel" && out[2] > 1 && out[3] > 1);
        if (!half_pixel || !integer_factor)
            return im.fail("linear resizing with coordinate_transformation_mode '" + ctm +
                           "' from " + shape_text(in) + " to " + shape_text(out) +
                           " is not supported (half_pixel by an integer factor is)");
        return im.define_feature(net.resize_bilinear((*x)->tensor, kh, kw, im.layer_name()), 4);
    }
    return im.fail("mode '" + mode + "' is not supported (nearest and linear are)");
}

}  // namespace

void add_resize_ops(OpTable& table) {
    table["Pad"] = pad;
    table["Resize"] = resize;
    table["Upsample"] = resize;
}

}  // namespace nvdla::onnx::detail
