/// \file
/// What session 25's standalone prototypes under bench/results/h100/ share (not part of the
/// library or the bench): a CUDA error check that exits, the bench's fill of fresh standard
/// normals (fused_bench.cu's, zeros not replaced), and CUB's functor over cuact's op (bench/
/// ops_impl.cuh's cub_op), and their round-robin timing. The prototypes were run with these
/// definitions inline.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>
#include <cuact/cuact.cuh>

#define CK(x)                                                                \
  do {                                                                       \
    cudaError_t e_ = (x);                                                    \
    if (e_ != cudaSuccess) {                                                 \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

namespace cd = cuact::detail;

__device__ __host__ inline std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Standard normal values (Box-Muller on a counter hash); exact zeros become 2^-10.
template <class T>
__global__ void fill_normal(T* out, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint64_t h = mix(seed ^ mix(i));
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) * 0x1p-24f;
    const float u2 = static_cast<float>(h & 0xffffff) * 0x1p-24f;
    float v = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    if (v == 0.0f) v = 0x1p-10f;
    out[i] = cd::from_compute<T>(v);
  }
}

/// CUB's functor: cuact's op between cuact's conversions (storage -> compute -> storage).
template <class Op, class Out>
struct cub_op {
  Op op;
  template <class... S>
  __host__ __device__ Out operator()(S... v) const {
    return cd::from_compute<Out>(op(cd::to_compute(v)...));
  }
};

/// One contestant of a round-robin timing: its name, what it launches, its times (ms).
struct V {
  std::string name;
  std::function<void()> f;
  std::vector<float> ms;
};

/// `reps` rounds over every contestant in turn; each time the third of three back-to-back calls
/// (CUDA events on the default stream), the first two warming it.
inline void time_round_robin(std::vector<V>& vs, int reps) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int round = 0; round < reps; ++round)
    for (auto& v : vs) {
      v.f();
      v.f();
      cudaEventRecord(e0);
      v.f();
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      v.ms.push_back(ms);
    }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
}

/// The median of `m` (the upper one of an even count).
inline float med(std::vector<float> m) {
  std::sort(m.begin(), m.end());
  return m[m.size() / 2];
}
