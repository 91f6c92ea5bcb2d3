// CPU tasks (the extended EMU1 encoding of docs/runtime.md): descriptors written here from the
// documentation, run directly on host memory against references computed here; every
// malformed descriptor is a sentence naming the operation and the field; and the builder's
// CPU tasks carry the marker that stops the original runtime.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "networks.hpp"
#include "nvdla/builder.hpp"
#include "nvdla/precision/fp16.hpp"
#include "runtime/cpu_tasks.hpp"
#include "runtime/loadable.hpp"
#include "test_support.hpp"

namespace nvdla::runtime_test {
namespace {

using builder::CpuOpKind;
using runtime::CpuTaskAddress;

template <class T>
void store(std::vector<std::byte>& out, size_t offset, T value) {
    std::memcpy(out.data() + offset, &value, sizeof value);
}

struct Cube {
    uint16_t format = 3;  // FF16
    uint16_t w = 1, h = 1, c = 1;
    uint32_t line = 0, surface = 0;
    int16_t address = 4;
    uint32_t offset = 0;
};

// A task in host memory: 0 network descriptor, 1 operation list, 2 buffer descriptors,
// 3 parameters, 4 input A, 5 input B, 6 output.
struct HostCpuTask {
    std::vector<std::vector<std::byte>> memory;
    std::vector<CpuTaskAddress> addresses;

    HostCpuTask(CpuOpKind kind, std::vector<Cube> inputs, Cube out, std::vector<int32_t> ints = {},
                std::vector<float> floats = {}, bool marker = true) {
        memory.resize(7);
        memory[0].resize(256);
        const uint16_t ops = marker ? 2 : 1;
        store<int16_t>(memory[0], 0, 1);
        store<int16_t>(memory[0], 2, 2);
        store<uint16_t>(memory[0], 4, ops);
        memory[1].resize(24 * ops);
        memory[2].resize(512 * ops);
        const size_t op = marker ? 24 : 0, pair = marker ? 512 : 0;
        if (marker) {
            store<uint8_t>(memory[1], 0, 0);  // power
            store<uint16_t>(memory[2], 10, 3);
            store<uint16_t>(memory[2], 256 + 10, 0xffff);
            std::memcpy(memory[2].data() + 256 + 32, "CPU-TASK", 8);
        }
        store<uint8_t>(memory[1], op, static_cast<uint8_t>(16 + static_cast<int>(kind)));
        store<uint8_t>(memory[1], op + 1, static_cast<uint8_t>(inputs.size()));
        store<float>(memory[1], op + 4, 1.0f);
        store<float>(memory[1], op + 8, 1.0f);
        store<float>(memory[1], op + 12, 1.0f);
        store<uint32_t>(memory[1], op + 16, static_cast<uint32_t>(ints.size()));
        store<uint32_t>(memory[1], op + 20, static_cast<uint32_t>(floats.size()));
        for (size_t k = 0; k < inputs.size(); ++k) cube(pair + 32 * k, inputs[k]);
        cube(pair + 256, out);
        store<int16_t>(memory[2], pair + 256 + 32, 3);
        store<uint32_t>(memory[2], pair + 256 + 34, 0);
        for (int32_t v : ints) append(memory[3], v);
        for (float v : floats) append(memory[3], v);
        memory[4].resize(bytes(inputs.at(0)));
        memory[5].resize(inputs.size() > 1 ? bytes(inputs[1]) : 0);
        memory[6].resize(bytes(out));
        refresh();
    }
    void refresh() {
        addresses.clear();
        for (auto& m : memory) addresses.push_back({m.data(), m.size(), m.size()});
    }
    Status run() { return runtime::run_cpu_task(addresses); }
    void set_scales(float a, float out, float b = 1.0f) {
        store<float>(memory[1], 24 + 4, a);
        store<float>(memory[1], 24 + 8, out);
        store<float>(memory[1], 24 + 12, b);
    }

  private:
    template <class T>
    static void append(std::vector<std::byte>& out, T v) {
        out.resize(out.size() + sizeof v);
        std::memcpy(out.data() + out.size() - sizeof v, &v, sizeof v);
    }
    static size_t bytes(const Cube& c) {
        return c.offset + size_t(c.c == 0 ? 0 : (c.c - 1) / 16) * c.surface + size_t(c.h) * c.line +
               32;
    }
    void cube(size_t at, const Cube& c) {
        store<int16_t>(memory[2], at, c.address);
        store<uint32_t>(memory[2], at + 2, c.offset);
        store<uint32_t>(memory[2], at + 6, 0);
        store<uint16_t>(memory[2], at + 10, c.format);
        store<uint16_t>(memory[2], at + 12, c.w);
        store<uint16_t>(memory[2], at + 14, c.h);
        store<uint16_t>(memory[2], at + 16, c.c);
        store<uint32_t>(memory[2], at + 18, c.line);
        store<uint32_t>(memory[2], at + 22, c.surface);
    }
};

// fp16 cube c x h x w with 16 channels per 32-byte atom.
Cube fp16_cube(uint16_t c, uint16_t h, uint16_t w, int16_t address) {
    Cube k;
    k.c = c;
    k.h = h;
    k.w = w;
    k.line = uint32_t(w) * 32;
    k.surface = k.line * h;
    k.address = address;
    return k;
}

size_t fp16_offset(const Cube& k, uint32_t c, uint32_t h, uint32_t w) {
    return size_t(c / 16) * k.surface + size_t(h) * k.line + size_t(w) * 32 + (c % 16) * 2;
}

TEST(CpuTask, ExpFp16) {
    const Cube in = fp16_cube(20, 2, 3, 4), out = fp16_cube(20, 2, 3, 6);
    HostCpuTask t(CpuOpKind::Exp, {in}, out);
    auto rng = test::rng_for_test();
    const auto x = test::random_vector<float>(rng, 120, -3.0f, 3.0f);
    size_t k = 0;
    for (uint32_t c = 0; c < 20; ++c)
        for (uint32_t h = 0; h < 2; ++h)
            for (uint32_t w = 0; w < 3; ++w)
                store<uint16_t>(t.memory[4], fp16_offset(in, c, h, w), fp16::from_float(x[k++]));
    ASSERT_TRUE(t.run().ok()) << t.run().message();
    k = 0;
    for (uint32_t c = 0; c < 20; ++c)
        for (uint32_t h = 0; h < 2; ++h)
            for (uint32_t w = 0; w < 3; ++w) {
                const double want = std::exp(double(fp16::to_float(fp16::from_float(x[k++]))));
                uint16_t got;
                std::memcpy(&got, t.memory[6].data() + fp16_offset(out, c, h, w), 2);
                // Rounded to nearest: within half a unit in the last place (2^-11 relative).
                EXPECT_NEAR(fp16::to_float(got), want, want * (std::ldexp(1.0, -11) + 1e-6))
                    << c << "," << h << "," << w;
            }
}

TEST(CpuTask, AddInt8Broadcasting) {
    // a: 3 x 2 x 2 int8 (32 channels per atom), b: 3 x 1 x 1; a * 0.5 + b * 0.25, out / 0.1.
    Cube a{.format = 0, .w = 2, .h = 2, .c = 3, .line = 64, .surface = 128, .address = 4};
    Cube b{.format = 0, .w = 1, .h = 1, .c = 3, .line = 32, .surface = 32, .address = 5};
    Cube o{.format = 0, .w = 2, .h = 2, .c = 3, .line = 64, .surface = 128, .address = 6};
    HostCpuTask t(CpuOpKind::Add, {a, b}, o);
    t.set_scales(0.5f, 0.1f, 0.25f);
    for (uint32_t c = 0; c < 3; ++c) {
        store<int8_t>(t.memory[5], c, static_cast<int8_t>(10 * c - 7));
        for (uint32_t h = 0; h < 2; ++h)
            for (uint32_t w = 0; w < 2; ++w)
                store<int8_t>(t.memory[4], h * 64 + w * 32 + c,
                              static_cast<int8_t>(int(c * 20 + h * 7 + w * 3) - 30));
    }
    ASSERT_TRUE(t.run().ok()) << t.run().message();
    for (uint32_t c = 0; c < 3; ++c)
        for (uint32_t h = 0; h < 2; ++h)
            for (uint32_t w = 0; w < 2; ++w) {
                const double real =
                    (int(c * 20 + h * 7 + w * 3) - 30) * 0.5 + (10.0 * c - 7) * 0.25;
                const double want = std::clamp(std::round(real / 0.1), -128.0, 127.0);
                const auto got = static_cast<int8_t>(t.memory[6][h * 64 + w * 32 + c]);
                EXPECT_NEAR(got, want, 1.0) << c << "," << h << "," << w;
            }
}

TEST(CpuTask, GatherAlongWidth) {
    const Cube in = fp16_cube(2, 1, 4, 4), out = fp16_cube(2, 1, 3, 6);
    HostCpuTask t(CpuOpKind::Gather, {in}, out, {3, 3, 0, 3});
    for (uint32_t c = 0; c < 2; ++c)
        for (uint32_t w = 0; w < 4; ++w)
            store<uint16_t>(t.memory[4], fp16_offset(in, c, 0, w),
                            fp16::from_float(float(c * 10 + w)));
    ASSERT_TRUE(t.run().ok()) << t.run().message();
    const int picks[3] = {3, 0, 3};
    for (uint32_t c = 0; c < 2; ++c)
        for (uint32_t w = 0; w < 3; ++w) {
            uint16_t got;
            std::memcpy(&got, t.memory[6].data() + fp16_offset(out, c, 0, w), 2);
            EXPECT_EQ(fp16::to_float(got), float(c * 10 + picks[w]));
        }
}

// run_cpu_task says which address-list entries an operation wrote: the runtime seals a sealed
// memory again after a CPU task wrote into it. The destination decides, not the entry's place.
TEST(CpuTask, ReportsTheEntriesItWrote) {
    for (int16_t destination : {6, 5}) {
        SCOPED_TRACE(destination);
        const Cube in = fp16_cube(2, 1, 2, 4), out = fp16_cube(2, 1, 2, destination);
        HostCpuTask t(CpuOpKind::Exp, {in}, out);
        t.memory[5].resize(t.memory[6].size());
        t.refresh();
        std::vector<bool> written;
        ASSERT_TRUE(runtime::run_cpu_task(t.addresses, nullptr, &written).ok());
        std::vector<bool> expected(7);
        expected[static_cast<size_t>(destination)] = true;
        EXPECT_EQ(written, expected);
    }
    // Refused before its destination was resolved: nothing written.
    Cube in = fp16_cube(2, 1, 2, 4);
    in.format = 9;
    HostCpuTask refused(CpuOpKind::Exp, {in}, fp16_cube(2, 1, 2, 6));
    std::vector<bool> written;
    EXPECT_FALSE(runtime::run_cpu_task(refused.addresses, nullptr, &written).ok());
    EXPECT_EQ(written, std::vector<bool>(7));
}

// Every malformed descriptor is refused with a sentence, before anything is written.
TEST(CpuTask, MalformedDescriptors) {
    const Cube in = fp16_cube(4, 2, 2, 4), out = fp16_cube(4, 2, 2, 6);
    struct Case {
        const char* what;
        std::function<void(HostCpuTask&)> damage;
        std::string message;
    };
    const std::string op = "EMU operation 1 (CPU softmax)";
    const std::vector<Case> cases = {
        {"no marker", [](HostCpuTask& t) { store<uint16_t>(t.memory[2], 256 + 10, 0); },
         "EMU operation 0: source and destination formats differ (3 and 0)"},
        {"wrong magic", [](HostCpuTask& t) { store<uint8_t>(t.memory[2], 256 + 32, 'X'); },
         "EMU operation 0: source and destination formats differ (3 and 65535)"},
        {"three inputs", [](HostCpuTask& t) { store<uint8_t>(t.memory[1], 25, 3); },
         op + ": it names 3 inputs (1 or 2 are possible)"},
        {"parameter index", [](HostCpuTask& t) { store<int16_t>(t.memory[2], 512 + 256 + 32, 9); },
         op + ": the parameter address index 9 is not one of the task's 7 address-list entries"},
        {"parameters past the end",
         [](HostCpuTask& t) { store<uint32_t>(t.memory[2], 512 + 256 + 34, 2); },
         op + ": 1 int and 0 float parameters at offset 2 reach past the end of address-list "
              "entry 3 (4 bytes)"},
        {"parameter count", [](HostCpuTask& t) { store<uint32_t>(t.memory[1], 24 + 16, 1u << 30); },
         op + ": 1073741824 int and 0 float parameters at offset 0 reach past the end of "
              "address-list entry 3 (4 bytes)"},
        {"axis", [](HostCpuTask& t) { store<int32_t>(t.memory[3], 0, 7); },
         op + ": axis 7 is not 1 (c), 2 (h) or 3 (w)"},
        {"destination dims",
         [](HostCpuTask& t) { store<uint16_t>(t.memory[2], 512 + 256 + 12, 1); },
         op + ": the destination is 4x2x1, the operation gives 4x2x2"},
        {"input address", [](HostCpuTask& t) { store<int16_t>(t.memory[2], 512, 40); },
         op + " input 0: address index 40 is not one of the task's 7 address-list entries"},
        {"input past the end", [](HostCpuTask& t) { store<uint32_t>(t.memory[2], 512 + 2, 64); },
         op + " input 0: 2x2x4 elements at offset 64 reach 168 bytes, past the end of "
              "address-list entry 4 (160 bytes)"},
        {"overlapping lines",
         [](HostCpuTask& t) { store<uint32_t>(t.memory[2], 512 + 256 + 18, 0); },
         op + " destination: line stride 0 is smaller than a line of 2 atoms (64 bytes)"},
        {"destination format",
         [](HostCpuTask& t) { store<uint16_t>(t.memory[2], 512 + 256 + 10, 2); },
         op + " destination: INT16 data is not supported (int8 and fp16 are)"},
        {"unknown type", [](HostCpuTask& t) { store<uint8_t>(t.memory[1], 24, 200); },
         "EMU operation 1: type 200 is neither power (0), softmax (1) nor a CPU operation (16 "
         "to 45)"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.what);
        HostCpuTask t(CpuOpKind::Softmax, {in}, out, {1});
        c.damage(t);
        const std::vector<std::byte> before = t.memory[6];
        const Status s = t.run();
        ASSERT_FALSE(s.ok());
        EXPECT_EQ(s.message(), c.message);
        EXPECT_EQ(t.memory[6], before);
    }
    // Parameters in SRAM (no CPU address).
    HostCpuTask t(CpuOpKind::Softmax, {in}, out, {1});
    t.addresses[3].data = nullptr;
    EXPECT_EQ(t.run().message(), op + ": the parameters lie in SRAM, which the CPU cannot reach");
    // A CPU operation without the marker in front.
    HostCpuTask bare(CpuOpKind::Exp, {in}, out, {}, {}, false);
    EXPECT_EQ(bare.run().message(),
              "EMU operation 0 (CPU exp): the task does not start with the CPU-task marker "
              "operation that keeps the original runtime from running it");
}

// The builder's CPU tasks: blob version 0.1.0, and operation 0 a power operation whose
// formats differ (the original runtime's executePower refuses it before touching memory and
// stops the task).
TEST(CpuTask, BuilderTasksStopTheOriginalRuntime) {
    using namespace nvdla::builder;
    builder::Network net;
    Tensor x = net.input("x", {1, 4, 3, 3});
    CpuOpDesc d;
    d.kind = CpuOpKind::LogSoftmax;
    d.ints = {2};
    net.output(net.cpu_op(std::vector<Tensor>{x}, d, "lsm"), "y");
    Result<CompiledNetwork> built = build(net);
    ASSERT_TRUE(built) << built.message();
    EXPECT_TRUE(built->needs_extended_cpu_tasks);
    Result<runtime::Loadable> l = runtime::parse_loadable(built->loadable);
    ASSERT_TRUE(l) << l.message();
    int cpu_tasks = 0;
    for (const runtime::TaskEntry& task : l->tasks) {
        if (task.interface != runtime::TaskInterface::Emu1) continue;
        ++cpu_tasks;
        EXPECT_EQ(task.version, (runtime::BlobVersion{0, 1, 0}));
        // The operation list and the buffer descriptors: SET contents of entries 1 and 2.
        auto blob_at = [&](size_t entry) -> const std::vector<std::byte>& {
            const runtime::MemoryEntry& m = l->memories[l->addresses[task.addresses[entry]].mem_id];
            return l->blobs[m.contents.at(0).blob].data;
        };
        const std::vector<std::byte>& ops = blob_at(1);
        const std::vector<std::byte>& buffers = blob_at(2);
        ASSERT_GE(ops.size(), 48u);
        ASSERT_GE(buffers.size(), 1024u);
        EXPECT_EQ(std::to_integer<int>(ops[0]), 0);  // power
        uint16_t src_format, dst_format;
        std::memcpy(&src_format, buffers.data() + 10, 2);
        std::memcpy(&dst_format, buffers.data() + 256 + 10, 2);
        EXPECT_NE(src_format, dst_format);
        EXPECT_EQ(std::to_integer<int>(ops[24]), 16 + static_cast<int>(CpuOpKind::LogSoftmax));
    }
    EXPECT_EQ(cpu_tasks, 1);
}

// A loadable whose CPU task is damaged loads (the descriptors are data) but does not run: the
// sentence names the task, the operation and the field, and the output stays unwritten.
TEST(CpuTask, DamagedTaskInALoadableIsRefused) {
    using namespace nvdla::builder;
    builder::Network net;
    Tensor x = net.input("x", {1, 4, 3, 3});
    CpuOpDesc d;
    d.kind = CpuOpKind::Exp;
    net.output(net.cpu_op(std::vector<Tensor>{x}, d, "e"), "y");
    Result<CompiledNetwork> built = build(net);
    ASSERT_TRUE(built) << built.message();
    Result<runtime::Loadable> parsed = runtime::parse_loadable(built->loadable);
    ASSERT_TRUE(parsed) << parsed.message();
    runtime::Loadable l = std::move(parsed).value();
    ASSERT_EQ(l.tasks.size(), 1u);
    const runtime::MemoryEntry& m = l.memories[l.addresses[l.tasks[0].addresses[2]].mem_id];
    std::vector<std::byte>& buffers = l.blobs[m.contents.at(0).blob].data;
    store<uint16_t>(buffers, 512 + 256 + 12, 2);  // the destination's width: 2, not 3
    const std::vector<std::byte> bytes = runtime::serialize_loadable(l);

    auto rt = emu_runtime();
    ASSERT_TRUE(rt);
    auto loaded = load_or_fail(*rt, bytes);
    ASSERT_TRUE(loaded);
    Result<std::unique_ptr<Context>> ctx = loaded->create_context();
    ASSERT_TRUE(ctx) << ctx.message();
    std::span<std::byte> out = (*ctx)->output(0);
    std::fill(out.begin(), out.end(), std::byte{0x5a});
    const Status s = (*ctx)->run();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(),
              "EMU task 0: EMU operation 1 (CPU exp): the destination is 4x3x2, the operation "
              "gives 4x3x3");
    for (std::byte b : out) ASSERT_EQ(b, std::byte{0x5a});
}

}  // namespace
}  // namespace nvdla::runtime_test
