/// \file
/// The numerics behind cuact::tanhshrink (activations/tanh.cuh): its 16-bit forward by the odd
/// series near 0 and 2 / (1 + e) - 1 above, and tanh(x)^2 in float without tanhf's error doubled
/// by the square. The activation derives from the struct, so it reads as its math.
#pragma once

#include "../config.cuh"
#include "../math.cuh"

namespace cuact {
namespace detail {

/// tanhshrink's numerics (cuact::tanhshrink derives from it).
struct tanhshrink_numerics {
  /// x - tanh(x) for 16-bit results: below |x| = 1/2 the odd Taylor series x^3/3 - 2x^5/15 + ...
  /// to x^11, above it x - (1 - e) / (1 + e), e = exp(-2|x|).
  template <class R>
  CUACT_HOST_DEVICE static float half_forward(float x, R r) {
    const float a = fabsf(x);
    const float x2 = x * x;
    float p = fmaf(x2, 1382.0f / 155925, -62.0f / 2835);
    p = fmaf(p, x2, 17.0f / 315);
    p = fmaf(p, x2, -2.0f / 15);
    p = fmaf(p, x2, 1.0f / 3);
    const float series = p * x2 * x;
    // above 1/2, e = exp(-2|x|) <= 1/e only forms 1 + e (`ex2.approx.ftz`: its flush is
    // harmless), and t = (1 - e) / (1 + e) = 2 / (1 + e) - 1 in [0.46, 1) cancels at most 2x
    const float e = exp2_approx_ftz(a * -2.88539008177792681f);
    const float t = fmaf(2.0f, reciprocal_at_least_one(1.0f + e, r), -1.0f);
    return a < 0.5f ? series + 0.0f : x - copysignf(t, x);  // + 0: tanhshrink(-0) = +0
  }
  /// tanh(x)^2 for float results.
  CUACT_HOST_DEVICE static float float_tanh_squared(float x) {
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
    const float e = exp_minus_scaled(2.0f * fabsf(x)).e;  // +inf: 0; NaN: NaN
    const float d = 1.0f + e;
    const float d_lo = e - (d - 1.0f);
    const float n = 1.0f - e;
    const float n_lo = (1.0f - n) - e;
    const float rd = rcp_approx_ftz(d);
    const float t0 = n * rd;
    const float residual = fmaf(-t0, d_lo, fmaf(-t0, d, n) + n_lo);
    const float t2 = fmaf(t0, t0, (t0 + t0) * (rd * residual));
    return fabsf(x) < 1.0f ? series : t2;
  }
};

}  // namespace detail
}  // namespace cuact
