// CSC: walks the convolution buffer as the hardware sequences it and feeds CMAC, whose results
// CACC accumulates. For every output element the MAC operations come in the C model's order
// (SendDataToMacSequencerDirectConvCommon / SendImageDataToMacSequencerConvCommon /
// SendDataToMacSequencerWinoConvCommon): input channels in groups of MAC atomic C ("super
// channels"), and within a group the kernel positions row by row. Outside the input cube the
// data is the pad value (PAD_VALUE's low byte for int8) on the cube's channels and 0 beyond.
//
// Integer sums are exact whatever the order unless the 48-bit assembly buffer could saturate
// (only possible with int16), so the fast path is a plain convolution over a padded copy of
// the data (the "plane") computed by CMAC's kernels; fp16 always follows the order.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "emu/cmac_grouped.hpp"
#include "emu/conv_layer.hpp"
#include "emu/isa.hpp"
#include "emu/parallel.hpp"
#include "nvdla/precision/integer.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::emu::conv {
namespace {

int16_t pad_element(const ConvLayer& l) {
    return l.precision == Precision::Int8 ? static_cast<int8_t>(l.pad_value & 0xffu)
                                          : static_cast<int16_t>(l.pad_value);
}

// The geometry of the plane: the input rows and columns the outputs touch, the pad included.
struct PlaneShape {
    int64_t first_row = 0, first_col = 0;  // input coordinates of plane row/column 0
    uint32_t rows = 0, cols = 0;
    uint32_t depth = 0;           // elements CMAC multiplies per kernel position
    uint32_t element_stride = 0;  // elements per column (feature: channels rounded up to 4)
};

PlaneShape plane_shape(const ConvLayer& l, const ConvData& d) {
    PlaneShape p;
    if (l.kind == InputKind::Feature) {
        p.first_row = -int64_t(l.pad_top);
        p.first_col = -int64_t(l.pad_left);
        p.rows = (l.out_height - 1) * l.stride_y + (l.kernel_height - 1) * l.dilation_y + 1;
        p.cols = (l.out_width - 1) * l.stride_x + (l.kernel_width - 1) * l.dilation_x + 1;
        p.depth = l.kernel_channels;
        p.element_stride = (d.channels + 3) / 4 * 4;
    } else {  // image: one "column" per line element, the kernel spans C' of them
        p.first_row = -int64_t(l.pad_top);
        p.first_col = 0;
        p.rows = (l.out_height - 1) * l.stride_y + l.kernel_height;
        const uint64_t needed =
            uint64_t(l.out_width - 1) * l.stride_x * l.csc_channels + l.kernel_channels;
        p.cols = static_cast<uint32_t>(std::max<uint64_t>(needed, d.row_elements));
        p.depth = l.kernel_channels;
        p.element_stride = 1;
    }
    return p;
}

struct EncodeBiased {  // int8 elements + 128, for the VNNI kernel
    uint8_t operator()(int16_t v) const { return static_cast<uint8_t>(v + 128); }
};
struct EncodeWord {
    int16_t operator()(int16_t v) const { return v; }
};
struct EncodeByte {  // int8 elements as they are, for oneDNN
    int8_t operator()(int16_t v) const { return static_cast<int8_t>(v); }
};

// The biased plane (int8 element + 128: its bit pattern with the top bit flipped) is the VNNI
// kernel's only (mac_wants_biased_bytes), so AVX-512 BW is there whenever one is built: runs
// 64 bytes at a time, and one masked load and store per column of atoms.
#define NVDLA_AVX512BW __attribute__((target("avx512f,avx512bw")))

// The mask of a vector's first `bytes` bytes (all 64 from 64 on).
__mmask64 first_bytes(uint64_t bytes) {
    return bytes >= 64 ? ~__mmask64(0) : (__mmask64(1) << bytes) - 1;
}

NVDLA_AVX512BW void flip_run(uint8_t* dst, const int8_t* src, uint64_t n) {
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
    uint64_t i = 0;
    for (; i + 64 <= n; i += 64)
        _mm512_storeu_si512(dst + i, _mm512_xor_si512(_mm512_loadu_si512(src + i), flip));
    if (i == n) return;
    const __mmask64 tail = first_bytes(n - i);
    _mm512_mask_storeu_epi8(dst + i, tail,
                            _mm512_xor_si512(_mm512_maskz_loadu_epi8(tail, src + i), flip));
}

// encode_atom_columns' biased form: `width` <= 64 bytes per column, the first `lanes` of them
// from the atom, the others encode(0) = 0x80. The `room` bytes from dst are the columns' and
// bytes that the caller writes after this call (fill_feature_plane: the surfaces last to
// first), so a column of nv_full's atoms (up to 32 bytes) is loaded whole and stored as 32
// bytes where that stays within them: a plain load and store instead of masked ones.
NVDLA_AVX512BW void flip_columns(uint8_t* dst, uint64_t dst_stride, const int8_t* src,
                                 uint64_t src_stride, uint64_t count, uint32_t lanes,
                                 uint32_t width, uint64_t room) {
    if (width == 32 && lanes >= 32) {  // whole atoms of nv_full: plain 32-byte moves
        const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
        for (uint64_t x = 0; x < count; ++x, dst += dst_stride, src += src_stride)
            _mm256_storeu_si256(
                reinterpret_cast<__m256i*>(dst),
                _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)), flip));
        return;
    }
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
    const __mmask64 keep = first_bytes(std::min(lanes, width)), store = first_bytes(width);
    uint64_t x = 0;
    if (width == 4 && dst_stride == 4 && src_stride == 32) {
        // The stem's 3-channel columns of nv_full atoms: the first dword of 16 atoms (8 loads)
        // gathered by permutes into one 64-byte store, instead of a masked load and store each.
        const __m512i first_dwords =
            _mm512_setr_epi32(0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24);
        const __m512i kept =
            _mm512_set1_epi32(static_cast<int>(lanes >= 4 ? 0xffffffffu : (1u << (8 * lanes)) - 1));
        for (; x + 16 <= count; x += 16, dst += 64, src += 512) {
            __m512i columns = _mm512_setzero_si512();
#pragma GCC unroll 4
            for (int pair = 0; pair < 4; ++pair)  // atoms 4 pair to 4 pair + 3
                columns = _mm512_mask_mov_epi32(
                    columns, static_cast<__mmask16>(0xf << (4 * pair)),
                    _mm512_permutex2var_epi32(_mm512_loadu_si512(src + 128 * pair), first_dwords,
                                              _mm512_loadu_si512(src + 128 * pair + 64)));
            _mm512_storeu_si512(dst, _mm512_xor_si512(_mm512_and_si512(columns, kept), flip));
        }
    }
    if (src_stride == 32 && width <= 32) {
        // The first min(lanes, width) bytes set: 32 bytes of a window over 32 set and 32 clear.
        static constexpr auto kWindow = [] {
            std::array<int8_t, 64> w{};
            for (size_t i = 0; i < 32; ++i) w[i] = -1;
            return w;
        }();
        const __m256i kept = _mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(kWindow.data() + 32 - std::min(lanes, width)));
        const __m256i flip32 = _mm256_set1_epi8(static_cast<char>(0x80));
        for (; x < count && x * dst_stride + 32 <= room; ++x, dst += dst_stride, src += src_stride)
            _mm256_storeu_si256(
                reinterpret_cast<__m256i*>(dst),
                _mm256_xor_si256(
                    _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)),
                                     kept),
                    flip32));
    }
    for (; x < count; ++x, dst += dst_stride, src += src_stride)
        _mm512_mask_storeu_epi8(dst, store,
                                _mm512_xor_si512(_mm512_maskz_loadu_epi8(keep, src), flip));
}

// The int16 plane (the AVX2 kernel's) at the AVX2 and AVX-512 levels: int8 elements
// sign-extended 16 at a time (one load, extension and store instead of SSE2's five steps).
#define NVDLA_AVX2 __attribute__((target("avx2")))

NVDLA_AVX2 void widen16(int16_t* dst, const int8_t* src) {
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(dst),
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src))));
}
NVDLA_AVX2 void widen_run(int16_t* dst, const int8_t* src, uint64_t n) {
    uint64_t i = 0;
    for (; i + 16 <= n; i += 16) widen16(dst + i, src + i);
    for (; i < n; ++i) dst[i] = src[i];
}
// Columns of whole 32-byte atoms (every lane a channel).
NVDLA_AVX2 void widen_atom_columns(int16_t* dst, uint64_t dst_stride, const int8_t* src,
                                   uint64_t src_stride, uint64_t count) {
    for (uint64_t x = 0; x < count; ++x, dst += dst_stride, src += src_stride) {
        widen16(dst, src);
        widen16(dst + 16, src + 16);
    }
}

// dst[i] = encode(src[i]), i < n: a run of elements of one input line.
template <class T, class S, class Encode>
void encode_run(T* dst, const S* src, uint64_t n, Encode encode) {
    if constexpr (std::is_same_v<S, int8_t> && std::is_same_v<Encode, EncodeBiased>) {
        flip_run(dst, src, n);
    } else if constexpr (std::is_same_v<S, int8_t> && std::is_same_v<T, int16_t> &&
                         std::is_same_v<Encode, EncodeWord>) {
        if (isa_level() != IsaLevel::Scalar) return widen_run(dst, src, n);
        // int8 widened to int16, 16 at a time with SSE2: each byte interleaved with its sign.
        uint64_t i = 0;
        for (; i + 16 <= n; i += 16) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
            const __m128i sign = _mm_cmpgt_epi8(_mm_setzero_si128(), v);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_unpacklo_epi8(v, sign));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i + 8), _mm_unpackhi_epi8(v, sign));
        }
        for (; i < n; ++i) dst[i] = encode(src[i]);
    } else if constexpr (sizeof(T) == sizeof(S) && (std::is_same_v<Encode, EncodeByte> ||
                                                    std::is_same_v<Encode, EncodeWord>)) {
        std::memcpy(dst, src, n * sizeof(T));
    } else {
        for (uint64_t i = 0; i < n; ++i) dst[i] = encode(src[i]);
    }
}

uint32_t load_u32(const int8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Stores the first `bytes` (16, 8 or 4) int8 elements of v encoded.
template <class T, class Encode>
void store_encoded(T* to, __m128i v, uint32_t bytes, Encode) {
    if constexpr (std::is_same_v<Encode, EncodeWord>) {  // widened with their signs
        const __m128i sign = _mm_cmpgt_epi8(_mm_setzero_si128(), v);
        const __m128i low = _mm_unpacklo_epi8(v, sign);
        if (bytes == 4) {
            _mm_storel_epi64(reinterpret_cast<__m128i*>(to), low);
            return;
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to), low);
        if (bytes == 16)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(to + 8), _mm_unpackhi_epi8(v, sign));
        return;
    } else {  // as they are (the biased form is flip_columns')
        if (bytes == 16)
            _mm_storeu_si128(reinterpret_cast<__m128i*>(to), v);
        else if (bytes == 8)
            _mm_storel_epi64(reinterpret_cast<__m128i*>(to), v);
        else
            std::memcpy(to, &v, 4);
    }
}

// Element e < width of `count` columns (dst_stride elements apart) from the atoms at src
// (src_stride bytes apart): encode(atom[e]) for e < lanes, encode(0) after (the atoms' lanes past
// the channels hold whatever memory held). Widths that are multiples of 4 (the plane's columns)
// go 16, 8 and 4 bytes at a time, the lanes kept by a mask.
template <class T, class Encode>
void encode_atom_columns(T* dst, uint64_t dst_stride, const int8_t* src, uint64_t src_stride,
                         uint64_t count, uint32_t lanes, uint32_t width, uint64_t room,
                         Encode encode) {
    if constexpr (std::is_same_v<T, uint8_t> && std::is_same_v<Encode, EncodeBiased>) {
        flip_columns(dst, dst_stride, src, src_stride, count, lanes, width, room);
        return;
    }
    if constexpr (std::is_same_v<T, int16_t> && std::is_same_v<Encode, EncodeWord>)
        if (width == 32 && lanes >= 32 && src_stride == 32 && isa_level() != IsaLevel::Scalar)
            return widen_atom_columns(dst, dst_stride, src, src_stride, count);
    if (width % 4 != 0) {
        const T zero = encode(0);
        for (uint64_t x = 0; x < count; ++x, dst += dst_stride, src += src_stride)
            for (uint32_t e = 0; e < width; ++e) dst[e] = e < lanes ? encode(src[e]) : zero;
        return;
    }
    int8_t keep_bytes[64 + 16] = {};  // width <= the atom <= 64 bytes
    std::fill_n(keep_bytes, std::min(lanes, width), int8_t(-1));
    const auto piece = [&](T* to, const int8_t* from, uint32_t at, uint32_t bytes) {
        __m128i v;
        if (bytes == 16)
            v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + at));
        else if (bytes == 8)
            v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(from + at));
        else
            v = _mm_cvtsi32_si128(static_cast<int>(load_u32(from + at)));
        v = _mm_and_si128(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(keep_bytes + at)));
        store_encoded(to + at, v, bytes, encode);
    };
    for (uint64_t x = 0; x < count; ++x, dst += dst_stride, src += src_stride) {
        uint32_t at = 0;
        for (; at + 16 <= width; at += 16) piece(dst, src, at, 16);
        if (at + 8 <= width) piece(dst, src, at, 8), at += 8;
        if (at < width) piece(dst, src, at, 4);
    }
}

// `count` copies of the `bytes` bytes at column, one after the other from dst. The usual sizes
// are fixed-size copies, which the compiler makes moves: a call of memmove per 32-byte pad
// column cost more than the copy (about 90 000 calls per MobileNetV2 image).
template <size_t Bytes>
void repeat_column(std::byte* dst, const std::byte* column, uint64_t count) {
    for (uint64_t c = 0; c < count; ++c) std::memcpy(dst + c * Bytes, column, Bytes);
}
void repeat_column(void* dst, const void* column, size_t bytes, uint64_t count) {
    auto* to = static_cast<std::byte*>(dst);
    const auto* from = static_cast<const std::byte*>(column);
    switch (bytes) {
        case 4: return repeat_column<4>(to, from, count);
        case 8: return repeat_column<8>(to, from, count);
        case 16: return repeat_column<16>(to, from, count);
        case 32: return repeat_column<32>(to, from, count);
        case 64: return repeat_column<64>(to, from, count);
        default:
            for (uint64_t c = 0; c < count; ++c) std::memcpy(to + c * bytes, from, bytes);
    }
}

// The rows of the input a feature plane row reads from: the int8 or the int16 form.
template <class S>
const S* source_row(const ConvData& d, uint32_t n, uint32_t y) {
    if constexpr (std::is_same_v<S, int8_t>)
        return d.row8(n, y);
    else
        return d.row(n, y);
}

// Fills a feature plane from the buffer: pad value on the input's channels outside the input,
// zeros on the lanes past them, then zeros up to rows_total.
template <class S, class T, class Encode>
void fill_feature_plane(const ConvLayer& l, const ConvData& d, const PlaneShape& p, T* plane,
                        uint64_t row_elements, uint64_t rows_total, Encode encode) {
    const T zero = encode(0);
    const uint32_t stride = p.element_stride, channels = d.channels;
    // Kept per thread: a vector per layer was one of its few allocations. The layer's other
    // threads read it through `pad_column` (a lambda does not capture a thread_local: there
    // the name is their own).
    thread_local std::vector<T> kept_pad_column;
    kept_pad_column.assign(stride, zero);
    std::fill_n(kept_pad_column.begin(), channels, encode(pad_element(l)));
    const T* const pad_column = kept_pad_column.data();
    const auto pad_columns = [&](T* dst, uint64_t count) {
        repeat_column(dst, pad_column, stride * sizeof(T), count);
    };
    // The plane's columns that lie inside the input: [first, last).
    const int64_t first = std::clamp<int64_t>(-p.first_col, 0, p.cols);
    const int64_t last = std::clamp<int64_t>(int64_t(d.width) - p.first_col, first, p.cols);
    const uint64_t plane_elements = uint64_t(p.rows) * row_elements;
    const auto fill_row = [&](uint32_t n, uint32_t r) {
        T* row = plane + n * plane_elements + r * row_elements;
        const int64_t y = p.first_row + r;
        if (y < 0 || y >= int64_t(d.height)) {
            pad_columns(row, p.cols);
            return;
        }
        pad_columns(row, uint64_t(first));
        pad_columns(row + uint64_t(last) * stride, uint64_t(p.cols - last));
        if (last == first) return;
        if constexpr (std::is_same_v<S, int8_t>) {
            if (d.in_atoms) {  // straight from CDMA's atoms, surface by surface
                const uint32_t per_atom = d.atom_bytes;
                const uint64_t column = uint64_t(p.first_col + first);
                const uint64_t count = uint64_t(last - first);
                // The surfaces last to first: the bytes a narrower last surface's columns
                // store past themselves (flip_columns) are the next column's, written after.
                for (uint32_t s = d.surfaces; s-- > 0;) {
                    T* dst = row + uint64_t(first) * stride + uint64_t(s) * per_atom;
                    const int8_t* src =
                        d.atom_line(n, s, static_cast<uint32_t>(y)) + column * per_atom;
                    const uint32_t lanes = std::min(per_atom, channels - s * per_atom);
                    const uint32_t width = std::min(per_atom, stride - s * per_atom);
                    if (stride == per_atom && lanes == per_atom)  // the atoms are the row
                        encode_run(dst, src, count * per_atom, encode);
                    else
                        encode_atom_columns(dst, stride, src, per_atom, count, lanes, width,
                                            count * stride - uint64_t(s) * per_atom, encode);
                }
                return;
            }
        }
        const S* src =
            source_row<S>(d, n, static_cast<uint32_t>(y)) + (p.first_col + first) * channels;
        T* dst = row + uint64_t(first) * stride;
        if (stride == channels) {
            encode_run(dst, src, uint64_t(last - first) * channels, encode);
            return;
        }
        for (int64_t c = first; c < last; ++c, dst += stride, src += channels) {
            encode_run(dst, src, channels, encode);
            std::fill(dst + channels, dst + stride, zero);
        }
    };
    // Rows on the layer's threads: each row is written by one of them, from the buffer alone.
    const uint64_t rows = uint64_t(d.batches) * p.rows;
    parallel_for(l.threads, rows, rows * row_elements * sizeof(T) * kCopyWorkPerByte,
                 [&](uint64_t i0, uint64_t i1) {
                     for (uint64_t i = i0; i < i1; ++i)
                         fill_row(static_cast<uint32_t>(i / p.rows),
                                  static_cast<uint32_t>(i % p.rows));
                 });
    std::fill(plane + d.batches * plane_elements, plane + rows_total, zero);
}

// Fills `plane` (int16 elements, or int8 elements + 128 when `biased_bytes`) from the buffer.
template <class T, class Encode>
void fill_plane(const ConvLayer& l, const ConvData& d, const PlaneShape& p, T* plane,
                uint64_t row_elements, uint64_t rows_total, Encode encode) {
    if (l.kind == InputKind::Feature) {
        if (d.narrow())
            fill_feature_plane<int8_t>(l, d, p, plane, row_elements, rows_total, encode);
        else
            fill_feature_plane<int16_t>(l, d, p, plane, row_elements, rows_total, encode);
        return;
    }
    const T pad = encode(pad_element(l));
    const T zero = encode(0);
    parallel_for(
        l.threads, p.rows, uint64_t(p.rows) * row_elements * sizeof(T) * kCopyWorkPerByte,
        [&](uint64_t r0, uint64_t r1) {
            for (uint64_t r = r0; r < r1; ++r) {
                T* row = plane + r * row_elements;
                const int64_t y = p.first_row + int64_t(r);
                const bool row_inside = y >= 0 && y < int64_t(d.height);
                // Image lines outside the image read the pad value; past a line's end
                // zeros.
                const int16_t* src = row_inside ? d.row(0, static_cast<uint32_t>(y)) : nullptr;
                for (uint64_t e = 0; e < row_elements; ++e)
                    row[e] = !row_inside ? pad : (e < d.row_elements ? encode(src[e]) : zero);
            }
        });
    std::fill(plane + uint64_t(p.rows) * row_elements, plane + rows_total, zero);
}

// The operands CMAC's kernels take, over a plane built for them in the scratch buffers.
MacProblem build_operands(const ConvLayer& l, const ConvData& d, const ConvWeights& w, bool biased,
                          ConvScratch& o) {
    const PlaneShape p = plane_shape(l, d);
    MacProblem m;
    m.batches = d.batches;
    m.out_height = l.out_height;
    m.out_width = l.out_width;
    m.kernels = l.kernels;
    m.plane_rows = p.rows;
    m.row_elements = uint64_t(p.cols) * p.element_stride;
    m.row_step = l.stride_y;
    if (l.kind == InputKind::Feature) {
        m.row_dilation = l.dilation_y;
        m.x_step = uint64_t(l.stride_x) * p.element_stride;
        m.s_step = uint64_t(l.dilation_x) * p.element_stride;
        m.taps_s = l.kernel_width;
    } else {
        m.row_dilation = 1;
        m.x_step = uint64_t(l.stride_x) * l.csc_channels;
        m.s_step = 0;
        m.taps_s = 1;
    }
    m.taps_r = l.kernel_height;
    m.depth = p.depth;
    m.weights = w.values.data();
    m.cache = &w;
    m.threads = l.threads;
    // Slack after the last row: kernels read whole vectors past a kernel's last element.
    // The scratch only grows: fill_plane writes every element up to `total`, and a vector
    // shrunk by a small layer would zero what it grows by for the next large one.
    const uint64_t total = uint64_t(d.batches) * p.rows * m.row_elements + kMacReadSlack;
    if (biased) {
        if (o.bytes.size() < total) o.bytes.resize(total);
        fill_plane(l, d, p, o.bytes.data(), m.row_elements, total, EncodeBiased{});
        m.bytes = o.bytes.data();
    } else {
        if (o.words.size() < total) o.words.resize(total);
        fill_plane(l, d, p, o.words.data(), m.row_elements, total, EncodeWord{});
        m.words = o.words.data();
    }
    return m;
}

// Calls fn(data, weights, lanes) for every MAC atomic operation of output (n, y, x) and kernel
// k, in the order CACC accumulates them. scratch holds 2 x 64 elements for post-extension.
template <class Fn>
void for_each_atomic(const ConvLayer& l, const MacProblem& m, uint32_t n, uint32_t y, uint32_t x,
                     uint32_t k, int16_t* scratch, Fn&& fn) {
    const uint32_t a = l.atomic_c;
    const uint64_t taps = uint64_t(m.taps_r) * m.taps_s;
    const int16_t* kernel = m.weights + k * taps * m.depth;
    const int16_t* plane = m.words + uint64_t(n) * m.plane_rows * m.row_elements;
    const uint64_t column = uint64_t(x) * m.x_step;
    if (l.kind == InputKind::Image && l.post_extension > 1) {
        // Post-extension: one operation takes `f` kernel rows of a/f lanes each.
        const uint32_t f = l.post_extension, lanes = a / f;
        for (uint32_t r0 = 0; r0 < m.taps_r; r0 += f) {
            std::fill(scratch, scratch + 2 * a, 0);
            for (uint32_t i = 0; i < f && r0 + i < m.taps_r; ++i) {
                const uint32_t r = r0 + i;
                const int16_t* row = plane + uint64_t(y * m.row_step + r) * m.row_elements + column;
                std::copy_n(row, std::min(lanes, m.depth), scratch + i * lanes);
                std::copy_n(kernel + uint64_t(r) * m.depth, std::min(lanes, m.depth),
                            scratch + a + i * lanes);
            }
            fn(scratch, scratch + a, a);
        }
        return;
    }
    for (uint32_t c0 = 0; c0 < m.depth; c0 += a) {
        const uint32_t lanes = std::min(a, m.depth - c0);
        for (uint32_t r = 0; r < m.taps_r; ++r) {
            const int16_t* row = plane +
                                 uint64_t(y * m.row_step + r * m.row_dilation) * m.row_elements +
                                 column + c0;
            for (uint32_t s = 0; s < m.taps_s; ++s)
                fn(row + s * m.s_step, kernel + (uint64_t(r) * m.taps_s + s) * m.depth + c0, lanes);
        }
    }
}

// Whether a 48-bit assembly could saturate: the largest possible |sum| of any output.
bool may_saturate(const ConvLayer& l, const ConvData& d, const ConvWeights& w) {
    if (l.precision != Precision::Int16) return false;  // int8 stays below 2^37
    int64_t max_data = std::abs(int64_t(pad_element(l)));
    for (int16_t v : d.values) max_data = std::max<int64_t>(max_data, std::abs(int64_t(v)));
    int64_t max_weight = 0;
    for (int16_t v : w.values) max_weight = std::max<int64_t>(max_weight, std::abs(int64_t(v)));
    const __int128 bound =
        __int128(max_data) * max_weight * l.kernel_height * l.kernel_width * l.kernel_channels;
    return bound > kAccumulatorMax;
}

// ---- Winograd (the PRA, csc_pra_hls / NV_NVDLA_CSC_pra_cell) --------------------------------

// V = C^T d C of one channel's 4x4 tile d (row-major) in the 18-bit integer datapath, each
// result rounded by 2^truncate and saturated to the precision's width.
void pra_int(const int32_t d[16], uint32_t truncate, unsigned bits, int32_t out[16]) {
    int32_t m[16];
    for (int i = 0; i < 4; ++i) {
        m[i] = d[i] - d[8 + i];
        m[4 + i] = d[4 + i] + d[8 + i];
        m[8 + i] = d[8 + i] - d[4 + i];
        m[12 + i] = d[4 + i] - d[12 + i];
    }
    for (int i = 0; i < 4; ++i) {
        const int32_t t[4] = {m[4 * i] - m[4 * i + 2], m[4 * i + 1] + m[4 * i + 2],
                              m[4 * i + 2] - m[4 * i + 1], m[4 * i + 1] - m[4 * i + 3]};
        for (int j = 0; j < 4; ++j)
            out[4 * i + j] =
                static_cast<int32_t>(precision::shift_right_round_saturate(t[j], truncate, bits));
    }
}

// The same in fp17 (FpAdd / FpSub), back to fp16.
void pra_fp16(const uint16_t d[16], uint16_t out[16]) {
    using precision::fp16_to_fp17;
    using precision::fp17_add;
    auto sub = [](uint32_t a, uint32_t b) { return fp17_add(a, b ^ fp17::kSignBit); };
    uint32_t m[16];
    for (int i = 0; i < 4; ++i) {
        m[i] = sub(fp16_to_fp17(d[i]), fp16_to_fp17(d[8 + i]));
        m[4 + i] = fp17_add(fp16_to_fp17(d[4 + i]), fp16_to_fp17(d[8 + i]));
        m[8 + i] = sub(fp16_to_fp17(d[8 + i]), fp16_to_fp17(d[4 + i]));
        m[12 + i] = sub(fp16_to_fp17(d[4 + i]), fp16_to_fp17(d[12 + i]));
    }
    for (int i = 0; i < 4; ++i) {
        out[4 * i + 0] = precision::fp17_to_fp16(sub(m[4 * i], m[4 * i + 2]));
        out[4 * i + 1] = precision::fp17_to_fp16(fp17_add(m[4 * i + 1], m[4 * i + 2]));
        out[4 * i + 2] = precision::fp17_to_fp16(sub(m[4 * i + 2], m[4 * i + 1]));
        out[4 * i + 3] = precision::fp17_to_fp16(sub(m[4 * i + 1], m[4 * i + 3]));
    }
}

// The transformed input tile of output tile (ty, tx): [position][channel], channel fastest.
void winograd_tile(const ConvLayer& l, const ConvData& d, uint32_t ty, uint32_t tx,
                   std::vector<int16_t>& v) {
    const uint32_t channels = d.channels;
    v.assign(16ull * channels, 0);
    for (uint32_t c = 0; c < channels; ++c) {
        if (l.precision == Precision::Fp16) {
            uint16_t tile[16], out[16];
            for (uint32_t i = 0; i < 16; ++i)
                tile[i] = static_cast<uint16_t>(
                    d.row(0, ty * 2 + i / 4)[uint64_t(tx * 2 + i % 4) * channels + c]);
            pra_fp16(tile, out);
            for (uint32_t i = 0; i < 16; ++i) v[i * channels + c] = static_cast<int16_t>(out[i]);
        } else {
            int32_t tile[16], out[16];
            for (uint32_t i = 0; i < 16; ++i)
                tile[i] = d.row(0, ty * 2 + i / 4)[uint64_t(tx * 2 + i % 4) * channels + c];
            pra_int(tile, l.pra_truncate, l.precision == Precision::Int8 ? 8 : 16, out);
            for (uint32_t i = 0; i < 16; ++i) v[i * channels + c] = static_cast<int16_t>(out[i]);
        }
    }
}

// Y = A^T M A of the 16 products, A^T = [1 1 1 0; 0 1 -1 -1].
template <class T>
std::array<T, 4> winograd_output(const T m[16]) {
    T p2[8];
    for (int i = 0; i < 4; ++i) {
        p2[i] = m[i] + m[i + 4] + m[i + 8];
        p2[i + 4] = m[i + 4] - m[i + 8] - m[i + 12];
    }
    return {p2[0] + p2[1] + p2[2], p2[1] - p2[2] - p2[3], p2[4] + p2[5] + p2[6],
            p2[5] - p2[6] - p2[7]};
}

size_t out_index(const ConvLayer& l, uint32_t n, uint32_t k, uint32_t y, uint32_t x) {
    return ((size_t(n) * l.out_channels + k) * l.out_height + y) * l.out_width + x;
}

void winograd_int(const ConvLayer& l, const ConvData& d, const ConvWeights& w,
                  std::vector<int64_t>& sums) {
    std::vector<int16_t> v;
    const uint32_t channels = d.channels;
    for (uint32_t ty = 0; ty < l.out_height / 2; ++ty)
        for (uint32_t tx = 0; tx < l.out_width / 2; ++tx) {
            winograd_tile(l, d, ty, tx, v);
            for (uint32_t k = 0; k < l.kernels; ++k) {
                const int16_t* u = w.kernel(k);
                int64_t m[16];
                for (uint32_t i = 0; i < 16; ++i)
                    m[i] = dot_int(v.data() + i * channels, u + i * channels, channels);
                const auto y = winograd_output(m);
                for (uint32_t j = 0; j < 4; ++j)
                    sums[out_index(l, 0, k, ty * 2 + j / 2, tx * 2 + j % 2)] = y[j];
            }
        }
}

// The 64 lanes of MAC operation c0 / 4 of a [position][channel] cube: 16 positions x 4 channels.
void winograd_lanes(const int16_t* cube, uint32_t channels, uint32_t c0, uint16_t* lanes) {
    for (uint32_t i = 0; i < 16; ++i)
        for (uint32_t c = 0; c < 4; ++c)
            lanes[i * 4 + c] = static_cast<uint16_t>(cube[i * channels + c0 + c]);
}

void winograd_fp16(const ConvLayer& l, const ConvData& d, const ConvWeights& w,
                   std::vector<int32_t>& out) {
    const uint32_t channels = d.channels, operations = channels / 4;
    // Every kernel's operations laid out once: [k][operation][64].
    std::vector<uint16_t> kernels(size_t(l.kernels) * operations * 64);
    for (uint32_t k = 0; k < l.kernels; ++k)
        for (uint32_t op = 0; op < operations; ++op)
            winograd_lanes(w.kernel(k), channels, op * 4,
                           kernels.data() + (size_t(k) * operations + op) * 64);
    const uint32_t tiles_x = l.out_width / 2, tiles = l.out_height / 2 * tiles_x;
    const uint64_t work = uint64_t(tiles) * l.kernels * channels * 16 * 64;
    // Tiles split among the threads; each output as with one thread.
    parallel_for(l.threads, tiles, work, [&](uint64_t t0, uint64_t t1) {
        std::vector<int16_t> v;
        std::vector<uint16_t> data(size_t(operations) * 64);
        for (uint64_t t = t0; t < t1; ++t) {
            const uint32_t ty = uint32_t(t / tiles_x), tx = uint32_t(t % tiles_x);
            winograd_tile(l, d, ty, tx, v);
            for (uint32_t op = 0; op < operations; ++op)
                winograd_lanes(v.data(), channels, op * 4, data.data() + size_t(op) * 64);
            for (uint32_t k = 0; k < l.kernels; ++k) {
                const uint16_t* kernel = kernels.data() + size_t(k) * operations * 64;
                uint64_t acc[4] = {0, 0, 0, 0};
                for (uint32_t op = 0; op < operations; ++op) {
                    uint64_t mac[4];
                    cmac_fp16_winograd(data.data() + size_t(op) * 64, kernel + size_t(op) * 64,
                                       mac);
                    for (int j = 0; j < 4; ++j) acc[j] = cacc_fp48_add(acc[j], mac[j]);
                }
                for (uint32_t j = 0; j < 4; ++j)
                    out[out_index(l, 0, k, ty * 2 + j / 2, tx * 2 + j % 2)] =
                        static_cast<int32_t>(cacc_fp48_to_fp32(acc[j]));
            }
        }
    });
}

}  // namespace

void build_feature_plane8(const ConvLayer& l, const ConvData& d, std::vector<int8_t>& plane,
                          uint32_t& rows, uint32_t& cols) {
    PlaneShape p = plane_shape(l, d);
    p.element_stride = d.channels;
    rows = p.rows;
    cols = p.cols;
    const uint64_t row_elements = uint64_t(p.cols) * d.channels;
    const uint64_t total = uint64_t(d.batches) * p.rows * row_elements;
    plane.resize(total);
    fill_plane(l, d, p, plane.data(), row_elements, total, EncodeByte{});
}

bool channels_last_int(const ConvLayer& l, const ConvData& d, const ConvWeights& w) {
    return l.precision != Precision::Fp16 && l.kind != InputKind::Winograd &&
           !may_saturate(l, d, w);
}

MacProblem mac_problem(const ConvLayer& l, const ConvData& d, const ConvWeights& w,
                       ConvScratch& scratch) {
    // The kernels' packed weights load while the plane is filled.
    prefetch_packing(w, false);
    const MacProblem m = build_operands(l, d, w, mac_wants_biased_bytes(l.precision), scratch);
    prefetch_packing(w, true);
    return m;
}

uint32_t convolve_int(const ConvLayer& l, const ConvData& d, const ConvWeights& w,
                      ConvScratch& scratch, AccumulatorCube& cube) {
    std::vector<int64_t>& sums = scratch.sums;
    const size_t count = size_t(l.batches) * l.out_channels * l.out_height * l.out_width;
    if (channels_last_int(l, d, w)) {
        // CMAC's kernels, delivering channels last.
        const MacProblem m = mac_problem(l, d, w, scratch);
        int32_t* out = channels_last_storage(scratch, count);
        cube.values.clear();
        cube.sums = scratch.cube;
        cube.channel_stride = l.out_channels;
        cube.clip = 0;
        return mac_convolve_int(m, l.precision, l.clip_truncate, out);
    }
    cube.values.resize(count);
    int32_t* out = cube.values.data();
    if (l.kind == InputKind::Winograd) {
        sums.assign(count, 0);
        winograd_int(l, d, w, sums);
        return cacc_deliver_int(sums.data(), count, l.clip_truncate, out);
    }
    // The hardware's order, one MAC operation at a time.
    sums.assign(count, 0);
    const MacProblem m = build_operands(l, d, w, false, scratch);
    int16_t lanes[256];
    for (uint32_t n = 0; n < l.batches; ++n)
        for (uint32_t k = 0; k < l.kernels; ++k)
            for (uint32_t y = 0; y < l.out_height; ++y)
                for (uint32_t x = 0; x < l.out_width; ++x) {
                    int64_t acc = 0;
                    for_each_atomic(l, m, n, y, x, k, lanes,
                                    [&](const int16_t* a, const int16_t* b, uint32_t n_lanes) {
                                        acc = cacc_accumulate_int(acc, dot_int(a, b, n_lanes));
                                    });
                    sums[out_index(l, n, k, y, x)] = acc;
                }
    return cacc_deliver_int(sums.data(), count, l.clip_truncate, out);
}

void convolve_fp16_reference(const ConvLayer& l, const ConvData& d, const ConvWeights& w,
                             std::vector<int32_t>& out) {
    out.assign(size_t(l.batches) * l.out_channels * l.out_height * l.out_width, 0);
    if (l.kind == InputKind::Winograd) {
        winograd_fp16(l, d, w, out);
        return;
    }
    ConvScratch scratch;
    const MacProblem m = build_operands(l, d, w, false, scratch);
    const uint64_t work = uint64_t(l.batches) * l.out_height * l.out_width * l.kernels *
                          l.kernel_height * l.kernel_width * l.kernel_channels * 64;
    // Kernels split among the threads; every output is computed as with one thread.
    parallel_for(l.threads, l.kernels, work, [&](uint64_t k0, uint64_t k1) {
        int16_t lanes[256];
        for (uint32_t n = 0; n < l.batches; ++n)
            for (uint32_t k = uint32_t(k0); k < k1; ++k)
                for (uint32_t y = 0; y < l.out_height; ++y)
                    for (uint32_t x = 0; x < l.out_width; ++x) {
                        uint64_t acc = 0;
                        for_each_atomic(
                            l, m, n, y, x, k, lanes,
                            [&](const int16_t* a, const int16_t* b, uint32_t count) {
                                acc = cacc_fp48_add(
                                    acc, cmac_fp16_dot_scalar(reinterpret_cast<const uint16_t*>(a),
                                                              reinterpret_cast<const uint16_t*>(b),
                                                              count));
                            });
                        out[out_index(l, n, k, y, x)] =
                            static_cast<int32_t>(cacc_fp48_to_fp32(acc));
                    }
    });
}

namespace {

// convolve_fp16's decoded kernels, kept in the weights' cache entry (ConvWeights::packed, which
// CDMA drops when the weights change) with what their decoding depends on besides the weights.
struct Fp16KernelsKey {
    InputKind kind = InputKind::Feature;
    uint32_t post_extension = 1, atomic_c = 0, kernels = 0, taps_r = 0, taps_s = 0, depth = 0;
    uint32_t stored = 0;
    unsigned width = 0;
    bool operator==(const Fp16KernelsKey&) const = default;
};
struct CachedFp16Kernels {
    Fp16KernelsKey key;
    std::shared_ptr<const Fp16Operands> kernels;
};
// The largest decoded kernels kept (a fully connected layer's would take several times its
// weights' memory).
constexpr uint64_t kMaxKeptFp16Kernels = uint64_t(16) << 20;

}  // namespace

void convolve_fp16(const ConvLayer& l, const ConvData& d, const ConvWeights& w,
                   std::vector<int32_t>& out) {
    if (l.kind == InputKind::Winograd || !cmac_fp16_vector_cell()) {
        convolve_fp16_reference(l, d, w, out);
        return;
    }
    out.assign(size_t(l.batches) * l.out_channels * l.out_height * l.out_width, 0);
    // The plane's buffer kept per thread (it only grows): a new one per operation was zeroed
    // before fill_plane wrote it, in pages fresh from the system.
    thread_local ConvScratch scratch;
    const MacProblem m = build_operands(l, d, w, false, scratch);
    // Block-diagonal weights (depthwise chunks): only the band each kernel reads.
    if (convolve_fp16_banded(l, m, out)) return;
    // The operations of one output, the same sequence for every output: count them and their
    // widest, then decode every kernel's once (they do not depend on the position).
    uint32_t operations = 0;
    unsigned lanes = 0;
    int16_t staging[256];
    for_each_atomic(l, m, 0, 0, 0, 0, staging, [&](const int16_t*, const int16_t*, uint32_t n) {
        ++operations;
        lanes = std::max(lanes, unsigned(n));
    });
    // Operations stored `width` lanes wide; narrow ones share a vector, so their count is
    // rounded up with operations of zeros, which leave CACC's sums as they are.
    unsigned width = 1;
    while (width < lanes) width *= 2;
    const uint32_t group = std::max(1u, 16 / width);
    const uint32_t stored = (operations + group - 1) / group * group;
    // Kernels decoded in passes of at most about 64 MiB (a large fully connected layer would
    // take several times its weights' memory at once).
    const size_t kernel_bytes = size_t(stored) * width * (sizeof(uint32_t) * 2 + sizeof(uint16_t));
    const uint32_t per_pass =
        uint32_t(std::clamp<size_t>((size_t(64) << 20) / kernel_bytes, 1, l.kernels));
    constexpr uint32_t kBlock = 64;
    const uint64_t positions = uint64_t(l.batches) * l.out_height * l.out_width;
    const uint64_t blocks = (positions + kBlock - 1) / kBlock;
    // The operands' buffers are kept per thread from one operation to the next: allocated and
    // zeroed anew for every operation, they cost more than a small layer's MACs, and freeing
    // them could give their pages back to the system (a fault per page on the next one).
    // (The parts on other threads reach the calling thread's kernels through this reference.)
    thread_local Fp16Operands kept_kernels;
    // Kernels [k_first, k_first + pass) decoded into `into`.
    const auto decode_kernels = [&](Fp16Operands& into, uint32_t k_first, uint32_t pass) {
        into.resize(size_t(pass) * stored, width);
        const uint64_t weight_work = uint64_t(pass) * stored * width;
        parallel_for(l.threads, pass, weight_work, [&](uint64_t k0, uint64_t k1) {
            int16_t scratch_lanes[256];
            for (uint32_t k = uint32_t(k0); k < k1; ++k) {
                size_t op = size_t(k) * stored;
                for_each_atomic(
                    l, m, 0, 0, 0, k_first + k, scratch_lanes,
                    [&](const int16_t*, const int16_t* b, uint32_t n) { into.set(op++, b, n); });
                while (op < size_t(k + 1) * stored) into.set(op++, nullptr, 0);
            }
        });
    };
    // A layer's kernels decoded in one pass are kept with its weights for the next run.
    std::shared_ptr<const Fp16Operands> cached;
    if (m.cache && m.cache->values.data() == m.weights && per_pass == l.kernels &&
        uint64_t(l.kernels) * kernel_bytes <= kMaxKeptFp16Kernels) {
        const Fp16KernelsKey key{l.kind,   l.post_extension, l.atomic_c, l.kernels, m.taps_r,
                                 m.taps_s, m.depth,          stored,     width};
        if (const auto* c = std::any_cast<CachedFp16Kernels>(&m.cache->packed);
            c && c->key == key) {
            cached = c->kernels;
        } else {
            auto decoded = std::make_shared<Fp16Operands>();
            decode_kernels(*decoded, 0, l.kernels);
            m.cache->packed = CachedFp16Kernels{key, decoded};
            m.cache->packed_bytes = decoded->bytes();
            cached = std::move(decoded);
        }
    }
    for (uint32_t k_first = 0; k_first < l.kernels; k_first += per_pass) {
        const uint32_t pass = std::min(per_pass, l.kernels - k_first);
        if (!cached) decode_kernels(kept_kernels, k_first, pass);
        const Fp16Operands& kernels = cached ? *cached : kept_kernels;
        // Output positions in blocks that share each kernel's operations while they are in
        // the cache, and when there are fewer blocks than threads (fully connected layers)
        // each block's kernels in slices; the pieces split among the threads, every output
        // computed as with one thread.
        const uint32_t slices =
            uint32_t(std::clamp<uint64_t>(l.threads > blocks ? l.threads / blocks : 1, 1, pass));
        const uint64_t work = positions * pass * stored * width * 16;
        parallel_for(l.threads, blocks * slices, work, [&](uint64_t i0, uint64_t i1) {
            thread_local Fp16Operands data;
            data.resize(size_t(kBlock) * stored, width);
            int16_t scratch_lanes[256];
            for (uint64_t i = i0; i < i1; ++i) {
                const uint64_t first = i / slices * kBlock;
                const uint32_t slice = uint32_t(i % slices);
                const uint32_t count = uint32_t(std::min<uint64_t>(kBlock, positions - first));
                uint32_t n[kBlock], y[kBlock], x[kBlock];
                for (uint32_t p = 0; p < count; ++p) {
                    const uint64_t at = first + p;
                    x[p] = uint32_t(at % l.out_width);
                    y[p] = uint32_t(at / l.out_width % l.out_height);
                    n[p] = uint32_t(at / l.out_width / l.out_height);
                    size_t op = size_t(p) * stored;
                    for_each_atomic(l, m, n[p], y[p], x[p], 0, scratch_lanes,
                                    [&](const int16_t* a, const int16_t*, uint32_t lanes_used) {
                                        data.set(op++, a, lanes_used);
                                    });
                    while (op < size_t(p + 1) * stored) data.set(op++, nullptr, 0);
                }
                // A partial block's other positions as a fresh buffer has them (their sums are
                // computed with the block's and dropped).
                if (count < kBlock) data.zero_from(size_t(count) * stored);
                const uint32_t k_begin = pass * slice / slices, k_end = pass * (slice + 1) / slices;
                // A block within one batch is one run of each kernel's (planar) outputs: its
                // sums are delivered straight into it.
                const bool one_run = n[0] == n[count - 1];
                for (uint32_t k = k_begin; k < k_end; ++k) {
                    uint64_t acc[kBlock];
                    uint32_t fp32[kBlock];
                    cmac_fp16_accumulate(data, 0, stored, count, kernels, size_t(k) * stored,
                                         operations, acc);
                    if (one_run) {
                        cacc_fp48_to_fp32_lanes(
                            acc, count,
                            reinterpret_cast<uint32_t*>(
                                out.data() + out_index(l, n[0], k_first + k, y[0], x[0])));
                        continue;
                    }
                    cacc_fp48_to_fp32_lanes(acc, count, fp32);
                    for (uint32_t p = 0; p < count; ++p)
                        out[out_index(l, n[p], k_first + k, y[p], x[p])] =
                            static_cast<int32_t>(fp32[p]);
                }
            }
        });
    }
    // A large layer's kernels are not kept (a fully connected layer's passes take up to 64 MiB).
    if (size_t(per_pass) * kernel_bytes > kMaxKeptFp16Kernels) kept_kernels = Fp16Operands{};
}

}  // namespace nvdla::emu::conv
