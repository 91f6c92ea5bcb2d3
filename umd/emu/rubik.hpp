// RUBIK: data reshaping (contract, split, merge).
#pragma once

#include "emu/unit.hpp"

namespace nvdla::emu {

class Rubik {
  public:
    void reset() {}
    void execute(Context& ctx, Group rbk);
};

}  // namespace nvdla::emu
