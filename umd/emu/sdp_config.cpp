// SDP and SDP_RDMA registers of one operation, decoded and checked against what the hardware
// can execute (cmod/sdp/NV_NVDLA_sdp.cpp asserts; doc/hw/v1/ias/programming_guide.rst "SDP").
#include <sstream>

#include "emu/lut_port.hpp"
#include "emu/sdp_internal.hpp"
#include "nvdla/hw_config.hpp"

namespace nvdla::emu::sdp {
namespace {

constexpr uint64_t kMaxPdpElements = uint64_t(1) << 28;

// The register names the error sentences use.
std::string name_of(Precision p) {
    return std::string(to_string(p));
}

bool decode_precision(uint32_t field, Precision& p) {
    if (field > 2) return false;
    p = static_cast<Precision>(field);
    return true;
}

bool includes_alu(OperandUse use) {
    return use == OperandUse::Alu || use == OperandUse::Both;
}
bool includes_mul(OperandUse use) {
    return use == OperandUse::Mul || use == OperandUse::Both;
}

std::string use_name(OperandUse use) {
    switch (use) {
        case OperandUse::Mul: return "MUL";
        case OperandUse::Alu: return "ALU";
        case OperandUse::Both: return "BOTH";
    }
    return "?";
}

// BRDMA/NRDMA/ERDMA configuration word (all three have the same fields) and addresses.
bool decode_operand_dma(Context& ctx, uint32_t cfg_word, uint32_t base_low, uint32_t base_high,
                        uint32_t line, uint32_t surface, const char* name, OperandDma& dma) {
    dma.enabled = NVDLA_FIELD_GET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DISABLE, cfg_word) == 0;
    const uint32_t use = NVDLA_FIELD_GET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_USE, cfg_word);
    dma.component_bytes = NVDLA_FIELD_GET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_SIZE, cfg_word) + 1;
    dma.per_element = NVDLA_FIELD_GET(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_MODE, cfg_word) != 0;
    dma.port = Dma::port_of(NVDLA_FIELD_GET(SDP_RDMA, D_BRDMA_CFG, BRDMA_RAM_TYPE, cfg_word));
    dma.base = Dma::address(base_high, base_low);
    dma.line_stride = line;
    dma.surface_stride = surface;
    if (use > 2) {
        if (dma.enabled)
            return ctx.error(std::string("SDP_RDMA D_") + name + "_CFG." + name +
                             "_DATA_USE is 3; it must be " + "MUL (0), ALU (1) or BOTH (2)");
        dma.enabled = false;
        return true;
    }
    dma.use = static_cast<OperandUse>(use);
    return true;
}

// The operands a stage takes from memory must come through an enabled DMA that carries them.
bool check_operand_source(Context& ctx, const char* stage, const char* dma_name,
                          const OperandDma& dma, bool alu, bool mul) {
    if (!alu && !mul) return true;
    ErrorMessage msg;
    if (!dma.enabled) {
        msg << "SDP " << stage << " takes its " << (alu ? "ALU" : "MUL")
            << " operand from memory (SRC MEM) but SDP_RDMA D_" << dma_name << "_CFG." << dma_name
            << "_DISABLE is YES";
        return ctx.error(msg.str());
    }
    if ((alu && !includes_alu(dma.use)) || (mul && !includes_mul(dma.use))) {
        msg << "SDP " << stage << " takes its " << (alu && !includes_alu(dma.use) ? "ALU" : "MUL")
            << " operand from memory but SDP_RDMA D_" << dma_name << "_CFG." << dma_name
            << "_DATA_USE is " << use_name(dma.use) << ", which does not carry it";
        return ctx.error(msg.str());
    }
    return true;
}

// Whether an X stage takes its ALU (or MUL) operand from memory.
bool needs(const XStage& x, bool alu) {
    return x.enabled &&
           (alu ? !x.alu_bypass && x.alu_from_memory : !x.mul_bypass && x.mul_from_memory);
}

// ---- Shape, precisions and mode ----
bool decode_mode(Context& ctx, Group sdp, Settings& s) {
    const HwConfig& cfg = ctx.cfg;
    const auto has = [&](uint32_t feature) { return nvdla_hw_has(&cfg, feature); };
    ErrorMessage msg;

    s.atom = cfg.atom_bytes;
    s.width = NVDLA_REG_FIELD(SDP, D_DATA_CUBE_WIDTH, WIDTH, sdp) + 1;
    s.height = NVDLA_REG_FIELD(SDP, D_DATA_CUBE_HEIGHT, HEIGHT, sdp) + 1;
    s.channels = NVDLA_REG_FIELD(SDP, D_DATA_CUBE_CHANNEL, CHANNEL, sdp) + 1;
    s.batches = NVDLA_REG_FIELD(SDP, D_FEATURE_MODE_CFG, BATCH_NUMBER, sdp) + 1;
    s.flying = NVDLA_REG_FIELD(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, sdp) != 0;
    s.to_pdp = NVDLA_REG_FIELD(SDP, D_FEATURE_MODE_CFG, OUTPUT_DST, sdp) != 0;
    const bool winograd = NVDLA_REG_FIELD(SDP, D_FEATURE_MODE_CFG, WINOGRAD, sdp) != 0;

    const uint32_t proc_field = NVDLA_REG_FIELD(SDP, D_DATA_FORMAT, PROC_PRECISION, sdp);
    const uint32_t out_field = NVDLA_REG_FIELD(SDP, D_DATA_FORMAT, OUT_PRECISION, sdp);
    if (!decode_precision(proc_field, s.proc))
        return ctx.error(
            "SDP D_DATA_FORMAT.PROC_PRECISION is 3; it must be INT8 (0), INT16 (1) or FP16 (2)");
    if (!decode_precision(out_field, s.output))
        return ctx.error(
            "SDP D_DATA_FORMAT.OUT_PRECISION is 3; it must be INT8 (0), INT16 (1) or FP16 (2)");
    for (Precision p : {s.proc, s.output}) {
        if (!supports(cfg, p))
            return ctx.error("SDP D_DATA_FORMAT selects " + name_of(p) + ", which " + cfg.name +
                             " does not support");
    }
    // The write DMA packs the datapath's elements at the output's size: the same size, or
    // int8 processing written as 16-bit values (NV_NVDLA_sdp.cpp is_int8_to_int16).
    const bool widening = s.proc == Precision::Int8 && s.output != Precision::Int8;
    if (bytes_per_element(s.output) != bytes_per_element(s.proc) && !widening) {
        msg << "SDP D_DATA_FORMAT.OUT_PRECISION is " << name_of(s.output) << " with PROC_PRECISION "
            << name_of(s.proc) << "; the write DMA cannot narrow the elements";
        return ctx.error(msg.str());
    }
    if (s.batches > 1 && (!has(NVDLA_FEATURE_BATCH) || s.batches > cfg.max_batch)) {
        msg << "SDP D_FEATURE_MODE_CFG.BATCH_NUMBER is " << s.batches - 1 << " (" << s.batches
            << " batches); " << cfg.name << " runs at most " << cfg.max_batch;
        return ctx.error(msg.str());
    }
    if (winograd && !has(NVDLA_FEATURE_WINOGRAD))
        return ctx.error(std::string("SDP D_FEATURE_MODE_CFG.WINOGRAD is ON; ") + cfg.name +
                         " has no Winograd mode");
    return true;
}

// ---- Stages ----
void decode_stages(const HwConfig& cfg, Group sdp, Settings& s) {
    const auto has = [&](uint32_t feature) { return nvdla_hw_has(&cfg, feature); };
    XStage* xs[2] = {&s.bs, &s.bn};
    const uint32_t x_cfg[2] = {sdp[NVDLA_SDP_D_DP_BS_CFG], sdp[NVDLA_SDP_D_DP_BN_CFG]};
    const uint32_t x_alu_cfg[2] = {sdp[NVDLA_SDP_D_DP_BS_ALU_CFG], sdp[NVDLA_SDP_D_DP_BN_ALU_CFG]};
    const uint32_t x_mul_cfg[2] = {sdp[NVDLA_SDP_D_DP_BS_MUL_CFG], sdp[NVDLA_SDP_D_DP_BN_MUL_CFG]};
    const uint32_t x_alu_value[2] = {sdp[NVDLA_SDP_D_DP_BS_ALU_SRC_VALUE],
                                     sdp[NVDLA_SDP_D_DP_BN_ALU_SRC_VALUE]};
    const uint32_t x_mul_value[2] = {sdp[NVDLA_SDP_D_DP_BS_MUL_SRC_VALUE],
                                     sdp[NVDLA_SDP_D_DP_BN_MUL_SRC_VALUE]};
    for (int i = 0; i < 2; ++i) {
        XStage& x = *xs[i];
        const uint32_t c = x_cfg[i];
        x.enabled = NVDLA_FIELD_GET(SDP, D_DP_BS_CFG, BS_BYPASS, c) == 0;
        x.alu_bypass = NVDLA_FIELD_GET(SDP, D_DP_BS_CFG, BS_ALU_BYPASS, c) != 0;
        x.alu_algo = NVDLA_FIELD_GET(SDP, D_DP_BS_CFG, BS_ALU_ALGO, c);
        x.mul_bypass = NVDLA_FIELD_GET(SDP, D_DP_BS_CFG, BS_MUL_BYPASS, c) != 0;
        x.prelu = NVDLA_FIELD_GET(SDP, D_DP_BS_CFG, BS_MUL_PRELU, c) != 0;
        x.relu_bypass = NVDLA_FIELD_GET(SDP, D_DP_BS_CFG, BS_RELU_BYPASS, c) != 0;
        x.alu_from_memory = NVDLA_FIELD_GET(SDP, D_DP_BS_ALU_CFG, BS_ALU_SRC, x_alu_cfg[i]) != 0;
        x.alu_shift = NVDLA_FIELD_GET(SDP, D_DP_BS_ALU_CFG, BS_ALU_SHIFT_VALUE, x_alu_cfg[i]);
        x.mul_from_memory = NVDLA_FIELD_GET(SDP, D_DP_BS_MUL_CFG, BS_MUL_SRC, x_mul_cfg[i]) != 0;
        // The field has 8 bits; the truncation takes the low 6 (sdp_hls_wrapper.cpp:63,
        // NV_NVDLA_SDP_HLS_X_int_trt.v: cfg_mul_shift_value[5:0]).
        x.mul_shift = NVDLA_FIELD_GET(SDP, D_DP_BS_MUL_CFG, BS_MUL_SHIFT_VALUE, x_mul_cfg[i]) & 63u;
        x.alu_operand = static_cast<int16_t>(
            NVDLA_FIELD_GET(SDP, D_DP_BS_ALU_SRC_VALUE, BS_ALU_OPERAND, x_alu_value[i]));
        x.mul_operand = static_cast<int16_t>(
            NVDLA_FIELD_GET(SDP, D_DP_BS_MUL_SRC_VALUE, BS_MUL_OPERAND, x_mul_value[i]));
    }

    YStage& y = s.ew;
    const uint32_t ew_cfg = sdp[NVDLA_SDP_D_DP_EW_CFG];
    // Configurations built without the element-wise stage (nv_small, nv_small_256,
    // nv_medium_512: SDP_EW_DISABLE, SDP_LUT_DISABLE) force it off whatever the registers say
    // (master RTL NV_NVDLA_SDP_core.v, cfg_ew_en); see docs/emu/sdp.md.
    y.enabled = NVDLA_REG_FIELD(SDP, D_DP_EW_CFG, EW_BYPASS, sdp) == 0 && has(NVDLA_FEATURE_SDP_EW);
    y.alu_bypass = NVDLA_FIELD_GET(SDP, D_DP_EW_CFG, EW_ALU_BYPASS, ew_cfg) != 0;
    y.alu_algo = NVDLA_FIELD_GET(SDP, D_DP_EW_CFG, EW_ALU_ALGO, ew_cfg);
    y.mul_bypass = NVDLA_FIELD_GET(SDP, D_DP_EW_CFG, EW_MUL_BYPASS, ew_cfg) != 0;
    y.prelu = NVDLA_FIELD_GET(SDP, D_DP_EW_CFG, EW_MUL_PRELU, ew_cfg) != 0;
    y.lut = y.enabled && has(NVDLA_FEATURE_SDP_LUT) &&
            NVDLA_FIELD_GET(SDP, D_DP_EW_CFG, EW_LUT_BYPASS, ew_cfg) == 0;
    y.alu_from_memory = NVDLA_REG_FIELD(SDP, D_DP_EW_ALU_CFG, EW_ALU_SRC, sdp) != 0;
    y.alu_cvt.bypass = NVDLA_REG_FIELD(SDP, D_DP_EW_ALU_CFG, EW_ALU_CVT_BYPASS, sdp) != 0;
    y.alu_operand = sdp[NVDLA_SDP_D_DP_EW_ALU_SRC_VALUE];
    y.alu_cvt.params.offset = static_cast<int32_t>(sdp[NVDLA_SDP_D_DP_EW_ALU_CVT_OFFSET_VALUE]);
    y.alu_cvt.params.scale = static_cast<int16_t>(
        NVDLA_REG_FIELD(SDP, D_DP_EW_ALU_CVT_SCALE_VALUE, EW_ALU_CVT_SCALE, sdp));
    y.alu_cvt.params.shift =
        NVDLA_REG_FIELD(SDP, D_DP_EW_ALU_CVT_TRUNCATE_VALUE, EW_ALU_CVT_TRUNCATE, sdp);
    y.mul_from_memory = NVDLA_REG_FIELD(SDP, D_DP_EW_MUL_CFG, EW_MUL_SRC, sdp) != 0;
    y.mul_cvt.bypass = NVDLA_REG_FIELD(SDP, D_DP_EW_MUL_CFG, EW_MUL_CVT_BYPASS, sdp) != 0;
    y.mul_operand = sdp[NVDLA_SDP_D_DP_EW_MUL_SRC_VALUE];
    y.mul_cvt.params.offset = static_cast<int32_t>(sdp[NVDLA_SDP_D_DP_EW_MUL_CVT_OFFSET_VALUE]);
    y.mul_cvt.params.scale = static_cast<int16_t>(
        NVDLA_REG_FIELD(SDP, D_DP_EW_MUL_CVT_SCALE_VALUE, EW_MUL_CVT_SCALE, sdp));
    y.mul_cvt.params.shift =
        NVDLA_REG_FIELD(SDP, D_DP_EW_MUL_CVT_TRUNCATE_VALUE, EW_MUL_CVT_TRUNCATE, sdp);
    y.truncate = NVDLA_REG_FIELD(SDP, D_DP_EW_TRUNCATE_VALUE, EW_TRUNCATE, sdp);
    s.eql = y.enabled && !y.alu_bypass && y.alu_algo == NVDLA_SDP_D_DP_EW_CFG_EW_ALU_ALGO_EQL;

    s.nan_to_zero = s.fp() && NVDLA_REG_FIELD(SDP, D_FEATURE_MODE_CFG, NAN_TO_ZERO, sdp) != 0;
    s.cvt.offset = static_cast<int32_t>(sdp[NVDLA_SDP_D_CVT_OFFSET]);
    s.cvt.scale = static_cast<int16_t>(NVDLA_REG_FIELD(SDP, D_CVT_SCALE, CVT_SCALE, sdp));
    s.cvt.shift = NVDLA_REG_FIELD(SDP, D_CVT_SHIFT, CVT_SHIFT, sdp);
}

// In flying mode, CACC's output must be the cube SDP expects.
bool check_flying(Context& ctx, const AccumulatorCube* flying, Settings& s) {
    ErrorMessage msg;
    if (!flying)
        return ctx.error(
            "SDP D_FEATURE_MODE_CFG.FLYING_MODE is ON but no convolution delivered data");
    s.input = s.proc;
    if ((flying->precision == Precision::Fp16) != s.fp()) {
        msg << "SDP D_DATA_FORMAT.PROC_PRECISION is " << name_of(s.proc)
            << " but the convolution it takes its input from is " << name_of(flying->precision);
        return ctx.error(msg.str());
    }
    if (flying->batches != s.batches || flying->channels != s.channels ||
        flying->height != s.height || flying->width != s.width) {
        msg << "SDP D_DATA_CUBE is " << s.width << "x" << s.height << "x" << s.channels << " ("
            << s.batches << " batches) but CACC delivers " << flying->width << "x" << flying->height
            << "x" << flying->channels << " (" << flying->batches << " batches)";
        return ctx.error(msg.str());
    }
    if (flying->channels_last()
            ? flying->channel_stride < s.channels
            : flying->values.size() != size_t(s.batches) * s.channels * s.height * s.width)
        return ctx.error("the convolution delivered " + std::to_string(flying->values.size()) +
                         " values for SDP's cube of " +
                         std::to_string(size_t(s.batches) * s.channels * s.height * s.width));
    return true;
}

// SDP_RDMA's cube and modes, which must agree with SDP's, and the input it reads (offline).
bool decode_rdma_input(Context& ctx, Group sdp, Group rdma, Settings& s) {
    const HwConfig& cfg = ctx.cfg;
    const uint32_t proc_field = NVDLA_REG_FIELD(SDP, D_DATA_FORMAT, PROC_PRECISION, sdp);
    ErrorMessage msg;
    const uint32_t mode = rdma[NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG];
    const uint32_t rdma_width = NVDLA_REG_FIELD(SDP_RDMA, D_DATA_CUBE_WIDTH, WIDTH, rdma) + 1;
    const uint32_t rdma_height = NVDLA_REG_FIELD(SDP_RDMA, D_DATA_CUBE_HEIGHT, HEIGHT, rdma) + 1;
    const uint32_t rdma_channels =
        NVDLA_REG_FIELD(SDP_RDMA, D_DATA_CUBE_CHANNEL, CHANNEL, rdma) + 1;
    if (rdma_width != s.width || rdma_height != s.height || rdma_channels != s.channels) {
        msg << "SDP_RDMA D_DATA_CUBE is " << rdma_width << "x" << rdma_height << "x"
            << rdma_channels << " but SDP D_DATA_CUBE is " << s.width << "x" << s.height << "x"
            << s.channels << "; they must be equal";
        return ctx.error(msg.str());
    }
    const bool rdma_flying = NVDLA_FIELD_GET(SDP_RDMA, D_FEATURE_MODE_CFG, FLYING_MODE, mode) != 0;
    if (rdma_flying != s.flying)
        return ctx.error(std::string("SDP_RDMA D_FEATURE_MODE_CFG.FLYING_MODE is ") +
                         (rdma_flying ? "ON" : "OFF") + " but SDP's is " +
                         (s.flying ? "ON" : "OFF"));
    Precision rdma_proc = Precision::Int8;
    if (!decode_precision(NVDLA_FIELD_GET(SDP_RDMA, D_FEATURE_MODE_CFG, PROC_PRECISION, mode),
                          rdma_proc) ||
        rdma_proc != s.proc) {
        msg << "SDP_RDMA D_FEATURE_MODE_CFG.PROC_PRECISION is "
            << NVDLA_FIELD_GET(SDP_RDMA, D_FEATURE_MODE_CFG, PROC_PRECISION, mode)
            << " but SDP D_DATA_FORMAT.PROC_PRECISION is " << proc_field << "; they must be equal";
        return ctx.error(msg.str());
    }
    const uint32_t rdma_batches =
        NVDLA_FIELD_GET(SDP_RDMA, D_FEATURE_MODE_CFG, BATCH_NUMBER, mode) + 1;
    if (rdma_batches != s.batches) {
        msg << "SDP_RDMA D_FEATURE_MODE_CFG.BATCH_NUMBER is " << rdma_batches - 1
            << " but SDP's is " << s.batches - 1;
        return ctx.error(msg.str());
    }
    if (!s.flying) {
        const uint32_t in_field = NVDLA_FIELD_GET(SDP_RDMA, D_FEATURE_MODE_CFG, IN_PRECISION, mode);
        if (!decode_precision(in_field, s.input))
            return ctx.error(
                "SDP_RDMA D_FEATURE_MODE_CFG.IN_PRECISION is 3; it must be INT8 (0), "
                "INT16 (1) or FP16 (2)");
        if (!supports(cfg, s.input))
            return ctx.error("SDP_RDMA D_FEATURE_MODE_CFG.IN_PRECISION selects " +
                             name_of(s.input) + ", which " + cfg.name + " does not support");
        // The only conversion on the way in is int16 data processed as int8
        // (NV_NVDLA_sdp.cpp SdpRdmaCore is_int16_to_int8).
        if (s.input != s.proc && !(s.input == Precision::Int16 && s.proc == Precision::Int8)) {
            msg << "SDP_RDMA D_FEATURE_MODE_CFG.IN_PRECISION is " << name_of(s.input)
                << " with PROC_PRECISION " << name_of(s.proc)
                << "; the input converts only from int16 to int8";
            return ctx.error(msg.str());
        }
        s.src.port = Dma::port_of(NVDLA_REG_FIELD(SDP_RDMA, D_SRC_DMA_CFG, SRC_RAM_TYPE, rdma));
        s.src.base = Dma::address(rdma[NVDLA_SDP_RDMA_D_SRC_BASE_ADDR_HIGH],
                                  rdma[NVDLA_SDP_RDMA_D_SRC_BASE_ADDR_LOW]);
        s.src.line_stride = rdma[NVDLA_SDP_RDMA_D_SRC_LINE_STRIDE];
        s.src.surface_stride = rdma[NVDLA_SDP_RDMA_D_SRC_SURFACE_STRIDE];
        // The input DMA has no batch stride: every batch reads the same cube
        // (NV_NVDLA_SDP_MRDMA_ig.v, NV_NVDLA_sdp.cpp CMOD_WAR_WG_BATCH).
        s.src.batch_stride = 0;
        s.src.packed = s.width == 1 && s.height == 1;
        s.count_input_nan_inf =
            s.input == Precision::Fp16 &&
            NVDLA_REG_FIELD(SDP_RDMA, D_PERF_ENABLE, PERF_NAN_INF_COUNT_EN, rdma) != 0;
    }

    return true;
}

// ---- Operands from memory and SDP_RDMA ----
bool decode_operands(Context& ctx, Group sdp, Group rdma, const AccumulatorCube* flying,
                     Settings& s) {
    const YStage& y = s.ew;
    const bool ew_alu_mem = y.enabled && !y.alu_bypass && y.alu_from_memory;
    const bool ew_mul_mem = y.enabled && !y.mul_bypass && y.mul_from_memory;
    const bool any_operand = needs(s.bs, true) || needs(s.bs, false) || needs(s.bn, true) ||
                             needs(s.bn, false) || ew_alu_mem || ew_mul_mem;
    const bool uses_rdma = !s.flying || any_operand;
    if (uses_rdma && !rdma.valid())
        return ctx.error("SDP reads through SDP_RDMA but SDP_RDMA has no enabled register group");

    if (s.flying && !check_flying(ctx, flying, s)) return false;

    if (uses_rdma) {
        if (!decode_rdma_input(ctx, sdp, rdma, s)) return false;

        if (!decode_operand_dma(
                ctx, rdma[NVDLA_SDP_RDMA_D_BRDMA_CFG], rdma[NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW],
                rdma[NVDLA_SDP_RDMA_D_BS_BASE_ADDR_HIGH], rdma[NVDLA_SDP_RDMA_D_BS_LINE_STRIDE],
                rdma[NVDLA_SDP_RDMA_D_BS_SURFACE_STRIDE], "BRDMA", s.bs_dma) ||
            !decode_operand_dma(
                ctx, rdma[NVDLA_SDP_RDMA_D_NRDMA_CFG], rdma[NVDLA_SDP_RDMA_D_BN_BASE_ADDR_LOW],
                rdma[NVDLA_SDP_RDMA_D_BN_BASE_ADDR_HIGH], rdma[NVDLA_SDP_RDMA_D_BN_LINE_STRIDE],
                rdma[NVDLA_SDP_RDMA_D_BN_SURFACE_STRIDE], "NRDMA", s.bn_dma) ||
            !decode_operand_dma(
                ctx, rdma[NVDLA_SDP_RDMA_D_ERDMA_CFG], rdma[NVDLA_SDP_RDMA_D_EW_BASE_ADDR_LOW],
                rdma[NVDLA_SDP_RDMA_D_EW_BASE_ADDR_HIGH], rdma[NVDLA_SDP_RDMA_D_EW_LINE_STRIDE],
                rdma[NVDLA_SDP_RDMA_D_EW_SURFACE_STRIDE], "ERDMA", s.ew_dma) ||
            !check_operand_source(ctx, "X1 (BS)", "BRDMA", s.bs_dma, needs(s.bs, true),
                                  needs(s.bs, false)) ||
            !check_operand_source(ctx, "X2 (BN)", "NRDMA", s.bn_dma, needs(s.bn, true),
                                  needs(s.bn, false)) ||
            !check_operand_source(ctx, "Y (EW)", "ERDMA", s.ew_dma, ew_alu_mem, ew_mul_mem))
            return false;
    }
    // Only what the datapath takes is read, even when a DMA is enabled for more.
    s.bs_dma.take_alu = needs(s.bs, true);
    s.bs_dma.take_mul = needs(s.bs, false);
    s.bn_dma.take_alu = needs(s.bn, true);
    s.bn_dma.take_mul = needs(s.bn, false);
    s.ew_dma.take_alu = ew_alu_mem;
    s.ew_dma.take_mul = ew_mul_mem;
    for (OperandDma* dma : {&s.bs_dma, &s.bn_dma, &s.ew_dma})
        dma->enabled = dma->take_alu || dma->take_mul;
    return true;
}

// ---- Channel groups, output precision and destination ----
bool decode_output(Context& ctx, Group sdp, Settings& s) {
    const bool winograd = NVDLA_REG_FIELD(SDP, D_FEATURE_MODE_CFG, WINOGRAD, sdp) != 0;
    const bool widening = s.proc == Precision::Int8 && s.output != Precision::Int8;
    ErrorMessage msg;
    s.group = s.atom / bytes_per_element(s.proc);
    s.in_lanes = s.atom / bytes_per_element(s.input);
    s.out_lanes = s.atom / bytes_per_element(s.output);
    s.groups = (s.channels + s.group - 1) / s.group;

    // ---- Output precision and destination ----
    const bool converts = s.input != s.proc || widening;
    if (converts && (s.batches > 1 || winograd))
        return ctx.error("SDP converts precision (" + name_of(s.input) + " in, " + name_of(s.proc) +
                         " processing, " + name_of(s.output) +
                         " out), which the hardware cannot do in batch or Winograd mode");
    if (s.eql && (s.batches > 1 || winograd))
        return ctx.error(
            "SDP Y ALU is in EQL mode, which the hardware cannot run in batch or Winograd "
            "mode");
    if (s.to_pdp) {
        if (s.eql)
            return ctx.error(
                "SDP Y ALU is in EQL mode, which writes nothing, but OUTPUT_DST is PDP");
        if (s.output != s.proc || converts)
            return ctx.error(
                "SDP D_FEATURE_MODE_CFG.OUTPUT_DST is PDP with a precision conversion (" +
                name_of(s.proc) + " to " + name_of(s.output) + "), which the hardware cannot do");
        if (s.batches > 1 || winograd)
            return ctx.error(
                "SDP D_FEATURE_MODE_CFG.OUTPUT_DST is PDP, which the hardware cannot do in "
                "batch or Winograd mode");
        // The hand-off to PDP holds the whole cube (a limit of the model, not the hardware).
        if (uint64_t(s.channels) * s.height * s.width > kMaxPdpElements) {
            msg << "SDP D_DATA_CUBE " << s.width << "x" << s.height << "x" << s.channels
                << " sent to PDP exceeds the model's " << kMaxPdpElements << " elements";
            return ctx.error(msg.str());
        }
    }
    s.dst.port = Dma::port_of(NVDLA_REG_FIELD(SDP, D_DST_DMA_CFG, DST_RAM_TYPE, sdp));
    s.dst.base =
        Dma::address(sdp[NVDLA_SDP_D_DST_BASE_ADDR_HIGH], sdp[NVDLA_SDP_D_DST_BASE_ADDR_LOW]);
    s.dst.line_stride = sdp[NVDLA_SDP_D_DST_LINE_STRIDE];
    s.dst.surface_stride = sdp[NVDLA_SDP_D_DST_SURFACE_STRIDE];
    s.dst.batch_stride = sdp[NVDLA_SDP_D_DST_BATCH_STRIDE];
    // A single-batch 1 x 1 cube is written as one run of atoms (NV_NVDLA_SDP_WDMA_cmd.v
    // cfg_mode_1x1_nbatch).
    s.dst.packed = s.width == 1 && s.height == 1 && s.batches == 1;
    return true;
}

// ---- Counters ----
void decode_counters(Group sdp, Settings& s) {
    const YStage& y = s.ew;
    const uint32_t perf = sdp[NVDLA_SDP_D_PERF_ENABLE];
    s.count_saturation = NVDLA_FIELD_GET(SDP, D_PERF_ENABLE, PERF_SAT_EN, perf) != 0;
    s.count_lut = y.lut && NVDLA_FIELD_GET(SDP, D_PERF_ENABLE, PERF_LUT_EN, perf) != 0;
    s.count_output_nan = s.output == Precision::Fp16 &&
                         NVDLA_FIELD_GET(SDP, D_PERF_ENABLE, PERF_NAN_INF_COUNT_EN, perf) != 0;
}

// ---- LUT (single registers) ----
void decode_lut(Group single, Settings& s) {
    if (!s.ew.lut) return;
    LutRegisters r = NVDLA_LUT_REGISTERS(SDP, single);
    r.le_start = static_cast<int32_t>(single[NVDLA_SDP_S_LUT_LE_START]);
    r.le_end = static_cast<int32_t>(single[NVDLA_SDP_S_LUT_LE_END]);
    r.lo_start = static_cast<int32_t>(single[NVDLA_SDP_S_LUT_LO_START]);
    r.lo_end = static_cast<int32_t>(single[NVDLA_SDP_S_LUT_LO_END]);
    // The table entries are filled in by the unit (they live in its LUT port, not in registers).
    s.lut = lut_settings(r);
}

}  // namespace

bool decode(Context& ctx, Group single, Group sdp, Group rdma, const AccumulatorCube* flying,
            Settings& s) {
    if (!decode_mode(ctx, sdp, s)) return false;
    decode_stages(ctx.cfg, sdp, s);
    if (!decode_operands(ctx, sdp, rdma, flying, s) || !decode_output(ctx, sdp, s)) return false;
    decode_counters(sdp, s);
    decode_lut(single, s);
    return true;
}

}  // namespace nvdla::emu::sdp
