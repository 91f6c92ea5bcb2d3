// RUBIK driven through its registers as kmd/firmware/rubik.c programs them. Every expected
// image is computed by a reference written here per output element (index formulas from the
// programming guide and the RTL's address sequencer), over the whole memory region, so bytes
// written outside the destination are caught too.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "nvdla/emu/device.hpp"
#include "nvdla/hw/register_map.hpp"
#include "test_support.hpp"

namespace nvdla::emu {
namespace {

constexpr uint64_t kDram = 0x80000000;
constexpr uint64_t kSram = 0x50000000;
constexpr uint64_t kDramBytes = 0x40000;
constexpr uint64_t kSramBytes = 0x10000;
constexpr uint32_t kContract = 0, kSplit = 1, kMerge = 2;
constexpr uint32_t kInt8 = 0, kInt16 = 1, kFp16 = 2;

// One operation in software terms: sizes as counts, addresses and strides in bytes.
struct Rbk {
    uint32_t mode = kContract, precision = kInt16;
    uint32_t width = 1, height = 1, in_channels = 16, out_channels = 16;
    uint64_t src = kDram, dst = kDram + 0x20000;
    bool src_dram = true, dst_dram = true;
    uint32_t in_line = 0, in_surface = 0, in_planar = 0;
    uint32_t out_line = 0, out_surface = 0, out_planar = 0;
    uint32_t contract0 = 0, contract1 = 0;
    uint32_t x_stride = 1, y_stride = 1;

    uint32_t bpe() const { return precision == kInt8 ? 1 : 2; }
    uint32_t per_atom() const { return 32 / bpe(); }
};

// Whole-region comparison that names the first differing byte instead of printing both.
::testing::AssertionResult same_bytes(const std::vector<uint8_t>& got,
                                      const std::vector<uint8_t>& want) {
    for (size_t i = 0; i < want.size(); ++i)
        if (got[i] != want[i])
            return ::testing::AssertionFailure() << "byte 0x" << std::hex << i << " is 0x"
                                                 << int(got[i]) << ", expected 0x" << int(want[i]);
    return ::testing::AssertionSuccess();
}

class RubikTest : public ::testing::Test {
  protected:
    RubikTest() : device_(test::nv_full(), memory_) {
        auto rng = test::rng_for_test();
        dram_ = memory_.add_region(MemoryPort::Primary, kDram, kDramBytes);
        sram_ = memory_.add_region(MemoryPort::Secondary, kSram, kSramBytes);
        auto bytes = test::random_vector<uint8_t>(rng, kDramBytes, 0, 255);
        std::memcpy(dram_, bytes.data(), kDramBytes);
        bytes = test::random_vector<uint8_t>(rng, kSramBytes, 0, 255);
        std::memcpy(sram_, bytes.data(), kSramBytes);
    }

    void set(const char* unit, const char* reg, uint32_t value) {
        const auto& map = hw::RegisterMap::get(NVDLA_REG_MAP_FULL);
        device_.write_register(map.find(unit, reg)->address, value);
    }
    uint32_t get(const char* unit, const char* reg) {
        const auto& map = hw::RegisterMap::get(NVDLA_REG_MAP_FULL);
        return device_.read_register(map.find(unit, reg)->address);
    }
    void set(const char* reg, uint32_t value) { set("RBK", reg, value); }

    // The firmware's programming, then D_OP_ENABLE in the group S_POINTER selects.
    void run(const Rbk& op, int group = 0) {
        set("S_POINTER", uint32_t(group));
        set("D_MISC_CFG", op.mode | op.precision << 8);
        set("D_DAIN_RAM_TYPE", op.src_dram ? 1 : 0);
        set("D_DATAIN_SIZE_0", (op.width - 1) | (op.height - 1) << 16);
        set("D_DATAIN_SIZE_1", op.in_channels - 1);
        set("D_DAIN_ADDR_LOW", uint32_t(op.src));
        set("D_DAIN_ADDR_HIGH", uint32_t(op.src >> 32));
        set("D_DAIN_LINE_STRIDE", op.in_line);
        set("D_DAIN_SURF_STRIDE", op.in_surface);
        set("D_DAIN_PLANAR_STRIDE", op.in_planar);
        set("D_DAOUT_RAM_TYPE", op.dst_dram ? 1 : 0);
        set("D_DATAOUT_SIZE_1", op.out_channels - 1);
        set("D_DAOUT_ADDR_LOW", uint32_t(op.dst));
        set("D_DAOUT_ADDR_HIGH", uint32_t(op.dst >> 32));
        set("D_DAOUT_LINE_STRIDE", op.out_line);
        set("D_DAOUT_SURF_STRIDE", op.out_surface);
        set("D_DAOUT_PLANAR_STRIDE", op.out_planar);
        set("D_CONTRACT_STRIDE_0", op.contract0);
        set("D_CONTRACT_STRIDE_1", op.contract1);
        set("D_DECONV_STRIDE", (op.x_stride - 1) | (op.y_stride - 1) << 16);
        set("D_OP_ENABLE", 1);
    }

    static std::vector<uint8_t> image(const std::byte* p, uint64_t size) {
        const auto* b = reinterpret_cast<const uint8_t*>(p);
        return std::vector<uint8_t>(b, b + size);
    }
    std::vector<uint8_t> dram() const { return image(dram_, kDramBytes); }
    std::vector<uint8_t> sram() const { return image(sram_, kSramBytes); }

    // Memory images before and after an operation: the reference reads `before`, writes
    // `after` (its destination is never its source in these tests).
    struct Images {
        std::vector<uint8_t> dram, sram;
        std::vector<uint8_t>& of(bool is_dram) { return is_dram ? dram : sram; }
        static uint64_t base(bool is_dram) { return is_dram ? kDram : kSram; }
    };
    Images snapshot() const { return {dram(), sram()}; }

    // out[s][y][x] = in[kernel (y % Y) * X + x % X][s][y / Y][x / X], one 32-byte atom each.
    static Images contract_reference(const Rbk& op, Images before) {
        Images after = before;
        const auto& in = before.of(op.src_dram);
        auto& out = after.of(op.dst_dram);
        const uint64_t src = op.src - Images::base(op.src_dram);
        const uint64_t dst = op.dst - Images::base(op.dst_dram);
        const uint32_t surfaces = (op.out_channels * op.bpe() + 31) / 32;
        for (uint32_t s = 0; s < surfaces; ++s)
            for (uint32_t y = 0; y < op.height * op.y_stride; ++y)
                for (uint32_t x = 0; x < op.width * op.x_stride; ++x) {
                    const uint32_t kernel = (y % op.y_stride) * op.x_stride + x % op.x_stride;
                    const uint64_t from = src + s * op.in_surface + (y / op.y_stride) * op.in_line +
                                          kernel * op.contract0 + (x / op.x_stride) * 32;
                    const uint64_t to = dst + s * op.out_surface + y * op.out_line + x * 32;
                    std::memcpy(&out[to], &in[from], 32);
                }
        return after;
    }

    // plane[c][h][px] = in[c / per_atom][h][px].channel(c % per_atom); a plane line is
    // written to the next 32 bytes with zeros past the last pixel.
    static Images split_reference(const Rbk& op, Images before) {
        Images after = before;
        const auto& in = before.of(op.src_dram);
        auto& out = after.of(op.dst_dram);
        const uint64_t src = op.src - Images::base(op.src_dram);
        const uint64_t dst = op.dst - Images::base(op.dst_dram);
        const uint32_t bpe = op.bpe(), line_pixels = (op.width * bpe + 31) / 32 * 32 / bpe;
        for (uint32_t c = 0; c < op.in_channels; ++c)
            for (uint32_t h = 0; h < op.height; ++h)
                for (uint32_t px = 0; px < line_pixels; ++px) {
                    const uint64_t to = dst + c * op.out_planar + h * op.out_line + px * bpe;
                    const uint64_t from = src + (c / op.per_atom()) * op.in_surface +
                                          h * op.in_line + px * 32 + (c % op.per_atom()) * bpe;
                    for (uint32_t b = 0; b < bpe; ++b)
                        out[to + b] = px < op.width ? in[from + b] : 0;
                }
        return after;
    }

    // out[s][h][w].channel(j) = plane[s * per_atom + j][h][w], zero past the last plane.
    static Images merge_reference(const Rbk& op, Images before) {
        Images after = before;
        const auto& in = before.of(op.src_dram);
        auto& out = after.of(op.dst_dram);
        const uint64_t src = op.src - Images::base(op.src_dram);
        const uint64_t dst = op.dst - Images::base(op.dst_dram);
        const uint32_t bpe = op.bpe(),
                       surfaces = (op.in_channels + op.per_atom() - 1) / op.per_atom();
        for (uint32_t s = 0; s < surfaces; ++s)
            for (uint32_t h = 0; h < op.height; ++h)
                for (uint32_t w = 0; w < op.width; ++w)
                    for (uint32_t j = 0; j < op.per_atom(); ++j) {
                        const uint32_t c = s * op.per_atom() + j;
                        const uint64_t to =
                            dst + s * op.out_surface + h * op.out_line + w * 32 + j * bpe;
                        const uint64_t from = src + c * op.in_planar + h * op.in_line + w * bpe;
                        for (uint32_t b = 0; b < bpe; ++b)
                            out[to + b] = c < op.in_channels ? in[from + b] : 0;
                    }
        return after;
    }

    void expect_memory(const Images& want) {
        EXPECT_TRUE(same_bytes(dram(), want.dram));
        EXPECT_TRUE(same_bytes(sram(), want.sram));
    }
    void expect_clean_completion(int group = 0) {
        EXPECT_EQ(device_.stats().programming_errors, 0u) << device_.stats().last_error;
        EXPECT_EQ(device_.stats().faults, 0u) << device_.stats().last_error;
        EXPECT_EQ(get("GLB", "S_INTR_STATUS"), 1u << (8 + group));
        EXPECT_EQ(get("RBK", "D_OP_ENABLE"), 0u);
    }

    FlatMemory memory_;
    Device device_;
    std::byte* dram_ = nullptr;
    std::byte* sram_ = nullptr;
};

// A contract operation programmed as the firmware does: CONTRACT_STRIDE_0 is the input
// surfaces of one kernel position, CONTRACT_STRIDE_1 is Y output lines.
Rbk contract_op(uint32_t precision, uint32_t width, uint32_t height, uint32_t out_channels,
                uint32_t x, uint32_t y, uint32_t line_pad, uint32_t surface_pad) {
    Rbk op;
    op.mode = kContract;
    op.precision = precision;
    op.width = width;
    op.height = height;
    op.x_stride = x;
    op.y_stride = y;
    op.out_channels = out_channels;
    op.in_channels = out_channels * x * y;
    const uint32_t out_surfaces = (out_channels * op.bpe() + 31) / 32;
    op.in_line = width * 32 + line_pad;
    op.in_surface = op.in_line * height + surface_pad;
    op.contract0 = out_surfaces * op.in_surface;
    op.out_line = width * x * 32 + line_pad;
    op.out_surface = op.out_line * height * y + surface_pad;
    op.contract1 = y * op.out_line;
    return op;
}

TEST_F(RubikTest, ContractInt16TwoByTwoWithPaddedStrides) {
    const Rbk op = contract_op(kInt16, 3, 2, 32, 2, 2, 32, 64);  // two output surfaces
    const Images want = contract_reference(op, snapshot());
    run(op);
    expect_memory(want);
    expect_clean_completion();
}

TEST_F(RubikTest, ContractInt8WithXStrideAboveEight) {
    // X > 8 takes the RTL's piecewise write path; W = 11 spans two 8-atom read pieces.
    const Rbk op = contract_op(kInt8, 11, 2, 64, 10, 1, 0, 96);
    const Images want = contract_reference(op, snapshot());
    run(op);
    expect_memory(want);
    expect_clean_completion();
}

TEST_F(RubikTest, ContractOfTheRegressionLoadable) {
    // RBK_L0_0: INT16 8x8x640 contracted by 10x4 into 80x32x16.
    const Rbk op = contract_op(kInt16, 8, 8, 16, 10, 4, 0, 0);
    ASSERT_EQ(op.in_channels, 640u);
    const Images want = contract_reference(op, snapshot());
    run(op);
    expect_memory(want);
    expect_clean_completion();
}

TEST_F(RubikTest, ContractStride0PlacesKernelPositionsAnywhere) {
    // The kernel positions' inputs need not follow each other: CONTRACT_STRIDE_0 alone
    // separates them, DAIN_SURF_STRIDE the surfaces within one.
    Rbk op = contract_op(kFp16, 2, 3, 32, 3, 2, 0, 0);
    op.contract0 = 0x1000;  // six kernel positions of two 192-byte surfaces
    const Images want = contract_reference(op, snapshot());
    run(op);
    expect_memory(want);
    expect_clean_completion();
}

TEST_F(RubikTest, ContractStride1IsNotUsedByTheHardware) {
    // The RTL only monitors CONTRACT_STRIDE_1; output lines step by DAOUT_LINE_STRIDE.
    Rbk op = contract_op(kInt16, 2, 2, 16, 2, 3, 32, 0);
    op.contract1 = 0x20;
    const Images want = contract_reference(op, snapshot());
    run(op);
    expect_memory(want);
    expect_clean_completion();
}

TEST_F(RubikTest, ContractBetweenSecondaryAndPrimaryMemory) {
    Rbk op = contract_op(kInt8, 4, 2, 32, 2, 1, 0, 0);
    op.src = kSram + 0x100;
    op.src_dram = false;
    const Images want = contract_reference(op, snapshot());
    run(op);
    expect_memory(want);
    expect_clean_completion();
}

Rbk split_op(uint32_t precision, uint32_t width, uint32_t height, uint32_t channels) {
    Rbk op;
    op.mode = kSplit;
    op.precision = precision;
    op.width = width;
    op.height = height;
    op.in_channels = op.out_channels = channels;
    op.in_line = width * 32 + 32;
    op.in_surface = op.in_line * height + 64;
    op.out_line = (width * op.bpe() + 31) / 32 * 32 + 64;  // even in 32-byte units
    op.out_planar = op.out_line * height + 64;
    return op;
}

Rbk merge_op(uint32_t precision, uint32_t width, uint32_t height, uint32_t channels) {
    Rbk op = split_op(precision, width, height, channels);
    op.mode = kMerge;
    std::swap(op.in_line, op.out_line);
    op.in_planar = op.out_planar;
    op.out_planar = 0;
    op.out_surface = op.in_surface;
    op.in_surface = 0;
    return op;
}

TEST_F(RubikTest, SplitInt8PartialSurfaceAndPaddedPlaneLines) {
    // 40 channels: a full surface of 32 planes and one of 8; 37 pixels pad to 64 bytes.
    const Rbk op = split_op(kInt8, 37, 3, 40);
    const Images want = split_reference(op, snapshot());
    run(op);
    expect_memory(want);
    expect_clean_completion();
}

TEST_F(RubikTest, SplitInt16WiderThanOneHardwarePiece) {
    // 70 pixels are two 64-pixel pieces in the hardware; 140 bytes pad to 160.
    const Rbk op = split_op(kInt16, 70, 2, 20);
    const Images want = split_reference(op, snapshot());
    run(op);
    expect_memory(want);
    expect_clean_completion();
}

TEST_F(RubikTest, MergeInt8ZeroesChannelsPastTheLastPlane) {
    const Rbk op = merge_op(kInt8, 37, 3, 40);
    const Images want = merge_reference(op, snapshot());
    run(op);
    expect_memory(want);
    expect_clean_completion();
}

TEST_F(RubikTest, MergeFp16FromSecondaryMemory) {
    Rbk op = merge_op(kFp16, 21, 2, 20);
    op.src = kSram;
    op.src_dram = false;
    const Images want = merge_reference(op, snapshot());
    run(op);
    expect_memory(want);
    expect_clean_completion();
}

TEST_F(RubikTest, SplitThenMergeRestoresTheCube) {
    Rbk split = split_op(kInt16, 9, 2, 32);  // whole surfaces: nothing to zero
    split.dst = kDram + 0x10000;
    Rbk merge = merge_op(kInt16, 9, 2, 32);
    merge.src = split.dst;
    merge.in_line = split.out_line;
    merge.in_planar = split.out_planar;
    merge.dst = kDram + 0x30000;
    merge.out_line = split.in_line;
    merge.out_surface = split.in_surface;
    run(split, 0);
    run(merge, 1);
    const auto mem = dram();
    for (uint32_t s = 0; s < 2; ++s)
        for (uint32_t h = 0; h < 2; ++h) {
            const uint64_t in = s * split.in_surface + h * split.in_line;
            const uint64_t out = 0x30000 + s * merge.out_surface + h * merge.out_line;
            EXPECT_EQ(std::memcmp(&mem[in], &mem[out], 9 * 32), 0)
                << "surface " << s << " line " << h;
        }
    EXPECT_EQ(get("GLB", "S_INTR_STATUS"), 3u << 8);  // both groups
    EXPECT_EQ(device_.stats().operations, 2u);
}

TEST_F(RubikTest, GroupsRunInTurnStartingWithGroupZero) {
    Rbk second = split_op(kInt8, 5, 1, 3);
    second.dst = kDram + 0x30000;
    const Rbk first = split_op(kInt8, 5, 1, 3);
    const Images untouched = snapshot();
    const Images want = split_reference(second, split_reference(first, untouched));
    run(second, 1);  // the consumer pointer is at group 0: group 1 waits for it
    expect_memory(untouched);
    EXPECT_EQ(get("GLB", "S_INTR_STATUS"), 0u);
    run(first, 0);
    expect_memory(want);
    EXPECT_EQ(get("GLB", "S_INTR_STATUS"), 3u << 8);
    EXPECT_EQ(device_.stats().operations, 2u);
}

class RubikErrorTest : public RubikTest {
  protected:
    void expect_refused(const Rbk& op, const char* words) {
        const Images before = snapshot();
        run(op);
        expect_memory(before);
        EXPECT_EQ(device_.stats().programming_errors, 1u);
        EXPECT_NE(device_.stats().last_error.find(words), std::string::npos)
            << device_.stats().last_error;
        EXPECT_EQ(get("GLB", "S_INTR_STATUS"), 1u << 8);  // the operation still completes
    }
};

TEST_F(RubikErrorTest, ModeThreeIsRefused) {
    Rbk op = split_op(kInt8, 4, 1, 4);
    op.mode = 3;
    op.out_channels = 2;  // the mode is what is wrong first
    expect_refused(op, "RUBIK_MODE 3");
}

TEST_F(RubikErrorTest, PrecisionThreeIsRefused) {
    Rbk op = split_op(kInt8, 4, 1, 4);
    op.precision = 3;
    expect_refused(op, "IN_PRECISION 3");
}

TEST_F(RubikErrorTest, SplitWithDifferentChannelCountsIsRefused) {
    Rbk op = split_op(kInt16, 4, 1, 16);
    op.out_channels = 8;
    expect_refused(op, "DATAOUT_CHANNEL (7)");
}

TEST_F(RubikErrorTest, ContractLinesLongerThan8192AtomsAreRefused) {
    Rbk op = contract_op(kInt16, 1024, 1, 16, 9, 1, 0, 0);
    op.dst = kDram;  // nothing may be written anywhere
    expect_refused(op, "9216 atoms");
}

}  // namespace
}  // namespace nvdla::emu
