/// \file
/// The built-in activations, one file per family under activations/ (piecewise, exponential,
/// logistic, softplus, tanh, gelu): tiny functor structs, each with its forward and its
/// derivatives (the concept and its optional members: activation.cuh). Parameters are public
/// `double` members named, ordered and defaulted as in torch.nn.functional, so `cuact::elu{0.5}`
/// and `cuact::softplus{2.0, 10.0}` aggregate-initialize; members convert them to the compute type.
///
/// Semantics are PyTorch's CUDA kernels' (aten/src/ATen/native/cuda/Activation*.cu): the same
/// branch conditions, the same choice at kinks, NaN through every forward, and the same result
/// where an indeterminate form arises at +-inf (each brief says which). Accuracy: float and double
/// results within 4 ulp of the exact function (tanhshrink: an absolute bound, see there), 16-bit
/// results within 1 ulp of the correctly rounded value. Where PyTorch's float formula loses that
/// (1 + erf(x) for x << 0, exp overflow in 1 / (1 + exp(-x)), 1 - tanh^2 near +-1), the policy
/// computes the same function another way, and says so.
#pragma once

#include "activation.cuh"
#include "activations/exponential.cuh"
#include "activations/gelu.cuh"
#include "activations/logistic.cuh"
#include "activations/piecewise.cuh"
#include "activations/softplus.cuh"
#include "activations/tanh.cuh"
#include "tuning.cuh"
