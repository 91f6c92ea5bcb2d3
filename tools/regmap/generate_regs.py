#!/usr/bin/env python3
"""Generates the register description of both NVDLA register maps.

Inputs (facts only; nothing of them is copied but names, offsets, bit positions and values):
  --rdl DIR      the nv_small-family register descriptions (hw/spec/manual/NVDLA_*.rdl of the
                 hardware tree's master branch; ../shared/hw/spec/manual here)
  --full FILE    the nv_full register header (cmod/include/arnvdla.h of the nvdlav1 branch)

Outputs, in include/nvdla/hw/ (X-macro lists, consumed by C and C++ alike):
  nvdla_regs.def    NVDLA_REG(unit, name, offset, full_read_mask, full_write_mask, full_reset,
                              small_read_mask, small_write_mask, small_reset)
                    offsets are relative to the unit's base; a mask of 0 means the register
                    does not exist in that map
  nvdla_fields.def  NVDLA_FIELD(unit, reg, field, msb, lsb) and
                    NVDLA_ENUM(unit, reg, field, value_name, value)
  nvdla_units.def   NVDLA_UNIT(unit, full_base, small_base); a base of 0xffffffff means absent

Run from the repository root after changing an input:
  tools/regmap/generate_regs.py --rdl ../shared/hw/spec/manual --full /path/to/arnvdla.h
"""
import argparse
import glob
import os
import re
import sys

ABSENT = 0xFFFFFFFF
UNITS = ["CFGROM", "GLB", "GEC", "MCIF", "CVIF", "BDMA", "CDMA", "CSC", "CMAC_A", "CMAC_B",
         "CACC", "SDP_RDMA", "SDP", "PDP_RDMA", "PDP", "CDP_RDMA", "CDP", "RBK"]


def parse_rdl(directory):
    """Returns ({unit: base}, {unit: [register]}) with register = dict(name, offset, read,
    write, reset, fields=[(name, msb, lsb, [(enum name, value)])])."""
    bases, registers = {}, {}
    for path in sorted(glob.glob(os.path.join(directory, "NVDLA_*.rdl"))):
        text = open(path).read()
        unit_match = re.search(r"regs_NVDLA_(\w+)\s+NVDLA_\w+\s*@(0x[0-9a-fA-F]+)", text)
        if not unit_match:
            sys.exit(f"{path}: no address map")
        unit, base = unit_match.group(1), int(unit_match.group(2), 16)
        bases[unit] = base
        regs = []
        next_offset = 0
        for reg in re.finditer(r"\breg\s*\{(.*?)\n    \}\s*(\w+)\s*(?:@(0x[0-9a-fA-F]+))?\s*;",
                               text, re.S):
            body, name, at = reg.group(1), reg.group(2), reg.group(3)
            offset = int(at, 16) if at else next_offset  # registers without @ follow on
            next_offset = offset + 4
            enums = {}
            for e in re.finditer(r"enum\s+(\w+)\s*\{(.*?)\};", body, re.S):
                values = [(v.group(1), int(v.group(3), 16 if v.group(2) == "h" else 10))
                          for v in re.finditer(r"(\w+)\s*=\s*\d+'([dh])([0-9a-fA-F]+)\s*;",
                                               e.group(2))]
                enums[e.group(1)] = values
            read = write = reset = 0
            fields = []
            for f in re.finditer(r"field\s*\{(.*?)\}\s*(\w+)\[(\d+):(\d+)\]", body, re.S):
                fbody, fname, msb, lsb = f.group(1), f.group(2), int(f.group(3)), int(f.group(4))
                mask = ((1 << (msb - lsb + 1)) - 1) << lsb
                sw = re.search(r"\bsw\s*=\s*(\w+)", fbody).group(1)
                reset_match = re.search(r"\breset\s*=\s*(0x[0-9a-fA-F]+|\d+)", fbody)
                if "r" in sw:
                    read |= mask
                if "w" in sw:
                    write |= mask
                if reset_match:
                    reset |= (int(reset_match.group(1), 0) << lsb) & mask
                encode = re.search(r"\bencode\s*=\s*(\w+)", fbody)
                fields.append((fname, msb, lsb, enums.get(encode.group(1), []) if encode else []))
            regs.append(dict(name=name, offset=offset, read=read, write=write, reset=reset,
                             fields=fields))
        registers[unit] = regs
    return bases, registers


def parse_full(path):
    """Returns ({unit: base}, {(unit, name): (offset, read, write, reset)}) from arnvdla.h."""
    text = open(path).read()
    absolute = {}
    for m in re.finditer(r"#define NVDLA_(\w+?)_0\s+_MK_ADDR_CONST\((0x[0-9a-fA-F]+)\)", text):
        full_name = m.group(1)

        def mask(kind, full_name=full_name):
            found = re.search(r"#define NVDLA_" + full_name + r"_0_" + kind +
                              r"\s+_MK_MASK_CONST\((0x[0-9a-fA-F]+)\)", text)
            return int(found.group(1), 16)

        absolute[full_name] = (int(m.group(2), 16), mask("READ_MASK"), mask("WRITE_MASK"),
                               mask("RESET_VAL"))
    enums = {}  # "UNIT_REG_0_FIELD_VALUE" -> value
    for m in re.finditer(r"#define NVDLA_(\w+)\s+_MK_ENUM_CONST\((\d+)\)", text):
        enums[m.group(1)] = int(m.group(2))
    bases, regs = {}, {}
    for full_name, (address, read, write, reset) in absolute.items():
        unit = next((u for u in sorted(UNITS, key=len, reverse=True)
                     if full_name.startswith(u + "_")), None)
        if unit is None:
            sys.exit(f"{path}: register {full_name} belongs to no known unit")
        base = address & ~0xFFF
        if bases.setdefault(unit, base) != base:
            sys.exit(f"{path}: {full_name} is outside unit {unit}'s window")
        regs[(unit, full_name[len(unit) + 1:])] = (address - base, read, write, reset)
    return bases, regs, enums


def full_enum_values(enums, unit, reg, field, other_fields):
    """Named values of a field that the nv_full header has (some the RDL leaves out)."""
    prefix = f"{unit}_{reg}_0_{field}_"
    longer = [f for f in other_fields if f != field and f.startswith(field + "_")]
    values = []
    for key, value in enums.items():
        if not key.startswith(prefix):
            continue
        if any(key.startswith(f"{unit}_{reg}_0_{f}_") for f in longer):
            continue  # belongs to a field whose name extends this one
        values.append((key[len(prefix):], value))
    return sorted(values, key=lambda v: (v[1], v[0]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rdl", required=True)
    parser.add_argument("--full", required=True)
    parser.add_argument("--out", default="include/nvdla/hw")
    args = parser.parse_args()

    small_bases, small = parse_rdl(args.rdl)
    full_bases, full, full_enums = parse_full(args.full)
    header = ("/* Generated by tools/regmap/generate_regs.py from the nv_small-family register\n"
              " * descriptions (hw/spec/manual/NVDLA_<unit>.rdl) and the nv_full register header; do not edit. */\n")

    with open(os.path.join(args.out, "nvdla_units.def"), "w") as out:
        out.write(header + "/* NVDLA_UNIT(unit, full_base, small_base) */\n")
        for unit in UNITS:
            out.write("NVDLA_UNIT(%s, 0x%05x, 0x%05x)\n" % (
                unit, full_bases.get(unit, ABSENT), small_bases.get(unit, ABSENT)))

    seen = set()
    with open(os.path.join(args.out, "nvdla_regs.def"), "w") as out, \
            open(os.path.join(args.out, "nvdla_fields.def"), "w") as fields_out:
        out.write(header + "/* NVDLA_REG(unit, name, offset, full_read_mask, full_write_mask, "
                  "full_reset,\n *           small_read_mask, small_write_mask, small_reset) */\n")
        fields_out.write(header + "/* NVDLA_FIELD(unit, reg, field, msb, lsb)\n"
                         " * NVDLA_ENUM(unit, reg, field, value_name, value) */\n")
        for unit in UNITS:
            for reg in small.get(unit, []):
                name = reg["name"]
                f_offset, f_read, f_write, f_reset = full.get((unit, name), (None, 0, 0, 0))
                if f_offset is not None and f_offset != reg["offset"]:
                    sys.exit(f"{unit}.{name}: offset 0x{reg['offset']:x} in the RDL but "
                             f"0x{f_offset:x} in the nv_full header")
                seen.add((unit, name))
                out.write("NVDLA_REG(%s, %s, 0x%03x, 0x%08x, 0x%08x, 0x%08x, 0x%08x, 0x%08x, 0x%08x)\n" % (
                    unit, name, reg["offset"], f_read, f_write, f_reset,
                    reg["read"], reg["write"], reg["reset"]))
                field_names = [f[0] for f in reg["fields"]]
                for fname, msb, lsb, values in reg["fields"]:
                    fields_out.write("NVDLA_FIELD(%s, %s, %s, %d, %d)\n" % (unit, name, fname, msb, lsb))
                    if not values:
                        values = full_enum_values(full_enums, unit, name, fname, field_names)
                    for vname, value in values:
                        fields_out.write("NVDLA_ENUM(%s, %s, %s, %s, %d)\n" % (unit, name, fname, vname, value))
        for (unit, name), (offset, read, write, reset) in sorted(full.items()):
            if (unit, name) not in seen:  # only in nv_full
                out.write("NVDLA_REG(%s, %s, 0x%03x, 0x%08x, 0x%08x, 0x%08x, 0x%08x, 0x%08x, 0x%08x)\n" % (
                    unit, name, offset, read, write, reset, 0, 0, 0))


if __name__ == "__main__":
    main()
