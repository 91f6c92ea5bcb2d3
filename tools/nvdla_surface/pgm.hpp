// Reading binary PGM (P5) images with 8-bit samples.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "nvdla/status.hpp"

namespace nvdla::tools {

struct GrayImage {
    uint32_t width = 0, height = 0;
    std::vector<uint8_t> pixels;  // row-major
};

Result<GrayImage> read_pgm(const std::filesystem::path& path);

}  // namespace nvdla::tools
