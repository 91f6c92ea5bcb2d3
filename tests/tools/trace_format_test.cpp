// The hardware trace formats of nvdla_trace (tools/nvdla_trace/trace.hpp) parsed from text:
// commands of both grammars, surface dumps and packet files, and the sentences of bad input.
#include <gtest/gtest.h>

#include <string>

#include "trace.hpp"

namespace {

using nvdla::trace::Op;
using nvdla::trace::parse_commands;
using nvdla::trace::parse_surface;
using nvdla::trace::Trace;

TEST(TraceFormat, DumpSkipsHeadersAndReadsEveryByteWhateverTheLineEnds) {
    const auto s = parse_surface(
        "W=0x3\nData_size = 0x6\n0x01 0x02\t0xff\r\n  0x0 0x80 0X7f\n=====\ndump done", "d.dat");
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(s->bytes, (std::vector<uint8_t>{0x01, 0x02, 0xff, 0x00, 0x80, 0x7f}));
    EXPECT_EQ(s->present, std::vector<bool>(6, true));
}

TEST(TraceFormat, DumpWordThatIsNotAByteIsNamed) {
    const auto s = parse_surface("0x01 0x02\n0x03 0x100 0x04\n", "d.dat");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(), "d.dat line 2: '0x100' is not a byte");
    const auto t = parse_surface("0x01 0xg1\n", "d.dat");
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.message(), "d.dat line 1: '0xg1' is not a byte");
}

TEST(TraceFormat, PacketsFillTheirOffsetsAndLeaveGapsAbsent) {
    const auto s = parse_surface(
        "{offset:0x4, size:2, payload:0x0a 0x0b},\n"
        "{offset:0x0, size:0x1, payload:0x0c}\n",
        "p.dat");
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(s->bytes, (std::vector<uint8_t>{0x0c, 0, 0, 0, 0x0a, 0x0b}));
    EXPECT_EQ(s->present, (std::vector<bool>{true, false, false, false, true, true}));
}

TEST(TraceFormat, PacketsMustMatchTheirSizeAndEndWithinTheExtent) {
    const auto short_payload = parse_surface("{offset:0x0, size:3, payload:0x01 0x02}\n", "p.dat");
    ASSERT_FALSE(short_payload.ok());
    EXPECT_EQ(short_payload.message(), "p.dat line 1: payload of 2 bytes does not match size 3");

    const std::string last_byte = "{offset:0xf, size:1, payload:0x01}\n";
    EXPECT_TRUE(parse_surface(last_byte, "p.dat", 16).ok());
    const auto beyond = parse_surface(last_byte, "p.dat", 15);
    ASSERT_FALSE(beyond.ok());
    EXPECT_EQ(beyond.message(),
              "p.dat line 1: packet at offset 15 ends beyond the 15 bytes a "
              "surface may span");
    // The default extent is the 32-bit address space; an offset past it allocates nothing.
    const auto far = parse_surface("{offset:0xffffffff, size:2, payload:0x01 0x02}\n", "p.dat");
    ASSERT_FALSE(far.ok());
    EXPECT_NE(far.message().find("ends beyond the 4294967296 bytes"), std::string::npos);

    const auto malformed = parse_surface("{offset:0x0, payload:0x01}\n", "p.dat");
    ASSERT_FALSE(malformed.ok());
    EXPECT_EQ(malformed.message(), "p.dat line 1: malformed packet");
}

TEST(TraceFormat, CfgCommandsTakeQuotedArgumentsAndComments) {
    const auto c = parse_commands(Trace::Format::NvSmallCfg,
                                  "// header\n"
                                  "reg_write(NVDLA_SDP.D_OP_ENABLE_0, 0x1); // go\n"
                                  "\n"
                                  "mem_load( pri_mem , 0x80000000 , \"in.dat\" );\n"
                                  "check_crc(s0, sec_mem, 0x100, 64, 0xdeadbeef);\n",
                                  "t.cfg");
    ASSERT_TRUE(c.ok()) << c.message();
    ASSERT_EQ(c->size(), 3u);
    EXPECT_EQ((*c)[0].op, Op::RegWrite);
    EXPECT_EQ((*c)[0].name, "NVDLA_SDP.D_OP_ENABLE_0");
    EXPECT_EQ((*c)[0].value, 1u);
    EXPECT_EQ((*c)[0].line, 2);
    EXPECT_EQ((*c)[1].op, Op::MemLoad);
    EXPECT_EQ((*c)[1].name, "in.dat");
    EXPECT_EQ((*c)[1].address, 0x80000000u);
    EXPECT_EQ((*c)[1].line, 4);
    EXPECT_EQ((*c)[2].op, Op::CheckCrc);
    EXPECT_EQ((*c)[2].port, nvdla::emu::MemoryPort::Secondary);
    EXPECT_EQ((*c)[2].size, 64u);
    EXPECT_EQ((*c)[2].value, 0xdeadbeefu);
}

TEST(TraceFormat, TxnCommandsUseWordAddressesAndIgnoreComments) {
    const auto c = parse_commands(Trace::Format::NvFullTxn,
                                  "# load_mem(addr, offset, file)\n"
                                  "load_mem 0x50064080 0xb480 input.dat \r\n"
                                  "write_reg 0xffff2c01 0x5 #NVDLA_SDP.S_POINTER_0\n"
                                  "read_reg 0xffff2c01 0x00010001 0x1\n"
                                  "wait\n",
                                  "input.txn");
    ASSERT_TRUE(c.ok()) << c.message();
    ASSERT_EQ(c->size(), 4u);
    EXPECT_EQ((*c)[0].op, Op::MemLoad);
    EXPECT_EQ((*c)[0].name, "input.dat");
    EXPECT_EQ((*c)[0].size, 0xb480u);
    EXPECT_EQ((*c)[1].op, Op::RegWrite);
    EXPECT_EQ((*c)[1].reg, 0x2c01u * 4);
    EXPECT_EQ((*c)[1].value, 5u);
    EXPECT_EQ((*c)[2].op, Op::RegPoll);
    EXPECT_EQ((*c)[2].mask, 0x00010001u);
    EXPECT_EQ((*c)[3].op, Op::Wait);
}

TEST(TraceFormat, BadCommandsAreNamedWithTheirFileAndLine) {
    const auto unknown = parse_commands(Trace::Format::NvFullTxn, "wait\nfly 0x1\n", "input.txn");
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.message(), "input.txn line 2: unknown command 'fly'");
    const auto address = parse_commands(Trace::Format::NvFullTxn, "write_reg 0x2c01 0x5\n", "x");
    ASSERT_FALSE(address.ok());
    EXPECT_EQ(address.message(), "x line 1: register address 0x2c01 is not of the form 0xffffWWWW");
    const auto cfg = parse_commands(Trace::Format::NvSmallCfg, "reg_write(A, zz);\n", "t.cfg");
    ASSERT_FALSE(cfg.ok());
    EXPECT_EQ(cfg.message(), "t.cfg line 1: argument 2 of reg_write is not a number");
    const auto paren = parse_commands(Trace::Format::NvSmallCfg, "reg_write A, 1;\n", "t.cfg");
    ASSERT_FALSE(paren.ok());
    EXPECT_EQ(paren.message(), "t.cfg line 1: cannot parse 'reg_write A, 1;'");
}

}  // namespace
