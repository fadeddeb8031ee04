/// \file
/// Activation policies: tiny functor structs, one per activation, each with its forward and its
/// derivatives (the concept and its optional members: activation.cuh). Parameters are public
/// `double` members named, ordered and defaulted as in torch.nn.functional, so `cuact::elu{0.5}`
/// and `cuact::softplus{2.0, 10.0}` aggregate-initialize; members convert them to the compute type.
///
/// Semantics are PyTorch's CUDA kernels' (aten/src/ATen/native/cuda/Activation*.cu): the same
/// branch conditions, the same choice at kinks, NaN through every forward, and the same result
/// where an indeterminate form arises at +-inf (each brief says which). Accuracy: float and double
/// results within 4 ulp of the exact function (tanhshrink: an absolute bound, see there), 16-bit
/// results within 1 ulp of the correctly rounded value. Where PyTorch's float formula loses that
/// (1 + erf(x) for x << 0, exp overflow in 1 / (1 + exp(-x)), 1 - tanh^2 near +-1), the policy
/// computes the same function another way, and says so.
#pragma once

#include "activation.cuh"
#include "detail/config.cuh"
#include "detail/math.cuh"
#include "tuning.cuh"

namespace cuact {

/// ReLU: x > 0 ? x : +0; propagates NaN; relu(-0) = +0. PyTorch `torch.relu` semantics.
/// Backward as PyTorch `threshold_backward(dy, x, 0)`: dx = x > 0 ? dy : 0 (relu'(0) = 0).
struct relu {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// relu(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    // Not fmax: fmax(NaN, 0) is 0, and the hand-written kernels this replaces lost NaNs that way.
    return x > C(0) || x != x ? x : C(0);
  }
  /// relu'(x) (PyTorch's choice at the kink: relu'(0) = 0).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x > C(0) ? C(1) : C(0);
  }
  /// relu'(x) from y = relu(x).
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    return derivative(y);  // y > 0 exactly where x > 0
  }
  /// dy * relu'(x), a selection (NaN dy where the gradient is 0 gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x > C(0) ? dy : C(0);
  }
  /// dy * relu'(x) from y = relu(x), a selection.
  template <class C>
  CUACT_HOST_DEVICE C gradient_from_output(C dy, C y) const {
    return gradient(dy, y);
  }
};

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

// ---- piecewise linear ----------------------------------------------------------------------

/// ReLU6, PyTorch `F.relu6` (= hardtanh(x, 0, 6)): min(max(x, 0), 6); NaN propagates; relu6(-0) =
/// +0 (max orders -0 below +0). Backward as `hardtanh_backward`: dx = 0 < x < 6 ? dy : 0 (0 at
/// both kinks; a NaN x passes dy through).
struct relu6 {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// relu6(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return detail::clamp_keeping_nan(x, C(0), C(6));
  }
  /// relu6'(x) (PyTorch's choice at the kinks: 0 at x = 0 and x = 6).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x <= C(0) || x >= C(6) ? C(0) : C(1);
  }
  /// relu6'(x) from y = relu6(x).
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    return derivative(y);  // 0 < y < 6 exactly where 0 < x < 6
  }
  /// dy * relu6'(x), a selection (NaN dy where the gradient is 0 gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x <= C(0) || x >= C(6) ? C(0) : dy;
  }
  /// dy * relu6'(x) from y = relu6(x), a selection.
  template <class C>
  CUACT_HOST_DEVICE C gradient_from_output(C dy, C y) const {
    return gradient(dy, y);
  }
};

/// Hardtanh, PyTorch `F.hardtanh(x, min_val, max_val)`: clamp(x, min_val, max_val); NaN
/// propagates. Backward as `hardtanh_backward`: dx = min_val < x < max_val ? dy : 0. The bounds
/// are rounded to the compute type.
struct hardtanh {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// PyTorch's min_val (default -1.0).
  double min_val = -1.0;
  /// PyTorch's max_val (default 1.0).
  double max_val = 1.0;
  /// hardtanh(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    // the selects: its bounds may be -0, and the min / max gained nothing here (detail::
    // clamp_keeping_nan)
    return detail::clamp_by_selects(x, C(min_val), C(max_val));
  }
  /// hardtanh'(x) (PyTorch's choice at the kinks: 0 at min_val and max_val).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x <= C(min_val) || x >= C(max_val) ? C(0) : C(1);
  }
  /// hardtanh'(x) from y = hardtanh(x).
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    return derivative(y);  // min_val < y < max_val exactly where min_val < x < max_val
  }
  /// dy * hardtanh'(x), a selection (NaN dy where the gradient is 0 gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x <= C(min_val) || x >= C(max_val) ? C(0) : dy;
  }
  /// dy * hardtanh'(x) from y = hardtanh(x), a selection.
  template <class C>
  CUACT_HOST_DEVICE C gradient_from_output(C dy, C y) const {
    return gradient(dy, y);
  }
};

/// Leaky ReLU, PyTorch `F.leaky_relu(x, negative_slope)`: x > 0 ? x : negative_slope * x; NaN
/// propagates; -0 gives -0 * slope. Backward as `leaky_relu_backward`: x > 0 ? dy : dy * slope.
/// From the output only for negative_slope >= 0 (as PyTorch, which refuses the in-place backward
/// otherwise): a negative slope gives NaN there.
struct leaky_relu {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// PyTorch's negative_slope (default 0.01).
  double negative_slope = 0.01;
  /// leaky_relu(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return x > C(0) ? x : x * C(negative_slope);
  }
  /// leaky_relu'(x) (PyTorch's choice at the kink: negative_slope at 0).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x > C(0) ? C(1) : C(negative_slope);
  }
  /// leaky_relu'(x) from y = leaky_relu(x) (NaN for y <= 0 if negative_slope < 0).
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    const C slope = negative_slope >= 0 ? C(negative_slope) : C(NAN);
    return y > C(0) ? C(1) : slope;  // y > 0 exactly where x > 0, for slope >= 0
  }
};

/// Hardsigmoid, PyTorch `F.hardsigmoid`: min(max(x + 3, 0), 6) / 6; NaN propagates. Backward as
/// `hardsigmoid_backward`: dx = -3 < x < 3 ? dy / 6 : 0 (0 at both kinks and for NaN x).
struct hardsigmoid {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// hardsigmoid(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return detail::clamp_keeping_nan(x + C(3), C(0), C(6)) * C(1.0 / 6);  // x + 3 is never -0
  }
  /// hardsigmoid'(x) (PyTorch's choice at the kinks: 0 at x = -3 and x = 3).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x > C(-3) && x < C(3) ? C(1.0 / 6) : C(0);
  }
  /// dy * hardsigmoid'(x), a selection (NaN dy where the gradient is 0 gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x > C(-3) && x < C(3) ? dy * C(1.0 / 6) : C(0);
  }
};

/// Hardswish (Howard et al., "Searching for MobileNetV3", 2019), PyTorch `F.hardswish`:
/// x * min(max(x + 3, 0), 6) / 6; NaN propagates. As PyTorch's kernel: hardswish(x <= -3) = -0
/// (x * 0), hardswish(-inf) = NaN (-inf * 0), hardswish(-0) = -0. Unlike its float formula
/// (x * 6 * (1/6f)), x >= 3 gives x exactly and never overflows.
/// Backward as `hardswish_backward`: x <= -3 ? 0 : x < 3 ? dy * (x / 3 + 1/2) : dy (NaN x: dy),
/// with x / 3 + 1/2 as (x + 1.5) / 3, which cannot cancel at its zero x = -1.5. (The kinks as
/// torch 2.11's CUDA kernel measured: 0 at x = -3 and 1 at x = 3, the one-sided limits outside.)
struct hardswish {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// hardswish(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    const C t = detail::clamp_keeping_nan(x + C(3), C(0), C(6));  // x + 3 is never -0
    return x * (t * C(1.0 / 6));  // 6 * C(1/6) rounds to 1 in float and double
  }
  /// hardswish'(x) (PyTorch's choice at the kinks: 0 at x = -3, 1 at x = 3).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x <= C(-3) ? C(0) : x < C(3) ? (x + C(1.5)) * C(1.0 / 3) : C(1);
  }
  /// dy * hardswish'(x), a selection at and below x = -3 (NaN dy there gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x <= C(-3) ? C(0) : x < C(3) ? dy * ((x + C(1.5)) * C(1.0 / 3)) : dy;
  }
};

/// Softshrink, PyTorch `F.softshrink(x, lambd)`: x > lambd ? x - lambd : x < -lambd ? x + lambd
/// : 0; NaN propagates (as PyTorch's isnan check); softshrink(-0) = +0. lambd is rounded to the
/// compute type, as PyTorch rounds it to the tensor's type: for a lambd that type holds, x - lambd
/// is exact near the kinks (Sterbenz) and the result is correctly rounded; otherwise it is off by
/// at most the rounding of lambd. PyTorch refuses a negative lambd; here it gives the formula as
/// written. Backward as `shrink_backward`: |x| <= lambd ? 0 : dy.
struct softshrink {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// PyTorch's lambd (default 0.5).
  double lambd = 0.5;
  /// softshrink(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    const C l = C(lambd);
    if (l >= C(0)) {
      // The same bits as the formula below, in fewer dependent steps: one compare of |x| (false
      // for NaN, whose x - l is NaN), x - l with x's sign, one select. The formula's three
      // compares and selects keep 16-bit forwards below the copy ceiling where the budget is
      // tight.
      if constexpr (cuda::std::is_same_v<C, float>) {
        return fabsf(x) <= l ? 0.0f : x - copysignf(l, x);
      } else {
        return ::fabs(x) <= l ? C(0) : x - ::copysign(l, x);
      }
    }
    return x > l ? x - l : x < -l ? x + l : (x != x ? x : C(0));
  }
  /// softshrink'(x) (PyTorch's choice at the kinks: 0 at x = +-lambd).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x >= C(-lambd) && x <= C(lambd) ? C(0) : C(1);
  }
  /// dy * softshrink'(x), a selection (NaN dy where the gradient is 0 gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x >= C(-lambd) && x <= C(lambd) ? C(0) : dy;
  }
};

/// Hardshrink, PyTorch `F.hardshrink(x, lambd)`: -lambd <= x <= lambd ? 0 : x; NaN propagates;
/// hardshrink(-0) = +0. Backward as `shrink_backward`: |x| <= lambd ? 0 : dy.
struct hardshrink {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// PyTorch's lambd (default 0.5).
  double lambd = 0.5;
  /// hardshrink(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return x >= C(-lambd) && x <= C(lambd) ? C(0) : x;
  }
  /// hardshrink'(x) (PyTorch's choice at the jumps: 0 at x = +-lambd).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x >= C(-lambd) && x <= C(lambd) ? C(0) : C(1);
  }
  /// dy * hardshrink'(x), a selection (NaN dy where the gradient is 0 gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x >= C(-lambd) && x <= C(lambd) ? C(0) : dy;
  }
};

/// Threshold, PyTorch `F.threshold(x, threshold, value)`: x <= threshold ? value : x; NaN
/// propagates (NaN <= threshold is false). PyTorch has no defaults; {} is threshold 0, value 0.
/// Backward as `threshold_backward`: x <= threshold ? 0 : dy.
struct threshold {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// PyTorch's threshold (no default there; 0.0 here).
  double threshold = 0.0;
  /// PyTorch's value (no default there; 0.0 here).
  double value = 0.0;
  /// threshold(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return x <= C(threshold) ? C(value) : x;
  }
  /// threshold'(x) (PyTorch's choice at the jump: 0 at x = threshold).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x <= C(threshold) ? C(0) : C(1);
  }
  /// dy * threshold'(x), a selection (NaN dy where the gradient is 0 gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x <= C(threshold) ? C(0) : dy;
  }
};

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

// ---- exponential family ------------------------------------------------------------------------

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

/// Softplus, PyTorch `F.softplus(x, beta, threshold)`: x * beta > threshold ? x :
/// log1p(exp(x * beta)) / beta (the switch compares the compute-type product, as PyTorch; with a
/// small threshold the forward jumps there, as PyTorch's). Below the switch as max(x, 0) +
/// log1p(exp(-|x beta|)) / beta, whose log1p argument stays in [0, 1] and which never overflows;
/// for float and double x * beta is carried in two parts (exp amplifies its rounding by
/// |x beta|). softplus(-inf) = 0, softplus(inf) = inf. Backward as `softplus_backward`:
/// x * beta > threshold ? 1 : sigmoid(x * beta), overflow-safe (PyTorch's z / (z + 1) is NaN
/// where exp overflows below a threshold above 88).
struct softplus {
  /// Cost hint (activation.cuh): exp and log.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// PyTorch's beta (default 1.0).
  double beta = 1.0;
  /// PyTorch's threshold (default 20.0): where x * beta exceeds it the result is x.
  double threshold = 20.0;

  /// x * beta as hi + lo for float and double results; hi alone (lo = 0) for 16-bit ones.
  template <class C, class R>
  CUACT_HOST_DEVICE detail::split<C> scaled(C x, R) const {
    if constexpr (detail::rounds_to_16_bits_v<R>) {
      return {x * C(beta), C(0)};
    } else {
      return detail::times(x, beta);
    }
  }
  /// exp(-|v|) for v = hi + lo.
  template <class C, class R>
  CUACT_HOST_DEVICE static C exp_minus_abs(detail::split<C> v, R r) {
    const bool negative = v.hi < C(0);
    return detail::exp_nonpositive_sum(
        detail::split<C>{negative ? v.hi : -v.hi, negative ? v.lo : -v.lo}, r);
  }
  /// softplus(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    C v, tail;
    if constexpr (detail::accurate_float_v<R, C>) {
      // exp(-|x| |beta|) with |beta| log2(e) as a float pair in the reduction: x beta is never
      // rounded before the exp, so it needs no low part (splitting it and folding the low part
      // back would cost instructions); log1p by the polynomial (cheaper than log1pf),
      // scaled back by the float 2^-64 / beta (one division per thread; an IEEE division per
      // element is too costly where the fp32 forward is instruction-bound):
      // one rounding more than l / beta (none for a power-of-two beta; |beta| up to 2^62, where
      // the factor is normal), and a subnormal result rounds once. v: PyTorch's float product,
      // for the switch and the sign.
      v = x * float(beta);
      const detail::scaled_exp e = detail::exp_minus_scaled(fabsf(x), detail::exp_rate_of(beta));
      tail = detail::log1p_unit_scaled(e.e, e.es) * float(0x1p-64 / beta);
    } else {
      const detail::split<C> s = scaled(x, r);
      v = s.hi;
      const C l = detail::log1p_unit(exp_minus_abs(s, r), r);
      if constexpr (sizeof(C) == 4) {
        tail = l * float(1.0 / beta);  // 16-bit results: as the float path, without the 2^-64
      } else {
        tail = l / C(beta);
      }
    }
    const C below = (v > C(0) ? x : C(0)) + tail;
    return v > C(threshold) ? x : below;
  }
  /// softplus'(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    const detail::split<C> v = scaled(x, r);
    if constexpr (detail::accurate_float_v<R, C>) {
      // one reduction (exp_minus_scaled) for e and for e q below 0
      const detail::scaled_exp e = detail::exp_minus_scaled(fabsf(v.hi));
      const float es = fmaf(e.es, v.hi < 0.0f ? v.lo : -v.lo, e.es);
      const float q = detail::reciprocal_one_plus(es * 0x1p-64f, r);
      const float below = detail::times_scaled_exp(q, es);
      return v.hi > float(threshold) ? 1.0f : v.hi >= 0.0f ? q : below;
    } else if constexpr (detail::rounds_to_16_bits_v<R>) {
      // sigmoid(v) with v = hi (lo = 0): e = exp(-|v|) kept, so below 0, where e = exp(v), the
      // product e q reuses it (one exponential instead of two)
      const auto e = detail::exp_nonpositive_kept(v.hi < C(0) ? v.hi : -v.hi, r);
      const C q = detail::reciprocal_one_plus(e.value(), r);
      return v.hi > C(threshold) ? C(1) : v.hi >= C(0) ? q : e.times(q);
    } else {
      const C q = detail::reciprocal_one_plus(exp_minus_abs(v, r), r);
      // sigmoid(v): q above 0, e q below, e = exp(v) multiplied in last
      const C below = detail::mul_exp_nonpositive(detail::fused(q, v.lo, q), v.hi, r);
      return v.hi > C(threshold) ? C(1) : v.hi >= C(0) ? q : below;
    }
  }
};

/// Mish (Misra, 2019), PyTorch `F.mish`: x * tanh(softplus(x)); NaN propagates; mish(-inf) = NaN
/// (-inf * 0, as PyTorch); mish(inf) = inf; mish(-0) = -0. tanh(log1p(u)) with u = exp(x) is the
/// rational (u^2 + 2u) / (u^2 + 2u + 2): from e = exp(-|x|), a / (a + b) with a = e (e + 2),
/// b = 2 for x <= 0 and a = 1 + 2e, b = 2e^2 above, a sum of positive terms that neither
/// overflows nor cancels (one exp and one division instead of exp, log1p and tanh); 16-bit
/// results take the rational in u itself, with u = exp(min(x, 20)) (half_parts_of). Backward as
/// `mish_backward`: t + x sigmoid(x) (1 - t^2), with 1 - t^2 = b (2a + b) / (a + b)^2;
/// mish'(+-inf) = NaN (inf * 0, as PyTorch).
struct mish {
  /// Cost hint (activation.cuh): tens of instructions per element.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// tanh(softplus(x)) as a / (a + b) (see mish).
  template <class C>
  struct parts {
    ///@{
    /// a and b of a / (a + b), and q = 1 / (a + b).
    C a, b, q;  // q = 1 / (a + b)
    ///@}
  };
  /// The parts of tanh(softplus(x)) from e = exp(-|x|).
  template <class C, class R>
  CUACT_HOST_DEVICE static parts<C> tanh_softplus(C x, C e, R r) {
    const bool positive = x > C(0);
    const C a = positive ? detail::fused(C(2), e, C(1)) : e * (e + C(2));
    const C b = positive ? C(2) * e * e : C(2);
    return {a, b, detail::reciprocal_at_least_one(a + b, r)};  // a + b in [1, 5]
  }
  /// For 16-bit results (2^-12 suffices): u = exp(min(x, 20)) (tanh(softplus(x)) rounds to 1
  /// above 20 in float), n = u (u + 2), so tanh(softplus(x)) = n / (n + 2), positive terms that
  /// neither cancel nor overflow: one exp and one reciprocal, no branch on the sign. us = 2^64 u by
  /// `ex2.approx.ftz` (normal down to u = 2^-190; bf16 results need u down to 2^-141).
  struct half_parts {
    ///@{
    /// us = 2^64 exp(min(x, 20)), u2 = u + 2, ns = 2^64 n = us u2, r = 1 / (n + 2).
    float us, u2, ns, r;
    ///@}
  };
  /// The half_parts of x (NaN gives u = exp(20): x makes the NaN; -inf gives u = 0).
  CUACT_HOST_DEVICE static half_parts half_parts_of(float x) {
    const float us = detail::exp_raised(fminf(x, 20.0f));
    const float u2 = fmaf(us, 0x1p-64f, 2.0f);
    const float ns = us * u2;
    return {us, u2, ns, detail::rcp_approx_ftz(fmaf(ns, 0x1p-64f, 2.0f))};
  }
  /// mish(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      // t = a / (a + b) above 0, e (e + 2) / (a + b) below with e multiplied in last. The
      // quotient n / d (n = a or e + 2) from `rcp.approx` with its residual taken back (about
      // 0.5 ulp) and d = a + b in one fma: 4 roundings of weight one besides the exp, where the
      // plain quotient and sum had 6 (5 ulp at x = -5.0988 on the device, with ex2.approx's error)
      const detail::scaled_exp e = detail::exp_minus_scaled(fabsf(x));
      const bool positive = x > 0.0f;
      const float w = e.e + 2.0f;
      const float a = fmaf(2.0f, e.e, 1.0f);
      const float d = fmaf(e.e, positive ? e.e + e.e : w, positive ? a : 2.0f);  // in [1, 5]
      const float n = positive ? a : w;
      const float q = detail::rcp_approx_ftz(d);
      const float t0 = n * q;
      const float t = fmaf(q, fmaf(-t0, d, n), t0);
      return positive ? x * t : detail::times_scaled_exp(x * t, e.es);  // -inf: -inf * 0 = NaN
    } else if constexpr (sizeof(C) == 4) {
      const half_parts h = half_parts_of(x);
      return x * ((h.ns * h.r) * 0x1p-64f);  // -inf: -inf * 0 = NaN
    } else {
      const auto kept = detail::exp_nonpositive_kept(x < C(0) ? x : -x, r);
      const C e = kept.value();
      const parts<C> p = tanh_softplus(x, e, r);
      // x <= 0: a = e (e + 2), with e multiplied in last (x a / (a + b) is subnormal only where
      // e is)
      return x > C(0) ? x * (p.a * p.q) : kept.times(x * ((e + C(2)) * p.q));
    }
  }
  /// mish'(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      const detail::scaled_exp e = detail::exp_minus_scaled(fabsf(x));
      const parts<C> p = tanh_softplus(x, e.e, r);
      const float one_minus_t2 = p.b * fmaf(2.0f, p.a, p.b) * (p.q * p.q);
      const float q = detail::reciprocal_one_plus(e.e, r);  // sigmoid(|x|)
      const float above = fmaf(x * q, one_minus_t2, p.a * p.q);
      const float below = fmaf(x * q, one_minus_t2, (e.e + 2.0f) * p.q);
      return x > 0.0f ? above : detail::times_scaled_exp(below, e.es);
    } else if constexpr (sizeof(C) == 4) {
      // t + x s (1 - t^2), 1 - t^2 = 4 (n + 1) / (n + 2)^2, s = u / (1 + u); x above 20 adds
      // below 2^-50 and is taken at 20 (no overflow); +-inf give NaN, as PyTorch
      const half_parts h = half_parts_of(x);
      const float c = detail::rcp_approx_ftz(fmaf(h.us, 0x1p-64f, 1.0f));  // s = u c
      const float one_minus_t2 = 4.0f * fmaf(h.ns, 0x1p-64f, 1.0f) * (h.r * h.r);
      // u ((u + 2) r + x c (1 - t^2)): u multiplied in last keeps the sign of an underflow
      const float in_u = fmaf(fminf(x, 20.0f) * c, one_minus_t2, h.u2 * h.r);
      return fmaf(x, 0.0f, (in_u * h.us) * 0x1p-64f);  // x * 0: NaN for +-inf, -0 keeps -0
    } else {
      const auto kept = detail::exp_nonpositive_kept(x < C(0) ? x : -x, r);
      const C e = kept.value();
      const parts<C> p = tanh_softplus(x, e, r);
      const C one_minus_t2 = p.b * detail::fused(C(2), p.a, p.b) * (p.q * p.q);
      const auto l = detail::logistic(x, e, r);
      // x > 0: t + x s (1 - t^2); x <= 0: e ((e + 2) q + x / (1 + e) (1 - t^2)), e multiplied last
      const C above = detail::fused(x * l.s, one_minus_t2, p.a * p.q);
      const C below = detail::fused(x * l.c, one_minus_t2, (e + C(2)) * p.q);
      return x > C(0) ? above : kept.times(below);
    }
  }
};

/// Tanh, PyTorch `torch.tanh`: NaN propagates; tanh(-0) = -0. tanhf / tanh for float and double;
/// `tanh.approx` for bf16 results, -m / (m + 2), m = expm1(-2|x|) for fp16 (detail::tanh_).
/// Backward: 1 - tanh(x)^2 as 4e / (1 + e)^2, e = exp(-2|x|) (no cancellation near +-1); from the
/// output as PyTorch's `tanh_backward`: 1 - y^2, with one rounding (fma).
struct tanh {
  /// Cost hint (activation.cuh): tens of instructions per element.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// tanh(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    return detail::tanh_(x, r);
  }
  /// tanh'(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      // as sigmoid's: one reduction of exp(-2|x|), kept scaled by 2^64 for the product (4 e q^2
      // is normal wherever it is above 2^-149). The 16-bit path's one ex2 (exp_nonpositive_kept)
      // left float a reduction and its 2^j scaling twice, too costly for the fp32 bias + tanh
      // backward where the budget is tight.
      constexpr detail::exp_rate two{2.0f * detail::unit_exp_rate.hi,
                                     2.0f * detail::unit_exp_rate.lo};  // exact doublings
      const detail::scaled_exp e = detail::exp_minus_scaled(fabsf(x), two);
      const float q = detail::reciprocal_one_plus(e.e, r);
      return detail::times_scaled_exp(4.0f * (q * q), e.es);  // +-inf: 0; NaN: NaN
    } else {
      const auto e = detail::exp_nonpositive_kept(C(-2) * (x < C(0) ? -x : x), r);
      const C q = detail::reciprocal_one_plus(e.value(), r);
      return e.times(C(4) * (q * q));  // 4 e q^2, e multiplied in last
    }
  }
  /// tanh'(x) from y = tanh(x).
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    return detail::fused(-y, y, C(1));
  }
};

/// Tanhshrink, PyTorch `F.tanhshrink`: x - tanh(x); NaN propagates; tanhshrink(+-inf) = +-inf;
/// tanhshrink(-0) = +0 (-0 - -0, as PyTorch).
/// Float and double: PyTorch's formula, which cancels near 0: absolute error within 3 ulp of x
/// (tanh's error plus the subtraction's), not 4 ulp of the result. 16-bit results: below
/// |x| = 1/2 the odd Taylor series x^3/3 - 2x^5/15 + ... to x^11 (relative error below 2^-16),
/// above it x - (1 - e) / (1 + e), e = exp(-2|x|) <= 1/e, so the result is within 1 ulp there too.
/// A 16-bit result that rounds to zero keeps the sign of x (x^3 / 3); PyTorch's float x - tanh(x)
/// gives +0 where tanhf(x) == x.
/// Backward: tanh(x)^2 (PyTorch's autograd computes 1 - (1 - tanh^2), which cancels near 0);
/// float computes the square itself (tanhf's 2 ulp would become 5 in it): a polynomial in x^2
/// below |x| = 1, (1 - e)^2 / (1 + e)^2 with e = exp(-2|x|) above (see derivative); double squares
/// double tanh: within 6 ulp (a 1-ulp tanh doubles in the square, near its binade's bottom).
struct tanhshrink {
  /// Cost hint (activation.cuh): tens of instructions per element.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// tanhshrink(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    if constexpr (detail::rounds_to_16_bits_v<R> && sizeof(C) == 4) {
      const float a = fabsf(x);
      const float x2 = x * x;
      float p = fmaf(x2, 1382.0f / 155925, -62.0f / 2835);
      p = fmaf(p, x2, 17.0f / 315);
      p = fmaf(p, x2, -2.0f / 15);
      p = fmaf(p, x2, 1.0f / 3);
      const float series = p * x2 * x;
      // above 1/2, e = exp(-2|x|) <= 1/e only forms 1 + e (`ex2.approx.ftz`: its flush is
      // harmless), and t = (1 - e) / (1 + e) = 2 / (1 + e) - 1 in [0.46, 1) cancels at most 2x
      const float e = detail::exp2_approx_ftz(a * -2.88539008177792681f);
      const float t = fmaf(2.0f, detail::reciprocal_at_least_one(1.0f + e, r), -1.0f);
      return a < 0.5f ? series + 0.0f : x - copysignf(t, x);  // + 0: tanhshrink(-0) = +0
    } else {
      return x - detail::tanh_(x, r);
    }
  }
  /// tanhshrink'(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      // |x| < 1: t^2 = y + y^2 p(y), y = x^2, p of degree 7 (fitted to t^2's relative error,
      // below 2^-28 with its float coefficients): within 1.9 ulp (exhaustive). Above: t = (1 - e)
      // / (1 + e), e = exp(-2|x|) <= e^-2, as t0 + d with the roundings of 1 - e, 1 + e and of
      // the quotient taken back, squared as t0^2 + 2 t0 d in one rounding: within 0.8 ulp, and
      // e's relative error enters t^2 times 4e / (1 - e^2) <= 0.55 (1.4 ulp with e off by 2^-23).
      // Not double tanh (115 instructions).
      const float y = x * x;
      float p = 0x1.999812p-11f;
      p = fmaf(p, y, -0x1.55faep-8f);
      p = fmaf(p, y, 0x1.24584p-6f);
      p = fmaf(p, y, -0x1.6d65b8p-5f);
      p = fmaf(p, y, 0x1.8c9a52p-4f);
      p = fmaf(p, y, -0x1.92d986p-3f);
      p = fmaf(p, y, 0x1.82d554p-2f);
      p = fmaf(p, y, -0x1.55554ap-1f);
      const float series = fmaf(y * y, p, y);
      const float e = detail::exp_minus_scaled(2.0f * fabsf(x)).e;  // +inf: 0; NaN: NaN
      const float d = 1.0f + e;
      const float d_lo = e - (d - 1.0f);
      const float n = 1.0f - e;
      const float n_lo = (1.0f - n) - e;
      const float rd = detail::rcp_approx_ftz(d);
      const float t0 = n * rd;
      const float residual = fmaf(-t0, d_lo, fmaf(-t0, d, n) + n_lo);
      const float t2 = fmaf(t0, t0, (t0 + t0) * (rd * residual));
      return fabsf(x) < 1.0f ? series : t2;
    } else {
      const C t = detail::tanh_(x, r);
      return t * t;
    }
  }
};

// ---- Gaussian family -----------------------------------------------------------------------------

/// GELU (Hendrycks and Gimpel, 2016), PyTorch `F.gelu(x, approximate='none')`: x Phi(x) =
/// x erfc(-x / sqrt 2) / 2. erfc, not PyTorch's 1 + erf(x / sqrt 2), which cancels to 0 below
/// x = -5.5 in float; gelu(-inf) = NaN (-inf * 0, as PyTorch), gelu(inf) = inf, gelu(-0) = -0.
/// Float: in double (erfc amplifies the rounding of its argument by 2t^2, 180 ulp at x = -13).
/// Double: erfc with x / sqrt 2 in two parts, corrected to first order (erfc itself is
/// documented at 5 ulp in CUDA and glibc: double gelu is within 6 ulp), and below x = -37.5,
/// where Phi is subnormal, the Mills-ratio series. 16-bit: erfcf.
/// Backward as `GeluBackward`: Phi(x) + x phi(x), with x^2 in two parts in exp(-x^2 / 2) for
/// double; gelu'(+-inf) = NaN (inf * 0, as PyTorch).
struct gelu {
  /// Cost hint (activation.cuh): its float forward is as long as a tight budget affords.
  static constexpr cuact::cost cost = cuact::cost::compute_bound;
  /// 1 / sqrt 2 as a double plus its rounding error (sqrt1_2_lo).
  static constexpr double sqrt1_2_hi = 0x1.6a09e667f3bcdp-1;
  /// Low part of 1 / sqrt 2 (see sqrt1_2_hi).
  static constexpr double sqrt1_2_lo = -0x1.bdd3413b26456p-55;
  /// 1 / sqrt(2 pi).
  static constexpr double inv_sqrt_2pi = 0.398942280401432677939946059934;

  /// Phi(x) for double x: erfc(t) / 2, t = -x / sqrt 2 = hi + lo, erfc(hi + lo) ~ erfc(hi) (1 - 2 hi
  /// lo) for hi > 0 (erfc'/erfc -> -2t there; where t <= 0 the correction is below an ulp).
  CUACT_HOST_DEVICE static double cdf(double x) {
    const double xc = x < -64 ? -64 : x > 64 ? 64 : x;  // erfc is 0 or 2 beyond; keeps lo finite
    const double hi = detail::mul_rn(-xc, sqrt1_2_hi);
    const double lo = ::fma(-xc, sqrt1_2_hi, -hi) - xc * sqrt1_2_lo;
    const double correction = hi > 0 ? ::fma(-2 * hi, lo, 1.0) : 1.0;
    return 0.5 * ::erfc(hi) * correction;
  }
  /// Below x = -37.5 (double only) Phi(x) and phi(x) are subnormal or nearly: x Phi(x) =
  /// -phi(x) S and Phi + x phi = x phi (1 - S / x^2), S = 1 - 1/x^2 + 3/x^4 - ... the Mills-ratio
  /// series (8 terms: below 2^-60 there), with exp(-x^2 / 2) multiplied in last.
  CUACT_HOST_DEVICE static double tail(double x_in, bool derivative) {
    // phi(x) is 0 below -38.6; the clamp keeps x^2's residual small enough for 1 - residual / 2
    const double x = x_in < -64 ? -64 : x_in;
    const double z = 1 / (x * x);
    double series = -135135.0;
    series = ::fma(series, z, 10395.0);
    series = ::fma(series, z, -945.0);
    series = ::fma(series, z, 105.0);
    series = ::fma(series, z, -15.0);
    series = ::fma(series, z, 3.0);
    series = ::fma(series, z, -1.0);
    series = ::fma(series, z, 1.0);
    const double m = derivative ? x * ::fma(-series, z, 1.0) : -series;
    const double x2 = detail::mul_rn(x, x), x2_lo = ::fma(x, x, -x2);
    const double scaled = m * inv_sqrt_2pi;
    return detail::mul_exp_nonpositive(::fma(scaled, -0.5 * x2_lo, scaled), -0.5 * x2);
  }
  /// Float: erfc(a) = erfcx(a) exp(-a^2) with a = |x| / sqrt 2, whose rounding erfcx does not
  /// amplify (its relative slope is below 1.2), and a^2 = x^2 / 2 taken exactly as hi + lo from
  /// x itself for the exp (which would amplify a rounding by 2a^2). |x| is clamped to 14.8
  /// (a <= 10.47, in erfcx's range; E < 2^-157 there, and every result beyond is 0, x or 1).
  /// The forward folds lo into the exp's reduction (detail::mul_exp_minus_half_square); the
  /// derivative takes these parts: h + h_lo = erfcx(a) / 2, with exp(-lo) = 1 - lo folded into
  /// h_lo, and E = exp(-hi).
  struct gaussian_tail {
    ///@{
    /// ax: |x| clamped to 14.8; h + h_lo: erfcx(a) / 2 (see above); s: hi of a^2, so E = exp(-s).
    float ax, h, h_lo, s;
    ///@}
  };
  /// The gaussian_tail of x (float results; 16-bit ones take lower_tail_16_of).
  CUACT_HOST_DEVICE static gaussian_tail tail_parts(float x) {
    const float ax = fminf(fabsf(x), 14.8f);  // NaN gives 14.8: NaN x decides the result
    const float a = ax * 0.707106781186547524f;
    const float xx = ax * ax;
    const detail::split<float> e = detail::erfcx_bounded(a);
    const float h = 0.5f * e.hi;
    const float h_lo = fmaf(h, 0.5f * fmaf(ax, -ax, xx), 0.5f * e.lo);
    return {ax, h, h_lo, 0.5f * xx};
  }
  /// m E = m exp(-s), |m| <= 16, for the float derivative (the table's bound on it is absolute,
  /// 4 float epsilons): `ex2.approx`, of the exponent raised by 64 where E < 2^-92, so E and m E
  /// stay normal and only the last scaling rounds into the subnormals (a derivative of 1e-45 keeps
  /// its sign, which an infinite dy shows).
  CUACT_HOST_DEVICE static float times_exp(float m, float s) {
    const bool raise = s > 64.0f;
    return m * detail::exp2_approx(fmaf(s, -1.44269504088896341f, raise ? 64.0f : 0.0f)) *
           (raise ? 0x1p-64f : 1.0f);
  }
  /// ax h(ax) for the float forward, h(ax) = erfcx(ax / sqrt 2), ax = |x| in [0, 14.8] (not NaN),
  /// from one `rcp.approx` where erfcx_bounded takes two and a hi + lo result: h = R P(R), R = 1 /
  /// (ax + 2), so ax h = (1 - 2R) P(R). P is a degree-11 minimax fit of the relative error over
  /// ax in [0, 14.8] (sollya fpminimax, float coefficients, 2^-27.9) in v = R - R0, R0 = 0.2700 a
  /// float where P(R0) is within 2^-33 of a float (the constant term's own rounding held the
  /// fit at 2^-25 otherwise); in R itself the coefficients alternate up to 2^9 (Horner's
  /// roundings: 2.1 ulp in P). All in -2R units (exact scalings): r2 = -2r, w = 1 - 2r (exact for
  /// ax <= 2, within 2^-25 above: its error dw = (1 - w) - 2r is taken back), re2 = -2 (R - r) from
  /// the residual 1 - r (ax + 2) taken from ax (the rounding of ax + 2 drops out), v2 = -2v (exact
  /// for ax <= 5.2). P at r would amplify r's error by R P' / P (0.61 at c = 2; 2.2 at c = 4);
  /// its last Horner step takes re2 back, leaving R^2 S' / P below 0.06 (S = (P - P(R0)) / v).
  /// (1 - 2R) P = w P + (dw w + re2) P with w P exact in the fma: one rounding, not M = 1 - 2R
  /// and M P rounded on their own (3.61 ulp worst for gelu, 3.43 now; erfcx_bounded 3.45, host
  /// sweep of over 2^27 inputs; host rcp and exp2 are correctly rounded, the device's are not).
  /// Fewer issued instructions per element than the earlier form, which matters where the fp32
  /// forward is instruction-bound.
  CUACT_HOST_DEVICE static float abs_times_erfcx_of(float ax) {
    const float r = detail::rcp_approx_ftz(ax + 2.0f);  // ax + 2 >= 1: no subnormals
    const float r2 = -2.0f * r;
    const float w = r2 + 1.0f;
    const float re2 = r2 * fmaf(-r, ax, w);
    const float v2 = r2 + 0x1.147d3ap-1f;
    // S's coefficients times (-1/2)^(k+1), for v2 and re2
    const float s = detail::horner(v2, -0x1.133fb2p-2f, -0x1.795db0p-3f, 0x1.e1c8f2p-3f,
                                   0x1.6f283ep-2f, 0x1.5634dcp-4f, -0x1.293b18p-2f, -0x1.762daap-2f,
                                   0x1.095fe4p-4f, 0x1.2aace2p-1f, 0x1.479d98p-3f, -0x1.575b34p+0f);
    const float p = fmaf(s, v2, fmaf(s, re2, 0x1.65f028p0f));  // P(R)
    return fmaf(w, p, fmaf((1.0f - w) + r2, w, re2) * p);
  }
  /// For results of 16 bits or fewer (fp16 needs an error below 2^-12, bf16 and fp8 below 2^-9):
  /// g = Phi(-|x|) = h E and e = 2^64 E, with h = erfcx(|x| / sqrt 2) / 2 and E = exp(-x^2 / 2).
  /// E is taken as 2^64 E by `ex2.approx.ftz` and h as 2^-64 h, so the flush to zero cannot cost a
  /// result: 2^64 E is normal down to |x| = 16.2, where every 16-bit result is 0, x or 1 (bf16
  /// keeps gelu(x) down to 2^-133, at x = -13.5, where E itself is below 2^-126). h takes one of
  /// three forms (tail_fit).
  struct lower_tail_16 {
    ///@{
    /// g: Phi(-|x|); e: 2^64 exp(-x^2 / 2).
    float g, e;
    ///@}
  };
  /// The forms of h in lower_tail_16_of. Forwards: h = r P(r), r = 1 / (|x| + c), one reciprocal
  /// and a polynomial with 2^-64 in its coefficients (weighted minimax fits of the relative error
  /// over |x| in [0, 16]): `coarse`, degree 3 at c = 2, 2^-11.8, for results of 8 significant bits
  /// (bf16, fp8); `fine`, degree 4 at c = 2.65, 2^-14.8, for fp16. They replaced `derivative`'s
  /// form in the forwards: fewer issued instructions per element, which keeps 16-bit forwards at
  /// the copy ceiling where their instruction budget is tight.
  /// `derivative`: q = (|x| - 2 sqrt 2) / (|x| + 2 sqrt 2) into a degree-6 fit (2^-16.5) and a
  /// second reciprocal for 1 / (2 + 2 sqrt 2 |x|). Derivatives keep it: `fine` makes backwards
  /// slower (fewer instructions, but one longer dependent chain), and its error is the smaller
  /// where results are summed (dbias).
  enum class tail_fit { coarse, fine, derivative };
  /// The lower_tail_16 of x in form Fit (NaN gives NaN in both; +-inf give 0 and 0).
  template <tail_fit Fit>
  CUACT_HOST_DEVICE static lower_tail_16 lower_tail_16_of(float x) {
    const float ax = fminf(fabsf(x), 16.0f);  // NaN gives 16; keeps r and q finite for +-inf
    float h;
    if constexpr (Fit == tail_fit::coarse) {
      const float r = detail::rcp_approx_ftz(ax + 2.0f);
      h = r *
          detail::horner(r, -0x1.fd2d08p-64f, 0x1.f19a56p-64f, 0x1.71e04ep-65f, 0x1.9b0af2p-66f);
    } else if constexpr (Fit == tail_fit::fine) {
      const float r = detail::rcp_approx_ftz(ax + 2.65f);
      h = r * detail::horner(r, -0x1.78326cp-61f, 0x1.324396p-61f, 0x1.a44386p-64f, 0x1.1b41e6p-64f,
                             0x1.975352p-66f);
    } else {
      constexpr float two_sqrt2 = 2.82842712474619009760f;
      const float q = (ax - two_sqrt2) * detail::rcp_approx_ftz(ax + two_sqrt2);
      const float p =
          detail::horner(q, 0x1.709912p-8f, -0x1.df44b0p-8f, -0x1.ad6cf0p-5f, 0x1.4fa890p-3f,
                         -0x1.54adf4p-3f, -0x1.7be6dep-4f, 0x1.1ba27ap-2f);
      // 2^-64 / (2 (1 + 2a)) = 1 / (2^64 (2 + 2 sqrt2 |x|)): in [2^-70, 2^-65], normal
      const float d = detail::rcp_approx_ftz(fmaf(two_sqrt2 * 0x1p64f, ax, 0x1p65f));
      h = fmaf(p, d, d);
    }
    const float e = detail::exp2_approx_ftz(fmaf(x * -0.72134752044448170368f, x, 64.0f));
    return {h * e, e};
  }
  /// gelu(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R = {}) const {
    if constexpr (sizeof(C) == 4) {
      // x Phi(x) = x h E below 0 and x - x h E above, h E = erfc(|x| / sqrt 2) / 2
      if constexpr (detail::rounds_to_16_bits_v<R>) {
        // +-0 keep their sign; -inf gives -inf * 0 = NaN (as PyTorch), +inf gives inf
        constexpr tail_fit fit =
            detail::rounds_to_8_significant_bits_v<R> ? tail_fit::coarse : tail_fit::fine;
        const lower_tail_16 t = lower_tail_16_of<fit>(x);
        return x * (x <= 0.0f ? t.g : 1.0f - t.g);
      } else {
        // p = |x| Phi(-|x|) = |x| h E / 2, the 1/2 in the exp's last scaling (2^-65);
        // x * (x > 0) - p in one fma: x - p above 0, and below x * 0 - p: -p, with +0 for +0 (as
        // -0 for -0 and below -14.8, where p rounds to 0), and NaN for -inf (-inf * 0, as
        // PyTorch). The tail_parts form (h = erfcx / 2 and the x^2 residual as a factor of h)
        // and a select of the two results cost more instructions per element than
        // erfcx_bounded (abs_times_erfcx_of).
        const float ax = fminf(fabsf(x), 14.8f);  // NaN gives 14.8: NaN x decides the result
        const float p = detail::mul_exp_minus_half_square(abs_times_erfcx_of(ax), ax, 0x1p-65f);
        return fmaf(x, x > 0.0f ? 1.0f : 0.0f, -p);
      }
    } else {
      return x < -37.5 && x >= -1.7976931348623157e308 ? tail(x, false) : x * cdf(x);
    }
  }
  /// gelu'(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    if constexpr (sizeof(C) == 4) {
      // Phi + x phi = E (h + x / sqrt(2 pi)) below 0, 1 + E (x / sqrt(2 pi) - h) above (the
      // zero crossing near -0.75 cancels only down to the table's absolute bound); +-inf give
      // NaN, as PyTorch's inf * 0
      if constexpr (detail::rounds_to_16_bits_v<R>) {
        // x phi(x) = x e 2^-64 / sqrt(2 pi): +-inf give inf * 0 = NaN, as PyTorch
        const lower_tail_16 t = lower_tail_16_of<tail_fit::derivative>(x);
        return fmaf(x * float(0x1p-64 * inv_sqrt_2pi), t.e, x <= 0.0f ? t.g : 1.0f - t.g);
      } else {
        // m E = Phi(-|x|) - |x| phi(x): the result below 0, its complement above
        const gaussian_tail g = tail_parts(x);
        const float m = fmaf(-g.ax, float(inv_sqrt_2pi), g.h);
        const float p = times_exp(x <= 0.0f ? m : -m, g.s);
        return (x <= 0.0f ? p : 1.0f + p) + (x - x);  // x - x: NaN for +-inf and NaN, else +0
      }
    } else {
      const double xc = x < -64 ? -64 : x > 64 ? 64 : x;
      const double x2 = detail::mul_rn(xc, xc);
      const double x2_lo = ::fma(xc, xc, -x2);
      const double e =
          detail::exp_nonpositive_sum(detail::split<double>{-0.5 * x2, -0.5 * x2_lo}, r);
      return x < -37.5 && x >= -1.7976931348623157e308 ? tail(x, true)
                                                       : ::fma(x, e * inv_sqrt_2pi, cdf(x));
    }
  }
};

/// GELU, tanh approximation, PyTorch `F.gelu(x, approximate='tanh')`: x (1 + tanh(u)) / 2 with
/// u = sqrt(2/pi) (x + 0.044715 x^3), computed as x sigmoid(2u) (the same function; no 1 + tanh
/// that cancels for x << 0): from e = exp(-2|u|), overflow-safe as sigmoid. gelu_tanh(-inf) =
/// NaN (-inf * 0, as PyTorch), gelu_tanh(inf) = inf, gelu_tanh(-0) = -0. The exp amplifies the
/// rounding of u by 2|u| (up to 700 in double): float computes u in float-float, double in
/// double-double arithmetic; 16-bit results use float, `ex2.approx.ftz` and `rcp.approx.ftz`.
/// Backward as PyTorch's: s + 2 x s (1 - s) u', u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2);
/// gelu_tanh'(+-inf) = NaN (inf * 0, as PyTorch).
struct gelu_tanh {
  /// Cost hint (activation.cuh): its float forward is as long as a tight budget affords.
  static constexpr cuact::cost cost = cuact::cost::compute_bound;
  /// sqrt(2/pi) as a double plus its rounding error (beta_lo).
  static constexpr double beta_hi = 0x1.9884533d43651p-1;  // sqrt(2/pi)
  /// Low part of sqrt(2/pi) (see beta_hi).
  static constexpr double beta_lo = -0x1.cbc0d30ebfd15p-55;
  /// 0.044715 as a double plus its rounding error (kappa_lo).
  static constexpr double kappa_hi = 0x1.6e4e26d4801f7p-5;  // 0.044715
  /// Low part of 0.044715 (see kappa_hi).
  static constexpr double kappa_lo = 0x1.441355475a31ap-59;

  /// -2|u| as hi + lo in double-double, u at x clamped to [-30, 30] (e = exp(-2|u|) is 0 beyond).
  /// (Float and 16-bit results take float_parts_of and half_parts_of.)
  CUACT_HOST_DEVICE static detail::split<double> minus_two_abs_u(double x) {
    const double xc = x < -30 ? -30 : x > 30 ? 30 : x;
    // double-double: w = 1 + kappa x^2, u = beta x w, each product with its fma residual
    // (mul_rn/add_rn: a contracted 1 + kappa x^2 would break the two-sum: 200 ulp at x = -16)
    const double x2 = detail::mul_rn(xc, xc), x2_lo = ::fma(xc, xc, -x2);
    const double k = detail::mul_rn(kappa_hi, x2);
    const double k_lo = ::fma(kappa_hi, x2, -k) + (kappa_hi * x2_lo + kappa_lo * x2);
    const double w = detail::add_rn(1.0, k);  // two-sum
    const double wb = w - k;
    const double w_lo = ((1.0 - wb) + (k - (w - wb))) + k_lo;
    const double xw = detail::mul_rn(xc, w), xw_lo = ::fma(xc, w, -xw) + xc * w_lo;
    const double u = detail::mul_rn(beta_hi, xw);
    const double u_lo = ::fma(beta_hi, xw, -u) + (beta_hi * xw_lo + beta_lo * xw);
    return u < 0 ? detail::split<double>{2 * u, 2 * u_lo}
                 : detail::split<double>{-2 * u, -2 * u_lo};
  }
  /// Float: e = exp(-2|u|) and 1 / (1 + e), from a = min(|x|, 11.5) (u is odd; beyond 11.5,
  /// e < 2^-183: x e q is 0 and q is 1). 2|u| log2(e) = a w, w = c1 + c3 a^2, with log2(e) folded
  /// into the constants (float pairs, 2^-45) and w as w + w_lo in float-float, so the reduction
  /// for `ex2.approx` is j = -round(a w) and t = -a (w + w_lo) - j from fmas whose products are
  /// exact, about 2^-44 relative. Below 0 the exp amplifies u's error by 2|u| (up to 104 before
  /// the result underflows), hence the pair; branch-free, as both signs share it. c1's high part
  /// is a multiple of 2^-20, so c1 + c3 a^2 (below 16) is Fast2Sum-exact in either order (no
  /// max/min), and a w <= 183 keeps 2^(j + 64) normal without a clamp of its own; t takes |x|
  /// itself, so +-inf give t = -inf, e = 0, and NaN gives NaN. That saves the instructions of a
  /// clamp on |x|, ordered sums and a clamp on j.
  struct float_parts {
    ///@{
    /// a = min(|x|, 11.5), s = a^2, e = exp(-2|u|) (es = e 2^64, see detail::exp_minus_scaled)
    /// and q = 1 / (1 + e).
    float a, s, e, es, q;
    ///@}
  };
  /// The float_parts of x.
  CUACT_HOST_DEVICE static float_parts float_parts_of(float x) {
    constexpr double log2e = 1.44269504088896340736;
    constexpr double c1 = 2 * beta_hi * log2e, c3 = 2 * beta_hi * kappa_hi * log2e;
    constexpr float c1h = float(static_cast<long long>(c1 * 0x1p20 + 0.5) * 0x1p-20);
    constexpr float c1l = float(c1 - double(c1h));
    constexpr float c3h = float(c3), c3l = float(c3 - double(c3h));
    const float a = fminf(fabsf(x), 11.5f);  // NaN gives 11.5: t and x * q below make the NaN
    const float s = a * a, s_lo = fmaf(a, a, -s);
    // p not contractible: nvcc fused `p - (w - c1h)` below into fma(c3h, s, ...), counting p's
    // rounding error twice in w_lo (up to 10 ulp at x = -8.1 on sm_90; the host does not contract)
    const float p = detail::mul_rn(c3h, s);
    const float p_lo = fmaf(c3h, s, -p) + fmaf(c3h, s_lo, fmaf(c3l, s, c1l));
    const float w = c1h + p;
    const float w_lo = (p - (w - c1h)) + p_lo;
    const float jm = fmaf(-a, w, detail::round_magic);
    const float j = jm - detail::round_magic;  // exact, in [-183, 0]
    const float t = fmaf(-a, w_lo, fmaf(-fabsf(x), w, -j));
    const float es = detail::exp2_approx_ftz(t) * detail::exp2_plus_64_of_rounded(jm);
    const float e = es * 0x1p-64f;
    return {a, s, e, es, detail::reciprocal_one_plus(e, rounded_to<float>{})};
  }
  /// For 16-bit results (2^-12 suffices): a = min(|x|, 30), s = a^2, es = 2^64 exp(-2|u|) by
  /// `ex2.approx.ftz` of 64 - 2|u| log2(e) = 64 + a (c1 + c3 s) (log2 e folded into the
  /// constants; the rounding of that sum, below 190, costs 2^-15 relative), q = 1 / (1 + e).
  /// 2^64 e stays normal down to e = 2^-190; bf16 results need e down to 2^-138.
  struct half_parts {
    ///@{
    /// a = min(|x|, 30), s = a^2, es = 2^64 exp(-2|u|), q = 1 / (1 + exp(-2|u|)).
    float a, s, es, q;
    ///@}
  };
  /// The half_parts of x (NaN gives a = 30 and q = 1: x q makes the NaN).
  CUACT_HOST_DEVICE static half_parts half_parts_of(float x) {
    constexpr double minus_c1 = -2 * beta_hi * 1.44269504088896340736;
    const float a = fminf(fabsf(x), 30.0f);
    const float s = a * a;
    const float es = detail::exp2_approx_ftz(
        fmaf(a, fmaf(s, float(minus_c1 * kappa_hi), float(minus_c1)), 64.0f));
    return {a, s, es, detail::rcp_approx_ftz(fmaf(es, 0x1p-64f, 1.0f))};
  }
  /// gelu_tanh(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      // x q above 0, x e q below (-inf: -inf * 0 = NaN), e multiplied in last
      const float_parts f = float_parts_of(x);
      const float xq = x * f.q;
      return x < 0.0f ? detail::times_scaled_exp(xq, f.es) : xq;
    } else if constexpr (sizeof(C) == 4) {
      // 16-bit results: x q above 0, (x q es) 2^-64 below (-inf: -inf * 0 = NaN)
      const half_parts h = half_parts_of(x);
      const float xq = x * h.q;
      return x < 0.0f ? (xq * h.es) * 0x1p-64f : xq;
    } else {
      const detail::split<C> v = minus_two_abs_u(x);
      const C e = detail::exp_nonpositive_sum(v, r);
      const C q = detail::reciprocal_one_plus(e, r);
      // below 0, x e q with e = exp(hi) (1 + lo) multiplied in last (the result is subnormal only
      // where e is); lo after the product, which x = -FLT_MAX would overflow
      const C xq = x * q;
      const C below = detail::mul_exp_nonpositive(xq, v.hi, r);  // -inf: -inf * 0 = NaN
      const C corrected = below == C(0) ? below : detail::fused(below, v.lo, below);  // keeps -0
      return x < C(0) ? corrected : xq;
    }
  }
  /// gelu_tanh'(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    // s + 2 x s (1 - s) u' = q (1 + 2 x e q u') above 0, e q (1 + 2 x q u') below
    if constexpr (detail::accurate_float_v<R, C>) {
      const float_parts f = float_parts_of(x);
      const float two_q_du = f.q * fmaf(float(6 * beta_hi * kappa_hi), f.s, float(2 * beta_hi));
      const float above = f.q * fmaf(x * f.e, two_q_du, 1.0f);  // +inf: inf * 0 = NaN
      // -a for finite x, NaN for +-inf (-inf: NaN, as PyTorch); a, not x: no overflow for huge x
      const float xm = fmaf(x, 0.0f, -f.a);
      const float below = detail::times_scaled_exp(f.q * fmaf(xm, two_q_du, 1.0f), f.es);
      return x < 0.0f ? below : above;
    } else if constexpr (sizeof(C) == 4) {
      // 16-bit results: s + k e with k = 2 x q^2 u' (s (1 - s) = e q^2 on both sides), s = q
      // above 0 and e q below, e = es 2^-64 multiplied in last; x taken as +-a (no overflow),
      // +-inf give NaN (x * 0), as PyTorch. One sum for both sides: fewer live values than an
      // above and a below, so the kernel keeps more resident blocks.
      const half_parts h = half_parts_of(x);
      const float du2 = fmaf(float(6 * beta_hi * kappa_hi), h.s, float(2 * beta_hi));
      const float k = (copysignf(h.a, x) * h.q) * (h.q * du2);
      const bool below = x < 0.0f;
      const float r = ((below ? h.q + k : k) * h.es) * 0x1p-64f;
      return fmaf(x, 0.0f, below ? r : h.q + r);
    } else {
      const detail::split<C> v = minus_two_abs_u(x);
      const C e = detail::exp_nonpositive_sum(v, r);
      const C q = detail::reciprocal_one_plus(e, r);
      const C xc = x < C(-30) ? C(-30) : x > C(30) ? C(30) : x;
      const C du = C(beta_hi) * detail::fused(C(3 * kappa_hi) * xc, xc, C(1));
      const C two_q_du = C(2) * q * du;
      const C above = q * detail::fused(x * e, two_q_du, C(1));  // +inf: inf * 0 = NaN
      const C below = q * detail::fused(xc, two_q_du, C(1));     // xc: no overflow for huge x
      const C x_minus_x = x - x;                                 // NaN for -inf: NaN, as PyTorch
      return x < C(0)
                 ? (x_minus_x == C(0)
                        ? detail::mul_exp_nonpositive(detail::fused(below, v.lo, below), v.hi, r)
                        : x_minus_x)
                 : above;
    }
  }
};

}  // namespace cuact
