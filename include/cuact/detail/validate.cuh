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

/// One array argument of an operation, as validation sees it. In a list of them, the first is
/// the operation's main output.
struct array_arg {
  const void* pointer;
  std::size_t bytes;
  std::size_t alignment;
  bool exclusive;         ///< shares no byte with another array: outputs, and the ReLU mask
  bool may_equal_output;  ///< may be exactly the main output (in place)
};

/// An array of n elements of T; `bytes` is 0 when n * sizeof(T) overflows (validation rejects it).
template <class T>
array_arg array_of(const T* pointer, std::size_t n, bool exclusive, bool may_equal_output) {
  const bool overflows = n > std::numeric_limits<std::size_t>::max() / sizeof(T);
  return {pointer, overflows ? 0 : n * sizeof(T), alignof(T), exclusive, may_equal_output};
}

/// True when the two arrays share a byte.
inline bool ranges_overlap(const array_arg& a, const array_arg& b) {
  const auto x = reinterpret_cast<std::uintptr_t>(a.pointer);
  const auto y = reinterpret_cast<std::uintptr_t>(b.pointer);
  return x < y ? y - x < a.bytes : x - y < b.bytes;
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

/// Every check of an operation's arrays (the first is the main output; n > 0 is assumed): sizes
/// that fit size_t, null and misaligned pointers, overlaps (an exclusive array overlaps no other,
/// except an input allowed to be exactly the main output; inputs may share memory), and where
/// each pointer lives,
/// with one cudaGetDevice and one cudaPointerGetAttributes per distinct pointer.
inline cudaError_t validate_arrays(const array_arg* arrays, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const array_arg& a = arrays[i];
    if (a.bytes == 0 || a.pointer == nullptr ||
        reinterpret_cast<std::uintptr_t>(a.pointer) % a.alignment != 0) {
      return cudaErrorInvalidValue;
    }
    for (std::size_t j = 0; j < i; ++j) {
      const array_arg& b = arrays[j];
      if (!a.exclusive && !b.exclusive) continue;
      const bool in_place = j == 0 && a.may_equal_output && a.pointer == b.pointer && a.bytes == b.bytes;
      if (!in_place && ranges_overlap(a, b)) return cudaErrorInvalidValue;
    }
  }
  int device = 0;
  if (const cudaError_t status = cudaGetDevice(&device); status != cudaSuccess) {
    cudaGetLastError();  // returned, not left behind
    return status;
  }
  for (std::size_t i = 0; i < count; ++i) {
    bool seen = false;
    for (std::size_t j = 0; j < i; ++j) seen = seen || arrays[j].pointer == arrays[i].pointer;
    if (seen) continue;
    if (const cudaError_t status = check_device_accessible(arrays[i].pointer, device);
        status != cudaSuccess) {
      return status;
    }
  }
  return cudaSuccess;
}

}  // namespace detail
}  // namespace cuact
