// A transformer MLP's activations, each in one pass: SwiGLU on the packed [rows, 2 * cols] output
// of the up-projection with its backward, bias + GELU with dbias, and GELU quantized to fp8 with
// its amax. Checks its results against the host and exits 77 without a GPU.
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
    std::printf("fused: no CUDA device here, skipped\n");
    return 77;  // CTest reports exit code 77 as skipped
  }
  const std::size_t rows = 64, cols = 1000;
  std::vector<float> ab(rows * 2 * cols), dy(rows * cols), bias(cols);
  for (std::size_t i = 0; i < ab.size(); ++i)
    ab[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
  for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = std::cos(0.11f * static_cast<float>(i));
  for (std::size_t c = 0; c < cols; ++c) bias[c] = 0.01f * static_cast<float>(c % 17) - 0.08f;
  float *d_ab = nullptr, *d_dy = nullptr, *d_out = nullptr, *d_dab = nullptr, *d_bias = nullptr,
        *d_dbias = nullptr, *d_amax = nullptr;
  __nv_fp8_e4m3* d_fp8 = nullptr;
  check(cudaMalloc(&d_ab, ab.size() * sizeof(float)));
  check(cudaMalloc(&d_dab, ab.size() * sizeof(float)));
  check(cudaMalloc(&d_dy, dy.size() * sizeof(float)));
  check(cudaMalloc(&d_out, dy.size() * sizeof(float)));
  check(cudaMalloc(&d_bias, cols * sizeof(float)));
  check(cudaMalloc(&d_dbias, cols * sizeof(float)));
  check(cudaMalloc(&d_amax, sizeof(float)));
  check(cudaMalloc(&d_fp8, dy.size()));
  check(cudaMemcpy(d_ab, ab.data(), ab.size() * sizeof(float), cudaMemcpyHostToDevice));
  check(cudaMemcpy(d_dy, dy.data(), dy.size() * sizeof(float), cudaMemcpyHostToDevice));
  check(cudaMemcpy(d_bias, bias.data(), cols * sizeof(float), cudaMemcpyHostToDevice));

  // example-begin fused
  // SwiGLU: out = silu(a) * b, a and b the two halves of each row of ab [rows, 2 * cols]
  check(cuact::gated_forward_packed(cuact::silu{}, d_ab, d_out, rows, cols));
  // its backward: dab holds da and db in the same halves
  check(cuact::gated_backward_packed(cuact::silu{}, d_ab, d_dy, d_dab, rows, cols));
  // bias + GELU, and its backward with dbias = column sums of dx (deterministic)
  check(cuact::bias_forward(cuact::gelu{}, d_ab, d_bias, d_out, rows, cols));
  check(cuact::bias_backward(cuact::gelu{}, d_ab, d_bias, d_dy, d_dab, d_dbias, rows, cols));
  // GELU to fp8 e4m3 with a scale; *amax = max |gelu(x)| for the next scale
  check(cuact::forward_quantize(cuact::gelu{}, d_ab, d_fp8, rows * cols, 64.0f, d_amax));
  // x * sigmoid(1.702 x) in one pass: compose and affine make a new activation
  const auto quick_gelu =
      cuact::compose(cuact::linear{1 / 1.702}, cuact::affine(cuact::silu{}, 1.702));
  check(cuact::forward(quick_gelu, d_ab, d_out, rows * cols));
  // example-end fused

  std::vector<float> out(rows * cols), dx(rows * cols), dbias(cols), amax(1);
  check(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  check(cudaMemcpy(dx.data(), d_dab, dx.size() * sizeof(float), cudaMemcpyDeviceToHost));
  check(cudaMemcpy(dbias.data(), d_dbias, cols * sizeof(float), cudaMemcpyDeviceToHost));
  check(cudaMemcpy(amax.data(), d_amax, sizeof(float), cudaMemcpyDeviceToHost));
  double worst = 0, worst_dbias = 0, gelu_max = 0;
  std::vector<double> sums(cols, 0.0);
  for (std::size_t i = 0; i < rows * cols; ++i) {
    const double x = ab[i], h = x + bias[i % cols];
    const double quick = x / (1 + std::exp(-1.702 * x));
    worst = std::fmax(worst, std::fabs(out[i] - quick) / (std::fabs(quick) + 1e-3));
    const double cdf = 0.5 * std::erfc(-h / std::sqrt(2.0));
    const double pdf = std::exp(-0.5 * h * h) / std::sqrt(2 * M_PI);
    const double dx_ref = dy[i] * (cdf + h * pdf);
    worst = std::fmax(worst, std::fabs(dx[i] - dx_ref) / (std::fabs(dx_ref) + 1e-3));
    sums[i % cols] += dx_ref;
    gelu_max = std::fmax(gelu_max, std::fabs(x * 0.5 * std::erfc(-x / std::sqrt(2.0))));
  }
  for (std::size_t c = 0; c < cols; ++c) {
    worst_dbias =
        std::fmax(worst_dbias, std::fabs(dbias[c] - sums[c]) / (std::fabs(sums[c]) + 1e-3));
  }
  const double amax_error = std::fabs(amax[0] - gelu_max) / gelu_max;
  std::printf(
      "fused: %zu x %zu, worst relative error %.2e (quick gelu, dx), dbias %.2e, amax %.2e\n", rows,
      cols, worst, worst_dbias, amax_error);
  cudaFree(d_ab);
  cudaFree(d_dab);
  cudaFree(d_dy);
  cudaFree(d_out);
  cudaFree(d_bias);
  cudaFree(d_dbias);
  cudaFree(d_amax);
  cudaFree(d_fp8);
  return worst < 1e-4 && worst_dbias < 1e-4 && amax_error < 1e-2 ? 0 : 1;
}
