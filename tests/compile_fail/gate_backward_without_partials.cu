// cuact::gate_backward needs the gate's partial derivatives (or its gradient); operator() alone
// is not enough.
// EXPECT-ERROR: this backward needs the gate's
// EXPECT-ERROR: partial_a(C a, C b)
#include <cuact/cuact.cuh>

struct forward_only_gate {
  template <class C>
  __host__ __device__ C operator()(C a, C b) const {
    return a * b + a;
  }
};

cudaError_t call(const float* a, const float* b, const float* dy, float* da, float* db,
                 std::size_t n) {
  return cuact::gate_backward(forward_only_gate{}, a, b, dy, da, db, n);
}
