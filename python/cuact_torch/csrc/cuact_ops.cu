// The cuact operator library: every built-in activation as a torch.ops.cuact op family
// (functional, in-place, out, backward, backward_from_output, autograd), and the fused ops of the
// transformer MLP's activations (gated_NAME, gated_NAME_packed, bias_NAME), from the tables in
// ops.h. This unit defines the library and registers group 0 (the core ops); ops_group<N>.cu
// register the rest of the family (1-5) and the fused ops (6-9).
#ifdef CUACT_TORCH_PYMODULE
#include <Python.h>  // first, as Python asks
#endif

#define CUACT_TORCH_GROUP_0(...) __VA_ARGS__
#include "ops.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>

#define CUACT_TORCH_NAME(group, name, Policy, params) #name ","

namespace {
// "relu,selu,..." for cuact_torch (which registers the fakes) to find the families.
std::string families() {
  std::string names = CUACT_TORCH_ALL_OPS(CUACT_TORCH_NAME);
  names.pop_back();
  return names;
}
// "relu,sigmoid,...": the activations with fused ops.
std::string fused() {
  std::string names = CUACT_TORCH_FUSED_TABLE(CUACT_TORCH_NAME);
  names.pop_back();
  return names;
}
// "gated_swiglu_clamped,...": the gate families.
std::string gates() {
  std::string names = CUACT_TORCH_GATE_TABLE(CUACT_TORCH_NAME);
  names.pop_back();
  return names;
}
// Bytes of the workspace bias_NAME_backward takes from PyTorch's allocator (the partial column
// sums), for timing scripts that count the bytes a call moves.
int64_t bias_backward_workspace_bytes(int64_t rows, int64_t cols, at::ScalarType dtype) {
  TORCH_CHECK(rows >= 0 && cols >= 0, "_bias_backward_workspace_bytes: expected rows, cols >= 0");
  int64_t bytes = 0;
  cuact::torch_ops::dispatch_dtype(dtype, "_bias_backward_workspace_bytes", [&](auto tag) {
    using T = typename decltype(tag)::type;
    bytes = static_cast<int64_t>(cuact::bias_backward_workspace_bytes<T>(
        static_cast<std::size_t>(rows), static_cast<std::size_t>(cols)));
  });
  return bytes;
}

// ReLU that saves a 1-bit mask for its backward (cuact/relu_mask.cuh): (y, mask) with mask the
// int32 words of relu_mask_words(numel). Both ops work on row-major order (their results are
// contiguous) so that bit i is element i of the tensor whatever the layouts of x and grad are.
// The backward reads only the mask and grad, which must have the numel and dtype x had.
std::tuple<at::Tensor, at::Tensor> relu_mask(const at::Tensor& x) {
  using namespace cuact::torch_ops;
  const std::string op = "cuact::relu_mask";
  check_tensor(x, op, "x");
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor y = at::empty(x.sizes(), x.options());
  const auto n = static_cast<std::size_t>(x.numel());
  at::Tensor mask =
      at::empty({static_cast<int64_t>(cuact::relu_mask_words(n))}, x.options().dtype(at::kInt));
  if (n == 0) return {y, mask};
  const at::Tensor src = x.contiguous();
  dispatch_dtype(x.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    check_cuda(cuact::relu_forward_mask(data_of<const T>(src), data_of<T>(y),
                                        data_of<std::uint32_t>(mask), n, current_stream()),
               op);
  });
  return {y, mask};
}

at::Tensor relu_backward_mask(const at::Tensor& grad, const at::Tensor& mask) {
  using namespace cuact::torch_ops;
  const std::string op = "cuact::relu_backward_mask";
  check_tensor(grad, op, "grad");
  check_tensor(mask, op, "mask");
  const auto n = static_cast<std::size_t>(grad.numel());
  TORCH_CHECK(mask.scalar_type() == at::kInt && mask.dim() == 1 && mask.is_contiguous() &&
                  static_cast<std::size_t>(mask.numel()) == cuact::relu_mask_words(n),
              op, ": expected mask a contiguous int32 tensor of relu_mask's words for grad's ",
              std::to_string(n), " elements");
  TORCH_CHECK(mask.device() == grad.device(), op, ": expected grad and mask on one device");
  const c10::cuda::CUDAGuard guard(grad.device());
  at::Tensor dx = at::empty(grad.sizes(), grad.options());
  if (n == 0) return dx;
  const at::Tensor g = grad.contiguous();
  dispatch_dtype(grad.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    check_cuda(cuact::relu_backward_mask(data_of<const std::uint32_t>(mask), data_of<const T>(g),
                                         data_of<T>(dx), n, current_stream()),
               op);
  });
  return dx;
}
}  // namespace

TORCH_LIBRARY(cuact, m) {
  CUACT_TORCH_ALL_OPS(CUACT_TORCH_DEFINE_IN_GROUP)
  m.def("_families() -> str", &families);
  m.def("_fused() -> str", &fused);
  m.def("_gates() -> str", &gates);
  m.def("_bias_backward_workspace_bytes(int rows, int cols, ScalarType dtype) -> int",
        &bias_backward_workspace_bytes);
  cuact::torch_ops::define_gated_backward_memory(m);  // cuact_torch.memory.inplace_backward
  m.def("relu_mask(Tensor x) -> (Tensor, Tensor)");
  m.def("relu_backward_mask(Tensor grad, Tensor mask) -> Tensor");
  m.impl("relu_mask", torch::dispatch(c10::DispatchKey::CUDA, &relu_mask));
  m.impl("relu_backward_mask", torch::dispatch(c10::DispatchKey::CUDA, &relu_backward_mask));
}

#ifdef CUACT_TORCH_PYMODULE
// `import cuact_torch._C` (the setup.py build) loads this library; the ops register themselves.
PyMethodDef* cuact_fast_call_methods();  // fast_call.cu: functional.py's eager fast path

PyMODINIT_FUNC PyInit__C(void) {
  static PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", "cuact operators (torch.ops.cuact)", -1,
                               cuact_fast_call_methods()};
  return PyModule_Create(&module);
}
#endif
