// The convolution pipeline as one operation: decode the five units' registers, let CDMA fill
// the convolution buffer (or keep the previous layer's data/weights for DATA_REUSE /
// WEIGHT_REUSE), then CSC, CMAC and CACC produce what CACC hands to SDP.
#include "emu/convolution.hpp"

#include <algorithm>
#include <new>
#include <optional>
#include <string>

#include "emu/conv_layer.hpp"
#include "emu/parallel.hpp"

namespace nvdla::emu {
namespace {

using conv::ConvLayer;
using conv::InputKind;

std::string name_of(Precision p) {
    return std::string(to_string(p));
}

bool decode_precision(Context& ctx, uint32_t field, const char* what, Precision& out) {
    if (field > 2)
        return ctx.error(std::string(what) + " is " + std::to_string(field) +
                         ", not a precision (0 int8, 1 int16, 2 fp16)");
    out = static_cast<Precision>(field);
    if (!supports(ctx.cfg, out))
        return ctx.error(std::string(what) + " selects " + name_of(out) + ", which " +
                         ctx.cfg.name + " does not support");
    return true;
}

bool agree(Context& ctx, uint32_t a, uint32_t b, const char* what_a, const char* what_b) {
    if (a == b) return true;
    return ctx.error(std::string(what_a) + " is " + std::to_string(a) + " but " + what_b + " is " +
                     std::to_string(b) + ": they must agree");
}

}  // namespace

namespace conv {

namespace {

// Modes and precisions: every unit must run the same layer.
bool decode_modes(Context& ctx, Group cdma, Group csc, Group cmac_a, Group cmac_b, Group cacc,
                  ConvLayer& l) {
    const HwConfig& cfg = ctx.cfg;
    l.atomic_c = ctx.cfg.mac_atomic_c;

    const uint32_t conv_mode = NVDLA_REG_FIELD(CDMA, D_MISC_CFG, CONV_MODE, cdma);
    const bool winograd = conv_mode == NVDLA_CDMA_D_MISC_CFG_CONV_MODE_WINOGRAD;
    const bool pixel = NVDLA_REG_FIELD(CDMA, D_DATAIN_FORMAT, DATAIN_FORMAT, cdma) ==
                       NVDLA_CDMA_D_DATAIN_FORMAT_DATAIN_FORMAT_PIXEL;
    if (!agree(ctx, conv_mode, NVDLA_REG_FIELD(CSC, D_MISC_CFG, CONV_MODE, csc),
               "CDMA D_MISC_CFG.CONV_MODE", "CSC D_MISC_CFG.CONV_MODE") ||
        !agree(ctx, conv_mode, NVDLA_REG_FIELD(CMAC_A, D_MISC_CFG, CONV_MODE, cmac_a),
               "CDMA D_MISC_CFG.CONV_MODE", "CMAC_A D_MISC_CFG.CONV_MODE") ||
        !agree(ctx, conv_mode, NVDLA_REG_FIELD(CMAC_B, D_MISC_CFG, CONV_MODE, cmac_b),
               "CDMA D_MISC_CFG.CONV_MODE", "CMAC_B D_MISC_CFG.CONV_MODE") ||
        !agree(ctx, conv_mode, NVDLA_REG_FIELD(CACC, D_MISC_CFG, CONV_MODE, cacc),
               "CDMA D_MISC_CFG.CONV_MODE", "CACC D_MISC_CFG.CONV_MODE") ||
        !agree(ctx, pixel ? 1 : 0, NVDLA_REG_FIELD(CSC, D_DATAIN_FORMAT, DATAIN_FORMAT, csc),
               "CDMA D_DATAIN_FORMAT.DATAIN_FORMAT", "CSC D_DATAIN_FORMAT.DATAIN_FORMAT"))
        return false;
    if (winograd && pixel)
        return ctx.error(
            "CDMA D_MISC_CFG.CONV_MODE is Winograd with D_DATAIN_FORMAT pixel: image input "
            "only runs as direct convolution");
    if (winograd && !nvdla_hw_has(&cfg, NVDLA_FEATURE_WINOGRAD))
        return ctx.error(std::string("CDMA D_MISC_CFG.CONV_MODE is Winograd, which ") + cfg.name +
                         " does not have");
    l.kind = winograd ? InputKind::Winograd : (pixel ? InputKind::Image : InputKind::Feature);

    const uint32_t proc = NVDLA_REG_FIELD(CDMA, D_MISC_CFG, PROC_PRECISION, cdma);
    if (!decode_precision(ctx, proc, "CDMA D_MISC_CFG.PROC_PRECISION", l.precision) ||
        !decode_precision(ctx, NVDLA_REG_FIELD(CDMA, D_MISC_CFG, IN_PRECISION, cdma),
                          "CDMA D_MISC_CFG.IN_PRECISION", l.in_precision) ||
        !agree(ctx, proc, NVDLA_REG_FIELD(CSC, D_MISC_CFG, PROC_PRECISION, csc),
               "CDMA D_MISC_CFG.PROC_PRECISION", "CSC D_MISC_CFG.PROC_PRECISION") ||
        !agree(ctx, proc, NVDLA_REG_FIELD(CMAC_A, D_MISC_CFG, PROC_PRECISION, cmac_a),
               "CDMA D_MISC_CFG.PROC_PRECISION", "CMAC_A D_MISC_CFG.PROC_PRECISION") ||
        !agree(ctx, proc, NVDLA_REG_FIELD(CMAC_B, D_MISC_CFG, PROC_PRECISION, cmac_b),
               "CDMA D_MISC_CFG.PROC_PRECISION", "CMAC_B D_MISC_CFG.PROC_PRECISION") ||
        !agree(ctx, proc, NVDLA_REG_FIELD(CACC, D_MISC_CFG, PROC_PRECISION, cacc),
               "CDMA D_MISC_CFG.PROC_PRECISION", "CACC D_MISC_CFG.PROC_PRECISION"))
        return false;

    l.data_reuse = NVDLA_REG_FIELD(CDMA, D_MISC_CFG, DATA_REUSE, cdma);
    l.weight_reuse = NVDLA_REG_FIELD(CDMA, D_MISC_CFG, WEIGHT_REUSE, cdma);
    l.skip_data_release = NVDLA_REG_FIELD(CDMA, D_MISC_CFG, SKIP_DATA_RLS, cdma);
    l.skip_weight_release = NVDLA_REG_FIELD(CDMA, D_MISC_CFG, SKIP_WEIGHT_RLS, cdma);
    l.data_bank = NVDLA_REG_FIELD(CDMA, D_BANK, DATA_BANK, cdma);
    l.weight_bank = NVDLA_REG_FIELD(CDMA, D_BANK, WEIGHT_BANK, cdma);
    return true;
}

// CDMA data.
bool decode_cdma_data(Context& ctx, Group cdma, Group csc, Group cacc, ConvLayer& l) {
    const HwConfig& cfg = ctx.cfg;
    l.batches = NVDLA_REG_FIELD(CDMA, D_BATCH_NUMBER, BATCHES, cdma) + 1;
    if (!agree(ctx, l.batches - 1, NVDLA_REG_FIELD(CSC, D_BATCH_NUMBER, BATCHES, csc),
               "CDMA D_BATCH_NUMBER.BATCHES", "CSC D_BATCH_NUMBER.BATCHES") ||
        !agree(ctx, l.batches - 1, NVDLA_REG_FIELD(CACC, D_BATCH_NUMBER, BATCHES, cacc),
               "CDMA D_BATCH_NUMBER.BATCHES", "CACC D_BATCH_NUMBER.BATCHES"))
        return false;
    if (l.batches > cfg.max_batch)
        return ctx.error("CDMA D_BATCH_NUMBER.BATCHES asks for " + std::to_string(l.batches) +
                         " batches; " + cfg.name + " runs at most " +
                         std::to_string(cfg.max_batch));
    if (l.batches > 1 && l.kind != InputKind::Feature)
        return ctx.error("CDMA D_BATCH_NUMBER.BATCHES asks for " + std::to_string(l.batches) +
                         " batches: only direct convolution of feature data runs batches");
    l.in_width = NVDLA_REG_FIELD(CDMA, D_DATAIN_SIZE_0, DATAIN_WIDTH, cdma) + 1;
    l.in_height = NVDLA_REG_FIELD(CDMA, D_DATAIN_SIZE_0, DATAIN_HEIGHT, cdma) + 1;
    l.in_channels = NVDLA_REG_FIELD(CDMA, D_DATAIN_SIZE_1, DATAIN_CHANNEL, cdma) + 1;
    l.data_port = Dma::port_of(NVDLA_REG_FIELD(CDMA, D_DAIN_RAM_TYPE, DATAIN_RAM_TYPE, cdma));
    l.data_address =
        Dma::address(cdma[NVDLA_CDMA_D_DAIN_ADDR_HIGH_0], cdma[NVDLA_CDMA_D_DAIN_ADDR_LOW_0]);
    l.data_address_uv =
        Dma::address(cdma[NVDLA_CDMA_D_DAIN_ADDR_HIGH_1], cdma[NVDLA_CDMA_D_DAIN_ADDR_LOW_1]);
    l.line_stride = cdma[NVDLA_CDMA_D_LINE_STRIDE];
    l.uv_line_stride = cdma[NVDLA_CDMA_D_LINE_UV_STRIDE];
    l.surface_stride = cdma[NVDLA_CDMA_D_SURF_STRIDE];
    l.batch_stride = cdma[NVDLA_CDMA_D_BATCH_STRIDE];
    l.line_packed = NVDLA_REG_FIELD(CDMA, D_DAIN_MAP, LINE_PACKED, cdma);
    l.surface_packed = NVDLA_REG_FIELD(CDMA, D_DAIN_MAP, SURF_PACKED, cdma);
    l.fetch_grain = NVDLA_REG_FIELD(CDMA, D_FETCH_GRAIN, GRAINS, cdma) + 1;
    l.pixel_format = NVDLA_REG_FIELD(CDMA, D_DATAIN_FORMAT, PIXEL_FORMAT, cdma);
    l.pixel_x_offset = NVDLA_REG_FIELD(CDMA, D_PIXEL_OFFSET, PIXEL_X_OFFSET, cdma);
    l.pixel_signed = NVDLA_REG_FIELD(CDMA, D_DATAIN_FORMAT, PIXEL_SIGN_OVERRIDE, cdma);
    l.convertor = NVDLA_REG_FIELD(CDMA, D_CVT_CFG, CVT_EN, cdma);
    l.cvt_truncate = NVDLA_REG_FIELD(CDMA, D_CVT_CFG, CVT_TRUNCATE, cdma);
    l.cvt_offset = static_cast<int16_t>(NVDLA_REG_FIELD(CDMA, D_CVT_OFFSET, CVT_OFFSET, cdma));
    l.cvt_scale = static_cast<int16_t>(NVDLA_REG_FIELD(CDMA, D_CVT_SCALE, CVT_SCALE, cdma));
    l.mean = NVDLA_REG_FIELD(CDMA, D_MEAN_FORMAT, MEAN_FORMAT, cdma);
    l.mean_values[0] = static_cast<int16_t>(NVDLA_REG_FIELD(CDMA, D_MEAN_GLOBAL_0, MEAN_RY, cdma));
    l.mean_values[1] = static_cast<int16_t>(NVDLA_REG_FIELD(CDMA, D_MEAN_GLOBAL_0, MEAN_GU, cdma));
    l.mean_values[2] = static_cast<int16_t>(NVDLA_REG_FIELD(CDMA, D_MEAN_GLOBAL_1, MEAN_BV, cdma));
    l.mean_values[3] = static_cast<int16_t>(NVDLA_REG_FIELD(CDMA, D_MEAN_GLOBAL_1, MEAN_AX, cdma));
    l.nan_to_zero = NVDLA_REG_FIELD(CDMA, D_NAN_FLUSH_TO_ZERO, NAN_TO_ZERO, cdma);
    l.cdma_pad_left = NVDLA_REG_FIELD(CDMA, D_ZERO_PADDING, PAD_LEFT, cdma);
    l.cdma_pad_right = NVDLA_REG_FIELD(CDMA, D_ZERO_PADDING, PAD_RIGHT, cdma);
    l.cdma_pad_top = NVDLA_REG_FIELD(CDMA, D_ZERO_PADDING, PAD_TOP, cdma);
    l.cdma_pad_bottom = NVDLA_REG_FIELD(CDMA, D_ZERO_PADDING, PAD_BOTTOM, cdma);
    l.cdma_pad_value =
        static_cast<uint16_t>(NVDLA_REG_FIELD(CDMA, D_ZERO_PADDING_VALUE, PAD_VALUE, cdma));
    l.cdma_stride_x = NVDLA_REG_FIELD(CDMA, D_CONV_STRIDE, CONV_X_STRIDE, cdma) + 1;
    l.cdma_stride_y = NVDLA_REG_FIELD(CDMA, D_CONV_STRIDE, CONV_Y_STRIDE, cdma) + 1;
    return true;
}

// CDMA weights.
bool decode_cdma_weights(Context& ctx, Group cdma, Group csc, ConvLayer& l) {
    const HwConfig& cfg = ctx.cfg;
    l.compressed = NVDLA_REG_FIELD(CDMA, D_WEIGHT_FORMAT, WEIGHT_FORMAT, cdma) ==
                   NVDLA_CDMA_D_WEIGHT_FORMAT_WEIGHT_FORMAT_COMPRESSED;
    if (!agree(ctx, l.compressed ? 1 : 0, NVDLA_REG_FIELD(CSC, D_WEIGHT_FORMAT, WEIGHT_FORMAT, csc),
               "CDMA D_WEIGHT_FORMAT.WEIGHT_FORMAT", "CSC D_WEIGHT_FORMAT.WEIGHT_FORMAT"))
        return false;
    if (l.compressed && !nvdla_hw_has(&cfg, NVDLA_FEATURE_WEIGHT_COMPRESSION))
        return ctx.error(std::string("CDMA D_WEIGHT_FORMAT selects compressed weights, which ") +
                         cfg.name + " does not have");
    l.weight_port = Dma::port_of(NVDLA_REG_FIELD(CDMA, D_WEIGHT_RAM_TYPE, WEIGHT_RAM_TYPE, cdma));
    l.weight_address =
        Dma::address(cdma[NVDLA_CDMA_D_WEIGHT_ADDR_HIGH], cdma[NVDLA_CDMA_D_WEIGHT_ADDR_LOW]);
    l.wmb_address = Dma::address(cdma[NVDLA_CDMA_D_WMB_ADDR_HIGH], cdma[NVDLA_CDMA_D_WMB_ADDR_LOW]);
    l.wgs_address = Dma::address(cdma[NVDLA_CDMA_D_WGS_ADDR_HIGH], cdma[NVDLA_CDMA_D_WGS_ADDR_LOW]);
    l.weight_bytes = cdma[NVDLA_CDMA_D_WEIGHT_BYTES];
    l.wmb_bytes = NVDLA_REG_FIELD(CDMA, D_WMB_BYTES, WMB_BYTES, cdma);
    l.bytes_per_kernel = NVDLA_REG_FIELD(CDMA, D_WEIGHT_SIZE_0, BYTE_PER_KERNEL, cdma) + 1;
    return true;
}

// CSC.
bool decode_csc(Context& ctx, Group cdma, Group csc, ConvLayer& l) {
    l.csc_width = NVDLA_REG_FIELD(CSC, D_DATAIN_SIZE_EXT_0, DATAIN_WIDTH_EXT, csc) + 1;
    l.csc_height = NVDLA_REG_FIELD(CSC, D_DATAIN_SIZE_EXT_0, DATAIN_HEIGHT_EXT, csc) + 1;
    l.csc_channels = NVDLA_REG_FIELD(CSC, D_DATAIN_SIZE_EXT_1, DATAIN_CHANNEL_EXT, csc) + 1;
    l.kernel_width = NVDLA_REG_FIELD(CSC, D_WEIGHT_SIZE_EXT_0, WEIGHT_WIDTH_EXT, csc) + 1;
    l.kernel_height = NVDLA_REG_FIELD(CSC, D_WEIGHT_SIZE_EXT_0, WEIGHT_HEIGHT_EXT, csc) + 1;
    l.kernel_channels = NVDLA_REG_FIELD(CSC, D_WEIGHT_SIZE_EXT_1, WEIGHT_CHANNEL_EXT, csc) + 1;
    l.kernels = NVDLA_REG_FIELD(CSC, D_WEIGHT_SIZE_EXT_1, WEIGHT_KERNEL, csc) + 1;
    l.out_width = NVDLA_REG_FIELD(CSC, D_DATAOUT_SIZE_0, DATAOUT_WIDTH, csc) + 1;
    l.out_height = NVDLA_REG_FIELD(CSC, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT, csc) + 1;
    l.out_channels = NVDLA_REG_FIELD(CSC, D_DATAOUT_SIZE_1, DATAOUT_CHANNEL, csc) + 1;
    l.stride_x = NVDLA_REG_FIELD(CSC, D_CONV_STRIDE_EXT, CONV_X_STRIDE_EXT, csc) + 1;
    l.stride_y = NVDLA_REG_FIELD(CSC, D_CONV_STRIDE_EXT, CONV_Y_STRIDE_EXT, csc) + 1;
    l.dilation_x = NVDLA_REG_FIELD(CSC, D_DILATION_EXT, X_DILATION_EXT, csc) + 1;
    l.dilation_y = NVDLA_REG_FIELD(CSC, D_DILATION_EXT, Y_DILATION_EXT, csc) + 1;
    l.pad_left = NVDLA_REG_FIELD(CSC, D_ZERO_PADDING, PAD_LEFT, csc);
    l.pad_top = NVDLA_REG_FIELD(CSC, D_ZERO_PADDING, PAD_TOP, csc);
    l.pad_value = static_cast<uint16_t>(NVDLA_REG_FIELD(CSC, D_ZERO_PADDING_VALUE, PAD_VALUE, csc));
    const uint32_t y_extension = NVDLA_REG_FIELD(CSC, D_POST_Y_EXTENSION, Y_EXTENSION, csc);
    if (y_extension > 2)
        return ctx.error(
            "CSC D_POST_Y_EXTENSION.Y_EXTENSION is 3; the hardware knows 0, 1 and 2 "
            "(1, 2 or 4 lines)");
    l.post_extension = 1u << y_extension;
    l.pra_truncate = NVDLA_REG_FIELD(CSC, D_PRA_CFG, PRA_TRUNCATE, csc);

    if (!agree(ctx, l.kernels - 1, NVDLA_REG_FIELD(CDMA, D_WEIGHT_SIZE_1, WEIGHT_KERNEL, cdma),
               "CSC D_WEIGHT_SIZE_EXT_1.WEIGHT_KERNEL", "CDMA D_WEIGHT_SIZE_1.WEIGHT_KERNEL") ||
        !agree(ctx, l.out_channels, l.kernels, "CSC D_DATAOUT_SIZE_1.DATAOUT_CHANNEL + 1",
               "CSC D_WEIGHT_SIZE_EXT_1.WEIGHT_KERNEL + 1"))
        return false;
    return true;
}

// CACC.
bool decode_cacc(Context& ctx, Group cacc, ConvLayer& l) {
    if (!agree(ctx, l.out_width - 1, NVDLA_REG_FIELD(CACC, D_DATAOUT_SIZE_0, DATAOUT_WIDTH, cacc),
               "CSC D_DATAOUT_SIZE_0.DATAOUT_WIDTH", "CACC D_DATAOUT_SIZE_0.DATAOUT_WIDTH") ||
        !agree(ctx, l.out_height - 1, NVDLA_REG_FIELD(CACC, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT, cacc),
               "CSC D_DATAOUT_SIZE_0.DATAOUT_HEIGHT", "CACC D_DATAOUT_SIZE_0.DATAOUT_HEIGHT") ||
        !agree(ctx, l.out_channels - 1,
               NVDLA_REG_FIELD(CACC, D_DATAOUT_SIZE_1, DATAOUT_CHANNEL, cacc),
               "CSC D_DATAOUT_SIZE_1.DATAOUT_CHANNEL", "CACC D_DATAOUT_SIZE_1.DATAOUT_CHANNEL"))
        return false;
    l.clip_truncate = NVDLA_REG_FIELD(CACC, D_CLIP_CFG, CLIP_TRUNCATE, cacc);
    return true;
}

// The shapes CSC walks must be the ones CDMA loaded.
bool check_shapes(Context& ctx, const ConvLayer& l) {
    const uint32_t bpe = bytes_per_element(l.precision);
    switch (l.kind) {
        case InputKind::Feature:
            if (!agree(ctx, l.csc_width, l.in_width, "CSC D_DATAIN_SIZE_EXT_0.DATAIN_WIDTH_EXT + 1",
                       "CDMA D_DATAIN_SIZE_0.DATAIN_WIDTH + 1") ||
                !agree(ctx, l.csc_height, l.in_height,
                       "CSC D_DATAIN_SIZE_EXT_0.DATAIN_HEIGHT_EXT + 1",
                       "CDMA D_DATAIN_SIZE_0.DATAIN_HEIGHT + 1") ||
                !agree(ctx, l.csc_channels, l.in_channels,
                       "CSC D_DATAIN_SIZE_EXT_1.DATAIN_CHANNEL_EXT + 1",
                       "CDMA D_DATAIN_SIZE_1.DATAIN_CHANNEL + 1") ||
                !agree(ctx, l.kernel_channels, l.csc_channels,
                       "CSC D_WEIGHT_SIZE_EXT_1.WEIGHT_CHANNEL_EXT + 1",
                       "CSC D_DATAIN_SIZE_EXT_1.DATAIN_CHANNEL_EXT + 1"))
                return false;
            break;
        case InputKind::Image:
            if (l.kernel_width != 1)
                return ctx.error(
                    "CSC D_WEIGHT_SIZE_EXT_0.WEIGHT_WIDTH_EXT is " +
                    std::to_string(l.kernel_width - 1) +
                    " in image input mode; the kernels must be pre-extended to width 1 (0)");
            if (!agree(ctx, l.csc_height, l.in_height,
                       "CSC D_DATAIN_SIZE_EXT_0.DATAIN_HEIGHT_EXT + 1",
                       "CDMA D_DATAIN_SIZE_0.DATAIN_HEIGHT + 1"))
                return false;
            // Post-extension packs f kernel rows into one MAC operation of atomic C lanes.
            if (l.post_extension > 1 && l.kernel_channels > l.atomic_c / l.post_extension)
                return ctx.error(
                    "CSC D_POST_Y_EXTENSION puts " + std::to_string(l.post_extension) +
                    " rows in one operation, so D_WEIGHT_SIZE_EXT_1.WEIGHT_CHANNEL_EXT + 1 (" +
                    std::to_string(l.kernel_channels) + ") must be at most " +
                    std::to_string(l.atomic_c / l.post_extension));
            break;
        case InputKind::Winograd:
            if (l.kernel_width != 4 || l.kernel_height != 4)
                return ctx.error("CSC D_WEIGHT_SIZE_EXT_0 is " + std::to_string(l.kernel_width) +
                                 "x" + std::to_string(l.kernel_height) +
                                 " in Winograd mode; the transformed kernels are 4x4 (3, 3)");
            if (!agree(ctx, l.kernel_channels, l.csc_channels,
                       "CSC D_WEIGHT_SIZE_EXT_1.WEIGHT_CHANNEL_EXT + 1",
                       "CSC D_DATAIN_SIZE_EXT_1.DATAIN_CHANNEL_EXT + 1"))
                return false;
            // CSC walks 2x2 output tiles in 4x4 groups over 4x4 input tiles with a step of 2.
            if (l.out_width % 4 != 0 || l.out_height % 4 != 0 || l.csc_channels % 4 != 0 ||
                l.out_width + 2 > l.csc_width || l.out_height + 2 > l.csc_height)
                return ctx.error("CSC Winograd: output " + std::to_string(l.out_width) + "x" +
                                 std::to_string(l.out_height) +
                                 " (D_DATAOUT_SIZE_0) must be multiples "
                                 "of 4 no larger than the input " +
                                 std::to_string(l.csc_width) + "x" + std::to_string(l.csc_height) +
                                 " (D_DATAIN_SIZE_EXT_0) minus 2, with "
                                 "channels (" +
                                 std::to_string(l.csc_channels) + ") a multiple of 4");
            break;
    }
    const uint64_t expected_bytes_per_kernel =
        uint64_t(l.kernel_width) * l.kernel_height * l.kernel_channels * bpe;
    if (!agree(ctx, static_cast<uint32_t>(l.bytes_per_kernel),
               static_cast<uint32_t>(expected_bytes_per_kernel),
               "CDMA D_WEIGHT_SIZE_0.BYTE_PER_KERNEL + 1",
               "CSC's kernel width x height x channels x bytes per element"))
        return false;
    if (l.weight_bytes == 0)
        return ctx.error(
            "CDMA D_WEIGHT_BYTES is 0; the weight surface must hold at least one byte");
    return true;
}

bool check_model_limits(Context& ctx, const ConvLayer& l) {
    // What the model holds at once: the input (and the padded copy CSC walks), the kernels and
    // the output. The hardware streams them; a model refusing a layer beyond 2^31 elements
    // beats one that runs out of memory.
    constexpr uint64_t kLimit = uint64_t(1) << 31;
    const uint64_t span_y = uint64_t(l.out_height - 1) * l.stride_y +
                            uint64_t(l.kernel_height - 1) * l.dilation_y + 1 + l.pad_top;
    const uint64_t span_x = uint64_t(l.out_width - 1) * l.stride_x +
                            uint64_t(l.kernel_width - 1) * l.dilation_x + 1 + l.pad_left;
    const uint64_t sizes[] = {
        uint64_t(l.batches) * l.in_width * l.in_height * l.in_channels,
        uint64_t(l.batches) * std::max<uint64_t>(span_y, l.csc_height) *
            std::max<uint64_t>(span_x, l.csc_width) * (l.csc_channels + 3),
        uint64_t(l.kernels) * l.kernel_width * l.kernel_height * l.kernel_channels,
        uint64_t(l.batches) * l.out_channels * l.out_width * l.out_height};
    for (uint64_t size : sizes)
        if (size > kLimit)
            return ctx.error(
                "the layer (D_DATAIN_SIZE, D_WEIGHT_SIZE_EXT, D_DATAOUT_SIZE, strides, "
                "dilation) needs more than 2^31 elements of buffer; the model refuses it");
    return true;
}

}  // namespace

bool decode_layer(Context& ctx, Group cdma, Group csc, Group cmac_a, Group cmac_b, Group cacc,
                  ConvLayer& l) {
    return decode_modes(ctx, cdma, csc, cmac_a, cmac_b, cacc, l) &&
           decode_cdma_data(ctx, cdma, csc, cacc, l) && decode_cdma_weights(ctx, cdma, csc, l) &&
           decode_csc(ctx, cdma, csc, l) && decode_cacc(ctx, cacc, l) && check_shapes(ctx, l) &&
           check_model_limits(ctx, l) && check_buffer(ctx, cdma, csc, l);
}

int32_t* channels_last_storage(ConvScratch& scratch, size_t count) {
    if (!scratch.cube || scratch.cube.use_count() > 1 || scratch.cube_capacity < count) {
        // 64-byte aligned, like oneDNN's own buffers (whole cache lines per store).
        constexpr std::align_val_t kAlign{64};
        scratch.cube = std::shared_ptr<int32_t[]>(
            static_cast<int32_t*>(::operator new[](count * sizeof(int32_t), kAlign)),
            [](int32_t* p) { ::operator delete[](p, kAlign); });
        scratch.cube_capacity = count;
    }
    return scratch.cube.get();
}

namespace {

// A block of a deferred cube's rows: about this many bytes, so that SDP reads it from L1/L2.
constexpr size_t kBlockBytes = size_t(96) << 10;
constexpr uint32_t kMinBlocks = 8;

// An integer layer CMAC's kernels compute channels last, deferred until SDP asks for its rows
// (or for the whole cube: oneDNN may then take it, as Convolution::execute would).
class DeferredConvolution final : public DeferredRows {
  public:
    DeferredConvolution(const ConvLayer& l, const ConvData& d, const ConvWeights& w,
                        ConvScratch& scratch, OnednnConvolution& onednn, Group cacc)
        : l_(l), d_(d), w_(w), scratch_(scratch), onednn_(onednn), cacc_(cacc) {}

    uint32_t block_rows() const override {
        const size_t row_bytes =
            size_t(l_.batches) * l_.out_width * l_.out_channels * sizeof(int32_t);
        const auto rows =
            static_cast<uint32_t>(std::clamp<size_t>(kBlockBytes / row_bytes, 1, l_.out_height));
        // At least kMinBlocks blocks where the rows allow, on any thread count (SDP's DMAs come
        // block by block): two blocks per thread on up to 4 threads, so that no thread waits
        // long for the last one.
        return std::min(rows, (l_.out_height + kMinBlocks - 1) / kMinBlocks);
    }
    unsigned threads() const override {
        const uint64_t macs = uint64_t(l_.batches) * l_.out_height * l_.out_width * l_.kernels *
                              l_.kernel_height * l_.kernel_width * l_.kernel_channels;
        return threads_for(l_.threads, macs);
    }

    int32_t* begin(size_t values) override {
        problem_ = mac_problem(l_, d_, w_, scratch_);
        rows_.emplace(problem_, l_.precision, l_.clip_truncate);
        if (scratch_.block.size() < values) scratch_.block.resize(values);
        return scratch_.block.data();
    }
    uint32_t compute(uint32_t y0, uint32_t y1, int32_t* out) const override {
        const size_t batch_values = size_t(y1 - y0) * l_.out_width * l_.out_channels;
        uint32_t saturations = 0;
        for (uint32_t n = 0; n < l_.batches; ++n)
            saturations += rows_->rows(n, y0, y1, out + n * batch_values);
        return saturations;
    }
    void finish(uint32_t saturations) override {
        cacc_.set(NVDLA_CACC_D_OUT_SATURATION, saturations);
    }
    AccumulatorCube whole() override {
        AccumulatorCube out;
        out.batches = l_.batches;
        out.channels = l_.out_channels;
        out.height = l_.out_height;
        out.width = l_.out_width;
        out.precision = l_.precision;
        // (oneDNN's int32 sums cannot saturate in CACC's delivery.)
        uint32_t saturations = 0;
        if (!onednn_.run(l_, d_, w_, scratch_, out))
            saturations = convolve_int(l_, d_, w_, scratch_, out);
        cacc_.set(NVDLA_CACC_D_OUT_SATURATION, saturations);
        return out;
    }

  private:
    const ConvLayer l_;
    const ConvData& d_;
    const ConvWeights& w_;
    ConvScratch& scratch_;
    OnednnConvolution& onednn_;
    Group cacc_;
    MacProblem problem_;
    std::optional<MacRows> rows_;
};

}  // namespace

}  // namespace conv

// The convolution buffer between layers: what the previous layer loaded and whether it kept
// it (SKIP_DATA_RLS / SKIP_WEIGHT_RLS).
struct Convolution::State {
    struct Kept {
        bool valid = false;
        bool skip_release = false;
        InputKind kind = InputKind::Feature;
        uint32_t data_bank = 0, weight_bank = 0;
    };
    Kept data_kept, weights_kept;
    // After reset the buffer is flushed entry by entry; the model lets that take until
    // software first looks at S_CBUF_FLUSH_STATUS.
    bool flush_seen = false;
    conv::ConvData data;
    conv::WeightCache weight_cache;
    conv::ConvWeights* weights = nullptr;  // the last layer's (a reused layer's too)
    conv::ConvScratch scratch;
    conv::OnednnConvolution onednn;
    // The last layer's deferred rows, made in place: a cube's rows read the data, weights and
    // scratch above, which the next layer replaces anyway, so no cube outlives them.
    std::optional<conv::DeferredConvolution> deferred;

    // The hardware keeps the previous layer's buffer content when the previous layer skipped
    // the release, this one asks for reuse and the mode and bank split are unchanged (C model
    // ActDataReadRequestSequenceThread / WeightReadRequestSequenceThread).
    static bool reusable(const Kept& kept, bool reuse, const ConvLayer& l) {
        return kept.valid && kept.skip_release && reuse && kept.kind == l.kind &&
               kept.data_bank == l.data_bank && kept.weight_bank == l.weight_bank;
    }
    static void remember(Kept& kept, bool skip_release, const ConvLayer& l) {
        kept = {true, skip_release, l.kind, l.data_bank, l.weight_bank};
    }
};

Convolution::Convolution() : state_(std::make_unique<State>()) {}
Convolution::~Convolution() = default;

void Convolution::reset() {
    state_ = std::make_unique<State>();
}

std::optional<uint32_t> Convolution::handle_read(nvdla_unit unit, uint32_t offset) {
    // The hardware flushes the buffer after reset (thousands of cycles; RTL
    // NV_NVDLA_CDMA_cvt.v dat_cbuf_flush_idx): the nv_full traces read FLUSH_DONE as 0 early,
    // the nv_small ones and the firmware poll until it is 1. Here the first read after reset
    // still sees the flush running and every later one sees it done.
    if (unit == NVDLA_UNIT_CDMA && offset == NVDLA_CDMA_S_CBUF_FLUSH_STATUS) {
        const bool done = state_->flush_seen;
        state_->flush_seen = true;
        return NVDLA_FIELD_SET(CDMA, S_CBUF_FLUSH_STATUS, FLUSH_DONE, done ? 1u : 0u);
    }
    return std::nullopt;
}

AccumulatorCube Convolution::execute(Context& ctx, Group cdma, Group csc, Group cmac_a,
                                     Group cmac_b, Group cacc) {
    AccumulatorCube out;
    ConvLayer layer;
    State& s = *state_;
    s.flush_seen = true;  // a layer runs long after the flush
    if (!conv::decode_layer(ctx, cdma, csc, cmac_a, cmac_b, cacc, layer)) {
        s.data_kept.valid = s.weights_kept.valid = false;
        return out;
    }

    layer.threads = ctx.threads;
    conv::CdmaCounters counters;
    const bool reuse_data = State::reusable(s.data_kept, layer.data_reuse, layer);
    const bool reuse_weights = State::reusable(s.weights_kept, layer.weight_reuse, layer);
    bool loaded = true;
    if (!reuse_data) loaded = conv::load_data(ctx, layer, s.data, counters);
    if (loaded && !reuse_weights) {
        s.weights = conv::load_weights(ctx, layer, s.weight_cache, counters);
        loaded = s.weights != nullptr;
    }
    if (!loaded) {
        s.data_kept.valid = s.weights_kept.valid = false;
        return out;
    }
    if (reuse_data && (s.data.precision != layer.precision || s.data.batches != layer.batches)) {
        ctx.error(
            "CDMA D_MISC_CFG.DATA_REUSE keeps the previous layer's data, which was loaded "
            "with another precision or batch count");
        return out;
    }
    if (reuse_weights &&
        (s.weights->precision != layer.precision || s.weights->kernels != layer.kernels ||
         s.weights->channels * s.weights->width * s.weights->height !=
             layer.kernel_channels * layer.kernel_width * layer.kernel_height)) {
        ctx.error(
            "CDMA D_MISC_CFG.WEIGHT_REUSE keeps the previous layer's weights, which do "
            "not have this layer's kernel count, shape or precision");
        return out;
    }
    State::remember(s.data_kept, layer.skip_data_release, layer);
    State::remember(s.weights_kept, layer.skip_weight_release, layer);

    out.batches = layer.batches;
    out.channels = layer.out_channels;
    out.height = layer.out_height;
    out.width = layer.out_width;
    out.precision = layer.precision;
    uint32_t saturations = 0;
    if (conv::channels_last_int(layer, s.data, *s.weights)) {
        // Computed when SDP takes it (DeferredRows), which also sets D_OUT_SATURATION.
        out.channel_stride = layer.out_channels;
        // (No allocation per layer: a pointer that owns nothing to the kept one.)
        out.deferred = std::shared_ptr<DeferredRows>(
            std::shared_ptr<void>(),
            &s.deferred.emplace(layer, s.data, *s.weights, s.scratch, s.onednn, cacc));
    } else if (layer.precision == Precision::Fp16) {
        conv::convolve_fp16(layer, s.data, *s.weights, out.values);
    } else if (!s.onednn.run(layer, s.data, *s.weights, s.scratch, out)) {
        // (oneDNN's int32 sums cannot saturate in CACC's delivery.)
        saturations = conv::convolve_int(layer, s.data, *s.weights, s.scratch, out);
    }

    // Status the units write back to the group they ran.
    cacc.set(NVDLA_CACC_D_OUT_SATURATION, saturations);
    cdma.set(NVDLA_CDMA_D_NAN_INPUT_DATA_NUM, reuse_data ? 0 : counters.data_nan);
    cdma.set(NVDLA_CDMA_D_INF_INPUT_DATA_NUM, reuse_data ? 0 : counters.data_inf);
    cdma.set(NVDLA_CDMA_D_NAN_INPUT_WEIGHT_NUM, reuse_weights ? 0 : counters.weight_nan);
    cdma.set(NVDLA_CDMA_D_INF_INPUT_WEIGHT_NUM, reuse_weights ? 0 : counters.weight_inf);
    return out;
}

}  // namespace nvdla::emu
