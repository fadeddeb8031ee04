// The GPU tests' device helpers: checked CUDA calls, device and pinned memory, a guarded arena that
// batches many cases into one allocation, and the kernels that fill inputs from the hash
// (support.hpp), evaluate the reference of an op one element per thread (ops.hpp's evaluate),
// write poison, and gather a sample of a huge array. Include from .cu files.
#pragma once

#include <cuda_runtime.h>

#include <cuda/std/tuple>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "ops.hpp"
#include "support.hpp"

namespace cuact_test {

#define CUACT_CUDA_REQUIRE(call)                              \
  do {                                                        \
    const cudaError_t cuact_status_ = (call);                 \
    INFO(#call << " -> " << cudaGetErrorName(cuact_status_)); \
    REQUIRE(cuact_status_ == cudaSuccess);                    \
  } while (0)

/// cudaMalloc'd bytes, freed on scope exit.
class device_memory {
 public:
  device_memory() = default;
  explicit device_memory(std::size_t bytes) { allocate(bytes); }
  device_memory(const device_memory&) = delete;
  device_memory& operator=(const device_memory&) = delete;
  ~device_memory() { release(); }
  void allocate(std::size_t bytes) {
    release();
    if (bytes != 0) CUACT_CUDA_REQUIRE(cudaMalloc(&ptr_, bytes));
    bytes_ = bytes;
  }
  void release() {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  template <class T = unsigned char>
  T* get() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Page-locked host bytes, freed on scope exit.
class pinned_memory {
 public:
  pinned_memory() = default;
  pinned_memory(const pinned_memory&) = delete;
  pinned_memory& operator=(const pinned_memory&) = delete;
  ~pinned_memory() { release(); }
  void allocate(std::size_t bytes) {
    release();
    if (bytes != 0) CUACT_CUDA_REQUIRE(cudaMallocHost(&ptr_, bytes));
    bytes_ = bytes;
  }
  void release() {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  unsigned char* get() const { return static_cast<unsigned char*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// One device allocation carved into slots. Each slot's data starts `misalign` bytes past a
/// 256-byte boundary with at least 256 guard bytes on both sides; the whole arena is filled with a
/// sentinel byte before a batch, so any write outside a slot's [data, data + bytes) shows.
class guarded_arena {
 public:
  static constexpr std::size_t guard = 256;
  static constexpr unsigned char sentinel = 0xA5;
  struct slot {
    std::size_t begin, data, bytes, end;  // byte offsets into the arena
  };

  void clear() {
    slots_.clear();
    used_ = 0;
  }
  /// Adds a slot of `bytes` whose data sits `misalign` (< 256) bytes past a 256-byte boundary.
  std::size_t add(std::size_t bytes, std::size_t misalign) {
    slot s;
    s.begin = used_;
    s.data = s.begin + guard + misalign;
    s.bytes = bytes;
    s.end = (s.data + bytes + guard + 255) / 256 * 256;
    used_ = s.end;
    slots_.push_back(s);
    return slots_.size() - 1;
  }
  std::size_t used() const { return used_; }

  /// Allocates (growing if needed) and fills [0, used) with the sentinel.
  void prepare() {
    if (device_.bytes() < used_) {
      const std::size_t bytes = std::max(used_, 2 * device_.bytes());
      device_.allocate(bytes);
      host_.allocate(bytes);
    }
    if (used_ != 0) CUACT_CUDA_REQUIRE(cudaMemset(device_.get(), sentinel, used_));
  }
  template <class T>
  T* device(std::size_t id) const {
    return reinterpret_cast<T*>(device_.get() + slots_[id].data);
  }
  /// Copies the whole used arena back (one cudaMemcpy per batch).
  void download() {
    if (used_ != 0) {
      CUACT_CUDA_REQUIRE(cudaMemcpy(host_.get(), device_.get(), used_, cudaMemcpyDeviceToHost));
    }
  }
  template <class T>
  const T* host(std::size_t id) const {
    return reinterpret_cast<const T*>(host_.get() + slots_[id].data);
  }
  /// The bytes around the slot's data still hold the sentinel.
  bool guards_intact(std::size_t id) const {
    const slot& s = slots_[id];
    const unsigned char* h = host_.get();
    const auto intact = [h](std::size_t b, std::size_t e) {
      return std::all_of(h + b, h + e, [](unsigned char c) { return c == sentinel; });
    };
    return intact(s.begin, s.data) && intact(s.data + s.bytes, s.end);
  }

 private:
  std::vector<slot> slots_;
  std::size_t used_ = 0;
  device_memory device_;
  pinned_memory host_;
};

/// Where a case puts its arrays: input and output offsets in elements from an allocation's start,
/// or the output in place over the input.
struct array_placement {
  const char* what;
  std::size_t in_offset, out_offset;
  bool in_place;
};
/// Out of place co-aligned, with a scalar head, not co-aligned (scalars only), and in place.
inline constexpr array_placement standard_placements[] = {
    {"out of place, co-aligned", 0, 0, false},
    {"out of place, scalar head", 3, 3, false},
    {"out of place, not co-aligned", 1, 2, false},
    {"in place", 5, 5, true}};

// ---- kernels --------------------------------------------------------------------------------

inline __device__ std::size_t global_thread() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
inline __device__ std::size_t grid_threads() {
  return static_cast<std::size_t>(gridDim.x) * blockDim.x;
}

template <class T>
__global__ void fill_hash_kernel(T* out, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = global_thread(); i < n; i += grid_threads()) {
    reinterpret_cast<bits_t<T>*>(out)[i] = hash_bits<T>(seed, i);
  }
}
/// out[i] = hash_value<T>(seed, i) for i in [0, n).
template <class T>
void fill_hash(T* out, std::size_t n, std::uint64_t seed, cudaStream_t stream = nullptr) {
  if (n == 0) return;
  const std::size_t blocks = std::min<std::size_t>((n + 255) / 256, 8192);
  fill_hash_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(out, n, seed);
}

template <class T>
__global__ void poison_kernel(const T* expected, T* out, std::size_t n) {
  for (std::size_t i = global_thread(); i < n; i += grid_threads())
    out[i] = poison_for(expected[i]);
}
/// out[i] = poison_for(expected[i]): a value no correct run leaves there.
template <class T>
void poison(const T* expected, T* out, std::size_t n, cudaStream_t stream = nullptr) {
  if (n == 0) return;
  const std::size_t blocks = std::min<std::size_t>((n + 255) / 256, 8192);
  poison_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(expected, out, n);
}

template <class Op, class... Out, class... In, std::size_t... O, std::size_t... I>
__device__ void reference_element(const Op& op, std::size_t i, const cuda::std::tuple<Out*...>& out,
                                  const cuda::std::tuple<const In*...>& in,
                                  std::index_sequence<O...>, std::index_sequence<I...>) {
  const cuda::std::tuple<Out...> r = evaluate<Out...>(op, i, cuda::std::get<I>(in)[i]...);
  ((cuda::std::get<O>(out)[i] = cuda::std::get<O>(r)), ...);
}
/// The reference: one thread per element, scalar loads, no vectors: out[i] = op(in[i]...).
/// (Tuples as template parameters: a variadic kernel takes one trailing pack only.)
template <class Op, class OutTuple, class InTuple>
__global__ void reference_kernel(Op op, std::size_t n, OutTuple out, InTuple in) {
  const std::size_t i = global_thread();
  if (i < n) {
    reference_element(op, i, out, in,
                      std::make_index_sequence<cuda::std::tuple_size<OutTuple>::value>{},
                      std::make_index_sequence<cuda::std::tuple_size<InTuple>::value>{});
  }
}
template <class Op, class... Out, class... In>
void compute_reference(const Op& op, std::size_t n, cuda::std::tuple<Out*...> out,
                       cuda::std::tuple<const In*...> in, cudaStream_t stream = nullptr) {
  if (n == 0) return;
  reference_kernel<<<static_cast<unsigned>((n + 127) / 128), 128, 0, stream>>>(op, n, out, in);
}

/// For a huge array filled by fill_hash<In>(seed): at each sampled index, what the array holds
/// now (`got`) and what op gives for the hashed input there (`expected`), and the input itself.
template <class Op, class Out, class In>
__global__ void sample_kernel(Op op, std::uint64_t seed, const std::size_t* index,
                              std::size_t count, const Out* output, const In* input, Out* got,
                              Out* expected, In* input_now) {
  for (std::size_t k = global_thread(); k < count; k += grid_threads()) {
    const std::size_t i = index[k];
    got[k] = output[i];
    input_now[k] = input[i];
    expected[k] = cuda::std::get<0>(evaluate<Out>(op, i, hash_value<In>(seed, i)));
  }
}

}  // namespace cuact_test
