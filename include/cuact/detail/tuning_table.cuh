/// \file
/// Every tuning constant of the launch, in one table, each with its reason in a line. The rules
/// that read them are detail/policy.cuh (select_policy and its helpers), the dispatch
/// (detail/dispatch.cuh, detail/fused_dispatch.cuh, detail/launch.cuh) and the kernels whose
/// compiled shape they fix (detail/kernels/*.cuh: the loads a thread may keep in flight, launch
/// bounds); the benchmark's --shapes, --family and --headline modes measure them, and their
/// generated results hold the figures. None is a macro: a sweep varies a launch through
/// cuact::scoped_policy (docs/tuning.md), and a compiled cap through the op
/// (`max_vectors_per_thread`, as cuact::one_vector declares it).
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

/// A device that reports no memory clock or bus width (some virtualized or integrated ones) is
/// modelled at this bandwidth: a mid-range datacenter figure.
inline constexpr double unknown_device_bytes_per_second = 2e12;
/// A device that reports no SM clock is modelled at this one: a mid-range datacenter figure.
inline constexpr double unknown_device_sm_clock_hz = 1.5e9;

// ---- loads a thread keeps in flight (compiled caps) ------------------------------------------

/// Bytes one elementwise thread may load before it computes (the cap on vectors_per_thread):
/// every unrolled vector costs registers even when fewer are asked for, and at 64 bytes even relu
/// fp32 needs more registers than a full SM allows. Where two vectors cost resident blocks against
/// one, the one-vector instantiation runs instead (kernels/elementwise.cuh: one_vector_op).
inline constexpr unsigned max_load_bytes_per_thread = 32;
/// Bytes a thread walking columns (rows_kernel with broadcast inputs) loads per step: four rows of
/// 16-byte vectors, twice max_load_bytes_per_thread, since four rows in flight reach the copy
/// ceiling where two do not on devices that need many bytes in flight.
inline constexpr unsigned max_walk_load_bytes_per_thread = 64;
/// The walk's cap for an operation whose float math is compute-bound (fp32 gelu): two rows, since
/// with four its registers leave too few resident threads.
inline constexpr unsigned compute_bound_walk_load_bytes = 32;

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
/// Threads per block of a declared-light op over little work: the same threads in half the
/// blocks of threads_per_block, so a short grid spends less of its time starting and retiring
/// blocks. Heavy and undeclared ops keep threads_per_block, which `cuact_bench --small` measured
/// faster for them (their longer threads leave block turnover hidden).
inline constexpr unsigned little_work_light_threads_per_block = 256;
/// The largest elementwise grid, in waves of resident threads, launched to overlap the previous
/// kernel (policy.cuh: overlaps_previous_kernel): such a grid's launch latency hides behind the
/// previous kernel, while from a full wave on, every block's wait costs more than that latency.
inline constexpr double overlapped_max_waves = 0.5;

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

/// Timed calls of each path before a functor's bf16 table is chosen or not (table_choice.cuh):
/// the faster of two per path, so that a first call's one-time costs (module loading, the table's
/// buffer) do not count.
inline constexpr int table_choice_samples = 2;
/// How much faster per element the table must be than direct math to be taken: within it direct
/// math keeps the call (no fill kernel, no table buffer), since single timed calls vary by
/// about as much.
inline constexpr double table_choice_margin = 0.03;

// ---- the ReLU mask ---------------------------------------------------------------------------

/// Threads per block of the staged sign-mask forward (fp32, fp64; kernels/relu_mask.cuh): one
/// vector each, so a block step covers whole mask tiles; the launch model's block for a light
/// two-array operation, so the modelled launch runs staged.
inline constexpr unsigned staged_mask_threads = 128;

// ---- tabulated bf16 fill ----------------------------------------------------------------------

/// Threads per block of the kernel that fills a bf16 table (one thread per entry): a short,
/// one-shot kernel whose block size only has to fill the SMs.
inline constexpr unsigned table_fill_threads_per_block = 256;

// ---- fused ops -------------------------------------------------------------------------------

/// Blocks a direct quantize grid keeps at least when it is shortened: several waves of any
/// current GPU.
inline constexpr unsigned quantize_min_blocks = 8192;
/// Threads per block a light op's direct quantize takes at least: each block ends in a reduction
/// and an atomic, so fewer, larger blocks make fewer of them.
inline constexpr unsigned quantize_light_min_threads = 256;
/// Passes a shortened direct quantize grid makes per thread, its blocks divided by as many: each
/// block's closing reduction and atomic are then paid for this many times the elements.
inline constexpr unsigned quantize_shortened_passes = 4;
/// Passes of a tabulated quantize: each block copies a table twice the forward's for fewer bytes
/// of data, so blocks take many passes to amortise it; past this count the gain stops.
inline constexpr unsigned tabulated_quantize_passes = 32;
/// Threads per block of the tabulated quantize (tabulated_quantize_kernel): its blocks copy a
/// 32 KiB table first, so large blocks pay that copy for more work.
inline constexpr unsigned tabulated_quantize_threads_per_block = 512;
/// Blocks of tabulated_quantize_kernel an SM holds (its launch bounds): shared memory holds three
/// blocks' tables, and the bound keeps three blocks' registers too; with two, too few threads
/// hide the lookups.
inline constexpr unsigned tabulated_quantize_min_blocks = 3;
/// Elements a thread walking columns (rows_kernel with broadcast inputs) covers at least, so the
/// walk's setup is paid for enough of them.
inline constexpr unsigned min_walk_elements = 16;

// ---- bias backward (kernels/column_sum.cuh) ---------------------------------------------------

/// Threads stage 1 of the bias gradient aims for (row chunks x column threads): many waves, so a
/// partly filled last wave costs little, while the partial sums stay small. A constant, not a
/// device fact: the chunking, hence the summation order, must not depend on the GPU.
inline constexpr cuda::std::size_t bias_gradient_target_threads = cuda::std::size_t(1) << 21;
/// Threads per block of stage 1: the launch model's block, whose residency kernel_facts counts.
inline constexpr unsigned bias_gradient_block_threads = 128;
/// Resident blocks per SM stage 1's capped kernel is compiled for (its launch bounds): at most 64
/// registers a thread, so 8 blocks of 128 threads fit an SM's 64 K registers and keep enough loads
/// in flight where the compiler's own registers would leave too few.
inline constexpr unsigned bias_gradient_capped_blocks = 8;

}  // namespace detail
}  // namespace cuact
