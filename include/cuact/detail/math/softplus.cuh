/// \file
/// The numerics of log(1 + exp(x)) behind cuact::softplus and cuact::mish
/// (activations/softplus.cuh): softplus's forward below its switch and its derivative with
/// x * beta in two parts, and mish's tanh(softplus(x)) as a rational of exp(-|x|). Each
/// activation calls these, so its struct reads as its math.
#pragma once

#include "../config.cuh"
#include "../math.cuh"

namespace cuact {
namespace detail {

/// softplus's numerics (cuact::softplus calls them with its beta and threshold).
struct softplus_numerics {
  /// x * beta as hi + lo for float and double results; hi alone (lo = 0) for 16-bit ones.
  template <class C, class R>
  CUACT_HOST_DEVICE static split<C> scaled(C x, double beta, R) {
    if constexpr (rounds_to_16_bits_v<R>) {
      return {x * C(beta), C(0)};
    } else {
      return times(x, beta);
    }
  }
  /// exp(-|v|) for v = hi + lo.
  template <class C, class R>
  CUACT_HOST_DEVICE static C exp_minus_abs(split<C> v, R r) {
    const bool negative = v.hi < C(0);
    return exp_nonpositive_sum(split<C>{negative ? v.hi : -v.hi, negative ? v.lo : -v.lo}, r);
  }
  /// softplus below its switch: v, x * beta as the compute type has it (the switch and the sign
  /// read it), and tail = log1p(exp(-|x beta|)) / beta.
  template <class C>
  struct below_switch {
    ///@{
    /// v = x * beta; tail = log1p(exp(-|x beta|)) / beta.
    C v, tail;
    ///@}
  };
  /// below_switch of x for `beta`.
  template <class C, class R>
  CUACT_HOST_DEVICE static below_switch<C> below_switch_of(C x, double beta, R r) {
    C v, tail;
    if constexpr (accurate_float_v<R, C>) {
      // exp(-|x| |beta|) with |beta| log2(e) as a float pair in the reduction: x beta is never
      // rounded before the exp, so it needs no low part (splitting it and folding the low part
      // back would cost instructions); log1p by the polynomial (cheaper than log1pf),
      // scaled back by the float 2^-64 / beta (one division per thread; an IEEE division per
      // element is too costly where the fp32 forward is instruction-bound):
      // one rounding more than l / beta (none for a power-of-two beta; |beta| up to 2^62, where
      // the factor is normal), and a subnormal result rounds once. v: PyTorch's float product,
      // for the switch and the sign.
      v = x * float(beta);
      const scaled_exp e = exp_minus_scaled(fabsf(x), exp_rate_of(beta));
      tail = log1p_unit_scaled(e.e, e.es) * float(0x1p-64 / beta);
    } else {
      const split<C> s = scaled(x, beta, r);
      v = s.hi;
      const C l = log1p_unit(exp_minus_abs(s, r), r);
      if constexpr (sizeof(C) == 4) {
        tail = l * float(1.0 / beta);  // 16-bit results: as the float path, without the 2^-64
      } else {
        tail = l / C(beta);
      }
    }
    return {v, tail};
  }
  /// softplus'(x) for `beta` and `threshold`: 1 above the switch, sigmoid(x beta) below,
  /// overflow-safe.
  template <class C, class R>
  CUACT_HOST_DEVICE static C derivative(C x, double beta, double threshold, R r) {
    const split<C> v = scaled(x, beta, r);
    if constexpr (accurate_float_v<R, C>) {
      // one reduction (exp_minus_scaled) for e and for e q below 0
      const scaled_exp e = exp_minus_scaled(fabsf(v.hi));
      const float es = fmaf(e.es, v.hi < 0.0f ? v.lo : -v.lo, e.es);
      const float q = reciprocal_one_plus(es * 0x1p-64f, r);
      const float below = times_scaled_exp(q, es);
      return v.hi > float(threshold) ? 1.0f : v.hi >= 0.0f ? q : below;
    } else if constexpr (rounds_to_16_bits_v<R>) {
      // sigmoid(v) with v = hi (lo = 0): e = exp(-|v|) kept, so below 0, where e = exp(v), the
      // product e q reuses it (one exponential instead of two)
      const auto e = exp_nonpositive_kept(v.hi < C(0) ? v.hi : -v.hi, r);
      const C q = reciprocal_one_plus(e.value(), r);
      return v.hi > C(threshold) ? C(1) : v.hi >= C(0) ? q : e.times(q);
    } else {
      const C q = reciprocal_one_plus(exp_minus_abs(v, r), r);
      // sigmoid(v): q above 0, e q below, e = exp(v) multiplied in last
      const C below = mul_exp_nonpositive(fused(q, v.lo, q), v.hi, r);
      return v.hi > C(threshold) ? C(1) : v.hi >= C(0) ? q : below;
    }
  }
};

/// mish's numerics (cuact::mish derives from it): tanh(softplus(x)) as a / (a + b) from
/// e = exp(-|x|), and for 16-bit results as n / (n + 2) from u = exp(min(x, 20)).
struct mish_numerics {
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
    const C a = positive ? fused(C(2), e, C(1)) : e * (e + C(2));
    const C b = positive ? C(2) * e * e : C(2);
    return {a, b, reciprocal_at_least_one(a + b, r)};  // a + b in [1, 5]
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
    const float us = exp_raised(fminf(x, 20.0f));
    const float u2 = fmaf(us, 0x1p-64f, 2.0f);
    const float ns = us * u2;
    return {us, u2, ns, rcp_approx_ftz(fmaf(ns, 0x1p-64f, 2.0f))};
  }
  /// mish(x) for float results.
  CUACT_HOST_DEVICE static float float_forward(float x) {
    // t = a / (a + b) above 0, e (e + 2) / (a + b) below with e multiplied in last. The
    // quotient n / d (n = a or e + 2) from `rcp.approx` with its residual taken back (about
    // 0.5 ulp) and d = a + b in one fma: 4 roundings of weight one besides the exp, where the
    // plain quotient and sum had 6 (5 ulp at x = -5.0988 on the device, with ex2.approx's error)
    const scaled_exp e = exp_minus_scaled(fabsf(x));
    const bool positive = x > 0.0f;
    const float w = e.e + 2.0f;
    const float a = fmaf(2.0f, e.e, 1.0f);
    const float d = fmaf(e.e, positive ? e.e + e.e : w, positive ? a : 2.0f);  // in [1, 5]
    const float n = positive ? a : w;
    const float q = rcp_approx_ftz(d);
    const float t0 = n * q;
    const float t = fmaf(q, fmaf(-t0, d, n), t0);
    return positive ? x * t : times_scaled_exp(x * t, e.es);  // -inf: -inf * 0 = NaN
  }
  /// mish(x) for double results (and float ones without the accuracy tag's float form).
  template <class C, class R>
  CUACT_HOST_DEVICE static C wide_forward(C x, R r) {
    const auto kept = exp_nonpositive_kept(x < C(0) ? x : -x, r);
    const C e = kept.value();
    const parts<C> p = tanh_softplus(x, e, r);
    // x <= 0: a = e (e + 2), with e multiplied in last (x a / (a + b) is subnormal only where
    // e is)
    return x > C(0) ? x * (p.a * p.q) : kept.times(x * ((e + C(2)) * p.q));
  }
  /// mish'(x) for float results.
  template <class R>
  CUACT_HOST_DEVICE static float float_derivative(float x, R r) {
    const scaled_exp e = exp_minus_scaled(fabsf(x));
    const parts<float> p = tanh_softplus(x, e.e, r);
    const float one_minus_t2 = p.b * fmaf(2.0f, p.a, p.b) * (p.q * p.q);
    const float q = reciprocal_one_plus(e.e, r);  // sigmoid(|x|)
    const float above = fmaf(x * q, one_minus_t2, p.a * p.q);
    const float below = fmaf(x * q, one_minus_t2, (e.e + 2.0f) * p.q);
    return x > 0.0f ? above : times_scaled_exp(below, e.es);
  }
  /// mish'(x) for 16-bit results.
  CUACT_HOST_DEVICE static float half_derivative(float x) {
    // t + x s (1 - t^2), 1 - t^2 = 4 (n + 1) / (n + 2)^2, s = u / (1 + u); x above 20 adds
    // below 2^-50 and is taken at 20 (no overflow); +-inf give NaN, as PyTorch
    const half_parts h = half_parts_of(x);
    const float c = rcp_approx_ftz(fmaf(h.us, 0x1p-64f, 1.0f));  // s = u c
    const float one_minus_t2 = 4.0f * fmaf(h.ns, 0x1p-64f, 1.0f) * (h.r * h.r);
    // u ((u + 2) r + x c (1 - t^2)): u multiplied in last keeps the sign of an underflow
    const float in_u = fmaf(fminf(x, 20.0f) * c, one_minus_t2, h.u2 * h.r);
    return fmaf(x, 0.0f, (in_u * h.us) * 0x1p-64f);  // x * 0: NaN for +-inf, -0 keeps -0
  }
  /// mish'(x) for double results.
  template <class C, class R>
  CUACT_HOST_DEVICE static C wide_derivative(C x, R r) {
    const auto kept = exp_nonpositive_kept(x < C(0) ? x : -x, r);
    const C e = kept.value();
    const parts<C> p = tanh_softplus(x, e, r);
    const C one_minus_t2 = p.b * fused(C(2), p.a, p.b) * (p.q * p.q);
    const auto l = logistic(x, e, r);
    // x > 0: t + x s (1 - t^2); x <= 0: e ((e + 2) q + x / (1 + e) (1 - t^2)), e multiplied last
    const C above = fused(x * l.s, one_minus_t2, p.a * p.q);
    const C below = fused(x * l.c, one_minus_t2, (e + C(2)) * p.q);
    return x > C(0) ? above : kept.times(below);
  }
};

}  // namespace detail
}  // namespace cuact
