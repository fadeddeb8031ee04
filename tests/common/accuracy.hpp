// Accuracy of the op table's activations against their references (op_table.hpp), shared by
// cpu_accuracy (the policies' members on the host, host fallbacks of the hardware approximations)
// and gpu_accuracy (cuact's entries on the device): the inputs, the references of each pass, the
// comparison under a row's tolerance, and the worst error per row, dtype and pass.
//
// Host code only; include from .cu files.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <cuact/activation.cuh>
#include <cuact/detail/numeric.cuh>

#include "op_table.hpp"
// support.hpp's from_bits memcpys into __half, which GCC's -Wclass-memaccess (-Wall) rejects
// under CUACT_WERROR once round_to<__half> instantiates it; until support.hpp casts to void*:
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wclass-memaccess"
#endif
#include "support.hpp"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace cuact_test {

template <class T>
using compute_of = cuact::detail::compute_t<T>;

/// T from its bits (through void*: GCC's -Wclass-memaccess objects to memcpy into __half).
template <class T>
T value_of_bits(bits_t<T> b) {
  T v;
  std::memcpy(static_cast<void*>(&v), &b, sizeof(T));
  return v;
}

/// The ulp of T at magnitude |v| (the smallest subnormal at 0).
template <class T>
double ulp_of(double v) {
  constexpr int m = format_of<T>::m, min_exp = 1 - format_of<T>::bias;
  const double a = std::fabs(v);
  const int e = a == 0 || !std::isfinite(a) ? min_exp : std::max(std::ilogb(a), min_exp);
  return std::ldexp(1.0, e - m);
}

/// How a result compares with its reference.
struct verdict {
  bool ok;
  double ulps;    ///< distance to the correctly rounded reference (0 for exact NaN/inf/zero rules)
  bool by_bound;  ///< admitted by an absolute bound, not by ulps
};

/// `actual` against the exact `reference` under `tol`: NaN only for NaN; infinities exactly; an
/// exact zero reference needs a zero of the same sign; otherwise within tol.ulps of the correctly
/// rounded reference, or within an absolute bound (tol.absolute_eps epsilons, tol.x_ulps ulps of
/// x, or `slack`: underflow of a derivative in the compute type).
/// `scale`: |dy| for gradients (the absolute bounds are on the derivative).
template <class T>
verdict judge(const tolerance& tol, T actual, real reference, double x, double slack = 0,
              double scale = 1) {
  if (std::isnan(reference)) return {is_nan(actual), 0, false};
  if (is_nan(actual)) return {false, 0, false};
  const double a = to_double(actual);
  if (reference == 0) {
    return {a == 0 && std::signbit(a) == std::signbit(reference), a == 0 ? 0.0 : 1e9, false};
  }
  if (std::isinf(reference)) return {a == reference, a == reference ? 0.0 : 1e9, false};
  // a finite reference: an infinity counts as one ulp past the largest finite value
  const double r = static_cast<double>(reference);
  const T expected = round_to<T>(r);
  const double ulps = static_cast<double>(ulp_distance(actual, expected));
  if (ulps <= tol.ulps) return {true, ulps, false};
  const double error = std::fabs(a - r);
  const double bound = std::max({tol.absolute_eps * std::ldexp(1.0, -format_of<T>::m) * scale,
                                 tol.x_ulps * ulp_of<T>(x) * scale, slack});
  return {error <= bound, ulps, error <= bound};
}

/// Worst error and failures of one pass of one row at one dtype.
struct pass_tally {
  std::string what;
  std::size_t checked = 0, failures = 0, by_bound = 0;
  double worst_ulps = 0, worst_x = 0;
  std::vector<std::string> first_failures;

  template <class T>
  void record(const verdict& v, T x, T actual, real reference, T second = T{},
              bool has_second = false) {
    ++checked;
    if (v.by_bound) ++by_bound;
    if (v.ok && !v.by_bound && v.ulps > worst_ulps) {
      worst_ulps = v.ulps;
      worst_x = to_double(x);
    }
    if (!v.ok) {
      ++failures;
      if (first_failures.size() < 6) {
        char buffer[256];
        std::snprintf(buffer, sizeof buffer, "x = %s%s%s: got %s, reference %.17Lg (%.0f ulp)",
                      describe(x).c_str(), has_second ? ", dy = " : "",
                      has_second ? describe(second).c_str() : "", describe(actual).c_str(),
                      reference, v.ulps);
        first_failures.push_back(buffer);
      }
    }
  }
};

// ---- inputs ------------------------------------------------------------------------------------

/// Inputs for a row at dtype T: every bit pattern of a 16-bit type; for float and double, the
/// special values (NaN, +-inf, +-0, denormals, extremes, the exp/log switch points), each kink and
/// its neighbours 1 to 3 ulp away, `n` values uniform over the row's domain and n / 4 of
/// log-uniform magnitude (2^-40 to 2^12) of either sign.
template <class T, class Row>
std::vector<T> accuracy_inputs(const Row& row, std::size_t n, std::uint64_t seed) {
  std::vector<T> xs;
  if constexpr (sizeof(T) == 2) {
    xs.reserve(65536);
    for (std::uint32_t b = 0; b < 65536; ++b)
      xs.push_back(value_of_bits<T>(static_cast<std::uint16_t>(b)));
  } else {
    constexpr int m = format_of<T>::m, bias = format_of<T>::bias;
    const double inf = std::numeric_limits<double>::infinity();
    const double denorm_min = std::ldexp(1.0, 1 - bias - m), min_normal = std::ldexp(1.0, 1 - bias);
    const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -m), bias);
    const double specials[] = {std::nan(""),
                               inf,
                               -inf,
                               0.0,
                               -0.0,
                               denorm_min,
                               -denorm_min,
                               3 * denorm_min,
                               -3 * denorm_min,
                               min_normal - denorm_min,
                               -(min_normal - denorm_min),
                               min_normal,
                               -min_normal,
                               max_finite,
                               -max_finite,
                               1e-30,
                               -1e-30,
                               1e-8,
                               -1e-8,
                               1e-4,
                               -1e-4,
                               0.125,
                               -0.125,
                               0.25,
                               -0.25,
                               0.5,
                               -0.5,
                               1,
                               -1,
                               2,
                               -2,
                               3,
                               -3,
                               6,
                               20,
                               -20,
                               30,
                               -30,
                               -1.2784645427610738,
                               -1.1923473371066,
                               -0.7517915243,
                               -0.7517595,
                               -87.33654,
                               -88.72284,
                               88.72284,
                               -103.97208,
                               -104,
                               -150,
                               -745.1,
                               745.1,
                               -709.78,
                               709.78,
                               -1000,
                               1000,
                               1e10,
                               -1e10,
                               1e30,
                               -1e30,
                               7e12,
                               -7e12,
                               2e19,
                               -2e19,
                               65504,
                               -65504};
    for (double s : specials) xs.push_back(static_cast<T>(s));
    for (int k = 0; k < row.kink.count; ++k) {
      const T at = static_cast<T>(row.kink.at[k]);
      T up = at, down = at;
      xs.push_back(at);
      for (int i = 0; i < 3; ++i) {
        up = std::nextafter(up, std::numeric_limits<T>::infinity());
        down = std::nextafter(down, -std::numeric_limits<T>::infinity());
        xs.push_back(up);
        xs.push_back(down);
      }
    }
    std::uint64_t state = seed;
    const auto unit = [&state] {  // uniform in [0, 1)
      state = mix64(state + 0x9e3779b97f4a7c15ull);
      return static_cast<double>(state >> 11) * 0x1.0p-53;
    };
    for (std::size_t i = 0; i < n; ++i) {
      xs.push_back(static_cast<T>(row.domain_low + (row.domain_high - row.domain_low) * unit()));
    }
    for (std::size_t i = 0; i < n / 4; ++i) {
      const double magnitude = std::exp2(-40 + 52 * unit());
      xs.push_back(static_cast<T>(unit() < 0.5 ? -magnitude : magnitude));
    }
  }
  return xs;
}

/// Upstream gradients: hash_value's mix of signs, binades and special values (NaN, +-inf, +-0).
template <class T>
std::vector<T> accuracy_dys(std::size_t n, std::uint64_t seed) {
  std::vector<T> dys(n);
  for (std::size_t i = 0; i < n; ++i) dys[i] = value_of_bits<T>(hash_bits<T>(seed, i));
  return dys;
}

// ---- references of the passes --------------------------------------------------------------------

/// dx for (x, dy): the row's selection where PyTorch's backward selects, else dy times the
/// derivative rounded to the compute type (the policy multiplies in it: a derivative that
/// underflows there makes an infinite dy give NaN, as in PyTorch's kernels).
template <class T>
real times_derivative(double dy, real d) {
  const auto in_compute_type = static_cast<compute_of<T>>(static_cast<double>(d));
  if (in_compute_type == 0 && d != 0) {
    // the derivative underflows in the compute type: dy * 0 there (NaN for an infinite dy, and
    // a zero of either sign, which underflow_slack admits)
    if (std::isinf(dy)) return std::numeric_limits<real>::quiet_NaN();
    // a product that is 0 even in long double has a sign that depends on the rounding: it is no
    // exact zero, so stand in the smallest positive number (a zero of either sign in every dtype)
    const real product = real(dy) * d;
    return product == 0 ? std::numeric_limits<real>::denorm_min() : product;
  }
  return real(dy) * real(in_compute_type);
}
template <class T, class Row>
real reference_gradient(const Row& row, double x, double dy) {
  if (row.gradient) return row.gradient(x, dy);
  return times_derivative<T>(dy, row.derivative(x));
}
template <class T, class Row>
real reference_gradient_from_output(const Row& row, double y, double dy) {
  if (row.gradient_from_output) return row.gradient_from_output(y, dy);
  return times_derivative<T>(dy, row.derivative_from_output(y));
}

/// Absolute slack for a product dy * act'(x) whose derivative underflows in compute type C, to
/// zero or into its subnormals: a subnormal derivative built from a few rounded steps is off by a
/// few of the smallest steps (bf16 tanh'(-50) = 1.5e-43 in float: 4 bf16 ulp of dy * tanh' off
/// for |dy| = 3e25), so 4 of them, times |dy|.
template <class T>
double underflow_slack(double dy) {
  return std::isfinite(dy)
             ? std::fabs(dy) * 4 *
                   static_cast<double>(std::numeric_limits<compute_of<T>>::denorm_min())
             : 0;
}

/// Absolute slack for dy * act'(x) in fp32/fp64: the derivative's tolerance counts ulps of the
/// derivative's binade, and the product can sit lower in its own binade than the derivative in
/// its (tanhshrink's tanh(x)^2 = 0.0318 times dy = 3.88 gives 0.1234: the product's ulp is half
/// the derivative's, relatively), so N ulp there can be 2N + 1 ulp of the product. The bound:
/// the derivative's tolerance in its own ulps, times |dy|, plus the product's rounding.
template <class T>
double gradient_slack(const tolerance& derivative_tol, real derivative, double dy) {
  double slack = underflow_slack<T>(dy);
  if constexpr (sizeof(T) >= 4) {
    const double d = static_cast<double>(derivative);
    if (std::isfinite(d) && std::isfinite(dy) && d != 0) {
      const double product = std::fabs(d * dy);
      slack = std::max(slack, derivative_tol.ulps * ulp_of<T>(d) * std::fabs(dy) +
                                  (std::isfinite(product) ? ulp_of<T>(product) : 0.0));
    }
  }
  return slack;
}

/// An infinite dy times a derivative that is subnormal in the compute type: the reference is
/// +-inf, but a policy whose derivative underflows a little earlier (a 16-bit path taking exp(v)
/// alone, as PyTorch's own float kernels do: silu'(-107) there is 0, so dx = inf * 0 = NaN) gives
/// NaN; both are admitted.
template <class T, class Value>
verdict subnormal_times_infinity(verdict v, real derivative, double dy, Value actual) {
  const double d = std::fabs(static_cast<double>(derivative));
  const bool subnormal =
      d != 0 && d < static_cast<double>(std::numeric_limits<compute_of<T>>::min());
  if (!v.ok && subnormal && std::isinf(dy) && is_nan(actual)) return {true, 0, false};
  return v;
}

/// The results of one row at one dtype, however computed (host members or device entries): the
/// forward y; the backward from x with dy = 1 and with `dys`; from y (forward's own) likewise.
template <class T>
struct row_results {
  std::vector<T> y, dx_one, dx, dx_from_y_one, dx_from_y;
};

/// Compares every result of a row at dtype T with its reference; returns the tallies of the
/// forward, backward (dy = 1, then random dy) and from-output passes.
template <class T, class Row>
std::vector<pass_tally> judge_row(const Row& row, const std::vector<T>& xs,
                                  const std::vector<T>& dys, const row_results<T>& got) {
  using A = typename Row::activation_type;
  const tolerance& ftol = row.tol.template of<T>();
  tolerance dtol = row.derivative_tol.template of<T>();
  tolerance gtol = dtol;
  if (sizeof(T) >= 4) gtol.ulps += 1;  // the product with dy rounds once more
  std::vector<pass_tally> t(5);
  t[0].what = "forward";
  t[1].what = "derivative";
  t[2].what = "backward";
  t[3].what = "derivative_from_output";
  t[4].what = "backward_from_output";
  const T one = static_cast<T>(1.0f);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x = to_double(xs[i]), dy = to_double(dys[i]);
    const real f = row.forward(x);
    t[0].record(judge(ftol, got.y[i], f, x), xs[i], got.y[i], f);
    if constexpr (cuact::has_derivative_v<A>) {
      const real d1 = reference_gradient<T>(row, x, 1.0);
      t[1].record(judge(dtol, got.dx_one[i], d1, x, underflow_slack<T>(1.0)), xs[i], got.dx_one[i],
                  d1);
      const real g = reference_gradient<T>(row, x, dy);
      t[2].record(subnormal_times_infinity<T>(
                      judge(gtol, got.dx[i], g, x, gradient_slack<T>(dtol, d1, dy), std::fabs(dy)),
                      d1, dy, got.dx[i]),
                  xs[i], got.dx[i], g, dys[i], true);
    }
    if constexpr (cuact::has_derivative_from_output_v<A>) {
      const double y = to_double(got.y[i]);
      const real d1 = reference_gradient_from_output<T>(row, y, 1.0);
      t[3].record(judge(dtol, got.dx_from_y_one[i], d1, y, underflow_slack<T>(1.0)), got.y[i],
                  got.dx_from_y_one[i], d1);
      const real g = reference_gradient_from_output<T>(row, y, dy);
      t[4].record(
          judge(gtol, got.dx_from_y[i], g, y, gradient_slack<T>(dtol, d1, dy), std::fabs(dy)),
          got.y[i], got.dx_from_y[i], g, dys[i], true);
    }
    (void)one;
  }
  t.erase(std::remove_if(t.begin(), t.end(), [](const pass_tally& p) { return p.checked == 0; }),
          t.end());
  return t;
}

/// One line per pass: "row dtype pass: worst N ulp at x (M by absolute bound), K failures".
template <class T>
void print_tallies(const char* platform, const char* row, const std::vector<pass_tally>& tallies) {
  for (const auto& p : tallies) {
    std::printf(
        "%s %-20s %-9s %-23s worst %3.0f ulp at x = %-12.6g %7zu by bound  %zu/%zu failed\n",
        platform, row, type_name<T>().c_str(), p.what.c_str(), p.worst_ulps, p.worst_x, p.by_bound,
        p.failures, p.checked);
    for (const auto& f : p.first_failures) std::printf("    %s\n", f.c_str());
  }
}

}  // namespace cuact_test
