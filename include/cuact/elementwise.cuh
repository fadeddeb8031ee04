/// \file
/// The one kernel template behind every cuact operation, and its per-thread body.
///
/// Public for users who launch with their own grid or capture into their own graphs:
///
///     auto params = cuact::make_elementwise_params<4>(cuact::relu{}, out, n, in);
///     cuact::elementwise_kernel<<<blocks, threads, 0, stream>>>(params);   // any grid is correct
///
/// `cuact::forward` and `cuact::backward` validate their arguments and then do exactly that with
/// a grid chosen from measurements (detail/launch.cuh).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "detail/config.cuh"
#include "detail/numeric.cuh"

namespace cuact {

/// `Width` elements of T, aligned to their size so one access moves them (16 bytes at most:
/// the widest load an SM issues per thread).
template <class T, int Width>
struct alignas(sizeof(T) * Width) vector_of {
  T elements[Width];
};

/// Loads and stores of the per-thread body. The GPU uses this one; the CPU tests pass one that
/// records every access, so they check bounds and alignment of the very code the GPU runs.
struct global_memory_access {
  template <class Vector>
  CUACT_HOST_DEVICE Vector load(const Vector* from) const {
    return *from;
  }
  template <class Vector>
  CUACT_HOST_DEVICE void store(Vector* to, const Vector& value) const {
    *to = value;
  }
};

/// One launch's arguments: NumInputs input arrays, one output array, the operation, and the
/// split of [0, n) into a scalar head (until every pointer is VecWidth-aligned), full vectors, and
/// a scalar tail. When the pointers are not co-aligned, head = vectors = 0 and tail = n.
///
/// Op is called with NumInputs values of the compute type (float for 16-bit storage) and returns
/// the output value in that type. An Op that declares `static constexpr bool takes_element_index
/// = true` is called as op(i, values...) with the element's index i in [0, n) first (the ReLU
/// bit-mask backward finds its bit that way).
template <class T, int VecWidth, int NumInputs, class Op>
struct elementwise_params {
  static_assert(NumInputs >= 1, "cuact: an elementwise operation reads at least one array");
  using value_type = T;
  static constexpr int vec_width = VecWidth;
  static constexpr int num_inputs = NumInputs;

  const T* inputs[NumInputs];
  T* output;
  std::size_t head;     ///< scalar elements before the first vector
  std::size_t vectors;  ///< VecWidth-element vectors after the head
  std::size_t tail;     ///< scalar elements after the vectors
  Op op;

  /// Threads that one pass over the data needs: one per vector, or per scalar if there are more.
  CUACT_HOST_DEVICE std::size_t work_items() const {
    return vectors > head + tail ? vectors : head + tail;
  }
};

namespace detail {

template <class Op, class = void>
inline constexpr bool takes_element_index_v = false;
template <class Op>
inline constexpr bool takes_element_index_v<Op, std::void_t<decltype(Op::takes_element_index)>> =
    Op::takes_element_index;

// The bodies also run on the host with the tests' recording Access, which is host-only.
#pragma nv_exec_check_disable
template <class T, int Width, int NumInputs, class Op, class Access, std::size_t... I>
CUACT_HOST_DEVICE void transform_vector(const T* const (&inputs)[NumInputs], T* output,
                                        std::size_t first, const Op& op, const Access& access,
                                        std::index_sequence<I...>) {
  using vector_t = vector_of<T, Width>;
  // All loads are issued before any arithmetic so they are in flight together.
  const vector_t loaded[NumInputs] = {
      access.load(reinterpret_cast<const vector_t*>(inputs[I] + first))...};
  vector_t result;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int j = 0; j < Width; ++j) {
    if constexpr (takes_element_index_v<Op>) {
      result.elements[j] = from_compute<T>(op(first + j, to_compute(loaded[I].elements[j])...));
    } else {
      result.elements[j] = from_compute<T>(op(to_compute(loaded[I].elements[j])...));
    }
  }
  access.store(reinterpret_cast<vector_t*>(output + first), result);
}

}  // namespace detail

/// The per-thread body: thread `thread` of `num_threads` transforms vectors thread,
/// thread + num_threads, ... and then the head and tail scalars in the same grid-stride order.
/// Correct for every (thread, num_threads) decomposition, including a single thread; each element
/// is read and written once, by one thread, and nothing outside [0, n) is touched.
#pragma nv_exec_check_disable
template <class T, int VecWidth, int NumInputs, class Op, class Access = global_memory_access>
CUACT_HOST_DEVICE void elementwise_thread(const elementwise_params<T, VecWidth, NumInputs, Op>& params,
                                          std::size_t thread, std::size_t num_threads,
                                          const Access& access = {}) {
  const auto inputs = std::make_index_sequence<NumInputs>{};
  for (std::size_t v = thread; v < params.vectors; v += num_threads) {
    detail::transform_vector<T, VecWidth>(params.inputs, params.output, params.head + v * VecWidth,
                                          params.op, access, inputs);
  }
  const std::size_t scalars = params.head + params.tail;
  const std::size_t tail_shift = params.vectors * VecWidth;  // the tail starts after the vectors
  for (std::size_t s = thread; s < scalars; s += num_threads) {
    const std::size_t index = s < params.head ? s : s + tail_shift;
    detail::transform_vector<T, 1>(params.inputs, params.output, index, params.op, access, inputs);
  }
}

/// The kernel: a grid-stride loop over elementwise_thread, correct for any grid and block size.
template <class T, int VecWidth, int NumInputs, class Op>
CUACT_KERNEL void elementwise_kernel(const elementwise_params<T, VecWidth, NumInputs, Op> params) {
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t num_threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  elementwise_thread(params, thread, num_threads);
}

/// Builds the launch arguments: vectors only where every pointer has the same offset from a
/// VecWidth * sizeof(T) boundary (then a scalar head reaches the boundary), else scalars only.
/// No validation here; cuact::forward/backward validate before they call it.
template <int VecWidth, class T, class Op, class... Inputs>
elementwise_params<T, VecWidth, sizeof...(Inputs), Op> make_elementwise_params(
    Op op, T* output, std::size_t n, const Inputs*... inputs) {
  static_assert((std::is_same_v<Inputs, T> && ...), "cuact: all arrays have the same element type");
  static_assert(VecWidth >= 1 && (VecWidth & (VecWidth - 1)) == 0,
                "cuact: the vector width is a power of two");
  constexpr std::uintptr_t vector_bytes = sizeof(T) * VecWidth;
  const std::uintptr_t offset = reinterpret_cast<std::uintptr_t>(output) % vector_bytes;
  const bool co_aligned =
      ((reinterpret_cast<std::uintptr_t>(inputs) % vector_bytes == offset) && ...) &&
      offset % sizeof(T) == 0;
  elementwise_params<T, VecWidth, sizeof...(Inputs), Op> params{{inputs...}, output, 0, 0, n, op};
  if (co_aligned) {
    const std::size_t to_boundary = offset == 0 ? 0 : (vector_bytes - offset) / sizeof(T);
    params.head = to_boundary < n ? to_boundary : n;
    params.vectors = (n - params.head) / VecWidth;
    params.tail = n - params.head - params.vectors * VecWidth;
  }
  return params;
}

}  // namespace cuact
