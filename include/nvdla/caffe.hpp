// A Caffe importer: reads a Caffe network (a .prototxt in protobuf text format and a
// .caffemodel of binary weights, the files the original nvdla_compiler takes with --prototxt
// and --caffemodel) and describes it with the network builder (nvdla/builder.hpp).
//
//   Result<nvdla::caffe::Model> m = nvdla::caffe::import_files("deploy.prototxt",
//                                                               "model.caffemodel");
//   if (!m) die(m.message());  // "Caffe layer 'conv3' (Convolution): 3 weight blobs, ..."
//   auto built = nvdla::builder::build(m->network, {.config = "nv_small", ...});
//
// The files are parsed against the project's own definitions of the Caffe messages the layers
// need (umd/caffe/caffe.proto, Caffe's field numbers). Layers and what they become:
//
//   Input (and the net's input + input_dim / input_shape)   network inputs (batch 1)
//   Convolution, Deconvolution   convolution, deconvolution (groups, pads, strides, dilation)
//   InnerProduct                 fully_connected (axis 1; transpose)
//   Pooling                      pooling MAX / AVE (Caffe's ceil rounding as end padding),
//                                global pooling
//   ReLU (negative_slope), PReLU relu, prelu
//   Sigmoid, TanH                sigmoid, tanh
//   LRN                          lrn (across channels)
//   BatchNorm, Scale, Bias       batch_norm (Caffe's scale-factor blob), scale, bias
//   Eltwise                      eltwise SUM (coefficients as scales) / PROD / MAX
//   Concat                       concat (axis 1)
//   Softmax                      softmax (axis 1)
//   Flatten                      flatten (axis 1)
//   Dropout, Split               nothing (inference)
//
// Tops that no later layer reads are the network's outputs, in the order they appear. Anything
// else fails with a sentence naming the layer.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nvdla/api.hpp"
#include "nvdla/builder.hpp"
#include "nvdla/status.hpp"

namespace nvdla::caffe {

// A network input or output (a Caffe blob) and the builder tensor it is.
struct Value {
    std::string name;
    Dims4 dims;
    builder::Tensor tensor;
};

struct Model {
    builder::Network network;
    std::vector<Value> inputs;   // in declaration order
    std::vector<Value> outputs;  // tops no layer consumes, in layer order
    // Caffe blob name -> tensor (the last layer writing it), for calibration tables.
    std::vector<std::pair<std::string, builder::Tensor>> blobs;
};

// prototxt_path: the network (text format); caffemodel_path: its weights (binary NetParameter);
// the weights of each layer are found by the layer's name. An empty caffemodel_path reads a
// network without weight layers.
NVDLA_API Result<Model> import_files(const std::string& prototxt_path,
                                     const std::string& caffemodel_path);
NVDLA_API Result<Model> import_bytes(std::string_view prototxt,
                                     std::span<const std::byte> caffemodel);

}  // namespace nvdla::caffe
