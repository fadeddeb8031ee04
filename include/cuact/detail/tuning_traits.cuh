/// \file
/// What the launch reads of an operation, outside the operation: the cost hint an activation may
/// declare (cuact::cost), and cuact::tuning_traits, which turns that hint into the facts the launch
/// model reads. The built-in activations specialise it (cuact/tuning.cuh); a user's activation
/// gets the defaults of its hint and never needs to. The library's wrappers (forward_op,
/// gradient_op, the fused ops) pass their activation's traits on through a nested `tuning` type.
#pragma once

#include "std.cuh"

#include "config.cuh"
#include "tuning_table.cuh"

namespace cuact {

/// The one optional cost hint of an activation (CUTLASS's `kIsHeavy`):
/// `static constexpr cuact::cost cost = cuact::cost::heavy;`. Without it the launch estimates.
enum class cost {
  light,  ///< a few instructions per element (a compare and a select): memory-bound everywhere
  heavy,  ///< tens of instructions per element (exp, log, a division)
  /// heavy, and its float forward issues about as many instructions per element as a device with
  /// a tight budget affords at its copy ceiling (gelu's erfc form): it may make several passes
  compute_bound,
};

namespace detail {

/// The compute-cost hint as the launcher receives it.
enum class cost_hint {
  estimate,  ///< no hint: estimated (launch.cuh: model_launch_shape)
  light,     ///< cost::light
  heavy,     ///< cost::heavy (and cost::compute_bound outside the forward)
  /// a forward declared cost::compute_bound: heavy, and instruction-bound for float data where the
  /// budget is under compute_bound_budget_per_array per array (then it makes
  /// `compute_bound_passes` passes)
  compute_bound,
};

/// The launch facts of an operation, as values: the base of every tuning_traits.
/// `Declared` is the hint outside the forward, `Forward` the forward's, `FromOutput` the backward
/// from the output's.
template <cost_hint Declared, cost_hint Forward = Declared, cost_hint FromOutput = Declared,
          unsigned Passes = default_compute_bound_passes, bool Long16bitMath = false,
          bool ShortFloatMath = false, bool GainsFromBulkTiles = false, bool ShortBf16Math = false>
struct tuning_values {
  static constexpr cost_hint declared_cost = Declared;
  static constexpr cost_hint forward_cost = Forward;
  static constexpr cost_hint from_output_cost = FromOutput;
  static constexpr unsigned compute_bound_passes = Passes;
  static constexpr bool has_long_16bit_math = Long16bitMath;
  static constexpr bool has_short_float_math = ShortFloatMath;
  static constexpr bool gains_from_bulk_tiles = GainsFromBulkTiles;
  static constexpr bool has_short_bf16_math = ShortBf16Math;
};

/// The hint an operation declares (`cost`), as the launcher's cost_hint; estimate without one.
template <class A, class = void>
inline constexpr cost_hint hint_of = cost_hint::estimate;
template <class A>
inline constexpr cost_hint hint_of<A, cuda::std::void_t<decltype(A::cost)>> =
    A::cost == cost::light   ? cost_hint::light
    : A::cost == cost::heavy ? cost_hint::heavy
                             : cost_hint::compute_bound;

/// The hint outside the forward: a compute-bound activation is heavy there.
constexpr cost_hint outside_forward(cost_hint hint) {
  return hint == cost_hint::compute_bound ? cost_hint::heavy : hint;
}

}  // namespace detail

/// The launch facts of a hint alone: what a user's activation declaring `cost = Hint` gets.
template <detail::cost_hint Hint>
using tuning_defaults =
    detail::tuning_values<detail::outside_forward(Hint), Hint, detail::outside_forward(Hint)>;

namespace detail {
/// tuning_traits' default: the library's wrappers carry their traits as a nested `tuning` type
/// (tuning_of_* below); any other op gets the defaults of its hint.
template <class Op, class = void>
struct default_tuning : tuning_defaults<hint_of<Op>> {};
template <class Op>
struct default_tuning<Op, cuda::std::void_t<typename Op::tuning>> : Op::tuning {};

template <class Op>
struct one_vector_op;  // kernels/elementwise.cuh
}  // namespace detail

/// The defaults of Op's own hint: the base of a specialisation of tuning_traits<Op> that changes
/// some members only.
template <class Op>
using tuning_defaults_of = tuning_defaults<detail::hint_of<Op>>;

/// What the launch reads of operation Op, beyond its math:
/// - `declared_cost`, `forward_cost`, `from_output_cost`: its cost hint outside the forward, in the
///   forward and in the backward from the output (detail::cost_hint);
/// - `compute_bound_passes`: the passes of its compute-bound float forward where tight;
/// - `has_long_16bit_math`, `has_short_float_math`: how many vectors a heavy forward keeps in
///   flight (detail/dispatch.cuh: heavy_runs_one_vector);
/// - `gains_from_bulk_tiles`: a heavy forward that runs as bulk tiles where the budget is roomy
///   (detail/launch.cuh: takes_bulk_tiles);
/// - `has_short_bf16_math`: a heavy forward that runs as a light one with bf16 or fp8 results.
/// By default the defaults of its `cost` hint (tuning_defaults); the built-in activations are
/// specialised in cuact/tuning.cuh. A specialisation derives from tuning_defaults and restates
/// the members it changes.
template <class Op, class = void>
struct tuning_traits : detail::default_tuning<Op> {};
/// An op compiled for one vector per thread is tuned as the op (kernels/elementwise.cuh).
template <class Op>
struct tuning_traits<detail::one_vector_op<Op>> : tuning_traits<Op> {};

namespace detail {

/// The hint the launcher reads for an op outside its forward (tuning_traits::declared_cost).
template <class A>
inline constexpr cost_hint declared_cost = tuning_traits<A>::declared_cost;
/// The forward's hint (tuning_traits::forward_cost).
template <class A>
inline constexpr cost_hint forward_cost = tuning_traits<A>::forward_cost;
/// The backward from the output's hint (tuning_traits::from_output_cost).
template <class A>
inline constexpr cost_hint from_output_cost = tuning_traits<A>::from_output_cost;
/// tuning_traits::compute_bound_passes.
template <class A>
inline constexpr unsigned compute_bound_passes_of = tuning_traits<A>::compute_bound_passes;
/// tuning_traits::has_long_16bit_math.
template <class A>
inline constexpr bool has_long_16bit_math_of = tuning_traits<A>::has_long_16bit_math;
/// tuning_traits::has_short_float_math.
template <class A>
inline constexpr bool has_short_float_math_of = tuning_traits<A>::has_short_float_math;
/// tuning_traits::gains_from_bulk_tiles.
template <class A>
inline constexpr bool gains_from_bulk_tiles_of = tuning_traits<A>::gains_from_bulk_tiles;
/// tuning_traits::has_short_bf16_math.
template <class A>
inline constexpr bool has_short_bf16_math_of = tuning_traits<A>::has_short_bf16_math;

// The wrappers' traits, each the nested `tuning` of a base the wrapper derives from.

/// A wrapper that is not a forward (a backward from the input, a gated op): its activation's
/// hints outside the forward, nothing else.
template <class A>
struct tuning_of_activation {
  using tuning = tuning_values<declared_cost<A>, declared_cost<A>, from_output_cost<A>>;
};

/// As tuning_of_activation, and the activation's 16-bit math length (a gated forward).
template <class A>
struct tuning_of_gated {
  using tuning = tuning_values<declared_cost<A>, declared_cost<A>, from_output_cost<A>,
                               default_compute_bound_passes, has_long_16bit_math_of<A>>;
};

/// An activation applied to a scaled input (affine_activation): its hints outside the forward
/// (a compute-bound forward is not carried) and its math lengths.
template <class A>
struct tuning_of_affine {
  using tuning = tuning_values<declared_cost<A>, declared_cost<A>, from_output_cost<A>,
                               default_compute_bound_passes, has_long_16bit_math_of<A>,
                               has_short_float_math_of<A>>;
};

/// The backward from the output (gradient_from_output_op): the activation's from-output hint
/// everywhere.
template <class A>
struct tuning_of_from_output {
  using tuning = tuning_values<from_output_cost<A>>;
};

/// A forward (forward_op, bias_op): the activation's traits, but for its short bf16 math.
template <class A>
struct tuning_of_forward {
  using tuning = tuning_values<declared_cost<A>, forward_cost<A>, from_output_cost<A>,
                               compute_bound_passes_of<A>, has_long_16bit_math_of<A>,
                               has_short_float_math_of<A>, gains_from_bulk_tiles_of<A>>;
};

/// A forward whose results keep 8 significant bits or fewer (`Short`: bf16, fp8) of an activation
/// with short bf16 math: light, its other traits the activation's.
template <class A, bool Short>
struct tuning_of_rounded_forward : tuning_of_forward<A> {};
template <class A>
struct tuning_of_rounded_forward<A, true> {
  using tuning = tuning_values<cost_hint::light, cost_hint::light, cost_hint::light,
                               compute_bound_passes_of<A>, has_long_16bit_math_of<A>,
                               has_short_float_math_of<A>, gains_from_bulk_tiles_of<A>>;
};

/// A composition f(g(x)): heavy when either part is, light when both are, estimated otherwise;
/// long 16-bit math when either part's is.
template <cost_hint F, cost_hint G>
inline constexpr cost_hint composed_cost =
    F == cost_hint::heavy || G == cost_hint::heavy  ? cost_hint::heavy
    : F == cost_hint::light&& G == cost_hint::light ? cost_hint::light
                                                    : cost_hint::estimate;
template <class F, class G>
struct tuning_of_composition {
  static constexpr cost_hint hint = composed_cost<declared_cost<F>, declared_cost<G>>;
  using tuning = tuning_values<hint, hint, hint, default_compute_bound_passes,
                               has_long_16bit_math_of<F> || has_long_16bit_math_of<G>>;
};

}  // namespace detail
}  // namespace cuact
