// Int8: channel ranges of convolution inputs equalized (BuildOptions::equalize_channel_ranges).
//
// Activations are quantized per tensor, and the channels of a tensor can span ranges far apart
// (batch norms folded into the convolution before). Where a convolution or batch norm makes
// the channels (through ReLUs, PReLUs and pooling, which commute with a positive factor) and
// only one convolution or fully connected layer reads them, channel k is multiplied by f_k where it
// is made and the reading convolution's weights of input channel k by 1 / f_k: the float network
// computes the same. The producer's change is exact under per-output-channel weight scales, and so
// is a depthwise reader's; a dense reader's weights of the scaled-up channels get coarser relative
// to their size, hence f_k = sqrt(largest range / range_k) (cross-layer equalization) rather
// than the full ratio, which would also leave no channel headroom for inputs beyond its range
// over the calibration samples.
#include <algorithm>
#include <cmath>
#include <optional>

#include "builder/graph.hpp"

namespace nvdla::builder::detail {

namespace {

// A channel that is almost always 0 would otherwise take a huge factor from one stray value.
constexpr float kMaxFactor = 32.0f;

// The tensors from where x's channels are made to x, or empty when they cannot be rescaled.
std::vector<uint32_t> producer_chain(const Network::Impl& net, const Calibration::Impl& cal,
                                     const std::vector<uint32_t>& uses, uint32_t x) {
    const uint32_t channels = net.nodes[x].dims.c;
    std::vector<uint32_t> chain;  // producer first
    for (uint32_t t = x;;) {
        const Node& p = net.nodes[t];
        if (uses[t] != 1 || cal.fixed[t] || cal.channels[t].size() != channels ||
            p.shares_input_scale || p.range_gain != 0 || p.range_offset != 0)
            return {};
        chain.insert(chain.begin(), t);
        if (p.op == Op::Relu || p.op == Op::PRelu || p.op == Op::Pooling) {
            t = p.inputs[0];
            continue;
        }
        const bool made =
            (p.op == Op::Convolution && !p.weights.empty()) ||
            (p.op == Op::Affine && p.scale.size() == channels && p.shift.size() == channels);
        return made ? chain : std::vector<uint32_t>{};
    }
}

}  // namespace

void equalize_channel_ranges(Network::Impl& net, Calibration::Impl& cal) {
    const size_t n = net.nodes.size();
    if (cal.channels.size() < n || cal.range.size() < n || cal.fixed.size() < n) return;
    std::vector<uint32_t> uses(n, 0);
    for (const Node& node : net.nodes)
        for (uint32_t in : node.inputs) ++uses[in];
    for (const OutputInfo& o : net.outputs) uses[o.tensor] += 2;  // an output keeps its values

    for (Node& reader : net.nodes) {
        if ((reader.op != Op::Convolution && reader.op != Op::FullyConnected) ||
            reader.inputs.size() != 1 || reader.weights.empty())
            continue;
        uint32_t x = reader.inputs[0];
        std::optional<uint32_t> flatten;  // a fully connected layer's view of x
        if (net.nodes[x].op == Op::Flatten) {
            if (uses[x] != 1 || cal.fixed[x]) continue;
            flatten = x;
            x = net.nodes[x].inputs[0];
        }
        const uint32_t channels = net.nodes[x].dims.c;
        const uint32_t groups = reader.conv.groups;
        if (channels < 2 || (groups != 1 && groups != channels)) continue;
        const std::vector<uint32_t> chain = producer_chain(net, cal, uses, x);
        if (chain.empty()) continue;

        const std::vector<float>& r = cal.channels[x];
        const float top = *std::max_element(r.begin(), r.end());
        if (!(top > 0)) continue;
        std::vector<float> f(channels, 1.0f);
        for (uint32_t k = 0; k < channels; ++k)
            if (r[k] > 0) f[k] = std::clamp(std::sqrt(top / r[k]), 1.0f, kMaxFactor);

        Node& producer = net.nodes[chain.front()];
        if (producer.op == Op::Convolution) {
            const size_t per_kernel = producer.weights.size() / channels;
            for (uint32_t k = 0; k < channels; ++k) {
                for (size_t i = 0; i < per_kernel; ++i)
                    producer.weights[k * per_kernel + i] *= f[k];
                if (!producer.bias.empty()) producer.bias[k] *= f[k];
            }
        } else {
            for (uint32_t k = 0; k < channels; ++k) {
                producer.scale[k] *= f[k];
                producer.shift[k] *= f[k];
            }
        }
        // KCRS: a dense reader's c runs over all channels, a depthwise reader's kernels (with a
        // channel multiplier, several per input channel) each read one.
        if (groups == 1) {
            const size_t per_kernel = reader.weights.size() / reader.dims.c;
            const size_t plane = per_kernel / channels;
            for (size_t o = 0; o < reader.weights.size() / per_kernel; ++o)
                for (uint32_t k = 0; k < channels; ++k)
                    for (size_t i = 0; i < plane; ++i)
                        reader.weights[o * per_kernel + k * plane + i] /= f[k];
        } else {
            const size_t per_channel = reader.weights.size() / channels;
            for (uint32_t k = 0; k < channels; ++k)
                for (size_t i = 0; i < per_channel; ++i)
                    reader.weights[k * per_channel + i] /= f[k];
        }
        for (uint32_t id : chain) {
            std::vector<float>& ch = cal.channels[id];
            for (uint32_t k = 0; k < channels; ++k) ch[k] *= f[k];
            cal.range[id] = *std::max_element(ch.begin(), ch.end());
        }
        if (flatten) {
            std::vector<float>& ch = cal.channels[*flatten];
            const size_t plane = ch.size() / channels;
            for (size_t i = 0; i < ch.size(); ++i) ch[i] *= f[i / plane];
            if (!ch.empty()) cal.range[*flatten] = *std::max_element(ch.begin(), ch.end());
        }
    }
}

}  // namespace nvdla::builder::detail
