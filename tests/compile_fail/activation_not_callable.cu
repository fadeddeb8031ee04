// An activation without operator().
// EXPECT-ERROR: cuact: an activation must provide
#include <cuact/cuact.cuh>

struct not_an_activation {
  float slope = 0.01f;
};

cudaError_t call(const float* in, float* out, std::size_t n) {
  return cuact::forward(not_an_activation{}, in, out, n);
}
