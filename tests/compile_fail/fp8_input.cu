// 8-bit floats are output-only (a saturating conversion from the compute type): cuact::transform
// with an __nv_fp8_e4m3 input is rejected at compile time.
// EXPECT-ERROR: cuact: unsupported input element type
#include <cuact/cuact.cuh>

#include <cuda_fp8.h>

cudaError_t call(const __nv_fp8_e4m3* in, float* out, std::size_t n) {
  return cuact::transform(cuact::forward_op<cuact::relu, float>{}, cuact::outputs(out), n,
                          cuact::inputs(in));
}
