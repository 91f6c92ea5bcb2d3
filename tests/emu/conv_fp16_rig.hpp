// Random fp16 layers for the fp16 kernels' tests (conv_fp16_layers_test.cpp,
// conv_fp16_band_test.cpp): the layer, its data and its weights, and the geometry both draw.
#pragma once
#include <algorithm>
#include <cstdint>
#include <random>

#include "emu/conv_layer.hpp"

namespace nvdla::emu::conv {

struct Fp16Layer {
    ConvLayer l;
    ConvData d;
    ConvWeights w;
};

// A ReLU's output: no negative lane but -0, so that operations take the cell's form for data
// without negative lanes.
inline int16_t without_negatives(uint16_t v) {
    return static_cast<int16_t>((v & 0x7fff) == 0 ? v : v & 0x7fff);
}

// Strides, dilations and padding of 1 or 2 (padding 0 or 1) drawn for l's kernel, and the
// output they give for an input of width x height.
inline void random_strides_and_padding(std::mt19937_64& rng, ConvLayer& l, uint32_t width,
                                       uint32_t height) {
    l.stride_x = 1 + rng() % 2;
    l.stride_y = 1 + rng() % 2;
    l.dilation_x = 1 + rng() % 2;
    l.dilation_y = 1 + rng() % 2;
    l.pad_left = rng() % 2;
    l.pad_top = rng() % 2;
    const uint32_t span_x = (l.kernel_width - 1) * l.dilation_x + 1;
    const uint32_t span_y = (l.kernel_height - 1) * l.dilation_y + 1;
    const uint32_t padded_w = std::max(width + 2 * l.pad_left, span_x);
    const uint32_t padded_h = std::max(height + 2 * l.pad_top, span_y);
    l.out_width = (padded_w - span_x) / l.stride_x + 1;
    l.out_height = (padded_h - span_y) / l.stride_y + 1;
}

// d as l's fp16 feature input of width x height x channels, its values zero.
inline void shape_fp16_feature_data(ConvData& d, const ConvLayer& l, uint32_t width,
                                    uint32_t height, uint32_t channels) {
    d.kind = InputKind::Feature;
    d.precision = Precision::Fp16;
    d.batches = l.batches;
    d.height = height;
    d.width = width;
    d.channels = channels;
    d.row_elements = uint64_t(width) * channels;
    d.values.assign(d.batches * height * d.row_elements, 0);
}

}  // namespace nvdla::emu::conv
