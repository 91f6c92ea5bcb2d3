#include "nvdla/formats/feature.hpp"

#include <cstring>

#include "formats/element.hpp"
#include "formats/feature_simd.hpp"
#include "nvdla/formats/alignment.hpp"

namespace nvdla {
namespace {

std::string supported_precisions(const HwConfig& cfg) {
    std::string s;
    for (Precision p : {Precision::Int8, Precision::Int16, Precision::Fp16}) {
        if (!supports(cfg, p)) continue;
        s += s.empty() ? "" : ", ";
        s += to_string(p);
    }
    return s;
}

Status check_extent(const char* name, uint32_t v) {
    if (v == 0 || v > kMaxCubeExtent)
        return error("feature cube: ", name, " ", v, " is out of range 1..", kMaxCubeExtent);
    return {};
}

// Resolves a stride: 0 means `packed`; otherwise it must cover `minimum` bytes.
Result<uint64_t> resolve_stride(const char* name, uint64_t given, uint64_t packed, uint64_t minimum,
                                const char* what) {
    if (given == 0) return packed;
    if (given < minimum)
        return error("feature cube: ", name, " ", given, " is smaller than ", what, " (", minimum,
                     " bytes)");
    return given;
}

Status check_dims_match(const Dims4& tensor, const FeatureCube& cube, const char* what) {
    if (tensor == cube.dims()) return {};
    return error(what, ": host tensor is ", tensor.n, "x", tensor.c, "x", tensor.h, "x", tensor.w,
                 " but the cube is ", cube.batches, "x", cube.channels, "x", cube.height, "x",
                 cube.width, " (NxCxHxW)");
}

Status check_cube(const FeatureCube& cube, size_t buffer_bytes, const char* what) {
    if (cube.atom_bytes == 0 || cube.atom_bytes % cube.bytes_per_element() != 0)
        return error(what, ": atom of ", cube.atom_bytes, " bytes is not a whole number of ",
                     to_string(cube.precision), " elements");
    if (!cube.batches || !cube.channels || !cube.height || !cube.width)
        return error(what, ": the cube has a zero extent");
    if (buffer_bytes < cube.size_bytes())
        return error(what, ": surface buffer of ", buffer_bytes,
                     " bytes is smaller than the cube (", cube.size_bytes(), " bytes)");
    return {};
}

// Element-by-element conversion for every host type and precision; walks the surface in
// memory order so writes are sequential.
void pack_generic(const ConstTensorView& src, const FeatureCube& cube, uint8_t* dst,
                  const ConvertOptions& opt) {
    detail::HostReader reader(src, cube.precision, opt);
    const uint32_t k = cube.channels_per_surface(), bpe = cube.bytes_per_element();
    for (uint32_t n = 0; n < cube.batches; ++n)
        for (uint32_t s = 0; s < cube.surfaces(); ++s) {
            const uint32_t c0 = s * k, valid = std::min(k, cube.channels - c0);
            for (uint32_t h = 0; h < cube.height; ++h) {
                uint8_t* line = dst + cube.offset(n, c0, h, 0);
                for (uint32_t w = 0; w < cube.width; ++w) {
                    uint8_t* atom = line + uint64_t(w) * cube.atom_bytes;
                    for (uint32_t i = 0; i < valid; ++i)
                        reader.read(n, c0 + i, h, w, atom + i * bpe);
                    std::memset(atom + valid * bpe, 0, (k - valid) * bpe);
                }
            }
        }
}

void unpack_generic(const uint8_t* src, const FeatureCube& cube, const TensorView& dst,
                    const ConvertOptions& opt) {
    detail::HostWriter writer(dst, cube.precision, opt);
    const uint32_t k = cube.channels_per_surface(), bpe = cube.bytes_per_element();
    for (uint32_t n = 0; n < cube.batches; ++n)
        for (uint32_t s = 0; s < cube.surfaces(); ++s) {
            const uint32_t c0 = s * k, valid = std::min(k, cube.channels - c0);
            for (uint32_t h = 0; h < cube.height; ++h) {
                const uint8_t* line = src + cube.offset(n, c0, h, 0);
                for (uint32_t w = 0; w < cube.width; ++w) {
                    const uint8_t* atom = line + uint64_t(w) * cube.atom_bytes;
                    for (uint32_t i = 0; i < valid; ++i)
                        writer.write(n, c0 + i, h, w, atom + i * bpe);
                }
            }
        }
}

}  // namespace

Result<FeatureCube> make_feature_cube(const HwConfig& cfg, Precision p, Dims4 dims,
                                      FeatureStrides strides) {
    if (!supports(cfg, p))
        return error("feature cube: ", cfg.name, " does not support ", to_string(p),
                     " (it has: ", supported_precisions(cfg), ")");
    for (Status s : {check_extent("width", dims.w), check_extent("height", dims.h),
                     check_extent("channel count", dims.c)})
        if (!s.ok()) return s;
    if (dims.n == 0) return error("feature cube: batch count is 0");
    if (dims.n > 1 && dims.n > cfg.max_batch)
        return error("feature cube: ", dims.n, " batches exceed ", cfg.name, "'s maximum of ",
                     cfg.max_batch);

    FeatureCube cube;
    cube.precision = p;
    cube.atom_bytes = cfg.atom_bytes;
    cube.batches = dims.n;
    cube.channels = dims.c;
    cube.height = dims.h;
    cube.width = dims.w;

    const uint64_t atom = cfg.atom_bytes;
    const uint64_t line_bytes = dims.w * atom;
    auto line =
        resolve_stride("line stride", strides.line, line_bytes, line_bytes, "one line of atoms");
    if (!line.ok()) return line.status();
    cube.line_stride = *line;
    const uint64_t surface_bytes = (dims.h - 1) * cube.line_stride + line_bytes;
    auto surface = resolve_stride("surface stride", strides.surface, dims.h * cube.line_stride,
                                  surface_bytes, "one surface");
    if (!surface.ok()) return surface.status();
    cube.surface_stride = *surface;
    const uint64_t cube_bytes = (cube.surfaces() - 1) * cube.surface_stride + surface_bytes;
    auto batch = resolve_stride("batch stride", strides.batch,
                                cube.surfaces() * cube.surface_stride, cube_bytes, "one cube");
    if (!batch.ok()) return batch.status();
    cube.batch_stride = *batch;

    SurfacePlacement placement;
    placement.line_stride = cube.line_stride;
    placement.surface_stride = cube.surface_stride;
    placement.planar_stride = cube.batch_stride;
    if (Status s = check_alignment(cfg, SurfaceKind::FeatureCube, placement); !s.ok()) return s;

    // Strides are caller-chosen 64-bit values: make sure the extent fits the address space.
    const unsigned bits = cfg.address_bits < 64 ? cfg.address_bits : 63;
    const long double extent = static_cast<long double>(cube.batches - 1) * cube.batch_stride +
                               static_cast<long double>(cube.surfaces() - 1) * cube.surface_stride +
                               static_cast<long double>(cube.height - 1) * cube.line_stride +
                               static_cast<long double>(line_bytes);
    if (extent > static_cast<long double>(uint64_t(1) << bits))
        return error("feature cube: spans ", static_cast<double>(extent), " bytes, more than ",
                     cfg.name, "'s ", cfg.address_bits, "-bit address space");
    return cube;
}

Result<FeatureCube> as_surface_packed_line(const FeatureCube& cube) {
    if (cube.width != 1 || cube.height != 1)
        return error("feature cube: only a 1x1xC cube can be read as a line (this one is ",
                     cube.width, "x", cube.height, "x", cube.channels, ")");
    if (cube.surface_stride != cube.atom_bytes)
        return error("feature cube: surface stride ", cube.surface_stride,
                     " is not one atom, so the 1x1xC cube is not surface-packed");
    FeatureCube line = cube;
    line.width = cube.surfaces();
    line.channels = cube.channels_per_surface();
    line.line_stride = uint64_t(line.width) * cube.atom_bytes;
    line.surface_stride = line.line_stride;
    return line;
}

Status pack_feature(const ConstTensorView& src, const FeatureCube& cube, ByteSpan dst,
                    const ConvertOptions& opt) {
    if (Status s = detail::check_host_tensor(src, "pack feature cube"); !s.ok()) return s;
    if (Status s = check_dims_match(src.dims, cube, "pack feature cube"); !s.ok()) return s;
    if (Status s = check_cube(cube, dst.size(), "pack feature cube"); !s.ok()) return s;
    auto* out = reinterpret_cast<uint8_t*>(dst.data());
    if (detail::pack_feature_vector(src, cube, out, opt)) return {};
    pack_generic(src, cube, out, opt);
    return {};
}

Status unpack_feature(ConstByteSpan src, const FeatureCube& cube, const TensorView& dst,
                      const ConvertOptions& opt) {
    if (Status s = detail::check_host_tensor(dst, "unpack feature cube"); !s.ok()) return s;
    if (Status s = check_dims_match(dst.dims, cube, "unpack feature cube"); !s.ok()) return s;
    if (Status s = check_cube(cube, src.size(), "unpack feature cube"); !s.ok()) return s;
    const auto* in = reinterpret_cast<const uint8_t*>(src.data());
    if (detail::unpack_feature_vector(in, cube, dst, opt)) return {};
    unpack_generic(in, cube, dst, opt);
    return {};
}

}  // namespace nvdla
