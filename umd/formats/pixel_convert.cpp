// The conversion the CDMA applies to pixels in image-input mode, as the nv_full C model does
// it: hls_convertor / process_one_element_{8,16} in cmod/cdma/NV_NVDLA_cdma.cpp and the HLS
// cell cmod/hls/cdma_libs/cdma_cvt.cpp (widths: 17-bit data, 16-bit offset, 18-bit
// difference, 16-bit scale, 34-bit product, 6-bit truncate, 17-bit result).

#include "formats/element.hpp"
#include "formats/pixel_internal.hpp"
#include "nvdla/formats/pixel.hpp"
#include "nvdla/precision/fp16.hpp"
#include "nvdla/precision/integer.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla {
namespace {

constexpr unsigned kResultBits = 17;  // the convertor's int17 result (vInt17Size)

// Writes one converted element (bits as convert_pixel_element returns them) to a host element.
void store_converted(detail::DecodeFn decode, Precision p, uint16_t bits, void* host) {
    static const ConvertOptions exact{};
    if (p == Precision::Int8) {
        const auto byte = static_cast<int8_t>(bits & 0xffu);
        decode(&byte, host, exact);
    } else {
        decode(&bits, host, exact);
    }
}

bool valid_precision(Precision p) {
    return p == Precision::Int8 || p == Precision::Int16 || p == Precision::Fp16;
}

Status check_destination(const TensorView& dst, const PixelFormatInfo& f, uint32_t width,
                         uint32_t height, const char* what) {
    if (Status s = detail::check_host_tensor(dst, what); !s) return s;
    const Dims4 want{1, f.channels, height, width};
    if (dst.dims != want)
        return error(what, ": dimensions ", dst.dims.n, "x", dst.dims.c, "x", dst.dims.h, "x",
                     dst.dims.w, " (NxCxHxW) do not match ", f.name, " ", width, "x", height,
                     " (1x", unsigned(f.channels), "x", height, "x", width, ")");
    return {};
}

}  // namespace

Status check_pixel_conversion(PixelFormat format, const PixelConversion& c) {
    const auto format_value = static_cast<uint32_t>(format);
    if (format_value >= kPixelFormatCount)
        return error("pixel conversion: format value ", format_value, " is out of range 0..",
                     kPixelFormatCount - 1);
    const PixelFormatInfo& f = pixel_format_info(format);
    if (!valid_precision(c.output))
        return error("pixel conversion: output precision value ", int(c.output),
                     " is not int8, int16 or fp16");
    if (f.input_precision == Precision::Fp16 && c.output != Precision::Fp16)
        return error("pixel conversion: ", f.name,
                     " is an fp16 image and can only be read as "
                     "fp16, not ",
                     to_string(c.output),
                     " (seed table 'Precision conversion for convolutional layer')");
    if (f.input_precision != c.output && !c.convertor)
        return error("pixel conversion: reading ", f.name, " (", to_string(f.input_precision),
                     ") as ", to_string(c.output),
                     " needs the input convertor (CVT_EN); without it the output precision must "
                     "be ",
                     to_string(f.input_precision));
    if (c.truncate > 63)
        return error("pixel conversion: truncate ", int(c.truncate),
                     " is out of range 0..63 (6-bit CVT_TRUNCATE)");
    return {};
}

Status check_pixel_conversion(const HwConfig& cfg, PixelFormat format, const PixelConversion& c) {
    if (Status s = check_pixel_conversion(format, c); !s) return s;
    const PixelFormatInfo& f = pixel_format_info(format);
    if (!supports(cfg, f.input_precision))
        return error("pixel conversion: ", cfg.name, " has no ", to_string(f.input_precision),
                     " datapath, which ", f.name, " needs");
    if (!supports(cfg, c.output))
        return error("pixel conversion: ", cfg.name, " has no ", to_string(c.output),
                     " datapath to convert ", f.name, " to");
    return {};
}

uint16_t pixel_element(PixelFormat format, uint32_t channel, uint32_t component) {
    const PixelFormatInfo& f = pixel_format_info(format);
    if (channel >= f.channels) return 0;
    const uint32_t field = component & detail::field_mask(f.components[channel].bits);
    return static_cast<uint16_t>(field << f.element_shift(channel));
}

uint16_t convert_pixel_element(PixelFormat format, const PixelConversion& c, uint32_t channel,
                               uint16_t element) {
    const PixelFormatInfo& f = pixel_format_info(format);
    if (f.input_precision == Precision::Fp16) {
        // The convertor passes fp16 through; only the NaN flush touches it.
        if (fp16::is_nan(element)) {
            if (c.stats) ++c.stats->nan;
            if (c.nan_to_zero) return 0;
        }
        return element;
    }
    const bool wide = f.input_precision == Precision::Int16;
    if (!c.convertor) {
        // Without the convertor the element's bits are taken as the (equal) output precision.
        return wide ? element
                    : static_cast<uint16_t>(
                          static_cast<int16_t>(static_cast<int8_t>(element & 0xffu)));
    }
    // The sign override decides how the element extends to 17 bits, for every integer format.
    int64_t x;
    if (c.sign_override)
        x = wide ? static_cast<int16_t>(element) : static_cast<int8_t>(element & 0xffu);
    else
        x = wide ? element : (element & 0xffu);
    const int64_t subtrahend = c.mean ? c.mean_values[channel & 3u] : c.offset;
    const int64_t product = (x - subtrahend) * c.scale;  // 18 x 16 bits: exact in 34 bits
    bool clamped = false, narrowed = false;
    const int64_t result =
        precision::shift_right_round_saturate(product, c.truncate & 0x3fu, kResultBits, &clamped);
    uint16_t out = 0;
    switch (c.output) {
        case Precision::Int8:
            out = static_cast<uint16_t>(
                static_cast<int16_t>(precision::saturate(result, 8, &narrowed)));
            break;
        case Precision::Int16:
            out = static_cast<uint16_t>(
                static_cast<int16_t>(precision::saturate(result, 16, &narrowed)));
            break;
        case Precision::Fp16:
            // FpIntToFloat<17, 5, 10>: nearest even; from 65520 on it saturates to +-65504.
            out = precision::int_to_fp16(static_cast<int32_t>(result));
            narrowed = result >= 65520 || result <= -65520;
            break;
    }
    if ((clamped || narrowed) && c.stats) ++c.stats->saturated;
    return out;
}

Status convert_pixel_surface(const HwConfig& cfg, ConstByteSpan src, const PixelSurface& s,
                             const PixelConversion& c, const TensorView& dst) {
    const Result<uint64_t> bytes = pixel_surface_bytes(cfg, s);
    if (!bytes) return bytes.status().context("convert pixel surface");
    if (Status st = check_pixel_conversion(cfg, s.format, c); !st)
        return st.context("convert pixel surface");
    const PixelFormatInfo& f = pixel_format_info(s.format);
    if (Status st =
            check_destination(dst, f, s.width, s.height, "convert pixel surface: destination");
        !st)
        return st;
    if (src.size() < *bytes)
        return error("convert pixel surface: source of ", src.size(), " bytes is too small for ",
                     f.name, " ", s.width, "x", s.height, " (", *bytes, " bytes)");

    const auto g = detail::pixel_geometry(cfg, s);
    const detail::DecodeFn decode = detail::decoder(c.output, dst.type);
    const uint32_t bpe = bytes_per_element(dst.type);
    auto* out = static_cast<uint8_t*>(dst.data);
    for (uint32_t y = 0; y < s.height; ++y) {
        for (uint32_t x = 0; x < s.width; ++x) {
            const auto fields = detail::read_pixel_fields(f, g, src.data(), y, x);
            for (uint32_t ch = 0; ch < f.channels; ++ch) {
                const uint16_t element = pixel_element(s.format, ch, fields[ch]);
                store_converted(decode, c.output, convert_pixel_element(s.format, c, ch, element),
                                out + detail::host_offset(dst.dims, dst.layout, bpe, 0, ch, y, x));
            }
        }
    }
    return {};
}

Status convert_pixel_channels(PixelFormat format, const PixelConversion& c,
                              const ConstTensorView& src, const TensorView& dst) {
    if (Status st = check_pixel_conversion(format, c); !st)
        return st.context("convert pixel channels");
    const PixelFormatInfo& f = pixel_format_info(format);
    if (Status st = detail::check_pixel_tensor(src, f, src.dims.w, src.dims.h, false,
                                               "convert pixel channels: source");
        !st)
        return st;
    if (Status st = check_destination(dst, f, src.dims.w, src.dims.h,
                                      "convert pixel channels: destination");
        !st)
        return st;
    if (Status st = detail::check_pixel_values(src, f, "convert pixel channels: source"); !st)
        return st;

    const detail::DecodeFn decode = detail::decoder(c.output, dst.type);
    const uint32_t src_bpe = bytes_per_element(src.type), dst_bpe = bytes_per_element(dst.type);
    const auto* in = static_cast<const uint8_t*>(src.data);
    auto* out = static_cast<uint8_t*>(dst.data);
    for (uint32_t y = 0; y < src.dims.h; ++y) {
        for (uint32_t x = 0; x < src.dims.w; ++x) {
            for (uint32_t ch = 0; ch < f.channels; ++ch) {
                uint32_t field = 0;
                detail::host_to_field(
                    f, src.type,
                    in + detail::host_offset(src.dims, src.layout, src_bpe, 0, ch, y, x),
                    f.components[ch], &field);
                const uint16_t element = pixel_element(format, ch, field);
                store_converted(
                    decode, c.output, convert_pixel_element(format, c, ch, element),
                    out + detail::host_offset(dst.dims, dst.layout, dst_bpe, 0, ch, y, x));
            }
        }
    }
    return {};
}

}  // namespace nvdla
