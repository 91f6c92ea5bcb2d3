// Recording a layer (private): argument checks, the error sentence naming the layer, and the
// new node. Every public layer call goes through a LayerRecorder.
#pragma once

#include <sstream>
#include <string>

#include "builder/graph.hpp"

namespace nvdla::builder {

namespace detail {

inline std::string dims_text(Dims4 d) {
    std::ostringstream o;
    o << d.n << "x" << d.c << "x" << d.h << "x" << d.w;
    return o.str();
}

}  // namespace detail

using detail::Node;
using detail::Op;

// Records a layer and its checks. Every public layer call goes through here.
class LayerRecorder {
  public:
    LayerRecorder(Network::Impl& net, Op op, const char* kind, const std::string& name,
                  std::initializer_list<Tensor> inputs)
        : net_(net) {
        node_.op = op;
        node_.kind = kind ? kind : "";
        node_.name = name.empty() ? std::string(kind ? kind : detail::op_name(op)) + "_" +
                                        std::to_string(net.nodes.size())
                                  : name;
        for (Tensor t : inputs) add_input(t);
    }

    void add_input(Tensor t) {
        if (!t.valid()) {
            skip_ = true;  // an earlier failure; no new error
            return;
        }
        if (t.id >= net_.nodes.size()) {
            fail("input tensor ", t.id, " does not belong to this network");
            return;
        }
        node_.inputs.push_back(t.id);
    }

    bool ok() const { return !skip_ && !failed_; }
    Node& node() { return node_; }
    const Dims4& in(size_t i = 0) const { return net_.nodes[node_.inputs[i]].dims; }

    template <class... Parts>
    void fail(const Parts&... parts) {
        if (failed_ || skip_) return;
        failed_ = true;
        std::ostringstream o;
        o << "layer '" << node_.name << "' ("
          << (node_.kind.empty() ? detail::op_name(node_.op) : node_.kind) << "): ";
        (o << ... << parts);
        if (net_.error.ok()) net_.error = Status::failure(o.str());
    }

    Tensor finish(Dims4 dims) {
        if (!ok()) return {};
        if (dims.c == 0 || dims.h == 0 || dims.w == 0) {
            fail("the output would be ", detail::dims_text(dims),
                 "; every extent must be at least 1");
            return {};
        }
        node_.dims = dims;
        net_.nodes.push_back(std::move(node_));
        return Tensor{static_cast<uint32_t>(net_.nodes.size() - 1)};
    }

  private:
    Network::Impl& net_;
    Node node_;
    bool skip_ = false, failed_ = false;
};

}  // namespace nvdla::builder
