// 8 floats are 32 bytes: wider than one vector access.
// EXPECT-ERROR: VecWidth * sizeof(T) must be at most 16 bytes
#include <cuact/cuact.cuh>

cudaError_t call(const float* in, float* out, std::size_t n) {
  return cuact::forward<8>(cuact::relu{}, in, out, n);
}
