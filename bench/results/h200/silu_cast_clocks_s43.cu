// Session 43: the silu cast bf16 -> e4m3 (and the gelu cast, and a memcpy of the same bytes) repeated for about
// 3 s each, to be timed while nvidia-smi samples the SM clock and the power: built against 45c0669's include tree
// (sc_old) and the working tree (sc_new).
#include <cuact/cuact.cuh>
#include <cuda_bf16.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

#define CK(x)                                              \
  do {                                                     \
    cudaError_t s_ = (x);                                  \
    if (s_ != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(s_)); \
      std::exit(1);                                        \
    }                                                      \
  } while (0)

__global__ void fill(__nv_bfloat16* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(i >> 13) * 40503u;
    float u = ((h >> 8) & 0xffff) / 65536.0f - 0.5f;
    p[i] = __float2bfloat16(u * 6.0f + 1e-3f);
  }
}

int main(int argc, char** argv) {
  const char* label = argc > 1 ? argv[1] : "";
  const size_t n = size_t(4096) * 393216;
  __nv_bfloat16* x;
  __nv_fp8_e4m3* q;
  void *c1, *c2;
  CK(cudaMalloc(&x, n * 2));
  CK(cudaMalloc(&q, n));
  CK(cudaMalloc(&c1, n * 3 / 2 + 256));
  CK(cudaMalloc(&c2, n * 3 / 2 + 256));
  fill<<<4096, 256>>>(x, n);
  CK(cudaDeviceSynchronize());
  const std::pair<const char*, std::function<void()>> rows[] = {
      {"memcpy 3n", [&] { CK(cudaMemcpyAsync(c1, c2, n * 3 / 2, cudaMemcpyDeviceToDevice)); }},
      {"silu cast", [&] { CK(cuact::forward_cast(cuact::silu{}, x, q, n)); }},
      {"gelu cast", [&] { CK(cuact::forward_cast(cuact::gelu{}, x, q, n)); }}};
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (const auto& row : rows) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a gap in the clock trace
    const int reps = 2500;                                        // about 3 s
    CK(cudaEventRecord(a));
    for (int r = 0; r < reps; ++r) row.second();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    std::printf("%s %-10s %.4f ms per call (ended at %.1f s)\n", label, row.first, ms / reps,
                std::chrono::duration<double>(now).count());
    std::fflush(stdout);
  }
  return 0;
}
