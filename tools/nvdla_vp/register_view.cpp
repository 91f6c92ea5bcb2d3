#include "register_view.hpp"

namespace nvdla::vp {
namespace {

// Grouped units: S_STATUS (offset 0: STATUS_0 in bits 1:0, STATUS_1 in bits 17:16) and
// S_POINTER (offset 4: PRODUCER bit 0, read-only CONSUMER bit 16).
constexpr uint32_t kStatusOffset = 0x000, kPointerOffset = 0x004;
enum GroupStatus : uint32_t { kIdle = 0, kRunning = 1, kPending = 2 };
constexpr uint32_t kInterruptEventBits = 0x003f03ff;

}  // namespace

RegisterView::RegisterView(nvdla_reg_map map) : map_(hw::RegisterMap::get(map)) {
    for (const hw::RegisterInfo& r : map_.registers())
        if (r.name == "D_OP_ENABLE") {
            units_[r.unit].grouped = true;
            units_[r.unit].op_enable = r.offset;
        }
    for (Unit& u : units_) {
        u.single.assign(kWords, 0);
        if (u.grouped)
            for (auto& g : u.groups) g.assign(kWords, 0);
    }
}

bool RegisterView::model_only(const hw::RegisterInfo& r) const {
    return r.name == "S_LUT_ACCESS_DATA" ||
           (r.unit == NVDLA_UNIT_CDMA && r.name == "S_CBUF_FLUSH_STATUS");
}

uint32_t* RegisterView::word(nvdla_unit unit, uint32_t offset) {
    Unit& u = units_[unit];
    if (u.grouped && offset >= u.op_enable) return &u.groups[u.producer][offset / 4];
    return &u.single[offset / 4];
}

void RegisterView::capture(emu::Device& device) {
    for (int i = 0; i < NVDLA_UNIT_COUNT; ++i) {
        const auto unit = static_cast<nvdla_unit>(i);
        Unit& u = units_[unit];
        if (!u.grouped) continue;
        const uint32_t pointer = device.read_register(map_.unit_base(unit) + kPointerOffset);
        u.producer = static_cast<int>(pointer & 1u);
        u.consumer = static_cast<int>((pointer >> 16) & 1u);
    }
    for (int pass = 0; pass < 2; ++pass) {
        // Pass 0 reads the single registers and the producer groups, pass 1 the other groups
        // (S_POINTER pointed at them meanwhile, then back).
        for (int i = 0; i < NVDLA_UNIT_COUNT; ++i) {
            const Unit& u = units_[i];
            if (pass == 1 && u.grouped)
                device.write_register(map_.unit_base(static_cast<nvdla_unit>(i)) + kPointerOffset,
                                      static_cast<uint32_t>(u.producer ^ 1));
        }
        for (const hw::RegisterInfo& r : map_.registers()) {
            Unit& u = units_[r.unit];
            const bool grouped = u.grouped && r.offset >= u.op_enable;
            if ((pass == 1 && !grouped) || model_only(r)) continue;
            const int g = pass == 0 ? u.producer : u.producer ^ 1;
            std::vector<uint32_t>& words = grouped ? u.groups[g] : u.single;
            words[r.offset / 4] = device.read_register(r.address);
        }
        for (int i = 0; i < NVDLA_UNIT_COUNT; ++i) {
            const Unit& u = units_[i];
            if (pass == 1 && u.grouped)
                device.write_register(map_.unit_base(static_cast<nvdla_unit>(i)) + kPointerOffset,
                                      static_cast<uint32_t>(u.producer));
        }
    }
}

std::optional<uint32_t> RegisterView::read(uint32_t address) const {
    const hw::RegisterInfo* r = map_.at(address & ~3u);
    if (!r) return 0;  // as the model: nothing there reads 0
    const Unit& u = units_[r->unit];
    if (r->unit == NVDLA_UNIT_CDMA && r->name == "S_CBUF_FLUSH_STATUS")
        return NVDLA_FIELD_SET(CDMA, S_CBUF_FLUSH_STATUS, FLUSH_DONE, 1u);  // a layer is running
    if (model_only(*r)) return std::nullopt;
    if (u.grouped && r->offset == kPointerOffset)
        return static_cast<uint32_t>(u.producer) | static_cast<uint32_t>(u.consumer) << 16;
    if (u.grouped && r->offset == kStatusOffset) {
        uint32_t status = 0;
        for (int g = 0; g < 2; ++g) {
            const bool armed = u.groups[g][u.op_enable / 4] & 1u;
            const uint32_t s = !armed ? kIdle : (g == u.consumer ? kRunning : kPending);
            status |= s << (16 * g);
        }
        return status;
    }
    const bool grouped = u.grouped && r->offset >= u.op_enable;
    const std::vector<uint32_t>& words = grouped ? u.groups[u.producer] : u.single;
    return words[r->offset / 4] & r->read_mask;
}

void RegisterView::write(uint32_t address, uint32_t value) {
    const hw::RegisterInfo* r = map_.at(address & ~3u);
    if (!r) return;
    Unit& u = units_[r->unit];
    if (r->unit == NVDLA_UNIT_GLB && r->offset == NVDLA_GLB_S_INTR_STATUS) {
        u.single[r->offset / 4] &= ~value;
        return;
    }
    if (r->unit == NVDLA_UNIT_GLB && r->offset == NVDLA_GLB_S_INTR_SET) {
        u.single[NVDLA_GLB_S_INTR_STATUS / 4] |= value & kInterruptEventBits;
        return;
    }
    if (u.grouped && r->offset == kPointerOffset) {
        u.producer = static_cast<int>(value & 1u);
        return;
    }
    uint32_t* w = word(r->unit, r->offset);
    *w = (*w & ~r->write_mask) | (value & r->write_mask);
}

bool RegisterView::may_start(uint32_t address, uint32_t value) const {
    const hw::RegisterInfo* r = map_.at(address & ~3u);
    if (!r || !(value & 1u)) return false;
    if (r->unit == NVDLA_UNIT_BDMA)
        return r->offset == NVDLA_BDMA_CFG_LAUNCH0 || r->offset == NVDLA_BDMA_CFG_LAUNCH1;
    return units_[r->unit].grouped && r->offset == units_[r->unit].op_enable;
}

}  // namespace nvdla::vp
