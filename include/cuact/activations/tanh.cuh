/// \file
/// tanh and tanhshrink.
/// Semantics, accuracy and the members' contract: cuact/activations.cuh and cuact/activation.cuh.
#pragma once

#include "../activation.cuh"
#include "../detail/math.cuh"
#include "../detail/math/hyperbolic.cuh"
#include "../tuning.cuh"

namespace cuact {

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
struct tanhshrink : detail::tanhshrink_numerics {
  /// Cost hint (activation.cuh): tens of instructions per element.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// tanhshrink(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    if constexpr (detail::rounds_to_16_bits_v<R> && sizeof(C) == 4) {
      return half_forward(x, r);  // the series near 0 (detail/math/hyperbolic.cuh)
    } else {
      return x - detail::tanh_(x, r);
    }
  }
  /// tanhshrink'(x) = tanh(x)^2.
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      return float_tanh_squared(x);
    } else {
      const C t = detail::tanh_(x, r);
      return t * t;
    }
  }
};

}  // namespace cuact
