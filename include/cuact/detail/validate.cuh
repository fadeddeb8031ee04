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

/// What an operation does with an array, which decides the overlaps it may have.
enum class array_role {
  output,             ///< written; shares no byte with another array, except an in-place input
  input,              ///< read; may share memory with other inputs, never with an output
  input_or_in_place,  ///< read; may also be exactly one of the outputs (same bytes): in place
  exclusive_input,    ///< read; shares no byte with any other array (the ReLU mask)
};

/// One array argument of an operation, as validation sees it.
struct array_arg {
  const void* pointer;
  std::size_t bytes;  ///< 0 when the byte size overflows (rejected)
  std::size_t alignment;
  array_role role;
};

/// Byte size of `count` elements of `element_bytes` each, or 0 when it overflows size_t.
constexpr std::size_t checked_bytes(std::size_t count, std::size_t element_bytes) {
  return count > std::numeric_limits<std::size_t>::max() / element_bytes ? 0
                                                                         : count * element_bytes;
}

/// An array of n elements of T.
template <class T>
array_arg array_of(const T* pointer, std::size_t n, array_role role) {
  return {pointer, checked_bytes(n, sizeof(T)), alignof(T), role};
}

/// True when the two arrays share a byte.
inline bool ranges_overlap(const array_arg& a, const array_arg& b) {
  const auto x = reinterpret_cast<std::uintptr_t>(a.pointer);
  const auto y = reinterpret_cast<std::uintptr_t>(b.pointer);
  return x < y ? y - x < a.bytes : x - y < b.bytes;
}

/// Whether two arrays of one operation may share bytes: inputs with inputs, and an in-place input
/// with an output it equals exactly.
inline bool may_overlap(const array_arg& a, const array_arg& b) {
  const auto is_plain_input = [](array_role r) {
    return r == array_role::input || r == array_role::input_or_in_place;
  };
  if (is_plain_input(a.role) && is_plain_input(b.role)) return true;
  const bool in_place_pair =
      (a.role == array_role::output && b.role == array_role::input_or_in_place) ||
      (b.role == array_role::output && a.role == array_role::input_or_in_place);
  return in_place_pair && a.pointer == b.pointer && a.bytes == b.bytes;
}

/// cudaSuccess when `pointer` is memory `device` may access: its own device memory, managed
/// memory, or page-locked host memory. Pageable host memory (the usual mistake) and memory of
/// another device are rejected here rather than faulting in the kernel, which would kill the
/// context.
inline cudaError_t check_device_accessible(const void* pointer, int device) {
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
      return attributes.device == device ? cudaSuccess : cudaErrorInvalidDevice;
    default:  // cudaMemoryTypeUnregistered: pageable host memory or not memory at all
      return cudaErrorInvalidValue;
  }
}

/// 0 skips validate_arrays' cudaPointerGetAttributes (a driver call per pointer, on every call) for
/// callers that know where their memory lives: cuact/torch.cuh defines it 0, its tensors being
/// checked as CUDA tensors of the guarded device. Define it alike in every translation unit.
#ifndef CUACT_CHECK_POINTER_ATTRIBUTES
#define CUACT_CHECK_POINTER_ATTRIBUTES 1
#endif

/// Every check of an operation's arrays (n > 0 is assumed): sizes that fit size_t, null and
/// misaligned pointers, overlaps (may_overlap), and where each pointer lives, with one
/// cudaGetDevice and one cudaPointerGetAttributes per distinct pointer. On success `device` is
/// the current device, which the launch model needs.
inline cudaError_t validate_arrays(const array_arg* arrays, std::size_t count, int& device) {
  for (std::size_t i = 0; i < count; ++i) {
    const array_arg& a = arrays[i];
    if (a.bytes == 0 || a.pointer == nullptr ||
        reinterpret_cast<std::uintptr_t>(a.pointer) % a.alignment != 0) {
      return cudaErrorInvalidValue;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (!may_overlap(a, arrays[j]) && ranges_overlap(a, arrays[j])) {
        return cudaErrorInvalidValue;
      }
    }
  }
  if (const cudaError_t status = cudaGetDevice(&device); status != cudaSuccess) {
    cudaGetLastError();  // returned, not left behind
    return status;
  }
#if CUACT_CHECK_POINTER_ATTRIBUTES
  for (std::size_t i = 0; i < count; ++i) {
    bool seen = false;
    for (std::size_t j = 0; j < i; ++j) seen = seen || arrays[j].pointer == arrays[i].pointer;
    if (seen) continue;
    if (const cudaError_t status = check_device_accessible(arrays[i].pointer, device);
        status != cudaSuccess) {
      return status;
    }
  }
#endif
  return cudaSuccess;
}

}  // namespace detail
}  // namespace cuact
