// The C++ vocabulary of the original NVDLA software's public API (nvdla/sw
// umd/core/include/nvdla/IType.h) that runtime applications use: the tensor enumerations as
// small classes (DataType::HALF, DataFormat::NCHW, ...) and the dimension classes. The
// compiler's layer vocabulary is not part of this runtime, and neither are the original's
// Dims2/Dims3/Dims4 classes (runtime applications use NvDlaDims4; nvdla::Dims4 is this
// library's own, include/nvdla/types.hpp).
#ifndef NVDLA_COMPAT_I_TYPE_H
#define NVDLA_COMPAT_I_TYPE_H

#include "nvdla/c/NvDlaType.h"

namespace nvdla {

// An enumeration stored as a byte, with the names of the original.
#define NVDLA_COMPAT_ENUM_CLASS(Name, Max, ...)                                        \
    class Name {                                                                       \
      public:                                                                          \
        typedef NvU8 UnderlyingType;                                                   \
        enum Enum { __VA_ARGS__ };                                                     \
        Name() : m_v(0) {}                                                             \
        Name(Enum e) : m_v(static_cast<UnderlyingType>(e)) {}                          \
        Name(UnderlyingType v) : m_v(v <= (Max) ? v : 0) {}                            \
        static UnderlyingType max() { return (Max); }                                  \
        UnderlyingType v() const { return m_v; }                                       \
        operator UnderlyingType() const { return m_v; }                                \
        bool operator==(const Name& o) const { return m_v == o.m_v; }                  \
        bool operator==(Enum e) const { return m_v == static_cast<UnderlyingType>(e); } \
                                                                                       \
      protected:                                                                       \
        UnderlyingType m_v;                                                            \
    }

NVDLA_COMPAT_ENUM_CLASS(DataFormat, 3U, UNKNOWN = NVDLA_DATA_FORMAT_UNKNOWN,
                        NCHW = NVDLA_DATA_FORMAT_NCHW, NHWC = NVDLA_DATA_FORMAT_NHWC,
                        NCxHWx = NVDLA_DATA_FORMAT_NCxHWx);
NVDLA_COMPAT_ENUM_CLASS(DataType, 6U, UNKNOWN = NVDLA_DATA_TYPE_UNKNOWN,
                        FLOAT = NVDLA_DATA_TYPE_FLOAT, HALF = NVDLA_DATA_TYPE_HALF,
                        INT16 = NVDLA_DATA_TYPE_INT16, INT8 = NVDLA_DATA_TYPE_INT8,
                        UINT8 = NVDLA_DATA_TYPE_UINT8, UINT16 = NVDLA_DATA_TYPE_UINT16);
NVDLA_COMPAT_ENUM_CLASS(DataCategory, 4U, IMAGE = NVDLA_DATA_CATEGORY_IMAGE,
                        WEIGHT = NVDLA_DATA_CATEGORY_WEIGHT,
                        FEATURE = NVDLA_DATA_CATEGORY_FEATURE,
                        PLANAR = NVDLA_DATA_CATEGORY_PLANAR, BIAS = NVDLA_DATA_CATEGORY_BIAS);

#undef NVDLA_COMPAT_ENUM_CLASS

}  // namespace nvdla

#endif  // NVDLA_COMPAT_I_TYPE_H
