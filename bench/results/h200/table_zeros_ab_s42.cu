// Session 42 A/B: the tabulated bf16 forward (plain user functors, 4096 x 393216) with the table's
// copy into shared memory by cp.async (this tree) against __ldg + st.shared (session 41's): the same
// file compiled against each include tree. Round-robin with memcpy of the same bytes, median of 7.
#include <cuact/cuact.cuh>
#include <cuda_bf16.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <functional>
#include <string>
#include "../../tests/common/plain_functors.hpp"

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

__global__ void with_zeros(__nv_bfloat16* p, size_t n, size_t every) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    if (i % every == 7) p[i] = __float2bfloat16(0.0f);
}

float time_ms(const std::function<void()>& f, int reps = 7) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  f();
  CK(cudaDeviceSynchronize());
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  const char* label = argc > 1 ? argv[1] : "";
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  const size_t n = size_t(4096) * 393216;
  __nv_bfloat16 *x, *y;
  void *c1, *c2;
  CK(cudaMalloc(&x, n * 2));
  CK(cudaMalloc(&y, n * 2));
  CK(cudaMalloc(&c1, n * 2));
  CK(cudaMalloc(&c2, n * 2));
  fill<<<4096, 256>>>(x, n);
  CK(cudaGetLastError());
  struct variant {
    std::string name;
    std::function<void()> run;
  };
  std::vector<variant> vs;
  vs.push_back(
      {"memcpy 4n bytes", [&] { CK(cudaMemcpyAsync(c1, c2, n * 2, cudaMemcpyDeviceToDevice)); }});
  vs.push_back(
      {"softplus* (table)", [&] { CK(cuact::forward(cuact_test::plain::softplus{}, x, y, n)); }});
  vs.push_back({"elu* (table)", [&] { CK(cuact::forward(cuact_test::plain::elu{}, x, y, n)); }});
  vs.push_back(
      {"sigmoid* (table)", [&] { CK(cuact::forward(cuact_test::plain::sigmoid{}, x, y, n)); }});
  vs.push_back(
      {"gelu_tanh* (table)", [&] { CK(cuact::forward(cuact_test::plain::gelu_tanh{}, x, y, n)); }});
  __nv_bfloat16* z;  // 1% zeros
  CK(cudaMalloc(&z, n * 2));
  CK(cudaMemcpy(z, x, n * 2, cudaMemcpyDeviceToDevice));
  with_zeros<<<4096, 256>>>(z, n, 100);
  CK(cudaGetLastError());
  vs.push_back({"softplus* (table) 1% zeros",
                [&] { CK(cuact::forward(cuact_test::plain::softplus{}, z, y, n)); }});
  vs.push_back({"gelu_tanh* (table) 1% zeros",
                [&] { CK(cuact::forward(cuact_test::plain::gelu_tanh{}, z, y, n)); }});
  std::vector<std::vector<float>> times(vs.size());
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < vs.size(); ++i) times[i].push_back(time_ms(vs[i].run));
  for (size_t i = 0; i < vs.size(); ++i) {
    std::printf("%s %-28s", label, vs[i].name.c_str());
    for (int r = 0; r < rounds; ++r)
      std::printf("  %7.3f ms %5.3f", times[i][r], times[0][r] / times[i][r]);
    std::printf("\n");
  }
  return 0;
}
