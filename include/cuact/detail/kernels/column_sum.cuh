/// \file
/// Bias + activation backward with its bias gradient: dx[r, c] = op(x[r, c], bias[c], dy[r, c])
/// over a [rows, cols] row-major layout, and dbias[c] = sum over r of dx[r, c], in two
/// deterministic stages.
///
/// Stage 1 (bias_gradient_kernel, or bias_gradient_capped_kernel: the same body in at most 64
/// registers, where fused_dispatch.cuh's rule takes it): grid y = row chunks of rows_per_chunk
/// rows; thread t of a chunk owns column vectors t, t + num_threads, ... (and scalar columns for
/// the head and tail), walks the chunk's rows in increasing order, writes dx, and adds each
/// written dx (as stored, converted back to the accumulation type) to a per-column accumulator;
/// then writes partial[chunk, c].
/// Stage 2 (column_sum_kernel): dbias[c] = partial[0, c] + partial[1, c] + ... in chunk order.
///
/// So dbias[c] = ((dx[0,c] + dx[1,c] + ... + dx[R-1,c]) + (dx[R,c] + ...) + ...) with R =
/// rows_per_chunk: the order depends only on (rows, cols, T) (bias_gradient_chunks), never on the
/// device, the grid or the run: bit-for-bit reproducible, as a sum(dim=0) with a fixed tree.
///
/// Why not CUB: stage 1 is a reduction over rows fused into the elementwise pass (each thread's
/// partial sums stay in registers; a DeviceSegmentedReduce would read dx again), and stage 2 sums
/// `chunks` values per column, strided by cols: CUB's segmented reduce over a transposed view
/// would give each column's few values to a whole block and read them uncoalesced, where one
/// thread per column reads them coalesced across the warp.
#pragma once

#include <cuda/std/cstddef>

#include "../config.cuh"
#include "../numeric.cuh"
#include "../tuning_table.cuh"
#include "elementwise.cuh"

namespace cuact {
namespace detail {

/// Row chunks and rows per chunk of stage 1 for a [rows, cols] layout of T (vector width V).
struct row_chunks {
  cuda::std::size_t chunks;
  cuda::std::size_t rows_per_chunk;
};
/// Chunks aim at bias_gradient_target_threads threads (tuning_table.cuh), a constant so that the
/// summation order does not depend on the GPU.
inline row_chunks bias_gradient_chunks(cuda::std::size_t rows, cuda::std::size_t cols,
                                       int vec_width) {
  if (rows == 0 || cols == 0) return {0, 0};
  const cuda::std::size_t column_threads = (cols + vec_width - 1) / vec_width;
  cuda::std::size_t chunks = (bias_gradient_target_threads + column_threads - 1) / column_threads;
  const cuda::std::size_t cap = rows < 65535 ? rows : 65535;  // gridDim.y
  chunks = chunks < 1 ? 1 : (chunks > cap ? cap : chunks);
  const cuda::std::size_t per_chunk = (rows + chunks - 1) / chunks;
  return {(rows + per_chunk - 1) / per_chunk, per_chunk};
}

/// Stage 1's arguments: all arrays of one element type T; partial sums in compute_t<T> (float for
/// 16-bit and float, double for double).
template <class Op, int VecWidth, class T>
struct bias_gradient_params {
  using accumulate_t = compute_t<T>;
  static constexpr int vec_width = VecWidth;
  const T* x;
  const T* bias;
  const T* dy;
  T* dx;
  accumulate_t* partial;  ///< [chunks, cols]
  cuda::std::size_t rows;
  cuda::std::size_t cols;
  cuda::std::size_t rows_per_chunk;
  cuda::std::size_t head;     ///< per row: scalar columns before the first vector
  cuda::std::size_t vectors;  ///< per row: vectors after the head
  cuda::std::size_t tail;     ///< per row: scalar columns after the vectors
  Op op;                      ///< dx = op(x, bias, dy) on compute-type values
};

/// Rows of a chunk whose loads stage 1 issues together, by the elementwise engine's rule
/// (max_load_bytes_per_thread over the bytes of one row's x and dy), at most 2: one for 16-byte
/// vectors, whose two loads already reach the cap (a second row in flight took the bf16 gelu
/// backward from 48 to 79 registers), two for the scalar columns.
template <class Held>
inline constexpr int bias_gradient_rows_in_flight =
    max_load_bytes_per_thread / (2 * sizeof(Held)) >= 2 ? 2 : 1;

/// Rows [r, r + InFlight) below end_row of x and dy, at columns [c0, c0 + the held width).
#pragma nv_exec_check_disable
template <int InFlight, class Held, class Params, class Access>
CUACT_HOST_DEVICE void load_bias_gradient_rows(const Params& p, cuda::std::size_t r,
                                               cuda::std::size_t end_row, cuda::std::size_t c0,
                                               Held (&xs)[InFlight], Held (&dys)[InFlight],
                                               const Access& access) {
  CUACT_UNROLL
  for (int u = 0; u < InFlight; ++u) {
    if (r + u < end_row) {
      const cuda::std::size_t at = (r + u) * p.cols + c0;
      xs[u] = access.load(reinterpret_cast<const Held*>(p.x + at));
      dys[u] = access.load(reinterpret_cast<const Held*>(p.dy + at));
    }
  }
}

/// Columns [c0, c0 + Width) of chunk `chunk`: dx for each row of the chunk in row order, and the
/// column sums of what was stored. Loads and stores go through the elementwise engine's pieces
/// (16-bit lanes held as words, widened by lanes_of; outputs converted in pairs by
/// convert_vector), and the stored dx is widened back for the sums.
#pragma nv_exec_check_disable
template <int Width, class Op, int VecWidth, class T, class Access>
CUACT_HOST_DEVICE void bias_gradient_columns(const bias_gradient_params<Op, VecWidth, T>& p,
                                             cuda::std::size_t chunk, cuda::std::size_t c0,
                                             const Access& access) {
  using A = compute_t<T>;
  using held = held_vector_t<T, Width>;
  constexpr int in_flight = bias_gradient_rows_in_flight<held>;
  const cuda::std::size_t first_row = chunk * p.rows_per_chunk;
  const cuda::std::size_t end_row =
      p.rows - first_row < p.rows_per_chunk ? p.rows : first_row + p.rows_per_chunk;
  const vector_of<A, Width> bias =
      lanes_of<T, Width>(access.load(reinterpret_cast<const held*>(p.bias + c0)));
  A sum[Width];
  CUACT_UNROLL
  for (int j = 0; j < Width; ++j) sum[j] = A(0);
  held x[in_flight];
  held dy[in_flight];
  // Rows r.. of x and dy are loaded one step ahead of their use, so a thread's next loads are in
  // flight while it computes the current rows: a thread walks many rows one after the other, and
  // with its loads issued only after the previous row's gelu derivative the bias backward falls
  // well below the copy ceiling, at the cost of a few registers. The walking forward (rows.cuh)
  // loses with the same change: it already loads two rows per step, and prefetching halves that.
  load_bias_gradient_rows(p, first_row, end_row, c0, x, dy, access);
  for (cuda::std::size_t r = first_row; r < end_row; r += in_flight) {
#ifdef __CUDA_ARCH__
    held next_x[in_flight];  // past end_row: never loaded, copied, never used
    held next_dy[in_flight];
#else
    // zeroed on the host only, for GCC's -Wmaybe-uninitialized: on the device the zeroing
    // changes the register allocation and slows the bias backward
    held next_x[in_flight] = {};
    held next_dy[in_flight] = {};
#endif
    if (r + in_flight < end_row) {
      load_bias_gradient_rows(p, r + in_flight, end_row, c0, next_x, next_dy, access);
    }
    CUACT_UNROLL
    for (int u = 0; u < in_flight; ++u) {
      if (r + u < end_row) {
        const vector_of<A, Width> xs = lanes_of<T, Width>(x[u]);
        const vector_of<A, Width> dys = lanes_of<T, Width>(dy[u]);
        A values[Width];
        CUACT_UNROLL
        for (int j = 0; j < Width; ++j) {
          values[j] = p.op(xs.elements[j], bias.elements[j], dys.elements[j]);
        }
        const vector_of<T, Width> dx = convert_vector<T>(values);
        access.store(reinterpret_cast<vector_of<T, Width>*>(p.dx + (r + u) * p.cols + c0), dx);
        const vector_of<A, Width> stored = lanes_of<T, Width>(cuda::std::bit_cast<held>(dx));
        CUACT_UNROLL
        for (int j = 0; j < Width; ++j) sum[j] += stored.elements[j];
      }
    }
    CUACT_UNROLL
    for (int u = 0; u < in_flight; ++u) {
      x[u] = next_x[u];
      dy[u] = next_dy[u];
    }
  }
  CUACT_UNROLL
  for (int j = 0; j < Width; ++j) {
    access.store(reinterpret_cast<vector_of<A, 1>*>(p.partial + chunk * p.cols + c0 + j),
                 vector_of<A, 1>{{sum[j]}});
  }
}

/// Stage 1's per-thread body for chunk `chunk`: thread `thread` of `num_threads` along the
/// columns (any decomposition is correct; the sums' order does not depend on it).
#pragma nv_exec_check_disable
template <class Op, int VecWidth, class T, class Access = global_memory_access>
CUACT_HOST_DEVICE void bias_gradient_thread(const bias_gradient_params<Op, VecWidth, T>& p,
                                            cuda::std::size_t chunk, cuda::std::size_t thread,
                                            cuda::std::size_t num_threads,
                                            const Access& access = {}) {
  for (cuda::std::size_t v = thread; v < p.vectors; v += num_threads) {
    bias_gradient_columns<VecWidth>(p, chunk, p.head + v * VecWidth, access);
  }
  const cuda::std::size_t scalars = p.head + p.tail;
  for (cuda::std::size_t s = thread; s < scalars; s += num_threads) {
    bias_gradient_columns<1>(p, chunk, s < p.head ? s : s + p.vectors * VecWidth, access);
  }
}

/// Stage 1's grid, the body of both stage 1 kernels: thread (blockIdx.x, threadIdx.x) along the
/// columns, chunks blockIdx.y, blockIdx.y + gridDim.y, ...
template <class Params>
__device__ void bias_gradient_grid(const Params& params) {
  const cuda::std::size_t thread =
      static_cast<cuda::std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const cuda::std::size_t num_threads = static_cast<cuda::std::size_t>(gridDim.x) * blockDim.x;
  const cuda::std::size_t chunks =
      (params.rows + params.rows_per_chunk - 1) / params.rows_per_chunk;
  for (cuda::std::size_t chunk = blockIdx.y; chunk < chunks; chunk += gridDim.y) {
    bias_gradient_thread(params, chunk, thread, num_threads, vector_store_access{});
  }
}

CUACT_KERNELS_BEGIN
template <class Params>
CUACT_KERNEL void bias_gradient_kernel(const Params params) {
  bias_gradient_grid(params);
}
CUACT_KERNELS_END

CUACT_KERNELS_BEGIN
/// Stage 1 compiled for bias_gradient_capped_blocks resident blocks: the same body in at most 64
/// registers. Left to itself the compiler gives the bias + relu fp32 backward 80 (threshold 72):
/// six resident blocks, too few loads in flight where the bytes in flight per SM must be high,
/// enough where they need not be. fused_dispatch.cuh's bias_gradient_capped chooses.
template <class Params>
CUACT_KERNEL void __launch_bounds__(bias_gradient_block_threads, bias_gradient_capped_blocks)
    bias_gradient_capped_kernel(const Params params) {
  bias_gradient_grid(params);
}
CUACT_KERNELS_END

/// Stage 1's arguments with the split of one row: vectors where x, dy, dx and bias share their
/// offset from the vector boundary and cols keeps it from row to row, else scalars.
template <int VecWidth, class Op, class T>
bias_gradient_params<Op, VecWidth, T> make_bias_gradient_params(Op op, const T* x, const T* bias,
                                                                const T* dy, T* dx,
                                                                compute_t<T>* partial,
                                                                cuda::std::size_t rows,
                                                                cuda::std::size_t cols) {
  bias_gradient_params<Op, VecWidth, T> p{
      x,       bias, dy,   dx,
      partial, rows, cols, bias_gradient_chunks(rows, cols, VecWidth).rows_per_chunk,
      0,       0,    cols, op};
  const cuda::std::size_t offset = offset_in_vector<VecWidth>(x);
  const bool co_aligned = cols % VecWidth == 0 && offset_in_vector<VecWidth>(bias) == offset &&
                          offset_in_vector<VecWidth>(dy) == offset &&
                          offset_in_vector<VecWidth>(dx) == offset;
  if (co_aligned) {
    const cuda::std::size_t to_boundary = (VecWidth - offset) % VecWidth;
    p.head = to_boundary < cols ? to_boundary : cols;
    p.vectors = (cols - p.head) / VecWidth;
    p.tail = cols - p.head - p.vectors * VecWidth;
  }
  return p;
}

/// Stage 2's per-thread body: columns thread, thread + num_threads, ...: out[c] = the sum of
/// partial[k, c] over k = 0, 1, ..., chunks - 1, in that order.
#pragma nv_exec_check_disable
template <class A, class T, class Access = global_memory_access>
CUACT_HOST_DEVICE void column_sum_thread(const A* partial, cuda::std::size_t chunks,
                                         cuda::std::size_t cols, T* out, cuda::std::size_t thread,
                                         cuda::std::size_t num_threads, const Access& access = {}) {
  for (cuda::std::size_t c = thread; c < cols; c += num_threads) {
    A sum = access.load(reinterpret_cast<const vector_of<A, 1>*>(partial + c)).elements[0];
    for (cuda::std::size_t k = 1; k < chunks; ++k) {
      sum +=
          access.load(reinterpret_cast<const vector_of<A, 1>*>(partial + k * cols + c)).elements[0];
    }
    access.store(reinterpret_cast<vector_of<T, 1>*>(out + c),
                 vector_of<T, 1>{{from_compute<T>(sum)}});
  }
}

CUACT_KERNELS_BEGIN
template <class A, class T>
CUACT_KERNEL void column_sum_kernel(const A* partial, cuda::std::size_t chunks,
                                    cuda::std::size_t cols, T* out) {
  column_sum_thread(partial, chunks, cols, out,
                    static_cast<cuda::std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                    static_cast<cuda::std::size_t>(gridDim.x) * blockDim.x);
}
CUACT_KERNELS_END

}  // namespace detail
}  // namespace cuact
