// The public runtime API (include/nvdla/runtime.hpp) on the emulated device: load once and run
// many times, contexts side by side, tensor queries, binding memory without copies, asynchronous
// jobs, timings, CPU tasks between hardware tasks, and every error path.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "networks.hpp"
#include "nvdla/runtime_dimg.hpp"
#include "runtime/image.hpp"
#include "test_support.hpp"

namespace nvdla::runtime_test {
namespace {

using namespace std::chrono_literals;
using runtime::CpuTaskLayout;
using Op = NetworkBuilder::CpuTaskOp;

void fill(std::span<std::byte> s, uint8_t seed) {
    for (size_t i = 0; i < s.size(); ++i) s[i] = std::byte(uint8_t(seed + i * 13));
}

bool same(std::span<const std::byte> a, std::span<const std::byte> b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0;
}

class RuntimeApi : public ::testing::Test {
  protected:
    void SetUp() override {
        rt = emu_runtime();
        ASSERT_TRUE(rt);
        net = load_or_fail(*rt, copy_network());
        ASSERT_TRUE(net);
    }
    std::unique_ptr<Context> context() {
        Result<std::unique_ptr<Context>> c = net->create_context();
        EXPECT_TRUE(c.ok()) << c.message();
        return c.ok() ? std::move(c).value() : nullptr;
    }
    std::unique_ptr<Runtime> rt;
    std::shared_ptr<Network> net;
};

TEST_F(RuntimeApi, DescribesTheDevice) {
    EXPECT_EQ(rt->device().backend, "emu");
    EXPECT_EQ(rt->device().config, "nv_full");
    EXPECT_EQ(rt->device().device, "in-process emulated nv_full");
    ASSERT_NE(rt->device().hw, nullptr);
    EXPECT_EQ(rt->device().hw->atom_bytes, 32u);
    EXPECT_EQ(rt->device().memory_bytes, 256u << 20);
    EXPECT_EQ(runtime_version(), "0.1.0");
}

TEST_F(RuntimeApi, DescribesTheNetwork) {
    ASSERT_EQ(net->inputs().size(), 1u);
    ASSERT_EQ(net->outputs().size(), 1u);
    const TensorInfo& in = net->inputs()[0];
    EXPECT_EQ(in.name, "data");
    EXPECT_EQ(in.index, 0u);
    EXPECT_EQ(in.dims, (Dims4{1, 32, 8, 8}));
    EXPECT_EQ(in.layout, TensorLayout::NCHW);
    EXPECT_EQ(in.data_type, TensorDataType::Int8);
    EXPECT_EQ(in.category, TensorCategory::Feature);
    EXPECT_EQ(in.pixel_format, kPixelFormatFeature);
    EXPECT_EQ(in.size_bytes, 2048u);
    EXPECT_EQ(in.line_stride(), 256u);
    EXPECT_EQ(in.surface_stride(), 2048u);
    EXPECT_FALSE(in.quantization.known);
    EXPECT_EQ(in.quantization.scale, 1.0f);
    EXPECT_EQ(net->outputs()[0].name, "copy");
    ASSERT_EQ(net->tasks().size(), 1u);
    EXPECT_TRUE(net->tasks()[0].hardware);
    EXPECT_EQ(net->tasks()[0].version, "0.12.0");
    EXPECT_EQ(net->context_bytes(), 6 * 4096u);
}

TEST_F(RuntimeApi, LoadOnceRunMany) {
    auto ctx = context();
    for (uint8_t i = 0; i < 20; ++i) {
        fill(ctx->input(0), i);
        ASSERT_TRUE(ctx->run(1s).ok());
        ASSERT_TRUE(same(ctx->input(0), ctx->output(0))) << int(i);
    }
}

TEST_F(RuntimeApi, AsynchronousJobs) {
    auto ctx = context();
    fill(ctx->input(0), 5);
    Result<Job> job = ctx->submit();
    ASSERT_TRUE(job.ok()) << job.message();
    EXPECT_TRUE(job->wait(1s).ok());
    EXPECT_TRUE(job->done());
    EXPECT_TRUE(job->wait(0ns).ok());  // the result again
    EXPECT_TRUE(same(ctx->input(0), ctx->output(0)));
    const RunTiming& t = job->timing();
    EXPECT_GT(t.total.count(), 0);
    ASSERT_EQ(t.tasks.size(), 1u);
    EXPECT_EQ(t.tasks[0].name, "DLA task 0");
    EXPECT_GT(t.tasks[0].duration.count(), 0);
    EXPECT_TRUE(t.operations.empty());  // no profiling
    EXPECT_EQ(Job().wait().message(), "the job is empty (it was never submitted)");
}

TEST(RuntimeProfiling, TimesEachHardwareOperation) {
    auto rt = emu_runtime("nv_full", true);
    auto net = load_or_fail(*rt, copy_network());
    auto ctx = std::move(net->create_context()).value();
    Result<Job> job = ctx->submit();
    ASSERT_TRUE(job->wait().ok());
    ASSERT_EQ(job->timing().operations.size(), 1u);
    EXPECT_EQ(job->timing().operations[0].name, "BDMA");
    EXPECT_EQ(job->timing().operations[0].task, 0u);
}

TEST_F(RuntimeApi, ContextsSideBySide) {
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int k = 0; k < 4; ++k)
        threads.emplace_back([&, k] {
            auto ctx = context();
            for (int i = 0; i < 25; ++i) {
                fill(ctx->input(0), static_cast<uint8_t>(k * 25 + i));
                if (!ctx->run(5s).ok() || !same(ctx->input(0), ctx->output(0))) ++failures;
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
}

TEST_F(RuntimeApi, ManyNetworksAtOnce) {
    auto other = load_or_fail(*rt, copy_network({0, 10, 0}));
    auto a = context();
    auto b = std::move(other->create_context()).value();
    fill(a->input(0), 1);
    fill(b->input(0), 2);
    Result<Job> ja = a->submit(), jb = b->submit();
    ASSERT_TRUE(jb->wait(1s).ok());
    ASSERT_TRUE(ja->wait(1s).ok());
    EXPECT_TRUE(same(a->input(0), a->output(0)));
    EXPECT_TRUE(same(b->input(0), b->output(0)));
}

TEST_F(RuntimeApi, BindDeviceBuffers) {
    auto ctx = context();
    Result<DeviceBuffer> in = rt->allocate(2048), out = rt->allocate(4096);
    ASSERT_TRUE(in.ok() && out.ok());
    fill(in->bytes(), 9);
    ASSERT_TRUE(ctx->bind_input(0, *in).ok());
    ASSERT_TRUE(ctx->bind_output(0, *out).ok());
    EXPECT_EQ(ctx->input(0).data(), in->data());
    ASSERT_TRUE(ctx->run().ok());
    EXPECT_TRUE(same(in->bytes(), out->bytes().first(2048)));
}

TEST_F(RuntimeApi, BindHostMemoryWithoutCopies) {
    auto ctx = context();
    std::vector<std::byte> in(2048), out(2048);
    fill(in, 3);
    ASSERT_TRUE(ctx->bind_input(0, in.data(), in.size()).ok());
    ASSERT_TRUE(ctx->bind_output(0, out.data(), out.size()).ok());
    EXPECT_EQ(ctx->output(0).data(), out.data());
    ASSERT_TRUE(ctx->run().ok());
    EXPECT_EQ(in, out);
    fill(in, 4);  // the bound memory itself is what runs
    ASSERT_TRUE(ctx->run().ok());
    EXPECT_EQ(in, out);
}

TEST_F(RuntimeApi, BindFileDescriptorsWithoutCopies) {
    const int fd = memfd_create("input", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, 4096), 0);
    void* map = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT_NE(map, MAP_FAILED);
    std::span<std::byte> mapped(static_cast<std::byte*>(map), 2048);
    fill(mapped, 8);
    auto ctx = context();
    ASSERT_TRUE(ctx->bind_input_fd(0, fd).ok());
    close(fd);
    ASSERT_TRUE(ctx->run().ok());
    EXPECT_TRUE(same(mapped, ctx->output(0)));
    munmap(map, 4096);

    // A buffer exported from one context's runtime and bound in another context.
    Result<DeviceBuffer> shared = rt->allocate(2048);
    Result<int> exported = shared->export_fd();
    ASSERT_TRUE(exported.ok()) << exported.message();
    auto consumer = context();
    ASSERT_TRUE(consumer->bind_output_fd(0, *exported).ok());
    close(*exported);
    fill(consumer->input(0), 12);
    ASSERT_TRUE(consumer->run().ok());
    EXPECT_TRUE(same(consumer->input(0), shared->bytes()));
}

TEST_F(RuntimeApi, BindErrors) {
    auto ctx = context();
    Result<DeviceBuffer> small = rt->allocate(1024);
    EXPECT_EQ(ctx->bind_input(1, *small).message(),
              "input 1 does not exist: the network has 1 input");
    EXPECT_EQ(ctx->bind_output(3, *small).message(),
              "output 3 does not exist: the network has 1 output");
    EXPECT_EQ(ctx->bind_input(0, DeviceBuffer()).message(), "bind input 0: the buffer is empty");
    EXPECT_EQ(ctx->bind_input(0, *small).message(),
              "bind input 0: the buffer holds 1024 bytes, less than the 2048 the tensor's memory "
              "needs");
    auto other = emu_runtime();
    Result<DeviceBuffer> foreign = other->allocate(2048);
    EXPECT_EQ(ctx->bind_output(0, *foreign).message(),
              "bind output 0: the buffer belongs to another runtime");
    EXPECT_EQ(ctx->bind_input(0, nullptr, 2048).message(),
              "bind input 0: emu backend: host memory to import is empty");
    EXPECT_EQ(ctx->bind_input_fd(0, -1).message(),
              "bind input 0: emu backend: file descriptor -1 is not valid");
    EXPECT_TRUE(ctx->input(7).empty());
}

// A network whose one task is a long CPU operation (a power over 4M fp16 elements).
std::vector<std::byte> slow_network() {
    NetworkBuilder b;
    const uint32_t surface = 64 * 64 * 32;
    const uint64_t bytes = uint64_t(surface) * 64;  // 1024 channels
    const uint16_t in = b.tensor(true, "x", kFp16, 1024, 64, 64, 64 * 32, surface, bytes);
    const uint16_t out = b.tensor(false, "y", kFp16, 1024, 64, 64, 64 * 32, surface, bytes);
    b.cpu_task(CpuTaskLayout::Current,
               Op{.type = 0,
                  .format = 3,
                  .w = 64,
                  .h = 64,
                  .c = 1024,
                  .line = 64 * 32,
                  .surface = surface,
                  .power = 0.5f,
                  .scale = 1.0f,
                  .shift = 1.0f},
               in, out);
    return b.bytes();
}

TEST_F(RuntimeApi, OneJobPerContextAndWaitTimeouts) {
    auto slow = load_or_fail(*rt, slow_network());
    auto ctx = std::move(slow->create_context()).value();
    Result<Job> job = ctx->submit();
    ASSERT_TRUE(job.ok()) << job.message();
    const Status early = job->wait(0ns);
    if (!job->done()) {
        EXPECT_TRUE(timed_out(early));
        EXPECT_EQ(early.message(), "timed out: the network has not finished");
        EXPECT_EQ(ctx->submit().message(),
                  "the context's previous job is still running: wait for it first");
        Result<DeviceBuffer> b = rt->allocate(8u << 20);
        EXPECT_EQ(ctx->bind_input(0, *b).message(),
                  "bind input 0: the context's previous job is still running: wait for it first");
    }
    EXPECT_TRUE(job->wait().ok());
    EXPECT_TRUE(ctx->submit().ok());  // and the context's destructor waits for this one
}

// CPU and hardware tasks in one network: power (2x + 1), a BDMA copy, softmax, all fp16.
TEST(RuntimeMixed, CpuAndHardwareTasks) {
    for (CpuTaskLayout layout : {CpuTaskLayout::Original, CpuTaskLayout::Current}) {
        const uint16_t ff16 = layout == CpuTaskLayout::Current ? 3 : 2;
        NetworkBuilder b;
        const uint16_t in = b.tensor(true, "data", kFp16, 10, 1, 1, 32, 32, 32);
        const uint16_t a = b.scratch(32), c = b.scratch(32);
        const uint16_t out = b.tensor(false, "prob", kFp16, 10, 1, 1, 32, 32, 32);
        b.cpu_task(layout,
                   Op{.type = 0, .format = ff16, .c = 10, .power = 1, .scale = 2, .shift = 1}, in,
                   a);
        b.bdma_copy(a, c, 32, 1);
        b.cpu_task(layout, Op{.type = 1, .format = ff16, .c = 10}, c, out);
        auto rt = emu_runtime("nv_full", true);
        auto net = load_or_fail(*rt, b.bytes());
        ASSERT_TRUE(net);
        ASSERT_EQ(net->tasks().size(), 3u);
        EXPECT_FALSE(net->tasks()[0].hardware);
        EXPECT_TRUE(net->tasks()[1].hardware);
        EXPECT_EQ(net->tasks()[0].version, "0.0.1");
        auto ctx = std::move(net->create_context()).value();
        float expected[10], largest = -INFINITY, sum = 0;
        for (int i = 0; i < 10; ++i) {
            const uint16_t h = fp16::from_float(0.25f * static_cast<float>(i - 4));
            std::memcpy(ctx->input(0).data() + 2 * i, &h, 2);
            expected[i] = fp16::to_float(runtime::fp16_round_ties_away(2 * fp16::to_float(h) + 1));
            largest = std::max(largest, expected[i]);
        }
        for (float e : expected) sum += std::exp(e - largest);
        // submit() and wait() (a thread per run), then run() (on this thread): the same.
        for (bool at_once : {false, true}) {
            SCOPED_TRACE(at_once ? "run()" : "submit() and wait()");
            std::memset(ctx->output(0).data(), 0, ctx->output(0).size());
            RunTiming t;
            if (at_once) {
                ASSERT_TRUE(ctx->run(5s).ok());
                t = ctx->last_timing();
            } else {
                Result<Job> job = ctx->submit();
                ASSERT_TRUE(job.ok()) << job.message();
                ASSERT_TRUE(job->wait(5s).ok()) << job->wait(0ns).message();
                t = job->timing();
            }
            for (int i = 0; i < 10; ++i) {
                uint16_t h;
                std::memcpy(&h, ctx->output(0).data() + 2 * i, 2);
                EXPECT_EQ(fp16::to_float(h), fp16::to_float(runtime::fp16_round_ties_away(
                                                 std::exp(expected[i] - largest) / sum)))
                    << i;
            }
            ASSERT_EQ(t.tasks.size(), 3u);
            EXPECT_EQ(t.tasks[0].name, "EMU task 0");
            EXPECT_EQ(t.tasks[1].name, "DLA task 1");
            EXPECT_EQ(t.tasks[2].name, "EMU task 2");
            ASSERT_EQ(t.operations.size(), 3u);
            EXPECT_EQ(t.operations[0].name, "EMU power");
            EXPECT_EQ(t.operations[1].name, "BDMA");
            EXPECT_EQ(t.operations[2].name, "EMU softmax");
        }
    }
}

TEST(RuntimeMixed, CpuTaskErrorsStopTheRun) {
    NetworkBuilder b;
    const uint16_t in = b.tensor(true, "data", kFp16, 10, 1, 1, 32, 32, 32);
    const uint16_t out = b.tensor(false, "prob", kFp16, 10, 1, 1, 32, 32, 32);
    b.cpu_task(CpuTaskLayout::Current, Op{.type = 1, .format = 2, .c = 10}, in, out);  // INT16
    auto rt = emu_runtime();
    auto net = load_or_fail(*rt, b.bytes());
    auto ctx = std::move(net->create_context()).value();
    EXPECT_EQ(ctx->run().message(),
              "EMU task 0: EMU operation 0 source: INT16 data is not "
              "supported (int8 and fp16 are)");
}

TEST(RuntimeQuantization, ScalesFromCpuOperations) {
    NetworkBuilder b;
    const uint16_t in = b.tensor(true, "logits", kInt8, 16, 1, 1, 32, 32, 32);
    const uint16_t out = b.tensor(false, "prob", kInt8, 16, 1, 1, 32, 32, 32);
    b.cpu_task(
        CpuTaskLayout::Current,
        Op{.type = 1, .format = 0, .c = 16, .input_scale = 0.0625f, .output_scale = 1.0f / 127}, in,
        out);
    auto rt = emu_runtime();
    auto net = load_or_fail(*rt, b.bytes());
    ASSERT_TRUE(net);
    EXPECT_TRUE(net->inputs()[0].quantization.known);
    EXPECT_EQ(net->inputs()[0].quantization.scale, 0.0625f);
    EXPECT_TRUE(net->outputs()[0].quantization.known);
    EXPECT_EQ(net->outputs()[0].quantization.scale, 1.0f / 127);
    EXPECT_EQ(net->outputs()[0].quantization.offset, 0);
}

// A descriptor memory declared far larger than its contents (1 TiB; found by the loadable
// fuzzer): loading reads the scales from the contents without imaging the whole memory, and
// the context that would need the memory is refused with a sentence.
TEST(RuntimeQuantization, HugeDescriptorMemoryIsNotImaged) {
    NetworkBuilder b;
    const uint16_t in = b.tensor(true, "logits", kInt8, 16, 1, 1, 32, 32, 32);
    const uint16_t out = b.tensor(false, "prob", kInt8, 16, 1, 1, 32, 32, 32);
    const uint16_t task = b.cpu_task(
        CpuTaskLayout::Current,
        Op{.type = 1, .format = 0, .c = 16, .input_scale = 0.0625f, .output_scale = 1.0f / 127}, in,
        out);
    Loadable& l = b.loadable();
    for (uint16_t address : {l.tasks[task].addresses[0], l.tasks[task].addresses[2]})
        l.memories[l.addresses[address].mem_id].size = uint64_t(1) << 40;
    auto rt = emu_runtime();
    auto net = load_or_fail(*rt, b.bytes());
    ASSERT_TRUE(net);
    EXPECT_EQ(net->inputs()[0].quantization.scale, 0.0625f);
    EXPECT_EQ(net->outputs()[0].quantization.scale, 1.0f / 127);
    Result<std::unique_ptr<Context>> ctx = net->create_context();
    ASSERT_FALSE(ctx.ok());
    EXPECT_NE(ctx.message().find("(1099511627776 bytes)"), std::string::npos) << ctx.message();
}

// The BDMA copy with relocations: the input's line and surface strides are the transfer's
// source_line and source_surface, bytes 16 and 28 of the surface list (memory 4 here).
std::vector<std::byte> relocatable_network(bool with_reloc) {
    NetworkBuilder b;
    const uint16_t in = b.tensor(true, "data", kInt8, 32, 8, 8, 256, 2048, 4096);
    const uint16_t out = b.tensor(false, "copy", kInt8, 32, 8, 8, 256, 2048, 2048);
    b.bdma_copy(in, out, 256, 8);
    if (with_reloc) {
        b.loadable().relocs.push_back({4, 4, 16, 1, 4, runtime::kRelocLineStride});
        b.loadable().relocs.push_back({4, 4, 28, 1, 4, runtime::kRelocSurfaceStride});
    }
    return b.bytes();
}

// (Run once before the change too: the descriptors' memory is sealed, and the patched one must
// be validated anew, not taken for the one validated first.)
TEST(RuntimeStrides, RelocationsPatchTheDescriptors) {
    auto rt = emu_runtime();
    auto net = load_or_fail(*rt, relocatable_network(true));
    auto ctx = std::move(net->create_context()).value();
    fill(ctx->input(0), 1);
    for (size_t i = 0; i < ctx->input(0).size(); ++i)  // lines that differ (fill's repeat)
        ctx->input(0)[i] ^= std::byte(uint8_t(i / 256));
    std::vector<std::byte> in(ctx->input(0).begin(), ctx->input(0).end());
    ASSERT_TRUE(ctx->run().ok());
    ASSERT_EQ(std::memcmp(ctx->output(0).data(), in.data(), 2048), 0);
    ASSERT_TRUE(ctx->set_input_strides(0, 512, 4096).ok());
    ASSERT_TRUE(ctx->run().ok()) << ctx->run().message();
    for (size_t line = 0; line < 8; ++line)
        ASSERT_EQ(std::memcmp(ctx->output(0).data() + line * 256, in.data() + line * 512, 256), 0)
            << line;
    EXPECT_TRUE(ctx->set_input_strides(0, 512, 4096).ok());  // unchanged: nothing to do
}

// A CPU task that writes into a sealed memory seals it again. Here a power operation gives fp16
// 0x0004 (2^-22) and writes it over the low half of the BDMA copy's line count after the copy
// ran: the next run copies 4 lines, its descriptors validated anew, not the 8 lines the first
// run's validation recorded.
TEST(RuntimeSeals, CpuTasksWritingASealedMemorySealItAgain) {
    NetworkBuilder b;
    const uint16_t in = b.tensor(true, "data", kInt8, 32, 8, 1, 256, 2048, 2048);
    const uint16_t out = b.tensor(false, "copy", kInt8, 32, 8, 1, 256, 2048, 2048);
    const uint16_t copy = b.bdma_copy(in, out, 256, 8);
    const uint16_t zeros = b.scratch(32);
    const uint16_t power =
        b.cpu_task(CpuTaskLayout::Current,
                   Op{.format = 3, .scale = 0, .shift = std::ldexp(1.0f, -22)}, zeros, zeros);
    runtime::Loadable& l = b.loadable();
    const uint16_t surfaces = l.addresses[l.tasks[copy].addresses[2]].mem_id;
    l.tasks[power].addresses[4] =
        b.address(surfaces, offsetof(nvdla_dla_bdma_surface_desc, transfers[0].line_repeat));
    auto rt = emu_runtime();
    auto net = load_or_fail(*rt, b.bytes());
    ASSERT_TRUE(net);
    auto ctx = std::move(net->create_context()).value();
    fill(ctx->input(0), 5);
    for (size_t i = 0; i < ctx->input(0).size(); ++i)  // lines that differ (fill's repeat)
        ctx->input(0)[i] ^= std::byte(uint8_t(i / 256));
    auto copied_bytes = [&] {
        std::memset(ctx->output(0).data(), 0, ctx->output(0).size());
        const Status ran = ctx->run();
        EXPECT_TRUE(ran.ok()) << ran.message();
        size_t n = 0;
        while (n < 2048 && ctx->output(0)[n] == ctx->input(0)[n]) ++n;
        return n;
    };
    EXPECT_EQ(copied_bytes(), 2048u);
    EXPECT_EQ(copied_bytes(), 1024u) << "the recorded validation of 8 lines was used";
}

// Extents are bounded by the buffer an address resolves to, not by the address entry's nominal
// size: the original compiler places a concat slice past an entry's size inside its memory.
TEST(RuntimeBounds, TheBufferBoundsAccessesNotTheEntrySize) {
    NetworkBuilder b;
    const uint16_t in = b.tensor(true, "data", kInt8, 32, 8, 8, 256, 2048, 2048);
    const uint16_t out = b.tensor(false, "copy", kInt8, 32, 8, 8, 256, 2048, 2048);
    b.bdma_copy(in, out, 256, 8);
    for (runtime::AddressEntry& a : b.loadable().addresses)
        if (a.mem_id == out) a.size = 256;
    auto rt = emu_runtime();
    auto net = load_or_fail(*rt, b.bytes());
    auto ctx = std::move(net->create_context()).value();
    fill(ctx->input(0), 3);
    const Status ran = ctx->run();
    ASSERT_TRUE(ran.ok()) << ran.message();
    EXPECT_EQ(std::memcmp(ctx->output(0).data(), ctx->input(0).data(), 2048), 0);

    // Past the buffer itself: refused before the device runs.
    for (runtime::AddressEntry& a : b.loadable().addresses)
        if (a.mem_id == out) a.offset = 256, a.size = 256;
    auto shifted = load_or_fail(*rt, b.bytes());
    auto refused = std::move(shifted->create_context()).value();
    const std::string m = refused->run().message();
    EXPECT_NE(m.find("past the 1792 bytes of address-list entry"), std::string::npos) << m;
}

TEST(RuntimeStrides, WithoutRelocationsTheyCannotChange) {
    auto rt = emu_runtime();
    auto net = load_or_fail(*rt, relocatable_network(false));
    auto ctx = std::move(net->create_context()).value();
    EXPECT_EQ(ctx->set_input_strides(0, 512, 2048).message(),
              "input 0: the loadable has no relocation for its strides, so they cannot change");
    EXPECT_TRUE(ctx->set_input_strides(0, 256, 2048).ok());
    EXPECT_EQ(ctx->set_output_strides(2, 1, 1).message(),
              "output 2 does not exist: the network has 1 output");
}

TEST(RuntimeLoad, Errors) {
    auto rt = emu_runtime();
    std::vector<std::byte> junk(64, std::byte{0x55});
    const std::string e = rt->load(junk).message();
    EXPECT_EQ(e.rfind("loadable: ", 0), 0u) << e;
    EXPECT_EQ(rt->load_file("/nonexistent/x.nvdla").message(),
              "/nonexistent/x.nvdla: cannot open the file (No such file or directory)");
    const auto empty = std::filesystem::temp_directory_path() / "nvdla_runtime_empty_loadable";
    std::ofstream(empty).close();
    EXPECT_EQ(rt->load_file(empty.string()).message(), empty.string() + ": the file is empty");
    std::filesystem::remove(empty);
    EXPECT_EQ(rt->load(copy_network({0, 9, 0})).message(),
              "loadable: task_list entry 0: DLA descriptors of interface version 0.9.0 are not "
              "supported (0.10.x to 0.12.x are)");
    EXPECT_EQ(rt->load(copy_network({0, 0, 0})).message(),
              "loadable: task_list entry 0: the blob of its network descriptor carries no "
              "interface version");
}

TEST(RuntimeLoad, FileErrorsNameTheFile) {
    auto rt = emu_runtime();
    const auto path = std::filesystem::temp_directory_path() / "nvdla_runtime_bad_loadable";
    std::vector<std::byte> bytes = copy_network();
    bytes.resize(bytes.size() / 2);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
    const std::string e = rt->load_file(path.string()).message();
    EXPECT_EQ(e.rfind(path.string() + ": loadable: ", 0), 0u) << e;
    std::filesystem::remove(path);
}

TEST(RuntimeOpen, Errors) {
    RuntimeOptions o;
    o.backend = BackendChoice::Emu;
    o.emu_config = "nv_huge";
    const std::string e = Runtime::open(o).message();
    EXPECT_EQ(e.rfind("emu backend: ", 0), 0u) << e;
    ::setenv("NVDLA_BACKEND", "fpga", 1);
    EXPECT_EQ(Runtime::open().message(), "NVDLA_BACKEND=fpga is not one of emu, drm, auto");
    ::setenv("NVDLA_BACKEND", "emu", 1);
    RuntimeOptions drm;
    drm.backend = BackendChoice::Drm;
    Result<std::unique_ptr<Runtime>> overridden = Runtime::open(drm);
    EXPECT_TRUE(overridden.ok()) << overridden.message();
    ::unsetenv("NVDLA_BACKEND");
}

TEST(RuntimeContext, MemoryTheConfigurationLacks) {
    NetworkBuilder b;
    const uint16_t in = b.tensor(true, "data", kInt8, 32, 8, 8, 64, 512, 2048);
    b.tensor(false, "copy", kInt8, 32, 8, 8, 64, 512, 2048);
    b.scratch(4096, 0, runtime::LoadableDomain::Sram);
    b.bdma_copy(in, 1, 256, 8);
    auto rt = emu_runtime("nv_small");
    auto net = load_or_fail(*rt, b.bytes());
    ASSERT_TRUE(net);
    EXPECT_EQ(net->create_context().message(),
              "memory_list entry 2 (4096 bytes): emu backend: nv_small has no SRAM (no secondary "
              "memory interface)");
}

TEST(RuntimeContext, ValidateWithoutRunning) {
    auto full = emu_runtime("nv_full");
    auto ctx = std::move(load_or_fail(*full, copy_network())->create_context()).value();
    EXPECT_TRUE(ctx->validate().ok());
    auto small = emu_runtime("nv_small");
    auto on_small = std::move(load_or_fail(*small, copy_network())->create_context()).value();
    const std::string e = on_small->validate().message();
    EXPECT_EQ(e.rfind("DLA task 0: rejected by the validator (E_UNSUPPORTED): ", 0), 0u) << e;
    EXPECT_EQ(on_small->run().message(), e);
}

TEST(RuntimeImage, LoadsAnImageIntoTheInput) {
    auto rt = emu_runtime();
    auto net = load_or_fail(*rt, copy_network());
    auto ctx = std::move(net->create_context()).value();
    const auto path = std::filesystem::temp_directory_path() / "nvdla_runtime_test_8x8.pgm";
    {
        std::ofstream f(path, std::ios::binary);
        f << "P5\n8 8\n255\n";
        for (int i = 0; i < 64; ++i) f.put(static_cast<char>(i * 4));
    }
    ASSERT_TRUE(ctx->load_image(0, path.string()).ok())
        << ctx->load_image(0, path.string()).message();
    ASSERT_TRUE(ctx->run().ok());
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) {
            const int pixel = (y * 8 + x) * 4;
            const auto want = static_cast<int8_t>(std::floor(pixel * 127.0 / 255.0 + 0.5));
            ASSERT_EQ(static_cast<int8_t>(ctx->output(0)[size_t(y * 256 + x * 32)]), want);
            ASSERT_EQ(ctx->output(0)[size_t(y * 256 + x * 32 + 1)], std::byte{0});
        }
    EXPECT_EQ(ctx->load_image(1, path.string()).message(),
              "input 1 does not exist: the network has 1 input");
    std::filesystem::remove(path);
    EXPECT_FALSE(ctx->load_image(0, path.string()).ok());
}

// Every regression loadable through the API: the DIMG equals the golden file byte for byte.
TEST(RuntimeRegression, OutputsEqualTheGoldens) {
    NVDLA_REQUIRE_SHARED();
    namespace fs = std::filesystem;
    const fs::path dir = test::shared_dir() / "vectors/sw-regression";
    if (!fs::is_directory(dir / "flatbufs")) GTEST_SKIP() << dir << " is absent";
    int checked = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir / "flatbufs")) {
        if (!e.is_regular_file()) continue;
        std::string name = e.path().filename().string();
        name = name.substr(0, name.size() - 5);  // _fbuf
        fs::path golden;
        for (const auto& g : fs::directory_iterator(dir / "golden")) {
            const std::string n = g.path().filename().string();
            if (n.size() == name.size() + 7 && n.rfind(name + "_", 0) == 0) golden = g.path();
        }
        ASSERT_FALSE(golden.empty()) << name;
        const bool small = name.size() > 6 && name.substr(name.size() - 6) == "_small";
        auto rt = emu_runtime(small ? "nv_small" : "nv_full");
        Result<std::shared_ptr<Network>> net = rt->load_file(e.path().string());
        ASSERT_TRUE(net.ok()) << net.message();
        auto ctx = std::move((*net)->create_context()).value();
        ASSERT_TRUE(ctx->run().ok()) << name;
        Result<std::vector<std::byte>> file = dimg::encode((*net)->outputs()[0], ctx->output(0));
        ASSERT_TRUE(file.ok()) << file.message();
        std::ifstream g(golden / "o_000000.dimg", std::ios::binary);
        std::vector<char> want((std::istreambuf_iterator<char>(g)), {});
        ASSERT_EQ(file->size(), want.size()) << name;
        EXPECT_EQ(std::memcmp(file->data(), want.data(), want.size()), 0) << name;
        ++checked;
    }
    EXPECT_EQ(checked, 10);
}

}  // namespace
}  // namespace nvdla::runtime_test
