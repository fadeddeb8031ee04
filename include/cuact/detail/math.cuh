/// \file
/// Elementary functions tuned for activations: accurate enough for every supported dtype, cheap
/// enough that 16-bit SELU stays memory-bound.
///
/// Functions taking an accuracy tag `R` (cuact::rounded_to<Storage>, activation.cuh) pick their
/// implementation by `R::storage_bits`: results rounded to 16 bits or fewer take the hardware
/// approximations (MUFU, one instruction each), which are within a few float ulp and so within
/// 1 ulp of the correctly rounded 16-bit value; float and double results take the accurate ones.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda/std/cstdint>

#include "std.cuh"
#include "config.cuh"

namespace cuact {
namespace detail {

/// exp(x) = 2^k (1 + p) after Cody-Waite range reduction x = k ln2 + r, |r| <= ln2/2, where
/// p = expm1(r) comes from a degree-7 Taylor polynomial (truncation below 0.3 ulp), for
/// expm1_nonpositive (exp itself takes the cheaper reduce_exp2 below); x must be finite or NaN, k
/// is returned as a float (NaN when x is NaN).
struct reduced_exp {
  float k;
  float p;
};
CUACT_HOST_DEVICE reduced_exp reduce_exp(float x) {
  const float k = rintf(x * 1.44269504088896341f);
  float r = fmaf(k, -0.693145751953125f, x);    // ln2 high part: k * ln2_hi is exact
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
/// Why not `expm1f`: its accurate, branchy implementation costs most of the instructions per
/// element that a device can spend on a 16-bit stream at full memory bandwidth, so 16-bit
/// forwards through it fall well below the copy ceiling. This one is branch-free, and computes
/// expm1(x) = 2^k p + (2^k - 1) in one fma so nothing cancels.
CUACT_HOST_DEVICE float expm1_nonpositive(float x) {
  // expm1(x) rounds to -1 in float for x < -17.4; clamping keeps 2^k a normal number.
  // The comparison is false for NaN, so NaN flows through.
  const reduced_exp e = reduce_exp(x < -30.0f ? -30.0f : x);
  const float two_k = exp2_integral(e.k);
  const float result = fmaf(two_k, e.p, two_k - 1.0f);
  return x == 0.0f ? x : result;  // expm1(-0) = -0, which the fma would turn into +0
}

/// x clamped to [lo, hi] (lo <= hi, neither NaN) by compares and selects, a NaN x kept.
template <class C>
CUACT_HOST_DEVICE C clamp_by_selects(C x, C lo, C hi) {
  return x > lo ? (x < hi ? x : hi) : (x != x ? x : lo);
}

/// clamp_by_selects(x, lo, hi) for bounds that are not -0 either (a max orders -0 below +0, the
/// compare does not). In float on sm_80 and later, `max.NaN.f32` then `min.NaN.f32`, one
/// instruction each, which a plain fmaxf / fminf would not be (they drop the NaN); elsewhere (the
/// host, double, older devices) the selects. The two instructions are a shorter chain than the
/// selects' for the 16-bit forwards of relu6, hardswish and hardsigmoid, bit-identical for every
/// 16-bit input; hardtanh, whose bounds may be -0, gains nothing and keeps the selects.
template <class C>
CUACT_HOST_DEVICE C clamp_keeping_nan(C x, C lo, C hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (cuda::std::is_same_v<C, float>) {
    float y;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(y) : "f"(x), "f"(lo));
    asm("min.NaN.f32 %0, %0, %1;" : "+f"(y) : "f"(hi));
    return y;
  }
#endif
  return clamp_by_selects(x, lo, hi);
}

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

/// 2^x by `ex2.approx.ftz.f32`: as exp2_approx, but subnormal results flush to zero (one
/// instruction fewer), for uses where a result below 2^-126 cannot matter (exp(x) - 1, 2^t for
/// |t| <= 1/2: CUDA's own expf, within 2 ulp, is this instruction after reduce_exp2's reduction).
CUACT_HOST_DEVICE float exp2_approx_ftz(float x) {
#if defined(__CUDA_ARCH__)
  float result;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(result) : "f"(x));
  return result;
#else
  const float result = exp2f(x);
  return result < 0x1p-126f ? 0.0f : result;  // the flush, so the CPU tests see it too
#endif
}

/// x log2(e) = j + t, j integral, |t| <= 1/2, t within 2^-24 absolute: log2(e) as a float pair,
/// the high product's rounding recovered by the fma (x in [-110, 0]: the low part's error is
/// below 2^-40). exp(x) = 2^j 2^t.
struct reduced_exp2 {
  float j;
  float t;
};
CUACT_HOST_DEVICE reduced_exp2 reduce_exp2(float x) {
  const float j = rintf(x * 1.44269504088896341f);
  const float t = fmaf(x, 1.925963033500011079e-8f, fmaf(x, 1.44269502162933349609f, -j));
  return {j, t};
}

/// m 2^j for integral j in [-220, 0] (NaN j gives m): two normal factors, so a subnormal
/// result rounds once.
CUACT_HOST_DEVICE float scale_by_exp2(float m, float j) {
  const float j_high = truncf(j * 0.5f);
  return m * exp2_integral(j_high) * exp2_integral(j - j_high);
}

/// exp(x) for x <= 0 (NaN in, NaN out), within 2 ulp in float, subnormal results included:
/// about 10 instructions (`ex2.approx` after an accurate reduction). The degree-7 polynomial of
/// reduce_exp, which expm1 needs, costs twice that, which brings fp32 sigmoid near the whole
/// instruction budget of a device whose budget is tight.
CUACT_HOST_DEVICE float exp_nonpositive(float x) {
  // exp(x) is below half the smallest subnormal for x < -104: the clamp keeps 2^j's halves normal
  const reduced_exp2 e = reduce_exp2(x < -110.0f ? -110.0f : x);
  return scale_by_exp2(exp2_approx_ftz(e.t), e.j);
}

/// m * exp(v) for v <= 0 (NaN in, NaN out), |m| below 2^60, subnormal results included: m 2^t
/// is scaled by 2^j in two normal steps, so a subnormal product rounds once. Where m * exp(v) is
/// subnormal, exp(v) alone would be subnormal too, with fewer significant bits than the product
/// needs (silu(-100) = -100 e^-100 from a rounded e^-100 is 50 ulp off).
CUACT_HOST_DEVICE float mul_exp_nonpositive(float m, float v) {
  // below -110, |m| e^v < 2^-150 for the |m| < 2^8 the activations pass: m * 0 (NaN for an
  // infinite m, as PyTorch's inf * 0)
  const reduced_exp2 e = reduce_exp2(v < -110.0f ? -110.0f : v);
  const float result = scale_by_exp2(m * exp2_approx_ftz(e.t), e.j);
  return v < -110.0f ? m * 0.0f : result;
}
/// double: m exp(v) while exp(v) is normal, else exp(v / 2)^2, both factors normal down to
/// v = -1416.
CUACT_HOST_DEVICE double mul_exp_nonpositive(double m, double v) {
  if (v >= -700.0 || v != v) return m * ::exp(v);
  const double half = ::exp(0.5 * v);
  return (m * half) * half;
}

/// expm1(x) for double x <= 0 (NaN in, NaN out), within 1 ulp: the float version's scheme in
/// double. x = k ln2 + r, |r| <= ln2/2 (k from the round-to-integer constant 1.5 2^52, whose sum's
/// low bits hold k, so 2^k is built from them by integer operations), expm1(r) by a degree-13
/// Taylor polynomial (truncation below 0.1 ulp), and 2^k expm1(r) + (2^k - 1) in one fma.
///
/// Why not `::expm1`: libdevice's branchy form makes the fp64 forwards through it compute-bound
/// on devices whose FP64 pipe leaves few double operations per element at the copy ceiling; this
/// branch-free form keeps celu, selu and elu at the ceiling there.
CUACT_HOST_DEVICE double expm1_nonpositive(double x) {
  // expm1(x) rounds to -1 for x < -37.5; the clamp keeps 2^k normal (k >= -58). The comparison
  // is false for NaN, so NaN flows through (into r, and from it into the result).
  const double xc = x < -40.0 ? -40.0 : x;
  constexpr double round_to_integer = 0x1.8p52;
  const double shifted = ::fma(xc, 1.4426950408889634074, round_to_integer);
  const double k = shifted - round_to_integer;
  // ln2 in two parts, the high one with 32 significant bits, so k * ln2_high and r are exact
  double r = ::fma(k, -0x1.62e42feep-1, xc);
  r = ::fma(k, -0x1.a39ef35793c76p-33, r);
  double q = 1.0 / 6227020800;  // 1 / 13!
  q = ::fma(q, r, 1.0 / 479001600);
  q = ::fma(q, r, 1.0 / 39916800);
  q = ::fma(q, r, 1.0 / 3628800);
  q = ::fma(q, r, 1.0 / 362880);
  q = ::fma(q, r, 1.0 / 40320);
  q = ::fma(q, r, 1.0 / 5040);
  q = ::fma(q, r, 1.0 / 720);
  q = ::fma(q, r, 1.0 / 120);
  q = ::fma(q, r, 1.0 / 24);
  q = ::fma(q, r, 1.0 / 6);
  q = ::fma(q, r, 0.5);
  const double p = ::fma(r * r, q, r);
  // k in [-58, 0] is the low 32 bits of `shifted`, two's complement
  const auto k_bits =
      static_cast<cuda::std::int32_t>(cuda::std::bit_cast<cuda::std::uint64_t>(shifted));
  const double two_k =
      cuda::std::bit_cast<double>(static_cast<cuda::std::uint64_t>(k_bits + 1023) << 52);
  const double result = ::fma(two_k, p, two_k - 1.0);
  return x == 0.0 ? x : result;  // expm1(-0) = -0, which the fma would turn into +0
}
CUACT_HOST_DEVICE double exp_nonpositive(double x) { return ::exp(x); }

/// True when results of this accuracy tag are rounded to 16 bits or fewer.
template <class R>
inline constexpr bool rounds_to_16_bits_v = R::storage_bits <= 16;

/// 2^64 exp(x) for x <= 20 (16-bit results): one fma and `ex2.approx.ftz`, normal down to
/// x = -131, below which every 16-bit result that scales it is 0 (and at most 2^93 above). The fma's rounding error (x log2 e
/// + 64 is below 88 in magnitude where a result can be nonzero) stays below 2^-17 relative, so the
/// rounded 16-bit result is within 1 ulp of the correctly rounded one. Scaled by 2^-64 last, a
/// subnormal value keeps the bits a bf16 result needs (down to 2^-133) without the non-ftz
/// `ex2.approx`'s range fix-up (three more instructions per exp; 16-bit math is instruction-bound
/// where the budget is tight).
CUACT_HOST_DEVICE float exp_raised(float x) {
  return exp2_approx_ftz(fmaf(x, 1.44269504088896341f, 64.0f));
}

/// exp(x) for x <= 0 at accuracy R. For 16-bit results: exp_raised(x) 2^-64.
template <class R, class C>
CUACT_HOST_DEVICE C exp_nonpositive(C x, R) {
  if constexpr (rounds_to_16_bits_v<R> && sizeof(C) == 4) {
    return exp_raised(x) * 0x1p-64f;
  } else {
    return exp_nonpositive(x);
  }
}

/// m * exp(v) for v <= 0 at accuracy R, |m| <= 2^64. 16-bit results: (m 2^64 exp(v)) 2^-64, so a
/// subnormal product rounds once.
template <class R, class C>
CUACT_HOST_DEVICE C mul_exp_nonpositive(C m, C v, R) {
  if constexpr (rounds_to_16_bits_v<R> && sizeof(C) == 4) {
    return (m * exp_raised(v)) * 0x1p-64f;
  } else {
    return mul_exp_nonpositive(m, v);
  }
}

/// exp(v) for v <= 0 at accuracy R, kept so that a product m exp(v) (mul_exp_nonpositive: a
/// subnormal product rounds once) reuses it: for 16-bit results exp_raised(v), one `ex2.approx`
/// for both, each value bit for bit what exp_nonpositive and mul_exp_nonpositive give. The
/// compiler had kept both exponentials (two per element in silu's 16-bit derivative), which
/// slows the latency-bound bf16 bias + silu backward. Float and double keep exp(v) and v
/// and take mul_exp_nonpositive for a product (float's forms reduce once by exp_minus_scaled).
template <class R, class C>
struct nonpositive_exp {
  static constexpr bool raised = rounds_to_16_bits_v<R> && sizeof(C) == 4;
  C v;     ///< the exponent
  C kept;  ///< 16-bit results: 2^64 exp(v); else exp(v)

  /// exp(v).
  CUACT_HOST_DEVICE C value() const {
    if constexpr (raised) {
      return kept * 0x1p-64f;
    } else {
      return kept;
    }
  }
  /// m exp(v), |m| <= 2^60, a subnormal product rounded once.
  CUACT_HOST_DEVICE C times(C m) const {
    if constexpr (raised) {
      return (m * kept) * 0x1p-64f;
    } else {
      return mul_exp_nonpositive(m, v);
    }
  }
};
template <class R, class C>
CUACT_HOST_DEVICE nonpositive_exp<R, C> exp_nonpositive_kept(C v, R r) {
  if constexpr (nonpositive_exp<R, C>::raised) {
    return {v, exp_raised(v)};
  } else {
    return {v, exp_nonpositive(v, r)};
  }
}

/// expm1(x) for x <= 0 at accuracy R. For 16-bit results: a degree-4 Taylor polynomial near 0
/// (relative error below 2^-14 for |x| < 1/4), where exp(x) - 1 would cancel, and exp(x) - 1
/// elsewhere (|expm1| > 0.22 there, so exp's error stays below 2^-14 relative).
template <class R, class C>
CUACT_HOST_DEVICE C expm1_nonpositive(C x, R) {
  if constexpr (rounds_to_16_bits_v<R> && sizeof(C) == 4) {
    const float near_zero = x * fmaf(x, fmaf(x, fmaf(x, 1.0f / 24, 1.0f / 6), 0.5f), 1.0f);
    return x > -0.25f ? near_zero : exp2_approx_ftz(x * 1.44269504088896341f) - 1.0f;
  } else {
    return expm1_nonpositive(x);
  }
}

// ---- more hardware approximations (device; the host, which only runs the CPU tests, uses libm) --

/// 1/x by `rcp.approx.f32` (relative error below 2^-23; not .ftz, so subnormal results are kept,
/// which 1 / (1 + |x|) needs for bf16's largest values).
CUACT_HOST_DEVICE float rcp_approx(float x) {
#if defined(__CUDA_ARCH__)
  float result;
  asm("rcp.approx.f32 %0, %1;" : "=f"(result) : "f"(x));
  return result;
#else
  return 1.0f / x;
#endif
}

/// 1/x by `rcp.approx.ftz.f32`, for x in [1, 2^126] (7 instructions fewer than rcp_approx, whose
/// subnormal handling such x never needs; same relative error).
CUACT_HOST_DEVICE float rcp_approx_ftz(float x) {
#if defined(__CUDA_ARCH__)
  float result;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(result) : "f"(x));
  return result;
#else
  const float result = 1.0f / x;
  return fabsf(result) < 0x1p-126f ? 0.0f * result : result;  // the flush (CPU tests see it)
#endif
}

/// log2(x) by `lg2.approx.f32` (absolute error below 2^-22.6); x is in [1, 2] where cuact uses it.
CUACT_HOST_DEVICE float log2_approx(float x) {
#if defined(__CUDA_ARCH__)
  float result;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(result) : "f"(x));
  return result;
#else
  return log2f(x);
#endif
}

/// tanh(x) by `tanh.approx.f32` (sm_75+; relative error about 2^-11: enough for bf16, not for
/// fp16, see tanh_ below).
CUACT_HOST_DEVICE float tanh_approx(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  float result;
  asm("tanh.approx.f32 %0, %1;" : "=f"(result) : "f"(x));
  return result;
#else
  return tanhf(x);
#endif
}

// ---- accuracy tags beyond the width ---------------------------------------------------------

/// The storage type of an accuracy tag (cuact::rounded_to<Storage>).
template <class R>
struct tag_storage;
template <template <class> class Tag, class Storage>
struct tag_storage<Tag<Storage>> {
  using type = Storage;
};

/// True when results of this tag keep 8 significant bits or fewer (bf16, fp8): coarse enough for
/// `tanh.approx`.
template <class R>
inline constexpr bool rounds_to_8_significant_bits_v =
    R::storage_bits <= 8 || cuda::std::is_same_v<typename tag_storage<R>::type, __nv_bfloat16>;

// ---- small pieces shared by the accurate paths ------------------------------------------------

CUACT_HOST_DEVICE float fused(float a, float b, float c) { return fmaf(a, b, c); }
CUACT_HOST_DEVICE double fused(double a, double b, double c) { return ::fma(a, b, c); }

/// a * b and a + b rounded on their own: nvcc contracts a * b + c into an fma by default, which
/// breaks the error-free transformations of double-double and float-float arithmetic (two-sum
/// needs the rounded sum of the rounded product); the _rn intrinsics are never contracted.
CUACT_HOST_DEVICE double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
CUACT_HOST_DEVICE float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
CUACT_HOST_DEVICE double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

/// A value as an unevaluated sum hi + lo, |lo| <= ulp(hi) / 2.
template <class C>
struct split {
  C hi;
  C lo;
};

/// x * a as hi + lo, for exp(x * a) where a is a parameter that C cannot hold exactly: exp
/// amplifies the product's rounding error by |x * a| (100 ulp at x * a = -100), lo takes it back.
/// float: a as the float pair a_hi + a_lo (2^-48 relative; the double work on the parameter is
/// the same for every element, so the compiler hoists it), hi = x a_hi rounded (PyTorch's float
/// product for a float-representable a), lo = its fma residual + x a_lo; double: the fma residual
/// (exact). lo is 0 where hi is not finite.
CUACT_HOST_DEVICE split<float> times(float x, double a) {
  const float a_hi = static_cast<float>(a);
  const float a_lo = static_cast<float>(a - static_cast<double>(a_hi));
  const float hi = x * a_hi;
  const float lo = fmaf(x, a_lo, fmaf(x, a_hi, -hi));
  return {hi, fabsf(hi) <= 3.40282347e38f ? lo : 0.0f};
}
CUACT_HOST_DEVICE split<double> times(double x, double a) {
  const double hi = mul_rn(x, a);
  const double lo = ::fma(x, a, -hi);
  return {hi, ::fabs(hi) <= 1.7976931348623157e308 ? lo : 0.0};
}

/// x / a as hi + lo (see times): float as x times the float pair of 1 / a (hi is then not always
/// the correctly rounded quotient; hi + lo is within 2^-47 relative), double by the fma residual.
CUACT_HOST_DEVICE split<float> over(float x, double a) { return times(x, 1.0 / a); }
CUACT_HOST_DEVICE split<double> over(double x, double a) {
  const double hi = x / a;
  const double lo = ::fma(-hi, a, x) / a;
  return {hi, ::fabs(hi) <= 1.7976931348623157e308 ? lo : 0.0};
}

/// 1.5 * 2^23: for |v| < 2^22, v + round_magic rounds v to an integer held in the low mantissa
/// bits (the float reductions below take j that way: no rintf, float-int conversions or NaN checks).
inline constexpr float round_magic = 0x1.8p23f;

/// 2^(j + 64) from jm = j + round_magic, j integral in [-190, 63]: the integer's bits shifted into
/// the exponent field (round_magic's own bits shift out). The +64 keeps 2^(j + 64) normal where 2^j
/// would be subnormal; callers scale by 2^-64 last, so a subnormal result rounds once.
CUACT_HOST_DEVICE float exp2_plus_64_of_rounded(float jm) {
  return cuda::std::bit_cast<float>((cuda::std::bit_cast<unsigned>(jm) << 23) +
                                    ((127u + 64u) << 23));
}

/// m exp(-a^2 / 2) times `last`, a power of two at most 2^-64 (2^-64: m exp(-a^2 / 2) itself), for
/// a in [0, 14.8] (callers clamp; not NaN) and |m| below 2^60, rounded once, subnormal results
/// included: a^2 = aa + aa_lo exactly (the fma residual), -a^2 log2(e) / 2 = j + t with log2(e) / 2
/// as a float pair and aa_lo folded into t (|t| <= 1/2, within 2^-25 absolute), so the exp needs
/// no correction factor of its own (gelu's forward had exp(-lo) = 1 - lo as a factor of its
/// erfcx: 3 instructions more). 2^(j + 64) by the bits of the rounding constant (j >= -158).
CUACT_HOST_DEVICE float mul_exp_minus_half_square(float m, float a, float last = 0x1p-64f) {
  constexpr float c_hi = 0x1.715476p-1f, c_lo = 0x1.4ae0cp-27f;  // log2(e) / 2
  const float aa = a * a;
  const float aa_lo = fmaf(a, a, -aa);
  const float jm = fmaf(aa, -c_hi, round_magic);
  const float j = jm - round_magic;  // exact, in [-158, 0]
  // the two small terms, aa c_lo + aa_lo c_hi = c_hi (aa c_lo / c_hi + aa_lo), summed first: t
  // rounds twice, within 2^-25
  const float small = fmaf(aa, c_lo / c_hi, aa_lo);
  const float t = fmaf(small, -c_hi, fmaf(aa, -c_hi, -j));
  return (m * exp2_approx_ftz(t) * exp2_plus_64_of_rounded(jm)) * last;
}

/// c x^n + next x^(n-1) + ... by Horner's rule in fmas, the coefficients from the highest degree
/// down, as the fitted tables are written.
CUACT_HOST_DEVICE float horner(float, float c) { return c; }
template <class... Rest>
CUACT_HOST_DEVICE float horner(float x, float c, float next, Rest... rest) {
  return horner(x, fmaf(c, x, next), rest...);
}

/// erfcx(a) = exp(a^2) erfc(a) for a in [0, 10.6] (larger a is not in range: callers clamp), in
/// float: the Shepherd-Laframboise form (Math. Comp. 36, 1981) (1 + 2a) erfcx(a) = 1 + p(q),
/// q = (a - 2) / (a + 2) in [-1, 0.6825], with p a degree-10 polynomial (Chebyshev interpolant,
/// relative error below 2^-25.5 with its float coefficients). Both quotients have their residual
/// taken back (`rcp.approx` suffices: its 2^-22 error comes back squared), the first as the Newton
/// residual of 1 / (a + 2), with q = 1 - 4 / (a + 2) (one instruction fewer than the residual of
/// the quotient (a - 2) / (a + 2)): erfcx = hi + lo, the unevaluated sum within about 1 ulp
/// (callers fold lo into their next product). (16-bit results need less: gelu's
/// lower_tail_16_of.)
CUACT_HOST_DEVICE split<float> erfcx_bounded(float a) {
  const float r = rcp_approx_ftz(a + 2.0f);  // a + 2 and 1 + 2a are >= 1: no subnormals
  // r + r_lo = 1 / (a + 2): the Newton residual 1 - r (a + 2), exact but for the rounding of
  // 1 - 2r (none for a <= 2, below 2^-25 above); q = 1 - 4 (r + r_lo), 1 - 4r exact for a <= 6
  const float r_lo = r * fmaf(-r, a, fmaf(-2.0f, r, 1.0f));
  const float q = fmaf(-4.0f, r_lo, fmaf(-4.0f, r, 1.0f));
  const float p = horner(q, 0x1.d7a11cp-16f, -0x1.79384cp-12f, -0x1.479a90p-10f, 0x1.4d408ep-10f,
                         0x1.1af2e2p-7f, -0x1.079df8p-7f, -0x1.bc0a92p-5f, 0x1.4ffb36p-3f,
                         -0x1.54084ap-3f, -0x1.7bf602p-4f, 0x1.1ba03ap-2f);
  // (1 + p) / (1 + 2a), the residual against the exact divisor 1 + 2a
  const float d = rcp_approx_ftz(fmaf(2.0f, a, 1.0f));
  const float y = fmaf(p, d, d);
  const float residual = (p - y) + fmaf(y + y, -a, 1.0f);
  return {y, residual * d};
}

/// exp(hi + lo) for hi <= 0 at accuracy R, lo a correction far below 1: exp(hi) (1 + lo).
template <class R, class C>
CUACT_HOST_DEVICE C exp_nonpositive_sum(split<C> v, R r) {
  const C e = exp_nonpositive(v.hi, r);
  if constexpr (rounds_to_16_bits_v<R> && sizeof(C) == 4) {
    return e;  // lo is 0 on the 16-bit paths
  } else {
    return fused(e, v.lo, e);
  }
}

/// 1 / x at accuracy R: `rcp.approx` for 16-bit results, a correctly rounded division otherwise.
template <class R, class C>
CUACT_HOST_DEVICE C reciprocal(C x, R) {
  if constexpr (rounds_to_16_bits_v<R> && sizeof(C) == 4) {
    return rcp_approx(x);
  } else {
    return C(1) / x;
  }
}

/// 1 / d for d in [1, 2^126] in float: `rcp.approx.ftz` and one Newton step, within about one ulp
/// (the IEEE division's range checks and slow path cost 60 instructions).
CUACT_HOST_DEVICE float reciprocal_normal(float d) {
  const float r = rcp_approx_ftz(d);
  return fmaf(r, fmaf(-d, r, 1.0f), r);
}

/// 1 / x for x in [1, 2^126] or NaN at accuracy R: `rcp.approx.ftz` for 16-bit results (no
/// subnormal can arise, so rcp_approx's 7 instructions of subnormal handling are dead weight;
/// the same approximation otherwise), reciprocal_normal for float, a division for double.
template <class R, class C>
CUACT_HOST_DEVICE C reciprocal_at_least_one(C x, R r) {
  if constexpr (rounds_to_16_bits_v<R> && sizeof(C) == 4) {
    return rcp_approx_ftz(x);
  } else if constexpr (sizeof(C) == 4) {
    return reciprocal_normal(x);
  } else {
    return reciprocal(x, r);
  }
}

/// 1 / (1 + e) for e in [0, 1] (NaN in, NaN out) at accuracy R. Float and double: the rounding
/// of 1 + e (exact as d + lo, Fast2Sum) is taken back to first order, so only the division rounds:
/// the logistic functions square and multiply this, and every half ulp shows.
template <class R, class C>
CUACT_HOST_DEVICE C reciprocal_one_plus(C e, R r) {
  const C d = C(1) + e;
  if constexpr (rounds_to_16_bits_v<R> && sizeof(C) == 4) {
    return reciprocal_at_least_one(d, r);
  } else if constexpr (sizeof(C) == 4) {
    // d in [1, 2]: `rcp.approx.ftz` and one Newton step on the residual 1 - (d + lo) r, which
    // takes lo back in the same step, give 1 / (1 + e) within about half an ulp, without the
    // range checks and slow path of the IEEE division
    const float lo = e - (d - 1.0f);
    const float r = rcp_approx_ftz(d);
    return fmaf(r, fmaf(-lo, r, fmaf(-d, r, 1.0f)), r);
  } else {
    const C lo = e - (d - C(1));
    const C q = C(1) / d;
    return fused(-q * lo, q, q);
  }
}

/// log1p(z) for z in [0, 1] (NaN in, NaN out) at accuracy R. For 16-bit results: a degree-4
/// Taylor polynomial below 1/16 (relative error below 2^-18), where log2(1 + z) would lose z's low
/// bits to the rounding of 1 + z, and `lg2.approx` of 1 + z above (log1p(z) >= 0.06 there, so
/// its 2^-22.6 absolute error is below 2^-18 relative). Float: log1pf (1 ulp); double: log1p.
template <class R, class C>
CUACT_HOST_DEVICE C log1p_unit(C z, R) {
  if constexpr (rounds_to_16_bits_v<R> && sizeof(C) == 4) {
    const float near_zero = z * fmaf(z, fmaf(z, fmaf(z, -0.25f, 1.0f / 3), -0.5f), 1.0f);
    return z < 0.0625f ? near_zero : log2_approx(1.0f + z) * 0.693147180559945309f;
  } else if constexpr (sizeof(C) == 4) {
    return log1pf(z);
  } else {
    return ::log1p(z);
  }
}

/// True for the accurate float paths (C = float, results rounded to float), which take the
/// fp32-specific formulations below.
template <class R, class C>
inline constexpr bool accurate_float_v = sizeof(C) == 4 && !rounds_to_16_bits_v<R>;

/// The rate k of exp(-a k) for exp_minus_scaled: k log2(e) as a float pair (2^-48 relative). The
/// double work on a parameter is the same for every element, so the compiler hoists it.
struct exp_rate {
  float hi;  ///< k log2(e) rounded to float
  float lo;  ///< k log2(e) - hi
};
/// exp(-a): k = 1.
inline constexpr exp_rate unit_exp_rate{1.44269504088896341f, 1.925963033500011079e-8f};
/// The exp_rate of |k|, k finite. The sign is taken off the float pair, not the double: with
/// fabs of the double parameter nvcc 13.0 kept softplus's conversions in its loop (six F2F per
/// 8 elements, 39 registers instead of 32).
CUACT_HOST_DEVICE exp_rate exp_rate_of(double k) {
  const double rate = k * 1.44269504088896340736;
  const float hi = static_cast<float>(rate);
  const float lo = static_cast<float>(rate - static_cast<double>(hi));
  return hi < 0.0f ? exp_rate{-hi, -lo} : exp_rate{hi, lo};
}

/// exp(-a k) for a >= 0 (+inf and NaN included), reduced once and kept scaled for the float
/// logistic family (k = 1) and softplus (k = |beta|, so that a beta is never rounded before the
/// exp, which amplifies the rounding by a beta): es = exp(-a k) 2^64 (normal for a k <= 120,
/// decaying to +0 beyond, where every m exp(-a k) the activations form rounds to 0), e = es 2^-64
/// (a subnormal e may lose bits: 1 + e cannot show them). m exp(-a k) is (m es) 2^-64: m es stays
/// normal for |m| in [2^-16, 2^60], so a subnormal result rounds once (exp(-a) alone would round
/// first: silu(-100) 50 ulp off).
/// About 9 instructions: 2^j by the bits of the rounding constant (no float-int conversions and
/// NaN checks), j = -round(a k log2 e) clamped at -173 (2^(j + 64) stays normal; a clamp of j, not
/// of a, needs no division by k), t = -a k log2 e - j from a itself, so a k beyond 120 gives
/// t < 0 and NaN gives NaN, and +inf gives t = -inf, es = +0 (then an infinite m gives NaN:
/// silu(-inf) = -inf * 0, as PyTorch). `ex2.approx.ftz` of |t| <= 1/2 is CUDA's own expf after
/// the same reduction (within 2 ulp).
struct scaled_exp {
  float e;   ///< exp(-a k), flushed or rounded below 2^-126
  float es;  ///< exp(-a k) 2^64
};
CUACT_HOST_DEVICE scaled_exp exp_minus_scaled(float a, exp_rate k = unit_exp_rate) {
  // a k log2(e) beyond 2^22 (+inf, NaN) gives a jm below the clamp, or NaN, which fmaxf replaces
  const float jm = fmaxf(fmaf(a, -k.hi, round_magic), round_magic - 173.0f);
  const float j = jm - round_magic;  // exact, in [-173, 0]
  // t within 2^-25 absolute of -a k log2(e) - j (two roundings of |t| <= 1/2)
  const float t = fmaf(a, -k.lo, fmaf(a, -k.hi, -j));
  const float es = exp2_approx_ftz(t) * exp2_plus_64_of_rounded(jm);
  return {es * 0x1p-64f, es};
}

/// log1p(e) 2^64 for e in [0, 1] from es = e 2^64 (exp_minus_scaled's pair; NaN in, NaN out),
/// branch-free in about 11 instructions (log1pf: ~33): log1p(e) = e + e^2 r(e), r a degree-8
/// polynomial fitted to the relative error of log1p on [0, 1] (below 2^-27.5 with its float
/// coefficients), rounded once as es + es (e r); within 1.3 ulp (exhaustive on [2^-30, 1]) before
/// the scaling by 2^-64, which rounds only a subnormal log1p(e).
CUACT_HOST_DEVICE float log1p_unit_scaled(float e, float es) {
  float r = -0x1.af49cep-9f;
  r = fmaf(r, e, 0x1.4917cep-6f);
  r = fmaf(r, e, -0x1.d6b08cp-5f);
  r = fmaf(r, e, 0x1.b4ae08p-4f);
  r = fmaf(r, e, -0x1.3a435ep-3f);
  r = fmaf(r, e, 0x1.934b54p-3f);
  r = fmaf(r, e, -0x1.ff23e6p-3f);
  r = fmaf(r, e, 0x1.554ddp-2f);
  r = fmaf(r, e, -0x1.ffffd2p-2f);
  return fmaf(es, e * r, es);
}

/// m exp(-a) from exp_minus_scaled's es, rounded once (subnormal results included).
CUACT_HOST_DEVICE float times_scaled_exp(float m, float es) { return (m * es) * 0x1p-64f; }

/// The logistic function from e = exp(-|x|) <= 1, overflow-safe: sigma(x) = 1 / (1 + e) for
/// x >= 0 and e / (1 + e) below, and its complement 1 - sigma(x) = sigma(-x) the other way
/// round, so neither is computed by a subtraction that cancels. NaN gives NaN in both.
template <class C>
struct logistic_pair {
  C s;  ///< sigma(x)
  C c;  ///< 1 - sigma(x)
};
template <class R, class C>
CUACT_HOST_DEVICE logistic_pair<C> logistic(C x, C e, R r) {
  const C q = reciprocal_one_plus(e, r);
  const C p = e * q;
  return x >= C(0) ? logistic_pair<C>{q, p} : logistic_pair<C>{p, q};
}

/// tanh(x) at accuracy R. bf16/fp8 results: `tanh.approx` (one MUFU op; 2^-11 relative is an
/// eighth of a bf16 ulp). fp16 results: 2^-11 would be a whole fp16 ulp, so -m / (m + 2) with
/// m = expm1(-2|x|), which cancels nowhere. Float: tanhf (2 ulp); double: tanh.
template <class R, class C>
CUACT_HOST_DEVICE C tanh_(C x, R r) {
  if constexpr (rounds_to_8_significant_bits_v<R> && sizeof(C) == 4) {
    return tanh_approx(x);
  } else if constexpr (rounds_to_16_bits_v<R> && sizeof(C) == 4) {
    const float m = expm1_nonpositive(-2.0f * fabsf(x), r);
    return copysignf(-m * reciprocal_at_least_one(m + 2.0f, r), x);  // m + 2 in [1, 2]
  } else if constexpr (sizeof(C) == 4) {
    return tanhf(x);
  } else {
    return ::tanh(x);
  }
}

}  // namespace detail
}  // namespace cuact
