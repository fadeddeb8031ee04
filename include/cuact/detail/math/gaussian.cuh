/// \file
/// The Gaussian special functions behind cuact::gelu and cuact::gelu_tanh (activations/gelu.cuh):
/// erfc-based Phi with a corrected argument, the Mills-ratio series, exp-scaled tails, and the
/// double-double and float parts of the tanh form. Each activation derives from its struct, so
/// the struct itself reads as its math.
#pragma once

#include "../config.cuh"
#include "../math.cuh"

namespace cuact {
namespace detail {

/// gelu's numerics (cuact::gelu derives from it): Phi(x) in double with its argument in two
/// parts, the Mills-ratio tail, and the float and 16-bit Gaussian tails.
struct gelu_numerics {
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
  // The float forms: x Phi(x) = x h E below 0 and x - x h E above, h E = erfc(|x| / sqrt 2) / 2.
  /// gelu(x) for float results: p = |x| Phi(-|x|) = |x| h E / 2, the 1/2 in the exp's last scaling
  /// (2^-65); x * (x > 0) - p in one fma: x - p above 0, and below x * 0 - p: -p, with +0 for +0
  /// (as -0 for -0 and below -14.8, where p rounds to 0), and NaN for -inf (-inf * 0, as
  /// PyTorch). The tail_parts form (h = erfcx / 2 and the x^2 residual as a factor of h) and a
  /// select of the two results cost more instructions per element than erfcx_bounded
  /// (abs_times_erfcx_of).
  CUACT_HOST_DEVICE static float float_forward(float x) {
    const float ax = fminf(fabsf(x), 14.8f);  // NaN gives 14.8: NaN x decides the result
    const float p = detail::mul_exp_minus_half_square(abs_times_erfcx_of(ax), ax, 0x1p-65f);
    return fmaf(x, x > 0.0f ? 1.0f : 0.0f, -p);
  }
  /// gelu(x) for 16-bit results in the tail form Fit: +-0 keep their sign; -inf gives -inf * 0 =
  /// NaN (as PyTorch), +inf gives inf.
  template <tail_fit Fit>
  CUACT_HOST_DEVICE static float half_forward(float x) {
    const lower_tail_16 t = lower_tail_16_of<Fit>(x);
    return x * (x <= 0.0f ? t.g : 1.0f - t.g);
  }
  // The float derivatives: Phi + x phi = E (h + x / sqrt(2 pi)) below 0, 1 + E (x / sqrt(2 pi) -
  // h) above (the zero crossing near -0.75 cancels only down to the table's absolute bound); +-inf
  // give NaN, as PyTorch's inf * 0.
  /// gelu'(x) for float results: m E = Phi(-|x|) - |x| phi(x), the result below 0, its complement
  /// above.
  CUACT_HOST_DEVICE static float float_derivative(float x) {
    const gaussian_tail g = tail_parts(x);
    const float m = fmaf(-g.ax, float(inv_sqrt_2pi), g.h);
    const float p = times_exp(x <= 0.0f ? m : -m, g.s);
    return (x <= 0.0f ? p : 1.0f + p) + (x - x);  // x - x: NaN for +-inf and NaN, else +0
  }
  /// gelu'(x) for 16-bit results: x phi(x) = x e 2^-64 / sqrt(2 pi) (+-inf give inf * 0 = NaN, as
  /// PyTorch).
  CUACT_HOST_DEVICE static float half_derivative(float x) {
    const lower_tail_16 t = lower_tail_16_of<tail_fit::derivative>(x);
    return fmaf(x * float(0x1p-64 * inv_sqrt_2pi), t.e, x <= 0.0f ? t.g : 1.0f - t.g);
  }
  /// gelu'(x) for double results: Phi(x) + x phi(x), x^2 in two parts in exp(-x^2 / 2), the
  /// Mills-ratio tail below -37.5.
  template <class R>
  CUACT_HOST_DEVICE static double wide_derivative(double x, R r) {
    const double xc = x < -64 ? -64 : x > 64 ? 64 : x;
    const double x2 = detail::mul_rn(xc, xc);
    const double x2_lo = ::fma(xc, xc, -x2);
    const double e = detail::exp_nonpositive_sum(detail::split<double>{-0.5 * x2, -0.5 * x2_lo}, r);
    return x < -37.5 && x >= -1.7976931348623157e308 ? tail(x, true)
                                                     : ::fma(x, e * inv_sqrt_2pi, cdf(x));
  }
};

/// gelu_tanh's numerics (cuact::gelu_tanh derives from it): -2|u| in double-double, and the
/// float and 16-bit parts of sigmoid(2u).
struct gelu_tanh_numerics {
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
  /// gelu_tanh(x) for double results: x sigmoid(2u) from e = exp(-2|u|) with u in double-double.
  template <class C, class R>
  CUACT_HOST_DEVICE static C wide_forward(C x, R r) {
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
  // The derivatives: s + 2 x s (1 - s) u' = q (1 + 2 x e q u') above 0, e q (1 + 2 x q u') below.
  /// gelu_tanh'(x) for float results.
  CUACT_HOST_DEVICE static float float_derivative(float x) {
    const float_parts f = float_parts_of(x);
    const float two_q_du = f.q * fmaf(float(6 * beta_hi * kappa_hi), f.s, float(2 * beta_hi));
    const float above = f.q * fmaf(x * f.e, two_q_du, 1.0f);  // +inf: inf * 0 = NaN
    // -a for finite x, NaN for +-inf (-inf: NaN, as PyTorch); a, not x: no overflow for huge x
    const float xm = fmaf(x, 0.0f, -f.a);
    const float below = detail::times_scaled_exp(f.q * fmaf(xm, two_q_du, 1.0f), f.es);
    return x < 0.0f ? below : above;
  }
  /// gelu_tanh'(x) for 16-bit results: s + k e with k = 2 x q^2 u' (s (1 - s) = e q^2 on both
  /// sides), s = q above 0 and e q below, e = es 2^-64 multiplied in last; x taken as +-a (no
  /// overflow), +-inf give NaN (x * 0), as PyTorch. One sum for both sides: fewer live values
  /// than an above and a below, so the kernel keeps more resident blocks.
  CUACT_HOST_DEVICE static float half_derivative(float x) {
    const half_parts h = half_parts_of(x);
    const float du2 = fmaf(float(6 * beta_hi * kappa_hi), h.s, float(2 * beta_hi));
    const float k = (copysignf(h.a, x) * h.q) * (h.q * du2);
    const bool below = x < 0.0f;
    const float r = ((below ? h.q + k : k) * h.es) * 0x1p-64f;
    return fmaf(x, 0.0f, below ? r : h.q + r);
  }
  /// gelu_tanh'(x) for double results.
  template <class C, class R>
  CUACT_HOST_DEVICE static C wide_derivative(C x, R r) {
    const detail::split<C> v = minus_two_abs_u(x);
    const C e = detail::exp_nonpositive_sum(v, r);
    const C q = detail::reciprocal_one_plus(e, r);
    const C xc = x < C(-30) ? C(-30) : x > C(30) ? C(30) : x;
    const C du = C(beta_hi) * detail::fused(C(3 * kappa_hi) * xc, xc, C(1));
    const C two_q_du = C(2) * q * du;
    const C above = q * detail::fused(x * e, two_q_du, C(1));  // +inf: inf * 0 = NaN
    const C below = q * detail::fused(xc, two_q_du, C(1));     // xc: no overflow for huge x
    const C x_minus_x = x - x;                                 // NaN for -inf: NaN, as PyTorch
    return x < C(0) ? (x_minus_x == C(0)
                           ? detail::mul_exp_nonpositive(detail::fused(below, v.lo, below), v.hi, r)
                           : x_minus_x)
                    : above;
  }
};

}  // namespace detail
}  // namespace cuact
