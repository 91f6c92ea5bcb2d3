// The terminal report, the JSON report and the Graphviz drawing (report.hpp).
#include "report.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

namespace nvdla::compiler {

namespace {

std::string kib(uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
    return text;
}

std::string macs_text(uint64_t n) {
    char text[32];
    if (n >= 1000000)
        std::snprintf(text, sizeof text, "%.2f M", static_cast<double>(n) / 1e6);
    else
        std::snprintf(text, sizeof text, "%.1f k", static_cast<double>(n) / 1e3);
    return text;
}

std::string dims_text(Dims4 d) {
    return std::to_string(d.c) + "x" + std::to_string(d.h) + "x" + std::to_string(d.w);
}

// "R8", "A8B8G8R8": the format's name as the flags take it (without the seed's "T_").
std::string pixel_format_name(PixelFormat f) {
    const std::string name(to_string(f));
    return name.rfind("T_", 0) == 0 ? name.substr(2) : name;
}

std::string format_text(const builder::TensorDesc& t) {
    if (t.image) return "image " + pixel_format_name(t.image->pixel_format);
    return t.pixel_format == kPixelFormatFeatureX8 ? "feature (8-byte atoms)" : "feature";
}

// The unit that starts a step: the first hardware unit named after the layer name.
std::string unit_of(const std::string& op) {
    const size_t colon = op.find(": ");
    const std::string body = colon == std::string::npos ? op : op.substr(colon + 2);
    for (const char* unit : {"CONV", "SDP", "PDP", "CDP", "RUBIK", "BDMA"})
        if (body.rfind(unit, 0) == 0) return unit;
    if (body.rfind("EMU", 0) == 0 || body.rfind("CPU", 0) == 0 ||
        body.find("(CPU)") != std::string::npos)
        return "CPU";
    return "other";
}

std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

}  // namespace

std::string text_report(const builder::CompiledNetwork& net, const ReportContext& ctx,
                        const std::vector<VerifyResult>& verify) {
    std::ostringstream out;
    out << "nvdla_compiler: " << ctx.model << " (" << ctx.model_kind << ", network '" << ctx.network
        << "', " << ctx.layers << " layers) -> " << ctx.output << "\n";
    out << "  target " << net.config << ", " << to_string(net.precision);
    if (net.precision == Precision::Int8)
        out << " (" << ctx.quantization << " weights; activations " << ctx.calibration << ")";
    out << "\n  operations, in execution order (what each layer became):\n";
    for (const std::string& op : net.operations) out << "    " << op << "\n";
    out << "  tasks: " << net.hardware_tasks << " on the hardware, " << net.cpu_tasks
        << " on the CPU";
    if (net.needs_extended_cpu_tasks) out << " (needs this runtime: not the original's)";
    out << "\n";
    for (const std::string& op : net.cpu_operations) out << "    CPU: " << op << "\n";
    out << "  memory: " << kib(net.weight_bytes) << " of weights, " << kib(net.activation_bytes)
        << " of activations; loadable " << kib(net.loadable.size()) << "\n";
    if (net.model_macs == 0 && net.hardware_macs == 0)
        out << "  multiply-accumulates per run: not counted by this builder";
    else
        out << "  multiply-accumulates per run: " << macs_text(net.model_macs) << " in the model, "
            << macs_text(net.hardware_macs) << " on the hardware";
    if (net.hardware_macs > 0 && net.model_macs > 0) {
        char pct[32];
        std::snprintf(pct, sizeof pct, " (%.0f%% useful)",
                      100.0 * double(net.model_macs) / double(net.hardware_macs));
        out << pct;
    }
    out << "\n";
    for (const builder::TensorDesc& t : net.inputs) {
        out << "  input  " << t.index << " '" << t.name << "' " << dims_text(t.dims) << " "
            << format_text(t) << " " << to_string(t.precision);
        if (t.precision == Precision::Int8 && !t.image) out << ", scale " << t.scale;
        out << "\n";
    }
    for (const builder::TensorDesc& t : net.outputs) {
        out << "  output " << t.index << " '" << t.name << "' " << dims_text(t.dims) << " "
            << format_text(t) << " " << to_string(t.precision);
        if (t.precision == Precision::Int8) out << ", scale " << t.scale;
        out << "\n";
    }
    if (!verify.empty()) {
        out << "  verify: the emulated NVDLA against the float reference, "
            << verify.front().samples << " sample" << (verify.front().samples == 1 ? "" : "s")
            << ":\n";
        for (const VerifyResult& v : verify) {
            char line[256];
            std::snprintf(line, sizeof line,
                          "    %-16s cosine %.6f  max error %.4g (%.3g%% of %.4g)  top-1 "
                          "agreement %u/%u\n",
                          v.name.c_str(), v.cosine, v.max_error,
                          v.max_ref > 0 ? 100.0 * v.max_error / v.max_ref : 0.0, v.max_ref,
                          v.top1_same, v.samples);
            out << line;
        }
    }
    return out.str();
}

std::string json_report(const builder::CompiledNetwork& net, const ReportContext& ctx,
                        const std::vector<VerifyResult>& verify) {
    using nlohmann::ordered_json;
    auto tensor = [](const builder::TensorDesc& t) {
        ordered_json j{{"name", t.name},
                       {"index", t.index},
                       {"dims", {t.dims.n, t.dims.c, t.dims.h, t.dims.w}},
                       {"precision", std::string(to_string(t.precision))},
                       {"format", format_text(t)},
                       {"line_stride", t.line_stride},
                       {"surface_stride", t.surface_stride},
                       {"size_bytes", t.size_bytes},
                       {"scale", t.scale}};
        if (t.image) {
            j["image"] = {{"pixel_format", pixel_format_name(t.image->pixel_format)},
                          {"mean", t.image->mean},
                          {"scale", t.image->scale}};
        }
        return j;
    };
    ordered_json j;
    j["model"] = ctx.model;
    j["model_kind"] = ctx.model_kind;
    j["network"] = ctx.network;
    j["output"] = ctx.output;
    j["config"] = net.config;
    j["precision"] = std::string(to_string(net.precision));
    if (net.precision == Precision::Int8) {
        j["quantization"] = ctx.quantization;
        j["calibration"] = ctx.calibration;
    }
    j["layers"] = ctx.layers;
    j["operations"] = net.operations;
    j["cpu_operations"] = net.cpu_operations;
    j["hardware_tasks"] = net.hardware_tasks;
    j["cpu_tasks"] = net.cpu_tasks;
    j["needs_extended_cpu_tasks"] = net.needs_extended_cpu_tasks;
    j["weight_bytes"] = net.weight_bytes;
    j["activation_bytes"] = net.activation_bytes;
    j["loadable_bytes"] = net.loadable.size();
    j["model_macs"] = net.model_macs;
    j["hardware_macs"] = net.hardware_macs;
    j["inputs"] = ordered_json::array();
    for (const auto& t : net.inputs) j["inputs"].push_back(tensor(t));
    j["outputs"] = ordered_json::array();
    for (const auto& t : net.outputs) j["outputs"].push_back(tensor(t));
    if (!verify.empty()) {
        j["verify"] = ordered_json::array();
        for (const VerifyResult& v : verify)
            j["verify"].push_back({{"output", v.name},
                                   {"samples", v.samples},
                                   {"cosine", v.cosine},
                                   {"max_error", v.max_error},
                                   {"max_reference", v.max_ref},
                                   {"top1_agreement", v.top1_same}});
    }
    return j.dump(2) + "\n";
}

std::string graph_dot(const builder::CompiledNetwork& net, const ReportContext& ctx) {
    auto colour = [](const std::string& unit) -> const char* {
        if (unit == "CONV") return "#9ecae1";
        if (unit == "SDP") return "#a1d99b";
        if (unit == "PDP") return "#fdd0a2";
        if (unit == "CDP") return "#dadaeb";
        if (unit == "RUBIK") return "#fcbba1";
        if (unit == "BDMA") return "#d9d9d9";
        if (unit == "CPU") return "#fff7bc";
        return "#ffffff";
    };
    std::ostringstream out;
    out << "// " << ctx.model << " compiled by nvdla_compiler for " << net.config << " "
        << to_string(net.precision) << "; render with: dot -Tsvg FILE.dot -o FILE.svg\n";
    out << "digraph \"" << escape(ctx.network) << "\" {\n"
        << "  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
           "fontsize=10];\n"
        << "  label=\"" << escape(ctx.network) << ": " << net.config << " "
        << to_string(net.precision) << ", " << net.hardware_tasks << " hardware task(s), "
        << net.cpu_tasks << " CPU task(s)\";\n";
    std::string previous;
    for (const builder::TensorDesc& t : net.inputs) {
        const std::string id = "in" + std::to_string(t.index);
        out << "  " << id << " [shape=ellipse, fillcolor=\"#ffffff\", label=\"" << escape(t.name)
            << "\\n"
            << dims_text(t.dims) << " " << escape(format_text(t)) << "\"];\n";
        previous = id;
    }
    for (size_t i = 0; i < net.operations.size(); ++i) {
        const std::string& op = net.operations[i];
        const std::string unit = unit_of(op);
        const std::string id = "op" + std::to_string(i);
        // The layer name first, then what it became, one unit per line.
        std::string label = escape(op);
        for (size_t p = 0; (p = label.find(" -> ", p)) != std::string::npos;)
            label.replace(p, 4, "\\n-> ");
        const size_t colon = label.find(": ");
        if (colon != std::string::npos) label.replace(colon, 2, "\\n");
        out << "  " << id << " [fillcolor=\"" << colour(unit) << "\""
            << (unit == "CPU" ? ", shape=box3d, style=\"filled,dashed\"" : "") << ", label=\""
            << label << (unit == "CPU" ? "\\n(CPU task)" : "") << "\"];\n";
        if (!previous.empty()) out << "  " << previous << " -> " << id << ";\n";
        previous = id;
    }
    for (const builder::TensorDesc& t : net.outputs) {
        const std::string id = "out" + std::to_string(t.index);
        out << "  " << id << " [shape=ellipse, fillcolor=\"#ffffff\", label=\"" << escape(t.name)
            << "\\n"
            << dims_text(t.dims) << "\"];\n";
        if (!previous.empty()) out << "  " << previous << " -> " << id << ";\n";
    }
    out << "  subgraph cluster_legend {\n    label=\"units\"; fontsize=9;\n";
    for (const char* unit : {"CONV", "SDP", "PDP", "CDP", "RUBIK", "CPU"})
        out << "    legend_" << unit << " [label=\"" << unit << "\", fillcolor=\"" << colour(unit)
            << "\", fontsize=8];\n";
    out << "  }\n}\n";
    return out.str();
}

}  // namespace nvdla::compiler
