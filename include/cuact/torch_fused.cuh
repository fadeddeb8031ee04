/// \file
/// cuact's fused operations (fused.cuh) as PyTorch operators. Include only in code built against
/// PyTorch, like torch.cuh. One line registers them for an activation, in your namespace:
///
///     TORCH_LIBRARY(myops, m) {
///       CUACT_TORCH_FUSED_OPS(m, myops, swish, swish, "");  // (library, namespace, name, type, params)
///     }
///
/// defines, with CUDA kernels and autograd (P: the schema parameters, as for CUACT_TORCH_OP_FAMILY):
///
///     myops::gated_swish(Tensor a, Tensor b, P) -> Tensor            act(a) * b (SwiGLU for silu)
///     myops::gated_swish_backward(Tensor grad, Tensor a, Tensor b, P) -> (Tensor, Tensor)  (da, db)
///     myops::gated_swish_backward_(Tensor grad, Tensor(a!) a, Tensor(b!) b, P) -> ()
///         the same with da written over a and db over b (a, b, grad flat-dense of one layout)
///     myops::gated_swish_packed(Tensor ab, P, *, bool activate_first=True) -> Tensor
///         ab [..., 2c] -> [..., c]: act(first half) * second half (TransformerEngine's swiglu),
///         or with activate_first=False first half * act(second half) (torch.nn.GLU's order)
///     myops::gated_swish_packed_backward(Tensor grad, Tensor ab, P, *, bool activate_first=True)
///         -> Tensor                                                   dab, [..., 2c]
///     myops::bias_swish(Tensor x, Tensor bias, P) -> Tensor           act(x + bias), bias [x.size(-1)]
///     myops::bias_swish_backward(Tensor grad, Tensor x, Tensor bias, P) -> (Tensor, Tensor)
///                                                                     (dx, dbias = dx summed over rows)
///     myops::cast_swish(Tensor x, P, *, ScalarType dtype) -> Tensor  act(x) as dtype (float32,
///         float64, float16 or bfloat16), rounded once; x's strides kept as the family's forward does
///     myops::cast_swish_backward(Tensor grad, Tensor x, P) -> Tensor  dx of x's dtype, grad of any
///     myops::quantize_swish(Tensor x, P, *, Tensor scale, ScalarType? dtype=None) -> (Tensor, Tensor)
///         (saturate(act(x) * scale) as float8_e4m3fn (None) or float8_e5m2, amax = max |act(x)|
///         as a 0-dimensional float32): TransformerEngine's Float8Quantizer recipe, the scale a
///         one-element float32 tensor on x's device (read there: no copy to the host)
///
/// A gate (gate.cuh: gate(a, b) with its partial derivatives, such as cuact::clamped_swiglu)
/// registers as its own family, one line too:
///
///     CUACT_TORCH_GATE_OPS(m, myops, my_gate, my_gate, "float k=1.0");
///
///     myops::my_gate(Tensor a, Tensor b, P) -> Tensor                 gate(a, b), autograd
///     myops::my_gate_backward(Tensor grad, Tensor a, Tensor b, P) -> (Tensor, Tensor)  (da, db)
///     myops::my_gate_backward_(Tensor grad, Tensor(a!) a, Tensor(b!) b, P) -> ()  in place
///     myops::my_gate_packed(Tensor ab, P, *, bool activate_first=True) -> Tensor
///         ab [..., 2c] -> [..., c]: gate(first half, second half), or with activate_first=False
///         gate(second half, first half)
///     myops::my_gate_packed_backward(Tensor grad, Tensor ab, P, *, bool activate_first=True)
///         -> Tensor                                                   dab, [..., 2c]
///
/// with the gated ops' layout rules (below); the backward ops where the gate has a backward.
/// cuact_torch.register_fakes(namespace) registers their fakes too.
///
/// The backward ops exist, and the forwards but quantize_NAME have autograd, when the type has
/// derivative(x) (or gradient(dy, x)). quantize_NAME is not differentiable (its results never
/// require grad, as for torch.argmax): an fp8 training recipe differentiates the activation on
/// its own input. Each is one pass (bias_backward: its two kernels, deterministic dbias), as
/// fused.cuh documents, computing in float for 16-bit data: x + bias is not rounded to the dtype
/// before the activation (eager PyTorch's x + bias is), and act(a) * b is rounded once.
///
/// Tensors: float32, float64, float16 or bfloat16, all of one dtype and on one CUDA device. The
/// gated op's a and b (and grad) have equal sizes; where a is dense and non-overlapping and b (and
/// grad) have its strides, the result keeps them (as torch.mul would), else every operand is made
/// contiguous and so are the results. The packed and bias ops work on row-major rows: their
/// inputs are made contiguous, their results are contiguous. Fakes (meta implementations) for
/// torch.compile come from Python: cuact_torch.register_fakes(namespace) registers them beside the
/// activation families' (cuact_torch/_fakes.py: keep the layout rules in step).
#pragma once

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/graph_task.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/library.h>
#include <torch/version.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "torch.cuh"

namespace cuact {
namespace torch_ops {

/// A row-major operand as the fused entries see it: rows of `cols` elements.
struct row_shape {
  std::size_t rows;
  std::size_t cols;
};

/// The rows of `t` whose last dimension is `cols` (0 rows when the tensor is empty).
inline row_shape rows_of(const at::Tensor& t, int64_t cols) {
  const auto columns = static_cast<std::size_t>(cols);
  if (cols == 0 || t.numel() == 0) return {0, columns};
  return {static_cast<std::size_t>(t.numel() / cols), columns};
}

/// The last dimension of `t`, refused for a 0-dimensional tensor.
inline int64_t last_dim(const at::Tensor& t, const std::string& op, const char* arg) {
  TORCH_CHECK(t.dim() >= 1, op, ": expected ", arg, " with at least one dimension, got a scalar");
  return t.size(-1);
}

/// The columns of each half of a packed [..., 2c] tensor.
inline int64_t packed_cols(const at::Tensor& ab, const std::string& op) {
  const int64_t width = last_dim(ab, op, "ab");
  // Integers go into messages as strings: streamed as integers, they crashed the process here
  // (SIGSEGV, as sizes did: torch.cuh's sizes_text) where the same check with strings raised.
  TORCH_CHECK(width % 2 == 0, op,
              ": expected the last dimension of ab to be even (the two halves a and b side by "
              "side), got ",
              std::to_string(width));
  return width / 2;
}

/// ab's sizes with the last one `cols`.
inline std::vector<int64_t> half_sizes(const at::Tensor& ab, int64_t cols) {
  std::vector<int64_t> sizes(ab.sizes().begin(), ab.sizes().end());
  sizes.back() = cols;
  return sizes;
}

inline gate_half half_of(bool activate_first) {
  return activate_first ? gate_half::first : gate_half::second;
}

// ---- the gated backward in place: when autograd may write da over a and db over b ----

/// How the autograd of the gated ops (gated_NAME, gated_NAME_packed, a gate's NAME and
/// NAME_packed) uses the memory of its saved inputs in the backward. A setting of the process
/// (of each library that includes this header), read by every backward when it runs.
enum class gated_backward_memory : int {
  /// da over a and db over b (dab over ab) where in_place_is_safe proves a and b dead: nothing
  /// but this node references them. Otherwise new tensors, as `separate`.
  automatic = 0,
  /// In place wherever the layout, the mode and the graph allow it, whoever else references a
  /// and b: the caller vouches that they are dead. An autograd node that saved them still fails
  /// with PyTorch's "modified by an inplace operation" (the version counters are bumped); a
  /// plain reference reads the gradients.
  in_place = 1,
  /// Never in place: da and db are new tensors.
  separate = 2,
};

inline std::atomic<int>& gated_backward_memory_state() {
  static std::atomic<int> mode{static_cast<int>(gated_backward_memory::automatic)};
  return mode;
}
/// The setting in force.
inline gated_backward_memory gated_backward_memory_mode() {
  return static_cast<gated_backward_memory>(
      gated_backward_memory_state().load(std::memory_order_relaxed));
}
/// Sets the mode; returns the one it replaces.
inline gated_backward_memory set_gated_backward_memory(gated_backward_memory mode) {
  return static_cast<gated_backward_memory>(
      gated_backward_memory_state().exchange(static_cast<int>(mode), std::memory_order_relaxed));
}

/// The op behind cuact_torch.memory.inplace_backward, `_gated_backward_memory(int mode=-1) -> int`:
/// mode -1 reads the setting, 0, 1, 2 (gated_backward_memory's values) set it; returns the
/// setting before the call. define_gated_backward_memory registers it in a library.
inline int64_t gated_backward_memory_op(int64_t mode) {
  TORCH_CHECK(mode >= -1 && mode <= 2,
              "_gated_backward_memory: expected a mode of -1 (read), 0 "
              "(automatic), 1 (in place) or 2 (separate), got ",
              std::to_string(mode));
  if (mode < 0) return static_cast<int64_t>(gated_backward_memory_mode());
  return static_cast<int64_t>(
      set_gated_backward_memory(static_cast<gated_backward_memory>(static_cast<int>(mode))));
}
inline void define_gated_backward_memory(torch::Library& m) {
  m.def("_gated_backward_memory(int mode=-1) -> int", &gated_backward_memory_op);
}

/// True where a Python wrapper of a C++ object (a TensorImpl or StorageImpl) counts in its
/// reference count while C++ holds it too: from torch 2.10 on, the wrapper holds one reference
/// and the object keeps the wrapper alive while its count exceeds one, so a wrapper that no
/// Python code holds any more still counts once. Before, a wrapper no Python code held gave its
/// reference up (the object owned it instead) and counted nothing.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 10)
#define CUACT_TORCH_WRAPPER_COUNTS 1
#else
#define CUACT_TORCH_WRAPPER_COUNTS 0
#endif

/// The references an idle Python wrapper (one no Python code holds) adds to its object's count,
/// 0 or 1; -1 where Python code holds the wrapper, so that the object is not dead.
inline int idle_wrapper_references(const c10::impl::PyObjectSlot* slot) {
#if CUACT_TORCH_WRAPPER_COUNTS
  if (slot->load_pyobj() == nullptr) return 0;
  // One Python reference: the object's own, which it holds while C++ holds it too.
  return slot->has_unique_reference() ? 1 : -1;
#else
  // A held wrapper holds its own reference, which the use counts see.
  (void)slot;
  return 0;
#endif
}

/// Whether `t` is referenced by `held` references of the caller and nothing else: no other
/// Tensor (a Python variable, another node's saved variable, a container) holds its TensorImpl,
/// and no other TensorImpl (a view, .detach(), .data, a saved output's tensor_data) nor an
/// UntypedStorage holds its storage. An autograd backward that unpacked t from its own
/// SavedVariable holds two: the saved one and the unpacked copy.
inline bool referenced_only_by(const at::Tensor& t, std::size_t held) {
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  const int wrapper = idle_wrapper_references(impl->pyobj_slot());
  if (wrapper < 0 || t.use_count() != held + static_cast<std::size_t>(wrapper)) return false;
  const c10::Storage& storage = impl->storage();
  const int storage_wrapper = idle_wrapper_references(storage.unsafeGetStorageImpl()->pyobj_slot());
  return storage_wrapper >= 0 &&
         storage.use_count() == 1 + static_cast<std::size_t>(storage_wrapper);
}

/// Whether this thread dispatches ops straight to their kernels: no Python dispatch mode
/// (FakeTensorMode, FunctionalTensorMode, a tracing or logging mode) and no functionalization,
/// as under torch.compile's AOTAutograd tracing, export or a user's TorchDispatchMode.
inline bool dispatch_uninterposed() {
  using c10::DispatchKey;
  return !c10::impl::tls_is_dispatch_key_included(DispatchKey::Python) &&
         !c10::impl::tls_is_dispatch_key_included(DispatchKey::PythonTLSSnapshot) &&
         !c10::impl::tls_is_dispatch_key_included(DispatchKey::Functionalize);
}

/// Whether `t` is plain CUDA memory a kernel may write: a strided, non-inference CUDA tensor of
/// a cuact dtype with real storage, no tensor subclass (FakeTensor, FunctionalTensor, DTensor:
/// the Python key), not functionalized, not meta.
inline bool plain_cuda(const at::Tensor& t) {
  using c10::DispatchKey;
  if (!t.defined() || t.layout() != at::kStrided || !t.is_cuda() || t.is_meta() ||
      t.is_inference() || !t.has_storage()) {
    return false;
  }
  const c10::DispatchKeySet keys = t.key_set();
  if (keys.has(DispatchKey::Python) || keys.has(DispatchKey::PythonTLSSnapshot) ||
      keys.has(DispatchKey::Functionalize)) {
    return false;
  }
  const auto dtype = t.scalar_type();
  return dtype == at::kFloat || dtype == at::kDouble || dtype == at::kHalf ||
         dtype == at::kBFloat16;
}

/// A saved input of a gated node, unpacked, with what the in-place decision needs to know.
struct unpacked_input {
  at::Tensor tensor;    ///< as unpacked (the original variable, with its history)
  bool hooked = false;  ///< packed by saved-tensor hooks (then not the original's memory)
};

/// Whether the gated backward may write the gradients of `inputs` over their memory (see
/// gated_backward_memory), `grad` being the incoming gradient; the caller has checked the layout
/// (flat-dense, one layout for the gated op; contiguous for the packed op). Always required: the
/// mode allows it; a backward that builds no graph (not create_graph) of a graph task that
/// releases the graph after it (not retain_graph, nor a call outside the engine: the engine's
/// keep_graph); ops dispatched to their kernels (no tracing, mode or functionalization); every
/// tensor plain CUDA memory of one dtype and device; inputs that are not leaves (a leaf's memory
/// is the parameter whose .grad this computes); no input sharing memory with grad or another
/// input. In `automatic` mode also: no input a view, none packed by saved-tensor hooks, each
/// referenced only by this node (referenced_only_by: its saved variable and the unpacked copy).
/// Then nothing can read a or b after this backward: every other reader would hold a reference.
/// The in-place write bumps the inputs' version counters all the same.
inline bool in_place_is_safe(std::initializer_list<const unpacked_input*> inputs,
                             const at::Tensor& grad) {
  const gated_backward_memory mode = gated_backward_memory_mode();
  if (mode == gated_backward_memory::separate) return false;
  if (at::GradMode::is_enabled() || torch::autograd::get_current_graph_task_keep_graph()) {
    return false;
  }
  if (!dispatch_uninterposed() || !plain_cuda(grad)) return false;
  for (const unpacked_input* input : inputs) {
    const at::Tensor& t = input->tensor;
    if (!plain_cuda(t) || t.is_leaf() || t.scalar_type() != grad.scalar_type() ||
        t.device() != grad.device()) {
      return false;
    }
  }
  for (const unpacked_input* input : inputs) {  // all have storage now
    if (input->tensor.is_alias_of(grad)) return false;
    for (const unpacked_input* other : inputs) {
      if (other != input && input->tensor.is_alias_of(other->tensor)) return false;
    }
  }
  if (mode == gated_backward_memory::in_place) return true;
  for (const unpacked_input* input : inputs) {
    if (input->hooked || input->tensor.is_view() || !referenced_only_by(input->tensor, 2)) {
      return false;
    }
  }
  return true;
}

/// grad in the layout of `like` for the in-place backward: as it is where it has like's strides,
/// else a contiguous copy where like is contiguous (a temporary the size of one gradient, less
/// than the two results the separate backward allocates), else undefined (not in place).
inline at::Tensor grad_like(const at::Tensor& grad, const at::Tensor& like) {
  if (grad.sizes() != like.sizes()) return at::Tensor();
  if (grad.strides() == like.strides()) return grad;
  if (!like.is_contiguous()) return at::Tensor();
  return grad.contiguous();
}

/// The input the backward writes over: the variable's memory without its history (a detached
/// alias sharing its version counter, so that the bump reaches every saved copy).
inline at::Tensor written_alias(const at::Tensor& t) { return t.detach(); }

/// Runs a backward op from an autograd backward: below autograd where grad mode is off (a plain
/// backward: its results need no graph), through it otherwise (create_graph).
template <class Op, class... Args>
auto call_backward_op(const Op& op, const Args&... args) {
  if (!at::GradMode::is_enabled()) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return op.call(args...);
  }
  return op.call(args...);
}

/// The autograd node of a gated op: gate(a, b) (packed false) or gate over the halves of ab
/// (packed true), built as the activation families' node is (torch.cuh): the inputs saved in
/// SavedVariables, the parameters as members, no torch::autograd::Function context. Family
/// supplies the backwards (separate and in place) and the node's name; see in_place_is_safe for
/// when the backward writes over the inputs.
template <class Family, bool Packed>
struct gated_node : torch::autograd::Node {
  using Tensor = at::Tensor;
  using variable_list = torch::autograd::variable_list;
  torch::autograd::SavedVariable first_;   ///< a, or ab
  torch::autograd::SavedVariable second_;  ///< b (unused when packed)
  typename Family::param_array params_{};
  bool activate_first_ = true;

  unpacked_input unpack(const torch::autograd::SavedVariable& saved) {
    unpacked_input input;
#if CUACT_TORCH_WRAPPER_COUNTS
    input.hooked = saved.has_hooks();
#else
    input.hooked = true;  // unknown before torch 2.10: `automatic` leaves the input as it is
#endif
    input.tensor = saved.unpack(shared_from_this());  // refuses an input modified since
    return input;
  }

  variable_list apply(variable_list&& grads) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if constexpr (Packed) {
      unpacked_input ab = unpack(first_);
      variable_list result(1);
      if (!grads[0].defined() || !task_should_compute_output(0)) return result;
      const Tensor g = grads[0].is_contiguous() ? grads[0] : grads[0].contiguous();
      if (ab.tensor.is_contiguous() && in_place_is_safe({&ab}, g)) {
        Tensor dab = written_alias(ab.tensor);
        ab.tensor.reset();  // its memory is dab's from here on
        Family::packed_backward_in_place(params_, g, dab, activate_first_);
        result[0] = std::move(dab);
      } else {
        result[0] = Family::packed_backward(params_, grads[0], ab.tensor, activate_first_);
      }
      return result;
    } else {
      unpacked_input a = unpack(first_);
      unpacked_input b = unpack(second_);
      variable_list result(2);
      if (!grads[0].defined()) return result;
      const Tensor g = grad_like(grads[0], a.tensor);
      if (g.defined() && flat_alike(a.tensor, {&b.tensor, &g}) && in_place_is_safe({&a, &b}, g)) {
        Tensor da = written_alias(a.tensor);
        Tensor db = written_alias(b.tensor);
        a.tensor.reset();  // their memory is da's and db's from here on
        b.tensor.reset();
        Family::backward_in_place(params_, g, da, db);
        result[0] = std::move(da);
        result[1] = std::move(db);
      } else {
        auto [da, db] = Family::backward(params_, grads[0], a.tensor, b.tensor);
        result[0] = std::move(da);
        result[1] = std::move(db);
      }
      return result;
    }
  }
  std::string name() const override { return Family::node_name(Packed); }
  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    first_.reset_data();
    second_.reset_data();
  }
};

/// Records gated_node<Family, Packed> for `result` of a forward over `inputs`: the inputs'
/// edges and saved variables, the parameters. Forward-mode AD is refused, as for the
/// activation families.
template <class Family, bool Packed>
void record_gated(at::Tensor& result, std::initializer_list<const at::Tensor*> inputs,
                  const typename Family::param_array& params, bool activate_first,
                  const std::string& op) {
  for (const at::Tensor* t : inputs) {
    TORCH_CHECK(!t->_fw_grad(/*level=*/0).defined(), op,
                ": forward-mode AD (a tangent on an input) is not implemented");
  }
  using node_t = gated_node<Family, Packed>;
  std::shared_ptr<node_t> node(new node_t(), torch::autograd::deleteNode);
  const at::Tensor& first = **inputs.begin();
  if constexpr (Packed) {
    node->set_next_edges(torch::autograd::collect_next_edges(first));
  } else {
    const at::Tensor& second = **(inputs.begin() + 1);
    node->set_next_edges(torch::autograd::collect_next_edges(first, second));
    node->second_ = torch::autograd::SavedVariable(second, /*is_output=*/false);
  }
  node->first_ = torch::autograd::SavedVariable(first, /*is_output=*/false);
  node->params_ = params;
  node->activate_first_ = activate_first;
  torch::autograd::set_history(result, node);
}

/// The gated ops' kernels for gate type Gate (gate.cuh), `op` naming the op in messages: the
/// GLU family's (fused_family, with activation_gate) and a gate family's (gate_family) alike.
template <class Gate>
struct gate_kernels {
  using Tensor = at::Tensor;
  using tensor_pair = std::tuple<Tensor, Tensor>;
  static constexpr bool has_backward = cuact::has_gate_backward_v<Gate>;

  /// a of a supported dtype on a CUDA device; b (and grad, where given) of its sizes, dtype and
  /// device.
  static void check_operands(const Tensor& a, const Tensor& b, const Tensor* grad,
                             const std::string& op) {
    check_tensor(a, op, "a");
    check_dtype(a, op);
    check_like(b, a, op, "b", "a");
    if (grad != nullptr) check_like(*grad, a, op, "grad", "a");
  }

  static Tensor forward(const Gate& gate, const Tensor& a, const Tensor& b, const std::string& op) {
    check_operands(a, b, nullptr, op);
    const c10::cuda::CUDAGuard guard(a.device());
    const bool flat = flat_alike(a, {&b});
    Tensor out = empty_result(a, flat);
    if (a.numel() == 0) return out;
    const Tensor ac = flat ? a : a.contiguous();
    const Tensor bc = flat ? b : b.contiguous();
    dispatch_dtype(a.scalar_type(), op, [&](auto tag) {
      using T = typename decltype(tag)::type;
      check_cuda(
          cuact::gate_forward(gate, data_of<const T>(ac), data_of<const T>(bc), data_of<T>(out),
                              static_cast<std::size_t>(a.numel()), current_stream()),
          op);
    });
    return out;
  }

  static tensor_pair backward(const Gate& gate, const Tensor& grad, const Tensor& a,
                              const Tensor& b, const std::string& op) {
    check_operands(a, b, &grad, op);
    const c10::cuda::CUDAGuard guard(a.device());
    const bool flat = flat_alike(a, {&b, &grad});
    Tensor da = empty_result(a, flat);
    Tensor db = empty_result(a, flat);
    if (a.numel() == 0) return {da, db};
    const Tensor ac = flat ? a : a.contiguous();
    const Tensor bc = flat ? b : b.contiguous();
    const Tensor gc = flat ? grad : grad.contiguous();
    if constexpr (has_backward) {
      dispatch_dtype(a.scalar_type(), op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        check_cuda(cuact::gate_backward(gate, data_of<const T>(ac), data_of<const T>(bc),
                                        data_of<const T>(gc), data_of<T>(da), data_of<T>(db),
                                        static_cast<std::size_t>(a.numel()), current_stream()),
                   op);
      });
    }
    return {da, db};
  }

  /// The backward in place: da into a's memory, db into b's (fused.cuh allows both), for an
  /// autograd that knows a and b are dead after the backward. a, b and grad must be flat-dense
  /// with one layout; nothing is allocated.
  static void backward_inplace(const Gate& gate, const Tensor& grad, Tensor& a, Tensor& b,
                               const std::string& op) {
    check_operands(a, b, &grad, op);
    TORCH_CHECK(flat_alike(a, {&b, &grad}), op,
                ": expected a, b and grad dense and non-overlapping with one layout");
    const c10::cuda::CUDAGuard guard(a.device());
    if (a.numel() == 0) return;
    if constexpr (has_backward) {
      dispatch_dtype(a.scalar_type(), op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        check_cuda(cuact::gate_backward(gate, data_of<const T>(a), data_of<const T>(b),
                                        data_of<const T>(grad), data_of<T>(a), data_of<T>(b),
                                        static_cast<std::size_t>(a.numel()), current_stream()),
                   op);
      });
    }
  }

  static Tensor packed(const Gate& gate, const Tensor& ab, bool activate_first,
                       const std::string& op) {
    check_tensor(ab, op, "ab");
    check_dtype(ab, op);
    const int64_t cols = packed_cols(ab, op);
    const c10::cuda::CUDAGuard guard(ab.device());
    Tensor out = at::empty(half_sizes(ab, cols), ab.options());
    const row_shape shape = rows_of(out, cols);
    if (shape.rows == 0) return out;
    const Tensor abc = ab.contiguous();
    dispatch_dtype(ab.scalar_type(), op, [&](auto tag) {
      using T = typename decltype(tag)::type;
      check_cuda(
          cuact::gate_forward_packed(gate, data_of<const T>(abc), data_of<T>(out), shape.rows,
                                     shape.cols, half_of(activate_first), current_stream()),
          op);
    });
    return out;
  }

  static Tensor packed_backward(const Gate& gate, const Tensor& grad, const Tensor& ab,
                                bool activate_first, const std::string& op) {
    check_tensor(ab, op, "ab");
    check_dtype(ab, op);
    const int64_t cols = packed_cols(ab, op);
    check_companion(grad, ab, op, "grad", "ab");
    const auto expected = half_sizes(ab, cols);
    TORCH_CHECK(grad.sizes() == at::IntArrayRef(expected), op, ": expected grad of size ",
                sizes_text(expected), " (ab's with its last dimension halved), got ",
                sizes_text(grad.sizes()));
    const c10::cuda::CUDAGuard guard(ab.device());
    Tensor dab = at::empty(ab.sizes(), ab.options());
    const row_shape shape = rows_of(grad, cols);
    if (shape.rows == 0) return dab;
    const Tensor abc = ab.contiguous();
    const Tensor gc = grad.contiguous();
    if constexpr (has_backward) {
      dispatch_dtype(ab.scalar_type(), op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        check_cuda(cuact::gate_backward_packed(gate, data_of<const T>(abc), data_of<const T>(gc),
                                               data_of<T>(dab), shape.rows, shape.cols,
                                               half_of(activate_first), current_stream()),
                   op);
      });
    }
    return dab;
  }

  /// The packed backward in place: dab into ab's memory (fused.cuh allows it), for an autograd
  /// that knows ab is dead after the backward. ab and grad must be contiguous.
  static void packed_backward_inplace(const Gate& gate, const Tensor& grad, Tensor& ab,
                                      bool activate_first, const std::string& op) {
    check_tensor(ab, op, "ab");
    check_dtype(ab, op);
    const int64_t cols = packed_cols(ab, op);
    check_companion(grad, ab, op, "grad", "ab");
    const auto expected = half_sizes(ab, cols);
    TORCH_CHECK(grad.sizes() == at::IntArrayRef(expected), op, ": expected grad of size ",
                sizes_text(expected), " (ab's with its last dimension halved), got ",
                sizes_text(grad.sizes()));
    TORCH_CHECK(ab.is_contiguous() && grad.is_contiguous(), op,
                ": expected ab and grad contiguous for the backward in place");
    const c10::cuda::CUDAGuard guard(ab.device());
    const row_shape shape = rows_of(grad, cols);
    if (shape.rows == 0) return;
    if constexpr (has_backward) {
      dispatch_dtype(ab.scalar_type(), op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        check_cuda(cuact::gate_backward_packed(gate, data_of<const T>(ab), data_of<const T>(grad),
                                               data_of<T>(ab), shape.rows, shape.cols,
                                               half_of(activate_first), current_stream()),
                   op);
      });
    }
  }
};

template <class Policy, class Params = void>
struct fused_family;

/// The fused op family of activation type Policy with sizeof...(I) double parameters (see the
/// file comment). Its name is set once, by define(); one type names one fused family.
template <class Policy, std::size_t... I>
struct fused_family<Policy, std::index_sequence<I...>> {
  static constexpr bool has_backward = cuact::has_derivative_v<Policy>;
  using Tensor = at::Tensor;
  using tensor_pair = std::tuple<Tensor, Tensor>;
  using autograd_context = torch::autograd::AutogradContext;
  using variable_list = torch::autograd::variable_list;
  static constexpr std::size_t param_count = sizeof...(I);

  static std::string& ns_prefix() {  // "ns::"
    static std::string prefix;
    return prefix;
  }
  static std::string& name() {
    static std::string n;
    return n;
  }
  /// "ns::gated_name_packed" for (prefix "gated_", suffix "_packed").
  static std::string op_name(const char* prefix, const char* suffix = "") {
    return ns_prefix() + prefix + name() + suffix;
  }

  /// The activation's op family (torch.cuh): its policy construction and checks and its autograd
  /// helpers serve the fused ops too.
  using activation_family = family<Policy, std::index_sequence<I...>>;

  template <class Signature>
  static c10::TypedOperatorHandle<Signature> handle(const std::string& op) {
    return c10::Dispatcher::singleton()
        .findSchemaOrThrow(op.c_str(), "")
        .template typed<Signature>();
  }
  using gated_signature =
      typename with_doubles<Tensor(const Tensor&, const Tensor&), param_count>::type;
  using gated_backward_signature =
      typename with_doubles<tensor_pair(const Tensor&, const Tensor&, const Tensor&),
                            param_count>::type;
  using packed_signature = typename with_doubles<Tensor(const Tensor&), param_count, bool>::type;
  using packed_backward_signature =
      typename with_doubles<Tensor(const Tensor&, const Tensor&), param_count, bool>::type;
  using bias_signature = gated_signature;
  using bias_backward_signature = gated_backward_signature;
  using cast_signature =
      typename with_doubles<Tensor(const Tensor&), param_count, at::ScalarType>::type;
  using cast_backward_signature =
      typename with_doubles<Tensor(const Tensor&, const Tensor&), param_count>::type;
  using quantize_signature =
      typename with_doubles<tensor_pair(const Tensor&), param_count, const Tensor&,
                            std::optional<at::ScalarType>>::type;

  static const auto& gated_op() {
    static const auto op = handle<gated_signature>(op_name("gated_"));
    return op;
  }
  static const auto& gated_backward_op() {
    static const auto op = handle<gated_backward_signature>(op_name("gated_", "_backward"));
    return op;
  }
  using gated_backward_inplace_signature =
      typename with_doubles<void(const Tensor&, Tensor&, Tensor&), param_count>::type;
  static const auto& gated_backward_inplace_op() {
    static const auto op =
        handle<gated_backward_inplace_signature>(op_name("gated_", "_backward_"));
    return op;
  }
  static const auto& packed_op() {
    static const auto op = handle<packed_signature>(op_name("gated_", "_packed"));
    return op;
  }
  static const auto& packed_backward_op() {
    static const auto op = handle<packed_backward_signature>(op_name("gated_", "_packed_backward"));
    return op;
  }
  static const auto& bias_op() {
    static const auto op = handle<bias_signature>(op_name("bias_"));
    return op;
  }
  static const auto& bias_backward_op() {
    static const auto op = handle<bias_backward_signature>(op_name("bias_", "_backward"));
    return op;
  }
  static const auto& cast_op() {
    static const auto op = handle<cast_signature>(op_name("cast_"));
    return op;
  }
  static const auto& cast_backward_op() {
    static const auto op = handle<cast_backward_signature>(op_name("cast_", "_backward"));
    return op;
  }
  static const auto& quantize_op() {
    static const auto op = handle<quantize_signature>(op_name("quantize_"));
    return op;
  }

  /// The gated ops' gate and kernels: act(a) * b.
  using gate_t = activation_gate<Policy>;
  using gate_ops = gate_kernels<gate_t>;

  // ---- device kernels (registered for CUDA, and for CPU where they explain the refusal) ----

  static Tensor gated_kernel(const Tensor& a, const Tensor& b, as_double<I>... p) {
    const std::string op = op_name("gated_");
    return gate_ops::forward(gate_t{activation_family::checked_policy(op, p...)}, a, b, op);
  }

  static tensor_pair gated_backward_kernel(const Tensor& grad, const Tensor& a, const Tensor& b,
                                           as_double<I>... p) {
    const std::string op = op_name("gated_", "_backward");
    return gate_ops::backward(gate_t{activation_family::make(p...)}, grad, a, b, op);
  }

  /// The gated backward in place (gate_kernels::backward_inplace).
  static void gated_backward_inplace_kernel(const Tensor& grad, Tensor& a, Tensor& b,
                                            as_double<I>... p) {
    const std::string op = op_name("gated_", "_backward_");
    gate_ops::backward_inplace(gate_t{activation_family::make(p...)}, grad, a, b, op);
  }

  static Tensor packed_kernel(const Tensor& ab, as_double<I>... p, bool activate_first) {
    const std::string op = op_name("gated_", "_packed");
    return gate_ops::packed(gate_t{activation_family::checked_policy(op, p...)}, ab, activate_first,
                            op);
  }

  static Tensor packed_backward_kernel(const Tensor& grad, const Tensor& ab, as_double<I>... p,
                                       bool activate_first) {
    const std::string op = op_name("gated_", "_packed_backward");
    return gate_ops::packed_backward(gate_t{activation_family::make(p...)}, grad, ab,
                                     activate_first, op);
  }

  /// gated_NAME_backward_ below ADInplaceOrView, then the version bumps of a and b, as PyTorch's
  /// in-place ops do: a saved variable of a or b then refuses to unpack.
  static void gated_backward_inplace_view_kernel(c10::DispatchKeySet keys, const Tensor& grad,
                                                 Tensor& a, Tensor& b, as_double<I>... p) {
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      gated_backward_inplace_op().redispatch(keys & c10::after_ADInplaceOrView_keyset, grad, a, b,
                                             p...);
    }
    a.unsafeGetTensorImpl()->bump_version();
    b.unsafeGetTensorImpl()->bump_version();
  }

  /// The gated nodes' backwards and names (gated_node).
  struct node_ops {
    using param_array = std::array<double, param_count>;
    static tensor_pair backward(const param_array& p, const Tensor& grad, const Tensor& a,
                                const Tensor& b) {
      return call_backward_op(gated_backward_op(), grad, a, b, p[I]...);
    }
    static void backward_in_place(const param_array& p, const Tensor& grad, Tensor& a, Tensor& b) {
      gate_ops::backward_inplace(gate_t{activation_family::make(p[I]...)}, grad, a, b,
                                 op_name("gated_", "_backward_"));
      a.unsafeGetTensorImpl()->bump_version();
      b.unsafeGetTensorImpl()->bump_version();
    }
    static Tensor packed_backward(const param_array& p, const Tensor& grad, const Tensor& ab,
                                  bool activate_first) {
      return call_backward_op(packed_backward_op(), grad, ab, p[I]..., activate_first);
    }
    static void packed_backward_in_place(const param_array& p, const Tensor& grad, Tensor& ab,
                                         bool activate_first) {
      gate_ops::packed_backward_inplace(gate_t{activation_family::make(p[I]...)}, grad, ab,
                                        activate_first, op_name("gated_", "_packed_backward"));
      ab.unsafeGetTensorImpl()->bump_version();
    }
    static std::string node_name(bool packed) {
      return packed ? op_name("gated_", "_packed_backward") : op_name("gated_", "_backward");
    }
  };

  /// x [..., cols] and bias [cols]: of one device and dtype.
  static int64_t check_bias(const Tensor& x, const Tensor& bias, const std::string& op) {
    check_tensor(x, op, "x");
    check_dtype(x, op);
    const int64_t cols = last_dim(x, op, "x");
    check_companion(bias, x, op, "bias", "x");
    TORCH_CHECK(bias.dim() == 1 && bias.size(0) == cols, op, ": expected bias of size ",
                sizes_text({cols}), " (x's last dimension), got ", sizes_text(bias.sizes()));
    return cols;
  }

  static Tensor bias_kernel(const Tensor& x, const Tensor& bias, as_double<I>... p) {
    const std::string op = op_name("bias_");
    const Policy act = activation_family::checked_policy(op, p...);
    const int64_t cols = check_bias(x, bias, op);
    const c10::cuda::CUDAGuard guard(x.device());
    Tensor out = at::empty(x.sizes(), x.options());
    const row_shape shape = rows_of(x, cols);
    if (shape.rows == 0) return out;
    const Tensor xc = x.contiguous();
    const Tensor bc = bias.contiguous();
    dispatch_dtype(x.scalar_type(), op, [&](auto tag) {
      using T = typename decltype(tag)::type;
      check_cuda(cuact::bias_forward(act, data_of<const T>(xc), data_of<const T>(bc),
                                     data_of<T>(out), shape.rows, shape.cols, current_stream()),
                 op);
    });
    return out;
  }

  static tensor_pair bias_backward_kernel(const Tensor& grad, const Tensor& x, const Tensor& bias,
                                          as_double<I>... p) {
    const std::string op = op_name("bias_", "_backward");
    const Policy act = activation_family::make(p...);
    const int64_t cols = check_bias(x, bias, op);
    check_like(grad, x, op, "grad", "x");
    const c10::cuda::CUDAGuard guard(x.device());
    Tensor dx = at::empty(x.sizes(), x.options());
    const row_shape shape = rows_of(x, cols);
    if (shape.rows == 0) return {dx, at::zeros(bias.sizes(), bias.options())};
    Tensor dbias = at::empty(bias.sizes(), bias.options());
    const Tensor xc = x.contiguous();
    const Tensor bc = bias.contiguous();
    const Tensor gc = grad.contiguous();
    if constexpr (has_backward) {
      dispatch_dtype(x.scalar_type(), op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        // The partial column sums in a tensor of PyTorch's caching allocator (aligned to 256
        // bytes, more than the compute type asks), released when the stream has used it.
        const std::size_t bytes = cuact::bias_backward_workspace_bytes<T>(shape.rows, shape.cols);
        const Tensor workspace =
            at::empty({static_cast<int64_t>(bytes)}, x.options().dtype(at::kByte));
        check_cuda(cuact::bias_backward(act, data_of<const T>(xc), data_of<const T>(bc),
                                        data_of<const T>(gc), data_of<T>(dx), data_of<T>(dbias),
                                        shape.rows, shape.cols, workspace.data_ptr(), bytes,
                                        current_stream()),
                   op);
      });
    }
    return {dx, dbias};
  }

  /// act(x) as `dtype`: one pass, rounded once (cuact::forward_cast).
  static Tensor cast_kernel(const Tensor& x, as_double<I>... p, at::ScalarType dtype) {
    const std::string op = op_name("cast_");
    const Policy act = activation_family::checked_policy(op, p...);
    check_tensor(x, op, "x");
    check_dtype(x, op);
    TORCH_CHECK(
        dtype == at::kFloat || dtype == at::kDouble || dtype == at::kHalf || dtype == at::kBFloat16,
        op, ": expected dtype float32, float64, float16 or bfloat16, got ", dtype,
        " (fp8 results come from ", op_name("quantize_"), ", with a scale)");
    const c10::cuda::CUDAGuard guard(x.device());
    const bool flat = flat_dense(x);
    Tensor out = empty_result(x, flat, dtype);
    if (x.numel() == 0) return out;
    const Tensor src = flat ? x : x.contiguous();
    dispatch_dtype(x.scalar_type(), op, [&](auto in_tag) {
      using T = typename decltype(in_tag)::type;
      dispatch_dtype(dtype, op, [&](auto out_tag) {
        using U = typename decltype(out_tag)::type;
        check_cuda(cuact::forward_cast(act, data_of<const T>(src), data_of<U>(out),
                                       static_cast<std::size_t>(x.numel()), current_stream()),
                   op);
      });
    });
    return out;
  }

  /// dx = act'(x) * grad, grad (the cast's result's gradient, of its dtype) taken to x's dtype
  /// first, as the gradient of PyTorch's .to(dtype) is: two passes where grad's dtype differs. The
  /// converted grad takes x's layout, so dx keeps x's strides where x is flat-dense; where grad
  /// has x's dtype, the family backward's rule holds (flat_alike).
  static Tensor cast_backward_kernel(const Tensor& grad, const Tensor& x, as_double<I>... p) {
    const std::string op = op_name("cast_", "_backward");
    check_tensor(x, op, "x");
    check_dtype(x, op);
    TORCH_CHECK(grad.defined(), op, ": expected a tensor for grad, got an undefined one");
    Tensor converted = grad;
    if (grad.scalar_type() != x.scalar_type() && grad.device() == x.device() &&
        grad.sizes() == x.sizes()) {  // else gradient_kernel's checks refuse it
      const c10::cuda::CUDAGuard guard(x.device());
      converted = empty_result(x, flat_dense(x));
      converted.copy_(grad);
    }
    return activation_family::template gradient_kernel<false>(converted, x,
                                                              activation_family::make(p...), op);
  }

  /// (saturate(act(x) * scale) as fp8, max |act(x)|): cuact::forward_quantize with the scale read
  /// on the device.
  static tensor_pair quantize_kernel(const Tensor& x, as_double<I>... p, const Tensor& scale,
                                     std::optional<at::ScalarType> dtype) {
    const std::string op = op_name("quantize_");
    const Policy act = activation_family::checked_policy(op, p...);
    check_tensor(x, op, "x");
    check_dtype(x, op);
    TORCH_CHECK(scale.defined(), op, ": expected a tensor for scale, got an undefined one");
    TORCH_CHECK(scale.device() == x.device(), op,
                ": expected all tensors on the same device, but x is on ", x.device(),
                " and scale on ", scale.device());
    TORCH_CHECK(scale.scalar_type() == at::kFloat && scale.numel() == 1, op,
                ": expected scale a float32 tensor of one element, got ", scale.scalar_type(),
                " of size ", sizes_text(scale.sizes()));
    const at::ScalarType target = dtype.value_or(at::ScalarType::Float8_e4m3fn);
    TORCH_CHECK(target == at::ScalarType::Float8_e4m3fn || target == at::ScalarType::Float8_e5m2,
                op, ": expected dtype float8_e4m3fn or float8_e5m2, got ", target,
                " (other dtypes come from ", op_name("cast_"), ")");
    const c10::cuda::CUDAGuard guard(x.device());
    const bool flat = flat_dense(x);
    Tensor out = empty_result(x, flat, target);
    if (x.numel() == 0) return {out, at::zeros({}, x.options().dtype(at::kFloat))};
    Tensor amax = at::empty({}, x.options().dtype(at::kFloat));  // zeroed on the stream
    const Tensor src = flat ? x : x.contiguous();
    dispatch_dtype(x.scalar_type(), op, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto run = [&](auto* fp8) {
        check_cuda(cuact::forward_quantize(act, data_of<const T>(src), fp8,
                                           static_cast<std::size_t>(x.numel()),
                                           data_of<const float>(scale), data_of<float>(amax),
                                           amax_update::reset, current_stream()),
                   op);
      };
      if (target == at::ScalarType::Float8_e4m3fn) {
        run(data_of<__nv_fp8_e4m3>(out));
      } else {
        run(data_of<__nv_fp8_e5m2>(out));
      }
    });
    return {out, amax};
  }

  // ---- autograd ----

  /// One gradient per forward argument: the tensors', then none for the parameters (and the
  /// packed op's flag).
  static variable_list gradients(std::initializer_list<Tensor> tensors, std::size_t others) {
    variable_list result(tensors.size() + others);
    std::copy(tensors.begin(), tensors.end(), result.begin());
    return result;
  }

  /// act(a) * b (Bias false) and act(x + bias) (Bias true): two tensor inputs, a backward that
  /// gives both gradients. The two ops have one signature; the gated op's autograd is gated_node
  /// (with node_ops), the bias op's two_input_function.
  template <bool Bias>
  static const auto& two_input_op() {
    return Bias ? bias_op() : gated_op();
  }
  template <bool Bias>
  static const auto& two_input_backward_op() {
    return Bias ? bias_backward_op() : gated_backward_op();
  }

  template <bool Bias>
  struct two_input_function : torch::autograd::Function<two_input_function<Bias>> {
    static Tensor forward(autograd_context* ctx, const Tensor& first, const Tensor& second,
                          as_double<I>... p) {
      activation_family::save_params(ctx, p...);
      ctx->save_for_backward({first, second});
      at::AutoDispatchBelowADInplaceOrView guard;
      return two_input_op<Bias>().call(first, second, p...);
    }
    static variable_list backward(autograd_context* ctx, variable_list grads) {
      const auto saved = ctx->get_saved_variables();
      const auto params = activation_family::params_of(ctx);
      if (!grads[0].defined()) return gradients({Tensor(), Tensor()}, param_count);
      auto [d_first, d_second] =
          two_input_backward_op<Bias>().call(grads[0], saved[0], saved[1], params[I]...);
      return gradients({d_first, d_second}, param_count);
    }
  };

  struct cast_function : torch::autograd::Function<cast_function> {
    static Tensor forward(autograd_context* ctx, const Tensor& x, as_double<I>... p,
                          at::ScalarType dtype) {
      activation_family::save_params(ctx, p...);
      ctx->save_for_backward({x});
      at::AutoDispatchBelowADInplaceOrView guard;
      return cast_op().call(x, p..., dtype);
    }
    static variable_list backward(autograd_context* ctx, variable_list grads) {
      const auto saved = ctx->get_saved_variables();
      const auto params = activation_family::params_of(ctx);
      if (!grads[0].defined()) return gradients({Tensor()}, param_count + 1);
      return gradients({cast_backward_op().call(grads[0], saved[0], params[I]...)},
                       param_count + 1);
    }
  };

  static void refuse_grad(bool wanted, const std::string& op) {
    TORCH_CHECK(!wanted, op,
                ": an input requires grad but this activation has no derivative "
                "(give its type a `derivative(C x)` member)");
  }

  template <bool Bias>
  static Tensor two_input_autograd(const Tensor& first, const Tensor& second, as_double<I>... p) {
    const bool wanted =
        activation_family::wants_grad(first) || activation_family::wants_grad(second);
    if constexpr (has_backward) {
      if (wanted) {
        if constexpr (Bias) {
          return two_input_function<Bias>::apply(first, second, p...);
        } else {
          Tensor out;
          {
            at::AutoDispatchBelowADInplaceOrView guard;
            out = gated_op().call(first, second, p...);
          }
          record_gated<node_ops, false>(out, {&first, &second}, {p...}, true, op_name("gated_"));
          return out;
        }
      }
    } else {
      refuse_grad(wanted, Bias ? op_name("bias_") : op_name("gated_"));
    }
    at::AutoDispatchBelowADInplaceOrView guard;
    return two_input_op<Bias>().call(first, second, p...);
  }
  static Tensor packed_autograd(const Tensor& ab, as_double<I>... p, bool activate_first) {
    const bool wanted = activation_family::wants_grad(ab);
    if constexpr (has_backward) {
      if (wanted) {
        Tensor out;
        {
          at::AutoDispatchBelowADInplaceOrView guard;
          out = packed_op().call(ab, p..., activate_first);
        }
        record_gated<node_ops, true>(out, {&ab}, {p...}, activate_first,
                                     op_name("gated_", "_packed"));
        return out;
      }
    } else {
      refuse_grad(wanted, op_name("gated_", "_packed"));
    }
    at::AutoDispatchBelowADInplaceOrView guard;
    return packed_op().call(ab, p..., activate_first);
  }

  static Tensor cast_autograd(const Tensor& x, as_double<I>... p, at::ScalarType dtype) {
    const bool wanted = activation_family::wants_grad(x);
    if constexpr (has_backward) {
      if (wanted) return cast_function::apply(x, p..., dtype);
    } else {
      refuse_grad(wanted, op_name("cast_"));
    }
    at::AutoDispatchBelowADInplaceOrView guard;
    return cast_op().call(x, p..., dtype);
  }
  /// Not differentiable: the results do not require grad, whatever x does.
  static tensor_pair quantize_autograd(const Tensor& x, as_double<I>... p, const Tensor& scale,
                                       std::optional<at::ScalarType> dtype) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return quantize_op().call(x, p..., scale, dtype);
  }

  /// Defines the schemas and registers every kernel. `ns` must be the library's namespace.
  static void define(torch::Library& m, const char* ns, const char* op_family, const char* params) {
    const std::string prefix = std::string(ns) + "::";
    const std::string defined = ns_prefix() + name();
    TORCH_CHECK(name().empty() || defined == prefix + op_family, "cuact: the activation type of ",
                prefix + op_family, " already defines the fused ops of ", defined,
                "; give each fused op family its own type");
    ns_prefix() = prefix;
    name() = op_family;
    const std::string n = op_family;
    const std::string p = std::string(params).empty() ? "" : ", " + std::string(params);
    const std::string gated = "gated_" + n;
    const std::string packed = gated + "_packed";
    const std::string bias = "bias_" + n;
    const std::string cast = "cast_" + n;
    const std::string quantize = "quantize_" + n;
    const auto def = [&](const std::string& schema) { m.def(schema.c_str()); };
    def(gated + "(Tensor a, Tensor b" + p + ") -> Tensor");
    def(packed + "(Tensor ab" + p + ", *, bool activate_first=True) -> Tensor");
    def(bias + "(Tensor x, Tensor bias" + p + ") -> Tensor");
    def(cast + "(Tensor x" + p + ", *, ScalarType dtype) -> Tensor");
    def(quantize + "(Tensor x" + p +
        ", *, Tensor scale, ScalarType? dtype=None) -> (Tensor, Tensor)");
    if constexpr (has_backward) {
      def(gated + "_backward(Tensor grad, Tensor a, Tensor b" + p + ") -> (Tensor, Tensor)");
      def(gated + "_backward_(Tensor grad, Tensor(a!) a, Tensor(b!) b" + p + ") -> ()");
      def(packed + "_backward(Tensor grad, Tensor ab" + p +
          ", *, bool activate_first=True) -> Tensor");
      def(bias + "_backward(Tensor grad, Tensor x, Tensor bias" + p + ") -> (Tensor, Tensor)");
      def(cast + "_backward(Tensor grad, Tensor x" + p + ") -> Tensor");
    }

    // Runtime function pointers, not TORCH_FN (torch.cuh's define says why).
    using c10::DispatchKey;
    const auto impl = [&](const std::string& op, auto&& fn) { m.impl(op.c_str(), std::move(fn)); };
    for (const DispatchKey device : {DispatchKey::CUDA, DispatchKey::CPU}) {
      impl(gated, torch::dispatch(device, &gated_kernel));
      impl(packed, torch::dispatch(device, &packed_kernel));
      impl(bias, torch::dispatch(device, &bias_kernel));
      impl(cast, torch::dispatch(device, &cast_kernel));
      impl(quantize, torch::dispatch(device, &quantize_kernel));
      if constexpr (has_backward) {
        impl(gated + "_backward", torch::dispatch(device, &gated_backward_kernel));
        impl(gated + "_backward_", torch::dispatch(device, &gated_backward_inplace_kernel));
        impl(packed + "_backward", torch::dispatch(device, &packed_backward_kernel));
        impl(bias + "_backward", torch::dispatch(device, &bias_backward_kernel));
        impl(cast + "_backward", torch::dispatch(device, &cast_backward_kernel));
      }
    }
    if constexpr (has_backward) {
      impl(gated + "_backward_",
           torch::dispatch(DispatchKey::ADInplaceOrView, &gated_backward_inplace_view_kernel));
    }
    impl(gated, torch::dispatch(DispatchKey::Autograd, &two_input_autograd<false>));
    impl(packed, torch::dispatch(DispatchKey::Autograd, &packed_autograd));
    impl(bias, torch::dispatch(DispatchKey::Autograd, &two_input_autograd<true>));
    impl(cast, torch::dispatch(DispatchKey::Autograd, &cast_autograd));
    impl(quantize, torch::dispatch(DispatchKey::Autograd, &quantize_autograd));
  }
};

template <class Gate, class Params = void>
struct gate_family;

/// The op family of gate type Gate (gate.cuh) with sizeof...(I) double parameters (see the file
/// comment: CUACT_TORCH_GATE_OPS). Its name is set once, by define(); one type names one family.
template <class Gate, std::size_t... I>
struct gate_family<Gate, std::index_sequence<I...>> {
  static constexpr bool has_backward = cuact::has_gate_backward_v<Gate>;
  using Tensor = at::Tensor;
  using tensor_pair = std::tuple<Tensor, Tensor>;
  static constexpr std::size_t param_count = sizeof...(I);
  /// An op family's (torch.cuh) parameter construction, checks (parameter_rule) and autograd
  /// helpers serve the gate's ops too.
  using params_family = family<Gate, std::index_sequence<I...>>;
  using kernels = gate_kernels<Gate>;

  static std::string& qualname() {  // "ns::name"
    static std::string name;
    return name;
  }
  static std::string op_name(const char* suffix = "") { return qualname() + suffix; }

  template <class Signature>
  static c10::TypedOperatorHandle<Signature> handle(const std::string& op) {
    return c10::Dispatcher::singleton()
        .findSchemaOrThrow(op.c_str(), "")
        .template typed<Signature>();
  }
  using forward_signature =
      typename with_doubles<Tensor(const Tensor&, const Tensor&), param_count>::type;
  using backward_signature =
      typename with_doubles<tensor_pair(const Tensor&, const Tensor&, const Tensor&),
                            param_count>::type;
  using packed_signature = typename with_doubles<Tensor(const Tensor&), param_count, bool>::type;
  using packed_backward_signature =
      typename with_doubles<Tensor(const Tensor&, const Tensor&), param_count, bool>::type;

  static const auto& forward_op() {
    static const auto op = handle<forward_signature>(op_name());
    return op;
  }
  static const auto& backward_op() {
    static const auto op = handle<backward_signature>(op_name("_backward"));
    return op;
  }
  static const auto& packed_op() {
    static const auto op = handle<packed_signature>(op_name("_packed"));
    return op;
  }
  static const auto& packed_backward_op() {
    static const auto op = handle<packed_backward_signature>(op_name("_packed_backward"));
    return op;
  }
  using backward_inplace_signature =
      typename with_doubles<void(const Tensor&, Tensor&, Tensor&), param_count>::type;
  static const auto& backward_inplace_op() {
    static const auto op = handle<backward_inplace_signature>(op_name("_backward_"));
    return op;
  }

  // ---- device kernels (registered for CUDA, and for CPU where they explain the refusal) ----

  static Tensor forward_kernel(const Tensor& a, const Tensor& b, as_double<I>... p) {
    const std::string op = op_name();
    return kernels::forward(params_family::checked_policy(op, p...), a, b, op);
  }
  static tensor_pair backward_kernel(const Tensor& grad, const Tensor& a, const Tensor& b,
                                     as_double<I>... p) {
    const std::string op = op_name("_backward");
    return kernels::backward(params_family::make(p...), grad, a, b, op);
  }
  static void backward_inplace_kernel(const Tensor& grad, Tensor& a, Tensor& b, as_double<I>... p) {
    const std::string op = op_name("_backward_");
    kernels::backward_inplace(params_family::make(p...), grad, a, b, op);
  }
  static Tensor packed_kernel(const Tensor& ab, as_double<I>... p, bool activate_first) {
    const std::string op = op_name("_packed");
    return kernels::packed(params_family::checked_policy(op, p...), ab, activate_first, op);
  }
  static Tensor packed_backward_kernel(const Tensor& grad, const Tensor& ab, as_double<I>... p,
                                       bool activate_first) {
    const std::string op = op_name("_packed_backward");
    return kernels::packed_backward(params_family::make(p...), grad, ab, activate_first, op);
  }

  /// NAME_backward_ below ADInplaceOrView, then the version bumps of a and b.
  static void backward_inplace_view_kernel(c10::DispatchKeySet keys, const Tensor& grad, Tensor& a,
                                           Tensor& b, as_double<I>... p) {
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      backward_inplace_op().redispatch(keys & c10::after_ADInplaceOrView_keyset, grad, a, b, p...);
    }
    a.unsafeGetTensorImpl()->bump_version();
    b.unsafeGetTensorImpl()->bump_version();
  }

  /// The gated nodes' backwards and names (gated_node).
  struct node_ops {
    using param_array = std::array<double, param_count>;
    static tensor_pair backward(const param_array& p, const Tensor& grad, const Tensor& a,
                                const Tensor& b) {
      return call_backward_op(backward_op(), grad, a, b, p[I]...);
    }
    static void backward_in_place(const param_array& p, const Tensor& grad, Tensor& a, Tensor& b) {
      kernels::backward_inplace(params_family::make(p[I]...), grad, a, b, op_name("_backward_"));
      a.unsafeGetTensorImpl()->bump_version();
      b.unsafeGetTensorImpl()->bump_version();
    }
    static Tensor packed_backward(const param_array& p, const Tensor& grad, const Tensor& ab,
                                  bool activate_first) {
      return call_backward_op(packed_backward_op(), grad, ab, p[I]..., activate_first);
    }
    static void packed_backward_in_place(const param_array& p, const Tensor& grad, Tensor& ab,
                                         bool activate_first) {
      kernels::packed_backward_inplace(params_family::make(p[I]...), grad, ab, activate_first,
                                       op_name("_packed_backward"));
      ab.unsafeGetTensorImpl()->bump_version();
    }
    static std::string node_name(bool packed) {
      return packed ? op_name("_packed_backward") : op_name("_backward");
    }
  };

  // ---- autograd (gated_node, with node_ops above) ----

  static void refuse_grad(bool wanted, const std::string& op) {
    TORCH_CHECK(!wanted, op,
                ": an input requires grad but this gate has no backward (give its type "
                "`partial_a(C a, C b)` and `partial_b(C a, C b)` members)");
  }

  static Tensor forward_autograd(const Tensor& a, const Tensor& b, as_double<I>... p) {
    const bool wanted = params_family::wants_grad(a) || params_family::wants_grad(b);
    if constexpr (has_backward) {
      if (wanted) {
        Tensor out;
        {
          at::AutoDispatchBelowADInplaceOrView guard;
          out = forward_op().call(a, b, p...);
        }
        record_gated<node_ops, false>(out, {&a, &b}, {p...}, true, op_name());
        return out;
      }
    } else {
      refuse_grad(wanted, op_name());
    }
    at::AutoDispatchBelowADInplaceOrView guard;
    return forward_op().call(a, b, p...);
  }
  static Tensor packed_autograd(const Tensor& ab, as_double<I>... p, bool activate_first) {
    const bool wanted = params_family::wants_grad(ab);
    if constexpr (has_backward) {
      if (wanted) {
        Tensor out;
        {
          at::AutoDispatchBelowADInplaceOrView guard;
          out = packed_op().call(ab, p..., activate_first);
        }
        record_gated<node_ops, true>(out, {&ab}, {p...}, activate_first, op_name("_packed"));
        return out;
      }
    } else {
      refuse_grad(wanted, op_name("_packed"));
    }
    at::AutoDispatchBelowADInplaceOrView guard;
    return packed_op().call(ab, p..., activate_first);
  }

  /// Defines the schemas and registers every kernel. `ns` must be the library's namespace.
  static void define(torch::Library& m, const char* ns, const char* name, const char* params) {
    const std::string full = std::string(ns) + "::" + name;
    TORCH_CHECK(qualname().empty() || qualname() == full, "cuact: the gate type of ", full,
                " already defines ", qualname(), "; give each gate family its own type");
    qualname() = full;
    const std::string n = name;
    const std::string p = std::string(params).empty() ? "" : ", " + std::string(params);
    const auto def = [&](const std::string& schema) { m.def(schema.c_str()); };
    def(n + "(Tensor a, Tensor b" + p + ") -> Tensor");
    def(n + "_packed(Tensor ab" + p + ", *, bool activate_first=True) -> Tensor");
    if constexpr (has_backward) {
      def(n + "_backward(Tensor grad, Tensor a, Tensor b" + p + ") -> (Tensor, Tensor)");
      def(n + "_backward_(Tensor grad, Tensor(a!) a, Tensor(b!) b" + p + ") -> ()");
      def(n + "_packed_backward(Tensor grad, Tensor ab" + p +
          ", *, bool activate_first=True) -> Tensor");
    }

    // Runtime function pointers, not TORCH_FN (torch.cuh's define says why).
    using c10::DispatchKey;
    const auto impl = [&](const std::string& op, auto&& fn) { m.impl(op.c_str(), std::move(fn)); };
    for (const DispatchKey device : {DispatchKey::CUDA, DispatchKey::CPU}) {
      impl(n, torch::dispatch(device, &forward_kernel));
      impl(n + "_packed", torch::dispatch(device, &packed_kernel));
      if constexpr (has_backward) {
        impl(n + "_backward", torch::dispatch(device, &backward_kernel));
        impl(n + "_backward_", torch::dispatch(device, &backward_inplace_kernel));
        impl(n + "_packed_backward", torch::dispatch(device, &packed_backward_kernel));
      }
    }
    if constexpr (has_backward) {
      impl(n + "_backward_",
           torch::dispatch(DispatchKey::ADInplaceOrView, &backward_inplace_view_kernel));
    }
    impl(n, torch::dispatch(DispatchKey::Autograd, &forward_autograd));
    impl(n + "_packed", torch::dispatch(DispatchKey::Autograd, &packed_autograd));
  }
};

}  // namespace torch_ops
}  // namespace cuact

/// Registers the fused ops of activation type `Policy` as gated_NAME, gated_NAME_packed, bias_NAME,
/// cast_NAME, quantize_NAME (and the _backward ops) in `ns` (see the file comment). `params` is a string literal of
/// schema parameters with defaults, "" for none.
#define CUACT_TORCH_FUSED_OPS(library, ns, name, Policy, params) \
  CUACT_TORCH_DEFINE_(fused_family, library, ns, name, Policy, params)

/// Registers gate type `Gate` (gate.cuh) as the op family ns::name: name(a, b, P), name_packed
/// and, where the gate has a backward, name_backward, name_backward_ (in place) and
/// name_packed_backward, with autograd (see the file comment). `params` is a string literal of
/// schema parameters with defaults, "" for none.
#define CUACT_TORCH_GATE_OPS(library, ns, name, Gate, params) \
  CUACT_TORCH_DEFINE_(gate_family, library, ns, name, Gate, params)
