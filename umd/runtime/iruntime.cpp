// nvdla::IRuntime, the original runtime's interface (include/nvdla/IRuntime.h), over the
// runtime of include/nvdla/runtime.hpp.
#include "nvdla/IRuntime.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "loadable.hpp"
#include "nvdla/runtime.hpp"

namespace nvdla {

IRuntime::IRuntime() = default;
IRuntime::~IRuntime() = default;

namespace {

// Bytes readable from `address` to the end of the (contiguous, readable) mappings holding it,
// from /proc/self/maps; 0 when the address is not mapped readable.
uint64_t readable_extent(const void* address) {
    const auto target = reinterpret_cast<uintptr_t>(address);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    uintptr_t end = 0;
    while (std::getline(maps, line)) {
        std::istringstream in(line);
        uintptr_t start = 0, stop = 0;
        char dash = 0;
        std::string permissions;
        if (!(in >> std::hex >> start >> dash >> stop >> permissions)) continue;
        const bool readable = !permissions.empty() && permissions[0] == 'r';
        if (end == 0) {
            if (readable && target >= start && target < stop) end = stop;
        } else if (readable && start == end) {
            end = stop;  // the next mapping continues it
        } else {
            break;
        }
    }
    return end > target ? end - target : 0;
}

bool quiet() {
    const char* v = std::getenv("NVDLA_QUIET");
    return v && std::strcmp(v, "0") != 0 && *v;
}

class CompatRuntime final : public IRuntime {
  public:
    NvU16 getMaxDevices() override { return 1; }

    NvU16 getNumDevices() override { return open().ok() ? 1 : 0; }

    bool initEMU() override { return report(open()); }

    void stopEMU() override {}

    bool load(NvU8* buf, int instance) override {
        if (!buf) return report(error("load: the loadable pointer is null"));
        const uint64_t extent = readable_extent(buf);
        if (extent == 0)
            return report(
                error("load: the loadable pointer does not point to "
                      "readable memory"));
        Result<uint64_t> size =
            runtime::measure_loadable(reinterpret_cast<std::byte*>(buf), extent);
        if (!size) return report(size.status());
        return load(buf, static_cast<size_t>(*size), instance);
    }

    bool load(const NvU8* buf, size_t size, int instance) override {
        unload();
        if (!buf) return report(error("load: the loadable pointer is null"));
        if (instance > 0)
            return report(
                error("load: DLA instance ", instance, " does not exist (there is 1 device)"));
        if (Status s = open(); !s) return report(s);
        Result<std::shared_ptr<Network>> net =
            runtime_->load({reinterpret_cast<const std::byte*>(buf), size});
        if (!net) return report(net.status());
        Result<std::unique_ptr<Context>> ctx = (*net)->create_context();
        if (!ctx) return report(ctx.status());
        network_ = std::move(net).value();
        context_ = std::move(ctx).value();
        return true;
    }

    void unload() override {
        context_.reset();
        network_.reset();
        strides_.clear();
    }

    NvDlaError allocateSystemMemory(void** h_mem, NvU64 size, void** pData) override {
        if (!h_mem || !pData)
            return fail(NvDlaError_BadParameter,
                        "allocateSystemMemory: the handle and data pointers must not be null");
        *h_mem = nullptr;
        *pData = nullptr;
        if (Status s = open(); !s) return fail(NvDlaError_DeviceNotFound, s);
        Result<DeviceBuffer> buffer = runtime_->allocate(size);
        if (!buffer) return fail(NvDlaError_InsufficientMemory, buffer.status());
        void* handle = buffer->impl().get();
        *h_mem = handle;
        *pData = buffer->data();
        allocations_[handle] = std::move(buffer).value();
        return NvDlaSuccess;
    }

    void freeSystemMemory(void* phMem, NvU64 size) override {
        (void)size;
        if (allocations_.erase(phMem) == 0 && phMem)
            report(error("freeSystemMemory: the handle was not allocated here"));
    }

    bool bindInputTensor(int index, void* hMem) override { return bind(true, index, hMem); }
    bool bindOutputTensor(int index, void* hMem) override { return bind(false, index, hMem); }

    NvDlaError getNetworkDataType(uint8_t* type) const override {
        if (!type) return NvDlaError_BadParameter;
        if (!network_) return NvDlaError_InvalidState;
        const auto& tensors = network_->inputs().empty() ? network_->outputs() : network_->inputs();
        *type = tensors.empty() ? TENSOR_DATA_TYPE_UNKNOWN
                                : static_cast<uint8_t>(tensors.front().data_type);
        return NvDlaSuccess;
    }

    NvDlaError getNumInputTensors(int* count) override { return count_tensors(true, count); }
    NvDlaError getNumOutputTensors(int* count) override { return count_tensors(false, count); }
    NvDlaError getInputTensorDesc(int id, NvDlaTensor* td) override {
        return describe(true, id, td);
    }
    NvDlaError getOutputTensorDesc(int id, NvDlaTensor* td) override {
        return describe(false, id, td);
    }
    NvDlaError setInputTensorDesc(int id, const NvDlaTensor* td) override {
        return change(true, id, td);
    }
    NvDlaError setOutputTensorDesc(int id, const NvDlaTensor* td) override {
        return change(false, id, td);
    }

    bool submit() override {
        if (!context_) return report(error("submit: no network is loaded"));
        return report(context_->run());
    }

    const char* getLastError() const override { return last_error_.c_str(); }

  private:
    Status open() {
        if (runtime_) return Status();
        RuntimeOptions options;
        if (const char* config = std::getenv("NVDLA_EMU_CONFIG"); config && *config)
            options.emu_config = config;
        Result<std::unique_ptr<Runtime>> rt = Runtime::open(options);
        if (!rt) return rt.status();
        runtime_ = std::move(rt).value();
        return Status();
    }

    bool report(const Status& s) {
        if (s) return true;
        last_error_ = s.message();
        if (!quiet()) std::fprintf(stderr, "nvdla: %s\n", last_error_.c_str());
        return false;
    }
    NvDlaError fail(NvDlaError code, const Status& s) {
        report(s);
        return code;
    }
    NvDlaError fail(NvDlaError code, const std::string& message) {
        return fail(code, error(message));
    }

    bool bind(bool input, int index, void* handle) {
        const char* what = input ? "bindInputTensor" : "bindOutputTensor";
        if (!context_) return report(error(what, ": no network is loaded"));
        if (index < 0) return report(error(what, ": index ", index, " is negative"));
        auto it = allocations_.find(handle);
        if (it == allocations_.end())
            return report(error(what, ": the handle was not returned by allocateSystemMemory"));
        const auto i = static_cast<uint32_t>(index);
        return report(input ? context_->bind_input(i, it->second)
                            : context_->bind_output(i, it->second));
    }

    const TensorInfo* tensor(bool input, int id, NvDlaError* error) {
        if (!network_) {
            *error = fail(NvDlaError_InvalidState, "no network is loaded");
            return nullptr;
        }
        const auto& tensors = input ? network_->inputs() : network_->outputs();
        if (id < 0 || static_cast<size_t>(id) >= tensors.size()) {
            *error = fail(NvDlaError_BadParameter,
                          std::string(input ? "input " : "output ") + std::to_string(id) +
                              " does not exist: the network has " + std::to_string(tensors.size()));
            return nullptr;
        }
        return &tensors[static_cast<size_t>(id)];
    }

    NvDlaError count_tensors(bool input, int* count) {
        if (!count) return NvDlaError_BadParameter;
        if (!network_) return fail(NvDlaError_InvalidState, "no network is loaded");
        *count = static_cast<int>(input ? network_->inputs().size() : network_->outputs().size());
        return NvDlaSuccess;
    }

    NvDlaError describe(bool input, int id, NvDlaTensor* td) {
        if (!td) return NvDlaError_BadParameter;
        NvDlaError error = NvDlaSuccess;
        const TensorInfo* t = tensor(input, id, &error);
        if (!t) return error;
        *td = descriptor(*t);
        if (auto it = strides_.find({input, id}); it != strides_.end())
            std::memcpy(td->stride, it->second.data(), sizeof td->stride);
        return NvDlaSuccess;
    }

    static NvDlaTensor descriptor(const TensorInfo& t) {
        NvDlaTensor td{};
        std::snprintf(td.name, sizeof td.name, "%s", t.name.c_str());
        td.bufferSize = t.size_bytes;
        td.dims = {static_cast<int>(t.dims.n), static_cast<int>(t.dims.c),
                   static_cast<int>(t.dims.h), static_cast<int>(t.dims.w)};
        td.dataFormat = static_cast<NvU8>(t.layout);
        td.dataType = static_cast<NvU8>(t.data_type);
        td.dataCategory = static_cast<NvU8>(t.category);
        td.pixelFormat = t.pixel_format;
        td.pixelMapping = t.pixel_mapping;
        for (size_t i = 0; i < NVDLA_RUNTIME_TENSOR_DESC_NUM_STRIDES; ++i)
            td.stride[i] = t.strides[i];
        return td;
    }

    // The original's rules: only the strides may change.
    NvDlaError change(bool input, int id, const NvDlaTensor* td) {
        if (!td) return NvDlaError_BadParameter;
        NvDlaError error = NvDlaSuccess;
        const TensorInfo* t = tensor(input, id, &error);
        if (!t) return error;
        NvDlaTensor current{};
        if (NvDlaError e = describe(input, id, &current); e != NvDlaSuccess) return e;
        const std::string what =
            std::string(input ? "setInputTensorDesc " : "setOutputTensorDesc ") +
            std::to_string(id);
        if (std::strncmp(td->name, current.name, sizeof td->name) != 0)
            return fail(NvDlaError_NotSupported, what + ": the name cannot change");
        if (td->dataFormat != current.dataFormat || td->dataType != current.dataType ||
            td->dataCategory != current.dataCategory)
            return fail(NvDlaError_NotImplemented,
                        what + ": the data format, type and category cannot change");
        if (td->pixelFormat != current.pixelFormat || td->pixelMapping != current.pixelMapping)
            return fail(NvDlaError_NotSupported,
                        what + ": the pixel format and mapping cannot change");
        if (td->dims.n != current.dims.n || td->dims.c != current.dims.c ||
            td->dims.h != current.dims.h || td->dims.w != current.dims.w)
            return fail(NvDlaError_NotSupported, what + ": the dimensions cannot change");
        if (!context_) return fail(NvDlaError_InvalidState, "no network is loaded");
        const auto index = static_cast<uint32_t>(id);
        Status s = input ? context_->set_input_strides(index, td->stride[1], td->stride[2])
                         : context_->set_output_strides(index, td->stride[1], td->stride[2]);
        if (!s) return fail(NvDlaError_NotSupported, what + ": " + s.message());
        std::array<NvU32, NVDLA_RUNTIME_TENSOR_DESC_NUM_STRIDES> strides{};
        std::memcpy(strides.data(), td->stride, sizeof td->stride);
        strides_[{input, id}] = strides;
        return NvDlaSuccess;
    }

    std::unique_ptr<Runtime> runtime_;
    std::shared_ptr<Network> network_;
    std::unique_ptr<Context> context_;
    std::map<void*, DeviceBuffer> allocations_;
    std::map<std::pair<bool, int>, std::array<NvU32, NVDLA_RUNTIME_TENSOR_DESC_NUM_STRIDES>>
        strides_;
    std::string last_error_;
};

}  // namespace

IRuntime* createRuntime() {
    return new CompatRuntime();
}

void destroyRuntime(IRuntime* runtime) {
    delete static_cast<CompatRuntime*>(runtime);
}

}  // namespace nvdla
