/// \file
/// The logistic family and its rational cousin: softsign, sigmoid, silu, logsigmoid.
/// Semantics, accuracy and the members' contract: cuact/activations.cuh and cuact/activation.cuh.
#pragma once

#include "../activation.cuh"
#include "../detail/math.cuh"
#include "../tuning.cuh"

namespace cuact {

/// Softsign, PyTorch `F.softsign`: x / (1 + |x|); NaN propagates; softsign(+-inf) = NaN
/// (inf / inf, as PyTorch's formula). Derivative 1 / (1 + |x|)^2; at +-inf NaN, as PyTorch's
/// autograd of its formula (inf / inf in the quotient rule). 16-bit results: `rcp.approx`.
struct softsign {
  // Declared, not estimated: an activation without a hint is taken for a user's plain functor, and
  // its bf16 forward is tabulated from 2^27 elements (detail/launch.cuh), which is slower for
  // softsign than computing it.
  // Heavy: a division (a reciprocal in 16-bit), two vectors in flight per thread.
  /// Cost hint (activation.cuh): tens of instructions per element.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// softsign(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    if constexpr (detail::rounds_to_16_bits_v<R>) {
      return x * detail::reciprocal(C(1) + (x < C(0) ? -x : x), r);
    } else {
      return x / (C(1) + (x < C(0) ? -x : x));
    }
  }
  /// softsign'(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    const C q = detail::reciprocal(C(1) + (x < C(0) ? -x : x), r);
    return q * q + (x - x);  // x - x: NaN for +-inf and NaN, else +0
  }
};

/// Sigmoid, PyTorch `torch.sigmoid`: 1 / (1 + exp(-x)); NaN propagates; sigmoid(-inf) = 0,
/// sigmoid(inf) = 1. Overflow-safe: from e = exp(-|x|), 1 / (1 + e) for x >= 0 and e / (1 + e)
/// below, so float results stay accurate down to the subnormals (PyTorch's float formula gives 0
/// below x = -88.7). Backward: sigma(x) (1 - sigma(x)) = e / (1 + e)^2; from the output as
/// PyTorch's `sigmoid_backward`: y * (1 - y).
struct sigmoid {
  /// Cost hint (activation.cuh): exp and a division.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// sigmoid(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      const detail::scaled_exp e = detail::exp_minus_scaled(fabsf(x));
      const float q = detail::reciprocal_one_plus(e.e, r);
      return x >= 0.0f ? q : detail::times_scaled_exp(q, e.es);  // e q, e multiplied in last
    } else {
      const C e = detail::exp_nonpositive(x < C(0) ? x : -x, r);
      return detail::logistic(x, e, r).s;
    }
  }
  /// sigmoid'(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    // e q^2, q = 1 / (1 + e), with e multiplied in last: a subnormal e loses the digits that a
    // gradient dy * sigma'(x) with a large dy shows
    if constexpr (detail::accurate_float_v<R, C>) {
      const detail::scaled_exp e = detail::exp_minus_scaled(fabsf(x));
      const float q = detail::reciprocal_one_plus(e.e, r);
      return detail::times_scaled_exp(q * q, e.es);
    } else {
      const auto e = detail::exp_nonpositive_kept(x < C(0) ? x : -x, r);
      const C q = detail::reciprocal_one_plus(e.value(), r);
      return e.times(q * q);
    }
  }
  /// sigmoid'(x) from y = sigmoid(x).
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    return y * (C(1) - y);
  }
};

/// SiLU / swish (Elfwing et al., 2017), PyTorch `F.silu`: x * sigmoid(x), with the overflow-safe
/// sigmoid above (PyTorch's x / (1 + exp(-x)) gives -0 below x = -88.7 in float). silu(-inf) =
/// NaN (-inf * 0, as PyTorch's -inf / inf); silu(inf) = inf; silu(-0) = -0. Backward as
/// `silu_backward`: s (1 + x (1 - s)), 1 - s taken from the logistic pair rather than by
/// subtraction; silu'(+-inf) = NaN (inf * 0, as PyTorch).
struct silu {
  /// Cost hint (activation.cuh): tens of instructions per element.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// silu(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      // one reduction for e and for the scaled x e q below 0 (-inf: -inf * 0 = NaN)
      const detail::scaled_exp e = detail::exp_minus_scaled(fabsf(x));
      const float xq = x * detail::reciprocal_one_plus(e.e, r);
      return x < 0.0f ? detail::times_scaled_exp(xq, e.es) : xq;
    } else {
      const C v = x < C(0) ? x : -x;
      const C q = detail::reciprocal_one_plus(detail::exp_nonpositive(v, r), r);
      // below 0, x e / (1 + e) with e multiplied in last: x e^x is subnormal only where e is.
      // Two exponentials, not exp_nonpositive_kept's one: the one-exponential form's longer
      // dependent chain slows the 16-bit forward where the budget is tight.
      return x < C(0) ? detail::mul_exp_nonpositive(x * q, v, r) : x * q;
    }
  }
  /// silu'(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      // q (1 + x e q) above 0, e q (1 + x q) below; +-inf: NaN (inf * 0), a huge finite x < 0
      // gives x * 0 (q = 1: no overflow)
      const detail::scaled_exp e = detail::exp_minus_scaled(fabsf(x));
      const float q = detail::reciprocal_one_plus(e.e, r);
      const float below = detail::times_scaled_exp(q * fmaf(x, q, 1.0f), e.es);
      return x < 0.0f ? below : q * fmaf(x * e.e, q, 1.0f);
    } else {
      const auto e = detail::exp_nonpositive_kept(x < C(0) ? x : -x, r);
      const auto l = detail::logistic(x, e.value(), r);
      const C q = x < C(0) ? l.c : l.s;  // 1 / (1 + e)
      const C d = q * detail::fused(x, l.c, C(1));
      return x < C(0) ? e.times(d) : d;  // s = e q below 0
    }
  }
};

/// Log-sigmoid, PyTorch `F.logsigmoid` (its CUDA formula): min(x, 0) - log1p(exp(-|x|)); NaN
/// propagates; logsigmoid(-inf) = -inf; logsigmoid(inf) = +0 (0 - 0, as PyTorch). The log1p
/// argument is in [0, 1]: log1pf for float (1 ulp), a polynomial or `lg2.approx` for 16-bit
/// results (detail::log1p_unit). Backward as `log_sigmoid_backward`: 1 - sigmoid(x) = sigmoid(-x),
/// overflow-safe.
struct logsigmoid {
  /// Cost hint (activation.cuh): exp and log.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// logsigmoid(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      // log1p(e) by the polynomial on the scaled e (a subnormal result for x > 87 rounds once)
      const detail::scaled_exp e = detail::exp_minus_scaled(fabsf(x));
      const float l = detail::log1p_unit_scaled(e.e, e.es) * 0x1p-64f;
      return (x < 0.0f ? x : 0.0f) - l;
    } else {
      const C e = detail::exp_nonpositive(x < C(0) ? x : -x, r);
      return (x < C(0) ? x : C(0)) - detail::log1p_unit(e, r);
    }
  }
  /// logsigmoid'(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      const detail::scaled_exp e = detail::exp_minus_scaled(fabsf(x));
      const float q = detail::reciprocal_one_plus(e.e, r);
      return x < 0.0f ? q : detail::times_scaled_exp(q, e.es);  // sigmoid(-x)
    } else {
      const C v = x < C(0) ? x : -x;
      const C q = detail::reciprocal_one_plus(detail::exp_nonpositive(v, r), r);
      // sigmoid(-x) by two exponentials, not exp_nonpositive_kept's one: the one-exponential
      // form slows the 16-bit bias + logsigmoid backward where the budget is tight.
      return x < C(0) ? q : detail::mul_exp_nonpositive(q, v, r);
    }
  }
};

}  // namespace cuact
