// The main job's network on NVDLA: its description for the builder, calibration, building, and a
// classifier running a compiled network on a runtime (lenet.hpp).
#include <algorithm>

#include "lenet.hpp"

namespace nvdla::lenet {

builder::Network describe_network(const Model& m) {
    using namespace builder;
    builder::Network net("lenet_fmnist");
    Tensor x = net.input("data", {1, 1, kImageSide, kImageSide});
    std::vector<float> w1 = m.conv1_w;
    for (float& v : w1) v /= 255.0f;  // the input is pixel values, the weights expect / 255
    x = net.convolution(x,
                        {.out_channels = kConv1,
                         .kernel_h = kKernel,
                         .kernel_w = kKernel,
                         .pad_top = 2,
                         .pad_left = 2,
                         .pad_bottom = 2,
                         .pad_right = 2},
                        w1, m.conv1_b, "conv1");
    x = net.relu(x, "relu1");
    const PoolingDesc pool{
        .type = PoolingType::Max, .kernel_h = 2, .kernel_w = 2, .stride_h = 2, .stride_w = 2};
    x = net.pooling(x, pool, "pool1");
    x = net.convolution(x, {.out_channels = kConv2, .kernel_h = kKernel, .kernel_w = kKernel},
                        m.conv2_w, m.conv2_b, "conv2");
    x = net.relu(x, "relu2");
    x = net.pooling(x, pool, "pool2");
    x = net.fully_connected(x, kFc1, m.fc1_w, m.fc1_b, "fc1");
    x = net.relu(x, "relu3");
    x = net.fully_connected(x, kFc2, m.fc2_w, m.fc2_b, "fc2");
    x = net.relu(x, "relu4");
    x = net.fully_connected(x, kClasses, m.fc3_w, m.fc3_b, "fc3");
    net.output(net.softmax(x, "prob"), "prob");
    return net;
}

builder::HostTensor image_tensor(const uint8_t* pixels) {
    builder::HostTensor t = builder::make_host_tensor({1, 1, kImageSide, kImageSide});
    for (uint32_t i = 0; i < kImagePixels; ++i) t.data[i] = static_cast<float>(pixels[i]);
    return t;
}

Result<builder::Calibration> calibrate(const builder::Network& net, const Dataset& set,
                                       uint32_t count) {
    builder::Calibration cal;
    count = std::min(count, set.count);
    for (uint32_t i = 0; i < count; ++i)
        if (Status s = cal.add_sample(net, {image_tensor(set.image(i))}); !s) return s;
    cal.set_range(net.inputs()[0], 255.0f);
    return cal;
}

Result<builder::CompiledNetwork> build_network(const builder::Network& net,
                                               const std::string& config, Precision precision,
                                               const builder::Calibration* calibration) {
    builder::BuildOptions options;
    options.config = config;
    options.precision = precision;
    options.calibration = calibration;
    return builder::build(net, options);
}

Result<std::unique_ptr<Classifier>> Classifier::open(const builder::CompiledNetwork& compiled,
                                                     const RuntimeOptions& options) {
    if (compiled.inputs.size() != 1 || compiled.outputs.size() != 1)
        return Status::failure("the LeNet loadable must have one input and one output");
    auto c = std::make_unique<Classifier>();
    c->input_ = compiled.inputs[0];
    c->output_ = compiled.outputs[0];
    RuntimeOptions ro = options;
    ro.emu_config = compiled.config;
    Result<std::unique_ptr<Runtime>> rt = Runtime::open(ro);
    if (!rt) return rt.status();
    c->runtime_ = std::move(rt).value();
    Result<std::shared_ptr<Network>> net = c->runtime_->load(compiled.loadable);
    if (!net) return net.status();
    c->network_ = std::move(net).value();
    Result<std::unique_ptr<Context>> ctx = c->network_->create_context();
    if (!ctx) return ctx.status();
    c->context_ = std::move(ctx).value();
    c->image_ = builder::make_host_tensor({1, 1, kImageSide, kImageSide});
    return c;
}

Result<std::array<float, kClasses>> Classifier::classify(const uint8_t* pixels) {
    for (uint32_t i = 0; i < kImagePixels; ++i) image_.data[i] = static_cast<float>(pixels[i]);
    if (Status s = builder::pack_input(input_, image_, context_->input(0)); !s) return s;
    if (Status s = context_->run(); !s) return s;
    Result<builder::HostTensor> out = builder::unpack_output(output_, context_->output(0));
    if (!out) return out.status();
    if (out->data.size() != kClasses)
        return error("the network's output has ", out->data.size(), " values, not ", kClasses);
    std::array<float, kClasses> p{};
    std::copy(out->data.begin(), out->data.end(), p.begin());
    return p;
}

}  // namespace nvdla::lenet
