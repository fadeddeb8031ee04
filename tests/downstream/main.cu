// Build test of the installed / add_subdirectory'd package. Without a CUDA device it says so
// and exits 0; with one it runs relu forward and backward on a few values and checks them.
#include <cuact/cuact.cuh>

#include <cstdio>

#ifdef CUACT_PACKAGE_VERSION
static_assert(CUACT_VERSION == (CUACT_PACKAGE_VERSION),
              "cuact's CMake package version differs from include/cuact/version.cuh");
#endif

cudaError_t relu_backward(const float* x, const float* dy, float* dx, std::size_t n);  // second.cu

namespace {

int check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::printf("cuact_downstream: %s: %s\n", what, cudaGetErrorString(status));
    return 1;
  }
  return 0;
}

}  // namespace

int main() {
  int devices = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&devices);
      status != cudaSuccess || devices == 0) {
    std::printf("cuact_downstream: built; no CUDA device (%s), nothing run\n",
                cudaGetErrorString(status));
    return 0;
  }

  constexpr std::size_t n = 4;
  const float x_host[n] = {-2.0f, -0.0f, 0.5f, 3.0f};
  const float dy_host[n] = {1.0f, 1.0f, 1.0f, 1.0f};
  const float y_expected[n] = {0.0f, 0.0f, 0.5f, 3.0f};
  const float dx_expected[n] = {0.0f, 0.0f, 1.0f, 1.0f};

  float* buffers = nullptr;
  if (check(cudaMalloc(&buffers, 4 * n * sizeof(float)), "cudaMalloc")) return 1;
  float* x = buffers;
  float* y = x + n;
  float* dy = y + n;
  float* dx = dy + n;
  float y_host[n] = {}, dx_host[n] = {};
  const int failed =
      check(cudaMemcpy(x, x_host, sizeof x_host, cudaMemcpyHostToDevice), "copy x") ||
      check(cudaMemcpy(dy, dy_host, sizeof dy_host, cudaMemcpyHostToDevice), "copy dy") ||
      check(cuact::forward(cuact::relu{}, x, y, n), "cuact::forward") ||
      check(relu_backward(x, dy, dx, n), "cuact::backward") ||
      check(cudaMemcpy(y_host, y, sizeof y_host, cudaMemcpyDeviceToHost), "copy y") ||
      check(cudaMemcpy(dx_host, dx, sizeof dx_host, cudaMemcpyDeviceToHost), "copy dx");
  cudaFree(buffers);
  if (failed) return 1;

  for (std::size_t i = 0; i < n; ++i) {
    if (y_host[i] != y_expected[i] || dx_host[i] != dx_expected[i]) {
      std::printf("cuact_downstream: element %zu: relu(%g) = %g, dx = %g; expected %g, %g\n", i,
                  x_host[i], y_host[i], dx_host[i], y_expected[i], dx_expected[i]);
      return 1;
    }
  }
  std::printf("cuact_downstream: relu forward and backward on the device: OK\n");
  return 0;
}
