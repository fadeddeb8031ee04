// Session 35: the C++ side of custom_profile_s35.py: a user's silu written plainly (tests/common/
// plain_functors.hpp), no hint and is_heavy, through cuact::forward, bf16 and fp32, round-robin
// against memcpy, in the same call as the probe. Built on the CPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include -I bench/results -I tests bench/results/h200/user_silu_cpp_s35.cu
#include "common/plain_functors.hpp"
#include "proto_common.cuh"

struct silu_heavy : cuact_test::plain::silu {
  static constexpr bool is_heavy = true;
};

template <class T>
void run(const char* name) {
  const std::size_t n = std::size_t(4096) * 393216;
  T *x, *y, *dst;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&y, n * sizeof(T)));
  CK(cudaMalloc(&dst, n * sizeof(T)));
  fill_normal<<<4096, 256>>>(x, n, 35);
  CK(cudaDeviceSynchronize());
  std::vector<V> vs;
  vs.push_back(
      {"memcpy", [=] { cudaMemcpyAsync(dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice); }, {}});
  vs.push_back({"no_hint", [=] { CK(cuact::forward(cuact_test::plain::silu{}, x, y, n)); }, {}});
  vs.push_back({"heavy", [=] { CK(cuact::forward(silu_heavy{}, x, y, n)); }, {}});
  time_round_robin(vs, 10);
  std::printf("%s: memcpy %.4f ms, no hint %.4f ms (x memcpy %.3f), heavy %.4f ms (%.3f)\n", name,
              med(vs[0].ms), med(vs[1].ms), med(vs[0].ms) / med(vs[1].ms), med(vs[2].ms),
              med(vs[0].ms) / med(vs[2].ms));
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(dst));
}

int main() {
  run<__nv_bfloat16>("bf16");
  run<float>("fp32");
  return 0;
}
