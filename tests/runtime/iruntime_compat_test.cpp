// The original runtime interface (nvdla/IRuntime.h). The first part is a small application
// written against that API only, the way nvdla/sw's nvdla_runtime used it; the tests run it and
// then go through every call's error paths.
#include "nvdla/IRuntime.h"

#include <cstdio>
#include <cstring>
#include <vector>

// ---- the application: original API only ----

namespace legacy_app {

struct Outcome {
    bool ok = false;
    NvDlaError error = NvDlaSuccess;
    std::vector<NvU8> output;
    nvdla::IRuntime::NvDlaTensor output_desc;
};

// Loads `loadable`, fills input 0 (if any) with `input`, submits, reads output 0.
inline Outcome run_network(NvU8* loadable, const std::vector<NvU8>& input) {
    Outcome out{};
    nvdla::IRuntime* runtime = nvdla::createRuntime();
    if (!runtime) return out;
    void* in_handle = NULL;
    void* in_data = NULL;
    void* out_handle = NULL;
    void* out_data = NULL;
    int inputs = 0, outputs = 0;
    nvdla::IRuntime::NvDlaTensor in_desc;
    if (runtime->getMaxDevices() != 1 || runtime->getNumDevices() != 1) goto done;
    if (!runtime->load(loadable, 0)) goto done;
    if (!runtime->initEMU()) goto done;
    if ((out.error = runtime->getNumInputTensors(&inputs)) != NvDlaSuccess) goto done;
    if (inputs > 0) {
        if ((out.error = runtime->getInputTensorDesc(0, &in_desc)) != NvDlaSuccess) goto done;
        if ((out.error = runtime->allocateSystemMemory(&in_handle, in_desc.bufferSize, &in_data)) !=
            NvDlaSuccess)
            goto done;
        std::memcpy(in_data, input.data(),
                    input.size() < in_desc.bufferSize ? input.size()
                                                      : static_cast<size_t>(in_desc.bufferSize));
        if (!runtime->bindInputTensor(0, in_handle)) goto done;
    }
    if ((out.error = runtime->getNumOutputTensors(&outputs)) != NvDlaSuccess || outputs < 1)
        goto done;
    if ((out.error = runtime->getOutputTensorDesc(0, &out.output_desc)) != NvDlaSuccess) goto done;
    if ((out.error = runtime->allocateSystemMemory(&out_handle, out.output_desc.bufferSize,
                                                   &out_data)) != NvDlaSuccess)
        goto done;
    std::memset(out_data, 0, out.output_desc.bufferSize);
    if (!runtime->bindOutputTensor(0, out_handle)) goto done;
    if (!runtime->submit()) goto done;
    out.output.assign(static_cast<NvU8*>(out_data),
                      static_cast<NvU8*>(out_data) + out.output_desc.bufferSize);
    out.ok = true;
done:
    if (out_handle) runtime->freeSystemMemory(out_handle, out.output_desc.bufferSize);
    if (in_handle) runtime->freeSystemMemory(in_handle, in_desc.bufferSize);
    runtime->stopEMU();
    runtime->unload();
    nvdla::destroyRuntime(runtime);
    return out;
}

}  // namespace legacy_app

// ---- the tests ----

#include <gtest/gtest.h>

#include <cstdlib>

#include "networks.hpp"

namespace nvdla::runtime_test {
namespace {

class Quiet : public ::testing::Test {
  protected:
    void SetUp() override { ::setenv("NVDLA_QUIET", "1", 1); }
    void TearDown() override { ::unsetenv("NVDLA_QUIET"); }
};

using IRuntimeCompat = Quiet;

TEST_F(IRuntimeCompat, TheOriginalFlowRuns) {
    std::vector<std::byte> bytes = copy_network();
    std::vector<NvU8> input(2048);
    for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<NvU8>(i * 5 + 1);
    legacy_app::Outcome o = legacy_app::run_network(reinterpret_cast<NvU8*>(bytes.data()), input);
    ASSERT_TRUE(o.ok) << o.error;
    EXPECT_EQ(o.output, input);
    EXPECT_STREQ(o.output_desc.name, "copy");
    EXPECT_EQ(o.output_desc.bufferSize, 2048u);
    EXPECT_EQ(o.output_desc.dims.n, 1);
    EXPECT_EQ(o.output_desc.dims.c, 32);
    EXPECT_EQ(o.output_desc.dims.h, 8);
    EXPECT_EQ(o.output_desc.dims.w, 8);
    EXPECT_EQ(o.output_desc.dataFormat, TENSOR_DATA_FORMAT_NCHW);
    EXPECT_EQ(o.output_desc.dataType, TENSOR_DATA_TYPE_INT8);
    EXPECT_EQ(o.output_desc.dataCategory, NVDLA_DATA_CATEGORY_FEATURE);
    EXPECT_EQ(o.output_desc.pixelFormat, TENSOR_PIXEL_FORMAT_FEATURE);
    EXPECT_EQ(o.output_desc.pixelMapping, TENSOR_PIXEL_MAPPING_PITCH_LINEAR);
    EXPECT_EQ(o.output_desc.stride[NVDLA_RUNTIME_TENSOR_DESC_NCHW_W_STRIDE], 256u);
    EXPECT_EQ(o.output_desc.stride[NVDLA_RUNTIME_TENSOR_DESC_NCHW_HW_STRIDE], 2048u);
}

// The interface keeps the original's layout: the tensor descriptor and the error values.
TEST(IRuntimeLayout, MatchesTheOriginal) {
    EXPECT_EQ(sizeof(IRuntime::NvDlaTensor), 152u);
    EXPECT_EQ(offsetof(IRuntime::NvDlaTensor, bufferSize), 88u);
    EXPECT_EQ(offsetof(IRuntime::NvDlaTensor, dims), 96u);
    EXPECT_EQ(offsetof(IRuntime::NvDlaTensor, dataFormat), 112u);
    EXPECT_EQ(offsetof(IRuntime::NvDlaTensor, stride), 120u);
    EXPECT_EQ(NvDlaError_BadParameter, 4);
    EXPECT_EQ(NvDlaError_InvalidState, 8);
    EXPECT_EQ(NvDlaError_DeviceNotFound, 0x15);
    EXPECT_EQ(DataType(DataType::HALF).v(), NVDLA_DATA_TYPE_HALF);
    EXPECT_EQ(DataFormat(NvU8(2)), DataFormat::NHWC);
}

struct Legacy {
    IRuntime* r = createRuntime();
    ~Legacy() { destroyRuntime(r); }
    IRuntime* operator->() { return r; }
};

TEST_F(IRuntimeCompat, LoadErrors) {
    Legacy rt;
    EXPECT_FALSE(rt->load(nullptr, 0));
    EXPECT_STREQ(rt->getLastError(), "load: the loadable pointer is null");
    std::vector<std::byte> bytes = copy_network();
    EXPECT_FALSE(rt->load(reinterpret_cast<NvU8*>(bytes.data()), 1));
    EXPECT_STREQ(rt->getLastError(), "load: DLA instance 1 does not exist (there is 1 device)");
    std::vector<NvU8> junk(100, 0x77);
    EXPECT_FALSE(rt->load(junk.data(), junk.size(), 0));
    EXPECT_EQ(std::string(rt->getLastError()).rfind("loadable: ", 0), 0u) << rt->getLastError();
    EXPECT_TRUE(rt->load(reinterpret_cast<const NvU8*>(bytes.data()), bytes.size(), -1));
    EXPECT_TRUE(rt->load(reinterpret_cast<NvU8*>(bytes.data()), 0));  // again: replaces
}

TEST_F(IRuntimeCompat, CallsBeforeLoad) {
    Legacy rt;
    int n = 0;
    IRuntime::NvDlaTensor td{};
    uint8_t type = 0;
    EXPECT_EQ(rt->getNumInputTensors(&n), NvDlaError_InvalidState);
    EXPECT_STREQ(rt->getLastError(), "no network is loaded");
    EXPECT_EQ(rt->getNumOutputTensors(nullptr), NvDlaError_BadParameter);
    EXPECT_EQ(rt->getInputTensorDesc(0, &td), NvDlaError_InvalidState);
    EXPECT_EQ(rt->setOutputTensorDesc(0, &td), NvDlaError_InvalidState);
    EXPECT_EQ(rt->getNetworkDataType(&type), NvDlaError_InvalidState);
    EXPECT_FALSE(rt->submit());
    EXPECT_STREQ(rt->getLastError(), "submit: no network is loaded");
    EXPECT_FALSE(rt->bindInputTensor(0, nullptr));
    EXPECT_STREQ(rt->getLastError(), "bindInputTensor: no network is loaded");
}

TEST_F(IRuntimeCompat, MemoryAndBindingErrors) {
    Legacy rt;
    std::vector<std::byte> bytes = copy_network();
    ASSERT_TRUE(rt->load(reinterpret_cast<NvU8*>(bytes.data()), 0));
    EXPECT_EQ(rt->allocateSystemMemory(nullptr, 64, nullptr), NvDlaError_BadParameter);
    void* handle = nullptr;
    void* data = nullptr;
    EXPECT_EQ(rt->allocateSystemMemory(&handle, 1ull << 40, &data), NvDlaError_InsufficientMemory);
    EXPECT_EQ(handle, nullptr);
    ASSERT_EQ(rt->allocateSystemMemory(&handle, 1024, &data), NvDlaSuccess);
    EXPECT_NE(data, nullptr);
    EXPECT_FALSE(rt->bindInputTensor(-1, handle));
    EXPECT_STREQ(rt->getLastError(), "bindInputTensor: index -1 is negative");
    EXPECT_FALSE(rt->bindInputTensor(0, &data));
    EXPECT_STREQ(rt->getLastError(),
                 "bindInputTensor: the handle was not returned by allocateSystemMemory");
    EXPECT_FALSE(rt->bindOutputTensor(1, handle));
    EXPECT_STREQ(rt->getLastError(), "output 1 does not exist: the network has 1 output");
    EXPECT_FALSE(rt->bindOutputTensor(0, handle));
    EXPECT_STREQ(rt->getLastError(),
                 "bind output 0: the buffer holds 1024 bytes, less than the "
                 "2048 the tensor's memory needs");
    rt->freeSystemMemory(handle, 1024);
    rt->freeSystemMemory(handle, 1024);
    EXPECT_STREQ(rt->getLastError(), "freeSystemMemory: the handle was not allocated here");
}

TEST_F(IRuntimeCompat, TensorDescriptors) {
    Legacy rt;
    std::vector<std::byte> bytes = copy_network();
    ASSERT_TRUE(rt->load(reinterpret_cast<NvU8*>(bytes.data()), 0));
    int n = 0;
    EXPECT_EQ(rt->getNumInputTensors(&n), NvDlaSuccess);
    EXPECT_EQ(n, 1);
    uint8_t type = 0;
    EXPECT_EQ(rt->getNetworkDataType(&type), NvDlaSuccess);
    EXPECT_EQ(type, TENSOR_DATA_TYPE_INT8);
    IRuntime::NvDlaTensor td{};
    EXPECT_EQ(rt->getInputTensorDesc(1, &td), NvDlaError_BadParameter);
    EXPECT_STREQ(rt->getLastError(), "input 1 does not exist: the network has 1");
    EXPECT_EQ(rt->getInputTensorDesc(0, nullptr), NvDlaError_BadParameter);
    ASSERT_EQ(rt->getInputTensorDesc(0, &td), NvDlaSuccess);
    EXPECT_STREQ(td.name, "data");

    IRuntime::NvDlaTensor changed = td;
    std::strcpy(changed.name, "other");
    EXPECT_EQ(rt->setInputTensorDesc(0, &changed), NvDlaError_NotSupported);
    EXPECT_STREQ(rt->getLastError(), "setInputTensorDesc 0: the name cannot change");
    changed = td;
    changed.dataType = TENSOR_DATA_TYPE_HALF;
    EXPECT_EQ(rt->setInputTensorDesc(0, &changed), NvDlaError_NotImplemented);
    changed = td;
    changed.pixelFormat = TENSOR_PIXEL_FORMAT_R8;
    EXPECT_EQ(rt->setInputTensorDesc(0, &changed), NvDlaError_NotSupported);
    changed = td;
    changed.dims.h = 4;
    EXPECT_EQ(rt->setInputTensorDesc(0, &changed), NvDlaError_NotSupported);
    EXPECT_STREQ(rt->getLastError(), "setInputTensorDesc 0: the dimensions cannot change");
    changed = td;
    changed.stride[1] = 512;
    EXPECT_EQ(rt->setInputTensorDesc(0, &changed), NvDlaError_NotSupported);
    EXPECT_STREQ(rt->getLastError(),
                 "setInputTensorDesc 0: input 0: the loadable has no "
                 "relocation for its strides, so they cannot change");
    EXPECT_EQ(rt->setInputTensorDesc(0, &td), NvDlaSuccess);  // unchanged
}

TEST_F(IRuntimeCompat, StridesChangeThroughRelocations) {
    NetworkBuilder b;
    const uint16_t in = b.tensor(true, "data", kInt8, 32, 8, 8, 256, 2048, 4096);
    const uint16_t out = b.tensor(false, "copy", kInt8, 32, 8, 8, 256, 2048, 2048);
    b.bdma_copy(in, out, 256, 8);
    b.loadable().relocs.push_back({4, 4, 16, 1, 4, runtime::kRelocLineStride});
    b.loadable().relocs.push_back({4, 4, 28, 1, 4, runtime::kRelocSurfaceStride});
    std::vector<std::byte> bytes = b.bytes();
    Legacy rt;
    ASSERT_TRUE(rt->load(reinterpret_cast<NvU8*>(bytes.data()), 0));
    IRuntime::NvDlaTensor td{};
    ASSERT_EQ(rt->getInputTensorDesc(0, &td), NvDlaSuccess);
    td.stride[1] = 512;
    td.stride[2] = 4096;
    ASSERT_EQ(rt->setInputTensorDesc(0, &td), NvDlaSuccess) << rt->getLastError();
    IRuntime::NvDlaTensor now{};
    ASSERT_EQ(rt->getInputTensorDesc(0, &now), NvDlaSuccess);
    EXPECT_EQ(now.stride[1], 512u);
    void *ih, *id, *oh, *od;
    ASSERT_EQ(rt->allocateSystemMemory(&ih, 4096, &id), NvDlaSuccess);
    ASSERT_EQ(rt->allocateSystemMemory(&oh, 2048, &od), NvDlaSuccess);
    for (int i = 0; i < 4096; ++i) static_cast<NvU8*>(id)[i] = static_cast<NvU8>(i / 256);
    ASSERT_TRUE(rt->bindInputTensor(0, ih));
    ASSERT_TRUE(rt->bindOutputTensor(0, oh));
    ASSERT_TRUE(rt->submit()) << rt->getLastError();
    for (int line = 0; line < 8; ++line) EXPECT_EQ(static_cast<NvU8*>(od)[line * 256], line * 2);
}

TEST_F(IRuntimeCompat, SubmitReportsValidationErrors) {
    ::setenv("NVDLA_EMU_CONFIG", "nv_small", 1);
    Legacy rt;
    std::vector<std::byte> bytes = copy_network();
    ASSERT_TRUE(rt->load(reinterpret_cast<NvU8*>(bytes.data()), 0));
    EXPECT_FALSE(rt->submit());
    EXPECT_EQ(std::string(rt->getLastError()).rfind("DLA task 0: rejected by the validator", 0), 0u)
        << rt->getLastError();
    ::unsetenv("NVDLA_EMU_CONFIG");
}

}  // namespace
}  // namespace nvdla::runtime_test
