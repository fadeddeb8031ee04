/// \file
/// cuact::transform: the N-input, M-output elementwise entry every other entry is a thin wrapper
/// over.
///
///     // dx = dy * act'(x), two inputs, one output
///     cuact::transform(cuact::gradient_op<cuact::selu, float>{}, cuact::outputs(dx), n,
///                      cuact::inputs(x, dy), stream);
#pragma once

#include "detail/config.cuh"  // first: it rejects a host-only compiler

#include <cstddef>

#include "activation.cuh"
#include "detail/dispatch.cuh"
#include "elementwise.cuh"
#include "error.cuh"

namespace cuact {

/// outputs[i] = op(inputs[i]...) for i in [0, n), on `stream`.
///
/// - Each array has its own element type: inputs float, double, __half or __nv_bfloat16; outputs
///   those or __nv_fp8_e4m3 / __nv_fp8_e5m2 (saturating). 16-bit and 8-bit values compute in
///   float.
/// - `op` is called with one compute-type value per input (after the element index, for an op
///   declaring `takes_element_index = true`) and returns the output's value, or a
///   cuda::std::tuple of values for several outputs. It may declare a `cost`
///   hint (activation.cuh).
/// - An input may be exactly one of the outputs (in place: same pointer, same byte size); any
///   other overlap of an output with any array is cudaErrorInvalidValue. Inputs may overlap.
/// - Returns cudaSuccess without a launch when n == 0; cudaErrorInvalidValue for a null or
///   misaligned pointer, pageable host memory, or a byte size overflowing size_t;
///   cudaErrorInvalidDevice for memory of another device; otherwise the launch's status. Nothing
///   is launched or written when an argument is rejected.
template <int VecWidth = auto_width, class Op, class... Out, class... In>
cudaError_t transform(Op op, const detail::output_arrays<Out...>& out, std::size_t n,
                      const detail::input_arrays<In...>& in, cudaStream_t stream = nullptr) {
  return detail::run_elementwise<VecWidth>(op, out, n, in, stream, detail::forward_cost<Op>,
                                           detail::every_input_in_place);
}

}  // namespace cuact
