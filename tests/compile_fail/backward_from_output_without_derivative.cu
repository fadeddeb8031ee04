// cuact::backward_from_output needs derivative_from_output(y) (or gradient_from_output(dy, y));
// a derivative of x, which backward uses, is not enough.
// EXPECT-ERROR: cuact::backward_from_output: the activation needs a member
// EXPECT-ERROR: derivative_from_output(C y)
#include <cuact/cuact.cuh>

struct derivative_of_x_only {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x * x;
  }
  template <class C>
  __host__ __device__ C derivative(C x) const {
    return C(2) * x;
  }
};

cudaError_t call(const float* y, const float* dy, float* dx, std::size_t n) {
  return cuact::backward_from_output(derivative_of_x_only{}, y, dy, dx, n);
}
