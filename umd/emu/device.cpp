// The device: CSB dispatch to the register file and the units, and the scheduler that runs an
// operation once every unit it needs has its consumer group enabled.
#include "nvdla/emu/device.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <initializer_list>
#include <vector>

#include "emu/bdma.hpp"
#include "emu/cdp.hpp"
#include "emu/convolution.hpp"
#include "emu/dma.hpp"
#include "emu/glb.hpp"
#include "emu/parallel.hpp"
#include "emu/pdp.hpp"
#include "emu/register_file.hpp"
#include "emu/rubik.hpp"
#include "emu/sdp.hpp"
#include "emu/unit.hpp"

namespace nvdla::emu {
namespace {

#define IS(unit, reg, field, value, group) \
    (NVDLA_REG_FIELD(unit, reg, field, group) == NVDLA_##unit##_##reg##_##field##_##value)

bool sdp_flying(Group sdp) {
    return IS(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, ON, sdp);
}
bool sdp_to_pdp(Group sdp) {
    return IS(SDP, D_FEATURE_MODE_CFG, OUTPUT_DST, PDP, sdp);
}

// Whether this SDP operation reads anything through SDP_RDMA: its input (offline mode) or an
// operand of an enabled X1/X2/Y stage taken from memory (Y only where the configuration has it).
bool sdp_needs_rdma(const HwConfig& cfg, Group sdp) {
    if (!sdp_flying(sdp)) return true;
    const bool bs = !NVDLA_REG_FIELD(SDP, D_DP_BS_CFG, BS_BYPASS, sdp) &&
                    ((!NVDLA_REG_FIELD(SDP, D_DP_BS_CFG, BS_ALU_BYPASS, sdp) &&
                      IS(SDP, D_DP_BS_ALU_CFG, BS_ALU_SRC, MEM, sdp)) ||
                     (!NVDLA_REG_FIELD(SDP, D_DP_BS_CFG, BS_MUL_BYPASS, sdp) &&
                      IS(SDP, D_DP_BS_MUL_CFG, BS_MUL_SRC, MEM, sdp)));
    const bool bn = !NVDLA_REG_FIELD(SDP, D_DP_BN_CFG, BN_BYPASS, sdp) &&
                    ((!NVDLA_REG_FIELD(SDP, D_DP_BN_CFG, BN_ALU_BYPASS, sdp) &&
                      IS(SDP, D_DP_BN_ALU_CFG, BN_ALU_SRC, MEM, sdp)) ||
                     (!NVDLA_REG_FIELD(SDP, D_DP_BN_CFG, BN_MUL_BYPASS, sdp) &&
                      IS(SDP, D_DP_BN_MUL_CFG, BN_MUL_SRC, MEM, sdp)));
    const bool ew = nvdla_hw_has(&cfg, NVDLA_FEATURE_SDP_EW) &&
                    !NVDLA_REG_FIELD(SDP, D_DP_EW_CFG, EW_BYPASS, sdp) &&
                    ((!NVDLA_REG_FIELD(SDP, D_DP_EW_CFG, EW_ALU_BYPASS, sdp) &&
                      IS(SDP, D_DP_EW_ALU_CFG, EW_ALU_SRC, MEM, sdp)) ||
                     (!NVDLA_REG_FIELD(SDP, D_DP_EW_CFG, EW_MUL_BYPASS, sdp) &&
                      IS(SDP, D_DP_EW_MUL_CFG, EW_MUL_SRC, MEM, sdp)));
    return bs || bn || ew;
}

bool pdp_flying(Group pdp) {
    return IS(PDP, D_OPERATION_MODE_CFG, FLYING_MODE, ON_FLYING, pdp);
}

}  // namespace

struct Device::Impl {
    // One moment of an operation's completion, in hardware order: a done interrupt, and the
    // units whose consumer group is free from then on.
    struct Step {
        InterruptEvent event;
        int group;
        uint32_t units;  // bit u: unit u
    };
    // An operation's steps, at most five (a convolution whose SDP feeds PDP): no allocation
    // per operation.
    struct Steps {
        std::array<Step, 5> list;
        size_t count = 0;
        Steps(std::initializer_list<Step> steps) {
            for (const Step& s : steps) add(s);
        }
        void add(const Step& s) { list[count++] = s; }
        const Step* begin() const { return list.data(); }
        const Step* end() const { return list.data() + count; }
    };
    static_assert(NVDLA_UNIT_COUNT <= 32);

    Impl(const HwConfig& c, Memory& memory)
        : cfg(c),
          regs(c.reg_map),
          dma(memory, stats),
          glb(regs),
          ctx{cfg, dma, stats, default_emu_threads()} {}

    const HwConfig& cfg;
    DeviceStats stats;
    RegisterFile regs;
    Dma dma;
    Glb glb;
    Context ctx;
    Convolution conv;
    Sdp sdp;
    Pdp pdp;
    Cdp cdp;
    Bdma bdma;
    Rubik rubik;
    bool stalled = false;
    EventPacing pacing = EventPacing::Immediate;
    std::deque<Step> pending;
    std::array<bool, NVDLA_UNIT_COUNT> busy{};

    bool has(uint32_t feature) const { return nvdla_hw_has(&cfg, feature); }
    // A unit can start an operation when its consumer group is enabled and it is not still
    // finishing an earlier one (stepped pacing).
    bool armed(nvdla_unit u) { return !busy[u] && regs.armed(u, regs.consumer(u)); }
    Group current(nvdla_unit u) { return regs.group(u, regs.consumer(u)); }

    Step step(InterruptEvent event, nvdla_unit raiser, std::initializer_list<nvdla_unit> units) {
        uint32_t bits = 0;
        for (nvdla_unit u : units) bits |= 1u << u;
        return {event, regs.consumer(raiser), bits};
    }

    // The operation's results are in memory; its completion happens now (immediate pacing) or
    // step by step as the embedder advances (stepped pacing).
    void complete(const Steps& steps) {
        for (const Step& s : steps)
            for (int u = 0; u < NVDLA_UNIT_COUNT; ++u)
                if (s.units >> u & 1u) busy[u] = true;
        for (const Step& s : steps) {
            if (pacing == EventPacing::Immediate)
                apply(s);
            else
                pending.push_back(s);
        }
    }

    void apply(const Step& s) {
        for (int u = 0; u < NVDLA_UNIT_COUNT; ++u)
            if (s.units >> u & 1u) {
                regs.complete(nvdla_unit(u));
                busy[u] = false;
            }
        glb.raise(s.event, s.group);
    }

    // The SDP part of an operation: with CACC's output (flying) or reading memory, to memory
    // or into PDP. Returns false when a unit it needs is not enabled yet.
    bool sdp_ready(Group sdp_group) {
        if (sdp_needs_rdma(cfg, sdp_group) && !armed(NVDLA_UNIT_SDP_RDMA)) return false;
        if (sdp_to_pdp(sdp_group) &&
            !(armed(NVDLA_UNIT_PDP) && pdp_flying(current(NVDLA_UNIT_PDP))))
            return false;
        return true;
    }

    // Runs SDP (and a fused PDP) and returns its completion steps.
    Steps run_sdp(const AccumulatorCube* flying) {
        const Group sdp_group = current(NVDLA_UNIT_SDP);
        const bool rdma = sdp_needs_rdma(cfg, sdp_group);
        const bool to_pdp = sdp_to_pdp(sdp_group);
        ElementCube pdp_input;
        sdp.execute(ctx, regs.single(NVDLA_UNIT_SDP), sdp_group,
                    rdma ? current(NVDLA_UNIT_SDP_RDMA) : Group(), flying,
                    to_pdp ? &pdp_input : nullptr);
        if (to_pdp) pdp.execute(ctx, current(NVDLA_UNIT_PDP), Group(), &pdp_input);
        Steps steps{rdma ? step(kSdpDone, NVDLA_UNIT_SDP, {NVDLA_UNIT_SDP_RDMA, NVDLA_UNIT_SDP})
                         : step(kSdpDone, NVDLA_UNIT_SDP, {NVDLA_UNIT_SDP})};
        if (to_pdp) steps.add(step(kPdpDone, NVDLA_UNIT_PDP, {NVDLA_UNIT_PDP}));
        return steps;
    }

    bool try_convolution() {
        for (nvdla_unit u : {NVDLA_UNIT_CDMA, NVDLA_UNIT_CSC, NVDLA_UNIT_CMAC_A, NVDLA_UNIT_CMAC_B,
                             NVDLA_UNIT_CACC, NVDLA_UNIT_SDP})
            if (!armed(u)) return false;
        const Group sdp_group = current(NVDLA_UNIT_SDP);
        if (!sdp_flying(sdp_group) || !sdp_ready(sdp_group)) return false;
        const AccumulatorCube acc = conv.execute(
            ctx, current(NVDLA_UNIT_CDMA), current(NVDLA_UNIT_CSC), current(NVDLA_UNIT_CMAC_A),
            current(NVDLA_UNIT_CMAC_B), current(NVDLA_UNIT_CACC));
        // The order the hardware (and the nv_full traces) report them: data loaded, weights
        // loaded, accumulation done, then SDP's output written.
        Steps steps{step(kCdmaDataDone, NVDLA_UNIT_CDMA, {}),
                    step(kCdmaWeightDone, NVDLA_UNIT_CDMA, {NVDLA_UNIT_CDMA}),
                    step(kCaccDone, NVDLA_UNIT_CACC,
                         {NVDLA_UNIT_CSC, NVDLA_UNIT_CMAC_A, NVDLA_UNIT_CMAC_B, NVDLA_UNIT_CACC})};
        for (const Step& s : run_sdp(&acc)) steps.add(s);
        complete(steps);
        return true;
    }

    bool try_sdp() {
        if (!armed(NVDLA_UNIT_SDP)) return false;
        const Group sdp_group = current(NVDLA_UNIT_SDP);
        if (sdp_flying(sdp_group) || !sdp_ready(sdp_group)) return false;
        complete(run_sdp(nullptr));
        return true;
    }

    bool try_pdp() {
        if (!armed(NVDLA_UNIT_PDP)) return false;
        const Group pdp_group = current(NVDLA_UNIT_PDP);
        if (pdp_flying(pdp_group) || !armed(NVDLA_UNIT_PDP_RDMA)) return false;
        pdp.execute(ctx, pdp_group, current(NVDLA_UNIT_PDP_RDMA), nullptr);
        complete({step(kPdpDone, NVDLA_UNIT_PDP, {NVDLA_UNIT_PDP_RDMA, NVDLA_UNIT_PDP})});
        return true;
    }

    bool try_cdp() {
        if (!armed(NVDLA_UNIT_CDP) || !armed(NVDLA_UNIT_CDP_RDMA)) return false;
        cdp.execute(ctx, regs.single(NVDLA_UNIT_CDP), current(NVDLA_UNIT_CDP),
                    current(NVDLA_UNIT_CDP_RDMA));
        complete({step(kCdpDone, NVDLA_UNIT_CDP, {NVDLA_UNIT_CDP_RDMA, NVDLA_UNIT_CDP})});
        return true;
    }

    bool try_rubik() {
        if (!has(NVDLA_FEATURE_RUBIK) || !armed(NVDLA_UNIT_RBK)) return false;
        rubik.execute(ctx, current(NVDLA_UNIT_RBK));
        complete({step(kRubikDone, NVDLA_UNIT_RBK, {NVDLA_UNIT_RBK})});
        return true;
    }

    bool try_bdma() {
        if (!has(NVDLA_FEATURE_BDMA)) return false;
        return bdma.run(ctx, regs.single(NVDLA_UNIT_BDMA), [this](InterruptEvent e, int group) {
            complete({Step{e, group, 0}});
        });
    }

    // Stepped pacing: the next completion step of the earliest operation, then whatever it
    // made ready. False when nothing is pending.
    bool advance() {
        if (pending.empty()) return false;
        const Step s = pending.front();
        pending.pop_front();
        apply(s);
        run_ready();
        return true;
    }

    using Attempt = bool (Impl::*)();
    static constexpr std::array<Attempt, 6> kAttempts{&Impl::try_convolution, &Impl::try_sdp,
                                                      &Impl::try_pdp,         &Impl::try_cdp,
                                                      &Impl::try_rubik,       &Impl::try_bdma};
    // Sets of attempts, bit i for kAttempts[i].
    static constexpr uint32_t kConvolution = 1u << 0, kSdp = 1u << 1, kPdp = 1u << 2,
                              kCdp = 1u << 3, kRubik = 1u << 4, kBdma = 1u << 5,
                              kAllAttempts = (1u << kAttempts.size()) - 1;

    // The attempts whose operation needs `unit`: the only ones that a write enabling it can
    // make possible.
    static uint32_t attempts_needing(nvdla_unit unit) {
        switch (unit) {
            case NVDLA_UNIT_CDMA:
            case NVDLA_UNIT_CSC:
            case NVDLA_UNIT_CMAC_A:
            case NVDLA_UNIT_CMAC_B:
            case NVDLA_UNIT_CACC: return kConvolution;
            case NVDLA_UNIT_SDP:
            case NVDLA_UNIT_SDP_RDMA: return kConvolution | kSdp;
            case NVDLA_UNIT_PDP: return kConvolution | kSdp | kPdp;  // fed by SDP, or alone
            case NVDLA_UNIT_PDP_RDMA: return kPdp;
            case NVDLA_UNIT_CDP:
            case NVDLA_UNIT_CDP_RDMA: return kCdp;
            case NVDLA_UNIT_RBK: return kRubik;
            case NVDLA_UNIT_BDMA: return kBdma;
            default: return kAllAttempts;
        }
    }

    // Runs every operation whose units are all enabled, until none is left. `first`: the
    // attempts that can succeed now (the others could not before the write that calls this);
    // once one has run, every attempt is tried again.
    void run_ready(uint32_t first = kAllAttempts) {
        if (stalled) return;
        for (uint32_t tried = first; tried;) {
            bool progress = false;
            for (size_t i = 0; i < kAttempts.size(); ++i) {
                if ((tried >> i & 1u) && (this->*kAttempts[i])()) {
                    ++stats.operations;
                    progress = true;
                }
            }
            tried = progress ? kAllAttempts : 0;
        }
    }

    uint32_t read(uint32_t address) {
        ++stats.register_reads;
        const auto unit = regs.map().unit_at(address);
        if (!unit) return 0;
        const uint32_t offset = (address - regs.unit_base(*unit)) & ~3u;
        std::optional<uint32_t> computed;
        switch (*unit) {
            case NVDLA_UNIT_CDMA: computed = conv.handle_read(*unit, offset); break;
            case NVDLA_UNIT_SDP: computed = sdp.handle_read(regs.single(*unit), offset); break;
            case NVDLA_UNIT_CDP: computed = cdp.handle_read(regs.single(*unit), offset); break;
            case NVDLA_UNIT_BDMA:
                if (has(NVDLA_FEATURE_BDMA))
                    computed = bdma.handle_read(regs.single(*unit), offset);
                break;
            default: break;
        }
        return computed ? *computed : regs.csb_read(*unit, offset);
    }

    void write(uint32_t address, uint32_t value) {
        ++stats.register_writes;
        const auto unit = regs.map().unit_at(address);
        if (!unit) return;
        const uint32_t offset = (address - regs.unit_base(*unit)) & ~3u;
        if (*unit == NVDLA_UNIT_GLB && glb.handle_write(offset, value)) return;
        if (!regs.csb_write(*unit, offset, value)) return;
        bool schedule =
            regs.has_groups(*unit) && offset == regs.op_enable_offset(*unit) && (value & 1u);
        switch (*unit) {
            case NVDLA_UNIT_SDP: sdp.handle_write(regs.single(*unit), offset, value); break;
            case NVDLA_UNIT_CDP: cdp.handle_write(regs.single(*unit), offset, value); break;
            case NVDLA_UNIT_BDMA:
                if (has(NVDLA_FEATURE_BDMA))
                    schedule |= bdma.handle_write(regs.single(*unit), offset, value);
                break;
            default: break;
        }
        if (schedule) run_ready(attempts_needing(*unit));
    }

    void reset() {
        stats = DeviceStats{};
        pending.clear();
        busy.fill(false);
        regs.reset();
        glb.reset();
        conv.reset();
        sdp.reset();
        pdp.reset();
        cdp.reset();
        bdma.reset();
        rubik.reset();
    }
};

Device::Device(const HwConfig& cfg, Memory& memory) : impl_(std::make_unique<Impl>(cfg, memory)) {}
Device::~Device() = default;

const HwConfig& Device::config() const {
    return impl_->cfg;
}
uint32_t Device::read_register(uint32_t offset) {
    return impl_->read(offset);
}
void Device::write_register(uint32_t offset, uint32_t value) {
    impl_->write(offset, value);
}
void Device::set_interrupt_line(InterruptLine line) {
    impl_->glb.set_line(std::move(line));
}
void Device::set_access_check(AccessCheck check) {
    impl_->dma.set_access_check(std::move(check));
}
bool Device::interrupt_asserted() const {
    return impl_->glb.asserted();
}
void Device::reset() {
    impl_->reset();
}
const DeviceStats& Device::stats() const {
    return impl_->stats;
}

void Device::set_event_pacing(EventPacing pacing) {
    impl_->pacing = pacing;
    while (pacing == EventPacing::Immediate && impl_->advance()) {
    }
}

bool Device::advance() {
    return impl_->advance();
}

void Device::set_threads(unsigned threads) {
    impl_->ctx.threads = threads ? threads : default_emu_threads();
}

unsigned Device::threads() const {
    return impl_->ctx.threads;
}

void Device::set_stalled(bool stalled) {
    impl_->stalled = stalled;
    impl_->run_ready();
}

std::byte* FlatMemory::add_region(MemoryPort port, uint64_t address, uint64_t size) {
    regions_.push_back({port, address, std::vector<std::byte>(size)});
    return regions_.back().bytes.data();
}

std::byte* FlatMemory::translate(MemoryPort port, uint64_t address, uint64_t size) {
    for (Region& r : regions_) {
        if (r.port != port || address < r.address) continue;
        const uint64_t offset = address - r.address;
        if (offset <= r.bytes.size() && size <= r.bytes.size() - offset)
            return r.bytes.data() + offset;
    }
    return nullptr;
}

}  // namespace nvdla::emu
