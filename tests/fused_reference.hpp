// Float64 references of the fused operations' tests (cpu_fused.cu, gpu_fused.cu): tolerances in
// units of the storage type and intermediates rounded to the compute type, as the fused ops form
// them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <cuact/detail/numeric.cuh>

#include "support.hpp"

namespace cuact_test {

// ---- float64 references ---------------------------------------------------------------------

/// The size of one ulp of T at v (T's denormal spacing below its smallest normal).
template <class T>
inline double ulp_of(double v) {
  constexpr int m = format_of<T>::m, min_exp = 1 - format_of<T>::bias;
  const int e = v == 0 || !std::isfinite(v) ? min_exp : std::max(std::ilogb(v), min_exp);
  return std::ldexp(1.0, e - m);
}

/// actual within `ulps` of T's ulp at the float64 reference, or within `slack` (absolute, for
/// gradients whose derivative factor crosses zero: relative to the upstream gradient); NaN where
/// the reference is NaN; infinities equal.
template <class T>
inline bool close_to(T actual, double expected, double ulps, double slack = 0) {
  const double a = to_double(actual);
  if (std::isnan(expected) || std::isnan(a)) return std::isnan(expected) && std::isnan(a);
  const double rounded = to_double(round_to<T>(expected));
  if (std::isinf(rounded) || std::isinf(a)) {
    return a == rounded || std::fabs(a - expected) <= ulps * ulp_of<T>(expected);
  }
  return std::fabs(a - expected) <= ulps * ulp_of<T>(expected) + slack;
}

/// v rounded to the compute type of T (where the fused op rounds an intermediate).
template <class T>
inline double in_compute(double v) {
  return static_cast<double>(static_cast<cuact::detail::compute_t<T>>(v));
}

template <class T>
constexpr double float_ulps() {
  return sizeof(T) >= 4 ? 8 : 2;  // fp32/fp64: activation (<= 4 ulp) and two roundings
}
template <class T>
inline double epsilon() {
  return std::ldexp(1.0, -format_of<T>::m);
}

template <class T>
inline std::vector<T> hashed(std::uint64_t seed, std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = hash_value<T>(seed, i);
  return v;
}

}  // namespace cuact_test
