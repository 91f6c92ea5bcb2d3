/* The error codes of the original NVDLA software's public API (nvdla/sw
 * umd/core/include/dlaerror.h): same names, same values. */
#ifndef NVDLA_COMPAT_DLAERROR_H
#define NVDLA_COMPAT_DLAERROR_H

typedef enum {
    NvDlaError_Success = 0x00000000,
    NvDlaError_NotImplemented = 0x00000001,
    NvDlaError_NotSupported = 0x00000002,
    NvDlaError_NotInitialized = 0x00000003,
    NvDlaError_BadParameter = 0x00000004,
    NvDlaError_Timeout = 0x00000005,
    NvDlaError_InsufficientMemory = 0x00000006,
    NvDlaError_ReadOnlyAttribute = 0x00000007,
    NvDlaError_InvalidState = 0x00000008,
    NvDlaError_InvalidAddress = 0x00000009,
    NvDlaError_InvalidSize = 0x0000000A,
    NvDlaError_BadValue = 0x0000000B,
    NvDlaError_AlreadyAllocated = 0x0000000D,
    NvDlaError_Busy = 0x0000000E,
    NvDlaError_ResourceError = 0x0000000F,
    NvDlaError_CountMismatch = 0x00000010,
    NvDlaError_OverFlow = 0x00000011,
    NvDlaError_Disconnected = 0x00000012,
    NvDlaError_FileNotFound = 0x00000013,
    NvDlaError_TestApplicationFailed = 0x00000014,
    NvDlaError_DeviceNotFound = 0x00000015,
    NvDlaError_SurfaceNotSupported = 0x00010003,
    NvDlaError_FileWriteFailed = 0x00030000,
    NvDlaError_FileReadFailed = 0x00030001,
    NvDlaError_EndOfFile = 0x00030002,
    NvDlaError_FileOperationFailed = 0x00030003,
    NvDlaError_DirOperationFailed = 0x00030004,
    NvDlaError_EndOfDirList = 0x00030005,
    NvDlaError_IoctlFailed = 0x0003000f,
    NvDlaError_PathAlreadyExists = 0x00030014,
    NvDlaError_ModuleNotPresent = 0x000a000E,
    NvDlaSuccess = NvDlaError_Success,
    NvDlaError_Force32 = 0x7FFFFFFF
} NvDlaError;

#endif /* NVDLA_COMPAT_DLAERROR_H */
