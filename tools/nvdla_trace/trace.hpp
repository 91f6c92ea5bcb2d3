// Hardware verification traces: the two formats parsed into one command list.
//
//   nv_small family, <test>.cfg: reg_write(NVDLA_SDP.D_OP_ENABLE_0, 0x1); mem_load(pri_mem, ...);
//       intr_notify(SDP_0, sync_id); check_crc(sync_id, pri_mem, base, size, crc); ...
//   nv_full, input.txn: write_reg 0xffffWWWW data; read_reg 0xffffWWWW mask value;
//       load_mem addr size file; dump_mem addr size golden; wait
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "nvdla/emu/device.hpp"
#include "nvdla/status.hpp"

namespace nvdla::trace {

enum class Op {
    RegWrite,      // register <- value
    RegRead,       // read, value unused
    RegReadCheck,  // (read & mask) == value, once
    RegPoll,       // (read & mask) == value, retried
    MemInit,       // [address, +size) <- pattern
    MemLoad,       // file -> address
    IntrNotify,    // wait for the interrupt `name` (e.g. SDP_0), clear it, fire sync `sync`
    Wait,          // wait for the next interrupt (nv_full)
    CheckCrc,      // when sync fires: crc32 of [address, +size) == value
    CheckFile,     // when sync fires (or now): [address, +size) == file
    CheckNothing,  // when sync fires: nothing to compare
    SyncNotify,    // sequencer synchronisation; sequential replay needs nothing
    SyncWait,
};

enum class Fill { Zero, Ones, AFive, FiveA, Address, Random };

struct Command {
    Op op;
    int line = 0;      // in the trace file, for messages
    std::string name;  // register name (resolved later), interrupt id, or file
    std::string sync;  // sync id
    uint32_t reg = 0;  // register byte offset, when given numerically
    bool reg_is_numeric = false;
    uint64_t address = 0, size = 0;
    uint32_t value = 0, mask = 0xffffffffu;
    emu::MemoryPort port = emu::MemoryPort::Primary;
    bool port_from_address = false;  // nv_full: 0x5xxxxxxx is CVSRAM
    Fill fill = Fill::Zero;
};

struct Trace {
    enum class Format { NvSmallCfg, NvFullTxn } format;
    std::filesystem::path dir;
    std::filesystem::path file;
    std::vector<Command> commands;
    int poll_retries = 100;  // nv_full plusargs: +read_reg_poll_retries
};

// Finds and parses the trace in dir (<dir>/<dir name>.cfg or <dir>/input.txn).
Result<Trace> load_trace(const std::filesystem::path& dir);

// Parses a trace's text in the given format; file_name prefixes the messages.
Result<std::vector<Command>> parse_commands(Trace::Format format, std::string_view text,
                                            const std::string& file_name);

// Memory surface files: the nv_small packet format ({offset:.., size:.., payload:..}) and the
// nv_full dumps (header lines, then whitespace-separated 0xNN bytes). Returns (offset, byte)
// runs as a dense byte vector plus a presence mask for the packet format.
struct Surface {
    std::vector<uint8_t> bytes;
    std::vector<bool> present;  // which offsets the file gives
};
Result<Surface> read_surface_file(const std::filesystem::path& path);

// The default bound of a packet file's extent: the test bench's 32-bit address space.
constexpr uint64_t kMaxSurfaceExtent = uint64_t(1) << 32;

// Parses a surface file's text; name prefixes the messages. Packets must end within max_extent
// bytes (the surface is dense up to its last packet).
Result<Surface> parse_surface(std::string_view text, const std::string& name,
                              uint64_t max_extent = kMaxSurfaceExtent);

}  // namespace nvdla::trace
