// cuact::backward needs derivative(x) (or gradient(dy, x)); operator() alone is not enough.
// EXPECT-ERROR: cuact::backward: the activation needs a member
// EXPECT-ERROR: derivative(C x)
#include <cuact/cuact.cuh>

struct forward_only {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(0) ? x : C(0.01) * x;
  }
};

cudaError_t call(const float* x, const float* dy, float* dx, std::size_t n) {
  return cuact::backward(forward_only{}, x, dy, dx, n);
}
