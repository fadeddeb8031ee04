// A training step's activation without keeping x: SELU forward in place, then the gradient from
// the output y alone (cuact::backward_from_output); and ReLU with a 1-bit mask instead of y.
#include <cuact/cuact.cuh>

#include <cmath>
#include <cstdint>
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
    std::printf("training_step: no CUDA device here, skipped\n");
    return 77;  // CTest reports exit code 77 as skipped
  }
  const std::size_t n = (1 << 20) + 5;
  std::vector<float> x(n), dy(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
    dy[i] = std::cos(0.11f * static_cast<float>(i));
  }
  float *act = nullptr, *grad = nullptr;
  std::uint32_t* mask = nullptr;
  check(cudaMalloc(&act, n * sizeof(float)));
  check(cudaMalloc(&grad, n * sizeof(float)));
  check(cudaMalloc(&mask, cuact::relu_mask_words(n) * sizeof(std::uint32_t)));
  check(cudaMemcpy(act, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  check(cudaMemcpy(grad, dy.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  // example-begin training-step
  check(cuact::forward(cuact::selu{}, act, n));  // act = selu(x), x is gone
  check(cuact::backward_from_output(cuact::selu{}, act, grad, grad, n));  // grad = dy * selu'(x)
  // example-end training-step

  std::vector<float> dx(n);
  check(cudaMemcpy(dx.data(), grad, n * sizeof(float), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double xi = x[i];
    const double expected = xi <= 0 ? dy[i] * cuact::selu::scale * cuact::selu::alpha * std::exp(xi)
                                    : dy[i] * cuact::selu::scale;
    worst = std::fmax(worst, std::fabs(dx[i] - expected) / (std::fabs(expected) + 1e-6));
  }

  // ReLU keeping one bit per element: 32x less saved memory than y in fp32
  check(cudaMemcpy(act, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  check(cudaMemcpy(grad, dy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  check(cuact::relu_forward_mask(act, act, mask, n));
  check(cuact::relu_backward_mask(mask, grad, grad, n));
  check(cudaMemcpy(dx.data(), grad, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += dx[i] != (x[i] > 0 ? dy[i] : 0.0f);

  std::printf(
      "training_step: selu in place + backward_from_output over %zu floats, worst relative error %.2e; "
      "relu mask backward %zu wrong\n",
      n, worst, wrong);
  cudaFree(act);
  cudaFree(grad);
  cudaFree(mask);
  return worst < 1e-5 && wrong == 0 ? 0 : 1;
}
