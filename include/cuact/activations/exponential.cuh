/// \file
/// Activations built on exp and expm1: selu, elu, celu.
/// Semantics, accuracy and the members' contract: cuact/activations.cuh and cuact/activation.cuh.
#pragma once

#include "../activation.cuh"
#include "../detail/math.cuh"
#include "../tuning.cuh"

namespace cuact {

/// SELU (Klambauer et al., "Self-Normalizing Neural Networks", 2017), PyTorch `torch.selu`:
/// scale * (x > 0 ? x : alpha * expm1(x)); propagates NaN; selu(-0) = -0.
/// Backward as PyTorch `elu_backward`: x <= 0 ? scale * alpha * exp(x) : scale.
struct selu {
  /// Cost hint (activation.cuh): exp.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// SELU's alpha (fixed, as in PyTorch).
  static constexpr double alpha = 1.6732632423543772848170429916717;
  /// SELU's scale (fixed, as in PyTorch).
  static constexpr double scale = 1.0507009873554804934193349852946;
  /// scale * alpha as a double plus its rounding error, from the 32-digit constants: the low part
  /// keeps y + scale * alpha accurate where it cancels (y near -scale * alpha) in from-output
  /// gradients.
  static constexpr double scale_alpha_hi = 0x1.c212cc640f031p+0;
  /// Low part of scale * alpha (see scale_alpha_hi).
  static constexpr double scale_alpha_lo = 0x1.05161b045a1fep-56;

  /// selu(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    const C negative = C(scale_alpha_hi) * detail::expm1_nonpositive(x > C(0) ? C(0) : x, r);
    return x > C(0) ? C(scale) * x : negative;
  }
  /// selu'(x) (PyTorch's choice at the kink: selu'(0) = scale * alpha).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    const C negative = C(scale_alpha_hi) * detail::exp_nonpositive(x > C(0) ? C(0) : x, r);
    return x <= C(0) ? negative : C(scale);
  }
  /// selu'(x) from y = selu(x).
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    // y = scale * alpha * (exp(x) - 1) for x <= 0, so scale * alpha * exp(x) = y + scale * alpha.
    constexpr C high = C(scale_alpha_hi);
    constexpr C low = C((scale_alpha_hi - double(high)) + scale_alpha_lo);
    return y <= C(0) ? (y + high) + low : C(scale);
  }
};

/// ELU (Clevert et al., 2015), PyTorch `F.elu(x, alpha)`: x > 0 ? x : alpha * expm1(x); NaN
/// propagates; elu(-0) = -0; elu(-inf) = -alpha. expm1, not exp - 1, so small |x| keeps its
/// digits (detail::expm1_nonpositive: branch-free Cody-Waite in float, one MUFU op and a
/// polynomial for 16-bit results). Backward as `elu_backward`: x <= 0 ? alpha * exp(x) : 1 (NaN x:
/// 1); from the output (alpha >= 0, else NaN): y <= 0 ? y + alpha : 1, alpha added in two parts so
/// nothing is lost where y + alpha cancels.
struct elu {
  /// Cost hint (activation.cuh): expm1.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// PyTorch's alpha (default 1.0).
  double alpha = 1.0;
  /// elu(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    const C negative = C(alpha) * detail::expm1_nonpositive(x > C(0) ? C(0) : x, r);
    return x > C(0) ? x : negative;
  }
  /// elu'(x) (PyTorch's choice at the kink: alpha at 0).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    const C negative = C(alpha) * detail::exp_nonpositive(x > C(0) ? C(0) : x, r);
    return x <= C(0) ? negative : C(1);
  }
  /// elu'(x) from y = elu(x) (NaN for y <= 0 if alpha < 0).
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    const C high = C(alpha);
    const C low = C(alpha - static_cast<double>(high));
    const C negative = alpha >= 0 ? (y + high) + low : C(NAN);
    return y <= C(0) ? negative : C(1);
  }
};

/// CELU (Barron, 2017), PyTorch `F.celu(x, alpha)` (= elu with input_scale 1/alpha): x > 0 ? x :
/// alpha * expm1(x / alpha); NaN propagates; celu(-0) = -0; celu(-inf) = -alpha. Requires
/// alpha > 0. Backward: x <= 0 ? exp(x / alpha) : 1, with x / alpha carried in two parts for
/// float and double (exp amplifies its rounding by |x / alpha|); from the output (alpha > 0, else
/// NaN): y <= 0 ? (y + alpha) / alpha : 1.
struct celu {
  /// Cost hint (activation.cuh): expm1.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// PyTorch's alpha (default 1.0; must be positive).
  double alpha = 1.0;
  /// celu(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    // expm1's relative error from the rounding of x / alpha is at most that rounding: no split.
    const C v = x * C(1.0 / alpha);
    const C negative = C(alpha) * detail::expm1_nonpositive(v > C(0) ? C(0) : v, r);
    return x > C(0) ? x : negative;
  }
  /// celu'(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    const C xn = x > C(0) ? C(0) : x;
    C e;
    if constexpr (detail::rounds_to_16_bits_v<R>) {
      e = detail::exp_nonpositive(xn * C(1.0 / alpha), r);
    } else {
      e = detail::exp_nonpositive_sum(detail::over(xn, alpha), r);
    }
    return x <= C(0) ? e : C(1);
  }
  /// celu'(x) from y = celu(x) (NaN for y <= 0 if alpha <= 0).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative_from_output(C y, R = {}) const {
    const C high = C(alpha);
    const C low = C(alpha - static_cast<double>(high));
    const C sum = (y + high) + low;
    C negative;
    if constexpr (detail::rounds_to_16_bits_v<R>) {
      negative = sum * C(1.0 / alpha);
    } else {
      negative = sum / high;
    }
    return y <= C(0) ? (alpha > 0 ? negative : C(NAN)) : C(1);
  }
};

}  // namespace cuact
