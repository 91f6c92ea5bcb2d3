# Included after project() (CMAKE_PROJECT_INCLUDE) by `make vp-guest`, which builds the guest's
# fully static nvdla_runtime_static (tools/CMakeLists.txt) in its own tree: every library the
# runtime needs (libdrm, libpng, zlib, libjpeg; FlatBuffers is static anyway) is found as its
# static archive. The platform files set the suffixes after the cache is read, hence here.
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
