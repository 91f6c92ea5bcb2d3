// Lowering (private): the pieces shared by the lowering files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "builder/graph.hpp"
#include "builder/plan.hpp"
#include "nvdla/hw_config.hpp"
#include "nvdla/precision/lut.hpp"

namespace nvdla::builder::detail {

// What the whole build shares.
struct Target {
    const HwConfig* cfg = nullptr;
    Precision precision = Precision::Fp16;
    bool int8() const { return precision == Precision::Int8; }
    uint32_t bpe() const { return bytes_per_element(precision); }
    // Channels in one feature atom (one surface).
    uint32_t lanes() const { return cfg->atom_bytes / bpe(); }
    const BuildOptions* options = nullptr;
};

// A fixed-point factor: value ~ m * 2^-shift.
struct Fixed {
    int32_t m = 0;
    int shift = 0;
};
// The common shift for values (|m| <= limit, 0 <= shift <= max_shift) and each value's m.
std::vector<int32_t> fixed_common(const std::vector<double>& values, int32_t limit, int max_shift,
                                  int& shift);
Fixed fixed_one(double value, int32_t limit, int max_shift);

// A LUT program as the descriptors carry it.
nvdla_dla_lut_param to_lut_param(const precision::LutProgram& p, bool fp16);

// An element of an SDP chain (layers fused behind a convolution or an SDP source).
struct ChainElem {
    Op op = Op::Relu;
    uint32_t node = 0;                          // the layer
    const std::vector<float>* scale = nullptr;  // Affine scale, PRelu slopes
    const std::vector<float>* shift = nullptr;  // Affine shift
    EltwiseOp eltwise = EltwiseOp::Sum;
    Place operand;                     // Eltwise: the other input
    double operand_scale = 1;          // its int8 scale
    double out_scale = 1;              // int8 scale of this element's output
    float clip_min = 0, clip_max = 0;  // Clip
    bool per_channel = false;          // Eltwise: the operand is {1, C, 1, 1} (per kernel)
};

// Where an SDP's data comes from.
struct SdpSource {
    bool flying = false;        // from a convolution
    std::vector<double> units;  // int8: real value of one accumulator unit, per channel
    std::vector<float> bias;    // flying: the convolution's bias (empty: none)
    double in_scale = 1;        // memory source: its int8 scale
    double scale = 1;           // int8 scale of the source tensor (range / 127)
    uint32_t channels = 0;
};

// The SDP's three stages (X1, X2, Y) and what each does, decided element by element; numbers
// are worked out when descriptors are written (per piece of channels and rows).
class SdpProgram {
  public:
    SdpProgram(const Target& t, const SdpSource& src);

    // Adds an element; false (nothing changed) when the stages left cannot take it.
    bool add(const ChainElem& e);
    // Whether anything needs the LUT.
    bool uses_lut() const { return lut_elem_ >= 0; }
    // Whether an element-wise operand (a cube read per element) is part of it.
    bool reads_elements() const {
        for (const ChainElem& e : elems_)
            if (e.op == Op::Eltwise) return true;
        return false;
    }
    // int8 data from memory: an affine's shift is added after a MUL rescaled the data to fine
    // units (taking a stage for it; default), or in the data's own steps.
    void set_fine_shifts(bool on) { fine_shifts_ = on; }
    // SDP_D_FEATURE_MODE_CFG.WINOGRAD: the convolution in front runs in Winograd mode.
    void set_winograd(bool on) { winograd_ = on; }
    const std::vector<ChainElem>& elems() const { return elems_; }

    struct Piece {
        uint32_t channel_begin = 0, channels = 0;  // the output channels this operation makes
        uint32_t row_begin = 0;                    // first output row (per-element operands)
        nvdla_dla_data_cube src, dst;              // src: HW or memory; dst: memory or HW
    };
    // Writes the SDP descriptors of one piece; operand data goes to plan.consts, the LUT to
    // plan.luts (lut set to its index). out_scale: int8 scale of what the SDP writes.
    Status emit(Plan& plan, const Piece& piece, double out_scale, HwOp& op) const;

    // One line of what the stages do ("bias, relu, requantize").
    std::string describe() const;

  private:
    enum class Slot : uint8_t {
        None,
        ConvBias,
        AffineAdd,
        AffineMul,
        Rescale,
        EltAlu,
        EltMul,
        PRelu,
        LutPrep,
        ClipMax,  // ALU max with a register operand (a clip's lower bound)
        ClipMin   // ALU min with a register operand (a clip's upper bound)
    };
    struct Stage {
        Slot alu = Slot::None, mul = Slot::None;
        int alu_elem = -1, mul_elem = -1;
        bool relu = false, lut = false;
        int last_elem = -1;  // the last element that ends in this stage
        bool used() const { return alu != Slot::None || mul != Slot::None || relu || lut; }
    };

    bool try_add(const ChainElem& e);
    bool place(const ChainElem& e, int index, Stage (&st)[3], int& cur) const;
    bool place_clip(const ChainElem& e, int index, Stage (&st)[3], int& cur) const;
    bool in_source_steps(const Stage (&st)[3], int s) const;
    void bring_to_fine_units(Stage (&st)[3]) const;

    const Target& t_;
    SdpSource src_;
    Stage stage_[3];  // X1, X2, Y
    int cur_ = 0;     // the stage being filled
    std::vector<ChainElem> elems_;
    int lut_elem_ = -1;
    bool winograd_ = false;
    bool fine_shifts_ = true;
    bool eltwise_in_x_ = false;  // a sum, max or min goes to an X stage, never to Y
};

}  // namespace nvdla::builder::detail
