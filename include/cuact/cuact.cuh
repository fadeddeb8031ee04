/// \file
/// cuact: elementwise activation kernels. Include this one header.
///
///     cuact::forward(cuact::relu{}, in, out, n, stream);     // out-of-place
///     cuact::forward(cuact::selu{}, data, n, stream);        // in place
///     cuact::backward(cuact::selu{}, x, dy, dx, n, stream);  // dx = dy * selu'(x)
///
/// activation.cuh   what an activation provides (the concept), its traits and adaptors
/// activations.cuh  the activation policies: relu, selu, ...
/// forward.cuh      cuact::forward
/// gate.cuh         gates out = gate(a, b) (the concept; act(a) * b, gpt-oss's clamped SwiGLU)
/// fused.cuh        gates and gated (GLU) activations, bias + activation, cast / fp8 quantize,
///                  compose
/// backward.cuh     cuact::backward, cuact::backward_from_output
/// relu_mask.cuh    cuact::relu_forward_mask, cuact::relu_backward_mask (1 bit per element)
/// transform.cuh    cuact::transform: any N-input, M-output elementwise operation
/// elementwise.cuh  the kernel template and its per-thread body, for custom launches
/// error.cuh        cuact::last_error_detail: why the last call was rejected
/// version.cuh      CUACT_VERSION_MAJOR / MINOR / PATCH and CUACT_VERSION
#pragma once

#include "detail/config.cuh"  // first: it rejects a host-only compiler

#include "activation.cuh"
#include "activations.cuh"
#include "backward.cuh"
#include "elementwise.cuh"
#include "error.cuh"
#include "forward.cuh"
#include "fused.cuh"
#include "gate.cuh"
#include "policy.cuh"
#include "relu_mask.cuh"
#include "transform.cuh"
#include "version.cuh"
