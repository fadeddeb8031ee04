/// \file
/// The one kernel template behind every cuact operation: N input arrays and M output arrays,
/// each with its own element type, an operation on compute-type values, and a grid-stride
/// per-thread body that also runs on the host (the CPU tests simulate grids with it).
#pragma once

#include <cuda/std/cstddef>
#include <cuda/std/cstdint>

#include "../std.cuh"
#include "../tuple.cuh"
#include "../config.cuh"
#include "../numeric.cuh"
#include "../tuning_table.cuh"

namespace cuact {
namespace detail {

/// `Width` elements of T, aligned to their size so one access moves them.
template <class T, int Width>
struct alignas(sizeof(T) * Width) vector_of {
  T elements[Width];
};

/// Loads and stores of the per-thread body. The GPU uses this one; the CPU tests pass one that
/// records every access, so they check bounds and alignment of the very code the GPU runs.
struct global_memory_access {
  template <class Vector>
  CUACT_HOST_DEVICE Vector load(const Vector* from) const {
    return *from;
  }
  template <class Vector>
  CUACT_HOST_DEVICE void store(Vector* to, const Vector& value) const {
    *to = value;
  }
};

/// global_memory_access whose 16-byte stores are one `st.global.v4`, for the kernels that walk
/// rows (kernels/rows.cuh's column walk, kernels/column_sum.cuh): there the copy of a vector_of
/// struct was split into its elements and not merged again (an fp32 vector went out as four
/// 4-byte stores, which slowed the bias backward). The store is CUTLASS's (arch/memory.h): volatile asm without a memory clobber, so
/// loads of other addresses may still move across it. The elementwise kernel keeps plain
/// stores, which the compiler does merge (its SASS is unchanged).
struct vector_store_access : global_memory_access {
  template <class Vector>
  CUACT_HOST_DEVICE void store(Vector* to, const Vector& value) const {
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(Vector) == 16 && alignof(Vector) >= 16) {
      const uint4 w = cuda::std::bit_cast<uint4>(value);
      asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(to), "r"(w.x), "r"(w.y),
                   "r"(w.z), "r"(w.w));
      return;
    }
#endif
    *to = value;
  }
};

/// The output arrays of an operation, in order (what cuact::outputs(...) builds).
template <class... T>
struct output_arrays {
  detail::tuple<T*...> pointers;
};
/// The input arrays of an operation, in order (what cuact::inputs(...) builds).
template <class... T>
struct input_arrays {
  detail::tuple<const T*...> pointers;
};

/// An op that declares `static constexpr bool takes_element_index = true` is called as
/// op(i, values...) with the element's index i in [0, n) first (the ReLU mask backward finds its
/// bit that way, bias + activation its column).
template <class Op, class = void>
inline constexpr bool takes_element_index_v = false;
template <class Op>
inline constexpr bool
    takes_element_index_v<Op, cuda::std::void_t<decltype(Op::takes_element_index)>> =
        Op::takes_element_index;

/// An op that also declares `static constexpr bool takes_vector_index = true` is called once per
/// vector, in two steps: `op.template load_vector<Width>(first)` in the load phase, beside the
/// input loads, returns a state S (what the op looks up by index, e.g. the vector's mask bits);
/// `op.apply_vector(state, vector_of<C, Width>...) -> vector_of<R, Width>` in the compute phase
/// gets it with every lane of each input (R: what op(i, values...) returns). The scalar head and
/// tail still call op(i, values...). Why: a lookup by index that serves a whole vector then loads
/// once per vector (the ReLU mask backward's bits for a vector sit in one word; read once per
/// element, a 16-bit vector cost 8 mask loads and the kernel was issue-bound), and that load is in
/// flight with the input loads instead of waiting behind them (issued in the compute phase, it
/// costs one memory latency per vector). A vector may
/// start at any index (a misaligned array has a scalar head), not only at a multiple of Width.
template <class Op, class = void>
inline constexpr bool takes_vector_index_v = false;
template <class Op>
inline constexpr bool
    takes_vector_index_v<Op, cuda::std::void_t<decltype(Op::takes_vector_index)>> =
        Op::takes_vector_index;

/// A takes_vector_index op may also say that its state repeats: `op.vector_state_repeat()`
/// returns R > 0 when the state of the vector at element first + m * R is the state at first for
/// every m (0: no such R), and the op splits load_vector(first) into `op.vector_key(first)` (what
/// the state is looked up by, e.g. a column) and `op.template load_vector_at<Width>(key)`. A
/// thread whose grid-stride step is exactly R elements then computes each vector's key on its
/// first step only and keeps it, loading the state from it on every step (elementwise_thread);
/// on any other grid it computes the key every step, so the body stays correct for every grid.
/// Why: the flat bias pass's key is the vector's column, a divmod per vector, the same on every
/// step where the launch makes a step whole rows, a visible cost in the compute-bound bias
/// forwards. The key, not the state: keeping the bias vector itself costs registers and resident
/// blocks.
template <class Op, class = void>
inline constexpr bool has_vector_state_repeat_v = false;
template <class Op>
inline constexpr bool has_vector_state_repeat_v<
    Op, cuda::std::void_t<decltype(cuda::std::declval<const Op&>().vector_state_repeat())>> = true;

/// The key of the vector at `first` for an op with vector_state_repeat, an empty one otherwise.
struct no_vector_key {};
template <class Op>
CUACT_HOST_DEVICE auto vector_key_of(const Op& op, cuda::std::size_t first) {
  if constexpr (has_vector_state_repeat_v<Op>) {
    return op.vector_key(first);
  } else {
    return no_vector_key{};
  }
}

/// An op that declares `static constexpr bool takes_held_vector = true` (one 16-bit input, one
/// output) is called once per vector with the input vector as loaded, its storage words
/// (held_vector_t): `op.template apply_held<Width>(words)` returns the output's held vector. The
/// scalar head and tail still call op(value). Why: an op on the bits themselves (kernels/
/// table.cuh's lookups) would otherwise have each lane widened to float, taken apart again, and
/// its result rounded back: ten more instructions per element.
template <class Op, class = void>
inline constexpr bool takes_held_vector_v = false;
template <class Op>
inline constexpr bool takes_held_vector_v<Op, cuda::std::void_t<decltype(Op::takes_held_vector)>> =
    Op::takes_held_vector;

/// An op that declares `static constexpr int max_vectors_per_thread` caps the vectors a thread
/// loads before it computes at that many, instead of max_load_bytes_per_thread's count
/// (one_vector_op); 0 where it declares none.
template <class Op, class = void>
inline constexpr int declared_max_vectors_v = 0;
template <class Op>
inline constexpr int
    declared_max_vectors_v<Op, cuda::std::void_t<decltype(Op::max_vectors_per_thread)>> =
        Op::max_vectors_per_thread;

/// Op compiled for one vector per thread: its kernel needs fewer registers than Op's own with
/// two vectors in flight, and run_elementwise launches it where that buys resident blocks per SM
/// (dispatch.cuh: with_launched_params). Why: a heavy forward with two vectors in flight may
/// need enough registers to lose resident blocks, and then runs faster with one; an op that
/// keeps its blocks either way runs faster with two. Everything else is Op's, inherited.
template <class Op>
struct one_vector_op : Op {
  static constexpr int max_vectors_per_thread = 1;
};

/// The load-phase state of a vector (an empty one for ops that do not take the vector index).
struct no_vector_state {};
#pragma nv_exec_check_disable
template <int Width, class Op>
CUACT_HOST_DEVICE auto load_vector_state(const Op& op, cuda::std::size_t first) {
  if constexpr (Width > 1 && takes_vector_index_v<Op>) {
    return op.template load_vector<Width>(first);
  } else {
    return no_vector_state{};
  }
}

/// The state of the vector whose key is `key` (vector_key_of), of load_vector_state's type: the
/// op's load_vector_at for an op with vector_state_repeat and vectors of several lanes;
/// no_vector_state for one lane (the op then takes the element index, as load_vector_state has
/// it); a default state for any other op (never called so: elementwise_thread).
template <int Width, class Op, class Key>
CUACT_HOST_DEVICE auto load_vector_state_at(const Op& op, const Key& key) {
  if constexpr (Width > 1 && has_vector_state_repeat_v<Op>) {
    return op.template load_vector_at<Width>(key);
  } else {
    return decltype(load_vector_state<Width>(op, 0)){};
  }
}

template <class Op, int VecWidth, class Outputs, class Inputs>
struct elementwise_params;

/// One launch's arguments: the arrays, the operation, and the split of [0, n) into a scalar head
/// (until every pointer is VecWidth-aligned), full vectors, and a scalar tail. When the pointers
/// are not co-aligned, head = vectors = 0 and tail = n.
///
/// Op is called with one compute-type value per input (float for 16-bit storage) and returns the
/// output value, or a cuda::std::tuple of them when there are several outputs.
template <class Op, int VecWidth, class... Out, class... In>
struct elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>> {
  static_assert(sizeof...(In) >= 1 && sizeof...(Out) >= 1,
                "cuact: an elementwise operation reads and writes at least one array each");
  static constexpr int vec_width = VecWidth;
  static constexpr int num_inputs = static_cast<int>(sizeof...(In));
  static constexpr int num_outputs = static_cast<int>(sizeof...(Out));
  /// Bytes one thread loads for one vector of every input.
  static constexpr cuda::std::size_t vector_load_bytes = ((sizeof(In) * VecWidth) + ...);
  /// Bytes one element moves: inputs read plus outputs written.
  static constexpr cuda::std::size_t bytes_per_element = (sizeof(In) + ...) + (sizeof(Out) + ...);
  /// Arrays one element is read from or written to (the launch model's per-array budget).
  static constexpr unsigned arrays_per_element = sizeof...(In) + sizeof...(Out);
  /// The most vectors a thread loads before it computes: Op's declared_max_vectors_v, else
  /// max_load_bytes_per_thread's count (tuning_table.cuh).
  static constexpr int max_vectors_per_thread = declared_max_vectors_v<Op> > 0
                                                    ? declared_max_vectors_v<Op>
                                                : vector_load_bytes >= max_load_bytes_per_thread
                                                    ? 1
                                                    : static_cast<int>(max_load_bytes_per_thread /
                                                                       vector_load_bytes);

  detail::tuple<Out*...> outputs;
  detail::tuple<const In*...> inputs;
  cuda::std::size_t head;     ///< scalar elements before the first vector
  cuda::std::size_t vectors;  ///< VecWidth-element vectors after the head
  cuda::std::size_t tail;     ///< scalar elements after the vectors
  /// Vectors a thread loads together per grid-stride step, 1..max_vectors_per_thread (the launch
  /// model's choice; any value is correct).
  unsigned vectors_per_thread;
  Op op;
  /// Launched as a programmatic dependent launch (elementwise_kernel): the kernel waits for the
  /// stream's previous kernel first. Set by the launch only (dispatch.cuh: launch_modelled).
  bool waits_for_previous = false;

  CUACT_HOST_DEVICE int effective_vectors_per_thread() const {
    const int k = static_cast<int>(vectors_per_thread);
    return k < 1 ? 1 : (k > max_vectors_per_thread ? max_vectors_per_thread : k);
  }
  /// Threads that one pass over the data needs: one per vectors_per_thread vectors, or one per
  /// scalar if there are more scalars.
  CUACT_HOST_DEVICE cuda::std::size_t work_items() const {
    const cuda::std::size_t k = static_cast<cuda::std::size_t>(effective_vectors_per_thread());
    const cuda::std::size_t vector_threads = (vectors + k - 1) / k;
    return vector_threads > head + tail ? vector_threads : head + tail;
  }
};

/// How a vector of `Width` T is held from its load to its conversion: 16-bit lanes as the 32-bit
/// words that hold them in pairs. Held as 16-bit values, a vector is split into 16-bit registers
/// (PRMT) at the load and merged back before any arithmetic on the words, and the bf16 widening
/// lane by lane costs three instructions per element instead of one, where 16-bit math is
/// instruction-bound.
template <class T, int Width>
inline constexpr bool held_as_words_v = Width % 2 == 0 && (cuda::std::is_same_v<T, __nv_bfloat16> ||
                                                           cuda::std::is_same_v<T, __half>);
template <class T, int Width>
using held_vector_t =
    cuda::std::conditional_t<held_as_words_v<T, Width>,
                             vector_of<cuda::std::uint32_t, (Width + 1) / 2>, vector_of<T, Width>>;

/// The lanes of a held vector of T in compute type: a bf16 pair widened by a shift and a mask
/// (one instruction each), an fp16 pair by two conversions that read the word's halves.
template <class T, int Width>
CUACT_HOST_DEVICE vector_of<compute_t<T>, Width> lanes_of(const held_vector_t<T, Width>& held) {
  vector_of<compute_t<T>, Width> result;
  if constexpr (held_as_words_v<T, Width>) {
    CUACT_UNROLL
    for (int w = 0; w < Width / 2; ++w) {
      const cuda::std::uint32_t word = held.elements[w];
      if constexpr (cuda::std::is_same_v<T, __nv_bfloat16>) {
        result.elements[2 * w] = cuda::std::bit_cast<float>(word << 16);  // lane 2w is low
        result.elements[2 * w + 1] = cuda::std::bit_cast<float>(word & 0xffff0000u);
      } else {
        const __half2 pair(
            cuda::std::bit_cast<__half2_raw>(word));  // __half2_raw: trivially copyable
        result.elements[2 * w] = __low2float(pair);
        result.elements[2 * w + 1] = __high2float(pair);
      }
    }
  } else {
    CUACT_UNROLL
    for (int j = 0; j < Width; ++j) result.elements[j] = to_compute(held.elements[j]);
  }
  return result;
}

/// op applied to lane j of the inputs' compute-type lanes (first + j is its index).
#pragma nv_exec_check_disable
template <class Op, class Lanes, cuda::std::size_t... I>
CUACT_HOST_DEVICE auto compute_value(const Op& op, cuda::std::size_t first, const Lanes& lanes,
                                     cuda::std::index_sequence<I...>, int j) {
  if constexpr (takes_element_index_v<Op>) {
    return op(first + j, detail::get<I>(lanes).elements[j]...);
  } else {
    return op(detail::get<I>(lanes).elements[j]...);
  }
}

/// Whether get<O>(value) finds an element: unqualified, so that a multi-output op may return a
/// detail::tuple or a cuda::std::tuple (found by argument-dependent lookup) without the kernel
/// including <cuda/std/tuple>.
template <class V, cuda::std::size_t O, class = void>
inline constexpr bool has_element_v = false;
template <class V, cuda::std::size_t O>
inline constexpr bool
    has_element_v<V, O, cuda::std::void_t<decltype(get<O>(cuda::std::declval<const V&>()))>> = true;

/// Output `O` of each element (the value itself for a single-output op). A single value against
/// several outputs stays itself: such a call is rejected before any launch (validate.cuh), but
/// its kernel still compiles.
template <class V, cuda::std::size_t O>
CUACT_HOST_DEVICE auto output_value(const V& value,
                                    cuda::std::integral_constant<cuda::std::size_t, O>) {
  if constexpr (has_element_v<V, O>) {
    return get<O>(value);
  } else {
    return value;
  }
}
template <class V>
CUACT_HOST_DEVICE const V& output_value(const V& value) {
  return value;
}

/// Converts Width compute-type values to a vector of Out. 16-bit and fp8 outputs convert in pairs
/// (`__floats2bfloat162_rn`: one F2FP instruction for two elements instead of one each plus a
/// pack; it matters where 16-bit math is instruction-bound).
template <class Out, class V, int Width, class... Which>
CUACT_HOST_DEVICE vector_of<Out, Width> convert_vector(const V (&values)[Width], Which... which) {
  constexpr bool paired =
      Width % 2 == 0 && cuda::std::is_same_v<compute_t<Out>, float> &&
      (cuda::std::is_same_v<Out, __nv_bfloat16> || cuda::std::is_same_v<Out, __half>);
  constexpr bool fp8_paired = Width % 2 == 0 && is_output_only_type_v<Out>;
  if constexpr (fp8_paired) {
    // `cvt.rn.satfinite.e4m3x2.f32`: two elements per instruction (from_compute's saturating
    // conversion, one per element, costs one each plus the byte merge), two pairs per 32-bit
    // word. Stored pair by pair into the vector's bytes, each pair was taken apart and put back
    // together a byte at a time, dozens of instructions more per 16 elements
    const auto pair = [&](int j) -> cuda::std::uint32_t {
      const float a = static_cast<float>(output_value(values[j], which...));
      const float b = static_cast<float>(output_value(values[j + 1], which...));
      return __nv_cvt_float2_to_fp8x2(
          make_float2(a, b), __NV_SATFINITE,
          cuda::std::is_same_v<Out, __nv_fp8_e4m3> ? __NV_E4M3 : __NV_E5M2);
    };
    if constexpr (Width % 4 == 0) {
      vector_of<cuda::std::uint32_t, Width / 4> words;
      CUACT_UNROLL
      for (int j = 0; j < Width; j += 4) words.elements[j / 4] = pair(j) | (pair(j + 2) << 16);
      return cuda::std::bit_cast<vector_of<Out, Width>>(words);
    } else {
      vector_of<cuda::std::uint16_t, Width / 2> pairs;
      CUACT_UNROLL
      for (int j = 0; j < Width; j += 2)
        pairs.elements[j / 2] = static_cast<cuda::std::uint16_t>(pair(j));
      return cuda::std::bit_cast<vector_of<Out, Width>>(pairs);
    }
  } else {
    vector_of<Out, Width> result;
    if constexpr (paired) {
      CUACT_UNROLL
      for (int j = 0; j < Width; j += 2) {
        const float a = static_cast<float>(output_value(values[j], which...));
        const float b = static_cast<float>(output_value(values[j + 1], which...));
        if constexpr (cuda::std::is_same_v<Out, __nv_bfloat16>) {
          const __nv_bfloat162 pair = __floats2bfloat162_rn(a, b);
          result.elements[j] = pair.x;
          result.elements[j + 1] = pair.y;
        } else {
          const __half2 pair = __floats2half2_rn(a, b);
          result.elements[j] = pair.x;
          result.elements[j + 1] = pair.y;
        }
      }
    } else {
      CUACT_UNROLL
      for (int j = 0; j < Width; ++j) {
        result.elements[j] = from_compute<Out>(output_value(values[j], which...));
      }
    }
    return result;
  }
}

/// Stores `value`, a vector of Width Out (or its held form), at `to`: 1-byte lanes (fp8) as the
/// 32-bit words that hold them in fours. Stored as a struct of bytes, the vector was taken apart
/// into bytes and merged again for the one 16-byte store (dozens of instructions per 16
/// elements).
#pragma nv_exec_check_disable
template <int Width, class Access, class Out, class V>
CUACT_HOST_DEVICE void store_vector(const Access& access, Out* to, const V& value) {
  if constexpr (sizeof(Out) == 1 && Width % 4 == 0) {
    using words_t = vector_of<cuda::std::uint32_t, Width / 4>;
    static_assert(sizeof(V) == sizeof(words_t), "cuact: a vector of Width bytes");
    access.store(reinterpret_cast<words_t*>(to), cuda::std::bit_cast<words_t>(value));
  } else {
    access.store(reinterpret_cast<V*>(to), value);
  }
}

/// `held` with its first word made to depend on the first word of each of its later 16-byte
/// loads (`|= word & zero`, one instruction; `zero` is 0 at run time, which the compiler cannot
/// see), so that the math on any lane waits for every load and ptxas issues them all before it.
/// A vector of 16 16-bit lanes read for a 1-byte output is two loads; left to itself ptxas issued
/// the second one after the math on the first eight lanes (so as to hold the kernel to 32
/// registers), and each vector waited for its data twice, which slowed the 16-bit -> fp8 casts
/// and quantizes. Computing the lanes of the two loads alternately does not keep the casts'
/// loads together; this does.
template <class Held>
CUACT_HOST_DEVICE Held with_loads_tied(const Held& held, cuda::std::uint32_t) {
  return held;  // not held as words: one load
}
template <int Words>
CUACT_HOST_DEVICE vector_of<cuda::std::uint32_t, Words> with_loads_tied(
    vector_of<cuda::std::uint32_t, Words> held, cuda::std::uint32_t zero) {
  constexpr int words_per_load = 16 / sizeof(cuda::std::uint32_t);
  CUACT_UNROLL
  for (int w = words_per_load; w < Words; w += words_per_load) {
    held.elements[0] |= held.elements[w] & zero;
  }
  return held;
}

/// Applies op to `Width` consecutive elements starting at `first`: loads and the op's vector
/// state (already issued by the caller), converts, computes, converts, stores.
#pragma nv_exec_check_disable
template <int Width, class Op, int VecWidth, class... Out, class... In, class Loaded, class State,
          class Access, cuda::std::size_t... I, cuda::std::size_t... O>
CUACT_HOST_DEVICE void compute_and_store(
    const elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>& params,
    cuda::std::size_t first, const Loaded& loaded, const State& state, const Access& access,
    cuda::std::index_sequence<I...>, cuda::std::index_sequence<O...>) {
  static_assert(!takes_vector_index_v<Op> || takes_element_index_v<Op>,
                "cuact: an op taking the vector index is called per element for the scalar head "
                "and tail too: declare takes_element_index as well");
  if constexpr (Width > 1 && takes_held_vector_v<Op>) {
    static_assert(sizeof...(In) == 1 && sizeof...(Out) == 1 && (held_as_words_v<In, Width> && ...),
                  "cuact: an op taking the held vector maps one 16-bit array to one array");
    (store_vector<Width>(access, detail::get<O>(params.outputs) + first,
                         params.op.template apply_held<Width>(detail::get<I>(loaded)...)),
     ...);
    return;  // (what follows compiles for it all the same: its op(value) serves the scalars)
  }
  // with_loads_tied's zero: the tail's high half. Where a vector of several loads is computed
  // (Width > 1), params has vectors, so its pointers are co-aligned and the tail is what the
  // vectors leave, below Width (make_params; rows.cuh's rows likewise)
  const auto zero =
      static_cast<cuda::std::uint32_t>(static_cast<cuda::std::uint64_t>(params.tail) >> 32);
  const detail::tuple<vector_of<compute_t<In>, Width>...> lanes{
      lanes_of<In, Width>(with_loads_tied(detail::get<I>(loaded), zero))...};
  using value_t =
      decltype(compute_value(params.op, first, lanes, cuda::std::index_sequence<I...>{}, 0));
  value_t values[Width];
  if constexpr (Width > 1 && takes_vector_index_v<Op>) {
    const auto results = params.op.apply_vector(state, detail::get<I>(lanes)...);
    CUACT_UNROLL
    for (int j = 0; j < Width; ++j) values[j] = results.elements[j];
  } else {
    CUACT_UNROLL
    for (int j = 0; j < Width; ++j) {
      values[j] = compute_value(params.op, first, lanes, cuda::std::index_sequence<I...>{}, j);
    }
  }
  detail::tuple<vector_of<Out, Width>...> results;
  if constexpr (sizeof...(Out) == 1) {
    ((detail::get<O>(results) = convert_vector<Out>(values)), ...);
  } else {
    ((detail::get<O>(results) =
          convert_vector<Out>(values, cuda::std::integral_constant<cuda::std::size_t, O>{})),
     ...);
  }
  (store_vector<Width>(access, detail::get<O>(params.outputs) + first, detail::get<O>(results)),
   ...);
}

#pragma nv_exec_check_disable
template <int Width, class Op, int VecWidth, class... Out, class... In, class Access,
          cuda::std::size_t... I>
CUACT_HOST_DEVICE detail::tuple<held_vector_t<In, Width>...> load_inputs(
    const elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>& params,
    cuda::std::size_t first, const Access& access, cuda::std::index_sequence<I...>) {
  return {access.load(
      reinterpret_cast<const held_vector_t<In, Width>*>(detail::get<I>(params.inputs) + first))...};
}

/// An access that declares `ready()` has it called exactly once by every thread, after the
/// thread's first load phase (or, for a thread without vectors, before its scalars): a kernel
/// whose op needs block-wide preparation (kernels/table.cuh: the table in shared memory) does it
/// there, while the first loads are in flight. Threads call it at different points of the body,
/// so a barrier in it must be one that allows that (`barrier.sync` without `.aligned`).
template <class Access, class = void>
inline constexpr bool has_ready_v = false;
template <class Access>
inline constexpr bool
    has_ready_v<Access, cuda::std::void_t<decltype(cuda::std::declval<const Access&>().ready())>> =
        true;

/// The scalar head and tail, in grid-stride order: thread `thread` of `num_threads` handles
/// scalars thread, thread + num_threads, ... of the head followed by the tail (elementwise_thread's
/// last step, and kernels/bulk_tile.cuh's).
#pragma nv_exec_check_disable
template <class Op, int VecWidth, class... Out, class... In, class Access>
CUACT_HOST_DEVICE void scalar_steps(
    const elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>& params,
    cuda::std::size_t thread, cuda::std::size_t num_threads, const Access& access) {
  const cuda::std::size_t scalars = params.head + params.tail;
  const cuda::std::size_t tail_shift =
      params.vectors * VecWidth;  // the tail starts after the vectors
  for (cuda::std::size_t s = thread; s < scalars; s += num_threads) {
    const cuda::std::size_t index = s < params.head ? s : s + tail_shift;
    compute_and_store<1>(
        params, index,
        load_inputs<1>(params, index, access, cuda::std::index_sequence_for<In...>{}),
        no_vector_state{}, access, cuda::std::index_sequence_for<In...>{},
        cuda::std::index_sequence_for<Out...>{});
  }
}

/// The per-thread body: thread `thread` of `num_threads` handles vectors thread,
/// thread + num_threads, ..., loading vectors_per_thread of them before computing any (so their
/// loads are in flight together), and then the head and tail scalars in the same grid-stride
/// order. Correct for every (thread, num_threads) decomposition, a single thread included; each
/// element is read and written once, by one thread, and nothing outside [0, n) is touched.
#pragma nv_exec_check_disable
template <class Op, int VecWidth, class... Out, class... In, class Access = global_memory_access>
CUACT_HOST_DEVICE void elementwise_thread(
    const elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>& params,
    cuda::std::size_t thread, cuda::std::size_t num_threads, const Access& access = {}) {
  using params_t = elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>;
  constexpr int max_k = params_t::max_vectors_per_thread;
  const auto inputs = cuda::std::index_sequence_for<In...>{};
  const auto outputs = cuda::std::index_sequence_for<Out...>{};
  const int k = params.effective_vectors_per_thread();
  const cuda::std::size_t step = num_threads * static_cast<cuda::std::size_t>(k);
  [[maybe_unused]] bool ready = false;  // access.ready() called (accesses that have it)
  // The vector steps; with KeepsKeys, the keys of states that repeat with this thread's step
  // (vector_state_repeat) computed before the first step and kept. One loop per case, each with
  // one body: a test for the first step inside the loop made the compiler peel it, and the copy
  // of the compute phase cost the large kernels instruction-cache misses.
  const auto vector_steps = [&](auto keeps_keys) {
    constexpr bool KeepsKeys = decltype(keeps_keys)::value;
    [[maybe_unused]] decltype(vector_key_of(params.op, 0)) keys[max_k] = {};
    if constexpr (KeepsKeys) {
      CUACT_UNROLL
      for (int u = 0; u < max_k; ++u) {  // a vector valid on a later step is valid on the first
        const cuda::std::size_t v = thread + u * num_threads;
        if (u < k && v < params.vectors)
          keys[u] = vector_key_of(params.op, params.head + v * VecWidth);
      }
    }
    for (cuda::std::size_t base = thread; base < params.vectors; base += step) {
      detail::tuple<held_vector_t<In, VecWidth>...> loaded[max_k];
      decltype(load_vector_state<VecWidth>(params.op, 0)) states[max_k] = {};  // {}: GCC warns
      CUACT_UNROLL
      for (int u = 0; u < max_k; ++u) {
        const cuda::std::size_t v = base + u * num_threads;
        if (u < k && v < params.vectors) {
          loaded[u] = load_inputs<VecWidth>(params, params.head + v * VecWidth, access, inputs);
          if constexpr (KeepsKeys) {
            states[u] = load_vector_state_at<VecWidth>(params.op, keys[u]);
          } else {
            states[u] = load_vector_state<VecWidth>(params.op, params.head + v * VecWidth);
          }
        }
      }
      if constexpr (has_ready_v<Access>) {
        if (!ready) access.ready();
        ready = true;
      }
      CUACT_UNROLL
      for (int u = 0; u < max_k; ++u) {
        const cuda::std::size_t v = base + u * num_threads;
        if (u < k && v < params.vectors) {
          compute_and_store<VecWidth>(params, params.head + v * VecWidth, loaded[u], states[u],
                                      access, inputs, outputs);
        }
      }
    }
  };
  if constexpr (has_vector_state_repeat_v<Op>) {
    if (step * VecWidth == params.op.vector_state_repeat()) {
      vector_steps(cuda::std::true_type{});
    } else {
      vector_steps(cuda::std::false_type{});
    }
  } else {
    vector_steps(cuda::std::false_type{});
  }
  if constexpr (has_ready_v<Access>) {
    if (!ready) access.ready();
  }
  scalar_steps(params, thread, num_threads, access);
}

/// The kernel: a grid-stride loop over elementwise_thread, correct for any grid and block size.
/// Never called: elementwise_kernel instantiates it so that nvcc checks the op's call as device
/// code. compute_value calls the op under nv_exec_check_disable (the CPU tests run it on the
/// host), where a host-only operator() compiles to nothing and the kernel would write nothing;
/// here it is the error "calling a __host__ function("F") from a __device__ function", naming F.
template <class Op, int VecWidth, class... Out, class... In>
__device__ void ops_must_be_callable_from_device_code(
    const elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>>& params) {
  if constexpr (takes_element_index_v<Op>) {
    (void)params.op(cuda::std::size_t{}, compute_t<In>{}...);
  } else {
    (void)params.op(compute_t<In>{}...);
  }
}

CUACT_KERNELS_BEGIN
/// Where params.waits_for_previous (a small grid on sm_90 and later: dispatch.cuh,
/// launch_modelled), the kernel was launched as a programmatic dependent launch and may start
/// while the stream's previous kernel still runs: it waits for that kernel's grid and memory
/// (`griddepcontrol.wait`) before it reads or writes anything, then lets the stream's next kernel
/// launch the same way (`griddepcontrol.launch_dependents`, after the wait, so that at most one
/// grid waits ahead of the one running). A small call's launch latency then overlaps the previous
/// kernel. Not for large grids: there every block paid for the wait.
template <class Params>
CUACT_KERNEL void elementwise_kernel(const Params params) {
  (void)static_cast<void (*)(const Params&)>(&ops_must_be_callable_from_device_code);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (params.waits_for_previous) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;");
  }
#endif
  const cuda::std::size_t thread =
      static_cast<cuda::std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const cuda::std::size_t num_threads = static_cast<cuda::std::size_t>(gridDim.x) * blockDim.x;
  elementwise_thread(params, thread, num_threads);
}
CUACT_KERNELS_END

/// params with its op replaced by `op`: the same arrays, split and vectors per thread.
template <class NewOp, class Op, int VecWidth, class Outputs, class Inputs>
CUACT_HOST_DEVICE elementwise_params<NewOp, VecWidth, Outputs, Inputs> with_op(
    const elementwise_params<Op, VecWidth, Outputs, Inputs>& params, const NewOp& op) {
  return {params.outputs,
          params.inputs,
          params.head,
          params.vectors,
          params.tail,
          params.vectors_per_thread,
          op};
}

// Host-only: launch arguments are built where the kernel is launched (NVRTC compiles device code).
#ifndef __CUDACC_RTC__
/// Element offset of `pointer` from the previous `Width * sizeof(T)` boundary.
template <int Width, class T>
cuda::std::size_t offset_in_vector(const T* pointer) {
  return reinterpret_cast<cuda::std::uintptr_t>(pointer) % (sizeof(T) * Width) / sizeof(T);
}

/// Builds the launch arguments: vectors only where every pointer has the same element offset
/// from its vector boundary (then a scalar head reaches the boundary), else scalars only.
/// No validation here; cuact's entries validate before they call it.
template <int VecWidth, class Op, class... Out, class... In>
elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>> make_params(
    Op op, const output_arrays<Out...>& outputs, cuda::std::size_t n,
    const input_arrays<In...>& inputs, unsigned vectors_per_thread = 1) {
  static_assert(VecWidth >= 1 && (VecWidth & (VecWidth - 1)) == 0,
                "cuact: the vector width is a power of two");
  elementwise_params<Op, VecWidth, type_list<Out...>, type_list<In...>> params{
      outputs.pointers, inputs.pointers, 0, 0, n, vectors_per_thread, op};
  const cuda::std::size_t offset = offset_in_vector<VecWidth>(detail::get<0>(outputs.pointers));
  const bool co_aligned = detail::apply(
      [&](auto*... p) {
        return (
            (reinterpret_cast<cuda::std::uintptr_t>(p) %
                     alignof(cuda::std::remove_cv_t<cuda::std::remove_pointer_t<decltype(p)>>) ==
                 0 &&
             offset_in_vector<VecWidth>(p) == offset) &&
            ...);
      },
      detail::tuple_cat(outputs.pointers, inputs.pointers));
  if (co_aligned) {
    const cuda::std::size_t to_boundary = (VecWidth - offset) % VecWidth;
    params.head = to_boundary < n ? to_boundary : n;
    params.vectors = (n - params.head) / VecWidth;
    params.tail = n - params.head - params.vectors * VecWidth;
  }
  return params;
}
#endif  // __CUDACC_RTC__

}  // namespace detail
}  // namespace cuact
