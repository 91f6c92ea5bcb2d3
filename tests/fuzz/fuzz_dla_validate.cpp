// libFuzzer target: the DLA task validator (nvdla_dla_task_validate, include/nvdla/hw/
// dla_engine.h), the code the kernel runs on every submitted job before the hardware sees it.
// Input: dla_task_input.hpp. The validator must accept or reject every input without reading
// outside the entries it is given; when it accepts, the checked task must say what it read, and
// every range the task's operations would read or write must lie inside the task's buffers:
// check_extents() recomputes those ranges from the descriptors on its own (a second, plain
// implementation of the hardware's DMA footprints, not the validator's code).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "dla_task_input.hpp"
#include "nvdla/hw/dla_engine.h"
#include "nvdla/hw_config.hpp"
#include "runtime/dla_validator.hpp"

namespace {

using nvdla::fuzz::DlaTaskInput;

[[noreturn]] void fail(const char* message) {
    std::fprintf(stderr, "fuzz_dla_validate: %s\n", message);
    std::abort();
}

// The validator promises to read only inside [0, size) of an entry; bytes the input does not
// store are zeros.
int read_entry(void* priv, uint32_t index, uint64_t offset, void* dst, uint32_t size) {
    const auto* task = static_cast<const DlaTaskInput*>(priv);
    if (index >= task->entries.size()) fail("read of an entry that does not exist");
    const auto& e = task->entries[index];
    if (offset > e.size || size > e.size - offset) fail("read outside an entry");
    auto* out = static_cast<std::byte*>(dst);
    for (uint32_t i = 0; i < size; ++i) {
        const uint64_t at = offset + i;
        out[i] = at < e.bytes.size() ? e.bytes[at] : std::byte{0};
    }
    return 0;
}

// ---- The extents, recomputed from the descriptors in the input ----

// The bytes of entry `index` at `offset` (zeros past what the input stores).
template <class T>
T read_struct(const DlaTaskInput& task, uint32_t index, uint64_t offset, uint32_t size) {
    T out{};
    auto* p = reinterpret_cast<std::byte*>(&out);
    const auto& bytes = task.entries[index].bytes;
    for (uint32_t i = 0; i < size && i < sizeof(T); ++i)
        p[i] = offset + i < bytes.size() ? bytes[offset + i] : std::byte{0};
    return out;
}

// A surface descriptor in the 0.12 layout: 0.10 and 0.11 cubes have no offset (it reads 0).
nvdla_dla_surface_container read_surface(const DlaTaskInput& task, uint32_t version, uint32_t index,
                                         uint64_t offset, unsigned type) {
    const unsigned size = nvdla_dla_surface_size(type, version);
    if (nvdla_dla_version_has_cube_offset(version))
        return read_struct<nvdla_dla_surface_container>(task, index, offset, size);
    const auto old =
        read_struct<std::array<std::byte, NVDLA_DLA_SURFACE_SLOT_SIZE>>(task, index, offset, size);
    std::array<std::byte, NVDLA_DLA_SURFACE_SLOT_SIZE> wide{};
    const unsigned cubes = nvdla_dla_surface_cubes(type);
    for (unsigned k = 0; k < cubes; ++k) {
        const std::byte* from = old.data() + k * NVDLA_DLA_DATA_CUBE_V10_SIZE;
        std::byte* to = wide.data() + k * NVDLA_DLA_DATA_CUBE_SIZE;
        std::memcpy(to, from, 4);  // type, address; the offset stays 0
        std::memcpy(to + 8, from + 4, NVDLA_DLA_DATA_CUBE_V10_SIZE - 4);
    }
    std::memcpy(wide.data() + cubes * NVDLA_DLA_DATA_CUBE_SIZE,
                old.data() + cubes * NVDLA_DLA_DATA_CUBE_V10_SIZE,
                size - cubes * NVDLA_DLA_DATA_CUBE_V10_SIZE);
    nvdla_dla_surface_container out;
    std::memcpy(&out, wide.data(), sizeof(out));
    return out;
}

uint64_t element_bytes(unsigned precision) {
    return precision == NVDLA_DLA_PRECISION_INT8 ? 1 : 2;
}
uint64_t div_up(uint64_t a, uint64_t b) {
    return (a + b - 1) / b;
}
// The bytes `count` items after the first take at `stride` apart (0 for one or none).
uint64_t repeats(uint64_t count, uint64_t stride) {
    return count > 1 ? (count - 1) * stride : 0;
}

struct ExtentCheck {
    std::span<const nvdla_dla_buffer> buffers;
    uint32_t op = 0;

    // [address of entry `index` + offset, + bytes) must lie inside that buffer.
    void range(const char* what, int32_t index, uint64_t offset, uint64_t bytes) const {
        char why[160];
        if (index < 0 || static_cast<size_t>(index) >= buffers.size()) {
            std::snprintf(why, sizeof why, "operation %u %s: accepted with entry %d of %zu", op,
                          what, index, buffers.size());
            fail(why);
        }
        const nvdla_dla_buffer& b = buffers[static_cast<size_t>(index)];
        if (offset > b.size || bytes > b.size - offset) {
            std::snprintf(why, sizeof why,
                          "operation %u %s: accepted %llu bytes at offset %llu of a %llu-byte "
                          "buffer",
                          op, what, static_cast<unsigned long long>(bytes),
                          static_cast<unsigned long long>(offset),
                          static_cast<unsigned long long>(b.size));
            fail(why);
        }
    }
    // `surfaces` surfaces of `lines` lines of `line` bytes, at the cube's strides, plus `extra`.
    void strided(const char* what, const nvdla_dla_data_cube& c, uint64_t surfaces, uint64_t lines,
                 uint64_t line, uint64_t extra = 0) const {
        if (c.type == NVDLA_DLA_MEM_HW || surfaces == 0 || lines == 0) return;
        range(what, c.address, c.offset,
              repeats(surfaces, c.surf_stride) + repeats(lines, c.line_stride) + line + extra);
    }
    // A feature cube: channels in atoms of `atom` bytes.
    void feature(const char* what, const nvdla_dla_data_cube& c, unsigned precision, uint32_t atom,
                 uint64_t extra = 0) const {
        strided(what, c, div_up(c.channel, atom / element_bytes(precision)), c.height,
                uint64_t(c.width) * atom, extra);
    }
    // Rubik's planar side: one plane per channel.
    void planes(const char* what, const nvdla_dla_data_cube& c, uint64_t line) const {
        if (c.channel == 0 || c.height == 0) return;
        range(what, c.address, c.offset,
              repeats(c.channel, c.plane_stride) + repeats(c.height, c.line_stride) + line);
    }
};

void check_bdma(const ExtentCheck& x, const nvdla_dla_bdma_surface_desc& s) {
    for (unsigned k = 0; k < s.num_transfers && k < NVDLA_DLA_BDMA_MAX_TRANSFERS; ++k) {
        const nvdla_dla_bdma_transfer& t = s.transfers[k];
        x.range("BDMA source", t.source_address, 0,
                repeats(t.surface_repeat, t.source_surface) +
                    repeats(t.line_repeat, t.source_line) + t.line_size);
        x.range("BDMA destination", t.destination_address, 0,
                repeats(t.surface_repeat, t.destination_surface) +
                    repeats(t.line_repeat, t.destination_line) + t.line_size);
    }
}

void check_conv(const ExtentCheck& x, const nvdla::HwConfig& cfg, const nvdla_dla_conv_op_desc& op,
                const nvdla_dla_conv_surface_desc& s) {
    const nvdla_dla_data_cube& in = s.src_data;
    if (op.data_format == NVDLA_DLA_FORMAT_FEATURE) {
        x.feature("CONV input", in, op.in_precision, cfg.atom_bytes,
                  repeats(op.batch, op.batch_stride));
    } else {
        // An image: at least one byte per pixel on the first plane.
        x.strided("CONV image", in, 1, in.height, in.width);
    }
    x.range("CONV weights", s.weight_data.address, s.weight_data.offset, s.weight_data.size);
    if (op.weight_format == NVDLA_DLA_WEIGHT_COMPRESSED) {
        x.range("CONV weight mask", s.wmb_data.address, s.wmb_data.offset, s.wmb_data.size);
        x.range("CONV weight group sizes", s.wgs_data.address, s.wgs_data.offset, 4);
    }
}

// SDP's processing precision: fp16 in fp16, int16 unless it converts to int8, else int8.
unsigned sdp_processing(const nvdla_dla_sdp_op_desc& op) {
    if (op.src_precision == NVDLA_DLA_PRECISION_FP16) return NVDLA_DLA_PRECISION_FP16;
    if (op.src_precision == NVDLA_DLA_PRECISION_INT16 &&
        op.dst_precision != NVDLA_DLA_PRECISION_INT8)
        return NVDLA_DLA_PRECISION_INT16;
    return NVDLA_DLA_PRECISION_INT8;
}

void check_sdp(const ExtentCheck& x, const nvdla::HwConfig& cfg, const nvdla_dla_sdp_op_desc& op,
               const nvdla_dla_sdp_surface_desc& s) {
    const nvdla_dla_data_cube& in = s.src_data;
    const uint32_t atom = cfg.atom_bytes;
    x.feature("SDP input", in, op.src_precision, atom);
    if (s.dst_data.type != NVDLA_DLA_MEM_HW) {
        // The output has the input's width and height, in the output cube's strides.
        nvdla_dla_data_cube out = s.dst_data;
        out.width = in.width;
        out.height = in.height;
        out.channel = in.channel;
        x.feature("SDP output", out, op.dst_precision, atom,
                  repeats(op.batch_num, op.batch_stride));
    }
    const uint64_t group = atom / element_bytes(sdp_processing(op));
    const struct {
        const char* name;
        const nvdla_dla_sdp_op& stage;
        const nvdla_dla_data_cube& data;
    } stages[] = {{"SDP x1 operand", op.x1_op, s.x1_data},
                  {"SDP x2 operand", op.x2_op, s.x2_data},
                  {"SDP y operand", op.y_op, s.y_data}};
    for (const auto& st : stages) {
        if (!st.stage.enable || st.stage.type == NVDLA_DLA_SDP_OP_NONE ||
            st.stage.mode == NVDLA_DLA_SDP_PER_LAYER)
            continue;
        const uint64_t value =
            element_bytes(st.stage.precision) * (st.stage.type == NVDLA_DLA_SDP_OP_BOTH ? 2 : 1);
        if (st.stage.mode == NVDLA_DLA_SDP_PER_KERNEL)
            x.range(st.name, st.data.address, st.data.offset, in.channel * value);
        else
            x.strided(st.name, st.data, div_up(in.channel, group), in.height,
                      in.width * group * value);
    }
}

void check_rubik(const ExtentCheck& x, const nvdla_dla_rubik_op_desc& op,
                 const nvdla_dla_rubik_surface_desc& s) {
    constexpr uint32_t kAtom = 32;  // Rubik moves 32-byte atoms on every configuration
    const uint64_t bpe = element_bytes(op.precision);
    const nvdla_dla_data_cube &in = s.src_data, &out = s.dst_data;
    if (op.mode == NVDLA_DLA_RUBIK_CONTRACT) {
        // stride_x * stride_y kernel positions, each a whole output-channel cube apart.
        const uint64_t surfaces = div_up(out.channel, kAtom / bpe);
        const uint64_t kernels = std::max<uint64_t>(uint64_t(op.stride_x) * op.stride_y, 1);
        x.strided("RUBIK input", in, kernels * surfaces, in.height, uint64_t(in.width) * kAtom);
        x.feature("RUBIK output", out, op.precision, kAtom);
    } else if (op.mode == NVDLA_DLA_RUBIK_SPLIT) {
        x.feature("RUBIK input", in, op.precision, kAtom);
        x.planes("RUBIK output", out, out.width * bpe);
    } else {
        x.planes("RUBIK input", in, in.width * bpe);
        x.feature("RUBIK output", out, op.precision, kAtom);
    }
}

void check_extents(const DlaTaskInput& task, uint32_t version, const nvdla::HwConfig& cfg,
                   std::span<const nvdla_dla_buffer> buffers) {
    const auto net =
        read_struct<nvdla_dla_network_desc>(task, 0, 0, sizeof(nvdla_dla_network_desc));
    ExtentCheck x{buffers};
    for (uint32_t i = 0; i < net.num_operations; ++i) {
        x.op = i;
        const auto common = read_struct<nvdla_dla_common_op_desc>(
            task, uint32_t(net.dependency_graph_index), uint64_t(i) * NVDLA_DLA_COMMON_OP_DESC_SIZE,
            NVDLA_DLA_COMMON_OP_DESC_SIZE);
        const auto op = read_struct<nvdla_dla_operation_container>(
            task, uint32_t(net.operation_desc_index), uint64_t(i) * NVDLA_DLA_OP_SLOT_SIZE,
            NVDLA_DLA_OP_SLOT_SIZE);
        const nvdla_dla_surface_container surface =
            read_surface(task, version, uint32_t(net.surface_desc_index),
                         uint64_t(i) * NVDLA_DLA_SURFACE_SLOT_SIZE, common.op_type);
        switch (common.op_type) {
            case NVDLA_DLA_OP_BDMA: check_bdma(x, surface.bdma_surface); break;
            case NVDLA_DLA_OP_CONV: check_conv(x, cfg, op.conv_op, surface.conv_surface); break;
            case NVDLA_DLA_OP_SDP: check_sdp(x, cfg, op.sdp_op, surface.sdp_surface); break;
            case NVDLA_DLA_OP_PDP:
                x.feature("PDP input", surface.pdp_surface.src_data, op.pdp_op.precision,
                          cfg.atom_bytes);
                x.feature("PDP output", surface.pdp_surface.dst_data, op.pdp_op.precision,
                          cfg.atom_bytes);
                break;
            case NVDLA_DLA_OP_CDP:
                x.feature("CDP input", surface.cdp_surface.src_data, op.cdp_op.in_precision,
                          cfg.atom_bytes);
                x.feature("CDP output", surface.cdp_surface.dst_data, op.cdp_op.out_precision,
                          cfg.atom_bytes);
                break;
            case NVDLA_DLA_OP_RUBIK: check_rubik(x, op.rubik_op, surface.rubik_surface); break;
            default: fail("an accepted operation has no processor type");
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    DlaTaskInput task;
    if (!nvdla::fuzz::parse_dla_task_input({data, size}, &task)) return 0;
    const auto configs = nvdla::hw_configs();
    const nvdla::HwConfig& cfg = configs[task.config % configs.size()];

    std::vector<nvdla_dla_buffer> buffers(task.entries.size());
    for (size_t i = 0; i < task.entries.size(); ++i) {
        const auto& e = task.entries[i];
        buffers[i].address =
            nvdla::fuzz::kEntryBase + i * nvdla::fuzz::kEntrySpacing + e.offset_steps * 32ull;
        buffers[i].size = e.size;
        buffers[i].flags = e.secondary ? NVDLA_DLA_BUFFER_SECONDARY : 0;
    }
    nvdla_dla_task_source src{};
    src.version = NVDLA_DLA_VERSION(0, task.minor, task.sub);
    src.num_addresses = static_cast<uint32_t>(buffers.size());
    src.addresses = buffers.data();
    src.read = read_entry;
    src.priv = &task;

    const nvdla::runtime::DlaValidation v = nvdla::runtime::run_dla_validator(cfg, src);
    // The checked copy is bounded by the task's limits (operations, LUTs, addresses).
    if (v.bytes > (64u << 20)) fail("measure asks for more than 64 MiB");
    if (!v.accepted()) {
        if (v.task != nullptr) fail("a rejected task was returned");
        if (v.error.message[0] == '\0') fail("the validator rejected without a sentence");
        return 0;
    }
    const nvdla_dla_task* checked = v.task;
    if (checked == nullptr) fail("an accepted task is NULL");
    if (nvdla_dla_task_version(checked) != src.version) fail("the task's version changed");
    if (nvdla_dla_task_num_operations(checked) > NVDLA_DLA_MAX_OPERATIONS)
        fail("more operations than the limit");
    check_extents(task, src.version, cfg, buffers);
    return 0;
}
