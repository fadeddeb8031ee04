/// \file
/// Argument checks run before any launch: a rejected call launches nothing, writes nothing, and
/// leaves no error behind in the CUDA runtime's last-error state.
#pragma once

#include "config.cuh"

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>

namespace cuact {
namespace detail {

/// The text cuact::last_error_detail() returns (error.cuh): this thread's, so concurrent callers
/// do not see each other's rejections. Fixed size: a rejection never allocates.
inline char* error_detail_text() {
  static thread_local char text[256] = "";
  return text;
}

/// Empties the text: the call it belongs to was accepted.
inline void clear_error_detail() { error_detail_text()[0] = '\0'; }

/// Records why a call is rejected (printf-style) and returns `status`, the error it returns.
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
inline cudaError_t
reject(cudaError_t status, const char* format, ...) {
  std::va_list arguments;
  va_start(arguments, format);
  std::vsnprintf(error_detail_text(), 256, format, arguments);
  va_end(arguments);
  return status;
}

/// An entry with nothing to do (n == 0): success, with the text emptied.
inline cudaError_t accepted_without_launch() {
  clear_error_detail();
  return cudaSuccess;
}

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
/// `attributes` receives what cudaPointerGetAttributes says (the other device, when rejected).
inline cudaError_t check_device_accessible(const void* pointer, int device,
                                           cudaPointerAttributes& attributes) {
  attributes = {};
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

/// The name of arrays[i] in a rejection's text: "output k" or "input k", k counting the arrays of
/// that kind before it (an entry's outputs come first, then its inputs, each in parameter order).
struct array_name {
  char text[24];
};
inline array_name name_of(const array_arg* arrays, std::size_t i) {
  const bool output = arrays[i].role == array_role::output;
  std::size_t k = 0;
  for (std::size_t j = 0; j < i; ++j) k += (arrays[j].role == array_role::output) == output;
  array_name name{};
  std::snprintf(name.text, sizeof(name.text), "%s %zu", output ? "output" : "input", k);
  return name;
}

/// Every check of an operation's arrays (n > 0 is assumed): sizes that fit size_t, null and
/// misaligned pointers, overlaps (may_overlap), and where each pointer lives, with one
/// cudaGetDevice and one cudaPointerGetAttributes per distinct pointer. On success `device` is
/// the current device, which the launch model needs.
/// Each rejection records its reason for cuact::last_error_detail(); success empties it.
inline cudaError_t validate_arrays(const array_arg* arrays, std::size_t count, int& device) {
  for (std::size_t i = 0; i < count; ++i) {
    const array_arg& a = arrays[i];
    if (a.pointer == nullptr) {
      return reject(cudaErrorInvalidValue, "%s: n > 0 with a null pointer",
                    name_of(arrays, i).text);
    }
    if (a.bytes == 0) {
      return reject(cudaErrorInvalidValue,
                    "%s: its size in bytes overflows size_t (or a workspace is smaller than "
                    "needed)",
                    name_of(arrays, i).text);
    }
    if (reinterpret_cast<std::uintptr_t>(a.pointer) % a.alignment != 0) {
      return reject(cudaErrorInvalidValue, "%s is not aligned to its element type (%zu bytes)",
                    name_of(arrays, i).text, a.alignment);
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (!may_overlap(a, arrays[j]) && ranges_overlap(a, arrays[j])) {
        return reject(cudaErrorInvalidValue, "%s overlaps %s without being equal",
                      name_of(arrays, i).text, name_of(arrays, j).text);
      }
    }
  }
  if (const cudaError_t status = cudaGetDevice(&device); status != cudaSuccess) {
    cudaGetLastError();  // returned, not left behind
    return reject(status, "cudaGetDevice failed: %s", cudaGetErrorString(status));
  }
#if CUACT_CHECK_POINTER_ATTRIBUTES
  for (std::size_t i = 0; i < count; ++i) {
    bool seen = false;
    for (std::size_t j = 0; j < i; ++j) seen = seen || arrays[j].pointer == arrays[i].pointer;
    if (seen) continue;
    cudaPointerAttributes attributes{};
    if (const cudaError_t status = check_device_accessible(arrays[i].pointer, device, attributes);
        status != cudaSuccess) {
      const array_name name = name_of(arrays, i);
      if (status == cudaErrorInvalidDevice) {
        return reject(status, "%s is on device %d, the current device is %d", name.text,
                      attributes.device, device);
      }
      if (status == cudaErrorInvalidValue) {
        return reject(status,
                      "%s is pageable host memory (or no memory CUDA knows): pass device, "
                      "managed or page-locked memory",
                      name.text);
      }
      return reject(status, "cudaPointerGetAttributes failed for %s: %s", name.text,
                    cudaGetErrorString(status));
    }
  }
#endif
  clear_error_detail();
  return cudaSuccess;
}

}  // namespace detail
}  // namespace cuact
