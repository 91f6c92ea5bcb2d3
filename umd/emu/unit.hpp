// What every unit of the model shares: the execution context and the data that fused units
// hand each other without going through memory.
#pragma once

#include <cstdint>
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

    nvdla_reg_map map() const { return cfg.reg_map; }
    // The registers describe an operation the model cannot execute (or the hardware would
    // hang on): count it and keep the sentence for the embedder.
    void error(std::string message) {
        ++stats.programming_errors;
        stats.last_error = std::move(message);
    }
};

// What CACC hands to SDP in flying mode, one value per output element: int32 for the
// int8/int16 pipelines, fp32 bit patterns for fp16.
struct AccumulatorCube {
    uint32_t batches = 1, channels = 0, height = 0, width = 0;
    Precision precision = Precision::Int8;  // precision of the convolution
    std::vector<int32_t> values;            // (n, c, h, w), w fastest

    size_t index(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
        return ((size_t(n) * channels + c) * height + h) * width + w;
    }
};

// What SDP hands to PDP when its output goes there instead of memory: int8/int16 values or
// fp16 bit patterns.
struct ElementCube {
    uint32_t batches = 1, channels = 0, height = 0, width = 0;
    Precision precision = Precision::Int8;
    std::vector<int16_t> values;  // (n, c, h, w), w fastest

    size_t index(uint32_t n, uint32_t c, uint32_t h, uint32_t w) const {
        return ((size_t(n) * channels + c) * height + h) * width + w;
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
