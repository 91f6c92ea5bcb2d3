// The Caffe importer (include/nvdla/caffe.hpp): a NetParameter in text format (the network)
// and one in binary (the weights, found by layer name) -> builder::Network, layer by layer.
// Caffe blobs are names that layers rebind (in-place layers write their bottom), so the
// importer keeps the tensor each name holds now.
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "caffe.pb.h"
#include "nvdla/caffe.hpp"

namespace nvdla::caffe {

namespace {

namespace pb = nvdla::caffe_proto;
using builder::Tensor;

// Parse errors of the text format as one sentence: "line 12 column 5: ...".
class ErrorCollector : public google::protobuf::io::ErrorCollector {
  public:
    void AddError(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {
        if (first_.empty())
            first_ = "line " + std::to_string(line + 1) + " column " + std::to_string(column + 1) +
                     ": " + message;
    }
    const std::string& first() const { return first_; }

  private:
    std::string first_;
};

std::vector<float> blob_values(const pb::BlobProto& b) {
    std::vector<float> v(b.data().begin(), b.data().end());
    for (double d : b.double_data()) v.push_back(static_cast<float>(d));
    return v;
}

class Importer {
  public:
    Importer(const pb::NetParameter& net, const pb::NetParameter* weights)
        : net_(net), weights_(weights) {}

    Result<Model> run() {
        model_.network = builder::Network(net_.name().empty() ? "caffe" : net_.name());
        if (net_.layers_size() > 0)
            return error(
                "prototxt: V1 'layers' entries (Caffe before 2015) are not supported; "
                "upgrade the network with Caffe's upgrade_net_proto_text");
        if (Status s = legacy_inputs(); !s) return s;
        if (weights_) {
            if (weights_->layers_size() > 0)
                return error(
                    "caffemodel: V1 'layers' entries (Caffe before 2015) are not "
                    "supported; upgrade it with Caffe's upgrade_net_proto_binary");
            for (const pb::LayerParameter& l : weights_->layer())
                if (!l.name().empty()) weight_layers_.emplace(l.name(), &l);
        }
        for (const pb::LayerParameter& l : net_.layer()) {
            layer_ = &l;
            if (Status s = layer(l); !s) return s;
        }
        if (model_.inputs.empty()) return error("prototxt: the network has no input");
        // Outputs: tops that no later layer reads, each once, in layer order.
        for (const auto& produced : produced_order_) {
            const std::string& name = produced.first;
            const Tensor tensor = produced.second;  // a copy: lambdas cannot capture bindings
            if (consumed_.count(tensor.id)) continue;
            if (std::any_of(model_.outputs.begin(), model_.outputs.end(),
                            [&](const Value& v) { return v.tensor == tensor; }))
                continue;
            if (blobs_.at(name) != tensor) continue;  // rebound later by an in-place layer
            model_.network.output(tensor, name);
            model_.outputs.push_back({name, model_.network.dims(tensor), tensor});
        }
        if (model_.outputs.empty()) return error("prototxt: the network has no output");
        if (Status s = model_.network.status(); !s) return s;
        return std::move(model_);
    }

  private:
    // ---- helpers ----
    template <class... Parts>
    Status fail(const Parts&... parts) const {
        return error("Caffe layer '", layer_->name(), "' (", layer_->type(), "): ", parts...);
    }

    Result<Dims4> shape_dims(const pb::BlobShape& shape, const std::string& what) {
        std::vector<int64_t> d(shape.dim().begin(), shape.dim().end());
        for (int64_t x : d)
            if (x <= 0 || x > 65536)
                return error("prototxt: input '", what, "': dimension ", x, " is out of range");
        if (d.size() == 4) return Dims4{1, uint32_t(d[1]), uint32_t(d[2]), uint32_t(d[3])};
        if (d.size() == 3) return Dims4{1, uint32_t(d[0]), uint32_t(d[1]), uint32_t(d[2])};
        if (d.size() == 2) return Dims4{1, uint32_t(d[1]), 1, 1};
        return error("prototxt: input '", what, "': ", d.size(),
                     " dimensions (2 to 4 are supported)");
    }

    Status add_input(const std::string& name, Dims4 dims) {
        if (blobs_.count(name)) return error("prototxt: input '", name, "' is declared twice");
        Tensor t = model_.network.input(name, dims);
        if (!t.valid()) return model_.network.status();
        blobs_[name] = t;
        model_.inputs.push_back({name, dims, t});
        model_.blobs.emplace_back(name, t);
        return Status();
    }

    Status legacy_inputs() {
        const int n = net_.input_size();
        if (n == 0) return Status();
        if (net_.input_shape_size() == n) {
            for (int i = 0; i < n; ++i) {
                Result<Dims4> d = shape_dims(net_.input_shape(i), net_.input(i));
                if (!d) return d.status();
                if (Status s = add_input(net_.input(i), *d); !s) return s;
            }
            return Status();
        }
        if (net_.input_dim_size() != 4 * n)
            return error("prototxt: ", n, " inputs need ", 4 * n, " input_dim values or ", n,
                         " input_shape entries; the file has ", net_.input_dim_size(), " and ",
                         net_.input_shape_size());
        for (int i = 0; i < n; ++i) {
            pb::BlobShape s;
            for (int k = 0; k < 4; ++k) s.add_dim(net_.input_dim(4 * i + k));
            Result<Dims4> d = shape_dims(s, net_.input(i));
            if (!d) return d.status();
            if (Status st = add_input(net_.input(i), *d); !st) return st;
        }
        return Status();
    }

    // The layer's weight blobs: its own (a prototxt may carry them), else the caffemodel's
    // layer of the same name.
    const google::protobuf::RepeatedPtrField<pb::BlobProto>& blobs_of(
        const pb::LayerParameter& l) const {
        if (l.blobs_size() > 0 || !weights_) return l.blobs();
        auto it = weight_layers_.find(l.name());
        return it == weight_layers_.end() ? l.blobs() : it->second->blobs();
    }

    Result<std::vector<std::vector<float>>> weights(size_t at_least, size_t at_most) {
        const auto& b = blobs_of(*layer_);
        if (size_t(b.size()) < at_least || size_t(b.size()) > at_most) {
            if (b.size() == 0)
                return fail("no weights (the caffemodel has no layer of this name with blobs)");
            return fail(b.size(), " weight blobs (", at_least,
                        at_least == at_most ? "" : " to " + std::to_string(at_most), " expected)");
        }
        std::vector<std::vector<float>> out;
        for (const pb::BlobProto& blob : b) out.push_back(blob_values(blob));
        return out;
    }

    Result<std::vector<Tensor>> bottoms(int min, int max) {
        const pb::LayerParameter& l = *layer_;
        if (l.bottom_size() < min || l.bottom_size() > max)
            return fail(l.bottom_size(), " bottoms (", min,
                        min == max ? "" : " to " + std::to_string(max), " expected)");
        std::vector<Tensor> out;
        for (const std::string& b : l.bottom()) {
            auto it = blobs_.find(b);
            if (it == blobs_.end()) return fail("bottom '", b, "' is not produced before it");
            out.push_back(it->second);
            consumed_.insert(it->second.id);
        }
        return out;
    }

    Status define(Tensor t) {
        if (!t.valid()) return model_.network.status();
        if (layer_->top_size() != 1) return fail(layer_->top_size(), " tops (1 expected)");
        const std::string& top = layer_->top(0);
        blobs_[top] = t;
        produced_order_.emplace_back(top, t);
        model_.blobs.emplace_back(layer_->name(), t);
        return Status();
    }

    // Kernel, stride, pad and dilation of a convolution or deconvolution.
    struct Window {
        uint32_t kh = 0, kw = 0, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
    };
    Result<Window> conv_window(const pb::ConvolutionParameter& p) {
        Window w;
        auto pick = [&](const auto& repeated, bool has_h, uint32_t h, bool has_w, uint32_t wv,
                        uint32_t fallback, uint32_t& out_h, uint32_t& out_w,
                        const char* what) -> Status {
            if (has_h || has_w) {
                if (repeated.size() > 0)
                    return fail(what, " is given both as ", what, "_h/_w and as a list");
                out_h = h;
                out_w = wv;
            } else if (repeated.size() == 0) {
                out_h = out_w = fallback;
            } else if (repeated.size() == 1) {
                out_h = out_w = repeated.Get(0);
            } else if (repeated.size() == 2) {
                out_h = repeated.Get(0);
                out_w = repeated.Get(1);
            } else {
                return fail(repeated.size(), " ", what, " values (2-D only)");
            }
            return Status();
        };
        if (Status s = pick(p.kernel_size(), p.has_kernel_h(), p.kernel_h(), p.has_kernel_w(),
                            p.kernel_w(), 0, w.kh, w.kw, "kernel");
            !s)
            return s;
        if (Status s = pick(p.stride(), p.has_stride_h(), p.stride_h(), p.has_stride_w(),
                            p.stride_w(), 1, w.sh, w.sw, "stride");
            !s)
            return s;
        if (Status s = pick(p.pad(), p.has_pad_h(), p.pad_h(), p.has_pad_w(), p.pad_w(), 0, w.ph,
                            w.pw, "pad");
            !s)
            return s;
        if (p.dilation_size() > 2) return fail(p.dilation_size(), " dilation values (2-D only)");
        if (p.dilation_size() >= 1) w.dh = w.dw = p.dilation(0);
        if (p.dilation_size() == 2) w.dw = p.dilation(1);
        if (w.kh == 0 || w.kw == 0) return fail("the kernel size is missing or 0");
        if (w.sh == 0 || w.sw == 0 || w.dh == 0 || w.dw == 0)
            return fail("stride and dilation must be at least 1");
        if (p.axis() != 1) return fail("axis ", p.axis(), " (only 1 is supported)");
        if (p.num_output() == 0) return fail("num_output is missing or 0");
        return w;
    }

    // ---- layers ----
    Status layer(const pb::LayerParameter& l) {
        const std::string& type = l.type();
        if (type == "Input") return input_layer(l);
        if (type == "Convolution" || type == "Deconvolution") return convolution(l);
        if (type == "InnerProduct") return inner_product(l);
        if (type == "Pooling") return pooling(l);
        if (type == "ReLU") {
            Result<std::vector<Tensor>> x = bottoms(1, 1);
            if (!x) return x.status();
            const float slope = l.relu_param().negative_slope();
            if (slope == 0.0f) return define(model_.network.relu((*x)[0], l.name()));
            const float slopes[] = {slope};
            return define(model_.network.prelu((*x)[0], slopes, l.name()));
        }
        if (type == "PReLU") {
            Result<std::vector<Tensor>> x = bottoms(1, 1);
            if (!x) return x.status();
            Result<std::vector<std::vector<float>>> w = weights(1, 1);
            if (!w) return w.status();
            return define(model_.network.prelu((*x)[0], (*w)[0], l.name()));
        }
        if (type == "Sigmoid" || type == "TanH") {
            Result<std::vector<Tensor>> x = bottoms(1, 1);
            if (!x) return x.status();
            return define(type == "Sigmoid" ? model_.network.sigmoid((*x)[0], l.name())
                                            : model_.network.tanh((*x)[0], l.name()));
        }
        if (type == "LRN") {
            Result<std::vector<Tensor>> x = bottoms(1, 1);
            if (!x) return x.status();
            const pb::LRNParameter& p = l.lrn_param();
            if (p.norm_region() != pb::LRNParameter::ACROSS_CHANNELS)
                return fail("only ACROSS_CHANNELS normalisation is supported");
            return define(model_.network.lrn(
                (*x)[0],
                {.local_size = p.local_size(), .alpha = p.alpha(), .beta = p.beta(), .k = p.k()},
                l.name()));
        }
        if (type == "BatchNorm") return batch_norm(l);
        if (type == "Scale" || type == "Bias") return scale(l);
        if (type == "Eltwise") return eltwise(l);
        if (type == "Concat") {
            Result<std::vector<Tensor>> x = bottoms(1, 64);
            if (!x) return x.status();
            const pb::ConcatParameter& p = l.concat_param();
            const int axis = p.has_axis() ? p.axis() : static_cast<int>(p.concat_dim());
            if (axis != 1 && axis != -3) return fail("axis ", axis, " (only 1, the channels)");
            return define(model_.network.concat(*x, l.name()));
        }
        if (type == "Softmax") {
            Result<std::vector<Tensor>> x = bottoms(1, 1);
            if (!x) return x.status();
            if (l.softmax_param().axis() != 1) return fail("only axis 1 (the channels)");
            return define(model_.network.softmax((*x)[0], l.name()));
        }
        if (type == "Flatten") {
            Result<std::vector<Tensor>> x = bottoms(1, 1);
            if (!x) return x.status();
            const pb::FlattenParameter& p = l.flatten_param();
            if (p.axis() != 1 || (p.end_axis() != -1 && p.end_axis() != 3))
                return fail("only axis 1 to the end is supported");
            return define(model_.network.flatten((*x)[0], l.name()));
        }
        if (type == "Dropout" || type == "Split") {  // pass-through: the tops alias the bottom
            if (l.bottom_size() != 1) return fail(l.bottom_size(), " bottoms (1 expected)");
            auto it = blobs_.find(l.bottom(0));
            if (it == blobs_.end())
                return fail("bottom '", l.bottom(0), "' is not produced before it");
            const Tensor t = it->second;
            for (const std::string& top : l.top()) blobs_[top] = t;
            return Status();
        }
        return fail("the layer type is not supported");
    }

    Status input_layer(const pb::LayerParameter& l) {
        const auto& shapes = l.input_param().shape();
        if (l.top_size() == 0) return fail("no tops");
        if (shapes.size() != 1 && shapes.size() != l.top_size())
            return fail(l.top_size(), " tops but ", shapes.size(), " shapes");
        for (int i = 0; i < l.top_size(); ++i) {
            Result<Dims4> d = shape_dims(shapes.Get(shapes.size() == 1 ? 0 : i), l.top(i));
            if (!d) return d.status();
            if (Status s = add_input(l.top(i), *d); !s) return s;
        }
        return Status();
    }

    Status convolution(const pb::LayerParameter& l) {
        Result<std::vector<Tensor>> x = bottoms(1, 1);
        if (!x) return x.status();
        const pb::ConvolutionParameter& p = l.convolution_param();
        Result<Window> w = conv_window(p);
        if (!w) return w.status();
        const bool bias = p.bias_term();
        Result<std::vector<std::vector<float>>> b = weights(bias ? 2 : 1, bias ? 2 : 1);
        if (!b) return b.status();
        const std::span<const float> bias_values =
            bias ? std::span<const float>((*b)[1]) : std::span<const float>();
        if (l.type() == "Deconvolution") {
            if (w->dh != 1 || w->dw != 1) return fail("dilated deconvolutions are not supported");
            builder::DeconvolutionDesc d{.out_channels = p.num_output(),
                                         .kernel_h = w->kh,
                                         .kernel_w = w->kw,
                                         .stride_h = w->sh,
                                         .stride_w = w->sw,
                                         .pad_top = w->ph,
                                         .pad_left = w->pw,
                                         .pad_bottom = w->ph,
                                         .pad_right = w->pw,
                                         .groups = p.group()};
            return define(model_.network.deconvolution((*x)[0], d, (*b)[0], bias_values, l.name()));
        }
        builder::ConvolutionDesc d{.out_channels = p.num_output(),
                                   .kernel_h = w->kh,
                                   .kernel_w = w->kw,
                                   .stride_h = w->sh,
                                   .stride_w = w->sw,
                                   .pad_top = w->ph,
                                   .pad_left = w->pw,
                                   .pad_bottom = w->ph,
                                   .pad_right = w->pw,
                                   .dilation_h = w->dh,
                                   .dilation_w = w->dw,
                                   .groups = p.group()};
        return define(model_.network.convolution((*x)[0], d, (*b)[0], bias_values, l.name()));
    }

    Status inner_product(const pb::LayerParameter& l) {
        Result<std::vector<Tensor>> x = bottoms(1, 1);
        if (!x) return x.status();
        const pb::InnerProductParameter& p = l.inner_product_param();
        if (p.axis() != 1) return fail("axis ", p.axis(), " (only 1 is supported)");
        if (p.num_output() == 0) return fail("num_output is missing or 0");
        Result<std::vector<std::vector<float>>> b =
            weights(p.bias_term() ? 2 : 1, p.bias_term() ? 2 : 1);
        if (!b) return b.status();
        std::vector<float> w = (*b)[0];
        const Dims4 in = model_.network.dims((*x)[0]);
        const uint64_t k = uint64_t(in.c) * in.h * in.w;
        if (p.transpose()) {  // stored inputs x outputs
            if (w.size() != k * p.num_output())
                return fail(w.size(), " weights, ", k, "x", p.num_output(), " expected");
            std::vector<float> t(w.size());
            for (uint64_t i = 0; i < k; ++i)
                for (uint32_t o = 0; o < p.num_output(); ++o)
                    t[o * k + i] = w[i * p.num_output() + o];
            w = std::move(t);
        }
        const std::span<const float> bias =
            p.bias_term() ? std::span<const float>((*b)[1]) : std::span<const float>();
        return define(model_.network.fully_connected((*x)[0], p.num_output(), w, bias, l.name()));
    }

    Status pooling(const pb::LayerParameter& l) {
        Result<std::vector<Tensor>> x = bottoms(1, 1);
        if (!x) return x.status();
        const pb::PoolingParameter& p = l.pooling_param();
        if (p.pool() == pb::PoolingParameter::STOCHASTIC)
            return fail("stochastic pooling is not supported");
        const Dims4 in = model_.network.dims((*x)[0]);
        builder::PoolingDesc d;
        d.type = p.pool() == pb::PoolingParameter::MAX ? builder::PoolingType::Max
                                                       : builder::PoolingType::Average;
        if (p.global_pooling()) {
            d.kernel_h = in.h;
            d.kernel_w = in.w;
            return define(model_.network.pooling((*x)[0], d, l.name()));
        }
        if (p.has_kernel_size() && (p.has_kernel_h() || p.has_kernel_w()))
            return fail("kernel is given both as kernel_size and kernel_h/_w");
        d.kernel_h = p.has_kernel_h() ? p.kernel_h() : p.kernel_size();
        d.kernel_w = p.has_kernel_w() ? p.kernel_w() : p.kernel_size();
        d.stride_h = p.has_stride_h() ? p.stride_h() : p.stride();
        d.stride_w = p.has_stride_w() ? p.stride_w() : p.stride();
        const uint32_t ph = p.has_pad_h() ? p.pad_h() : p.pad();
        const uint32_t pw = p.has_pad_w() ? p.pad_w() : p.pad();
        if (d.kernel_h == 0 || d.kernel_w == 0) return fail("the kernel size is missing or 0");
        if (d.stride_h == 0 || d.stride_w == 0) return fail("the stride must be at least 1");
        if (ph >= d.kernel_h || pw >= d.kernel_w)
            return fail("the padding must be smaller than the kernel");
        if (uint64_t(in.h) + 2 * ph < d.kernel_h || uint64_t(in.w) + 2 * pw < d.kernel_w)
            return fail("the kernel is larger than the padded input");
        // Caffe's output size (ceil by default; the last window starts inside the padded
        // image), then the end padding that gives it with the builder's floor rule.
        const bool ceil_mode = p.round_mode() == pb::PoolingParameter::CEIL;
        auto axis = [&](uint32_t size, uint32_t k, uint32_t s, uint32_t pad, uint32_t& end_pad) {
            const uint64_t span = uint64_t(size) + 2 * pad - k;
            uint64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
            if (pad > 0 && (out - 1) * s >= uint64_t(size) + pad) --out;
            const int64_t need = int64_t((out - 1) * s + k) - int64_t(size) - int64_t(pad);
            end_pad = static_cast<uint32_t>(std::max<int64_t>(need, 0));
        };
        axis(in.h, d.kernel_h, d.stride_h, ph, d.pad_bottom);
        axis(in.w, d.kernel_w, d.stride_w, pw, d.pad_right);
        d.pad_top = ph;
        d.pad_left = pw;
        // Caffe averages over the window clipped to the explicitly padded image; the builder
        // over the whole window. They agree while the end padding stays within Caffe's pad.
        if (d.type == builder::PoolingType::Average && (d.pad_bottom > ph || d.pad_right > pw))
            return fail(
                "average pooling whose last window reaches past the padding (Caffe's "
                "ceil rounding) is not supported");
        return define(model_.network.pooling((*x)[0], d, l.name()));
    }

    Status batch_norm(const pb::LayerParameter& l) {
        Result<std::vector<Tensor>> x = bottoms(1, 1);
        if (!x) return x.status();
        Result<std::vector<std::vector<float>>> b = weights(3, 3);
        if (!b) return b.status();
        std::vector<float> mean = (*b)[0], variance = (*b)[1];
        if ((*b)[2].size() != 1)
            return fail("the scale-factor blob has ", (*b)[2].size(), " values (1 expected)");
        // Caffe stores running sums: mean and variance are divided by the factor (0: zero).
        const float factor = (*b)[2][0] == 0.0f ? 0.0f : 1.0f / (*b)[2][0];
        for (float& v : mean) v *= factor;
        for (float& v : variance) v *= factor;
        if (mean.size() != variance.size())
            return fail(mean.size(), " means but ", variance.size(), " variances");
        const std::vector<float> gamma(mean.size(), 1.0f), beta(mean.size(), 0.0f);
        return define(model_.network.batch_norm((*x)[0], mean, variance, gamma, beta,
                                                l.batch_norm_param().eps(), l.name()));
    }

    Status scale(const pb::LayerParameter& l) {
        Result<std::vector<Tensor>> x = bottoms(1, 1);
        if (!x) return x.status();
        if (l.type() == "Bias") {
            Result<std::vector<std::vector<float>>> b = weights(1, 1);
            if (!b) return b.status();
            return define(model_.network.bias((*x)[0], (*b)[0], l.name()));
        }
        const pb::ScaleParameter& p = l.scale_param();
        if (p.axis() != 1 || p.num_axes() != 1)
            return fail("only one value per channel (axis 1, num_axes 1) is supported");
        Result<std::vector<std::vector<float>>> b =
            weights(p.bias_term() ? 2 : 1, p.bias_term() ? 2 : 1);
        if (!b) return b.status();
        const std::span<const float> shift =
            p.bias_term() ? std::span<const float>((*b)[1]) : std::span<const float>();
        return define(model_.network.scale((*x)[0], (*b)[0], shift, l.name()));
    }

    Status eltwise(const pb::LayerParameter& l) {
        Result<std::vector<Tensor>> x = bottoms(2, 64);
        if (!x) return x.status();
        const pb::EltwiseParameter& p = l.eltwise_param();
        std::vector<Tensor> in = *x;
        if (p.coeff_size() > 0) {
            if (p.operation() != pb::EltwiseParameter::SUM)
                return fail("coefficients are only allowed for SUM");
            if (p.coeff_size() != int(in.size()))
                return fail(p.coeff_size(), " coefficients for ", in.size(), " bottoms");
            for (size_t i = 0; i < in.size(); ++i) {
                if (p.coeff(int(i)) == 1.0f) continue;
                const float c[] = {p.coeff(int(i))};
                in[i] = model_.network.scale(in[i], c, {}, l.name() + "_coeff" + std::to_string(i));
            }
        }
        const builder::EltwiseOp op =
            p.operation() == pb::EltwiseParameter::PROD  ? builder::EltwiseOp::Product
            : p.operation() == pb::EltwiseParameter::MAX ? builder::EltwiseOp::Max
                                                         : builder::EltwiseOp::Sum;
        Tensor acc = in[0];
        for (size_t i = 1; i < in.size(); ++i)
            acc = model_.network.eltwise(
                acc, in[i], op, i + 1 == in.size() ? l.name() : l.name() + "_" + std::to_string(i));
        return define(acc);
    }

    const pb::NetParameter& net_;
    const pb::NetParameter* weights_;
    std::map<std::string, const pb::LayerParameter*> weight_layers_;
    const pb::LayerParameter* layer_ = nullptr;
    Model model_;
    std::map<std::string, Tensor> blobs_;
    std::vector<std::pair<std::string, Tensor>> produced_order_;
    std::set<uint32_t> consumed_;
};

Result<std::string> read_file(const std::string& path, const char* what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return error(what, " ", path, ": cannot be opened");
    std::ostringstream s;
    s << in.rdbuf();
    if (in.bad()) return error(what, " ", path, ": read error");
    return s.str();
}

}  // namespace

Result<Model> import_bytes(std::string_view prototxt, std::span<const std::byte> caffemodel) {
    pb::NetParameter net;
    ErrorCollector errors;
    google::protobuf::TextFormat::Parser parser;
    parser.RecordErrorsTo(&errors);
    google::protobuf::io::ArrayInputStream stream(prototxt.data(),
                                                  static_cast<int>(prototxt.size()));
    if (prototxt.size() > (size_t(1) << 30) || !parser.Parse(&stream, &net))
        return error("prototxt: not a Caffe network in protobuf text format (",
                     errors.first().empty() ? "too large" : errors.first(), ")");
    pb::NetParameter weights;
    if (!caffemodel.empty()) {
        if (caffemodel.size() > size_t(INT32_MAX) ||
            !weights.ParseFromArray(caffemodel.data(), static_cast<int>(caffemodel.size())))
            return error("caffemodel: not a Caffe NetParameter in protobuf binary format");
    }
    return Importer(net, caffemodel.empty() ? nullptr : &weights).run();
}

Result<Model> import_files(const std::string& prototxt_path, const std::string& caffemodel_path) {
    Result<std::string> text = read_file(prototxt_path, "prototxt");
    if (!text) return text.status();
    std::string binary;
    if (!caffemodel_path.empty()) {
        Result<std::string> b = read_file(caffemodel_path, "caffemodel");
        if (!b) return b.status();
        binary = std::move(b).value();
    }
    Result<Model> m =
        import_bytes(*text, std::as_bytes(std::span<const char>(binary.data(), binary.size())));
    if (m) return m;
    std::string message = m.message();
    if (message.rfind("prototxt: ", 0) == 0)
        message = "prototxt " + prototxt_path + ": " + message.substr(10);
    else if (message.rfind("caffemodel: ", 0) == 0)
        message = "caffemodel " + caffemodel_path + ": " + message.substr(12);
    return Status::failure(message);
}

}  // namespace nvdla::caffe
