// CPU-task operations (softmax and power, fp16 and int8) in both descriptor layouts, run directly
// on host memory, against references computed here; and every malformed-descriptor error.
#include <gtest/gtest.h>

#include <cmath>

#include "networks.hpp"
#include "runtime/cpu_tasks.hpp"
#include "runtime/image.hpp"
#include "test_support.hpp"

namespace nvdla::runtime_test {
namespace {

using runtime::CpuTaskLayout;
using Op = NetworkBuilder::CpuTaskOp;

// A CPU task in host memory: descriptors at entries 0..2, source 3, destination 4.
struct HostTask {
    std::vector<std::vector<std::byte>> memory;
    std::vector<CpuTaskAddress> addresses;

    HostTask(CpuTaskLayout layout, const Op& op, size_t src_bytes, size_t dst_bytes) {
        memory = NetworkBuilder::cpu_task_descriptors(layout, op);
        memory.emplace_back(src_bytes);
        memory.emplace_back(dst_bytes);
        for (auto& m : memory) addresses.push_back({m.data(), m.size(), m.size()});
    }
    std::byte* src() { return memory[3].data(); }
    std::byte* dst() { return memory[4].data(); }
    Status run() { return runtime::run_cpu_task(addresses); }
};

uint16_t half(float v) {
    return fp16::from_float(v);
}

float fp16_at(const std::byte* p, size_t index) {
    uint16_t h;
    std::memcpy(&h, p + index * 2, 2);
    return fp16::to_float(h);
}

// Offset of element (c, h, w) with `lanes` channels per 32-byte (or 8-byte) group.
size_t element(uint32_t c, uint32_t h, uint32_t w, uint32_t lanes, uint32_t bytes, uint32_t line,
               uint32_t surface) {
    return size_t(c / lanes) * surface + size_t(h) * line + size_t(w) * lanes * bytes +
           size_t(c % lanes) * bytes;
}

class CpuTaskLayouts : public ::testing::TestWithParam<CpuTaskLayout> {
  protected:
    CpuTaskLayout layout() const { return GetParam(); }
    uint16_t fp16_format() const { return layout() == CpuTaskLayout::Current ? 3 : 2; }
};

TEST_P(CpuTaskLayouts, PowerFp16) {
    auto rng = test::rng_for_test();
    // 20 channels over two surfaces, 3 x 2 positions.
    Op op{.type = 0,
          .format = fp16_format(),
          .w = 3,
          .h = 2,
          .c = 20,
          .line = 96,
          .surface = 192,
          .power = 2.0f,
          .scale = 0.5f,
          .shift = 1.0f};
    HostTask t(layout(), op, 384, 384);
    const auto x = test::random_vector<float>(rng, 120, -4.0f, 4.0f);
    size_t k = 0;
    for (uint32_t c = 0; c < 20; ++c)
        for (uint32_t h = 0; h < 2; ++h)
            for (uint32_t w = 0; w < 3; ++w)
                put<uint16_t>(t.memory[3], element(c, h, w, 16, 2, 96, 192), half(x[k++]));
    ASSERT_TRUE(t.run().ok()) << t.run().message();
    k = 0;
    for (uint32_t c = 0; c < 20; ++c)
        for (uint32_t h = 0; h < 2; ++h)
            for (uint32_t w = 0; w < 3; ++w) {
                const float in = fp16::to_float(half(x[k++]));
                const float want =
                    fp16::to_float(runtime::fp16_round_ties_away(std::pow(1.0f + 0.5f * in, 2.0f)));
                ASSERT_EQ(fp16_at(t.dst(), element(c, h, w, 16, 2, 96, 192) / 2), want)
                    << c << "," << h << "," << w;
            }
}

TEST_P(CpuTaskLayouts, SoftmaxFp16) {
    // The LeNet case: 10 classes, 1 x 1.
    Op op{.type = 1, .format = fp16_format(), .c = 10};
    HostTask t(layout(), op, 32, 32);
    const float logits[10] = {0.5f, 2.0f, -1.0f, 0.0f, 1.5f, 0.25f, -3.0f, 1.0f, 0.75f, -0.5f};
    for (int c = 0; c < 10; ++c) put<uint16_t>(t.memory[3], size_t(c) * 2, half(logits[c]));
    ASSERT_TRUE(t.run().ok());
    float largest = -INFINITY, sum = 0;
    for (float l : logits) largest = std::max(largest, fp16::to_float(half(l)));
    for (float l : logits) sum += std::exp(fp16::to_float(half(l)) - largest);
    float total = 0;
    for (int c = 0; c < 10; ++c) {
        const float p = fp16_at(t.dst(), size_t(c));
        EXPECT_EQ(p, fp16::to_float(runtime::fp16_round_ties_away(
                         std::exp(fp16::to_float(half(logits[c])) - largest) / sum)));
        total += p;
    }
    EXPECT_NEAR(total, 1.0f, 2e-3f);
}

TEST_P(CpuTaskLayouts, SoftmaxOfZerosIsUniform) {
    Op op{.type = 1, .format = fp16_format(), .c = 10};
    HostTask t(layout(), op, 32, 32);
    ASSERT_TRUE(t.run().ok());
    for (int c = 0; c < 10; ++c)
        EXPECT_EQ(fp16_at(t.dst(), size_t(c)), fp16::to_float(runtime::fp16_round_ties_away(0.1f)));
}

TEST_P(CpuTaskLayouts, PowerInt8) {
    // Original layout: no scale factors (1, 1). Current: scaled in by 0.5, out by 0.25.
    const bool current = layout() == CpuTaskLayout::Current;
    Op op{.type = 0,
          .format = 0,
          .w = 2,
          .h = 1,
          .c = 33,
          .line = 64,
          .surface = 64,
          .power = 1.0f,
          .scale = 3.0f,
          .shift = -2.0f,
          .input_scale = 0.5f,
          .output_scale = 0.25f};
    HostTask t(layout(), op, 128, 128);
    for (int i = 0; i < 128; ++i) put<int8_t>(t.memory[3], size_t(i), static_cast<int8_t>(i - 64));
    ASSERT_TRUE(t.run().ok());
    const float in_scale = current ? 0.5f : 1.0f, out_scale = current ? 0.25f : 1.0f;
    for (uint32_t c = 0; c < 33; ++c)
        for (uint32_t w = 0; w < 2; ++w) {
            const size_t at = element(c, 0, w, 32, 1, 64, 64);
            const int8_t x = static_cast<int8_t>(static_cast<int>(at) - 64);
            const float y = (-2.0f + 3.0f * (x * in_scale)) / out_scale;
            const float clamped = std::clamp(y, -128.0f, 127.0f);
            EXPECT_EQ(static_cast<int8_t>(t.dst()[at]), static_cast<int8_t>(clamped))
                << "c " << c << " w " << w;
        }
}

TEST_P(CpuTaskLayouts, SoftmaxInt8) {
    Op op{.type = 1, .format = 0, .c = 4, .input_scale = 0.5f, .output_scale = 1.0f / 127};
    HostTask t(layout(), op, 32, 32);
    const int8_t x[4] = {10, 0, -10, 4};
    for (int c = 0; c < 4; ++c) put<int8_t>(t.memory[3], size_t(c), x[c]);
    ASSERT_TRUE(t.run().ok());
    const float in = layout() == CpuTaskLayout::Current ? 0.5f : 1.0f;
    const float out = layout() == CpuTaskLayout::Current ? 1.0f / 127 : 1.0f;
    float v[4], largest = -INFINITY, sum = 0;
    for (int c = 0; c < 4; ++c) {
        v[c] = fp16::to_float(runtime::fp16_round_ties_away(x[c] * in));
        largest = std::max(largest, v[c]);
    }
    for (float e : v) sum += std::exp(e - largest);
    for (int c = 0; c < 4; ++c) {
        const float p =
            fp16::to_float(runtime::fp16_round_ties_away(std::exp(v[c] - largest) / sum));
        EXPECT_EQ(static_cast<int8_t>(t.dst()[size_t(c)]),
                  static_cast<int8_t>(std::clamp(p / out, -128.0f, 127.0f)))
            << c;
    }
}

INSTANTIATE_TEST_SUITE_P(Layouts, CpuTaskLayouts,
                         ::testing::Values(CpuTaskLayout::Original, CpuTaskLayout::Current),
                         [](const auto& param_info) {
                             return param_info.param == CpuTaskLayout::Current ? "Current"
                                                                               : "Original";
                         });

TEST(CpuTaskOps, Int8InEightByteGroups) {
    // INT8_8 (current layout only): 8 channels per group.
    Op op{.type = 0,
          .format = 1,
          .w = 2,
          .h = 1,
          .c = 10,
          .line = 16,
          .surface = 16,
          .power = 1.0f,
          .scale = -1.0f};
    HostTask t(CpuTaskLayout::Current, op, 32, 32);
    for (int i = 0; i < 32; ++i) put<int8_t>(t.memory[3], size_t(i), static_cast<int8_t>(i));
    ASSERT_TRUE(t.run().ok());
    for (uint32_t c = 0; c < 10; ++c)
        for (uint32_t w = 0; w < 2; ++w) {
            const size_t at = element(c, 0, w, 8, 1, 16, 16);
            EXPECT_EQ(static_cast<int8_t>(t.dst()[at]), -static_cast<int>(at));
        }
}

TEST(CpuTaskOps, SaturatesAndTruncates) {
    Op op{.type = 0, .format = 0, .c = 4, .power = 1.0f, .scale = 1.0f};
    HostTask t(CpuTaskLayout::Current, op, 32, 32);
    put<float>(t.memory[1], 4, 1.0f);
    put<float>(t.memory[1], 8, 0.3f);  // out scale: y / 0.3
    const int8_t x[4] = {100, -100, 1, -1};
    for (int c = 0; c < 4; ++c) put<int8_t>(t.memory[3], size_t(c), x[c]);
    ASSERT_TRUE(t.run().ok());
    EXPECT_EQ(static_cast<int8_t>(t.dst()[0]), 127);
    EXPECT_EQ(static_cast<int8_t>(t.dst()[1]), -128);
    EXPECT_EQ(static_cast<int8_t>(t.dst()[2]), 3);   // 3.33 toward zero
    EXPECT_EQ(static_cast<int8_t>(t.dst()[3]), -3);  // -3.33 toward zero
}

TEST(CpuTaskOps, InspectReportsScales) {
    Op op{.type = 1, .format = 0, .c = 4, .input_scale = 0.5f, .output_scale = 0.125f};
    HostTask t(CpuTaskLayout::Current, op, 32, 32);
    Result<runtime::CpuTaskInfo> info = runtime::inspect_cpu_task(t.addresses);
    ASSERT_TRUE(info.ok()) << info.message();
    EXPECT_EQ(info->layout, CpuTaskLayout::Current);
    ASSERT_EQ(info->operations.size(), 1u);
    EXPECT_EQ(info->operations[0].type, 1);
    EXPECT_TRUE(info->operations[0].int8);
    EXPECT_EQ(info->operations[0].source_address, 3);
    EXPECT_EQ(info->operations[0].destination_address, 4);
    EXPECT_EQ(info->operations[0].input_scale, 0.5f);
    EXPECT_EQ(info->operations[0].output_scale, 0.125f);
}

TEST(CpuTaskOps, TimesEachOperation) {
    HostTask t(CpuTaskLayout::Current, Op{.type = 1, .format = 3, .c = 10}, 32, 32);
    std::vector<runtime::CpuTaskOperationTime> times;
    ASSERT_TRUE(runtime::run_cpu_task(t.addresses, &times).ok());
    ASSERT_EQ(times.size(), 1u);
    EXPECT_EQ(times[0].name, "softmax");
}

// ---- errors ----

std::string error_of(HostTask& t) {
    Status s = t.run();
    return s.ok() ? "(ran)" : s.message();
}

TEST(CpuTaskErrors, NetworkDescriptor) {
    HostTask t(CpuTaskLayout::Current, Op{.format = 3}, 32, 32);
    t.addresses[0].size = 4;
    EXPECT_EQ(error_of(t),
              "EMU task: address-list entry 0 holds 4 bytes, too few for the network descriptor");
    EXPECT_EQ(runtime::run_cpu_task({}).message(), "EMU task: its address list is empty");
}

TEST(CpuTaskErrors, ListIndices) {
    HostTask t(CpuTaskLayout::Current, Op{.format = 3}, 32, 32);
    put<int16_t>(t.memory[0], 0, 9);
    EXPECT_EQ(error_of(t),
              "EMU task: the operation list index 9 is not one of the task's 5 "
              "address-list entries");
    HostTask u(CpuTaskLayout::Current, Op{.format = 3}, 32, 32);
    put<int16_t>(u.memory[0], 2, -1);
    EXPECT_EQ(error_of(u),
              "EMU task: the buffer-descriptor list index -1 is not one of the "
              "task's 5 address-list entries");
}

TEST(CpuTaskErrors, LayoutUnknown) {
    HostTask t(CpuTaskLayout::Current, Op{.format = 3}, 32, 32);
    t.addresses[1].declared = 20;
    EXPECT_EQ(error_of(t),
              "EMU task: cannot tell the descriptor layout: the operation list is "
              "20 bytes for 1 operations (16 or 24 bytes each expected)");
}

TEST(CpuTaskErrors, BufferListTooShort) {
    HostTask t(CpuTaskLayout::Current, Op{.format = 3}, 32, 32);
    t.addresses[2].size = 300;
    EXPECT_EQ(error_of(t),
              "EMU task: the buffer-descriptor list holds 300 bytes, too few for 1 "
              "operations (512 bytes each)");
}

TEST(CpuTaskErrors, OperationType) {
    HostTask t(CpuTaskLayout::Current, Op{.format = 3}, 32, 32);
    put<uint8_t>(t.memory[1], 0, 7);
    EXPECT_EQ(error_of(t),
              "EMU operation 0: type 7 is neither power (0), softmax (1) nor a CPU operation (16 "
              "to 45)");
}

TEST(CpuTaskErrors, UnsupportedFormats) {
    HostTask t(CpuTaskLayout::Current, Op{.format = 2}, 32, 32);
    EXPECT_EQ(error_of(t),
              "EMU operation 0 source: INT16 data is not supported (int8 and fp16 "
              "are)");
    HostTask u(CpuTaskLayout::Original, Op{.format = 1}, 32, 32);
    EXPECT_EQ(error_of(u),
              "EMU operation 0 source: INT16 data is not supported (int8 and fp16 "
              "are)");
    HostTask v(CpuTaskLayout::Current, Op{.format = 9}, 32, 32);
    EXPECT_EQ(error_of(v),
              "EMU operation 0 source: unknown format 9 data is not supported (int8 "
              "and fp16 are)");
}

TEST(CpuTaskErrors, SourceAndDestinationDiffer) {
    HostTask t(CpuTaskLayout::Current, Op{.format = 3}, 32, 32);
    put<uint16_t>(t.memory[2], 256 + 10, 0);  // destination format INT8
    EXPECT_EQ(error_of(t), "EMU operation 0: source and destination formats differ (3 and 0)");
    HostTask u(CpuTaskLayout::Current, Op{.format = 3, .c = 4}, 32, 32);
    put<uint16_t>(u.memory[2], 256 + 16, 5);  // destination channels
    EXPECT_EQ(error_of(u), "EMU operation 0: source and destination shapes differ");
}

TEST(CpuTaskErrors, AddressIndex) {
    HostTask t(CpuTaskLayout::Current, Op{.format = 3}, 32, 32);
    put<int16_t>(t.memory[2], 256, 12);
    EXPECT_EQ(error_of(t),
              "EMU operation 0 destination: address index 12 is not one of the "
              "task's 5 address-list entries");
}

TEST(CpuTaskErrors, ElementsOutsideTheBuffer) {
    // 17 fp16 channels need a second surface at 32: 32 + 2 = 34 bytes > 32.
    HostTask t(CpuTaskLayout::Current, Op{.format = 3, .c = 17}, 32, 64);
    EXPECT_EQ(error_of(t),
              "EMU operation 0 source: 1x1x17 elements at offset 0 reach 34 bytes, "
              "past the end of address-list entry 3 (32 bytes)");
    HostTask u(CpuTaskLayout::Current, Op{.format = 3}, 32, 32);
    put<uint32_t>(u.memory[2], 256 + 2, 31);  // destination offset
    EXPECT_EQ(error_of(u),
              "EMU operation 0 destination: 1x1x1 elements at offset 31 reach 33 "
              "bytes, past the end of address-list entry 4 (32 bytes)");
}

TEST(CpuTaskErrors, SramIsOutOfReach) {
    HostTask t(CpuTaskLayout::Current, Op{.format = 3}, 32, 32);
    t.addresses[4].data = nullptr;
    EXPECT_EQ(error_of(t),
              "EMU operation 0 destination: address-list entry 4 lies in SRAM, "
              "which the CPU cannot reach");
}

TEST(CpuTaskErrors, NoOperationIsNothingToDo) {
    HostTask t(CpuTaskLayout::Current, Op{.format = 3}, 32, 32);
    put<uint16_t>(t.memory[0], 4, 0);
    EXPECT_TRUE(t.run().ok());
}

}  // namespace
}  // namespace nvdla::runtime_test
