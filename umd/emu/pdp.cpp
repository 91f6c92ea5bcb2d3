// PDP and PDP_RDMA: planar pooling as the nv_full C model computes it (cmod/pdp/NV_NVDLA_pdp.cpp,
// hls_wrapper/pdp_hls_wrapper.cpp). Each output element is pooled in two passes: along W over
// the data columns of its kernel window (LineOperation, the padding added once for the missing
// columns), then along H over those row results (PoolingStage0Calc, the padding of missing rows
// multiplied by the kernel width), then averaged with the reciprocal registers
// (PoolingStage1Calc). docs/emu/pdp.md describes the registers honoured and the choices made.
#include "emu/pdp.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <immintrin.h>

#include "emu/isa.hpp"
#include "nvdla/hw_config.hpp"
#include "nvdla/precision/convertor.hpp"
#include "nvdla/precision/integer.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::emu {
namespace {

using precision::fp17_add;
using precision::fp17_mul;

enum class Method : uint8_t { Average, Max, Min };

constexpr uint32_t kMaxKernel = 8;  // KERNEL_WIDTH/HEIGHT enumerate 1..8 (KERNEL_WIDTH_MAX)
constexpr uint32_t kPadValues = 7;  // PAD_VALUE_1X .. PAD_VALUE_7X

// The part of the width the hardware pools in one go: the whole width, or one of the
// SPLIT_NUM + 1 pieces of a split-width operation.
struct Split {
    int64_t in_offset = 0;  // first input column, counted from the cube's first column
    uint32_t in_width = 0;  // input columns, including the overlap with the previous piece
    uint32_t pad_left = 0, pad_right = 0;
    uint32_t out_offset = 0, out_width = 0;
};

// Where PDP_RDMA reads one split from.
struct RdmaSplit {
    uint64_t base = 0;
    uint32_t width = 0;
};

struct Config {
    Precision precision = Precision::Int8;
    Method method = Method::Average;
    bool flying = false;
    bool nan_to_zero = false;
    uint32_t height = 0, channels = 0, out_height = 0;
    uint32_t kernel_w = 1, kernel_h = 1, stride_w = 1, stride_h = 1;
    uint32_t pad_top = 0, pad_bottom = 0;
    std::array<int32_t, kPadValues> pad_int{};    // n x padding value, sign-extended
    std::array<uint32_t, kPadValues> pad_fp17{};  // the same as fp17 patterns (fp16 pipeline)
    uint32_t recip_w = 0, recip_h = 0;
    std::vector<Split> splits;
    uint32_t atom = 32, lanes = 32, surfaces = 1;
    unsigned acc_bits = 16;  // the accumulators: 16 bits for int8, 32 for int16
    uint64_t dst_base = 0, dst_line = 0, dst_surface = 0;
    MemoryPort dst_port = MemoryPort::Primary;
    // Offline: PDP_RDMA's reads.
    std::vector<RdmaSplit> reads;
    uint64_t src_line = 0, src_surface = 0;
    MemoryPort src_port = MemoryPort::Primary;
};

// The data a kernel window covers along one axis, and the padding it needs.
struct Window {
    uint32_t first = 0, count = 0;  // data positions [first, first + count)
    uint32_t pads = 0;              // window positions outside the data
    bool pad_before = false;        // padding on the left/top (the C model's "left" slot)
};

Window window_at(uint32_t index, uint32_t stride, uint32_t pad_before, uint32_t kernel,
                 uint32_t extent) {
    const int64_t start = int64_t(index) * stride - pad_before;
    const int64_t first = std::max<int64_t>(start, 0);
    const int64_t last = std::min<int64_t>(start + kernel - 1, int64_t(extent) - 1);
    Window w;
    w.first = static_cast<uint32_t>(first);
    w.count = static_cast<uint32_t>(last - first + 1);
    w.pads = kernel - w.count;
    w.pad_before = start < 0;
    return w;
}

// Whether windows 0 .. count-1 all cover at least one data position (the C model produces an
// output only from its data elements and never finishes one without any).
bool windows_reach_data(uint32_t count, uint32_t stride, uint32_t pad_before, uint32_t kernel,
                        uint32_t extent) {
    if (count == 0) return true;
    const int64_t first_end = int64_t(kernel) - 1 - pad_before;
    const int64_t last_start = int64_t(count - 1) * stride - pad_before;
    return first_end >= 0 && last_start <= int64_t(extent) - 1;
}

class ConfigReader {
  public:
    ConfigReader(Context& ctx, Group pdp, Group rdma, const ElementCube* flying)
        : ctx_(ctx), pdp_(pdp), rdma_(rdma), flying_(flying) {}

    std::optional<Config> read() {
        Config c;
        if (!read_format(c) || !read_kernel(c) || !read_splits(c) || !check_windows(c))
            return std::nullopt;
        read_padding(c);
        c.recip_w = NVDLA_REG_FIELD(PDP, D_RECIP_KERNEL_WIDTH, RECIP_KERNEL_WIDTH, pdp_);
        c.recip_h = NVDLA_REG_FIELD(PDP, D_RECIP_KERNEL_HEIGHT, RECIP_KERNEL_HEIGHT, pdp_);
        c.nan_to_zero = NVDLA_REG_FIELD(PDP, D_NAN_FLUSH_TO_ZERO, NAN_TO_ZERO, pdp_) != 0;
        c.dst_base =
            Dma::address(pdp_[NVDLA_PDP_D_DST_BASE_ADDR_HIGH], pdp_[NVDLA_PDP_D_DST_BASE_ADDR_LOW]);
        c.dst_line = pdp_[NVDLA_PDP_D_DST_LINE_STRIDE];
        c.dst_surface = pdp_[NVDLA_PDP_D_DST_SURFACE_STRIDE];
        if (!port(NVDLA_REG_FIELD(PDP, D_DST_RAM_CFG, DST_RAM_TYPE, pdp_),
                  "PDP D_DST_RAM_CFG.DST_RAM_TYPE", c.dst_port))
            return std::nullopt;
        if (c.flying ? !check_flying(c) : !read_rdma(c)) return std::nullopt;
        return c;
    }

  private:
    bool port(uint32_t ram_type, const char* reg, MemoryPort& out) {
        out = Dma::port_of(ram_type);
        if (out == MemoryPort::Secondary && !nvdla_hw_has(&ctx_.cfg, NVDLA_FEATURE_SECONDARY_MEMIF))
            return ctx_.error(std::string(reg) + " is 0 (CV), but " + ctx_.cfg.name +
                              " has no secondary memory interface");
        return true;
    }

    bool read_format(Config& c) {
        const uint32_t format = NVDLA_REG_FIELD(PDP, D_DATA_FORMAT, INPUT_DATA, pdp_);
        if (format > 2)
            return ctx_.error("PDP D_DATA_FORMAT.INPUT_DATA is " + std::to_string(format) +
                              ", a reserved value (0 int8, 1 int16, 2 fp16)");
        c.precision = static_cast<Precision>(format);
        if (!supports(ctx_.cfg, c.precision))
            return ctx_.error("PDP D_DATA_FORMAT.INPUT_DATA selects " +
                              std::string(to_string(c.precision)) + ", which " + ctx_.cfg.name +
                              " does not support");
        const uint32_t method = NVDLA_REG_FIELD(PDP, D_OPERATION_MODE_CFG, POOLING_METHOD, pdp_);
        if (method > 2)
            return ctx_.error(
                "PDP D_OPERATION_MODE_CFG.POOLING_METHOD is 3, a reserved value "
                "(0 average, 1 max, 2 min)");
        c.method = method == 0 ? Method::Average : (method == 1 ? Method::Max : Method::Min);
        c.flying = NVDLA_REG_FIELD(PDP, D_OPERATION_MODE_CFG, FLYING_MODE, pdp_) ==
                   NVDLA_PDP_D_OPERATION_MODE_CFG_FLYING_MODE_ON_FLYING;
        c.atom = ctx_.cfg.atom_bytes;
        c.lanes = c.atom / bytes_per_element(c.precision);
        c.acc_bits = c.precision == Precision::Int8 ? 16 : 32;
        c.height = NVDLA_REG_FIELD(PDP, D_DATA_CUBE_IN_HEIGHT, CUBE_IN_HEIGHT, pdp_) + 1;
        c.channels = NVDLA_REG_FIELD(PDP, D_DATA_CUBE_IN_CHANNEL, CUBE_IN_CHANNEL, pdp_) + 1;
        c.out_height = NVDLA_REG_FIELD(PDP, D_DATA_CUBE_OUT_HEIGHT, CUBE_OUT_HEIGHT, pdp_) + 1;
        c.surfaces = (c.channels + c.lanes - 1) / c.lanes;
        return true;
    }

    bool read_kernel(Config& c) {
        c.kernel_w = NVDLA_REG_FIELD(PDP, D_POOLING_KERNEL_CFG, KERNEL_WIDTH, pdp_) + 1;
        c.kernel_h = NVDLA_REG_FIELD(PDP, D_POOLING_KERNEL_CFG, KERNEL_HEIGHT, pdp_) + 1;
        c.stride_w = NVDLA_REG_FIELD(PDP, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_WIDTH, pdp_) + 1;
        c.stride_h = NVDLA_REG_FIELD(PDP, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_HEIGHT, pdp_) + 1;
        if (c.kernel_w > kMaxKernel || c.kernel_h > kMaxKernel)
            return ctx_.error("PDP D_POOLING_KERNEL_CFG asks for a " + std::to_string(c.kernel_w) +
                              "x" + std::to_string(c.kernel_h) + " kernel; the largest is 8x8");
        c.pad_top = NVDLA_REG_FIELD(PDP, D_POOLING_PADDING_CFG, PAD_TOP, pdp_);
        c.pad_bottom = NVDLA_REG_FIELD(PDP, D_POOLING_PADDING_CFG, PAD_BOTTOM, pdp_);
        return true;
    }

    // The pieces of the width (PoolingStage0SequenceThread): the first has the left padding,
    // the last the right padding, and every piece after the first also reads the
    // kernel_w - stride_w columns it shares with the one before.
    bool read_splits(Config& c) {
        const uint32_t pad_left = NVDLA_REG_FIELD(PDP, D_POOLING_PADDING_CFG, PAD_LEFT, pdp_);
        const uint32_t pad_right = NVDLA_REG_FIELD(PDP, D_POOLING_PADDING_CFG, PAD_RIGHT, pdp_);
        const uint32_t split_num = NVDLA_REG_FIELD(PDP, D_OPERATION_MODE_CFG, SPLIT_NUM, pdp_);
        if (split_num == 0) {
            Split s;
            s.in_width = NVDLA_REG_FIELD(PDP, D_DATA_CUBE_IN_WIDTH, CUBE_IN_WIDTH, pdp_) + 1;
            s.out_width = NVDLA_REG_FIELD(PDP, D_DATA_CUBE_OUT_WIDTH, CUBE_OUT_WIDTH, pdp_) + 1;
            s.pad_left = pad_left;
            s.pad_right = pad_right;
            c.splits.push_back(s);
            return true;
        }
        const uint32_t in_first =
            NVDLA_REG_FIELD(PDP, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_FIRST, pdp_) + 1;
        const uint32_t in_mid =
            NVDLA_REG_FIELD(PDP, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_MID, pdp_) + 1;
        const uint32_t in_last =
            NVDLA_REG_FIELD(PDP, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_LAST, pdp_) + 1;
        const uint32_t out_first =
            NVDLA_REG_FIELD(PDP, D_PARTIAL_WIDTH_OUT, PARTIAL_WIDTH_OUT_FIRST, pdp_) + 1;
        const uint32_t out_mid =
            NVDLA_REG_FIELD(PDP, D_PARTIAL_WIDTH_OUT, PARTIAL_WIDTH_OUT_MID, pdp_) + 1;
        const uint32_t out_last =
            NVDLA_REG_FIELD(PDP, D_PARTIAL_WIDTH_OUT, PARTIAL_WIDTH_OUT_LAST, pdp_) + 1;
        const int64_t overlap = int64_t(c.kernel_w) - c.stride_w;
        for (uint32_t i = 0; i <= split_num; ++i) {
            Split s;
            if (i == 0) {
                s.in_width = in_first;
                s.out_width = out_first;
                s.pad_left = pad_left;
            } else {
                const bool last = i == split_num;
                const int64_t width = int64_t(last ? in_last : in_mid) + overlap;
                if (width <= 0)
                    return ctx_.error(
                        "PDP D_PARTIAL_WIDTH_IN leaves split " + std::to_string(i) +
                        " without input: its width plus kernel width minus stride is " +
                        std::to_string(width));
                s.in_offset = int64_t(in_first) + int64_t(i - 1) * in_mid - overlap;
                s.in_width = static_cast<uint32_t>(width);
                s.out_offset = out_first + (i - 1) * out_mid;
                s.out_width = last ? out_last : out_mid;
                s.pad_right = last ? pad_right : 0;
            }
            c.splits.push_back(s);
        }
        return true;
    }

    bool check_windows(const Config& c) {
        for (size_t i = 0; i < c.splits.size(); ++i) {
            const Split& s = c.splits[i];
            if (!windows_reach_data(s.out_width, c.stride_w, s.pad_left, c.kernel_w, s.in_width)) {
                std::ostringstream m;
                m << "PDP: a pooling window of " << (c.splits.size() > 1 ? "split " : "width ")
                  << (c.splits.size() > 1 ? std::to_string(i) + " " : std::string())
                  << "covers no input column (" << s.out_width << " output columns from "
                  << s.in_width << " input columns, kernel width " << c.kernel_w << ", stride "
                  << c.stride_w << ", left padding " << s.pad_left
                  << "); D_DATA_CUBE_OUT_WIDTH, D_PARTIAL_WIDTH_* or D_POOLING_PADDING_CFG "
                     "exceed what the input allows";
                return ctx_.error(m.str());
            }
        }
        if (!windows_reach_data(c.out_height, c.stride_h, c.pad_top, c.kernel_h, c.height)) {
            std::ostringstream m;
            m << "PDP: a pooling window covers no input line (" << c.out_height
              << " output lines from " << c.height << " input lines, kernel height " << c.kernel_h
              << ", stride " << c.stride_h << ", top padding " << c.pad_top
              << "); D_DATA_CUBE_OUT_HEIGHT or D_POOLING_PADDING_CFG.PAD_TOP exceed what the input "
                 "allows";
            return ctx_.error(m.str());
        }
        return true;
    }

    // PAD_VALUE_nX holds n x the padding value; the C model sign-extends it from bit 7, 8, 9,
    // 9, 10, 10, 10 (int8) or 15, 16, 17, 17, 18, 18, 18 (int16) (NV_NVDLA_pdp.cpp:496-512).
    // The fp16 pipeline reads the low 17 bits as an fp17.
    void read_padding(Config& c) {
        static constexpr std::array<uint32_t, kPadValues> kOffsets = {
            NVDLA_PDP_D_POOLING_PADDING_VALUE_1_CFG, NVDLA_PDP_D_POOLING_PADDING_VALUE_2_CFG,
            NVDLA_PDP_D_POOLING_PADDING_VALUE_3_CFG, NVDLA_PDP_D_POOLING_PADDING_VALUE_4_CFG,
            NVDLA_PDP_D_POOLING_PADDING_VALUE_5_CFG, NVDLA_PDP_D_POOLING_PADDING_VALUE_6_CFG,
            NVDLA_PDP_D_POOLING_PADDING_VALUE_7_CFG};
        static constexpr std::array<unsigned, kPadValues> kInt8Bits = {8, 9, 10, 10, 11, 11, 11};
        for (uint32_t i = 0; i < kPadValues; ++i) {
            const uint32_t field = pdp_[kOffsets[i]] & 0x7ffffu;  // PAD_VALUE_nX[18:0]
            const unsigned bits = c.precision == Precision::Int8 ? kInt8Bits[i] : kInt8Bits[i] + 8;
            c.pad_int[i] = static_cast<int32_t>(precision::sign_extend(field, bits));
            c.pad_fp17[i] = field & 0x1ffffu;
        }
    }

    bool check_flying(const Config& c) {
        const ElementCube* in = flying_;
        if (!in)
            return ctx_.error("PDP D_OPERATION_MODE_CFG.FLYING_MODE is on, but SDP sent no data");
        int64_t width = 0;
        for (const Split& s : c.splits) {
            if (s.in_offset < 0)
                return ctx_.error("PDP D_PARTIAL_WIDTH_IN makes a split start " +
                                  std::to_string(-s.in_offset) + " columns before SDP's cube");
            width = std::max<int64_t>(width, s.in_offset + s.in_width);
        }
        if (in->precision != c.precision || in->batches != 1 || in->channels != c.channels ||
            in->height != c.height || in->width < width) {
            std::ostringstream m;
            m << "PDP in flying mode expects a " << width << "x" << c.height << "x" << c.channels
              << " " << to_string(c.precision)
              << " cube (D_DATA_CUBE_IN_*, D_DATA_FORMAT), but SDP "
              << "sends " << in->batches << " batch(es) of " << in->width << "x" << in->height
              << "x" << in->channels << " " << to_string(in->precision);
            return ctx_.error(m.str());
        }
        return true;
    }

    // PDP_RDMA reads the pieces PdpRdmaSequenceThread reads; they must be the pieces the PDP
    // consumes, or the hardware would stall or pool the wrong atoms.
    bool read_rdma(Config& c) {
        if (!rdma_.valid())
            return ctx_.error("PDP is offline, but PDP_RDMA is not part of the operation");
        const uint32_t format = NVDLA_REG_FIELD(PDP_RDMA, D_DATA_FORMAT, INPUT_DATA, rdma_);
        if (format != static_cast<uint32_t>(c.precision))
            return ctx_.error("PDP_RDMA D_DATA_FORMAT.INPUT_DATA is " + std::to_string(format) +
                              ", but PDP D_DATA_FORMAT.INPUT_DATA is " +
                              std::to_string(static_cast<uint32_t>(c.precision)));
        const uint32_t height =
            NVDLA_REG_FIELD(PDP_RDMA, D_DATA_CUBE_IN_HEIGHT, CUBE_IN_HEIGHT, rdma_) + 1;
        const uint32_t channels =
            NVDLA_REG_FIELD(PDP_RDMA, D_DATA_CUBE_IN_CHANNEL, CUBE_IN_CHANNEL, rdma_) + 1;
        if (height != c.height || (channels + c.lanes - 1) / c.lanes != c.surfaces)
            return ctx_.error("PDP_RDMA D_DATA_CUBE_IN_HEIGHT/CHANNEL (" + std::to_string(height) +
                              " lines, " + std::to_string(channels) +
                              " channels) do not match PDP's (" + std::to_string(c.height) + ", " +
                              std::to_string(c.channels) + ")");
        const uint64_t base = Dma::address(rdma_[NVDLA_PDP_RDMA_D_SRC_BASE_ADDR_HIGH],
                                           rdma_[NVDLA_PDP_RDMA_D_SRC_BASE_ADDR_LOW]);
        const uint32_t split_num =
            NVDLA_REG_FIELD(PDP_RDMA, D_OPERATION_MODE_CFG, SPLIT_NUM, rdma_);
        if (split_num == 0) {
            c.reads.push_back(
                {base, NVDLA_REG_FIELD(PDP_RDMA, D_DATA_CUBE_IN_WIDTH, CUBE_IN_WIDTH, rdma_) + 1});
        } else {
            const uint32_t first =
                NVDLA_REG_FIELD(PDP_RDMA, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_FIRST, rdma_) + 1;
            const uint32_t mid =
                NVDLA_REG_FIELD(PDP_RDMA, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_MID, rdma_) + 1;
            const uint32_t last =
                NVDLA_REG_FIELD(PDP_RDMA, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_LAST, rdma_) + 1;
            const int64_t overlap =
                int64_t(NVDLA_REG_FIELD(PDP_RDMA, D_POOLING_KERNEL_CFG, KERNEL_WIDTH, rdma_)) -
                int64_t(
                    NVDLA_REG_FIELD(PDP_RDMA, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_WIDTH, rdma_));
            for (uint32_t i = 0; i <= split_num; ++i) {
                if (i == 0) {
                    c.reads.push_back({base, first});
                    continue;
                }
                const int64_t columns = int64_t(first) + int64_t(i - 1) * mid - overlap;
                const int64_t width = int64_t(i == split_num ? last : mid) + overlap;
                c.reads.push_back({base + static_cast<uint64_t>(columns * c.atom),
                                   static_cast<uint32_t>(std::max<int64_t>(width, 0))});
            }
        }
        bool same = c.reads.size() == c.splits.size();
        for (size_t i = 0; same && i < c.reads.size(); ++i)
            same = c.reads[i].width == c.splits[i].in_width;
        if (!same) {
            std::ostringstream m;
            m << "PDP_RDMA reads the width in " << c.reads.size() << " piece(s) of";
            for (const RdmaSplit& r : c.reads) m << " " << r.width;
            m << " columns (D_OPERATION_MODE_CFG.SPLIT_NUM, D_DATA_CUBE_IN_WIDTH, "
                 "D_PARTIAL_WIDTH_IN, D_POOLING_KERNEL_CFG), but PDP pools "
              << c.splits.size() << " piece(s) of";
            for (const Split& s : c.splits) m << " " << s.in_width;
            m << " columns";
            return ctx_.error(m.str());
        }
        c.src_line = rdma_[NVDLA_PDP_RDMA_D_SRC_LINE_STRIDE];
        c.src_surface = rdma_[NVDLA_PDP_RDMA_D_SRC_SURFACE_STRIDE];
        return port(NVDLA_REG_FIELD(PDP_RDMA, D_SRC_RAM_CFG, SRC_RAM_TYPE, rdma_),
                    "PDP_RDMA D_SRC_RAM_CFG.SRC_RAM_TYPE", c.src_port);
    }

    Context& ctx_;
    Group pdp_, rdma_;
    const ElementCube* flying_;
};

int32_t wrap(int64_t v, unsigned bits) {
    return static_cast<int32_t>(precision::sign_extend(v, bits));
}

// The fp17 value of the kernel width, which scales the H padding on the fp16 pipeline
// (kernel_width_map, pdp_hls_wrapper.cpp:130; the C model's table stops at 7, 8 is 0x8800).
constexpr std::array<uint32_t, kMaxKernel + 1> kKernelWidthFp17 = {
    0x0000, 0x7c00, 0x8000, 0x8200, 0x8400, 0x8500, 0x8600, 0x8700, 0x8800};

// Whether the n values at v are all v[0]: four at a time in 64-bit words, no early exit.
bool one_value(const int16_t* v, size_t n) {
    const uint64_t pattern = uint64_t(uint16_t(v[0])) * 0x0001000100010001ull;
    uint64_t differs = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t a, b;
        std::memcpy(&a, v + i, 8);
        std::memcpy(&b, v + i + 4, 8);
        differs |= (a ^ pattern) | (b ^ pattern);
    }
    for (; i < n; ++i) differs |= uint16_t(v[i]) ^ uint16_t(v[0]);
    return differs == 0;
}

// The fp16 comparison of FpMax/FpMin (a NaN operand wins, the first one first).
uint32_t fp16_pick(Method method, uint32_t a, uint32_t b) {
    const auto ha = static_cast<uint16_t>(a), hb = static_cast<uint16_t>(b);
    return method == Method::Max ? precision::fp16_max(ha, hb) : precision::fp16_min(ha, hb);
}

// The common 2-wide, stride-2 max/min along W of 8 work lanes at once with AVX2: lane j's
// row src[j], `columns` output columns from data position `first` (column i: positions
// first + 2i and first + 2i + 1, one int32 of the row), 8 at a time, each block transposed
// into columns of 8 consecutive lanes (out[i * lanes + l]). The last block loads only its
// columns (a masked load: nothing past the row is read). Exactly std::max/std::min of the two
// int16 values, as pick does.
template <bool Max>
__attribute__((target("avx2"))) void pair_pick_avx2(const int16_t* const* src, uint32_t first,
                                                    uint32_t columns, uint32_t lanes,
                                                    int32_t* out) {
    for (uint32_t c0 = 0; c0 < columns; c0 += 8) {
        const uint32_t n = std::min(8u, columns - c0);
        const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(n)),
                                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256i r[8];
        for (uint32_t j = 0; j < 8; ++j) {
            const auto* p = reinterpret_cast<const int*>(src[j] + first + 2 * size_t(c0));
            const __m256i v = n == 8 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
                                     : _mm256_maskload_epi32(p, mask);
            const __m256i even = _mm256_srai_epi32(_mm256_slli_epi32(v, 16), 16);
            const __m256i odd = _mm256_srai_epi32(v, 16);
            r[j] = Max ? _mm256_max_epi32(even, odd) : _mm256_min_epi32(even, odd);
        }
        // 8x8 int32 transpose: r[j][i] -> t[i][j].
        const __m256i a0 = _mm256_unpacklo_epi32(r[0], r[1]),
                      a1 = _mm256_unpackhi_epi32(r[0], r[1]);
        const __m256i a2 = _mm256_unpacklo_epi32(r[2], r[3]),
                      a3 = _mm256_unpackhi_epi32(r[2], r[3]);
        const __m256i a4 = _mm256_unpacklo_epi32(r[4], r[5]),
                      a5 = _mm256_unpackhi_epi32(r[4], r[5]);
        const __m256i a6 = _mm256_unpacklo_epi32(r[6], r[7]),
                      a7 = _mm256_unpackhi_epi32(r[6], r[7]);
        const __m256i b0 = _mm256_unpacklo_epi64(a0, a2), b1 = _mm256_unpackhi_epi64(a0, a2);
        const __m256i b2 = _mm256_unpacklo_epi64(a1, a3), b3 = _mm256_unpackhi_epi64(a1, a3);
        const __m256i b4 = _mm256_unpacklo_epi64(a4, a6), b5 = _mm256_unpackhi_epi64(a4, a6);
        const __m256i b6 = _mm256_unpacklo_epi64(a5, a7), b7 = _mm256_unpackhi_epi64(a5, a7);
        const __m256i t[8] = {
            _mm256_permute2x128_si256(b0, b4, 0x20), _mm256_permute2x128_si256(b1, b5, 0x20),
            _mm256_permute2x128_si256(b2, b6, 0x20), _mm256_permute2x128_si256(b3, b7, 0x20),
            _mm256_permute2x128_si256(b0, b4, 0x31), _mm256_permute2x128_si256(b1, b5, 0x31),
            _mm256_permute2x128_si256(b2, b6, 0x31), _mm256_permute2x128_si256(b3, b7, 0x31)};
        for (uint32_t i = 0; i < n; ++i)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (c0 + size_t(i)) * lanes), t[i]);
    }
}

// An int8 output line's atoms from the work lanes' bytes with AVX2: atom k's byte l is
// work[k * work_lanes + lane_of[l]] (work_lanes <= 32; `work` readable 32 bytes past each
// pixel's start).
__attribute__((target("avx2"))) void gather_atoms_avx2(const uint8_t* work, uint32_t work_lanes,
                                                       const uint8_t* lane_of, uint32_t pixels,
                                                       uint8_t* atoms) {
    const __m256i index = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lane_of));
    // pshufb picks within 128-bit halves: bytes 0..15 of the pixel's work lanes from one copy
    // of them in both halves, bytes 16..31 from the other.
    const __m256i high = _mm256_cmpgt_epi8(index, _mm256_set1_epi8(15));
    for (uint32_t k = 0; k < pixels; ++k) {
        const __m256i v =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(work + size_t(k) * work_lanes));
        const __m256i lo = _mm256_permute2x128_si256(v, v, 0x00);
        const __m256i hi = _mm256_permute2x128_si256(v, v, 0x11);
        const __m256i bytes = _mm256_blendv_epi8(_mm256_shuffle_epi8(lo, index),
                                                 _mm256_shuffle_epi8(hi, index), high);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(atoms + size_t(k) * 32), bytes);
    }
}

// The height pass's int loops with AVX2 (GCC's -O2 vectorizer leaves loops that need a tail
// scalar): out[j] = max or min(out[j], x[j]); values wrapped to their low `bits` (8 or 16),
// sign-extended; the low byte of each value. j < n, the tails one at a time.
template <bool Max>
__attribute__((target("avx2"))) void pick_rows_avx2(int32_t* out, const int32_t* x, size_t n) {
    size_t j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out + j));
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + j));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j),
                            Max ? _mm256_max_epi32(a, b) : _mm256_min_epi32(a, b));
    }
    for (; j < n; ++j) out[j] = Max ? std::max(out[j], x[j]) : std::min(out[j], x[j]);
}

__attribute__((target("avx2"))) void wrap_avx2(int32_t* v, size_t n, unsigned bits) {
    const __m128i shift = _mm_cvtsi32_si128(static_cast<int>(32 - bits));
    size_t j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + j));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(v + j),
                            _mm256_sra_epi32(_mm256_sll_epi32(a, shift), shift));
    }
    for (; j < n; ++j) v[j] = bits == 8 ? static_cast<int8_t>(v[j]) : static_cast<int16_t>(v[j]);
}

__attribute__((target("avx2"))) void low_bytes_avx2(const int32_t* v, size_t n, uint8_t* bytes) {
    // Bytes 0, 4, 8, 12 of each 128-bit half, then the halves' dwords 0 together.
    const __m256i pick =
        _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12,
                         -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i a =
            _mm256_shuffle_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i)), pick);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(bytes + i),
                         _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(a, order)));
    }
    for (; i < n; ++i) bytes[i] = static_cast<uint8_t>(v[i]);
}

// One operation: a split at a time, a surface at a time, line by line. Each input line is
// pooled along W once into a ring of kernel_h row results; an output line is finished when
// its last input line has arrived.
class Pooling {
  public:
    Pooling(Context& ctx, const Config& c, const ElementCube* flying)
        : ctx_(ctx), c_(c), flying_(flying) {}

    void run() {
        for (size_t s = 0; s < c_.splits.size(); ++s)
            for (uint32_t surface = 0; surface < c_.surfaces; ++surface) pool(s, surface);
    }

    uint32_t nan_input = 0, inf_input = 0, nan_output = 0;

  private:
    void pool(size_t split_index, uint32_t surface) {
        const Split& s = c_.splits[split_index];
        choose_lanes(surface);
        const uint32_t lanes = lanes_;
        columns_.resize(s.out_width);
        for (uint32_t k = 0; k < s.out_width; ++k)
            columns_[k] = window_at(k, c_.stride_w, s.pad_left, c_.kernel_w, s.in_width);
        find_pair_run();
        if (flying_ && c_.precision != Precision::Fp16) fill_constant_rows(s);
        line_.resize(size_t(s.in_width) * lanes);
        ring_.resize(size_t(c_.kernel_h) * s.out_width * lanes);
        out_.resize(size_t(s.out_width) * lanes);
        bytes_.resize(size_t(std::max(s.in_width, s.out_width)) * c_.atom);

        // Every line is read (PDP_RDMA does, and counts its NaNs), used or not.
        uint32_t next_out = 0;
        for (uint32_t h = 0; h < c_.height; ++h) {
            int32_t* row = &ring_[size_t(h % c_.kernel_h) * s.out_width * lanes];
            if (flying_ && c_.precision != Precision::Fp16) {
                width_pass_flying_int(s, surface, h, row);
            } else {
                fetch_line(split_index, surface, h);
                if (c_.precision == Precision::Fp16)
                    width_pass_fp(row);
                else
                    width_pass_int(row);
            }
            for (; next_out < c_.out_height; ++next_out) {
                const Window rows =
                    window_at(next_out, c_.stride_h, c_.pad_top, c_.kernel_h, c_.height);
                if (rows.first + rows.count - 1 != h) break;
                finish_line(rows, s);
                store_line(s, surface, next_out);
            }
        }
    }

    // The lanes pooled for this surface. Offline every lane holds what PDP_RDMA reads. Flying,
    // a lane past the channels holds what SDP computed there (0 past its held channels), which
    // is often one value over the whole plane (0 + bias, ReLU, the convertor): such lanes pool
    // to the same results as any lane holding that value everywhere, so one work lane per
    // distinct value stands for them (store_line writes its results to each). The work is
    // rounded up to 8 lanes for the vector loops.
    void choose_lanes(uint32_t surface) {
        const uint32_t atom_lanes = c_.lanes;
        identity_ = true;
        lanes_ = atom_lanes;
        if (!flying_ || atom_lanes > lane_of_.size()) return;
        const uint32_t first = surface * atom_lanes, held = flying_->held();
        const size_t plane = size_t(flying_->height) * flying_->width;
        work_.clear();
        for (uint32_t l = 0; l < atom_lanes; ++l) {
            const uint32_t ch = first + l;
            std::optional<int16_t> constant;
            if (ch >= held) {
                constant = 0;
            } else if (ch >= c_.channels) {
                const int16_t* v = flying_->values.data() + flying_->index(0, ch, 0, 0);
                if (one_value(v, plane)) constant = v[0];
            }
            size_t j = work_.size();
            if (constant) {
                j = 0;
                while (j < work_.size() && !(work_[j].channel < 0 && work_[j].value == *constant))
                    ++j;
            }
            if (j == work_.size())
                work_.push_back({constant ? -1 : int32_t(ch), constant.value_or(0)});
            lane_of_[l] = static_cast<uint8_t>(j);
        }
        if (work_.size() == atom_lanes) return;  // every lane its own
        while (work_.size() % 8 != 0 && work_.size() < atom_lanes) work_.push_back({-1, 0});
        if (work_.size() >= atom_lanes) return;
        identity_ = false;
        lanes_ = static_cast<uint32_t>(work_.size());
        standing_.assign(lanes_, 0);
        for (uint32_t l = 0; l < atom_lanes; ++l) ++standing_[lane_of_[l]];
    }

    // How many of the atom's lanes work lane j stands for.
    uint32_t lanes_standing_for(uint32_t j) const { return identity_ ? 1 : standing_[j]; }

    // One input line of the split into line_ (in_width x lanes values): int8/int16 values or
    // fp16 patterns; NaN counting and flushing as PDP_RDMA and stage 0 do them offline.
    void fetch_line(size_t split_index, uint32_t surface, uint32_t h) {
        const Split& s = c_.splits[split_index];
        const uint32_t lanes = lanes_;
        if (flying_) {
            // Lane by lane: a lane's row is contiguous in SDP's cube.
            // (Locals: the stores through dst must not make the compiler reload them.)
            const bool fp16 = c_.precision == Precision::Fp16;
            const uint32_t width = s.in_width;
            for (uint32_t j = 0; j < lanes; ++j) {
                int32_t* dst = line_.data() + j;
                const int32_t ch = identity_ ? int32_t(surface * c_.lanes + j) : work_[j].channel;
                if (ch < 0 || uint32_t(ch) >= flying_->held()) {  // one value everywhere
                    const int16_t v = ch < 0 ? work_[j].value : 0;
                    const int32_t x = fp16 ? int32_t(static_cast<uint16_t>(v)) : v;
                    for (uint32_t w = 0; w < width; ++w) dst[size_t(w) * lanes] = x;
                    continue;
                }
                const int16_t* src =
                    flying_->values.data() + flying_->index(0, uint32_t(ch), h, 0) + s.in_offset;
                if (fp16)
                    for (uint32_t w = 0; w < width; ++w)
                        dst[size_t(w) * lanes] = static_cast<uint16_t>(src[w]);
                else
                    for (uint32_t w = 0; w < width; ++w) dst[size_t(w) * lanes] = src[w];
            }
            return;
        }
        const RdmaSplit& r = c_.reads[split_index];
        const uint64_t address =
            r.base + uint64_t(h) * c_.src_line + uint64_t(surface) * c_.src_surface;
        const size_t size = size_t(s.in_width) * c_.atom;
        ctx_.dma.read(NVDLA_UNIT_PDP_RDMA, c_.src_port, address, bytes_.data(), size);
        const size_t n = size_t(s.in_width) * lanes;
        switch (c_.precision) {
            case Precision::Int8:
                for (size_t i = 0; i < n; ++i) line_[i] = static_cast<int8_t>(bytes_[i]);
                break;
            case Precision::Int16:
                for (size_t i = 0; i < n; ++i) line_[i] = static_cast<int16_t>(load16(i));
                break;
            case Precision::Fp16:
                for (size_t i = 0; i < n; ++i) {
                    uint16_t v = load16(i);
                    if ((v & 0x7c00u) == 0x7c00u) {
                        const bool nan = (v & 0x3ffu) != 0;
                        nan_input += nan ? 1 : 0;
                        inf_input += nan ? 0 : 1;
                        if (nan && c_.nan_to_zero) v = 0;
                    }
                    line_[i] = v;
                }
                break;
        }
    }

    uint16_t load16(size_t i) const {
        return static_cast<uint16_t>(bytes_[2 * i] | (uint32_t(bytes_[2 * i + 1]) << 8));
    }

    // LineOperation for the int pipelines: max/min of the data columns; the average sums them
    // and adds PAD_VALUE_nX for the n missing columns, in the accumulator's width.
    void width_pass_int(int32_t* row) const {
        const uint32_t lanes = lanes_;
        if (c_.method == Method::Max) return width_pick<true>(row);
        if (c_.method == Method::Min) return width_pick<false>(row);
        for (size_t k = 0; k < columns_.size(); ++k) {
            const Window& w = columns_[k];
            const int32_t* in = &line_[size_t(w.first) * lanes];
            int32_t* out = row + k * lanes;
            for (uint32_t l = 0; l < lanes; ++l) {
                int64_t v = in[l];
                for (uint32_t i = 1; i < w.count; ++i) {
                    const int32_t x = in[size_t(i) * lanes + l];
                    if (c_.method == Method::Average)
                        v += x;
                    else
                        v = c_.method == Method::Max ? std::max<int64_t>(v, x)
                                                     : std::min<int64_t>(v, x);
                }
                if (c_.method == Method::Average) {
                    if (w.pads) v += c_.pad_int[w.pads - 1];
                    v = wrap(v, c_.acc_bits);
                }
                out[l] = static_cast<int32_t>(v);
            }
        }
    }

    // width_pass_int straight from SDP's cube, lane by lane along its rows (no transposition
    // of the input line into lanes first): the same sums, maxima and minima per lane. Max and
    // min over the 2-wide, stride-2 columns go 8 lanes x 8 columns at a time with AVX2.
    void width_pass_flying_int(const Split& s, uint32_t surface, uint32_t h, int32_t* row) {
        const uint32_t lanes = lanes_, held = flying_->held();
        const size_t columns = columns_.size();
        const Window* windows = columns_.data();
        rows_.resize(lanes);
        for (uint32_t j = 0; j < lanes; ++j) {
            const int32_t ch = identity_ ? int32_t(surface * c_.lanes + j) : work_[j].channel;
            rows_[j] =
                ch < 0 || uint32_t(ch) >= held  // one value everywhere
                    ? constant_rows_.data() + size_t(j) * constant_width_
                    : flying_->values.data() + flying_->index(0, uint32_t(ch), h, 0) + s.in_offset;
        }
        // Columns [vector_begin, vector_end) by pair_pick_avx2.
        size_t vector_begin = 0, vector_end = 0;
        if (c_.method != Method::Average && pair_count_ >= 2 && lanes % 8 == 0 &&
            isa_level() != IsaLevel::Scalar) {
            vector_begin = pair_begin_;
            vector_end = pair_begin_ + pair_count_;
            const uint32_t first = windows[vector_begin].first;
            for (uint32_t j = 0; j < lanes; j += 8) {
                int32_t* out = row + vector_begin * lanes + j;
                if (c_.method == Method::Max)
                    pair_pick_avx2<true>(rows_.data() + j, first, pair_count_, lanes, out);
                else
                    pair_pick_avx2<false>(rows_.data() + j, first, pair_count_, lanes, out);
            }
        }
        for (uint32_t j = 0; j < lanes; ++j) {
            const int16_t* src = rows_[j];
            int32_t* out = row + j;
            switch (c_.method) {
                case Method::Max:
                    for (size_t k = 0; k < columns; ++k) {
                        if (k == vector_begin) k = vector_end;
                        if (k < columns)
                            out[k * lanes] = pick<true>(src + windows[k].first, windows[k].count);
                    }
                    break;
                case Method::Min:
                    for (size_t k = 0; k < columns; ++k) {
                        if (k == vector_begin) k = vector_end;
                        if (k < columns)
                            out[k * lanes] = pick<false>(src + windows[k].first, windows[k].count);
                    }
                    break;
                case Method::Average:
                    for (size_t k = 0; k < columns; ++k) {
                        const int16_t* in = src + windows[k].first;
                        int64_t v = 0;
                        for (uint32_t i = 0; i < windows[k].count; ++i) v += in[i];
                        if (windows[k].pads) v += c_.pad_int[windows[k].pads - 1];
                        out[k * lanes] = wrap(v, c_.acc_bits);
                    }
                    break;
            }
        }
    }

    // The longest run of output columns whose windows are two data columns, each starting two
    // after the previous (2-wide, stride-2 pooling away from the padding).
    void find_pair_run() {
        pair_begin_ = pair_count_ = 0;
        for (size_t k = 0; k < columns_.size();) {
            if (columns_[k].count != 2) {
                ++k;
                continue;
            }
            size_t end = k + 1;
            while (end < columns_.size() && columns_[end].count == 2 &&
                   columns_[end].first == columns_[end - 1].first + 2)
                ++end;
            if (end - k > pair_count_) {
                pair_begin_ = k;
                pair_count_ = uint32_t(end - k);
            }
            k = end;
        }
    }

    // The rows of the work lanes that hold one value everywhere (flying), once per surface:
    // 0 past SDP's held channels, a work lane's value where it stands for such lanes.
    void fill_constant_rows(const Split& s) {
        constant_width_ = s.in_width;
        constant_rows_.assign(size_t(lanes_) * constant_width_, 0);
        if (identity_) return;
        for (uint32_t j = 0; j < lanes_; ++j)
            if (work_[j].channel < 0)
                std::fill_n(constant_rows_.data() + size_t(j) * constant_width_, constant_width_,
                            work_[j].value);
    }

    // The largest (or smallest) of count values; the common 2- and 3-wide windows without a
    // loop.
    template <bool Max>
    static int32_t pick(const int16_t* in, uint32_t count) {
        auto better = [](int32_t a, int32_t b) { return Max ? std::max(a, b) : std::min(a, b); };
        if (count == 2) return better(in[0], in[1]);
        if (count == 3) return better(better(in[0], in[1]), in[2]);
        int32_t v = in[0];
        for (uint32_t i = 1; i < count; ++i) v = better(v, in[i]);
        return v;
    }

    // Max (or min) along W: int32 lane by lane, which the compiler vectorises.
    template <bool Max>
    void width_pick(int32_t* row) const {
        const uint32_t lanes = lanes_;
        for (size_t k = 0; k < columns_.size(); ++k) {
            const Window& w = columns_[k];
            const int32_t* in = &line_[size_t(w.first) * lanes];
            int32_t* out = row + k * lanes;
            std::copy_n(in, lanes, out);
            for (uint32_t i = 1; i < w.count; ++i) {
                const int32_t* x = in + size_t(i) * lanes;
                for (uint32_t l = 0; l < lanes; ++l)
                    out[l] = Max ? std::max(out[l], x[l]) : std::min(out[l], x[l]);
            }
        }
    }

    // HLS_PDP_PoolingStage0Calc_FP16_W: max/min on fp16 with FpMax/FpMin(buffer, new); the
    // average in fp17, ((sum + x) + pad_left) + pad_right for every column, the padding non-zero
    // only at the window's last data column.
    void width_pass_fp(int32_t* row) const {
        const uint32_t lanes = lanes_;
        for (size_t k = 0; k < columns_.size(); ++k) {
            const Window& w = columns_[k];
            const int32_t* in = &line_[size_t(w.first) * lanes];
            int32_t* out = row + k * lanes;
            const uint32_t pad = w.pads ? c_.pad_fp17[w.pads - 1] : 0;
            const uint32_t pad_left = w.pad_before ? pad : 0, pad_right = w.pad_before ? 0 : pad;
            for (uint32_t l = 0; l < lanes; ++l) {
                uint32_t v = static_cast<uint32_t>(in[l]);
                if (c_.method != Method::Average) {
                    for (uint32_t i = 1; i < w.count; ++i)
                        v = fp16_pick(c_.method, v,
                                      static_cast<uint32_t>(in[size_t(i) * lanes + l]));
                } else {
                    for (uint32_t i = 0; i < w.count; ++i) {
                        const uint32_t x = precision::fp16_to_fp17(
                            static_cast<uint16_t>(in[size_t(i) * lanes + l]));
                        const bool last = i + 1 == w.count;
                        v = i == 0 ? x : fp17_add(v, x);
                        v = fp17_add(v, last ? pad_left : 0);
                        v = fp17_add(v, last ? pad_right : 0);
                    }
                }
                out[l] = static_cast<int32_t>(v);
            }
        }
    }

    // PoolingStage0Calc along H, then PoolingStage1Calc, into out_.
    void finish_line(const Window& rows, const Split& s) {
        const uint32_t lanes = lanes_;
        std::array<const int32_t*, kMaxKernel> in{};
        for (uint32_t i = 0; i < rows.count; ++i)
            in[i] = &ring_[size_t((rows.first + i) % c_.kernel_h) * s.out_width * lanes];
        const size_t n = size_t(s.out_width) * lanes;
        if (c_.precision == Precision::Fp16)
            height_pass_fp(rows, in, n);
        else
            height_pass_int(rows, in, n);
    }

    void height_pass_int(const Window& rows, const std::array<const int32_t*, kMaxKernel>& in,
                         size_t n) {
        const int64_t pad =
            rows.pads ? wrap(int64_t(c_.pad_int[rows.pads - 1]) * c_.kernel_w, c_.acc_bits) : 0;
        const unsigned out_bits = c_.precision == Precision::Int8 ? 8 : 16;
        if (c_.method != Method::Average) {
            // Max or min, lane by lane in int32, then wrapped to the output width.
            const bool max = c_.method == Method::Max;
            int32_t* out = out_.data();
            std::copy_n(in[0], n, out);
            if (isa_level() != IsaLevel::Scalar) {
                for (uint32_t i = 1; i < rows.count; ++i)
                    max ? pick_rows_avx2<true>(out, in[i], n)
                        : pick_rows_avx2<false>(out, in[i], n);
                wrap_avx2(out, n, out_bits);
                return;
            }
            for (uint32_t i = 1; i < rows.count; ++i) {
                const int32_t* x = in[i];
                if (max)
                    for (size_t j = 0; j < n; ++j) out[j] = std::max(out[j], x[j]);
                else
                    for (size_t j = 0; j < n; ++j) out[j] = std::min(out[j], x[j]);
            }
            if (out_bits == 8)
                for (size_t j = 0; j < n; ++j) out[j] = static_cast<int8_t>(out[j]);
            else
                for (size_t j = 0; j < n; ++j) out[j] = static_cast<int16_t>(out[j]);
            return;
        }
        for (size_t j = 0; j < n; ++j) {
            int64_t v = in[0][j];
            for (uint32_t i = 1; i < rows.count; ++i) {
                const int32_t x = in[i][j];
                if (c_.method == Method::Average)
                    v += x;
                else
                    v = c_.method == Method::Max ? std::max<int64_t>(v, x)
                                                 : std::min<int64_t>(v, x);
            }
            if (c_.method == Method::Average) {
                // Stage 1: x RECIP_KERNEL_WIDTH / 2^16, rounded half away from zero, then the
                // same with RECIP_KERNEL_HEIGHT; the C model keeps int32 between the steps.
                v = wrap(v + pad, c_.acc_bits);
                v = wrap(precision::shift_right_round(v * c_.recip_w, 16), 32);
                v = wrap(precision::shift_right_round(v * c_.recip_h, 16), 32);
            }
            out_[j] = wrap(v, out_bits);
        }
    }

    // HLS_PDP_PoolingStage0Calc_FP16_H and HLS_PDP_PoolingStage1Calc_FP16: max/min with
    // FpMax/FpMin(new, buffer); the average in fp17 with the row padding multiplied by the
    // kernel width, then two fp17 multiplications by the reciprocals and Fp17ToFp16.
    void height_pass_fp(const Window& rows, const std::array<const int32_t*, kMaxKernel>& in,
                        size_t n) {
        const uint32_t kw = kKernelWidthFp17[c_.kernel_w];
        const uint32_t zero_pad = fp17_mul(0, kw);
        const uint32_t pad = rows.pads ? fp17_mul(c_.pad_fp17[rows.pads - 1], kw) : zero_pad;
        const uint32_t pad_top = rows.pad_before ? pad : zero_pad;
        const uint32_t pad_bottom = rows.pad_before ? zero_pad : pad;
        const uint32_t recip_w = c_.recip_w & 0x1ffffu, recip_h = c_.recip_h & 0x1ffffu;
        for (size_t j = 0; j < n; ++j) {
            uint32_t v = static_cast<uint32_t>(in[0][j]);
            if (c_.method != Method::Average) {
                for (uint32_t i = 1; i < rows.count; ++i)
                    v = fp16_pick(c_.method, static_cast<uint32_t>(in[i][j]), v);
            } else {
                for (uint32_t i = 0; i < rows.count; ++i) {
                    const bool last = i + 1 == rows.count;
                    const uint32_t x = static_cast<uint32_t>(in[i][j]);
                    v = i == 0 ? x : fp17_add(x, v);
                    v = fp17_add(v, last ? pad_top : zero_pad);
                    v = fp17_add(v, last ? pad_bottom : zero_pad);
                }
                v = precision::fp17_to_fp16(fp17_mul(fp17_mul(v, recip_w), recip_h));
            }
            if (precision::fp16_is_nan(static_cast<uint16_t>(v)))
                nan_output += lanes_standing_for(static_cast<uint32_t>(j % lanes_));
            out_[j] = static_cast<int32_t>(v);
        }
    }

    // The output line as PDP writes it: every lane of every atom (from its work lane).
    void store_line(const Split& s, uint32_t surface, uint32_t out_row) {
        const int32_t* out = out_.data();
        uint8_t* bytes = bytes_.data();
        const bool int8 = c_.precision == Precision::Int8;
        if (identity_) {
            const size_t n = size_t(s.out_width) * c_.lanes;
            if (int8 && isa_level() != IsaLevel::Scalar) {
                low_bytes_avx2(out, n, bytes);
            } else if (int8) {
                for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(out[i]);
            } else {
                for (size_t i = 0; i < n; ++i) {
                    bytes[2 * i] = static_cast<uint8_t>(out[i]);
                    bytes[2 * i + 1] = static_cast<uint8_t>(out[i] >> 8);
                }
            }
        } else {
            // (Locals: the byte stores must not make the compiler reload them.)
            const std::array<uint8_t, 64> lane_of = lane_of_;
            const uint32_t atom_lanes = c_.lanes, work_lanes = lanes_, atom = c_.atom;
            if (int8 && atom_lanes == 32 && isa_level() != IsaLevel::Scalar) {
                // The work lanes' bytes (with 32 to spare), then the atoms by byte shuffles.
                const size_t n = size_t(s.out_width) * work_lanes;
                work_bytes_.resize(n + 32);
                for (size_t i = 0; i < n; ++i) work_bytes_[i] = static_cast<uint8_t>(out[i]);
                gather_atoms_avx2(work_bytes_.data(), work_lanes, lane_of.data(), s.out_width,
                                  bytes);
            } else {
                for (uint32_t k = 0; k < s.out_width; ++k) {
                    const int32_t* from = out + size_t(k) * work_lanes;
                    uint8_t* to = bytes + size_t(k) * atom;
                    if (int8) {
                        for (uint32_t l = 0; l < atom_lanes; ++l)
                            to[l] = static_cast<uint8_t>(from[lane_of[l]]);
                    } else {
                        for (uint32_t l = 0; l < atom_lanes; ++l) {
                            const int32_t v = from[lane_of[l]];
                            to[2 * l] = static_cast<uint8_t>(v);
                            to[2 * l + 1] = static_cast<uint8_t>(v >> 8);
                        }
                    }
                }
            }
        }
        const uint64_t address = c_.dst_base + uint64_t(out_row) * c_.dst_line +
                                 uint64_t(surface) * c_.dst_surface +
                                 uint64_t(s.out_offset) * c_.atom;
        ctx_.dma.write(NVDLA_UNIT_PDP, c_.dst_port, address, bytes, size_t(s.out_width) * c_.atom);
    }

    Context& ctx_;
    const Config& c_;
    const ElementCube* flying_;
    // The work lanes (choose_lanes): the atom's lanes in order (identity_), or a cube channel
    // (channel >= 0) or one value (channel < 0) each, lane_of_ the work lane of each atom lane.
    struct WorkLane {
        int32_t channel = -1;
        int16_t value = 0;
    };
    bool identity_ = true;
    uint32_t lanes_ = 0;
    std::vector<WorkLane> work_;
    std::array<uint8_t, 64> lane_of_{};
    std::vector<uint32_t> standing_;
    std::vector<Window> columns_;
    std::vector<int32_t> line_;  // one input line of the split: in_width x lanes
    std::vector<int32_t> ring_;  // W results of the last kernel_h lines: out_width x lanes each
    std::vector<int32_t> out_;   // one output line
    std::vector<int16_t> constant_rows_;  // per work lane, its row if it holds one value
    uint32_t constant_width_ = 0;
    std::vector<const int16_t*> rows_;  // the input row of each work lane (flying)
    size_t pair_begin_ = 0;             // find_pair_run
    uint32_t pair_count_ = 0;
    std::vector<uint8_t> bytes_;
    std::vector<uint8_t> work_bytes_;  // an int8 output line's work lanes (store_line)
};

}  // namespace

void Pdp::execute(Context& ctx, Group pdp, Group rdma, const ElementCube* flying) {
    // The status counters restart with every operation (reset_stats_regs).
    pdp.set(NVDLA_PDP_D_NAN_INPUT_NUM, 0);
    pdp.set(NVDLA_PDP_D_INF_INPUT_NUM, 0);
    pdp.set(NVDLA_PDP_D_NAN_OUTPUT_NUM, 0);
    const std::optional<Config> config = ConfigReader(ctx, pdp, rdma, flying).read();
    if (!config) return;
    Pooling pooling(ctx, *config, config->flying ? flying : nullptr);
    pooling.run();
    pdp.set(NVDLA_PDP_D_NAN_INPUT_NUM, pooling.nan_input);
    pdp.set(NVDLA_PDP_D_INF_INPUT_NUM, pooling.inf_input);
    pdp.set(NVDLA_PDP_D_NAN_OUTPUT_NUM, pooling.nan_output);
}

}  // namespace nvdla::emu
