// The one op table: every activation cuact ships, with what tests and benchmarks need to know of
// it. Tests (CPU grid simulation, exhaustive 16-bit accuracy, GPU suite, fuzz, finite differences)
// and every bench mode iterate it with for_each_activation; adding an activation is its struct in
// its family's file, include/cuact/activations/*.cuh, one row here, and its README line.
//
// Host code only (references are evaluated in long double on the CPU); include from .cu or .cpp
// files. Rows tell the accuracy tests (accuracy.hpp, cpu_accuracy, gpu_accuracy) what each
// activation must give: forward, derivative, selections, from-output references, kinks, tolerances.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuact/activations.cuh>

namespace cuact_test {

/// Allowed error of one dtype's results against the reference: within `ulps` units in the last
/// place of the dtype of the correctly rounded reference, or within `absolute_eps` times the
/// dtype's epsilon (the ulp of 1.0) absolutely (derivatives at their zero crossings), or within
/// `x_ulps` ulp of the input x absolutely (formulas that cancel, as PyTorch's own: tanhshrink near
/// 0), whichever admits.
struct tolerance {
  double ulps;
  double absolute_eps = 0;
  double x_ulps = 0;
};

/// Tolerances per dtype. The contract: fp32/fp64 within 4 ulp of the reference (absolute bounds
/// where PyTorch's own formula cancels), fp16/bf16 within 1 ulp of the correctly rounded value.
struct tolerances {
  tolerance f64{4};
  tolerance f32{4};
  tolerance f16{1};
  tolerance bf16{1};
  template <class T>
  const tolerance& of() const {
    if constexpr (sizeof(T) == 8)
      return f64;
    else if constexpr (sizeof(T) == 4)
      return f32;
    else if constexpr (std::is_same_v<T, __half>)
      return f16;
    else
      return bf16;
  }
};

/// Points where the derivative jumps (finite differences skip them) and where tests place inputs.
struct kinks {
  double at[4] = {};
  int count = 0;
};

/// References are evaluated in long double (64-bit significand on x86) and compared after one
/// rounding; a reference that is exactly +-0 there also fixes the sign of zero the result must have.
using real = long double;

/// A reference bound to the row's activation (so parameters are written once, in the row).
template <class A>
struct unary_reference {
  A act;
  real (*f)(const A&, real) = nullptr;
  explicit operator bool() const { return f != nullptr; }
  real operator()(real v) const { return f(act, v); }
};
template <class A>
struct binary_reference {
  A act;
  real (*f)(const A&, real, real) = nullptr;
  explicit operator bool() const { return f != nullptr; }
  real operator()(real v, real dy) const { return f(act, v, dy); }
};

/// One activation of the table. References follow PyTorch's CUDA kernels' semantics (branch
/// conditions, values at kinks, NaN and +-inf), evaluated exactly (to long double).
template <class Activation, class Forward = unary_reference<Activation>,
          class Derivative = unary_reference<Activation>>
struct activation_row {
  using activation_type = Activation;
  const char* name;       ///< cuact's and torch.nn.functional's name
  Activation act;         ///< instance with the parameters the row tests (non-default ones)
  Forward forward;        ///< real(real x): reference act(x)
  Derivative derivative;  ///< real(real x): reference act'(x) as PyTorch's backward
  kinks kink;
  double domain_low = -30;  ///< inputs drawn from [domain_low, domain_high] plus special values
  double domain_high = 30;
  tolerances tol = {};
  tolerances derivative_tol = {};
  bool heavy_math = cuact::is_heavy_v<Activation>;  ///< exp/log/erf/tanh inside
  /// Reference dx(x, dy) where PyTorch's backward selects rather than multiplies (dx = 0 whatever
  /// dy, NaN included); unset: dy * derivative(x).
  binary_reference<Activation> gradient{};
  /// Reference act'(x) from y = act(x), for activations with derivative_from_output.
  unary_reference<Activation> derivative_from_output{};
  /// Reference dx(y, dy) for activations with gradient_from_output (a selection).
  binary_reference<Activation> gradient_from_output{};

  activation_row with_tolerances(tolerances forward_tol, tolerances backward_tol) const {
    activation_row r = *this;
    r.tol = forward_tol;
    r.derivative_tol = backward_tol;
    return r;
  }
  activation_row with_derivative_tolerances(tolerances backward_tol) const {
    activation_row r = *this;
    r.derivative_tol = backward_tol;
    return r;
  }
  activation_row with_gradient(real (*g)(const Activation&, real, real)) const {
    activation_row r = *this;
    r.gradient = {act, g};
    return r;
  }
  activation_row with_from_output(real (*d)(const Activation&, real),
                                  real (*g)(const Activation&, real, real) = nullptr) const {
    activation_row r = *this;
    r.derivative_from_output = {act, d};
    r.gradient_from_output = {act, g};
    return r;
  }
};

template <class A>
activation_row<A> row(const char* name, A act, real (*forward)(const A&, real),
                      real (*derivative)(const A&, real), kinks k = {}) {
  activation_row<A> r{name, act, {act, forward}, {act, derivative}, k};
  return r;
}

// ---- references ------------------------------------------------------------------------------
// Exact math in long double with PyTorch's semantics; where PyTorch's float formula loses
// accuracy (gelu's 1 + erf, silu's exp overflow, ...), the reference is the function itself.
namespace reference {
inline real nan_() { return std::numeric_limits<real>::quiet_NaN(); }
inline real sigmoid_(real v) {  // overflow-safe in any range
  const real e = std::exp(-std::fabs(v));
  return v >= 0 ? 1 / (1 + e) : e / (1 + e);
}

inline real relu(const cuact::relu&, real x) { return std::isnan(x) ? x : (x > 0 ? x : real(0)); }
inline real relu_derivative(const cuact::relu&, real x) { return x > 0 ? 1 : 0; }
inline real relu_gradient(const cuact::relu&, real x, real dy) { return x > 0 ? dy : real(0); }

inline real selu(const cuact::selu&, real x) {
  constexpr real a = cuact::selu::alpha, s = cuact::selu::scale;
  return x > 0 ? s * x : s * a * std::expm1(x);  // NaN: expm1(NaN)
}
inline real selu_derivative(const cuact::selu&, real x) {
  constexpr real a = cuact::selu::alpha, s = cuact::selu::scale;
  return x <= 0 ? s * a * std::exp(x) : s;  // PyTorch: NaN x gives dy * scale
}
inline real selu_from_output(const cuact::selu&, real y) {
  return y <= 0 ? (y + real(cuact::selu::scale_alpha_hi)) + real(cuact::selu::scale_alpha_lo)
                : real(cuact::selu::scale);
}

inline real clamp_(real x, real lo, real hi) {
  return std::isnan(x) ? x : x > lo ? (x < hi ? x : hi) : lo;
}
inline real relu6(const cuact::relu6&, real x) { return clamp_(x, 0, 6); }
inline real relu6_derivative(const cuact::relu6&, real x) { return x <= 0 || x >= 6 ? 0 : 1; }
inline real relu6_gradient(const cuact::relu6&, real x, real dy) {
  return x <= 0 || x >= 6 ? real(0) : dy;
}

inline real hardtanh(const cuact::hardtanh& a, real x) { return clamp_(x, a.min_val, a.max_val); }
inline real hardtanh_derivative(const cuact::hardtanh& a, real x) {
  return x <= a.min_val || x >= a.max_val ? 0 : 1;
}
inline real hardtanh_gradient(const cuact::hardtanh& a, real x, real dy) {
  return x <= a.min_val || x >= a.max_val ? real(0) : dy;
}

inline real leaky_relu(const cuact::leaky_relu& a, real x) {
  return x > 0 ? x : x * real(a.negative_slope);
}
inline real leaky_relu_derivative(const cuact::leaky_relu& a, real x) {
  return x > 0 ? 1 : real(a.negative_slope);
}

inline real hardsigmoid(const cuact::hardsigmoid&, real x) { return clamp_(x + 3, 0, 6) / 6; }
inline real hardsigmoid_derivative(const cuact::hardsigmoid&, real x) {
  return x > -3 && x < 3 ? real(1) / 6 : 0;
}
inline real hardsigmoid_gradient(const cuact::hardsigmoid&, real x, real dy) {
  return x > -3 && x < 3 ? dy / 6 : real(0);
}

inline real hardswish(const cuact::hardswish&, real x) {
  return x * (clamp_(x + 3, 0, 6) / 6);  // x <= -3: x * 0 = -0; -inf: NaN
}
inline real hardswish_derivative(const cuact::hardswish&, real x) {
  return x <= -3 ? 0 : x < 3 ? (x + real(1.5)) / 3 : 1;  // x / 3 + 1/2 without cancellation
}
inline real hardswish_gradient(const cuact::hardswish&, real x, real dy) {
  return x <= -3 ? real(0) : x < 3 ? dy * ((x + real(1.5)) / 3) : dy;
}

inline real softshrink(const cuact::softshrink& a, real x) {
  const real l = a.lambd;
  return std::isnan(x) ? x : x > l ? x - l : x < -l ? x + l : real(0);
}
inline real shrink_derivative_(real l, real x) { return x >= -l && x <= l ? 0 : 1; }
inline real softshrink_derivative(const cuact::softshrink& a, real x) {
  return shrink_derivative_(a.lambd, x);
}
inline real softshrink_gradient(const cuact::softshrink& a, real x, real dy) {
  return x >= -real(a.lambd) && x <= real(a.lambd) ? real(0) : dy;
}
inline real hardshrink(const cuact::hardshrink& a, real x) {
  return x >= -real(a.lambd) && x <= real(a.lambd) ? real(0) : x;
}
inline real hardshrink_derivative(const cuact::hardshrink& a, real x) {
  return shrink_derivative_(a.lambd, x);
}
inline real hardshrink_gradient(const cuact::hardshrink& a, real x, real dy) {
  return x >= -real(a.lambd) && x <= real(a.lambd) ? real(0) : dy;
}

inline real threshold(const cuact::threshold& a, real x) {
  return x <= a.threshold ? real(a.value) : x;
}
inline real threshold_derivative(const cuact::threshold& a, real x) {
  return x <= a.threshold ? 0 : 1;
}
inline real threshold_gradient(const cuact::threshold& a, real x, real dy) {
  return x <= a.threshold ? real(0) : dy;
}

inline real softsign(const cuact::softsign&, real x) { return x / (1 + std::fabs(x)); }
inline real softsign_derivative(const cuact::softsign&, real x) {
  return std::isinf(x) ? nan_() : 1 / ((1 + std::fabs(x)) * (1 + std::fabs(x)));
}

inline real elu(const cuact::elu& a, real x) { return x > 0 ? x : real(a.alpha) * std::expm1(x); }
inline real elu_derivative(const cuact::elu& a, real x) {
  return x <= 0 ? real(a.alpha) * std::exp(x) : 1;
}
inline real elu_from_output(const cuact::elu& a, real y) { return y <= 0 ? y + real(a.alpha) : 1; }

inline real celu(const cuact::celu& a, real x) {
  return x > 0 ? x : real(a.alpha) * std::expm1(x / real(a.alpha));
}
inline real celu_derivative(const cuact::celu& a, real x) {
  return x <= 0 ? std::exp(x / real(a.alpha)) : 1;
}
inline real celu_from_output(const cuact::celu& a, real y) {
  return y <= 0 ? (y + real(a.alpha)) / real(a.alpha) : 1;
}

inline real sigmoid(const cuact::sigmoid&, real x) { return sigmoid_(x); }
inline real sigmoid_derivative(const cuact::sigmoid&, real x) {
  const real e = std::exp(-std::fabs(x));
  return e / ((1 + e) * (1 + e));
}
inline real sigmoid_from_output(const cuact::sigmoid&, real y) { return y * (1 - y); }

inline real silu(const cuact::silu&, real x) { return x * sigmoid_(x); }  // -inf: -inf * 0 = NaN
inline real silu_derivative(const cuact::silu&, real x) {
  return sigmoid_(x) * (1 + x * sigmoid_(-x));  // +-inf: inf * 0 = NaN, as PyTorch
}

inline real logsigmoid(const cuact::logsigmoid&, real x) {
  return (x < 0 ? x : real(0)) - std::log1p(std::exp(-std::fabs(x)));  // +inf: +0
}
inline real logsigmoid_derivative(const cuact::logsigmoid&, real x) { return sigmoid_(-x); }

inline real softplus(const cuact::softplus& a, real x) {
  const real v = x * real(a.beta);
  return v > a.threshold
             ? x
             : (v > 0 ? x : real(0)) + std::log1p(std::exp(-std::fabs(v))) / real(a.beta);
}
inline real softplus_derivative(const cuact::softplus& a, real x) {
  const real v = x * real(a.beta);
  return v > a.threshold ? 1 : sigmoid_(v);
}

inline real mish(const cuact::mish&, real x) {
  return x * std::tanh(std::log1p(std::exp(x)));  // -inf: -inf * 0 = NaN
}
inline real mish_derivative(const cuact::mish&, real x) {
  const real sp = std::log1p(std::exp(x));
  const real sech = 1 / std::cosh(sp);
  if (x < -50) {  // e^x (tanh(sp) e^-x + x sigmoid(x) e^-x sech^2): the sign survives underflow
    const real e = std::exp(x);
    return e * ((e + 2) / (e * (e + 2) + 2) + x / (1 + e) * (sech * sech));  // -inf: NaN
  }
  return std::tanh(sp) + x * sigmoid_(x) * (sech * sech);  // +inf: NaN, as PyTorch
}

inline real tanh(const cuact::tanh&, real x) { return std::tanh(x); }
inline real tanh_derivative(const cuact::tanh&, real x) {
  const real sech = 1 / std::cosh(x);
  return sech * sech;
}
inline real tanh_from_output(const cuact::tanh&, real y) { return std::fma(-y, y, real(1)); }

inline real tanhshrink(const cuact::tanhshrink&, real x) {
  if (x == 0) return x - x;          // +0 for -0 too, as PyTorch's x - tanh(x)
  if (std::fabs(x) < real(0.125)) {  // x - tanh(x) cancels even in long double: its Taylor series
    const real x2 = x * x;
    const real c[] = {
        real(1) / 3,         real(-2) / 15,          real(17) / 315,          real(-62) / 2835,
        real(1382) / 155925, real(-21844) / 6081075, real(929569) / 638512875};
    real p = 0;
    for (int i = 6; i >= 0; --i) p = p * x2 + c[i];
    return p * x2 * x;
  }
  return x - std::tanh(x);
}
inline real tanhshrink_derivative(const cuact::tanhshrink&, real x) {
  return std::tanh(x) * std::tanh(x);
}

inline real gelu_cdf_(real x) { return std::erfc(-x / std::sqrt(real(2))) / 2; }
inline real gelu(const cuact::gelu&, real x) { return x * gelu_cdf_(x); }  // -inf: NaN
inline real gelu_derivative(const cuact::gelu&, real x) {
  const real pdf =
      std::exp(-x * x / 2) / std::sqrt(2 * real(3.14159265358979323846264338327950288L));
  // Phi + x phi < 0 underflows in long double: the smallest negative number (a zero of either
  // sign in every dtype, not an exact zero)
  if (x < -100 && std::isfinite(x)) return -std::numeric_limits<real>::denorm_min();
  return gelu_cdf_(x) + x * pdf;  // +-inf: inf * 0 = NaN, as PyTorch
}

inline real gelu_tanh_u_(real x) {
  const real beta = std::sqrt(2 / real(3.14159265358979323846264338327950288L));
  return beta * (x + real(0.044715L) * x * x * x);
}
inline real gelu_tanh(const cuact::gelu_tanh&, real x) {
  return x * sigmoid_(2 * gelu_tanh_u_(x));  // x (1 + tanh u) / 2; -inf: NaN
}
inline real gelu_tanh_derivative(const cuact::gelu_tanh&, real x) {
  const real beta = std::sqrt(2 / real(3.14159265358979323846264338327950288L));
  const real u = gelu_tanh_u_(x);
  const real e = std::exp(-2 * std::fabs(u)), q = 1 / (1 + e);
  const real du = beta * (1 + 3 * real(0.044715L) * x * x);
  // s + 2 x s (1 - s) u' with s = q above 0 and e q below (the sign survives underflow);
  // +-inf: inf * 0 = NaN, as PyTorch
  return u >= 0 ? q * (1 + 2 * x * e * q * du) : e * q * (1 + 2 * x * q * du);
}
}  // namespace reference

/// The table. Parameterized activations appear with non-default parameters (and, where the
/// defaults take another branch of the math, a second row with the defaults). Test parameters are
/// exactly representable in every dtype, so the reference's branch decisions (x * beta >
/// threshold, x > lambd) are the compute type's.
inline auto activation_table() {
  namespace r = reference;
  // derivative zero crossings (silu, mish, gelu, gelu_tanh): absolute bounds there
  const tolerances crossing{{4, 4}, {4, 4}, {1, 1.0 / 64}, {1, 1.0 / 64}};
  // tanhshrink: PyTorch's x - tanh(x) cancels near 0 for float and double: 3 ulp of x
  const tolerances shrink{{4, 0, 3}, {4, 0, 3}, {1}, {1}};
  return std::make_tuple(
      row("relu", cuact::relu{}, r::relu, r::relu_derivative, kinks{{0}, 1})
          .with_gradient(r::relu_gradient)
          .with_from_output(r::relu_derivative, r::relu_gradient),
      row("selu", cuact::selu{}, r::selu, r::selu_derivative, kinks{{0}, 1})
          .with_from_output(r::selu_from_output),
      row("relu6", cuact::relu6{}, r::relu6, r::relu6_derivative, kinks{{0, 6}, 2})
          .with_gradient(r::relu6_gradient)
          .with_from_output(r::relu6_derivative, r::relu6_gradient),
      row("hardtanh", cuact::hardtanh{-2.0, 3.5}, r::hardtanh, r::hardtanh_derivative,
          kinks{{-2, 3.5}, 2})
          .with_gradient(r::hardtanh_gradient)
          .with_from_output(r::hardtanh_derivative, r::hardtanh_gradient),
      row("leaky_relu", cuact::leaky_relu{}, r::leaky_relu, r::leaky_relu_derivative, kinks{{0}, 1})
          .with_from_output(r::leaky_relu_derivative),
      row("leaky_relu(0.25)", cuact::leaky_relu{0.25}, r::leaky_relu, r::leaky_relu_derivative,
          kinks{{0}, 1})
          .with_from_output(r::leaky_relu_derivative),
      row("elu(0.5)", cuact::elu{0.5}, r::elu, r::elu_derivative, kinks{{0}, 1})
          .with_from_output(r::elu_from_output),
      row("elu", cuact::elu{}, r::elu, r::elu_derivative, kinks{{0}, 1})
          .with_from_output(r::elu_from_output),
      row("celu(0.75)", cuact::celu{0.75}, r::celu, r::celu_derivative, kinks{{0}, 1})
          .with_from_output(r::celu_from_output),
      // double: erfc is documented at 5 ulp (CUDA, glibc)
      row("gelu", cuact::gelu{}, r::gelu, r::gelu_derivative)
          .with_tolerances(tolerances{{6}},
                           tolerances{{6, 4}, {4, 4}, {1, 1.0 / 64}, {1, 1.0 / 64}}),
      row("gelu_tanh", cuact::gelu_tanh{}, r::gelu_tanh, r::gelu_tanh_derivative)
          .with_derivative_tolerances(crossing),
      row("silu", cuact::silu{}, r::silu, r::silu_derivative).with_derivative_tolerances(crossing),
      row("mish", cuact::mish{}, r::mish, r::mish_derivative).with_derivative_tolerances(crossing),
      row("sigmoid", cuact::sigmoid{}, r::sigmoid, r::sigmoid_derivative)
          .with_from_output(r::sigmoid_from_output),
      row("logsigmoid", cuact::logsigmoid{}, r::logsigmoid, r::logsigmoid_derivative),
      row("tanh", cuact::tanh{}, r::tanh, r::tanh_derivative).with_from_output(r::tanh_from_output),
      row("hardsigmoid", cuact::hardsigmoid{}, r::hardsigmoid, r::hardsigmoid_derivative,
          kinks{{-3, 3}, 2})
          .with_gradient(r::hardsigmoid_gradient),
      row("hardswish", cuact::hardswish{}, r::hardswish, r::hardswish_derivative, kinks{{-3, 3}, 2})
          .with_gradient(r::hardswish_gradient),
      row("softplus(2,10)", cuact::softplus{2.0, 10.0}, r::softplus, r::softplus_derivative,
          kinks{{5}, 1}),
      row("softplus", cuact::softplus{}, r::softplus, r::softplus_derivative, kinks{{20}, 1}),
      row("softsign", cuact::softsign{}, r::softsign, r::softsign_derivative, kinks{{0}, 1}),
      row("tanhshrink", cuact::tanhshrink{}, r::tanhshrink, r::tanhshrink_derivative)
          // double tanh(x)^2: the square doubles tanh's relative error (glibc 2.39's tanh, on
          // the GPU machines' image, gave 5 ulp of the square near the bottom of its binade)
          .with_tolerances(shrink, tolerances{{6}, {4}, {1}, {1}}),
      row("softshrink(1.25)", cuact::softshrink{1.25}, r::softshrink, r::softshrink_derivative,
          kinks{{-1.25, 1.25}, 2})
          .with_gradient(r::softshrink_gradient),
      row("hardshrink", cuact::hardshrink{}, r::hardshrink, r::hardshrink_derivative,
          kinks{{-0.5, 0.5}, 2})
          .with_gradient(r::hardshrink_gradient),
      row("threshold(0.75,-2)", cuact::threshold{0.75, -2.0}, r::threshold, r::threshold_derivative,
          kinks{{0.75}, 1})
          .with_gradient(r::threshold_gradient));
}

/// Calls f(row) for every row of the table, in order.
template <class F>
void for_each_activation(F&& f) {
  std::apply([&](const auto&... rows) { (f(rows), ...); }, activation_table());
}

}  // namespace cuact_test
