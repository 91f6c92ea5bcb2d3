// The original nvdla_compiler's loadables (../shared/vectors/orig-compiler, README there) and the
// one judgement every test applies to their outputs: the emulator test
// (tests/runtime/orig_compiler_test.cpp) and the virtual platform's guest program
// (tests/vp/guest/orig_sequence.cpp) alike. No GoogleTest here: the guest program has none.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nvdla/precision/fp16.hpp"
#include "nvdla/runtime.hpp"

namespace nvdla::orig_compiler {

namespace fs = std::filesystem;

inline std::vector<float> read_f32(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    return v;
}

// One loadable of the corpus with what index.json and meta.json say about it.
struct Variant {
    std::string model, name, config, status;
    bool int8 = false;
    float input_scale = 1, output_scale = 1;
    Dims4 input, output;  // the Caffe network's shapes

    fs::path file(const fs::path& dir) const { return dir / model / (name + ".nvdla"); }
    bool refused() const { return status == "compiled_invalid"; }
};

// GoogleTest names parameters with it.
inline void PrintTo(const Variant& v, std::ostream* os) {
    *os << v.model << "/" << v.name;
}

// index.json lists every loadable (status, int8 scales); meta.json has each model's shapes.
// Empty when `dir` has no index.json.
inline std::vector<Variant> corpus(const fs::path& dir) {
    std::vector<Variant> out;
    if (dir.empty() || !fs::exists(dir / "index.json")) return out;
    std::ifstream index_file(dir / "index.json");
    const nlohmann::json index = nlohmann::json::parse(index_file);
    auto dims = [](const nlohmann::json& shape) {
        return Dims4{shape[0].get<uint32_t>(), shape[1].get<uint32_t>(), shape[2].get<uint32_t>(),
                     shape[3].get<uint32_t>()};
    };
    for (const auto& [model, loadables] : index.items()) {
        std::ifstream meta_file(dir / model / "meta.json");
        const nlohmann::json meta = nlohmann::json::parse(meta_file);
        for (const auto& l : loadables) {
            Variant v;
            v.model = model;
            v.name = l["variant"].get<std::string>();
            v.status = l["status"].get<std::string>();
            v.config = l["config"].get<std::string>();
            v.int8 = l["precision"].get<std::string>() == "int8";
            if (v.int8) {
                v.input_scale = l["int8_input_scale"].get<float>();
                v.output_scale = l["int8_output_scale"].get<float>();
            }
            v.input = dims(meta["input"]["shape"]);
            v.output = dims(meta["output"]["shape"]);
            out.push_back(std::move(v));
        }
    }
    return out;
}

// Where element (c, h, w) of a tensor lives in its buffer: image surfaces are pitch-linear
// pixels of all channels; feature cubes are atoms of 32 bytes (8 for FEATURE_X8).
inline uint64_t element_offset(const TensorInfo& t, uint32_t c, uint32_t h, uint32_t w) {
    const uint32_t bpe = t.data_type == TensorDataType::Int8 ? 1 : 2;
    if (t.category == TensorCategory::Image)
        return uint64_t(h) * t.line_stride() + uint64_t(w) * t.dims.c * bpe + c * bpe;
    const uint32_t atom = t.pixel_format == kPixelFormatFeatureX8 ? 8 : 32;
    const uint32_t lanes = atom / bpe;
    return uint64_t(c / lanes) * t.surface_stride() + uint64_t(h) * t.line_stride() +
           uint64_t(w) * atom + (c % lanes) * bpe;
}

// Packs the float NCHW input as the tensor wants it; image channels beyond the network's are 0.
inline void pack_input(const Variant& v, const TensorInfo& t, const std::vector<float>& x,
                       std::span<std::byte> dst) {
    std::fill(dst.begin(), dst.end(), std::byte{0});
    for (uint32_t c = 0; c < v.input.c; ++c)
        for (uint32_t h = 0; h < v.input.h; ++h)
            for (uint32_t w = 0; w < v.input.w; ++w) {
                const float value = x[(uint64_t(c) * v.input.h + h) * v.input.w + w];
                std::byte* p = dst.data() + element_offset(t, c, h, w);
                if (v.int8) {
                    const float q = std::round(value / v.input_scale);
                    p[0] =
                        static_cast<std::byte>(static_cast<int8_t>(std::clamp(q, -128.0f, 127.0f)));
                } else {
                    const uint16_t half = fp16::from_float(value);
                    std::memcpy(p, &half, 2);
                }
            }
}

inline std::vector<float> unpack_output(const Variant& v, const TensorInfo& t,
                                        std::span<const std::byte> src) {
    std::vector<float> y(v.output.elements());
    for (uint32_t c = 0; c < v.output.c; ++c)
        for (uint32_t h = 0; h < v.output.h; ++h)
            for (uint32_t w = 0; w < v.output.w; ++w) {
                const std::byte* p = src.data() + element_offset(t, c, h, w);
                float value;
                if (v.int8) {
                    value = static_cast<float>(static_cast<int8_t>(p[0])) * v.output_scale;
                } else {
                    uint16_t half;
                    std::memcpy(&half, p, 2);
                    value = fp16::to_float(half);
                }
                y[(uint64_t(c) * v.output.h + h) * v.output.w + w] = value;
            }
    return y;
}

struct Agreement {
    double max_error = 0, range = 0, cosine = 0;
    bool same_top = false;
};

inline Agreement agreement(const std::vector<float>& y, const std::vector<float>& expected) {
    Agreement a;
    const auto [lo, hi] = std::minmax_element(expected.begin(), expected.end());
    a.range = *hi - *lo;
    double dot = 0, yy = 0, ee = 0;
    for (size_t i = 0; i < y.size(); ++i) {
        a.max_error = std::max(a.max_error, std::abs(double(y[i]) - expected[i]));
        dot += double(y[i]) * expected[i];
        yy += double(y[i]) * y[i];
        ee += double(expected[i]) * expected[i];
    }
    a.cosine = yy > 0 && ee > 0 ? dot / std::sqrt(yy * ee) : 0;
    a.same_top = std::max_element(y.begin(), y.end()) - y.begin() == hi - expected.begin();
    return a;
}

// Where the original compiler, not the hardware, keeps a loadable from the float output
// (docs/runtime.md, "Loadables from the original compiler", has the evidence).
struct CompilerDefect {
    const char* model;
    const char* variant;
    const char* what;
};
inline constexpr CompilerDefect kCompilerDefects[] = {
    {"lenet", "fp16_nv_full", "post-extended image weights hold kernel rows 0,1 / 3,4 / 4"},
    {"lenet", "int8_nv_full", "post-extended image weights hold kernel rows 0,1 / 3,4 / 4"},
    {"lenet", "int8_nv_large", "post-extended image weights hold kernel rows 0,1 / 3,4 / 4"},
    {"resnet_small", "fp16_nv_full",
     "BatchNorm/Scale folded into the pre-extended image weights with the unextended kernel size"},
    {"resnet_small", "int8_nv_small", "first SDP rescales by 1 >> 22"},
    {"resnet_small", "int8_nv_large", "first SDP rescales by 1 >> 22"},
    {"resnet_small", "int8_nv_full", "first SDP rescales by 1 >> 22"},
};

inline const CompilerDefect* defect_of(const Variant& v) {
    for (const CompilerDefect& d : kCompilerDefects)
        if (v.model == d.model && v.name == d.variant) return &d;
    return nullptr;
}

// int8: the compiler quantizes a pooling's output with the pooling's own calibrated scale, but
// PDP cannot rescale, so the consumer reads the producer's scale: the logits shrink by the
// product of these ratios (calib.json).
inline const std::map<std::string, std::vector<std::pair<std::string, std::string>>>&
pool_scales() {
    static const std::map<std::string, std::vector<std::pair<std::string, std::string>>> scales = {
        {"lenet", {{"pool1", "conv1"}, {"pool2", "conv2"}}},
        {"resnet_small", {{"pool5", "res3a_relu"}}},
    };
    return scales;
}

// The float output as the compiler's int8 quantization makes it: softmax(f * logits), with
// the logits recovered from the expected probabilities (softmax ignores the constant).
inline std::vector<float> pool_quantized(const fs::path& dir, const std::string& model,
                                         const std::vector<float>& expected) {
    std::ifstream in(dir / model / "calib.json");
    const nlohmann::json calib = nlohmann::json::parse(in);
    double f = 1;
    for (const auto& [pool, producer] : pool_scales().at(model))
        f *= calib[pool]["scale"].get<double>() / calib[producer]["scale"].get<double>();
    std::vector<double> logits;
    for (float p : expected) logits.push_back(f * std::log(double(p)));
    const double top = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (double& l : logits) sum += (l = std::exp(l - top));
    std::vector<float> out;
    for (double l : logits) out.push_back(static_cast<float>(l / sum));
    return out;
}

// Whether a loadable's output `y` is what its precision allows, and what was measured:
// fp16 max error <= 1 % of the output range; int8 the same top class and cosine >= 0.99
// (against the compiler's pooling scales where it used them); a compiler defect: probabilities
// (finite, >= 0, summing to 1 +- 0.05).
struct Judgement {
    bool pass = false;
    std::string measured;  // one line: the numbers and which rule applied
};

inline Judgement judge(const fs::path& dir, const Variant& v, const std::vector<float>& y,
                       const std::vector<float>& expected) {
    const Agreement a = agreement(y, expected);
    std::ostringstream out;
    out << "max error " << a.max_error << " of range " << a.range << ", cosine " << a.cosine
        << ", same top " << a.same_top;
    Judgement j;
    if (const CompilerDefect* d = defect_of(v)) {
        double sum = 0;
        bool probabilities = true;
        for (float p : y) {
            probabilities = probabilities && std::isfinite(p) && p >= 0;
            sum += p;
        }
        j.pass = probabilities && std::abs(sum - 1.0) <= 0.05;
        out << "; compiler defect (" << d->what << "): probabilities summing to " << sum;
    } else if (!v.int8) {
        j.pass = a.max_error <= 1e-2 * a.range;
        out << "; fp16: max error <= 1% of the range";
    } else if (pool_scales().contains(v.model)) {
        const Agreement q = agreement(y, pool_quantized(dir, v.model, expected));
        j.pass = a.same_top && q.cosine >= 0.99;
        out << "; int8: same top, cosine against the compiler's pooling scales " << q.cosine
            << " >= 0.99";
    } else {
        j.pass = a.same_top && a.cosine >= 0.99;
        out << "; int8: same top, cosine >= 0.99";
    }
    j.measured = out.str();
    return j;
}

}  // namespace nvdla::orig_compiler
