/// \file
/// The kernel template behind every cuact operation and its per-thread body, for users who launch
/// with their own grid or capture into their own graphs:
///
///     auto params = cuact::make_elementwise_params<4>(cuact::relu{}, out, n, in);
///     cuact::elementwise_kernel<<<blocks, threads, 0, stream>>>(params);   // any grid is correct
///
/// and the array packs that name an operation's outputs and inputs (cuact::transform).
#pragma once

#include "detail/config.cuh"  // first: it rejects a host-only compiler

#include <cuda/std/cstddef>

#ifndef __CUDACC_RTC__
#include "detail/dispatch.cuh"  // host-only: validation and launch
#endif
#include "detail/kernels/elementwise.cuh"

namespace cuact {

#ifndef __CUDACC_RTC__
/// Vector width chosen from the element types: 16 bytes / the largest element's size.
inline constexpr int auto_width = detail::auto_width_tag;
#endif

/// `Width` elements of T aligned to their size, so one access moves them.
using detail::vector_of;
/// The loads and stores of the per-thread body on the GPU.
using detail::global_memory_access;
/// One launch's arguments: arrays, operation, and the head / vectors / tail split of [0, n).
using detail::elementwise_params;
/// The per-thread body: a grid-stride loop, correct for any (thread, num_threads).
using detail::elementwise_thread;
/// The kernel: elementwise_thread over the whole grid.
using detail::elementwise_kernel;
/// Op compiled for one vector per thread: `cuact::one_vector<cuact::selu>{}`, with parameters
/// `cuact::one_vector<cuact::elu>{{0.5}}`. Op's own params compile the body for up to
/// detail::max_load_bytes_per_thread (tuning_table.cuh) of loads in flight per thread: a loop over vector slots even
/// at vectors_per_thread = 1, and for some ops registers that cost resident blocks. cuact's
/// launch model runs heavy ops so where that pays; `bench --headline` compares the two.
template <class Op>
using one_vector = detail::one_vector_op<Op>;

// Host-only from here: the arrays and launch arguments are built where the kernel is launched.
#ifndef __CUDACC_RTC__
/// The outputs of an operation, in order: `cuact::outputs(dx)`, `cuact::outputs(da, db)`.
template <class... T>
detail::output_arrays<T...> outputs(T*... pointers) {
  return {{pointers...}};
}
/// The inputs of an operation, in order: `cuact::inputs(x, dy)`.
template <class... T>
detail::input_arrays<T...> inputs(const T*... pointers) {
  return {{pointers...}};
}

/// Launch arguments for `op` over n elements of the given arrays: vectors of VecWidth elements
/// where every pointer sits at the same offset from its vector boundary, scalars elsewhere. No
/// validation (cuact::transform validates). `vectors_per_thread` vectors are loaded before any is
/// computed (capped by the kernel; 1 is always valid).
template <int VecWidth, class Op, class... Out, class... In>
auto make_elementwise_params(Op op, const detail::output_arrays<Out...>& out, cuda::std::size_t n,
                             const detail::input_arrays<In...>& in,
                             unsigned vectors_per_thread = 1) {
  return detail::make_params<VecWidth>(op, out, n, in, vectors_per_thread);
}

/// Single-output shorthand: make_elementwise_params<4>(op, out, n, in...).
template <int VecWidth, class Op, class Out, class... In>
auto make_elementwise_params(Op op, Out* out, cuda::std::size_t n, const In*... in) {
  return detail::make_params<VecWidth>(op, outputs(out), n, inputs(in...));
}
#endif  // __CUDACC_RTC__

}  // namespace cuact
