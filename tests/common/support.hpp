// The helpers every cuact test shares, host and device: element types as bits, one to_double, one
// hash for input values (with NaN, +-inf, +-0, denormals, extremes and negatives), poison values,
// the one result matcher, and the dtype list of the typed tests. Include from .cu files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

namespace cuact_test {

/// Catch2 typed tests run over these storage types.
#define CUACT_TEST_DTYPES float, double, __half, __nv_bfloat16

// ---- element types as bits ------------------------------------------------------------------

template <class T>
using bits_t = std::conditional_t<
    sizeof(T) == 1, std::uint8_t,
    std::conditional_t<sizeof(T) == 2, std::uint16_t,
                       std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;

/// Explicit fraction bits (m) and exponent bits (e) of a floating-point storage type.
template <class T>
struct format_of {
  static constexpr int m = std::is_same_v<T, __half>          ? 10
                           : std::is_same_v<T, __nv_bfloat16> ? 7
                           : std::is_same_v<T, float>         ? 23
                           : std::is_same_v<T, double>        ? 52
                           : std::is_same_v<T, __nv_fp8_e4m3> ? 3
                                                              : 2;  // __nv_fp8_e5m2
  static constexpr int e = 8 * static_cast<int>(sizeof(T)) - 1 - m;
  static constexpr int bias = (1 << (e - 1)) - 1;
};

template <class T>
__host__ __device__ inline bits_t<T> bits_of(T v) {
  bits_t<T> b;
  std::memcpy(&b, static_cast<const void*>(&v), sizeof(T));
  return b;
}
template <class T>
__host__ __device__ inline T from_bits(bits_t<T> b) {
  T v;
  std::memcpy(static_cast<void*>(&v), &b, sizeof(T));
  return v;
}

/// NaN by the bits: all-ones exponent and a non-zero fraction (e4m3, which has no infinity, only
/// S.1111.111).
template <class T>
__host__ __device__ inline bool is_nan(T v) {
  constexpr int m = format_of<T>::m, e = format_of<T>::e;
  const std::uint64_t b = bits_of(v);
  const std::uint64_t exponent = (b >> m) & ((std::uint64_t(1) << e) - 1);
  const std::uint64_t fraction = b & ((std::uint64_t(1) << m) - 1);
  if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) {
    return exponent == 15 && fraction == 7;
  } else {
    return exponent == (std::uint64_t(1) << e) - 1 && fraction != 0;
  }
}

/// The value of any storage type as a double (exact).
template <class T>
inline double to_double(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return static_cast<double>(__half2float(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return static_cast<double>(__bfloat162float(v));
  } else if constexpr (std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

template <class T>
std::string type_name() {
  if constexpr (std::is_same_v<T, float>)
    return "float";
  else if constexpr (std::is_same_v<T, double>)
    return "double";
  else if constexpr (std::is_same_v<T, __half>)
    return "half";
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return "bfloat16";
  else if constexpr (std::is_same_v<T, __nv_fp8_e4m3>)
    return "fp8_e4m3";
  else
    return "fp8_e5m2";
}

/// "value (0xbits)".
template <class T>
std::string describe(T v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g (0x%llx)", to_double(v),
                static_cast<unsigned long long>(bits_of(v)));
  return buffer;
}

// ---- the matcher ----------------------------------------------------------------------------

/// The engine tests' one comparison: `actual` is what the reference evaluation of the same
/// operation gave for this element, bit for bit, except that two NaNs may differ in payload (the
/// compiler may fold a 16-bit -> float -> 16-bit round trip in one kernel and not in another).
/// Accuracy against float64 is the accuracy tests' subject (cpu_accuracy, gpu_accuracy).
template <class T>
__host__ __device__ inline bool same_result(T actual, T expected) {
  return bits_of(actual) == bits_of(expected) || (is_nan(actual) && is_nan(expected));
}

/// A value `expected` can never match: a number where it is NaN, a NaN where it is a number.
/// Written to an output before a run, it shows any element the run did not write.
template <class T>
__host__ __device__ inline T poison_for(T expected) {
  constexpr int m = format_of<T>::m;
  constexpr bits_t<T> one = static_cast<bits_t<T>>(bits_t<T>(format_of<T>::bias) << m);
  constexpr bits_t<T> all_but_sign =
      static_cast<bits_t<T>>(static_cast<bits_t<T>>(~bits_t<T>(0)) >> 1);
  // +NaN with payload ...101 (e4m3 has one NaN per sign)
  constexpr bits_t<T> quiet_nan = std::is_same_v<T, __nv_fp8_e4m3>
                                      ? all_but_sign
                                      : static_cast<bits_t<T>>(all_but_sign & ~bits_t<T>(2));
  return from_bits<T>(is_nan(expected) ? static_cast<bits_t<T>>(one | 0x1) : quiet_nan);
}

// ---- correctly rounded conversion and ulp distance (for tests that compare with float64) -------

/// Correctly rounded (to nearest even) double -> T, done on the bits so it does not depend on the
/// conversions under test (cpu_support checks it against CUDA's for every float).
template <class T>
T round_to(double v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(v);  // IEEE double -> float on the host rounds to nearest even
  } else {
    static_assert(sizeof(T) == 2, "round_to: float, double, __half, __nv_bfloat16");
    constexpr int m = format_of<T>::m, e = format_of<T>::e, bias = format_of<T>::bias;
    using B = bits_t<T>;
    const B sign = std::signbit(v) ? B(1u << 15) : B(0);
    if (std::isnan(v)) return from_bits<T>(B(((1u << e) - 1) << m) | B(1u << (m - 1)));
    const double a = std::fabs(v);
    const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -m), bias);
    if (a >= max_finite + std::ldexp(1.0, bias - m - 1)) {  // past max + half an ulp: infinity
      return from_bits<T>(B(sign | (((1u << e) - 1) << m)));
    }
    const int min_exp = 1 - bias;
    const int exp = a == 0 ? min_exp : std::max(std::ilogb(a), min_exp);
    const double r = std::nearbyint(a / std::ldexp(1.0, exp - m)) * std::ldexp(1.0, exp - m);
    if (r == 0) return from_bits<T>(sign);
    const int re = std::ilogb(r);
    if (re < min_exp) {  // subnormal
      return from_bits<T>(B(sign | static_cast<B>(std::lround(r / std::ldexp(1.0, min_exp - m)))));
    }
    const B frac = static_cast<B>(std::lround((r / std::ldexp(1.0, re) - 1.0) * (1 << m)));
    return from_bits<T>(B(sign | B((re + bias) << m) | frac));
  }
}

/// Distance in units in the last place of T between two non-NaN values (+0 and -0: 0 apart).
template <class T>
std::int64_t ulp_distance(T a, T b) {
  const auto key = [](T v) {
    const auto bits = bits_of(v);
    const auto sign_bit = bits_t<T>(bits_t<T>(1) << (8 * sizeof(T) - 1));
    const std::int64_t magnitude = static_cast<std::int64_t>(bits & ~sign_bit);
    return (bits & sign_bit) ? -magnitude : magnitude;
  };
  const std::int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

// ---- input values: one hash, the same on host and device --------------------------------------

/// splitmix64's finalizer.
__host__ __device__ inline std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The bits of element i of the input with this seed: integer arithmetic only, so host and device
/// agree exactly. Random sign; 1/64 special values (NaN with payload, +-inf, +-0, denormals, +-max,
/// +-min normal, [64, 128)), 3/64 any finite binade (denormals to the largest), the rest of
/// magnitude in [2^-8, 16).
template <class T>
__host__ __device__ inline bits_t<T> hash_bits(std::uint64_t seed, std::uint64_t i) {
  constexpr int m = format_of<T>::m, e = format_of<T>::e;
  constexpr std::uint64_t bias = format_of<T>::bias;
  constexpr std::uint64_t emax = (std::uint64_t(1) << e) - 1;
  constexpr std::uint64_t mant_mask = (std::uint64_t(1) << m) - 1;
  const std::uint64_t h = mix64(seed ^ mix64(i));
  const std::uint64_t sign = h >> 63;
  std::uint64_t mant = mix64(h) & mant_mask;
  std::uint64_t exponent;
  const unsigned select = static_cast<unsigned>(h & 63);
  if (select == 0) {
    switch ((h >> 8) % 8) {
      case 0:  // quiet NaN, random payload
        exponent = emax;
        mant |= std::uint64_t(1) << (m - 1);
        break;
      case 1:  // infinity
        exponent = emax;
        mant = 0;
        break;
      case 2:  // zero
        exponent = 0;
        mant = 0;
        break;
      case 3:  // denormal (or zero)
        exponent = 0;
        break;
      case 4:  // largest finite
        exponent = emax - 1;
        mant = mant_mask;
        break;
      case 5:  // smallest normal
        exponent = 1;
        mant = 0;
        break;
      case 6:  // smallest denormal
        exponent = 0;
        mant = 1;
        break;
      default:  // [64, 128)
        exponent = bias + 6;
        break;
    }
  } else if (select < 4) {
    exponent = (h >> 8) % emax;  // every finite binade
  } else {
    exponent = bias - 8 + (h >> 8) % 12;  // [2^-8, 16)
  }
  return static_cast<bits_t<T>>((sign << (8 * sizeof(T) - 1)) | (exponent << m) | mant);
}
template <class T>
__host__ __device__ inline T hash_value(std::uint64_t seed, std::uint64_t i) {
  return from_bits<T>(hash_bits<T>(seed, i));
}

// ---- environment ----------------------------------------------------------------------------

/// CUACT_TEST_QUICK=1 (tests/sanitize.sh sets it) shrinks sizes and matrices: sanitizers slow
/// kernels and API calls by 10-100x.
inline bool quick_mode() {
  const char* v = std::getenv("CUACT_TEST_QUICK");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

inline std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 0);
}

/// What a test ran and how much of it failed (printed at the end of the matrix and fuzz tests).
struct tally {
  std::size_t cases = 0, elements = 0, failed_cases = 0, bad_elements = 0;
  void add(const tally& t) {
    cases += t.cases;
    elements += t.elements;
    failed_cases += t.failed_cases;
    bad_elements += t.bad_elements;
  }
  void print(const std::string& what) const {
    std::printf("%s: %zu cases, %zu elements, %zu failed cases, %zu bad elements\n", what.c_str(),
                cases, elements, failed_cases, bad_elements);
  }
};

}  // namespace cuact_test
