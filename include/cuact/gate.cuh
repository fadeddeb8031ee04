/// \file
/// Gates: out = gate(a, b), the two-operand functions of gated MLPs, and the concept the fused
/// gated entries (fused.cuh: gate_forward, gate_backward and their packed forms) take.
///
/// A gate is a copyable struct with
///
///     template <class C> __host__ __device__ C operator()(C a, C b) const;   // gate(a, b)
///
/// and, for the backward, either both partial derivatives
///
///     template <class C> __host__ __device__ C partial_a(C a, C b) const;    // d gate / d a
///     template <class C> __host__ __device__ C partial_b(C a, C b) const;    // d gate / d b
///
/// (da = dy * partial_a, db = dy * partial_b), or, where the gradient is a selection (a clamp's
/// zero outside its range stays 0 for an infinite dy, as in PyTorch's autograd) or shares work
/// between da and db, the two at once:
///
///     template <class C> __host__ __device__ cuda::std::tuple<C, C> gradient(C dy, C a, C b) const;
///
/// C is the compute type (float for 16-bit and 8-bit storage, double for double). Each member may
/// take a trailing accuracy tag (activation.cuh: rounded_to), and `cost` is the cost hint, as
/// for activations. Parameters are public `double` members with defaults.
///
/// Built in: activation_gate (act(a) * b: SwiGLU, GeGLU, ReGLU, GLU; what fused.cuh's gated_*
/// entries run) and clamped_swiglu (gpt-oss's).
#pragma once

#include "detail/config.cuh"  // first: it rejects a host-only compiler

#include <cuda/std/tuple>
#include <cuda/std/type_traits>
#include <cuda/std/utility>

#include "activation.cuh"
#include "activations.cuh"

namespace cuact {

namespace detail {

/// dx for upstream gradient dy at x: act.gradient(dy, x) where defined (selections such as relu),
/// else dy * act.derivative(x); at accuracy R.
template <class R, class A, class C>
CUACT_HOST_DEVICE C gradient_at(const A& act, C dy, C x) {
  if constexpr (has_gradient<A>) {
    return invoke_gradient<R>(preferred{}, act, dy, x);
  } else {
    return dy * invoke_derivative<R>(preferred{}, act, x);
  }
}

#define CUACT_DETAIL_GATE_TRAIT(trait, member, ...)                                               \
  template <class G, class = void>                                                                \
  inline constexpr bool trait = false;                                                            \
  template <class G>                                                                              \
  inline constexpr bool                                                                           \
      trait<G, cuda::std::void_t<decltype(cuda::std::declval<const G&>().member(__VA_ARGS__))>> = \
          true;
CUACT_DETAIL_GATE_TRAIT(has_gate_partials_a, partial_a, 1.0f, 1.0f)
CUACT_DETAIL_GATE_TRAIT(has_gate_partials_b, partial_b, 1.0f, 1.0f)
CUACT_DETAIL_GATE_TRAIT(has_gate_gradient, gradient, 1.0f, 1.0f, 1.0f)
#undef CUACT_DETAIL_GATE_TRAIT

/// invoke_partial_a / invoke_partial_b<R>(gate, a, b): the member with the accuracy tag where it
/// takes one, else without (activation.cuh's invoke_forward rule).
#define CUACT_DETAIL_GATE_INVOKE(name, member)                                                  \
  template <class R, class G, class C>                                                          \
  CUACT_HOST_DEVICE auto name(preferred, const G& gate, C a, C b)                               \
      ->decltype(gate.member(a, b, R{})) {                                                      \
    return gate.member(a, b, R{});                                                              \
  }                                                                                             \
  template <class R, class G, class C>                                                          \
  CUACT_HOST_DEVICE auto name(fallback, const G& gate, C a, C b)->decltype(gate.member(a, b)) { \
    return gate.member(a, b);                                                                   \
  }
CUACT_DEVICE_RULE_BEGIN  // a gate's members must be __device__ (config.cuh)
CUACT_DETAIL_GATE_INVOKE(invoke_partial_a, partial_a)
    CUACT_DETAIL_GATE_INVOKE(invoke_partial_b, partial_b) CUACT_DEVICE_RULE_END
#undef CUACT_DETAIL_GATE_INVOKE

    /// The type whose cost hints a gate's kernels carry: the gate's own; activation_gate's, its
    /// activation's (specialised below).
    template <class Gate>
    struct gate_hint_source {
  using type = Gate;
};
template <class Gate>
using gate_hint_source_t = typename gate_hint_source<Gate>::type;

/// NaN-propagating min(x, hi) (torch.clamp(max=hi), not fmin: NaN stays NaN).
template <class C>
CUACT_HOST_DEVICE C clamp_above(C x, C hi) {
  return x > hi ? hi : x;
}
/// NaN-propagating clamp(x, lo, hi) as torch.clamp: min(max(x, lo), hi), so hi where lo > hi.
template <class C>
CUACT_HOST_DEVICE C clamp_between(C x, C lo, C hi) {
  return clamp_above(x < lo ? lo : x, hi);
}

}  // namespace detail

/// Whether Gate has a backward: gradient(dy, a, b), or both partial_a and partial_b.
template <class Gate>
inline constexpr bool has_gate_backward_v = detail::has_gate_gradient<Gate> ||
                                            (detail::has_gate_partials_a<Gate> &&
                                             detail::has_gate_partials_b<Gate>);

/// Compile-time checks of the gate concept for compute type C (forward).
template <class Gate, class C>
constexpr void check_gate() {
  static_assert(cuda::std::is_copy_constructible_v<Gate>,
                "cuact: a gate must be copyable (it is passed to the kernel by value)");
  // an activation's operator()(C x, R = {}) also takes two arguments, and fails deep inside
  static_assert(
      !cuda::std::is_invocable_v<const Gate&, C>,
      "cuact: this is an activation (operator()(C x)), not a gate: use "
      "cuact::gated_forward / gated_backward, or the gate cuact::activation_gate<A>{act}");
  static_assert(cuda::std::is_invocable_r_v<C, const Gate&, C, C>,
                "cuact: a gate must provide `template <class C> __host__ __device__ C "
                "operator()(C a, C b) const`, callable with the compute type C");
}

/// Compile-time checks of the gate concept for compute type C (backward).
template <class Gate, class C>
constexpr void check_gate_backward() {
  check_gate<Gate, C>();
  static_assert(has_gate_backward_v<Gate>,
                "cuact: this backward needs the gate's `partial_a(C a, C b)` and `partial_b(C a, "
                "C b)` (or `gradient(C dy, C a, C b)` returning cuda::std::tuple<C, C>)");
}

/// (da, db) of `gate` at (a, b) for upstream gradient dy, at accuracy R: gate.gradient where it
/// has one, else dy times each partial derivative.
template <class R, class Gate, class C>
CUACT_HOST_DEVICE cuda::std::tuple<C, C> gate_gradient(const Gate& gate, C dy, C a, C b) {
  if constexpr (detail::has_gate_gradient<Gate>) {
    return detail::invoke_gradient<R>(detail::preferred{}, gate, dy, a, b);
  } else {
    return {dy * detail::invoke_partial_a<R>(detail::preferred{}, gate, a, b),
            dy * detail::invoke_partial_b<R>(detail::preferred{}, gate, a, b)};
  }
}

/// act(a) * b: the GLU family's gate (SwiGLU for silu, GeGLU for gelu, ReGLU for relu). Backward
/// where act has one: da = act's gradient at a for upstream dy * b (a selection for relu:
/// a > 0 ? dy * b : 0), db = dy * act(a).
template <class Activation>
struct activation_gate {
  /// The activation applied to a.
  Activation act;
  /// act(a) * b.
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C a, C b, R = {}) const {
    return detail::invoke_forward<R>(detail::preferred{}, act, a) * b;
  }
  /// (dy * b * act'(a), dy * act(a)), where act has a derivative (or gradient).
  template <class C, class R = rounded_to<C>, class A = Activation,
            cuda::std::enable_if_t<has_derivative_v<A>, int> = 0>
  CUACT_HOST_DEVICE cuda::std::tuple<C, C> gradient(C dy, C a, C b, R = {}) const {
    return {detail::gradient_at<R>(act, dy * b, a),
            dy * detail::invoke_forward<R>(detail::preferred{}, act, a)};
  }
};

namespace detail {
template <class Activation>
struct gate_hint_source<activation_gate<Activation>> {
  using type = Activation;
};
}  // namespace detail

/// The clamped SwiGLU of gpt-oss (transformers' GptOssExperts._apply_gate; vLLM's
/// swigluoai_and_mul): out = silu_alpha(min(a, limit)) * (clamp(b, -limit, limit) + 1), with
/// silu_alpha(x) = x * sigmoid(alpha * x). NaN in a or b stays NaN (torch.clamp's rule, not
/// fmin's); a = -inf gives NaN (-inf * 0, as PyTorch's formula). Backward as PyTorch's autograd
/// of that formula: the clamps pass the gradient where the input lies in the closed range and give
/// exactly 0 outside it (and for NaN: PyTorch's clamp_backward is a selection on a comparison),
/// so da = a <= limit ? dy * (clamp(b) + 1) * silu_alpha'(a) : 0 and
/// db = -limit <= b <= limit ? dy * silu_alpha(min(a, limit)) : 0.
struct clamped_swiglu {
  /// Cost hint (activation.cuh): heavy (an exponential and a division).
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// The sigmoid's input scale (default 1.702, gpt-oss's).
  double alpha = 1.702;
  /// The clamp bound (default 7.0, gpt-oss's).
  double limit = 7.0;

  /// (silu_alpha(x), silu_alpha'(x)) with s = sigmoid(alpha x): x s and s + alpha (x s) (1 - s),
  /// 1 - s from the same exponential (not by subtraction, which cancels for alpha x >> 0), and the
  /// derivative through x s, not x (1 - s) s: for a huge negative x, alpha x overflows to -inf
  /// where x s is still -0.
  template <class C, class R>
  CUACT_HOST_DEVICE cuda::std::pair<C, C> silu_alpha(C x, R r) const {
    const C z = C(alpha) * x;
    const detail::logistic_pair<C> l =
        detail::logistic(z, detail::exp_nonpositive(z < C(0) ? z : -z, r), r);
    const C y = x * l.s;
    return {y, l.s + C(alpha) * y * l.c};
  }
  /// silu_alpha(min(a, limit)) * (clamp(b, -limit, limit) + 1).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C a, C b, R r = {}) const {
    const C up = detail::clamp_between(b, C(-limit), C(limit)) + C(1);
    return silu_alpha(detail::clamp_above(a, C(limit)), r).first * up;
  }
  /// (da, db) for upstream dy (see the brief).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE cuda::std::tuple<C, C> gradient(C dy, C a, C b, R r = {}) const {
    const C lim = C(limit);
    const C x = detail::clamp_above(a, lim);           // a <= lim or NaN: x = a
    const cuda::std::pair<C, C> s = silu_alpha(x, r);  // (silu_alpha(x), silu_alpha'(x))
    const C up = detail::clamp_between(b, -lim, lim) + C(1);
    // a selection, not a product with a 0/1 mask: dy = inf gives 0 outside the range, as PyTorch
    const C da = a <= lim ? dy * up * s.second : C(0);
    const C db = (b >= -lim && b <= lim) ? dy * s.first : C(0);
    return {da, db};
  }
  /// d out / d a: (clamp(b) + 1) silu_alpha'(a) for a <= limit, else 0.
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C partial_a(C a, C b, R r = {}) const {
    return cuda::std::get<0>(gradient(C(1), a, b, r));
  }
  /// d out / d b: silu_alpha(min(a, limit)) for -limit <= b <= limit, else 0.
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C partial_b(C a, C b, R r = {}) const {
    return cuda::std::get<1>(gradient(C(1), a, b, r));
  }
};

}  // namespace cuact
