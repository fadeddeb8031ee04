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
/// One optional cost hint (CUTLASS's `kIsHeavy`): `static constexpr cuact::cost cost =
/// cuact::cost::heavy;` for an activation that spends tens of instructions per element,
/// `cuact::cost::light` for a cheap one (a compare and a select), `cuact::cost::compute_bound` for
/// one whose float forward is as long as gelu's erfc form. Without it the launch estimates.
///
/// That is the whole concept: math, and at most one hint. What else steers a launch is a trait
/// outside the activation (cuact::tuning_traits, detail/tuning_traits.cuh), specialised for the
/// built-in activations in cuact/tuning.cuh; the launch itself is chosen by cuact::select_policy.
#pragma once

#include "detail/config.cuh"  // first: it rejects a host-only compiler

#include "detail/std.cuh"

#include "detail/math.cuh"
#include "detail/tuning_traits.cuh"

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

/// Activations that still declare the removed `is_heavy` flag (check_activation refuses them).
template <class A, class = void>
inline constexpr bool has_removed_flag = false;
template <class A>
inline constexpr bool has_removed_flag<A, cuda::std::void_t<decltype(A::is_heavy)>> = true;

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

}  // namespace detail

CUACT_DEVICE_RULE_BEGIN
/// act(x) at the accuracy a tag names (`cuact::rounded_to<Storage>`): what cuact's kernels compute
/// for results stored as Storage. The tag reaches act's operator() where it takes one, and is
/// left out where it does not, so one expression serves every activation (a run-time compiled
/// activation's `cuact::forward_at(cuact::selu{}, x, accuracy)`: docs/nvrtc.md).
template <class Activation, class C, class Storage>
CUACT_HOST_DEVICE C forward_at(const Activation& act, C x, rounded_to<Storage>) {
  return detail::invoke_forward<rounded_to<Storage>>(detail::preferred{}, act, x);
}
/// act'(x) at the accuracy a tag names, as forward_at.
template <class Activation, class C, class Storage>
CUACT_HOST_DEVICE C derivative_at(const Activation& act, C x, rounded_to<Storage>) {
  return detail::invoke_derivative<rounded_to<Storage>>(detail::preferred{}, act, x);
}
CUACT_DEVICE_RULE_END

/// True when Activation has `derivative(x)` or `gradient(dy, x)`: cuact::backward works.
template <class Activation>
inline constexpr bool has_derivative_v =
    detail::has_derivative<Activation> || detail::has_gradient<Activation>;

/// True when Activation has `derivative_from_output(y)` or `gradient_from_output(dy, y)`:
/// cuact::backward_from_output works, so a forward may run in place and keep a gradient.
template <class Activation>
inline constexpr bool has_derivative_from_output_v =
    detail::has_derivative_from_output<Activation> || detail::has_gradient_from_output<Activation>;

/// True when Activation's traits say heavy outside its forward (its `cost` hint heavy or
/// compute_bound, or its tuning_traits).
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
  static_assert(!detail::has_removed_flag<Activation>,
                "cuact: the is_heavy flag is gone; declare the cost hint instead: static "
                "constexpr cuact::cost cost = cuact::cost::heavy; (or light, or compute_bound)");
}

/// The forward as an elementwise operation: y = act(x), at the accuracy of output type Out.
/// Aggregates with a base: build as `forward_op<A, Out>{{}, act}` (or `{}` for a default act).
template <class Activation, class Out>
struct forward_op
    : detail::tuning_of_rounded_forward<Activation,
                                        (detail::has_short_bf16_math_of<Activation> &&
                                         detail::rounds_to_8_significant_bits_v<rounded_to<Out>>)> {
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
struct gradient_op : detail::tuning_of_activation<Activation> {
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
struct gradient_from_output_op : detail::tuning_of_from_output<Activation> {
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
