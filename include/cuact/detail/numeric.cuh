/// \file
/// Storage types, their compute types and the conversions between them. Kept apart from the
/// activations (the CUTLASS split): load -> to_compute -> activate -> from_compute -> store.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "config.cuh"

namespace cuact {
namespace detail {

template <class T>
inline constexpr bool is_supported_type_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, __half> ||
    std::is_same_v<T, __nv_bfloat16>;

/// The arithmetic type for storage type T: 16-bit types compute in float (their own arithmetic
/// would round after every operation and is no faster on a memory-bound kernel).
template <class T>
struct compute_type {
  using type = T;
};
template <>
struct compute_type<__half> {
  using type = float;
};
template <>
struct compute_type<__nv_bfloat16> {
  using type = float;
};
template <class T>
using compute_t = typename compute_type<T>::type;

CUACT_HOST_DEVICE float to_compute(__half v) { return __half2float(v); }
CUACT_HOST_DEVICE float to_compute(__nv_bfloat16 v) { return __bfloat162float(v); }
CUACT_HOST_DEVICE float to_compute(float v) { return v; }
CUACT_HOST_DEVICE double to_compute(double v) { return v; }

/// Round-to-nearest-even conversion back to storage.
template <class T>
CUACT_HOST_DEVICE T from_compute(compute_t<T> v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(v);
  } else {
    return v;
  }
}

}  // namespace detail
}  // namespace cuact
