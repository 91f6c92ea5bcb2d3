// Internal: element conversion between host types and hardware precisions, and addressing of
// dense host tensors. Every format converts through here, so the rounding and saturation rules
// of nvdla/formats/convert.hpp live in one place.
#pragma once

#include <cstdint>
#include <cstring>

#include "nvdla/formats/convert.hpp"
#include "nvdla/status.hpp"
#include "nvdla/types.hpp"

namespace nvdla::detail {

// Host tensors and surfaces may hold an element at any byte: single elements are read and
// written through memcpy.
template <class T>
T load_element(const void* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <class T>
T load_element(const T* p) {
    return load_element<T>(static_cast<const void*>(p));
}
template <class T>
void store_element(void* p, T v) {
    std::memcpy(p, &v, sizeof v);
}

// Converts one element. src/dst point at one element of the respective type; surface elements
// are little-endian int8, int16 or fp16 bit patterns.
using EncodeFn = void (*)(const void* host, void* surface, const ConvertOptions& opt);
using DecodeFn = void (*)(const void* surface, void* host, const ConvertOptions& opt);

EncodeFn encoder(HostType from, Precision to);
DecodeFn decoder(Precision from, HostType to);

// The value of one host element, exactly.
double host_value(HostType t, const void* p);
// Writes v (already scaled) to a host element with the host type's rounding and saturation.
void store_host(HostType t, double v, void* p, const ConvertOptions& opt);
// The value of one surface element (int8/int16 as integers, fp16 as its float value).
double surface_value(Precision p, const void* src);
// Writes v (already scaled) as a surface element with the precision's rounding and saturation.
void store_surface(Precision p, double v, void* dst, const ConvertOptions& opt);
// fp16 bits as a surface element: infinities clamped to +-65504 where opt.saturate_fp16.
uint16_t saturate_fp16_bits(uint16_t h, const ConvertOptions& opt);

// Byte offset of element (n, c, h, w) in a dense host tensor.
inline uint64_t host_offset(const Dims4& d, HostLayout layout, uint32_t bpe, uint32_t n, uint32_t c,
                            uint32_t h, uint32_t w) {
    const uint64_t index = layout == HostLayout::NCHW
                               ? ((uint64_t(n) * d.c + c) * d.h + h) * d.w + w
                               : ((uint64_t(n) * d.h + h) * d.w + w) * d.c + c;
    return index * bpe;
}

// Checks a host tensor view: non-null, non-empty dims, buffer large enough.
Status check_host_tensor(const ConstTensorView& t, const char* what);

// Element accessors for formats that walk host tensors one element at a time.
class HostReader {
  public:
    HostReader(const ConstTensorView& t, Precision to, const ConvertOptions& opt)
        : t_(t), bpe_(bytes_per_element(t.type)), encode_(encoder(t.type, to)), opt_(opt) {}
    // Converts host element (n, c, h, w) into the surface element at dst.
    void read(uint32_t n, uint32_t c, uint32_t h, uint32_t w, void* dst) const {
        encode_(static_cast<const uint8_t*>(t_.data) +
                    host_offset(t_.dims, t_.layout, bpe_, n, c, h, w),
                dst, opt_);
    }

  private:
    ConstTensorView t_;
    uint32_t bpe_;
    EncodeFn encode_;
    const ConvertOptions& opt_;
};

class HostWriter {
  public:
    HostWriter(const TensorView& t, Precision from, const ConvertOptions& opt)
        : t_(t), bpe_(bytes_per_element(t.type)), decode_(decoder(from, t.type)), opt_(opt) {}
    // Converts the surface element at src into host element (n, c, h, w).
    void write(uint32_t n, uint32_t c, uint32_t h, uint32_t w, const void* src) const {
        decode_(src,
                static_cast<uint8_t*>(t_.data) + host_offset(t_.dims, t_.layout, bpe_, n, c, h, w),
                opt_);
    }

  private:
    TensorView t_;
    uint32_t bpe_;
    DecodeFn decode_;
    const ConvertOptions& opt_;
};

}  // namespace nvdla::detail
