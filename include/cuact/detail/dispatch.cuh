/// \file
/// What every public entry does: compile-time checks, n == 0, validation, vector width, launch.
#pragma once

#include <type_traits>

#include "../elementwise.cuh"
#include "config.cuh"
#include "launch.cuh"
#include "numeric.cuh"
#include "validate.cuh"

namespace cuact {
namespace detail {

template <class T>
constexpr void check_value_type() {
  static_assert(is_supported_type_v<T>,
                "cuact: unsupported element type; supported are float, double, __half and "
                "__nv_bfloat16");
}

/// The vector width for T: auto_width is 16 bytes / sizeof(T).
template <class T, int VecWidth>
constexpr int resolve_width() {
  static_assert(VecWidth == auto_width || VecWidth == 1 || VecWidth == 2 || VecWidth == 4 ||
                    VecWidth == 8 || VecWidth == 16,
                "cuact: VecWidth must be cuact::auto_width, 1, 2, 4, 8 or 16");
  constexpr int width = VecWidth == auto_width ? static_cast<int>(16 / sizeof(T)) : VecWidth;
  static_assert(width * sizeof(T) <= 16,
                "cuact: VecWidth * sizeof(T) must be at most 16 bytes (one vector access)");
  return width;
}

template <class Activation, class T>
constexpr void check_activation() {
  using C = compute_t<T>;
  static_assert(std::is_copy_constructible_v<Activation>,
                "cuact: an activation must be copyable (it is passed to the kernel by value)");
  static_assert(std::is_invocable_r_v<C, const Activation&, C>,
                "cuact: an activation must provide `template <class C> __host__ __device__ C "
                "operator()(C x) const`, callable with the compute type C (float for float, "
                "__half and __nv_bfloat16 storage; double for double)");
}

/// An input array and whether it may be the output itself (in place).
template <class T>
struct input_arg {
  const T* pointer;
  bool may_equal_output;
};

/// Validate, then launch `op` over n elements: output[i] = op(inputs[i]...). `side` is an array
/// the op reads by itself (the ReLU mask), validated with the others; nullptr for none.
template <int VecWidth, class T, class Op, class... Inputs>
cudaError_t transform(Op op, T* output, std::size_t n, cudaStream_t stream, const array_arg* side,
                      input_arg<Inputs>... inputs) {
  check_value_type<T>();
  constexpr int width = resolve_width<T, VecWidth>();
  if (n == 0) return cudaSuccess;
  const array_arg arrays[] = {array_of<T>(output, n, true, false),
                              array_of<T>(inputs.pointer, n, false, inputs.may_equal_output)...,
                              side != nullptr ? *side : array_arg{}};
  const std::size_t count = sizeof(arrays) / sizeof(arrays[0]) - (side == nullptr);
  if (const cudaError_t status = validate_arrays(arrays, count); status != cudaSuccess) {
    return status;
  }
  return launch_elementwise(make_elementwise_params<width>(op, output, n, inputs.pointer...),
                            stream);
}

}  // namespace detail
}  // namespace cuact
