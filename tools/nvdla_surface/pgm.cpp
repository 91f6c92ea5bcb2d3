#include "pgm.hpp"

#include <cctype>
#include <fstream>
#include <iterator>
#include <string>

namespace nvdla::tools {
namespace {

// Reads the next header number, skipping whitespace and '#' comments.
bool next_number(const std::string& data, size_t& pos, uint64_t& value) {
    while (pos < data.size()) {
        if (data[pos] == '#') {
            while (pos < data.size() && data[pos] != '\n') ++pos;
        } else if (std::isspace(static_cast<unsigned char>(data[pos]))) {
            ++pos;
        } else {
            break;
        }
    }
    if (pos >= data.size() || !std::isdigit(static_cast<unsigned char>(data[pos]))) return false;
    value = 0;
    while (pos < data.size() && std::isdigit(static_cast<unsigned char>(data[pos]))) {
        value = value * 10 + uint64_t(data[pos++] - '0');
        if (value > 1u << 20) return false;
    }
    return true;
}

}  // namespace

Result<GrayImage> read_pgm(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return error(path.string(), ": cannot open");
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (data.size() < 2 || data[0] != 'P' || data[1] != '5')
        return error(path.string(), ": not a binary PGM image (no P5 signature)");
    size_t pos = 2;
    uint64_t w = 0, h = 0, maxval = 0;
    if (!next_number(data, pos, w) || !next_number(data, pos, h) || !next_number(data, pos, maxval))
        return error(path.string(), ": malformed PGM header");
    if (w == 0 || h == 0) return error(path.string(), ": image is ", w, "x", h);
    if (maxval == 0 || maxval > 255)
        return error(path.string(), ": maximum value ", maxval, " is not supported (8-bit only)");
    if (pos >= data.size() || !std::isspace(static_cast<unsigned char>(data[pos])))
        return error(path.string(), ": malformed PGM header");
    ++pos;  // the single whitespace before the raster
    if (data.size() - pos < w * h)
        return error(path.string(), ": raster has ", data.size() - pos, " bytes, expected ", w * h);
    GrayImage img;
    img.width = static_cast<uint32_t>(w);
    img.height = static_cast<uint32_t>(h);
    img.pixels.assign(data.begin() + static_cast<std::ptrdiff_t>(pos),
                      data.begin() + static_cast<std::ptrdiff_t>(pos + w * h));
    return img;
}

}  // namespace nvdla::tools
