// in and out of different element types: the error names the entries that store another type.
// EXPECT-ERROR: cuact::forward: in and out must have one element type T
// EXPECT-ERROR: cuact::forward_cast
// EXPECT-ERROR: cuact::forward_quantize
#include <cuact/cuact.cuh>

#include <cuda_bf16.h>

cudaError_t call(const float* in, __nv_bfloat16* out, std::size_t n) {
  return cuact::forward(cuact::relu{}, in, out, n);
}
