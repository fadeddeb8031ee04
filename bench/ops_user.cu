// User functors as a user would write them: no is_heavy hint, no accuracy tag, plain math
// functions. cuact's launch model estimates their cost from the kernel's register count; the
// --user mode reports what it estimated. fp32 and bf16, forward only (no derivatives).
#include <cuda_bf16.h>

#include "ops_impl.cuh"

namespace bench {
// A named namespace, not an anonymous one: kernels instantiated with these types must have
// external linkage for cuact's hidden-visibility kernels (nvcc warning 1407 otherwise).
namespace user_functors {

struct user_softplus {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(20) ? x : log1p(exp(x));
  }
};

struct user_elu {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(0) ? x : expm1(x);
  }
};

struct user_sigmoid {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return C(1) / (C(1) + exp(-x));
  }
};

struct user_silu {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x / (C(1) + exp(-x));
  }
};

struct user_gelu_tanh {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return C(0.5) * x * (C(1) + tanh(C(0.7978845608) * (x + C(0.044715) * x * x * x)));
  }
};

template <class T>
void add_users(std::vector<entry>& out) {
  ops_detail::add_activation<T>(out, "user_softplus", user_softplus{}, false, 0);
  ops_detail::add_activation<T>(out, "user_elu", user_elu{}, false, 1);
  ops_detail::add_activation<T>(out, "user_sigmoid", user_sigmoid{}, false, 2);
  ops_detail::add_activation<T>(out, "user_silu", user_silu{}, false, 3);
  ops_detail::add_activation<T>(out, "user_gelu_tanh", user_gelu_tanh{}, false, 4);
}

}  // namespace user_functors

void add_user_entries(std::vector<entry>& out) {
  user_functors::add_users<float>(out);
  user_functors::add_users<__nv_bfloat16>(out);
}

}  // namespace bench
