// The evidence that two image-input loadables of the original compiler miss their float output
// because of their weights, not because of our image path: rebuilding the first convolution's
// weights from the caffemodel, in the layout CSC reads (nvdla/hw cmod), makes the emulator's
// output match (docs/runtime.md, "Loadables from the original compiler", defects A and C).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "nvdla/hw/dla_interface.h"
#include "nvdla/precision/fp16.hpp"
#include "nvdla/runtime.hpp"
#include "runtime/loadable.hpp"
#include "test_support.hpp"

namespace nvdla {
namespace {

namespace fs = std::filesystem;

fs::path corpus_dir() {
    return test::shared_dir() / "vectors" / "orig-compiler";
}

std::vector<std::byte> read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> out(c.size());
    std::memcpy(out.data(), c.data(), c.size());
    return out;
}

std::vector<float> read_f32(const fs::path& path) {
    const std::vector<std::byte> b = read_bytes(path);
    std::vector<float> v(b.size() / 4);
    std::memcpy(v.data(), b.data(), v.size() * 4);
    return v;
}

// The float blobs of each layer of a caffemodel: NetParameter.layer (100) -> LayerParameter
// name (1), blobs (7) -> BlobProto data (5, packed floats). Protobuf wire format, no schema.
class WireReader {
  public:
    explicit WireReader(std::span<const std::byte> b) : b_(b) {}
    bool done() const { return pos_ >= b_.size(); }
    uint64_t varint() {
        uint64_t v = 0;
        for (int shift = 0; pos_ < b_.size() && shift < 64; shift += 7) {
            const auto c = static_cast<uint8_t>(b_[pos_++]);
            v |= uint64_t(c & 0x7f) << shift;
            if (!(c & 0x80)) return v;
        }
        ok_ = false;
        return 0;
    }
    // The next field: its number and, for length-delimited ones, its bytes.
    bool next(uint32_t& field, std::span<const std::byte>& bytes) {
        const uint64_t key = varint();
        field = static_cast<uint32_t>(key >> 3);
        bytes = {};
        switch (key & 7) {
            case 0: varint(); break;
            case 1: pos_ += 8; break;
            case 5: pos_ += 4; break;
            case 2: {
                const uint64_t n = varint();
                if (n > b_.size() - std::min(pos_, b_.size())) return ok_ = false;
                bytes = b_.subspan(pos_, n);
                pos_ += n;
                break;
            }
            default: return ok_ = false;
        }
        return ok_ && pos_ <= b_.size();
    }

  private:
    std::span<const std::byte> b_;
    size_t pos_ = 0;
    bool ok_ = true;
};

std::map<std::string, std::vector<std::vector<float>>> caffe_blobs(const fs::path& path) {
    const std::vector<std::byte> bytes = read_bytes(path);
    std::map<std::string, std::vector<std::vector<float>>> out;
    WireReader net(bytes);
    uint32_t field;
    std::span<const std::byte> layer;
    while (!net.done() && net.next(field, layer)) {
        if (field != 100) continue;
        std::string name;
        std::vector<std::vector<float>> blobs;
        WireReader l(layer);
        std::span<const std::byte> value;
        while (!l.done() && l.next(field, value)) {
            if (field == 1) name.assign(reinterpret_cast<const char*>(value.data()), value.size());
            if (field != 7) continue;
            WireReader blob(value);
            std::span<const std::byte> data;
            while (!blob.done() && blob.next(field, data))
                if (field == 5) {
                    std::vector<float> f(data.size() / 4);
                    std::memcpy(f.data(), data.data(), f.size() * 4);
                    blobs.push_back(std::move(f));
                }
        }
        out[name] = std::move(blobs);
    }
    return out;
}

// Replaces the weights of operation 0 (a convolution) of the loadable with `weights` (fp16).
std::vector<std::byte> with_first_weights(std::span<const std::byte> bytes,
                                          const std::vector<float>& weights) {
    runtime::Loadable l = std::move(runtime::parse_loadable(bytes)).value();
    const runtime::TaskEntry& task = l.tasks[0];
    const std::vector<std::byte>* surfaces = nullptr;
    for (const runtime::LoadableBlob& b : l.blobs)
        if (b.interface == runtime::TaskInterface::Dla1 &&
            b.sub_interface == runtime::kSubInterfaceSurfaces)
            surfaces = &b.data;
    if (!surfaces || surfaces->size() < sizeof(nvdla_dla_conv_surface_desc)) {
        ADD_FAILURE() << "the loadable has no DLA surface list";
        return {};
    }
    nvdla_dla_conv_surface_desc s;
    std::memcpy(&s, surfaces->data(), sizeof(s));
    const runtime::AddressEntry& a = l.addresses[task.addresses[s.weight_data.address]];
    const uint64_t start = a.offset + s.weight_data.offset;
    EXPECT_LE(weights.size() * 2, s.weight_data.size);
    for (const runtime::MemoryContent& c : l.memories[a.mem_id].contents) {
        std::vector<std::byte>& data = l.blobs[c.blob].data;
        if (start < c.offset || start - c.offset + weights.size() * 2 > data.size()) continue;
        for (size_t i = 0; i < weights.size(); ++i) {
            const uint16_t h = fp16::from_float(weights[i]);
            std::memcpy(data.data() + (start - c.offset) + 2 * i, &h, 2);
        }
        return runtime::serialize_loadable(l);
    }
    ADD_FAILURE() << "the weights are not in a SET blob";
    return {};
}

// Runs an fp16 loadable with image input (C forced to 4) on nv_full; the 10 probabilities.
std::vector<float> run_image(std::span<const std::byte> loadable, const std::vector<float>& x,
                             uint32_t c, uint32_t h, uint32_t w) {
    RuntimeOptions o;
    o.backend = BackendChoice::Emu;
    auto rt = std::move(Runtime::open(o)).value();
    auto net = std::move(rt->load(loadable)).value();
    auto ctx = std::move(net->create_context()).value();
    const TensorInfo& in = net->inputs()[0];
    std::span<std::byte> dst = ctx->input(0);
    std::fill(dst.begin(), dst.end(), std::byte{0});
    for (uint32_t ch = 0; ch < c; ++ch)
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t i = 0; i < w; ++i) {
                const uint16_t v = fp16::from_float(x[(ch * h + y) * w + i]);
                std::memcpy(dst.data() + y * in.line_stride() + i * 8 + ch * 2, &v, 2);
            }
    EXPECT_TRUE(ctx->run().ok());
    std::vector<float> out(10);
    for (size_t k = 0; k < 10; ++k) {
        uint16_t v;
        std::memcpy(&v, ctx->output(0).data() + 2 * k, 2);
        out[k] = fp16::to_float(v);
    }
    return out;
}

double max_error_of_range(const std::vector<float>& y, const std::vector<float>& e) {
    double err = 0;
    for (size_t i = 0; i < y.size(); ++i) err = std::max(err, std::abs(double(y[i]) - e[i]));
    return err / (*std::max_element(e.begin(), e.end()) - *std::min_element(e.begin(), e.end()));
}

// Defect A. LeNet's conv1 (20 kernels 5x5 on one channel, image C = 4) is pre-extended to
// 1x5x20 (channel s * 4 + c) and post-extended by 2: per group of 16 kernels, stripes of
// kernel rows {0,1}, {2,3}, then {4}, each kernel's rows packed together.
TEST(OrigCompilerWeights, LenetPostExtendedRowsRebuilt) {
    NVDLA_REQUIRE_SHARED();
    const fs::path dir = corpus_dir() / "lenet";
    const std::vector<float> w = caffe_blobs(dir / "model.caffemodel").at("conv1").at(0);
    ASSERT_EQ(w.size(), 20u * 25);
    auto weight = [&](uint32_t k, uint32_t r, uint32_t e) {
        return e % 4 == 0 ? w[k * 25 + r * 5 + e / 4] : 0.0f;
    };
    std::vector<float> layout;
    for (uint32_t group = 0; group < 20; group += 16) {
        const uint32_t end = std::min(group + 16, 20u);
        for (const std::vector<uint32_t>& rows : {std::vector<uint32_t>{0, 1}, {2, 3}, {4}})
            for (uint32_t k = group; k < end; ++k)
                for (uint32_t r : rows)
                    for (uint32_t e = 0; e < 20; ++e) layout.push_back(weight(k, r, e));
    }
    const std::vector<std::byte> compiled = read_bytes(dir / "fp16_nv_full.nvdla");
    const std::vector<float> x = read_f32(dir / "input.f32");
    const std::vector<float> expected = read_f32(dir / "expected.f32");
    EXPECT_GT(max_error_of_range(run_image(compiled, x, 1, 28, 28), expected), 0.5);
    EXPECT_LT(
        max_error_of_range(run_image(with_first_weights(compiled, layout), x, 1, 28, 28), expected),
        1e-2);
}

// Defect C. The residual net's conv1 (16 kernels 3x3x3, stride 2, no bias) with BatchNorm and
// Scale folded in per kernel, pre-extended to 1x3x12: rows, then kernels, then s * 4 + c.
TEST(OrigCompilerWeights, ResnetBatchNormFoldRebuilt) {
    NVDLA_REQUIRE_SHARED();
    const fs::path dir = corpus_dir() / "resnet_small";
    const auto blobs = caffe_blobs(dir / "model.caffemodel");
    const std::vector<float>& w = blobs.at("conv1").at(0);
    const auto& bn = blobs.at("bn_conv1");
    const std::vector<float>& gamma = blobs.at("scale_conv1").at(0);
    ASSERT_EQ(w.size(), 16u * 27);
    std::vector<float> layout;
    for (uint32_t r = 0; r < 3; ++r)
        for (uint32_t k = 0; k < 16; ++k) {
            const float fold = gamma[k] / std::sqrt(bn[1][k] / bn[2][0] + 1e-5f);
            for (uint32_t e = 0; e < 12; ++e) {
                const uint32_t s = e / 4, c = e % 4;
                layout.push_back(c < 3 ? w[k * 27 + c * 9 + r * 3 + s] * fold : 0.0f);
            }
        }
    const std::vector<std::byte> compiled = read_bytes(dir / "fp16_nv_full.nvdla");
    const std::vector<float> x = read_f32(dir / "input.f32");
    const std::vector<float> expected = read_f32(dir / "expected.f32");
    EXPECT_GT(max_error_of_range(run_image(compiled, x, 3, 32, 32), expected), 0.5);
    EXPECT_LT(
        max_error_of_range(run_image(with_first_weights(compiled, layout), x, 3, 32, 32), expected),
        1e-2);
}

}  // namespace
}  // namespace nvdla
