// The UAPI header as userspace compiles it: every structure's size and field offsets, the
// ioctl numbers of docs/kernel-driver.md, and the constants shared with nvdla_config.h. The
// kernel module asserts the same sizes; a mismatch here means the two sides disagree.
#include <gtest/gtest.h>

#include <cstddef>

#include "nvdla/hw/nvdla_config.h"
#include "runtime/backend_drm.hpp"
#include "uapi/drm/nvdla_drm.h"

namespace nvdla::runtime {
namespace {

#define EXPECT_FIELD(type, field, offset, size)                                                  \
    do {                                                                                         \
        EXPECT_EQ(offsetof(type, field), size_t{offset}) << #type "." #field;                    \
        EXPECT_EQ(sizeof(static_cast<type*>(nullptr)->field), size_t{size}) << #type "." #field; \
    } while (0)

TEST(DrmUapi, OriginalStructuresKeepTheirLayout) {
    EXPECT_EQ(sizeof(nvdla_mem_handle), 16u);
    EXPECT_FIELD(nvdla_mem_handle, handle, 0, 4);
    EXPECT_FIELD(nvdla_mem_handle, reserved, 4, 4);
    EXPECT_FIELD(nvdla_mem_handle, offset, 8, 8);
    EXPECT_EQ(sizeof(nvdla_ioctl_submit_task), 16u);
    EXPECT_FIELD(nvdla_ioctl_submit_task, num_addresses, 0, 4);
    EXPECT_FIELD(nvdla_ioctl_submit_task, timeout, 4, 4);
    EXPECT_FIELD(nvdla_ioctl_submit_task, address_list, 8, 8);
    EXPECT_EQ(sizeof(nvdla_submit_args), 16u);
    EXPECT_FIELD(nvdla_submit_args, tasks, 0, 8);
    EXPECT_FIELD(nvdla_submit_args, num_tasks, 8, 2);
    EXPECT_FIELD(nvdla_submit_args, flags, 10, 2);
    EXPECT_FIELD(nvdla_submit_args, version, 12, 4);
    EXPECT_EQ(sizeof(nvdla_gem_create_args), 16u);
    EXPECT_FIELD(nvdla_gem_create_args, handle, 0, 4);
    EXPECT_FIELD(nvdla_gem_create_args, flags, 4, 4);
    EXPECT_FIELD(nvdla_gem_create_args, size, 8, 8);
    EXPECT_EQ(sizeof(nvdla_gem_map_offset_args), 16u);
    EXPECT_FIELD(nvdla_gem_map_offset_args, handle, 0, 4);
    EXPECT_FIELD(nvdla_gem_map_offset_args, offset, 8, 8);
    EXPECT_EQ(sizeof(nvdla_gem_destroy_args), 4u);
}

TEST(DrmUapi, CurrentStructuresMatchTheDocumentedLayout) {
    EXPECT_EQ(sizeof(drm_nvdla_get_param), 16u);
    EXPECT_FIELD(drm_nvdla_get_param, param, 0, 4);
    EXPECT_FIELD(drm_nvdla_get_param, pad, 4, 4);
    EXPECT_FIELD(drm_nvdla_get_param, value, 8, 8);

    EXPECT_EQ(sizeof(drm_nvdla_bo_create), 40u);
    EXPECT_FIELD(drm_nvdla_bo_create, size, 0, 8);
    EXPECT_FIELD(drm_nvdla_bo_create, alignment, 8, 8);
    EXPECT_FIELD(drm_nvdla_bo_create, flags, 16, 4);
    EXPECT_FIELD(drm_nvdla_bo_create, handle, 20, 4);
    EXPECT_FIELD(drm_nvdla_bo_create, dma_address, 24, 8);
    EXPECT_FIELD(drm_nvdla_bo_create, mmap_offset, 32, 8);

    EXPECT_EQ(sizeof(drm_nvdla_bo_info), 32u);
    EXPECT_FIELD(drm_nvdla_bo_info, handle, 0, 4);
    EXPECT_FIELD(drm_nvdla_bo_info, flags, 4, 4);
    EXPECT_FIELD(drm_nvdla_bo_info, size, 8, 8);
    EXPECT_FIELD(drm_nvdla_bo_info, dma_address, 16, 8);
    EXPECT_FIELD(drm_nvdla_bo_info, mmap_offset, 24, 8);

    EXPECT_EQ(sizeof(drm_nvdla_address), 16u);
    EXPECT_FIELD(drm_nvdla_address, handle, 0, 4);
    EXPECT_FIELD(drm_nvdla_address, flags, 4, 4);
    EXPECT_FIELD(drm_nvdla_address, offset, 8, 8);

    EXPECT_EQ(sizeof(drm_nvdla_job), 48u);
    EXPECT_FIELD(drm_nvdla_job, addresses, 0, 8);
    EXPECT_FIELD(drm_nvdla_job, in_syncobjs, 8, 8);
    EXPECT_FIELD(drm_nvdla_job, address_count, 16, 4);
    EXPECT_FIELD(drm_nvdla_job, address_struct_size, 20, 4);
    EXPECT_FIELD(drm_nvdla_job, in_syncobj_count, 24, 4);
    EXPECT_FIELD(drm_nvdla_job, out_syncobj, 28, 4);
    EXPECT_FIELD(drm_nvdla_job, flags, 32, 4);
    EXPECT_FIELD(drm_nvdla_job, job_id, 36, 4);
    EXPECT_FIELD(drm_nvdla_job, dla_version, 40, 4);
    EXPECT_FIELD(drm_nvdla_job, pad, 44, 4);

    EXPECT_EQ(sizeof(drm_nvdla_submit), 24u);
    EXPECT_FIELD(drm_nvdla_submit, jobs, 0, 8);
    EXPECT_FIELD(drm_nvdla_submit, job_count, 8, 4);
    EXPECT_FIELD(drm_nvdla_submit, job_struct_size, 12, 4);
    EXPECT_FIELD(drm_nvdla_submit, flags, 16, 4);
    EXPECT_FIELD(drm_nvdla_submit, pad, 20, 4);

    EXPECT_EQ(sizeof(drm_nvdla_wait), 24u);
    EXPECT_FIELD(drm_nvdla_wait, job_id, 0, 4);
    EXPECT_FIELD(drm_nvdla_wait, flags, 4, 4);
    EXPECT_FIELD(drm_nvdla_wait, timeout_ns, 8, 8);
    EXPECT_FIELD(drm_nvdla_wait, status, 16, 4);
    EXPECT_FIELD(drm_nvdla_wait, pad, 20, 4);
}

TEST(DrmUapi, IoctlNumbersAreTheDocumentedOnes) {
    EXPECT_EQ(DRM_IOCTL_NVDLA_SUBMIT, 0xC0106440u);
    EXPECT_EQ(DRM_IOCTL_NVDLA_GEM_CREATE, 0xC0106441u);
    EXPECT_EQ(DRM_IOCTL_NVDLA_GEM_MMAP, 0xC0106442u);
    EXPECT_EQ(DRM_IOCTL_NVDLA_GEM_DESTROY, 0xC0046443u);
    EXPECT_EQ(DRM_IOCTL_NVDLA_GET_PARAM, 0xC0106444u);
    EXPECT_EQ(DRM_IOCTL_NVDLA_BO_CREATE, 0xC0286445u);
    EXPECT_EQ(DRM_IOCTL_NVDLA_BO_INFO, 0xC0206446u);
    EXPECT_EQ(DRM_IOCTL_NVDLA_JOB_SUBMIT, 0xC0186447u);
    EXPECT_EQ(DRM_IOCTL_NVDLA_WAIT, 0xC0186448u);
}

TEST(DrmUapi, FeatureBitsAreThoseOfTheConfigurationTable) {
    EXPECT_EQ(NVDLA_HW_FEATURE_INT8, NVDLA_FEATURE_INT8);
    EXPECT_EQ(NVDLA_HW_FEATURE_INT16, NVDLA_FEATURE_INT16);
    EXPECT_EQ(NVDLA_HW_FEATURE_FP16, NVDLA_FEATURE_FP16);
    EXPECT_EQ(NVDLA_HW_FEATURE_WINOGRAD, NVDLA_FEATURE_WINOGRAD);
    EXPECT_EQ(NVDLA_HW_FEATURE_BATCH, NVDLA_FEATURE_BATCH);
    EXPECT_EQ(NVDLA_HW_FEATURE_WEIGHT_COMPRESSION, NVDLA_FEATURE_WEIGHT_COMPRESSION);
    EXPECT_EQ(NVDLA_HW_FEATURE_SECONDARY_MEMIF, NVDLA_FEATURE_SECONDARY_MEMIF);
    EXPECT_EQ(NVDLA_HW_FEATURE_SDP_LUT, NVDLA_FEATURE_SDP_LUT);
    EXPECT_EQ(NVDLA_HW_FEATURE_SDP_BS, NVDLA_FEATURE_SDP_BS);
    EXPECT_EQ(NVDLA_HW_FEATURE_SDP_BN, NVDLA_FEATURE_SDP_BN);
    EXPECT_EQ(NVDLA_HW_FEATURE_SDP_EW, NVDLA_FEATURE_SDP_EW);
    EXPECT_EQ(NVDLA_HW_FEATURE_BDMA, NVDLA_FEATURE_BDMA);
    EXPECT_EQ(NVDLA_HW_FEATURE_RUBIK, NVDLA_FEATURE_RUBIK);
    EXPECT_EQ(NVDLA_HW_FEATURE_PDP, NVDLA_FEATURE_PDP);
    EXPECT_EQ(NVDLA_HW_FEATURE_CDP, NVDLA_FEATURE_CDP);
}

// Every configuration of the table has a UAPI number and back: the drm backend can name what
// any kernel reports.
TEST(DrmUapi, EveryConfigurationHasAUapiNumber) {
    size_t named = 0;
    for (uint64_t id = 1; id < 64; ++id) {
        const char* name = drm::hw_config_name(id);
        if (name == nullptr) continue;
        ++named;
        EXPECT_TRUE(find_hw_config(name).ok()) << name;
    }
    EXPECT_EQ(named, hw_configs().size());
}

}  // namespace
}  // namespace nvdla::runtime
