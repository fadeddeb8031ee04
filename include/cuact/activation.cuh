/// \file
/// The activation concept in one place: what an activation provides, the traits that detect it,
/// its cost hint, the accuracy tag it may take, and the adaptors through which every entry calls
/// it (forward, gradient from the input, gradient from the output).
///
/// An activation is any copyable type with
///
///     template <class C> __host__ __device__ C operator()(C x) const;                 // act(x)
///
/// called with the compute type C (float for float, __half and __nv_bfloat16 storage; double for
/// double). It may hold parameters. For the backward pass it may also provide
///
///     template <class C> __host__ __device__ C derivative(C x) const;                 // act'(x)
///     template <class C> __host__ __device__ C derivative_from_output(C y) const;     // act'(x), y = act(x)
///     template <class C> __host__ __device__ C gradient(C dy, C x) const;             // dx; default dy * act'(x)
///     template <class C> __host__ __device__ C gradient_from_output(C dy, C y) const; // likewise from y
///
/// `gradient` exists for activations whose PyTorch backward is a selection rather than a product
/// (relu: dx = x > 0 ? dy : 0, so a NaN or inf dy where x <= 0 gives 0, not NaN).
///
/// Each member may take a trailing accuracy tag `cuact::rounded_to<Storage>` (see below) to use
/// cheaper math when the result is rounded to a 16-bit type; members without it are called
/// without it.
///
/// Optional cost hint (CUTLASS's `kIsHeavy`): `static constexpr bool is_heavy = true;` for
/// activations that spend tens of instructions per element, `false` to declare one cheap. Without
/// it the launch model estimates the cost from the kernel's register count (detail/launch.cuh).
///
/// Optional, for the forward: `static constexpr bool is_compute_bound = true;` (implies heavy) for
/// an activation whose float forward issues about as many instructions per element as a GPU with
/// a tight budget affords at its copy ceiling (gelu's erfc form): there each thread makes two
/// grid-stride passes (detail::compute_bound_budget_per_array), or as many as
/// `static constexpr unsigned compute_bound_passes` says (gelu: 4). Its backward and its 16-bit
/// forwards take `is_heavy`.
///
/// Optional, for the backward from the output: `static constexpr bool is_heavy_from_output =
/// false;` for a heavy activation whose derivative_from_output is cheap (sigmoid: y (1 - y); tanh:
/// 1 - y^2): gradient_from_output_op and cuact::backward_from_output take it instead of
/// `is_heavy`, so that backward launches as a light one (detail::from_output_cost).
///
/// Optional, with `is_heavy = true`: `static constexpr bool has_long_16bit_math = true;` for an
/// activation whose 16-bit forward takes so long per vector that one vector per thread leaves too
/// few loads in flight where the budget is tight: there it keeps two vectors per thread, where
/// other heavy 16-bit forwards run one, which suits their shorter math (detail/dispatch.cuh:
/// heavy_runs_one_vector).
///
/// Optional, with `is_heavy = true`: `static constexpr bool has_short_float_math = true;` for an
/// activation whose float forward issues so few instructions per element (about half of what a
/// tight budget affords at the copy ceiling, or fewer) that one vector per thread keeps up where
/// the budget is not roomy for float math: there it runs one vector per thread, as where it is
/// roomy, where other heavy float forwards run two, which their longer math needs
/// (detail/dispatch.cuh: heavy_runs_one_vector).
///
/// Optional, with `is_heavy = true`: `static constexpr bool gains_from_bulk_tiles = true;` for an
/// activation whose forward was measured faster as bulk tiles (each block's tile brought into
/// shared memory by the copy engine, its threads waiting for it before they compute) where the
/// budget leaves float math room: there its one-input forwards run so, as light ones do
/// (detail/launch.cuh: takes_bulk_tiles). Not every heavy forward gains (gelu, softplus, 16-bit
/// celu, logsigmoid and tanhshrink lose), and nothing observable separates them, hence the
/// declaration.
/// Adaptors (affine, compose) do not carry it.
///
/// Optional, with `is_heavy = true`: `static constexpr bool has_short_bf16_math = true;` for an
/// activation whose forward with bf16 (or fp8) results is a few instructions per element (tanh:
/// one `tanh.approx`): forward_op<A, __nv_bfloat16> then launches as a light op, at relu's
/// speed (fp16 tanh, whose math is longer, stays heavy).
#pragma once

#include "detail/config.cuh"  // first: it rejects a host-only compiler

#include "detail/std.cuh"
#include "detail/config.cuh"
#include "detail/launch.cuh"
#include "detail/math.cuh"

namespace cuact {

/// Accuracy tag: the result will be stored as `Storage`. Activations that take it may use math
/// accurate to that type only; `storage_bits` is what they read (detail/math.cuh).
template <class Storage>
struct rounded_to {
  /// Bits of Storage: 8 * sizeof(Storage).
  static constexpr int storage_bits = static_cast<int>(8 * sizeof(Storage));
};

namespace detail {

#define CUACT_DETAIL_MEMBER_TRAIT(trait, member, ...)                                             \
  template <class A, class = void>                                                                \
  inline constexpr bool trait = false;                                                            \
  template <class A>                                                                              \
  inline constexpr bool                                                                           \
      trait<A, cuda::std::void_t<decltype(cuda::std::declval<const A&>().member(__VA_ARGS__))>> = \
          true;
CUACT_DETAIL_MEMBER_TRAIT(has_derivative, derivative, 1.0f)
CUACT_DETAIL_MEMBER_TRAIT(has_derivative_from_output, derivative_from_output, 1.0f)
CUACT_DETAIL_MEMBER_TRAIT(has_gradient, gradient, 1.0f, 1.0f)
CUACT_DETAIL_MEMBER_TRAIT(has_gradient_from_output, gradient_from_output, 1.0f, 1.0f)
#undef CUACT_DETAIL_MEMBER_TRAIT

template <class A, class = void>
inline constexpr cost_hint declared_cost = cost_hint::estimate;
template <class A>
inline constexpr cost_hint declared_cost<A, cuda::std::void_t<decltype(A::is_heavy)>> =
    A::is_heavy ? cost_hint::heavy : cost_hint::light;

/// The forward's hint: declared_cost, or compute_bound for `is_compute_bound = true`.
template <class A, class = void>
inline constexpr cost_hint forward_cost = declared_cost<A>;
template <class A>
inline constexpr cost_hint forward_cost<A, cuda::std::void_t<decltype(A::is_compute_bound)>> =
    A::is_compute_bound ? cost_hint::compute_bound : declared_cost<A>;

/// The backward from the output's hint: `is_heavy_from_output` where the activation declares it,
/// else declared_cost.
template <class A, class = void>
inline constexpr cost_hint from_output_cost = declared_cost<A>;
template <class A>
inline constexpr cost_hint
    from_output_cost<A, cuda::std::void_t<decltype(A::is_heavy_from_output)>> =
        A::is_heavy_from_output ? cost_hint::heavy : cost_hint::light;

/// Overload priority: `preferred` converts to `fallback`, so the tagged call wins when both exist.
struct fallback {};
struct preferred : fallback {};

/// invoke_NAME<R>(act, args...): act.MEMBER(args..., R{}) when the member takes the accuracy tag,
/// else act.MEMBER(args...).
#define CUACT_DETAIL_INVOKE_WITH_ACCURACY(name, member)              \
  template <class R, class A, class... Args>                         \
  CUACT_HOST_DEVICE auto name(preferred, const A& act, Args... args) \
      ->decltype(act.member(args..., R{})) {                         \
    return act.member(args..., R{});                                 \
  }                                                                  \
  template <class R, class A, class... Args>                         \
  CUACT_HOST_DEVICE auto name(fallback, const A& act, Args... args)  \
      ->decltype(act.member(args...)) {                              \
    return act.member(args...);                                      \
  }
CUACT_DEVICE_RULE_BEGIN  // an activation's members must be __device__ (config.cuh)
CUACT_DETAIL_INVOKE_WITH_ACCURACY(invoke_forward, operator())
    CUACT_DETAIL_INVOKE_WITH_ACCURACY(invoke_derivative, derivative)
        CUACT_DETAIL_INVOKE_WITH_ACCURACY(invoke_derivative_from_output, derivative_from_output)
            CUACT_DETAIL_INVOKE_WITH_ACCURACY(invoke_gradient, gradient)
                CUACT_DETAIL_INVOKE_WITH_ACCURACY(invoke_gradient_from_output,
                                                  gradient_from_output) CUACT_DEVICE_RULE_END
#undef CUACT_DETAIL_INVOKE_WITH_ACCURACY

    /// Declares Activation's `is_heavy_from_output` where it has one (nothing otherwise): the base of
    /// cost_hint_of.
    template <class Activation, class = void>
    struct from_output_hint_of {
};
template <class Activation>
struct from_output_hint_of<Activation,
                           cuda::std::void_t<decltype(Activation::is_heavy_from_output)>> {
  static constexpr bool is_heavy_from_output = Activation::is_heavy_from_output;
};

/// Base of the adaptors: declares Activation's `is_heavy` and `is_heavy_from_output` where it has
/// them, so an adaptor passed to cuact::transform carries the hint, and one that is an activation
/// itself (cuact::affine_activation) carries both. One base, so the adaptors stay aggregates built
/// as `{{}, act, ...}`.
template <class Activation, class = void>
struct cost_hint_of : from_output_hint_of<Activation> {};
template <class Activation>
struct cost_hint_of<Activation, cuda::std::void_t<decltype(Activation::is_heavy)>>
    : from_output_hint_of<Activation> {
  static constexpr bool is_heavy = Activation::is_heavy;
};

/// Base of gradient_from_output_op: declares the hint from_output_cost gives (none where it is
/// estimate), so the op passed to cuact::transform launches as cuact::backward_from_output does.
template <class Activation, class = void>
struct from_output_cost_hint_of : cost_hint_of<Activation> {};
template <class Activation>
struct from_output_cost_hint_of<Activation,
                                cuda::std::void_t<decltype(Activation::is_heavy_from_output)>> {
  static constexpr bool is_heavy = Activation::is_heavy_from_output;
};

/// Declares Activation's `has_long_16bit_math` and `has_short_float_math` (false where it has
/// none: has_long_16bit_math_of, has_short_float_math_of), a base of forward_cost_hint_of.
template <class Activation>
struct math_length_of {
  static constexpr bool has_long_16bit_math = has_long_16bit_math_of<Activation>;
  static constexpr bool has_short_float_math = has_short_float_math_of<Activation>;
};

/// Declares Activation's `gains_from_bulk_tiles` (false where it has none:
/// gains_from_bulk_tiles_of), a base of forward_cost_hint_of.
template <class Activation>
struct bulk_tiles_gain_of {
  static constexpr bool gains_from_bulk_tiles = gains_from_bulk_tiles_of<Activation>;
};

/// Base of forward_op: cost_hint_of, math_length_of and bulk_tiles_gain_of, plus
/// Activation's `is_compute_bound` and `compute_bound_passes` when it has them.
template <class Activation, class = void>
struct forward_cost_hint_of : cost_hint_of<Activation>,
                              math_length_of<Activation>,
                              bulk_tiles_gain_of<Activation> {};
template <class Activation>
struct forward_cost_hint_of<Activation, cuda::std::void_t<decltype(Activation::is_compute_bound)>>
    : cost_hint_of<Activation>, math_length_of<Activation>, bulk_tiles_gain_of<Activation> {
  static constexpr bool is_compute_bound = Activation::is_compute_bound;
  static constexpr unsigned compute_bound_passes = compute_bound_passes_of<Activation>;
};

/// Whether an activation declares `has_short_bf16_math = true` (see the file's comment).
template <class A, class = void>
inline constexpr bool has_short_bf16_math_of = false;
template <class A>
inline constexpr bool
    has_short_bf16_math_of<A, cuda::std::void_t<decltype(A::has_short_bf16_math)>> =
        A::has_short_bf16_math;

/// Base of forward_op<Activation, Out>: forward_cost_hint_of, declared light (neither heavy nor
/// compute-bound) where Out keeps 8 significant bits or fewer and the activation declares
/// `has_short_bf16_math`.
template <class Activation, class Out,
          bool Light =
              has_short_bf16_math_of<Activation>&& rounds_to_8_significant_bits_v<rounded_to<Out>>>
struct forward_op_cost_hint_of : forward_cost_hint_of<Activation> {};
template <class Activation, class Out>
struct forward_op_cost_hint_of<Activation, Out, true> : forward_cost_hint_of<Activation> {
  static constexpr bool is_heavy = false;          // hides the activation's
  static constexpr bool is_compute_bound = false;  // (forward_cost reads it first)
};

}  // namespace detail

/// True when Activation has `derivative(x)` or `gradient(dy, x)`: cuact::backward works.
template <class Activation>
inline constexpr bool has_derivative_v =
    detail::has_derivative<Activation> || detail::has_gradient<Activation>;

/// True when Activation has `derivative_from_output(y)` or `gradient_from_output(dy, y)`:
/// cuact::backward_from_output works, so a forward may run in place and keep a gradient.
template <class Activation>
inline constexpr bool has_derivative_from_output_v =
    detail::has_derivative_from_output<Activation> || detail::has_gradient_from_output<Activation>;

/// The declared cost hint: true or false when the activation declares `is_heavy`, false without.
template <class Activation>
inline constexpr bool is_heavy_v = detail::declared_cost<Activation> == detail::cost_hint::heavy;

/// Checks, at compile time, what every entry needs of an activation for storage type T.
template <class Activation, class C>
constexpr void check_activation() {
  static_assert(cuda::std::is_copy_constructible_v<Activation>,
                "cuact: an activation must be copyable (it is passed to the kernel by value)");
  static_assert(cuda::std::is_invocable_r_v<C, const Activation&, C>,
                "cuact: an activation must provide `template <class C> __host__ __device__ C "
                "operator()(C x) const`, callable with the compute type C (float for float, "
                "__half and __nv_bfloat16 storage; double for double)");
}

/// The forward as an elementwise operation: y = act(x), at the accuracy of output type Out.
/// Aggregates with a base: build as `forward_op<A, Out>{{}, act}` (or `{}` for a default act).
template <class Activation, class Out>
struct forward_op : detail::forward_op_cost_hint_of<Activation, Out> {
  /// The activation.
  Activation act;
  /// act(x) at the accuracy of Out.
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return detail::invoke_forward<rounded_to<Out>>(detail::preferred{}, act, x);
  }
};

/// The backward from the input as an elementwise operation on (x, dy): dx = gradient(dy, x)
/// where the activation defines it, else dy * derivative(x).
template <class Activation, class Out>
struct gradient_op : detail::cost_hint_of<Activation> {
  /// The activation.
  Activation act;
  /// dx for input x and upstream gradient dy.
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x, C dy) const {
    using R = rounded_to<Out>;
    if constexpr (detail::has_gradient<Activation>) {
      return detail::invoke_gradient<R>(detail::preferred{}, act, dy, x);
    } else {
      return dy * detail::invoke_derivative<R>(detail::preferred{}, act, x);
    }
  }
};

/// The backward from the output as an elementwise operation on (y, dy): dx =
/// gradient_from_output(dy, y) where defined, else dy * derivative_from_output(y).
template <class Activation, class Out>
struct gradient_from_output_op : detail::from_output_cost_hint_of<Activation> {
  /// The activation.
  Activation act;
  /// dx for output y and upstream gradient dy.
  template <class C>
  CUACT_HOST_DEVICE C operator()(C y, C dy) const {
    using R = rounded_to<Out>;
    if constexpr (detail::has_gradient_from_output<Activation>) {
      return detail::invoke_gradient_from_output<R>(detail::preferred{}, act, dy, y);
    } else {
      return dy * detail::invoke_derivative_from_output<R>(detail::preferred{}, act, y);
    }
  }
};

}  // namespace cuact
