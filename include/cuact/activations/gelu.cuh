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
    if constexpr (sizeof(C) == 4 && detail::rounds_to_16_bits_v<R>) {
      constexpr tail_fit fit =
          detail::rounds_to_8_significant_bits_v<R> ? tail_fit::coarse : tail_fit::fine;
      return half_forward<fit>(x);
    } else if constexpr (sizeof(C) == 4) {
      return float_forward(x);
    } else {
      return x < -37.5 && x >= -1.7976931348623157e308 ? tail(x, false) : x * cdf(x);
    }
  }
  /// gelu'(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    if constexpr (sizeof(C) == 4 && detail::rounds_to_16_bits_v<R>) {
      return half_derivative(x);
    } else if constexpr (sizeof(C) == 4) {
      return float_derivative(x);
    } else {
      return wide_derivative(x, r);
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
      return wide_forward(x, r);
    }
  }
  /// gelu_tanh'(x): s + 2 x s (1 - s) u' (detail/math/gaussian.cuh).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      return float_derivative(x);
    } else if constexpr (sizeof(C) == 4) {
      return half_derivative(x);
    } else {
      return wide_derivative(x, r);
    }
  }
};

}  // namespace cuact
