/// \file
/// The launch model: grid, block and vectors in flight per thread, from the device the call runs
/// on and the kernel instantiation it launches. No per-GPU table.
///
/// The model (the benchmark's --shapes, --family and --headline modes measure it):
/// - **One pass.** The grid covers the work once. Grid-stride threads that iterate many times fall
///   behind the copy ceiling, so the loop is there for correctness under any grid (users' own
///   launches), not for speed.
/// - **Bytes in flight.** A memory-bound kernel reaches the copy ceiling when each SM keeps about
///   bandwidth / SMs x latency bytes of loads in flight (Little's law; CUB's sm_90 tuning encodes
///   the same per device). The bandwidth comes from the device's
///   memory clock and bus width, the SM count from the device, and the resident threads per SM
///   from the occupancy API for this very kernel instantiation, so a functor that needs many
///   registers (fewer resident threads) gets more vectors per thread. Each thread issues all its
///   loads before it computes (detail/kernels/elementwise.cuh), so
///   vectors_per_thread = ceil(target bytes / (resident threads x bytes one vector set loads)).
///   Registers come first: where the kernel compiled for two vectors holds fewer resident blocks
///   than the same op compiled for one, the one-vector kernel is launched instead
///   (kernels/elementwise.cuh: one_vector_op; the heavy forwards, whose two-vector kernels need
///   more registers).
/// - **Compute cost.** An operation that spends tens of instructions per element hides its
///   arithmetic behind the loads of its other vectors, so it gets at least two vectors per
///   thread where its kernel holds as many resident blocks with two as with one (else one, as
///   above: more threads hide it better than more vectors) and where neither its data nor the
///   device's budget takes one (a declared-heavy op on 16-bit data runs one vector on every
///   device unless its traits say `has_long_16bit_math`, one on float data where the budget is
///   roomy, or where its traits say `has_short_float_math`: dispatch.cuh,
///   heavy_runs_one_vector); where the device's instruction
///   budget per element (SMs x clock x 128 lanes over elements per second at full bandwidth) is
///   under instruction_bound_budget_per_array for each array an element is read from or written
///   to, it is instruction-bound, and each thread makes two passes (16-bit forwards on devices
///   whose budget is tight). The cost is the activation's `cost` hint (tuning_traits) when it
///   has one; a forward declared `cost::compute_bound` (gelu's) counts as instruction-bound
///   below compute_bound_budget_per_array, which takes in fp32 only where the float budget is
///   tight. An operation without the hint is taken as heavy and makes two passes (a wrong guess
///   costs a cheap op little, a right one gains much more: see model_launch_shape), except where
///   heavy math on its data has room (16-bit or float data where the budget is roomy): there it
///   takes a declared-heavy op's launch, one vector in one pass (estimate_takes_heavy_launch).
/// - **Block size.** 128 threads (PyTorch's); for a one-pass, one-vector operation over three
///   arrays whose kernel fills every thread slot of an SM either way and is not capped as below,
///   a light one on 16-bit or float data runs 384-thread blocks capped to hold somewhat more than
///   the bytes in flight above (moderated_resident_blocks), any other 1024
///   (wide_threads_per_block).
/// - **Too many loads in flight.** One of those (a heavy one where its budget is roomy) whose
///   loads in flight at full residency oversubscribe the device's memory (well above the bytes
///   in flight above: oversubscribed_loads_in_flight) runs 128-thread blocks capped to fewer
///   resident blocks per SM by dynamic shared memory it does not use, fewer for a light one than
///   for a heavy one, whose math needs the threads (throttled_resident_blocks).
/// - **Bulk tiles.** A one-input forward, light or heavy with `gains_from_bulk_tiles` (tuning_traits), on
///   16-bit, float or double data where the budget is roomy runs as bulk tiles instead
///   (kernels/bulk_tile.cuh: each block copies its one tile into shared memory by cp.async.bulk,
///   as CUB's sm_90 path does): takes_bulk_tiles.
/// - **Little work.** Below four waves of resident threads (is_little_work), one vector per thread
///   in one pass, so every SM gets work.
/// - **Tabulated bf16 forwards** (kernels/table.cuh). A bf16 forward without a cost hint (a user's
///   plainly written functor) over at least tabulated_min_elements elements is looked up from a
///   table of the functor's own results instead of computed: about twenty issued instructions per
///   element whatever the functor, so neither the cost estimate nor the passes above apply. Each
///   block copies the 16 KiB table into shared memory before its first lookup; where the device's
///   budget is tight for a bf16 forward (as above) blocks are
///   smaller and make more passes, so that copy is paid for more data (see
///   tabulated_launch_shape). Built-in activations, which declare a hint, keep their direct path:
///   at the copy ceiling already, and ahead of the table below 2^28 elements.
/// - **Tabulated bf16 -> fp8 quantizes** (kernels/table.cuh: bf16_table_quantize_op). From the
///   same size, a functor without a hint quantizing bf16 to fp8 looks its float result up in a
///   32 KiB table (tabulates): one fixed shape on every device, 512-thread blocks in 32 passes
///   (fused_dispatch.cuh: tabulated_quantize_passes).
/// - Everything read from the device is cached per device (and per kernel instantiation for
///   occupancy) in atomics: concurrent calls from many host threads on many devices take no lock
///   (but for a tabulated forward's table buffer: dispatch.cuh, get_table_buffer).
#pragma once

#ifndef __CUDACC_RTC__
#include <atomic>  // host-only: the caches of device and kernel facts
#endif
#include <cuda/std/climits>
#include <cuda/std/cstddef>
#include <cuda/std/type_traits>

#include "config.cuh"
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

/// Devices with cached facts; calls on devices beyond this query the runtime every time.
inline constexpr int max_cached_devices = 64;

/// Time a load is in flight, memory latency plus queueing at full bandwidth: the factor between
/// bandwidth per SM and the bytes in flight per SM that reach it. Fitted so that it predicts where one 16-byte vector per thread is enough to reach the copy
/// ceiling (a full SM of threads) and where a second is needed (fewer resident threads).
inline constexpr double load_latency_seconds = 0.8e-6;

/// The bytes in flight per SM that reach `device`'s bandwidth: bandwidth per SM x
/// load_latency_seconds.
inline double target_bytes_in_flight_per_sm(const device_facts& device) {
  return device.bytes_per_second / device.sm_count * load_latency_seconds;
}

/// Issued instructions per element, for each array the element is read from or written to, below
/// which a compute-heavy operation is instruction-bound: then each thread makes two grid-stride
/// passes, which halves the per-thread fixed cost (index and parameter setup) per element. Per
/// array because an element's own work grows with its arrays (a load or a store and a conversion
/// each; a backward's two inputs come with a derivative and a product) while the budget grows with
/// its bytes. 16 per array (32 for a unary op, 48 for a backward) is where two passes stop
/// paying: below it the per-thread fixed cost limits issue, above it the extra pass costs more.
inline constexpr double instruction_bound_budget_per_array = 16;

/// As instruction_bound_budget_per_array, for a forward declared compute-bound (activation.cuh:
/// `cost::compute_bound`) on float data (4 bytes or more per array: the hint describes the float
/// forward; 16-bit data take the heavy rule above). 32 per array (64 for a unary op) takes in a
/// tight fp32 budget and leaves out a roomy one. There each thread makes the
/// activation's `compute_bound_passes` grid-stride passes (tuning_traits;
/// default_compute_bound_passes unless specialised). Why: on a device whose float budget
/// is that tight, a long float forward in one pass leaves the copy ceiling for want of issue
/// slots, and splitting its work over passes restores it; where the budget is roomy one pass is
/// as fast, and 16-bit data (half the bytes) is better served by the heavy rule.
inline constexpr double compute_bound_budget_per_array = 32;

/// Threads per block: PyTorch's choice for elementwise kernels. Small blocks reach the copy
/// ceiling where large ones lose to block turnover at the end of the grid.
inline constexpr unsigned threads_per_block = 128;

/// Threads per block of a one-pass, one-vector operation over three arrays (a backward's two
/// inputs and its output; more arrays were not measured) whose kernel keeps every thread slot of
/// an SM filled at threads_per_block, for a heavy one only where the budget leaves its math room
/// (budget_is_roomy_for_float_math), and where its resident blocks are not capped
/// (throttled_resident_blocks, where loads oversubscribe the memory, nor
/// moderated_resident_blocks, for light ops where they do not): there 1024-thread blocks, the
/// same resident threads in an eighth of the blocks, which cuts block turnover. A heavy op whose
/// budget is tight needs the latency hiding of more, smaller blocks, and two-array forwards lose
/// with wide blocks, hence the conditions.
inline constexpr unsigned wide_threads_per_block = 1024;

/// Loads in flight per SM, as a multiple of target_bytes_in_flight_per_sm, above which a light
/// one-pass, one-vector operation over three arrays gets its resident blocks capped
/// (throttled_resident_blocks): 2.5, which separates backwards whose loads at full residency
/// oversubscribe the memory system from those whose loads it serves.
inline constexpr double oversubscribed_loads_in_flight = 2.5;

/// The multiple of target_bytes_in_flight_per_sm a capped operation keeps in flight per SM (see
/// oversubscribed_loads_in_flight): 2. Why: with
/// more loads in flight than the memory system serves, requests queue and the L1 that holds them
/// thrashes; capping residency (by dynamic shared memory the kernel does not use) avoids that.
/// Fewer blocks than this starve the loads. Forwards (two arrays) stay below the bound and are
/// not capped, nor are backwards on devices whose target is high enough.
inline constexpr double throttled_loads_in_flight = 2;

/// As throttled_loads_in_flight, for a heavy operation (where the budget leaves its math room,
/// budget_is_roomy_for_float_math; elsewhere it is neither capped nor wide): 2.75. Its math needs more threads than a light op's to hide
/// its latency, so the cap is looser: tighter caps starve the longest backwards (silu, gelu,
/// mish, softplus), no cap oversubscribes the loads as for light ones.
inline constexpr double throttled_heavy_loads_in_flight = 2.75;

/// Threads per block of a light one-pass, one-vector operation over three arrays of 16-bit, float
/// or double data whose kernel fills the SM and whose loads in flight do not oversubscribe the
/// device's memory (throttled_resident_blocks leaves it uncapped);
/// with moderated_loads_in_flight, the cap it runs under (moderated_resident_blocks). Such an op
/// would otherwise take 1024-thread blocks (wide_threads_per_block). Why: where the loads do not
/// oversubscribe the memory system, moderately sized blocks under a residency cap keep enough
/// bytes in flight while leaving L1 room for them, which beat both wide uncapped blocks and
/// smaller capped ones in --family. Not where the loads oversubscribe (throttled_resident_blocks
/// serves those better), nor for heavy ops (not one-pass three-array launches where this
/// applies); double data follows float's rule; casts (float in, 16-bit out) were not measured.
inline constexpr unsigned moderated_threads_per_block = 384;
/// See moderated_threads_per_block: the multiple of target_bytes_in_flight_per_sm kept in flight,
/// rounded up to whole blocks.
inline constexpr double moderated_loads_in_flight = 1.5;

/// The default limit of dynamic shared memory per block (a launch above it needs an opt-in
/// attribute): a residency cap that would need more is not applied.
inline constexpr cuda::std::size_t default_dynamic_shared_limit = 48 * 1024;

/// Threads per block of a tabulated forward where the device's budget is not tight: each block
/// copies the 16 KiB table into shared memory before it starts, so blocks four times PyTorch's size
/// pay that copy for four times the work; larger blocks or more passes lost.
inline constexpr unsigned tabulated_threads_per_block = 512;

/// Threads per block and passes of a tabulated forward where the device's budget for a bf16
/// forward is tight (instruction_bound_budget_per_array). There the lookups and
/// the table's copy leave no issue slots idle for the copy of one block to hide behind the others'
/// loads, so smaller blocks that each make several passes amortise the copy instead. The same
/// shape costs a little on a device whose budget is not tight, hence the two shapes.
inline constexpr unsigned tabulated_tight_threads_per_block = 256;
/// See tabulated_tight_threads_per_block.
inline constexpr unsigned tabulated_tight_passes = 4;

/// Elements from which a bf16 forward is tabulated. Each call fills its table first (a kernel of
/// 8192 evaluations, overlapped with the lookups' start), so the table wins only where that is
/// small against the data's time; below this size computing directly was faster or as fast.
inline constexpr cuda::std::size_t tabulated_min_elements = cuda::std::size_t(1) << 27;

// Host-only: the queries of the device and kernel (NVRTC compiles device code).
#ifndef __CUDACC_RTC__
/// Clears an error the runtime recorded for a failed query, so the caller gets it once, returned.
inline cudaError_t returned(cudaError_t status) {
  if (status != cudaSuccess) cudaGetLastError();
  return status;
}

inline cudaError_t query_device_facts(int device, device_facts& facts) {
  int memory_clock_khz = 0;
  int bus_width_bits = 0;
  int sm_clock_khz = 0;
  cudaError_t status =
      cudaDeviceGetAttribute(&facts.sm_count, cudaDevAttrMultiProcessorCount, device);
  if (status == cudaSuccess) {
    status = cudaDeviceGetAttribute(&facts.max_threads_per_sm,
                                    cudaDevAttrMaxThreadsPerMultiProcessor, device);
  }
  if (status == cudaSuccess) {
    status = cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, device);
  }
  if (status == cudaSuccess) {
    status = cudaDeviceGetAttribute(&bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, device);
  }
  if (status == cudaSuccess) {
    status = cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, device);
  }
  if (status == cudaSuccess) {
    status = cudaDeviceGetAttribute(&facts.shared_bytes_per_sm,
                                    cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
  }
  if (status == cudaSuccess) {
    status = cudaDeviceGetAttribute(&facts.reserved_shared_bytes_per_block,
                                    cudaDevAttrReservedSharedMemoryPerBlock, device);
  }
  facts.sm_clock_hz = sm_clock_khz > 0 ? sm_clock_khz * 1e3 : 1.5e9;
  // Double data rate: two transfers per clock. A device that reports no memory clock (some
  // virtualized or integrated ones) is modelled at 2 TB/s, a mid-range datacenter figure.
  facts.bytes_per_second = memory_clock_khz > 0 && bus_width_bits > 0
                               ? 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8.0)
                               : 2e12;
  return returned(status);
}

/// The facts of `device`, queried once per device and process.
inline cudaError_t get_device_facts(int device, device_facts& facts) {
  struct cached {
    std::atomic<int> sm_count{0};  // 0: not queried yet
    std::atomic<int> max_threads_per_sm{0};
    std::atomic<double> bytes_per_second{0};
    std::atomic<double> sm_clock_hz{0};
    std::atomic<int> shared_bytes_per_sm{0};
    std::atomic<int> reserved_shared_bytes_per_block{0};
  };
  static cached cache[max_cached_devices];
  if (device < 0 || device >= max_cached_devices) return query_device_facts(device, facts);
  cached& slot = cache[device];
  if (const int sm_count = slot.sm_count.load(std::memory_order_acquire); sm_count != 0) {
    facts = {sm_count,
             slot.max_threads_per_sm.load(std::memory_order_relaxed),
             slot.bytes_per_second.load(std::memory_order_relaxed),
             slot.sm_clock_hz.load(std::memory_order_relaxed),
             slot.shared_bytes_per_sm.load(std::memory_order_relaxed),
             slot.reserved_shared_bytes_per_block.load(std::memory_order_relaxed)};
    return cudaSuccess;
  }
  // Racing first calls each query and store the same values.
  if (const cudaError_t status = query_device_facts(device, facts); status != cudaSuccess) {
    return status;
  }
  slot.max_threads_per_sm.store(facts.max_threads_per_sm, std::memory_order_relaxed);
  slot.bytes_per_second.store(facts.bytes_per_second, std::memory_order_relaxed);
  slot.sm_clock_hz.store(facts.sm_clock_hz, std::memory_order_relaxed);
  slot.shared_bytes_per_sm.store(facts.shared_bytes_per_sm, std::memory_order_relaxed);
  slot.reserved_shared_bytes_per_block.store(facts.reserved_shared_bytes_per_block,
                                             std::memory_order_relaxed);
  slot.sm_count.store(facts.sm_count, std::memory_order_release);
  return cudaSuccess;
}
#endif  // __CUDACC_RTC__

/// What the launch model reads of one kernel instantiation on one device.
struct kernel_facts {
  int resident_blocks_per_sm;  ///< at threads_per_block threads, from the occupancy API
  int registers_per_thread;
  /// The architecture of the code the device runs the kernel from (90: sm_90; 0: not queried).
  int binary_version = 0;
  int local_bytes_per_thread = 0;  ///< local memory (register spills, local arrays)
};

#ifndef __CUDACC_RTC__
/// Kernels whose facts are cached per parameter type and device: a parameter type may serve more
/// than one kernel (the bias backward's stage 1, compiled twice: kernels/column_sum.cuh).
inline constexpr int kernels_cached_per_params = 2;

/// The facts of `kernel` on `device`, queried once per kernel, device and process (a third kernel
/// of the same parameter type is queried on every call).
template <class Params>
cudaError_t get_kernel_facts(void (*kernel)(Params), int device, kernel_facts& facts) {
  // A slot is claimed by its kernel's address, filled, then published by its block count (0: not
  // yet; a thread that finds it so queries the runtime itself, with the same result).
  struct slot {
    std::atomic<const void*> kernel;
    std::atomic<int> values[4];  // {blocks, registers, binary version, local bytes}
  };
  static slot cache[max_cached_devices][kernels_cached_per_params];
  const void* const id = reinterpret_cast<const void*>(kernel);
  slot* mine = nullptr;
  if (device >= 0 && device < max_cached_devices) {
    for (slot& candidate : cache[device]) {
      const void* holder = candidate.kernel.load(std::memory_order_acquire);
      if (holder == nullptr &&
          candidate.kernel.compare_exchange_strong(holder, id, std::memory_order_acq_rel)) {
        holder = id;  // claimed (a failed exchange leaves the slot's kernel in holder)
      }
      if (holder == id) {
        mine = &candidate;
        break;
      }
    }
  }
  if (mine != nullptr) {
    const int blocks = mine->values[0].load(std::memory_order_acquire);
    if (blocks != 0) {
      facts = {blocks, mine->values[1].load(std::memory_order_relaxed),
               mine->values[2].load(std::memory_order_relaxed),
               mine->values[3].load(std::memory_order_relaxed)};
      return cudaSuccess;
    }
  }
  cudaFuncAttributes attributes{};
  cudaError_t status = cudaFuncGetAttributes(&attributes, kernel);
  if (status == cudaSuccess) {
    status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&facts.resident_blocks_per_sm, kernel,
                                                           static_cast<int>(threads_per_block), 0);
  }
  if (status != cudaSuccess) return returned(status);
  facts.registers_per_thread = attributes.numRegs;
  facts.binary_version = attributes.binaryVersion;
  facts.local_bytes_per_thread = static_cast<int>(attributes.localSizeBytes);
  if (facts.resident_blocks_per_sm < 1) facts.resident_blocks_per_sm = 1;
  if (mine != nullptr) {
    mine->values[1].store(facts.registers_per_thread, std::memory_order_relaxed);
    mine->values[2].store(facts.binary_version, std::memory_order_relaxed);
    mine->values[3].store(facts.local_bytes_per_thread, std::memory_order_relaxed);
    mine->values[0].store(facts.resident_blocks_per_sm, std::memory_order_release);
  }
  return cudaSuccess;
}

#endif  // __CUDACC_RTC__

/// Whether a bf16 forward, or a bf16 -> fp8 quantize, over n elements with this cost hint is
/// tabulated (kernels/table.cuh: the forward's table of bf16 results, the quantize's of float
/// ones, bf16_table_quantize_op): a functor without a hint, over at least tabulated_min_elements
/// elements. Why: the table's cost does not depend on the functor, so it bounds an unhinted
/// functor's cost, where computing a long plain functor directly may fall far below the copy
/// ceiling. Built-in activations declare their cost and compute directly (their direct quantize
/// in 16-element vectors reaches the ceiling; fused_dispatch.cuh: run_quantize).
inline constexpr bool tabulates(cost_hint hint, cuda::std::size_t n) {
  return hint == cost_hint::estimate && n >= tabulated_min_elements;
}

/// One launch's shape.
struct launch_shape {
  unsigned blocks;
  unsigned threads_per_block;
  unsigned vectors_per_thread;
  unsigned passes;  ///< grid-stride steps per thread (the grid covers the work in this many)
  bool heavy;       ///< what the model took the operation to be (for benchmarks' reports)
  /// Dynamic shared memory per block, unused by the kernel: it caps the blocks resident per SM
  /// (throttled_resident_blocks, moderated_resident_blocks); 0 for none.
  cuda::std::size_t dynamic_shared_bytes = 0;
};

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
inline constexpr double little_work_waves = 4;
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

/// The model itself, a pure function of what was observed (so the CPU tests can run every shape
/// it can produce). `vectors` is the number of full vectors, `scalars` head + tail,
/// `vector_load_bytes` what one thread loads per vector of all inputs, `bytes_per_element` what
/// an element moves (inputs read plus outputs written) and `arrays_per_element` in how many arrays
/// (the inputs and outputs it is read from or written to), `max_vectors_per_thread` the kernel's
/// cap, `compute_bound_passes` the passes of a compute-bound float forward where tight,
/// `min_vectors_per_thread` a floor on the vectors in flight where the work fills the GPU (a walk
/// over rows keeps its rows in flight: rows_params).
inline launch_shape model_launch_shape(const device_facts& device, const kernel_facts& kernel,
                                       cost_hint hint, cuda::std::size_t vectors,
                                       cuda::std::size_t scalars,
                                       cuda::std::size_t vector_load_bytes,
                                       cuda::std::size_t bytes_per_element,
                                       unsigned arrays_per_element, unsigned max_vectors_per_thread,
                                       unsigned compute_bound_passes = default_compute_bound_passes,
                                       unsigned min_vectors_per_thread = 1) {
  // An operation that does not declare its cost is taken as heavy, with two passes even where
  // the budget is not tight: nothing observable (registers included) tells a plain user functor
  // with log1p(exp(x)) from a copy-like one, and where the fp32 budget is tight such functors
  // fall short of the copy ceiling in one vector and one pass but not in two and two. Declared
  // heavy ops make two passes only where the budget is tight, since elsewhere the second pass
  // costs them. Where heavy math has room, an op without a hint takes a declared-heavy op's
  // launch instead (estimate_takes_heavy_launch).
  const bool compute_bound =
      hint == cost_hint::compute_bound && is_float_data(bytes_per_element, arrays_per_element);
  const double bound_per_array =
      compute_bound ? compute_bound_budget_per_array : instruction_bound_budget_per_array;
  const bool tight =
      budget_is_tight(device, bytes_per_element, arrays_per_element, bound_per_array);
  const bool estimated = hint == cost_hint::estimate;
  const bool heavy = hint == cost_hint::heavy || hint == cost_hint::compute_bound || estimated;
  const double resident_threads =
      static_cast<double>(kernel.resident_blocks_per_sm) * threads_per_block;
  const double target_bytes = target_bytes_in_flight_per_sm(device);
  unsigned k = static_cast<unsigned>(target_bytes / (resident_threads * vector_load_bytes) + 0.999);
  if (heavy && k < 2) k = 2;
  if (k < min_vectors_per_thread) k = min_vectors_per_thread;
  const bool estimated_passes =
      estimated && !estimate_takes_heavy_launch(device, bytes_per_element, arrays_per_element);
  unsigned passes = heavy && (tight || estimated_passes) ? 2 : 1;
  if (compute_bound && tight && compute_bound_passes > passes) passes = compute_bound_passes;
  const double wave = resident_threads * device.sm_count;
  const bool little_work = is_little_work(vectors, wave);
  if (little_work) {  // spread it over every SM
    k = 1;
    passes = 1;
  }
  k = k < 1 ? 1 : (k > max_vectors_per_thread ? max_vectors_per_thread : k);
  // At least one wave of resident threads: passes beyond that would leave SMs without work. It
  // binds where vectors per thread x passes exceed the waves of work, so above the little-work
  // threshold (little_work_waves) only for more than four of them per thread: two vectors in
  // gelu's four passes, a walk's rows in flight times its passes, more than four declared passes
  const double full_waves = static_cast<double>(vectors) / (wave * k);
  if (passes > 1 && static_cast<double>(passes) > full_waves) {
    passes = full_waves < 1 ? 1u : static_cast<unsigned>(full_waves);
  }
  const cuda::std::size_t vector_threads =
      (vectors + cuda::std::size_t(k) * passes - 1) / (cuda::std::size_t(k) * passes);
  const cuda::std::size_t threads = vector_threads > scalars ? vector_threads : scalars;
  // A one-pass, one-vector op over three arrays whose kernel fills the SM, a heavy one only where
  // the budget leaves its math room: capped to fewer resident blocks where its loads in flight
  // oversubscribe the device's memory (throttled_resident_blocks), else moderated (below) or
  // wide blocks (wide_threads_per_block)
  const bool fills_sm = resident_threads >= static_cast<double>(device.max_threads_per_sm);
  const bool one_pass_of_three =
      arrays_per_element == 3 && k == 1 && passes == 1 && fills_sm && !little_work &&
      (!heavy || budget_is_roomy_for_float_math(device, bytes_per_element, arrays_per_element));
  const cuda::std::size_t throttle_bytes =
      one_pass_of_three
          ? shared_bytes_for_resident_blocks(
                device, throttled_resident_blocks(device, kernel, vector_load_bytes, heavy))
          : 0;
  // A light one on 16-bit, float or double data that is not throttled: moderated blocks, capped
  // (moderated_resident_blocks), where the device's shared memory allows the cap
  const bool moderated = one_pass_of_three && throttle_bytes == 0 && !heavy &&
                         (is_half_data(bytes_per_element, arrays_per_element) ||
                          is_single_float_data(bytes_per_element, arrays_per_element) ||
                          is_double_data(bytes_per_element, arrays_per_element));
  const cuda::std::size_t moderate_bytes =
      moderated ? shared_bytes_for_resident_blocks(
                      device, moderated_resident_blocks(device, vector_load_bytes))
                : 0;
  const bool wide = one_pass_of_three && throttle_bytes == 0 && moderate_bytes == 0;
  const unsigned block = moderate_bytes != 0 ? moderated_threads_per_block
                         : wide              ? wide_threads_per_block
                                             : threads_per_block;
  const cuda::std::size_t cap_bytes = moderate_bytes != 0 ? moderate_bytes : throttle_bytes;
  return {grid_blocks(threads, block), block, k, passes, heavy, cap_bytes};
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
  return fixed_launch_shape(vectors, scalars, block,
                            max_vectors_per_thread < 2 ? max_vectors_per_thread : 2, passes);
}

/// Threads per block of a bulk-tile launch (kernels/bulk_tile.cuh), the vectors of each tile:
/// CUB's sm_90 tile: one vector per thread beat two or four per thread in tiles of the same bytes.
inline constexpr unsigned bulk_tile_threads_per_block = 256;

/// Which launches run as bulk tiles: 0 none, 1 those the model picks (takes_bulk_tiles), 2 every
/// one-input, one-output launch that fits and is not small work, whatever its data, cost and
/// device (for measuring the rule, not for use).
#ifndef CUACT_BULK_TILES
#define CUACT_BULK_TILES 1
#endif

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
  if (CUACT_BULK_TILES == 0 || bulk_kernel.binary_version < 90 || arrays_per_element != 2 ||
      is_little_work(vectors, full_sm_wave) || !grid_holds(vectors, bulk_tile_threads_per_block)) {
    return false;
  }
  if (CUACT_BULK_TILES == 2) return true;
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
          staging_bytes};
}

// Host-only: the launch.
#ifndef __CUDACC_RTC__
/// The device's facts and the kernel's on it (both cached), what a launch shape is modelled from.
template <class Params>
cudaError_t get_launch_facts(void (*kernel)(Params), int device, device_facts& device_info,
                             kernel_facts& kernel_info) {
  if (const cudaError_t status = get_device_facts(device, device_info); status != cudaSuccess) {
    return status;
  }
  return get_kernel_facts(kernel, device, kernel_info);
}

/// Reads the device's and the kernel's facts (cached) and returns the modelled shape.
template <class Params>
cudaError_t choose_launch_shape(void (*kernel)(Params), int device, cost_hint hint,
                                cuda::std::size_t vectors, cuda::std::size_t scalars,
                                cuda::std::size_t vector_load_bytes,
                                cuda::std::size_t bytes_per_element, unsigned arrays_per_element,
                                unsigned max_vectors_per_thread, launch_shape& shape,
                                unsigned compute_bound_passes = default_compute_bound_passes,
                                unsigned min_vectors_per_thread = 1) {
  device_facts device_info{};
  kernel_facts kernel_info{};
  if (const cudaError_t status = get_launch_facts(kernel, device, device_info, kernel_info);
      status != cudaSuccess) {
    return status;
  }
  shape = model_launch_shape(device_info, kernel_info, hint, vectors, scalars, vector_load_bytes,
                             bytes_per_element, arrays_per_element, max_vectors_per_thread,
                             compute_bound_passes, min_vectors_per_thread);
  return cudaSuccess;
}

/// Launches kernel(params) on `grid` blocks of `threads_per_block`, with `dynamic_shared_bytes` of
/// dynamic shared memory per block (tabulated_kernel's table, or a residency cap the kernel does
/// not read: throttled_resident_blocks); returns the launch's status.
/// `overlap_previous`: the kernel may start while the stream's previous kernel runs (programmatic
/// dependent launch, sm_90 on); it must wait for it (`griddepcontrol.wait`) before reading what
/// that kernel writes.
template <class Params>
cudaError_t launch_kernel_grid(void (*kernel)(Params), const Params& params, dim3 grid,
                               unsigned threads_per_block, cudaStream_t stream,
                               cuda::std::size_t dynamic_shared_bytes = 0,
                               bool overlap_previous = false) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = dim3(threads_per_block);
  config.dynamicSmemBytes = dynamic_shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  if (overlap_previous) {
    config.attrs = &overlap;
    config.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&config, kernel, params);
}

/// Launches kernel(params) with `shape` (a 1-D grid); returns the launch's status.
template <class Params>
cudaError_t launch_kernel(void (*kernel)(Params), const Params& params, const launch_shape& shape,
                          cudaStream_t stream) {
  return launch_kernel_grid(kernel, params, dim3(shape.blocks), shape.threads_per_block, stream,
                            shape.dynamic_shared_bytes);
}

#endif  // __CUDACC_RTC__

}  // namespace detail
}  // namespace cuact
