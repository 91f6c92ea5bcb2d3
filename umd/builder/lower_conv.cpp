// Convolutions, fully connected layers and deconvolutions on the convolution core: weight
// folding, int8 weight scales, group splitting, convolution-buffer tiling (output channels,
// input rows), weight packing and compression, and the fused SDP/PDP behind each piece.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

#include "builder/lower_impl.hpp"
#include "nvdla/formats/pixel.hpp"
#include "nvdla/formats/weights.hpp"

namespace nvdla::builder::detail {

namespace {

uint32_t div_up(uint64_t a, uint64_t b) {
    return static_cast<uint32_t>((a + b - 1) / b);
}

// Float KCRS kernels (layout.source) packed into `layout`, fp16 saturating.
Result<std::vector<std::byte>> pack_kernels(const std::vector<float>& kernels,
                                            const WeightLayout& layout) {
    std::vector<std::byte> packed(layout.size_bytes());
    ConvertOptions opt;
    opt.saturate_fp16 = true;
    const ConstTensorView view{kernels.data(), kernels.size() * sizeof(float), HostType::Float32,
                               HostLayout::NCHW, layout.source};
    if (Status s = pack_weights(view, layout, packed, opt); !s) return s;
    return packed;
}

// What every CONV operation states, whatever its mode (direct, image, Winograd): the CSC's input
// and kernel cubes, the CMAC's output, the convolution-buffer banks, stride, dilation, padding.
struct ConvGeometry {
    struct Cube {
        uint32_t width = 0, height = 0, channels = 0;
    };
    struct Step {
        uint32_t x = 1, y = 1;
    };
    struct Padding {
        uint32_t left = 0, right = 0, top = 0, bottom = 0;
    };
    uint8_t mode = NVDLA_DLA_CONV_DIRECT;
    uint8_t data_format = NVDLA_DLA_FORMAT_FEATURE;  // or an image's pixel format
    uint32_t entry_per_slice = 0, data_banks = 0, weight_banks = 0;
    Cube input;   // the CSC's; its rows are released after the operation
    Cube kernel;  // the CSC's
    Cube output;  // the CMAC's (channels: kernels)
    uint64_t bytes_per_kernel = 0;
    Step stride, dilation;
    Padding pad;
    int16_t pad_value = 0;
    uint32_t in_precision = NVDLA_DLA_PRECISION_INT8, out_precision = NVDLA_DLA_PRECISION_INT8;
    nvdla_dla_data_cube weights = no_cube();
};

// A CONV operation of that geometry, writing to the SDP, with unit converters and uncompressed
// weights; the caller adds the source cube and what its mode needs beyond that.
HwOp conv_op(const ConvGeometry& g) {
    HwOp conv;
    conv.type = NVDLA_DLA_OP_CONV;
    std::memset(&conv.op, 0, sizeof conv.op);
    std::memset(&conv.surf, 0, sizeof conv.surf);
    nvdla_dla_conv_op_desc& op = conv.op.conv_op;
    op.conv_mode = g.mode;
    op.entry_per_slice = static_cast<uint16_t>(g.entry_per_slice);
    op.data_format = g.data_format;
    op.pixel_mapping = NVDLA_DLA_PIXEL_MAPPING_PITCH_LINEAR;
    op.fetch_grain = 1;
    op.batch = 1;
    op.weight_format = NVDLA_DLA_WEIGHT_UNCOMPRESSED;
    op.data_bank = static_cast<uint8_t>(g.data_banks);
    op.weight_bank = static_cast<uint8_t>(g.weight_banks);
    op.release = static_cast<uint16_t>(g.input.height);
    op.input_width_csc = static_cast<uint16_t>(g.input.width);
    op.input_height_csc = static_cast<uint16_t>(g.input.height);
    op.input_channel_csc = static_cast<uint16_t>(g.input.channels);
    op.kernel_width_csc = static_cast<uint16_t>(g.kernel.width);
    op.kernel_height_csc = static_cast<uint16_t>(g.kernel.height);
    op.kernel_channel_csc = static_cast<uint16_t>(g.kernel.channels);
    op.input_width_cmac = static_cast<uint16_t>(g.output.width);
    op.input_height_cmac = static_cast<uint16_t>(g.output.height);
    op.bytes_per_kernel = static_cast<uint32_t>(g.bytes_per_kernel);
    op.conv_stride_x = static_cast<uint8_t>(g.stride.x);
    op.conv_stride_y = static_cast<uint8_t>(g.stride.y);
    op.pad_val = g.pad_value;
    op.pad_x_left = static_cast<uint8_t>(g.pad.left);
    op.pad_x_right = static_cast<uint8_t>(g.pad.right);
    op.pad_y_top = static_cast<uint8_t>(g.pad.top);
    op.pad_y_bottom = static_cast<uint8_t>(g.pad.bottom);
    op.dilation_x = static_cast<uint8_t>(g.dilation.x);
    op.dilation_y = static_cast<uint8_t>(g.dilation.y);
    op.in_precision = static_cast<uint8_t>(g.in_precision);
    op.out_precision = static_cast<uint8_t>(g.out_precision);
    op.in_cvt.scale = 1;
    op.out_cvt.scale = 1;
    op.out_cvt.enable = 1;
    nvdla_dla_conv_surface_desc& sd = conv.surf.conv_surface;
    sd.weight_data = g.weights;
    sd.wmb_data = no_cube();
    sd.wgs_data = no_cube();
    sd.dst_data = hw_cube({1, g.output.channels, g.output.height, g.output.width});
    return conv;
}

// A cube of `bytes` bytes at `offset` of the constant buffer holding width x height x channel
// kernel elements.
nvdla_dla_data_cube const_cube(uint64_t offset, uint64_t bytes, uint32_t width, uint32_t height,
                               uint32_t channel) {
    nvdla_dla_data_cube cube = no_cube();
    cube.address = static_cast<int16_t>(kConstBuffer);
    cube.offset = static_cast<uint32_t>(offset);
    cube.size = static_cast<uint32_t>(bytes);
    cube.width = static_cast<uint16_t>(width);
    cube.height = static_cast<uint16_t>(height);
    cube.channel = static_cast<uint16_t>(channel);
    return cube;
}

// The input rows output rows [o0, o0 + on) read through a window of `window` rows at `stride`
// (input rows [first, first + rows) of `height`), and the padding rows above and below them.
struct RowWindow {
    uint32_t first = 0, rows = 0, pad_top = 0, pad_bottom = 0;
};
RowWindow row_window(uint32_t o0, uint32_t on, uint32_t stride, uint32_t pad_top, uint32_t window,
                     uint32_t height) {
    const int64_t first = int64_t(o0) * stride - pad_top;
    const int64_t last = int64_t(o0 + on - 1) * stride - pad_top + window - 1;
    RowWindow w;
    w.first = static_cast<uint32_t>(std::max<int64_t>(0, first));
    w.rows = static_cast<uint32_t>(std::min<int64_t>(height - 1, last)) - w.first + 1;
    w.pad_top = static_cast<uint32_t>(std::max<int64_t>(0, -first));
    w.pad_bottom = static_cast<uint32_t>(std::max<int64_t>(0, last - (height - 1)));
    return w;
}

// How a direct convolution over `channels` input channels of width `width` uses the
// convolution buffer.
struct DirectBufferUse {
    uint32_t banks = 0, depth = 0, width = 0;  // the buffer: banks of `depth` entries of `width` B
    uint32_t entries_per_row = 0;              // one input row (CDMA/CSC D_ENTRY_PER_SLICE + 1)
    uint64_t bytes_per_kernel = 0;
    uint32_t reserve = 0;  // a bank kept free for compressed weights

    uint32_t weight_banks(uint64_t kernels) const {
        return std::max<uint32_t>(1, div_up(div_up(kernels * bytes_per_kernel, width), depth));
    }
    uint32_t data_banks(uint64_t rows) const {
        return std::max<uint32_t>(1, div_up(uint64_t(entries_per_row) * rows, depth));
    }
};

// Kernels and output rows per piece of a direct convolution making `kernels` output channels
// from `height` input rows: all of them when they fit, else fewer kernels (in multiples of
// `unit`), else windows of input rows too. 0 kernels: not even one window and one unit fit.
struct DirectTiling {
    uint32_t kernels = 0, rows_out = 0;
    bool window_fits = true;  // false: one window of input rows and one unit do not fit
};
DirectTiling direct_tiling(const DirectBufferUse& buf, uint32_t kernels, uint32_t unit,
                           uint32_t height, uint32_t window, uint32_t stride_y, uint32_t out_h) {
    DirectTiling t{kernels, out_h};
    const uint32_t banks = buf.banks, reserve = buf.reserve;
    if (buf.data_banks(height) + buf.weight_banks(kernels) + reserve <= banks) return t;
    auto largest_k = [&](uint32_t free) -> uint32_t {
        uint32_t k = 0;
        while (k + unit <= kernels && buf.weight_banks(k + unit) <= free) k += unit;
        if (k == 0 && kernels < unit && buf.weight_banks(kernels) <= free) k = kernels;
        return k;
    };
    const uint32_t first_unit = std::min(unit, kernels);
    if (buf.data_banks(height) + buf.weight_banks(first_unit) + reserve <= banks) {
        t.kernels = largest_k(banks - buf.data_banks(height) - reserve);
        return t;
    }
    if (buf.data_banks(window) + buf.weight_banks(first_unit) + reserve > banks)
        return {0, 0, false};
    const uint32_t wb = buf.weight_banks(kernels) + buf.data_banks(window) + reserve <= banks
                            ? buf.weight_banks(kernels)
                            : buf.weight_banks(largest_k(banks - buf.data_banks(window) - reserve));
    t.kernels = buf.weight_banks(kernels) == wb
                    ? kernels
                    : largest_k(banks - buf.data_banks(window) - reserve);
    const uint64_t cap_rows = uint64_t(banks - wb - reserve) * buf.depth / buf.entries_per_row;
    t.rows_out = static_cast<uint32_t>(std::max<uint64_t>(1, (cap_rows - window) / stride_y + 1));
    t.rows_out = std::min(t.rows_out, out_h);
    return t;
}

}  // namespace

std::vector<double> Lowering::weight_scales(const std::vector<float>& w, uint32_t kernels) const {
    std::vector<double> s(kernels, 1.0);
    if (!t_.int8()) return s;
    const size_t per = w.size() / kernels;
    double all = 0;
    for (uint32_t k = 0; k < kernels; ++k) {
        double m = 0;
        for (size_t i = 0; i < per; ++i) m = std::max(m, std::fabs(double(w[k * per + i])));
        s[k] = m;
        all = std::max(all, m);
    }
    for (uint32_t k = 0; k < kernels; ++k) {
        double m = t_.options->quantization == Quantization::PerChannel ? s[k] : all;
        if (!(m > 0)) m = all > 0 ? all : 1.0;
        s[k] = m / 127.0;
    }
    return s;
}

Status Lowering::place_input(uint32_t index, uint32_t id, Place& p) {
    const Node& n = net_.nodes[id];
    const InputFormat fmt =
        index < t_.options->inputs.size() ? t_.options->inputs[index] : InputFormat{};
    TensorDesc d;
    d.name = n.name;
    d.index = index;
    d.dims = n.dims;
    d.host_layout = n.layout;
    d.hw = t_.cfg;
    d.atom_bytes = t_.cfg->atom_bytes;
    if (fmt.image) {
        const std::string who = "input '" + n.name + "'";
        if (static_cast<uint32_t>(fmt.pixel_format) >= kPixelFormatCount)
            return error(who, ": pixel format ", static_cast<uint32_t>(fmt.pixel_format),
                         " does not exist");
        const PixelFormatInfo& info = pixel_format_info(fmt.pixel_format);
        if (info.planes != 1)
            return error(who, ": ", info.name,
                         " has two planes; the builder takes single-plane images");
        if (n.dims.c > info.channels)
            return error(who, ": ", n.dims.c, " channels do not fit ", info.name, "'s ",
                         unsigned(info.channels));
        if (info.input_precision == Precision::Fp16 && !(t_.precision == Precision::Fp16))
            return error(who, ": ", info.name,
                         " holds fp16 pixels, which only an fp16 build reads");
        if (info.input_precision == Precision::Fp16 &&
            (fmt.mean[0] || fmt.mean[1] || fmt.mean[2] || fmt.mean[3]))
            return error(who, ": the CDMA subtracts no mean from fp16 pixels (", info.name,
                         "); use mean 0");
        if (!(fmt.scale > 0) || !std::isfinite(fmt.scale))
            return error(who, ": the image scale is ", fmt.scale, "; it must be positive");
        if (!supports(*t_.cfg, info.input_precision))
            return error(who, ": ", t_.cfg->name, " cannot read ", to_string(info.input_precision),
                         " pixels (", info.name, ")");
        Result<PixelSurface> surface =
            dense_pixel_surface(*t_.cfg, fmt.pixel_format, n.dims.w, n.dims.h);
        if (!surface) return surface.status().context(who);
        Result<uint64_t> bytes = pixel_surface_bytes(*t_.cfg, *surface);
        if (!bytes) return bytes.status().context(who);
        p = Place{};
        p.dims = n.dims;
        p.line = static_cast<uint32_t>(surface->planes[0].line_stride);
        p.buffer = plan_.add_buffer(BufferKind::Input, *bytes, n.name, index);
        for (uint32_t c : cons_[id]) {
            const Node& cn = net_.nodes[c];
            if ((cn.op != Op::Convolution && cn.op != Op::FullyConnected) ||
                (cn.op == Op::Convolution &&
                 (cn.conv.groups != 1 || cn.conv.dilation_h != 1 || cn.conv.dilation_w != 1)))
                return error(layer(c), " reads image input '", n.name,
                             "'; only convolutions without groups or dilation read images");
        }
        image_[id] = fmt;
        d.precision = info.input_precision == Precision::Fp16 ? Precision::Fp16
                      : info.significant_bits <= 8            ? Precision::Int8
                                                              : Precision::Int16;
        d.pixel_format = static_cast<uint8_t>(fmt.pixel_format);
        d.line_stride = p.line;
        d.size_bytes = *bytes;
        d.image = fmt;
        input_descs_.push_back(d);
        return Status();
    }
    p = dense(0, n.dims);
    p.buffer = plan_.add_buffer(BufferKind::Input, cube_bytes(p), n.name, index);
    d.precision = t_.precision;
    d.pixel_format = t_.cfg->atom_bytes == 8 ? kPixelFormatFeatureX8 : kPixelFormatFeature;
    d.line_stride = p.line;
    d.surface_stride = p.surface;
    d.size_bytes = cube_bytes(p);
    d.scale = static_cast<float>(scale(id));
    input_descs_.push_back(d);
    return Status();
}

Status Lowering::lower_conv(uint32_t id) {
    const Node& n = net_.nodes[id];
    uint32_t in_id = root(n.inputs[0]);
    if (net_.nodes[in_id].op == Op::Flatten) in_id = root(net_.nodes[in_id].inputs[0]);
    ConvJob job;
    job.node = id;
    job.name = n.name;
    // A pad in front that the convolution's own padding absorbs: read the pad's input.
    const int folded = n.op == Op::Convolution ? folded_pad(id) : -1;
    if (folded >= 0) in_id = root(net_.nodes[size_t(folded)].inputs[0]);
    job.in = home(in_id);
    const ConvolutionDesc& c = n.conv;
    job.kernels = c.out_channels;
    job.groups = n.op == Op::FullyConnected ? 1 : c.groups;
    job.channels = job.in.dims.c / job.groups;
    job.r = c.kernel_h;
    job.s = c.kernel_w;
    job.stride_x = c.stride_w;
    job.stride_y = c.stride_h;
    job.dil_x = c.dilation_w;
    job.dil_y = c.dilation_h;
    job.pad_l = c.pad_left;
    job.pad_r = c.pad_right;
    job.pad_t = c.pad_top;
    job.pad_b = c.pad_bottom;
    job.out_w = n.dims.w;
    job.out_h = n.dims.h;
    job.weights = n.weights;
    job.bias = n.bias;
    if (job.bias.empty()) job.bias.assign(job.kernels, 0.0f);
    job.what = n.op == Op::FullyConnected ? "fully connected as "
               : n.kind.empty()           ? ""
                                          : n.kind + " as ";
    if (folded >= 0) {
        const Node& pn = net_.nodes[size_t(folded)];
        job.pad_t += pn.pads[0];
        job.pad_l += pn.pads[1];
        job.pad_b += pn.pads[2];
        job.pad_r += pn.pads[3];
        job.pad_value = pad_element(pn.pad_value, in_id);
        job.what = "(" + pn.name + " folded) ";
    }
    if (image_[in_id]) job.image = &*image_[in_id];
    job.in_scale = scale(in_id);
    if (n.kind.empty()) {
        const uint64_t per_output = uint64_t(job.channels) * c.kernel_h * c.kernel_w;
        plan_.model_macs += per_output * n.dims.c * n.dims.h * n.dims.w;
    }

    // Batch norm, scale and bias right after the convolution fold into its weights.
    uint32_t cur = id;
    const size_t per = job.weights.size() / job.kernels;
    for (;;) {
        const int nx = next_in_chain(cur);
        if (nx < 0 || net_.nodes[size_t(nx)].op != Op::Affine) break;
        const Node& a = net_.nodes[size_t(nx)];
        for (uint32_t k = 0; k < job.kernels; ++k) {
            for (size_t i = 0; i < per; ++i) job.weights[k * per + i] *= a.scale[k];
            job.bias[k] = job.bias[k] * a.scale[k] + a.shift[k];
        }
        done_[size_t(nx)] = true;
        cur = static_cast<uint32_t>(nx);
    }

    SdpSource src;
    src.flying = true;
    src.bias = job.bias;
    src.channels = job.kernels;
    src.scale = scale(cur);
    job.weight_scale = weight_scales(job.weights, job.kernels);
    if (t_.int8()) {
        src.units.resize(job.kernels);
        for (uint32_t k = 0; k < job.kernels; ++k)
            src.units[k] = scale(in_id) * job.weight_scale[k];
    }
    SdpProgram prog(t_, src);
    const uint32_t last = grow_chain(prog, cur, true);
    write_for_clip(last);
    job.prog = &prog;
    job.pool = fusable_pool(last, job.out_w);
    job.out_scale = scale(last);
    done_[id] = true;
    bool fused = false;
    if (Status s = conv_job(job, fused, last); !s) return s;
    if (Status s = computed(last); !s) return s;
    if (fused) {
        done_[size_t(job.pool)] = true;
        return computed(static_cast<uint32_t>(job.pool));
    }
    return Status();
}

Status Lowering::conv_job(const ConvJob& job, bool& pool_fused, uint32_t last) {
    const HwConfig& cfg = *t_.cfg;
    const uint32_t lanes = t_.lanes(), bpe = t_.bpe();
    const std::string who = layer(job.node);
    pool_fused = false;

    if (job.stride_x > 8 || job.stride_y > 8)
        return error(who, ": stride ", job.stride_y, "x", job.stride_x,
                     " is larger than the convolution core's 8");
    if (job.dil_x > 32 || job.dil_y > 32)
        return error(who, ": dilation ", job.dil_y, "x", job.dil_x, " is larger than 32");
    if (job.pad_l > 31 || job.pad_t > 31 || job.pad_r > 63 || job.pad_b > 63)
        return error(who, ": padding ", job.pad_t, ",", job.pad_l, ",", job.pad_b, ",", job.pad_r,
                     " is beyond the convolution core's 31 (left, top) and 63 (right, bottom)");
    if (job.r > 32 || job.s > 32)
        return error(who, ": the ", job.r, "x", job.s,
                     " kernel is larger than the 32x32 the convolution core takes");

    const uint64_t dense_macs =
        uint64_t(job.kernels) * job.channels * job.r * job.s * uint64_t(job.out_w) * job.out_h;
    if (job.image) {
        plan_.hardware_macs += dense_macs;
        return conv_image(job, last, pool_fused);
    }
    if (Result<bool> wg = conv_winograd(job, last); !wg) {
        return wg.status();
    } else if (*wg) {
        plan_.hardware_macs += dense_macs * 16 / 36;  // F(2x2, 3x3): 16 products per 4 outputs
        return Status();
    }

    const uint32_t groups = job.groups, cg = job.channels, kg = job.kernels / groups;
    uint32_t per_chunk = 1;
    while (per_chunk < groups && ((per_chunk * cg) % lanes || (per_chunk * kg) % lanes))
        ++per_chunk;
    const uint32_t unit = std::lcm(weight_kernels_per_group(cfg, t_.precision), lanes);
    const CbufGeometry cbuf = cbuf_geometry(cfg);
    const bool may_compress =
        t_.options->compress_weights && nvdla_hw_has(&cfg, NVDLA_FEATURE_WEIGHT_COMPRESSION);
    const uint32_t W = job.in.dims.w, H = job.in.dims.h;
    const uint32_t r_eff = (job.r - 1) * job.dil_y + 1;
    const uint32_t chunks = div_up(groups, per_chunk);
    uint32_t operations = 0;
    bool rows_split = false, kernels_split = false, compressed_any = false;

    for (uint32_t g0 = 0; g0 < groups; g0 += per_chunk) {
        const uint32_t gc = std::min(per_chunk, groups - g0);
        const uint32_t cc = gc * cg, kc = gc * kg, ci0 = g0 * cg, ko0 = g0 * kg;
        DirectBufferUse buf;
        buf.banks = cfg.cbuf_banks;
        buf.depth = cbuf.entries_per_bank;
        buf.width = cbuf.entry_bytes;
        buf.entries_per_row = cbuf_entries_per_slice(cfg, cc, bpe, W);
        buf.bytes_per_kernel = uint64_t(job.r) * job.s * cc * bpe;
        buf.reserve = may_compress ? 1 : 0;
        const DirectTiling tiling = direct_tiling(buf, kc, unit, H, r_eff, job.stride_y, job.out_h);
        if (!tiling.window_fits)
            return error(who, ": one window of ", r_eff, " input rows (", buf.entries_per_row,
                         " buffer entries each) and one group of ", std::min(unit, kc),
                         " kernels (", buf.bytes_per_kernel, " bytes each) do not fit the ",
                         buf.banks, " banks of ", buf.depth, " entries of ", buf.width,
                         " bytes of ", cfg.name, "'s convolution buffer");
        uint32_t kp = tiling.kernels;
        const uint32_t rows_out = tiling.rows_out;
        if (kp == 0) return error(who, ": internal: no kernels fit the convolution buffer");
        if (kp > 8192) kp = 8192 / unit * unit;
        rows_split = rows_split || rows_out < job.out_h;
        kernels_split = kernels_split || kp < kc;
        const bool fuse_pool = job.pool >= 0 && rows_out == job.out_h;

        for (uint32_t k0 = 0; k0 < kc; k0 += kp) {
            const uint32_t kn = std::min(kp, kc - k0);
            Result<ConvWeights> weights = direct_weights(job, ko0, k0, kn, cc, may_compress);
            if (!weights) return weights.status();
            compressed_any = compressed_any || weights->compressed;

            for (uint32_t o0 = 0; o0 < job.out_h; o0 += rows_out) {
                const uint32_t on = std::min(rows_out, job.out_h - o0);
                const RowWindow rows = row_window(o0, on, job.stride_y, job.pad_t, r_eff, H);
                const uint32_t data_banks = buf.data_banks(rows.rows);
                const uint32_t precision =
                    t_.int8() ? NVDLA_DLA_PRECISION_INT8 : NVDLA_DLA_PRECISION_FP16;
                const ConvGeometry geo{.entry_per_slice = buf.entries_per_row,
                                       .data_banks = data_banks,
                                       .weight_banks = std::min<uint32_t>(
                                           buf.banks - data_banks,
                                           buf.weight_banks(kn) + (weights->compressed ? 1 : 0)),
                                       .input = {W, rows.rows, cc},
                                       .kernel = {job.s, job.r, cc},
                                       .output = {job.out_w, on, kn},
                                       .bytes_per_kernel = buf.bytes_per_kernel,
                                       .stride = {job.stride_x, job.stride_y},
                                       .dilation = {job.dil_x, job.dil_y},
                                       .pad = {job.pad_l, job.pad_r, rows.pad_top, rows.pad_bottom},
                                       .pad_value = job.pad_value,
                                       .in_precision = precision,
                                       .out_precision = precision,
                                       .weights = weights->weights};
                HwOp conv = conv_op(geo);
                nvdla_dla_conv_surface_desc& sd = conv.surf.conv_surface;
                if (weights->compressed) {
                    conv.op.conv_op.weight_format = NVDLA_DLA_WEIGHT_COMPRESSED;
                    sd.wmb_data = weights->mask;
                    sd.wgs_data = weights->group_sizes;
                }
                const Place src = sub_place(job.in, ci0, cc, rows.first, rows.rows);
                sd.src_data = cube_of(src, cube_bytes(src));

                Group g;
                g.ops.push_back(conv);
                SdpProgram::Piece pc;
                pc.channel_begin = ko0 + k0;
                pc.channels = kn;
                pc.row_begin = o0;
                pc.src = hw_cube({1, kn, on, job.out_w});
                if (Status s = conv_output(job, last, pc, on, fuse_pool, g); !s) return s;
                add_step(std::move(g));
                plan_.hardware_macs += uint64_t(kn) * cc * job.r * job.s * uint64_t(job.out_w) * on;
                ++operations;
            }
        }
        if (fuse_pool) pool_fused = true;
    }

    // One note for the layer, on its first group.
    std::ostringstream note;
    note << job.name << ": CONV " << job.what << "direct " << to_string(t_.precision) << " "
         << job.kernels << "x" << cg << "x" << job.r << "x" << job.s;
    if (groups > 1) note << " in " << groups << " groups (" << chunks << " convolutions)";
    if (compressed_any) note << ", compressed weights";
    if (operations > 1) {
        note << ", " << operations << " pieces (";
        if (kernels_split) note << "output channels";
        if (kernels_split && rows_split) note << " x ";
        if (rows_split) note << "input rows";
        if (!kernels_split && !rows_split) note << "groups";
        note << ")";
    }
    note << " + SDP " << job.prog->describe();
    if (pool_fused)
        note << " -> PDP " << pool_text(net_.nodes[size_t(job.pool)].pool) << " ("
             << net_.nodes[size_t(job.pool)].name << ")";
    const size_t first_step = plan_.steps.size() - operations;
    plan_.steps[first_step].group.note = note.str();
    for (size_t i = first_step + 1; i < plan_.steps.size(); ++i)
        plan_.steps[i].group.note =
            job.name + ": (piece " + std::to_string(i - first_step + 1) + ")";
    return Status();
}

// Kernels [k0, k0 + kn) of the group chunk whose kernels start at `chunk_k0` and whose input
// channels are `channels`, for a direct convolution: kn x channels x R x S, block diagonal
// across the chunk's groups, int8 divided by each kernel's scale; packed, and compressed when
// that saves a quarter, in the constant buffer.
Result<Lowering::ConvWeights> Lowering::direct_weights(const ConvJob& job, uint32_t chunk_k0,
                                                       uint32_t k0, uint32_t kn, uint32_t channels,
                                                       bool may_compress) {
    const HwConfig& cfg = *t_.cfg;
    const std::string who = layer(job.node);
    const uint32_t cg = job.channels, kg = job.kernels / job.groups;
    const uint32_t cc = channels;
    std::vector<float> host(uint64_t(kn) * cc * job.r * job.s, 0.0f);
    const size_t rs = size_t(job.r) * job.s;
    for (uint32_t k = 0; k < kn; ++k) {
        const uint32_t kabs = chunk_k0 + k0 + k;  // kernel in the layer
        const uint32_t grp_in_chunk = (k0 + k) / kg;
        const double ws = job.weight_scale[kabs];
        for (uint32_t c = 0; c < cg; ++c)
            for (size_t i = 0; i < rs; ++i)
                host[(size_t(k) * cc + grp_in_chunk * cg + c) * rs + i] = static_cast<float>(
                    job.weights[(size_t(kabs) * cg + c) * rs + i] / (t_.int8() ? ws : 1.0));
    }
    WeightFormat fmt;
    fmt.kind = WeightKind::Direct;
    fmt.precision = t_.precision;
    Result<WeightLayout> layout = make_weight_layout(cfg, fmt, {kn, cc, job.r, job.s});
    if (!layout) return layout.status().context(who);
    Result<std::vector<std::byte>> packed = pack_kernels(host, *layout);
    if (!packed) return packed.status().context(who);
    const std::vector<std::byte>& dense = *packed;

    ConvWeights out;
    out.mask = no_cube();
    out.group_sizes = no_cube();
    if (may_compress) {
        Result<CompressedWeightSizes> sizes = compressed_weight_sizes(cfg, layout->surface, dense);
        if (sizes && sizes->nonzero_elements > 0 &&
            sizes->weight_bytes + sizes->mask_bytes + sizes->group_size_bytes <
                dense.size() * 3 / 4) {
            std::vector<std::byte> w(sizes->weight_bytes), m(sizes->mask_bytes),
                gs(sizes->group_size_bytes);
            Result<CompressedWeightSizes> done =
                compress_weights(cfg, layout->surface, dense, w, m, gs);
            if (!done) return done.status().context(who);
            out.weights = const_cube(plan_.add_const(w), w.size(), job.s, job.r, cc);
            out.mask = const_cube(plan_.add_const(m), m.size(), job.s, job.r, cc);
            out.group_sizes = const_cube(plan_.add_const(gs), gs.size(), job.s, job.r, cc);
            out.compressed = true;
            return out;
        }
    }
    out.weights = const_cube(plan_.add_const(dense), dense.size(), job.s, job.r, cc);
    return out;
}

// The SDP behind one convolution piece (pc: its channels, rows and source), writing `rows`
// output rows, or into the fused pooling, added to g.
Status Lowering::conv_output(const ConvJob& job, uint32_t last, SdpProgram::Piece pc, uint32_t rows,
                             bool fuse_pool, Group& g) {
    HwOp sdp;
    if (fuse_pool) {
        const Node& pn = net_.nodes[size_t(job.pool)];
        pc.dst = pc.src;
        if (Status s = job.prog->emit(plan_, pc, job.out_scale, sdp); !s)
            return s.context(layer(last));
        g.ops.push_back(sdp);
        const Place pool_out =
            sub_place(home(uint32_t(job.pool)), pc.channel_begin, pc.channels, 0, pn.dims.h);
        g.ops.push_back(pdp_op(pn.pool, pc.src, cube_of(pool_out, cube_bytes(pool_out)),
                               pn.pool.pad_left, pn.pool.pad_right));
        return Status();
    }
    const Place dst = sub_place(job.out.valid() ? job.out : home(last), pc.channel_begin,
                                pc.channels, pc.row_begin, rows);
    pc.dst = cube_of(dst, cube_bytes(dst));
    if (Status s = job.prog->emit(plan_, pc, job.out_scale, sdp); !s) return s.context(layer(last));
    g.ops.push_back(sdp);
    return Status();
}

// A convolution reading an image: the CDMA converts each pixel component c to
// (pixel - mean[c]) * factor in the processing precision (int8: factor = scale / s_in, the
// input's int8 scale; fp16: factor 1 and the image scale folded into the weights, the
// convertor making integers), and the kernels are pre-extended to 1 x R x (S * channels).
// Input rows are split when the image does not fit the convolution buffer.
Status Lowering::conv_image(const ConvJob& job, uint32_t last, bool& pool_fused) {
    const HwConfig& cfg = *t_.cfg;
    const std::string who = layer(job.node);
    const InputFormat& fmt = *job.image;
    const PixelFormatInfo& info = pixel_format_info(fmt.pixel_format);
    const uint32_t cimg = info.channels;
    if (job.stride_x > 8 || job.stride_y > 8 || job.r > 32 || job.pad_l > 31 || job.pad_t > 31 ||
        job.pad_r > 63 || job.pad_b > 63)
        return error(who, ": kernel, stride or padding beyond the convolution core's limits");
    const bool int8 = t_.int8();
    // Kernels: scale folded in for fp16; int8 divided by each kernel's scale.
    std::vector<float> host = job.weights;
    const size_t per = host.size() / job.kernels;
    for (uint32_t k = 0; k < job.kernels; ++k)
        for (size_t i = 0; i < per; ++i)
            host[k * per + i] = static_cast<float>(int8 ? host[k * per + i] / job.weight_scale[k]
                                                        : host[k * per + i] * fmt.scale);
    WeightFormat wf;
    wf.kind = WeightKind::Image;
    wf.precision = t_.precision;
    wf.image_channels = cimg;
    wf.stride_x = job.stride_x;
    wf.stride_y = job.stride_y;
    Result<WeightLayout> layout =
        make_weight_layout(cfg, wf, {job.kernels, job.channels, job.r, job.s});
    if (!layout) return layout.status().context(who);
    Result<std::vector<std::byte>> packed = pack_kernels(host, *layout);
    if (!packed) return packed.status().context(who);
    const std::vector<std::byte>& surface = *packed;
    const uint64_t wofs = plan_.add_const(surface);

    // Pixel conversion.
    PixelConversion cv;
    cv.output = t_.precision;
    if (info.input_precision != Precision::Fp16) {
        cv.convertor = true;
        cv.mean = true;
        for (uint32_t c = 0; c < 4; ++c)
            cv.mean_values[c] =
                static_cast<int16_t>(std::clamp(std::round(fmt.mean[c]), -32768.0f, 32767.0f));
        if (int8) {
            const Fixed f = fixed_one(fmt.scale / job.in_scale, 32767, 63);
            cv.scale = static_cast<int16_t>(f.m);
            cv.truncate = static_cast<uint8_t>(f.shift);
        }
    }
    if (Status s = check_pixel_conversion(cfg, fmt.pixel_format, cv); !s) return s.context(who);

    // Image lines are stored whole, padded left and right, in entries of the buffer's width.
    const CbufGeometry cbuf = cbuf_geometry(cfg);
    const uint32_t bpe = t_.bpe(), width = cbuf.entry_bytes, depth = cbuf.entries_per_bank;
    const uint32_t W = job.in.dims.w, H = job.in.dims.h;
    const uint32_t eps = static_cast<uint32_t>(
        (uint64_t(W + job.pad_l + job.pad_r) * cimg * bpe + width - 1) / width);
    const uint64_t bpk = uint64_t(job.r) * job.s * cimg * bpe;
    const uint32_t wbanks = std::max<uint32_t>(
        1, static_cast<uint32_t>(((job.kernels * bpk + width - 1) / width + depth - 1) / depth));
    auto dbanks = [&](uint64_t rows) {
        return std::max<uint32_t>(1, static_cast<uint32_t>((eps * rows + depth - 1) / depth));
    };
    if (wbanks + dbanks(job.r) > cfg.cbuf_banks)
        return error(who, ": its kernels and one window of image rows do not fit ", cfg.name,
                     "'s convolution buffer");
    uint32_t rows_out = job.out_h;
    if (dbanks(H) + wbanks > cfg.cbuf_banks) {
        const uint64_t cap = uint64_t(cfg.cbuf_banks - wbanks) * depth / eps;
        rows_out = static_cast<uint32_t>(std::max<uint64_t>(1, (cap - job.r) / job.stride_y + 1));
    }
    const bool fuse_pool = job.pool >= 0 && rows_out == job.out_h;
    uint32_t pieces = 0;
    for (uint32_t o0 = 0; o0 < job.out_h; o0 += rows_out) {
        const uint32_t on = std::min(rows_out, job.out_h - o0);
        const RowWindow rows = row_window(o0, on, job.stride_y, job.pad_t, job.r, H);
        const ConvGeometry geo{
            .data_format = static_cast<uint8_t>(fmt.pixel_format),
            .entry_per_slice = eps,
            .data_banks = dbanks(rows.rows),
            .weight_banks = wbanks,
            .input = {W, rows.rows, cimg},
            .kernel = {1, job.r, job.s * cimg},
            .output = {job.out_w, on, job.kernels},
            .bytes_per_kernel = bpk,
            .stride = {job.stride_x, job.stride_y},
            .dilation = {1, 1},
            .pad = {job.pad_l, job.pad_r, rows.pad_top, rows.pad_bottom},
            .in_precision = info.input_precision == Precision::Fp16    ? NVDLA_DLA_PRECISION_FP16
                            : info.input_precision == Precision::Int16 ? NVDLA_DLA_PRECISION_INT16
                                                                       : NVDLA_DLA_PRECISION_INT8,
            .out_precision = int8 ? NVDLA_DLA_PRECISION_INT8 : NVDLA_DLA_PRECISION_FP16,
            .weights = const_cube(wofs, surface.size(), 1, job.r, job.s * cimg)};
        HwOp conv = conv_op(geo);
        nvdla_dla_conv_op_desc& op = conv.op.conv_op;
        op.mean_format = cv.mean ? NVDLA_DLA_MEAN_ENABLE : NVDLA_DLA_MEAN_DISABLE;
        op.mean_ry = cv.mean_values[0];
        op.mean_gu = cv.mean_values[1];
        op.mean_bv = cv.mean_values[2];
        op.mean_ax = cv.mean_values[3];
        op.in_cvt.enable = cv.convertor ? 1 : 0;
        op.in_cvt.scale = cv.scale;
        op.in_cvt.truncate = cv.truncate;
        op.in_cvt.offset = 0;
        Place src = job.in;
        src.offset += uint64_t(rows.first) * src.line;
        src.dims = {1, cimg, rows.rows, W};
        nvdla_dla_conv_surface_desc& sd = conv.surf.conv_surface;
        sd.src_data = cube_of(src, uint64_t(rows.rows - 1) * src.line +
                                       (uint64_t(W) * info.bytes_per_pixel[0] + 31) / 32 * 32);
        sd.src_data.surf_stride = 0;

        Group g;
        g.ops.push_back(conv);
        SdpProgram::Piece pc;
        pc.channels = job.kernels;
        pc.row_begin = o0;
        pc.src = hw_cube({1, job.kernels, on, job.out_w});
        if (Status s = conv_output(job, last, pc, on, fuse_pool, g); !s) return s;
        std::ostringstream note;
        if (pieces == 0) {
            note << job.name << ": CONV image " << info.name << " -> " << to_string(t_.precision)
                 << " " << job.kernels << "x" << job.channels << "x" << job.r << "x" << job.s;
            if (rows_out < job.out_h) note << ", in input-row pieces";
            note << " + SDP " << job.prog->describe();
            if (fuse_pool) note << " -> PDP " << pool_text(net_.nodes[size_t(job.pool)].pool);
        } else {
            note << job.name << ": (piece " << pieces + 1 << ")";
        }
        g.note = note.str();
        add_step(std::move(g));
        ++pieces;
    }
    pool_fused = fuse_pool;
    return Status();
}

// A concat whose inputs do not all start on an atom: each input goes through a 1x1
// convolution that puts its channels at their offset of the whole cube (zeros elsewhere), and
// each convolution's SDP adds the previous one's result (element-wise sum).
Status Lowering::lower_concat_sum(uint32_t id) {
    const Node& n = net_.nodes[id];
    // A channel shuffle reading only this concat: its permutation goes into the convolutions'
    // weights (channel q of the concat lands at dest[q]) and they write the shuffle's tensor.
    uint32_t target = id;
    std::vector<uint32_t> dest(n.dims.c);
    std::iota(dest.begin(), dest.end(), 0u);
    if (out_index_[id] < 0 && cons_[id].size() == 1 && !home_[id].valid()) {
        const Node& c = net_.nodes[cons_[id][0]];
        if (c.op == Op::Convolution && c.kind == "channel shuffle") {
            target = cons_[id][0];
            for (uint32_t k = 0; k < n.dims.c; ++k)
                for (uint32_t q = 0; q < n.dims.c; ++q)
                    if (c.weights[size_t(k) * n.dims.c + q] != 0) dest[q] = k;
        }
    }
    Place acc;
    uint32_t c0 = 0;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
        const uint32_t r = root(n.inputs[i]);
        const uint32_t ci = net_.nodes[r].dims.c;
        ConvJob job;
        job.node = id;
        job.name = n.name;
        job.in = home(r);
        job.kernels = n.dims.c;
        job.channels = ci;
        job.out_w = n.dims.w;
        job.out_h = n.dims.h;
        job.weights.assign(uint64_t(n.dims.c) * ci, 0.0f);
        for (uint32_t j = 0; j < ci; ++j) job.weights[uint64_t(dest[c0 + j]) * ci + j] = 1.0f;
        job.bias.assign(n.dims.c, 0.0f);
        job.what = "concat input " + std::to_string(i) + (target != id ? " shuffled" : "") + " as ";
        SdpSource src;
        src.flying = true;
        src.channels = n.dims.c;
        src.scale = scale(id);
        job.weight_scale = weight_scales(job.weights, job.kernels);
        if (t_.int8()) {
            src.units.resize(n.dims.c);
            for (uint32_t k = 0; k < n.dims.c; ++k) src.units[k] = scale(r) * job.weight_scale[k];
        }
        SdpProgram prog(t_, src);
        if (i > 0) {
            ChainElem e;
            e.op = Op::Eltwise;
            e.node = id;
            e.eltwise = EltwiseOp::Sum;
            e.operand = acc;
            e.operand_scale = scale(id);
            e.out_scale = scale(id);
            if (!prog.add(e)) return error(layer(id), ": internal: the SDP cannot add the parts");
        }
        job.prog = &prog;
        job.out_scale = scale(id);
        if (i + 1 < n.inputs.size()) {
            job.out = dense(0, n.dims);
            job.out.buffer =
                plan_.add_buffer(BufferKind::Pool, cube_bytes(job.out), n.name + " (part)");
        }
        bool fused = false;
        if (Status s = conv_job(job, fused, target); !s) return s;
        acc = job.out.valid() ? job.out : home(target);
        c0 += ci;
    }
    if (target != id) {
        done_[id] = true;  // only the shuffle reads it, and the shuffle is made
        done_[target] = true;
    }
    return computed(target);
}

// Winograd F(2x2, 3x3) on nv_full in fp16 (as the original compiler: not for int8, groups or
// dilation). The convolution core computes whole 4x4 output blocks from an input extended to
// the output + 4 (CDMA pads it), with the channels padded to a 32-byte atom, so the SDP writes
// an output rounded up to 4x4 blocks: the tensor keeps that cube's strides and its consumers
// read the real part. Used when the multiplies saved outweigh the padding, and the layer fits
// the convolution buffer as a whole.
Result<bool> Lowering::conv_winograd(const ConvJob& job, uint32_t last) {
    const HwConfig& cfg = *t_.cfg;
    if (!t_.options->winograd || !nvdla_hw_has(&cfg, NVDLA_FEATURE_WINOGRAD) || t_.int8() ||
        job.groups != 1 || job.r != 3 || job.s != 3 || job.stride_x != 1 || job.stride_y != 1 ||
        job.dil_x != 1 || job.dil_y != 1 || job.pool >= 0 || job.out.valid() ||
        job.prog->reads_elements() || home_[root(last)].valid())
        return false;
    const uint32_t bpe = t_.bpe(), lanes = t_.lanes();
    const uint32_t wo = (job.out_w + 3) / 4 * 4, ho = (job.out_h + 3) / 4 * 4;
    const uint32_t wi = wo + 4, hi = ho + 4;
    const uint32_t c_pad = (job.channels + lanes - 1) / lanes * lanes;
    if (wi < job.in.dims.w + job.pad_l || hi < job.in.dims.h + job.pad_t) return false;
    const uint32_t pad_r = wi - job.in.dims.w - job.pad_l, pad_b = hi - job.in.dims.h - job.pad_t;
    if (job.pad_l > 31 || job.pad_t > 31 || pad_r > 63 || pad_b > 63) return false;
    // Multiplies: 16 per 2x2 block and padded channel against 36 direct.
    const double wg = double(wo) * ho / 4 * 16 * c_pad,
                 dc = double(job.out_w) * job.out_h * 9 * job.channels;
    if (wg >= dc) return false;
    const uint32_t c_atoms = c_pad * bpe / 32;
    const uint32_t eps = wi / 4 * c_atoms;
    const uint64_t bpk = uint64_t(16) * c_pad * bpe;
    const CbufGeometry cbuf = cbuf_geometry(cfg);
    const uint32_t depth = cbuf.entries_per_bank, width = cbuf.entry_bytes;
    const uint32_t data_banks = static_cast<uint32_t>((uint64_t(eps) * hi + depth - 1) / depth);
    const uint32_t weight_banks =
        static_cast<uint32_t>(((job.kernels * bpk + width - 1) / width + depth - 1) / depth);
    if (data_banks + weight_banks > cfg.cbuf_banks || eps > 16384) return false;

    WeightFormat fmt;
    fmt.kind = WeightKind::Winograd;
    fmt.precision = t_.precision;
    Result<WeightLayout> layout = make_weight_layout(cfg, fmt, {job.kernels, job.channels, 3, 3});
    if (!layout) return false;
    Result<std::vector<std::byte>> packed = pack_kernels(job.weights, *layout);
    if (!packed) return packed.status().context(layer(job.node));
    const std::vector<std::byte>& surface = *packed;

    // The output keeps the strides of the 4x4-block cube the SDP writes.
    const Dims4 logical = net_.nodes[root(last)].dims;
    Place out = dense(0, {1, logical.c, ho, wo});
    out.buffer = plan_.add_buffer(BufferKind::Pool, cube_bytes(out), net_.nodes[root(last)].name);
    const Place whole = out;
    out.dims = logical;
    home_[root(last)] = out;

    const ConvGeometry geo{
        .mode = NVDLA_DLA_CONV_WINOGRAD,
        .entry_per_slice = eps,
        .data_banks = data_banks,
        .weight_banks = weight_banks,
        .input = {wi, hi, c_pad},
        .kernel = {4, 4, c_pad},
        .output = {wo, ho, job.kernels},
        .bytes_per_kernel = bpk,
        .stride = {1, 1},
        .dilation = {1, 1},
        .pad = {job.pad_l, pad_r, job.pad_t, pad_b},
        .pad_value = job.pad_value,
        .in_precision = NVDLA_DLA_PRECISION_FP16,
        .out_precision = NVDLA_DLA_PRECISION_FP16,
        .weights = const_cube(plan_.add_const(surface), surface.size(), 4, 4, c_pad)};
    HwOp conv = conv_op(geo);
    conv.surf.conv_surface.src_data = cube_of(job.in, cube_bytes(job.in));

    SdpProgram prog = *job.prog;
    prog.set_winograd(true);
    SdpProgram::Piece pc;
    pc.channels = job.kernels;
    pc.src = hw_cube({1, job.kernels, ho, wo});
    pc.dst = cube_of(whole, cube_bytes(whole));
    HwOp sdp;
    if (Status s = prog.emit(plan_, pc, job.out_scale, sdp); !s) return s.context(layer(last));
    Group g;
    g.ops.push_back(conv);
    g.ops.push_back(sdp);
    std::ostringstream note;
    note << job.name << ": CONV " << job.what << "Winograd fp16 " << job.kernels << "x"
         << job.channels << "x3x3 (" << wo << "x" << ho << " blocks) + SDP "
         << job.prog->describe();
    g.note = note.str();
    add_step(std::move(g));
    return true;
}

// A deconvolution of stride (sx, sy) is sx * sy stride-1 convolutions, one per kernel set
// (the kernel taps of one output phase, flipped), whose outputs RUBIK interleaves (contract);
// the padding crops the result. Stride 1 is a single convolution.
Status Lowering::lower_deconv(uint32_t id) {
    const Node& n = net_.nodes[id];
    const DeconvolutionDesc& d = n.deconv;
    const uint32_t in_id = root(n.inputs[0]);
    const Place in = home(in_id);
    const uint32_t sx = d.stride_w, sy = d.stride_h, sets = sx * sy;
    const bool rubik = nvdla_hw_has(t_.cfg, NVDLA_FEATURE_RUBIK);
    if (sx > 32 || sy > 32)
        return error(layer(id), ": stride ", sy, "x", sx, " is beyond RUBIK's 32");
    const uint32_t cin = in.dims.c, cout = d.out_channels, groups = d.groups;
    const uint32_t cg = cin / groups, kg = cout / groups;
    if (n.kind.empty())
        plan_.model_macs += uint64_t(cin) * in.dims.h * in.dims.w * kg * d.kernel_h * d.kernel_w;
    const uint32_t sp = (d.kernel_w + sx - 1) / sx, rp = (d.kernel_h + sy - 1) / sy;
    // Set outputs: the whole transposed convolution, and with output padding enough phases
    // to cover the output's last rows and columns.
    const uint32_t wq = std::max(in.dims.w + sp - 1, (n.dims.w + d.pad_left + sx - 1) / sx);
    const uint32_t hq = std::max(in.dims.h + rp - 1, (n.dims.h + d.pad_top + sy - 1) / sy);

    // Weights as out x in/groups x kh x kw (KCRS), batch norm / scale folded in.
    std::vector<float> w(uint64_t(cout) * cg * d.kernel_h * d.kernel_w);
    std::vector<float> bias = n.bias;
    if (bias.empty()) bias.assign(cout, 0.0f);
    const size_t khw = size_t(d.kernel_h) * d.kernel_w;
    for (uint32_t c = 0; c < cin; ++c)
        for (uint32_t kk = 0; kk < kg; ++kk) {
            const uint32_t k = (c / cg) * kg + kk;
            for (size_t i = 0; i < khw; ++i)
                w[(size_t(k) * cg + c % cg) * khw + i] = n.weights[(size_t(c) * kg + kk) * khw + i];
        }
    uint32_t cur = id;
    for (;;) {
        const int nx = next_in_chain(cur);
        if (nx < 0 || net_.nodes[size_t(nx)].op != Op::Affine) break;
        const Node& a = net_.nodes[size_t(nx)];
        for (uint32_t k = 0; k < cout; ++k) {
            for (size_t i = 0; i < size_t(cg) * khw; ++i) w[k * cg * khw + i] *= a.scale[k];
            bias[k] = bias[k] * a.scale[k] + a.shift[k];
        }
        done_[size_t(nx)] = true;
        cur = static_cast<uint32_t>(nx);
    }
    SdpSource src;
    src.flying = true;
    src.bias = bias;
    src.channels = cout;
    src.scale = scale(cur);
    const std::vector<double> ws = weight_scales(w, cout);
    if (t_.int8()) {
        src.units.resize(cout);
        for (uint32_t k = 0; k < cout; ++k) src.units[k] = scale(in_id) * ws[k];
    }
    SdpProgram prog(t_, src);
    // Element-wise operands are in the final layout, which the sets do not write: no fusing.
    const uint32_t last = grow_chain(prog, cur, false);
    done_[id] = true;

    ConvJob job;
    job.node = id;
    job.name = n.name;
    job.in = in;
    job.kernels = cout;
    job.groups = groups;
    job.channels = cg;
    job.r = rp;
    job.s = sp;
    job.pad_l = sp - 1;
    job.pad_r = wq - in.dims.w;
    job.pad_t = rp - 1;
    job.pad_b = hq - in.dims.h;
    job.out_w = wq;
    job.out_h = hq;
    job.bias = bias;
    job.prog = &prog;
    job.out_scale = scale(last);
    job.weight_scale = ws;

    if (sets == 1) {
        // One set: the flipped kernel over the input padded by kernel - 1 - pad.
        job.r = d.kernel_h;
        job.s = d.kernel_w;
        job.pad_l = d.kernel_w - 1 - d.pad_left;
        job.pad_r = d.kernel_w - 1 - d.pad_right;
        job.pad_t = d.kernel_h - 1 - d.pad_top;
        job.pad_b = d.kernel_h - 1 - d.pad_bottom;
        job.out_w = n.dims.w;
        job.out_h = n.dims.h;
        job.weights.assign(w.size(), 0.0f);
        for (size_t kc = 0; kc < size_t(cout) * cg; ++kc)
            for (uint32_t r = 0; r < d.kernel_h; ++r)
                for (uint32_t s = 0; s < d.kernel_w; ++s)
                    job.weights[kc * khw + r * d.kernel_w + s] =
                        w[kc * khw + (d.kernel_h - 1 - r) * d.kernel_w + (d.kernel_w - 1 - s)];
        job.what = "deconvolution as ";
        bool fused = false;
        if (Status st = conv_job(job, fused, last); !st) return st;
        return computed(last);
    }

    // The sets' outputs, one whole cube of cout channels after another, as RUBIK reads them.
    const uint32_t surfaces = (cout + t_.lanes() - 1) / t_.lanes();
    Place set_place = dense(0, {1, cout, hq, wq});
    const uint64_t set_bytes = uint64_t(surfaces) * set_place.surface;
    set_place.buffer = plan_.add_buffer(BufferKind::Pool, set_bytes * sets, n.name + " sets");
    Place whole = dense(0, {1, cout, hq * sy, wq * sx});
    whole.buffer = plan_.add_buffer(BufferKind::Pool, cube_bytes(whole), n.name + " contracted");
    for (uint32_t y = 0; y < sy; ++y)
        for (uint32_t x = 0; x < sx; ++x) {
            // Set (y, x): tap (r', s') is kernel element (y + (R'-1-r') sy, x + (S'-1-s') sx).
            job.weights.assign(size_t(cout) * cg * rp * sp, 0.0f);
            for (size_t kc = 0; kc < size_t(cout) * cg; ++kc)
                for (uint32_t r = 0; r < rp; ++r)
                    for (uint32_t s = 0; s < sp; ++s) {
                        const uint32_t kr = y + (rp - 1 - r) * sy, ks = x + (sp - 1 - s) * sx;
                        if (kr < d.kernel_h && ks < d.kernel_w)
                            job.weights[(kc * rp + r) * sp + s] =
                                w[kc * khw + kr * d.kernel_w + ks];
                    }
            job.out = set_place;
            job.out.offset = uint64_t(y * sx + x) * set_bytes;
            job.what = "deconvolution set " + std::to_string(y) + "," + std::to_string(x) + " as ";
            bool fused = false;
            if (Status st = conv_job(job, fused, last); !st) return st;
        }

    if (!rubik) {
        // Without RUBIK the SDP interleaves the sets (lower_ops.cpp).
        std::vector<Place> phases;
        for (uint32_t y = 0; y < sy; ++y)
            for (uint32_t x = 0; x < sx; ++x) {
                Place p = set_place;
                p.offset = uint64_t(y * sx + x) * set_bytes;
                phases.push_back(p);
            }
        const size_t first = plan_.steps.size();
        Result<uint32_t> copies = interleave(last, phases, sy, sx, whole);
        if (!copies) return copies.status();
        plan_.steps[first].group.note =
            n.name + ": " + std::to_string(*copies) + " SDP copies interleave the " +
            std::to_string(sets) + " sets (" + std::to_string(sy) + "x" + std::to_string(sx) + ")";
    } else {
        HwOp rbk;
        rbk.type = NVDLA_DLA_OP_RUBIK;
        std::memset(&rbk.op, 0, sizeof rbk.op);
        std::memset(&rbk.surf, 0, sizeof rbk.surf);
        rbk.op.rubik_op.mode = NVDLA_DLA_RUBIK_CONTRACT;
        rbk.op.rubik_op.precision = t_.int8() ? NVDLA_DLA_PRECISION_INT8 : NVDLA_DLA_PRECISION_FP16;
        rbk.op.rubik_op.stride_x = static_cast<uint8_t>(sx);
        rbk.op.rubik_op.stride_y = static_cast<uint8_t>(sy);
        Place contract_src = set_place;
        contract_src.offset = 0;
        contract_src.dims.c = cout * sets;
        rbk.surf.rubik_surface.src_data = cube_of(contract_src, set_bytes * sets);
        rbk.surf.rubik_surface.dst_data = cube_of(whole, cube_bytes(whole));
        Group g;
        g.ops.push_back(rbk);
        g.note = n.name + ": RUBIK contract of " + std::to_string(sets) + " sets (" +
                 std::to_string(sy) + "x" + std::to_string(sx) + ")";
        add_step(std::move(g));
    }

    // The padding crops the contracted cube.
    Place crop = whole;
    crop.offset += uint64_t(d.pad_top) * whole.line + uint64_t(d.pad_left) * t_.cfg->atom_bytes;
    crop.dims = net_.nodes[last].dims;
    if (home_[last].valid()) {
        done_[last] = true;
        if (Status st = copy(last, crop, home_[last]); !st) return st;
        return computed(last);
    }
    home_[last] = crop;
    return computed(last);
}

}  // namespace nvdla::builder::detail
