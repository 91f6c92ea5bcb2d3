// nvdla_fuzz_seeds: turns the DLA tasks of loadables into inputs of the validator fuzzer
// (dla_task_input.hpp), so that it starts from real compiled descriptors. tests/fuzz/run.sh
// runs it over ../shared's regression loadables each time (they are never committed).
//
//   nvdla_fuzz_seeds <loadable or directory>... <output directory>
//
// The configuration is nv_small for loadables whose name contains "_small", else nv_full.
// Only the descriptor entries (the network descriptor and the lists it names) store their
// bytes, up to the last non-zero one: the validator never reads data buffers.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dla_task_input.hpp"
#include "nvdla/hw/dla_interface.h"
#include "nvdla/hw_config.hpp"
#include "runtime/loadable.hpp"

namespace {

namespace fs = std::filesystem;
using nvdla::runtime::Loadable;

uint8_t config_index(const std::string& name) {
    const auto configs = nvdla::hw_configs();
    for (size_t i = 0; i < configs.size(); ++i)
        if (name == configs[i].name) return static_cast<uint8_t>(i);
    return 0;
}

// The bytes of every memory entry after its SET contents are copied in.
std::vector<std::vector<std::byte>> memory_images(const Loadable& l) {
    std::vector<std::vector<std::byte>> out;
    for (const auto& m : l.memories) {
        // Past 64 MiB a memory is not worth seeding; its entries read as zeros.
        std::vector<std::byte> image(m.size <= (64u << 20) ? m.size : 0);
        for (const auto& c : m.contents) {
            const auto& data = l.blobs[c.blob].data;
            if (c.offset >= image.size()) continue;
            const size_t n = std::min<size_t>(data.size(), image.size() - c.offset);
            std::copy_n(data.begin(), n, image.begin() + static_cast<ptrdiff_t>(c.offset));
        }
        out.push_back(std::move(image));
    }
    return out;
}

int convert(const fs::path& path, const fs::path& out_dir) {
    std::ifstream in(path, std::ios::binary);
    const std::string raw((std::istreambuf_iterator<char>(in)), {});
    const auto* first = reinterpret_cast<const std::byte*>(raw.data());
    nvdla::Result<Loadable> parsed = nvdla::runtime::parse_loadable({first, raw.size()});
    if (!parsed) {
        std::fprintf(stderr, "%s: %s (skipped)\n", path.c_str(), parsed.message().c_str());
        return 0;
    }
    const Loadable& l = *parsed;
    const auto images = memory_images(l);
    const std::string stem = path.filename().string();
    const uint8_t config =
        config_index(stem.find("_small") != std::string::npos ? "nv_small" : "nv_full");
    int written = 0;
    for (size_t t = 0; t < l.tasks.size(); ++t) {
        const auto& task = l.tasks[t];
        if (task.interface != nvdla::runtime::TaskInterface::Dla1 || task.addresses.empty() ||
            task.addresses.size() > 64)
            continue;
        nvdla::fuzz::DlaTaskInput input;
        input.config = config;
        input.minor = task.version.minor;
        input.sub = task.version.sub_minor;
        // The entries the network descriptor names hold descriptors.
        std::vector<bool> descriptor(task.addresses.size(), false);
        descriptor[0] = true;
        {
            const auto& a0 = l.addresses[task.addresses[0]];
            const auto& image0 = images[a0.mem_id];
            nvdla_dla_network_desc net{};
            if (a0.offset + sizeof(net) <= image0.size()) {
                std::memcpy(&net, image0.data() + a0.offset, sizeof(net));
                for (int16_t index : {net.operation_desc_index, net.surface_desc_index,
                                      net.dependency_graph_index, net.lut_data_index})
                    if (index >= 0 && size_t(index) < descriptor.size()) descriptor[index] = true;
            }
        }
        for (size_t k = 0; k < task.addresses.size(); ++k) {
            const uint16_t id = task.addresses[k];
            const auto& a = l.addresses[id];
            const auto& m = l.memories[a.mem_id];
            const auto& image = images[a.mem_id];
            const uint64_t size = a.size ? a.size : m.size - a.offset;
            nvdla::fuzz::DlaTaskEntry e;
            e.size = static_cast<uint32_t>(std::min<uint64_t>(size, nvdla::fuzz::kMaxEntrySize));
            e.secondary = m.domain == nvdla::runtime::LoadableDomain::Sram;
            if (descriptor[k] && a.offset < image.size()) {
                const size_t end = std::min<size_t>(image.size(), a.offset + e.size);
                auto from = image.begin() + static_cast<ptrdiff_t>(a.offset);
                auto to = image.begin() + static_cast<ptrdiff_t>(end);
                while (to != from && *(to - 1) == std::byte{0}) --to;
                e.bytes.assign(from, to);
            }
            input.entries.push_back(std::move(e));
        }
        const std::vector<uint8_t> bytes = nvdla::fuzz::encode_dla_task_input(input);
        std::ofstream out(out_dir / (stem + "_task" + std::to_string(t)), std::ios::binary);
        out.write(reinterpret_cast<const char*>(bytes.data()),
                  static_cast<std::streamsize>(bytes.size()));
        ++written;
    }
    return written;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s <loadable or directory>... <output directory>\n", argv[0]);
        return 2;
    }
    const fs::path out_dir = argv[argc - 1];
    fs::create_directories(out_dir);
    int written = 0;
    for (int i = 1; i < argc - 1; ++i) {
        const fs::path p = argv[i];
        if (fs::is_directory(p)) {
            for (const auto& e : fs::recursive_directory_iterator(p))
                if (e.is_regular_file()) written += convert(e.path(), out_dir);
        } else if (fs::is_regular_file(p)) {
            written += convert(p, out_dir);
        }
    }
    std::printf("nvdla_fuzz_seeds: %d DLA task(s) written to %s\n", written, out_dir.c_str());
    return 0;
}
