// Activations as a user writes them: no cost hint, no accuracy tag, plain math functions (so
// cuact estimates their cost, and tabulates their bf16 forwards from 2^27 elements), each with its
// derivative written as plainly. The bench's --user mode times them, forward and backward; the
// table tests check their looked-up results against computed ones.
#pragma once

#include <cmath>

// A named namespace, not an anonymous one: kernels instantiated with these types must have
// external linkage for cuact's hidden-visibility kernels (nvcc warning 1407 otherwise).
namespace cuact_test {
namespace plain {

struct softplus {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(20) ? x : log1p(exp(x));
  }
  template <class C>
  __host__ __device__ C derivative(C x) const {
    return x > C(20) ? C(1) : C(1) / (C(1) + exp(-x));
  }
};

struct elu {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(0) ? x : expm1(x);
  }
  template <class C>
  __host__ __device__ C derivative(C x) const {
    return x > C(0) ? C(1) : exp(x);
  }
};

struct sigmoid {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return C(1) / (C(1) + exp(-x));
  }
  template <class C>
  __host__ __device__ C derivative(C x) const {
    const C s = C(1) / (C(1) + exp(-x));
    return s * (C(1) - s);
  }
};

struct silu {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x / (C(1) + exp(-x));
  }
  template <class C>
  __host__ __device__ C derivative(C x) const {
    const C s = C(1) / (C(1) + exp(-x));
    return s * (C(1) + x * (C(1) - s));
  }
};

struct gelu_tanh {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return C(0.5) * x * (C(1) + tanh(C(0.7978845608) * (x + C(0.044715) * x * x * x)));
  }
  template <class C>
  __host__ __device__ C derivative(C x) const {
    const C t = tanh(C(0.7978845608) * (x + C(0.044715) * x * x * x));
    return C(0.5) * (C(1) + t) +
           C(0.5) * x * (C(1) - t * t) * C(0.7978845608) * (C(1) + C(3 * 0.044715) * x * x);
  }
};

}  // namespace plain
}  // namespace cuact_test
