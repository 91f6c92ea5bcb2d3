#include "cpu_tasks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "image.hpp"  // fp16_round_ties_away: the original's half_float rounding
#include "nvdla/precision/fp16.hpp"

namespace nvdla::runtime {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kNetworkDescBytes = 6;  // the fields read (the descriptor is 256 bytes)
constexpr uint64_t kBufferDescBytes = 256;
constexpr uint64_t kBufferPairBytes = 2 * kBufferDescBytes;
constexpr uint64_t kOriginalOpSlot = 16;
constexpr uint64_t kCurrentOpSlot = 24;
constexpr uint8_t kOpPower = 0;
constexpr uint8_t kOpSoftmax = 1;
constexpr uint16_t kFormatFp16 = 3;  // the current layout's FF16
// CPU tasks: offsets inside a 256-byte buffer descriptor (the standard fields use 26 bytes).
constexpr uint64_t kSecondSource = 32;  // in the source descriptor: the second input
constexpr uint64_t kParameterRef = 32;  // in the destination descriptor: {int16 index, u32 offset}
constexpr uint64_t kMarkerMagic = 32;   // in the marker's destination descriptor

template <class T>
T load(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

enum class Element : uint8_t { Int8, Fp16 };

struct BufferDesc {
    int16_t address = -1;
    uint32_t offset = 0;
    uint32_t size = 0;
    uint16_t format = 0;
    uint16_t width = 0, height = 0, channels = 0;
    uint32_t line_stride = 0, surface_stride = 0;
};

struct CpuParams {
    std::vector<int64_t> ints;
    std::vector<float> floats;
};

struct OpDesc {
    uint8_t type = 0;
    float input_scale = 1.0f, output_scale = 1.0f;
    float power = 1.0f, scale = 1.0f, shift = 0.0f;
    uint8_t axis = 0;
    // CPU operations
    uint8_t inputs = 0;
    float second_input_scale = 1.0f;
    uint32_t int_count = 0, float_count = 0;
};

// A buffer descriptor resolved against the address list: where each element lives.
struct Cube {
    std::byte* base = nullptr;
    Element element = Element::Int8;
    uint32_t bytes_per_element = 1;
    uint32_t lanes = 32;  // channels per atom group
    uint32_t width = 0, height = 0, channels = 0;
    uint64_t line_stride = 0, surface_stride = 0;

    std::byte* at(uint32_t c, uint32_t h, uint32_t w) const {
        return base + uint64_t(c / lanes) * surface_stride + uint64_t(h) * line_stride +
               uint64_t(w) * lanes * bytes_per_element + uint64_t(c % lanes) * bytes_per_element;
    }
};

std::string format_name(CpuTaskLayout layout, uint16_t format) {
    static const char* const original[] = {"INT8", "INT16", "FF16"};
    static const char* const current[] = {"INT8", "INT8_8", "INT16", "FF16", "UINT8", "UINT16"};
    if (layout == CpuTaskLayout::Original && format < 3) return original[format];
    if (layout == CpuTaskLayout::Current && format < 6) return current[format];
    return "unknown format " + std::to_string(format);
}

// A cube must not overlap itself: every element has its own bytes (which also bounds the
// element count, and the work, by the memory behind it).
Status check_strides(const Cube& cube, const std::string& where) {
    const uint64_t atoms = uint64_t(cube.width) * cube.lanes * cube.bytes_per_element;
    if (cube.height > 1 && cube.line_stride < atoms)
        return error(where, ": line stride ", cube.line_stride, " is smaller than a line of ",
                     cube.width, " atoms (", atoms, " bytes)");
    const uint64_t plane = uint64_t(cube.height - 1) * cube.line_stride + atoms;
    if (cube.channels > cube.lanes && cube.surface_stride < plane)
        return error(where, ": surface stride ", cube.surface_stride,
                     " is smaller than a surface of ", cube.height, " lines (", plane, " bytes)");
    return Status();
}

class CpuTask {
  public:
    explicit CpuTask(std::span<const CpuTaskAddress> addresses)
        : addresses_(addresses), written_(addresses.size()) {}

    Status decode() {
        if (addresses_.empty()) return error("EMU task: its address list is empty");
        const CpuTaskAddress& head = addresses_[0];
        if (!head.data || head.size < kNetworkDescBytes)
            return error("EMU task: address-list entry 0 holds ", head.size,
                         " bytes, too few for the network descriptor");
        op_index_ = load<int16_t>(head.data);
        buffer_index_ = load<int16_t>(head.data + 2);
        num_ops_ = load<uint16_t>(head.data + 4);
        if (num_ops_ == 0) return Status();
        Status s;
        if (!(s = list_entry(op_index_, "operation list"))) return s;
        if (!(s = list_entry(buffer_index_, "buffer-descriptor list"))) return s;
        const CpuTaskAddress& ops = addresses_[static_cast<size_t>(op_index_)];
        const uint64_t declared = ops.declared ? std::min(ops.declared, ops.size) : ops.size;
        if (declared == kOriginalOpSlot * num_ops_) {
            layout_ = CpuTaskLayout::Original;
        } else if (declared == kCurrentOpSlot * num_ops_) {
            layout_ = CpuTaskLayout::Current;
        } else {
            return error(
                "EMU task: cannot tell the descriptor layout: the operation "
                "list is ",
                declared, " bytes for ", num_ops_, " operations (16 or 24 bytes each expected)");
        }
        const CpuTaskAddress& buffers = addresses_[static_cast<size_t>(buffer_index_)];
        if (buffers.size < kBufferPairBytes * num_ops_)
            return error("EMU task: the buffer-descriptor list holds ", buffers.size,
                         " bytes, too few for ", num_ops_, " operations (", kBufferPairBytes,
                         " bytes each)");
        return Status();
    }

    uint16_t num_operations() const { return num_ops_; }
    CpuTaskLayout layout() const { return layout_; }

    OpDesc operation(uint16_t i) const {
        const std::byte* p = addresses_[static_cast<size_t>(op_index_)].data + i * slot_bytes();
        OpDesc d;
        d.type = load<uint8_t>(p);
        if (layout_ == CpuTaskLayout::Current) {
            d.input_scale = load<float>(p + 4);
            d.output_scale = load<float>(p + 8);
            p += 12;
        } else {
            p += 1;
        }
        if (d.type == kOpPower) {
            d.power = load<float>(p);
            d.scale = load<float>(p + 4);
            d.shift = load<float>(p + 8);
        } else if (d.type >= kCpuOpTypeBase && layout_ == CpuTaskLayout::Current) {
            const std::byte* slot = p - 12;
            d.inputs = load<uint8_t>(slot + 1);
            d.second_input_scale = load<float>(slot + 12);
            d.int_count = load<uint32_t>(slot + 16);
            d.float_count = load<uint32_t>(slot + 20);
        } else {
            d.axis = load<uint8_t>(p);
        }
        return d;
    }

    BufferDesc buffer(uint16_t op, bool destination) const {
        return buffer_at(pair(op) + (destination ? kBufferDescBytes : 0));
    }
    // CPU operations: the second source descriptor, at byte 32 of the source descriptor.
    BufferDesc second_source(uint16_t op) const { return buffer_at(pair(op) + kSecondSource); }

    // Whether operation 0 is the CPU-task marker.
    bool has_cpu_marker() const {
        if (num_ops_ == 0 || layout_ != CpuTaskLayout::Current) return false;
        const OpDesc d = operation(0);
        const BufferDesc src = buffer(0, false), dst = buffer(0, true);
        return d.type == kOpPower && src.format == kFormatFp16 &&
               dst.format == kCpuTaskMarkerFormat &&
               std::memcmp(pair(0) + kBufferDescBytes + kMarkerMagic, kCpuTaskMagic,
                           sizeof kCpuTaskMagic) == 0;
    }

    // A CPU operation's parameter block: int_count int32 values, then float_count floats, at
    // the address index and offset that byte 32 of the destination descriptor gives.
    Result<CpuParams> parameters(uint16_t op, const OpDesc& d, const std::string& where) const {
        CpuParams out;
        if (d.int_count == 0 && d.float_count == 0) return out;
        const std::byte* ref = pair(op) + kBufferDescBytes + kParameterRef;
        const int16_t index = load<int16_t>(ref);
        const uint32_t offset = load<uint32_t>(ref + 2);
        if (index < 0 || static_cast<size_t>(index) >= addresses_.size())
            return error(where, ": the parameter address index ", index,
                         " is not one of the task's ", addresses_.size(), " address-list entries");
        const CpuTaskAddress& a = addresses_[static_cast<size_t>(index)];
        if (!a.data)
            return error(where,
                         ": the parameters lie in SRAM, which the CPU cannot "
                         "reach");
        const uint64_t bytes = 4 * (uint64_t(d.int_count) + d.float_count);
        if (offset > a.size || bytes > a.size - offset)
            return error(where, ": ", d.int_count, " int and ", d.float_count,
                         " float parameters at offset ", offset,
                         " reach past the end of address-list "
                         "entry ",
                         index, " (", a.size, " bytes)");
        const std::byte* p = a.data + offset;
        out.ints.resize(d.int_count);
        for (uint32_t k = 0; k < d.int_count; ++k) out.ints[k] = load<int32_t>(p + 4 * k);
        p += 4 * uint64_t(d.int_count);
        out.floats.resize(d.float_count);
        for (uint32_t k = 0; k < d.float_count; ++k) out.floats[k] = load<float>(p + 4 * k);
        return out;
    }

  private:
    const std::byte* pair(uint16_t op) const {
        return addresses_[static_cast<size_t>(buffer_index_)].data + op * kBufferPairBytes;
    }

    BufferDesc buffer_at(const std::byte* p) const {
        BufferDesc b;
        b.address = load<int16_t>(p);
        if (layout_ == CpuTaskLayout::Current) {
            b.offset = load<uint32_t>(p + 2);
            p += 4;
        }
        b.size = load<uint32_t>(p + 2);
        b.format = load<uint16_t>(p + 6);
        b.width = load<uint16_t>(p + 8);
        b.height = load<uint16_t>(p + 10);
        b.channels = load<uint16_t>(p + 12);
        b.line_stride = load<uint32_t>(p + 14);
        b.surface_stride = load<uint32_t>(p + 18);
        return b;
    }

  public:
    // The element layout of a format, or an error naming it.
    Result<Cube> resolve(const BufferDesc& b, const std::string& where) const {
        Cube cube;
        const uint16_t int8 = 0;
        const uint16_t int8_x8 = layout_ == CpuTaskLayout::Current ? 1 : 0xffff;
        const uint16_t fp16 = layout_ == CpuTaskLayout::Current ? 3 : 2;
        if (b.format == int8) {
            cube.element = Element::Int8;
            cube.bytes_per_element = 1;
            cube.lanes = 32;
        } else if (b.format == int8_x8) {
            cube.element = Element::Int8;
            cube.bytes_per_element = 1;
            cube.lanes = 8;
        } else if (b.format == fp16) {
            cube.element = Element::Fp16;
            cube.bytes_per_element = 2;
            cube.lanes = 16;
        } else {
            return error(where, ": ", format_name(layout_, b.format),
                         " data is not supported (int8 and fp16 are)");
        }
        if (b.address < 0 || static_cast<size_t>(b.address) >= addresses_.size())
            return error(where, ": address index ", b.address, " is not one of the task's ",
                         addresses_.size(), " address-list entries");
        const CpuTaskAddress& a = addresses_[static_cast<size_t>(b.address)];
        if (!a.data)
            return error(where, ": address-list entry ", b.address,
                         " lies in SRAM, which the CPU cannot reach");
        cube.width = b.width;
        cube.height = b.height;
        cube.channels = b.channels;
        cube.line_stride = b.line_stride;
        cube.surface_stride = b.surface_stride;
        if (b.width == 0 || b.height == 0 || b.channels == 0) {
            cube.base = a.data;
            return cube;
        }
        // The farthest byte any element reaches.
        uint64_t channel_extent = 0;
        for (uint32_t c = 0; c < b.channels; ++c)
            channel_extent =
                std::max(channel_extent, uint64_t(c / cube.lanes) * b.surface_stride +
                                             uint64_t(c % cube.lanes) * cube.bytes_per_element);
        const uint64_t extent = channel_extent + uint64_t(b.height - 1) * b.line_stride +
                                uint64_t(b.width - 1) * cube.lanes * cube.bytes_per_element +
                                cube.bytes_per_element;
        if (b.offset > a.size || extent > a.size - b.offset)
            return error(where, ": ", b.width, "x", b.height, "x", b.channels,
                         " elements at offset ", b.offset, " reach ", b.offset + extent,
                         " bytes, past the end of address-list entry ", b.address, " (", a.size,
                         " bytes)");
        if (Status s = check_strides(cube, where); !s) return s;
        cube.base = a.data + b.offset;
        return cube;
    }

    // resolve() for a cube an operation writes: its address-list entry is marked written.
    Result<Cube> resolve_destination(const BufferDesc& b, const std::string& where) {
        Result<Cube> cube = resolve(b, where);
        if (cube) written_[static_cast<size_t>(b.address)] = true;
        return cube;
    }
    const std::vector<bool>& written() const { return written_; }

  private:
    Status list_entry(int16_t index, const char* what) const {
        if (index < 0 || static_cast<size_t>(index) >= addresses_.size())
            return error("EMU task: the ", what, " index ", index, " is not one of the task's ",
                         addresses_.size(), " address-list entries");
        if (!addresses_[static_cast<size_t>(index)].data)
            return error("EMU task: the ", what, " lies in SRAM, which the CPU cannot reach");
        return Status();
    }
    uint64_t slot_bytes() const {
        return layout_ == CpuTaskLayout::Current ? kCurrentOpSlot : kOriginalOpSlot;
    }

    std::span<const CpuTaskAddress> addresses_;
    std::vector<bool> written_;  // per address-list entry: a destination lies in it
    int16_t op_index_ = -1, buffer_index_ = -1;
    uint16_t num_ops_ = 0;
    CpuTaskLayout layout_ = CpuTaskLayout::Current;
};

// The original's float -> int8: clamp, then truncate toward zero (NaN gives 0).
int8_t saturate_int8(float v) {
    if (std::isnan(v)) return 0;
    return static_cast<int8_t>(std::clamp(v, -128.0f, 127.0f));
}

float read_value(const Cube& cube, const std::byte* p) {
    if (cube.element == Element::Fp16) return fp16::to_float(load<uint16_t>(p));
    return static_cast<float>(load<int8_t>(p));
}

Status check_same_shape(const BufferDesc& src, const BufferDesc& dst, uint16_t op) {
    if (src.format != dst.format)
        return error("EMU operation ", op, ": source and destination formats differ (", src.format,
                     " and ", dst.format, ")");
    if (src.width != dst.width || src.height != dst.height || src.channels != dst.channels)
        return error("EMU operation ", op, ": source and destination shapes differ");
    return Status();
}

// y = (shift + scale * x) ^ power per element; int8 data is scaled in and out.
void run_power(const OpDesc& d, const Cube& src, const Cube& dst) {
    for (uint32_t c = 0; c < src.channels; ++c)
        for (uint32_t h = 0; h < src.height; ++h)
            for (uint32_t w = 0; w < src.width; ++w) {
                const std::byte* in = src.at(c, h, w);
                std::byte* out = dst.at(c, h, w);
                if (src.element == Element::Fp16) {
                    const float y = std::pow(d.shift + d.scale * read_value(src, in), d.power);
                    const uint16_t half = fp16_round_ties_away(y);
                    std::memcpy(out, &half, 2);
                } else {
                    const float x = read_value(src, in) * d.input_scale;
                    const int8_t y =
                        saturate_int8(std::pow(d.shift + d.scale * x, d.power) / d.output_scale);
                    std::memcpy(out, &y, 1);
                }
            }
}

// Softmax over the channels at every position; int8 goes through fp16 as the original does.
void run_softmax(const OpDesc& d, const Cube& src, const Cube& dst) {
    std::vector<float> values(src.channels);
    for (uint32_t h = 0; h < src.height; ++h)
        for (uint32_t w = 0; w < src.width; ++w) {
            for (uint32_t c = 0; c < src.channels; ++c) {
                float v = read_value(src, src.at(c, h, w));
                if (src.element == Element::Int8)
                    v = fp16::to_float(fp16_round_ties_away(v * d.input_scale));
                values[c] = v;
            }
            float largest = -std::numeric_limits<float>::infinity();
            for (float v : values) largest = std::max(largest, v);
            float sum = 0.0f;
            for (float v : values) sum += std::exp(v - largest);
            for (uint32_t c = 0; c < src.channels; ++c) {
                const uint16_t half = fp16_round_ties_away(std::exp(values[c] - largest) / sum);
                std::byte* out = dst.at(c, h, w);
                if (dst.element == Element::Fp16) {
                    std::memcpy(out, &half, 2);
                } else {
                    const int8_t y = saturate_int8(fp16::to_float(half) / d.output_scale);
                    std::memcpy(out, &y, 1);
                }
            }
        }
}

// ---- CPU operations ----

using builder::CpuOpKind;

bool is_binary(CpuOpKind k) {
    return k >= CpuOpKind::Add && k <= CpuOpKind::Pow;
}
bool is_unary(CpuOpKind k) {
    return (k >= CpuOpKind::Exp && k <= CpuOpKind::Relu) || k == CpuOpKind::Mish;
}
bool is_reduce(CpuOpKind k) {
    return k >= CpuOpKind::ReduceSum && k <= CpuOpKind::ReduceMin;
}

uint32_t extent(Dims4 d, int64_t axis) {
    return axis == 1 ? d.c : axis == 2 ? d.h : d.w;
}
uint32_t& extent_of(Dims4& d, int64_t axis) {
    return axis == 1 ? d.c : axis == 2 ? d.h : d.w;
}

std::string dims_text(Dims4 d) {
    return std::to_string(d.c) + "x" + std::to_string(d.h) + "x" + std::to_string(d.w);
}

// A cube's elements as dense floats in CHW order (int8 scaled by `scale`).
std::vector<float> read_dense(const Cube& cube, float scale) {
    std::vector<float> out(uint64_t(cube.channels) * cube.height * cube.width);
    size_t i = 0;
    for (uint32_t c = 0; c < cube.channels; ++c)
        for (uint32_t h = 0; h < cube.height; ++h)
            for (uint32_t w = 0; w < cube.width; ++w) {
                const float v = read_value(cube, cube.at(c, h, w));
                out[i++] = cube.element == Element::Int8 ? v * scale : v;
            }
    return out;
}

// Dense CHW floats into a cube: fp16 rounded to nearest even, int8 divided by `scale`, rounded
// to nearest and saturated (NaN gives 0).
void write_dense(const Cube& cube, float scale, const std::vector<float>& values) {
    size_t i = 0;
    for (uint32_t c = 0; c < cube.channels; ++c)
        for (uint32_t h = 0; h < cube.height; ++h)
            for (uint32_t w = 0; w < cube.width; ++w) {
                const float v = values[i++];
                std::byte* out = cube.at(c, h, w);
                if (cube.element == Element::Fp16) {
                    const uint16_t half = fp16::from_float(v);
                    std::memcpy(out, &half, 2);
                } else {
                    const float q = v / scale;
                    const int8_t y =
                        std::isnan(q)
                            ? int8_t(0)
                            : static_cast<int8_t>(std::clamp(std::round(q), -128.0f, 127.0f));
                    std::memcpy(out, &y, 1);
                }
            }
}

// Index of (c, h, w) in dense CHW data of dims d.
size_t dense_index(Dims4 d, uint32_t c, uint32_t h, uint32_t w) {
    return (size_t(c) * d.h + h) * d.w + w;
}

float unary(CpuOpKind k, float x) {
    switch (k) {
        case CpuOpKind::Exp: return std::exp(x);
        case CpuOpKind::Log: return std::log(x);
        case CpuOpKind::Sqrt: return std::sqrt(x);
        case CpuOpKind::Reciprocal: return 1.0f / x;
        case CpuOpKind::Neg: return -x;
        case CpuOpKind::Abs: return std::fabs(x);
        case CpuOpKind::Erf: return std::erf(x);
        case CpuOpKind::Sigmoid: return 1.0f / (1.0f + std::exp(-x));
        case CpuOpKind::Tanh: return std::tanh(x);
        case CpuOpKind::Relu: return std::max(x, 0.0f);
        case CpuOpKind::Mish:
            return x * std::tanh(std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0f));
        default: return x;
    }
}

float binary(CpuOpKind k, float a, float b) {
    switch (k) {
        case CpuOpKind::Add: return a + b;
        case CpuOpKind::Sub: return a - b;
        case CpuOpKind::Mul: return a * b;
        case CpuOpKind::Div: return a / b;
        case CpuOpKind::Max: return std::max(a, b);
        case CpuOpKind::Min: return std::min(a, b);
        case CpuOpKind::Pow: return std::pow(a, b);
        default: return a;
    }
}

// Computes a CPU operation on dense CHW inputs (dims checked by cpu_op_output_dims).
std::vector<float> compute_cpu_op(CpuOpKind kind, const std::vector<std::vector<float>>& in,
                                  const std::vector<Dims4>& in_dims, Dims4 out_dims,
                                  const CpuParams& p) {
    const Dims4 a = in_dims[0];
    std::vector<float> y(out_dims.elements());
    const std::vector<float>& x = in[0];
    if (is_unary(kind)) {
        for (size_t i = 0; i < y.size(); ++i) y[i] = unary(kind, x[i]);
    } else if (kind == CpuOpKind::PowScalar) {
        for (size_t i = 0; i < y.size(); ++i) y[i] = std::pow(x[i], p.floats[0]);
    } else if (is_binary(kind)) {
        const Dims4 b = in_dims[1];
        for (uint32_t c = 0; c < out_dims.c; ++c)
            for (uint32_t h = 0; h < out_dims.h; ++h)
                for (uint32_t w = 0; w < out_dims.w; ++w) {
                    const float va =
                        x[dense_index(a, a.c == 1 ? 0 : c, a.h == 1 ? 0 : h, a.w == 1 ? 0 : w)];
                    const float vb =
                        in[1][dense_index(b, b.c == 1 ? 0 : c, b.h == 1 ? 0 : h, b.w == 1 ? 0 : w)];
                    y[dense_index(out_dims, c, h, w)] = binary(kind, va, vb);
                }
    } else if (kind == CpuOpKind::Softmax || kind == CpuOpKind::LogSoftmax) {
        // Along the axis: `count` values `stride` apart, for every outer and inner position.
        const uint32_t count = extent(a, p.ints[0]);
        const size_t stride = p.ints[0] == 1 ? size_t(a.h) * a.w : p.ints[0] == 2 ? a.w : 1;
        const size_t outer = a.elements() / (count * stride);
        for (size_t o = 0; o < outer; ++o)
            for (size_t i = 0; i < stride; ++i) {
                const size_t base = o * count * stride + i;
                float largest = -std::numeric_limits<float>::infinity();
                for (uint32_t k = 0; k < count; ++k)
                    largest = std::max(largest, x[base + k * stride]);
                double sum = 0;
                for (uint32_t k = 0; k < count; ++k)
                    sum += std::exp(double(x[base + k * stride]) - largest);
                for (uint32_t k = 0; k < count; ++k) {
                    const double v = double(x[base + k * stride]) - largest;
                    y[base + k * stride] = static_cast<float>(
                        kind == CpuOpKind::Softmax ? std::exp(v) / sum : v - std::log(sum));
                }
            }
    } else if (is_reduce(kind)) {
        std::vector<double> acc(
            y.size(), kind == CpuOpKind::ReduceMax   ? -std::numeric_limits<double>::infinity()
                      : kind == CpuOpKind::ReduceMin ? std::numeric_limits<double>::infinity()
                                                     : 0.0);
        for (uint32_t c = 0; c < a.c; ++c)
            for (uint32_t h = 0; h < a.h; ++h)
                for (uint32_t w = 0; w < a.w; ++w) {
                    double& r = acc[dense_index(out_dims, out_dims.c == 1 ? 0 : c,
                                                out_dims.h == 1 ? 0 : h, out_dims.w == 1 ? 0 : w)];
                    const double v = x[dense_index(a, c, h, w)];
                    if (kind == CpuOpKind::ReduceMax)
                        r = std::max(r, v);
                    else if (kind == CpuOpKind::ReduceMin)
                        r = std::min(r, v);
                    else
                        r += v;
                }
        const double n = double(a.elements()) / double(out_dims.elements());
        for (size_t i = 0; i < y.size(); ++i)
            y[i] = static_cast<float>(kind == CpuOpKind::ReduceMean ? acc[i] / n : acc[i]);
    } else if (kind == CpuOpKind::MatMul) {
        const Dims4 b = in_dims[1];
        for (uint32_t c = 0; c < out_dims.c; ++c)
            for (uint32_t h = 0; h < out_dims.h; ++h)
                for (uint32_t w = 0; w < out_dims.w; ++w) {
                    double sum = 0;
                    for (uint32_t k = 0; k < a.w; ++k)
                        sum += double(x[dense_index(a, c, h, k)]) *
                               in[1][dense_index(b, b.c == 1 ? 0 : c, k, w)];
                    y[dense_index(out_dims, c, h, w)] = static_cast<float>(sum);
                }
    } else if (kind == CpuOpKind::LayerNorm) {
        const size_t inner = p.ints[0] == 1   ? a.elements()
                             : p.ints[0] == 2 ? size_t(a.h) * a.w
                                              : a.w;
        const bool affine = p.floats.size() > 1;
        for (size_t o = 0; o < a.elements() / inner; ++o) {
            double mean = 0, var = 0;
            for (size_t i = 0; i < inner; ++i) mean += x[o * inner + i];
            mean /= double(inner);
            for (size_t i = 0; i < inner; ++i) {
                const double d = x[o * inner + i] - mean;
                var += d * d;
            }
            var /= double(inner);
            const double inv = 1.0 / std::sqrt(var + p.floats[0]);
            for (size_t i = 0; i < inner; ++i) {
                double v = (x[o * inner + i] - mean) * inv;
                if (affine) v = v * p.floats[1 + i] + p.floats[1 + inner + i];
                y[o * inner + i] = static_cast<float>(v);
            }
        }
    } else if (kind == CpuOpKind::Gather) {
        const int64_t axis = p.ints[0];
        for (uint32_t c = 0; c < out_dims.c; ++c)
            for (uint32_t h = 0; h < out_dims.h; ++h)
                for (uint32_t w = 0; w < out_dims.w; ++w) {
                    uint32_t q[4] = {0, c, h, w};
                    q[axis] = static_cast<uint32_t>(p.ints[1 + q[axis]]);
                    y[dense_index(out_dims, c, h, w)] = x[dense_index(a, q[1], q[2], q[3])];
                }
    } else if (kind == CpuOpKind::Transpose) {
        for (uint32_t c = 0; c < out_dims.c; ++c)
            for (uint32_t h = 0; h < out_dims.h; ++h)
                for (uint32_t w = 0; w < out_dims.w; ++w) {
                    const uint32_t o[4] = {0, c, h, w};
                    uint32_t q[4] = {0, 0, 0, 0};
                    for (int i = 1; i <= 3; ++i) q[p.ints[size_t(i - 1)]] = o[i];
                    y[dense_index(out_dims, c, h, w)] = x[dense_index(a, q[1], q[2], q[3])];
                }
    } else if (kind == CpuOpKind::Reshape) {
        y = x;
    }
    return y;
}

Status run_cpu_op(CpuTask& task, uint16_t op, const OpDesc& d, bool marked,
                  const std::string& where) {
    const auto kind = static_cast<CpuOpKind>(d.type - kCpuOpTypeBase);
    const std::string name = where + " (CPU " + cpu_op_name(kind) + ")";
    if (task.layout() != CpuTaskLayout::Current)
        return error(name, ": CPU operations need the current descriptor layout");
    if (!marked)
        return error(name,
                     ": the task does not start with the CPU-task marker "
                     "operation that keeps the original runtime from running it");
    if (d.inputs != 1 && d.inputs != 2)
        return error(name, ": it names ", unsigned(d.inputs), " inputs (1 or 2 are possible)");
    Result<CpuParams> params = task.parameters(op, d, name);
    if (!params) return params.status();
    std::vector<BufferDesc> descs = {task.buffer(op, false)};
    if (d.inputs == 2) descs.push_back(task.second_source(op));
    const BufferDesc dst_desc = task.buffer(op, true);
    std::vector<Cube> inputs;
    std::vector<Dims4> in_dims;
    for (size_t k = 0; k < descs.size(); ++k) {
        Result<Cube> cube = task.resolve(descs[k], name + " input " + std::to_string(k));
        if (!cube) return cube.status();
        inputs.push_back(*cube);
        in_dims.push_back({1, descs[k].channels, descs[k].height, descs[k].width});
    }
    Result<Cube> dst = task.resolve_destination(dst_desc, name + " destination");
    if (!dst) return dst.status();
    const Dims4 dst_dims{1, dst_desc.channels, dst_desc.height, dst_desc.width};
    Result<Dims4> out =
        cpu_op_output_dims(kind, in_dims, params->ints, params->floats.size(), dst_dims);
    if (!out) return out.status().context(name);
    if (*out != dst_dims)
        return error(name, ": the destination is ", dims_text(dst_dims), ", the operation gives ",
                     dims_text(*out));
    const float scales[2] = {d.input_scale, d.second_input_scale};
    std::vector<std::vector<float>> values;
    for (size_t k = 0; k < inputs.size(); ++k) values.push_back(read_dense(inputs[k], scales[k]));
    write_dense(*dst, d.output_scale, compute_cpu_op(kind, values, in_dims, *out, *params));
    return Status();
}

}  // namespace

const char* cpu_op_name(builder::CpuOpKind kind) {
    static const char* const names[kCpuOpKindCount] = {
        "softmax",    "log softmax", "exp",        "log",         "sqrt",       "reciprocal",
        "neg",        "abs",         "erf",        "sigmoid",     "tanh",       "relu",
        "pow scalar", "add",         "sub",        "mul",         "div",        "max",
        "min",        "pow",         "reduce sum", "reduce mean", "reduce max", "reduce min",
        "matmul",     "layer norm",  "gather",     "transpose",   "reshape",    "mish"};
    const auto k = static_cast<size_t>(kind);
    return k < kCpuOpKindCount ? names[k] : "unknown";
}

Result<Dims4> cpu_op_output_dims(builder::CpuOpKind kind, std::span<const Dims4> inputs,
                                 std::span<const int64_t> ints, size_t float_count,
                                 Dims4 reshape_dims) {
    if (static_cast<size_t>(kind) >= kCpuOpKindCount)
        return error("CPU operation kind ", static_cast<int>(kind), " is not known");
    const size_t wanted = is_binary(kind) || kind == CpuOpKind::MatMul ? 2 : 1;
    if (inputs.size() != wanted)
        return error(inputs.size(), " inputs given, ", cpu_op_name(kind), " takes ", wanted);
    for (size_t k = 0; k < inputs.size(); ++k)
        if (inputs[k].n != 1 || inputs[k].elements() == 0)
            return error("input ", k, " is ", inputs[k].n, "x", dims_text(inputs[k]),
                         "; n must be 1 and every extent at least 1");
    const Dims4 a = inputs[0];
    auto axis_ok = [](int64_t axis) { return axis >= 1 && axis <= 3; };
    auto no_params = [&](size_t want_ints, size_t want_floats) -> Status {
        if (ints.size() != want_ints || float_count != want_floats)
            return error(ints.size(), " int and ", float_count, " float parameters given, ",
                         cpu_op_name(kind), " takes ", want_ints, " and ", want_floats);
        return Status();
    };
    switch (kind) {
        case CpuOpKind::Softmax:
        case CpuOpKind::LogSoftmax:
            if (Status s = no_params(1, 0); !s) return s;
            if (!axis_ok(ints[0])) return error("axis ", ints[0], " is not 1 (c), 2 (h) or 3 (w)");
            return a;
        case CpuOpKind::PowScalar:
            if (Status s = no_params(0, 1); !s) return s;
            return a;
        case CpuOpKind::Add:
        case CpuOpKind::Sub:
        case CpuOpKind::Mul:
        case CpuOpKind::Div:
        case CpuOpKind::Max:
        case CpuOpKind::Min:
        case CpuOpKind::Pow: {
            if (Status s = no_params(0, 0); !s) return s;
            const Dims4 b = inputs[1];
            Dims4 out = a;
            for (int64_t axis = 1; axis <= 3; ++axis) {
                const uint32_t x = extent(a, axis), y = extent(b, axis);
                if (x != y && x != 1 && y != 1)
                    return error("the inputs are ", dims_text(a), " and ", dims_text(b),
                                 "; each extent must agree or be 1 in one of them");
                extent_of(out, axis) = std::max(x, y);
            }
            return out;
        }
        case CpuOpKind::ReduceSum:
        case CpuOpKind::ReduceMean:
        case CpuOpKind::ReduceMax:
        case CpuOpKind::ReduceMin: {
            if (ints.empty() || ints.size() > 3 || float_count != 0)
                return error(ints.size(), " axes and ", float_count, " float parameters given; ",
                             cpu_op_name(kind), " takes 1 to 3 axes");
            Dims4 out = a;
            bool seen[4] = {};
            for (int64_t axis : ints) {
                if (!axis_ok(axis)) return error("axis ", axis, " is not 1 (c), 2 (h) or 3 (w)");
                if (seen[axis]) return error("axis ", axis, " is given twice");
                seen[axis] = true;
                extent_of(out, axis) = 1;
            }
            return out;
        }
        case CpuOpKind::MatMul: {
            if (Status s = no_params(0, 0); !s) return s;
            const Dims4 b = inputs[1];
            if (a.w != b.h || (b.c != a.c && b.c != 1))
                return error("the inputs are ", dims_text(a), " and ", dims_text(b), "; ",
                             "a {C, H, K} times b {C or 1, K, W} is possible");
            return Dims4{1, a.c, a.h, b.w};
        }
        case CpuOpKind::LayerNorm: {
            if (ints.size() != 1)
                return error(ints.size(), " int parameters given, layer norm takes the axis");
            if (!axis_ok(ints[0])) return error("axis ", ints[0], " is not 1 (c), 2 (h) or 3 (w)");
            const uint64_t inner = ints[0] == 1   ? a.elements()
                                   : ints[0] == 2 ? uint64_t(a.h) * a.w
                                                  : a.w;
            if (float_count != 1 && float_count != 1 + 2 * inner)
                return error(float_count, " float parameters given; layer norm over ", inner,
                             " values takes epsilon, then ", inner, " gamma and ", inner,
                             " beta values or none");
            return a;
        }
        case CpuOpKind::Gather: {
            if (ints.size() < 2 || float_count != 0)
                return error(ints.size(),
                             " int parameters given; gather takes the axis and at "
                             "least one index");
            if (!axis_ok(ints[0])) return error("axis ", ints[0], " is not 1 (c), 2 (h) or 3 (w)");
            if (ints.size() - 1 > 0xffffffffu) return error("too many indices");
            const uint32_t n = extent(a, ints[0]);
            for (size_t k = 1; k < ints.size(); ++k)
                if (ints[k] < 0 || ints[k] >= n)
                    return error("index ", ints[k], " is outside the ", n, " entries of axis ",
                                 ints[0]);
            Dims4 out = a;
            extent_of(out, ints[0]) = static_cast<uint32_t>(ints.size() - 1);
            return out;
        }
        case CpuOpKind::Transpose: {
            if (Status s = no_params(3, 0); !s) return s;
            bool seen[4] = {};
            for (int64_t axis : ints) {
                if (!axis_ok(axis) || seen[axis])
                    return error("axes ", ints[0], ", ", ints[1], ", ", ints[2],
                                 " are not an order of 1, 2 and 3");
                seen[axis] = true;
            }
            return Dims4{1, extent(a, ints[0]), extent(a, ints[1]), extent(a, ints[2])};
        }
        case CpuOpKind::Reshape:
            if (Status s = no_params(0, 0); !s) return s;
            if (reshape_dims.n != 1 || reshape_dims.elements() != a.elements())
                return error("the new dims ", reshape_dims.n, "x", dims_text(reshape_dims),
                             " do not hold the ", a.elements(), " elements of ", dims_text(a));
            return reshape_dims;
        default:
            if (Status s = no_params(0, 0); !s) return s;  // unary
            return a;
    }
}

Result<CpuTaskInfo> inspect_cpu_task(std::span<const CpuTaskAddress> addresses) {
    CpuTask task(addresses);
    if (Status s = task.decode(); !s) return s;
    CpuTaskInfo info;
    info.layout = task.layout();
    for (uint16_t i = 0; i < task.num_operations(); ++i) {
        const OpDesc d = task.operation(i);
        const BufferDesc src = task.buffer(i, false), dst = task.buffer(i, true);
        CpuTaskOperationInfo op;
        op.type = d.type;
        op.source_address = src.address;
        op.destination_address = dst.address;
        op.input_scale = d.input_scale;
        op.output_scale = d.output_scale;
        op.int8 = src.format == 0 || (task.layout() == CpuTaskLayout::Current && src.format == 1);
        info.operations.push_back(op);
    }
    return info;
}

namespace {

Status run_operations(CpuTask& task, std::vector<CpuTaskOperationTime>* times) {
    if (Status s = task.decode(); !s) return s;
    const bool marked = task.has_cpu_marker();
    for (uint16_t i = marked ? 1 : 0; i < task.num_operations(); ++i) {
        const Clock::time_point start = Clock::now();
        const OpDesc d = task.operation(i);
        const std::string where = "EMU operation " + std::to_string(i);
        if (d.type >= kCpuOpTypeBase && d.type < kCpuOpTypeBase + kCpuOpKindCount) {
            if (Status s = run_cpu_op(task, i, d, marked, where); !s) return s;
            if (times)
                times->push_back({std::string("CPU ") + cpu_op_name(static_cast<builder::CpuOpKind>(
                                                            d.type - kCpuOpTypeBase)),
                                  Clock::now() - start});
            continue;
        }
        if (d.type != kOpPower && d.type != kOpSoftmax)
            return error(where, ": type ", unsigned(d.type),
                         " is neither power (0), softmax (1) nor a CPU operation (",
                         unsigned(kCpuOpTypeBase), " to ", kCpuOpTypeBase + kCpuOpKindCount - 1,
                         ")");
        const BufferDesc src_desc = task.buffer(i, false), dst_desc = task.buffer(i, true);
        if (Status s = check_same_shape(src_desc, dst_desc, i); !s) return s;
        Result<Cube> src = task.resolve(src_desc, where + " source");
        if (!src) return src.status();
        Result<Cube> dst = task.resolve_destination(dst_desc, where + " destination");
        if (!dst) return dst.status();
        // Softmax runs over the channels whatever `axis` says, as in the original.
        if (d.type == kOpPower)
            run_power(d, *src, *dst);
        else
            run_softmax(d, *src, *dst);
        if (times)
            times->push_back({d.type == kOpPower ? "power" : "softmax", Clock::now() - start});
    }
    return Status();
}

}  // namespace

Status run_cpu_task(std::span<const CpuTaskAddress> addresses,
                    std::vector<CpuTaskOperationTime>* times, std::vector<bool>* written) {
    CpuTask task(addresses);
    Status s = run_operations(task, times);
    if (written) *written = task.written();
    return s;
}

}  // namespace nvdla::runtime
