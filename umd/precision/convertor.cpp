// Shape validation and the buffer form of the convertor.
#include "nvdla/precision/convertor.hpp"

#include <algorithm>

namespace nvdla::precision {

Status validate(const ConvertorShape& shape) {
    const struct {
        const char* name;
        unsigned bits;
    } widths[] = {
        {"input", shape.input_bits}, {"offset", shape.offset_bits}, {"output", shape.output_bits}};
    for (const auto& w : widths)
        if (w.bits < 1 || w.bits > 63)
            return error("convertor: ", w.name, " width ", w.bits, " is outside 1..63 bits");
    if (shape.shift_bits < 1 || shape.shift_bits > 6)
        return error("convertor: shifter width ", shape.shift_bits,
                     " is outside 1..6 bits (shifts up to 63)");
    // (x - offset) needs one bit more than the wider operand, times a 16-bit scale.
    const unsigned product_bits = std::max(shape.input_bits, shape.offset_bits) + 1 + 16;
    if (product_bits > 63)
        return error("convertor: (x - offset) * scale needs ", product_bits,
                     " bits; input and offset must be at most 46 bits wide");
    return {};
}

Status convert_to(Precision out_precision, std::span<const int32_t> in, const ConvertorParams& p,
                  const ConvertorShape& shape, std::span<uint16_t> out,
                  PrecisionCounters* counters) {
    if (Status s = validate(shape); !s) return s;
    if (in.size() != out.size())
        return error("convertor: ", in.size(), " input elements but room for ", out.size(),
                     " outputs");
    for (size_t i = 0; i < in.size(); ++i) {
        const ConvertedElement e = convert_to(out_precision, in[i], p, shape);
        out[i] = e.bits;
        if (counters) counters->count_saturation(e.saturated);
    }
    return {};
}

}  // namespace nvdla::precision
