// CDMA: fetches the layer's data and weights into the convolution buffer, in the form CSC reads
// them back. Direct convolution reads feature surfaces (line/surface packing and fetch grains
// as the C model's DirectConvDataRequestSequencerCommon addresses them) through the input
// convertor; image input converts pitch-linear pixels and adds the left/right padding
// (ImageConvDataResponseSequencerCommon); Winograd pads and channel-extends the cube for the
// 4x4 tiles (WinoConvDataResponseSequencerCommon). Weights are read whole, decompressed
// (WMB/WGS) and decoded with the formats library.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "emu/conv_layer.hpp"
#include "emu/parallel.hpp"
#include "nvdla/formats/pixel.hpp"
#include "nvdla/formats/weights.hpp"
#include "nvdla/precision/convertor.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::emu::conv {
namespace {

int16_t element_at(const uint8_t* p, Precision precision) {
    if (precision == Precision::Int8) return static_cast<int8_t>(p[0]);
    return static_cast<int16_t>(uint16_t(p[0]) | uint16_t(p[1]) << 8);
}

// NaN and infinity counting and the NaN flush of fp16 data (C model countNaNinData,
// countInfinData and the flush that follows them).
struct Fp16Screen {
    bool flush = false;
    uint32_t* nans = nullptr;
    uint32_t* infs = nullptr;

    void count(const uint8_t* bytes, uint64_t elements) const {
        for (uint64_t i = 0; i < elements; ++i) {
            const auto h = static_cast<uint16_t>(bytes[2 * i] | bytes[2 * i + 1] << 8);
            if ((h & 0x7c00u) != 0x7c00u) continue;
            if (h & 0x3ffu)
                ++*nans;
            else
                ++*infs;
        }
    }
    int16_t apply(int16_t value) const {
        return flush && precision::fp16_is_nan(static_cast<uint16_t>(value)) ? 0 : value;
    }
};

// The precision combinations the input convertor of a feature/Winograd layer supports (C model
// DirectConvDataResponseSequencerCommon keeps the element size).
bool check_feature_precisions(Context& ctx, const ConvLayer& l, bool convertor) {
    const bool ok = convertor
                        ? (l.in_precision == Precision::Int8 && l.precision == Precision::Int8) ||
                              (l.in_precision == Precision::Int16 && l.precision != Precision::Int8)
                        : l.in_precision == l.precision;
    if (ok) return true;
    ctx.error(std::string("CDMA D_MISC_CFG reads ") + std::string(to_string(l.in_precision)) +
              " feature data as " + std::string(to_string(l.precision)) +
              (convertor ? " with the convertor on (D_CVT_CFG.CVT_EN); it converts int8 to int8 "
                           "and int16 to int16 or fp16 only"
                         : " with the convertor off; IN_PRECISION must equal PROC_PRECISION"));
    return false;
}

// dst[w * dst_stride + e] = src[w * atom + e] for e < lane_bytes, w < count: the first
// lane_bytes of each atom of a line. Fixed sizes become plain moves.
void gather_atoms(uint8_t* dst, uint64_t dst_stride, const uint8_t* src, uint32_t atom,
                  uint32_t count, uint32_t lane_bytes) {
    if (lane_bytes == atom && dst_stride == atom) {
        std::memcpy(dst, src, uint64_t(count) * atom);
        return;
    }
    const auto copy = [&]<uint32_t N>() {
        for (uint32_t w = 0; w < count; ++w)
            std::memcpy(dst + w * dst_stride, src + uint64_t(w) * atom, N);
    };
    switch (lane_bytes) {
        case 32: copy.template operator()<32>(); return;
        case 16: copy.template operator()<16>(); return;
        case 8: copy.template operator()<8>(); return;
        default:
            for (uint32_t w = 0; w < count; ++w)
                std::memcpy(dst + w * dst_stride, src + uint64_t(w) * atom, lane_bytes);
    }
}

bool load_feature(Context& ctx, const ConvLayer& l, ConvData& d, CdmaCounters& counters) {
    if (!check_feature_precisions(ctx, l, l.convertor)) return false;
    const uint32_t atom = ctx.cfg.atom_bytes;
    const uint32_t bpe = bytes_per_element(l.in_precision);
    const uint32_t per_atom = atom / bpe;
    const uint32_t surfaces = (l.in_channels + per_atom - 1) / per_atom;
    const uint32_t width = l.in_width, height = l.in_height, channels = l.in_channels;
    const uint64_t line_bytes = uint64_t(width) * atom;

    d.kind = InputKind::Feature;
    d.precision = l.precision;
    d.batches = l.batches;
    d.height = height;
    d.width = width;
    d.channels = channels;
    d.row_elements = uint64_t(width) * channels;
    d.atom_bytes = atom;
    d.surfaces = surfaces;
    // int8 data stays one byte per element (the convertor keeps int8 as int8); every element
    // is written below, or, when it stays in the atoms (ConvData::in_atoms), none.
    const bool narrow = l.precision == Precision::Int8;
    d.in_atoms = narrow && !l.convertor && !l.skip_data_release;
    if (narrow) {
        d.values.clear();
        d.bytes.resize(d.in_atoms ? 0 : d.row_elements * height * l.batches);
    } else {
        d.bytes.clear();
        d.values.resize(d.row_elements * height * l.batches);
    }

    const precision::ConvertorParams cvt{l.cvt_offset, l.cvt_scale, l.cvt_truncate};
    const Fp16Screen screen{l.nan_to_zero, &counters.data_nan, &counters.data_inf};
    const bool fp16 = l.in_precision == Precision::Fp16;
    // A 1x1 cube with packed lines and surfaces is read as one run of atoms (the C model's
    // 1x1 path); packed lines within a fetch grain follow each other without the line stride.
    const bool one_by_one = l.line_packed && l.surface_packed && width == 1 && height == 1;
    const bool contiguous =
        one_by_one || (l.line_packed && (l.line_stride == line_bytes || height <= l.fetch_grain));
    const uint64_t surface_bytes = line_bytes * height;
    // Every surface of a batch is read first (in the hardware's order: surface by surface,
    // line by line), in place, then the lines are converted row by row of the cube, so that
    // each row is written whole while it is in the cache. A read that faults gives zeros (in
    // `staging`), as Dma::read would.
    std::vector<const uint8_t*>& lines = d.lines;
    lines.assign(uint64_t(l.batches) * surfaces * height, nullptr);
    const auto view = [&](uint64_t address, uint64_t bytes, uint64_t first_line) {
        const std::byte* p = ctx.dma.view(NVDLA_UNIT_CDMA, l.data_port, address, bytes);
        if (!p) {
            // Sized once for every line: the lines kept point into it.
            if (d.staging.size() < lines.size() * line_bytes)
                d.staging.assign(lines.size() * line_bytes, 0);
            std::memset(d.staging.data() + first_line * line_bytes, 0, bytes);
            p = reinterpret_cast<const std::byte*>(d.staging.data() + first_line * line_bytes);
        }
        const auto* bytes8 = reinterpret_cast<const uint8_t*>(p);
        for (uint64_t i = 0; i < bytes / line_bytes; ++i)
            lines[first_line + i] = bytes8 + i * line_bytes;
        if (fp16) screen.count(bytes8, bytes / 2);
    };

    // Row h of batch n of the cube from the surfaces' lines.
    const auto convert_row = [&](uint32_t n, uint32_t h) {
        for (uint32_t s = 0; s < surfaces; ++s) {
            const uint8_t* line = lines[(uint64_t(n) * surfaces + s) * height + h];
            const uint32_t first = s * per_atom;
            const uint32_t lanes = std::min(per_atom, channels - first);
            const uint64_t row_offset = (uint64_t(n) * height + h) * d.row_elements + first;
            if (!l.convertor) {
                // The common case: the atoms' lanes copied as they are (fp16 NaNs flushed after).
                uint8_t* dst = narrow ? reinterpret_cast<uint8_t*>(d.bytes.data() + row_offset)
                                      : reinterpret_cast<uint8_t*>(d.values.data() + row_offset);
                gather_atoms(dst, uint64_t(channels) * bpe, line, atom, width, lanes * bpe);
                if (fp16 && screen.flush)
                    for (uint32_t w = 0; w < width; ++w)
                        for (uint32_t e = 0; e < lanes; ++e) {
                            int16_t& v = d.values[row_offset + uint64_t(w) * channels + e];
                            v = screen.apply(v);
                        }
                continue;
            }
            for (uint32_t w = 0; w < width; ++w) {
                const uint8_t* src = line + uint64_t(w) * atom;
                const uint64_t at = row_offset + uint64_t(w) * channels;
                for (uint32_t e = 0; e < lanes; ++e) {
                    int16_t v = element_at(src + e * bpe, l.in_precision);
                    if (fp16) v = screen.apply(v);
                    if (l.convertor)
                        v = static_cast<int16_t>(
                            precision::convert_to(l.precision, v, cvt,
                                                  precision::kCdmaInputConvertor)
                                .bits);
                    if (narrow)
                        d.bytes[at + e] = static_cast<int8_t>(v);
                    else
                        d.values[at + e] = v;
                }
            }
        }
    };

    for (uint32_t n = 0; n < l.batches; ++n) {
        const uint64_t batch_base = l.data_address + uint64_t(n) * l.batch_stride;
        for (uint32_t s = 0; s < surfaces; ++s) {
            const uint64_t surface_base =
                batch_base + (one_by_one ? uint64_t(s) * atom : uint64_t(s) * l.surface_stride);
            const uint64_t first_line = (uint64_t(n) * surfaces + s) * height;
            if (contiguous) {
                view(surface_base, surface_bytes, first_line);
            } else {
                for (uint32_t h = 0; h < height; ++h) {
                    const uint64_t offset =
                        l.line_packed
                            ? uint64_t(h / l.fetch_grain) * l.fetch_grain * l.line_stride +
                                  uint64_t(h % l.fetch_grain) * line_bytes
                            : uint64_t(h) * l.line_stride;
                    view(surface_base + offset, line_bytes, first_line + h);
                }
            }
        }
        if (d.in_atoms) continue;
        // The rows on the layer's threads (the reads above stay on this one, in order).
        parallel_for(l.threads, height, d.row_elements * height * bpe * kCopyWorkPerByte,
                     [&](uint64_t h0, uint64_t h1) {
                         for (uint64_t h = h0; h < h1; ++h)
                             convert_row(n, static_cast<uint32_t>(h));
                     });
    }
    return true;
}

bool load_image(Context& ctx, const ConvLayer& l, ConvData& d, CdmaCounters& counters) {
    const Result<const PixelFormatInfo*> found = find_pixel_format(l.pixel_format);
    if (!found) {
        ctx.error("CDMA D_DATAIN_FORMAT.PIXEL_FORMAT is " + std::to_string(l.pixel_format) +
                  ", not a pixel format (0..35)");
        return false;
    }
    const PixelFormatInfo& f = **found;
    // The C model sizes each converted element by IN_PRECISION: any other setting than the
    // format's lays the line out at the wrong element size.
    if (l.in_precision != f.input_precision) {
        ctx.error("CDMA D_MISC_CFG.IN_PRECISION is " + std::string(to_string(l.in_precision)) +
                  " but pixel format " + std::string(f.name) + " has " +
                  std::string(to_string(f.input_precision)) + " elements");
        return false;
    }
    PixelSurface s;
    s.format = f.format;
    s.width = l.in_width;
    s.height = l.in_height;
    s.x_offset = l.pixel_x_offset;
    s.planes[0] = {0, l.line_stride};
    s.planes[1] = {0, l.uv_line_stride};
    // Each plane comes from its own address; lay them out one after the other locally.
    uint64_t plane_bytes[2] = {0, 0};
    for (unsigned p = 0; p < f.planes; ++p) {
        const uint64_t line = (min_pixel_line_stride(ctx.cfg, s, p) + ctx.cfg.atom_bytes - 1) /
                              ctx.cfg.atom_bytes * ctx.cfg.atom_bytes;
        plane_bytes[p] = uint64_t(s.height - 1) * s.planes[p].line_stride + line;
    }
    s.planes[1].offset = (plane_bytes[0] + 31) / 32 * 32;
    if (Status st = check_pixel_surface(ctx.cfg, s); !st) {
        ctx.error("CDMA image input: " + st.message() +
                  " (D_DATAIN_SIZE_0, D_PIXEL_OFFSET, D_LINE_STRIDE, D_LINE_UV_STRIDE)");
        return false;
    }
    std::vector<std::byte> source(s.planes[1].offset + plane_bytes[1]);
    ctx.dma.read(NVDLA_UNIT_CDMA, l.data_port, l.data_address, source.data(), plane_bytes[0]);
    if (f.planes == 2)
        ctx.dma.read(NVDLA_UNIT_CDMA, l.data_port, l.data_address_uv,
                     source.data() + s.planes[1].offset, plane_bytes[1]);

    PixelConversion c;
    c.output = l.precision;
    c.convertor = l.convertor;
    c.offset = l.cvt_offset;
    c.scale = l.cvt_scale;
    c.truncate = static_cast<uint8_t>(l.cvt_truncate);
    c.mean = l.mean;
    std::copy(std::begin(l.mean_values), std::end(l.mean_values), c.mean_values.begin());
    c.sign_override = l.pixel_signed;
    c.nan_to_zero = l.nan_to_zero;
    ConversionStats stats;
    c.stats = &stats;
    const uint32_t channels = f.channels;
    std::vector<int16_t> pixels(uint64_t(s.width) * s.height * channels);
    const TensorView dst{pixels.data(), pixels.size() * sizeof(int16_t),
                         l.precision == Precision::Fp16 ? HostType::Float16 : HostType::Int16,
                         HostLayout::NHWC, Dims4{1, channels, s.height, s.width}};
    if (Status st = convert_pixel_surface(ctx.cfg, source, s, c, dst); !st) {
        ctx.error("CDMA image input: " + st.message() +
                  " (D_DATAIN_FORMAT, D_MISC_CFG precisions, D_CVT_CFG)");
        return false;
    }
    counters.data_nan += static_cast<uint32_t>(stats.nan);

    // Each line as it lands in the buffer: left padding, the pixels, right padding.
    const int16_t pad = l.precision == Precision::Int8
                            ? static_cast<int8_t>(l.cdma_pad_value & 0xffu)
                            : static_cast<int16_t>(l.cdma_pad_value);
    d.kind = InputKind::Image;
    d.bytes.clear();
    d.in_atoms = false;
    d.precision = l.precision;
    d.batches = 1;
    d.height = s.height;
    d.width = l.cdma_pad_left + s.width + l.cdma_pad_right;
    d.channels = channels;
    d.row_elements = uint64_t(d.width) * channels;
    d.values.assign(d.row_elements * d.height, pad);
    for (uint32_t y = 0; y < s.height; ++y)
        std::copy_n(pixels.data() + uint64_t(y) * s.width * channels, uint64_t(s.width) * channels,
                    d.values.data() + y * d.row_elements + uint64_t(l.cdma_pad_left) * channels);
    return true;
}

bool load_winograd(Context& ctx, const ConvLayer& l, ConvData& d, CdmaCounters& counters) {
    if (!check_feature_precisions(ctx, l, false)) return false;
    const uint32_t atom = ctx.cfg.atom_bytes;
    const uint32_t bpe = bytes_per_element(l.precision);
    const uint32_t per_atom = atom / bpe;
    const uint32_t surfaces = (l.in_channels + per_atom - 1) / per_atom;
    const uint32_t sx = l.cdma_stride_x, sy = l.cdma_stride_y;
    const uint32_t total_width = l.cdma_pad_left + l.in_width + l.cdma_pad_right;
    const uint32_t total_height = l.cdma_pad_top + l.in_height + l.cdma_pad_bottom;
    if (total_width % (4 * sx) != 0 || total_height % (4 * sy) != 0) {
        ctx.error("CDMA Winograd input: padded size " + std::to_string(total_width) + "x" +
                  std::to_string(total_height) +
                  " (D_DATAIN_SIZE_0 + D_ZERO_PADDING) must be a "
                  "multiple of 4 x stride (" +
                  std::to_string(4 * sx) + "x" + std::to_string(4 * sy) + ", D_CONV_STRIDE)");
        return false;
    }
    d.kind = InputKind::Winograd;
    d.bytes.clear();
    d.in_atoms = false;
    d.precision = l.precision;
    d.batches = 1;
    d.width = total_width / sx;
    d.height = total_height / sy;
    d.channels = surfaces * per_atom * sx * sy;
    if (d.width != l.csc_width || d.height != l.csc_height || d.channels != l.csc_channels) {
        ctx.error("CSC D_DATAIN_SIZE_EXT_0/1 (" + std::to_string(l.csc_width) + "x" +
                  std::to_string(l.csc_height) + "x" + std::to_string(l.csc_channels) +
                  ") must be the channel-extended Winograd cube CDMA builds (" +
                  std::to_string(d.width) + "x" + std::to_string(d.height) + "x" +
                  std::to_string(d.channels) + ")");
        return false;
    }
    d.row_elements = uint64_t(d.width) * d.channels;
    const int16_t pad = l.precision == Precision::Int8
                            ? static_cast<int8_t>(l.cdma_pad_value & 0xffu)
                            : static_cast<int16_t>(l.cdma_pad_value);
    d.values.assign(d.row_elements * d.height, pad);

    // E[Y][X][((py * sx + px) * surfaces + s) * per_atom + e] = padded[Y*sy + py][X*sx + px]
    // of channel s * per_atom + e; the channel lanes past the cube come from memory as they are.
    const uint64_t line_bytes = uint64_t(l.in_width) * atom;
    std::vector<uint8_t> line(line_bytes);
    for (uint32_t s = 0; s < surfaces; ++s) {
        for (uint32_t h = 0; h < l.in_height; ++h) {
            ctx.dma.read(
                NVDLA_UNIT_CDMA, l.data_port,
                l.data_address + uint64_t(s) * l.surface_stride + uint64_t(h) * l.line_stride,
                line.data(), line_bytes);
            const uint32_t padded_y = h + l.cdma_pad_top;
            const uint32_t py = padded_y % sy;
            int16_t* row = d.values.data() + uint64_t(padded_y / sy) * d.row_elements;
            for (uint32_t w = 0; w < l.in_width; ++w) {
                const uint32_t padded_x = w + l.cdma_pad_left;
                const uint32_t px = padded_x % sx;
                int16_t* dst = row + uint64_t(padded_x / sx) * d.channels +
                               (uint64_t(py * sx + px) * surfaces + s) * per_atom;
                for (uint32_t e = 0; e < per_atom; ++e)
                    dst[e] = element_at(line.data() + uint64_t(w) * atom + e * bpe, l.precision);
            }
        }
    }
    if (l.precision == Precision::Fp16) {
        // The C model screens every element it writes to the buffer, padding included.
        for (int16_t& v : d.values) {
            const auto h = static_cast<uint16_t>(v);
            if ((h & 0x7c00u) != 0x7c00u) continue;
            if (h & 0x3ffu) {
                ++counters.data_nan;
                if (l.nan_to_zero) v = 0;
            } else {
                ++counters.data_inf;
            }
        }
    }
    return true;
}

HostType host_type_of(Precision p) {
    switch (p) {
        case Precision::Int8: return HostType::Int8;
        case Precision::Int16: return HostType::Int16;
        case Precision::Fp16: return HostType::Float16;
    }
    return HostType::Int16;
}

// Decodes a dense surface with the formats library into [k][r][s][c] int16 values.
bool unpack_kernels(Context& ctx, const WeightFormat& format, Dims4 dims,
                    const std::vector<std::byte>& dense, std::vector<int16_t>& out) {
    const Result<WeightLayout> layout = make_weight_layout(ctx.cfg, format, dims);
    if (!layout) {
        ctx.error("CDMA weights: " + layout.message() + " (CSC D_WEIGHT_SIZE_EXT_0/1)");
        return false;
    }
    const Precision p = format.precision;
    std::vector<int8_t> bytes;
    out.assign(dims.elements(), 0);
    TensorView view{out.data(), out.size() * sizeof(int16_t), host_type_of(p), HostLayout::NHWC,
                    dims};
    if (p == Precision::Int8) {
        bytes.assign(dims.elements(), 0);
        view.data = bytes.data();
        view.bytes = bytes.size();
    }
    std::vector<std::byte> padded(dense);
    if (padded.size() < layout->size_bytes()) padded.resize(layout->size_bytes());
    if (Status st = unpack_weights(padded, *layout, view); !st) {
        ctx.error("CDMA weights: " + st.message());
        out.clear();
        return false;
    }
    if (p == Precision::Int8) std::copy(bytes.begin(), bytes.end(), out.begin());
    return true;
}

}  // namespace

bool load_data(Context& ctx, const ConvLayer& layer, ConvData& data, CdmaCounters& counters) {
    switch (layer.kind) {
        case InputKind::Feature: return load_feature(ctx, layer, data, counters);
        case InputKind::Image: return load_image(ctx, layer, data, counters);
        case InputKind::Winograd: return load_winograd(ctx, layer, data, counters);
    }
    return false;
}

namespace {

// The kernels as CSC hands them to CMAC, from the dense weight surface.
bool decode_kernels(Context& ctx, const ConvLayer& l, const WeightSurfaceShape& shape,
                    const std::vector<std::byte>& dense, ConvWeights& w) {
    const uint32_t bpe = bytes_per_element(l.precision);
    switch (l.kind) {
        case InputKind::Feature:
            w.height = l.kernel_height;
            w.width = l.kernel_width;
            w.channels = l.kernel_channels;
            return unpack_kernels(ctx, {WeightKind::Direct, l.precision},
                                  {l.kernels, l.kernel_channels, l.kernel_height, l.kernel_width},
                                  dense, w.values);
        case InputKind::Image: {
            // Pre-extended kernels: 1 wide, R high, S * image channels deep. Without
            // post-extension that is a direct-convolution surface of width 1.
            w.height = l.kernel_height;
            w.width = 1;
            w.channels = l.kernel_channels;
            if (l.post_extension == 1)
                return unpack_kernels(ctx, {WeightKind::Direct, l.precision},
                                      {l.kernels, l.kernel_channels, l.kernel_height, 1}, dense,
                                      w.values);
            const Result<const PixelFormatInfo*> f = find_pixel_format(l.pixel_format);
            const uint32_t image_channels = f ? (*f)->channels : 1;
            if (l.kernel_channels % image_channels != 0) {
                ctx.error("CSC D_WEIGHT_SIZE_EXT_1.WEIGHT_CHANNEL_EXT + 1 is " +
                          std::to_string(l.kernel_channels) + ", not a whole number of pixels of " +
                          std::to_string(image_channels) +
                          " channels, with post-extension (D_POST_Y_EXTENSION)");
                return false;
            }
            WeightFormat format{WeightKind::Image, l.precision};
            format.image_channels = image_channels;
            format.post_extension = l.post_extension;
            format.stride_x = l.stride_x;
            format.stride_y = l.stride_y;
            // [k][r][s][c] of the image kernels is [k][r][s * image_channels + c].
            return unpack_kernels(
                ctx, format,
                {l.kernels, image_channels, l.kernel_height, l.kernel_channels / image_channels},
                dense, w.values);
        }
        case InputKind::Winograd: {
            // Stored transformed kernels, groups of G kernels of 4x4x4 cubes scanned K -> C
            // (docs/formats/weights.md section 3, cmod csc.cpp SendWeightToMacSequencerWino).
            w.height = 4;
            w.width = 4;
            w.channels = l.kernel_channels;
            const uint32_t g_size = shape.kernels_per_group;
            const uint64_t per_kernel = 16ull * w.channels;
            w.values.assign(per_kernel * w.kernels, 0);
            const auto* bytes = reinterpret_cast<const uint8_t*>(dense.data());
            for (uint32_t k = 0; k < w.kernels; ++k) {
                const uint32_t g = k / g_size, kk = k % g_size;
                const uint32_t in_group = std::min(g_size, w.kernels - g * g_size);
                for (uint32_t ce = 0; ce < w.channels; ++ce)
                    for (uint32_t pos = 0; pos < 16; ++pos) {
                        const uint64_t index = uint64_t(g) * g_size * per_kernel +
                                               (uint64_t(ce / 4) * in_group + kk) * 64 + pos * 4 +
                                               ce % 4;
                        w.values[k * per_kernel + pos * w.channels + ce] =
                            element_at(bytes + index * bpe, l.precision);
                    }
            }
            return true;
        }
    }
    return false;
}

// Whether `kept` is the parts one after the other.
bool same_parts(const std::vector<std::byte>& kept,
                std::span<const std::span<const std::byte>> parts) {
    size_t offset = 0;
    for (const std::span<const std::byte>& part : parts) {
        if (kept.size() - offset < part.size()) return false;
        if (!part.empty() && std::memcmp(kept.data() + offset, part.data(), part.size()) != 0)
            return false;
        offset += part.size();
    }
    return offset == kept.size();
}

// Whether the `bytes` at `a` and `b` are equal, compared on up to `threads` threads (a large
// layer's weights are compared with the cached ones on every run: megabytes per layer).
bool same_bytes(const std::byte* a, const std::byte* b, uint64_t bytes, unsigned threads) {
    constexpr uint64_t kChunk = 16 * 1024;
    const uint64_t chunks = (bytes + kChunk - 1) / kChunk;
    std::atomic<bool> differ{false};
    parallel_for(threads, chunks, bytes * kCompareWorkPerByte, [&](uint64_t c0, uint64_t c1) {
        for (uint64_t c = c0; c < c1 && !differ.load(std::memory_order_relaxed); ++c) {
            const uint64_t at = c * kChunk, n = std::min(kChunk, bytes - at);
            if (std::memcmp(a + at, b + at, n) != 0) differ.store(true, std::memory_order_relaxed);
        }
    });
    return !differ.load();
}

}  // namespace

ConvWeights* load_weights(Context& ctx, const ConvLayer& l, WeightCache& cache,
                          CdmaCounters& counters) {
    const HwConfig& cfg = ctx.cfg;
    WeightSurfaceShape shape;
    shape.precision = l.precision;
    shape.kernels = l.kernels;
    shape.kernels_per_group = weight_kernels_per_group(cfg, l.precision);
    shape.bytes_per_kernel = l.bytes_per_kernel;

    // CDMA streams WEIGHT_BYTES; what the kernels can use is at most the dense surface, so the
    // model reads no more than that (a huge WEIGHT_BYTES costs no memory). The bytes are read
    // in place: compared with what the cache's entry was decoded from and copied only when
    // they differ (a fault reads zeros, as Dma::read gives them); sealed memory that nothing
    // wrote since the entry took them is not even compared.
    const uint64_t fetch_bytes = std::min<uint64_t>(l.weight_bytes, shape.size_bytes());
    const std::byte* fetched =
        ctx.dma.view(NVDLA_UNIT_CDMA, l.weight_port, l.weight_address, fetch_bytes);
    uint64_t sealed =
        fetched ? ctx.dma.sealed_contents(l.weight_port, l.weight_address, fetch_bytes) : 0;
    if (!fetched) {
        cache.fetched.assign(fetch_bytes, std::byte{0});
        fetched = cache.fetched.data();
    }
    if (l.precision == Precision::Fp16) {
        const auto* bytes = reinterpret_cast<const uint8_t*>(fetched);
        Fp16Screen{false, &counters.weight_nan, &counters.weight_inf}.count(bytes, fetch_bytes / 2);
    }
    // Everything the decoding depends on besides the bytes.
    const uint64_t key = (uint64_t(l.kind) << 60) ^ (uint64_t(l.precision) << 56) ^
                         (uint64_t(l.post_extension) << 52) ^ (uint64_t(l.pixel_format) << 44) ^
                         (uint64_t(l.kernels) << 31) ^ (uint64_t(l.kernel_height) << 26) ^
                         (uint64_t(l.kernel_width) << 21) ^ (uint64_t(l.kernel_channels) << 1) ^
                         (l.compressed ? 1 : 0);
    ConvWeights& w = cache.entry(l.weight_port, l.weight_address);
    std::vector<std::byte> decompressed;
    const std::byte* dense = fetched;
    uint64_t dense_bytes = fetch_bytes;
    if (l.compressed) {
        const uint64_t mask_needed = (shape.elements() + 7) / 8 + kWeightSurfaceAlignment;
        const uint64_t mask_bytes = std::min<uint64_t>(l.wmb_bytes, mask_needed);
        const uint64_t group_bytes = uint64_t(shape.groups()) * 4;
        // In place too; a part whose read faulted reads zeros.
        std::vector<std::byte> zeros;
        auto in_place = [&](uint64_t address, uint64_t bytes) -> std::span<const std::byte> {
            if (const std::byte* p = ctx.dma.view(NVDLA_UNIT_CDMA, l.weight_port, address, bytes)) {
                if (ctx.dma.sealed_contents(l.weight_port, address, bytes) != sealed) sealed = 0;
                return {p, bytes};
            }
            sealed = 0;
            if (zeros.empty()) zeros.assign(std::max(mask_bytes, group_bytes), std::byte{0});
            return {zeros.data(), bytes};
        };
        const std::span<const std::byte> mask = in_place(l.wmb_address, mask_bytes);
        const std::span<const std::byte> group_sizes = in_place(l.wgs_address, group_bytes);
        // The stream, the mask and the group sizes determine the dense surface: when they are
        // the ones the entry was decompressed from (the same sealed memory at the same places,
        // or the same bytes), decompressing (most of a sparse layer's time) and comparing the
        // dense surface are skipped.
        const std::span<const std::byte> parts[] = {{fetched, fetch_bytes}, mask, group_sizes};
        const ConvWeights::Places places{fetch_bytes, l.wmb_address, mask_bytes, l.wgs_address,
                                         group_bytes};
        const bool unchanged =
            (sealed != 0 && sealed == w.sealed_contents && places == w.compressed_places) ||
            same_parts(w.compressed_source, parts);
        if (!w.values.empty() && w.source_key == key && unchanged) {
            w.sealed_contents = sealed;
            w.compressed_places = places;
            return &w;
        }
        decompressed.resize(shape.size_bytes());
        dense = decompressed.data();
        dense_bytes = decompressed.size();
        if (Status st = decompress_weights(cfg, shape, std::span(fetched, fetch_bytes), mask,
                                           group_sizes, decompressed);
            !st) {
            ctx.error("CDMA compressed weights (D_WEIGHT_BYTES, D_WMB_BYTES, WGS): " +
                      st.message());
            return nullptr;
        }
        w.compressed_source.clear();
        for (const std::span<const std::byte>& part : parts)
            w.compressed_source.insert(w.compressed_source.end(), part.begin(), part.end());
        w.compressed_places = places;
    } else {
        if (l.weight_bytes < shape.data_bytes()) {
            ctx.error("CDMA D_WEIGHT_BYTES is " + std::to_string(l.weight_bytes) + " but " +
                      std::to_string(l.kernels) + " kernels of D_WEIGHT_SIZE_0 " +
                      std::to_string(l.bytes_per_kernel) + " bytes need " +
                      std::to_string(shape.data_bytes()));
            return nullptr;
        }
        w.compressed_source.clear();
    }

    if (!l.compressed && sealed != 0 && sealed == w.sealed_contents && !w.values.empty() &&
        w.source_key == key && w.source.size() == dense_bytes)
        return &w;
    const bool same = w.source.size() == dense_bytes &&
                      same_bytes(w.source.data(), dense, dense_bytes, l.threads);
    w.sealed_contents = sealed;  // `source` is taken from these bytes below when not the same
    if (!w.values.empty() && w.source_key == key && same) return &w;
    w.source_key = key;
    w.source.assign(dense, dense + dense_bytes);
    w.values.clear();  // until decoded
    w.packed.reset();
    w.packed_bytes = 0;
    w.reordered.reset();
    w.reordered_bytes = 0;
    w.largest_l1 = -1;
    w.precision = l.precision;
    w.kernels = l.kernels;
    if (!decode_kernels(ctx, l, shape, w.source, w)) {
        w.source.clear();
        w.compressed_source.clear();
        w.values.clear();
        return nullptr;
    }
    return &w;
}

}  // namespace nvdla::emu::conv
