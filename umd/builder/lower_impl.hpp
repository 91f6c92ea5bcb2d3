// The lowering pass (private).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "builder/lower.hpp"

namespace nvdla::builder::detail {

std::string pool_text(const PoolingDesc& p);

class Lowering {
  public:
    Lowering(const Network::Impl& net, const BuildOptions& options, const HwConfig& cfg,
             const Calibration::Impl* cal);
    Result<Plan> run();

  private:
    // Tensors
    uint32_t root(uint32_t id) const { return alias_[id]; }
    std::string layer(uint32_t id) const;
    uint64_t cube_bytes(const Place& p) const;
    Place dense(uint32_t buffer, Dims4 d) const;
    Place& home(uint32_t id);
    Place sub_place(const Place& p, uint32_t c0, uint32_t channels, uint32_t row0,
                    uint32_t rows) const;
    double scale(uint32_t id) const;

    Status analyse();
    Status assign_scales();
    Status place_input(uint32_t index, uint32_t id, Place& p);
    Status place_concats();
    void add_step(Group g);
    Status computed(uint32_t id);
    Status copy(uint32_t id, const Place& from, const Place& to);

    // SDP chains
    int next_in_chain(uint32_t cur) const;
    ChainElem chain_elem(uint32_t id, uint32_t from);
    uint32_t grow_chain(SdpProgram& prog, uint32_t cur, bool allow_eltwise);
    // int8: a chain ending before a clip that did not fit writes `last` for the clip's own
    // pass at the clip's scale where that is finer (clipping commutes with the saturation).
    void write_for_clip(uint32_t last);
    // How many layers from `id` on (read from `source` in memory) prog would take.
    uint32_t chain_reach(SdpProgram prog, uint32_t id, uint32_t source);
    Status finish_sdp(const SdpProgram& prog, const Place& in, uint32_t last,
                      const std::string& name);
    int fusable_pool(uint32_t cur, uint32_t in_width) const;

    // Units
    uint32_t pdp_max_width(const PoolingDesc& p) const;
    Status check_pool(uint32_t id, const PoolingDesc* desc = nullptr) const;
    HwOp pdp_op(const PoolingDesc& p, const nvdla_dla_data_cube& src,
                const nvdla_dla_data_cube& dst, uint32_t pad_left, uint32_t pad_right) const;
    void pool_steps(const PoolingDesc& p, const Place& in, const Place& out,
                    const std::string& name);
    Status lower_pool(uint32_t id);
    Status lower_lrn(uint32_t id);
    Status lower_softmax(uint32_t id);
    // CPU operations (cpu_lower.cpp): cpu_op layers, and layers the configuration cannot run
    // that fall back to the CPU.
    bool runs_on_cpu(uint32_t id) const;
    Status lower_cpu(uint32_t id);
    Status lower_sdp(uint32_t id);
    Status lower_conv(uint32_t id);
    Status lower_deconv(uint32_t id);
    Status lower_concat_sum(uint32_t id);
    // lower_ops.cpp: the operators of post-2018 vision models
    bool operand_form(uint32_t eltwise, uint32_t operand) const;
    Status lower_pad(uint32_t id);
    Status lower_slice(uint32_t id);
    Status lower_resize_nearest(uint32_t id);
    Status lower_resize_bilinear(uint32_t id);
    Result<uint32_t> interleave(uint32_t id, const std::vector<Place>& phases, uint32_t sh,
                                uint32_t sw, const Place& out);
    // The pad in front of a convolution or pooling layer that its own padding absorbs, or -1.
    int folded_pad(uint32_t consumer) const;
    int16_t pad_element(float value, uint32_t in) const;

    // A convolution over `in` (dense KCRS weights, possibly grouped), its SDP program and an
    // optional fused pooling layer, written to `out`.
    struct ConvJob {
        uint32_t node = 0;  // for messages
        std::string name;
        Place in;  // input cube (channels = all input channels)
        uint32_t kernels = 0, channels = 0, r = 1, s = 1;  // per group: channels = C / groups
        uint32_t groups = 1;
        uint32_t stride_x = 1, stride_y = 1, dil_x = 1, dil_y = 1;
        uint32_t pad_l = 0, pad_r = 0, pad_t = 0, pad_b = 0;
        uint32_t out_w = 0, out_h = 0;
        std::vector<float> weights;          // K x C/groups x R x S
        std::vector<float> bias;             // K (may be empty)
        const SdpProgram* prog = nullptr;    // built for the full K
        int pool = -1;                       // fused pooling node
        Place out;                           // where the SDP writes (invalid: the home of `last`)
        double out_scale = 1;                // int8 scale of what the SDP writes
        std::vector<double> weight_scale;    // int8: per kernel
        std::string what;                    // "direct", for the note
        const InputFormat* image = nullptr;  // the input is an image surface
        double in_scale = 1;                 // int8 scale of the input
        int16_t pad_value = 0;               // the padding's element (fp16 bits or int8)
    };
    Status selection_conv(uint32_t id, uint32_t in_id, const Place& in, uint32_t kernels,
                          uint32_t groups, const std::vector<float>& weights, const char* what,
                          std::array<uint32_t, 4> pads, int16_t pad_value);
    Status conv_image(const ConvJob& job, uint32_t last, bool& pool_fused);
    Status conv_job(const ConvJob& job, bool& pool_fused, uint32_t last);
    struct ConvWeights {
        nvdla_dla_data_cube weights, mask, group_sizes;  // mask, group sizes: compressed only
        bool compressed = false;
    };
    Result<ConvWeights> direct_weights(const ConvJob& job, uint32_t chunk_k0, uint32_t k0,
                                       uint32_t kn, uint32_t channels, bool may_compress);
    Status conv_output(const ConvJob& job, uint32_t last, SdpProgram::Piece pc, uint32_t rows,
                       bool fuse_pool, Group& g);
    // Winograd (3x3, stride 1, fp16) when it saves work and fits; false: use direct mode.
    Result<bool> conv_winograd(const ConvJob& job, uint32_t last);
    std::vector<double> weight_scales(const std::vector<float>& w, uint32_t kernels) const;

    const Network::Impl& net_;
    const Calibration::Impl* cal_;
    Target t_;
    Plan plan_;
    std::vector<uint32_t> alias_;
    std::vector<std::vector<uint32_t>> cons_;
    std::vector<int> out_index_;
    std::vector<Place> home_;
    std::vector<bool> done_;
    std::vector<double> scale_;
    std::vector<std::pair<uint32_t, Place>> copies_;
    std::vector<TensorDesc> input_descs_;
    std::vector<std::optional<InputFormat>> image_;  // by tensor id: image inputs
    std::vector<bool> summed_;                       // concats made by convolutions
    std::vector<Place> out_place_;                   // by output index
};

}  // namespace nvdla::builder::detail
