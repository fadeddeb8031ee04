/// \file
/// cuact::forward: out[i] = act(in[i]).
#pragma once

#include "detail/config.cuh"  // first: it rejects a host-only compiler

#include <cstddef>

#include "detail/std.cuh"
#include "activation.cuh"
#include "detail/dispatch.cuh"
#include "elementwise.cuh"
#include "error.cuh"

namespace cuact {

/// out[i] = act(in[i]) for i in [0, n), on `stream`.
///
/// - T: float, double, __half, __nv_bfloat16 (16-bit types compute in float).
/// - VecWidth: elements per vector access; auto_width = 16 bytes / sizeof(T).
/// - out == in is in place; any other overlap is cudaErrorInvalidValue.
/// - Errors as cuact::transform: nothing is launched or written when an argument is rejected.
template <int VecWidth = auto_width, class Activation, class T>
cudaError_t forward(Activation act, const T* in, T* out, std::size_t n,
                    cudaStream_t stream = nullptr) {
  detail::check_input_type<T>();
  check_activation<Activation, detail::compute_t<T>>();
  using op_t = forward_op<Activation, T>;  // its hint: the activation's, for T (activation.cuh)
  // Only a forward without a declared cost may be tabulated (launch.cuh: tabulates), so only
  // its instantiation holds the table kernels.
  constexpr detail::cost_hint hint = detail::forward_cost<op_t>;
  return detail::run_elementwise<VecWidth, /*Tabulable=*/hint == detail::cost_hint::estimate>(
      op_t{{}, act}, outputs(out), n, inputs(in), stream, hint, detail::every_input_in_place);
}

/// in and out of different element types: not a forward (it compiles to the static_assert below,
/// which names the entries that store another type).
template <
    int VecWidth = auto_width, class Activation, class In, class Out,
    cuda::std::enable_if_t<!cuda::std::is_same_v<In, cuda::std::remove_const_t<Out>>, int> = 0>
cudaError_t forward(Activation, const In*, Out*, std::size_t, cudaStream_t = nullptr) {
  static_assert(cuda::std::is_same_v<In, Out>,
                "cuact::forward: in and out must have one element type T; for an output of "
                "another type use cuact::forward_cast(act, in, out, n, stream) (fp32 -> bf16, "
                "...), or cuact::forward_quantize(act, in, out, n, scale, amax, ...) for fp8 "
                "with a scale (both in cuact/fused.cuh)");
  return cudaErrorInvalidValue;
}

/// In-place shorthand: data[i] = act(data[i]).
template <int VecWidth = auto_width, class Activation, class T>
cudaError_t forward(Activation act, T* data, std::size_t n, cudaStream_t stream = nullptr) {
  return forward<VecWidth>(act, static_cast<const T*>(data), data, n, stream);
}

}  // namespace cuact
