// The float64 reference of gpt-oss's clamped SwiGLU (include/cuact/gate.cuh: clamped_swiglu) and
// its closeness rule, shared by the CPU test of the per-element bodies (cpu_gate.cu) and the GPU
// test of the entries (gpu_gate.cu).
#pragma once

#include <cmath>
#include <string>

#include <cuact/cuact.cuh>

#include "fused_reference.hpp"
#include "support.hpp"

namespace cuact_test {

/// The float64 reference of the clamped SwiGLU with each factor the op forms (silu_alpha(x), its
/// derivative, clamp(b) + 1, dy * up, alpha x) rounded to T's compute type, as the op rounds them,
/// and alpha rounded to it too.
template <class T>
struct clamped_reference {
  double alpha, limit;
  double out, da, db;
  double up_abs, dy_up_abs;  // |clamp(b) + 1| and |dy * up|: the scale of the slack

  clamped_reference(double a, double b, double dy, double alpha_in, double limit_in)
      : alpha(in_compute<T>(alpha_in)), limit(in_compute<T>(limit_in)) {
    const double x = a > limit ? limit : a;  // NaN stays NaN
    // alpha x rounded to the compute type first, as the op (and PyTorch's formula) forms it:
    // its rounding error is amplified by |alpha x| in the exponential, whatever the sigmoid
    const double z = in_compute<T>(alpha * x);
    const double s = 1 / (1 + std::exp(-z)), c = 1 / (1 + std::exp(z));  // c = 1 - s
    const double y = x * s;
    const double dydx = s + y * alpha * c;  // y first: alpha x may overflow float64
    const double clamped = b < -limit ? -limit : (b > limit ? limit : b);
    const double up = in_compute<T>(clamped + 1);
    out = in_compute<T>(y) * up;
    const double dy_up = in_compute<T>(dy * up);
    da = a <= limit ? dy_up * in_compute<T>(dydx) : 0.0;
    db = (b >= -limit && b <= limit) ? dy * in_compute<T>(y) : 0.0;
    up_abs = std::fabs(up);
    dy_up_abs = std::fabs(dy_up);
  }
};

/// Which of (out, da, db) of the clamped gate at (a, b, dy) are off the reference: "" where all
/// are within the rule, else their names. The rule: float_ulps<T>() + 2 ulp (one factor and one
/// rounding more than a GLU); slack for the sigmoid's subnormal results (its smallest step times
/// the factors after it) and, for da, for silu_alpha's zero crossing (4 eps times |dy * up|).
template <class T>
std::string clamped_off(const cuact::clamped_swiglu& gate, T a, T b, T dy, T out, T da, T db) {
  using C = cuact::detail::compute_t<T>;
  const clamped_reference<T> ref(to_double(a), to_double(b), to_double(dy), gate.alpha, gate.limit);
  const double ulps = float_ulps<T>() + 2;
  const double tiny = ulp_of<C>(0.0);
  const double xa = std::fabs(std::fmin(to_double(a), ref.limit));
  // a slack scale: 0 where it is not finite (NaN or inf inputs leave the exact comparison)
  const auto scale = [](double v) { return std::isfinite(v) ? v : 0.0; };
  std::string off;
  if (!close_to(out, ref.out, ulps, 4 * tiny * scale(xa * ref.up_abs))) off += " out";
  if (!close_to(da, ref.da, ulps, 4 * epsilon<T>() * scale(ref.dy_up_abs))) off += " da";
  if (!close_to(db, ref.db, ulps, 4 * tiny * scale(xa * std::fabs(to_double(dy))))) off += " db";
  return off;
}

}  // namespace cuact_test
