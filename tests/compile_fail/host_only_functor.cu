// An activation whose operator() is host code only (no __device__): its kernel would compile to
// no stores, so the call must not compile; the error names the functor's operator().
// EXPECT-ERROR: calling a __host__ function("host_only_relu::operator ()(float) const")
// EXPECT-ERROR: from a __host__ __device__ function
#include <cuact/cuact.cuh>

struct host_only_relu {
  float operator()(float x) const { return x > 0.0f ? x : 0.0f; }
};

cudaError_t call(const float* in, float* out, std::size_t n) {
  return cuact::forward(host_only_relu{}, in, out, n);
}
