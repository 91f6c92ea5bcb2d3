/* Fixed-width scalar names of the original NVDLA software's public API (nvdla/sw
 * umd/core/include/dlatypes.h), for applications written against it. */
#ifndef NVDLA_COMPAT_DLATYPES_H
#define NVDLA_COMPAT_DLATYPES_H

#include <stdbool.h>
#include <stdint.h>

#define NV_TRUE 1
#define NV_FALSE 0

typedef uint8_t NvU8;
typedef uint16_t NvU16;
typedef uint32_t NvU32;
typedef uint64_t NvU64;
typedef int8_t NvS8;
typedef int16_t NvS16;
typedef int32_t NvS32;
typedef int64_t NvS64;
typedef bool NvBool;
typedef float NvF32;
typedef double NvF64;
typedef NvU64 NvUPtr;

#endif /* NVDLA_COMPAT_DLATYPES_H */
