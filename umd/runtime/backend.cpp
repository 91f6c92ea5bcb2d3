#include <cstdlib>
#include <string>

#include "backend.hpp"

namespace nvdla::runtime {

namespace {

Result<BackendKind> kind_from_environment(BackendKind requested) {
    const char* value = std::getenv("NVDLA_BACKEND");
    if (!value || !*value) return requested;
    const std::string name(value);
    if (name == "emu") return BackendKind::Emu;
    if (name == "drm") return BackendKind::Drm;
    if (name == "auto") return BackendKind::Auto;
    return error("NVDLA_BACKEND=", name, " is not one of emu, drm, auto");
}

}  // namespace

Result<std::unique_ptr<Backend>> open_backend(const BackendOptions& requested) {
    Result<BackendKind> kind = kind_from_environment(requested.kind);
    if (!kind) return kind.status();
    // NVDLA_DEVICE picks the render node (an SoC with several instances) when the
    // application did not.
    BackendOptions options = requested;
    if (const char* device = std::getenv("NVDLA_DEVICE");
        device && *device && options.drm_device.empty())
        options.drm_device = device;
    switch (*kind) {
        case BackendKind::Emu: return open_emu_backend(options);
        case BackendKind::Drm: return open_drm_backend(options);
        case BackendKind::Auto:
            if (!options.drm_device.empty() || !find_nvdla_render_node().empty())
                return open_drm_backend(options);
            return open_emu_backend(options);
    }
    return error("unknown backend kind");
}

}  // namespace nvdla::runtime
