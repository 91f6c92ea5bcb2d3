#include "player.hpp"

#include <sys/mman.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <deque>
#include <random>
#include <set>

#include "nvdla/emu/device.hpp"
#include "nvdla/hw/register_map.hpp"

namespace nvdla::trace {
namespace {

namespace fs = std::filesystem;
using emu::MemoryPort;

// The test bench's memories: each port a 32-bit address space that reads zeros until written
// (the CRC treats unwritten bytes as 0). Backed by lazily committed anonymous mappings.
class TraceMemory : public emu::Memory {
  public:
    static constexpr uint64_t kSpace = uint64_t(1) << 32;
    TraceMemory() {
        for (auto& p : spaces_) {
            void* m = mmap(nullptr, kSpace, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            p = m == MAP_FAILED ? nullptr : static_cast<std::byte*>(m);
        }
    }
    ~TraceMemory() override {
        for (auto* p : spaces_)
            if (p) munmap(p, kSpace);
    }
    TraceMemory(const TraceMemory&) = delete;
    TraceMemory& operator=(const TraceMemory&) = delete;

    bool ok() const { return spaces_[0] && spaces_[1]; }
    std::byte* translate(MemoryPort port, uint64_t address, uint64_t size) override {
        if (address >= kSpace || size > kSpace - address) return nullptr;
        return spaces_[port == MemoryPort::Primary ? 0 : 1] + address;
    }

  private:
    std::byte* spaces_[2] = {};
};

// nv_full's test bench puts its CVSRAM at 0x5xxxxxxx and DRAM elsewhere.
MemoryPort port_of(const Command& c) {
    if (!c.port_from_address) return c.port;
    return (c.address >> 28) == 0x5 ? MemoryPort::Secondary : MemoryPort::Primary;
}

const char* port_name(MemoryPort p) {
    return p == MemoryPort::Primary ? "pri_mem" : "sec_mem";
}

// GLB S_INTR_STATUS bit of an interrupt id such as SDP_0, cdma_wt_1.
int interrupt_bit(std::string id) {
    for (char& ch : id) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    const size_t us = id.rfind('_');
    if (us == std::string::npos) return -1;
    const std::string unit = id.substr(0, us), group = id.substr(us + 1);
    if (group != "0" && group != "1") return -1;
    const std::pair<const char*, int> bases[] = {{"SDP", 0},       {"CDP", 2},      {"PDP", 4},
                                                 {"BDMA", 6},      {"RUBIK", 8},    {"RBK", 8},
                                                 {"CDMA_DAT", 16}, {"CDMA_WT", 18}, {"CACC", 20}};
    for (auto [name, base] : bases)
        if (unit == name) return base + (group == "1");
    return -1;
}

class Player {
  public:
    Player(const Trace& t, const HwConfig& cfg, std::ostream& out, bool verbose)
        : t_(t),
          cfg_(cfg),
          map_(hw::RegisterMap::get(cfg.reg_map)),
          out_(out),
          verbose_(verbose),
          device_(cfg, memory_) {}

    Outcome run() {
        // The traces wait for each interrupt in turn: completions come one step at a time, as
        // simulated time passes (a wait, a poll that does not match yet).
        device_.set_event_pacing(emu::EventPacing::Stepped);
        if (!memory_.ok()) {
            fail(0, "cannot reserve the trace memory (mmap)");
            return outcome_;
        }
        const auto start = std::chrono::steady_clock::now();
        for (const Command& c : t_.commands) execute(c);
        finish();
        outcome_.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return outcome_;
    }

  private:
    void pass(int line, const std::string& what) {
        ++outcome_.passed;
        out_ << "PASS line " << line << ": " << what << "\n";
    }
    void fail(int line, const std::string& what) {
        ++outcome_.failed;
        out_ << "FAIL line " << line << ": " << what << "\n";
    }

    std::string hex(uint64_t v) const {
        char buf[24];
        std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
        return buf;
    }

    // The register a command names, as a byte offset; nullopt (and a failure) if unknown.
    std::optional<uint32_t> register_of(const Command& c) {
        if (c.reg_is_numeric) return c.reg;
        if (const hw::RegisterInfo* r = map_.find(c.name)) return r->address;
        fail(c.line, "register " + c.name + " is not in the " +
                         (cfg_.reg_map == NVDLA_REG_MAP_FULL ? "nv_full" : "nv_small") +
                         " register map");
        return std::nullopt;
    }

    void fill(const Command& c) {
        std::byte* p = memory_.translate(port_of(c), c.address, c.size);
        if (!p) {
            fail(c.line,
                 "mem_init range " + hex(c.address) + "+" + hex(c.size) + " is outside memory");
            return;
        }
        std::mt19937 rng(static_cast<uint32_t>(c.address));  // reproducible "random"
        for (uint64_t i = 0; i < c.size; ++i) {
            uint8_t v = 0;
            switch (c.fill) {
                case Fill::Zero: v = 0x00; break;
                case Fill::Ones: v = 0xff; break;
                case Fill::AFive: v = 0xa5; break;
                case Fill::FiveA: v = 0x5a; break;
                case Fill::Address: v = static_cast<uint8_t>(c.address + i); break;
                case Fill::Random: v = static_cast<uint8_t>(rng()); break;
            }
            p[i] = std::byte{v};
        }
    }

    void load(const Command& c) {
        auto surface = read_surface_file(t_.dir / c.name);
        if (!surface.ok()) {
            fail(c.line, surface.message());
            return;
        }
        // nv_full's load_mem gives a size: load at most that much.
        const uint64_t n =
            c.size ? std::min<uint64_t>(c.size, surface->bytes.size()) : surface->bytes.size();
        std::byte* p = memory_.translate(port_of(c), c.address, n);
        if (!p) {
            fail(c.line, "load of " + c.name + " at " + hex(c.address) + " is outside memory");
            return;
        }
        for (uint64_t i = 0; i < n; ++i)
            if (surface->present[i]) p[i] = std::byte{surface->bytes[i]};
    }

    uint32_t read_register(uint32_t address) { return device_.read_register(address); }

    void check_register(const Command& c, bool poll) {
        const auto address = register_of(c);
        if (!address) return;
        // A poll lets time pass: between reads the next completion step happens. A few reads
        // more stand in for the hardware's own delays (S_CBUF_FLUSH_STATUS after reset).
        uint32_t got = read_register(*address);
        for (int attempt = 0; poll && (got & c.mask) != c.value && attempt < t_.poll_retries;
             ++attempt) {
            if (!device_.advance() && attempt >= 3) break;
            got = read_register(*address);
        }
        const std::string name = c.reg_is_numeric ? describe(*address) : c.name;
        const std::string what =
            (poll ? "poll " : "read ") + name + " & " + hex(c.mask) + " == " + hex(c.value);
        if ((got & c.mask) == c.value)
            pass(c.line, what);
        else
            fail(c.line, what + " (got " + hex(got & c.mask) + ")");
    }

    std::string describe(uint32_t address) const {
        if (const hw::RegisterInfo* r = map_.at(address))
            return std::string(r->unit_name) + "." + std::string(r->name);
        return hex(address);
    }

    void run_check(const Command& c) {
        switch (c.op) {
            case Op::CheckNothing: pass(c.line, "check_nothing(" + c.sync + ")"); return;
            case Op::CheckCrc: {
                const std::byte* p = memory_.translate(c.port, c.address, c.size);
                const std::string what = std::string("crc32 of ") + port_name(c.port) + " " +
                                         hex(c.address) + "+" + hex(c.size);
                if (!p) {
                    fail(c.line, what + " is outside memory");
                    return;
                }
                uLong crc = crc32(0L, Z_NULL, 0);
                for (uint64_t done = 0; done < c.size;) {
                    const uInt n = static_cast<uInt>(std::min<uint64_t>(c.size - done, 1u << 30));
                    crc = crc32(crc, reinterpret_cast<const Bytef*>(p + done), n);
                    done += n;
                }
                if (crc == c.value)
                    pass(c.line, what + " = " + hex(c.value));
                else
                    fail(c.line, what + " = " + hex(crc) + ", expected " + hex(c.value));
                return;
            }
            case Op::CheckFile: {
                auto golden = read_surface_file(t_.dir / c.name);
                if (!golden.ok()) {
                    fail(c.line, golden.message());
                    return;
                }
                const MemoryPort port = port_of(c);
                const std::byte* p = memory_.translate(port, c.address, c.size);
                const std::string what = std::string(port_name(port)) + " " + hex(c.address) + "+" +
                                         hex(c.size) + " == " + c.name;
                if (!p || golden->bytes.size() < c.size) {
                    fail(c.line, what + (p ? ": the golden file is shorter" : ": outside memory"));
                    return;
                }
                uint64_t mismatches = 0, first = 0;
                for (uint64_t i = 0; i < c.size; ++i)
                    if (golden->present[i] && std::to_integer<uint8_t>(p[i]) != golden->bytes[i])
                        if (mismatches++ == 0) first = i;
                if (mismatches == 0) {
                    pass(c.line, what);
                } else {
                    fail(c.line, what + ": " + std::to_string(mismatches) +
                                     " bytes differ, the first at offset " + hex(first) + " (" +
                                     hex(std::to_integer<uint8_t>(p[first])) + ", expected " +
                                     hex(golden->bytes[first]) + ")");
                }
                return;
            }
            default: return;
        }
    }

    // Catches the interrupts the intr_notify queue waits for, in order, as the test bench's
    // interrupt handler does: clear the bit, fire the sync id, run the checks waiting on it.
    void service_interrupts() {
        while (!notify_.empty()) {
            const Command& c = *notify_.front();
            const int b = c.name.empty() ? -1 : interrupt_bit(c.name);
            uint32_t status = read_register(glb_status_);
            auto caught = [&] { return b < 0 ? status != 0 : (status >> b) & 1u; };
            // Let time pass until the interrupt arrives, or nothing is left to happen.
            while (!caught() && device_.advance()) status = read_register(glb_status_);
            if (!caught()) return;
            const uint32_t bit = b < 0 ? status & ~(status - 1) : 1u << b;
            device_.write_register(glb_status_, bit);
            pass(c.line, "interrupt " + (c.name.empty() ? hex(bit) : c.name) + " -> " + c.sync);
            fired_.insert(c.sync);
            notify_.pop_front();
            for (auto it = deferred_.begin(); it != deferred_.end();) {
                if (fired_.count((*it)->sync)) {
                    run_check(**it);
                    it = deferred_.erase(it);
                } else {
                    ++it;
                }
            }
        }
    }

    void execute(const Command& c) {
        switch (c.op) {
            case Op::RegWrite:
                if (auto a = register_of(c)) {
                    device_.write_register(*a, c.value);
                    service_interrupts();
                }
                break;
            case Op::RegRead:
                if (auto a = register_of(c)) read_register(*a);
                break;
            case Op::RegReadCheck: check_register(c, false); break;
            case Op::RegPoll: check_register(c, true); break;
            case Op::MemInit: fill(c); break;
            case Op::MemLoad: load(c); break;
            case Op::IntrNotify:
                if (!c.name.empty() && interrupt_bit(c.name) < 0) {
                    fail(c.line, "unknown interrupt id " + c.name);
                    break;
                }
                notify_.push_back(&c);
                service_interrupts();
                break;
            case Op::Wait: {
                // Time passes until the interrupt line rises.
                while (!device_.interrupt_asserted() && device_.advance()) {
                }
                if (device_.interrupt_asserted())
                    pass(c.line, "wait: interrupt " + hex(read_register(glb_status_)));
                else
                    fail(c.line, "wait: no interrupt is pending and no work is under way");
                break;
            }
            case Op::CheckCrc:
            case Op::CheckFile:
            case Op::CheckNothing:
                if (c.sync.empty() || fired_.count(c.sync))
                    run_check(c);
                else
                    deferred_.push_back(&c);
                break;
            case Op::SyncNotify:
            case Op::SyncWait: break;  // one sequencer replays everything in order
        }
        if (verbose_) out_ << "     line " << c.line << " done\n";
    }

    void finish() {
        service_interrupts();
        for (const Command* c : notify_) fail(c->line, "interrupt " + c->name + " never arrived");
        for (const Command* c : deferred_)
            fail(c->line, "sync " + c->sync + " never fired, check not run");
        const emu::DeviceStats& s = device_.stats();
        const std::string what = "the model reported no DMA fault and no programming error";
        if (s.faults == 0 && s.programming_errors == 0)
            pass(0, what);
        else
            fail(0, what + " (" + std::to_string(s.faults) + " faults, " +
                        std::to_string(s.programming_errors) + " errors; last: " + s.last_error +
                        ")");
    }

    const Trace& t_;
    const HwConfig& cfg_;
    const hw::RegisterMap& map_;
    std::ostream& out_;
    bool verbose_;
    TraceMemory memory_;
    emu::Device device_;
    uint32_t glb_status_ = nvdla_unit_base(cfg_.reg_map, NVDLA_UNIT_GLB) + NVDLA_GLB_S_INTR_STATUS;
    std::deque<const Command*> notify_;
    std::vector<const Command*> deferred_;
    std::set<std::string> fired_;
    Outcome outcome_;
};

}  // namespace

fs::path first_missing_file(const Trace& t) {
    for (const Command& c : t.commands)
        if ((c.op == Op::MemLoad || c.op == Op::CheckFile) && !fs::is_regular_file(t.dir / c.name))
            return c.name;
    return {};
}

Outcome play(const Trace& t, const HwConfig& cfg, std::ostream& out, bool verbose) {
    Player p(t, cfg, out, verbose);
    return p.run();
}

}  // namespace nvdla::trace
