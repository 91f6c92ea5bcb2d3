// nvdla_train_lenet: trains the main job's LeNet-5 class network (tools/lenet/lenet.hpp) on
// Fashion-MNIST and writes its weights file. Deterministic: one thread, a fixed seed, its own
// random generator and initialisation, the same order of every floating-point operation on
// every run; the same binary always writes the same bytes. `make train` runs it
// (docs/main-job.md).
//
// Training: Adam (beta 0.9/0.999), mini-batches of 32, learning rate 2e-3 falling on a cosine to
// 1e-4 over the epochs; He-uniform initialisation; cross-entropy on the softmax.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <numbers>
#include <string>
#include <vector>

#include "lenet.hpp"

namespace {

using namespace nvdla::lenet;

// splitmix64: a tiny generator whose output is the same everywhere.
struct Rng {
    uint64_t state;
    uint64_t next() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [-1, 1).
    float symmetric() { return static_cast<float>(next() >> 40) / float(1 << 23) - 1.0f; }
    uint32_t below(uint32_t n) { return static_cast<uint32_t>(next() % n); }
};

// Sizes of the layers.
constexpr uint32_t kC1Side = 28, kP1Side = 14, kC2Side = 10, kP2Side = 5;
constexpr uint32_t kK = kKernel * kKernel;              // 25
constexpr uint32_t kK2 = kConv1 * kK;                   // 150
constexpr uint32_t kC1Pixels = kC1Side * kC1Side;       // 784
constexpr uint32_t kC2Pixels = kC2Side * kC2Side;       // 100
constexpr uint32_t kFlat = kConv2 * kP2Side * kP2Side;  // 400

// One parameter tensor with its gradient and Adam's moments.
struct Param {
    std::vector<float> value, grad, m, v;
    void init(size_t n) { value.assign(n, 0), grad.assign(n, 0), m.assign(n, 0), v.assign(n, 0); }
};

struct Net {
    Param w1, b1, w2, b2, w3, b3, w4, b4, w5, b5;
    std::vector<Param*> all() { return {&w1, &b1, &w2, &b2, &w3, &b3, &w4, &b4, &w5, &b5}; }
};

void he_uniform(Param& p, uint32_t fan_in, Rng& rng) {
    const float limit = std::sqrt(6.0f / static_cast<float>(fan_in));
    for (float& v : p.value) v = limit * rng.symmetric();
}

// Activations of one sample, kept for the backward pass.
struct Work {
    float col1[kK * kC1Pixels];    // im2col of the padded input
    float a1[kConv1 * kC1Pixels];  // conv1 after ReLU
    float p1[kConv1 * kP1Side * kP1Side];
    uint32_t p1_arg[kConv1 * kP1Side * kP1Side];
    float col2[kK2 * kC2Pixels];
    float a2[kConv2 * kC2Pixels];
    float p2[kFlat];
    uint32_t p2_arg[kFlat];
    float f1[kFc1], f2[kFc2], prob[kClasses];
    // Gradients.
    float d_f2[kFc2], d_f1[kFc1], d_p2[kFlat], d_a2[kConv2 * kC2Pixels];
    float d_col2[kK2 * kC2Pixels], d_p1[kConv1 * kP1Side * kP1Side], d_a1[kConv1 * kC1Pixels];
};

// out[r][p] = b[r] + sum_k w[r][k] * col[k][p].
void matmul_bias(const float* w, const float* b, const float* col, uint32_t rows, uint32_t depth,
                 uint32_t cols, float* out) {
    for (uint32_t r = 0; r < rows; ++r) {
        float* o = out + size_t(r) * cols;
        for (uint32_t p = 0; p < cols; ++p) o[p] = b[r];
        for (uint32_t k = 0; k < depth; ++k) {
            const float wv = w[size_t(r) * depth + k];
            const float* c = col + size_t(k) * cols;
            for (uint32_t p = 0; p < cols; ++p) o[p] += wv * c[p];
        }
    }
}

// A dot product with eight partial sums (vectorisable without reassociation flags).
float dot(const float* a, const float* b, uint32_t n) {
    float s[8] = {};
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (uint32_t j = 0; j < 8; ++j) s[j] += a[i + j] * b[i + j];
    for (; i < n; ++i) s[0] += a[i] * b[i];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

void maxpool_forward(const float* in, uint32_t channels, uint32_t side, float* out, uint32_t* arg) {
    const uint32_t h = side / 2;
    for (uint32_t c = 0; c < channels; ++c)
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < h; ++x) {
                const uint32_t base = (c * side + 2 * y) * side + 2 * x;
                uint32_t best = base;
                for (uint32_t q : {base + 1, base + side, base + side + 1})
                    if (in[q] > in[best]) best = q;
                out[(c * h + y) * h + x] = in[best];
                arg[(c * h + y) * h + x] = best;
            }
}

void forward(Net& net, const uint8_t* pixels, Work& w) {
    // conv1: im2col of the input padded by 2.
    for (uint32_t ky = 0; ky < kKernel; ++ky)
        for (uint32_t kx = 0; kx < kKernel; ++kx) {
            float* c = w.col1 + (ky * kKernel + kx) * kC1Pixels;
            for (uint32_t y = 0; y < kC1Side; ++y)
                for (uint32_t x = 0; x < kC1Side; ++x) {
                    const int iy = int(y + ky) - 2, ix = int(x + kx) - 2;
                    c[y * kC1Side + x] = iy >= 0 && iy < 28 && ix >= 0 && ix < 28
                                             ? static_cast<float>(pixels[iy * 28 + ix]) / 255.0f
                                             : 0.0f;
                }
        }
    matmul_bias(net.w1.value.data(), net.b1.value.data(), w.col1, kConv1, kK, kC1Pixels, w.a1);
    for (float& v : w.a1) v = std::max(v, 0.0f);
    maxpool_forward(w.a1, kConv1, kC1Side, w.p1, w.p1_arg);
    // conv2.
    for (uint32_t ic = 0; ic < kConv1; ++ic)
        for (uint32_t ky = 0; ky < kKernel; ++ky)
            for (uint32_t kx = 0; kx < kKernel; ++kx) {
                float* c = w.col2 + ((ic * kKernel + ky) * kKernel + kx) * kC2Pixels;
                for (uint32_t y = 0; y < kC2Side; ++y)
                    for (uint32_t x = 0; x < kC2Side; ++x)
                        c[y * kC2Side + x] = w.p1[(ic * kP1Side + y + ky) * kP1Side + x + kx];
            }
    matmul_bias(net.w2.value.data(), net.b2.value.data(), w.col2, kConv2, kK2, kC2Pixels, w.a2);
    for (float& v : w.a2) v = std::max(v, 0.0f);
    maxpool_forward(w.a2, kConv2, kC2Side, w.p2, w.p2_arg);
    // Fully connected layers.
    for (uint32_t o = 0; o < kFc1; ++o)
        w.f1[o] = std::max(0.0f, net.b3.value[o] + dot(&net.w3.value[o * kFlat], w.p2, kFlat));
    for (uint32_t o = 0; o < kFc2; ++o)
        w.f2[o] = std::max(0.0f, net.b4.value[o] + dot(&net.w4.value[o * kFc1], w.f1, kFc1));
    float logits[kClasses];
    for (uint32_t o = 0; o < kClasses; ++o)
        logits[o] = net.b5.value[o] + dot(&net.w5.value[o * kFc2], w.f2, kFc2);
    const float top = *std::max_element(logits, logits + kClasses);
    float sum = 0;
    for (uint32_t o = 0; o < kClasses; ++o) sum += (w.prob[o] = std::exp(logits[o] - top));
    for (float& p : w.prob) p /= sum;
}

// Adds this sample's gradients of the cross-entropy loss to the parameters' gradients.
void backward(Net& net, uint32_t label, Work& w) {
    float d_logits[kClasses];
    for (uint32_t o = 0; o < kClasses; ++o) d_logits[o] = w.prob[o] - (o == label ? 1.0f : 0.0f);
    // fc3.
    std::fill(std::begin(w.d_f2), std::end(w.d_f2), 0.0f);
    for (uint32_t o = 0; o < kClasses; ++o) {
        net.b5.grad[o] += d_logits[o];
        float* g = &net.w5.grad[o * kFc2];
        const float* wv = &net.w5.value[o * kFc2];
        for (uint32_t i = 0; i < kFc2; ++i) {
            g[i] += d_logits[o] * w.f2[i];
            w.d_f2[i] += d_logits[o] * wv[i];
        }
    }
    for (uint32_t i = 0; i < kFc2; ++i)
        if (w.f2[i] <= 0) w.d_f2[i] = 0;
    // fc2.
    std::fill(std::begin(w.d_f1), std::end(w.d_f1), 0.0f);
    for (uint32_t o = 0; o < kFc2; ++o) {
        const float d = w.d_f2[o];
        if (d == 0) continue;
        net.b4.grad[o] += d;
        float* g = &net.w4.grad[o * kFc1];
        const float* wv = &net.w4.value[o * kFc1];
        for (uint32_t i = 0; i < kFc1; ++i) {
            g[i] += d * w.f1[i];
            w.d_f1[i] += d * wv[i];
        }
    }
    for (uint32_t i = 0; i < kFc1; ++i)
        if (w.f1[i] <= 0) w.d_f1[i] = 0;
    // fc1.
    std::fill(std::begin(w.d_p2), std::end(w.d_p2), 0.0f);
    for (uint32_t o = 0; o < kFc1; ++o) {
        const float d = w.d_f1[o];
        if (d == 0) continue;
        net.b3.grad[o] += d;
        float* g = &net.w3.grad[o * kFlat];
        const float* wv = &net.w3.value[o * kFlat];
        for (uint32_t i = 0; i < kFlat; ++i) {
            g[i] += d * w.p2[i];
            w.d_p2[i] += d * wv[i];
        }
    }
    // pool2 and ReLU of conv2.
    std::fill(std::begin(w.d_a2), std::end(w.d_a2), 0.0f);
    for (uint32_t i = 0; i < kFlat; ++i)
        if (w.a2[w.p2_arg[i]] > 0) w.d_a2[w.p2_arg[i]] += w.d_p2[i];
    // conv2: weights, bias and the input's gradient (through col2).
    for (uint32_t oc = 0; oc < kConv2; ++oc) {
        const float* d = w.d_a2 + oc * kC2Pixels;
        float s = 0;
        for (uint32_t p = 0; p < kC2Pixels; ++p) s += d[p];
        net.b2.grad[oc] += s;
        for (uint32_t k = 0; k < kK2; ++k)
            net.w2.grad[oc * kK2 + k] += dot(d, w.col2 + k * kC2Pixels, kC2Pixels);
    }
    std::fill(std::begin(w.d_col2), std::end(w.d_col2), 0.0f);
    for (uint32_t oc = 0; oc < kConv2; ++oc) {
        const float* d = w.d_a2 + oc * kC2Pixels;
        for (uint32_t k = 0; k < kK2; ++k) {
            const float wv = net.w2.value[oc * kK2 + k];
            float* c = w.d_col2 + k * kC2Pixels;
            for (uint32_t p = 0; p < kC2Pixels; ++p) c[p] += wv * d[p];
        }
    }
    std::fill(std::begin(w.d_p1), std::end(w.d_p1), 0.0f);
    for (uint32_t ic = 0; ic < kConv1; ++ic)
        for (uint32_t ky = 0; ky < kKernel; ++ky)
            for (uint32_t kx = 0; kx < kKernel; ++kx) {
                const float* c = w.d_col2 + ((ic * kKernel + ky) * kKernel + kx) * kC2Pixels;
                for (uint32_t y = 0; y < kC2Side; ++y)
                    for (uint32_t x = 0; x < kC2Side; ++x)
                        w.d_p1[(ic * kP1Side + y + ky) * kP1Side + x + kx] += c[y * kC2Side + x];
            }
    // pool1 and ReLU of conv1.
    std::fill(std::begin(w.d_a1), std::end(w.d_a1), 0.0f);
    for (uint32_t i = 0; i < kConv1 * kP1Side * kP1Side; ++i)
        if (w.a1[w.p1_arg[i]] > 0) w.d_a1[w.p1_arg[i]] += w.d_p1[i];
    // conv1: weights and bias (the input needs no gradient).
    for (uint32_t oc = 0; oc < kConv1; ++oc) {
        const float* d = w.d_a1 + oc * kC1Pixels;
        float s = 0;
        for (uint32_t p = 0; p < kC1Pixels; ++p) s += d[p];
        net.b1.grad[oc] += s;
        for (uint32_t k = 0; k < kK; ++k)
            net.w1.grad[oc * kK + k] += dot(d, w.col1 + k * kC1Pixels, kC1Pixels);
    }
}

void adam_step(Net& net, float lr, uint32_t step, uint32_t batch) {
    constexpr float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    const float c1 = 1.0f - std::pow(b1, static_cast<float>(step));
    const float c2 = 1.0f - std::pow(b2, static_cast<float>(step));
    const float inv_batch = 1.0f / static_cast<float>(batch);
    for (Param* p : net.all())
        for (size_t i = 0; i < p->value.size(); ++i) {
            const float g = p->grad[i] * inv_batch;
            p->m[i] = b1 * p->m[i] + (1 - b1) * g;
            p->v[i] = b2 * p->v[i] + (1 - b2) * g * g;
            p->value[i] -= lr * (p->m[i] / c1) / (std::sqrt(p->v[i] / c2) + eps);
            p->grad[i] = 0;
        }
}

Model to_model(const Net& net) {
    Model m;
    m.conv1_w = net.w1.value, m.conv1_b = net.b1.value;
    m.conv2_w = net.w2.value, m.conv2_b = net.b2.value;
    m.fc1_w = net.w3.value, m.fc1_b = net.b3.value;
    m.fc2_w = net.w4.value, m.fc2_b = net.b4.value;
    m.fc3_w = net.w5.value, m.fc3_b = net.b5.value;
    return m;
}

double accuracy(Net& net, const Dataset& set, Work& w) {
    uint32_t right = 0;
    for (uint32_t i = 0; i < set.count; ++i) {
        forward(net, set.image(i), w);
        right += argmax(w.prob, kClasses) == set.labels[i];
    }
    return 100.0 * right / set.count;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Trains the main job's LeNet on Fashion-MNIST and writes its weights.",
                 "nvdla_train_lenet"};
    std::string dataset = kDefaultDatasetDir, output = "lenet_fmnist.weights";
    uint32_t epochs = 10, batch = 32, train_limit = 0;
    uint64_t seed = 20240601;
    float lr = 2e-3f, lr_end = 1e-4f;
    app.add_option("--dataset", dataset, "directory of the Fashion-MNIST IDX files");
    app.add_option("--output", output, "weights file to write");
    app.add_option("--epochs", epochs, "passes over the training set")->check(CLI::Range(1, 100));
    app.add_option("--batch", batch, "mini-batch size")->check(CLI::Range(1, 4096));
    app.add_option("--lr", lr, "initial learning rate");
    app.add_option("--lr-end", lr_end, "final learning rate (cosine schedule)");
    app.add_option("--seed", seed, "random seed (initialisation and shuffling)");
    app.add_option("--train-limit", train_limit, "use only the first N training images (tests)");
    CLI11_PARSE(app, argc, argv);

    auto train = load_fashion_mnist(dataset, true);
    if (!train) {
        std::cerr << "nvdla_train_lenet: " << train.message()
                  << " (install dataset-fashion-mnist or pass --dataset)\n";
        return 1;
    }
    auto test = load_fashion_mnist(dataset, false);
    if (!test) {
        std::cerr << "nvdla_train_lenet: " << test.message() << "\n";
        return 1;
    }
    const uint32_t n = train_limit ? std::min(train_limit, train->count) : train->count;

    Rng rng{seed};
    Net net;
    net.w1.init(kConv1 * kK), net.b1.init(kConv1);
    net.w2.init(kConv2 * kK2), net.b2.init(kConv2);
    net.w3.init(kFc1 * kFlat), net.b3.init(kFc1);
    net.w4.init(kFc2 * kFc1), net.b4.init(kFc2);
    net.w5.init(kClasses * kFc2), net.b5.init(kClasses);
    he_uniform(net.w1, kK, rng);
    he_uniform(net.w2, kK2, rng);
    he_uniform(net.w3, kFlat, rng);
    he_uniform(net.w4, kFc1, rng);
    he_uniform(net.w5, kFc2, rng);

    auto work = std::make_unique<Work>();
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    const uint32_t steps_per_epoch = (n + batch - 1) / batch;
    const uint32_t total_steps = steps_per_epoch * epochs;
    uint32_t step = 0;
    const auto start = std::chrono::steady_clock::now();
    std::printf("training on %u images, %u epochs of %u batches of %u\n", n, epochs,
                steps_per_epoch, batch);
    for (uint32_t epoch = 0; epoch < epochs; ++epoch) {
        for (uint32_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
        double loss = 0;
        for (uint32_t b = 0; b < steps_per_epoch; ++b) {
            const uint32_t first = b * batch, last = std::min(n, first + batch);
            for (uint32_t i = first; i < last; ++i) {
                const uint32_t index = order[i];
                forward(net, train->image(index), *work);
                loss -= std::log(std::max(work->prob[train->labels[index]], 1e-30f));
                backward(net, train->labels[index], *work);
            }
            const double t = static_cast<double>(step) / total_steps;
            const float rate = lr_end + (lr - lr_end) * 0.5f *
                                            static_cast<float>(1 + std::cos(std::numbers::pi * t));
            adam_step(net, rate, ++step, last - first);
        }
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("epoch %u: loss %.4f, test accuracy %.2f%% (%.0f s)\n", epoch + 1, loss / n,
                    accuracy(net, *test, *work), secs);
        std::fflush(stdout);
    }
    const Model model = to_model(net);
    // The float forward pass of tools/lenet must agree with the trainer's.
    uint32_t right = 0;
    std::vector<float> input(kImagePixels);
    for (uint32_t i = 0; i < test->count; ++i) {
        image_to_input(test->image(i), input.data());
        const auto prob = nvdla::lenet::forward(model, input.data());
        right += argmax(prob.data(), kClasses) == test->labels[i];
    }
    std::printf("float test accuracy: %.2f%% (%u of %u)\n", 100.0 * right / test->count, right,
                test->count);
    if (auto s = write_weights(output, tensors_from_model(model)); !s) {
        std::cerr << "nvdla_train_lenet: " << s.message() << "\n";
        return 1;
    }
    std::printf("wrote %s\n", output.c_str());
    return 0;
}
