#include "trace.hpp"

#include <cctype>
#include <charconv>
#include <fstream>
#include <string_view>

namespace nvdla::trace {
namespace {

namespace fs = std::filesystem;

// std::isspace of the "C" locale, inlined: the data files are megabytes of short words.
constexpr bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::string_view trim(std::string_view s) {
    size_t b = 0, e = s.size();
    while (b < e && is_space(s[b])) ++b;
    while (e > b && is_space(s[e - 1])) --e;
    return s.substr(b, e - b);
}

bool parse_number(std::string_view s, uint64_t& out) {
    std::string_view digits = trim(s);
    int base = 10;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        base = 16;
        digits.remove_prefix(2);
    }
    if (digits.empty()) return false;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out, base);
    return ec == std::errc() && p == digits.data() + digits.size();
}

// Cuts `rest` at the first `separator`: returns what is before it and drops it from `rest`.
// False once `rest` is used up (as std::getline: a last piece without a separator counts).
bool next_piece(std::string_view& rest, char separator, std::string_view& piece) {
    if (rest.empty()) return false;
    const size_t end = rest.find(separator);
    piece = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    return true;
}

// The next whitespace-separated word of `rest` (as `istream >> std::string`), without copies.
bool next_word(std::string_view& rest, std::string_view& word) {
    size_t b = 0;
    while (b < rest.size() && is_space(rest[b])) ++b;
    size_t e = b;
    while (e < rest.size() && !is_space(rest[e])) ++e;
    word = rest.substr(b, e - b);
    rest.remove_prefix(e);
    return !word.empty();
}

Result<std::string> read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return error(path.string(), ": cannot open");
    // Read in one piece into a string of the file's size: growing it by chunks cost a third
    // of a replay in copies and page faults.
    std::error_code ec;
    const uintmax_t size = fs::file_size(path, ec);
    if (ec) return error(path.string(), ": cannot read its size (", ec.message(), ")");
    std::string text(size, '\0');
    in.read(text.data(), static_cast<std::streamsize>(size));
    if (static_cast<uintmax_t>(in.gcount()) != size)
        return error(path.string(), ": read ", in.gcount(), " of its ", size, " bytes");
    return text;
}

// ---- nv_small: name(arg, arg, ...);
Status parse_cfg_line(std::string_view raw, int line, std::vector<Command>& out) {
    std::string_view text = raw.substr(0, raw.find("//"));
    text = trim(text);
    if (text.empty()) return {};
    const size_t open = text.find('('), close = text.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open)
        return error("line ", line, ": cannot parse '", text, "'");
    const std::string verb(trim(text.substr(0, open)));
    std::vector<std::string> args;
    std::string_view list = text.substr(open + 1, close - open - 1);
    for (std::string_view a; next_piece(list, ',', a);) {
        a = trim(a);
        if (a.size() >= 2 && a.front() == '"' && a.back() == '"') a = a.substr(1, a.size() - 2);
        args.emplace_back(a);
    }
    auto number = [&](size_t i, uint64_t& v) -> Status {
        if (i >= args.size() || !parse_number(args[i], v))
            return error("line ", line, ": argument ", i + 1, " of ", verb, " is not a number");
        return {};
    };
    auto want = [&](size_t n) -> Status {
        if (args.size() < n) return error("line ", line, ": ", verb, " needs ", n, " arguments");
        return {};
    };
    auto port = [&](const std::string& mem, emu::MemoryPort& p) -> Status {
        // "1" appears for the primary memory in some traces (the test bench's enum value).
        if (mem == "pri_mem" || mem == "1")
            p = emu::MemoryPort::Primary;
        else if (mem == "sec_mem" || mem == "2")
            p = emu::MemoryPort::Secondary;
        else
            return error("line ", line, ": unknown memory '", mem, "'");
        return {};
    };

    Command c{};
    c.line = line;
    uint64_t v = 0;
    if (verb == "reg_write" || verb == "reg_read_check" || verb == "reg_read_expected" ||
        verb == "poll_reg_equal" || verb == "reg_read") {
        if (Status s = want(2); !s) return s;
        c.name = args[0];
        c.op = verb == "reg_write"        ? Op::RegWrite
               : verb == "poll_reg_equal" ? Op::RegPoll
               : verb == "reg_read"       ? Op::RegRead
                                          : Op::RegReadCheck;
        if (c.op != Op::RegRead) {
            if (Status s = number(1, v); !s) return s;
            c.value = static_cast<uint32_t>(v);
        }
    } else if (verb == "sync_notify" || verb == "sync_wait") {
        c.op = verb == "sync_notify" ? Op::SyncNotify : Op::SyncWait;
        c.sync = args.empty() ? "" : args.back();
    } else if (verb == "intr_notify") {
        c.op = Op::IntrNotify;
        if (args.size() == 1) {
            c.sync = args[0];
        } else {
            if (Status s = want(2); !s) return s;
            c.name = args[0];
            c.sync = args[1];
        }
    } else if (verb == "mem_init") {
        if (Status s = want(4); !s) return s;
        c.op = Op::MemInit;
        if (Status s = port(args[0], c.port); !s) return s;
        if (Status s = number(1, c.address); !s) return s;
        if (Status s = number(2, c.size); !s) return s;
        const std::string& p = args[3];
        c.fill = p == "ALL_ZERO" ? Fill::Zero
                 : p == "ONES"   ? Fill::Ones
                 : p == "AFIVE"  ? Fill::AFive
                 : p == "FIVEA"  ? Fill::FiveA
                 : p == "ADDR"   ? Fill::Address
                 : p == "RANDOM" ? Fill::Random
                                 : Fill::Zero;
        if (p != "ALL_ZERO" && p != "ONES" && p != "AFIVE" && p != "FIVEA" && p != "ADDR" &&
            p != "RANDOM")
            return error("line ", line, ": unknown fill pattern '", p, "'");
    } else if (verb == "mem_load") {
        if (Status s = want(3); !s) return s;
        c.op = Op::MemLoad;
        if (Status s = port(args[0], c.port); !s) return s;
        if (Status s = number(1, c.address); !s) return s;
        c.name = args[2];
    } else if (verb == "mem_reserve" || verb == "mem_release") {
        return {};  // allocation hints of the test bench: memory here is always there
    } else if (verb == "check_crc" || verb == "check_file") {
        if (Status s = want(5); !s) return s;
        c.op = verb == "check_crc" ? Op::CheckCrc : Op::CheckFile;
        c.sync = args[0];
        if (Status s = port(args[1], c.port); !s) return s;
        if (Status s = number(2, c.address); !s) return s;
        if (Status s = number(3, c.size); !s) return s;
        if (c.op == Op::CheckCrc) {
            if (Status s = number(4, v); !s) return s;
            c.value = static_cast<uint32_t>(v);
        } else {
            c.name = args[4];
        }
    } else if (verb == "check_nothing") {
        if (Status s = want(1); !s) return s;
        c.op = Op::CheckNothing;
        c.sync = args[0];
    } else {
        return error("line ", line, ": unknown command '", verb, "'");
    }
    out.push_back(c);
    return {};
}

// ---- nv_full: verb args... #comment
Status parse_txn_line(std::string_view raw, int line, std::vector<Command>& out) {
    std::string_view text = raw.substr(0, raw.find('#'));
    std::vector<std::string_view> tok;
    for (std::string_view t; next_word(text, t);) tok.push_back(t);
    if (tok.empty()) return {};
    auto number = [&](size_t i, uint64_t& v) -> Status {
        if (i >= tok.size() || !parse_number(tok[i], v))
            return error("line ", line, ": argument ", i, " of ", tok[0], " is not a number");
        return {};
    };
    Command c{};
    c.line = line;
    uint64_t v = 0;
    if (tok[0] == "write_reg" || tok[0] == "read_reg") {
        if (Status s = number(1, v); !s) return s;
        if ((v >> 16) != 0xffff)
            return error("line ", line, ": register address ", tok[1],
                         " is not of the form 0xffffWWWW");
        c.reg = static_cast<uint32_t>(v & 0xffff) * 4;  // word address -> byte offset
        c.reg_is_numeric = true;
        if (tok[0] == "write_reg") {
            c.op = Op::RegWrite;
            if (Status s = number(2, v); !s) return s;
            c.value = static_cast<uint32_t>(v);
        } else {
            c.op = Op::RegPoll;
            if (Status s = number(2, v); !s) return s;
            c.mask = static_cast<uint32_t>(v);
            if (Status s = number(3, v); !s) return s;
            c.value = static_cast<uint32_t>(v);
        }
    } else if (tok[0] == "load_mem" || tok[0] == "dump_mem") {
        c.op = tok[0] == "load_mem" ? Op::MemLoad : Op::CheckFile;
        if (Status s = number(1, c.address); !s) return s;
        if (Status s = number(2, c.size); !s) return s;
        if (tok.size() < 4) return error("line ", line, ": ", tok[0], " needs a file");
        c.name = std::string(tok[3]);
        c.port_from_address = true;
    } else if (tok[0] == "wait") {
        c.op = Op::Wait;
    } else {
        return error("line ", line, ": unknown command '", tok[0], "'");
    }
    out.push_back(c);
    return {};
}

}  // namespace

Result<std::vector<Command>> parse_commands(Trace::Format format, std::string_view text,
                                            const std::string& file_name) {
    std::vector<Command> commands;
    int line = 0;
    for (std::string_view l; next_piece(text, '\n', l);) {
        ++line;
        const Status s = format == Trace::Format::NvSmallCfg ? parse_cfg_line(l, line, commands)
                                                             : parse_txn_line(l, line, commands);
        if (!s) return error(file_name, " ", s.message());
    }
    return commands;
}

Result<Trace> load_trace(const fs::path& given) {
    // "dir/" (as shell completion writes it) names the same trace as "dir".
    const fs::path dir = given.has_filename() ? given : given.parent_path();
    Trace t;
    t.dir = dir;
    const fs::path cfg = dir / (dir.filename().string() + ".cfg");
    const fs::path txn = dir / "input.txn";
    if (fs::is_regular_file(cfg)) {
        t.format = Trace::Format::NvSmallCfg;
        t.file = cfg;
    } else if (fs::is_regular_file(txn)) {
        t.format = Trace::Format::NvFullTxn;
        t.file = txn;
    } else {
        return error(dir.string(), ": no trace (", cfg.filename().string(), " or input.txn)");
    }
    auto text = read_text(t.file);
    if (!text.ok()) return text.status();
    auto commands = parse_commands(t.format, *text, t.file.filename().string());
    if (!commands.ok()) return commands.status();
    t.commands = std::move(*commands);
    if (fs::is_regular_file(dir / "plusargs.txt")) {
        auto plus = read_text(dir / "plusargs.txt");
        const std::string key = "+read_reg_poll_retries=";
        if (plus.ok())
            if (size_t p = plus->find(key); p != std::string::npos) {
                uint64_t n = 0;
                std::string digits;
                for (size_t i = p + key.size();
                     i < plus->size() && std::isdigit(static_cast<unsigned char>((*plus)[i])); ++i)
                    digits += (*plus)[i];
                if (parse_number(digits, n))
                    t.poll_retries = static_cast<int>(std::min<uint64_t>(n, 1000000));
            }
    }
    return t;
}

Result<Surface> read_surface_file(const fs::path& path) {
    auto text = read_text(path);
    if (!text.ok()) return text.status();
    return parse_surface(*text, path.filename().string());
}

Result<Surface> parse_surface(std::string_view text, const std::string& name, uint64_t max_extent) {
    Surface s;
    std::string_view rest = text;
    int line = 0;
    const bool packets = text.find("offset:") != std::string_view::npos;
    if (!packets) {
        // A dump's bytes take about five characters each ("0xNN ").
        s.bytes.reserve(text.size() / 5);
        s.present.reserve(text.size() / 5);
    }
    for (std::string_view l; next_piece(rest, '\n', l);) {
        ++line;
        if (packets) {
            const size_t o = l.find("offset:"), z = l.find("size:"), p = l.find("payload:");
            if (o == std::string::npos) continue;
            if (z == std::string::npos || p == std::string::npos)
                return error(name, " line ", line, ": malformed packet");
            uint64_t offset = 0, size = 0;
            if (!parse_number(l.substr(o + 7, l.find(',', o) - o - 7), offset) ||
                !parse_number(l.substr(z + 5, l.find(',', z) - z - 5), size))
                return error(name, " line ", line, ": malformed packet");
            std::string_view bytes = l.substr(p + 8);
            std::vector<uint8_t> payload;
            for (std::string_view b; next_word(bytes, b);) {
                while (!b.empty() && (b.back() == ',' || b.back() == '}')) b.remove_suffix(1);
                if (b.empty()) continue;
                uint64_t v;
                if (!parse_number(b, v) || v > 0xff)
                    return error(name, " line ", line, ": '", b, "' is not a byte");
                payload.push_back(static_cast<uint8_t>(v));
            }
            if (payload.size() != size)
                return error(name, " line ", line, ": payload of ", payload.size(),
                             " bytes does not match size ", size);
            if (offset > max_extent || size > max_extent - offset)
                return error(name, " line ", line, ": packet at offset ", offset,
                             " ends beyond the ", max_extent, " bytes a surface may span");
            if (s.bytes.size() < offset + size) {
                s.bytes.resize(offset + size);
                s.present.resize(offset + size);
            }
            for (size_t i = 0; i < payload.size(); ++i) {
                s.bytes[offset + i] = payload[i];
                s.present[offset + i] = true;
            }
        } else {
            // Dumps: data lines are bytes ("0x35 0x56 ..."); everything else is a header or a
            // separator ("Data_size = 0x1000", "=====", "dump done").
            std::string_view bytes = trim(l);
            if (!bytes.starts_with("0x") || bytes.find('=') != std::string_view::npos) continue;
            for (std::string_view b; next_word(bytes, b);) {
                uint64_t v;
                if (!parse_number(b, v) || v > 0xff)
                    return error(name, " line ", line, ": '", b, "' is not a byte");
                s.bytes.push_back(static_cast<uint8_t>(v));
                s.present.push_back(true);
            }
        }
    }
    return s;
}

}  // namespace nvdla::trace
