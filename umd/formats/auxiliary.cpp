#include "nvdla/formats/auxiliary.hpp"

#include <cstring>

#include "formats/element.hpp"
#include "nvdla/formats/alignment.hpp"

namespace nvdla {
namespace {

const char* to_cstr(AuxMode m) {
    return m == AuxMode::PerChannel ? "per-channel" : "per-element";
}
const char* to_cstr(AuxUse u) {
    return u == AuxUse::Alu ? "ALU" : (u == AuxUse::Mul ? "MUL" : "ALU+MUL");
}

SurfaceKind surface_kind(AuxKind k) {
    switch (k) {
        case AuxKind::Bias: return SurfaceKind::Bias;
        case AuxKind::PRelu: return SurfaceKind::PRelu;
        case AuxKind::BatchNorm: return SurfaceKind::BatchNorm;
        case AuxKind::ElementWise: return SurfaceKind::ElementWise;
    }
    return SurfaceKind::Bias;
}

// The combinations the seed defines (its ComponentsPerElement table and per-format text).
Status check_kind(AuxKind kind, AuxMode mode, AuxUse use) {
    bool mode_ok = true, use_ok = true;
    const char* expected = "";
    switch (kind) {
        case AuxKind::Bias:
            use_ok = use != AuxUse::Both;
            expected = "per-channel or per-element, ALU or MUL (one component)";
            break;
        case AuxKind::PRelu:
            mode_ok = mode == AuxMode::PerChannel;
            use_ok = use == AuxUse::Mul;
            expected = "per-channel, MUL";
            break;
        case AuxKind::BatchNorm:
            mode_ok = mode == AuxMode::PerChannel;
            use_ok = use == AuxUse::Both;
            expected = "per-channel, ALU+MUL (two components)";
            break;
        case AuxKind::ElementWise:
            mode_ok = mode == AuxMode::PerElement;
            expected = "per-element, ALU, MUL or both";
            break;
    }
    if (mode_ok && use_ok) return {};
    return error(to_string(kind), " data cannot be ", to_cstr(mode), " ", to_cstr(use), " (it is ",
                 expected, ")");
}

Status check_operand(const char* role, const ConstTensorView* t, const AuxLayout& layout,
                     const char* what) {
    if (!t)
        return error(what, ": the ", role, " operand is missing (", to_string(layout.kind),
                     " data with ", to_cstr(layout.use), " needs it)");
    if (Status s = detail::check_host_tensor(*t, what); !s.ok()) return s;
    const Dims4 want{1, layout.channels, layout.height, layout.width};
    if (!(t->dims == want))
        return error(what, ": the ", role, " operand is ", t->dims.n, "x", t->dims.c, "x",
                     t->dims.h, "x", t->dims.w, " but the data is ", want.n, "x", want.c, "x",
                     want.h, "x", want.w, " (NxCxHxW)");
    return {};
}

// (operand, component index) pairs of a layout, in memory order.
template <class T>
int operands_in_order(const AuxLayout& layout, T* alu, T* mul, T* out[2]) {
    switch (layout.use) {
        case AuxUse::Alu: out[0] = alu; return 1;
        case AuxUse::Mul: out[0] = mul; return 1;
        case AuxUse::Both:
            out[0] = alu;
            out[1] = mul;
            return 2;
    }
    return 0;
}

}  // namespace

std::string_view to_string(AuxKind k) {
    switch (k) {
        case AuxKind::Bias: return "bias";
        case AuxKind::PRelu: return "PReLU";
        case AuxKind::BatchNorm: return "batch-normalization";
        case AuxKind::ElementWise: return "element-wise";
    }
    return "?";
}

Result<AuxLayout> make_aux_layout(const HwConfig& cfg, AuxKind kind, AuxMode mode, AuxUse use,
                                  Precision processing_precision, Precision component_precision,
                                  Dims4 dims, FeatureStrides strides) {
    const std::string what(to_string(kind));
    if (Status s = check_kind(kind, mode, use); !s.ok()) return s;
    if (!supports(cfg, processing_precision))
        return error(what, " data: ", cfg.name, " does not support ",
                     to_string(processing_precision), " processing");
    const bool float_input = processing_precision == Precision::Fp16;
    if (float_input != (component_precision == Precision::Fp16))
        return error(what, " data: ", to_string(component_precision), " components do not fit a ",
                     to_string(processing_precision), " datapath (",
                     float_input ? "fp16 needs fp16" : "integer needs int8 or int16", ")");
    if (dims.n != 1) return error(what, " data: batch count must be 1, not ", dims.n);
    for (auto [name, v] : {std::pair{"channel count", dims.c}, std::pair{"height", dims.h},
                           std::pair{"width", dims.w}})
        if (v == 0 || v > kMaxCubeExtent)
            return error(what, " data: ", name, " ", v, " is out of range 1..", kMaxCubeExtent);
    if (mode == AuxMode::PerChannel && (dims.h != 1 || dims.w != 1))
        return error(what, " data: per-channel data is 1x1xC, not ", dims.w, "x", dims.h, "x",
                     dims.c, " (WxHxC)");

    AuxLayout l;
    l.kind = kind;
    l.mode = mode;
    l.use = use;
    l.processing_precision = processing_precision;
    l.component_precision = component_precision;
    l.elements_per_atom = elements_per_atom(cfg, processing_precision);
    l.channels = dims.c;
    l.height = dims.h;
    l.width = dims.w;

    const uint64_t atom = l.bytes_per_atom();
    if (mode == AuxMode::PerChannel) {  // contiguous: atoms one after the other
        l.line_stride = atom;
        l.surface_stride = atom;
    } else {
        const uint64_t line = uint64_t(dims.w) * atom;
        l.line_stride = strides.line ? strides.line : line;
        if (l.line_stride < line)
            return error(what, " data: line stride ", l.line_stride,
                         " is smaller than one line of atoms (", line, " bytes)");
        const uint64_t surface = (dims.h - 1) * l.line_stride + line;
        l.surface_stride = strides.surface ? strides.surface : dims.h * l.line_stride;
        if (l.surface_stride < surface)
            return error(what, " data: surface stride ", l.surface_stride,
                         " is smaller than one surface (", surface, " bytes)");
        SurfacePlacement p;
        p.line_stride = l.line_stride;
        p.surface_stride = l.surface_stride;
        p.data_size = l.size_bytes();
        if (Status s = check_alignment(cfg, surface_kind(kind), p); !s.ok()) return s;
    }
    return l;
}

Status pack_aux(const AuxLayout& layout, const AuxOperands& operands, ByteSpan dst,
                const ConvertOptions& opt) {
    const std::string what = "pack " + std::string(to_string(layout.kind)) + " data";
    const ConstTensorView* order[2] = {};
    const int n = operands_in_order(layout, operands.alu, operands.mul, order);
    for (int i = 0; i < n; ++i) {
        const char* role = n == 2 ? (i == 0 ? "ALU" : "MUL") : to_cstr(layout.use);
        if (Status s = check_operand(role, order[i], layout, what.c_str()); !s.ok()) return s;
    }
    if (dst.size() < layout.size_bytes())
        return error(what, ": buffer of ", dst.size(), " bytes is smaller than the data (",
                     layout.size_bytes(), " bytes)");

    auto* out = reinterpret_cast<uint8_t*>(dst.data());
    const detail::HostReader readers[2] = {
        {*order[0], layout.component_precision, opt},
        {n == 2 ? *order[1] : *order[0], layout.component_precision, opt}};
    for (uint32_t s = 0; s < layout.surfaces(); ++s)
        for (uint32_t h = 0; h < layout.height; ++h)
            for (uint32_t w = 0; w < layout.width; ++w) {
                const uint32_t c0 = s * layout.elements_per_atom;
                uint8_t* atom = out + layout.offset(c0, h, w);
                std::memset(atom, 0, layout.bytes_per_atom());
                for (uint32_t c = c0; c < std::min(layout.channels, c0 + layout.elements_per_atom);
                     ++c)
                    for (int i = 0; i < n; ++i)
                        readers[i].read(0, c, h, w, out + layout.offset(c, h, w, i));
            }
    return {};
}

Status unpack_aux(const AuxLayout& layout, ConstByteSpan src, const AuxOutputs& outputs,
                  const ConvertOptions& opt) {
    const std::string what = "unpack " + std::string(to_string(layout.kind)) + " data";
    const TensorView* order[2] = {};
    const int n = operands_in_order(layout, outputs.alu, outputs.mul, order);
    for (int i = 0; i < n; ++i) {
        const char* role = n == 2 ? (i == 0 ? "ALU" : "MUL") : to_cstr(layout.use);
        const ConstTensorView view = order[i] ? ConstTensorView(*order[i]) : ConstTensorView{};
        if (Status s = check_operand(role, order[i] ? &view : nullptr, layout, what.c_str());
            !s.ok())
            return s;
    }
    if (src.size() < layout.size_bytes())
        return error(what, ": buffer of ", src.size(), " bytes is smaller than the data (",
                     layout.size_bytes(), " bytes)");
    const auto* in = reinterpret_cast<const uint8_t*>(src.data());
    for (int i = 0; i < n; ++i) {
        const detail::HostWriter writer(*order[i], layout.component_precision, opt);
        for (uint32_t c = 0; c < layout.channels; ++c)
            for (uint32_t h = 0; h < layout.height; ++h)
                for (uint32_t w = 0; w < layout.width; ++w)
                    writer.write(0, c, h, w, in + layout.offset(c, h, w, i));
    }
    return {};
}

uint16_t aux_register_value(Precision component_precision, float value, const ConvertOptions& opt) {
    uint8_t bytes[2] = {};
    detail::store_surface(component_precision, static_cast<double>(value) * opt.quant_scale, bytes,
                          opt);
    if (component_precision == Precision::Int8)
        return static_cast<uint16_t>(static_cast<int16_t>(static_cast<int8_t>(bytes[0])));
    return static_cast<uint16_t>(bytes[0] | bytes[1] << 8);
}

}  // namespace nvdla
