// Parameterized activations from cuact's family, in bf16: softplus with beta = 2 and threshold
// 10, forward and backward from the input; ELU with alpha = 0.5 in place, backward from its
// output (the input is gone). Checked against float64 within 1 bf16 ulp.
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

namespace {

/// |got - expected| within one bf16 ulp of expected (8 significant bits), or both 0.
bool within_one_ulp(__nv_bfloat16 got, double expected) {
  const double g = __bfloat162float(got);
  const double ulp = expected == 0 ? 0 : std::ldexp(1.0, std::ilogb(expected) - 7);
  return std::fabs(g - expected) <= ulp;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("parameterized_activation: no CUDA device here, skipped\n");
    return 77;  // CTest reports exit code 77 as skipped
  }
  const std::size_t n = 10001;
  std::vector<__nv_bfloat16> host_x(n), host_dy(n);
  for (std::size_t i = 0; i < n; ++i) {
    host_x[i] = __float2bfloat16(-12.0f + 24.0f * static_cast<float>(i) / static_cast<float>(n));
    host_dy[i] = __float2bfloat16(0.25f);
  }
  __nv_bfloat16 *x = nullptr, *y = nullptr, *dy = nullptr, *dx = nullptr;
  for (auto** p : {&x, &y, &dy, &dx}) check(cudaMalloc(p, n * sizeof(__nv_bfloat16)));
  check(cudaMemcpy(x, host_x.data(), n * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
  check(cudaMemcpy(dy, host_dy.data(), n * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));

  // example-begin parameterized
  // Parameters are public members, named, ordered and defaulted as in torch.nn.functional:
  // F.softplus(x, beta=2.0, threshold=10.0) and F.elu(x, alpha=0.5).
  const cuact::softplus softplus{2.0, 10.0};
  check(cuact::forward(softplus, x, y, n));        // y = softplus(x)
  check(cuact::backward(softplus, x, dy, dx, n));  // dx = dy * softplus'(x)

  const cuact::elu elu{0.5};
  check(cuact::forward(elu, x, n));                       // x = elu(x), in place
  check(cuact::backward_from_output(elu, x, dy, dy, n));  // dy *= elu'(x), from elu(x)
  // example-end parameterized

  std::vector<__nv_bfloat16> sp(n), sp_grad(n), e(n), e_grad(n);
  check(cudaMemcpy(sp.data(), y, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
  check(cudaMemcpy(sp_grad.data(), dx, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
  check(cudaMemcpy(e.data(), x, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
  check(cudaMemcpy(e_grad.data(), dy, n * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = __bfloat162float(host_x[i]);
    const double sp_ref = 2 * v > 10 ? v : std::log1p(std::exp(2 * v)) / 2;
    const double sp_grad_ref = 0.25 * (2 * v > 10 ? 1 : 1 / (1 + std::exp(-2 * v)));
    const double elu_ref = v > 0 ? v : 0.5 * std::expm1(v);
    // from the stored output y: y <= 0 ? y + alpha : 1, as PyTorch's elu_backward(is_result=True)
    const double y_stored = __bfloat162float(e[i]);
    const double elu_grad_ref = 0.25 * (y_stored <= 0 ? y_stored + 0.5 : 1);
    wrong += !within_one_ulp(sp[i], sp_ref) + !within_one_ulp(sp_grad[i], sp_grad_ref) +
             !within_one_ulp(e[i], elu_ref) + !within_one_ulp(e_grad[i], elu_grad_ref);
  }
  std::printf(
      "parameterized_activation: softplus(beta=2, threshold=10) and elu(alpha=0.5), forward "
      "and backward over %zu bf16 values, %zu outside 1 ulp\n",
      n, wrong);
  for (auto* p : {x, y, dy, dx}) cudaFree(p);
  return wrong == 0 ? 0 : 1;
}
