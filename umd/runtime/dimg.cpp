#include <cstring>
#include <sstream>

#include "nvdla/precision/fp16.hpp"
#include "nvdla/runtime_dimg.hpp"

namespace nvdla::dimg {

namespace {

enum class Kind : uint8_t { Int8x32, Int8x8, Int16, Fp16 };

struct Element {
    Kind kind;
    uint32_t bytes;
    uint32_t lanes;  // channels per atom group
};

Result<Element> element_of(const TensorInfo& t) {
    const std::string what = "output tensor '" + t.name + "'";
    if (t.pixel_format != kPixelFormatFeature && t.pixel_format != kPixelFormatFeatureX8)
        return error(what, " has pixel format ", unsigned(t.pixel_format),
                     ": only feature data (36, 37) can be written as DIMG");
    switch (t.data_type) {
        case TensorDataType::Float16: return Element{Kind::Fp16, 2, 16};
        case TensorDataType::Int16: return Element{Kind::Int16, 2, 16};
        case TensorDataType::Int8:
            if (t.pixel_format == kPixelFormatFeatureX8) return Element{Kind::Int8x8, 1, 8};
            return Element{Kind::Int8x32, 1, 32};
        default: break;
    }
    return error(what, " holds ", to_string(t.data_type),
                 " data, which DIMG files cannot hold (int8, int16 and fp16 can)");
}

uint32_t format_code(Kind kind, Numbering numbering) {
    const bool golden = numbering == Numbering::Golden;
    switch (kind) {
        case Kind::Int8x32: return 40;
        case Kind::Int8x8: return golden ? 47 : 41;
        case Kind::Int16: return golden ? 41 : 42;
        case Kind::Fp16: return golden ? 42 : 43;
    }
    return 0;
}

// Calls visit(pointer) for each element in DIMG order, after checking every one is inside data.
template <class Visit>
Status for_each_element(const TensorInfo& t, const Element& e, std::span<const std::byte> data,
                        Visit&& visit) {
    const uint64_t line = t.strides[1], surface = t.strides[2];
    for (uint32_t c = 0; c < t.dims.c; ++c)
        for (uint32_t h = 0; h < t.dims.h; ++h)
            for (uint32_t w = 0; w < t.dims.w; ++w) {
                const uint64_t offset = uint64_t(c / e.lanes) * surface + h * line +
                                        uint64_t(w) * e.lanes * e.bytes +
                                        uint64_t(c % e.lanes) * e.bytes;
                if (offset + e.bytes > data.size())
                    return error("output tensor '", t.name, "': element (c ", c, ", h ", h, ", w ",
                                 w, ") at byte ", offset, " lies outside its ", data.size(),
                                 " bytes");
                visit(data.data() + offset);
            }
    return Status();
}

// The original's "stable hash" rewrite of fp16 values (see the header).
uint16_t stable_fp16(uint16_t bits) {
    if (bits == 0x7800) return 0x0000;      // the value 32768.0
    if (fp16::is_nan(bits)) return 0x77c0;  // half(31744.0)
    return bits;
}

template <class T>
T load(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

}  // namespace

Result<Header> header_for(const TensorInfo& tensor, Numbering numbering) {
    Result<Element> e = element_of(tensor);
    if (!e) return e.status();
    if (tensor.size_bytes > UINT32_MAX)
        return error("output tensor '", tensor.name, "' is larger than 4 GiB");
    Header h;
    h.pixel_format = format_code(e->kind, numbering);
    h.width = tensor.dims.w;
    h.height = tensor.dims.h;
    h.channels = tensor.dims.c;
    h.line_stride = tensor.strides[1];
    h.surface_stride = tensor.strides[2];
    h.size = static_cast<uint32_t>(tensor.size_bytes);
    return h;
}

Result<std::vector<std::byte>> encode(const TensorInfo& tensor, std::span<const std::byte> data,
                                      Numbering numbering) {
    Result<Header> header = header_for(tensor, numbering);
    if (!header) return header.status();
    const Element e = *element_of(tensor);
    std::vector<std::byte> out(kHeaderBytes);
    const uint32_t fields[9] = {0x474d4944u /* "DIMG" */,
                                0,
                                header->pixel_format,
                                header->width,
                                header->height,
                                header->channels,
                                header->line_stride,
                                header->surface_stride,
                                header->size};
    std::memcpy(out.data(), fields, sizeof fields);
    out.reserve(kHeaderBytes + tensor.dims.elements() * e.bytes);
    Status s = for_each_element(tensor, e, data, [&](const std::byte* p) {
        if (e.kind == Kind::Fp16) {
            const uint16_t v = stable_fp16(load<uint16_t>(p));
            const auto* b = reinterpret_cast<const std::byte*>(&v);
            out.insert(out.end(), b, b + 2);
        } else {
            out.insert(out.end(), p, p + e.bytes);
        }
    });
    if (!s) return s;
    return out;
}

Result<std::string> encode_text(const TensorInfo& tensor, std::span<const std::byte> data) {
    Result<Element> e = element_of(tensor);
    if (!e) return e.status();
    std::ostringstream out;
    Status s = for_each_element(tensor, *e, data, [&](const std::byte* p) {
        switch (e->kind) {
            case Kind::Fp16: out << fp16::to_float(stable_fp16(load<uint16_t>(p))) << " "; break;
            case Kind::Int16: out << load<int16_t>(p) << " "; break;
            default: out << static_cast<int>(load<int8_t>(p)) << " "; break;
        }
    });
    if (!s) return s;
    return out.str();
}

Result<std::vector<float>> elements(const TensorInfo& tensor, std::span<const std::byte> data) {
    Result<Element> e = element_of(tensor);
    if (!e) return e.status();
    std::vector<float> out;
    out.reserve(tensor.dims.elements());
    Status s = for_each_element(tensor, *e, data, [&](const std::byte* p) {
        switch (e->kind) {
            case Kind::Fp16: out.push_back(fp16::to_float(load<uint16_t>(p))); break;
            case Kind::Int16: out.push_back(load<int16_t>(p)); break;
            default: out.push_back(load<int8_t>(p)); break;
        }
    });
    if (!s) return s;
    return out;
}

}  // namespace nvdla::dimg
