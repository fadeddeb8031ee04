// The tables of cuact's operator library (torch.ops.cuact): one line per activation, shared by
// the translation units that register it. cuact_ops.cu defines the library and the core ops;
// each ops_group<N>.cu registers the rows of group N, so a build compiles them in parallel (one
// translation unit of the whole family took five minutes on 16 cores).
#pragma once

#include <cuact/torch.cuh>
#include <cuact/torch_fused.cuh>

// X(group, op name, activation type, schema parameters with PyTorch's defaults): the activation
// families of cuact/torch.cuh. `float` in a schema is a C++ double; the type is
// aggregate-initialized from them in order. Group 0 is registered by cuact_ops.cu, group N by
// ops_group<N>.cu (N = 1..5).
#define CUACT_TORCH_CORE_OPS(X) \
  X(0, relu, ::cuact::relu, "") \
  X(0, selu, ::cuact::selu, "")

// The rest of the family, enabled with -DCUACT_TORCH_FAMILY=1 (setup.py and the JIT loader pass
// it when the environment variable CUACT_TORCH_FAMILY=1 is set).
#ifndef CUACT_TORCH_FAMILY
#define CUACT_TORCH_FAMILY 0
#endif
#if CUACT_TORCH_FAMILY
#define CUACT_TORCH_FAMILY_OPS(X)                                                  \
  X(1, relu6, ::cuact::relu6, "")                                                  \
  X(1, leaky_relu, ::cuact::leaky_relu, "float negative_slope=0.01")               \
  X(1, elu, ::cuact::elu, "float alpha=1.0")                                       \
  X(1, celu, ::cuact::celu, "float alpha=1.0")                                     \
  X(2, gelu, ::cuact::gelu, "")                                                    \
  X(2, gelu_tanh, ::cuact::gelu_tanh, "")                                          \
  X(2, silu, ::cuact::silu, "")                                                    \
  X(3, mish, ::cuact::mish, "")                                                    \
  X(3, sigmoid, ::cuact::sigmoid, "")                                              \
  X(3, logsigmoid, ::cuact::logsigmoid, "")                                        \
  X(3, tanh, ::cuact::tanh, "")                                                    \
  X(4, hardtanh, ::cuact::hardtanh, "float min_val=-1.0, float max_val=1.0")       \
  X(4, hardsigmoid, ::cuact::hardsigmoid, "")                                      \
  X(4, hardswish, ::cuact::hardswish, "")                                          \
  X(4, softplus, ::cuact::softplus, "float beta=1.0, float threshold=20.0")        \
  X(5, softsign, ::cuact::softsign, "")                                            \
  X(5, tanhshrink, ::cuact::tanhshrink, "")                                        \
  X(5, softshrink, ::cuact::softshrink, "float lambd=0.5")                         \
  X(5, hardshrink, ::cuact::hardshrink, "float lambd=0.5")                         \
  X(5, threshold, ::cuact::threshold, "float threshold, float value")

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
// Parameters PyTorch's own forwards refuse (torch 2.11: F.softshrink raises "lambda must be in
// range [0, ...]", F.celu "ZeroDivisionError" for alpha = 0); the ops raise as they do.
template <>
struct parameter_rule<::cuact::softshrink> {
  static const char* refusal(const ::cuact::softshrink& a) {
    return a.lambd >= 0 ? nullptr : "lambd must be >= 0 (as for PyTorch's softshrink)";
  }
};
template <>
struct parameter_rule<::cuact::celu> {
  static const char* refusal(const ::cuact::celu& a) {
    return a.alpha != 0 ? nullptr
                        : "alpha must not be 0 (as for PyTorch's celu: ZeroDivisionError)";
  }
};
}  // namespace torch_ops
}  // namespace cuact
#else
#define CUACT_TORCH_FAMILY_OPS(X)
#endif

#define CUACT_TORCH_ALL_OPS(X) CUACT_TORCH_CORE_OPS(X) CUACT_TORCH_FAMILY_OPS(X)

// X(group, activation name, activation type, schema parameters): the fused ops of
// cuact/torch_fused.cuh (gated_NAME, gated_NAME_packed, bias_NAME and their backwards) for the
// activations of transformer MLPs: ReGLU, GLU (sigmoid, activate_first=False), SwiGLU, GeGLU in
// both GELU forms, bias + GELU. Built in every configuration, in groups 6-9.
#define CUACT_TORCH_FUSED_TABLE(X)   \
  X(6, relu, ::cuact::relu, "")       \
  X(6, sigmoid, ::cuact::sigmoid, "") \
  X(7, silu, ::cuact::silu, "")       \
  X(8, gelu, ::cuact::gelu, "")       \
  X(9, gelu_tanh, ::cuact::gelu_tanh, "")

// X(group, op name, gate type, schema parameters): the gate families of cuact/torch_fused.cuh
// (NAME, NAME_packed and their backwards, CUACT_TORCH_GATE_OPS) for gates whose b side is
// transformed too: gpt-oss's clamped SwiGLU. Built in every configuration.
#define CUACT_TORCH_GATE_TABLE(X) \
  X(6, gated_swiglu_clamped, ::cuact::clamped_swiglu, "float alpha=1.702, float limit=7.0")

// A translation unit registering group N defines CUACT_TORCH_GROUP_<N>(...) as __VA_ARGS__ before
// including this header; the other groups' rows expand to nothing there.
#ifndef CUACT_TORCH_GROUP_0
#define CUACT_TORCH_GROUP_0(...)
#endif
#ifndef CUACT_TORCH_GROUP_1
#define CUACT_TORCH_GROUP_1(...)
#endif
#ifndef CUACT_TORCH_GROUP_2
#define CUACT_TORCH_GROUP_2(...)
#endif
#ifndef CUACT_TORCH_GROUP_3
#define CUACT_TORCH_GROUP_3(...)
#endif
#ifndef CUACT_TORCH_GROUP_4
#define CUACT_TORCH_GROUP_4(...)
#endif
#ifndef CUACT_TORCH_GROUP_5
#define CUACT_TORCH_GROUP_5(...)
#endif
#ifndef CUACT_TORCH_GROUP_6
#define CUACT_TORCH_GROUP_6(...)
#endif
#ifndef CUACT_TORCH_GROUP_7
#define CUACT_TORCH_GROUP_7(...)
#endif
#ifndef CUACT_TORCH_GROUP_8
#define CUACT_TORCH_GROUP_8(...)
#endif
#ifndef CUACT_TORCH_GROUP_9
#define CUACT_TORCH_GROUP_9(...)
#endif

// Registers a row on library `m` when its group is this translation unit's.
#define CUACT_TORCH_DEFINE_IN_GROUP(group, name, Policy, params) \
  CUACT_TORCH_GROUP_##group(CUACT_TORCH_OP_FAMILY(m, cuact, name, Policy, params);)
#define CUACT_TORCH_FUSED_IN_GROUP(group, name, Policy, params) \
  CUACT_TORCH_GROUP_##group(CUACT_TORCH_FUSED_OPS(m, cuact, name, Policy, params);)
#define CUACT_TORCH_GATE_IN_GROUP(group, name, Gate, params) \
  CUACT_TORCH_GROUP_##group(CUACT_TORCH_GATE_OPS(m, cuact, name, Gate, params);)
