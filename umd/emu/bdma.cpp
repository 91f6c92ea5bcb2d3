// BDMA as the nv_full RTL (vmod/nvdla/bdma) behaves: a CFG_OP write with EN=1 copies the
// CFG_* registers into a 20-slot command FIFO; a CFG_LAUNCH0/1 write with bit 0 set makes
// every command queued since the previous launch one group, which the load/store engines
// copy line by line before the group's done interrupt is raised. CFG_OP and CFG_LAUNCH keep
// the value written (the RTL has no self-clearing bit; the traces read them back as 1).
#include "emu/bdma.hpp"

#include <deque>
#include <string>
#include <vector>

namespace nvdla::emu {
namespace {

// The command FIFO depth (NV_NVDLA_BDMA_csb.v: FREE_SLOT = 20 - csb_fifo_wr_count).
constexpr size_t kSlots = 20;
// A launch is held in the gather stage while the previous one is still being issued; a
// third launch before the first finished is lost (the RTL asserts on it).
constexpr size_t kMaxOutstandingLaunches = 2;
// The store engine keeps only 13 bits of the line and surface repeat numbers
// (NV_NVDLA_BDMA_store.v ld2st_line_repeat_number[12:0]); the load engine keeps 24.
constexpr uint32_t kStoreRepeatLimit = 8191;

// One queued command: the CFG_* registers as they were when CFG_OP.EN was written.
struct Transfer {
    uint64_t src = 0, dst = 0;
    MemoryPort src_port = MemoryPort::Primary, dst_port = MemoryPort::Primary;
    uint32_t line_size = 0;       // CFG_LINE.SIZE: 32-byte units minus one
    uint32_t line_repeat = 0;     // CFG_LINE_REPEAT.NUMBER: lines per surface minus one
    uint32_t surface_repeat = 0;  // CFG_SURF_REPEAT.NUMBER: surfaces minus one
    uint64_t src_line = 0, dst_line = 0, src_surface = 0, dst_surface = 0;  // byte strides
};

struct Launch {
    int group;
    size_t transfers;
};

Transfer capture(Group regs) {
    Transfer t;
    // Address and stride registers hold byte values with the low five bits masked off.
    t.src = Dma::address(regs[NVDLA_BDMA_CFG_SRC_ADDR_HIGH], regs[NVDLA_BDMA_CFG_SRC_ADDR_LOW]);
    t.dst = Dma::address(regs[NVDLA_BDMA_CFG_DST_ADDR_HIGH], regs[NVDLA_BDMA_CFG_DST_ADDR_LOW]);
    t.src_port = Dma::port_of(NVDLA_REG_FIELD(BDMA, CFG_CMD, SRC_RAM_TYPE, regs));
    t.dst_port = Dma::port_of(NVDLA_REG_FIELD(BDMA, CFG_CMD, DST_RAM_TYPE, regs));
    t.line_size = NVDLA_REG_FIELD(BDMA, CFG_LINE, SIZE, regs);
    t.line_repeat = NVDLA_REG_FIELD(BDMA, CFG_LINE_REPEAT, NUMBER, regs);
    t.surface_repeat = NVDLA_REG_FIELD(BDMA, CFG_SURF_REPEAT, NUMBER, regs);
    t.src_line = regs[NVDLA_BDMA_CFG_SRC_LINE];
    t.dst_line = regs[NVDLA_BDMA_CFG_DST_LINE];
    t.src_surface = regs[NVDLA_BDMA_CFG_SRC_SURF];
    t.dst_surface = regs[NVDLA_BDMA_CFG_DST_SURF];
    return t;
}

// Copies one command line by line, surfaces outermost, in the order the engines issue them.
// Addresses wrap at 64 bits like the RTL's address adders.
void copy(Context& ctx, const Transfer& t) {
    if (t.line_repeat > kStoreRepeatLimit || t.surface_repeat > kStoreRepeatLimit) {
        ctx.error("BDMA CFG_LINE_REPEAT " + std::to_string(t.line_repeat) + " or CFG_SURF_REPEAT " +
                  std::to_string(t.surface_repeat) + " exceeds " +
                  std::to_string(kStoreRepeatLimit) +
                  ": the store engine counts only 13 bits, so the hardware would write fewer "
                  "lines than it reads; the transfer was not performed");
        return;
    }
    const uint64_t line_bytes = (uint64_t(t.line_size) + 1) * 32;
    std::vector<std::byte> line(line_bytes);
    for (uint64_t s = 0; s <= t.surface_repeat; ++s) {
        for (uint64_t l = 0; l <= t.line_repeat; ++l) {
            const uint64_t src = t.src + s * t.src_surface + l * t.src_line;
            const uint64_t dst = t.dst + s * t.dst_surface + l * t.dst_line;
            ctx.dma.read(NVDLA_UNIT_BDMA, t.src_port, src, line.data(), line_bytes);
            ctx.dma.write(NVDLA_UNIT_BDMA, t.dst_port, dst, line.data(), line_bytes);
        }
    }
}

}  // namespace

struct Bdma::State {
    std::deque<Transfer> slots;       // the command FIFO, oldest first
    size_t unlaunched = 0;            // commands at the back queued since the last launch
    std::deque<Launch> launches;      // launched groups not yet executed, in launch order
    std::vector<std::string> errors;  // found while handling CSB writes; run() reports them
};

Bdma::Bdma() : state_(std::make_unique<State>()) {}
Bdma::~Bdma() = default;

void Bdma::reset() {
    *state_ = State{};
}

bool Bdma::handle_write(Group regs, uint32_t offset, uint32_t value) {
    State& st = *state_;
    switch (offset) {
        case NVDLA_BDMA_CFG_OP:
            if (!(value & 1u)) return false;
            if (st.slots.size() == kSlots) {
                st.errors.push_back(
                    "BDMA CFG_OP.EN was written with all 20 command slots full (STATUS.FREE_SLOT "
                    "is 0); the hardware drops that transfer");
                return true;  // so that run() reports it
            }
            st.slots.push_back(capture(regs));
            ++st.unlaunched;
            return false;
        case NVDLA_BDMA_CFG_LAUNCH0:
        case NVDLA_BDMA_CFG_LAUNCH1: {
            if (!(value & 1u)) return false;
            const int group = offset == NVDLA_BDMA_CFG_LAUNCH0 ? 0 : 1;
            if (st.launches.size() == kMaxOutstandingLaunches) {
                st.errors.push_back("BDMA CFG_LAUNCH" + std::to_string(group) +
                                    " was written while two launched groups are still "
                                    "outstanding; the hardware loses that launch");
                return true;
            }
            st.launches.push_back({group, st.unlaunched});
            st.unlaunched = 0;
            return true;
        }
        default: return false;
    }
}

std::optional<uint32_t> Bdma::handle_read(Group, uint32_t offset) {
    if (offset != NVDLA_BDMA_STATUS) return std::nullopt;
    const State& st = *state_;
    bool busy[2] = {false, false};
    for (const Launch& l : st.launches) busy[l.group] = true;
    const bool idle = st.slots.empty() && st.launches.empty();
    return NVDLA_FIELD_SET(BDMA, STATUS, FREE_SLOT, uint32_t(kSlots - st.slots.size())) |
           NVDLA_FIELD_SET(BDMA, STATUS, IDLE, idle ? 1u : 0u) |
           NVDLA_FIELD_SET(BDMA, STATUS, GRP0_BUSY, busy[0] ? 1u : 0u) |
           NVDLA_FIELD_SET(BDMA, STATUS, GRP1_BUSY, busy[1] ? 1u : 0u);
}

bool Bdma::run(Context& ctx, Group, const std::function<void(InterruptEvent, int)>& done) {
    State& st = *state_;
    for (std::string& e : st.errors) ctx.error(std::move(e));
    st.errors.clear();
    if (st.launches.empty()) return false;

    // One launched group per call, so that every group counts as one operation.
    const Launch launch = st.launches.front();
    st.launches.pop_front();
    if (launch.transfers == 0)
        ctx.error("BDMA CFG_LAUNCH" + std::to_string(launch.group) +
                  " launched a group with no transfer queued by CFG_OP.EN since the previous "
                  "launch; the hardware would never finish it");
    for (size_t i = 0; i < launch.transfers; ++i) {
        copy(ctx, st.slots.front());
        st.slots.pop_front();
    }
    done(kBdmaDone, launch.group);
    return true;
}

}  // namespace nvdla::emu
