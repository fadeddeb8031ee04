/// \file
/// The row-wise sibling of the elementwise kernel: an operation over a [rows, cols] layout whose
/// arrays each advance by their own pitch per row, or are broadcast (the same row for every row:
/// a bias). Without broadcast inputs each row runs the 1-D per-thread body, elementwise_thread,
/// unchanged (the packed gated ops). With them a thread owns a column vector and walks rows with
/// it, loading several rows before it computes (as the elementwise body loads several vectors)
/// and the broadcast inputs once; the loads, conversions, op call and stores are the elementwise
/// engine's (compute_and_store).
///
/// Used by the packed gated activations (a and b are the two halves of one [rows, 2 * cols]
/// buffer: pitch 2 * cols, column offsets 0 and cols) and bias + activation (bias pitch 0).
#pragma once

#include <cuda/std/cstddef>

#include "../std.cuh"
#include "../config.cuh"
#include "../tuning_table.cuh"
#include "elementwise.cuh"

namespace cuact {
namespace detail {

/// gridDim.y's limit.
inline constexpr cuda::std::size_t max_grid_rows = 65535;

/// The Broadcast bit of input k (rows_params).
constexpr unsigned broadcast_input(int k) { return 1u << k; }

/// Bytes one thread loads per row for one vector of every input that is not broadcast (bit k
/// of Broadcast: input k is the same row for every row).
template <class Params, unsigned Broadcast>
struct rows_load_bytes;
template <class Op, int VecWidth, class... Out, class... In, unsigned Broadcast>
struct rows_load_bytes<elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>,
                       Broadcast> {
  static constexpr cuda::std::size_t of(cuda::std::size_t k, cuda::std::size_t bytes) {
    return (Broadcast >> k & 1u) ? 0 : bytes;
  }
  template <cuda::std::size_t... K>
  static constexpr cuda::std::size_t sum(cuda::std::index_sequence<K...>) {
    return (of(K, sizeof(In) * VecWidth) + ... + 0);
  }
  template <cuda::std::size_t... K>
  static constexpr cuda::std::size_t broadcast_element_bytes(cuda::std::index_sequence<K...>) {
    return ((sizeof(In) - of(K, sizeof(In))) + ... + 0);
  }
  template <cuda::std::size_t... K>
  static constexpr unsigned count_broadcast(cuda::std::index_sequence<K...>) {
    return ((Broadcast >> K & 1u) + ... + 0u);
  }
  static constexpr cuda::std::size_t value = sum(cuda::std::index_sequence_for<In...>{});
  /// Bytes per element of the broadcast inputs (read from cache, not from memory, row after row).
  static constexpr cuda::std::size_t broadcast_bytes =
      broadcast_element_bytes(cuda::std::index_sequence_for<In...>{});
  /// How many of the inputs are broadcast.
  static constexpr unsigned broadcast_arrays =
      count_broadcast(cuda::std::index_sequence_for<In...>{});
};

/// One launch's arguments: row 0's elementwise params (arrays at row 0, the split of one row's
/// cols elements, the op), the row count, each array's pitch in elements, and how many rows a
/// thread loads before it computes.
///
/// The head / vectors / tail split of row 0 holds for every row when each pitch is a multiple of
/// the vector width (then each array's offset from its vector boundary is the same in every row);
/// make_rows_params otherwise makes every row scalar. Decided once, on the host.
///
/// Broadcast inputs (bit k: input k, a bias) are the same row for every row: a thread loads them
/// once per column vector and reuses them for every row it walks (their pitch is not read).
/// WalkLoadBytes caps the rows a walking thread loads per step (max_rows_in_flight; its default and
/// the compute-bound forwards' are tuning_table.cuh's).
template <class Params, unsigned Broadcast = 0,
          unsigned WalkLoadBytes = max_walk_load_bytes_per_thread>
struct rows_params {
  static constexpr unsigned broadcast_inputs = Broadcast;
  /// With broadcast inputs a thread walks rows down one column vector (and loads them once);
  /// without, it runs the elementwise body along one row at a time (row-major, as the elementwise
  /// kernel: swiglu packed fp32 loses badly walking columns, its four-store vectors arriving in a
  /// different order).
  static constexpr bool walks_columns = Broadcast != 0;
  /// Bytes one thread loads per row and column vector (the inputs that are not broadcast).
  static constexpr cuda::std::size_t row_load_bytes = rows_load_bytes<Params, Broadcast>::value;
  /// The most rows a thread loads before it computes (WalkLoadBytes).
  static constexpr int max_rows_in_flight = row_load_bytes == 0 || row_load_bytes >= WalkLoadBytes
                                                ? 1
                                                : static_cast<int>(WalkLoadBytes / row_load_bytes);
  /// Bytes one element moves through memory: Params' less the broadcast inputs.
  static constexpr cuda::std::size_t bytes_per_element =
      Params::bytes_per_element - rows_load_bytes<Params, Broadcast>::broadcast_bytes;
  /// Arrays an element is read from or written to in memory: Params' less the broadcast inputs.
  static constexpr unsigned arrays_per_element =
      Params::arrays_per_element - rows_load_bytes<Params, Broadcast>::broadcast_arrays;
  Params row;
  cuda::std::size_t rows;
  cuda::std::size_t output_pitch[Params::num_outputs];
  cuda::std::size_t input_pitch[Params::num_inputs];
  /// Rows a thread loads together per step, 1..max_rows_in_flight (the launch model's choice; any
  /// value is correct), when it walks columns; otherwise row.vectors_per_thread is the model's.
  unsigned rows_in_flight;

  CUACT_HOST_DEVICE int effective_rows_in_flight() const {
    const int k = static_cast<int>(rows_in_flight);
    return k < 1 ? 1 : (k > max_rows_in_flight ? max_rows_in_flight : k);
  }
};

template <class Params, unsigned Broadcast, unsigned W, cuda::std::size_t... O,
          cuda::std::size_t... I>
CUACT_HOST_DEVICE void advance_rows(Params& q, const rows_params<Params, Broadcast, W>& p,
                                    cuda::std::size_t rows, cuda::std::index_sequence<O...>,
                                    cuda::std::index_sequence<I...>) {
  ((detail::get<O>(q.outputs) += rows * p.output_pitch[O]), ...);
  ((detail::get<I>(q.inputs) += (Broadcast >> I & 1u) ? 0 : rows * p.input_pitch[I]), ...);
}

/// Moves `q`, some row's params, `rows` rows down (broadcast inputs stay). The walk advances by a
/// loop-invariant count, an add per array and row where row_params_at at each row costs a 64-bit
/// multiply: fewer issued instructions, which matters where the walk is instruction-bound.
template <class Params, unsigned Broadcast, unsigned W>
CUACT_HOST_DEVICE void advance_rows(Params& q, const rows_params<Params, Broadcast, W>& p,
                                    cuda::std::size_t rows) {
  advance_rows(q, p, rows, cuda::std::make_index_sequence<Params::num_outputs>{},
               cuda::std::make_index_sequence<Params::num_inputs>{});
}

/// Row `row`'s elementwise params: row 0's moved `row` rows down (advance_rows).
template <class Params, unsigned Broadcast, unsigned W>
CUACT_HOST_DEVICE Params row_params_at(const rows_params<Params, Broadcast, W>& p,
                                       cuda::std::size_t row) {
  Params q = p.row;
  advance_rows(q, p, row);
  return q;
}

/// Loads input I of `at` (one row's params) at element `first` into `into`, when Load.
#pragma nv_exec_check_disable
template <cuda::std::size_t I, bool Load, class Held, class Params, class Access>
CUACT_HOST_DEVICE void load_input_into(Held& into, const Params& at, cuda::std::size_t first,
                                       const Access& access) {
  if constexpr (Load) {
    using held = cuda::std::remove_reference_t<decltype(detail::get<I>(into))>;
    detail::get<I>(into) =
        access.load(reinterpret_cast<const held*>(detail::get<I>(at.inputs) + first));
  }
}

/// Elements [first, first + Width) of rows first_row, first_row + row_step, ... (< p.rows):
/// the broadcast inputs loaded once, then effective_rows_in_flight() rows loaded per step before
/// any of them is computed and stored.
#pragma nv_exec_check_disable
template <int Width, unsigned Broadcast, unsigned W, class Op, int VecWidth, class... Out,
          class... In, class Access, cuda::std::size_t... I>
CUACT_HOST_DEVICE void rows_columns(
    const rows_params<elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>,
                      Broadcast, W>& p,
    cuda::std::size_t first, cuda::std::size_t first_row, cuda::std::size_t row_step,
    const Access& access, cuda::std::index_sequence<I...> inputs) {
  using params_t = elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>;
  using loaded_t = detail::tuple<held_vector_t<In, Width>...>;
  constexpr int max_k = rows_params<params_t, Broadcast, W>::max_rows_in_flight;
  const int k = p.effective_rows_in_flight();
  if (first_row >= p.rows) return;
  loaded_t shared{};
  (load_input_into<I, (Broadcast >> I & 1u) != 0>(shared, p.row, first, access), ...);
  const cuda::std::size_t step = row_step * static_cast<cuda::std::size_t>(k);
  params_t at = row_params_at(p, first_row);  // row `base`'s arrays
  for (cuda::std::size_t base = first_row; base < p.rows; base += step) {
    loaded_t loaded[max_k];
    params_t row_u = at;
    CUACT_UNROLL
    for (int u = 0; u < max_k; ++u) {
      const cuda::std::size_t row = base + u * row_step;
      if (u < k && row < p.rows) {
        loaded[u] = shared;
        (load_input_into<I, (Broadcast >> I & 1u) == 0>(loaded[u], row_u, first, access), ...);
      }
      advance_rows(row_u, p, row_step);
    }
    row_u = at;
    CUACT_UNROLL
    for (int u = 0; u < max_k; ++u) {
      const cuda::std::size_t row = base + u * row_step;
      if (u < k && row < p.rows) {
        compute_and_store<Width>(row_u, first, loaded[u], no_vector_state{}, access, inputs,
                                 cuda::std::index_sequence_for<Out...>{});
      }
      advance_rows(row_u, p, row_step);
    }
    advance_rows(at, p, step);
  }
}

/// The per-thread body: thread `thread` of `num_threads` along the columns, for rows first_row,
/// first_row + row_step, ... (< p.rows). Walking columns: for each of its head and tail scalars
/// (thread, thread + num_threads, ...), then each of its column vectors the same way, it walks the
/// rows (scalars first: with the vector walk last the kernel keeps more values live, so more
/// registers and fewer resident blocks); otherwise it runs
/// elementwise_thread over each row in turn. Any (first_row, row_step, thread,
/// num_threads) decomposition that covers the rows and threads is correct; each element is read
/// and written once, and nothing outside the rows is touched.
#pragma nv_exec_check_disable
template <class Params, unsigned Broadcast, unsigned W, class Access = global_memory_access>
CUACT_HOST_DEVICE void rows_thread(const rows_params<Params, Broadcast, W>& p,
                                   cuda::std::size_t first_row, cuda::std::size_t row_step,
                                   cuda::std::size_t thread, cuda::std::size_t num_threads,
                                   const Access& access = {}) {
  if constexpr (rows_params<Params, Broadcast, W>::walks_columns) {
    constexpr int width = Params::vec_width;
    const auto inputs = cuda::std::make_index_sequence<Params::num_inputs>{};
    const cuda::std::size_t scalars = p.row.head + p.row.tail;
    const cuda::std::size_t tail_shift = p.row.vectors * width;
    for (cuda::std::size_t s = thread; s < scalars; s += num_threads) {
      rows_columns<1>(p, s < p.row.head ? s : s + tail_shift, first_row, row_step, access, inputs);
    }
    for (cuda::std::size_t v = thread; v < p.row.vectors; v += num_threads) {
      rows_columns<width>(p, p.row.head + v * width, first_row, row_step, access, inputs);
    }
  } else {
    for (cuda::std::size_t row = first_row; row < p.rows; row += row_step) {
      elementwise_thread(row_params_at(p, row), thread, num_threads, access);
    }
  }
}

CUACT_KERNELS_BEGIN
/// The kernel: the x dimension over one row's columns, blockIdx.y the first row a block takes
/// and gridDim.y the stride (so gridDim.y may be capped). Walking columns, 16-byte vectors are
/// stored by vector_store_access.
template <class RowsParams>
CUACT_KERNEL void rows_kernel(const RowsParams params) {
  const cuda::std::size_t thread =
      static_cast<cuda::std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const cuda::std::size_t num_threads = static_cast<cuda::std::size_t>(gridDim.x) * blockDim.x;
  if constexpr (RowsParams::walks_columns) {
    rows_thread(params, blockIdx.y, gridDim.y, thread, num_threads, vector_store_access{});
  } else {
    rows_thread(params, blockIdx.y, gridDim.y, thread, num_threads);
  }
}
CUACT_KERNELS_END

/// Builds the launch arguments from row 0's arrays and the pitches. No validation.
template <int VecWidth, unsigned Broadcast = 0,
          unsigned WalkLoadBytes = max_walk_load_bytes_per_thread, class Op, class... Out,
          class... In>
rows_params<elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>, Broadcast,
            WalkLoadBytes>
make_rows_params(Op op, const output_arrays<Out...>& row0_outputs,
                 const cuda::std::size_t (&output_pitch)[sizeof...(Out)], cuda::std::size_t rows,
                 cuda::std::size_t cols, const input_arrays<In...>& row0_inputs,
                 const cuda::std::size_t (&input_pitch)[sizeof...(In)],
                 unsigned rows_in_flight = 1) {
  rows_params<elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>, Broadcast,
              WalkLoadBytes>
      p{make_params<VecWidth>(op, row0_outputs, cols, row0_inputs, 1),
        rows,
        {},
        {},
        rows_in_flight};
  bool pitches_keep_alignment = true;
  for (cuda::std::size_t m = 0; m < sizeof...(Out); ++m) {
    p.output_pitch[m] = output_pitch[m];
    pitches_keep_alignment = pitches_keep_alignment && output_pitch[m] % VecWidth == 0;
  }
  for (cuda::std::size_t k = 0; k < sizeof...(In); ++k) {
    p.input_pitch[k] = (Broadcast >> k & 1u) ? 0 : input_pitch[k];
    pitches_keep_alignment = pitches_keep_alignment && p.input_pitch[k] % VecWidth == 0;
  }
  if (!pitches_keep_alignment) {
    p.row.head = 0;
    p.row.vectors = 0;
    p.row.tail = cols;
  }
  return p;
}

/// The grid of a rows launch: x covers one row's work at `vectors_per_thread` vectors per thread
/// along the row (or its scalars, if more), y the rows at `rows_per_thread` rows per thread,
/// capped at gridDim.y's limit. Walking columns: (1, rows in flight x passes); otherwise
/// (vectors per thread, passes). A pure function, so the CPU tests run it.
struct rows_grid {
  unsigned blocks_x;
  unsigned blocks_y;
};
inline rows_grid rows_grid_for(cuda::std::size_t rows, cuda::std::size_t row_vectors,
                               cuda::std::size_t row_scalars, unsigned vectors_per_thread,
                               unsigned rows_per_thread, unsigned block) {
  const cuda::std::size_t k = vectors_per_thread < 1 ? 1 : vectors_per_thread;
  const cuda::std::size_t vector_threads = (row_vectors + k - 1) / k;
  const cuda::std::size_t threads = vector_threads > row_scalars ? vector_threads : row_scalars;
  const cuda::std::size_t blocks_x = (threads + block - 1) / block;
  const cuda::std::size_t r = rows_per_thread < 1 ? 1 : rows_per_thread;
  cuda::std::size_t blocks_y = (rows + r - 1) / r;
  blocks_y = blocks_y < 1 ? 1 : (blocks_y > max_grid_rows ? max_grid_rows : blocks_y);
  return {static_cast<unsigned>(blocks_x < 1 ? 1 : (blocks_x > 0x7fffffff ? 0x7fffffff : blocks_x)),
          static_cast<unsigned>(blocks_y)};
}

}  // namespace detail
}  // namespace cuact
