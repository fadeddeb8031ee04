// ReLU out of place on fp32: out = relu(in), NaN kept, in untouched.
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
    std::printf("out_of_place: no CUDA device here, skipped\n");
    return 77;  // CTest reports exit code 77 as skipped
  }
  const std::size_t n = 1 << 20;
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 17) - 8.5f;
  host[3] = NAN;

  // example-begin quickstart
  float *in = nullptr, *out = nullptr;
  check(cudaMalloc(&in, n * sizeof(float)));
  check(cudaMalloc(&out, n * sizeof(float)));
  check(cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  cudaStream_t stream = nullptr;                                           // or your own stream
  cudaError_t status = cuact::forward(cuact::relu{}, in, out, n, stream);  // out = relu(in)
  if (status != cudaSuccess) {  // bad arguments are reported here, before any launch
    std::printf("cuact::forward: %s (%s)\n", cudaGetErrorString(status),
                cuact::last_error_detail());  // e.g. "input 0 is pageable host memory ..."
    return 1;
  }
  // example-end quickstart

  std::vector<float> result(n);
  check(cudaMemcpy(result.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
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
