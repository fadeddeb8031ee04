// The one op table: every activation cuact ships, with what tests and benchmarks need to know of
// it. Tests (CPU grid simulation, exhaustive 16-bit accuracy, GPU suite, fuzz, finite differences)
// and every bench mode iterate it with for_each_activation; adding an activation is its struct in
// include/cuact/activations.cuh, one row here, and its README line.
//
// Host code only (references are float64 on the CPU); include from .cu or .cpp files.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <tuple>
#include <utility>

#include <cuact/activations.cuh>

namespace cuact_test {

/// Allowed error of one dtype's results against the float64 reference: `ulps` units in the last
/// place of the dtype at the reference value, or `absolute` (times the ulp of 1.0 at this dtype,
/// i.e. in units of the dtype's epsilon) for formulas that cancel, whichever is larger.
struct tolerance {
  double ulps;
  double absolute_eps = 0;
};

/// Tolerances per dtype. The contract: fp32/fp64 within 4 ulp of the float64 reference (absolute
/// bounds where PyTorch's own formula cancels), fp16/bf16 within 1 ulp of the correctly rounded
/// value.
struct tolerances {
  tolerance f64{4};
  tolerance f32{4};
  tolerance f16{1};
  tolerance bf16{1};
};

/// Points where the derivative jumps (finite differences skip them) and where tests place inputs.
struct kinks {
  double at[4] = {};
  int count = 0;
};

/// One activation of the table.
template <class Activation, class Forward, class Derivative>
struct activation_row {
  using activation_type = Activation;
  const char* name;           ///< cuact's and torch.nn.functional's name
  Activation act;             ///< instance with the parameters the row tests (non-default ones)
  Forward forward;            ///< double(double x): float64 reference act(x)
  Derivative derivative;      ///< double(double x): float64 reference act'(x) as PyTorch's backward
  kinks kink;
  double domain_low = -30;    ///< inputs drawn from [domain_low, domain_high] plus special values
  double domain_high = 30;
  tolerances tol = {};
  tolerances derivative_tol = {};
  bool heavy_math = false;    ///< exp/log/erf/tanh inside: the bench reports it as compute-heavy
};

template <class A, class F, class D>
activation_row<A, F, D> row(const char* name, A act, F forward, D derivative, kinks k = {},
                            tolerances tol = {}, tolerances dtol = {}) {
  activation_row<A, F, D> r{name, act, forward, derivative, k};
  r.tol = tol;
  r.derivative_tol = dtol;
  return r;
}


// ---- references ------------------------------------------------------------------------------
namespace reference {
inline double relu(double x) { return std::isnan(x) ? x : (x > 0 ? x : 0.0); }
inline double relu_derivative(double x) { return x > 0 ? 1.0 : 0.0; }

inline double selu(double x) {
  constexpr double a = cuact::selu::alpha, s = cuact::selu::scale;
  return std::isnan(x) ? x : (x > 0 ? s * x : s * a * std::expm1(x));
}
inline double selu_derivative(double x) {
  constexpr double a = cuact::selu::alpha, s = cuact::selu::scale;
  return x <= 0 ? s * a * std::exp(x) : (std::isnan(x) ? s : s);  // PyTorch: NaN x gives dy * scale
}
}  // namespace reference

/// The table. Parameterized activations appear with non-default parameters (and, where the
/// defaults take another branch of the math, a second row with the defaults).
inline auto activation_table() {
  return std::make_tuple(
      row("relu", cuact::relu{}, reference::relu, reference::relu_derivative, kinks{{0}, 1}),
      row("selu", cuact::selu{}, reference::selu, reference::selu_derivative, kinks{{0}, 1})
      // family rows go here
  );
}

/// Calls f(row) for every row of the table, in order.
template <class F>
void for_each_activation(F&& f) {
  std::apply([&](const auto&... rows) { (f(rows), ...); }, activation_table());
}

}  // namespace cuact_test
