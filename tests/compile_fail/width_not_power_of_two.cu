// A vector width of 3 elements is not one of the supported widths.
// EXPECT-ERROR: cuact: VecWidth must be
#include <cuact/cuact.cuh>

cudaError_t call(const float* in, float* out, std::size_t n) {
  return cuact::forward<3>(cuact::relu{}, in, out, n);
}
