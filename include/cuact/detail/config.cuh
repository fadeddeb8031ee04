/// \file
/// Macros and small utilities shared by every cuact header.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

/// Functions callable from host and device code. The per-thread kernel body is one of them, so
/// the CPU tests run the very index logic the GPU runs.
#if defined(__CUDACC__)
#define CUACT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define CUACT_HOST_DEVICE inline
#endif

/// Kernels defined in headers get hidden visibility, so two shared objects that both include
/// cuact do not resolve each other's kernel symbols (the cuCollections convention).
#define CUACT_KERNEL __global__ __attribute__((visibility("hidden")))

namespace cuact {

/// Vector width chosen from the element type: 16 bytes / sizeof(T) elements per access.
inline constexpr int auto_width = 0;

}  // namespace cuact
