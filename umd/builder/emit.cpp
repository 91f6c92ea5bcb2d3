// Emission: memory planning (activation buffers reuse freed space), DLA tasks (operation,
// surface, dependency and LUT lists, interface 0.12), CPU tasks, and the loadable itself.
#include "builder/emit.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "runtime/cpu_tasks.hpp"
#include "runtime/loadable.hpp"

namespace nvdla::builder::detail {

namespace {

using runtime::BlobVersion;
using runtime::Loadable;

constexpr BlobVersion kDlaVersion{0, 12, 3};
constexpr BlobVersion kOriginalCpuTaskVersion{0, 0, 1};
constexpr BlobVersion kCpuTaskVersion{runtime::kCpuTaskVersion[0], runtime::kCpuTaskVersion[1],
                                      runtime::kCpuTaskVersion[2]};
constexpr uint64_t kPoolAlignment = 256;

template <class T>
void put(std::vector<std::byte>& out, size_t offset, T value) {
    std::memcpy(out.data() + offset, &value, sizeof value);
}

// Every memory cube of an operation.
std::vector<nvdla_dla_data_cube*> cubes(HwOp& op) {
    switch (op.type) {
        case NVDLA_DLA_OP_CONV: {
            auto& s = op.surf.conv_surface;
            return {&s.weight_data, &s.wmb_data, &s.wgs_data, &s.src_data, &s.dst_data};
        }
        case NVDLA_DLA_OP_SDP: {
            auto& s = op.surf.sdp_surface;
            return {&s.src_data, &s.x1_data, &s.x2_data, &s.y_data, &s.dst_data};
        }
        case NVDLA_DLA_OP_PDP:
            return {&op.surf.pdp_surface.src_data, &op.surf.pdp_surface.dst_data};
        case NVDLA_DLA_OP_CDP:
            return {&op.surf.cdp_surface.src_data, &op.surf.cdp_surface.dst_data};
        case NVDLA_DLA_OP_RUBIK:
            return {&op.surf.rubik_surface.src_data, &op.surf.rubik_surface.dst_data};
        default: return {};
    }
}

bool in_memory(const nvdla_dla_data_cube& c) {
    return c.type != NVDLA_DLA_MEM_HW && c.address >= 0;
}

// Activation buffers: greedy first fit in order of first use; a buffer's space is free again
// after the last step that touches it.
uint64_t plan_pool(Plan& plan) {
    for (size_t s = 0; s < plan.steps.size(); ++s) {
        auto touch = [&](uint32_t b) {
            Buffer& buf = plan.buffers.at(b);
            buf.first_use = std::min(buf.first_use, static_cast<uint32_t>(s));
            buf.last_use = std::max(buf.last_use, static_cast<uint32_t>(s));
        };
        Step& step = plan.steps[s];
        if (step.cpu_task && step.cpu) {
            for (const Place& p : step.cpu->inputs) touch(p.buffer);
            touch(step.cpu->output.buffer);
            continue;
        }
        if (step.cpu_task) {
            touch(step.soft.src.buffer);
            touch(step.soft.dst.buffer);
            continue;
        }
        for (HwOp& op : step.group.ops)
            for (nvdla_dla_data_cube* c : cubes(op))
                if (in_memory(*c)) touch(static_cast<uint32_t>(c->address));
    }
    std::vector<uint32_t> order;
    for (uint32_t b = 0; b < plan.buffers.size(); ++b)
        if (plan.buffers[b].kind == BufferKind::Pool && plan.buffers[b].first_use != UINT32_MAX)
            order.push_back(b);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return plan.buffers[a].first_use < plan.buffers[b].first_use;
    });
    struct Live {
        uint64_t begin, end;
        uint32_t last;
    };
    std::vector<Live> live;
    uint64_t total = 0;
    for (uint32_t b : order) {
        Buffer& buf = plan.buffers[b];
        live.erase(std::remove_if(live.begin(), live.end(),
                                  [&](const Live& l) { return l.last < buf.first_use; }),
                   live.end());
        std::sort(live.begin(), live.end(),
                  [](const Live& x, const Live& y) { return x.begin < y.begin; });
        const uint64_t size = (buf.size + kPoolAlignment - 1) / kPoolAlignment * kPoolAlignment;
        uint64_t at = 0;
        for (const Live& l : live) {
            if (at + size <= l.begin) break;
            at = std::max(at, (l.end + kPoolAlignment - 1) / kPoolAlignment * kPoolAlignment);
        }
        buf.pool_offset = at;
        live.push_back({at, at + size, buf.last_use});
        total = std::max(total, at + size);
    }
    return total;
}

struct Memories {
    Loadable& l;
    uint16_t add(uint16_t flags, uint64_t size, uint32_t alignment) {
        runtime::MemoryEntry m;
        m.flags = flags;
        m.size = size;
        m.alignment = alignment;
        l.memories.push_back(m);
        l.addresses.push_back({static_cast<uint16_t>(l.memories.size() - 1), 0, size});
        return static_cast<uint16_t>(l.memories.size() - 1);  // = its address id
    }
    uint16_t constant(const std::string& name, std::vector<std::byte> data, BlobVersion version,
                      runtime::TaskInterface iface, uint32_t sub_interface) {
        runtime::LoadableBlob b;
        b.name = name;
        b.interface = iface;
        b.sub_interface = sub_interface;
        b.version = version;
        const uint64_t size = data.size();
        b.data = std::move(data);
        l.blobs.push_back(std::move(b));
        const uint16_t id = add(runtime::kMemoryAlloc | runtime::kMemorySet, size, 0);
        l.memories[id].contents.push_back({static_cast<uint32_t>(l.blobs.size() - 1), 0});
        return id;
    }
};

uint8_t cpu_task_format(const HwConfig& cfg, Precision p) {
    if (p == Precision::Fp16) return 3;  // FF16
    return cfg.atom_bytes == 8 ? 1 : 0;  // INT8_8, INT8
}

}  // namespace

Result<std::vector<std::byte>> emit_loadable(Plan& plan, const HwConfig& cfg, Precision precision,
                                             uint64_t& pool_bytes) {
    if (plan.buffers.size() > 30000)
        return error("the network needs ", plan.buffers.size(), " buffers; at most 30000 fit");
    pool_bytes = plan_pool(plan);

    Loadable l;
    l.version = {0, 7, 0};
    Memories mem{l};
    // Data memories, and where each buffer lies in them.
    std::vector<uint16_t> data_mems;
    std::vector<int> mem_of(plan.buffers.size(), -1);
    std::vector<uint64_t> base(plan.buffers.size(), 0);
    if (!plan.consts.empty()) {
        const uint16_t m =
            mem.constant("weights", plan.consts, {0, 0, 0}, runtime::TaskInterface::None, 0);
        l.memories[m].alignment = 4096;
        data_mems.push_back(m);
        mem_of[kConstBuffer] = m;
    }
    if (pool_bytes) {
        const uint16_t m = mem.add(runtime::kMemoryAlloc, pool_bytes, 4096);
        data_mems.push_back(m);
        for (size_t b = 0; b < plan.buffers.size(); ++b)
            if (plan.buffers[b].kind == BufferKind::Pool) {
                mem_of[b] = m;
                base[b] = plan.buffers[b].pool_offset;
            }
    }
    auto bound = [&](BufferKind kind, const std::vector<TensorDesc>& descs) {
        for (const TensorDesc& d : descs) {
            const uint16_t m = mem.add(
                runtime::kMemoryAlloc |
                    (kind == BufferKind::Input ? runtime::kMemoryInput : runtime::kMemoryOutput),
                d.size_bytes, 4096);
            l.memories[m].bind_id = static_cast<uint16_t>(d.index);
            l.memories[m].tensor_desc_id = static_cast<uint16_t>(l.tensor_descs.size());
            data_mems.push_back(m);
            for (size_t b = 0; b < plan.buffers.size(); ++b)
                if (plan.buffers[b].kind == kind && plan.buffers[b].bind == d.index) mem_of[b] = m;
            runtime::TensorDescEntry t;
            t.name = d.name;
            t.mem_id = m;
            t.size = d.size_bytes;
            const bool image = d.image.has_value();
            t.data_format = image ? 1 : 3;  // NCHW, NCxHWx
            t.data_type = d.precision == Precision::Int8 ? 4 : 2;
            t.data_category = image ? 0 : 2;
            t.pixel_format = d.pixel_format;
            t.n = 1;
            t.c = static_cast<int32_t>(d.dims.c);
            t.h = static_cast<int32_t>(d.dims.h);
            t.w = static_cast<int32_t>(d.dims.w);
            t.strides = {
                bytes_per_element(d.precision), d.line_stride, d.surface_stride, 0, 0, 0, 0, 0};
            l.tensor_descs.push_back(t);
        }
    };
    bound(BufferKind::Input, plan.inputs);
    bound(BufferKind::Output, plan.outputs);

    // Tasks: consecutive hardware steps make one DLA task, each softmax a CPU task.
    for (size_t s = 0; s < plan.steps.size();) {
        const std::string tag = "task-" + std::to_string(l.tasks.size()) + "-";
        runtime::TaskEntry task;
        task.instance = -1;
        if (plan.steps[s].cpu_task && plan.steps[s].cpu) {
            // A CPU task: descriptors, parameters, then every data memory.
            const CpuStep& step = *plan.steps[s].cpu;
            std::vector<uint16_t> list = {0, 0, 0, 0};
            for (uint16_t m : data_mems) list.push_back(m);
            std::vector<std::pair<int16_t, uint32_t>> where;
            for (size_t k = 0; k <= step.inputs.size(); ++k) {
                const Place& p = k < step.inputs.size() ? step.inputs[k] : step.output;
                const uint16_t m = static_cast<uint16_t>(mem_of.at(p.buffer));
                where.push_back({static_cast<int16_t>(std::find(list.begin() + 4, list.end(), m) -
                                                      list.begin()),
                                 static_cast<uint32_t>(base[p.buffer] + p.offset)});
            }
            CpuTaskBlobs blobs = encode_cpu_task(step, cfg, precision, where, 3);
            const auto emu1 = runtime::TaskInterface::Emu1;
            list[0] = mem.constant(tag + "addr0", blobs.network, kCpuTaskVersion, emu1, 1);
            list[1] = mem.constant(tag + "op_list", blobs.operations, kCpuTaskVersion, emu1, 3);
            list[2] = mem.constant(tag + "op_buf_list", blobs.buffers, kCpuTaskVersion, emu1, 4);
            if (blobs.parameters.empty()) blobs.parameters.assign(4, std::byte{0});
            list[3] = mem.constant(tag + "parameters", blobs.parameters, kCpuTaskVersion, emu1, 0);
            task.interface = emu1;
            task.addresses = list;
            task.version = kCpuTaskVersion;
            l.tasks.push_back(task);
            ++s;
            continue;
        }
        if (plan.steps[s].cpu_task) {
            const OriginalSoftmax& e = plan.steps[s].soft;
            std::vector<std::byte> net(256), ops(24), buffers(512);
            put<int16_t>(net, 0, 1);
            put<int16_t>(net, 2, 2);
            put<uint16_t>(net, 4, 1);
            put<uint8_t>(ops, 0, 1);  // softmax
            put<float>(ops, 4, e.input_scale);
            put<float>(ops, 8, e.output_scale);
            put<uint8_t>(ops, 12, 0);  // axis: channels
            const uint16_t head = mem.constant(tag + "addr0", net, kOriginalCpuTaskVersion,
                                               runtime::TaskInterface::Emu1, 1);
            const uint16_t opl = mem.constant(tag + "op_list", ops, kOriginalCpuTaskVersion,
                                              runtime::TaskInterface::Emu1, 3);
            const uint16_t buf_list_pos = 2;
            std::vector<uint16_t> list = {head, opl, 0};
            for (uint16_t m : data_mems) list.push_back(m);
            for (int k = 0; k < 2; ++k) {
                const Place& p = k == 0 ? e.src : e.dst;
                const size_t b = size_t(k) * 256;
                const uint16_t m = static_cast<uint16_t>(mem_of.at(p.buffer));
                const int16_t index =
                    static_cast<int16_t>(std::find(list.begin() + 3, list.end(), m) - list.begin());
                const uint32_t lanes = cfg.atom_bytes / bytes_per_element(precision);
                const uint64_t size = uint64_t((p.dims.c + lanes - 1) / lanes - 1) * p.surface +
                                      uint64_t(p.dims.h - 1) * p.line +
                                      uint64_t(p.dims.w) * cfg.atom_bytes;
                put<int16_t>(buffers, b, index);
                put<uint32_t>(buffers, b + 2, static_cast<uint32_t>(base[p.buffer] + p.offset));
                put<uint32_t>(buffers, b + 6, static_cast<uint32_t>(size));
                put<uint16_t>(buffers, b + 10, cpu_task_format(cfg, precision));
                put<uint16_t>(buffers, b + 12, static_cast<uint16_t>(p.dims.w));
                put<uint16_t>(buffers, b + 14, static_cast<uint16_t>(p.dims.h));
                put<uint16_t>(buffers, b + 16, static_cast<uint16_t>(p.dims.c));
                put<uint32_t>(buffers, b + 18, p.line);
                put<uint32_t>(buffers, b + 22, p.surface);
            }
            list[buf_list_pos] = mem.constant(tag + "op_buf_list", buffers, kOriginalCpuTaskVersion,
                                              runtime::TaskInterface::Emu1, 4);
            task.interface = runtime::TaskInterface::Emu1;
            task.addresses = list;
            task.version = kOriginalCpuTaskVersion;
            l.tasks.push_back(task);
            ++s;
            continue;
        }

        size_t e = s;
        while (e < plan.steps.size() && !plan.steps[e].cpu_task) ++e;
        std::vector<HwOp> ops;
        std::vector<std::pair<size_t, size_t>> groups;  // [first, end) per group
        for (size_t i = s; i < e; ++i) {
            groups.push_back({ops.size(), ops.size() + plan.steps[i].group.ops.size()});
            for (const HwOp& op : plan.steps[i].group.ops) ops.push_back(op);
        }
        if (ops.size() > 4096)
            return error("a task would hold ", ops.size(), " operations; at most 4096 fit");
        const size_t n = ops.size();
        std::vector<nvdla_dla_common_op_desc> deps(n);
        for (size_t i = 0; i < n; ++i) {
            std::memset(&deps[i], 0, sizeof deps[i]);
            deps[i].index = static_cast<int16_t>(i);
            deps[i].op_type = ops[i].type;
            for (int t = 0; t < NVDLA_DLA_OP_COUNT; ++t) deps[i].consumers[t].index = -1;
            deps[i].fused_parent.index = -1;
        }
        Status graph;
        auto depend = [&](size_t producer, size_t consumer, uint8_t event) {
            nvdla_dla_consumer& slot = deps[producer].consumers[ops[consumer].type];
            if (slot.index != -1) {
                if (slot.index != static_cast<int16_t>(consumer) && graph.ok())
                    graph =
                        error("internal: operation ", producer, " has two consumers of one type");
                return;
            }
            slot.index = static_cast<int16_t>(consumer);
            slot.event = event;
            deps[consumer].dependency_count++;
        };
        for (const auto& [first, end] : groups)
            for (size_t c = first + 1; c < end; ++c) {
                // The child is enabled first, its parent once the child is.
                deps[c].fused_parent.index = static_cast<int16_t>(c - 1);
                deps[c].fused_parent.event = NVDLA_DLA_EVENT_OP_ENABLED;
                deps[c - 1].dependency_count++;
                depend(c - 1, c, NVDLA_DLA_EVENT_OP_PROGRAMMED);
            }
        for (size_t g = 0; g + 1 < groups.size(); ++g)
            depend(groups[g].second - 1, groups[g + 1].second - 1, NVDLA_DLA_EVENT_OP_COMPLETED);
        int16_t heads[NVDLA_DLA_OP_COUNT];
        std::fill(std::begin(heads), std::end(heads), int16_t(-1));
        std::vector<int> previous(NVDLA_DLA_OP_COUNT, -1);
        for (size_t i = 0; i < n; ++i) {
            const uint8_t type = ops[i].type;
            if (previous[type] < 0)
                heads[type] = static_cast<int16_t>(i);
            else
                depend(size_t(previous[type]), i, NVDLA_DLA_EVENT_OP_PROGRAMMED);
            previous[type] = static_cast<int>(i);
        }
        if (!graph) return graph;

        // LUTs of this task.
        std::vector<int> lut_ids;
        for (HwOp& op : ops)
            if (op.lut >= 0) {
                auto it = std::find(lut_ids.begin(), lut_ids.end(), op.lut);
                const int local = static_cast<int>(it - lut_ids.begin());
                if (it == lut_ids.end()) lut_ids.push_back(op.lut);
                if (op.type == NVDLA_DLA_OP_SDP)
                    op.op.sdp_op.lut_index = static_cast<int16_t>(local);
                if (op.type == NVDLA_DLA_OP_CDP)
                    op.op.cdp_op.lut_index = static_cast<int16_t>(local);
            }
        if (lut_ids.size() > 256)
            return error("a task would hold ", lut_ids.size(), " LUTs; at most 256 fit");

        // Address list: the four (five) descriptor lists, then every data memory.
        const size_t lists = lut_ids.empty() ? 4 : 5;
        std::vector<uint16_t> list(lists, 0);
        for (uint16_t m : data_mems) list.push_back(m);
        for (HwOp& op : ops)
            for (nvdla_dla_data_cube* c : cubes(op)) {
                if (!in_memory(*c)) continue;
                const uint32_t b = static_cast<uint32_t>(c->address);
                const uint16_t m = static_cast<uint16_t>(mem_of.at(b));
                c->address = static_cast<int16_t>(
                    std::find(list.begin() + static_cast<ptrdiff_t>(lists), list.end(), m) -
                    list.begin());
                c->offset = static_cast<uint32_t>(base[b] + c->offset);
            }

        std::vector<std::byte> op_bytes(n * NVDLA_DLA_OP_SLOT_SIZE),
            surf_bytes(n * NVDLA_DLA_SURFACE_SLOT_SIZE),
            dep_bytes(n * sizeof(nvdla_dla_common_op_desc)),
            lut_bytes(lut_ids.size() * sizeof(nvdla_dla_lut_param));
        for (size_t i = 0; i < n; ++i) {
            std::memcpy(op_bytes.data() + i * NVDLA_DLA_OP_SLOT_SIZE, &ops[i].op, sizeof ops[i].op);
            std::memcpy(surf_bytes.data() + i * NVDLA_DLA_SURFACE_SLOT_SIZE, &ops[i].surf,
                        sizeof ops[i].surf);
            std::memcpy(dep_bytes.data() + i * sizeof(nvdla_dla_common_op_desc), &deps[i],
                        sizeof deps[i]);
        }
        for (size_t i = 0; i < lut_ids.size(); ++i)
            std::memcpy(lut_bytes.data() + i * sizeof(nvdla_dla_lut_param),
                        &plan.luts[size_t(lut_ids[i])], sizeof(nvdla_dla_lut_param));

        nvdla_dla_network_desc net;
        std::memset(&net, 0, sizeof net);
        net.operation_desc_index = 1;
        net.surface_desc_index = 2;
        net.dependency_graph_index = 3;
        net.lut_data_index = static_cast<int16_t>(lut_ids.empty() ? -1 : 4);
        net.roi_array_index = -1;
        net.surface_index = -1;
        net.stat_list_index = -1;
        for (int t = 0; t < NVDLA_DLA_OP_COUNT; ++t) net.op_head[t] = heads[t];
        net.num_rois = 1;
        net.num_operations = static_cast<uint16_t>(n);
        net.num_luts = static_cast<uint16_t>(lut_ids.size());
        net.num_addresses = static_cast<uint16_t>(list.size());
        std::vector<std::byte> net_bytes(sizeof net);
        std::memcpy(net_bytes.data(), &net, sizeof net);

        const auto dla = runtime::TaskInterface::Dla1;
        list[0] = mem.constant(tag + "addr0", net_bytes, kDlaVersion, dla, 1);
        list[1] = mem.constant(tag + "op_list", op_bytes, kDlaVersion, dla, 3);
        list[2] = mem.constant(tag + "surf_list", surf_bytes, kDlaVersion, dla, 4);
        list[3] = mem.constant(tag + "dep_graph", dep_bytes, kDlaVersion, dla, 2);
        if (!lut_ids.empty())
            list[4] = mem.constant(tag + "lut_list", lut_bytes, kDlaVersion, dla, 5);
        task.interface = dla;
        task.addresses = list;
        task.version = kDlaVersion;
        l.tasks.push_back(task);
        s = e;
    }
    for (uint16_t t = 0; t < l.tasks.size(); ++t) l.submits.push_back({{t}});
    return runtime::serialize_loadable(l);
}

}  // namespace nvdla::builder::detail
