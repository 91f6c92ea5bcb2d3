/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the engine (kmd/engine/) takes from the kernel, for its userspace build: the fixed-size
 * type names over <stdint.h>, ARRAY_SIZE, static_assert and __printf. Its C is kernel code
 * in both builds. Not part of the library's interface.
 */
#ifndef NVDLA_HW_DLA_USER_COMPAT_H
#define NVDLA_HW_DLA_USER_COMPAT_H

#include <assert.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define __printf(f, a) __attribute__((format(printf, f, a)))

#endif /* NVDLA_HW_DLA_USER_COMPAT_H */
