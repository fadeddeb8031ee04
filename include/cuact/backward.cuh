/// \file
/// Gradients: cuact::backward (from the input x) and cuact::backward_from_output (from
/// y = act(x)).
#pragma once

#include "detail/config.cuh"  // first: it rejects a host-only compiler

#include <cstddef>

#include "detail/std.cuh"
#include "activation.cuh"
#include "detail/dispatch.cuh"
#include "elementwise.cuh"
#include "error.cuh"

namespace cuact {
namespace detail {
/// Backward entries: dx may be dy (in place), never x or y (input 0).
inline constexpr in_place_inputs gradient_in_place = 0b10;
/// True when x (or y), dy and dx do not share one element type.
template <class X, class Dy, class Dx>
inline constexpr bool mixed_gradient_types_v =
    !(cuda::std::is_same_v<X, Dy> && cuda::std::is_same_v<X, cuda::std::remove_const_t<Dx>>);
#define CUACT_DETAIL_MIXED_GRADIENT_MESSAGE(entry)                                            \
  "cuact::" entry                                                                             \
  ": x, dy and dx must have one element type T; for arrays of other types use "               \
  "cuact::transform(cuact::gradient_op<Activation, DxType>{{}, act}, cuact::outputs(dx), n, " \
  "cuact::inputs(x, dy), stream) (transform.cuh), or cuact::forward_cast / "                  \
  "cuact::forward_quantize for a forward that stores another type"
}  // namespace detail

/// dx[i] = dy[i] * act'(x[i]) (PyTorch semantics: relu as threshold_backward, selu as
/// elu_backward). dx may equal dy (in place); any other overlap with dx is cudaErrorInvalidValue.
/// Errors as cuact::forward. The activation needs a `derivative(C x)` (or `gradient(C dy, C x)`)
/// member.
template <int VecWidth = auto_width, class Activation, class T>
cudaError_t backward(Activation act, const T* x, const T* dy, T* dx, std::size_t n,
                     cudaStream_t stream = nullptr) {
  detail::check_input_type<T>();
  check_activation<Activation, detail::compute_t<T>>();
  static_assert(has_derivative_v<Activation>,
                "cuact::backward: the activation needs a member `template <class C> __host__ "
                "__device__ C derivative(C x) const` returning act'(x)");
  return detail::run_elementwise<VecWidth>(gradient_op<Activation, T>{{}, act}, outputs(dx), n,
                                           inputs(x, dy), stream, detail::declared_cost<Activation>,
                                           detail::gradient_in_place);
}

/// x, dy and dx of different element types: not a backward (it compiles to the static_assert
/// below, which names cuact::transform with cuact::gradient_op).
template <int VecWidth = auto_width, class Activation, class X, class Dy, class Dx,
          cuda::std::enable_if_t<detail::mixed_gradient_types_v<X, Dy, Dx>, int> = 0>
cudaError_t backward(Activation, const X*, const Dy*, Dx*, std::size_t, cudaStream_t = nullptr) {
  static_assert(!detail::mixed_gradient_types_v<X, Dy, Dx>,
                CUACT_DETAIL_MIXED_GRADIENT_MESSAGE("backward"));
  return cudaErrorInvalidValue;
}

/// dx[i] = dy[i] * act'(x[i]) computed from the forward's output y[i] = act(x[i]), so the forward
/// may have run in place over x. For activations whose derivative is a function of y
/// (relu: y > 0; selu: y > 0 ? scale : y + scale * alpha). dx may equal dy.
template <int VecWidth = auto_width, class Activation, class T>
cudaError_t backward_from_output(Activation act, const T* y, const T* dy, T* dx, std::size_t n,
                                 cudaStream_t stream = nullptr) {
  detail::check_input_type<T>();
  check_activation<Activation, detail::compute_t<T>>();
  static_assert(has_derivative_from_output_v<Activation>,
                "cuact::backward_from_output: the activation needs a member `template <class C> "
                "__host__ __device__ C derivative_from_output(C y) const` returning act'(x) "
                "given y = act(x)");
  return detail::run_elementwise<VecWidth>(
      gradient_from_output_op<Activation, T>{{}, act}, outputs(dx), n, inputs(y, dy), stream,
      detail::from_output_cost<Activation>, detail::gradient_in_place);
}

/// y, dy and dx of different element types: see backward's overload above.
template <int VecWidth = auto_width, class Activation, class Y, class Dy, class Dx,
          cuda::std::enable_if_t<detail::mixed_gradient_types_v<Y, Dy, Dx>, int> = 0>
cudaError_t backward_from_output(Activation, const Y*, const Dy*, Dx*, std::size_t,
                                 cudaStream_t = nullptr) {
  static_assert(!detail::mixed_gradient_types_v<Y, Dy, Dx>,
                CUACT_DETAIL_MIXED_GRADIENT_MESSAGE("backward_from_output"));
  return cudaErrorInvalidValue;
}
#undef CUACT_DETAIL_MIXED_GRADIENT_MESSAGE

}  // namespace cuact
