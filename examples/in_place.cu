// SELU in place on bf16: data = selu(data), computed in float, stored rounded to nearest even.
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

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("in_place: no CUDA device here, skipped\n");
    return 77;  // CTest reports exit code 77 as skipped
  }
  const std::size_t n = 1000003;  // not a multiple of the vector width: the tail is handled
  std::vector<__nv_bfloat16> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = __float2bfloat16(std::sin(0.001f * i) * 4.0f);

  __nv_bfloat16* data = nullptr;
  check(cudaMalloc(&data, n * sizeof(__nv_bfloat16)));
  check(cudaMemcpy(data, host.data(), n * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));

  // example-begin in-place
  check(cuact::forward(cuact::selu{}, data, n));  // data = selu(data), in place
  // example-end in-place

  std::vector<__nv_bfloat16> result(n);
  check(cudaMemcpy(result.data(), data, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = __bfloat162float(host[i]);
    const double expected =
        x > 0 ? cuact::selu::scale * x : cuact::selu::scale * cuact::selu::alpha * std::expm1(x);
    const double error =
        std::fabs(__bfloat162float(result[i]) - expected) / (std::fabs(expected) + 1e-30);
    worst = error > worst ? error : worst;
  }
  std::printf(
      "in_place: selu over %zu bf16 values in place, worst relative error %.2e (bf16 ulp 7.8e-3)\n",
      n, worst);
  cudaFree(data);
  return worst <= 7.8125e-3 ? 0 : 1;
}
