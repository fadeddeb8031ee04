// The second translation unit: the same entry points, instantiated again.
#include <cuact/cuact.cuh>

cudaError_t relu_backward(const float* x, const float* dy, float* dx, std::size_t n) {
  return cuact::backward(cuact::relu{}, x, dy, dx, n);
}
