/// \file
/// Fused operations: each one pass over memory where the unfused sequence takes two or three.
///
/// - Gates (gate.cuh): out = gate(a, b) and its backward, on separate arrays (gate_forward,
///   gate_backward) or on the packed [rows, 2 * cols] layout (gate_forward_packed,
///   gate_backward_packed): gpt-oss's clamped SwiGLU (clamped_swiglu) or a gate of your own.
///   The GLU family (SwiGLU = silu, GeGLU = gelu, ReGLU = relu), out = act(a) * b, is the gate
///   activation_gate{act}: gated_forward, gated_backward and their packed forms take the
///   activation.
/// - Bias + activation: out[r, c] = act(x[r, c] + bias[c]) and its backward with dbias
///   (bias_forward, bias_backward).
/// - Activation with another output type: forward_cast (fp32 -> bf16, ...), forward_quantize
///   (fp8 with a scale, saturating, and the amax of the unscaled result).
/// - Composition: compose(f, g) = f after g, affine(act, alpha, beta) = act(alpha * x + beta),
///   linear{alpha, beta}: activations themselves, so every entry takes them.
///
/// Every entry takes any activation (activation.cuh), validates as cuact::transform does (null,
/// misaligned, overlapping, pageable or other-device arrays, sizes overflowing size_t:
/// cudaErrorInvalidValue / cudaErrorInvalidDevice, nothing launched), returns cudaError_t and
/// takes the stream last. Compute in float for 16-bit and 8-bit storage, double for double.
#pragma once

#include "detail/config.cuh"  // first: it rejects a host-only compiler

#include <cuda/std/cstddef>
#include <cuda/std/cstdint>
#include <cuda/std/tuple>  // the gate ops' results (gate.cuh)

#include "activation.cuh"
#include "detail/config.cuh"
#ifndef __CUDACC_RTC__
#include "detail/dispatch.cuh"  // host-only: validation and launch
#endif
#include "detail/fast_divmod.cuh"
#include "detail/kernels/l2_hint.cuh"  // the bias kernels' L2 policy
#ifndef __CUDACC_RTC__
#include "detail/fused_dispatch.cuh"
#endif
#include "detail/std.cuh"
#include "elementwise.cuh"
#include "gate.cuh"

namespace cuact {

// ---- composition ------------------------------------------------------------------------------

/// The activation alpha * x + beta (alpha and beta rounded to the compute type). Its derivative is
/// alpha, from the input or the output. Composed after another activation it scales that one's
/// output: x * sigmoid(1.702 x) = compose(linear{1 / 1.702}, affine(silu{}, 1.702)).
struct linear {
  /// Cost hint (activation.cuh): light.
  static constexpr cuact::cost cost = cuact::cost::light;
  /// Slope (default 1.0).
  double alpha = 1.0;
  /// Offset (default 0.0).
  double beta = 0.0;
  /// alpha * x + beta.
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return C(alpha) * x + C(beta);
  }
  /// alpha, from the input.
  template <class C>
  CUACT_HOST_DEVICE C derivative(C) const {
    return C(alpha);
  }
  /// alpha, from the output.
  template <class C>
  CUACT_HOST_DEVICE C derivative_from_output(C) const {
    return C(alpha);
  }
};

/// act(alpha * x + beta): an activation with a scaled and shifted input (alpha, beta rounded to the
/// compute type). Build with cuact::affine(act, alpha, beta). Derivatives by the chain rule:
/// alpha * act'(alpha * x + beta); from the output, alpha * act'(from y) where act has that; a
/// selection gradient (relu's) stays a selection: act.gradient(alpha * dy, alpha * x + beta).
/// Carries act's cost hints and math lengths (tuning_traits; one multiply-add more).
template <class Activation>
struct affine_activation : detail::tuning_of_affine<Activation> {
  /// The activation applied to alpha * x + beta.
  Activation act;
  /// Input scale (default 1.0).
  double alpha = 1.0;
  /// Input offset (default 0.0).
  double beta = 0.0;

  /// alpha * x + beta: act's argument.
  template <class C>
  CUACT_HOST_DEVICE C input(C x) const {
    return C(alpha) * x + C(beta);
  }
  /// act(alpha * x + beta).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R = {}) const {
    return detail::invoke_forward<R>(detail::preferred{}, act, input(x));
  }
  /// alpha * act'(alpha * x + beta), where act has derivative.
  template <class C, class R = rounded_to<C>, class A = Activation,
            cuda::std::enable_if_t<detail::has_derivative<A>, int> = 0>
  CUACT_HOST_DEVICE C derivative(C x, R = {}) const {
    return C(alpha) * detail::invoke_derivative<R>(detail::preferred{}, act, input(x));
  }
  /// act.gradient(alpha * dy, alpha * x + beta), where act has gradient.
  template <class C, class R = rounded_to<C>, class A = Activation,
            cuda::std::enable_if_t<detail::has_gradient<A>, int> = 0>
  CUACT_HOST_DEVICE C gradient(C dy, C x, R = {}) const {
    return detail::invoke_gradient<R>(detail::preferred{}, act, C(alpha) * dy, input(x));
  }
  /// alpha * act'(alpha * x + beta) from y = act(alpha * x + beta), where act has that.
  template <class C, class R = rounded_to<C>, class A = Activation,
            cuda::std::enable_if_t<detail::has_derivative_from_output<A>, int> = 0>
  CUACT_HOST_DEVICE C derivative_from_output(C y, R = {}) const {
    return C(alpha) * detail::invoke_derivative_from_output<R>(detail::preferred{}, act, y);
  }
  /// act.gradient_from_output(alpha * dy, y), where act has gradient_from_output.
  template <class C, class R = rounded_to<C>, class A = Activation,
            cuda::std::enable_if_t<detail::has_gradient_from_output<A>, int> = 0>
  CUACT_HOST_DEVICE C gradient_from_output(C dy, C y, R = {}) const {
    return detail::invoke_gradient_from_output<R>(detail::preferred{}, act, C(alpha) * dy, y);
  }
};

/// act(alpha * x + beta) as an activation (affine_activation).
template <class Activation>
constexpr affine_activation<Activation> affine(Activation act, double alpha, double beta = 0.0) {
  return {{}, act, alpha, beta};
}

/// f(g(x)): f after g. Build with cuact::compose(f, g). The backward exists when both parts have
/// one, by the chain rule as a chain of gradients: dx = g.gradient(f.gradient(dy, g(x)), x)
/// (each part's gradient is its own `gradient` where it has one, else dy * derivative), so
/// selections stay selections; `derivative` = f'(g(x)) * g'(x) where both have derivatives.
/// No backward from the output (it would need g(x)). Heavy when either part is; short float math
/// (tuning_traits) is not carried: two short parts make a longer one.
template <class F, class G>
struct composition : detail::tuning_of_composition<F, G> {
  /// The outer activation.
  F f;
  /// The inner activation.
  G g;

  /// f(g(x)).
  template <class C, class R = rounded_to<C>>
  CUACT_HOST_DEVICE C operator()(C x, R = {}) const {
    return detail::invoke_forward<R>(detail::preferred{}, f,
                                     detail::invoke_forward<R>(detail::preferred{}, g, x));
  }
  /// f'(g(x)) * g'(x), where both have derivative.
  template <
      class C, class R = rounded_to<C>, class FF = F,
      cuda::std::enable_if_t<detail::has_derivative<FF> && detail::has_derivative<G>, int> = 0>
  CUACT_HOST_DEVICE C derivative(C x, R = {}) const {
    const C inner = detail::invoke_forward<R>(detail::preferred{}, g, x);
    return detail::invoke_derivative<R>(detail::preferred{}, f, inner) *
           detail::invoke_derivative<R>(detail::preferred{}, g, x);
  }
  /// g.gradient(f.gradient(dy, g(x)), x) (else dy * derivative), where both have derivative.
  template <class C, class R = rounded_to<C>, class FF = F,
            cuda::std::enable_if_t<has_derivative_v<FF> && has_derivative_v<G>, int> = 0>
  CUACT_HOST_DEVICE C gradient(C dy, C x, R = {}) const {
    const C inner = detail::invoke_forward<R>(detail::preferred{}, g, x);
    return detail::gradient_at<R>(g, detail::gradient_at<R>(f, dy, inner), x);
  }
};

/// f after g as an activation (composition): compose(f, g)(x) = f(g(x)).
template <class F, class G>
constexpr composition<F, G> compose(F f, G g) {
  return {{}, f, g};
}

// ---- the fused ops (elementwise operations, as forward_op; for cuact::transform too) ----------

namespace detail {
/// The accuracy at which a gated op computes act(a), whose result is multiplied before it is
/// stored as Out. A product keeps its factor's relative error, so Out's accuracy suffices where
/// Out has float's range (float, double, bf16: a bf16 SwiGLU with silu at full float accuracy
/// falls well below the copy ceiling). Where Out's range is narrower (__half, fp8), an
/// activation at Out's accuracy may flush a value below Out's range to 0 that b brings back into
/// it (silu(-20) * 65504 is a normal half), so act(a) is computed at full compute accuracy.
template <class Out, class C>
using product_accuracy =
    cuda::std::conditional_t<cuda::std::is_same_v<Out, __half> || is_output_only_type_v<Out>,
                             rounded_to<C>, rounded_to<Out>>;
}  // namespace detail

/// out = gate(a, b) (gate.cuh), the gate at detail::product_accuracy<Out>. Carries the tuning
/// traits of detail::gate_hint_source_t<Gate> (an activation_gate's: its activation's).
template <class Gate, class Out>
struct gate_op : detail::tuning_of_gated<detail::gate_hint_source_t<Gate>> {
  /// The gate.
  Gate gate;
  /// gate(a, b).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C a, C b) const {
    return detail::invoke_forward<detail::product_accuracy<Out, C>>(detail::preferred{}, gate, a,
                                                                    b);
  }
};

/// (da, db) = gate_gradient(gate, dy, a, b) (gate.cuh), at detail::product_accuracy<Out> as
/// gate_op.
template <class Gate, class Out>
struct gate_gradient_op : detail::tuning_of_activation<detail::gate_hint_source_t<Gate>> {
  /// The gate.
  Gate gate;
  /// (da, db) for inputs a, b and upstream gradient dy.
  template <class C>
  CUACT_HOST_DEVICE cuda::std::tuple<C, C> operator()(C a, C b, C dy) const {
    return gate_gradient<detail::product_accuracy<Out, C>>(gate, dy, a, b);
  }
};

/// out = act(a) * b: gate_op of activation_gate<Activation>. Build as `gated_op<A, Out>{{}, {act}}`.
template <class Activation, class Out>
using gated_op = gate_op<activation_gate<Activation>, Out>;

/// (da, db) = (gradient of act at a for upstream dy * b, dy * act(a)): gate_gradient_op of
/// activation_gate<Activation> (a selection for relu: a > 0 ? dy * b : 0).
template <class Activation, class Out>
using gated_gradient_op = gate_gradient_op<activation_gate<Activation>, Out>;

/// out = act(x + bias), x + bias in the compute type (not rounded to the storage type first).
/// A forward: it carries the activation's forward hint (gelu's `cost::compute_bound`).
template <class Activation, class Out>
struct bias_op : detail::tuning_of_forward<Activation> {
  /// The activation.
  Activation act;
  /// act(x + bias).
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x, C bias) const {
    return detail::invoke_forward<rounded_to<Out>>(detail::preferred{}, act, x + bias);
  }
};

/// dx = dy * act'(x + bias) (act's gradient where it has one).
template <class Activation, class Out>
struct bias_gradient_op : detail::tuning_of_activation<Activation> {
  /// The activation.
  Activation act;
  /// dx for input x, bias and upstream gradient dy.
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x, C bias, C dy) const {
    return detail::gradient_at<rounded_to<Out>>(act, dy, x + bias);
  }
};

namespace detail {
/// bias_op over the flat [rows, cols] layout in one elementwise pass (fused_dispatch.cuh:
/// run_bias_forward): element i's column is i % cols (fast_divmod: the launch keeps i below 2^31,
/// splitting larger layouts into chunks of whole rows), and a vector's bias vector is loaded in the
/// load phase beside its x (takes_vector_index), under L2 evict_last (load_kept_in_l2: the
/// streaming x and out no longer push the bias out to DRAM). The elementwise engine
/// then runs it, one-vector kernel included (24-32 registers, where the row walk holds 47-70).
/// Vectors start at multiples of the vector width (x, out and bias aligned to it; cols a multiple
/// of it: flat_bias_applies), so a vector lies in one row and its bias vector is aligned.
template <class Activation, class T, class Out>
struct flat_bias_op : tuning_of_forward<Activation> {
  static constexpr bool takes_element_index = true;
  static constexpr bool takes_vector_index = true;
  /// act(x + bias) on compute-type values: the walk's op, so both paths give the same results.
  bias_op<Activation, Out> add_and_activate;
  /// bias[cols].
  const T* bias;
  /// Division by cols.
  fast_divmod columns;
  /// Elements of one grid-stride step of the launch when that is whole rows, else 0 (set by
  /// run_bias_forward: flat_bias_whole_row_blocks): a thread's columns are then the same on every
  /// step, and the engine divides once (vector_state_repeat).
  cuda::std::size_t whole_rows_step = 0;

  /// The step at which a vector's column repeats, where the launch made one (0: none).
  CUACT_HOST_DEVICE cuda::std::size_t vector_state_repeat() const { return whole_rows_step; }
  /// Element i's column (i below 2^31 within a launch).
  CUACT_HOST_DEVICE cuda::std::size_t column(cuda::std::size_t i) const {
    return columns.remainder(static_cast<cuda::std::uint32_t>(i));
  }
  /// Element i (the scalar tail of a chunk).
  template <class C>
  CUACT_HOST_DEVICE C operator()(cuda::std::size_t i, C x) const {
    return add_and_activate(x, C(to_compute(bias[column(i)])));
  }
  /// The column of the vector at element `first` (what its bias vector is looked up by).
  CUACT_HOST_DEVICE cuda::std::uint32_t vector_key(cuda::std::size_t first) const {
    return static_cast<cuda::std::uint32_t>(column(first));
  }
  /// The bias of the Width columns from column `c`.
  template <int Width>
  CUACT_HOST_DEVICE vector_of<T, Width> load_vector_at(cuda::std::uint32_t c) const {
    return load_kept_in_l2(reinterpret_cast<const vector_of<T, Width>*>(bias + c));
  }
  /// The bias of the Width columns from element `first`'s.
  template <int Width>
  CUACT_HOST_DEVICE vector_of<T, Width> load_vector(cuda::std::size_t first) const {
    return load_vector_at<Width>(vector_key(first));
  }
  /// act(x + bias) for each lane.
  template <class C, int Width>
  CUACT_HOST_DEVICE vector_of<C, Width> apply_vector(const vector_of<T, Width>& b,
                                                     const vector_of<C, Width>& x) const {
    vector_of<C, Width> y;
    CUACT_UNROLL
    for (int j = 0; j < Width; ++j) {
      y.elements[j] = add_and_activate(x.elements[j], C(to_compute(b.elements[j])));
    }
    return y;
  }
};

/// act(x) * scale, keeping max |act(x)| in *amax (quantize_thread points it at a variable of the
/// calling thread). The math is forward_op's at the accuracy of Out.
template <class Activation, class Out>
struct amax_op : tuning_of_activation<Activation> {
  Activation act;
  float scale;
  float* amax;
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return scale_folding_amax(invoke_forward<rounded_to<Out>>(preferred{}, act, x), scale, amax);
  }
};

template <class Activation, class C>
constexpr void check_gated_backward() {
  check_activation<Activation, C>();
  static_assert(has_derivative_v<Activation>,
                "cuact: this backward needs the activation's `template <class C> __host__ "
                "__device__ C derivative(C x) const` (or gradient(C dy, C x))");
}
}  // namespace detail

// ---- gated activations ------------------------------------------------------------------------

/// Which half of each packed row is the gate's a (the half an activation_gate activates).
enum class gate_half {
  first,   ///< act(row[0, cols)) * row[cols, 2 cols): TransformerEngine's swiglu/geglu/reglu
  second,  ///< row[0, cols) * act(row[cols, 2 cols)): torch.nn.GLU / F.glu
};

// Host-only from here: the entries validate and launch (NVRTC compiles device code).
#ifndef __CUDACC_RTC__
/// out[i] = gate(a[i], b[i]) for i in [0, n) (gate.cuh: the gate concept). T: float, double,
/// __half, __nv_bfloat16; U: those or __nv_fp8_e4m3 / __nv_fp8_e5m2 (saturating). out may equal a
/// or b (same type, in place).
template <int VecWidth = auto_width, class Gate, class T, class U>
cudaError_t gate_forward(Gate gate, const T* a, const T* b, U* out, cuda::std::size_t n,
                         cudaStream_t stream = nullptr) {
  check_gate<Gate, detail::compute_t<T>>();
  return detail::run_elementwise<VecWidth>(
      gate_op<Gate, U>{{}, gate}, outputs(out), n, inputs(a, b), stream,
      detail::declared_cost<detail::gate_hint_source_t<Gate>>, detail::every_input_in_place);
}

/// (da[i], db[i]) = gate_gradient(gate, dy[i], a[i], b[i]) (gate.cuh), in one pass (reads a, b,
/// dy; writes da, db). da may equal a or dy, db may equal b or dy (in place); da and db never
/// overlap.
template <int VecWidth = auto_width, class Gate, class T>
cudaError_t gate_backward(Gate gate, const T* a, const T* b, const T* dy, T* da, T* db,
                          cuda::std::size_t n, cudaStream_t stream = nullptr) {
  check_gate_backward<Gate, detail::compute_t<T>>();
  return detail::run_elementwise<VecWidth>(
      gate_gradient_op<Gate, T>{{}, gate}, outputs(da, db), n, inputs(a, b, dy), stream,
      detail::declared_cost<detail::gate_hint_source_t<Gate>>, detail::every_input_in_place);
}

/// The packed layout: `ab` is [rows, 2 * cols] row-major, out [rows, cols]; per row, the gate's
/// a half and b half as `activated` says (first: a = row[0, cols), TransformerEngine's
/// convention, the default; second: a = row[cols, 2 cols), torch.nn.GLU's).
/// out[r, c] = gate(a[r, c], b[r, c]). out never overlaps ab. Vector accesses where cols is a
/// multiple of the vector width and the pointers co-align; otherwise scalar (correct, slower).
template <int VecWidth = auto_width, class Gate, class T, class U>
cudaError_t gate_forward_packed(Gate gate, const T* ab, U* out, cuda::std::size_t rows,
                                cuda::std::size_t cols, gate_half activated = gate_half::first,
                                cudaStream_t stream = nullptr) {
  check_gate<Gate, detail::compute_t<T>>();
  using detail::array_role;
  const detail::array_arg arrays[] = {
      detail::array_of(out, detail::checked_elements(rows, cols), array_role::output),
      detail::array_of(ab, detail::checked_elements(rows, cols, 2), array_role::input)};
  const cuda::std::size_t a_at = activated == gate_half::first ? 0 : cols;
  const cuda::std::size_t b_at = activated == gate_half::first ? cols : 0;
  const T* a = ab == nullptr ? nullptr : ab + a_at;
  const T* b = ab == nullptr ? nullptr : ab + b_at;
  return detail::run_rows<VecWidth>(gate_op<Gate, U>{{}, gate}, outputs(out), {cols}, rows, cols,
                                    inputs(a, b), {2 * cols, 2 * cols}, arrays, 2, stream,
                                    detail::declared_cost<detail::gate_hint_source_t<Gate>>);
}

/// Backward of gate_forward_packed: dab [rows, 2 * cols] receives da and db in the halves `ab`
/// has a and b; dy is [rows, cols]. dab may equal ab (in place); no other overlap.
template <int VecWidth = auto_width, class Gate, class T>
cudaError_t gate_backward_packed(Gate gate, const T* ab, const T* dy, T* dab,
                                 cuda::std::size_t rows, cuda::std::size_t cols,
                                 gate_half activated = gate_half::first,
                                 cudaStream_t stream = nullptr) {
  check_gate_backward<Gate, detail::compute_t<T>>();
  using detail::array_role;
  const cuda::std::size_t packed = detail::checked_elements(rows, cols, 2);
  const detail::array_arg arrays[] = {
      detail::array_of(dab, packed, array_role::output),
      detail::array_of(ab, packed, array_role::input_or_in_place),
      detail::array_of(dy, detail::checked_elements(rows, cols), array_role::input)};
  const cuda::std::size_t a_at = activated == gate_half::first ? 0 : cols;
  const cuda::std::size_t b_at = activated == gate_half::first ? cols : 0;
  const auto at = [](auto* p, cuda::std::size_t offset) { return p == nullptr ? p : p + offset; };
  const cuda::std::size_t pitch = 2 * cols;
  return detail::run_rows<VecWidth>(
      gate_gradient_op<Gate, T>{{}, gate}, outputs(at(dab, a_at), at(dab, b_at)), {pitch, pitch},
      rows, cols, inputs(at(ab, a_at), at(ab, b_at), dy), {pitch, pitch, cols}, arrays, 3, stream,
      detail::declared_cost<detail::gate_hint_source_t<Gate>>);
}

/// out[i] = act(a[i]) * b[i]: gate_forward of activation_gate{act} (same types and aliasing).
template <int VecWidth = auto_width, class Activation, class T, class U>
cudaError_t gated_forward(Activation act, const T* a, const T* b, U* out, cuda::std::size_t n,
                          cudaStream_t stream = nullptr) {
  check_activation<Activation, detail::compute_t<T>>();
  return gate_forward<VecWidth>(activation_gate<Activation>{act}, a, b, out, n, stream);
}

/// da[i] = dy[i] * b[i] * act'(a[i]), db[i] = dy[i] * act(a[i]): gate_backward of
/// activation_gate{act} (same aliasing).
template <int VecWidth = auto_width, class Activation, class T>
cudaError_t gated_backward(Activation act, const T* a, const T* b, const T* dy, T* da, T* db,
                           cuda::std::size_t n, cudaStream_t stream = nullptr) {
  detail::check_gated_backward<Activation, detail::compute_t<T>>();
  return gate_backward<VecWidth>(activation_gate<Activation>{act}, a, b, dy, da, db, n, stream);
}

/// out[r, c] = act(a[r, c]) * b[r, c] on the packed layout: gate_forward_packed of
/// activation_gate{act}, `activated` naming the half act applies to.
template <int VecWidth = auto_width, class Activation, class T, class U>
cudaError_t gated_forward_packed(Activation act, const T* ab, U* out, cuda::std::size_t rows,
                                 cuda::std::size_t cols, gate_half activated = gate_half::first,
                                 cudaStream_t stream = nullptr) {
  check_activation<Activation, detail::compute_t<T>>();
  return gate_forward_packed<VecWidth>(activation_gate<Activation>{act}, ab, out, rows, cols,
                                       activated, stream);
}

/// Backward of gated_forward_packed: gate_backward_packed of activation_gate{act}.
template <int VecWidth = auto_width, class Activation, class T>
cudaError_t gated_backward_packed(Activation act, const T* ab, const T* dy, T* dab,
                                  cuda::std::size_t rows, cuda::std::size_t cols,
                                  gate_half activated = gate_half::first,
                                  cudaStream_t stream = nullptr) {
  detail::check_gated_backward<Activation, detail::compute_t<T>>();
  return gate_backward_packed<VecWidth>(activation_gate<Activation>{act}, ab, dy, dab, rows, cols,
                                        activated, stream);
}

// ---- bias + activation ------------------------------------------------------------------------

/// out[r, c] = act(x[r, c] + bias[c]) over [rows, cols] row-major x and out, bias [cols]. The sum
/// is formed in the compute type and not rounded to T before the activation. out may equal x (same
/// type, in place); bias overlaps no output. One pass, on one of two paths with the same results
/// (fused_dispatch.cuh: run_bias_forward): flat (the elementwise engine, the column from the
/// element index) where cols is a multiple of the vector width and x, out and bias are aligned to
/// it, else the row walk (kernels/rows.cuh: a thread loads its bias vector once and walks rows);
/// the walk also where it is faster (compute-bound 16-bit forwards where the budget is tight).
template <int VecWidth = auto_width, class Activation, class T, class U>
cudaError_t bias_forward(Activation act, const T* x, const T* bias, U* out, cuda::std::size_t rows,
                         cuda::std::size_t cols, cudaStream_t stream = nullptr) {
  check_activation<Activation, detail::compute_t<T>>();
  using detail::array_role;
  const cuda::std::size_t n = detail::checked_elements(rows, cols);
  const detail::array_arg arrays[] = {detail::array_of(out, n, array_role::output),
                                      detail::array_of(x, n, array_role::input_or_in_place),
                                      detail::array_of(bias, cols, array_role::input)};
  // The walk, where the flat pass does not apply or loses: bias (input 1) broadcast, each thread
  // loading it once for all the rows it walks, with the walk's cap on rows in flight (two rows
  // where float math is compute-bound: registers decide). Float by the input type: a float x with
  // a 16-bit out holds and computes float vectors as float to float does. (bias_walks' float test,
  // on the bytes an element moves, answers another question: whether the device's instruction
  // budget is tight, which a 16-bit output loosens.)
  constexpr bool compute_bound_float =
      detail::forward_cost<Activation> == detail::cost_hint::compute_bound && sizeof(T) >= 4;
  constexpr unsigned walk_load_bytes = compute_bound_float ? detail::compute_bound_walk_load_bytes
                                                           : detail::max_walk_load_bytes_per_thread;
  const auto walk = [&](int device) {
    return detail::launch_rows<VecWidth, detail::broadcast_input(1), walk_load_bytes>(
        bias_op<Activation, U>{{}, act}, outputs(out), {cols}, rows, cols, inputs(x, bias),
        {cols, cuda::std::size_t(0)}, device, stream, detail::forward_cost<Activation>);
  };
  return detail::run_bias_forward<VecWidth>(
      detail::flat_bias_op<Activation, T, U>{{}, {{}, act}, bias, {}}, x, bias, out, rows, cols,
      arrays, 3, stream, detail::forward_cost<Activation>, walk);
}

/// Bytes of workspace bias_backward needs for [rows, cols] of T (partial column sums: one
/// compute-type value per row chunk and column; a function of the shape only).
template <class T, int VecWidth = auto_width>
cuda::std::size_t bias_backward_workspace_bytes(cuda::std::size_t rows, cuda::std::size_t cols) {
  return detail::bias_gradient_workspace<VecWidth, T>(rows, cols);
}

/// Backward of bias_forward: dx[r, c] = dy[r, c] * act'(x[r, c] + bias[c]) and dbias[c] = the sum
/// over r of dx[r, c] (as stored in T), accumulated in float (double for double) in a fixed order
/// that depends only on (rows, cols, T): the rows in chunks of consecutive rows, each chunk summed
/// in row order, the chunks' sums added in chunk order (detail/kernels/column_sum.cuh). Equal
/// inputs give bit-identical dbias on every run and GPU. dx may equal x or dy (in place); dbias
/// overlaps nothing. rows == 0: dbias = 0. Two kernels; `workspace` (at least
/// bias_backward_workspace_bytes, aligned to the compute type) holds the partial sums.
template <int VecWidth = auto_width, class Activation, class T>
cudaError_t bias_backward(Activation act, const T* x, const T* bias, const T* dy, T* dx, T* dbias,
                          cuda::std::size_t rows, cuda::std::size_t cols, void* workspace,
                          cuda::std::size_t workspace_bytes, cudaStream_t stream = nullptr) {
  detail::check_gated_backward<Activation, detail::compute_t<T>>();
  return detail::run_bias_gradient<VecWidth>(bias_gradient_op<Activation, T>{{}, act}, x, bias, dy,
                                             dx, dbias, rows, cols, workspace, workspace_bytes,
                                             stream);
}

/// bias_backward with its workspace from the stream-ordered allocator (cudaMallocAsync and
/// cudaFreeAsync on `stream`; capturable in a CUDA graph).
template <int VecWidth = auto_width, class Activation, class T>
cudaError_t bias_backward(Activation act, const T* x, const T* bias, const T* dy, T* dx, T* dbias,
                          cuda::std::size_t rows, cuda::std::size_t cols,
                          cudaStream_t stream = nullptr) {
  return bias_backward<VecWidth>(act, x, bias, dy, dx, dbias, rows, cols, nullptr, 0, stream);
}

// ---- activation + cast / quantize -------------------------------------------------------------

/// out[i] = act(in[i]) stored as U: T float, double, __half, __nv_bfloat16; U any of those or
/// __nv_fp8_e4m3 / __nv_fp8_e5m2 (round to nearest even; fp8 saturates to its largest finite
/// value, NaN stays NaN). The activation computes at U's accuracy (`rounded_to<U>`).
template <int VecWidth = auto_width, class Activation, class T, class U>
cudaError_t forward_cast(Activation act, const T* in, U* out, cuda::std::size_t n,
                         cudaStream_t stream = nullptr) {
  check_activation<Activation, detail::compute_t<T>>();
  return detail::run_elementwise<VecWidth>(forward_op<Activation, U>{{}, act}, outputs(out), n,
                                           inputs(in), stream, detail::declared_cost<Activation>,
                                           detail::every_input_in_place);
}

/// What forward_quantize does with *amax first.
enum class amax_update {
  reset,       ///< zero it on the stream first: *amax = max |act(in[i])| of this call
  accumulate,  ///< keep it: *amax = max(*amax, max |act(in[i])|) (caller zeroes it when due)
};

namespace detail {
/// The bf16 -> fp8 quantize through a table of act's float results (kernels/table.cuh:
/// bf16_table_quantize_op), whatever act's hint: forward_quantize takes it where policy.cuh's
/// tabulates admits it (functors without a hint) and it is measured faster (table_measure.cuh);
/// the tests and the bench also call it for built-in activations. Returns cudaErrorNotSupported, nothing launched, where there is no table buffer.
template <int VecWidth, class Activation, class U>
cudaError_t quantize_tabulated(Activation act, const __nv_bfloat16* in, U* out, cuda::std::size_t n,
                               float scale, const float* scale_in_memory, float* amax, bool reset,
                               cudaStream_t stream) {
  using table_op = bf16_table_quantize_op<forward_op<Activation, U>, U>;
  return run_quantize<VecWidth, true>(table_op{{{}, act}, nullptr, scale, nullptr}, out, n, in,
                                      amax, scale_in_memory, reset, stream,
                                      declared_cost<Activation>);
}

/// What names a bf16 -> fp8 quantize's measurement (table_measure.cuh): its activation, output
/// and vector width.
template <int VecWidth, class Activation, class U>
struct quantize_choice_key {};

/// Both forward_quantize entries: the scale by value, or from `scale_in_memory` where not null.
template <int VecWidth, class Activation, class T, class U>
cudaError_t quantize(Activation act, const T* in, U* out, cuda::std::size_t n, float scale,
                     const float* scale_in_memory, float* amax, amax_update update,
                     cudaStream_t stream) {
  check_activation<Activation, compute_t<T>>();
  const bool reset = update == amax_update::reset;
  if constexpr (cuda::std::is_same_v<T, __nv_bfloat16> && sizeof(U) == 1) {
    // bf16 -> fp8 of a functor without a hint through a table of its float results
    // (kernels/table.cuh: bf16_table_quantize_op; policy.cuh, tabulates) where measured faster
    // than direct math (table_measure.cuh), per device
    if (tabulates(forward_cost<Activation>, n)) {
      int device = 0;
      if (cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();
        device = -1;  // no measurement: the table
      }
      return run_table_or_direct<quantize_choice_key<VecWidth, Activation, U>>(
          device, stream, n,
          [&] {
            return quantize_tabulated<VecWidth>(act, in, out, n, scale, scale_in_memory, amax,
                                                reset, stream);
          },
          [&] {
            return run_quantize<VecWidth>(amax_op<Activation, U>{{}, act, scale, nullptr}, out, n,
                                          in, amax, scale_in_memory, reset, stream,
                                          declared_cost<Activation>);
          });
    }
  }
  return run_quantize<VecWidth>(amax_op<Activation, U>{{}, act, scale, nullptr}, out, n, in, amax,
                                scale_in_memory, reset, stream, declared_cost<Activation>);
}
}  // namespace detail

/// out[i] = saturate(act(in[i]) * scale) stored as U (usually __nv_fp8_e4m3 or __nv_fp8_e5m2), and
/// *amax = max over i of |act(in[i])| (unscaled, NaN skipped), a float in device memory: the
/// recipe of TransformerEngine's Float8Quantizer (the caller derives the next scale and
/// scale_inv = 1 / scale from the amax). One pass; one atomicMax per block. n == 0: nothing
/// launched, *amax unchanged.
template <int VecWidth = auto_width, class Activation, class T, class U>
cudaError_t forward_quantize(Activation act, const T* in, U* out, cuda::std::size_t n, float scale,
                             float* amax, amax_update update = amax_update::reset,
                             cudaStream_t stream = nullptr) {
  return detail::quantize<VecWidth>(act, in, out, n, scale, nullptr, amax, update, stream);
}

/// forward_quantize with the scale in device memory (a float each thread reads once), as
/// TransformerEngine's delayed scaling keeps it: the next scale, computed on the GPU from the
/// amax history, needs no copy to the host. `scale` is an input: it may not overlap out or amax.
template <int VecWidth = auto_width, class Activation, class T, class U>
cudaError_t forward_quantize(Activation act, const T* in, U* out, cuda::std::size_t n,
                             const float* scale, float* amax,
                             amax_update update = amax_update::reset,
                             cudaStream_t stream = nullptr) {
  if (n != 0 && scale == nullptr) {
    return detail::reject(cudaErrorInvalidValue,
                          "forward_quantize: scale: n > 0 with a null pointer");
  }
  return detail::quantize<VecWidth>(act, in, out, n, 1.0f, scale, amax, update, stream);
}
#endif  // __CUDACC_RTC__

}  // namespace cuact
