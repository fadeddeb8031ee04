/// \file
/// Grid choice and launch for elementwise_kernel.
#pragma once

#include <climits>
#include <cstddef>
#include <type_traits>

#include "../elementwise.cuh"
#include "config.cuh"

namespace cuact {
namespace detail {

/// The activation's cost hint: `static constexpr bool is_heavy = true` (default false).
template <class Op, class = void>
inline constexpr bool is_heavy_v = false;
template <class Op>
inline constexpr bool is_heavy_v<Op, std::void_t<decltype(Op::is_heavy)>> = Op::is_heavy;

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

/// Vectors per thread for a large launch. One pass is the copy ceiling for cheap ops; a heavy op
/// on 16-bit data (8 elements of exp per 16-byte vector) is instruction-bound at one pass, and
/// two passes measured 0.977 -> 1.000 x memcpy (H100, bf16 selu, 1.6 G elements; bench --blocks).
/// Small launches keep one pass: they need every thread they can get to hide latency.
template <class T, class Op>
constexpr unsigned passes_for(std::size_t work_items) {
  constexpr std::size_t two_pass_threshold = std::size_t(1) << 21;  // vectors: ~8 waves of H100
  return is_heavy_v<Op> && sizeof(T) == 2 && work_items >= two_pass_threshold ? 2 : 1;
}

template <class T, int VecWidth, int NumInputs, class Op>
cudaError_t launch_elementwise(const elementwise_params<T, VecWidth, NumInputs, Op>& params,
                               cudaStream_t stream) {
  const std::size_t work = params.work_items();
  if (work == 0) return cudaSuccess;
  const unsigned passes = passes_for<T, Op>(work);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid_blocks((work + passes - 1) / passes, block_threads));
  config.blockDim = dim3(block_threads);
  config.stream = stream;
  return cudaLaunchKernelEx(&config, elementwise_kernel<T, VecWidth, NumInputs, Op>, params);
}

}  // namespace detail
}  // namespace cuact
