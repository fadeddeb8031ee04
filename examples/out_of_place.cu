// ReLU out of place on fp32: out = relu(in), NaN kept, in untouched.
#include <cuact/cuact.cuh>

#include <cmath>
#include <cstdio>
#include <vector>

#include "example_support.cuh"

int main() {
  require_gpu("out_of_place");
  const std::size_t n = 1 << 20;
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 17) - 8.5f;
  host[3] = NAN;

  // example-begin quickstart
  float *in = nullptr, *out = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&in, n * sizeof(float)));
  EXAMPLE_CHECK(cudaMalloc(&out, n * sizeof(float)));
  EXAMPLE_CHECK(cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  cudaStream_t stream = nullptr;                                           // or your own stream
  cudaError_t status = cuact::forward(cuact::relu{}, in, out, n, stream);  // out = relu(in)
  if (status != cudaSuccess) {  // bad arguments are reported here, before any launch
    std::printf("cuact::forward: %s\n", cudaGetErrorString(status));
    return 1;
  }
  // example-end quickstart

  std::vector<float> result(n);
  EXAMPLE_CHECK(cudaMemcpy(result.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float expected = std::isnan(host[i]) ? host[i] : (host[i] > 0 ? host[i] : 0.0f);
    wrong += !(result[i] == expected || (std::isnan(result[i]) && std::isnan(expected)));
  }
  std::printf("out_of_place: relu over %zu floats, %zu wrong, relu(NaN) = %f\n", n, wrong,
              result[3]);
  cudaFree(in);
  cudaFree(out);
  return wrong == 0 ? 0 : 1;
}
