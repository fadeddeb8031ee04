/// \file
/// Elementary functions tuned for activations: accurate enough for every supported dtype, cheap
/// enough that 16-bit SELU stays memory-bound.
///
/// Functions taking an accuracy tag `R` (cuact::rounded_to<Storage>, activation.cuh) pick their
/// implementation by `R::storage_bits`: results rounded to 16 bits or fewer take the hardware
/// approximations (MUFU, one instruction each), which are within a few float ulp and so within
/// 1 ulp of the correctly rounded 16-bit value; float and double results take the accurate ones.
#pragma once

#include <cuda/std/bit>

#include <cmath>

#include "config.cuh"

namespace cuact {
namespace detail {

/// exp(x) = 2^k (1 + p) after Cody-Waite range reduction x = k ln2 + r, |r| <= ln2/2, where
/// p = expm1(r) comes from a degree-7 Taylor polynomial (truncation below 0.3 ulp). Shared by
/// expm1_nonpositive and exp_nonpositive; x must be finite or NaN, k is returned as a float
/// (NaN when x is NaN).
struct reduced_exp {
  float k;
  float p;
};
CUACT_HOST_DEVICE reduced_exp reduce_exp(float x) {
  const float k = rintf(x * 1.44269504088896341f);
  float r = fmaf(k, -0.693145751953125f, x);  // ln2 high part: k * ln2_hi is exact
  r = fmaf(k, -1.42860682030941723212e-6f, r);  // ln2 low part
  float q = 1.0f / 5040;
  q = fmaf(q, r, 1.0f / 720);
  q = fmaf(q, r, 1.0f / 120);
  q = fmaf(q, r, 1.0f / 24);
  q = fmaf(q, r, 1.0f / 6);
  q = fmaf(q, r, 0.5f);
  return {k, fmaf(r * r, q, r)};
}

/// 2^k for an integral float k in [-126, 127] (NaN k gives 1).
CUACT_HOST_DEVICE float exp2_integral(float k) {
  const int ki = k == k ? static_cast<int>(k) : 0;
  return cuda::std::bit_cast<float>((ki + 127) << 23);
}

/// expm1(x) for x <= 0 (NaN in, NaN out), within 2 ulp in float.
///
/// Why not `expm1f`: its accurate, branchy implementation costs most of the ~45 instructions per
/// element that an H100 can spend on a 16-bit stream at full memory bandwidth (bf16 SELU with
/// expm1f measured 0.755-0.92 x memcpy there). This one is branch-free, and computes
/// expm1(x) = 2^k p + (2^k - 1) in one fma so nothing cancels.
CUACT_HOST_DEVICE float expm1_nonpositive(float x) {
  // expm1(x) rounds to -1 in float for x < -17.4; clamping keeps 2^k a normal number.
  // The comparison is false for NaN, so NaN flows through.
  const reduced_exp e = reduce_exp(x < -30.0f ? -30.0f : x);
  const float two_k = exp2_integral(e.k);
  const float result = fmaf(two_k, e.p, two_k - 1.0f);
  return x == 0.0f ? x : result;  // expm1(-0) = -0, which the fma would turn into +0
}

/// exp(x) for x <= 0 (NaN in, NaN out), within 2 ulp in float, subnormal results included.
CUACT_HOST_DEVICE float exp_nonpositive(float x) {
  // exp(x) is below half the smallest subnormal for x < -104; 2^k is split into two normal
  // factors so k can reach -150.
  const reduced_exp e = reduce_exp(x < -104.0f ? -104.0f : x);
  const float k_high = truncf(e.k * 0.5f);
  const float two_k_high = exp2_integral(k_high);
  return fmaf(two_k_high, e.p, two_k_high) * exp2_integral(e.k - k_high);
}

CUACT_HOST_DEVICE double expm1_nonpositive(double x) { return ::expm1(x); }
CUACT_HOST_DEVICE double exp_nonpositive(double x) { return ::exp(x); }

/// 2^x by the SFU's `ex2.approx.f32` (relative error below 2^-22, subnormal results kept); the
/// host, which only runs the CPU tests, uses exp2f.
CUACT_HOST_DEVICE float exp2_approx(float x) {
#if defined(__CUDA_ARCH__)
  float result;
  asm("ex2.approx.f32 %0, %1;" : "=f"(result) : "f"(x));
  return result;
#else
  return exp2f(x);
#endif
}

/// True when results of this accuracy tag are rounded to 16 bits or fewer.
template <class R>
inline constexpr bool rounds_to_16_bits_v = R::storage_bits <= 16;

/// exp(x) for x <= 0 at accuracy R. For 16-bit results: one multiply and one MUFU.EX2; the
/// product's rounding error, amplified by |x log2 e| <= 150, stays below 2^-16 relative, so the
/// rounded 16-bit result is within 1 ulp of the correctly rounded one.
template <class R, class C>
CUACT_HOST_DEVICE C exp_nonpositive(C x, R) {
  if constexpr (rounds_to_16_bits_v<R> && sizeof(C) == 4) {
    return exp2_approx(x * 1.44269504088896341f);
  } else {
    return exp_nonpositive(x);
  }
}

/// expm1(x) for x <= 0 at accuracy R. For 16-bit results: a degree-4 Taylor polynomial near 0
/// (relative error below 2^-14 for |x| < 1/4), where exp(x) - 1 would cancel, and exp(x) - 1
/// elsewhere (|expm1| > 0.22 there, so exp's error stays below 2^-14 relative).
template <class R, class C>
CUACT_HOST_DEVICE C expm1_nonpositive(C x, R r) {
  if constexpr (rounds_to_16_bits_v<R> && sizeof(C) == 4) {
    const float near_zero =
        x * fmaf(x, fmaf(x, fmaf(x, 1.0f / 24, 1.0f / 6), 0.5f), 1.0f);
    return x > -0.25f ? near_zero : exp_nonpositive(x, r) - 1.0f;
  } else {
    return expm1_nonpositive(x);
  }
}

}  // namespace detail
}  // namespace cuact
