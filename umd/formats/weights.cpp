// Weight surface layouts and packing. The rules and their sources are in
// docs/formats/weights.md; the comments here only say why a step is the way it is.
#include "nvdla/formats/weights.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "formats/element.hpp"
#include "nvdla/formats/alignment.hpp"

namespace nvdla {
namespace {

constexpr uint64_t align_up(uint64_t v, uint64_t a) {
    return (v + a - 1) / a * a;
}
// In 64 bits: extents near 2^32 must not wrap to small ones.
constexpr uint32_t ceil_div(uint32_t a, uint32_t b) {
    return static_cast<uint32_t>((uint64_t(a) + b - 1) / b);
}

const char* describe(WeightKind k) {
    switch (k) {
        case WeightKind::Direct: return "direct convolution weights";
        case WeightKind::Image: return "image weights";
        case WeightKind::Winograd: return "winograd weights";
        case WeightKind::Deconvolution: return "deconvolution weights";
    }
    return "weights";
}

// Each deconvolution set is its own convolution, so each must start where a weight surface
// may start (the seed's alignment table; the row does not depend on the configuration).
uint64_t weight_start_alignment() {
    for (const AlignmentRule& r : alignment_rules())
        if (r.kind == SurfaceKind::Weight && r.start != AlignmentRule::kAtom) return r.start;
    return 256;
}

// What the configuration contributes to a layout, so a layout can be re-derived (and so
// checked) without the configuration.
struct LayoutInputs {
    uint32_t cube_channels = 0;  // MAC atomic C
    uint32_t kernels_per_group = 0;
    uint32_t winograd_padded_channels = 0;  // C rounded up to a 32-byte atom
};

Status check_stride(const char* name, const WeightFormat& f, uint32_t limit) {
    for (uint32_t stride : {f.stride_x, f.stride_y})
        if (stride == 0 || stride > limit)
            return error(name, ": stride ", stride, " is not supported (1 to ", limit, ")");
    return {};
}

Status check_hardware_kernel(const char* name, const WeightLayout& l) {
    if (l.kernel_width > kMaxWeightExtent)
        return error(name, ": kernel width ", l.kernel_width, " exceeds the limit of ",
                     kMaxWeightExtent);
    if (l.kernel_height > kMaxWeightExtent)
        return error(name, ": kernel height ", l.kernel_height, " exceeds the limit of ",
                     kMaxWeightExtent);
    if (l.kernel_channels > kMaxWeightChannels)
        return error(name, ": ", l.kernel_channels, " kernel channels exceed the limit of ",
                     kMaxWeightChannels);
    if (l.surface.bytes_per_kernel > kMaxWeightBytesPerKernel)
        return error(name, ": ", l.surface.bytes_per_kernel,
                     " bytes per kernel exceed the limit of ", kMaxWeightBytesPerKernel);
    return {};
}

// Everything about a layout that does not need the configuration's feature list.
Result<WeightLayout> derive_layout(const WeightFormat& f, Dims4 d, const LayoutInputs& in) {
    const char* name = describe(f.kind);
    if (d.n == 0 || d.c == 0 || d.h == 0 || d.w == 0)
        return error(name, ": kernels ", d.n, "x", d.c, "x", d.h, "x", d.w,
                     " (KxCxRxS) have a zero extent");
    if (d.n > kMaxWeightKernels)
        return error(name, ": ", d.n, " kernels exceed the limit of ", kMaxWeightKernels);
    if (d.c > kMaxWeightChannels)
        return error(name, ": ", d.c, " channels exceed the limit of ", kMaxWeightChannels);
    if (f.kind != WeightKind::Image && f.image_channels != 0)
        return error(name, ": image_channels ", f.image_channels,
                     " applies to image weights only (must be 0)");
    if (f.kind != WeightKind::Image && f.post_extension != 1)
        return error(name, ": channel post-extension ", f.post_extension,
                     " is supported for image weights only (must be 1)");
    if (in.cube_channels == 0 || in.kernels_per_group == 0)
        return error(name, ": the configuration has a zero MAC atomic size");

    WeightLayout l;
    l.format = f;
    l.source = d;
    l.cube_channels = in.cube_channels;
    l.padded_channels = d.c;
    const uint32_t atomic_c = in.cube_channels;

    switch (f.kind) {
        case WeightKind::Direct:
            l.kernel_width = d.w;
            l.kernel_height = d.h;
            l.kernel_channels = d.c;
            break;

        case WeightKind::Image: {
            if (Status s = check_stride(name, f, kMaxConvStride); !s) return s;
            const uint32_t image_channels = f.image_channels ? f.image_channels : d.c;
            if (image_channels > 4)
                return error(name, ": a pixel format with ", image_channels,
                             " channels does not exist (1 to 4)");
            if (d.c > image_channels)
                return error(name, ": kernels have ", d.c, " channels but the pixel format only ",
                             image_channels);
            l.format.image_channels = image_channels;
            l.padded_channels = image_channels;
            // Pre-extension: a kernel row of S pixels becomes one column of S * channels.
            l.kernel_width = 1;
            l.kernel_height = d.h;
            if (uint64_t(d.w) * image_channels > kMaxWeightChannels)
                return error(name, ": ", d.w, " columns x ", image_channels,
                             " channels = ", uint64_t(d.w) * image_channels,
                             " pre-extended channels exceed the limit of ", kMaxWeightChannels);
            l.kernel_channels = d.w * image_channels;
            const uint32_t factor = f.post_extension;
            if (factor != 1 && factor != 2 && factor != 4)
                return error(name, ": channel post-extension ", factor,
                             " is not supported (1, 2 or 4)");
            if (factor > 1) {
                // CSC gives each of the combined rows 1/factor of the MAC's channels.
                const uint32_t room = atomic_c / factor;
                if (l.kernel_channels > room)
                    return error(name, ": channel post-extension ", factor, " allows at most ",
                                 room, " pre-extended channels, have ", l.kernel_channels, " (",
                                 d.w, " columns x ", image_channels, " channels)");
                if (f.stride_x * image_channels > room)
                    return error(name, ": channel post-extension ", factor,
                                 " needs stride_x x pixel channels <= ", room, ", have ",
                                 f.stride_x, " x ", image_channels);
            }
            break;
        }

        case WeightKind::Winograd: {
            if (Status s = check_stride(name, f, kMaxConvStride); !s) return s;
            const uint32_t ext_w = ceil_div(d.w, f.stride_x), ext_h = ceil_div(d.h, f.stride_y);
            if (ext_w != 3 || ext_h != 3)
                return error(name, ": an RxS = ", d.h, "x", d.w, " kernel with stride ", f.stride_x,
                             "x", f.stride_y, " (x by y) extends to ", ext_h, "x", ext_w,
                             "; Winograd needs 3x3");
            if (!std::isfinite(f.winograd_scale) || f.winograd_scale <= 0.0f)
                return error(name, ": scale ", f.winograd_scale, " is not a positive number");
            const uint32_t padded = in.winograd_padded_channels;
            if (padded < d.c || padded % 4 != 0)
                return error(name, ": ", padded, " padded channels cannot hold ", d.c,
                             " channels in 4-channel cubes");
            l.padded_channels = padded;
            const uint64_t extended = uint64_t(padded) * f.stride_x * f.stride_y;
            if (extended > kMaxWeightChannels)
                return error(name, ": ", padded, " channels x stride ", f.stride_x, "x", f.stride_y,
                             " = ", extended, " extended channels exceed the limit of ",
                             kMaxWeightChannels);
            l.kernel_width = 4;
            l.kernel_height = 4;
            l.kernel_channels = static_cast<uint32_t>(extended);
            l.cube_channels = 4;
            break;
        }

        case WeightKind::Deconvolution: {
            if (Status s = check_stride(name, f, kMaxDeconvStride); !s) return s;
            l.kernel_width = ceil_div(d.w, f.stride_x);
            l.kernel_height = ceil_div(d.h, f.stride_y);
            l.kernel_channels = d.c;
            l.sets = f.stride_x * f.stride_y;
            if (l.kernel_width > kMaxWeightExtent || l.kernel_height > kMaxWeightExtent)
                return error(name, ": an RxS = ", d.h, "x", d.w, " kernel with stride ", f.stride_x,
                             "x", f.stride_y, " (x by y) splits into ", l.kernel_height, "x",
                             l.kernel_width, " kernels, beyond the limit of ", kMaxWeightExtent);
            break;
        }
    }

    l.surface.precision = f.precision;
    l.surface.kernels = d.n;
    l.surface.kernels_per_group = in.kernels_per_group;
    l.surface.bytes_per_kernel = uint64_t(l.kernel_width) * l.kernel_height * l.kernel_channels *
                                 bytes_per_element(f.precision);
    if (Status s = check_hardware_kernel(name, l); !s) return s;
    l.set_stride = align_up(l.surface.size_bytes(), weight_start_alignment());
    return l;
}

// Re-derives a layout from its own inputs: a layout edited by hand (or not made by
// make_weight_layout) is refused before it can steer a write out of bounds.
Status check_layout(const WeightLayout& l, const char* action) {
    LayoutInputs in;
    // A Winograd layout keeps 4 (its cube) rather than MAC atomic C, which it does not use.
    in.cube_channels = l.cube_channels;
    in.kernels_per_group = l.surface.kernels_per_group;
    in.winograd_padded_channels = l.padded_channels;
    Result<WeightLayout> again = derive_layout(l.format, l.source, in);
    if (!again) return error(action, ": ", again.message());
    if (!(*again == l))
        return error(action, ": the ", describe(l.format.kind),
                     " layout is inconsistent; make it with make_weight_layout");
    return {};
}

// ---- Element positions ----------------------------------------------------------------------

// Index (in elements, within one set) of hardware kernel element (k, c, r, s) in the DC
// mapping: groups one after the other; in a group, cubes of up to A channels scanned
// C' -> K -> S -> R -> C.
uint64_t direct_index(const WeightLayout& l, uint32_t k, uint32_t c, uint32_t r, uint32_t s) {
    const WeightSurfaceShape& sh = l.surface;
    const uint32_t per_group = sh.kernels_per_group;
    const uint32_t group = k / per_group, in_group = k % per_group;
    const uint64_t kernels_here = sh.kernels_in_group(group);
    const uint32_t a = l.cube_channels, cube = c / a, in_cube = c % a;
    const uint64_t cube_width = std::min(a, l.kernel_channels - cube * a);
    const uint64_t positions = uint64_t(l.kernel_height) * l.kernel_width;
    const uint64_t position = uint64_t(r) * l.kernel_width + s;
    return uint64_t(group) * per_group * sh.elements_per_kernel() +
           uint64_t(cube) * a * positions * kernels_here +
           (position * kernels_here + in_group) * cube_width + in_cube;
}

// Image weights with post-extension: one cube per group of `factor` rows holding those rows'
// channels row after row; the last group keeps only the rows that are left.
uint64_t post_extended_index(const WeightLayout& l, uint32_t k, uint32_t c, uint32_t r) {
    const WeightSurfaceShape& sh = l.surface;
    const uint32_t per_group = sh.kernels_per_group;
    const uint32_t group = k / per_group, in_group = k % per_group;
    const uint64_t kernels_here = sh.kernels_in_group(group);
    const uint32_t factor = l.format.post_extension;
    const uint32_t row_group = r / factor, row_in_group = r % factor;
    const uint64_t rows_here = std::min(factor, l.kernel_height - row_group * factor);
    const uint64_t channels = l.kernel_channels;
    return uint64_t(group) * per_group * sh.elements_per_kernel() +
           uint64_t(row_group) * factor * channels * kernels_here +
           (in_group * rows_here + row_in_group) * channels + c;
}

// Winograd: 4x4x4 cubes (4 channels, c fastest, then s, then r) scanned K -> C in a group.
uint64_t winograd_index(const WeightLayout& l, uint32_t k, uint32_t c, uint32_t r, uint32_t s) {
    const WeightSurfaceShape& sh = l.surface;
    const uint32_t per_group = sh.kernels_per_group;
    const uint32_t group = k / per_group, in_group = k % per_group;
    const uint64_t kernels_here = sh.kernels_in_group(group);
    return uint64_t(group) * per_group * sh.elements_per_kernel() +
           (uint64_t(c / 4) * kernels_here + in_group) * 64 + (uint64_t(r) * 4 + s) * 4 + c % 4;
}

// Byte offset of host element (k, c, r, s) for every kind but Winograd.
uint64_t host_element_offset(const WeightLayout& l, uint32_t k, uint32_t c, uint32_t r,
                             uint32_t s) {
    const uint32_t bpe = bytes_per_element(l.format.precision);
    switch (l.format.kind) {
        case WeightKind::Direct: return direct_index(l, k, c, r, s) * bpe;
        case WeightKind::Image: {
            const uint32_t extended_c = s * l.format.image_channels + c;
            if (l.format.post_extension == 1) return direct_index(l, k, extended_c, r, 0) * bpe;
            return post_extended_index(l, k, extended_c, r) * bpe;
        }
        case WeightKind::Deconvolution: {
            // Set (y, x) holds rows y, y + sy, ... and columns x, x + sx, ...; its kernel
            // positions are stored last to first, which flips the kernel.
            const uint32_t sx = l.format.stride_x, sy = l.format.stride_y;
            const uint32_t set = (r % sy) * sx + s % sx;
            const uint32_t flipped_r = l.kernel_height - 1 - r / sy;
            const uint32_t flipped_s = l.kernel_width - 1 - s / sx;
            return l.set_offset(set) + direct_index(l, k, c, flipped_r, flipped_s) * bpe;
        }
        case WeightKind::Winograd: break;
    }
    return 0;
}

// ---- Winograd transform ---------------------------------------------------------------------

void transform(const double g[9], double u[16]) {
    // G g: rows g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2; then the same on columns.
    double t[4][3];
    for (int j = 0; j < 3; ++j) {
        t[0][j] = g[j];
        t[1][j] = 0.5 * (g[j] + g[3 + j] + g[6 + j]);
        t[2][j] = 0.5 * (g[j] - g[3 + j] + g[6 + j]);
        t[3][j] = g[6 + j];
    }
    for (int i = 0; i < 4; ++i) {
        u[i * 4 + 0] = t[i][0];
        u[i * 4 + 1] = 0.5 * (t[i][0] + t[i][1] + t[i][2]);
        u[i * 4 + 2] = 0.5 * (t[i][0] - t[i][1] + t[i][2]);
        u[i * 4 + 3] = t[i][2];
    }
}

void inverse_transform(const double u[16], double g[9]) {
    // H = [1 0 0 0; 0 1 -1 0; 0 0 0 1] picks rows 0, 1 - 2 and 3, then the same on columns.
    double t[3][4];
    for (int j = 0; j < 4; ++j) {
        t[0][j] = u[j];
        t[1][j] = u[4 + j] - u[8 + j];
        t[2][j] = u[12 + j];
    }
    for (int i = 0; i < 3; ++i) {
        g[i * 3 + 0] = t[i][0];
        g[i * 3 + 1] = t[i][1] - t[i][2];
        g[i * 3 + 2] = t[i][3];
    }
}

// Extended channel ce of a Winograd kernel holds original channel c at row/column phase
// (dy, dx): ce = (dy * sx + dx) * padded + c (the order CDMA extends the data in).
struct WinogradSource {
    uint32_t c, dx, dy;
};

WinogradSource winograd_source(const WeightLayout& l, uint32_t extended_c) {
    const uint32_t phase = extended_c / l.padded_channels;
    return {extended_c % l.padded_channels, phase % l.format.stride_x, phase / l.format.stride_x};
}

void pack_winograd(const ConstTensorView& src, const WeightLayout& l, std::byte* dst,
                   const ConvertOptions& opt) {
    const Dims4& d = l.source;
    const uint32_t host_bpe = bytes_per_element(src.type);
    const uint32_t bpe = bytes_per_element(l.format.precision);
    const double scale = double(l.format.winograd_scale) * double(opt.quant_scale);
    const auto* in = static_cast<const uint8_t*>(src.data);
    for (uint32_t k = 0; k < d.n; ++k) {
        for (uint32_t ce = 0; ce < l.kernel_channels; ++ce) {
            const WinogradSource from = winograd_source(l, ce);
            if (from.c >= d.c) continue;  // padding channel: stays zero
            double g[9];
            for (uint32_t r = 0; r < 3; ++r) {
                for (uint32_t s = 0; s < 3; ++s) {
                    const uint32_t hr = r * l.format.stride_y + from.dy;
                    const uint32_t hs = s * l.format.stride_x + from.dx;
                    g[r * 3 + s] =
                        hr < d.h && hs < d.w
                            ? detail::host_value(
                                  src.type, in + detail::host_offset(d, src.layout, host_bpe, k,
                                                                     from.c, hr, hs))
                            : 0.0;
                }
            }
            double u[16];
            transform(g, u);
            for (uint32_t r = 0; r < 4; ++r)
                for (uint32_t s = 0; s < 4; ++s)
                    detail::store_surface(l.format.precision, u[r * 4 + s] * scale,
                                          dst + winograd_index(l, k, ce, r, s) * bpe, opt);
        }
    }
}

void unpack_winograd(const std::byte* src, const WeightLayout& l, const TensorView& dst,
                     const ConvertOptions& opt) {
    const Dims4& d = l.source;
    const uint32_t host_bpe = bytes_per_element(dst.type);
    const uint32_t bpe = bytes_per_element(l.format.precision);
    const double scale = double(l.format.winograd_scale) * double(opt.quant_scale);
    auto* out = static_cast<uint8_t*>(dst.data);
    for (uint32_t k = 0; k < d.n; ++k) {
        for (uint32_t ce = 0; ce < l.kernel_channels; ++ce) {
            const WinogradSource from = winograd_source(l, ce);
            if (from.c >= d.c) continue;
            double u[16];
            for (uint32_t r = 0; r < 4; ++r)
                for (uint32_t s = 0; s < 4; ++s)
                    u[r * 4 + s] =
                        detail::surface_value(l.format.precision,
                                              src + winograd_index(l, k, ce, r, s) * bpe) /
                        scale;
            double g[9];
            inverse_transform(u, g);
            for (uint32_t r = 0; r < 3; ++r) {
                for (uint32_t s = 0; s < 3; ++s) {
                    const uint32_t hr = r * l.format.stride_y + from.dy;
                    const uint32_t hs = s * l.format.stride_x + from.dx;
                    if (hr >= d.h || hs >= d.w) continue;  // extension padding
                    detail::store_host(
                        dst.type, g[r * 3 + s],
                        out + detail::host_offset(d, dst.layout, host_bpe, k, from.c, hr, hs), opt);
                }
            }
        }
    }
}

Status check_dims_match(const char* action, const Dims4& have, const WeightLayout& l) {
    if (have == l.source) return {};
    const Dims4& want = l.source;
    return error(action, ": kernels are ", have.n, "x", have.c, "x", have.h, "x", have.w,
                 " (KxCxRxS) but the layout is for ", want.n, "x", want.c, "x", want.h, "x",
                 want.w);
}

Status check_quant_scale(const char* action, const ConvertOptions& opt) {
    if (std::isfinite(opt.quant_scale) && opt.quant_scale > 0.0f) return {};
    return error(action, ": quant_scale ", opt.quant_scale, " is not a positive number");
}

}  // namespace

std::string_view to_string(WeightKind k) {
    switch (k) {
        case WeightKind::Direct: return "direct";
        case WeightKind::Image: return "image";
        case WeightKind::Winograd: return "winograd";
        case WeightKind::Deconvolution: return "deconvolution";
    }
    return "?";
}

Result<WeightLayout> make_weight_layout(const HwConfig& cfg, const WeightFormat& format,
                                        Dims4 kernels) {
    const char* name = describe(format.kind);
    if (!supports(cfg, format.precision))
        return error(name, ": precision ", to_string(format.precision), " is not supported by ",
                     cfg.name);
    if (format.kind == WeightKind::Winograd && !nvdla_hw_has(&cfg, NVDLA_FEATURE_WINOGRAD))
        return error(name, ": ", cfg.name, " has no Winograd convolution");
    LayoutInputs in;
    in.cube_channels = cfg.mac_atomic_c;
    in.kernels_per_group = weight_kernels_per_group(cfg, format.precision);
    // Winograd pads channels to whole atoms of the feature data (32 bytes on nv_full).
    const uint32_t atom_elements = elements_per_atom(cfg, format.precision);
    if (atom_elements == 0) return error(name, ": ", cfg.name, " has a zero atom size");
    in.winograd_padded_channels =
        static_cast<uint32_t>(align_up(kernels.c ? kernels.c : 1, atom_elements));
    return derive_layout(format, kernels, in);
}

Result<uint64_t> weight_surface_bytes(const HwConfig& cfg, const WeightFormat& format,
                                      Dims4 kernels) {
    Result<WeightLayout> l = make_weight_layout(cfg, format, kernels);
    if (!l) return l.status();
    return l->size_bytes();
}

Result<uint64_t> weight_byte_offset(const WeightLayout& layout, uint32_t k, uint32_t c, uint32_t r,
                                    uint32_t s) {
    const char* action = "weight offset";
    if (Status st = check_layout(layout, action); !st) return st;
    if (layout.format.kind == WeightKind::Winograd)
        return error(action, ": a Winograd surface holds transformed kernels; element (", k, ", ",
                     c, ", ", r, ", ", s, ") has no single position");
    const Dims4& d = layout.source;
    if (k >= d.n || c >= d.c || r >= d.h || s >= d.w)
        return error(action, ": element (k ", k, ", c ", c, ", r ", r, ", s ", s,
                     ") is outside the ", d.n, "x", d.c, "x", d.h, "x", d.w, " kernels");
    return host_element_offset(layout, k, c, r, s);
}

Status pack_weights(const ConstTensorView& src, const WeightLayout& layout, ByteSpan dst,
                    const ConvertOptions& opt) {
    const char* action = "pack weights";
    if (Status s = check_layout(layout, action); !s) return s;
    if (Status s = detail::check_host_tensor(src, "pack weights: kernels"); !s) return s;
    if (Status s = check_dims_match(action, src.dims, layout); !s) return s;
    if (Status s = check_quant_scale(action, opt); !s) return s;
    const uint64_t size = layout.size_bytes();
    if (dst.size() < size)
        return error(action, ": destination of ", dst.size(), " bytes is too small for the ", size,
                     "-byte ", describe(layout.format.kind), " surface");

    std::memset(dst.data(), 0, size);
    if (layout.format.kind == WeightKind::Winograd) {
        pack_winograd(src, layout, dst.data(), opt);
        return {};
    }
    const detail::HostReader reader(src, layout.format.precision, opt);
    const Dims4& d = layout.source;
    for (uint32_t k = 0; k < d.n; ++k)
        for (uint32_t c = 0; c < d.c; ++c)
            for (uint32_t r = 0; r < d.h; ++r)
                for (uint32_t s = 0; s < d.w; ++s)
                    reader.read(k, c, r, s, dst.data() + host_element_offset(layout, k, c, r, s));
    return {};
}

Status unpack_weights(ConstByteSpan src, const WeightLayout& layout, const TensorView& dst,
                      const ConvertOptions& opt) {
    const char* action = "unpack weights";
    if (Status s = check_layout(layout, action); !s) return s;
    if (Status s = detail::check_host_tensor(dst, "unpack weights: kernels"); !s) return s;
    if (Status s = check_dims_match(action, dst.dims, layout); !s) return s;
    if (Status s = check_quant_scale(action, opt); !s) return s;
    const uint64_t size = layout.size_bytes();
    if (src.size() < size)
        return error(action, ": source of ", src.size(), " bytes is smaller than the ", size,
                     "-byte ", describe(layout.format.kind), " surface");

    if (layout.format.kind == WeightKind::Winograd) {
        unpack_winograd(src.data(), layout, dst, opt);
        return {};
    }
    const detail::HostWriter writer(dst, layout.format.precision, opt);
    const Dims4& d = layout.source;
    for (uint32_t k = 0; k < d.n; ++k)
        for (uint32_t c = 0; c < d.c; ++c)
            for (uint32_t r = 0; r < d.h; ++r)
                for (uint32_t s = 0; s < d.w; ++s)
                    writer.write(k, c, r, s, src.data() + host_element_offset(layout, k, c, r, s));
    return {};
}

std::array<float, 16> winograd_transform(const std::array<float, 9>& g) {
    double in[9], out[16];
    for (int i = 0; i < 9; ++i) in[i] = g[i];
    transform(in, out);
    std::array<float, 16> u{};
    for (int i = 0; i < 16; ++i) u[i] = static_cast<float>(out[i]);
    return u;
}

std::array<float, 9> winograd_inverse_transform(const std::array<float, 16>& u) {
    double in[16], out[9];
    for (int i = 0; i < 16; ++i) in[i] = u[i];
    inverse_transform(in, out);
    std::array<float, 9> g{};
    for (int i = 0; i < 9; ++i) g[i] = static_cast<float>(out[i]);
    return g;
}

}  // namespace nvdla
