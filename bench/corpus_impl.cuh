/// \file
/// The hand-written contestants of the corpus bench and the template that builds a corpus row;
/// included by the generated corpus_<group>_<dtype>.cu (bench/CMakeLists.txt), one per group and
/// dtype. The hand-written kernels convert storage to float and back with cuact's conversions, so
/// they compute exactly what cuact and CUB compute.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cstddef>

#include "corpus.cuh"
#include "corpus_functors.cuh"
#include "ops_impl.cuh"

namespace bench {
namespace corpus_detail {

/// What a user writes first: one element per thread, an int index.
template <class T, class F>
__global__ void per_element_kernel(const T* in, T* out, int n, F f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = cuact::detail::from_compute<T>(f(cuact::detail::to_compute(in[i])));
}

template <class T>
struct alignas(16) vector16 {
  T v[16 / sizeof(T)];
};

/// The tuned hand-written form: 16-byte loads and stores in a grid-stride loop over a resident
/// grid, the last n % width elements by the first threads (cudaMalloc'd arrays are aligned).
template <class T, class F>
__global__ void grid_stride_kernel(const T* in, T* out, std::size_t n, F f) {
  constexpr int width = 16 / sizeof(T);
  const std::size_t vectors = n / width;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const auto* vin = reinterpret_cast<const vector16<T>*>(in);
  auto* vout = reinterpret_cast<vector16<T>*>(out);
  for (std::size_t i = first; i < vectors; i += stride) {
    vector16<T> v = vin[i];
#pragma unroll
    for (int j = 0; j < width; ++j) {
      v.v[j] = cuact::detail::from_compute<T>(f(cuact::detail::to_compute(v.v[j])));
    }
    vout[i] = v;
  }
  const std::size_t tail = vectors * width + first;
  if (tail < n) out[tail] = cuact::detail::from_compute<T>(f(cuact::detail::to_compute(in[tail])));
}

constexpr int block_threads = 256;

template <class T>
const T* in_ptr_of(const call_args& a) {
  return static_cast<const T*>(a.in0);
}

template <class T, class F>
cudaError_t launch_per_element(F f, const call_args& a, cudaStream_t s) {
  if (a.n > static_cast<std::size_t>(INT_MAX)) return cudaErrorInvalidValue;
  const int n = static_cast<int>(a.n);
  per_element_kernel<T, F><<<(n + block_threads - 1) / block_threads, block_threads, 0, s>>>(
      in_ptr_of<T>(a), static_cast<T*>(a.out), n, f);
  return cudaGetLastError();
}

template <class T, class F>
cudaError_t launch_grid_stride(F f, const call_args& a, cudaStream_t s) {
  static int blocks = 0;  // every resident block: SMs x blocks per SM
  if (blocks == 0) {
    int device = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_stride_kernel<T, F>,
                                                      block_threads, 0) != cudaSuccess) {
      return cudaGetLastError();
    }
    blocks = sms * per_sm;
  }
  grid_stride_kernel<T, F>
      <<<blocks, block_threads, 0, s>>>(in_ptr_of<T>(a), static_cast<T*>(a.out), a.n, f);
  return cudaGetLastError();
}

template <class Kernel>
int registers_of(Kernel kernel) {
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return attributes.numRegs;
}

template <class T, class F>
void add(std::vector<corpus_row>& out, const char* name) {
  std::vector<entry> entries;
  ops_detail::add_activation<T>(entries, name, F{}, false, static_cast<int>(out.size()));
  corpus_row row;
  row.name = name;
  row.type = ops_detail::dtype_of<T>();
  row.forward = entries.front();  // the forward (the corpus functors have no derivative)
  row.per_element = [](const call_args& a, cudaStream_t s) {
    return launch_per_element<T>(F{}, a, s);
  };
  row.grid_stride = [](const call_args& a, cudaStream_t s) {
    return launch_grid_stride<T>(F{}, a, s);
  };
  row.per_element_regs = registers_of(per_element_kernel<T, F>);
  row.grid_stride_regs = registers_of(grid_stride_kernel<T, F>);
  out.push_back(std::move(row));
}

}  // namespace corpus_detail
}  // namespace bench

/// The body of a generated corpus_<group>_<dtype>.cu.
#define CORPUS_ADD_ONE(name, type) corpus_detail::add<CORPUS_T, type>(out, #name);
#define CORPUS_DEFINE(group, tag)                                 \
  namespace bench {                                               \
  void add_corpus_##group##_##tag(std::vector<corpus_row>& out) { \
    CORPUS_GROUP_##group(CORPUS_ADD_ONE)                          \
  }                                                               \
  }
