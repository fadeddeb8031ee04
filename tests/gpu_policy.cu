// cuact::scoped_policy on the device: forward, backward and the bias forward under forced policies
// (block sizes, vectors per thread, passes, a residency cap, bulk tiles, a grid smaller than the
// work) give the very bits of select_policy's launch, for relu, silu and gelu in fp32 and bf16 at
// sizes straddling vector and tile edges, inputs with negatives, NaN, +-inf, +-0 and denormals,
// outputs poisoned first. Elementwise results do not depend on the grid; a forced policy that
// changed them would be a bug of the override.
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <cuact/cuact.cuh>

#include "catch.hpp"
#include "device.hpp"

namespace {
using namespace cuact_test;

template <class T>
std::vector<T> inputs(std::size_t n) {
  std::vector<T> host(n);
  const float special[] = {0.0f,
                           -0.0f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(),
                           1e-40f,
                           -1e-40f};
  std::uint32_t state = 12345;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const float x = i % 17 == 0 ? special[(i / 17) % 7]
                                : (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 16.0f;
    host[i] = static_cast<T>(x);
  }
  return host;
}

template <class T>
std::vector<unsigned char> bytes_of(const T* data, std::size_t n) {
  std::vector<unsigned char> host(n * sizeof(T));
  CUACT_CUDA_REQUIRE(cudaMemcpy(host.data(), data, host.size(), cudaMemcpyDeviceToHost));
  return host;
}

/// The forced policies: {blocks, threads, vectors per thread, passes, heavy, cap, algorithm}.
const cuact::policy forced_policies[] = {
    {0, 128, 1, 1, true},
    {0, 256, 2, 1, true},
    {0, 1024, 1, 4, true},
    {0, 64, 4, 2, true},
    {0, 128, 1, 1, false, 16 * 1024},
    {7, 128, 2, 1, true},  // fewer blocks than the work: the loop grid-strides
    {0, 256, 1, 1, false, 0, cuact::algorithm::bulk_tiles},
};

template <class T, class A>
void check_forced_policies(A act, std::size_t n) {
  CAPTURE(n, sizeof(T));
  const std::vector<T> host_x = inputs<T>(n);
  device_memory x(n * sizeof(T) + 16), dy(n * sizeof(T) + 16), want(n * sizeof(T) + 16),
      got(n * sizeof(T) + 16), bias(64 * sizeof(T));
  CUACT_CUDA_REQUIRE(cudaMemcpy(x.get(), host_x.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CUACT_CUDA_REQUIRE(cudaMemcpy(dy.get(), host_x.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CUACT_CUDA_REQUIRE(cudaMemcpy(bias.get(), host_x.data(), std::min<std::size_t>(n, 64) * sizeof(T),
                                cudaMemcpyHostToDevice));
  const std::size_t cols = n % 64 == 0 ? 64 : 1;
  auto run = [&](int entry, T* out) {
    CUACT_CUDA_REQUIRE(cudaMemset(out, 0xA5, n * sizeof(T)));  // poison
    cudaError_t status = cudaSuccess;
    if (entry == 0) status = cuact::forward(act, x.get<const T>(), out, n);
    if (entry == 1) status = cuact::backward(act, x.get<const T>(), dy.get<const T>(), out, n);
    if (entry == 2) {
      status = cuact::bias_forward(act, x.get<const T>(), bias.get<const T>(), out, n / cols, cols);
    }
    CUACT_CUDA_REQUIRE(status);
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  };
  for (int entry = 0; entry < 3; ++entry) {
    CAPTURE(entry);
    run(entry, want.get<T>());
    const auto expected = bytes_of(want.get<const T>(), n);
    for (const cuact::policy& forced : forced_policies) {
      CAPTURE(forced.blocks, forced.threads_per_block, forced.vectors_per_thread, forced.passes,
              forced.dynamic_shared_bytes, int(forced.algorithm));
      {
        cuact::scoped_policy guard{forced};
        run(entry, got.get<T>());
      }
      CHECK(bytes_of(got.get<const T>(), n) == expected);
    }
  }
}
}  // namespace

TEST_CASE("scoped_policy: forced policies give select_policy's results", "[gpu][policy]") {
  for (const std::size_t n :
       {std::size_t(1), std::size_t(1027), std::size_t(64 * 4099), (std::size_t(1) << 20) + 5}) {
    check_forced_policies<float>(cuact::relu{}, n);
    check_forced_policies<float>(cuact::silu{}, n);
    check_forced_policies<float>(cuact::gelu{}, n);
    check_forced_policies<__nv_bfloat16>(cuact::silu{}, n);
    check_forced_policies<__nv_bfloat16>(cuact::gelu{}, n);
  }
}
