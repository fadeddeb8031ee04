/// \file
/// GELU, in its erfc form (gelu) and its tanh approximation (gelu_tanh).
/// Semantics, accuracy and the members' contract: cuact/activations.cuh and cuact/activation.cuh.
#pragma once

#include "../activation.cuh"
#include "../detail/math.cuh"
#include "../detail/math/gaussian.cuh"
#include "../tuning.cuh"

namespace cuact {

/// GELU (Hendrycks and Gimpel, 2016), PyTorch `F.gelu(x, approximate='none')`: x Phi(x) =
/// x erfc(-x / sqrt 2) / 2. erfc, not PyTorch's 1 + erf(x / sqrt 2), which cancels to 0 below
/// x = -5.5 in float; gelu(-inf) = NaN (-inf * 0, as PyTorch), gelu(inf) = inf, gelu(-0) = -0.
/// Float: in double (erfc amplifies the rounding of its argument by 2t^2, 180 ulp at x = -13).
/// Double: erfc with x / sqrt 2 in two parts, corrected to first order (erfc itself is
/// documented at 5 ulp in CUDA and glibc: double gelu is within 6 ulp), and below x = -37.5,
/// where Phi is subnormal, the Mills-ratio series. 16-bit: erfcf.
/// Backward as `GeluBackward`: Phi(x) + x phi(x), with x^2 in two parts in exp(-x^2 / 2) for
/// double; gelu'(+-inf) = NaN (inf * 0, as PyTorch).
struct gelu : detail::gelu_numerics {
  /// Cost hint (activation.cuh): its float forward is as long as a tight budget affords.
  static constexpr cuact::cost cost = cuact::cost::compute_bound;
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
struct gelu_tanh : detail::gelu_tanh_numerics {
  /// Cost hint (activation.cuh): its float forward is as long as a tight budget affords.
  static constexpr cuact::cost cost = cuact::cost::compute_bound;
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
