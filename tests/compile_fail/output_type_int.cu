// cuact::transform writing int: outputs are float, double, __half, __nv_bfloat16 or the 8-bit
// floats.
// EXPECT-ERROR: cuact: unsupported output element type
#include <cuact/cuact.cuh>

cudaError_t call(const float* in, int* out, std::size_t n) {
  return cuact::transform(cuact::forward_op<cuact::relu, float>{}, cuact::outputs(out), n,
                          cuact::inputs(in));
}
