// A gate takes two operands: an activation passed where a gate belongs is refused by name.
// EXPECT-ERROR: this is an activation (operator()(C x)), not a gate
#include <cuact/cuact.cuh>

cudaError_t call(const float* a, const float* b, float* out, std::size_t n) {
  return cuact::gate_forward(cuact::silu{}, a, b, out, n);
}
