#include "emu_ops.hpp"

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

struct OpDesc {
    uint8_t type = 0;
    float input_scale = 1.0f, output_scale = 1.0f;
    float power = 1.0f, scale = 1.0f, shift = 0.0f;
    uint8_t axis = 0;
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

std::string format_name(EmuLayout layout, uint16_t format) {
    static const char* const original[] = {"INT8", "INT16", "FF16"};
    static const char* const current[] = {"INT8", "INT8_8", "INT16", "FF16", "UINT8", "UINT16"};
    if (layout == EmuLayout::Original && format < 3) return original[format];
    if (layout == EmuLayout::Current && format < 6) return current[format];
    return "unknown format " + std::to_string(format);
}

class EmuTask {
  public:
    explicit EmuTask(std::span<const EmuAddress> addresses) : addresses_(addresses) {}

    Status decode() {
        if (addresses_.empty()) return Status::failure("EMU task: its address list is empty");
        const EmuAddress& head = addresses_[0];
        if (!head.data || head.size < kNetworkDescBytes)
            return Status::failure("EMU task: address-list entry 0 holds " +
                                   std::to_string(head.size) +
                                   " bytes, too few for the network descriptor");
        op_index_ = load<int16_t>(head.data);
        buffer_index_ = load<int16_t>(head.data + 2);
        num_ops_ = load<uint16_t>(head.data + 4);
        if (num_ops_ == 0) return Status();
        Status s;
        if (!(s = list_entry(op_index_, "operation list"))) return s;
        if (!(s = list_entry(buffer_index_, "buffer-descriptor list"))) return s;
        const EmuAddress& ops = addresses_[static_cast<size_t>(op_index_)];
        const uint64_t declared = ops.declared ? std::min(ops.declared, ops.size) : ops.size;
        if (declared == kOriginalOpSlot * num_ops_) {
            layout_ = EmuLayout::Original;
        } else if (declared == kCurrentOpSlot * num_ops_) {
            layout_ = EmuLayout::Current;
        } else {
            return Status::failure(
                "EMU task: cannot tell the descriptor layout: the operation "
                "list is " +
                std::to_string(declared) + " bytes for " + std::to_string(num_ops_) +
                " operations (16 or 24 bytes each expected)");
        }
        const EmuAddress& buffers = addresses_[static_cast<size_t>(buffer_index_)];
        if (buffers.size < kBufferPairBytes * num_ops_)
            return Status::failure("EMU task: the buffer-descriptor list holds " +
                                   std::to_string(buffers.size) + " bytes, too few for " +
                                   std::to_string(num_ops_) + " operations (" +
                                   std::to_string(kBufferPairBytes) + " bytes each)");
        return Status();
    }

    uint16_t num_operations() const { return num_ops_; }
    EmuLayout layout() const { return layout_; }

    OpDesc operation(uint16_t i) const {
        const std::byte* p = addresses_[static_cast<size_t>(op_index_)].data + i * slot_bytes();
        OpDesc d;
        d.type = load<uint8_t>(p);
        if (layout_ == EmuLayout::Current) {
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
        } else {
            d.axis = load<uint8_t>(p);
        }
        return d;
    }

    BufferDesc buffer(uint16_t op, bool destination) const {
        const std::byte* p = addresses_[static_cast<size_t>(buffer_index_)].data +
                             op * kBufferPairBytes + (destination ? kBufferDescBytes : 0);
        BufferDesc b;
        b.address = load<int16_t>(p);
        if (layout_ == EmuLayout::Current) {
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

    // The element layout of a format, or an error naming it.
    Result<Cube> resolve(const BufferDesc& b, const std::string& where) const {
        Cube cube;
        const uint16_t int8 = 0;
        const uint16_t int8_x8 = layout_ == EmuLayout::Current ? 1 : 0xffff;
        const uint16_t fp16 = layout_ == EmuLayout::Current ? 3 : 2;
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
            return Status::failure(where + ": " + format_name(layout_, b.format) +
                                   " data is not supported (int8 and fp16 are)");
        }
        if (b.address < 0 || static_cast<size_t>(b.address) >= addresses_.size())
            return Status::failure(where + ": address index " + std::to_string(b.address) +
                                   " is not one of the task's " +
                                   std::to_string(addresses_.size()) + " address-list entries");
        const EmuAddress& a = addresses_[static_cast<size_t>(b.address)];
        if (!a.data)
            return Status::failure(where + ": address-list entry " + std::to_string(b.address) +
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
            return Status::failure(
                where + ": " + std::to_string(b.width) + "x" + std::to_string(b.height) + "x" +
                std::to_string(b.channels) + " elements at offset " + std::to_string(b.offset) +
                " reach " + std::to_string(b.offset + extent) +
                " bytes, past the end of address-list entry " + std::to_string(b.address) + " (" +
                std::to_string(a.size) + " bytes)");
        cube.base = a.data + b.offset;
        return cube;
    }

  private:
    Status list_entry(int16_t index, const char* what) const {
        if (index < 0 || static_cast<size_t>(index) >= addresses_.size())
            return Status::failure("EMU task: the " + std::string(what) + " index " +
                                   std::to_string(index) + " is not one of the task's " +
                                   std::to_string(addresses_.size()) + " address-list entries");
        if (!addresses_[static_cast<size_t>(index)].data)
            return Status::failure("EMU task: the " + std::string(what) +
                                   " lies in SRAM, which the CPU cannot reach");
        return Status();
    }
    uint64_t slot_bytes() const {
        return layout_ == EmuLayout::Current ? kCurrentOpSlot : kOriginalOpSlot;
    }

    std::span<const EmuAddress> addresses_;
    int16_t op_index_ = -1, buffer_index_ = -1;
    uint16_t num_ops_ = 0;
    EmuLayout layout_ = EmuLayout::Current;
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
        return Status::failure(
            "EMU operation " + std::to_string(op) + ": source and destination formats differ (" +
            std::to_string(src.format) + " and " + std::to_string(dst.format) + ")");
    if (src.width != dst.width || src.height != dst.height || src.channels != dst.channels)
        return Status::failure("EMU operation " + std::to_string(op) +
                               ": source and destination shapes differ");
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

}  // namespace

Result<EmuTaskInfo> inspect_emu_task(std::span<const EmuAddress> addresses) {
    EmuTask task(addresses);
    if (Status s = task.decode(); !s) return s;
    EmuTaskInfo info;
    info.layout = task.layout();
    for (uint16_t i = 0; i < task.num_operations(); ++i) {
        const OpDesc d = task.operation(i);
        const BufferDesc src = task.buffer(i, false), dst = task.buffer(i, true);
        EmuOperationInfo op;
        op.type = d.type;
        op.source_address = src.address;
        op.destination_address = dst.address;
        op.input_scale = d.input_scale;
        op.output_scale = d.output_scale;
        op.int8 = src.format == 0 || (task.layout() == EmuLayout::Current && src.format == 1);
        info.operations.push_back(op);
    }
    return info;
}

Status run_emu_task(std::span<const EmuAddress> addresses, std::vector<EmuOperationTime>* times) {
    EmuTask task(addresses);
    if (Status s = task.decode(); !s) return s;
    for (uint16_t i = 0; i < task.num_operations(); ++i) {
        const Clock::time_point start = Clock::now();
        const OpDesc d = task.operation(i);
        const std::string where = "EMU operation " + std::to_string(i);
        if (d.type != kOpPower && d.type != kOpSoftmax)
            return Status::failure(where + ": type " + std::to_string(d.type) +
                                   " is neither power (0) nor softmax (1)");
        const BufferDesc src_desc = task.buffer(i, false), dst_desc = task.buffer(i, true);
        if (Status s = check_same_shape(src_desc, dst_desc, i); !s) return s;
        Result<Cube> src = task.resolve(src_desc, where + " source");
        if (!src) return src.status();
        Result<Cube> dst = task.resolve(dst_desc, where + " destination");
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

}  // namespace nvdla::runtime
