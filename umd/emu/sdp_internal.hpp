// Private to the SDP model (sdp*.cpp): one operation's registers decoded and checked, the
// datapath stages that work a line of elements at a time, and the DMA of input, operands and
// output. docs/emu/sdp.md describes the model.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "emu/parallel.hpp"
#include "emu/unit.hpp"
#include "nvdla/precision/convertor.hpp"
#include "nvdla/precision/integer.hpp"
#include "nvdla/precision/lut.hpp"

namespace nvdla::emu::sdp {

// DATA_USE of the BRDMA/NRDMA/ERDMA configuration: which SDP operands an element carries.
enum class OperandUse : uint8_t { Mul = 0, Alu = 1, Both = 2 };

// One of SDP_RDMA's operand read DMAs (BRDMA for X1, NRDMA for X2, ERDMA for Y).
struct OperandDma {
    bool enabled = false;  // *_DISABLE == NO
    OperandUse use = OperandUse::Alu;
    uint32_t component_bytes = 1;  // DATA_SIZE: one or two bytes per component
    bool per_element = false;      // DATA_MODE: per element (W x H x C) or per kernel (1 x 1 x C)
    MemoryPort port = MemoryPort::Primary;
    uint64_t base = 0, line_stride = 0, surface_stride = 0;
    bool take_alu = false, take_mul = false;  // what the datapath takes from this DMA

    uint32_t components() const { return use == OperandUse::Both ? 2 : 1; }
    uint32_t bytes_per_value() const { return components() * component_bytes; }
    // Byte offset of the ALU or MUL component within a value (ALU first when both).
    uint32_t component_offset(bool alu) const {
        return use == OperandUse::Both && !alu ? component_bytes : 0;
    }
};

// X1 (BS) or X2 (BN): ALU -> MUL (PReLU) -> truncate -> ReLU.
struct XStage {
    bool enabled = false;
    bool alu_bypass = true;
    uint32_t alu_algo = 0;  // MAX, MIN, SUM (3 is SUM on the int pipelines, EQL on fp16)
    bool alu_from_memory = false;
    uint32_t alu_shift = 0;  // 6 bits
    int16_t alu_operand = 0;
    bool mul_bypass = true;
    bool prelu = false;
    bool mul_from_memory = false;
    uint32_t mul_shift = 0;  // the low 6 bits of MUL_SHIFT_VALUE, as the datapath takes them
    int16_t mul_operand = 0;
    bool relu_bypass = true;
};

// An X ALU operand shifted left into 32 bits, saturating (IntShiftLeft).
inline int32_t x_alu_operand(int16_t operand, uint32_t shift) {
    return static_cast<int32_t>(precision::shift_left_saturate(operand, shift, 32));
}

// The Y operand convertor of a memory operand (int pipelines).
struct OperandConvertor {
    bool bypass = true;
    precision::ConvertorParams params;
};

// Y (EW): operand convertors, MUL (PReLU) -> ALU, then the LUT.
struct YStage {
    bool enabled = false;
    bool alu_bypass = true;
    uint32_t alu_algo = 0;  // MAX, MIN, SUM, EQL
    bool alu_from_memory = false;
    uint32_t alu_operand = 0;  // register: int32, or fp32 bits on the fp16 pipeline
    OperandConvertor alu_cvt;
    bool mul_bypass = true;
    bool prelu = false;
    bool mul_from_memory = false;
    uint32_t mul_operand = 0;
    OperandConvertor mul_cvt;
    uint32_t truncate = 0;  // EW_TRUNCATE, 10 bits
    bool lut = false;       // the LUT is part of this operation
};

// The DMA view of a cube: surfaces of atoms, line by line.
struct CubeAddress {
    MemoryPort port = MemoryPort::Primary;
    uint64_t base = 0, line_stride = 0, surface_stride = 0, batch_stride = 0;
    bool packed = false;  // a 1 x 1 cube: its surfaces are read or written as one run of atoms
};

// Everything one operation needs, decoded from the SDP, SDP_RDMA and LUT registers.
struct Settings {
    Precision input = Precision::Int8;  // of the data read from memory (offline mode)
    Precision proc = Precision::Int8;
    Precision output = Precision::Int8;
    uint32_t width = 1, height = 1, channels = 1, batches = 1;
    uint32_t atom = 32;
    uint32_t group = 32;      // elements the datapath takes per atom: atom / proc bytes
    uint32_t in_lanes = 32;   // channels per input surface
    uint32_t out_lanes = 32;  // channels per output surface
    uint32_t groups = 1;      // channel groups of `group` elements (the last one padded)

    bool flying = false;
    bool to_pdp = false;
    bool eql = false;          // Y ALU in EQL mode: compare only, nothing written
    bool nan_to_zero = false;  // NAN_TO_ZERO on the fp16 pipeline

    XStage bs, bn;
    YStage ew;
    OperandDma bs_dma, bn_dma, ew_dma;
    precision::LutProgram lut;
    precision::ConvertorParams cvt;

    CubeAddress src, dst;

    bool count_saturation = false;
    bool count_lut = false;
    bool count_output_nan = false;
    bool count_input_nan_inf = false;

    bool fp() const { return proc == Precision::Fp16; }
    uint32_t padded_channels() const { return groups * group; }
    size_t line_elements() const { return size_t(width) * group; }
};

// Decodes and checks the registers; false after ctx.error named the register that holds a
// value the model cannot execute.
bool decode(Context& ctx, Group single, Group sdp, Group rdma, const AccumulatorCube* flying,
            Settings& s);

// The strides the DMAs need on 1x1 cubes (sdp_checks.cpp); false after ctx.error named the
// register.
bool check_dma_rules(Context& ctx, Group sdp, const Settings& s);

// What the operation counts for the status and performance registers.
struct Counters {
    uint32_t saturations = 0;
    uint32_t output_nans = 0;
    uint32_t input_nans = 0;
    uint32_t input_infs = 0;
    precision::LutStatistics lut;
    bool unequal = false;
};

// A line of operands for one stage: W x group values in atom order, or nullptr when the
// operand comes from a register.
struct OperandLine {
    const int16_t* alu = nullptr;
    const int16_t* mul = nullptr;
    bool same_for_every_element = false;  // per-kernel data: each element's group repeated
    // Instead of `alu`: one-byte ALU operands as they lie in memory (a reader asked to hand
    // them so: OperandReader::hand_bytes_in_place).
    const int8_t* alu_bytes = nullptr;
};

// FpAlu on fp32 patterns: MAX, MIN, SUM, and for 3 (EQL) 0 when the patterns are equal, else 1.
uint32_t fp_alu(uint32_t algo, uint32_t a, uint32_t b);

// The stages, each over one line of elements: int32 values on the int pipelines, fp32 bit
// patterns (in the same int32_t slots) on the fp16 pipeline.
void run_x(const XStage& x, bool fp, bool nan_to_zero, std::span<int32_t> line, OperandLine ops);
void run_y(const Settings& s, std::span<int32_t> line, OperandLine ops, Counters& counters);
// The output convertor: 16-bit outputs (int8 sign-extended, int16, or fp16 bits); in EQL mode
// the low 16 bits pass through and only the comparison is recorded.
void run_c(const Settings& s, std::span<const int32_t> line, std::span<uint16_t> out,
           Counters& counters);

// The vector forms of the integer stages (sdp_simd.cpp: AVX-512, sdp_simd_avx2.cpp: AVX2), bit
// for bit what the scalar ones compute, at the ISA level in use (isa.hpp). simd_enabled(): the
// level is AVX2 or AVX-512 and the tests have not asked for the scalar forms (force_scalar);
// the *_supported checks say which programming they take (the same for both forms).
bool simd_enabled();
void force_scalar(bool scalar);
// CACC's values for channel group g, line h of batch b from a channels-last cube (padding
// lanes 0).
void flying_line_simd(const Settings& s, const AccumulatorCube& cube, uint32_t b, uint32_t g,
                      uint32_t h, std::span<int32_t> line);
bool x_simd_supported(const XStage& x);
void run_x_simd(const XStage& x, std::span<int32_t> line, OperandLine ops);
// Y on the int pipelines without the LUT (its AVX2 form at both vector levels).
bool y_simd_supported(const Settings& s);
void run_y_simd(const YStage& y, std::span<int32_t> line, OperandLine ops);
bool c_simd_supported(const Settings& s);
// Whether Y's vector forms may work in 32-bit lanes on inputs below 2^30 in magnitude: no MUL,
// and an ALU (MAX, MIN or SUM) whose operand provably stays within 2^30 (the register's value,
// or a memory operand through its convertor). `cvt_half`: the convertor's rounding half in
// those lanes (it runs there only on memory operands, with a shift of at most 30).
struct YNarrowPlan {
    bool narrow = false;
    uint32_t cvt_shift = 0;
    int32_t cvt_offset = 0, cvt_half = 0;
};
inline YNarrowPlan plan_y_narrow(const YStage& y) {
    YNarrowPlan plan;
    const precision::ConvertorParams& c = y.alu_cvt.params;
    const bool bypass = y.alu_cvt.bypass;
    plan.cvt_shift = c.shift & 63u;
    const int64_t scale = c.scale < 0 ? -int64_t(c.scale) : c.scale;
    const int64_t offset = c.offset < 0 ? -int64_t(c.offset) : c.offset;
    const bool memory_fits =
        bypass || (plan.cvt_shift <= 30 && (32768 + offset) * scale <= (int64_t(1) << 30));
    const auto operand = static_cast<int32_t>(y.alu_operand);
    const bool operand_fits =
        y.alu_from_memory ? memory_fits : operand >= -(1 << 30) && operand <= (1 << 30);
    plan.narrow = y.mul_bypass && (y.alu_bypass || (y.alu_algo <= 2 && operand_fits));
    const bool cvt_narrow = plan.narrow && !bypass && plan.cvt_shift >= 1 && plan.cvt_shift <= 30;
    plan.cvt_offset = plan.narrow && !bypass ? c.offset : 0;
    plan.cvt_half = cvt_narrow ? int32_t(1) << (plan.cvt_shift - 1) : 0;
    return plan;
}
// When the output convertor's vector forms may take 32-bit lanes (shift <= 30): for x in
// [lower, upper] the product p = (x - offset) * scale stays within reach = 2^31 - 1 - half
// (half = 2^(shift - 1), 0 for shift 0), so p, and p + half - [p < 0] as the rounding takes it,
// fit 32 bits. `outside_saturates`: every x outside has |p| >= 2^31 - half, which rounds to at
// least (max + 1) in magnitude, when (max + 1) * 2^shift <= 2^31 (max: 127 for int8 output,
// 32767 for int16: shifts up to 24 and 16); such values take the output's bound on the side of
// the product's sign.
struct CNarrowPlan {
    bool narrow = false;
    bool outside_saturates = false;
    int32_t lower = 0, upper = 0;
};
inline CNarrowPlan plan_c_narrow(const precision::ConvertorParams& cvt, Precision output) {
    CNarrowPlan plan;
    const uint32_t shift = cvt.shift & 63u;
    plan.narrow = shift <= 30;
    const int64_t max = output == Precision::Int8 ? 127 : 32767;
    plan.outside_saturates = plan.narrow && (max + 1) << shift <= (int64_t(1) << 31);
    const int64_t half = plan.narrow && shift ? int64_t(1) << (shift - 1) : 0;
    const int64_t magnitude = cvt.scale < 0 ? -int64_t(cvt.scale) : cvt.scale;
    const int64_t reach = magnitude ? ((int64_t(1) << 31) - 1 - half) / magnitude : INT64_MAX / 4;
    plan.lower = static_cast<int32_t>(std::max<int64_t>(INT32_MIN, int64_t(cvt.offset) - reach));
    plan.upper = static_cast<int32_t>(std::min<int64_t>(INT32_MAX, int64_t(cvt.offset) + reach));
    return plan;
}
// The output convertor as a clamp of its input, for its vector forms when the saturation flag
// is not counted: the int8/int16 output is a monotone function of x (non-decreasing for a
// scale >= 0, else non-increasing), so x clamped to [lower, upper] (the greatest x whose
// output is INT32_MIN's, the least whose output is INT32_MAX's) gives every output unchanged.
// `exact`: within them (x - offset) * scale and its rounding fit 32-bit lanes (a negative
// product needs only to fit itself: its rounding adds 2^(shift - 1) - 1), so the output is the
// rounded product clamped to the output's range (a saturating pack).
// (fp16 output: the int32 limits, not exact.)
struct CClampPlan {
    bool exact = false;
    int32_t lower = 0, upper = 0;
};
CClampPlan plan_c_clamp(const precision::ConvertorParams& cvt, Precision output);
// The output convertor's saturation flag (C model: the quotient beyond 17 bits by more than
// its rounding) as bounds on its input x, for shifts up to 30: flagged exactly when
// (x - offset) * scale >= 65537 * 2^shift or < -65537 * 2^shift, i.e. when x >= above or
// x <= below (bounds beyond int32 never met).
struct FlagBounds {
    int64_t above = INT64_MAX, below = INT64_MIN;
};
inline FlagBounds convertor_flag_bounds(const precision::ConvertorParams& cvt, uint32_t shift) {
    FlagBounds b;
    if (cvt.scale == 0 || shift > 30) return b;
    const int64_t limit = int64_t(65537) << shift;
    const int64_t m = cvt.scale < 0 ? -int64_t(cvt.scale) : cvt.scale;
    const int64_t floor_q = limit / m, ceil_q = (limit + m - 1) / m;
    if (cvt.scale > 0) {
        b.above = int64_t(cvt.offset) + ceil_q;
        b.below = int64_t(cvt.offset) - floor_q - 1;
    } else {
        b.above = int64_t(cvt.offset) + floor_q + 1;
        b.below = int64_t(cvt.offset) - ceil_q;
    }
    return b;
}
void run_c_simd(const Settings& s, std::span<const int32_t> line, std::span<uint16_t> out,
                Counters& counters);
// The common layer in one pass: CACC's channels-last values (flying) or the input lines
// SDP_RDMA reads (offline), X1/X2, Y without the LUT (the element-wise sums of residual
// networks), the convertor and the output atoms, line by line straight into the write DMA
// (the order of Sdp::execute), or kept for PDP (OutputWriter's PDP form). Takes the programming
// fused_supported() accepts: int input and output, output to memory or PDP, whole 16-channel pieces
// of a channel group, or groups of 8 channels in 8-lane output surfaces (nv_small's int8 atoms).
bool fused_supported(const Settings& s, const AccumulatorCube* flying);
class InputReader;
class OperandReader;
class OutputWriter;
// The operand DMAs of X1, X2 and Y (nullptr when off).
struct FusedOperands {
    OperandReader* bs = nullptr;
    OperandReader* bn = nullptr;
    OperandReader* ew = nullptr;
};
// Where one line of a channel group comes from: `valid` lanes of W elements `step` values
// apart (the lanes past them are 0).
struct FusedSource {
    const int32_t* values = nullptr;
    size_t step = 0;
    uint32_t valid = 0;
};
// `cube` in flying mode (a deferred one taken block by block: fused_pass), `input` offline.
void run_fused(const Settings& s, const AccumulatorCube* cube, InputReader* input,
               FusedOperands operands, OutputWriter& writer, Counters& counters);
// Whether a per-element operand SDP_RDMA reads may lie where the output goes: then the lines
// must come in Sdp::execute's order (a deferred cube is computed whole first).
bool operands_overlap_output(const Settings& s);
// Whether two output lines of the write DMA may share bytes (a line, surface or batch stride
// below what it strides over): their order then decides what memory holds, so the lines are
// written on the calling thread in order.
inline bool output_lines_overlap(const Settings& s) {
    const uint64_t line = uint64_t(s.width) * s.atom;
    const uint64_t surfaces = uint64_t(s.groups) * (s.group / s.out_lanes);
    const uint64_t surface_span = uint64_t(s.height - 1) * s.dst.line_stride + line;
    const uint64_t batch_span = (surfaces - 1) * s.dst.surface_stride + surface_span;
    return (s.height > 1 && s.dst.line_stride < line) ||
           (surfaces > 1 && s.dst.surface_stride < surface_span) ||
           (s.batches > 1 && s.dst.batch_stride < batch_span);
}

// The AVX2 forms (sdp_simd_avx2.cpp), which the functions above call below the AVX-512 level.
namespace avx2 {
void flying_line(const Settings& s, const AccumulatorCube& cube, uint32_t b, uint32_t g, uint32_t h,
                 std::span<int32_t> line);
void run_x(const XStage& x, std::span<int32_t> line, OperandLine ops);
void run_y(const YStage& y, std::span<int32_t> line, OperandLine ops);
void run_c(const Settings& s, std::span<const int32_t> line, std::span<uint16_t> out,
           Counters& counters);
void run_fused(const Settings& s, const AccumulatorCube* cube, InputReader* input,
               FusedOperands operands, OutputWriter& writer, Counters& counters);
}  // namespace avx2

// The buffers of one SDP unit's operations, which Sdp keeps for the next ones (a unit runs one
// operation at a time, on one thread): each operation takes them at its own sizes, zeroed as
// new vectors would be (take()), so that once they have grown to the largest operation's, an
// operation allocates none of them.
struct OperandBuffers {
    std::vector<std::byte> raw;
    std::vector<int16_t> alu_line, mul_line, alu_kernels, mul_kernels;
};
struct Buffers {
    OperandBuffers bs, bn, ew;
    std::vector<std::byte> input_packed, input_raw;
    std::vector<int32_t> input_line;
    std::vector<std::byte> output_packed, output_line, output_kept, output_group;
    std::vector<int32_t> line;  // Sdp::execute's own pass
    std::vector<uint16_t> out;
    // The fused pass over a deferred cube's blocks: the group's operand lines and the slots'
    // output lines when lines are made with their blocks; on several threads (fused_pass's
    // prepare and make), per slot the places of its output lines and its lines' operands
    // (copied, where they were read), per part a line made before it goes to its places.
    struct Slot {
        std::vector<std::byte*> places;
        std::vector<OperandLine> ops;
        std::vector<std::array<size_t, 3>> copied_at;
        std::vector<int16_t> values;
        std::vector<int8_t> bytes;
    };
    std::vector<OperandLine> group_ops;
    std::vector<std::byte> slot_lines;
    std::vector<Slot> slots;
    std::vector<std::vector<std::byte>> made_lines;
};
// v as n value-initialised elements, in the capacity it has.
template <class T>
T* take(std::vector<T>& v, size_t n) {
    v.assign(n, T{});
    return v.data();
}

// SDP_RDMA's input read (offline mode): decodes whole channel groups, line by line.
class InputReader {
  public:
    InputReader(Context& ctx, const Settings& s, Buffers& buffers);
    // Fills line (W x group) with channel group g, line h: int32 values or fp32 bits.
    void read(uint32_t g, uint32_t h, std::span<int32_t> line, Counters& counters);
    // The same into the reader's own line, valid until the next call.
    const int32_t* read(uint32_t g, uint32_t h, Counters& counters) {
        read(g, h, line_, counters);
        return line_.data();
    }
    // The W x atom bytes of input surface `surface`, line h, as read() takes them (in place,
    // or zeros after a fault), valid until the next call (not for 1 x 1 packed cubes).
    const std::byte* line_bytes(uint32_t surface, uint32_t h);

  private:
    void fetch(uint64_t address, uint64_t bytes, std::byte* dst);

    Context& ctx_;
    const Settings& s_;
    std::vector<std::byte>& packed_;  // a 1 x 1 cube, read at once
    std::vector<std::byte>& raw_;
    std::vector<int32_t>& line_;
};

// One operand DMA: per-kernel data read once, per-element data a line at a time.
class OperandReader {
  public:
    OperandReader(Context& ctx, const Settings& s, const OperandDma& dma, OperandBuffers& buffers);
    // The operands of channel group g, line h. `one_element`: per-kernel data may come as
    // the group's values once (same_for_every_element), for a reader that takes them so.
    OperandLine load(uint32_t g, uint32_t h, bool one_element = false);
    // From now on, per-element ALU-only operands of one byte come as OperandLine::alu_bytes,
    // read in place (valid until the next load), for a reader that takes them so and writes
    // nothing where they lie while it uses them.
    void hand_bytes_in_place();

  private:
    void decode(const std::byte* src, size_t values, int16_t* dst, bool alu) const;

    Context& ctx_;
    const Settings& s_;
    const OperandDma& dma_;
    std::vector<std::byte>& raw_;
    std::vector<int16_t>& alu_line_;
    std::vector<int16_t>& mul_line_;
    uint32_t loaded_group_ = UINT32_MAX;
    bool bytes_in_place_ = false;
    bool kernels_decoded_ = false;
    std::vector<int16_t>& alu_kernels_;  // per-kernel data, every group decoded
    std::vector<int16_t>& mul_kernels_;
};

// The write DMA: output lines to memory.
class OutputWriter {
  public:
    OutputWriter(Context& ctx, const Settings& s, Buffers& buffers);
    // For the fused pass of an operation whose output goes to PDP: the lines are kept as the
    // write DMA would lay them out (no DMA), and finish() hands them to `to_pdp` (set up by
    // Sdp::execute), as Sdp::execute's own lines would.
    OutputWriter(Context& ctx, const Settings& s, Buffers& buffers, ElementCube& to_pdp);
    // The 16-bit outputs of channel group g, line h of batch b.
    void write(uint32_t b, uint32_t g, uint32_t h, std::span<const uint16_t> out);
    // The output lines of channel group g, line h of batch b as the write DMA sends them:
    // the group's surfaces, W x atom bytes each, one after the other (not for 1 x 1 cubes).
    void write_lines(uint32_t b, uint32_t g, uint32_t h, const std::byte* lines);
    // Where write_lines(b, g, h, ...) puts each of the group's surfaces' lines, checked and
    // counted as it does (Dma::place; nullptr for a line whose write faults), for a caller that
    // copies them there itself before anything reads them.
    void place_lines(uint32_t b, uint32_t g, uint32_t h, std::byte** places);
    uint32_t lines_per_group() const { return s_.group / s_.out_lanes; }
    size_t group_bytes() const { return size_t(s_.group / s_.out_lanes) * s_.width * s_.atom; }
    // group_bytes() for the caller to make a group's lines in (the writer's own).
    std::byte* group_lines() { return group_.data(); }
    // The unit's buffers, for the pass that writes through this writer.
    Buffers& buffers() { return buffers_; }
    // Writes what a packed 1 x 1 cube gathered, or hands the kept lines to PDP.
    void finish();

  private:
    // Where the kept line h of output surface `surface` lies (output to PDP).
    std::byte* kept_line(uint32_t surface, uint32_t h) {
        return kept_.data() + (size_t(surface) * s_.height + h) * s_.width * s_.atom;
    }

    Context& ctx_;
    const Settings& s_;
    Buffers& buffers_;
    std::vector<std::byte>& packed_;
    std::vector<std::byte>& line_;
    std::vector<std::byte>& group_;
    ElementCube* to_pdp_ = nullptr;
    std::vector<std::byte>& kept_;
};

// Constants a line form derives from its channel group's X1 and X2 operand lines, made once per
// group before the pass instead of on every line. Per-kernel operands are read when their reader
// is made and decoded once (OperandReader::load with one_element), so every line of group g gets
// the very operand lines (pointers) that load(g, 0, true) gave here, over the same values;
// register operands are null pointers. find() gives the group's constants for a line whose X
// operand lines are a group's, else nullptr (the line then makes its own). Empty when an X
// operand is per element: its reads belong to the pass's order.
template <class Constants>
class GroupConstants {
  public:
    // make(ops): the constants of operand lines ops[0] (X1), ops[1] (X2).
    template <class Make>
    GroupConstants(const Settings& s, FusedOperands operands, Make&& make) : group_(s.group) {
        if ((operands.bs && s.bs_dma.per_element) || (operands.bn && s.bn_dma.per_element)) return;
        // Without operand readers every group has the same (register) operands.
        const uint32_t groups = operands.bs || operands.bn ? s.groups : 1;
        entries_.reserve(groups);
        for (uint32_t g = 0; g < groups; ++g) {
            Entry& e = entries_.emplace_back();
            e.ops[0] = operands.bs ? operands.bs->load(g, 0, true) : OperandLine{};
            e.ops[1] = operands.bn ? operands.bn->load(g, 0, true) : OperandLine{};
            e.constants = make(e.ops);
        }
    }

    const Constants* find(const OperandLine* ops) const {
        if (entries_.empty()) return nullptr;
        // A group's operands lie group values after the previous group's in each reader's
        // array: the group from the first pointer there is, checked whole below.
        size_t g = 0;
        const int16_t* first = first_pointer(entries_[0].ops);
        if (first) {
            const int16_t* mine = first_pointer(ops);
            if (!mine) return nullptr;
            const uintptr_t apart =
                reinterpret_cast<uintptr_t>(mine) - reinterpret_cast<uintptr_t>(first);
            g = apart / (size_t(group_) * sizeof(int16_t));
            if (g >= entries_.size()) return nullptr;
        }
        const Entry& e = entries_[g];
        return same(e.ops[0], ops[0]) && same(e.ops[1], ops[1]) ? &e.constants : nullptr;
    }

  private:
    struct Entry {
        OperandLine ops[2];
        Constants constants;
    };
    static const int16_t* first_pointer(const OperandLine* ops) {
        for (int k = 0; k < 2; ++k) {
            if (ops[k].alu) return ops[k].alu;
            if (ops[k].mul) return ops[k].mul;
        }
        return nullptr;
    }
    static bool same(const OperandLine& a, const OperandLine& b) {
        return a.alu == b.alu && a.mul == b.mul && a.alu_bytes == b.alu_bytes &&
               a.same_for_every_element == b.same_for_every_element;
    }

    uint32_t group_;
    std::vector<Entry> entries_;
};

// A lambda handed to a std::function parameter by reference (the lambda, a temporary, lives
// until the call returns), so that the std::function does not copy its captures to the heap.
template <class Fn>
std::reference_wrapper<Fn> by_reference(Fn&& fn) {
    return std::reference_wrapper<Fn>(fn);
}

// The fused pass's lines in order, each made by line(from, operand lines, line buffers,
// saturation count) and handed to the write DMA: channel group, line, batch, the order of
// Sdp::execute; a deferred cube by blocks of rows computed just before (block, channel group,
// line, batch), so that each block is read while it is in the cache. Each operand line is read
// once either way. Every DMA (operand reads, output writes) is made on the calling thread in
// that order; a deferred cube's blocks are made on the layer's threads, and with them their
// lines when no line reads memory (operands per kernel, read before the pass, or registers).
// line() may run on several threads at once, each call with its thread's own count.
template <class LineFn>
void fused_pass(const Settings& s, const AccumulatorCube* cube, InputReader* input,
                FusedOperands operands, OutputWriter& writer, Counters& counters, LineFn&& line) {
    const size_t group_bytes = writer.group_bytes();
    std::byte* const lines = writer.group_lines();
    const auto load = [&](uint32_t g, uint32_t h, OperandLine* ops) {
        // X1 and X2 take per-kernel operands once per line.
        ops[0] = operands.bs ? operands.bs->load(g, h, true) : OperandLine{};
        ops[1] = operands.bn ? operands.bn->load(g, h, true) : OperandLine{};
        ops[2] = operands.ew ? operands.ew->load(g, h) : OperandLine{};
    };
    // Whether a line's operands are read per element; else they are the same for every line
    // of a channel group (read before the pass), loaded when the group changes.
    const bool operands_per_line = (operands.bs && s.bs_dma.per_element) ||
                                   (operands.bn && s.bn_dma.per_element) ||
                                   (operands.ew && s.ew_dma.per_element);
    uint32_t loaded_group = UINT32_MAX;
    const auto load_line = [&](uint32_t g, uint32_t h, OperandLine* ops) {
        if (!operands_per_line && g == loaded_group) return;
        load(g, h, ops);
        loaded_group = g;
    };
    OperandLine ops[3];
    uint32_t saturated = 0;
    if (cube && cube->deferred) {
        // The layer's threads make the blocks (CMAC and CACC); this thread takes them in
        // order, so the operand reads and output writes (the embedder's memory and access
        // check, which record the first fault) come in the same order for any thread count.
        DeferredRows& rows = *cube->deferred;
        const unsigned threads = std::max(1u, rows.threads());
        const uint32_t block = rows.block_rows();
        const uint32_t blocks = (s.height + block - 1) / block;
        const unsigned parts = std::min(threads, blocks);
        // Two blocks per thread in flight: one being made, one waiting to be taken.
        const uint32_t slots = parts > 1 ? 2 * parts : 1;
        const size_t row_values = size_t(s.width) * cube->channel_stride;
        const size_t slot_values = size_t(block) * row_values * cube->batches;
        int32_t* storage = rows.begin(slot_values * slots);
        // Lines made with their block (on its thread, into the slot's output lines) when no
        // line reads memory: per-kernel operands are read when their reader is made, and
        // OperandReader::load only hands out what it decoded (first here, on this thread).
        const bool per_element = (operands.bs && s.bs_dma.per_element) ||
                                 (operands.bn && s.bn_dma.per_element) || operands.ew;
        const bool lines_with_blocks = parts > 1 && !per_element;
        Buffers& buffers = writer.buffers();
        OperandLine* const group_ops =
            take(buffers.group_ops, lines_with_blocks ? 3 * size_t(s.groups) : 0);
        for (uint32_t g = 0; g < s.groups && lines_with_blocks; ++g) load(g, 0, &group_ops[3 * g]);
        const size_t slot_lines = size_t(s.groups) * block * s.batches;
        // Output lines that share bytes are written by the calling thread, in order; the
        // lines made with their blocks then wait in the slots.
        const bool lines_overlap = output_lines_overlap(s);
        const bool lines_in_slots = lines_with_blocks && lines_overlap;
        std::byte* const out =
            take(buffers.slot_lines, lines_in_slots ? slots * slot_lines * group_bytes : 0);
        // Where line (g, h - y0, b) of a slot's output lines goes.
        const auto out_line = [&](uint32_t slot, uint32_t g, uint32_t row, uint32_t b) {
            return out + ((slot * size_t(s.groups) + g) * block + row) * s.batches * group_bytes +
                   b * group_bytes;
        };
        // Line h (of the block from y0), batch b, channel group g of a block's values.
        const auto source = [&](const int32_t* values, uint32_t y0, uint32_t y1, uint32_t g,
                                uint32_t h, uint32_t b) {
            const uint32_t first = g * s.group;
            return FusedSource{values + b * (y1 - y0) * row_values + (h - y0) * row_values + first,
                               cube->channel_stride, std::min(s.group, s.channels - first)};
        };
        // Summed over the parts (CACC's, SDP's), a block at a time.
        std::atomic<uint32_t> cacc_saturated{0}, sdp_saturated{0};
        if (parts > 1 && !lines_overlap) {
            // This thread makes every DMA of a block first, in the one-thread order (each
            // line's operand reads when lines read memory, copied into the block's slot, then
            // the checked places of its output lines), and the block's thread then computes
            // the block, its lines and copies them to their places, so that the end of the
            // pass does not wait for this thread to write every block's lines. The operands
            // never lie where the output goes here (operands_overlap_output), so the copies
            // hold what the lines would have read, and nothing reads the output before the
            // pass ends; no two output lines share bytes (output_lines_overlap), so the order
            // of the threads' copies does not matter.
            const uint32_t per_group = writer.lines_per_group();
            const size_t line_bytes = group_bytes / per_group;
            const size_t elements = s.line_elements();
            if (buffers.slots.size() < slots) buffers.slots.resize(slots);
            for (uint32_t slot = 0; slot < slots; ++slot)
                take(buffers.slots[slot].places, slot_lines * per_group);
            if (buffers.made_lines.size() < parts) buffers.made_lines.resize(parts);
            for (unsigned part = 0; part < parts; ++part)
                take(buffers.made_lines[part], group_bytes);
            prepare_then_make(
                parts, blocks, slots, by_reference([&](uint32_t i, uint32_t slot) {
                    const uint32_t y0 = i * block, y1 = std::min(s.height, y0 + block);
                    Buffers::Slot& kept_slot = buffers.slots[slot];
                    std::vector<OperandLine>& kept = kept_slot.ops;
                    std::vector<int16_t>& values = kept_slot.values;
                    std::vector<int8_t>& bytes = kept_slot.bytes;
                    // An operand line is valid until its reader's next load: copied, the
                    // pointers set once the slot's copies stop growing.
                    std::vector<std::array<size_t, 3>>& at = kept_slot.copied_at;
                    kept.clear();
                    values.clear();
                    bytes.clear();
                    at.clear();
                    size_t index = 0;
                    for (uint32_t g = 0; g < s.groups; ++g)
                        for (uint32_t h = y0; h < y1; ++h, ++index) {
                            if (per_element) load(g, h, ops);
                            for (int k = 0; k < 3 && per_element; ++k) {
                                OperandLine o = ops[k];
                                std::array<size_t, 3> where{SIZE_MAX, SIZE_MAX, SIZE_MAX};
                                // X's per-kernel operands are decoded once for the pass
                                // and stay; every other line is copied.
                                if (k == 2 || !o.same_for_every_element) {
                                    if (o.alu) {
                                        where[0] = values.size();
                                        values.insert(values.end(), o.alu, o.alu + elements);
                                    }
                                    if (o.mul) {
                                        where[1] = values.size();
                                        values.insert(values.end(), o.mul, o.mul + elements);
                                    }
                                    if (o.alu_bytes) {
                                        where[2] = bytes.size();
                                        bytes.insert(bytes.end(), o.alu_bytes,
                                                     o.alu_bytes + elements);
                                    }
                                }
                                kept.push_back(o);
                                at.push_back(where);
                            }
                            for (uint32_t b = 0; b < s.batches; ++b)
                                writer.place_lines(
                                    b, g, h,
                                    &kept_slot.places[(index * s.batches + b) * per_group]);
                        }
                    for (size_t j = 0; j < kept.size(); ++j) {
                        if (at[j][0] != SIZE_MAX) kept[j].alu = values.data() + at[j][0];
                        if (at[j][1] != SIZE_MAX) kept[j].mul = values.data() + at[j][1];
                        if (at[j][2] != SIZE_MAX) kept[j].alu_bytes = bytes.data() + at[j][2];
                    }
                }),
                by_reference([&](unsigned part, uint32_t i, uint32_t slot) {
                    const uint32_t y0 = i * block, y1 = std::min(s.height, y0 + block);
                    int32_t* values = storage + slot * slot_values;
                    cacc_saturated.fetch_add(rows.compute(y0, y1, values),
                                             std::memory_order_relaxed);
                    std::byte* made = buffers.made_lines[part].data();
                    const Buffers::Slot& made_slot = buffers.slots[slot];
                    uint32_t counted = 0;
                    size_t index = 0;
                    for (uint32_t g = 0; g < s.groups; ++g)
                        for (uint32_t h = y0; h < y1; ++h, ++index)
                            for (uint32_t b = 0; b < s.batches; ++b) {
                                std::byte* const* to =
                                    &made_slot.places[(index * s.batches + b) * per_group];
                                // A group of one line is made in its place (as on one thread).
                                const bool in_place = per_group == 1 && to[0];
                                line(source(values, y0, y1, g, h, b),
                                     per_element ? &made_slot.ops[3 * index] : &group_ops[3 * g],
                                     in_place ? to[0] : made, counted);
                                for (uint32_t j = 0; j < per_group && !in_place; ++j)
                                    if (to[j])
                                        std::memcpy(to[j], made + j * line_bytes, line_bytes);
                            }
                    sdp_saturated.fetch_add(counted, std::memory_order_relaxed);
                }));
        } else {
            // The operands never lie where the output goes (operands_overlap_output: else the
            // cube is taken whole), so each line may be written while it is made.
            const bool line_in_place = writer.lines_per_group() == 1;
            produce_in_order(
                parts, blocks, slots, by_reference([&](unsigned, uint32_t i, uint32_t slot) {
                    const uint32_t y0 = i * block, y1 = std::min(s.height, y0 + block);
                    int32_t* values = storage + slot * slot_values;
                    cacc_saturated.fetch_add(rows.compute(y0, y1, values),
                                             std::memory_order_relaxed);
                    if (!lines_in_slots) return;
                    uint32_t flagged = 0;
                    for (uint32_t g = 0; g < s.groups; ++g)
                        for (uint32_t h = y0; h < y1; ++h)
                            for (uint32_t b = 0; b < s.batches; ++b)
                                line(source(values, y0, y1, g, h, b), &group_ops[3 * g],
                                     out_line(slot, g, h - y0, b), flagged);
                    sdp_saturated.fetch_add(flagged, std::memory_order_relaxed);
                }),
                by_reference([&](uint32_t i, uint32_t slot) {
                    const uint32_t y0 = i * block, y1 = std::min(s.height, y0 + block);
                    const int32_t* values = storage + slot * slot_values;
                    for (uint32_t g = 0; g < s.groups; ++g)
                        for (uint32_t h = y0; h < y1; ++h) {
                            if (lines_in_slots) {
                                for (uint32_t b = 0; b < s.batches; ++b)
                                    writer.write_lines(b, g, h, out_line(slot, g, h - y0, b));
                                continue;
                            }
                            load_line(g, h, ops);  // once for every batch, as below
                            for (uint32_t b = 0; b < s.batches; ++b) {
                                // A group of one output line is made where it goes, checked
                                // and counted as write_lines does it (a line faulting is made
                                // in `lines` and dropped): no line reads memory it writes.
                                std::byte* place = nullptr;
                                if (line_in_place) writer.place_lines(b, g, h, &place);
                                line(source(values, y0, y1, g, h, b), ops, place ? place : lines,
                                     saturated);
                                if (!line_in_place) writer.write_lines(b, g, h, lines);
                            }
                        }
                }));
        }
        rows.finish(cacc_saturated.load(std::memory_order_relaxed));
        counters.saturations += saturated + sdp_saturated.load(std::memory_order_relaxed);
        return;
    }
    for (uint32_t g = 0; g < s.groups; ++g)
        for (uint32_t h = 0; h < s.height; ++h) {
            load_line(g, h, ops);
            for (uint32_t b = 0; b < s.batches; ++b) {
                FusedSource from;
                if (input) {
                    // Offline: the line as SDP_RDMA reads it, every lane of the group.
                    from = {input->read(g, h, counters), s.group, s.group};
                } else {
                    const uint32_t first = g * s.group;
                    from = {cube->sums.get() + cube->sum_index(b, first, h, 0),
                            cube->channel_stride, std::min(s.group, s.channels - first)};
                }
                line(from, ops, lines, saturated);
                writer.write_lines(b, g, h, lines);
            }
        }
    counters.saturations += saturated;
}

}  // namespace nvdla::emu::sdp

namespace nvdla::emu::sdp {

// The fp16 pipeline's stages for one element (the scalar reference: sdp_x.cpp, sdp_y.cpp).
uint32_t x_fp_element(const XStage& x, bool nan_to_zero, uint32_t in, int16_t alu_operand,
                      int16_t mul_operand);
uint32_t y_fp_element(const YStage& y, bool nan_to_zero, uint32_t in, const int16_t* alu_mem,
                      const int16_t* mul_mem, size_t i);
// Their vector forms (sdp_float_simd.cpp: AVX-512 or AVX2 by the ISA level), bit for bit the
// scalar ones, which run_x, run_y (without the LUT) and run_c (fp16 output, not EQL) take on
// the fp16 pipeline when float_simd_enabled(): simd_enabled() and MXCSR in its default mode.
bool float_simd_enabled();
void run_x_float_simd(const XStage& x, bool nan_to_zero, std::span<int32_t> line, OperandLine ops);
void run_y_float_simd(const YStage& y, bool nan_to_zero, std::span<int32_t> line, OperandLine ops);
void run_c_float_simd(std::span<const int32_t> line, std::span<uint16_t> out, Counters& counters);

}  // namespace nvdla::emu::sdp
