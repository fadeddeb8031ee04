/// \file
/// What the benchmark times: one `entry` per (activation, operation, dtype), derived generically
/// from the op table (tests/common/op_table.hpp) and from the bench's own user functors. Every
/// mode is a loop over entries; nothing switches over activation names. The templates that build
/// entries (ops_impl.cuh) are instantiated in one translation unit per dtype (ops_<type>.cu) and
/// one for the user functors (ops_user.cu), so CUB's heavy instantiations compile in parallel.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "common.cuh"

/// 1: every op-table row is built (the --family mode); 0: only the core rows (a CMake option,
/// CUACT_BENCH_FAMILY, for builds that must be quick).
#ifndef CUACT_BENCH_FAMILY
#define CUACT_BENCH_FAMILY 1
#endif

namespace bench {

/// One call's arrays. Which an entry uses (see `entry`):
/// - forward:              in0 = x, out = y (out == in0: in place)
/// - backward:             in0 = x, in1 = dy, out = dx
/// - backward_from_output: in0 = y, in1 = dy, out = dx (prepare writes y = act(x) over in0)
/// - relu_forward_mask:    in0 = x, out = y, mask written
/// - relu_backward_mask:   in0 = dy, mask read, out = dx; aux = the x that prepare makes the mask
///                         from (relu_forward_mask(aux -> out, mask)) and reference reads
struct call_args {
  const void* in0 = nullptr;
  const void* in1 = nullptr;
  void* out = nullptr;
  void* mask = nullptr;
  const void* aux = nullptr;
  std::size_t n = 0;
};

using launch_fn = std::function<cudaError_t(const call_args& args, cudaStream_t stream)>;

/// The launch shape cuact's model chooses for an entry's call, and the kernel facts behind it,
/// from cuact::detail::get_kernel_facts / choose_launch_shape on the entry's own params type.
struct shape_report {
  bool available = false;  ///< false: the entry has no model shape (or the query failed)
  unsigned blocks = 0;
  unsigned threads_per_block = 0;
  unsigned vectors_per_thread = 0;
  unsigned passes = 0;  ///< grid-stride steps per thread the grid was sized for
  unsigned max_vectors_per_thread = 0;
  bool heavy = false;       ///< what the model took the operation to be
  bool tabulated = false;   ///< a bf16 forward looked up from a table (detail/kernels/table.cuh)
  bool bulk_tiles = false;  ///< run as bulk tiles (detail/kernels/bulk_tile.cuh)
  int registers = 0;
  int resident_blocks_per_sm = 0;
};
using shape_fn = std::function<shape_report(const call_args& args)>;

/// The public kernel launched directly: `threads_per_block` threads, `vectors_per_thread`
/// vectors loaded per step, grid = ceil(work items / (threads_per_block x passes)).
using direct_fn =
    std::function<cudaError_t(const call_args& args, unsigned threads_per_block,
                              unsigned vectors_per_thread, int passes, cudaStream_t stream)>;

/// The operations derived from an activation (plus ReLU's mask pair).
enum class op_kind {
  forward,
  backward,
  backward_from_output,
  relu_forward_mask,
  relu_backward_mask
};
const char* name(op_kind k);

struct entry {
  std::string activation;  ///< the op table's row.name, or the user functor's name
  op_kind kind = op_kind::forward;
  dtype type = dtype::f32;
  int element_inputs = 1;    ///< element arrays read: in0 (and in1)
  bool reads_mask = false;   ///< relu_backward_mask
  bool writes_mask = false;  ///< relu_forward_mask
  bool uses_aux = false;     ///< aux is read by prepare / reference
  bool core = false;         ///< a core row (relu, selu): built and timed by every mode
  int row = 0;               ///< position in the op table (user functors: in ops_user.cu)
  launch_fn cuact;           ///< cuact's public entry
  launch_fn cub;             ///< cub::DeviceTransform with the same functor; empty when none
  launch_fn prepare;         ///< makes the inputs this entry needs (y, mask); empty when none
  launch_fn reference;       ///< the same result by another cuact route; empty: compare with cub
  shape_fn shape;            ///< the model's launch shape; empty when none
  direct_fn direct;          ///< elementwise_kernel launched directly; empty when none
  /// --small's floor: one float4 per thread, grid covers n, no checks (n % 4 == 0, 16-byte
  /// aligned arrays); core fp32 forward entries only.
  launch_fn bare;

  /// "selu backward bf16"-style label.
  std::string label() const;
  /// Bytes one call reads plus writes for n elements (a mask counts its 32-bit words).
  double bytes_moved(std::size_t n) const;
  bool is_forward() const { return kind == op_kind::forward; }
};

/// Every entry derived from the op table, in table order: per dtype, per row: forward, backward
/// (where the activation has a derivative), backward_from_output (where it has
/// cuact::has_derivative_from_output_v), then relu_forward_mask / relu_backward_mask per dtype.
/// Without CUACT_BENCH_FAMILY (a CMake option), only the core rows (relu, selu) are built; fp64
/// has the core rows only in every build.
const std::vector<entry>& table_entries();
/// The bench's plainly written user functors (no cost hint), forward, fp32 and bf16.
const std::vector<entry>& user_entries();

/// The first entry of `entries` matching (activation, kind, type), or nullptr.
const entry* find_entry(const std::vector<entry>& entries, const std::string& activation,
                        op_kind kind, dtype type);

/// True when this build has every table row (CUACT_BENCH_FAMILY).
bool family_built();

/// The copy ceiling: a device-to-device cudaMemcpyAsync (moves 2 * copy_bytes: read + write).
inline cudaError_t memcpy_call(void* to, const void* from, std::size_t copy_bytes,
                               cudaStream_t stream) {
  return cudaMemcpyAsync(to, from, copy_bytes, cudaMemcpyDeviceToDevice, stream);
}

/// Per-dtype registration, one translation unit each.
void add_table_entries_f32(std::vector<entry>& out);
void add_table_entries_f16(std::vector<entry>& out);
void add_table_entries_bf16(std::vector<entry>& out);
void add_table_entries_f64(std::vector<entry>& out);
void add_user_entries(std::vector<entry>& out);

}  // namespace bench
