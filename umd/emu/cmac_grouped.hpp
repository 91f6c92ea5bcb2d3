// CMAC's integer kernel for block-diagonal weights down the diagonal (cmac_grouped.cpp): the
// builder maps a depthwise convolution to convolutions whose kernel k is zero but for channel k,
// and the convolution core multiplies the zeros too (32x the model's MACs for int8 on nv_full).
// This kernel finds from the decoded weights the diagonal band the kernels read and multiplies
// only that: integer zeros add exactly zero, so the result is the dense kernels' bit for bit.
// Private to umd/emu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "emu/conv_layer.hpp"

namespace nvdla::emu::conv {

// f(begin, size) for [0, count) cut into as few near-equal pieces of at most `most` as there
// can be (7 by 6 as 3 + 4, not 6 + 1; 9 by 4 as 3 + 3 + 3, not 4 + 4 + 1), for the kernels
// whose multiply-adds accumulate in place (vpdpbusd, FMA): a call over one position or block
// keeps too few sums in flight to hide their latency. (vpmaddwd's sums are added by a
// separate one-cycle add, so madd_rows keeps its whole blocks.) The depthwise kernel with VBMI
// (int8_rows4) cuts its rows so too: 7 positions as one call, not two of 4 over 8.
template <class F>
inline void split_evenly(uint32_t count, uint32_t most, F&& f) {
    const uint32_t pieces = (count + most - 1) / most;
    if (pieces == 0) return;
    // Piece i ends at floor(count (i + 1) / pieces), stepped without a division per piece
    // (the calls of 7 or 8 positions came with a 64-bit division each).
    const uint32_t size = count / pieces, rest = count % pieces;
    for (uint32_t i = 0, begin = 0, carried = 0; i < pieces; ++i) {
        carried += rest;
        const uint32_t extra = carried >= pieces ? 1 : 0;
        carried -= extra * pieces;
        f(begin, size + extra);
        begin += size + extra;
    }
}

// Whether the weights ([kernel][tap][channel], `depth` channels) take the grouped kernel: kernel
// k's nonzero weights lie in channels [offset + k, offset + k + width), width at most a quarter
// of the channels and at most kMaxBand. Dense layers fail on their first kernel's first row.
inline constexpr uint32_t kMaxBand = 64;
bool banded_weights(const int16_t* weights, uint32_t kernels, uint64_t taps, uint32_t depth);

// The grouped kernel at `kernel`'s level (Avx2, Avx512, Avx512Vnni) for the problem, its
// weights packed once (kept in problem.cache); empty when the weights are not banded_weights
// or the level has no grouped form. MacRows runs it on the same problem.
GroupedRows grouped_mac_rows(const MacProblem& problem, Precision precision, uint32_t clip,
                             MacKernel kernel);

// Starts loading the packed weights kept with `weights` (ConvWeights::packed) by any integer
// kernel: the cache's entry (values false), then, once the entry is in the cache, the packing
// and the first lines of its values (values true). A network's layers find their packings gone
// from the caches after the other layers' data went through them, and their first calls waited
// for each of these in turn (MobileNetV2: 224 depthwise chunks and 52 dense layers per image).
// CSC calls it before and after filling the plane (prefetch_packing, cmac.cpp; the grouped
// kernels' part prefetch_grouped_packing).
void prefetch_packing(const ConvWeights& weights, bool values);
void prefetch_grouped_packing(const ConvWeights& weights, bool values);
// Prefetches the first lines (at most 512 bytes: more waited for the line fill buffers) of
// `bytes` bytes at `data`.
inline void prefetch_lines(const void* data, size_t bytes) {
    constexpr size_t kMostBytes = 512;
    for (size_t at = 0; at < bytes && at < kMostBytes; at += 64)
        __builtin_prefetch(static_cast<const char*>(data) + at);
}

// fp16 (cmac_grouped_fp16.cpp): convolve_fp16's layer through the band kernel when its weights
// are block-diagonal down the diagonal (each kernel's band within one of CSC's channel chunks,
// no NaN weight) and the ISA level has a vector form: the outputs into `out` (already sized),
// bit for bit the dense cell's; false (nothing written) otherwise.
bool convolve_fp16_banded(const ConvLayer& layer, const MacProblem& problem,
                          std::vector<int32_t>& out);

}  // namespace nvdla::emu::conv
