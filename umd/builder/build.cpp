// build(): options, lowering and emission; host data in and out of bound tensors; run().
#include <algorithm>
#include <cmath>
#include <cstring>

#include "builder/emit.hpp"
#include "builder/lower_impl.hpp"
#include "nvdla/formats/feature.hpp"
#include "nvdla/formats/pixel.hpp"

namespace nvdla::builder {

Result<CompiledNetwork> build(const Network& net, const BuildOptions& options) {
    const Network::Impl& impl = net.impl();
    if (!impl.error.ok()) return impl.error;
    if (impl.outputs.empty()) return error("network '", impl.name, "' has no outputs");
    Result<const HwConfig*> cfg = find_hw_config(options.config);
    if (!cfg) return cfg.status();
    if (options.precision == Precision::Int16)
        return error("int16 builds are not supported; choose fp16 or int8");
    if (!supports(**cfg, options.precision))
        return error((*cfg)->name, " has no ", to_string(options.precision),
                     " datapath; build with int8");
    if (options.precision == Precision::Int8 && !options.calibration)
        return error("an int8 build needs activation ranges: set BuildOptions::calibration");
    if (!(options.lut_range > 0) || !std::isfinite(options.lut_range) || options.lut_range > 65504)
        return error("lut_range is ", options.lut_range, "; it must be in (0, 65504]");
    if (options.inputs.size() > impl.inputs.size())
        return error(options.inputs.size(), " input formats given for ", impl.inputs.size(),
                     " inputs");

    const Network::Impl* lowered = &impl;
    const Calibration::Impl* ranges = options.calibration ? &options.calibration->impl() : nullptr;
    Network::Impl equalized;
    Calibration::Impl equalized_ranges;
    if (options.precision == Precision::Int8 && options.equalize_channel_ranges &&
        options.quantization == Quantization::PerChannel) {
        equalized = impl;
        equalized_ranges = *ranges;
        detail::equalize_channel_ranges(equalized, equalized_ranges);
        lowered = &equalized;
        ranges = &equalized_ranges;
    }
    Network::Impl rounded;
    if (options.precision == Precision::Int8 && options.adaptive_rounding &&
        !ranges->inputs.empty()) {
        rounded = *lowered;
        if (Status s = detail::round_weights_adaptively(rounded, *ranges, options.quantization); !s)
            return s;
        lowered = &rounded;
    }
    detail::Lowering lowering(*lowered, options, **cfg, ranges);
    Result<detail::Plan> plan = lowering.run();
    if (!plan) return plan.status();
    uint64_t pool = 0;
    Result<std::vector<std::byte>> bytes =
        detail::emit_loadable(plan.value(), **cfg, options.precision, pool);
    if (!bytes) return bytes.status();

    CompiledNetwork out;
    out.loadable = std::move(bytes).value();
    out.config = (*cfg)->name;
    out.hw = *cfg;
    out.precision = options.precision;
    out.inputs = plan->inputs;
    out.outputs = plan->outputs;
    bool previous_cpu_task = true, first = true;
    for (const detail::Step& s : plan->steps) {
        out.operations.push_back(s.group.note);
        if (s.cpu_task) out.cpu_operations.push_back(s.group.note);
        if (s.cpu) out.needs_extended_cpu_tasks = true;
        if (first || s.cpu_task != previous_cpu_task) {
            if (s.cpu_task)
                ++out.cpu_tasks;
            else
                ++out.hardware_tasks;
        } else if (s.cpu_task) {
            ++out.cpu_tasks;
        }
        previous_cpu_task = s.cpu_task;
        first = false;
    }
    out.hardware_macs = plan->hardware_macs;
    out.model_macs = plan->model_macs;
    out.weight_bytes = plan->consts.size();
    out.activation_bytes = pool;
    return out;
}

namespace {

Result<FeatureCube> cube_of(const TensorDesc& d) {
    if (!d.hw) return error("tensor '", d.name, "': the description has no configuration");
    return make_feature_cube(*d.hw, d.precision, d.dims, {d.line_stride, d.surface_stride, 0});
}

}  // namespace

Status pack_input(const TensorDesc& desc, const HostTensor& value, std::span<std::byte> dst) {
    if (value.dims != desc.dims)
        return error("input '", desc.name, "': the tensor is ", value.dims.n, "x", value.dims.c,
                     "x", value.dims.h, "x", value.dims.w, ", the network expects ", desc.dims.n,
                     "x", desc.dims.c, "x", desc.dims.h, "x", desc.dims.w);
    if (value.data.size() != value.dims.elements())
        return error("input '", desc.name, "': ", value.data.size(), " values for ",
                     value.dims.elements(), " elements");
    if (dst.size() < desc.size_bytes)
        return error("input '", desc.name, "': the buffer holds ", dst.size(),
                     " bytes, the tensor needs ", desc.size_bytes);
    if (desc.image) {
        // Pixel component values, channels the network does not use set to 0.
        const PixelFormatInfo& info = pixel_format_info(desc.image->pixel_format);
        Result<PixelSurface> dense =
            dense_pixel_surface(*desc.hw, desc.image->pixel_format, desc.dims.w, desc.dims.h);
        if (!dense) return dense.status().context("input '" + desc.name + "'");
        PixelSurface surface = *dense;
        surface.planes[0].line_stride = desc.line_stride;
        const Dims4 d{1, info.channels, desc.dims.h, desc.dims.w};
        const uint32_t bits = info.significant_bits;
        std::vector<float> f32(d.elements(), 0.0f);
        std::vector<uint16_t> u16(d.elements(), 0);
        const bool fp16 = info.input_precision == Precision::Fp16;
        for (uint32_t c = 0; c < desc.dims.c; ++c)
            for (uint32_t y = 0; y < d.h; ++y)
                for (uint32_t x = 0; x < d.w; ++x) {
                    const size_t i = (size_t(c) * d.h + y) * d.w + x;
                    const float v = value.at(0, c, y, x);
                    f32[i] = v;
                    u16[i] = static_cast<uint16_t>(
                        std::clamp(std::round(v), 0.0f, float((1u << bits) - 1)));
                }
        const ConstTensorView view = fp16 ? ConstTensorView{f32.data(), f32.size() * 4,
                                                            HostType::Float32, HostLayout::NCHW, d}
                                          : ConstTensorView{u16.data(), u16.size() * 2,
                                                            HostType::Uint16, HostLayout::NCHW, d};
        return pack_pixels(*desc.hw, view, surface, dst);
    }
    Result<FeatureCube> cube = cube_of(desc);
    if (!cube) return cube.status().context("input '" + desc.name + "'");
    ConvertOptions opt;
    opt.saturate_fp16 = true;
    if (desc.precision == Precision::Int8) opt.quant_scale = 1.0f / desc.scale;
    const ConstTensorView view{value.data.data(), value.data.size() * sizeof(float),
                               HostType::Float32, value.layout, value.dims};
    return pack_feature(view, *cube, dst, opt);
}

Result<HostTensor> unpack_output(const TensorDesc& desc, std::span<const std::byte> src) {
    if (src.size() < desc.size_bytes)
        return error("output '", desc.name, "': the buffer holds ", src.size(),
                     " bytes, the tensor needs ", desc.size_bytes);
    Result<FeatureCube> cube = cube_of(desc);
    if (!cube) return cube.status().context("output '" + desc.name + "'");
    HostTensor t = make_host_tensor(desc.dims, desc.host_layout);
    if (desc.precision == Precision::Int8) {
        std::vector<int8_t> raw(desc.dims.elements());
        const TensorView view{raw.data(), raw.size(), HostType::Int8, desc.host_layout, desc.dims};
        if (Status s = unpack_feature(src, *cube, view); !s) return s;
        for (size_t i = 0; i < raw.size(); ++i) t.data[i] = float(raw[i]) * desc.scale;
    } else {
        const TensorView view{t.data.data(), t.data.size() * sizeof(float), HostType::Float32,
                              desc.host_layout, desc.dims};
        if (Status s = unpack_feature(src, *cube, view); !s) return s;
    }
    return t;
}

Result<std::vector<HostTensor>> run(const CompiledNetwork& net, Runtime& rt,
                                    const std::vector<HostTensor>& inputs) {
    if (inputs.size() != net.inputs.size())
        return error("the network has ", net.inputs.size(), " inputs, ", inputs.size(), " given");
    Result<std::shared_ptr<nvdla::Network>> loaded = rt.load(net.loadable);
    if (!loaded) return loaded.status();
    Result<std::unique_ptr<Context>> ctx = (*loaded)->create_context();
    if (!ctx) return ctx.status();
    for (size_t i = 0; i < inputs.size(); ++i)
        if (Status s =
                pack_input(net.inputs[i], inputs[i], (*ctx)->input(static_cast<uint32_t>(i)));
            !s)
            return s;
    if (Status s = (*ctx)->run(); !s) return s;
    std::vector<HostTensor> out;
    for (size_t i = 0; i < net.outputs.size(); ++i) {
        Result<HostTensor> t =
            unpack_output(net.outputs[i], (*ctx)->output(static_cast<uint32_t>(i)));
        if (!t) return t.status();
        out.push_back(std::move(t).value());
    }
    return out;
}

}  // namespace nvdla::builder
