/// \file
/// Storage types, their compute types and the conversions between them. Kept apart from the
/// activations (the CUTLASS split): load -> to_compute -> activate -> from_compute -> store.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "std.cuh"
#include "config.cuh"

namespace cuact {
namespace detail {

/// Types an operation may read or write.
template <class T>
inline constexpr bool is_supported_type_v =
    cuda::std::is_same_v<T, float> || cuda::std::is_same_v<T, double> ||
    cuda::std::is_same_v<T, __half> || cuda::std::is_same_v<T, __nv_bfloat16>;

/// Types an operation may only write: 8-bit floats, produced by saturating conversion from float.
template <class T>
inline constexpr bool is_output_only_type_v =
    cuda::std::is_same_v<T, __nv_fp8_e4m3> || cuda::std::is_same_v<T, __nv_fp8_e5m2>;

/// The arithmetic type for storage type T: 16-bit and 8-bit types compute in float (their own
/// arithmetic would round after every operation and is no faster on a memory-bound kernel).
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
template <>
struct compute_type<__nv_fp8_e4m3> {
  using type = float;
};
template <>
struct compute_type<__nv_fp8_e5m2> {
  using type = float;
};
template <class T>
using compute_t = typename compute_type<T>::type;

CUACT_HOST_DEVICE float to_compute(__half v) { return __half2float(v); }
CUACT_HOST_DEVICE float to_compute(__nv_bfloat16 v) { return __bfloat162float(v); }
CUACT_HOST_DEVICE float to_compute(float v) { return v; }
CUACT_HOST_DEVICE double to_compute(double v) { return v; }

/// Round-to-nearest-even conversion to storage; 8-bit floats saturate to their largest finite
/// value (NaN stays NaN), as TransformerEngine's fp8 casts do.
template <class T, class C>
CUACT_HOST_DEVICE T from_compute(C v) {
  if constexpr (cuda::std::is_same_v<T, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (cuda::std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else if constexpr (cuda::std::is_same_v<T, __nv_fp8_e4m3>) {
    __nv_fp8_e4m3 result;
    result.__x = __nv_cvt_float_to_fp8(static_cast<float>(v), __NV_SATFINITE, __NV_E4M3);
    return result;
  } else if constexpr (cuda::std::is_same_v<T, __nv_fp8_e5m2>) {
    __nv_fp8_e5m2 result;
    result.__x = __nv_cvt_float_to_fp8(static_cast<float>(v), __NV_SATFINITE, __NV_E5M2);
    return result;
  } else {
    return static_cast<T>(v);
  }
}

/// The quantize's step for one activation value y: |y| folded into *amax (one FMNMX with |y| as
/// its operand; fmaxf skips a NaN y, as TransformerEngine's amax), y * scale returned in y's type.
/// Both quantize ops take it, the computed one (fused.cuh: amax_op) and the tabulated one
/// (kernels/table.cuh: bf16_table_quantize_op), so that they write the same bytes and amax.
template <class C>
CUACT_HOST_DEVICE C scale_folding_amax(C y, float scale, float* amax) {
  *amax = fmaxf(*amax, fabsf(static_cast<float>(y)));
  return y * static_cast<C>(scale);
}

}  // namespace detail
}  // namespace cuact
