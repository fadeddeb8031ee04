/// \file
/// cuact as PyTorch operators. Include only in code built against PyTorch (torch.utils.cpp_extension
/// or CMake with Torch), after or instead of <cuact/cuact.cuh>.
///
/// One line registers an activation as a family of operators in your namespace:
///
///     struct swish {                                    // any cuact activation
///       template <class C> __host__ __device__ C operator()(C x) const { return x / (C(1) + exp(-x)); }
///       template <class C> __host__ __device__ C derivative(C x) const { ... }   // optional
///     };
///     TORCH_LIBRARY(myops, m) {
///       CUACT_TORCH_OP_FAMILY(m, myops, swish, swish, "");   // (library, namespace, op name, type, params)
///     }
///
/// defines, with CUDA kernels, autograd and version-counter bumps:
///
///     myops::swish(Tensor x, P) -> Tensor                         functional
///     myops::swish_(Tensor(a!) x, P) -> ()                        in place
///     myops::swish.out(Tensor x, P, *, Tensor(a!) out) -> ()      into `out`
///     myops::swish_backward(Tensor grad, Tensor x, P) -> Tensor   when the type has derivative(x)
///     myops::swish_backward_from_output(Tensor grad, Tensor y, P) -> Tensor
///                                                                 when it has derivative_from_output(y)
///
/// P is the schema parameter list, e.g. "float alpha=1.0, float beta=2.0": `float` in a schema is
/// a C++ double; the type is aggregate-initialized from them in order (so its parameters are its
/// first public members, declared double). Fake (meta) implementations for torch.compile come from
/// Python: `cuact_torch.register_fakes("myops")` (the fake must be Python to handle symbolic shapes).
///
/// Layout: a dense non-overlapping input (any strides) is processed as flat memory and the output
/// keeps its strides, as torch.relu does; any other input is made contiguous and so is the output.
/// Backward: when grad and x are dense with equal strides the result has those strides, else it
/// is contiguous. cuact_torch/_fakes.py implements the same rule; keep them in step. A grad that
/// is one element broadcast (the expanded gradient of a sum) is read in place, not copied dense.
///
/// Autograd: the functional op saves x and calls NAME_backward. The in-place op saves its output
/// and calls NAME_backward_from_output when the type has derivative_from_output and
/// `cuact::torch_ops::from_output_rule<T>::valid(act)` holds (specialize it for parameter
/// conditions, as done below for elu, celu and leaky_relu); otherwise it saves a copy of x first,
/// as PyTorch's generated in-place autograd does. The out variant refuses inputs that require grad.
#pragma once

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/SmallVector.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/library.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#ifndef CUACT_CHECK_POINTER_ATTRIBUTES
/// \brief 0 here: the tensors' device is checked by this header (check_tensor, check_like,
/// CUDAGuard), so cuact skips its per-pointer cudaPointerGetAttributes (detail/validate.cuh).
#define CUACT_CHECK_POINTER_ATTRIBUTES 0
#endif
#include "cuact.cuh"

namespace cuact {
namespace torch_ops {

/// Number of comma-separated parameters in a schema parameter list ("" has none).
constexpr std::size_t count_params(const char* params) {
  std::size_t commas = 0;
  bool any = false;
  for (; *params != '\0'; ++params) {
    if (*params == ',') {
      ++commas;
    } else if (*params != ' ') {
      any = true;
    }
  }
  return any ? commas + 1 : 0;
}

/// Whether the parameters of `act` allow the gradient from the output (PyTorch refuses in-place
/// elu/celu with alpha < 0 and leaky_relu with a negative slope for the same reason: y no longer
/// determines x). Specialize for your own activations with such conditions.
template <class A, class = void>
struct from_output_rule {
  static bool valid(const A&) { return true; }
};

/// Why PyTorch's own op refuses the parameters of `act`, or nullptr where it does not: the forward
/// ops (functional, in-place, out) then raise before they touch a tensor, as PyTorch's do
/// (cuact_torch/csrc/ops.h: softshrink with lambd < 0 or NaN, celu with alpha = 0). The C++
/// policies themselves take any value. Specialize for your own activations with such conditions.
template <class A, class = void>
struct parameter_rule {
  static const char* refusal(const A&) { return nullptr; }
};

/// True when the layout of (sizes, strides) covers exactly numel consecutive elements, in some
/// order: then the tensor is processed as flat memory. Size-1 dimensions do not count; a tensor
/// with a zero-size dimension qualifies. Mirrored by cuact_torch/_fakes.py:_flat_dense.
inline bool flat_dense(at::IntArrayRef sizes, at::IntArrayRef strides) {
  c10::SmallVector<std::pair<int64_t, int64_t>, 8> dims;  // (stride, size) of dims with size > 1
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return true;
    if (sizes[d] != 1) dims.emplace_back(strides[d], sizes[d]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}
/// A contiguous tensor is flat-dense; its flag is cached, so most calls skip the sort.
inline bool flat_dense(const at::Tensor& t) {
  return t.is_contiguous() || flat_dense(t.sizes(), t.strides());
}

/// True when every element of t is one element in memory (stride 0 wherever a size exceeds 1), as
/// in the expanded gradient of a sum; false for an empty t.
inline bool broadcast_of_one(const at::Tensor& t) {
  if (t.numel() == 0) return false;
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1 && strides[d] != 0) return false;
  }
  return true;
}

/// The backward from the input for a dy that is one element broadcast over x: dx =
/// gradient(dy[0], x), dy[0] read on the device, so that dy is never expanded into a dense copy
/// (PyTorch's TensorIterator reads such a dy in place too). An aggregate: {{{}, act}, dy}.
/// It takes the vector index (kernels/elementwise.cuh) so that dy[0] is read once per vector,
/// beside x's loads; that also keeps it off the bulk-tile kernels, so each (activation, dtype)
/// adds two kernels (the op's and its one-vector form: dispatch.cuh, with_launched_params).
template <class Activation, class T>
struct broadcast_gradient_op : cuact::gradient_op<Activation, T> {
  using gradient_t = cuact::gradient_op<Activation, T>;
  using value_t = cuact::detail::compute_t<T>;  // dy[0] as computed with
  static constexpr bool takes_element_index = true;
  static constexpr bool takes_vector_index = true;
  /// The one element of dy (device memory).
  const T* dy;
  /// Element i (the scalar head and tail).
  template <class C>
  CUACT_HOST_DEVICE C operator()(std::size_t, C x) const {
    return gradient_t::operator()(x, static_cast<C>(cuact::detail::to_compute(*dy)));
  }
  /// dy[0], for the vector at any element.
  template <int Width>
  CUACT_HOST_DEVICE value_t load_vector(std::size_t) const {
    return cuact::detail::to_compute(*dy);
  }
  /// The vector's gradients, each lane with dy[0].
  template <class C, int Width>
  CUACT_HOST_DEVICE cuact::vector_of<C, Width> apply_vector(
      value_t g, const cuact::vector_of<C, Width>& x) const {
    cuact::vector_of<C, Width> dx;
    CUACT_UNROLL
    for (int j = 0; j < Width; ++j) {
      dx.elements[j] = gradient_t::operator()(x.elements[j], static_cast<C>(g));
    }
    return dx;
  }
};

/// Whether `first` is flat-dense and `others` all have its strides: then the ops run on the
/// tensors' memory as it is and their results keep those strides.
inline bool flat_alike(const at::Tensor& first, std::initializer_list<const at::Tensor*> others) {
  if (!flat_dense(first)) return false;
  for (const at::Tensor* t : others) {
    if (t->strides() != first.strides()) return false;
  }
  return true;
}

/// A result of `like`'s sizes and device, of `dtype`: with its strides when `keep_strides`, else
/// contiguous. On a CUDA device it comes from at::detail::empty_cuda / empty_strided_cuda, the
/// allocation at::empty's own CUDA kernel makes, as PyTorch's structured kernels allocate their
/// outputs: at::empty would first pass the dispatcher twice (BackendSelect, then CUDA), on every
/// call. Every element of a cuact result is written, so at::empty's deterministic-mode NaN fill
/// has nothing to add.
inline at::Tensor empty_result(const at::Tensor& like, bool keep_strides, at::ScalarType dtype) {
  if (like.is_cuda()) {
    return keep_strides ? at::Tensor(at::detail::empty_strided_cuda(like.sizes(), like.strides(),
                                                                    dtype, like.device()))
                        : at::Tensor(at::detail::empty_cuda(like.sizes(), dtype, like.device(),
                                                            std::nullopt));
  }
  const auto options = like.options().dtype(dtype);
  return keep_strides ? at::empty_strided(like.sizes(), like.strides(), options)
                      : at::empty(like.sizes(), options);
}
/// ... of `like`'s dtype.
inline at::Tensor empty_result(const at::Tensor& like, bool keep_strides) {
  return empty_result(like, keep_strides, like.scalar_type());
}

/// The output of a functional op for input x: x's strides when x is flat-dense, else contiguous.
inline at::Tensor empty_output(const at::Tensor& x) { return empty_result(x, flat_dense(x)); }

template <class T>
struct type_tag {
  using type = T;
};

/// Calls f(type_tag<T>{}) with the cuact element type of `dtype`.
template <class F>
void dispatch_dtype(at::ScalarType dtype, const std::string& op, F&& f) {
  switch (dtype) {
    case at::kFloat:
      f(type_tag<float>{});
      return;
    case at::kDouble:
      f(type_tag<double>{});
      return;
    case at::kHalf:
      f(type_tag<__half>{});
      return;
    case at::kBFloat16:
      f(type_tag<__nv_bfloat16>{});
      return;
    default:
      TORCH_CHECK(false, op, ": unsupported dtype ", dtype,
                  "; expected float32, float64, float16 or bfloat16");
  }
}

/// Refuses a dtype cuact does not compute, empty tensors included (whose kernels launch nothing
/// and would otherwise never meet dispatch_dtype's refusal).
inline void check_dtype(const at::Tensor& t, const std::string& op) {
  dispatch_dtype(t.scalar_type(), op, [](auto) {});
}

template <class T>
T* data_of(const at::Tensor& t) {
  return reinterpret_cast<T*>(t.data_ptr());
}

inline void check_cuda(cudaError_t status, const std::string& op) {
  TORCH_CHECK(status == cudaSuccess, op, ": CUDA error: ", cudaGetErrorString(status));
}

/// A tensor argument the kernels accept: strided, on a CUDA device.
inline void check_tensor(const at::Tensor& t, const std::string& op, const char* arg) {
  TORCH_CHECK(t.defined(), op, ": expected a tensor for ", arg, ", got an undefined one");
  TORCH_CHECK(t.layout() == at::kStrided, op, ": expected a strided (dense) tensor for ", arg,
              ", got layout ", t.layout());
  TORCH_CHECK(t.is_cuda(), op, ": expected a CUDA tensor for ", arg, ", got one on ", t.device(),
              " (cuact runs on CUDA devices only; move it with .cuda())");
}

/// "[2, 3]": sizes as PyTorch prints them. Built here, not by streaming the IntArrayRef into
/// TORCH_CHECK: that message crashed the process (SIGSEGV, torch 2.11 with this header compiled
/// by nvcc 13 and GCC 13) where the same check with a dtype or device in its message raised. A
/// streamed int64_t crashed the same way (torch_fused.cuh): integers go as strings.
inline std::string sizes_text(at::IntArrayRef sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(sizes[i]);
  }
  return text + "]";
}

/// A further tensor argument: like the first in device and dtype (its sizes are the caller's).
inline void check_companion(const at::Tensor& t, const at::Tensor& first, const std::string& op,
                            const char* arg, const char* first_arg) {
  TORCH_CHECK(t.defined(), op, ": expected a tensor for ", arg, ", got an undefined one");
  TORCH_CHECK(t.device() == first.device(), op, ": expected all tensors on the same device, but ",
              first_arg, " is on ", first.device(), " and ", arg, " on ", t.device());
  check_tensor(t, op, arg);
  TORCH_CHECK(t.scalar_type() == first.scalar_type(), op, ": expected ", arg, " of dtype ",
              first.scalar_type(), " like ", first_arg, ", got ", t.scalar_type());
}

/// A second tensor argument: like the first in device, dtype and sizes.
inline void check_like(const at::Tensor& t, const at::Tensor& first, const std::string& op,
                       const char* arg, const char* first_arg) {
  check_companion(t, first, op, arg, first_arg);
  TORCH_CHECK(t.sizes() == first.sizes(), op, ": expected ", arg, " of size ",
              sizes_text(first.sizes()), " like ", first_arg, ", got ", sizes_text(t.sizes()));
}

inline cudaStream_t current_stream() { return at::cuda::getCurrentCUDAStream().stream(); }

template <std::size_t>
using as_double = double;

/// R(A..., double x N, Tail...): the dispatcher signature of an op with N float parameters. Built
/// by recursion, not spelled R(A..., as_double<I>...): nvcc's front end writes such an expansion
/// inside a function body out as `double ...`, which the host compiler (GCC 13) reads as C varargs.
template <class Signature, std::size_t N, class... Tail>
struct with_doubles;
template <class R, class... A, class... Tail>
struct with_doubles<R(A...), 0, Tail...> {
  using type = R(A..., Tail...);
};
template <class R, class... A, std::size_t N, class... Tail>
struct with_doubles<R(A...), N, Tail...> : with_doubles<R(A..., double), N - 1, Tail...> {};

template <class Policy, class Params = void>
struct family;

/// The op family of activation type Policy with sizeof...(I) double parameters. Its name is
/// set once, by define(); one type names one family.
template <class Policy, std::size_t... I>
struct family<Policy, std::index_sequence<I...>> {
  static constexpr bool has_backward = cuact::has_derivative_v<Policy>;
  static constexpr bool has_from_output = cuact::has_derivative_from_output_v<Policy>;
  using Tensor = at::Tensor;
  using autograd_context = torch::autograd::AutogradContext;
  using variable_list = torch::autograd::variable_list;

  static std::string& qualname() {  // "ns::name"
    static std::string name;
    return name;
  }
  static std::string op_name(const char* suffix = "") { return qualname() + suffix; }

  /// The ops' names for their error messages, built once by define(): a kernel's success path
  /// then builds no string.
  struct op_names {
    std::string forward, inplace, out, backward, backward_from_output;
  };
  static op_names& names() {
    static op_names n;
    return n;
  }

  static Policy make(as_double<I>... p) { return Policy{p...}; }

  /// The typed handle of an operator (Signature: see with_doubles).
  template <class Signature>
  static c10::TypedOperatorHandle<Signature> handle(const char* suffix, const char* overload) {
    return c10::Dispatcher::singleton()
        .findSchemaOrThrow(op_name(suffix).c_str(), overload)
        .template typed<Signature>();
  }
  static const auto& forward_op() {
    static const auto op =
        handle<typename with_doubles<Tensor(const Tensor&), sizeof...(I)>::type>("", "");
    return op;
  }
  static const auto& inplace_op() {
    static const auto op =
        handle<typename with_doubles<void(Tensor&), sizeof...(I)>::type>("_", "");
    return op;
  }
  static const auto& out_op() {
    static const auto op =
        handle<typename with_doubles<void(const Tensor&), sizeof...(I), Tensor&>::type>("", "out");
    return op;
  }
  static const auto& backward_op() {
    static const auto op =
        handle<typename with_doubles<Tensor(const Tensor&, const Tensor&), sizeof...(I)>::type>(
            "_backward", "");
    return op;
  }
  static const auto& backward_from_output_op() {
    static const auto op =
        handle<typename with_doubles<Tensor(const Tensor&, const Tensor&), sizeof...(I)>::type>(
            "_backward_from_output", "");
    return op;
  }

  /// The policy of a forward op, refused where parameter_rule refuses its parameters.
  static Policy checked_policy(const std::string& op, as_double<I>... p) {
    const Policy act = make(p...);
    const char* refusal = parameter_rule<Policy>::refusal(act);
    TORCH_CHECK(refusal == nullptr, op, ": ", refusal);
    return act;
  }

  // ---- device kernels (registered for CUDA, and for CPU where they explain the refusal) ----

  static Tensor forward_kernel(const Tensor& x, as_double<I>... p) {
    const std::string& op = names().forward;
    const Policy act = checked_policy(op, p...);
    check_tensor(x, op, "x");
    check_dtype(x, op);
    const c10::cuda::CUDAGuard guard(x.device());
    Tensor y = empty_output(x);
    if (x.numel() == 0) return y;
    const Tensor src = flat_dense(x) ? x : x.contiguous();
    dispatch_dtype(x.scalar_type(), op, [&](auto tag) {
      using T = typename decltype(tag)::type;
      check_cuda(cuact::forward(act, data_of<const T>(src), data_of<T>(y),
                                static_cast<std::size_t>(x.numel()), current_stream()),
                 op);
    });
    return y;
  }

  static void inplace_kernel(Tensor& x, as_double<I>... p) {
    const std::string& op = names().inplace;
    const Policy act = checked_policy(op, p...);
    check_tensor(x, op, "x");
    check_dtype(x, op);
    const c10::cuda::CUDAGuard guard(x.device());
    if (x.numel() == 0) return;
    at::assert_no_internal_overlap(x);
    Tensor target = flat_dense(x) ? x : x.contiguous();
    dispatch_dtype(x.scalar_type(), op, [&](auto tag) {
      using T = typename decltype(tag)::type;
      check_cuda(cuact::forward(act, data_of<T>(target), static_cast<std::size_t>(x.numel()),
                                current_stream()),
                 op);
    });
    if (!target.is_same(x)) x.copy_(target);
  }

  static void out_kernel(const Tensor& x, as_double<I>... p, Tensor& out) {
    const std::string& op = names().out;
    const Policy act = checked_policy(op, p...);
    check_tensor(x, op, "x");
    check_dtype(x, op);
    check_like(out, x, op, "out", "x");
    const c10::cuda::CUDAGuard guard(x.device());
    if (x.numel() == 0) return;
    at::assert_no_internal_overlap(out);
    at::assert_no_partial_overlap(out, x);
    if (flat_alike(x, {&out})) {
      dispatch_dtype(x.scalar_type(), op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        check_cuda(cuact::forward(act, data_of<const T>(x), data_of<T>(out),
                                  static_cast<std::size_t>(x.numel()), current_stream()),
                   op);
      });
    } else {
      out.copy_(forward_kernel(x, p...));
    }
  }

  /// dx from (grad, x) or (grad, y): shared layout and checks of both backward ops.
  template <bool FromOutput>
  static Tensor gradient_kernel(const Tensor& grad, const Tensor& saved, const Policy& act,
                                const std::string& op) {
    const char* saved_name = FromOutput ? "y" : "x";
    check_tensor(saved, op, saved_name);
    check_dtype(saved, op);
    check_like(grad, saved, op, "grad", saved_name);
    const c10::cuda::CUDAGuard guard(saved.device());
    const bool flat = flat_alike(saved, {&grad});
    Tensor dx = empty_result(saved, flat);
    if (saved.numel() == 0) return dx;
    if constexpr (!FromOutput) {
      if (!flat && broadcast_of_one(grad)) {  // dx contiguous, as the layout rule says
        const Tensor s = saved.is_contiguous() ? saved : saved.contiguous();
        dispatch_dtype(saved.scalar_type(), op, [&](auto tag) {
          using T = typename decltype(tag)::type;
          const broadcast_gradient_op<Policy, T> gradient{{{}, act}, data_of<const T>(grad)};
          check_cuda(cuact::transform(gradient, cuact::outputs(data_of<T>(dx)),
                                      static_cast<std::size_t>(saved.numel()),
                                      cuact::inputs(data_of<const T>(s)), current_stream()),
                     op);
        });
        return dx;
      }
    }
    const Tensor s = flat ? saved : saved.contiguous();
    const Tensor g = flat ? grad : grad.contiguous();
    dispatch_dtype(saved.scalar_type(), op, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto n = static_cast<std::size_t>(saved.numel());
      if constexpr (FromOutput) {
        check_cuda(cuact::backward_from_output(act, data_of<const T>(s), data_of<const T>(g),
                                               data_of<T>(dx), n, current_stream()),
                   op);
      } else {
        check_cuda(cuact::backward(act, data_of<const T>(s), data_of<const T>(g), data_of<T>(dx), n,
                                   current_stream()),
                   op);
      }
    });
    return dx;
  }

  static Tensor backward_kernel(const Tensor& grad, const Tensor& x, as_double<I>... p) {
    return gradient_kernel<false>(grad, x, make(p...), names().backward);
  }

  static Tensor backward_from_output_kernel(const Tensor& grad, const Tensor& y,
                                            as_double<I>... p) {
    const std::string& op = names().backward_from_output;
    const Policy act = make(p...);
    TORCH_CHECK(from_output_rule<Policy>::valid(act), op,
                ": these parameters make the gradient undefined from the output alone (as for "
                "PyTorch's in-place elu with alpha < 0); use ",
                op_name("_backward"), " with the input");
    return gradient_kernel<true>(grad, y, act, op);
  }

  // ---- version counter (ADInplaceOrView), as PyTorch's in-place and out= ops do ----

  static void inplace_view_kernel(c10::DispatchKeySet keys, Tensor& x, as_double<I>... p) {
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      inplace_op().redispatch(keys & c10::after_ADInplaceOrView_keyset, x, p...);
    }
    x.unsafeGetTensorImpl()->bump_version();
  }

  static void out_view_kernel(c10::DispatchKeySet keys, const Tensor& x, as_double<I>... p,
                              Tensor& out) {
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      out_op().redispatch(keys & c10::after_ADInplaceOrView_keyset, x, p..., out);
    }
    out.unsafeGetTensorImpl()->bump_version();
  }

  // ---- autograd ----

  /// The parameters a forward saved (save_params); none saved for an activation without any,
  /// which spares every call a map insert.
  static std::vector<double> params_of(autograd_context* ctx) {
    if constexpr (sizeof...(I) == 0) {
      return {};
    } else {
      return ctx->saved_data["params"].toDoubleVector();
    }
  }
  static void save_params(autograd_context* ctx, as_double<I>... p) {
    if constexpr (sizeof...(I) != 0) ctx->saved_data["params"] = std::vector<double>{p...};
  }

  /// Runs a backward op from an autograd backward: below autograd where grad mode is off (a
  /// plain backward, whose result needs no graph: the boxed autograd fallback of an op without an
  /// autograd kernel would cost every call), through it otherwise (create_graph).
  template <class Op, class... Args>
  static Tensor call_gradient(const Op& op, const Args&... args) {
    if (!at::GradMode::is_enabled()) {
      at::AutoDispatchBelowADInplaceOrView guard;
      return op.call(args...);
    }
    return op.call(args...);
  }

  /// Whether the in-place op's autograd saves its output (and calls NAME_backward_from_output):
  /// a function of the parameters alone, so the backward recomputes it rather than saving it.
  static bool saves_output(as_double<I>... p) {
    if constexpr (has_from_output) {
      return from_output_rule<Policy>::valid(make(p...));
    } else {
      return false;
    }
  }

  static variable_list gradients(Tensor dx) {
    variable_list result(1 + sizeof...(I));  // one per forward argument; none for the doubles
    result[0] = std::move(dx);
    return result;
  }

  /// The functional op's autograd node, built as PyTorch's generated autograd builds its own
  /// (SiluBackward0): x saved in a SavedVariable, the parameters as members. A
  /// torch::autograd::Function would add a context, its saved-data map and its output wrapping
  /// to every call.
  struct backward_node : torch::autograd::Node {
    torch::autograd::SavedVariable x_;
    std::array<double, sizeof...(I)> params_{};

    variable_list apply(variable_list&& grads) override {
      std::lock_guard<std::mutex> lock(mutex_);
      const Tensor x = x_.unpack(shared_from_this());  // refuses an x modified since
      variable_list dx(1);
      if (grads[0].defined() && task_should_compute_output(0)) {
        dx[0] = call_gradient(backward_op(), grads[0], x, params_[I]...);
      }
      return dx;
    }
    std::string name() const override { return names().backward; }
    void release_variables() override {
      std::lock_guard<std::mutex> lock(mutex_);
      x_.reset_data();
    }
  };

  /// The functional op with a gradient to record: the forward below autograd, then y's history.
  static Tensor forward_with_grad(c10::DispatchKeySet keys, const Tensor& x, as_double<I>... p) {
    TORCH_CHECK(!x._fw_grad(/*level=*/0).defined(), op_name(),
                ": forward-mode AD (a tangent on x) is not implemented");
    std::shared_ptr<backward_node> node(new backward_node(), torch::autograd::deleteNode);
    node->set_next_edges(torch::autograd::collect_next_edges(x));
    node->x_ = torch::autograd::SavedVariable(x, /*is_output=*/false);
    node->params_ = {p...};
    Tensor y;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      y = forward_op().redispatch(keys & c10::after_autograd_keyset, x, p...);
    }
    torch::autograd::set_history(y, node);
    return y;
  }

  struct inplace_function : torch::autograd::Function<inplace_function> {
    static Tensor forward(autograd_context* ctx, Tensor x, as_double<I>... p) {
      const bool from_output = saves_output(p...);
      const Tensor original = from_output ? Tensor() : x.clone();
      {
        at::AutoDispatchBelowAutograd guard;  // ADInplaceOrView bumps the version
        inplace_op().call(x, p...);
      }
      ctx->mark_dirty({x});
      save_params(ctx, p...);
      ctx->save_for_backward({from_output ? x : original});
      return x;
    }
    static variable_list backward(autograd_context* ctx, variable_list grads) {
      const auto saved = ctx->get_saved_variables();
      const auto params = params_of(ctx);
      if (!grads[0].defined()) return gradients(Tensor());
      if constexpr (has_from_output) {
        if (saves_output(params[I]...)) {
          return gradients(
              call_gradient(backward_from_output_op(), grads[0], saved[0], params[I]...));
        }
      }
      return gradients(call_gradient(backward_op(), grads[0], saved[0], params[I]...));
    }
  };

  static bool wants_grad(const Tensor& t) {
    return at::GradMode::is_enabled() && t.requires_grad();
  }

  /// The autograd kernels pass a call that records nothing on to the next kernel with the keys
  /// the dispatcher already computed (`keys & after_autograd_keyset`), as PyTorch's generated
  /// autograd kernels do, rather than dispatching anew; the guard still covers the ops the
  /// kernels below run (at::empty).
  static Tensor forward_autograd(c10::DispatchKeySet keys, const Tensor& x, as_double<I>... p) {
    if constexpr (has_backward) {
      if (wants_grad(x)) return forward_with_grad(keys, x, p...);
    } else {
      TORCH_CHECK(!wants_grad(x), op_name(),
                  ": x requires grad but this activation has no "
                  "derivative (give its type a `derivative(C x)` member)");
    }
    at::AutoDispatchBelowADInplaceOrView guard;
    return forward_op().redispatch(keys & c10::after_autograd_keyset, x, p...);
  }

  static void inplace_autograd(c10::DispatchKeySet keys, Tensor& x, as_double<I>... p) {
    if constexpr (has_backward) {
      if (wants_grad(x)) {
        TORCH_CHECK(!x.is_leaf(),
                    "a leaf Variable that requires grad is being used in an in-place "
                    "operation (",
                    op_name("_"), ")");
        inplace_function::apply(x, p...);
        return;
      }
    } else {
      TORCH_CHECK(!wants_grad(x), op_name("_"),
                  ": x requires grad but this activation has no "
                  "derivative (give its type a `derivative(C x)` member)");
    }
    at::AutoDispatchBelowAutograd guard;
    // ADInplaceOrView is after autograd: its kernel still runs and bumps the version
    inplace_op().redispatch(keys & c10::after_autograd_keyset, x, p...);
  }

  static void out_autograd(c10::DispatchKeySet keys, const Tensor& x, as_double<I>... p,
                           Tensor& out) {
    TORCH_CHECK(!(wants_grad(x) || wants_grad(out)), op_name(".out"),
                "(): functions with out=... arguments don't support automatic differentiation, "
                "but one of the arguments requires grad.");
    at::AutoDispatchBelowAutograd guard;
    out_op().redispatch(keys & c10::after_autograd_keyset, x, p..., out);
  }

  /// Defines the schemas and registers every kernel. `ns` must be the library's namespace.
  static void define(torch::Library& m, const char* ns, const char* name, const char* params) {
    const std::string full = std::string(ns) + "::" + name;
    TORCH_CHECK(qualname().empty() || qualname() == full, "cuact: the activation type of ", full,
                " already defines ", qualname(), "; give each op family its own type");
    qualname() = full;
    names() = op_names{full, full + "_", full + ".out", full + "_backward",
                       full + "_backward_from_output"};
    const std::string n = name;
    const std::string p = std::string(params).empty() ? "" : ", " + std::string(params);
    const auto def = [&](const std::string& schema) { m.def(schema.c_str()); };
    def(n + "(Tensor x" + p + ") -> Tensor");
    def(n + "_(Tensor(a!) x" + p + ") -> ()");
    def(n + ".out(Tensor x" + p + ", *, Tensor(a!) out) -> ()");
    if constexpr (has_backward) def(n + "_backward(Tensor grad, Tensor x" + p + ") -> Tensor");
    if constexpr (has_from_output) {
      def(n + "_backward_from_output(Tensor grad, Tensor y" + p + ") -> Tensor");
    }

    // Runtime function pointers, not TORCH_FN: GCC 13 deduces a wrong (C-variadic) type for
    // decltype of these members, whose parameter packs expand an alias (seen with torch 2.11).
    using c10::DispatchKey;
    const auto impl = [&](const std::string& op, auto&& fn) { m.impl(op.c_str(), std::move(fn)); };
    for (const DispatchKey device : {DispatchKey::CUDA, DispatchKey::CPU}) {
      impl(n, torch::dispatch(device, &forward_kernel));
      impl(n + "_", torch::dispatch(device, &inplace_kernel));
      impl(n + ".out", torch::dispatch(device, &out_kernel));
      if constexpr (has_backward) {
        impl(n + "_backward", torch::dispatch(device, &backward_kernel));
      }
      if constexpr (has_from_output) {
        impl(n + "_backward_from_output", torch::dispatch(device, &backward_from_output_kernel));
      }
    }
    impl(n + "_", torch::dispatch(DispatchKey::ADInplaceOrView, &inplace_view_kernel));
    impl(n + ".out", torch::dispatch(DispatchKey::ADInplaceOrView, &out_view_kernel));
    impl(n, torch::dispatch(DispatchKey::Autograd, &forward_autograd));
    impl(n + "_", torch::dispatch(DispatchKey::Autograd, &inplace_autograd));
    impl(n + ".out", torch::dispatch(DispatchKey::Autograd, &out_autograd));
  }
};

}  // namespace torch_ops
}  // namespace cuact

/// Defines `Family` (family or torch_fused.cuh's fused_family) of activation type `Policy` with
/// the parameters of the schema text `params`; the registration macros' one body.
#define CUACT_TORCH_DEFINE_(Family, library, ns, name, Policy, params)                             \
  ::cuact::torch_ops::Family<                                                                      \
      Policy, std::make_index_sequence<::cuact::torch_ops::count_params(params)>>::define(library, \
                                                                                          #ns,     \
                                                                                          #name,   \
                                                                                          params)

/// Registers activation type `Policy` as the op family `ns::name` (see the file comment).
/// `params` is a string literal of schema parameters with defaults, "" for none.
#define CUACT_TORCH_OP_FAMILY(library, ns, name, Policy, params) \
  CUACT_TORCH_DEFINE_(family, library, ns, name, Policy, params)
