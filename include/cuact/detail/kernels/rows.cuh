/// \file
/// The row-wise sibling of the elementwise kernel: an operation over a [rows, cols] layout whose
/// arrays each advance by their own pitch per row (0: the same row for every row, a broadcast
/// bias). Each row runs the 1-D per-thread body, elementwise_thread, unchanged, over its cols
/// elements; blockIdx.y picks the row (grid-stride over rows, so gridDim.y may be capped).
///
/// Used by the packed gated activations (a and b are the two halves of one [rows, 2 * cols]
/// buffer: pitch 2 * cols, column offsets 0 and cols) and bias + activation (bias pitch 0).
#pragma once

#include <cstddef>
#include <utility>

#include "../config.cuh"
#include "elementwise.cuh"

namespace cuact {
namespace detail {

/// gridDim.y's limit.
inline constexpr std::size_t max_grid_rows = 65535;

/// One launch's arguments: row 0's elementwise params (arrays at row 0, the split of one row's
/// cols elements, the op), the row count, and each array's pitch in elements.
///
/// The head / vectors / tail split of row 0 holds for every row when each pitch is a multiple of
/// the vector width (then each array's offset from its vector boundary is the same in every row);
/// make_rows_params otherwise makes every row scalar. Decided once, on the host.
template <class Params>
struct rows_params {
  Params row;
  std::size_t rows;
  std::size_t output_pitch[Params::num_outputs];
  std::size_t input_pitch[Params::num_inputs];
};

template <class Params, std::size_t... O, std::size_t... I>
CUACT_HOST_DEVICE Params row_params_at(const rows_params<Params>& p, std::size_t row,
                                       std::index_sequence<O...>, std::index_sequence<I...>) {
  Params q = p.row;
  ((cuda::std::get<O>(q.outputs) += row * p.output_pitch[O]), ...);
  ((cuda::std::get<I>(q.inputs) += row * p.input_pitch[I]), ...);
  return q;
}

/// Row `row`'s elementwise params: every array's pointer advanced by row * its pitch.
template <class Params>
CUACT_HOST_DEVICE Params row_params_at(const rows_params<Params>& p, std::size_t row) {
  return row_params_at(p, row, std::make_index_sequence<Params::num_outputs>{},
                       std::make_index_sequence<Params::num_inputs>{});
}

/// The per-thread body of one row: thread `thread` of `num_threads` along the row (any
/// decomposition is correct, as for elementwise_thread).
#pragma nv_exec_check_disable
template <class Params, class Access = global_memory_access>
CUACT_HOST_DEVICE void rows_thread(const rows_params<Params>& p, std::size_t row,
                                   std::size_t thread, std::size_t num_threads,
                                   const Access& access = {}) {
  elementwise_thread(row_params_at(p, row), thread, num_threads, access);
}

/// The kernel: blockIdx.y strides over rows, the x dimension over one row's columns.
template <class RowsParams>
CUACT_KERNEL void rows_kernel(const RowsParams params) {
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t num_threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t row = blockIdx.y; row < params.rows; row += gridDim.y) {
    rows_thread(params, row, thread, num_threads);
  }
}

/// Builds the launch arguments from row 0's arrays and the pitches. No validation.
template <int VecWidth, class Op, class... Out, class... In>
rows_params<elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>> make_rows_params(
    Op op, const output_arrays<Out...>& row0_outputs,
    const std::size_t (&output_pitch)[sizeof...(Out)], std::size_t rows, std::size_t cols,
    const input_arrays<In...>& row0_inputs, const std::size_t (&input_pitch)[sizeof...(In)],
    unsigned vectors_per_thread = 1) {
  rows_params<elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>> p{
      make_params<VecWidth>(op, row0_outputs, cols, row0_inputs, vectors_per_thread), rows, {}, {}};
  bool pitches_keep_alignment = true;
  for (std::size_t m = 0; m < sizeof...(Out); ++m) {
    p.output_pitch[m] = output_pitch[m];
    pitches_keep_alignment = pitches_keep_alignment && output_pitch[m] % VecWidth == 0;
  }
  for (std::size_t k = 0; k < sizeof...(In); ++k) {
    p.input_pitch[k] = input_pitch[k];
    pitches_keep_alignment = pitches_keep_alignment && input_pitch[k] % VecWidth == 0;
  }
  if (!pitches_keep_alignment) {
    p.row.head = 0;
    p.row.vectors = 0;
    p.row.tail = cols;
  }
  return p;
}

/// The grid of a rows launch: x covers one row's work at `vectors_per_thread` vectors per thread
/// (or its scalars, if more), y the rows in `passes` grid-stride steps, capped at gridDim.y's
/// limit. A pure function, so the CPU tests run it.
struct rows_grid {
  unsigned blocks_x;
  unsigned blocks_y;
};
inline rows_grid rows_grid_for(std::size_t rows, std::size_t row_vectors, std::size_t row_scalars,
                               unsigned vectors_per_thread, unsigned passes, unsigned block) {
  const std::size_t k = vectors_per_thread < 1 ? 1 : vectors_per_thread;
  const std::size_t vector_threads = (row_vectors + k - 1) / k;
  const std::size_t threads = vector_threads > row_scalars ? vector_threads : row_scalars;
  const std::size_t blocks_x = (threads + block - 1) / block;
  const std::size_t p = passes < 1 ? 1 : passes;
  std::size_t blocks_y = (rows + p - 1) / p;
  blocks_y = blocks_y < 1 ? 1 : (blocks_y > max_grid_rows ? max_grid_rows : blocks_y);
  return {static_cast<unsigned>(blocks_x < 1 ? 1 : (blocks_x > 0x7fffffff ? 0x7fffffff : blocks_x)),
          static_cast<unsigned>(blocks_y)};
}

}  // namespace detail
}  // namespace cuact
