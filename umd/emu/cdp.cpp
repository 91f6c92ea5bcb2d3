// CDP and CDP_RDMA: local response normalisation across channels as the nv_full C model computes
// it (cmod/cdp/NV_NVDLA_cdp.cpp, hls/cdp_libs, hls_wrapper/cdp_hls_wrapper.cpp). For every
// element: the input convertor, the sum of the squares of NORMALZ_LEN channels around it
// (channels outside the cube read as DATIN_OFFSET, i.e. zero after the convertor), the LUT, the
// multiplication by the converted element, the output convertor. docs/emu/cdp.md describes the
// registers honoured and the choices made.
#include "emu/cdp.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <string>
#include <vector>

#include "emu/lut_port.hpp"
#include "nvdla/hw_config.hpp"
#include "nvdla/precision/convertor.hpp"
#include "nvdla/precision/lut.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::emu {
namespace {

using precision::ConvertorParams;
using precision::ConvertorShape;
using precision::LutProgram;

constexpr uint32_t kMaxRadius = 4;      // NORMALZ_LEN 9: four channels on each side
constexpr uint32_t kChunkColumns = 64;  // columns read, computed and written at a time

struct Config {
    Precision precision = Precision::Int8;
    uint32_t width = 0, height = 0, channels = 0;
    uint32_t atom = 32, lanes = 32, surfaces = 1;
    uint32_t radius = 1;  // channels on each side of the centre
    bool sqsum_bypass = false, mul_bypass = false, nan_to_zero = false;
    ConvertorParams in_cvt, out_cvt;
    int64_t outside = 0;  // what channels outside the cube are after the input convertor
    LutProgram lut;
    uint64_t src = 0, src_line = 0, src_surface = 0;
    uint64_t dst = 0, dst_line = 0, dst_surface = 0;
    MemoryPort src_port = MemoryPort::Primary, dst_port = MemoryPort::Primary;
};

struct Counters {
    uint32_t nan_input = 0, inf_input = 0, nan_output = 0, saturation = 0;
    precision::LutStatistics lut;
};

uint32_t fp32_bits(float f) {
    return std::bit_cast<uint32_t>(f);
}

// One operation, a line and kChunkColumns columns at a time: every surface of the chunk is
// read, each column's channels go through the datapath, every surface is written back.
class Normalisation {
  public:
    Normalisation(Context& ctx, const Config& c) : ctx_(ctx), c_(c) {
        const size_t total = size_t(c.surfaces) * c.lanes;
        in_.resize(size_t(c.surfaces) * kChunkColumns * c.atom);
        out_.resize(in_.size());
        x_.assign(total + 2 * kMaxRadius, 0);
        square_.assign(total + 2 * kMaxRadius, 0);
    }

    void run() {
        for (uint32_t h = 0; h < c_.height; ++h) {
            for (uint32_t w0 = 0; w0 < c_.width; w0 += kChunkColumns) {
                const uint32_t n = std::min(kChunkColumns, c_.width - w0);
                const size_t bytes = size_t(n) * c_.atom;
                for (uint32_t s = 0; s < c_.surfaces; ++s) {
                    const uint64_t at = c_.src + uint64_t(h) * c_.src_line +
                                        uint64_t(s) * c_.src_surface + uint64_t(w0) * c_.atom;
                    ctx_.dma.read(NVDLA_UNIT_CDP_RDMA, c_.src_port, at, &in_[s * bytes], bytes);
                }
                if (c_.precision == Precision::Fp16) count_input(n);
                for (uint32_t w = 0; w < n; ++w) {
                    if (c_.precision == Precision::Fp16)
                        column_fp(n, w);
                    else
                        column_int(n, w);
                }
                for (uint32_t s = 0; s < c_.surfaces; ++s) {
                    const uint64_t at = c_.dst + uint64_t(h) * c_.dst_line +
                                        uint64_t(s) * c_.dst_surface + uint64_t(w0) * c_.atom;
                    ctx_.dma.write(NVDLA_UNIT_CDP, c_.dst_port, at, &out_[s * bytes], bytes);
                }
            }
        }
    }

    Counters counters;

  private:
    // Byte offset of channel ch of column w in the chunk buffers.
    size_t offset(uint32_t n, uint32_t w, uint32_t ch) const {
        const uint32_t element = bytes_per_element(c_.precision);
        return size_t(ch / c_.lanes) * n * c_.atom + size_t(w) * c_.atom +
               (ch % c_.lanes) * element;
    }
    uint16_t load16(size_t at) const { return static_cast<uint16_t>(in_[at] | (in_[at + 1] << 8)); }

    // CDP_RDMA counts the NaNs and infinities of every fp16 lane it reads (padding lanes too).
    void count_input(uint32_t n) {
        const size_t lanes = size_t(c_.surfaces) * n * c_.lanes;
        for (size_t i = 0; i < lanes; ++i) {
            const uint16_t v = load16(2 * i);
            if ((v & 0x7c00u) != 0x7c00u) continue;
            if (v & 0x3ffu)
                ++counters.nan_input;
            else
                ++counters.inf_input;
        }
    }

    // lookup_lut_int8 / lookup_lut (int16) for every channel of one column.
    void column_int(uint32_t n, uint32_t w) {
        const bool int8 = c_.precision == Precision::Int8;
        const ConvertorShape& in_shape =
            int8 ? precision::kCdpInputConvertorInt8 : precision::kCdpInputConvertorInt16;
        const ConvertorShape& out_shape =
            int8 ? precision::kCdpOutputConvertorInt8 : precision::kCdpOutputConvertorInt16;
        const uint32_t total = c_.surfaces * c_.lanes;
        for (uint32_t i = 0; i < total + 2 * kMaxRadius; ++i) {
            const int64_t ch = int64_t(i) - kMaxRadius;
            int64_t x = c_.outside;
            if (ch >= 0 && ch < c_.channels) {
                const size_t at = offset(n, w, uint32_t(ch));
                const int64_t raw = int8 ? int64_t(int8_t(in_[at])) : int64_t(int16_t(load16(at)));
                x = precision::convert(raw, c_.in_cvt, in_shape).value;
            }
            x_[i] = x;
            square_[i] = x * x;
        }
        for (uint32_t ch = 0; ch < total; ++ch) {
            const size_t centre = ch + kMaxRadius;
            int64_t sum = 0;
            if (c_.sqsum_bypass) {
                sum = x_[centre];
            } else {
                for (size_t j = centre - c_.radius; j <= centre + c_.radius; ++j) sum += square_[j];
            }
            const precision::LutIntLookup lut =
                precision::cdp_lut_lookup_int(c_.lut, sum, c_.precision);
            counters.lut.count_cdp(lut.outcome);
            const int64_t y = c_.mul_bypass ? lut.value : lut.value * x_[centre];
            const int64_t out = precision::convert(y, c_.out_cvt, out_shape).value;
            counters.saturation +=
                precision::cmodel_convertor_saturation_flag(y, c_.out_cvt, out_shape) ? 1 : 0;
            const size_t at = offset(n, w, ch);
            out_[at] = static_cast<uint8_t>(out);
            if (!int8) out_[at + 1] = static_cast<uint8_t>(out >> 8);
        }
    }

    // HLS_CDP_lookup_fp16 for every channel of one column: Fp16ToFp17, fp32 squares summed in
    // the C model's tree order, the fp LUT, an fp17 multiplication, Fp17ToFp16.
    void column_fp(uint32_t n, uint32_t w) {
        using namespace precision;
        const uint32_t total = c_.surfaces * c_.lanes;
        for (uint32_t i = 0; i < total + 2 * kMaxRadius; ++i) {
            const int64_t ch = int64_t(i) - kMaxRadius;
            uint16_t raw = 0;  // the fp16 pipeline pads with +0 (DATIN_OFFSET is ignored)
            if (ch >= 0 && ch < c_.channels) raw = load16(offset(n, w, uint32_t(ch)));
            if (c_.nan_to_zero) raw = fp16_flush_nan(raw);
            const uint32_t x17 = fp16_to_fp17(raw);
            const uint32_t x32 = fp17_to_fp32(x17);
            x_[i] = x17;
            square_[i] = c_.sqsum_bypass ? x32 : fp32_mul(x32, x32);
        }
        for (uint32_t ch = 0; ch < total; ++ch) {
            const size_t centre = ch + kMaxRadius;
            auto sq = [&](int d) { return static_cast<uint32_t>(square_[centre + d]); };
            uint32_t sum = sq(0);
            if (!c_.sqsum_bypass) {
                sum = fp32_add(fp32_add(sq(-1), sq(1)), sq(0));
                for (int d = 2; d <= int(c_.radius); ++d)
                    sum = fp32_add(sum, fp32_add(sq(-d), sq(d)));
            }
            const LutFpLookup lut = cdp_lut_lookup_fp(c_.lut, std::bit_cast<float>(sum));
            counters.lut.count_cdp(lut.outcome);
            const uint32_t result = fp32_to_fp17(fp32_bits(lut.value));
            const auto x17 = static_cast<uint32_t>(x_[centre]);
            const uint32_t y =
                !c_.mul_bypass ? fp17_mul(x17, result) : (fp17::is_nan(x17) ? x17 : result);
            const uint16_t out = fp17_to_fp16(y);
            counters.nan_output += fp16_is_nan(out) ? 1 : 0;
            const size_t at = offset(n, w, ch);
            out_[at] = static_cast<uint8_t>(out);
            out_[at + 1] = static_cast<uint8_t>(out >> 8);
        }
    }

    Context& ctx_;
    const Config& c_;
    std::vector<uint8_t> in_, out_;    // surfaces x chunk columns x atom
    std::vector<int64_t> x_, square_;  // one column's channels, kMaxRadius padding each side
};

// The LUT's tables live in the unit's port (S_LUT_ACCESS_DATA); the rest is in the single
// registers, its start and end points 38 bits wide (HIGH 6 bits, LOW 32), as the evaluators
// take them.
LutProgram lut_program(Group single, const LutPort& port) {
    const auto wide = [&](uint32_t high, uint32_t low) {
        return static_cast<int64_t>((uint64_t(single[high]) << 32) | single[low]);
    };
    LutRegisters r = NVDLA_LUT_REGISTERS(CDP, single);
    r.le_start = wide(NVDLA_CDP_S_LUT_LE_START_HIGH, NVDLA_CDP_S_LUT_LE_START_LOW);
    r.le_end = wide(NVDLA_CDP_S_LUT_LE_END_HIGH, NVDLA_CDP_S_LUT_LE_END_LOW);
    r.lo_start = wide(NVDLA_CDP_S_LUT_LO_START_HIGH, NVDLA_CDP_S_LUT_LO_START_LOW);
    r.lo_end = wide(NVDLA_CDP_S_LUT_LO_END_HIGH, NVDLA_CDP_S_LUT_LO_END_LOW);
    LutProgram p = lut_settings(r);
    p.le = port.le();
    p.lo = port.lo();
    return p;
}

}  // namespace

struct Cdp::State {
    LutPort lut{LutPort::kCdp};
};

Cdp::Cdp() : state_(std::make_unique<State>()) {}
Cdp::~Cdp() = default;

void Cdp::reset() {
    state_->lut.reset();
}

bool Cdp::handle_write(Group, uint32_t offset, uint32_t value) {
    return state_->lut.csb_write(offset, value, NVDLA_CDP_S_LUT_ACCESS_CFG,
                                 NVDLA_CDP_S_LUT_ACCESS_DATA);
}

std::optional<uint32_t> Cdp::handle_read(Group, uint32_t offset) {
    if (offset == NVDLA_CDP_S_LUT_ACCESS_CFG) return state_->lut.cfg();
    if (offset == NVDLA_CDP_S_LUT_ACCESS_DATA) return state_->lut.read_data();
    return std::nullopt;
}

namespace {

// CDP and CDP_RDMA registers of one operation, decoded and checked (the LUT apart).
bool decode(Context& ctx, Group cdp, Group rdma, Config& c) {
    const uint32_t format = NVDLA_REG_FIELD(CDP, D_DATA_FORMAT, INPUT_DATA_TYPE, cdp);
    const uint32_t rdma_format = NVDLA_REG_FIELD(CDP_RDMA, D_DATA_FORMAT, INPUT_DATA, rdma);
    if (format > 2)
        return ctx.error(
            "CDP D_DATA_FORMAT.INPUT_DATA_TYPE is 3, a reserved value (0 int8, "
            "1 int16, 2 fp16)");
    if (rdma_format != format)
        return ctx.error("CDP_RDMA D_DATA_FORMAT.INPUT_DATA is " + std::to_string(rdma_format) +
                         ", but CDP D_DATA_FORMAT.INPUT_DATA_TYPE is " + std::to_string(format));
    c.precision = static_cast<Precision>(format);
    if (!supports(ctx.cfg, c.precision))
        return ctx.error("CDP D_DATA_FORMAT.INPUT_DATA_TYPE selects " +
                         std::string(to_string(c.precision)) + ", which " + ctx.cfg.name +
                         " does not support");
    c.src_port = Dma::port_of(NVDLA_REG_FIELD(CDP_RDMA, D_SRC_DMA_CFG, SRC_RAM_TYPE, rdma));
    c.dst_port = Dma::port_of(NVDLA_REG_FIELD(CDP, D_DST_DMA_CFG, DST_RAM_TYPE, cdp));
    if ((c.src_port == MemoryPort::Secondary || c.dst_port == MemoryPort::Secondary) &&
        !nvdla_hw_has(&ctx.cfg, NVDLA_FEATURE_SECONDARY_MEMIF))
        return ctx.error(std::string("CDP_RDMA D_SRC_DMA_CFG or CDP D_DST_DMA_CFG selects CV "
                                     "(0), but ") +
                         ctx.cfg.name + " has no secondary memory interface");

    // The cube is CDP_RDMA's: the C model hands its size to the datapath and the write DMA.
    c.width = NVDLA_REG_FIELD(CDP_RDMA, D_DATA_CUBE_WIDTH, WIDTH, rdma) + 1;
    c.height = NVDLA_REG_FIELD(CDP_RDMA, D_DATA_CUBE_HEIGHT, HEIGHT, rdma) + 1;
    c.channels = NVDLA_REG_FIELD(CDP_RDMA, D_DATA_CUBE_CHANNEL, CHANNEL, rdma) + 1;
    c.atom = ctx.cfg.atom_bytes;
    c.lanes = c.atom / bytes_per_element(c.precision);
    c.surfaces = (c.channels + c.lanes - 1) / c.lanes;
    c.src = Dma::address(rdma[NVDLA_CDP_RDMA_D_SRC_BASE_ADDR_HIGH],
                         rdma[NVDLA_CDP_RDMA_D_SRC_BASE_ADDR_LOW]);
    c.src_line = rdma[NVDLA_CDP_RDMA_D_SRC_LINE_STRIDE];
    c.src_surface = rdma[NVDLA_CDP_RDMA_D_SRC_SURFACE_STRIDE];
    c.dst = Dma::address(cdp[NVDLA_CDP_D_DST_BASE_ADDR_HIGH], cdp[NVDLA_CDP_D_DST_BASE_ADDR_LOW]);
    c.dst_line = cdp[NVDLA_CDP_D_DST_LINE_STRIDE];
    c.dst_surface = cdp[NVDLA_CDP_D_DST_SURFACE_STRIDE];

    c.radius = NVDLA_REG_FIELD(CDP, D_LRN_CFG, NORMALZ_LEN, cdp) + 1;
    c.sqsum_bypass = NVDLA_REG_FIELD(CDP, D_FUNC_BYPASS, SQSUM_BYPASS, cdp) != 0;
    c.mul_bypass = NVDLA_REG_FIELD(CDP, D_FUNC_BYPASS, MUL_BYPASS, cdp) != 0;
    c.nan_to_zero = NVDLA_REG_FIELD(CDP, D_NAN_FLUSH_TO_ZERO, NAN_TO_ZERO, cdp) != 0;
    const auto in_offset =
        static_cast<int16_t>(NVDLA_REG_FIELD(CDP, D_DATIN_OFFSET, DATIN_OFFSET, cdp));
    c.in_cvt = {in_offset,
                static_cast<int16_t>(NVDLA_REG_FIELD(CDP, D_DATIN_SCALE, DATIN_SCALE, cdp)),
                NVDLA_REG_FIELD(CDP, D_DATIN_SHIFTER, DATIN_SHIFTER, cdp)};
    // Channels outside the cube read as DATIN_OFFSET (int8: its low byte), which the input
    // convertor turns into zero.
    if (c.precision == Precision::Int8)
        c.outside =
            precision::convert(int8_t(in_offset), c.in_cvt, precision::kCdpInputConvertorInt8)
                .value;
    else if (c.precision == Precision::Int16)
        c.outside =
            precision::convert(in_offset, c.in_cvt, precision::kCdpInputConvertorInt16).value;
    c.out_cvt = {static_cast<int32_t>(NVDLA_REG_FIELD(CDP, D_DATOUT_OFFSET, DATOUT_OFFSET, cdp)),
                 static_cast<int16_t>(NVDLA_REG_FIELD(CDP, D_DATOUT_SCALE, DATOUT_SCALE, cdp)),
                 NVDLA_REG_FIELD(CDP, D_DATOUT_SHIFTER, DATOUT_SHIFTER, cdp)};
    return true;
}

}  // namespace

void Cdp::execute(Context& ctx, Group single, Group cdp, Group rdma) {
    static constexpr std::array<uint32_t, 9> kCounters = {
        NVDLA_CDP_D_NAN_INPUT_NUM,   NVDLA_CDP_D_INF_INPUT_NUM,   NVDLA_CDP_D_NAN_OUTPUT_NUM,
        NVDLA_CDP_D_OUT_SATURATION,  NVDLA_CDP_D_PERF_LUT_UFLOW,  NVDLA_CDP_D_PERF_LUT_OFLOW,
        NVDLA_CDP_D_PERF_LUT_HYBRID, NVDLA_CDP_D_PERF_LUT_LE_HIT, NVDLA_CDP_D_PERF_LUT_LO_HIT};
    for (uint32_t reg : kCounters) cdp.set(reg, 0);  // reset_stats_regs

    Config c;
    if (!decode(ctx, cdp, rdma, c)) return;
    c.lut = lut_program(single, state_->lut);

    Normalisation op(ctx, c);
    op.run();
    const Counters& n = op.counters;
    cdp.set(NVDLA_CDP_D_NAN_INPUT_NUM, n.nan_input);
    cdp.set(NVDLA_CDP_D_INF_INPUT_NUM, n.inf_input);
    cdp.set(NVDLA_CDP_D_NAN_OUTPUT_NUM, n.nan_output);
    cdp.set(NVDLA_CDP_D_OUT_SATURATION, n.saturation);
    cdp.set(NVDLA_CDP_D_PERF_LUT_UFLOW, n.lut.underflow);
    cdp.set(NVDLA_CDP_D_PERF_LUT_OFLOW, n.lut.overflow);
    cdp.set(NVDLA_CDP_D_PERF_LUT_HYBRID, n.lut.hybrid);
    cdp.set(NVDLA_CDP_D_PERF_LUT_LE_HIT, n.lut.le_hit);
    cdp.set(NVDLA_CDP_D_PERF_LUT_LO_HIT, n.lut.lo_hit);
}

}  // namespace nvdla::emu
