// Lowering of CPU operations: cpu_op layers, element-wise division by a computed tensor, mish,
// sigmoid/tanh on configurations without the SDP lookup table, and flattens that are not views
// become CPU tasks between hardware tasks (BuildOptions::cpu_fallback). A softmax over the channels
// stays the original's EMU softmax, which the original runtime runs too; everything else uses the
// extended encoding.
#include <sstream>

#include "builder/lower_impl.hpp"
#include "runtime/cpu_tasks.hpp"

namespace nvdla::builder::detail {

namespace {

std::string dims_text(Dims4 d) {
    std::ostringstream o;
    o << d.c << "x" << d.h << "x" << d.w;
    return o.str();
}

// "axis 3", "axes 2,3", "order 1,3,2", "axis 1, 4 indices", "epsilon 1e-05" ...
std::string parameters_text(const CpuOpDesc& d) {
    std::ostringstream o;
    auto list = [&](size_t from) {
        for (size_t i = from; i < d.ints.size(); ++i) o << (i > from ? "," : "") << d.ints[i];
    };
    switch (d.kind) {
        case CpuOpKind::Softmax:
        case CpuOpKind::LogSoftmax: o << " axis " << d.ints[0]; break;
        case CpuOpKind::PowScalar: o << " exponent " << d.floats[0]; break;
        case CpuOpKind::ReduceSum:
        case CpuOpKind::ReduceMean:
        case CpuOpKind::ReduceMax:
        case CpuOpKind::ReduceMin:
            o << (d.ints.size() > 1 ? " axes " : " axis ");
            list(0);
            break;
        case CpuOpKind::LayerNorm:
            o << " from axis " << d.ints[0] << " epsilon " << d.floats[0]
              << (d.floats.size() > 1 ? " with gamma and beta" : "");
            break;
        case CpuOpKind::Gather:
            o << " axis " << d.ints[0] << ", " << d.ints.size() - 1 << " indices";
            break;
        case CpuOpKind::Transpose:
            o << " order ";
            list(0);
            break;
        default: break;
    }
    return o.str();
}

}  // namespace

bool Lowering::runs_on_cpu(uint32_t id) const {
    const Node& n = net_.nodes[id];
    switch (n.op) {
        case Op::Cpu:
        case Op::Mish: return true;
        case Op::Eltwise: return n.eltwise == EltwiseOp::Div;
        case Op::Sigmoid:
        case Op::Tanh: return !nvdla_hw_has(t_.cfg, NVDLA_FEATURE_SDP_LUT);
        case Op::Flatten: {
            // Not a view: read by something other than fully connected layers, or an output.
            if (alias_[id] != id) return false;
            for (uint32_t c : cons_[id])
                if (net_.nodes[c].op != Op::FullyConnected) return true;
            for (const OutputInfo& o : net_.outputs)
                if (o.tensor == id) return true;
            return false;
        }
        default: return false;
    }
}

Status Lowering::lower_cpu(uint32_t id) {
    const Node& n = net_.nodes[id];
    CpuOpDesc desc;
    std::string why;  // why a hardware layer needs the CPU
    if (n.op == Op::Cpu) {
        desc = n.cpu;
    } else if (n.op == Op::Flatten) {
        desc.kind = CpuOpKind::Reshape;
        desc.out_dims = n.dims;
        why = "only fully connected layers read a flattened tensor in place";
    } else if (n.op == Op::Mish) {
        desc.kind = CpuOpKind::Mish;
        why = "no SDP program computes mish (the lookup table has no softplus program)";
    } else if (n.op == Op::Eltwise) {
        desc.kind = CpuOpKind::Div;
        why = "the hardware cannot divide by a computed tensor";
    } else {
        desc.kind = n.op == Op::Sigmoid ? CpuOpKind::Sigmoid : CpuOpKind::Tanh;
        why = std::string(t_.cfg->name) + " has no SDP lookup table (NVDLA_FEATURE_SDP_LUT) for " +
              op_name(n.op);
    }
    if (!t_.options->cpu_fallback)
        return error(layer(id), ": ", why.empty() ? "it is a CPU operation" : why,
                     "; BuildOptions::cpu_fallback is false, so it cannot run on the CPU");
    const uint32_t atom = t_.cfg->atom_bytes;
    if (atom != 32 && !(atom == 8 && t_.int8()))
        return error(layer(id), ": CPU operations read ", to_string(t_.precision),
                     " cubes with 32-byte atoms", t_.int8() ? " or 8-byte atoms" : "", ", not the ",
                     atom, "-byte atoms of ", t_.cfg->name);

    std::ostringstream note;
    note << n.name << ": CPU " << runtime::cpu_op_name(desc.kind) << parameters_text(desc) << " ";
    for (size_t k = 0; k < n.inputs.size(); ++k)
        note << (k ? " and " : "") << dims_text(net_.nodes[root(n.inputs[k])].dims);
    note << " -> " << dims_text(n.dims) << " " << to_string(t_.precision);

    Step s;
    s.cpu_task = true;
    if (desc.kind == CpuOpKind::Softmax && desc.ints[0] == 1) {
        // The original's EMU softmax (over the channels) does exactly this.
        s.soft.src = home(n.inputs[0]);
        s.soft.dst = home(id);
        s.soft.precision = t_.precision;
        s.soft.input_scale = static_cast<float>(scale(n.inputs[0]));
        s.soft.output_scale = static_cast<float>(scale(id));
    } else {
        CpuStep cpu;
        cpu.kind = desc.kind;
        for (uint32_t in : n.inputs) {
            cpu.inputs.push_back(home(in));
            cpu.input_scales.push_back(static_cast<float>(scale(in)));
        }
        cpu.output = home(id);
        cpu.output_scale = static_cast<float>(scale(id));
        cpu.ints = desc.ints;
        cpu.floats = desc.floats;
        s.cpu = std::move(cpu);
        note << " (needs this runtime)";
    }
    s.group.note = note.str();
    plan_.steps.push_back(std::move(s));
    return computed(id);
}

}  // namespace nvdla::builder::detail
