// The cuact operator library: every built-in activation as a torch.ops.cuact op family
// (functional, in-place, out, backward, backward_from_output, autograd), from the table in
// ops.h. This unit defines the library and registers group 0 (the core ops); ops_group<N>.cu
// register the rest of the family.
#ifdef CUACT_TORCH_PYMODULE
#include <Python.h>  // first, as Python asks
#endif

#define CUACT_TORCH_GROUP_0(...) __VA_ARGS__
#include "ops.h"

#include <string>

#define CUACT_TORCH_NAME(group, name, Policy, params) #name ","

namespace {
// "relu,selu,..." for cuact_torch (which registers the fakes) to find the families.
std::string families() {
  std::string names = CUACT_TORCH_ALL_OPS(CUACT_TORCH_NAME);
  names.pop_back();
  return names;
}
}  // namespace

TORCH_LIBRARY(cuact, m) {
  CUACT_TORCH_ALL_OPS(CUACT_TORCH_DEFINE_IN_GROUP)
  m.def("_families() -> str", &families);
}

#ifdef CUACT_TORCH_PYMODULE
// `import cuact_torch._C` (the setup.py build) loads this library; the ops register themselves.
PyMODINIT_FUNC PyInit__C(void) {
  static PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", "cuact operators (torch.ops.cuact)", -1,
                               nullptr};
  return PyModule_Create(&module);
}
#endif
