// Positive control: no EXPECT-ERROR line, so this must compile with exactly the command the
// negative cases use. If the include path or a flag is wrong, this fails, instead of every
// negative case "failing as expected".
#include <cuact/cuact.cuh>
#include <cuda/std/tuple>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

/// A user activation with only operator() and a parameter: enough for cuact::forward.
struct leaky_relu {
  float slope = 0.01f;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(0) || x != x ? x : C(slope) * x;
  }
};

/// A user activation with derivatives: enough for backward and backward_from_output.
struct square_plus {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x * x + x;
  }
  template <class C>
  __host__ __device__ C derivative(C x) const {
    return C(2) * x + C(1);
  }
};

struct leaky_relu_with_grad : leaky_relu {
  template <class C>
  __host__ __device__ C derivative_from_output(C y) const {
    return y > C(0) ? C(1) : C(slope);
  }
};

template <class T>
cudaError_t all_entries(T* a, T* b, T* c, std::uint32_t* mask, std::size_t n, cudaStream_t s) {
  cudaError_t e = cudaSuccess;
  e = e != cudaSuccess ? e : cuact::forward(leaky_relu{0.2f}, a, b, n, s);
  e = e != cudaSuccess ? e : cuact::forward(leaky_relu{}, a, n, s);  // in place
  e = e != cudaSuccess ? e : cuact::forward<1>(cuact::relu{}, a, b, n, s);
  e = e != cudaSuccess
          ? e
          : cuact::forward<static_cast<int>(16 / sizeof(T))>(cuact::selu{}, a, b, n, s);
  e = e != cudaSuccess ? e : cuact::backward(square_plus{}, a, b, c, n, s);
  e = e != cudaSuccess ? e : cuact::backward(cuact::relu{}, a, b, c, n, s);
  e = e != cudaSuccess ? e : cuact::backward(cuact::selu{}, a, b, b, n, s);  // dx == dy
  e = e != cudaSuccess ? e : cuact::backward_from_output(leaky_relu_with_grad{}, a, b, c, n, s);
  e = e != cudaSuccess ? e : cuact::backward_from_output(cuact::selu{}, a, b, c, n, s);
  e = e != cudaSuccess ? e : cuact::relu_forward_mask(a, b, mask, n, s);
  e = e != cudaSuccess ? e : cuact::relu_backward_mask(mask, b, c, n, s);
  return e;
}

template cudaError_t all_entries(float*, float*, float*, std::uint32_t*, std::size_t, cudaStream_t);
template cudaError_t all_entries(double*, double*, double*, std::uint32_t*, std::size_t,
                                 cudaStream_t);
template cudaError_t all_entries(__half*, __half*, __half*, std::uint32_t*, std::size_t,
                                 cudaStream_t);
template cudaError_t all_entries(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, std::uint32_t*,
                                 std::size_t, cudaStream_t);

/// cuact::transform: two inputs of two types into two outputs of two types, and fp32 -> fp8.
struct relu_and_product {
  template <class C>
  __host__ __device__ cuda::std::tuple<C, C> operator()(C x, C dy) const {
    return {x > C(0) ? x : C(0), x * dy};
  }
};

cudaError_t transforms(const float* x, const float* dy, __nv_bfloat16* y, float* p,
                       __nv_fp8_e4m3* q, __nv_fp8_e5m2* r, std::size_t n, cudaStream_t s) {
  cudaError_t e =
      cuact::transform(relu_and_product{}, cuact::outputs(y, p), n, cuact::inputs(x, dy), s);
  e = e != cudaSuccess ? e
                       : cuact::transform(cuact::forward_op<cuact::selu, __nv_fp8_e4m3>{},
                                          cuact::outputs(q), n, cuact::inputs(x), s);
  e = e != cudaSuccess ? e
                       : cuact::transform<4>(cuact::gradient_op<cuact::selu, __nv_fp8_e5m2>{},
                                             cuact::outputs(r), n, cuact::inputs(x, dy), s);
  return e;
}

/// A custom launch of the kernel template with the user's own grid.
void custom_launch(const float* in, float* out, std::size_t n, cudaStream_t s) {
  const auto params =
      cuact::make_elementwise_params<4>(cuact::forward_op<cuact::relu, float>{}, out, n, in);
  cuact::elementwise_kernel<<<64, 256, 0, s>>>(params);
}
