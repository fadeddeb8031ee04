// The cuact operator library: every built-in activation as a torch.ops.cuact op family
// (functional, in-place, out, backward, backward_from_output, autograd), from one table.
#ifdef CUACT_TORCH_PYMODULE
#include <Python.h>  // first, as Python asks
#endif

#include <cuact/torch.cuh>

#include <string>

// One line per activation: X(op name, activation type, schema parameters with PyTorch's defaults).
// `float` in a schema is a C++ double; the type is aggregate-initialized from them in order.
#define CUACT_TORCH_CORE_OPS(X) \
  X(relu, ::cuact::relu, "")    \
  X(selu, ::cuact::selu, "")

// The rest of the family, enabled with -DCUACT_TORCH_FAMILY=1 (setup.py and the JIT loader pass
// it when the environment variable CUACT_TORCH_FAMILY=1 is set) once include/cuact has them.
#ifndef CUACT_TORCH_FAMILY
#define CUACT_TORCH_FAMILY 0
#endif
#if CUACT_TORCH_FAMILY
#define CUACT_TORCH_FAMILY_OPS(X)                                               \
  X(relu6, ::cuact::relu6, "")                                                  \
  X(leaky_relu, ::cuact::leaky_relu, "float negative_slope=0.01")               \
  X(elu, ::cuact::elu, "float alpha=1.0")                                       \
  X(celu, ::cuact::celu, "float alpha=1.0")                                     \
  X(gelu, ::cuact::gelu, "")                                                    \
  X(gelu_tanh, ::cuact::gelu_tanh, "")                                          \
  X(silu, ::cuact::silu, "")                                                    \
  X(mish, ::cuact::mish, "")                                                    \
  X(sigmoid, ::cuact::sigmoid, "")                                              \
  X(logsigmoid, ::cuact::logsigmoid, "")                                        \
  X(tanh, ::cuact::tanh, "")                                                    \
  X(hardtanh, ::cuact::hardtanh, "float min_val=-1.0, float max_val=1.0")       \
  X(hardsigmoid, ::cuact::hardsigmoid, "")                                      \
  X(hardswish, ::cuact::hardswish, "")                                          \
  X(softplus, ::cuact::softplus, "float beta=1.0, float threshold=20.0")        \
  X(softsign, ::cuact::softsign, "")                                            \
  X(tanhshrink, ::cuact::tanhshrink, "")                                        \
  X(softshrink, ::cuact::softshrink, "float lambd=0.5")                         \
  X(hardshrink, ::cuact::hardshrink, "float lambd=0.5")                         \
  X(threshold, ::cuact::threshold, "float threshold, float value")

namespace cuact {
namespace torch_ops {
// Parameters under which y no longer determines x: PyTorch refuses these in-place with autograd;
// here the in-place op then saves a copy of x instead.
template <>
struct from_output_rule<::cuact::elu> {
  static bool valid(const ::cuact::elu& a) { return a.alpha >= 0; }
};
template <>
struct from_output_rule<::cuact::celu> {
  static bool valid(const ::cuact::celu& a) { return a.alpha >= 0; }
};
template <>
struct from_output_rule<::cuact::leaky_relu> {
  static bool valid(const ::cuact::leaky_relu& a) { return a.negative_slope >= 0; }
};
}  // namespace torch_ops
}  // namespace cuact
#else
#define CUACT_TORCH_FAMILY_OPS(X)
#endif

#define CUACT_TORCH_NAME(name, Policy, params) #name ","

namespace {
// "relu,selu,..." for cuact_torch (which registers the fakes) to find the families.
std::string families() {
  std::string names = CUACT_TORCH_CORE_OPS(CUACT_TORCH_NAME) CUACT_TORCH_FAMILY_OPS(CUACT_TORCH_NAME);
  names.pop_back();
  return names;
}
}  // namespace

TORCH_LIBRARY(cuact, m) {
#define CUACT_TORCH_DEFINE(name, Policy, params) CUACT_TORCH_OP_FAMILY(m, cuact, name, Policy, params);
  CUACT_TORCH_CORE_OPS(CUACT_TORCH_DEFINE)
  CUACT_TORCH_FAMILY_OPS(CUACT_TORCH_DEFINE)
#undef CUACT_TORCH_DEFINE
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
