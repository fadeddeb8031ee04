/// \file
/// Elementary functions tuned for activations: accurate enough for every supported dtype, cheap
/// enough that 16-bit SELU stays memory-bound.
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
/// Why not `expm1f`: its accurate, branchy implementation costs most of the ~40 instructions per
/// element that an H100 can spend on a 16-bit stream at full memory bandwidth (PERF-NOTES: SELU
/// bf16 with expm1f reaches 0.755-0.92 x memcpy). This one is branch-free, and computes
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

}  // namespace detail
}  // namespace cuact
