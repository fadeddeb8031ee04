/// \file
/// The ReLU bit mask: layout, checks, the forward kernel and the backward's operation.
///
/// Layout: bit (i % 32) of 32-bit word i / 32 is element i; 1 means x > 0. The forward gives each
/// thread one mask byte (8 consecutive elements). The backward runs on the elementwise engine: its
/// op reads the bit of the element index it is given.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../activations.cuh"
#include "../elementwise.cuh"
#include "config.cuh"
#include "launch.cuh"
#include "numeric.cuh"
#include "validate.cuh"

namespace cuact {

/// Number of 32-bit mask words for n elements.
CUACT_HOST_DEVICE constexpr std::size_t relu_mask_words(std::size_t n) { return n / 32 + (n % 32 != 0); }

namespace detail {

/// Mask bytes: whole words, so the forward writes the bits past n too (as 0).
CUACT_HOST_DEVICE constexpr std::size_t relu_mask_bytes(std::size_t n) {
  return relu_mask_words(n) * sizeof(std::uint32_t);
}

/// The mask as validation sees it: 4-byte aligned, overlapping no other array.
inline array_arg mask_array(const std::uint32_t* mask, std::size_t n) {
  return {mask, relu_mask_bytes(n), alignof(std::uint32_t), true, false};
}

/// relu_backward_mask's operation: dy where the element's bit is set, else 0.
struct relu_mask_gradient {
  static constexpr bool takes_element_index = true;
  const std::uint32_t* mask;
  template <class C>
  CUACT_HOST_DEVICE C operator()(std::size_t i, C dy) const {
    return (mask[i / 32] >> (i % 32)) & 1u ? dy : C(0);
  }
};

template <class T>
struct relu_mask_params {
  const T* in;
  T* out;
  std::uint32_t* mask;
  std::size_t n;
  bool vectorized;  ///< in and out are 16-byte aligned, so every 8-element group is too
};

template <class T>
relu_mask_params<T> make_relu_mask_params(const T* in, T* out, std::uint32_t* mask, std::size_t n) {
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
                       reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  return {in, out, mask, n, aligned};
}

/// The forward's per-thread body: thread t of num_threads handles mask bytes t, t + num_threads,
/// ...; byte g holds the bits of elements [8g, 8g + 8) (little-endian words: byte g of the array
/// is bits 8(g % 4).. of word g / 4). A byte per thread keeps every thread's output its own (no
/// atomics, no warp collectives, so the body runs on the host too) while each warp still reads
/// 32 consecutive 8-element groups; a word per thread made each warp access 32 lines 128 bytes
/// apart and measured 0.475 x memcpy.
#pragma nv_exec_check_disable
template <class T, class Access = global_memory_access>
CUACT_HOST_DEVICE void relu_mask_forward_thread(const relu_mask_params<T>& params, std::size_t thread,
                                                std::size_t num_threads, const Access& access = {}) {
  constexpr int group = 8;
  constexpr int width = sizeof(T) * group <= 16 ? group : static_cast<int>(16 / sizeof(T));
  constexpr int chunks = group / width;
  using vector_t = vector_of<T, width>;
  using scalar_t = vector_of<T, 1>;
  auto* const mask_bytes = reinterpret_cast<std::uint8_t*>(params.mask);
  const std::size_t bytes = relu_mask_bytes(params.n);
  const std::size_t full_groups = params.n / group;
  for (std::size_t g = thread; g < bytes; g += num_threads) {
    const std::size_t first = g * group;
    unsigned bits = 0;
    if (params.vectorized && g < full_groups) {
      vector_t values[chunks];  // all loads in flight before the first use
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int c = 0; c < chunks; ++c) {
        values[c] = access.load(reinterpret_cast<const vector_t*>(params.in + first) + c);
      }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int c = 0; c < chunks; ++c) {
        vector_t result;
        for (int j = 0; j < width; ++j) {
          const auto x = to_compute(values[c].elements[j]);
          bits |= static_cast<unsigned>(x > 0) << (c * width + j);
          result.elements[j] = from_compute<T>(relu{}(x));
        }
        access.store(reinterpret_cast<vector_t*>(params.out + first) + c, result);
      }
    } else {
      const std::size_t count = first >= params.n ? 0 : (params.n - first < group ? params.n - first : group);
      for (std::size_t j = 0; j < count; ++j) {
        const auto x = to_compute(access.load(reinterpret_cast<const scalar_t*>(params.in + first + j)).elements[0]);
        bits |= static_cast<unsigned>(x > 0) << j;
        access.store(reinterpret_cast<scalar_t*>(params.out + first + j), scalar_t{{from_compute<T>(relu{}(x))}});
      }
    }
    access.store(mask_bytes + g, static_cast<std::uint8_t>(bits));
  }
}

template <class T>
CUACT_KERNEL void relu_mask_forward_kernel(const relu_mask_params<T> params) {
  relu_mask_forward_thread(params, static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                           static_cast<std::size_t>(gridDim.x) * blockDim.x);
}

template <class T>
cudaError_t launch_relu_mask_forward(const relu_mask_params<T>& params, cudaStream_t stream) {
  return launch_grid_stride<T, relu, 1>(relu_mask_forward_kernel<T>, params, relu_mask_bytes(params.n),
                                     stream);
}

}  // namespace detail
}  // namespace cuact
