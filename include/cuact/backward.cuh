/// \file
/// Gradients: cuact::backward (from the input x), cuact::backward_from_output (from y = act(x)),
/// and ReLU with a 1-bit mask (relu_forward_mask / relu_backward_mask).
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "activations.cuh"
#include "detail/dispatch.cuh"
#include "detail/relu_mask.cuh"

namespace cuact {
namespace detail {

#define CUACT_DETAIL_MEMBER_TRAIT(trait, member, ...)                                         \
  template <class A, class C, class = void>                                                  \
  inline constexpr bool trait = false;                                                       \
  template <class A, class C>                                                                \
  inline constexpr bool trait<A, C, std::void_t<decltype(std::declval<const A&>().member(__VA_ARGS__))>> = \
      true;
CUACT_DETAIL_MEMBER_TRAIT(has_derivative_v, derivative, std::declval<C>())
CUACT_DETAIL_MEMBER_TRAIT(has_derivative_from_output_v, derivative_from_output, std::declval<C>())
CUACT_DETAIL_MEMBER_TRAIT(has_gradient_v, gradient, std::declval<C>(), std::declval<C>())
CUACT_DETAIL_MEMBER_TRAIT(has_gradient_from_output_v, gradient_from_output, std::declval<C>(),
                          std::declval<C>())
#undef CUACT_DETAIL_MEMBER_TRAIT

/// dx = gradient(dy, x) where the activation defines it, else dy * derivative(x).
template <class Activation>
struct gradient_from_input {
  static constexpr bool is_heavy = is_heavy_v<Activation>;
  Activation act;
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x, C dy) const {
    if constexpr (has_gradient_v<Activation, C>) {
      return act.gradient(dy, x);
    } else {
      return dy * act.derivative(x);
    }
  }
};

/// dx = gradient_from_output(dy, y) where defined, else dy * derivative_from_output(y).
template <class Activation>
struct gradient_from_output {
  static constexpr bool is_heavy = is_heavy_v<Activation>;
  Activation act;
  template <class C>
  CUACT_HOST_DEVICE C operator()(C y, C dy) const {
    if constexpr (has_gradient_from_output_v<Activation, C>) {
      return act.gradient_from_output(dy, y);
    } else {
      return dy * act.derivative_from_output(y);
    }
  }
};

}  // namespace detail

/// dx[i] = dy[i] * act'(x[i]) (PyTorch semantics: relu as threshold_backward, selu as
/// elu_backward). dx may equal dy (in place); any other overlap with dx is cudaErrorInvalidValue.
/// Errors as cuact::forward. The activation needs a `derivative(C x)` (or `gradient(C dy, C x)`)
/// member.
template <int VecWidth = auto_width, class Activation, class T>
cudaError_t backward(Activation act, const T* x, const T* dy, T* dx, std::size_t n,
                     cudaStream_t stream = nullptr) {
  using C = detail::compute_t<T>;
  detail::check_activation<Activation, T>();
  static_assert(detail::has_derivative_v<Activation, C> || detail::has_gradient_v<Activation, C>,
                "cuact::backward: the activation needs a member `template <class C> __host__ "
                "__device__ C derivative(C x) const` returning act'(x)");
  return detail::transform<VecWidth>(detail::gradient_from_input<Activation>{act}, dx, n, stream,
                                     nullptr, detail::input_arg<T>{x, false},
                                     detail::input_arg<T>{dy, true});
}

/// dx[i] = dy[i] * act'(x[i]) computed from the forward's output y[i] = act(x[i]), so the forward
/// may have run in place over x. For activations whose derivative is a function of y
/// (relu: y > 0; selu: y > 0 ? scale : y + scale * alpha). dx may equal dy.
template <int VecWidth = auto_width, class Activation, class T>
cudaError_t backward_from_output(Activation act, const T* y, const T* dy, T* dx, std::size_t n,
                                 cudaStream_t stream = nullptr) {
  using C = detail::compute_t<T>;
  detail::check_activation<Activation, T>();
  static_assert(detail::has_derivative_from_output_v<Activation, C> ||
                    detail::has_gradient_from_output_v<Activation, C>,
                "cuact::backward_from_output: the activation needs a member `template <class C> "
                "__host__ __device__ C derivative_from_output(C y) const` returning act'(x) "
                "given y = act(x)");
  return detail::transform<VecWidth>(detail::gradient_from_output<Activation>{act}, dx, n, stream,
                                     nullptr, detail::input_arg<T>{y, false},
                                     detail::input_arg<T>{dy, true});
}

/// ReLU forward that also records one bit per element: bit (i % 32) of mask[i / 32] is 1 exactly
/// when in[i] > 0 (so NaN gives 0). Bits of the last word past n are written as 0. `mask` holds
/// relu_mask_words(n) words, is 4-byte aligned and overlaps neither `in` nor `out`; out may equal
/// in. Saved-activation memory is 1 bit instead of sizeof(T) bytes per element.
template <class T>
cudaError_t relu_forward_mask(const T* in, T* out, std::uint32_t* mask, std::size_t n,
                              cudaStream_t stream = nullptr) {
  detail::check_value_type<T>();
  if (n == 0) return cudaSuccess;
  const detail::array_arg arrays[] = {detail::array_of<T>(out, n, true, false),
                                      detail::array_of<T>(in, n, false, true),
                                      detail::mask_array(mask, n)};
  if (const cudaError_t status = detail::validate_arrays(arrays, 3); status != cudaSuccess) {
    return status;
  }
  return detail::launch_relu_mask_forward(detail::make_relu_mask_params(in, out, mask, n), stream);
}

/// dx[i] = bit i of mask ? dy[i] : 0, with the mask from relu_forward_mask; reads mask and dy only
/// (4.125 instead of 8 bytes per fp32 element). dx may equal dy.
template <int VecWidth = auto_width, class T>
cudaError_t relu_backward_mask(const std::uint32_t* mask, const T* dy, T* dx, std::size_t n,
                               cudaStream_t stream = nullptr) {
  detail::check_value_type<T>();
  if (n == 0) return cudaSuccess;
  const detail::array_arg mask_arg = detail::mask_array(mask, n);
  return detail::transform<VecWidth>(detail::relu_mask_gradient{mask}, dx, n, stream, &mask_arg,
                                     detail::input_arg<T>{dy, true});
}

}  // namespace cuact
