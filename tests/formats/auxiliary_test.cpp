#include "nvdla/formats/auxiliary.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "test_support.hpp"

namespace nvdla {
namespace {

using test::config;

ConstTensorView view(const std::vector<int16_t>& v, Dims4 d) {
    return {v.data(), v.size() * 2, HostType::Int16, HostLayout::NCHW, d};
}

TEST(AuxData, BatchNormInterleavesAluThenMulWorkedByHand) {
    // nv_full, int8 input: 32 elements per atom; two int16 components: 4 bytes per value,
    // 128 bytes per atom; 40 channels take two atoms.
    auto l = make_aux_layout(config("nv_full"), AuxKind::BatchNorm, AuxMode::PerChannel,
                             AuxUse::Both, Precision::Int8, Precision::Int16, {1, 40, 1, 1});
    ASSERT_TRUE(l.ok()) << l.message();
    EXPECT_EQ(l->bytes_per_atom(), 128u);
    EXPECT_EQ(l->size_bytes(), 256u);
    EXPECT_EQ(l->offset(33, 0, 0, 1), 128u + 4u + 2u);

    std::vector<int16_t> alu(40), mul(40);
    for (int c = 0; c < 40; ++c)
        alu[c] = static_cast<int16_t>(c), mul[c] = static_cast<int16_t>(-100 - c);
    const ConstTensorView a = view(alu, {1, 40, 1, 1}), m = view(mul, {1, 40, 1, 1});
    std::vector<uint8_t> bytes(256, 0xaa);
    ASSERT_TRUE(pack_aux(*l, {&a, &m}, std::as_writable_bytes(std::span(bytes))).ok());
    EXPECT_EQ(bytes[132] | bytes[133] << 8, 33);             // ALU of channel 33
    EXPECT_EQ(int16_t(bytes[134] | bytes[135] << 8), -133);  // MUL of channel 33
    EXPECT_EQ(int16_t(bytes[6] | bytes[7] << 8), -101);      // MUL of channel 1
    EXPECT_EQ(bytes[128 + 8 * 4], 0);                        // channel 40: padding
    EXPECT_EQ(bytes[255], 0);
}

TEST(AuxData, PerChannelBiasCasesOfTheSeed) {
    // Case 1: one byte per int8 element, contiguous.
    auto one = make_aux_layout(config("nv_full"), AuxKind::Bias, AuxMode::PerChannel, AuxUse::Alu,
                               Precision::Int8, Precision::Int8, {1, 5, 1, 1});
    ASSERT_TRUE(one.ok()) << one.message();
    EXPECT_EQ(one->bytes_per_atom(), 32u);
    EXPECT_EQ(one->offset(4, 0, 0), 4u);
    // Case 2: two bytes per int8 element.
    auto two = make_aux_layout(config("nv_full"), AuxKind::Bias, AuxMode::PerChannel, AuxUse::Alu,
                               Precision::Int8, Precision::Int16, {1, 5, 1, 1});
    ASSERT_TRUE(two.ok());
    EXPECT_EQ(two->bytes_per_atom(), 64u);
    EXPECT_EQ(two->offset(4, 0, 0), 8u);
    // fp16: 16 elements per atom of two bytes each.
    auto fp = make_aux_layout(config("nv_full"), AuxKind::PRelu, AuxMode::PerChannel, AuxUse::Mul,
                              Precision::Fp16, Precision::Fp16, {1, 17, 1, 1});
    ASSERT_TRUE(fp.ok());
    EXPECT_EQ(fp->bytes_per_atom(), 32u);
    EXPECT_EQ(fp->size_bytes(), 64u);
    EXPECT_EQ(fp->offset(16, 0, 0), 32u);
}

TEST(AuxData, PerElementOnNvSmallWorkedByHand) {
    // 8-byte atoms: 8 int8 elements per atom; 2-byte components: 16 bytes per atom.
    auto l = make_aux_layout(config("nv_small"), AuxKind::Bias, AuxMode::PerElement, AuxUse::Alu,
                             Precision::Int8, Precision::Int16, {1, 10, 2, 3});
    ASSERT_TRUE(l.ok()) << l.message();
    EXPECT_EQ(l->line_stride, 48u);
    EXPECT_EQ(l->surface_stride, 96u);
    EXPECT_EQ(l->size_bytes(), 192u);
    EXPECT_EQ(l->offset(9, 1, 2), 96u + 48u + 32u + 2u);
}

TEST(AuxData, ElementWiseWithBothOperandsRoundTrips) {
    auto rng = test::rng_for_test();
    for (const HwConfig& hw : hw_configs())
        for (Precision in : {Precision::Int8, Precision::Int16, Precision::Fp16}) {
            if (!supports(hw, in)) continue;
            const Precision comp = in == Precision::Fp16 ? Precision::Fp16 : Precision::Int16;
            Dims4 d{1, test::random_between(rng, 1, 50), test::random_between(rng, 1, 5),
                    test::random_between(rng, 1, 7)};
            auto l = make_aux_layout(hw, AuxKind::ElementWise, AuxMode::PerElement, AuxUse::Both,
                                     in, comp, d, {0, 0, 0});
            ASSERT_TRUE(l.ok()) << hw.name << ": " << l.message();
            auto alu = test::random_vector<int16_t>(rng, d.elements(), -2048, 2048);
            auto mul = test::random_vector<int16_t>(rng, d.elements(), -2048, 2048);
            const ConstTensorView a = view(alu, d), m = view(mul, d);
            std::vector<uint8_t> bytes(l->size_bytes(), 0x33);
            ASSERT_TRUE(pack_aux(*l, {&a, &m}, std::as_writable_bytes(std::span(bytes))).ok());
            std::vector<int16_t> alu_back(alu.size()), mul_back(mul.size());
            const TensorView ab{alu_back.data(), alu_back.size() * 2, HostType::Int16,
                                HostLayout::NCHW, d};
            const TensorView mb{mul_back.data(), mul_back.size() * 2, HostType::Int16,
                                HostLayout::NCHW, d};
            ASSERT_TRUE(unpack_aux(*l, std::as_bytes(std::span(bytes)), {&ab, &mb}).ok());
            EXPECT_EQ(alu_back, alu) << hw.name;
            EXPECT_EQ(mul_back, mul) << hw.name;
        }
}

TEST(AuxData, RejectsCombinationsTheSeedDoesNotDefine) {
    const HwConfig& full = config("nv_full");
    auto r = make_aux_layout(full, AuxKind::PRelu, AuxMode::PerElement, AuxUse::Mul,
                             Precision::Int8, Precision::Int8, {1, 8, 2, 2});
    EXPECT_EQ(r.message(), "PReLU data cannot be per-element MUL (it is per-channel, MUL)");
    r = make_aux_layout(full, AuxKind::BatchNorm, AuxMode::PerChannel, AuxUse::Alu, Precision::Int8,
                        Precision::Int8, {1, 8, 1, 1});
    EXPECT_EQ(r.message(),
              "batch-normalization data cannot be per-channel ALU (it is per-channel, ALU+MUL (two "
              "components))");
    r = make_aux_layout(full, AuxKind::Bias, AuxMode::PerChannel, AuxUse::Alu, Precision::Fp16,
                        Precision::Int16, {1, 8, 1, 1});
    EXPECT_EQ(r.message(),
              "bias data: int16 components do not fit a fp16 datapath (fp16 needs fp16)");
    r = make_aux_layout(config("nv_small"), AuxKind::Bias, AuxMode::PerChannel, AuxUse::Alu,
                        Precision::Int16, Precision::Int16, {1, 8, 1, 1});
    EXPECT_EQ(r.message(), "bias data: nv_small does not support int16 processing");
    r = make_aux_layout(full, AuxKind::Bias, AuxMode::PerChannel, AuxUse::Alu, Precision::Int8,
                        Precision::Int8, {1, 8, 2, 1});
    EXPECT_EQ(r.message(), "bias data: per-channel data is 1x1xC, not 1x2x8 (WxHxC)");
    r = make_aux_layout(full, AuxKind::ElementWise, AuxMode::PerElement, AuxUse::Alu,
                        Precision::Int8, Precision::Int8, {1, 8, 2, 2}, {80, 0, 0});
    EXPECT_EQ(r.message(), "element-wise: line stride 80 (0x50) is not a multiple of 32 bytes");
    r = make_aux_layout(full, AuxKind::ElementWise, AuxMode::PerElement, AuxUse::Alu,
                        Precision::Int8, Precision::Int8, {1, 8, 2, 2}, {32, 0, 0});
    EXPECT_EQ(r.message(),
              "element-wise data: line stride 32 is smaller than one line of atoms (64 bytes)");
}

TEST(AuxData, MissingOperandsAndSmallBuffersWriteNothing) {
    auto l = make_aux_layout(config("nv_full"), AuxKind::BatchNorm, AuxMode::PerChannel,
                             AuxUse::Both, Precision::Int8, Precision::Int8, {1, 8, 1, 1});
    ASSERT_TRUE(l.ok());
    std::vector<int16_t> alu(8, 1);
    const ConstTensorView a = view(alu, {1, 8, 1, 1});
    std::vector<uint8_t> bytes(64, 0xaa);
    Status s = pack_aux(*l, {&a, nullptr}, std::as_writable_bytes(std::span(bytes)));
    EXPECT_EQ(s.message(),
              "pack batch-normalization data: the MUL operand is missing (batch-normalization data "
              "with ALU+MUL needs it)");
    const ConstTensorView wrong = view(alu, {1, 4, 1, 2});
    s = pack_aux(*l, {&a, &wrong}, std::as_writable_bytes(std::span(bytes)));
    EXPECT_EQ(s.message(),
              "pack batch-normalization data: the MUL operand is 1x4x1x2 but the data is 1x8x1x1 "
              "(NxCxHxW)");
    std::vector<uint8_t> small(63, 0xaa);
    s = pack_aux(*l, {&a, &a}, std::as_writable_bytes(std::span(small)));
    EXPECT_EQ(
        s.message(),
        "pack batch-normalization data: buffer of 63 bytes is smaller than the data (64 bytes)");
    EXPECT_EQ(bytes, std::vector<uint8_t>(64, 0xaa));
    EXPECT_EQ(small, std::vector<uint8_t>(63, 0xaa));
}

TEST(AuxData, PerLayerRegisterValues) {
    EXPECT_EQ(aux_register_value(Precision::Int8, -3.0f), 0xfffd);
    EXPECT_EQ(aux_register_value(Precision::Int8, 300.0f), 0x007f);  // saturated
    EXPECT_EQ(aux_register_value(Precision::Int16, 300.0f), 300);
    EXPECT_EQ(aux_register_value(Precision::Fp16, 1.0f), 0x3c00);
    EXPECT_EQ(aux_register_value(Precision::Fp16, -0.5f), 0xb800);
}

}  // namespace
}  // namespace nvdla
