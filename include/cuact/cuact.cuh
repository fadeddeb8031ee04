/// \file
/// cuact: elementwise activation kernels. Include this one header.
///
///     cuact::forward(cuact::relu{}, in, out, n, stream);     // out-of-place
///     cuact::forward(cuact::selu{}, data, n, stream);        // in place
///     cuact::backward(cuact::selu{}, x, dy, dx, n, stream);  // dx = dy * selu'(x)
///
/// activations.cuh  relu, selu, and what a user-defined activation provides
/// forward.cuh      cuact::forward
/// backward.cuh     cuact::backward, backward_from_output, relu_forward_mask, relu_backward_mask
/// elementwise.cuh  the kernel template and its per-thread body, for custom launches
#pragma once

#include "activations.cuh"
#include "elementwise.cuh"
#include "backward.cuh"
#include "forward.cuh"
