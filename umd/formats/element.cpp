#include "formats/element.hpp"

#include <bit>
#include <cmath>
#include <limits>

#include "nvdla/precision/fp16.hpp"

namespace nvdla::detail {
namespace {

static_assert(std::endian::native == std::endian::little,
              "surfaces are little-endian; a big-endian host needs byte swaps here");

void count_saturation(const ConvertOptions& opt) {
    if (opt.stats) ++opt.stats->saturated;
}

// Rounds half away from zero and clamps to [lo, hi]; NaN becomes 0.
int64_t to_integer(double v, int64_t lo, int64_t hi, const ConvertOptions& opt) {
    if (std::isnan(v)) {
        if (opt.stats) ++opt.stats->nan;
        return 0;
    }
    const double r = std::round(v);
    if (r < static_cast<double>(lo)) {
        count_saturation(opt);
        return lo;
    }
    if (r > static_cast<double>(hi)) {
        count_saturation(opt);
        return hi;
    }
    return static_cast<int64_t>(r);
}

// double -> fp16 with a single rounding: round to odd at float precision first (exact for
// every value that is already a float), then to nearest even at fp16 precision.
uint16_t to_fp16(double v, const ConvertOptions& opt) {
    float f = static_cast<float>(v);
    if (std::isfinite(f) && static_cast<double>(f) != v) {
        uint32_t b = std::bit_cast<uint32_t>(f);
        if (std::fabs(static_cast<double>(f)) > std::fabs(v)) --b;  // step toward zero
        f = std::bit_cast<float>(b | 1u);
    }
    uint16_t h = fp16::from_float(f);
    if (fp16::is_inf(h) && !std::isinf(v)) {
        count_saturation(opt);
        if (opt.saturate_fp16) h = static_cast<uint16_t>((h & 0x8000) | fp16::kMaxFinite);
    } else if (fp16::is_inf(h) && opt.saturate_fp16) {
        count_saturation(opt);
        h = static_cast<uint16_t>((h & 0x8000) | fp16::kMaxFinite);
    }
    return h;
}

template <HostType H, Precision P>
void encode(const void* host, void* surface, const ConvertOptions& opt) {
    if (opt.quant_scale == 1.0f) {
        if constexpr (H == HostType::Float16 && P == Precision::Fp16) {
            store_element(surface, saturate_fp16_bits(load_element<uint16_t>(host), opt));
            return;
        } else if constexpr (H == HostType::Int8 && P == Precision::Int8) {
            store_element(surface, load_element<int8_t>(host));
            return;
        } else if constexpr (H == HostType::Int16 && P == Precision::Int16) {
            store_element(surface, load_element<int16_t>(host));
            return;
        } else if constexpr (H == HostType::Float32 && P == Precision::Fp16) {
            store_element(surface, to_fp16(load_element<float>(host), opt));
            return;
        }
    }
    store_surface(P, host_value(H, host) * static_cast<double>(opt.quant_scale), surface, opt);
}

template <Precision P, HostType H>
void decode(const void* surface, void* host, const ConvertOptions& opt) {
    if (opt.quant_scale == 1.0f) {
        if constexpr (H == HostType::Float16 && P == Precision::Fp16) {
            store_element(host, saturate_fp16_bits(load_element<uint16_t>(surface), opt));
            return;
        } else if constexpr (H == HostType::Int8 && P == Precision::Int8) {
            store_element(host, load_element<int8_t>(surface));
            return;
        } else if constexpr (H == HostType::Int16 && P == Precision::Int16) {
            store_element(host, load_element<int16_t>(surface));
            return;
        } else if constexpr (H == HostType::Float32 && P == Precision::Fp16) {
            store_element(host, fp16::to_float(load_element<uint16_t>(surface)));
            return;
        }
    }
    store_host(H, surface_value(P, surface) / static_cast<double>(opt.quant_scale), host, opt);
}

template <HostType H>
EncodeFn encoder_for(Precision to) {
    switch (to) {
        case Precision::Int8: return encode<H, Precision::Int8>;
        case Precision::Int16: return encode<H, Precision::Int16>;
        case Precision::Fp16: return encode<H, Precision::Fp16>;
    }
    return nullptr;
}

template <Precision P>
DecodeFn decoder_for(HostType to) {
    switch (to) {
        case HostType::Float32: return decode<P, HostType::Float32>;
        case HostType::Float16: return decode<P, HostType::Float16>;
        case HostType::Int8: return decode<P, HostType::Int8>;
        case HostType::Uint8: return decode<P, HostType::Uint8>;
        case HostType::Int16: return decode<P, HostType::Int16>;
        case HostType::Uint16: return decode<P, HostType::Uint16>;
    }
    return nullptr;
}

}  // namespace

double host_value(HostType t, const void* p) {
    switch (t) {
        case HostType::Float32: return load_element<float>(p);
        case HostType::Float16: return fp16::to_float(load_element<uint16_t>(p));
        case HostType::Int8: return load_element<int8_t>(p);
        case HostType::Uint8: return load_element<uint8_t>(p);
        case HostType::Int16: return load_element<int16_t>(p);
        case HostType::Uint16: return load_element<uint16_t>(p);
    }
    return 0;
}

void store_host(HostType t, double v, void* p, const ConvertOptions& opt) {
    switch (t) {
        case HostType::Float32: store_element(p, static_cast<float>(v)); return;
        case HostType::Float16: store_element(p, to_fp16(v, opt)); return;
        case HostType::Int8:
            store_element(p, static_cast<int8_t>(to_integer(v, -128, 127, opt)));
            return;
        case HostType::Uint8:
            store_element(p, static_cast<uint8_t>(to_integer(v, 0, 255, opt)));
            return;
        case HostType::Int16:
            store_element(p, static_cast<int16_t>(to_integer(v, -32768, 32767, opt)));
            return;
        case HostType::Uint16:
            store_element(p, static_cast<uint16_t>(to_integer(v, 0, 65535, opt)));
            return;
    }
}

double surface_value(Precision p, const void* src) {
    switch (p) {
        case Precision::Int8: return load_element<int8_t>(src);
        case Precision::Int16: return load_element<int16_t>(src);
        case Precision::Fp16: return fp16::to_float(load_element<uint16_t>(src));
    }
    return 0;
}

void store_surface(Precision p, double v, void* dst, const ConvertOptions& opt) {
    switch (p) {
        case Precision::Int8:
            store_element(dst, static_cast<int8_t>(to_integer(v, -128, 127, opt)));
            return;
        case Precision::Int16:
            store_element(dst, static_cast<int16_t>(to_integer(v, -32768, 32767, opt)));
            return;
        case Precision::Fp16: store_element(dst, to_fp16(v, opt)); return;
    }
}

EncodeFn encoder(HostType from, Precision to) {
    switch (from) {
        case HostType::Float32: return encoder_for<HostType::Float32>(to);
        case HostType::Float16: return encoder_for<HostType::Float16>(to);
        case HostType::Int8: return encoder_for<HostType::Int8>(to);
        case HostType::Uint8: return encoder_for<HostType::Uint8>(to);
        case HostType::Int16: return encoder_for<HostType::Int16>(to);
        case HostType::Uint16: return encoder_for<HostType::Uint16>(to);
    }
    return nullptr;
}

DecodeFn decoder(Precision from, HostType to) {
    switch (from) {
        case Precision::Int8: return decoder_for<Precision::Int8>(to);
        case Precision::Int16: return decoder_for<Precision::Int16>(to);
        case Precision::Fp16: return decoder_for<Precision::Fp16>(to);
    }
    return nullptr;
}

Status check_host_tensor(const ConstTensorView& t, const char* what) {
    const Dims4& d = t.dims;
    if (d.n == 0 || d.c == 0 || d.h == 0 || d.w == 0)
        return error(what, ": dimensions ", d.n, "x", d.c, "x", d.h, "x", d.w,
                     " (NxCxHxW) have a zero extent");
    if (!t.data) return error(what, ": data pointer is null");
    if (t.bytes < t.required_bytes())
        return error(what, ": buffer of ", t.bytes, " bytes is too small for ", d.n, "x", d.c, "x",
                     d.h, "x", d.w, " ", to_string(t.type), " (", t.required_bytes(), " bytes)");
    return {};
}

uint16_t saturate_fp16_bits(uint16_t h, const ConvertOptions& opt) {
    if (opt.saturate_fp16 && fp16::is_inf(h)) {
        count_saturation(opt);
        return static_cast<uint16_t>((h & 0x8000) | fp16::kMaxFinite);
    }
    return h;
}

}  // namespace nvdla::detail
