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
///   plainly written functor) over at least tabulated_min_elements elements, where measured faster
///   than direct math (table_measure.cuh), is looked up from a table of the functor's own results
///   instead of computed: about twenty issued instructions per
///   element whatever the functor, so neither the cost estimate nor the passes above apply. Each
///   block copies the 16 KiB table into shared memory before its first lookup; where the device's
///   budget is tight for a bf16 forward (as above) blocks are
///   smaller and make more passes, so that copy is paid for more data (see
///   tabulated_launch_shape). Built-in activations, which declare a hint, keep their direct path:
///   at the copy ceiling already, and ahead of the table below 2^28 elements.
/// - **Tabulated bf16 -> fp8 quantizes** (kernels/table.cuh: bf16_table_quantize_op). From the
///   same size, a functor without a hint quantizing bf16 to fp8 looks its float result up in a
///   32 KiB table (tabulates; measured as the forward): one fixed shape on every device, 512-thread blocks in 32 passes
///   (tuning_table.cuh: tabulated_quantize_passes).
/// - Everything read from the device is cached per device (and per kernel instantiation for
///   occupancy) in atomics: concurrent calls from many host threads on many devices take no lock
///   (but for a tabulated forward's table buffer: dispatch.cuh, get_table_buffer).
#pragma once

#ifndef __CUDACC_RTC__
#include <atomic>  // host-only: the caches of device and kernel facts
#endif
#include <cuda/std/climits>
#include <cuda/std/cstddef>

#include "std.cuh"
#include "config.cuh"
#include "policy.cuh"
#include "tuning_traits.cuh"

namespace cuact {
namespace detail {

/// Devices with cached facts; calls on devices beyond this query the runtime every time.
inline constexpr int max_cached_devices = 64;

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
  facts.sm_clock_hz = sm_clock_khz > 0 ? sm_clock_khz * 1e3 : unknown_device_sm_clock_hz;
  // Double data rate: two transfers per clock (unknown_device_bytes_per_second where the device
  // reports neither).
  facts.bytes_per_second = memory_clock_khz > 0 && bus_width_bits > 0
                               ? 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8.0)
                               : unknown_device_bytes_per_second;
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
    std::atomic<int> values[5];  // {blocks, registers, binary version, local bytes, max threads}
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
               mine->values[3].load(std::memory_order_relaxed),
               mine->values[4].load(std::memory_order_relaxed)};
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
  facts.max_threads_per_block = attributes.maxThreadsPerBlock;
  if (facts.resident_blocks_per_sm < 1) facts.resident_blocks_per_sm = 1;
  if (mine != nullptr) {
    mine->values[1].store(facts.registers_per_thread, std::memory_order_relaxed);
    mine->values[2].store(facts.binary_version, std::memory_order_relaxed);
    mine->values[3].store(facts.local_bytes_per_thread, std::memory_order_relaxed);
    mine->values[4].store(facts.max_threads_per_block, std::memory_order_relaxed);
    mine->values[0].store(facts.resident_blocks_per_sm, std::memory_order_release);
  }
  return cudaSuccess;
}

#endif  // __CUDACC_RTC__

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

}  // namespace detail

namespace detail {
/// The calling thread's selector (scoped_policy): one per host thread, so concurrent callers on
/// other threads keep select_policy's choices.
inline policy_selector& current_policy_selector() {
  thread_local policy_selector selector;
  return selector;
}
/// The selector of a fixed policy (scoped_policy(const policy&)): its context is the policy.
inline policy fixed_policy_selector(const policy_request&, const policy&, const void* context) {
  return *static_cast<const policy*>(context);
}
}  // namespace detail

/// Overrides the launch policy of every cuact call the calling host thread makes while it lives
/// (forward, backward, transform, the row-wise gated and bias ops, the ReLU mask's forward and
/// backward, the bias backward's first stage, the quantize: each modelled launch), then restores
/// the one before it. Nested overrides stack. A fixed policy keeps its threads per block, vectors per
/// thread (capped at the kernel's), passes, residency cap and algorithm; its blocks, where 0,
/// cover the work once (fit_policy). algorithm::bulk_tiles is taken where the launch can run so
/// (one input and one output of 16-bit, float or double data, sm_90, an op whose traits allow
/// bulk tiles: dispatch.cuh, may_take_bulk_tiles_v); algorithm::elementwise keeps a launch off
/// bulk tiles. Not reached, each for a reason: the tabulated bf16 forward and quantize (each block
/// copies a table first, so their shapes are fixed: tuning_table.cuh), the table's fill kernel, the
/// bias backward's second stage (a thread per column summing the partial sums), and the choices
/// between kernels (the flat bias pass or the row walk, the one-vector instantiation, the bias
/// gradient's capped kernel, except that a block above its launch bounds runs the other).
///
///     cuact::scoped_policy forced{cuact::policy{0, 256, 2, 1, true}};
///     cuact::forward(cuact::silu{}, x, y, n, stream);  // 256-thread blocks, 2 vectors, 1 pass
class scoped_policy {
 public:
  /// Installs `selector`.
  explicit scoped_policy(policy_selector selector) : previous_(detail::current_policy_selector()) {
    detail::current_policy_selector() = selector;
  }
  /// Installs a selector that returns `forced` for every launch.
  explicit scoped_policy(const policy& forced)
      : previous_(detail::current_policy_selector()), forced_(forced) {
    detail::current_policy_selector() = {detail::fixed_policy_selector, &forced_};
  }
  scoped_policy(const scoped_policy&) = delete;
  scoped_policy& operator=(const scoped_policy&) = delete;
  /// Restores the selector installed before this one.
  ~scoped_policy() { detail::current_policy_selector() = previous_; }

 private:
  policy_selector previous_;
  policy forced_{};
};

namespace detail {

/// Whether the calling thread runs under a scoped_policy.
inline bool policy_overridden() { return current_policy_selector().select != nullptr; }

/// Reads the device's and the kernel's facts (cached) and returns the modelled shape, or the
/// calling thread's scoped_policy's (fitted to the problem: fit_policy).
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
  const policy_request request{
      device_info,
      kernel_info,
      {hint, compute_bound_passes},
      {vectors, scalars, vector_load_bytes, bytes_per_element, arrays_per_element,
       max_vectors_per_thread, min_vectors_per_thread}};
  shape = selected_policy(current_policy_selector(), request,
                          select_policy(request.device, request.kernel, request.op, request.work));
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
