// nvdla_surface: size, pack and unpack NVDLA in-memory surfaces from the command line.
//
// Exit codes: 0 success, 1 the input was rejected (message on stderr), 2 usage error.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "demo.hpp"
#include "nvdla/formats/auxiliary.hpp"
#include "nvdla/formats/dmp.hpp"
#include "nvdla/formats/feature.hpp"
#include "nvdla/formats/pixel.hpp"
#include "nvdla/formats/weights.hpp"
#include "nvdla/hw_config.hpp"

namespace {

using namespace nvdla;

// Everything a surface command needs, as parsed from the command line.
struct SurfaceArgs {
    std::string format = "feature";
    std::string config = "nv_full";
    std::string precision = "int8";
    std::string component_precision;  // aux formats; defaults to the precision
    std::string dims;                 // NxCxHxW or CxHxW
    uint64_t line_stride = 0, surface_stride = 0, batch_stride = 0;
    std::string host_type = "float32";
    std::string layout = "nchw";
    float scale = 1.0f;
    bool saturate_fp16 = false;
    std::string use = "alu";
    bool transposed = false;
    std::string pixel_format = "T_R8";
    uint32_t x_offset = 0;
    std::string weight_kind = "direct";
    uint32_t post_extension = 1, stride = 1, image_channels = 0;
    bool json = false;
};

// A surface resolved from SurfaceArgs: its size and how to pack and unpack it.
struct Surface {
    uint64_t size_bytes = 0;
    nlohmann::json description;
    std::function<Status(const ConstTensorView&, ByteSpan, const ConvertOptions&)> pack;
    std::function<Status(ConstByteSpan, const TensorView&, const ConvertOptions&)> unpack;
};

Result<Dims4> parse_dims(const std::string& text) {
    std::vector<uint32_t> v;
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t x = text.find('x', pos);
        const std::string part =
            text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
        if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos ||
            part.size() > 9)
            return error("--dims '", text, "' is not NxCxHxW or CxHxW (positive integers)");
        v.push_back(static_cast<uint32_t>(std::stoul(part)));
        if (x == std::string::npos) break;
        pos = x + 1;
    }
    if (v.size() == 3) v.insert(v.begin(), 1);
    if (v.size() != 4) return error("--dims '", text, "' is not NxCxHxW or CxHxW");
    return Dims4{v[0], v[1], v[2], v[3]};
}

Result<Precision> parse_precision(const std::string& s) {
    if (s == "int8") return Precision::Int8;
    if (s == "int16") return Precision::Int16;
    if (s == "fp16") return Precision::Fp16;
    return error("precision '", s, "' is not int8, int16 or fp16");
}

Result<HostType> parse_host_type(const std::string& s) {
    for (HostType t : {HostType::Float32, HostType::Float16, HostType::Int8, HostType::Uint8,
                       HostType::Int16, HostType::Uint16})
        if (s == to_string(t)) return t;
    return error("host type '", s, "' is not float32, float16, int8, uint8, int16 or uint16");
}

nlohmann::json describe_cube(const FeatureCube& c) {
    return {{"precision", to_string(c.precision)},
            {"atom_bytes", c.atom_bytes},
            {"dims", {c.batches, c.channels, c.height, c.width}},
            {"channels_per_surface", c.channels_per_surface()},
            {"surfaces", c.surfaces()},
            {"line_stride", c.line_stride},
            {"surface_stride", c.surface_stride},
            {"batch_stride", c.batch_stride},
            {"size_bytes", c.size_bytes()}};
}

Result<Surface> resolve(const SurfaceArgs& a) {
    auto cfg = find_hw_config(a.config);
    if (!cfg.ok()) return cfg.status();
    auto dims = parse_dims(a.dims);
    if (!dims.ok()) return dims.status();
    auto precision = parse_precision(a.precision);
    if (!precision.ok()) return precision.status();
    const FeatureStrides strides{a.line_stride, a.surface_stride, a.batch_stride};
    Surface s;

    if (a.format == "feature") {
        auto cube = make_feature_cube(**cfg, *precision, *dims, strides);
        if (!cube.ok()) return cube.status();
        s.size_bytes = cube->size_bytes();
        s.description = describe_cube(*cube);
        s.pack = [c = *cube](auto& in, auto out, auto& opt) {
            return pack_feature(in, c, out, opt);
        };
        s.unpack = [c = *cube](auto in, auto& out, auto& opt) {
            return unpack_feature(in, c, out, opt);
        };
        return s;
    }
    if (a.format == "dmp") {
        auto l = make_dmp_layout(
            *dims, a.precision == "fp16" ? DmpElement::Fp16 : DmpElement::Float32, a.transposed);
        if (!l.ok()) return l.status();
        s.size_bytes = l->size_bytes();
        s.description = {{"element", a.precision == "fp16" ? "fp16" : "float32"},
                         {"transposed", l->transposed},
                         {"chunks", l->chunks()},
                         {"size_bytes", l->size_bytes()}};
        s.pack = [l = *l](auto& in, auto out, auto& opt) { return pack_dmp(in, l, out, opt); };
        s.unpack = [l = *l](auto in, auto& out, auto& opt) { return unpack_dmp(in, l, out, opt); };
        return s;
    }
    const std::pair<const char*, AuxKind> aux_kinds[] = {{"bias", AuxKind::Bias},
                                                         {"prelu", AuxKind::PRelu},
                                                         {"batchnorm", AuxKind::BatchNorm},
                                                         {"elementwise", AuxKind::ElementWise}};
    for (auto [name, kind] : aux_kinds) {
        if (a.format != name) continue;
        auto component =
            parse_precision(a.component_precision.empty() ? a.precision : a.component_precision);
        if (!component.ok()) return component.status();
        const AuxUse use =
            a.use == "mul" ? AuxUse::Mul : (a.use == "both" ? AuxUse::Both : AuxUse::Alu);
        if (a.use != "alu" && a.use != "mul" && a.use != "both")
            return error("--use '", a.use, "' is not alu, mul or both");
        const AuxMode mode = dims->h == 1 && dims->w == 1 && kind != AuxKind::ElementWise
                                 ? AuxMode::PerChannel
                                 : AuxMode::PerElement;
        auto l = make_aux_layout(**cfg, kind, mode, use, *precision, *component, *dims, strides);
        if (!l.ok()) return l.status();
        s.size_bytes = l->size_bytes();
        s.description = {{"kind", to_string(kind)},
                         {"mode", mode == AuxMode::PerChannel ? "per-channel" : "per-element"},
                         {"components", l->components()},
                         {"bytes_per_component", l->bytes_per_component()},
                         {"elements_per_atom", l->elements_per_atom},
                         {"bytes_per_atom", l->bytes_per_atom()},
                         {"line_stride", l->line_stride},
                         {"surface_stride", l->surface_stride},
                         {"size_bytes", l->size_bytes()}};
        if (use == AuxUse::Both)
            return error("--format ", name, " with --use both needs two operand files; ",
                         "use the library API (pack_aux) for that");
        s.pack = [l = *l](auto& in, auto out, auto& opt) {
            return pack_aux(
                l, l.use == AuxUse::Mul ? AuxOperands{nullptr, &in} : AuxOperands{&in, nullptr},
                out, opt);
        };
        s.unpack = [l = *l](auto in, auto& out, auto& opt) {
            return unpack_aux(
                l, in, l.use == AuxUse::Mul ? AuxOutputs{nullptr, &out} : AuxOutputs{&out, nullptr},
                opt);
        };
        return s;
    }
    if (a.format == "pixel") {
        auto info = find_pixel_format(a.pixel_format);
        if (!info.ok()) return info.status();
        if (dims->n != 1 || dims->c != (*info)->channels)
            return error("--dims: a ", (*info)->name, " surface is 1x", int((*info)->channels),
                         "xHxW, not ", a.dims);
        auto dense = dense_pixel_surface(**cfg, (*info)->format, dims->w, dims->h, a.x_offset);
        if (!dense.ok()) return dense.status();
        PixelSurface surface = *dense;
        if (a.line_stride) surface.planes[0].line_stride = a.line_stride;
        auto bytes = pixel_surface_bytes(**cfg, surface);
        if (!bytes.ok()) return bytes.status();
        s.size_bytes = *bytes;
        s.description = {{"pixel_format", (*info)->name},
                         {"planes", (*info)->planes},
                         {"x_offset", surface.x_offset},
                         {"line_stride", surface.planes[0].line_stride},
                         {"uv_offset", surface.planes[1].offset},
                         {"uv_line_stride", surface.planes[1].line_stride},
                         {"size_bytes", *bytes}};
        const HwConfig* hw = *cfg;
        s.pack = [hw, ps = surface](auto& in, auto out, auto&) {
            return pack_pixels(*hw, in, ps, out);
        };
        s.unpack = [hw, ps = surface](auto in, auto& out, auto&) {
            return unpack_pixels(*hw, in, ps, out);
        };
        return s;
    }
    if (a.format == "weights") {
        const std::pair<const char*, WeightKind> kinds[] = {{"direct", WeightKind::Direct},
                                                            {"image", WeightKind::Image},
                                                            {"winograd", WeightKind::Winograd},
                                                            {"deconv", WeightKind::Deconvolution}};
        WeightFormat wf;
        bool known = false;
        for (auto [name, kind] : kinds)
            if (a.weight_kind == name) wf.kind = kind, known = true;
        if (!known)
            return error("--kind '", a.weight_kind, "' is not direct, image, winograd or deconv");
        wf.precision = *precision;
        wf.image_channels = a.image_channels;
        wf.post_extension = a.post_extension;
        wf.stride_x = wf.stride_y = a.stride;
        auto l = make_weight_layout(**cfg, wf, *dims);
        if (!l.ok()) return l.status();
        s.size_bytes = l->size_bytes();
        s.description = {
            {"kind", to_string(wf.kind)},
            {"precision", to_string(wf.precision)},
            {"kernels_per_group", l->surface.kernels_per_group},
            {"groups", l->surface.groups()},
            {"hardware_kernel", {l->kernel_width, l->kernel_height, l->kernel_channels}},
            {"bytes_per_kernel", l->surface.bytes_per_kernel},
            {"sets", l->sets},
            {"size_bytes", l->size_bytes()}};
        s.pack = [l = *l](auto& in, auto out, auto& opt) { return pack_weights(in, l, out, opt); };
        s.unpack = [l = *l](auto in, auto& out, auto& opt) {
            return unpack_weights(in, l, out, opt);
        };
        return s;
    }
    return error("format '", a.format,
                 "' is not feature, pixel, weights, bias, prelu, batchnorm, elementwise or dmp");
}

Result<std::vector<uint8_t>> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return error(path, ": cannot open");
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
}

Status write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return error(path, ": cannot create");
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) return error(path, ": write failed");
    return {};
}

int fail(const Status& s) {
    std::fprintf(stderr, "nvdla_surface: %s\n", s.message().c_str());
    return 1;
}

void add_surface_options(CLI::App* cmd, SurfaceArgs& a, bool with_host) {
    cmd->add_option("--format", a.format,
                    "feature, pixel, weights, bias, prelu, batchnorm, elementwise or dmp")
        ->capture_default_str();
    cmd->add_option("--config", a.config, "hardware configuration")->capture_default_str();
    cmd->add_option("--precision", a.precision, "int8, int16 or fp16 (dmp: fp16 or float32)")
        ->capture_default_str();
    cmd->add_option("--dims", a.dims, "NxCxHxW or CxHxW (weights: KxCxRxS)")->required();
    cmd->add_option("--line-stride", a.line_stride, "bytes, 0 = packed");
    cmd->add_option("--surface-stride", a.surface_stride, "bytes, 0 = packed");
    cmd->add_option("--batch-stride", a.batch_stride, "bytes, 0 = packed");
    cmd->add_option("--component-precision", a.component_precision,
                    "aux data: int8, int16 or fp16");
    cmd->add_option("--use", a.use, "aux data operand: alu or mul")->capture_default_str();
    cmd->add_flag("--transposed", a.transposed, "dmp: transpose_weight layout (DHWC)");
    cmd->add_option("--pixel-format", a.pixel_format, "pixel: format name, e.g. T_A8B8G8R8")
        ->capture_default_str();
    cmd->add_option("--x-offset", a.x_offset, "pixel: PIXEL_X_OFFSET");
    cmd->add_option("--kind", a.weight_kind, "weights: direct, image, winograd or deconv")
        ->capture_default_str();
    cmd->add_option("--post-extension", a.post_extension, "image weights: 1, 2 or 4");
    cmd->add_option("--stride", a.stride, "weights: convolution or deconvolution stride");
    cmd->add_option("--image-channels", a.image_channels,
                    "image weights: the pixel format's channels");
    if (!with_host) return;
    cmd->add_option("--host-type", a.host_type, "float32, float16, int8, uint8, int16 or uint16")
        ->capture_default_str();
    cmd->add_option("--layout", a.layout, "nchw or nhwc")->capture_default_str();
    cmd->add_option("--scale", a.scale, "quantisation scale: surface = host * scale");
    cmd->add_flag("--saturate-fp16", a.saturate_fp16, "clamp fp16 to +-65504 instead of infinity");
}

int run_size(const SurfaceArgs& a) {
    auto s = resolve(a);
    if (!s.ok()) return fail(s.status());
    if (a.json) {
        std::cout << s->description.dump(2) << "\n";
        return 0;
    }
    for (auto& [k, v] : s->description.items()) std::cout << k << ": " << v.dump() << "\n";
    return 0;
}

int run_convert(const SurfaceArgs& a, bool pack, const std::string& in_path,
                const std::string& out_path) {
    auto s = resolve(a);
    if (!s.ok()) return fail(s.status());
    auto type = parse_host_type(a.host_type);
    if (!type.ok()) return fail(type.status());
    if (a.layout != "nchw" && a.layout != "nhwc")
        return fail(error("--layout '", a.layout, "' is not nchw or nhwc"));
    const HostLayout layout = a.layout == "nhwc" ? HostLayout::NHWC : HostLayout::NCHW;
    auto dims = parse_dims(a.dims);
    auto input = read_file(in_path);
    if (!input.ok()) return fail(input.status());
    ConversionStats stats;
    ConvertOptions opt;
    opt.quant_scale = a.scale;
    opt.saturate_fp16 = a.saturate_fp16;
    opt.stats = &stats;
    std::vector<uint8_t> output;
    Status st;
    if (pack) {
        const ConstTensorView src{input->data(), input->size(), *type, layout, *dims};
        if (input->size() != src.required_bytes())
            return fail(error(in_path, ": has ", input->size(), " bytes, a ", a.dims, " ",
                              a.host_type, " tensor has ", src.required_bytes()));
        output.assign(s->size_bytes, 0);
        st = s->pack(src, std::as_writable_bytes(std::span(output)), opt);
    } else {
        if (input->size() < s->size_bytes)
            return fail(error(in_path, ": has ", input->size(), " bytes, the surface needs ",
                              s->size_bytes));
        output.assign(dims->elements() * bytes_per_element(*type), 0);
        const TensorView dst{output.data(), output.size(), *type, layout, *dims};
        st = s->unpack(std::as_bytes(std::span(*input)), dst, opt);
    }
    if (!st.ok()) return fail(st);
    if (Status w = write_file(out_path, output); !w.ok()) return fail(w);
    if (stats.saturated || stats.nan)
        std::fprintf(stderr, "nvdla_surface: note: %llu values saturated, %llu NaN written as 0\n",
                     static_cast<unsigned long long>(stats.saturated),
                     static_cast<unsigned long long>(stats.nan));
    return 0;
}

int run_configs(bool json) {
    nlohmann::json list = nlohmann::json::array();
    for (const HwConfig& c : hw_configs()) {
        std::string precisions;
        for (Precision p : {Precision::Int8, Precision::Int16, Precision::Fp16})
            if (supports(c, p))
                precisions += (precisions.empty() ? "" : ",") + std::string(to_string(p));
        list.push_back({{"name", c.name},
                        {"register_map", c.reg_map == NVDLA_REG_MAP_FULL ? "full" : "small"},
                        {"atom_bytes", c.atom_bytes},
                        {"mac_atomic_c", c.mac_atomic_c},
                        {"mac_atomic_k", c.mac_atomic_k},
                        {"cbuf_kib", nvdla_hw_cbuf_bytes(&c) / 1024},
                        {"precisions", precisions},
                        {"winograd", nvdla_hw_has(&c, NVDLA_FEATURE_WINOGRAD)},
                        {"weight_compression", nvdla_hw_has(&c, NVDLA_FEATURE_WEIGHT_COMPRESSION)},
                        {"bdma", nvdla_hw_has(&c, NVDLA_FEATURE_BDMA)},
                        {"rubik", nvdla_hw_has(&c, NVDLA_FEATURE_RUBIK)},
                        {"sdp_lut", nvdla_hw_has(&c, NVDLA_FEATURE_SDP_LUT)},
                        {"secondary_memory", nvdla_hw_has(&c, NVDLA_FEATURE_SECONDARY_MEMIF)}});
    }
    if (json) {
        std::cout << list.dump(2) << "\n";
        return 0;
    }
    tools::print_config_table(std::cout);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"nvdla_surface: size, pack and unpack NVDLA in-memory surfaces"};
    app.require_subcommand(1);
    SurfaceArgs a;
    std::string in_path, out_path, shared_dir = NVDLA_SHARED_DIR_DEFAULT;

    auto* configs = app.add_subcommand("configs", "list the hardware configurations");
    configs->add_flag("--json", a.json, "machine-readable output");
    auto* size = app.add_subcommand("size", "print a surface's layout and size");
    add_surface_options(size, a, false);
    size->add_flag("--json", a.json, "machine-readable output");
    auto* pack = app.add_subcommand("pack", "convert a raw host tensor file into a surface file");
    add_surface_options(pack, a, true);
    pack->add_option("input", in_path, "raw host tensor (dims x host type, dense)")->required();
    pack->add_option("output", out_path, "surface file to write")->required();
    auto* unpack =
        app.add_subcommand("unpack", "convert a surface file into a raw host tensor file");
    add_surface_options(unpack, a, true);
    unpack->add_option("input", in_path, "surface file")->required();
    unpack->add_option("output", out_path, "raw host tensor to write")->required();
    auto* demo = app.add_subcommand("demo", "walk through the formats with a digit image");
    demo->add_option("--shared", shared_dir, "directory with vectors/images (../shared)");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : 2;
    }
    if (configs->parsed()) return run_configs(a.json);
    if (size->parsed()) return run_size(a);
    if (pack->parsed()) return run_convert(a, true, in_path, out_path);
    if (unpack->parsed()) return run_convert(a, false, in_path, out_path);
    return tools::run_demo(shared_dir);
}
