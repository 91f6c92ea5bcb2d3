// nvdla_fuzz_make_corpus: writes the committed seed corpora of tests/fuzz/corpus/ (run by hand
// when the formats change; `make fuzz` only reads them):
//
//   nvdla_fuzz_make_corpus tests/fuzz/corpus
//
//   image/         small PGM/PPM (P2, P3, P5, P6; 8 and 16 bits), PNG (grey 1/8/16 bits,
//                  RGB, RGBA, palette with tRNS, interlaced) and JPEG (grey, colour,
//                  progressive) files
//   dla_validate/  valid DLA tasks built with the engine tests' rig (BDMA; SDP then PDP;
//                  CDP with a LUT; a convolution with its fused SDP), in the 0.12 and 0.10
//                  layouts, as dla_task_input.hpp inputs
//   loadable/      loadables made of those tasks (one DLA task each, descriptors as SET
//                  blobs, data buffers allocated), and builder networks whose CPU tasks
//                  (docs/runtime.md "CPU tasks") lie between DLA tasks
//   cpu_task/      those networks' EMU tasks as nvdla_fuzz_cpu_task inputs
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dla_task_input.hpp"
#include "engine_ops.hpp"
#include "image_test_files.hpp"
#include "nvdla/builder.hpp"
#include "runtime/loadable.hpp"

namespace {

namespace fs = std::filesystem;
using namespace nvdla;
using namespace nvdla::engine_test;

void write_file(const fs::path& path, const void* data, size_t size) {
    std::ofstream out(path, std::ios::binary);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    std::printf("  %s (%zu bytes)\n", path.c_str(), size);
}
void write_file(const fs::path& path, const std::vector<std::byte>& bytes) {
    write_file(path, bytes.data(), bytes.size());
}

// ---- Images ---------------------------------------------------------------------------------

std::vector<uint8_t> ramp(size_t n, int step) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * step);
    return v;
}

void images(const fs::path& dir) {
    fs::create_directories(dir);
    write_file(dir / "p2.pgm", test::bytes_of("P2\n# plain\n3 2\n255\n0 10 20\n30 40 255\n"));
    write_file(dir / "p5.pgm", test::pnm("P5\n4 4\n255\n", ramp(16, 16)));
    write_file(dir / "p5_16bit.pgm", test::pnm("P5 2 2 65535\n", ramp(8, 37)));
    write_file(dir / "p5_maxval15.pgm", test::pnm("P5 2 2 15\n", {0, 5, 10, 15}));
    write_file(dir / "p3.ppm", test::bytes_of("P3 2 2 255\n1 2 3 4 5 6\n7 8 9 10 11 12\n"));
    write_file(dir / "p6.ppm", test::pnm("P6 3 3 255\n", ramp(27, 9)));
    write_file(dir / "p6_16bit.ppm",
               test::pnm("P6 2 1 4095\n", {0x0f, 0xff, 0, 1, 8, 0, 1, 2, 3, 4, 5, 6}));

    test::PngSpec grey;
    grey.width = 4;
    grey.height = 4;
    grey.rows = ramp(16, 16);
    write_file(dir / "grey.png", test::encode_png(grey));
    test::PngSpec grey16 = grey;
    grey16.bit_depth = 16;
    grey16.rows = ramp(32, 7);
    write_file(dir / "grey16.png", test::encode_png(grey16));
    test::PngSpec grey1;
    grey1.width = 8;
    grey1.height = 2;
    grey1.bit_depth = 1;
    grey1.rows = {0xa5, 0x3c};
    write_file(dir / "grey1.png", test::encode_png(grey1));
    test::PngSpec rgb;
    rgb.width = 3;
    rgb.height = 2;
    rgb.color_type = PNG_COLOR_TYPE_RGB;
    rgb.rows = ramp(18, 13);
    write_file(dir / "rgb.png", test::encode_png(rgb));
    test::PngSpec rgba = rgb;
    rgba.color_type = PNG_COLOR_TYPE_RGB_ALPHA;
    rgba.rows = ramp(24, 11);
    write_file(dir / "rgba.png", test::encode_png(rgba));
    test::PngSpec palette;
    palette.width = 4;
    palette.height = 2;
    palette.color_type = PNG_COLOR_TYPE_PALETTE;
    palette.palette = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}};
    palette.trns = {0, 128};
    palette.rows = {0, 1, 2, 1, 2, 0, 1, 2};
    write_file(dir / "palette_trns.png", test::encode_png(palette));
    test::PngSpec interlaced = rgb;
    interlaced.width = 9;
    interlaced.height = 9;
    interlaced.interlaced = true;
    interlaced.rows = ramp(9 * 9 * 3, 5);
    write_file(dir / "interlaced.png", test::encode_png(interlaced));

    test::JpegSpec jgrey;
    jgrey.width = 8;
    jgrey.height = 8;
    jgrey.quality = 90;
    jgrey.pixels = ramp(64, 4);
    write_file(dir / "grey.jpg", test::encode_jpeg(jgrey));
    test::JpegSpec jrgb;
    jrgb.width = 16;
    jrgb.height = 8;
    jrgb.components = 3;
    jrgb.quality = 75;
    jrgb.pixels = ramp(16 * 8 * 3, 3);
    write_file(dir / "rgb.jpg", test::encode_jpeg(jrgb));
    jrgb.progressive = true;
    write_file(dir / "progressive.jpg", test::encode_jpeg(jrgb));
}

// ---- DLA tasks ------------------------------------------------------------------------------

struct BuiltTask {
    std::string name;
    const char* config;
    std::vector<fuzz::DlaTaskEntry> entries;
};

// Builds one task on a rig and takes its entries (the rig's descriptors, zero data).
template <class Build>
BuiltTask build(const char* name, const char* config, uint32_t version, Build fill) {
    Rig rig(config);
    TaskBuilder t;
    fill(rig, t);
    t.finish_queues();
    rig.write(t, version);
    if (rig.validate() != 0) {
        std::fprintf(stderr, "%s: the rig's task does not validate: %s\n", name,
                     rig.error().message);
        std::exit(1);
    }
    BuiltTask out{name, config, {}};
    for (uint32_t i = 0; i < rig.num_entries(); ++i) {
        const Entry& e = rig.entry(static_cast<int>(i));
        fuzz::DlaTaskEntry d;
        d.size = static_cast<uint32_t>(e.size);
        d.secondary = e.secondary;
        d.offset_steps = static_cast<uint32_t>((e.address % 4096) / 32);
        // Descriptor entries keep their bytes; data entries are zeros.
        if (i < static_cast<uint32_t>(kFirstData)) d.bytes.assign(e.host, e.host + e.size);
        out.entries.push_back(std::move(d));
    }
    return out;
}

std::vector<BuiltTask> tasks(uint32_t version) {
    std::vector<BuiltTask> out;
    out.push_back(build("bdma", "nv_full", version, [](Rig& rig, TaskBuilder& t) {
        const int a = rig.add_entry(1024), b = rig.add_entry(1024);
        const int op = t.add(NVDLA_DLA_OP_BDMA);
        nvdla_dla_bdma_op_desc& bdma = t[op].op.bdma_op;
        bdma.num_transfers = 2;
        t[op].surf.bdma_surface.num_transfers = 2;
        t[op].surf.bdma_surface.transfers[0] = bdma_transfer(a, b, 256, 2, 1, 256, 256, 512, 512);
        t[op].surf.bdma_surface.transfers[1] = bdma_transfer(b, a, 64, 4, 2, 64, 64, 256, 256);
    }));
    out.push_back(build("sdp_pdp", "nv_full", version, [](Rig& rig, TaskBuilder& t) {
        const Feature f(8, 8, 16, 1, 32), pooled(4, 4, 16, 1, 32);
        const int in = rig.add_entry(f.bytes), mid = rig.add_entry(f.bytes),
                  out_e = rig.add_entry(pooled.bytes);
        const int sdp = t.add(NVDLA_DLA_OP_SDP);
        sdp_copy(t[sdp], f.cube(in), f.cube(mid));
        const int pdp = t.add(NVDLA_DLA_OP_PDP);
        pdp_pool(t[pdp], f.cube(mid), pooled.cube(out_e), NVDLA_DLA_POOL_MAX, 2, 2, 2, 2);
        t.depend(sdp, pdp, NVDLA_DLA_EVENT_OP_COMPLETED);
    }));
    out.push_back(build("cdp_lut", "nv_small", version, [](Rig& rig, TaskBuilder& t) {
        const Feature f(4, 4, 8, 1, 8);
        const int in = rig.add_entry(f.bytes), out_e = rig.add_entry(f.bytes);
        const int lut = t.add_lut(constant_lut(64));
        const int cdp = t.add(NVDLA_DLA_OP_CDP);
        cdp_lrn(t[cdp], f.cube(in), f.cube(out_e), static_cast<int16_t>(lut), 0);
    }));
    out.push_back(build("conv_sdp", "nv_small", version, [](Rig& rig, TaskBuilder& t) {
        const HwConfig& cfg = rig.cfg();
        const ConvShape sh{4, 4, 16, 8, 3, 3, 1};  // 1152 bytes of weights: 9 x 128
        const Feature f(sh.w, sh.h, sh.c, 1, cfg.atom_bytes);
        const Feature o(sh.out_w(), sh.out_h(), sh.k, 1, cfg.atom_bytes);
        const uint32_t wbytes = sh.k * sh.r * sh.s * sh.c;
        const int in = rig.add_entry(f.bytes), w = rig.add_entry(round_up(wbytes, 256)),
                  out_e = rig.add_entry(o.bytes);
        const int conv = t.add(NVDLA_DLA_OP_CONV);
        conv_direct(t[conv], cfg, sh, f.cube(in), w, wbytes);
        const int sdp = t.add(NVDLA_DLA_OP_SDP);
        sdp_after_conv(t[sdp], sh, o.cube(out_e), 0);
        t.fuse(conv, sdp);
    }));
    return out;
}

std::vector<uint8_t> task_input(const BuiltTask& task, uint32_t version) {
    fuzz::DlaTaskInput in;
    const auto configs = hw_configs();
    for (size_t i = 0; i < configs.size(); ++i)
        if (std::string(configs[i].name) == task.config) in.config = static_cast<uint8_t>(i);
    in.minor = static_cast<uint8_t>(NVDLA_DLA_VERSION_MINOR(version));
    in.sub = static_cast<uint8_t>(NVDLA_DLA_VERSION_SUB(version));
    in.entries = task.entries;
    return fuzz::encode_dla_task_input(in);
}

// A loadable with the task: descriptor entries as SET memories, data entries allocated.
std::vector<std::byte> task_loadable(const BuiltTask& task, uint32_t version) {
    static const uint32_t kSubInterface[kFirstData] = {
        runtime::kSubInterfaceAddressList0, runtime::kSubInterfaceOperations,
        runtime::kSubInterfaceSurfaces, runtime::kSubInterfaceDependencies,
        runtime::kSubInterfaceLuts};
    runtime::Loadable l;
    l.version = {0, 7, 0};
    const runtime::BlobVersion v{static_cast<uint8_t>(NVDLA_DLA_VERSION_MAJOR(version)),
                                 static_cast<uint8_t>(NVDLA_DLA_VERSION_MINOR(version)),
                                 static_cast<uint8_t>(NVDLA_DLA_VERSION_SUB(version))};
    runtime::TaskEntry t;
    t.interface = runtime::TaskInterface::Dla1;
    t.instance = -1;
    t.version = v;
    for (size_t i = 0; i < task.entries.size(); ++i) {
        const fuzz::DlaTaskEntry& e = task.entries[i];
        runtime::MemoryEntry m;
        m.domain = e.secondary ? runtime::LoadableDomain::Sram : runtime::LoadableDomain::System;
        m.size = std::max<uint64_t>(e.size, 32);
        m.alignment = 256;
        m.flags = runtime::kMemoryAlloc;
        if (i < static_cast<size_t>(kFirstData) && !e.bytes.empty()) {
            runtime::LoadableBlob blob;
            blob.name = task.name + "-" + std::to_string(i);
            blob.interface = runtime::TaskInterface::Dla1;
            blob.sub_interface = kSubInterface[i];
            blob.version = v;
            blob.data = e.bytes;
            m.flags |= runtime::kMemorySet;
            m.contents.push_back({static_cast<uint32_t>(l.blobs.size()), 0});
            l.blobs.push_back(std::move(blob));
        }
        l.memories.push_back(std::move(m));
        l.addresses.push_back({static_cast<uint16_t>(i), 0, std::max<uint64_t>(e.size, 32)});
        t.addresses.push_back(static_cast<uint16_t>(i));
    }
    l.tasks.push_back(t);
    l.submits.push_back({{0}});
    std::vector<std::byte> bytes = runtime::serialize_loadable(l);
    nvdla::Result<runtime::Loadable> check = runtime::parse_loadable(bytes);
    if (!check) {
        std::fprintf(stderr, "%s: the seed loadable does not parse: %s\n", task.name.c_str(),
                     check.message().c_str());
        std::exit(1);
    }
    return bytes;
}

// conv -> CPU softmax over h -> conv -> CPU add of a broadcast CPU reduce mean -> CPU
// layer norm with gamma and beta, fp16 on nv_full and int8 on nv_small.
std::vector<std::byte> cpu_task_loadable(const char* config, Precision precision) {
    using namespace nvdla::builder;
    builder::Network net("cpu_tasks");
    Tensor x = net.input("data", {1, 3, 4, 4});
    ConvolutionDesc c;
    c.out_channels = 4;
    c.kernel_h = c.kernel_w = 3;
    c.pad_top = c.pad_left = c.pad_bottom = c.pad_right = 1;
    const std::vector<float> w1(4 * 3 * 9, 0.1f), w2(4 * 4 * 9, -0.05f);
    auto cpu = [&](std::vector<Tensor> in, CpuOpKind kind, std::vector<int64_t> ints,
                   std::vector<float> floats, const char* name) {
        CpuOpDesc d;
        d.kind = kind;
        d.ints = std::move(ints);
        d.floats = std::move(floats);
        return net.cpu_op(in, d, name);
    };
    x = net.convolution(x, c, w1, {}, "conv1");
    x = cpu({x}, CpuOpKind::Softmax, {2}, {}, "softmax_h");
    x = net.convolution(x, c, w2, {}, "conv2");
    Tensor mean = cpu({x}, CpuOpKind::ReduceMean, {2, 3}, {}, "mean");
    x = cpu({x, mean}, CpuOpKind::Add, {}, {}, "add");
    x = cpu({x}, CpuOpKind::LayerNorm, {3},
            {1e-5f, 1.0f, 0.5f, 2.0f, 1.5f, 0.0f, 0.1f, -0.1f, 0.2f}, "norm");
    net.output(x, "out");
    Calibration cal;
    for (Tensor t : {Tensor{0}, Tensor{1}, Tensor{2}, Tensor{3}, Tensor{4}, Tensor{5}, Tensor{6}})
        cal.set_range(t, 4.0f);
    BuildOptions opt;
    opt.config = config;
    opt.precision = precision;
    opt.calibration = &cal;
    Result<CompiledNetwork> built = build(net, opt);
    if (!built) {
        std::fprintf(stderr, "cpu_tasks: %s\n", built.message().c_str());
        std::exit(1);
    }
    return built->loadable;
}

// The EMU tasks of a loadable as nvdla_fuzz_cpu_task inputs: entry count - 1, the lengths,
// then each address-list entry's bytes (SET contents, zeros elsewhere).
void cpu_task_seeds(const fs::path& dir, const std::string& name,
                    const std::vector<std::byte>& bytes) {
    Result<runtime::Loadable> l = runtime::parse_loadable(bytes);
    if (!l) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), l.message().c_str());
        std::exit(1);
    }
    int index = 0;
    for (const runtime::TaskEntry& task : l->tasks) {
        if (task.interface != runtime::TaskInterface::Emu1 || task.addresses.size() > 8) continue;
        std::vector<std::vector<std::byte>> entries;
        for (uint16_t id : task.addresses) {
            const runtime::AddressEntry& a = l->addresses[id];
            const runtime::MemoryEntry& m = l->memories[a.mem_id];
            std::vector<std::byte> e(std::min<uint64_t>(m.size - a.offset, 65535));
            for (const runtime::MemoryContent& c : m.contents) {
                const std::vector<std::byte>& data = l->blobs[c.blob].data;
                for (size_t i = 0; i < data.size(); ++i)
                    if (c.offset + i >= a.offset && c.offset + i - a.offset < e.size())
                        e[c.offset + i - a.offset] = data[i];
            }
            entries.push_back(std::move(e));
        }
        std::vector<std::byte> input = {std::byte(entries.size() - 1)};
        for (size_t i = 0; i + 1 < entries.size(); ++i) {
            input.push_back(std::byte(entries[i].size() & 0xff));
            input.push_back(std::byte(entries[i].size() >> 8));
        }
        for (const auto& e : entries) input.insert(input.end(), e.begin(), e.end());
        write_file(dir / (name + "_task" + std::to_string(index++)), input);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <corpus directory, e.g. tests/fuzz/corpus>\n", argv[0]);
        return 2;
    }
    const fs::path root = argv[1];
    images(root / "image");
    fs::create_directories(root / "dla_validate");
    fs::create_directories(root / "loadable");
    for (const uint32_t version : {kV12, kV10}) {
        const std::string suffix = version == kV12 ? "_v12" : "_v10";
        for (const BuiltTask& task : tasks(version)) {
            const std::vector<uint8_t> input = task_input(task, version);
            write_file(root / "dla_validate" / (task.name + suffix), input.data(), input.size());
            write_file(root / "loadable" / (task.name + suffix + ".nvdla"),
                       task_loadable(task, version));
        }
    }
    fs::create_directories(root / "cpu_task");
    const std::vector<std::byte> fp16 = cpu_task_loadable("nv_full", Precision::Fp16);
    const std::vector<std::byte> int8 = cpu_task_loadable("nv_small", Precision::Int8);
    write_file(root / "loadable" / "cpu_tasks_fp16.nvdla", fp16);
    write_file(root / "loadable" / "cpu_tasks_int8.nvdla", int8);
    cpu_task_seeds(root / "cpu_task", "fp16", fp16);
    cpu_task_seeds(root / "cpu_task", "int8", int8);
    return 0;
}
