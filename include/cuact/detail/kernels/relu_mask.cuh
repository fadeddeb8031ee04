/// \file
/// The sign-mask forward, the elementwise kernel's one sibling: out[i] = act(in[i]) and one bit per
/// element, set where in[i] > 0. It shares validation and the launch model with the elementwise
/// kernel; it is a kernel of its own because its mask output has one byte per 8 elements, which
/// the elementwise engine's one-value-per-element outputs cannot express.
///
/// Layout: bit (i % 32) of 32-bit word i / 32 is element i. Each thread writes one mask byte
/// (8 consecutive elements): every thread's output is its own (no atomics, no warp collectives,
/// so the body runs on the host too) while each warp still reads 32 consecutive 8-element groups;
/// a word per thread made each warp access 32 lines 128 bytes apart and measured 0.475 x memcpy.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../config.cuh"
#include "../numeric.cuh"
#include "elementwise.cuh"

namespace cuact {
namespace detail {

/// Number of 32-bit mask words for n elements.
CUACT_HOST_DEVICE constexpr std::size_t mask_words(std::size_t n) { return n / 32 + (n % 32 != 0); }

/// Mask bytes: whole words, so the forward writes the bits past n too (as 0).
CUACT_HOST_DEVICE constexpr std::size_t mask_bytes(std::size_t n) {
  return mask_words(n) * sizeof(std::uint32_t);
}

template <class T, class Activation>
struct sign_mask_params {
  static constexpr int group = 8;  ///< elements per mask byte
  /// Elements per vector access: a group, or 16 bytes of it.
  static constexpr int width = sizeof(T) * group <= 16 ? group : static_cast<int>(16 / sizeof(T));
  static constexpr std::size_t vector_load_bytes = sizeof(T) * group;
  const T* in;
  T* out;
  std::uint32_t* mask;
  std::size_t n;
  bool vectorized;  ///< in and out are 16-byte aligned, so every 8-element group is too
  Activation act;
};

template <class T, class Activation>
sign_mask_params<T, Activation> make_sign_mask_params(Activation act, const T* in, T* out,
                                                      std::uint32_t* mask, std::size_t n) {
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
                       reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  return {in, out, mask, n, aligned, act};
}

/// The per-thread body: thread t of num_threads handles mask bytes t, t + num_threads, ...; byte
/// g holds the bits of elements [8g, 8g + 8) (little-endian words: byte g of the array is bits
/// 8(g % 4).. of word g / 4).
#pragma nv_exec_check_disable
template <class T, class Activation, class Access = global_memory_access>
CUACT_HOST_DEVICE void sign_mask_forward_thread(const sign_mask_params<T, Activation>& params,
                                                std::size_t thread, std::size_t num_threads,
                                                const Access& access = {}) {
  using params_t = sign_mask_params<T, Activation>;
  constexpr int group = params_t::group;
  constexpr int width = params_t::width;
  constexpr int chunks = group / width;
  using vector_t = vector_of<T, width>;
  using scalar_t = vector_of<T, 1>;
  auto* const bytes_out = reinterpret_cast<std::uint8_t*>(params.mask);
  const std::size_t bytes = mask_bytes(params.n);
  const std::size_t full_groups = params.n / group;
  for (std::size_t g = thread; g < bytes; g += num_threads) {
    const std::size_t first = g * group;
    unsigned bits = 0;
    if (params.vectorized && g < full_groups) {
      vector_t values[chunks];  // all loads in flight before the first use
      CUACT_UNROLL
      for (int c = 0; c < chunks; ++c) {
        values[c] = access.load(reinterpret_cast<const vector_t*>(params.in + first) + c);
      }
      CUACT_UNROLL
      for (int c = 0; c < chunks; ++c) {
        vector_t result;
        for (int j = 0; j < width; ++j) {
          const auto x = to_compute(values[c].elements[j]);
          bits |= static_cast<unsigned>(x > 0) << (c * width + j);
          result.elements[j] = from_compute<T>(params.act(x));
        }
        access.store(reinterpret_cast<vector_t*>(params.out + first) + c, result);
      }
    } else {
      const std::size_t count =
          first >= params.n ? 0 : (params.n - first < group ? params.n - first : group);
      for (std::size_t j = 0; j < count; ++j) {
        const auto x = to_compute(
            access.load(reinterpret_cast<const scalar_t*>(params.in + first + j)).elements[0]);
        bits |= static_cast<unsigned>(x > 0) << j;
        access.store(reinterpret_cast<scalar_t*>(params.out + first + j),
                     scalar_t{{from_compute<T>(params.act(x))}});
      }
    }
    access.store(bytes_out + g, static_cast<std::uint8_t>(bits));
  }
}

template <class T, class Activation>
CUACT_KERNEL void sign_mask_forward_kernel(const sign_mask_params<T, Activation> params) {
  sign_mask_forward_thread(params, static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                           static_cast<std::size_t>(gridDim.x) * blockDim.x);
}

/// The backward's operation on the elementwise engine: dy where the element's bit is set, else 0.
/// Called per vector (takes_vector_index): one mask load per vector instead of one per element,
/// issued with the vector's dy load.
struct masked_gradient {
  static constexpr bool takes_element_index = true;
  static constexpr bool takes_vector_index = true;
  const std::uint32_t* mask;
  /// One element (the scalar head and tail).
  template <class C>
  CUACT_HOST_DEVICE C operator()(std::size_t i, C dy) const {
    return (mask[i / 32] >> (i % 32)) & 1u ? dy : C(0);
  }
  /// The mask bits of the Width elements from `first` (bit j: element first + j), loaded in the
  /// engine's load phase. `first` may be any index: the bits are in one word, or straddle two
  /// when the vector crosses a 32-element edge (then the second word holds an element below n, so
  /// it is inside the mask's mask_words(n) words).
  template <int Width>
  CUACT_HOST_DEVICE unsigned load_vector(std::size_t first) const {
    static_assert(Width <= 32, "cuact: a vector's mask bits span at most two words");
    const std::size_t word = first / 32;
    const unsigned shift = static_cast<unsigned>(first % 32);
    unsigned bits = mask[word] >> shift;
    if (shift + Width > 32) bits |= mask[word + 1] << (32 - shift);  // shift > 0 here
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

}  // namespace detail
}  // namespace cuact
