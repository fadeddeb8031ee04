/// \file
/// Grid choice and launch for elementwise_kernel.
#pragma once

#include <climits>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "../elementwise.cuh"
#include "config.cuh"

namespace cuact {
namespace detail {

/// The activation's cost hint: `static constexpr bool is_heavy = true` (default false).
template <class Op, class = void>
inline constexpr bool is_heavy_v = false;
template <class Op>
inline constexpr bool is_heavy_v<Op, std::void_t<decltype(Op::is_heavy)>> = Op::is_heavy;

/// Blocks for `threads` threads of `threads_per_block`, capped at gridDim.x's limit (the loop is
/// grid-stride, so a capped grid, or any user grid, stays correct).
inline unsigned grid_blocks(std::size_t threads, unsigned threads_per_block) {
  const std::size_t blocks = (threads + threads_per_block - 1) / threads_per_block;
  return blocks < static_cast<std::size_t>(INT_MAX) ? static_cast<unsigned>(blocks) : INT_MAX;
}

/// Block size and vectors per thread of a launch.
struct launch_shape {
  unsigned threads_per_block;
  unsigned passes;  ///< grid-stride iterations per thread when the grid is not capped
};

/// The launch shape for `work_items` vectors, from measurements on H100 at 1.6 G elements
/// (bench --blocks, bench/RESULTS.md; x memcpy, noise about 0.3%):
/// - One pass by default: a grid-stride loop whose threads iterate k times loses 0.3% (k = 2)
///   to 8.5% (k = 64) against the copy ceiling, while a grid that covers the work reaches it.
/// - Below 2^22 vectors, 256 threads: 1024-thread blocks cost up to 13% at 64 K elements.
/// - Cheap ops, 1024 threads: relu 1.008 (fp32) / 1.010 (bf16) against 1.001 / 1.005 at 256.
/// - Heavy ops are limited by registers and instructions, so by element size:
///   16-bit: 128 threads, 2 passes (one pass is instruction-bound: bf16 selu 0.982 -> 1.003,
///   selu backward 1.010 -> 1.020; 1024 threads fell to 0.785);
///   32-bit: 512 threads for one input (selu 1.005; 256: 1.002; 1024: 0.999), 1024 for two
///   (selu backward 1.027; 512: 1.017; 256: 1.014);
///   64-bit: 256 threads (selu 1.000; 1024 threads fell to 0.982 on expm1's registers).
template <class T, class Op, int NumInputs>
constexpr launch_shape choose_launch_shape(std::size_t work_items) {
  constexpr std::size_t large = std::size_t(1) << 22;
  if (work_items < large) return {256, 1};
  if (!is_heavy_v<Op>) return {1024, 1};
  if constexpr (sizeof(T) == 2) return {128, 2};
  if constexpr (sizeof(T) == 4) return {NumInputs >= 2 ? 1024u : 512u, 1};
  return {256, 1};
}

/// Grid and block for `work_items` per-thread work items of (T, Op, NumInputs).
template <class T, class Op, int NumInputs>
std::pair<dim3, dim3> launch_dims(std::size_t work_items) {
  const launch_shape shape = choose_launch_shape<T, Op, NumInputs>(work_items);
  const std::size_t threads = (work_items + shape.passes - 1) / shape.passes;
  return {dim3(grid_blocks(threads, shape.threads_per_block)), dim3(shape.threads_per_block)};
}

/// Launches `kernel(params)` with launch_dims' grid; returns the launch's status.
template <class T, class Op, int NumInputs, class Params>
cudaError_t launch_grid_stride(void (*kernel)(Params), const Params& params, std::size_t work_items,
                               cudaStream_t stream) {
  if (work_items == 0) return cudaSuccess;
  const auto [grid, block] = launch_dims<T, Op, NumInputs>(work_items);
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = stream;
  return cudaLaunchKernelEx(&config, kernel, params);
}

template <class T, int VecWidth, int NumInputs, class Op>
cudaError_t launch_elementwise(const elementwise_params<T, VecWidth, NumInputs, Op>& params,
                               cudaStream_t stream) {
  return launch_grid_stride<T, Op, NumInputs>(elementwise_kernel<T, VecWidth, NumInputs, Op>,
                                              params, params.work_items(), stream);
}

}  // namespace detail
}  // namespace cuact
