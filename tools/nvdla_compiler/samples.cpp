// Calibration samples and calibration tables (samples.hpp).
#include "samples.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nvdla/onnx.hpp"
#include "runtime/image.hpp"

namespace nvdla::compiler {

namespace {

namespace fs = std::filesystem;

std::string lower_extension(const std::string& path) {
    std::string ext = fs::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext;
}

bool is_image(const std::string& ext) {
    return ext == ".pgm" || ext == ".ppm" || ext == ".pnm" || ext == ".png" || ext == ".jpg" ||
           ext == ".jpeg";
}

std::string dims_text(Dims4 d) {
    return std::to_string(d.c) + "x" + std::to_string(d.h) + "x" + std::to_string(d.w);
}

// Bilinear sample of channel c at (x, y) in source pixel coordinates (edges clamped).
float bilinear(const runtime::Image& img, float x, float y, uint32_t c) {
    x = std::clamp(x, 0.0f, float(img.width - 1));
    y = std::clamp(y, 0.0f, float(img.height - 1));
    const uint32_t x0 = static_cast<uint32_t>(x), y0 = static_cast<uint32_t>(y);
    const uint32_t x1 = std::min(x0 + 1, img.width - 1), y1 = std::min(y0 + 1, img.height - 1);
    const float fx = x - float(x0), fy = y - float(y0);
    const float top = float(img.at(x0, y0, c)) * (1 - fx) + float(img.at(x1, y0, c)) * fx;
    const float bottom = float(img.at(x0, y1, c)) * (1 - fx) + float(img.at(x1, y1, c)) * fx;
    return top * (1 - fy) + bottom * fy;
}

Result<Sample> image_sample(const std::string& path, Dims4 dims, const ImagePreprocess& pre) {
    runtime::ImageDecodeOptions options;
    options.order = pre.rgb ? runtime::ColorOrder::Rgb : runtime::ColorOrder::Bgr;
    Result<runtime::Image> img = runtime::read_image(path, options);
    if (!img) return img.status();
    if (img->channels != dims.c)
        return error("image ", path, ": ", img->describe(), " has ", img->channels, " channel",
                     img->channels == 1 ? "" : "s", ", the network's input ", dims.c);
    if (!pre.resize && (img->width != dims.w || img->height != dims.h))
        return error("image ", path, ": ", img->describe(), " is not the input's ", dims.w, " x ",
                     dims.h, " (--resize scales and crops it)");
    Sample s;
    s.path = path;
    s.pixels = builder::make_host_tensor(dims);
    // Scale so that the image covers the input, then take the centre.
    const float factor =
        pre.resize ? std::max(float(dims.w) / float(img->width), float(dims.h) / float(img->height))
                   : 1.0f;
    const float off_x = (float(img->width) * factor - float(dims.w)) / 2;
    const float off_y = (float(img->height) * factor - float(dims.h)) / 2;
    const float to_8bit = 255.0f / float(img->max_value ? img->max_value : 255);
    for (uint32_t c = 0; c < dims.c; ++c)
        for (uint32_t y = 0; y < dims.h; ++y)
            for (uint32_t x = 0; x < dims.w; ++x) {
                float v;
                if (!pre.resize)
                    v = float(img->at(x, y, c));
                else
                    v = bilinear(*img, (float(x) + off_x + 0.5f) / factor - 0.5f,
                                 (float(y) + off_y + 0.5f) / factor - 0.5f, c);
                s.pixels->at(0, c, y, x) = v * to_8bit;
            }
    s.values = *s.pixels;
    for (uint32_t c = 0; c < dims.c; ++c)
        for (uint32_t y = 0; y < dims.h; ++y)
            for (uint32_t x = 0; x < dims.w; ++x) {
                float& v = s.values.at(0, c, y, x);
                v = (v - pre.mean[std::min(c, 3u)]) * pre.scale;
            }
    return s;
}

Result<Sample> tensor_sample(const std::string& path, const std::string& ext, Dims4 dims) {
    std::vector<int64_t> shape;
    std::vector<float> values;
    if (ext == ".npy") {
        Result<NpyArray> a = read_npy(path);
        if (!a) return a.status();
        shape = a->shape;
        values = std::move(a.value().values);
    } else {
        Result<onnx::TensorData> t = onnx::read_tensor_file(path);
        if (!t) return error("tensor ", path, ": ", t.message());
        shape = t->shape;
        values = std::move(t.value().values);
    }
    if (values.size() != dims.elements())
        return error("tensor ", path, ": ", values.size(), " values, the network's input ",
                     dims_text(dims), " takes ", dims.elements());
    (void)shape;
    Sample s;
    s.path = path;
    s.values = builder::make_host_tensor(dims);
    s.values.data = std::move(values);
    return s;
}

}  // namespace

Result<std::vector<std::string>> list_samples(const std::string& dir, uint32_t limit) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return error("calibration ", dir, ": not a directory");
    std::vector<std::string> files;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        if (!e.is_regular_file()) continue;
        const std::string ext = lower_extension(e.path().string());
        if (is_image(ext) || ext == ".pb" || ext == ".npy") files.push_back(e.path().string());
    }
    if (ec) return error("calibration ", dir, ": ", ec.message());
    if (files.empty())
        return error("calibration ", dir,
                     ": no images (.pgm .ppm .png .jpg) or tensors (.pb .npy) in it");
    std::sort(files.begin(), files.end());
    if (limit && files.size() > limit) files.resize(limit);
    return files;
}

Result<Sample> load_sample(const std::string& path, Dims4 dims, const ImagePreprocess& pre) {
    const std::string ext = lower_extension(path);
    if (is_image(ext)) return image_sample(path, dims, pre);
    return tensor_sample(path, ext, dims);
}

float image_input_range(const ImagePreprocess& pre, uint32_t channels) {
    float range = 0;
    for (uint32_t c = 0; c < std::min(channels, 4u); ++c)
        range = std::max(range,
                         std::max(std::fabs(0.0f - pre.mean[c]), std::fabs(255.0f - pre.mean[c])) *
                             std::fabs(pre.scale));
    return range;
}

Result<std::map<std::string, float>> read_calibration_table(const std::string& path) {
    std::ifstream in(path);
    if (!in) return error("calibration table ", path, ": cannot be opened");
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return error("calibration table ", path, ": not a JSON object of blobs");
    std::map<std::string, float> ranges;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const nlohmann::json& entry = it.value();
        if (!entry.is_object() || !entry.contains("scale") || !entry["scale"].is_number())
            return error("calibration table ", path, ": entry '", it.key(),
                         "' has no numeric \"scale\"");
        const double scale = entry["scale"].get<double>();
        if (!(scale > 0) || !std::isfinite(scale))
            return error("calibration table ", path, ": entry '", it.key(), "' has scale ", scale,
                         " (it must be positive)");
        ranges[it.key()] = static_cast<float>(scale * 127.0);
    }
    return ranges;
}

std::string calibration_table_json(const std::map<std::string, float>& ranges) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& [name, range] : ranges)
        j[name] = {{"scale", double(range) / 127.0}, {"min", 0}, {"max", 0}, {"offset", 0}};
    return j.dump(4) + "\n";
}

Result<NpyArray> read_npy(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return error("tensor ", path, ": cannot be opened");
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string b = ss.str();
    auto bad = [&](const std::string& why) { return error("tensor ", path, ": ", why); };
    if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0) return bad("not a .npy file");
    const uint8_t major = static_cast<uint8_t>(b[6]);
    size_t header_len, start;
    if (major == 1) {
        header_len = uint8_t(b[8]) | (size_t(uint8_t(b[9])) << 8);
        start = 10;
    } else if (major == 2 || major == 3) {
        if (b.size() < 12) return bad("truncated header");
        header_len = uint8_t(b[8]) | (size_t(uint8_t(b[9])) << 8) | (size_t(uint8_t(b[10])) << 16) |
                     (size_t(uint8_t(b[11])) << 24);
        start = 12;
    } else {
        return bad(".npy version " + std::to_string(major) + " is not supported");
    }
    if (header_len > b.size() - start) return bad("truncated header");
    const std::string header = b.substr(start, header_len);
    auto field = [&](const std::string& key) -> std::string {
        const size_t k = header.find("'" + key + "'");
        if (k == std::string::npos) return "";
        size_t v = header.find(':', k);
        if (v == std::string::npos) return "";
        ++v;
        while (v < header.size() && header[v] == ' ') ++v;
        size_t end = v;
        if (end < header.size() && header[end] == '(') {
            end = header.find(')', end);
            return end == std::string::npos ? "" : header.substr(v, end - v + 1);
        }
        while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
        return header.substr(v, end - v);
    };
    const std::string descr = field("descr"), order = field("fortran_order"),
                      shape_text = field("shape");
    const bool f32 = descr == "'<f4'", f64 = descr == "'<f8'";
    if (!f32 && !f64) return bad("dtype " + descr + " (float32 or float64 expected)");
    if (order != "False") return bad("Fortran order is not supported");
    if (shape_text.empty()) return bad("no shape in the header");
    NpyArray a;
    uint64_t count = 1;
    for (size_t i = 1; i < shape_text.size();) {
        if (std::isdigit(static_cast<unsigned char>(shape_text[i]))) {
            int64_t d = 0;
            while (i < shape_text.size() && std::isdigit(static_cast<unsigned char>(shape_text[i])))
                d = std::min<int64_t>(d * 10 + (shape_text[i++] - '0'), int64_t(1) << 31);
            a.shape.push_back(d);
            count *= uint64_t(d);
            if (count > (uint64_t(1) << 28)) return bad("too many elements");
        } else {
            ++i;
        }
    }
    const size_t bytes = count * (f32 ? 4 : 8);
    const size_t data = start + header_len;
    if (b.size() - data != bytes)
        return bad(std::to_string(b.size() - data) + " data bytes, the shape needs " +
                   std::to_string(bytes));
    a.values.resize(count);
    static_assert(std::endian::native == std::endian::little);
    for (uint64_t i = 0; i < count; ++i) {
        if (f32) {
            std::memcpy(&a.values[i], b.data() + data + i * 4, 4);
        } else {
            double d;
            std::memcpy(&d, b.data() + data + i * 8, 8);
            a.values[i] = static_cast<float>(d);
        }
    }
    return a;
}

}  // namespace nvdla::compiler
