/// \file
/// tanh and tanhshrink.
/// Semantics, accuracy and the members' contract: cuact/activations.cuh and cuact/activation.cuh.
#pragma once

#include "../activation.cuh"
#include "../detail/math.cuh"
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

}  // namespace cuact
