// Session 44 prototype: fp8 casts and quantizes, x memcpy of the bytes read + written.
#include <cuact/cuact.cuh>
#include <cuact/fused.cuh>
#include <cuda_fp16.h>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <functional>
#include "../../bench/busy_start.cuh"
#define CK(x)                                                                \
  do {                                                                       \
    cudaError_t e_ = (x);                                                    \
    if (e_ != cudaSuccess) {                                                 \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

template <class T>
__global__ void fill_normal(T* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 27;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 31;
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) * 0x1p-24f;
    const float u2 = static_cast<float>(h & 0xffffff) * 0x1p-24f;
    const float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    p[i] = cuact::detail::from_compute<T>(z);
  }
}

__global__ void sprinkle(__nv_bfloat16* p, std::size_t n, std::size_t every) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    if (i % every == 7) p[i] = __float2bfloat16((i / every) % 2 ? -0.0f : 0.0f);
}
template <bool CB, class A, class T>
void direct(A, const T* in, __nv_fp8_e4m3* out, std::size_t n, float* amax, const float* scale) {
  using namespace cuact::detail;
  CK((run_quantize<cuact::auto_width>(amax_op<A, __nv_fp8_e4m3>{{}, {}, 1.0f, nullptr}, out, n, in,
                                      amax, scale, true, nullptr,
                                      CB ? cost_hint::compute_bound : cost_hint::heavy)));
}

float time_ms(const std::function<void()>& run, int reps) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  run();
  run();
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    CK(bench::busy_start(nullptr));
    CK(cudaEventRecord(a));
    run();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  const std::size_t n = std::size_t(4096) * 393216;
  const int reps = 10;
  const char* tag = argc > 1 ? argv[1] : "?";
  float* x32;
  __nv_bfloat16* x16;
  __half* xh;
  __nv_fp8_e4m3* e4;
  float* amax;
  char* cpy;
  CK(cudaMalloc(&x32, 4 * n));
  CK(cudaMalloc(&x16, 2 * n));
  CK(cudaMalloc(&xh, 2 * n));
  CK(cudaMalloc(&e4, n));
  CK(cudaMalloc(&amax, 64));
  CK(cudaMalloc(&cpy, 6 * n));
  fill_normal<<<4096, 256>>>(x32, n, 4);
  fill_normal<<<4096, 256>>>(x16, n, 5);
  fill_normal<<<4096, 256>>>(xh, n, 6);
  const float four = 4.0f;
  CK(cudaMemcpy(amax + 1, &four, 4, cudaMemcpyHostToDevice));
  const float* scale = amax + 1;
  __nv_bfloat16 *z1, *z10;
  CK(cudaMalloc(&z1, 2 * n));
  CK(cudaMalloc(&z10, 2 * n));
  CK(cudaMemcpy(z1, x16, 2 * n, cudaMemcpyDeviceToDevice));
  CK(cudaMemcpy(z10, x16, 2 * n, cudaMemcpyDeviceToDevice));
  sprinkle<<<4096, 256>>>(z1, n, 100);
  sprinkle<<<4096, 256>>>(z10, n, 10);
  CK(cudaDeviceSynchronize());
  const char* only = argc > 2 ? argv[2] : nullptr;
  auto row = [&](const char* name, double bytes, const std::function<void()>& run) {
    if (only) {
      if (std::strstr(name, only)) {
        run();
        CK(cudaDeviceSynchronize());
      }
      return;
    }
    const float ms = time_ms(run, reps);
    const float cms = time_ms(
        [&] {
          CK(cudaMemcpyAsync(cpy + 2 * n, cpy, std::size_t(bytes / 2), cudaMemcpyDeviceToDevice));
        },
        reps);
    std::printf("%s %-36s %8.3f ms  %7.1f GB/s  x memcpy %.3f\n", tag, name, ms, bytes / ms / 1e6,
                cms / ms);
    std::fflush(stdout);
  };
  using namespace cuact::detail;
  row("relu cast bf16->e4m3", 3.0 * n, [&] { CK(cuact::forward_cast(cuact::relu{}, x16, e4, n)); });
  row("silu cast bf16->e4m3", 3.0 * n, [&] { CK(cuact::forward_cast(cuact::silu{}, x16, e4, n)); });
  row("sigmoid cast bf16->e4m3", 3.0 * n,
      [&] { CK(cuact::forward_cast(cuact::sigmoid{}, x16, e4, n)); });
  row("gelu cast bf16->e4m3", 3.0 * n, [&] { CK(cuact::forward_cast(cuact::gelu{}, x16, e4, n)); });
  row("silu cast fp16->e4m3", 3.0 * n, [&] { CK(cuact::forward_cast(cuact::silu{}, xh, e4, n)); });
  row("silu quantize bf16->e4m3", 3.0 * n + 12,
      [&] { CK(cuact::forward_quantize(cuact::silu{}, x16, e4, n, scale, amax)); });
  row("gelu quantize direct16 cb bf16", 3.0 * n + 12,
      [&] { direct<true>(cuact::gelu{}, x16, e4, n, amax, scale); });
  row("gelu quantize direct16 heavy bf16", 3.0 * n + 12,
      [&] { direct<false>(cuact::gelu{}, x16, e4, n, amax, scale); });
  row("gelu quantize direct16 cb fp16", 3.0 * n + 12,
      [&] { direct<true>(cuact::gelu{}, xh, e4, n, amax, scale); });
  row("gelu quantize direct16 heavy fp16", 3.0 * n + 12,
      [&] { direct<false>(cuact::gelu{}, xh, e4, n, amax, scale); });
  row("gelu_tanh quantize direct16 cb bf16", 3.0 * n + 12,
      [&] { direct<true>(cuact::gelu_tanh{}, x16, e4, n, amax, scale); });
  row("gelu_tanh quantize direct16 heavy bf16", 3.0 * n + 12,
      [&] { direct<false>(cuact::gelu_tanh{}, x16, e4, n, amax, scale); });
  row("gelu_tanh quantize table bf16", 3.0 * n + 12,
      [&] { CK(cuact::forward_quantize(cuact::gelu_tanh{}, x16, e4, n, scale, amax)); });

  row("gelu 10% zeros cb bf16", 3.0 * n + 12,
      [&] { direct<true>(cuact::gelu{}, z10, e4, n, amax, scale); });
  row("gelu 10% zeros heavy bf16", 3.0 * n + 12,
      [&] { direct<false>(cuact::gelu{}, z10, e4, n, amax, scale); });
  row("gelu quantize fp16->e4m3", 3.0 * n + 12,
      [&] { CK(cuact::forward_quantize(cuact::gelu{}, xh, e4, n, scale, amax)); });
  row("gelu quantize table bf16->e4m3", 3.0 * n + 12,
      [&] { CK(cuact::forward_quantize(cuact::gelu{}, x16, e4, n, scale, amax)); });
  row("gelu quantize fp32->e4m3", 5.0 * n + 12,
      [&] { CK(cuact::forward_quantize(cuact::gelu{}, x32, e4, n, scale, amax)); });
  row("silu quantize fp32->e4m3", 5.0 * n + 12,
      [&] { CK(cuact::forward_quantize(cuact::silu{}, x32, e4, n, scale, amax)); });
  return 0;
}
