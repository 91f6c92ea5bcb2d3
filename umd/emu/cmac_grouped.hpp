// CMAC's integer kernels for block-diagonal weights (cmac_grouped.cpp): the builder maps a
// grouped or depthwise convolution to convolutions whose kernels are zero outside their group's
// channels, and the convolution core multiplies the zeros too (32x the model's MACs for an int8
// depthwise layer on nv_full). This kernel finds from the decoded weights which channels each
// kernel reads and multiplies only those: integer zeros add exactly zero, so the result is the
// dense kernels' bit for bit. Private to umd/emu.
#pragma once

#include <cstdint>
#include <functional>

#include "emu/conv_layer.hpp"

namespace nvdla::emu::conv {

// Whether the weights ([kernel][tap][channel], `depth` channels) are banded enough for the
// grouped kernel: every kernel's nonzero weights lie within one run of at most a quarter of the
// channels (and at most kMaxBand). Dense layers fail on their first kernel.
inline constexpr uint32_t kMaxBand = 64;
bool banded_weights(const int16_t* weights, uint32_t kernels, uint64_t taps, uint32_t depth);

// The rows function (as MacRows runs it) of the grouped kernel at `kernel`'s level (Avx2,
// Avx512, Avx512Vnni) for the problem, its weights packed once (kept in problem.cache); empty
// when the weights are not banded or the level has no grouped form. Captures `problem` by
// reference.
using MacRowsFunction = std::function<uint32_t(uint32_t, uint32_t, uint32_t, int32_t*)>;
MacRowsFunction grouped_mac_rows(const MacProblem& problem, Precision precision, uint32_t clip,
                                 MacKernel kernel);

}  // namespace nvdla::emu::conv
