/// \file
/// The sign-mask forward, the elementwise kernel's one sibling: out[i] = act(in[i]) and one bit per
/// element, set where in[i] > 0. It shares validation and the launch model with the elementwise
/// kernel; it is a kernel of its own because its mask output has one byte per 8 elements, which
/// the elementwise engine's one-value-per-element outputs cannot express.
///
/// In the per-byte body each thread writes one mask byte: every thread's output is its own (no
/// atomics, no warp collectives, so the body runs on the host too). Which 8 elements a byte holds
/// is mask_layout's choice, made so that a warp's 32 threads read and write whole 16-byte vectors
/// side by side: a byte of 8 consecutive fp32 elements would put each thread's two 16-byte
/// accesses 32 bytes apart across the warp (half of every sector per instruction), and a word per
/// thread 128 bytes apart (one line per thread).
///
/// Where a byte holds more than one vector (fp32, fp64), the full tiles of aligned arrays run
/// staged instead: a block of staged_mask_threads threads takes that many consecutive vectors, one
/// per thread (relu's forward's access pattern), puts each vector's sign bits in shared memory, and
/// after a barrier its first threads assemble and store the block's mask bytes, a warp's 32 bytes
/// at a time (whole sectors). Both halves are per-thread bodies the host runs too, the barrier
/// between them being the order the CPU test runs them in. Staged, fp32 and fp64 run as fast as a
/// copy with the same traffic; warps that each store 16 mask bytes (half a sector) are slower.
///
/// 16-bit types are not staged: their byte is one vector, so a warp already stores a whole
/// sector. Their speed is their traffic's (17 bytes written for 16 read, as fast as a copy with
/// that traffic); other launch shapes or gathered word stores do not change it.
#pragma once

#include <cuda/std/cstddef>
#include <cuda/std/cstdint>

#include "../config.cuh"
#include "../numeric.cuh"
#include "../tuning_table.cuh"
#include "elementwise.cuh"

namespace cuact {
namespace detail {

/// Number of 32-bit mask words for n elements.
CUACT_HOST_DEVICE constexpr cuda::std::size_t mask_words(cuda::std::size_t n) {
  return n / 32 + (n % 32 != 0);
}

/// Mask bytes: whole words, so the forward writes the bits past n too (as 0).
CUACT_HOST_DEVICE constexpr cuda::std::size_t mask_bytes(cuda::std::size_t n) {
  return mask_words(n) * sizeof(cuda::std::uint32_t);
}

/// Where each element's bit sits in the mask of n elements of T: bit b of the mask is bit b % 32
/// of word b / 32 (little-endian: mask byte g is bits 8 (g % 4).. of word g / 4).
///
/// The elements are cut into tiles of 256 (32 mask bytes, one per thread of a warp). In a full
/// tile, byte t (0..31) holds `chunks` runs of `lanes` consecutive elements (a 16-byte vector
/// each), run c at element c x 32 x lanes + t x lanes of the tile: bit c x lanes + j is element
/// tile + c x 32 x lanes + t x lanes + j. So thread t's c-th vector sits beside thread t + 1's, and
/// each warp access covers 32 consecutive vectors. 16-bit types have lanes = 8, chunks = 1: their
/// byte t holds elements 8t..8t + 7, and bit b is element b. Past the last full tile (the n % 256
/// elements left), bit b is element b for every type.
template <class T>
struct mask_layout {
  static constexpr int group = 8;  ///< elements per mask byte
  /// Elements per 16-byte vector, at most a byte's worth: fp64 2, fp32 4, 16-bit 8.
  static constexpr int lanes = sizeof(T) * group <= 16 ? group : static_cast<int>(16 / sizeof(T));
  static constexpr int chunks = group / lanes;  ///< vectors per mask byte
  static constexpr cuda::std::size_t tile = 32 * group;
  static_assert(lanes >= 1 && group % lanes == 0, "cuact: a mask byte holds whole vectors");

  cuda::std::size_t tiled_end;  ///< elements in full tiles: n rounded down to a tile

  CUACT_HOST_DEVICE explicit constexpr mask_layout(cuda::std::size_t n)
      : tiled_end(n / tile * tile) {}

  /// The mask bit of element i.
  CUACT_HOST_DEVICE constexpr cuda::std::size_t bit_of(cuda::std::size_t i) const {
    if (chunks == 1 || i >= tiled_end) return i;
    const unsigned e = static_cast<unsigned>(i % tile);  // 32-bit arithmetic inside the tile
    return i - e + (e / lanes % 32 * group + e / (32 * lanes) * lanes + e % lanes);
  }
  /// The element of bit `bit` (0..7) of mask byte `byte`; bit_of's inverse.
  CUACT_HOST_DEVICE constexpr cuda::std::size_t element_of(cuda::std::size_t byte, int bit) const {
    const cuda::std::size_t linear = byte * group + static_cast<cuda::std::size_t>(bit);
    if (chunks == 1 || linear >= tiled_end) return linear;
    return byte / 32 * tile + static_cast<cuda::std::size_t>(bit / lanes) * (32 * lanes) +
           byte % 32 * lanes + static_cast<cuda::std::size_t>(bit % lanes);
  }
};

template <class T, class Activation>
struct sign_mask_params {
  static constexpr int group = mask_layout<T>::group;
  static constexpr int width = mask_layout<T>::lanes;  ///< elements per vector access
  /// Bytes one work item of the launch loads: a vector where the forward is staged (a thread per
  /// vector: sign_mask_forward_kernel), else a mask byte's group of elements.
  static constexpr cuda::std::size_t vector_load_bytes =
      sizeof(T) * (mask_layout<T>::chunks > 1 ? mask_layout<T>::lanes : group);
  const T* in;
  T* out;
  cuda::std::uint32_t* mask;
  cuda::std::size_t n;
  bool vectorized;  ///< in and out are 16-byte aligned, so every vector of a byte is too
  Activation act;
};

template <class T, class Activation>
sign_mask_params<T, Activation> make_sign_mask_params(Activation act, const T* in, T* out,
                                                      cuda::std::uint32_t* mask,
                                                      cuda::std::size_t n) {
  const bool aligned = reinterpret_cast<cuda::std::uintptr_t>(in) % 16 == 0 &&
                       reinterpret_cast<cuda::std::uintptr_t>(out) % 16 == 0;
  return {in, out, mask, n, aligned, act};
}

/// The per-thread body: thread t of num_threads handles mask bytes t, t + num_threads, ...,
/// each byte's elements as mask_layout places them (the kernel passes t past the bytes its staged
/// steps stored: sign_mask_forward_kernel).
#pragma nv_exec_check_disable
template <class T, class Activation, class Access = global_memory_access>
CUACT_HOST_DEVICE void sign_mask_forward_thread(const sign_mask_params<T, Activation>& params,
                                                cuda::std::size_t thread,
                                                cuda::std::size_t num_threads,
                                                const Access& access = {}) {
  using layout_t = mask_layout<T>;
  constexpr int group = layout_t::group;
  constexpr int width = layout_t::lanes;
  constexpr int chunks = layout_t::chunks;
  using vector_t = vector_of<T, width>;
  using scalar_t = vector_of<T, 1>;
  const layout_t layout(params.n);
  auto* const bytes_out = reinterpret_cast<cuda::std::uint8_t*>(params.mask);
  const cuda::std::size_t bytes = mask_bytes(params.n);
  const cuda::std::size_t full_groups = params.n / group;  // bytes whose 8 elements all exist
  for (cuda::std::size_t g = thread; g < bytes; g += num_threads) {
    unsigned bits = 0;
    if (params.vectorized && g < full_groups) {
      // a vector at a time: where a byte holds several (fp32, fp64) this body is the staged
      // kernel's tail, and its registers are the kernel's: fp64's four vectors all in flight
      // would cost the staged forward resident threads
      CUACT_UNROLL
      for (int c = 0; c < chunks; ++c) {
        const vector_t values = access.load(
            reinterpret_cast<const vector_t*>(params.in + layout.element_of(g, c * width)));
        vector_t result;
        for (int j = 0; j < width; ++j) {
          const auto x = to_compute(values.elements[j]);
          bits |= static_cast<unsigned>(x > 0) << (c * width + j);
          result.elements[j] = from_compute<T>(params.act(x));
        }
        access.store(reinterpret_cast<vector_t*>(params.out + layout.element_of(g, c * width)),
                     result);
      }
    } else {
      for (int b = 0; b < group; ++b) {
        const cuda::std::size_t i = layout.element_of(g, b);
        if (i >= params.n) continue;  // past n (the last byte only): the bit stays 0
        const auto x =
            to_compute(access.load(reinterpret_cast<const scalar_t*>(params.in + i)).elements[0]);
        bits |= static_cast<unsigned>(x > 0) << b;
        access.store(reinterpret_cast<scalar_t*>(params.out + i),
                     scalar_t{{from_compute<T>(params.act(x))}});
      }
    }
    access.store(bytes_out + g, static_cast<cuda::std::uint8_t>(bits));
  }
}

/// Whether T's forward runs staged: a mask byte holds several vectors (fp32, fp64).
template <class T>
inline constexpr bool mask_is_staged = mask_layout<T>::chunks > 1;

/// Work items of a launch over n elements, one per thread in one pass: a vector where T's forward
/// runs staged, else a mask byte.
template <class T>
CUACT_HOST_DEVICE constexpr cuda::std::size_t sign_mask_items(cuda::std::size_t n) {
  constexpr cuda::std::size_t lanes = mask_layout<T>::lanes;
  return mask_is_staged<T> ? n / lanes + (n % lanes != 0) : mask_bytes(n);
}

/// Mask bytes one staged block step stores: fp32 64, fp64 32.
template <class T>
inline constexpr unsigned staged_mask_bytes_per_step =
    staged_mask_threads / mask_layout<T>::chunks;  // a byte per `chunks` vectors

/// The block steps the staged forward takes: the whole steps inside the full tiles where `in`
/// and `out` are 16-byte aligned, else 0 (every byte then takes sign_mask_forward_thread). The
/// bytes from steps x staged_mask_bytes_per_step on are sign_mask_forward_thread's.
template <class T, class Activation>
CUACT_HOST_DEVICE cuda::std::size_t staged_mask_steps(
    const sign_mask_params<T, Activation>& params) {
  using layout_t = mask_layout<T>;
  constexpr cuda::std::size_t step_elements =
      cuda::std::size_t(staged_mask_threads) * layout_t::lanes;
  return params.vectorized ? params.n / layout_t::tile * layout_t::tile / step_elements : 0;
}

/// The staged forward's first half for thread `t` (0 .. staged_mask_threads - 1) of block step
/// `step`: its vector's activations stored, its sign bits (bit j: lane j) in nibbles[t].
#pragma nv_exec_check_disable
template <class T, class Activation, class Access = global_memory_access>
CUACT_HOST_DEVICE void staged_mask_vector(const sign_mask_params<T, Activation>& params,
                                          cuda::std::size_t step, unsigned t,
                                          cuda::std::uint8_t* nibbles, const Access& access = {}) {
  constexpr int width = mask_layout<T>::lanes;
  using vector_t = vector_of<T, width>;
  const cuda::std::size_t first = (step * staged_mask_threads + t) * width;
  const vector_t values = access.load(reinterpret_cast<const vector_t*>(params.in + first));
  vector_t result;
  unsigned bits = 0;
  CUACT_UNROLL
  for (int j = 0; j < width; ++j) {
    const auto x = to_compute(values.elements[j]);
    bits |= static_cast<unsigned>(x > 0) << j;
    result.elements[j] = from_compute<T>(params.act(x));
  }
  access.store(reinterpret_cast<vector_t*>(params.out + first), result);
  nibbles[t] = static_cast<cuda::std::uint8_t>(bits);
}

/// The staged forward's second half for thread `t` of block step `step`, after every thread's
/// first: threads below staged_mask_bytes_per_step store the step's mask byte t, its chunk c
/// the bits of the tile's vector c x 32 + t % 32 (mask_layout).
#pragma nv_exec_check_disable
template <class T, class Activation, class Access = global_memory_access>
CUACT_HOST_DEVICE void staged_mask_byte(const sign_mask_params<T, Activation>& params,
                                        cuda::std::size_t step, unsigned t,
                                        const cuda::std::uint8_t* nibbles,
                                        const Access& access = {}) {
  using layout_t = mask_layout<T>;
  constexpr unsigned bytes_per_step = staged_mask_bytes_per_step<T>;
  constexpr unsigned vectors_per_tile = layout_t::tile / layout_t::lanes;
  if (t >= bytes_per_step) return;
  const unsigned tile = t / 32, byte = t % 32;
  unsigned bits = 0;
  CUACT_UNROLL
  for (int c = 0; c < layout_t::chunks; ++c) {
    bits |= unsigned(nibbles[tile * vectors_per_tile + c * 32 + byte]) << (c * layout_t::lanes);
  }
  access.store(reinterpret_cast<cuda::std::uint8_t*>(params.mask) + step * bytes_per_step + t,
               static_cast<cuda::std::uint8_t>(bits));
}

CUACT_KERNELS_BEGIN
/// The sign-mask forward: staged block steps (fp32, fp64, in blocks of staged_mask_threads; other
/// blocks take none), then sign_mask_forward_thread from the first byte past them, any grid.
template <class T, class Activation>
CUACT_KERNEL void sign_mask_forward_kernel(const sign_mask_params<T, Activation> params) {
  cuda::std::size_t first_byte = 0;
  if constexpr (mask_is_staged<T>) {
    __shared__ cuda::std::uint8_t nibbles[staged_mask_threads];
    const cuda::std::size_t steps =
        blockDim.x == staged_mask_threads ? staged_mask_steps(params) : 0;
    for (cuda::std::size_t step = blockIdx.x; step < steps; step += gridDim.x) {
      staged_mask_vector(params, step, threadIdx.x, nibbles);
      __syncthreads();
      staged_mask_byte(params, step, threadIdx.x, nibbles);
      __syncthreads();  // the next step rewrites nibbles
    }
    first_byte = steps * staged_mask_bytes_per_step<T>;
  }
  sign_mask_forward_thread(
      params, first_byte + static_cast<cuda::std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x,
      static_cast<cuda::std::size_t>(gridDim.x) * blockDim.x);
}
CUACT_KERNELS_END

/// The backward's operation on the elementwise engine: dy where the element's bit is set, else 0,
/// for the mask of n elements of T (mask_layout<T>). Called per vector (takes_vector_index): one
/// mask load per vector instead of one per element, issued with the vector's dy load.
template <class T>
struct masked_gradient {
  static constexpr bool takes_element_index = true;
  static constexpr bool takes_vector_index = true;
  const cuda::std::uint32_t* mask;
  mask_layout<T> layout;

  CUACT_HOST_DEVICE unsigned bit(cuda::std::size_t i) const {
    const cuda::std::size_t b = layout.bit_of(i);
    return (mask[b / 32] >> (b % 32)) & 1u;
  }
  /// One element (the scalar head and tail).
  template <class C>
  CUACT_HOST_DEVICE C operator()(cuda::std::size_t i, C dy) const {
    return bit(i) ? dy : C(0);
  }
  /// The mask bits of the Width elements from `first` (bit j: element first + j), loaded in the
  /// engine's load phase. `first` may be any index. Past the full tiles the bits are consecutive:
  /// in one word, or straddling two when the vector crosses a 32-element edge (then the second word
  /// holds an element below n, so it is inside the mask's mask_words(n) words). In a tile, a
  /// vector of an aligned array lies in one run of `lanes` bits of one byte (Width <= lanes, both
  /// powers of two); a misaligned array's vector straddles two runs, read as two pieces.
  template <int Width>
  CUACT_HOST_DEVICE unsigned load_vector(cuda::std::size_t first) const {
    using layout_t = mask_layout<T>;
    static_assert(Width <= layout_t::lanes, "cuact: a vector is at most 16 bytes");
    if (layout_t::chunks == 1 || first >= layout.tiled_end) {
      const cuda::std::size_t word = first / 32;
      const unsigned shift = static_cast<unsigned>(first % 32);
      unsigned bits = mask[word] >> shift;
      if (shift + Width > 32) bits |= mask[word + 1] << (32 - shift);  // shift > 0 here
      return bits;
    }
    const cuda::std::size_t b = layout.bit_of(first);
    unsigned bits = mask[b / 32] >> (b % 32);
    const unsigned in_run = layout_t::lanes - static_cast<unsigned>(first % layout_t::lanes);
    if (in_run < static_cast<unsigned>(Width)) {
      const cuda::std::size_t next = layout.bit_of(first + in_run);
      bits = (bits & ((1u << in_run) - 1)) | (mask[next / 32] >> (next % 32)) << in_run;
    }
    return bits;
  }
  /// dy where the vector's bit is set, else 0.
  template <class C, int Width>
  CUACT_HOST_DEVICE vector_of<C, Width> apply_vector(unsigned bits,
                                                     const vector_of<C, Width>& dy) const {
    vector_of<C, Width> dx;
    CUACT_UNROLL
    for (int j = 0; j < Width; ++j) dx.elements[j] = (bits >> j) & 1u ? dy.elements[j] : C(0);
    return dx;
  }
};

/// The backward's operation for the mask of n elements of T.
template <class T>
masked_gradient<T> make_masked_gradient(const cuda::std::uint32_t* mask, cuda::std::size_t n) {
  return {mask, mask_layout<T>(n)};
}

}  // namespace detail
}  // namespace cuact
