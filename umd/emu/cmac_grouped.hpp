// CMAC's integer kernel for block-diagonal weights down the diagonal (cmac_grouped.cpp): the
// builder maps a depthwise convolution to convolutions whose kernel k is zero but for channel k,
// and the convolution core multiplies the zeros too (32x the model's MACs for int8 on nv_full).
// This kernel finds from the decoded weights the diagonal band the kernels read and multiplies
// only that: integer zeros add exactly zero, so the result is the dense kernels' bit for bit.
// Private to umd/emu.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "emu/conv_layer.hpp"

namespace nvdla::emu::conv {

// Whether the weights ([kernel][tap][channel], `depth` channels) take the grouped kernel: kernel
// k's nonzero weights lie in channels [offset + k, offset + k + width), width at most a quarter
// of the channels and at most kMaxBand. Dense layers fail on their first kernel's first row.
inline constexpr uint32_t kMaxBand = 64;
bool banded_weights(const int16_t* weights, uint32_t kernels, uint64_t taps, uint32_t depth);

// The rows function (as MacRows runs it) of the grouped kernel at `kernel`'s level (Avx2,
// Avx512, Avx512Vnni) for the problem, its weights packed once (kept in problem.cache); empty
// when the weights are not banded_weights or the level has no grouped form. Captures `problem`
// by reference.
using MacRowsFunction = std::function<uint32_t(uint32_t, uint32_t, uint32_t, int32_t*)>;
MacRowsFunction grouped_mac_rows(const MacProblem& problem, Precision precision, uint32_t clip,
                                 MacKernel kernel);

// fp16 (cmac_grouped_fp16.cpp): convolve_fp16's layer through the band kernel when its weights
// are block-diagonal down the diagonal (each kernel's band within one of CSC's channel chunks,
// no NaN weight) and the ISA level has a vector form: the outputs into `out` (already sized),
// bit for bit the dense cell's; false (nothing written) otherwise.
bool convolve_fp16_banded(const ConvLayer& layer, const MacProblem& problem,
                          std::vector<int32_t>& out);

}  // namespace nvdla::emu::conv
