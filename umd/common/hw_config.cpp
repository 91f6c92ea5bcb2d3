#include "nvdla/hw_config.hpp"

namespace nvdla {

std::span<const HwConfig> hw_configs() {
    size_t n = 0;
    while (nvdla_hw_configs[n].name) ++n;
    return {nvdla_hw_configs, n};
}

Result<const HwConfig*> find_hw_config(std::string_view name) {
    std::string known;
    for (const HwConfig& cfg : hw_configs()) {
        if (name == cfg.name) return &cfg;
        known += known.empty() ? "" : ", ";
        known += cfg.name;
    }
    return error("unknown hardware configuration '", name, "' (known: ", known, ")");
}

bool supports(const HwConfig& cfg, Precision p) {
    switch (p) {
        case Precision::Int8: return nvdla_hw_has(&cfg, NVDLA_FEATURE_INT8);
        case Precision::Int16: return nvdla_hw_has(&cfg, NVDLA_FEATURE_INT16);
        case Precision::Fp16: return nvdla_hw_has(&cfg, NVDLA_FEATURE_FP16);
    }
    return false;
}

}  // namespace nvdla
