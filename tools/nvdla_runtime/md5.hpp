// MD5 (RFC 1321), for comparing outputs with the regression goldens' md5 sums.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace nvdla::tool {

// The digest of `bytes` as 32 lowercase hexadecimal digits.
std::string md5_hex(std::span<const std::byte> bytes);

}  // namespace nvdla::tool
