// One task per processor, run by the engine on the emulated device, checked against a
// reference computed here; on both register maps where the processor exists and in both
// descriptor layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "engine_ops.hpp"
#include "nvdla/formats/weights.hpp"

namespace nvdla::engine_test {
namespace {

// (configuration, interface version)
using Param = std::tuple<const char*, uint32_t>;

std::string param_name(const testing::TestParamInfo<Param>& info) {
    const uint32_t v = std::get<1>(info.param);
    return std::string(std::get<0>(info.param)) + "_v0_" +
           std::to_string(NVDLA_DLA_VERSION_MINOR(v));
}

const auto kBothMaps =
    testing::Combine(testing::Values("nv_full", "nv_small"), testing::Values(kV10, kV12));
const auto kFullOnly = testing::Combine(testing::Values("nv_full"), testing::Values(kV10, kV12));

class EngineUnit : public testing::TestWithParam<Param> {
  protected:
    Rig rig{std::get<0>(GetParam())};
    uint32_t version() const { return std::get<1>(GetParam()); }
    uint32_t atom() const { return rig.cfg().atom_bytes; }
};

class EngineUnitFull : public EngineUnit {};

// ---- SDP: bias from memory + ReLU, then x3 with a rounding shift ----

TEST_P(EngineUnit, SdpBiasReluScale) {
    auto rng = test::rng_for_test();
    const Feature in(5, 3, 20, 1, atom(), 1), out(5, 3, 20, 1, atom());
    const uint32_t group = atom();
    const uint32_t bias_bytes = static_cast<uint32_t>(round_up(round_up(20, group), atom()));
    const int src = rig.add_entry(in.bytes), bias = rig.add_entry(bias_bytes),
              dst = rig.add_entry(out.bytes);
    const auto x = test::random_vector<int8_t>(rng, 20 * 3 * 5, -100, 100);
    const auto b = test::random_vector<int8_t>(rng, 20, -50, 50);
    put_int8(rig.data(src), in, x);
    std::memcpy(rig.data(bias), b.data(), b.size());

    TaskBuilder t;
    const int op = t.add(NVDLA_DLA_OP_SDP);
    sdp_copy(t[op], in.cube(src), out.cube(dst));
    nvdla_dla_sdp_op& x1 = t[op].op.sdp_op.x1_op;
    x1.enable = 1;
    x1.type = NVDLA_DLA_SDP_OP_ADD;
    x1.alu_type = NVDLA_DLA_SDP_ALU_SUM;
    x1.mode = NVDLA_DLA_SDP_PER_KERNEL;
    x1.act = NVDLA_DLA_ACT_RELU;
    x1.precision = NVDLA_DLA_PRECISION_INT8;
    t[op].surf.sdp_surface.x1_data = cube(bias, 1, 1, 20, 0, 0, bias_bytes);
    nvdla_dla_sdp_op& x2 = t[op].op.sdp_op.x2_op;
    x2.enable = 1;
    x2.type = NVDLA_DLA_SDP_OP_MUL;
    x2.mode = NVDLA_DLA_SDP_PER_LAYER;
    x2.mul_operand = 3;
    x2.truncate = 1;
    t.finish_queues();
    rig.write(t, version());
    rig.validate_and_run();

    const auto y = get_int8(rig.data(dst), out);
    for (uint32_t c = 0; c < 20; ++c)
        for (uint32_t i = 0; i < 15; ++i) {
            int64_t v = std::max<int64_t>(x[c * 15 + i] + b[c], 0);
            v = saturate(round_shift(3 * v, 1), 8);
            ASSERT_EQ(y[c * 15 + i], v) << "channel " << c << " element " << i;
        }
}

// ---- PDP: max, min and 3x3 average pooling ----

TEST_P(EngineUnit, PdpMaxAndMinPooling) {
    auto rng = test::rng_for_test();
    for (uint8_t mode : {uint8_t(NVDLA_DLA_POOL_MAX), uint8_t(NVDLA_DLA_POOL_MIN)}) {
        Rig r(std::get<0>(GetParam()));
        const Feature in(6, 4, 20, 1, r.cfg().atom_bytes), out(3, 2, 20, 1, r.cfg().atom_bytes);
        const int src = r.add_entry(in.bytes), dst = r.add_entry(out.bytes);
        const auto x = test::random_vector<int8_t>(rng, 20 * 4 * 6, -128, 127);
        put_int8(r.data(src), in, x);
        TaskBuilder t;
        pdp_pool(t[t.add(NVDLA_DLA_OP_PDP)], in.cube(src), out.cube(dst), mode, 2, 2, 2, 2);
        t.finish_queues();
        r.write(t, version());
        r.validate_and_run();
        const auto y = get_int8(r.data(dst), out);
        for (uint32_t c = 0; c < 20; ++c)
            for (uint32_t oy = 0; oy < 2; ++oy)
                for (uint32_t ox = 0; ox < 3; ++ox) {
                    int v = mode == NVDLA_DLA_POOL_MAX ? -128 : 127;
                    for (uint32_t ky = 0; ky < 2; ++ky)
                        for (uint32_t kx = 0; kx < 2; ++kx) {
                            const int e = x[(c * 4 + oy * 2 + ky) * 6 + ox * 2 + kx];
                            v = mode == NVDLA_DLA_POOL_MAX ? std::max(v, e) : std::min(v, e);
                        }
                    ASSERT_EQ(y[(c * 2 + oy) * 3 + ox], v) << "mode " << int(mode);
                }
    }
}

TEST_P(EngineUnit, PdpAveragePoolingWithPadding) {
    auto rng = test::rng_for_test();
    const Feature in(5, 4, 12, 1, atom()), out(5, 4, 12, 1, atom());
    const int src = rig.add_entry(in.bytes), dst = rig.add_entry(out.bytes);
    const auto x = test::random_vector<int8_t>(rng, 12 * 4 * 5, -128, 127);
    put_int8(rig.data(src), in, x);
    TaskBuilder t;
    const int op = t.add(NVDLA_DLA_OP_PDP);
    pdp_pool(t[op], in.cube(src), out.cube(dst), NVDLA_DLA_POOL_AVERAGE, 3, 3, 1, 1);
    nvdla_dla_pdp_op_desc& p = t[op].op.pdp_op;
    p.pad_left = p.pad_right = p.pad_top = p.pad_bottom = 1;
    t.finish_queues();
    rig.write(t, version());
    rig.validate_and_run();

    // Padding adds zeros; the sum is scaled by 1/3 (0x5555 / 2^16) per direction, each
    // step rounded half away from zero.
    const auto y = get_int8(rig.data(dst), out);
    auto scale = [](int64_t v) { return round_shift(v * 0x5555, 16); };
    for (uint32_t c = 0; c < 12; ++c)
        for (int oy = 0; oy < 4; ++oy)
            for (int ox = 0; ox < 5; ++ox) {
                int64_t sum = 0;
                for (int ky = -1; ky <= 1; ++ky)
                    for (int kx = -1; kx <= 1; ++kx) {
                        const int yy = oy + ky, xx = ox + kx;
                        if (yy >= 0 && yy < 4 && xx >= 0 && xx < 5)
                            sum += x[(c * 4 + uint32_t(yy)) * 5 + uint32_t(xx)];
                    }
                ASSERT_EQ(y[(c * 4 + uint32_t(oy)) * 5 + uint32_t(ox)],
                          saturate(scale(scale(sum)), 8))
                    << "channel " << c << " at " << ox << "," << oy;
            }
}

// ---- CDP: normalisation through a constant LUT: out = round(3x / 2) ----

TEST_P(EngineUnit, CdpThroughLut) {
    auto rng = test::rng_for_test();
    const Feature in(4, 3, 20, 1, atom()), out(4, 3, 20, 1, atom());
    const int src = rig.add_entry(in.bytes), dst = rig.add_entry(out.bytes);
    const auto x = test::random_vector<int8_t>(rng, 20 * 3 * 4, -128, 127);
    put_int8(rig.data(src), in, x);
    TaskBuilder t;
    const int lut = t.add_lut(constant_lut(3));
    cdp_lrn(t[t.add(NVDLA_DLA_OP_CDP)], in.cube(src), out.cube(dst), static_cast<int16_t>(lut), 1);
    t.finish_queues();
    rig.write(t, version());
    rig.validate_and_run();
    const auto y = get_int8(rig.data(dst), out);
    for (size_t i = 0; i < x.size(); ++i)
        ASSERT_EQ(y[i], saturate(round_shift(3 * int64_t(x[i]), 1), 8)) << "element " << i;
}

// ---- CONV: direct int8 convolution, ReLU and a shift in the fused SDP ----

void run_convolution(Rig& rig, uint32_t version, const ConvShape& sh, uint8_t shift) {
    auto rng = test::rng_for_test();
    const uint32_t atom = rig.cfg().atom_bytes;
    const Feature in(sh.w, sh.h, sh.c, 1, atom), out(sh.out_w(), sh.out_h(), sh.k, 1, atom);
    const auto x = test::random_vector<int8_t>(rng, size_t(sh.c) * sh.h * sh.w, -20, 20);
    const auto wt = test::random_vector<int8_t>(rng, size_t(sh.k) * sh.c * sh.r * sh.s, -8, 8);

    const Result<WeightLayout> layout = make_weight_layout(
        rig.cfg(), {WeightKind::Direct, Precision::Int8}, Dims4{sh.k, sh.c, sh.r, sh.s});
    ASSERT_TRUE(layout) << layout.message();
    const uint32_t weight_bytes = static_cast<uint32_t>(layout->size_bytes());
    const int src = rig.add_entry(in.bytes), weights = rig.add_entry(weight_bytes),
              dst = rig.add_entry(out.bytes);
    put_int8(rig.data(src), in, x);
    const ConstTensorView host{wt.data(), wt.size(), HostType::Int8, HostLayout::NCHW,
                               Dims4{sh.k, sh.c, sh.r, sh.s}};
    ASSERT_TRUE(pack_weights(host, *layout, ByteSpan(rig.entry(weights).host, weight_bytes)));

    TaskBuilder t;
    const int conv = t.add(NVDLA_DLA_OP_CONV);
    const int sdp = t.add(NVDLA_DLA_OP_SDP);
    conv_direct(t[conv], rig.cfg(), sh, in.cube(src), weights, weight_bytes);
    sdp_after_conv(t[sdp], sh, out.cube(dst), shift);
    t.fuse(conv, sdp);
    t.finish_queues();
    rig.write(t, version);
    rig.validate_and_run();

    const auto y = get_int8(rig.data(dst), out);
    for (uint32_t k = 0; k < sh.k; ++k)
        for (uint32_t oy = 0; oy < sh.out_h(); ++oy)
            for (uint32_t ox = 0; ox < sh.out_w(); ++ox) {
                int64_t acc = 0;
                for (uint32_t c = 0; c < sh.c; ++c)
                    for (uint32_t r = 0; r < sh.r; ++r)
                        for (uint32_t s = 0; s < sh.s; ++s) {
                            const int64_t iy = int64_t(oy + r) - sh.pad,
                                          ix = int64_t(ox + s) - sh.pad;
                            if (iy < 0 || ix < 0 || iy >= sh.h || ix >= sh.w) continue;
                            acc += int64_t(x[(c * sh.h + uint64_t(iy)) * sh.w + uint64_t(ix)]) *
                                   wt[((k * sh.c + c) * sh.r + r) * sh.s + s];
                        }
                const int64_t expect = saturate(round_shift(std::max<int64_t>(acc, 0), shift), 8);
                ASSERT_EQ(y[(k * sh.out_h() + oy) * sh.out_w() + ox], expect)
                    << "kernel " << k << " at " << ox << "," << oy;
            }
}

TEST_P(EngineUnit, ConvolutionDirectInt8) {
    run_convolution(rig, version(), {6, 5, 16, 8, 3, 3, 1}, 4);
}

// ---- BDMA: strided copies, two transfers ----

TEST_P(EngineUnitFull, BdmaStridedCopies) {
    auto rng = test::rng_for_test();
    const int a = rig.add_entry(320 * 2), b = rig.add_entry(192 * 2), c = rig.add_entry(96),
              d = rig.add_entry(96);
    const auto src_a = test::random_vector<uint8_t>(rng, 640, 0, 255);
    const auto src_c = test::random_vector<uint8_t>(rng, 96, 0, 255);
    std::memcpy(rig.data(a), src_a.data(), 640);
    std::memcpy(rig.data(c), src_c.data(), 96);

    TaskBuilder t;
    const int op = t.add(NVDLA_DLA_OP_BDMA);
    nvdla_dla_bdma_surface_desc& s = t[op].surf.bdma_surface;
    s.source_type = s.destination_type = NVDLA_DLA_MEM_MC;
    s.num_transfers = 2;
    s.transfers[0] = bdma_transfer(a, b, 64, 3, 2, 96, 64, 320, 192);
    s.transfers[1] = bdma_transfer(c, d, 96, 1, 1, 96, 96, 96, 96);
    t[op].op.bdma_op.num_transfers = 2;
    t.finish_queues();
    rig.write(t, version());
    rig.validate_and_run();

    for (uint32_t surf = 0; surf < 2; ++surf)
        for (uint32_t line = 0; line < 3; ++line)
            for (uint32_t i = 0; i < 64; ++i)
                ASSERT_EQ(rig.data(b)[surf * 192 + line * 64 + i],
                          src_a[surf * 320 + line * 96 + i]);
    EXPECT_EQ(0, std::memcmp(rig.data(d), src_c.data(), 96));
}

// ---- RUBIK: split into planes, and contract (the deconvolution reshuffle) ----

TEST_P(EngineUnitFull, RubikSplitToPlanes) {
    auto rng = test::rng_for_test();
    const Feature in(4, 3, 40, 1, 32);
    const uint32_t line = 32, plane = 3 * line;
    const int src = rig.add_entry(in.bytes), dst = rig.add_entry(39 * plane + 2 * line + 32);
    const auto x = test::random_vector<int8_t>(rng, 40 * 3 * 4, -128, 127);
    put_int8(rig.data(src), in, x);
    TaskBuilder t;
    const int op = t.add(NVDLA_DLA_OP_RUBIK);
    t[op].op.rubik_op.mode = NVDLA_DLA_RUBIK_SPLIT;
    t[op].op.rubik_op.precision = NVDLA_DLA_PRECISION_INT8;
    t[op].surf.rubik_surface.src_data = in.cube(src);
    nvdla_dla_data_cube out = cube(dst, 4, 3, 40, line, 0);
    out.plane_stride = plane;
    t[op].surf.rubik_surface.dst_data = out;
    t.finish_queues();
    rig.write(t, version());
    rig.validate_and_run();
    for (uint32_t c = 0; c < 40; ++c)
        for (uint32_t y = 0; y < 3; ++y)
            for (uint32_t xx = 0; xx < 4; ++xx)
                ASSERT_EQ(int8_t(rig.data(dst)[c * plane + y * line + xx]),
                          x[(c * 3 + y) * 4 + xx]);
}

TEST_P(EngineUnitFull, RubikContractInt16) {
    auto rng = test::rng_for_test();
    // Four kernel positions (2 x 2) of a 3 x 2 cube of 16 int16 channels.
    const uint32_t in_line = 3 * 32, in_surface = 2 * in_line;
    const uint32_t out_line = 6 * 32, out_surface = 4 * out_line;
    const int src = rig.add_entry(4 * in_surface), dst = rig.add_entry(out_surface);
    const auto x = test::random_vector<uint8_t>(rng, 4 * in_surface, 0, 255);
    std::memcpy(rig.data(src), x.data(), x.size());
    TaskBuilder t;
    const int op = t.add(NVDLA_DLA_OP_RUBIK);
    nvdla_dla_rubik_op_desc& r = t[op].op.rubik_op;
    r.mode = NVDLA_DLA_RUBIK_CONTRACT;
    r.precision = NVDLA_DLA_PRECISION_INT16;
    r.stride_x = 2;
    r.stride_y = 2;
    t[op].surf.rubik_surface.src_data = cube(src, 3, 2, 64, in_line, in_surface);
    t[op].surf.rubik_surface.dst_data = cube(dst, 6, 4, 16, out_line, out_surface);
    t.finish_queues();
    rig.write(t, version());
    rig.validate_and_run();
    // Output atom (x, y) is input atom (x / 2, y / 2) of kernel position (y % 2) * 2 + x % 2.
    for (uint32_t y = 0; y < 4; ++y)
        for (uint32_t xx = 0; xx < 6; ++xx) {
            const uint32_t kernel = (y % 2) * 2 + xx % 2;
            ASSERT_EQ(
                0,
                std::memcmp(rig.data(dst) + y * out_line + xx * 32,
                            x.data() + kernel * in_surface + (y / 2) * in_line + (xx / 2) * 32, 32))
                << "output atom " << xx << "," << y;
        }
}

INSTANTIATE_TEST_SUITE_P(Maps, EngineUnit, kBothMaps, param_name);
INSTANTIATE_TEST_SUITE_P(Full, EngineUnitFull, kFullOnly, param_name);

}  // namespace
}  // namespace nvdla::engine_test
