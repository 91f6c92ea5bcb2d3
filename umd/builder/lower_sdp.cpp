// The SDP program: which of X1, X2 and Y does each fused layer, and the numbers (operands,
// shifts, convertors) that make an int8 pipeline compute the float network's values.
//
// int8 bookkeeping: every integer in the SDP datapath stands for `units` real units. A
// convolution delivers accumulators in s_in * s_w[k] units (per output channel); X1 adds the
// bias in those units and multiplies by a per-kernel factor into "fine" units (the scale of
// the tensor the stage completes / 256), so later stages and the output convertor see one
// uniform unit and 8 extra bits of precision. Element-wise operands (int8 tensors) are shifted
// or converted into the current unit before they are added.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "builder/lower.hpp"
#include "nvdla/formats/auxiliary.hpp"
#include "nvdla/precision/lut.hpp"

namespace nvdla::builder::detail {

std::vector<int32_t> fixed_common(const std::vector<double>& values, int32_t limit, int max_shift,
                                  int& shift) {
    double largest = 0;
    for (double v : values) largest = std::max(largest, std::fabs(v));
    shift = 0;
    if (largest > 0)
        while (shift < max_shift && largest * std::ldexp(1.0, shift + 1) <= limit) ++shift;
    std::vector<int32_t> m(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
        const double v = std::round(values[i] * std::ldexp(1.0, shift));
        m[i] = static_cast<int32_t>(std::clamp(v, -double(limit) - 1, double(limit)));
    }
    return m;
}

Fixed fixed_one(double value, int32_t limit, int max_shift) {
    int shift = 0;
    const std::vector<int32_t> m = fixed_common({value}, limit, max_shift, shift);
    return {m[0], shift};
}

namespace {

// int16 operand with a left shift: value ~ op << shift.
std::vector<int32_t> shifted_operand(const std::vector<double>& values, int& shift) {
    double largest = 0;
    for (double v : values) largest = std::max(largest, std::fabs(v));
    shift = 0;
    while (shift < 63 && largest / std::ldexp(1.0, shift) > 32767) ++shift;
    std::vector<int32_t> out(values.size());
    for (size_t i = 0; i < values.size(); ++i)
        out[i] = static_cast<int32_t>(
            std::clamp(std::round(values[i] / std::ldexp(1.0, shift)), -32768.0, 32767.0));
    return out;
}

uint8_t eltwise_alu(EltwiseOp op) {
    return op == EltwiseOp::Max   ? NVDLA_DLA_SDP_ALU_MAX
           : op == EltwiseOp::Min ? NVDLA_DLA_SDP_ALU_MIN
                                  : NVDLA_DLA_SDP_ALU_SUM;
}

std::string number(double v) {
    std::ostringstream o;
    o << v;
    return o.str();
}

bool all_equal(const std::vector<double>& v) {
    for (double x : v)
        if (x != v[0]) return false;
    return true;
}

bool any_not(const std::vector<float>* v, float value) {
    if (!v) return false;
    for (float x : *v)
        if (x != value) return true;
    return false;
}

}  // namespace

nvdla_dla_lut_param to_lut_param(const precision::LutProgram& p, bool fp16) {
    nvdla_dla_lut_param l;
    std::memset(&l, 0, sizeof l);
    std::copy(p.le.begin(), p.le.end(), l.linear_exp_table);
    std::copy(p.lo.begin(), p.lo.end(), l.linear_only_table);
    l.method = p.le_mode == precision::LutLeMode::Exponent ? NVDLA_DLA_LUT_METHOD_EXPONENTIAL
                                                           : NVDLA_DLA_LUT_METHOD_LINEAR;
    if (p.le_mode == precision::LutLeMode::Exponent)
        l.linear_exp_offset.exp_offset = p.le_index_offset;
    else
        l.linear_exp_offset.frac_bits = p.le_index_select;
    l.linear_only_offset.frac_bits = p.lo_index_select;
    l.linear_exp_start = static_cast<uint64_t>(p.le_start);
    l.linear_exp_end = static_cast<uint64_t>(p.le_end);
    l.linear_only_start = static_cast<uint64_t>(p.lo_start);
    l.linear_only_end = static_cast<uint64_t>(p.lo_end);
    auto slope = [&](const precision::LutSlope& s) {
        nvdla_dla_slope out;
        std::memset(&out, 0, sizeof out);
        if (fp16) {
            out.data_f = static_cast<uint16_t>(s.scale);
        } else {
            out.data_i.scale = s.scale;
            out.data_i.shifter = s.shift;
        }
        return out;
    };
    l.linear_exp_underflow_slope = slope(p.le_underflow);
    l.linear_exp_overflow_slope = slope(p.le_overflow);
    l.linear_only_underflow_slope = slope(p.lo_underflow);
    l.linear_only_overflow_slope = slope(p.lo_overflow);
    l.hybrid_priority = static_cast<uint8_t>(p.hybrid_priority);
    l.underflow_priority = static_cast<uint8_t>(p.underflow_priority);
    l.overflow_priority = static_cast<uint8_t>(p.overflow_priority);
    return l;
}

SdpProgram::SdpProgram(const Target& t, const SdpSource& src) : t_(t), src_(src) {
    if (src_.flying) {
        bool bias = false;
        for (float b : src_.bias) bias = bias || b != 0;
        if (bias) {
            stage_[0].alu = Slot::ConvBias;
        }
        if (t_.int8()) stage_[0].mul = Slot::Rescale;
    }
}

bool SdpProgram::place(const ChainElem& e, int index, Stage (&st)[3], int& cur) const {
    const bool has_y = nvdla_hw_has(t_.cfg, NVDLA_FEATURE_SDP_EW);
    const bool has_lut = nvdla_hw_has(t_.cfg, NVDLA_FEATURE_SDP_LUT);
    // X positions: ALU 0, MUL 1, activation 2.
    auto last = [](const Stage& s) {
        return s.relu ? 2 : s.mul != Slot::None ? 1 : s.alu != Slot::None ? 0 : -1;
    };
    auto x_usable = [&](int s) { return s <= 1 && !st[2].used(); };
    auto per_element = [](const Stage& s) {
        return s.alu == Slot::EltAlu || s.mul == Slot::EltMul;
    };
    auto take = [&](int s) {
        st[s].last_elem = index;
        cur = s;
        return true;
    };

    switch (e.op) {
        case Op::Affine: {
            const bool add = any_not(e.shift, 0.0f), mul = any_not(e.scale, 1.0f);
            if (!add && !mul) return true;
            const int first = add ? 0 : 1;
            for (int s = cur; s <= 1; ++s) {
                if (!x_usable(s) || last(st[s]) >= first || per_element(st[s])) continue;
                if (add && t_.int8() && fine_shifts_ && in_source_steps(st, s)) {
                    // The shift in the source's steps would round to a whole step: a MUL
                    // before it rescales the data to fine units (bring_to_fine_units).
                    if (s == 1 && st[0].mul == Slot::None && !per_element(st[0])) {
                        st[0].mul = Slot::Rescale;
                    } else if (s == 0 && x_usable(1) && !st[1].used()) {
                        st[0].mul = Slot::Rescale;
                        continue;
                    }
                }
                if (add) {
                    st[s].alu = Slot::AffineAdd;
                    st[s].alu_elem = index;
                }
                if (mul) {
                    st[s].mul = Slot::AffineMul;
                    st[s].mul_elem = index;
                }
                return take(s);
            }
            return false;
        }
        case Op::Relu:
            for (int s = cur; s <= 1; ++s) {
                if (!x_usable(s) || st[s].relu) continue;
                st[s].relu = true;
                return take(s);
            }
            return false;
        case Op::PRelu:
            for (int s = cur; s <= 1; ++s) {
                if (!x_usable(s) || last(st[s]) >= 1 || st[s].alu == Slot::EltAlu) continue;
                st[s].mul = Slot::PRelu;
                st[s].mul_elem = index;
                return take(s);
            }
            return false;
        case Op::Eltwise:
            if (e.eltwise == EltwiseOp::Product) {
                if (has_y && !st[2].used()) {
                    st[2].mul = Slot::EltMul;
                    st[2].mul_elem = index;
                    return take(2);
                }
                for (int s = cur; s <= 1; ++s) {
                    if (!x_usable(s) || last(st[s]) >= 1 || st[s].alu != Slot::None) continue;
                    st[s].mul = Slot::EltMul;
                    st[s].mul_elem = index;
                    return take(s);
                }
                return false;
            }
            if (has_y && !st[2].used() && !eltwise_in_x_) {
                if (t_.int8()) bring_to_fine_units(st);
                st[2].alu = Slot::EltAlu;
                st[2].alu_elem = index;
                return take(2);
            }
            for (int s = cur; s <= 1; ++s) {
                if (!x_usable(s) || last(st[s]) >= 0) continue;
                if (t_.int8()) {
                    // The operand is added in its own units shifted: a MUL of the stage before
                    // must bring the data there.
                    if (s == 0) continue;
                    Stage& prior = st[s - 1];
                    const bool target = prior.mul == Slot::Rescale ||
                                        prior.mul == Slot::AffineMul || prior.mul == Slot::EltMul;
                    if (!target) {
                        if (prior.mul != Slot::None || prior.alu == Slot::EltAlu) continue;
                        prior.mul = Slot::Rescale;
                    }
                }
                st[s].alu = Slot::EltAlu;
                st[s].alu_elem = index;
                return take(s);
            }
            return false;
        case Op::Clip: return place_clip(e, index, st, cur);
        case Op::Sigmoid:
        case Op::Tanh:
            if (!has_y || !has_lut || st[2].used()) return false;
            st[2].lut = true;
            if (t_.int8()) {
                st[2].mul = Slot::LutPrep;
                st[2].alu = Slot::LutPrep;
            }
            return take(2);
        default: return false;
    }
}

// Whether int8 data read from memory is still in its own steps at stage s (no MUL before it
// rescaled it).
bool SdpProgram::in_source_steps(const Stage (&st)[3], int s) const {
    if (src_.flying) return false;
    for (int j = 0; j < s; ++j)
        if (st[j].mul == Slot::Rescale || st[j].mul == Slot::AffineMul || st[j].mul == Slot::EltMul)
            return false;
    return true;
}

// int8 data read from memory stays in its own steps until a MUL rescales it; Y's ALU would
// convert its operand into those steps, a second rounding of a full step. A MUL of the last X
// stage used (or of the next, unused one) brings the data to fine units first, as a
// convolution's X1 does (and as the X stages' element-wise ALU needs anyway).
void SdpProgram::bring_to_fine_units(Stage (&st)[3]) const {
    if (!in_source_steps(st, 2)) return;
    int last_used = -1;
    for (int s = 0; s <= 1; ++s)
        if (st[s].used()) last_used = s;
    if (last_used >= 0 && st[last_used].mul == Slot::None && st[last_used].alu != Slot::EltAlu) {
        st[last_used].mul = Slot::Rescale;
        return;
    }
    if (last_used < 1) st[last_used + 1].mul = Slot::Rescale;
}

// A clip: the lower bound as a ReLU (bound 0) or an ALU max, then the upper bound as an ALU
// min of a later stage (the ALU of a stage comes before its ReLU); register operands.
bool SdpProgram::place_clip(const ChainElem& e, int index, Stage (&st)[3], int& cur) const {
    const bool has_y = nvdla_hw_has(t_.cfg, NVDLA_FEATURE_SDP_EW);
    const bool need_lo = e.clip_min > -std::numeric_limits<float>::infinity();
    const bool need_hi = e.clip_max < std::numeric_limits<float>::infinity();
    auto empty = [](const Stage& s) { return !s.used(); };
    auto take = [&](int s) {
        st[s].last_elem = index;
        cur = s;
        return true;
    };
    int lo_stage = cur;
    if (need_lo) {
        lo_stage = -1;
        for (int s = cur; s <= 1 && lo_stage < 0 && !st[2].used(); ++s) {
            if (e.clip_min == 0 && !st[s].relu) {
                st[s].relu = true;
                lo_stage = s;
            } else if (empty(st[s])) {
                st[s].alu = Slot::ClipMax;
                st[s].alu_elem = index;
                lo_stage = s;
            }
        }
        if (lo_stage < 0) {
            if (need_hi || !has_y || st[2].used()) return false;
            st[2].alu = Slot::ClipMax;
            st[2].alu_elem = index;
            return take(2);
        }
        if (!need_hi) return take(lo_stage);
    }
    for (int s = need_lo ? lo_stage + 1 : cur; s <= 1 && !st[2].used(); ++s)
        if (empty(st[s])) {
            st[s].alu = Slot::ClipMin;
            st[s].alu_elem = index;
            return take(s);
        }
    if (!has_y || st[2].used()) return false;
    st[2].alu = Slot::ClipMin;
    st[2].alu_elem = index;
    return take(2);
}

bool SdpProgram::add(const ChainElem& e) {
    if (try_add(e)) return true;
    // Y's ALU has no ReLU (nor anything else) after it: with the sum, max or min in X2, as
    // nv_small places it, what follows it (a ResNet's ReLU) fuses into the same pass.
    if (eltwise_in_x_ || stage_[2].alu != Slot::EltAlu) return false;
    SdpProgram x(t_, src_);
    x.winograd_ = winograd_;
    x.fine_shifts_ = fine_shifts_;
    x.eltwise_in_x_ = true;
    for (const ChainElem& prior : elems_)
        if (!x.try_add(prior)) return false;
    if (!x.try_add(e)) return false;
    std::copy(std::begin(x.stage_), std::end(x.stage_), std::begin(stage_));
    cur_ = x.cur_;
    elems_ = std::move(x.elems_);
    lut_elem_ = x.lut_elem_;
    eltwise_in_x_ = true;
    return true;
}

bool SdpProgram::try_add(const ChainElem& e) {
    if ((e.op == Op::Sigmoid || e.op == Op::Tanh) && lut_elem_ >= 0) return false;
    Stage copy[3] = {stage_[0], stage_[1], stage_[2]};
    int cur = cur_;
    if (!place(e, static_cast<int>(elems_.size()), copy, cur)) return false;
    for (int i = 0; i < 3; ++i) stage_[i] = copy[i];
    cur_ = cur;
    if (e.op == Op::Sigmoid || e.op == Op::Tanh) lut_elem_ = static_cast<int>(elems_.size());
    elems_.push_back(e);
    return true;
}

std::string SdpProgram::describe() const {
    std::vector<std::string> parts;
    auto name = [&](Slot s, int elem) -> std::string {
        switch (s) {
            case Slot::None: return "";
            case Slot::ConvBias: return "bias";
            case Slot::AffineAdd: return "add";
            case Slot::AffineMul: return "scale";
            case Slot::Rescale: return "requantize";
            case Slot::EltAlu: {
                const ChainElem& e = elems_[size_t(elem)];
                const std::string what = e.eltwise == EltwiseOp::Max   ? "max"
                                         : e.eltwise == EltwiseOp::Min ? "min"
                                                                       : "sum";
                return e.per_channel ? what + " per channel" : what;
            }
            case Slot::EltMul:
                return elems_[size_t(elem)].per_channel ? "product per channel" : "product";
            case Slot::ClipMax: return "max " + number(elems_[size_t(elem)].clip_min);
            case Slot::ClipMin: return "min " + number(elems_[size_t(elem)].clip_max);
            case Slot::PRelu: return "prelu";
            case Slot::LutPrep: return "";
        }
        return "";
    };
    const char* stage_names[3] = {"X1", "X2", "Y"};
    std::ostringstream o;
    bool first = true;
    for (int s = 0; s < 3; ++s) {
        const Stage& st = stage_[s];
        if (!st.used()) continue;
        std::vector<std::string> what;
        if (s == 2) {
            if (!name(st.mul, st.mul_elem).empty()) what.push_back(name(st.mul, st.mul_elem));
            if (!name(st.alu, st.alu_elem).empty()) what.push_back(name(st.alu, st.alu_elem));
            if (st.lut)
                what.push_back(elems_[size_t(lut_elem_)].op == Op::Sigmoid ? "sigmoid LUT"
                                                                           : "tanh LUT");
        } else {
            if (!name(st.alu, st.alu_elem).empty()) what.push_back(name(st.alu, st.alu_elem));
            if (!name(st.mul, st.mul_elem).empty()) what.push_back(name(st.mul, st.mul_elem));
            if (st.relu) what.push_back("relu");
        }
        o << (first ? "" : "; ") << stage_names[s] << " ";
        for (size_t i = 0; i < what.size(); ++i) o << (i ? "+" : "") << what[i];
        first = false;
    }
    if (first) o << "write";
    return o.str();
}

namespace {

// Per-kernel operand data of an X stage: ALU values, MUL values or both, in the SDP's layout.
Result<nvdla_dla_data_cube> pack_kernel_operands(const Target& t, Plan& plan,
                                                 const std::vector<float>* alu,
                                                 const std::vector<float>* mul, uint32_t n,
                                                 bool prelu) {
    const Precision comp = t.int8() ? Precision::Int16 : Precision::Fp16;
    const AuxUse use = alu && mul ? AuxUse::Both : alu ? AuxUse::Alu : AuxUse::Mul;
    const AuxKind kind = use == AuxUse::Both ? AuxKind::BatchNorm
                         : prelu             ? AuxKind::PRelu
                                             : AuxKind::Bias;
    Result<AuxLayout> layout =
        make_aux_layout(*t.cfg, kind, AuxMode::PerChannel, use, t.precision, comp, {1, n, 1, 1});
    if (!layout) return layout.status();
    std::vector<std::byte> bytes(layout->size_bytes());
    ConstTensorView a, m;
    if (alu)
        a = ConstTensorView{
            alu->data(), alu->size() * 4, HostType::Float32, HostLayout::NCHW, {1, n, 1, 1}};
    if (mul)
        m = ConstTensorView{
            mul->data(), mul->size() * 4, HostType::Float32, HostLayout::NCHW, {1, n, 1, 1}};
    ConvertOptions opt;
    opt.saturate_fp16 = true;
    if (Status s = pack_aux(*layout, {alu ? &a : nullptr, mul ? &m : nullptr}, bytes, opt); !s)
        return s;
    const uint64_t offset = plan.add_const(bytes);
    nvdla_dla_data_cube c = no_cube();
    c.type = NVDLA_DLA_MEM_MC;
    c.address = static_cast<int16_t>(kConstBuffer);
    c.offset = static_cast<uint32_t>(offset);
    c.size = static_cast<uint32_t>(bytes.size());
    c.width = 1;
    c.height = 1;
    c.channel = static_cast<uint16_t>(n);
    // The read DMA of a 1x1 output requires surfaces packed: one group of values apart (cmod
    // sdp/NV_NVDLA_sdp.cpp RdmaSequence asserts surf_stride == element_per_group * bytes).
    c.line_stride = static_cast<uint32_t>(layout->line_stride);
    c.surf_stride = static_cast<uint32_t>(layout->surface_stride);
    return c;
}

}  // namespace

Status SdpProgram::emit(Plan& plan, const Piece& pc, double out_scale, HwOp& hw) const {
    hw.type = NVDLA_DLA_OP_SDP;
    std::memset(&hw.op, 0, sizeof hw.op);
    std::memset(&hw.surf, 0, sizeof hw.surf);
    nvdla_dla_sdp_op_desc& op = hw.op.sdp_op;
    nvdla_dla_sdp_surface_desc& surf = hw.surf.sdp_surface;
    const uint8_t p = t_.int8() ? NVDLA_DLA_PRECISION_INT8 : NVDLA_DLA_PRECISION_FP16;
    op.src_precision = p;
    op.dst_precision = p;
    op.lut_index = -1;
    op.conv_mode = winograd_ ? NVDLA_DLA_CONV_WINOGRAD : NVDLA_DLA_CONV_DIRECT;
    op.batch_num = 1;
    op.out_cvt.scale = 1;
    op.out_cvt.enable = 1;
    surf.src_data = pc.src;
    surf.dst_data = pc.dst;
    surf.x1_data = no_cube();
    surf.x2_data = no_cube();
    surf.y_data = no_cube();

    const uint32_t n = pc.channels, c0 = pc.channel_begin;
    const bool int8 = t_.int8();
    // Units of the data entering the current stage (int8), per channel of the piece.
    std::vector<double> u(n, src_.flying ? 0.0 : src_.in_scale);
    if (src_.flying && int8)
        for (uint32_t i = 0; i < n; ++i) u[i] = src_.units[c0 + i];
    int next_alu_shift = 0;  // the shift a later element-wise ALU adds its operand with

    // The operand view of an element-wise input for this piece.
    auto operand_cube = [&](const ChainElem& e) {
        Place q = e.operand;
        q.offset += uint64_t(c0 / t_.lanes()) * q.surface;
        if (e.per_channel)
            q.dims = {1, n, 1, 1};
        else {
            q.offset += uint64_t(pc.row_begin) * q.line;
            q.dims = {1, n, pc.src.height, pc.src.width};
        }
        const uint64_t size = uint64_t((n + t_.lanes() - 1) / t_.lanes() - 1) * q.surface +
                              uint64_t(q.dims.h - 1) * q.line +
                              uint64_t(q.dims.w) * t_.cfg->atom_bytes;
        return cube_of(q, size);
    };
    // Where the data should be after stage s's MUL: the next stage's element-wise ALU, or the
    // fine units of the tensor the stage completes.
    auto target_units = [&](int s, const std::vector<double>& factor, bool& constrained) {
        constrained = false;
        for (int nxt = s + 1; nxt <= 2; ++nxt) {
            if (!stage_[nxt].used()) continue;
            if (nxt <= 1 && stage_[nxt].alu == Slot::EltAlu) {
                constrained = true;
                const double sb = elems_[size_t(stage_[nxt].alu_elem)].operand_scale;
                for (int sh = 8; sh >= 0; --sh) {
                    const double target = sb / std::ldexp(1.0, sh);
                    double largest = 0;
                    for (uint32_t i = 0; i < n; ++i)
                        largest = std::max(largest, std::fabs(factor[i] * u[i] / target));
                    if (largest <= 32767 || sh == 0) {
                        next_alu_shift = sh;
                        return target;
                    }
                }
            }
            break;
        }
        const int last = stage_[s].last_elem;
        const double scale = last >= 0 ? elems_[size_t(last)].out_scale : src_.scale;
        double target = scale / 256;
        double largest = 0;
        for (uint32_t i = 0; i < n; ++i) largest = std::max(largest, std::fabs(factor[i] * u[i]));
        if (largest / target > 32767) target = largest / 32767;
        // Y's ALU operand converter multiplies by at most 32767: units no finer than that.
        bool y_next = true;
        for (int nxt = s + 1; nxt <= 1; ++nxt) y_next = y_next && !stage_[nxt].used();
        if (y_next && stage_[2].alu == Slot::EltAlu)
            target = std::max(target, elems_[size_t(stage_[2].alu_elem)].operand_scale / 32767);
        return target;
    };

    for (int s = 0; s < 3; ++s) {
        const Stage& st = stage_[s];
        nvdla_dla_sdp_op& o = s == 0 ? op.x1_op : s == 1 ? op.x2_op : op.y_op;
        nvdla_dla_data_cube& data = s == 0 ? surf.x1_data : s == 1 ? surf.x2_data : surf.y_data;
        o.precision = int8 ? NVDLA_DLA_PRECISION_INT16 : NVDLA_DLA_PRECISION_FP16;
        if (!st.used()) continue;
        o.enable = 1;
        o.act = st.lut                  ? NVDLA_DLA_ACT_LUT
                : st.mul == Slot::PRelu ? NVDLA_DLA_ACT_PRELU
                : st.relu               ? NVDLA_DLA_ACT_RELU
                                        : NVDLA_DLA_ACT_NONE;
        const bool alu = st.alu != Slot::None, mul = st.mul != Slot::None;
        o.type = alu && mul ? NVDLA_DLA_SDP_OP_BOTH
                 : alu      ? NVDLA_DLA_SDP_OP_ADD
                 : mul      ? NVDLA_DLA_SDP_OP_MUL
                            : NVDLA_DLA_SDP_OP_NONE;
        o.alu_type = NVDLA_DLA_SDP_ALU_SUM;
        o.mode = NVDLA_DLA_SDP_PER_LAYER;

        if (s == 2) {
            // ---- Y: MUL, then ALU, then the LUT ----
            if (st.lut) {
                const ChainElem& e = elems_[size_t(lut_elem_)];
                const double range = t_.options->lut_range;
                Result<precision::BuiltLut> built =
                    e.op == Op::Sigmoid
                        ? precision::build_sigmoid_lut(-range, range,
                                                       int8 ? Precision::Int8 : Precision::Fp16)
                        : precision::build_tanh_lut(-range, range,
                                                    int8 ? Precision::Int8 : Precision::Fp16);
                if (!built) return built.status();
                plan.luts.push_back(to_lut_param(built->program, !int8));
                hw.lut = static_cast<int>(plan.luts.size() - 1);
                if (int8) {
                    // x' = (x - O) * SF = v * u * SF - O * SF, then the LUT gives f * OS.
                    const Fixed m = fixed_one(u[0] * built->input_scale, 0x7fffffff, 63);
                    o.mul_operand = m.m;
                    o.truncate = static_cast<uint8_t>(m.shift);
                    o.alu_operand = static_cast<int32_t>(
                        std::clamp(std::round(-built->input_offset * built->input_scale),
                                   -2147483648.0, 2147483647.0));
                    std::fill(u.begin(), u.end(), 1.0 / built->output_scale);
                }
                continue;
            }
            if (st.alu == Slot::ClipMax || st.alu == Slot::ClipMin) {
                // A bound in a register: int8 in the current units (32 bits, no shift), fp16
                // as fp32 bits.
                const ChainElem& e = elems_[size_t(st.alu_elem)];
                const double bound = st.alu == Slot::ClipMax ? e.clip_min : e.clip_max;
                o.alu_type =
                    st.alu == Slot::ClipMax ? NVDLA_DLA_SDP_ALU_MAX : NVDLA_DLA_SDP_ALU_MIN;
                o.alu_operand =
                    int8 ? static_cast<int32_t>(
                               std::clamp(std::round(bound / u[0]), -2147483648.0, 2147483647.0))
                         : static_cast<int32_t>(std::bit_cast<uint32_t>(static_cast<float>(bound)));
                continue;
            }
            const ChainElem& e = elems_[size_t(st.alu != Slot::None ? st.alu_elem : st.mul_elem)];
            o.mode = e.per_channel ? NVDLA_DLA_SDP_PER_KERNEL : NVDLA_DLA_SDP_PER_POINT;
            o.precision = static_cast<uint8_t>(p);
            data = operand_cube(e);
            nvdla_dla_cvt_param& cvt = alu ? o.cvt.alu_cvt : o.cvt.mul_cvt;
            cvt.scale = 1;
            if (st.alu == Slot::EltAlu) {
                o.alu_type = eltwise_alu(e.eltwise);
                if (int8) {
                    const Fixed f = fixed_one(e.operand_scale / u[0], 32767, 63);
                    cvt.enable = 1;
                    cvt.scale = static_cast<int16_t>(f.m);
                    cvt.truncate = static_cast<uint8_t>(f.shift);
                }
            } else if (int8) {
                cvt.enable = 1;
                bool constrained = false;
                const std::vector<double> one(n, 1.0);
                const double target = target_units(s, one, constrained);
                const int tr = static_cast<int>(std::clamp(
                    std::round(std::log2(target / (u[0] * e.operand_scale))), 0.0, 63.0));
                o.truncate = static_cast<uint8_t>(tr);
                std::fill(u.begin(), u.end(), u[0] * e.operand_scale * std::ldexp(1.0, tr));
            }
            continue;
        }

        // ---- X1/X2: ALU, MUL, truncation, ReLU/PReLU ----
        if (st.alu == Slot::EltAlu || st.mul == Slot::EltMul) {
            const ChainElem& e = elems_[size_t(st.alu == Slot::EltAlu ? st.alu_elem : st.mul_elem)];
            o.mode = e.per_channel ? NVDLA_DLA_SDP_PER_KERNEL : NVDLA_DLA_SDP_PER_POINT;
            o.precision = static_cast<uint8_t>(p);
            data = operand_cube(e);
            if (st.alu == Slot::EltAlu) {
                o.alu_type = eltwise_alu(e.eltwise);
                if (int8) o.shift_value = static_cast<uint8_t>(next_alu_shift);
            } else if (int8) {
                bool constrained = false;
                const std::vector<double> one(n, 1.0);
                const double target = target_units(s, one, constrained);
                const int tr = static_cast<int>(std::clamp(
                    std::round(std::log2(target / (u[0] * e.operand_scale))), 0.0, 63.0));
                o.truncate = static_cast<uint8_t>(tr);
                std::fill(u.begin(), u.end(), u[0] * e.operand_scale * std::ldexp(1.0, tr));
            }
            continue;
        }

        // Per-channel values of the ALU and MUL (real, then integers for int8).
        std::vector<double> alu_v(n, 0.0), mul_v(n, 1.0);
        const ChainElem* ae = st.alu_elem >= 0 ? &elems_[size_t(st.alu_elem)] : nullptr;
        const ChainElem* me = st.mul_elem >= 0 ? &elems_[size_t(st.mul_elem)] : nullptr;
        std::vector<double> factor(n, 1.0);  // what MUL multiplies the real value by
        if (st.mul == Slot::AffineMul)
            for (uint32_t i = 0; i < n; ++i) factor[i] = (*me->scale)[c0 + i];
        if (st.alu == Slot::ConvBias) {
            for (uint32_t i = 0; i < n; ++i) {
                const double b = src_.bias.empty() ? 0.0 : src_.bias[c0 + i];
                alu_v[i] = int8 ? b / u[i] : b;
            }
        } else if (st.alu == Slot::ClipMax || st.alu == Slot::ClipMin) {
            const double bound = st.alu == Slot::ClipMax ? ae->clip_min : ae->clip_max;
            o.alu_type = st.alu == Slot::ClipMax ? NVDLA_DLA_SDP_ALU_MAX : NVDLA_DLA_SDP_ALU_MIN;
            for (uint32_t i = 0; i < n; ++i) alu_v[i] = int8 ? bound / u[i] : bound;
        } else if (st.alu == Slot::AffineAdd) {
            for (uint32_t i = 0; i < n; ++i) {
                double sc = st.mul == Slot::AffineMul && st.mul_elem == st.alu_elem
                                ? double((*ae->scale)[c0 + i])
                                : 1.0;
                if (sc == 0) sc = 1e-30;
                const double add = double((*ae->shift)[c0 + i]) / sc;
                alu_v[i] = int8 ? add / u[i] : add;
            }
        }
        bool constrained = false;
        if (int8) {
            std::vector<int32_t> alu_i, mul_i;
            int alu_shift = 0, mul_shift = 0;
            if (alu) alu_i = shifted_operand(alu_v, alu_shift);
            if (st.mul == Slot::PRelu) {
                std::vector<double> slopes(n);
                for (uint32_t i = 0; i < n; ++i) slopes[i] = (*me->scale)[c0 + i];
                mul_i = fixed_common(slopes, 32767, 63, mul_shift);
            } else if (st.mul == Slot::Rescale || st.mul == Slot::AffineMul) {
                const double target = target_units(s, factor, constrained);
                std::vector<double> r(n);
                for (uint32_t i = 0; i < n; ++i) r[i] = factor[i] * u[i] / target;
                mul_i = fixed_common(r, 32767, 63, mul_shift);
                std::fill(u.begin(), u.end(), target);
            }
            o.shift_value = static_cast<uint8_t>(alu_shift);
            o.truncate = static_cast<uint8_t>(mul ? mul_shift : 0);
            std::vector<double> ai(alu_i.begin(), alu_i.end()), mi(mul_i.begin(), mul_i.end());
            const bool layer = (!alu || all_equal(ai)) && (!mul || all_equal(mi));
            if (layer) {
                o.alu_operand = alu ? alu_i[0] : 0;
                o.mul_operand = mul ? mul_i[0] : 1;
            } else {
                std::vector<float> af(alu_i.begin(), alu_i.end()), mf(mul_i.begin(), mul_i.end());
                Result<nvdla_dla_data_cube> c = pack_kernel_operands(
                    t_, plan, alu ? &af : nullptr, mul ? &mf : nullptr, n, st.mul == Slot::PRelu);
                if (!c) return c.status();
                data = *c;
                o.mode = NVDLA_DLA_SDP_PER_KERNEL;
            }
        } else {
            if (mul)
                for (uint32_t i = 0; i < n; ++i)
                    mul_v[i] = st.mul == Slot::PRelu ? double((*me->scale)[c0 + i]) : factor[i];
            const bool layer = (!alu || all_equal(alu_v)) && (!mul || all_equal(mul_v));
            if (layer) {
                o.alu_operand = alu ? aux_register_value(Precision::Fp16, float(alu_v[0])) : 0;
                o.mul_operand = mul ? aux_register_value(Precision::Fp16, float(mul_v[0])) : 0;
            } else {
                std::vector<float> af(alu_v.begin(), alu_v.end()), mf(mul_v.begin(), mul_v.end());
                Result<nvdla_dla_data_cube> c = pack_kernel_operands(
                    t_, plan, alu ? &af : nullptr, mul ? &mf : nullptr, n, st.mul == Slot::PRelu);
                if (!c) return c.status();
                data = *c;
                o.mode = NVDLA_DLA_SDP_PER_KERNEL;
            }
        }
    }

    if (int8) {
        // The output convertor: from the current units to the output scale.
        const Fixed f = fixed_one(u[0] / out_scale, 32767, 63);
        op.out_cvt.scale = static_cast<int16_t>(f.m);
        op.out_cvt.truncate = static_cast<uint8_t>(f.shift);
    }
    return Status();
}

}  // namespace nvdla::builder::detail
