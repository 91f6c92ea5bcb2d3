// The convolution tests' rig: a layer described plainly (ConvSpec), written into the five
// units' registers by name like software programs them, and run either through
// Convolution::execute (to see exactly what CACC hands SDP) or through the whole Device. Inputs
// are packed and references computed by the test's own straightforward code.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "emu/convolution.hpp"
#include "emu/dma.hpp"
#include "emu/register_file.hpp"
#include "emu/unit.hpp"
#include "nvdla/emu/device.hpp"
#include "nvdla/hw/register_map.hpp"
#include "test_support.hpp"

namespace nvdla::emu::conv_test {

// A direct convolution of feature data: input W x H x C (x batches), K kernels R x S.
struct ConvSpec {
    Precision precision = Precision::Int8;
    uint32_t batches = 1, width = 8, height = 8, channels = 8;
    uint32_t kernels = 8, kernel_h = 3, kernel_w = 3;
    uint32_t stride_x = 1, stride_y = 1, dilation_x = 1, dilation_y = 1;
    uint32_t pad_left = 0, pad_right = 0, pad_top = 0, pad_bottom = 0;
    uint16_t pad_value = 0;
    uint32_t clip = 0;
    uint32_t misc_extra = 0;  // more D_MISC_CFG bits for CDMA and CSC (reuse, skip release)
    // Output size; 0 = what the input, padding, kernel and stride give.
    uint32_t out_w = 0, out_h = 0;

    uint32_t output_width() const {
        if (out_w) return out_w;
        const uint32_t span = (kernel_w - 1) * dilation_x + 1;
        return (pad_left + width + pad_right - span) / stride_x + 1;
    }
    uint32_t output_height() const {
        if (out_h) return out_h;
        const uint32_t span = (kernel_h - 1) * dilation_y + 1;
        return (pad_top + height + pad_bottom - span) / stride_y + 1;
    }
};

constexpr uint64_t kDataBase = 0x80000000, kWeightBase = 0x90000000, kOutBase = 0xa0000000;
constexpr uint64_t kWmbBase = 0x94000000, kWgsBase = 0x98000000;

inline void put16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v);
    p[1] = static_cast<uint8_t>(v >> 8);
}

// Element (n, c, h, w) of a feature cube in memory, packed lines and surfaces.
struct CubeLayout {
    uint32_t atom = 32, element_bytes = 1, width = 1, height = 1, channels = 1;
    uint64_t line() const { return uint64_t(width) * atom; }
    uint64_t surface() const { return line() * height; }
    uint32_t surfaces() const {
        const uint32_t lanes = atom / element_bytes;
        return (channels + lanes - 1) / lanes;
    }
    uint64_t batch() const { return surface() * surfaces(); }
    uint64_t offset(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
        const uint32_t lanes = atom / element_bytes;
        return n * batch() + (c / lanes) * surface() + h * line() + uint64_t(w) * atom +
               (c % lanes) * element_bytes;
    }
};

// Direct-convolution weight surface written by hand from docs/formats/weights.md section 1
// (groups of G kernels; 1x1xA cubes scanned C' -> K -> S -> R -> C): kernel values w[k][c][r][s].
inline std::vector<uint8_t> dc_weight_surface(
    const HwConfig& cfg, Precision p, uint32_t K, uint32_t C, uint32_t R, uint32_t S,
    const std::function<int32_t(uint32_t, uint32_t, uint32_t, uint32_t)>& w) {
    const uint32_t bpe = bytes_per_element(p);
    const uint32_t G = p == Precision::Int8 ? cfg.mac_atomic_k : cfg.mac_atomic_k / 2;
    const uint32_t A = cfg.mac_atomic_c;
    const uint64_t bytes = uint64_t(K) * C * R * S * bpe;
    std::vector<uint8_t> out((bytes + 127) / 128 * 128, 0);
    for (uint32_t k = 0; k < K; ++k)
        for (uint32_t c = 0; c < C; ++c)
            for (uint32_t r = 0; r < R; ++r)
                for (uint32_t s = 0; s < S; ++s) {
                    const uint32_t g = k / G, kk = k % G, kg = std::min(G, K - g * G);
                    const uint32_t cb = c / A, cc = c % A, cw = std::min(A, C - cb * A);
                    const uint64_t index = uint64_t(g) * G * R * S * C +
                                           uint64_t(cb) * A * R * S * kg +
                                           ((uint64_t(r) * S + s) * kg + kk) * cw + cc;
                    const int32_t v = w(k, c, r, s);
                    if (bpe == 1)
                        out[index] = static_cast<uint8_t>(v);
                    else
                        put16(&out[index * 2], static_cast<uint16_t>(v));
                }
    return out;
}

// Registers by name into a register file, the way software writes them; execute() runs
// Convolution on the groups written.
class Rig {
  public:
    explicit Rig(const char* config)
        : cfg_(test::config(config)),
          map_(hw::RegisterMap::get(cfg_.reg_map)),
          regs_(cfg_.reg_map),
          dma_(memory_, stats_),
          ctx_{cfg_, dma_, stats_} {}

    const HwConfig& cfg() const { return cfg_; }
    DeviceStats& stats() { return stats_; }
    // What the memory answers to Memory::sealed_contents() (0: not sealed).
    void set_sealed_contents(uint64_t number) { memory_.sealed = number; }
    void set_threads(unsigned threads) { ctx_.threads = threads; }
    Convolution& conv() { return conv_; }

    void set(const char* unit, const char* reg, uint32_t value) {
        const hw::RegisterInfo* r = map_.find(unit, reg);
        ASSERT_NE(r, nullptr) << unit << "." << reg;
        regs_.csb_write(r->unit, r->offset, value);
    }
    uint32_t group_value(nvdla_unit unit, uint32_t offset) { return regs_.group(unit, 0)[offset]; }
    // Memory at address, zero-filled the first time; asking again for no more bytes returns
    // the same region.
    uint8_t* region(uint64_t address, uint64_t size, MemoryPort port = MemoryPort::Primary) {
        for (const auto& r : regions_)
            if (r.address == address && r.port == port && size <= r.size) return r.bytes;
        auto* bytes = reinterpret_cast<uint8_t*>(memory_.add_region(port, address, size));
        regions_.push_back({address, size, port, bytes});
        return bytes;
    }

    // The whole cube (a deferred one computed now, as SDP does when it takes no blocks).
    AccumulatorCube execute() {
        AccumulatorCube out = execute_deferred();
        return out.deferred ? out.deferred->whole() : out;
    }
    // What Convolution::execute returns: a deferred cube for SDP to take rows from.
    AccumulatorCube execute_deferred() {
        return conv_.execute(ctx_, regs_.group(NVDLA_UNIT_CDMA, 0), regs_.group(NVDLA_UNIT_CSC, 0),
                             regs_.group(NVDLA_UNIT_CMAC_A, 0), regs_.group(NVDLA_UNIT_CMAC_B, 0),
                             regs_.group(NVDLA_UNIT_CACC, 0));
    }

    // Every register of a direct convolution of feature data in packed memory at kDataBase,
    // weights (weight_bytes of them) at kWeightBase.
    void program(const ConvSpec& s, uint64_t weight_bytes) {
        const uint32_t bpe = bytes_per_element(s.precision);
        const CubeLayout in{cfg_.atom_bytes, bpe, s.width, s.height, s.channels};
        const uint32_t p = static_cast<uint32_t>(s.precision);
        const uint32_t misc = p << 8 | p << 12 | s.misc_extra;
        const uint32_t size = (s.height - 1) << 16 | (s.width - 1);
        const uint32_t out_size = (s.output_height() - 1) << 16 | (s.output_width() - 1);
        set("CDMA", "D_MISC_CFG", misc);
        set("CDMA", "D_DATAIN_FORMAT", 0);
        set("CDMA", "D_DATAIN_SIZE_0", size);
        set("CDMA", "D_DATAIN_SIZE_1", s.channels - 1);
        set("CDMA", "D_DATAIN_SIZE_EXT_0", size);
        set("CDMA", "D_DAIN_RAM_TYPE", 1);
        set("CDMA", "D_DAIN_ADDR_HIGH_0", static_cast<uint32_t>(kDataBase >> 32));
        set("CDMA", "D_DAIN_ADDR_LOW_0", static_cast<uint32_t>(kDataBase));
        set("CDMA", "D_LINE_STRIDE", static_cast<uint32_t>(in.line()));
        set("CDMA", "D_SURF_STRIDE", static_cast<uint32_t>(in.surface()));
        set("CDMA", "D_BATCH_STRIDE", static_cast<uint32_t>(in.batch()));
        set("CDMA", "D_DAIN_MAP", 0x10001);
        set("CDMA", "D_BATCH_NUMBER", s.batches - 1);
        set("CDMA", "D_WEIGHT_FORMAT", 0);
        set("CDMA", "D_WEIGHT_SIZE_0", s.kernel_h * s.kernel_w * s.channels * bpe - 1);
        set("CDMA", "D_WEIGHT_SIZE_1", s.kernels - 1);
        set("CDMA", "D_WEIGHT_RAM_TYPE", 1);
        set("CDMA", "D_WEIGHT_ADDR_HIGH", static_cast<uint32_t>(kWeightBase >> 32));
        set("CDMA", "D_WEIGHT_ADDR_LOW", static_cast<uint32_t>(kWeightBase));
        set("CDMA", "D_WEIGHT_BYTES", static_cast<uint32_t>(weight_bytes));
        set("CDMA", "D_CVT_CFG", 0);
        set("CDMA", "D_CONV_STRIDE", (s.stride_y - 1) << 16 | (s.stride_x - 1));
        set("CDMA", "D_ZERO_PADDING",
            s.pad_bottom << 24 | s.pad_top << 16 | s.pad_right << 8 | s.pad_left);
        set("CDMA", "D_ZERO_PADDING_VALUE", s.pad_value);
        set("CSC", "D_MISC_CFG", misc);
        set("CSC", "D_DATAIN_FORMAT", 0);
        set("CSC", "D_DATAIN_SIZE_EXT_0", size);
        set("CSC", "D_DATAIN_SIZE_EXT_1", s.channels - 1);
        set("CSC", "D_BATCH_NUMBER", s.batches - 1);
        set("CSC", "D_WEIGHT_FORMAT", 0);
        set("CSC", "D_WEIGHT_SIZE_EXT_0", (s.kernel_h - 1) << 16 | (s.kernel_w - 1));
        set("CSC", "D_WEIGHT_SIZE_EXT_1", (s.kernels - 1) << 16 | (s.channels - 1));
        set("CSC", "D_WEIGHT_BYTES", static_cast<uint32_t>(weight_bytes));
        set("CSC", "D_DATAOUT_SIZE_0", out_size);
        set("CSC", "D_DATAOUT_SIZE_1", s.kernels - 1);
        set("CSC", "D_CONV_STRIDE_EXT", (s.stride_y - 1) << 16 | (s.stride_x - 1));
        set("CSC", "D_DILATION_EXT", (s.dilation_y - 1) << 16 | (s.dilation_x - 1));
        set("CSC", "D_ZERO_PADDING", s.pad_top << 16 | s.pad_left);
        set("CSC", "D_ZERO_PADDING_VALUE", s.pad_value);
        set("CMAC_A", "D_MISC_CFG", p << 12);
        set("CMAC_B", "D_MISC_CFG", p << 12);
        set("CACC", "D_MISC_CFG", p << 12);
        set("CACC", "D_DATAOUT_SIZE_0", out_size);
        set("CACC", "D_DATAOUT_SIZE_1", s.kernels - 1);
        set("CACC", "D_BATCH_NUMBER", s.batches - 1);
        set("CACC", "D_CLIP_CFG", s.clip);
        buffer(cbuf_entries_per_slice(cfg_, s.channels, bpe, s.width),
               uint64_t(s.height) * s.batches);
    }

    // CDMA/CSC D_ENTRY_PER_SLICE and D_BANK: `lines` input lines of `entries` buffer entries
    // in as few data banks as hold them, the other banks for weights.
    void buffer(uint32_t entries, uint64_t lines) {
        const uint32_t per_bank = cbuf_geometry(cfg_).entries_per_bank;
        const auto data_banks = static_cast<uint32_t>(
            std::max<uint64_t>(1, (lines * entries + per_bank - 1) / per_bank));
        const uint32_t weight_banks =
            data_banks < cfg_.cbuf_banks ? cfg_.cbuf_banks - data_banks : 1;
        for (const char* unit : {"CDMA", "CSC"}) {
            set(unit, "D_ENTRY_PER_SLICE", entries - 1);
            set(unit, "D_BANK", (weight_banks - 1) << 16 | (data_banks - 1));
        }
    }

  private:
    struct Region {
        uint64_t address, size;
        MemoryPort port;
        uint8_t* bytes;
    };
    struct SealableMemory : FlatMemory {
        uint64_t sealed = 0;
        uint64_t sealed_contents(MemoryPort, uint64_t, uint64_t) override { return sealed; }
    };
    const HwConfig& cfg_;
    const hw::RegisterMap& map_;
    SealableMemory memory_;
    std::vector<Region> regions_;
    DeviceStats stats_;
    RegisterFile regs_;
    Dma dma_;
    Context ctx_;
    Convolution conv_;
};

// A feature-data direct convolution set up in a Rig: random (or given) input and weights in
// memory, and the textbook result of the integer pipeline.
struct IntCase {
    ConvSpec spec;
    std::vector<int32_t> input;    // [n][h][w][c]
    std::vector<int32_t> weights;  // [k][c][r][s]

    int32_t in(uint32_t n, uint32_t h, uint32_t w, uint32_t c) const {
        return input[((uint64_t(n) * spec.height + h) * spec.width + w) * spec.channels + c];
    }
    int32_t wt(uint32_t k, uint32_t c, uint32_t r, uint32_t s) const {
        return weights[((uint64_t(k) * spec.channels + c) * spec.kernel_h + r) * spec.kernel_w + s];
    }
    int32_t pad() const {
        return spec.precision == Precision::Int8 ? static_cast<int8_t>(spec.pad_value & 0xff)
                                                 : static_cast<int16_t>(spec.pad_value);
    }

    void fill_random(std::mt19937_64& rng) {
        const int32_t lo = spec.precision == Precision::Int8 ? -128 : -32768;
        const int32_t hi = spec.precision == Precision::Int8 ? 127 : 32767;
        input = test::random_vector<int32_t>(
            rng, size_t(spec.batches) * spec.height * spec.width * spec.channels, lo, hi);
        weights = test::random_vector<int32_t>(
            rng, size_t(spec.kernels) * spec.channels * spec.kernel_h * spec.kernel_w, lo, hi);
    }

    // Writes the input cube at data in layout.
    void write_input(uint8_t* data, const CubeLayout& layout) const {
        const uint32_t bpe = bytes_per_element(spec.precision);
        for (uint32_t n = 0; n < spec.batches; ++n)
            for (uint32_t h = 0; h < spec.height; ++h)
                for (uint32_t w = 0; w < spec.width; ++w)
                    for (uint32_t c = 0; c < spec.channels; ++c) {
                        uint8_t* p = data + layout.offset(n, c, h, w);
                        if (bpe == 1)
                            *p = static_cast<uint8_t>(in(n, h, w, c));
                        else
                            put16(p, static_cast<uint16_t>(in(n, h, w, c)));
                    }
    }

    // Writes input and weights to memory and programs the registers.
    void load(Rig& rig) const {
        const uint32_t bpe = bytes_per_element(spec.precision);
        const CubeLayout layout{rig.cfg().atom_bytes, bpe, spec.width, spec.height, spec.channels};
        write_input(rig.region(kDataBase, layout.batch() * spec.batches), layout);
        const auto surface = dc_weight_surface(
            rig.cfg(), spec.precision, spec.kernels, spec.channels, spec.kernel_h, spec.kernel_w,
            [&](uint32_t k, uint32_t c, uint32_t r, uint32_t s) { return wt(k, c, r, s); });
        std::memcpy(rig.region(kWeightBase, surface.size()), surface.data(), surface.size());
        rig.program(spec, surface.size());
    }

    // The exact sum of output (n, k, y, x), pad value outside the input.
    int64_t sum(uint32_t n, uint32_t k, uint32_t y, uint32_t x) const {
        int64_t total = 0;
        for (uint32_t r = 0; r < spec.kernel_h; ++r)
            for (uint32_t s = 0; s < spec.kernel_w; ++s) {
                const int64_t iy = int64_t(y) * spec.stride_y + r * spec.dilation_y - spec.pad_top;
                const int64_t ix = int64_t(x) * spec.stride_x + s * spec.dilation_x - spec.pad_left;
                const bool inside = iy >= 0 && ix >= 0 && iy < spec.height && ix < spec.width;
                for (uint32_t c = 0; c < spec.channels; ++c) {
                    const int64_t v = inside ? in(n, uint32_t(iy), uint32_t(ix), c) : pad();
                    total += v * wt(k, c, r, s);
                }
            }
        return total;
    }
};

// x / 2^shift rounded half away from zero, written out plainly.
inline int64_t round_shift(int64_t x, unsigned shift) {
    if (shift == 0) return x;
    const int64_t half = int64_t(1) << (shift - 1);
    const int64_t magnitude = x < 0 ? -x : x;
    const int64_t q = (magnitude + half) >> shift;
    return x < 0 ? -q : q;
}

inline int32_t to_int32_saturated(int64_t x, uint32_t* saturations = nullptr) {
    if (x > INT32_MAX || x < INT32_MIN) {
        if (saturations) ++*saturations;
        return x > 0 ? INT32_MAX : INT32_MIN;
    }
    return static_cast<int32_t>(x);
}

// What CACC should deliver for the case, (n, k, y, x).
inline std::vector<int32_t> expected_values(const IntCase& c) {
    std::vector<int32_t> v;
    for (uint32_t n = 0; n < c.spec.batches; ++n)
        for (uint32_t k = 0; k < c.spec.kernels; ++k)
            for (uint32_t y = 0; y < c.spec.output_height(); ++y)
                for (uint32_t x = 0; x < c.spec.output_width(); ++x)
                    v.push_back(to_int32_saturated(round_shift(c.sum(n, k, y, x), c.spec.clip)));
    return v;
}

// Runs the case and compares every delivered value with the reference; returns mismatches.
inline uint64_t check_int_case(Rig& rig, const IntCase& c, uint32_t* saturations_out = nullptr) {
    c.load(rig);
    const AccumulatorCube out = rig.execute();
    EXPECT_EQ(rig.stats().programming_errors, 0u) << rig.stats().last_error;
    EXPECT_EQ(out.channels, c.spec.kernels);
    EXPECT_EQ(out.width, c.spec.output_width());
    EXPECT_EQ(out.height, c.spec.output_height());
    EXPECT_EQ(out.batches, c.spec.batches);
    uint64_t mismatches = 0;
    uint32_t saturations = 0;
    if (out.empty() || (!out.channels_last() &&
                        out.values.size() != size_t(c.spec.batches) * c.spec.kernels *
                                                 c.spec.output_width() * c.spec.output_height()))
        return ~uint64_t(0);
    for (uint32_t n = 0; n < out.batches; ++n)
        for (uint32_t k = 0; k < out.channels; ++k)
            for (uint32_t y = 0; y < out.height; ++y)
                for (uint32_t x = 0; x < out.width; ++x) {
                    const int32_t want = to_int32_saturated(
                        round_shift(c.sum(n, k, y, x), c.spec.clip), &saturations);
                    const int32_t got = out.at(n, k, y, x);
                    if (got != want && mismatches++ < 5)
                        ADD_FAILURE() << "output (n " << n << ", k " << k << ", y " << y << ", x "
                                      << x << "): got " << got << ", want " << want;
                }
    if (saturations_out) *saturations_out = saturations;
    return mismatches;
}

}  // namespace nvdla::emu::conv_test
