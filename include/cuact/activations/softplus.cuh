/// \file
/// Activations built on log(1 + exp(x)): softplus and mish.
/// Semantics, accuracy and the members' contract: cuact/activations.cuh and cuact/activation.cuh.
#pragma once

#include "../activation.cuh"
#include "../detail/math.cuh"
#include "../detail/math/softplus.cuh"
#include "../tuning.cuh"

namespace cuact {

/// Softplus, PyTorch `F.softplus(x, beta, threshold)`: x * beta > threshold ? x :
/// log1p(exp(x * beta)) / beta (the switch compares the compute-type product, as PyTorch; with a
/// small threshold the forward jumps there, as PyTorch's). Below the switch as max(x, 0) +
/// log1p(exp(-|x beta|)) / beta, whose log1p argument stays in [0, 1] and which never overflows;
/// for float and double x * beta is carried in two parts (exp amplifies its rounding by
/// |x beta|). softplus(-inf) = 0, softplus(inf) = inf. Backward as `softplus_backward`:
/// x * beta > threshold ? 1 : sigmoid(x * beta), overflow-safe (PyTorch's z / (z + 1) is NaN
/// where exp overflows below a threshold above 88).
struct softplus {
  /// Cost hint (activation.cuh): exp and log.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// PyTorch's beta (default 1.0).
  double beta = 1.0;
  /// PyTorch's threshold (default 20.0): where x * beta exceeds it the result is x.
  double threshold = 20.0;

  /// softplus(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    // b.v = x * beta, b.tail = log1p(exp(-|x beta|)) / beta (detail/math/softplus.cuh)
    const auto b = detail::softplus_numerics::below_switch_of(x, beta, r);
    const C below = (b.v > C(0) ? x : C(0)) + b.tail;
    return b.v > C(threshold) ? x : below;
  }
  /// softplus'(x): 1 above the switch, sigmoid(x * beta) below.
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    return detail::softplus_numerics::derivative(x, beta, threshold, r);
  }
};

/// Mish (Misra, 2019), PyTorch `F.mish`: x * tanh(softplus(x)); NaN propagates; mish(-inf) = NaN
/// (-inf * 0, as PyTorch); mish(inf) = inf; mish(-0) = -0. tanh(log1p(u)) with u = exp(x) is the
/// rational (u^2 + 2u) / (u^2 + 2u + 2): from e = exp(-|x|), a / (a + b) with a = e (e + 2),
/// b = 2 for x <= 0 and a = 1 + 2e, b = 2e^2 above, a sum of positive terms that neither
/// overflows nor cancels (one exp and one division instead of exp, log1p and tanh); 16-bit
/// results take the rational in u itself, with u = exp(min(x, 20)) (half_parts_of). Backward as
/// `mish_backward`: t + x sigmoid(x) (1 - t^2), with 1 - t^2 = b (2a + b) / (a + b)^2;
/// mish'(+-inf) = NaN (inf * 0, as PyTorch).
struct mish : detail::mish_numerics {
  /// Cost hint (activation.cuh): tens of instructions per element.
  static constexpr cuact::cost cost = cuact::cost::heavy;
  /// mish(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      return float_forward(x);
    } else if constexpr (sizeof(C) == 4) {
      const half_parts h = half_parts_of(x);
      return x * ((h.ns * h.r) * 0x1p-64f);  // -inf: -inf * 0 = NaN
    } else {
      return wide_forward(x, r);
    }
  }
  /// mish'(x).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C derivative(C x, R r = {}) const {
    if constexpr (detail::accurate_float_v<R, C>) {
      return float_derivative(x, r);
    } else if constexpr (sizeof(C) == 4) {
      return half_derivative(x);
    } else {
      return wide_derivative(x, r);
    }
  }
};

}  // namespace cuact
