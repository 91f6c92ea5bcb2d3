#include "lenet.hpp"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace nvdla::lenet {

namespace {

static_assert(std::endian::native == std::endian::little, "the weights file is little-endian");

uint32_t big_endian32(const uint8_t* p) {
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}

// The whole content of a file, gunzipped when it is gzip (zlib reads plain files as they are).
// At most max_bytes (0: all).
Result<std::vector<uint8_t>> read_maybe_gzip(const std::string& path, size_t max_bytes) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) return Status::failure(path + ": cannot open the file");
    std::vector<uint8_t> data;
    std::vector<uint8_t> chunk(1 << 20);
    for (;;) {
        size_t want = chunk.size();
        if (max_bytes) want = std::min(want, max_bytes - data.size());
        if (want == 0) break;
        const int n = gzread(f, chunk.data(), static_cast<unsigned>(want));
        if (n < 0) {
            int code = 0;
            const std::string why = gzerror(f, &code);
            gzclose(f);
            return Status::failure(path + ": cannot read the file (" + why + ")");
        }
        if (n == 0) break;
        data.insert(data.end(), chunk.begin(), chunk.begin() + n);
    }
    gzclose(f);
    return data;
}

// DIR/NAME.gz when present, else DIR/NAME.
std::string idx_path(const std::string& dir, const std::string& name) {
    const std::string gz = dir + "/" + name + ".gz";
    return std::filesystem::exists(gz) ? gz : dir + "/" + name;
}

// The items of an IDX file (the first `limit` ones unless 0); dims[0] is the count read.
Result<std::vector<uint8_t>> read_idx(const std::string& path, uint32_t magic, uint32_t limit,
                                      std::vector<uint32_t>& dims) {
    const uint32_t rank = magic & 0xFF;
    const size_t header = 4 + 4 * size_t(rank);
    // Item sizes are only known after the header: read the header, then what is needed.
    Result<std::vector<uint8_t>> head = read_maybe_gzip(path, header);
    if (!head) return head.status();
    if (head->size() < header || big_endian32(head->data()) != magic)
        return error(path, ": not an IDX file of magic 0x", std::hex, magic);
    uint64_t per_item = 1;
    dims.clear();
    for (uint32_t i = 0; i < rank; ++i) {
        dims.push_back(big_endian32(head->data() + 4 + 4 * i));
        if (i) per_item *= dims.back();
    }
    if (limit && limit < dims[0]) dims[0] = limit;
    const uint64_t elements = per_item * dims[0];
    Result<std::vector<uint8_t>> data =
        read_maybe_gzip(path, limit ? static_cast<size_t>(header + elements) : 0);
    if (!data) return data.status();
    const std::vector<uint8_t>& d = *data;
    if (d.size() - header != elements)
        return error(path, ": ", d.size() - header, " bytes of data, the header announces ",
                     elements);
    return std::vector<uint8_t>(d.begin() + static_cast<long>(header), d.end());
}

}  // namespace

Result<Dataset> load_fashion_mnist(const std::string& dir, bool train, uint32_t limit) {
    const std::string prefix = train ? "train" : "t10k";
    std::vector<uint32_t> image_dims, label_dims;
    Result<std::vector<uint8_t>> images =
        read_idx(idx_path(dir, prefix + "-images-idx3-ubyte"), 0x803, limit, image_dims);
    if (!images) return images.status();
    Result<std::vector<uint8_t>> labels =
        read_idx(idx_path(dir, prefix + "-labels-idx1-ubyte"), 0x801, limit, label_dims);
    if (!labels) return labels.status();
    if (image_dims[1] != kImageSide || image_dims[2] != kImageSide)
        return error(dir, ": ", prefix, " images are ", image_dims[1], "x", image_dims[2],
                     ", not 28x28");
    if (image_dims[0] != label_dims[0])
        return error(dir, ": ", image_dims[0], " ", prefix, " images but ", label_dims[0],
                     " labels");
    Dataset set;
    set.count = image_dims[0];
    set.pixels = std::move(images).value();
    set.labels = std::move(labels).value();
    for (uint32_t i = 0; i < set.count; ++i)
        if (set.labels[i] >= kClasses)
            return error(dir, ": ", prefix, " label ", i, " is ", int(set.labels[i]));
    return set;
}

uint64_t WeightTensor::elements() const {
    uint64_t n = 1;
    for (uint32_t d : dims) n *= d;
    return n;
}

Result<std::vector<WeightTensor>> read_weights(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::failure(path + ": cannot open the weights file");
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t at = 0;
    auto take = [&](void* dst, size_t n) {
        if (bytes.size() - at < n) return false;
        std::memcpy(dst, bytes.data() + at, n);
        at += n;
        return true;
    };
    char magic[8];
    uint32_t count = 0;
    if (!take(magic, 8) || std::memcmp(magic, "NVLENET1", 8) != 0 || !take(&count, 4))
        return Status::failure(path + ": not a weights file (no NVLENET1 header)");
    if (count > 1024) return error(path, ": ", count, " tensors is implausible");
    std::vector<WeightTensor> tensors;
    for (uint32_t t = 0; t < count; ++t) {
        WeightTensor tensor;
        uint32_t name_length = 0, rank = 0;
        if (!take(&name_length, 4) || name_length > 256)
            return error(path, ": tensor ", t, ": bad name");
        tensor.name.resize(name_length);
        if (!take(tensor.name.data(), name_length) || !take(&rank, 4) || rank > 8)
            return error(path, ": tensor ", t, ": truncated header");
        tensor.dims.resize(rank);
        if (!take(tensor.dims.data(), 4 * size_t(rank)))
            return error(path, ": tensor ", t, ": truncated dimensions");
        const uint64_t n = tensor.elements();
        if (n > (bytes.size() - at) / 4)
            return error(path, ": tensor '", tensor.name, "': ", n, " values do not fit");
        tensor.values.resize(n);
        if (!take(tensor.values.data(), 4 * n))
            return error(path, ": tensor '", tensor.name, "' is truncated");
        tensors.push_back(std::move(tensor));
    }
    if (at != bytes.size())
        return error(path, ": ", bytes.size() - at, " bytes after the last tensor");
    return tensors;
}

Status write_weights(const std::string& path, const std::vector<WeightTensor>& tensors) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return Status::failure(path + ": cannot create the file");
    auto put32 = [&](uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
    out.write("NVLENET1", 8);
    put32(static_cast<uint32_t>(tensors.size()));
    for (const WeightTensor& t : tensors) {
        put32(static_cast<uint32_t>(t.name.size()));
        out.write(t.name.data(), static_cast<std::streamsize>(t.name.size()));
        put32(static_cast<uint32_t>(t.dims.size()));
        for (uint32_t d : t.dims) put32(d);
        out.write(reinterpret_cast<const char*>(t.values.data()),
                  static_cast<std::streamsize>(4 * t.values.size()));
    }
    if (!out) return Status::failure(path + ": cannot write the file");
    return Status();
}

namespace {

struct Slot {
    const char* name;
    std::vector<uint32_t> dims;
    std::vector<float> Model::*member;
};

std::vector<Slot> slots() {
    return {{"conv1.weight", {kConv1, 1, kKernel, kKernel}, &Model::conv1_w},
            {"conv1.bias", {kConv1}, &Model::conv1_b},
            {"conv2.weight", {kConv2, kConv1, kKernel, kKernel}, &Model::conv2_w},
            {"conv2.bias", {kConv2}, &Model::conv2_b},
            {"fc1.weight", {kFc1, kConv2 * 5 * 5}, &Model::fc1_w},
            {"fc1.bias", {kFc1}, &Model::fc1_b},
            {"fc2.weight", {kFc2, kFc1}, &Model::fc2_w},
            {"fc2.bias", {kFc2}, &Model::fc2_b},
            {"fc3.weight", {kClasses, kFc2}, &Model::fc3_w},
            {"fc3.bias", {kClasses}, &Model::fc3_b}};
}

}  // namespace

Result<Model> model_from_tensors(const std::vector<WeightTensor>& tensors) {
    Model m;
    for (const Slot& s : slots()) {
        auto it = std::find_if(tensors.begin(), tensors.end(),
                               [&](const WeightTensor& t) { return t.name == s.name; });
        if (it == tensors.end()) return error("weights: no tensor '", s.name, "'");
        if (it->dims != s.dims) return error("weights: tensor '", s.name, "' has other dims");
        m.*(s.member) = it->values;
    }
    if (tensors.size() != slots().size())
        return error("weights: ", tensors.size(), " tensors, the network has ", slots().size());
    return m;
}

std::vector<WeightTensor> tensors_from_model(const Model& model) {
    std::vector<WeightTensor> out;
    for (const Slot& s : slots()) out.push_back({s.name, s.dims, model.*(s.member)});
    return out;
}

std::string default_weights_path() {
    return NVDLA_LENET_WEIGHTS_DEFAULT;
}

Result<Model> load_model(const std::string& path) {
    Result<std::vector<WeightTensor>> tensors = read_weights(path);
    if (!tensors) return tensors.status();
    Result<Model> m = model_from_tensors(*tensors);
    if (!m) return Status(m.status()).context(path);
    return m;
}

void image_to_input(const uint8_t* pixels, float* input) {
    for (uint32_t i = 0; i < kImagePixels; ++i) input[i] = static_cast<float>(pixels[i]) / 255.0f;
}

namespace {

// out[oc][y][x] = b[oc] + sum w[oc][ic][ky][kx] * in[ic][y + ky - pad][x + kx - pad], ReLU.
void conv_relu(const float* in, uint32_t ic_count, uint32_t side, const float* w, const float* b,
               uint32_t oc_count, uint32_t pad, float* out) {
    const uint32_t out_side = side + 2 * pad - kKernel + 1;
    for (uint32_t oc = 0; oc < oc_count; ++oc) {
        float* o = out + size_t(oc) * out_side * out_side;
        std::fill(o, o + out_side * out_side, b[oc]);
        for (uint32_t ic = 0; ic < ic_count; ++ic)
            for (uint32_t ky = 0; ky < kKernel; ++ky)
                for (uint32_t kx = 0; kx < kKernel; ++kx) {
                    const float wv =
                        w[((size_t(oc) * ic_count + ic) * kKernel + ky) * kKernel + kx];
                    for (uint32_t y = 0; y < out_side; ++y) {
                        const int iy = int(y + ky) - int(pad);
                        if (iy < 0 || iy >= int(side)) continue;
                        const float* row = in + (size_t(ic) * side + uint32_t(iy)) * side;
                        for (uint32_t x = 0; x < out_side; ++x) {
                            const int ix = int(x + kx) - int(pad);
                            if (ix >= 0 && ix < int(side)) o[y * out_side + x] += wv * row[ix];
                        }
                    }
                }
        for (uint32_t i = 0; i < out_side * out_side; ++i) o[i] = std::max(o[i], 0.0f);
    }
}

void maxpool2(const float* in, uint32_t channels, uint32_t side, float* out) {
    const uint32_t h = side / 2;
    for (uint32_t c = 0; c < channels; ++c)
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < h; ++x) {
                const float* p = in + (size_t(c) * side + 2 * y) * side + 2 * x;
                out[(size_t(c) * h + y) * h + x] =
                    std::max(std::max(p[0], p[1]), std::max(p[side], p[side + 1]));
            }
}

void dense(const float* in, uint32_t n_in, const float* w, const float* b, uint32_t n_out,
           bool relu, float* out) {
    for (uint32_t o = 0; o < n_out; ++o) {
        float s = b[o];
        for (uint32_t i = 0; i < n_in; ++i) s += w[size_t(o) * n_in + i] * in[i];
        out[o] = relu ? std::max(s, 0.0f) : s;
    }
}

}  // namespace

std::array<float, kClasses> forward(const Model& m, const float* input) {
    std::vector<float> c1(kConv1 * 28 * 28), p1(kConv1 * 14 * 14), c2(kConv2 * 10 * 10),
        p2(kConv2 * 5 * 5), f1(kFc1), f2(kFc2);
    conv_relu(input, 1, 28, m.conv1_w.data(), m.conv1_b.data(), kConv1, 2, c1.data());
    maxpool2(c1.data(), kConv1, 28, p1.data());
    conv_relu(p1.data(), kConv1, 14, m.conv2_w.data(), m.conv2_b.data(), kConv2, 0, c2.data());
    maxpool2(c2.data(), kConv2, 10, p2.data());
    dense(p2.data(), kConv2 * 25, m.fc1_w.data(), m.fc1_b.data(), kFc1, true, f1.data());
    dense(f1.data(), kFc1, m.fc2_w.data(), m.fc2_b.data(), kFc2, true, f2.data());
    std::array<float, kClasses> logits{};
    dense(f2.data(), kFc2, m.fc3_w.data(), m.fc3_b.data(), kClasses, false, logits.data());
    const float top = *std::max_element(logits.begin(), logits.end());
    float sum = 0;
    for (float& v : logits) sum += (v = std::exp(v - top));
    for (float& v : logits) v /= sum;
    return logits;
}

uint32_t argmax(const float* values, uint32_t count) {
    return static_cast<uint32_t>(std::max_element(values, values + count) - values);
}

}  // namespace nvdla::lenet
