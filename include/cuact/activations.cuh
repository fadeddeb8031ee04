/// \file
/// Activation policies: tiny functor structs, one per activation, each with its forward and its
/// derivatives (the concept and its optional members: activation.cuh). Parameters are public
/// members named, ordered and defaulted as in torch.nn.functional.
#pragma once

#include "activation.cuh"
#include "detail/config.cuh"
#include "detail/math.cuh"

namespace cuact {

/// ReLU: x > 0 ? x : +0; propagates NaN; relu(-0) = +0. PyTorch `torch.relu` semantics.
/// Backward as PyTorch `threshold_backward(dy, x, 0)`: dx = x > 0 ? dy : 0 (relu'(0) = 0).
struct relu {
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    // Not fmax: fmax(NaN, 0) is 0, and the hand-written kernels this replaces lost NaNs that way.
    return x > C(0) || x != x ? x : C(0);
  }
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x > C(0) ? C(1) : C(0);
  }
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    return derivative(y);  // y > 0 exactly where x > 0
  }
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x > C(0) ? dy : C(0);
  }
  template <class C>
  CUACT_HOST_DEVICE C gradient_from_output(C dy, C y) const {
    return gradient(dy, y);
  }
};

/// SELU (Klambauer et al., "Self-Normalizing Neural Networks", 2017), PyTorch `torch.selu`:
/// scale * (x > 0 ? x : alpha * expm1(x)); propagates NaN; selu(-0) = -0.
/// Backward as PyTorch `elu_backward`: x <= 0 ? scale * alpha * exp(x) : scale.
struct selu {
  static constexpr bool is_heavy = true;  // exp: tens of instructions per element in float
  static constexpr double alpha = 1.6732632423543772848170429916717;
  static constexpr double scale = 1.0507009873554804934193349852946;
  /// scale * alpha as a double plus its rounding error, from the 32-digit constants: the low part
  /// keeps y + scale * alpha accurate where it cancels (y near -scale * alpha) in from-output
  /// gradients.
  static constexpr double scale_alpha_hi = 0x1.c212cc640f031p+0;
  static constexpr double scale_alpha_lo = 0x1.05161b045a1fep-56;

  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    const C negative = C(scale_alpha_hi) * detail::expm1_nonpositive(x > C(0) ? C(0) : x, r);
    return x > C(0) ? C(scale) * x : negative;
  }
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    const C negative = C(scale_alpha_hi) * detail::exp_nonpositive(x > C(0) ? C(0) : x, r);
    return x <= C(0) ? negative : C(scale);
  }
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    // y = scale * alpha * (exp(x) - 1) for x <= 0, so scale * alpha * exp(x) = y + scale * alpha.
    constexpr C high = C(scale_alpha_hi);
    constexpr C low = C((scale_alpha_hi - double(high)) + scale_alpha_lo);
    return y <= C(0) ? (y + high) + low : C(scale);
  }
};

}  // namespace cuact
