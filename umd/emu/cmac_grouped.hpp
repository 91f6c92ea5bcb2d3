// CMAC's integer kernel for block-diagonal weights down the diagonal (cmac_grouped.cpp): the
// builder maps a depthwise convolution to convolutions whose kernel k is zero but for channel k,
// and the convolution core multiplies the zeros too (32x the model's MACs for int8 on nv_full).
// This kernel finds from the decoded weights the diagonal band the kernels read and multiplies
// only that: integer zeros add exactly zero, so the result is the dense kernels' bit for bit.
// Private to umd/emu.
#pragma once

#include <cstdint>
#include <functional>

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

}  // namespace nvdla::emu::conv
