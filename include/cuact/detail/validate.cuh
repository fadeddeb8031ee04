/// \file
/// Argument checks run before any launch: a rejected call launches nothing, writes nothing, and
/// leaves no error behind in the CUDA runtime's last-error state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "config.cuh"

namespace cuact {
namespace detail {

/// One array argument of an operation, as validation sees it.
struct array_arg {
  const void* pointer;
  bool may_equal_output;  ///< exactly equal to the output is allowed (in-place operation)
};

/// True when [a, a + bytes) and [b, b + bytes) share a byte.
inline bool ranges_overlap(const void* a, const void* b, std::size_t bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return x < y ? y - x < bytes : x - y < bytes;
}

/// cudaSuccess when `pointer` is memory the current device may access: device memory of the
/// current device, managed memory, or page-locked host memory. Pageable host memory (the usual
/// mistake) and memory of another device are rejected here rather than faulting in the kernel,
/// which would kill the context.
inline cudaError_t check_device_accessible(const void* pointer, int current_device) {
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, pointer);
  if (status != cudaSuccess) {
    cudaGetLastError();  // the failure is returned; do not leave it behind for the caller
    return status;
  }
  switch (attributes.type) {
    case cudaMemoryTypeManaged:
    case cudaMemoryTypeHost:
      return cudaSuccess;
    case cudaMemoryTypeDevice:
      return attributes.device == current_device ? cudaSuccess : cudaErrorInvalidDevice;
    default:  // cudaMemoryTypeUnregistered: pageable host memory or not memory at all
      return cudaErrorInvalidValue;
  }
}

/// Every check that does not depend on the operation: sizes, null pointers, element alignment,
/// overlaps, and where each pointer lives. `n > 0` is assumed (n == 0 returns before this).
template <class T, std::size_t NumArrays>
cudaError_t validate_arrays(const T* output, const array_arg (&inputs)[NumArrays], std::size_t n) {
  if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) return cudaErrorInvalidValue;
  const std::size_t bytes = n * sizeof(T);
  const auto misaligned = [](const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % alignof(T) != 0;
  };
  if (output == nullptr || misaligned(output)) return cudaErrorInvalidValue;
  for (const array_arg& input : inputs) {
    if (input.pointer == nullptr || misaligned(input.pointer)) return cudaErrorInvalidValue;
    const bool in_place = input.pointer == output;
    if (in_place ? !input.may_equal_output : ranges_overlap(input.pointer, output, bytes)) {
      return cudaErrorInvalidValue;
    }
  }
  int device = 0;
  if (const cudaError_t status = cudaGetDevice(&device); status != cudaSuccess) {
    cudaGetLastError();
    return status;
  }
  if (const cudaError_t status = check_device_accessible(output, device); status != cudaSuccess) {
    return status;
  }
  for (const array_arg& input : inputs) {
    if (input.pointer == output) continue;
    if (const cudaError_t status = check_device_accessible(input.pointer, device);
        status != cudaSuccess) {
      return status;
    }
  }
  return cudaSuccess;
}

}  // namespace detail
}  // namespace cuact
