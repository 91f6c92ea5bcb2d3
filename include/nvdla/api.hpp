// Symbol visibility for libnvdla_runtime: the library is built with hidden visibility and
// exports only what is marked NVDLA_API.
#pragma once

#if defined(NVDLA_BUILDING_LIBRARY)
#define NVDLA_API __attribute__((visibility("default")))
#else
#define NVDLA_API
#endif
