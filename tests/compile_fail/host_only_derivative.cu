// An activation whose derivative is host code only: cuact::backward must not compile.
// EXPECT-ERROR: host_only_square::derivative<float>
// EXPECT-ERROR: from a __host__ __device__ function
#include <cuact/cuact.cuh>

struct host_only_square {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x * x;
  }
  template <class C>
  C derivative(C x) const {
    return C(2) * x;
  }
};

cudaError_t call(const float* x, const float* dy, float* dx, std::size_t n) {
  return cuact::backward(host_only_square{}, x, dy, dx, n);
}
