/// \file
/// Macros and small utilities shared by every cuact header (the bottom of the include graph).
#pragma once

// Every cuact header includes this one before anything else, so a host-only compiler (g++ on a
// .cpp) stops here with a message saying what to do, not at a missing CUDA header further down.
// nvcc and clang CUDA define __CUDACC__ (clang also __CUDA__); NVRTC defines __CUDACC_RTC__.
#if !defined(__CUDACC__) && !defined(__CUDA__) && !defined(__CUDACC_RTC__)
#error "cuact's headers need nvcc (or clang CUDA): compile this file as CUDA (.cu, or -x cu)"
#endif

#include <cuda_runtime.h>

#include <cuda/std/cstddef>
#include <cuda/std/cstdint>

/// Functions callable from host and device code. The per-thread kernel body is one of them, so
/// the CPU tests run the very index logic the GPU runs.
#if defined(__CUDACC__)
#define CUACT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define CUACT_HOST_DEVICE inline
#endif

/// Kernels defined in headers get hidden visibility, so two shared objects that both include
/// cuact do not resolve each other's kernel symbols (the cuCollections convention).
/// NVRTC compiles one translation unit into its own module, so there is nothing to hide there (and
/// it warns about the attribute).
#if defined(__CUDACC_RTC__)
#define CUACT_KERNEL __global__
#else
#define CUACT_KERNEL __global__ __attribute__((visibility("hidden")))
#endif

/// CUACT_KERNELS_BEGIN / _END enclose cuact's kernel templates. A kernel instantiated for a type
/// of internal linkage (a functor in an unnamed namespace, as user code often defines them) has
/// internal linkage itself; its symbol is then hidden already, and nvcc's warning 1407 (the
/// visibility attribute needs external linkage) would only fail a user's -Werror build.
#if defined(__NVCC__) && !defined(__CUDACC_RTC__)
#define CUACT_KERNELS_BEGIN _Pragma("nv_diagnostic push") _Pragma("nv_diag_suppress 1407")
#define CUACT_KERNELS_END _Pragma("nv_diagnostic pop")
#else
#define CUACT_KERNELS_BEGIN
#define CUACT_KERNELS_END
#endif

/// CUACT_DEVICE_RULE_BEGIN / _END enclose the __host__ __device__ functions that call an
/// activation's members: there nvcc's warning 20011 ("calling a __host__ function("F") from a
/// __host__ __device__ function") is an error, because a member that is not __device__ compiles
/// to no device code and the kernel would write nothing.
#if defined(__NVCC__) && !defined(__CUDACC_RTC__)
#define CUACT_DEVICE_RULE_BEGIN _Pragma("nv_diagnostic push") _Pragma("nv_diag_error 20011")
#define CUACT_DEVICE_RULE_END _Pragma("nv_diagnostic pop")
#else
#define CUACT_DEVICE_RULE_BEGIN
#define CUACT_DEVICE_RULE_END
#endif

/// `#pragma unroll` in device code only (host compilers warn about the unknown pragma).
#if defined(__CUDA_ARCH__)
#define CUACT_UNROLL _Pragma("unroll")
#else
#define CUACT_UNROLL
#endif

namespace cuact {
namespace detail {

/// A pack of types (array element types of an operation's inputs or outputs).
template <class... T>
struct type_list {
  static constexpr int size = static_cast<int>(sizeof...(T));
};

template <class... T>
__host__ __device__ constexpr cuda::std::size_t max_size_of() {
  cuda::std::size_t result = 0;
  ((result = sizeof(T) > result ? sizeof(T) : result), ...);
  return result;
}

}  // namespace detail
}  // namespace cuact
