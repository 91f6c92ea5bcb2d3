// What every unit of the model shares: the execution context and the data that fused units
// hand each other without going through memory.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "emu/dma.hpp"
#include "emu/register_file.hpp"
#include "nvdla/emu/device.hpp"
#include "nvdla/types.hpp"

namespace nvdla::emu {

struct Context {
    const HwConfig& cfg;
    Dma& dma;
    DeviceStats& stats;
    unsigned threads = 1;  // for one operation (Device::set_threads)

    nvdla_reg_map map() const { return cfg.reg_map; }
    // The registers describe an operation the model cannot execute (or the hardware would
    // hang on): count it and keep the sentence for the embedder. The one way a unit reports
    // bad programming; false, so that a decoder stops with `return ctx.error(...)`.
    bool error(std::string message) {
        ++stats.programming_errors;
        stats.last_error = std::move(message);
        return false;
    }
};

// A message for Context::error, composed like a stream but constructed only when an error
// is found: the checks run on every operation, and a stream's locale set-up cost LeNet 7%.
class ErrorMessage {
  public:
    template <typename T>
    ErrorMessage& operator<<(const T& value) {
        if (!stream_) stream_.emplace();
        *stream_ << value;
        return *this;
    }
    std::string str() const { return stream_ ? stream_->str() : std::string(); }

  private:
    std::optional<std::ostringstream> stream_;
};

struct AccumulatorCube;

// A flying convolution's channels-last cube not computed yet: SDP takes it a block of rows at a
// time while the block is in the cache, as the hardware's CACC -> SDP pipeline does, or asks for
// the whole cube. Exactly one of finish() (after begin() and the blocks) or whole() is called.
class DeferredRows {
  public:
    virtual ~DeferredRows() = default;
    // Rows per block (at least 1), the same on any thread count: SDP's DMAs come block by
    // block, so the blocks decide their order.
    virtual uint32_t block_rows() const = 0;
    // Threads the layer may use (the result does not depend on it).
    virtual unsigned threads() const = 0;
    // Before the blocks, on the calling thread: prepares compute() and returns room for
    // `values` int32 values (kept from layer to layer, not initialised).
    virtual int32_t* begin(size_t values) = 0;
    // Rows [y0, y1) of every batch into `out` as `sums` would hold them (channel_stride values
    // per element, CACC's delivery applied), batch after batch; returns how many values CACC's
    // delivery saturated. Several threads may run it at once, each into its own `out`.
    virtual uint32_t compute(uint32_t y0, uint32_t y1, int32_t* out) const = 0;
    // After the last block: CACC's status, with the blocks' saturation counts summed.
    virtual void finish(uint32_t saturations) = 0;
    // The whole cube (sums or values), CACC's status set.
    virtual AccumulatorCube whole() = 0;
};

// What CACC hands to SDP in flying mode, one value per output element: int32 for the
// int8/int16 pipelines, fp32 bit patterns for fp16. It comes in one of two forms:
//   - planar: `values`, (n, c, h, w) with w fastest, as CACC delivers them;
//   - channels last (CMAC's kernels; `values` is then empty): `sums`, (n, h, w, c) with c
//     fastest over `channel_stride` entries per element, which CACC delivers as SDP reads
//     them: rounded half away from zero by 2^clip (cacc_deliver_one). With a clip, the sums
//     are below 2^30 in magnitude (oneDNN's are exact sums below 2^24; the model's own
//     kernels deliver already, clip 0), so that delivery cannot saturate.
struct AccumulatorCube {
    uint32_t batches = 1, channels = 0, height = 0, width = 0;
    Precision precision = Precision::Int8;  // precision of the convolution
    std::vector<int32_t> values;            // planar form

    std::shared_ptr<const int32_t[]> sums;  // channels-last form
    uint32_t channel_stride = 0;
    uint32_t clip = 0;
    // Instead of `sums`: the rows on demand (clip 0; `channel_stride` set).
    std::shared_ptr<DeferredRows> deferred;

    bool channels_last() const { return sums != nullptr || deferred != nullptr; }
    bool empty() const { return values.empty() && !sums && !deferred; }
    // Index into `values` (planar form).
    size_t index(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
        return ((size_t(n) * channels + c) * height + h) * width + w;
    }
    // Index into `sums` (channels-last form).
    size_t sum_index(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
        return ((size_t(n) * height + h) * width + w) * channel_stride + c;
    }
    // The value CACC delivers for element (n, c, h, w), whatever the form (not a deferred
    // cube: take its whole() first).
    int32_t at(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
        if (!channels_last()) return values[index(n, c, h, w)];
        const int64_t sum = sums[sum_index(n, c, h, w)];
        if (clip == 0) return static_cast<int32_t>(sum);
        const int64_t half = int64_t(1) << (clip - 1);
        return static_cast<int32_t>(sum < 0 ? -((-sum + half) >> clip) : (sum + half) >> clip);
    }
    // Every delivered value in planar order (tests).
    std::vector<int32_t> planar() const {
        if (!channels_last()) return values;
        std::vector<int32_t> out;
        out.reserve(size_t(batches) * channels * height * width);
        for (uint32_t n = 0; n < batches; ++n)
            for (uint32_t c = 0; c < channels; ++c)
                for (uint32_t h = 0; h < height; ++h)
                    for (uint32_t w = 0; w < width; ++w) out.push_back(at(n, c, h, w));
        return out;
    }
};

// What SDP hands to PDP when its output goes there instead of memory: int8/int16 values or
// fp16 bit patterns.
struct ElementCube {
    uint32_t batches = 1, channels = 0, height = 0, width = 0;
    // Channels held per element: SDP hands PDP whole atoms, so its cube also holds the lanes
    // past `channels` of the last atom, as SDP computed them (docs/emu/pdp.md); 0: `channels`.
    uint32_t stored_channels = 0;
    Precision precision = Precision::Int8;
    std::vector<int16_t> values;  // (n, c, h, w), w fastest, c < held()

    uint32_t held() const { return stored_channels ? stored_channels : channels; }
    size_t index(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
        return ((size_t(n) * held() + c) * height + h) * width + w;
    }
};

// GLB interrupt status bits (S_INTR_STATUS); add the register group (0 or 1).
enum InterruptEvent : uint32_t {
    kSdpDone = 0,
    kCdpDone = 2,
    kPdpDone = 4,
    kBdmaDone = 6,
    kRubikDone = 8,
    kCdmaDataDone = 16,
    kCdmaWeightDone = 18,
    kCaccDone = 20,
};

}  // namespace nvdla::emu
