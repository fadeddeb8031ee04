// Positive control for forward_type_mismatch.cu and backward_type_mismatch.cu: one element type
// through forward and backward (const or not, explicit vector width, in place), and what their
// messages point to for two types.
// FLAGS: -Werror all-warnings
#include <cuact/cuact.cuh>

#include <cuda_bf16.h>
#include <cuda_fp8.h>

cudaError_t call(float* x, float* y, const float* dy, __nv_bfloat16* out, __nv_fp8_e4m3* q,
                 float* amax, std::size_t n, cudaStream_t s) {
  cudaError_t e = cuact::forward(cuact::relu{}, x, y, n, s);
  e = e != cudaSuccess ? e : cuact::forward<4>(cuact::relu{}, static_cast<const float*>(x), y, n);
  e = e != cudaSuccess ? e : cuact::forward(cuact::relu{}, x, n, s);
  e = e != cudaSuccess ? e : cuact::backward(cuact::selu{}, x, dy, y, n, s);
  e = e != cudaSuccess ? e : cuact::backward(cuact::selu{}, x, y, y, n, s);
  e = e != cudaSuccess ? e : cuact::backward_from_output(cuact::relu{}, y, dy, x, n, s);
  e = e != cudaSuccess ? e : cuact::forward_cast(cuact::relu{}, x, out, n, s);
  e = e != cudaSuccess ? e
                       : cuact::forward_quantize(cuact::relu{}, x, q, n, 1.0f, amax,
                                                 cuact::amax_update::reset, s);
  e = e != cudaSuccess ? e
                       : cuact::transform(cuact::gradient_op<cuact::selu, __nv_bfloat16>{{}, {}},
                                          cuact::outputs(out), n, cuact::inputs(x, dy), s);
  return e;
}
