// A user-defined activation with a parameter: leaky ReLU, forward and backward, in fp16.
#include <cuact/cuact.cuh>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

// Stops the example at the first failed CUDA or cuact call, with the runtime's error text.
static void check(cudaError_t status) {
  if (status != cudaSuccess) {
    std::printf("error: %s\n", cudaGetErrorString(status));
    std::exit(1);
  }
}

// example-begin custom-activation
/// Leaky ReLU: x > 0 ? x : slope * x; NaN propagates.
struct leaky_relu {
  float slope = 0.01f;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(0) ? x : C(slope) * x;
  }
  template <class C>  // optional: enables cuact::backward
  __host__ __device__ C derivative(C x) const {
    return x > C(0) ? C(1) : C(slope);
  }
};
// example-end custom-activation

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("custom_activation: no CUDA device here, skipped\n");
    return 77;  // CTest reports exit code 77 as skipped
  }
  const std::size_t n = 4099;
  std::vector<__half> x(n), dy(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = __float2half(static_cast<float>(i % 29) - 14.0f);
    dy[i] = __float2half(0.5f);
  }
  __half *d_x = nullptr, *d_y = nullptr, *d_dy = nullptr;
  check(cudaMalloc(&d_x, n * sizeof(__half)));
  check(cudaMalloc(&d_y, n * sizeof(__half)));
  check(cudaMalloc(&d_dy, n * sizeof(__half)));
  check(cudaMemcpy(d_x, x.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
  check(cudaMemcpy(d_dy, dy.data(), n * sizeof(__half), cudaMemcpyHostToDevice));

  const leaky_relu act{0.1f};
  check(cuact::forward(act, d_x, d_y, n));
  check(cuact::backward(act, d_x, d_dy, d_dy, n));  // dy * act'(x), in place over dy

  std::vector<__half> y(n), dx(n);
  check(cudaMemcpy(y.data(), d_y, n * sizeof(__half), cudaMemcpyDeviceToHost));
  check(cudaMemcpy(dx.data(), d_dy, n * sizeof(__half), cudaMemcpyDeviceToHost));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float xi = __half2float(x[i]);
    const float expected_y = __half2float(__float2half(xi > 0 ? xi : 0.1f * xi));
    const float expected_dx = __half2float(__float2half(xi > 0 ? 0.5f : 0.5f * 0.1f));
    wrong += __half2float(y[i]) != expected_y || __half2float(dx[i]) != expected_dx;
  }
  std::printf(
      "custom_activation: leaky relu (slope 0.1) forward and backward over %zu halves, %zu wrong\n",
      n, wrong);
  cudaFree(d_x);
  cudaFree(d_y);
  cudaFree(d_dy);
  return wrong == 0 ? 0 : 1;
}
