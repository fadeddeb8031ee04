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
}  // namespace

TORCH_LIBRARY(cuact, m) {
  CUACT_TORCH_ALL_OPS(CUACT_TORCH_DEFINE_IN_GROUP)
  m.def("_families() -> str", &families);
  m.def("_fused() -> str", &fused);
  m.def("_bias_backward_workspace_bytes(int rows, int cols, ScalarType dtype) -> int",
        &bias_backward_workspace_bytes);
}

#ifdef CUACT_TORCH_PYMODULE
// `import cuact_torch._C` (the setup.py build) loads this library; the ops register themselves.
PyMODINIT_FUNC PyInit__C(void) {
  static PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", "cuact operators (torch.ops.cuact)", -1,
                               nullptr};
  return PyModule_Create(&module);
}
#endif
