// nvdla_compiler's data: calibration samples from a directory of images or tensors, and the
// original stack's JSON calibration tables (docs/compiler.md).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nvdla/builder.hpp"
#include "nvdla/status.hpp"

namespace nvdla::compiler {

// How image files become the network's input values: (pixel - mean[c]) * scale, channel c in
// the order the network expects (BGR as Caffe and the original runtime, or RGB).
struct ImagePreprocess {
    std::array<float, 4> mean{};
    float scale = 1.0f;
    bool rgb = false;
    // Scale the shorter side to the input's larger side and crop the centre; without it an
    // image of another size is an error.
    bool resize = false;
};

// One calibration sample for a single-input network: the network's values and, for images,
// the pixel values before mean and scale (an image-mode input runs on those).
struct Sample {
    std::string path;
    builder::HostTensor values;
    std::optional<builder::HostTensor> pixels;
};

// Files of `dir` (sorted by name) that are images (.pgm .ppm .pnm .png .jpg .jpeg) or tensors
// (.pb TensorProto, .npy float32/float64), at most `limit` of them.
Result<std::vector<std::string>> list_samples(const std::string& dir, uint32_t limit);
// One file as a sample for an input of `dims`.
Result<Sample> load_sample(const std::string& path, Dims4 dims, const ImagePreprocess& pre);
// The largest magnitude an input can take from images under `pre` (pixels 0..255).
float image_input_range(const ImagePreprocess& pre, uint32_t channels);

// The original stack's calibration table: {"blob": {"scale": s, "min": 0, "max": 0,
// "offset": 0}, ...}; the range of a blob is scale * 127.
Result<std::map<std::string, float>> read_calibration_table(const std::string& path);
// Writes ranges in the same format (scale = range / 127).
std::string calibration_table_json(const std::map<std::string, float>& ranges);

// Reads a .npy file of float32 or float64 (C order): its shape and values.
struct NpyArray {
    std::vector<int64_t> shape;
    std::vector<float> values;
};
Result<NpyArray> read_npy(const std::string& path);

}  // namespace nvdla::compiler
