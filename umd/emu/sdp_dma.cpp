// SDP_RDMA (input cube and BS/BN/EW operands) and SDP's write DMA, a line of atoms per
// transfer (cmod/sdp/NV_NVDLA_sdp.cpp SdpRdmaCore, ExtractRdmaResponsePayloadCore,
// WdmaSequenceDC/Batch).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "common/avx2_transpose.hpp"
#include "emu/isa.hpp"
#include "emu/sdp_internal.hpp"
#include "nvdla/precision/nvdla_float.hpp"

namespace nvdla::emu::sdp {
namespace {

int16_t load16(const std::byte* p) {
    return static_cast<int16_t>(static_cast<uint16_t>(std::to_integer<uint16_t>(p[0]) |
                                                      std::to_integer<uint16_t>(p[1]) << 8));
}

// dst[i] = the low byte of src[i], i < n (int8 outputs, kept sign-extended in 16 bits).
void pack_low_bytes(std::byte* dst, const uint16_t* src, uint32_t n) {
    const __m128i low = _mm_set1_epi16(0xff);
    uint32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 8));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                         _mm_packus_epi16(_mm_and_si128(a, low), _mm_and_si128(b, low)));
    }
    for (; i < n; ++i) dst[i] = static_cast<std::byte>(src[i] & 0xffu);
}

// dst[i] = src[i], i < n: int8 values widened, 16 at a time with AVX2 where SDP's vector forms
// run (simd_enabled: the tests compare the two through force_scalar) and one by one otherwise.
template <class T>
__attribute__((target("avx2"))) void widen_avx2(const int8_t* src, size_t n, T* dst) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
        if constexpr (sizeof(T) == 2) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_cvtepi8_epi16(bytes));
        } else {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_cvtepi8_epi32(bytes));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i + 8),
                                _mm256_cvtepi8_epi32(_mm_srli_si128(bytes, 8)));
        }
    }
    for (; i < n; ++i) dst[i] = src[i];
}
template <class T>
void widen(const int8_t* src, size_t n, T* dst) {
    if (simd_enabled()) {
        widen_avx2(src, n, dst);
        return;
    }
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
}

// Address of line h of a surface (packed 1 x 1 cubes are transferred whole instead).
uint64_t line_address(const CubeAddress& a, uint32_t batch, uint32_t surface, uint32_t line) {
    return a.base + uint64_t(batch) * a.batch_stride + uint64_t(surface) * a.surface_stride +
           uint64_t(line) * a.line_stride;
}

// One kept line of 32-lane int8 atoms (`width` >= 8 of them) into PDP's planes: lane l's value
// at column w goes to rows[l * lane_step + w], sign-extended. 8 columns at a time, each half of
// the atoms' lanes widened to 16 bits and transposed 8x8 within 128-bit lanes (lanes 0-7 from
// the low halves, 8-15 from the high ones); the last block overlaps the one before it.
__attribute__((target("avx2"))) void hand_over_int8_line_avx2(const std::byte* line, uint32_t width,
                                                              int16_t* rows, size_t lane_step) {
    for (uint32_t w0 = 0; w0 < width; w0 += 8) {
        const uint32_t w = std::min(w0, width - 8);
        for (uint32_t half = 0; half < 2; ++half) {
            __m256i r[8];
            for (uint32_t c = 0; c < 8; ++c)
                r[c] = _mm256_cvtepi8_epi16(_mm_loadu_si128(
                    reinterpret_cast<const __m128i*>(line + size_t(w + c) * 32 + half * 16)));
            simd::transpose8x8_epi16(r);  // r[j]: lane j's columns, then lane j + 8's
            for (uint32_t j = 0; j < 8; ++j) {
                int16_t* low = rows + (half * 16 + j) * lane_step + w;
                int16_t* high = low + 8 * lane_step;
                _mm_storeu_si128(reinterpret_cast<__m128i*>(low), _mm256_castsi256_si128(r[j]));
                _mm_storeu_si128(reinterpret_cast<__m128i*>(high),
                                 _mm256_extracti128_si256(r[j], 1));
            }
        }
    }
}

}  // namespace

// ---- Input ----

InputReader::InputReader(Context& ctx, const Settings& s, Buffers& buffers)
    : ctx_(ctx),
      s_(s),
      packed_(buffers.input_packed),
      raw_(buffers.input_raw),
      line_(buffers.input_line) {
    take(line_, s.line_elements());
    if (s.src.packed) {
        // A 1 x 1 cube is one request of all its atoms from the base (MRDMA 1x1 pack mode).
        const uint64_t surfaces = s.padded_channels() / s.in_lanes;
        fetch(s.src.base, surfaces * s.atom, take(packed_, surfaces * s.atom));
        take(raw_, 0);
    } else {
        take(packed_, 0);
        take(raw_, size_t(s.width) * s.atom);
    }
}

void InputReader::fetch(uint64_t address, uint64_t bytes, std::byte* dst) {
    ctx_.dma.read(NVDLA_UNIT_SDP_RDMA, s_.src.port, address, dst, bytes);
}

const std::byte* InputReader::line_bytes(uint32_t surface, uint32_t h) {
    // Read in place (nothing is written before the line is decoded); a fault reads zeros, as
    // Dma::read gives them.
    const std::byte* src = ctx_.dma.view(NVDLA_UNIT_SDP_RDMA, s_.src.port,
                                         line_address(s_.src, 0, surface, h), raw_.size());
    if (src) return src;
    std::memset(raw_.data(), 0, raw_.size());
    return raw_.data();
}

void InputReader::read(uint32_t g, uint32_t h, std::span<int32_t> line, Counters& counters) {
    const uint32_t per_group = s_.group / s_.in_lanes;  // 2 when int16 data is processed as int8
    const uint32_t bytes = bytes_per_element(s_.input);
    for (uint32_t j = 0; j < per_group; ++j) {
        const uint32_t surface = g * per_group + j;
        const std::byte* src =
            s_.src.packed ? packed_.data() + size_t(surface) * s_.atom : line_bytes(surface, h);
        const uint32_t width = s_.width, lanes = s_.in_lanes;
        if (s_.input == Precision::Int8) {
            // The common case: every atom's lanes widened, whole lines at once when the lanes
            // fill the atoms and the group.
            const auto* atoms = reinterpret_cast<const int8_t*>(src);
            if (lanes == s_.atom && lanes == s_.group) {
                widen(atoms, size_t(width) * lanes, line.data());
                continue;
            }
            for (uint32_t w = 0; w < width; ++w)
                widen(atoms + size_t(w) * s_.atom, lanes,
                      line.data() + size_t(w) * s_.group + size_t(j) * lanes);
            continue;
        }
        for (uint32_t w = 0; w < s_.width; ++w) {
            const std::byte* atom = src + size_t(w) * s_.atom;
            int32_t* dst = line.data() + size_t(w) * s_.group + size_t(j) * s_.in_lanes;
            for (uint32_t lane = 0; lane < s_.in_lanes; ++lane) {
                const std::byte* e = atom + size_t(lane) * bytes;
                switch (s_.input) {
                    case Precision::Int8:
                        dst[lane] = static_cast<int8_t>(std::to_integer<uint8_t>(*e));
                        break;
                    case Precision::Int16: dst[lane] = load16(e); break;
                    case Precision::Fp16: {
                        const auto v = static_cast<uint16_t>(load16(e));
                        if ((v & 0x7c00u) == 0x7c00u) {
                            counters.input_nans += (v & 0x3ffu) != 0;
                            counters.input_infs += (v & 0x3ffu) == 0;
                        }
                        dst[lane] = static_cast<int32_t>(precision::fp16_to_fp32(v));
                        break;
                    }
                }
            }
        }
    }
}

// ---- Operands ----

OperandReader::OperandReader(Context& ctx, const Settings& s, const OperandDma& dma,
                             OperandBuffers& buffers)
    : ctx_(ctx),
      s_(s),
      dma_(dma),
      raw_(buffers.raw),
      alu_line_(buffers.alu_line),
      mul_line_(buffers.mul_line),
      alu_kernels_(buffers.alu_kernels),
      mul_kernels_(buffers.mul_kernels) {
    const size_t n = s.line_elements();
    take(alu_line_, dma.take_alu ? n : 0);
    take(mul_line_, dma.take_mul ? n : 0);
    if (!dma.per_element) {
        // Per-kernel data: every channel group's values, one contiguous read.
        take(raw_, size_t(s.padded_channels()) * dma.bytes_per_value());
        ctx.dma.read(NVDLA_UNIT_SDP_RDMA, dma.port, dma.base, raw_.data(), raw_.size());
    } else {
        take(raw_, n * dma.bytes_per_value());
    }
}

void OperandReader::decode(const std::byte* src, size_t values, int16_t* dst, bool alu) const {
    const uint32_t stride = dma_.bytes_per_value();
    const std::byte* p = src + dma_.component_offset(alu);
    if (dma_.component_bytes == 1 && stride == 1) {
        widen(reinterpret_cast<const int8_t*>(p), values, dst);
    } else if (dma_.component_bytes == 1) {
        for (size_t i = 0; i < values; ++i)
            dst[i] = static_cast<int8_t>(std::to_integer<uint8_t>(p[i * stride]));
    } else {
        for (size_t i = 0; i < values; ++i) dst[i] = load16(p + i * stride);
    }
}

OperandLine OperandReader::load(uint32_t g, uint32_t h, bool one_element) {
    if (!dma_.per_element && one_element) {
        if (!kernels_decoded_) {
            const size_t n = s_.padded_channels();
            if (dma_.take_alu) decode(raw_.data(), n, take(alu_kernels_, n), true);
            if (dma_.take_mul) decode(raw_.data(), n, take(mul_kernels_, n), false);
            kernels_decoded_ = true;
        }
        const size_t first = size_t(g) * s_.group;
        return {dma_.take_alu ? alu_kernels_.data() + first : nullptr,
                dma_.take_mul ? mul_kernels_.data() + first : nullptr, true};
    }
    if (!dma_.per_element) {
        if (g != loaded_group_) {
            // The group's values, repeated for every element of the line.
            const std::byte* src = raw_.data() + size_t(g) * s_.group * dma_.bytes_per_value();
            for (int k = 0; k < 2; ++k) {
                const bool alu = k == 0;
                if (!(alu ? dma_.take_alu : dma_.take_mul)) continue;
                std::vector<int16_t>& line = alu ? alu_line_ : mul_line_;
                decode(src, s_.group, line.data(), alu);
                for (uint32_t w = 1; w < s_.width; ++w)
                    std::memcpy(line.data() + size_t(w) * s_.group, line.data(),
                                s_.group * sizeof(int16_t));
            }
            loaded_group_ = g;
        }
    } else {
        // Per-element data: a line of W x group values per channel group, with its strides.
        const uint64_t address =
            dma_.base + uint64_t(g) * dma_.surface_stride + uint64_t(h) * dma_.line_stride;
        if (bytes_in_place_) {
            // In place; a fault reads zeros, as Dma::read gives them.
            const std::byte* p =
                ctx_.dma.view(NVDLA_UNIT_SDP_RDMA, dma_.port, address, raw_.size());
            if (!p) {
                std::memset(raw_.data(), 0, raw_.size());
                p = raw_.data();
            }
            return {nullptr, nullptr, false, reinterpret_cast<const int8_t*>(p)};
        }
        ctx_.dma.read(NVDLA_UNIT_SDP_RDMA, dma_.port, address, raw_.data(), raw_.size());
        if (dma_.take_alu) decode(raw_.data(), alu_line_.size(), alu_line_.data(), true);
        if (dma_.take_mul) decode(raw_.data(), mul_line_.size(), mul_line_.data(), false);
    }
    return {dma_.take_alu ? alu_line_.data() : nullptr, dma_.take_mul ? mul_line_.data() : nullptr,
            !dma_.per_element};
}

void OperandReader::hand_bytes_in_place() {
    bytes_in_place_ = dma_.per_element && dma_.use == OperandUse::Alu &&
                      dma_.component_bytes == 1 && dma_.take_alu && !dma_.take_mul;
}

// ---- Output ----

OutputWriter::OutputWriter(Context& ctx, const Settings& s, Buffers& buffers)
    : ctx_(ctx),
      s_(s),
      buffers_(buffers),
      packed_(buffers.output_packed),
      line_(buffers.output_line),
      group_(buffers.output_group),
      kept_(buffers.output_kept) {
    take(packed_, s.dst.packed ? size_t(s.padded_channels() / s.out_lanes) * s.atom : 0);
    take(line_, s.dst.packed ? 0 : size_t(s.width) * s.atom);
    take(group_, group_bytes());
    take(kept_, 0);
}

OutputWriter::OutputWriter(Context& ctx, const Settings& s, Buffers& buffers, ElementCube& to_pdp)
    : OutputWriter(ctx, s, buffers) {
    to_pdp_ = &to_pdp;
    take(kept_, size_t(s.padded_channels() / s.out_lanes) * s.height * s.width * s.atom);
}

void OutputWriter::write(uint32_t b, uint32_t g, uint32_t h, std::span<const uint16_t> out) {
    const uint32_t per_group = s_.group / s_.out_lanes;  // 2 when int8 is written as 16 bits
    const bool bytes1 = s_.output == Precision::Int8;
    for (uint32_t j = 0; j < per_group; ++j) {
        const uint32_t surface = g * per_group + j;
        std::byte* dst = s_.dst.packed ? packed_.data() + size_t(surface) * s_.atom : line_.data();
        for (uint32_t w = 0; w < s_.width; ++w) {
            std::byte* atom = dst + size_t(w) * s_.atom;
            const uint16_t* src = out.data() + size_t(w) * s_.group + size_t(j) * s_.out_lanes;
            if (bytes1)
                pack_low_bytes(atom, src, s_.out_lanes);
            else  // little-endian, like the bus (the model runs on x86)
                std::memcpy(atom, src, size_t(s_.out_lanes) * 2);
        }
        if (!s_.dst.packed)
            ctx_.dma.write(NVDLA_UNIT_SDP, s_.dst.port, line_address(s_.dst, b, surface, h),
                           line_.data(), line_.size());
    }
}

void OutputWriter::write_lines(uint32_t b, uint32_t g, uint32_t h, const std::byte* lines) {
    const uint32_t per_group = s_.group / s_.out_lanes;
    const size_t line_bytes = size_t(s_.width) * s_.atom;
    if (to_pdp_) {
        for (uint32_t j = 0; j < per_group; ++j)
            std::memcpy(kept_line(g * per_group + j, h), lines + j * line_bytes, line_bytes);
        return;
    }
    for (uint32_t j = 0; j < per_group; ++j)
        ctx_.dma.write(NVDLA_UNIT_SDP, s_.dst.port, line_address(s_.dst, b, g * per_group + j, h),
                       lines + j * line_bytes, line_bytes);
}

void OutputWriter::place_lines(uint32_t b, uint32_t g, uint32_t h, std::byte** places) {
    const uint32_t per_group = lines_per_group();
    const size_t line_bytes = size_t(s_.width) * s_.atom;
    if (to_pdp_) {
        for (uint32_t j = 0; j < per_group; ++j) places[j] = kept_line(g * per_group + j, h);
        return;
    }
    for (uint32_t j = 0; j < per_group; ++j)
        places[j] = ctx_.dma.place(NVDLA_UNIT_SDP, s_.dst.port,
                                   line_address(s_.dst, b, g * per_group + j, h), line_bytes);
}

void OutputWriter::finish() {
    if (to_pdp_) {
        // Each lane's value as Sdp::execute hands it (int8 sign-extended, int16 little-endian),
        // atom by atom: the inner loop over the atom's lanes (32 for int8), not over a line's
        // few columns (7 at the end of MobileNetV2).
        const uint32_t surfaces = s_.padded_channels() / s_.out_lanes;
        const size_t lane_step = size_t(s_.height) * s_.width;  // one channel's plane
        const bool vector = s_.output == Precision::Int8 && s_.out_lanes == 32 && s_.width >= 8 &&
                            isa_level() != IsaLevel::Scalar;
        const auto hand_over = [&]<class T>(T) {
            for (uint32_t surface = 0; surface < surfaces; ++surface)
                for (uint32_t h = 0; h < s_.height; ++h) {
                    const std::byte* line = kept_line(surface, h);
                    int16_t* rows =
                        to_pdp_->values.data() + to_pdp_->index(0, surface * s_.out_lanes, h, 0);
                    if (vector) {
                        hand_over_int8_line_avx2(line, s_.width, rows, lane_step);
                        continue;
                    }
                    for (uint32_t w = 0; w < s_.width; ++w) {
                        const std::byte* at = line + size_t(w) * s_.atom;
                        for (uint32_t lane = 0; lane < s_.out_lanes; ++lane) {
                            T v;
                            std::memcpy(&v, at + size_t(lane) * sizeof(T), sizeof(T));
                            rows[lane * lane_step + w] = v;
                        }
                    }
                }
        };
        if (s_.output == Precision::Int8)
            hand_over(int8_t{});
        else
            hand_over(int16_t{});
        return;
    }
    if (s_.dst.packed)
        ctx_.dma.write(NVDLA_UNIT_SDP, s_.dst.port, s_.dst.base, packed_.data(), packed_.size());
}

}  // namespace nvdla::emu::sdp
