/// \file
/// Every tuning constant of the launch, in one table, each with its reason in a line. The rules
/// that read them are detail/policy.cuh (select_policy and its helpers) and the fused ops'
/// dispatch (detail/fused_dispatch.cuh); the benchmark's --shapes, --family and --headline modes
/// measure them, and their generated results hold the figures.
#pragma once

#include <cuda/std/cstddef>

#include "config.cuh"

namespace cuact {
namespace detail {

// ---- bytes in flight -------------------------------------------------------------------------

/// Load latency plus queueing at full bandwidth: bandwidth per SM times this is the bytes in
/// flight per SM that reach the copy ceiling (Little's law), fitted to where one 16-byte vector
/// per thread suffices and where a second is needed.
inline constexpr double load_latency_seconds = 0.8e-6;

// ---- instruction budget ----------------------------------------------------------------------

/// Issued instructions per element per array below which a heavy op is instruction-bound and
/// makes two passes: there the per-thread fixed cost limits issue; above, the extra pass costs.
inline constexpr double instruction_bound_budget_per_array = 16;
/// As instruction_bound_budget_per_array for a compute-bound float forward: it takes in a tight
/// fp32 budget and leaves out a roomy one, where one pass is as fast.
inline constexpr double compute_bound_budget_per_array = 32;
/// Passes of a compute-bound float forward where tight, unless its tuning_traits say more:
/// splitting its work over passes restores the issue slots one pass lacks.
inline constexpr unsigned default_compute_bound_passes = 2;

// ---- blocks ----------------------------------------------------------------------------------

/// Threads per block (PyTorch's): small blocks reach the copy ceiling where large ones lose to
/// block turnover at the end of the grid.
inline constexpr unsigned threads_per_block = 128;
/// Threads per block of an uncapped one-pass, one-vector op over three arrays that fills the SM:
/// the same resident threads in an eighth of the blocks cut block turnover.
inline constexpr unsigned wide_threads_per_block = 1024;
/// Threads per block of a light such op whose loads do not oversubscribe the memory: moderate
/// blocks under a residency cap keep the bytes in flight and leave L1 room for them.
inline constexpr unsigned moderated_threads_per_block = 384;
/// The multiple of the target bytes in flight a moderated op keeps (moderated_resident_blocks).
inline constexpr double moderated_loads_in_flight = 1.5;

// ---- residency caps --------------------------------------------------------------------------

/// Loads in flight at full residency, as a multiple of the target, above which a one-pass,
/// one-vector op over three arrays is capped: it separates backwards that oversubscribe the
/// memory system (requests queue, L1 thrashes) from those it serves.
inline constexpr double oversubscribed_loads_in_flight = 2.5;
/// The multiple of the target a capped light op keeps in flight: fewer blocks starve the loads.
inline constexpr double throttled_loads_in_flight = 2;
/// As throttled_loads_in_flight for a heavy op: its math needs more threads to hide its latency.
inline constexpr double throttled_heavy_loads_in_flight = 2.75;

// ---- little work -----------------------------------------------------------------------------

/// Below this many waves of resident threads, one vector per thread in one pass, so every SM
/// gets work (and no bulk tiles).
inline constexpr double little_work_waves = 4;

// ---- bulk tiles ------------------------------------------------------------------------------

/// Threads per block of a bulk-tile launch, one vector each (CUB's sm_90 tile): more vectors per
/// thread in tiles of the same bytes lost.
inline constexpr unsigned bulk_tile_threads_per_block = 256;

// ---- tabulated bf16 forwards -----------------------------------------------------------------

/// Elements from which a bf16 forward without a hint is tabulated: each call fills its table
/// first, which pays only against enough data.
inline constexpr cuda::std::size_t tabulated_min_elements = cuda::std::size_t(1) << 27;
/// Threads per block of a tabulated forward where the budget is not tight: each block copies the
/// table before it starts, so larger blocks pay that copy for more work.
inline constexpr unsigned tabulated_threads_per_block = 512;
/// Threads per block of a tabulated forward where the budget is tight: no issue slots are idle
/// for one block's copy to hide behind, so smaller blocks making more passes amortise it.
inline constexpr unsigned tabulated_tight_threads_per_block = 256;
/// See tabulated_tight_threads_per_block.
inline constexpr unsigned tabulated_tight_passes = 4;

// ---- fused ops -------------------------------------------------------------------------------

/// Blocks a direct quantize grid keeps at least when it is shortened: several waves of any
/// current GPU.
inline constexpr unsigned quantize_min_blocks = 8192;
/// Threads per block a light op's direct quantize takes at least: each block ends in a reduction
/// and an atomic, so fewer, larger blocks make fewer of them.
inline constexpr unsigned quantize_light_min_threads = 256;
/// Passes of a tabulated quantize: each block copies a table twice the forward's for fewer bytes
/// of data, so blocks take many passes to amortise it; past this count the gain stops.
inline constexpr unsigned tabulated_quantize_passes = 32;
/// Elements a thread walking columns (rows_kernel with broadcast inputs) covers at least, so the
/// walk's setup is paid for enough of them.
inline constexpr unsigned min_walk_elements = 16;

}  // namespace detail
}  // namespace cuact
