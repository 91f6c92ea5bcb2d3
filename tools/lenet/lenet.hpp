// The main job's network: a LeNet-5 class CNN for Fashion-MNIST, its weights file, the data set
// (Debian's dataset-fashion-mnist) and a plain float forward pass. Shared by the trainer
// (tools/train_lenet), the main job (tools/nvdla_mainjob), its tests and its benchmark.
//
// The network (docs/main-job.md), input 1x28x28 with pixel values / 255:
//
//   conv1  6 filters 5x5, pad 2, + bias, ReLU   -> 6x28x28
//   pool1  max 2x2, stride 2                    -> 6x14x14
//   conv2  16 filters 5x5, + bias, ReLU         -> 16x10x10
//   pool2  max 2x2, stride 2                    -> 16x5x5
//   fc1    400 -> 120, ReLU
//   fc2    120 -> 84, ReLU
//   fc3    84 -> 10
//   prob   softmax
//
// Weights file (little-endian): "NVLENET1", uint32 tensor count, then per tensor: uint32 name
// length, the name (ASCII), uint32 rank, uint32 dims[rank], float32 values[product of dims]
// (row-major). Tensors: conv1.weight [6,1,5,5], conv1.bias [6], conv2.weight [16,6,5,5],
// conv2.bias [16], fc1.weight [120,400] (inputs in c,h,w order of pool2's 16x5x5), fc1.bias,
// fc2.weight [84,120], fc2.bias, fc3.weight [10,84], fc3.bias.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nvdla/builder.hpp"
#include "nvdla/runtime.hpp"
#include "nvdla/status.hpp"

namespace nvdla::lenet {

inline constexpr uint32_t kImageSide = 28;
inline constexpr uint32_t kImagePixels = kImageSide * kImageSide;
inline constexpr uint32_t kClasses = 10;

// Fashion-MNIST's class names, by label.
inline constexpr std::array<std::string_view, kClasses> kClassNames = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

// Where Debian's dataset-fashion-mnist installs the IDX files.
inline constexpr const char* kDefaultDatasetDir = "/usr/share/datasets/fashion-mnist";

// Images (uint8, row-major, 28x28 each) and their labels.
struct Dataset {
    uint32_t count = 0;
    std::vector<uint8_t> pixels;
    std::vector<uint8_t> labels;

    const uint8_t* image(uint32_t i) const { return pixels.data() + size_t(i) * kImagePixels; }
};

// Reads DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (gzip or plain): every image,
// or the first `limit` ones.
Result<Dataset> load_fashion_mnist(const std::string& dir, bool train, uint32_t limit = 0);

// A named float tensor of the weights file.
struct WeightTensor {
    std::string name;
    std::vector<uint32_t> dims;
    std::vector<float> values;

    uint64_t elements() const;
};

Result<std::vector<WeightTensor>> read_weights(const std::string& path);
Status write_weights(const std::string& path, const std::vector<WeightTensor>& tensors);

// The network's parameters, checked against the shapes above.
struct Model {
    std::vector<float> conv1_w, conv1_b;  // [6][1][5][5], [6]
    std::vector<float> conv2_w, conv2_b;  // [16][6][5][5], [16]
    std::vector<float> fc1_w, fc1_b;      // [120][400], [120]
    std::vector<float> fc2_w, fc2_b;      // [84][120], [84]
    std::vector<float> fc3_w, fc3_b;      // [10][84], [10]
};

inline constexpr uint32_t kConv1 = 6, kConv2 = 16, kFc1 = 120, kFc2 = 84, kKernel = 5;

Result<Model> model_from_tensors(const std::vector<WeightTensor>& tensors);
std::vector<WeightTensor> tensors_from_model(const Model& model);
Result<Model> load_model(const std::string& path);
// The weights file committed with the sources (tools/lenet/lenet_fmnist.weights).
std::string default_weights_path();

// The input the network takes: pixel / 255, 1x28x28.
void image_to_input(const uint8_t* pixels, float* input);

// Float forward pass (the trainer's), 10 probabilities for one image of pixel / 255 values.
std::array<float, kClasses> forward(const Model& model, const float* input);

// Index of the largest value (the first one on ties).
uint32_t argmax(const float* values, uint32_t count);

// ---- The network on NVDLA (the builder) ----

// The network for the builder. Its input "data" {1, 1, 28, 28} takes the raw pixel values
// 0..255 (conv1's weights are divided by 255), so that `nvdla_runtime --image` feeds it as it
// is: fp16 inputs get the pixel values, int8 inputs round(pixel * 127 / 255) with the input
// scale 255 / 127. Its output "prob" {1, 10, 1, 1} is the softmax.
builder::Network describe_network(const Model& model);

// The input tensor of one image: the raw pixel values as floats.
builder::HostTensor image_tensor(const uint8_t* pixels);

// Activation ranges from the float reference on the first `count` images of `set`, with the
// input's range fixed at 255 (what the runtime's int8 image conversion assumes).
Result<builder::Calibration> calibrate(const builder::Network& net, const Dataset& set,
                                       uint32_t count);

// Builds the network for a configuration and precision (int8 needs the calibration).
Result<builder::CompiledNetwork> build_network(const builder::Network& net,
                                               const std::string& config, Precision precision,
                                               const builder::Calibration* calibration);

// One loaded network on one runtime with one context: classifies images one at a time.
class Classifier {
  public:
    static Result<std::unique_ptr<Classifier>> open(const builder::CompiledNetwork& compiled,
                                                    const RuntimeOptions& options);
    // The 10 probabilities of one image; profiling timings of the last run in timing().
    Result<std::array<float, kClasses>> classify(const uint8_t* pixels);
    const RunTiming& timing() const { return context_->last_timing(); }
    Runtime& runtime() { return *runtime_; }

  private:
    builder::TensorDesc input_, output_;
    std::unique_ptr<Runtime> runtime_;
    std::shared_ptr<Network> network_;
    std::unique_ptr<Context> context_;
    builder::HostTensor image_;
};

}  // namespace nvdla::lenet
