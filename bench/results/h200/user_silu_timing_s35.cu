// Session 35: why cuact_bench --user reads a user's plain bf16 silu (tabulated: 98304 x 256 threads, 4 passes)
// at 1.548 ms (0.981 x memcpy) where user_silu_cpp_s35.cu read 1.598 (0.950) on the same H200 and the torch
// profiler gave its kernel 1.587 ms on another (custom_profile_s35.txt). The same call timed several ways,
// round-robin (each timed call the third of three): `plain` as user_silu_cpp_s35.cu (events around one call
// on an idle GPU); `busy` with the bench's busy start first (bench/busy_start.cuh: one thread spinning 200 us
// while the host enqueues); `bench_fill` busy, on the bench's inputs (bench/common.cu: fill_random_kernel);
// `batch4` busy, four calls between the events (time / 4); `heavy` the direct path, busy; `stream` as
// plain on a stream of its own (cudaStreamNonBlocking, as the bench's) instead of the legacy default
// stream; `per_thread` on cudaStreamPerThread. Built with -DPROTO_NO_OVERLAP against a copy of include/
// whose run_tabulated reads a flag (h200/user_silu_no_overlap_s35.diff: `detail::proto_no_overlap`):
// `plain_no_pdl` and `stream_no_pdl`, the lookup launched without programmatic dependent launch.
// memcpy busy. It ran on the library of b5d01c7, whose lookup asked for that launch on every stream;
// since session 35's launch_kernel_grid does not on the legacy default stream, `plain` launches there
// as `plain_no_pdl` did (results: h200/user_silu_timing_s35.txt).
// Session 36: that rule changed nothing and was reverted (e8288fc). The rows differed in the kernels that ran
// before them, through the lookup's streaming accesses (h200/table_state_s36.txt).
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include -I bench/results -I tests -I bench bench/results/h200/user_silu_timing_s35.cu
#include "busy_start.cuh"
#include "common/plain_functors.hpp"
#include "proto_common.cuh"

struct silu_heavy : cuact_test::plain::silu {
  static constexpr bool is_heavy = true;
};

__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t x) {  // bench/common.cu's
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T>
__global__ void fill_random_kernel(T* data, std::size_t count, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const std::uint64_t h = splitmix64(seed ^ splitmix64(i));
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) * 0x1.0p-24f;
    const float u2 = static_cast<float>((h >> 8) & 0xFFFFFFu) * 0x1.0p-24f;
    const float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    data[i] = cd::from_compute<T>(z != 0.0f ? z : 0x1.0p-10f);
  }
}

int main() {
  using T = __nv_bfloat16;
  const std::size_t n = std::size_t(4096) * 393216;
  T *x, *xb, *y, *dst;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&xb, n * sizeof(T)));
  CK(cudaMalloc(&y, n * sizeof(T)));
  CK(cudaMalloc(&dst, n * sizeof(T)));
  fill_normal<<<4096, 256>>>(x, n, 35);
  fill_random_kernel<<<65536, 256>>>(xb, n, 0x5eed);
  CK(cudaDeviceSynchronize());
  cudaStream_t stream;  // the bench's kind of stream (`stream` below); the rest use the legacy one
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const auto busy = [] { CK(bench::busy_start(nullptr)); };
  const auto silu = [=](const T* in) { CK(cuact::forward(cuact_test::plain::silu{}, in, y, n)); };
  // timed here rather than by time_contestants: the busy start goes between the warm-up calls and
  // the start event
  std::vector<V> vs;
  vs.push_back(
      {"memcpy", [=] { cudaMemcpyAsync(dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice); }, {}});
  vs.push_back({"plain", [=] { silu(x); }, {}});
  vs.push_back({"busy", [=] { silu(x); }, {}});
  vs.push_back({"bench_fill", [=] { silu(xb); }, {}});
  vs.push_back({"batch4",
                [=] {
                  for (int i = 0; i < 4; ++i) silu(x);
                },
                {}});
  vs.push_back({"heavy", [=] { CK(cuact::forward(silu_heavy{}, x, y, n)); }, {}});
  vs.push_back(
      {"stream", [=] { CK(cuact::forward(cuact_test::plain::silu{}, x, y, n, stream)); }, {}});
#ifdef PROTO_NO_OVERLAP
  const auto without_overlap = [](auto f) {
    return [=] {
      cd::proto_no_overlap = true;
      f();
      cd::proto_no_overlap = false;
    };
  };
  vs.push_back({"plain_no_pdl", without_overlap([=] { silu(x); }), {}});
  vs.push_back(
      {"stream_no_pdl",
       without_overlap([=] { CK(cuact::forward(cuact_test::plain::silu{}, x, y, n, stream)); }),
       {}});
#endif
  vs.push_back(
      {"per_thread",
       [=] { CK(cuact::forward(cuact_test::plain::silu{}, x, y, n, cudaStreamPerThread)); },
       {}});
  const bool busy_first[] = {true, false, true, true, true, true, false, false, false, false};
  const cudaStream_t streams[] = {nullptr,
                                  nullptr,
                                  nullptr,
                                  nullptr,
                                  nullptr,
                                  nullptr,
                                  stream,
#ifdef PROTO_NO_OVERLAP
                                  nullptr,
                                  stream,
#endif
                                  cudaStreamPerThread};
  const int calls[] = {1, 1, 1, 1, 4, 1, 1, 1, 1, 1};
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int round = 0; round < 10; ++round) {
    for (std::size_t i = 0; i < vs.size(); ++i) {
      vs[i].f();
      vs[i].f();
      if (busy_first[i]) busy();
      CK(cudaEventRecord(e0, streams[i]));
      vs[i].f();
      CK(cudaEventRecord(e1, streams[i]));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      vs[i].ms.push_back(ms / calls[i]);
    }
  }
  const double copy = med(vs[0].ms);
  std::printf("bf16 user silu, n = 4096 x 393216, 10 round-robin rounds, medians\n");
  for (auto& v : vs)
    std::printf("%-10s %.4f ms  x memcpy %.3f\n", v.name.c_str(), med(v.ms), copy / med(v.ms));
  return 0;
}
