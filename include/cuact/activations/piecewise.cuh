/// \file
/// Piecewise-linear activations: compares and selects, memory-bound at every width (cost::light).
/// Semantics, accuracy and the members' contract: cuact/activations.cuh and cuact/activation.cuh.
#pragma once

#include "../activation.cuh"
#include "../detail/math.cuh"
#include "../tuning.cuh"

namespace cuact {

/// ReLU: x > 0 ? x : +0; propagates NaN; relu(-0) = +0. PyTorch `torch.relu` semantics.
/// Backward as PyTorch `threshold_backward(dy, x, 0)`: dx = x > 0 ? dy : 0 (relu'(0) = 0).
struct relu {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// relu(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    // Not fmax: fmax(NaN, 0) is 0, and the hand-written kernels this replaces lost NaNs that way.
    return x > C(0) || x != x ? x : C(0);
  }
  /// relu'(x) (PyTorch's choice at the kink: relu'(0) = 0).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x > C(0) ? C(1) : C(0);
  }
  /// relu'(x) from y = relu(x).
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    return derivative(y);  // y > 0 exactly where x > 0
  }
  /// dy * relu'(x), a selection (NaN dy where the gradient is 0 gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x > C(0) ? dy : C(0);
  }
  /// dy * relu'(x) from y = relu(x), a selection.
  template <class C>
  CUACT_HOST_DEVICE C gradient_from_output(C dy, C y) const {
    return gradient(dy, y);
  }
};

/// ReLU6, PyTorch `F.relu6` (= hardtanh(x, 0, 6)): min(max(x, 0), 6); NaN propagates; relu6(-0) =
/// +0 (max orders -0 below +0). Backward as `hardtanh_backward`: dx = 0 < x < 6 ? dy : 0 (0 at
/// both kinks; a NaN x passes dy through).
struct relu6 {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// relu6(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return detail::clamp_keeping_nan(x, C(0), C(6));
  }
  /// relu6'(x) (PyTorch's choice at the kinks: 0 at x = 0 and x = 6).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x <= C(0) || x >= C(6) ? C(0) : C(1);
  }
  /// relu6'(x) from y = relu6(x).
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    return derivative(y);  // 0 < y < 6 exactly where 0 < x < 6
  }
  /// dy * relu6'(x), a selection (NaN dy where the gradient is 0 gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x <= C(0) || x >= C(6) ? C(0) : dy;
  }
  /// dy * relu6'(x) from y = relu6(x), a selection.
  template <class C>
  CUACT_HOST_DEVICE C gradient_from_output(C dy, C y) const {
    return gradient(dy, y);
  }
};

/// Hardtanh, PyTorch `F.hardtanh(x, min_val, max_val)`: clamp(x, min_val, max_val); NaN
/// propagates. Backward as `hardtanh_backward`: dx = min_val < x < max_val ? dy : 0. The bounds
/// are rounded to the compute type.
struct hardtanh {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// PyTorch's min_val (default -1.0).
  double min_val = -1.0;
  /// PyTorch's max_val (default 1.0).
  double max_val = 1.0;
  /// hardtanh(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    // the selects: its bounds may be -0, and the min / max gained nothing here (detail::
    // clamp_keeping_nan)
    return detail::clamp_by_selects(x, C(min_val), C(max_val));
  }
  /// hardtanh'(x) (PyTorch's choice at the kinks: 0 at min_val and max_val).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x <= C(min_val) || x >= C(max_val) ? C(0) : C(1);
  }
  /// hardtanh'(x) from y = hardtanh(x).
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    return derivative(y);  // min_val < y < max_val exactly where min_val < x < max_val
  }
  /// dy * hardtanh'(x), a selection (NaN dy where the gradient is 0 gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x <= C(min_val) || x >= C(max_val) ? C(0) : dy;
  }
  /// dy * hardtanh'(x) from y = hardtanh(x), a selection.
  template <class C>
  CUACT_HOST_DEVICE C gradient_from_output(C dy, C y) const {
    return gradient(dy, y);
  }
};

/// Leaky ReLU, PyTorch `F.leaky_relu(x, negative_slope)`: x > 0 ? x : negative_slope * x; NaN
/// propagates; -0 gives -0 * slope. Backward as `leaky_relu_backward`: x > 0 ? dy : dy * slope.
/// From the output only for negative_slope >= 0 (as PyTorch, which refuses the in-place backward
/// otherwise): a negative slope gives NaN there.
struct leaky_relu {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// PyTorch's negative_slope (default 0.01).
  double negative_slope = 0.01;
  /// leaky_relu(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return x > C(0) ? x : x * C(negative_slope);
  }
  /// leaky_relu'(x) (PyTorch's choice at the kink: negative_slope at 0).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x > C(0) ? C(1) : C(negative_slope);
  }
  /// leaky_relu'(x) from y = leaky_relu(x) (NaN for y <= 0 if negative_slope < 0).
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C y) const {
    const C slope = negative_slope >= 0 ? C(negative_slope) : C(NAN);
    return y > C(0) ? C(1) : slope;  // y > 0 exactly where x > 0, for slope >= 0
  }
};

/// Hardsigmoid, PyTorch `F.hardsigmoid`: min(max(x + 3, 0), 6) / 6; NaN propagates. Backward as
/// `hardsigmoid_backward`: dx = -3 < x < 3 ? dy / 6 : 0 (0 at both kinks and for NaN x).
struct hardsigmoid {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// hardsigmoid(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return detail::clamp_keeping_nan(x + C(3), C(0), C(6)) * C(1.0 / 6);  // x + 3 is never -0
  }
  /// hardsigmoid'(x) (PyTorch's choice at the kinks: 0 at x = -3 and x = 3).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x > C(-3) && x < C(3) ? C(1.0 / 6) : C(0);
  }
  /// dy * hardsigmoid'(x), a selection (NaN dy where the gradient is 0 gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x > C(-3) && x < C(3) ? dy * C(1.0 / 6) : C(0);
  }
};

/// Hardswish (Howard et al., "Searching for MobileNetV3", 2019), PyTorch `F.hardswish`:
/// x * min(max(x + 3, 0), 6) / 6; NaN propagates. As PyTorch's kernel: hardswish(x <= -3) = -0
/// (x * 0), hardswish(-inf) = NaN (-inf * 0), hardswish(-0) = -0. Unlike its float formula
/// (x * 6 * (1/6f)), x >= 3 gives x exactly and never overflows.
/// Backward as `hardswish_backward`: x <= -3 ? 0 : x < 3 ? dy * (x / 3 + 1/2) : dy (NaN x: dy),
/// with x / 3 + 1/2 as (x + 1.5) / 3, which cannot cancel at its zero x = -1.5. (The kinks as
/// torch 2.11's CUDA kernel measured: 0 at x = -3 and 1 at x = 3, the one-sided limits outside.)
struct hardswish {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// hardswish(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    const C t = detail::clamp_keeping_nan(x + C(3), C(0), C(6));  // x + 3 is never -0
    return x * (t * C(1.0 / 6));  // 6 * C(1/6) rounds to 1 in float and double
  }
  /// hardswish'(x) (PyTorch's choice at the kinks: 0 at x = -3, 1 at x = 3).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x <= C(-3) ? C(0) : x < C(3) ? (x + C(1.5)) * C(1.0 / 3) : C(1);
  }
  /// dy * hardswish'(x), a selection at and below x = -3 (NaN dy there gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x <= C(-3) ? C(0) : x < C(3) ? dy * ((x + C(1.5)) * C(1.0 / 3)) : dy;
  }
};

namespace detail {
/// What softshrink and hardshrink share: PyTorch's lambd (default 0.5; `cuact::softshrink{0.25}`
/// sets it) and their backward, PyTorch's `shrink_backward`: 0 for -lambd <= x <= lambd (PyTorch's
/// choice at the kinks and jumps), else 1.
struct shrink_backward {
  /// PyTorch's lambd (default 0.5).
  double lambd = 0.5;
  /// The shrink's derivative at x.
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x >= C(-lambd) && x <= C(lambd) ? C(0) : C(1);
  }
  /// dy times the derivative, a selection (NaN dy where the gradient is 0 gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x >= C(-lambd) && x <= C(lambd) ? C(0) : dy;
  }
};
}  // namespace detail

/// Softshrink, PyTorch `F.softshrink(x, lambd)`: x > lambd ? x - lambd : x < -lambd ? x + lambd
/// : 0; NaN propagates (as PyTorch's isnan check); softshrink(-0) = +0. lambd is rounded to the
/// compute type, as PyTorch rounds it to the tensor's type: for a lambd that type holds, x - lambd
/// is exact near the kinks (Sterbenz) and the result is correctly rounded; otherwise it is off by
/// at most the rounding of lambd. PyTorch refuses a negative lambd; here it gives the formula as
/// written. Backward as `shrink_backward`: |x| <= lambd ? 0 : dy.
struct softshrink : detail::shrink_backward {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// softshrink(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    const C l = C(lambd);
    if (l >= C(0)) {
      // The same bits as the formula below, in fewer dependent steps: one compare of |x| (false
      // for NaN, whose x - l is NaN), x - l with x's sign, one select. The formula's three
      // compares and selects keep 16-bit forwards below the copy ceiling where the budget is
      // tight.
      if constexpr (cuda::std::is_same_v<C, float>) {
        return fabsf(x) <= l ? 0.0f : x - copysignf(l, x);
      } else {
        return ::fabs(x) <= l ? C(0) : x - ::copysign(l, x);
      }
    }
    return x > l ? x - l : x < -l ? x + l : (x != x ? x : C(0));
  }
};

/// Hardshrink, PyTorch `F.hardshrink(x, lambd)`: -lambd <= x <= lambd ? 0 : x; NaN propagates;
/// hardshrink(-0) = +0. Backward as `shrink_backward`: |x| <= lambd ? 0 : dy.
struct hardshrink : detail::shrink_backward {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// hardshrink(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return x >= C(-lambd) && x <= C(lambd) ? C(0) : x;
  }
};

/// Threshold, PyTorch `F.threshold(x, threshold, value)`: x <= threshold ? value : x; NaN
/// propagates (NaN <= threshold is false). PyTorch has no defaults; {} is threshold 0, value 0.
/// Backward as `threshold_backward`: x <= threshold ? 0 : dy.
struct threshold {
  /// Cost hint (activation.cuh): a compare and a select: memory-bound at every width.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// PyTorch's threshold (no default there; 0.0 here).
  double threshold = 0.0;
  /// PyTorch's value (no default there; 0.0 here).
  double value = 0.0;
  /// threshold(x).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return x <= C(threshold) ? C(value) : x;
  }
  /// threshold'(x) (PyTorch's choice at the jump: 0 at x = threshold).
  template <class C>
  CUACT_HOST_DEVICE C derivative(C x) const {
    return x <= C(threshold) ? C(0) : C(1);
  }
  /// dy * threshold'(x), a selection (NaN dy where the gradient is 0 gives 0).
  template <class C>
  CUACT_HOST_DEVICE C gradient(C dy, C x) const {
    return x <= C(threshold) ? C(0) : dy;
  }
};

}  // namespace cuact
