// Image-input convolutions through the whole Device (CDMA pixel conversion, CSC, CMAC, CACC,
// SDP writing memory) compared byte for byte with what the nvdla/hw nv_full C model wrote for
// the same registers and memory (data/cmodel_image/, README.md there says how they were made).
// Inputs are random from a fixed seed per case, so the programming is rebuilt here exactly.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "conv_test_rig.hpp"
#include "nvdla/formats/pixel.hpp"
#include "nvdla/formats/weights.hpp"
#include "test_paths.hpp"

namespace nvdla::emu::conv_test {
namespace {

struct ImageLayer {
    const char* name;
    PixelFormat format;
    Precision precision;
    uint32_t width, height, kernels, kernel_h, kernel_s;
    uint32_t stride_x, stride_y, pad_left, pad_right, pad_top, pad_bottom;
    uint16_t pad_value;
    bool mean;
    uint16_t mean_values[4];
    bool convert;
    uint32_t cvt_offset;
    uint16_t cvt_scale;
    uint32_t cvt_truncate;
    uint32_t clip;  // CACC truncation (integer)
    uint64_t seed;
    bool sign_override = false;   // PIXEL_SIGN_OVERRIDE: integer elements read as signed
    uint32_t post_extension = 1;  // CSC rows per MAC operation: 1, 2 or 4
};

// The C-model cases: 4-, 1- and packed 10-bit-component int8 images, unsigned and signed
// 16-bit ones, fp16 images and an 8-bit one converted to fp16, post-extension by 2 and 4.
// clang-format off
constexpr ImageLayer kLayers[] = {
    // name, format, precision, W, H, K, R, S, stride x/y, pad l/r/t/b, pad value,
    // mean on, mean RY/GU/BV/AX, convertor on, offset, scale, truncate, CACC clip, seed, signed
    {"a8b8g8r8_int8", PixelFormat::A8B8G8R8, Precision::Int8, 10, 6, 8, 3, 4, 2, 1, 2, 1, 1, 0,
     0x10fb, true, {100, 0xffec, 7, 255}, true, 0, 3, 2, 2, 1},
    {"r8_int8", PixelFormat::R8, Precision::Int8, 19, 7, 16, 3, 3, 1, 2, 1, 1, 1, 1,
     0x0005, true, {128, 0, 0, 0}, true, 0, 1, 0, 0, 2},
    {"a2b10g10r10_int8", PixelFormat::A2B10G10R10, Precision::Int8, 7, 5, 8, 2, 2, 1, 1, 0, 1, 0, 1,
     0x0000, true, {512, 300, 700, 1}, true, 0, 5, 4, 3, 3},
    {"r16_int8", PixelFormat::R16, Precision::Int8, 12, 6, 8, 3, 5, 2, 2, 2, 2, 0, 2,
     0x00f0, false, {0, 0, 0, 0}, true, 0xff80, 1, 8, 1, 4},
    {"r16_i_signed_int8", PixelFormat::R16_I, Precision::Int8, 11, 5, 8, 2, 4, 3, 1, 1, 2, 1, 0,
     0x0081, true, {0xff00, 0, 0, 0}, true, 0, 3, 9, 2, 6, true},
    {"r16_f_fp16", PixelFormat::R16_F, Precision::Fp16, 9, 6, 8, 3, 3, 1, 1, 1, 1, 1, 1,
     0x3c00, false, {0, 0, 0, 0}, false, 0, 1, 0, 0, 5},
    {"a16b16g16r16_f_fp16", PixelFormat::A16B16G16R16_F, Precision::Fp16, 6, 5, 16, 2, 3, 2, 1,
     1, 2, 0, 1, 0xbc00, false, {0, 0, 0, 0}, false, 0, 1, 0, 0, 7},
    {"a8b8g8r8_to_fp16", PixelFormat::A8B8G8R8, Precision::Fp16, 8, 5, 8, 3, 2, 1, 1, 1, 0, 1, 1,
     0x4000, true, {128, 64, 0xff9c, 0}, true, 0, 0xfffd, 1, 0, 8},
    {"x8b8g8r8_post2_int8", PixelFormat::X8B8G8R8, Precision::Int8, 12, 8, 8, 5, 4, 2, 1, 2, 1,
     1, 0, 0x00fe, true, {30, 60, 90, 0}, true, 0, 2, 1, 2, 9, false, 2},
    {"a8b8g8r8_post4_int8", PixelFormat::A8B8G8R8, Precision::Int8, 9, 9, 8, 6, 2, 1, 1, 0, 0, 0, 0,
     0x0000, false, {0, 0, 0, 0}, true, 100, 1, 0, 3, 10, false, 4},
};
// clang-format on

void PrintTo(const ImageLayer& l, std::ostream* os) {
    *os << l.name;
}

constexpr uint64_t kImageBase = kDataBase;

uint32_t pixel_channels(PixelFormat f) {
    return pixel_format_info(f).channels;
}

// fp16 bits of magnitude 2^(low - 15) .. 2^(high - 15), either sign.
uint16_t random_half(std::mt19937_64& rng, uint32_t low, uint32_t high) {
    const uint64_t r = rng();
    const auto exponent = static_cast<uint32_t>(low + (r >> 20) % (high - low + 1));
    return static_cast<uint16_t>((r >> 40 & 1) << 15 | exponent << 10 | (r & 0x3ff));
}

struct Region {
    uint64_t address;
    std::vector<uint8_t> bytes;
};

// One layer's programming: registers in the order software writes them, inputs, output.
struct Program {
    std::vector<std::pair<uint32_t, uint32_t>> writes;
    std::vector<Region> inputs;
    uint64_t out_address = kOutBase, out_bytes = 0;
};

Program make_program(const ImageLayer& l) {
    const HwConfig& cfg = test::config("nv_full");
    const auto& map = hw::RegisterMap::get(cfg.reg_map);
    Program p;
    auto set = [&](const char* unit, const char* reg, uint32_t value) {
        const hw::RegisterInfo* r = map.find(unit, reg);
        EXPECT_NE(r, nullptr) << unit << "." << reg;
        if (r) p.writes.emplace_back(r->address, value);
    };
    std::mt19937_64 rng(l.seed);
    const uint32_t channels = pixel_channels(l.format);
    const uint32_t bpe = bytes_per_element(l.precision);
    const uint32_t depth = l.kernel_s * channels;
    const uint32_t padded_elements = (l.pad_left + l.width + l.pad_right) * channels;
    const uint32_t out_w = (padded_elements - depth) / (l.stride_x * channels) + 1;
    const uint32_t out_h = (l.pad_top + l.height + l.pad_bottom - l.kernel_h) / l.stride_y + 1;

    const PixelSurface s = *dense_pixel_surface(cfg, l.format, l.width, l.height);
    Region image{kImageBase, std::vector<uint8_t>(*pixel_surface_bytes(cfg, s))};
    if (l.precision == Precision::Fp16)
        for (size_t i = 0; i + 1 < image.bytes.size(); i += 2)
            put16(&image.bytes[i], random_half(rng, 12, 16));
    else
        for (uint8_t& b : image.bytes) b = static_cast<uint8_t>(rng());
    // Kernels [k][r][s * channels + c], pre-extended: without post-extension a direct surface
    // 1 wide, with it the formats library's image layout.
    std::vector<int32_t> kernels(size_t(l.kernels) * l.kernel_h * depth);
    for (int32_t& w : kernels)
        w = l.precision == Precision::Fp16 ? int32_t(random_half(rng, 10, 14))
                                           : int32_t(static_cast<int8_t>(rng()));
    Region weights{kWeightBase, {}};
    if (l.post_extension == 1) {
        weights.bytes =
            dc_weight_surface(cfg, l.precision, l.kernels, depth, l.kernel_h, 1,
                              [&](uint32_t k, uint32_t c, uint32_t r, uint32_t) {
                                  return kernels[(size_t(k) * l.kernel_h + r) * depth + c];
                              });
    } else {
        EXPECT_EQ(l.precision, Precision::Int8);
        WeightFormat f{WeightKind::Image, Precision::Int8};
        f.image_channels = channels;
        f.post_extension = l.post_extension;
        f.stride_x = l.stride_x;
        f.stride_y = l.stride_y;
        const Dims4 dims{l.kernels, channels, l.kernel_h, l.kernel_s};
        const auto layout = make_weight_layout(cfg, f, dims);
        EXPECT_TRUE(layout) << layout.message();
        std::vector<int8_t> krsc(kernels.size());
        for (size_t i = 0; i < krsc.size(); ++i) krsc[i] = static_cast<int8_t>(kernels[i]);
        weights.bytes.assign(layout->size_bytes(), 0);
        EXPECT_TRUE(pack_weights(
            {krsc.data(), krsc.size(), HostType::Int8, HostLayout::NHWC, dims}, *layout,
            {reinterpret_cast<std::byte*>(weights.bytes.data()), weights.bytes.size()}));
    }
    const auto weight_bytes = static_cast<uint32_t>(weights.bytes.size());

    const uint32_t pr = static_cast<uint32_t>(l.precision);
    const uint32_t size = (l.height - 1) << 16 | (l.width - 1);
    const uint32_t out_size = (out_h - 1) << 16 | (out_w - 1);
    const uint32_t entry = cbuf_geometry(cfg).entry_bytes;
    const uint32_t entries = (padded_elements * bpe + entry - 1) / entry;
    const uint32_t data_banks = (entries * l.height + cbuf_geometry(cfg).entries_per_bank - 1) /
                                cbuf_geometry(cfg).entries_per_bank;
    const uint32_t bank = (cfg.cbuf_banks - data_banks - 1) << 16 | (data_banks - 1);

    set("CACC", "D_MISC_CFG", pr << 12);
    set("CACC", "D_DATAOUT_SIZE_0", out_size);
    set("CACC", "D_DATAOUT_SIZE_1", l.kernels - 1);
    set("CACC", "D_CLIP_CFG", l.clip);
    set("CMAC_A", "D_MISC_CFG", pr << 12);
    set("CMAC_B", "D_MISC_CFG", pr << 12);
    set("CSC", "D_MISC_CFG", pr << 8 | pr << 12);
    set("CSC", "D_DATAIN_FORMAT", 1);
    set("CSC", "D_DATAIN_SIZE_EXT_0", size);
    set("CSC", "D_DATAIN_SIZE_EXT_1", channels - 1);
    set("CSC", "D_POST_Y_EXTENSION", l.post_extension == 4 ? 2 : l.post_extension - 1);
    set("CSC", "D_ENTRY_PER_SLICE", entries - 1);
    set("CSC", "D_WEIGHT_FORMAT", 0);
    set("CSC", "D_WEIGHT_SIZE_EXT_0", (l.kernel_h - 1) << 16);
    set("CSC", "D_WEIGHT_SIZE_EXT_1", (l.kernels - 1) << 16 | (depth - 1));
    set("CSC", "D_WEIGHT_BYTES", weight_bytes);
    set("CSC", "D_DATAOUT_SIZE_0", out_size);
    set("CSC", "D_DATAOUT_SIZE_1", l.kernels - 1);
    set("CSC", "D_ATOMICS", out_w * out_h - 1);
    set("CSC", "D_RELEASE", l.height - 1);
    set("CSC", "D_CONV_STRIDE_EXT", (l.stride_y - 1) << 16 | (l.stride_x - 1));
    set("CSC", "D_ZERO_PADDING", l.pad_top << 16 | l.pad_left);
    set("CSC", "D_ZERO_PADDING_VALUE", l.pad_value);
    set("CSC", "D_BANK", bank);
    // IN_PRECISION is the format's element size (the C model's 16-bit-to-int8 path needs it).
    const auto in_pr = static_cast<uint32_t>(pixel_format_info(l.format).input_precision);
    set("CDMA", "D_MISC_CFG", in_pr << 8 | pr << 12);
    set("CDMA", "D_DATAIN_FORMAT",
        1 | static_cast<uint32_t>(l.format) << 8 | uint32_t(l.sign_override) << 20);
    set("CDMA", "D_DATAIN_SIZE_0", size);
    set("CDMA", "D_DATAIN_SIZE_1", channels - 1);
    set("CDMA", "D_DATAIN_SIZE_EXT_0", size);
    set("CDMA", "D_PIXEL_OFFSET", 0);
    set("CDMA", "D_DAIN_RAM_TYPE", 1);
    set("CDMA", "D_DAIN_ADDR_HIGH_0", static_cast<uint32_t>(kImageBase >> 32));
    set("CDMA", "D_DAIN_ADDR_LOW_0", static_cast<uint32_t>(kImageBase));
    set("CDMA", "D_LINE_STRIDE", static_cast<uint32_t>(s.planes[0].line_stride));
    set("CDMA", "D_DAIN_MAP", 0);
    set("CDMA", "D_BATCH_NUMBER", 0);
    set("CDMA", "D_ENTRY_PER_SLICE", entries - 1);
    set("CDMA", "D_FETCH_GRAIN", 0);
    set("CDMA", "D_WEIGHT_FORMAT", 0);
    set("CDMA", "D_WEIGHT_SIZE_0", l.kernel_h * depth * bpe - 1);
    set("CDMA", "D_WEIGHT_SIZE_1", l.kernels - 1);
    set("CDMA", "D_WEIGHT_RAM_TYPE", 1);
    set("CDMA", "D_WEIGHT_ADDR_HIGH", static_cast<uint32_t>(kWeightBase >> 32));
    set("CDMA", "D_WEIGHT_ADDR_LOW", static_cast<uint32_t>(kWeightBase));
    set("CDMA", "D_WEIGHT_BYTES", weight_bytes);
    set("CDMA", "D_MEAN_FORMAT", l.mean ? 1 : 0);
    set("CDMA", "D_MEAN_GLOBAL_0", l.mean_values[0] | uint32_t(l.mean_values[1]) << 16);
    set("CDMA", "D_MEAN_GLOBAL_1", l.mean_values[2] | uint32_t(l.mean_values[3]) << 16);
    set("CDMA", "D_CVT_CFG", (l.convert ? 1 : 0) | l.cvt_truncate << 4);
    set("CDMA", "D_CVT_OFFSET", l.cvt_offset);
    set("CDMA", "D_CVT_SCALE", l.cvt_scale);
    set("CDMA", "D_CONV_STRIDE", (l.stride_y - 1) << 16 | (l.stride_x - 1));
    set("CDMA", "D_ZERO_PADDING",
        l.pad_bottom << 24 | l.pad_top << 16 | l.pad_right << 8 | l.pad_left);
    set("CDMA", "D_ZERO_PADDING_VALUE", l.pad_value);
    set("CDMA", "D_BANK", bank);

    // SDP passes CACC's values through to memory: int16 for int8 layers, fp16 for fp16.
    // Int8 layers deliver whole 32-channel groups, written as two int16 surfaces.
    const uint32_t out_channels =
        l.precision == Precision::Int8 ? (l.kernels + 31) / 32 * 32 : l.kernels;
    const CubeLayout out{cfg.atom_bytes, 2, out_w, out_h, out_channels};
    const uint32_t out_precision = l.precision == Precision::Fp16 ? 2 : 1;
    set("SDP", "D_DATA_CUBE_WIDTH", out_w - 1);
    set("SDP", "D_DATA_CUBE_HEIGHT", out_h - 1);
    set("SDP", "D_DATA_CUBE_CHANNEL", l.kernels - 1);
    set("SDP", "D_DST_BASE_ADDR_HIGH", static_cast<uint32_t>(kOutBase >> 32));
    set("SDP", "D_DST_BASE_ADDR_LOW", static_cast<uint32_t>(kOutBase));
    set("SDP", "D_DST_LINE_STRIDE", static_cast<uint32_t>(out.line()));
    set("SDP", "D_DST_SURFACE_STRIDE", static_cast<uint32_t>(out.surface()));
    set("SDP", "D_DP_BS_CFG", 1);
    set("SDP", "D_DP_BN_CFG", 1);
    set("SDP", "D_DP_EW_CFG", 1);
    set("SDP", "D_FEATURE_MODE_CFG", 1);
    set("SDP", "D_DST_DMA_CFG", 1);
    set("SDP", "D_DATA_FORMAT", pr | out_precision << 2);
    set("SDP", "D_CVT_OFFSET", 0);
    set("SDP", "D_CVT_SCALE", 1);
    set("SDP", "D_CVT_SHIFT", 0);
    for (const char* unit : {"SDP", "CACC", "CMAC_A", "CMAC_B", "CSC", "CDMA"})
        set(unit, "D_OP_ENABLE", 1);

    p.inputs.push_back(std::move(image));
    p.inputs.push_back(std::move(weights));
    p.out_bytes = out.batch();
    return p;
}

// What the Device writes for the program.
std::vector<uint8_t> run_on_device(const Program& p, DeviceStats& stats) {
    const HwConfig& cfg = test::config("nv_full");
    FlatMemory memory;
    Device device(cfg, memory);
    for (const Region& r : p.inputs)
        std::memcpy(memory.add_region(MemoryPort::Primary, r.address, r.bytes.size()),
                    r.bytes.data(), r.bytes.size());
    auto* out = reinterpret_cast<uint8_t*>(
        memory.add_region(MemoryPort::Primary, p.out_address, p.out_bytes));
    for (auto [address, value] : p.writes) device.write_register(address, value);
    const auto& map = hw::RegisterMap::get(cfg.reg_map);
    const uint32_t status = device.read_register(map.find("GLB", "S_INTR_STATUS")->address);
    EXPECT_EQ(status & (1u << 16 | 1u << 18 | 1u << 20 | 1u), 1u << 16 | 1u << 18 | 1u << 20 | 1u)
        << std::hex << status;  // CDMA data, CDMA weights, CACC and SDP done
    stats = device.stats();
    return {out, out + p.out_bytes};
}

std::vector<uint8_t> cmodel_output(const char* name) {
    std::ifstream in(
        std::string(nvdla::test::tests_source_dir()) + "/emu/data/cmodel_image/" + name + ".bin",
        std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

class ConvImageCModel : public ::testing::TestWithParam<ImageLayer> {};

TEST_P(ConvImageCModel, DeviceWritesTheCModelsBytes) {
    const ImageLayer& l = GetParam();
    const Program p = make_program(l);
    DeviceStats stats;
    const std::vector<uint8_t> got = run_on_device(p, stats);
    ASSERT_EQ(stats.programming_errors, 0u) << stats.last_error;
    ASSERT_EQ(stats.faults, 0u) << stats.last_error;
    const std::vector<uint8_t> want = cmodel_output(l.name);
    ASSERT_EQ(want.size(), got.size()) << "data/cmodel_image/" << l.name << ".bin";
    size_t differ = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && differ++ < 5)
            ADD_FAILURE() << "byte " << i << ": emulator " << int(got[i]) << ", C model "
                          << int(want[i]);
    EXPECT_EQ(differ, 0u) << "of " << got.size() << " bytes";
    // The outputs are not trivial: most of them differ from the first.
    size_t distinct = 0;
    for (size_t i = 0; i + 1 < want.size(); i += 2) distinct += want[i] != want[0];
    EXPECT_GT(distinct, want.size() / 8);
}

INSTANTIATE_TEST_SUITE_P(Layers, ConvImageCModel, ::testing::ValuesIn(kLayers),
                         [](const auto& layer) { return std::string(layer.param.name); });

}  // namespace
}  // namespace nvdla::emu::conv_test
