/// \file
/// Tabulated bf16 forwards: the activation evaluated once for every bf16 input in a window of
/// magnitudes, the results looked up from shared memory by the elementwise per-thread body.
///
/// Why: a bf16 forward moves 4 bytes per element, so the copy ceiling leaves only a few tens of
/// issued instructions per element (launch.cuh: instruction_budget), and an activation with
/// accurate transcendental math (a user's `log1p(exp(x))`) can spend more. A lookup costs about
/// ten, whatever the activation. The table holds what the activation
/// itself returns for each input, rounded to bf16 as the direct path rounds it, so a tabulated
/// forward writes the very bits a direct one does (tests: cpu_grid's exhaustive comparison on the
/// host, gpu_table's on the device).
///
/// The lookups work on the input's storage words as loaded (the op takes the held vector,
/// elementwise.cuh: takes_held_vector): widened to float, taken apart for the slot and rounded
/// back, the same lookup costs about half as many instructions again and falls below the copy
/// ceiling.
///
/// The window: every |x| in [2^-20, 2^12) (exponent fields 107..138), and +-0: 8194 entries, 16
/// KiB, small enough for several blocks per SM (a whole 65536-entry table, 128 KiB, allows one
/// block of long-lived threads and loses to the copy). Activations' inputs sit in that window (a standard normal leaves it with
/// probability about 1e-6); other inputs (larger or tinier magnitudes, infinities, NaN) are
/// computed directly, out of line, in the warps that have one (bf16_table_op::apply_held).
///
/// The same window serves the bf16 -> fp8 quantize (bf16_table_quantize_op, launched by
/// fused_dispatch.cuh): its table keeps the activation's float results (32 KiB), which the amax
/// and the scaling need, and its lookups write the direct quantize's bytes and amax. Its shared-
/// memory loads conflict in banks and its larger table leaves room for fewer threads per SM; both
/// lanes of a word are tested and slotted at once (bf16_table_window::biased_pair) to win back
/// issue slots.
#pragma once

#include <cuda/std/cstddef>
#include <cuda/std/cstdint>

#include "../std.cuh"
#include "../config.cuh"
#include "../numeric.cuh"
#include "elementwise.cuh"

namespace cuact {
namespace detail {

/// Which bf16 inputs a table holds and where: per sign, 32 exponent rows of 128 mantissas from
/// exponent field first_exponent, the positive half first (window_entries); then +0 and -0, and
/// padding to whole 16-byte words. Why the zeros: they are common inputs (ReLU outputs, padding),
/// and a lane computed instead costs its warp both paths: even a small share of zeros would
/// otherwise send most warps down the direct path, while data without zeros lose nothing.
struct bf16_table_window {
  static constexpr unsigned first_exponent = 107;  ///< 2^-20
  static constexpr unsigned exponents = 32;        ///< up to 2^12, exclusive
  static constexpr unsigned mantissas = 128;
  static constexpr unsigned per_sign = exponents * mantissas;
  static constexpr unsigned window_entries = 2 * per_sign;
  static constexpr unsigned zero_slot = window_entries;  ///< +0's entry; -0's follows
  /// Entries of a table of `Entry` values: the window, the zeros and padding to 16 bytes.
  template <class Entry>
  static constexpr unsigned entries_of = window_entries + 16 / sizeof(Entry);
  /// Bytes of a table of `Entry` values (bf16 results: 16 KiB and 16 bytes; float: 32 KiB and 16).
  template <class Entry>
  static constexpr cuda::std::size_t bytes_of = entries_of<Entry> * sizeof(Entry);
  static constexpr cuda::std::size_t bytes =
      bytes_of<cuda::std::uint16_t>;  ///< the bf16 forward's table
  static_assert(per_sign == 0x8000u >> 3, "cuact: slot() moves the sign bit to per_sign's");
  static_assert(bytes % 16 == 0 && bytes_of<float> % 16 == 0,
                "cuact: the table is copied in 16-byte words");

  /// Offset of bf16 bits `b` (in the low 16 bits) from the window's first magnitude: below
  /// per_sign exactly when b is in the window (it wraps for magnitudes below the window).
  CUACT_HOST_DEVICE static unsigned offset(unsigned b) {
    return (b & 0x7fffu) - first_exponent * mantissas;
  }
  /// The entry of bits `b` in the window (offset(b) < per_sign): the negative half second.
  CUACT_HOST_DEVICE static unsigned slot(unsigned b) { return offset(b) | ((b >> 3) & per_sign); }
  /// Whether bf16 bits `b` (in the low 16 bits) are +0 or -0.
  CUACT_HOST_DEVICE static bool is_zero(unsigned b) { return (b & 0x7fffu) == 0; }
  /// The entry of +0 or -0 (bits `b`, 16 bits, is_zero(b)).
  CUACT_HOST_DEVICE static unsigned zero_slot_of(unsigned b) { return zero_slot + (b >> 15); }
  /// Below per_sign exactly when bits `b` (in the low 16 bits) have an entry in a table with the
  /// zeros: offset(b) for the window, 0 for +-0.
  CUACT_HOST_DEVICE static unsigned key_with_zeros(unsigned b) {
    return is_zero(b) ? 0u : offset(b);
  }
  /// The entry of bits `b` (16 bits) in a table with the zeros (key_with_zeros(b) < per_sign).
  CUACT_HOST_DEVICE static unsigned slot_with_zeros(unsigned b) {
    return is_zero(b) ? zero_slot_of(b) : slot(b);
  }
  /// slot_with_zeros(b) where b has an entry, an entry of the window for any other bits: a
  /// lookup that needs no test before it.
  CUACT_HOST_DEVICE static unsigned any_slot_with_zeros(unsigned b) {
    return is_zero(b) ? zero_slot_of(b) : (offset(b) & (per_sign - 1)) | ((b >> 3) & per_sign);
  }
  /// Both lanes of a storage word (lane 2w low) at once: their magnitudes biased so that a lane
  /// in the window reads 0x8000 + its offset in its half (no carry between the halves: 0x7fff
  /// plus the bias stays below 0x10000): one mask and one add serve both lanes' tests and slots,
  /// fewer instructions than lane by lane for the tabulated quantize (with fp8 stored as words,
  /// elementwise.cuh: store_vector).
  static constexpr cuda::std::uint32_t pair_bias =
      (0x8000u - first_exponent * mantissas) * 0x10001u;
  CUACT_HOST_DEVICE static cuda::std::uint32_t biased_pair(cuda::std::uint32_t word) {
    return (word & 0x7fff7fffu) + pair_bias;
  }
  /// Of a biased pair: the bits under low_miss_bits (high_miss_bits) are zero exactly when the low
  /// (high) lane is in the window, a half in [0x8000, 0x9000).
  CUACT_HOST_DEVICE static cuda::std::uint32_t pair_misses(cuda::std::uint32_t biased) {
    return biased ^ 0x80008000u;
  }
  static constexpr cuda::std::uint32_t low_miss_bits = 0x0000f000u;
  static constexpr cuda::std::uint32_t high_miss_bits = 0xf0000000u;
  /// slot() of the low lane of `word` where it is in the window, from its biased pair; an entry of
  /// the window for any bits (so the lookup may come before the test).
  CUACT_HOST_DEVICE static unsigned low_slot(cuda::std::uint32_t word, cuda::std::uint32_t biased) {
    return (biased & 0x0fffu) | ((word >> 3) & per_sign);
  }
  /// slot() of the high lane of `word` where it is in the window; an entry of the window always.
  CUACT_HOST_DEVICE static unsigned high_slot(cuda::std::uint32_t word,
                                              cuda::std::uint32_t biased) {
    return ((biased & 0x0fff0000u) | ((word >> 3) & (per_sign << 16))) >> 16;
  }
  /// The bf16 bits whose entry is `s` (the slots' inverse; the padding entries hold +-0 again).
  CUACT_HOST_DEVICE static unsigned bits_of(unsigned s) {
    if (s >= window_entries) return ((s - zero_slot) & 1u) << 15;
    return ((s / per_sign) << 15) | (s % per_sign + first_exponent * mantissas);
  }
};

/// bf16 bits of op(x) for the input at table entry `s`, rounded as the elementwise path rounds.
#pragma nv_exec_check_disable
template <class Op>
CUACT_HOST_DEVICE cuda::std::uint16_t bf16_table_entry(const Op& op, unsigned s) {
  const float x = cuda::std::bit_cast<float>(bf16_table_window::bits_of(s) << 16);
  const __nv_bfloat16_raw rounded = from_compute<__nv_bfloat16>(op(x));
  return rounded.x;
}

/// The float result of `fn` (a float -> float function) for the input at table entry `s`: the
/// entries of a bf16_table_quantize_op's table.
#pragma nv_exec_check_disable
template <class Fn>
CUACT_HOST_DEVICE float bf16_float_table_entry(const Fn& fn, unsigned s) {
  return fn(cuda::std::bit_cast<float>(bf16_table_window::bits_of(s) << 16));
}

/// The dynamic shared memory of tabulated_kernel and tabulated_quantize_kernel: the table, as the
/// 16-byte words it is copied in.
#if defined(__CUDACC__)
__device__ __forceinline__ uint4* shared_table_words() {
  extern __shared__ uint4 cuact_shared_table_words[];
  return cuact_shared_table_words;
}
#endif

/// Entry `s` of a table: on the device, the block's copy in shared memory (tabulating_access); on
/// the host (the CPU tests' grid simulation), the table at `entries` itself.
template <class Entry>
CUACT_HOST_DEVICE Entry table_entry([[maybe_unused]] const Entry* entries, unsigned s) {
#if defined(__CUDA_ARCH__)
  return reinterpret_cast<const Entry*>(shared_table_words())[s];
#else
  return entries[s];
#endif
}

/// op on bf16 data through the table: each vector's storage words looked up as loaded, and the
/// scalar head and tail element by element (the entry where the table has one, op itself
/// elsewhere, out of line: the kernel's own code and registers are then the same whatever op
/// is). `entries`
/// is the table in global memory (the host simulation reads it there); on the device,
/// tabulated_kernel's shared copy is read instead.
template <class Op>
struct bf16_table_op {
  static constexpr bool takes_held_vector = true;
  Op op;
  const cuda::std::uint16_t* entries;

  /// One element (the scalar head and tail; x is a widened bf16): its entry where the table has
  /// one, op's result computed out of line elsewhere, as the vectors' lanes. The entry is the
  /// bf16 the direct path writes, so widened here it rounds back to the same bits.
  CUACT_HOST_DEVICE float operator()(float x) const {
    const cuda::std::uint32_t b = cuda::std::bit_cast<cuda::std::uint32_t>(x) >> 16;
    const cuda::std::uint32_t bits =
        bf16_table_window::key_with_zeros(b) < bf16_table_window::per_sign
            ? entry(bf16_table_window::slot_with_zeros(b))
            : computed(op, b);
    return cuda::std::bit_cast<float>(bits << 16);
  }

  /// The output words of a vector of `Width` bf16 lanes held as Width / 2 words (lane 2w low):
  /// every lane's entry read with no test (any_slot_with_zeros), the lanes' keys ORed into one
  /// test per vector, and the lanes outside the table computed only where a lane of the warp has
  /// one (any_lane_in_warp). Why the vote: with a test and a branch per lane, the compiler
  /// predicated a short op (a leaky ReLU with a float slope) into the lookup's path, so every
  /// lane issued both; a branch that is the same for the whole warp it keeps, and the common
  /// path is the same few instructions whatever the op.
  template <int Width>
  CUACT_HOST_DEVICE vector_of<cuda::std::uint32_t, Width / 2> apply_held(
      const vector_of<cuda::std::uint32_t, Width / 2>& words) const {
    vector_of<cuda::std::uint32_t, Width / 2> result;
    cuda::std::uint32_t keys = 0;  // per_sign or more exactly when a lane has no entry
    CUACT_UNROLL
    for (int w = 0; w < Width / 2; ++w) {
      const cuda::std::uint32_t low = words.elements[w] & 0xffffu;
      const cuda::std::uint32_t high = words.elements[w] >> 16;
      keys |= bf16_table_window::key_with_zeros(low) | bf16_table_window::key_with_zeros(high);
      result.elements[w] = entry(bf16_table_window::any_slot_with_zeros(low)) |
                           (entry(bf16_table_window::any_slot_with_zeros(high)) << 16);
    }
    if (any_lane_in_warp(keys >= bf16_table_window::per_sign)) {
      result = computed_outside<Width>(op, words, result);
    }
    return result;
  }

 private:
  /// Whether `p` holds in any thread of the warp that calls it together (on the host: in this
  /// one). The threads of a warp that reach the call are the active ones; others (the last
  /// step's, without a vector) do not vote.
  CUACT_HOST_DEVICE static bool any_lane_in_warp(bool p) {
#if defined(__CUDA_ARCH__)
    return __any_sync(__activemask(), p) != 0;
#else
    return p;
#endif
  }
#pragma nv_exec_check_disable
  /// `looked_up` (the entries of the lanes of `words`) with each lane outside the table replaced
  /// by op's result for it. Out of line: inlined, the op's math and its registers joined the
  /// lookup's path (ptxas spread it over both), though it runs only for a warp with such a lane.
  /// Static, with op by value: a member function's `this` would point into the kernel's
  /// parameters, which then are copied to the stack, and the arrays' pointers, read from there,
  /// are no longer known to be global (generic loads and stores instead of LDG and STG).
  template <int Width>
  CUACT_HOST_DEVICE static __noinline__ vector_of<cuda::std::uint32_t, Width / 2> computed_outside(
      const Op op, const vector_of<cuda::std::uint32_t, Width / 2> words,
      vector_of<cuda::std::uint32_t, Width / 2> looked_up) {
    CUACT_UNROLL
    for (int w = 0; w < Width / 2; ++w) {
      const cuda::std::uint32_t low = words.elements[w] & 0xffffu;
      const cuda::std::uint32_t high = words.elements[w] >> 16;
      if (bf16_table_window::key_with_zeros(low) >= bf16_table_window::per_sign) {
        looked_up.elements[w] = (looked_up.elements[w] & 0xffff0000u) | computed(op, low);
      }
      if (bf16_table_window::key_with_zeros(high) >= bf16_table_window::per_sign) {
        looked_up.elements[w] = (looked_up.elements[w] & 0xffffu) | (computed(op, high) << 16);
      }
    }
    return looked_up;
  }
#pragma nv_exec_check_disable
  /// op's bf16 bits for input bits `b`, computed (out of line, as computed_outside).
  CUACT_HOST_DEVICE static __noinline__ cuda::std::uint32_t computed(const Op op,
                                                                     cuda::std::uint32_t b) {
    const __nv_bfloat16_raw value =
        from_compute<__nv_bfloat16>(op(cuda::std::bit_cast<float>(b << 16)));
    return value.x;
  }
  CUACT_HOST_DEVICE cuda::std::uint32_t entry(unsigned s) const { return table_entry(entries, s); }
};

/// The quantize's op (fused.cuh: amax_op) on bf16 input through a table of the activation's float
/// results: y = fn(x) looked up for inputs in the table (computed for others), the running
/// maximum of |y| kept at *amax, y * scale returned (and converted to Out, fp8, by the caller).
/// The table keeps the float fn returns, not a rounded result: the amax and the scaled value need
/// it (32 KiB: bf16_table_window::bytes_of<float>); so the quantize writes the direct path's bytes
/// and amax. Called per held vector (takes_held_vector): every lane is looked up (its slot is an
/// entry whatever its bits), then a lane outside the window takes its zero's entry or fn's value.
/// One path for every vector: a branch-free path for vectors wholly inside, beside this one for
/// the others, cost each warp with a vector of either kind both paths, with or without a warp vote
/// between them, which data with some zeros make common.
template <class Fn, class Out>
struct bf16_table_quantize_op {
  static constexpr bool takes_held_vector = true;
  Fn fn;                 ///< the activation at Out's accuracy: y = fn(x)
  const float* entries;  ///< the table in global memory (read by the host simulation)
  float scale;
  float* amax;  ///< this thread's running maximum (kernels/quantize.cuh: quantize_thread)

  /// One element (the head and tail).
  CUACT_HOST_DEVICE float operator()(float x) const {
    const cuda::std::uint32_t b = cuda::std::bit_cast<cuda::std::uint32_t>(x) >> 16;
    return scaled(bf16_table_window::offset(b) < bf16_table_window::per_sign
                      ? entry(bf16_table_window::slot(b))
                      : outside(b));
  }

  /// A vector of Width bf16 lanes held as Width / 2 words (lane 2w low) -> Width Out values.
  template <int Width>
  CUACT_HOST_DEVICE vector_of<Out, Width> apply_held(
      const vector_of<cuda::std::uint32_t, Width / 2>& words) const {
    float values[Width];
    CUACT_UNROLL
    for (int w = 0; w < Width / 2; ++w) {
      const cuda::std::uint32_t word = words.elements[w];
      const cuda::std::uint32_t biased = bf16_table_window::biased_pair(word);
      const cuda::std::uint32_t misses = bf16_table_window::pair_misses(biased);
      float low = entry(bf16_table_window::low_slot(word, biased));
      if ((misses & bf16_table_window::low_miss_bits) != 0) low = outside(word & 0xffffu);
      float high = entry(bf16_table_window::high_slot(word, biased));
      if ((misses & bf16_table_window::high_miss_bits) != 0) high = outside(word >> 16);
      values[2 * w] = scaled(low);
      values[2 * w + 1] = scaled(high);
    }
    return convert_vector<Out>(values);
  }

 private:
  /// y * scale, with |y| into the running maximum (amax_op's step: scale_folding_amax).
  CUACT_HOST_DEVICE float scaled(float y) const { return scale_folding_amax(y, scale, amax); }
#pragma nv_exec_check_disable
  /// fn(x) for bf16 bits `b` outside the window: a zero's entry, or fn itself. Not through
  /// bf16_table_op's lookup (key_with_zeros, then slot_with_zeros): its window test, again in this
  /// branch, slowed the quantize of inputs with zeros.
  CUACT_HOST_DEVICE float outside(cuda::std::uint32_t b) const {
    if (bf16_table_window::is_zero(b)) return entry(bf16_table_window::zero_slot_of(b));
    return fn(cuda::std::bit_cast<float>(b << 16));
  }
  CUACT_HOST_DEVICE float entry(unsigned s) const { return table_entry(entries, s); }
};

/// What fill_bf16_table_kernel writes: op's table at `entries`, of bf16 results
/// (bf16_table_entry: Entry cuda::std::uint16_t) or of float ones (bf16_float_table_entry: float).
template <class Op, class Entry = cuda::std::uint16_t>
struct bf16_table_fill {
  Op op;
  Entry* entries;
};

CUACT_KERNELS_BEGIN
/// Writes the table: one thread per entry. The lookup kernel after it may start at once (its
/// first loads need nothing from here) and waits for this grid before it reads the table.
template <class Op, class Entry>
CUACT_KERNEL void fill_bf16_table_kernel(const bf16_table_fill<Op, Entry> fill) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
  const unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= bf16_table_window::entries_of<Entry>) return;
  if constexpr (cuda::std::is_same_v<Entry, float>) {
    fill.entries[s] = bf16_float_table_entry(fill.op, s);
  } else {
    fill.entries[s] = bf16_table_entry(fill.op, s);
  }
}
CUACT_KERNELS_END

/// How tabulated_kernel (and tabulated_quantize_kernel) reads and writes: plain 16-byte loads and
/// stores, as every other kernel; the table's copy into shared memory in ready(), which
/// elementwise_thread calls after each thread's first loads, so they are in flight while the table
/// comes (copied before the first loads, the kernel lost the latency of the copy), read with
/// `ld.global.nc`. Not streaming accesses (`ld/st.global.cs`, evict first): with them its speed
/// depended on the kernels before it (likely: lines those left in L2 at normal priority outlived
/// every evict-first line of later lookups).
template <class Entry>
struct tabulating_access : global_memory_access {
  const Entry* entries;  ///< the table in global memory

#if defined(__CUDACC__)
  /// The block's threads copy the table into shared memory and wait for each other; called once
  /// per thread, at different points of the body, hence `barrier.sync` without `.aligned`. First
  /// they wait for the fill kernel (launched before this one, which may have started early:
  /// run_tabulated; without that launch the wait returns at once).
  __device__ __forceinline__ void ready() const {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    constexpr unsigned words = bf16_table_window::bytes_of<Entry> / 16;
    const uint4* from = reinterpret_cast<const uint4*>(entries);
    uint4* to = shared_table_words();
#if __CUDA_ARCH__ >= 800
    // cp.async: all of a thread's copies in flight at once, held in no register. Loaded and
    // stored a word at a time, the 32 KiB float table takes a round trip to L2 per word, which
    // the tabulated quantize pays for in every block (the bf16 forward's 16 KiB table matters
    // less).
    for (unsigned w = threadIdx.x; w < words; w += blockDim.x) {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                       static_cast<unsigned>(__cvta_generic_to_shared(to + w))),
                   "l"(__cvta_generic_to_global(from + w))
                   : "memory");
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
#else
    for (unsigned w = threadIdx.x; w < words; w += blockDim.x) to[w] = __ldg(from + w);
#endif
    asm volatile("barrier.sync 0;" ::: "memory");
  }
#endif
};

/// Registers of tabulated_kernel: at most 65536 / (tabulated_kernel_max_threads x
/// tabulated_kernel_min_blocks) = 32 a thread, so that its blocks (tabulated_threads_per_block or
/// fewer threads) fill every thread slot of an SM. Why: left to itself, ptxas keeps every lane's
/// lookup of both vectors in flight and takes up to 51 registers, which leaves an SM a quarter of
/// its threads idle and fewer loads in flight.
inline constexpr unsigned tabulated_kernel_max_threads = 512;
inline constexpr unsigned tabulated_kernel_min_blocks = 4;

CUACT_KERNELS_BEGIN
/// elementwise_kernel for a bf16_table_op, with bf16_table_window::bytes of dynamic shared
/// memory for the table (tabulating_access).
template <class Params>
CUACT_KERNEL void __launch_bounds__(tabulated_kernel_max_threads, tabulated_kernel_min_blocks)
    tabulated_kernel(const Params params) {
  const cuda::std::size_t thread =
      static_cast<cuda::std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const cuda::std::size_t num_threads = static_cast<cuda::std::size_t>(gridDim.x) * blockDim.x;
  elementwise_thread(params, thread, num_threads,
                     tabulating_access<cuda::std::uint16_t>{{}, params.op.entries});
}
CUACT_KERNELS_END

/// params with its op looked up through the table at `entries`: the same arrays and split.
template <class Op, int VecWidth, class Outputs, class Inputs>
elementwise_params<bf16_table_op<Op>, VecWidth, Outputs, Inputs> tabulated_params(
    const elementwise_params<Op, VecWidth, Outputs, Inputs>& params,
    const cuda::std::uint16_t* entries) {
  return with_op(params, bf16_table_op<Op>{params.op, entries});
}

}  // namespace detail
}  // namespace cuact
