// cuact::forward on int storage: only float, double, __half and __nv_bfloat16 are supported.
// EXPECT-ERROR: cuact: unsupported input element type
#include <cuact/cuact.cuh>

cudaError_t call(const int* in, int* out, std::size_t n) {
  return cuact::forward(cuact::relu{}, in, out, n);
}
