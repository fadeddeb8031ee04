/// \file
/// ReLU with a 1-bit mask: the forward records which elements were positive, the backward reads
/// only the mask and dy. Saved-activation memory is 1 bit instead of sizeof(T) bytes per element.
///
/// Layout: a mask is read with the element type and n it was written with. Bit b of the mask is bit
/// b % 32 of word b / 32; element i of n elements of T is bit relu_mask_bit<T>(i, n), 1 where
/// x > 0 (NaN gives 0); bits past n in the last word are written as 0. For 16-bit types bit i is
/// element i. For fp32 and fp64 each block of 256 elements is permuted within its 256 bits so
/// that the forward's threads access memory in whole 16-byte vectors side by side (the order:
/// detail::mask_layout); the last n % 256 elements are again bit i for element i.
#pragma once

#include "detail/config.cuh"  // first: it rejects a host-only compiler

#include <cstddef>
#include <cstdint>

#include "activations.cuh"
#include "detail/dispatch.cuh"
#include "detail/kernels/relu_mask.cuh"
#include "elementwise.cuh"
#include "error.cuh"

namespace cuact {

/// The mask backward's op is a select (its call passes the light hint): light in its traits too,
/// so its bulk-tile kernel exists (dispatch.cuh: may_take_bulk_tiles_v).
template <class T>
struct tuning_traits<detail::masked_gradient<T>> : tuning_defaults<detail::cost_hint::light> {};

/// Number of 32-bit mask words for n elements.
CUACT_HOST_DEVICE constexpr std::size_t relu_mask_words(std::size_t n) {
  return detail::mask_words(n);
}

/// The mask bit of element i in the mask of n elements of T (see the layout above).
template <class T>
CUACT_HOST_DEVICE constexpr std::size_t relu_mask_bit(std::size_t i, std::size_t n) {
  return detail::mask_layout<T>(n).bit_of(i);
}

/// ReLU forward that also writes the mask. `mask` holds relu_mask_words(n) words, is 4-byte
/// aligned and overlaps neither `in` nor `out`; out may equal in. Errors as cuact::forward.
template <class T>
cudaError_t relu_forward_mask(const T* in, T* out, std::uint32_t* mask, std::size_t n,
                              cudaStream_t stream = nullptr) {
  return detail::run_sign_mask_forward(forward_op<relu, T>{}, in, out, mask, n, stream);
}

/// dx[i] = element i's bit ? dy[i] : 0, with the mask relu_forward_mask wrote for the same T and
/// n; reads mask and dy only (4.125 instead of 8 bytes per fp32 element). dx may equal dy; the
/// mask overlaps nothing.
template <int VecWidth = auto_width, class T>
cudaError_t relu_backward_mask(const std::uint32_t* mask, const T* dy, T* dx, std::size_t n,
                               cudaStream_t stream = nullptr) {
  detail::check_input_type<T>();
  const detail::array_arg mask_arg = {mask, detail::checked_bytes(relu_mask_words(n), 4),
                                      alignof(std::uint32_t), detail::array_role::exclusive_input};
  return detail::run_elementwise<VecWidth>(detail::make_masked_gradient<T>(mask, n), outputs(dx), n,
                                           inputs(dy), stream, detail::cost_hint::light,
                                           detail::every_input_in_place, &mask_arg, 1);
}

}  // namespace cuact
