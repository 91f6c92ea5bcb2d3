#include "emu/glb.hpp"

namespace nvdla::emu {

void Glb::set_level(bool level) {
    if (level == level_) return;
    level_ = level;
    if (line_) line_(level);
}

void Glb::raise(InterruptEvent event, int group) {
    const uint32_t bit = 1u << (uint32_t(event) + uint32_t(group));
    set_status(status() | bit);
    if (!(mask() & bit)) set_level(true);
}

bool Glb::handle_write(uint32_t offset, uint32_t value) {
    if (offset == NVDLA_GLB_S_INTR_STATUS) {
        set_status(status() & ~value);
        if ((status() & kEventBits) == 0) set_level(false);
        return true;
    }
    if (offset == NVDLA_GLB_S_INTR_SET) {
        const uint32_t bits = value & kEventBits;
        set_status(status() | bits);
        if (bits & ~mask()) set_level(true);
        return true;
    }
    return false;
}

}  // namespace nvdla::emu
