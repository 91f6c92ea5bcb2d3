// LUT register helpers, the priority selection and the statistics counters.
#include "nvdla/precision/lut.hpp"

#include <bit>
#include <limits>

namespace nvdla::precision {

int64_t lut_register_from_float(float f) {
    return std::bit_cast<uint32_t>(f);
}

float lut_register_to_float(int64_t reg) {
    return std::bit_cast<float>(static_cast<uint32_t>(static_cast<uint64_t>(reg)));
}

int cdp_index_select(int8_t field, Precision data_precision) {
    const auto bits = static_cast<uint32_t>(static_cast<uint8_t>(field));
    const unsigned sign_bit = data_precision == Precision::Int8 ? 5 : 6;
    if (bits & (1u << sign_bit)) return static_cast<int32_t>(bits | (0xffffffffu << sign_bit));
    return static_cast<int>(bits);
}

LutOutcome lut_select(const LutProgram& lut, LutHit le, LutHit lo) {
    LutOutcome o{le, lo, LutTable::Le};
    if (le == LutHit::Underflow && lo == LutHit::Underflow) {
        o.selected = lut.underflow_priority;
    } else if (le == LutHit::Overflow && lo == LutHit::Overflow) {
        o.selected = lut.overflow_priority;
    } else if ((le == LutHit::Hit) != (lo == LutHit::Hit)) {
        o.selected = le == LutHit::Hit ? LutTable::Le : LutTable::Lo;
    } else {  // both hit, or one underflows and the other overflows
        o.selected = lut.hybrid_priority;
    }
    return o;
}

namespace {

void bump(uint32_t& counter) {
    if (counter != std::numeric_limits<uint32_t>::max()) ++counter;
}

}  // namespace

void LutStatistics::count_sdp(const LutOutcome& o) {
    if (o.le == LutHit::Hit) bump(le_hit);
    if (o.lo == LutHit::Hit) bump(lo_hit);
    switch (o.selected_hit()) {
        case LutHit::Hit: bump(hybrid); break;
        case LutHit::Underflow: bump(underflow); break;
        case LutHit::Overflow: bump(overflow); break;
    }
}

void LutStatistics::count_cdp(const LutOutcome& o) {
    if (o.le == LutHit::Underflow && o.lo == LutHit::Underflow) {
        bump(underflow);
    } else if (o.le == LutHit::Overflow && o.lo == LutHit::Overflow) {
        bump(overflow);
    } else if ((o.le == LutHit::Hit) != (o.lo == LutHit::Hit)) {
        bump(o.le == LutHit::Hit ? le_hit : lo_hit);
    } else {
        bump(hybrid);
    }
}

}  // namespace nvdla::precision
