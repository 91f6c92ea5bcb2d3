// Sparse weight compression: dense surface <-> compressed weights + WMB + WGS.
//
// How the hardware reads them (nvdlav1 cmod): CDMA fetches WGS as one uint32 per kernel group
// and steps its group boundary by each entry (a per-group byte count, not a running total);
// CSC walks the WMB bits and the compressed bytes as two continuous streams, carrying its
// position from one group into the next, so neither stream is aligned per group.
#include <cstring>

#include "nvdla/formats/weights.hpp"

namespace nvdla {
namespace {

constexpr uint64_t align_up(uint64_t v, uint64_t a) {
    return (v + a - 1) / a * a;
}

bool element_is_zero(const std::byte* p, uint32_t bpe) {
    for (uint32_t i = 0; i < bpe; ++i)
        if (p[i] != std::byte{0}) return false;
    return true;
}

bool mask_bit(ConstByteSpan mask, uint64_t i) {
    return (std::to_integer<uint32_t>(mask[i / 8]) >> (i % 8)) & 1u;
}

uint32_t load_u32(const std::byte* p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | std::to_integer<uint32_t>(p[i]);
    return v;
}

void store_u32(std::byte* p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = std::byte(static_cast<uint8_t>(v >> (8 * i)));
}

uint64_t mask_bytes_for(const WeightSurfaceShape& shape) {
    return align_up((shape.elements() + 7) / 8, kWeightSurfaceAlignment);
}

uint64_t group_size_bytes_for(const WeightSurfaceShape& shape) {
    return align_up(uint64_t(shape.groups()) * 4, kWeightSurfaceAlignment);
}

Status check_compression(const HwConfig& cfg, const WeightSurfaceShape& shape, const char* action) {
    if (!nvdla_hw_has(&cfg, NVDLA_FEATURE_WEIGHT_COMPRESSION))
        return error(action, ": ", cfg.name, " has no weight compression");
    if (Status s = check_weight_surface_shape(cfg, shape); !s)
        return error(action, ": ", s.message());
    return {};
}

Status check_dense(ConstByteSpan dense, const WeightSurfaceShape& shape, const char* action) {
    if (dense.size() < shape.size_bytes())
        return error(action, ": dense surface of ", dense.size(), " bytes is smaller than the ",
                     shape.size_bytes(), " bytes of ", shape.kernels, " kernels x ",
                     shape.bytes_per_kernel, " bytes");
    return {};
}

Status check_output(ByteSpan buffer, uint64_t needed, const char* action, const char* what) {
    if (buffer.size() >= needed) return {};
    return error(action, ": ", what, " buffer of ", buffer.size(), " bytes is too small for ",
                 needed, " bytes");
}

}  // namespace

Status check_weight_surface_shape(const HwConfig& cfg, const WeightSurfaceShape& shape) {
    const char* name = "weight surface";
    if (!supports(cfg, shape.precision))
        return error(name, ": precision ", to_string(shape.precision), " is not supported by ",
                     cfg.name);
    if (shape.kernels == 0 || shape.kernels > kMaxWeightKernels)
        return error(name, ": ", shape.kernels, " kernels are not supported (1 to ",
                     kMaxWeightKernels, ")");
    const uint32_t group = weight_kernels_per_group(cfg, shape.precision);
    if (shape.kernels_per_group != group)
        return error(name, ": groups of ", shape.kernels_per_group, " kernels do not match ",
                     cfg.name, "'s ", group, " for ", to_string(shape.precision));
    const uint32_t bpe = bytes_per_element(shape.precision);
    if (shape.bytes_per_kernel == 0 || shape.bytes_per_kernel > kMaxWeightBytesPerKernel)
        return error(name, ": ", shape.bytes_per_kernel,
                     " bytes per kernel are not supported (1 to ", kMaxWeightBytesPerKernel, ")");
    if (shape.bytes_per_kernel % bpe != 0)
        return error(name, ": ", shape.bytes_per_kernel,
                     " bytes per kernel is not a whole number of ", bpe, "-byte ",
                     to_string(shape.precision), " elements");
    return {};
}

Result<CompressedWeightSizes> compressed_weight_sizes(const HwConfig& cfg,
                                                      const WeightSurfaceShape& shape,
                                                      ConstByteSpan dense) {
    const char* action = "compress weights";
    if (Status s = check_compression(cfg, shape, action); !s) return s;
    if (Status s = check_dense(dense, shape, action); !s) return s;
    const uint32_t bpe = bytes_per_element(shape.precision);
    CompressedWeightSizes sizes;
    const uint64_t elements = shape.elements();
    for (uint64_t i = 0; i < elements; ++i)
        if (!element_is_zero(dense.data() + i * bpe, bpe)) ++sizes.nonzero_elements;
    sizes.weight_bytes = align_up(sizes.nonzero_elements * bpe, kWeightSurfaceAlignment);
    sizes.mask_bytes = mask_bytes_for(shape);
    sizes.group_size_bytes = group_size_bytes_for(shape);
    return sizes;
}

Result<CompressedWeightSizes> compress_weights(const HwConfig& cfg, const WeightSurfaceShape& shape,
                                               ConstByteSpan dense, ByteSpan weights, ByteSpan mask,
                                               ByteSpan group_sizes) {
    const char* action = "compress weights";
    Result<CompressedWeightSizes> sized = compressed_weight_sizes(cfg, shape, dense);
    if (!sized) return sized;
    const CompressedWeightSizes sizes = *sized;
    if (sizes.nonzero_elements == 0)
        return error(action, ": all ", shape.elements(),
                     " weights are zero; CDMA cannot fetch an empty compressed surface (keep "
                     "this layer uncompressed)");
    if (Status s = check_output(weights, sizes.weight_bytes, action, "compressed weight"); !s)
        return s;
    if (Status s = check_output(mask, sizes.mask_bytes, action, "WMB"); !s) return s;
    if (Status s = check_output(group_sizes, sizes.group_size_bytes, action, "WGS"); !s) return s;

    std::memset(weights.data(), 0, sizes.weight_bytes);
    std::memset(mask.data(), 0, sizes.mask_bytes);
    std::memset(group_sizes.data(), 0, sizes.group_size_bytes);

    const uint32_t bpe = bytes_per_element(shape.precision);
    uint64_t element = 0, written = 0;
    for (uint32_t g = 0; g < shape.groups(); ++g) {
        const uint64_t group_end =
            element + uint64_t(shape.kernels_in_group(g)) * shape.elements_per_kernel();
        const uint64_t group_start_bytes = written;
        for (; element < group_end; ++element) {
            const std::byte* value = dense.data() + element * bpe;
            if (element_is_zero(value, bpe)) continue;
            mask[element / 8] |= std::byte(static_cast<uint8_t>(1u << (element % 8)));
            std::memcpy(weights.data() + written, value, bpe);
            written += bpe;
        }
        // A group holds at most 32 kernels of 2^18 bytes, so its count fits 32 bits.
        store_u32(group_sizes.data() + uint64_t(g) * 4,
                  static_cast<uint32_t>(written - group_start_bytes));
    }
    return sizes;
}

Status decompress_weights(const HwConfig& cfg, const WeightSurfaceShape& shape,
                          ConstByteSpan weights, ConstByteSpan mask, ConstByteSpan group_sizes,
                          ByteSpan dense) {
    const char* action = "decompress weights";
    if (Status s = check_compression(cfg, shape, action); !s) return s;
    if (dense.size() < shape.size_bytes())
        return error(action, ": dense buffer of ", dense.size(), " bytes is too small for ",
                     shape.size_bytes(), " bytes");
    const uint64_t mask_needed = (shape.elements() + 7) / 8;
    if (mask.size() < mask_needed)
        return error(action, ": WMB of ", mask.size(), " bytes is shorter than the ", mask_needed,
                     " bytes holding one bit per element");
    const uint64_t groups_needed = uint64_t(shape.groups()) * 4;
    if (group_sizes.size() < groups_needed)
        return error(action, ": WGS of ", group_sizes.size(), " bytes is shorter than the ",
                     groups_needed, " bytes of ", shape.groups(), " group sizes");

    // Check every group's size against its mask bits before writing anything.
    const uint32_t bpe = bytes_per_element(shape.precision);
    uint64_t element = 0, total = 0;
    for (uint32_t g = 0; g < shape.groups(); ++g) {
        const uint64_t group_end =
            element + uint64_t(shape.kernels_in_group(g)) * shape.elements_per_kernel();
        uint64_t kept = 0;
        for (; element < group_end; ++element) kept += mask_bit(mask, element);
        const uint32_t stated = load_u32(group_sizes.data() + uint64_t(g) * 4);
        if (stated != kept * bpe)
            return error(action, ": WGS entry ", g, " says ", stated, " bytes but group ", g,
                         "'s mask bits mark ", kept, " non-zero elements (", kept * bpe, " bytes)");
        total += kept * bpe;
    }
    if (weights.size() < total)
        return error(action, ": compressed weights of ", weights.size(),
                     " bytes are shorter than the ", total, " bytes the WGS entries add up to");

    std::memset(dense.data(), 0, shape.size_bytes());
    uint64_t read = 0;
    for (uint64_t i = 0; i < shape.elements(); ++i) {
        if (!mask_bit(mask, i)) continue;
        std::memcpy(dense.data() + i * bpe, weights.data() + read, bpe);
        read += bpe;
    }
    return {};
}

}  // namespace nvdla
