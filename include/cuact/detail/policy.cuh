/// \file
/// The launch policy: cuact::policy (one launch, as a plain value) and cuact::select_policy, the
/// pure launch model that chooses it from the device's facts, the kernel's, the operation's traits
/// and the problem (launch.cuh's head comment explains the model; detail/tuning_table.cuh holds
/// its constants). No device is queried here: launch.cuh reads the facts and launches.
#pragma once

#include <cuda/std/climits>
#include <cuda/std/cstddef>

#include "config.cuh"
#include "tuning_table.cuh"
#include "tuning_traits.cuh"

namespace cuact {
namespace detail {

/// Facts of one device the launch model reads.
struct device_facts {
  int sm_count;
  int max_threads_per_sm;
  double bytes_per_second;  ///< theoretical DRAM bandwidth: 2 x memory clock x bus width
  double sm_clock_hz;       ///< peak SM clock
  /// Shared memory per SM and the part of it the runtime reserves per resident block (0: not
  /// known; then no launch caps its resident blocks: throttled_resident_blocks)
  int shared_bytes_per_sm = 0;
  int reserved_shared_bytes_per_block = 0;  ///< see shared_bytes_per_sm
};

/// The bytes in flight per SM that reach `device`'s bandwidth: bandwidth per SM x
/// load_latency_seconds.
inline double target_bytes_in_flight_per_sm(const device_facts& device) {
  return device.bytes_per_second / device.sm_count * load_latency_seconds;
}

/// The default limit of dynamic shared memory per block (a launch above it needs an opt-in
/// attribute): a residency cap that would need more is not applied.
inline constexpr cuda::std::size_t default_dynamic_shared_limit = 48 * 1024;

/// What the launch model reads of one kernel instantiation on one device.
struct kernel_facts {
  int resident_blocks_per_sm;  ///< at threads_per_block threads, from the occupancy API
  int registers_per_thread;
  /// The architecture of the code the device runs the kernel from (90: sm_90; 0: not queried).
  int binary_version = 0;
  int local_bytes_per_thread = 0;  ///< local memory (register spills, local arrays)
  /// The largest block the kernel launches (its registers, its launch bounds; 0: not queried).
  int max_threads_per_block = 0;
};

/// Whether a bf16 forward, or a bf16 -> fp8 quantize, over n elements with this cost hint may be
/// tabulated (kernels/table.cuh: the forward's table of bf16 results, the quantize's of float
/// ones, bf16_table_quantize_op): a functor without a hint, over at least tabulated_min_elements
/// elements; it is where measured faster than direct math (table_measure.cuh). Why: the table's
/// cost does not depend on the functor, so it bounds an unhinted functor's cost, where computing
/// a long plain functor directly may fall far below the copy ceiling (a light one reaches it, and
/// nothing static tells the two apart). Built-in activations declare their cost and compute directly (their direct quantize
/// in 16-element vectors reaches the ceiling; fused_dispatch.cuh: run_quantize).
inline constexpr bool tabulates(cost_hint hint, cuda::std::size_t n) {
  return hint == cost_hint::estimate && n >= tabulated_min_elements;
}

}  // namespace detail

/// The kernel a launch runs (detail/kernels/*.cuh).
enum class algorithm {
  elementwise,  ///< per-thread vector loads, grid-stride (kernels/elementwise.cuh)
  bulk_tiles,   ///< each block's tile brought to shared memory by the copy engine (bulk_tile.cuh)
  table,        ///< a bf16 forward looked up from a table of the op's results (table.cuh)
};

/// One launch, as select_policy chooses it or a caller forces it: a plain value.
struct policy {
  unsigned blocks;              ///< grid size (capped at gridDim.x's limit; the loop grid-strides)
  unsigned threads_per_block;   ///< block size
  unsigned vectors_per_thread;  ///< vectors each thread loads before it computes, per pass
  unsigned passes;  ///< grid-stride steps per thread (the grid covers the work in this many)
  bool heavy;       ///< what the selector took the operation to be (for benchmarks' reports)
  /// Dynamic shared memory per block, unused by the kernel: the residency cap, which bounds the
  /// blocks resident per SM (detail::throttled_resident_blocks, moderated_resident_blocks); 0 none.
  cuda::std::size_t dynamic_shared_bytes = 0;
  cuact::algorithm algorithm = cuact::algorithm::elementwise;  ///< the kernel that runs it
};

/// What select_policy reads of the operation: its cost hint for this launch and the passes of a
/// compute-bound float forward (cuact::tuning_traits).
struct op_traits {
  detail::cost_hint hint = detail::cost_hint::estimate;
  unsigned compute_bound_passes = detail::default_compute_bound_passes;
};

/// What select_policy reads of the problem: `vectors` full vectors of `vector_load_bytes` loaded
/// bytes and `scalars` scalar elements (head + tail); each element moves `bytes_per_element` bytes
/// (inputs read plus outputs written) through `arrays_per_element` arrays; the kernel takes at
/// most `max_vectors_per_thread` vectors per thread, and at least `min_vectors_per_thread` where
/// the work fills the GPU (a walk over rows keeps its rows in flight).
struct problem {
  cuda::std::size_t vectors;
  cuda::std::size_t scalars;
  cuda::std::size_t vector_load_bytes;
  cuda::std::size_t bytes_per_element;
  unsigned arrays_per_element;
  unsigned max_vectors_per_thread;
  unsigned min_vectors_per_thread = 1;
};

namespace detail {
/// The launch shape as the dispatch names it.
using launch_shape = cuact::policy;

/// Whether one grid of `block`-thread blocks holds `threads` threads: gridDim.x's limit, INT_MAX
/// blocks.
inline bool grid_holds(cuda::std::size_t threads, unsigned block) {
  return (threads + block - 1) / block <= static_cast<cuda::std::size_t>(INT_MAX);
}

/// Blocks for `threads` threads, capped at gridDim.x's limit (grid_holds; the loop is
/// grid-stride, so a capped grid, or any user grid, stays correct).
inline unsigned grid_blocks(cuda::std::size_t threads, unsigned block) {
  return grid_holds(threads, block) ? static_cast<unsigned>((threads + block - 1) / block)
                                    : INT_MAX;
}

/// Little work: fewer full vectors than little_work_waves waves of `threads_per_wave` threads
/// (threads resident per SM x SMs). The model spreads it over every SM (one vector per thread in
/// one pass: more per thread would leave SMs idle), and it never runs as bulk tiles.
inline bool is_little_work(cuda::std::size_t vectors, double threads_per_wave) {
  return static_cast<double>(vectors) < little_work_waves * threads_per_wave;
}

/// Issued instructions per element the device can afford at full memory bandwidth:
/// 128 thread-instructions per clock per SM (4 schedulers x 32 lanes) over elements per second.
inline double instruction_budget(const device_facts& device, cuda::std::size_t bytes_per_element) {
  const double elements_per_second = device.bytes_per_second / bytes_per_element;
  return device.sm_count * device.sm_clock_hz * 128 / elements_per_second;
}

/// Whether an operation's data are float or wider: at least 4 bytes per array an element moves
/// through (a compute-bound hint describes the float forward; 16-bit data take the heavy rule).
inline bool is_float_data(cuda::std::size_t bytes_per_element, unsigned arrays_per_element) {
  return bytes_per_element >= 4 * cuda::std::size_t(arrays_per_element);
}

/// Whether every array an operation's element moves through holds 16-bit data (2 bytes each).
inline bool is_half_data(cuda::std::size_t bytes_per_element, unsigned arrays_per_element) {
  return bytes_per_element == 2 * cuda::std::size_t(arrays_per_element);
}

/// Whether every array an operation's element moves through holds float data (4 bytes each; not
/// double, not a float-in, 16-bit-out cast).
inline bool is_single_float_data(cuda::std::size_t bytes_per_element, unsigned arrays_per_element) {
  return bytes_per_element == 4 * cuda::std::size_t(arrays_per_element);
}

/// Whether every array an operation's element moves through holds double data (8 bytes each).
inline bool is_double_data(cuda::std::size_t bytes_per_element, unsigned arrays_per_element) {
  return bytes_per_element == 8 * cuda::std::size_t(arrays_per_element);
}

/// Whether an operation moving `bytes_per_element` through `arrays_per_element` arrays is
/// instruction-bound on `device`: its budget is under `budget_per_array` for each array (the rule
/// behind the passes of heavy and compute-bound ops and the tabulated forward's shape).
inline bool budget_is_tight(const device_facts& device, cuda::std::size_t bytes_per_element,
                            unsigned arrays_per_element, double budget_per_array) {
  return instruction_budget(device, bytes_per_element) < budget_per_array * arrays_per_element;
}

/// Whether heavy math on float data leaves room on `device`: every array holds 16-bit or every
/// array holds float elements (the data the two bounds describe; not double, not a float-in,
/// 16-bit-out cast) and the budget is not tight by the bound the model takes for it
/// (instruction_bound_budget_per_array for 16-bit data, compute_bound_budget_per_array for float
/// data, whose 4-ulp forms cost about twice the 16-bit ones). Where it
/// holds, heavy ops take the launches of cheap ones (dispatch.cuh: heavy_runs_one_vector; wide
/// blocks, wide_threads_per_block).
inline bool budget_is_roomy_for_float_math(const device_facts& device,
                                           cuda::std::size_t bytes_per_element,
                                           unsigned arrays_per_element) {
  const bool half_data = is_half_data(bytes_per_element, arrays_per_element);
  const bool float_data = is_single_float_data(bytes_per_element, arrays_per_element);
  if (!(half_data || float_data)) return false;
  const double bound =
      float_data ? compute_bound_budget_per_array : instruction_bound_budget_per_array;
  return !budget_is_tight(device, bytes_per_element, arrays_per_element, bound);
}

/// Whether an operation without a cost hint (a user's plainly written functor, taken as heavy)
/// takes a declared-heavy operation's launch on `device` instead of its own two passes: one vector
/// per thread (dispatch.cuh: heavy_runs_one_vector) in one pass, a backward's residency capped as
/// a heavy one's (throttled_resident_blocks). That is where heavy math on its data leaves room
/// (budget_is_roomy_for_float_math: 16-bit or float data): there plainly written functors
/// (softplus, elu, sigmoid, silu, tanh-GELU) reach the ceiling in that launch and not in two
/// passes. Where the budget is tight such functors keep the two passes,
/// which their fp32 forms need there (model_launch_shape).
inline bool estimate_takes_heavy_launch(const device_facts& device,
                                        cuda::std::size_t bytes_per_element,
                                        unsigned arrays_per_element) {
  return budget_is_roomy_for_float_math(device, bytes_per_element, arrays_per_element);
}

/// Threads `kernel` keeps resident on all of `device`'s SMs at once (a wave), in blocks of
/// threads_per_block: the unit of is_little_work and of overlapped_max_waves.
inline double resident_threads_per_wave(const device_facts& device, const kernel_facts& kernel) {
  return static_cast<double>(kernel.resident_blocks_per_sm) * threads_per_block * device.sm_count;
}

/// Whether an elementwise launch of `shape` runs as a programmatic dependent launch, overlapping
/// the stream's previous kernel (kernels/elementwise.cuh: elementwise_kernel): where the kernel
/// runs sm_90 code or later and its grid's threads are at most overlapped_max_waves of the
/// device's resident threads. Such small calls are mostly launch latency; larger grids lost more
/// in each block's wait than the overlap gave.
inline bool overlaps_previous_kernel(const device_facts& device, const kernel_facts& kernel,
                                     const launch_shape& shape) {
  const double wave = resident_threads_per_wave(device, kernel);
  return kernel.binary_version >= 90 &&
         static_cast<double>(shape.blocks) * shape.threads_per_block <= overlapped_max_waves * wave;
}

/// Whether a launch shaped `shape` over `vectors` full vectors runs the kernel compiled for one
/// vector per thread (dispatch.cuh: with_shape_code) rather than its own, compiled for several:
/// one vector per thread over little work (is_little_work, in waves of `kernel`'s resident
/// threads). Why: there each thread runs its body once, and the code for several vectors (their
/// loads, bounds tests and registers) costs every thread; over more work the kernel compiled for
/// several vectors ran light ops faster even at one vector per thread.
inline bool takes_one_vector_code(const device_facts& device, const kernel_facts& kernel,
                                  const launch_shape& shape, cuda::std::size_t vectors) {
  return shape.vectors_per_thread == 1 &&
         is_little_work(vectors, resident_threads_per_wave(device, kernel));
}

/// Resident blocks per SM (of threads_per_block threads) to which a one-pass, one-vector operation
/// over three arrays is capped on `device`: where its kernel's resident blocks keep more than
/// oversubscribed_loads_in_flight x target_bytes_in_flight_per_sm of loads in flight per SM, the
/// blocks that keep throttled_loads_in_flight (`heavy`: throttled_heavy_loads_in_flight) x that,
/// rounded up; 0 for no cap.
inline unsigned throttled_resident_blocks(const device_facts& device, const kernel_facts& kernel,
                                          cuda::std::size_t vector_load_bytes, bool heavy = false) {
  const double target = target_bytes_in_flight_per_sm(device);
  const double block_bytes = static_cast<double>(threads_per_block) * vector_load_bytes;
  if (kernel.resident_blocks_per_sm * block_bytes <= oversubscribed_loads_in_flight * target) {
    return 0;
  }
  const double kept = heavy ? throttled_heavy_loads_in_flight : throttled_loads_in_flight;
  const auto blocks = static_cast<unsigned>(kept * target / block_bytes + 0.999);
  return blocks >= 1 && blocks < static_cast<unsigned>(kernel.resident_blocks_per_sm) ? blocks : 0;
}

/// Resident blocks per SM (of moderated_threads_per_block threads) to which a light one-pass,
/// one-vector operation over three arrays that throttled_resident_blocks leaves uncapped is
/// capped on `device`: moderated_loads_in_flight x target_bytes_in_flight_per_sm of loads,
/// rounded up to whole blocks; 0 for no cap, where that is not fewer blocks than
/// fit the SM's threads.
inline unsigned moderated_resident_blocks(const device_facts& device,
                                          cuda::std::size_t vector_load_bytes) {
  const double block_bytes = static_cast<double>(moderated_threads_per_block) * vector_load_bytes;
  const auto blocks = static_cast<unsigned>(
      moderated_loads_in_flight * target_bytes_in_flight_per_sm(device) / block_bytes + 0.999);
  const unsigned fit =
      static_cast<unsigned>(device.max_threads_per_sm) / moderated_threads_per_block;
  return blocks >= 1 && blocks < fit ? blocks : 0;
}

/// Dynamic shared memory per block that leaves room for exactly `blocks` resident blocks per SM
/// of `device` (the runtime's reservation per block included, in its 128-byte allocation units):
/// more than a (blocks + 1)-th of the SM's shared memory each, at most a blocks-th. 0 where
/// `blocks` is 0, the device's shared memory is not known, or it would exceed
/// default_dynamic_shared_limit.
inline cuda::std::size_t shared_bytes_for_resident_blocks(const device_facts& device,
                                                          unsigned blocks) {
  if (blocks == 0 || device.shared_bytes_per_sm <= 0) return 0;
  const auto per_sm = static_cast<cuda::std::size_t>(device.shared_bytes_per_sm);
  const auto reserved = static_cast<cuda::std::size_t>(
      device.reserved_shared_bytes_per_block > 0 ? device.reserved_shared_bytes_per_block : 0);
  const cuda::std::size_t more_than = per_sm / (blocks + 1) + 1;  // per block, reservation included
  cuda::std::size_t bytes = more_than > reserved ? more_than - reserved : 0;
  bytes = (bytes + 127) / 128 * 128;
  if (bytes == 0 || (bytes + reserved) * blocks > per_sm || bytes > default_dynamic_shared_limit) {
    return 0;
  }
  return bytes;
}

}  // namespace detail

/// The launch model: the policy for `work` of an operation with traits `op` on `device`, for a
/// kernel instantiation with facts `kernel` (its residency). Pure: the CPU tests run every policy
/// it can produce over model devices. The constants it reads are detail/tuning_table.cuh's.
inline policy select_policy(const detail::device_facts& device, const detail::kernel_facts& kernel,
                            const op_traits& op, const problem& work) {
  using namespace detail;
  // An operation that does not declare its cost is taken as heavy, with two passes even where
  // the budget is not tight: nothing observable (registers included) tells a plain user functor
  // with log1p(exp(x)) from a copy-like one, and where the fp32 budget is tight such functors
  // fall short of the copy ceiling in one vector and one pass but not in two and two. Declared
  // heavy ops make two passes only where the budget is tight, since elsewhere the second pass
  // costs them. Where heavy math has room, an op without a hint takes a declared-heavy op's
  // launch instead (estimate_takes_heavy_launch).
  const bool compute_bound = op.hint == cost_hint::compute_bound &&
                             is_float_data(work.bytes_per_element, work.arrays_per_element);
  const double bound_per_array =
      compute_bound ? compute_bound_budget_per_array : instruction_bound_budget_per_array;
  const bool tight =
      budget_is_tight(device, work.bytes_per_element, work.arrays_per_element, bound_per_array);
  const bool estimated = op.hint == cost_hint::estimate;
  const bool heavy =
      op.hint == cost_hint::heavy || op.hint == cost_hint::compute_bound || estimated;
  const double resident_threads =
      static_cast<double>(kernel.resident_blocks_per_sm) * threads_per_block;
  const double target_bytes = target_bytes_in_flight_per_sm(device);
  unsigned k =
      static_cast<unsigned>(target_bytes / (resident_threads * work.vector_load_bytes) + 0.999);
  if (heavy && k < 2) k = 2;
  if (k < work.min_vectors_per_thread) k = work.min_vectors_per_thread;
  const bool estimated_passes =
      estimated &&
      !estimate_takes_heavy_launch(device, work.bytes_per_element, work.arrays_per_element);
  unsigned passes = heavy && (tight || estimated_passes) ? 2 : 1;
  if (compute_bound && tight && op.compute_bound_passes > passes) passes = op.compute_bound_passes;
  const double wave = resident_threads_per_wave(device, kernel);
  const bool little_work = is_little_work(work.vectors, wave);
  if (little_work) {  // spread it over every SM
    k = 1;
    passes = 1;
  }
  k = k < 1 ? 1 : (k > work.max_vectors_per_thread ? work.max_vectors_per_thread : k);
  // At least one wave of resident threads: passes beyond that would leave SMs without work. It
  // binds where vectors per thread x passes exceed the waves of work, so above the little-work
  // threshold (little_work_waves) only for more than four of them per thread: two vectors in
  // gelu's four passes, a walk's rows in flight times its passes, more than four declared passes
  const double full_waves = static_cast<double>(work.vectors) / (wave * k);
  if (passes > 1 && static_cast<double>(passes) > full_waves) {
    passes = full_waves < 1 ? 1u : static_cast<unsigned>(full_waves);
  }
  const cuda::std::size_t vector_threads =
      (work.vectors + cuda::std::size_t(k) * passes - 1) / (cuda::std::size_t(k) * passes);
  const cuda::std::size_t threads = vector_threads > work.scalars ? vector_threads : work.scalars;
  // A one-pass, one-vector op over three arrays whose kernel fills the SM, a heavy one only where
  // the budget leaves its math room: capped to fewer resident blocks where its loads in flight
  // oversubscribe the device's memory (throttled_resident_blocks), else moderated (below) or
  // wide blocks (wide_threads_per_block)
  const bool fills_sm = resident_threads >= static_cast<double>(device.max_threads_per_sm);
  const bool one_pass_of_three =
      work.arrays_per_element == 3 && k == 1 && passes == 1 && fills_sm && !little_work &&
      (!heavy ||
       budget_is_roomy_for_float_math(device, work.bytes_per_element, work.arrays_per_element));
  const cuda::std::size_t throttle_bytes =
      one_pass_of_three
          ? shared_bytes_for_resident_blocks(
                device, throttled_resident_blocks(device, kernel, work.vector_load_bytes, heavy))
          : 0;
  // A light one on 16-bit, float or double data that is not throttled: moderated blocks, capped
  // (moderated_resident_blocks), where the device's shared memory allows the cap
  const bool moderated = one_pass_of_three && throttle_bytes == 0 && !heavy &&
                         (is_half_data(work.bytes_per_element, work.arrays_per_element) ||
                          is_single_float_data(work.bytes_per_element, work.arrays_per_element) ||
                          is_double_data(work.bytes_per_element, work.arrays_per_element));
  const cuda::std::size_t moderate_bytes =
      moderated ? shared_bytes_for_resident_blocks(
                      device, moderated_resident_blocks(device, work.vector_load_bytes))
                : 0;
  const bool wide = one_pass_of_three && throttle_bytes == 0 && moderate_bytes == 0;
  const unsigned block = moderate_bytes != 0 ? moderated_threads_per_block
                         : wide              ? wide_threads_per_block
                         : little_work && op.hint == cost_hint::light
                             ? little_work_light_threads_per_block
                             : threads_per_block;
  const cuda::std::size_t cap_bytes = moderate_bytes != 0 ? moderate_bytes : throttle_bytes;
  return {grid_blocks(threads, block), block, k, passes, heavy, cap_bytes};
}

namespace detail {

/// select_policy with its inputs spelled out (the dispatch's and the tests' form).
inline launch_shape model_launch_shape(const device_facts& device, const kernel_facts& kernel,
                                       cost_hint hint, cuda::std::size_t vectors,
                                       cuda::std::size_t scalars,
                                       cuda::std::size_t vector_load_bytes,
                                       cuda::std::size_t bytes_per_element,
                                       unsigned arrays_per_element, unsigned max_vectors_per_thread,
                                       unsigned compute_bound_passes = default_compute_bound_passes,
                                       unsigned min_vectors_per_thread = 1) {
  return select_policy(device, kernel, {hint, compute_bound_passes},
                       {vectors, scalars, vector_load_bytes, bytes_per_element, arrays_per_element,
                        max_vectors_per_thread, min_vectors_per_thread});
}

/// The shape of `block`-thread blocks whose threads take k vectors per step in `passes` steps
/// over `vectors` vectors (or one scalar each, where `scalars` is more).
inline launch_shape fixed_launch_shape(cuda::std::size_t vectors, cuda::std::size_t scalars,
                                       unsigned block, unsigned k, unsigned passes) {
  const cuda::std::size_t vector_threads =
      (vectors + cuda::std::size_t(k) * passes - 1) / (cuda::std::size_t(k) * passes);
  const cuda::std::size_t threads = vector_threads > scalars ? vector_threads : scalars;
  return {grid_blocks(threads, block), block, k, passes, true};
}

/// The shape of a tabulated bf16 forward on `device`: two vectors per thread (capped at the
/// kernel's limit); 512-thread blocks in one pass, or where the device's budget for a bf16 forward
/// (2 bytes read and 2 written per element, two arrays) is tight, 256-thread blocks in four passes
/// (tabulated_tight_threads_per_block).
inline launch_shape tabulated_launch_shape(const device_facts& device, cuda::std::size_t vectors,
                                           cuda::std::size_t scalars,
                                           unsigned max_vectors_per_thread) {
  const bool tight = budget_is_tight(device, 4, 2, instruction_bound_budget_per_array);
  const unsigned block = tight ? tabulated_tight_threads_per_block : tabulated_threads_per_block;
  const unsigned passes = tight ? tabulated_tight_passes : 1;
  launch_shape shape = fixed_launch_shape(
      vectors, scalars, block, max_vectors_per_thread < 2 ? max_vectors_per_thread : 2, passes);
  shape.algorithm = algorithm::table;
  return shape;
}

/// Whether a bulk-tile kernel with facts `bulk_kernel` can run `vectors` full vectors: compiled for
/// sm_90 or later, and one tile per block within a grid's limit.
inline bool bulk_tiles_fit(const kernel_facts& bulk_kernel, cuda::std::size_t vectors) {
  return bulk_kernel.binary_version >= 90 && vectors > 0 &&
         grid_holds(vectors, bulk_tile_threads_per_block);
}

/// Whether the launch the model shaped as `shape` for a one-input, one-output operation over
/// `vectors` full vectors runs as bulk tiles instead (kernels/bulk_tile.cuh), where its params fit
/// them and `bulk_kernel` (the bulk-tile kernel's facts) was compiled for sm_90 or later: an
/// operation declared light (`hint`), or heavy and declaring that it gains from bulk tiles
/// (`gains`: gains_from_bulk_tiles; not a compute-bound one, nor a plain functor's estimate), on
/// 16-bit, float or double data where the budget leaves float math room
/// (budget_is_roomy_for_float_math), the model's shape one vector per thread
/// in one pass, over more than little work (is_little_work, in waves of full SMs: the bulk-tile
/// kernel's residency depends on its staging bytes) and fewer tiles than a grid holds (the kernel
/// takes one tile per block).
/// Why: on a device whose budget is roomy, the bulk copy engine moves a light forward's
/// data faster than per-thread loads, and so for the heavy forwards that declare the gain; it
/// lost for compute-bound forwards, softplus-like ones and plain functors, which nothing
/// observable (registers included) separates from the gainers, hence the declaration. On a
/// tight budget every forward lost. Double math always has room (its budget counts
/// twice the bytes), so for double data the device is judged by float data's test.
inline bool takes_bulk_tiles(const device_facts& device, const kernel_facts& bulk_kernel,
                             cost_hint hint, bool gains, const launch_shape& shape,
                             cuda::std::size_t vectors, cuda::std::size_t bytes_per_element,
                             unsigned arrays_per_element) {
  const double full_sm_wave = static_cast<double>(device.sm_count) * device.max_threads_per_sm;
  if (!bulk_tiles_fit(bulk_kernel, vectors) || arrays_per_element != 2 ||
      is_little_work(vectors, full_sm_wave)) {
    return false;
  }
  const bool declared = hint == cost_hint::light || (hint == cost_hint::heavy && gains);
  const cuda::std::size_t judged_bytes = is_double_data(bytes_per_element, arrays_per_element)
                                             ? 4 * cuda::std::size_t(arrays_per_element)
                                             : bytes_per_element;
  return declared && budget_is_roomy_for_float_math(device, judged_bytes, arrays_per_element) &&
         shape.passes == 1 && shape.vectors_per_thread == 1;
}

/// The shape of a bulk-tile launch over `vectors` full vectors, for an operation the model shaped
/// as `modelled`: a block of bulk_tile_threads_per_block threads per tile of as many vectors (the
/// kernel takes one tile per block: kernels/bulk_tile.cuh; a grid that grid_holds does not hold,
/// takes_bulk_tiles rules out), `staging_bytes` of dynamic shared memory per block.
inline launch_shape bulk_tile_launch_shape(const launch_shape& modelled, cuda::std::size_t vectors,
                                           cuda::std::size_t staging_bytes) {
  return {grid_blocks(vectors, bulk_tile_threads_per_block),
          bulk_tile_threads_per_block,
          1,
          1,
          modelled.heavy,
          staging_bytes,
          algorithm::bulk_tiles};
}

}  // namespace detail

/// What a policy selector is asked: the inputs of select_policy for one launch.
struct policy_request {
  detail::device_facts device;
  detail::kernel_facts kernel;
  op_traits op;
  problem work;
};

/// A policy selector: returns the policy to launch for `request`, given the one select_policy
/// chose (`chosen`); `context` is the selector's own (policy_selector::context).
using policy_selector_fn = policy (*)(const policy_request& request, const policy& chosen,
                                      const void* context);

/// A policy selector and its context, as scoped_policy installs it.
struct policy_selector {
  policy_selector_fn select = nullptr;  ///< nullptr: select_policy's choice stands
  const void* context = nullptr;
};

/// A forced policy fitted to `work`: vectors per thread within [1, the kernel's cap], at least one
/// thread per block and one pass, and where `forced.blocks` is 0, the blocks that cover the work
/// once (the loop grid-strides, so any grid is correct).
inline policy fit_policy(policy forced, const problem& work) {
  if (forced.threads_per_block == 0) forced.threads_per_block = detail::threads_per_block;
  if (forced.vectors_per_thread < 1) forced.vectors_per_thread = 1;
  if (forced.vectors_per_thread > work.max_vectors_per_thread) {
    forced.vectors_per_thread = work.max_vectors_per_thread;
  }
  if (forced.passes < 1) forced.passes = 1;
  if (forced.blocks == 0) {
    const cuda::std::size_t per_thread =
        cuda::std::size_t(forced.vectors_per_thread) * forced.passes;
    const cuda::std::size_t vector_threads = (work.vectors + per_thread - 1) / per_thread;
    const cuda::std::size_t threads = vector_threads > work.scalars ? vector_threads : work.scalars;
    forced.blocks = detail::grid_blocks(threads, forced.threads_per_block);
  }
  if (forced.blocks == 0) forced.blocks = 1;
  return forced;
}

namespace detail {

/// The policy `selector` returns for `request` (select_policy chose `chosen`), fitted to the
/// kernel and the work: a block larger than the kernel launches (request.kernel's
/// max_threads_per_block, where known) is cut to whole warps, as vectors per thread are cut to the
/// kernel's cap (fit_policy): the loops grid-stride, so any grid stays correct, where launching it
/// would fail. `chosen` where the selector is empty. Pure: the CPU tests run it.
inline policy selected_policy(const policy_selector& selector, const policy_request& request,
                              const policy& chosen) {
  if (selector.select == nullptr) return chosen;
  policy forced = selector.select(request, chosen, selector.context);
  const int max_threads = request.kernel.max_threads_per_block;
  if (max_threads > 0 && forced.threads_per_block > static_cast<unsigned>(max_threads)) {
    const auto cap = static_cast<unsigned>(max_threads);
    forced.threads_per_block = cap >= 32 ? cap / 32 * 32 : cap;
  }
  return fit_policy(forced, request.work);
}

}  // namespace detail
}  // namespace cuact
