// The launch policy: a cost hint, a tuning trait outside the activation, and an override of the
// policy cuact::select_policy chooses (a fixed policy, then a selector of our own). The results
// are the same under every policy; only the launch differs.
#include <cuact/cuact.cuh>

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

// example-begin tuning-hint
/// x * sigmoid(x): tens of instructions per element, so it declares the heavy hint.
struct swish {
  static constexpr cuact::cost cost = cuact::cost::heavy;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x / (C(1) + exp(-x));
  }
};
// example-end tuning-hint

// example-begin tuning-traits
/// Optional, outside the activation: swish's forward runs as bulk tiles where the budget is roomy
/// (measure first: bench/ --shapes).
template <>
struct cuact::tuning_traits<swish> : cuact::tuning_defaults_of<swish> {
  static constexpr bool gains_from_bulk_tiles = true;
};
// example-end tuning-traits

// example-begin tuning-selector
/// A selector: select_policy's choice, but blocks of 256 threads.
cuact::policy wide_blocks(const cuact::policy_request&, const cuact::policy& chosen, const void*) {
  cuact::policy p = chosen;
  p.threads_per_block = 256;
  p.blocks = 0;  // recomputed to cover the work (cuact::fit_policy)
  return p;
}
// example-end tuning-selector

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  const std::size_t n = (std::size_t(1) << 20) + 3;
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 201) / 20.0f - 5.0f;
  float *x = nullptr, *y = nullptr;
  check(cudaMalloc(&x, n * sizeof(float)));
  check(cudaMalloc(&y, n * sizeof(float)));
  check(cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  check(cuact::forward(swish{}, x, y, n));  // select_policy's launch
  std::vector<float> chosen(n), forced(n);
  check(cudaMemcpy(chosen.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  {
    // example-begin tuning-override
    // Every cuact call on this thread while `forced_policy` lives: 512-thread blocks, two vectors per
    // thread, one pass, the elementwise kernel (blocks 0: as many as cover the work).
    const cuact::scoped_policy forced_policy{
        cuact::policy{0, 512, 2, 1, true, 0, cuact::algorithm::elementwise}};
    check(cuact::forward(swish{}, x, y, n));
    // example-end tuning-override
  }
  check(cudaMemcpy(forced.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  if (forced != chosen) {
    std::printf("error: a forced policy changed the results\n");
    return 1;
  }
  {
    const cuact::scoped_policy selected{cuact::policy_selector{wide_blocks, nullptr}};
    check(cuact::forward(swish{}, x, y, n));
  }
  check(cudaMemcpy(forced.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  if (forced != chosen) {
    std::printf("error: a selector changed the results\n");
    return 1;
  }
  std::printf("swish(1) = %f under every policy\n", static_cast<double>(chosen[120]));
  check(cudaFree(x));
  check(cudaFree(y));
  return 0;
}
