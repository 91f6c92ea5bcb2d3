// Weight surfaces: how convolution kernels are laid out in memory for the convolution DMA
// (CDMA), and their optional sparse compression. docs/formats/weights.md has the full rules,
// diagrams and the sources of every rule.
//
// Host kernels are a dense K x C x R x S tensor (Dims4 n = K kernels, c = C channels,
// h = R rows, w = S columns; layout NCHW = KCRS or NHWC = KRSC, any HostType). Every kind
// ends in the "direct convolution" (DC) mapping of the hardware kernels:
//
//   kernels are cut into groups of G (int8: MAC atomic K, int16/fp16: half of it; 32/16 on
//   nv_full), each kernel into 1 x 1 x C' cubes of up to A channels (A = MAC atomic C, 64 on
//   nv_full; the last cube of a kernel keeps only what is left, no zeros), and within a group
//   the cubes are scanned C' -> K -> S -> R -> C (C' fastest). Groups follow each other with
//   no gap; the whole surface is padded with zeros to a multiple of 128 bytes.
//
//   Image      channel pre-extension (each kernel row becomes one 1 x R x (S * image_channels)
//              kernel) and optional post-extension (2 or 4 rows combined per cube).
//   Winograd   channels padded to 32 bytes, strided kernels extended to 3x3, transformed to
//              4x4 by G g G^T, then 4x4x4-element cubes scanned K -> C.
//   Deconv.    split into stride_x * stride_y kernel sets, each a stride-1 convolution whose
//              kernel positions are stored in reverse order; one DC surface per set.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "nvdla/api.hpp"
#include "nvdla/formats/convert.hpp"
#include "nvdla/hw_config.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla {

// Register limits of the kernels the hardware sees (CSC D_WEIGHT_SIZE_EXT_0/1, CDMA
// D_WEIGHT_SIZE_0/1: "size minus one" fields of 5, 13 and 18 bits).
inline constexpr uint32_t kMaxWeightKernels = 8192;
inline constexpr uint32_t kMaxWeightChannels = 8192;
inline constexpr uint32_t kMaxWeightExtent = 32;  // kernel width and height
inline constexpr uint64_t kMaxWeightBytesPerKernel = uint64_t(1) << 18;
inline constexpr uint32_t kMaxConvStride = 8;     // D_CONV_STRIDE, 3-bit fields
inline constexpr uint32_t kMaxDeconvStride = 32;  // Rubik D_DECONV_STRIDE, 5-bit fields
// Weight, WMB and WGS surfaces are all padded to a multiple of this.
inline constexpr uint32_t kWeightSurfaceAlignment = 128;

enum class WeightKind : uint8_t { Direct, Image, Winograd, Deconvolution };

NVDLA_API std::string_view to_string(WeightKind k);

// Kernels per group: MAC atomic K for int8, half of it for int16/fp16 (a MAC cell computes
// two int8 kernels or one 16-bit kernel).
constexpr uint32_t weight_kernels_per_group(const HwConfig& cfg, Precision p) {
    return p == Precision::Int8 ? cfg.mac_atomic_k : cfg.mac_atomic_k / 2;
}

struct WeightFormat {
    WeightKind kind = WeightKind::Direct;
    Precision precision = Precision::Int8;
    // Image: channels of the input pixel format as it lands in the convolution buffer (1 to 4,
    // e.g. 4 for A8B8G8R8 even when the network uses 3; weight channel c multiplies pixel
    // component c in R, G, B, A order). 0 = the kernels' channel count.
    uint32_t image_channels = 0;
    // Image: channel post-extension, 1 (off), 2 or 4 rows per cube.
    uint32_t post_extension = 1;
    // Winograd and image: the convolution stride; deconvolution: the deconvolution stride.
    // Direct convolution ignores it (the hardware strides the data, not the weights).
    uint32_t stride_x = 1, stride_y = 1;
    // Winograd: factor applied to G g G^T before conversion to the surface precision. The
    // transform makes quarters out of integers; integer precisions need 4 to keep them exact.
    float winograd_scale = 1.0f;

    friend bool operator==(const WeightFormat&, const WeightFormat&) = default;
};

// What CDMA and CSC know of one dense weight surface: enough to find every group.
struct WeightSurfaceShape {
    Precision precision = Precision::Int8;
    uint32_t kernels = 0;            // WEIGHT_KERNEL + 1
    uint32_t kernels_per_group = 0;  // fixed by the configuration and precision
    uint64_t bytes_per_kernel = 0;   // BYTE_PER_KERNEL + 1

    uint32_t groups() const {
        return kernels_per_group ? (kernels + kernels_per_group - 1) / kernels_per_group : 0;
    }
    uint32_t kernels_in_group(uint32_t g) const {
        const uint32_t rest = kernels - g * kernels_per_group;
        return rest < kernels_per_group ? rest : kernels_per_group;
    }
    uint64_t elements_per_kernel() const { return bytes_per_kernel / bytes_per_element(precision); }
    uint64_t elements() const { return uint64_t(kernels) * elements_per_kernel(); }
    uint64_t data_bytes() const { return uint64_t(kernels) * bytes_per_kernel; }
    // WEIGHT_BYTES of the uncompressed surface.
    uint64_t size_bytes() const {
        return (data_bytes() + kWeightSurfaceAlignment - 1) / kWeightSurfaceAlignment *
               kWeightSurfaceAlignment;
    }

    friend bool operator==(const WeightSurfaceShape&, const WeightSurfaceShape&) = default;
};

// A weight surface (or, for deconvolution, one surface per kernel set) for given host kernels.
struct WeightLayout {
    WeightFormat format;  // image_channels resolved (never 0 for Image)
    Dims4 source;         // host kernels: n = K, c = C, h = R, w = S
    // The kernels as the hardware sees them: WEIGHT_WIDTH_EXT + 1, WEIGHT_HEIGHT_EXT + 1,
    // WEIGHT_CHANNEL_EXT + 1.
    uint32_t kernel_width = 0, kernel_height = 0, kernel_channels = 0;
    // Channels of one small cube: MAC atomic C, or 4 for Winograd's 4x4x4 cubes.
    uint32_t cube_channels = 0;
    // Channels after zero padding, before any extension: the pixel format's channels for
    // image weights, C rounded up to a whole 32-byte atom for Winograd, C otherwise.
    uint32_t padded_channels = 0;
    WeightSurfaceShape surface;  // one set
    uint32_t sets = 1;           // deconvolution: stride_x * stride_y; otherwise 1
    uint64_t set_stride = 0;     // bytes from one set's surface to the next (keeps 256-byte starts)

    uint64_t set_offset(uint32_t set) const { return uint64_t(set) * set_stride; }
    // Bytes pack_weights writes: every set, each padded to 128 bytes.
    uint64_t size_bytes() const { return uint64_t(sets - 1) * set_stride + surface.size_bytes(); }

    friend bool operator==(const WeightLayout&, const WeightLayout&) = default;
};

// Describes the surface for host kernels of `kernels` dims in `format` on cfg. Fails with a
// sentence naming the value and the limit when the configuration lacks the precision or
// feature, a dimension is 0 or beyond a register limit, the post-extension factor is not
// 1/2/4 or too large for the channels, or the kernel/stride pair does not suit Winograd.
NVDLA_API Result<WeightLayout> make_weight_layout(const HwConfig& cfg, const WeightFormat& format,
                                                  Dims4 kernels);

// Bytes the (uncompressed) surface needs: make_weight_layout(...).size_bytes().
NVDLA_API Result<uint64_t> weight_surface_bytes(const HwConfig& cfg, const WeightFormat& format,
                                                Dims4 kernels);

// Byte offset from the start of the packed buffer at which host element (k, c, r, s) lands.
// Not for Winograd, whose transform spreads each element over 16 values.
NVDLA_API Result<uint64_t> weight_byte_offset(const WeightLayout& layout, uint32_t k, uint32_t c,
                                              uint32_t r, uint32_t s);

// Packs host kernels (dims must equal layout.source) into dst[0, layout.size_bytes()),
// converting each element with opt. Every byte of that range is written (padding as zeros).
NVDLA_API Status pack_weights(const ConstTensorView& src, const WeightLayout& layout, ByteSpan dst,
                              const ConvertOptions& opt = {});

// Unpacks a surface written by pack_weights into host kernels with layout.source dims.
// Winograd surfaces are inverted exactly (rows 0, 1 - 2 and 3 of the transform), so the
// result is the original up to the rounding of the surface precision.
NVDLA_API Status unpack_weights(ConstByteSpan src, const WeightLayout& layout,
                                const TensorView& dst, const ConvertOptions& opt = {});

// The Winograd kernel transform U = G g G^T on its own. g and u are row-major (g[r * 3 + s],
// u[r * 4 + s]); G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1].
NVDLA_API std::array<float, 16> winograd_transform(const std::array<float, 9>& g);
// Its left inverse: g = H u H^T with H = [1 0 0 0; 0 1 -1 0; 0 0 0 1] (H G = I).
NVDLA_API std::array<float, 9> winograd_inverse_transform(const std::array<float, 16>& u);

// ---- Sparse compression ---------------------------------------------------------------------
//
// From a dense surface (one set) three surfaces: the non-zero elements packed one after the
// other, WMB (one bit per element, 1 = kept, little-endian bit order, the groups' bits
// following each other without a gap) and WGS (one little-endian uint32 per kernel group:
// the bytes of compressed data that group owns, not a running total). Each is padded with
// zeros to 128 bytes. An element is zero when all its bits are (fp16 -0.0 is kept).

struct CompressedWeightSizes {
    uint64_t weight_bytes = 0;      // compressed weight surface (its WEIGHT_BYTES)
    uint64_t mask_bytes = 0;        // WMB surface (WMB_BYTES)
    uint64_t group_size_bytes = 0;  // WGS surface
    uint64_t nonzero_elements = 0;
};

// Checks that shape is one cfg's hardware can read: precision, the configuration's group
// size, kernels and bytes per kernel within the register limits. (The compression functions
// also require NVDLA_FEATURE_WEIGHT_COMPRESSION.)
NVDLA_API Status check_weight_surface_shape(const HwConfig& cfg, const WeightSurfaceShape& shape);

// The three sizes for this dense surface (the weight size depends on its zeros).
NVDLA_API Result<CompressedWeightSizes> compressed_weight_sizes(const HwConfig& cfg,
                                                                const WeightSurfaceShape& shape,
                                                                ConstByteSpan dense);

// Compresses dense (at least shape.size_bytes()) into the three surfaces, each at least its
// size in compressed_weight_sizes. Fails, writing nothing, when a buffer is too small or when
// every element is zero (CDMA cannot fetch an empty weight surface).
NVDLA_API Result<CompressedWeightSizes> compress_weights(const HwConfig& cfg,
                                                         const WeightSurfaceShape& shape,
                                                         ConstByteSpan dense, ByteSpan weights,
                                                         ByteSpan mask, ByteSpan group_sizes);

// Rebuilds the dense surface (shape.size_bytes() bytes written) from the three surfaces.
// Fails, writing nothing, when a WGS entry disagrees with its group's mask bits or a buffer
// is shorter than the surfaces it must hold.
NVDLA_API Status decompress_weights(const HwConfig& cfg, const WeightSurfaceShape& shape,
                                    ConstByteSpan weights, ConstByteSpan mask,
                                    ConstByteSpan group_sizes, ByteSpan dense);

}  // namespace nvdla
