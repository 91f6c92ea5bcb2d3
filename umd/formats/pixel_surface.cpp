// Pitch-linear pixel surfaces: validation against the seed's rules and the C model's checks,
// size queries, and packing of component values.
#include <algorithm>
#include <cstring>
#include <string>

#include "formats/element.hpp"
#include "formats/pixel_internal.hpp"
#include "nvdla/formats/alignment.hpp"
#include "nvdla/formats/pixel.hpp"
#include "nvdla/precision/fp16.hpp"

#include "emu/isa.hpp"
#include "precision/cpu.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nvdla {
namespace detail {
namespace {

constexpr uint64_t kMaxLineStride = uint64_t(1) << 32;   // 32-bit LINE_STRIDE registers
constexpr uint64_t kMaxPlaneOffset = uint64_t(1) << 62;  // keeps every address sum in range

uint64_t round_up(uint64_t x, uint64_t to) {
    return (x + to - 1) / to * to;
}

bool is_integer_type(HostType t) {
    return t != HostType::Float32 && t != HostType::Float16;
}
bool is_signed_type(HostType t) {
    return t == HostType::Int8 || t == HostType::Int16;
}

std::string plane_name(const PixelFormatInfo& f, unsigned plane) {
    if (f.planes == 1) return std::string(f.name);
    return std::string(f.name) + (plane == 0 ? " plane 0 (Y)" : " plane 1 (U/V)");
}

uint32_t widest_field(const PixelFormatInfo& f) {
    uint32_t bits = 0;
    for (uint32_t ch = 0; ch < f.channels; ++ch)
        bits = std::max<uint32_t>(bits, f.components[ch].bits);
    return bits;
}

bool is_fp16_format(const PixelFormatInfo& f) {
    return f.input_precision == Precision::Fp16;
}

// The pixel surfaces' row of the seed's table "Requirements of alignment".
const AlignmentRule& pixel_alignment_rule() {
    static const AlignmentRule& rule = *std::find_if(
        alignment_rules().begin(), alignment_rules().end(),
        [](const AlignmentRule& r) { return r.kind == SurfaceKind::PitchLinearPixel; });
    return rule;
}

uint32_t pixel_line_stride_alignment(const HwConfig& cfg) {
    return resolve_alignment(pixel_alignment_rule().line_stride, cfg);
}

// Whether check_alignment accepts `value` for a field with rule `rule` (0: no rule).
bool meets_alignment_rule(uint64_t value, uint32_t rule, const HwConfig& cfg) {
    return rule == 0 || value % resolve_alignment(rule, cfg) == 0;
}

// One past the last byte the CDMA reads of a plane of `height` lines: it fetches each line from
// its start in whole atoms.
uint64_t plane_end(const HwConfig& cfg, const PixelPlaneGeometry& g, uint32_t width,
                   uint32_t height) {
    return g.offset + uint64_t(height - 1) * g.line_stride +
           round_up(g.line_bytes(width), cfg.atom_bytes);
}

// Integer value of an integer host element.
int64_t host_integer(HostType t, const void* p) {
    switch (t) {
        case HostType::Int8: {
            int8_t v;
            std::memcpy(&v, p, 1);
            return v;
        }
        case HostType::Uint8: {
            uint8_t v;
            std::memcpy(&v, p, 1);
            return v;
        }
        case HostType::Int16: {
            int16_t v;
            std::memcpy(&v, p, 2);
            return v;
        }
        case HostType::Uint16: {
            uint16_t v;
            std::memcpy(&v, p, 2);
            return v;
        }
        case HostType::Float32:
        case HostType::Float16: break;
    }
    return 0;
}

// Writes a field back as a host element (the type passed check_pixel_tensor for reading).
void field_to_host(const PixelFormatInfo& f, HostType t, uint32_t field, const PixelComponent& c,
                   void* p) {
    if (is_fp16_format(f)) {
        const auto bits = static_cast<uint16_t>(field);
        if (t == HostType::Float16) {
            std::memcpy(p, &bits, 2);
        } else {
            const float v = fp16::to_float(bits);
            std::memcpy(p, &v, 4);
        }
        return;
    }
    // Signed types read the field as two's complement.
    int64_t v = field;
    if (is_signed_type(t) && c.bits > 0 && (field >> (c.bits - 1)) & 1u) v -= int64_t(1) << c.bits;
    switch (t) {
        case HostType::Int8: {
            const auto x = static_cast<int8_t>(v);
            std::memcpy(p, &x, 1);
            return;
        }
        case HostType::Uint8: {
            const auto x = static_cast<uint8_t>(v);
            std::memcpy(p, &x, 1);
            return;
        }
        case HostType::Int16: {
            const auto x = static_cast<int16_t>(v);
            std::memcpy(p, &x, 2);
            return;
        }
        case HostType::Uint16: {
            const auto x = static_cast<uint16_t>(v);
            std::memcpy(p, &x, 2);
            return;
        }
        case HostType::Float32:
        case HostType::Float16: return;
    }
}

}  // namespace

PixelPlaneGeometry plane_geometry(const HwConfig& cfg, const PixelSurface& s,
                                  const PixelFormatInfo& f, unsigned p) {
    return {s.planes[p].offset, s.planes[p].line_stride, f.bytes_per_pixel[p],
            pixel_plane_x_offset(cfg, s, p)};
}

std::array<PixelPlaneGeometry, 2> pixel_geometry(const HwConfig& cfg, const PixelSurface& s) {
    const PixelFormatInfo& f = pixel_format_info(s.format);
    std::array<PixelPlaneGeometry, 2> g{};
    for (unsigned p = 0; p < f.planes; ++p) g[p] = plane_geometry(cfg, s, f, p);
    return g;
}

Status check_pixel_tensor(const ConstTensorView& t, const PixelFormatInfo& f, uint32_t width,
                          uint32_t height, bool reading_back, const char* what) {
    if (Status s = check_host_tensor(t, what); !s) return s;
    const Dims4 want{1, f.channels, height, width};
    if (t.dims != want)
        return error(what, ": dimensions ", t.dims.n, "x", t.dims.c, "x", t.dims.h, "x", t.dims.w,
                     " (NxCxHxW) do not match ", f.name, " ", width, "x", height, " (1x",
                     unsigned(f.channels), "x", height, "x", width, ")");
    if (is_fp16_format(f)) {
        if (is_integer_type(t.type))
            return error(what, ": ", f.name, " holds fp16 components; host type ",
                         to_string(t.type), " is not accepted (use float16 or float32)");
        return {};
    }
    if (!is_integer_type(t.type))
        return error(what, ": ", f.name, " holds integer components; host type ", to_string(t.type),
                     " is not accepted (use uint8/uint16/int8/int16)");
    const uint32_t type_bits = bytes_per_element(t.type) * 8;
    if (reading_back && type_bits < widest_field(f))
        return error(what, ": host type ", to_string(t.type), " (", type_bits,
                     " bits) cannot hold the ", widest_field(f), "-bit components of ", f.name);
    return {};
}

bool host_to_field(const PixelFormatInfo& f, HostType type, const void* p, const PixelComponent& c,
                   uint32_t* field) {
    if (is_fp16_format(f)) {
        uint16_t bits;
        if (type == HostType::Float16) {
            std::memcpy(&bits, p, 2);
        } else {
            float v;
            std::memcpy(&v, p, 4);
            bits = fp16::from_float(v);
        }
        *field = bits;
        return true;
    }
    const int64_t v = host_integer(type, p);
    const int64_t span = int64_t(1) << c.bits;
    const int64_t lo = is_signed_type(type) ? -span / 2 : 0;
    const int64_t hi = is_signed_type(type) ? span / 2 - 1 : span - 1;
    if (v < lo || v > hi) return false;
    *field = static_cast<uint32_t>(v) & field_mask(c.bits);
    return true;
}

Status check_pixel_values(const ConstTensorView& t, const PixelFormatInfo& f, const char* what) {
    if (is_fp16_format(f)) return {};  // every float has an fp16 encoding
    const uint32_t bpe = bytes_per_element(t.type);
    const auto* base = static_cast<const uint8_t*>(t.data);
    for (uint32_t y = 0; y < t.dims.h; ++y) {
        for (uint32_t x = 0; x < t.dims.w; ++x) {
            for (uint32_t ch = 0; ch < f.channels; ++ch) {
                const PixelComponent& c = f.components[ch];
                const void* p = base + host_offset(t.dims, t.layout, bpe, 0, ch, y, x);
                uint32_t field;
                if (host_to_field(f, t.type, p, c, &field)) continue;
                const int64_t span = int64_t(1) << c.bits;
                const bool s = is_signed_type(t.type);
                return error(what, ": ", f.name, " channel ", to_string(c.channel), " at (x ", x,
                             ", y ", y, ") is ", host_integer(t.type, p), ", out of range ",
                             s ? -span / 2 : 0, "..", s ? span / 2 - 1 : span - 1, " for its ",
                             int(c.bits), "-bit field (", to_string(t.type), " values)");
            }
        }
    }
    return {};
}

}  // namespace detail

uint32_t pixel_plane_x_offset(const HwConfig& cfg, const PixelSurface& s, unsigned plane) {
    if (plane == 0) return s.x_offset;
    const PixelFormatInfo& f = pixel_format_info(s.format);
    if (plane >= f.planes) return 0;
    // Both plane starts are atom-aligned addresses of the same image column, so the second
    // plane's offset is the column's position within its own (wider-pixel) atom.
    const uint32_t pixels_per_atom = std::max<uint32_t>(1, cfg.atom_bytes / f.bytes_per_pixel[1]);
    return s.x_offset % pixels_per_atom;
}

uint64_t min_pixel_line_stride(const HwConfig& cfg, const PixelSurface& s, unsigned plane) {
    const PixelFormatInfo& f = pixel_format_info(s.format);
    if (plane >= f.planes) return 0;
    return detail::plane_geometry(cfg, s, f, plane).line_bytes(s.width);
}

Status check_pixel_surface(const HwConfig& cfg, const PixelSurface& s) {
    const auto format_value = static_cast<uint32_t>(s.format);
    if (format_value >= kPixelFormatCount)
        return error("pixel surface: format value ", format_value, " is out of range 0..",
                     kPixelFormatCount - 1);
    const PixelFormatInfo& f = pixel_format_info(s.format);
    if (s.width < 1 || s.width > kMaxPixelExtent)
        return error("pixel surface: width ", s.width, " is out of range 1..", kMaxPixelExtent);
    if (s.height < 1 || s.height > kMaxPixelExtent)
        return error("pixel surface: height ", s.height, " is out of range 1..", kMaxPixelExtent);
    const uint32_t max_x = max_pixel_x_offset(cfg, s.format);
    if (s.x_offset > max_x)
        return error("pixel surface: x offset ", s.x_offset, " is out of range 0..", max_x, " for ",
                     f.name, " (", unsigned(f.bytes_per_pixel[0]), "-byte pixels, ", cfg.atom_bytes,
                     "-byte atoms on ", cfg.name, ")");

    for (unsigned p = 0; p < f.planes; ++p) {
        const PixelPlane& plane = s.planes[p];
        const auto name = [&] { return detail::plane_name(f, p); };  // for errors only
        if (plane.offset > detail::kMaxPlaneOffset)
            return error("pixel surface ", name(), ": start address ", plane.offset,
                         " is beyond 2^62");
        SurfacePlacement placement;
        placement.address = plane.offset;
        placement.line_stride = plane.line_stride;
        if (Status a = check_alignment(cfg, SurfaceKind::PitchLinearPixel, placement); !a)
            return a.context("pixel surface " + name());
        if (plane.line_stride >= detail::kMaxLineStride)
            return error("pixel surface ", name(), ": line stride ", plane.line_stride,
                         " does not fit the 32-bit line stride register");
        const uint64_t needed = min_pixel_line_stride(cfg, s, p);
        if (plane.line_stride < needed)
            return error("pixel surface ", name(), ": line stride ", plane.line_stride,
                         " is smaller than the ", needed, " bytes a line needs (x offset ",
                         pixel_plane_x_offset(cfg, s, p), " + width ", s.width, " pixels of ",
                         int(f.bytes_per_pixel[p]), " bytes)");
    }

    if (f.planes == 2) {
        // Lines of one plane are disjoint and ascending; sweep both lists for a collision.
        const auto g = detail::pixel_geometry(cfg, s);
        const uint64_t len0 = uint64_t(s.width) * g[0].bytes_per_pixel;
        const uint64_t len1 = uint64_t(s.width) * g[1].bytes_per_pixel;
        uint32_t y0 = 0, y1 = 0;
        while (y0 < s.height && y1 < s.height) {
            const uint64_t a0 = g[0].address(y0, 0), a1 = g[1].address(y1, 0);
            if (a0 + len0 <= a1) {
                ++y0;
            } else if (a1 + len1 <= a0) {
                ++y1;
            } else {
                return error("pixel surface ", f.name, ": line ", y1, " of plane 1 (bytes ", a1,
                             "..", a1 + len1 - 1, ") overlaps line ", y0, " of plane 0 (bytes ", a0,
                             "..", a0 + len0 - 1, ")");
            }
        }
    }
    return {};
}

Result<uint64_t> pixel_surface_bytes(const HwConfig& cfg, const PixelSurface& s) {
    if (Status st = check_pixel_surface(cfg, s); !st) return st;
    const PixelFormatInfo& f = pixel_format_info(s.format);
    uint64_t end = 0;
    for (unsigned p = 0; p < f.planes; ++p)
        end = std::max(
            end, detail::plane_end(cfg, detail::plane_geometry(cfg, s, f, p), s.width, s.height));
    return end;
}

Result<PixelSurface> dense_pixel_surface(const HwConfig& cfg, PixelFormat f, uint32_t width,
                                         uint32_t height, uint32_t x_offset) {
    PixelSurface s;
    s.format = f;
    s.width = width;
    s.height = height;
    s.x_offset = x_offset;
    if (static_cast<uint32_t>(f) < kPixelFormatCount) {
        const PixelFormatInfo& info = pixel_format_info(f);
        const uint32_t alignment = detail::pixel_line_stride_alignment(cfg);
        uint64_t next = 0;
        for (unsigned p = 0; p < info.planes; ++p) {
            s.planes[p].offset = next;
            s.planes[p].line_stride = detail::round_up(min_pixel_line_stride(cfg, s, p), alignment);
            next = detail::round_up(next + uint64_t(height) * s.planes[p].line_stride, alignment);
        }
    }
    if (Status st = check_pixel_surface(cfg, s); !st) return st;
    return s;
}

namespace {

void interleave_bytes4_from(uint32_t x, const uint8_t* const* rows, uint32_t width,
                            std::byte* line) {
    const uint8_t *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
#if defined(__x86_64__)
    // Named registers, not an array: GCC kept an array of four in memory.
    for (; x + 16 <= width; x += 16) {
        const __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r0 + x));
        const __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1 + x));
        const __m128i b2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r2 + x));
        const __m128i b3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r3 + x));
        const __m128i lo01 = _mm_unpacklo_epi8(b0, b1), hi01 = _mm_unpackhi_epi8(b0, b1);
        const __m128i lo23 = _mm_unpacklo_epi8(b2, b3), hi23 = _mm_unpackhi_epi8(b2, b3);
        auto* out = reinterpret_cast<__m128i*>(line + uint64_t(x) * 4);
        _mm_storeu_si128(out, _mm_unpacklo_epi16(lo01, lo23));
        _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(lo01, lo23));
        _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(hi01, hi23));
        _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(hi01, hi23));
    }
#endif
    for (; x < width; ++x) {
        std::byte* px = line + uint64_t(x) * 4;
        px[0] = std::byte(r0[x]);
        px[1] = std::byte(r1[x]);
        px[2] = std::byte(r2[x]);
        px[3] = std::byte(r3[x]);
    }
}

#if defined(__x86_64__)
#define NVDLA_PIXEL_AVX2 __attribute__((target("avx2")))
#define NVDLA_PIXEL_AVX2_INLINE __attribute__((target("avx2"), always_inline)) inline

NVDLA_PIXEL_AVX2_INLINE __m256i load256(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// 32 pixels from 32 bytes of each row, interleaved within 128-bit lanes: lane 0 of q[k] holds
// pixels 4k..4k+3, lane 1 pixels 16 + 4k..16 + 4k + 3, so the block's 128 bytes are the lanes
// q[0..3].lo, then q[0..3].hi, and 128-bit permutes put them in order.
struct PixelQuads {
    __m256i q[4];
};

NVDLA_PIXEL_AVX2_INLINE PixelQuads interleave_lanes(__m256i b0, __m256i b1, __m256i b2,
                                                    __m256i b3) {
    const __m256i lo01 = _mm256_unpacklo_epi8(b0, b1), hi01 = _mm256_unpackhi_epi8(b0, b1);
    const __m256i lo23 = _mm256_unpacklo_epi8(b2, b3), hi23 = _mm256_unpackhi_epi8(b2, b3);
    return {{_mm256_unpacklo_epi16(lo01, lo23), _mm256_unpackhi_epi16(lo01, lo23),
             _mm256_unpacklo_epi16(hi01, hi23), _mm256_unpackhi_epi16(hi01, hi23)}};
}

// Stores one block's 128 bytes at `out` (its first pixel). LaneLater: each store starts one
// lane (4 pixels) earlier, so that stores 16 bytes past an alignment are aligned: the first
// carries the previous block's last lane (lane 1 of `carry`), and this block's goes to the next.
template <bool LaneLater>
NVDLA_PIXEL_AVX2_INLINE void store_block(const PixelQuads& p, __m256i& carry, std::byte* out) {
    const __m256i* q = p.q;
    if constexpr (LaneLater) {
        auto* o = reinterpret_cast<__m256i*>(out - 16);
        _mm256_storeu_si256(o, _mm256_permute2x128_si256(carry, q[0], 0x21));
        _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(q[1], q[2], 0x20));
        _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(q[3], q[0], 0x30));
        _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(q[1], q[2], 0x31));
        carry = q[3];
    } else {
        auto* o = reinterpret_cast<__m256i*>(out);
        _mm256_storeu_si256(o, _mm256_permute2x128_si256(q[0], q[1], 0x20));
        _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(q[2], q[3], 0x20));
        _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(q[0], q[1], 0x31));
        _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(q[2], q[3], 0x31));
    }
}

// Two blocks of 32 pixels a step from pixel x (x + 64 <= width), each step's row loads issued
// a step before its stores (host rows and pixels at the same offset in their pages, as from
// malloc, otherwise stall the loads behind the stores: 4 KiB aliasing); returns the first pixel
// not written. LaneLater (see store_block) needs pixels x - 4..x - 1 written already.
template <bool LaneLater>
NVDLA_PIXEL_AVX2 uint32_t interleave_blocks_avx2(const uint8_t* const* rows, uint32_t x,
                                                 uint32_t width, std::byte* line) {
    const uint8_t *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
    __m256i carry = _mm256_setzero_si256();
    if constexpr (LaneLater)
        carry = _mm256_broadcastsi128_si256(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(line + uint64_t(x) * 4 - 16)));
    __m256i a0 = load256(r0 + x), a1 = load256(r1 + x), a2 = load256(r2 + x), a3 = load256(r3 + x);
    __m256i c0 = load256(r0 + x + 32), c1 = load256(r1 + x + 32), c2 = load256(r2 + x + 32),
            c3 = load256(r3 + x + 32);
    for (; x + 128 <= width; x += 64) {
        const PixelQuads first = interleave_lanes(a0, a1, a2, a3);
        a0 = load256(r0 + x + 64), a1 = load256(r1 + x + 64), a2 = load256(r2 + x + 64),
        a3 = load256(r3 + x + 64);
        store_block<LaneLater>(first, carry, line + uint64_t(x) * 4);
        const PixelQuads second = interleave_lanes(c0, c1, c2, c3);
        c0 = load256(r0 + x + 96), c1 = load256(r1 + x + 96), c2 = load256(r2 + x + 96),
        c3 = load256(r3 + x + 96);
        store_block<LaneLater>(second, carry, line + uint64_t(x) * 4 + 128);
    }
    store_block<LaneLater>(interleave_lanes(a0, a1, a2, a3), carry, line + uint64_t(x) * 4);
    store_block<LaneLater>(interleave_lanes(c0, c1, c2, c3), carry, line + uint64_t(x) * 4 + 128);
    x += 64;
    if constexpr (LaneLater)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(line + uint64_t(x) * 4 - 16),
                         _mm256_extracti128_si256(carry, 1));
    return x;
}

// The blocks start where row 0's loads are 32-byte aligned (pixels before that go singly):
// rows 16 bytes into a page, as from malloc, otherwise cross a cache line every other load
// (0.73-0.75 -> 0.76-0.81 of memcpy in nvdla_bench_formats). Where the pixel stores are then
// 16 bytes past a 32-byte boundary (pixels from malloc are), they go a lane later, aligned too.
// Two blocks a step with both aligned: 0.69-0.79 -> 0.79-0.84 in nvdla_bench_formats's image
// row (one block a step, or two with only the loads aligned, in between).
NVDLA_PIXEL_AVX2 void interleave_bytes4_avx2(const uint8_t* const* rows, uint32_t width,
                                             std::byte* line) {
    uint32_t x = uint32_t(-reinterpret_cast<uintptr_t>(rows[0]) % 32);
    const bool lane_later = (reinterpret_cast<uintptr_t>(line) + uint64_t(x) * 4) % 32 == 16;
    if (lane_later && x < 4) x += 32;  // the lane before the first block goes singly
    if (x + 64 <= width) {
        interleave_bytes4_from(0, rows, x, line);
        x = lane_later ? interleave_blocks_avx2<true>(rows, x, width, line)
                       : interleave_blocks_avx2<false>(rows, x, width, line);
    } else {
        x = width >= 64 ? interleave_blocks_avx2<false>(rows, 0, width, line) : 0;
    }
    interleave_bytes4_from(x, rows, width, line);
}
#define NVDLA_PIXEL_AVX512 __attribute__((target("avx512f,avx512bw,avx2")))

NVDLA_PIXEL_AVX512 __attribute__((always_inline)) inline __m512i load512(const uint8_t* p) {
    return _mm512_loadu_si512(p);
}

// The same, 64 pixels per block: register k's lane L holds pixels 16L + 4k .. 16L + 4k + 3, so
// a 4x4 transpose of 128-bit lanes (two stages of 2-source lane shuffles) orders them.
NVDLA_PIXEL_AVX512 __attribute__((always_inline)) inline void interleave_block_avx512(
    __m512i b0, __m512i b1, __m512i b2, __m512i b3, std::byte* out) {
    constexpr __mmask8 all = 0xff;
    const __m512i lo01 = _mm512_unpacklo_epi8(b0, b1), hi01 = _mm512_unpackhi_epi8(b0, b1);
    const __m512i lo23 = _mm512_unpacklo_epi8(b2, b3), hi23 = _mm512_unpackhi_epi8(b2, b3);
    const __m512i p0 = _mm512_unpacklo_epi16(lo01, lo23);
    const __m512i p1 = _mm512_unpackhi_epi16(lo01, lo23);
    const __m512i p2 = _mm512_unpacklo_epi16(hi01, hi23);
    const __m512i p3 = _mm512_unpackhi_epi16(hi01, hi23);
    const __m512i t0 = _mm512_maskz_shuffle_i64x2(all, p0, p1, 0x44);  // lanes 0, 1
    const __m512i t1 = _mm512_maskz_shuffle_i64x2(all, p0, p1, 0xee);  // lanes 2, 3
    const __m512i t2 = _mm512_maskz_shuffle_i64x2(all, p2, p3, 0x44);
    const __m512i t3 = _mm512_maskz_shuffle_i64x2(all, p2, p3, 0xee);
    _mm512_storeu_si512(out, _mm512_maskz_shuffle_i64x2(all, t0, t2, 0x88));
    _mm512_storeu_si512(out + 64, _mm512_maskz_shuffle_i64x2(all, t0, t2, 0xdd));
    _mm512_storeu_si512(out + 128, _mm512_maskz_shuffle_i64x2(all, t1, t3, 0x88));
    _mm512_storeu_si512(out + 192, _mm512_maskz_shuffle_i64x2(all, t1, t3, 0xdd));
}

// Two blocks per step from pixel x (x + 128 <= width), each block's row loads issued a step
// before its stores; returns the first pixel not written. One block a step (the next block's
// loads before this one's stores) measured 0.81-0.82 of memcpy in nvdla_bench_formats's image
// row, this 0.84-0.86. (At AVX2 the same from the first aligned line of pixels, the row loads
// unaligned, measured 0.74-0.76; from aligned row loads it is the AVX2 form above.)
NVDLA_PIXEL_AVX512 uint32_t interleave_blocks_avx512(const uint8_t* const* rows, uint32_t x,
                                                     uint32_t width, std::byte* line) {
    const uint8_t *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
    __m512i a0 = load512(r0 + x), a1 = load512(r1 + x), a2 = load512(r2 + x), a3 = load512(r3 + x);
    __m512i c0 = load512(r0 + x + 64), c1 = load512(r1 + x + 64), c2 = load512(r2 + x + 64),
            c3 = load512(r3 + x + 64);
    for (; x + 256 <= width; x += 128) {
        const __m512i n0 = load512(r0 + x + 128), n1 = load512(r1 + x + 128),
                      n2 = load512(r2 + x + 128), n3 = load512(r3 + x + 128);
        interleave_block_avx512(a0, a1, a2, a3, line + uint64_t(x) * 4);
        a0 = n0, a1 = n1, a2 = n2, a3 = n3;
        const __m512i m0 = load512(r0 + x + 192), m1 = load512(r1 + x + 192),
                      m2 = load512(r2 + x + 192), m3 = load512(r3 + x + 192);
        interleave_block_avx512(c0, c1, c2, c3, line + uint64_t(x) * 4 + 256);
        c0 = m0, c1 = m1, c2 = m2, c3 = m3;
    }
    interleave_block_avx512(a0, a1, a2, a3, line + uint64_t(x) * 4);
    interleave_block_avx512(c0, c1, c2, c3, line + uint64_t(x) * 4 + 256);
    return x + 128;
}

// Here the blocks start where the pixel stores are 64-byte aligned (each 64-byte store
// otherwise writes two cache lines): 0.77-0.80 -> 0.82-0.83 of memcpy in
// nvdla_bench_formats; aligning the loads instead measured 0.79, both (the stores some
// 128-bit lanes later) 0.72.
NVDLA_PIXEL_AVX512 void interleave_bytes4_avx512(const uint8_t* const* rows, uint32_t width,
                                                 std::byte* line) {
    uint32_t x = 0;
    const auto address = reinterpret_cast<uintptr_t>(line);
    const auto first = uint32_t(-address % 64 / 4);  // the first pixel of an aligned store
    if (address % 4 == 0 && first + 128 <= width) {
        interleave_bytes4_from(0, rows, first, line);
        x = interleave_blocks_avx512(rows, first, width, line);
    } else if (width >= 128) {
        x = interleave_blocks_avx512(rows, 0, width, line);
    }
    const std::array<const uint8_t*, 4> rest{rows[0] + x, rows[1] + x, rows[2] + x, rows[3] + x};
    interleave_bytes4_avx2(rest.data(), width - x, line + uint64_t(x) * 4);
}
#endif

// Writes one line of 4-byte pixels from the 4 rows holding their bytes 0..3, with AVX2 at the
// emulator's instruction-set level (NVDLA_EMU_ISA lowers it) where the CPU has it, or AVX-512.
void interleave_bytes4(const uint8_t* const* rows, uint32_t width, std::byte* line) {
#if defined(__x86_64__)
    static const bool avx2 = cpu_has_avx2();
    const emu::IsaLevel level = emu::isa_level();
    if (level == emu::IsaLevel::Avx512) return interleave_bytes4_avx512(rows, width, line);
    if (avx2 && level != emu::IsaLevel::Scalar) return interleave_bytes4_avx2(rows, width, line);
#endif
    interleave_bytes4_from(0, rows, width, line);
}

// 8-bit NCHW host rows into a format whose 8-bit fields fill its one-plane pixel (R8 and the
// 8-bit RGBA/YUV orders, the runtime's image inputs): every value fits its field, so nothing
// needs checking, and each line is the channel rows interleaved. False if that is not the case.
bool pack_whole_bytes(const PixelFormatInfo& f, const ConstTensorView& src, const PixelSurface& s,
                      const detail::PixelPlaneGeometry& g, std::byte* dst) {
    if (f.planes != 1 || src.layout != HostLayout::NCHW ||
        (src.type != HostType::Uint8 && src.type != HostType::Int8) ||
        f.bytes_per_pixel[0] != f.channels || (f.channels != 1 && f.channels != 4))
        return false;
    std::array<uint32_t, 4> channel_of_byte{};
    for (uint32_t ch = 0; ch < f.channels; ++ch) {
        const PixelComponent& c = f.components[ch];
        if (c.bits != 8 || c.bit_offset % 8 != 0) return false;
        channel_of_byte[c.bit_offset / 8] = ch;
    }
    const auto* in = static_cast<const uint8_t*>(src.data);
    const uint64_t plane = uint64_t(s.width) * s.height;
    // Lines that follow each other without a gap are one run, as the host rows are.
    const bool dense = s.height == 1 || g.line_stride == uint64_t(s.width) * g.bytes_per_pixel;
    if (dense && plane <= UINT32_MAX) {
        std::array<const uint8_t*, 4> planes{};
        for (uint32_t b = 0; b < f.channels; ++b) planes[b] = in + channel_of_byte[b] * plane;
        if (f.channels == 1)
            std::memcpy(dst + g.address(0, 0), planes[0], plane);
        else
            interleave_bytes4(planes.data(), uint32_t(plane), dst + g.address(0, 0));
        return true;
    }
    for (uint32_t y = 0; y < s.height; ++y) {
        std::array<const uint8_t*, 4> rows{};
        for (uint32_t b = 0; b < f.channels; ++b)
            rows[b] = in + channel_of_byte[b] * plane + uint64_t(y) * s.width;
        std::byte* line = dst + g.address(y, 0);
        if (f.channels == 1)
            std::memcpy(line, rows[0], s.width);
        else
            interleave_bytes4(rows.data(), s.width, line);
    }
    return true;
}

// pack_pixels' checks of a one-plane surface and its host tensor as a few comparisons that all
// of them pass: the surface's byte size, or 0 where any check might fail (the full checks then
// find and name the error). The full checks take about 1000 instructions a call, 3-6% of a
// 224 x 224 image's packing.
uint64_t plainly_valid_bytes(const HwConfig& cfg, const ConstTensorView& src, const PixelSurface& s,
                             const PixelFormatInfo& f, const detail::PixelPlaneGeometry& g) {
    const AlignmentRule& rule = detail::pixel_alignment_rule();
    const bool surface_ok =
        static_cast<uint32_t>(s.format) < kPixelFormatCount && f.planes == 1 &&
        s.width - 1 < kMaxPixelExtent && s.height - 1 < kMaxPixelExtent &&
        s.x_offset <= max_pixel_x_offset(cfg, s.format) && g.offset <= detail::kMaxPlaneOffset &&
        detail::meets_alignment_rule(g.offset, rule.start, cfg) &&
        detail::meets_alignment_rule(g.line_stride, rule.line_stride, cfg) &&
        g.line_stride < detail::kMaxLineStride && g.line_stride >= g.line_bytes(s.width);
    const bool tensor_ok = src.data && src.dims == Dims4{1, f.channels, s.height, s.width} &&
                           src.bytes >= src.required_bytes() &&
                           detail::is_integer_type(src.type) != detail::is_fp16_format(f);
    return surface_ok && tensor_ok ? detail::plane_end(cfg, g, s.width, s.height) : 0;
}

}  // namespace

Status pack_pixels(const HwConfig& cfg, const ConstTensorView& src, const PixelSurface& s,
                   ByteSpan dst) {
    // The runtime's images (8-bit NCHW rows into one-plane pixels) after the quick checks.
    {
        const PixelFormatInfo& f = pixel_format_info(s.format);  // T_R8's for a bad format
        const detail::PixelPlaneGeometry g = detail::plane_geometry(cfg, s, f, 0);
        const uint64_t bytes = plainly_valid_bytes(cfg, src, s, f, g);
        if (bytes != 0 && bytes <= dst.size() && pack_whole_bytes(f, src, s, g, dst.data()))
            return {};
    }
    const Result<uint64_t> bytes = pixel_surface_bytes(cfg, s);
    if (!bytes) return bytes.status().context("pack pixels");
    const PixelFormatInfo& f = pixel_format_info(s.format);
    if (Status st =
            detail::check_pixel_tensor(src, f, s.width, s.height, false, "pack pixels: source");
        !st)
        return st;
    if (dst.size() < *bytes)
        return error("pack pixels: destination of ", dst.size(), " bytes is too small for ", f.name,
                     " ", s.width, "x", s.height, " (", *bytes, " bytes)");
    const auto g = detail::pixel_geometry(cfg, s);
    if (pack_whole_bytes(f, src, s, g[0], dst.data())) return {};
    if (Status st = detail::check_pixel_values(src, f, "pack pixels: source"); !st) return st;

    const uint32_t bpe = bytes_per_element(src.type);
    const auto* in = static_cast<const uint8_t*>(src.data);
    for (uint32_t y = 0; y < s.height; ++y) {
        for (uint32_t x = 0; x < s.width; ++x) {
            std::array<uint64_t, 2> words{};
            for (uint32_t ch = 0; ch < f.channels; ++ch) {
                const PixelComponent& c = f.components[ch];
                uint32_t field = 0;
                detail::host_to_field(
                    f, src.type, in + detail::host_offset(src.dims, src.layout, bpe, 0, ch, y, x),
                    c, &field);
                words[c.plane] |= uint64_t(field) << c.bit_offset;
            }
            for (unsigned p = 0; p < f.planes; ++p)
                detail::store_pixel_word(dst.data() + g[p].address(y, x), g[p].bytes_per_pixel,
                                         words[p]);
        }
    }
    return {};
}

Status unpack_pixels(const HwConfig& cfg, ConstByteSpan src, const PixelSurface& s,
                     const TensorView& dst) {
    const Result<uint64_t> bytes = pixel_surface_bytes(cfg, s);
    if (!bytes) return bytes.status().context("unpack pixels");
    const PixelFormatInfo& f = pixel_format_info(s.format);
    if (Status st = detail::check_pixel_tensor(dst, f, s.width, s.height, true,
                                               "unpack pixels: destination");
        !st)
        return st;
    if (src.size() < *bytes)
        return error("unpack pixels: source of ", src.size(), " bytes is too small for ", f.name,
                     " ", s.width, "x", s.height, " (", *bytes, " bytes)");

    const auto g = detail::pixel_geometry(cfg, s);
    const uint32_t bpe = bytes_per_element(dst.type);
    auto* out = static_cast<uint8_t*>(dst.data);
    for (uint32_t y = 0; y < s.height; ++y) {
        for (uint32_t x = 0; x < s.width; ++x) {
            const auto fields = detail::read_pixel_fields(f, g, src.data(), y, x);
            for (uint32_t ch = 0; ch < f.channels; ++ch)
                detail::field_to_host(
                    f, dst.type, fields[ch], f.components[ch],
                    out + detail::host_offset(dst.dims, dst.layout, bpe, 0, ch, y, x));
        }
    }
    return {};
}

}  // namespace nvdla
