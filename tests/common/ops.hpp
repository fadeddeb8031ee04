// The operations the engine tests run, derived from the op table (op_table.hpp): per activation
// its forward, its backward from the input and its backward from the output, as the elementwise
// ops cuact's entries launch (cuact::forward_op, gradient_op, gradient_from_output_op) and as
// calls of the public entries. Also the reference evaluation of any elementwise op at one element,
// host and device: what the engine must reproduce bit for bit at every index, whatever the grid,
// vector width or pointer offsets.
#pragma once

#include <cuda/std/tuple>

#include <cstddef>
#include <type_traits>
#include <utility>

#include <cuact/cuact.cuh>

#include "op_table.hpp"
#include "support.hpp"

namespace cuact_test {

/// The three passes every activation of the table gets.
enum class pass { forward, backward, backward_from_output };
template <pass P>
using pass_constant = std::integral_constant<pass, P>;

inline const char* pass_name(pass p) {
  return p == pass::forward ? "forward" : p == pass::backward ? "backward" : "backward_from_output";
}
/// Inputs of a pass: x; x and dy; y and dy.
constexpr int pass_inputs(pass p) { return p == pass::forward ? 1 : 2; }

/// Whether activation A has pass P (backward needs a derivative, from-output its own).
template <pass P, class A>
inline constexpr bool pass_applies_v = P == pass::forward ||
                                       (P == pass::backward
                                            ? cuact::has_derivative_v<A>
                                            : cuact::has_derivative_from_output_v<A>);

/// Whether a row of the table gets the deep matrices (every explicit width, every vectors per
/// thread, direct launches, large n): one cheap and one compute-heavy activation stand for the
/// rest, whose index logic is the same.
template <class A>
inline constexpr bool deep_row_v = std::is_same_v<A, cuact::relu> || std::is_same_v<A, cuact::selu>;

/// f(pass_constant<P>{}) for every pass.
template <class F>
void for_each_pass(F&& f) {
  f(pass_constant<pass::forward>{});
  f(pass_constant<pass::backward>{});
  f(pass_constant<pass::backward_from_output>{});
}

/// The elementwise op of pass P of `act` for storage type Out.
template <pass P, class Out, class A>
auto pass_op(const A& act) {
  using op_t =
      std::conditional_t<P == pass::forward, cuact::forward_op<A, Out>,
                         std::conditional_t<P == pass::backward, cuact::gradient_op<A, Out>,
                                            cuact::gradient_from_output_op<A, Out>>>;
  op_t op{};  // the adaptors are aggregates (some with an empty base): set the member
  op.act = act;
  return op;
}

/// The public entry of pass P: forward(act, in0, out) (or forward(act, out) in place when
/// `in_place_overload`), backward(act, in0 = x, in1 = dy, out), backward_from_output(act, in0 = y,
/// in1 = dy, out).
template <pass P, int W, class A, class T>
cudaError_t call_entry(const A& act, const T* in0, const T* in1, T* out, std::size_t n,
                       bool in_place_overload, cudaStream_t stream) {
  if constexpr (P == pass::forward) {
    (void)in1;
    return in_place_overload ? cuact::forward<W>(act, out, n, stream)
                             : cuact::forward<W>(act, in0, out, n, stream);
  } else if constexpr (P == pass::backward) {
    (void)in_place_overload;
    return cuact::backward<W>(act, in0, in1, out, n, stream);
  } else {
    (void)in_place_overload;
    return cuact::backward_from_output<W>(act, in0, in1, out, n, stream);
  }
}

/// Vector width W as the engine resolves it for arrays whose largest element has `largest` bytes
/// (cuact::auto_width: 16 bytes).
constexpr int resolved_width(int width, std::size_t largest) {
  return width == cuact::auto_width ? static_cast<int>(16 / largest) : width;
}

/// f(std::integral_constant<int, W>{}) for W = 1, 2, 4, 8, 16 while W * sizeof(T) <= 16, then
/// cuact::auto_width.
template <class T, class F>
void for_each_width(F&& f) {
  f(std::integral_constant<int, 1>{});
  f(std::integral_constant<int, 2>{});
  if constexpr (sizeof(T) * 4 <= 16) f(std::integral_constant<int, 4>{});
  if constexpr (sizeof(T) * 8 <= 16) f(std::integral_constant<int, 8>{});
  f(std::integral_constant<int, cuact::auto_width>{});
}

// ---- the reference evaluation -----------------------------------------------------------------

namespace detail {
template <class Op, class... C>
__host__ __device__ auto call_op(const Op& op, std::size_t i, C... values) {
  if constexpr (cuact::detail::takes_element_index_v<Op>) {
    return op(i, values...);
  } else {
    (void)i;
    return op(values...);
  }
}
template <class... Out, class Value, std::size_t... O>
__host__ __device__ cuda::std::tuple<Out...> convert_results(const Value& value,
                                                             std::index_sequence<O...>) {
  if constexpr (sizeof...(Out) == 1) {
    return cuda::std::tuple<Out...>(cuact::detail::from_compute<Out>(value)...);
  } else {
    // a user's op returns a cuda::std::tuple, a fused op cuact's own tuple: get finds either
    using cuact::detail::get;
    using cuda::std::get;
    return cuda::std::tuple<Out...>(cuact::detail::from_compute<Out>(get<O>(value))...);
  }
}
}  // namespace detail

/// The outputs of `op` at element i, from the inputs' stored values: to compute type, op, to each
/// output's storage type, one element at a time.
#pragma nv_exec_check_disable
template <class... Out, class Op, class... In>
__host__ __device__ cuda::std::tuple<Out...> evaluate(const Op& op, std::size_t i, In... values) {
  return detail::convert_results<Out...>(
      detail::call_op(op, i, cuact::detail::to_compute(values)...),
      std::index_sequence_for<Out...>{});
}

}  // namespace cuact_test
