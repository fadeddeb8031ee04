/// \file
/// Grid choice and launch for elementwise_kernel.
#pragma once

#include <climits>
#include <cstddef>

#include "../elementwise.cuh"
#include "config.cuh"

namespace cuact {
namespace detail {

/// Threads per block. Measured on H100 (shared/PERF-NOTES.md, re-measured by bench/): block size
/// matters far less than grid size.
inline constexpr unsigned block_threads = 256;

/// Blocks for `work_items` threads of work. The grid covers the work in one pass whenever
/// gridDim.x allows it: on H100 a grid-stride loop whose threads iterate k times loses
/// 0.3% (k = 2) to 8.5% (k = 64) against the copy ceiling, while one pass reaches it. The loop
/// stays grid-stride, so the cap on gridDim.x (and any user grid) remains correct.
inline unsigned grid_blocks(std::size_t work_items, unsigned threads_per_block) {
  const std::size_t blocks = (work_items + threads_per_block - 1) / threads_per_block;
  return blocks < static_cast<std::size_t>(INT_MAX) ? static_cast<unsigned>(blocks) : INT_MAX;
}

template <class T, int VecWidth, int NumInputs, class Op>
cudaError_t launch_elementwise(const elementwise_params<T, VecWidth, NumInputs, Op>& params,
                               cudaStream_t stream) {
  const std::size_t work = params.work_items();
  if (work == 0) return cudaSuccess;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid_blocks(work, block_threads));
  config.blockDim = dim3(block_threads);
  config.stream = stream;
  return cudaLaunchKernelEx(&config, elementwise_kernel<T, VecWidth, NumInputs, Op>, params);
}

}  // namespace detail
}  // namespace cuact
