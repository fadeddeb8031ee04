/// \file
/// Validation and launch of fused.cuh's two kernels that the elementwise and row-wise paths
/// cannot express: the quantizing forward with its amax (a block reduction and an atomic) and the
/// bias backward with its column sums (two stages). Both validate with dispatch.cuh's pieces
/// (describe_arrays, validate_arrays) and the quantize launch uses its launch model (model_shape).
#pragma once

#include <cstddef>

#include "config.cuh"
#include "dispatch.cuh"
#include "kernels/column_sum.cuh"
#include "kernels/quantize.cuh"
#include "launch.cuh"
#include "validate.cuh"

namespace cuact {
namespace detail {

/// rows * cols * factor elements, or 0 when that overflows size_t (validation then rejects the
/// array: a byte size of 0 is invalid).
inline std::size_t checked_elements(std::size_t rows, std::size_t cols, std::size_t factor = 1) {
  const std::size_t per_row = checked_bytes(cols, factor);
  return per_row == 0 ? 0 : checked_bytes(rows, per_row);
}

/// Blocks a quantize grid keeps at least when run_quantize shortens it: several waves of any
/// current GPU (132 SMs x 16 blocks of 128 threads is 2112).
inline constexpr unsigned quantize_min_blocks = 8192;

/// Validates, zeroes *amax when `reset`, then launches quantize_kernel: out[i] = op(in[i]), the
/// op (fused.cuh's amax_op) keeping max |act(in[i])|. amax is a float no other array overlaps.
template <int VecWidth, class Op, class U, class T>
cudaError_t run_quantize(Op op, U* out, std::size_t n, const T* in, float* amax, bool reset,
                         cudaStream_t stream, cost_hint hint) {
  check_output_type<U>();
  check_input_type<T>();
  constexpr int width = resolve_width<VecWidth, max_size_of<U, T>()>();
  if (n == 0) return cudaSuccess;
  const array_arg amax_array{amax, sizeof(float), alignof(float), array_role::output};
  array_arg arrays[3];
  const std::size_t used = describe_arrays(output_arrays<U>{{out}}, n, input_arrays<T>{{in}},
                                           every_input_in_place, &amax_array, 1, arrays);
  int device = 0;
  if (const cudaError_t status = validate_arrays(arrays, used, device); status != cudaSuccess) {
    return status;
  }
  auto elementwise = make_params<width>(op, output_arrays<U>{{out}}, n, input_arrays<T>{{in}});
  using params_t = quantize_params<decltype(elementwise)>;
  launch_shape shape{};
  // The amax counts as a third array: every element updates it (a compare, then a block
  // reduction), work the model's per-array budget otherwise leaves out. With it the quantize keeps
  // the shape it had before that budget was per array (launch.cuh): one pass on an H100 (about 50
  // per element for fp32 -> fp8, 1.02 x memcpy), two on an H200 (about 35, 0.944, compute-bound).
  if (const cudaError_t status = model_shape(quantize_kernel<decltype(elementwise)>, device, hint,
                                             elementwise, 1, shape, 1);
      status != cudaSuccess) {
    return status;
  }
  elementwise.vectors_per_thread = shape.vectors_per_thread;
  // Each block ends in a reduction (two rounds of warp shuffles, a barrier, an atomic): above
  // quantize_min_blocks, a quarter of the blocks make four times the passes, so that cost is
  // spread over four times the elements (the grid-stride loop is correct for any grid).
  if (shape.blocks >= 4 * quantize_min_blocks) {
    shape.blocks = (shape.blocks + 3) / 4;
    shape.passes *= 4;
  }
  if (reset) {
    if (const cudaError_t status = cudaMemsetAsync(amax, 0, sizeof(float), stream);
        status != cudaSuccess) {
      return returned(status);
    }
  }
  return launch_kernel(quantize_kernel<decltype(elementwise)>, params_t{elementwise, amax}, shape,
                       stream);
}

/// Bytes of the partial column sums the bias backward needs for a [rows, cols] layout of T.
template <int VecWidth, class T>
std::size_t bias_gradient_workspace(std::size_t rows, std::size_t cols) {
  constexpr int width = resolve_width<VecWidth, sizeof(T)>();
  const row_chunks c = bias_gradient_chunks(rows, cols, width);
  return checked_elements(c.chunks, cols, sizeof(compute_t<T>));
}

/// Validates, then runs the two stages of kernels/column_sum.cuh. `workspace` null: the partial
/// sums live in a stream-ordered allocation (cudaMallocAsync / cudaFreeAsync on `stream`).
template <int VecWidth, class Op, class T>
cudaError_t run_bias_gradient(Op op, const T* x, const T* bias, const T* dy, T* dx, T* dbias,
                              std::size_t rows, std::size_t cols, void* workspace,
                              std::size_t workspace_bytes, cudaStream_t stream) {
  check_input_type<T>();
  constexpr int width = resolve_width<VecWidth, sizeof(T)>();
  using A = compute_t<T>;
  if (cols == 0) return cudaSuccess;
  int device = 0;
  if (rows == 0) {  // the sum over no rows: dbias = +0
    const array_arg dbias_only[] = {array_of(dbias, cols, array_role::output)};
    if (const cudaError_t status = validate_arrays(dbias_only, 1, device); status != cudaSuccess) {
      return status;
    }
    return returned(cudaMemsetAsync(dbias, 0, cols * sizeof(T), stream));
  }
  const std::size_t n = checked_elements(rows, cols);
  const std::size_t partial_bytes = bias_gradient_workspace<VecWidth, T>(rows, cols);
  const array_arg arrays[] = {array_of(dx, n, array_role::output),
                              array_of(dbias, cols, array_role::output),
                              array_of(x, n, array_role::input_or_in_place),
                              array_of(dy, n, array_role::input_or_in_place),
                              array_of(bias, cols, array_role::input),
                              {workspace, workspace_bytes < partial_bytes ? 0 : partial_bytes,
                               alignof(A), array_role::output}};
  if (const cudaError_t status =
          validate_arrays(arrays, workspace == nullptr && workspace_bytes == 0 ? 5 : 6, device);
      status != cudaSuccess) {
    return status;
  }
  if (partial_bytes == 0) return cudaErrorInvalidValue;  // chunks x cols overflows
  void* partial = workspace;
  if (partial == nullptr) {
    if (const cudaError_t status = cudaMallocAsync(&partial, partial_bytes, stream);
        status != cudaSuccess) {
      return returned(status);
    }
  }
  const auto params =
      make_bias_gradient_params<width>(op, x, bias, dy, dx, static_cast<A*>(partial), rows, cols);
  const row_chunks chunks = bias_gradient_chunks(rows, cols, width);
  const std::size_t column_threads =
      params.vectors > params.head + params.tail ? params.vectors : params.head + params.tail;
  cudaError_t status = launch_kernel_grid(
      bias_gradient_kernel<decltype(params)>, params,
      dim3(grid_blocks(column_threads, threads_per_block), static_cast<unsigned>(chunks.chunks)),
      threads_per_block, stream);
  if (status == cudaSuccess) {
    const A* partial_sums = static_cast<const A*>(partial);
    std::size_t chunk_count = chunks.chunks;
    void* args[] = {&partial_sums, &chunk_count, &cols, &dbias};
    status = cudaLaunchKernel(reinterpret_cast<const void*>(&column_sum_kernel<A, T>),
                              dim3(grid_blocks(cols, threads_per_block)), dim3(threads_per_block),
                              args, 0, stream);
  }
  if (workspace == nullptr) {
    const cudaError_t freed = cudaFreeAsync(partial, stream);
    if (status == cudaSuccess) status = freed;
  }
  return returned(status);
}

}  // namespace detail
}  // namespace cuact
