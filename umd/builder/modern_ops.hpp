// The operators of post-2018 vision models (private): element-wise operations with
// broadcasting, and the float reference of the layers that have their own node (clip, mish,
// pad, slice, bilinear resize).
#pragma once

#include <string>
#include <vector>

#include "builder/graph.hpp"

namespace nvdla::builder::detail {

Tensor broadcast_eltwise(Network::Impl& net, Tensor a, Tensor b, EltwiseOp op,
                         const std::string& name);

// y (sized for n.dims, NCHW) from the node's inputs (NCHW, dims as recorded).
void reference_eltwise(const Node& n, const std::vector<float>& a, Dims4 da,
                       const std::vector<float>& b, Dims4 db, std::vector<float>& y);
void reference_modern(const Node& n, const std::vector<float>& x, Dims4 dx, std::vector<float>& y);

}  // namespace nvdla::builder::detail
