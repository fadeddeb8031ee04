// Shared by cuact's CPU and GPU tests: float64 references, exact-type comparisons, input
// generation with special values, and poisoning. Host code only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <cuact/activations.cuh>

namespace cuact_test {

// ---- bit-level views ------------------------------------------------------------------------
template <class T>
using bits_t = std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;

template <class T>
bits_t<T> bits_of(T v) {
  bits_t<T> b;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
T from_bits(bits_t<T> b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

template <class T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, __half>) return static_cast<double>(__half2float(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return static_cast<double>(__bfloat162float(v));
  else return static_cast<double>(v);
}

template <class T>
constexpr int mantissa_bits() {  // explicit fraction bits
  if constexpr (std::is_same_v<T, __half>) return 10;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return 7;
  else if constexpr (std::is_same_v<T, float>) return 23;
  else return 52;
}
template <class T>
constexpr int exponent_bits() {
  return 8 * static_cast<int>(sizeof(T)) - 1 - mantissa_bits<T>();
}

/// Correctly rounded (to nearest even) conversion of a double to T, done on the bits so it does
/// not depend on the conversion routines under test.
template <class T>
T round_to(double v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(v);  // IEEE double -> float on the host rounds to nearest even
  } else {
    constexpr int m = mantissa_bits<T>(), e = exponent_bits<T>();
    constexpr int bias = (1 << (e - 1)) - 1;
    using B = bits_t<T>;
    const B sign = std::signbit(v) ? B(1u << 15) : B(0);
    if (std::isnan(v)) return from_bits<T>(B(((1u << e) - 1) << m) | B(1u << (m - 1)));
    const double a = std::fabs(v);
    const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -m), bias);
    // beyond max_finite + half an ulp rounds to infinity
    if (a >= max_finite + std::ldexp(1.0, bias - m - 1)) return from_bits<T>(B(sign | (((1u << e) - 1) << m)));
    const int min_exp = 1 - bias;
    int exp = a == 0 ? min_exp : std::max(std::ilogb(a), min_exp);
    const double quantum = std::ldexp(1.0, exp - m);
    const double q = std::nearbyint(a / quantum);  // default rounding mode: nearest even
    double r = q * quantum;
    // encode r
    if (r == 0) return from_bits<T>(sign);
    int re = std::ilogb(r);
    if (re < min_exp) {  // subnormal
      return from_bits<T>(B(sign | static_cast<B>(std::lround(r / std::ldexp(1.0, min_exp - m)))));
    }
    const B frac = static_cast<B>(std::lround((r / std::ldexp(1.0, re) - 1.0) * (1 << m)));
    return from_bits<T>(B(sign | B((re + bias) << m) | frac));
  }
}

template <class T>
bool is_nan(T v) {
  return std::isnan(to_double(v));
}

/// Distance in units in the last place of T between a and b (both not NaN); +0 and -0 are 0 apart.
template <class T>
std::int64_t ulp_distance(T a, T b) {
  const auto key = [](T v) {
    const auto b = bits_of(v);
    const auto sign_bit = bits_t<T>(1) << (8 * sizeof(T) - 1);
    const std::int64_t mag = static_cast<std::int64_t>(b & ~sign_bit);
    return (b & sign_bit) ? -mag : mag;
  };
  const std::int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

/// `actual` matches the double `reference` within `max_ulp` of its correctly rounded value:
/// NaN matches NaN only, infinities and zeros must match exactly (sign of zero included).
/// `abs_tolerance` admits results that differ only by intermediate underflow in the compute type
/// (dy * exp(x) for x near -104: exp(x) is 0 in float, the float64 product is a denormal).
template <class T>
bool matches(T actual, double reference, int max_ulp, double abs_tolerance = 0) {
  if (std::isnan(reference)) return is_nan(actual);
  if (is_nan(actual)) return false;
  const T expected = round_to<T>(reference);
  const double e = to_double(expected);
  if (std::isinf(e) || (e == 0 && max_ulp == 0)) return bits_of(actual) == bits_of(expected);
  if (abs_tolerance > 0 && std::isfinite(reference) &&
      std::fabs(to_double(actual) - reference) <= abs_tolerance) {
    return true;
  }
  return ulp_distance(actual, expected) <= max_ulp;
}

// ---- float64 references (PyTorch semantics) ---------------------------------------------------
inline double relu_ref(double x) { return std::isnan(x) ? x : (x > 0 ? x : 0.0); }
inline double selu_ref(double x) {
  constexpr double a = cuact::selu::alpha, s = cuact::selu::scale;
  return x > 0 ? s * x : s * a * std::expm1(x);  // NaN: x > 0 is false, expm1(NaN) is NaN
}
inline double relu_grad_ref(double x, double dy) { return x > 0 ? dy : 0.0; }
/// C: the compute type. exp(x) below half of C's smallest denormal is 0 in C, and then an
/// infinite dy gives NaN (inf * 0), as in PyTorch's float kernels; float64 alone would say inf.
template <class C = double>
double selu_grad_ref(double x, double dy) {
  constexpr double a = cuact::selu::alpha, s = cuact::selu::scale;
  double e = std::exp(x);
  if (static_cast<C>(e) == C(0)) e = 0;
  return x <= 0 ? dy * (s * a * e) : dy * s;
}

inline double selu_grad_from_output_ref(double y, double dy) {
  // y + scale * alpha cancels near y = -scale * alpha: add the two-double constant in long
  // double, where y + high is exact
  const long double sum = (static_cast<long double>(y) + cuact::selu::scale_alpha_hi) +
                          static_cast<long double>(cuact::selu::scale_alpha_lo);
  return y <= 0 ? dy * static_cast<double>(sum) : dy * cuact::selu::scale;
}

/// Absolute slack for a backward product dy * act'(x) whose derivative underflows in compute type C.
template <class C>
double underflow_slack(double dy) {
  return std::fabs(dy) * 2 * static_cast<double>(std::numeric_limits<C>::denorm_min());
}

/// Tolerances, in ulp of the stored type, against the correctly rounded float64 reference.
template <class T>
int selu_max_ulp() {
  return sizeof(T) == 2 ? 1 : 4;
}

// ---- inputs -----------------------------------------------------------------------------------
/// Special values of T: NaN, +-inf, +-0, denormals, extremes, large negatives, values near 0.
template <class T>
std::vector<double> special_values() {
  constexpr int m = mantissa_bits<T>(), e = exponent_bits<T>();
  constexpr int bias = (1 << (e - 1)) - 1;
  const double min_denormal = std::ldexp(1.0, 1 - bias - m);
  const double max_denormal = std::ldexp(1.0, 1 - bias) - min_denormal;
  const double min_normal = std::ldexp(1.0, 1 - bias);
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -m), bias);
  return {std::numeric_limits<double>::quiet_NaN(),
          std::numeric_limits<double>::infinity(),
          -std::numeric_limits<double>::infinity(),
          0.0, -0.0,
          min_denormal, -min_denormal, max_denormal, -max_denormal, 3 * min_denormal, -3 * min_denormal,
          min_normal, -min_normal,
          max_finite, -max_finite,
          -1e-3, 1e-3, -1e-6, -0.5, 0.5, -1.0, 1.0, -2.0, -0.34657359, -0.69314718, -17.0, -20.0, -30.0,
          -88.0, -100.0, -104.0, -1000.0, -65504.0, 65504.0};
}

/// Fresh random values of T: mostly uniform in [-8, 8], some log-uniform magnitudes of either sign,
/// and about 3% special values, so every branch of every activation is hit.
template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937_64& rng) {
  const auto specials = special_values<T>();
  std::uniform_real_distribution<double> uniform(-8.0, 8.0), log_mag(-40.0, 12.0), unit(0.0, 1.0);
  std::uniform_int_distribution<std::size_t> pick(0, specials.size() - 1);
  std::vector<T> out(n);
  for (auto& v : out) {
    const double u = unit(rng);
    double x;
    if (u < 0.03) x = specials[pick(rng)];
    else if (u < 0.13) x = (unit(rng) < 0.5 ? -1 : 1) * std::exp2(log_mag(rng));
    else x = uniform(rng);
    v = round_to<T>(x);
  }
  return out;
}

/// A value that `expected` can never be at this index: a NaN where the expected value is a number,
/// a number where it is NaN. Written before a run, it shows any element the run did not write.
template <class T>
T poison_for(T expected) {
  return is_nan(expected) ? round_to<T>(-77.0) : from_bits<T>(bits_of(round_to<T>(std::nan(""))) | 0x5);
}

template <class T>
std::string type_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, __half>) return "half";
  else return "bfloat16";
}

}  // namespace cuact_test
