#include "nvdla/formats/dmp.hpp"

#include <limits>

#include "formats/element.hpp"

namespace nvdla {
namespace {

Status check_dims(const Dims4& tensor, const DmpLayout& l, const char* what) {
    if (tensor == Dims4{l.depth, l.channels, l.height, l.width}) return {};
    return error(what, ": host tensor is ", tensor.n, "x", tensor.c, "x", tensor.h, "x", tensor.w,
                 " but the layout is ", l.depth, "x", l.channels, "x", l.height, "x", l.width,
                 " (DxCxHxW)");
}

// DMP elements are fp16 or float32; float32 has no hardware precision, so it goes through the
// host-type rules (a float32 "host" element on both sides).
void write_element(const DmpLayout& l, const ConstTensorView& src, uint32_t d, uint32_t c,
                   uint32_t y, uint32_t x, uint8_t* dst, const ConvertOptions& opt) {
    const void* in =
        static_cast<const uint8_t*>(src.data) +
        detail::host_offset(src.dims, src.layout, bytes_per_element(src.type), d, c, y, x);
    const double v = detail::host_value(src.type, in) * static_cast<double>(opt.quant_scale);
    if (l.element == DmpElement::Fp16)
        detail::store_surface(Precision::Fp16, v, dst, opt);
    else
        detail::store_host(HostType::Float32, v, dst, opt);
}

void read_element(const DmpLayout& l, const uint8_t* src, const TensorView& dst, uint32_t d,
                  uint32_t c, uint32_t y, uint32_t x, const ConvertOptions& opt) {
    void* out = static_cast<uint8_t*>(dst.data) +
                detail::host_offset(dst.dims, dst.layout, bytes_per_element(dst.type), d, c, y, x);
    const double v = l.element == DmpElement::Fp16 ? detail::surface_value(Precision::Fp16, src)
                                                   : detail::host_value(HostType::Float32, src);
    detail::store_host(dst.type, v / static_cast<double>(opt.quant_scale), out, opt);
}

}  // namespace

Result<DmpLayout> make_dmp_layout(Dims4 dims, DmpElement element, bool transposed) {
    if (!dims.n || !dims.c || !dims.h || !dims.w)
        return error("DMP layout: dimensions ", dims.n, "x", dims.c, "x", dims.h, "x", dims.w,
                     " (DxCxHxW) have a zero extent");
    DmpLayout l{dims.n, dims.c, dims.h, dims.w, transposed, element};
    if (l.size_bytes() / l.bytes_per_element() != dims.elements() ||
        l.size_bytes() > std::numeric_limits<size_t>::max())
        return error("DMP layout: ", dims.n, "x", dims.c, "x", dims.h, "x", dims.w,
                     " is too large");
    return l;
}

Status pack_dmp(const ConstTensorView& src, const DmpLayout& layout, ByteSpan dst,
                const ConvertOptions& opt) {
    if (Status s = detail::check_host_tensor(src, "pack DMP layout"); !s.ok()) return s;
    if (Status s = check_dims(src.dims, layout, "pack DMP layout"); !s.ok()) return s;
    if (dst.size() < layout.size_bytes())
        return error("pack DMP layout: buffer of ", dst.size(),
                     " bytes is smaller than the layout (", layout.size_bytes(), " bytes)");
    auto* out = reinterpret_cast<uint8_t*>(dst.data());
    for (uint32_t d = 0; d < layout.depth; ++d)
        for (uint32_t c = 0; c < layout.channels; ++c)
            for (uint32_t y = 0; y < layout.height; ++y)
                for (uint32_t x = 0; x < layout.width; ++x)
                    write_element(layout, src, d, c, y, x, out + layout.offset(d, c, y, x), opt);
    return {};
}

Status unpack_dmp(ConstByteSpan src, const DmpLayout& layout, const TensorView& dst,
                  const ConvertOptions& opt) {
    if (Status s = detail::check_host_tensor(dst, "unpack DMP layout"); !s.ok()) return s;
    if (Status s = check_dims(dst.dims, layout, "unpack DMP layout"); !s.ok()) return s;
    if (src.size() < layout.size_bytes())
        return error("unpack DMP layout: buffer of ", src.size(),
                     " bytes is smaller than the layout (", layout.size_bytes(), " bytes)");
    const auto* in = reinterpret_cast<const uint8_t*>(src.data());
    for (uint32_t d = 0; d < layout.depth; ++d)
        for (uint32_t c = 0; c < layout.channels; ++c)
            for (uint32_t y = 0; y < layout.height; ++y)
                for (uint32_t x = 0; x < layout.width; ++x)
                    read_element(layout, in + layout.offset(d, c, y, x), dst, d, c, y, x, opt);
    return {};
}

}  // namespace nvdla
