/// \file
/// ReLU with a 1-bit mask: the forward records which elements were positive, the backward reads
/// only the mask and dy. Saved-activation memory is 1 bit instead of sizeof(T) bytes per element.
///
/// Layout: bit (i % 32) of 32-bit word i / 32 is element i; 1 means x > 0 (NaN gives 0). Bits of
/// the last word past n are written as 0.
#pragma once

#include <cstddef>
#include <cstdint>

#include "activations.cuh"
#include "detail/dispatch.cuh"
#include "detail/kernels/relu_mask.cuh"
#include "elementwise.cuh"

namespace cuact {

/// Number of 32-bit mask words for n elements.
CUACT_HOST_DEVICE constexpr std::size_t relu_mask_words(std::size_t n) {
  return detail::mask_words(n);
}

/// ReLU forward that also writes the mask. `mask` holds relu_mask_words(n) words, is 4-byte
/// aligned and overlaps neither `in` nor `out`; out may equal in. Errors as cuact::forward.
template <class T>
cudaError_t relu_forward_mask(const T* in, T* out, std::uint32_t* mask, std::size_t n,
                              cudaStream_t stream = nullptr) {
  return detail::run_sign_mask_forward(forward_op<relu, T>{}, in, out, mask, n, stream);
}

/// dx[i] = bit i of mask ? dy[i] : 0, with the mask from relu_forward_mask; reads mask and dy only
/// (4.125 instead of 8 bytes per fp32 element). dx may equal dy; the mask overlaps nothing.
template <int VecWidth = auto_width, class T>
cudaError_t relu_backward_mask(const std::uint32_t* mask, const T* dy, T* dx, std::size_t n,
                               cudaStream_t stream = nullptr) {
  detail::check_input_type<T>();
  const detail::array_arg mask_arg = {mask, detail::checked_bytes(relu_mask_words(n), 4),
                                      alignof(std::uint32_t), detail::array_role::exclusive_input};
  return detail::run_elementwise<VecWidth>(detail::masked_gradient{mask}, outputs(dx), n,
                                           inputs(dy), stream, detail::cost_hint::light,
                                           detail::every_input_in_place, &mask_arg, 1);
}

}  // namespace cuact
