// x, dy and dx of different element types: the error names cuact::transform with gradient_op.
// EXPECT-ERROR: cuact::backward: x, dy and dx must have one element type T
// EXPECT-ERROR: cuact::gradient_op
// EXPECT-ERROR: cuact::backward_from_output: x, dy and dx must have one element type T
#include <cuact/cuact.cuh>

#include <cuda_bf16.h>

cudaError_t call(const float* x, const float* dy, __nv_bfloat16* dx, std::size_t n) {
  const cudaError_t e = cuact::backward(cuact::selu{}, x, dy, dx, n);
  return e != cudaSuccess ? e : cuact::backward_from_output(cuact::relu{}, x, dy, dx, n);
}
