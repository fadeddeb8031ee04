// Positive control for host_only_functor.cu, host_only_derivative.cu and host_only_op.cu: the same
// functors written as a user should (__host__ __device__, or __device__ only) compile, with every
// warning an error.
// FLAGS: -Werror all-warnings
#include <cuact/cuact.cuh>

struct host_device_relu {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(0) ? x : C(0);
  }
};

struct device_square {
  template <class C>
  __device__ C operator()(C x) const {
    return x * x;
  }
  template <class C>
  __device__ C derivative(C x) const {
    return C(2) * x;
  }
};

struct device_product {
  __device__ float operator()(float x, float y) const { return x * y; }
};

cudaError_t call(const float* x, const float* y, float* out, std::size_t n) {
  cudaError_t e = cuact::forward(host_device_relu{}, x, out, n);
  e = e != cudaSuccess ? e : cuact::forward(device_square{}, x, out, n);
  e = e != cudaSuccess ? e : cuact::backward(device_square{}, x, y, out, n);
  e = e != cudaSuccess
          ? e
          : cuact::transform(device_product{}, cuact::outputs(out), n, cuact::inputs(x, y));
  return e;
}
