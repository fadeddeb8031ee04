// operator() that is not const: the kernel holds the activation by const value, so it is
// not callable there, and the check says what signature is expected.
// EXPECT-ERROR: cuact: an activation must provide
#include <cuact/cuact.cuh>

struct mutable_call {
  template <class C>
  __host__ __device__ C operator()(C x) {
    return x;
  }
};

cudaError_t call(const float* in, float* out, std::size_t n) {
  return cuact::forward(mutable_call{}, in, out, n);
}
