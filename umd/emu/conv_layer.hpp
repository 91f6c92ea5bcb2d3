// What the units of the convolution pipeline hand each other inside one layer: the layer's
// registers decoded once (ConvLayer), the convolution buffer's content as CSC reads it
// (ConvData, ConvWeights), and the functions each unit's file implements. Private to
// umd/emu/{convolution,cdma,csc,cmac,cacc}.cpp.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "emu/unit.hpp"
#include "nvdla/types.hpp"

namespace nvdla::emu::conv {

enum class InputKind : uint8_t { Feature, Image, Winograd };

// The registers of the five units that decide the result, decoded and cross-checked.
struct ConvLayer {
    InputKind kind = InputKind::Feature;
    Precision in_precision = Precision::Int8;  // CDMA D_MISC_CFG.IN_PRECISION
    Precision precision = Precision::Int8;     // PROC_PRECISION of every unit
    bool data_reuse = false, weight_reuse = false;
    bool skip_data_release = false, skip_weight_release = false;
    uint32_t data_bank = 0, weight_bank = 0;

    // CDMA: what it fetches.
    uint32_t batches = 1;
    uint32_t in_width = 1, in_height = 1, in_channels = 1;  // D_DATAIN_SIZE_0/1
    MemoryPort data_port = MemoryPort::Primary;
    uint64_t data_address = 0, data_address_uv = 0;  // D_DAIN_ADDR_*_0 / _1
    uint64_t line_stride = 0, uv_line_stride = 0, surface_stride = 0, batch_stride = 0;
    bool line_packed = false, surface_packed = false;
    uint32_t fetch_grain = 1;  // D_FETCH_GRAIN + 1
    uint32_t pixel_format = 0, pixel_x_offset = 0;
    bool pixel_signed = false;
    bool convertor = false;  // D_CVT_CFG.CVT_EN
    int16_t cvt_offset = 0, cvt_scale = 1;
    uint32_t cvt_truncate = 0;
    bool mean = false;
    int16_t mean_values[4] = {};  // RY, GU, BV, AX
    bool nan_to_zero = false;
    uint32_t cdma_pad_left = 0, cdma_pad_right = 0, cdma_pad_top = 0, cdma_pad_bottom = 0;
    uint16_t cdma_pad_value = 0;
    uint32_t cdma_stride_x = 1, cdma_stride_y = 1;

    // CDMA: the weights.
    bool compressed = false;
    MemoryPort weight_port = MemoryPort::Primary;
    uint64_t weight_address = 0, wmb_address = 0, wgs_address = 0;
    uint64_t weight_bytes = 0, wmb_bytes = 0;
    uint64_t bytes_per_kernel = 0;  // D_WEIGHT_SIZE_0 + 1

    // CSC: how it walks the buffer.
    uint32_t csc_width = 1, csc_height = 1, csc_channels = 1;  // D_DATAIN_SIZE_EXT_0/1
    uint32_t kernel_width = 1, kernel_height = 1, kernel_channels = 1, kernels = 1;
    uint32_t out_width = 1, out_height = 1, out_channels = 1;
    uint32_t stride_x = 1, stride_y = 1, dilation_x = 1, dilation_y = 1;
    uint32_t pad_left = 0, pad_top = 0;
    uint16_t pad_value = 0;
    uint32_t post_extension = 1;  // 1, 2 or 4
    uint32_t pra_truncate = 0;

    // CACC.
    uint32_t clip_truncate = 0;

    // Lanes of one MAC atomic operation (MAC atomic C).
    uint32_t atomic_c = 64;

    // Threads the layer may use (Context::threads); the result does not depend on it.
    unsigned threads = 1;
};

// Decodes the consumer groups; false (with ctx.error) when the registers describe something
// the hardware cannot run or the units disagree.
bool decode_layer(Context& ctx, Group cdma, Group csc, Group cmac_a, Group cmac_b, Group cacc,
                  ConvLayer& layer);

// The convolution buffer's rules (conv_checks.cpp): entries per slice, banks, packing, weight
// bytes as CDMA and CSC need them; false with ctx.error naming the registers otherwise.
bool check_buffer(Context& ctx, Group cdma, Group csc, const ConvLayer& layer);

// The data CSC reads from the convolution buffer, one int16 per element (int16, fp16 bit
// patterns; int8 feature data one int8 per element in `bytes` instead), rows of `row_elements`
// elements:
//   Feature:  rows = batches * height (row n * height + h), element w * channels + c;
//   Image:    one row per line, the converted pixels with the CDMA's left/right padding,
//             channels = the pixel format's components;
//   Winograd: the channel-extended, padded cube E (rows = extended height, channels = extended
//             channels), as CDMA writes it for the 4x4 tiles.
// int8 feature data that no later layer can reuse (no SKIP_DATA_RLS) and that the convertor
// leaves as it is stays in CDMA's atoms where it read them (`in_atoms`, `bytes` empty): CSC's
// plane is built from them directly (csc.cpp), before SDP writes anything, so the copy into
// (n, h, w, c) is saved.
struct ConvData {
    InputKind kind = InputKind::Feature;
    Precision precision = Precision::Int8;
    uint32_t batches = 1, height = 0, width = 0, channels = 0;
    uint64_t row_elements = 0;
    std::vector<int16_t> values;  // empty for int8 feature data
    std::vector<int8_t> bytes;    // int8 feature data, (n, h, w, c), unless in_atoms
    bool in_atoms = false;
    uint32_t atom_bytes = 0, surfaces = 0;  // of the lines CDMA read (feature data)

    bool narrow() const { return in_atoms || !bytes.empty(); }
    const int16_t* row(uint32_t n, uint32_t h) const {
        return values.data() + (uint64_t(n) * height + h) * row_elements;
    }
    const int8_t* row8(uint32_t n, uint32_t h) const {  // not in_atoms
        return bytes.data() + (uint64_t(n) * height + h) * row_elements;
    }
    // Line h of surface s of batch n as CDMA read it: `width` atoms, channel s * atom_bytes + e
    // of column w at byte w * atom_bytes + e (int8; lanes past the channels as stored).
    const int8_t* atom_line(uint32_t n, uint32_t s, uint32_t h) const {
        return reinterpret_cast<const int8_t*>(lines[(uint64_t(n) * surfaces + s) * height + h]);
    }
    // Where CDMA finds each line it reads, [n][s][h] (in place in memory, or zeros in `staging`
    // for a read that faulted); kept to save the allocations.
    std::vector<const uint8_t*> lines;
    std::vector<uint8_t> staging;
};

// The kernels CSC hands to CMAC, one int16 per element, [k][r][s][c] with c fastest:
// Feature/Image: r < kernel_height, s < kernel_width, c < kernel_channels (image kernels are
// the pre-extended 1-wide ones); Winograd: the stored 4x4 transformed kernels, r, s < 4.
struct ConvWeights {
    Precision precision = Precision::Int8;
    uint32_t kernels = 0, height = 0, width = 0, channels = 0;
    std::vector<int16_t> values;
    // What they were decoded from: a layer fetching the same bytes for the same shape skips
    // decoding them again.
    std::vector<std::byte> source;
    uint64_t source_key = 0;
    // Memory::sealed_contents() of the bytes `source` was last taken from or compared with;
    // while the memory gives the same nonzero number, they are still `source`.
    uint64_t sealed_contents = 0;
    // A compressed layer's stream, mask and group sizes as fetched, one after the other: the
    // same ones decompress to `source` again.
    std::vector<std::byte> compressed_source;
    // Where those parts were: the stream's bytes, WMB's address and bytes, WGS's address and
    // bytes (the entry is found by the stream's address; sealed parts compare by place).
    struct Places {
        uint64_t stream_bytes = 0, wmb_address = 0, wmb_bytes = 0, wgs_address = 0, wgs_bytes = 0;
        bool operator==(const Places&) const = default;
    };
    Places compressed_places;
    // The kernels as a CMAC kernel packed them (cmac.cpp; each keeps the kernel and shape they
    // are for), and their size; dropped when `values` change, as `reordered` is.
    mutable std::any packed;
    mutable uint64_t packed_bytes = 0;
    // oneDNN's reordered copy (cmac_onednn.cpp), kept beside `packed`: the operations of one
    // convolution share its weights, and some may go to oneDNN and others to the model's kernels.
    mutable std::any reordered;
    mutable uint64_t reordered_bytes = 0;
    // The largest sum of |w| over one kernel (cmac_onednn.cpp), -1 until computed.
    mutable int64_t largest_l1 = -1;
    // Where they were fetched from, when last used, and the entry looked up after this one
    // the last time (WeightCache).
    MemoryPort port = MemoryPort::Primary;
    uint64_t address = 0;
    uint64_t last_use = 0;
    ConvWeights* next_lookup = nullptr;

    const int16_t* kernel(uint32_t k) const {
        return values.data() + uint64_t(k) * height * width * channels;
    }
};

// Counters CDMA keeps for fp16 (D_NAN_INPUT_*_NUM, D_INF_INPUT_*_NUM).
struct CdmaCounters {
    uint32_t data_nan = 0, data_inf = 0, weight_nan = 0, weight_inf = 0;
};

// The decoded (and packed) kernels of recent layers, one entry per weight address, so that a
// network run again decodes and packs none of them: a layer still reads its weights (in place)
// and compares them in full with what its entry was decoded from. The least recently used entries
// go beyond kMaxEntries or kMaxBytes.
class WeightCache {
  public:
    static constexpr size_t kMaxEntries = 4096;  // MobileNetV2 on nv_small: 969 steps
    static constexpr uint64_t kMaxBytes = uint64_t(512) << 20;

    ConvWeights& entry(MemoryPort port, uint64_t address);
    std::vector<std::byte> fetched;  // zeros for weights whose read faulted

  private:
    ConvWeights& find_or_add(MemoryPort port, uint64_t address);

    // A network looks its steps up in the same order on every run: the entry that followed the
    // previous one last time is tried first, before the hash lookup (whose buckets and nodes
    // miss the caches after the units' data went through them).
    ConvWeights* previous_ = nullptr;
    ConvWeights* expected_ = nullptr;
    // By (port, address): a network of ~1000 steps looks each one up on every run.
    struct Place {
        MemoryPort port;
        uint64_t address;
        bool operator==(const Place&) const = default;
    };
    struct PlaceHash {
        size_t operator()(const Place& p) const {
            return std::hash<uint64_t>()(p.address * 2 + uint64_t(p.port));
        }
    };
    std::unordered_map<Place, std::unique_ptr<ConvWeights>, PlaceHash> entries_;
    uint64_t clock_ = 0;
};

// cdma.cpp: fetch the data and the weights into the buffer's form (the weights: the cache's
// entry for them, nullptr on bad programming, reported through ctx).
bool load_data(Context& ctx, const ConvLayer& layer, ConvData& data, CdmaCounters& counters);
ConvWeights* load_weights(Context& ctx, const ConvLayer& layer, WeightCache& cache,
                          CdmaCounters& counters);

// Buffers kept from layer to layer so that a layer does not allocate (and zero) them again.
struct ConvScratch {
    std::vector<uint8_t> bytes;  // the CSC plane, biased int8
    std::vector<int16_t> words;  // the CSC plane, int16
    std::vector<int8_t> plane8;  // the CSC plane, int8 (oneDNN)
    std::vector<int64_t> sums;   // CACC's assembly buffer
    // The storage of channels-last cubes, handed to SDP with the cube (AccumulatorCube::sums)
    // and used again once no cube holds it.
    std::shared_ptr<int32_t[]> cube;
    size_t cube_capacity = 0;
    std::vector<int32_t> block;  // the blocks of a deferred cube's rows SDP takes
};

// Room for `count` values of a channels-last cube in scratch.cube (64-byte aligned; the values
// are not initialised).
int32_t* channels_last_storage(ConvScratch& scratch, size_t count);

// csc.cpp + cmac.cpp + cacc.cpp: the layer's output as CACC delivers it.
// Integer pipelines: int32 values as CACC delivers them into `out` (its shape already set):
// channels last from CMAC's kernels (clip 0: delivered), planar when CSC follows the
// hardware's order (Winograd, a 48-bit buffer that could saturate); returns how many
// saturated (D_OUT_SATURATION).
uint32_t convolve_int(const ConvLayer& layer, const ConvData& data, const ConvWeights& weights,
                      ConvScratch& scratch, AccumulatorCube& out);
// Whether convolve_int computes the layer channels last through CMAC's kernels (not Winograd,
// no 48-bit sum that could saturate), and the problem it hands them (the plane built in
// scratch).
bool channels_last_int(const ConvLayer& layer, const ConvData& data, const ConvWeights& weights);
struct MacProblem;
MacProblem mac_problem(const ConvLayer& layer, const ConvData& data, const ConvWeights& weights,
                       ConvScratch& scratch);
// fp16 pipeline: fp32 bit patterns as CACC sends them.
// Direct convolutions run the decoded vector cell over blocks of output positions (threads
// split the blocks); the scalar ISA level and Winograd run convolve_fp16_reference.
void convolve_fp16(const ConvLayer& layer, const ConvData& data, const ConvWeights& weights,
                   std::vector<int32_t>& out);
// The plain form, one MAC operation at a time in the hardware's order through the scalar cell
// (Winograd: its tiles through cmac_fp16_winograd): what the fast form is tested against.
void convolve_fp16_reference(const ConvLayer& layer, const ConvData& data,
                             const ConvWeights& weights, std::vector<int32_t>& out);

// ---- CMAC (cmac.cpp) ----------------------------------------------------------------------

// The fp16 result of one MAC cell operation as CMAC sends it to CACC: 6-bit exponent in bits
// 43:38 and a signed 38-bit mantissa in bits 37:0 (value = mantissa * 2^(exponent - 50)), or a
// NaN (exponent 0x3f). Lanes whose data or weight is +-0 are masked off.
// The fastest implementation the ISA level allows (cmac_fp16.cpp), the same bits as the scalar
// one (cmac.cpp, the reference the vector forms are tested against).
uint64_t cmac_fp16_dot(const uint16_t* data, const uint16_t* weights, unsigned lanes);
uint64_t cmac_fp16_dot_scalar(const uint16_t* data, const uint16_t* weights, unsigned lanes);
// The 64 aligned products of the vectorised cell and their exponent; false (nothing written)
// on the scalar level or when a lane holds a NaN.
bool cmac_fp16_products(const uint16_t* data, const uint16_t* weights, int32_t products[64],
                        uint32_t& exponent);
// The Winograd form: 16 positions x 4 channels (position-major, channel fastest), the four
// outputs of A^T (V . U) A sharing one exponent.
void cmac_fp16_winograd(const uint16_t* data, const uint16_t* weights, uint64_t out[4]);
// fp16 MAC operations decoded once for the vector cell (cmac_fp16.cpp), `width` lanes each (a
// power of two up to 64: at least the operations' lanes, the rest zeros): a layer's kernels once
// per layer, its data once per output position, then used for every pair.
struct Fp16Operands {
    unsigned width = 64;
    // [operation][lane]: the aligned mantissa (cal_fp16_exp's shift by the exponent's low bits)
    // with the sign in bit 31; 4 x the exponent's bits 14:12 (a truncation step), -256 for +-0
    // (which so never sets the common exponent and is truncated away); the lanes as given (NaN
    // operations take the scalar cell); whether an operation holds a NaN; whether it holds a
    // negative lane (a product's sign is then not the other operand's alone); whether all its
    // lanes are +-0.
    std::vector<uint32_t> mantissa;
    std::vector<int32_t> exponent;
    std::vector<uint16_t> raw;
    std::vector<uint8_t> nan;
    std::vector<uint8_t> negative;
    std::vector<uint8_t> all_zero;

    void resize(size_t operations, unsigned lanes);
    // Operations from `op` to the end as a new resize() leaves them (all 0), for a buffer that
    // is reused.
    void zero_from(size_t op);
    // Operation `op` from `count` lanes (the others 0; none: an operation of zeros, which
    // leaves CACC's sum as it is).
    void set(size_t op, const int16_t* lanes, unsigned count);
    // The memory its buffers hold.
    uint64_t bytes() const;
};
// Whether cmac_fp16_accumulate runs on this ISA level (not on the scalar one).
bool cmac_fp16_vector_cell();
// CACC's accumulation of `positions` outputs (any number) over `operations` operations each:
// output p from data operations data_op + p * data_stride + i against weight operations
// weight_op + i, into out[p]; the same bits as cacc_fp48_add from 0 over cmac_fp16_dot's
// results. Operations narrower than 16 lanes are held up to a multiple of 16 / width, those
// past `operations` zeros (computed with the others in a vector, not added).
void cmac_fp16_accumulate(const Fp16Operands& data, size_t data_op, size_t data_stride,
                          unsigned positions, const Fp16Operands& weights, size_t weight_op,
                          uint32_t operations, uint64_t* out);
// cacc_fp48_add on 8 accumulators by the vector form cmac_fp16_accumulate uses on this ISA
// level. Exposed for tests.
void cacc_fp48_add_lanes(const uint64_t acc[8], const uint64_t mac[8], uint64_t out[8]);
// CACC's sums from 0 of n CMAC results on 8 accumulators (lane i: cacc_fp48_add over
// macs[t * 8 + i], t < n <= 64) by the vector form the fp16 kernels use on this ISA level, which
// adds the results as one where that rounds nowhere. Exposed for tests.
void cacc_fp48_sum_lanes(const uint64_t* macs, unsigned n, uint64_t out[8]);
// The same sums of n CMAC results given as 32-bit products (the mantissa) and exponents
// 0 .. 62 (result t of lane i: products[t * 8 + i] at exponents[t * 8 + i]), as the fp16 band
// kernel adds them on this ISA level. Exposed for tests.
void cacc_fp48_sum_products_lanes(const int32_t* products, const int32_t* exponents, unsigned n,
                                  uint64_t out[8]);
// cacc_fp48_to_fp32 on n accumulators by the vector form of this ISA level.
void cacc_fp48_to_fp32_lanes(const uint64_t* accumulators, unsigned n, uint32_t* out);
// One product of the fp16 multiplier array (cal_fp16_booth): mantissas already shifted by
// their exponents' low bits, truncated by `shift` (a multiple of 4) as the Booth partial
// products are. Exposed for tests.
int32_t cmac_fp16_booth(bool negative, uint32_t weight_mantissa, uint32_t data_mantissa,
                        uint32_t shift);

// Integer dot products (exact).
int64_t dot_int(const int16_t* a, const int16_t* b, uint32_t n);

// An integer convolution as CSC lays it out for CMAC's kernels: output (n, y, x) of kernel k is
//   sum over r < taps_r, s < taps_s, c < depth of
//     plane[n][y * row_step + r * row_dilation][x * x_step + s * s_step + c] * weights[k][r][s][c]
// over a plane of plane_rows rows of row_elements elements per batch, already padded, followed
// by kMacReadSlack elements the kernels may read (and multiply by zero). The plane is int16
// (`words`) or, when mac_wants_biased_bytes, int8 elements stored as element + 128 (`bytes`).
inline constexpr uint64_t kMacReadSlack = 256;
struct MacProblem {
    uint32_t batches = 1, out_height = 1, out_width = 1, kernels = 1;
    const uint8_t* bytes = nullptr;
    const int16_t* words = nullptr;
    uint32_t plane_rows = 0;
    uint64_t row_elements = 0;
    uint32_t row_step = 1, row_dilation = 1;
    uint64_t x_step = 0, s_step = 0;
    uint32_t taps_r = 1, taps_s = 1, depth = 1;
    const int16_t* weights = nullptr;    // [k][r][s][depth]
    const ConvWeights* cache = nullptr;  // where the weights' packed forms are kept (or nullptr)
    unsigned threads = 1;                // for output rows
};
bool mac_wants_biased_bytes(Precision precision);
// The convolution delivered through CACC (cacc_deliver_int with `clip`) into out, channels last
// (n, y, x, k) with k fastest, on the problem's threads. Returns the saturation count.
uint32_t mac_convolve_int(const MacProblem& problem, Precision precision, uint32_t clip,
                          int32_t* out);
// The grouped kernel's packed weights and one of its block functions (cmac_grouped.cpp).
struct GroupedWeights;
using GroupedBlockFn = uint32_t (*)(const MacProblem&, const GroupedWeights&, const void*, uint32_t,
                                    uint32_t, uint32_t, uint32_t, int32_t*);
// The grouped kernel as grouped_mac_rows (cmac_grouped.hpp) picks it for a problem: its packing
// (kept alive) and block functions, held by value so that a layer allocates nothing for it.
struct GroupedRows {
    std::shared_ptr<const GroupedWeights> packed;  // null: no grouped form
    const GroupedBlockFn* blocks = nullptr;        // one position and a block of positions
    const GroupedBlockFn* pieces = nullptr;        // int8_rows4's by positions, or nullptr
    uint32_t lanes = 0;
    bool overlap_tail = false;
    uint32_t clip = 0;
    explicit operator bool() const { return packed != nullptr; }
    // MacRows::rows() of the problem it was picked for.
    uint32_t operator()(const MacProblem& m, uint32_t n, uint32_t y0, uint32_t y1,
                        int32_t* out) const;
};

// The same a few rows at a time (what mac_convolve_int's threads run): the kernel picked and
// its weights packed once, on the constructing thread; rows() may run on several at once.
class MacRows {
  public:
    MacRows(const MacProblem& problem, Precision precision, uint32_t clip);
    MacRows(const MacRows&) = delete;
    MacRows& operator=(const MacRows&) = delete;
    // Rows [y0, y1) of batch n, channels last, row y at out + (y - y0) * out_width * kernels;
    // returns the saturation count.
    uint32_t rows(uint32_t n, uint32_t y0, uint32_t y1, int32_t* out) const {
        return grouped_ ? grouped_(problem_, n, y0, y1, out) : rows_(n, y0, y1, out);
    }

  private:
    MacProblem problem_;
    uint32_t clip_;
    GroupedRows grouped_;                  // when the grouped kernel runs the problem
    std::shared_ptr<const void> packing_;  // the other kernels' packed weights, when their own
    // The other kernels: a lambda of `this` and the packing's address, which std::function
    // keeps in place (16 bytes) instead of copying its captures to the heap.
    std::function<uint32_t(uint32_t, uint32_t, uint32_t, int32_t*)> rows_;
};

// Which implementation mac_convolve_int uses (tests force each one; Auto picks the fastest the
// CPU runs, within NVDLA_EMU_ISA's level).
// Avx512Vnni runs int8 only; Avx2 runs int8 through vpmaddwd (double FMA for kernels of 2^17
// products or more) and int16 through double FMA, Avx512 both through double FMA.
// OneDnn sends every int8 feature layer oneDNN computes exactly to OnednnConvolution, whatever
// its size (Auto: the large ones), and picks the others' kernel as Auto does.
enum class MacKernel : uint8_t { Auto, Scalar, Avx2, Avx512, Avx512Vnni, OneDnn };
void force_mac_kernel(MacKernel kernel);
MacKernel forced_mac_kernel();
MacKernel active_mac_kernel(Precision precision);

// ---- CMAC through oneDNN (cmac_onednn.cpp) -------------------------------------------------

// The int8 feature-plane CSC walks (pad value outside the input on its channels) as oneDNN
// takes it: (n, row, column, channel), the layer's channels per column, rows x cols per batch.
void build_feature_plane8(const ConvLayer& l, const ConvData& d, std::vector<int8_t>& plane,
                          uint32_t& rows, uint32_t& cols);

// Whether this build has oneDNN and it runs its AVX-512 VNNI or AMX int8 kernels, whose
// products are exact (without VNNI oneDNN halves the weights or saturates pairs); used only at
// the model's avx512 level.
bool onednn_available();
// How many layers oneDNN has computed in this process (tests).
uint64_t onednn_layers();

// CMAC's int8 products of a feature layer through oneDNN (s8 x s8 -> s32), when they are
// provably exact: every partial and final sum, biased by 128 or not, stays within 2^24 in
// magnitude, which int32 holds and oneDNN's fp32 output conversion keeps exactly. Primitives
// are kept per shape and the weights, reordered once, while the kernels stay the same.
class OnednnConvolution {
  public:
    OnednnConvolution();
    ~OnednnConvolution();
    OnednnConvolution(OnednnConvolution&&) noexcept;
    OnednnConvolution& operator=(OnednnConvolution&&) noexcept;

    // The layer's sums into `out` (channels-last form, CACC's clip to apply); false when oneDNN
    // does not take the layer (nothing computed: the caller's kernels do).
    bool run(const ConvLayer& l, const ConvData& d, const ConvWeights& w, ConvScratch& scratch,
             AccumulatorCube& out);

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// ---- CACC (cacc.cpp) ----------------------------------------------------------------------

inline constexpr int64_t kAccumulatorMax = (int64_t(1) << 47) - 1;
inline constexpr int64_t kAccumulatorMin = -(int64_t(1) << 47);

// One partial sum into the 48-bit integer assembly buffer (saturating).
constexpr int64_t cacc_accumulate_int(int64_t acc, int64_t partial) {
    const int64_t sum = acc + partial;
    return sum > kAccumulatorMax ? kAccumulatorMax
                                 : (sum < kAccumulatorMin ? kAccumulatorMin : sum);
}
// Delivery to SDP: round half away by 2^clip (the C model divides in double, exact for 48-bit
// sums), saturate to int32 and count the clamped values.
inline int32_t cacc_deliver_one(int64_t sum, uint32_t clip, uint32_t& saturations) {
    const int64_t half = clip ? int64_t(1) << (clip - 1) : 0;
    const int64_t sign = sum >> 63;
    const int64_t magnitude = (sum ^ sign) - sign;
    const int64_t rounded = (((magnitude + half) >> clip) ^ sign) - sign;
    const int64_t clamped =
        rounded > INT32_MAX ? INT32_MAX : (rounded < INT32_MIN ? INT32_MIN : rounded);
    saturations += clamped != rounded;
    return static_cast<int32_t>(clamped);
}
uint32_t cacc_deliver_int(const int64_t* sums, size_t count, uint32_t clip, int32_t* out);
// The fp16 assembly: one CMAC result (cmac_fp16_dot's pattern) into the 48-bit float
// accumulator (8-bit exponent, 40-bit signed mantissa); start from 0.
uint64_t cacc_fp48_add(uint64_t accumulator, uint64_t mac);
// Delivery of the fp48 accumulator to SDP as an fp32 bit pattern.
uint32_t cacc_fp48_to_fp32(uint64_t accumulator);

}  // namespace nvdla::emu::conv
