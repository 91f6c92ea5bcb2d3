#include "emu/dma.hpp"

#include <sstream>

#include "nvdla/hw/register_map.hpp"

namespace nvdla::emu {

std::byte* Dma::checked(const DmaAccess& access) {
    std::byte* p = nullptr;
    const bool wraps = access.address + access.size < access.address;
    if (!wraps && (!check_ || check_(access)))
        p = access.write ? memory_.translate_for_write(access.port, access.address, access.size)
                         : memory_.translate(access.port, access.address, access.size);
    if (p) return p;
    if (stats_.faults++ == 0) stats_.first_fault = access;
    std::ostringstream msg;
    msg << hw::RegisterMap::unit_name(access.unit) << " DMA " << (access.write ? "write" : "read")
        << " of " << access.size << " bytes at 0x" << std::hex << access.address << " on the "
        << (access.port == MemoryPort::Primary ? "primary" : "secondary")
        << " interface is outside the memory it may access";
    stats_.last_error = msg.str();
    return nullptr;
}

bool Dma::read(nvdla_unit unit, MemoryPort port, uint64_t address, void* dst, uint64_t size) {
    if (size == 0) return true;
    const std::byte* p = checked({unit, port, address, size, false});
    if (!p) {
        std::memset(dst, 0, size);
        return false;
    }
    std::memcpy(dst, p, size);
    stats_.bytes_read += size;
    return true;
}

const std::byte* Dma::view(nvdla_unit unit, MemoryPort port, uint64_t address, uint64_t size) {
    static constexpr std::byte kNothing{};
    if (size == 0) return &kNothing;
    const std::byte* p = checked({unit, port, address, size, false});
    if (p) stats_.bytes_read += size;
    return p;
}

bool Dma::write(nvdla_unit unit, MemoryPort port, uint64_t address, const void* src,
                uint64_t size) {
    if (size == 0) return true;
    std::byte* p = checked({unit, port, address, size, true});
    if (!p) return false;
    std::memcpy(p, src, size);
    stats_.bytes_written += size;
    return true;
}

std::byte* Dma::place(nvdla_unit unit, MemoryPort port, uint64_t address, uint64_t size) {
    static std::byte nothing;  // nothing is copied to it
    if (size == 0) return &nothing;
    std::byte* p = checked({unit, port, address, size, true});
    if (p) stats_.bytes_written += size;
    return p;
}

}  // namespace nvdla::emu
