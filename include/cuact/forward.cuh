/// \file
/// cuact::forward: out[i] = act(in[i]).
#pragma once

#include "detail/dispatch.cuh"

namespace cuact {

/// out[i] = act(in[i]) for i in [0, n), on `stream`.
///
/// - T: float, double, __half, __nv_bfloat16 (16-bit types compute in float).
/// - VecWidth: elements per vector access; auto_width = 16 bytes / sizeof(T).
/// - out == in is in place; any other overlap is cudaErrorInvalidValue.
/// - Returns cudaSuccess without a launch when n == 0; cudaErrorInvalidValue for a null or
///   misaligned pointer, pageable host memory, or n * sizeof(T) overflowing; cudaErrorInvalidDevice
///   for memory of another device; otherwise the launch's status. Nothing is launched or written
///   when an argument is rejected.
template <int VecWidth = auto_width, class Activation, class T>
cudaError_t forward(Activation act, const T* in, T* out, std::size_t n,
                    cudaStream_t stream = nullptr) {
  detail::check_activation<Activation, T>();
  return detail::transform<VecWidth>(act, out, n, stream, nullptr,
                                     detail::input_arg<T>{in, true});
}

/// In-place shorthand: data[i] = act(data[i]).
template <int VecWidth = auto_width, class Activation, class T>
cudaError_t forward(Activation act, T* data, std::size_t n, cudaStream_t stream = nullptr) {
  return forward<VecWidth>(act, static_cast<const T*>(data), data, n, stream);
}

}  // namespace cuact
